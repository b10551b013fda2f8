//! The simulator's surface unit: `SULD.D.BA`, `SUST.D.BA` (operand layouts:
//! `sass::texmods`, docs/textures.md §1.8) on the launch's images, addressed in bytes with
//! the out-of-range modes of `exec::image`. Independent of the interpreter's
//! `exec::ptx::surf` and of the compiler.

use super::Sim;
use super::state::Warp;
use super::tex::{reg_of, word};
use crate::exec::ExecError;
use crate::exec::image::{Format, Image};
use crate::sass::instr::Instr;
use crate::sass::op::{Op, SurfClamp, SurfDim, SurfSize};
use crate::sass::texmods::{SurfRed, SurfRedType};

impl Sim<'_> {
    /// The byte address of one lane's (`l`) surface access of `n` bytes by `i` on `img`
    /// (coordinates in `i`'s first source; x in bytes, or in samples when `!ba`), or
    /// `None` for an `.IGN` access outside the surface (`exec::image`).
    #[allow(clippy::too_many_arguments)]
    fn surface_address(
        &self,
        w: &Warp,
        i: &Instr,
        img: &Image,
        l: usize,
        dim: SurfDim,
        clamp: SurfClamp,
        n: i64,
        ba: bool,
    ) -> Result<Option<u64>, ExecError> {
        let ra = reg_of(i.srcs.first())?;
        // x in bytes, y in rows, z in planes (an array's index is the row of a
        // `1D_ARRAY`, the plane of a `2D_ARRAY`); a coordinate beyond the
        // access's geometry or the image's rank is 0.
        let c = |k: u8| {
            if k < dim.coords() && usize::from(k) < usize::from(img.rank) { word(w, ra, k, l) as i32 as i64 } else { 0 }
        };
        // Sample addressing (`SURED` without `.BA`, `sured.p`): x counts texels.
        let x = if ba { c(0) } else { c(0).saturating_mul(i64::from(img.format.bytes())) };
        let (y, z) = (c(1), c(2));
        let [width, rows, planes] = img.dims.map(i64::from);
        // Below 2^36: no overflow.
        let row = width.saturating_mul(i64::from(img.format.bytes()));
        if x.checked_rem_euclid(n) != Some(0) {
            return Err(ExecError::Launch(format!("surface `{}`: x = {x} is not a multiple of {n}", img.param)));
        }
        let last_x = row.saturating_sub(n);
        let fits = (0..=last_x).contains(&x) && (0..rows).contains(&y) && (0..planes).contains(&z);
        let at = match (fits, clamp) {
            (true, _) => Some((x, y, z)),
            (false, SurfClamp::Trap) => {
                let zs = if dim.coords() == 3 { format!(", z = {z}") } else { String::new() };
                return Err(ExecError::Launch(format!(
                    "surface `{}`: access at x = {x} bytes, y = {y}{zs} is out of range (.trap)",
                    img.param
                )));
            }
            // An access wider than a row has no position to clamp to (the
            // interpreter's `i64::clamp` panicked on it; both report it now).
            (false, SurfClamp::Clamp) if last_x < 0 => {
                return Err(ExecError::Launch(format!(
                    "surface `{}`: an access of {n} bytes is wider than a row ({row} bytes; .clamp)",
                    img.param
                )));
            }
            (false, SurfClamp::Clamp) => Some((
                x.clamp(0, last_x).checked_div(n).and_then(|v| v.checked_mul(n)).unwrap_or(0),
                y.clamp(0, rows.saturating_sub(1).max(0)),
                z.clamp(0, planes.saturating_sub(1).max(0)),
            )),
            (false, SurfClamp::Ign) => None,
        };
        let overflow = || ExecError::Launch(format!("surface `{}`: an address overflows", img.param));
        let addr = match at {
            Some((x, y, z)) => Some(
                z.checked_mul(rows)
                    .and_then(|v| v.checked_add(y))
                    .and_then(|v| v.checked_mul(row))
                    .and_then(|v| v.checked_add(x))
                    .and_then(|v| u64::try_from(v).ok())
                    .and_then(|v| img.base.checked_add(v))
                    .ok_or_else(overflow)?,
            ),
            None => None,
        };
        Ok(addr)
    }

    /// One lane's (`l`) `SULD`/`SUST` of `i` on `img`: the words loaded (`SULD`, one per
    /// register of the access) or zeros (`SUST`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn surface(
        &mut self,
        w: &Warp,
        i: &Instr,
        img: &Image,
        l: usize,
        dim: SurfDim,
        clamp: SurfClamp,
        size: SurfSize,
    ) -> Result<[u32; 4], ExecError> {
        let n = i64::from(size.bytes());
        let addr = self.surface_address(w, i, img, l, dim, clamp, n, true)?;
        let overflow = || ExecError::Launch(format!("surface `{}`: an address overflows", img.param));
        // Register k of the access: its byte address and size (sub-word sizes:
        // the low bytes).
        let part = |a: u64, k: u8| {
            let off = u64::from(k).checked_mul(4).and_then(|o| a.checked_add(o)).ok_or_else(overflow)?;
            Ok::<_, ExecError>((off, (n as u64).min(4)))
        };
        let regs = size.regs().min(4);
        if let Op::Sust { .. } = i.op {
            let data = reg_of(i.srcs.get(1))?;
            if let Some(a) = addr {
                for k in 0..regs {
                    let (at, b) = part(a, k)?;
                    let v = word(w, data, k, l);
                    self.global.write_uint("global", at, b, u64::from(v))?;
                }
            }
            Ok([0; 4])
        } else {
            let mut v = [0u32; 4];
            if let Some(a) = addr {
                for (k, slot) in (0u8..).zip(v.iter_mut()).take(usize::from(regs)) {
                    let (at, b) = part(a, k)?;
                    *slot = self.global.read_uint("global", at, b)? as u32;
                }
            }
            Ok(v)
        }
    }

    /// One lane's (`l`) `SURED` of `i` on `img`: the element at the address (x in bytes
    /// with `.BA`, in samples without) becomes `op(element, data)` (`.U64`: the register
    /// pair, little-endian; `.S32` compares signed for MIN/MAX). Lanes are applied one after
    /// the other, so the result is the atomic one whatever their order (the operations are
    /// commutative and associative).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn surface_red(
        &mut self,
        w: &Warp,
        i: &Instr,
        img: &Image,
        l: usize,
        dim: SurfDim,
        clamp: SurfClamp,
        red: SurfRed,
        ty: SurfRedType,
        ba: bool,
    ) -> Result<(), ExecError> {
        // Without `.BA` (`sured.p`) the sample is reduced in the surface's format; the
        // model has the integer ones.
        if !ba && !img.format.integer() {
            return Err(ExecError::Launch(format!(
                "surface `{}`: a formatted reduction (sured.p) needs fmt=u32 or s32 (the model reduces 32-bit integer samples)",
                img.param
            )));
        }
        let n = ty.bytes();
        let Some(at) = self.surface_address(w, i, img, l, dim, clamp, i64::from(n), ba)? else {
            return Ok(());
        };
        let data = reg_of(i.srcs.get(1))?;
        let v = match ty {
            SurfRedType::U64 => u64::from(word(w, data, 0, l)) | u64::from(word(w, data, 1, l)) << 32,
            _ => u64::from(word(w, data, 0, l)),
        };
        let old = self.global.read_uint("global", at, u64::from(n))?;
        let new = match (red, ty) {
            (SurfRed::Add, SurfRedType::U64) => old.wrapping_add(v),
            (SurfRed::Add, _) => u64::from((old as u32).wrapping_add(v as u32)),
            (SurfRed::Min, SurfRedType::S32) => u64::from((old as u32 as i32).min(v as u32 as i32) as u32),
            (SurfRed::Max, SurfRedType::S32) => u64::from((old as u32 as i32).max(v as u32 as i32) as u32),
            (SurfRed::Min, _) => old.min(v),
            (SurfRed::Max, _) => old.max(v),
            (SurfRed::And, _) => old & v,
            (SurfRed::Or, _) => old | v,
        };
        self.global.write_uint("global", at, u64::from(n), new)
    }

    /// One lane's (`l`) `SUST.P` of `i` on `img`: x counts samples; the components of
    /// `mask` (R G B A, one register each from the data operand) are converted to the
    /// surface's format by the rule of `exec::image` (f32 bits as they are; `u8x4`:
    /// saturated to [0, 1], times 255, rounded to nearest even; `u32`/`s32`/`f32`: the R
    /// component's 32 bits), other components keep their bytes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn surface_formatted(
        &mut self,
        w: &Warp,
        i: &Instr,
        img: &Image,
        l: usize,
        dim: SurfDim,
        clamp: SurfClamp,
        mask: u8,
    ) -> Result<(), ExecError> {
        let n = img.format.bytes();
        let Some(at) = self.surface_address(w, i, img, l, dim, clamp, i64::from(n), false)? else {
            return Ok(());
        };
        let data = reg_of(i.srcs.get(1))?;
        // The k-th written component is register k of the data.
        let mut comps = [None; 4];
        let mut k = 0u8;
        for (c, slot) in comps.iter_mut().enumerate() {
            if mask & (1 << c) != 0 {
                *slot = Some(word(w, data, k, l));
                k = k.saturating_add(1);
            }
        }
        let overflow = || ExecError::Launch(format!("surface `{}`: an address overflows", img.param));
        match img.format {
            Format::F32x4 => {
                for (c, v) in comps.iter().enumerate() {
                    if let Some(v) = v {
                        let a = at.checked_add((c as u64).saturating_mul(4)).ok_or_else(overflow)?;
                        self.global.write_uint("global", a, 4, u64::from(*v))?;
                    }
                }
            }
            Format::U8x4 => {
                for (c, v) in comps.iter().enumerate() {
                    if let Some(v) = v {
                        let a = at.checked_add(c as u64).ok_or_else(overflow)?;
                        self.global.write_uint("global", a, 1, u64::from(unorm8(f32::from_bits(*v))))?;
                    }
                }
            }
            Format::F32 | Format::U32 | Format::S32 => {
                if let Some(v) = comps[0] {
                    self.global.write_uint("global", at, 4, u64::from(v))?;
                }
            }
        }
        Ok(())
    }
}

/// An f32 as an unsigned normalized byte: NaN is 0, then saturated to [0, 1], times 255
/// and rounded to nearest even (`exec::image`).
fn unorm8(f: f32) -> u8 {
    if f.is_nan() {
        return 0;
    }
    (f.clamp(0.0, 1.0) * 255.0).round_ties_even() as u8
}
