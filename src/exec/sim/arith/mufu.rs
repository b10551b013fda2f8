//! The multi-function unit (`MUFU.fn`) and its range-reduction companion (`RRO`).
//!
//! SPA 5.0 documents no exact MUFU results, only the error bounds PTX states for the
//! `.approx` instructions that map onto it (ptxas 11.8, `lower::arith::float`: `rcp.approx.f32`
//! is `MUFU.RCP`, `rsqrt.approx.f32` `MUFU.RSQ`, `sqrt.approx.f32` `MUFU.RSQ` then
//! `MUFU.RCP`, `lg2`/`ex2`/`sin`/`cos.approx.f32` `MUFU.LG2`/`.EX2`/`.SIN`/`.COS`). The
//! model:
//!
//! * every f32 function returns the correctly rounded value of the exact function moved
//!   by up to 2 ulp, chosen by a hash of the launch seed and the operand (a fixed function
//!   of the input for one seed, as hardware is, but a different one per seed), but never
//!   beyond the bound of [`max_error`] nor outside the function's range: so a sequence that
//!   needs a particular rounding of the estimate fails under some seed, while every PTX
//!   `.approx` instruction stays within what the PTX ISA promises for it. Where the move
//!   drawn would leave the bound, the nearest move toward the correctly rounded value that
//!   stays inside is taken (the correctly rounded value itself always is);
//! * MUFU flushes subnormal operands to zero of the same sign, and subnormal results to
//!   zero (hardware MUFU always does; ptxas scales subnormal operands of the non-`.ftz`
//!   PTX forms itself, see `lower::arith::float`);
//! * special operands follow the exact function and the PTX ISA's tables (`rsq(+0) =
//!   +inf`, `rsq(-0) = -inf`, `rsq(x<0) = NaN`, `lg2(0) = -inf`, `ex2(-inf) = 0`,
//!   `ex2(0) = 1`, `cos(0) = 1`, ...), exactly; NaN gives the canonical NaN;
//! * `RCP64H`/`RSQ64H` take the high word of an f64 (its low word taken as 0) and return
//!   the high word of the estimate: the exact value's high word moved by `-2..=+2` units
//!   of its last bit (about 20 bits of precision, as ptxas's Newton sequences assume; PTX
//!   ISA 9.7.3.14 and 9.7.3.17 call `rcp/rsqrt.approx.ftz.f64` "gross" approximations and
//!   state no bound); an f64 subnormal operand is flushed; NaN gives `0x7fffffff` (the
//!   canonical f64 NaN's high word);
//! * `RRO.SINCOS x` returns `x / 2pi` reduced to `[-0.5, 0.5]` turns, rounded to f32
//!   (NaN and infinities give NaN), and `MUFU.SIN/.COS t` computes `sin/cos(2pi t)`: so a
//!   MUFU.SIN without its RRO computes the wrong function and differential tests catch
//!   it. The hardware format of RRO's result is not documented; only the composition is
//!   modelled.
//! * `RRO.EX2 x` returns `x` unchanged (hardware converts to a fixed-point format that is
//!   not documented; `MUFU.EX2` here takes the plain f32).

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::sim::arith::float::NAN32;
use crate::exec::sim::arith::int::mix;
use crate::sass::op::MufuOp;

