//! Surface loads and stores: `suld.b`/`sust.b` as `SULD`/`SUST.D.BA` (docs/textures.md
//! §1.8).

use super::Handle;
use crate::lower::ctx::{LResult, Lowerer};
use crate::ptx::ast::{Instruction, Operand, VecElem};
use crate::ptx::texture::{Clamp, Family, Geometry, TexOp};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, RegRef, Src};
use crate::sass::op::{Op, SurfClamp, SurfDim, SurfSize};
use crate::sass::texmods::{SurfRed, SurfRedType};

impl Lowerer<'_> {
    /// `suld.b`/`sust.b` `.{1d,2d,3d}` of `.b8`, `.b16`, `.b32`, `.b64`, `.v2/.v4.b32` and
    /// `.v2.b64`: `SULD/SUST.D.BA.dim.size` with the data in 1, 2 or 4 consecutive registers
    /// (ptxas 11.8 `probe_surfaces.ptx`, docs/textures.md §1.8: `SULD.D.BA.2D.U8.IGN` then `LOP32I.AND R0, R0, 0xff`
    /// into a 32-bit register, `.64` for `.b64` and `.v2.b32`, `.128` for `.v4.b32` and
    /// `.v2.b64`; 3D coordinates x, y, z in consecutive registers).
    pub(super) fn lower_surface(&mut self, i: &Instruction, t: &TexOp) -> LResult<()> {
        let ebits: u32 = match t.dtype {
            Some(ScalarType::B8) => 8,
            Some(ScalarType::B16) => 16,
            Some(ScalarType::B64) => 64,
            _ => 32,
        };
        // Vectors of `.b8`/`.b16` are one access of all their bytes, the elements packed
        // into registers little-endian (ptxas 11.8 `probe_subword.ptx`, docs/textures.md
        // §1.15: `.v2.b8` `.U16`, `.v4.b8` and `.v2.b16` 32 bits, `.v4.b16` `.64`).
        let packed = ebits < 32 && t.vec > 1;
        let size = match (ebits.saturating_mul(t.vec), ebits) {
            (8, _) => SurfSize::U8,
            (16, _) => SurfSize::U16,
            (32, _) => SurfSize::B32,
            (64, _) => SurfSize::B64,
            _ => SurfSize::B128,
        };
        let dim = match t.geometry {
            Some(Geometry::D1) => SurfDim::D1,
            Some(Geometry::D2) => SurfDim::D2,
            Some(Geometry::D3) => SurfDim::D3,
            Some(Geometry::A1d) => SurfDim::A1d,
            _ => SurfDim::A2d,
        };
        let clamp = match t.clamp {
            Some(Clamp::Zero) => SurfClamp::Ign,
            Some(Clamp::Clamp) => SurfClamp::Clamp,
            _ => SurfClamp::Trap,
        };
        let load = t.family == Family::Suld;
        let (addr, data) =
            if load { (i.operands.get(1), i.operands.first()) } else { (i.operands.first(), i.operands.get(1)) };
        let (Some(Operand::Texture { image, parts, .. }), Some(data)) = (addr, data) else {
            return self.error(i.span, "malformed surface instruction");
        };
        let handle = self.tex_handle(image)?;
        let mut coords = self.tex_coords(parts.first().unwrap_or(data))?;
        // PTX puts an array index first (`{index, x}`, `{index, x, y, _}`), SASS last.
        if matches!(dim, SurfDim::A1d | SurfDim::A2d) && !coords.is_empty() {
            let index = coords.remove(0);
            let at = usize::from(dim.coords().saturating_sub(1)).min(coords.len());
            coords.insert(at, index);
        }
        // 3D and 2D arrays: three coordinates in a quad (the fourth register unread), as
        // TEX's 3D coordinates.
        let n = match dim.coords() {
            3 => 4,
            k => k,
        };
        // The checked vector has at least `dim.coords()` elements.
        let ra = self.tex_join(coords.get(..usize::from(dim.coords())).unwrap_or(&coords), n);
        let last = match handle {
            Handle::Bound(index) => Src::imm(index),
            Handle::Bindless(h) => Src::reg(h),
        };
        // `sust.p` (`.b32` elements, one register per component R, G, B, A): `SUST.P.dim
        // {.mask}.clamp [Ra], Rd, idx|Rh` (ptxas 11.8 `SUST.P.2D.TRAP [R8], R4, 0x50` for
        // `.v4`, `SUST.P.1D.R.IGN` for one element, `SUST.P.3D.RG` for `.v2`; docs/textures.md
        // §1.15); x counts samples and the executors convert to the surface's format.
        if t.formatted && !load {
            let elems = self.tex_coords(data)?;
            let n = elems.len().min(4) as u8;
            let v = self.tex_join(&elems, n);
            let mask = 1u8.checked_shl(u32::from(n)).map_or(0xf, |m| m.wrapping_sub(1));
            self.emit(Instr::new(Op::SustP { dim, clamp, mask }, vec![], vec![ra, v, last]));
            return Ok(());
        }
        let regs = size.regs();
        // Registers per element: 2 for `.b64`, else 1.
        let per = if ebits == 64 { 2 } else { 1 };
        if load {
            let r = self.tmp(regs);
            self.emit(Instr::new(Op::Suld { dim, clamp, size }, vec![Dst::reg(r, regs)], vec![ra, last]));
            for (k, d) in self.tex_results(data).into_iter().enumerate() {
                let Some(d) = d else { continue };
                let p = self.ptx_reg(&d)?;
                if packed {
                    // Element k: `ebits` bits at bit k * ebits of the access (ptxas 11.8:
                    // `BFE.U32 R0, R4, 0x800`, `0x808` ... for `.b8`; the high half of a
                    // `.b16` pair through `XMAD.PSL.CHI`, here a `BFE.U32 ..., 0x1010`).
                    // k < 4, ebits <= 16: the bit offset is below 64.
                    let bit = (k as u32).saturating_mul(ebits);
                    let src = Src::reg(RegRef { reg: r, comp: (bit / 32) as u8, n: 1 });
                    let e = self.tmp(1);
                    self.op(
                        Op::Bfe { u32: true, brev: false },
                        Dst::reg(e, 1),
                        vec![src, Src::imm((bit % 32) | ebits << 8)],
                    );
                    let ty = if ebits == 8 { ScalarType::B8 } else { ScalarType::B16 };
                    self.write_ptx(p, Src::r32(e), ty)?;
                    continue;
                }
                // k < 4 elements, `per` <= 2: the component is at most 6.
                let mut v = Src::reg(RegRef { reg: r, comp: (k as u8).saturating_mul(per), n: per });
                // A sub-word element in a wider register is masked (ptxas 11.8: `LOP32I.AND
                // R0, R0, 0xff` after `SULD...U8` into a `.b32` or `.b64` register, `0xffff`
                // after `.U16`; none into a `.b16` register).
                if ebits < 32 && p.ty.bits() > ebits {
                    let m = self.tmp(1);
                    let bits = if ebits == 8 { 0xff } else { 0xffff };
                    self.op(Op::Lop32i(crate::sass::op::LogicOp::And), Dst::reg(m, 1), vec![v, Src::imm(bits)]);
                    v = Src::r32(m);
                }
                let ty = match ebits {
                    8 => ScalarType::B8,
                    16 => ScalarType::B16,
                    64 => ScalarType::B64,
                    _ => ScalarType::B32,
                };
                self.write_ptx(p, v, ty)?;
            }
            Ok(())
        } else {
            let elems: Vec<Operand> = match data {
                Operand::Vector(v, _) => v
                    .iter()
                    .map(|e| match e {
                        VecElem::Reg(r) => {
                            Ok(Operand::Name { name: r.clone(), component: None, negated: false, span: r.span })
                        }
                        VecElem::Imm(m) => Ok(Operand::Imm(*m)),
                        VecElem::Sink(s) => Err(*s),
                    })
                    .collect::<Result<_, _>>()
                    .or_else(|s| self.error(s, "expected a register or an immediate"))?,
                other => vec![other.clone()],
            };
            let mut words = vec![];
            if packed {
                // ptxas 11.8: `BFI R0, R5, 0x808, R0` (and 0x810, 0x818) for `.b8`,
                // `XMAD.PSL.CLO R0, R5, 0x1, R0` (e0 + e1 << 16) for `.b16`; a BFI of each
                // further element keeps the earlier ones whatever the registers' high bits.
                let per_reg = 32u32.checked_div(ebits).unwrap_or(1) as usize;
                for chunk in elems.chunks(per_reg) {
                    let mut acc: Option<Src> = None;
                    for (m, e) in chunk.iter().enumerate() {
                        let s = self.src32(e)?;
                        let v = self.in_reg(s);
                        acc = Some(match acc {
                            None => v,
                            Some(a) => {
                                let t = self.tmp(1);
                                // m < 4, ebits <= 16.
                                let at = (m as u32).saturating_mul(ebits) | ebits << 8;
                                self.op(Op::Bfi, Dst::reg(t, 1), vec![v, Src::imm(at), a]);
                                Src::r32(t)
                            }
                        });
                    }
                    words.extend(acc);
                }
                let v = self.tex_join(&words, regs);
                self.emit(Instr::new(Op::Sust { dim, clamp, size }, vec![], vec![ra, v, last]));
                return Ok(());
            }
            for e in &elems {
                if ebits == 64 {
                    let (lo, hi) = self.tex_src64(e)?;
                    words.extend([lo, hi]);
                } else {
                    let s = self.src32(e)?;
                    words.push(self.in_reg(s));
                }
            }
            let v = self.tex_join(&words, regs);
            self.emit(Instr::new(Op::Sust { dim, clamp, size }, vec![], vec![ra, v, last]));
            Ok(())
        }
    }

    /// The two 32-bit halves of a 64-bit data operand, in registers.
    pub(super) fn tex_src64(&mut self, e: &Operand) -> LResult<(Src, Src)> {
        match e {
            Operand::Name { name, negated: false, component: None, .. } => {
                let r = self.ptx_reg(name)?;
                if r.ty.bits() != 64 {
                    return self.error(e.span(), format!("`{}` must be a 64-bit register", name.name));
                }
                Ok((Src::reg(RegRef { reg: r.reg, comp: 0, n: 1 }), Src::reg(RegRef { reg: r.reg, comp: 1, n: 1 })))
            }
            Operand::Imm(m) => {
                let v = crate::lower::ctx::imm_bits64(m.value);
                let lo = self.in_reg(Src::imm(v as u32));
                let hi = self.in_reg(Src::imm((v >> 32) as u32));
                Ok((lo, hi))
            }
            _ => self.error(e.span(), "expected a register or an immediate"),
        }
    }

    /// `sured.b.{add,min,max,and,or}.{1d,2d,3d}` and `sured.p` (`.b32`): `SURED.D{.BA}.dim.OP
    /// {.S32,.U64}.clamp [Ra], Rv, idx|Rh` (ptxas 11.8 `probe_sured.ptx`, docs/textures.md
    /// §1.9: `.u32`/`.b32` no type, `.s32` `.S32`, `.u64` `.U64` with the value in a
    /// register pair; `sured.p` drops `.BA`, its x counting samples). ptxas rewrites a
    /// reduction whose coordinates and value are warp-uniform (kernel parameters) of a 1D
    /// 32-bit surface into one per warp (`VOTE.ANY`, then `@!P0 SURED` per lane when the
    /// warp is partial, else one lane's `SURED` of `popc * v` for `.add` or `v` for
    /// `.max`: the two predicated `SURED`s of §1.9, with `.trap` as with `.zero`); that is
    /// an optimization with the same result, so every lane reduces here.
    pub(super) fn lower_sured(&mut self, i: &Instruction, t: &TexOp) -> LResult<()> {
        let red = match t.query.as_deref() {
            Some(".add") => SurfRed::Add,
            Some(".min") => SurfRed::Min,
            Some(".max") => SurfRed::Max,
            Some(".and") => SurfRed::And,
            _ => SurfRed::Or,
        };
        let ty = match t.dtype {
            Some(ScalarType::S32) => SurfRedType::S32,
            Some(ScalarType::U64) => SurfRedType::U64,
            _ => SurfRedType::U32,
        };
        let dim = match t.geometry {
            Some(Geometry::D1) => SurfDim::D1,
            Some(Geometry::D2) => SurfDim::D2,
            _ => SurfDim::D3,
        };
        let clamp = match t.clamp {
            Some(Clamp::Zero) => SurfClamp::Ign,
            Some(Clamp::Clamp) => SurfClamp::Clamp,
            _ => SurfClamp::Trap,
        };
        let (Some(Operand::Texture { image, parts, .. }), Some(data)) = (i.operands.first(), i.operands.get(1)) else {
            return self.error(i.span, "malformed surface reduction");
        };
        let handle = self.tex_handle(image)?;
        let coords = self.tex_coords(parts.first().unwrap_or(data))?;
        let n = match dim.coords() {
            3 => 4,
            k => k,
        };
        let ra = self.tex_join(coords.get(..usize::from(dim.coords())).unwrap_or(&coords), n);
        let v = if ty == SurfRedType::U64 {
            let (lo, hi) = self.tex_src64(data)?;
            self.tex_join(&[lo, hi], 2)
        } else {
            let s = self.src32(data)?;
            self.in_reg(s)
        };
        let last = match handle {
            Handle::Bound(index) => Src::imm(index),
            Handle::Bindless(h) => Src::reg(h),
        };
        self.emit(Instr::new(Op::Sured { dim, clamp, red, ty, ba: !t.formatted }, vec![], vec![ra, v, last]));
        Ok(())
    }
}
