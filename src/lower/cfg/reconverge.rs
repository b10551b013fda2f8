//! Reconvergence of divergent control flow (SPA 5.0's SIMT stack).
//!
//! Maxwell runs a warp's threads in lock step; when a conditional branch splits them, the
//! two paths run one after the other and only rejoin where the compiler says so:
//! `SSY target` pushes a reconvergence point, a divergent `BRA` pushes the not-taken path,
//! and `SYNC` (threads that arrive wait) / `EXIT` retire threads until none is active,
//! which pops the stack (the other path runs, or everyone resumes at the SSY target).
//! Loops use `PBK target` once before the loop and `BRK` on exit edges (the breaking
//! threads wait at the target until all have left). This is the structured scheme of
//! nouveau's gm107 code generator and of ptxas's own output (SSY/SYNC, `@P SYNC`).
//!
//! Without it, a barrier (`BAR.SYNC`) reached by half a warp counts the whole warp and
//! releases early, so reconvergence is a correctness matter, not an optimization.
//!
//! Only divergent branches need it. A branch is uniform when it is `bra.uni` or its
//! predicate depends only on uniform values ([`uniform_values`]).
//!
//! [`insert`] plans one stack entry per reconvergence point ([`crate::lower::cfg::plan`]),
//! first restructuring the shapes the plan cannot handle ([`crate::lower::cfg::restructure`]:
//! loops whose exits do not meet, regions entered from the side, loops without preheader),
//! then inserts `SSY`/`PBK` and turns the edges into each join into `SYNC`/`BRK`. The
//! algorithm and its invariants are in `docs/reconvergence.md`; [`crate::lower::cfg::check`]
//! verifies them.
//!
//! Uniformity tables are indexed by virtual register number (sized by `f.vregs`): read
//! through `get`, a register outside them counts as divergent. Edge edits whose edge or
//! terminator is missing are internal errors.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::diag::Diag;
use crate::ir::{BlockId, Edge, EdgeKind, Function, for_each_def, for_each_use};
use crate::lower::cfg::plan::{Entry, Joins, Kind, past_jumps, plan};
use crate::lower::cfg::restructure;
use crate::ptx::ast::Span;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind, SrcMods};
use crate::sass::op::{Op, SpecialReg};
use std::collections::HashSet;

/// Rebuilds of SSA form after restructuring before giving up (each round fixes the
/// problems the precise divergence of the previous one shows; one is the usual case).
const MAX_REBUILDS: usize = 4;

/// `uni[v]` (false, divergent, for a register outside the table).
fn is_uniform(uni: &[bool], v: u32) -> bool {
    uni.get(v as usize).copied().unwrap_or(false)
}

/// Marks `v` divergent; true if it was uniform before.
fn mark_divergent(uni: &mut [bool], v: u32) -> bool {
    match uni.get_mut(v as usize) {
        Some(u) if *u => {
            *u = false;
            true
        }
        _ => false,
    }
}

