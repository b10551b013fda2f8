//! Block liveness of virtual registers, shared by register allocation (spill choice, bank
//! assignment, predicate demotion) and the list scheduler.
//!
//! Sets are sparse (sorted lists of virtual-register numbers per block), computed one
//! variable at a time by walking backwards from its uses until its definitions ("path
//! exploration", Brandner et al., "Computing Liveness Sets for SSA-Form Programs",
//! INRIA RR-7503, 2011): time and memory are linear in the size of the instructions plus
//! the size of the sets, where a dense bit vector per block costs blocks × registers
//! (300 MB for a 10k-line kernel of 10k blocks and 30k registers) and a fixed-point
//! iteration repeats the whole function once per loop nesting level. The walk does not
//! need SSA: a block stops it when one of its instructions defines the variable.

use super::{BlockId, Function, for_each_def, for_each_use};
use petgraph::Direction;
use petgraph::visit::{EdgeRef, NodeIndexable};

/// Live virtual registers at the start and end of every block of the layout.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Liveness {
    /// Per block (by `BlockId::index()`), the registers live on entry, sorted: upward
    /// exposed uses (block parameters used in the block included) and what is live on
    /// exit and not defined by an instruction of the block.
    live_in: Sets,
    /// Per block, the registers live on exit, sorted: what each successor needs on
    /// entry, less its block parameters, plus the edge arguments that feed them.
    live_out: Sets,
}

/// One sorted list of items per block (by block number), all in one vector: the list of
/// `b` is `items[start[b]..start[b + 1]]` (one allocation where a vector per block cost
/// one each plus its regrowths).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sets {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Sets {
    /// The `(block, item)` pairs as lists per block for blocks `0..nb`, each list in the
    /// pairs' order (a stable counting sort by block).
    fn from_pairs(nb: usize, pairs: &[(u32, u32)]) -> Sets {
        let mut start = vec![0u32; nb + 1];
        for &(b, _) in pairs {
            start[b as usize + 1] += 1;
        }
        for b in 0..nb {
            start[b + 1] += start[b];
        }
        let mut at = start.clone();
        let mut items = vec![0u32; pairs.len()];
        for &(b, v) in pairs {
            items[at[b as usize] as usize] = v;
            at[b as usize] += 1;
        }
        Sets { start, items }
    }

    /// The list of block `b` (empty when out of range).
    pub fn of(&self, b: usize) -> &[u32] {
        match (self.start.get(b), self.start.get(b + 1)) {
            (Some(&x), Some(&y)) => &self.items[x as usize..y as usize],
            _ => &[],
        }
    }
}

impl Liveness {
    /// Registers live on entry to `b`, sorted (empty for blocks not in the layout).
    pub fn live_in(&self, b: BlockId) -> &[u32] {
        self.live_in.of(b.index())
    }

    /// Registers live on exit from `b`, sorted (empty for blocks not in the layout).
    pub fn live_out(&self, b: BlockId) -> &[u32] {
        self.live_out.of(b.index())
    }
}

/// The liveness of `f`: `given` when the caller has it (computed once and still valid for
/// `f`), else computed into `slot` and borrowed from there. For passes that take an
/// optional precomputed liveness (`regalloc::spill`, `regalloc::predicates`).
pub fn given_or_computed<'a>(
    f: &Function,
    given: Option<&'a Liveness>,
    slot: &'a mut Option<Liveness>,
) -> &'a Liveness {
    match given {
        Some(l) => l,
        None => slot.insert(liveness(f)),
    }
}

/// Computes [`Liveness`] for the blocks of `f.layout`. Predicates and general-purpose
/// registers alike; callers filter by [`super::VRegKind`].
pub fn liveness(f: &Function) -> Liveness {
    let nb = f.cfg.node_bound();
    let nv = f.vregs.len();
    let mut in_layout = vec![false; nb];
    for b in &f.layout {
        in_layout[b.index()] = true;
    }
    // Per block: predecessors in the layout (one entry per edge is harmless).
    let mut preds: Vec<Vec<u32>> = vec![vec![]; nb];
    // (variable, block) pairs: upward-exposed uses, instruction definitions, block
    // parameters, and edge arguments (live on exit from the edge's source).
    let (mut ue, mut defs, mut params, mut args) = (vec![], vec![], vec![], vec![]);
    let mut def_mark = vec![u32::MAX; nv];
    for &b in &f.layout {
        let bi = b.index() as u32;
        for e in f.cfg.edges_directed(b, Direction::Incoming) {
            if in_layout[e.source().index()] {
                preds[b.index()].push(e.source().index() as u32);
            }
        }
        for e in f.cfg.edges_directed(b, Direction::Outgoing) {
            args.extend(e.weight().args.iter().map(|&a| (a, bi)));
        }
        params.extend(f.cfg[b].params.iter().map(|&p| (p, bi)));
        for i in &f.cfg[b].instrs {
            for_each_use(i, |v| {
                if def_mark[v as usize] != bi {
                    ue.push((v, bi));
                }
            });
            for_each_def(i, |v| {
                if def_mark[v as usize] != bi {
                    def_mark[v as usize] = bi;
                    defs.push((v, bi));
                }
            });
        }
    }
    let (live_in, live_out) = explore(&preds, nv, ue, defs, params, args);
    Liveness { live_in, live_out }
}

