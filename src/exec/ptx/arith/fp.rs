//! Floating-point instruction semantics on `.f32` / `.f64` / `.f16` / `.bf16` bit patterns
//! (PTX ISA 9.7.3 "Floating-Point Instructions", 9.7.4 "Half Precision Floating-Point
//! Instructions") and comparisons (PTX ISA 9.7.8.6 setp, 9.3.1 "Comparison Operators").
//! The half formats (IEEE binary16, bfloat16) are computed exactly by [`crate::exec::ptx::arith::float`]
//! (correctly rounded in every mode); the packed `.f16x2`/`.bf16x2` forms apply the
//! operation to each 16-bit half ([`packed`]).
//!
//! Conventions, from the PTX ISA unless noted:
//! * No rounding modifier means `.rn`. `.ftz` (f32 only) flushes subnormal inputs and
//!   results to zero of the same sign; `.sat` clamps the result to `[+0.0, 1.0]` with NaN
//!   (and -0.0) giving +0.0.
//! * `.rn` add/sub/mul/fma/div/sqrt use the host's IEEE arithmetic; the directed modes use
//!   the exact integer arithmetic of [`crate::exec::ptx::arith::float`].
//! * Every NaN result is the canonical NaN (`0x7fffffff` / `0x7fffffffffffffff`), an
//!   interpreter choice: PTX does not specify NaN payloads.
//! * `.approx` (and `.full`) instructions have no exact PTX definition (only error bounds):
//!   the interpreter computes them in f64 with the host's math library and rounds the
//!   result to nearest, which is at least as accurate as the hardware.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::ptx::arith::float::{self, F32, F64, Format, Mode};
use crate::ptx::instr::{CmpOp, Rounding};
use crate::ptx::types::ScalarType;

/// The format of a scalar float instruction type (`.f16` is IEEE binary16, `.bf16` has
/// binary32's exponent and 7 fraction bits, PTX ISA 5.2.1); `None` for non-float and
/// packed types (see [`packed`]).
pub fn format(ty: ScalarType) -> Option<Format> {
    match ty {
        ScalarType::F32 => Some(F32),
        ScalarType::F64 => Some(F64),
        ScalarType::F16 => Some(float::F16),
        ScalarType::Bf16 => Some(float::BF16),
        _ => None,
    }
}

/// The format of each half of a packed type (`.f16x2`, `.bf16x2`: two 16-bit values, the
/// first in the low half, PTX ISA 9.7.4); `None` for other types.
pub fn packed(ty: ScalarType) -> Option<Format> {
    match ty {
        ScalarType::F16x2 => Some(float::F16),
        ScalarType::Bf16x2 => Some(float::BF16),
        _ => None,
    }
}

/// Applies `f` to each 16-bit half of the packed operands `s` (the result's halves).
pub fn per_half(s: &[u64], f: impl Fn(&[u64]) -> u64) -> u64 {
    let half = |k: u32| -> u64 {
        let v: Vec<u64> = s.iter().map(|x| (x >> k.wrapping_mul(16)) & 0xffff).collect(); // k < 2
        f(&v) & 0xffff
    };
    half(0) | half(1) << 16
}

/// The rounding direction of a float rounding modifier (`.rn` when none; the integer
/// rounding modifiers `.rni .rzi .rmi .rpi` map to their direction).
pub fn mode(r: Option<Rounding>) -> Mode {
    match r {
        None | Some(Rounding::Rn) | Some(Rounding::Rni) => Mode::Rn,
        Some(Rounding::Rna) => Mode::Rna,
        Some(Rounding::Rz) | Some(Rounding::Rzi) => Mode::Rz,
        Some(Rounding::Rm) | Some(Rounding::Rmi) => Mode::Rm,
        Some(Rounding::Rp) | Some(Rounding::Rpi) => Mode::Rp,
    }
}

/// Modifiers shared by float instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mods {
    /// Rounding direction.
    pub mode: Mode,
    /// `.ftz` (honoured for f32 only).
    pub ftz: bool,
    /// `.sat`.
    pub sat: bool,
}

/// `.ftz` applies to `.f32` and `.f16` (PTX ISA 9.7.3, 9.7.4; `.f64` and `.bf16` keep
/// subnormals).
fn flushes(f: Format) -> bool {
    f == F32 || f == float::F16
}

fn input(f: Format, m: Mods, a: u64) -> u64 {
    if m.ftz && flushes(f) { f.ftz(a) } else { a }
}

fn output(f: Format, m: Mods, r: u64) -> u64 {
    let r = if m.ftz && flushes(f) { f.ftz(r) } else { r };
    if m.sat { saturate(f, r) } else { r }
}

