//! Register values as typed bit patterns (PTX ISA 5.2.1 "Fundamental Types", 6.4 "Operand
//! Type Information").
//!
//! Every register slot holds a `u64`: the register's bits, zero above its declared width
//! (predicates hold 0 or 1). An instruction of type `.tN` reads the low `N` bits of a source
//! register (PTX ISA 6.4.1: a wider source is chopped) and writes its result extended to
//! the destination register's width: sign-extended for `.sN` types, zero-extended for all
//! others (PTX ISA 6.4.1 "Operand Size Exceeding Instruction-Type Size").

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ptx::ast::ImmValue;
use crate::ptx::types::ScalarType;

/// The mask of the low `bits` bits (`bits` in 1..=64).
#[inline]
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits).wrapping_sub(1) }
}

/// `v`'s low `bits` bits, sign-extended to 64 bits.
#[inline]
pub fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64u32.wrapping_sub(bits); // bits < 64
        ((v << s) as i64) >> s
    }
}

/// `v` read as an instruction of type `ty` sees it: the low `ty.bits()` bits, sign-extended
/// to 64 bits for `.sN` types, zero-extended otherwise.
#[inline]
pub fn extend(v: u64, ty: ScalarType) -> u64 {
    let b = ty.bits().min(64);
    if ty.is_signed() { sext(v, b) as u64 } else { v & mask(b) }
}

/// An immediate converted to the bits an instruction of type `ty` operates on (PTX ISA
/// 4.5 "Constants"): integers are two's-complement bits chopped to the type width; for
/// float types an integer literal is converted by value, `0f` (f32) and `0d`/decimal (f64)
/// literals are converted to the instruction's float width (f64 to f32 rounds to nearest
/// even); for integer types a float literal gives its bits (rounded to f32 first for a
/// 32-bit or narrower type). A predicate is 1 for any nonzero value.
pub fn imm_bits(v: ImmValue, ty: ScalarType) -> u64 {
    use ScalarType::*;
    match (ty, v) {
        (Pred, ImmValue::Int(i)) => (i != 0) as u64,
        (Pred, ImmValue::F32(b)) => (f32::from_bits(b) != 0.0) as u64,
        (Pred, ImmValue::F64(b)) => (f64::from_bits(b) != 0.0) as u64,
        (F32, ImmValue::Int(i)) => (i as f32).to_bits() as u64,
        (F32, ImmValue::F32(b)) => b as u64,
        (F32, ImmValue::F64(b)) => (f64::from_bits(b) as f32).to_bits() as u64,
        (F64, ImmValue::Int(i)) => (i as f64).to_bits(),
        (F64, ImmValue::F32(b)) => (f32::from_bits(b) as f64).to_bits(),
        (F64, ImmValue::F64(b)) => b,
        (_, ImmValue::Int(i)) => i as u64 & mask(ty.bits().min(64)),
        (_, ImmValue::F32(b)) => b as u64 & mask(ty.bits().min(64)),
        (t, ImmValue::F64(b)) if t.bits() <= 32 => (f64::from_bits(b) as f32).to_bits() as u64 & mask(t.bits()),
        (_, ImmValue::F64(b)) => b,
    }
}

/// Little-endian bytes of the low `n` bytes of `v`.
#[inline]
pub fn to_le(v: u64, n: usize) -> [u8; 8] {
    let mut out = [0u8; 8];
    for (o, b) in out.iter_mut().zip(v.to_le_bytes()).take(n) {
        *o = b;
    }
    out
}

/// The little-endian value of up to 8 bytes.
#[inline]
pub fn from_le(b: &[u8]) -> u64 {
    b.iter().rev().fold(0u64, |v, x| v << 8 | *x as u64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn extension_and_immediates() {
        assert_eq!(sext(0x80, 8), -128);
        assert_eq!(extend(0xffff_fff0, ScalarType::S32), (-16i64) as u64);
        assert_eq!(extend(0xffff_fff0, ScalarType::U16), 0xfff0);
        assert_eq!(imm_bits(ImmValue::Int(-1), ScalarType::U32), 0xffff_ffff);
        assert_eq!(imm_bits(ImmValue::Int(2), ScalarType::F32), 2.0f32.to_bits() as u64);
        assert_eq!(imm_bits(ImmValue::F64(1.5f64.to_bits()), ScalarType::F32), 1.5f32.to_bits() as u64);
        assert_eq!(imm_bits(ImmValue::F32(0x3f80_0000), ScalarType::B32), 0x3f80_0000);
        assert_eq!(from_le(&to_le(0x1234_5678, 3)[..3]), 0x34_5678);
    }
}
