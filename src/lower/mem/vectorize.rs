//! Shared- and local-load vectorization on SSA IR: adjacent 32- and 64-bit `LDS` (`LDL`)
//! from one base register and constant offsets become one `LDS.64` or `LDS.128` (`LDL.64`)
//! when the address is proven aligned to the wider size.
//!
//! **What ptxas does** (ptxas 11.8 `-arch=sm_50 -O3`, `cuobjdump -sass`):
//! * `samples/sgemm_reg.ptx`: the 64 `ld.shared.f32` of each k step (four consecutive
//!   words from `As + tid.y*16` and `Bs + tid.x*16`, shared arrays that ptxas places at
//!   0x0 and 0x400) are 16 `LDS.U.128 R24, [R12+0x80]`.
//! * Probe kernels (the shared ones are the shapes of `tests/vectorize.rs`): four words from `As + tid.x*16` with
//!   `As` at 0x4 give one `LDS.U.128` of the aligned 16 bytes containing three of them and
//!   `LDS.U.32` of the fourth (the extra word is loaded and dropped), and the stores to the
//!   same words an `STS.64` of the 8-aligned middle pair; the same loads from `As +
//!   tid.x*4` (alignment 4) stay four `LDS.U.32`; four `ld.global.f32` from a `.global
//!   .align 16` variable plus `tid.x*16` become `LDG.E.128`, from a `.ptr .global .align
//!   16` parameter plus `tid.x*16` they stay four `LDG.E` (ptxas does not trust `.ptr`
//!   alignment), and `st.global` are not merged.
//!
//! * `samples/local_array.ptx`: the sixteen `ld.local.u32` of a 64-byte `.local .align 4`
//!   array read after its loop are eight `LDL.64 R16, [R1]`, `[R1+0x8]`, ... (the frame
//!   pointer is 8-aligned; 20 registers where our sixteen `LDL` took 25).
//!
//! Zero stores: pairs of `st.shared`/`st.local` of zero to the two words of an aligned 8
//! bytes become one `STS.64`/`STL.64` of `RZ` ([`merge_zero_stores`]; ptxas 11.8
//! zero-fills the array of `samples/local_array.ptx` with `STL.64 [R1+0x38], RZ`, ...).
//!
//! **What we do.** Shared and local loads (a local group is at most 8 bytes: the frame
//! pointer R1 is known 8-aligned, [`FRAME_ZEROS`], not more), and only exact groups: the words merged are exactly
//! the words the program loads (no extra word is read, so no access leaves the bytes the
//! program touches), `16`-byte groups at addresses proven multiples of 16 and `8`-byte
//! groups at multiples of 8. An address is `base + offset`, with `offset` the access's
//! immediate; its alignment is the smaller of the offset's and the base's, which
//! [`known_zeros`] computes over the SSA values (shifts, sums, masks, moves, block
//! parameters; a shared variable's placed address reaches the IR as an immediate offset or
//! a `MOV32I`, `lower::mem::shared`). The loads of one group must be in one block, be
//! unguarded, not `keep` (volatile and ordered loads stay as written), and have no
//! instruction between the first and the last that may write memory or order it
//! ([`orders_memory`]): a store, atomic, barrier, fence or call. The wide load takes the
//! place of the group's first load; each original load becomes a `copy` of its component,
//! which copy propagation removes.
//!
//! Cost: linear in the function (one pass to a fixed point of the alignment lattice per
//! loop nesting, one pass per block with a sort of each base's accesses).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::{Function, VRegKind};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{LogicOp, MemMods, MemSize, Op};
use crate::sched::table::mem_access;
use petgraph::Direction;
use std::collections::HashMap;

/// Most passes of the alignment analysis before it gives up (and knows nothing). Each pass
/// that changes something lowers some value's count; loops need one pass per nesting
/// level in practice.
const MAX_PASSES: usize = 40;

/// Known trailing zero bits of a source operand (32 for zero).
fn src_zeros(s: &Src, tz: &[u8]) -> u8 {
    if s.mods.abs || s.mods.inv || s.mods.h1 {
        return 0;
    }
    match s.kind {
        SrcKind::Imm(v) => v.trailing_zeros().min(32) as u8,
        SrcKind::Reg(r) if r.reg.is_rz() => 32,
        // A whole register or the low word of a pair: the count is the low word's.
        SrcKind::Reg(RegRef { reg: Reg::V(v), comp: 0, .. }) => tz.get(v as usize).copied().unwrap_or(0),
        SrcKind::Reg(RegRef { reg: Reg::R(1), n: 1, .. }) => FRAME_ZEROS,
        _ => 0,
    }
}

