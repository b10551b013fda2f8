//! CFG analyses and edits shared by the control-flow passes: reverse post-order,
//! dominators, post-dominators (also modulo exits that do nothing warp-synchronous), the
//! natural-loop forest, and edge surgery that keeps the IR's terminator/edge/layout
//! invariants ([`crate::ir`]).
//!
//! Every analysis is computed once per use (linear, or `O(m log n)` for the dominator
//! trees, [`crate::ir::dom`]); passes that edit the CFG recompute them between rounds,
//! never per query.
//!
//! Dense tables are indexed by `BlockId::index()` (sized by the graph's node bound) or by
//! loop number (sized by the forest), read through `get`/`get_mut`, whose `None` cannot
//! happen for the blocks and loops of the function analysed; edits whose edge or block
//! is missing do nothing and return `None` (the IR verifier, run after lowering, reports
//! any inconsistency as an internal error).
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub use crate::ir::dom::DomTree;
use crate::ir::{BlockId, Edge, EdgeKind, Function};
use crate::sass::instr::{Instr, Src, SrcKind};
use crate::sass::op::Op;
use petgraph::graph::EdgeIndex;
use petgraph::visit::NodeIndexable;
use std::collections::HashSet;

/// True for the instructions whose effect depends on which threads of the warp execute
/// them together: `BAR.SYNC`/`BAR.ARV`/`BAR.RED` (SPA 5.0 barriers count warps, so a warp
/// arriving in parts counts as all of it), `SHFL` and `VOTE` (they read other lanes'
/// values or the active mask). The one place this property is defined: reconvergence must
/// be complete before them (`docs/reconvergence.md`, invariant 3).
pub fn warp_synchronous(op: Op) -> bool {
    matches!(op, Op::Bar { .. } | Op::BarRed(_) | Op::Shfl(_) | Op::Vote(_))
}

/// Sets `seen[b]`; true if it was not set (false for a block outside the table).
fn first_visit(seen: &mut [bool], b: BlockId) -> bool {
    match seen.get_mut(b.index()) {
        Some(s) if !*s => {
            *s = true;
            true
        }
        _ => false,
    }
}

/// `table[b]` of a dense per-block flag table (false outside it).
fn flag(table: &[bool], b: BlockId) -> bool {
    table.get(b.index()).copied().unwrap_or(false)
}

/// Blocks in reverse post-order from the entry (unreachable blocks are left out).
pub fn reverse_post_order(f: &Function) -> Vec<BlockId> {
    let n = f.cfg.node_bound();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    // Iterative DFS: (block, its successors not yet followed).
    let mut stack: Vec<(BlockId, std::vec::IntoIter<BlockId>)> = vec![];
    if first_visit(&mut seen, f.entry) {
        stack.push((f.entry, f.succs(f.entry).into_iter()));
    }
    while let Some((b, succs)) = stack.last_mut() {
        let b = *b;
        if let Some(s) = succs.next() {
            if first_visit(&mut seen, s) {
                stack.push((s, f.succs(s).into_iter()));
            }
        } else {
            post.push(b);
            stack.pop();
        }
    }
    post.reverse();
    post
}

/// Dominators of the CFG from the entry (indexed by `BlockId::index()`).
pub fn dominators(f: &Function) -> DomTree {
    DomTree::of_cfg(f)
}

/// True if `a` dominates `b` (reflexive; false when `b` is unreachable). `O(1)`.
pub fn dominates(doms: &DomTree, a: BlockId, b: BlockId) -> bool {
    doms.dominates(a.index(), b.index())
}

/// Post-dominators: dominators of the reversed CFG rooted at a virtual exit. Node `i` is
/// block `i`; the virtual exit is node `node_bound`.
pub struct PostDom {
    doms: DomTree,
    exit: usize,
}

