//! Lowering of `ld` and `st` (PTX ISA 9.7.9.8 ld, 9.7.9.10 st): resolve the space,
//! ask [`crate::lower::mem::ldst::plan`] what the form becomes (or why it is rejected), check the
//! alignment, and emit exactly that: the access instruction(s) of the plan's size and cache
//! operator, `MEMBAR` before (release) or after (acquire), data moved between PTX
//! registers and the access's register pair or quad.
//!
//! The memory group: addressing ([`addr`]), the ld/st plan ([`ldst`]), atomics ([`atom`]), what a
//! register provably points into ([`facts`]),
//! module variables ([`globals`], [`shared`]), cache hints ([`hints`]) and memory clean-ups
//! ([`memopt`]), shared-load vectorization ([`vectorize`]).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod addr;
pub mod atom;
pub mod facts;
pub mod globals;
pub mod hints;
pub mod ldst;
pub mod memopt;
pub mod shared;
pub mod vectorize;

use crate::diag::Diag;
use crate::lower::ctx::{LResult, Lowerer, VarLoc, imm_bits32};
use crate::lower::mem::addr::Address;
use crate::lower::mem::ldst::{Access, Form, Plan, Space, declared_space, mem_size, plan};
use crate::ptx::ast::{Instruction, Operand, Span, VecElem};
use crate::ptx::instr::LdSt;
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{LdcMode, LogicOp, MemMods, MemSize, Op};

/// The element operands of a store's data operand (a sink stores zero... PTX allows `_`
/// only in loads; a sink in a store vector is rejected by the checks).
fn store_elems(op: &Operand) -> Vec<Operand> {
    match op {
        Operand::Vector(v, span) => v
            .iter()
            .map(|e| match e {
                VecElem::Reg(r) => Operand::Name { name: r.clone(), component: None, negated: false, span: r.span },
                VecElem::Imm(m) => Operand::Imm(*m),
                VecElem::Sink(_) => {
                    Operand::Imm(crate::ptx::ast::Immediate { value: crate::ptx::ast::ImmValue::Int(0), span: *span })
                }
            })
            .collect(),
        other => vec![other.clone()],
    }
}

