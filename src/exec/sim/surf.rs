//! The simulator's surface unit: `SULD.D.BA`, `SUST.D.BA` (operand layouts:
//! `sass::texmods`, docs/textures.md §1.8) on the launch's images, addressed in bytes with
//! the out-of-range modes of `exec::image`. Independent of the interpreter's
//! `exec::ptx::surf` and of the compiler.

use super::Sim;
use super::state::Warp;
use super::tex::{reg_of, word};
use crate::exec::ExecError;
use crate::exec::image::Image;
use crate::sass::instr::Instr;
use crate::sass::op::{Op, SurfClamp, SurfDim, SurfSize};

impl Sim<'_> {
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
        let ra = reg_of(i.srcs.first())?;
        // x in bytes, y in rows, z in planes (an array's index is the row of a
        // `1D_ARRAY`, the plane of a `2D_ARRAY`); a coordinate beyond the
        // access's geometry or the image's rank is 0.
        let c = |k: u8| {
            if k < dim.coords() && usize::from(k) < usize::from(img.rank) { word(w, ra, k, l) as i32 as i64 } else { 0 }
        };
        let (x, y, z) = (c(0), c(1), c(2));
        let n = i64::from(size.bytes());
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
}
