//! Rewrites the shapes the reconvergence plan cannot handle ([`super::plan::Problem`]),
//! on the IR taken out of SSA form (block parameters become copies on the incoming
//! edges; [`crate::lower::ssa::construct`] rebuilds SSA afterwards), so that duplicated
//! blocks and new selector variables need no SSA repair:
//!
//! * **No preheader**: a block `BRA header` takes the loop's entering edges.
//! * **Loop exits that do not meet** (several exit targets meeting only outside an
//!   enclosing loop, or never while one continues to a warp-synchronous instruction): a
//!   landing block takes every exit edge, each setting a selector (`MOV32I sel, k`), and
//!   dispatches to the targets (`ISETP.EQ.U32 P, sel, k; @P BRA target`). The loop then
//!   has one exit (its PBK target); the landing lies in the enclosing loop, where targets
//!   further out are that loop's exits, handled the same way in the next round. This is
//!   ptxas's scheme for `find` (`tests/programs/find.ptx`): both exits `BRK` to one
//!   target, then `@!P0 EXIT` dispatches on a predicate.
//! * **Side entries** (a `goto` into the middle of an if/else region or of a loop's exit
//!   paths): the blocks of the region reachable from the entered blocks are copied
//!   (tail duplication), and the edges from outside go to the copies. The threads that
//!   enter from outside then never execute the region's `SYNC`/`BRK`.
//!
//! Growth is bounded ([`GROWTH_LIMIT`]); every fix removes the problem it is for, and new
//! problems (a landing's dispatch is itself divergent) are fixed in later rounds.
//!
//! Tables (block positions, per-block liveness, register kinds) are read through `get`;
//! an edge, terminator or table entry missing where an edit needs one is an internal
//! error, never a panic.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::graph::{
    LoopForest, copy_blocks, dispatch_chain, dominators, fix_fallthroughs, reach, retarget, split_and_retarget,
    split_edge,
};
use super::plan::Problem;
use crate::ir::{Block, BlockId, EdgeKind, Function, VRegKind, for_each_def, for_each_use_mut};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{BoolOp, Op};
use std::collections::{HashMap, HashSet};

/// Instructions tail duplication may add, as a multiple of the function's size (plus a
/// constant for small functions); beyond it the function is rejected with a diagnostic.
pub const GROWTH_LIMIT: usize = 4;

/// Takes `f` out of SSA form: every block parameter becomes a variable assigned on each
/// incoming edge, through a temporary so that the assignments of one edge act in parallel
/// (`tmp_k = arg_k` for all k, then `param_k = tmp_k`). The copies go before the
/// predecessor's final `BRA` when it has one successor, else on a new block on the edge.
/// Errors: an internal inconsistency (an edge, terminator or register kind missing).
pub fn out_of_ssa(f: &mut Function) -> Result<(), String> {
    for t in f.layout.clone() {
        let params = std::mem::take(&mut f.cfg[t].params);
        if params.is_empty() {
            continue;
        }
        let kinds: Vec<VRegKind> = params
            .iter()
            .map(|q| f.vregs.get(*q as usize).copied())
            .collect::<Option<_>>()
            .ok_or_else(|| format!("a parameter of BB{} is not a virtual register of the function", t.index()))?;
        for e in f.pred_edges(t) {
            let args = std::mem::take(&mut f.cfg[e].args);
            let (p, _) = f.cfg.edge_endpoints(e).ok_or_else(|| format!("an edge into BB{} is gone", t.index()))?;
            let tmps: Vec<u32> = kinds.iter().map(|k| new_vreg(f, *k)).collect();
            let mut copies: Vec<Instr> =
                kinds.iter().zip(&tmps).zip(&args).map(|((k, d), s)| copy(*k, *d, *s)).collect();
            copies.extend(kinds.iter().zip(&params).zip(&tmps).map(|((k, d), s)| copy(*k, *d, *s)));
            let last = f.cfg[p].instrs.last().ok_or_else(|| no_terminator(p))?;
            if f.succs(p).len() == 1 && last.op == Op::Bra && last.guard.is_none() {
                insert_before_terminator(&mut f.cfg[p], p, copies)?;
            } else {
                split_edge(f, e, copies)
                    .ok_or_else(|| format!("the edge BB{} -> BB{} is gone", p.index(), t.index()))?;
            }
        }
    }
    f.ssa = false;
    Ok(())
}

