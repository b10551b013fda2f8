//! The multi-function unit (`MUFU.fn`) and its range-reduction companion (`RRO`).
//!
//! SPA 5.0 documents no exact MUFU results, only the error bounds PTX states for the
//! `.approx` instructions that map onto it (PTX ISA 9.7.3: `rcp.approx.f32` 1 ulp,
//! `rsqrt.approx.f32` 2 ulp, `ex2.approx.ftz.f32` 2 ulp, `lg2.approx.ftz.f32` 2^-22.6
//! absolute near 1, `sin/cos.approx.ftz.f32` 2^-20.9 absolute in [-pi, pi]). The model:
//!
//! * every f32 function returns the correctly rounded value of the exact function moved
//!   by `-2..=+2` ulp, chosen by a hash of the launch seed and the operand (a fixed function
//!   of the input for one seed, as hardware is, but a different one per seed; see
//!   [`super::int::rcp_approx`]). So a sequence that needs a particular rounding of the
//!   estimate fails under some seed, and a Newton sequence claimed to be correctly rounded
//!   is only accepted if it is correct for every perturbation;
//! * MUFU flushes subnormal operands to zero of the same sign, and subnormal results to
//!   zero (hardware MUFU always does; ptxas scales subnormal operands of the non-`.ftz`
//!   PTX forms itself, see `lower::float`);
//! * special operands follow the exact function (`rsq(+0) = +inf`, `rsq(-0) = -inf`,
//!   `rsq(x<0) = NaN`, `lg2(0) = -inf`, `ex2(-inf) = 0`, ...); NaN gives the canonical NaN;
//! * `RCP64H`/`RSQ64H` take the high word of an f64 (its low word taken as 0) and return
//!   the high word of the estimate: the exact value's high word moved by `-2..=+2` units
//!   of its last bit (about 20 bits of precision, as ptxas's Newton sequences assume);
//!   an f64 subnormal operand is flushed; NaN gives `0x7fffffff` (the canonical f64 NaN's
//!   high word);
//! * `RRO.SINCOS x` returns `x / 2pi` reduced to `[-0.5, 0.5]` turns, rounded to f32
//!   (NaN and infinities give NaN), and `MUFU.SIN/.COS t` computes `sin/cos(2pi t)`: so a
//!   MUFU.SIN without its RRO computes the wrong function and differential tests catch
//!   it. The hardware format of RRO's result is not documented; only the composition is
//!   modelled.
//! * `RRO.EX2 x` returns `x` unchanged (hardware converts to a fixed-point format that is
//!   not documented; `MUFU.EX2` here takes the plain f32).

use super::float::NAN32;
use super::int::{mix, rcp_approx};
use crate::sass::op::MufuOp;

/// `x` moved by `steps` ulp in magnitude, staying finite, normal and of the same sign
/// (else `x` itself); subnormal results flush to zero.
fn perturb32(x: f32, steps: i32) -> u32 {
    if x.is_nan() {
        return NAN32;
    }
    if x.is_subnormal() {
        return 0.0f32.copysign(x).to_bits();
    }
    if x == 0.0 || x.is_infinite() {
        return x.to_bits();
    }
    let out = f32::from_bits((x.to_bits() as i64 + steps as i64) as u32);
    if out.is_finite() && out.is_normal() && out.is_sign_negative() == x.is_sign_negative() {
        out.to_bits()
    } else {
        x.to_bits()
    }
}

/// The perturbation in `-2..=2` ulp for operand `a` of function `f` under `seed`.
fn steps(f: MufuOp, a: u32, seed: u64) -> i32 {
    (mix(seed ^ (f as u64).wrapping_mul(0x51_7cc1_b727_220a), a as u64) % 5) as i32 - 2
}

