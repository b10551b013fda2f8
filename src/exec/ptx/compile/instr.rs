//! Instructions into [`Op`]s: operands resolved to slots, immediates and addresses, the
//! arithmetic families, calls (direct and indirect) with their parameter copies.

// The instructions come from the user's PTX (issue 20, docs/fuzzing.md "No-panic
// discipline"): a malformed one is an error, never a panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::*;
use crate::exec::ptx::arith::fp;
use crate::exec::ptx::eval::widened;
use crate::ptx::check::instr_text;
use crate::ptx::types::{ScalarType, StateSpace};

impl<'m> FnCx<'_, 'm> {
    pub(super) fn instr(&mut self, i: &'m Instruction) {
        let text = instr_text(i);
        let guard = match &i.guard {
            None => Ok(None),
            Some(g) => match self.reg(&g.reg, None) {
                Ok(Some(d)) => Ok(Some((d.slot, g.negated))),
                _ => Err(format!("guard `{}`", g.reg.name)),
            },
        };
        let op = guard
            .clone()
            .and_then(|_| self.op(i, &text))
            .unwrap_or_else(|why| Op::Unsupported(if why.starts_with(&text) { why } else { format!("{text}: {why}") }));
        if let Op::Bra(_) = op
            && let Some(Operand::Name { name, .. }) = i.operands.first()
        {
            self.fixups.push((self.cx.insts.len(), self.label(&name.name), name.name.clone()));
        }
        self.push(guard.unwrap_or(None), op, text);
    }

    pub(super) fn operand(i: &Instruction, k: usize) -> R<&Operand> {
        i.operands.get(k).ok_or_else(|| format!("missing operand {}", k.saturating_add(1)))
    }

    pub(super) fn compute(
        &self,
        func: Func,
        ty: ScalarType,
        dst_ty: ScalarType,
        i: &Instruction,
        tys: &[ScalarType],
    ) -> R<Op> {
        let dst = self.dst(Self::operand(i, 0)?)?;
        let mut srcs = vec![];
        for (k, t) in tys.iter().enumerate() {
            srcs.push((self.src(Self::operand(i, k.saturating_add(1))?, *t)?, *t));
        }
        Ok(Op::Compute { func, ty, dst, dst_ty, srcs })
    }

    pub(super) fn op(&mut self, i: &'m Instruction, text: &str) -> R<Op> {
        let o = |k| Self::operand(i, k);
        match &i.kind {
            InstrKind::Ld(l) | InstrKind::St(l) => {
                if l.ty.bits() > 128 || l.ty == ScalarType::Pred {
                    return Err(format!("{} elements", l.ty));
                }
                let space = space_of(l.space)?;
                if let InstrKind::Ld(_) = i.kind {
                    let dsts = self.dsts(o(0)?)?;
                    Ok(Op::Ld { space, ty: l.ty, dsts, addr: self.addr(o(1)?, space)? })
                } else {
                    let srcs = self.srcs(o(1)?, l.ty)?;
                    Ok(Op::St { space, ty: l.ty, srcs, addr: self.addr(o(0)?, space)? })
                }
            }
            InstrKind::Mov(ty) => {
                if ty.bits() > 128 {
                    return Err(format!("{ty} registers"));
                }
                match (o(0)?, o(1)?) {
                    (Operand::Vector(v, _), s) => {
                        let elem_bits = ty.bits().checked_div(v.len() as u32).ok_or("an empty vector")?;
                        Ok(Op::Unpack { dsts: self.dsts(o(0)?)?, elem_bits, src: self.src(s, *ty)? })
                    }
                    (d, Operand::Vector(v, _)) => {
                        let elem_bits = ty.bits().checked_div(v.len() as u32).ok_or("an empty vector")?;
                        let ety = match elem_bits {
                            8 => ScalarType::B8,
                            16 => ScalarType::B16,
                            32 => ScalarType::B32,
                            64 => ScalarType::B64,
                            _ => return Err("packing into this width".into()),
                        };
                        let dst = self.dst(d)?.ok_or("a sink destination")?;
                        Ok(Op::Pack { dst, elem_bits, srcs: self.srcs(o(1)?, ety)? })
                    }
                    (d, s) if ty.bits() > 64 => {
                        let dst = self.dst(d)?.ok_or("a sink destination")?;
                        Ok(Op::Pack { dst, elem_bits: 128, srcs: vec![self.src(s, *ty)?] })
                    }
                    _ => self.compute(Func::Mov, *ty, *ty, i, &[*ty]),
                }
            }
            InstrKind::Cvta(c) => {
                let space = space_of(Some(c.space))?;
                if space == Space::Param {
                    return Err("cvta of the .param space".into());
                }
                Ok(Op::Cvta { to: c.to, space, dst: self.dst(o(0)?)?, bits: c.ty.bits(), src: self.src(o(1)?, c.ty)? })
            }
            InstrKind::Cvt(c) => self.compute(Func::Cvt(*c), c.dst, c.dst, i, &[c.src]),
            InstrKind::Arith(a) => self.arith(a, i),
            InstrKind::Setp(s) => {
                let (p, q) = match o(0)? {
                    Operand::PredPair(a, b, _) => (self.reg(a, None)?, self.reg(b, None)?),
                    d => (self.dst(d)?, None),
                };
                let c = match (s.bool_op, i.operands.get(3)) {
                    (Some(_), Some(c)) => Some(self.src(c, ScalarType::Pred)?),
                    (Some(_), None) => return Err("missing predicate operand".into()),
                    _ => None,
                };
                Ok(Op::Setp {
                    cmp: s.cmp,
                    bool_op: s.bool_op,
                    ftz: s.ftz,
                    ty: s.ty,
                    p,
                    q,
                    a: self.src(o(1)?, s.ty)?,
                    b: self.src(o(2)?, s.ty)?,
                    c,
                })
            }
            InstrKind::Selp(ty) => self.compute(Func::Selp, *ty, *ty, i, &[*ty, *ty, ScalarType::Pred]),
            InstrKind::Bra { .. } => match o(0)? {
                Operand::Name { .. } => Ok(Op::Bra(u32::MAX)),
                _ => Err("indirect branch".into()),
            },
            InstrKind::Ret => Ok(Op::Ret),
            InstrKind::Exit => Ok(Op::Exit),
            InstrKind::Bar(BarOp::WarpSync) => {
                // The lanes of `membermask` meet: a warp collective without a result, which
                // the scheduler runs once the warp's lanes reach it (see `warp`).
                let mask = Some(self.src(o(0)?, ScalarType::U32)?);
                Ok(Op::Warp(WarpOp::Vote { mode: VoteMode::Any, dst: None, a: Src::Imm(0), mask }))
            }
            InstrKind::Bar(BarOp::Red) => {
                use crate::exec::ptx::program::BarRed;
                let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
                let red = if words.contains(&".popc") {
                    BarRed::Popc
                } else if words.contains(&".and") {
                    BarRed::And
                } else if words.contains(&".or") {
                    BarRed::Or
                } else {
                    return Err("bar.red without .popc, .and or .or".into());
                };
                let (d, a, b, c) = match &i.operands[..] {
                    [d, a, c] => (d, a, None, c),
                    [d, a, b, c] => (d, a, Some(b), c),
                    _ => return Err("bar.red takes d, a{, b}, {!}c".into()),
                };
                let d = self.dst(d)?.ok_or("bar.red destination")?;
                let id = self.src(a, ScalarType::U32)?;
                let count = b.map(|b| self.src(b, ScalarType::U32)).transpose()?;
                let c = self.src(c, ScalarType::Pred)?;
                Ok(Op::Bar { id, count, arrive: false, red: Some((red, c, d)) })
            }
            InstrKind::Bar(b) => {
                let arrive = *b == BarOp::Arrive;
                let id = match i.operands.first() {
                    Some(op) => self.src(op, ScalarType::U32)?,
                    None => Src::Imm(0),
                };
                let count = i.operands.get(1).map(|c| self.src(c, ScalarType::U32)).transpose()?;
                if arrive && count.is_none() {
                    return Err("bar.arrive without a thread count".into());
                }
                Ok(Op::Bar { id, count, arrive, red: None })
            }
            InstrKind::Membar(_) => Ok(Op::Nop),
            InstrKind::Call => self.call(i),
            InstrKind::Bit { op, ty } => {
                let t = *ty;
                if !t.is_integer() || t.bits() < 32 || t.bits() > 64 {
                    return Err(format!("{t} operands"));
                }
                let u = ScalarType::U32;
                match op {
                    BitOp::Popc => self.compute(Func::Popc, t, u, i, &[t]),
                    BitOp::Clz => self.compute(Func::Clz, t, u, i, &[t]),
                    BitOp::Brev => self.compute(Func::Brev, t, t, i, &[t]),
                    BitOp::Bfind { shiftamt } => self.compute(Func::Bfind(*shiftamt), t, u, i, &[t]),
                    BitOp::Bfe => self.compute(Func::Bfe, t, t, i, &[t, u, u]),
                    BitOp::Bfi => self.compute(Func::Bfi, t, t, i, &[t, t, u, u]),
                }
            }
            InstrKind::Prmt(mode) => {
                let mode = mode.map(|m| match m {
                    PrmtMode::F4e => "f4e",
                    PrmtMode::B4e => "b4e",
                    PrmtMode::Rc8 => "rc8",
                    PrmtMode::Ecl => "ecl",
                    PrmtMode::Ecr => "ecr",
                    PrmtMode::Rc16 => "rc16",
                });
                let b = ScalarType::B32;
                self.compute(Func::Prmt(mode), b, b, i, &[b, b, b])
            }
            InstrKind::Shf { left, clamp } => {
                let b = ScalarType::B32;
                self.compute(Func::Shf(*left, *clamp), b, b, i, &[b, b, ScalarType::U32])
            }
            InstrKind::Testp { op, ty } => {
                let name = match op {
                    TestpOp::Finite => "finite",
                    TestpOp::Infinite => "infinite",
                    TestpOp::Number => "number",
                    TestpOp::NotANumber => "notanumber",
                    TestpOp::Normal => "normal",
                    TestpOp::Subnormal => "subnormal",
                };
                if fp::format(*ty).is_none() {
                    return Err(format!("testp on {ty}"));
                }
                self.compute(Func::Testp(name), *ty, ScalarType::Pred, i, &[*ty])
            }
            InstrKind::Copysign(ty) => {
                if fp::format(*ty).is_none() {
                    return Err(format!("copysign on {ty}"));
                }
                self.compute(Func::Copysign, *ty, *ty, i, &[*ty, *ty])
            }
            InstrKind::Other(name) => crate::exec::ptx::opcodes::other(self, i, name, text),
            InstrKind::Unclassified => Err("unclassified instruction".into()),
        }
    }

    pub(super) fn arith(&self, a: &Arith, i: &Instruction) -> R<Op> {
        use ArithOp::*;
        let ty = a.ty;
        if ty.is_float() {
            if fp::format(ty).is_none() && fp::packed(ty).is_none() {
                return Err(format!("{ty} arithmetic"));
            }
            let mods = fp::Mods { mode: fp::mode(a.rnd), ftz: a.ftz, sat: a.sat };
            let bin = |b| self.compute(Func::FBin(b, mods), ty, ty, i, &[ty, ty]);
            return match a.op {
                Add => bin(fp::Binary::Add),
                Sub => bin(fp::Binary::Sub),
                Mul => bin(fp::Binary::Mul),
                Div if a.approx => bin(fp::Binary::DivApprox),
                Div => bin(fp::Binary::Div),
                Min => bin(fp::Binary::Min),
                Max => bin(fp::Binary::Max),
                Mad | Fma => self.compute(Func::Fma(mods), ty, ty, i, &[ty, ty, ty]),
                Neg | Abs => self.compute(Func::FNegAbs(a.op == Neg, a.ftz), ty, ty, i, &[ty]),
                op => Err(format!("{op:?} on {ty}")),
            };
        }
        if ty.bits() > 64 {
            return Err(format!("{ty} arithmetic"));
        }
        let mode = a.mode.unwrap_or(IntMode::Lo);
        let wide = if mode == IntMode::Wide { widened(ty) } else { ty };
        match a.op {
            Add | Sub if a.cc || a.sat => {
                let f = Func::AddSub { sub: a.op == Sub, sat: a.sat, carry_in: false, carry_out: a.cc };
                self.compute(f, ty, ty, i, &[ty, ty])
            }
            Mul => self.compute(Func::Mul(mode), ty, wide, i, &[ty, ty]),
            Mad => {
                let f = Func::Mad { mode, sat: a.sat, carry_in: false, carry_out: a.cc };
                self.compute(f, ty, wide, i, &[ty, ty, wide])
            }
            Fma => Err(format!("fma on {ty}")),
            Addc | Subc => {
                let f = Func::AddSub { sub: a.op == Subc, sat: false, carry_in: true, carry_out: a.cc };
                self.compute(f, ty, ty, i, &[ty, ty])
            }
            Madc => {
                let f = Func::Mad { mode, sat: false, carry_in: true, carry_out: a.cc };
                self.compute(f, ty, ty, i, &[ty, ty, ty])
            }
            Mul24 | Mad24 if ty.bits() != 32 || a.sat => {
                Err(format!("{:?}{} on {ty}", a.op, if a.sat { ".sat" } else { "" }))
            }
            Mul24 => self.compute(Func::Mul24(mode == IntMode::Hi), ty, ty, i, &[ty, ty]),
            Mad24 => self.compute(Func::Mad24(mode == IntMode::Hi), ty, ty, i, &[ty, ty, ty]),
            Sad => self.compute(Func::Sad, ty, ty, i, &[ty, ty, ty]),
            Shl | Shr => self.compute(Func::Int(a.op), ty, ty, i, &[ty, ScalarType::U32]),
            Neg | Abs | Not | Cnot => self.compute(Func::Int(a.op), ty, ty, i, &[ty]),
            op => self.compute(Func::Int(op), ty, ty, i, &[ty, ty]),
        }
    }

    pub(super) fn call(&mut self, i: &'m Instruction) -> R<Op> {
        let ops = &i.operands;
        let (rets, k) = match ops.first() {
            Some(Operand::List(v, _)) => (v.as_slice(), 1),
            _ => (&[][..], 0),
        };
        let Some(Operand::Name { name, .. }) = ops.get(k) else { return Err("this call target".into()) };
        // k <= 1: the operand after the target, and what follows the arguments.
        let after = |n: usize| ops.get(k.saturating_add(n)..).unwrap_or_default();
        let (args, rest): (&[Operand], &[Operand]) = match ops.get(k.saturating_add(1)) {
            Some(Operand::List(v, _)) => (v, after(2)),
            _ => (&[], after(1)),
        };
        let Some(f) = self.cx.functions.get(name.name.as_str()).copied() else {
            return self.indirect_call(name, args, rets, rest);
        };
        let (a, r) = self.call_args(&f.params, &f.ret_params, args, rets, &name.name)?;
        if f.body.is_none() {
            return match Builtin::by_name(&name.name) {
                Some(func) => Ok(Op::Builtin { func, args: a, rets: r }),
                None => Err(format!("call of `{}`, which has no body", name.name)),
            };
        }
        let callee = self.cx.func_id(f);
        Ok(Op::Call { callee, args: a, rets: r })
    }

    /// `call (rets), %fptr, (args), proto;` with the signature of `.callprototype` `proto`.
    pub(super) fn indirect_call(
        &mut self,
        target: &Ident,
        args: &[Operand],
        rets: &[Operand],
        rest: &[Operand],
    ) -> R<Op> {
        let t = self.src(
            &Operand::Name { name: target.clone(), component: None, negated: false, span: target.span },
            ScalarType::U64,
        )?;
        let Some(Operand::Name { name: proto, .. }) = rest.first() else {
            return Err("an indirect call without a prototype".into());
        };
        let p = self.protos.get(&proto.name).cloned().ok_or_else(|| format!("prototype `{}`", proto.name))?;
        let (a, r) = self.call_args(&p.params, &p.ret_params, args, rets, &proto.name)?;
        Ok(Op::CallIndirect { target: t, args: a, rets: r })
    }

    /// The arguments and return destinations of a call of a function with `params` and
    /// `ret_params`.
    pub(super) fn call_args(
        &mut self,
        params: &[ParamDecl],
        ret_params: &[ParamDecl],
        args: &[Operand],
        rets: &[Operand],
        name: &str,
    ) -> R<(Vec<Arg>, Vec<Arg>)> {
        if params.iter().chain(ret_params).any(|p| p.space == StateSpace::Reg && p.ty.bits() > 64) {
            return Err(format!("call of `{name}`, which has a .reg parameter wider than 64 bits"));
        }
        if args.len() != params.len() || rets.len() != ret_params.len() {
            return Err(format!("call of `{name}` with the wrong number of arguments"));
        }
        let mut a = vec![];
        for (op, p) in args.iter().zip(params) {
            a.push(match op {
                Operand::Name { name, .. } => match self.lookup(&name.name) {
                    Some(Sym::Param(off)) => Arg::Param(off),
                    _ => Arg::Value(self.src(op, p.ty)?),
                },
                _ => Arg::Value(self.src(op, p.ty)?),
            });
        }
        let mut r = vec![];
        for op in rets {
            r.push(match op {
                Operand::Name { name, .. } => match self.lookup(&name.name) {
                    Some(Sym::Param(off)) => Arg::Param(off),
                    _ => Arg::Reg(self.dst(op)?.ok_or("a sink return")?),
                },
                _ => return Err("this return operand".into()),
            });
        }
        Ok((a, r))
    }
}