/// The internal error for a block `b` without the terminator an edit expected.
fn no_terminator(b: BlockId) -> String {
    format!("BB{} has no terminator", b.index())
}

/// Inserts `code` just before the terminator of `blk` (block `b`), with the terminator's
/// origin.
fn insert_before_terminator(blk: &mut Block, b: BlockId, code: Vec<Instr>) -> Result<(), String> {
    let at = blk.instrs.len().checked_sub(1).ok_or_else(|| no_terminator(b))?;
    let origin = *blk.origins.get(at).ok_or_else(|| format!("BB{} has fewer origins than instructions", b.index()))?;
    let n = code.len();
    blk.instrs.splice(at..at, code);
    blk.origins.splice(at..at, std::iter::repeat_n(origin, n));
    Ok(())
}

fn new_vreg(f: &mut Function, kind: VRegKind) -> u32 {
    match f.new_vreg(kind) {
        Reg::V(v) => v,
        r => unreachable!("new_vreg gives a virtual register, not {r:?}"),
    }
}

/// `dst = src` for virtual registers of kind `kind`: `copy` for general-purpose registers,
/// `PSETP.AND.AND dst, PT, src, PT, PT` for predicates (as `mov.pred` is lowered).
fn copy(kind: VRegKind, dst: u32, src: u32) -> Instr {
    match kind {
        VRegKind::Pred => Instr::new(
            Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And },
            vec![Dst::Pred(Reg::V(dst)), Dst::Pred(PT)],
            vec![Src::pred(Reg::V(src), false), Src::pt(), Src::pt()],
        ),
        VRegKind::Gpr(n) => {
            Instr::new(Op::Copy, vec![Dst::reg(Reg::V(dst), n)], vec![Src::reg(RegRef::new(Reg::V(src), n))])
        }
    }
}

/// Replaces reads of predicate copies (`PSETP.AND.AND d, PT, {!}s, PT, PT`, unguarded)
/// by their sources, in SSA form (the optimiser forwards only general-purpose copies);
/// the dead copies are left to dead-code elimination. Returns true if anything changed.
pub fn forward_predicate_copies(f: &mut Function) -> bool {
    let mut map: HashMap<u32, (Reg, bool)> = HashMap::new();
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            if i.guard.is_none()
                && i.op == (Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And })
                && let [Dst::Pred(Reg::V(d)), Dst::Pred(PT)] = i.dsts.as_slice()
                && let [s0, s1, s2] = i.srcs.as_slice()
                && *s1 == Src::pt()
                && *s2 == Src::pt()
                && let SrcKind::Pred(s) = s0.kind
            {
                map.insert(*d, (s, s0.mods.neg));
            }
        }
    }
    if map.is_empty() {
        return false;
    }
    let resolve = |r: Reg, neg: bool| -> (Reg, bool) {
        let (mut r, mut neg) = (r, neg);
        for _ in 0..64 {
            let Reg::V(v) = r else { break };
            let Some(&(s, n)) = map.get(&v) else { break };
            r = s;
            neg ^= n;
        }
        (r, neg)
    };
    let mut changed = false;
    for b in f.layout.clone() {
        for i in &mut f.cfg[b].instrs {
            if let Some(g) = &mut i.guard
                && let Reg::V(v) = g.pred
                && map.contains_key(&v)
            {
                (g.pred, g.neg) = resolve(g.pred, g.neg);
                changed = true;
            }
            for s in &mut i.srcs {
                if let SrcKind::Pred(Reg::V(v)) = s.kind
                    && map.contains_key(&v)
                {
                    let (r, neg) = resolve(Reg::V(v), s.mods.neg);
                    s.kind = SrcKind::Pred(r);
                    s.mods.neg = neg;
                    changed = true;
                }
            }
        }
        for e in f.succ_edges(b) {
            for a in f.cfg[e].args.iter_mut() {
                if map.contains_key(a)
                    && let (Reg::V(v), false) = resolve(Reg::V(*a), false)
                {
                    *a = v;
                    changed = true;
                }
            }
        }
    }
    changed
}

