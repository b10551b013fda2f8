//! SSA construction: turns IR variables (virtual registers written several times, one per
//! PTX register) into single-definition values with block parameters for phis.
//!
//! Semi-pruned SSA (Cytron et al. with Briggs' "global names"): phis are placed at the
//! iterated dominance frontier of each variable's definitions, only for variables read in
//! some block before being written there, materialized as block parameters only where the
//! variable is live (pruned SSA, see [`construct`]). The iterated frontiers are found by
//! Sreedhar and Gao's walk over the dominator tree and its join edges
//! ([`DomInfo::iterated_frontier`]), linear per variable in the blocks it visits. Renaming walks the dominator tree
//! (Lengauer-Tarjan dominators, [`crate::ir::dom`]). A read with no reaching definition gets an `undef` value at
//! the entry block. Requires every block to be reachable.
//!
//! Tables are indexed by block index (sized by the graph's node bound) and by virtual
//! register number (sized by `f.vregs`, grown with each new name): `get`/`get_mut`, whose
//! `None` cannot happen for the blocks and registers of `f`.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::dom::DomTree;
use crate::ir::{BlockId, Function, VRegKind};
use crate::sass::instr::{Dst, Instr, PT, Reg, Src};
use crate::sass::op::{BoolOp, Cmp, Op};
use std::collections::HashMap;

/// Dominator tree of a function's CFG with what iterated dominance frontiers are computed
/// from (its DJ-graph: Sreedhar and Gao, "A Linear Time Algorithm for Placing φ-Nodes",
/// POPL 1995), indexed by `BlockId::index()`.
pub struct DomInfo {
    /// Immediate dominators.
    pub doms: DomTree,
    /// Children in the dominator tree, in layout order: those of `b` are
    /// `child_list[child_start[b]..child_start[b + 1]]`.
    child_start: Vec<u32>,
    child_list: Vec<BlockId>,
    /// Depth of each block in the dominator tree (the entry 0).
    level: Vec<u32>,
    /// Join edges ("J-edges") out of each block: the CFG successors `z` of `b` that `b`
    /// does not immediately dominate, the entry excluded (it has no frontier entries:
    /// the walk below stops at a block without an immediate dominator): those of `b` are
    /// `join_list[join_start[b]..join_start[b + 1]]`. `z` is in the dominance frontier of
    /// `b` and of each of its dominators strictly below `idom(z)`.
    join_start: Vec<u32>,
    join_list: Vec<u32>,
    /// Least level of a J-edge target from any block of each block's dominator subtree
    /// (`u32::MAX` when there is none): the frontier walk skips a subtree that cannot
    /// reach its level.
    min_join: Vec<u32>,
}

/// Compressed lists from `(list, item)` pairs: `start` (length `n + 1`) and the items,
/// each list in the pairs' order.
fn compress<T: Copy>(n: usize, pairs: &[(usize, T)], fill: T) -> (Vec<u32>, Vec<T>) {
    let mut start = vec![0u32; n.saturating_add(1)];
    for &(x, _) in pairs {
        if let Some(s) = start.get_mut(x.saturating_add(1)) {
            *s = s.saturating_add(1);
        }
    }
    for x in 0..n {
        let prev = start.get(x).copied().unwrap_or(0);
        if let Some(s) = start.get_mut(x.saturating_add(1)) {
            *s = s.saturating_add(prev);
        }
    }
    let mut at = start.clone();
    let mut items = vec![fill; pairs.len()];
    for &(x, item) in pairs {
        if let Some(a) = at.get_mut(x)
            && let Some(slot) = items.get_mut(*a as usize)
        {
            *slot = item;
            *a = a.saturating_add(1);
        }
    }
    (start, items)
}

/// The `x`th list of a compressed pair (empty when out of range).
fn list<'a, T>(start: &[u32], items: &'a [T], x: usize) -> &'a [T] {
    match (start.get(x), start.get(x.saturating_add(1))) {
        (Some(&a), Some(&b)) => items.get(a as usize..b as usize).unwrap_or(&[]),
        _ => &[],
    }
}

