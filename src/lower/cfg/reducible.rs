//! Irreducible control flow made reducible, before SSA construction.
//!
//! A cycle with several entry blocks (a loop entered in its middle, as clang `-O3` makes
//! of a `goto` into a loop) has no header dominating it: it is not a natural loop, and
//! neither the loop analyses nor SIMT reconvergence (one PBK before the loop, a SYNC at
//! the join of a branch into it) apply. Every such strongly connected component gets a
//! single entry, the loop header, in one of two ways:
//!
//! * **Node splitting** (when the copied code is small, [`SPLIT_LIMIT`]): the header is
//!   the entry first in the layout (the source's loop top); for every other entry `e`, the
//!   blocks of the component reachable from `e` without passing the header are copied,
//!   and the edges entering `e` from outside the component go to the copy, which rejoins
//!   the loop at its header. ptxas 11.8 `-O3` does this on the issue's `irreducible`
//!   kernel (`tests/programs/irreducible.ptx`): it peels the loop's second half for the
//!   odd entry (`@!P0 BRK` at `0x00b0` before the loop at `0x00d0`).
//! * **A dispatch variable** otherwise (LLVM's `FixIrreducible`): a new header block
//!   tests a selector register and branches to the original entries; every edge to an
//!   entry, from outside or from inside the component, sets the selector (`MOV32I sel,
//!   k`) and goes to the new header. Linear in the component's edges.
//!
//! Nested components are found by removing each header and looking again (the loop
//! nesting forest of Havlak/Ramalingam), so a component inside a natural loop is fixed
//! too. Each fix removes one irreducible component; the search restarts after it, and
//! dispatch (which copies nothing) ends the process.
//!
//! Tables indexed by block index or by position in a component are read through `get`,
//! whose `None` cannot happen for the blocks of `f`.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::graph::{copy_blocks, dispatch_chain, fix_fallthroughs, reach, retarget, split_and_retarget};
use crate::ir::{BlockId, Edge, EdgeKind, Function, VRegKind};
use crate::sass::instr::{Dst, Instr, Src};
use crate::sass::op::Op;
use std::collections::{HashMap, HashSet};

/// The most instructions node splitting may copy for one component; beyond it, and once
/// the function has grown by its own size, a dispatch variable is used.
pub const SPLIT_LIMIT: usize = 64;

/// Makes every cycle of `f` a natural loop. Needs the pre-SSA IR (copies are plain
/// duplicates of blocks, the selector an ordinary variable). Returns true if the CFG
/// changed.
pub fn make_reducible(f: &mut Function) -> bool {
    let mut changed = false;
    if !f.preds(f.entry).is_empty() {
        // A loop through the first block: give the function an entry outside it.
        let e = f.new_block("");
        let origin = f.cfg[f.entry].origins.first().copied().unwrap_or_default();
        f.cfg[e].push(Instr::new(Op::Bra, vec![], vec![Src::label(f.entry.index() as u32)]), origin);
        f.cfg.add_edge(e, f.entry, Edge { kind: EdgeKind::Taken, args: vec![] });
        f.layout.insert(0, e);
        f.entry = e;
    }
    if is_reducible(f) {
        // The common case, decided in linear time: the component search below would find
        // nothing (it costs a Tarjan pass per loop nesting level, with maps per level).
        return changed;
    }
    let mut budget: usize = f.instr_count();
    while let Some((scc, entries)) = find_irreducible(f) {
        changed = true;
        let in_scc: HashSet<BlockId> = scc.iter().copied().collect();
        let pos = f.layout_positions();
        // The header: the first entry in the layout whose split copies little enough.
        let cost = |h: BlockId| -> usize {
            entries
                .iter()
                .filter(|e| **e != h)
                .map(|e| {
                    reach(f, &[*e], |b| b == h || !in_scc.contains(&b))
                        .iter()
                        .map(|b| f.cfg[*b].instrs.len())
                        .sum::<usize>()
                })
                .sum()
        };
        let mut by_layout = entries.clone();
        by_layout.sort_by_key(|b| layout_position(&pos, *b));
        let split = by_layout.iter().map(|h| (*h, cost(*h))).find(|(_, c)| *c <= SPLIT_LIMIT.min(budget));
        match split {
            Some((h, c)) => {
                // `c <= budget` (found so): the subtraction saturates never.
                budget = budget.saturating_sub(c);
                split_entries(f, &in_scc, &by_layout, h);
            }
            None => dispatch(f, &by_layout),
        }
        fix_fallthroughs(f);
    }
    changed
}

