//! Texture and surface queries: `txq{.level}.{width,height,depth}` and
//! `suq.{width,height}` as `TXQ ... TEX_HEADER_DIMENSION` (docs/textures.md §1.7).

use super::Handle;
use crate::lower::ctx::{LResult, Lowerer};
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::texture::{Family, Lod, TexOp};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, Src};
use crate::sass::op::Op;

impl Lowerer<'_> {
    /// `txq{.level}.{width,height,depth}` and `suq.{width,height}`: `TXQ ...
    /// TEX_HEADER_DIMENSION` with the level register (`txq.level`) or a zero (ptxas 11.8
    /// probe_slice4.ptx kernels txql, txql_b, suq, suq_b: `TXQ.T R4, R7, ..., 0x50, 0x1`
    /// with `R7` the level; `MOV R4, RZ` then `TXQ.T R4, R4, ..., 0x50, 0x1` for suq).
    pub(super) fn lower_txq(&mut self, i: &Instruction, t: &TexOp) -> LResult<()> {
        if t.family == Family::Suq && t.query.as_deref() != Some(".width") && t.query.as_deref() != Some(".height") {
            return self.tex_unsupported(
                i,
                "a surface query other than width and height",
                "ptxas 11.8 reads it from the texture header table in global memory (`LDG.E.CI` at c[0x0][0xc0] + (handle & 0xfffff) * 32 + ...), not a TXQ; not modelled",
            );
        }
        let mask = match t.query.as_deref() {
            Some(".width") => 1,
            Some(".height") => 2,
            Some(".depth") => 4,
            _ => {
                return self.tex_unsupported(
                    i,
                    "a texture query other than width, height, depth",
                    "ptxas: other TXQ queries, not probed",
                );
            }
        };
        let (
            Some(Operand::Name { name: d, .. }),
            Some(Operand::Address { base: crate::ptx::ast::AddrBase::Name(image), .. }),
        ) = (i.operands.first(), i.operands.get(1))
        else {
            return self.error(i.span, "malformed texture query");
        };
        let handle = self.tex_handle(image)?;
        let level = match (t.lod, i.operands.get(2)) {
            (Lod::Level, Some(l)) => {
                let l = self.src32(l)?;
                Some(self.in_reg(l))
            }
            (Lod::Level, None) => return self.error(i.span, "`txq.level` without its level operand"),
            _ => None,
        };
        let r = self.tmp(1);
        match handle {
            Handle::Bound(index) => {
                let level = match level {
                    Some(l) => l,
                    None => self.tex_zero(),
                };
                self.emit(Instr::new(
                    Op::Txq { bindless: false, mask },
                    vec![Dst::reg(r, 1)],
                    vec![level, Src::imm(index)],
                ));
            }
            Handle::Bindless(h) => {
                // `TXQ.B R9, R6` with `MOV R7, RZ`: handle and level in a pair (ptxas 11.8,
                // probe_refs.ptx kernel reg_surf); `txq.level`: `MOV R7, level` (txql_b).
                let parts: Vec<Src> = std::iter::once(Src::reg(h)).chain(level).collect();
                let ra = self.tex_join(&parts, 2);
                self.emit(Instr::new(Op::Txq { bindless: true, mask }, vec![Dst::reg(r, 1)], vec![ra]));
            }
        }
        let p = self.ptx_reg(d)?;
        self.write_ptx(p, Src::r32(r), ScalarType::B32)
    }
}