/// Removes block parameters that nothing reads, also in cycles of parameters that only
/// feed each other (SSA construction after restructuring places phis for the selector and
/// the former parameters at every merge their definitions reach, e.g. loop headers;
/// dead-code elimination keeps cycles through loop headers). Live: read by an
/// instruction, or the argument of a live parameter. Returns true if any was removed.
pub fn prune_dead_params(f: &mut Function) -> bool {
    let mut live: HashSet<u32> = HashSet::new();
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            crate::ir::for_each_use(i, |v| {
                live.insert(v);
            });
        }
    }
    // Parameter -> (block, position).
    let mut param_at: HashMap<u32, (BlockId, usize)> = HashMap::new();
    for &b in &f.layout {
        for (k, p) in f.cfg[b].params.iter().enumerate() {
            param_at.insert(*p, (b, k));
        }
    }
    let mut work: Vec<u32> = live.iter().copied().filter(|v| param_at.contains_key(v)).collect();
    while let Some(p) = work.pop() {
        let Some(&(b, k)) = param_at.get(&p) else { continue };
        for e in f.pred_edges(b) {
            let Some(&a) = f.cfg[e].args.get(k) else { continue };
            if live.insert(a) && param_at.contains_key(&a) {
                work.push(a);
            }
        }
    }
    let mut changed = false;
    for b in f.layout.clone() {
        let keep: Vec<bool> = f.cfg[b].params.iter().map(|p| live.contains(p)).collect();
        if keep.iter().all(|k| *k) {
            continue;
        }
        changed = true;
        let params = std::mem::take(&mut f.cfg[b].params);
        f.cfg[b].params = params.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(p, _)| p).collect();
        for e in f.pred_edges(b) {
            let args = std::mem::take(&mut f.cfg[e].args);
            f.cfg[e].args = args.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(a, _)| a).collect();
        }
    }
    changed
}

