//! Bulk edits of a function's control-flow graph in time linear in the graph.
//!
//! petgraph's `StableGraph::remove_edge` unlinks an edge from its source's outgoing list
//! and its target's incoming list by walking each list from its head (petgraph 0.8
//! `change_edge_links`), and `remove_node` removes every edge of the node that way. Removing
//! the edges of many predecessors of one join (a `setp`/`@p bra` chain to one exit: tens of
//! thousands of edges into one block) one by one is therefore quadratic. [`remove_edges`]
//! and [`remove_blocks`] remove a whole set at once: one by one when the lists they walk
//! are short, otherwise by rebuilding the edge set in one pass.

use super::{BlockId, Function};
use petgraph::Direction;
use petgraph::stable_graph::EdgeIndex;
use petgraph::visit::{EdgeIndexable, EdgeRef, IntoEdgeReferences, NodeIndexable};

/// Removes `edges` (each at most once; indices of absent edges are ignored) from
/// `f.cfg`. Cost: O(V + E) of the graph, whatever the degrees of the endpoints.
///
/// Edge indices of the remaining edges may change (when the edge set is rebuilt); their
/// relative order in `edge_indices()` is kept. Block indices never change.
pub fn remove_edges(f: &mut Function, edges: &[EdgeIndex]) {
    if edges.is_empty() {
        return;
    }
    let g = &f.cfg;
    // What removing them one by one would walk: the endpoints' list lengths, each degree
    // counted once per distinct endpoint (so this estimate is itself linear).
    let mut out_deg: Vec<Option<usize>> = vec![None; g.node_bound()];
    let mut in_deg: Vec<Option<usize>> = vec![None; g.node_bound()];
    let mut walk = 0usize;
    for &e in edges {
        let Some((a, b)) = g.edge_endpoints(e) else { continue };
        walk += *out_deg[a.index()].get_or_insert_with(|| g.edges_directed(a, Direction::Outgoing).count());
        walk += *in_deg[b.index()].get_or_insert_with(|| g.edges_directed(b, Direction::Incoming).count());
    }
    if walk <= 2 * g.edge_count() + 64 {
        for &e in edges {
            f.cfg.remove_edge(e);
        }
        return;
    }
    let mut drop = vec![false; f.cfg.edge_bound()];
    for &e in edges {
        if let Some(d) = drop.get_mut(e.index()) {
            *d = true;
        }
    }
    let kept: Vec<(BlockId, BlockId, super::Edge)> = f
        .cfg
        .edge_references()
        .filter(|r| !drop[r.id().index()])
        .map(|r| (r.source(), r.target(), r.weight().clone()))
        .collect();
    f.cfg.clear_edges();
    for (a, b, w) in kept {
        f.cfg.add_edge(a, b, w);
    }
}

/// Removes the blocks `dead` (distinct) and every edge into or out of them from `f.cfg`
/// (not from `f.layout`). Cost: O(V + E), as [`remove_edges`].
pub fn remove_blocks(f: &mut Function, dead: &[BlockId]) {
    let mut seen = vec![false; f.cfg.edge_bound()];
    let mut edges = vec![];
    for &b in dead {
        for dir in [Direction::Outgoing, Direction::Incoming] {
            for r in f.cfg.edges_directed(b, dir) {
                if !std::mem::replace(&mut seen[r.id().index()], true) {
                    edges.push(r.id());
                }
            }
        }
    }
    remove_edges(f, &edges);
    for &b in dead {
        f.cfg.remove_node(b);
    }
}

