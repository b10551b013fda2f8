//! Scheduling: instruction order, then control fields.
//!
//! 0. [`list`] (run by the driver before and again after register allocation): a list
//!    scheduler per basic block over a dependence DAG, hiding latency under a register
//!    pressure bound.
//! 1. `linearize`: blocks in layout order; branches to blocks that only jump are
//!    retargeted, branches to the next block dropped, and `EXIT` followed by a branch to
//!    itself, as ptxas ends every function (findings section 7).
//! 2. `annotate`: stall counts, write/read barriers, wait masks and `DEPBAR.LE` partial
//!    waits (see that module).
//! 3. With `--serial`, every barrier is waited for by the next instruction.
//!
//! [`check`] independently verifies the result; [`estimate`] gives the cycle estimate.

mod annotate;
pub mod check;
mod dag;
pub mod effects;
pub mod estimate;
pub mod list;
mod ready;
pub mod table;
pub mod tex;

use crate::ir::{EdgeKind, Function};
use crate::sass::instr::{Instr, SrcKind};
use crate::sass::op::Op;
use crate::sass::program::{Ctrl, SassFunction, Scheduled};
use std::collections::HashMap;

fn is_jump_only(f: &Function, b: crate::ir::BlockId) -> bool {
    let blk = &f.cfg[b];
    blk.instrs.len() == 1 && blk.instrs[0].op == Op::Bra && blk.instrs[0].guard.is_none()
}

/// Linear code of a function. Jump-only blocks disappear (branches to them are
/// retargeted) unless a conditional branch falls through into them; a `BRA` to the next
/// surviving block is dropped; branch targets become instruction indices.
fn linearize(f: &Function) -> Vec<Scheduled> {
    let target_of = |mut b: crate::ir::BlockId| {
        for _ in 0..64 {
            if is_jump_only(f, b) {
                b = f.succs(b)[0];
            } else {
                break;
            }
        }
        b
    };
    // A block entered by a fall-through edge: the not-taken path of a guarded `BRA`, and
    // also of a guarded `BRK`/`SYNC`/`EXIT` (reconvergence turns a loop's exit branch into
    // `@P BRK`, whose fall-through may be the jump-only back edge: dropping it let the
    // loop fall out of itself, found by the arbitrary-CFG generator).
    let is_fallthrough_succ = |b: crate::ir::BlockId| {
        f.cfg.edges_directed(b, petgraph::Direction::Incoming).any(|e| e.weight().kind == EdgeKind::Fallthrough)
    };
    let surviving: Vec<crate::ir::BlockId> = f
        .layout
        .iter()
        .copied()
        .filter(|&b| !is_jump_only(f, b) || is_fallthrough_succ(b) || is_jump_only(f, target_of(b)))
        .collect();
    let mut code: Vec<Scheduled> = vec![];
    let mut block_start: HashMap<usize, usize> = HashMap::new();
    for (si, &b) in surviving.iter().enumerate() {
        block_start.insert(b.index(), code.len());
        let blk = &f.cfg[b];
        let mut label = (!blk.name.is_empty()).then(|| blk.name.clone());
        let next = surviving.get(si + 1).copied();
        for (k, i) in blk.instrs.iter().enumerate() {
            let last = k + 1 == blk.instrs.len();
            if last && i.op == Op::Bra && i.guard.is_none() && Some(target_of(f.succs(b)[0])) == next {
                continue;
            }
            // Provenance: the PTX statement the IR instruction came from (`Block::origins`;
            // `Span::default()`, offset 0 with an empty span, is "none").
            let o = blk.origins.get(k).filter(|s| s.hi > s.lo).map(|s| s.lo);
            code.push(Scheduled { instr: i.clone().from_origin(o), ctrl: Ctrl::default(), label: label.take() });
        }
    }
    for s in code.iter_mut() {
        for src in s.instr.srcs.iter_mut() {
            if let SrcKind::Label(t) = src.kind {
                let node = target_of(petgraph::stable_graph::NodeIndex::new(t as usize));
                src.kind = SrcKind::Label(block_start[&node.index()] as u32);
            }
        }
    }
    let mut code = peephole(code);
    // ptxas ends every function with a branch to itself after the final EXIT.
    if code.last().is_some_and(|s| matches!(s.instr.op, Op::Exit | Op::Ret) && s.instr.guard.is_none()) {
        let k = code.len() as u32;
        code.push(Scheduled {
            instr: Instr::new(Op::Bra, vec![], vec![crate::sass::instr::Src::label(k)]),
            ctrl: Ctrl::default(),
            label: None,
        });
    }
    code
}

/// The branch target of a `BRA` (its label operand).
fn bra_target(i: &Instr) -> Option<usize> {
    match (i.op, i.srcs.first().map(|s| s.kind)) {
        (Op::Bra, Some(SrcKind::Label(t))) => Some(t as usize),
        _ => None,
    }
}