/// `.sat`: clamp to `[0.0, 1.0]`; NaN and negative values (including -0.0) give +0.0.
pub fn saturate(f: Format, r: u64) -> u64 {
    let v = to_f64(f, r);
    if v.is_nan() || v <= 0.0 {
        0
    } else if v >= 1.0 {
        from_f64(f, 1.0)
    } else {
        r
    }
}

/// The value of `b` as an f64 (exact: every format here is narrower).
pub fn to_f64(f: Format, b: u64) -> f64 {
    match f {
        F32 => f32::from_bits(b as u32) as f64,
        F64 => f64::from_bits(b),
        _ => f64::from_bits(float::convert(b, f, F64, Mode::Rn)),
    }
}

/// `v` rounded to nearest in `f` (NaN becomes the canonical NaN).
pub fn from_f64(f: Format, v: f64) -> u64 {
    float::convert(v.to_bits(), F64, f, Mode::Rn)
}

fn host(f: Format, x: f64) -> u64 {
    if x.is_nan() {
        f.nan()
    } else if f == F32 {
        (x as f32).to_bits() as u64
    } else {
        x.to_bits()
    }
}

/// A binary float operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `add` (PTX ISA 9.7.3.1).
    Add,
    /// `sub` (9.7.3.2).
    Sub,
    /// `mul` (9.7.3.3).
    Mul,
    /// `div` with a rounding modifier (9.7.3.8).
    Div,
    /// `div.approx` / `div.full` (9.7.3.8): f64 quotient rounded to nearest.
    DivApprox,
    /// `min` (9.7.3.11).
    Min,
    /// `max` (9.7.3.12).
    Max,
}

/// Applies a [`Binary`] op to `a`, `b` in format `f`.
pub fn binary(op: Binary, f: Format, m: Mods, a: u64, b: u64) -> u64 {
    let (a, b) = (input(f, m, a), input(f, m, b));
    // The host's arithmetic rounds to nearest in f32/f64 only; half formats are exact.
    let rn = m.mode == Mode::Rn && (f == F32 || f == F64);
    let r = match op {
        Binary::Add | Binary::Sub => {
            let b = if op == Binary::Sub && !f.is_nan(b) { b ^ f.sign() } else { b };
            if rn && f == F32 {
                host(f, (f32::from_bits(a as u32) + f32::from_bits(b as u32)) as f64)
            } else if rn {
                host(f, f64::from_bits(a) + f64::from_bits(b))
            } else {
                float::add(a, b, f, m.mode)
            }
        }
        Binary::Mul if rn && f == F32 => host(f, (f32::from_bits(a as u32) * f32::from_bits(b as u32)) as f64),
        Binary::Mul if rn => host(f, f64::from_bits(a) * f64::from_bits(b)),
        Binary::Mul => float::mul(a, b, f, m.mode),
        Binary::Div => float::div(a, b, f, m.mode),
        Binary::DivApprox => from_f64(f, to_f64(f, a) / to_f64(f, b)),
        Binary::Min | Binary::Max => return min_max(f, op == Binary::Max, m, a, b),
    };
    output(f, m, r)
}

/// `min`/`max`: a NaN operand yields the other operand, two NaNs the canonical NaN; -0.0
/// counts as less than +0.0.
fn min_max(f: Format, max: bool, m: Mods, a: u64, b: u64) -> u64 {
    let r = match (f.is_nan(a), f.is_nan(b)) {
        (true, true) => f.nan(),
        (true, false) => b,
        (false, true) => a,
        _ => {
            let (x, y) = (to_f64(f, a), to_f64(f, b));
            let a_less = x < y || (x == y && a & f.sign() != 0);
            if a_less != max { a } else { b }
        }
    };
    output(f, Mods { sat: false, ..m }, r)
}

/// `fma.rnd` / `mad.rnd` (PTX ISA 9.7.3.5, 9.7.3.6): `a * b + c` rounded once.
pub fn fma(f: Format, m: Mods, a: u64, b: u64, c: u64) -> u64 {
    let (a, b, c) = (input(f, m, a), input(f, m, b), input(f, m, c));
    let r = if m.mode == Mode::Rn && f == F32 {
        host(f, f32::from_bits(a as u32).mul_add(f32::from_bits(b as u32), f32::from_bits(c as u32)) as f64)
    } else if m.mode == Mode::Rn && f == F64 {
        host(f, f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c)))
    } else {
        float::fma(a, b, c, f, m.mode)
    };
    output(f, m, r)
}

/// `abs` / `neg` (PTX ISA 9.7.3.9, 9.7.3.10): clear or flip the sign bit (after `.ftz`).
/// A NaN input gives the canonical NaN: PTX leaves the result an unspecified NaN, and
/// every NaN result of the interpreter is canonical (see [`float`]), as on SPA 5.0, where
/// `neg`/`abs` are `FADD`/`DADD` from `-RZ`.
pub fn abs_neg(f: Format, neg: bool, ftz: bool, a: u64) -> u64 {
    let a = if ftz && flushes(f) { f.ftz(a) } else { a };
    if f.is_nan(a) {
        return f.nan();
    }
    if neg { a ^ f.sign() } else { a & !f.sign() }
}

