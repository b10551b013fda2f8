//! Lowering of PTX integer arithmetic, logic and shifts (PTX ISA 9.7.1 "Integer
//! Arithmetic", 9.7.2 "Extended-Precision Integer Arithmetic", 9.7.7 "Logic and Shift")
//! for 16-, 32- and 64-bit types; multiplications are in [`crate::lower::arith::mul`], division in
//! [`crate::lower::arith::div`], bit manipulation in [`crate::lower::arith::bits`].
//!
//! Sequences follow ptxas 11.8 for sm_50 (observed on one-instruction kernels):
//! * 64-bit `add`/`sub`: `IADD.CC` + `IADD.X`; `neg.s64`: `IADD.CC lo, RZ, -a.lo;
//!   IADD.X hi, RZ, -a.hi`; `not`: `LOP.PASS_B d, RZ, ~a`.
//! * 64-bit shifts by a register: `shl.b64` is `SHF.L.U64 hi, lo, s, hi; SHL lo, lo, s`,
//!   `shr.u64` is `SHF.R.U64 lo, lo, s, hi; SHR.U32 hi, hi, s`, `shr.s64` the same with
//!   `SHF.R.S64` and `SHR`; SHF/SHL/SHR clamp the amount, as PTX's clamping to the width
//!   requires.
//! * `add.sat.s32` is `IADD.SAT a, b`, `sub.sat.s32` is `IADD.SAT a, -b`.
//! * Carries: `add.cc` is `IADD d.CC, a, b`; `sub.cc` is `IADD d.CC, a, -b`; `addc` is
//!   `IADD.X d, a, b`; `subc` is `IADD.X d, a, ~b` (ptxas writes `~b` with a `LOP.PASS_B`
//!   first); 64-bit forms chain `.X.CC`. ptxas keeps PTX's `CC.CF` in the hardware flag,
//!   which after a subtraction is the adder's carry (not the borrow; see
//!   [`crate::exec::ptx::arith::int::add_sub`]). Lowering does the same, and also copies the
//!   flag into an IR variable after every carry-out (`IADD.X cf, RZ, RZ`) so that a
//!   carry-in separated from its producer by another CC writer (a 64-bit add or compare)
//!   or by a block boundary restores it first (`IADD32I RZ.CC, cf, -1`); copies nobody
//!   reads are removed as dead code. In the IR the flag is a value ([`crate::ir::cc`]):
//!   a carry-out whose sum is unused stays while its carry is read (its sum goes to
//!   `RZ`), as ptxas's `IADD RZ.CC` does.
//! * `min/max.64` compare as `setp` does (`IADD RZ.CC, a.lo, -b.lo; ISETP.X`) and select
//!   each word (`SEL`); `abs.s64` selects between `a` and its negation the same way.
//! * `sad` is `|a - b| + c` as `max(a, b) - min(a, b) + c` (`IMNMX`, `IMNMX`, `IADD3`;
//!   ptxas uses the video instruction `VABSDIFF.ACC`, whose other modes are not modelled).
//!
//! 16-bit values live in 32-bit registers whose upper half is undefined: operations whose
//! low 16 result bits depend only on the low 16 operand bits (add, sub, logic, shl, neg,
//! mul.lo) use them as they are; the others extend first ([`Lowerer::int_ext`]).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::alu::Val;
use crate::lower::ctx::{LResult, Lowerer, PtxReg};
use crate::ptx::ast::Instruction;
use crate::ptx::check::instr_text;
use crate::ptx::instr::{Arith, ArithOp};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, PT, RZ, Reg, Src, SrcKind};
use crate::sass::op::*;

/// A 64-bit value as its (low, high) 32-bit words.
pub type W64 = (Src, Src);

/// The LOP operation of PTX `and`/`or`/`xor`.
fn logic_op(op: ArithOp) -> LogicOp {
    match op {
        ArithOp::And => LogicOp::And,
        ArithOp::Or => LogicOp::Or,
        _ => LogicOp::Xor,
    }
}

