//! The reconvergence checker: verifies, on a function's IR after
//! [`crate::lower::cfg::reconverge::insert`], the invariants `docs/reconvergence.md` states.
//! Run on every compiled function in debug builds (the test suite) and with `--verify`,
//! like the hazard checker; a violation is an internal error.
//!
//! It walks the CFG with an abstract SIMT stack: the SSY/PBK entries (kind, target) on
//! the reconvergence stack at each block, and per entry (and below all of them) the
//! divergent branches whose threads may still be apart there.
//!
//! 1. **Balance.** Every path into a block brings the same stack. `SYNC` needs an SSY
//!    entry on top whose target is the block it resumes at; `BRK` needs a PBK entry (the
//!    nearest one) with its target. Both pop it (`BRK` also everything above). So an
//!    entry pushed in a loop is popped before the next iteration, and every path from a
//!    push either pops it at its target or exits.
//! 2. **Convergence before warp-synchronous instructions.** At `BAR`, `SHFL` or `VOTE`
//!    ([`super::graph::warp_synchronous`]) no divergent branch may be pending that the
//!    instruction post-dominates (modulo quiet exits when the branch's paths never all
//!    meet, [`super::plan::Joins::reaches_all`]): all its threads that do not just exit
//!    come there, so they must have reconverged before, and the ones that exit must be
//!    gone (PTX orders their memory accesses before a barrier's release). Nor may a
//!    branch be pending in a loop the instruction comes after: the threads still in the
//!    loop come there too (a barrier on a loop's exit path, which ptxas 11.8 runs with
//!    part of the warp in `tests/programs/while_true.ptx`). A branch around the
//!    instruction (it runs in one arm), or one letting threads leave a loop that holds
//!    the instruction (they cannot be back for its next iteration), is not a violation:
//!    the program itself runs it diverged, which PTX leaves undefined for a barrier on
//!    sm_6x and below and defines for `shfl`/`vote` as the threads that execute it.
//!
//! A divergent branch is a guarded `BRA`, `SYNC` or `BRK` whose predicate may differ
//! between threads ([`crate::lower::cfg::reconverge::uniform_values`]).
//!
//! A state or table entry missing where the walk put one is reported like a violation
//! (an internal error), never a panic.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::graph::{label_of, reverse_post_order, warp_synchronous};
use super::plan::{Joins, Kind};
use crate::ir::{BlockId, EdgeKind, Function};
use crate::sass::instr::Reg;
use crate::sass::op::Op;
use petgraph::visit::NodeIndexable;
use std::collections::HashMap;

/// The abstract state at a block's start: stack entries (kind, target), bottom first,
/// and the pending divergent branches below all entries (`pending[0]`) and in each
/// entry's region (`pending[k + 1]`).
#[derive(Clone, Debug, PartialEq)]
struct State {
    stack: Vec<(Kind, BlockId)>,
    pending: Vec<Vec<BlockId>>,
}

impl State {
    fn add_pending(&mut self, b: BlockId) {
        // `pending` always holds the base level (`pending[0]`).
        if let Some(top) = self.pending.last_mut()
            && !top.contains(&b)
        {
            top.push(b);
            top.sort();
        }
    }
}

