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

use crate::diag::Diag;
use crate::ir::{BlockId, Edge, EdgeKind, Function, for_each_def, for_each_use};
use crate::ptx::ast::Span;
use crate::sass::instr::{Instr, Reg, Src, SrcKind};
use crate::sass::op::{Op, SpecialReg};
use petgraph::algo::dominators::{Dominators, simple_fast};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::NodeIndexable;
use std::collections::{HashMap, HashSet};

/// Post-dominators: dominators of the reversed CFG rooted at a virtual exit that every
/// block without successors (EXIT/RET) flows into. Node `i` is block `i`; the virtual exit
/// is node `node_bound`.
struct PostDom {
    doms: Dominators<NodeIndex>,
    exit: NodeIndex,
}

impl PostDom {
    fn new(f: &Function) -> PostDom {
        PostDom::build(f, |b| {
            let succs = f.succs(b);
            Some(if succs.is_empty() { vec![None] } else { succs.into_iter().map(Some).collect() })
        })
    }

    /// Post-dominators inside a loop (`body`, `header`): edges back to the header lead to
    /// the virtual exit and edges leaving the loop are left out (the threads taking them
    /// wait at the loop's PBK target), so that branches around a `break` join where the
    /// threads staying in the loop meet.
    fn within_loop(f: &Function, body: &HashSet<BlockId>, header: BlockId) -> PostDom {
        PostDom::build(f, |b| {
            body.contains(&b).then(|| {
                f.succs(b).into_iter().filter(|s| body.contains(s)).map(|s| (s != header).then_some(s)).collect()
            })
        })
    }

    /// `succs(b)`: the successors of block `b` (`None` for the virtual exit), or `None` to
    /// leave `b` out.
    fn build(f: &Function, succs: impl Fn(BlockId) -> Option<Vec<Option<BlockId>>>) -> PostDom {
        let n = f.cfg.node_bound();
        let mut g: DiGraph<(), ()> = DiGraph::with_capacity(n + 1, 0);
        for _ in 0..=n {
            g.add_node(());
        }
        let exit = NodeIndex::new(n);
        for &b in &f.layout {
            for s in succs(b).unwrap_or_default() {
                let to = s.map_or(exit, |s| NodeIndex::new(s.index()));
                g.add_edge(to, NodeIndex::new(b.index()), ());
            }
        }
        PostDom { doms: simple_fast(&g, exit), exit }
    }

    /// The immediate post-dominator of `b`; `None` if every path from `b` ends the thread.
    fn ipdom(&self, b: BlockId) -> Option<BlockId> {
        let p = self.doms.immediate_dominator(NodeIndex::new(b.index()))?;
        (p != self.exit).then(|| BlockId::new(p.index()))
    }
}

/// A natural loop: header, body (header included), and its exit edges' targets.
struct Loop {
    header: BlockId,
    body: HashSet<BlockId>,
}

fn natural_loops(f: &Function) -> Vec<Loop> {
    let doms = simple_fast(&f.cfg, f.entry);
    let mut by_header: HashMap<BlockId, HashSet<BlockId>> = HashMap::new();
    for &b in &f.layout {
        for h in f.succs(b) {
            let dominated = doms.dominators(b).is_some_and(|mut it| it.any(|d| d == h));
            if !dominated {
                continue;
            }
            // Back edge b -> h: the body is h plus everything reaching b without h.
            let body = by_header.entry(h).or_insert_with(|| [h].into_iter().collect());
            let mut work = vec![b];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(f.preds(x));
                }
            }
        }
    }
    let mut loops: Vec<Loop> = by_header.into_iter().map(|(header, body)| Loop { header, body }).collect();
    // Outer loops first (larger bodies), deterministic order.
    loops.sort_by_key(|l| (std::cmp::Reverse(l.body.len()), l.header.index()));
    loops
}

