//! Evaluation of a [`Func`]: the value an arithmetic, logic, conversion or selection
//! instruction computes from its source values (PTX ISA 9.7.1-9.7.9). Sources arrive as
//! the low bits of their operand type; the result is the destination type's bits.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline"):
// sources are read through `get` (a missing one is an internal error), integer arithmetic
// on program values wraps where the PTX ISA defines wrapping.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::arith::cvt;
use super::arith::float::{F32, Format};
use super::arith::fp;
use super::arith::int;
use super::program::{AtomOp, Func};
use super::value::{mask, sext};
use crate::ptx::instr::{BoolOp, IntMode};
use crate::ptx::types::ScalarType;

fn float(ty: ScalarType) -> Result<Format, String> {
    fp::format(ty).ok_or_else(|| format!("float arithmetic on {ty}"))
}

/// The wider type of a `.wide` multiply (`.s32` gives `.s64`).
pub fn widened(ty: ScalarType) -> ScalarType {
    use ScalarType::*;
    match ty {
        S8 => S16,
        S16 => S32,
        S32 => S64,
        U8 | B8 => U16,
        U16 | B16 => U32,
        U32 | B32 => U64,
        other => other,
    }
}

/// Combines a comparison result with a predicate (`setp`/`set` `.and/.or/.xor`).
pub fn combine(t: bool, op: Option<BoolOp>, c: bool) -> bool {
    match op {
        None => t,
        Some(BoolOp::And) => t && c,
        Some(BoolOp::Or) => t || c,
        Some(BoolOp::Xor) => t ^ c,
    }
}