impl DomInfo {
    /// Computes dominators (Lengauer-Tarjan), the dominator tree's levels and the J-edges
    /// of `f`. Linear in the CFG's size (after the dominators).
    pub fn new(f: &Function) -> DomInfo {
        let doms = DomTree::of_cfg(f);
        let nb = petgraph::visit::NodeIndexable::node_bound(&f.cfg);
        let mut child_pairs = Vec::with_capacity(f.layout.len());
        let mut join_pairs = vec![];
        for &b in &f.layout {
            let Some(d) = doms.idom(b.index()) else { continue };
            child_pairs.push((d, b));
            // Cytron et al.'s runner walk from each predecessor `p` up to `idom(b)`
            // enters `b` into the frontier of every block on the way: `p` and its
            // dominators below `idom(b)` (none when `p` is `idom(b)`).
            for p in f.cfg.neighbors_directed(b, petgraph::Direction::Incoming) {
                if p.index() != d {
                    join_pairs.push((p.index(), b.index() as u32));
                }
            }
        }
        let (child_start, child_list) = compress(nb, &child_pairs, f.entry);
        let (join_start, join_list) = compress(nb, &join_pairs, 0);
        // Levels in pre-order, then each subtree's least J-edge target level in reverse
        // pre-order (children before their parent).
        let mut level = vec![0u32; nb];
        let mut order = Vec::with_capacity(f.layout.len());
        let mut stack = vec![f.entry];
        while let Some(b) = stack.pop() {
            order.push(b);
            let lb = level.get(b.index()).copied().unwrap_or(0);
            for &c in list(&child_start, &child_list, b.index()) {
                if let Some(l) = level.get_mut(c.index()) {
                    *l = lb.saturating_add(1);
                }
                stack.push(c);
            }
        }
        let mut min_join = vec![u32::MAX; nb];
        for &b in order.iter().rev() {
            let mut m = list(&join_start, &join_list, b.index())
                .iter()
                .map(|&z| level.get(z as usize).copied().unwrap_or(0))
                .min()
                .unwrap_or(u32::MAX);
            for &c in list(&child_start, &child_list, b.index()) {
                m = m.min(min_join.get(c.index()).copied().unwrap_or(u32::MAX));
            }
            if let Some(mj) = min_join.get_mut(b.index()) {
                *mj = m;
            }
        }
        DomInfo { doms, child_start, child_list, level, join_start, join_list, min_join }
    }

    /// Children of `b` in the dominator tree, in layout order.
    pub fn children(&self, b: BlockId) -> &[BlockId] {
        list(&self.child_start, &self.child_list, b.index())
    }

    /// The iterated dominance frontier of the blocks `defs` (Cytron et al.'s `DF+`),
    /// appended to `out` in no particular order: Sreedhar and Gao's walk, deepest roots
    /// first, each block's subtree visited once per call, subtrees without a J-edge to the
    /// root's level or above skipped. `scratch` is reused across calls (any contents);
    /// the cost is the size of the visited subtrees, not that of the frontiers (those of a
    /// loop nest's blocks hold every enclosing header: a cubic walk by frontiers).
    pub fn iterated_frontier(&self, defs: &[BlockId], scratch: &mut IdfScratch, out: &mut Vec<BlockId>) {
        let nb = self.level.len();
        let s = scratch;
        if s.visited.len() < nb {
            s.visited.resize(nb, 0);
            s.queued.resize(nb, 0);
            s.placed.resize(nb, 0);
        }
        s.epoch = s.epoch.wrapping_add(1);
        if s.epoch == 0 {
            s.visited.fill(0);
            s.queued.fill(0);
            s.placed.fill(0);
            s.epoch = 1;
        }
        let epoch = s.epoch;
        s.heap.clear();
        for &b in defs {
            if self.doms.contains(b.index())
                && let (Some(q), Some(&l)) = (s.queued.get_mut(b.index()), self.level.get(b.index()))
                && *q != epoch
            {
                *q = epoch;
                s.heap.push((l, b.index() as u32));
            }
        }
        while let Some((root_level, root)) = s.heap.pop() {
            s.stack.clear();
            s.stack.push(root);
            if let Some(v) = s.visited.get_mut(root as usize) {
                *v = epoch;
            }
            while let Some(x) = s.stack.pop() {
                for &z in list(&self.join_start, &self.join_list, x as usize) {
                    let (Some(&lz), Some(p)) = (self.level.get(z as usize), s.placed.get_mut(z as usize)) else {
                        continue;
                    };
                    if lz > root_level || *p == epoch {
                        continue;
                    }
                    *p = epoch;
                    out.push(BlockId::new(z as usize));
                    if let Some(q) = s.queued.get_mut(z as usize)
                        && *q != epoch
                    {
                        *q = epoch;
                        s.heap.push((lz, z));
                    }
                }
                for &c in list(&self.child_start, &self.child_list, x as usize) {
                    let (Some(v), Some(&m)) = (s.visited.get_mut(c.index()), self.min_join.get(c.index())) else {
                        continue;
                    };
                    if *v != epoch && m <= root_level {
                        *v = epoch;
                        s.stack.push(c.index() as u32);
                    }
                }
            }
        }
    }
}

