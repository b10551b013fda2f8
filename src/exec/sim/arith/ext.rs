//! Semantics of the forms ptxas 11.8 emits that ptx2sass does not (they reach the
//! simulator only through loaded listings, [`crate::sass::listing`]).
//!
//! Sources, per opcode (each one is also checked by running ptxas's code for the samples
//! against the PTX interpreter, `tests/sim_ptxas.rs`; "inferred" marks a semantic that
//! only that agreement supports):
//! * `ISCADD32I d, a, imm, s`: `(a << s) + imm`, the 32-bit-immediate form of ISCADD
//!   (nvdisasm operand order; ptxas 11.8 builds f32 exponents with it: `ISCADD32I R10,
//!   R14, -0x3f800000, 0x17`).
//! * `SHL.W`/`SHR.W`: the shift amount taken modulo 32, as `SHF`'s `.W` (PTX ISA 9.7.7.9
//!   `shf.wrap`; ptxas emits them for `shl`/`shr` by `amount & 31`, `samples/int_ops`).
//! * `IADD3{.X} d.CC`: envytools `maxwell/cuda/int.rst` (`add_with_carry` of three
//!   operands); `-x` is `~x + 1`, and `~x` under `.X` as for IADD (module
//!   [`crate::exec::sim::arith::alu`]). Inferred: the carry out of a three-operand sum can be 2, and
//!   ptxas chains `IADD3 R8.CC, -R8, R9, R15` into `IADD3.X R0, -R23, R0, R22` for 64-bit
//!   three-way sums, so the simulator keeps the second carry bit ([`CF2`]) for IADD3.X.
//! * `IMNMX.XHI d.CC, ahi, bhi, p` / `IMNMX.U32.XLO d, alo, blo, p`: a 64-bit min
//!   (`p` true) or max split in words (ptxas 11.8 for `min.s64`/`max.u64`,
//!   `samples/int_ops`); inferred: XHI selects on the high words (signed unless `.U32`)
//!   and records in CC whether they were equal (ZF) and whether `a` was smaller (CF);
//!   XLO takes the low word of the operand XHI chose, or the unsigned min/max of the low
//!   words when the high words were equal.
//! * `LOP.op{.Z,.NZ} {Pd,} Rd{.CC}, ...` (and `LOP32I`, `LOP3.LUT`): the logic result,
//!   `Pd` set when it is zero (`.Z`) or non-zero (`.NZ`) (ptxas: `LOP3.LUT.NZ P0, RZ, R8,
//!   R9, R7, 0xc8` then `@!P0 BRA`), CC the flags of the result (inferred: ptxas tests the
//!   sign of a product with `LOP.XOR RZ.CC, R5, R7` then `CSETP.SFT`).
//! * `ICMP.cmp d, a, b, c`: `d = (c cmp 0) ? a : b` (NVIDIA CUDA Binary Utilities,
//!   instruction set reference: "ICMP: Integer Compare to Zero and Select Source").
//! * `ISET/FSET/DSET`: the comparison (combined with `Pc` by `.AND/.OR/.XOR`) as a value,
//!   all ones when true (1.0 with `.BF`), 0 when false (CUDA Binary Utilities: "Integer
//!   Compare And Set", "FP32 Compare And Set"); with `Rd.CC` the flags of that value
//!   (ZF when 0, SF its sign).
//! * `CSETP.test.bop Pd, Qd, CC, Pc` and `BRA CC.test`: the CC tests of envytools
//!   `envydis/gm107.c` (LT = SF xor OF, EQ = ZF, ..., SFT = SF, LO = !CF, HI = CF and
//!   not ZF, ...); NEU/EQU read ZF only (CC holds no unordered flag in this model).
//! * `I2I d.CC, a`: the conversion, and CC from the result (ZF, SF; ptxas 11.8 tests a
//!   sign with `I2I.S32.S32 RZ.CC, R5` then `CSETP.SFT`).
//! * `FCHK.DIVIDE P, a, b`: true when the fast `a / b` sequence (MUFU.RCP, FFMA
//!   refinement and residual) might not be correctly rounded, i.e. outside normal
//!   operands with moderate exponents. ptxas branches to a full-precision slow path when
//!   it is true, so the model is conservative: it answers true whenever either operand is
//!   zero, denormal, infinite or NaN, or an exponent (or their difference) is beyond
//!   ±100, which can only cost time, never change a result (a zero dividend must take
//!   the slow path: the fast path turns `-0 / 1` into +0). ptx2sass emits FCHK too
//!   (`lower::arith::float32`); its fast path is correct well beyond this model's range (`|a|`
//!   from `2^-100`, `b` within `2^±120`, normal quotients: the emulation test
//!   `fast_paths` in [`crate::exec::sim::arith::mufu`]), so a hardware FCHK that passes more pairs than the
//!   model, up to that range, is covered too. A model passing every pair of normal
//!   operands is too permissive: `tests/f32_ieee.rs` then fails (`0x00800001 /
//!   0x3eaaaaab`: the residual `a - b q0` is subnormal and inexact), as it does when FCHK
//!   always answers false (`0 / inf`).
//! * `IMUL{32I}{.ta.tb}{.HI} d, a, b` and `IMAD{.ta.tb}{.HI}{.SAT} d, a, b, c`: the
//!   64-bit product (each operand `.S32` or `.U32`, both signed when neither is printed), its
//!   low or (`.HI`) high word, plus `c`, clamped to the s32 range with `.SAT` (ptxas
//!   11.8 emits `IMAD.HI.SAT` for PTX `mad.hi.sat.s32`, PTX ISA 9.7.1.6: "d =
//!   saturate(t<63..32> + c)").
//! * `FCMP.cmp{.FTZ} d, a, b, c`: `d = (c cmp 0.0) ? a : b` (CUDA Binary Utilities: "FCMP:
//!   FP32 Compare to Zero and Select Source"; ptxas 11.8: `FCMP.LEU R9, RZ, c[0x2][0x0],
//!   R6` for a select on a float sign).
//! * `I2I.dst.src.SAT`: the conversion clamped to the destination's range (PTX `cvt.sat`,
//!   ptxas: `I2I.U16.U32.SAT` for `cvt.sat.u16.u32`).
//! * `VABSDIFF{.U32.U32}{.SD}{.SAT}.ACC d, a, b, c`: PTX `vabsdiff` (PTX ISA 9.7.16.1,
//!   scalar video instructions): `|a - b|` of the operands extended per their type, plus
//!   `c` with `.ACC`, saturated to the destination's type with `.SAT` (ptxas 11.8:
//!   `sad.u32` is `VABSDIFF.U32.U32.ACC`, `sad.s32` is `VABSDIFF.SD.ACC`).

