//! IEEE 754 binary floating point with every PTX rounding mode (PTX ISA 9.7.3 "Floating
//! Point Instructions", 9.7.9.21 cvt "Floating Point Rounding Modifiers").
//!
//! Values are bit patterns (`u64`, the low bits used) in a [`Format`]. Each operation
//! computes the exact result (or an exact result plus a "sticky" remainder smaller than
//! one unit of the last kept bit) with integers, then rounds once with [`round`]. This
//! gives correctly rounded `.rn/.rz/.rm/.rp` (and `.rna`) results for add, sub, mul, fma,
//! div, sqrt and conversions, including subnormals and overflow.
//!
//! A NaN result is the canonical NaN of the format ([`Format::nan`]): the interpreter's
//! choice, since PTX leaves NaN payloads unspecified.
//!
//! Bounds: formats are the four constants below (at most 11 exponent and 52 fraction
//! bits), so exponents stay within a few thousand and significands below 2^126 (see
//! [`round`]); exponent sums use saturating `i32` arithmetic and significand arithmetic is
//! exact in `u128` (`wrapping_*` that never wraps, with the bound at each site).

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::ptx::value::mask;

/// A binary interchange format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// Stored fraction bits (precision minus one).
    pub frac: u32,
    /// Exponent field bits.
    pub exp: u32,
}

/// `.f16` (binary16).
pub const F16: Format = Format { frac: 10, exp: 5 };
/// `.bf16`.
pub const BF16: Format = Format { frac: 7, exp: 8 };
/// `.f32` (binary32).
pub const F32: Format = Format { frac: 23, exp: 8 };
/// `.f64` (binary64).
pub const F64: Format = Format { frac: 52, exp: 11 };

impl Format {
    fn bias(self) -> i32 {
        mask(self.exp.saturating_sub(1)) as i32 // exp <= 11
    }
    fn emin(self) -> i32 {
        1i32.saturating_sub(self.bias())
    }
    /// The bits below the sign: exponent and fraction fields.
    fn magnitude(self) -> u64 {
        mask(self.frac.saturating_add(self.exp))
    }
    fn emax(self) -> i32 {
        self.bias()
    }
    /// The sign bit.
    pub fn sign(self) -> u64 {
        1 << self.frac.saturating_add(self.exp) // at most 63
    }
    /// Positive infinity.
    pub fn inf(self) -> u64 {
        mask(self.exp) << self.frac
    }
    /// The canonical NaN: every bit but the sign set (`0x7fffffff` for f32).
    pub fn nan(self) -> u64 {
        self.magnitude()
    }
    /// The largest finite magnitude.
    pub fn max(self) -> u64 {
        self.inf().saturating_sub(1) // inf > 0
    }
    /// True if `b` is a NaN.
    pub fn is_nan(self, b: u64) -> bool {
        b & self.magnitude() > self.inf()
    }
    /// True if `b` is a subnormal (nonzero with a zero exponent field).
    pub fn is_subnormal(self, b: u64) -> bool {
        b & self.magnitude() != 0 && b & self.inf() == 0
    }
    /// `.ftz`: a subnormal becomes a zero of the same sign (PTX ISA 9.7.3 "Subnormal
    /// numbers").
    pub fn ftz(self, b: u64) -> u64 {
        if self.is_subnormal(b) { b & self.sign() } else { b }
    }
}

/// A rounding direction (PTX ISA 9.7.3: `.rn` nearest even, `.rna` nearest away from zero,
/// `.rz` toward zero, `.rm` toward -inf, `.rp` toward +inf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// To nearest, ties to even.
    Rn,
    /// To nearest, ties away from zero.
    Rna,
    /// Toward zero.
    Rz,
    /// Toward minus infinity.
    Rm,
    /// Toward plus infinity.
    Rp,
}

/// A decoded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Any NaN.
    Nan,
    /// An infinity, negative if true.
    Inf(bool),
    /// A zero, negative if true.
    Zero(bool),
    /// `(-1)^neg * mant * 2^exp`, exactly.
    Finite {
        /// Sign.
        neg: bool,
        /// Integer significand (nonzero).
        mant: u128,
        /// Power of two.
        exp: i32,
    },
}

