//! Integer, logic, predicate and move semantics.
//!
//! Sources: envytools (`docs/hw/graph/maxwell/cuda/int.rst`: XMAD, IADD3), spa50-LEA.txt
//! (LEA/LEA.HI with scale, negation and the shared-window predicate), the PTX ISA for the
//! bit-field operations that ptxas maps one to one (BFE/BFI as `bfe`/`bfi`), and
//! nvdisasm's operand order as printed by [`crate::sass::print`].
//!
//! Carry conventions: a negated operand `-x` is `~x + 1` in a plain add and `~x` in an
//! extended (`.X`) add (Mesa NAK's SM50 encoder emits `IADD.X` sources with the same bit
//! as a bitwise NOT, `set_reg_bnot_src`), whose carry-in (CC.CF) supplies the `+ 1` of a multi-word
//! two's-complement negation (`IADD.CC lo, a, -b; IADD.X hi, c, -d` subtracts 64-bit
//! values). CC.CF is the carry out of bit 31, CC.ZF the zero test (chained through `.X`:
//! zero only if the lower words were), CC.SF bit 31, CC.OF signed overflow.

use crate::exec::ExecError;
use crate::exec::sim::Sim;
use crate::exec::sim::mem::in_shared_window;
use crate::exec::sim::state::{CF, Lanes, OF, PerLane, SF, WARP_SIZE, Warp, ZF, lanes};
use crate::sass::instr::{Dst, Instr, Reg, Src};
use crate::sass::op::{BoolOp, Cmp, Iadd3Mode, LogicOp, Op, SpecialReg, XmadC, XmadMods};

/// Flags of a 32-bit result `res` with carry out `carry`, from addends `a` and `b`.
fn flags(a: u32, b: u32, res: u32, carry: bool) -> u8 {
    let mut f = 0;
    if carry {
        f |= CF;
    }
    if res == 0 {
        f |= ZF;
    }
    if res >> 31 == 1 {
        f |= SF;
    }
    if ((a ^ res) & (b ^ res)) >> 31 == 1 {
        f |= OF;
    }
    f
}

/// IADD/IADD32I: `a + b` with optional negations, `.X` carry-in from `cc_in`. Returns the
/// sum and the CC flags.
pub fn iadd(a: u32, neg_a: bool, b: u32, neg_b: bool, x: bool, cc_in: u8) -> (u32, u8) {
    let a2 = if neg_a { !a } else { a };
    let b2 = if neg_b { !b } else { b };
    // The 34-bit sum of two words and a carry-in of at most 2: no overflow in u64 (the
    // saturating adds never saturate); bit 32 is the carry, the result wraps modulo 2^32.
    let cin = if x { (cc_in & CF != 0) as u64 } else { (neg_a as u64).saturating_add(neg_b as u64) };
    let wide = (a2 as u64).saturating_add(b2 as u64).saturating_add(cin);
    let res = wide as u32;
    let mut f = flags(a2, b2, res, wide >> 32 != 0);
    if x && cc_in & ZF == 0 {
        f &= !ZF;
    }
    (res, f)
}

