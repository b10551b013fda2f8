//! Branches, exits and the reconvergence stack (the model is described in the module docs
//! of [`super`]).

use super::Sim;
use super::state::{StackEntry, StackKind, Warp, WarpStatus};
use crate::exec::ExecError;
use crate::sass::instr::{Instr, SrcKind};
use crate::sass::op::Op;

/// Deepest reconvergence stack accepted (hardware spills deep stacks to memory; a deeper
/// one here means runaway divergence).
pub const MAX_STACK: usize = 4096;

fn target(i: &Instr) -> Result<usize, ExecError> {
    match i.srcs.first().map(|s| s.kind) {
        Some(SrcKind::Label(t)) => Ok(t as usize),
        _ => Err(ExecError::Unsupported(format!("{} without a label operand", i.op.name()))),
    }
}

impl Sim<'_> {
    fn push(w: &mut Warp, e: StackEntry) -> Result<(), ExecError> {
        if w.stack.len() >= MAX_STACK {
            return Err(ExecError::Unsupported(format!("reconvergence stack deeper than {MAX_STACK} entries")));
        }
        w.stack.push(e);
        Ok(())
    }

    /// The active threads are all gone (exited, waiting at a SYNC or BRK): resume the
    /// topmost entry that still has live threads, or finish the warp.
    pub(super) fn pop_resume(&self, w: &mut Warp) -> Result<(), ExecError> {
        while let Some(e) = w.stack.pop() {
            let m = e.mask & !w.exited;
            if m != 0 {
                w.active = m;
                w.pc = e.pc;
                return Ok(());
            }
        }
        if w.exited != u32::MAX {
            return Err(ExecError::Deadlock(format!(
                "`{}`: warp {} has threads 0x{:08x} waiting at a SYNC/BRK with no reconvergence entry left",
                self.func.name, w.index, !w.exited
            )));
        }
        w.status = WarpStatus::Done;
        Ok(())
    }

    /// Executes BRA (also with a CC test), SSY, SYNC, PBK, BRK, EXIT, CAL and RET (a call
    /// pushes a CAL entry holding the return point; `RET` works like `BRK` to it, the
    /// model of the Fermi-to-Pascal call/return stack that envytools describes for
    /// `call`/`ret`) at instruction `k` for the threads
    /// of `exec` (active and guard true). `w.pc` is already `k + 1`. Returns false for an
    /// opcode of another family.
    pub(super) fn exec_control(&mut self, w: &mut Warp, i: &Instr, k: usize, exec: u32) -> Result<bool, ExecError> {
        match i.op {
            Op::Bra | Op::BraCc { .. } => {
                let t = target(i)?;
                let mut exec = exec;
                if let Op::BraCc { test } = i.op {
                    for l in super::state::lanes(exec) {
                        if !super::ext::cc_test(test, w.cc[l]) {
                            exec &= !(1 << l);
                        }
                    }
                }
                if exec == w.active {
                    w.pc = t;
                } else if exec != 0 {
                    Self::push(w, StackEntry { kind: StackKind::Div, mask: w.active & !exec, pc: k + 1 })?;
                    w.active = exec;
                    w.pc = t;
                }
            }
            Op::Ssy | Op::Pbk => {
                if i.guard.is_some() {
                    return Err(ExecError::Unsupported(format!("predicated {}", i.op.name())));
                }
                let kind = if i.op == Op::Ssy { StackKind::Sync } else { StackKind::Brk };
                Self::push(w, StackEntry { kind, mask: w.active, pc: target(i)? })?;
            }
            Op::Sync => {
                if exec == 0 {
                    return Ok(true);
                }
                let top = w.stack.iter().rev().find(|e| e.kind != StackKind::Div).map(|e| e.kind);
                if top != Some(StackKind::Sync) {
                    return Err(ExecError::Unsupported(format!(
                        "`{}` #{k}: SYNC without an SSY entry on the reconvergence stack (top: {top:?})",
                        self.func.name
                    )));
                }
                w.active &= !exec;
                if w.active == 0 {
                    self.pop_resume(w)?;
                }
            }
            Op::Brk => {
                if exec == 0 {
                    return Ok(true);
                }
                let Some(at) = w.stack.iter().rposition(|e| e.kind == StackKind::Brk) else {
                    return Err(ExecError::Unsupported(format!(
                        "`{}` #{k}: BRK without a PBK entry on the reconvergence stack",
                        self.func.name
                    )));
                };
                // Breaking threads wait at the PBK target only: inner entries forget them.
                for e in w.stack[at + 1..].iter_mut() {
                    e.mask &= !exec;
                }
                w.active &= !exec;
                if w.active == 0 {
                    self.pop_resume(w)?;
                }
            }
            Op::Exit => {
                w.exited |= exec;
                w.active &= !exec;
                for e in w.stack.iter_mut() {
                    e.mask &= !exec;
                }
                if w.active == 0 {
                    self.pop_resume(w)?;
                }
            }
            Op::Cal => {
                // A divergent call runs the calling threads first; the others resume after
                // the call (as for a divergent branch).
                if exec != 0 {
                    let t = target(i)?;
                    if exec != w.active {
                        Self::push(w, StackEntry { kind: StackKind::Div, mask: w.active & !exec, pc: k + 1 })?;
                        w.active = exec;
                    }
                    Self::push(w, StackEntry { kind: StackKind::Call, mask: exec, pc: k + 1 })?;
                    w.pc = t;
                }
            }
            Op::Ret => {
                // Like BRK to the nearest CAL entry: returning threads wait at the return
                // point until every calling thread has returned (or exited).
                if exec == 0 {
                    return Ok(true);
                }
                let Some(at) = w.stack.iter().rposition(|e| e.kind == StackKind::Call) else {
                    return Err(ExecError::Unsupported(format!(
                        "`{}` #{k}: RET without a CAL entry on the reconvergence stack",
                        self.func.name
                    )));
                };
                for e in w.stack[at + 1..].iter_mut() {
                    e.mask &= !exec;
                }
                w.active &= !exec;
                if w.active == 0 {
                    self.pop_resume(w)?;
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