/// Which values are the same in every thread of a warp (conservative). Returns the set
/// of divergent conditional branches' blocks as well.
pub fn uniform_values(f: &Function) -> (Vec<bool>, HashSet<BlockId>) {
    let joins = Joins::new(f);
    let loops = &joins.forest.loops;
    let mut divergent: HashSet<BlockId> = HashSet::new();
    // `d = s` copies of whole registers (unguarded, SSA: `d` is `s` in every thread), to
    // see through the per-edge copies that leaving SSA form for restructuring leaves. A
    // copy of `RZ` is keyed by the first one (the per-edge copies of a zero).
    let mut copy_of: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut zero: Option<u32> = None;
    for &b in &f.layout {
        for i in f.cfg[b].instrs.iter().filter(|i| i.op == Op::Copy && i.guard.is_none()) {
            let (Some(Dst::Reg(d)), Some(src), 1, 1) = (i.dsts.first(), i.srcs.first(), i.dsts.len(), i.srcs.len())
            else {
                continue;
            };
            let Reg::V(dv) = d.reg else { continue };
            if d.comp != 0 || Some(d.n) != f.vregs.get(dv as usize).map(|k| k.width()) || src.mods != SrcMods::default()
            {
                continue;
            }
            match src.kind {
                SrcKind::Reg(r) if r.reg == crate::sass::instr::RZ => {
                    copy_of.insert(dv, *zero.get_or_insert(dv));
                }
                SrcKind::Reg(RegRef { reg: Reg::V(sv), comp: 0, n }) if n == d.n => {
                    copy_of.insert(dv, sv);
                }
                _ => {}
            }
        }
    }
    let root = |mut v: u32| {
        for _ in 0..64 {
            match copy_of.get(&v) {
                Some(s) if *s != v => v = *s,
                _ => break,
            }
        }
        v
    };
    loop {
        // Join points of divergent branches and loops with divergent exits.
        let mut nonuniform_params: HashSet<BlockId> = HashSet::new();
        let mut nonuniform_defs_in: HashSet<BlockId> = HashSet::new();
        for &b in &divergent {
            // Threads from both sides execute the join together (and those of the whole
            // function's join, for branches in loops).
            nonuniform_params.extend(joins.join(b));
            nonuniform_params.extend(joins.join_whole(b));
            for l in loops {
                if l.body.contains(&b) && joins.leaves(f, b, &l.body) {
                    nonuniform_defs_in.extend(l.body.iter().copied());
                    // Values leaving the loop meet at the exits.
                    for x in &l.body {
                        for s in f.succs(*x) {
                            if !l.body.contains(&s) {
                                nonuniform_params.insert(s);
                            }
                        }
                    }
                }
            }
        }
        let mut uni = vec![true; f.vregs.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &f.layout {
                let blk = &f.cfg[b];
                for (k, &p) in blk.params.iter().enumerate() {
                    // An edge without argument `k` (which the IR verifier rejects) makes the
                    // parameter divergent.
                    let args: Option<Vec<u32>> =
                        f.pred_edges(b).iter().map(|e| f.cfg[*e].args.get(k).map(|a| root(*a))).collect();
                    let args_uniform = args.as_ref().is_some_and(|args| args.iter().all(|a| is_uniform(&uni, *a)));
                    let args = args.unwrap_or_default();
                    // A parameter that receives one value on every edge (besides itself
                    // around a loop; through copies) is that value whichever edge a thread
                    // takes, join or not. Without the clean-up passes such parameters stay
                    // (SSA rebuilt after a preheader was added, on copies of one value), and
                    // taking them as divergent made the counter of `sgemm_reg`'s loop, and
                    // so its exit, divergent around a `bar.sync`: the reconvergence checker
                    // rejected the barrier (tests/data/fuzz/lower_bar_sync_reconvergence.ptx).
                    let mut others = args.iter().copied().filter(|a| *a != p);
                    let single = others.next().is_some_and(|a| others.all(|x| x == a));
                    let u =
                        args_uniform && (single || !nonuniform_params.contains(&b) && !nonuniform_defs_in.contains(&b));
                    if !u && mark_divergent(&mut uni, p) {
                        changed = true;
                    }
                }
                // The carry flag (block-local) is uniform if its writer's inputs are:
                // `ISETP.X` after `IADD RZ.CC, a, -b` compares `a` even though it reads
                // only RZ registers.
                let mut cc_uniform = true;
                for i in &blk.instrs {
                    let mut u = source_uniform(i) && !nonuniform_defs_in.contains(&b);
                    for_each_use(i, |v| u &= is_uniform(&uni, v));
                    if i.op.reads_cc() {
                        u &= cc_uniform;
                    }
                    if i.op.writes_cc() {
                        cc_uniform = u;
                    }
                    if !u {
                        for_each_def(i, |d| {
                            if mark_divergent(&mut uni, d) {
                                changed = true;
                            }
                        });
                    }
                }
            }
        }
        let mut now: HashSet<BlockId> = HashSet::new();
        for &b in &f.layout {
            let blk = &f.cfg[b];
            let Some(t) = blk.instrs.last() else { continue };
            if t.op == Op::Bra
                && let Some(g) = t.guard
                && !blk.uni
            {
                let u = match g.pred {
                    Reg::V(v) => is_uniform(&uni, v),
                    _ => true,
                };
                if !u {
                    now.insert(b);
                }
            }
        }
        if now == divergent {
            return (uni, divergent);
        }
        divergent = now;
    }
}

