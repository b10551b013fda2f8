//! Floating-point and conversion semantics.
//!
//! IEEE 754 binary32/binary64 arithmetic. Round-to-nearest-even results come from the
//! host's correctly rounded operations (`+`, `*`, `mul_add`, `as`); the directed modes
//! (`.RZ`, `.RM`, `.RP`) start from that result and step one ulp toward the mode's
//! direction when the exact value lies on the other side, which is decided exactly with
//! error-free transformations (TwoSum; products of binary32 values are exact in binary64).
//! `.FTZ` flushes subnormal inputs and outputs to zero of the same sign; `.SAT` clamps
//! to [0, 1] (NaN to +0). NaN results are the canonical NaN (`0x7fffffff`, and
//! `0x7fffffffffffffff` for fp64), as NVIDIA GPUs produce.
//!
//! Conversions: I2F from 8..64-bit integers (the low bits of the register, per the
//! source type), F2I with `.ROUND/.FLOOR/.CEIL/.TRUNC` saturating to the destination
//! range (NaN gives 0), F2F between F32 and F64 with IEEE rounding (`.ROUND/.FLOOR/
//! .CEIL/.TRUNC` round to an integral value first, as `cvt.rni/.rmi/.rpi/.rzi` do; a
//! same-type F2F without them copies), I2I between integer widths by truncation and
//! extension. F16 appears in F2F (`F2F.F16.F32`, `F2F.F32.F16`; [`f16_bits`]), I2F.F16 and
//! F2I from F16 (ptxas's code; the half in the low 16 bits).

use crate::exec::ExecError;
use crate::exec::sim::Sim;
use crate::exec::sim::state::{Lanes, Lanes64, PerLane, WARP_SIZE, Warp, lanes};
use crate::sass::instr::{Dst, Instr, Reg, Src};
use crate::sass::op::{Cmp, FMods, FType, IRnd, IType, Op, Rnd};
use std::cmp::Ordering;

