//! Dominator trees in `O(m log n)` (Lengauer-Tarjan with path compression, the "simple"
//! version of Lengauer and Tarjan, "A fast algorithm for finding dominators in a
//! flowgraph", TOPLAS 1979), with `O(1)` dominance queries (pre-order intervals of the
//! tree).
//!
//! petgraph's `simple_fast` (Cooper-Harvey-Kennedy) is quadratic when many
//! predecessors of one block lie along a long dominator chain (a join of n branches, as in
//! a chain of early exits): its intersections walk the chain once per predecessor. The
//! dominator tree is unique, so this computes the same immediate dominators.

use crate::ir::Function;
use petgraph::visit::NodeIndexable;

/// No node (a `u32` index).
const NONE: u32 = u32::MAX;

/// The dominator tree of a graph on nodes `0..n` from a root: immediate dominators and
/// the tree's pre-order intervals. Nodes unreachable from the root are not in the tree.
#[derive(Clone, Debug)]
pub struct DomTree {
    /// Immediate dominator of each node; [`NONE`] for the root and unreachable nodes.
    idom: Vec<u32>,
    /// Pre-order number of each node in the tree, [`NONE`] when not in it.
    pre: Vec<u32>,
    /// Largest pre-order number in each node's subtree.
    last: Vec<u32>,
}

/// A graph on nodes `0..start.len() - 1` as compressed adjacency lists: the successors
/// of `x` are `adj[start[x]..start[x + 1]]` (one allocation, where a list per node cost
/// one each: the dominator trees of a 10k-line kernel were mostly allocator time).
struct Csr {
    start: Vec<u32>,
    adj: Vec<u32>,
}

impl Csr {
    fn len(&self) -> usize {
        self.start.len() - 1
    }

    fn of(&self, x: usize) -> &[u32] {
        &self.adj[self.start[x] as usize..self.start[x + 1] as usize]
    }

    /// The lists `(from, to)` pairs make, each list in the order of the pairs.
    fn from_pairs(n: usize, pairs: &[(u32, u32)]) -> Csr {
        let mut start = vec![0u32; n + 1];
        for &(x, _) in pairs {
            start[x as usize + 1] += 1;
        }
        for x in 0..n {
            start[x + 1] += start[x];
        }
        let mut fill = start.clone();
        let mut adj = vec![0u32; pairs.len()];
        for &(x, y) in pairs {
            adj[fill[x as usize] as usize] = y;
            fill[x as usize] += 1;
        }
        Csr { start, adj }
    }
}

impl DomTree {
    /// The dominator tree of the graph whose successor lists are `succs` (indices below
    /// `succs.len()`), rooted at `root`.
    pub fn new(succs: &[Vec<usize>], root: usize) -> DomTree {
        let mut start = Vec::with_capacity(succs.len() + 1);
        let mut adj = vec![];
        start.push(0);
        for ss in succs {
            // Successors out of range are ignored, as by the traversal.
            adj.extend(ss.iter().filter(|&&s| s < succs.len()).map(|&s| s as u32));
            start.push(adj.len() as u32);
        }
        DomTree::of_csr(&Csr { start, adj }, root)
    }

    fn of_csr(succs: &Csr, root: usize) -> DomTree {
        let idom = immediate_dominators(succs, root);
        let n = succs.len();
        let pairs: Vec<(u32, u32)> =
            idom.iter().enumerate().filter(|(_, d)| **d != NONE).map(|(x, &d)| (d, x as u32)).collect();
        let children = Csr::from_pairs(n, &pairs);
        let mut pre = vec![NONE; n];
        let mut last = vec![NONE; n];
        let mut next = 0u32;
        let mut stack: Vec<(u32, usize)> = vec![];
        if root < n {
            pre[root] = next;
            next += 1;
            stack.push((root as u32, 0));
        }
        while let Some((x, k)) = stack.last_mut() {
            if let Some(&c) = children.of(*x as usize).get(*k) {
                *k += 1;
                pre[c as usize] = next;
                next += 1;
                stack.push((c, 0));
            } else {
                last[*x as usize] = next - 1;
                stack.pop();
            }
        }
        DomTree { idom, pre, last }
    }

