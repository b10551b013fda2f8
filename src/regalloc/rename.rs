//! Register renaming after allocation, for the post-allocation list scheduler.
//!
//! regalloc2 and packing give a value that lives for a few instructions whatever register
//! is free, often the one the previous short value just left; the scheduler then cannot
//! move the second value's producer above the first value's last reader (a false, WAR
//! dependence). In `samples/sha256.ptx` sixteen byte loads all went to `R4`, each
//! `LDG.E.U8 R4` waiting for the `LOP.OR` that read the previous one, so each load's
//! 200-cycle latency was exposed in turn; ptxas 11.8 keeps its byte loads in flight
//! together (`DEPBAR.LE SB5, 0x10`).
//!
//! This pass gives such a value the register, among those the function already uses
//! (the register count does not grow), that has been free the longest at its
//! definition and stays free over its whole life: the least recently used one, as a
//! renaming scheduler's free list would. Predicates are renamed the same way among
//! P0..P6: in `samples/sgemm_reg.ptx` every guarded tile load `@P4 LDG` was followed by
//! its `SEL ..., !P4`, which had to issue (and wait for the load) before the next tile's
//! `ISETP` could write P4 again. Only values that live inside one basic block are
//! renamed: a definition of a whole register (or aligned pair or quad), read only as that
//! same group, not redefined in part before its last read,
//! not live out of the block. `R1` (the frame pointer) is never renamed or chosen.

use crate::ir::{BlockId, Function};
use crate::ptx::ast::FuncKind;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, SrcKind};
use std::collections::HashMap;
use std::ops::Range;

/// A set of registers (R0..R254, or P0..P6), as bits.
type Units = [u64; 4];

fn has(s: &Units, u: u32) -> bool {
    s[(u / 64) as usize] >> (u % 64) & 1 == 1
}

fn set(s: &mut Units, u: u32, on: bool) {
    if on {
        s[(u / 64) as usize] |= 1 << (u % 64);
    } else {
        s[(u / 64) as usize] &= !(1 << (u % 64));
    }
}

/// The register file renamed in one pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum File {
    Gpr,
    Pred,
}

/// The registers a general-purpose reference covers (not RZ).
fn gpr_units(r: RegRef) -> Option<Range<u32>> {
    match r.reg {
        Reg::R(x) if !r.reg.is_rz() => {
            let b = x as u32 + r.comp as u32;
            Some(b..b + r.n as u32)
        }
        _ => None,
    }
}

/// P0..P6 (not PT).
fn pred_unit(p: Reg) -> Option<Range<u32>> {
    match p {
        Reg::P(x) if x < 7 => Some(x as u32..x as u32 + 1),
        _ => None,
    }
}

fn reads(i: &Instr, file: File) -> Vec<Range<u32>> {
    match file {
        File::Gpr => i.srcs.iter().filter_map(|s| s.gprs()).filter_map(gpr_units).collect(),
        File::Pred => i
            .guard
            .iter()
            .filter_map(|g| pred_unit(g.pred))
            .chain(i.srcs.iter().filter_map(|s| match s.kind {
                SrcKind::Pred(p) => pred_unit(p),
                _ => None,
            }))
            .collect(),
    }
}

fn writes(i: &Instr, file: File) -> Vec<Range<u32>> {
    i.dsts
        .iter()
        .filter_map(|d| match (d, file) {
            (Dst::Reg(r), File::Gpr) => gpr_units(*r),
            (Dst::Pred(p), File::Pred) => pred_unit(*p),
            _ => None,
        })
        .collect()
}

/// Registers of `file` live at the end of each block (backward dataflow over the CFG).
fn live_out(f: &Function, file: File) -> HashMap<BlockId, Units> {
    let mut live_in: HashMap<BlockId, Units> = HashMap::new();
    let out_of = |b: BlockId, live_in: &HashMap<BlockId, Units>| {
        let mut s = [0u64; 4];
        for t in f.succs(b) {
            if let Some(l) = live_in.get(&t) {
                for k in 0..4 {
                    s[k] |= l[k];
                }
            }
        }
        s
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in f.layout.iter().rev() {
            let mut s = out_of(b, &live_in);
            for i in f.cfg[b].instrs.iter().rev() {
                step_back(i, &mut s, file);
            }
            if live_in.get(&b) != Some(&s) {
                live_in.insert(b, s);
                changed = true;
            }
        }
    }
    f.layout.iter().map(|&b| (b, out_of(b, &live_in))).collect()
}

/// Liveness across one instruction, backwards: unguarded writes kill, reads make live.
fn step_back(i: &Instr, s: &mut Units, file: File) {
    if i.guard.is_none() {
        for u in writes(i, file).into_iter().flatten() {
            set(s, u, false);
        }
    }
    for u in reads(i, file).into_iter().flatten() {
        set(s, u, true);
    }
}

/// Renames short-lived values of `f` (allocated, moves expanded, `f.num_regs` set) to the
/// least recently used free register, general-purpose registers below `f.num_regs` and
/// predicates (see the module docs). Returns how many values were renamed.
pub fn rename(f: &mut Function) -> usize {
    if f.kind != FuncKind::Entry {
        return 0;
    }
    let mut renamed = 0;
    for (file, limit) in [(File::Gpr, f.num_regs.min(255)), (File::Pred, 7)] {
        let outs = live_out(f, file);
        for b in f.layout.clone() {
            renamed += rename_block(&mut f.cfg[b].instrs, outs[&b], file, limit);
        }
    }
    renamed
}

