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

    /// Executes BRA, SSY, SYNC, PBK, BRK, EXIT and RET at instruction `k` for the threads
    /// of `exec` (active and guard true). `w.pc` is already `k + 1`. Returns false for an
    /// opcode of another family.
    pub(super) fn exec_control(&mut self, w: &mut Warp, i: &Instr, k: usize, exec: u32) -> Result<bool, ExecError> {
        match i.op {
            Op::Bra => {
                let t = target(i)?;
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
                let pc = target(i)?;
                // The same reconvergence point twice: the threads of the earlier entry
                // left its region without SYNC/BRK (hardware would silently reconverge
                // them at the wrong time, or never).
                if let Some(e) = w.stack.iter().find(|e| e.kind == kind && e.pc == pc && e.mask & !w.exited != 0) {
                    return Err(ExecError::Divergence(format!(
                        "`{}` #{k}: {} to #{pc} while an earlier entry for #{pc} still holds threads 0x{:08x}: \
                         a region was left without its {}",
                        self.func.name,
                        i.op.name(),
                        e.mask & !w.exited,
                        if kind == StackKind::Sync { "SYNC" } else { "BRK" }
                    )));
                }
                Self::push(w, StackEntry { kind, mask: w.active, pc })?;
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
            Op::Ret => {
                if exec != 0 {
                    return Err(ExecError::Unsupported(format!(
                        "RET at `{}` #{k}: calls are not modeled (SPA 5.0 CAL is not in the instruction model)",
                        self.func.name
                    )));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}
