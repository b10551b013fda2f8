//! CFG analyses and edits shared by the control-flow passes: reverse post-order,
//! dominators, post-dominators (also modulo exits that do nothing warp-synchronous), the
//! natural-loop forest, and edge surgery that keeps the IR's terminator/edge/layout
//! invariants ([`crate::ir`]).
//!
//! Every analysis is computed once per use (linear, or `O(m log n)` for the dominator
//! trees, [`crate::ir::dom`]); passes that edit the CFG recompute them between rounds,
//! never per query.

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

/// Blocks in reverse post-order from the entry (unreachable blocks are left out).
pub fn reverse_post_order(f: &Function) -> Vec<BlockId> {
    let n = f.cfg.node_bound();
    let mut seen = vec![false; n];
    let mut post = Vec::with_capacity(n);
    // Iterative DFS: (block, successors, next successor index).
    let mut stack: Vec<(BlockId, Vec<BlockId>, usize)> = vec![];
    seen[f.entry.index()] = true;
    stack.push((f.entry, f.succs(f.entry), 0));
    while let Some((b, succs, k)) = stack.last_mut() {
        if *k < succs.len() {
            let s = succs[*k];
            *k += 1;
            if !seen[s.index()] {
                seen[s.index()] = true;
                let ss = f.succs(s);
                stack.push((s, ss, 0));
            }
        } else {
            post.push(*b);
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
    /// into the virtual exit, and so does the latch of an endless loop (see `build`).
    pub fn new(f: &Function) -> PostDom {
        PostDom::build(f, |b| {
            let succs = f.succs(b);
            Some(if succs.is_empty() { vec![None] } else { succs.into_iter().map(Some).collect() })
        })
    }

    /// Post-dominators modulo quiet exits: blocks from which no warp-synchronous
    /// instruction can be reached (`quiet`, see [`quiet_blocks`]) are left out, and a
    /// block with no other successor flows into the virtual exit. Threads that take such a
    /// path only exit, so where they would "meet" the others does not matter; the others'
    /// join is where they meet among themselves.
    pub fn modulo_quiet(f: &Function, quiet: &[bool]) -> PostDom {
        PostDom::build(f, |b| {
            if quiet[b.index()] {
                return None;
            }
            let succs: Vec<Option<BlockId>> = f.succs(b).into_iter().filter(|s| !quiet[s.index()]).map(Some).collect();
            Some(if succs.is_empty() { vec![None] } else { succs })
        })
    }

    /// `succs(b)`: the successors of block `b` (`None` for the virtual exit), or `None` to
    /// leave `b` out.
    fn build(f: &Function, succs: impl Fn(BlockId) -> Option<Vec<Option<BlockId>>>) -> PostDom {
        let n = f.cfg.node_bound();
        // The reversed CFG: node `i` is block `i`, node `n` the virtual exit.
        let mut g: Vec<Vec<usize>> = vec![vec![]; n + 1];
        let mut kept = vec![false; n];
        for &b in &f.layout {
            if let Some(ss) = succs(b) {
                kept[b.index()] = true;
                for s in ss {
                    g[s.map_or(n, |s| s.index())].push(b.index());
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
        let mut seen = vec![false; n + 1];
        let mut work = vec![n];
        let mut rpo = reverse_post_order(f);
        loop {
            while let Some(x) = work.pop() {
                if !seen[x] {
                    seen[x] = true;
                    work.extend(g[x].iter().copied().filter(|p| !seen[*p]));
                }
            }
            let Some(b) = rpo.pop() else { break };
            if kept[b.index()] && !seen[b.index()] {
                g[n].push(b.index());
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
        // Depth in the forest (parents come before children in `forest.loops`).
        let mut depth = vec![0usize; nl];
        for l in 0..nl {
            depth[l] = forest.loops[l].parent.map_or(0, |p| depth[p] + 1);
        }
        let innermost = |b: BlockId| forest.innermost.get(b.index()).copied().flatten();
        // The node standing for block `b` in the graph of loop `l` (a loop containing
        // `b`): `b` itself, or the header of the child of `l` that contains `b`.
        let rep = |b: BlockId, l: usize| -> BlockId {
            let mut k = innermost(b).expect("a block of the loop");
            if k == l {
                return b;
            }
            while forest.loops[k].parent != Some(l) {
                k = forest.loops[k].parent.expect("a loop inside `l`");
            }
            forest.loops[k].header
        };
        // A loop holding a block not reached from the entry (bodies are found by walking
        // predecessors) may not be entered through its header alone: such loops (and the
        // loops around them) are analysed on their whole bodies.
        let reached = f.reached_from_entry();
        let mut whole = vec![false; nl];
        for b in f.cfg.node_indices() {
            let mut l = innermost(b).filter(|_| !reached[b.index()]);
            while let Some(k) = l.filter(|k| !whole[*k]) {
                whole[k] = true;
                l = forest.loops[k].parent;
            }
        }
        // Nodes of each loop's graph: its own blocks and its children's headers.
        let mut blocks: Vec<Vec<BlockId>> = vec![vec![]; nl];
        let nodes: Vec<BlockId> = f.cfg.node_indices().filter(|b| innermost(*b).is_some()).collect();
        for &b in &nodes {
            let l = innermost(b).expect("in a loop");
            if forest.loops[l].header == b
                && let Some(p) = forest.loops[l].parent
            {
                blocks[p].push(b);
            }
            blocks[l].push(b);
        }
        for b in blocks.iter_mut() {
            b.sort();
        }
        let index: Vec<std::collections::HashMap<BlockId, usize>> =
            blocks.iter().map(|bs| bs.iter().enumerate().map(|(i, b)| (*b, i)).collect()).collect();
        // The reversed graphs: node `i` is `blocks[l][i]`; `next` and `root` follow.
        let mut g: Vec<Vec<Vec<usize>>> = blocks
            .iter()
            .map(|bs| {
                let mut g = vec![vec![]; bs.len() + 2];
                g[bs.len() + 1].push(bs.len());
                g
            })
            .collect();
        for &u in &nodes {
            let lu = innermost(u).expect("in a loop");
            for v in f.succs(u) {
                // The innermost loop containing both ends: the edge's only graph.
                let (mut a, mut c) = (Some(lu), innermost(v));
                while a != c {
                    match (a, c) {
                        (Some(x), Some(y)) if depth[x] >= depth[y] => a = forest.loops[x].parent,
                        (Some(_), Some(y)) => c = forest.loops[y].parent,
                        (Some(x), None) => a = forest.loops[x].parent,
                        (None, _) => break,
                    }
                }
                let Some(l) = a.filter(|_| a == c) else { continue };
                let from = index[l][&rep(u, l)];
                let to = if v == forest.loops[l].header { blocks[l].len() } else { index[l][&rep(v, l)] };
                g[l][to].push(from);
            }
        }
        g.into_iter()
            .zip(blocks)
            .zip(index)
            .enumerate()
            .map(|(l, ((g, blocks), index))| {
                if whole[l] {
                    return IterationPostDom::new(f, &forest.loops[l].body, forest.loops[l].header);
                }
                let (next, root) = (blocks.len(), blocks.len() + 1);
                IterationPostDom { doms: DomTree::new(&g, root), index, blocks, next, root }
            })
            .collect()
    }

    /// The analysis of the loop `body` with header `header` on the whole body
    /// (`O(|body|)`): what [`IterationPostDom::for_forest`] computes, which uses it for
    /// loops holding blocks not reached from the entry.
    pub fn new(f: &Function, body: &HashSet<BlockId>, header: BlockId) -> IterationPostDom {
        let mut blocks: Vec<BlockId> = body.iter().copied().collect();
        blocks.sort();
        let index: std::collections::HashMap<BlockId, usize> =
            blocks.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let n = blocks.len();
        // The reversed body: node `i` is `blocks[i]`; `next` and `root` follow.
        let mut g: Vec<Vec<usize>> = vec![vec![]; n + 2];
        let (next, root) = (n, n + 1);
        g[root].push(next);
        for (i, &b) in blocks.iter().enumerate() {
            for s in f.succs(b) {
                let to = if s == header {
                    next
                } else if let Some(&t) = index.get(&s) {
                    t
                } else {
                    continue;
                };
                g[to].push(i);
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
            Some(p) => IterMeet::Block(self.blocks[p]),
        }
    }
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
        loud[b.index()] = true;
    }
    while let Some(b) = work.pop() {
        for p in f.preds(b) {
            if !loud[p.index()] {
                loud[p.index()] = true;
                work.push(p);
            }
        }
    }
    let mut quiet = vec![false; n];
    for &b in &f.layout {
        quiet[b.index()] = !loud[b.index()];
    }
    quiet
}

/// One natural loop of the loop-nesting forest.
#[derive(Clone, Debug)]
pub struct Loop {
    /// The loop header (dominates the body).
    pub header: BlockId,
    /// Blocks of the loop, header included.
    pub body: HashSet<BlockId>,
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
        let mut by_header: std::collections::HashMap<BlockId, HashSet<BlockId>> = Default::default();
        for &b in &f.layout {
            for h in f.succs(b) {
                if !dominates(doms, h, b) {
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
        let mut loops: Vec<Loop> =
            by_header.into_iter().map(|(header, body)| Loop { header, body, parent: None }).collect();
        loops.sort_by_key(|l| (std::cmp::Reverse(l.body.len()), l.header.index()));
        let mut innermost = vec![None; f.cfg.node_bound()];
        for k in 0..loops.len() {
            loops[k].parent = innermost[loops[k].header.index()];
            for b in &loops[k].body {
                innermost[b.index()] = Some(k);
            }
        }
        LoopForest { loops, innermost }
    }

    /// True if loop `l` contains block `b`.
    pub fn contains(&self, l: usize, b: BlockId) -> bool {
        self.loops[l].body.contains(&b)
    }

    /// The loops containing `b`, innermost first.
    pub fn enclosing(&self, b: BlockId) -> Vec<usize> {
        let mut out = vec![];
        let mut l = self.innermost.get(b.index()).copied().flatten();
        while let Some(k) = l {
            out.push(k);
            l = self.loops[k].parent;
        }
        out
    }

    /// The edges leaving loop `l`: (from, to), sorted.
    pub fn exits(&self, f: &Function, l: usize) -> Vec<(BlockId, BlockId)> {
        let body = &self.loops[l].body;
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
        let lp = &self.loops[l];
        let outside: Vec<BlockId> = f.preds(lp.header).into_iter().filter(|p| !lp.body.contains(p)).collect();
        (outside.len() == 1 && f.succs(outside[0]).len() == 1).then(|| outside[0])
    }
}

/// Sets the label of `b`'s terminator (a `BRA`, `SYNC` or `BRK` with a taken edge) to `t`.
fn set_label(f: &mut Function, b: BlockId, t: BlockId) {
    let term = f.cfg[b].instrs.last_mut().expect("a block with a taken edge ends in a branch");
    if term.op == Op::Bra {
        term.srcs[0] = Src::label(t.index() as u32);
    }
}

/// Moves edge `e` to target `to` (same source, kind and arguments), retargeting the
/// branch of a taken edge. A fall-through edge must then be fixed with
/// [`fix_fallthroughs`] unless `to` follows the source in the layout. Returns the new edge.
pub fn retarget(f: &mut Function, e: EdgeIndex<u32>, to: BlockId) -> EdgeIndex<u32> {
    let (from, _) = f.cfg.edge_endpoints(e).expect("edge");
    let w = f.cfg.remove_edge(e).expect("edge");
    if w.kind == EdgeKind::Taken {
        set_label(f, from, to);
    }
    f.cfg.add_edge(from, to, w)
}

/// Puts a new block holding `instrs` and then `BRA target` on edge `e` (the edge's
/// arguments move to the new block's edge). A block on a fall-through edge goes right
/// after its source in the layout, one on a taken edge at the end. Returns it.
pub fn split_edge(f: &mut Function, e: EdgeIndex<u32>, instrs: Vec<Instr>) -> BlockId {
    let (from, to) = f.cfg.edge_endpoints(e).expect("edge");
    let origin = f.cfg[from].origins.last().copied().unwrap_or_default();
    let n = f.new_block("");
    for i in instrs {
        f.cfg[n].push(i, origin);
    }
    f.cfg[n].push(Instr::new(Op::Bra, vec![], vec![Src::label(to.index() as u32)]), origin);
    let Edge { kind, args } = f.cfg.remove_edge(e).expect("edge");
    f.cfg.add_edge(from, n, Edge { kind, args: vec![] });
    f.cfg.add_edge(n, to, Edge { kind: EdgeKind::Taken, args });
    if kind == EdgeKind::Taken {
        set_label(f, from, n);
        f.layout.push(n);
    } else {
        let pos = f.layout.iter().position(|x| *x == from).expect("in layout");
        f.layout.insert(pos + 1, n);
    }
    n
}

/// Restores "a fall-through successor follows its block in the layout": a block whose
/// fall-through successor is elsewhere gets a jump block after it. Returns true if any
/// was added.
pub fn fix_fallthroughs(f: &mut Function) -> bool {
    let mut changed = false;
    let mut k = 0;
    while k < f.layout.len() {
        let b = f.layout[k];
        let next = f.layout.get(k + 1).copied();
        let ft = f.succ_edges(b).into_iter().find(|e| f.cfg[*e].kind == EdgeKind::Fallthrough);
        if let Some(e) = ft {
            let (_, t) = f.cfg.edge_endpoints(e).expect("edge");
            if Some(t) != next {
                split_edge(f, e, vec![]);
                changed = true;
            }
        }
        k += 1;
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
        f.cfg[c].instrs = src.instrs;
        // Each copy of a carry-flag writer defines a value of its own (`ir::cc`: a value
        // is defined once; CC values never cross a block, so the copy's readers are the
        // ones to follow).
        let mut renamed: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
        for k in 0..f.cfg[c].instrs.len() {
            if let Some(r) = f.cfg[c].instrs[k].cc.read
                && let Some(&n) = renamed.get(&r)
            {
                f.cfg[c].instrs[k].cc.read = Some(n);
            }
            if let Some(d) = f.cfg[c].instrs[k].cc.def {
                let n = f.new_cc();
                renamed.insert(d, n);
                f.cfg[c].instrs[k].cc.def = Some(n);
            }
        }
        f.cfg[c].origins = src.origins;
        f.cfg[c].uni = src.uni;
        map.insert(b, c);
        f.layout.push(c);
    }
    for &b in blocks {
        for edge in f.succ_edges(b) {
            let (_, t) = f.cfg.edge_endpoints(edge).expect("edge");
            let w = f.cfg[edge].clone();
            let t2 = map.get(&t).copied().unwrap_or(t);
            let c = map[&b];
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
    let k = targets.len();
    let chain: Vec<BlockId> = (1..k).map(|_| f.new_block("")).collect();
    for (c, i) in (1..k).rev().enumerate() {
        let b = chain[c];
        let p = f.new_vreg(VRegKind::Pred);
        f.cfg[b].push(
            Instr::new(
                Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And },
                vec![Dst::Pred(p), Dst::Pred(PT)],
                vec![Src::reg(RegRef::new(sel, 1)), Src::imm(i as u32), Src::pt()],
            ),
            origin,
        );
        f.cfg[b]
            .push(Instr::new(Op::Bra, vec![], vec![Src::label(targets[i].index() as u32)]).guarded(p, false), origin);
        f.cfg.add_edge(b, targets[i], Edge { kind: EdgeKind::Taken, args: vec![] });
        let next = chain.get(c + 1).copied().unwrap_or(targets[0]);
        f.cfg.add_edge(b, next, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
    }
    chain
}

#[cfg(test)]
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
