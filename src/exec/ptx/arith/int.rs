//! Integer and bit-manipulation instruction semantics (PTX ISA 9.7.1 "Integer Arithmetic
//! Instructions", 9.7.2 "Extended-Precision Integer Arithmetic", 9.7.7 "Logic and Shift
//! Instructions").
//!
//! Every function takes operands as an instruction of type `ty` reads them (the low
//! `ty.bits()` bits, [`extend`]ed by signedness) and returns the result's bits; the caller
//! writes them to the destination register with the destination's extension rule.
//!
//! Widths are at most 64 bits ([`bits`]); sums and products of such values are computed
//! in 128 bits, where they are exact, and wrap modulo 2^n where the PTX ISA says so.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline"):
// operand values come from the executed program.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::ptx::value::{extend, mask, sext};
use crate::ptx::instr::{ArithOp, IntMode};
use crate::ptx::types::ScalarType;

/// The width of `ty` in bits, 1 to 64 (the interpreter's registers hold at most 64 bits;
/// a `.b128` reaching an integer operation is computed on its low 64 bits instead of
/// overflowing a shift).
fn bits(ty: ScalarType) -> u32 {
    ty.bits().clamp(1, 64)
}

fn smin(ty: ScalarType) -> i64 {
    sext(1u64 << bits(ty).saturating_sub(1), bits(ty)) // bits(ty) - 1 in 0..=63
}

fn smax(ty: ScalarType) -> i64 {
    (mask(bits(ty)) >> 1) as i64
}

/// Saturates a signed value to the range of `ty` (`.sat`, PTX ISA 9.7.1.1 add).
fn saturate(v: i128, ty: ScalarType) -> u64 {
    v.clamp(smin(ty) as i128, smax(ty) as i128) as u64
}

/// The full product of `a` and `b` as a 128-bit value (signed or unsigned by `ty`).
fn full_product(ty: ScalarType, a: u64, b: u64) -> u128 {
    // Exact: a 64 x 64-bit product fits in 128 bits (PTX ISA 9.7.1.3: the full 2N-bit product).
    if ty.is_signed() {
        i128::from(sext(a, 64)).wrapping_mul(i128::from(sext(b, 64))) as u128
    } else {
        u128::from(a).wrapping_mul(u128::from(b))
    }
}

/// `mul{.hi,.lo,.wide}.type` (PTX ISA 9.7.1.3 mul): `.lo` the low half of the 2N-bit
/// product, `.hi` the high half, `.wide` all 2N bits.
pub fn mul(ty: ScalarType, mode: IntMode, a: u64, b: u64) -> u64 {
    let p = full_product(ty, extend(a, ty), extend(b, ty));
    let n = bits(ty);
    match mode {
        IntMode::Lo => p as u64 & mask(n),
        IntMode::Hi => (p >> n) as u64 & mask(n),
        IntMode::Wide => p as u64 & mask(n.saturating_mul(2)), // n <= 64
    }
}

/// `mad{.hi,.lo,.wide}{.sat}.type` (PTX ISA 9.7.1.4 mad): the selected part of `a * b`
/// plus `c` (`c` is 2N bits for `.wide`); `.sat` (only `mad.hi.sat.s32`) saturates
/// `(a * b).hi + c` to the 32-bit signed range.
pub fn mad(ty: ScalarType, mode: IntMode, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = bits(ty);
    let t = mul(ty, mode, a, b);
    if sat && ty.is_signed() {
        // Exact in 128 bits; then clamped (PTX ISA 9.7.1.4 mad.hi.sat).
        return saturate(i128::from(sext(t, n)).wrapping_add(i128::from(sext(c, n))), ty) & mask(n);
    }
    let w = if mode == IntMode::Wide { n.saturating_mul(2) } else { n }; // n <= 64
    t.wrapping_add(c) & mask(w)
}