impl PostDom {
    /// Post-dominators of the whole CFG: every block without successors (EXIT/RET) flows
    /// into the virtual exit, and so does the latch of an endless loop (see `build`): a
    /// block holding a guarded `@P EXIT` (`opt::thread_exits` makes one of a branch to a
    /// `ret` block, before reconvergence) before any other. Otherwise a loop left only by
    /// such an exit looked endless, its latch post-dominated the blocks before the exit, and
    /// a divergent spin sharing that latch reconverged after a `bar.sync` the exit's block
    /// holds (`Spin`'s `SharedLatch` shapes in tests/reconverge_shapes.rs: the simulator
    /// saw the barrier reached by part of a warp).
    pub fn new(f: &Function) -> PostDom {
        PostDom::build(
            f,
            |b| {
                let succs = f.succs(b);
                Some(if succs.is_empty() { vec![None] } else { succs.into_iter().map(Some).collect() })
            },
            |b| f.cfg[b].instrs.iter().any(|i| matches!(i.op, Op::Exit | Op::Ret)),
        )
    }

    /// Post-dominators modulo quiet exits: blocks from which no warp-synchronous
    /// instruction can be reached (`quiet`, see [`quiet_blocks`]) are left out, and a
    /// block with no other successor flows into the virtual exit. Threads that take such a
    /// path only exit, so where they would "meet" the others does not matter; the others'
    /// join is where they meet among themselves.
    pub fn modulo_quiet(f: &Function, quiet: &[bool]) -> PostDom {
        PostDom::build(
            f,
            |b| {
                if flag(quiet, b) {
                    return None;
                }
                let succs: Vec<Option<BlockId>> =
                    f.succs(b).into_iter().filter(|s| !flag(quiet, *s)).map(Some).collect();
                Some(if succs.is_empty() { vec![None] } else { succs })
            },
            |_| false,
        )
    }

    /// `succs(b)`: the successors of block `b` (`None` for the virtual exit), or `None` to
    /// leave `b` out; `first(b)`: `b` is among the first to flow into the virtual exit when
    /// it reaches none.
    fn build(
        f: &Function,
        succs: impl Fn(BlockId) -> Option<Vec<Option<BlockId>>>,
        first: impl Fn(BlockId) -> bool,
    ) -> PostDom {
        let n = f.cfg.node_bound();
        // The reversed CFG: node `i` is block `i`, node `n` the virtual exit.
        let mut g: Vec<Vec<usize>> = vec![vec![]; n];
        g.push(vec![]);
        let mut kept = vec![false; n];
        for &b in &f.layout {
            if let Some(ss) = succs(b) {
                first_visit(&mut kept, b);
                for s in ss {
                    if let Some(preds) = g.get_mut(s.map_or(n, |s| s.index())) {
                        preds.push(b.index());
                    }
                }
            }
        }
        // Blocks that reach no exit (endless loops, `for (;;)` around a barrier): the
        // latest of them in reverse post-order also flows into the virtual exit, repeatedly
        // until every block is reached (LLVM's post-dominator tree does the same with its
        // "reverse-unreachable" roots). For an endless loop that is its latch, so paths
        // inside it meet where each iteration ends, and a loop nested in it whose exit is
        // the outer back edge gets that edge's block as its PBK target
        // (tests/data/fuzz/reconverge_nonterminating_min.ptx). Linear.
        let mut seen = vec![false; g.len()];
        let mut work = vec![n];
        let mut rpo = reverse_post_order(f);
        let mut firsts: Vec<BlockId> = rpo.iter().copied().filter(|b| first(*b)).collect();
        loop {
            while let Some(x) = work.pop() {
                if let Some(s) = seen.get_mut(x)
                    && !*s
                {
                    *s = true;
                    if let Some(preds) = g.get(x) {
                        work.extend(preds.iter().copied().filter(|p| seen.get(*p) == Some(&false)));
                    }
                }
            }
            let Some(b) = firsts.pop().or_else(|| rpo.pop()) else { break };
            if flag(&kept, b)
                && seen.get(b.index()) == Some(&false)
                && let Some(roots) = g.get_mut(n)
            {
                roots.push(b.index());
                work.push(b.index());
            }
        }
        PostDom { doms: DomTree::new(&g, n), exit: n }
    }

    /// The immediate post-dominator of `b`; `None` if every path from `b` ends the thread
    /// without meeting the others (or `b` was left out).
    pub fn ipdom(&self, b: BlockId) -> Option<BlockId> {
        let p = self.doms.idom(b.index())?;
        (p != self.exit).then(|| BlockId::new(p))
    }