/// Fixes the first problem of `problems` worth fixing now (preheaders first, then the
/// innermost loop's exits, then the smallest side-entered region), on `f` out of SSA
/// form. `divergent` gains the new divergent branches (dispatch chains, copies of
/// divergent branches); `budget` is the tail-duplication allowance left, in instructions.
/// Errors name a shape that would need more duplication than allowed.
pub fn fix(
    f: &mut Function,
    problems: &[Problem],
    divergent: &mut HashSet<BlockId>,
    budget: &mut usize,
) -> Result<(), String> {
    debug_assert!(!f.ssa, "restructuring needs the IR out of SSA form");
    let doms = dominators(f);
    let forest = LoopForest::new(f, &doms);
    let loop_of = |h: BlockId| forest.loops.iter().position(|l| l.header == h);
    // Inner cycles first (they make new loops), innermost first.
    if let Some((h, w)) = problems
        .iter()
        .filter_map(|p| if let Problem::InnerCycle { header, exit } = p { Some((*header, *exit)) } else { None })
        .min_by_key(|(h, _)| {
            loop_of(*h)
                .and_then(|l| forest.loops.get(l))
                .map_or((usize::MAX, h.index()), |lp| (lp.body.len(), h.index()))
        })
    {
        super::nest::separate(f, &forest, h, w, divergent, budget)?;
        fix_fallthroughs(f);
        return Ok(());
    }
    let pre: Vec<usize> =
        problems.iter().filter_map(|p| if let Problem::NoPreheader(h) = p { loop_of(*h) } else { None }).collect();
    if !pre.is_empty() {
        for l in pre {
            add_preheader(f, &forest, l).map_err(internal)?;
        }
        fix_fallthroughs(f);
        return Ok(());
    }
    // Innermost first: the smallest body. A landing for a loop with a single exit target
    // only puts a jump block in front of it (which lets the loop keep a PBK target of its
    // own, see `plan`); when that target already is a jump-only block, another one changes
    // nothing the plan sees and the same loop would be chosen again in every round (a
    // fuzzed `bitonic_sort512`, tests/data/fuzz/reconverge_nonterminating.ptx, ran
    // 4 * blocks + 64 rounds adding one jump each): such a loop is left to the other fixes.
    if let Some(l) = problems
        .iter()
        .filter_map(|p| if let Problem::LoopExits(h) = p { loop_of(*h) } else { None })
        .filter(|l| landing_progresses(f, &forest, *l))
        .min_by_key(|l| forest.loops.get(*l).map(|lp| (lp.body.len(), lp.header.index())))
    {
        add_landing(f, &forest, l, divergent).map_err(internal)?;
        fix_fallthroughs(f);
        return Ok(());
    }
    if let Some((region, entered)) = problems
        .iter()
        .filter_map(|p| if let Problem::SideEntry { region, entered } = p { Some((region, entered)) } else { None })
        .min_by_key(|(r, e)| (r.len(), e.first().map(|b| b.index())))
    {
        duplicate(f, region, entered, divergent, budget)?;
        fix_fallthroughs(f);
        return Ok(());
    }
    match problems.first() {
        Some(Problem::Unreachable(b)) => {
            Err(format!("the divergent branch at the end of BB{} does not reach its join (internal error)", b.index()))
        }
        _ => Err("no fix for the reconvergence problems found (internal error)".into()),
    }
}

/// False if a landing for loop `l` would change nothing: a single exit target that is
/// already a jump-only block ([`super::plan::past_jumps`] moves past it).
fn landing_progresses(f: &Function, forest: &LoopForest, l: usize) -> bool {
    let mut targets: Vec<BlockId> = forest.exits(f, l).into_iter().map(|(_, s)| s).collect();
    targets.sort();
    targets.dedup();
    match targets.as_slice() {
        [t] => super::plan::past_jumps(f, *t, &HashSet::new(), &HashSet::new()) == *t,
        _ => true,
    }
}

/// A block `BRA header` taking the edges that enter loop `l` from outside, placed right
/// before the header.
fn add_preheader(f: &mut Function, forest: &LoopForest, l: usize) -> Result<(), String> {
    let lp = forest.loops.get(l).ok_or_else(|| no_loop(l))?;
    let h = lp.header;
    let outside: Vec<_> = f
        .pred_edges(h)
        .into_iter()
        .filter(|e| f.cfg.edge_endpoints(*e).is_some_and(|(p, _)| !lp.body.contains(&p)))
        .collect();
    let origin = f.cfg[h].origins.first().copied().unwrap_or_default();
    let ph = f.new_block("");
    f.cfg[ph].push(Instr::new(Op::Bra, vec![], vec![Src::label(h.index() as u32)]), origin);
    f.cfg.add_edge(ph, h, crate::ir::Edge { kind: EdgeKind::Taken, args: vec![] });
    let at = f.layout.iter().position(|b| *b == h).ok_or_else(|| not_laid_out(h))?;
    f.layout.insert(at, ph);
    for e in outside {
        retarget(f, e, ph).ok_or_else(|| format!("an edge into BB{} is gone", h.index()))?;
    }
    Ok(())
}

/// An internal error `e` of an edit, as [`fix`] reports it.
fn internal(e: String) -> String {
    format!("internal error in restructuring: {e}")
}

/// The internal error for a loop number outside the forest.
fn no_loop(l: usize) -> String {
    format!("loop {l} is not in the loop forest")
}

/// The internal error for a block missing from the layout.
fn not_laid_out(b: BlockId) -> String {
    format!("BB{} is not in the layout", b.index())
}

