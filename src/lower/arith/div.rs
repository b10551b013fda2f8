//! Lowering of integer `div` and `rem` (PTX ISA 9.7.1.6, 9.7.1.7). SPA 5.0 has no integer
//! divider; ptxas 11.8 computes a reciprocal estimate in floating point and refines it with
//! integer multiplications. We use the same scheme, inline:
//!
//! **Unsigned 32-bit** (`a / b`):
//! 1. `f = I2F.F32.U32.RP b` (rounded up, so `1/f <= 1/b`), `r = MUFU.RCP f`;
//! 2. `y0 = F2I.FTZ.U32.F32.TRUNC (r + (0x0ffffffc as bits))`: adding `31 << 23` to the
//!    exponent and `0x7ffffc` to the mantissa multiplies by `2^32` and steps down 4 ulp,
//!    so `y0 < 2^32 / b` as long as MUFU.RCP errs by less than ~3.5 ulp. ptxas adds
//!    `0x0ffffffe` (2 ulp of margin), which is exact enough for the documented 1-ulp
//!    error of `rcp.approx`; we keep a larger margin so that the sequence is proven against
//!    the simulator's ±2 ulp model ([`crate::exec::sim`]). A larger margin only makes the
//!    first estimate slightly smaller; the refinement absorbs it.
//! 3. one Newton step on the residual `e = 2^32 - y0*b` (`-mul.lo`): `y1 = y0 +
//!    mulhi(y0, e)`, so `0 <= 2^32 - y1*b < b + e^2/2^32` (ptxas: `IADD e, -t, RZ` and the
//!    `mul.hi` sequence with `y0` as its addend);
//! 4. `q = mulhi(y1, a)`, `r = a - q*b`; `q` is at most 2 below the quotient, so two
//!    corrections follow. ptxas writes them as `ISETP.GE.U32` plus predicated `IADD`s; we
//!    avoid predicated definitions (SSA) and use the carry of `r - b` (which is "no
//!    borrow", `r >= b`): `IADD s.CC, r, -b; IADD.X q, q, RZ; IMNMX.U32 r, r, s` (the
//!    unsigned minimum of `r` and `r - b` is the corrected remainder), same length;
//! 5. `b == 0` gives all ones (`ISETP.EQ.U32` + `SEL ..., -0x1`), as ptxas's `@P LOP.PASS_B
//!    d, RZ, ~b` does for `div` and `rem`, signed or not.
//!
//! **Signed**: the unsigned algorithm on `|a|`, `|b|` (`max`/`min` tricks: `IMNMX.U32
//! |x|, x, -x` is the magnitude as an unsigned value, `INT_MIN` included), then the sign of
//! `a ^ b` (quotient) or of `a` (remainder) applied as `(v ^ m) - m` with `m = x >> 31`;
//! `INT_MIN / -1` wraps to `INT_MIN` as PTX specifies. ptxas uses `I2I.S32.S32 |x|` and
//! predicated negations.
//!
//! **16-bit**: the operands extended to 32 bits and the 32-bit algorithm.
//!
//! **64-bit** (ptxas calls `__cuda_sm20_div_u64`, ~200 instructions): the same scheme with
//! `I2F.F32.U64.RP`, `0x1ffffffc` (`2^64` scaling), `F2I.U64.F32.TRUNC`, two Newton steps
//! with 64-bit `mul.lo`/`mul.hi` ([`crate::lower::arith::mul`]), and two corrections with a 64-bit
//! compare (`IADD RZ.CC` + `ISETP.GE.U32.X`) and `SEL`s, inline. Error bound: with
//! `e0 < 2^45` after the estimate, each step maps `e` to less than `e^2/2^64 + b`, and
//! after two steps `2^64 - y*b < 2b`, so `q` is at most 2 below the quotient.
//!
//! The differential tests (`tests/exec_int.rs`) run every form on edge and random operands
//! under several simulator seeds, each a different MUFU.RCP error function.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::int::W64;
use crate::lower::ctx::{LResult, Lowerer, PtxReg};
use crate::ptx::ast::Instruction;
use crate::ptx::instr::{Arith, ArithOp};
use crate::sass::instr::{Dst, RZ, Src};
use crate::sass::op::*;