/// Decodes `b` in format `f`.
pub fn unpack(b: u64, f: Format) -> Class {
    let neg = b & f.sign() != 0;
    let e_all = mask(f.exp) as i32; // exp <= 11
    let e = ((b >> f.frac) as i32) & e_all;
    let m = b & mask(f.frac);
    if e == e_all {
        return if m == 0 { Class::Inf(neg) } else { Class::Nan };
    }
    if e == 0 {
        if m == 0 {
            return Class::Zero(neg);
        }
        return Class::Finite { neg, mant: m as u128, exp: f.emin().saturating_sub(f.frac as i32) };
    }
    let exp = e.saturating_sub(f.bias()).saturating_sub(f.frac as i32);
    Class::Finite { neg, mant: (m | 1 << f.frac) as u128, exp }
}

fn signed(neg: bool, f: Format, mag: u64) -> u64 {
    if neg { mag | f.sign() } else { mag }
}

fn overflow(neg: bool, f: Format, mode: Mode) -> u64 {
    let to_inf = match mode {
        Mode::Rn | Mode::Rna => true,
        Mode::Rz => false,
        Mode::Rm => neg,
        Mode::Rp => !neg,
    };
    signed(neg, f, if to_inf { f.inf() } else { f.max() })
}

/// Rounds `(-1)^neg * (mant + s) * 2^exp` to format `f`, where `s` is 0 if `!sticky` and
/// some value strictly between 0 and 1 if `sticky`. `mant` must be below 2^126. A zero
/// result keeps the sign `neg`.
pub fn round(neg: bool, mant: u128, exp: i32, sticky: bool, f: Format, mode: Mode) -> u64 {
    debug_assert!(mant < 1 << 126);
    if mant == 0 && !sticky {
        return signed(neg, f, 0);
    }
    // Exponents: `exp` is an operation's (a few thousand at most) and n <= 128.
    let n = 128i32.saturating_sub(mant.leading_zeros() as i32);
    // Exponent of the leading bit (for mant == 0 with sticky: below anything).
    let top = if mant == 0 { exp.saturating_sub(1) } else { exp.saturating_add(n).saturating_sub(1) };
    if top > f.emax().saturating_add(1) {
        return overflow(neg, f, mode);
    }
    let q_exp = top.max(f.emin()).saturating_sub(f.frac as i32);
    let shift = q_exp.saturating_sub(exp);
    let (mut q, rest, above, tie) = if shift <= 0 {
        // -shift <= frac + 1 - n: the kept bits fit.
        (mant << shift.unsigned_abs(), sticky, false, false)
    } else if shift >= 127 {
        (0, true, false, false)
    } else {
        let s = shift.unsigned_abs(); // 1..=126
        let rem = mant & (1u128 << s).wrapping_sub(1);
        let half = 1u128 << s.saturating_sub(1);
        (mant >> s, rem != 0 || sticky, rem > half || (rem == half && sticky), rem == half && !sticky)
    };
    let up = match mode {
        Mode::Rn => above || (tie && q & 1 == 1),
        Mode::Rna => above || tie,
        Mode::Rz => false,
        Mode::Rm => rest && neg,
        Mode::Rp => rest && !neg,
    };
    // q < 2^(frac + 1): adding 1 may carry into the exponent field, as IEEE rounding does.
    q = q.wrapping_add(u128::from(up));
    // top <= emax + 1 here, so the field is at most 2^exp - 1 (infinity, caught below).
    let field = top.max(f.emin()).saturating_add(f.bias()).saturating_sub(1) as u128;
    let bits = (field << f.frac).wrapping_add(q);
    if bits >= f.inf() as u128 {
        return overflow(neg, f, mode);
    }
    signed(neg, f, bits as u64)
}

