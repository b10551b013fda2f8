//! Lowering of integer multiplication (PTX ISA 9.7.1.3 `mul`, 9.7.1.4 `mad`, 9.7.1.12
//! `mul24`, 9.7.1.13 `mad24`, 9.7.2.6 `madc`) to XMAD sequences: SPA 5.0 has no 32-bit
//! integer multiplier, only XMAD's 16x16-bit multiply-add.
//!
//! Sequences (ptxas 11.8 for sm_50, observed unless marked otherwise):
//! * `mul.lo.u32 d, a, b` (+ `c` for `mad.lo`): `XMAD t, a, b, c; XMAD.MRG u, a, b.H1, RZ;
//!   XMAD.PSL.CBCC d, a.H1, u.H1, t` (the product's `a.hi*b.hi` term is beyond bit 31).
//! * `mul.hi.u32` (+ `c`): `XMAD t0, a, b, RZ; XMAD t1, a, b.H1, RZ; XMAD t2, a.H1, b.H1, c;
//!   XMAD.CHI t3, a.H1, b, t0; IADD3.RS d, t3, t1, t2`: `t3 + t1` is the 33-bit middle sum
//!   whose bits 16.. IADD3.RS adds to the high partial product.
//! * `mul.hi.s32`: ptxas uses the same shape with signed XMAD halves and the `.CSFU`
//!   correction mode, whose exact definition we could not confirm; instead (our sequence)
//!   `p0 = a.lo*b.lo` (`XMAD`), `m = a.lo*b.hi(signed) + (p0 >> 16)` (`XMAD.U16.S16.CHI`),
//!   `n = a.hi(signed)*b.lo + (m & 0xffff)` (`XMAD.S16.U16.CLO`), `p3 = a.hi*b.hi + c`
//!   (`XMAD.S16.S16`) and `hi = p3 + (m >> 16) + (n >> 16)` with arithmetic shifts (`SHR`,
//!   `SHR`, `IADD3`): every partial sum fits 32 signed bits, so no carry is lost; the low
//!   word is `n << 16 | p0 & 0xffff` (`BFI n, 0x1010, p0`). Two instructions more than
//!   ptxas.
//! * `mul.wide.u32` = the `mul.lo` and `mul.hi` sequences sharing the first XMAD (ptxas
//!   computes it twice); `mul.wide.s32` = the signed sequence plus the BFI; a power-of-two
//!   constant is `SHL lo, a, s; SHR{.U32} hi, a, 32-s` (findings section 5). `mad.wide`
//!   adds `c` with `IADD.CC`/`IADD.X` as ptxas.
//! * `mul.lo.u64`: `wide(a.lo, b.lo)` plus `a.lo*b.hi + a.hi*b.lo` into the high word (two
//!   `mad.lo` sequences; ptxas: 15 instructions of the same products). `mul.hi.u64`: the
//!   four 32x32 products summed with carries exactly as ptxas orders them (`IADD.CC`,
//!   `IADD.X`, ..., 36 instructions); `mul.hi.s64` subtracts `b` when `a < 0` and `a` when
//!   `b < 0` from the unsigned high word (our sequence; ptxas negates into absolute values).
//! * 16-bit: `mul.lo`/`mad.lo` and `mul.wide`/`mad.wide` are one XMAD (signedness from the
//!   type); `mul.hi` is that XMAD then `SHR.U32 16` (`mad.hi`: `IADD3.RS t, RZ, c`).
//! * `mul24`/`mad24`: the operands' low 24 bits extracted with `BFE{.U32} x, 0x1800` (ptxas),
//!   then `mul.lo` (`.lo`) or the 48-bit product's bits 16..47, `SHF.R` of the wide product
//!   by 16 (`.hi`; ptxas: 11 instructions, ours the same).
//! * `mad.hi.sat.s32`: the high product then `IADD.SAT` with `c` (ptxas uses `IMAD.HI.SAT`,
//!   a multi-cycle instruction we do not model).
//! * Carry forms (`mad.cc`, `madc`): the product part, then the addition of `c` as
//!   `IADD.CC`/`IADD.X` (ptxas: `XMAD ...; IADD R4.CC, R4, R5` / `IADD.X`).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::int::W64;
use crate::lower::ctx::{LResult, Lowerer, PtxReg};
use crate::ptx::ast::Instruction;
use crate::ptx::instr::{Arith, ArithOp, IntMode};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Reg, Src, SrcKind};
use crate::sass::op::*;

