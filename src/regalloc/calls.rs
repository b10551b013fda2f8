//! Calls in register allocation: the calling convention of `sass::abi` (`docs/abi.md`).
//!
//! * **Values live across a call** must be in callee-saved registers or spilled around
//!   it. regalloc2 learns this from the call's *clobbers* ([`clobbers`]): in each class
//!   the low slots are caller-saved and the call clobbers them, the top
//!   [`callee_saved_slots`] are not, so regalloc2 keeps a value live across a call in one
//!   of those or spills it. Packing then gives every web live across a call a
//!   callee-saved register (`pack`); the slot counts are what the callee-saved registers
//!   under the budget can always hold.
//! * **Our slow paths** (`ir::FuncAbi::preserves`, `CallSite::preserves`) have a private
//!   convention: the callee saves every register it writes outside
//!   `sass::abi::PRIVATE_CLOBBERED` (`R4..R7`), so such a call clobbers no regalloc2
//!   slot (`adapter`) and packing only keeps the webs live across it out of `R4..R7`.
//! * **Predicates** are all caller-saved: those live across a call are kept in GPRs
//!   (`predicates::demote`), and the call clobbers P0..P6 for regalloc2.
//! * After allocation ([`finish`]) the pseudo-ops become code: `Op::Params` a parallel
//!   move from the parameter registers; an `LDL` of an incoming stack argument
//!   (`MemMods::incoming`, loaded where it is read) gets the frame added to its offset;
//!   `Op::Call` lowers the stack pointer past the stack arguments (which lowering stored
//!   below it, `lower::calls::realcall`), the argument moves, then
//!   `CAL`, `JCAL` or `PRET` + `JMX`, then the moves of the results; a device function's
//!   `RET` the moves of its results, the restores of the callee-saved registers it wrote
//!   and the stack pointer's return. A device function's prologue moves `R1` down by its
//!   frame and saves those registers (ptxas 11.8: `IADD32I R1, R1, -0x8; STL [R1], R2`).

use super::Stats;
use crate::ir::{BlockId, CallKind, Edge, EdgeKind, Function};
use crate::ptx::ast::FuncKind;
use crate::sass::abi::{AbiLoc, callee_saved, is_callee_saved};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{MemMods, MemSize, Op};
use regalloc2::{PReg, PRegSet, RegClass};
use std::collections::BTreeSet;

/// Slots of each class (singles, pairs, quads) that the callee-saved registers below
/// `limit` can hold all at once, shared among `banks` banks, with at least `min_singles`
/// singles (a call's returned words are defined in slots the call does not clobber).
pub fn callee_saved_slots(limit: u32, banks: usize, min_singles: usize) -> [usize; 3] {
    // Blocks of four aligned callee-saved registers: R16, R20, R24, R28, then R36, R44...
    let blocks = callee_saved(limit).filter(|r| r % 4 == 0 && (1..4).all(|k| is_callee_saved(r + k))).count();
    let b = banks.max(1);
    let quads = blocks / 4;
    let pair_blocks = blocks / 4;
    let singles = (blocks - quads - pair_blocks) * 4 + usize::from(limit > 2);
    [(singles / b).max(min_singles), 2 * pair_blocks / b, quads / b]
}

/// The slots a call clobbers in a class of `size` slots of which the top `saved` are
/// callee-saved ([`callee_saved_slots`]).
pub fn clobbers(sizes: [usize; 3], saved: [usize; 3]) -> PRegSet {
    let mut set = PRegSet::empty();
    for (c, class) in [RegClass::Int, RegClass::Float, RegClass::Vector].into_iter().enumerate() {
        for k in 0..sizes[c].saturating_sub(saved[c]).min(64) {
            set = set.with(PReg::new(k, class));
        }
    }
    set
}

/// Every predicate register (a call clobbers them all).
pub fn all_predicates() -> PRegSet {
    let mut set = PRegSet::empty();
    for k in 0..crate::regalloc::predicates::PRED_REGS {
        set = set.with(PReg::new(k, RegClass::Int));
    }
    set
}

/// The most words a call of `f` returns.
pub fn max_returned_words(f: &Function) -> usize {
    f.calls.iter().map(|c| c.rets.len()).max().unwrap_or(0)
}