use crate::exec::ExecError;
use crate::exec::sim::Sim;
use crate::exec::sim::arith::alu::{bool_op, isetp};
use crate::exec::sim::arith::float::fcmp;
use crate::exec::sim::state::{CF, Lanes, OF, PerLane, SF, WARP_SIZE, Warp, ZF, lanes};
use crate::sass::instr::{Dst, Instr, Src};
use crate::sass::op::{CcTest, LogicOp, Op, VabsdiffMods};

/// A second carry bit in CC, kept for the three-operand add (`IADD3.CC` can carry 2 into
/// `IADD3.X`, module docs); only IADD3.X reads it.
pub const CF2: u8 = 16;

/// Flags of a value as a result (ZF when zero, SF its sign bit).
fn value_flags(v: u32) -> u8 {
    let mut f = 0;
    if v == 0 {
        f |= ZF;
    }
    if v >> 31 == 1 {
        f |= SF;
    }
    f
}

/// The CC test `t` on flags `cc` (module docs). Errors for tests this model cannot decide.
pub fn cc_test(t: CcTest, cc: u8) -> bool {
    let (cf, zf, sf, of) = (cc & CF != 0, cc & ZF != 0, cc & SF != 0, cc & OF != 0);
    let lt = sf != of;
    match t {
        CcTest::F => false,
        CcTest::T => true,
        CcTest::Lt => lt,
        CcTest::Eq | CcTest::Equ => zf,
        CcTest::Le => lt || zf,
        CcTest::Gt => !lt && !zf,
        CcTest::Ne | CcTest::Neu => !zf,
        CcTest::Ge => !lt,
        CcTest::Off => !of,
        CcTest::Lo => !cf,
        CcTest::Sff => !sf,
        CcTest::Ls => !cf || zf,
        CcTest::Hi => cf && !zf,
        CcTest::Sft => sf,
        CcTest::Hs => cf,
        CcTest::Oft => of,
    }
}

