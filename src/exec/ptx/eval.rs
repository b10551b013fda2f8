//! Evaluation of a [`Func`]: the value an arithmetic, logic, conversion or selection
//! instruction computes from its source values (PTX ISA 9.7.1-9.7.9). Sources arrive as
//! the low bits of their operand type; the result is the destination type's bits.

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
    Ok(match *func {
        Func::Mov => s[0],
        Func::Int(op) => {
            if ty.is_float() {
                return Err(format!("{op:?} on {ty}"));
            }
            int::simple(op, ty, s[0], *s.get(1).unwrap_or(&0))
        }
        Func::AddSub { sub, sat, carry_in, carry_out } => {
            let (r, c) = int::add_sub(ty, sub, sat, s[0], s[1], carry_in.then_some(*cc));
            if carry_out {
                *cc = c;
            }
            r
        }
        Func::Mul(mode) => int::mul(ty, mode, s[0], s[1]),
        Func::Mad { mode, sat, carry_in, carry_out } => {
            if !carry_in && !carry_out {
                int::mad(ty, mode, sat, s[0], s[1], s[2])
            } else {
                let t = int::mul(ty, mode, s[0], s[1]);
                let wty = if mode == IntMode::Wide { widened(ty) } else { ty };
                let (r, c) = int::add_sub(wty, false, false, t, s[2], Some(carry_in && *cc));
                if carry_out {
                    *cc = c;
                }
                r
            }
        }
        Func::FBin(op, m) if fp::packed(ty).is_some() => {
            let f = fp::packed(ty).unwrap_or(F32);
            fp::per_half(s, |h| fp::binary(op, f, m, h[0], h[1]))
        }
        Func::Fma(m) if fp::packed(ty).is_some() => {
            let f = fp::packed(ty).unwrap_or(F32);
            fp::per_half(s, |h| fp::fma(f, m, h[0], h[1], h[2]))
        }
        Func::FNegAbs(neg, ftz) if fp::packed(ty).is_some() => {
            let f = fp::packed(ty).unwrap_or(F32);
            fp::per_half(s, |h| fp::abs_neg(f, neg, ftz, h[0]))
        }
        Func::FBin(op, m) => fp::binary(op, float(ty)?, m, s[0], s[1]),
        Func::Fma(m) => fp::fma(float(ty)?, m, s[0], s[1], s[2]),
        Func::FNegAbs(neg, ftz) => fp::abs_neg(float(ty)?, neg, ftz, s[0]),
        Func::FUnary(op, approx, m) => fp::unary(op, float(ty)?, approx, m, s[0]),
        Func::Copysign => fp::copysign(float(ty)?, s[0], s[1]),
        Func::Testp(op) => fp::testp(op, float(ty)?, s[0]).ok_or_else(|| format!("testp.{op}"))? as u64,
        Func::Cvt(c) => cvt::cvt(&c, s[0])?,
        Func::Popc => int::popc(ty, s[0]),
        Func::Clz => int::clz(ty, s[0]),
        Func::Brev => int::brev(ty, s[0]),
        Func::Bfind(shiftamt) => int::bfind(ty, shiftamt, s[0]),
        Func::Bfe => int::bfe(ty, s[0], s[1], s[2]),
        Func::Bfi => int::bfi(ty, s[0], s[1], s[2], s[3]),
        Func::Prmt(mode) => int::prmt(mode, s[0], s[1], s[2]),
        Func::Mul24(hi) => int::mul24(ty, hi, s[0], s[1]),
        Func::Mad24(hi) => int::mul24(ty, hi, s[0], s[1]).wrapping_add(s[2]) & 0xffff_ffff,
        Func::Sad => int::sad(ty, s[0], s[1], s[2]),
        Func::Lop3 => int::lop3(s[0], s[1], s[2], s[3]),
        Func::Shf(left, clamp) => int::shf(left, clamp, s[0], s[1], s[2]),
        Func::Selp => {
            if s[2] & 1 != 0 {
                s[0]
            } else {
                s[1]
            }
        }
        Func::Slct(cty, ftz) => {
            let take_a = if cty == ScalarType::F32 {
                let c = if ftz { F32.ftz(s[2]) } else { s[2] };
                f32::from_bits(c as u32) >= 0.0
            } else {
                sext(s[2], 32) >= 0
            };
            if take_a { s[0] } else { s[1] }
        }
        Func::Video { vop, signed, sat, op2, clamp } => video(vop, signed, sat, op2, clamp, s),
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
                let c0 = fp::compare(cmp, lane, ftz, s[0] & 0xffff, s[1] & 0xffff);
                let c1 = fp::compare(cmp, lane, ftz, (s[0] >> 16) & 0xffff, (s[1] >> 16) & 0xffff);
                let h = |t: bool| if combine(t, bool_op, c) { one(ty, 16) } else { 0 };
                h(c0) | h(c1) << 16
            } else if combine(fp::compare(cmp, src, ftz, s[0], s[1]), bool_op, c) {
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
                old + 1
            }
        }
        AtomOp::Dec => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        AtomOp::Min => int::min_max(ty, false, old, b),
        AtomOp::Max => int::min_max(ty, true, old, b),
    })
}

/// A scalar video instruction (PTX ISA 9.7.10 "Video Instructions" semantics, computed in
/// 128-bit integers): the operands extended by their types, the operation at full
/// precision, the optional saturation to the destination type's range, then the optional
/// secondary operation with `c` (extended by the destination type); the low 32 bits.
fn video(vop: &str, signed: [bool; 3], sat: bool, op2: Option<&str>, clamp: bool, s: &[u64]) -> u64 {
    let ext = |v: u64, sgn: bool| -> i128 { if sgn { i128::from(v as u32 as i32) } else { i128::from(v as u32) } };
    let (ta, tb) = (ext(s[0], signed[1]), ext(s[1], signed[2]));
    let amount = |b: i128| -> u32 { if clamp { b.min(32) as u32 } else { (b & 0x1f) as u32 } };
    let mut tmp: i128 = match vop {
        "vadd" => ta + tb,
        "vsub" => ta - tb,
        "vabsdiff" => (ta - tb).abs(),
        "vmin" => ta.min(tb),
        "vmax" => ta.max(tb),
        "vshl" => ta << amount(tb),
        _ => ta >> amount(tb),
    };
    if sat {
        tmp = if signed[0] {
            tmp.clamp(i128::from(i32::MIN), i128::from(i32::MAX))
        } else {
            tmp.clamp(0, i128::from(u32::MAX))
        };
    }
    if let Some(op) = op2 {
        let c = ext(s[2], signed[0]);
        tmp = match op {
            "add" => tmp + c,
            "min" => tmp.min(c),
            _ => tmp.max(c),
        };
    }
    (tmp as u64) & 0xffff_ffff
}