/// Exact sum `a + b` of two finite values as (neg, mant, exp, sticky), mant below 2^126;
/// `None` when it is exactly zero.
fn exact_add(a: (bool, u128, i32), b: (bool, u128, i32)) -> Option<(bool, u128, i32, bool)> {
    // Put each leading bit at position 112, then align the smaller exponent with jamming.
    // m > 0, so the shift s is in -112..=112.
    let norm = |(neg, m, e): (bool, u128, i32)| {
        let s = (m.leading_zeros() as i32).saturating_sub(15);
        let k = s.unsigned_abs();
        if s >= 0 {
            (neg, m << k, e.saturating_sub(s), false)
        } else {
            (neg, m >> k, e.saturating_sub(s), m & mask_u128(k) != 0)
        }
    };
    let (mut x, mut y) = (norm(a), norm(b));
    if y.2 > x.2 || (y.2 == x.2 && y.1 > x.1) {
        std::mem::swap(&mut x, &mut y);
    }
    let d = x.2.saturating_sub(y.2).unsigned_abs(); // x.2 >= y.2
    let (ym, ystick) = if d == 0 {
        (y.1, y.3)
    } else if d >= 120 {
        (0, y.1 != 0 || y.3)
    } else {
        (y.1 >> d, y.1 & mask_u128(d) != 0 || y.3)
    };
    // Jam the smaller operand's lost bits into its last bit (>= 60 guard bits remain).
    let ym = ym | u128::from(ystick);
    // Both below 2^113, and x >= y in magnitude: neither wraps.
    let m = if x.0 == y.0 { x.1.wrapping_add(ym) } else { x.1.wrapping_sub(ym) };
    if m == 0 && !x.3 {
        return None;
    }
    Some((x.0, m, x.2, x.3))
}

/// The mask of the low `bits` (below 128) bits of a `u128`.
fn mask_u128(bits: u32) -> u128 {
    1u128.checked_shl(bits).map_or(u128::MAX, |b| b.wrapping_sub(1))
}

fn finite(c: Class) -> Option<(bool, u128, i32)> {
    match c {
        Class::Finite { neg, mant, exp } => Some((neg, mant, exp)),
        _ => None,
    }
}

/// `a + b` (PTX ISA 9.7.3.1 add).
pub fn add(a: u64, b: u64, f: Format, mode: Mode) -> u64 {
    let (ca, cb) = (unpack(a, f), unpack(b, f));
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => f.nan(),
        (Class::Inf(x), Class::Inf(y)) if x != y => f.nan(),
        (Class::Inf(x), _) | (_, Class::Inf(x)) => signed(x, f, f.inf()),
        (Class::Zero(x), Class::Zero(y)) => signed(if x == y { x } else { mode == Mode::Rm }, f, 0),
        (Class::Zero(_), _) => b,
        (_, Class::Zero(_)) => a,
        _ => match finite(ca).zip(finite(cb)).and_then(|(x, y)| exact_add(x, y)) {
            Some((neg, m, e, s)) => round(neg, m, e, s, f, mode),
            // Exactly zero (both operands are finite and nonzero here).
            None => signed(mode == Mode::Rm, f, 0),
        },
    }
}

/// `a * b` (PTX ISA 9.7.3.3 mul).
pub fn mul(a: u64, b: u64, f: Format, mode: Mode) -> u64 {
    match product(a, b, f) {
        Prod::Nan => f.nan(),
        Prod::Inf(n) => signed(n, f, f.inf()),
        Prod::Zero(n) => signed(n, f, 0),
        Prod::Finite(n, m, e) => round(n, m, e, false, f, mode),
    }
}

enum Prod {
    Nan,
    Inf(bool),
    Zero(bool),
    Finite(bool, u128, i32),
}

fn product(a: u64, b: u64, f: Format) -> Prod {
    let (ca, cb) = (unpack(a, f), unpack(b, f));
    let neg = (a ^ b) & f.sign() != 0;
    match (ca, cb) {
        (Class::Nan, _) | (_, Class::Nan) => Prod::Nan,
        (Class::Inf(_), Class::Zero(_)) | (Class::Zero(_), Class::Inf(_)) => Prod::Nan,
        (Class::Inf(_), _) | (_, Class::Inf(_)) => Prod::Inf(neg),
        (Class::Zero(_), _) | (_, Class::Zero(_)) => Prod::Zero(neg),
        (Class::Finite { mant: x, exp: ex, .. }, Class::Finite { mant: y, exp: ey, .. }) => {
            // Significands below 2^53: the product is exact in 128 bits.
            Prod::Finite(neg, x.wrapping_mul(y), ex.saturating_add(ey))
        }
    }
}