/// True if an instruction produces the same value in every thread given uniform inputs.
fn source_uniform(i: &Instr) -> bool {
    match i.op {
        Op::S2r(sr) => matches!(sr, SpecialReg::CtaidX | SpecialReg::CtaidY | SpecialReg::CtaidZ),
        // Local memory is per thread; volatile loads may observe other threads' stores.
        Op::Ldl(_) => false,
        // Atomics return per-thread old values; SHFL and VOTE depend on the lane and on
        // which lanes execute them.
        Op::Atom(_) | Op::Atoms(_) | Op::Shfl(_) | Op::Vote(_) => false,
        // A device function's parameters and a call's results may differ per thread.
        Op::Params | Op::Call(_) => false,
        Op::Ld(m) | Op::Ldg(m) => m.cop != crate::sass::op::CacheOp::Cv,
        _ => !i.srcs.iter().any(|s| matches!(s.kind, SrcKind::Reg(r) if r.reg == Reg::R(1))),
    }
}

/// Inserts SSY/SYNC and PBK/BRK for divergent branches, restructuring first what the
/// plan cannot handle. Errors: control flow that would need more duplication than
/// [`restructure::GROWTH_LIMIT`] allows, or an internal failure (a diagnostic at `at`).
pub fn insert(f: &mut Function, at: Span) -> Result<(), Diag> {
    // Saturating: an allowance in instructions, far below `usize::MAX` for any function
    // that fits in memory.
    let mut budget = restructure::GROWTH_LIMIT.saturating_mul(f.instr_count()).saturating_add(1024);
    for _ in 0..MAX_REBUILDS {
        let (_, mut divergent) = uniform_values(f);
        if divergent.is_empty() {
            return Ok(());
        }
        let mut problems = match plan(f, &divergent) {
            Ok(entries) => {
                return apply(f, &entries)
                    .map_err(|e| Diag::error(at, format!("`{}`: internal error in reconvergence: {e}", f.name)));
            }
            Err(p) => p,
        };
        // Restructure out of SSA form, one problem at a time, then rebuild SSA.
        restructure::out_of_ssa(f)
            .map_err(|e| Diag::error(at, format!("`{}`: internal error in reconvergence: {e}", f.name)))?;
        // Saturating, like `budget` (`rounds` stops one above `max_rounds`).
        let max_rounds = f.layout.len().saturating_mul(4).saturating_add(64);
        let mut rounds: usize = 0;
        loop {
            restructure::fix(f, &problems, &mut divergent, &mut budget)
                .map_err(|e| Diag::error(at, format!("`{}`: {e}", f.name)))?;
            rounds = rounds.saturating_add(1);
            match plan(f, &divergent) {
                Ok(_) => break,
                Err(p) => problems = p,
            }
            if rounds > max_rounds {
                return Err(Diag::error(
                    at,
                    format!("`{}`: internal error: restructuring for reconvergence does not terminate", f.name),
                ));
            }
        }
        // Landings and copies add edges from two-way branches to blocks with several
        // predecessors: SSA arguments need those split (regalloc2 takes none on them).
        crate::lower::opt::split_critical_edges(f);
        crate::lower::ssa::construct(f);
        restructure::hoist_undefs(f);
        crate::lower::opt::run(f);
        if restructure::forward_predicate_copies(f) {
            crate::lower::opt::run(f);
        }
        if restructure::prune_dead_params(f) {
            crate::lower::opt::run(f);
        }
    }
    Err(Diag::error(at, format!("`{}`: internal error: reconvergence could not be planned", f.name)))
}

/// Inserts the planned entries: `SSY`/`PBK` before the push block's terminator, and
/// `SYNC`/`BRK` on every edge from the region into the join. An edge into a chain of
/// jump-only blocks leading to the join goes straight to the join (ptxas's `@P BRK`);
/// the jump blocks left unreachable are removed.
fn apply(f: &mut Function, entries: &[Entry]) -> Result<(), String> {
    for e in entries {
        let op = if e.kind == Kind::Ssy { Op::Ssy } else { Op::Pbk };
        insert_before_terminator(f, e.push, Instr::new(op, vec![], vec![Src::label(e.join.index() as u32)]))?;
    }
    let joins: HashSet<BlockId> = entries.iter().map(|e| e.join).collect();
    let forest = crate::lower::cfg::graph::LoopForest::new(f, &crate::lower::cfg::graph::dominators(f));
    let headers: HashSet<BlockId> = forest.loops.iter().map(|l| l.header).collect();
    // Every edge to convert, found before any is (a converted jump is no longer one).
    let mut todo = vec![];
    for e in entries {
        let op = if e.kind == Kind::Ssy { Op::Sync } else { Op::Brk };
        let mut blocks: Vec<BlockId> = e.region.iter().copied().collect();
        blocks.sort();
        for x in blocks {
            for edge in f.succ_edges(x) {
                let (_, s) = f.cfg.edge_endpoints(edge).ok_or_else(|| missing_edge(x))?;
                if s == e.join || past_jumps(f, s, &joins, &headers) == e.join {
                    todo.push((edge, op, e.join));
                }
            }
        }
    }
    for (edge, op, join) in todo {
        convert(f, edge, op, join)?;
    }
    crate::lower::opt::remove_unreachable(f);
    Ok(())
}