/// `add`/`sub` with optional `.sat` (`.s32` only) and carry (PTX ISA 9.7.1.1, 9.7.1.2,
/// 9.7.2.1-9.7.2.4 `add.cc addc sub.cc subc`). `carry_in` is `CC.CF` for `addc`/`subc`
/// (`None` otherwise). Returns the result bits and the new `CC.CF`.
///
/// `CC.CF` is the carry out of the adder in both directions: `a - b` is computed as
/// `a + ~b + 1` (`subc`: `a + ~b + CC.CF`), so after a subtraction `CC.CF` is the
/// complement of the borrow. PTX ISA 9.7.2.3 describes `sub.cc`'s flag as "the borrow"
/// and `subc` as `a - (b + CC.CF)`; chains of `sub.cc`/`subc` give the same values under
/// either reading, and NVIDIA's implementation settles the mixed chains: ptxas 11.8 for
/// sm_50 compiles `sub.cc` to `IADD d.CC, a, -b` and both `addc` and `subc` to `IADD.X`
/// (`subc` with `~b`), so `sub.cc` then `addc.u32 d, 0, 0` gives 1 when nothing was
/// borrowed (observed), and `add.cc` then `subc` subtracts `1 - carry`.
pub fn add_sub(ty: ScalarType, sub: bool, sat: bool, a: u64, b: u64, carry_in: Option<bool>) -> (u64, bool) {
    let n = bits(ty);
    let m = mask(n);
    if sat && ty.is_signed() {
        let (sa, sb) = (i128::from(sext(a, n)), i128::from(sext(b, n)));
        // Exact in 128 bits, then clamped (PTX ISA 9.7.1.1 add.sat).
        return (saturate(if sub { sa.wrapping_sub(sb) } else { sa.wrapping_add(sb) }, ty) & m, false);
    }
    let (ua, ub) = ((a & m) as u128, (b & m) as u128);
    let (ub, cin) = if sub { (!ub & m as u128, carry_in.unwrap_or(true)) } else { (ub, carry_in.unwrap_or(false)) };
    // At most 2^65 - 1: exact in 128 bits; bit n is the carry out (PTX ISA 9.7.2.1 add.cc).
    let s = ua.wrapping_add(ub).wrapping_add(u128::from(cin));
    (s as u64 & m, s >> n != 0)
}

/// `div.type` (PTX ISA 9.7.1.6 div): truncating division. Division by zero is unspecified
/// in PTX; the interpreter returns all ones, as ptxas 11.8's code for sm_50 does (observed
/// for `div.u32`, `div.s32`, `div.u64`). `MIN / -1` wraps to `MIN`.
pub fn div(ty: ScalarType, a: u64, b: u64) -> u64 {
    let n = bits(ty);
    if b & mask(n) == 0 {
        return mask(n);
    }
    if ty.is_signed() {
        // b != 0; only i64::MIN / -1 overflows, and wraps to i64::MIN (the dividend).
        let sa = sext(a, n);
        sa.checked_div(sext(b, n)).unwrap_or(sa) as u64 & mask(n)
    } else {
        (a & mask(n)).checked_div(b & mask(n)).unwrap_or(mask(n)) // b != 0 here
    }
}

/// `rem.type` (PTX ISA 9.7.1.7 rem): the remainder with the sign of `a`. By zero
/// (unspecified in PTX) the interpreter returns all ones, as ptxas 11.8's code for sm_50
/// does for `rem.u32`/`rem.s32` (observed: `@P LOP.PASS_B r, RZ, ~b` when `b == 0`).
pub fn rem(ty: ScalarType, a: u64, b: u64) -> u64 {
    let n = bits(ty);
    if b & mask(n) == 0 {
        return mask(n);
    }
    if ty.is_signed() {
        // b != 0; only i64::MIN % -1 overflows, and its remainder is 0.
        sext(a, n).checked_rem(sext(b, n)).unwrap_or(0) as u64 & mask(n)
    } else {
        (a & mask(n)).checked_rem(b & mask(n)).unwrap_or(mask(n)) // b != 0 here
    }
}

/// `min`/`max` (PTX ISA 9.7.1.10, 9.7.1.11), signed for `.sN`, unsigned otherwise.
pub fn min_max(ty: ScalarType, max: bool, a: u64, b: u64) -> u64 {
    let n = bits(ty);
    let less = if ty.is_signed() { sext(a, n) < sext(b, n) } else { a & mask(n) < b & mask(n) };
    (if less != max { a } else { b }) & mask(n)
}

/// `shl` / `shr` (PTX ISA 9.7.7.7, 9.7.7.8): the amount `b` (unsigned 32-bit) is clamped
/// to the type width; `shr` is arithmetic for `.sN` and logical otherwise.
pub fn shift(ty: ScalarType, left: bool, a: u64, b: u64) -> u64 {
    let n = bits(ty);
    let s = (b & 0xffff_ffff).min(u64::from(n)) as u32; // clamped to the width, at most 64
    if left {
        a.checked_shl(s).unwrap_or(0) & mask(n)
    } else if ty.is_signed() {
        (sext(a, n) >> s.min(63)) as u64 & mask(n)
    } else {
        (a & mask(n)).checked_shr(s).unwrap_or(0) & mask(n)
    }
}