/// Known trailing zero bits of the 32-bit value `i` writes to its first destination, given
/// those of its sources (0 when nothing is known). Negation keeps trailing zeros (`-x` is
/// `~x + 1`), so `IADD`'s `-` modifier is allowed.
fn transfer(i: &Instr, tz: &[u8]) -> u8 {
    let s = |k: usize| i.srcs.get(k).map_or(0, |x| src_zeros(x, tz));
    let imm = |k: usize| match i.srcs.get(k).map(|x| x.kind) {
        Some(SrcKind::Imm(v)) => Some(v),
        _ => None,
    };
    match i.op {
        Op::Mov32i | Op::Mov | Op::Copy => s(0),
        Op::Iadd { x: false, .. } | Op::Iadd32i { x: false, .. } => s(0).min(s(1)),
        Op::Iadd3(crate::sass::op::Iadd3Mode::Plain) => s(0).min(s(1)).min(s(2)),
        // SHL Rd, Ra, imm: the low `imm` bits are zero (a shift of 32 or more gives 0).
        Op::Shl => match imm(1) {
            Some(n) if n >= 32 => 32,
            Some(n) => s(0).saturating_add(n as u8).min(32),
            None => s(0),
        },
        // ISCADD Rd, Ra, Sb, shift and LEA Rd, Ra, Sb{, shift} (the low word: `.X` adds a
        // carry): (Ra << shift) + Sb.
        Op::Iscadd { .. } | Op::Lea { hi: false, x: false, .. } => match (imm(2), i.srcs.len()) {
            (_, 2) => s(0).min(s(1)),
            (Some(n), 3) if n < 32 => s(0).saturating_add(n as u8).min(32).min(s(1)),
            _ => 0,
        },
        // A pair or quad built from words: the low word is the first source (a pair's low
        // word when it is a pair).
        Op::Join => s(0),
        Op::Lop(LogicOp::And) | Op::Lop32i(LogicOp::And) => s(0).max(s(1)),
        Op::Lop(LogicOp::Or) | Op::Lop32i(LogicOp::Or) | Op::Lop(LogicOp::Xor) | Op::Lop32i(LogicOp::Xor) => {
            s(0).min(s(1))
        }
        Op::Sel => s(0).min(s(1)),
        _ => 0,
    }
}

/// For every virtual register, how many low bits are known zero (0..=32; 32 means the
/// low word is 0). Only 32-bit registers and pairs written whole get a count (a pair's is
/// its low word's: the alignment of a 64-bit address); a register with
/// several definitions (guarded writes) gets the smallest. Block parameters get the
/// smallest over their incoming values: an optimistic fixed point (start from "all
/// zero" for defined values, lower until stable), so a loop-carried pointer that steps by
/// 16 keeps its alignment.
pub fn known_zeros(f: &Function) -> Vec<u8> {
    let n = f.vregs.len();
    let mut defined = vec![false; n];
    for &b in &f.layout {
        let blk = &f.cfg[b];
        for i in &blk.instrs {
            crate::ir::for_each_def(i, |v| {
                if let Some(d) = defined.get_mut(v as usize) {
                    *d = true;
                }
            });
        }
        for e in f.cfg.edges_directed(b, Direction::Incoming) {
            for (&p, _) in blk.params.iter().zip(&e.weight().args) {
                if let Some(d) = defined.get_mut(p as usize) {
                    *d = true;
                }
            }
        }
    }
    let mut tz: Vec<u8> = defined
        .iter()
        .zip(&f.vregs)
        .map(|(&d, k)| if d && matches!(k, VRegKind::Gpr(1 | 2)) { 32 } else { 0 })
        .collect();
    for _ in 0..MAX_PASSES {
        let mut changed = false;
        let mut lower = |tz: &mut Vec<u8>, v: u32, z: u8| {
            if let Some(t) = tz.get_mut(v as usize)
                && z < *t
            {
                *t = z;
                changed = true;
            }
        };
        for &b in &f.layout {
            let blk = &f.cfg[b];
            for e in f.cfg.edges_directed(b, Direction::Incoming) {
                for (&p, &a) in blk.params.iter().zip(&e.weight().args) {
                    let z = tz.get(a as usize).copied().unwrap_or(0);
                    lower(&mut tz, p, z);
                }
            }
            for i in &blk.instrs {
                for (k, d) in i.dsts.iter().enumerate() {
                    let Reg::V(v) = d.reg_of() else { continue };
                    let whole = matches!(d, Dst::Reg(RegRef { comp: 0, n, .. })
                        if f.vregs.get(v as usize).is_some_and(|k| k.width() == *n));
                    let z = if k == 0 && whole { transfer(i, &tz) } else { 0 };
                    lower(&mut tz, v, z);
                }
            }
        }
        if !changed {
            return tz;
        }
    }
    vec![0; n]
}

