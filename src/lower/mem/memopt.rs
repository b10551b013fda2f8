//! Address optimizations on SSA IR, after the general clean-up:
//!
//! * [`reuse_plg`]: generic accesses from the same base pointer share one
//!   `LEA`/`LEA.HI.X` (address and shared-window predicate Plg) and carry their offset
//!   difference in the `LD`/`ST` immediate, as ptxas does (findings section 4:
//!   `LD.E R9, [R2+0x4], P0`).
//! * [`uniform_loads`]: 128-bit loads whose address depends only on kernel parameters and
//!   constants become `.U.128` (warp-uniform, spa50-LD.txt; findings section 3).
//! * [`scaled_index`]: `base + (i << s)` built as `SHL`/`SHR` + `IADD.CC`/`IADD.X`
//!   becomes `LEA.CC` + `LEA.HI.X` with the scale (spa50-LEA.txt) when that takes fewer
//!   instructions.
//! * [`fuse_generic_add`]: the 64-bit add that builds a generic address moves into the
//!   `LEA`/`LEA.HI.X` pair that computes Plg (spa50-LEA.txt examples).
//!
//! Each pass only rewrites what it recognizes: an operand or instruction that is not
//! where the pattern expects it makes the pass leave that site alone (no panic).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::{BlockId, DefSites, Function, for_each_def, for_each_use};
use crate::lower::ssa::DomInfo;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind, SrcMods};
use crate::sass::op::{MemSize, Op};
use std::collections::HashMap;

/// Definition sites of SSA values.
fn defs(f: &Function) -> DefSites {
    DefSites::new(f)
}

fn def_instr<'f>(f: &'f Function, d: &DefSites, r: Reg) -> Option<&'f Instr> {
    let Reg::V(v) = r else { return None };
    let (b, k) = d.get(v)?;
    let i = f.cfg[b].instrs.get(k)?;
    i.guard.is_none().then_some(i)
}

/// The base pointer of a generic address: its low and high words (components of one pair,
/// or two 32-bit values after copy propagation).
type BaseKey = (RegRef, RegRef);

/// A generic address `t = base + off` with its Plg, as built by lowering: `LEA lo.CC,
/// b.lo, off; LEA.HI.X P, hi, b.lo, RZ, b.hi; join t = {lo, hi}`.
fn generic_address(f: &Function, d: &DefSites, t: Reg) -> Option<(BaseKey, i64, Reg)> {
    let j = def_instr(f, d, t)?;
    let (Op::Join, [j_lo, j_hi]) = (j.op, j.srcs.as_slice()) else { return None };
    let lo = def_instr(f, d, j_lo.as_reg()?.reg)?;
    let hi = def_instr(f, d, j_hi.as_reg()?.reg)?;
    if lo.op != (Op::Lea { hi: false, x: false, cc: true }) || hi.op != (Op::Lea { hi: true, x: true, cc: false }) {
        return None;
    }
    let ([lo_a, lo_b, ..], [hi_a, hi_b, hi_c, ..]) = (lo.srcs.as_slice(), hi.srcs.as_slice()) else { return None };
    let b_lo = lo_a.as_reg()?;
    let b_hi = hi_c.as_reg()?;
    if !matches!(b_lo.reg, Reg::V(_)) || !matches!(b_hi.reg, Reg::V(_)) || hi_a.as_reg() != Some(b_lo) {
        return None;
    }
    let off = match lo_b.kind {
        SrcKind::Imm(v) => v as i32 as i64,
        SrcKind::Reg(r) if r.reg.is_rz() => 0,
        // A large offset materialized by `MOV32I`.
        SrcKind::Reg(r) => match def_instr(f, d, r.reg) {
            Some(m) if m.op == Op::Mov32i => match m.srcs.first().map(|s| s.kind) {
                Some(SrcKind::Imm(v)) => v as i32 as i64,
                _ => return None,
            },
            _ => return None,
        },
        _ => return None,
    };

    if !hi_b.as_reg().is_some_and(|r| r.reg.is_rz()) || off < 0 {
        return None;
    }
    let Some(Dst::Pred(p)) = hi.dsts.first() else { return None };
    Some(((b_lo, b_hi), off, *p))
}

