//! Lowering of data movement, integer and float arithmetic, comparisons and conversions
//! (PTX ISA 9.7.1-9.7.4, 9.7.8, 9.7.9.1 mov, 9.7.9.21 cvt) to SPA 5.0 ALU instructions.
//!
//! Idioms follow what ptxas 11.8 emits for sm_50 (probed on small kernels, see
//! `docs/lowering.md`): 32-bit multiply as `XMAD; XMAD.MRG; XMAD.PSL.CBCC`; 64-bit add as
//! `IADD.CC` + `IADD.X`; 64-bit compare as `IADD RZ.CC, a.lo, -b.lo` + `ISETP.X`; `neg.f32`
//! as `FADD -RZ, -a`; `not` as `LOP.PASS_B RZ, ~a`; sign extension by `BFE`.
//!
//! 16-bit PTX registers live in 32-bit registers whose upper half is undefined; operations
//! whose result depends on those bits (compares, right shifts, widening) extend first.

use super::ctx::{LResult, Lowerer, PtxReg, imm_bits32, imm_bits64};
use crate::ptx::ast::{Instruction, Operand, VecElem};
use crate::ptx::instr::{Arith, ArithOp, BarOp, BoolOp as PBool, CmpOp, Cvt, IntMode, Rounding, Setp};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, PT, RZ, Reg, RegRef, Src, SrcKind};
use crate::sass::op::*;

/// A PTX operand resolved to IR sources: one per 32-bit word (1 or 2).
#[derive(Clone, Copy, Debug)]
pub struct Val {
    /// Low word.
    pub lo: Src,
    /// High word (64-bit values only).
    pub hi: Option<Src>,
    /// The whole register, when the operand is one register.
    pub whole: Option<RegRef>,
}

fn rnd(r: Option<Rounding>) -> Rnd {
    match r {
        Some(Rounding::Rz | Rounding::Rzi) => Rnd::Rz,
        Some(Rounding::Rm | Rounding::Rmi) => Rnd::Rm,
        Some(Rounding::Rp | Rounding::Rpi) => Rnd::Rp,
        _ => Rnd::Rn,
    }
}

fn itype(t: ScalarType) -> IType {
    use ScalarType::*;
    match t {
        U8 | B8 => IType::U8,
        S8 => IType::S8,
        U16 | B16 => IType::U16,
        S16 => IType::S16,
        U32 | B32 => IType::U32,
        S32 => IType::S32,
        U64 | B64 => IType::U64,
        _ => IType::S64,
    }
}

fn bool_op(b: Option<PBool>) -> BoolOp {
    match b {
        Some(PBool::Or) => BoolOp::Or,
        Some(PBool::Xor) => BoolOp::Xor,
        _ => BoolOp::And,
    }
}

/// The SASS comparison for a PTX comparison on `ty`; unsigned integer types (and the
/// `lo/ls/hi/hs` comparisons) use the `.U32` forms.
fn cmp(c: CmpOp) -> (Cmp, bool) {
    use CmpOp::*;
    match c {
        Eq => (Cmp::Eq, false),
        Ne => (Cmp::Ne, false),
        Lt => (Cmp::Lt, false),
        Le => (Cmp::Le, false),
        Gt => (Cmp::Gt, false),
        Ge => (Cmp::Ge, false),
        Lo => (Cmp::Lt, true),
        Ls => (Cmp::Le, true),
        Hi => (Cmp::Gt, true),
        Hs => (Cmp::Ge, true),
        Equ => (Cmp::Equ, false),
        Neu => (Cmp::Neu, false),
        Ltu => (Cmp::Ltu, false),
        Leu => (Cmp::Leu, false),
        Gtu => (Cmp::Gtu, false),
        Geu => (Cmp::Geu, false),
        Num => (Cmp::Num, false),
        Nan => (Cmp::Nan, false),
    }
}

/// The LOP operation of PTX `and`/`or`/`xor`.
fn logic_op(op: ArithOp) -> LogicOp {
    match op {
        ArithOp::And => LogicOp::And,
        ArithOp::Or => LogicOp::Or,
        _ => LogicOp::Xor,
    }
}

/// True if `v` fits the sign-extended 20-bit immediate of ALU instructions.
pub fn fits_imm20(v: i64) -> bool {
    (-(1 << 19)..(1 << 19)).contains(&v)
}