/// Canonical fp32 NaN.
pub const NAN32: u32 = 0x7fff_ffff;
/// Canonical fp64 NaN.
pub const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// Flushes a subnormal to zero of the same sign.
pub fn ftz32(x: f32) -> f32 {
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

/// Applies `|x|` then `-x` and, with `ftz`, flushes.
pub(in crate::exec::sim) fn in32(bits: u32, s: &Src, ftz: bool) -> f32 {
    let mut x = f32::from_bits(bits);
    if s.mods.abs {
        x = x.abs();
    }
    if s.mods.neg {
        x = -x;
    }
    if ftz { ftz32(x) } else { x }
}

pub(in crate::exec::sim) fn in64(bits: u64, s: &Src) -> f64 {
    let mut x = f64::from_bits(bits);
    if s.mods.abs {
        x = x.abs();
    }
    if s.mods.neg {
        x = -x;
    }
    x
}

/// The result bits of an fp32 operation: canonical NaN, `.SAT`, `.FTZ`.
pub fn out32(x: f32, m: FMods) -> u32 {
    if x.is_nan() {
        return if m.sat { 0 } else { NAN32 };
    }
    let x = if m.sat { x.clamp(0.0, 1.0) } else { x };
    let x = if m.ftz { ftz32(x) } else { x };
    // clamp(-0.0) keeps -0; .SAT gives +0.
    if m.sat && x == 0.0 { 0 } else { x.to_bits() }
}

fn bits64(x: f64) -> u64 {
    if x.is_nan() { NAN64 } else { x.to_bits() }
}

/// Steps a round-to-nearest result `r` to the directed mode `rnd`, given how the exact
/// value compares with `r`.
pub fn directed32(r: f32, exact_vs_r: Ordering, rnd: Rnd) -> f32 {
    match (rnd, exact_vs_r) {
        (Rnd::Rz, Ordering::Less) if r > 0.0 => r.next_down(),
        (Rnd::Rz, Ordering::Greater) if r < 0.0 => r.next_up(),
        (Rnd::Rm, Ordering::Less) => r.next_down(),
        (Rnd::Rp, Ordering::Greater) => r.next_up(),
        _ => r,
    }
}

/// [`directed32`] for binary64.
pub fn directed64(r: f64, exact_vs_r: Ordering, rnd: Rnd) -> f64 {
    match (rnd, exact_vs_r) {
        (Rnd::Rz, Ordering::Less) if r > 0.0 => r.next_down(),
        (Rnd::Rz, Ordering::Greater) if r < 0.0 => r.next_up(),
        (Rnd::Rm, Ordering::Less) => r.next_down(),
        (Rnd::Rp, Ordering::Greater) => r.next_up(),
        _ => r,
    }
}

/// TwoSum: `a + b = s + e` exactly.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

fn sign(x: f64) -> Ordering {
    x.partial_cmp(&0.0).unwrap_or(Ordering::Equal)
}

/// How the exact value `s + e` (binary64 pair) compares with a binary32 result `r`.
fn vs32(s: f64, e: f64, r: f32) -> Ordering {
    if r.is_infinite() && s.is_finite() {
        return if r > 0.0 { Ordering::Less } else { Ordering::Greater };
    }
    if !s.is_finite() || r.is_nan() {
        return Ordering::Equal;
    }
    sign((s - r as f64) + e)
}

/// The sign of an exact zero sum under `rnd` (IEEE 754 §6.3: -0 in round-down unless
/// both addends are +0).
fn zero_sum_sign32(r: f32, a: f32, b: f32, rnd: Rnd) -> f32 {
    if r == 0.0 && rnd == Rnd::Rm && !(a.to_bits() == 0 && b.to_bits() == 0) { -0.0 } else { r }
}

/// FADD: `a + b` rounded per `rnd`.
pub fn fadd(a: f32, b: f32, rnd: Rnd) -> f32 {
    let r = a + b;
    if rnd == Rnd::Rn {
        return r;
    }
    let (s, e) = two_sum(a as f64, b as f64);
    let ord = vs32(s, e, r);
    if ord == Ordering::Equal { zero_sum_sign32(r, a, b, rnd) } else { directed32(r, ord, rnd) }
}

/// FMUL: `a * b` rounded per `rnd` (the binary64 product is exact).
pub fn fmul(a: f32, b: f32, rnd: Rnd) -> f32 {
    let r = a * b;
    if rnd == Rnd::Rn {
        return r;
    }
    directed32(r, vs32(a as f64 * b as f64, 0.0, r), rnd)
}

/// FFMA: `a * b + c` with one rounding per `rnd`.
pub fn ffma(a: f32, b: f32, c: f32, rnd: Rnd) -> f32 {
    let r = a.mul_add(b, c);
    if rnd == Rnd::Rn {
        return r;
    }
    let p = a as f64 * b as f64;
    let (s, e) = two_sum(p, c as f64);
    let ord = vs32(s, e, r);
    if ord == Ordering::Equal { zero_sum_sign32(r, p as f32, c, rnd) } else { directed32(r, ord, rnd) }
}

/// A binary64 overflow (finite operands, infinite round-to-nearest result `r`) rounded
/// per `rnd`: the largest finite value of `r`'s sign where `rnd` rounds toward zero.
fn overflow64(r: f64, rnd: Rnd) -> f64 {
    match (rnd, r > 0.0) {
        (Rnd::Rz, _) | (Rnd::Rm, true) | (Rnd::Rp, false) => f64::MAX.copysign(r),
        _ => r,
    }
}

/// DADD: `a + b` rounded per `rnd`.
pub fn dadd(a: f64, b: f64, rnd: Rnd) -> f64 {
    let (r, e) = two_sum(a, b);
    if rnd != Rnd::Rn && r.is_infinite() && a.is_finite() && b.is_finite() {
        return overflow64(r, rnd);
    }
    if rnd == Rnd::Rn || !r.is_finite() {
        return r;
    }
    if e == 0.0 {
        return if r == 0.0 && rnd == Rnd::Rm && !(a.to_bits() == 0 && b.to_bits() == 0) { -0.0 } else { r };
    }
    directed64(r, dadd_error_sign(a, b, e), rnd)
}

/// The sign of the rounding error of a finite `a + b`, given TwoSum's error `e`. Near the
/// overflow threshold TwoSum's intermediate `s - a` can overflow (`DBL_MAX * 0.380859375 -
/// DBL_MAX` gave an infinite `e` and rounded `.rp` away from +inf: found by the random
/// programs); then the sum of the halves has the same error sign. Halving is exact except
/// for an operand with a subnormal's last bit, which is then far below the other operand's
/// ulp: the error has that operand's sign.
fn dadd_error_sign(a: f64, b: f64, e: f64) -> Ordering {
    if e.is_finite() {
        return sign(e);
    }
    let (ha, hb) = (a * 0.5, b * 0.5);
    if ha * 2.0 != a {
        return sign(a);
    }
    if hb * 2.0 != b {
        return sign(b);
    }
    sign(two_sum(ha, hb).1)
}

/// DMUL: `a * b` rounded per `rnd` (the sign of the error `fma(a, b, -r)` tells the
/// direction; near the subnormal range the error itself would underflow, so it is taken
/// with the smaller operand scaled by 2^256, which is exact).
pub fn dmul(a: f64, b: f64, rnd: Rnd) -> f64 {
    let r = a * b;
    if rnd != Rnd::Rn && r.is_infinite() && a.is_finite() && b.is_finite() {
        return overflow64(r, rnd);
    }
    if rnd == Rnd::Rn || !r.is_finite() {
        return r;
    }
    if r == 0.0 && a != 0.0 && b != 0.0 {
        // The exact product is nonzero but rounded to zero: its sign is the direction.
        return directed64(r, if r.is_sign_negative() { Ordering::Less } else { Ordering::Greater }, rnd);
    }
    let err = if r.abs() < f64::from_bits(0x0c00_0000_0000_0000) {
        // 2^-831: below it the error of a product can be smaller than 2^-1074.
        let (x, y) = if a.abs() < b.abs() { (a, b) } else { (b, a) };
        let k = f64::from_bits(0x4ff0_0000_0000_0000); // 2^256
        (x * k).mul_add(y, -(r * k))
    } else {
        a.mul_add(b, -r)
    };
    directed64(r, sign(err), rnd)
}

/// DFMA: `a * b + c` rounded once per `rnd`. The directed modes start from the
/// round-to-nearest result `r` and take the direction from the sign of the exact
/// `a b + c - r`, an expansion of error-free terms (`p = a b`, `fma(a, b, -p)`, TwoSum of
/// `p + c` and of that sum minus `r`). When the product is below `2^-900` its error
/// would underflow, so `a` and `c` are scaled by `2^600` first (exact; not done when `|c|`
/// is above `2^400`, the only case where the model may misjudge a tie of tiny terms).
pub fn dfma(a: f64, b: f64, c: f64, rnd: Rnd) -> f64 {
    let r = a.mul_add(b, c);
    if rnd == Rnd::Rn || r.is_nan() || !a.is_finite() || !b.is_finite() || !c.is_finite() {
        return r;
    }
    if r.is_infinite() {
        return overflow64(r, rnd);
    }
    let p = a * b;
    if p == 0.0 && a != 0.0 && b != 0.0 {
        // The exact product is nonzero but below every ulp of `c` (or of zero): its sign
        // is the direction.
        let neg = a.is_sign_negative() != b.is_sign_negative();
        return directed64(r, if neg { Ordering::Less } else { Ordering::Greater }, rnd);
    }
    let (mut x, mut y, mut z, mut rr) = (a, b, c, r);
    if p != 0.0 && p.abs() < f64::from_bits(0x07b0_0000_0000_0000) && c.abs() < f64::from_bits(0x58f0_0000_0000_0000) {
        let k = f64::from_bits(0x6570_0000_0000_0000); // 2^600
        x *= k;
        z *= k;
        rr *= k;
    }
    let huge = f64::from_bits(0x7fb0_0000_0000_0000); // 2^1020
    if !p.is_finite() || p.abs() >= huge || c.abs() >= huge {
        // Near the overflow threshold the product or a TwoSum intermediate overflows (a b
        // above DBL_MAX cancelled by c gave a NaN expansion and no direction). Scale the
        // larger factor, c and r by 2^-4: exact, since each is then at least 2^-537 (a
        // nonzero p) or a multiple of a large ulp (r and c, when |a b| or |c| is >= 2^1020),
        // and every term of the expansion stays below 2^1022.
        let k = 0.0625;
        if x.abs() >= y.abs() {
            x *= k;
        } else {
            y *= k;
        }
        z *= k;
        rr *= k;
    }
    let p = x * y;
    let pe = x.mul_add(y, -p);
    let (s, se) = two_sum(p, z);
    let (d, de) = two_sum(s, -rr);
    let (t, te) = two_sum(d, se);
    let (u, ue) = two_sum(t, pe);
    let rest = de + te + ue;
    let dir = if u != 0.0 { sign(u) } else { sign(rest) };
    if dir == Ordering::Equal {
        // Exact: the sign of an exact zero follows IEEE 754 §6.3.
        if r == 0.0 && rnd == Rnd::Rm {
            let product_pos_zero = (a == 0.0 || b == 0.0) && a.is_sign_negative() == b.is_sign_negative();
            return if product_pos_zero && c.to_bits() == 0 { 0.0 } else { -0.0 };
        }
        return r;
    }
    directed64(r, dir, rnd)
}

/// The value of binary16 bits `h` (exact in binary64).
pub fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (e, m) = ((h >> 10) & 0x1f, (h & 0x3ff) as f64);
    match e {
        0 => sign * m * 2f64.powi(-24),
        0x1f if m == 0.0 => sign * f64::INFINITY,
        0x1f => f64::NAN,
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi((e as i32).saturating_sub(15)), // e in 1..=30
    }
}