/// Computes `func` of type `ty` on the source values `s`; `cc` is the thread's carry flag
/// `CC.CF` (PTX ISA 9.7.2). The caller keeps the low bits of the destination type. Errors
/// name forms that are not modelled.
pub fn eval(func: &Func, ty: ScalarType, s: &[u64], cc: &mut bool) -> Result<u64, String> {
    let n = ty.bits().min(64);
    // The compiler ([`super::compile`]) gives each `Func` its sources; one missing is ours.
    let arg = |k: usize| s.get(k).copied().ok_or_else(|| format!("internal: {func:?} without source {k}"));
    Ok(match *func {
        Func::Mov => arg(0)?,
        Func::Int(op) => {
            if ty.is_float() {
                return Err(format!("{op:?} on {ty}"));
            }
            int::simple(op, ty, arg(0)?, *s.get(1).unwrap_or(&0))
        }
        Func::AddSub { sub, sat, carry_in, carry_out } => {
            let (r, c) = int::add_sub(ty, sub, sat, arg(0)?, arg(1)?, carry_in.then_some(*cc));
            if carry_out {
                *cc = c;
            }
            r
        }
        Func::Mul(mode) => int::mul(ty, mode, arg(0)?, arg(1)?),
        Func::Mad { mode, sat, carry_in, carry_out } => {
            if !carry_in && !carry_out {
                int::mad(ty, mode, sat, arg(0)?, arg(1)?, arg(2)?)
            } else {
                let t = int::mul(ty, mode, arg(0)?, arg(1)?);
                let wty = if mode == IntMode::Wide { widened(ty) } else { ty };
                let (r, c) = int::add_sub(wty, false, false, t, arg(2)?, Some(carry_in && *cc));
                if carry_out {
                    *cc = c;
                }
                r
            }
        }
        Func::FBin(op, m) if fp::packed(ty).is_some() => {
            let f = fp::packed(ty).unwrap_or(F32);
            arg(1)?;
            // Each half's slice has as many values as `s` (at least 2, checked above).
            fp::per_half(s, |h| if let [a, b, ..] = *h { fp::binary(op, f, m, a, b) } else { 0 })
        }
        Func::Fma(m) if fp::packed(ty).is_some() => {
            let f = fp::packed(ty).unwrap_or(F32);
            arg(2)?;
            // As for `FBin`: at least 3 values per half.
            fp::per_half(s, |h| if let [a, b, c, ..] = *h { fp::fma(f, m, a, b, c) } else { 0 })
        }
        Func::FNegAbs(neg, ftz) if fp::packed(ty).is_some() => {
            let f = fp::packed(ty).unwrap_or(F32);
            arg(0)?;
            // As for `FBin`: at least 1 value per half.
            fp::per_half(s, |h| if let [a, ..] = *h { fp::abs_neg(f, neg, ftz, a) } else { 0 })
        }
        Func::FBin(op, m) => fp::binary(op, float(ty)?, m, arg(0)?, arg(1)?),
        Func::Fma(m) => fp::fma(float(ty)?, m, arg(0)?, arg(1)?, arg(2)?),
        Func::FNegAbs(neg, ftz) => fp::abs_neg(float(ty)?, neg, ftz, arg(0)?),
        Func::FUnary(op, approx, m) => fp::unary(op, float(ty)?, approx, m, arg(0)?),
        Func::Copysign => fp::copysign(float(ty)?, arg(0)?, arg(1)?),
        Func::Testp(op) => fp::testp(op, float(ty)?, arg(0)?).ok_or_else(|| format!("testp.{op}"))? as u64,
        Func::Cvt(c) => cvt::cvt(&c, arg(0)?)?,
        Func::Popc => int::popc(ty, arg(0)?),
        Func::Clz => int::clz(ty, arg(0)?),
        Func::Brev => int::brev(ty, arg(0)?),
        Func::Bfind(shiftamt) => int::bfind(ty, shiftamt, arg(0)?),
        Func::Bfe => int::bfe(ty, arg(0)?, arg(1)?, arg(2)?),
        Func::Bfi => int::bfi(ty, arg(0)?, arg(1)?, arg(2)?, arg(3)?),
        Func::Prmt(mode) => int::prmt(mode, arg(0)?, arg(1)?, arg(2)?),
        Func::Mul24(hi) => int::mul24(ty, hi, arg(0)?, arg(1)?),
        Func::Mad24(hi) => int::mul24(ty, hi, arg(0)?, arg(1)?).wrapping_add(arg(2)?) & 0xffff_ffff,
        Func::Sad => int::sad(ty, arg(0)?, arg(1)?, arg(2)?),
        Func::Lop3 => int::lop3(arg(0)?, arg(1)?, arg(2)?, arg(3)?),
        Func::Shf(left, clamp) => int::shf(left, clamp, arg(0)?, arg(1)?, arg(2)?),
        Func::Selp => {
            if arg(2)? & 1 != 0 {
                arg(0)?
            } else {
                arg(1)?
            }
        }
        Func::Slct(cty, ftz) => {
            let take_a = if cty == ScalarType::F32 {
                let c = if ftz { F32.ftz(arg(2)?) } else { arg(2)? };
                f32::from_bits(c as u32) >= 0.0
            } else {
                sext(arg(2)?, 32) >= 0
            };
            if take_a { arg(0)? } else { arg(1)? }
        }
        Func::Video { vop, signed, sat, op2, clamp } => {
            video(vop, signed, sat, op2, clamp, arg(0)?, arg(1)?, s.get(2).copied())?
        }
        Func::Set { cmp, bool_op, ftz, src } => {
            let c = s.get(2).is_some_and(|c| c & 1 != 0);
            // The result for "true": 1.0 in a float type, all ones in an integer type, per
            // half for the packed types (PTX ISA 9.7.4 set: `.f16x2`/`.bf16x2` results, or
            // `.u32`/`.s32` whose halves are 0xffff or 0 for packed sources).
            let one = |t: ScalarType, bits: u32| match t {
                ScalarType::F32 => 1.0f32.to_bits() as u64,
                ScalarType::F16 | ScalarType::F16x2 => 0x3c00,
                ScalarType::Bf16 | ScalarType::Bf16x2 => 0x3f80,
                _ => mask(bits),
            };
            if let Some(f) = fp::packed(src) {
                let lane = if f == super::arith::float::F16 { ScalarType::F16 } else { ScalarType::Bf16 };
                let c0 = fp::compare(cmp, lane, ftz, arg(0)? & 0xffff, arg(1)? & 0xffff);
                let c1 = fp::compare(cmp, lane, ftz, (arg(0)? >> 16) & 0xffff, (arg(1)? >> 16) & 0xffff);
                let h = |t: bool| if combine(t, bool_op, c) { one(ty, 16) } else { 0 };
                h(c0) | h(c1) << 16
            } else if combine(fp::compare(cmp, src, ftz, arg(0)?, arg(1)?), bool_op, c) {
                one(ty, n)
            } else {
                0
            }
        }
    })
}

