//! The interpreter's surface unit: `suld.b`, `sust.b` (PTX ISA 9.7.10.1-9.7.10.2) on the
//! images of the launch, with the out-of-range modes of `exec::image`. Written from those
//! rules and the PTX ISA; it shares no code with the simulator or the compiler.

use super::compile::FnCx;
use super::program::Src;
use super::tex::{Handle, Kind, TexInstr, overflow};
use crate::exec::image::{Format, Image};
use crate::exec::{ExecError, Memory};
use crate::ptx::ast::Operand;
use crate::ptx::texture::{Clamp, Family, Geometry, TexOp};
use crate::ptx::types::ScalarType;

/// Decodes `suld.b`/`sust.b` (`t`, operands `ops`); `image(k)` reads operand `k` as
/// `[handle, {coordinates}]`.
pub(super) fn decode(
    fx: &FnCx,
    t: &TexOp,
    ops: &[Operand],
    image: &dyn Fn(usize) -> Result<(Handle, Vec<Src>), String>,
) -> Result<TexInstr, String> {
    let rank = |g: Option<Geometry>| -> Result<usize, String> {
        match g {
            Some(Geometry::D1) => Ok(1),
            Some(Geometry::D2) => Ok(2),
            Some(Geometry::D3) => Ok(3),
            Some(g) => Err(format!("the `{}` geometry", g.as_str())),
            None => Err("a missing geometry".into()),
        }
    };
    if t.family == Family::Sured {
        return decode_sured(fx, t, ops, image);
    }
    if t.formatted {
        // `sust.p`: `.b32` components R, G, B, A, x in samples.
        let (r, array) = match t.geometry {
            Some(Geometry::A1d) => (2, true),
            Some(Geometry::A2d) => (3, true),
            g => (rank(g)?, false),
        };
        let ((handle, by_name), mut coords) = image(0)?;
        index_last(&mut coords, r, array);
        let data = fx.srcs(ops.get(1).ok_or("missing data")?, ScalarType::B32)?;
        return Ok(TexInstr {
            kind: Kind::StoreFormatted { clamp: t.clamp.unwrap_or(Clamp::Trap), rank: r },
            handle,
            by_name,
            coords,
            dsts: vec![],
            data,
            sampler: None,
        });
    }
    // An array's index (first in PTX) is the row of a `.a1d` surface and the plane
    // of a `.a2d` one (`exec::image`).
    let (r, array) = match t.geometry {
        Some(Geometry::A1d) => (2, true),
        Some(Geometry::A2d) => (3, true),
        g => (rank(g)?, false),
    };
    let ty = t.dtype.unwrap_or(ScalarType::B32);
    let bytes = ty.bits() / 8;
    let clamp = t.clamp.unwrap_or(Clamp::Trap);
    if t.family == Family::Suld {
        let ((handle, by_name), mut coords) = image(1)?;
        index_last(&mut coords, r, array);
        let dsts = fx.dsts(ops.first().ok_or("missing result")?)?;
        Ok(TexInstr {
            kind: Kind::Load { clamp, rank: r, bytes },
            handle,
            by_name,
            coords,
            dsts,
            data: vec![],
            sampler: None,
        })
    } else {
        let ((handle, by_name), mut coords) = image(0)?;
        index_last(&mut coords, r, array);
        let data = fx.srcs(ops.get(1).ok_or("missing data")?, ty)?;
        Ok(TexInstr {
            kind: Kind::Store { clamp, rank: r, bytes },
            handle,
            by_name,
            coords,
            dsts: vec![],
            data,
            sampler: None,
        })
    }
}

/// Decodes `sured.{b,p}.op.{1d,2d,3d}.type.clamp [a, {c}], v`.
fn decode_sured(
    fx: &FnCx,
    t: &TexOp,
    ops: &[Operand],
    image: &dyn Fn(usize) -> Result<(Handle, Vec<Src>), String>,
) -> Result<TexInstr, String> {
    let rank = match t.geometry {
        Some(Geometry::D1) => 1,
        Some(Geometry::D2) => 2,
        _ => 3,
    };
    let ty = t.dtype.unwrap_or(ScalarType::B32);
    let op = match t.query.as_deref() {
        Some(".add") => ".add",
        Some(".min") => ".min",
        Some(".max") => ".max",
        Some(".and") => ".and",
        _ => ".or",
    };
    let red = Red { op, bytes: ty.bits() / 8, signed: ty == ScalarType::S32 };
    let ((handle, by_name), mut coords) = image(0)?;
    coords.truncate(rank);
    let data = fx.srcs(ops.get(1).ok_or("missing data")?, ty)?;
    Ok(TexInstr {
        kind: Kind::Reduce { clamp: t.clamp.unwrap_or(Clamp::Trap), rank, red, sample: t.formatted },
        handle,
        by_name,
        coords,
        dsts: vec![],
        data,
        sampler: None,
    })
}

