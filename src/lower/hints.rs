//! `prefetch{.global,.local}.L1/.L2` and `prefetchu.L1` (PTX ISA 9.7.9.15) as ptxas 11.8
//! lowers them for sm_50: `prefetch.global.L1 [a+64]` → `CCTL.E.PF1 [R2+0x40]`,
//! `prefetch.global.L2` → `CCTL.E.PF2`, `prefetch.local.L1 [a]` → `CCTLL.PF1 [Ra]` (32-bit
//! local address), `prefetchu.L1` → `CCTL.E.PF1`, generic `prefetch.L2 [a]` → `CCTL.E.PF2
//! [Ra]` (no window test). A prefetch has no architectural effect.

use super::addr::Address;
use super::ctx::{LResult, Lowerer};
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
        let (base, off) = if local {
            self.window_addr(&addr, at)?
        } else {
            let Address::Reg { reg, offset, .. } = addr else {
                return self.error(at, "a global or generic prefetch needs a register address");
            };
            self.global_addr(reg, offset, at)?
        };
        self.emit(Instr::new(Op::Cctl { local, level }, vec![], vec![Src::addr(base, off)]));
        Ok(())
    }
}
