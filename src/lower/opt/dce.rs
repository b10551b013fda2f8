//! Dead-code elimination on SSA form (part of [`super::run`]'s rounds): instructions
//! whose results nobody reads go, unless they have side effects; so do block parameters
//! nobody reads.
//!
//! Liveness is kept in tables indexed by virtual register and CC value; a number beyond
//! them (none: the tables are sized by the function's counts) counts as live, so that
//! nothing is removed on its account.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::def_sites;
use crate::ir::{BlockId, Function, for_each_use};
use crate::sass::instr::{Dst, Instr, Reg, RegRef};
use crate::sass::op::Op;
use petgraph::Direction;
use petgraph::visit::EdgeRef;

/// True if an instruction must stay even when its results are unused.
fn has_side_effects(i: &Instr) -> bool {
    let info = i.op.info();
    if info.store || info.control || i.dsts.is_empty() {
        return true;
    }
    match i.op {
        Op::Bar { .. }
        | Op::Membar(_)
        | Op::Depbar { .. }
        | Op::Atom(_)
        | Op::Atoms(_)
        | Op::Red(_)
        | Op::Call(_)
        | Op::Ret => true,
        // Volatile, acquire and mmio loads are observable.
        Op::Ld(m) | Op::Ldg(m) | Op::Lds(m) | Op::Ldl(m) => m.keep || m.cop == crate::sass::op::CacheOp::Cv,
        _ => false,
    }
}

/// Removes instructions whose results are unused and block parameters nobody reads. The
/// CC values ([`crate::ir::cc`]) are results like any other: a writer stays while a reader
/// of its value is live, and then keeps its own operands live. A writer kept only for its
/// CC value writes its unused register result to `RZ` (ptxas's `IADD RZ.CC, ..`).
pub fn dce(f: &mut Function) -> bool {
    /// A value: a virtual register or a CC value.
    #[derive(Clone, Copy)]
    enum Val {
        V(u32),
        Cc(u32),
    }
    let nv = f.vregs.len();
    let mut live = vec![false; nv];
    let mut live_cc = vec![false; f.cc_values as usize];
    let mut work: Vec<Val> = vec![];
    let defs = def_sites(f);
    let cc_defs = crate::ir::cc::def_sites(f);
    let uses = |i: &Instr, work: &mut Vec<Val>| {
        for_each_use(i, |v| work.push(Val::V(v)));
        if let Some(c) = i.cc.read {
            work.push(Val::Cc(c));
        }
    };
    // Roots: side-effecting instructions.
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            if has_side_effects(i) {
                uses(i, &mut work);
            }
        }
    }
    // Param → its block and position: a live parameter makes the edge arguments
    // feeding it live.
    let mut param_at: Vec<Option<(BlockId, usize)>> = vec![None; nv];
    for &b in &f.layout {
        for (k, p) in f.cfg[b].params.iter().enumerate() {
            if let Some(at) = param_at.get_mut(*p as usize) {
                *at = Some((b, k));
            }
        }
    }
    while let Some(x) = work.pop() {
        let site = match x {
            Val::V(v) => {
                let Some(l) = live.get_mut(v as usize) else { continue };
                if std::mem::replace(l, true) {
                    continue;
                }
                if let Some(&Some((b, k))) = param_at.get(v as usize) {
                    for e in f.cfg.edges_directed(b, Direction::Incoming) {
                        if let Some(a) = e.weight().args.get(k) {
                            work.push(Val::V(*a));
                        }
                    }
                }
                defs.get(v)
            }
            Val::Cc(c) => {
                let Some(l) = live_cc.get_mut(c as usize) else { continue };
                if std::mem::replace(l, true) {
                    continue;
                }
                cc_defs.get(c as usize).copied().flatten()
            }
        };
        if let Some((b, k)) = site
            && let Some(i) = f.cfg[b].instrs.get(k)
        {
            uses(i, &mut work);
        }
    }
    let is_live = |v: u32| live.get(v as usize).copied().unwrap_or(true);
    let cc_is_live = |c: u32| live_cc.get(c as usize).copied().unwrap_or(true);
    let mut changed = false;
    // Atomics whose old value nobody reads: ptxas 11.8 emits `RED.E.op [a], b` for a
    // global `atom` with an unused result and `ATOMS.op RZ, [a], b` for a shared one
    // (`samples/histogram_atomic`, `samples/warp_reduce`).
    for b in f.layout.clone() {
        for i in f.cfg[b].instrs.iter_mut() {
            let dead = matches!(i.dsts.first(), Some(Dst::Reg(r)) if matches!(r.reg, Reg::V(v) if !is_live(v)));
            if !dead {
                continue;
            }
            let n = if let Some(Dst::Reg(r)) = i.dsts.first() { r.n } else { 1 };
            match i.op {
                // RED has no EXCH or CAS: its operation field holds ADD..XOR (nvdisasm 11.8;
                // ptxas 11.8 writes `ATOM.E.EXCH RZ, [R2+0x24], R7` for an unused exchange).
                Op::Atom(m) if !matches!(m.op, crate::sass::op::AtomOp::Cas | crate::sass::op::AtomOp::Exch) => {
                    i.op = Op::Red(m);
                    i.dsts.clear();
                }
                Op::Atom(_) | Op::Atoms(_) => {
                    if let Some(d) = i.dsts.first_mut() {
                        *d = Dst::Reg(RegRef::rz(n));
                    }
                }
                _ => continue,
            }
            changed = true;
        }
    }
    let mut keep: Vec<bool> = vec![];
    for b in f.layout.clone() {
        let blk = &mut f.cfg[b];
        keep.clear();
        keep.resize(blk.instrs.len(), true);
        for (k, i) in blk.instrs.iter_mut().enumerate() {
            if has_side_effects(i) {
                continue;
            }
            let mut any_live = false;
            crate::ir::for_each_def(i, |d| any_live |= is_live(d));
            let cc_live = i.cc.def.is_some_and(cc_is_live);
            if !any_live && !cc_live {
                if let Some(x) = keep.get_mut(k) {
                    *x = false;
                }
            } else if !any_live {
                // Kept for its CC value only.
                for d in i.dsts.iter_mut() {
                    if let Dst::Reg(r) = d
                        && r.n == 1
                        && matches!(r.reg, Reg::V(_))
                    {
                        *d = Dst::Reg(RegRef::rz(1));
                        changed = true;
                    }
                }
            }
        }
        if keep.iter().any(|k| !k) {
            changed = true;
            let blk = &mut f.cfg[b];
            // `keep` has one entry per instruction (and origin); past it, keep.
            let mut it = keep.iter();
            blk.instrs.retain(|_| it.next().copied().unwrap_or(true));
            let mut it = keep.iter();
            blk.origins.retain(|_| it.next().copied().unwrap_or(true));
        }
        // Dead block parameters.
        if f.cfg[b].params.iter().all(|p| is_live(*p)) {
            continue;
        }
        // Which positions stay, then every incoming edge's arguments and the parameters
        // are filtered in one pass each.
        let kept: Vec<bool> = f.cfg[b].params.iter().map(|p| is_live(*p)).collect();
        changed = true;
        let in_edges: Vec<_> = f.cfg.edges_directed(b, Direction::Incoming).map(|e| e.id()).collect();
        // Arguments and parameters by position; past `kept`, keep.
        for e in in_edges {
            let mut it = kept.iter();
            f.cfg[e].args.retain(|_| it.next().copied().unwrap_or(true));
        }
        let mut it = kept.iter();
        f.cfg[b].params.retain(|_| it.next().copied().unwrap_or(true));
    }
    changed
}
