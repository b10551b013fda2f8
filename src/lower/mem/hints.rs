//! Instructions without a result that only hint or order: `fence` (below) and
//! `prefetch{.global,.local}.L1/.L2` and `prefetchu.L1` (PTX ISA 9.7.9.15) as ptxas 11.8
//! lowers them for sm_50: `prefetch.global.L1 [a+64]` → `CCTL.E.PF1 [R2+0x40]`,
//! `prefetch.global.L2` → `CCTL.E.PF2`, `prefetch.local.L1 [a]` → `CCTLL.PF1 [Ra]` (32-bit
//! local address), `prefetchu.L1` → `CCTL.E.PF1`, generic `prefetch.L2 [a]` → `CCTL.E.PF2
//! [Ra]` (no window test). A prefetch has no architectural effect.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::ctx::{LResult, Lowerer};
use crate::lower::mem::addr::Address;
use crate::ptx::ast::Instruction;
use crate::sass::instr::{Instr, Src};
use crate::sass::op::Op;

impl Lowerer<'_> {
    /// Lowers `prefetch` / `prefetchu`.
    pub fn lower_prefetch(&mut self, i: &Instruction) -> LResult<()> {
        let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
        let level = if words.contains(&".L1") {
            1
        } else if words.contains(&".L2") {
            2
        } else {
            return self.error(i.opcode.span, format!("`{}` needs `.L1` or `.L2`", i.opcode.name));
        };
        let local = words.contains(&".local");
        if let Some(w) = words.iter().find(|w| !matches!(**w, ".L1" | ".L2" | ".global" | ".local")) {
            return self.error(i.opcode.span, format!("`{}{w}` is not supported by ptx2sass", i.opcode.name));
        }
        let Some(op) = i.operands.first() else {
            return self.error(i.span, "`prefetch` takes an address");
        };
        let at = op.span();
        let addr = self.address(op)?;
        let addr = self.global_var_as_reg(addr);
        let (base, off) = if local {
            self.window_addr(&addr, at)?
        } else {
            let Address::Reg { reg, offset, .. } = addr else {
                return self.error(at, "a global or generic prefetch needs a register address");
            };
            self.global_addr(reg, offset, at)?
        };
        // The CCTL offset counts 4-byte words (bits 22..43; CCTL's unsigned, CCTLL's signed:
        // nvdisasm 11.8), so the byte offset is rounded down to a multiple of 4 as ptxas
        // 11.8 does (`prefetch.global.L2 [%rd+6]` → `CCTL.E.PF2 [R+0x4]`). CCTL cannot hold
        // a negative offset (ptxas adds it to the address first); a prefetch has no
        // architectural effect, so such a prefetch is dropped.
        let off = off & !3;
        if !local && off < 0 {
            return Ok(());
        }
        self.emit(Instr::new(Op::Cctl { local, level }, vec![], vec![Src::addr(base, off)]));
        Ok(())
    }
}

impl Lowerer<'_> {
    /// Lowers `fence{.sc,.acq_rel}.{cta,gpu,sys}` (PTX ISA 9.7.13.4) to the `MEMBAR` of its
    /// scope, as ptxas 11.8 emits for `membar.cta/.gl/.sys` (`MEMBAR.CTA`,
    /// `MEMBAR.GL.IVALLD`, `MEMBAR.SYS.IVALLD`). ptxas itself rejects `fence` below sm_70
    /// ("Feature 'fence instruction' requires .target sm_70 or higher"), so this is an
    /// emulation, reported like the other emulated forms (an error with
    /// `--deny-emulation`). On SPA 5.0 a MEMBAR orders all earlier memory accesses of the
    /// thread before all later ones at its level, which is at least what `.sc` and
    /// `.acq_rel` fences need.
    pub fn lower_fence(&mut self, i: &Instruction) -> LResult<()> {
        use crate::sass::op::MembarLevel;
        let mut level = None;
        for m in &i.mods {
            match m.text.as_str() {
                ".sc" | ".acq_rel" => {}
                ".cta" => level = Some(MembarLevel::Cta),
                ".gpu" => level = Some(MembarLevel::Gl),
                ".sys" => level = Some(MembarLevel::Sys),
                w => {
                    return self.error(m.span, format!("`fence{w}` is not supported by ptx2sass"));
                }
            }
        }
        let Some(level) = level else {
            return self.error(i.opcode.span, "`fence` needs a scope (`.cta`, `.gpu` or `.sys`)");
        };
        let span = i.opcode.span.to(i.mods.last().map_or(i.opcode.span, |m| m.span));
        let d =
            if self.deny_emulation { crate::diag::Diag::error(span, "") } else { crate::diag::Diag::warning(span, "") };
        self.diags.push(crate::diag::Diag {
            message: format!("`{}` emulated on SPA 5.0 with MEMBAR", crate::ptx::check::instr_text(i)),
            ..d.label("ptxas rejects `fence` for sm_50 (sm_70 and later)")
                .note("pass `--deny-emulation` to make this an error")
        });
        if self.deny_emulation {
            return Err(crate::lower::ctx::Failed);
        }
        self.emit(Instr::new(Op::Membar(level), vec![], vec![]));
        Ok(())
    }
}