/// How far (bytes) an access may be from the address its reused Plg was computed on. Plg
/// says whether an address is in the CTA's shared window, a 16 MiB aligned range reserved
/// in the generic address space (`cvta.to.shared` masks with 0xffffff, findings section
/// 4); shared memory itself sits at the window's start and is far smaller, so an object
/// cannot straddle the window's edge and two addresses of one object less than 16 MiB
/// apart get the same Plg. ptxas reuses Plg for small offsets (findings section 4).
const PLG_REUSE_RANGE: u32 = 1 << 24;

/// Reuses one `LEA`/`LEA.HI.X` (address and Plg) for generic accesses from the same base
/// in dominated positions. Returns true if anything changed.
pub fn reuse_plg(f: &mut Function) -> bool {
    let d = defs(f);
    let dom = DomInfo::new(f);
    let mut changed = false;
    // Dominator-tree preorder with a scoped table: base -> (t, off, Plg).
    // A generic address already computed: its register pair, offset and Plg.
    type Known = (Reg, i64, Reg);
    let mut table: HashMap<BaseKey, Known> = HashMap::new();
    enum Step {
        Enter(BlockId),
        Exit(Vec<(BaseKey, Option<Known>)>),
    }
    let mut work = vec![Step::Enter(f.entry)];
    while let Some(s) = work.pop() {
        match s {
            Step::Exit(undo) => {
                for (k, v) in undo.into_iter().rev() {
                    match v {
                        Some(v) => table.insert(k, v),
                        None => table.remove(&k),
                    };
                }
            }
            Step::Enter(b) => {
                let mut undo = vec![];
                for k in 0..f.cfg[b].instrs.len() {
                    let Some(i) = f.cfg[b].instrs.get(k) else { break };
                    if !matches!(i.op, Op::Ld(_) | Op::St(_)) {
                        continue;
                    }
                    let Some(SrcKind::Addr { base, offset }) = i.srcs.first().map(|s| s.kind) else { continue };
                    let Some((bv, off, p)) = generic_address(f, &d, base.reg) else { continue };
                    match table.get(&bv) {
                        Some(&(t, off0, p0)) if t != base.reg => {
                            // `off`, `off0`: 32-bit immediates; checked all the same.
                            let delta = off.checked_sub(off0).and_then(|x| x.checked_add(i64::from(offset)));
                            if let Some(Ok(delta)) = delta.map(i32::try_from)
                                && delta.unsigned_abs() < PLG_REUSE_RANGE
                                && let Some(ins) = f.cfg[b].instrs.get_mut(k)
                                // A generic access: its address first, its Plg last.
                                && let [addr, .., plg] = ins.srcs.as_mut_slice()
                            {
                                addr.kind = SrcKind::Addr { base: RegRef::new(t, 2), offset: delta };
                                *plg = Src::pred(p0, false);
                                changed = true;
                            }
                        }
                        Some(_) => {}
                        None => {
                            undo.push((bv, None));
                            table.insert(bv, (base.reg, off, p));
                        }
                    }
                }
                work.push(Step::Exit(undo));
                for &c in dom.children(b).iter().rev() {
                    work.push(Step::Enter(c));
                }
            }
        }
    }
    changed
}

/// Values that depend only on kernel parameters and constants (no thread index, no loads,
/// no merges of control flow), indexed by virtual register (a register or CC value beyond
/// the function's counts reads as not uniform).
fn param_uniform(f: &Function) -> Vec<bool> {
    let mut uni = vec![false; f.vregs.len()];
    // The same for CC values (`IADD.X hi, RZ, RZ` is as uniform as the add before it).
    let mut uni_cc = vec![false; f.cc_values as usize];
    // Reverse postorder visits definitions before uses (block parameters stay false).
    let mut order = vec![];
    let mut dfs = petgraph::visit::DfsPostOrder::new(&f.cfg, f.entry);
    while let Some(b) = dfs.next(&f.cfg) {
        order.push(b);
    }
    order.reverse();
    for b in order {
        for i in &f.cfg[b].instrs {
            let source_ok = match i.op {
                Op::S2r(_)
                | Op::Cs2r(_)
                | Op::Ld(_)
                | Op::Ldg(_)
                | Op::Lds(_)
                | Op::Ldl(_)
                | Op::Ldc { .. }
                | Op::Undef
                | Op::Atom(_)
                | Op::Atoms(_)
                | Op::Shfl(_)
                | Op::Vote(_)
                | Op::Params
                | Op::Call(_) => false,
                _ => i.guard.is_none() && !i.srcs.iter().any(|s| s.gprs().is_some_and(|r| r.reg == Reg::R(1))),
            };
            let mut u = source_ok && i.cc.read.is_none_or(|c| uni_cc.get(c as usize) == Some(&true));
            for_each_use(i, |v| u &= uni.get(v as usize) == Some(&true));
            if u {
                for_each_def(i, |v| {
                    if let Some(x) = uni.get_mut(v as usize) {
                        *x = true;
                    }
                });
                if let Some(x) = i.cc.def.and_then(|c| uni_cc.get_mut(c as usize)) {
                    *x = true;
                }
            }
        }
    }
    uni
}

