//! Structural checks of the IR invariants listed in [`crate::ir`]. A failure is a bug in
//! ptx2sass, reported as an internal error naming the block and instruction.

use super::{EdgeKind, Function, VRegKind, for_each_def};
use crate::sass::instr::{Dst, Reg, SrcKind};
use crate::sass::op::Op;

/// Checks `f`; returns a description of the first violated invariant.
pub fn verify(f: &Function) -> Result<(), String> {
    let pos = f.layout_positions();
    let mut defs = vec![0u32; f.vregs.len()];
    for (li, &b) in f.layout.iter().enumerate() {
        let block = &f.cfg[b];
        let here = || format!("{} in {}", f.block_label(b.index() as u32), f.name);
        if block.instrs.len() != block.origins.len() {
            return Err(format!("{}: origins out of step with instructions", here()));
        }
        let Some(term) = block.instrs.last() else {
            return Err(format!("{}: empty block", here()));
        };
        let succs = f.succ_edges(b);
        let ok = match term.op {
            Op::Bra if term.guard.is_none() => succs.len() == 1 && f.cfg[succs[0]].kind == EdgeKind::Taken,
            Op::Bra => {
                succs.len() == 2
                    && f.cfg[succs[0]].kind == EdgeKind::Taken
                    && f.cfg[succs[1]].kind == EdgeKind::Fallthrough
                    && {
                        let (_, ft) = f.cfg.edge_endpoints(succs[1]).expect("edge");
                        pos[ft.index()] == li + 1
                    }
            }
            // SYNC/BRK leave through the reconvergence stack to their SSY/PBK target,
            // which the CFG records as the `Taken` edge.
            Op::Sync | Op::Brk if term.guard.is_none() => succs.len() == 1 && f.cfg[succs[0]].kind == EdgeKind::Taken,
            Op::Sync | Op::Brk => {
                succs.len() == 2 && f.cfg[succs[1]].kind == EdgeKind::Fallthrough && {
                    let (_, ft) = f.cfg.edge_endpoints(succs[1]).expect("edge");
                    pos[ft.index()] == li + 1
                }
            }
            Op::Exit | Op::Ret if term.guard.is_none() => succs.is_empty(),
            _ => false,
        };
        if !ok {
            return Err(format!("{}: bad terminator `{}` for {} successors", here(), f.instr_text(term), succs.len()));
        }
        for i in &block.instrs[..block.instrs.len() - 1] {
            if i.op.info().control && !(matches!(i.op, Op::Exit | Op::Ret | Op::Sync | Op::Brk) && i.guard.is_some()) {
                return Err(format!(
                    "{}: control instruction `{}` before the end of the block",
                    here(),
                    f.instr_text(i)
                ));
            }
        }
        for e in &succs {
            let (_, t) = f.cfg.edge_endpoints(*e).expect("edge");
            if f.cfg[*e].args.len() != f.cfg[t].params.len() {
                return Err(format!(
                    "{}: edge to {} passes {} args for {} params",
                    here(),
                    f.block_label(t.index() as u32),
                    f.cfg[*e].args.len(),
                    f.cfg[t].params.len()
                ));
            }
        }
        for &p in &block.params {
            defs[p as usize] += 1;
        }
        for i in &block.instrs {
            let text = || f.instr_text(i);
            for_each_def(i, |v| defs[v as usize] += 1);
            for d in &i.dsts {
                match d {
                    Dst::Reg(r) => {
                        if let Reg::V(v) = r.reg {
                            match f.vregs.get(v as usize) {
                                Some(VRegKind::Gpr(n)) if *n == r.n && r.comp == 0 => {}
                                k => {
                                    return Err(format!(
                                        "{}: `{}` defines %{v} ({k:?}) as {} regs",
                                        here(),
                                        text(),
                                        r.n
                                    ));
                                }
                            }
                        }
                    }
                    Dst::Pred(Reg::V(v)) if f.vregs.get(*v as usize) != Some(&VRegKind::Pred) => {
                        return Err(format!("{}: `{}` writes non-predicate %{v} as a predicate", here(), text()));
                    }
                    _ => {}
                }
            }
            let gpr_ok = |r: crate::sass::instr::RegRef| match r.reg {
                Reg::V(v) => {
                    matches!(f.vregs.get(v as usize), Some(VRegKind::Gpr(n)) if r.comp + r.n <= *n)
                }
                Reg::R(_) => true,
                Reg::P(_) => false,
            };
            for s in &i.srcs {
                match s.kind {
                    SrcKind::Pred(Reg::V(v)) if f.vregs.get(v as usize) != Some(&VRegKind::Pred) => {
                        return Err(format!("{}: `{}` reads %{v} as a predicate", here(), text()));
                    }
                    _ => {
                        if let Some(r) = s.gprs()
                            && !gpr_ok(r)
                        {
                            return Err(format!("{}: `{}` reads {:?} beyond its width", here(), text(), r));
                        }
                    }
                }
            }
            if let Some(g) = i.guard
                && let Reg::V(v) = g.pred
                && f.vregs.get(v as usize) != Some(&VRegKind::Pred)
            {
                return Err(format!("{}: guard of `{}` is not a predicate", here(), text()));
            }
        }
    }
    super::cc::verify(f)?;
    if f.ssa {
        if let Some(v) = defs.iter().position(|&d| d > 1) {
            return Err(format!("{}: %{v} has {} definitions in SSA form", f.name, defs[v]));
        }
        check_dominance(f)?;
    }
    Ok(())
}

/// In SSA form every use must be dominated by its definition (a block parameter or an
/// earlier instruction of the same block or of a dominating block), and every edge
/// argument by the end of the edge's source block.
fn check_dominance(f: &Function) -> Result<(), String> {
    let doms = crate::ir::dom::DomTree::of_cfg(f);
    // Definition sites, dense by register number (the registers were checked against
    // `f.vregs` by `verify`).
    let mut def_at: Vec<Option<(crate::ir::BlockId, usize)>> = vec![None; f.vregs.len()];
    for &b in &f.layout {
        for &p in &f.cfg[b].params {
            if let Some(d) = def_at.get_mut(p as usize) {
                *d = Some((b, 0));
            }
        }
        for (k, i) in f.cfg[b].instrs.iter().enumerate() {
            for_each_def(i, |v| {
                if let Some(d) = def_at.get_mut(v as usize) {
                    *d = Some((b, k + 1));
                }
            });
        }
    }
    let dominated = |v: u32, b: crate::ir::BlockId, pos: usize| -> bool {
        let Some(&Some((db, dpos))) = def_at.get(v as usize) else {
            return false;
        };
        if db == b {
            return dpos <= pos;
        }
        doms.dominates(db.index(), b.index())
    };
    for &b in &f.layout {
        for (k, i) in f.cfg[b].instrs.iter().enumerate() {
            let mut bad = None;
            crate::ir::for_each_use(i, |v| {
                if !dominated(v, b, k) {
                    bad = Some(v);
                }
            });
            if let Some(v) = bad {
                return Err(format!(
                    "{} in {}: `{}` uses %{v}, whose definition does not dominate it",
                    f.block_label(b.index() as u32),
                    f.name,
                    f.instr_text(i)
                ));
            }
        }
        for e in f.succ_edges(b) {
            for &a in &f.cfg[e].args {
                if !dominated(a, b, usize::MAX) {
                    return Err(format!(
                        "{} in {}: edge argument %{a} is not dominated by its definition",
                        f.block_label(b.index() as u32),
                        f.name
                    ));
                }
            }
        }
    }
    Ok(())
}