/// The value an `atom`/`red` of `op` on type `ty` stores, given the old memory value and
/// the operands `b`, `c` (PTX ISA 9.7.13.5). Values are the low `ty.bits()` bits.
pub fn atom_value(op: AtomOp, ty: ScalarType, old: u64, b: u64, c: u64) -> Result<u64, String> {
    let n = ty.bits().min(64);
    let m = mask(n);
    let (old, b, c) = (old & m, b & m, c & m);
    Ok(match op {
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old == b {
                c
            } else {
                old
            }
        }
        AtomOp::Add if ty.is_float() => {
            let ftz = ty == ScalarType::F32;
            let mods = fp::Mods { mode: super::arith::float::Mode::Rn, ftz, sat: false };
            fp::binary(fp::Binary::Add, float(ty)?, mods, old, b)
        }
        AtomOp::Add => old.wrapping_add(b) & m,
        AtomOp::Inc => {
            if old >= b {
                0
            } else {
                old.saturating_add(1) // old < b: no overflow
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > b {
                b
            } else {
                old.saturating_sub(1) // old > 0
            }
        }
        AtomOp::Min => int::min_max(ty, false, old, b),
        AtomOp::Max => int::min_max(ty, true, old, b),
    })
}

/// A scalar video instruction (PTX ISA 9.7.10 "Video Instructions" semantics, computed in
/// 128-bit integers): the operands extended by their types, the operation at full
/// precision, the optional saturation to the destination type's range, then the optional
/// secondary operation with `c` (extended by the destination type; an error if missing);
/// the low 32 bits. The operands are 33-bit values and a shift is at most 32 (or 31), so
/// every step is exact in `i128` (the `wrapping_*` never wrap).
#[allow(clippy::too_many_arguments)]
fn video(
    vop: &str,
    signed: [bool; 3],
    sat: bool,
    op2: Option<&str>,
    clamp: bool,
    a: u64,
    b: u64,
    c: Option<u64>,
) -> Result<u64, String> {
    let ext = |v: u64, sgn: bool| -> i128 { if sgn { i128::from(v as u32 as i32) } else { i128::from(v as u32) } };
    let [sd, sa, sb] = signed;
    let (ta, tb) = (ext(a, sa), ext(b, sb));
    // The shift amount is `b` as a .u32 (PTX ISA 9.7.10.2 vshl/vshr: `.btype` is .u32);
    // `.clamp` limits it to 32, `.wrap` takes it modulo 32.
    let amount = |b: i128| -> u32 { if clamp { (b as u32).min(32) } else { b as u32 & 0x1f } };
    let mut tmp: i128 = match vop {
        "vadd" => ta.wrapping_add(tb),
        "vsub" => ta.wrapping_sub(tb),
        "vabsdiff" => ta.wrapping_sub(tb).wrapping_abs(),
        "vmin" => ta.min(tb),
        "vmax" => ta.max(tb),
        "vshl" => ta.wrapping_shl(amount(tb)),
        _ => ta.wrapping_shr(amount(tb)),
    };
    if sat {
        tmp =
            if sd { tmp.clamp(i128::from(i32::MIN), i128::from(i32::MAX)) } else { tmp.clamp(0, i128::from(u32::MAX)) };
    }
    if let Some(op) = op2 {
        let c = ext(c.ok_or_else(|| format!("internal: {vop}.{op} without c"))?, sd);
        tmp = match op {
            "add" => tmp.wrapping_add(c),
            "min" => tmp.min(c),
            _ => tmp.max(c),
        };
    }
    Ok((tmp as u64) & 0xffff_ffff)
}