/// IADD3 with carries: `a + b + c` (operands `~x` where negated, plus one per negation
/// without `.X`, plus the two-bit carry in with `.X`). Returns the sum and its flags,
/// the carry out in CF and [`CF2`].
pub fn iadd3_carry(v: [u32; 3], neg: [bool; 3], x: bool, cc_in: u8) -> (u32, u8) {
    // Three words and a carry-in of at most 3: below 2^34, so the saturating adds never
    // saturate; bits 33:32 are the two-bit carry out, the result wraps modulo 2^32.
    let words = v.iter().zip(neg).map(|(&v, n)| if n { !v } else { v } as u64);
    let cin = if x {
        (cc_in & CF != 0) as u64 | ((cc_in & CF2 != 0) as u64) << 1
    } else {
        neg.iter().filter(|n| **n).count() as u64
    };
    let wide = words.fold(cin, u64::saturating_add);
    let res = wide as u32;
    let carry = wide >> 32;
    let mut f = value_flags(res);
    if carry & 1 == 1 {
        f |= CF;
    }
    if carry & 2 == 2 {
        f |= CF2;
    }
    if x && cc_in & ZF == 0 {
        f &= !ZF;
    }
    (res, f)
}

/// The 64-bit product of `a` and `b`, each sign- or zero-extended per `signed` (IMAD,
/// IMUL: `.S32`/`.U32` per operand).
fn product(a: u32, b: u32, signed: (bool, bool)) -> i64 {
    let ext = |v: u32, s: bool| if s { v as i32 as i64 } else { v as i64 };
    // Exact in i128 (|a|, |b| <= 2^32, so the saturating multiply never saturates); the
    // cast keeps the product's 64 bits, all IMUL/IMAD use.
    (ext(a, signed.0) as i128).saturating_mul(ext(b, signed.1) as i128) as i64
}

/// FCHK.DIVIDE: true unless `a / b` is safely in the fast path's range (module docs).
pub fn fchk_divide(a: u32, b: u32) -> bool {
    let exp = |v: u32| ((v >> 23) & 0xff) as i32;
    let (ea, eb) = (exp(a), exp(b));
    let normal = |e: i32| e != 0 && e != 255;
    let a_zero = a & 0x7fff_ffff == 0;
    // A zero dividend is slow-path too: ptxas's fast path computes `-0 / 1` as +0 (its
    // `FFMA q, a, rcp, RZ` adds +0), which PTX's `div.rn` must not.
    // Biased exponents are 0..=255: the differences never saturate.
    let far = |x: i32, y: i32| x.saturating_sub(y).abs() > 100;
    if a_zero || !normal(eb) || far(eb, 127) {
        return true;
    }
    !normal(ea) || far(ea, 127) || far(ea, eb)
}

/// VABSDIFF (module docs).
pub fn vabsdiff(m: VabsdiffMods, a: u32, b: u32, c: u32) -> u32 {
    let ext = |v: u32, unsigned: bool| if unsigned { v as i64 } else { v as i32 as i64 };
    // Values of 32-bit words: |a - b| < 2^32 and the sum with c below 2^33, exact in i64.
    let d = ext(a, m.a_unsigned).saturating_sub(ext(b, m.b_unsigned)).unsigned_abs() as i64;
    let r = if m.acc { d.saturating_add(ext(c, !m.sd)) } else { d };
    if m.sat {
        if m.sd { r.clamp(i32::MIN as i64, i32::MAX as i64) as u32 } else { r.clamp(0, u32::MAX as i64) as u32 }
    } else {
        r as u32
    }
}

fn src(i: &Instr, k: usize) -> Result<&Src, ExecError> {
    i.srcs.get(k).ok_or_else(|| ExecError::Unsupported(format!("{} is missing operand {k}", i.op.name())))
}

fn logic(op: LogicOp, x: u32, y: u32) -> u32 {
    match op {
        LogicOp::And => x & y,
        LogicOp::Or => x | y,
        LogicOp::Xor => x ^ y,
        LogicOp::PassB => y,
    }
}