/// Routes every exit edge of loop `l` to a landing block that dispatches to the exit
/// targets on a selector each edge sets (none for a single target).
fn add_landing(
    f: &mut Function,
    forest: &LoopForest,
    l: usize,
    divergent: &mut HashSet<BlockId>,
) -> Result<(), String> {
    let lp = forest.loops.get(l).ok_or_else(|| no_loop(l))?;
    let body = &lp.body;
    let pos = f.layout_positions();
    let at_pos = |b: BlockId| pos.get(b.index()).copied().unwrap_or(usize::MAX);
    let mut exits = vec![];
    for &b in body {
        for e in f.succ_edges(b) {
            let Some((_, s)) = f.cfg.edge_endpoints(e) else { continue };
            if !body.contains(&s) {
                exits.push((b, e, s));
            }
        }
    }
    exits.sort_by_key(|(b, _, s)| (at_pos(*b), at_pos(*s)));
    let mut targets: Vec<BlockId> = exits.iter().map(|(_, _, s)| *s).collect();
    targets.sort_by_key(|s| at_pos(*s));
    targets.dedup();
    // The variables the landing carries to some target; an exit to another target makes
    // them undefined, so that they are not live around the loop (their values from the
    // other exits are never read: the dispatch sends those threads elsewhere).
    let live = live_in_before_ssa(f);
    let live_at = |t: BlockId| live.get(&t.index()).ok_or_else(|| format!("no liveness for BB{}", t.index()));
    // Only variables the loop (or its exit edges) defines: the others reach the landing
    // from one definition before the loop and need nothing.
    let mut loop_defs: HashSet<u32> = HashSet::new();
    for &b in &f.layout {
        let preds = f.preds(b);
        let on_exit_edge = !preds.is_empty() && preds.iter().all(|p| body.contains(p));
        if body.contains(&b) || on_exit_edge {
            for i in &f.cfg[b].instrs {
                crate::ir::for_each_def(i, |v| {
                    loop_defs.insert(v);
                });
            }
        }
    }
    let mut carried: HashSet<u32> = HashSet::new();
    for t in &targets {
        carried.extend(live_at(*t)?.iter().copied().filter(|v| loop_defs.contains(v)));
    }
    // Predicates cross the landing as 0/1 in general-purpose registers: a block parameter
    // cannot be demoted by register allocation, and P0..P6 would not hold the predicates
    // of every target at once.
    let mut preds: Vec<u32> =
        carried.iter().copied().filter(|v| f.vregs.get(*v as usize) == Some(&VRegKind::Pred)).collect();
    preds.sort();
    let carrier: HashMap<u32, u32> = preds.iter().map(|p| (*p, new_vreg(f, VRegKind::Gpr(1)))).collect();
    let one = new_vreg(f, VRegKind::Gpr(1));
    let origin = f.cfg[lp.header].origins.first().copied().unwrap_or_default();
    let sel = f.new_vreg(VRegKind::Gpr(1));
    let chain = dispatch_chain(f, sel, &targets, origin);
    let landing = match (chain.first(), targets.first()) {
        (Some(c), _) => *c,
        (None, Some(&t)) => {
            let x = f.new_block("");
            f.cfg[x].push(Instr::new(Op::Bra, vec![], vec![Src::label(t.index() as u32)]), origin);
            f.cfg.add_edge(x, t, crate::ir::Edge { kind: EdgeKind::Taken, args: vec![] });
            x
        }
        (None, None) => return Err(format!("the loop at BB{} has no exit for a landing", lp.header.index())),
    };
    divergent.extend(chain.iter().copied());
    // Each exit edge sets the selector in its source block, under the branch's guard (a
    // `MOV32I` on an edge block would run with the stack entries of any region the
    // branch is in, see `plan::stale_breaks`), and goes to the landing.
    let mut by_block: Vec<(BlockId, Vec<(petgraph::stable_graph::EdgeIndex, usize)>)> = vec![];
    for (b, e, s) in exits {
        let k = targets.iter().position(|t| *t == s).ok_or_else(|| format!("BB{} is not an exit target", s.index()))?;
        match by_block.iter_mut().find(|(x, _)| *x == b) {
            Some((_, v)) => v.push((e, k)),
            None => by_block.push((b, vec![(e, k)])),
        }
    }
    for (b, edges) in by_block {
        if targets.len() > 1 {
            let term = f.cfg[b].instrs.last().cloned().ok_or_else(|| no_terminator(b))?;
            let set = |k: usize| Instr::new(Op::Mov32i, vec![Dst::reg(sel, 1)], vec![Src::imm(k as u32)]);
            let mut sets = vec![];
            match (term.guard, edges.as_slice()) {
                (None, [(_, k)]) => sets.push(set(*k)),
                (Some(g), [(e, k)]) => {
                    let taken = f.cfg[*e].kind == EdgeKind::Taken;
                    let mut i = set(*k);
                    i.guard = Some(crate::sass::instr::Guard { pred: g.pred, neg: g.neg == taken });
                    sets.push(i);
                }
                (Some(g), [_, _]) => {
                    // Both edges leave: `sel = P ? k_taken : k_fallthrough`.
                    let k_of = |kind: EdgeKind| edges.iter().find(|(e, _)| f.cfg[*e].kind == kind).map(|(_, k)| *k);
                    let (Some(kt), Some(kf)) = (k_of(EdgeKind::Taken), k_of(EdgeKind::Fallthrough)) else {
                        return Err(format!("BB{} has two exit edges of one kind", b.index()));
                    };
                    let t = f.new_vreg(VRegKind::Gpr(1));
                    sets.push(Instr::new(Op::Mov32i, vec![Dst::reg(t, 1)], vec![Src::imm(kt as u32)]));
                    sets.push(Instr::new(
                        Op::Sel,
                        vec![Dst::reg(sel, 1)],
                        vec![Src::reg(RegRef::new(t, 1)), Src::imm(kf as u32), Src::pred(g.pred, g.neg)],
                    ));
                }
                _ => unreachable!("a block has at most two successors"),
            }
            insert_before_terminator(&mut f.cfg[b], b, sets)?;
        }
        for (e, k) in edges {
            let target = *targets.get(k).ok_or_else(|| format!("exit target {k} of {}", targets.len()))?;
            let needs = live_at(target)?;
            let mut dead: Vec<u32> = carried.difference(needs).copied().collect();
            dead.extend(preds.iter().filter(|p| !needs.contains(p)).filter_map(|p| carrier.get(p).copied()));
            dead.sort();
            let mut code: Vec<Instr> =
                dead.into_iter().filter_map(|v| f.vregs.get(v as usize).map(|k| undef(*k, v))).collect();
            let kept: Vec<u32> = preds.iter().copied().filter(|p| needs.contains(p)).collect();
            if !kept.is_empty() {
                code.push(Instr::new(Op::Mov32i, vec![Dst::reg(Reg::V(one), 1)], vec![Src::imm(1)]));
            }
            for (p, c) in kept.into_iter().filter_map(|p| Some((p, *carrier.get(&p)?))) {
                // `SEL c, 1, 0, p`.
                code.push(Instr::new(
                    Op::Sel,
                    vec![Dst::reg(Reg::V(c), 1)],
                    vec![Src::reg(RegRef::new(Reg::V(one), 1)), Src::imm(0), Src::pred(Reg::V(p), false)],
                ));
            }
            let moved = if code.is_empty() {
                retarget(f, e, landing).is_some()
            } else {
                split_and_retarget(f, e, code, landing).is_some()
            };
            if !moved {
                return Err(format!("an exit edge of BB{} is gone", b.index()));
            }
        }
    }
    // After the loop's last block.
    let last = body
        .iter()
        .filter_map(|b| pos.get(b.index()).copied())
        .max()
        .ok_or_else(|| format!("the loop at BB{} has no block", lp.header.index()))?;
    let after = f
        .layout
        .iter()
        .position(|b| pos.get(b.index()).is_some_and(|p| *p == last))
        .ok_or_else(|| format!("the last block of the loop at BB{} is not in the layout", lp.header.index()))?;
    // `after < layout.len()` and `at` grows only while below it: `+ 1` saturates never.
    let mut at = after.saturating_add(1);
    // After the edge blocks just inserted there (blocks newer than `pos`).
    while f.layout.get(at).is_some_and(|b| b.index() >= pos.len()) {
        at = at.saturating_add(1);
    }
    let blocks: Vec<BlockId> = if chain.is_empty() { vec![landing] } else { chain.clone() };
    f.layout.splice(at..at, blocks);
    // Each target gets its predicates back from their carriers.
    for &t in &targets {
        let live_t = live_at(t)?;
        let back: Vec<Instr> = preds
            .iter()
            .filter(|p| live_t.contains(p))
            .filter_map(|p| Some((*p, *carrier.get(p)?)))
            .map(|(p, c)| {
                Instr::new(
                    Op::Isetp { cmp: crate::sass::op::Cmp::Ne, u32: true, x: false, bop: BoolOp::And },
                    vec![Dst::Pred(Reg::V(p)), Dst::Pred(PT)],
                    vec![Src::reg(RegRef::new(Reg::V(c), 1)), Src::imm(0), Src::pt()],
                )
            })
            .collect();
        if back.is_empty() {
            continue;
        }
        let from: Vec<BlockId> = if chain.is_empty() { vec![landing] } else { chain.clone() };
        for b in from {
            for e in f.succ_edges(b) {
                if f.cfg.edge_endpoints(e).is_some_and(|(_, s)| s == t) {
                    split_edge(f, e, back.clone()).ok_or_else(|| format!("an edge from BB{} is gone", b.index()))?;
                }
            }
        }
    }
    Ok(())
}