/// Marks 128-bit loads from parameter-derived addresses `.U.128` when their plan allows it
/// (`MemMods::uniform_ok`: plain, `.ca` and `.nc` loads, as ptxas). Returns true if
/// anything changed.
pub fn uniform_loads(f: &mut Function) -> bool {
    let uni = param_uniform(f);
    let mut changed = false;
    for b in f.layout.clone() {
        for i in f.cfg[b].instrs.iter_mut() {
            let (Op::Ld(m) | Op::Ldg(m)) = &mut i.op else { continue };
            if m.size != MemSize::B128 || !m.uniform_ok {
                continue;
            }
            let Some(SrcKind::Addr { base, .. }) = i.srcs.first().map(|s| s.kind) else { continue };
            if let Reg::V(v) = base.reg
                && uni.get(v as usize) == Some(&true)
            {
                m.size = MemSize::U128;
                changed = true;
            }
        }
    }
    changed
}

/// How a 64-bit value `x = y << s` was built: `y`'s low word, its high word (a register or
/// `RZ`, or `None` when it is the sign of the low word, still to be computed), and `s`.
struct Shifted {
    y_lo: Src,
    y_hi: Option<Src>,
    s: u32,
}

/// Recognizes `x.lo`/`x.hi` computed by `mul.wide` by 2^s (`SHL a, s; SHR{.U32} a, 32-s`)
/// or `shl.b64` (`SHL y.lo, s; SHF.L.U64 y.lo, s, y.hi`).
fn shifted(f: &Function, d: &DefSites, lo: Reg, hi: Reg) -> Option<Shifted> {
    let l = def_instr(f, d, lo)?;
    let h = def_instr(f, d, hi)?;
    let (Op::Shl, [a, l_s, ..]) = (l.op, l.srcs.as_slice()) else { return None };
    if a.mods != SrcMods::default() {
        return None;
    }
    let (a, SrcKind::Imm(s)) = (*a, l_s.kind) else { return None };
    match (h.op, h.srcs.first(), h.srcs.get(1).map(|x| x.kind)) {
        // The immediates are 20-bit, sign-extended: `r + s` may pass `u32::MAX`
        // (tests/fuzz_found.rs `scaled_index_shift_immediates_summing_past_u32`).
        (Op::Shr { u32 }, Some(src), Some(SrcKind::Imm(r)))
            if *src == a && r.checked_add(s) == Some(32) && (1..32).contains(&s) =>
        {
            Some(Shifted { y_lo: a, y_hi: if u32 { Some(Src::rz()) } else { None }, s })
        }
        (Op::Shf { left: true, signed: false, wide: true, wrap: false }, Some(src), Some(SrcKind::Imm(r)))
            if *src == a && r == s =>
        {
            Some(Shifted { y_lo: a, y_hi: Some(*h.srcs.get(2)?), s })
        }
        _ => None,
    }
}

