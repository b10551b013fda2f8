//! Addresses of memory accesses (PTX ISA 6.4.2 "Addresses as Operands") and `cvta`
//! (PTX ISA 9.7.9.19): resolving names to their spaces, placing shared variables, the
//! 24-bit offset fields, generic addresses with the shared-window predicate Plg
//! (`LEA`/`LEA.HI.X`, spa50-LEA.txt), and the window arithmetic of ptxas findings
//! section 4 (shared window base `c[0x0][0x0]`, local window base `c[0x0][0x4]`).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::diag::Diag;
use crate::lower::ctx::{LResult, Lowerer, VarLoc};
use crate::ptx::ast::{AddrBase, Instruction, Operand};
use crate::ptx::instr::Cvta;
use crate::ptx::types::StateSpace;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src, SymPart};
use crate::sass::op::{LogicOp, Op};

/// LDG/STG/LDS/STS/LDL/STL immediate offsets are 24-bit signed (findings section 5).
pub const OFF24: std::ops::RangeInclusive<i64> = -(1 << 23)..=(1 << 23) - 1;

/// The resolved address of an access.
#[derive(Clone, Debug)]
pub enum Address {
    /// A register (32- or 64-bit PTX register) plus byte offset; `name` is the register's
    /// scoped name (for [`crate::lower::mem::facts`]).
    Reg {
        /// The register.
        reg: RegRef,
        /// Byte offset.
        offset: i64,
        /// Scoped PTX name.
        name: String,
    },
    /// A named variable plus byte offset.
    Var {
        /// Where the variable lives.
        loc: VarLoc,
        /// Byte offset.
        offset: i64,
        /// The variable's (scoped) name.
        name: String,
    },
    /// An absolute address `[imm]`.
    Abs(i64),
}