/// Keeps the first `rank` coordinates, an array's index (the first) moved to the last.
fn index_last(coords: &mut Vec<Src>, rank: usize, array: bool) {
    if array && !coords.is_empty() {
        let index = coords.remove(0);
        coords.insert(rank.saturating_sub(1).min(coords.len()), index);
    }
    coords.truncate(rank);
}

/// The byte address of an access of `size` bytes at the first `rank` coordinates (x in
/// bytes, or in samples when `sample`; y, z) of `img` under `clamp`, or `None` for a
/// `.zero` access outside (`exec::image`).
fn locate(
    img: &Image,
    coords: &[u32],
    clamp: Clamp,
    rank: usize,
    size: i64,
    sample: bool,
) -> Result<Option<u64>, ExecError> {
    let coord = |d: usize| {
        if d < rank && d < usize::from(img.rank) { i64::from(coords.get(d).copied().unwrap_or(0) as i32) } else { 0 }
    };
    let (mut x, mut y, mut z) = (coord(0), coord(1), coord(2));
    // `sured.p`: x counts samples (PTX ISA 9.7.10.3 "sample addressing").
    if sample {
        x = x.saturating_mul(i64::from(img.format.bytes()));
    }
    let [w, h, depth] = img.dims.map(i64::from);
    // Below 2^36 (u32 times 16), so it fits.
    let row = w.saturating_mul(i64::from(img.format.bytes()));
    let last_x = row.saturating_sub(size);
    if x.checked_rem(size) != Some(0) {
        return Err(ExecError::Launch(format!("surface `{}`: x = {x} is not a multiple of {size}", img.param)));
    }
    let inside = (0..=last_x).contains(&x) && (0..h).contains(&y) && (0..depth).contains(&z);
    if !inside {
        match clamp {
            Clamp::Trap => {
                let zs = if rank == 3 { format!(", z = {z}") } else { String::new() };
                return Err(ExecError::Launch(format!(
                    "surface `{}`: access at x = {x} bytes, y = {y}{zs} is out of range (.trap)",
                    img.param
                )));
            }
            // An access wider than a row has no position to clamp to (`i64::clamp` of an
            // empty range panicked here before).
            Clamp::Clamp if last_x < 0 => {
                return Err(ExecError::Launch(format!(
                    "surface `{}`: an access of {size} bytes is wider than a row ({row} bytes; .clamp)",
                    img.param
                )));
            }
            Clamp::Clamp => {
                x = x.clamp(0, last_x).checked_div(size).and_then(|v| v.checked_mul(size)).unwrap_or(0);
                y = y.clamp(0, h.saturating_sub(1).max(0));
                z = z.clamp(0, depth.saturating_sub(1).max(0));
            }
            Clamp::Zero => return Ok(None),
        }
    }
    z.checked_mul(h)
        .and_then(|v| v.checked_add(y))
        .and_then(|v| v.checked_mul(row))
        .and_then(|v| v.checked_add(x))
        .and_then(|v| u64::try_from(v).ok())
        .and_then(|v| img.base.checked_add(v))
        .map(Some)
        .ok_or_else(|| overflow(img))
}

/// A `suld.b` (`load`, `elems` results) or `sust.b` (the elements `data`) of `bytes`-byte
/// elements at the first `rank` coordinates (x in bytes, y, z), under `clamp`
/// (`exec::image`).
#[allow(clippy::too_many_arguments)]
pub(super) fn surface(
    img: &Image,
    global: &mut Memory,
    coords: &[u32],
    data: &[u64],
    load: bool,
    clamp: Clamp,
    rank: usize,
    bytes: u32,
    elems: usize,
) -> Result<Vec<u64>, ExecError> {
    // The access covers every element: `bytes` times the vector width.
    let elems = if load { elems } else { data.len() };
    let size = i64::try_from(elems).ok().and_then(|e| i64::from(bytes).checked_mul(e)).filter(|s| *s > 0).ok_or_else(
        || ExecError::Launch(format!("surface `{}`: an access of {elems} elements of {bytes} bytes", img.param)),
    )?;
    let Some(at) = locate(img, coords, clamp, rank, size, false)? else {
        return Ok(vec![0; elems]);
    };
    let b = u64::from(bytes);
    let addr = |k: u64| k.checked_mul(b).and_then(|o| at.checked_add(o)).ok_or_else(|| overflow(img));
    if load {
        return (0..elems as u64).map(|k| global.read_uint("global", addr(k)?, b)).collect();
    }
    for (k, v) in (0u64..).zip(data) {
        global.write_uint("global", addr(k)?, b, *v)?;
    }
    Ok(vec![])
}

