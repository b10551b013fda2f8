//! Branches, exits and the reconvergence stack (the model is described in the module docs
//! of [`super`]).

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

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

    /// Executes BRA (also with a CC test), SSY, SYNC, PBK, BRK, EXIT, the calls (CAL, JCAL,
    /// PRET + JMX) and RET (a call pushes a CAL entry holding the return point; `RET` works
    /// like `BRK` to it, the model of the Fermi-to-Pascal call/return stack that envytools
    /// describes for `call`/`ret`) at instruction `k` for the threads of `exec` (active and
    /// guard true). `w.pc` is already `k + 1`. Returns false for an
    /// opcode of another family.
    pub(super) fn exec_control(
        &mut self,
        w: &mut Warp,
        mem: &mut super::mem::CtaMem,
        i: &Instr,
        k: usize,
        exec: u32,
    ) -> Result<bool, ExecError> {
        // The instruction after `k` (where not-taken and returning threads resume); the
        // program is far shorter than usize::MAX instructions.
        let next = k.saturating_add(1);
        match i.op {
            Op::Bra | Op::BraCc { .. } => {
                let t = target(i)?;
                let mut exec = exec;
                if let Op::BraCc { test } = i.op {
                    for (l, &cc) in w.cc.iter().enumerate() {
                        if super::state::in_mask(exec, l) && !super::arith::ext::cc_test(test, cc) {
                            exec &= !(1 << l); // l < WARP_SIZE
                        }
                    }
                }
                if exec == w.active {
                    w.pc = t;
                } else if exec != 0 {
                    Self::push(w, StackEntry { kind: StackKind::Div, mask: w.active & !exec, pc: next })?;
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
                // them at the wrong time, or never). Only the current call's entries count:
                // a recursive call runs the same SSY/PBK again while its caller's entry
                // waits below the call's return entry (ptxas 11.8's recursive `fact`,
                // docs/abi.md).
                let frame = w.stack.iter().rposition(|e| e.kind == StackKind::Call).map_or(0, |c| c.saturating_add(1));
                if let Some(e) =
                    w.stack.iter().skip(frame).find(|e| e.kind == kind && e.pc == pc && e.mask & !w.exited != 0)
                {
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
                for e in w.stack.iter_mut().skip(at.saturating_add(1)) {
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
            Op::Cal | Op::Jcal => {
                if exec == 0 {
                    return Ok(true);
                }
                match i.srcs.first().map(|s| s.kind) {
                    Some(SrcKind::Label(t)) => {
                        // A divergent call runs the calling threads first; the others resume
                        // after the call (as for a divergent branch).
                        if exec != w.active {
                            Self::push(w, StackEntry { kind: StackKind::Div, mask: w.active & !exec, pc: next })?;
                            w.active = exec;
                        }
                        Self::push(w, StackEntry { kind: StackKind::Call, mask: exec, pc: next })?;
                        w.pc = t as usize;
                    }
                    Some(SrcKind::Sym { .. }) if exec != w.active => {
                        return Err(ExecError::Unsupported(format!("`{}` #{k}: a predicated JCAL", self.func.name)));
                    }
                    Some(SrcKind::Sym { id, .. }) => {
                        let name = self.image.externs.get(id as usize).cloned().unwrap_or_default();
                        if !self.builtin(w, mem, &name, exec)? {
                            return Err(ExecError::Unsupported(format!(
                                "JCAL of `{name}`, which is neither in the program nor a runtime function the simulator provides (vprintf, __assertfail)"
                            )));
                        }
                    }
                    _ => return Err(ExecError::Unsupported(format!("{} without a target", i.op.name()))),
                }
            }
            Op::Pret => {
                if exec != w.active {
                    return Err(ExecError::Unsupported(format!("`{}` #{k}: a predicated PRET", self.func.name)));
                }
                Self::push(w, StackEntry { kind: StackKind::Call, mask: w.active, pc: target(i)? })?;
            }
            Op::Jmx => {
                if exec == 0 {
                    return Ok(true);
                }
                // JMX Ra: each thread to the function at its address; threads with
                // different targets go one group after another (the others wait on a DIV
                // entry that re-executes this JMX).
                let Some(src) = i.srcs.first() else {
                    return Err(ExecError::Unsupported(format!("`{}` #{k}: JMX without an operand", self.func.name)));
                };
                let a = w.gather(src, &self.banks, exec)?;
                // exec != 0: its lowest lane is below WARP_SIZE.
                let first = a.get(exec.trailing_zeros() as usize).copied().unwrap_or(0);
                let group = a
                    .iter()
                    .enumerate()
                    .filter(|&(l, &x)| super::state::in_mask(exec, l) && x == first)
                    .fold(0u32, |m, (l, _)| m | 1 << l); // l < WARP_SIZE
                let Some(&t) = self.image.by_addr.get(&first) else {
                    return Err(ExecError::Unsupported(format!(
                        "`{}` #{k}: indirect call to 0x{first:x}, which is no function's address",
                        self.func.name
                    )));
                };
                if group != w.active {
                    Self::push(w, StackEntry { kind: StackKind::Div, mask: w.active & !group, pc: k })?;
                    w.active = group;
                }
                w.pc = t;
            }
            Op::Ret => {
                if exec == 0 {
                    return Ok(true);
                }
                let Some(at) = w.stack.iter().rposition(|e| e.kind == StackKind::Call) else {
                    return Err(ExecError::Unsupported(format!(
                        "`{}` #{k}: RET without a call on the reconvergence stack",
                        self.func.name
                    )));
                };
                // Returning threads wait at the return address: inner entries forget them.
                for e in w.stack.iter_mut().skip(at.saturating_add(1)) {
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
