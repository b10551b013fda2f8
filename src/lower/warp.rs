//! Warp-level instructions: `shfl{.sync}` (PTX ISA 9.7.8.6), `vote{.sync}` (9.7.13.8) and
//! `activemask` (9.7.13.12), as ptxas 11.8 lowers them for sm_50 (`sass::sync`):
//!
//! * `shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}` → `SHFL.MODE Pd, Rd, Ra, b, c`
//!   with `PT` when `p` is absent; `b` and `c` stay immediates (`SHFL.DOWN PT, R3, R2,
//!   0x10, 0x1f`; `SHFL.UP P4, R21, R12, R18, RZ`). The membermask is dropped: ptxas emits
//!   the same SHFL for `shfl.sync` with `-1` and with a register mask (on sm_6x and below
//!   every thread of membermask must execute the shfl in convergence, PTX ISA 9.7.8.6).
//! * `vote.all/.any/.uni.pred d, {!}a` → `VOTE.ALL/.ANY/.EQ Pd, Pa`; `vote.ballot.b32 d,
//!   {!}a` → `VOTE.ANY Rd, PT, Pa`; `activemask.b32 d` → `VOTE.ANY Rd, PT, PT`.
//! * `vote.sync` with the immediate mask `-1` is the plain vote. With another mask ptxas
//!   works on ballots: `vote.sync.ballot` → `VOTE.ANY Rd, PT, Pa; LOP.AND Rd, Rd, mask`;
//!   `.all` compares `ballot & mask` with `activemask & mask` (`ISET.EQ.U32`), `.any`
//!   tests `ballot & mask != 0`, `.uni` accepts both `== 0` and `== activemask & mask`.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::ctx::{LResult, Lowerer};
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, PT, Src, SrcKind};
use crate::sass::op::{BoolOp, Cmp, LogicOp, Op, ShflMode, VoteMode};