/// Rewrites `IADD lo.CC, x.lo, b.lo; IADD.X hi, x.hi, b.hi` with `x = y << s` into
/// `LEA lo.CC, y.lo, b.lo, s; LEA.HI.X hi, y.lo, b.hi, y.hi, s` where that saves
/// instructions: the shifts disappear when every use of `x` becomes a LEA, at the cost of
/// one `SHR y.lo, 31` for the sign of a signed index. Rewrites one group of adds sharing
/// `x` per call; returns true if it did (call again until false).
pub fn scaled_index(f: &mut Function) -> bool {
    let d = defs(f);
    let mut uses = crate::ir::use_counts(f);
    // Candidate add pairs grouped by the shifted value (x.lo, x.hi); `swap` when the
    // shifted value is the second operand.
    type Site = (BlockId, usize, bool);
    let mut groups: HashMap<(u32, u32), Vec<Site>> = HashMap::new();
    for &b in &f.layout {
        for (k, pair) in f.cfg[b].instrs.windows(2).enumerate() {
            let [a, x] = pair else { continue };
            if a.op != (Op::Iadd { cc: true, x: false })
                || x.op != (Op::Iadd { cc: false, x: true })
                || x.cc.read != a.cc.def
            {
                continue;
            }
            if a.guard.is_some()
                || x.guard.is_some()
                || a.srcs.iter().chain(&x.srcs).any(|s| s.mods != SrcMods::default())
            {
                continue;
            }
            for swap in [false, true] {
                let (xi, bi) = if swap { (1, 0) } else { (0, 1) };
                let (Some(a_x), Some(x_x), Some(a_b), Some(x_b)) =
                    (a.srcs.get(xi), x.srcs.get(xi), a.srcs.get(bi), x.srcs.get(bi))
                else {
                    continue;
                };
                let (Some(l), Some(h)) = (a_x.as_reg(), x_x.as_reg()) else { continue };
                let (Reg::V(lv), Reg::V(hv)) = (l.reg, h.reg) else { continue };
                // LEA.HI takes a register or constant-bank base, LEA.LO also a 20-bit immediate.
                let lo_ok = matches!(a_b.kind, SrcKind::Reg(_) | SrcKind::CBuf { index: None, .. })
                    || matches!(a_b.kind, SrcKind::Imm(v) if (-(1i64 << 19)..(1 << 19)).contains(&(v as i32 as i64)));
                let hi_ok = matches!(x_b.kind, SrcKind::Reg(_) | SrcKind::CBuf { index: None, .. });
                if l.n == 1 && h.n == 1 && lo_ok && hi_ok && shifted(f, &d, l.reg, h.reg).is_some() {
                    groups.entry((lv, hv)).or_default().push((b, k, swap));
                    break;
                }
            }
        }
    }
    // Groups in order of their shifted value, each decided on the use counts left by the
    // rewrites before it (a rewrite reads `y`, which may be another group's `x`). The
    // sign words are inserted at the end, so the definition sites stay valid meanwhile.
    let mut keys: Vec<_> = groups.keys().copied().collect();
    keys.sort();
    let mut inserts: Vec<(BlockId, usize, Instr)> = vec![];
    let mut changed = false;
    for key in keys {
        // Every key has its group, and `shifted` matched it when it was collected (the
        // rewrites below change only adds, never the SHL/SHR it reads).
        let Some(sites) = groups.get(&key) else { continue };
        let Some(sh) = shifted(f, &d, Reg::V(key.0), Reg::V(key.1)) else { continue };
        let (Some(&uses_lo), Some(&uses_hi)) = (uses.get(key.0 as usize), uses.get(key.1 as usize)) else { continue };
        // Use counts and sites are bounded by the number of instructions.
        let other_uses = uses_lo.saturating_add(uses_hi) as usize > sites.len().saturating_mul(2);
        let shifts_saved = if other_uses { 0 } else { 2 };
        if usize::from(sh.y_hi.is_none()) >= shifts_saved {
            continue;
        }
        // The definition of `x.lo`, after which a signed index's sign word goes.
        let sign_at = match (sh.y_hi, d.get(key.0)) {
            (Some(_), _) => None,
            (None, Some(site)) => Some(site),
            (None, None) => continue,
        };
        changed = true;
        let s = Src::imm(sh.s);
        let count = |src: &Src, uses: &mut Vec<u32>, k: u32| {
            if let Some(r) = src.as_reg()
                && let Reg::V(v) = r.reg
                && let Some(u) = uses.get_mut(v as usize)
            {
                *u = u.saturating_add(k);
            }
        };
        let n = u32::try_from(sites.len()).unwrap_or(u32::MAX);
        // Each site read `x.lo` and `x.hi` once.
        for v in [key.0, key.1] {
            if let Some(u) = uses.get_mut(v as usize) {
                *u = u.saturating_sub(n);
            }
        }
        count(&sh.y_lo, &mut uses, n.saturating_mul(2));
        if let Some(h) = &sh.y_hi {
            count(h, &mut uses, n);
        }
        // The sign word of a signed index, computed once right after the SHL.
        let y_hi = match (sh.y_hi, sign_at) {
            (Some(h), _) => h,
            (None, Some((db, dk))) => {
                let sign = f.new_vreg(crate::ir::VRegKind::Gpr(1));
                uses.push(n);
                count(&sh.y_lo, &mut uses, 1);
                let ins = Instr::new(Op::Shr { u32: false }, vec![Dst::reg(sign, 1)], vec![sh.y_lo, Src::imm(31)]);
                inserts.push((db, dk, ins));
                Src::r32(sign)
            }
            // `sign_at` is `Some` when `y_hi` is `None` (checked above).
            (None, None) => continue,
        };
        for &(b, k, swap) in sites {
            let bi = usize::from(!swap);
            // Sites are `IADD.CC` at `k`, `IADD.X` at `k + 1`, as collected above.
            if let Some([lo, hi, ..]) = f.cfg[b].instrs.get_mut(k..)
                && let (Some(&b_lo), Some(&b_hi)) = (lo.srcs.get(bi), hi.srcs.get(bi))
            {
                lo.op = Op::Lea { hi: false, x: false, cc: true };
                lo.srcs = vec![sh.y_lo, b_lo, s];
                hi.op = Op::Lea { hi: true, x: true, cc: false };
                hi.srcs = vec![sh.y_lo, b_hi, y_hi, s];
            }
        }
    }
    insert_after(f, inserts);
    changed
}

