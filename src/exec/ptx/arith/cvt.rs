//! `cvt` semantics (PTX ISA 9.7.9.21 cvt, with 9.7.9.21 "Integer Rounding Modifiers" and
//! "Floating Point Rounding Modifiers").
//!
//! * integer to integer: the source is extended by its own signedness, then chopped to the
//!   destination width, or clamped to the destination range with `.sat`;
//! * integer to float: rounded by the float rounding modifier (`.rn` if none);
//! * float to integer: rounded to an integral value by `.rni/.rzi/.rmi/.rpi` (`.rzi` if
//!   none, as C does), always clamped to the destination range, NaN gives 0;
//! * float to float: widening is exact; narrowing rounds by `.rn/.rz/.rm/.rp`; an integer
//!   rounding modifier rounds to an integral value; `.ftz` flushes f32 subnormal inputs and
//!   results; `.sat` clamps to `[0.0, 1.0]` (NaN to +0.0).
//!
//! Floats are `.f16`, `.bf16`, `.f32` and `.f64`.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::ptx::arith::float::{self, BF16, F16, F32, F64, Format, Mode};
use crate::exec::ptx::arith::fp;
use crate::exec::ptx::value::{extend, mask};
use crate::ptx::instr::{Cvt, Rounding};
use crate::ptx::types::ScalarType;

fn float_format(ty: ScalarType) -> Option<Format> {
    match ty {
        ScalarType::F16 => Some(F16),
        ScalarType::Bf16 => Some(BF16),
        ScalarType::F32 => Some(F32),
        ScalarType::F64 => Some(F64),
        _ => None,
    }
}

fn int_range(ty: ScalarType) -> (i128, i128) {
    // Integer types of 8 to 64 bits (`cvt` refuses wider ones), so nothing below wraps.
    let n = ty.bits().clamp(1, 64);
    let half = 1i128 << n.wrapping_sub(1);
    if ty.is_signed() { (half.wrapping_neg(), half.wrapping_sub(1)) } else { (0, (1i128 << n).wrapping_sub(1)) }
}

fn is_int_rounding(r: Option<Rounding>) -> bool {
    matches!(r, Some(Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi))
}

/// `cvt` of the source bits `a` (the low bits of the source register); returns the result
/// bits of the destination type, or why the form is not modelled.
pub fn cvt(c: &Cvt, a: u64) -> Result<u64, String> {
    let (sf, df) = (float_format(c.src), float_format(c.dst));
    let bad = |what: &str| Err(format!("cvt{} from {} to {}", what, c.src, c.dst));
    if c.src == ScalarType::Pred || c.dst == ScalarType::Pred || c.src.bits() > 64 || c.dst.bits() > 64 {
        return bad("");
    }
    if matches!(c.src, ScalarType::F16x2 | ScalarType::Bf16x2)
        || matches!(c.dst, ScalarType::F16x2 | ScalarType::Bf16x2)
    {
        return bad(" (packed)");
    }
    let ftz32 = |f: Format, v: u64| if c.ftz && f == F32 { f.ftz(v) } else { v };
    let sat = |f: Format, v: u64| if c.sat { sat_float(f, v) } else { v };
    match (sf, df) {
        (None, None) => {
            let v = extend(a, c.src);
            let wide = if c.src.is_signed() { v as i64 as i128 } else { v as i128 };
            if c.sat {
                let (lo, hi) = int_range(c.dst);
                Ok(wide.clamp(lo, hi) as u64 & mask(c.dst.bits()))
            } else {
                Ok(wide as u64 & mask(c.dst.bits()))
            }
        }
        (None, Some(f)) => {
            let v = extend(a, c.src);
            let (neg, mag) =
                if c.src.is_signed() && (v as i64) < 0 { (true, (v as i64).unsigned_abs()) } else { (false, v) };
            Ok(sat(f, ftz32(f, float::from_int(neg, mag, f, fp::mode(c.rnd)))))
        }
        (Some(f), None) => {
            let a = ftz32(f, a);
            let m = if c.rnd.is_none() { Mode::Rz } else { fp::mode(c.rnd) };
            let Some((neg, mag)) = float::to_integer(a, f, m) else { return Ok(0) };
            let v = if neg { (mag as i128).wrapping_neg() } else { mag as i128 }; // |v| < 2^64
            let (lo, hi) = int_range(c.dst);
            Ok(v.clamp(lo, hi) as u64 & mask(c.dst.bits()))
        }
        (Some(s), Some(d)) => {
            let a = ftz32(s, a);
            let r = if is_int_rounding(c.rnd) {
                // The result is an integral value of the destination format in the
                // rounding direction: a value beyond the destination's precision or range
                // is rounded in the same direction (`cvt.rzi.f32.f64` of DBL_MAX is
                // FLT_MAX, not +inf).
                float::convert(float::round_integral(a, s, fp::mode(c.rnd)), s, d, fp::mode(c.rnd))
            } else if s == d {
                if s.is_nan(a) { s.nan() } else { a }
            } else {
                float::convert(a, s, d, fp::mode(c.rnd))
            };
            Ok(sat(d, ftz32(d, r)))
        }
    }
}