/// Reusable work space of [`DomInfo::iterated_frontier`]: per-block marks (the call's
/// number when visited, queued as a root, placed in the frontier), the roots by level and
/// the subtree walk's stack.
#[derive(Default)]
pub struct IdfScratch {
    epoch: u32,
    visited: Vec<u32>,
    queued: Vec<u32>,
    placed: Vec<u32>,
    heap: std::collections::BinaryHeap<(u32, u32)>,
    stack: Vec<u32>,
}

/// Builds SSA form in place and sets `f.ssa`.
///
/// A phi is placed where semi-pruned SSA places one (and its value named, so that the
/// numbering of values is that of semi-pruned SSA), but only materialized as a block
/// parameter where the variable is live on entry (pruned SSA, by [`crate::ir::liveness`]):
/// the others would have no reader and were removed by dead-code elimination, and in deep
/// loop nests they are quadratic in number (every loop counter at every enclosing header).
pub fn construct(f: &mut Function) {
    construct_with(f, true);
}

/// [`construct`], with every phi materialized when `prune` is false (semi-pruned SSA:
/// `regalloc::pack` unites the values meeting at any join into one web).
pub fn construct_with(f: &mut Function, prune: bool) {
    let dom = DomInfo::new(f);
    let live = prune.then(|| crate::ir::liveness(f));
    let nv = f.vregs.len();
    let nb = petgraph::visit::NodeIndexable::node_bound(&f.cfg);
    // Definition blocks and "global names" (read before written in some block).
    let mut def_blocks: Vec<Vec<BlockId>> = vec![vec![]; nv];
    let mut global = vec![false; nv];
    let mut defined = vec![usize::MAX; nv];
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            crate::ir::for_each_use(i, |v| {
                if defined.get(v as usize) != Some(&b.index())
                    && let Some(g) = global.get_mut(v as usize)
                {
                    *g = true;
                }
            });
            crate::ir::for_each_def(i, |v| {
                if let (Some(d), Some(blocks)) = (defined.get_mut(v as usize), def_blocks.get_mut(v as usize))
                    && *d != b.index()
                {
                    *d = b.index();
                    blocks.push(b);
                }
            });
        }
    }
    // Phi placement at the iterated dominance frontier: (variable, live on entry), each
    // block's list in variable order.
    let mut phis: Vec<Vec<(u32, bool)>> = vec![vec![]; nb];
    let mut scratch = IdfScratch::default();
    let mut idf = vec![];
    for (v, (blocks, _)) in def_blocks.iter().zip(&global).enumerate().filter(|(_, (bs, g))| **g && !bs.is_empty()) {
        let mark = v as u32;
        idf.clear();
        dom.iterated_frontier(blocks, &mut scratch, &mut idf);
        for &d in &idf {
            if let Some(at) = phis.get_mut(d.index()) {
                let is_live = live.as_ref().is_none_or(|l| l.live_in(d).binary_search(&mark).is_ok());
                at.push((mark, is_live));
            }
        }
    }
    // Renaming.
    let mut r =
        Renamer { top: vec![NO_NAME; nv], undo: vec![], used_name: vec![false; nv], undefs: HashMap::new(), phis, f };
    r.rename(r.f.entry, &dom);
    let undefs: Vec<(u32, u32)> = {
        let mut u: Vec<_> = r.undefs.iter().map(|(a, b)| (*a, *b)).collect();
        u.sort();
        u
    };
    let entry = f.entry;
    let block = &mut f.cfg[entry];
    let mut instrs = Vec::with_capacity(undefs.len().saturating_add(block.instrs.len()));
    for &(var, name) in &undefs {
        let dst = match f.vregs.get(var as usize) {
            Some(VRegKind::Pred) => Dst::Pred(Reg::V(name)),
            Some(&VRegKind::Gpr(n)) => Dst::reg(Reg::V(name), n),
            None => continue,
        };
        instrs.push(Instr::new(Op::Undef, vec![dst], vec![]));
    }
    let mut origins = vec![Default::default(); undefs.len()];
    instrs.append(&mut block.instrs);
    origins.append(&mut block.origins);
    block.instrs = instrs;
    block.origins = origins;
    f.ssa = true;
}