/// A `sured` (PTX ISA 9.7.10.3): the element of `bytes` bytes at the coordinates becomes
/// `op(element, value)`, `op` one of `.add .min .max .and .or`, `signed` comparing as
/// `.s32`; threads apply theirs one after the other (atomic: the operations commute).
#[allow(clippy::too_many_arguments)]
pub(super) fn reduce(
    img: &Image,
    global: &mut Memory,
    coords: &[u32],
    value: u64,
    clamp: Clamp,
    rank: usize,
    red: Red,
    sample: bool,
) -> Result<(), ExecError> {
    // `sured.p` reduces a sample in the surface's format; the model has the integer ones.
    if sample && !img.format.integer() {
        return Err(ExecError::Launch(format!(
            "surface `{}`: a formatted reduction (sured.p) needs fmt=u32 or s32 (the model reduces 32-bit integer samples)",
            img.param
        )));
    }
    let Some(at) = locate(img, coords, clamp, rank, i64::from(red.bytes), sample)? else { return Ok(()) };
    let b = u64::from(red.bytes);
    let old = global.read_uint("global", at, b)?;
    let mask = if b == 8 { u64::MAX } else { u64::from(u32::MAX) };
    let (o, v) = (old & mask, value & mask);
    let s32 = |x: u64| x as u32 as i32;
    let new = match red.op {
        ".add" => o.wrapping_add(v) & mask,
        ".min" if red.signed => u64::from(s32(o).min(s32(v)) as u32),
        ".max" if red.signed => u64::from(s32(o).max(s32(v)) as u32),
        ".min" => o.min(v),
        ".max" => o.max(v),
        ".and" => o & v,
        _ => o | v,
    };
    global.write_uint("global", at, b, new)
}

/// What a `sured` computes: the operation as PTX spells it, the element bytes (4 or 8) and
/// whether `.min`/`.max` compare signed (`.s32`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Red {
    /// `.add`, `.min`, `.max`, `.and` or `.or`.
    pub op: &'static str,
    /// 4 or 8.
    pub bytes: u32,
    /// `.s32`.
    pub signed: bool,
}

/// A `sust.p` (PTX ISA 9.7.10.2): the components `data` (R, G, B, A in order, f32 or
/// integer bits) converted to `img`'s format at the sample the coordinates name (x in
/// samples): `f32x4` takes each given component's bits, `u8x4` each as an unsigned
/// normalized byte (NaN 0, saturated to [0, 1], times 255, rounded to nearest even),
/// `f32`/`u32`/`s32` the R component's 32 bits; components not given keep their bytes
/// (`exec::image`).
pub(super) fn store_formatted(
    img: &Image,
    global: &mut Memory,
    coords: &[u32],
    data: &[u64],
    clamp: Clamp,
    rank: usize,
) -> Result<(), ExecError> {
    let n = img.format.bytes();
    let Some(at) = locate(img, coords, clamp, rank, i64::from(n), true)? else { return Ok(()) };
    let at_plus = |k: u64| at.checked_add(k).ok_or_else(|| overflow(img));
    match img.format {
        Format::F32x4 => {
            for (k, v) in (0u64..4).zip(data) {
                global.write_uint("global", at_plus(k.saturating_mul(4))?, 4, *v & 0xffff_ffff)?;
            }
        }
        Format::U8x4 => {
            for (k, v) in (0u64..4).zip(data) {
                let f = f32::from_bits(*v as u32);
                let b = if f.is_nan() { 0 } else { (f.clamp(0.0, 1.0) * 255.0).round_ties_even() as u8 };
                global.write_uint("global", at_plus(k)?, 1, u64::from(b))?;
            }
        }
        Format::F32 | Format::U32 | Format::S32 => {
            if let Some(v) = data.first() {
                global.write_uint("global", at, 4, *v & 0xffff_ffff)?;
            }
        }
    }
    Ok(())
}