/// `a * b + c` with a single rounding (PTX ISA 9.7.3.5 fma).
pub fn fma(a: u64, b: u64, c: u64, f: Format, mode: Mode) -> u64 {
    let cc = unpack(c, f);
    match (product(a, b, f), cc) {
        (Prod::Nan, _) | (_, Class::Nan) => f.nan(),
        (Prod::Inf(x), Class::Inf(y)) if x != y => f.nan(),
        (Prod::Inf(x), _) => signed(x, f, f.inf()),
        (_, Class::Inf(y)) => signed(y, f, f.inf()),
        (Prod::Zero(x), Class::Zero(y)) => signed(if x == y { x } else { mode == Mode::Rm }, f, 0),
        (Prod::Zero(_), _) => c,
        (Prod::Finite(n, m, e), Class::Zero(_)) => round(n, m, e, false, f, mode),
        (Prod::Finite(n, m, e), Class::Finite { neg, mant, exp }) => match exact_add((n, m, e), (neg, mant, exp)) {
            Some((neg, m, e, s)) => round(neg, m, e, s, f, mode),
            None => signed(mode == Mode::Rm, f, 0),
        },
    }
}

/// Shifts `m` so that its leading bit is at position `at`, adjusting `e`.
fn normalize(m: u128, e: i32, at: i32) -> (u128, i32) {
    // m > 0 below 2^53 and at = 52: the shift is 0..=52.
    let s = at.saturating_sub(127i32.saturating_sub(m.leading_zeros() as i32));
    (m << s.unsigned_abs(), e.saturating_sub(s))
}

/// `a / b` (PTX ISA 9.7.3.8 div).
pub fn div(a: u64, b: u64, f: Format, mode: Mode) -> u64 {
    let neg = (a ^ b) & f.sign() != 0;
    match (unpack(a, f), unpack(b, f)) {
        (Class::Nan, _) | (_, Class::Nan) => f.nan(),
        (Class::Inf(_), Class::Inf(_)) | (Class::Zero(_), Class::Zero(_)) => f.nan(),
        (Class::Inf(_), _) | (_, Class::Zero(_)) => signed(neg, f, f.inf()),
        (Class::Zero(_), _) | (_, Class::Inf(_)) => signed(neg, f, 0),
        (Class::Finite { mant: x, exp: ex, .. }, Class::Finite { mant: y, exp: ey, .. }) => {
            let (x, ex) = normalize(x, ex, 52);
            let (y, ey) = normalize(y, ey, 52);
            let num = x << 70;
            // y is a normalized significand (bit 52 set), never 0.
            let (q, r) = (num.checked_div(y).unwrap_or(0), num.checked_rem(y).unwrap_or(0));
            round(neg, q, ex.saturating_sub(70).saturating_sub(ey), r != 0, f, mode)
        }
    }
}

/// `sqrt(a)` (PTX ISA 9.7.3.10 sqrt): NaN for a negative nonzero input, `-0` for `-0`.
pub fn sqrt(a: u64, f: Format, mode: Mode) -> u64 {
    match unpack(a, f) {
        Class::Nan | Class::Inf(true) | Class::Finite { neg: true, .. } => f.nan(),
        Class::Inf(false) | Class::Zero(_) => a,
        Class::Finite { mant, exp, .. } => {
            let (mut m, mut e) = normalize(mant, exp, 52);
            if e & 1 != 0 {
                m <<= 1;
                e = e.saturating_sub(1);
            }
            let rad = m << 60;
            let r = rad.isqrt();
            // e - 60 is even; r * r <= rad < 2^114.
            round(false, r, e.saturating_sub(60) / 2, r.wrapping_mul(r) != rad, f, mode)
        }
    }
}

/// Converts between formats, or rounds within one (PTX ISA 9.7.9.21 cvt, float to float).
pub fn convert(a: u64, from: Format, to: Format, mode: Mode) -> u64 {
    match unpack(a, from) {
        Class::Nan => to.nan(),
        Class::Inf(n) => signed(n, to, to.inf()),
        Class::Zero(n) => signed(n, to, 0),
        Class::Finite { neg, mant, exp } => round(neg, mant, exp, false, to, mode),
    }
}

/// An integer (`neg` and magnitude) rounded to format `f` (PTX ISA 9.7.9.21 cvt, integer
/// to float).
pub fn from_int(neg: bool, mag: u64, f: Format, mode: Mode) -> u64 {
    round(neg, mag as u128, 0, false, f, mode)
}