/// The f32 operand with subnormals flushed to zero.
fn ftz(a: u32) -> f32 {
    let x = f32::from_bits(a);
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

/// The high word of an f64 estimate `r` (exact function value), moved by `k` units.
fn high_word(r: f64, k: i32) -> u32 {
    if r.is_nan() {
        return (super::float::NAN64 >> 32) as u32;
    }
    if r == 0.0 || r.is_infinite() {
        return (r.to_bits() >> 32) as u32;
    }
    if r.is_subnormal() {
        return (0.0f64.copysign(r).to_bits() >> 32) as u32;
    }
    let hi = (r.to_bits() >> 32) as i64 + k as i64;
    let out = f64::from_bits((hi as u64) << 32);
    if out.is_finite() && out.is_normal() && out.is_sign_negative() == r.is_sign_negative() {
        hi as u32
    } else {
        (r.to_bits() >> 32) as u32
    }
}

/// `MUFU.f` of the 32-bit operand `a` under the perturbation seed `seed` (module notes).
pub fn mufu(f: MufuOp, a: u32, seed: u64) -> u32 {
    let k = steps(f, a, seed);
    let x = ftz(a) as f64;
    let f32r = |r: f64| perturb32(r as f32, k);
    match f {
        MufuOp::Rcp => rcp_approx(a, seed),
        MufuOp::Rsq => {
            if x.is_nan() || x < 0.0 {
                NAN32
            } else if x == 0.0 {
                f32::INFINITY.copysign(x as f32).to_bits()
            } else {
                f32r(1.0 / x.sqrt())
            }
        }
        MufuOp::Sin | MufuOp::Cos => {
            if !x.is_finite() {
                return NAN32;
            }
            let t = 2.0 * std::f64::consts::PI * x;
            f32r(if f == MufuOp::Sin { t.sin() } else { t.cos() })
        }
        MufuOp::Ex2 => f32r(x.exp2()),
        MufuOp::Lg2 => {
            if x.is_nan() || x < 0.0 {
                NAN32
            } else {
                f32r(x.log2())
            }
        }
        MufuOp::Rcp64h | MufuOp::Rsq64h => {
            let mut v = f64::from_bits((a as u64) << 32);
            if v.is_subnormal() {
                v = 0.0f64.copysign(v);
            }
            let r = if f == MufuOp::Rcp64h {
                1.0 / v
            } else if v.is_nan() || v < 0.0 {
                f64::NAN
            } else if v == 0.0 {
                f64::INFINITY.copysign(v)
            } else {
                1.0 / v.sqrt()
            };
            high_word(r, k)
        }
    }
}

/// `RRO.SINCOS` (`ex2` false) or `RRO.EX2` of the f32 operand `a` (module notes).
pub fn rro(ex2: bool, a: u32) -> u32 {
    if ex2 {
        return a;
    }
    let x = ftz(a) as f64;
    if !x.is_finite() {
        return NAN32;
    }
    let t = x / (2.0 * std::f64::consts::PI);
    ((t - t.round()) as f32).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_stay_within_two_ulp() {
        let ulps = |a: f32, b: f32| (a.to_bits() as i64 - b.to_bits() as i64).abs();
        for seed in 0..8 {
            for &x in &[0.3f32, 1.0, 2.0, 7.5, 1e10, 3e-30] {
                let r = f32::from_bits(mufu(MufuOp::Rsq, x.to_bits(), seed));
                assert!(ulps(r, (1.0 / (x as f64).sqrt()) as f32) <= 2);
                let e = f32::from_bits(mufu(MufuOp::Ex2, (x / 4.0).to_bits(), seed));
                assert!(ulps(e, ((x / 4.0) as f64).exp2() as f32) <= 2);
                let l = f32::from_bits(mufu(MufuOp::Lg2, x.to_bits(), seed));
                assert!(ulps(l, (x as f64).log2() as f32) <= 2);
            }
        }
        assert_eq!(mufu(MufuOp::Rsq, 0x8000_0000, 1), f32::NEG_INFINITY.to_bits());
        assert_eq!(mufu(MufuOp::Lg2, 0, 1), f32::NEG_INFINITY.to_bits());
        assert_eq!(mufu(MufuOp::Ex2, f32::NEG_INFINITY.to_bits(), 1), 0);
        assert_eq!(mufu(MufuOp::Rcp64h, 0, 1), 0x7ff0_0000);
    }

    #[test]
    fn sine_needs_its_range_reduction() {
        let x = 1.0f32;
        let s = f32::from_bits(mufu(MufuOp::Sin, rro(false, x.to_bits()), 3));
        assert!((s as f64 - 1f64.sin()).abs() < 1e-6);
        let wrong = f32::from_bits(mufu(MufuOp::Sin, x.to_bits(), 3));
        assert!((wrong as f64 - 1f64.sin()).abs() > 0.1);
    }

    #[test]
    fn reciprocal_high_word_is_about_20_bits() {
        for seed in 0..8 {
            let b = 3.0f64;
            let hi = mufu(MufuOp::Rcp64h, (b.to_bits() >> 32) as u32, seed);
            let r = f64::from_bits((hi as u64) << 32);
            assert!((r * b - 1.0).abs() < 1e-5, "{r}");
        }
    }
}
