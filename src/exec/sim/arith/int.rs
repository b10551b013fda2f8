//! Semantics of the integer opcodes added for PTX's bit and saturating instructions, and of
//! `MUFU.RCP` (the reciprocal estimate of the integer division sequences).
//!
//! Sources, per opcode:
//! * `FLO{.U32}{.SH}`: ptxas 11.8 compiles `bfind.u32`, `bfind.s32` and their `.shiftamt`
//!   forms to exactly one `FLO.U32`, `FLO`, `FLO.U32.SH`, `FLO.SH`, so FLO computes PTX
//!   `bfind` (PTX ISA 9.7.1.17): the position of the most significant bit that differs
//!   from the sign (unsigned: the most significant one), `0xffffffff` if there is none;
//!   `.SH` gives `31 - position` instead. `~Rb` inverts the operand first (ptxas:
//!   `FLO.U32 R6, ~R2` for the low word of `bfind.s64`).
//! * `PRMT{.mode}`: ptxas compiles `prmt.b32{.mode} d, a, b, c` to `PRMT{.MODE} d, a, c, b`
//!   (selector in the B slot, `b` in the C slot), so PRMT computes PTX `prmt` (PTX ISA
//!   9.7.8.7) on the bytes `{Rc, Ra}` with selector `Sb`.
//! * `IADD.SAT`: ptxas compiles `add.sat.s32` to `IADD.SAT Ra, Sb` and `sub.sat.s32` to
//!   `IADD.SAT Ra, -Sb`; PTX ISA 9.7.1.1/9.7.1.2 define the result as the exact signed
//!   sum (difference) clamped to `[INT_MIN, INT_MAX]`, so `-Sb` negates exactly
//!   (`-INT_MIN` is `2^31` before clamping).
//! * `IADD3.RS/.LS` (envytools `maxwell/cuda/int.rst`): `((a + b) >> 16) + c` and
//!   `((a + b) << 16) + c`. The `.RS` sum keeps its carry: ptxas finishes `mul.hi.u32` with
//!   `IADD3.RS d, (alo*bhi... )` sums that exceed 32 bits, which would be wrong otherwise.
//!   Negated operands are not modelled for these two modes.
//! * `BFE.BREV`: ptxas compiles `brev.b32` to `BFE.U32.BREV d, a, 0x2000`: the operand is
//!   bit-reversed, then the field extracted.
//! * `MUFU.RCP`: PTX `rcp.approx.f32` (PTX ISA 9.7.3.x) documents a maximum error of 1 ulp;
//!   the model returns the correctly rounded reciprocal moved by `-2..=+2` ulp, chosen by a
//!   hash of the launch seed and the operand (a fixed function of the input for one seed,
//!   as hardware is, but a different one per seed), so code that relies on the exact
//!   rounding of the estimate fails some seed. Special operands follow IEEE (`±0 -> ±inf`,
//!   `±inf -> ±0`, NaN -> canonical NaN); subnormal operands flush to zero first (MUFU
//!   always flushes) and results below the normal range flush to zero of the same sign.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::ExecError;
use crate::exec::sim::Sim;
use crate::exec::sim::state::{Lanes, PerLane, WARP_SIZE, Warp, lanes};
use crate::sass::instr::{Dst, Instr, Src};
use crate::sass::op::{Iadd3Mode, Op, PrmtMode};

/// FLO: `bfind` of `a` (PTX ISA 9.7.1.17), signed unless `u32`, shift amount with `sh`.
pub fn flo(a: u32, u32_: bool, sh: bool) -> u32 {
    let v = if !u32_ && (a as i32) < 0 { !a } else { a };
    // No significant bit: all ones (PTX ISA 9.7.1.17 `bfind`, "0xffffffff").
    let Some(pos) = v.checked_ilog2() else {
        return u32::MAX;
    };
    // `.SH`: the shift amount `31 - pos`, the number of leading zeros.
    if sh { v.leading_zeros() } else { pos }
}