/// The two-operand and one-operand integer/logic ops of [`ArithOp`] that need no mode:
/// `add sub div rem min max and or xor` and `abs neg not cnot` (`b` ignored). Predicates
/// (`.pred`) use bit 0 only.
pub fn simple(op: ArithOp, ty: ScalarType, a: u64, b: u64) -> u64 {
    let n = bits(ty);
    let m = mask(n);
    match op {
        ArithOp::Add => a.wrapping_add(b) & m,
        ArithOp::Sub => a.wrapping_sub(b) & m,
        ArithOp::Div => div(ty, a, b),
        ArithOp::Rem => rem(ty, a, b),
        ArithOp::Min => min_max(ty, false, a, b),
        ArithOp::Max => min_max(ty, true, a, b),
        ArithOp::And => a & b & m,
        ArithOp::Or => (a | b) & m,
        ArithOp::Xor => (a ^ b) & m,
        ArithOp::Not => !a & m,
        ArithOp::Cnot => (a & m == 0) as u64,
        ArithOp::Neg => a.wrapping_neg() & m,
        ArithOp::Abs => (sext(a, n).wrapping_abs() as u64) & m,
        ArithOp::Shl => shift(ty, true, a, b),
        ArithOp::Shr => shift(ty, false, a, b),
        ArithOp::Mul
        | ArithOp::Mad
        | ArithOp::Fma
        | ArithOp::Addc
        | ArithOp::Subc
        | ArithOp::Madc
        | ArithOp::Mul24
        | ArithOp::Mad24
        | ArithOp::Sad => unreachable!("decoded to their own functions"),
    }
}

/// `popc.type` (PTX ISA 9.7.1.15): number of one bits, as `.u32`.
pub fn popc(ty: ScalarType, a: u64) -> u64 {
    (a & mask(bits(ty))).count_ones() as u64
}

/// `clz.type` (PTX ISA 9.7.1.16): leading zeros within the type width, as `.u32`.
pub fn clz(ty: ScalarType, a: u64) -> u64 {
    let n = bits(ty);
    // The masked value has at least 64 - n leading zeros.
    u64::from((a & mask(n)).leading_zeros().saturating_sub(64u32.saturating_sub(n)))
}

/// `brev.type` (PTX ISA 9.7.1.18): bit reversal within the type width.
pub fn brev(ty: ScalarType, a: u64) -> u64 {
    let n = bits(ty);
    a.reverse_bits() >> 64u32.saturating_sub(n) // n >= 1: a shift below 64
}

/// `bfind{.shiftamt}.type` (PTX ISA 9.7.1.17): position of the most significant non-sign
/// bit, `0xffffffff` if none; `.shiftamt` gives `msb - position` instead.
pub fn bfind(ty: ScalarType, shiftamt: bool, a: u64) -> u64 {
    let n = bits(ty);
    let mut v = a & mask(n);
    if ty.is_signed() && v >> n.saturating_sub(1) & 1 == 1 {
        v = !v & mask(n);
    }
    if v == 0 {
        return 0xffff_ffff;
    }
    // v != 0 and v < 2^n: pos = 63 - leading zeros in 0..n.
    let pos = 63u64.saturating_sub(u64::from(v.leading_zeros()));
    if shiftamt { u64::from(n).saturating_sub(1).saturating_sub(pos) } else { pos }
}

/// `bfe.type d, a, b, c` (PTX ISA 9.7.1.19): extracts `len = c & 0xff` bits from
/// `pos = b & 0xff`, zero-extended for `.uN`, sign-extended from the field's top bit (or
/// from bit `msb` when the field runs past it) for `.sN`; `len == 0` gives 0.
pub fn bfe(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    let n = bits(ty);
    let msb = n.saturating_sub(1); // n >= 1
    // pos, len <= 255: their sums cannot overflow a u32; bit numbers used are <= msb < 64.
    let (pos, len) = ((b & 0xff) as u32, (c & 0xff) as u32);
    let sbit =
        if !ty.is_signed() || len == 0 { 0 } else { a >> pos.saturating_add(len).saturating_sub(1).min(msb) & 1 };
    let mut d = 0u64;
    for i in 0..n {
        let at = pos.saturating_add(i);
        let bit = if i < len && at <= msb { a >> at & 1 } else { sbit };
        d |= bit << i;
    }
    d
}