/// The largest error (absolute, against the exact function value `exact` of the f32
/// operand `x`) the model allows for `MUFU.f`, from the PTX ISA 8.x statements of the
/// `.approx` instructions built on it (section 9.7.3), or `None` when the bound is in
/// steps of the correctly rounded result (`EX2`: 2, from `ex2.approx.f32`'s "2 ulp from
/// correctly rounded result across the full range", 9.7.3.21; the f64 estimates).
///
/// * `RCP`: one ulp of the exact value (`rcp.approx.f32`: "maximum ulp error is 1 across
///   the full range", 9.7.3.13), and at most `2^-24` relative, so that `sqrt.approx.f32`
///   = `RCP(RSQ(x))` keeps its maximum relative error of `2^-23` (9.7.3.15): relative
///   errors `e1` of RSQ and `e2` of RCP give `(1 + e2) / (1 + e1) - 1`, at most `2^-23`
///   to first order when both are at most `2^-24`.
/// * `RSQ`: `2^-24` relative, for the same composition (`rsqrt.approx.f32` alone allows
///   `2^-22.9`, 9.7.3.16).
/// * `LG2`: `2^-22` absolute for `x` in `(0.5, 2)`, else `2^-22` relative (9.7.3.20).
/// * `SIN`, `COS`: `2^-21` absolute (`sin/cos.approx.f32`: `2^-20.5` absolute on
///   `[-2pi, 2pi]`, `2^-14.7` on `[-100pi, 100pi]`, 9.7.3.18-19; RRO's rounding of
///   `x / 2pi` to f32 moves the angle by at most `2pi * 2^-26 = 2^-23.35`, and `2^-21 +
///   2^-23.35 < 2^-20.5`); and the result stays in `[-1, 1]`.
pub fn max_error(f: MufuOp, x: f64, exact: f64) -> Option<f64> {
    let rel = |e: f64| e * exact.abs();
    match f {
        MufuOp::Rcp => Some(ulp32(exact).min(rel(2f64.powi(-24)))),
        MufuOp::Rsq => Some(rel(2f64.powi(-24))),
        MufuOp::Lg2 if x > 0.5 && x < 2.0 => Some(2f64.powi(-22)),
        MufuOp::Lg2 => Some(rel(2f64.powi(-22))),
        MufuOp::Sin | MufuOp::Cos => Some(2f64.powi(-21)),
        MufuOp::Ex2 | MufuOp::Rcp64h | MufuOp::Rsq64h => None,
    }
}

/// The spacing of f32 numbers at `|v|` (normal range).
fn ulp32(v: f64) -> f64 {
    let e = v.abs().log2().floor().clamp(-126.0, 127.0);
    2f64.powf(e - 23.0)
}

/// The correctly rounded `exact` moved by up to `steps` ulp in magnitude (module notes):
/// the first of `steps, steps -+ 1, ..., 0` whose result is finite, normal, of the same
/// sign, within `bound` of `exact` (when given) and at most `max_abs` in magnitude.
/// NaN gives the canonical NaN; zero and infinity are exact; a subnormal result flushes
/// to zero.
fn perturb32(exact: f64, steps: i32, bound: Option<f64>, max_abs: f64) -> u32 {
    let x = exact as f32;
    if x.is_nan() {
        return NAN32;
    }
    if x.is_subnormal() {
        return 0.0f32.copysign(x).to_bits();
    }
    if x == 0.0 || x.is_infinite() {
        return x.to_bits();
    }
    let mut k = steps;
    while k != 0 {
        // |k| <= 2: a few units in the last place, no overflow in i64.
        let out = f32::from_bits((x.to_bits() as i64).saturating_add(k as i64) as u32);
        let ok = out.is_finite()
            && out.is_normal()
            && out.is_sign_negative() == x.is_sign_negative()
            && bound.is_none_or(|b| (out as f64 - exact).abs() <= b)
            && (out.abs() as f64) <= max_abs;
        if ok {
            return out.to_bits();
        }
        k = k.saturating_sub(k.signum()); // towards 0
    }
    x.to_bits()
}

/// The perturbation in `-2..=2` ulp for operand `a` of function `f` under `seed`.
fn steps(f: MufuOp, a: u32, seed: u64) -> i32 {
    let tag = if f == MufuOp::Rcp { 0 } else { (f as u64).wrapping_mul(0x51_7cc1_b727_220a) };
    ((mix(seed ^ tag, a as u64) % 5) as i32).saturating_sub(2) // 0..=4 to -2..=2
}

/// The f32 operand with subnormals flushed to zero.
fn ftz(a: u32) -> f32 {
    let x = f32::from_bits(a);
    if x.is_subnormal() { 0.0f32.copysign(x) } else { x }
}