/// Whether `op` may write memory, or orders memory accesses: no load moves across it.
/// Stores and atomics of every space (a generic `ST` may write shared memory), observable
/// accesses (`keep`), barriers, fences, cache control, calls and control flow.
fn orders_memory(op: &Op) -> bool {
    if let Some(a) = mem_access(op) {
        return a.store || a.keep;
    }
    op.info().store
        || op.info().control
        || matches!(
            op,
            Op::Bar { .. } | Op::BarRed(_) | Op::Membar(_) | Op::Call(_) | Op::Cal | Op::Jcal | Op::Cctl { .. }
        )
}

/// One load that may join a group: its index in the block, offset, size and destination.
#[derive(Clone, Copy)]
struct Cand {
    at: usize,
    offset: i64,
    bytes: i64,
    dst: u32,
}

/// Known trailing zero bits of the frame pointer R1: every frame is a multiple of 8 bytes
/// (`regalloc::expand::finish`, `regalloc::calls::finish`) below a stack top the launch
/// aligns, as ptxas 11.8 assumes (`LDL.64 R16, [R1]` in `samples/local_array.ptx`; its
/// frames are multiples of 8 too). Not 16: ptxas merges the sample's words in pairs only.
const FRAME_ZEROS: u8 = 3;

/// A candidate `LDS` or `LDL`: unguarded, plain 32- or 64-bit, writing one whole virtual
/// register, at `[base+offset]` with a virtual or zero base, or (`LDL`) the frame pointer
/// R1. Returns the base, the offset and the candidate's size and destination.
fn candidate(f: &Function, i: &Instr) -> Option<(RegRef, MemMods, i64, i64, u32)> {
    let (Op::Lds(m) | Op::Ldl(m)) = i.op else { return None };
    if i.guard.is_some() || m.keep || !matches!(m.size, MemSize::B32 | MemSize::B64) {
        return None;
    }
    let [Dst::Reg(RegRef { reg: Reg::V(d), comp: 0, n })] = i.dsts.as_slice() else { return None };
    if *n != m.size.regs() || f.vregs.get(*d as usize) != Some(&VRegKind::Gpr(*n)) {
        return None;
    }
    let [Src { kind: SrcKind::Addr { base, offset }, .. }] = i.srcs.as_slice() else { return None };
    let frame = matches!(i.op, Op::Ldl(_)) && base.reg == Reg::R(1);
    if base.n != 1 || !(base.reg.is_rz() || matches!(base.reg, Reg::V(_)) || frame) {
        return None;
    }
    Some((*base, m, i64::from(*offset), i64::from(m.size.bytes()), *d))
}

/// The groups of one base's loads (sorted by offset) that merge: each is a run of loads
/// covering exactly `[o, o + w)` with `w` 16 or 8, `o + base` a multiple of `w`, and at
/// least two loads.
fn groups(c: &[Cand], base_zeros: u8) -> Vec<(usize, usize, i64)> {
    let mut out = vec![];
    let mut i = 0;
    while i < c.len() {
        let Some(first) = c.get(i) else { break };
        let o = first.offset;
        let align = base_zeros.min(o.trailing_zeros().min(32) as u8);
        let mut merged = false;
        for w in [16i64, 8] {
            if u32::from(align) < w.trailing_zeros() {
                continue;
            }
            let (mut j, mut end) = (i, o);
            // A 64-bit member must be an aligned pair of the wide register (its offset in
            // the group a multiple of 8), as its copy reads `comp..comp + 2`.
            while end < o.saturating_add(w)
                && let Some(x) = c.get(j)
                && x.offset == end
                && end.saturating_sub(o).checked_rem(x.bytes) == Some(0)
            {
                end = end.saturating_add(x.bytes);
                j = j.saturating_add(1);
            }
            if end == o.saturating_add(w) && j.saturating_sub(i) >= 2 {
                out.push((i, j, w));
                i = j;
                merged = true;
                break;
            }
        }
        if !merged {
            i = i.saturating_add(1);
        }
    }
    out
}

