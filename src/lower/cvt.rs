//! Saturating conversions (PTX ISA 9.7.9.21 `cvt{.sat}`): the clamps that `lower_cvt`
//! (`lower::alu`) applies after an I2F/F2F, and the integer-to-integer `.sat` clamp.

use super::alu::Val;
use super::ctx::{LResult, Lowerer, PtxReg};
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
    pub(super) fn saturate_float(&mut self, t: Reg, ft: FType, d: Reg) {
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
    pub(super) fn cvt_int_sat(&mut self, d: PtxReg, x: Val, dt: ScalarType, st: ScalarType) -> LResult<()> {
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
}