/// `bfi.type f, a, b, c, d` (PTX ISA 9.7.1.20): `b` with `len = d & 0xff` low bits of `a`
/// inserted at `pos = c & 0xff` (bits past the msb dropped).
pub fn bfi(ty: ScalarType, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let n = bits(ty);
    let (pos, len) = ((c & 0xff) as u32, (d & 0xff) as u32);
    let mut f = b & mask(n);
    // Bit numbers: i < at = pos + i < n <= 64 (pos, len <= 255, no overflow).
    for i in 0..len {
        let at = pos.saturating_add(i);
        if at >= n {
            break;
        }
        f = (f & !(1 << at)) | ((a >> i & 1) << at);
    }
    f
}

/// `prmt.b32{.mode} d, a, b, c` (PTX ISA 9.7.8.7 prmt): byte permute of the 8 bytes
/// `{b, a}` selected by `c`. `mode` is `None` for the generic form or one of `f4e b4e rc8
/// ecl ecr rc16`.
pub fn prmt(mode: Option<&str>, a: u64, b: u64, c: u64) -> u64 {
    let x = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    // Byte numbers below 8 and selector nibbles below 4: every shift is below 64.
    let byte = |i: u64| (x >> ((i & 7) << 3)) & 0xff;
    let sel = |k: u32| -> u64 {
        match mode {
            None => {
                let s = c >> (k << 2) & 0xf;
                let v = byte(s & 7);
                if s & 8 != 0 { if v & 0x80 != 0 { 0xff } else { 0 } } else { v }
            }
            Some(m) => {
                let s = c & 3;
                let idx = match m {
                    // s <= 3, k <= 3 (PTX ISA 9.7.8.7 prmt modes, indices modulo 8).
                    "f4e" => s.wrapping_add(u64::from(k)) & 7,
                    "b4e" => s.wrapping_add(8).wrapping_sub(u64::from(k)) & 7,
                    "rc8" => s,
                    "ecl" => u64::from(k).max(s),
                    "ecr" => u64::from(k).min(s),
                    _ => ((s & 1) << 1) | (u64::from(k) & 1),
                };
                byte(idx)
            }
        }
    };
    (0..4u32).fold(0, |acc, k| acc | sel(k) << (k << 3))
}

/// `mul24{.hi,.lo}.type` (PTX ISA 9.7.1.12): the 48-bit product of the low 24 bits of each
/// operand (sign-extended for `.s32`); `.lo` its low 32 bits, `.hi` bits 47..16.
pub fn mul24(ty: ScalarType, hi: bool, a: u64, b: u64) -> u64 {
    let f = |v: u64| if ty.is_signed() { sext(v, 24) } else { (v & 0xff_ffff) as i64 };
    let p = f(a).wrapping_mul(f(b)) as u64;
    if hi { (p >> 16) & 0xffff_ffff } else { p & 0xffff_ffff }
}

/// `sad.type d, a, b, c` (PTX ISA 9.7.1.9): `c + |a - b|`.
pub fn sad(ty: ScalarType, a: u64, b: u64, c: u64) -> u64 {
    let n = bits(ty);
    let d = if ty.is_signed() { sext(a, n).abs_diff(sext(b, n)) } else { (a & mask(n)).abs_diff(b & mask(n)) };
    c.wrapping_add(d) & mask(n)
}

/// `lop3.b32 d, a, b, c, immLut` (PTX ISA 9.7.7.6): the function of three inputs given
/// by its truth table (`a = 0xF0, b = 0xCC, c = 0xAA`).
pub fn lop3(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    let mut d = 0;
    for i in 0..32 {
        let idx = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1);
        d |= (lut >> idx & 1) << i;
    }
    d
}