    /// True if `a` post-dominates `b` (reflexive). `O(1)`.
    pub fn post_dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.doms.dominates(a.index(), b.index())
    }

    /// The nearest common post-dominator of `blocks` (`None` if it is the virtual exit or
    /// a block was left out).
    pub fn common(&self, blocks: &[BlockId]) -> Option<BlockId> {
        let mut common: Option<usize> = None;
        for &b in blocks {
            let i = b.index();
            if !self.doms.contains(i) {
                return None;
            }
            common = Some(match common {
                None => i,
                Some(mut c) => {
                    // Up from the common post-dominator so far to the first that also
                    // post-dominates `b` (the virtual exit, the root, always does).
                    while !self.doms.dominates(c, i) {
                        c = self.doms.idom(c)?;
                    }
                    c
                }
            });
        }
        let first = common?;
        (first != self.exit).then(|| BlockId::new(first))
    }
}

/// Where a block's paths meet within one iteration of a loop ([`IterationPostDom`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterMeet {
    /// At this block of the loop.
    Block(BlockId),
    /// Only at the loop's header, in the next iteration.
    NextIteration,
    /// Nowhere in the loop (they all leave it, or exit).
    Never,
}

/// Post-dominators within one iteration of a loop: the graph of the loop's body where
/// edges back to the header go to a "next iteration" node and edges leaving the loop are
/// left out (the threads taking them wait at the loop's PBK target, or leave the loop
/// together when it needs none).
///
/// Answers [`IterationPostDom::ipdom`] for the blocks whose innermost loop this is. Built
/// by [`IterationPostDom::for_forest`] for every loop at once on a collapsed body: the
/// loop's own blocks plus one node per child loop (its header) whose successors are the
/// child's exits. Every edge of the CFG is in one loop's graph only, so all loops take
/// `O(m log n)` together, not `O(n x loop depth)` (a nest of 200 loops gave its innermost
/// blocks to 200 bodies). Collapsing keeps the answers: a path from an own block into a
/// child passes its header first, and the header reaches every exit within the child, so
/// a node post-dominates an own block in the collapsed graph exactly when it does in the
/// whole body; and no block inside a child other than its header is ever the immediate
/// post-dominator of an own block (every path to it passes the header before it).
pub struct IterationPostDom {
    doms: DomTree,
    index: std::collections::HashMap<BlockId, usize>,
    blocks: Vec<BlockId>,
    next: usize,
    root: usize,
}