/// A one-operand float function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    /// `rcp` (PTX ISA 9.7.3.13): `1 / a`.
    Rcp,
    /// `sqrt` (9.7.3.14).
    Sqrt,
    /// `rsqrt` (9.7.3.15): `1 / sqrt(a)`, always approximate.
    Rsqrt,
    /// `sin.approx` (9.7.3.17).
    Sin,
    /// `cos.approx` (9.7.3.18).
    Cos,
    /// `lg2.approx` (9.7.3.19): log base 2.
    Lg2,
    /// `ex2.approx` (9.7.3.20): 2 to the power `a`.
    Ex2,
    /// `tanh.approx` (9.7.3.21).
    Tanh,
}

/// Applies a [`Unary`] function. `approx` selects the f64-and-round evaluation; otherwise
/// (`rcp.rnd`, `sqrt.rnd`) the result is correctly rounded in `m.mode`.
pub fn unary(op: Unary, f: Format, approx: bool, m: Mods, a: u64) -> u64 {
    let a = input(f, m, a);
    let r = match (op, approx) {
        (Unary::Rcp, false) => float::div(from_f64(f, 1.0), a, f, m.mode),
        (Unary::Sqrt, false) if m.mode == Mode::Rn && (f == F32 || f == F64) => host(f, to_f64(f, a).sqrt()),
        (Unary::Sqrt, false) => float::sqrt(a, f, m.mode),
        _ => {
            let x = to_f64(f, a);
            from_f64(
                f,
                match op {
                    Unary::Rcp => 1.0 / x,
                    Unary::Sqrt => x.sqrt(),
                    Unary::Rsqrt => 1.0 / x.sqrt(),
                    Unary::Sin => x.sin(),
                    Unary::Cos => x.cos(),
                    Unary::Lg2 => x.log2(),
                    Unary::Ex2 => x.exp2(),
                    Unary::Tanh => x.tanh(),
                },
            )
        }
    };
    output(f, m, r)
}

/// `copysign.type d, a, b` (PTX ISA 9.7.3.16): `b` with the sign of `a`.
pub fn copysign(f: Format, a: u64, b: u64) -> u64 {
    (b & !f.sign()) | (a & f.sign())
}

/// `testp.op.type p, a` (PTX ISA 9.7.3.7): `op` is one of `finite infinite number
/// notanumber normal subnormal`; `None` for another word. "As a special case, positive
/// and negative zero are considered normal numbers" (PTX ISA; ptxas 11.8 agrees:
/// `ISETP.EQ.U32.OR P0, PT, |a|, RZ, P0`).
pub fn testp(op: &str, f: Format, a: u64) -> Option<bool> {
    let mag = a & !f.sign();
    Some(match op {
        "finite" => mag < f.inf(),
        "infinite" => mag == f.inf(),
        "number" => !f.is_nan(a),
        "notanumber" => f.is_nan(a),
        "normal" => (mag < f.inf() && mag & f.inf() != 0) || mag == 0,
        "subnormal" => f.is_subnormal(a),
        _ => return None,
    })
}