/// One group of loads to merge: (position of the wide load, its base, whether it is local,
/// modifiers, offset, width in bytes, members).
type Merge = (usize, RegRef, bool, MemMods, i64, i64, Vec<Cand>);

/// A candidate zero store: an unguarded plain 32-bit `STS` or `STL` (not `keep`) of `RZ`
/// at `[base+offset]` with a virtual or zero base, or (`STL`) the frame pointer R1.
/// Returns the base, whether it is local, the modifiers and the offset.
fn zero_store(i: &Instr) -> Option<(RegRef, bool, MemMods, i64)> {
    let (Op::Sts(m) | Op::Stl(m)) = i.op else { return None };
    if i.guard.is_some() || m.keep || m.size != MemSize::B32 {
        return None;
    }
    let [Src { kind: SrcKind::Addr { base, offset }, .. }, data] = i.srcs.as_slice() else { return None };
    let zero = matches!(data.kind, SrcKind::Reg(r) if r.reg.is_rz() && r.n == 1) && data.mods == Default::default();
    let local = matches!(i.op, Op::Stl(_));
    let frame = local && base.reg == Reg::R(1);
    if !zero || base.n != 1 || !(base.reg.is_rz() || matches!(base.reg, Reg::V(_)) || frame) {
        return None;
    }
    Some((*base, local, m, i64::from(*offset)))
}

/// Merges the zero stores of each block in pairs: two stores of `RZ` to the words at `o`
/// and `o + 4` from one base, `base + o` proven 8-aligned, become one `STS.64`/`STL.64` of
/// the `RZ` pair at the first one's place, as ptxas 11.8 zero-fills the local array of
/// `samples/local_array.ptx` (`STL.64 [R1+0x38], RZ`, ...). Only with no other memory
/// access, barrier, fence or call between the two (zero stores commute with each other:
/// they write the same value). Returns true if anything changed.
fn merge_zero_stores(f: &mut Function, tz: &[u8]) -> bool {
    let mut changed = false;
    for b in f.layout.clone() {
        // Per segment and (base, local, modifiers): offset -> position of the first store.
        let mut seg = 0u32;
        let mut by_key: HashMap<(u32, RegRef, bool, MemMods), HashMap<i64, usize>> = HashMap::new();
        for (at, i) in f.cfg[b].instrs.iter().enumerate() {
            if let Some((base, local, m, o)) = zero_store(i) {
                by_key.entry((seg, base, local, m)).or_default().entry(o).or_insert(at);
            } else if orders_memory(&i.op) || mem_access(&i.op).is_some() {
                seg = seg.saturating_add(1);
            }
        }
        let mut replace: HashMap<usize, Instr> = HashMap::new();
        let mut remove: std::collections::HashSet<usize> = Default::default();
        for ((_, base, local, m), offsets) in by_key {
            let zeros = match base.reg {
                Reg::V(v) if base.comp == 0 => tz.get(v as usize).copied().unwrap_or(0),
                Reg::V(_) => 0,
                Reg::R(1) => FRAME_ZEROS,
                _ => 32,
            };
            if zeros < 3 {
                continue;
            }
            for (&o, &first) in offsets.iter().filter(|(o, _)| o.rem_euclid(8) == 0) {
                let Some(&second) = offsets.get(&o.saturating_add(4)) else { continue };
                let Ok(off) = i32::try_from(o) else { continue };
                let mods = MemMods { size: MemSize::B64, ..m };
                let op = if local { Op::Stl(mods) } else { Op::Sts(mods) };
                let wide = Instr::new(op, vec![], vec![Src::addr(base, off), Src::reg(RegRef::rz(2))]);
                replace.insert(first.min(second), wide);
                remove.insert(first.max(second));
            }
        }
        if replace.is_empty() {
            continue;
        }
        changed = true;
        let blk = &mut f.cfg[b];
        let old = std::mem::take(&mut blk.instrs);
        let origins = std::mem::take(&mut blk.origins);
        for (at, (i, origin)) in old.into_iter().zip(origins).enumerate() {
            if remove.contains(&at) {
                continue;
            }
            match replace.remove(&at) {
                Some(w) => blk.push(Instr { origin: i.origin, ..w }, origin),
                None => blk.push(i, origin),
            }
        }
    }
    changed
}