/// Control-flow peepholes on linear code (ptxas's idioms):
/// * `@P BRA T` where `T` is an unguarded `SYNC`, `BRK` or `EXIT` becomes `@P SYNC` etc.;
/// * `@P BRA A; X; A:` with `X` an unguarded `BRA B`, `EXIT`, `SYNC` or `BRK` that no
///   branch targets becomes `@!P X`.
///
/// Then drops the removed instructions and renumbers branch targets.
fn peephole(mut code: Vec<Scheduled>) -> Vec<Scheduled> {
    let n = code.len();
    let mut targeted = vec![false; n + 1];
    for s in &code {
        for src in &s.instr.srcs {
            if let SrcKind::Label(t) = src.kind {
                targeted[t as usize] = true;
            }
        }
    }
    let mut dead = vec![false; n];
    for k in 0..n {
        let i = code[k].instr.clone();
        let (Some(t), Some(g)) = (bra_target(&i), i.guard) else { continue };
        if let Some(ts) = code.get(t)
            && ts.instr.guard.is_none()
            && matches!(ts.instr.op, Op::Sync | Op::Brk | Op::Exit)
        {
            code[k].instr = Instr::new(ts.instr.op, vec![], vec![]).guarded(g.pred, g.neg).from_origin(i.origin);
            continue;
        }
        if t == k + 2
            && let Some(x) = code.get(k + 1)
            && x.instr.guard.is_none()
            && matches!(x.instr.op, Op::Bra | Op::Exit | Op::Sync | Op::Brk)
            && !targeted[k + 1]
            && !dead[k]
        {
            let mut inv = x.instr.clone();
            inv.guard = Some(crate::sass::instr::Guard { pred: g.pred, neg: !g.neg });
            code[k + 1].instr = inv;
            code[k + 1].label = code[k].label.take().or(code[k + 1].label.take());
            dead[k] = true;
        }
    }
    let code = compact(code, &dead);
    // Code no control path reaches any more (e.g. a SYNC-only block now used as `@P SYNC`).
    let n = code.len();
    let mut reached = vec![false; n];
    let mut work = vec![0usize];
    while let Some(k) = work.pop() {
        if k >= n || std::mem::replace(&mut reached[k], true) {
            continue;
        }
        let i = &code[k].instr;
        for src in &i.srcs {
            if let SrcKind::Label(t) = src.kind {
                work.push(t as usize);
            }
        }
        let stops = i.guard.is_none() && matches!(i.op, Op::Bra | Op::Exit | Op::Ret | Op::Sync | Op::Brk);
        if !stops {
            work.push(k + 1);
        }
    }
    let dead: Vec<bool> = reached.iter().map(|r| !r).collect();
    compact(code, &dead)
}

/// Removes the instructions marked `dead`; a branch target pointing at a removed
/// instruction moves to the next kept one.
fn compact(code: Vec<Scheduled>, dead: &[bool]) -> Vec<Scheduled> {
    let n = code.len();
    let mut new_index = vec![0usize; n + 1];
    let mut next = 0;
    for k in 0..n {
        new_index[k] = next;
        if !dead[k] {
            next += 1;
        }
    }
    new_index[n] = next;
    let mut out: Vec<Scheduled> = code.into_iter().zip(dead).filter(|(_, d)| !**d).map(|(s, _)| s).collect();
    for s in out.iter_mut() {
        for src in s.instr.srcs.iter_mut() {
            if let SrcKind::Label(t) = src.kind {
                src.kind = SrcKind::Label(new_index[t as usize] as u32);
            }
        }
    }
    out
}

/// Scheduling options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Reorder instructions within blocks before register allocation ([`list`]); off
    /// with `--no-reorder`, which keeps the lowering's order.
    pub reorder: bool,
    /// Safe mode (`--serial`): the instruction after every variable-latency instruction
    /// waits for its write and read barriers (2 cycles after it, the minimum between
    /// setting a barrier and waiting on it), so no result or source is ever in flight
    /// while anything else runs.
    pub serial: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { reorder: true, serial: false }
    }
}

/// Schedules an allocated function into final code.
pub fn schedule(f: &Function, opts: &Options) -> SassFunction {
    let mut code = annotate::annotate(linearize(f));
    if opts.serial {
        annotate::serialize(&mut code);
    }
    SassFunction {
        name: f.name.clone(),
        kind: match f.kind {
            crate::ptx::ast::FuncKind::Entry => ".entry",
            crate::ptx::ast::FuncKind::Func => ".func",
        },
        regs: f.num_regs,
        frame_bytes: if f.local_bytes + f.spill_bytes > 0 {
            (f.local_bytes.div_ceil(16) * 16 + f.spill_bytes).div_ceil(8) * 8
        } else {
            0
        },
        spill_bytes: f.spill_bytes,
        shared_bytes: f.shared_bytes,
        params: f.params.iter().map(|p| (p.offset, p.ty.clone(), p.name.clone())).collect(),
        compiler_consts: vec![],
        code,
        symbols: f.symbols.clone(),
        linkage: f.linkage,
    }
}