    /// The dominator tree of a function's CFG from its entry, indexed by
    /// `BlockId::index()`.
    pub fn of_cfg(f: &Function) -> DomTree {
        let n = f.cfg.node_bound();
        let mut start = vec![0u32; n + 1];
        let mut adj = Vec::with_capacity(f.cfg.edge_count());
        // Node by node in index order (vacant indices of the stable graph have none).
        let mut nodes: Vec<usize> = f.cfg.node_indices().map(|b| b.index()).collect();
        nodes.sort_unstable();
        let mut at = 0;
        for b in nodes {
            while at < b {
                at += 1;
                start[at] = adj.len() as u32;
            }
            adj.extend(f.cfg.neighbors(crate::ir::BlockId::new(b)).map(|s| s.index() as u32));
            at = b + 1;
            start[at] = adj.len() as u32;
        }
        while at < n {
            at += 1;
            start[at] = adj.len() as u32;
        }
        DomTree::of_csr(&Csr { start, adj }, f.entry.index())
    }

    /// The immediate dominator of `x`; `None` for the root and for nodes not in the tree.
    pub fn idom(&self, x: usize) -> Option<usize> {
        self.idom.get(x).copied().filter(|&d| d != NONE).map(|d| d as usize)
    }

    /// True if `x` is in the tree (reachable from the root).
    pub fn contains(&self, x: usize) -> bool {
        self.pre.get(x).is_some_and(|&p| p != NONE)
    }

    /// True if `a` dominates `b` (reflexive); false when either is not in the tree. `O(1)`.
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        match (self.pre.get(a), self.pre.get(b), self.last.get(a)) {
            (Some(&pa), Some(&pb), Some(&la)) => pa != NONE && pb != NONE && pa <= pb && pb <= la,
            _ => false,
        }
    }
}