fn sat_float(f: Format, v: u64) -> u64 {
    if f == F32 || f == F64 {
        return fp::saturate(f, v);
    }
    if f.is_nan(v) || v & f.sign() != 0 {
        return 0;
    }
    let one = float::convert(1.0f64.to_bits(), F64, f, Mode::Rn);
    if v >= one { one } else { v }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::{Cvt, Rounding, ScalarType, cvt, float};
    use ScalarType::*;

    fn c(dst: ScalarType, src: ScalarType, rnd: Option<Rounding>, sat: bool) -> Cvt {
        Cvt { dst, src, rnd, ftz: false, sat }
    }
    fn b(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn integer_conversions() {
        assert_eq!(cvt(&c(S32, S16, None, false), 0xff80), Ok(0xffff_ff80));
        assert_eq!(cvt(&c(U32, U16, None, false), 0xff80), Ok(0xff80));
        assert_eq!(cvt(&c(U16, U32, None, false), 0x1_2345), Ok(0x2345));
        assert_eq!(cvt(&c(U8, S32, None, true), 0xffff_ffff), Ok(0));
        assert_eq!(cvt(&c(S8, S32, None, true), 300), Ok(127));
        assert_eq!(cvt(&c(U32, S64, None, true), 1 << 40), Ok(0xffff_ffff));
        assert_eq!(cvt(&c(S64, S32, None, false), 0x8000_0000), Ok(0xffff_ffff_8000_0000));
    }

    #[test]
    fn float_integer_conversions() {
        let rni = Some(Rounding::Rni);
        assert_eq!(cvt(&c(S32, F32, rni, false), b(2.5)), Ok(2));
        assert_eq!(cvt(&c(S32, F32, Some(Rounding::Rmi), false), b(-2.5)), Ok(0xffff_fffd));
        assert_eq!(cvt(&c(S32, F32, Some(Rounding::Rzi), false), b(-2.5)), Ok(0xffff_fffe));
        assert_eq!(cvt(&c(S32, F32, Some(Rounding::Rpi), false), b(2.1)), Ok(3));
        assert_eq!(cvt(&c(U32, F32, rni, false), b(-5.0)), Ok(0));
        assert_eq!(cvt(&c(S32, F32, rni, false), b(3e10)), Ok(0x7fff_ffff));
        assert_eq!(cvt(&c(S32, F32, rni, false), float::F32.nan()), Ok(0));
        assert_eq!(cvt(&c(U8, F64, rni, false), 300.0f64.to_bits()), Ok(255));
        assert_eq!(cvt(&c(F32, S32, Some(Rounding::Rn), false), 0xffff_fffe), Ok(b(-2.0)));
        assert_eq!(cvt(&c(F32, U32, Some(Rounding::Rz), false), 0xffff_ffff), Ok(b(4294967040.0)));
        assert_eq!(cvt(&c(F32, U32, Some(Rounding::Rn), false), 0xffff_ffff), Ok(b(4294967296.0)));
    }

    #[test]
    fn float_float_conversions() {
        let x = 0.1f64.to_bits();
        assert_eq!(cvt(&c(F32, F64, Some(Rounding::Rn), false), x), Ok(b(0.1)));
        assert_eq!(cvt(&c(F32, F64, Some(Rounding::Rz), false), x), Ok(b(0.1) - 1));
        assert_eq!(cvt(&c(F64, F32, None, false), b(0.1)), Ok((0.1f32 as f64).to_bits()));
        assert_eq!(cvt(&c(F32, F32, Some(Rounding::Rni), false), b(2.5)), Ok(b(2.0)));
        assert_eq!(cvt(&c(F32, F32, Some(Rounding::Rpi), false), b(-0.5)), Ok(b(-0.0)));
        assert_eq!(cvt(&c(F32, F32, None, true), b(1.5)), Ok(b(1.0)));
        assert_eq!(cvt(&c(F32, F32, None, true), float::F32.nan()), Ok(0));
        let ftz = Cvt { ftz: true, ..c(F32, F32, None, false) };
        assert_eq!(cvt(&ftz, 0x8000_0001), Ok(0x8000_0000));
        assert_eq!(cvt(&c(F16, F32, Some(Rounding::Rn), false), b(1.0)), Ok(0x3c00));
        assert_eq!(cvt(&c(F32, F16, None, false), 0xc000), Ok(b(-2.0)));
    }
}