impl Lowerer<'_> {
    /// Lowers `shfl`, `vote` or `activemask` (`name`).
    pub fn lower_warp(&mut self, i: &Instruction, name: &str) -> LResult<()> {
        let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
        let has = |w: &str| words.contains(&w);
        let sync = has(".sync");
        let need = |this: &mut Self, n: usize| -> LResult<()> {
            if i.operands.len() != n {
                return this.error(i.span, format!("`{name}` takes {n} operands here"));
            }
            Ok(())
        };
        match name {
            "shfl" => {
                need(self, if sync { 5 } else { 4 })?;
                let mode = [
                    (".up", ShflMode::Up),
                    (".down", ShflMode::Down),
                    (".bfly", ShflMode::Bfly),
                    (".idx", ShflMode::Idx),
                ]
                .into_iter()
                .find(|(w, _)| has(w))
                .map(|(_, m)| m);
                let Some(mode) = mode else {
                    return self.error(i.opcode.span, "`shfl` needs `.up`, `.down`, `.bfly` or `.idx`");
                };
                if !has(".b32") {
                    return self.error(i.opcode.span, "`shfl` is `.b32` only (PTX ISA 9.7.8.6)");
                }
                let (d, p) = match self.operand(i, 0)? {
                    Operand::PredPair(d, p, _) => (self.ptx_reg(d)?, Some(self.ptx_reg(p)?)),
                    d => (self.dst_reg(d)?, None),
                };
                let a = self.val_of(i, 1, ScalarType::B32)?;
                let a = self.in_reg(a.lo);
                let lane = |this: &mut Self, k: usize, mask: u32| -> LResult<Src> {
                    let v = this.val_of(i, k, ScalarType::B32)?;
                    Ok(match v.lo.kind {
                        SrcKind::Imm(x) => Src::imm(x & mask),
                        _ => this.in_reg(v.lo),
                    })
                };
                let b = lane(self, 2, 31)?;
                let c = lane(self, 3, 0x1fff)?;
                if sync {
                    // Evaluated for its diagnostics only (dropped, see the module docs).
                    self.val_of(i, 4, ScalarType::B32)?;
                }
                let t = self.tmp(1);
                let pd = p.map_or(PT, |p| p.reg);
                self.emit(Instr::new(Op::Shfl(mode), vec![Dst::Pred(pd), Dst::reg(t, 1)], vec![a, b, c]));
                self.write_ptx(d, Src::r32(t), ScalarType::B32)
            }
            "vote" => {
                need(self, if sync { 3 } else { 2 })?;
                let mode = [(".all", 0), (".any", 1), (".uni", 2), (".ballot", 3)].into_iter().find(|(w, _)| has(w));
                let Some((_, mode)) = mode else {
                    return self.error(i.opcode.span, "`vote` needs `.all`, `.any`, `.uni` or `.ballot`");
                };
                let a = self.pred_of(i, 1)?;
                let mask = if sync {
                    let m = self.val_of(i, 2, ScalarType::B32)?;
                    match m.lo.kind {
                        SrcKind::Imm(u32::MAX) => None,
                        _ => Some(self.in_reg(m.lo)),
                    }
                } else {
                    None
                };
                let d = self.dst_of(i, 0)?;
                if mode == 3 {
                    let t = self.tmp(1);
                    self.emit(Instr::new(Op::Vote(VoteMode::Any), vec![Dst::reg(t, 1), Dst::Pred(PT)], vec![a]));
                    let r = match mask {
                        Some(m) => self.emit1(Op::Lop(LogicOp::And), vec![Src::r32(t), m]),
                        None => Src::r32(t),
                    };
                    return self.write_ptx(d, r, ScalarType::B32);
                }
                let Some(m) = mask else {
                    // `.ballot` (3) returned above.
                    let vm = match mode {
                        0 => VoteMode::All,
                        1 => VoteMode::Any,
                        _ => VoteMode::Eq,
                    };
                    self.emit(Instr::new(Op::Vote(vm), vec![Dst::Pred(d.reg)], vec![a]));
                    return Ok(());
                };
                // Ballot forms for a membermask other than -1.
                let ballot = self.tmp(1);
                self.emit(Instr::new(Op::Vote(VoteMode::Any), vec![Dst::reg(ballot, 1), Dst::Pred(PT)], vec![a]));
                let act = self.tmp(1);
                self.emit(Instr::new(Op::Vote(VoteMode::Any), vec![Dst::reg(act, 1), Dst::Pred(PT)], vec![Src::pt()]));
                let bm = self.emit1(Op::Lop(LogicOp::And), vec![Src::r32(ballot), m]);
                let am = self.emit1(Op::Lop(LogicOp::And), vec![Src::r32(act), m]);
                let cmp = |c: Cmp| Op::Isetp { cmp: c, u32: true, x: false, bop: BoolOp::And };
                let p = match mode {
                    0 => self.isetp(cmp(Cmp::Eq), bm, am, Src::pt()),
                    1 => self.isetp(cmp(Cmp::Ne), bm, Src::rz(), Src::pt()),
                    _ => {
                        let all = self.isetp(cmp(Cmp::Eq), bm, am, Src::pt());
                        let q = Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::Or };
                        self.isetp(q, bm, Src::rz(), Src::pred(all, false))
                    }
                };
                // The predicate move of `mov.pred` (`lower::arith::alu`).
                self.emit(Instr::new(
                    Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And },
                    vec![Dst::Pred(d.reg), Dst::Pred(PT)],
                    vec![Src::pred(p, false), Src::pt(), Src::pt()],
                ));
                Ok(())
            }
            _ => {
                need(self, 1)?;
                let d = self.dst_of(i, 0)?;
                let t = self.tmp(1);
                self.emit(Instr::new(Op::Vote(VoteMode::Any), vec![Dst::reg(t, 1), Dst::Pred(PT)], vec![Src::pt()]));
                self.write_ptx(d, Src::r32(t), ScalarType::B32)
            }
        }
    }
}