/// `r + 0x0ffffffc` as bits: `2^32 / f` minus 4 ulp.
pub const RCP_SCALE_32: u32 = 0x0fff_fffc;
/// `r + 0x1ffffffc` as bits: `2^64 / f` minus 4 ulp.
pub const RCP_SCALE_64: u32 = 0x1fff_fffc;

impl Lowerer<'_> {
    /// `div`/`rem` of 16-, 32- and 64-bit integers.
    pub(in crate::lower) fn lower_divrem(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let rem = a.op == ArithOp::Rem;
        let signed = ty.is_signed();
        if ty.bits() == 64 {
            let x = self.w64(i, 1, ty)?;
            let y = self.w64(i, 2, ty)?;
            let out = if signed { self.sdivrem64(x, y, rem) } else { self.udivrem64(x, y, rem) };
            self.set64(d.reg, out);
            return Ok(());
        }
        let x = self.r32(i, 1, ty, true)?;
        let y = self.r32(i, 2, ty, true)?;
        let out = if signed { self.sdivrem32(x, y, rem) } else { self.udivrem32(x, y, rem) };
        self.set32(d.reg, out);
        Ok(())
    }

    /// The quotient (or remainder) of unsigned 32-bit `a / b` without the `b == 0` case.
    fn udivrem32_core(&mut self, a: Src, b: Src, rem: bool) -> Src {
        let f = self.emit1(Op::I2f { dst: FType::F32, src: IType::U32, rnd: Rnd::Rp }, vec![b]);
        let r = self.emit1(Op::Mufu(MufuOp::Rcp), vec![f]);
        let r = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![r, Src::imm(RCP_SCALE_32)]);
        let y0 = self.emit1(Op::F2i { dst: IType::U32, src: FType::F32, rnd: IRnd::Trunc, ftz: true }, vec![r]);
        let t = self.mul_lo(y0, b, Src::rz());
        let e = self.emit1(Op::Iadd { cc: false, x: false }, vec![t.negated(), Src::rz()]);
        let y1 = self.umulhi(y0, e, y0, None);
        let q = self.umulhi(y1, a, Src::rz(), None);
        let nq = self.emit1(Op::Iadd { cc: false, x: false }, vec![q.negated(), Src::rz()]);
        let r = self.mul_lo(nq, b, a);
        // First correction: r >= b ? (q + 1, r - b) : (q, r).
        let s = self.emit1(Op::Iadd { cc: true, x: false }, vec![r, b.negated()]);
        let q1 = self.emit1(Op::Iadd { cc: false, x: true }, vec![q, Src::rz()]);
        let r1 = self.emit1(Op::Imnmx { u32: true }, vec![r, s, Src::pt()]);
        // Second.
        if rem {
            let s = self.emit1(Op::Iadd { cc: false, x: false }, vec![r1, b.negated()]);
            self.emit1(Op::Imnmx { u32: true }, vec![r1, s, Src::pt()])
        } else {
            self.op(Op::Iadd { cc: true, x: false }, Dst::reg(RZ, 1), vec![r1, b.negated()]);
            self.emit1(Op::Iadd { cc: false, x: true }, vec![q1, Src::rz()])
        }
    }

    /// `v`, or all ones where `b == 0` (32-bit).
    fn zero_divisor32(&mut self, v: Src, b: Src) -> Src {
        let p = self.isetp(Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And }, b, Src::rz(), Src::pt());
        self.emit1(Op::Sel, vec![v, Src::imm(u32::MAX), Src::pred(p, true)])
    }

    /// Unsigned 32-bit `a / b` or `a % b` (registers).
    pub(in crate::lower) fn udivrem32(&mut self, a: Src, b: Src, rem: bool) -> Src {
        let v = self.udivrem32_core(a, b, rem);
        self.zero_divisor32(v, b)
    }

    /// `|x|` of a signed 32-bit value as an unsigned one: `min.u32(x, -x)`.
    fn uabs32(&mut self, x: Src) -> Src {
        let n = self.emit1(Op::Iadd { cc: false, x: false }, vec![x.negated(), Src::rz()]);
        self.emit1(Op::Imnmx { u32: true }, vec![x, n, Src::pt()])
    }

    /// `v` negated where `s < 0`: `(v ^ m) - m` with `m = s >> 31`.
    fn apply_sign32(&mut self, v: Src, s: Src) -> Src {
        let m = self.emit1(Op::Shr { u32: false }, vec![s, Src::imm(31)]);
        let x = self.emit1(Op::Lop(LogicOp::Xor), vec![v, m]);
        self.emit1(Op::Iadd { cc: false, x: false }, vec![x, m.negated()])
    }

    /// Signed 32-bit `a / b` (truncating) or `a % b` (sign of `a`).
    pub(in crate::lower) fn sdivrem32(&mut self, a: Src, b: Src, rem: bool) -> Src {
        let ua = self.uabs32(a);
        let ub = self.uabs32(b);
        let v = self.udivrem32_core(ua, ub, rem);
        let s = if rem { a } else { self.emit1(Op::Lop(LogicOp::Xor), vec![a, b]) };
        let v = self.apply_sign32(v, s);
        self.zero_divisor32(v, b)
    }

    /// One Newton step of the 64-bit reciprocal: `y + mulhi(y, -(y*b))`.
    fn newton64(&mut self, y: W64, b: W64) -> W64 {
        let t = self.mul_lo64(y, b);
        let e = self.sub64((Src::rz(), Src::rz()), t);
        let h = self.umulhi64(y, e);
        self.add64(y, h)
    }

    /// A predicate: unsigned 64-bit `x >= b`.
    fn ge64(&mut self, x: W64, b: W64) -> crate::sass::instr::Reg {
        self.cmp64(Cmp::Ge, true, x, b)
    }

    /// The quotient and remainder of unsigned 64-bit `a / b` without the `b == 0` case.
    fn udivrem64_core(&mut self, a: W64, b: W64, rem: bool) -> W64 {
        let bp = self.w64_pair(b);
        let f = self.emit1(Op::I2f { dst: FType::F32, src: IType::U64, rnd: Rnd::Rp }, vec![bp]);
        let r = self.emit1(Op::Mufu(MufuOp::Rcp), vec![f]);
        let r = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![r, Src::imm(RCP_SCALE_64)]);
        let y = self.tmp(2);
        self.op(Op::F2i { dst: IType::U64, src: FType::F32, rnd: IRnd::Trunc, ftz: false }, Dst::reg(y, 2), vec![r]);
        let y0 = (
            Src::reg(crate::sass::instr::RegRef { reg: y, comp: 0, n: 1 }),
            Src::reg(crate::sass::instr::RegRef { reg: y, comp: 1, n: 1 }),
        );
        let y1 = self.newton64(y0, b);
        let y2 = self.newton64(y1, b);
        let q = self.umulhi64(y2, a);
        let qb = self.mul_lo64(q, b);
        let r = self.sub64(a, qb);
        // First correction: r >= b ? (q + 1, r - b) : (q, r).
        let p = self.ge64(r, b);
        let s = self.sub64(r, b);
        let q1 = self.inc64_if(q, p);
        let pp = Src::pred(p, false);
        let r1 = (self.sel(pp, s.0, r.0), self.sel(pp, s.1, r.1));
        // Second.
        let p = self.ge64(r1, b);
        if rem {
            let s = self.sub64(r1, b);
            let pp = Src::pred(p, false);
            (self.sel(pp, s.0, r1.0), self.sel(pp, s.1, r1.1))
        } else {
            self.inc64_if(q1, p)
        }
    }

    /// `x + 1` where `p` holds: `SEL` the increment, then a 64-bit add.
    fn inc64_if(&mut self, x: W64, p: crate::sass::instr::Reg) -> W64 {
        let one = self.emit1(Op::Sel, vec![Src::rz(), Src::imm(1), Src::pred(p, true)]);
        self.add64(x, (one, Src::rz()))
    }

    /// The 64-bit value as one pair register.
    fn w64_pair(&mut self, (lo, hi): W64) -> Src {
        self.pair(crate::lower::arith::alu::Val { lo, hi: Some(hi), whole: None })
    }

    /// `v`, or all ones where `b == 0` (64-bit).
    fn zero_divisor64(&mut self, v: W64, b: W64) -> W64 {
        let o = self.emit1(Op::Lop(LogicOp::Or), vec![b.0, b.1]);
        let p = self.isetp(Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And }, o, Src::rz(), Src::pt());
        let lo = self.emit1(Op::Sel, vec![v.0, Src::imm(u32::MAX), Src::pred(p, true)]);
        let hi = self.emit1(Op::Sel, vec![v.1, Src::imm(u32::MAX), Src::pred(p, true)]);
        (lo, hi)
    }

    /// Unsigned 64-bit `a / b` or `a % b`.
    pub(in crate::lower) fn udivrem64(&mut self, a: W64, b: W64, rem: bool) -> W64 {
        let v = self.udivrem64_core(a, b, rem);
        self.zero_divisor64(v, b)
    }

    /// `v` negated where the 64-bit value with high word `s` is negative.
    fn apply_sign64(&mut self, v: W64, s: Src) -> W64 {
        let m = self.emit1(Op::Shr { u32: false }, vec![s, Src::imm(31)]);
        let lo = self.emit1(Op::Lop(LogicOp::Xor), vec![v.0, m]);
        let hi = self.emit1(Op::Lop(LogicOp::Xor), vec![v.1, m]);
        self.sub64((lo, hi), (m, m))
    }

    /// Signed 64-bit `a / b` or `a % b`.
    pub(in crate::lower) fn sdivrem64(&mut self, a: W64, b: W64, rem: bool) -> W64 {
        let ua = self.apply_sign64(a, a.1);
        let ub = self.apply_sign64(b, b.1);
        let v = self.udivrem64_core(ua, ub, rem);
        let s = if rem { a.1 } else { self.emit1(Op::Lop(LogicOp::Xor), vec![a.1, b.1]) };
        let v = self.apply_sign64(v, s);
        self.zero_divisor64(v, b)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// The 32-bit algorithm in plain Rust with a chosen reciprocal error, to check the
    /// error analysis on far more divisors than the simulator can run.
    fn udiv32(a: u32, b: u32, ulps: i32) -> (u32, u32) {
        let f = (b as f64) as f32; // b < 2^32: f64 is exact, f32 rounds to nearest...
        // ... but I2F.RP rounds up: step up if it rounded down.
        let f = if (f as f64) < b as f64 { f.next_up() } else { f };
        let r = if b == 0 { f32::INFINITY } else { f32::from_bits(((1.0 / f).to_bits() as i32 + ulps) as u32) };
        let r = f32::from_bits(r.to_bits().wrapping_add(RCP_SCALE_32));
        let y0 = if r.is_nan() || r <= 0.0 {
            0
        } else if r >= 4294967296.0 {
            u32::MAX
        } else {
            r as u32
        };
        let mulhi = |x: u32, y: u32| ((x as u64 * y as u64) >> 32) as u32;
        let e = y0.wrapping_mul(b).wrapping_neg();
        let y1 = y0.wrapping_add(mulhi(y0, e));
        let mut q = mulhi(y1, a);
        let mut r = a.wrapping_sub(q.wrapping_mul(b));
        for _ in 0..2 {
            if r >= b {
                q = q.wrapping_add(1);
                r = r.wrapping_sub(b);
            }
        }
        (q, r)
    }

    #[test]
    fn reciprocal_margin_tolerates_two_ulp() {
        let mut divisors: Vec<u32> = (1..5000).collect();
        for k in 0..32 {
            for d in 0..40u32 {
                divisors.push((1u32 << k).wrapping_add(d));
                divisors.push((1u32 << k).wrapping_sub(d));
            }
        }
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            divisors.push(x as u32 >> (x >> 59));
        }
        divisors.retain(|b| *b != 0);
        for &b in &divisors {
            for ulps in -2..=2 {
                for a in
                    [u32::MAX, u32::MAX - 1, b.wrapping_sub(1), b, (u32::MAX / b).wrapping_mul(b).wrapping_sub(1), 0, 1]
                {
                    assert_eq!(udiv32(a, b, ulps), (a / b, a % b), "{a} / {b} with rcp error {ulps} ulp");
                }
            }
        }
    }
}