impl Sim<'_> {
    /// Executes the ptxas-only forms (module docs) in the lanes of `mask`. Returns false
    /// for an opcode of another family.
    pub(in crate::exec::sim) fn exec_ext(&mut self, w: &mut Warp, i: &Instr, mask: u32) -> Result<bool, ExecError> {
        let g = |w: &Warp, s: &Self, k: usize| -> Result<Lanes, ExecError> { w.gather(src(i, k)?, &s.banks, mask) };
        let neg = |k: usize| i.srcs.get(k).is_some_and(|s| s.mods.neg);
        let mut out: Lanes = [0; WARP_SIZE];
        // The predicate destination of the forms that write one, and its lanes.
        let mut pred_out: Option<u32> = None;
        match i.op {
            Op::Iscadd32i => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                let s = g(w, self, 2)?.at(0); // an immediate: the same in every lane
                for l in lanes(mask) {
                    let av = if neg(0) { a.at(l).wrapping_neg() } else { a.at(l) };
                    out.set(l, av.checked_shl(s).unwrap_or(0).wrapping_add(b.at(l)));
                }
            }
            Op::ShlW | Op::ShrW { .. } => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    let s = b.at(l) & 31;
                    let v = match i.op {
                        Op::ShlW => a.at(l) << s,
                        Op::ShrW { u32: true } => a.at(l) >> s,
                        _ => ((a.at(l) as i32) >> s) as u32,
                    };
                    out.set(l, v);
                }
            }
            Op::Iadd3C { x, cc } => {
                let [a, b, c] = [g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?];
                for l in lanes(mask) {
                    let (r, f) = iadd3_carry([a.at(l), b.at(l), c.at(l)], [neg(0), neg(1), neg(2)], x, w.cc.at(l));
                    out.set(l, r);
                    if cc {
                        w.cc.set(l, f);
                    }
                }
            }
            Op::ImnmxX { u32, hi } => {
                let (a, b, p) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                for l in lanes(mask) {
                    let min = p >> l & 1 == 1;
                    if hi {
                        let less = if u32 { a.at(l) < b.at(l) } else { (a.at(l) as i32) < (b.at(l) as i32) };
                        out.set(l, if less == min { a.at(l) } else { b.at(l) });
                        let v = if a.at(l) == b.at(l) {
                            ZF
                        } else if less {
                            CF
                        } else {
                            0
                        };
                        w.cc.set(l, v);
                    } else {
                        let (eq, a_less) = (w.cc.at(l) & ZF != 0, w.cc.at(l) & CF != 0);
                        let pick_a = if eq { (a.at(l) < b.at(l)) == min } else { a_less == min };
                        out.set(l, if pick_a { a.at(l) } else { b.at(l) });
                    }
                }
            }
            Op::LopX { op, pred, cc } | Op::Lop32iX { op, pred, cc } => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                for l in lanes(mask) {
                    let x = if sa.mods.inv { !a.at(l) } else { a.at(l) };
                    let y = if sb.mods.inv { !b.at(l) } else { b.at(l) };
                    out.set(l, logic(op, x, y));
                }
                pred_out = logic_outputs(w, &out, mask, pred, cc);
            }
            Op::Lop3X { pred, cc } => {
                let (a, b, c, lut) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?, g(w, self, 3)?);
                for l in lanes(mask) {
                    out.set(l, crate::exec::sim::arith::alu::lop3(a.at(l), b.at(l), c.at(l), lut.at(0)));
                }
                pred_out = logic_outputs(w, &out, mask, pred, cc);
            }
            Op::Fcmp { cmp, ftz } => {
                let (a, b, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                let sc = src(i, 2)?;
                for l in lanes(mask) {
                    let x = crate::exec::sim::arith::float::in32(c.at(l), sc, ftz) as f64;
                    out.set(l, if fcmp(cmp, x, 0.0) { a.at(l) } else { b.at(l) });
                }
            }
            Op::Icmp { cmp, u32 } => {
                let (a, b, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                for l in lanes(mask) {
                    out.set(l, if isetp(cmp, u32, false, c.at(l), 0, 0)? { a.at(l) } else { b.at(l) });
                }
            }
            Op::Iset { cmp, u32, x, bf, bop, cc } => {
                let (a, b, pc) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                for l in lanes(mask) {
                    let r = isetp(cmp, u32, x, a.at(l), b.at(l), w.cc.at(l))?;
                    out.set(l, set_value(bool_op(bop, r as u32, pc >> l & 1) == 1, bf));
                    if cc {
                        w.cc.set(l, value_flags(out.at(l)));
                    }
                }
            }
            Op::Fset { cmp, ftz, bf, bop, cc } => {
                let (a, b, pc) = (g(w, self, 0)?, g(w, self, 1)?, w.pred_src(src(i, 2)?)?);
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                for l in lanes(mask) {
                    let x = crate::exec::sim::arith::float::in32(a.at(l), sa, ftz) as f64;
                    let y = crate::exec::sim::arith::float::in32(b.at(l), sb, ftz) as f64;
                    out.set(l, set_value(bool_op(bop, fcmp(cmp, x, y) as u32, pc >> l & 1) == 1, bf));
                    if cc {
                        w.cc.set(l, value_flags(out.at(l)));
                    }
                }
            }
            Op::Dset { cmp, bf, bop } => {
                let (a, b) = (w.gather64(src(i, 0)?, &self.banks)?, w.gather64(src(i, 1)?, &self.banks)?);
                let pc = w.pred_src(src(i, 2)?)?;
                let (sa, sb) = (src(i, 0)?, src(i, 1)?);
                for l in lanes(mask) {
                    let (x, y) = (
                        crate::exec::sim::arith::float::in64(a.at(l), sa),
                        crate::exec::sim::arith::float::in64(b.at(l), sb),
                    );
                    out.set(l, set_value(bool_op(bop, fcmp(cmp, x, y) as u32, pc >> l & 1) == 1, bf));
                }
            }
            Op::Csetp { test, bop } => {
                let pc = w.pred_src(src(i, 0)?)?;
                let mut r = 0u32;
                for l in lanes(mask) {
                    if cc_test(test, w.cc.at(l)) {
                        r |= 1 << l;
                    }
                }
                Self::put_preds(w, i, mask, r, bop, pc);
                return Ok(true);
            }
            Op::I2iCc { dst, src: st } => {
                let s = src(i, 0)?;
                let v = if st.regs() == 2 {
                    w.gather64(s, &self.banks)?
                } else {
                    w.gather(s, &self.banks, mask)?.map(u64::from)
                };
                for l in lanes(mask) {
                    let x = crate::exec::sim::arith::float::int_with_mods(
                        crate::exec::sim::arith::float::int_value(v.at(l), st),
                        s,
                    );
                    out.set(l, crate::exec::sim::arith::float::int_bits(x, dst) as u32);
                    w.cc.set(l, value_flags(out.at(l)));
                }
                if dst.regs() == 2 {
                    return Err(ExecError::Unsupported("I2I.CC to a 64-bit type".into()));
                }
            }
            Op::Fchk => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                let mut p = 0;
                for l in lanes(mask) {
                    if fchk_divide(a.at(l), b.at(l)) {
                        p |= 1 << l;
                    }
                }
                if let Some(Dst::Pred(d)) = i.dsts.first() {
                    w.set_pred(*d, mask, p);
                }
                return Ok(true);
            }
            Op::Imul { signed, hi } | Op::Imul32i { signed, hi } => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                for l in lanes(mask) {
                    let p = product(a.at(l), b.at(l), signed);
                    out.set(l, if hi { (p >> 32) as u32 } else { p as u32 });
                }
            }
            Op::Imad { signed, hi, sat } => {
                let (a, b, c) = (g(w, self, 0)?, g(w, self, 1)?, g(w, self, 2)?);
                for l in lanes(mask) {
                    let p = product(a.at(l), b.at(l), signed) as i128;
                    let part = if hi { (p >> 32) as i64 } else { p as u32 as i64 };
                    let v = if sat {
                        let part = if hi { part } else { part as u32 as i32 as i64 };
                        // A 32-bit part plus a 32-bit addend: exact in i64, then clamped.
                        part.saturating_add(c.at(l) as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64) as u32
                    } else {
                        (part as u32).wrapping_add(c.at(l))
                    };
                    out.set(l, v);
                }
            }
            Op::I2iSat { dst, src: st } => {
                let s = src(i, 0)?;
                let v = if st.regs() == 2 {
                    w.gather64(s, &self.banks)?
                } else {
                    w.gather(s, &self.banks, mask)?.map(u64::from)
                };
                if dst.regs() == 2 {
                    return Err(ExecError::Unsupported("I2I.SAT to a 64-bit type".into()));
                }
                for l in lanes(mask) {
                    let x = crate::exec::sim::arith::float::int_with_mods(
                        crate::exec::sim::arith::float::int_value(v.at(l), st),
                        s,
                    );
                    let (lo, hi) = crate::exec::sim::arith::float::int_range(dst);
                    out.set(l, crate::exec::sim::arith::float::int_bits(x.clamp(lo, hi), dst) as u32);
                }
            }
            Op::Vabsdiff(m) => {
                let (a, b) = (g(w, self, 0)?, g(w, self, 1)?);
                let c = if m.acc { g(w, self, 2)? } else { [0; WARP_SIZE] };
                for l in lanes(mask) {
                    out.set(l, vabsdiff(m, a.at(l), b.at(l), c.at(l)));
                }
            }
            _ => return Ok(false),
        }
        for d in &i.dsts {
            match d {
                Dst::Reg(r) => w.write32(*r, mask, &out),
                Dst::Pred(p) => {
                    if let Some(v) = pred_out {
                        w.set_pred(*p, mask, v);
                    }
                }
            }
        }
        Ok(true)
    }
}