/// `x` rounded to binary16 per `rnd` (F2F.F16): subnormals kept (no FTZ on the half
/// side), overflow to infinity or the largest finite value by the mode, NaN to `0x7fff`.
pub fn f16_bits(x: f64, rnd: Rnd) -> u16 {
    if x.is_nan() {
        return 0x7fff;
    }
    let neg = x.is_sign_negative();
    let sign = if neg { 0x8000u16 } else { 0 };
    let a = x.abs();
    if a.is_infinite() {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    // The quantum at `a`'s binade (never below the subnormal quantum 2^-24).
    let e = (a.log2().floor() as i32).max(-14);
    // Exponents of finite f64 values (|e| < 1100): the saturating steps never saturate.
    let mut e = if 2f64.powi(e) > a { e.saturating_sub(1) } else { e }.max(-14);
    if 2f64.powi(e.saturating_add(1)) <= a {
        e = e.saturating_add(1);
    }
    let q = 2f64.powi(e.saturating_sub(10));
    let n = a / q; // exact: a power-of-two scaling
    let (fl, frac) = (n.floor(), n - n.floor());
    let up = match rnd {
        Rnd::Rn => frac > 0.5 || (frac == 0.5 && fl % 2.0 == 1.0),
        Rnd::Rz => false,
        Rnd::Rm => neg && frac > 0.0,
        Rnd::Rp => !neg && frac > 0.0,
    };
    let r = (fl + if up { 1.0 } else { 0.0 }) * q;
    if r > 65504.0 {
        let to_inf = match rnd {
            Rnd::Rn => true,
            Rnd::Rz => false,
            Rnd::Rm => neg,
            Rnd::Rp => !neg,
        };
        return sign | if to_inf { 0x7c00 } else { 0x7bff };
    }
    if r < 2f64.powi(-14) {
        return sign | (r / 2f64.powi(-24)) as u16;
    }
    let re = r.log2().floor() as i32;
    // A normal binary16 value here: re in -14..=15, the biased exponent in 1..=30.
    let re = if 2f64.powi(re) > r { re.saturating_sub(1) } else { re };
    let re = if 2f64.powi(re.saturating_add(1)) <= r { re.saturating_add(1) } else { re };
    let m = ((r / 2f64.powi(re) - 1.0) * 1024.0) as u16;
    sign | ((re.saturating_add(15) as u16) << 10) | m
}

/// An fp comparison, `U` forms true on unordered operands.
pub fn fcmp(cmp: Cmp, a: f64, b: f64) -> bool {
    let un = a.is_nan() || b.is_nan();
    match cmp {
        Cmp::F => false,
        Cmp::T => true,
        Cmp::Lt => !un && a < b,
        Cmp::Eq => !un && a == b,
        Cmp::Le => !un && a <= b,
        Cmp::Gt => !un && a > b,
        Cmp::Ne => !un && a != b,
        Cmp::Ge => !un && a >= b,
        Cmp::Num => !un,
        Cmp::Nan => un,
        Cmp::Ltu => un || a < b,
        Cmp::Equ => un || a == b,
        Cmp::Leu => un || a <= b,
        Cmp::Gtu => un || a > b,
        Cmp::Neu => un || a != b,
        Cmp::Geu => un || a >= b,
    }
}

/// FMNMX/DMNMX: min (`min`) or max; a NaN operand yields the other one; -0 < +0.
pub fn fminmax(a: f64, b: f64, min: bool) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => f64::NAN,
        (true, false) => b,
        (false, true) => a,
        _ => {
            let a_first = if a == b { a.is_sign_negative() } else { a < b };
            if a_first == min { a } else { b }
        }
    }
}