impl Lowerer<'_> {
    /// Resolves a source operand of PTX type `ty`.
    pub fn val(&mut self, op: &Operand, ty: ScalarType) -> LResult<Val> {
        let wide = ty.bits() == 64;
        match op {
            Operand::Imm(i) => {
                if wide {
                    let v = imm_bits64(i.value);
                    Ok(Val { lo: Src::imm(v as u32), hi: Some(Src::imm((v >> 32) as u32)), whole: None })
                } else {
                    // A `0f` literal gives its own 32 bits also to bit and integer types
                    // (`mov.b32 %r, 0f3F800000`), not the low word of its f64 value.
                    Ok(Val { lo: Src::imm(imm_bits32(i.value)), hi: None, whole: None })
                }
            }
            Operand::Name { name, component, negated: false, .. } => {
                if let Some(c) = component {
                    let s = self.special_reg(&name.name, *c, name.span)?;
                    return Ok(Val { lo: s, hi: None, whole: None });
                }
                if crate::ptx::check::special_register(&name.name).is_some() {
                    let s = self.special_reg(&name.name, ' ', name.span)?;
                    return Ok(Val { lo: s, hi: None, whole: None });
                }
                if let Some(loc) = self.var(&name.name) {
                    let a = self.var_address(&name.name, loc, name.span)?;
                    return Ok(Val { lo: Src::reg(a.part(0)), hi: Some(Src::reg(a.part(1))), whole: Some(a) });
                }
                let r = self.ptx_reg(name)?;
                let n = if r.ty.bits() == 64 { 2 } else { 1 };
                let whole = RegRef::new(r.reg, n);
                Ok(Val {
                    lo: Src::reg(whole.part(0)),
                    hi: if n == 2 { Some(Src::reg(whole.part(1))) } else { None },
                    whole: Some(whole),
                })
            }
            _ => self.error(op.span(), "expected a register or immediate"),
        }
    }

    /// A 64-bit value as one pair register (joining or materializing as needed).
    pub fn pair(&mut self, v: Val) -> Src {
        if let Some(w) = v.whole
            && w.n == 2
        {
            return Src::reg(w);
        }
        let lo = self.in_reg(v.lo);
        let hi = self.in_reg(v.hi.unwrap_or(Src::rz()));
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, hi]));
        Src::reg(RegRef::new(t, 2))
    }

    /// Reads a special register (PTX ISA 10): `S2R` for thread and CTA ids, the driver
    /// constants `c[0x0][0x8..0x1c]` for `%ntid`/`%nctaid` (findings section 4).
    fn special_reg(&mut self, name: &str, comp: char, at: crate::ptx::ast::Span) -> LResult<Src> {
        let axis = match comp {
            'x' => 0,
            'y' => 1,
            'z' => 2,
            _ => 0,
        };
        let sr = match (name, axis) {
            ("%tid", 0) => SpecialReg::TidX,
            ("%tid", 1) => SpecialReg::TidY,
            ("%tid", _) => SpecialReg::TidZ,
            ("%ctaid", 0) => SpecialReg::CtaidX,
            ("%ctaid", 1) => SpecialReg::CtaidY,
            ("%ctaid", _) => SpecialReg::CtaidZ,
            ("%ntid", a) => return Ok(Src::cbuf(0, 0x8 + 4 * a, 1)),
            ("%nctaid", a) => return Ok(Src::cbuf(0, 0x14 + 4 * a, 1)),
            ("%laneid", _) => SpecialReg::LaneId,
            ("%clock", _) => SpecialReg::ClockLo,
            ("%lanemask_eq", _) => SpecialReg::EqMask,
            ("%lanemask_lt", _) => SpecialReg::LtMask,
            ("%lanemask_le", _) => SpecialReg::LeMask,
            ("%lanemask_gt", _) => SpecialReg::GtMask,
            ("%lanemask_ge", _) => SpecialReg::GeMask,
            _ => {
                return self.error(at, format!("special register `{name}` is not supported yet"));
            }
        };
        let t = self.tmp(1);
        self.emit(Instr::new(Op::S2r(sr), vec![Dst::reg(t, 1)], vec![]));
        Ok(Src::r32(t))
    }

    fn dst_reg(&mut self, op: &Operand) -> LResult<PtxReg> {
        match op {
            Operand::Name { name, .. } => self.ptx_reg(name),
            _ => self.error(op.span(), "expected a destination register"),
        }
    }

    /// Lowers `mov` (PTX ISA 9.7.9.1): copies, immediates, special registers, variable
    /// addresses, and packing/unpacking of vectors.
    pub fn lower_mov(&mut self, i: &Instruction, ty: ScalarType) -> LResult<()> {
        let (d_op, s_op) = (&i.operands[0], &i.operands[1]);
        // Unpack: mov.b64 {a, b}, %rd / mov.b32 {a, b}, %r.
        if let Operand::Vector(elems, _) = d_op {
            let v = self.val(s_op, ty)?;
            let n = elems.len() as u32;
            let eb = ty.bits() / n;
            for (k, e) in elems.iter().enumerate() {
                let VecElem::Reg(id) = e else { continue };
                let r = self.ptx_reg(id)?;
                let src = if eb == 32 {
                    if k == 0 { v.lo } else { v.hi.unwrap_or(Src::rz()) }
                } else {
                    let word = if (k as u32 * eb) >= 32 { v.hi.unwrap_or(Src::rz()) } else { v.lo };
                    let pos = (k as u32 * eb) % 32;
                    let t = self.tmp(1);
                    let w = self.in_reg(word);
                    self.op(Op::Bfe { u32: true }, Dst::reg(t, 1), vec![w, Src::imm(pos | (eb << 8))]);
                    Src::r32(t)
                };
                self.write_ptx(r, src, ScalarType::B32)?;
            }
            return Ok(());
        }
        let d = self.dst_reg(d_op)?;
        // Pack: mov.b64 %rd, {a, b}.
        if let Operand::Vector(elems, _) = s_op {
            let n = elems.len() as u32;
            let eb = ty.bits() / n;
            let mut parts = vec![];
            for e in elems {
                parts.push(match e {
                    VecElem::Reg(id) => {
                        let r = self.ptx_reg(id)?;
                        Src::reg(RegRef::new(r.reg, 1))
                    }
                    VecElem::Imm(m) => self.imm_reg(imm_bits32(m.value)),
                    VecElem::Sink(_) => Src::rz(),
                });
            }
            if eb == 32 {
                self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, (ty.bits() / 32) as u8)], parts));
            } else {
                let mask = (1u32 << eb) - 1;
                let mut words = vec![];
                for chunk in parts.chunks((32 / eb) as usize) {
                    let mut acc = None;
                    for (k, p) in chunk.iter().enumerate() {
                        let m = self.tmp(1);
                        self.op(Op::Lop32i(LogicOp::And), Dst::reg(m, 1), vec![*p, Src::imm(mask)]);
                        let part = if k == 0 {
                            Src::r32(m)
                        } else {
                            let s = self.tmp(1);
                            self.op(Op::Shl, Dst::reg(s, 1), vec![Src::r32(m), Src::imm(k as u32 * eb)]);
                            Src::r32(s)
                        };
                        acc = Some(match acc {
                            None => part,
                            Some(a) => {
                                let o = self.tmp(1);
                                self.op(Op::Lop(LogicOp::Or), Dst::reg(o, 1), vec![a, part]);
                                Src::r32(o)
                            }
                        });
                    }
                    words.push(acc.expect("non-empty"));
                }
                if words.len() == 1 {
                    self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], vec![words[0]]));
                } else {
                    self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, words.len() as u8)], words));
                }
            }
            return Ok(());
        }
        if ty == ScalarType::Pred {
            let s = self.pred_src(s_op)?;
            self.emit(Instr::new(
                Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And },
                vec![Dst::Pred(d.reg), Dst::Pred(PT)],
                vec![s, Src::pt(), Src::pt()],
            ));
            return Ok(());
        }
        let v = self.val(s_op, ty)?;
        if ty.bits() == 64 {
            let p = self.pair(v);
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 2)], vec![p]));
        } else {
            let s = self.mov_src(v.lo);
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], vec![s]));
        }
        Ok(())
    }

    /// A 32-bit value in a form `copy` can take (a register); constants via MOV/MOV32I.
    fn mov_src(&mut self, s: Src) -> Src {
        self.in_reg(s)
    }

    /// A predicate source operand (`%p`, `!%p`, or an integer immediate).
    pub fn pred_src(&mut self, op: &Operand) -> LResult<Src> {
        match op {
            Operand::Name { name, negated, .. } => {
                let r = self.ptx_reg(name)?;
                Ok(Src::pred(r.reg, *negated))
            }
            Operand::Imm(i) => Ok(Src::pred(PT, imm_bits64(i.value) == 0)),
            _ => self.error(op.span(), "expected a predicate"),
        }
    }

    /// Puts `s` in the B operand slot form: registers and 20-bit immediates stay, other
    /// constants go through a register.
    fn b_slot(&mut self, s: Src, float: bool) -> Src {
        match s.kind {
            SrcKind::Imm(v) if float && v & 0xfff == 0 => s,
            SrcKind::Imm(v) if !float && fits_imm20(v as i32 as i64) => s,
            SrcKind::Imm(_) => self.in_reg(s),
            SrcKind::CBuf { .. } => s,
            _ => s,
        }
    }

    fn int_ext(&mut self, s: Src, ty: ScalarType) -> Src {
        // Normalize a 16-bit value held in 32 bits (upper half undefined).
        if ty.bits() != 16 {
            return s;
        }
        if let SrcKind::Imm(v) = s.kind {
            return Src::imm(if ty.is_signed() { v as i16 as i32 as u32 } else { v & 0xffff });
        }
        let t = self.tmp(1);
        let r = self.in_reg(s);
        if ty.is_signed() {
            self.op(Op::Bfe { u32: false }, Dst::reg(t, 1), vec![r, Src::imm(0x1000)]);
        } else {
            self.op(Op::Lop32i(LogicOp::And), Dst::reg(t, 1), vec![r, Src::imm(0xffff)]);
        }
        Src::r32(t)
    }

    /// Lowers arithmetic and logic (add sub mul mad fma min max neg abs not and or xor
    /// shl shr).
    pub fn lower_arith(&mut self, i: &Instruction, a: &Arith) -> LResult<()> {
        let ty = a.ty;
        let d = self.dst_reg(&i.operands[0])?;
        if ty == ScalarType::Pred {
            return self.pred_logic(i, a, d);
        }
        if ty.is_float() {
            return self.float_arith(i, a, d);
        }
        let wide_result = a.mode == Some(IntMode::Wide);
        match (a.op, ty.bits(), wide_result) {
            (ArithOp::Mul, 16 | 32, true) => return self.mul_wide(i, a, d),
            (ArithOp::Mul | ArithOp::Mad, 16 | 32, false) if a.mode != Some(IntMode::Hi) => {
                return self.mul_lo32(i, a, d);
            }
            (ArithOp::Mul, 64, false) if a.mode != Some(IntMode::Hi) => return self.mul_lo64(i, d),
            _ => {}
        }
        if a.mode == Some(IntMode::Hi) || matches!(a.op, ArithOp::Div | ArithOp::Rem | ArithOp::Mad) || a.sat || a.cc {
            return self.error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
        }
        if ty.bits() == 64 {
            return self.arith64(i, a, d);
        }
        let x = self.val(&i.operands[1], ty)?;
        let xr = self.in_reg(x.lo);
        let dst = Dst::reg(d.reg, 1);
        let bin = |s: &mut Self, k: usize| -> LResult<Src> {
            let v = s.val(&i.operands[k], ty)?;
            Ok(s.b_slot(v.lo, false))
        };
        match a.op {
            ArithOp::Add | ArithOp::Sub => {
                let y = self.val(&i.operands[2], ty)?;
                let neg = a.op == ArithOp::Sub;
                match y.lo.kind {
                    SrcKind::Imm(v) => {
                        let v = if neg { (v as i32).wrapping_neg() as u32 } else { v };
                        self.op(Op::Iadd32i { cc: false, x: false }, dst, vec![xr, Src::imm(v)]);
                    }
                    _ => {
                        let yy = if neg { y.lo.negated() } else { y.lo };
                        self.op(Op::Iadd { cc: false, x: false }, dst, vec![xr, yy]);
                    }
                }
            }
            ArithOp::Min | ArithOp::Max => {
                let (xe, ye) = {
                    let y = bin(self, 2)?;
                    (self.int_ext(xr, ty), self.int_ext(y, ty))
                };
                let xe = self.in_reg(xe);
                let ye = self.b_slot(ye, false);
                let sel = Src::pred(PT, a.op == ArithOp::Max);
                self.op(Op::Imnmx { u32: !ty.is_signed() }, dst, vec![xe, ye, sel]);
            }
            ArithOp::Neg => self.op(Op::Iadd { cc: false, x: false }, dst, vec![xr.negated(), Src::rz()]),
            ArithOp::Abs => {
                // |x| = max(x, -x).
                let n = self.tmp(1);
                let xe = self.int_ext(xr, ty);
                let xe = self.in_reg(xe);
                self.op(Op::Iadd { cc: false, x: false }, Dst::reg(n, 1), vec![xe.negated(), Src::rz()]);
                self.op(Op::Imnmx { u32: false }, dst, vec![xe, Src::r32(n), Src::pred(PT, true)]);
            }
            ArithOp::Not => self.op(Op::Lop(LogicOp::PassB), dst, vec![Src::rz(), xr.inv()]),
            ArithOp::Cnot => {
                // 16-bit values compare their low half only (the upper half is undefined).
                let xe = self.int_ext(xr, ty);
                let xe = self.in_reg(xe);
                let p = self.tmp_pred();
                self.emit(Instr::new(
                    Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And },
                    vec![Dst::Pred(p), Dst::Pred(PT)],
                    vec![xe, Src::rz(), Src::pt()],
                ));
                self.op(Op::Sel, dst, vec![Src::rz(), Src::imm(1), Src::pred(p, true)]);
            }
            ArithOp::And | ArithOp::Or | ArithOp::Xor => {
                let lop = logic_op(a.op);
                let y = self.val(&i.operands[2], ty)?;
                match y.lo.kind {
                    SrcKind::Imm(v) => self.op(Op::Lop32i(lop), dst, vec![xr, Src::imm(v)]),
                    _ => self.op(Op::Lop(lop), dst, vec![xr, y.lo]),
                }
            }
            ArithOp::Shl => {
                let y = bin(self, 2)?;
                self.op(Op::Shl, dst, vec![xr, y]);
            }
            ArithOp::Shr => {
                let y = bin(self, 2)?;
                let xe = self.int_ext(xr, ty);
                let xe = self.in_reg(xe);
                self.op(Op::Shr { u32: !ty.is_signed() }, dst, vec![xe, y]);
            }
            _ => {
                return self
                    .error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
            }
        }
        Ok(())
    }

    /// 64-bit integer add/sub/logic/shift/neg/not/min/max.
    fn arith64(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let x = self.val(&i.operands[1], ty)?;
        let (xlo, xhi) = (self.in_reg(x.lo), self.in_reg(x.hi.unwrap_or(Src::rz())));
        let lo = self.tmp(1);
        let hi = self.tmp(1);
        match a.op {
            ArithOp::Add | ArithOp::Sub => {
                let y = self.val(&i.operands[2], ty)?;
                let neg = a.op == ArithOp::Sub;
                let (ylo, yhi) = (y.lo, y.hi.unwrap_or(Src::rz()));
                match (ylo.kind, yhi.kind) {
                    (SrcKind::Imm(l), SrcKind::Imm(h)) => {
                        let v = ((h as u64) << 32 | l as u64) as i64;
                        let v = if neg { v.wrapping_neg() } else { v };
                        self.op(Op::Iadd32i { cc: true, x: false }, Dst::reg(lo, 1), vec![xlo, Src::imm(v as u32)]);
                        let h = (v >> 32) as u32;
                        if h == 0 {
                            self.op(Op::Iadd { cc: false, x: true }, Dst::reg(hi, 1), vec![xhi, Src::rz()]);
                        } else {
                            self.op(Op::Iadd32i { cc: false, x: true }, Dst::reg(hi, 1), vec![xhi, Src::imm(h)]);
                        }
                    }
                    _ => {
                        let ylo = self.in_reg(ylo);
                        let yhi = self.in_reg(yhi);
                        let (ylo, yhi) = if neg { (ylo.negated(), yhi.negated()) } else { (ylo, yhi) };
                        self.op(Op::Iadd { cc: true, x: false }, Dst::reg(lo, 1), vec![xlo, ylo]);
                        self.op(Op::Iadd { cc: false, x: true }, Dst::reg(hi, 1), vec![xhi, yhi]);
                    }
                }
            }
            ArithOp::And | ArithOp::Or | ArithOp::Xor => {
                let lop = logic_op(a.op);
                let y = self.val(&i.operands[2], ty)?;
                for (dst, xs, ys) in [(lo, xlo, y.lo), (hi, xhi, y.hi.unwrap_or(Src::rz()))] {
                    match ys.kind {
                        SrcKind::Imm(v) => self.op(Op::Lop32i(lop), Dst::reg(dst, 1), vec![xs, Src::imm(v)]),
                        _ => self.op(Op::Lop(lop), Dst::reg(dst, 1), vec![xs, ys]),
                    }
                }
            }
            ArithOp::Not => {
                self.op(Op::Lop(LogicOp::PassB), Dst::reg(lo, 1), vec![Src::rz(), xlo.inv()]);
                self.op(Op::Lop(LogicOp::PassB), Dst::reg(hi, 1), vec![Src::rz(), xhi.inv()]);
            }
            ArithOp::Neg => {
                self.op(Op::Iadd { cc: true, x: false }, Dst::reg(lo, 1), vec![Src::rz(), xlo.negated()]);
                self.op(Op::Iadd { cc: false, x: true }, Dst::reg(hi, 1), vec![Src::rz(), xhi.negated()]);
            }
            ArithOp::Shl | ArithOp::Shr => {
                let y = self.val(&i.operands[2], ScalarType::U32)?;
                let SrcKind::Imm(s) = y.lo.kind else {
                    return self.error(i.operands[2].span(), "64-bit shifts by a register are not supported yet");
                };
                let s = s.min(64);
                let signed = ty.is_signed() && a.op == ArithOp::Shr;
                if a.op == ArithOp::Shl {
                    if s == 0 {
                        self.op(Op::Mov, Dst::reg(lo, 1), vec![xlo]);
                        self.op(Op::Mov, Dst::reg(hi, 1), vec![xhi]);
                    } else if s < 32 {
                        self.op(
                            Op::Shf { left: true, signed: false, wide: true },
                            Dst::reg(hi, 1),
                            vec![xlo, Src::imm(s), xhi],
                        );
                        self.op(Op::Shl, Dst::reg(lo, 1), vec![xlo, Src::imm(s)]);
                    } else {
                        self.op(Op::Shl, Dst::reg(hi, 1), vec![xlo, Src::imm(s - 32)]);
                        self.op(Op::Mov, Dst::reg(lo, 1), vec![Src::rz()]);
                    }
                } else if s == 0 {
                    self.op(Op::Mov, Dst::reg(lo, 1), vec![xlo]);
                    self.op(Op::Mov, Dst::reg(hi, 1), vec![xhi]);
                } else if s < 32 {
                    self.op(Op::Shf { left: false, signed, wide: true }, Dst::reg(lo, 1), vec![xlo, Src::imm(s), xhi]);
                    self.op(Op::Shr { u32: !signed }, Dst::reg(hi, 1), vec![xhi, Src::imm(s)]);
                } else {
                    if signed || s < 64 {
                        self.op(Op::Shr { u32: !signed }, Dst::reg(lo, 1), vec![xhi, Src::imm((s - 32).min(31))]);
                    } else {
                        // A logical shift by 64 or more (clamped to 64) leaves nothing.
                        self.op(Op::Mov, Dst::reg(lo, 1), vec![Src::rz()]);
                    }
                    if signed {
                        self.op(Op::Shr { u32: false }, Dst::reg(hi, 1), vec![xhi, Src::imm(31)]);
                    } else {
                        self.op(Op::Mov, Dst::reg(hi, 1), vec![Src::rz()]);
                    }
                }
            }
            _ => {
                return self
                    .error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
            }
        }
        self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], vec![Src::r32(lo), Src::r32(hi)]));
        Ok(())
    }

    /// `lo32(a * b + c)` with XMAD (ptxas's sequence for `mad.lo.s32`/`mul.lo.s32`):
    /// `XMAD t, a, b, c; XMAD.MRG u, a, b.H1, RZ; XMAD.PSL.CBCC d, a.H1, u.H1, t`. A
    /// 16-bit constant multiplier needs only `XMAD t, a, k, c; XMAD.PSL d, a.H1, k, t`;
    /// powers of two become `SHL` (+ `IADD`).
    pub fn imul32(&mut self, dst: Reg, a: Src, b: Src, c: Src) {
        let a = self.in_reg(a);
        let c = self.in_reg(c);
        if let SrcKind::Imm(k) = b.kind {
            if k.is_power_of_two() {
                let s = k.trailing_zeros();
                if c == Src::rz() {
                    self.op(Op::Shl, Dst::reg(dst, 1), vec![a, Src::imm(s)]);
                } else {
                    self.op(Op::Iscadd { cc: false }, Dst::reg(dst, 1), vec![a, c, Src::imm(s)]);
                }
                return;
            }
            if k == 0 {
                self.op(Op::Mov, Dst::reg(dst, 1), vec![c]);
                return;
            }
            if k <= 0xffff {
                let t = self.tmp(1);
                self.op(Op::Xmad(XmadMods::default()), Dst::reg(t, 1), vec![a, b, c]);
                self.op(
                    Op::Xmad(XmadMods { psl: true, ..Default::default() }),
                    Dst::reg(dst, 1),
                    vec![a.h1(), b, Src::r32(t)],
                );
                return;
            }
        }
        let b = self.in_reg(b);
        let t = self.tmp(1);
        let u = self.tmp(1);
        self.op(Op::Xmad(XmadMods::default()), Dst::reg(t, 1), vec![a, b, c]);
        self.op(Op::Xmad(XmadMods { mrg: true, ..Default::default() }), Dst::reg(u, 1), vec![a, b.h1(), Src::rz()]);
        self.op(
            Op::Xmad(XmadMods { psl: true, c: XmadC::Cbcc, ..Default::default() }),
            Dst::reg(dst, 1),
            vec![a.h1(), Src::r32(u).h1(), Src::r32(t)],
        );
    }

    fn mul_lo32(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let x = self.val(&i.operands[1], ty)?;
        let y = self.val(&i.operands[2], ty)?;
        let c = if a.op == ArithOp::Mad { self.val(&i.operands[3], ty)?.lo } else { Src::rz() };
        let (x, y) = if matches!(x.lo.kind, SrcKind::Imm(_)) { (y.lo, x.lo) } else { (x.lo, y.lo) };
        self.imul32(d.reg, x, y, c);
        Ok(())
    }

    /// The full 64-bit unsigned product of two 32-bit values, built from 16x16-bit XMAD
    /// partial products with plain 32-bit adds (exact: every intermediate fits 32 bits).
    fn umul_wide(&mut self, a: Src, b: Src) -> (Src, Src) {
        let a = self.in_reg(a);
        let b = self.in_reg(b);
        let xm = |h1a: bool, h1b: bool, s: &mut Self| {
            let t = s.tmp(1);
            let aa = if h1a { a.h1() } else { a };
            let bb = if h1b { b.h1() } else { b };
            s.op(Op::Xmad(XmadMods::default()), Dst::reg(t, 1), vec![aa, bb, Src::rz()]);
            Src::r32(t)
        };
        let p0 = xm(false, false, self); // a.lo * b.lo
        let p1 = xm(false, true, self); // a.lo * b.hi
        let p2 = xm(true, false, self); // a.hi * b.lo
        let p3 = xm(true, true, self); // a.hi * b.hi
        // mid = (p0 >> 16) + (p1 & 0xffff) + (p2 & 0xffff) < 3 * 2^16.
        let p0h = self.tmp(1);
        self.op(Op::Shr { u32: true }, Dst::reg(p0h, 1), vec![p0, Src::imm(16)]);
        let p1l = self.tmp(1);
        self.op(Op::Lop32i(LogicOp::And), Dst::reg(p1l, 1), vec![p1, Src::imm(0xffff)]);
        let p2l = self.tmp(1);
        self.op(Op::Lop32i(LogicOp::And), Dst::reg(p2l, 1), vec![p2, Src::imm(0xffff)]);
        let mid = self.tmp(1);
        self.op(Op::Iadd3, Dst::reg(mid, 1), vec![Src::r32(p0h), Src::r32(p1l), Src::r32(p2l)]);
        // lo = (p0 & 0xffff) | (mid << 16)  ==  p0 + ((p1 + p2) << 16) mod 2^32.
        let lo = self.tmp(1);
        self.op(Op::Bfi, Dst::reg(lo, 1), vec![Src::r32(mid), Src::imm(0x1010), p0]);
        // hi = p3 + (p1 >> 16) + (p2 >> 16) + (mid >> 16).
        let p1h = self.tmp(1);
        self.op(Op::Shr { u32: true }, Dst::reg(p1h, 1), vec![p1, Src::imm(16)]);
        let p2h = self.tmp(1);
        self.op(Op::Shr { u32: true }, Dst::reg(p2h, 1), vec![p2, Src::imm(16)]);
        let midh = self.tmp(1);
        self.op(Op::Shr { u32: true }, Dst::reg(midh, 1), vec![Src::r32(mid), Src::imm(16)]);
        let h1 = self.tmp(1);
        self.op(Op::Iadd3, Dst::reg(h1, 1), vec![p3, Src::r32(p1h), Src::r32(p2h)]);
        let hi = self.tmp(1);
        self.op(Op::Iadd { cc: false, x: false }, Dst::reg(hi, 1), vec![Src::r32(h1), Src::r32(midh)]);
        (Src::r32(lo), Src::r32(hi))
    }

    /// `mul.wide.s32/u32` (and `.s16/.u16`).
    fn mul_wide(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let x = self.val(&i.operands[1], ty)?;
        let y = self.val(&i.operands[2], ty)?;
        let (x, y) = if matches!(x.lo.kind, SrcKind::Imm(_)) { (y.lo, x.lo) } else { (x.lo, y.lo) };
        let signed = ty.is_signed();
        if ty.bits() == 16 {
            // 16x16 -> 32: one XMAD with the right signedness.
            let x = self.in_reg(x);
            let y = self.in_reg(y);
            self.op(
                Op::Xmad(XmadMods { signed_a: signed, signed_b: signed, ..Default::default() }),
                Dst::reg(d.reg, 1),
                vec![x, y, Src::rz()],
            );
            return Ok(());
        }
        let x = self.in_reg(x);
        let lo = self.tmp(1);
        let hi = self.tmp(1);
        // (For `.s32`, 0x80000000 is -2^31, not a power of two.)
        if let SrcKind::Imm(k) = y.kind
            && k.is_power_of_two()
            && !(signed && k == 0x8000_0000)
        {
            // ptxas: `SHL lo, a, s ; SHR{.U32} hi, a, 32-s` (findings section 5).
            let s = k.trailing_zeros();
            if s == 0 {
                self.op(Op::Mov, Dst::reg(lo, 1), vec![x]);
                if signed {
                    self.op(Op::Shr { u32: false }, Dst::reg(hi, 1), vec![x, Src::imm(31)]);
                } else {
                    self.op(Op::Mov, Dst::reg(hi, 1), vec![Src::rz()]);
                }
            } else {
                self.op(Op::Shl, Dst::reg(lo, 1), vec![x, Src::imm(s)]);
                self.op(Op::Shr { u32: !signed }, Dst::reg(hi, 1), vec![x, Src::imm(32 - s)]);
            }
        } else {
            let (plo, phi) = self.umul_wide(x, y);
            self.op(Op::Mov, Dst::reg(lo, 1), vec![plo]);
            if signed {
                // hi(signed) = hi(unsigned) - (a < 0 ? b : 0) - (b < 0 ? a : 0).
                let y = self.in_reg(y);
                let sa = self.tmp(1);
                self.op(Op::Shr { u32: false }, Dst::reg(sa, 1), vec![x, Src::imm(31)]);
                let sb = self.tmp(1);
                self.op(Op::Shr { u32: false }, Dst::reg(sb, 1), vec![y, Src::imm(31)]);
                let ca = self.tmp(1);
                self.op(Op::Lop(LogicOp::And), Dst::reg(ca, 1), vec![Src::r32(sa), y]);
                let cb = self.tmp(1);
                self.op(Op::Lop(LogicOp::And), Dst::reg(cb, 1), vec![Src::r32(sb), x]);
                let t = self.tmp(1);
                self.op(Op::Iadd { cc: false, x: false }, Dst::reg(t, 1), vec![phi, Src::r32(ca).negated()]);
                self.op(Op::Iadd { cc: false, x: false }, Dst::reg(hi, 1), vec![Src::r32(t), Src::r32(cb).negated()]);
            } else {
                self.op(Op::Mov, Dst::reg(hi, 1), vec![phi]);
            }
        }
        self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], vec![Src::r32(lo), Src::r32(hi)]));
        Ok(())
    }

    /// `mul.lo.s64/u64`: lo64(a*b) = wide(a.lo, b.lo) + ((a.lo*b.hi + a.hi*b.lo) << 32).
    fn mul_lo64(&mut self, i: &Instruction, d: PtxReg) -> LResult<()> {
        let ty = ScalarType::U64;
        let x = self.val(&i.operands[1], ty)?;
        let y = self.val(&i.operands[2], ty)?;
        let (x, y) = if matches!(x.lo.kind, SrcKind::Imm(_)) { (y, x) } else { (x, y) };
        let (xlo, xhi) = (x.lo, x.hi.unwrap_or(Src::rz()));
        let (ylo, yhi) = (y.lo, y.hi.unwrap_or(Src::rz()));
        let (plo, phi) = self.umul_wide(xlo, ylo);
        let c1 = self.tmp(1);
        self.imul32(c1, xlo, yhi, phi);
        let hi = self.tmp(1);
        self.imul32(hi, xhi, ylo, Src::r32(c1));
        let lo = self.tmp(1);
        self.op(Op::Mov, Dst::reg(lo, 1), vec![plo]);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], vec![Src::r32(lo), Src::r32(hi)]));
        Ok(())
    }

    fn float_arith(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let f64 = ty.bits() == 64;
        if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
            return self.error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
        }
        let m = FMods { ftz: a.ftz, rnd: rnd(a.rnd), sat: a.sat };
        let n = if f64 { 2 } else { 1 };
        let dst = Dst::reg(d.reg, n);
        let get = |s: &mut Self, k: usize| -> LResult<Src> {
            let v = s.val(&i.operands[k], ty)?;
            Ok(if f64 { s.pair(v) } else { s.in_reg(v.lo) })
        };
        let x = get(self, 1)?;
        match a.op {
            ArithOp::Add | ArithOp::Sub | ArithOp::Mul => {
                let y = get(self, 2)?;
                let y = if a.op == ArithOp::Sub { y.negated() } else { y };
                let op = match (a.op, f64) {
                    (ArithOp::Mul, false) => Op::Fmul(m),
                    (ArithOp::Mul, true) => Op::Dmul(m.rnd),
                    (_, false) => Op::Fadd(m),
                    (_, true) => Op::Dadd(m.rnd),
                };
                self.op(op, dst, vec![x, y]);
            }
            ArithOp::Fma | ArithOp::Mad => {
                let y = get(self, 2)?;
                let z = get(self, 3)?;
                let op = if f64 { Op::Dfma(m.rnd) } else { Op::Ffma(m) };
                self.op(op, dst, vec![x, y, z]);
            }
            ArithOp::Min | ArithOp::Max => {
                let y = get(self, 2)?;
                let sel = Src::pred(PT, a.op == ArithOp::Max);
                let op = if f64 { Op::Dmnmx } else { Op::Fmnmx { ftz: a.ftz } };
                self.op(op, dst, vec![x, y, sel]);
            }
            ArithOp::Neg | ArithOp::Abs => {
                let z = Src::reg(RegRef::rz(n)).negated();
                let v = if a.op == ArithOp::Neg { x.negated() } else { x.abs() };
                let op = if f64 { Op::Dadd(Rnd::Rn) } else { Op::Fadd(FMods { ftz: a.ftz, ..FMods::default() }) };
                self.op(op, dst, vec![z, v]);
            }
            _ => {
                return self
                    .error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
            }
        }
        Ok(())
    }

    fn pred_logic(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let x = self.pred_src(&i.operands[1])?;
        let (bop, y) = match a.op {
            ArithOp::And => (BoolOp::And, self.pred_src(&i.operands[2])?),
            ArithOp::Or => (BoolOp::Or, self.pred_src(&i.operands[2])?),
            ArithOp::Xor => (BoolOp::Xor, self.pred_src(&i.operands[2])?),
            ArithOp::Not => (BoolOp::And, Src::pt()),
            _ => {
                return self.error(i.opcode.span, format!("`{}` is not supported", crate::ptx::check::instr_text(i)));
            }
        };
        let x = if a.op == ArithOp::Not {
            Src::pred(
                match x.kind {
                    SrcKind::Pred(p) => p,
                    _ => PT,
                },
                !x.mods.neg,
            )
        } else {
            x
        };
        self.emit(Instr::new(
            Op::Psetp { bop0: bop, bop1: BoolOp::And },
            vec![Dst::Pred(d.reg), Dst::Pred(PT)],
            vec![x, y, Src::pt()],
        ));
        Ok(())
    }

    /// Lowers `setp` (PTX ISA 9.7.8.6.1 / 9.7.3.x): ISETP/FSETP/DSETP; 64-bit integers
    /// compare the low words into CC first (`IADD RZ.CC, a.lo, -b.lo; ISETP.X` as ptxas).
    pub fn lower_setp(&mut self, i: &Instruction, s: &Setp) -> LResult<()> {
        let (p, q) = match &i.operands[0] {
            Operand::Name { name, .. } => (self.ptx_reg(name)?.reg, PT),
            Operand::PredPair(a, b, _) => (self.ptx_reg(a)?.reg, self.ptx_reg(b)?.reg),
            o => return self.error(o.span(), "expected a predicate"),
        };
        let c = if s.bool_op.is_some() { self.pred_src(&i.operands[3])? } else { Src::pt() };
        let bop = bool_op(s.bool_op);
        let (cmp_op, mut u32) = cmp(s.cmp);
        let ty = s.ty;
        if ty.is_float() {
            let f64 = ty.bits() == 64;
            let x = self.val(&i.operands[1], ty)?;
            let y = self.val(&i.operands[2], ty)?;
            let (x, y) = if f64 { (self.pair(x), self.pair(y)) } else { (self.in_reg(x.lo), self.b_slot(y.lo, true)) };
            let op = if f64 { Op::Dsetp { cmp: cmp_op, bop } } else { Op::Fsetp { cmp: cmp_op, ftz: s.ftz, bop } };
            self.emit(Instr::new(op, vec![Dst::Pred(p), Dst::Pred(q)], vec![x, y, c]));
            return Ok(());
        }
        u32 |= !ty.is_signed();
        let x = self.val(&i.operands[1], ty)?;
        let y = self.val(&i.operands[2], ty)?;
        if ty.bits() == 64 {
            let (xlo, xhi) = (self.in_reg(x.lo), self.in_reg(x.hi.unwrap_or(Src::rz())));
            let ylo = self.in_reg(y.lo);
            let yhi = self.in_reg(y.hi.unwrap_or(Src::rz()));
            self.op(Op::Iadd { cc: true, x: false }, Dst::reg(RZ, 1), vec![xlo, ylo.negated()]);
            self.emit(Instr::new(
                Op::Isetp { cmp: cmp_op, u32, x: true, bop },
                vec![Dst::Pred(p), Dst::Pred(q)],
                vec![xhi, yhi, c],
            ));
            return Ok(());
        }
        let xe = self.int_ext(x.lo, ty);
        let xe = self.in_reg(xe);
        let ye = self.int_ext(y.lo, ty);
        let ye = self.b_slot(ye, false);
        self.emit(Instr::new(
            Op::Isetp { cmp: cmp_op, u32, x: false, bop },
            vec![Dst::Pred(p), Dst::Pred(q)],
            vec![xe, ye, c],
        ));
        Ok(())
    }

    /// Lowers `selp` (PTX ISA 9.7.8.6.3): `SEL d, a, b, p` per 32-bit word.
    pub fn lower_selp(&mut self, i: &Instruction, ty: ScalarType) -> LResult<()> {
        let d = self.dst_reg(&i.operands[0])?;
        let p = self.pred_src(&i.operands[3])?;
        let x = self.val(&i.operands[1], ty)?;
        let y = self.val(&i.operands[2], ty)?;
        let words = if ty.bits() == 64 { 2 } else { 1 };
        let mut outs = vec![];
        for w in 0..words {
            let (a, b) = if w == 0 { (x.lo, y.lo) } else { (x.hi.unwrap_or(Src::rz()), y.hi.unwrap_or(Src::rz())) };
            // SEL needs a register first operand; swap (negating the predicate) if only b is one.
            let (a, b, neg) = if a.as_reg().is_none() && b.as_reg().is_some() { (b, a, true) } else { (a, b, false) };
            let a = self.in_reg(a);
            let b = self.b_slot(b, ty.is_float());
            let pp =
                if neg { Src { mods: crate::sass::instr::SrcMods { neg: !p.mods.neg, ..p.mods }, ..p } } else { p };
            let t = if words == 1 { d.reg } else { self.tmp(1) };
            self.op(Op::Sel, Dst::reg(t, 1), vec![a, b, pp]);
            outs.push(Src::r32(t));
        }
        if words == 2 {
            self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], outs));
        }
        Ok(())
    }

    /// Lowers `cvt` (PTX ISA 9.7.9.21) between integer widths, between f32/f64 and
    /// integers, and between f32 and f64.
    pub fn lower_cvt(&mut self, i: &Instruction, c: &Cvt) -> LResult<()> {
        let d = self.dst_reg(&i.operands[0])?;
        let x = self.val(&i.operands[1], c.src)?;
        let (dt, st) = (c.dst, c.src);
        if c.sat && !(dt.is_float() && st.is_float()) {
            return self.error(i.opcode.span, "`cvt.sat` is not supported yet");
        }
        match (dt.is_float(), st.is_float()) {
            (false, false) => self.cvt_int(d, x, dt, st),
            (true, false) => {
                if !matches!(dt, ScalarType::F32 | ScalarType::F64) {
                    return self.error(i.opcode.span, "conversion to this float type is not supported yet");
                }
                // 8- and 16-bit sources are extended to 32 bits first (the register's upper bits
                // are not part of the value).
                let src = if st.bits() == 64 { self.pair(x) } else { self.ext32(x.lo, st.bits(), st.is_signed()) };
                let src = if st.bits() == 64 { src } else { self.in_reg(src) };
                let ft = if dt == ScalarType::F64 { FType::F64 } else { FType::F32 };
                let it = if st.bits() == 64 {
                    itype(st)
                } else if st.is_signed() {
                    IType::S32
                } else {
                    IType::U32
                };
                self.op(Op::I2f { dst: ft, src: it, rnd: rnd(c.rnd) }, Dst::reg(d.reg, ft.regs()), vec![src]);
                Ok(())
            }
            (false, true) => {
                if !matches!(st, ScalarType::F32 | ScalarType::F64) {
                    return self.error(i.opcode.span, "conversion from this float type is not supported yet");
                }
                let src = if st.bits() == 64 { self.pair(x) } else { self.in_reg(x.lo) };
                let ft = if st == ScalarType::F64 { FType::F64 } else { FType::F32 };
                let it = if dt.bits() == 64 {
                    itype(dt)
                } else if dt.is_signed() {
                    IType::S32
                } else {
                    IType::U32
                };
                let r = match c.rnd {
                    Some(Rounding::Rzi) | None => IRnd::Trunc,
                    Some(Rounding::Rmi) => IRnd::Floor,
                    Some(Rounding::Rpi) => IRnd::Ceil,
                    _ => IRnd::Round,
                };
                self.op(Op::F2i { dst: it, src: ft, rnd: r, ftz: c.ftz }, Dst::reg(d.reg, it.regs()), vec![src]);
                if dt.bits() < 32 {
                    return self.error(i.opcode.span, "float to 8/16-bit integer conversion is not supported yet");
                }
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
                self.op(Op::F2f { dst: df, src: sf, rnd: rnd(c.rnd), ftz: c.ftz, int }, Dst::reg(t, n), vec![src]);
                if c.sat {
                    // `.sat` clamps to [0.0, 1.0], NaN to +0.0 (ptxas: `FADD.SAT d, t, -RZ`
                    // for f32, `DMNMX` with 0 and 1 for f64).
                    let t = Src::reg(RegRef::new(t, n));
                    if df == FType::F32 {
                        let m = FMods { sat: true, ..FMods::default() };
                        self.op(Op::Fadd(m), Dst::reg(d.reg, 1), vec![t, Src::rz().negated()]);
                    } else {
                        let lo = self.tmp(2);
                        self.op(Op::Dmnmx, Dst::reg(lo, 2), vec![Src::reg(RegRef::rz(2)), t, Src::pred(PT, true)]);
                        let one = self.pair(Val { lo: Src::imm(0), hi: Some(Src::imm(0x3ff0_0000)), whole: None });
                        self.op(Op::Dmnmx, Dst::reg(d.reg, 2), vec![Src::reg(RegRef::new(lo, 2)), one, Src::pt()]);
                    }
                }
                Ok(())
            }
        }
    }

    /// Integer-to-integer `cvt` (PTX ISA 9.7.9.21, 6.4.1): the source, extended by its own
    /// signedness, is chopped to the destination type, and that value is zero/sign-extended
    /// by the destination type to the destination register's declared width.
    fn cvt_int(&mut self, d: PtxReg, x: super::alu::Val, dt: ScalarType, st: ScalarType) -> LResult<()> {
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

    /// The low `bits` of `s`, zero- or sign-extended to 32 bits.
    fn ext32(&mut self, s: Src, bits: u32, signed: bool) -> Src {
        if bits >= 32 {
            return s;
        }
        if let SrcKind::Imm(v) = s.kind {
            let m = v & ((1u32 << bits) - 1);
            return Src::imm(if signed && m >> (bits - 1) == 1 { m | !((1u32 << bits) - 1) } else { m });
        }
        let r = self.in_reg(s);
        let t = self.tmp(1);
        if signed {
            self.op(Op::Bfe { u32: false }, Dst::reg(t, 1), vec![r, Src::imm(bits << 8)]);
        } else {
            self.op(Op::Lop32i(LogicOp::And), Dst::reg(t, 1), vec![r, Src::imm((1u32 << bits) - 1)]);
        }
        Src::r32(t)
    }

    /// Lowers `bar.sync` / `barrier.sync` (PTX ISA 9.7.13.1): `BAR.SYNC id` followed by
    /// `MEMBAR.CTA`, as ptxas emits for every occurrence (findings section 2).
    pub fn lower_bar(&mut self, i: &Instruction, op: BarOp) -> LResult<()> {
        if op == BarOp::Red {
            return self.error(i.opcode.span, "`bar.red` is not supported yet");
        }
        let mut srcs = vec![];
        match i.operands.first() {
            Some(Operand::Imm(m)) => srcs.push(Src::imm(imm_bits32(m.value))),
            Some(o) => {
                let v = self.val(o, ScalarType::U32)?;
                srcs.push(self.in_reg(v.lo));
            }
            None => srcs.push(Src::imm(0)),
        }
        if let Some(o) = i.operands.get(1) {
            let v = self.val(o, ScalarType::U32)?;
            srcs.push(v.lo);
        }
        self.emit(Instr::new(Op::Bar { arrive: op == BarOp::Arrive }, vec![], srcs));
        if op == BarOp::Sync {
            self.emit(Instr::new(Op::Membar(MembarLevel::Cta), vec![], vec![]));
        }
        Ok(())
    }
}
