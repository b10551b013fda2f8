//! After packing: turns `copy`/`join` into `MOV`s, drops `undef`, adds the frame prologue
//! and counts registers.
//!
//! A `join` (and a multi-register `copy`) is a parallel move: every destination register
//! takes its source's old value. Moves are emitted when their destination is no longer a
//! pending source; a cycle is broken with three `LOP.XOR`s (no scratch register needed).

use super::Stats;
use super::verify::Moves;
use crate::ir::Function;
use crate::sass::instr::{Dst, Instr, RZ, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{LogicOp, Op};

/// Sequentializes the parallel move `dst_i <- src_i` (32-bit registers; `RZ` allowed as a
/// source).
pub fn parallel_move(moves: &[(u8, Reg)], out: &mut Vec<Instr>) {
    let mut pending: Vec<(u8, Reg)> = moves.iter().copied().filter(|(d, s)| Reg::R(*d) != *s).collect();
    let mov = |d: u8, s: Reg| Instr::new(Op::Mov, vec![Dst::reg(Reg::R(d), 1)], vec![Src::r32(s)]);
    while !pending.is_empty() {
        let ready = (0..pending.len()).find(|&k| {
            let d = pending[k].0;
            !pending.iter().any(|(_, s)| *s == Reg::R(d))
        });
        match ready {
            Some(k) => {
                let (d, s) = pending.remove(k);
                out.push(mov(d, s));
            }
            None => {
                // Every destination is still needed as a source: a cycle. Swap the first
                // move's registers in place, then redirect readers of the swapped register.
                let (d, s) = pending[0];
                let Reg::R(sr) = s else { unreachable!("RZ is never a move destination") };
                let xor = |a: u8, b: u8| {
                    Instr::new(
                        Op::Lop(LogicOp::Xor),
                        vec![Dst::reg(Reg::R(a), 1)],
                        vec![Src::r32(Reg::R(a)), Src::r32(Reg::R(b))],
                    )
                };
                out.push(xor(d, sr));
                out.push(xor(sr, d));
                out.push(xor(d, sr));
                pending.remove(0);
                // R(d) now holds s's value (done); R(sr) holds d's old value.
                for m in pending.iter_mut() {
                    if m.1 == Reg::R(d) {
                        m.1 = Reg::R(sr);
                    }
                }
                pending.retain(|(dd, ss)| Reg::R(*dd) != *ss);
            }
        }
    }
}

fn reg_of(s: &Src) -> Option<Reg> {
    match s.kind {
        SrcKind::Reg(r) if r.n == 1 && r.comp == 0 => Some(r.reg),
        _ => None,
    }
}

/// Expands pseudo-ops, inserts the frame prologue (when `frame`) and returns statistics,
/// with the moves it added (for `verify`).
pub fn finish(f: &mut Function, spill_slots: usize, frame: bool) -> Stats {
    let mut moves = Moves::new();
    let frame_bytes = if f.spill_bytes > 0 || f.local_bytes > 0 {
        let spill_base = f.local_bytes.div_ceil(16) * 16;
        (spill_base + 4 * spill_slots as u32).div_ceil(8) * 8
    } else {
        0
    };
    let mut stats = Stats { spill_bytes: f.spill_bytes, ..Stats::default() };
    for b in f.layout.clone() {
        let old = std::mem::take(&mut f.cfg[b].instrs);
        let origins = std::mem::take(&mut f.cfg[b].origins);
        let mut instrs = vec![];
        let mut new_origins = vec![];
        let mut is_move = vec![];
        for (i, o) in old.into_iter().zip(origins) {
            let n0 = instrs.len();
            let expanded = matches!(i.op, Op::Copy | Op::Join);
            match i.op {
                Op::Undef => {}
                Op::Copy | Op::Join => {
                    let Some(Dst::Reg(d)) = i.dsts.first().copied() else {
                        continue;
                    };
                    let Reg::R(base) = d.reg else { continue };
                    let mut moves = vec![];
                    if i.op == Op::Copy {
                        let s = i.srcs[0].as_reg().expect("copy source is a register");
                        for k in 0..d.n {
                            let src = match s.reg {
                                Reg::R(255) => RZ,
                                Reg::R(x) => Reg::R(x + k),
                                other => other,
                            };
                            moves.push((base + k, src));
                        }
                    } else {
                        for (k, s) in i.srcs.iter().enumerate() {
                            moves.push((base + k as u8, reg_of(s).expect("join sources are 32-bit registers")));
                        }
                    }
                    parallel_move(&moves, &mut instrs);
                }
                _ => instrs.push(i),
            }
            new_origins.extend(std::iter::repeat_n(o, instrs.len() - n0));
            is_move.extend(std::iter::repeat_n(expanded, instrs.len() - n0));
        }
        f.cfg[b].instrs = instrs;
        f.cfg[b].origins = new_origins;
        moves.insert(b, is_move);
    }
    // A kernel sets up the stack pointer; a device function receives it (`calls::finish`
    // moves it by the function's frame).
    if frame && f.kind == crate::ptx::ast::FuncKind::Entry {
        let entry = f.entry;
        let mut pro = vec![Instr::new(Op::Mov, vec![Dst::reg(Reg::R(1), 1)], vec![Src::cbuf(0, 0x20, 1)])];
        if frame_bytes > 0 {
            pro.push(Instr::new(
                Op::Iadd32i { cc: false, x: false },
                vec![Dst::reg(Reg::R(1), 1)],
                vec![Src::r32(Reg::R(1)), Src::imm((frame_bytes as i32).wrapping_neg() as u32)],
            ));
        }
        let n = pro.len();
        let blk = &mut f.cfg[entry];
        blk.instrs.splice(0..0, pro);
        blk.origins.splice(0..0, std::iter::repeat_n(Default::default(), n));
        moves.entry(entry).or_default().splice(0..0, std::iter::repeat_n(true, n));
    }
    // Register count: highest register written or read, plus one.
    let mut top: u32 = 0;
    let mut see = |r: RegRef| {
        if let Reg::R(x) = r.reg
            && x != 255
        {
            top = top.max(x as u32 + r.n as u32);
        }
    };
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            for s in &i.srcs {
                if let Some(r) = s.gprs() {
                    see(r);
                }
            }
            for d in &i.dsts {
                if let Dst::Reg(r) = d {
                    see(*r);
                }
            }
        }
    }
    f.num_regs = top;
    stats.regs = top;
    f.spill_bytes = frame_bytes.saturating_sub(f.local_bytes);
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            match i.op {
                Op::Stl(m) if m.spill => stats.spill_stores += 1,
                Op::Ldl(m) if m.spill => stats.spill_loads += 1,
                _ => {}
            }
        }
    }
    stats.moves = moves;
    stats
}