/// No current name (a variable not defined on the dominator-tree path).
const NO_NAME: u32 = u32::MAX;

/// Renaming state: the name of each variable on the current dominator-tree path, with the
/// names it replaced in one undo log (where a stack per variable cost an allocation
/// each), the variables given their own number as a name, the `undef` names.
struct Renamer<'f> {
    top: Vec<u32>,
    /// (variable, previous name) per definition on the path, innermost last.
    undo: Vec<(u32, u32)>,
    used_name: Vec<bool>,
    undefs: HashMap<u32, u32>,
    phis: Vec<Vec<(u32, bool)>>,
    f: &'f mut Function,
}

impl Renamer<'_> {
    /// A new name for a definition of `var` (the variable's own number the first time).
    fn fresh(&mut self, var: u32) -> u32 {
        if let Some(used) = self.used_name.get_mut(var as usize)
            && !*used
        {
            *used = true;
            return var;
        }
        // (`var` is a register of `f`: the fallback kind is never used.)
        let kind = self.f.vregs.get(var as usize).copied().unwrap_or(VRegKind::Gpr(1));
        let Reg::V(n) = self.f.new_vreg(kind) else { unreachable!() };
        self.top.push(NO_NAME);
        self.used_name.push(true);
        n
    }

    /// A new name for a definition of `var`, made current.
    fn push_name(&mut self, var: u32) -> u32 {
        let n = self.fresh(var);
        if let Some(c) = self.top.get_mut(var as usize) {
            self.undo.push((var, *c));
            *c = n;
        }
        n
    }

    fn current(&mut self, var: u32) -> u32 {
        if let Some(&n) = self.top.get(var as usize)
            && n != NO_NAME
        {
            return n;
        }
        if let Some(&u) = self.undefs.get(&var) {
            return u;
        }
        let n = self.fresh(var);
        self.undefs.insert(var, n);
        n
    }

    fn rename(&mut self, entry: BlockId, dom: &DomInfo) {
        // Iterative DFS over the dominator tree: (block, length of the undo log to return
        // to on leaving it).
        enum Step {
            Enter(BlockId),
            Exit(usize),
        }
        let mut work = vec![Step::Enter(entry)];
        while let Some(step) = work.pop() {
            match step {
                Step::Exit(len) => {
                    while self.undo.len() > len {
                        if let Some((var, prev)) = self.undo.pop()
                            && let Some(c) = self.top.get_mut(var as usize)
                        {
                            *c = prev;
                        }
                    }
                }
                Step::Enter(b) => {
                    let pushed = self.undo.len();
                    let params = self.phis.get_mut(b.index()).map(std::mem::take).unwrap_or_default();
                    let mut names = vec![];
                    for &(var, live) in &params {
                        // Phis that are not live are named and visible like the others
                        // (the numbering and the undefined values created stay those of
                        // semi-pruned SSA), but get no parameter.
                        let n = self.push_name(var);
                        if live {
                            names.push(n);
                        }
                    }
                    if let Some(p) = self.phis.get_mut(b.index()) {
                        *p = params;
                    }
                    self.f.cfg[b].params = names;
                    // The block's instructions are taken out while renamed (naming reads
                    // and grows only the register tables).
                    let mut instrs = std::mem::take(&mut self.f.cfg[b].instrs);
                    for ins in &mut instrs {
                        crate::ir::for_each_use_mut(ins, |v| *v = self.current(*v));
                        for d in &mut ins.dsts {
                            let var = match d {
                                Dst::Reg(r) => match r.reg {
                                    Reg::V(v) => v,
                                    _ => continue,
                                },
                                Dst::Pred(Reg::V(v)) => *v,
                                _ => continue,
                            };
                            let n = self.push_name(var);
                            match d {
                                Dst::Reg(r) => r.reg = Reg::V(n),
                                Dst::Pred(p) => *p = Reg::V(n),
                            }
                        }
                    }
                    self.f.cfg[b].instrs = instrs;
                    // Edge arguments for successors' phis.
                    for e in self.f.succ_edges(b) {
                        let Some((_, t)) = self.f.cfg.edge_endpoints(e) else { continue };
                        let vars = self.phis.get_mut(t.index()).map(std::mem::take).unwrap_or_default();
                        let mut args = vec![];
                        for &(v, live) in &vars {
                            let a = self.current(v);
                            if live {
                                args.push(a);
                            }
                        }
                        if let Some(p) = self.phis.get_mut(t.index()) {
                            *p = vars;
                        }
                        self.f.cfg[e].args = args;
                    }
                    work.push(Step::Exit(pushed));
                    for &c in dom.children(b).iter().rev() {
                        work.push(Step::Enter(c));
                    }
                }
            }
        }
    }
}

