//! The CUDA runtime functions a program may `JCAL` without defining them: `vprintf` and
//! `__assertfail`, with their arguments where the calling convention puts them
//! (`sass::abi`: `R4:R5`, `R6:R7`, ...; `__assertfail`'s `line` in `R8`, `function` in
//! `R10:R11`). Like a real callee they leave every caller-saved register and predicate
//! undefined: the simulator fills them with garbage (and `vprintf`'s result in `R4`).

// Arguments come from the executed program (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::Sim;
use super::mem::{CtaMem, Space, in_local_window, in_shared_window};
use super::state::{Lanes, Warp, lanes, masked};
use crate::exec::ExecError;
use crate::sass::abi::is_callee_saved;
use crate::sass::instr::{Reg, RegRef};
use crate::sass::op::MemSize;

impl Sim<'_> {
    /// The 64-bit value of the register pair `Rr:Rr+1` in `lane`.
    fn pair(w: &Warp, r: usize, lane: usize) -> u64 {
        w.reg(r, lane) as u64 | (w.reg(r.saturating_add(1), lane) as u64) << 32
    }

    /// `n` bytes at generic address `addr` for the thread in `lane`.
    fn read_generic(
        &mut self,
        mem: &mut CtaMem,
        w: &Warp,
        lane: usize,
        addr: u64,
        n: usize,
    ) -> Result<Vec<u8>, ExecError> {
        let thread = w.linear.get(lane).copied().unwrap_or(u32::MAX) as usize;
        (0..n as u64)
            .map(|k| {
                // Generic addresses wrap modulo 2^64 (the access then fails as out of bounds).
                let a = addr.wrapping_add(k);
                let window = a & !(super::mem::WINDOW_MASK as u64); // minus the window's base
                let (space, off) = if in_shared_window(a) {
                    (Space::Shared, window)
                } else if in_local_window(a) {
                    (Space::Local, window)
                } else {
                    (Space::Global, a)
                };
                self.access(mem, space, thread, off, MemSize::U8, None).map(|[v, ..]| v as u8)
            })
            .collect()
    }

    /// Runs the runtime function `name` for the threads of `exec`. Returns false for a
    /// function the simulator does not provide.
    pub(super) fn builtin(&mut self, w: &mut Warp, mem: &mut CtaMem, name: &str, exec: u32) -> Result<bool, ExecError> {
        match name {
            "vprintf" => {
                let mut result: Lanes = [0; 32];
                for (l, r) in masked(&mut result, exec) {
                    let (fmt, args) = (Self::pair(w, 4, l), Self::pair(w, 6, l));
                    let mut read = |a: u64, n: usize| self.read_generic(mem, w, l, a, n);
                    let f = crate::exec::printf::cstring(fmt, &mut read)?;
                    let (text, n) = crate::exec::printf::format(&f, args, &mut read)?;
                    self.output.push(text);
                    *r = n;
                }
                self.clobber(w, exec);
                w.write32(RegRef::new(Reg::R(4), 1), exec, &result);
            }
            "__assertfail" => {
                if let Some(l) = lanes(exec).next() {
                    let mut text = |r: usize| -> Result<String, ExecError> {
                        let a = Self::pair(w, r, l);
                        let mut read = |a: u64, n: usize| self.read_generic(mem, w, l, a, n);
                        Ok(String::from_utf8_lossy(&crate::exec::printf::cstring(a, &mut read)?).into_owned())
                    };
                    let (msg, file, func) = (text(4)?, text(6)?, text(10)?);
                    return Err(ExecError::Assertion(format!(
                        "{file}:{}: {func}: block: {:?}, thread: {:?} Assertion `{msg}` failed.",
                        w.reg(8, l),
                        self.ctaid,
                        w.tid.get(l).copied().unwrap_or_default()
                    )));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What a call leaves undefined: caller-saved registers (but `R1`) and predicates.
    fn clobber(&mut self, w: &mut Warp, exec: u32) {
        for r in (0..w.regs.len() as u8).filter(|r| *r != 1 && !is_callee_saved(*r)) {
            let g: Lanes = std::array::from_fn(|_| self.garbage.next_u64() as u32);
            w.write32(RegRef::new(Reg::R(r), 1), exec, &g);
        }
        let g = self.garbage.next_u64() as u32;
        for p in 0..7 {
            w.set_pred(Reg::P(p), exec, g.rotate_left(u32::from(p).wrapping_mul(5)));
        }
    }
}
