//! Three-input instruction formation: two dependent two-input logic operations become one
//! `LOP3.LUT`, two dependent integer additions one `IADD3`, and a comparison combined with
//! another predicate one `ISETP`/`FSETP` using its boolean operand.
//!
//! ```text
//! t = LOP.op1 a, b ; d = LOP.op2 t, c   ->   d = LOP3.LUT a, b, c, lut
//! t = IADD a, b    ; d = IADD t, c      ->   d = IADD3 a, b, c
//! t = ISETP.cmp.AND a, b, PT ; d = PSETP.op.AND t, q, PT   ->   d = ISETP.cmp.op a, b, q
//! ```
//!
//! The last is ptxas 11.8's form for `and.pred`/`or.pred`/`xor.pred` of a comparison
//! (`samples/sgemm_reg.ptx`: `ISETP.LT.AND P0, PT, R20, c[0x0][0x148], !P4`, no `PSETP`);
//! `ISETP`/`FSETP` compute `(a cmp b) op q` (the simulator's `put_preds`). It saves an
//! instruction and a 13-cycle predicate latency. Not for `ISETP.X`, which reads the
//! condition code where it stands.
//!
//! Justification: ptxas 11.8 `-O3 -arch=sm_50` builds these for `samples/sha256.ptx` (47
//! `IADD3` and 67 `LOP3.LUT` where we emitted 178 `IADD` and 288 `LOP`); both are
//! single-issue ALU instructions with the 6-cycle ALU latency (findings section 7), so a
//! fused pair saves an instruction and a dependent latency. `LOP3.LUT d, a, b, c, lut`
//! computes, per bit, `lut` indexed by `a·4 + b·2 + c` (nvdisasm; the simulator's `lop3`),
//! so the table of `f(a, b, c)` is `f(0xF0, 0xCC, 0xAA)`.
//!
//! Conditions: `t` is defined in the same block by an unguarded instruction, read exactly
//! once (by `d`), and neither instruction uses the condition code. The three inputs are
//! registers except at most one direct constant-bank word, which goes to the `b` slot (the
//! slot that takes one: ptxas's `LOP3.LUT R10, R8, c[0x2][0x28], R7, 0x48`); `IADD`
//! sources carry no negation. Runs on SSA form after the clean-up passes.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::{Function, for_each_use};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{BoolOp, Iadd3Mode, LogicOp, Op};
use std::collections::HashMap;

/// Fuses every eligible pair in `f`. Returns true if anything changed (the first
/// instruction of a fused pair is left for dead-code elimination).
pub fn run(f: &mut Function) -> bool {
    let uses = use_counts(f);
    let mut changed = false;
    for b in f.layout.clone() {
        let mut defs: HashMap<u32, usize> = HashMap::new();
        for k in 0..f.cfg[b].instrs.len() {
            let fused = {
                let blk = &f.cfg[b].instrs;
                let Some(i) = blk.get(k) else { break };
                let def = |r: Reg| {
                    let Reg::V(v) = r else { return None };
                    let j = blk.get(*defs.get(&v)?)?;
                    (uses.get(&v) == Some(&1) && j.guard.is_none()).then_some(j)
                };
                fuse(i, def).or_else(|| fuse_setp(i, def))
            };
            let Some(i) = f.cfg[b].instrs.get_mut(k) else { break };
            if let Some(ins) = fused {
                *i = ins;
                changed = true;
            }
            for d in &i.dsts {
                if let Some(v) = crate::ir::dst_vreg(d) {
                    defs.insert(v, k);
                }
            }
        }
    }
    changed
}

/// `d = PSETP.op.AND t, q, PT` (or `q, t`) with `t` a plain comparison `ISETP/FSETP.cmp.AND
/// t, PT, a, b, PT` read only here: `ISETP/FSETP.cmp.op d, PT, a, b, q` (see the module
/// docs).
fn fuse_setp<'a>(d: &Instr, def: impl Fn(Reg) -> Option<&'a Instr>) -> Option<Instr> {
    let Op::Psetp { bop0, bop1: BoolOp::And } = d.op else { return None };
    let &[s0, s1, s2] = d.srcs.as_slice() else { return None };
    if d.guard.is_some() || s2 != Src::pt() || d.dsts.get(1) != Some(&Dst::Pred(PT)) {
        return None;
    }
    for (this, other) in [(s0, s1), (s1, s0)] {
        let SrcKind::Pred(t @ Reg::V(_)) = this.kind else { continue };
        if this.mods != Default::default() {
            continue;
        }
        let Some(inner) = def(t) else { continue };
        let op = match inner.op {
            Op::Isetp { cmp, u32, x: false, bop: BoolOp::And } => Op::Isetp { cmp, u32, x: false, bop: bop0 },
            Op::Fsetp { cmp, ftz, bop: BoolOp::And } => Op::Fsetp { cmp, ftz, bop: bop0 },
            _ => continue,
        };
        let &[a, b, c] = inner.srcs.as_slice() else { continue };
        if c != Src::pt() || inner.dsts.get(1) != Some(&Dst::Pred(PT)) {
            continue;
        }
        let mut fused = inner.clone();
        fused.op = op;
        fused.dsts = d.dsts.clone();
        fused.srcs = vec![a, b, other];
        return Some(fused);
    }
    None
}