/// Gives every undefined predicate a value: the `undef`s of predicates become one
/// `ISETP.NE.U32.AND %p, PT, RZ, RZ, PT` (false) at the start of the entry block, which
/// every reader of any of them reads. Runs after the last pass that creates `undef`s (SSA
/// construction, the landings of [`super::cfg::restructure`]).
///
/// PTX leaves the value of a register that was never written undefined, but every read
/// of one predicate value must see the same value: an if-converted arm guards a carry
/// pair (`@P LEA R2.CC` / `@P LEA.HI.X R3`) and the load of its address with one
/// predicate, and a thread that ran the `.X` half without the `.CC` half, or the load
/// without the address, would read a stale flag or an uncomputed address, which no
/// outcome of the PTX program does. Register allocation may hold a predicate in several
/// registers (copies, and `regalloc::predicates`' rematerialization before each reader);
/// its checker (`regalloc::verify`) proves that each holds the value the SSA code reads,
/// which for an undefined value it could not (any register "holds" it), so a defined
/// value is what makes the guards provably agree. ptxas 11.8 -O3 gives an undefined guard
/// no definition (two never-written predicates of one kernel both read `P0`); false is
/// what the PTX interpreter reads (`exec::ptx`: never-written registers read as 0), so
/// both executors agree on such programs. One value for all of them costs one
/// instruction and one predicate register, only in programs that read never-written
/// predicates. Linear in the function's size.
pub fn define_undefined_predicates(f: &mut Function) {
    let mut undefined: HashMap<u32, u32> = HashMap::new();
    let mut canon = None;
    for b in f.layout.clone() {
        let blk = &mut f.cfg[b];
        if !blk.instrs.iter().any(|i| i.op == Op::Undef) {
            continue;
        }
        let instrs = std::mem::take(&mut blk.instrs);
        let origins = std::mem::take(&mut blk.origins);
        for (i, o) in instrs.into_iter().zip(origins) {
            match (i.op, i.dsts.first()) {
                (Op::Undef, Some(&Dst::Pred(Reg::V(p)))) => {
                    undefined.insert(p, *canon.get_or_insert(p));
                }
                _ => {
                    blk.instrs.push(i);
                    blk.origins.push(o);
                }
            }
        }
    }
    let Some(c) = canon else { return };
    let ne = Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And };
    let entry = f.entry;
    let def = Instr::new(ne, vec![Dst::Pred(Reg::V(c)), Dst::Pred(PT)], vec![Src::rz(), Src::rz(), Src::pt()]);
    // After a device function's `Params` (its incoming words, `lower::calls::realcall`), which
    // then stays the first instruction that does anything.
    let at = f.cfg[entry].instrs.iter().position(|i| i.op == Op::Params).map_or(0, |k| k.saturating_add(1));
    f.cfg[entry].instrs.insert(at, def);
    f.cfg[entry].origins.insert(at, Default::default());
    for b in f.layout.clone() {
        for i in f.cfg[b].instrs.iter_mut() {
            crate::ir::for_each_use_mut(i, |v| {
                if let Some(&to) = undefined.get(v) {
                    *v = to;
                }
            });
        }
    }
    for e in f.cfg.edge_indices().collect::<Vec<_>>() {
        for a in f.cfg[e].args.iter_mut() {
            if let Some(&to) = undefined.get(a) {
                *a = to;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// Cytron et al.'s definition, by brute force: `z` is in the frontier of `x` when `x`
    /// dominates a predecessor of `z` but not `z` strictly (the entry, without an
    /// immediate dominator, in none); the iterated frontier of `defs` is the least fixed
    /// point of `DF(defs ∪ S) = S`.
    fn reference(f: &Function, doms: &DomTree, defs: &[BlockId]) -> Vec<BlockId> {
        let in_df = |x: BlockId, z: BlockId| {
            doms.idom(z.index()).is_some()
                && !(doms.dominates(x.index(), z.index()) && x != z)
                && f.preds(z).iter().any(|p| doms.dominates(x.index(), p.index()))
        };
        let mut set: Vec<BlockId> = vec![];
        loop {
            let from: Vec<BlockId> = defs.iter().chain(&set).copied().collect();
            let next: Vec<BlockId> = f.layout.iter().copied().filter(|&z| from.iter().any(|&x| in_df(x, z))).collect();
            if next == set {
                return set;
            }
            set = next;
        }
    }

    /// The DJ-graph walk finds Cytron's iterated frontier on random CFGs of 2-12 blocks
    /// (loops entered in the middle, nested and overlapping cycles, self loops, edges back
    /// to the entry), for random definition sets, one scratch space reused throughout.
    #[test]
    fn iterated_frontier_equals_the_fixed_point_of_frontiers() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        let mut scratch = IdfScratch::default();
        let (mut nonempty, mut checked) = (0, 0);
        for _ in 0..2000 {
            let n = 2 + next(11) as usize;
            let (f, blocks) = crate::ir::testing::random_cfg(n, &mut next);
            let dom = DomInfo::new(&f);
            for _ in 0..4 {
                let defs: Vec<BlockId> = (0..1 + next(3)).map(|_| blocks[next(n as u64) as usize]).collect();
                let mut got = vec![];
                dom.iterated_frontier(&defs, &mut scratch, &mut got);
                got.sort();
                let want = reference(&f, &dom.doms, &defs);
                assert_eq!(
                    got,
                    want,
                    "defs {defs:?} in {:?}",
                    f.cfg.edge_indices().map(|e| f.cfg.edge_endpoints(e)).collect::<Vec<_>>()
                );
                nonempty += usize::from(!want.is_empty());
                checked += 1;
            }
        }
        assert!(nonempty > checked / 3, "{nonempty} of {checked} frontiers non-empty");
    }
}