impl IterationPostDom {
    /// The analysis of every loop of `forest` (indexed like `forest.loops`).
    pub fn for_forest(f: &Function, forest: &LoopForest) -> Vec<IterationPostDom> {
        let nl = forest.loops.len();
        // Depth in the forest (parents come before children in `forest.loops`; a depth is
        // below the number of loops, so `+ 1` saturates never).
        let mut depth: Vec<usize> = Vec::with_capacity(nl);
        for lp in &forest.loops {
            let d = lp.parent.and_then(|p| depth.get(p)).map_or(0, |d| d.saturating_add(1));
            depth.push(d);
        }
        let parent = |k: usize| forest.loops.get(k).and_then(|lp| lp.parent);
        let innermost = |b: BlockId| forest.innermost.get(b.index()).copied().flatten();
        // The node standing for block `b` in the graph of loop `l` (a loop containing
        // `b`): `b` itself, or the header of the child of `l` that contains `b` (`None`
        // if `l` does not contain `b`).
        let rep = |b: BlockId, l: usize| -> Option<BlockId> {
            let mut k = innermost(b)?;
            if k == l {
                return Some(b);
            }
            loop {
                let lp = forest.loops.get(k)?;
                if lp.parent == Some(l) {
                    return Some(lp.header);
                }
                k = lp.parent?;
            }
        };
        // A loop holding a block not reached from the entry (bodies are found by walking
        // predecessors) may not be entered through its header alone: such loops (and the
        // loops around them) are analysed on their whole bodies.
        let reached = f.reached_from_entry();
        let mut whole = vec![false; nl];
        for b in f.cfg.node_indices() {
            let mut l = innermost(b).filter(|_| !flag(&reached, b));
            while let Some(w) = l.and_then(|k| whole.get_mut(k)).filter(|w| !**w) {
                *w = true;
                l = l.and_then(parent);
            }
        }
        // Nodes of each loop's graph: its own blocks and its children's headers; the
        // blocks in loops, each with its innermost loop.
        let mut blocks: Vec<Vec<BlockId>> = vec![vec![]; nl];
        let nodes: Vec<(BlockId, usize)> = f.cfg.node_indices().filter_map(|b| innermost(b).map(|l| (b, l))).collect();
        for &(b, l) in &nodes {
            if forest.loops.get(l).is_some_and(|lp| lp.header == b)
                && let Some(own) = parent(l).and_then(|p| blocks.get_mut(p))
            {
                own.push(b);
            }
            if let Some(own) = blocks.get_mut(l) {
                own.push(b);
            }
        }
        for b in blocks.iter_mut() {
            b.sort();
        }
        let index: Vec<std::collections::HashMap<BlockId, usize>> =
            blocks.iter().map(|bs| bs.iter().enumerate().map(|(i, b)| (*b, i)).collect()).collect();
        // The reversed graphs: node `i` is `blocks[l][i]`; `next` and `root` follow.
        let mut g: Vec<Vec<Vec<usize>>> = blocks.iter().map(|bs| reversed_with_next_and_root(bs.len())).collect();
        for &(u, lu) in &nodes {
            for v in f.succs(u) {
                // The innermost loop containing both ends: the edge's only graph.
                let (mut a, mut c) = (Some(lu), innermost(v));
                while a != c {
                    match (a, c) {
                        (Some(x), Some(y)) if depth.get(x) >= depth.get(y) => a = parent(x),
                        (Some(_), Some(y)) => c = parent(y),
                        (Some(x), None) => a = parent(x),
                        (None, _) => break,
                    }
                }
                let Some(l) = a.filter(|_| a == c) else { continue };
                let (Some(lp), Some(own), Some(ix), Some(gl)) =
                    (forest.loops.get(l), blocks.get(l), index.get(l), g.get_mut(l))
                else {
                    continue;
                };
                let node = |b: BlockId| rep(b, l).and_then(|r| ix.get(&r)).copied();
                let Some(from) = node(u) else { continue };
                let to = if v == lp.header { Some(own.len()) } else { node(v) };
                if let Some(preds) = to.and_then(|t| gl.get_mut(t)) {
                    preds.push(from);
                }
            }
        }
        g.into_iter()
            .zip(blocks)
            .zip(index)
            .zip(forest.loops.iter().zip(whole))
            .map(|(((g, blocks), index), (lp, whole))| {
                if whole {
                    return IterationPostDom::new(f, &lp.body, lp.header);
                }
                let next = blocks.len();
                let root = g.len().saturating_sub(1);
                IterationPostDom { doms: DomTree::new(&g, root), index, blocks, next, root }
            })
            .collect()
    }

    /// The analysis of the loop `body` with header `header` on the whole body
    /// (`O(|body|)`): what [`IterationPostDom::for_forest`] computes, which uses it for
    /// loops holding blocks not reached from the entry.
    pub fn new<S: std::hash::BuildHasher>(
        f: &Function,
        body: &HashSet<BlockId, S>,
        header: BlockId,
    ) -> IterationPostDom {
        let mut blocks: Vec<BlockId> = body.iter().copied().collect();
        blocks.sort();
        let index: std::collections::HashMap<BlockId, usize> =
            blocks.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        // The reversed body: node `i` is `blocks[i]`; `next` and `root` follow.
        let mut g = reversed_with_next_and_root(blocks.len());
        let (next, root) = (blocks.len(), g.len().saturating_sub(1));
        for (i, &b) in blocks.iter().enumerate() {
            for s in f.succs(b) {
                let to = if s == header {
                    next
                } else if let Some(&t) = index.get(&s) {
                    t
                } else {
                    continue;
                };
                if let Some(preds) = g.get_mut(to) {
                    preds.push(i);
                }
            }
        }
        IterationPostDom { doms: DomTree::new(&g, root), index, blocks, next, root }
    }

    /// Where the paths from `b` (a block whose innermost loop this is) meet within the
    /// iteration.
    pub fn ipdom(&self, b: BlockId) -> IterMeet {
        let Some(&i) = self.index.get(&b) else { return IterMeet::Never };
        match self.doms.idom(i) {
            None => IterMeet::Never,
            Some(p) if p == self.root => IterMeet::Never,
            Some(p) if p == self.next => IterMeet::NextIteration,
            Some(p) => self.blocks.get(p).map_or(IterMeet::Never, |b| IterMeet::Block(*b)),
        }
    }
}