/// Renumbers the virtual registers of `f` densely, in their order: those that no
/// instruction, block parameter or edge argument names are dropped from `f.vregs`.
/// Returns how many were dropped.
///
/// Clean-up leaves most numbers unused (nested-loops 10k PTX lines: about 10,000 of
/// 172,000 still named after lowering), and register allocation keeps tables indexed by
/// virtual register (regalloc2's per-register data in each of its runs, the packing,
/// spilling and checking tables); compacting first makes them proportional to the values
/// that exist. The order is kept, so that every choice that breaks ties by register
/// number chooses as before.
pub fn compact_vregs(f: &mut Function) -> usize {
    use super::{for_each_def, for_each_use, for_each_use_mut};
    use crate::sass::instr::{Dst, Reg};
    const UNUSED: u32 = u32::MAX;
    let mut map = vec![UNUSED; f.vregs.len()];
    for b in f.cfg.node_weights() {
        for &p in &b.params {
            map[p as usize] = 0;
        }
        for i in &b.instrs {
            for_each_use(i, |v| map[v as usize] = 0);
            for_each_def(i, |v| map[v as usize] = 0);
        }
    }
    for e in f.cfg.edge_weights() {
        for &a in &e.args {
            map[a as usize] = 0;
        }
    }
    let mut kept = Vec::with_capacity(f.vregs.len());
    for (v, m) in map.iter_mut().enumerate() {
        if *m != UNUSED {
            *m = kept.len() as u32;
            kept.push(f.vregs[v]);
        }
    }
    let dropped = f.vregs.len() - kept.len();
    if dropped == 0 {
        return 0;
    }
    let re = |v: &mut u32| *v = map[*v as usize];
    for b in f.cfg.node_weights_mut() {
        b.params.iter_mut().for_each(re);
        for i in b.instrs.iter_mut() {
            for_each_use_mut(i, re);
            for d in i.dsts.iter_mut() {
                match d {
                    Dst::Reg(r) => {
                        if let Reg::V(v) = &mut r.reg {
                            re(v);
                        }
                    }
                    Dst::Pred(Reg::V(v)) => re(v),
                    Dst::Pred(_) => {}
                }
            }
        }
    }
    for e in f.cfg.edge_weights_mut() {
        e.args.iter_mut().for_each(re);
    }
    f.vregs = kept;
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Edge, EdgeKind};

    /// A join with `n` predecessors, each reached from the entry.
    fn fan_in(n: usize) -> (Function, Vec<BlockId>, BlockId) {
        let mut f = Function::new("fan_in", crate::ptx::ast::FuncKind::Entry);
        let join = f.new_block("join");
        let mut preds = vec![];
        for k in 0..n {
            let p = f.new_block(format!("p{k}"));
            f.cfg.add_edge(f.entry, p, Edge { kind: EdgeKind::Taken, args: vec![k as u32] });
            f.cfg.add_edge(p, join, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
            preds.push(p);
        }
        (f, preds, join)
    }

    fn edge_list(f: &Function) -> Vec<(usize, usize, Edge)> {
        f.cfg.edge_references().map(|r| (r.source().index(), r.target().index(), r.weight().clone())).collect()
    }

    /// Both ways (one by one on a small set, rebuilt on a large one) leave the same graph
    /// as petgraph's own removal, with the remaining edges in the same relative order.
    #[test]
    fn bulk_removal_equals_one_by_one() {
        for (n, step) in [(3, 2), (40, 3), (2000, 2), (2000, 997)] {
            let (mut f, preds, _) = fan_in(n);
            let mut g = f.clone();
            let dead: Vec<BlockId> = preds.iter().copied().step_by(step).collect();
            remove_blocks(&mut f, &dead);
            for &b in &dead {
                g.cfg.remove_node(b);
            }
            assert_eq!(edge_list(&f), edge_list(&g), "n {n} step {step}");
            assert_eq!(f.cfg.node_count(), g.cfg.node_count());
            for b in g.cfg.node_indices() {
                assert_eq!(f.preds(b), g.preds(b));
                assert_eq!(f.succs(b), g.succs(b));
            }
        }
    }

    /// Removing half of the 80,000 edges into one join is linear: one by one it walks
    /// 2.4 * 10^9 list entries (7 s in the test profile, 2 s at 40,000 edges).
    #[test]
    fn removal_at_a_large_join_is_linear() {
        let (mut f, preds, join) = fan_in(80_000);
        let edges: Vec<EdgeIndex> = preds.iter().step_by(2).map(|&p| f.cfg.find_edge(p, join).expect("edge")).collect();
        let t = std::time::Instant::now();
        remove_edges(&mut f, &edges);
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "{:?}", t.elapsed());
        assert_eq!(f.preds(join).len(), 40_000);
    }
}