fn sp_add(delta: i32) -> Instr {
    Instr::new(
        Op::Iadd32i { cc: false, x: false },
        vec![Dst::reg(Reg::R(1), 1)],
        vec![Src::r32(Reg::R(1)), Src::imm(delta as u32)],
    )
}

fn local(store: bool, r: u8, off: u32) -> Instr {
    local_n(store, r, 1, off)
}

/// `STL`/`LDL` of the `n` (1 or 2) registers from `Rr` at `[R1+off]`.
fn local_n(store: bool, r: u8, n: u8, off: u32) -> Instr {
    let a = Src::addr(RegRef::new(Reg::R(1), 1), off as i32);
    let m = MemMods::new(if n == 2 { MemSize::B64 } else { MemSize::B32 }, false);
    if store {
        Instr::new(Op::Stl(m), vec![], vec![a, Src::reg(RegRef::new(Reg::R(r), n))])
    } else {
        Instr::new(Op::Ldl(m), vec![Dst::reg(Reg::R(r), n)], vec![a])
    }
}

/// The save slots of the registers `saved` above `base` (bytes, 4-aligned): aligned
/// pairs `R2k, R2k+1` both saved share an 8-byte slot (one `STL.64`/`LDL.64`, placed
/// first, 8-aligned), the others get 4 bytes each. Returns (first register, count,
/// offset) per slot and the end offset.
fn save_slots(saved: &BTreeSet<u8>, base: u32) -> (Vec<(u8, u8, u32)>, u32) {
    let pairs: Vec<u8> = saved.iter().copied().filter(|r| r % 2 == 0 && saved.contains(&(r + 1))).collect();
    let mut off = if pairs.is_empty() { base } else { base.div_ceil(8) * 8 };
    let mut slots = vec![];
    for &r in &pairs {
        slots.push((r, 2, off));
        off += 8;
    }
    for &r in saved {
        let paired = pairs.contains(&(r & !1)) && (r % 2 == 0 || pairs.contains(&(r - 1)));
        if !paired {
            slots.push((r, 1, off));
            off += 4;
        }
    }
    (slots, off)
}

/// `STL [R1+off], Rr` with a signed offset.
fn local_at(r: u8, off: i32) -> Instr {
    let a = Src::addr(RegRef::new(Reg::R(1), 1), off);
    Instr::new(Op::Stl(MemMods::new(MemSize::B32, false)), vec![], vec![a, Src::r32(Reg::R(r))])
}

fn phys(s: &Src) -> u8 {
    match s.kind {
        SrcKind::Reg(RegRef { reg: Reg::R(r), comp, .. }) => r + comp,
        _ => 255,
    }
}

fn phys_dst(d: &Dst) -> u8 {
    match d {
        Dst::Reg(RegRef { reg: Reg::R(r), comp, .. }) => r + comp,
        _ => 255,
    }
}