/// Counts one more read (at most one per operand of the function).
fn bump(n: &mut u32) {
    *n = n.saturating_add(1);
}

/// How many times each virtual register is read (instructions and edge arguments).
fn use_counts(f: &Function) -> HashMap<u32, u32> {
    let mut n: HashMap<u32, u32> = HashMap::new();
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            for_each_use(i, |v| bump(n.entry(v).or_default()));
        }
    }
    for e in f.cfg.edge_indices() {
        for a in &f.cfg[e].args {
            bump(n.entry(*a).or_default());
        }
    }
    n
}

/// A plain 32-bit register source (no modifier except, for logic, `~`).
fn reg32(s: &Src, allow_inv: bool) -> Option<RegRef> {
    let SrcKind::Reg(r) = s.kind else { return None };
    let m = s.mods;
    (r.n == 1 && !m.neg && !m.abs && !m.h1 && (allow_inv || !m.inv)).then_some(r)
}

/// A register or a direct 32-bit constant-bank word (`c[b][o]`): the operands a
/// three-input instruction can take. Returns whether it is a register.
fn operand(s: &Src, allow_inv: bool) -> Option<bool> {
    match s.kind {
        SrcKind::CBuf { index: None, n: 1, .. } => (s.mods == Default::default()).then_some(false),
        _ => reg32(s, allow_inv).map(|_| true),
    }
}

/// The slot (0 = a, 1 = b, 2 = c) of each of three operands, at most one of them not a
/// register (it goes to `b`); `None` if two are not registers.
fn slots(is_reg: [bool; 3]) -> Option<[usize; 3]> {
    match is_reg {
        [true, true, true] | [true, false, true] => Some([0, 1, 2]),
        [false, true, true] => Some([1, 0, 2]),
        [true, true, false] => Some([0, 2, 1]),
        _ => None,
    }
}

/// The register whose whole value source `s` reads, if it can be a fused intermediate.
fn whole(s: &Src, allow_inv: bool) -> Option<Reg> {
    reg32(s, allow_inv).filter(|r| r.comp == 0).map(|r| r.reg)
}

/// The value of a two-input logic operation on 8-bit truth-table columns.
fn logic(op: LogicOp, x: u8, y: u8) -> Option<u8> {
    Some(match op {
        LogicOp::And => x & y,
        LogicOp::Or => x | y,
        LogicOp::Xor => x ^ y,
        LogicOp::PassB => return None,
    })
}

/// The fused form of `d`, when one of its register sources is the single-use result of
/// an instruction `def` returns.
fn fuse<'a>(d: &Instr, def: impl Fn(Reg) -> Option<&'a Instr>) -> Option<Instr> {
    let [s0, s1] = d.srcs.as_slice() else { return None };
    if d.guard.is_some() || d.dsts.len() != 1 {
        return None;
    }
    let logic_op = matches!(d.op, Op::Lop(_));
    if !logic_op && d.op != (Op::Iadd { cc: false, x: false }) {
        return None;
    }
    for (k, (this, other)) in [(s0, s1), (s1, s0)].into_iter().enumerate() {
        let (Some(t), Some(other_reg)) = (whole(this, logic_op), operand(other, logic_op)) else { continue };
        let Some(inner) = def(t) else { continue };
        let [x, y] = inner.srcs.as_slice() else { continue };
        let same_kind = match (d.op, inner.op) {
            (Op::Lop(_), Op::Lop(op1)) => op1 != LogicOp::PassB,
            (Op::Iadd { .. }, op1) => op1 == (Op::Iadd { cc: false, x: false }),
            _ => false,
        };
        if !same_kind {
            continue;
        }
        let (Some(x_reg), Some(y_reg)) = (operand(x, logic_op), operand(y, logic_op)) else {
            continue;
        };
        let Some(order) = slots([x_reg, y_reg, other_reg]) else { continue };
        // Inputs x, y (of the inner instruction) and z (the other source) in their slots.
        let inputs = [x, y, other];
        let mut placed = inputs;
        for (input, &slot) in inputs.iter().zip(&order) {
            if let Some(p) = placed.get_mut(slot) {
                *p = input;
            }
        }
        let plain = |s: &Src| Src { mods: Default::default(), ..*s };
        let mut srcs: Vec<Src> = placed.iter().map(|s| plain(s)).collect();
        let op = match (d.op, inner.op) {
            (Op::Lop(op2), Op::Lop(op1)) => {
                // Each slot's truth-table column, inverted where the operand is `~x`.
                let cols = [0xF0u8, 0xCC, 0xAA];
                // `order` holds slots 0..=2 (`slots`).
                let col = |input: usize| {
                    let v = *cols.get(*order.get(input)?)?;
                    Some(if inputs.get(input)?.mods.inv { !v } else { v })
                };
                let tv = logic(op1, col(0)?, col(1)?)?;
                let tv = if this.mods.inv { !tv } else { tv };
                let lut = if k == 0 { logic(op2, tv, col(2)?)? } else { logic(op2, col(2)?, tv)? };
                srcs.push(Src::imm(lut as u32));
                Op::Lop3
            }
            _ => Op::Iadd3(Iadd3Mode::Plain),
        };
        return Some(Instr { op, srcs, ..d.clone() });
    }
    None
}