/// The adjacency of a reversed loop graph of `n` blocks before its edges: nodes `0..n`
/// the blocks, `n` the "next iteration" node, `n + 1` the root, whose one edge goes to
/// "next iteration".
fn reversed_with_next_and_root(n: usize) -> Vec<Vec<usize>> {
    let mut g = vec![vec![]; n];
    g.push(vec![]);
    g.push(vec![n]);
    g
}

/// Blocks from which no warp-synchronous instruction ([`warp_synchronous`]) can be
/// reached, indexed by `NodeIndex::index()`: threads there only compute, access memory and
/// exit, so they never need to wait for the rest of the warp. One backward search.
pub fn quiet_blocks(f: &Function) -> Vec<bool> {
    let n = f.cfg.node_bound();
    let mut loud = vec![false; n];
    let mut work: Vec<BlockId> =
        f.layout.iter().copied().filter(|&b| f.cfg[b].instrs.iter().any(|i| warp_synchronous(i.op))).collect();
    for b in &work {
        first_visit(&mut loud, *b);
    }
    while let Some(b) = work.pop() {
        for p in f.preds(b) {
            if first_visit(&mut loud, p) {
                work.push(p);
            }
        }
    }
    let mut quiet = vec![false; n];
    for &b in &f.layout {
        if let Some(q) = quiet.get_mut(b.index()) {
            *q = !flag(&loud, b);
        }
    }
    quiet
}

/// One natural loop of the loop-nesting forest.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The loop header (dominates the body).
    pub header: BlockId,
    /// Blocks of the loop, header included (`FxHash`: hashed once per block and
    /// enclosing loop when the forest is built; read by membership tests).
    pub body: rustc_hash::FxHashSet<BlockId>,
    /// Index of the innermost enclosing loop.
    pub parent: Option<usize>,
}

/// The natural loops of a reducible CFG (one per header: back edges to the same header
/// share a loop), outermost first.
#[derive(Clone, Debug, Default)]
pub struct LoopForest {
    /// Loops, sorted by decreasing body size (parents before children).
    pub loops: Vec<Loop>,
    /// Innermost loop of each block, indexed by `NodeIndex::index()`.
    pub innermost: Vec<Option<usize>>,
}

impl LoopForest {
    /// The loops of `f`. Back edges are edges to a dominator; in a reducible CFG
    /// (`cfg::reducible`) every cycle has one.
    pub fn new(f: &Function, doms: &DomTree) -> LoopForest {
        let mut by_header: rustc_hash::FxHashMap<BlockId, rustc_hash::FxHashSet<BlockId>> = Default::default();
        let mut work: Vec<BlockId> = vec![];
        for &b in &f.layout {
            // Successors and predecessors straight from the graph: the body is a set, so
            // the order of the walk does not matter (no sorted lists allocated per block).
            for h in f.cfg.neighbors(b) {
                if !dominates(doms, h, b) {
                    continue;
                }
                // Back edge b -> h: the body is h plus everything reaching b without h.
                let body = by_header.entry(h).or_insert_with(|| [h].into_iter().collect());
                work.push(b);
                while let Some(x) = work.pop() {
                    if body.insert(x) {
                        work.extend(f.cfg.neighbors_directed(x, petgraph::Direction::Incoming));
                    }
                }
            }
        }
        let mut loops: Vec<Loop> =
            by_header.into_iter().map(|(header, body)| Loop { header, body, parent: None }).collect();
        loops.sort_by_key(|l| (std::cmp::Reverse(l.body.len()), l.header.index()));
        let mut innermost = vec![None; f.cfg.node_bound()];
        for (k, lp) in loops.iter_mut().enumerate() {
            lp.parent = innermost.get(lp.header.index()).copied().flatten();
            for b in &lp.body {
                if let Some(l) = innermost.get_mut(b.index()) {
                    *l = Some(k);
                }
            }
        }
        LoopForest { loops, innermost }
    }

    /// True if loop `l` contains block `b`.
    pub fn contains(&self, l: usize, b: BlockId) -> bool {
        self.loops.get(l).is_some_and(|lp| lp.body.contains(&b))
    }