/// Inserts each instruction after the instruction `(block, index)` names (indices before
/// any insertion), one pass over each block concerned.
fn insert_after(f: &mut Function, mut inserts: Vec<(BlockId, usize, Instr)>) {
    inserts.sort_by_key(|(b, k, _)| (b.index(), *k));
    let mut it = inserts.into_iter().peekable();
    while let Some(&(b, _, _)) = it.peek() {
        let blk = &mut f.cfg[b];
        let old_instrs = std::mem::take(&mut blk.instrs);
        let old_origins = std::mem::take(&mut blk.origins);
        for (k, (i, o)) in old_instrs.into_iter().zip(old_origins).enumerate() {
            blk.push(i, o);
            while let Some((_, _, ins)) = it.next_if(|(x, at, _)| *x == b && *at == k) {
                blk.push(ins, o);
            }
        }
        // An index past the block's end (none: indices are definition sites) is dropped,
        // rather than looping on this block for ever.
        while it.next_if(|(x, _, _)| *x == b).is_some() {}
    }
}

/// Where one 32-bit word `r` of a value is computed, looking through `join`s.
fn word_site(f: &Function, d: &DefSites, r: RegRef) -> Option<(BlockId, usize)> {
    if r.n != 1 {
        return None;
    }
    let Reg::V(v) = r.reg else { return None };
    let (b, k) = d.get(v)?;
    let i = f.cfg[b].instrs.get(k)?;
    if i.guard.is_some() {
        return None;
    }
    if i.op != Op::Join {
        return (r.comp == 0).then_some((b, k));
    }
    // Component numbers are below 256 (a `u8`); a join past that is not looked through.
    let mut at = 0u8;
    for s in &i.srcs {
        let x = s.as_reg()?;
        let end = at.checked_add(x.n)?;
        if r.comp < end {
            return word_site(f, d, x.part(r.comp.checked_sub(at)?));
        }
        at = end;
    }
    None
}