/// Turns the calling-convention pseudo-ops of the allocated `f` into code (module docs),
/// adds a device function's prologue and epilogue and counts registers again.
pub fn finish(f: &mut Function, stats: &mut Stats) {
    let device = f.kind == FuncKind::Func;
    if !device && !f.has_calls() {
        return;
    }
    // The frame so far (`expand::finish`: local data, then spill slots) and, for a device
    // function, the callee-saved registers it writes, saved above it.
    let frame = if f.local_bytes + f.spill_bytes > 0 { f.local_bytes + f.spill_bytes } else { 0 };
    let mut saved: BTreeSet<u8> = BTreeSet::new();
    // The private convention of our slow paths (`ir::FuncAbi::preserves`): every register
    // written outside `PRIVATE_CLOBBERED` is saved, not only the callee-saved ones (R1, the
    // stack pointer, comes back by the frame's arithmetic).
    let private = f.abi.as_ref().is_some_and(|a| a.preserves);
    let keeps = |x: u8| {
        if private { x != 1 && !crate::sass::abi::PRIVATE_CLOBBERED.contains(&x) } else { is_callee_saved(x) }
    };
    if device {
        for &b in &f.layout {
            for i in &f.cfg[b].instrs {
                for d in &i.dsts {
                    if let Dst::Reg(RegRef { reg: Reg::R(r), comp, n }) = *d {
                        for k in 0..n {
                            let x = r + comp + k;
                            if x != 255 && keeps(x) {
                                saved.insert(x);
                            }
                        }
                    }
                }
            }
        }
    }
    let (slots, save_end) = save_slots(&saved, frame.div_ceil(4) * 4);
    let total = if saved.is_empty() { frame } else { save_end.div_ceil(8) * 8 };
    let abi = f.abi.clone().unwrap_or_default();
    let calls = f.calls.clone();
    let mut splits: Vec<(BlockId, usize)> = vec![];
    for b in f.layout.clone() {
        let old = std::mem::take(&mut f.cfg[b].instrs);
        let origins = std::mem::take(&mut f.cfg[b].origins);
        let mut out = vec![];
        let mut outo = vec![];
        if device && b == f.entry {
            if total > 0 {
                out.push(sp_add(-(total as i32)));
            }
            for &(r, n, off) in &slots {
                out.push(local_n(true, r, n, off));
            }
            outo.resize(out.len(), Default::default());
        }
        for (i, o) in old.into_iter().zip(origins) {
            let n0 = out.len();
            match i.op {
                Op::Params => {
                    let mut moves = vec![];
                    let mut loads = vec![];
                    for (d, loc) in i.dsts.iter().zip(&abi.params) {
                        match loc {
                            AbiLoc::Reg(r) => moves.push((phys_dst(d), Reg::R(*r))),
                            AbiLoc::Stack(off) => loads.push(local(false, phys_dst(d), total + off)),
                        }
                    }
                    super::expand::parallel_move(&moves, &mut out);
                    out.extend(loads);
                }
                // An incoming stack argument: at the caller's `[R1 + off]`, above this
                // function's frame (ptxas 11.8 `-c`: `LDL R3, [R1+0x208]` for byte 0x200
                // behind an 8-byte frame). Only device functions have them.
                Op::Ldl(m) if m.incoming => {
                    // Resolved: a plain local load from here on.
                    let mut i = Instr { op: Op::Ldl(crate::sass::op::MemMods { incoming: false, ..m }), ..i };
                    if let Some(SrcKind::Addr { offset, .. }) = i.srcs.first_mut().map(|s| &mut s.kind) {
                        // The frame and the argument area are within local memory (512 KiB).
                        *offset = offset.saturating_add(total as i32);
                    }
                    out.push(i);
                }
                Op::Call(site) => {
                    let c = &calls[site as usize];
                    let stack = crate::sass::abi::outgoing_area(c.stack_bytes);
                    if stack > 0 {
                        out.push(sp_add(-(stack as i32)));
                    }
                    let mut moves = vec![];
                    // An argument that is the stack pointer itself (the address of a
                    // `.local` buffer at offset 0, e.g. the buffer of a return value
                    // passed through memory) means R1 before it is lowered for the stack
                    // arguments: set after the moves, or stored with R1 raised back.
                    let mut sp_args = vec![];
                    for (s, loc) in i.srcs[1..].iter().zip(&c.args) {
                        match loc {
                            AbiLoc::Reg(r) if phys(s) == 1 && stack > 0 => sp_args.push(*r),
                            AbiLoc::Reg(r) => moves.push((*r, Reg::R(phys(s)))),
                            AbiLoc::Stack(off) if phys(s) == 1 && stack > 0 => {
                                out.push(sp_add(stack as i32));
                                out.push(local_at(phys(s), *off as i32 - stack as i32));
                                out.push(sp_add(-(stack as i32)));
                            }
                            AbiLoc::Stack(off) => out.push(local(true, phys(s), *off)),
                        }
                    }
                    // The target address must survive the argument moves.
                    let mut target = i.srcs[0];
                    if c.kind == CallKind::Indirect {
                        let t = phys(&target);
                        if moves.iter().any(|(d, _)| *d == t) {
                            moves.push((0, Reg::R(t)));
                            target = Src::r32(Reg::R(0));
                        }
                    }
                    super::expand::parallel_move(&moves, &mut out);
                    for r in sp_args {
                        let add = Op::Iadd32i { cc: false, x: false };
                        out.push(Instr::new(
                            add,
                            vec![Dst::reg(Reg::R(r), 1)],
                            vec![Src::r32(Reg::R(1)), Src::imm(stack)],
                        ));
                    }
                    match c.kind {
                        CallKind::Internal => out.push(Instr::new(Op::Cal, vec![], vec![target])),
                        CallKind::External => out.push(Instr::new(Op::Jcal, vec![], vec![target])),
                        CallKind::Indirect => {
                            // PRET's target is the next block (split below).
                            out.push(Instr::new(Op::Pret, vec![], vec![Src::label(u32::MAX)]));
                            out.push(Instr::new(Op::Jmx, vec![], vec![target]));
                            splits.push((b, out.len()));
                        }
                    }
                    let rets: Vec<(u8, Reg)> =
                        i.dsts.iter().zip(&c.rets).map(|(d, r)| (phys_dst(d), Reg::R(*r))).collect();
                    super::expand::parallel_move(&rets, &mut out);
                    if stack > 0 {
                        out.push(sp_add(stack as i32));
                    }
                }
                Op::Ret if device => {
                    let moves: Vec<(u8, Reg)> =
                        i.srcs.iter().zip(&abi.rets).map(|(s, r)| (*r, Reg::R(phys(s)))).collect();
                    super::expand::parallel_move(&moves, &mut out);
                    for &(r, n, off) in &slots {
                        out.push(local_n(false, r, n, off));
                    }
                    if total > 0 {
                        out.push(sp_add(total as i32));
                    }
                    out.push(Instr { srcs: vec![], ..i });
                }
                _ => out.push(i),
            }
            outo.extend(std::iter::repeat_n(o, out.len() - n0));
        }
        f.cfg[b].instrs = out;
        f.cfg[b].origins = outo;
    }
    // Indirect calls: the code after `JMX` starts a block, PRET's target. Later splits
    // of one block first, so that earlier positions stay valid.
    splits.sort_by(|a, b| b.cmp(a));
    for (b, at) in splits {
        split_after(f, b, at);
    }
    if device {
        f.spill_bytes = total.saturating_sub(f.local_bytes);
    }
    // Registers: the argument and result registers count.
    let mut top = f.num_regs;
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            for r in i.dsts.iter().filter_map(|d| if let Dst::Reg(r) = d { Some(*r) } else { None }) {
                if let Reg::R(x) = r.reg
                    && x != 255
                {
                    top = top.max(x as u32 + r.comp as u32 + r.n as u32);
                }
            }
            for r in i.srcs.iter().filter_map(|s| s.gprs()) {
                if let Reg::R(x) = r.reg
                    && x != 255
                {
                    top = top.max(x as u32 + r.comp as u32 + r.n as u32);
                }
            }
        }
    }
    f.num_regs = top;
    stats.regs = top;
    stats.spill_bytes = f.spill_bytes;
    stats.spill_stores += slots.len() as u32;
    stats.spill_loads += slots.len() as u32 * f.layout.iter().filter(|b| is_return_block(f, **b)).count() as u32;
}

