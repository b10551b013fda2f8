//! Coordinates of the texture geometries beyond 1D/2D/3D and the gradient fetch (issue
//! 18): the array index clamp, the cube-map projection and `tex.grad` (`TXD`), lowered as
//! ptxas 11.8 does (docs/textures.md §1.10-§1.13).

// PTX input reaches here: no panicking shortcuts (docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::Handle;
use super::mask::{self, Fetch};
use crate::lower::ctx::{LResult, Lowerer};
use crate::ptx::ast::{Ident, Instruction};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, Src};
use crate::sass::mods::IType;
use crate::sass::op::{Op, TexDim};

impl Lowerer<'_> {
    /// The coordinates a `CUBE`/`ARRAY_CUBE` fetch passes: `{x, y, z}` (`.cube`, PTX `{x,
    /// y, z, _}`) or `{index, x, y, z}` (`.acube`, the index clamped to 16 bits) with x,
    /// y, z multiplied by the reciprocal of the largest magnitude, as ptxas 11.8 does
    /// (`FMNMX R0, |x|, |y|, !PT; FMNMX R0, R0, |z|, !PT; MUFU.RCP R0, R0; FMUL` each;
    /// `probe_cube.ptx`, docs/textures.md §1.13): the hardware selects the face from the
    /// projected direction.
    pub(super) fn tex_cube(&mut self, dim: TexDim, mut coords: Vec<Src>) -> Vec<Src> {
        if dim == TexDim::ACube {
            self.tex_clamp_index(&mut coords);
        }
        let at = usize::from(dim == TexDim::ACube);
        let c = |k: usize| coords.get(at.saturating_add(k)).copied().unwrap_or_else(Src::rz);
        let (x, y, z) = (c(0), c(1), c(2));
        let max = Src::pred(crate::sass::instr::PT, true);
        let m = self.tmp(1);
        self.op(Op::Fmnmx { ftz: false }, Dst::reg(m, 1), vec![x.abs(), y.abs(), max]);
        let m2 = self.tmp(1);
        self.op(Op::Fmnmx { ftz: false }, Dst::reg(m2, 1), vec![Src::r32(m), z.abs(), max]);
        let r = self.tmp(1);
        self.op(Op::Mufu(crate::sass::op::MufuOp::Rcp), Dst::reg(r, 1), vec![Src::r32(m2)]);
        let mut out: Vec<Src> = coords.iter().take(at).copied().collect();
        for v in [x, y, z] {
            let t = self.tmp(1);
            self.op(Op::Fmul(crate::sass::mods::FMods::default()), Dst::reg(t, 1), vec![Src::r32(r), v]);
            out.push(Src::r32(t));
        }
        out
    }

    /// Clamps an array index (the first coordinate, `.u32`) to 16 bits, as ptxas 11.8 does
    /// before every array fetch (`I2I.U16.U32.SAT R4, c[0x0][0x150]`, `probe_arrays.ptx`).
    pub(super) fn tex_clamp_index(&mut self, coords: &mut [Src]) {
        if let Some(c) = coords.first_mut() {
            let t = self.tmp(1);
            self.op(Op::I2iSat { dst: IType::U16, src: IType::U32 }, Dst::reg(t, 1), vec![*c]);
            *c = Src::r32(t);
        }
    }

    /// `tex.grad.{1d,2d,a1d,a2d}`: `TXD Rd, Rc, Rg, index, dim, mask` or `TXD.B Rd,
    /// {handle, Rc}, Rg, 0x0, dim, mask`, the components of `mask` packed into `Rd..`.
    /// `coords` are as `lower_tex` prepared them (an array's clamped index first; `.f32`
    /// 1D with y = 0 appended). `Rc` is x, y first and an array index last (`{x}`, `{x,
    /// y}`, `{x, index}`, `{x, y, index}`); the gradients are interleaved per axis, the
    /// quad `Rg` = `{dPdx.x, dPdy.x, dPdx.y, dPdy.y}` for 2D (`.f32` 1D: `{dPdx, dPdy, 0,
    /// 0}`) and `ARRAY_2D`, the pair `{dPdx, dPdy}` for `ARRAY_1D` and `.s32` 1D (`TXD ...
    /// 1D`). ptxas 11.8 `probe_grad.ptx` g2d, g1d, g2d_b, g1d_b, g2d_x, g2d_xz, ga1d, ga2d
    /// (docs/textures.md §1.11) and `probe_geometries.ptx` ga1d_b, ga2d_b, ga2d_x, gi1d,
    /// gi2d, gi2d_b, gia1d, gia2d (§1.12).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tex_grad(
        &mut self,
        i: &Instruction,
        dim: TexDim,
        handle: Handle,
        coords: &[Src],
        mask: u8,
        elems: &[Option<Ident>],
        dty: ScalarType,
    ) -> LResult<()> {
        let (Some(dpdx), Some(dpdy)) = (i.operands.get(2), i.operands.get(3)) else {
            return self.error(i.span, "`tex.grad` without its two gradient vectors");
        };
        let (dx, dy) = (self.tex_coords(dpdx)?, self.tex_coords(dpdy)?);
        // `ptx::texture` checked each gradient's length for the geometry (1 or 2).
        let g = |v: &[Src], k: usize| v.get(k).copied().unwrap_or_else(Src::rz);
        let c = |k: usize| coords.get(k).copied().unwrap_or_else(Src::rz);
        let (rc, rb): (Vec<Src>, Src) = match dim {
            TexDim::D1 => (vec![c(0)], self.tex_join(&[g(&dx, 0), g(&dy, 0)], 2)),
            TexDim::A1 => (vec![c(1), c(0)], self.tex_join(&[g(&dx, 0), g(&dy, 0)], 2)),
            TexDim::A2 => (vec![c(1), c(2), c(0)], self.tex_join(&[g(&dx, 0), g(&dy, 0), g(&dx, 1), g(&dy, 1)], 4)),
            _ => (vec![c(0), c(1)], self.tex_join(&[g(&dx, 0), g(&dy, 0), g(&dx, 1), g(&dy, 1)], 4)),
        };
        let comps: Vec<usize> = (0..4).filter(|k| mask & (1 << k) != 0).collect();
        let op = mask::fetch_op(Fetch::Grad, dim, matches!(handle, Handle::Bindless(_)), mask);
        // Registers of Ra: 1, 2 or 4 (three coordinates take a quad).
        let width = |n: usize| match n {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        let srcs = match handle {
            Handle::Bound(index) => vec![self.tex_join(&rc, width(rc.len())), rb, Src::imm(index)],
            Handle::Bindless(h) => {
                let parts: Vec<Src> = std::iter::once(Src::reg(h)).chain(rc.iter().copied()).collect();
                vec![self.tex_join(&parts, width(parts.len())), rb]
            }
        };
        let (dst, regs) = self.packed_results(&comps);
        self.emit(Instr::new(op, vec![dst], srcs));
        self.tex_write(elems, &regs, dty)
    }
}