/// Checks `f`; returns a description of the first violation.
pub fn check(f: &Function) -> Result<(), String> {
    let (uni, _) = crate::lower::cfg::reconverge::uniform_values(f);
    let joins = Joins::new(f);
    let name = |b: BlockId| f.block_label(b.index() as u32);
    let divergent_guard = |b: BlockId, g: Option<crate::sass::instr::Guard>| -> bool {
        match g {
            Some(g) => !f.cfg[b].uni && matches!(g.pred, Reg::V(v) if uni.get(v as usize) != Some(&true)),
            None => false,
        }
    };
    let rpo = reverse_post_order(f);
    let mut rpo_pos = vec![usize::MAX; f.cfg.node_bound()];
    for (i, b) in rpo.iter().enumerate() {
        if let Some(p) = rpo_pos.get_mut(b.index()) {
            *p = i;
        }
    }
    // The worklist key of a block: its reverse post-order position (unreachable last).
    let key = |b: BlockId| (rpo_pos.get(b.index()).copied().unwrap_or(usize::MAX), b);
    // Blocks reachable from each loop's header (computed when needed).
    let mut after_loop: HashMap<usize, std::collections::HashSet<BlockId>> = HashMap::new();
    let mut states: HashMap<BlockId, State> = HashMap::new();
    states.insert(f.entry, State { stack: vec![], pending: vec![vec![]] });
    let mut work: std::collections::BTreeSet<(usize, BlockId)> = [key(f.entry)].into();
    while let Some((_, b)) = work.pop_first() {
        let Some(mut s) = states.get(&b).cloned() else {
            return Err(format!("`{}`: internal: {} was queued without a state", f.name, name(b)));
        };
        let blk = &f.cfg[b];
        let last_k = blk.instrs.len().checked_sub(1);
        // Successor states: (target, state).
        let mut out: Vec<(BlockId, State)> = vec![];
        for (k, i) in blk.instrs.iter().enumerate() {
            let last = Some(k) == last_k;
            let here = || format!("`{}` in {} of `{}`", f.instr_text(i), name(b), f.name);
            match i.op {
                Op::Ssy | Op::Pbk => {
                    let t = label_of(i).ok_or_else(|| format!("{} has no target", here()))?;
                    s.stack.push((if i.op == Op::Ssy { Kind::Ssy } else { Kind::Pbk }, t));
                    s.pending.push(vec![]);
                }
                op if warp_synchronous(op) => {
                    // A pending branch that this block post-dominates, or one in a loop this
                    // block is after: the threads still in the loop come here too.
                    let mut needs = |d: BlockId| {
                        // A branch that lets threads leave a loop holding the instruction
                        // (a per-thread trip count, a `return` from the loop): the threads
                        // that left cannot come back before the next iteration's barrier,
                        // whatever the compiler does; the program itself runs it diverged
                        // (ptxas 11.8 compiles such loops; tests/reconverge_shapes.rs).
                        let encl = joins.forest.enclosing(d);
                        if encl
                            .iter()
                            .filter_map(|l| joins.forest.loops.get(*l))
                            .any(|lp| lp.body.contains(&b) && joins.leaves(f, d, &lp.body))
                        {
                            return false;
                        }
                        joins.reaches_all(b, d)
                            || joins.forest.enclosing(d).into_iter().any(|l| {
                                !joins.forest.contains(l, b)
                                    && after_loop
                                        .entry(l)
                                        .or_insert_with(|| {
                                            let h = joins.forest.loops.get(l).map(|lp| lp.header);
                                            super::graph::reach(f, h.as_slice(), |_| false).into_iter().collect()
                                        })
                                        .contains(&b)
                            })
                    };
                    for level in &s.pending {
                        if let Some(d) = level.iter().copied().find(|d| needs(*d)) {
                            return Err(format!(
                                "{} runs before the threads of the divergent branch at the end of {} reconverge",
                                here(),
                                name(d)
                            ));
                        }
                    }
                }
                Op::Sync | Op::Brk => {
                    if !last {
                        return Err(format!("{} is not the block's terminator", here()));
                    }
                    let edges = f.succ_edges(b);
                    let taken = edges.iter().find(|e| f.cfg[**e].kind == EdgeKind::Taken).copied();
                    let t = taken.and_then(|e| f.cfg.edge_endpoints(e)).map(|(_, t)| t).ok_or_else(here)?;
                    let at = if i.op == Op::Sync {
                        match s.stack.split_last() {
                            Some(((Kind::Ssy, j), below)) if *j == t => below.len(),
                            top => {
                                let top = top.map(|(e, _)| e);
                                return Err(format!(
                                    "{} resumes at {} but the top of the stack is {top:?}",
                                    here(),
                                    name(t)
                                ));
                            }
                        }
                    } else {
                        match s.stack.iter().rposition(|(k, _)| *k == Kind::Pbk) {
                            Some(at) if s.stack.get(at).is_some_and(|(_, j)| *j == t) => at,
                            at => {
                                return Err(format!(
                                    "{} resumes at {} but the nearest PBK entry is {:?}",
                                    here(),
                                    name(t),
                                    at.and_then(|a| s.stack.get(a))
                                ));
                            }
                        }
                    };
                    // `pending` has one level more than `stack`: the levels up to `at`'s.
                    let (Some(stack), Some(pending)) = (s.stack.get(..at), s.pending.get(..=at)) else {
                        return Err(format!("{}: internal: stack entry {at} out of {:?}", here(), s.stack));
                    };
                    let popped = State { stack: stack.to_vec(), pending: pending.to_vec() };
                    out.push((t, popped));
                    if i.guard.is_some() {
                        let mut rest = s.clone();
                        if divergent_guard(b, i.guard) {
                            rest.add_pending(b);
                        }
                        for e in &edges {
                            if f.cfg[*e].kind == EdgeKind::Fallthrough
                                && let Some((_, t)) = f.cfg.edge_endpoints(*e)
                            {
                                out.push((t, rest.clone()));
                            }
                        }
                    }
                }
                Op::Bra if last => {
                    let mut next = s.clone();
                    if divergent_guard(b, i.guard) {
                        next.add_pending(b);
                    }
                    for t in f.succs(b) {
                        out.push((t, next.clone()));
                    }
                }
                _ => {}
            }
        }
        for (t, st) in out {
            match states.get_mut(&t) {
                None => {
                    states.insert(t, st);
                    work.insert(key(t));
                }
                Some(old) => {
                    if old.stack != st.stack {
                        return Err(format!(
                            "`{}`: the reconvergence stack differs between paths into {}: {:?} and {:?}",
                            f.name,
                            name(t),
                            old.stack.iter().map(|(k, j)| (*k, name(*j))).collect::<Vec<_>>(),
                            st.stack.iter().map(|(k, j)| (*k, name(*j))).collect::<Vec<_>>()
                        ));
                    }
                    let mut grew = false;
                    for (lo, ln) in old.pending.iter_mut().zip(&st.pending) {
                        for d in ln {
                            if !lo.contains(d) {
                                lo.push(*d);
                                lo.sort();
                                grew = true;
                            }
                        }
                    }
                    if grew {
                        work.insert(key(t));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Invariant 1 (balance) on scheduled code, after linearization and the branch peepholes:
/// from the first instruction, every path into an instruction brings the same stack of
/// (kind, target index); `SYNC` resumes at the target of the SSY entry on top, `BRK` at
/// that of the nearest PBK entry; a guarded one, `@P BRA` and `@P EXIT` also fall
/// through. Run by the driver with the IR check; catches what the block-level check
/// cannot see (a fall-through lost in linearization).
pub fn check_code(f: &crate::sass::program::SassFunction) -> Result<(), String> {
    let code = &f.code;
    // One state per instruction and one past the end (a `Vec`'s length is below
    // `isize::MAX`: `+ 1` saturates never).
    let mut states: Vec<Option<Vec<(Kind, usize)>>> = vec![None; code.len().saturating_add(1)];
    let mut work: Vec<usize> = vec![0];
    if let Some(first) = states.first_mut() {
        *first = Some(vec![]);
    }
    while let Some(k) = work.pop() {
        let Some(s) = states.get(k).cloned().flatten() else { continue };
        let Some(sc) = code.get(k) else {
            return Err(format!("`{}`: control runs past the last instruction", f.name));
        };
        // The next instruction (`k < code.len()`, so at most the past-the-end index).
        let next = k.saturating_add(1);
        let i = &sc.instr;
        let target = || label_of(i).map(|t| t.index());
        let here = || format!("`{}` #{k} `{}`", f.name, i.op.name());
        let guarded = i.guard.is_some();
        let mut out: Vec<(usize, Vec<(Kind, usize)>)> = vec![];
        match i.op {
            Op::Ssy | Op::Pbk => {
                let t = target().ok_or_else(|| format!("{} has no target", here()))?;
                let mut n = s.clone();
                n.push((if i.op == Op::Ssy { Kind::Ssy } else { Kind::Pbk }, t));
                out.push((next, n));
            }
            Op::Bra => {
                let t = target().ok_or_else(|| format!("{} has no target", here()))?;
                out.push((t, s.clone()));
                if guarded {
                    out.push((next, s.clone()));
                }
            }
            Op::Sync | Op::Brk => {
                let at = if i.op == Op::Sync {
                    match s.split_last() {
                        Some(((Kind::Ssy, _), below)) => below.len(),
                        top => {
                            let top = top.map(|(e, _)| e);
                            return Err(format!("{} with {top:?} on top of the stack", here()));
                        }
                    }
                } else {
                    s.iter().rposition(|(k, _)| *k == Kind::Pbk).ok_or_else(|| format!("{} without PBK", here()))?
                };
                let (Some(&(_, t)), Some(below)) = (s.get(at), s.get(..at)) else {
                    return Err(format!("{}: internal: stack entry {at} out of {s:?}", here()));
                };
                out.push((t, below.to_vec()));
                if guarded {
                    out.push((next, s.clone()));
                }
            }
            Op::Exit | Op::Ret => {
                if guarded {
                    out.push((next, s.clone()));
                }
            }
            _ => out.push((next, s.clone())),
        }
        for (t, st) in out {
            let Some(state) = states.get_mut(t) else {
                return Err(format!("{}: branch to #{t}, past the end of the code", here()));
            };
            match state {
                None => {
                    *state = Some(st);
                    work.push(t);
                }
                Some(old) if *old != st => {
                    return Err(format!(
                        "`{}`: the reconvergence stack differs between paths into #{t}: {old:?} and {st:?}",
                        f.name
                    ));
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}