/// The integer value of an I2F/I2I source of type `t` (low bits of `v`, extended).
pub fn int_value(v: u64, t: IType) -> i128 {
    match t {
        IType::U8 => (v & 0xff) as i128,
        IType::S8 => v as u8 as i8 as i128,
        IType::U16 => (v & 0xffff) as i128,
        IType::S16 => v as u16 as i16 as i128,
        IType::U32 => (v & 0xffff_ffff) as i128,
        IType::S32 => v as u32 as i32 as i128,
        IType::U64 => v as i128,
        IType::S64 => v as i64 as i128,
    }
}

/// An integer source value after its operand modifiers: `|x|`, then `-x` (ptxas 11.8:
/// `I2I.S32.S32 R12, |R0|` for `abs.s32`, `I2I.S32.S32 R16, -|R0|`; exact in i128, the
/// conversion then wraps or clamps as its type says).
pub fn int_with_mods(x: i128, s: &Src) -> i128 {
    // x is a 64-bit integer value, so neither saturates.
    let x = if s.mods.abs { x.saturating_abs() } else { x };
    if s.mods.neg { x.saturating_neg() } else { x }
}

pub(in crate::exec::sim) fn int_range(t: IType) -> (i128, i128) {
    match t {
        IType::U8 => (0, 0xff),
        IType::S8 => (-0x80, 0x7f),
        IType::U16 => (0, 0xffff),
        IType::S16 => (-0x8000, 0x7fff),
        IType::U32 => (0, u32::MAX as i128),
        IType::S32 => (i32::MIN as i128, i32::MAX as i128),
        IType::U64 => (0, u64::MAX as i128),
        IType::S64 => (i64::MIN as i128, i64::MAX as i128),
    }
}