/// True if `f`'s CFG is reducible, tested in `O(m log n)`: every block of the layout
/// reachable from the entry, and every retreating edge of a depth-first search (to a
/// block still on the search's path) a back edge, its target dominating its source
/// (Hecht and Ullman 1974; Aho, Lam, Sethi, Ullman, "Compilers", 2nd ed., 9.7.5: a flow
/// graph is reducible iff its retreating edges are all back edges, for any depth-first
/// spanning tree). Then every cycle has a dominating header and [`find_irreducible`]
/// returns `None`. False, so the full search runs, when some block is not reachable or
/// not laid out.
fn is_reducible(f: &Function) -> bool {
    let dom = crate::ir::dom::DomTree::of_cfg(f);
    let n = petgraph::visit::NodeIndexable::node_bound(&f.cfg);
    if f.layout.len() != f.cfg.node_count() || !f.layout.iter().all(|b| dom.contains(b.index())) {
        return false;
    }
    // 0: not visited, 1: on the search's path, 2: finished.
    let mut state = vec![0u8; n];
    let mut stack: Vec<(BlockId, petgraph::stable_graph::WalkNeighbors<u32>)> = vec![];
    if let Some(s) = state.get_mut(f.entry.index()) {
        *s = 1;
    }
    stack.push((f.entry, f.cfg.neighbors(f.entry).detach()));
    while let Some((b, walk)) = stack.last_mut() {
        let b = *b;
        match walk.next_node(&f.cfg) {
            Some(s) => match state.get(s.index()).copied() {
                Some(0) => {
                    if let Some(st) = state.get_mut(s.index()) {
                        *st = 1;
                    }
                    stack.push((s, f.cfg.neighbors(s).detach()));
                }
                Some(1) if !dom.dominates(s.index(), b.index()) => return false,
                _ => {}
            },
            None => {
                if let Some(st) = state.get_mut(b.index()) {
                    *st = 2;
                }
                stack.pop();
            }
        }
    }
    true
}

/// The position of `b` in `pos` ([`Function::layout_positions`]; `usize::MAX`: not laid out).
fn layout_position(pos: &[usize], b: BlockId) -> usize {
    pos.get(b.index()).copied().unwrap_or(usize::MAX)
}

/// The first cyclic strongly connected component with more than one entry, and its
/// entries; `None` if the CFG is reducible.
fn find_irreducible(f: &Function) -> Option<(Vec<BlockId>, Vec<BlockId>)> {
    let mut work: Vec<Vec<BlockId>> = vec![f.layout.clone()];
    while let Some(set) = work.pop() {
        for scc in sccs(f, &set) {
            let cyclic = match scc.as_slice() {
                [] => false,
                [b] => f.succs(*b).contains(b),
                _ => true,
            };
            if !cyclic {
                continue;
            }
            let in_scc: HashSet<BlockId> = scc.iter().copied().collect();
            let mut entries: Vec<BlockId> = scc
                .iter()
                .copied()
                .filter(|b| *b == f.entry || f.preds(*b).iter().any(|p| !in_scc.contains(p)))
                .collect();
            entries.sort();
            if entries.len() > 1 {
                return Some((scc, entries));
            }
            // No entry: a cycle not reached from the entry (removed before this pass).
            let Some(&h) = entries.first() else { continue };
            work.push(scc.into_iter().filter(|b| *b != h).collect());
        }
    }
    None
}

