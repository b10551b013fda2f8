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
//! renaming scheduler's free list would. Only values that live inside one basic block are
//! renamed: an unguarded definition of a whole register (or aligned pair or quad), read
//! only as that same group, not redefined in part or under a guard before its last read,
//! not live out of the block. `R1` (the frame pointer) is never renamed or chosen.

use crate::ir::{BlockId, Function};
use crate::ptx::ast::FuncKind;
use crate::sass::instr::{Dst, Instr, Reg, RegRef};
use std::collections::HashMap;

/// A set of the registers R0..R254, as bits.
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

/// The registers a reference covers, if it names general-purpose registers (not RZ).
fn units(r: RegRef) -> Option<std::ops::Range<u32>> {
    match r.reg {
        Reg::R(x) if !r.reg.is_rz() => {
            let b = x as u32 + r.comp as u32;
            Some(b..b + r.n as u32)
        }
        _ => None,
    }
}

fn reads(i: &Instr) -> Vec<RegRef> {
    i.srcs.iter().filter_map(|s| s.gprs()).filter(|r| units(*r).is_some()).collect()
}

fn writes(i: &Instr) -> Vec<RegRef> {
    i.dsts
        .iter()
        .filter_map(|d| match d {
            Dst::Reg(r) if units(*r).is_some() => Some(*r),
            _ => None,
        })
        .collect()
}

/// Registers live at the end of each block (backward dataflow over the CFG).
fn live_out(f: &Function) -> HashMap<BlockId, Units> {
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
                step_back(i, &mut s);
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
fn step_back(i: &Instr, s: &mut Units) {
    if i.guard.is_none() {
        for r in writes(i) {
            for u in units(r).into_iter().flatten() {
                set(s, u, false);
            }
        }
    }
    for r in reads(i) {
        for u in units(r).into_iter().flatten() {
            set(s, u, true);
        }
    }
}

/// Renames short-lived values of `f` (allocated, moves expanded, `f.num_regs` set) to the
/// least recently used free register (see the module docs). Returns how many values
/// were renamed.
pub fn rename(f: &mut Function) -> usize {
    if f.kind != FuncKind::Entry || f.num_regs <= 2 {
        return 0;
    }
    let outs = live_out(f);
    let mut renamed = 0;
    for b in f.layout.clone() {
        renamed += rename_block(&mut f.cfg[b].instrs, outs[&b], f.num_regs);
    }
    renamed
}

fn rename_block(code: &mut [Instr], out: Units, num_regs: u32) -> usize {
    let n = code.len();
    // Live registers after each instruction.
    let mut live_after = vec![[0u64; 4]; n];
    let mut s = out;
    for k in (0..n).rev() {
        live_after[k] = s;
        step_back(&code[k], &mut s);
    }
    // Index of the last instruction (before the current one) naming each register.
    let mut last_ref: Vec<Option<usize>> = vec![None; 255];
    let mut renamed = 0;
    for k in 0..n {
        if code[k].guard.is_none() {
            for d in writes(&code[k]) {
                if let Some((x, last)) = choose(code, &live_after, &last_ref, k, d, num_regs) {
                    apply(code, &mut live_after, k, last, d, x);
                    renamed += 1;
                }
            }
        }
        for r in reads(&code[k]).into_iter().chain(writes(&code[k])) {
            for u in units(r).into_iter().flatten() {
                last_ref[u as usize] = Some(k);
            }
        }
    }
    renamed
}

/// The register to rename the value `d` defined by `code[k]` to, and its last reader.
fn choose(
    code: &[Instr],
    live_after: &[Units],
    last_ref: &[Option<usize>],
    k: usize,
    d: RegRef,
    num_regs: u32,
) -> Option<(u32, usize)> {
    let du = units(d)?;
    if du.contains(&1) || d.comp != 0 {
        return None;
    }
    // The value's life: its readers until a whole unguarded redefinition.
    let mut last = None;
    let mut end = None;
    for (j, i) in code.iter().enumerate().skip(k + 1) {
        for r in reads(i) {
            let ru = units(r)?;
            if ru.start < du.end && du.start < ru.end {
                if ru.start < du.start || ru.end > du.end {
                    return None; // read together with other registers
                }
                last = Some(j);
            }
        }
        let mut overlaps = false;
        let mut covers = false;
        for w in writes(i) {
            let wu = units(w)?;
            if wu.start < du.end && du.start < wu.end {
                overlaps = true;
                covers |= wu.start <= du.start && wu.end >= du.end;
            }
        }
        if overlaps {
            if i.guard.is_some() || !covers {
                return None;
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
        for r in reads(&code[j]).into_iter().chain(writes(&code[j])) {
            for u in units(r).into_iter().flatten() {
                set(&mut busy, u, true);
            }
        }
        for w in 0..4 {
            busy[w] |= live_after[j][w];
        }
    }
    let free_since = |x: u32| -> Option<usize> { (x..x + d.n as u32).map(|u| last_ref[u as usize]).max().flatten() };
    let current = free_since(du.start);
    let width = d.n as u32;
    let mut best: Option<(Option<usize>, u32)> = None;
    let mut x = 0;
    while x + width <= num_regs.min(255) {
        let ok = !(x..x + width).any(|u| u == 1 || has(&busy, u));
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

/// Renames the value defined by `code[k]` as `d` to base register `x` through its last
/// reader `last`, and updates the liveness.
fn apply(code: &mut [Instr], live_after: &mut [Units], k: usize, last: usize, d: RegRef, x: u32) {
    let du = units(d).expect("a register");
    let shift = |r: &mut RegRef| {
        if let Some(ru) = units(*r)
            && du.contains(&ru.start)
        {
            r.reg = Reg::R((x + (ru.start - du.start)) as u8);
            r.comp = 0;
        }
    };
    for dst in code[k].dsts.iter_mut() {
        if let Dst::Reg(r) = dst
            && *r == d
        {
            r.reg = Reg::R(x as u8);
        }
    }
    for i in code.iter_mut().take(last + 1).skip(k + 1) {
        for s in i.srcs.iter_mut() {
            if let Some(r) = s.gprs_mut() {
                shift(r);
            }
        }
    }
    for la in live_after.iter_mut().take(last).skip(k) {
        for u in du.clone() {
            set(la, u, false);
        }
        for u in x..x + d.n as u32 {
            set(la, u, true);
        }
    }
}