/// Renames in one block; registers of `file` below `limit` may be chosen.
fn rename_block(code: &mut [Instr], out: Units, file: File, limit: u32) -> usize {
    let n = code.len();
    let mut live_after = vec![[0u64; 4]; n];
    let mut s = out;
    for k in (0..n).rev() {
        live_after[k] = s;
        step_back(&code[k], &mut s, file);
    }
    // Index of the last instruction (before the current one) naming each register.
    let mut last_ref: Vec<Option<usize>> = vec![None; 256];
    let mut renamed = 0;
    for k in 0..n {
        for d in writes(&code[k], file) {
            if let Some((x, last)) = choose(code, &live_after, &last_ref, k, d.clone(), file, limit) {
                apply(code, &mut live_after, k, last, d, x, file);
                renamed += 1;
            }
        }
        for u in reads(&code[k], file).into_iter().chain(writes(&code[k], file)).flatten() {
            last_ref[u as usize] = Some(k);
        }
    }
    renamed
}

/// The register to rename the value defined by `code[k]` in registers `du` to, and the
/// value's last reader.
fn choose(
    code: &[Instr],
    live_after: &[Units],
    last_ref: &[Option<usize>],
    k: usize,
    du: Range<u32>,
    file: File,
    limit: u32,
) -> Option<(u32, usize)> {
    let frame = file == File::Gpr && du.contains(&1);
    if frame || du.is_empty() {
        return None;
    }
    // The value's life: its readers until a whole redefinition. A definition under a guard
    // counts as one: allocation comes from SSA code, where a guarded definition makes a new
    // value that is only read where the guard held (or by a `SEL` on the guard), so no
    // reader after it can want the register's older value (it would interfere with the new
    // one and have another register).
    let overlap = |a: &Range<u32>| a.start < du.end && du.start < a.end;
    let mut last = None;
    let mut end = None;
    for (j, i) in code.iter().enumerate().skip(k + 1) {
        for ru in reads(i, file) {
            if overlap(&ru) {
                if ru.start < du.start || ru.end > du.end {
                    return None; // read together with other registers
                }
                last = Some(j);
            }
        }
        let ws: Vec<Range<u32>> = writes(i, file).into_iter().filter(overlap).collect();
        if !ws.is_empty() {
            if !ws.iter().any(|w| w.start <= du.start && w.end >= du.end) {
                return None; // redefined in part
            }
            end = Some(j);
            break;
        }
    }
    let last = last?;
    if end.is_none() && du.clone().any(|u| has(&live_after[code.len() - 1], u)) {
        return None; // live out of the block
    }
    // Registers named by the instructions of the life, and live during it.
    let mut busy = [0u64; 4];
    for j in k..=last {
        for u in reads(&code[j], file).into_iter().chain(writes(&code[j], file)).flatten() {
            set(&mut busy, u, true);
        }
        for w in 0..4 {
            busy[w] |= live_after[j][w];
        }
    }
    let width = du.end - du.start;
    let free_since = |x: u32| -> Option<usize> { (x..x + width).map(|u| last_ref[u as usize]).max().flatten() };
    let current = free_since(du.start);
    let mut best: Option<(Option<usize>, u32)> = None;
    let mut x = 0;
    while x + width <= limit {
        let ok = !(x..x + width).any(|u| (file == File::Gpr && u == 1) || has(&busy, u));
        if ok {
            let since = free_since(x);
            if best.is_none_or(|(s, _)| since < s) {
                best = Some((since, x));
            }
        }
        x += width;
    }
    let (since, x) = best?;
    // Only a register free for longer than the current one helps.
    (since < current && x != du.start).then_some((x, last))
}

/// Renames the value defined by `code[k]` in registers `du` to base register `x` through
/// its last reader `last`, and updates the liveness.
fn apply(code: &mut [Instr], live_after: &mut [Units], k: usize, last: usize, du: Range<u32>, x: u32, file: File) {
    let moved = |u: u32| x + (u - du.start);
    match file {
        File::Gpr => {
            for dst in code[k].dsts.iter_mut() {
                if let Dst::Reg(r) = dst
                    && gpr_units(*r) == Some(du.clone())
                {
                    *r = RegRef { reg: Reg::R(x as u8), comp: 0, n: r.n };
                }
            }
            for i in code.iter_mut().take(last + 1).skip(k + 1) {
                for s in i.srcs.iter_mut() {
                    if let Some(r) = s.gprs_mut()
                        && let Some(ru) = gpr_units(*r)
                        && du.contains(&ru.start)
                    {
                        *r = RegRef { reg: Reg::R(moved(ru.start) as u8), comp: 0, n: r.n };
                    }
                }
            }
        }
        File::Pred => {
            for dst in code[k].dsts.iter_mut() {
                if let Dst::Pred(p) = dst
                    && pred_unit(*p) == Some(du.clone())
                {
                    *p = Reg::P(x as u8);
                }
            }
            for i in code.iter_mut().take(last + 1).skip(k + 1) {
                if let Some(g) = &mut i.guard
                    && pred_unit(g.pred) == Some(du.clone())
                {
                    g.pred = Reg::P(x as u8);
                }
                for s in i.srcs.iter_mut() {
                    if let SrcKind::Pred(p) = &mut s.kind
                        && pred_unit(*p) == Some(du.clone())
                    {
                        *p = Reg::P(x as u8);
                    }
                }
            }
        }
    }
    for la in live_after.iter_mut().take(last).skip(k) {
        for u in du.clone() {
            set(la, u, false);
        }
        for u in x..x + (du.end - du.start) {
            set(la, u, true);
        }
    }
}
