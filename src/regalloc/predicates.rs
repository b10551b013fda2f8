//! Predicate pressure: SPA 5.0 has seven predicate registers (P0..P6; P7 is PT). When
//! more predicate values are live at once, some are *demoted* before allocation: kept in
//! a general-purpose register as 0/1 right after their definition, and turned back into a
//! short-lived predicate just before each use (rematerialization). GPRs can then be
//! spilled like any other value.
//!
//! * after `p`'s definition: `SEL g, RZ, 0x1, !p` (`g = p ? 1 : 0`);
//! * before each reader of `p`: `ISETP.NE.AND q, PT, g, RZ, PT`, and the reader uses `q`.
//!
//! Neither instruction touches the condition code, so they may sit inside `.CC`/`.X`
//! chains. Predicates that are block parameters or edge arguments are not demoted (they
//! are rare: predicates merged at joins); if those alone exceed seven, allocation fails.

use super::Error;
use crate::ir::{BlockId, Function, VRegKind, for_each_def, for_each_use};
use crate::sass::instr::{Dst, Instr, PT, Reg, Src};
use crate::sass::op::{BoolOp, Cmp, Op};
use std::collections::{HashMap, HashSet};

/// Physical predicate registers available to values (P0..P6).
pub const PRED_REGS: usize = 7;

fn is_pred(f: &Function, v: u32) -> bool {
    f.vregs[v as usize] == VRegKind::Pred
}

/// Predicate values live at each instruction (before it executes), per block.
fn live_sets(f: &Function) -> HashMap<BlockId, Vec<Vec<u32>>> {
    let liveness = crate::ir::liveness(f);
    let mut out = HashMap::new();
    for &b in &f.layout {
        let mut live: HashSet<u32> = liveness.live_out(b).iter().copied().filter(|&v| is_pred(f, v)).collect();
        let mut at = vec![];
        for i in f.cfg[b].instrs.iter().rev() {
            // Live across the instruction: live after it, plus its predicate results
            // (which need a register at that point too).
            let mut here: Vec<u32> = live.iter().copied().collect();
            for_each_def(i, |v| {
                if is_pred(f, v) && !here.contains(&v) {
                    here.push(v);
                }
                live.remove(&v);
            });
            for_each_use(i, |v| {
                if is_pred(f, v) {
                    live.insert(v);
                    if !here.contains(&v) {
                        here.push(v);
                    }
                }
            });
            at.push(here);
        }
        at.reverse();
        out.insert(b, at);
    }
    out
}

/// Predicate values live across a call (live after it), in order of number.
fn live_across_calls(f: &Function) -> Vec<u32> {
    if !f.has_calls() {
        return vec![];
    }
    let liveness = crate::ir::liveness(f);
    let mut out: HashSet<u32> = HashSet::new();
    for &b in &f.layout {
        let mut live: HashSet<u32> = liveness.live_out(b).iter().copied().filter(|&v| is_pred(f, v)).collect();
        for i in f.cfg[b].instrs.iter().rev() {
            if matches!(i.op, Op::Call(_)) {
                out.extend(live.iter().copied());
            }
            for_each_def(i, |v| {
                live.remove(&v);
            });
            for_each_use(i, |v| {
                if is_pred(f, v) {
                    live.insert(v);
                }
            });
        }
    }
    let mut v: Vec<u32> = out.into_iter().collect();
    v.sort_unstable();
    v
}

/// Demotes predicates of the SSA function `f` that live across a call, and more until at
/// most [`PRED_REGS`] are live at any instruction. Returns how many were demoted; errors if the remaining ones (block
/// parameters and edge arguments, which are not demoted) still need more.
pub fn demote(f: &mut Function) -> Result<usize, Error> {
    let mut demoted = 0;
    let mut fixed: HashSet<u32> = HashSet::new();
    for &b in &f.layout {
        fixed.extend(f.cfg[b].params.iter().copied());
        for e in f.succ_edges(b) {
            fixed.extend(f.cfg[e].args.iter().copied());
        }
    }
    // Predicates live across a call: every predicate register is caller-saved.
    for v in live_across_calls(f) {
        if fixed.contains(&v) {
            return Err(Error::PredicatePressure);
        }
        let first_new = f.vregs.len() as u32;
        demote_one(f, v)?;
        fixed.insert(v);
        fixed.extend(first_new..f.vregs.len() as u32);
        demoted += 1;
    }
    loop {
        let live = live_sets(f);
        // Among points over the limit, count how often each demotable value is live.
        let mut score: HashMap<u32, usize> = HashMap::new();
        let mut over = false;
        for sets in live.values() {
            for here in sets {
                if here.len() > PRED_REGS {
                    over = true;
                    for v in here {
                        if !fixed.contains(v) {
                            *score.entry(*v).or_default() += 1;
                        }
                    }
                }
            }
        }
        if !over {
            return Ok(demoted);
        }
        let Some((&v, _)) = score.iter().max_by_key(|(v, n)| (**n, std::cmp::Reverse(**v))) else {
            return Err(Error::PredicatePressure);
        };
        let first_new = f.vregs.len() as u32;
        demote_one(f, v)?;
        // The value and the short-lived predicates that replace it are final.
        fixed.insert(v);
        fixed.extend(first_new..f.vregs.len() as u32);
        demoted += 1;
    }
}

/// Keeps predicate `v` in a GPR from its definition on (see the module documentation).
fn demote_one(f: &mut Function, v: u32) -> Result<(), Error> {
    let g = f.new_vreg(VRegKind::Gpr(1));
    let p = Reg::V(v);
    for b in f.layout.clone() {
        let mut k = 0;
        while k < f.cfg[b].instrs.len() {
            let i = f.cfg[b].instrs[k].clone();
            let origin = f.cfg[b].origins[k];
            let mut reads = false;
            for_each_use(&i, |u| reads |= u == v);
            let mut writes = false;
            for_each_def(&i, |d| writes |= d == v);
            if reads && !writes {
                let q = f.new_vreg(VRegKind::Pred);
                let remat = Instr::new(
                    Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And },
                    vec![Dst::Pred(q), Dst::Pred(PT)],
                    vec![Src::r32(g), Src::rz(), Src::pt()],
                );
                let ins = &mut f.cfg[b].instrs[k];
                if let Some(gd) = &mut ins.guard
                    && gd.pred == p
                {
                    gd.pred = q;
                }
                for s in ins.srcs.iter_mut() {
                    if let crate::sass::instr::SrcKind::Pred(x) = &mut s.kind
                        && *x == p
                    {
                        *x = q;
                    }
                }
                f.cfg[b].instrs.insert(k, remat);
                f.cfg[b].origins.insert(k, origin);
                k += 2;
                continue;
            }
            if writes {
                if reads || i.guard.is_some() {
                    // A conditional or self-reading definition keeps its old value in
                    // part: not demotable.
                    return Err(Error::PredicatePressure);
                }
                let save = Instr::new(Op::Sel, vec![Dst::reg(g, 1)], vec![Src::rz(), Src::imm(1), Src::pred(p, true)]);
                f.cfg[b].instrs.insert(k + 1, save);
                f.cfg[b].origins.insert(k + 1, origin);
                k += 2;
                continue;
            }
            k += 1;
        }
    }
    Ok(())
}