/// The words of a resolved operand (a missing high word reads as zero).
pub fn words(v: &Val) -> W64 {
    (v.lo, v.hi.unwrap_or(Src::rz()))
}

impl Lowerer<'_> {
    /// Emits `op` into a fresh 32-bit register and returns it as a source.
    pub(in crate::lower) fn emit1(&mut self, op: Op, srcs: Vec<Src>) -> Src {
        let t = self.tmp(1);
        self.op(op, Dst::reg(t, 1), srcs);
        Src::r32(t)
    }

    /// Writes `(lo, hi)` to the 64-bit register `d`.
    pub(in crate::lower) fn set64(&mut self, d: Reg, (lo, hi): W64) {
        let lo = self.in_reg(lo);
        let hi = self.in_reg(hi);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(d, 2)], vec![lo, hi]));
    }

    /// Writes the 32-bit `v` to `d`.
    pub(in crate::lower) fn set32(&mut self, d: Reg, v: Src) {
        let v = self.in_reg(v);
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(d, 1)], vec![v]));
    }

    /// Ends a word-by-word carry chain: records PTX's carry-out when the instruction has
    /// `.cc` (`cc`), then writes `words` (1 or 2 words, low first) to `d`.
    pub(in crate::lower) fn finish_chain(&mut self, d: Reg, cc: bool, words: &[Src]) {
        if cc {
            self.carry_out();
        }
        match *words {
            [lo, hi] => self.set64(d, (lo, hi)),
            [v] => self.set32(d, v),
            _ => unreachable!("a carry chain is 1 or 2 words"),
        }
    }

    /// The 64-bit operand `k` of `i` as two words in registers.
    pub(in crate::lower) fn w64(&mut self, i: &Instruction, k: usize, ty: ScalarType) -> LResult<W64> {
        let v = self.val_of(i, k, ty)?;
        let (lo, hi) = words(&v);
        Ok((self.in_reg(lo), self.in_reg(hi)))
    }

    /// The 32-bit operand `k` of `i` in a register, extended if 16-bit and `ext`.
    pub(in crate::lower) fn r32(&mut self, i: &Instruction, k: usize, ty: ScalarType, ext: bool) -> LResult<Src> {
        let v = self.val_of(i, k, ty)?;
        let s = if ext { self.int_ext(v.lo, ty) } else { v.lo };
        Ok(self.in_reg(s))
    }

    /// `a + b` (64-bit): `IADD.CC` + `IADD.X`.
    pub(in crate::lower) fn add64(&mut self, (al, ah): W64, (bl, bh): W64) -> W64 {
        let al = self.in_reg(al);
        let ah = self.in_reg(ah);
        let lo = self.emit1(Op::Iadd { cc: true, x: false }, vec![al, bl]);
        let hi = self.emit1(Op::Iadd { cc: false, x: true }, vec![ah, bh]);
        (lo, hi)
    }

    /// `a - b` (64-bit): `IADD.CC lo, a.lo, -b.lo; IADD.X hi, a.hi, -b.hi` (ptxas).
    pub(in crate::lower) fn sub64(&mut self, (al, ah): W64, (bl, bh): W64) -> W64 {
        let (al, ah) = (self.in_reg(al), self.in_reg(ah));
        let (bl, bh) = (self.in_reg(bl), self.in_reg(bh));
        let lo = self.emit1(Op::Iadd { cc: true, x: false }, vec![al, bl.negated()]);
        let hi = self.emit1(Op::Iadd { cc: false, x: true }, vec![ah, bh.negated()]);
        (lo, hi)
    }

    /// A predicate set when `a cmp b` holds for 64-bit `a`, `b` (as `setp.cmp.u64/.s64`).
    pub(in crate::lower) fn cmp64(&mut self, cmp: Cmp, unsigned: bool, (al, ah): W64, (bl, bh): W64) -> Reg {
        let (al, ah) = (self.in_reg(al), self.in_reg(ah));
        let (bl, bh) = (self.in_reg(bl), self.in_reg(bh));
        self.op(Op::Iadd { cc: true, x: false }, Dst::reg(RZ, 1), vec![al, bl.negated()]);
        self.isetp(Op::Isetp { cmp, u32: unsigned, x: true, bop: BoolOp::And }, ah, bh, Src::pt())
    }

    /// Emits the comparison `op` of `a` and `b` combined with `c`; returns its predicate.
    pub(in crate::lower) fn isetp(&mut self, op: Op, a: Src, b: Src, c: Src) -> Reg {
        let p = self.tmp_pred();
        let a = self.in_reg(a);
        let b = self.b_slot(b, false);
        self.emit(Instr::new(op, vec![Dst::Pred(p), Dst::Pred(PT)], vec![a, b, c]));
        p
    }

    /// `p ? a : b` per word.
    pub(in crate::lower) fn sel(&mut self, p: Src, a: Src, b: Src) -> Src {
        let a = self.in_reg(a);
        let b = self.b_slot(b, false);
        self.emit1(Op::Sel, vec![a, b, p])
    }

    /// Lowers integer and logic arithmetic (PTX ISA 9.7.1, 9.7.2, 9.7.7) and dispatches
    /// float and predicate forms; anything not lowered is an error naming the instruction.
    pub fn lower_arith(&mut self, i: &Instruction, a: &Arith) -> LResult<()> {
        let ty = a.ty;
        let d = self.dst_of(i, 0)?;
        if ty == ScalarType::Pred {
            return self.pred_logic(i, a, d);
        }
        if ty.is_float() {
            return self.float_arith(i, a, d);
        }
        if !ty.is_integer() || !matches!(ty.bits(), 16 | 32 | 64) {
            return self.unsupported(i, &format!("integer arithmetic on `{ty}` is not defined by PTX"));
        }
        let carry_op = a.cc || a.op.carry_in();
        match a.op {
            ArithOp::Mul | ArithOp::Mad | ArithOp::Madc | ArithOp::Mul24 | ArithOp::Mad24 => self.lower_mul(i, a, d),
            ArithOp::Div | ArithOp::Rem => self.lower_divrem(i, a, d),
            ArithOp::Add | ArithOp::Sub | ArithOp::Addc | ArithOp::Subc if carry_op => self.carry_add(i, a, d),
            ArithOp::Add | ArithOp::Sub if a.sat => self.add_sat(i, a, d),
            _ if a.sat || a.cc => self.unsupported(i, "`.sat` and `.cc` apply to other instructions"),
            ArithOp::Sad => self.sad(i, a, d),
            _ if ty.bits() == 64 => self.arith64(i, a, d),
            _ => self.arith32(i, a, d),
        }
    }

    /// An error for an instruction form that is not lowered, naming it.
    pub(in crate::lower) fn unsupported<T>(&mut self, i: &Instruction, why: &str) -> LResult<T> {
        let what = instr_text(i);
        let d = crate::diag::Diag::error(i.opcode.span, format!("`{what}` is not supported by ptx2sass"))
            .label("no lowering to SPA 5.0 for this form")
            .note(why.to_string());
        self.fail(d)
    }

    /// 16- and 32-bit `add sub min max neg abs not cnot and or xor shl shr`.
    fn arith32(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let x = self.val_of(i, 1, ty)?;
        let xr = self.in_reg(x.lo);
        let dst = Dst::reg(d.reg, 1);
        match a.op {
            ArithOp::Add | ArithOp::Sub => {
                let y = self.val_of(i, 2, ty)?;
                let neg = a.op == ArithOp::Sub;
                match y.lo.kind {
                    SrcKind::Imm(v) => {
                        let v = if neg { v.wrapping_neg() } else { v };
                        self.op(Op::Iadd32i { cc: false, x: false }, dst, vec![xr, Src::imm(v)]);
                    }
                    _ => {
                        let yy = if neg { y.lo.negated() } else { y.lo };
                        self.op(Op::Iadd { cc: false, x: false }, dst, vec![xr, yy]);
                    }
                }
            }
            ArithOp::Min | ArithOp::Max => {
                let y = self.val_of(i, 2, ty)?;
                let xe = self.int_ext(xr, ty);
                let ye = self.int_ext(y.lo, ty);
                let xe = self.in_reg(xe);
                let ye = self.b_slot(ye, false);
                let sel = Src::pred(PT, a.op == ArithOp::Max);
                self.op(Op::Imnmx { u32: !ty.is_signed() }, dst, vec![xe, ye, sel]);
            }
            ArithOp::Neg => self.op(Op::Iadd { cc: false, x: false }, dst, vec![xr.negated(), Src::rz()]),
            ArithOp::Abs => {
                // |x| = max(x, -x) (signed; INT_MIN stays INT_MIN as PTX wants).
                let xe = self.int_ext(xr, ty);
                let xe = self.in_reg(xe);
                let n = self.emit1(Op::Iadd { cc: false, x: false }, vec![xe.negated(), Src::rz()]);
                self.op(Op::Imnmx { u32: false }, dst, vec![xe, n, Src::pred(PT, true)]);
            }
            ArithOp::Not => self.op(Op::Lop(LogicOp::PassB), dst, vec![Src::rz(), xr.inv()]),
            ArithOp::Cnot => {
                // All bits of the operand's type count (a 16-bit value zero-extended).
                let xe = if ty.bits() == 16 { self.int_ext(xr, ScalarType::U16) } else { xr };
                let p = self.isetp(
                    Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And },
                    xe,
                    Src::rz(),
                    Src::pt(),
                );
                self.op(Op::Sel, dst, vec![Src::rz(), Src::imm(1), Src::pred(p, true)]);
            }
            ArithOp::And | ArithOp::Or | ArithOp::Xor => {
                let lop = logic_op(a.op);
                let y = self.val_of(i, 2, ty)?;
                match y.lo.kind {
                    SrcKind::Imm(v) => self.op(Op::Lop32i(lop), dst, vec![xr, Src::imm(v)]),
                    _ => self.op(Op::Lop(lop), dst, vec![xr, y.lo]),
                }
            }
            ArithOp::Shl => {
                let y = self.val_of(i, 2, ScalarType::U32)?;
                let y = self.b_slot(y.lo, false);
                self.op(Op::Shl, dst, vec![xr, y]);
            }
            ArithOp::Shr => {
                let y = self.val_of(i, 2, ScalarType::U32)?;
                let y = self.b_slot(y.lo, false);
                let xe = self.int_ext(xr, ty);
                let xe = self.in_reg(xe);
                self.op(Op::Shr { u32: !ty.is_signed() }, dst, vec![xe, y]);
            }
            _ => return self.unsupported(i, "not an integer operation"),
        }
        Ok(())
    }

    /// 64-bit `add sub and or xor not neg abs cnot min max shl shr`.
    fn arith64(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let x = self.w64(i, 1, ty)?;
        let (xlo, xhi) = x;
        let out: W64 = match a.op {
            ArithOp::Add | ArithOp::Sub => {
                let y = self.val_of(i, 2, ty)?;
                let neg = a.op == ArithOp::Sub;
                let (ylo, yhi) = words(&y);
                match (ylo.kind, yhi.kind) {
                    (SrcKind::Imm(l), SrcKind::Imm(h)) => {
                        let v = ((h as u64) << 32 | l as u64) as i64;
                        let v = if neg { v.wrapping_neg() } else { v };
                        let lo = self.emit1(Op::Iadd32i { cc: true, x: false }, vec![xlo, Src::imm(v as u32)]);
                        let h = (v >> 32) as u32;
                        let hi = if h == 0 {
                            self.emit1(Op::Iadd { cc: false, x: true }, vec![xhi, Src::rz()])
                        } else {
                            self.emit1(Op::Iadd32i { cc: false, x: true }, vec![xhi, Src::imm(h)])
                        };
                        (lo, hi)
                    }
                    _ if neg => self.sub64(x, (ylo, yhi)),
                    _ => {
                        let yhi = self.in_reg(yhi);
                        self.add64(x, (ylo, yhi))
                    }
                }
            }
            ArithOp::And | ArithOp::Or | ArithOp::Xor => {
                let lop = logic_op(a.op);
                let y = self.val_of(i, 2, ty)?;
                let (ylo, yhi) = words(&y);
                let word = |me: &mut Self, xs: Src, ys: Src| match ys.kind {
                    SrcKind::Imm(v) => me.emit1(Op::Lop32i(lop), vec![xs, Src::imm(v)]),
                    _ => me.emit1(Op::Lop(lop), vec![xs, ys]),
                };
                let lo = word(self, xlo, ylo);
                (lo, word(self, xhi, yhi))
            }
            ArithOp::Not => {
                let lo = self.emit1(Op::Lop(LogicOp::PassB), vec![Src::rz(), xlo.inv()]);
                let hi = self.emit1(Op::Lop(LogicOp::PassB), vec![Src::rz(), xhi.inv()]);
                (lo, hi)
            }
            ArithOp::Neg => self.sub64((Src::rz(), Src::rz()), x),
            ArithOp::Abs => {
                let n = self.sub64((Src::rz(), Src::rz()), x);
                let p = self.isetp(
                    Op::Isetp { cmp: Cmp::Lt, u32: false, x: false, bop: BoolOp::And },
                    xhi,
                    Src::rz(),
                    Src::pt(),
                );
                let lo = self.sel(Src::pred(p, false), n.0, xlo);
                let hi = self.sel(Src::pred(p, false), n.1, xhi);
                (lo, hi)
            }
            ArithOp::Cnot => {
                let o = self.emit1(Op::Lop(LogicOp::Or), vec![xlo, xhi]);
                let p = self.isetp(
                    Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And },
                    o,
                    Src::rz(),
                    Src::pt(),
                );
                let lo = self.emit1(Op::Sel, vec![Src::rz(), Src::imm(1), Src::pred(p, true)]);
                (lo, Src::rz())
            }
            ArithOp::Min | ArithOp::Max => {
                let y = self.w64(i, 2, ty)?;
                let p = self.cmp64(Cmp::Lt, !ty.is_signed(), x, y);
                // min: x < y ? x : y; max: x < y ? y : x.
                let (a1, b1) = if a.op == ArithOp::Min { (x, y) } else { (y, x) };
                let lo = self.sel(Src::pred(p, false), a1.0, b1.0);
                let hi = self.sel(Src::pred(p, false), a1.1, b1.1);
                (lo, hi)
            }
            ArithOp::Shl | ArithOp::Shr => {
                let s = self.val_of(i, 2, ScalarType::U32)?;
                self.shift64(a.op == ArithOp::Shl, ty.is_signed(), x, s.lo)
            }
            _ => return self.unsupported(i, "not an integer operation"),
        };
        self.set64(d.reg, out);
        Ok(())
    }

    /// 64-bit shifts (PTX clamps the amount to 64). Register amounts as ptxas: `SHF.L.U64
    /// hi, lo, s, hi; SHL lo, lo, s` (right: `SHF.R.{U,S}64 lo, lo, s, hi; SHR hi, hi, s`);
    /// immediate amounts pick the words statically.
    pub(in crate::lower) fn shift64(&mut self, left: bool, signed: bool, (xlo, xhi): W64, s: Src) -> W64 {
        let signed = signed && !left;
        let shf = Op::Shf { left, signed, wide: true, wrap: false };
        let SrcKind::Imm(s) = s.kind else {
            let s = self.in_reg(s);
            return if left {
                let hi = self.emit1(shf, vec![xlo, s, xhi]);
                let lo = self.emit1(Op::Shl, vec![xlo, s]);
                (lo, hi)
            } else {
                let lo = self.emit1(shf, vec![xlo, s, xhi]);
                let hi = self.emit1(Op::Shr { u32: !signed }, vec![xhi, s]);
                (lo, hi)
            };
        };
        let s = s.min(64);
        if s == 0 {
            return (xlo, xhi);
        }
        let sign = |me: &mut Self| me.emit1(Op::Shr { u32: false }, vec![xhi, Src::imm(31)]);
        match (left, s < 32) {
            (true, true) => {
                let hi = self.emit1(shf, vec![xlo, Src::imm(s), xhi]);
                let lo = self.emit1(Op::Shl, vec![xlo, Src::imm(s)]);
                (lo, hi)
            }
            // `s` is 32..=64 in the arms below: `s - 32` does not wrap.
            (true, false) => (Src::rz(), self.emit1(Op::Shl, vec![xlo, Src::imm(s.wrapping_sub(32))])),
            (false, true) => {
                let lo = self.emit1(shf, vec![xlo, Src::imm(s), xhi]);
                let hi = self.emit1(Op::Shr { u32: !signed }, vec![xhi, Src::imm(s)]);
                (lo, hi)
            }
            (false, false) if signed => {
                let lo = self.emit1(Op::Shr { u32: false }, vec![xhi, Src::imm(s.wrapping_sub(32).min(31))]);
                (lo, sign(self))
            }
            (false, false) if s == 64 => (Src::rz(), Src::rz()),
            (false, false) => (self.emit1(Op::Shr { u32: true }, vec![xhi, Src::imm(s.wrapping_sub(32))]), Src::rz()),
        }
    }

    /// `add.sat.s32` / `sub.sat.s32` (PTX ISA 9.7.1.1-2): `IADD.SAT a, {-}b` (ptxas).
    fn add_sat(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        if a.ty != ScalarType::S32 {
            return self.unsupported(i, "`.sat` applies to `.s32` only (PTX ISA 9.7.1.1)");
        }
        let x = self.r32(i, 1, a.ty, false)?;
        let y = self.val_of(i, 2, a.ty)?;
        let y = if a.op == ArithOp::Sub { self.in_reg(y.lo).negated() } else { self.b_slot(y.lo, false) };
        self.op(Op::IaddSat, Dst::reg(d.reg, 1), vec![x, y]);
        Ok(())
    }

    /// `sad.type d, a, b, c` (PTX ISA 9.7.1.9): `c + |a - b|` as `max - min + c`.
    fn sad(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        if ty.bits() == 64 {
            let x = self.w64(i, 1, ty)?;
            let y = self.w64(i, 2, ty)?;
            let c = self.w64(i, 3, ty)?;
            let p = self.cmp64(Cmp::Lt, !ty.is_signed(), x, y);
            let pl = Src::pred(p, false);
            let (hl, hh) = (self.sel(pl, y.0, x.0), self.sel(pl, y.1, x.1));
            let (ll, lh) = (self.sel(pl, x.0, y.0), self.sel(pl, x.1, y.1));
            let diff = self.sub64((hl, hh), (ll, lh));
            let out = self.add64(diff, c);
            self.set64(d.reg, out);
            return Ok(());
        }
        let x = self.r32(i, 1, ty, true)?;
        let y = self.r32(i, 2, ty, true)?;
        let c = self.r32(i, 3, ty, false)?;
        let u = !ty.is_signed();
        let hi = self.emit1(Op::Imnmx { u32: u }, vec![x, y, Src::pred(PT, true)]);
        let lo = self.emit1(Op::Imnmx { u32: u }, vec![x, y, Src::pred(PT, false)]);
        self.op(Op::Iadd3(Iadd3Mode::Plain), Dst::reg(d.reg, 1), vec![hi, lo.negated(), c]);
        Ok(())
    }

    // ---- carries ------------------------------------------------------------------------

    /// The IR variable holding PTX's `CC.CF` (0 or 1).
    fn carry_var(&mut self) -> Reg {
        if let Some(v) = self.carry_var {
            return v;
        }
        let v = self.tmp(1);
        self.carry_var = Some(v);
        v
    }

    /// Call right after emitting the instruction that writes PTX's carry: records where,
    /// and copies the flag into the carry variable.
    pub(in crate::lower) fn carry_out(&mut self) {
        let at = self.cc_now.filter(|(b, _)| *b == self.cur).map(|(_, v)| v);
        debug_assert!(at.is_some(), "carry_out follows the carry-out instruction");
        let v = self.carry_var();
        self.op(Op::Iadd { cc: false, x: true }, Dst::reg(v, 1), vec![Src::rz(), Src::rz()]);
        self.carry_at = at;
    }

    /// Call right before emitting an instruction that reads PTX's carry: unless the flag
    /// still holds the value of the last carry-out (same block, no CC writer since),
    /// restores CC.CF from the variable.
    pub(in crate::lower) fn carry_in(&mut self) {
        let now = self.cc_now.filter(|(b, _)| *b == self.cur).map(|(_, v)| v);
        if now.is_some() && now == self.carry_at {
            return;
        }
        let v = self.carry_var();
        self.op(Op::Iadd32i { cc: true, x: false }, Dst::reg(RZ, 1), vec![Src::r32(v), Src::imm(u32::MAX)]);
    }

    /// `add.cc sub.cc addc{.cc} subc{.cc}` for 32 and 64 bits.
    fn carry_add(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        if ty.bits() == 16 {
            return self.unsupported(i, "carry arithmetic is defined for 32- and 64-bit types (PTX ISA 9.7.2)");
        }
        let sub = matches!(a.op, ArithOp::Sub | ArithOp::Subc);
        let cin = a.op.carry_in();
        let x = self.val_of(i, 1, ty)?;
        let y = self.val_of(i, 2, ty)?;
        let n = if ty.bits() == 64 { 2 } else { 1 };
        let xs = words(&x);
        let ys = words(&y);
        if cin {
            self.carry_in();
        }
        let mut out = vec![];
        for (k, &(xw, yw)) in [(xs.0, ys.0), (xs.1, ys.1)].iter().take(n).enumerate() {
            let xw = self.in_reg(xw);
            let first = k == 0 && !cin;
            let last = k.saturating_add(1) == n;
            let cc = !last || a.cc;
            let (op, y) = match (first, sub, yw.kind) {
                // a + b / a + b + CF.
                (true, false, SrcKind::Imm(v)) => (Op::Iadd32i { cc, x: false }, Src::imm(v)),
                (false, false, SrcKind::Imm(v)) => (Op::Iadd32i { cc, x: true }, Src::imm(v)),
                (first, false, _) => (Op::Iadd { cc, x: !first }, yw),
                // a - b = a + ~b + 1 (carry = no borrow); `-0` needs the register form.
                (true, true, SrcKind::Imm(v)) if v != 0 => (Op::Iadd32i { cc, x: false }, Src::imm(v.wrapping_neg())),
                (true, true, _) => {
                    let r = self.in_reg(yw);
                    (Op::Iadd { cc, x: false }, r.negated())
                }
                // a + ~b + CF.
                (false, true, SrcKind::Imm(v)) => (Op::Iadd32i { cc, x: true }, Src::imm(!v)),
                (false, true, _) => {
                    let r = self.in_reg(yw);
                    let nb = self.emit1(Op::Lop(LogicOp::PassB), vec![Src::rz(), r.inv()]);
                    (Op::Iadd { cc, x: true }, nb)
                }
            };
            out.push(self.emit1(op, vec![xw, y]));
        }
        self.finish_chain(d.reg, a.cc, &out);
        Ok(())
    }
}