    /// The loops containing `b`, innermost first.
    pub fn enclosing(&self, b: BlockId) -> Vec<usize> {
        let mut out = vec![];
        let mut l = self.innermost.get(b.index()).copied().flatten();
        while let Some(k) = l {
            out.push(k);
            l = self.loops.get(k).and_then(|lp| lp.parent);
        }
        out
    }

    /// The edges leaving loop `l`: (from, to), sorted.
    pub fn exits(&self, f: &Function, l: usize) -> Vec<(BlockId, BlockId)> {
        let Some(body) = self.loops.get(l).map(|lp| &lp.body) else { return vec![] };
        let mut v: Vec<(BlockId, BlockId)> = body
            .iter()
            .flat_map(|b| f.succs(*b).into_iter().filter(|s| !body.contains(s)).map(move |s| (*b, s)))
            .collect();
        v.sort();
        v
    }

    /// The loop's preheader: its header's only predecessor outside the loop, when that
    /// block has the header as its only successor.
    pub fn preheader(&self, f: &Function, l: usize) -> Option<BlockId> {
        let lp = self.loops.get(l)?;
        let outside: Vec<BlockId> = f.preds(lp.header).into_iter().filter(|p| !lp.body.contains(p)).collect();
        match outside.as_slice() {
            [p] if f.succs(*p).len() == 1 => Some(*p),
            _ => None,
        }
    }
}

/// Sets the label of `b`'s terminator (a `BRA`, `SYNC` or `BRK` with a taken edge) to `t`
/// (a block without a terminator keeps none: the IR verifier reports it).
fn set_label(f: &mut Function, b: BlockId, t: BlockId) {
    if let Some(term) = f.cfg[b].instrs.last_mut()
        && term.op == Op::Bra
        && let Some(label) = term.srcs.first_mut()
    {
        *label = Src::label(t.index() as u32);
    }
}

/// Moves edge `e` to target `to` (same source, kind and arguments), retargeting the
/// branch of a taken edge. A fall-through edge must then be fixed with
/// [`fix_fallthroughs`] unless `to` follows the source in the layout. Returns the new edge
/// (`None`, and nothing changed, if `e` is not in the graph).
pub fn retarget(f: &mut Function, e: EdgeIndex<u32>, to: BlockId) -> Option<EdgeIndex<u32>> {
    let (from, _) = f.cfg.edge_endpoints(e)?;
    let w = f.cfg.remove_edge(e)?;
    if w.kind == EdgeKind::Taken {
        set_label(f, from, to);
    }
    Some(f.cfg.add_edge(from, to, w))
}

/// [`split_edge`], then [`retarget`] the new block's edge to `to`: `instrs` run on the
/// way from `e`'s source to `to`. Returns the new block (`None` if `e` is not in the
/// graph).
pub fn split_and_retarget(f: &mut Function, e: EdgeIndex<u32>, instrs: Vec<Instr>, to: BlockId) -> Option<BlockId> {
    let n = split_edge(f, e, instrs)?;
    let out = f.succ_edges(n).first().copied()?;
    retarget(f, out, to)?;
    Some(n)
}

/// Puts a new block holding `instrs` and then `BRA target` on edge `e` (the edge's
/// arguments move to the new block's edge). A block on a fall-through edge goes right
/// after its source in the layout, one on a taken edge at the end. Returns it (`None`, and
/// nothing changed, if `e` is not in the graph).
pub fn split_edge(f: &mut Function, e: EdgeIndex<u32>, instrs: Vec<Instr>) -> Option<BlockId> {
    let (from, to) = f.cfg.edge_endpoints(e)?;
    let Edge { kind, args } = f.cfg.remove_edge(e)?;
    let origin = f.cfg[from].origins.last().copied().unwrap_or_default();
    let n = f.new_block("");
    for i in instrs {
        f.cfg[n].push(i, origin);
    }
    f.cfg[n].push(Instr::new(Op::Bra, vec![], vec![Src::label(to.index() as u32)]), origin);
    f.cfg.add_edge(from, n, Edge { kind, args: vec![] });
    f.cfg.add_edge(n, to, Edge { kind: EdgeKind::Taken, args });
    if kind == EdgeKind::Taken {
        set_label(f, from, n);
        f.layout.push(n);
    } else {
        // Right after `from` (`pos < layout.len()`, so `pos + 1` is at most the length).
        match f.layout.iter().position(|x| *x == from) {
            Some(pos) => f.layout.insert(pos.saturating_add(1), n),
            None => f.layout.push(n),
        }
    }
    Some(n)
}

