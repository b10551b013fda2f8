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
        let top = self.pending.last_mut().expect("a base level");
        if !top.contains(&b) {
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
            Some(g) => !f.cfg[b].uni && matches!(g.pred, Reg::V(v) if !uni[v as usize]),
            None => false,
        }
    };
    let rpo = reverse_post_order(f);
    let mut rpo_pos = vec![usize::MAX; f.cfg.node_bound()];
    for (i, b) in rpo.iter().enumerate() {
        rpo_pos[b.index()] = i;
    }
    // Blocks reachable from each loop's header (computed when needed).
    let mut after_loop: HashMap<usize, std::collections::HashSet<BlockId>> = HashMap::new();
    let mut states: HashMap<BlockId, State> = HashMap::new();
    states.insert(f.entry, State { stack: vec![], pending: vec![vec![]] });
    let mut work: std::collections::BTreeSet<(usize, BlockId)> = [(rpo_pos[f.entry.index()], f.entry)].into();
    while let Some((_, b)) = work.pop_first() {
        let mut s = states[&b].clone();
        let blk = &f.cfg[b];
        let n = blk.instrs.len();
        // Successor states: (target, state).
        let mut out: Vec<(BlockId, State)> = vec![];
        for (k, i) in blk.instrs.iter().enumerate() {
            let last = k + 1 == n;
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
                            .any(|l| joins.forest.contains(*l, b) && joins.leaves(f, d, &joins.forest.loops[*l].body))
                        {
                            return false;
                        }
                        joins.reaches_all(b, d)
                            || joins.forest.enclosing(d).into_iter().any(|l| {
                                !joins.forest.contains(l, b)
                                    && after_loop
                                        .entry(l)
                                        .or_insert_with(|| {
                                            let h = joins.forest.loops[l].header;
                                            super::graph::reach(f, &[h], |_| false).into_iter().collect()
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
                    let t = taken.map(|e| f.cfg.edge_endpoints(e).expect("edge").1).ok_or_else(here)?;
                    let at = if i.op == Op::Sync {
                        match s.stack.last() {
                            Some((Kind::Ssy, j)) if *j == t => s.stack.len() - 1,
                            top => {
                                return Err(format!(
                                    "{} resumes at {} but the top of the stack is {top:?}",
                                    here(),
                                    name(t)
                                ));
                            }
                        }
                    } else {
                        match s.stack.iter().rposition(|(k, _)| *k == Kind::Pbk) {
                            Some(at) if s.stack[at].1 == t => at,
                            at => {
                                return Err(format!(
                                    "{} resumes at {} but the nearest PBK entry is {:?}",
                                    here(),
                                    name(t),
                                    at.map(|a| s.stack[a])
                                ));
                            }
                        }
                    };
                    let popped = State { stack: s.stack[..at].to_vec(), pending: s.pending[..at + 1].to_vec() };
                    out.push((t, popped));
                    if i.guard.is_some() {
                        let mut rest = s.clone();
                        if divergent_guard(b, i.guard) {
                            rest.add_pending(b);
                        }
                        for e in &edges {
                            if f.cfg[*e].kind == EdgeKind::Fallthrough {
                                out.push((f.cfg.edge_endpoints(*e).expect("edge").1, rest.clone()));
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
                    work.insert((rpo_pos[t.index()], t));
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
                        work.insert((rpo_pos[t.index()], t));
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
    let mut states: Vec<Option<Vec<(Kind, usize)>>> = vec![None; code.len() + 1];
    let mut work: Vec<usize> = vec![0];
    states[0] = Some(vec![]);
    while let Some(k) = work.pop() {
        let Some(s) = states[k].clone() else { continue };
        let Some(sc) = code.get(k) else {
            return Err(format!("`{}`: control runs past the last instruction", f.name));
        };
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
                out.push((k + 1, n));
            }
            Op::Bra => {
                let t = target().ok_or_else(|| format!("{} has no target", here()))?;
                out.push((t, s.clone()));
                if guarded {
                    out.push((k + 1, s.clone()));
                }
            }
            Op::Sync | Op::Brk => {
                let at = if i.op == Op::Sync {
                    match s.last() {
                        Some((Kind::Ssy, _)) => s.len() - 1,
                        top => return Err(format!("{} with {top:?} on top of the stack", here())),
                    }
                } else {
                    s.iter().rposition(|(k, _)| *k == Kind::Pbk).ok_or_else(|| format!("{} without PBK", here()))?
                };
                out.push((s[at].1, s[..at].to_vec()));
                if guarded {
                    out.push((k + 1, s.clone()));
                }
            }
            Op::Exit | Op::Ret => {
                if guarded {
                    out.push((k + 1, s.clone()));
                }
            }
            _ => out.push((k + 1, s.clone())),
        }
        for (t, st) in out {
            match &states[t] {
                None => {
                    states[t] = Some(st);
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