fn xm(c: XmadC, sa: bool, sb: bool) -> Op {
    Op::Xmad(XmadMods { c, signed_a: sa, signed_b: sb, ..Default::default() })
}

impl Lowerer<'_> {
    /// `lo32(a * b + c)` into `dst` (ptxas's `XMAD; XMAD.MRG; XMAD.PSL.CBCC`). A 16-bit
    /// constant multiplier needs only `XMAD t, a, k, c; XMAD.PSL d, a.H1, k, t`; powers of
    /// two become `SHL` (or `ISCADD` with `c`), zero a copy of `c`.
    pub fn imul32(&mut self, dst: Reg, a: Src, b: Src, c: Src) {
        let a = self.in_reg(a);
        let c = self.in_reg(c);
        if let SrcKind::Imm(k) = b.kind {
            if k.is_power_of_two() {
                let s = k.trailing_zeros();
                if c == Src::rz() {
                    self.op(Op::Shl, Dst::reg(dst, 1), vec![a, Src::imm(s)]);
                } else {
                    self.op(Op::Iscadd { cc: false }, Dst::reg(dst, 1), vec![a, c, Src::imm(s)]);
                }
                return;
            }
            if k == 0 {
                self.op(Op::Mov, Dst::reg(dst, 1), vec![c]);
                return;
            }
            if k <= 0xffff {
                let t = self.emit1(Op::Xmad(XmadMods::default()), vec![a, b, c]);
                self.op(Op::Xmad(XmadMods { psl: true, ..Default::default() }), Dst::reg(dst, 1), vec![a.h1(), b, t]);
                return;
            }
        }
        let b = self.in_reg(b);
        let t = self.emit1(Op::Xmad(XmadMods::default()), vec![a, b, c]);
        self.mul_lo_rest(dst, a, b, t);
    }

    /// The last two XMADs of `mul.lo` given `t = XMAD a, b, c`.
    fn mul_lo_rest(&mut self, dst: Reg, a: Src, b: Src, t: Src) {
        let u = self.emit1(Op::Xmad(XmadMods { mrg: true, ..Default::default() }), vec![a, b.h1(), Src::rz()]);
        self.op(
            Op::Xmad(XmadMods { psl: true, c: XmadC::Cbcc, ..Default::default() }),
            Dst::reg(dst, 1),
            vec![a.h1(), u.h1(), t],
        );
    }

    /// `lo32(a * b + c)` as a fresh register.
    pub(in crate::lower) fn mul_lo(&mut self, a: Src, b: Src, c: Src) -> Src {
        let t = self.tmp(1);
        self.imul32(t, a, b, c);
        Src::r32(t)
    }

    /// `hi32(a * b) + c`, unsigned (ptxas's five instructions); `t0 = XMAD a, b, RZ` may be
    /// given when already computed.
    pub(in crate::lower) fn umulhi(&mut self, a: Src, b: Src, c: Src, t0: Option<Src>) -> Src {
        let (a, c) = (self.in_reg(a), self.in_reg(c));
        let (bl, bh) = self.halves(b);
        let t0 = t0.unwrap_or_else(|| self.emit1(xm(XmadC::C, false, false), vec![a, bl, Src::rz()]));
        let t1 = self.emit1(xm(XmadC::C, false, false), vec![a, bh, Src::rz()]);
        let t2 = self.emit1(xm(XmadC::C, false, false), vec![a.h1(), bh, c]);
        let t3 = self.emit1(xm(XmadC::Chi, false, false), vec![a.h1(), bl, t0]);
        self.emit1(Op::Iadd3(Iadd3Mode::Rs), vec![t3, t1, t2])
    }

    /// The XMAD operands selecting the low and high halves of `b`: `b` and `b.H1` for a
    /// register, two 16-bit immediates for a constant (XMAD's immediate form has no `.H1`).
    fn halves(&mut self, b: Src) -> (Src, Src) {
        match b.kind {
            SrcKind::Imm(k) => (Src::imm(k & 0xffff), Src::imm(k >> 16)),
            _ => {
                let b = self.in_reg(b);
                (b, b.h1())
            }
        }
    }

    /// The signed product of 32-bit `a` and `b`: (low word, high word + `c`); the low word
    /// only if `want_lo` (see the module notes for the sequence).
    pub(in crate::lower) fn smul(&mut self, a: Src, b: Src, c: Src, want_lo: bool) -> (Option<Src>, Src) {
        let (hi, p0, n) = self.smul_hi(a, b, c);
        (want_lo.then(|| self.emit1(Op::Bfi, vec![n, Src::imm(0x1010), p0])), hi)
    }

    /// [`Lowerer::smul`]'s high word + `c`, with the partial products `p0` and `n` the low
    /// word is built from: (high, p0, n).
    fn smul_hi(&mut self, a: Src, b: Src, c: Src) -> (Src, Src, Src) {
        let (a, c) = (self.in_reg(a), self.in_reg(c));
        let (bl, bh) = self.halves(b);
        let p0 = self.emit1(xm(XmadC::C, false, false), vec![a, bl, Src::rz()]);
        let m = self.emit1(xm(XmadC::Chi, false, true), vec![a, bh, p0]);
        let n = self.emit1(xm(XmadC::Clo, true, false), vec![a.h1(), bl, m]);
        let p3 = self.emit1(xm(XmadC::C, true, true), vec![a.h1(), bh, c]);
        let s1 = self.emit1(Op::Shr { u32: false }, vec![m, Src::imm(16)]);
        let s2 = self.emit1(Op::Shr { u32: false }, vec![n, Src::imm(16)]);
        let hi = self.emit1(Op::Iadd3(Iadd3Mode::Plain), vec![p3, s1, s2]);
        (hi, p0, n)
    }

    /// `hi32(a * b) + c` for the signedness `signed`.
    pub(in crate::lower) fn mulhi(&mut self, a: Src, b: Src, c: Src, signed: bool) -> Src {
        if signed { self.smul(a, b, c, false).1 } else { self.umulhi(a, b, c, None) }
    }

    /// The full 64-bit product of 32-bit `a` and `b`.
    pub(in crate::lower) fn wide32(&mut self, a: Src, b: Src, signed: bool) -> W64 {
        // (For `.s32`, 0x80000000 is -2^31, not a power of two.)
        if let SrcKind::Imm(k) = b.kind
            && k.is_power_of_two()
            && !(signed && k == 0x8000_0000)
        {
            // ptxas: `SHL lo, a, s ; SHR{.U32} hi, a, 32-s` (findings section 5).
            let a = self.in_reg(a);
            let s = k.trailing_zeros();
            if s == 0 {
                let hi = if signed { self.emit1(Op::Shr { u32: false }, vec![a, Src::imm(31)]) } else { Src::rz() };
                return (a, hi);
            }
            let lo = self.emit1(Op::Shl, vec![a, Src::imm(s)]);
            // `s` is 1..=31 here (a power of two other than 1): `32 - s` does not wrap.
            let hi = self.emit1(Op::Shr { u32: !signed }, vec![a, Src::imm(32u32.wrapping_sub(s))]);
            return (lo, hi);
        }
        if signed {
            let a = self.in_reg(a);
            let (hi, p0, n) = self.smul_hi(a, b, Src::rz());
            if let SrcKind::Imm(k) = b.kind
                && k <= 0xffff
            {
                // The low word of a product does not depend on the operands' signedness
                // (it is the product modulo 2^32), so a 16-bit constant takes `mul.lo`'s
                // `XMAD.PSL lo, a.H1, k, p0` on the shared first partial product, as
                // ptxas 11.8 does for `mul.wide.s32 d, a, 132` whose high word is unused
                // (`XMAD R3, R4, 0x84, RZ; XMAD.PSL R8, R4.H1, 0x84, R3`, samples/
                // transpose_tiled.ptx). Same count as the BFI when the high word is used;
                // when it is not, `m` and `n` become dead: two instructions fewer.
                let lo = self.emit1(Op::Xmad(XmadMods { psl: true, ..Default::default() }), vec![a.h1(), b, p0]);
                return (lo, hi);
            }
            return (self.emit1(Op::Bfi, vec![n, Src::imm(0x1010), p0]), hi);
        }
        if matches!(b.kind, SrcKind::Imm(_)) {
            let lo = self.mul_lo(a, b, Src::rz());
            let hi = self.umulhi(a, b, Src::rz(), None);
            return (lo, hi);
        }
        let (a, b) = (self.in_reg(a), self.in_reg(b));
        let t0 = self.emit1(xm(XmadC::C, false, false), vec![a, b, Src::rz()]);
        let lo = self.tmp(1);
        self.mul_lo_rest(lo, a, b, t0);
        let hi = self.umulhi(a, b, Src::rz(), Some(t0));
        (Src::r32(lo), hi)
    }

    /// `lo64(a * b)`.
    pub(in crate::lower) fn mul_lo64(&mut self, a: W64, b: W64) -> W64 {
        let (a, b) = if matches!(a.0.kind, SrcKind::Imm(_)) { (b, a) } else { (a, b) };
        let (lo, h) = self.wide32(a.0, b.0, false);
        let t = self.mul_lo(a.0, b.1, h);
        let hi = self.mul_lo(a.1, b.0, t);
        (lo, hi)
    }

    /// `hi64(a * b)`, unsigned: the four 32x32 products summed as ptxas does.
    pub(in crate::lower) fn umulhi64(&mut self, (al, ah): W64, (bl, bh): W64) -> W64 {
        let p00h = self.umulhi(al, bl, Src::rz(), None);
        let (p01l, p01h) = self.wide32(al, bh, false);
        let (p10l, p10h) = self.wide32(ah, bl, false);
        let (p11l, p11h) = self.wide32(ah, bh, false);
        let cc = |x| Op::Iadd { cc: true, x };
        let t = self.emit1(cc(false), vec![p00h, p01l]);
        let u = self.emit1(Op::Iadd { cc: false, x: true }, vec![Src::rz(), p01h]);
        let v = self.emit1(cc(false), vec![p10h, p11l]);
        let w = self.emit1(Op::Iadd { cc: false, x: true }, vec![Src::rz(), p11h]);
        self.op(cc(false), Dst::reg(crate::sass::instr::RZ, 1), vec![p10l, t]);
        let lo = self.emit1(cc(true), vec![u, v]);
        let hi = self.emit1(Op::Iadd { cc: false, x: true }, vec![Src::rz(), w]);
        (lo, hi)
    }

    /// `hi64(a * b)`, signed: the unsigned high word minus `b` if `a < 0` and minus `a` if
    /// `b < 0` (two's complement: `a = a_u - 2^64 [a < 0]`).
    pub(in crate::lower) fn smulhi64(&mut self, a: W64, b: W64) -> W64 {
        let (a, b) = ((self.in_reg(a.0), self.in_reg(a.1)), (self.in_reg(b.0), self.in_reg(b.1)));
        let h = self.umulhi64(a, b);
        let sa = self.emit1(Op::Shr { u32: false }, vec![a.1, Src::imm(31)]);
        let sb = self.emit1(Op::Shr { u32: false }, vec![b.1, Src::imm(31)]);
        let and = |me: &mut Self, x: Src, m: Src| me.emit1(Op::Lop(LogicOp::And), vec![x, m]);
        let ca = (and(self, b.0, sa), and(self, b.1, sa));
        let cb = (and(self, a.0, sb), and(self, a.1, sb));
        let h = self.sub64(h, ca);
        self.sub64(h, cb)
    }

    /// `mul mad madc mul24 mad24` of every width and mode.
    pub(in crate::lower) fn lower_mul(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let signed = ty.is_signed();
        let bits = ty.bits();
        let mode = a.mode.unwrap_or(IntMode::Lo);
        let has_c = matches!(a.op, ArithOp::Mad | ArithOp::Madc | ArithOp::Mad24);
        let carry = a.cc || a.op == ArithOp::Madc;
        match a.op {
            ArithOp::Mul24 | ArithOp::Mad24 => {
                if bits != 32 {
                    return self.unsupported(i, "`mul24`/`mad24` are defined for `.u32`/`.s32` (PTX ISA 9.7.1.12)");
                }
                if a.sat || a.mode.is_none() || mode == IntMode::Wide {
                    return self.unsupported(i, "`mul24`/`mad24` need `.lo` or `.hi`; `.sat` is not supported");
                }
                return self.mul24(i, a, d, mode == IntMode::Hi);
            }
            ArithOp::Madc if a.mode.is_none() || mode == IntMode::Wide => {
                return self.unsupported(i, "`madc` needs `.lo` or `.hi` (PTX ISA 9.7.2.6)");
            }
            _ => {}
        }
        if carry && bits == 16 {
            return self.unsupported(i, "carry arithmetic is defined for 32- and 64-bit types (PTX ISA 9.7.2)");
        }
        if a.sat && !(a.op == ArithOp::Mad && mode == IntMode::Hi && ty == ScalarType::S32) {
            return self.unsupported(i, "`.sat` applies to `mad.hi.s32` only (PTX ISA 9.7.1.4)");
        }
        if mode == IntMode::Wide && bits == 64 {
            return self.unsupported(i, "`.wide` is defined for 16- and 32-bit types");
        }
        if mode == IntMode::Wide && carry {
            return self.unsupported(i, "carry forms take `.lo` or `.hi`");
        }
        let x = self.val_of(i, 1, ty)?;
        let y = self.val_of(i, 2, ty)?;
        // A constant multiplier goes second (`imul32` and `wide32` use its value).
        let (x, y) = if matches!(x.lo.kind, SrcKind::Imm(_)) { (y, x) } else { (x, y) };
        // The addend: folded into the multiply unless a carry or saturation is involved.
        let wide_c = mode == IntMode::Wide && has_c;
        let cw = if has_c {
            let cty = if wide_c { if bits == 16 { ScalarType::B32 } else { ScalarType::B64 } } else { ty };
            Some(self.val_of(i, 3, cty)?)
        } else {
            None
        };
        let fold_c = !carry && !a.sat;
        match bits {
            16 => {
                let xr = self.in_reg(x.lo);
                let yb = match y.lo.kind {
                    SrcKind::Imm(v) => Src::imm(v & 0xffff),
                    _ => y.lo,
                };
                let c = cw.map_or(Src::rz(), |c| c.lo);
                let c = self.in_reg(c);
                let m = |s: bool| xm(XmadC::C, s, s);
                let out = match mode {
                    IntMode::Lo => self.emit1(m(false), vec![xr, yb, c]),
                    IntMode::Wide => self.emit1(m(signed), vec![xr, yb, c]),
                    IntMode::Hi => {
                        let yr = self.in_reg(yb);
                        let t = self.emit1(m(signed), vec![xr, yr, Src::rz()]);
                        self.emit1(Op::Iadd3(Iadd3Mode::Rs), vec![t, Src::rz(), c])
                    }
                };
                self.set32(d.reg, out);
            }
            32 => {
                let c = cw.map(|c| (c.lo, c.hi.unwrap_or(Src::rz())));
                let c32 = if fold_c && !wide_c { c.map_or(Src::rz(), |c| c.0) } else { Src::rz() };
                if mode == IntMode::Lo && fold_c {
                    self.imul32(d.reg, x.lo, y.lo, c32);
                    return Ok(());
                }
                let prod: W64 = match mode {
                    IntMode::Lo => (self.mul_lo(x.lo, y.lo, c32), Src::rz()),
                    IntMode::Hi => (self.mulhi(x.lo, y.lo, c32, signed), Src::rz()),
                    IntMode::Wide => self.wide32(x.lo, y.lo, signed),
                };
                if wide_c {
                    let Some(c) = c else {
                        return self.error(i.span, "internal error: `mad` without its addend");
                    };
                    let c = (self.in_reg(c.0), self.in_reg(c.1));
                    let out = self.add64(prod, c);
                    self.set64(d.reg, out);
                } else if mode == IntMode::Wide {
                    self.set64(d.reg, prod);
                } else if a.sat {
                    let Some(c) = c else {
                        return self.error(i.span, "internal error: `mad.sat` without its addend");
                    };
                    let c = self.b_slot(c.0, false);
                    self.op(Op::IaddSat, Dst::reg(d.reg, 1), vec![prod.0, c]);
                } else if carry {
                    let c = c.map_or(Src::rz(), |c| c.0);
                    self.carry_mad(d, &[prod.0], &[c], a);
                } else {
                    self.set32(d.reg, prod.0);
                }
            }
            _ => {
                let xw = (self.in_reg(x.lo), self.in_reg(x.hi.unwrap_or(Src::rz())));
                let yw = (y.lo, y.hi.unwrap_or(Src::rz()));
                let prod = match mode {
                    IntMode::Hi => {
                        let yw = (self.in_reg(yw.0), self.in_reg(yw.1));
                        if signed { self.smulhi64(xw, yw) } else { self.umulhi64(xw, yw) }
                    }
                    _ => self.mul_lo64(xw, yw),
                };
                match cw {
                    Some(c) if carry => {
                        let c = (c.lo, c.hi.unwrap_or(Src::rz()));
                        self.carry_mad(d, &[prod.0, prod.1], &[c.0, c.1], a);
                    }
                    Some(c) => {
                        let c = (self.in_reg(c.lo), self.in_reg(c.hi.unwrap_or(Src::rz())));
                        let out = self.add64(prod, c);
                        self.set64(d.reg, out);
                    }
                    None => self.set64(d.reg, prod),
                }
            }
        }
        Ok(())
    }

    /// `d = t + c (+ CC.CF for madc)`, per word, setting PTX's carry with `.cc`.
    fn carry_mad(&mut self, d: PtxReg, t: &[Src], c: &[Src], a: &Arith) {
        let cin = a.op == ArithOp::Madc;
        if cin {
            self.carry_in();
        }
        let n = t.len();
        let mut out = vec![];
        for (k, (&tk, &ck)) in t.iter().zip(c).enumerate() {
            let cc = k.saturating_add(1) < n || a.cc;
            let x = k > 0 || cin;
            let tk = self.in_reg(tk);
            let ck = self.in_reg(ck);
            out.push(self.emit1(Op::Iadd { cc, x }, vec![tk, ck]));
        }
        self.finish_chain(d.reg, a.cc, &out);
    }

    /// `mul24.lo/.hi` and `mad24.lo/.hi` (`.u32`/`.s32`).
    fn mul24(&mut self, i: &Instruction, a: &Arith, d: PtxReg, hi: bool) -> LResult<()> {
        let signed = a.ty.is_signed();
        let mut ops = [Src::rz(); 2];
        for (k, o) in ops.iter_mut().enumerate() {
            let v = self.val_of(i, k.saturating_add(1), a.ty)?;
            *o = match v.lo.kind {
                SrcKind::Imm(x) => {
                    let x = x & 0xff_ffff;
                    Src::imm(if signed && x & 0x80_0000 != 0 { x | 0xff00_0000 } else { x })
                }
                _ => {
                    let r = self.in_reg(v.lo);
                    self.emit1(Op::Bfe { u32: !signed, brev: false }, vec![r, Src::imm(0x1800)])
                }
            };
        }
        let (x, y) = if matches!(ops[0].kind, SrcKind::Imm(_)) { (ops[1], ops[0]) } else { (ops[0], ops[1]) };
        let c = if a.op == ArithOp::Mad24 { self.val_of(i, 3, a.ty)?.lo } else { Src::rz() };
        if !hi {
            self.imul32(d.reg, x, y, c);
            return Ok(());
        }
        let (lo, h) = self.wide32(x, y, signed);
        let (lo, h) = (self.in_reg(lo), self.in_reg(h));
        let mid =
            self.emit1(Op::Shf { left: false, signed: false, wide: false, wrap: false }, vec![lo, Src::imm(16), h]);
        if a.op == ArithOp::Mad24 {
            let c = self.b_slot(c, false);
            self.op(Op::Iadd { cc: false, x: false }, Dst::reg(d.reg, 1), vec![mid, c]);
        } else {
            self.set32(d.reg, mid);
        }
        Ok(())
    }
}
