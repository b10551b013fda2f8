//! `call` to a `.func` (PTX ISA 9.7.12.2), lowered by inlining the callee.
//!
//! Arguments are `.param` variables the caller wrote with `st.param` (held in register
//! slots, `ctx::Lowerer::param_slots`) or plain registers for `.reg` parameters. The
//! callee's parameters are bound to the caller's slots, its return parameters to the
//! caller's return slots, its names get a unique prefix, and its `ret` jumps to the
//! instruction after the call. Recursion is rejected (it cannot be inlined).

use super::ctx::{LResult, Lowerer, VarLoc};
use crate::diag::Diag;
use crate::ir::VRegKind;
use crate::ptx::ast::{self, Instruction, Operand};
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src};
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
                _ => self.error(name.span, "a call argument must be a `.param` variable or a register"),
            },
            o => self.error(o.span(), "unsupported call argument"),
        }
    }

    /// Lowers `call{.uni} (rets), func, (args);` by inlining `func`.
    pub fn lower_call(&mut self, i: &Instruction, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        // Operands: optional return list, function name, optional argument list.
        let mut ops = i.operands.iter();
        let mut rets: &[Operand] = &[];
        let mut first = ops.next();
        if let Some(Operand::List(v, _)) = first {
            rets = v;
            first = ops.next();
        }
        let Some(Operand::Name { name: fname, .. }) = first else {
            return self.error(i.span, "indirect calls are not supported: ptx2sass inlines calls");
        };
        let args: &[Operand] = match ops.next() {
            Some(Operand::List(v, _)) => v,
            None => &[],
            Some(o) => return self.error(o.span(), "expected the argument list"),
        };
        let Some(callee) = funcs.get(fname.name.as_str()).copied() else {
            if self.lookup_reg_type(&self.scoped(&fname.name)).is_some() {
                return self.fail(
                    Diag::error(fname.span, format!("indirect call through `{}` is not supported", fname.name))
                        .note("ptx2sass inlines device functions; a call target must be a function name"),
                );
            }
            return self.fail(
                Diag::error(fname.span, format!("call to `{}`, which has no body in this module", fname.name))
                    .note("ptx2sass inlines device functions; external functions (e.g. `vprintf`) cannot be called"),
            );
        };
        if self.inline_stack.iter().any(|n| n == &fname.name) {
            return self.fail(
                Diag::error(fname.span, format!("recursive call to `{}`", fname.name))
                    .note("ptx2sass inlines device functions, so recursion is not supported"),
            );
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
        self.inline_count += 1;
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
        self.inline_stack.push(fname.name.clone());
        self.return_targets.push(cont);
        let body = callee.body.as_ref().expect("callees have bodies");
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

    /// Checks that a register argument or return variable `name` of type `ty` can be
    /// bound to the formal parameter `p`: both predicates, or both of the same size (ptxas
    /// 11.8 accepts `.b32` for `.f32`, and rejects other pairs with "Type of argument does
    /// not match formal parameter").
    fn check_arg_type(&mut self, name: &ast::Ident, ty: ScalarType, p: &ast::ParamDecl) -> LResult<()> {
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