/// XMAD (envytools `maxwell/cuda/int.rst`): a 16x16-bit multiply of the selected halves
/// (`.H1` picks bits 31:16, signedness per `.S16`), `.PSL` shifts the product left by 16,
/// the addend is `c` (`.CLO` its low half, `.CHI` its high half, `.CBCC` plus `b << 16`
/// of the whole `b` register, `.CSFU` minus `0x10000` for each negative factor whose
/// partner register's other half is non-zero, see below), `.X` adds CC.CF, and `.MRG`
/// replaces the result's high half with the low half of the whole `b` register.
///
/// `.CSFU` (sign fix-up) compensates the unsigned 33-bit sum of `IADD3.RS` for the
/// negative partial products of a signed high multiply. envytools says "minus 0x10000
/// per negative factor unless a factor is zero", which makes ptxas 11.8's `mul.hi.s32`
/// (`XMAD; XMAD.U16.S16 a, b.H1; XMAD.S16.S16.CSFU a.H1, b.H1; XMAD.S16.U16.CHI;
/// IADD3.RS`) wrong for `a = 1, b = 0xffff0000`; the partial products `a.H1 * b.lo` and
/// `a.lo * b.H1` that the fix-up stands for are negative exactly when the signed factor
/// is negative and the other register's other half is non-zero, and with that condition
/// the sequence is exact on 10^5 operand pairs and on `samples/int_ops` run from ptxas's
/// code against the PTX interpreter (`tests/sim_ptxas.rs`). Inferred, not documented.
pub fn xmad(m: XmadMods, a: u32, a_h1: bool, b: u32, b_h1: bool, c: u32, cc_in: u8) -> (u32, u8) {
    let half = |v: u32, h1: bool, signed: bool| {
        let h = if h1 { v >> 16 } else { v & 0xffff };
        if signed { h as u16 as i16 as i32 as u32 } else { h }
    };
    let pa = half(a, a_h1, m.signed_a);
    let pb = half(b, b_h1, m.signed_b);
    let mut p = pa.wrapping_mul(pb);
    if m.psl {
        p <<= 16;
    }
    let c = match m.c {
        XmadC::C => c,
        XmadC::Clo => c & 0xffff,
        XmadC::Chi => c >> 16,
        XmadC::Cbcc => c.wrapping_add(b << 16),
        XmadC::Csfu => {
            let other_half = |v: u32, h1: bool| if h1 { v & 0xffff } else { v >> 16 };
            c.wrapping_sub(if (pa as i32) < 0 && other_half(b, b_h1) != 0 { 0x10000 } else { 0 })
                .wrapping_sub(if (pb as i32) < 0 && other_half(a, a_h1) != 0 { 0x10000 } else { 0 })
        }
    };
    let cin = if m.x { (cc_in & CF != 0) as u64 } else { 0 };
    let wide = (p as u64).saturating_add(c as u64).saturating_add(cin); // < 2^33, bit 32 the carry
    let mut res = wide as u32;
    let f = flags(p, c, res, wide >> 32 != 0);
    if m.mrg {
        res = (res & 0xffff) | (b << 16);
    }
    (res, f)
}

/// LEA (low word, spa50-LEA.txt): `({-}a << scale) + b`; CC.CF is the carry, CC.OF is
/// `!(shared-window-detect)` of the 32-bit result. Returns (result, flags, Plg) where Plg
/// is true when the result is not in the shared window.
pub fn lea_lo(a: u32, neg: bool, b: u32, scale: u32) -> (u32, u8, bool) {
    let off = if neg { a.wrapping_neg() } else { a };
    let sh = off.checked_shl(scale).unwrap_or(0);
    let wide = (sh as u64).saturating_add(b as u64); // < 2^33, bit 32 the carry
    let res = wide as u32;
    let in_window = in_shared_window(res as u64);
    let mut f = flags(sh, b, res, wide >> 32 != 0) & !OF;
    if !in_window {
        f |= OF;
    }
    (res, f, !in_window)
}

/// LEA.HI (spa50-LEA.txt): `(({-}{c, a}) << scale) >> 32` plus `b` plus CC.CF with `.X`.
/// The 64-bit result's window check combines the low word's (CC.OF from LEA.LO) with a
/// zero high word. Returns (result, flags, Plg).
pub fn lea_hi(a: u32, c: u32, neg: bool, b: u32, scale: u32, x: bool, cc_in: u8) -> (u32, u8, bool) {
    let off = (c as u64) << 32 | a as u64;
    let off = if neg { off.wrapping_neg() } else { off };
    let hi = (off.checked_shl(scale).unwrap_or(0) >> 32) as u32;
    let cin = if x { (cc_in & CF != 0) as u64 } else { 0 };
    let wide = (hi as u64).saturating_add(b as u64).saturating_add(cin); // < 2^33, bit 32 the carry
    let res = wide as u32;
    let in_window = res == 0 && cc_in & OF == 0;
    let mut f = flags(hi, b, res, wide >> 32 != 0) & !OF;
    if !in_window {
        f |= OF;
    }
    (res, f, !in_window)
}