/// Merges adjacent shared and local loads, and zero stores in pairs (module notes).
/// Returns true if anything changed.
pub fn run(f: &mut Function) -> bool {
    // Nothing to merge without two candidate loads or stores: skip the alignment analysis
    // (up to MAX_PASSES passes over the function) in the functions that have none.
    let mut candidates = f.layout.iter().flat_map(|b| &f.cfg[*b].instrs).filter(|i| candidate(f, i).is_some());
    let loads = candidates.nth(1).is_some();
    let mut stores = f.layout.iter().flat_map(|b| &f.cfg[*b].instrs).filter(|i| zero_store(i).is_some());
    if !loads && stores.nth(1).is_none() {
        return false;
    }
    let tz = known_zeros(f);
    let mut changed = merge_zero_stores(f, &tz);
    for b in f.layout.clone() {
        // Candidates by (segment between memory-ordering instructions, base, local,
        // modifiers).
        let mut by_key: HashMap<(u32, RegRef, bool, MemMods), Vec<Cand>> = HashMap::new();
        let mut seg = 0u32;
        for (at, i) in f.cfg[b].instrs.iter().enumerate() {
            if orders_memory(&i.op) {
                seg = seg.saturating_add(1);
                continue;
            }
            if let Some((base, m, offset, bytes, dst)) = candidate(f, i) {
                let key = (seg, base, matches!(i.op, Op::Ldl(_)), MemMods { size: MemSize::B32, ..m });
                by_key.entry(key).or_default().push(Cand { at, offset, bytes, dst });
            }
        }
        let mut merges: Vec<Merge> = vec![];
        for ((_, base, local, m), mut c) in by_key {
            if c.len() < 2 {
                continue;
            }
            c.sort_by_key(|x| (x.offset, x.at));
            let zeros = match base.reg {
                // The base's low word (a pair's high word is not an address).
                Reg::V(v) if base.comp == 0 => tz.get(v as usize).copied().unwrap_or(0),
                Reg::V(_) => 0,
                Reg::R(1) => FRAME_ZEROS,
                _ => 32,
            };
            for (i, j, w) in groups(&c, zeros) {
                let Some(members) = c.get(i..j) else { continue };
                let Some(first) = members.iter().map(|x| x.at).min() else { continue };
                let Some(o) = members.first().map(|x| x.offset) else { continue };
                merges.push((first, base, local, m, o, w, members.to_vec()));
            }
        }
        if merges.is_empty() {
            continue;
        }
        changed = true;
        merges.sort_by_key(|x| x.0);
        // Index -> replacement: the wide load before the group's first member, copies for
        // every member.
        let mut before: HashMap<usize, Instr> = HashMap::new();
        let mut replace: HashMap<usize, Instr> = HashMap::new();
        for (first, base, local, m, o, w, members) in merges {
            let regs = if w == 16 { 4u8 } else { 2 };
            let q = f.new_vreg(VRegKind::Gpr(regs));
            let size = if w == 16 { MemSize::B128 } else { MemSize::B64 };
            let Ok(off) = i32::try_from(o) else { continue };
            let op = if local { Op::Ldl(MemMods { size, ..m }) } else { Op::Lds(MemMods { size, ..m }) };
            before.insert(first, Instr::new(op, vec![Dst::reg(q, regs)], vec![Src::addr(base, off)]));
            for x in members {
                let comp = u8::try_from(x.offset.saturating_sub(o) / 4).unwrap_or(0);
                let n = u8::try_from(x.bytes / 4).unwrap_or(1);
                let src = Src::reg(RegRef { reg: q, comp, n });
                replace.insert(x.at, Instr::new(Op::Copy, vec![Dst::reg(Reg::V(x.dst), n)], vec![src]));
            }
        }
        let blk = &mut f.cfg[b];
        let old = std::mem::take(&mut blk.instrs);
        let origins = std::mem::take(&mut blk.origins);
        for (at, (i, origin)) in old.into_iter().zip(origins).enumerate() {
            if let Some(w) = before.remove(&at) {
                blk.push(Instr { origin: i.origin, ..w }, origin);
            }
            match replace.remove(&at) {
                Some(c) => blk.push(c, origin),
                None => blk.push(i, origin),
            }
        }
    }
    changed
}