/// Sets of live items per block (indexed by block number) from per-block facts, by path
/// exploration from each item's uses: `ue` (item, block) upward-exposed uses, `defs`
/// blocks that define the item (ending the walk), `params` blocks that define it at
/// entry (it may be live on entry, but not before), `args` blocks it is live out of
/// (edge arguments); `preds` the predecessors of every block. Returns (live-in, live-out),
/// each list sorted. Time linear in the facts plus the sets.
pub fn explore(
    preds: &[Vec<u32>],
    n_items: usize,
    mut ue: Vec<(u32, u32)>,
    mut defs: Vec<(u32, u32)>,
    mut params: Vec<(u32, u32)>,
    mut args: Vec<(u32, u32)>,
) -> (Sets, Sets) {
    let nb = preds.len();
    for l in [&mut ue, &mut defs, &mut params, &mut args] {
        l.sort_unstable();
        l.dedup();
    }
    // Marks per block: the item (+1) last found live on entry / on exit there.
    let mut in_mark = vec![0u32; nb];
    let mut out_mark = vec![0u32; nb];
    let mut def_mark = vec![0u32; nb];
    let mut param_mark = vec![0u32; nb];
    // (block, item) pairs found, items ascending.
    let mut live_in: Vec<(u32, u32)> = vec![];
    let mut live_out: Vec<(u32, u32)> = vec![];
    let (mut iu, mut id, mut ip, mut ia) = (0, 0, 0, 0);
    let mut work: Vec<u32> = vec![];
    for v in 0..n_items as u32 {
        let mark = v + 1;
        let of_v = |list: &[(u32, u32)], at: &mut usize| {
            let start = *at;
            while *at < list.len() && list[*at].0 == v {
                *at += 1;
            }
            start..*at
        };
        let (ru, rd, rp, ra) = (of_v(&ue, &mut iu), of_v(&defs, &mut id), of_v(&params, &mut ip), of_v(&args, &mut ia));
        if ru.is_empty() && ra.is_empty() {
            continue;
        }
        for &(_, b) in &defs[rd] {
            def_mark[b as usize] = mark;
        }
        for &(_, b) in &params[rp] {
            param_mark[b as usize] = mark;
        }
        let defined_in = |b: u32| def_mark[b as usize] == mark;
        let param_of = |b: u32| param_mark[b as usize] == mark;
        // Blocks newly live on entry, to propagate to their predecessors.
        for &(_, b) in &ue[ru] {
            if in_mark[b as usize] != mark {
                in_mark[b as usize] = mark;
                work.push(b);
            }
        }
        for &(_, p) in &args[ra] {
            if out_mark[p as usize] != mark {
                out_mark[p as usize] = mark;
                live_out.push((p, v));
                if !defined_in(p) && in_mark[p as usize] != mark {
                    in_mark[p as usize] = mark;
                    work.push(p);
                }
            }
        }
        while let Some(b) = work.pop() {
            live_in.push((b, v));
            if param_of(b) {
                continue;
            }
            for &p in &preds[b as usize] {
                if out_mark[p as usize] != mark {
                    out_mark[p as usize] = mark;
                    live_out.push((p, v));
                    if !defined_in(p) && in_mark[p as usize] != mark {
                        in_mark[p as usize] = mark;
                        work.push(p);
                    }
                }
            }
        }
    }
    (Sets::from_pairs(nb, &live_in), Sets::from_pairs(nb, &live_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-point definition, as dense bit vectors (the reference the sparse
    /// computation must equal).
    fn reference(f: &Function) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
        let n = f.vregs.len();
        let nb = f.cfg.node_bound();
        let mut live_in = vec![vec![false; n]; nb];
        let mut live_out = vec![vec![false; n]; nb];
        let mut changed = true;
        while changed {
            changed = false;
            for &b in f.layout.iter().rev() {
                let mut out = vec![false; n];
                for e in f.cfg.edges_directed(b, Direction::Outgoing) {
                    let s = e.target();
                    let mut l = live_in[s.index()].clone();
                    for p in &f.cfg[s].params {
                        l[*p as usize] = false;
                    }
                    for a in &e.weight().args {
                        l[*a as usize] = true;
                    }
                    for k in 0..n {
                        out[k] |= l[k];
                    }
                }
                let mut live = out.clone();
                for i in f.cfg[b].instrs.iter().rev() {
                    for_each_def(i, |v| live[v as usize] = false);
                    for_each_use(i, |v| live[v as usize] = true);
                }
                if live != live_in[b.index()] || out != live_out[b.index()] {
                    live_in[b.index()] = live;
                    live_out[b.index()] = out;
                    changed = true;
                }
            }
        }
        let sparse = |s: &Vec<Vec<bool>>| {
            s.iter().map(|l| (0..n as u32).filter(|v| l[*v as usize]).collect::<Vec<u32>>()).collect()
        };
        (sparse(&live_in), sparse(&live_out))
    }

    #[test]
    fn sparse_liveness_equals_the_fixed_point_on_every_sample() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/samples");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).expect("samples") {
            let path = entry.expect("entry").path();
            if path.extension().is_none_or(|e| e != "ptx") {
                continue;
            }
            let src = std::fs::read_to_string(&path).expect("read");
            let Ok((m, _)) = crate::ptx::parse(&src) else { continue };
            let Ok((irm, _)) = crate::lower::lower(&m, &Default::default()) else { continue };
            for f in &irm.functions {
                let l = liveness(f);
                let (i, o) = reference(f);
                for &b in &f.layout {
                    assert_eq!(l.live_in(b), i[b.index()].as_slice(), "{}: live-in of {b:?}", f.name);
                    assert_eq!(l.live_out(b), o[b.index()].as_slice(), "{}: live-out of {b:?}", f.name);
                }
                checked += 1;
            }
        }
        assert!(checked >= 30, "only {checked} functions checked");
    }
}