/// Strongly connected components of the subgraph induced by `set` (Tarjan, iterative).
fn sccs(f: &Function, set: &[BlockId]) -> Vec<Vec<BlockId>> {
    /// Tarjan's state of a node: its DFS number (`None` before its visit), low link, and
    /// whether it is on the component stack.
    #[derive(Clone, Copy)]
    struct Node {
        index: Option<usize>,
        low: usize,
        on_stack: bool,
    }
    let index_of: HashMap<BlockId, usize> = set.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let succs: Vec<Vec<usize>> =
        set.iter().map(|b| f.succs(*b).iter().filter_map(|s| index_of.get(s).copied()).collect()).collect();
    let succs_of = |v: usize| succs.get(v).map_or([].iter(), |s| s.iter());
    let mut nodes = vec![Node { index: None, low: 0, on_stack: false }; set.len()];
    let mut stack: Vec<usize> = vec![];
    // The next DFS number: it counts the nodes visited, at most `set.len()`, so `+ 1`
    // saturates never.
    let mut next = 0usize;
    let mut visit = |nodes: &mut [Node], stack: &mut Vec<usize>, v: usize| {
        if let Some(n) = nodes.get_mut(v) {
            *n = Node { index: Some(next), low: next, on_stack: true };
        }
        next = next.saturating_add(1);
        stack.push(v);
    };
    let mut out = vec![];
    for root in 0..set.len() {
        if nodes.get(root).is_none_or(|n| n.index.is_some()) {
            continue;
        }
        visit(&mut nodes, &mut stack, root);
        // (node, its successors not yet followed)
        let mut call: Vec<(usize, std::slice::Iter<'_, usize>)> = vec![(root, succs_of(root))];
        while let Some((v, rest)) = call.last_mut() {
            let v = *v;
            if let Some(&w) = rest.next() {
                match nodes.get(w).copied() {
                    Some(Node { index: None, .. }) => {
                        visit(&mut nodes, &mut stack, w);
                        call.push((w, succs_of(w)));
                    }
                    Some(Node { index: Some(iw), on_stack: true, .. }) => {
                        if let Some(nv) = nodes.get_mut(v) {
                            nv.low = nv.low.min(iw);
                        }
                    }
                    _ => {}
                }
            } else {
                call.pop();
                let Some(Node { index: Some(iv), low: lv, .. }) = nodes.get(v).copied() else { continue };
                if let Some(nu) = call.last().and_then(|(u, _)| nodes.get_mut(*u)) {
                    nu.low = nu.low.min(lv);
                }
                if lv == iv {
                    let mut comp = vec![];
                    while let Some(w) = stack.pop() {
                        if let Some(nw) = nodes.get_mut(w) {
                            nw.on_stack = false;
                        }
                        comp.extend(set.get(w).copied());
                        if w == v {
                            break;
                        }
                    }
                    out.push(comp);
                }
            }
        }
    }
    out
}

/// Node splitting with header `h`: for every other entry, a copy of the component's
/// blocks it reaches without `h` takes the edges from outside the component.
fn split_entries(f: &mut Function, in_scc: &HashSet<BlockId>, entries: &[BlockId], h: BlockId) {
    for &e in entries.iter().filter(|e| **e != h) {
        let pos = f.layout_positions();
        let mut region = reach(f, &[e], |b| b == h || !in_scc.contains(&b));
        region.sort_by_key(|b| layout_position(&pos, *b));
        let map = copy_blocks(f, &region);
        // `e` is the first block of its region, so it has a copy.
        let Some(&copy) = map.get(&e) else { continue };
        for pe in f.pred_edges(e) {
            if let Some((p, _)) = f.cfg.edge_endpoints(pe)
                && !in_scc.contains(&p)
            {
                retarget(f, pe, copy);
            }
        }
    }
}

/// A new header dispatching on a selector to the entries (`entries` in layout order; the
/// chain falls through into the first one).
fn dispatch(f: &mut Function, entries: &[BlockId]) {
    // An irreducible component has two entries at least, so the chain is not empty.
    let Some(&first) = entries.first() else { return };
    let sel = f.new_vreg(VRegKind::Gpr(1));
    let origin = f.cfg[first].origins.first().copied().unwrap_or_default();
    let chain = dispatch_chain(f, sel, entries, origin);
    let Some(&header) = chain.first() else { return };
    // Every edge into an entry, from outside or inside the component, sets the selector
    // and goes to the header (the chain's own edges excepted).
    for (i, &e) in entries.iter().enumerate() {
        for pe in f.pred_edges(e) {
            let Some((p, _)) = f.cfg.edge_endpoints(pe) else { continue };
            if chain.contains(&p) {
                continue;
            }
            let set = Instr::new(Op::Mov32i, vec![Dst::reg(sel, 1)], vec![Src::imm(i as u32)]);
            split_and_retarget(f, pe, vec![set], header);
        }
    }
    // Layout: the chain right before the first entry, which it falls into.
    // (At the end if the entry were not laid out: `fix_fallthroughs` then adds the jump.)
    let at = f.layout.iter().position(|b| *b == first).unwrap_or(f.layout.len());
    f.layout.splice(at..at, chain);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// The linear-time test agrees with the component search on every graph of a random
    /// family that has reducible and irreducible members (loops entered in the middle,
    /// nested and overlapping cycles, self loops): all blocks reachable, each with one or
    /// two successors or none.
    #[test]
    fn linear_test_agrees_with_the_component_search() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let (mut reducible, mut irreducible) = (0, 0);
        for _ in 0..3000 {
            let n = 2 + next(9) as usize;
            let (f, _) = crate::ir::testing::random_cfg(n, &mut next);
            let fast = is_reducible(&f);
            let full = find_irreducible(&f).is_none();
            assert_eq!(
                fast,
                full,
                "{n} blocks: {:?}",
                f.cfg.edge_indices().map(|e| f.cfg.edge_endpoints(e)).collect::<Vec<_>>()
            );
            if full { reducible += 1 } else { irreducible += 1 }
        }
        // The family reaches both kinds, often.
        assert!(reducible > 300 && irreducible > 300, "{reducible} reducible, {irreducible} irreducible");
    }
}
