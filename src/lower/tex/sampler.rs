//! Independent texturing mode (`.target ..., texmode_independent`): `tex`/`tld4` `[t, s,
//! {c}]` with a separate sampler `s`, lowered as ptxas 11.8 `-arch=sm_50 -O3` does
//! (`tests/data/textures/probe_independent.ptx`, docs/textures.md §1.14):
//!
//! * a `.global .texref` with a `.global .samplerref`: the **bound** forms with one
//!   constant-bank-0 word per (texture, sampler) **pair** the kernel uses, in order of first
//!   use after the parameters (the driver writes the combined header index there: ptxas
//!   gives the word two relocations, `R_CUDA_TEX_HEADER_INDEX` and
//!   `R_CUDA_SAMP_HEADER_INDEX`, at the same offset); kernel `globals2` of the probe uses
//!   `(gt, gs2)` then `(gt, gs)`: `TEXS.T ... 0x53`, `TEXS.P ... 0x54`;
//! * `.u64` handles in registers: the **bindless** form with the handle `(s << 20) | (t &
//!   0xfffff)` (ptxas: `SHL R0, Rs, 0x14; BFI R0, Rt, 0x1400, R0; TEX.B.P R4, R6, R0, 0x0,
//!   2D, 0xf`, kernel `regs`): the texture header index in the low 20 bits, the sampler
//!   index in the high 12.
//!
//! A reference mixed with a register (a `.texref` with a `.u64` sampler or the reverse) is
//! rejected at the operand (not probed).

use super::Handle;
use crate::diag::Diag;
use crate::ir::ParamSlot;
use crate::lower::PARAM_BASE;
use crate::lower::ctx::{LResult, Lowerer};
use crate::ptx::ast::{FuncKind, Ident, Instruction, Operand};
use crate::sass::instr::{Dst, RegRef, Src};
use crate::sass::op::Op;

impl Lowerer<'_> {
    /// The texture of a fetch's operand `[image, parts..]`: [`Self::tex_handle`] of `image`
    /// without a sampler (`parts` = the coordinates), else the pair's word or combined
    /// bindless handle (module docs).
    pub(super) fn tex_sampled(&mut self, i: &Instruction, image: &Ident, parts: &[Operand]) -> LResult<Handle> {
        if parts.len() == 2 && !self.layout.independent {
            // ptxas 11.8 takes `tex.2d [%rd1, %rd2, {x, y}]` in unified mode and emits
            // `TEX.AOFFI.P R0, R4, R6, 0x50, 2D, 0x1` (docs/textures.md §1.14), not
            // understood.
            return self.tex_unsupported(
                i,
                "a second texture operand in unified texturing mode (a sampler needs `.target ..., texmode_independent`)",
                "ptxas 11.8 emits `TEX.AOFFI` for it, not understood (docs/textures.md §1.14)",
            );
        }
        let [Operand::Name { name: s, component: None, negated: false, .. }, _] = parts else {
            if let [first, _] = parts {
                return self.error(first.span(), "the sampler must be a `.samplerref` or a `.u64` register");
            }
            return self.tex_handle(image);
        };
        let s_key = self.scoped(&s.name);
        let s_is_ref = self.lookup_reg_type(&s_key).is_none() && self.layout.samplers.contains(&s.name);
        let t_key = self.scoped(&image.name);
        let t_is_ref = self.lookup_reg_type(&t_key).is_none() && self.layout.refs.get(&image.name) == Some(&false);
        match (t_is_ref, s_is_ref) {
            (true, true) => self.tex_pair_word(image, s).map(Handle::Bound),
            (false, false) => {
                let t = self.tex_low_word(image)?;
                let sw = self.tex_low_word(s)?;
                // ptxas 11.8 (probe_independent.ptx kernel regs): `SHL R0, Rs, 0x14` then
                // `BFI R0, Rt, 0x1400, R0` (20 bits of the texture at bit 0).
                let sh = self.tmp(1);
                self.op(Op::Shl, Dst::reg(sh, 1), vec![sw, Src::imm(0x14)]);
                let h = self.tmp(1);
                self.op(Op::Bfi, Dst::reg(h, 1), vec![t, Src::imm(0x1400), Src::r32(sh)]);
                Ok(Handle::Bindless(RegRef { reg: h, comp: 0, n: 1 }))
            }
            _ => self.fail(
                Diag::error(
                    s.span,
                    "not supported yet: a texture reference with a sampler in a register, or the reverse",
                )
                .label("mixed reference and register")
                .note("lowered: a `.texref` with a `.samplerref`, or both `.u64` registers (docs/textures.md §1.14)"),
            ),
        }
    }

    /// The low 32 bits of the `.u64` handle register `r`.
    fn tex_low_word(&mut self, r: &Ident) -> LResult<Src> {
        let p = self.ptx_reg(r)?;
        if p.ty.bits() != 64 {
            return self.fail(
                Diag::error(r.span, format!("the texture or sampler `{}` must be a `.u64` handle", r.name))
                    .label(format!("a {}-bit register", p.ty.bits()))
                    .note("PTX ISA 9.7.9.3: in independent mode `a` and `b` are `.texref`/`.samplerref` or `.u64` registers"),
            );
        }
        Ok(Src::reg(RegRef { reg: p.reg, comp: 0, n: 1 }))
    }

    /// The constant-bank-0 word index of the pair (`t`, `s`) in this kernel: one word per
    /// pair, in order of first use, after the parameters (module docs), recorded as a
    /// [`ParamSlot`] of type `.texref` named `t,s` (the executors find the texture and the
    /// sampler by these names).
    fn tex_pair_word(&mut self, t: &Ident, s: &Ident) -> LResult<u32> {
        if self.f.kind != FuncKind::Entry {
            return self.fail(
                Diag::error(t.span, format!("not supported yet: the `.texref` `{}` in a device function", t.name))
                    .label("a `.texref` in a `.func`")
                    .note("ptx2sass lowers references in kernels only (docs/textures.md §1.1)"),
            );
        }
        let name = format!("{},{}", t.name, s.name);
        if let Some(p) = self.f.params.iter().find(|p| p.name == name && p.ty == ".texref") {
            return Ok(p.offset / 4);
        }
        let end = self.f.params.iter().map(|p| p.offset.saturating_add(p.size)).fold(PARAM_BASE, u32::max);
        let offset = end.div_ceil(4).saturating_mul(4);
        self.f.params.push(ParamSlot { name, ty: ".texref".to_string(), offset, size: 4 });
        Ok(offset / 4)
    }
}