/// `a` rounded to an integral value by `mode`: `None` for NaN, else (negative, magnitude)
/// with the magnitude saturated to `u128::MAX >> 2` for huge values and infinities.
pub fn to_integer(a: u64, f: Format, mode: Mode) -> Option<(bool, u128)> {
    const HUGE: u128 = u128::MAX >> 2;
    match unpack(a, f) {
        Class::Nan => None,
        Class::Inf(n) => Some((n, HUGE)),
        Class::Zero(n) => Some((n, 0)),
        Class::Finite { neg, mant, exp } => {
            if exp >= 0 {
                // Any value of 2^64 or more saturates every integer destination anyway.
                let m = if exp > 64 { HUGE } else { (mant << exp).min(HUGE) };
                return Some((neg, m));
            }
            let s = exp.unsigned_abs(); // exp < 0
            let (q, rem, half) = if s >= 120 {
                (0, mant, None)
            } else {
                (mant >> s, mant & mask_u128(s), Some(1u128 << s.saturating_sub(1)))
            };
            let (above, tie) = match half {
                Some(h) => (rem > h, rem == h),
                None => (false, false),
            };
            let up = match mode {
                Mode::Rn => above || (tie && q & 1 == 1),
                Mode::Rna => above || tie,
                Mode::Rz => false,
                Mode::Rm => rem != 0 && neg,
                Mode::Rp => rem != 0 && !neg,
            };
            Some((neg, q.wrapping_add(u128::from(up)))) // q < 2^53
        }
    }
}