/// Which values are the same in every thread of a warp (conservative). Returns the set
/// of divergent conditional branches' blocks as well.
pub fn uniform_values(f: &Function) -> (Vec<bool>, HashSet<BlockId>) {
    let pdom = PostDom::new(f);
    let loops = natural_loops(f);
    let mut divergent: HashSet<BlockId> = HashSet::new();
    loop {
        // Join points of divergent branches and loops with divergent exits.
        let mut nonuniform_params: HashSet<BlockId> = HashSet::new();
        let mut nonuniform_defs_in: HashSet<BlockId> = HashSet::new();
        for &b in &divergent {
            if let Some(j) = pdom.ipdom(b) {
                nonuniform_params.insert(j);
            }
            for l in &loops {
                if l.body.contains(&b) && leaves_divergently(f, &pdom, &l.body, b) {
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
                for &p in &blk.params {
                    let args_uniform = f.pred_edges(b).iter().all(|e| {
                        let k = blk.params.iter().position(|x| *x == p).expect("param");
                        uni[f.cfg[*e].args[k] as usize]
                    });
                    let u = args_uniform && !nonuniform_params.contains(&b) && !nonuniform_defs_in.contains(&b);
                    if !u && uni[p as usize] {
                        uni[p as usize] = false;
                        changed = true;
                    }
                }
                // The carry flag (block-local) is uniform if its writer's inputs are:
                // `ISETP.X` after `IADD RZ.CC, a, -b` compares `a` even though it reads
                // only RZ registers.
                let mut cc_uniform = true;
                for i in &blk.instrs {
                    let mut u = source_uniform(i) && !nonuniform_defs_in.contains(&b);
                    for_each_use(i, |v| u &= uni[v as usize]);
                    if i.op.reads_cc() {
                        u &= cc_uniform;
                    }
                    if i.op.writes_cc() {
                        cc_uniform = u;
                    }
                    if !u {
                        for_each_def(i, |d| {
                            if uni[d as usize] {
                                uni[d as usize] = false;
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
                    Reg::V(v) => uni[v as usize],
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

/// True if the divergent branch ending `b` in loop `body` lets threads leave the loop
/// apart: it exits the loop itself, or its sides meet again only outside the loop (or
/// never), as a branch with a `break` on one side does, whatever the break's condition.
fn leaves_divergently(f: &Function, pdom: &PostDom, body: &HashSet<BlockId>, b: BlockId) -> bool {
    f.succs(b).iter().any(|s| !body.contains(s)) || pdom.ipdom(b).is_none_or(|j| !body.contains(&j))
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

/// Replaces the terminator `BRA target` of `b` (or the guarded branch's `Taken` edge
/// to `target`) by `op` (SYNC or BRK), keeping the CFG edge.
fn retarget_terminator(f: &mut Function, b: BlockId, target: BlockId, op: Op) -> bool {
    let edges = f.succ_edges(b);
    let Some(term) = f.cfg[b].instrs.last().cloned() else { return false };
    if term.op != Op::Bra {
        return false;
    }
    let (_, t0) = f.cfg.edge_endpoints(edges[0]).expect("edge");
    if t0 != target {
        return false;
    }
    let mut new = Instr::new(op, vec![], vec![]);
    new.guard = term.guard;
    *f.cfg[b].instrs.last_mut().expect("terminator") = new;
    true
}

/// Where the divergent branch ending `b` reconverges: its immediate post-dominator (in
/// `pdom`), unless that is past the end of the innermost PBK/BRK loop around `b` (of
/// `brk_loops`: header, body) or nowhere, as for a branch with a `break` on one side; then
/// where the threads staying in that loop meet (the breaking ones wait at the loop's PBK
/// target). Returns the join and that loop, if so.
fn join_of<'a>(
    f: &Function,
    pdom: &PostDom,
    brk_loops: &'a [(BlockId, HashSet<BlockId>)],
    b: BlockId,
) -> (Option<BlockId>, Option<(BlockId, &'a HashSet<BlockId>)>) {
    let inner = brk_loops.iter().filter(|(_, body)| body.contains(&b)).min_by_key(|(_, body)| body.len());
    let j0 = pdom.ipdom(b);
    match inner {
        Some((h, body)) if j0.is_none_or(|j| !body.contains(&j)) => {
            (PostDom::within_loop(f, body, *h).ipdom(b), Some((*h, body)))
        }
        _ => (j0, None),
    }
}

/// Puts a block holding `SYNC` on the fall-through edge from `b` to `target`; false if
/// there is none.
fn sync_on_edge(f: &mut Function, b: BlockId, target: BlockId) -> bool {
    let Some(e) = f
        .succ_edges(b)
        .into_iter()
        .find(|e| f.cfg[*e].kind == EdgeKind::Fallthrough && f.cfg.edge_endpoints(*e).expect("edge").1 == target)
    else {
        return false;
    };
    let n = f.new_block("");
    let origin = f.cfg[b].origins.last().copied().unwrap_or_default();
    f.cfg[n].push(Instr::new(Op::Sync, vec![], vec![]), origin);
    let Edge { args, .. } = f.cfg.remove_edge(e).expect("edge");
    f.cfg.add_edge(b, n, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
    f.cfg.add_edge(n, target, Edge { kind: EdgeKind::Taken, args });
    let pos = f.layout.iter().position(|x| *x == b).expect("layout");
    f.layout.insert(pos + 1, n);
    true
}

/// Inserts `i` just before the terminator of `b`.
fn insert_before_terminator(f: &mut Function, b: BlockId, i: Instr) {
    let blk = &mut f.cfg[b];
    let at = blk.instrs.len() - 1;
    let origin = blk.origins[at];
    blk.instrs.insert(at, i);
    blk.origins.insert(at, origin);
}

/// Routes the loop exits `exits` (edges leaving the loop, to `target` directly or through
/// jump-only blocks, for which `via_jump` holds) to a new block `BRA target` that takes
/// `target`'s block parameters; returns it.
fn land(
    f: &mut Function,
    exits: &[(BlockId, BlockId)],
    target: BlockId,
    via_jump: impl Fn(BlockId, &Function) -> bool,
) -> BlockId {
    let x = f.new_block("");
    let params: Vec<u32> = f.cfg[target]
        .params
        .clone()
        .iter()
        .map(|p| match f.new_vreg(f.vregs[*p as usize]) {
            Reg::V(v) => v,
            r => unreachable!("new_vreg gives a virtual register, not {r:?}"),
        })
        .collect();
    f.cfg[x].params = params.clone();
    let mut origin = Span::default();
    let mut entering: Vec<EdgeIndex> = vec![];
    for &(b, s) in exits {
        let from = if via_jump(s, f) { s } else { b };
        for e in f.succ_edges(from) {
            if f.cfg.edge_endpoints(e).expect("edge").1 == target && !entering.contains(&e) {
                entering.push(e);
            }
        }
    }
    for e in entering {
        let (src, _) = f.cfg.edge_endpoints(e).expect("edge");
        let Edge { kind, args } = f.cfg.remove_edge(e).expect("edge");
        origin = f.cfg[src].origins.last().copied().unwrap_or(origin);
        if kind == EdgeKind::Taken {
            let term = f.cfg[src].instrs.last_mut().expect("a taken edge has a branch");
            term.srcs[0] = Src::label(x.index() as u32);
            f.cfg.add_edge(src, x, Edge { kind, args });
        } else {
            // A fall-through exit: a jump block after `src` carries it to the landing block.
            let j = f.new_block("");
            f.cfg[j].push(Instr::new(Op::Bra, vec![], vec![Src::label(x.index() as u32)]), origin);
            f.cfg.add_edge(src, j, Edge { kind, args: vec![] });
            f.cfg.add_edge(j, x, Edge { kind: EdgeKind::Taken, args });
            let pos = f.layout.iter().position(|b| *b == src).expect("in layout");
            f.layout.insert(pos + 1, j);
        }
    }
    f.cfg[x].push(Instr::new(Op::Bra, vec![], vec![Src::label(target.index() as u32)]), origin);
    f.cfg.add_edge(x, target, Edge { kind: EdgeKind::Taken, args: params });
    f.layout.push(x);
    x
}

/// Inserts SSY/SYNC and PBK/BRK for divergent branches. Returns an error diagnostic for
/// divergent control flow it cannot structure (loops with several exit targets or
/// several entries).
pub fn insert(f: &mut Function, at: Span) -> Result<(), Diag> {
    let (_, divergent) = uniform_values(f);
    if divergent.is_empty() {
        return Ok(());
    }
    let loops = natural_loops(f);
    let pdom = PostDom::new(f);
    let mut loop_exit_branches: HashSet<BlockId> = HashSet::new();
    // Loops given PBK/BRK: (header, body).
    let mut brk_loops: Vec<(BlockId, HashSet<BlockId>)> = vec![];
    for l in &loops {
        let exits_of = |f: &Function| -> Vec<(BlockId, BlockId)> {
            let mut v: Vec<(BlockId, BlockId)> = l
                .body
                .iter()
                .flat_map(|b| f.succs(*b).into_iter().filter(|s| !l.body.contains(s)).map(move |s| (*b, s)))
                .collect();
            v.sort();
            v
        };
        let mut exits = exits_of(f);
        let divergent_exit = l.body.iter().any(|b| divergent.contains(b) && leaves_divergently(f, &pdom, &l.body, *b));
        if !divergent_exit {
            continue;
        }
        let mut landing: Option<BlockId> = None;
        // Look through jump-only exit blocks to the real exit target.
        let real = |s: BlockId, f: &Function, landing: Option<BlockId>| {
            let blk = &f.cfg[s];
            if Some(s) == landing {
                s
            } else if blk.instrs.len() == 1
                && blk.instrs[0].op == Op::Bra
                && blk.instrs[0].guard.is_none()
                && blk.params.is_empty()
            {
                f.succs(s)[0]
            } else {
                s
            }
        };
        let targets: HashSet<BlockId> = exits.iter().map(|(_, s)| real(*s, f, None)).collect();
        if targets.len() != 1 {
            return Err(Diag::error(at, format!("`{}`: a loop with a divergent exit leaves to {} different places", f.name, targets.len()))
                .note("ptx2sass reconverges divergent loops with PBK/BRK, which needs a single exit target; this is not supported yet"));
        }
        let mut target = *targets.iter().next().expect("one target");
        // The exit target is also the join of a divergent branch around the loop (a loop in
        // one arm of an if/else): the loop's threads must SYNC there like the other arm's,
        // so they leave the loop to a landing block of their own (the PBK target) whose
        // `BRA target` becomes that SYNC.
        if divergent.iter().any(|d| !l.body.contains(d) && join_of(f, &pdom, &brk_loops, *d).0 == Some(target)) {
            let x = land(f, &exits, target, |s, f| real(s, f, None) != s);
            landing = Some(x);
            target = x;
            exits = exits_of(f);
        }
        let real = |s: BlockId, f: &Function| real(s, f, landing);
        let outside_preds: Vec<BlockId> = f.preds(l.header).into_iter().filter(|p| !l.body.contains(p)).collect();
        if outside_preds.len() != 1 || f.succs(outside_preds[0]).len() != 1 {
            return Err(Diag::error(at, format!("`{}`: a loop with a divergent exit has several entries", f.name))
                .note("ptx2sass needs a single preheader to place PBK; this is not supported yet"));
        }
        insert_before_terminator(
            f,
            outside_preds[0],
            Instr::new(Op::Pbk, vec![], vec![Src::label(target.index() as u32)]),
        );
        brk_loops.push((l.header, l.body.clone()));
        for (b, s) in exits {
            loop_exit_branches.insert(b);
            if real(s, f) != s {
                // A jump-only block on the exit edge: its BRA becomes BRK.
                let t = f.succs(s)[0];
                retarget_terminator(f, s, t, Op::Brk);
            } else if f.succ_edges(b).len() == 1
                || f.cfg[f.succ_edges(b)[0]].kind == EdgeKind::Taken && f.succs(b)[0] == s
            {
                retarget_terminator(f, b, s, Op::Brk);
            } else {
                // The fall-through edge leaves the loop: put a BRK block after `b`.
                let e = f.succ_edges(b)[1];
                let n = f.new_block("");
                let origin = f.cfg[b].origins.last().copied().unwrap_or_default();
                f.cfg[n].push(Instr::new(Op::Brk, vec![], vec![]), origin);
                let args = f.cfg[e].args.clone();
                f.cfg.remove_edge(e);
                f.cfg.add_edge(b, n, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
                f.cfg.add_edge(n, s, Edge { kind: EdgeKind::Taken, args });
                let pos = f.layout.iter().position(|x| *x == b).expect("layout");
                f.layout.insert(pos + 1, n);
            }
        }
        // The loops' bodies now, with the blocks added on this loop's exits (inside the
        // loops around it).
        let now = natural_loops(f);
        for (h, body) in brk_loops.iter_mut() {
            if let Some(l) = now.iter().find(|l| l.header == *h) {
                body.clone_from(&l.body);
            }
        }
    }
    // If-regions: outermost first (layout order approximates it for structured code).
    let pdom = PostDom::new(f);
    let mut joins_open: Vec<(BlockId, HashSet<BlockId>)> = vec![];
    let order: Vec<BlockId> =
        f.layout.iter().copied().filter(|b| divergent.contains(b) && !loop_exit_branches.contains(b)).collect();
    for b in order {
        let (j, within) = join_of(f, &pdom, &brk_loops, b);
        let Some(j) = j else { continue };
        // Already inside a region that joins at the same place: its SYNCs cover us.
        if joins_open.iter().any(|(jj, region)| *jj == j && region.contains(&b)) {
            continue;
        }
        // The region: blocks reachable from b without passing j (nor leaving the loop).
        let mut region: HashSet<BlockId> = HashSet::new();
        let mut work = vec![b];
        while let Some(x) = work.pop() {
            if x == j || !region.insert(x) {
                continue;
            }
            let succs = f.succs(x);
            work.extend(succs.into_iter().filter(|s| within.is_none_or(|(h, body)| *s != h && body.contains(s))));
        }
        insert_before_terminator(f, b, Instr::new(Op::Ssy, vec![], vec![Src::label(j.index() as u32)]));
        for p in f.preds(j) {
            // A block that cannot end in the SYNC (`@P BRK` falling through to the join)
            // gets a SYNC block on its edge to the join.
            if region.contains(&p) && !retarget_terminator(f, p, j, Op::Sync) && !sync_on_edge(f, p, j) {
                return Err(Diag::error(
                    at,
                    format!("`{}`: cannot place SYNC before a join (internal limitation)", f.name),
                ));
            }
        }
        joins_open.push((j, region));
    }
    Ok(())
}