/// A 64-bit add `lo.CC = a.lo (<< s) + b.lo; hi = a.hi:a.lo (<< s) .hi + b.hi + CC` read
/// off its two instructions: `IADD.CC`/`IADD.X` (scale 0) or `LEA.CC`/`LEA.HI.X`. Returns
/// the sources of an equivalent `LEA`/`LEA.HI.X` pair: `[a.lo, b.lo, s]` and `[a.lo, b.hi,
/// a.hi, s]`.
fn scaled_add(lo: &Instr, hi: &Instr) -> Option<(Vec<Src>, Vec<Src>)> {
    if lo.guard.is_some() || hi.guard.is_some() || lo.srcs.iter().chain(&hi.srcs).any(|s| s.mods != SrcMods::default())
    {
        return None;
    }
    let (a_lo, b_lo, a_hi, b_hi, s) = match (lo.op, hi.op, lo.srcs.as_slice(), hi.srcs.as_slice()) {
        (Op::Iadd { cc: true, x: false }, Op::Iadd { cc: false, x: true }, &[l0, l1, ..], &[h0, h1, ..]) => {
            // LEA takes the offset in a register (Ra) and the base in Sb.
            if l0.as_reg().is_some() && h0.as_reg().is_some() {
                (l0, l1, h0, h1, Src::imm(0))
            } else {
                (l1, l0, h1, h0, Src::imm(0))
            }
        }
        (
            Op::Lea { hi: false, x: false, cc: true },
            Op::Lea { hi: true, x: true, cc: false },
            &[l0, l1, l2],
            &[h0, h1, h2, h3],
        ) if hi.dsts.len() == 1 => {
            if l0 != h0 || l2 != h3 {
                return None;
            }
            (l0, l1, h2, h1, l2)
        }
        _ => return None,
    };
    let reg = |s: Src| s.as_reg().is_some_and(|r| r.n == 1);
    // spa50-LEA.txt sources: Ra and Rc registers; Sb a register or a constant with an
    // immediate address (LEA.LO also a 20-bit immediate).
    let base_ok = |s: Src, lo: bool| {
        reg(s)
            || matches!(s.kind, SrcKind::CBuf { index: None, .. })
            || lo && matches!(s.kind, SrcKind::Imm(v) if (-(1i64 << 19)..(1 << 19)).contains(&(v as i32 as i64)))
    };
    (reg(a_lo) && reg(a_hi) && base_ok(b_lo, true) && base_ok(b_hi, false))
        .then(|| (vec![a_lo, b_lo, s], vec![a_lo, b_hi, a_hi, s]))
}