/// BFE (PTX `bfe`): extract `len` bits from `pos` (`control = pos | len << 8`), sign
/// extending from the field's top bit unless `u32`.
pub fn bfe(a: u32, control: u32, u32_: bool) -> u32 {
    let pos = control & 0xff;
    let len = (control >> 8) & 0xff;
    // pos and len are bytes (at most 255): the bit positions below never saturate.
    let sbit = if u32_ || len == 0 { 0 } else { a >> pos.saturating_add(len).saturating_sub(1).min(31) & 1 };
    let mut d = 0u32;
    for i in 0..32 {
        let at = pos.saturating_add(i);
        let bit = if i < len && at <= 31 { a >> at & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

/// BFI (PTX `bfi`): insert the low `len` bits of `a` into `c` at `pos`.
pub fn bfi(a: u32, control: u32, c: u32) -> u32 {
    let pos = control & 0xff;
    let len = (control >> 8) & 0xff;
    let mut d = c;
    for i in 0..len.min(32) {
        let at = pos.saturating_add(i); // pos <= 255, i < 32
        if at <= 31 {
            d = (d & !(1 << at)) | ((a >> i & 1) << at);
        }
    }
    d
}

/// SHF (funnel shift): `.L` gives the high word of `{hi, lo} << s`, `.R` the low word of
/// `{hi, lo} >> s` (arithmetic for `.S64`). The amount is clamped to 64 for the 64-bit
/// forms and to 32 otherwise; with `.W` the caller has already taken it modulo the width
/// (ptxas: `shf.l.wrap.b32` is `SHF.L.W`, `shf.l.clamp.b32` is `SHF.L`, PTX ISA 9.7.7.9).
pub fn shf(lo: u32, s: u32, hi: u32, left: bool, signed: bool, wide: bool) -> u32 {
    let v = (hi as u64) << 32 | lo as u64;
    let s = s.min(if wide { 64 } else { 32 });
    if left {
        (v.checked_shl(s).unwrap_or(0) >> 32) as u32
    } else if signed && wide {
        ((v as i64) >> s.min(63)) as u32
    } else {
        v.checked_shr(s).unwrap_or(0) as u32
    }
}

/// An integer comparison (`u32` unsigned).
fn icmp(cmp: Cmp, a: i64, b: i64) -> Result<bool, ExecError> {
    Ok(match cmp {
        Cmp::F => false,
        Cmp::T => true,
        Cmp::Lt => a < b,
        Cmp::Eq => a == b,
        Cmp::Le => a <= b,
        Cmp::Gt => a > b,
        Cmp::Ne => a != b,
        Cmp::Ge => a >= b,
        c => return Err(ExecError::Unsupported(format!("integer comparison {c:?}"))),
    })
}

/// ISETP: the comparison of `a` and `b`. With `.X` the operands are the high words of a
/// 64-bit comparison whose low words were subtracted into CC (`IADD RZ.CC, alo, -blo`):
/// the borrow `!CC.CF` is subtracted and equality needs CC.ZF too.
pub fn isetp(cmp: Cmp, u32_: bool, x: bool, a: u32, b: u32, cc_in: u8) -> Result<bool, ExecError> {
    let (a, b) = if u32_ { (a as i64, b as i64) } else { (a as i32 as i64, b as i32 as i64) };
    if !x {
        return icmp(cmp, a, b);
    }
    let borrow = (cc_in & CF == 0) as i64;
    // Values of 32-bit words and a borrow of 0 or 1: no saturation in i64.
    let diff = a.saturating_sub(b).saturating_sub(borrow);
    let eq = diff == 0 && cc_in & ZF != 0;
    let lt = diff < 0;
    Ok(match cmp {
        Cmp::F => false,
        Cmp::T => true,
        Cmp::Lt => lt,
        Cmp::Eq => eq,
        Cmp::Le => lt || eq,
        Cmp::Gt => !lt && !eq,
        Cmp::Ne => !eq,
        Cmp::Ge => !lt,
        c => return Err(ExecError::Unsupported(format!("integer comparison {c:?}"))),
    })
}

/// Combines a comparison result with a predicate (`.AND/.OR/.XOR`), lane masks.
pub fn bool_op(op: BoolOp, a: u32, b: u32) -> u32 {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

/// LOP3.LUT: bit `i` of the result is bit `(a_i << 2 | b_i << 1 | c_i)` of `lut`.
pub fn lop3(a: u32, b: u32, c: u32, lut: u32) -> u32 {
    let mut d = 0;
    for idx in 0..8u32 {
        if lut >> idx & 1 == 1 {
            let pick = |v: u32, bit: u32| if idx >> bit & 1 == 1 { v } else { !v };
            d |= pick(a, 2) & pick(b, 1) & pick(c, 0);
        }
    }
    d
}

fn src(i: &Instr, k: usize) -> Result<&Src, ExecError> {
    i.srcs.get(k).ok_or_else(|| ExecError::Unsupported(format!("{} is missing operand {k}", i.op.name())))
}

fn imm_of(s: &Src) -> Result<u32, ExecError> {
    match s.kind {
        crate::sass::instr::SrcKind::Imm(v) => Ok(v),
        _ => Err(ExecError::Unsupported(format!("expected an immediate, found {:?}", s.kind))),
    }
}

impl Sim<'_> {
    /// Writes the first destination (a register) of `i`.
    fn put(w: &mut Warp, i: &Instr, mask: u32, v: &Lanes) -> Result<(), ExecError> {
        match i.dsts.iter().find(|d| matches!(d, Dst::Reg(_))) {
            Some(Dst::Reg(r)) => {
                w.write32(*r, mask, v);
                Ok(())
            }
            _ => Err(ExecError::Unsupported(format!("{} without a register destination", i.op.name()))),
        }
    }

    /// Writes the predicate destinations `Pd = r bop Pc`, `Qd = !r bop Pc` of a
    /// comparison (`r` a lane mask of results): ISETP, PSETP here, CSETP in `ext`.
    pub(in crate::exec::sim) fn put_preds(w: &mut Warp, i: &Instr, mask: u32, r: u32, bop: BoolOp, pc: u32) {
        let preds: Vec<Reg> =
            i.dsts.iter().filter_map(|d| if let Dst::Pred(p) = d { Some(*p) } else { None }).collect();
        if let Some(p) = preds.first() {
            w.set_pred(*p, mask, bool_op(bop, r, pc));
        }
        if let Some(q) = preds.get(1) {
            w.set_pred(*q, mask, bool_op(bop, !r, pc));
        }
    }

    /// Executes the integer, logic, predicate and move instructions in the lanes of
    /// `mask`. Returns false for an opcode of another family.
    pub(in crate::exec::sim) fn exec_alu(&mut self, w: &mut Warp, i: &Instr, mask: u32) -> Result<bool, ExecError> {
        let g = |w: &Warp, s: &Self, k: usize| -> Result<Lanes, ExecError> { w.gather(src(i, k)?, &s.banks, mask) };
        let mut out: Lanes = [0; WARP_SIZE];
        match i.op {
            Op::Mov | Op::Mov32i => {
                out = g(w, self, 0)?;
            }
            Op::S2r(sr) | Op::Cs2r(sr) => {
                for l in lanes(mask) {
                    // The lanes below `l`, and lane `l` itself (l < 32).
                    let below = !u32::MAX.checked_shl(l as u32).unwrap_or(0);
                    let this = 1u32.checked_shl(l as u32).unwrap_or(0);
                    let ([tx, ty, tz], [cx, cy, cz]) = (w.tid.at(l), self.ctaid);
                    let v = match sr {
                        SpecialReg::TidX => tx,
                        SpecialReg::TidY => ty,
                        SpecialReg::TidZ => tz,
                        SpecialReg::CtaidX => cx,
                        SpecialReg::CtaidY => cy,
                        SpecialReg::CtaidZ => cz,
                        SpecialReg::LaneId => l as u32,
                        SpecialReg::ClockLo => w.next_issue as u32,
                        SpecialReg::ClockHi => (w.next_issue >> 32) as u32,
                        // One SM (SM 0); the warp's slot is its index in the CTA.
                        SpecialReg::VirtId => (w.index as u32 & 63) << 8,
                        SpecialReg::VirtCfg => 1 << 20,
                        SpecialReg::EqMask => this,
                        SpecialReg::LtMask => below,
                        SpecialReg::LeMask => below | this,
                        SpecialReg::GtMask => !(below | this),
                        SpecialReg::GeMask => !below,
                    };
                    out.set(l, v);
                }
            }
            Op::Sel => {
                let (a, b, p) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                for l in lanes(mask) {
                    out.set(l, if p >> l & 1 == 1 { a.at(l) } else { b.at(l) });
                }
            }
            Op::Iadd { cc, x } | Op::Iadd32i { cc, x } => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    let (r, f) = iadd(a.at(l), sa.mods.neg, b.at(l), sb.mods.neg, x, w.cc.at(l));
                    out.set(l, r);
                    if cc {
                        w.cc.set(l, f);
                    }
                }
            }
            Op::Iadd3(mode) => {
                let vals = [g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?];
                if mode != Iadd3Mode::Plain && i.srcs.iter().take(2).any(|s| s.mods.neg) {
                    return Err(ExecError::Unsupported(format!("{} with a negated operand", i.op.name())));
                }
                for l in lanes(mask) {
                    // IADD3 wraps modulo 2^32 (SASS integer addition); so does the negation.
                    let [a, b, c] = [0, 1, 2].map(|k| {
                        let neg = i.srcs.get(k).is_some_and(|s| s.mods.neg);
                        let v = vals.get(k).map_or(0, |v| v.at(l));
                        if neg { v.wrapping_neg() } else { v }
                    });
                    out.set(l, crate::exec::sim::arith::int::iadd3(mode, a, b, c));
                }
            }
            Op::Iscadd { cc } => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b, s) = (g(w, self, 0)?, g(w, self, 1)?, imm_of(src(i, 2)?)?);
                for l in lanes(mask) {
                    let av = if sa.mods.neg { a.at(l).wrapping_neg() } else { a.at(l) };
                    let (r, f) = iadd(av.checked_shl(s).unwrap_or(0), false, b.at(l), sb.mods.neg, false, 0);
                    out.set(l, r);
                    if cc {
                        w.cc.set(l, f);
                    }
                }
            }
            Op::Lea { hi, x, cc } => return self.exec_lea(w, i, mask, hi, x, cc).map(|_| true),
            Op::Xmad(m) => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                for l in lanes(mask) {
                    let (r, f) = xmad(m, a.at(l), sa.mods.h1, b.at(l), sb.mods.h1, c.at(l), w.cc.at(l));
                    out.set(l, r);
                    if m.cc {
                        w.cc.set(l, f);
                    }
                }
            }
            Op::Shl | Op::Shr { .. } => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    let s = b.at(l);
                    let v = match i.op {
                        Op::Shl => a.at(l).checked_shl(s).unwrap_or(0),
                        Op::Shr { u32: true } => a.at(l).checked_shr(s).unwrap_or(0),
                        _ => ((a.at(l) as i32) >> s.min(31)) as u32,
                    };
                    out.set(l, v);
                }
            }
            Op::Shf { left, signed, wide, wrap } => {
                let (a, b, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                for l in lanes(mask) {
                    let s = if wrap { b.at(l) & if wide { 63 } else { 31 } } else { b.at(l) };
                    out.set(l, shf(a.at(l), s, c.at(l), left, signed, wide));
                }
            }
            Op::Lop(lop) | Op::Lop32i(lop) => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    let x = if sa.mods.inv { !a.at(l) } else { a.at(l) };
                    let y = if sb.mods.inv { !b.at(l) } else { b.at(l) };
                    let v = match lop {
                        LogicOp::And => x & y,
                        LogicOp::Or => x | y,
                        LogicOp::Xor => x ^ y,
                        LogicOp::PassB => y,
                    };
                    out.set(l, v);
                }
            }
            Op::Lop3 => {
                let (a, b, c, lut) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?, imm_of(src(i, 3)?)?);
                for l in lanes(mask) {
                    out.set(l, lop3(a.at(l), b.at(l), c.at(l), lut));
                }
            }
            Op::Imnmx { u32 } => {
                let (a, b, p) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                for l in lanes(mask) {
                    let min = p >> l & 1 == 1;
                    let less = if u32 { a.at(l) < b.at(l) } else { (a.at(l) as i32) < (b.at(l) as i32) };
                    out.set(l, if less == min { a.at(l) } else { b.at(l) });
                }
            }
            Op::Bfe { u32, brev } => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    out.set(l, bfe(if brev { a.at(l).reverse_bits() } else { a.at(l) }, b.at(l), u32));
                }
            }
            Op::Bfi => {
                let (a, b, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                for l in lanes(mask) {
                    out.set(l, bfi(a.at(l), b.at(l), c.at(l)));
                }
            }
            Op::Popc => {
                let last = i.srcs.len().checked_sub(1).ok_or_else(|| ExecError::Unsupported("POPC operand".into()))?;
                let (s, a) = (src(i, last)?, g(w, self, last)?);
                for l in lanes(mask) {
                    out.set(l, if s.mods.inv { !a.at(l) } else { a.at(l) }.count_ones());
                }
            }
            Op::Isetp { cmp, u32, x, bop } => {
                let (a, b, pc) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                let mut r = 0u32;
                for l in lanes(mask) {
                    if isetp(cmp, u32, x, a.at(l), b.at(l), w.cc.at(l))? {
                        r |= 1 << l;
                    }
                }
                Self::put_preds(w, i, mask, r, bop, pc);
                return Ok(true);
            }
            Op::Psetp { bop0, bop1 } => {
                let (a, b, c) = (w.pred_src(src(i, 0)?)?, w.pred_src(src(i, 1)?)?, w.pred_src(src(i, 2)?)?);
                Self::put_preds(w, i, mask, bool_op(bop0, a, b), bop1, c);
                return Ok(true);
            }
            _ => return Ok(false),
        }
        Self::put(w, i, mask, &out)?;
        Ok(true)
    }

    /// LEA / LEA.HI with optional Plg destination (spa50-LEA.txt). Operands: `Ra, Sb`
    /// (`, Rc` for .HI) then an optional scale immediate.
    fn exec_lea(&mut self, w: &mut Warp, i: &Instr, mask: u32, hi: bool, x: bool, cc: bool) -> Result<(), ExecError> {
        let n = i.srcs.len();
        // LEA: Ra, Sb{, scale}; LEA.HI: Ra, Sb, Rc{, scale} or Ra, Sb, scale (Rc = RZ).
        let last = i.srcs.last().filter(|_| n >= 3);
        let has_scale = last.is_some_and(|s| matches!(s.kind, crate::sass::instr::SrcKind::Imm(_)));
        let scale = match last {
            Some(s) if has_scale => imm_of(s)? & 31,
            _ => 0,
        };
        let sa = src(i, 0)?;
        let a = w.gather(sa, &self.banks, mask)?;
        let b = w.gather(src(i, 1)?, &self.banks, mask)?;
        let c: Lanes = if hi && n >= 3 && !(n == 3 && has_scale) {
            w.gather(src(i, 2)?, &self.banks, mask)?
        } else {
            [0; WARP_SIZE]
        };
        let mut out = [0u32; WARP_SIZE];
        let mut plg = 0u32;
        for l in lanes(mask) {
            let (r, f, p) = if hi {
                lea_hi(a.at(l), c.at(l), sa.mods.neg, b.at(l), scale, x, w.cc.at(l))
            } else {
                lea_lo(a.at(l), sa.mods.neg, b.at(l), scale)
            };
            out.set(l, r);
            if p {
                plg |= 1 << l;
            }
            if cc {
                w.cc.set(l, f);
            }
        }
        for d in &i.dsts {
            match d {
                Dst::Reg(r) => w.write32(*r, mask, &out),
                Dst::Pred(p) => w.set_pred(*p, mask, plg),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn xmad_mul_lo_sequence() {
        // XMAD t, a, b, c ; XMAD.MRG u, a, b.H1, RZ ; XMAD.PSL.CBCC d, a.H1, u.H1, t  == a*b + c
        for (a, b, c) in [(0x1234_5678u32, 0x9abc_def0u32, 7u32), (0xffff_ffff, 0xffff_ffff, 0), (3, 0x10001, 5)] {
            let (t, _) = xmad(XmadMods::default(), a, false, b, false, c, 0);
            let (u, _) = xmad(XmadMods { mrg: true, ..Default::default() }, a, false, b, true, 0, 0);
            let (d, _) = xmad(XmadMods { psl: true, c: XmadC::Cbcc, ..Default::default() }, a, true, u, true, t, 0);
            assert_eq!(d, a.wrapping_mul(b).wrapping_add(c), "{a:#x} * {b:#x} + {c}");
        }
    }
}
