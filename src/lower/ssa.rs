//! SSA construction: turns IR variables (virtual registers written several times, one per
//! PTX register) into single-definition values with block parameters for phis.
//!
//! Semi-pruned SSA (Cytron et al. with Briggs' "global names"): phis are placed at the
//! iterated dominance frontier of each variable's definitions, only for variables read in
//! some block before being written there, materialized as block parameters only where the
//! variable is live (pruned SSA, see [`construct`]). Renaming walks the dominator tree
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

/// Dominator tree and dominance frontiers of a function's CFG, indexed by
/// `BlockId::index()`.
pub struct DomInfo {
    /// Immediate dominators.
    pub doms: DomTree,
    /// Children in the dominator tree, in layout order.
    children: Vec<Vec<BlockId>>,
    /// Dominance frontier of each block, sorted.
    frontier: Vec<Vec<BlockId>>,
}

impl DomInfo {
    /// Computes dominators (Lengauer-Tarjan) and frontiers for `f` (Cytron et al.'s
    /// runner walk: time proportional to the frontiers' total size).
    pub fn new(f: &Function) -> DomInfo {
        let doms = DomTree::of_cfg(f);
        let nb = petgraph::visit::NodeIndexable::node_bound(&f.cfg);
        let mut children: Vec<Vec<BlockId>> = vec![vec![]; nb];
        for &b in &f.layout {
            if let Some(c) = doms.idom(b.index()).and_then(|d| children.get_mut(d)) {
                c.push(b);
            }
        }
        let mut frontier: Vec<Vec<BlockId>> = vec![vec![]; nb];
        for &b in &f.layout {
            let preds = f.preds(b);
            if preds.len() < 2 {
                continue;
            }
            let Some(idom) = doms.idom(b.index()).map(BlockId::new) else {
                continue;
            };
            for p in preds {
                let mut runner = p;
                while runner != idom {
                    // Pushes for `b` all happen now: a repeat is the list's last entry.
                    let Some(df) = frontier.get_mut(runner.index()) else { break };
                    if df.last() == Some(&b) {
                        // An earlier predecessor's walk passed here and went on up to
                        // `idom`: the rest of this walk is done (without this stop, a
                        // join of n branches along a dominator chain costs n^2 steps).
                        break;
                    }
                    df.push(b);
                    match doms.idom(runner.index()).map(BlockId::new) {
                        Some(d) => runner = d,
                        None => break,
                    }
                }
            }
        }
        for df in &mut frontier {
            df.sort_unstable();
            df.dedup();
        }
        DomInfo { doms, children, frontier }
    }

    /// Children of `b` in the dominator tree, in layout order.
    pub fn children(&self, b: BlockId) -> &[BlockId] {
        self.children.get(b.index()).map_or(&[], Vec::as_slice)
    }

    /// The dominance frontier of `b`, sorted.
    pub fn frontier(&self, b: BlockId) -> &[BlockId] {
        self.frontier.get(b.index()).map_or(&[], Vec::as_slice)
    }
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
    // Phi placement at the iterated dominance frontier: (variable, live on entry).
    let mut phis: Vec<Vec<(u32, bool)>> = vec![vec![]; nb];
    let mut has_phi = vec![u32::MAX; nb];
    let mut ever = vec![u32::MAX; nb];
    for (v, (blocks, _)) in def_blocks.iter().zip(&global).enumerate().filter(|(_, (bs, g))| **g && !bs.is_empty()) {
        let mark = v as u32;
        let mut work: Vec<BlockId> = blocks.clone();
        for b in &work {
            if let Some(e) = ever.get_mut(b.index()) {
                *e = mark;
            }
        }
        while let Some(b) = work.pop() {
            for &d in dom.frontier(b) {
                let (Some(has), Some(at), Some(seen)) =
                    (has_phi.get_mut(d.index()), phis.get_mut(d.index()), ever.get_mut(d.index()))
                else {
                    continue;
                };
                if *has != mark {
                    *has = mark;
                    let is_live = live.as_ref().is_none_or(|l| l.live_in(d).binary_search(&mark).is_ok());
                    at.push((mark, is_live));
                    if *seen != mark {
                        *seen = mark;
                        work.push(d);
                    }
                }
            }
        }
    }
    // Renaming.
    let mut r = Renamer { stacks: vec![vec![]; nv], used_name: vec![false; nv], undefs: HashMap::new(), phis, f };
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

struct Renamer<'f> {
    stacks: Vec<Vec<u32>>,
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
        self.stacks.push(vec![]);
        self.used_name.push(true);
        n
    }

    /// A new name for a definition of `var`, made current.
    fn push_name(&mut self, var: u32) -> u32 {
        let n = self.fresh(var);
        if let Some(s) = self.stacks.get_mut(var as usize) {
            s.push(n);
        }
        n
    }

    fn current(&mut self, var: u32) -> u32 {
        if let Some(&n) = self.stacks.get(var as usize).and_then(|s| s.last()) {
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
        // Iterative DFS over the dominator tree: (block, pushed names to pop).
        enum Step {
            Enter(BlockId),
            Exit(Vec<u32>),
        }
        let mut work = vec![Step::Enter(entry)];
        while let Some(step) = work.pop() {
            match step {
                Step::Exit(pushed) => {
                    for var in pushed.into_iter().rev() {
                        if let Some(s) = self.stacks.get_mut(var as usize) {
                            s.pop();
                        }
                    }
                }
                Step::Enter(b) => {
                    let mut pushed = vec![];
                    let params = self.phis.get_mut(b.index()).map(std::mem::take).unwrap_or_default();
                    let mut names = vec![];
                    for &(var, live) in &params {
                        // Phis that are not live are named and visible like the others
                        // (the numbering and the undefined values created stay those of
                        // semi-pruned SSA), but get no parameter.
                        let n = self.push_name(var);
                        pushed.push(var);
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
                            pushed.push(var);
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