/// The register bits of integer `v` of type `t`: truncated, then sign- or zero-extended
/// to 32 bits (64-bit types keep 64 bits).
pub fn int_bits(v: i128, t: IType) -> u64 {
    let v = v as u128 as u64;
    match t {
        IType::U64 | IType::S64 => v,
        t => int_value(v, t) as u32 as u64,
    }
}

/// I2F to binary32 with rounding `rnd`.
pub fn i2f32(v: i128, rnd: Rnd) -> f32 {
    let r = v as f32;
    directed32(r, v.cmp(&(r as i128)), rnd)
}

/// I2F to binary64 with rounding `rnd`.
pub fn i2f64(v: i128, rnd: Rnd) -> f64 {
    let r = v as f64;
    directed64(r, v.cmp(&(r as i128)), rnd)
}

/// F2I: round `x` per `rnd`, saturate to `t` (NaN gives 0).
pub fn f2i(x: f64, t: IType, rnd: IRnd) -> i128 {
    if x.is_nan() {
        return 0;
    }
    let y = match rnd {
        IRnd::Round => x.round_ties_even(),
        IRnd::Floor => x.floor(),
        IRnd::Ceil => x.ceil(),
        IRnd::Trunc => x.trunc(),
    };
    let (lo, hi) = int_range(t);
    if y <= lo as f64 {
        lo
    } else if y >= hi as f64 {
        hi
    } else {
        y as i128
    }
}

/// F2F from binary64 to binary32 with rounding `rnd`.
pub fn f64_to_f32(x: f64, rnd: Rnd) -> f32 {
    let r = x as f32;
    if x.is_nan() {
        return r;
    }
    directed32(r, vs32(x, 0.0, r), rnd)
}

fn src(i: &Instr, k: usize) -> Result<&Src, ExecError> {
    i.srcs.get(k).ok_or_else(|| ExecError::Unsupported(format!("{} is missing operand {k}", i.op.name())))
}

fn dst_reg(i: &Instr) -> Result<crate::sass::instr::RegRef, ExecError> {
    match i.dsts.iter().find(|d| matches!(d, Dst::Reg(_))) {
        Some(Dst::Reg(r)) => Ok(*r),
        _ => Err(ExecError::Unsupported(format!("{} without a register destination", i.op.name()))),
    }
}