/// `undef v` for a register `v` of kind `kind` (the pseudo-op SSA construction uses for
/// reads without a definition).
fn undef(kind: VRegKind, v: u32) -> Instr {
    let d = match kind {
        VRegKind::Pred => Dst::Pred(Reg::V(v)),
        VRegKind::Gpr(n) => Dst::reg(Reg::V(v), n),
    };
    Instr::new(Op::Undef, vec![d], vec![])
}

/// Variables live on entry to each block of `f` out of SSA form (indexed by
/// `NodeIndex::index()`), conservatively: only unguarded definitions of a whole variable
/// end a live range.
fn live_in_before_ssa(f: &Function) -> HashMap<usize, HashSet<u32>> {
    let whole = |d: &Dst| match d {
        Dst::Pred(Reg::V(v)) => Some(*v),
        Dst::Reg(r) => match r.reg {
            Reg::V(v) if r.comp == 0 && Some(r.n) == f.vregs.get(v as usize).map(|k| k.width()) => Some(v),
            _ => None,
        },
        _ => None,
    };
    let mut live_in: HashMap<usize, HashSet<u32>> = f.layout.iter().map(|b| (b.index(), HashSet::new())).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &b in f.layout.iter().rev() {
            let mut live: HashSet<u32> = HashSet::new();
            for s in f.succs(b) {
                if let Some(ls) = live_in.get(&s.index()) {
                    live.extend(ls.iter().copied());
                }
            }
            for i in f.cfg[b].instrs.iter().rev() {
                if i.guard.is_none() {
                    for d in &i.dsts {
                        if let Some(v) = whole(d) {
                            live.remove(&v);
                        }
                    }
                }
                crate::ir::for_each_use(i, |v| {
                    live.insert(v);
                });
            }
            if live.len() != live_in.get(&b.index()).map_or(0, |l| l.len()) {
                live_in.insert(b.index(), live);
                changed = true;
            }
        }
    }
    live_in
}