/// `shf.{l,r}.{clamp,wrap}.b32 d, a, b, c` (PTX ISA 9.7.7.9 funnel shift): shifts the
/// 64-bit `{b, a}` by `c` (masked to 5 bits with `.wrap`, clamped to 32 with `.clamp`)
/// and returns the upper (`.l`) or lower (`.r`) 32 bits.
pub fn shf(left: bool, clamp: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if clamp { (c & 0xffff_ffff).min(32) } else { c & 31 };
    let x = (b & 0xffff_ffff) << 32 | (a & 0xffff_ffff);
    if left { ((x << n) >> 32) & 0xffff_ffff } else { (x >> n) & 0xffff_ffff } // n <= 32
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn multiply_modes() {
        let m1 = 0xffff_ffffu64; // -1 as s32, 2^32-1 as u32
        assert_eq!(mul(S32, IntMode::Hi, m1, 2), 0xffff_ffff);
        assert_eq!(mul(U32, IntMode::Hi, m1, 2), 1);
        assert_eq!(mul(S32, IntMode::Wide, m1, 2), (-2i64) as u64);
        assert_eq!(mul(U32, IntMode::Wide, m1, 2), 0x1_ffff_fffe);
        assert_eq!(mul(S64, IntMode::Hi, u64::MAX, 3), u64::MAX);
        assert_eq!(mul(U64, IntMode::Hi, u64::MAX, 3), 2);
        assert_eq!(mul(S16, IntMode::Wide, 0x8000, 0x8000), 0x4000_0000);
        assert_eq!(mad(S32, IntMode::Hi, true, 0x7fff_ffff, 0x7fff_ffff, 0x7fff_ffff), 0x7fff_ffff);
        assert_eq!(mad(U32, IntMode::Wide, false, m1, m1, 1), 0xffff_fffe_0000_0002);
    }

    #[test]
    fn shifts_and_fields() {
        assert_eq!(shift(S32, false, 0x8000_0000, 4), 0xf800_0000);
        assert_eq!(shift(U32, false, 0x8000_0000, 4), 0x0800_0000);
        assert_eq!(shift(B32, false, 0x8000_0000, 40), 0);
        assert_eq!(shift(S32, false, 0x8000_0000, 40), 0xffff_ffff);
        assert_eq!(shift(B16, true, 1, 16), 0);
        assert_eq!(bfe(U32, 0xf0, 4, 4), 0xf);
        assert_eq!(bfe(S32, 0xf0, 4, 4), 0xffff_ffff);
        assert_eq!(bfe(S32, 0x70, 4, 4), 7);
        assert_eq!(bfe(S32, 0x8000_0000, 31, 8), 0xffff_ffff);
        assert_eq!(bfe(U32, 0xff, 0, 0), 0);
        assert_eq!(bfi(B32, 0xf, 0xffff_0000, 4, 8), 0xffff_00f0);
        assert_eq!(bfind(S32, false, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(bfind(U32, true, 1), 31);
        assert_eq!(clz(B32, 1), 31);
        assert_eq!(popc(B64, u64::MAX), 64);
        assert_eq!(brev(B32, 1), 0x8000_0000);
    }

    #[test]
    fn add_sub_div() {
        assert_eq!(add_sub(S32, false, true, 0x7fff_ffff, 1, None), (0x7fff_ffff, false));
        assert_eq!(add_sub(U32, false, false, 0xffff_ffff, 1, None), (0, true));
        // sub.cc: CC.CF is the adder's carry, the complement of the borrow.
        assert_eq!(add_sub(U32, true, false, 0, 1, None), (0xffff_ffff, false));
        assert_eq!(add_sub(U32, true, false, 1, 1, None), (0, true));
        // subc with CC.CF = 1 (no borrow pending) is a plain subtraction.
        assert_eq!(add_sub(U32, true, false, 5, 3, Some(true)), (2, true));
        assert_eq!(add_sub(U32, true, false, 5, 3, Some(false)), (1, true));
        assert_eq!(rem(U32, 7, 0), 0xffff_ffff);
        assert_eq!(div(S32, (-7i64) as u64 & 0xffff_ffff, 2), 0xffff_fffd);
        assert_eq!(rem(S32, (-7i64) as u64 & 0xffff_ffff, 2), 0xffff_ffff);
        assert_eq!(div(U32, 7, 0), 0xffff_ffff);
        assert_eq!(simple(ArithOp::Abs, S32, 0x8000_0000, 0), 0x8000_0000);
        assert_eq!(prmt(None, 0x4433_2211, 0x8877_6655, 0x0123), 0x1122_3344);
        assert_eq!(lop3(0xf0, 0xcc, 0xaa, 0x96), 0xf0 ^ 0xcc ^ 0xaa);
        assert_eq!(shf(true, false, 0x8000_0000, 1, 1), 3);
    }
}