fn is_return_block(f: &Function, b: BlockId) -> bool {
    f.cfg[b].instrs.last().is_some_and(|i| i.op == Op::Ret)
}

/// Moves the instructions of `b` from `at` on into a new block after it in the layout,
/// reached from `b` by a branch; `PRET` before `at` targets the new block.
fn split_after(f: &mut Function, b: BlockId, at: usize) {
    let tail: Vec<Instr> = f.cfg[b].instrs.split_off(at);
    let tail_o = f.cfg[b].origins.split_off(at);
    let nb = f.new_block(String::new());
    f.cfg[nb].instrs = tail;
    f.cfg[nb].origins = tail_o;
    let out: Vec<_> = f.succ_edges(b);
    for e in out {
        let (_, t) = f.cfg.edge_endpoints(e).expect("edge");
        let w = f.cfg.remove_edge(e).expect("edge");
        f.cfg.add_edge(nb, t, w);
    }
    f.cfg.add_edge(b, nb, Edge { kind: EdgeKind::Taken, args: vec![] });
    let origin = f.cfg[b].origins.last().copied().unwrap_or_default();
    f.cfg[b].push(Instr::new(Op::Bra, vec![], vec![Src::label(nb.index() as u32)]), origin);
    // `... PRET; JMX Ra` end the head: PRET is the second to last before the branch.
    if let Some(p) = at.checked_sub(2).and_then(|k| f.cfg[b].instrs.get_mut(k))
        && p.op == Op::Pret
    {
        p.srcs[0] = Src::label(nb.index() as u32);
    }
    let pos = f.layout.iter().position(|x| *x == b).expect("in layout");
    f.layout.insert(pos + 1, nb);
}
