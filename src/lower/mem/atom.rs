//! `atom` and `red` (PTX ISA 9.7.13.5, 9.7.13.6) as ptxas 11.8 lowers them for sm_50
//! (observations in `sass::sync`):
//!
//! * `.global`: `ATOM.E.op.type Rd, [Ra+imm], Rb` (`RED.E.op.type [Ra+imm], Rb` for `red`,
//!   and for an `atom` whose result is the sink `_`); `cas` passes `{compare, new}` in
//!   consecutive registers (`ATOM.E.CAS R0, [R4], R6, R7`; `.CAS.64 R26, [R28], R8, R10`);
//! * `.shared`: `ATOMS.op Rd, [Ra+imm], Rb` (`red.shared.add` is `ATOMS.ADD RZ, ...`);
//!   ATOMS has no f32 add and no 64-bit operation other than CAS, so ptxas loops:
//!   `LDS old; loop: new = old op b; r = ATOMS.CAS [a], old, new; if r != old { old = r;
//!   retry }` (`atom.shared.add.f32` → `LDS.U.32`, `FADD`, `ATOMS.CAS`, `ISETP.EQ.U32`,
//!   `@!P0 BRA`; `atom.shared.add.u64` → `LDS.U.64`, `IADD`/`IADD.X`, `ATOMS.CAS.64`);
//! * generic: ptxas tests the shared window (`LEA RZ.CC, Ra, RZ; LEA.HI.X P1, RZ, Ra, RZ,
//!   Ra+1`) and branches: `@!P1` → `LOP32I.AND Ra, Ra, 0xffffff; ATOMS`, else `ATOM.E`.
//!
//! ptxas also rewrites `atom.add` on a warp-uniform address into one atomic per warp
//! (VOTE/SHFL prefix sums); ptx2sass does not (one atomic per thread, same results).
//! `.sem` and `.scope` (which ptxas 11.8 rejects below sm_70 / sm_60) are accepted with an
//! emulation warning and lowered conservatively: `.release`/`.acq_rel`
//! put a `MEMBAR` of the scope's level before the atomic, `.acquire`/`.acq_rel` one after
//! (`.cta` → `MEMBAR.CTA`, `.gpu`/default → `MEMBAR.GL`, `.sys` → `MEMBAR.SYS`), the
//! fences `lower::mem::ldst` uses for `ld.acquire`/`st.release`; `.relaxed` needs none (every
//! SPA 5.0 atomic is performed at L2 / in shared memory, coherent for all scopes).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::diag::Diag;
use crate::lower::ctx::{LResult, Lowerer, VarLoc};
use crate::lower::mem::addr::Address;
use crate::lower::mem::ldst::Space;
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src};
use crate::sass::op::{AtomMods, AtomOp, AtomType, BoolOp, Cmp, FMods, LogicOp, MemMods, MemSize, MembarLevel, Op};

/// What the modifier words of an `atom`/`red` say.
struct AtomForm {
    op: AtomOp,
    ty: ScalarType,
    space: Option<Space>,
    before: Option<MembarLevel>,
    after: Option<MembarLevel>,
}