/// `a CmpOp b` for an operand type `ty` (PTX ISA 9.3.1): integer comparisons are signed
/// for `.sN` and unsigned otherwise (`lo ls hi hs` always unsigned); float comparisons are
/// ordered (false on NaN) except the `u` forms (true on NaN), `num` and `nan`. `ftz`
/// flushes f32 subnormal inputs first.
pub fn compare(cmp: CmpOp, ty: ScalarType, ftz: bool, a: u64, b: u64) -> bool {
    use CmpOp::*;
    use std::cmp::Ordering::*;
    if let Some(f) = format(ty) {
        let fl = |v: u64| if ftz && flushes(f) { f.ftz(v) } else { v };
        let (x, y) = (to_f64(f, fl(a)), to_f64(f, fl(b)));
        let unordered = x.is_nan() || y.is_nan();
        return match cmp {
            Eq | Equ => x == y || (cmp == Equ && unordered),
            Ne | Neu => (!unordered && x != y) || (cmp == Neu && unordered),
            Lt | Lo | Ltu => x < y || (cmp == Ltu && unordered),
            Le | Ls | Leu => x <= y || (cmp == Leu && unordered),
            Gt | Hi | Gtu => x > y || (cmp == Gtu && unordered),
            Ge | Hs | Geu => x >= y || (cmp == Geu && unordered),
            Num => !unordered,
            Nan => unordered,
        };
    }
    let n = ty.bits().min(64);
    let (ua, ub) = (crate::exec::ptx::value::extend(a, ty), crate::exec::ptx::value::extend(b, ty));
    let ord = match cmp {
        Lo | Ls | Hi | Hs => (a & crate::exec::ptx::value::mask(n)).cmp(&(b & crate::exec::ptx::value::mask(n))),
        _ if ty.is_signed() => (ua as i64).cmp(&(ub as i64)),
        _ => ua.cmp(&ub),
    };
    match cmp {
        Eq | Equ => ord == Equal,
        Ne | Neu => ord != Equal,
        Lt | Lo | Ltu => ord == Less,
        Le | Ls | Leu => ord != Greater,
        Gt | Hi | Gtu => ord == Greater,
        Ge | Hs | Geu => ord != Less,
        Num => true,
        Nan => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    const RN: Mods = Mods { mode: Mode::Rn, ftz: false, sat: false };

    fn b(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn min_max_nan_and_zero() {
        let nan = F32.nan();
        assert_eq!(binary(Binary::Min, F32, RN, nan, b(2.0)), b(2.0));
        assert_eq!(binary(Binary::Max, F32, RN, b(2.0), nan), b(2.0));
        assert_eq!(binary(Binary::Min, F32, RN, nan, 0x7fc0_0000), F32.nan());
        assert_eq!(binary(Binary::Min, F32, RN, b(0.0), b(-0.0)), b(-0.0));
        assert_eq!(binary(Binary::Max, F32, RN, b(-0.0), b(0.0)), b(0.0));
    }

    #[test]
    fn ftz_and_sat() {
        let sub = 1u64; // smallest f32 subnormal
        let ftz = Mods { ftz: true, ..RN };
        assert_eq!(binary(Binary::Add, F32, ftz, sub, sub), 0);
        assert_eq!(binary(Binary::Add, F32, RN, sub, sub), 2);
        assert_eq!(binary(Binary::Mul, F32, ftz, b(-1e-20), b(1e-20)), F32.sign());
        let sat = Mods { sat: true, ..RN };
        assert_eq!(binary(Binary::Add, F32, sat, b(0.75), b(0.5)), b(1.0));
        assert_eq!(binary(Binary::Sub, F32, sat, b(0.25), b(0.5)), 0);
        assert_eq!(binary(Binary::Mul, F32, sat, b(f32::INFINITY), 0), 0);
    }

    #[test]
    fn comparisons() {
        let nan = F32.nan();
        let ty = ScalarType::F32;
        assert!(!compare(CmpOp::Lt, ty, false, nan, b(1.0)));
        assert!(compare(CmpOp::Ltu, ty, false, nan, b(1.0)));
        assert!(!compare(CmpOp::Ne, ty, false, nan, b(1.0)));
        assert!(compare(CmpOp::Neu, ty, false, nan, b(1.0)));
        assert!(compare(CmpOp::Nan, ty, false, b(1.0), nan));
        assert!(compare(CmpOp::Num, ty, false, b(1.0), b(2.0)));
        assert!(compare(CmpOp::Eq, ty, true, 1, 0x8000_0000));
        assert!(!compare(CmpOp::Eq, ty, false, 1, 0x8000_0000));
        assert!(compare(CmpOp::Lt, ScalarType::S32, false, 0xffff_ffff, 0));
        assert!(!compare(CmpOp::Lt, ScalarType::U32, false, 0xffff_ffff, 0));
        assert!(compare(CmpOp::Hi, ScalarType::S32, false, 0xffff_ffff, 0));
    }

    #[test]
    fn directed_and_approx() {
        let rz = Mods { mode: Mode::Rz, ..RN };
        assert_eq!(binary(Binary::Div, F32, rz, b(1.0), b(3.0)), b(1.0 / 3.0) - 1);
        assert_eq!(unary(Unary::Rcp, F32, false, RN, b(4.0)), b(0.25));
        assert_eq!(unary(Unary::Rsqrt, F32, true, RN, b(4.0)), b(0.5));
        assert_eq!(unary(Unary::Sqrt, F32, true, RN, b(-1.0)), F32.nan());
        assert_eq!(unary(Unary::Lg2, F32, true, RN, b(8.0)), b(3.0));
        assert_eq!(abs_neg(F32, true, false, b(1.5)), b(-1.5));
        assert_eq!(abs_neg(F32, true, false, 0xffc0_0001), F32.nan());
        assert_eq!(abs_neg(F64, false, false, 0xfff8_0000_0000_0001), F64.nan());
        assert_eq!(testp("subnormal", F32, 1), Some(true));
        assert_eq!(copysign(F32, b(-1.0), b(2.0)), b(-2.0));
    }
}