impl Sim<'_> {
    /// A source operand of float type `t` as binary64 bits widened from binary32 (F32, no
    /// modifiers applied) or the raw 64 bits (F64), per lane.
    fn fsrc(&self, w: &Warp, s: &Src, t: FType, mask: u32) -> Result<Lanes64, ExecError> {
        match t {
            FType::F32 => {
                let v = w.gather(s, &self.banks, mask)?;
                Ok(v.map(|x| x as u64))
            }
            FType::F64 => w.gather64(s, &self.banks),
            FType::F16 => {
                let v = w.gather(s, &self.banks, mask)?;
                Ok(v.map(|x| (x & 0xffff) as u64))
            }
        }
    }

    /// Executes float arithmetic, comparisons and conversions in the lanes of `mask`.
    /// Returns false for an opcode of another family.
    pub(in crate::exec::sim) fn exec_float(&mut self, w: &mut Warp, i: &Instr, mask: u32) -> Result<bool, ExecError> {
        let g = |w: &Warp, s: &Self, k: usize| -> Result<Lanes, ExecError> { w.gather(src(i, k)?, &s.banks, mask) };
        let g64 = |w: &Warp, s: &Self, k: usize| -> Result<Lanes64, ExecError> { w.gather64(src(i, k)?, &s.banks) };
        let mut out: Lanes = [0; WARP_SIZE];
        let mut out64: Lanes64 = [0; WARP_SIZE];
        let mut wide = false;
        match i.op {
            Op::Fadd(m) | Op::Fadd32i(m) | Op::Fmul(m) | Op::Fmul32i(m) => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                let add = matches!(i.op, Op::Fadd(_) | Op::Fadd32i(_));
                for l in lanes(mask) {
                    let (x, y) = (in32(a.at(l), sa, m.ftz), in32(b.at(l), sb, m.ftz));
                    out.set(l, out32(if add { fadd(x, y, m.rnd) } else { fmul(x, y, m.rnd) }, m));
                }
            }
            Op::Ffma(m) | Op::Ffma32i(m) => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                // FFMA32I Rd, Ra, imm, Rc: without a third source the addend is Rd.
                let (sc, c) = match i.srcs.get(2) {
                    Some(s) => (*s, g(w, self, 2)?),
                    None => {
                        let d = dst_reg(i)?;
                        let s = Src::reg(d);
                        (s, w.gather(&s, &self.banks, mask)?)
                    }
                };
                for l in lanes(mask) {
                    let (x, y, z) = (in32(a.at(l), sa, m.ftz), in32(b.at(l), sb, m.ftz), in32(c.at(l), &sc, m.ftz));
                    out.set(l, out32(ffma(x, y, z, m.rnd), m));
                }
            }
            Op::Fmnmx { ftz } => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b, p) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                for l in lanes(mask) {
                    let (x, y) = (in32(a.at(l), sa, ftz), in32(b.at(l), sb, ftz));
                    let r = fminmax(x as f64, y as f64, p >> l & 1 == 1) as f32;
                    out.set(l, out32(r, FMods { ftz, ..Default::default() }));
                }
            }
            Op::Fsetp { cmp, ftz, bop } => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b, pc) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                let mut r = 0u32;
                for l in lanes(mask) {
                    if fcmp(cmp, in32(a.at(l), sa, ftz) as f64, in32(b.at(l), sb, ftz) as f64) {
                        r |= 1 << l;
                    }
                }
                self.set_cmp_preds(w, i, mask, r, bop, pc);
                return Ok(true);
            }
            Op::Dadd(rnd) | Op::Dmul(rnd) => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b) = (g64(w, self, 0)?, g64(w, self, 1)?);
                for l in lanes(mask) {
                    let (x, y) = (in64(a.at(l), sa), in64(b.at(l), sb));
                    out64.set(l, bits64(if matches!(i.op, Op::Dadd(_)) { dadd(x, y, rnd) } else { dmul(x, y, rnd) }));
                }
                wide = true;
            }
            Op::Dfma(rnd) => {
                let (sa, sb, sc) = (src(i, 0)?, src(i, 1)?, src(i, 2)?);
                let (a, b, c) = (g64(w, self, 0)?, g64(w, self, 1)?, g64(w, self, 2)?);
                for l in lanes(mask) {
                    out64.set(l, bits64(dfma(in64(a.at(l), sa), in64(b.at(l), sb), in64(c.at(l), sc), rnd)));
                }
                wide = true;
            }
            Op::Dmnmx => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b, p) = (g64(w, self, 0)?, g64(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                for l in lanes(mask) {
                    out64.set(l, bits64(fminmax(in64(a.at(l), sa), in64(b.at(l), sb), p >> l & 1 == 1)));
                }
                wide = true;
            }
            Op::Dsetp { cmp, bop } => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b, pc) = (g64(w, self, 0)?, g64(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                let mut r = 0u32;
                for l in lanes(mask) {
                    if fcmp(cmp, in64(a.at(l), sa), in64(b.at(l), sb)) {
                        r |= 1 << l;
                    }
                }
                self.set_cmp_preds(w, i, mask, r, bop, pc);
                return Ok(true);
            }
            Op::I2f { dst, src: st, rnd } => {
                let v = self.isrc(w, src(i, 0)?, st, mask)?;
                let s = src(i, 0)?;
                for l in lanes(mask) {
                    let x = int_with_mods(int_value(v.at(l), st), s);
                    match dst {
                        FType::F32 => out.set(l, i2f32(x, rnd).to_bits()),
                        FType::F64 => out64.set(l, i2f64(x, rnd).to_bits()),
                        // The half in the low 16 bits, as F2F.F16 writes it (ptxas 11.8:
                        // `I2F.F16.U16` for `cvt.rn.f16.u16`). Exact: an integer beyond
                        // 2^53, where the f64 rounds, overflows binary16 either way.
                        FType::F16 => out.set(l, f16_bits(x as f64, rnd) as u32),
                    }
                }
                wide = dst == FType::F64;
            }
            Op::F2i { dst, src: st, rnd, ftz } => {
                let v = self.fsrc(w, src(i, 0)?, st, mask)?;
                let s = src(i, 0)?;
                for l in lanes(mask) {
                    // An F16 source is the low half of the register (ptxas 11.8:
                    // `F2I.U16.F16 R0, R0` for `cvt.rni.u16.f16`; was read as the bits
                    // of an f64, giving 0 for every half).
                    let x = match st {
                        FType::F32 => in32(v.at(l) as u32, s, ftz) as f64,
                        FType::F16 => in64(f16_value(v.at(l) as u16).to_bits(), s),
                        FType::F64 => in64(v.at(l), s),
                    };
                    out64.set(l, int_bits(f2i(x, dst, rnd), dst));
                    out.set(l, out64.at(l) as u32);
                }
                wide = dst.regs() == 2;
            }
            Op::F2f { dst, src: st, rnd, ftz, int } | Op::F2fSat { dst, src: st, rnd, ftz, int } => {
                // `.SAT`: clamped to [0, 1], NaN to +0 (PTX ISA 9.7.9.21 `cvt` `.sat`).
                let sat = matches!(i.op, Op::F2fSat { .. });
                let v = self.fsrc(w, src(i, 0)?, st, mask)?;
                let s = src(i, 0)?;
                for l in lanes(mask) {
                    let x = match st {
                        FType::F32 => in32(v.at(l) as u32, s, ftz) as f64,
                        FType::F16 => f16_value(v.at(l) as u16),
                        FType::F64 => in64(v.at(l), s),
                    };
                    let x = if int {
                        match rnd {
                            Rnd::Rn => x.round_ties_even(),
                            Rnd::Rm => x.floor(),
                            Rnd::Rp => x.ceil(),
                            Rnd::Rz => x.trunc(),
                        }
                    } else {
                        x
                    };
                    let clamped = if x.is_nan() || x <= 0.0 { 0.0 } else { x.min(1.0) };
                    match dst {
                        FType::F32 => {
                            let r = if st == FType::F64 { f64_to_f32(x, rnd) } else { x as f32 };
                            out.set(l, out32(r, FMods { ftz, sat, ..Default::default() }));
                        }
                        FType::F64 => out64.set(l, bits64(if sat { clamped } else { x })),
                        FType::F16 => out.set(l, f16_bits(if sat { clamped } else { x }, rnd) as u32),
                    }
                }
                wide = dst == FType::F64;
            }
            Op::I2i { dst, src: st } => {
                let v = self.isrc(w, src(i, 0)?, st, mask)?;
                let s = src(i, 0)?;
                for l in lanes(mask) {
                    out64.set(l, int_bits(int_with_mods(int_value(v.at(l), st), s), dst));
                    out.set(l, out64.at(l) as u32);
                }
                wide = dst.regs() == 2;
            }
            _ => return Ok(false),
        }
        let d = dst_reg(i)?;
        if wide {
            w.write64(d, mask, &out64);
        } else {
            w.write32(d, mask, &out);
        }
        Ok(true)
    }

    /// An integer source of type `t`: one register, or a pair for 64-bit types.
    fn isrc(&self, w: &Warp, s: &Src, t: IType, mask: u32) -> Result<Lanes64, ExecError> {
        if t.regs() == 2 { w.gather64(s, &self.banks) } else { Ok(w.gather(s, &self.banks, mask)?.map(|x| x as u64)) }
    }

    fn set_cmp_preds(&self, w: &mut Warp, i: &Instr, mask: u32, r: u32, bop: crate::sass::op::BoolOp, pc: u32) {
        let preds: Vec<Reg> =
            i.dsts.iter().filter_map(|d| if let Dst::Pred(p) = d { Some(*p) } else { None }).collect();
        if let Some(p) = preds.first() {
            w.set_pred(*p, mask, crate::exec::sim::arith::alu::bool_op(bop, r, pc));
        }
        if let Some(q) = preds.get(1) {
            w.set_pred(*q, mask, crate::exec::sim::arith::alu::bool_op(bop, !r, pc));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding() {
        let a = 1.0f32;
        let b = f32::EPSILON / 4.0;
        assert_eq!(fadd(a, b, Rnd::Rn), 1.0);
        assert_eq!(fadd(a, b, Rnd::Rz), 1.0);
        assert_eq!(fadd(a, b, Rnd::Rp), 1.0f32.next_up());
        assert_eq!(fadd(-a, -b, Rnd::Rm), (-1.0f32).next_down());
        assert_eq!(fadd(-a, -b, Rnd::Rz), -1.0);
        assert!(fadd(1.0, -1.0, Rnd::Rm).is_sign_negative());
        assert!(fadd(1.0, -1.0, Rnd::Rn).is_sign_positive());
        assert_eq!(fmul(f32::MAX, 2.0, Rnd::Rz), f32::MAX);
        assert_eq!(fmul(f32::MAX, 2.0, Rnd::Rn), f32::INFINITY);
        assert_eq!(i2f32(16_777_217, Rnd::Rn), 16_777_216.0);
        assert_eq!(i2f32(16_777_217, Rnd::Rp), 16_777_218.0);
        assert_eq!(i2f32(-16_777_217, Rnd::Rz), -16_777_216.0);
        assert_eq!(f2i(2.5, IType::S32, IRnd::Round), 2);
        assert_eq!(f2i(-2.5, IType::S32, IRnd::Floor), -3);
        assert_eq!(f2i(-2.5, IType::S32, IRnd::Ceil), -2);
        assert_eq!(f2i(-2.7, IType::S32, IRnd::Trunc), -2);
        assert_eq!(f2i(1e20, IType::S32, IRnd::Trunc), i32::MAX as i128);
        assert_eq!(f2i(-1.0, IType::U32, IRnd::Trunc), 0);
        assert_eq!(f2i(f64::NAN, IType::S32, IRnd::Trunc), 0);
        assert_eq!(dadd(1.0, f64::EPSILON / 4.0, Rnd::Rp), 1.0f64.next_up());
        // Near the overflow threshold (TwoSum's intermediate overflows): the exact
        // difference lies between 0xffe3cfffffffffff and 0xffe3d00000000000 (checked with
        // exact rationals); .rp takes the first, .rm and .rn the second.
        let (a, b) = (f64::from_bits(0x7fd8_5fff_ffff_ffff), -f64::MAX);
        assert_eq!(dadd(a, b, Rnd::Rp).to_bits(), 0xffe3_cfff_ffff_ffff);
        assert_eq!(dadd(a, b, Rnd::Rz).to_bits(), 0xffe3_cfff_ffff_ffff);
        assert_eq!(dadd(a, b, Rnd::Rm).to_bits(), 0xffe3_d000_0000_0000);
        assert_eq!(dmul(1.0 + f64::EPSILON, 1.0 + f64::EPSILON, Rnd::Rz), 1.0 + 2.0 * f64::EPSILON);
        assert_eq!(dmul(f64::MAX, 2.0, Rnd::Rz), f64::MAX);
        // A subnormal product whose error is below the smallest subnormal.
        let (a, b) = (f64::from_bits(0x0000_0001_0000_0001), 0.75 + f64::EPSILON);
        assert_eq!(dmul(a, b, Rnd::Rz), f64::from_bits(0x0000_0000_c000_0000));
        assert_eq!(dmul(a, b, Rnd::Rp), f64::from_bits(0x0000_0000_c000_0001));
        // A product below half the smallest subnormal.
        let tiny = f64::from_bits(1);
        assert_eq!(dmul(tiny, -tiny, Rnd::Rm), -tiny);
        assert_eq!(dmul(tiny, -tiny, Rnd::Rz).to_bits(), (-0.0f64).to_bits());
        assert_eq!(dmul(tiny, tiny, Rnd::Rp), tiny);
        assert_eq!(dmul(f64::MAX, -2.0, Rnd::Rm), f64::NEG_INFINITY);
        assert_eq!(dmul(f64::MAX, -2.0, Rnd::Rp), -f64::MAX);
        assert_eq!(dadd(f64::MAX, f64::MAX, Rnd::Rm), f64::MAX);
        assert_eq!(dadd(f64::MAX, f64::MAX, Rnd::Rp), f64::INFINITY);
        assert_eq!(dadd(f64::INFINITY, 1.0, Rnd::Rz), f64::INFINITY);
        assert_eq!(f64_to_f32(1.0 + f64::EPSILON, Rnd::Rp), 1.0f32.next_up());
        assert_eq!(ffma(1.0, 1.0, f32::EPSILON / 4.0, Rnd::Rp), 1.0f32.next_up());
    }

    /// DFMA's directed roundings near the overflow threshold, against the PTX interpreter's
    /// exact soft-float `fma` (an independent implementation): a product above DBL_MAX
    /// cancelled by `c` (`(1 + 2^-52) 2^1000 * (2^24 + 3) - DBL_MAX` is inexact, halfway
    /// between two doubles), and operands whose TwoSum intermediates overflow.
    #[test]
    fn dfma_directed_near_overflow() {
        use crate::exec::ptx::arith::float::{F64, Mode, fma};
        let modes = [(Rnd::Rn, Mode::Rn), (Rnd::Rz, Mode::Rz), (Rnd::Rm, Mode::Rm), (Rnd::Rp, Mode::Rp)];
        let a = f64::from_bits(0x7e70_0000_0000_0001);
        let b = 16_777_219.0;
        let c = -f64::MAX;
        let check = |a: f64, b: f64, c: f64| {
            for (rnd, mode) in modes {
                let want = fma(a.to_bits(), b.to_bits(), c.to_bits(), F64, mode);
                let got = dfma(a, b, c, rnd).to_bits();
                assert_eq!(got, want, "dfma({a:e}, {b:e}, {c:e}, {rnd:?}): {got:#x}, exact rounding {want:#x}");
            }
        };
        check(a, b, c);
        check(-a, b, -c);
        check(a, -b, -c);
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..20_000 {
            // Exponents within 2^8 of the threshold: products from 2^1016 to beyond DBL_MAX.
            let big = |r: u64, e: u64| f64::from_bits((r & 0x800f_ffff_ffff_ffff) | ((e & 0x7ff) << 52));
            let (ra, rb, rc) = (next(), next(), next());
            let ea = 0x3ff + 500 + (ra >> 20) % 24;
            let eb = 0x3ff + 500 + (rb >> 20) % 24;
            let ec = 0x7ef + (rc >> 20) % 16;
            check(big(ra, ea), big(rb, eb), big(rc, ec));
            check(big(ra, 0x7fe - (ra >> 30) % 3), big(rb, 0x3ff), big(rc, ec));
        }
    }
}
