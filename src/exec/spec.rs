//! Command-line descriptions of a launch for `ptx2sass run`: launch shapes (`X,Y,Z`),
//! kernel arguments (turned into [`crate::exec::ptx::args::Arg`]s) and initial contents of
//! module variables.
//!
//! Argument syntax (one `--arg` per kernel parameter, in order):
//! * `i:N` an integer (decimal or `0x` hex, may be negative down to `-2^63`; up to
//!   `2^64 - 1` as raw bits), `f32:X`, `f64:X` a float;
//! * `rand:TYPE:N` `N` random elements of `TYPE` (`u8`, `u16`, `u32`, `u64`, `f32` in
//!   [-8, 8), `f64` in [-8, 8)), from `--seed`;
//! * `zeros:N` `N` zero bytes;
//! * `file:PATH` the file's bytes;
//! * `bytes:HEX` the bytes written as hex digits, two per byte, in memory order
//!   (`bytes:0100803f` is the little-endian `.u32` 0x3f800001).
//!
//! `rand:`, `zeros:` and `file:` give a pointer to a fresh global buffer holding the bytes,
//! except for a byte-array parameter (`.param .align N .b8 s[K]`, a structure passed by
//! value), which receives them by value, as `bytes:` always does.
//!
//! Data of buffers and module-variable contents (`--init NAME=SPEC`, SPEC one of `file:`,
//! `bytes:`, `zeros:`, `rand:`) count against one byte [`Budget`]; a file is read only up
//! to it (so `file:/dev/zero` stops with an error instead of filling memory).
// Input is hostile (`run` arguments, disasm/asm input): no panicking shortcuts here
// (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::Rng;
use super::ptx::args::Arg;
use std::io::Read;

/// Why a command-line description was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// The text is not of the expected form (a usage error).
    Usage(String),
    /// The text is well-formed but its data cannot be had: an unreadable file, or more
    /// bytes than the [`Budget`] allows.
    Input(String),
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::Usage(m) | SpecError::Input(m) => f.write_str(m),
        }
    }
}

fn usage<T>(m: String) -> Result<T, SpecError> {
    Err(SpecError::Usage(m))
}

/// The bytes still allowed for buffers and variable contents (`ptx2sass run
/// --max-memory`).
#[derive(Clone, Debug)]
pub struct Budget {
    left: u64,
    limit: u64,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: u64) -> Budget {
        Budget { left: limit, limit }
    }

    /// Takes `n` bytes for `what`, or says that they do not fit.
    pub fn take(&mut self, what: &str, n: u64) -> Result<(), SpecError> {
        if n > self.left {
            return Err(SpecError::Input(format!(
                "{what} needs {n} bytes, more than the {} left of the memory limit of {} (raise it with --max-memory)",
                self.left, self.limit
            )));
        }
        self.left = self.left.saturating_sub(n);
        Ok(())
    }
}

