//! Conversions (PTX ISA 9.7.9.21 `cvt`): `lower_cvt` between integer widths, floats and
//! integers, f32 and f64; the `.sat` clamps it applies after an I2F/F2F, and the integer-to-integer `.sat` clamp; and
//! the half-precision (`.f16`) conversions, through f32 as ptxas 11.8 sm_50 does.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::alu::{Val, itype, low_mask, rnd};
use crate::lower::ctx::{LResult, Lowerer, PtxReg};
use crate::ptx::ast::Instruction;
use crate::ptx::instr::{Cvt, Rounding};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SrcKind};
use crate::sass::op::*;

/// The value range of an integer type, as `i128`.
fn range(t: ScalarType) -> (i128, i128) {
    // 2^(bits-1); integer types have 8 to 64 bits, so nothing saturates.
    let half = 1i128.checked_shl(t.bits().saturating_sub(1)).unwrap_or(0);
    if t.is_signed() {
        (half.saturating_neg(), half.saturating_sub(1))
    } else {
        (0, half.saturating_mul(2).saturating_sub(1))
    }
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

impl Lowerer<'_> {
    /// Lowers `cvt` (PTX ISA 9.7.9.21) between integer widths, between f32/f64 and
    /// integers, and between f32 and f64.
    pub fn lower_cvt(&mut self, i: &Instruction, c: &Cvt) -> LResult<()> {
        let d = self.dst_of(i, 0)?;
        let x = self.val_of(i, 1, c.src)?;
        self.lower_cvt_value(i, c, d, x)
    }

    /// `cvt` of the resolved source `x` into `d` (see [`Self::lower_cvt`]).
    pub(in crate::lower) fn lower_cvt_value(&mut self, i: &Instruction, c: &Cvt, d: PtxReg, x: Val) -> LResult<()> {
        let (dt, st) = (c.dst, c.src);
        if dt == ScalarType::F16 || st == ScalarType::F16 {
            return self.cvt_half(i, c, d, x);
        }
        match (dt.is_float(), st.is_float()) {
            (false, false) if c.sat => self.cvt_int_sat(d, x, dt, st),
            (false, false) => self.cvt_int(d, x, dt, st),
            (true, false) => {
                if !matches!(dt, ScalarType::F32 | ScalarType::F64) {
                    return self.error(i.opcode.span, "conversion to this float type is not supported yet");
                }
                let (src, it) = self.i2f_source(x, st);
                let ft = if dt == ScalarType::F64 { FType::F64 } else { FType::F32 };
                let n = ft.regs();
                let t = if c.sat { self.tmp(n) } else { d.reg };
                self.op(Op::I2f { dst: ft, src: it, rnd: rnd(c.rnd) }, Dst::reg(t, n), vec![src]);
                if c.sat {
                    self.saturate_float(t, ft, d.reg);
                }
                Ok(())
            }
            (false, true) => {
                if !matches!(st, ScalarType::F32 | ScalarType::F64) {
                    return self.error(i.opcode.span, "conversion from this float type is not supported yet");
                }
                let src = if st.bits() == 64 { self.pair(x) } else { self.in_reg(x.lo) };
                let ft = if st == ScalarType::F64 { FType::F64 } else { FType::F32 };
                // F2I saturates to the destination range (NaN gives 0), which is PTX's
                // float-to-integer rule with or without `.sat`; 8- and 16-bit results use
                // the narrow F2I forms (ptxas: `F2I.U16.F32.TRUNC` etc.), extended to 32 bits.
                let it = itype(dt);
                let r = match c.rnd {
                    Some(Rounding::Rzi) | None => IRnd::Trunc,
                    Some(Rounding::Rmi) => IRnd::Floor,
                    Some(Rounding::Rpi) => IRnd::Ceil,
                    _ => IRnd::Round,
                };
                if matches!(it, IType::U8 | IType::S8) {
                    // F2I has no 8-bit destination (nvdisasm 11.8: sizes 16, 32, 64; 8 prints
                    // `INVALID0`): convert to 32 bits and clamp to the 8-bit range, as ptxas
                    // 11.8 does (`F2I.U32.F32.TRUNC; I2I.U8.U32.SAT` for `cvt.rzi.u8.f32`).
                    let signed = it == IType::S8;
                    let wide = if signed { IType::S32 } else { IType::U32 };
                    let t = self.emit1(Op::F2i { dst: wide, src: ft, rnd: r, ftz: c.ftz }, vec![src]);
                    if signed {
                        let lo = self.emit1(Op::Imnmx { u32: false }, vec![t, Src::imm(0x7f), Src::pt()]);
                        self.op(
                            Op::Imnmx { u32: false },
                            Dst::reg(d.reg, 1),
                            vec![lo, Src::imm(-0x80i32 as u32), Src::pred(PT, true)],
                        );
                    } else {
                        self.op(Op::Imnmx { u32: true }, Dst::reg(d.reg, 1), vec![t, Src::imm(0xff), Src::pt()]);
                    }
                    return Ok(());
                }
                self.op(Op::F2i { dst: it, src: ft, rnd: r, ftz: c.ftz }, Dst::reg(d.reg, it.regs()), vec![src]);
                Ok(())
            }
            (true, true) => {
                let ftype = |t: ScalarType| {
                    if t == ScalarType::F64 { FType::F64 } else { FType::F32 }
                };
                if !matches!(dt, ScalarType::F32 | ScalarType::F64) || !matches!(st, ScalarType::F32 | ScalarType::F64)
                {
                    return self.error(i.opcode.span, "half-precision conversions are not supported yet");
                }
                let src = if st.bits() == 64 { self.pair(x) } else { self.in_reg(x.lo) };
                let (df, sf) = (ftype(dt), ftype(st));
                let int = matches!(c.rnd, Some(Rounding::Rni | Rounding::Rzi | Rounding::Rmi | Rounding::Rpi));
                let n = df.regs();
                let t = if c.sat { self.tmp(n) } else { d.reg };
                // Rounding to an integral value exists only for same-type F2F (nvdisasm
                // 11.8: bit 42 is ignored between F32 and F64, `F2F.F64.F32.ROUND` prints as
                // `F2F.F64.F32`; ptxas rejects `cvt.rni.f64.f32`): round in f64, converting
                // exactly before (f32 → f64) or after (f64 → f32, rounded in the same direction).
                let (src, sf) = if int && df != sf && sf == FType::F32 {
                    (self.emit2(Op::F2f { dst: df, src: sf, rnd: Rnd::Rn, ftz: c.ftz, int: false }, vec![src]), df)
                } else {
                    (src, sf)
                };
                if int && df != sf {
                    let r = self.emit2(Op::F2f { dst: sf, src: sf, rnd: rnd(c.rnd), ftz: c.ftz, int: true }, vec![src]);
                    // Narrowed in the same direction, so the result is the f32 integer on
                    // that side of the f64 one (the interpreter's `cvt.rzi.f32.f64` of
                    // DBL_MAX is FLT_MAX, not +INF).
                    self.op(
                        Op::F2f { dst: df, src: sf, rnd: rnd(c.rnd), ftz: c.ftz, int: false },
                        Dst::reg(t, n),
                        vec![r],
                    );
                } else {
                    self.op(Op::F2f { dst: df, src: sf, rnd: rnd(c.rnd), ftz: c.ftz, int }, Dst::reg(t, n), vec![src]);
                }
                if c.sat {
                    self.saturate_float(t, df, d.reg);
                }
                Ok(())
            }
        }
    }

    /// Integer-to-integer `cvt` (PTX ISA 9.7.9.21, 6.4.1): the source, extended by its own
    /// signedness, is chopped to the destination type, and that value is zero/sign-extended
    /// by the destination type to the destination register's declared width.
    pub(in crate::lower) fn cvt_int(
        &mut self,
        d: PtxReg,
        x: crate::lower::arith::alu::Val,
        dt: ScalarType,
        st: ScalarType,
    ) -> LResult<()> {
        let dreg_bits = d.ty.bits();
        // The low 32 bits: the low `keep` bits extended per the narrower type; a signed
        // source widened to a narrower-than-32 unsigned type is chopped back to it
        // (`cvt.u16.s8`: 0xffff, not 0xffffffff).
        let keep = st.bits().min(dt.bits());
        let signed = if st.bits() < dt.bits() { st.is_signed() } else { dt.is_signed() };
        let lo = if keep >= dreg_bits.min(32) || (dreg_bits == 16 && keep == 16) {
            x.lo
        } else {
            let v = self.ext32(x.lo, keep, signed);
            if signed && !dt.is_signed() && keep < dt.bits() && dt.bits() < 32.min(dreg_bits) {
                self.ext32(v, dt.bits(), false)
            } else {
                v
            }
        };
        let lo = self.in_reg(lo);
        if dreg_bits == 64 {
            // The high word: the source's when both are 64-bit; else the sign of the value
            // when it is signed at 64 bits (a signed 64-bit destination, or a signed source
            // widened to 64 bits), else 0.
            let hi = if dt.bits() == 64 && st.bits() == 64 {
                x.hi.unwrap_or(Src::rz())
            } else if (dt.bits() == 64 && signed) || (dt.bits() < 64 && dt.is_signed()) {
                let t = self.tmp(1);
                self.op(Op::Shr { u32: false }, Dst::reg(t, 1), vec![lo, Src::imm(31)]);
                Src::r32(t)
            } else {
                Src::rz()
            };
            let hi = self.in_reg(hi);
            self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], vec![lo, hi]));
            return Ok(());
        }
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], vec![lo]));
        Ok(())
    }

    /// The source of an `I2F` converting integer `x` of type `st`: a 64-bit pair, or a
    /// 32-bit register with 8- and 16-bit values extended first (the register's upper bits
    /// are not part of the value); and the `I2F` source type (S32/U32 for narrow types).
    pub(in crate::lower) fn i2f_source(&mut self, x: Val, st: ScalarType) -> (Src, IType) {
        if st.bits() == 64 {
            return (self.pair(x), itype(st));
        }
        let v = self.ext32(x.lo, st.bits(), st.is_signed());
        (self.in_reg(v), if st.is_signed() { IType::S32 } else { IType::U32 })
    }

    /// The low `bits` of `s`, zero- or sign-extended to 32 bits.
    pub(in crate::lower) fn ext32(&mut self, s: Src, bits: u32, signed: bool) -> Src {
        if bits >= 32 {
            return s;
        }
        if let SrcKind::Imm(v) = s.kind {
            let m = v & low_mask(bits);
            let negative = bits.checked_sub(1).and_then(|b| m.checked_shr(b)) == Some(1);
            return Src::imm(if signed && negative { m | !low_mask(bits) } else { m });
        }
        let r = self.in_reg(s);
        let t = self.tmp(1);
        if signed {
            self.op(Op::Bfe { u32: false, brev: false }, Dst::reg(t, 1), vec![r, Src::imm(bits << 8)]);
        } else {
            self.op(Op::Lop32i(LogicOp::And), Dst::reg(t, 1), vec![r, Src::imm(low_mask(bits))]);
        }
        Src::r32(t)
    }
}