/// Makes edge `e` a `SYNC` or `BRK` (`op`) to `join`: the source's `BRA` becomes `op`
/// (keeping its guard) for a taken edge; a fall-through edge gets a block holding `op`.
/// An edge into a chain of jump-only blocks leading to the join goes to the join itself
/// with the chain's last arguments (through a new block holding `op` when the source has
/// two successors: regalloc2 allows no critical edges), so that each thread leaves its
/// regions right where it breaks.
fn convert(f: &mut Function, mut e: petgraph::stable_graph::EdgeIndex, op: Op, join: BlockId) -> Result<(), String> {
    let (x, s) = f.cfg.edge_endpoints(e).ok_or_else(|| format!("an edge to BB{} is gone", join.index()))?;
    let mut own_block = f.cfg[e].kind == EdgeKind::Fallthrough;
    if s != join {
        let (mut cur, mut args) = (s, vec![]);
        while cur != join {
            let next = f.succ_edges(cur).first().copied().ok_or_else(|| {
                format!("BB{} on the way from BB{} to BB{} has no successor", cur.index(), x.index(), join.index())
            })?;
            args.clone_from(&f.cfg[next].args);
            cur = f.cfg.edge_endpoints(next).ok_or_else(|| missing_edge(cur))?.1;
        }
        let kind = f.cfg[e].kind;
        if f.succs(x).len() > 1 {
            // The edge to the join would be critical, which regalloc2 does not allow.
            own_block = true;
        }
        f.cfg.remove_edge(e);
        e = f.cfg.add_edge(x, join, Edge { kind, args });
    }
    if !own_block {
        let term = f.cfg[x].instrs.last_mut().ok_or_else(|| no_terminator(x))?;
        if term.op != Op::Bra {
            return Err(format!("the edge BB{} -> BB{} is already a {}", x.index(), join.index(), term.op.name()));
        }
        let mut new = Instr::new(op, vec![], vec![]);
        new.guard = term.guard;
        *term = new;
        return Ok(());
    }
    let kind = f.cfg[e].kind;
    let n = f.new_block("");
    let origin = f.cfg[x].origins.last().copied().unwrap_or_default();
    f.cfg[n].push(Instr::new(op, vec![], vec![]), origin);
    let Edge { args, .. } = f.cfg.remove_edge(e).ok_or_else(|| missing_edge(x))?;
    f.cfg.add_edge(x, n, Edge { kind, args: vec![] });
    f.cfg.add_edge(n, join, Edge { kind: EdgeKind::Taken, args });
    if kind == EdgeKind::Taken {
        let term = f.cfg[x].instrs.last_mut().ok_or_else(|| no_terminator(x))?;
        let label = term.srcs.first_mut().ok_or_else(|| format!("the branch ending BB{} has no label", x.index()))?;
        *label = Src::label(n.index() as u32);
        f.layout.push(n);
    } else {
        let pos =
            f.layout.iter().position(|b| *b == x).ok_or_else(|| format!("BB{} is not in the layout", x.index()))?;
        // Right after `x` (`pos < layout.len()`: `+ 1` saturates never).
        f.layout.insert(pos.saturating_add(1), n);
    }
    Ok(())
}

/// The internal error for an edge from `b` that an edit expected and did not find.
fn missing_edge(b: BlockId) -> String {
    format!("an edge from BB{} is gone", b.index())
}

/// The internal error for a block `b` without the terminator an edit expected.
fn no_terminator(b: BlockId) -> String {
    format!("BB{} has no terminator", b.index())
}

/// Inserts `i` just before the terminator of `b`.
fn insert_before_terminator(f: &mut Function, b: BlockId, i: Instr) -> Result<(), String> {
    let blk = &mut f.cfg[b];
    let at = blk.instrs.len().checked_sub(1).ok_or_else(|| no_terminator(b))?;
    let origin = *blk.origins.get(at).ok_or_else(|| format!("BB{} has fewer origins than instructions", b.index()))?;
    blk.instrs.insert(at, i);
    blk.origins.insert(at, origin);
    Ok(())
}