/// The high word of an f64 estimate `r` (exact function value), moved by `k` units.
fn high_word(r: f64, k: i32) -> u32 {
    if r.is_nan() {
        return (crate::exec::sim::arith::float::NAN64 >> 32) as u32;
    }
    if r == 0.0 || r.is_infinite() {
        return (r.to_bits() >> 32) as u32;
    }
    if r.is_subnormal() {
        return (0.0f64.copysign(r).to_bits() >> 32) as u32;
    }
    let hi = ((r.to_bits() >> 32) as i64).saturating_add(k as i64); // |k| <= 2
    let out = f64::from_bits((hi as u64) << 32);
    if out.is_finite() && out.is_normal() && out.is_sign_negative() == r.is_sign_negative() {
        hi as u32
    } else {
        (r.to_bits() >> 32) as u32
    }
}

/// `MUFU.f` of the 32-bit operand `a` under the perturbation seed `seed` (module notes), or
/// correctly rounded with `None`.
pub fn mufu(f: MufuOp, a: u32, seed: Option<u64>) -> u32 {
    let k = seed.map_or(0, |seed| steps(f, a, seed));
    let x = ftz(a) as f64;
    let f32r = |r: f64| perturb32(r, k, max_error(f, x, r), f64::INFINITY);
    match f {
        MufuOp::Rcp => f32r(1.0 / x),
        MufuOp::Rsq => {
            if x.is_nan() || x < 0.0 {
                NAN32
            } else if x == 0.0 {
                f32::INFINITY.copysign(x as f32).to_bits()
            } else {
                f32r(1.0 / x.sqrt())
            }
        }
        // PTX ISA 9.7.3.19/21 tables: cos(+-0) and ex2(+-0) are exactly 1.
        MufuOp::Cos | MufuOp::Ex2 if x == 0.0 => 1.0f32.to_bits(),
        MufuOp::Sin | MufuOp::Cos => {
            if !x.is_finite() {
                return NAN32;
            }
            let t = 2.0 * std::f64::consts::PI * x;
            let r = if f == MufuOp::Sin { t.sin() } else { t.cos() };
            perturb32(r, k, max_error(f, x, r), 1.0)
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
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    /// Operands over the whole f32 range and near the interesting points.
    fn operands() -> Vec<f32> {
        let mut r = crate::exec::Rng::new(7);
        let mut v: Vec<f32> = (0..4000).map(|_| f32::from_bits(r.next_u64() as u32 & 0x7fff_ffff)).collect();
        v.extend((0..2000).map(|k| 0.5 + k as f32 / 1333.0));
        v.extend((0..2000).map(|k| 1.0 + (k as f32 - 1000.0) * 1e-6));
        v.extend([1.0, 2.0, 4.0, 0.25, 1.5, 3.0, 7.0, 1e-30, 1e30, 123456.0, 4294967296.0]);
        v.retain(|x| x.is_finite() && x.is_normal());
        v
    }

    #[test]
    fn estimates_stay_within_the_ptx_bounds() {
        let ulp = |x: f64| ulp32(x);
        for seed in 0..6 {
            for &a in &operands() {
                let x = a as f64;
                let got = |f: MufuOp, v: f32| f32::from_bits(mufu(f, v.to_bits(), Some(seed))) as f64;
                // rcp.approx.f32: 1 ulp (PTX ISA 9.7.3.13).
                let e = 1.0 / x;
                if (e as f32).is_normal() {
                    assert!((got(MufuOp::Rcp, a) - e).abs() <= ulp(e), "rcp {a:e} seed {seed}");
                    assert!((got(MufuOp::Rcp, -a) + e).abs() <= ulp(e), "rcp -{a:e} seed {seed}");
                }
                // rsqrt.approx.f32: relative 2^-22.9 (9.7.3.16).
                let e = 1.0 / x.sqrt();
                assert!((got(MufuOp::Rsq, a) - e).abs() <= 2f64.powf(-22.9) * e, "rsqrt {a:e}");
                // sqrt.approx.f32 = RCP(RSQ(x)): relative 2^-23 (9.7.3.15).
                let q = mufu(MufuOp::Rsq, a.to_bits(), Some(seed));
                let s = f32::from_bits(mufu(MufuOp::Rcp, q, Some(seed))) as f64;
                let e = x.sqrt();
                if (e as f32).is_normal() && f32::from_bits(q).is_normal() {
                    assert!((s - e).abs() <= 2f64.powi(-23) * e * (1.0 + 1e-6), "sqrt {a:e} seed {seed}");
                }
                // lg2.approx.f32: 2^-22 absolute in (0.5, 2), else relative (9.7.3.20).
                let e = x.log2();
                let b = if x > 0.5 && x < 2.0 { 2f64.powi(-22) } else { 2f64.powi(-22) * e.abs() };
                assert!((got(MufuOp::Lg2, a) - e).abs() <= b, "lg2 {a:e}");
                // ex2.approx.f32: 2 ulp from the correctly rounded result (9.7.3.21).
                let t = a.min(100.0) * if seed % 2 == 0 { 1.0 } else { -1.0 };
                let cr = (t as f64).exp2() as f32;
                if cr.is_normal() {
                    let d = (mufu(MufuOp::Ex2, t.to_bits(), Some(seed)) as i64 - cr.to_bits() as i64).abs();
                    assert!(d <= 2, "ex2 {t:e}");
                }
                // sin/cos.approx.f32 through RRO: 2^-20.5 absolute on [-2pi, 2pi], never
                // beyond 1 (9.7.3.18-19).
                let angle = (a % 6.25) * if seed % 3 == 0 { -1.0 } else { 1.0 };
                let t = rro(false, angle.to_bits());
                for (f, e) in [(MufuOp::Sin, (angle as f64).sin()), (MufuOp::Cos, (angle as f64).cos())] {
                    let y = f32::from_bits(mufu(f, t, Some(seed))) as f64;
                    assert!((y - e).abs() <= 2f64.powf(-20.5), "{f:?} {angle:e}: {y} vs {e}");
                    assert!(y.abs() <= 1.0, "{f:?} {angle:e}: {y}");
                }
            }
        }
    }

    #[test]
    fn special_values_are_exact() {
        for seed in 0..20 {
            assert_eq!(mufu(MufuOp::Cos, 0, Some(seed)), 1.0f32.to_bits());
            assert_eq!(mufu(MufuOp::Cos, 0x8000_0000, Some(seed)), 1.0f32.to_bits());
            assert_eq!(mufu(MufuOp::Ex2, 0, Some(seed)), 1.0f32.to_bits());
            assert_eq!(mufu(MufuOp::Sin, 0x8000_0000, Some(seed)), 0x8000_0000);
            assert_eq!(mufu(MufuOp::Lg2, 1.0f32.to_bits(), Some(seed)), 0);
        }
        assert_eq!(mufu(MufuOp::Rcp, 0, Some(1)), f32::INFINITY.to_bits());
        assert_eq!(mufu(MufuOp::Rcp, f32::NEG_INFINITY.to_bits(), Some(1)), (-0.0f32).to_bits());
        assert_eq!(mufu(MufuOp::Rsq, 0x8000_0000, Some(1)), f32::NEG_INFINITY.to_bits());
        assert_eq!(mufu(MufuOp::Lg2, 0, Some(1)), f32::NEG_INFINITY.to_bits());
        assert_eq!(mufu(MufuOp::Ex2, f32::NEG_INFINITY.to_bits(), Some(1)), 0);
        assert_eq!(mufu(MufuOp::Rcp64h, 0, Some(1)), 0x7ff0_0000);
    }

    #[test]
    fn estimates_still_vary_with_the_seed() {
        // The perturbation is bounded, not gone: over seeds an operand sees several results.
        for (f, a) in [(MufuOp::Rcp, 3.0f32), (MufuOp::Rsq, 0.3), (MufuOp::Ex2, 0.3), (MufuOp::Lg2, 3.0)] {
            let seen: std::collections::HashSet<u32> = (0..50).map(|s| mufu(f, a.to_bits(), Some(s))).collect();
            assert!(seen.len() >= 2, "{f:?}");
        }
        let seen: std::collections::HashSet<u32> =
            (0..50).map(|s| mufu(MufuOp::Ex2, 0.3f32.to_bits(), Some(s))).collect();
        assert_eq!(seen.len(), 5);
    }

    #[test]
    fn sine_needs_its_range_reduction() {
        let x = 1.0f32;
        let s = f32::from_bits(mufu(MufuOp::Sin, rro(false, x.to_bits()), Some(3)));
        assert!((s as f64 - 1f64.sin()).abs() < 1e-6);
        let wrong = f32::from_bits(mufu(MufuOp::Sin, x.to_bits(), Some(3)));
        assert!((wrong as f64 - 1f64.sin()).abs() > 0.1);
    }

    #[test]
    fn reciprocal_high_word_is_about_20_bits() {
        for seed in 0..8 {
            let b = 3.0f64;
            let hi = mufu(MufuOp::Rcp64h, (b.to_bits() >> 32) as u32, Some(seed));
            let r = f64::from_bits((hi as u64) << 32);
            assert!((r * b - 1.0).abs() < 1e-5, "{r}");
        }
    }
}

/// The f32 IEEE fast paths of `lower::arith::float32` emulated instruction by instruction with
/// the simulator's own FFMA/FMUL and every MUFU estimate the model allows (not one seed's
/// choice): exhaustive over the significands (`PTX2SASS_EXHAUSTIVE=1`), strided otherwise.
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod fast_paths {
    use super::super::float::{ffma, fmul};
    use super::max_error;
    use crate::exec::ptx::arith::float::{self as exact, F32, Mode};
    use crate::sass::op::{MufuOp, Rnd};

    const MODES: [(Rnd, Mode); 4] =
        [(Rnd::Rn, Mode::Rn), (Rnd::Rz, Mode::Rz), (Rnd::Rm, Mode::Rm), (Rnd::Rp, Mode::Rp)];

    /// Every f32 the model may return for `MUFU.f` of `x` (exact value `v`); for `RCP`
    /// every one the PTX ISA allows (`rcp.approx.f32`: 1 ulp, 9.7.3.13), a superset.
    fn estimates(f: MufuOp, x: f32, v: f64) -> Vec<f32> {
        let rn = v as f32;
        let bound = if f == MufuOp::Rcp { super::ulp32(v) } else { max_error(f, x as f64, v).unwrap() };
        (-3i64..=3)
            .map(|k| f32::from_bits((rn.to_bits() as i64 + k) as u32))
            .filter(|y| y.is_normal() && ((*y as f64) - v).abs() <= bound)
            .collect()
    }

    fn stride() -> u32 {
        if std::env::var("PTX2SASS_EXHAUSTIVE").is_ok() { 1 } else { 97 }
    }

    /// `rcp.rnd.f32` fast path (`lower::arith::float32`): `r0 = RCP(b)`, `e = FFMA(-b, r0, 1)`,
    /// `r1 = FFMA(r0, e, r0)` (ptxas 11.8's `.rn` result), then the midpoint test: `r1+`
    /// (one ulp up in magnitude) when `FFMA(-b, r1, 1) > -FFMA(-b, r1+, 1)`; directed:
    /// `FFMA.rnd(r, rem, r)` with `rem` the residual of the chosen `r`.
    pub(crate) fn rcp(b: f32, r0: f32, rnd: Rnd) -> f32 {
        let e = ffma(-b, r0, 1.0, Rnd::Rn);
        let r1 = ffma(r0, e, r0, Rnd::Rn);
        let e1 = ffma(-b, r1, 1.0, Rnd::Rn);
        let up = f32::from_bits(r1.to_bits() + 1);
        let e2 = ffma(-b, up, 1.0, Rnd::Rn);
        let (r, rem) = if e1 > -e2 { (up, e2) } else { (r1, e1) };
        if rnd == Rnd::Rn {
            return r;
        }
        ffma(r, rem, r, rnd)
    }

    #[test]
    fn rcp_is_correctly_rounded_for_every_estimate() {
        let mut bad = vec![];
        // Every 97th significand and the all-ones one (exhaustive with PTX2SASS_EXHAUSTIVE).
        let ms = (0..1u32 << 23).step_by(stride() as usize).chain([0x7f_ffff]);
        for b in ms.flat_map(|m| [f32::from_bits(0x3f80_0000 | m), f32::from_bits(0xbf80_0000 | m)]) {
            for r0 in estimates(MufuOp::Rcp, b, 1.0 / b as f64) {
                for (rnd, mode) in MODES {
                    let want = exact::div(1.0f32.to_bits() as u64, b.to_bits() as u64, F32, mode) as u32;
                    if rcp(b, r0, rnd).to_bits() != want && bad.len() < 10 {
                        bad.push((b, r0, rnd));
                    }
                }
            }
        }
        assert!(bad.is_empty(), "{bad:?}");
    }

    /// `sqrt.rnd.f32` fast path: ptxas 11.8's `.rn` sequence `y = RSQ(x)`, `s = x y`,
    /// `h = y / 2`, `r = FFMA(FFMA(-s, s, x), h, s)`; directed: one ulp down (`.rz`,
    /// `.rm`) when `FFMA(-r, r, x) < 0`, up (`.rp`) when it is `> 0`.
    pub(crate) fn sqrt(x: f32, y: f32, rnd: Rnd) -> f32 {
        let s = fmul(y, x, Rnd::Rn);
        let h = fmul(y, 0.5, Rnd::Rn);
        let e = ffma(-s, s, x, Rnd::Rn);
        let r = ffma(e, h, s, Rnd::Rn);
        let d = ffma(r, -r, x, Rnd::Rn);
        match rnd {
            Rnd::Rn => r,
            Rnd::Rp if d > 0.0 => f32::from_bits(r.to_bits() + 1),
            Rnd::Rz | Rnd::Rm if d < 0.0 => f32::from_bits(r.to_bits() - 1),
            _ => r,
        }
    }

    #[test]
    fn sqrt_is_correctly_rounded_for_every_estimate() {
        let mut bad = vec![];
        // Both exponent parities: [1, 4).
        for m in (0..1u32 << 24).step_by(stride() as usize) {
            let x = f32::from_bits(0x3f80_0000 + m);
            for y in estimates(MufuOp::Rsq, x, 1.0 / (x as f64).sqrt()) {
                for (rnd, mode) in MODES {
                    let want = exact::sqrt(x.to_bits() as u64, F32, mode) as u32;
                    if sqrt(x, y, rnd).to_bits() != want && bad.len() < 10 {
                        bad.push((x, y, rnd));
                    }
                }
            }
        }
        assert!(bad.is_empty(), "{bad:?}");
    }

    /// `div.rnd.f32` fast path (`lower::arith::float32`): `r = rcp.rn(b)`, `q0 = a r`,
    /// `q = FFMA(r, FFMA(q0, -b, a), q0)` (ptxas 11.8's `.rn` sequence but for the
    /// corrected `r`); directed: `FFMA.rnd(r, FFMA(q, -b, a), q)`.
    pub(crate) fn div(a: f32, b: f32, r0: f32, rnd: Rnd) -> f32 {
        let r = rcp(b, r0, Rnd::Rn);
        let q0 = fmul(a, r, Rnd::Rn);
        let rem = ffma(q0, -b, a, Rnd::Rn);
        let q = ffma(r, rem, q0, Rnd::Rn);
        if rnd == Rnd::Rn {
            return q;
        }
        let rem = ffma(q, -b, a, Rnd::Rn);
        ffma(r, rem, q, rnd)
    }

    /// ptxas 11.8's `div.rn.f32` fast path as it is (`r1` uncorrected).
    fn div_ptxas(a: f32, b: f32, r0: f32) -> f32 {
        let e = ffma(-b, r0, 1.0, Rnd::Rn);
        let r1 = ffma(r0, e, r0, Rnd::Rn);
        let q0 = fmul(a, r1, Rnd::Rn);
        ffma(r1, ffma(q0, -b, a, Rnd::Rn), q0, Rnd::Rn)
    }

    /// ptxas's `div.rn.f32` fast path needs a better `MUFU.RCP` than the PTX ISA's 1 ulp
    /// (and than the simulator's `2^-24`): an estimate one ulp below `1/b` for an
    /// all-ones divisor significand gives a wrong quotient.
    #[test]
    fn ptxas_div_needs_a_good_estimate() {
        let mut n = 0;
        for bm in [0x7f_ffffu32, 0x7f_fffe, 0x7f_fffd, 0x55_5555, 0x2a_aaab] {
            let b = f32::from_bits(0x3f80_0000 | bm);
            for r0 in estimates(MufuOp::Rcp, b, 1.0 / b as f64) {
                for k in (0..1u32 << 23).step_by(stride() as usize) {
                    let a = f32::from_bits(0x3f80_0000 | k);
                    let want = exact::div(a.to_bits() as u64, b.to_bits() as u64, F32, Mode::Rn) as u32;
                    assert_eq!(div(a, b, r0, Rnd::Rn).to_bits(), want);
                    if div_ptxas(a, b, r0).to_bits() != want {
                        n += 1;
                    }
                }
            }
        }
        assert!(n > 0, "{n}");
        // For one: 1 / (2 - 2^-23) with the estimate 0.5 (2^-24 below, relative).
        let (b, r0) = (f32::from_bits(0x3fff_ffff), 0.5f32);
        assert_ne!(div_ptxas(1.0, b, r0), (1.0 / b as f64) as f32);
        assert_eq!(div(1.0, b, r0, Rnd::Rn), (1.0 / b as f64) as f32);
    }

    /// Random significand pairs (hard classes: all-ones, short, quotients next to a
    /// midpoint) with `|a|` from `2^-100`, `b` within `2^±120` and normal quotients:
    /// wider than the simulator's FCHK model (`2^±100`), so what the hardware's test may
    /// let through (a smaller `a` makes the residual `a - b q0` subnormal, inexact: the
    /// test fails there); every estimate of `RCP(b)`, every mode.
    #[test]
    fn div_is_correctly_rounded_for_every_estimate() {
        let mut rng = crate::exec::Rng::new(0xd1f);
        let n: u64 = if stride() == 1 { 20_000_000 } else { 200_000 };
        let mut bad = vec![];
        for k in 0..n {
            let sig = |rng: &mut crate::exec::Rng| match rng.next_u64() % 4 {
                0 => 0x7f_ffff,
                1 => (rng.next_u64() as u32 & 0xfff) << 11,
                _ => rng.next_u64() as u32 & 0x7f_ffff,
            };
            let eb = 127 - 120 + (rng.next_u64() % 241) as u32;
            let b = f32::from_bits(eb << 23 | sig(&mut rng));
            let a = if k.is_multiple_of(2) {
                let ea = 127 - 100 + (rng.next_u64() % 221) as u32;
                f32::from_bits(ea << 23 | sig(&mut rng))
            } else {
                // a = b (q + ulp/2) rounded: the quotient next to a midpoint.
                let q = f32::from_bits(0x3f80_0000 | sig(&mut rng)) as f64 + 2f64.powi(-24);
                (b as f64 * q * 2f64.powi((rng.next_u64() % 81) as i32 - 40)) as f32
            };
            let a = if rng.next_u64().is_multiple_of(2) { -a } else { a };
            let qe = a.abs() as f64 / b as f64;
            if !(a.abs() >= 2f32.powi(-100) && qe > 2f64.powi(-125) && qe < 2f64.powi(127)) {
                continue;
            }
            for r0 in estimates(MufuOp::Rcp, b, 1.0 / b as f64) {
                for (rnd, mode) in MODES {
                    let want = exact::div(a.to_bits() as u64, b.to_bits() as u64, F32, mode) as u32;
                    if div(a, b, r0, rnd).to_bits() != want && bad.len() < 10 {
                        bad.push((a, b, r0, rnd));
                    }
                }
            }
        }
        assert!(bad.is_empty(), "{bad:?}");
    }
}