impl Lowerer<'_> {
    /// Resolves an address operand `[base+off]` to a register, variable or absolute address.
    pub fn address(&mut self, op: &Operand) -> LResult<Address> {
        let Operand::Address { base, offset, .. } = op else {
            return self.error(op.span(), "expected an address");
        };
        match base {
            AddrBase::Imm(v) => match v.checked_add(*offset) {
                Some(a) => Ok(Address::Abs(a)),
                None => self.error(op.span(), format!("the address `{v}{offset:+}` overflows 64 bits")),
            },
            AddrBase::Name(n) => {
                if let Some(loc) = self.var(&n.name) {
                    return Ok(Address::Var { loc, offset: *offset, name: n.name.clone() });
                }
                let r = self.ptx_reg(n)?;
                let n_regs = if r.ty.bits() == 64 { 2 } else { 1 };
                Ok(Address::Reg { reg: RegRef::new(r.reg, n_regs), offset: *offset, name: self.scoped(&n.name) })
            }
        }
    }

    /// The byte offset of a variable in its space; `None` for register-held parameters,
    /// `.global` variables and a `.shared` variable [`crate::lower::mem::shared`] did not place.
    pub fn var_offset(&mut self, _name: &str, loc: VarLoc) -> Option<u32> {
        match loc {
            VarLoc::KernelParam(o) | VarLoc::Local(o) | VarLoc::Const(o) => Some(o),
            VarLoc::Shared(o) => (o != crate::lower::mem::shared::UNPLACED).then_some(o),
            VarLoc::ParamSlot(_) | VarLoc::Global => None,
        }
    }

    fn pair_of(&mut self, r: RegRef) -> RegRef {
        if r.n == 2 {
            return r;
        }
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::reg(r), Src::rz()]));
        RegRef::new(t, 2)
    }

    /// `base + offset` as a new pair (64-bit add of a constant, `IADD32I.CC`/`.X`).
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
    pub fn global_addr(&mut self, reg: RegRef, offset: i64, at: crate::ptx::ast::Span) -> LResult<(RegRef, i32)> {
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
    pub fn generic_addr(&mut self, base: RegRef, offset: i64) -> (RegRef, Reg) {
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

    /// `[Ra + off]` or `[off]` in a 32-bit window (shared, local), with the offset in the
    /// 24-bit field.
    pub fn window_addr(&mut self, a: &Address, at: crate::ptx::ast::Span) -> LResult<(RegRef, i32)> {
        let (base, off) = match *a {
            Address::Reg { reg, offset, .. } => (reg.part(0), offset),
            Address::Abs(v) => (RegRef::rz(1), v),
            Address::Var { loc, offset, ref name } => {
                let Some(o) = self.var_offset(name, loc) else {
                    return self.error(at, "unsupported address");
                };
                if let VarLoc::Local(_) = loc {
                    self.uses_frame = true;
                    (RegRef::new(Reg::R(1), 1), self.var_plus(o, offset, at)?)
                } else {
                    (RegRef::rz(1), self.var_plus(o, offset, at)?)
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

    /// A variable's window offset `o` plus the operand's byte offset (PTX input, any
    /// `i64`): an error where that overflows, which no window holds anyway.
    fn var_plus(&mut self, o: u32, offset: i64, at: crate::ptx::ast::Span) -> LResult<i64> {
        match i64::from(o).checked_add(offset) {
            Some(x) => Ok(x),
            None => self.error(at, format!("the address offset {offset} overflows 64 bits")),
        }
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
            VarLoc::Shared(o) if o != crate::lower::mem::shared::UNPLACED => self.imm_reg(o),
            VarLoc::Shared(_) => {
                return self.error(at, format!("internal error: shared variable `{name}` was not laid out"));
            }
            VarLoc::Const(o) => self.imm_reg(o),
            // Kernel parameters are laid out from `PARAM_BASE` (`lower::layout_params`).
            VarLoc::KernelParam(o) => match o.checked_sub(crate::lower::PARAM_BASE) {
                Some(x) => self.imm_reg(x),
                None => return self.error(at, format!("internal error: parameter `{name}` below c[0x0][0x140]")),
            },
            VarLoc::ParamSlot(_) => {
                return self.error(at, "taking the address of a call parameter is not supported");
            }
            VarLoc::Global => return Ok(self.global_var_base(name)),
        };
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, Src::rz()]));
        Ok(RegRef::new(t, 2))
    }

    /// The 64-bit address of module `.global` variable `name` in a register pair, as
    /// ptxas 11.8 materializes it: `MOV32I Rlo, 32@lo(name)` and `MOV32I Rhi, 32@hi(name)`,
    /// immediates the loader patches (R_CUDA_ABS32_LO_20/HI_20, `sm50-encoding-and-cubin.md`
    /// §4.6); offsets stay in the memory instruction (`LDG.E R4, [R4+0x8]` for `[table+8]`,
    /// `docs/cubin.md`). One pair per variable and block: later uses in the block reuse it,
    /// as ptxas reuses one pair for every access of a variable.
    pub fn global_var_base(&mut self, name: &str) -> RegRef {
        let key = (self.cur, name.to_string());
        if let Some(r) = self.global_bases.get(&key) {
            return *r;
        }
        let id = self.f.symbol(name);
        let (lo, hi) = (self.tmp(1), self.tmp(1));
        self.op(Op::Mov32i, Dst::reg(lo, 1), vec![Src::sym(id, SymPart::Lo)]);
        self.op(Op::Mov32i, Dst::reg(hi, 1), vec![Src::sym(id, SymPart::Hi)]);
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::r32(lo), Src::r32(hi)]));
        let r = RegRef::new(t, 2);
        self.global_bases.insert(key, r);
        r
    }

    /// An access to a module `.global` variable as a register access: `[var+off]` becomes
    /// `[pair+off]` with the variable's address in `pair` ([`Self::global_var_base`]).
    /// Other addresses are returned as they are.
    pub fn global_var_as_reg(&mut self, a: Address) -> Address {
        match a {
            Address::Var { loc: VarLoc::Global, offset, name } => {
                let reg = self.global_var_base(&name);
                Address::Reg { reg, offset, name }
            }
            a => a,
        }
    }

    /// Lowers `cvta` (PTX ISA 9.7.9.19) with the window arithmetic of findings section 4.
    pub fn lower_cvta(&mut self, i: &Instruction, c: &Cvta) -> LResult<()> {
        let [Operand::Name { name: dname, .. }, src] = i.operands.as_slice() else {
            return self.error(i.span, "`cvta` takes `d, a` with a register `d`");
        };
        let d = self.ptx_reg(dname)?;
        if c.ty.bits() != 64 {
            return self.error(i.opcode.span, "32-bit `cvta` is not supported: ptx2sass needs `.address_size 64`");
        }
        let a: RegRef = match src {
            Operand::Name { name, .. } => match self.var(&name.name) {
                Some(loc) => self.var_address(&name.name, loc, name.span)?,
                None => {
                    let r = self.ptx_reg(name)?;
                    self.pair_of(RegRef::new(r.reg, if r.ty.bits() == 64 { 2 } else { 1 }))
                }
            },
            Operand::VarPlus { name, offset, .. } => match self.var(&name.name) {
                Some(loc) => {
                    let a = self.var_address(&name.name, loc, name.span)?;
                    self.add64_imm(a, *offset)
                }
                None => return self.error(name.span, format!("`{}` is not a variable", name.name)),
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

impl Lowerer<'_> {
    /// Lowers `isspacep.space p, a` (PTX ISA 9.7.9.20) with the window tests of ptxas
    /// 11.8 (findings section 4): `.shared` is `(lo & 0xff000000) == c[0x0][0x0] && hi ==
    /// 0` (`LOP32I.AND`, `ISETP.NE.U32`, `ISETP.EQ.U32 ..., RZ, c[0x0][0x14c], !P`),
    /// `.local` the same with `c[0x0][0x4]`, `.global` neither window. `.const` is false:
    /// ptx2sass maps no constant window into the generic space (`cvta.const` is not
    /// supported), while ptxas tests one at `c[0x0][0xd0]`. `.param` needs sm_70 (ptxas:
    /// "cvta/isspacep with .param state space requires .target sm_70").
    pub fn lower_isspacep(&mut self, i: &Instruction) -> LResult<()> {
        use crate::sass::op::{BoolOp, Cmp};
        let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
        let space = ["global", "shared", "local", "const", "param"]
            .into_iter()
            .find(|s| words.iter().any(|w| w.trim_start_matches('.').split("::").next() == Some(*s)));
        let Some(space) = space else {
            return self.error(i.opcode.span, "`isspacep` needs a state space");
        };
        if space == "param" {
            return self.error(i.opcode.span, "`isspacep.param` requires sm_70 or later (ptxas rejects it for sm_50)");
        }
        let [dop, aop] = i.operands.as_slice() else {
            return self.error(i.span, "`isspacep` takes `p, a`");
        };
        let d = self.dst_reg(dop)?;
        let v = self.val(aop, crate::ptx::types::ScalarType::U64)?;
        let a = self.pair_reg(v);
        let set = |c: Cmp, bop: BoolOp| Op::Isetp { cmp: c, u32: true, x: false, bop };
        if space == "const" {
            // False: `RZ != RZ`.
            self.emit(Instr::new(
                set(Cmp::Ne, BoolOp::And),
                vec![Dst::Pred(d.reg), Dst::Pred(crate::sass::instr::PT)],
                vec![Src::rz(), Src::rz(), Src::pt()],
            ));
            return Ok(());
        }
        let t = self.tmp(1);
        self.op(Op::Lop32i(LogicOp::And), Dst::reg(t, 1), vec![Src::reg(a.part(0)), Src::imm(0xff00_0000)]);
        let window = |k: i32| Src::cbuf(0, k, 1);
        let (op, b, c) = match space {
            "shared" | "local" => {
                let w = if space == "shared" { 0 } else { 4 };
                let p = self.isetp(set(Cmp::Eq, BoolOp::And), Src::r32(t), window(w), Src::pt());
                (set(Cmp::Eq, BoolOp::And), Src::rz(), Src::pred(p, false))
            }
            _ => {
                let s = self.isetp(set(Cmp::Eq, BoolOp::And), Src::r32(t), window(0), Src::pt());
                let w = self.isetp(set(Cmp::Eq, BoolOp::Or), Src::r32(t), window(4), Src::pred(s, false));
                (set(Cmp::Ne, BoolOp::Or), Src::rz(), Src::pred(w, true))
            }
        };
        self.emit(Instr::new(
            op,
            vec![Dst::Pred(d.reg), Dst::Pred(crate::sass::instr::PT)],
            vec![Src::reg(a.part(1)), b, c],
        ));
        Ok(())
    }
}