/// Restores "a fall-through successor follows its block in the layout": a block whose
/// fall-through successor is elsewhere gets a jump block after it. Returns true if any
/// was added.
pub fn fix_fallthroughs(f: &mut Function) -> bool {
    let mut changed = false;
    let mut k = 0;
    // The layout grows behind `k` only (a jump block goes right after `b`); `k` is below
    // its length, so `k + 1` saturates never.
    while let Some(&b) = f.layout.get(k) {
        k = k.saturating_add(1);
        let next = f.layout.get(k).copied();
        let ft = f.succ_edges(b).into_iter().find(|e| f.cfg[*e].kind == EdgeKind::Fallthrough);
        if let Some((e, (_, t))) = ft.and_then(|e| Some((e, f.cfg.edge_endpoints(e)?)))
            && Some(t) != next
            && split_edge(f, e, vec![]).is_some()
        {
            changed = true;
        }
    }
    changed
}

/// The label operand of a branch-like instruction.
pub fn label_of(i: &Instr) -> Option<BlockId> {
    match i.srcs.first().map(|s| s.kind) {
        Some(SrcKind::Label(t)) => Some(BlockId::new(t as usize)),
        _ => None,
    }
}

/// Forward reach from the blocks `from` (included unless `stop` holds for them), never
/// entering blocks for which `stop` holds; the blocks reached, in discovery order.
pub fn reach(f: &Function, from: &[BlockId], stop: impl Fn(BlockId) -> bool) -> Vec<BlockId> {
    let mut seen: HashSet<BlockId> = HashSet::new();
    let mut order = vec![];
    let mut work: Vec<BlockId> = from.iter().rev().copied().collect();
    while let Some(b) = work.pop() {
        if stop(b) || !seen.insert(b) {
            continue;
        }
        order.push(b);
        for s in f.succs(b).into_iter().rev() {
            if !seen.contains(&s) {
                work.push(s);
            }
        }
    }
    order
}

/// Copies `blocks` (instructions, origins, `uni` flags; not block parameters, so before
/// SSA): edges between copied blocks go between the copies, the others keep their
/// targets. Copies are appended to the layout in the order given (a fall-through pair
/// stays adjacent when consecutive there). Returns the map from block to copy.
pub fn copy_blocks(f: &mut Function, blocks: &[BlockId]) -> std::collections::HashMap<BlockId, BlockId> {
    let mut map = std::collections::HashMap::new();
    for &b in blocks {
        let c = f.new_block(String::new());
        let src = f.cfg[b].clone();
        let mut instrs = src.instrs;
        // Each copy of a carry-flag writer defines a value of its own (`ir::cc`: a value
        // is defined once; CC values never cross a block, so the copy's readers are the
        // ones to follow).
        let mut renamed: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for i in &mut instrs {
            if let Some(r) = i.cc.read
                && let Some(&n) = renamed.get(&r)
            {
                i.cc.read = Some(n);
            }
            if let Some(d) = i.cc.def {
                let n = f.new_cc();
                renamed.insert(d, n);
                i.cc.def = Some(n);
            }
        }
        f.cfg[c].instrs = instrs;
        f.cfg[c].origins = src.origins;
        f.cfg[c].uni = src.uni;
        map.insert(b, c);
        f.layout.push(c);
    }
    for &b in blocks {
        let Some(&c) = map.get(&b) else { continue };
        for edge in f.succ_edges(b) {
            let Some((_, t)) = f.cfg.edge_endpoints(edge) else { continue };
            let w = f.cfg[edge].clone();
            let t2 = map.get(&t).copied().unwrap_or(t);
            if w.kind == EdgeKind::Taken {
                set_label(f, c, t2);
            }
            f.cfg.add_edge(c, t2, w);
        }
    }
    map
}

