//! Barriers (PTX ISA 9.7.13.1): `bar{.sync}`/`barrier.sync`, `bar.arrive`, `bar.red`.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::ctx::{LResult, Lowerer, imm_bits32};
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::instr::BarOp;
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, RegRef, Src};
use crate::sass::op::{MembarLevel, Op};

impl Lowerer<'_> {
    /// Lowers `bar.sync` / `barrier.sync` (PTX ISA 9.7.13.1): `BAR.SYNC id{, count}`
    /// followed by `MEMBAR.CTA`, as ptxas emits for every occurrence (findings section 2);
    /// `bar.arrive id, count` → `BAR.ARV id, count; MEMBAR.CTA`; `bar.red` → `BAR.RED.op
    /// id{, count}, {!}P; MEMBAR.CTA; B2R.RESULT` (ptxas 11.8: `BAR.RED.POPC 0x0, P4;
    /// MEMBAR.CTA; B2R.RESULT R9`, `BAR.RED.AND 0x1, P4; MEMBAR.CTA; B2R.RESULT RZ, P2`).
    pub fn lower_bar(&mut self, i: &Instruction, op: BarOp) -> LResult<()> {
        if op == BarOp::WarpSync {
            // ptxas 11.8 emits no synchronization for `bar.warp.sync` on sm_50 (a `NOP` in
            // its place): the lanes of a warp execute together on SPA 5.0, reconverged by
            // the SIMT stack, and their memory accesses are issued in program order.
            return Ok(());
        }
        if op == BarOp::Red {
            return self.lower_bar_red(i);
        }
        let mut srcs = vec![];
        match i.operands.first() {
            Some(Operand::Imm(m)) => srcs.push(Src::imm(imm_bits32(m.value))),
            Some(o) => {
                let v = self.val(o, ScalarType::U32)?;
                srcs.push(self.in_reg(v.lo));
            }
            None => srcs.push(Src::imm(0)),
        }
        if let Some(o) = i.operands.get(1) {
            let v = self.val(o, ScalarType::U32)?;
            srcs.push(v.lo);
        }
        self.emit(Instr::new(Op::Bar { arrive: op == BarOp::Arrive }, vec![], srcs));
        self.emit(Instr::new(Op::Membar(MembarLevel::Cta), vec![], vec![]));
        Ok(())
    }

    /// `bar.red.popc.u32 d, a{, b}, {!}c` / `bar.red.{and,or}.pred p, a{, b}, {!}c`.
    fn lower_bar_red(&mut self, i: &Instruction) -> LResult<()> {
        use crate::sass::op::BarRedOp;
        let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
        let red = if words.contains(&".popc") {
            BarRedOp::Popc
        } else if words.contains(&".and") {
            BarRedOp::And
        } else if words.contains(&".or") {
            BarRedOp::Or
        } else {
            return self.error(i.opcode.span, "`bar.red` needs `.popc`, `.and` or `.or`");
        };
        let (d_op, a_op, b_op, c_op) = match i.operands.as_slice() {
            [d, a, c] => (d, a, None, c),
            [d, a, b, c] => (d, a, Some(b), c),
            _ => return self.error(i.span, "`bar.red` takes `d, a{, b}, {!}c`"),
        };
        let d = self.dst_reg(d_op)?;
        let mut srcs = vec![];
        match a_op {
            Operand::Imm(m) => srcs.push(Src::imm(imm_bits32(m.value))),
            o => {
                let v = self.val(o, ScalarType::U32)?;
                srcs.push(self.in_reg(v.lo));
            }
        }
        if let Some(b_op) = b_op {
            let v = self.val(b_op, ScalarType::U32)?;
            srcs.push(v.lo);
        }
        srcs.push(self.pred_src(c_op)?);
        self.emit(Instr::new(Op::BarRed(red), vec![], srcs));
        self.emit(Instr::new(Op::Membar(MembarLevel::Cta), vec![], vec![]));
        if red == BarRedOp::Popc {
            let t = self.tmp(1);
            self.emit(Instr::new(Op::B2r, vec![Dst::reg(t, 1)], vec![]));
            self.write_ptx(d, Src::r32(t), ScalarType::U32)
        } else {
            self.emit(Instr::new(Op::B2r, vec![Dst::Reg(RegRef::rz(1)), Dst::Pred(d.reg)], vec![]));
            Ok(())
        }
    }
}