/// Parses `X`, `X,Y` or `X,Y,Z` (missing dimensions are 1); each at least 1.
pub fn dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}`: expected X, X,Y or X,Y,Z"));
    }
    let mut d = [1u32; 3];
    for (slot, p) in d.iter_mut().zip(&parts) {
        *slot = p.trim().parse().ok().filter(|v| *v >= 1).ok_or_else(|| format!("`{p}` is not a positive integer"))?;
    }
    Ok(d)
}

/// An integer: decimal or `0x` hex, with an optional `-`; negative values down to
/// `i64::MIN`, non-negative ones up to `u64::MAX` (kept as their bits).
fn int(s: &str) -> Option<i64> {
    let (neg, t) = s.strip_prefix('-').map_or((false, s), |t| (true, t));
    let mag = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok()?,
        None => t.parse::<u64>().ok()?,
    };
    if neg { (mag <= 1 << 63).then(|| (mag as i64).wrapping_neg()) } else { Some(mag as i64) }
}

/// Hex digits, two per byte, in memory order.
fn hex(s: &str) -> Result<Vec<u8>, SpecError> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return usage(format!("`{s}`: expected hex digits, two per byte"));
    }
    Ok(s.as_bytes()
        .chunks(2)
        .map(|pair| std::str::from_utf8(pair).ok().and_then(|d| u8::from_str_radix(d, 16).ok()).unwrap_or(0))
        .collect())
}

/// The bytes of the file `path`, read only up to what `budget` allows.
pub fn read_file(path: &str, budget: &mut Budget) -> Result<Vec<u8>, SpecError> {
    let cannot = |e: std::io::Error| SpecError::Input(format!("cannot read `{path}`: {e}"));
    let f = std::fs::File::open(path).map_err(cannot)?;
    let mut out = vec![];
    f.take(budget.left.saturating_add(1)).read_to_end(&mut out).map_err(cannot)?;
    budget.take(&format!("file `{path}`"), out.len() as u64)?;
    Ok(out)
}

/// The bytes of a data description: `file:PATH`, `bytes:HEX`, `zeros:N`, `rand:TYPE:N`.
/// `Ok(None)` when `s` is not one of these kinds.
fn data(s: &str, rng: &mut Rng, budget: &mut Budget) -> Result<Option<Vec<u8>>, SpecError> {
    let Some((kind, rest)) = s.split_once(':') else { return Ok(None) };
    Ok(Some(match kind {
        "file" => read_file(rest, budget)?,
        "bytes" => {
            budget.take(&format!("`{s}`"), rest.len() as u64 / 2)?;
            hex(rest)?
        }
        "zeros" => {
            let n: u64 = rest.parse().map_err(|_| SpecError::Usage(format!("`{rest}` is not a byte count")))?;
            budget.take(&format!("`{s}`"), n)?;
            vec![0; n as usize]
        }
        "rand" => {
            let (ty, n) =
                rest.split_once(':').ok_or_else(|| SpecError::Usage(format!("`{s}`: expected rand:TYPE:COUNT")))?;
            let n: u64 = n.parse().map_err(|_| SpecError::Usage(format!("`{n}` is not an element count")))?;
            let size = match ty {
                "u8" => 1,
                "u16" => 2,
                "u32" | "f32" => 4,
                "u64" | "f64" => 8,
                _ => return usage(format!("`{ty}`: expected u8, u16, u32, u64, f32 or f64")),
            };
            budget.take(&format!("`{s}`"), n.saturating_mul(size))?;
            let mut out = Vec::with_capacity(n.saturating_mul(size) as usize);
            for _ in 0..n {
                let r = rng.next_u64();
                match ty {
                    "u8" => out.push(r as u8),
                    "u16" => out.extend((r as u16).to_le_bytes()),
                    "u32" => out.extend((r as u32).to_le_bytes()),
                    "u64" => out.extend(r.to_le_bytes()),
                    "f32" => out.extend(((r % 65536) as f32 / 4096.0 - 8.0).to_le_bytes()),
                    _ => out.extend(((r % (1 << 40)) as f64 / (1u64 << 36) as f64 - 8.0).to_le_bytes()),
                }
            }
            out
        }
        _ => return Ok(None),
    }))
}

/// Parses one `--arg` (see the module docs); `rng` is the random state for `rand:`, and
/// buffer bytes are taken from `budget`. Errors name the offending text and what was
/// expected.
pub fn arg(s: &str, rng: &mut Rng, budget: &mut Budget) -> Result<Arg, SpecError> {
    let (kind, rest) = s.split_once(':').ok_or_else(|| {
        SpecError::Usage(format!("`{s}`: expected KIND:VALUE (i, f32, f64, rand, zeros, file, bytes)"))
    })?;
    match kind {
        "i" => int(rest).map(Arg::Int).ok_or_else(|| {
            SpecError::Usage(format!("`{rest}` is not an integer in -2^63 ..= 2^64-1 (decimal or 0x hex)"))
        }),
        "f32" => rest.parse().map(Arg::F32).map_err(|_| SpecError::Usage(format!("`{rest}` is not a number"))),
        "f64" => rest.parse().map(Arg::F64).map_err(|_| SpecError::Usage(format!("`{rest}` is not a number"))),
        "bytes" => Ok(Arg::Bytes(data(s, rng, budget)?.unwrap_or_default())),
        _ => match data(s, rng, budget)? {
            Some(b) => Ok(Arg::Buf(b)),
            None => usage(format!("`{kind}`: expected i, f32, f64, rand, zeros, file or bytes")),
        },
    }
}

/// Parses one `--init NAME=SPEC` (SPEC: `file:`, `bytes:`, `zeros:` or `rand:`, see the
/// module docs): the initial contents of module variable `NAME`.
pub fn init(s: &str, rng: &mut Rng, budget: &mut Budget) -> Result<(String, Vec<u8>), SpecError> {
    let Some((name, spec)) = s.split_once('=').filter(|(n, _)| !n.is_empty()) else {
        return usage(format!("`{s}`: expected NAME=file:PATH (or NAME=bytes:HEX)"));
    };
    match data(spec, rng, budget)? {
        Some(b) => Ok((name.to_string(), b)),
        None => usage(format!("`{spec}`: expected file:PATH, bytes:HEX, zeros:N or rand:TYPE:N")),
    }
}

/// Parses one `--texture` (or, `surface`, `--surface`) `NAME=DATA,fmt=F,dims=W[,H[,D]]
/// [,filter=point|linear][,addr=clamp|wrap|border|mirror][,norm]`: the image bound to
/// kernel parameter `NAME` (module `exec::image`), with the handle `handle`. DATA is
/// `file:PATH`, `bytes:HEX`, `zeros:N` or `rand:TYPE:N`; F is `f32x4`, `f32`, `u32`, `s32`
/// or `u8x4`. The texel count is checked against the budget before the data is read.
pub fn image(
    s: &str,
    surface: bool,
    handle: u32,
    rng: &mut Rng,
    budget: &mut Budget,
) -> Result<(super::image::Image, Vec<u8>), SpecError> {
    use super::image::{AddrMode, Filter, Format, Image};
    let syntax = "NAME=DATA,fmt=f32x4|f32|u32|s32|u8x4,dims=W[,H[,D]][,filter=point|linear][,addr=clamp|wrap|border|mirror][,norm][,samples=N][,cube]";
    let Some((name, rest)) = s.split_once('=').filter(|(n, _)| !n.is_empty()) else {
        return usage(format!("`{s}`: expected {syntax}"));
    };
    let mut parts = rest.split(',');
    let data_spec = parts.next().unwrap_or_default();
    let (mut format, mut dims, mut filter, mut addr, mut normalized) =
        (None, vec![], Filter::Point, AddrMode::Clamp, false);
    let mut in_dims = false;
    let mut samples = 1u32;
    let mut cube = false;
    for p in parts {
        if in_dims && !p.contains('=') && p != "norm" && p != "cube" {
            dims.push(p);
            continue;
        }
        in_dims = false;
        match p.split_once('=') {
            Some(("fmt", f)) => {
                format = Some(match f {
                    "f32x4" => Format::F32x4,
                    "f32" => Format::F32,
                    "u32" => Format::U32,
                    "s32" => Format::S32,
                    "u8x4" => Format::U8x4,
                    _ => return usage(format!("`{f}`: expected fmt=f32x4, f32, u32, s32 or u8x4")),
                })
            }
            Some(("dims", w)) => {
                dims = vec![w];
                in_dims = true;
            }
            Some(("filter", f)) => {
                filter = match f {
                    "point" => Filter::Point,
                    "linear" => Filter::Linear,
                    _ => return usage(format!("`{f}`: expected filter=point or linear")),
                }
            }
            Some(("addr", a)) => {
                addr = match a {
                    "clamp" => AddrMode::Clamp,
                    "wrap" => AddrMode::Wrap,
                    "border" => AddrMode::Border,
                    "mirror" => AddrMode::Mirror,
                    _ => return usage(format!("`{a}`: expected addr=clamp, wrap, border or mirror")),
                }
            }
            // A multisample texture (`tex.2dms`): N samples per texel of a 2D image, stored
            // as N planes of W x H texels (`exec::image`).
            Some(("samples", n)) => {
                samples = n
                    .parse()
                    .ok()
                    .filter(|v| (1..=64).contains(v))
                    .ok_or_else(|| SpecError::Usage(format!("`{n}` in `{s}`: samples= is an integer in 1..=64")))?
            }
            None if p == "norm" => normalized = true,
            // A cube map (`tex.cube`/`tex.acube`): dims=W,W,6N, N cubes of six W x W faces
            // (`exec::image`).
            None if p == "cube" => cube = true,
            _ => return usage(format!("`{p}` in `{s}`: expected {syntax}")),
        }
    }
    let Some(format) = format else { return usage(format!("`{s}`: fmt= is missing ({syntax})")) };
    if dims.is_empty() || dims.len() > 3 {
        return usage(format!("`{s}`: dims= needs W, W,H or W,H,D ({syntax})"));
    }
    let mut d = [1u32; 3];
    for (slot, p) in d.iter_mut().zip(&dims) {
        *slot = p
            .parse()
            .ok()
            .filter(|v| *v >= 1 && *v <= 1 << 16)
            .ok_or_else(|| SpecError::Usage(format!("`{p}` in `{s}`: a dimension is an integer in 1..=65536")))?;
    }
    if filter == Filter::Linear && format.integer() {
        return usage(format!("`{s}`: the integer format cannot be filtered linearly (filter=point)"));
    }
    if surface && (filter == Filter::Linear || normalized || addr != AddrMode::Clamp) {
        return usage(format!("`{s}`: a surface has no filter, addressing mode or normalized coordinates"));
    }
    if cube && (surface || normalized || d[0] != d[1] || dims.len() != 3 || d[2] % 6 != 0) {
        return usage(format!(
            "`{s}`: a cube map is a texture of dims=W,W,6N (N cubes of six W x W faces; no norm: the face coordinates are normalized by the face selection)"
        ));
    }
    if samples > 1 && (dims.len() != 2 || surface) {
        return usage(format!("`{s}`: samples= needs a 2D texture (dims=W,H)"));
    }
    let bytes = d
        .iter()
        .fold(u64::from(format.bytes()), |a, &x| a.saturating_mul(u64::from(x)))
        .saturating_mul(u64::from(samples));
    if bytes > budget.left {
        budget.take(&format!("`{name}`"), bytes)?;
    }
    let data = data(data_spec, rng, budget)?.ok_or_else(|| {
        SpecError::Usage(format!("`{data_spec}`: expected file:PATH, bytes:HEX, zeros:N or rand:TYPE:N"))
    })?;
    let img = Image {
        param: name.to_string(),
        handle,
        surface,
        format,
        dims: d,
        rank: dims.len() as u8,
        filter,
        addr,
        normalized,
        base: 0,
        samples,
        sampler: false,
    };
    Ok((img, data))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_arguments() {
        assert_eq!(dims("4"), Ok([4, 1, 1]));
        assert_eq!(dims("4,2,3"), Ok([4, 2, 3]));
        assert!(dims("0").is_err() && dims("1,2,3,4").is_err() && dims("a").is_err());
        let mut r = Rng::new(1);
        let b = &mut Budget::new(1 << 20);
        assert_eq!(arg("i:-3", &mut r, b), Ok(Arg::Int(-3)));
        assert_eq!(arg("i:0x10", &mut r, b), Ok(Arg::Int(16)));
        assert_eq!(arg("f32:1.5", &mut r, b), Ok(Arg::F32(1.5)));
        assert_eq!(arg("zeros:8", &mut r, b), Ok(Arg::Buf(vec![0; 8])));
        assert_eq!(arg("bytes:00ff10", &mut r, b), Ok(Arg::Bytes(vec![0, 255, 16])));
        match arg("rand:f32:10", &mut r, b) {
            Ok(Arg::Buf(b)) => assert_eq!(b.len(), 40),
            other => panic!("{other:?}"),
        }
        assert!(arg("rand:f16:1", &mut r, b).unwrap_err().to_string().contains("f16"));
        assert!(arg("bogus", &mut r, b).is_err() && arg("i:x", &mut r, b).is_err());
        assert!(matches!(arg("bytes:0", &mut r, b), Err(SpecError::Usage(_))));
        assert_eq!(init("tab=bytes:0102", &mut r, b), Ok(("tab".to_string(), vec![1, 2])));
        assert!(init("=bytes:01", &mut r, b).is_err() && init("tab=i:1", &mut r, b).is_err());
    }

    #[test]
    fn integers_cover_both_64_bit_ranges() {
        assert_eq!(int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(int("-0x8000000000000000"), Some(i64::MIN));
        assert_eq!(int("18446744073709551615"), Some(-1));
        assert_eq!(int("-9223372036854775809"), None);
        assert_eq!(int("-18446744073709551615"), None);
        assert_eq!(int("18446744073709551616"), None);
    }

    #[test]
    fn sizes_are_checked_before_allocating() {
        let mut r = Rng::new(1);
        let b = &mut Budget::new(1000);
        assert!(matches!(arg("zeros:18446744073709551615", &mut r, b), Err(SpecError::Input(_))));
        assert!(matches!(arg("rand:u64:200000000", &mut r, b), Err(SpecError::Input(_))));
        assert!(matches!(arg("rand:u64:4611686018427387904", &mut r, b), Err(SpecError::Input(_))));
        assert!(matches!(arg("file:/dev/zero", &mut r, b), Err(SpecError::Input(_))));
        // The budget is shared by all buffers.
        assert!(arg("zeros:600", &mut r, b).is_ok());
        assert!(arg("zeros:600", &mut r, b).is_err());
    }
}
