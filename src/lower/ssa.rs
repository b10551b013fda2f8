//! SSA construction: turns IR variables (virtual registers written several times, one per
//! PTX register) into single-definition values with block parameters for phis.
//!
//! Semi-pruned SSA (Cytron et al. with Briggs' "global names"): phis are placed at the
//! iterated dominance frontier of each variable's definitions, only for variables read in
//! some block before being written there. Renaming walks the dominator tree (petgraph's
//! `simple_fast` dominators). A read with no reaching definition gets an `undef` value at
//! the entry block. Requires every block to be reachable.

use crate::ir::{BlockId, Function, VRegKind};
use crate::sass::instr::{Dst, Instr, Reg};
use crate::sass::op::Op;
use petgraph::algo::dominators::{Dominators, simple_fast};
use std::collections::{HashMap, HashSet};

/// Dominator tree and dominance frontiers of a function's CFG.
pub struct DomInfo {
    /// Immediate dominators.
    pub doms: Dominators<BlockId>,
    /// Children in the dominator tree, in layout order.
    pub children: HashMap<BlockId, Vec<BlockId>>,
    /// Dominance frontier of each block.
    pub frontier: HashMap<BlockId, HashSet<BlockId>>,
}

impl DomInfo {
    /// Computes dominators (Cooper-Harvey-Kennedy) and frontiers for `f`.
    pub fn new(f: &Function) -> DomInfo {
        let doms = simple_fast(&f.cfg, f.entry);
        let mut children: HashMap<BlockId, Vec<BlockId>> = HashMap::new();
        for &b in &f.layout {
            if let Some(d) = doms.immediate_dominator(b) {
                children.entry(d).or_default().push(b);
            }
        }
        let mut frontier: HashMap<BlockId, HashSet<BlockId>> = HashMap::new();
        for &b in &f.layout {
            let preds = f.preds(b);
            if preds.len() < 2 {
                continue;
            }
            let Some(idom) = doms.immediate_dominator(b) else {
                continue;
            };
            for p in preds {
                let mut runner = p;
                while runner != idom {
                    frontier.entry(runner).or_default().insert(b);
                    match doms.immediate_dominator(runner) {
                        Some(d) => runner = d,
                        None => break,
                    }
                }
            }
        }
        DomInfo { doms, children, frontier }
    }
}

/// Builds SSA form in place and sets `f.ssa`.
pub fn construct(f: &mut Function) {
    let dom = DomInfo::new(f);
    let nv = f.vregs.len();
    // Definition blocks and "global names" (read before written in some block).
    let mut def_blocks: Vec<Vec<BlockId>> = vec![vec![]; nv];
    let mut global = vec![false; nv];
    for &b in &f.layout {
        let mut defined: HashSet<u32> = HashSet::new();
        for i in &f.cfg[b].instrs {
            crate::ir::for_each_use(i, |v| {
                if !defined.contains(&v) {
                    global[v as usize] = true;
                }
            });
            crate::ir::for_each_def(i, |v| {
                if defined.insert(v) {
                    def_blocks[v as usize].push(b);
                }
            });
        }
    }
    // Phi placement at the iterated dominance frontier.
    let mut phis: HashMap<BlockId, Vec<u32>> = HashMap::new();
    for v in 0..nv {
        if !global[v] || def_blocks[v].is_empty() {
            continue;
        }
        let mut work: Vec<BlockId> = def_blocks[v].clone();
        let mut has_phi: HashSet<BlockId> = HashSet::new();
        let mut ever: HashSet<BlockId> = work.iter().copied().collect();
        while let Some(b) = work.pop() {
            if let Some(df) = dom.frontier.get(&b) {
                let mut df: Vec<BlockId> = df.iter().copied().collect();
                df.sort();
                for d in df {
                    if has_phi.insert(d) {
                        phis.entry(d).or_default().push(v as u32);
                        if ever.insert(d) {
                            work.push(d);
                        }
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
    for (var, name) in undefs.into_iter().rev() {
        let kind = f.vregs[var as usize];
        let dst = match kind {
            VRegKind::Pred => Dst::Pred(Reg::V(name)),
            VRegKind::Gpr(n) => Dst::reg(Reg::V(name), n),
        };
        let block = &mut f.cfg[entry];
        block.instrs.insert(0, Instr::new(Op::Undef, vec![dst], vec![]));
        block.origins.insert(0, Default::default());
    }
    f.ssa = true;
}

struct Renamer<'f> {
    stacks: Vec<Vec<u32>>,
    used_name: Vec<bool>,
    undefs: HashMap<u32, u32>,
    phis: HashMap<BlockId, Vec<u32>>,
    f: &'f mut Function,
}

impl Renamer<'_> {
    /// A new name for a definition of `var` (the variable's own number the first time).
    fn fresh(&mut self, var: u32) -> u32 {
        if !self.used_name[var as usize] {
            self.used_name[var as usize] = true;
            return var;
        }
        let kind = self.f.vregs[var as usize];
        let Reg::V(n) = self.f.new_vreg(kind) else { unreachable!() };
        self.stacks.push(vec![]);
        self.used_name.push(true);
        n
    }

    fn current(&mut self, var: u32) -> u32 {
        if let Some(&n) = self.stacks[var as usize].last() {
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
                        self.stacks[var as usize].pop();
                    }
                }
                Step::Enter(b) => {
                    let mut pushed = vec![];
                    let params: Vec<u32> = self.phis.get(&b).cloned().unwrap_or_default();
                    let mut names = vec![];
                    for &var in &params {
                        let n = self.fresh(var);
                        self.stacks[var as usize].push(n);
                        pushed.push(var);
                        names.push(n);
                    }
                    self.f.cfg[b].params = names;
                    let count = self.f.cfg[b].instrs.len();
                    for k in 0..count {
                        let mut ins =
                            std::mem::replace(&mut self.f.cfg[b].instrs[k], Instr::new(Op::Nop, vec![], vec![]));
                        crate::ir::for_each_use_mut(&mut ins, |v| *v = self.current(*v));
                        for d in &mut ins.dsts {
                            let var = match d {
                                Dst::Reg(r) => match r.reg {
                                    Reg::V(v) => v,
                                    _ => continue,
                                },
                                Dst::Pred(Reg::V(v)) => *v,
                                _ => continue,
                            };
                            let n = self.fresh(var);
                            self.stacks[var as usize].push(n);
                            pushed.push(var);
                            match d {
                                Dst::Reg(r) => r.reg = Reg::V(n),
                                Dst::Pred(p) => *p = Reg::V(n),
                            }
                        }
                        self.f.cfg[b].instrs[k] = ins;
                    }
                    // Edge arguments for successors' phis.
                    for e in self.f.succ_edges(b) {
                        let (_, t) = self.f.cfg.edge_endpoints(e).expect("edge");
                        let vars = self.phis.get(&t).cloned().unwrap_or_default();
                        let args: Vec<u32> = vars.iter().map(|&v| self.current(v)).collect();
                        self.f.cfg[e].args = args;
                    }
                    work.push(Step::Exit(pushed));
                    if let Some(ch) = dom.children.get(&b) {
                        for &c in ch.iter().rev() {
                            work.push(Step::Enter(c));
                        }
                    }
                }
            }
        }
    }
}