/// `a` rounded to an integral value in the same format (`cvt.rni.f32.f32` etc.); the sign
/// of a zero result is the sign of `a`.
pub fn round_integral(a: u64, f: Format, mode: Mode) -> u64 {
    match unpack(a, f) {
        Class::Nan => f.nan(),
        Class::Finite { neg, exp, .. } if exp < 0 => match to_integer(a, f, mode) {
            Some((_, m)) => round(neg, m, 0, false, f, Mode::Rn),
            None => f.nan(), // not reached: `a` is finite
        },
        _ => a,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// Deterministic xorshift stream of interesting f32/f64 bit patterns.
    fn patterns(seed: u64, n: usize, f: Format) -> Vec<u64> {
        let mut s = seed;
        let mut out = vec![0, f.sign(), f.inf(), f.inf() | f.sign(), 1, f.max(), 1 << f.frac];
        for _ in 0..n {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let width = f.frac + f.exp + 1;
            let mut v = s & crate::exec::ptx::value::mask(width);
            // Bias the exponent toward a narrow band so that operands interact.
            if s >> 60 < 12 {
                let e = (f.bias() as u64 + (s >> 40) % 8) << f.frac;
                v = (v & (f.sign() | ((1 << f.frac) - 1))) | e;
            }
            out.push(v);
        }
        out
    }

    #[test]
    fn rn_matches_the_host_f32() {
        let v = patterns(0x9e37_79b9_7f4a_7c15, 300, F32);
        for &a in &v {
            for &b in v.iter().step_by(7) {
                let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
                let host = |r: f32| if r.is_nan() { F32.nan() } else { r.to_bits() as u64 };
                assert_eq!(add(a, b, F32, Mode::Rn), host(x + y), "{x:e} + {y:e}");
                assert_eq!(mul(a, b, F32, Mode::Rn), host(x * y), "{x:e} * {y:e}");
                assert_eq!(div(a, b, F32, Mode::Rn), host(x / y), "{x:e} / {y:e}");
                assert_eq!(fma(a, b, a, F32, Mode::Rn), host(x.mul_add(y, x)), "fma {x:e} {y:e}");
            }
            let x = f32::from_bits(a as u32);
            let s = x.sqrt();
            assert_eq!(sqrt(a, F32, Mode::Rn), if s.is_nan() { F32.nan() } else { s.to_bits() as u64 });
            let d = x as f64;
            assert_eq!(convert(a, F32, F64, Mode::Rn), if d.is_nan() { F64.nan() } else { d.to_bits() });
        }
    }

    #[test]
    fn rn_matches_the_host_f64() {
        let v = patterns(0x1234_5678_9abc_def1, 200, F64);
        for &a in &v {
            for &b in v.iter().step_by(5) {
                let (x, y) = (f64::from_bits(a), f64::from_bits(b));
                let host = |r: f64| if r.is_nan() { F64.nan() } else { r.to_bits() };
                assert_eq!(add(a, b, F64, Mode::Rn), host(x + y), "{x:e} + {y:e}");
                assert_eq!(mul(a, b, F64, Mode::Rn), host(x * y), "{x:e} * {y:e}");
                assert_eq!(div(a, b, F64, Mode::Rn), host(x / y), "{x:e} / {y:e}");
                assert_eq!(fma(a, b, b, F64, Mode::Rn), host(x.mul_add(y, y)), "fma {x:e} {y:e}");
                let c = x as f32;
                assert_eq!(convert(a, F64, F32, Mode::Rn), if c.is_nan() { F32.nan() } else { c.to_bits() as u64 });
            }
        }
    }

    #[test]
    fn directed_rounding() {
        let one = 1.0f32.to_bits() as u64;
        let tiny = (-(2.0f32.powi(-60))).to_bits() as u64;
        // 1 - 2^-60 rounds toward zero / down to the f32 below 1, to nearest / up to 1.
        let below = (1.0f32 - 2.0f32.powi(-24)).to_bits() as u64;
        assert_eq!(add(one, tiny, F32, Mode::Rz), below);
        assert_eq!(add(one, tiny, F32, Mode::Rm), below);
        assert_eq!(add(one, tiny, F32, Mode::Rn), one);
        assert_eq!(add(one, tiny, F32, Mode::Rp), one);
        // x - x is -0 only when rounding down.
        assert_eq!(add(one, one | F32.sign(), F32, Mode::Rm), F32.sign());
        assert_eq!(add(one, one | F32.sign(), F32, Mode::Rn), 0);
        // Overflow: toward zero saturates at the largest finite value.
        let big = f32::MAX.to_bits() as u64;
        assert_eq!(add(big, big, F32, Mode::Rz), big);
        assert_eq!(add(big, big, F32, Mode::Rn), F32.inf());
        assert_eq!(mul(big | F32.sign(), big, F32, Mode::Rp), big | F32.sign());
        // 1/3 in each direction.
        let three = 3.0f64.to_bits();
        let lo = div(1.0f64.to_bits(), three, F64, Mode::Rz);
        let hi = div(1.0f64.to_bits(), three, F64, Mode::Rp);
        assert_eq!(hi, lo + 1);
        assert_eq!(sqrt(2.0f64.to_bits(), F64, Mode::Rn), 2f64.sqrt().to_bits());
        // The f64 nearest sqrt(2) lies above it: .rp gives it, .rz the value below.
        assert_eq!(sqrt(2.0f64.to_bits(), F64, Mode::Rp), 2f64.sqrt().to_bits());
        assert_eq!(sqrt(2.0f64.to_bits(), F64, Mode::Rz), 2f64.sqrt().to_bits() - 1);
    }

    #[test]
    fn integers() {
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(to_integer(f(2.5), F32, Mode::Rn), Some((false, 2)));
        assert_eq!(to_integer(f(3.5), F32, Mode::Rn), Some((false, 4)));
        assert_eq!(to_integer(f(-2.5), F32, Mode::Rm), Some((true, 3)));
        assert_eq!(to_integer(f(-2.5), F32, Mode::Rz), Some((true, 2)));
        assert_eq!(to_integer(f(f32::NAN), F32, Mode::Rz), None);
        assert_eq!(to_integer(1e300f64.to_bits(), F64, Mode::Rz), Some((false, u128::MAX >> 2)));
        assert_eq!(to_integer(f(-3e38), F32, Mode::Rz), Some((true, u128::MAX >> 2)));
        assert_eq!(round_integral(f(-0.25), F32, Mode::Rn), f(-0.0));
        assert_eq!(round_integral(f(0.25), F32, Mode::Rp), f(1.0));
        assert_eq!(from_int(false, 16_777_217, F32, Mode::Rn), f(16_777_216.0));
        assert_eq!(from_int(false, 16_777_217, F32, Mode::Rp), f(16_777_218.0));
        assert_eq!(convert(f(65520.0), F32, F16, Mode::Rn), F16.inf());
        assert_eq!(convert(f(65520.0), F32, F16, Mode::Rz), 0x7bff);
    }
}