/// Immediate dominators (Lengauer-Tarjan, simple linking with path compression), indexed
/// by node; [`NONE`] for the root and unreachable nodes.
fn immediate_dominators(succs: &Csr, root: usize) -> Vec<u32> {
    let n = succs.len();
    let mut idom_out = vec![NONE; n];
    if root >= n {
        return idom_out;
    }
    // Depth-first numbering: `dfn[node]`, `vertex[number]`, `parent[number]`.
    let mut dfn = vec![NONE; n];
    let mut vertex: Vec<u32> = Vec::with_capacity(n);
    let mut parent: Vec<u32> = Vec::with_capacity(n);
    let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
    dfn[root] = 0;
    vertex.push(root as u32);
    parent.push(NONE);
    while let Some((x, k)) = stack.last_mut() {
        let x = *x;
        if let Some(&s) = succs.of(x).get(*k) {
            *k += 1;
            let s = s as usize;
            if s < n && dfn[s] == NONE {
                dfn[s] = vertex.len() as u32;
                parent.push(dfn[x]);
                vertex.push(s as u32);
                stack.push((s, 0));
            }
        } else {
            stack.pop();
        }
    }
    // Everything below is on depth-first numbers.
    let k = vertex.len();
    let mut pairs: Vec<(u32, u32)> = vec![];
    for x in 0..n {
        if dfn[x] == NONE {
            continue;
        }
        for &s in succs.of(x) {
            let s = s as usize;
            if s < n && dfn[s] != NONE {
                pairs.push((dfn[s], dfn[x]));
            }
        }
    }
    let preds = Csr::from_pairs(k, &pairs);
    let mut semi: Vec<u32> = (0..k as u32).collect();
    let mut label: Vec<u32> = (0..k as u32).collect();
    let mut ancestor = vec![NONE; k];
    let mut idom = vec![NONE; k];
    // Buckets as linked lists: `head[x]` the first vertex whose semi-dominator is `x`,
    // `next[v]` the one after `v` (the order within a bucket does not change the result).
    let mut head = vec![NONE; k];
    let mut next = vec![NONE; k];
    let mut path: Vec<u32> = vec![];
    for w in (1..k).rev() {
        for &v in preds.of(w) {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let sw = semi[w] as usize;
        next[w] = head[sw];
        head[sw] = w as u32;
        let p = parent[w];
        ancestor[w] = p;
        let mut v = std::mem::replace(&mut head[p as usize], NONE);
        while v != NONE {
            let u = eval(v, &mut ancestor, &mut label, &semi, &mut path);
            idom[v as usize] = if semi[u as usize] < semi[v as usize] { u } else { p };
            v = next[v as usize];
        }
    }
    for w in 1..k {
        if idom[w] != semi[w] {
            idom[w] = idom[idom[w] as usize];
        }
    }
    for w in 1..k {
        idom_out[vertex[w] as usize] = vertex[idom[w] as usize];
    }
    idom_out
}

/// The vertex of least semi-dominator on the path of the link forest above `v`
/// (compressing the path; `path` is scratch space).
fn eval(v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32], path: &mut Vec<u32>) -> u32 {
    if ancestor[v as usize] == NONE {
        return v;
    }
    path.clear();
    let mut x = v;
    while ancestor[ancestor[x as usize] as usize] != NONE {
        path.push(x);
        x = ancestor[x as usize];
    }
    while let Some(x) = path.pop() {
        let a = ancestor[x as usize] as usize;
        if semi[label[a] as usize] < semi[label[x as usize] as usize] {
            label[x as usize] = label[a];
        }
        ancestor[x as usize] = ancestor[a];
    }
    label[v as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Immediate dominators by the definition: `d` dominates `x` when removing `d` cuts
    /// `x` off the root; the immediate one is the strict dominator dominated by all others.
    fn brute(succs: &[Vec<usize>], root: usize) -> Vec<Option<usize>> {
        let n = succs.len();
        let reach = |cut: Option<usize>| {
            let mut seen = vec![false; n];
            let mut work = vec![root];
            if cut != Some(root) {
                seen[root] = true;
            } else {
                work.clear();
            }
            while let Some(x) = work.pop() {
                for &s in &succs[x] {
                    if Some(s) != cut && !seen[s] {
                        seen[s] = true;
                        work.push(s);
                    }
                }
            }
            seen
        };
        let all = reach(None);
        let doms: Vec<Vec<usize>> = (0..n)
            .map(|d| {
                let r = reach(Some(d));
                (0..n).filter(|&x| all[x] && (x == d || !r[x])).collect()
            })
            .collect();
        // dominated_by[x] = strict dominators of x.
        (0..n)
            .map(|x| {
                if !all[x] || x == root {
                    return None;
                }
                let strict: Vec<usize> = (0..n).filter(|&d| d != x && doms[d].contains(&x)).collect();
                strict.iter().copied().find(|&d| strict.iter().all(|&e| e == d || doms[e].contains(&d)))
            })
            .collect()
    }

    #[test]
    fn matches_the_definition_on_random_graphs() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rand = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for round in 0..300 {
            let n = 1 + rand(12);
            let mut succs: Vec<Vec<usize>> = vec![vec![]; n];
            for _ in 0..rand(3 * n + 1) {
                let (a, b) = (rand(n), rand(n));
                succs[a].push(b);
            }
            let root = rand(n);
            let t = DomTree::new(&succs, root);
            let want = brute(&succs, root);
            for (x, &w) in want.iter().enumerate() {
                assert_eq!(t.idom(x), w, "round {round}, node {x}, graph {succs:?} from {root}");
                for y in 0..n {
                    let by_chain = {
                        let mut c = Some(y);
                        let mut found = false;
                        if t.contains(y) {
                            while let Some(z) = c {
                                found |= z == x;
                                c = t.idom(z);
                            }
                        }
                        found
                    };
                    assert_eq!(t.dominates(x, y), by_chain && t.contains(x));
                }
            }
        }
    }

    #[test]
    fn a_join_of_many_early_exits_is_fast() {
        // 0 -> 1 -> ... -> n-1, and every i -> n (the exit): idom(n) = 0.
        let n = 200_000;
        let mut succs: Vec<Vec<usize>> = (0..n).map(|i| if i + 1 < n { vec![i + 1, n] } else { vec![n] }).collect();
        succs.push(vec![]);
        let t = DomTree::new(&succs, 0);
        assert_eq!(t.idom(n), Some(0));
        assert_eq!(t.idom(n - 1), Some(n - 2));
        assert!(t.dominates(5, n - 1) && !t.dominates(5, n));
    }
}