/// PRMT (PTX ISA 9.7.8.7 `prmt`): bytes of `{c, a}` (byte 0 = low byte of `a`, byte 7 =
/// high byte of `c`) chosen by `sel`.
pub fn prmt(mode: PrmtMode, a: u32, sel: u32, c: u32) -> u32 {
    let x = ((c as u64) << 32 | a as u64).to_le_bytes();
    let byte = |i: u32| x.get((i & 7) as usize).copied().unwrap_or(0);
    // Byte selectors are 3-bit fields, `k` (the result byte) and `s` are below 4: the
    // sums below stay under 8 and are taken modulo 8 as the PRMT modes define.
    let s = sel & 3;
    let pick = |k: u32| -> u8 {
        match mode {
            PrmtMode::Idx => {
                let n = sel >> (k << 2) & 0xf; // selector nibble k
                let v = byte(n & 7);
                if n & 8 != 0 { if v & 0x80 != 0 { 0xff } else { 0 } } else { v }
            }
            PrmtMode::F4e => byte(s.wrapping_add(k)),
            PrmtMode::B4e => byte(s.wrapping_sub(k) & 7), // (8 + s - k) mod 8
            PrmtMode::Rc8 => byte(s),
            PrmtMode::Ecl => byte(k.max(s)),
            PrmtMode::Ecr => byte(k.min(s)),
            PrmtMode::Rc16 => byte((s & 1) << 1 | (k & 1)),
        }
    };
    u32::from_le_bytes([pick(0), pick(1), pick(2), pick(3)])
}

/// IADD.SAT: `a + b` (each negated as given, exactly) clamped to the s32 range.
pub fn iadd_sat(a: u32, neg_a: bool, b: u32, neg_b: bool) -> u32 {
    // |v| <= 2^31, so neither the negation nor the sum saturates in i64.
    let v = |x: u32, n: bool| if n { (x as i32 as i64).saturating_neg() } else { x as i32 as i64 };
    v(a, neg_a).saturating_add(v(b, neg_b)).clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
}

/// IADD3 with a shift mode: `.RS` `((a + b) >> 16) + c` with the 33-bit sum, `.LS`
/// `((a + b) << 16) + c`, plain `a + b + c` (operands already negated).
pub fn iadd3(mode: Iadd3Mode, a: u32, b: u32, c: u32) -> u32 {
    // SASS integer adds wrap modulo 2^32; `.RS` shifts the 33-bit sum (carry on top).
    let (ab, carry) = a.overflowing_add(b);
    match mode {
        Iadd3Mode::Plain => ab.wrapping_add(c),
        Iadd3Mode::Rs => (ab >> 16 | (carry as u32) << 16).wrapping_add(c),
        Iadd3Mode::Ls => (ab << 16).wrapping_add(c),
    }
}

/// A 64-bit mix of `a` and `b` (SplitMix64's finalizer), for the MUFU perturbations.
pub(in crate::exec::sim) fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn src(i: &Instr, k: usize) -> Result<&Src, ExecError> {
    i.srcs.get(k).ok_or_else(|| ExecError::Unsupported(format!("{} is missing operand {k}", i.op.name())))
}

