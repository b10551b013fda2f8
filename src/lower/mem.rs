//! Lowering of `ld`, `st`, `cvta` and variable addresses (PTX ISA 9.7.9.8 ld, 9.7.9.10 st,
//! 9.7.9.19 cvta) to SPA 5.0 memory instructions, per state space:
//!
//! | PTX space | SASS | source |
//! |---|---|---|
//! | `.global` | `LDG.E` / `STG.E`, 24-bit signed offset | ptxas findings sections 2, 5 |
//! | generic | `LEA` + `LEA.HI.X Plg` then `LD.E`/`ST.E ..., Plg` | spa50-LEA.txt, spa50-LD.txt, findings section 4 |
//! | `.shared` | `LDS.U.sz` / `STS`, 32-bit address | findings section 2 |
//! | `.local` | `LDL` / `STL` off the frame base `R1` | findings section 5 |
//! | `.const` | `c[0x3][off]` operand (`MOV`), `LDC c[0x3][Ra+off]` | spa50-LDC.txt, findings section 6 |
//! | kernel `.param` | `c[0x0][0x140+off]`, `LDC` for sub-word or dynamic | findings section 6 |
//!
//! Generic and shared window arithmetic (`cvta`) follows findings section 4: the shared
//! window base is `c[0x0][0x0]`, the local window base `c[0x0][0x4]`.

use super::ctx::{LResult, Lowerer, VarLoc, imm_bits32};
use crate::diag::Diag;
use crate::ptx::ast::{AddrBase, Instruction, Operand, VecElem};
use crate::ptx::instr::{CacheOp as PtxCop, Cvta, LdSt, MemSem};
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{CacheOp, LdcMode, LogicOp, MemMods, MemSize, Op};

/// LDG/STG/LDS/STS/LDL/STL immediate offsets are 24-bit signed (findings section 5).
const OFF24: std::ops::RangeInclusive<i64> = -(1 << 23)..=(1 << 23) - 1;

/// The resolved address of an access.
#[derive(Clone, Copy, Debug)]
enum Address {
    /// A register (32- or 64-bit PTX register) plus byte offset.
    Reg { reg: RegRef, offset: i64 },
    /// A named variable plus byte offset.
    Var { loc: VarLoc, offset: i64 },
    /// An absolute address `[imm]`.
    Abs(i64),
}

/// The SASS size for `bytes` of an access of element type `ty` (sub-word signedness from
/// the type; vectors of sub-word elements use the unsigned size of the whole vector).
fn mem_size(ty: ScalarType, bytes: u32) -> MemSize {
    match bytes {
        1 if ty.is_signed() => MemSize::S8,
        1 => MemSize::U8,
        2 if ty.is_signed() && ty.bits() == 16 => MemSize::S16,
        2 => MemSize::U16,
        4 => MemSize::B32,
        8 => MemSize::B64,
        _ => MemSize::B128,
    }
}

