//! Lowering of data movement, float arithmetic and comparisons (PTX ISA 9.7.3-9.7.4,
//! 9.7.8, 9.7.9.1 mov) to SPA 5.0 ALU instructions; conversions are in
//! [`crate::lower::arith::cvt`], integer arithmetic in [`crate::lower::arith::int`],
//! [`crate::lower::arith::mul`], [`crate::lower::arith::div`] and [`crate::lower::arith::bits`].
//!
//! Idioms follow what ptxas 11.8 emits for sm_50 (probed on small kernels, see
//! `docs/lowering.md`): 64-bit compare as `IADD RZ.CC, a.lo, -b.lo` + `ISETP.X`;
//! `neg.f32` as `FADD -RZ, -a`; sign extension by `BFE`.
//!
//! 16-bit PTX registers live in 32-bit registers whose upper half is undefined; operations
//! whose result depends on those bits (compares, right shifts, widening) extend first.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::ctx::{LResult, Lowerer, PtxReg, imm_bits32, imm_bits64};
use crate::ptx::ast::{Instruction, Operand, VecElem};
use crate::ptx::instr::{Arith, ArithOp, BoolOp as PBool, CmpOp, Rounding, Setp};
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

pub(in crate::lower) fn rnd(r: Option<Rounding>) -> Rnd {
    match r {
        Some(Rounding::Rz | Rounding::Rzi) => Rnd::Rz,
        Some(Rounding::Rm | Rounding::Rmi) => Rnd::Rm,
        Some(Rounding::Rp | Rounding::Rpi) => Rnd::Rp,
        _ => Rnd::Rn,
    }
}