impl Sim<'_> {
    /// Executes FLO, PRMT, IADD.SAT, MUFU and RRO in the lanes of `mask`. Returns false for an
    /// opcode of another family.
    pub(in crate::exec::sim) fn exec_int(&mut self, w: &mut Warp, i: &Instr, mask: u32) -> Result<bool, ExecError> {
        let g = |w: &Warp, s: &Self, k: usize| -> Result<Lanes, ExecError> { w.gather(src(i, k)?, &s.banks, mask) };
        let mut out: Lanes = [0; WARP_SIZE];
        match i.op {
            Op::Flo { u32, sh } => {
                let last = i.srcs.len().checked_sub(1).ok_or_else(|| ExecError::Unsupported("FLO operand".into()))?;
                let (s, a) = (src(i, last)?, g(w, self, last)?);
                for l in lanes(mask) {
                    out.set(l, flo(if s.mods.inv { !a.at(l) } else { a.at(l) }, u32, sh));
                }
            }
            Op::Prmt(mode) => {
                let (a, sel, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                for l in lanes(mask) {
                    out.set(l, prmt(mode, a.at(l), sel.at(l), c.at(l)));
                }
            }
            Op::IaddSat | Op::Iadd32iSat => {
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    out.set(l, iadd_sat(a.at(l), sa.mods.neg, b.at(l), sb.mods.neg));
                }
            }
            Op::Mufu(f) => {
                let a = g(w, self, 0)?;
                // `|x|` and `-x` on the f32 operand (ptxas 11.8: `MUFU.RSQ R0, |R1|` in
                // `samples/float_math`): clear, then flip the sign bit.
                let m = src(i, 0)?.mods;
                if m.inv || m.h1 {
                    return Err(ExecError::Unsupported(format!("MUFU {f:?} with operand modifiers {m:?}")));
                }
                for l in lanes(mask) {
                    let x = if m.abs { a.at(l) & 0x7fff_ffff } else { a.at(l) };
                    let x = if m.neg { x ^ 0x8000_0000 } else { x };
                    out.set(l, crate::exec::sim::arith::mufu::mufu(f, x, self.mufu_seed));
                }
            }
            Op::Rro { ex2 } => {
                let a = g(w, self, 0)?;
                if src(i, 0)?.mods != Default::default() {
                    return Err(ExecError::Unsupported("RRO with operand modifiers".into()));
                }
                for l in lanes(mask) {
                    out.set(l, crate::exec::sim::arith::mufu::rro(ex2, a.at(l)));
                }
            }
            _ => return Ok(false),
        }
        match i.dsts.first() {
            Some(Dst::Reg(r)) => w.write32(*r, mask, &out),
            _ => return Err(ExecError::Unsupported(format!("{} without a register destination", i.op.name()))),
        }
        Ok(true)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn flo_is_bfind() {
        assert_eq!(flo(0, true, false), u32::MAX);
        assert_eq!(flo(0, true, true), u32::MAX);
        assert_eq!(flo(1, true, false), 0);
        assert_eq!(flo(1, true, true), 31);
        assert_eq!(flo(0x8000_0000, true, false), 31);
        assert_eq!(flo(0x8000_0000, false, false), 30);
        assert_eq!(flo(u32::MAX, false, false), u32::MAX);
        assert_eq!(flo(0x7fff_ffff, false, true), 1);
    }

    #[test]
    fn prmt_modes() {
        let (a, c) = (0x4433_2211, 0x8877_6655);
        assert_eq!(prmt(PrmtMode::Idx, a, 0x0123, c), 0x1122_3344);
        assert_eq!(prmt(PrmtMode::Idx, a, 0x8888, c), 0);
        assert_eq!(prmt(PrmtMode::Idx, a, 0xffff, c), 0xffff_ffff);
        assert_eq!(prmt(PrmtMode::F4e, a, 1, c), 0x5544_3322);
        assert_eq!(prmt(PrmtMode::B4e, a, 0, c), 0x6677_8811);
        assert_eq!(prmt(PrmtMode::Rc8, a, 2, c), 0x3333_3333);
        assert_eq!(prmt(PrmtMode::Ecl, a, 1, c), 0x4433_2222);
        assert_eq!(prmt(PrmtMode::Ecr, a, 2, c), 0x3333_2211);
        assert_eq!(prmt(PrmtMode::Rc16, a, 1, c), 0x4433_4433);
    }

    #[test]
    fn saturating_and_shifted_adds() {
        assert_eq!(iadd_sat(0x7fff_ffff, false, 1, false), 0x7fff_ffff);
        assert_eq!(iadd_sat(0, false, 0x8000_0000, true), 0x7fff_ffff);
        assert_eq!(iadd_sat(0x8000_0000, false, 1, true), 0x8000_0000);
        assert_eq!(iadd3(Iadd3Mode::Rs, 0xffff_ffff, 0xffff_ffff, 1), 0x2_0000);
        assert_eq!(iadd3(Iadd3Mode::Ls, 1, 2, 5), 0x3_0005);
    }
}
