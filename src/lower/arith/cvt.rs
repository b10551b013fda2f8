//! Saturating conversions (PTX ISA 9.7.9.21 `cvt{.sat}`): the clamps that `lower_cvt`
//! (`lower::arith::alu`) applies after an I2F/F2F, and the integer-to-integer `.sat` clamp; and
//! the half-precision (`.f16`) conversions, through f32 as ptxas 11.8 sm_50 does.

use crate::lower::arith::alu::{Val, rnd};
use crate::lower::ctx::{LResult, Lowerer, PtxReg};
use crate::ptx::ast::Instruction;
use crate::ptx::instr::{Cvt, Rounding};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, PT, Reg, RegRef, Src};
use crate::sass::op::*;

/// The value range of an integer type, as `i128`.
fn range(t: ScalarType) -> (i128, i128) {
    let bits = t.bits();
    if t.is_signed() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) }
}

impl Lowerer<'_> {
    /// Float `.sat`: clamps the float in `t` (type `ft`) to `[0.0, 1.0]`, NaN to `+0.0`,
    /// into `d` (ptxas: `FADD.SAT d, t, -RZ` for f32, `DMNMX` with 0 and 1 for f64).
    pub(in crate::lower) fn saturate_float(&mut self, t: Reg, ft: FType, d: Reg) {
        let n = ft.regs();
        let t = Src::reg(RegRef::new(t, n));
        if ft == FType::F32 {
            let m = FMods { sat: true, ..FMods::default() };
            self.op(Op::Fadd(m), Dst::reg(d, 1), vec![t, Src::rz().negated()]);
        } else {
            let lo = self.tmp(2);
            self.op(Op::Dmnmx, Dst::reg(lo, 2), vec![Src::reg(RegRef::rz(2)), t, Src::pred(PT, true)]);
            let one = self.pair(Val { lo: Src::imm(0), hi: Some(Src::imm(0x3ff0_0000)), whole: None });
            self.op(Op::Dmnmx, Dst::reg(d, 2), vec![Src::reg(RegRef::new(lo, 2)), one, Src::pt()]);
        }
    }

    /// Integer `cvt.sat.dt.st`: the source value (extended by its own signedness) clamped
    /// to `dt`'s range, then converted as without `.sat` ([`Self::cvt_int`]). 32-bit and
    /// narrower sources clamp with `IMNMX` (signed or `.U32` by the source type), 64-bit
    /// ones with a 64-bit compare (`IADD RZ.CC` + `ISETP.X`) and `SEL` per word.
    pub(in crate::lower) fn cvt_int_sat(&mut self, d: PtxReg, x: Val, dt: ScalarType, st: ScalarType) -> LResult<()> {
        let (lo, hi) = range(dt);
        let (smin, smax) = range(st);
        let (clamp_lo, clamp_hi) = (lo > smin, hi < smax);
        let unsigned = !st.is_signed();
        if st.bits() <= 32 {
            let v = self.ext32(x.lo, st.bits(), st.is_signed());
            let mut v = self.in_reg(v);
            if clamp_lo {
                // max(v, lo): IMNMX with a false predicate.
                v = self.emit1(Op::Imnmx { u32: unsigned }, vec![v, Src::imm(lo as i32 as u32), Src::pred(PT, true)]);
                v = self.in_reg(v);
            }
            if clamp_hi {
                let h = self.in_reg(Src::imm(hi as u32));
                v = self.emit1(Op::Imnmx { u32: unsigned }, vec![v, h, Src::pt()]);
            }
            // The clamped value is in range: extend it as a 32-bit value of the source's
            // signedness (cvt_int of the full-width source type).
            let wide = if st.is_signed() { ScalarType::S32 } else { ScalarType::U32 };
            return self.cvt_int(d, Val { lo: v, hi: None, whole: None }, dt, wide);
        }
        let mut w = (self.in_reg(x.lo), self.in_reg(x.hi.unwrap_or(Src::rz())));
        let konst = |v: i128| (Src::imm(v as u64 as u32), Src::imm((v as u64 >> 32) as u32));
        if clamp_lo {
            let k = konst(lo);
            let p = self.cmp64(Cmp::Lt, unsigned, w, k);
            w = (self.sel(Src::pred(p, false), k.0, w.0), self.sel(Src::pred(p, false), k.1, w.1));
        }
        if clamp_hi {
            let k = konst(hi);
            let p = self.cmp64(Cmp::Gt, unsigned, w, k);
            w = (self.sel(Src::pred(p, false), k.0, w.0), self.sel(Src::pred(p, false), k.1, w.1));
        }
        self.cvt_int(d, Val { lo: w.0, hi: Some(w.1), whole: None }, dt, st)
    }

    /// `cvt` with an `.f16` side (ptxas 11.8 sm_50, `F2F.F16.F32` / `F2F.F32.F16`; the half
    /// value lives in the low 16 bits of a register):
    /// * `f16 -> f32`: `F2F.F32.F16` (exact); `-> f64`: then `F2F.F64.F32`; `-> integer`:
    ///   then `F2I` (ptxas: `F2I.S32.F16.TRUNC`; the exact widening first is the same);
    /// * `f32 -> f16`: `F2F.F16.F32.rnd` (`.sat` clamps the f32 first; 0 and 1 are exact
    ///   in both formats);
    /// * `f64 -> f16`: `F2F.F32.F64.RZ` with the inexact flag ORed into the lowest bit
    ///   (round to odd: `F2F.F64.F32` back, `DSETP.NEU`, `LOP.OR 1`), then
    ///   `F2F.F16.F32.rnd`; rounding to odd at 24 bits then to 11 is a single correct
    ///   rounding (24 >= 11 + 2). ptxas uses a similar RZ/RM/RP sequence;
    /// * `integer -> f16`: `I2F.F32.RZ` then `F2F.F16.F32.rnd` (ptxas: `I2F.F32.S32` +
    ///   `F2F.F16.F32`): integers beyond 2^24 overflow f16 in every mode alike, smaller ones
    ///   are exact in f32.
    ///
    /// Integer rounding (`.rni` ...) with an `.f16` side is not lowered (a diagnostic).
    pub(in crate::lower) fn cvt_half(&mut self, i: &Instruction, c: &Cvt, d: PtxReg, x: Val) -> LResult<()> {
        let (dt, st) = (c.dst, c.src);
        let int_rnd = matches!(c.rnd, Some(Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi));
        let f2f = |me: &mut Self, dst: FType, src: FType, r: Rnd, ftz: bool, v: Src| {
            let n = dst.regs();
            let t = me.tmp(n);
            me.op(Op::F2f { dst, src, rnd: r, ftz, int: false }, Dst::reg(t, n), vec![v]);
            Src::reg(RegRef::new(t, n))
        };
        if st == ScalarType::F16 {
            let h = self.in_reg(x.lo);
            if dt == ScalarType::F16 {
                return self.unsupported(i, "`cvt` from `.f16` to `.f16`");
            }
            let wide = f2f(self, FType::F32, FType::F16, Rnd::Rn, false, h);
            let w = Val { lo: wide, hi: None, whole: wide.as_reg() };
            let via = Cvt { src: ScalarType::F32, ..*c };
            return self.lower_cvt_value(i, &via, d, w);
        }
        if int_rnd {
            return self.unsupported(i, "`cvt` to `.f16` with integer rounding");
        }
        let r = rnd(c.rnd);
        let f32v = if st == ScalarType::F32 {
            let v = self.in_reg(x.lo);
            if c.sat {
                let t = self.tmp(1);
                self.op(
                    Op::Fadd(FMods { sat: true, ftz: c.ftz, ..FMods::default() }),
                    Dst::reg(t, 1),
                    vec![v, Src::rz().negated()],
                );
                Src::r32(t)
            } else {
                v
            }
        } else if st == ScalarType::F64 {
            if c.sat {
                return self.unsupported(i, "`cvt.sat.f16.f64`");
            }
            let v = self.pair(x);
            let t = f2f(self, FType::F32, FType::F64, Rnd::Rz, false, v);
            let back = f2f(self, FType::F64, FType::F32, Rnd::Rn, false, t);
            let p = self.tmp_pred();
            self.emit(crate::sass::instr::Instr::new(
                Op::Dsetp { cmp: Cmp::Neu, bop: BoolOp::And },
                vec![Dst::Pred(p), Dst::Pred(PT)],
                vec![back, v, Src::pt()],
            ));
            let odd = self.emit1(Op::Lop32i(LogicOp::Or), vec![t, Src::imm(1)]);
            self.emit1(Op::Sel, vec![odd, t, Src::pred(p, false)])
        } else {
            if c.sat {
                return self.unsupported(i, "`cvt.sat.f16` from an integer");
            }
            let (src, it) = self.i2f_source(x, st);
            self.emit1(Op::I2f { dst: FType::F32, src: it, rnd: Rnd::Rz }, vec![src])
        };
        let ftz = c.ftz && st == ScalarType::F32;
        self.op(Op::F2f { dst: FType::F16, src: FType::F32, rnd: r, ftz, int: false }, Dst::reg(d.reg, 1), vec![f32v]);
        Ok(())
    }
}