/// A chain of blocks dispatching on the selector `sel` (a 32-bit virtual register): the
/// first tests `sel == targets.len() - 1`, ..., the last tests `sel == 1` and falls
/// through to `targets[0]` (the caller places the chain, then [`fix_fallthroughs`]).
/// Returns the chain, first block first; empty for a single target.
pub fn dispatch_chain(
    f: &mut Function,
    sel: crate::sass::instr::Reg,
    targets: &[BlockId],
    origin: crate::ptx::ast::Span,
) -> Vec<BlockId> {
    use crate::ir::VRegKind;
    use crate::sass::instr::{Dst, PT, RegRef};
    use crate::sass::op::{BoolOp, Cmp};
    let Some((&first, rest)) = targets.split_first() else { return vec![] };
    let chain: Vec<BlockId> = rest.iter().map(|_| f.new_block("")).collect();
    // Block `c` of the chain tests selector `i` (from `targets.len() - 1` down to 1) and
    // falls through to the next block, the last one to `targets[0]`.
    let tests = targets.iter().enumerate().skip(1).rev();
    let nexts = chain.iter().skip(1).copied().chain(std::iter::once(first));
    for ((&b, (i, &target)), next) in chain.iter().zip(tests).zip(nexts) {
        let p = f.new_vreg(VRegKind::Pred);
        f.cfg[b].push(
            Instr::new(
                Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And },
                vec![Dst::Pred(p), Dst::Pred(PT)],
                vec![Src::reg(RegRef::new(sel, 1)), Src::imm(i as u32), Src::pt()],
            ),
            origin,
        );
        f.cfg[b].push(Instr::new(Op::Bra, vec![], vec![Src::label(target.index() as u32)]).guarded(p, false), origin);
        f.cfg.add_edge(b, target, Edge { kind: EdgeKind::Taken, args: vec![] });
        f.cfg.add_edge(b, next, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
    }
    chain
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::ptx::ast::FuncKind;

    /// A random reducible CFG of `n` blocks: forward edges `i -> j` (`i < j`, with a path
    /// `0 -> 1 -> ...` through most blocks so that nearly all are reachable), then edges back
    /// to dominators (self-loops included), which keep the dominators and so reducibility.
    /// Some blocks end with no successor (exits) or only a back edge (infinite loops).
    fn random_reducible(n: usize, seed: u64) -> Function {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let mut rnd = move |k: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % k
        };
        let mut f = Function::new("f", FuncKind::Entry);
        let mut bs = vec![f.entry];
        for _ in 1..n {
            let b = f.new_block("");
            f.layout.push(b);
            bs.push(b);
        }
        let edge = |f: &mut Function, a: usize, b: usize| {
            f.cfg.add_edge(bs[a], bs[b], Edge { kind: EdgeKind::Taken, args: vec![] });
        };
        for i in 0..n - 1 {
            if rnd(12) != 0 {
                edge(&mut f, i, i + 1);
            }
            if rnd(3) == 0 {
                let j = i + 1 + rnd(n - i - 1);
                edge(&mut f, i, j);
            }
        }
        let doms = dominators(&f);
        for i in 0..n {
            if rnd(3) == 0 {
                // A dominator of `i`, a few levels up.
                let mut h = i;
                for _ in 0..rnd(6) {
                    match doms.idom(h) {
                        Some(d) => h = d,
                        None => break,
                    }
                }
                if doms.contains(i) {
                    edge(&mut f, i, h);
                }
            }
        }
        f
    }

    /// The collapsed per-forest construction answers like the whole-body one for every
    /// block of every loop of 1,000 random reducible CFGs (nests, breaks out of several
    /// loops, continues, infinite loops, blocks not reached from the entry).
    #[test]
    fn iteration_postdom_for_forest_matches_the_whole_body() {
        let (mut checked, mut all_reached) = (0, 0);
        for seed in 0..1000u64 {
            let f = random_reducible(8 + (seed as usize % 40), seed);
            let forest = LoopForest::new(&f, &dominators(&f));
            let fast = IterationPostDom::for_forest(&f, &forest);
            if reach(&f, &[f.entry], |_| false).len() == f.layout.len() {
                all_reached += 1;
            }
            for (l, lp) in forest.loops.iter().enumerate() {
                let slow = IterationPostDom::new(&f, &lp.body, lp.header);
                for &b in &lp.body {
                    if forest.innermost[b.index()] == Some(l) {
                        assert_eq!(fast[l].ipdom(b), slow.ipdom(b), "seed {seed}, loop {l}, block {b:?}\n{f}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 5000, "{checked} blocks checked");
        // The collapsed graphs are used (every block reached) in most CFGs.
        assert!(all_reached > 200, "{all_reached} CFGs without unreached blocks");
    }
}