impl Lowerer<'_> {
    fn atom_form(&mut self, i: &Instruction) -> LResult<AtomForm> {
        let name = i.opcode.name.as_str();
        let (mut op, mut ty, mut space, mut sem, mut level) = (None, None, None, None, MembarLevel::Gl);
        for m in &i.mods {
            let w = m.text.as_str();
            let op_of = match w {
                ".add" => Some(AtomOp::Add),
                ".min" => Some(AtomOp::Min),
                ".max" => Some(AtomOp::Max),
                ".inc" => Some(AtomOp::Inc),
                ".dec" => Some(AtomOp::Dec),
                ".and" => Some(AtomOp::And),
                ".or" => Some(AtomOp::Or),
                ".xor" => Some(AtomOp::Xor),
                ".exch" => Some(AtomOp::Exch),
                ".cas" => Some(AtomOp::Cas),
                _ => None,
            };
            let ty_of = match w {
                ".u32" => Some(ScalarType::U32),
                ".s32" => Some(ScalarType::S32),
                ".u64" => Some(ScalarType::U64),
                ".s64" => Some(ScalarType::S64),
                ".b32" => Some(ScalarType::B32),
                ".b64" => Some(ScalarType::B64),
                ".f32" => Some(ScalarType::F32),
                _ => None,
            };
            if let Some(o) = op_of {
                op = Some(o);
            } else if let Some(t) = ty_of {
                ty = Some(t);
            } else {
                match w {
                    ".global" => space = Some(Space::Global),
                    ".shared" | ".shared::cta" => space = Some(Space::Shared),
                    ".relaxed" | ".acquire" | ".release" | ".acq_rel" => sem = Some(w),
                    ".cta" => level = MembarLevel::Cta,
                    ".gpu" => level = MembarLevel::Gl,
                    ".sys" => level = MembarLevel::Sys,
                    _ => {
                        return self.fail(
                            Diag::error(m.span, format!("`{name}{w}` is not supported by ptx2sass"))
                                .label("unsupported qualifier")
                                .note("supported: .global .shared, .relaxed/.acquire/.release/.acq_rel, .cta/.gpu/.sys, .add .min .max .inc .dec .and .or .xor .exch .cas, .u32 .s32 .u64 .s64 .b32 .b64 .f32"),
                        );
                    }
                }
            }
        }
        let (Some(op), Some(ty)) = (op, ty) else {
            return self.error(i.opcode.span, format!("`{name}` needs an operation and a type"));
        };
        let ok = match op {
            AtomOp::Add => matches!(ty, ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::F32),
            AtomOp::Min | AtomOp::Max => {
                matches!(ty, ScalarType::U32 | ScalarType::S32 | ScalarType::U64 | ScalarType::S64)
            }
            AtomOp::Inc | AtomOp::Dec => ty == ScalarType::U32,
            AtomOp::And | AtomOp::Or | AtomOp::Xor | AtomOp::Exch | AtomOp::Cas => {
                matches!(ty, ScalarType::B32 | ScalarType::B64)
            }
        };
        if !ok {
            return self.error(
                i.opcode.span,
                format!(
                    "`{}` has no SPA 5.0 form: `{}` does not take `{}` (PTX ISA 9.7.13.5)",
                    crate::ptx::check::instr_text(i),
                    op.suffix().to_lowercase(),
                    ty
                ),
            );
        }
        if op == AtomOp::Cas && name == "red" {
            return self.error(i.opcode.span, "`red` has no `.cas` (PTX ISA 9.7.13.6)");
        }
        // ptxas 11.8 rejects these for sm_50 ("Feature '.acq_rel' requires .target sm_70",
        // "scopes on atomic operations require sm_60"): an emulation, reported as such.
        if sem.is_some() || i.mods.iter().any(|m| matches!(m.text.as_str(), ".cta" | ".gpu" | ".sys")) {
            let span = i.opcode.span.to(i.mods.last().map_or(i.opcode.span, |m| m.span));
            let d = if self.deny_emulation { Diag::error(span, "") } else { Diag::warning(span, "") };
            self.diags.push(Diag {
                message: format!(
                    "`{}` emulated on SPA 5.0: memory order and scope by MEMBARs",
                    crate::ptx::check::instr_text(i)
                ),
                ..d.label("ptxas rejects `.sem`/`.scope` on atomics for sm_50")
                    .note("pass `--deny-emulation` to make this an error")
            });
            if self.deny_emulation {
                return Err(crate::lower::ctx::Failed);
            }
        }
        let (before, after) = match sem {
            Some(".release") => (Some(level), None),
            Some(".acquire") => (None, Some(level)),
            Some(".acq_rel") => (Some(level), Some(level)),
            _ => (None, None),
        };
        Ok(AtomForm { op, ty, space, before, after })
    }

    /// Lowers `atom` (`is_atom`) or `red`.
    pub fn lower_atom(&mut self, i: &Instruction, is_atom: bool) -> LResult<()> {
        let f = self.atom_form(i)?;
        // `atom d, [a], b(, c)` / `red [a], b`: the operands after the destination.
        let (dst_op, ops) = match (is_atom, i.operands.split_first()) {
            (true, Some((d, rest))) => (Some(d), rest),
            _ => (None, i.operands.as_slice()),
        };
        let (addr_op, b_op, c_op) = match (f.op == AtomOp::Cas, ops) {
            (false, [a, b]) => (a, b, None),
            (true, [a, b, c]) => (a, b, Some(c)),
            (cas, _) => {
                let n_ops = match (is_atom, cas) {
                    (false, false) => 2,
                    (true, true) => 4,
                    _ => 3,
                };
                return self.error(i.span, format!("`{}` takes {n_ops} operands", i.opcode.name));
            }
        };
        let dst = match dst_op {
            Some(Operand::Name { name, .. }) if name.name == "_" => None,
            Some(d) => Some(self.dst_reg(d)?),
            None => None,
        };
        let addr = self.address(addr_op)?;
        let space = match (f.space, &addr) {
            (Some(s), _) => s,
            (None, Address::Var { loc: VarLoc::Shared(_), .. }) => Space::Shared,
            (None, Address::Var { loc: VarLoc::Global, .. }) => Space::Global,
            (None, Address::Reg { name, .. }) => match self.facts.get(name).space {
                Some(Space::Global) => Space::Global,
                Some(Space::Shared) => Space::Shared,
                _ => Space::Generic,
            },
            (None, _) => Space::Generic,
        };
        let regs = if f.ty.bits() == 64 { 2u8 } else { 1 };
        let b = self.val(b_op, f.ty)?;
        let b = if regs == 2 { self.pair(b) } else { self.in_reg(b.lo) };
        let c = match c_op {
            Some(c) => {
                let c = self.val(c, f.ty)?;
                Some(if regs == 2 { self.pair(c) } else { self.in_reg(c.lo) })
            }
            None => None,
        };
        let aty = match (f.ty, f.op) {
            (ScalarType::F32, _) => AtomType::F32,
            (ScalarType::S32, AtomOp::Min | AtomOp::Max) => AtomType::S32,
            (ScalarType::S64, AtomOp::Min | AtomOp::Max) => AtomType::S64,
            (t, _) if t.bits() == 64 => AtomType::U64,
            _ => AtomType::U32,
        };
        let mods = AtomMods { op: f.op, ty: aty, e: true };
        let data = self.atom_data(b, c, regs);
        let out = if dst.is_some() { Some(self.tmp(regs)) } else { None };
        if let Some(l) = f.before {
            self.emit(Instr::new(Op::Membar(l), vec![], vec![]));
        }
        let at = addr_op.span();
        let addr = self.global_var_as_reg(addr);
        match space {
            Space::Global => {
                let Address::Reg { reg, offset, .. } = addr else {
                    return self.error(at, "a `.global` atomic needs a register address");
                };
                let (base, off) = self.global_addr(reg, offset, at)?;
                self.atom_global(mods, out, base, off, data);
            }
            Space::Shared => {
                let (base, off) = self.window_addr(&addr, at)?;
                self.atom_shared(mods, out, base, off, b, c, regs);
            }
            Space::Generic => {
                let Address::Reg { reg, offset, .. } = addr else {
                    return self.error(at, "unsupported generic atomic address");
                };
                if reg.n != 2 {
                    self.global_addr(reg, offset, at)?;
                }
                // ptxas: shared-window test, then ATOMS or ATOM.E.
                let (pair, plg) = self.generic_addr(reg, offset);
                let shared_blk = self.f.new_block(String::new());
                let join = self.f.new_block(String::new());
                self.branch_if(plg, true, shared_blk);
                self.atom_global(mods, out, pair, 0, data);
                self.jump(join);
                self.fallthrough_to(shared_blk);
                let lo = self.tmp(1);
                self.op(Op::Lop32i(LogicOp::And), Dst::reg(lo, 1), vec![Src::reg(pair.part(0)), Src::imm(0x00ff_ffff)]);
                self.atom_shared(mods, out, RegRef::new(lo, 1), 0, b, c, regs);
                self.fallthrough_to(join);
            }
            _ => return self.error(at, format!("`{}` is not allowed on this state space", i.opcode.name)),
        }
        if let Some(l) = f.after {
            self.emit(Instr::new(Op::Membar(l), vec![], vec![]));
        }
        if let (Some(d), Some(o)) = (dst, out) {
            self.write_ptx(d, Src::reg(RegRef::new(o, regs)), f.ty)?;
        }
        Ok(())
    }

    /// The data operands: `[b]`, or for CAS one joined register (pair or quad) holding
    /// `{compare, new}`, so that allocation places them consecutively as the encoding
    /// requires; the printer shows it as the two operands nvdisasm prints.
    #[allow(clippy::expect_used)] // 64-bit operands come from `pair`, always a register pair
    fn atom_data(&mut self, b: Src, c: Option<Src>, regs: u8) -> Vec<Src> {
        let Some(c) = c else { return vec![b] };
        // A pair for 32-bit operands, a quad for 64-bit ones.
        let wide = if regs == 1 { 2 } else { 4 };
        let t = self.tmp(wide);
        let parts = if regs == 1 {
            vec![b, c]
        } else {
            let (b, c) = (b.as_reg().expect("pair"), c.as_reg().expect("pair"));
            vec![Src::reg(b.part(0)), Src::reg(b.part(1)), Src::reg(c.part(0)), Src::reg(c.part(1))]
        };
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, wide)], parts));
        vec![Src::reg(RegRef::new(t, wide))]
    }

    /// `ATOM.E` (result wanted) or `RED.E` at `[base+off]`.
    fn atom_global(&mut self, mods: AtomMods, out: Option<Reg>, base: RegRef, off: i32, data: Vec<Src>) {
        let a = Src::addr(base, off);
        let srcs = [vec![a], data].concat();
        match out {
            Some(o) => {
                let n = mods.ty.regs();
                self.emit(Instr::new(Op::Atom(mods), vec![Dst::reg(o, n)], srcs));
            }
            // RED has no EXCH or CAS (its operation field holds ADD..XOR only: nvdisasm 11.8;
            // ptxas 11.8 writes `ATOM.E.EXCH RZ, ...` for an unused exchange result).
            None if matches!(mods.op, AtomOp::Cas | AtomOp::Exch) => {
                let n = mods.ty.regs();
                self.emit(Instr::new(Op::Atom(mods), vec![Dst::Reg(RegRef::rz(n))], srcs));
            }
            None => self.emit(Instr::new(Op::Red(mods), vec![], srcs)),
        }
    }

    /// `ATOMS` at the shared offset `[base+off]`, or the CAS loop for what ATOMS lacks.
    #[allow(clippy::too_many_arguments)]
    fn atom_shared(
        &mut self,
        mods: AtomMods,
        out: Option<Reg>,
        base: RegRef,
        off: i32,
        b: Src,
        c: Option<Src>,
        regs: u8,
    ) {
        let mods = AtomMods { e: false, ..mods };
        let a = Src::addr(base, off);
        let native = mods.op == AtomOp::Cas || (regs == 1 && mods.ty != AtomType::F32);
        if native {
            let data = self.atom_data(b, c, regs);
            let d = match out {
                Some(o) => Dst::reg(o, regs),
                None => Dst::Reg(RegRef::rz(regs)),
            };
            self.emit(Instr::new(Op::Atoms(mods), vec![d], [vec![a], data].concat()));
            return;
        }
        // CAS loop (ptxas 11.8: `atom.shared.add.f32`, `atom.shared.add.u64`).
        let size = if regs == 2 { MemSize::B64 } else { MemSize::B32 };
        let old = self.tmp(regs);
        let lds = MemMods { keep: true, ..MemMods::new(size, false) };
        self.emit(Instr::new(Op::Lds(lds), vec![Dst::reg(old, regs)], vec![a]));
        let head = self.f.new_block(String::new());
        self.fallthrough_to(head);
        let oldr = RegRef::new(old, regs);
        let new = self.atom_apply(mods, oldr, b);
        let data = self.atom_data(Src::reg(oldr), Some(new), regs);
        let r = self.tmp(regs);
        let cas = AtomMods { op: AtomOp::Cas, ty: if regs == 2 { AtomType::U64 } else { AtomType::U32 }, e: false };
        self.emit(Instr::new(Op::Atoms(cas), vec![Dst::reg(r, regs)], [vec![a], data].concat()));
        let rr = RegRef::new(r, regs);
        let p = if regs == 1 {
            let ne = Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And };
            self.isetp(ne, Src::reg(rr), Src::reg(oldr), Src::pt())
        } else {
            let r64 = (Src::reg(rr.part(0)), Src::reg(rr.part(1)));
            self.cmp64(Cmp::Ne, true, r64, (Src::reg(oldr.part(0)), Src::reg(oldr.part(1))))
        };
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(old, regs)], vec![Src::reg(rr)]));
        let exit = self.f.new_block(String::new());
        self.branch_if(p, false, head);
        self.fallthrough_to(exit);
        if let Some(o) = out {
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(o, regs)], vec![Src::reg(oldr)]));
        }
    }

    /// `old op b` for the CAS loop (the operations ATOMS lacks: f32 add, 64-bit ones).
    #[allow(clippy::expect_used)] // 64-bit operands come from `pair`, always a register pair
    fn atom_apply(&mut self, mods: AtomMods, old: RegRef, b: Src) -> Src {
        if mods.ty == AtomType::F32 {
            // FADD.FTZ: PTX `atom.add.f32` flushes subnormal inputs and results.
            let t = self.tmp(1);
            let fm = FMods { ftz: true, ..FMods::default() };
            self.op(Op::Fadd(fm), Dst::reg(t, 1), vec![Src::reg(old), b]);
            return Src::r32(t);
        }
        let x = (Src::reg(old.part(0)), Src::reg(old.part(1)));
        let br = b.as_reg().expect("64-bit operand in a pair");
        let y = (Src::reg(br.part(0)), Src::reg(br.part(1)));
        let (lo, hi) = match mods.op {
            AtomOp::Add => self.add64(x, y),
            AtomOp::And | AtomOp::Or | AtomOp::Xor => {
                let l = match mods.op {
                    AtomOp::And => LogicOp::And,
                    AtomOp::Or => LogicOp::Or,
                    _ => LogicOp::Xor,
                };
                (self.emit1(Op::Lop(l), vec![x.0, y.0]), self.emit1(Op::Lop(l), vec![x.1, y.1]))
            }
            AtomOp::Exch => y,
            AtomOp::Min | AtomOp::Max => {
                let unsigned = mods.ty != AtomType::S64;
                let cmp = if mods.op == AtomOp::Min { Cmp::Lt } else { Cmp::Gt };
                let p = self.cmp64(cmp, unsigned, y, x);
                let ps = Src::pred(p, false);
                (self.sel(ps, y.0, x.0), self.sel(ps, y.1, x.1))
            }
            AtomOp::Inc | AtomOp::Dec | AtomOp::Cas => unreachable!("32-bit only / native"),
        };
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, hi]));
        Src::reg(RegRef::new(t, 2))
    }
}