/// Moves the `undef` definitions to the start of the entry block (which dominates every
/// use): landings define carried variables as undefined on the exit edges that do not
/// use them, and those edge blocks must end up holding only their jump.
pub fn hoist_undefs(f: &mut Function) {
    // One `undef` per register kind: every value SSA construction left undefined reads
    // it. Separate ones, each live from the entry to its use, filled the register file
    // (156 of them gave 251 registers and failed allocation in 48 on a random program).
    let mut canon: HashMap<VRegKind, u32> = HashMap::new();
    let mut rename: HashMap<u32, u32> = HashMap::new();
    let mut kept = vec![];
    for b in f.layout.clone() {
        let blk = &mut f.cfg[b];
        let instrs = std::mem::take(&mut blk.instrs);
        // (`origins` parallels `instrs`; a missing one would be the default.)
        let mut origins = std::mem::take(&mut blk.origins).into_iter();
        for i in instrs {
            let o = origins.next().unwrap_or_default();
            if i.op != Op::Undef {
                blk.instrs.push(i);
                blk.origins.push(o);
                continue;
            }
            let mut d = None;
            for_each_def(&i, |v| d = Some(v));
            // An `undef` defining nothing goes.
            let Some(v) = d else { continue };
            let Some(&kind) = f.vregs.get(v as usize) else {
                // Not a register of `f` (the IR verifier reports it): stays.
                blk.instrs.push(i);
                blk.origins.push(o);
                continue;
            };
            match canon.get(&kind) {
                Some(&c) => {
                    rename.insert(v, c);
                }
                None => {
                    canon.insert(kind, v);
                    kept.push((i, o));
                }
            }
        }
    }
    let entry = &mut f.cfg[f.entry];
    let (instrs, origins): (Vec<Instr>, Vec<_>) = kept.into_iter().unzip();
    entry.instrs.splice(0..0, instrs);
    entry.origins.splice(0..0, origins);
    if rename.is_empty() {
        return;
    }
    for b in f.layout.clone() {
        for i in f.cfg[b].instrs.iter_mut() {
            for_each_use_mut(i, |v| {
                if let Some(c) = rename.get(v) {
                    *v = *c;
                }
            });
        }
    }
    for e in f.cfg.edge_indices().collect::<Vec<_>>() {
        for a in f.cfg[e].args.iter_mut() {
            if let Some(c) = rename.get(a) {
                *a = *c;
            }
        }
    }
}