impl Lowerer<'_> {
    fn address(&mut self, op: &Operand) -> LResult<Address> {
        let Operand::Address { base, offset, .. } = op else {
            return self.error(op.span(), "expected an address");
        };
        match base {
            AddrBase::Imm(v) => Ok(Address::Abs(*v + *offset)),
            AddrBase::Name(n) => {
                if let Some(loc) = self.var(&n.name) {
                    return Ok(Address::Var { loc, offset: *offset });
                }
                let r = self.ptx_reg(n)?;
                let n_regs = if r.ty.bits() == 64 { 2 } else { 1 };
                Ok(Address::Reg { reg: RegRef::new(r.reg, n_regs), offset: *offset })
            }
        }
    }

    /// The byte offset of a shared variable in the CTA's window, placing it on first use.
    pub fn shared_offset(&mut self, name: &str) -> u32 {
        let scoped = self.scoped(name);
        let key = if self.local_shared.contains_key(&scoped) { scoped } else { name.to_string() };
        if let Some(o) = self.shared_offsets.get(&key) {
            return *o;
        }
        let (size, align) =
            self.local_shared.get(&key).or_else(|| self.layout.shared.get(&key)).copied().unwrap_or((0, 4));
        let off = self.f.shared_bytes.div_ceil(align.max(1)) * align.max(1);
        self.f.shared_bytes = off + size;
        self.shared_offsets.insert(key, off);
        off
    }

    /// Resolves a variable's location to its byte offset, placing shared variables.
    fn var_offset(&mut self, name: &str, loc: VarLoc) -> Option<u32> {
        match loc {
            VarLoc::KernelParam(o) | VarLoc::Local(o) | VarLoc::Const(o) => Some(o),
            VarLoc::Shared(_) => Some(self.shared_offset(name)),
            VarLoc::ParamSlot(_) | VarLoc::Global => None,
        }
    }

    /// Copies a register's 64-bit value (or materializes a 64-bit address) into a pair.
    fn pair_of(&mut self, r: RegRef) -> RegRef {
        if r.n == 2 {
            return r;
        }
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::reg(r), Src::rz()]));
        RegRef::new(t, 2)
    }

    /// `base + offset` as a new pair (64-bit add of a constant).
    pub fn add64_imm(&mut self, base: RegRef, offset: i64) -> RegRef {
        let lo = self.tmp(1);
        let hi = self.tmp(1);
        self.op(
            Op::Iadd32i { cc: true, x: false },
            Dst::reg(lo, 1),
            vec![Src::reg(base.part(0)), Src::imm(offset as u32)],
        );
        let hi_imm = (offset >> 32) as u32;
        self.op(Op::Iadd32i { cc: false, x: true }, Dst::reg(hi, 1), vec![Src::reg(base.part(1)), Src::imm(hi_imm)]);
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::r32(lo), Src::r32(hi)]));
        RegRef::new(t, 2)
    }

    /// A 64-bit base register and an offset that fits the instruction's 24-bit field.
    fn global_addr(&mut self, reg: RegRef, offset: i64, at: crate::ptx::ast::Span) -> LResult<(RegRef, i32)> {
        if reg.n != 2 {
            return self.fail(
                Diag::error(at, "a 32-bit register cannot address `.global` or generic memory")
                    .note("with `.address_size 64`, use a 64-bit register (ptxas 12 rejects 32-bit addressing)"),
            );
        }
        if OFF24.contains(&offset) { Ok((reg, offset as i32)) } else { Ok((self.add64_imm(reg, offset), 0)) }
    }

    /// `LEA`/`LEA.HI.X` computing `base + offset` and the shared-window predicate Plg
    /// (spa50-LEA.txt; ptxas findings section 4: the PTX offset goes into the LEA).
    fn generic_addr(&mut self, base: RegRef, offset: i64) -> (RegRef, Reg) {
        let lo = self.tmp(1);
        let hi = self.tmp(1);
        let p = self.tmp_pred();
        let off_lo = if offset == 0 {
            Src::rz()
        } else if (-(1 << 19)..(1 << 19)).contains(&offset) {
            Src::imm(offset as u32)
        } else {
            let t = self.tmp(1);
            self.op(Op::Mov32i, Dst::reg(t, 1), vec![Src::imm(offset as u32)]);
            Src::r32(t)
        };
        let off_hi = match offset >> 32 {
            0 => Src::rz(),
            h => {
                let t = self.tmp(1);
                self.op(Op::Mov32i, Dst::reg(t, 1), vec![Src::imm(h as u32)]);
                Src::r32(t)
            }
        };
        self.op(Op::Lea { hi: false, x: false, cc: true }, Dst::reg(lo, 1), vec![Src::reg(base.part(0)), off_lo]);
        self.emit(Instr::new(
            Op::Lea { hi: true, x: true, cc: false },
            vec![Dst::Pred(p), Dst::reg(hi, 1)],
            vec![Src::reg(base.part(0)), off_hi, Src::reg(base.part(1))],
        ));
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::r32(lo), Src::r32(hi)]));
        (RegRef::new(t, 2), p)
    }

    fn check_ldst(&mut self, i: &Instruction, l: &LdSt, is_ld: bool) -> LResult<()> {
        let what = if is_ld { "ld" } else { "st" };
        let unsupported = |q: &str| format!("`{what}{q}` is not supported yet: SPA 5.0 has no such qualifier");
        if matches!(l.sem, Some(MemSem::Relaxed | MemSem::Acquire | MemSem::Release)) || l.mmio || l.scope.is_some() {
            return self.error(i.opcode.span, unsupported(".relaxed/.acquire/.release/.mmio"));
        }
        if l.l1_evict.is_some() || l.l2_evict.is_some() || l.cache_hint || l.prefetch.is_some() {
            return self.error(i.opcode.span, unsupported(" with eviction priorities or cache hints"));
        }
        if l.access_bytes() > 16 || l.ty.bits() == 128 {
            return self.error(
                i.opcode.span,
                format!("`{what}` of {} bytes is wider than SPA 5.0's 128-bit accesses", l.access_bytes()),
            );
        }
        if matches!(l.space, Some(StateSpace::Shared(crate::ptx::types::SharedSub::Cluster))) {
            return self.error(i.opcode.span, "`.shared::cluster` needs clusters, which SPA 5.0 does not have");
        }
        Ok(())
    }

    fn cache_op(l: &LdSt, is_ld: bool) -> CacheOp {
        if l.nc {
            return CacheOp::Ci;
        }
        if l.sem == Some(MemSem::Volatile) {
            return if is_ld { CacheOp::Cv } else { CacheOp::Wt };
        }
        match l.cop {
            None | Some(PtxCop::Ca | PtxCop::Wb) => CacheOp::Default,
            // spa50-LD.txt: ".CS maps to .CA", ".LU maps to .CG".
            Some(PtxCop::Cs) if is_ld => CacheOp::Default,
            Some(PtxCop::Cs) => CacheOp::Cs,
            Some(PtxCop::Lu | PtxCop::Cg) => CacheOp::Cg,
            Some(PtxCop::Cv) => CacheOp::Cv,
            Some(PtxCop::Wt) => CacheOp::Wt,
        }
    }

    /// The PTX data operands of an `ld`/`st` (one per vector element; `None` for `_`).
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

    /// Lowers `ld` (PTX ISA 9.7.9.8).
    pub fn lower_ld(&mut self, i: &Instruction, l: &LdSt) -> LResult<()> {
        self.check_ldst(i, l, true)?;
        let addr = self.address(&i.operands[1])?;
        let elems = self.data_elems(&i.operands[0])?;
        let bytes = l.access_bytes();
        let size = mem_size(l.ty, bytes);
        let cop = Self::cache_op(l, true);
        let space = self.effective_space(l.space, &addr);
        let at = i.operands[1].span();
        // Loads that read a constant bank directly.
        match (space, addr) {
            (Some(StateSpace::Param(_)), Address::Var { loc: VarLoc::ParamSlot(slot), offset }) => {
                return self.ld_param_slot(i, l, slot, offset, &elems);
            }
            (Some(StateSpace::Param(_)) | Some(StateSpace::Const), Address::Var { loc, offset }) => {
                let name = address_name(&i.operands[1]);
                let Some(base) = self.var_offset(&name, loc) else {
                    return self.error(at, "unsupported parameter access");
                };
                let bank = if matches!(loc, VarLoc::Const(_)) { 3 } else { 0 };
                return self.ld_cbank_static(l, bank, base as i64 + offset, &elems);
            }
            (Some(StateSpace::Param(_)) | Some(StateSpace::Const), Address::Reg { reg, offset }) => {
                let (bank, base) =
                    if space == Some(StateSpace::Const) { (3, 0) } else { (0, super::PARAM_BASE as i64) };
                return self.ld_cbank_dynamic(l, bank, reg.part(0), base + offset, &elems, at);
            }
            _ => {}
        }
        let dst = self.tmp(size.regs());
        let mods = MemMods { e: true, cop, size };
        let ins = match (space, addr) {
            (Some(StateSpace::Global), Address::Reg { reg, offset }) => {
                let (base, off) = self.global_addr(reg, offset, at)?;
                Instr::new(Op::Ldg(mods), vec![Dst::reg(dst, size.regs())], vec![Src::addr(base, off)])
            }
            (None, Address::Reg { reg, offset }) => {
                if reg.n != 2 {
                    self.global_addr(reg, offset, at)?;
                }
                let (base, p) = self.generic_addr(reg, offset);
                Instr::new(
                    Op::Ld(mods),
                    vec![Dst::reg(dst, size.regs())],
                    vec![Src::addr(base, 0), Src::pred(p, false)],
                )
            }
            (Some(StateSpace::Shared(_)), a) => {
                let (base, off) = self.window_addr(a, &i.operands[1])?;
                Instr::new(
                    Op::Lds(MemMods { e: false, cop: CacheOp::Default, size }),
                    vec![Dst::reg(dst, size.regs())],
                    vec![Src::addr(base, off)],
                )
            }
            (Some(StateSpace::Local), a) => {
                let (base, off) = self.window_addr(a, &i.operands[1])?;
                Instr::new(
                    Op::Ldl(MemMods { e: false, cop: CacheOp::Default, size }),
                    vec![Dst::reg(dst, size.regs())],
                    vec![Src::addr(base, off)],
                )
            }
            (_, Address::Var { loc: VarLoc::Global, .. }) => {
                return self.error(at, "`.global` variables need relocations, which ptx2sass does not produce yet");
            }
            _ => return self.error(at, "unsupported address for this state space"),
        };
        self.emit(ins);
        self.distribute_load(l, dst, size, &elems)
    }

    /// The space an access really uses: a generic access naming a variable uses the
    /// variable's space (findings section 4: `ld.u32 [sh]` becomes `LDS`).
    fn effective_space(&self, space: Option<StateSpace>, addr: &Address) -> Option<StateSpace> {
        if space.is_some() {
            return space;
        }
        match addr {
            Address::Var { loc: VarLoc::Shared(_), .. } => Some(StateSpace::Shared(crate::ptx::types::SharedSub::None)),
            Address::Var { loc: VarLoc::Local(_), .. } => Some(StateSpace::Local),
            Address::Var { loc: VarLoc::Const(_), .. } => Some(StateSpace::Const),
            Address::Var { loc: VarLoc::KernelParam(_) | VarLoc::ParamSlot(_), .. } => {
                Some(StateSpace::Param(crate::ptx::types::ParamSub::None))
            }
            _ => None,
        }
    }

    /// Address in a 32-bit window (shared, local): `[Ra + off]` or `[off]`.
    fn window_addr(&mut self, a: Address, op: &Operand) -> LResult<(RegRef, i32)> {
        let (base, off) = match a {
            Address::Reg { reg, offset } => (reg.part(0), offset),
            Address::Abs(v) => (RegRef::rz(1), v),
            Address::Var { loc, offset } => {
                let name = address_name(op);
                let Some(o) = self.var_offset(&name, loc) else {
                    return self.error(op.span(), "unsupported address");
                };
                if let VarLoc::Local(_) = loc {
                    self.uses_frame = true;
                    (RegRef::new(Reg::R(1), 1), o as i64 + offset)
                } else {
                    (RegRef::rz(1), o as i64 + offset)
                }
            }
        };
        if OFF24.contains(&off) {
            Ok((base, off as i32))
        } else {
            let t = self.tmp(1);
            self.op(Op::Iadd32i { cc: false, x: false }, Dst::reg(t, 1), vec![Src::reg(base), Src::imm(off as u32)]);
            Ok((RegRef::new(t, 1), 0))
        }
    }

    /// Writes the loaded register `dst` (of `size`) into the PTX destinations.
    fn distribute_load(
        &mut self,
        l: &LdSt,
        dst: Reg,
        size: MemSize,
        elems: &[Option<crate::ptx::ast::Ident>],
    ) -> LResult<()> {
        let eb = l.ty.bits();
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let src = if eb >= 32 {
                let per = (eb / 32) as u8;
                Src::reg(RegRef { reg: dst, comp: k as u8 * per, n: per })
            } else if elems.len() == 1 {
                Src::reg(RegRef::new(dst, 1))
            } else {
                // Sub-word vector elements: extract bits k*eb .. k*eb+eb-1 of the word.
                let word = (k as u32 * eb) / 32;
                let pos = (k as u32 * eb) % 32;
                let t = self.tmp(1);
                self.op(
                    Op::Bfe { u32: !l.ty.is_signed() },
                    Dst::reg(t, 1),
                    vec![Src::reg(RegRef { reg: dst, comp: word as u8, n: 1 }), Src::imm(pos | (eb << 8))],
                );
                Src::r32(t)
            };
            self.write_ptx(r, src, l.ty)?;
            let _ = size;
        }
        Ok(())
    }

    /// Writes `src` (holding a value of type `ty`) into PTX register `r`, extending to a
    /// 64-bit register when the register is wider than the value.
    pub fn write_ptx(&mut self, r: super::ctx::PtxReg, src: Src, ty: ScalarType) -> LResult<()> {
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

    /// `ld` from a kernel parameter or `.const` variable at a static offset: constant
    /// operands via `MOV` (folded into consumers later), `LDC` for sub-word data.
    fn ld_cbank_static(
        &mut self,
        l: &LdSt,
        bank: u8,
        off: i64,
        elems: &[Option<crate::ptx::ast::Ident>],
    ) -> LResult<()> {
        let eb = l.ty.bytes() as i64;
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let o = off + k as i64 * eb;
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
                    let (lo, hi) = (self.tmp(1), self.tmp(1));
                    self.op(Op::Mov, Dst::reg(lo, 1), vec![Src::cbuf(bank, o as i32, 1)]);
                    self.op(Op::Mov, Dst::reg(hi, 1), vec![Src::cbuf(bank, o as i32 + 4, 1)]);
                    self.emit(Instr::new(Op::Join, vec![Dst::reg(r.reg, 2)], vec![Src::r32(lo), Src::r32(hi)]));
                }
            }
        }
        Ok(())
    }

    /// `ld` from a constant bank at a register address: `LDC c[bank][Ra + off]` (IA mode,
    /// spa50-LDC.txt; the 16-bit offset wraps modulo 64 KiB as ptxas does).
    fn ld_cbank_dynamic(
        &mut self,
        l: &LdSt,
        bank: u8,
        index: RegRef,
        off: i64,
        elems: &[Option<crate::ptx::ast::Ident>],
        _at: crate::ptx::ast::Span,
    ) -> LResult<()> {
        let eb = l.ty.bytes() as i64;
        for (k, e) in elems.iter().enumerate() {
            let Some(id) = e else { continue };
            let r = self.ptx_reg(id)?;
            let o = (off + k as i64 * eb) as u16 as i16 as i32;
            let size = mem_size(l.ty, eb as u32);
            let t = self.tmp(size.regs());
            let cb = Src {
                kind: SrcKind::CBuf { bank, offset: o, index: Some(index), n: size.regs() },
                mods: Default::default(),
            };
            self.op(Op::Ldc { size, mode: LdcMode::Ia }, Dst::reg(t, size.regs()), vec![cb]);
            self.write_ptx(r, Src::reg(RegRef::new(t, size.regs())), l.ty)?;
        }
        Ok(())
    }

    /// `ld.param` from a register-held parameter slot (call arguments, return values).
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
            let o = off + k as i64 * l.ty.bytes() as i64;
            let Some((var, ty)) = self.param_slots.get(&(slot, o)).copied() else {
                return self.error(
                    i.operands[1].span(),
                    format!("read of a parameter slot at offset {o} that was never written"),
                );
            };
            if ty.bits() != l.ty.bits() && !(ty.bits() <= 32 && l.ty.bits() <= 32) {
                return self.error(i.span, "parameter read with a different size than it was written");
            }
            let n = if ty.bits() == 64 { 2 } else { 1 };
            self.write_ptx(r, Src::reg(RegRef::new(var, n)), l.ty)?;
        }
        Ok(())
    }

    /// Lowers `st` (PTX ISA 9.7.9.10).
    pub fn lower_st(&mut self, i: &Instruction, l: &LdSt) -> LResult<()> {
        self.check_ldst(i, l, false)?;
        let addr = self.address(&i.operands[0])?;
        let at = i.operands[0].span();
        let space = self.effective_space(l.space, &addr);
        if let (Some(StateSpace::Param(_)), Address::Var { loc: VarLoc::ParamSlot(slot), offset }) = (space, addr) {
            return self.st_param_slot(i, l, slot, offset);
        }
        match space {
            Some(StateSpace::Const) => {
                return self.error(
                    i.opcode.span,
                    "`st.const` is not allowed: the constant space is read-only (PTX ISA 5.1.3)",
                );
            }
            Some(StateSpace::Param(_)) => {
                return self.error(at, "`st.param` to a kernel parameter is not allowed: kernel parameters are read-only (PTX ISA 5.1.6.1)");
            }
            _ => {}
        }
        let bytes = l.access_bytes();
        let size = mem_size(l.ty, bytes);
        let data = self.store_data(&i.operands[1], l, size)?;
        let cop = Self::cache_op(l, false);
        let mods = MemMods { e: true, cop, size };
        let ins = match (space, addr) {
            (Some(StateSpace::Global), Address::Reg { reg, offset }) => {
                let (base, off) = self.global_addr(reg, offset, at)?;
                Instr::new(Op::Stg(mods), vec![], vec![Src::addr(base, off), data])
            }
            (None, Address::Reg { reg, offset }) => {
                if reg.n != 2 {
                    self.global_addr(reg, offset, at)?;
                }
                let (base, p) = self.generic_addr(reg, offset);
                Instr::new(Op::St(mods), vec![], vec![Src::addr(base, 0), data, Src::pred(p, false)])
            }
            (Some(StateSpace::Shared(_)), a) => {
                let (base, off) = self.window_addr(a, &i.operands[0])?;
                Instr::new(
                    Op::Sts(MemMods { e: false, cop: CacheOp::Default, size }),
                    vec![],
                    vec![Src::addr(base, off), data],
                )
            }
            (Some(StateSpace::Local), a) => {
                let (base, off) = self.window_addr(a, &i.operands[0])?;
                Instr::new(
                    Op::Stl(MemMods { e: false, cop: CacheOp::Default, size }),
                    vec![],
                    vec![Src::addr(base, off), data],
                )
            }
            (_, Address::Var { loc: VarLoc::Global, .. }) => {
                return self.error(at, "`.global` variables need relocations, which ptx2sass does not produce yet");
            }
            _ => return self.error(at, "unsupported address for this state space"),
        };
        self.emit(ins);
        Ok(())
    }

    /// The register holding the data of a store, built from the PTX operand(s).
    fn store_data(&mut self, op: &Operand, l: &LdSt, size: MemSize) -> LResult<Src> {
        let eb = l.ty.bits();
        let mut parts: Vec<Src> = vec![];
        let elems: Vec<Operand> = match op {
            Operand::Vector(v, span) => v
                .iter()
                .map(|e| match e {
                    VecElem::Reg(r) => Operand::Name { name: r.clone(), component: None, negated: false, span: r.span },
                    VecElem::Imm(m) => Operand::Imm(*m),
                    VecElem::Sink(_) => Operand::Imm(crate::ptx::ast::Immediate {
                        value: crate::ptx::ast::ImmValue::Int(0),
                        span: *span,
                    }),
                })
                .collect(),
            other => vec![other.clone()],
        };
        for e in &elems {
            match e {
                Operand::Imm(m) if eb == 64 => {
                    let v = super::ctx::imm_bits64(m.value);
                    for w in [v as u32, (v >> 32) as u32] {
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
                _ => return self.error(op.span(), "expected a register, immediate or vector"),
            }
        }
        if eb < 32 && parts.len() > 1 {
            // Pack sub-word elements into 32-bit words.
            let per_word = (32 / eb) as usize;
            let mask = (1u32 << eb) - 1;
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
                        self.op(Op::Shl, Dst::reg(t, 1), vec![Src::r32(m), Src::imm(k as u32 * eb)]);
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
                words.push(acc.expect("non-empty chunk"));
            }
            parts = words;
        }
        let regs = size.regs() as usize;
        if parts.len() == 1 && regs == 1 {
            return Ok(self.in_reg(parts[0]));
        }
        if parts.len() != regs {
            return self.error(op.span(), "store data does not match the access size");
        }
        // A whole wide PTX register stored as is needs no join.
        if let Some(r0) = parts[0].as_reg()
            && parts.iter().enumerate().all(|(k, p)| p.as_reg() == Some(RegRef { reg: r0.reg, comp: k as u8, n: 1 }))
        {
            return Ok(Src::reg(RegRef::new(r0.reg, regs as u8)));
        }
        let t = self.tmp(regs as u8);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, regs as u8)], parts));
        Ok(Src::reg(RegRef::new(t, regs as u8)))
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

    /// `s` in a register (immediates materialized).
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
        let elems: Vec<Operand> = match &i.operands[1] {
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
            let o = off + k as i64 * l.ty.bytes() as i64;
            let n = if l.ty.bits() == 64 { 2 } else { 1 };
            let var = match self.param_slots.get(&(slot, o)) {
                Some((v, _)) => *v,
                None => self.tmp(n),
            };
            let src = match e {
                Operand::Name { name, .. } => {
                    let r = self.ptx_reg(name)?;
                    Src::reg(RegRef::new(r.reg, n))
                }
                Operand::Imm(m) if n == 2 => {
                    let v = super::ctx::imm_bits64(m.value);
                    let lo = self.imm_reg(v as u32);
                    let hi = self.imm_reg((v >> 32) as u32);
                    let t = self.tmp(2);
                    self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, hi]));
                    Src::reg(RegRef::new(t, 2))
                }
                Operand::Imm(m) => self.imm_reg(imm_bits32(m.value)),
                _ => return self.error(e.span(), "unsupported parameter value"),
            };
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(var, n)], vec![src]));
            self.param_slots.insert((slot, o), (var, l.ty));
        }
        Ok(())
    }

    /// The address of a named variable in its own state space, as a 64-bit value
    /// (`mov.u64 %rd, var`; PTX ISA 9.7.9.1 mov).
    pub fn var_address(&mut self, name: &str, loc: VarLoc, at: crate::ptx::ast::Span) -> LResult<RegRef> {
        let lo = match loc {
            VarLoc::Local(o) => {
                self.uses_frame = true;
                let t = self.tmp(1);
                // The frame base is R1 (ptxas findings section 5: `IADD32I R1, R1, -size`).
                self.op(Op::Iadd32i { cc: false, x: false }, Dst::reg(t, 1), vec![Src::r32(Reg::R(1)), Src::imm(o)]);
                Src::r32(t)
            }
            VarLoc::Shared(_) => {
                let o = self.shared_offset(name);
                self.imm_reg(o)
            }
            VarLoc::Const(o) => self.imm_reg(o),
            VarLoc::KernelParam(o) => self.imm_reg(o - super::PARAM_BASE),
            VarLoc::ParamSlot(_) => {
                return self.error(at, "taking the address of a call parameter is not supported");
            }
            VarLoc::Global => {
                return self.error(at, "`.global` variables need relocations, which ptx2sass does not produce yet");
            }
        };
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, Src::rz()]));
        Ok(RegRef::new(t, 2))
    }

    /// Lowers `cvta` (PTX ISA 9.7.9.19) with the window arithmetic of findings section 4.
    pub fn lower_cvta(&mut self, i: &Instruction, c: &Cvta) -> LResult<()> {
        let Operand::Name { name: dname, .. } = &i.operands[0] else {
            return self.error(i.span, "bad cvta");
        };
        let d = self.ptx_reg(dname)?;
        if c.ty.bits() != 64 {
            return self.error(i.opcode.span, "32-bit `cvta` is not supported: ptx2sass needs `.address_size 64`");
        }
        let a: RegRef = match &i.operands[1] {
            Operand::Name { name, .. } => match self.var(&name.name) {
                Some(loc) => self.var_address(&name.name, loc, name.span)?,
                None => {
                    let r = self.ptx_reg(name)?;
                    self.pair_of(RegRef::new(r.reg, if r.ty.bits() == 64 { 2 } else { 1 }))
                }
            },
            o => return self.error(o.span(), "expected a register or variable"),
        };
        match (c.space, c.to) {
            (StateSpace::Global, _) => {
                // The global window is identity-mapped in the generic space.
                self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 2)], vec![Src::reg(a)]));
            }
            (StateSpace::Shared(_) | StateSpace::Local, false) => {
                let window = if matches!(c.space, StateSpace::Local) { 4 } else { 0 };
                let lo = self.tmp(1);
                self.op(Op::Lop(LogicOp::Or), Dst::reg(lo, 1), vec![Src::reg(a.part(0)), Src::cbuf(0, window, 1)]);
                self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], vec![Src::r32(lo), Src::rz()]));
            }
            (StateSpace::Shared(_) | StateSpace::Local, true) => {
                let lo = self.tmp(1);
                self.op(Op::Lop32i(LogicOp::And), Dst::reg(lo, 1), vec![Src::reg(a.part(0)), Src::imm(0x00ff_ffff)]);
                self.emit(Instr::new(Op::Join, vec![Dst::reg(d.reg, 2)], vec![Src::r32(lo), Src::rz()]));
            }
            _ => {
                return self.error(i.opcode.span, format!("`cvta` with `{}` is not supported", c.space));
            }
        }
        Ok(())
    }
}

/// The variable name of an address operand `[name+off]`.
fn address_name(op: &Operand) -> String {
    match op {
        Operand::Address { base: AddrBase::Name(n), .. } => n.name.clone(),
        _ => String::new(),
    }
}