pub(in crate::lower) fn itype(t: ScalarType) -> IType {
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

/// True if `v` fits the sign-extended 20-bit immediate of ALU instructions.
pub fn fits_imm20(v: i64) -> bool {
    (-(1 << 19)..(1 << 19)).contains(&v)
}

/// The low `bits` bits set: `(1 << bits) - 1`, all 32 for `bits >= 32`.
pub(in crate::lower) fn low_mask(bits: u32) -> u32 {
    1u32.checked_shl(bits).map_or(u32::MAX, |b| b.wrapping_sub(1))
}

/// The byte offset of 32-bit word `k` after `base` in a constant bank (`k` is an axis,
/// 0..=2, or an `%envreg` number, 0..=31: the saturation never happens).
fn cbank_word(base: i32, k: i32) -> i32 {
    base.saturating_add(k.saturating_mul(4))
}

impl Lowerer<'_> {
    /// [`Lowerer::val`] of operand `k` of `i` ([`Lowerer::operand`]).
    pub fn val_of(&mut self, i: &Instruction, k: usize, ty: ScalarType) -> LResult<Val> {
        let op = self.operand(i, k)?;
        self.val(op, ty)
    }

    /// [`Lowerer::dst_reg`] of operand `k` of `i` ([`Lowerer::operand`]).
    pub(in crate::lower) fn dst_of(&mut self, i: &Instruction, k: usize) -> LResult<PtxReg> {
        let op = self.operand(i, k)?;
        self.dst_reg(op)
    }

    /// [`Lowerer::pred_src`] of operand `k` of `i` ([`Lowerer::operand`]).
    pub fn pred_of(&mut self, i: &Instruction, k: usize) -> LResult<Src> {
        let op = self.operand(i, k)?;
        self.pred_src(op)
    }

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
                if matches!(name.name.as_str(), "%clock64" | "%gridid") {
                    let w = self.special_reg64(&name.name);
                    return Ok(Val { lo: Src::reg(w.part(0)), hi: Some(Src::reg(w.part(1))), whole: Some(w) });
                }
                if crate::ptx::check::special_register(&name.name).is_some() {
                    let s = self.special_reg(&name.name, ' ', name.span)?;
                    return Ok(Val { lo: s, hi: None, whole: None });
                }
                if let Some(loc) = self.var(&name.name) {
                    let a = self.var_address(&name.name, loc, name.span)?;
                    return Ok(Val { lo: Src::reg(a.part(0)), hi: Some(Src::reg(a.part(1))), whole: Some(a) });
                }
                if self.layout.func_names.contains(&name.name)
                    && self.lookup_reg_type(&self.scoped(&name.name)).is_none()
                {
                    // A function's address (`mov.u64 %rd, f`).
                    let (lo, hi) = self.function_address(name)?;
                    return Ok(Val { lo, hi: Some(hi), whole: None });
                }
                let r = self.ptx_reg(name)?;
                if r.ty.bits() > 64 {
                    return self.error(
                        name.span,
                        format!("`{}` is a `.b128` register: only `ld`, `st` and `mov` take one", name.name),
                    );
                }
                let n = if r.ty.bits() == 64 { 2 } else { 1 };
                let whole = RegRef::new(r.reg, n);
                Ok(Val {
                    lo: Src::reg(whole.part(0)),
                    hi: if n == 2 { Some(Src::reg(whole.part(1))) } else { None },
                    whole: Some(whole),
                })
            }
            Operand::VarPlus { name, offset, .. } => {
                let Some(loc) = self.var(&name.name) else {
                    return self.error(name.span, format!("`{}` is not a variable", name.name));
                };
                let a = self.var_address(&name.name, loc, name.span)?;
                let a = if *offset == 0 { a } else { self.add64_imm(a, *offset) };
                Ok(Val { lo: Src::reg(a.part(0)), hi: Some(Src::reg(a.part(1))), whole: Some(a) })
            }
            _ => self.error(op.span(), "expected a register or immediate"),
        }
    }

    /// A 64-bit value as one pair register (joining or materializing as needed).
    pub fn pair(&mut self, v: Val) -> Src {
        Src::reg(self.pair_reg(v))
    }

    /// [`Lowerer::pair`], as the register pair.
    pub fn pair_reg(&mut self, v: Val) -> RegRef {
        if let Some(w) = v.whole
            && w.n == 2
        {
            return w;
        }
        let lo = self.in_reg(v.lo);
        let hi = self.in_reg(v.hi.unwrap_or(Src::rz()));
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, hi]));
        RegRef::new(t, 2)
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
            ("%ntid", a) => return Ok(Src::cbuf(0, cbank_word(0x8, a), 1)),
            ("%nctaid", a) => return Ok(Src::cbuf(0, cbank_word(0x14, a), 1)),
            ("%laneid", _) => SpecialReg::LaneId,
            // ptxas 11.8: `%clock` → `CS2R R, SR_CLOCKLO`; `%warpid` → `S2R R, SR_VIRTID;
            // BFE.U32 R, R, 0x608`; `%smid` → `BFE.U32 ..., 0x914` of SR_VIRTID; `%nsmid` →
            // `BFE.U32 ..., 0x914` of SR_VIRTCFG; `%nwarpid` → the constant 64.
            ("%clock" | "%clock_hi", _) => {
                let sr = if name == "%clock" { SpecialReg::ClockLo } else { SpecialReg::ClockHi };
                let t = self.tmp(1);
                self.emit(Instr::new(Op::Cs2r(sr), vec![Dst::reg(t, 1)], vec![]));
                return Ok(Src::r32(t));
            }
            ("%warpid" | "%smid" | "%nsmid", _) => {
                let (sr, field) = match name {
                    "%warpid" => (SpecialReg::VirtId, 0x608),
                    "%smid" => (SpecialReg::VirtId, 0x914),
                    _ => (SpecialReg::VirtCfg, 0x914),
                };
                let t = self.tmp(1);
                self.emit(Instr::new(Op::S2r(sr), vec![Dst::reg(t, 1)], vec![]));
                let u = self.tmp(1);
                self.op(Op::Bfe { u32: true, brev: false }, Dst::reg(u, 1), vec![Src::r32(t), Src::imm(field)]);
                return Ok(Src::r32(u));
            }
            ("%nwarpid", _) => return Ok(Src::imm(64)),
            // ptxas 11.8: `%envreg0` .. `%envreg31` are driver constants `c[0x0][0x30]` ..
            // `c[0x0][0xac]` (`mov.u32 %r, %envreg3` → `MOV R0, c[0x0][0x3c]`).
            (n, _) if crate::ptx::check::envreg(n).is_some() => {
                let k = crate::ptx::check::envreg(n).unwrap_or(0) as i32;
                return Ok(Src::cbuf(0, cbank_word(0x30, k), 1));
            }
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

    /// The 64-bit special registers: `%gridid` is `c[0x0][0x28]` (ptxas 11.8 reads it
    /// there); `%clock64` is ptxas's wrap-safe read `hi = CS2R SR_CLOCKHI; lo = CS2R
    /// SR_CLOCKLO; if lo >= 0 (signed) { hi = CS2R SR_CLOCKHI }` (a low word without its top
    /// bit may have wrapped after the first high read), with a SEL for the guarded re-read.
    fn special_reg64(&mut self, name: &str) -> RegRef {
        let t = self.tmp(2);
        if name == "%gridid" {
            let (lo, hi) = (self.tmp(1), self.tmp(1));
            self.op(Op::Mov, Dst::reg(lo, 1), vec![Src::cbuf(0, 0x28, 1)]);
            self.op(Op::Mov, Dst::reg(hi, 1), vec![Src::cbuf(0, 0x2c, 1)]);
            self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::r32(lo), Src::r32(hi)]));
            return RegRef::new(t, 2);
        }
        let (hi1, lo, hi2) = (self.tmp(1), self.tmp(1), self.tmp(1));
        self.emit(Instr::new(Op::Cs2r(SpecialReg::ClockHi), vec![Dst::reg(hi1, 1)], vec![]));
        self.emit(Instr::new(Op::Cs2r(SpecialReg::ClockLo), vec![Dst::reg(lo, 1)], vec![]));
        self.emit(Instr::new(Op::Cs2r(SpecialReg::ClockHi), vec![Dst::reg(hi2, 1)], vec![]));
        let lt = Op::Isetp { cmp: crate::sass::op::Cmp::Lt, u32: false, x: false, bop: BoolOp::And };
        let p = self.isetp(lt, Src::r32(lo), Src::rz(), Src::pt());
        let hi = self.sel(Src::pred(p, false), Src::r32(hi1), Src::r32(hi2));
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::r32(lo), hi]));
        RegRef::new(t, 2)
    }

    pub(in crate::lower) fn dst_reg(&mut self, op: &Operand) -> LResult<PtxReg> {
        match op {
            Operand::Name { name, .. } => self.ptx_reg(name),
            _ => self.error(op.span(), "expected a destination register"),
        }
    }

    /// The 32-bit words of a `mov` source operand of type `ty` (one for types up to 32
    /// bits): a register's components, an immediate's words (a 64-bit PTX literal
    /// zero-extended to 128 bits, as ptxas 12.9 does for `mov.b128 %q, -2`: `MOV R4,
    /// 0xfffffffe; MOV R5, -0x1; CS2R R6, SRZ`), or what [`Self::val`] resolves.
    fn mov_words(&mut self, op: &Operand, ty: ScalarType) -> LResult<Vec<Src>> {
        if ty.bits() <= 64 {
            let v = self.val(op, ty)?;
            return Ok(match v.hi {
                Some(hi) if ty.bits() == 64 => vec![v.lo, hi],
                _ if ty.bits() == 64 => vec![v.lo, Src::rz()],
                _ => vec![v.lo],
            });
        }
        match op {
            Operand::Imm(m) => {
                let v = imm_bits64(m.value);
                Ok(vec![Src::imm(v as u32), Src::imm((v >> 32) as u32), Src::rz(), Src::rz()])
            }
            Operand::Name { name, component: None, negated: false, .. } => {
                let r = self.ptx_reg(name)?;
                Ok((0..4).map(|c| Src::reg(RegRef { reg: r.reg, comp: c, n: 1 })).collect())
            }
            _ => self.error(op.span(), "expected a `.b128` register or an immediate"),
        }
    }

    /// Writes the 32-bit `words` (registers or immediates) to PTX register `d` whole.
    fn write_words(&mut self, d: PtxReg, words: Vec<Src>) {
        let words: Vec<Src> = words.into_iter().map(|w| self.in_reg(w)).collect();
        if words.len() == 1 {
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], words));
        } else {
            self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, words.len() as u8)], words));
        }
    }

    /// Lowers `mov` (PTX ISA 9.7.9.1): copies, immediates, special registers, variable
    /// addresses, and packing/unpacking of vectors (`mov.b64 {a, b}, %rd` unpacks, `mov.b64
    /// %rd, {a, b}` packs; 2 or 4 elements of the type's width divided by their count,
    /// `ptx::check` makes sure of the shape; `.b128` of 2 `.b64` or 4 `.b32` elements).
    pub fn lower_mov(&mut self, i: &Instruction, ty: ScalarType) -> LResult<()> {
        let [d_op, s_op, ..] = i.operands.as_slice() else {
            return self.error(i.span, "`mov` takes `d, a`");
        };
        if let Operand::Vector(elems, _) = d_op {
            let words = self.mov_words(s_op, ty)?;
            let eb = ty.bits().checked_div(elems.len() as u32).unwrap_or(ty.bits());
            for (k, e) in elems.iter().enumerate() {
                let VecElem::Reg(id) = e else { continue };
                let r = self.ptx_reg(id)?;
                // `ptx::check` makes sure of the shape: element `k`'s bits are within the
                // value's words (a wrong shape is an internal error, not an index panic).
                let at = k.saturating_mul(eb as usize);
                let w = (eb as usize / 32).max(1);
                let Some(ws) = words.get(at / 32..).and_then(|ws| ws.get(..w)) else {
                    return self.error(id.span, "internal error: a vector element beyond the value");
                };
                if eb >= 32 {
                    self.write_words(r, ws.to_vec());
                } else {
                    let word = self.in_reg(ws.first().copied().unwrap_or(Src::rz()));
                    let t = self.tmp(1);
                    let field = (at as u32 % 32) | (eb << 8);
                    self.op(Op::Bfe { u32: true, brev: false }, Dst::reg(t, 1), vec![word, Src::imm(field)]);
                    self.write_words(r, vec![Src::r32(t)]);
                }
            }
            return Ok(());
        }
        let d = self.dst_reg(d_op)?;
        if let Operand::Vector(elems, _) = s_op {
            let eb = ty.bits().checked_div(elems.len() as u32).unwrap_or(ty.bits());
            let mut parts = vec![];
            for e in elems {
                match e {
                    VecElem::Reg(id) if eb >= 32 => {
                        let r = self.ptx_reg(id)?;
                        parts.extend((0..eb / 32).map(|c| Src::reg(RegRef { reg: r.reg, comp: c as u8, n: 1 })));
                    }
                    VecElem::Reg(id) => {
                        let r = self.ptx_reg(id)?;
                        parts.push(Src::reg(RegRef::new(r.reg, 1)));
                    }
                    VecElem::Imm(m) if eb >= 32 => {
                        let v = imm_bits64(m.value);
                        parts.extend([v as u32, (v >> 32) as u32].into_iter().take(eb as usize / 32).map(Src::imm));
                    }
                    VecElem::Imm(m) => {
                        let v = self.imm_reg(imm_bits32(m.value) & low_mask(eb));
                        parts.push(v);
                    }
                    // A sink source (ptxas 12.9 accepts `mov.b32 %r, {%h, _}`): undefined bits, zero here.
                    VecElem::Sink(_) => parts.extend((0..(eb / 32).max(1)).map(|_| Src::rz())),
                }
            }
            if eb >= 32 {
                self.write_words(d, parts);
                return Ok(());
            }
            let mask = low_mask(eb);
            let mut words = vec![];
            for chunk in parts.chunks(32u32.checked_div(eb).unwrap_or(1).max(1) as usize) {
                let mut acc = None;
                for (k, p) in chunk.iter().enumerate() {
                    let m = self.tmp(1);
                    self.op(Op::Lop32i(LogicOp::And), Dst::reg(m, 1), vec![*p, Src::imm(mask)]);
                    let part = if k == 0 {
                        Src::r32(m)
                    } else {
                        let s = self.tmp(1);
                        self.op(Op::Shl, Dst::reg(s, 1), vec![Src::r32(m), Src::imm((k as u32).saturating_mul(eb))]);
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
                words.extend(acc);
            }
            self.write_words(d, words);
            return Ok(());
        }
        if ty.bits() == 128 {
            let words = self.mov_words(s_op, ty)?;
            self.write_words(d, words);
            return Ok(());
        }
        if ty == ScalarType::Pred {
            let s = self.pred_src(s_op)?;
            if let SrcKind::Pred(p) = s.kind
                && p == PT
            {
                // A constant: `RZ == RZ` / `RZ != RZ`. (A PSETP copy of PT would read as a
                // predicate move of PT to register allocation, which cannot place it.)
                let cmp = if s.mods.neg { crate::sass::op::Cmp::Ne } else { crate::sass::op::Cmp::Eq };
                self.emit(Instr::new(
                    Op::Isetp { cmp, u32: true, x: false, bop: BoolOp::And },
                    vec![Dst::Pred(d.reg), Dst::Pred(PT)],
                    vec![Src::rz(), Src::rz(), Src::pt()],
                ));
                return Ok(());
            }
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
    pub(in crate::lower) fn b_slot(&mut self, s: Src, float: bool) -> Src {
        match s.kind {
            SrcKind::Imm(v) if float && v & 0xfff == 0 => s,
            SrcKind::Imm(v) if !float && fits_imm20(v as i32 as i64) => s,
            SrcKind::Imm(_) => self.in_reg(s),
            SrcKind::CBuf { .. } => s,
            _ => s,
        }
    }

    /// A 16-bit value held in 32 bits (upper half undefined) zero- or sign-extended by
    /// `ty`'s signedness; other widths unchanged.
    pub(in crate::lower) fn int_ext(&mut self, s: Src, ty: ScalarType) -> Src {
        if ty.bits() != 16 {
            return s;
        }
        if let SrcKind::Imm(v) = s.kind {
            return Src::imm(if ty.is_signed() { v as i16 as i32 as u32 } else { v & 0xffff });
        }
        let t = self.tmp(1);
        let r = self.in_reg(s);
        if ty.is_signed() {
            self.op(Op::Bfe { u32: false, brev: false }, Dst::reg(t, 1), vec![r, Src::imm(0x1000)]);
        } else {
            self.op(Op::Lop32i(LogicOp::And), Dst::reg(t, 1), vec![r, Src::imm(0xffff)]);
        }
        Src::r32(t)
    }

    /// Float `add sub mul mad fma min max neg abs` (PTX ISA 9.7.3) of `.f32`/`.f64`.
    pub(in crate::lower) fn float_arith(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let ty = a.ty;
        let f64 = ty.bits() == 64;
        if !matches!(ty, ScalarType::F32 | ScalarType::F64) {
            return self.error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
        }
        let m = FMods { ftz: a.ftz, rnd: rnd(a.rnd), sat: a.sat };
        let n = if f64 { 2 } else { 1 };
        let dst = Dst::reg(d.reg, n);
        let get = |s: &mut Self, k: usize| -> LResult<Src> {
            let v = s.val_of(i, k, ty)?;
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
            ArithOp::Div => return self.lower_fdiv(i, a, d),
            _ => {
                return self
                    .error(i.opcode.span, format!("`{}` is not supported yet", crate::ptx::check::instr_text(i)));
            }
        }
        Ok(())
    }

    /// `and or xor not` of predicates: PSETP.
    pub(in crate::lower) fn pred_logic(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let x = self.pred_of(i, 1)?;
        let (bop, y) = match a.op {
            ArithOp::And => (BoolOp::And, self.pred_of(i, 2)?),
            ArithOp::Or => (BoolOp::Or, self.pred_of(i, 2)?),
            ArithOp::Xor => (BoolOp::Xor, self.pred_of(i, 2)?),
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
        let (p, q) = match self.operand(i, 0)? {
            Operand::Name { name, .. } => (self.ptx_reg(name)?.reg, PT),
            Operand::PredPair(a, b, _) => (self.ptx_reg(a)?.reg, self.ptx_reg(b)?.reg),
            o => return self.error(o.span(), "expected a predicate"),
        };
        self.setp_into(i, s, p, q)
    }

    /// The comparison of `setp`/`set` (operands 1 and 2, combined with operand 3 when
    /// `s.bool_op` is given) into the predicates `p` and `q` (`PT` to drop it).
    pub(in crate::lower) fn setp_into(&mut self, i: &Instruction, s: &Setp, p: Reg, q: Reg) -> LResult<()> {
        let c = if s.bool_op.is_some() { self.pred_of(i, 3)? } else { Src::pt() };
        let bop = bool_op(s.bool_op);
        let (cmp_op, mut u32) = cmp(s.cmp);
        let ty = s.ty;
        if ty.is_float() {
            let f64 = ty.bits() == 64;
            let x = self.val_of(i, 1, ty)?;
            let y = self.val_of(i, 2, ty)?;
            let (x, y) = if f64 { (self.pair(x), self.pair(y)) } else { (self.in_reg(x.lo), self.b_slot(y.lo, true)) };
            let op = if f64 { Op::Dsetp { cmp: cmp_op, bop } } else { Op::Fsetp { cmp: cmp_op, ftz: s.ftz, bop } };
            self.emit(Instr::new(op, vec![Dst::Pred(p), Dst::Pred(q)], vec![x, y, c]));
            return Ok(());
        }
        u32 |= !ty.is_signed();
        let x = self.val_of(i, 1, ty)?;
        let y = self.val_of(i, 2, ty)?;
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
        let d = self.dst_of(i, 0)?;
        let p = self.pred_of(i, 3)?;
        let x = self.val_of(i, 1, ty)?;
        let y = self.val_of(i, 2, ty)?;
        let words = if ty.bits() == 64 { 2 } else { 1 };
        let mut outs = vec![];
        for w in 0..words {
            let (a, b) = if w == 0 { (x.lo, y.lo) } else { (x.hi.unwrap_or(Src::rz()), y.hi.unwrap_or(Src::rz())) };
            // SEL needs a register first operand; swap (negating the predicate) if only b is one.
            let (a, b, neg) = if a.as_reg().is_none() && b.as_reg().is_some() { (b, a, true) } else { (a, b, false) };
            let a = self.in_reg(a);
            // SEL's immediate is a sign-extended 20-bit integer whatever the PTX type: a
            // float constant such as +INF (0x7f800000) does not fit it (its encoding, not
            // FADD's f32-high-bits form: sm50-encoding-and-cubin.md §1.2 class table).
            let b = self.b_slot(b, false);
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
}