/// Folds the 64-bit add that builds a generic address into the `LEA`/`LEA.HI.X` pair that
/// computes its Plg, as in the spa50-LEA.txt examples (`LEA.LO R0.CC, R2, R4, 3;
/// LEA.HI.X P0, R1, R2, R5, R3, 3; LD.64 Rd, [R0+80], P0`): the pair
/// `LEA t.lo.CC, p.lo, off; LEA.HI.X P, t.hi, p.lo, RZ, p.hi` with `p = base + (i << s)`
/// becomes `LEA t.lo.CC, i.lo, base.lo, s; LEA.HI.X P, t.hi, i.lo, base.hi, i.hi, s`, and
/// `off` moves into the immediates of the `LD`/`ST`s that use `t` (Plg is then computed on
/// the address without `off`, as ptxas does for every access after the first from one
/// base, findings section 4). The add dies if nothing else reads it. Returns true if
/// anything changed.
pub fn fuse_generic_add(f: &mut Function) -> bool {
    let d = defs(f);
    let cc_readers = crate::ir::cc::reader_counts(f);
    // Readers of every value: LD/ST address bases can absorb an offset; anything else
    // cannot.
    let mut addr_only: HashMap<u32, bool> = HashMap::new();
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            let mem = matches!(i.op, Op::Ld(_) | Op::St(_));
            for (k, s) in i.srcs.iter().enumerate() {
                if let Some(r) = s.gprs()
                    && let Reg::V(v) = r.reg
                {
                    let as_base = mem && k == 0 && matches!(s.kind, SrcKind::Addr { .. });
                    *addr_only.entry(v).or_insert(true) &= as_base;
                }
            }
        }
        for e in f.succ_edges(b) {
            for a in &f.cfg[e].args {
                addr_only.insert(*a, false);
            }
        }
    }
    // The instructions whose address is based on each value.
    let mut based: HashMap<u32, Vec<(BlockId, usize)>> = HashMap::new();
    for &b in &f.layout {
        for (k, i) in f.cfg[b].instrs.iter().enumerate() {
            if let Some(SrcKind::Addr { base, .. }) = i.srcs.first().map(|s| s.kind)
                && let Reg::V(t) = base.reg
            {
                based.entry(t).or_default().push((b, k));
            }
        }
    }
    let based_on = |t: u32| based.get(&t).map_or(&[][..], Vec::as_slice);
    let mut rewrites = vec![];
    for &b in &f.layout {
        for (k, window) in f.cfg[b].instrs.windows(3).enumerate() {
            let [lo, hi, j] = window else { continue };
            if lo.op != (Op::Lea { hi: false, x: false, cc: true })
                || hi.op != (Op::Lea { hi: true, x: true, cc: false })
                || !matches!(hi.dsts.first(), Some(Dst::Pred(_)))
                || j.op != Op::Join
                || lo.guard.is_some()
                || hi.guard.is_some()
            {
                continue;
            }
            // The Plg pair as lowering builds it (generic_addr): no scale, base in Ra/Rc;
            // its carry, which the rewrite changes, read by its high half only.
            let ([lo_a, lo_b], [hi_a, hi_b, hi_c]) = (lo.srcs.as_slice(), hi.srcs.as_slice()) else { continue };
            if lo_a != hi_a
                || hi.cc.read != lo.cc.def
                || lo.cc.def.is_none_or(|c| cc_readers.get(c as usize) != Some(&1))
            {
                continue;
            }
            let off = match lo_b.kind {
                SrcKind::Imm(v) => v as i32 as i64,
                SrcKind::Reg(r) if r.reg.is_rz() => 0,
                _ => continue,
            };
            if !hi_b.as_reg().is_some_and(|r| r.reg.is_rz()) {
                continue;
            }
            let (Some(p_lo), Some(p_hi)) = (lo_a.as_reg(), hi_c.as_reg()) else { continue };
            // The two words come from one add pair: the high word reads the low word's carry.
            let (Some((ba, ka)), Some((bx, kx))) = (word_site(f, &d, p_lo), word_site(f, &d, p_hi)) else { continue };
            let (Some(add_lo), Some(add_hi)) = (f.cfg[ba].instrs.get(ka), f.cfg[bx].instrs.get(kx)) else { continue };
            if add_lo.cc.def.is_none() || add_hi.cc.read != add_lo.cc.def {
                continue;
            }
            let Some((lo_srcs, hi_srcs)) = scaled_add(add_lo, add_hi) else { continue };
            let Some(Reg::V(tv)) = j.dsts.first().map(Dst::reg_of) else { continue };
            if off != 0
                && !(addr_only.get(&tv).copied().unwrap_or(true) && moved_offsets(f, based_on(tv), off).is_some())
            {
                continue;
            }

            rewrites.push((b, k, lo_srcs, hi_srcs, tv, off));
        }
    }
    let changed = !rewrites.is_empty();
    for (b, k, lo_srcs, hi_srcs, tv, off) in rewrites {
        // The offsets were checked when the rewrite was chosen; each value's sites are
        // its own, so no other rewrite moved them since.
        let moved = if off != 0 { moved_offsets(f, based_on(tv), off) } else { Some(vec![]) };
        let Some(moved) = moved else { continue };
        let Some([lo, hi, ..]) = f.cfg[b].instrs.get_mut(k..) else { continue };
        lo.srcs = lo_srcs;
        hi.srcs = hi_srcs;
        for (b, k, o) in moved {
            if let Some(s) = f.cfg[b].instrs.get_mut(k).and_then(|i| i.srcs.first_mut())
                && let SrcKind::Addr { offset, .. } = &mut s.kind
            {
                *offset = o;
            }
        }
    }
    changed
}

/// The addresses at `sites` (the instructions based on one value) with `off` more in
/// their 32-bit immediates (spa50-LD.txt, spa50-ST.txt): each site's new immediate, or
/// `None` if one does not fit or a site is missing. Sites without an address are left out.
fn moved_offsets(f: &Function, sites: &[(BlockId, usize)], off: i64) -> Option<Vec<(BlockId, usize, i32)>> {
    let mut moved = Vec::with_capacity(sites.len());
    for &(b, k) in sites {
        if let Some(SrcKind::Addr { offset, .. }) = f.cfg[b].instrs.get(k)?.srcs.first().map(|s| s.kind) {
            moved.push((b, k, i32::try_from(i64::from(offset).checked_add(off)?).ok()?));
        }
    }
    Some(moved)
}