impl Lowerer<'_> {
    /// `off` plus `k` elements of `eb` bytes. The operand's offset is PTX input (any `i64`):
    /// an error where the sum overflows 64 bits, as [`Lowerer::address`] reports `[imm+off]`.
    fn offset_plus(&mut self, off: i64, k: usize, eb: i64, at: Span) -> LResult<i64> {
        match i64::try_from(k).ok().and_then(|k| k.checked_mul(eb)).and_then(|d| off.checked_add(d)) {
            Some(o) => Ok(o),
            None => self.error(at, format!("the address offset {off} overflows 64 bits")),
        }
    }

    /// A base (a variable's or the parameter space's offset) plus the operand's offset
    /// (PTX input, any `i64`): an error where that overflows 64 bits.
    fn base_plus(&mut self, base: i64, off: i64, at: Span) -> LResult<i64> {
        self.offset_plus(off, 1, base, at)
    }

    /// The PTX data operands of an `ld` (one per vector element; `None` for `_`).
    fn data_elems(&mut self, op: &Operand) -> LResult<Vec<Option<crate::ptx::ast::Ident>>> {
        match op {
            Operand::Vector(v, _) => Ok(v
                .iter()
                .map(|e| match e {
                    VecElem::Reg(r) => Some(r.clone()),
                    _ => None,
                })
                .collect()),
            Operand::Name { name, .. } => Ok(vec![Some(name.clone())]),
            _ => self.error(op.span(), "expected a register or vector"),
        }
    }

    /// Writes `src` (holding a value of type `ty`) into PTX register `r`, extending to a
    /// 64-bit register when the register is wider than the value (PTX ISA 6.4.1).
    pub fn write_ptx(&mut self, r: crate::lower::ctx::PtxReg, src: Src, ty: ScalarType) -> LResult<()> {
        let width = if r.ty.bits() == 64 {
            2
        } else if r.ty.bits() == 128 {
            4
        } else {
            1
        };
        let src_w = src.as_reg().map_or(1, |x| x.n);
        if width == src_w {
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(r.reg, width)], vec![src]));
        } else if width == 2 && src_w == 1 {
            // e.g. ld.u32 into a .b64 register: zero/sign-extend (PTX ISA 6.4.1).
            let hi = if ty.is_signed() {
                let t = self.tmp(1);
                self.op(Op::Shr { u32: false }, Dst::reg(t, 1), vec![src, Src::imm(31)]);
                Src::r32(t)
            } else {
                Src::rz()
            };
            self.emit(Instr::new(Op::Join, vec![Dst::reg(r.reg, 2)], vec![src, hi]));
        } else {
            return self.error(self.origin, "unsupported register width for this access");
        }
        Ok(())
    }

    fn ld_cbank_static(
        &mut self,
        l: &LdSt,
        bank: u8,
        off: i64,
        elems: &[Option<crate::ptx::ast::Ident>],
    ) -> LResult<()> {
        let eb = l.ty.bytes() as i64;
        // The front end's check (`check_alignment`) knows only the variable's declared
        // alignment; here the placed offset is known. A parameter of a smaller alignment
        // read with a wider type (`ld.param.f64` of a `.u16` at 0x142) is misaligned: an
        // error, as everywhere else (PTX ISA 6.4.2; a vector access is aligned to its whole
        // size). ptxas 11.8 accepts it and reads the word at the offset rounded down to 4
        // (`c[0x0][0x140]`, `c[0x0][0x144]`), since a constant-bank operand's offset is in words.
        let size = i64::try_from(elems.len()).unwrap_or(1).saturating_mul(eb).clamp(1, 16);
        if off.rem_euclid(size) != 0 {
            return self.fail(
                Diag::error(self.origin, format!("misaligned {size}-byte access at constant-bank offset 0x{off:x}"))
                    .label("this address is not a multiple of the access size")
                    .note("PTX ISA 6.4.2: addresses must be naturally aligned to the access size"),
            );
        }
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let o = self.offset_plus(off, k, eb, self.origin)?;
            if !(0..0x10000).contains(&o) {
                return self.error(self.origin, format!("constant-bank offset 0x{o:x} is outside the 64 KiB bank"));
            }
            match eb {
                1 | 2 => {
                    let t = self.tmp(1);
                    let size = mem_size(l.ty, eb as u32);
                    self.op(Op::Ldc { size, mode: LdcMode::Ia }, Dst::reg(t, 1), vec![Src::cbuf(bank, o as i32, 1)]);
                    self.write_ptx(r, Src::r32(t), l.ty)?;
                }
                4 => {
                    let t = self.tmp(1);
                    self.op(Op::Mov, Dst::reg(t, 1), vec![Src::cbuf(bank, o as i32, 1)]);
                    self.write_ptx(r, Src::r32(t), l.ty)?;
                }
                _ => {
                    // 64- and 128-bit values: one MOV per 32-bit word, joined (`o` is within
                    // the 64 KiB bank, checked above: the word offsets fit `i32`).
                    let n = if eb == 16 { 4 } else { 2 };
                    let words: Vec<Src> = [0, 4, 8, 12]
                        .into_iter()
                        .take(usize::from(n))
                        .map(|w| {
                            let t = self.tmp(1);
                            self.op(Op::Mov, Dst::reg(t, 1), vec![Src::cbuf(bank, (o as i32).saturating_add(w), 1)]);
                            Src::r32(t)
                        })
                        .collect();
                    self.emit(Instr::new(Op::Join, vec![Dst::reg(r.reg, n)], words));
                }
            }
        }
        Ok(())
    }

    fn ld_cbank_dynamic(
        &mut self,
        l: &LdSt,
        bank: u8,
        index: RegRef,
        off: i64,
        elems: &[Option<crate::ptx::ast::Ident>],
        at: crate::ptx::ast::Span,
    ) -> LResult<()> {
        let eb = l.ty.bytes() as i64;
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let o = self.offset_plus(off, k, eb, at)?;
            // LDC reads at most 64 bits (spa50-LDC.txt `.sz`): a 128-bit element is two
            // LDC.64 at `o` and `o + 8`, joined into the quad.
            let (parts, part_bytes) = if eb == 16 { (2, 8) } else { (1, eb as u32) };
            let size = mem_size(l.ty, part_bytes);
            let mut words = vec![];
            for p in 0..parts {
                // IA mode: address = Ra + ImmS16, wrapping at 32 bits; beyond the bank the
                // result is 0 (spa50-LDC.txt). An offset outside the signed 16-bit field is
                // split as ptxas does: the multiple of 0x10000 nearest to it goes into the
                // register (`IADD32I R0, R6, 0x10000; LDC R0, c[0x3][R0+-0x7000]` for
                // +0x9000), the signed low 16 bits into the field.
                // `o - lo` wraps: only its low 32 bits reach IADD32I, and the wrapped
                // difference equals the exact one modulo 2^32 (an `o` near `i64::MAX`
                // panicked here).
                let o = self.offset_plus(o, p, 8, at)?;
                let lo = o as u16 as i16 as i64;
                let index = if o == lo {
                    index
                } else {
                    let t = self.tmp(1);
                    self.op(
                        Op::Iadd32i { cc: false, x: false },
                        Dst::reg(t, 1),
                        vec![Src::reg(index), Src::imm(o.wrapping_sub(lo) as u32)],
                    );
                    RegRef::new(t, 1)
                };
                let t = self.tmp(size.regs());
                let cb = Src {
                    kind: SrcKind::CBuf { bank, offset: lo as i32, index: Some(index), n: size.regs() },
                    mods: Default::default(),
                };
                self.op(Op::Ldc { size, mode: LdcMode::Ia }, Dst::reg(t, size.regs()), vec![cb]);
                words.push(Src::reg(RegRef::new(t, size.regs())));
            }
            match words.as_slice() {
                [w] => self.write_ptx(r, *w, l.ty)?,
                _ => self.emit(Instr::new(Op::Join, vec![Dst::reg(r.reg, 4)], words)),
            }
        }
        Ok(())
    }

    fn ld_param_slot(
        &mut self,
        i: &Instruction,
        l: &LdSt,
        slot: u32,
        off: i64,
        elems: &[Option<crate::ptx::ast::Ident>],
    ) -> LResult<()> {
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let at = i.operands.get(1).map_or(i.span, Operand::span);
            let o = self.offset_plus(off, k, l.ty.bytes() as i64, at)?;
            let found = self.read_slot(slot, o, l.ty);
            let Some((var, ty)) = found else {
                return self.error(at, format!("read of a parameter slot at offset {o} that was never written"));
            };
            if ty.bits() != l.ty.bits() && !(ty.bits() <= 32 && l.ty.bits() <= 32) {
                return self.error(i.span, "parameter read with a different size than it was written");
            }
            let n = (ty.bits() / 32).max(1) as u8;
            let mut src = Src::reg(RegRef::new(var, n));
            if l.ty.bits() < 32 {
                // A slot holds the whole register an `st.param.b8/.b16` stored; the load
                // reads only its low bytes, zero- or sign-extended by the load's type (PTX
                // ISA 9.7.9.8 ld: "sign-extended for signed types, zero-extended for
                // unsigned and bit-size types"). Without this an inlined `ld.param.u16`
                // of a stored 0x703b8 read 0x703b8, not 0x03b8.
                let t = self.tmp(1);
                let bits = l.ty.bits();
                self.op(
                    Op::Bfe { u32: !l.ty.is_signed(), brev: false },
                    Dst::reg(t, 1),
                    vec![src, Src::imm(bits << 8)],
                );
                src = Src::r32(t);
            }
            self.write_ptx(r, src, l.ty)?;
        }
        Ok(())
    }

    /// A register holding the 32-bit constant `v` (`RZ` for zero).
    pub fn imm_reg(&mut self, v: u32) -> Src {
        if v == 0 {
            return Src::rz();
        }
        let t = self.tmp(1);
        self.op(Op::Mov32i, Dst::reg(t, 1), vec![Src::imm(v)]);
        Src::r32(t)
    }

    /// `s` in a register (immediates and constant-bank operands materialized).
    pub fn in_reg(&mut self, s: Src) -> Src {
        match s.kind {
            SrcKind::Imm(v) => self.imm_reg(v),
            SrcKind::Reg(_) => s,
            _ => {
                let t = self.tmp(1);
                self.op(Op::Mov, Dst::reg(t, 1), vec![s]);
                Src::r32(t)
            }
        }
    }

    fn st_param_slot(&mut self, i: &Instruction, l: &LdSt, slot: u32, off: i64) -> LResult<()> {
        let Some(data) = i.operands.get(1) else {
            return self.error(i.span, "`st` takes `[a], b`");
        };
        let elems: Vec<Operand> = match data {
            Operand::Vector(v, _) => v
                .iter()
                .filter_map(|e| match e {
                    VecElem::Reg(r) => {
                        Some(Operand::Name { name: r.clone(), component: None, negated: false, span: r.span })
                    }
                    VecElem::Imm(m) => Some(Operand::Imm(*m)),
                    VecElem::Sink(_) => None,
                })
                .collect(),
            o => vec![o.clone()],
        };
        for (k, e) in elems.iter().enumerate() {
            let o = self.offset_plus(off, k, l.ty.bytes() as i64, data.span())?;
            // Whole words of a callee's parameter or a call's result become contents.
            self.words_to_entries(slot, o, l.ty.bytes());
            let n = if l.ty.bits() == 64 { 2 } else { 1 };
            // A store replaces what overlapped it (a narrower or wider earlier store).
            for b in (1..i64::from(l.ty.bytes())).filter_map(|d| o.checked_add(d)) {
                self.param_slots.remove(&(slot, b));
            }
            let width = |lw: &Self, v: Reg| match v {
                Reg::V(x) => lw.f.vregs.get(x as usize).map(|k| k.width()),
                _ => None,
            };
            let old = self.param_slots.get(&(slot, o)).copied();
            let src = match e {
                Operand::Name { name, .. } => {
                    let r = self.ptx_reg(name)?;
                    Src::reg(RegRef::new(r.reg, n))
                }
                Operand::Imm(m) if n == 2 => {
                    let v = crate::lower::ctx::imm_bits64(m.value);
                    let lo = self.imm_reg(v as u32);
                    let hi = self.imm_reg((v >> 32) as u32);
                    let t = self.tmp(2);
                    self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, hi]));
                    Src::reg(RegRef::new(t, 2))
                }
                Operand::Imm(m) => self.imm_reg(imm_bits32(m.value)),
                _ => return self.error(e.span(), "unsupported parameter value"),
            };
            // A `.param` slot is byte-addressed (PTX ISA 5.1.6): a store over the first
            // bytes of a wider value stored earlier at the same offset changes only its
            // own bytes (`st.param.b32 [a], x; st.param.b8 [a], y` leaves bytes 1..3 of
            // `x`), so it is inserted into that value, which stays the slot's entry.
            if let Some((v, oty)) = old
                && oty.bytes() > l.ty.bytes()
            {
                self.insert_into(v, oty, src, l.ty.bytes());
                continue;
            }
            // The same register when it fits: a guarded store is branched around, and
            // the slot must name one register on both paths.
            let var = match old {
                Some((v, _)) if width(self, v) == Some(n) => v,
                _ => self.tmp(n),
            };
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(var, n)], vec![src]));
            self.param_slots.insert((slot, o), (var, l.ty));
        }
        Ok(())
    }

    /// Inserts the low `bytes` bytes of `src` (1, 2 or 4) into the first bytes of the
    /// wider `.param` slot value `var` of type `ty` (`BFI`; a 64-bit value's low word
    /// rebuilt and joined with its high word), in place.
    fn insert_into(&mut self, var: Reg, ty: ScalarType, src: Src, bytes: u32) {
        let field = bytes.saturating_mul(8).min(32) << 8;
        if ty.bits() == 64 {
            let lo = Src::reg(RegRef { reg: var, comp: 0, n: 1 });
            let hi = Src::reg(RegRef { reg: var, comp: 1, n: 1 });
            let t = self.tmp(1);
            if bytes >= 4 {
                self.op(Op::Copy, Dst::reg(t, 1), vec![src]);
            } else {
                self.op(Op::Bfi, Dst::reg(t, 1), vec![src, Src::imm(field), lo]);
            }
            self.emit(Instr::new(Op::Join, vec![Dst::reg(var, 2)], vec![Src::r32(t), hi]));
        } else {
            self.op(Op::Bfi, Dst::reg(var, 1), vec![src, Src::imm(field), Src::r32(var)]);
        }
    }

    /// Writes the loaded register `dst` into the PTX destinations `elems` (vector
    /// elements are register components; sub-word elements are extracted with `BFE`).
    fn distribute_load(&mut self, l: &LdSt, dst: Reg, elems: &[Option<crate::ptx::ast::Ident>]) -> LResult<()> {
        // `k` is a vector element index (at most 8, the front end's vector shapes): the
        // saturating products are exact.
        let eb = l.ty.bits();
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let src = if eb >= 32 {
                let per = (eb / 32) as u8;
                Src::reg(RegRef { reg: dst, comp: (k as u8).saturating_mul(per), n: per })
            } else if elems.len() == 1 {
                Src::reg(RegRef::new(dst, 1))
            } else {
                // Sub-word vector elements: extract bits k*eb .. k*eb+eb-1 of the word.
                let word = (k as u32).saturating_mul(eb) / 32;
                let pos = (k as u32).saturating_mul(eb) % 32;
                let t = self.tmp(1);
                self.op(
                    Op::Bfe { u32: !l.ty.is_signed(), brev: false },
                    Dst::reg(t, 1),
                    vec![Src::reg(RegRef { reg: dst, comp: word as u8, n: 1 }), Src::imm(pos | (eb << 8))],
                );
                Src::r32(t)
            };
            self.write_ptx(r, src, l.ty)?;
        }
        Ok(())
    }

    /// The register holding the data of one store access, built from its PTX element
    /// operands (packing sub-word vector elements into words, joining wide vectors).
    fn store_data(&mut self, elems: &[Operand], l: &LdSt, size: MemSize, at: Span) -> LResult<Src> {
        let eb = l.ty.bits();
        let mut parts: Vec<Src> = vec![];
        for e in elems {
            match e {
                Operand::Imm(m) if eb >= 64 => {
                    // A 64-bit PTX literal, zero-extended for `.b128` (ptxas 12.9 for sm_70:
                    // `st.global.b128 [p], -3` stores 0xfffffffd, 0xffffffff, 0, 0).
                    let v = crate::lower::ctx::imm_bits64(m.value);
                    for w in [v as u32, (v >> 32) as u32, 0, 0].into_iter().take(eb as usize / 32) {
                        parts.push(self.imm_reg(w));
                    }
                }
                Operand::Imm(m) => {
                    let v = imm_bits32(m.value);
                    parts.push(self.imm_reg(v));
                }
                Operand::Name { name, .. } => {
                    let r = self.ptx_reg(name)?;
                    let w = if r.ty.bits() == 64 {
                        2
                    } else if r.ty.bits() == 128 {
                        4
                    } else {
                        1
                    };
                    if eb == 64 || eb == 128 {
                        for c in 0..(eb / 32) as u8 {
                            parts.push(Src::reg(RegRef { reg: r.reg, comp: c, n: 1 }));
                        }
                    } else {
                        let _ = w;
                        parts.push(Src::reg(RegRef { reg: r.reg, comp: 0, n: 1 }));
                    }
                }
                _ => return self.error(e.span(), "expected a register, immediate or vector"),
            }
        }
        if eb < 32 && parts.len() > 1 {
            // Pack sub-word elements into 32-bit words (`.b8`/`.b16` types: PTX ISA 5.2).
            let (per_word, mask) = match eb {
                8 => (4, 0xff),
                16 => (2, 0xffff),
                _ => return self.error(at, format!("internal error: {eb}-bit elements packed into words")),
            };
            let mut words = vec![];
            for chunk in parts.chunks(per_word) {
                let mut acc: Option<Src> = None;
                for (k, p) in chunk.iter().enumerate() {
                    let t = self.tmp(1);
                    if k == 0 {
                        self.op(Op::Lop32i(LogicOp::And), Dst::reg(t, 1), vec![*p, Src::imm(mask)]);
                    } else {
                        let m = self.tmp(1);
                        self.op(Op::Lop32i(LogicOp::And), Dst::reg(m, 1), vec![*p, Src::imm(mask)]);
                        self.op(Op::Shl, Dst::reg(t, 1), vec![Src::r32(m), Src::imm((k as u32).saturating_mul(eb))]);
                    }
                    acc = Some(match acc {
                        None => Src::r32(t),
                        Some(a) => {
                            let o = self.tmp(1);
                            self.op(Op::Lop(LogicOp::Or), Dst::reg(o, 1), vec![a, Src::r32(t)]);
                            Src::r32(o)
                        }
                    });
                }
                // `chunks` yields non-empty chunks: `acc` is always set.
                words.extend(acc);
            }
            parts = words;
        }
        let regs = size.regs() as usize;
        if let ([p], 1) = (parts.as_slice(), regs) {
            return Ok(self.in_reg(*p));
        }
        if parts.len() != regs {
            return self.error(at, "store data does not match the access size");
        }
        // A whole wide PTX register stored as is needs no join.
        if let Some(r0) = parts.first().and_then(|p| p.as_reg())
            && parts.iter().enumerate().all(|(k, p)| p.as_reg() == Some(RegRef { reg: r0.reg, comp: k as u8, n: 1 }))
        {
            return Ok(Src::reg(RegRef::new(r0.reg, regs as u8)));
        }
        let t = self.tmp(regs as u8);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, regs as u8)], parts));
        Ok(Src::reg(RegRef::new(t, regs as u8)))
    }

    /// The space an access goes to: the declared one, or for generic addressing the space
    /// of a named variable or of a register provably pointing into `.global`.
    fn access_space(&self, l: &LdSt, addr: &Address) -> Space {
        let var_space = |loc: &VarLoc| match loc {
            VarLoc::KernelParam(_) => Space::KernelParam,
            VarLoc::ParamSlot(_) => Space::FuncParam,
            VarLoc::Local(_) => Space::Local,
            VarLoc::Shared(_) => Space::Shared,
            VarLoc::Const(_) => Space::Const,
            VarLoc::Global => Space::Global,
        };
        match (l.space, addr) {
            (Some(StateSpace::Param(_)), Address::Var { loc, .. }) => var_space(loc),
            (Some(s), _) => declared_space(Some(s)),
            (None, Address::Var { loc, .. }) => var_space(loc),
            (None, Address::Reg { name, .. }) => self.facts.get(name).space.unwrap_or(Space::Generic),
            (None, Address::Abs(_)) => Space::Generic,
        }
    }

    /// Resolves the address operand `addr_op` of `ld` (`is_ld`) or `st` `i`, plans its
    /// form (`plan_access`) and checks its static alignment; returns the address, the state
    /// space it accesses and the plan. Errors are diagnostics at the operand.
    fn resolve_access(
        &mut self,
        i: &Instruction,
        l: &LdSt,
        addr_op: &Operand,
        is_ld: bool,
    ) -> LResult<(Address, Space, Plan)> {
        let addr = self.address(addr_op)?;
        let space = self.access_space(l, &addr);
        let form = Form {
            is_ld,
            space,
            immediate_address: matches!(addr, Address::Abs(_)),
            has_policy_operand: i.operands.len() > 2,
            unified: matches!(addr_op, Operand::Address { unified: true, .. }),
            uniform_address: false,
        };
        let p = self.plan_access(i, l, form)?;
        self.check_alignment(&addr, l.access_bytes(), addr_op.span())?;
        Ok((addr, space, p))
    }

    /// Plans the access; reports the rejection, or the emulation and dropped-hint warnings
    /// (errors with `--deny-emulation`).
    fn plan_access(&mut self, i: &Instruction, l: &LdSt, form: Form) -> LResult<Plan> {
        let op = if form.is_ld { "ld" } else { "st" };
        match plan(l, form) {
            Err(r) => {
                let span = i
                    .mods
                    .iter()
                    .find(|m| m.text == r.qualifier)
                    .map_or(i.opcode.span.to(i.mods.last().map_or(i.opcode.span, |m| m.span)), |m| m.span);
                self.fail(
                    Diag::error(
                        span,
                        format!("`{}` cannot be lowered: {}", crate::ptx::check::instr_text(i), r.message),
                    )
                    .label(format!("`{}`", r.qualifier)),
                )
            }
            Ok(p) => {
                let span = i.opcode.span.to(i.mods.last().map_or(i.opcode.span, |m| m.span));
                for e in &p.emulated {
                    let d = if self.deny_emulation { Diag::error(span, "") } else { Diag::warning(span, "") };
                    self.diags.push(Diag {
                        message: format!("`{op}` emulated on SPA 5.0: {e}"),
                        ..d.label("ptxas rejects this for sm_50").note("pass `--deny-emulation` to make this an error")
                    });
                }
                for e in &p.dropped {
                    let d = if self.deny_emulation { Diag::error(span, "") } else { Diag::warning(span, "") };
                    self.diags.push(Diag {
                        message: format!("`{op}` hint dropped on SPA 5.0: {e}"),
                        ..d.label("no effect on SPA 5.0")
                    });
                }
                if self.deny_emulation && !(p.emulated.is_empty() && p.dropped.is_empty()) {
                    return Err(crate::lower::ctx::Failed);
                }
                Ok(p)
            }
        }
    }

    /// An address statically known to be misaligned for an access of `size` bytes is an
    /// error (PTX ISA 6.4.2: addresses must be aligned to the access size).
    fn check_alignment(&mut self, addr: &Address, size: u32, at: Span) -> LResult<()> {
        let size = size.min(16) as i64;
        let misaligned = match addr {
            Address::Abs(v) => v.rem_euclid(size) != 0,
            Address::Var { offset, .. } => offset.rem_euclid(size.min(self.addr_var_align(addr) as i64)) != 0,
            Address::Reg { name, offset, .. } => {
                let a = self.facts.get(name).align as i64;
                a >= size && offset.rem_euclid(size) != 0
            }
        };
        if misaligned {
            return self.fail(
                Diag::error(at, format!("misaligned {size}-byte access"))
                    .label("this address is not a multiple of the access size")
                    .note("PTX ISA 6.4.2: addresses must be naturally aligned to the access size; SPA 5.0 raises an error"),
            );
        }
        Ok(())
    }

    fn addr_var_align(&self, addr: &Address) -> u32 {
        match addr {
            Address::Var { name, .. } => self.var_align.get(name).copied().unwrap_or(1),
            _ => 1,
        }
    }

    /// Emits the `MEMBAR` of a plan, if any.
    fn membar(&mut self, m: Option<crate::sass::op::MembarLevel>) {
        if let Some(level) = m {
            self.emit(Instr::new(Op::Membar(level), vec![], vec![]));
        }
    }

    /// Lowers `ld` (PTX ISA 9.7.9.8).
    pub fn lower_ld(&mut self, i: &Instruction, l: &LdSt) -> LResult<()> {
        let [data_op, addr_op, ..] = i.operands.as_slice() else {
            return self.error(i.span, "`ld` takes `d, [a]`");
        };
        let (addr, space, p) = self.resolve_access(i, l, addr_op, true)?;
        let elems = self.data_elems(data_op)?;
        let at = addr_op.span();
        match p.access {
            Access::Register => {
                let Address::Var { loc: VarLoc::ParamSlot(slot), offset, .. } = addr else {
                    return self.error(at, "a `.param::func` access needs a parameter name");
                };
                return self.ld_param_slot(i, l, slot, offset, &elems);
            }
            Access::ConstBank => {
                return match addr {
                    Address::Var { loc, offset, name } => {
                        let Some(base) = self.var_offset(&name, loc) else {
                            return self.error(at, "unsupported constant access");
                        };
                        let bank = if matches!(loc, VarLoc::Const(_)) { 3 } else { 0 };
                        let o = self.base_plus(i64::from(base), offset, at)?;
                        self.ld_cbank_static(l, bank, o, &elems)
                    }
                    Address::Reg { reg, offset, .. } => {
                        let (bank, base) =
                            if space == Space::Const { (3, 0) } else { (0, crate::lower::PARAM_BASE as i64) };
                        let o = self.base_plus(base, offset, at)?;
                        self.ld_cbank_dynamic(l, bank, reg.part(0), o, &elems, at)
                    }
                    Address::Abs(_) => self.error(at, "an immediate constant address is not supported"),
                };
            }
            _ => {}
        }
        // Each access takes its share of the elements (`chunks` needs a non-zero size).
        let per = elems.len().checked_div(p.sizes.len()).unwrap_or(0).max(1);
        let accesses = self.access_addresses(&p, &addr, at)?;
        for ((size, (base, off, plg)), elems) in p.sizes.iter().zip(accesses).zip(elems.chunks(per)) {
            let mods = MemMods { cop: p.cop, keep: p.keep, uniform_ok: p.uniform_ok, ..MemMods::new(*size, true) };
            let dst = self.tmp(size.regs());
            let d = vec![Dst::reg(dst, size.regs())];
            let a = Src::addr(base, off);
            let ins = match p.access {
                Access::Global => Instr::new(Op::Ldg(mods), d, vec![a]),
                Access::Generic => {
                    let Some(plg) = plg else {
                        return self.error(at, "internal error: a generic access without its predicate");
                    };
                    Instr::new(Op::Ld(mods), d, vec![a, Src::pred(plg, false)])
                }
                Access::Shared => {
                    Instr::new(Op::Lds(MemMods { e: false, cop: Default::default(), ..mods }), d, vec![a])
                }
                Access::Local => Instr::new(Op::Ldl(MemMods { e: false, cop: Default::default(), ..mods }), d, vec![a]),
                _ => unreachable!("handled above"),
            };
            self.emit(ins);
            self.distribute_load(l, dst, elems)?;
        }
        self.membar(p.membar_after);
        Ok(())
    }

    /// The (base, offset, Plg) of each access of a plan (a 256-bit access is two
    /// 128-bit accesses 16 bytes apart).
    fn access_addresses(&mut self, p: &Plan, addr: &Address, at: Span) -> LResult<Vec<(RegRef, i32, Option<Reg>)>> {
        let mut out: Vec<(RegRef, i32, Option<Reg>)> = vec![];
        for k in 0..p.sizes.len() {
            out.push(match (p.access, addr) {
                (Access::Global, Address::Reg { reg, offset, .. }) => {
                    let o = self.offset_plus(*offset, k, 16, at)?;
                    let (b, o) = self.global_addr(*reg, o, at)?;
                    (b, o, None)
                }
                (Access::Generic, Address::Reg { reg, offset, .. }) => {
                    if reg.n != 2 {
                        self.global_addr(*reg, *offset, at)?;
                    }
                    match out.first() {
                        None => {
                            let (t, pr) = self.generic_addr(*reg, *offset);
                            (t, 0, Some(pr))
                        }
                        // Later 128-bit halves: 16 bytes on (`k` is 1: at most two halves).
                        Some(&(t, _, pr)) => (t, (k as i32).saturating_mul(16), pr),
                    }
                }
                (Access::Shared | Access::Local, a) => {
                    let shifted = match *a {
                        Address::Reg { reg, offset, ref name } => {
                            Address::Reg { reg, offset: self.offset_plus(offset, k, 16, at)?, name: name.clone() }
                        }
                        Address::Var { loc, offset, ref name } => {
                            Address::Var { loc, offset: self.offset_plus(offset, k, 16, at)?, name: name.clone() }
                        }
                        Address::Abs(v) => Address::Abs(self.offset_plus(v, k, 16, at)?),
                    };
                    let (b, o) = self.window_addr(&shifted, at)?;
                    (b, o, None)
                }
                (Access::Global, Address::Var { loc: VarLoc::Global, offset, name }) => {
                    let reg = self.global_var_base(name);
                    let o = self.offset_plus(*offset, k, 16, at)?;
                    let (b, o) = self.global_addr(reg, o, at)?;
                    (b, o, None)
                }
                _ => return self.error(at, "unsupported address for this state space"),
            });
        }
        Ok(out)
    }

    /// Lowers `st` (PTX ISA 9.7.9.10).
    pub fn lower_st(&mut self, i: &Instruction, l: &LdSt) -> LResult<()> {
        let [addr_op, data_op, ..] = i.operands.as_slice() else {
            return self.error(i.span, "`st` takes `[a], b`");
        };
        let (addr, _, p) = self.resolve_access(i, l, addr_op, false)?;
        let at = addr_op.span();
        if p.access == Access::Register {
            let Address::Var { loc: VarLoc::ParamSlot(slot), offset, .. } = addr else {
                return self.error(at, "a `.param::func` access needs a parameter name");
            };
            return self.st_param_slot(i, l, slot, offset);
        }
        let elems = store_elems(data_op);
        if let Operand::Vector(v, _) = data_op
            && let Some(VecElem::Sink(s)) = v.iter().find(|e| matches!(e, VecElem::Sink(_)))
        {
            return self.error(*s, "the sink `_` is allowed only in the destination of `ld` (PTX ISA 9.7.9.8)");
        }
        self.membar(p.membar_before);
        // Each access takes its share of the elements (`chunks` needs a non-zero size).
        let per = elems.len().checked_div(p.sizes.len()).unwrap_or(0).max(1);
        let accesses = self.access_addresses(&p, &addr, at)?;
        for ((size, (base, off, plg)), elems) in p.sizes.iter().zip(accesses).zip(elems.chunks(per)) {
            let data = self.store_data(elems, l, *size, data_op.span())?;
            let mods = MemMods { cop: p.cop, keep: p.keep, uniform_ok: p.uniform_ok, ..MemMods::new(*size, true) };
            let a = Src::addr(base, off);
            let ins = match p.access {
                Access::Global => Instr::new(Op::Stg(mods), vec![], vec![a, data]),
                Access::Generic => {
                    let Some(plg) = plg else {
                        return self.error(at, "internal error: a generic access without its predicate");
                    };
                    Instr::new(Op::St(mods), vec![], vec![a, data, Src::pred(plg, false)])
                }
                Access::Shared => {
                    Instr::new(Op::Sts(MemMods { e: false, cop: Default::default(), ..mods }), vec![], vec![a, data])
                }
                Access::Local => {
                    Instr::new(Op::Stl(MemMods { e: false, cop: Default::default(), ..mods }), vec![], vec![a, data])
                }
                _ => return self.error(at, "unsupported store"),
            };
            self.emit(ins);
        }
        Ok(())
    }
}
