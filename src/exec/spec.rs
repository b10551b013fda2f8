//! Command-line descriptions of a launch for `ptx2sass run`: launch shapes (`X,Y,Z`) and
//! kernel arguments, turned into [`crate::exec::ptx::args::Arg`]s.
//!
//! Argument syntax (one `--arg` per kernel parameter, in order):
//! * `i:N` an integer (decimal or `0x` hex, may be negative), `f32:X`, `f64:X` a float;
//! * `rand:TYPE:N` a pointer to a fresh buffer of `N` random elements of `TYPE` (`u8`,
//!   `u16`, `u32`, `u64`, `f32` in [-8, 8), `f64` in [-8, 8)), from `--seed`;
//! * `zeros:N` a pointer to a fresh buffer of `N` zero bytes;
//! * `file:PATH` a pointer to a fresh buffer holding the file's bytes.

use super::Rng;
use super::ptx::args::Arg;

/// Parses `X`, `X,Y` or `X,Y,Z` (missing dimensions are 1); each at least 1.
pub fn dims(s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("`{s}`: expected X, X,Y or X,Y,Z"));
    }
    let mut d = [1u32; 3];
    for (k, p) in parts.iter().enumerate() {
        d[k] = p.trim().parse().ok().filter(|v| *v >= 1).ok_or_else(|| format!("`{p}` is not a positive integer"))?;
    }
    Ok(d)
}

fn int(s: &str) -> Option<i64> {
    let (neg, t) = s.strip_prefix('-').map_or((false, s), |t| (true, t));
    let v = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok()? as i64,
        None => t.parse::<i64>().ok()?,
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Parses one `--arg` (see the module docs); `rng` is the random state for `rand:`.
/// Errors name the offending text and what was expected.
pub fn arg(s: &str, rng: &mut Rng) -> Result<Arg, String> {
    let (kind, rest) = s
        .split_once(':')
        .ok_or_else(|| format!("`{s}`: expected KIND:VALUE (i:, f32:, f64:, rand:, zeros:, file:)"))?;
    match kind {
        "i" => int(rest).map(Arg::Int).ok_or_else(|| format!("`{rest}` is not an integer")),
        "f32" => rest.parse().map(Arg::F32).map_err(|_| format!("`{rest}` is not a number")),
        "f64" => rest.parse().map(Arg::F64).map_err(|_| format!("`{rest}` is not a number")),
        "zeros" => {
            let n: usize = rest.parse().map_err(|_| format!("`{rest}` is not a byte count"))?;
            Ok(Arg::Buf(vec![0; n]))
        }
        "file" => std::fs::read(rest).map(Arg::Buf).map_err(|e| format!("cannot read `{rest}`: {e}")),
        "rand" => {
            let (ty, n) = rest.split_once(':').ok_or_else(|| format!("`{s}`: expected rand:TYPE:COUNT"))?;
            let n: usize = n.parse().map_err(|_| format!("`{n}` is not an element count"))?;
            let mut out = Vec::new();
            for _ in 0..n {
                let r = rng.next_u64();
                match ty {
                    "u8" => out.push(r as u8),
                    "u16" => out.extend((r as u16).to_le_bytes()),
                    "u32" => out.extend((r as u32).to_le_bytes()),
                    "u64" => out.extend(r.to_le_bytes()),
                    "f32" => out.extend(((r % 65536) as f32 / 4096.0 - 8.0).to_le_bytes()),
                    "f64" => out.extend(((r % (1 << 40)) as f64 / (1u64 << 36) as f64 - 8.0).to_le_bytes()),
                    _ => return Err(format!("`{ty}`: expected u8, u16, u32, u64, f32 or f64")),
                }
            }
            Ok(Arg::Buf(out))
        }
        _ => Err(format!("`{kind}`: expected i, f32, f64, rand, zeros or file")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_and_arguments() {
        assert_eq!(dims("4"), Ok([4, 1, 1]));
        assert_eq!(dims("4,2,3"), Ok([4, 2, 3]));
        assert!(dims("0").is_err() && dims("1,2,3,4").is_err() && dims("a").is_err());
        let mut r = Rng::new(1);
        assert_eq!(arg("i:-3", &mut r), Ok(Arg::Int(-3)));
        assert_eq!(arg("i:0x10", &mut r), Ok(Arg::Int(16)));
        assert_eq!(arg("f32:1.5", &mut r), Ok(Arg::F32(1.5)));
        assert_eq!(arg("zeros:8", &mut r), Ok(Arg::Buf(vec![0; 8])));
        match arg("rand:f32:10", &mut r) {
            Ok(Arg::Buf(b)) => assert_eq!(b.len(), 40),
            other => panic!("{other:?}"),
        }
        assert!(arg("rand:f16:1", &mut r).unwrap_err().contains("f16"));
        assert!(arg("bogus", &mut r).is_err() && arg("i:x", &mut r).is_err());
    }
}
