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
        by_layout.sort_by_key(|b| pos[b.index()]);
        let split = by_layout.iter().map(|h| (*h, cost(*h))).find(|(_, c)| *c <= SPLIT_LIMIT.min(budget));
        match split {
            Some((h, c)) => {
                budget -= c;
                split_entries(f, &in_scc, &by_layout, h);
            }
            None => dispatch(f, &by_layout),
        }
        fix_fallthroughs(f);
    }
    changed
}

/// The first cyclic strongly connected component with more than one entry, and its
/// entries; `None` if the CFG is reducible.
fn find_irreducible(f: &Function) -> Option<(Vec<BlockId>, Vec<BlockId>)> {
    let mut work: Vec<Vec<BlockId>> = vec![f.layout.clone()];
    while let Some(set) = work.pop() {
        for scc in sccs(f, &set) {
            let cyclic = scc.len() > 1 || f.succs(scc[0]).contains(&scc[0]);
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
            let h = entries[0];
            work.push(scc.into_iter().filter(|b| *b != h).collect());
        }
    }
    None
}

/// Strongly connected components of the subgraph induced by `set` (Tarjan, iterative).
fn sccs(f: &Function, set: &[BlockId]) -> Vec<Vec<BlockId>> {
    let index_of: HashMap<BlockId, usize> = set.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let n = set.len();
    let succs: Vec<Vec<usize>> =
        set.iter().map(|b| f.succs(*b).iter().filter_map(|s| index_of.get(s).copied()).collect()).collect();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<usize> = vec![];
    let mut next = 0usize;
    let mut out = vec![];
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, next successor position)
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(top) = call.last_mut() {
            let v = top.0;
            if top.1 < succs[v].len() {
                let w = succs[v][top.1];
                top.1 += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    call.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = vec![];
                    loop {
                        let w = stack.pop().expect("tarjan stack");
                        on_stack[w] = false;
                        comp.push(set[w]);
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
        region.sort_by_key(|b| pos[b.index()]);
        let map = copy_blocks(f, &region);
        for pe in f.pred_edges(e) {
            let (p, _) = f.cfg.edge_endpoints(pe).expect("edge");
            if !in_scc.contains(&p) {
                retarget(f, pe, map[&e]);
            }
        }
    }
}

/// A new header dispatching on a selector to the entries (`entries` in layout order; the
/// chain falls through into the first one).
fn dispatch(f: &mut Function, entries: &[BlockId]) {
    let sel = f.new_vreg(VRegKind::Gpr(1));
    let origin = f.cfg[entries[0]].origins.first().copied().unwrap_or_default();
    let chain = dispatch_chain(f, sel, entries, origin);
    let header = chain[0];
    // Every edge into an entry, from outside or inside the component, sets the selector
    // and goes to the header (the chain's own edges excepted).
    for (i, &e) in entries.iter().enumerate() {
        for pe in f.pred_edges(e) {
            let (p, _) = f.cfg.edge_endpoints(pe).expect("edge");
            if chain.contains(&p) {
                continue;
            }
            let set = Instr::new(Op::Mov32i, vec![Dst::reg(sel, 1)], vec![Src::imm(i as u32)]);
            split_and_retarget(f, pe, vec![set], header);
        }
    }
    // Layout: the chain right before the first entry, which it falls into.
    let at = f.layout.iter().position(|b| *b == entries[0]).expect("in layout");
    for (j, &c) in chain.iter().enumerate() {
        f.layout.insert(at + j, c);
    }
}
