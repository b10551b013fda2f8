//! `call` to a `.func` (PTX ISA 9.7.12.2): inlined, or a real call (`realcall.rs`) as the
//! inlining decision says (`callgraph.rs`).
//!
//! Inlining: arguments are `.param` variables the caller wrote with `st.param` (held in
//! register slots, `ctx::Lowerer::param_slots`) or plain registers for `.reg` parameters.
//! The callee's parameters are bound to the caller's slots, its return parameters to the
//! caller's return slots, its names get a unique prefix, and its `ret` jumps to the
//! instruction after the call. A recursive call (to a function being inlined on this
//! path) is a real call.

use crate::diag::Diag;
use crate::ir::{CallKind, VRegKind};
use crate::lower::ctx::{LResult, Lowerer, VarLoc};
use crate::ptx::ast::{self, Instruction, Operand};
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SymPart};
use crate::sass::op::{BoolOp, Op};
use std::collections::HashMap;

impl Lowerer<'_> {
    /// Binds one callee parameter to the caller's argument operand.
    fn bind_param(&mut self, callee_prefix: &str, p: &ast::ParamDecl, arg: &Operand) -> LResult<()> {
        let key = format!("{callee_prefix}{}", p.name.name);
        match arg {
            Operand::Name { name, .. } => match self.var(&name.name) {
                Some(VarLoc::ParamSlot(slot)) => {
                    self.vars.insert(key, VarLoc::ParamSlot(slot));
                    Ok(())
                }
                _ if p.space == StateSpace::Reg => {
                    let r = self.ptx_reg(name)?;
                    self.check_arg_type(name, r.ty, p)?;
                    let saved = std::mem::replace(&mut self.prefix, callee_prefix.to_string());
                    self.declare_reg(&p.name.name, None, p.ty);
                    let pid = ast::Ident { name: p.name.name.clone(), span: p.name.span };
                    let dst = self.ptx_reg(&pid);
                    self.prefix = saved;
                    let dst = dst?;
                    self.copy_reg(dst.reg, r.reg);
                    Ok(())
                }
                _ => {
                    // A register for a `.param` parameter: a slot holding its value.
                    let r = self.ptx_reg(name)?;
                    self.check_arg_type(name, r.ty, p)?;
                    let slot = self.next_param_slot_number();
                    self.slot_sizes.insert(slot, p.size());
                    self.var_align.insert(key.clone(), p.alignment());
                    self.vars.insert(key, VarLoc::ParamSlot(slot));
                    let n = (r.ty.bits() / 32).max(1) as u8;
                    let var = self.tmp(n);
                    self.emit(Instr::new(Op::Copy, vec![Dst::reg(var, n)], vec![Src::reg(RegRef::new(r.reg, n))]));
                    self.param_slots.insert((slot, 0), (var, r.ty));
                    Ok(())
                }
            },
            o => self.error(o.span(), "a call argument must be a `.param` variable or a register"),
        }
    }

    /// Lowers `call{.uni} (rets), func, (args);`: inlines `func` when the inlining
    /// decision says so ([`crate::lower::calls::callgraph`]), else calls it ([`Lowerer::real_call`]);
    /// `call (rets), %fptr, (args), proto;` calls through a register.
    pub fn lower_call(&mut self, i: &Instruction, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        // Operands: optional return list, target, optional argument list, optional
        // prototype (indirect calls).
        let mut ops = i.operands.iter();
        let mut rets: &[Operand] = &[];
        let mut first = ops.next();
        if let Some(Operand::List(v, _)) = first {
            rets = v;
            first = ops.next();
        }
        let Some(Operand::Name { name: fname, .. }) = first else {
            return self.error(i.span, "expected the called function or a register holding its address");
        };
        let mut rest: Vec<&Operand> = ops.collect();
        let args: &[Operand] = match rest.first() {
            Some(Operand::List(v, _)) => {
                rest.remove(0);
                v
            }
            _ => &[],
        };
        let Some(callee) = funcs.get(fname.name.as_str()).copied() else {
            return self.indirect_call(i, fname, rets, args, &rest);
        };
        if let Some(o) = rest.first() {
            return self.error(o.span(), "a direct call takes no prototype");
        }
        if callee.kind != ast::FuncKind::Func {
            return self.error(fname.span, format!("`{}` is a kernel; only `.func`s can be called", fname.name));
        }
        if callee.params.len() != args.len() || callee.ret_params.len() != rets.len() {
            return self.error(
                i.span,
                format!(
                    "`{}` takes {} arguments and {} return values",
                    fname.name,
                    callee.params.len(),
                    callee.ret_params.len()
                ),
            );
        }
        self.check_param_sizes(&fname.name, &callee.params, &callee.ret_params, args, rets)?;
        // The function itself, not an `.alias` naming it: the call graph, the symbol and the
        // recursion check know it by its own name.
        let cname = callee.name.name.as_str();
        let recursive = self.inline_stack.iter().any(|n| n == cname);
        let inline_body =
            callee.body.as_ref().filter(|_| !recursive && self.layout.calls.inline(self.layout.inline, cname));
        let Some(body) = inline_body else {
            if recursive && self.layout.calls.uses_shared.contains(cname) {
                return self.fail(
                    Diag::error(
                        fname.span,
                        format!("recursive call of `{}`, which uses `.shared` variables", fname.name),
                    )
                    .note("ptx2sass places shared variables per kernel, so such functions must be inlined"),
                );
            }
            let kind = if callee.body.is_some() { CallKind::Internal } else { CallKind::External };
            let id = self.f.symbol(cname);
            return self.real_call(
                i,
                kind,
                Src::sym(id, SymPart::Target),
                cname,
                &callee.params,
                &callee.ret_params,
                args,
                rets,
            );
        };
        // Names the inlined copy; one per call lowered, each also a new block, so the
        // count stays far below `u32::MAX` in any compilation that fits in memory.
        self.inline_count = self.inline_count.saturating_add(1);
        let callee_prefix = format!("{}::{}#{}::", self.prefix, fname.name, self.inline_count);
        for (p, a) in callee.params.iter().zip(args) {
            self.bind_param(&callee_prefix, p, a)?;
        }
        let mut reg_rets = vec![];
        for (p, r) in callee.ret_params.iter().zip(rets) {
            let Operand::Name { name, .. } = r else {
                return self.error(r.span(), "expected a return variable");
            };
            match self.var(&name.name) {
                Some(VarLoc::ParamSlot(slot)) => {
                    self.vars.insert(format!("{callee_prefix}{}", p.name.name), VarLoc::ParamSlot(slot));
                }
                _ => reg_rets.push((p.clone(), name.clone())),
            }
        }
        for (p, _) in &reg_rets {
            let saved = std::mem::replace(&mut self.prefix, callee_prefix.clone());
            self.declare_reg(&p.name.name, None, p.ty);
            self.prefix = saved;
        }
        let cont = self.f.new_block(String::new());
        let saved_prefix = std::mem::replace(&mut self.prefix, callee_prefix.clone());
        self.inline_stack.push(cname.to_string());
        self.return_targets.push(cont);
        let r = self.lower_block(body, funcs);
        self.return_targets.pop();
        self.inline_stack.pop();
        self.prefix = saved_prefix;
        self.origin = i.span;
        self.fallthrough_to(cont);
        r?;
        for (p, caller_reg) in reg_rets {
            let callee_id = ast::Ident { name: format!("{callee_prefix}{}", p.name.name), span: p.name.span };
            let saved = std::mem::take(&mut self.prefix);
            let src = self.ptx_reg(&callee_id);
            self.prefix = saved;
            let src = src?;
            let dst = self.ptx_reg(&caller_reg)?;
            self.check_arg_type(&caller_reg, dst.ty, &p)?;
            self.copy_reg(dst.reg, src.reg);
        }
        Ok(())
    }

    /// `call (rets), %fptr, (args), proto;`: a real call through the address in `%fptr`,
    /// with the signature of `.callprototype` `proto` (PTX ISA 9.7.12.2).
    fn indirect_call(
        &mut self,
        i: &Instruction,
        target: &ast::Ident,
        rets: &[Operand],
        args: &[Operand],
        rest: &[&Operand],
    ) -> LResult<()> {
        if self.lookup_reg_type(&self.scoped(&target.name)).is_none() {
            return self.error(target.span, format!("`{}` is neither a function nor a register", target.name));
        }
        let r = self.ptx_reg(target)?;
        if r.ty.bits() != 64 {
            return self.error(target.span, "an indirect call needs a 64-bit register holding the function's address");
        }
        let Some(Operand::Name { name: proto, .. }) = rest.first() else {
            return self.error(i.span, "an indirect call needs a `.callprototype` label as its last operand");
        };
        let Some(p) = self.protos.get(&self.scoped(&proto.name)).cloned() else {
            return self.fail(
                Diag::error(proto.span, format!("`{}` is not a `.callprototype` label", proto.name))
                    .note("declare `label: .callprototype (rets) _ (params);` before the call (PTX ISA 11.3.3)"),
            );
        };
        if p.params.len() != args.len() || p.ret_params.len() != rets.len() {
            return self.error(
                i.span,
                format!(
                    "prototype `{}` takes {} arguments and {} return values",
                    proto.name,
                    p.params.len(),
                    p.ret_params.len()
                ),
            );
        }
        self.check_param_sizes(&proto.name, &p.params, &p.ret_params, args, rets)?;
        let src = Src::reg(RegRef { reg: r.reg, comp: 0, n: 1 });
        self.real_call(i, CallKind::Indirect, src, &proto.name, &p.params, &p.ret_params, args, rets)
    }

    /// Checks that a register argument or return variable `name` of type `ty` can be
    /// bound to the formal parameter `p`: both predicates, or both of the same size (ptxas
    /// 11.8 accepts `.b32` for `.f32`, and rejects other pairs with "Type of argument does
    /// not match formal parameter").
    pub(in crate::lower) fn check_arg_type(
        &mut self,
        name: &ast::Ident,
        ty: ScalarType,
        p: &ast::ParamDecl,
    ) -> LResult<()> {
        let pred = |t: ScalarType| t == ScalarType::Pred;
        if pred(ty) == pred(p.ty) && ty.bits() == p.ty.bits() {
            return Ok(());
        }
        self.error(
            name.span,
            format!(
                "type of argument `{}` ({}) does not match formal parameter `{}` ({})",
                name.name,
                ty.as_str(),
                p.name.name,
                p.ty.as_str()
            ),
        )
    }

    /// Copies a `.reg` parameter or return value between caller and callee registers: a
    /// predicate as `mov.pred` is lowered (`PSETP.AND.AND d, PT, s, PT, PT`), any other
    /// register whole (1, 2 or 4 words, as its IR register is wide).
    fn copy_reg(&mut self, dst: Reg, src: Reg) {
        let kind = |r: Reg| match r {
            Reg::V(v) => self.f.vregs.get(v as usize).copied(),
            _ => None,
        };
        match kind(dst) {
            Some(VRegKind::Pred) => self.emit(Instr::new(
                Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And },
                vec![Dst::Pred(dst), Dst::Pred(PT)],
                vec![Src::pred(src, false), Src::pt(), Src::pt()],
            )),
            k => {
                let n = k.map_or(1, |k| k.width()).min(kind(src).map_or(1, |k| k.width()));
                self.emit(Instr::new(Op::Copy, vec![Dst::reg(dst, n)], vec![Src::reg(RegRef::new(src, n))]));
            }
        }
    }

    /// `ret` inside an inlined callee: jump to the instruction after the call.
    pub fn inline_return(&mut self, i: &Instruction) -> LResult<()> {
        let Some(&cont) = self.return_targets.last() else {
            return self.error(i.span, "`ret` outside a function");
        };
        match &i.guard {
            None => {
                self.jump(cont);
                let next = self.new_block(String::new());
                self.start_block(next);
            }
            Some(g) => {
                let p = self.ptx_reg(&g.reg)?;
                self.branch_if(p.reg, g.negated, cont);
            }
        }
        Ok(())
    }
}