/// The predicate (`pred`: `.NZ` when true, `.Z` when false) and CC outputs of a logic
/// operation with result `out`: the predicate's lanes are returned, CC is written.
fn logic_outputs(w: &mut Warp, out: &Lanes, mask: u32, pred: Option<bool>, cc: bool) -> Option<u32> {
    if cc {
        for l in lanes(mask) {
            w.cc.set(l, value_flags(out.at(l)));
        }
    }
    pred.map(|nz| lanes(mask).filter(|&l| (out.at(l) != 0) == nz).fold(0, |p, l| p | 1 << l))
}

/// The value ISET/FSET/DSET write for a comparison result: all ones (1.0 with `.BF`) or 0.
fn set_value(r: bool, bf: bool) -> u32 {
    match (r, bf) {
        (false, _) => 0,
        (true, false) => u32::MAX,
        (true, true) => 1.0f32.to_bits(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn three_way_carry_reaches_two() {
        // 0xffffffff + 0xffffffff + 2 carries 2 into the high word.
        let (lo, f) = iadd3_carry([u32::MAX, u32::MAX, 2], [false; 3], false, 0);
        assert_eq!((lo, f & (CF | CF2)), (0, CF2));
        let (hi, _) = iadd3_carry([1, 0, 0], [false; 3], true, f);
        assert_eq!(hi, 3);
        // a - b + c with -b as ~b + 1.
        let (lo, _) = iadd3_carry([5, 7, 1], [false, true, false], false, 0);
        assert_eq!(lo, 5u32.wrapping_sub(7).wrapping_add(1));
    }

    #[test]
    fn cc_tests() {
        assert!(cc_test(CcTest::Sft, SF) && !cc_test(CcTest::Sft, 0));
        assert!(cc_test(CcTest::Lt, SF) && !cc_test(CcTest::Lt, SF | OF));
        assert!(cc_test(CcTest::Neu, 0) && !cc_test(CcTest::Neu, ZF));
        assert!(cc_test(CcTest::Hi, CF) && !cc_test(CcTest::Hi, CF | ZF));
    }

    #[test]
    fn products_extend_each_operand_by_its_type() {
        let hi = |a: u32, b: u32, s| (product(a, b, s) >> 32) as u32;
        // 0xffffffff is 2^32 - 1 unsigned, -1 signed.
        assert_eq!(hi(u32::MAX, 8, (false, false)), 7);
        assert_eq!(hi(u32::MAX, 8, (true, true)), u32::MAX);
        assert_eq!(hi(u32::MAX, u32::MAX, (false, false)), 0xffff_fffe);
        assert_eq!(hi(u32::MAX, u32::MAX, (true, false)), u32::MAX);
        assert_eq!(product(u32::MAX, 3, (true, true)) as u32, 0xffff_fffd);
    }

    #[test]
    fn fchk_is_false_only_in_the_safe_range() {
        let f = |x: f32| x.to_bits();
        assert!(!fchk_divide(f(1.0), f(3.0)));
        assert!(fchk_divide(0x8000_0000, f(1.0)));
        assert!(fchk_divide(f(1.0), 0));
        assert!(fchk_divide(f(1e38), f(1e-10)));
        assert!(fchk_divide(1, f(2.0)));
        assert!(fchk_divide(f(1.0), f32::INFINITY.to_bits()));
    }

    #[test]
    fn vabsdiff_is_sad() {
        let u = VabsdiffMods { a_unsigned: true, b_unsigned: true, acc: true, ..Default::default() };
        assert_eq!(vabsdiff(u, 3, 10, 5), 12);
        assert_eq!(vabsdiff(u, 0, u32::MAX, 1), 0);
        let s = VabsdiffMods { sd: true, acc: true, ..Default::default() };
        assert_eq!(vabsdiff(s, (-3i32) as u32, 4, 1), 8);
    }
}