/// Tail duplication: copies the blocks of `region` reachable from `entered` and moves
/// the edges from outside the region into `entered` to the copies.
fn duplicate(
    f: &mut Function,
    region: &HashSet<BlockId>,
    entered: &[BlockId],
    divergent: &mut HashSet<BlockId>,
    budget: &mut usize,
) -> Result<(), String> {
    let pos = f.layout_positions();
    let mut blocks = reach(f, entered, |b| !region.contains(&b));
    blocks.sort_by_key(|b| pos.get(b.index()).copied().unwrap_or(usize::MAX));
    let size: usize = blocks.iter().map(|b| f.cfg[*b].instrs.len()).sum();
    let Some(left) = budget.checked_sub(size) else {
        return Err(format!(
            "control flow too irregular to reconverge: making a region with {} side entries single-entry \
             would copy {size} more instructions (limit {GROWTH_LIMIT}x the function's size)",
            entered.len()
        ));
    };
    *budget = left;
    let map = copy_blocks(f, &blocks);
    for b in &blocks {
        if divergent.contains(b)
            && let Some(&c) = map.get(b)
        {
            divergent.insert(c);
        }
    }
    for &x in entered {
        // `x` is among the blocks copied (`reach` starts at it).
        let copy = *map.get(&x).ok_or_else(|| internal(format!("BB{} was not copied", x.index())))?;
        for pe in f.pred_edges(x) {
            let Some((p, _)) = f.cfg.edge_endpoints(pe) else { continue };
            if !region.contains(&p) && !map.values().any(|c| *c == p) {
                retarget(f, pe, copy).ok_or_else(|| internal(format!("an edge into BB{} is gone", x.index())))?;
            }
        }
    }
    Ok(())
}
