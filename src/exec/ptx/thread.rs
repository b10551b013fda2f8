//! One thread's state (registers, call frames, local memory, carry flag) and the execution
//! of one instruction by one thread (PTX ISA 9.7).
//!
//! Registers are a `Vec<u64>` holding every frame's slots, the current frame's starting at
//! `base`; a register that was never written reads as 0 (PTX leaves it undefined).
//!
//! A frame's slots are allocated at its call (`nregs` of its function) and the compiler
//! numbers registers below `nregs`, so register accesses go through [`Thread::slot`] and
//! [`Thread::set_slot`] without a panic path. Addresses, sizes and offsets computed from
//! program values are checked (an error names the instruction), never a panic.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::arith::fp;
use super::eval::{atom_value, combine, eval};
use super::internal;
use super::memory::{Spaces, from_generic, resolve, to_generic};
use super::program::*;
use super::value::{extend, from_le, mask, to_le};
use crate::exec::{ExecError, Memory};
use crate::ptx::types::ScalarType;

/// Deepest call stack of a thread (frames, the kernel's included).
pub const MAX_CALL_DEPTH: usize = 1024;

/// Whether a thread can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Runnable.
    Ready,
    /// Waiting at `bar.sync` on this barrier.
    Waiting(u32),
    /// Finished (`exit`, or `ret` from the kernel).
    Exited,
}

/// One call frame (PTX ISA 9.7.12.2 call).
#[derive(Clone, Debug)]
pub struct Frame {
    /// Index into [`Program::funcs`].
    pub func: u32,
    /// First register slot of the frame.
    pub base: usize,
    /// `.local` address of the frame's local block.
    pub local_base: u32,
    /// The local stack size before the call (restored by `ret`).
    pub local_top_before: usize,
    /// The frame's parameter buffer.
    pub params: Vec<u8>,
    /// Where `ret` continues.
    pub ret_pc: u32,
    /// The `call` instruction (for its return destinations).
    pub call_pc: u32,
}

/// One thread.
#[derive(Clone, Debug)]
pub struct Thread {
    /// Program counter (index into [`Program::insts`]).
    pub pc: u32,
    /// Run state.
    pub state: State,
    /// Register slots of all frames.
    pub regs: Vec<u64>,
    /// First slot of the current frame.
    pub base: usize,
    /// Call frames, the kernel's first.
    pub frames: Vec<Frame>,
    /// Local memory: every frame's `.local` block.
    pub local: Vec<u8>,
    /// `CC.CF`, the carry flag of extended-precision arithmetic (PTX ISA 9.7.2).
    pub cc: bool,
    /// `%tid`.
    pub tid: [u32; 3],
    /// `%laneid`.
    pub lane: u32,
    /// `%warpid`.
    pub warp: u32,
    /// The pending `bar.red`: its reduction and destination, written at the release.
    pub red: Option<(super::program::BarRed, Dst)>,
}

/// What the scheduler must do after a thread executed an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Nothing.
    None,
    /// The thread arrived at barrier `id` (expecting `count` threads, `None`: all), and
    /// waits if `wait`.
    Barrier {
        /// Barrier id.
        id: u32,
        /// Expected arrivals.
        count: Option<u32>,
        /// `bar.sync` (true) or `bar.arrive`.
        wait: bool,
        /// `bar.red`: the thread's predicate (its destination is [`Thread::red`]).
        vote: Option<bool>,
    },
    /// The thread exited.
    Exit,
}

/// Launch- and CTA-wide values an instruction may read.
pub struct Env<'a> {
    /// The program.
    pub prog: &'a Program,
    /// `%ctaid`.
    pub ctaid: [u32; 3],
    /// `%ntid`.
    pub ntid: [u32; 3],
    /// `%nctaid`.
    pub nctaid: [u32; 3],
    /// Instructions executed so far (`%clock`).
    pub steps: u64,
    /// The launch's dynamic shared memory in bytes (`%dynamic_smem_size`).
    pub dynamic_shared: u32,
    /// Largest stack of one thread in bytes: its registers, parameter buffers and local
    /// blocks of every frame (the launch's memory limit shared among the CTA's threads, at
    /// most [`super::memory::LOCAL_LIMIT`]).
    pub local_limit: usize,
    /// What `printf` printed (one text per call).
    pub output: std::cell::RefCell<Vec<String>>,
    /// The launch's textures and surfaces.
    pub images: &'a [crate::exec::image::Image],
}

/// The mask of the low `bits` bits of a `u128`.
fn wide_mask(bits: u32) -> u128 {
    if bits >= 128 { u128::MAX } else { (1u128 << bits).wrapping_sub(1) } // 1 << bits >= 1
}

/// A `.b128` value from its 16 little-endian bytes (fewer: zero-extended).
fn from_le_wide(b: &[u8]) -> u128 {
    b.iter().rev().fold(0u128, |v, x| v << 8 | u128::from(*x))
}

impl Thread {
    /// Register slot `k` of the current frame. The frame's slots exist (see the module
    /// documentation); one that did not would read as an unwritten register, 0.
    pub(super) fn slot(&self, k: Slot) -> u64 {
        self.regs.get(self.base.saturating_add(k as usize)).copied().unwrap_or(0)
    }

    /// Sets slot `k` of the frame whose first slot is `base` (an existing slot, as for
    /// [`Thread::slot`]).
    fn set_slot(&mut self, base: usize, k: Slot, v: u64) {
        if let Some(r) = self.regs.get_mut(base.saturating_add(k as usize)) {
            *r = v;
        }
    }

    /// The value of a source operand (the register's bits, a constant, a special register).
    pub(super) fn read(&self, env: &Env, s: Src) -> u64 {
        // Axis `c` of a special register (0..=2, as the compiler decodes `.x/.y/.z`).
        let axis = |v: [u32; 3], c: u8| v.get(usize::from(c)).copied().map_or(0, u64::from);
        match s {
            Src::Reg(k) => self.slot(k),
            Src::RegNot(k) => (self.slot(k) & 1) ^ 1,
            Src::Imm(v) => v,
            // Sum of two u32s: exact in u64. The kernel's frame is always there.
            Src::LocalAddr(off) => {
                self.frames.last().map_or(0, |f| u64::from(f.local_base)).saturating_add(u64::from(off))
            }
            Src::Special(sp) => {
                // %laneid < 32 (PTX ISA 10.3): the lane masks below are 32-bit.
                let lane = self.lane;
                match sp {
                    Special::Tid(c) => axis(self.tid, c),
                    Special::Ntid(c) => axis(env.ntid, c),
                    Special::Ctaid(c) => axis(env.ctaid, c),
                    Special::Nctaid(c) => axis(env.nctaid, c),
                    Special::Laneid => u64::from(lane),
                    Special::Warpid => self.warp as u64,
                    Special::Nwarpid => 64,
                    Special::Smid | Special::Gridid => 0,
                    Special::Nsmid => 1,
                    Special::LanemaskEq => 1u64.checked_shl(lane).unwrap_or(0),
                    Special::LanemaskLe => mask(lane.saturating_add(1)),
                    Special::LanemaskLt => mask(lane),
                    Special::LanemaskGe => !mask(lane) & 0xffff_ffff,
                    Special::LanemaskGt => !mask(lane.saturating_add(1)) & 0xffff_ffff,
                    Special::Clock => env.steps,
                    Special::TotalSmemSize => {
                        u64::from(env.prog.dynamic_base).saturating_add(u64::from(env.dynamic_shared))
                    }
                    Special::DynamicSmemSize => env.dynamic_shared as u64,
                    Special::Envreg => 0,
                }
            }
        }
    }

    fn read_as(&self, env: &Env, s: Src, ty: ScalarType) -> u64 {
        self.read(env, s) & mask(ty.bits().min(64))
    }

    /// Writes `v`, a value of type `ty`, extended by `ty`'s signedness to the register.
    fn write(&mut self, d: Dst, v: u64, ty: ScalarType) {
        self.set_slot(self.base, d.slot, extend(v, ty) & mask(d.bits));
    }

    /// Writes `v` chopped to the destination register's width.
    pub(super) fn write_raw(&mut self, d: Dst, v: u64) {
        self.set_slot(self.base, d.slot, v & mask(d.bits));
    }

    /// Reads up to 128 bits: a `.b128` register is two slots, low half first.
    fn read_wide(&self, env: &Env, s: Src, bits: u32) -> u128 {
        match s {
            Src::Reg(k) if bits > 64 => u128::from(self.slot(k)) | u128::from(self.slot(k.saturating_add(1))) << 64,
            _ => self.read(env, s) as u128 & wide_mask(bits),
        }
    }

    /// Writes up to 128 bits (two slots for a `.b128` register).
    fn write_wide(&mut self, d: Dst, v: u128) {
        if d.bits > 64 {
            self.set_slot(self.base, d.slot, v as u64);
            self.set_slot(self.base, d.slot.saturating_add(1), (v >> 64) as u64);
        } else {
            self.write_raw(d, v as u64);
        }
    }

    fn addr(&self, env: &Env, a: &Addr) -> u64 {
        self.read(env, a.base).wrapping_add(a.offset as u64)
    }

    fn spaces<'s>(&'s mut self, global: &'s mut Memory, shared: &'s mut [u8], consts: &'s [u8]) -> Spaces<'s> {
        // The kernel's frame is always there; without a frame there would be no parameters.
        let param = self.frames.last_mut().map_or(&mut [][..], |f| &mut f.params[..]);
        Spaces { global, shared, local: &mut self.local, param, consts }
    }

    /// Executes the instruction at `self.pc` (PTX ISA 9.7): applies its guard, its effect
    /// on registers and memory, and advances the program counter.
    pub fn step(&mut self, env: &Env, global: &mut Memory, shared: &mut [u8]) -> Result<Event, ExecError> {
        let prog = env.prog;
        let inst = prog.insts.get(self.pc as usize).ok_or_else(|| internal(&format!("program counter {}", self.pc)))?;
        if let Some((slot, neg)) = inst.guard
            && (self.slot(slot) & 1 != 0) == neg
        {
            self.advance();
            return Ok(Event::None);
        }
        let unsupported = |e: String| ExecError::Unsupported(format!("{}: {e}", inst.text));
        match &inst.op {
            Op::Compute { func, ty, dst, dst_ty, srcs } => {
                let mut vals = [0u64; 4];
                for (v, (s, sty)) in vals.iter_mut().zip(srcs) {
                    *v = self.read_as(env, *s, *sty);
                }
                // The compiler gives a computation at most 4 sources.
                let vals = vals.get(..srcs.len()).ok_or_else(|| unsupported(format!("{} sources", srcs.len())))?;
                let r = eval(func, *ty, vals, &mut self.cc).map_err(unsupported)?;
                if let Some(d) = dst {
                    self.write(*d, r, *dst_ty);
                }
            }
            Op::Setp { cmp, bool_op, ftz, ty, p, q, a, b, c } => {
                let (x, y) = (self.read_as(env, *a, *ty), self.read_as(env, *b, *ty));
                let c = c.is_some_and(|c| self.read(env, c) & 1 != 0);
                // Packed halves (PTX ISA 9.7.4 setp): `p` gets the low halves' result, `q`
                // the high halves'; otherwise `q` gets the complement.
                let (t, u) = match fp::packed(*ty) {
                    Some(f) => {
                        let lane = if f == super::arith::float::F16 { ScalarType::F16 } else { ScalarType::Bf16 };
                        let h = |v: u64, k: u32| (v >> k.wrapping_mul(16)) & 0xffff; // k < 2
                        (
                            fp::compare(*cmp, lane, *ftz, h(x, 0), h(y, 0)),
                            fp::compare(*cmp, lane, *ftz, h(x, 1), h(y, 1)),
                        )
                    }
                    None => {
                        let t = fp::compare(*cmp, *ty, *ftz, x, y);
                        (t, !t)
                    }
                };
                if let Some(p) = p {
                    self.write_raw(*p, combine(t, *bool_op, c) as u64);
                }
                if let Some(q) = q {
                    self.write_raw(*q, combine(u, *bool_op, c) as u64);
                }
            }
            Op::Ld { space, ty, dsts, addr } => {
                let a = self.addr(env, addr);
                let esz = ty.bytes() as usize;
                let mut buf = [0u8; 64];
                let total = esz.saturating_mul(dsts.len());
                let Some(bytes) = buf.get_mut(..total) else {
                    return Err(unsupported(format!("a {total}-byte access")));
                };
                self.spaces(global, shared, &prog.consts).read(*space, a, bytes)?;
                // Element k is bytes k * esz .. (k + 1) * esz, within `total`.
                for (bytes, d) in buf.chunks(esz.max(1)).zip(dsts) {
                    match d {
                        Some(d) if esz > 8 => self.write_wide(*d, from_le_wide(bytes)),
                        Some(d) => self.write(*d, from_le(bytes), *ty),
                        None => {}
                    }
                }
            }
            Op::St { space, ty, srcs, addr } => {
                let a = self.addr(env, addr);
                let esz = ty.bytes() as usize;
                let mut buf = [0u8; 64];
                let total = esz.saturating_mul(srcs.len());
                if total > buf.len() {
                    return Err(unsupported(format!("a {total}-byte access")));
                }
                // Element k is bytes k * esz .. (k + 1) * esz (esz <= 16 bytes of a u128).
                for (chunk, s) in buf.chunks_mut(esz.max(1)).zip(srcs) {
                    let v = self.read_wide(env, *s, ty.bits());
                    for (o, x) in chunk.iter_mut().zip(v.to_le_bytes()) {
                        *o = x;
                    }
                }
                let bytes = buf.get(..total).unwrap_or_default(); // total <= 64, checked above
                self.spaces(global, shared, &prog.consts).write(*space, a, bytes)?;
            }
            Op::Pack { dst, elem_bits, srcs } => {
                let v = srcs
                    .iter()
                    .enumerate()
                    // Element k at bit k * elem_bits; bits at or past 128 are dropped.
                    .fold(0u128, |acc, (k, s)| {
                        let at = (k as u32).saturating_mul(*elem_bits);
                        acc | self.read_wide(env, *s, *elem_bits).checked_shl(at).unwrap_or(0)
                    });
                self.write_wide(*dst, v);
            }
            Op::Unpack { dsts, elem_bits, src } => {
                let v = self.read_wide(env, *src, elem_bits.saturating_mul(dsts.len() as u32));
                for (k, d) in dsts.iter().enumerate() {
                    if let Some(d) = d {
                        let at = (k as u32).saturating_mul(*elem_bits); // past 128 bits: 0
                        self.write_wide(*d, v.checked_shr(at).unwrap_or(0) & wide_mask(*elem_bits));
                    }
                }
            }
            Op::Cvta { to, space, dst, bits, src } => {
                let v = self.read(env, *src) & mask(*bits);
                let r = if *to { from_generic(*space, v) } else { to_generic(*space, v) };
                if let Some(d) = dst {
                    self.write_raw(*d, r & mask(*bits));
                }
            }
            Op::Isspacep { space, dst, src } => {
                let v = self.read(env, *src);
                if let Some(d) = dst {
                    self.write_raw(*d, (resolve(v).0 == *space) as u64);
                }
            }
            Op::Atom { space, op, ty, dst, addr, b, c } => {
                let a = self.addr(env, addr);
                let n = ty.bytes() as usize;
                let (b, c) = (self.read_as(env, *b, *ty), c.map_or(0, |c| self.read_as(env, c, *ty)));
                let mut buf = [0u8; 8];
                let Some(bytes) = buf.get_mut(..n) else {
                    return Err(unsupported(format!("a {n}-byte atomic")));
                };
                let mut sp = self.spaces(global, shared, &prog.consts);
                sp.read(*space, a, bytes)?;
                let old = from_le(bytes);
                let new = atom_value(*op, *ty, old, b, c).map_err(unsupported)?;
                sp.write(*space, a, to_le(new, n).get(..n).unwrap_or_default())?; // n <= 8
                if let Some(d) = dst {
                    self.write(*d, old, *ty);
                }
            }
            Op::Bra(target) => {
                self.pc = *target;
                return Ok(Event::None);
            }
            Op::Call { callee, args, .. } => {
                self.call(env, *callee, args)?;
                return Ok(Event::None);
            }
            Op::CallIndirect { target, args, .. } => {
                let a = self.read(env, *target);
                let Some(&callee) = prog.by_addr.get(&a) else {
                    return Err(ExecError::Unsupported(format!(
                        "indirect call to 0x{a:x}, which is no function's address"
                    )));
                };
                let f = prog.funcs.get(callee as usize).ok_or_else(|| internal(&format!("function {callee}")))?;
                if f.params.len() != args.len() {
                    return Err(ExecError::Unsupported(format!(
                        "indirect call of `{}` ({} parameters) with {} arguments",
                        f.name,
                        f.params.len(),
                        args.len()
                    )));
                }
                self.call(env, callee, args)?;
                return Ok(Event::None);
            }
            Op::Builtin { func, args, rets } => self.builtin(env, global, shared, *func, args, rets)?,
            Op::Ret => return self.ret(prog),
            Op::Exit => return Ok(Event::Exit),
            Op::Bar { id, count, arrive, red } => {
                let id = self.read(env, *id) as u32;
                let count = count.map(|c| self.read(env, c) as u32);
                let vote = red.map(|(_, c, _)| self.read(env, c) & 1 != 0);
                self.red = red.map(|(r, _, d)| (r, d));
                self.advance();
                return Ok(Event::Barrier { id, count, wait: !arrive, vote });
            }
            Op::Tex(t) => {
                let h = self.read(env, t.handle);
                let c: Vec<u32> = t.coords.iter().map(|s| self.read(env, *s) as u32).collect();
                let v: Vec<u64> = t.data.iter().map(|s| self.read(env, *s)).collect();
                let s = t.sampler.as_ref().map(|(src, _)| self.read(env, *src));
                let out = super::tex::exec(t, env.images, global, h, &c, &v, s)?;
                for (d, x) in t.dsts.iter().zip(out) {
                    if let Some(d) = d {
                        self.write_raw(*d, x);
                    }
                }
            }
            Op::Nop => {}
            Op::Trap => return Err(ExecError::Trap { ctaid: env.ctaid }),
            Op::Warp(_) => return Err(unsupported("a warp-collective instruction outside a warp".into())),
            Op::Unsupported(why) => return Err(ExecError::Unsupported(why.clone())),
        }
        self.advance();
        Ok(Event::None)
    }

    /// To the next instruction. Every function ends with `ret`, so a thread never runs
    /// past the last instruction, and the count stays below `u32::MAX`.
    fn advance(&mut self) {
        self.pc = self.pc.saturating_add(1);
    }

    /// The 64-bit value of a builtin's argument.
    fn arg_value(&self, env: &Env, a: &Arg) -> Result<u64, ExecError> {
        match a {
            Arg::Param(off) => {
                let p = self.frames.last().map_or(&[][..], |f| &f.params[..]);
                let o = *off as usize;
                let end = o.saturating_add(8).min(p.len());
                Ok(from_le(p.get(o..end).ok_or(Self::param_error(*off, 8))?))
            }
            Arg::Value(v) => Ok(self.read(env, *v)),
            Arg::Reg(_) => Err(internal("a register as a builtin's argument")),
        }
    }

    /// A CUDA runtime function: `vprintf` appends its text to the launch's output and
    /// returns the number of arguments it read; `__assertfail` ends the launch.
    fn builtin(
        &mut self,
        env: &Env,
        global: &mut Memory,
        shared: &mut [u8],
        func: Builtin,
        args: &[Arg],
        rets: &[Arg],
    ) -> Result<(), ExecError> {
        let vals = args.iter().map(|a| self.arg_value(env, a)).collect::<Result<Vec<_>, _>>()?;
        let arg = |k: usize| vals.get(k).copied().unwrap_or(0);
        let consts = &env.prog.consts;
        let sp = self.spaces(global, shared, consts);
        let mut read = |a: u64, n: usize| -> Result<Vec<u8>, ExecError> {
            let mut b = vec![0u8; n];
            sp.read(Space::Generic, a, &mut b)?;
            Ok(b)
        };
        let result = match func {
            Builtin::Vprintf => {
                let fmt = crate::exec::printf::cstring(arg(0), &mut read)?;
                let (text, n) = crate::exec::printf::format(&fmt, arg(1), &mut read)?;
                env.output.borrow_mut().push(text);
                n as u64
            }
            Builtin::Assertfail => {
                let text = |a: u64, read: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>, ExecError>| {
                    crate::exec::printf::cstring(a, read).map(|b| String::from_utf8_lossy(&b).into_owned())
                };
                let (msg, file, func) = (text(arg(0), &mut read)?, text(arg(1), &mut read)?, text(arg(3), &mut read)?);
                return Err(ExecError::Assertion(format!(
                    "{file}:{}: {func}: block: {:?}, thread: {:?} Assertion `{msg}` failed.",
                    arg(2) as u32,
                    env.ctaid,
                    self.tid
                )));
            }
        };
        if let Some(r) = rets.first() {
            match r {
                Arg::Param(off) => {
                    let p = self.frames.last_mut().map_or(&mut [][..], |f| &mut f.params[..]);
                    let o = *off as usize;
                    let dst = p.get_mut(o..o.saturating_add(4)).ok_or(Self::param_error(*off, 4))?;
                    dst.copy_from_slice(&(result as u32).to_le_bytes());
                }
                Arg::Reg(d) => self.set_slot(self.base, d.slot, result & mask(d.bits)),
                Arg::Value(_) => return Err(internal("a value as a builtin's return")),
            }
        }
        Ok(())
    }

    fn param_error(addr: u32, len: usize) -> ExecError {
        ExecError::OutOfBounds { space: "param", addr: addr as u64, len: len as u64 }
    }

    /// `call`: a new frame with the arguments copied into the callee's parameters.
    fn call(&mut self, env: &Env, callee: u32, args: &[Arg]) -> Result<(), ExecError> {
        let f = env.prog.funcs.get(callee as usize).ok_or_else(|| internal(&format!("function {callee}")))?;
        if self.frames.len() >= MAX_CALL_DEPTH {
            return Err(ExecError::Unsupported(format!("call depth above {MAX_CALL_DEPTH} (calling `{}`)", f.name)));
        }
        // The whole stack (registers, parameter buffers, local blocks of every frame) stays
        // within the thread's share of the memory limit.
        // Sizes of allocated memory and u32 sizes: saturating sums fail the limit.
        let params_len = self.frames.iter().fold(0usize, |s, f| s.saturating_add(f.params.len()));
        let stack = self.regs.len().saturating_mul(8).saturating_add(self.local.len()).saturating_add(params_len);
        let frame = (f.nregs as usize)
            .saturating_mul(8)
            .saturating_add(f.param_bytes as usize)
            .saturating_add(f.local_bytes as usize);
        let needed = stack.saturating_add(frame);
        if needed > env.local_limit {
            return Err(ExecError::MemoryLimit {
                what: format!("the call stack of a thread calling `{}` (depth {})", f.name, self.frames.len()),
                bytes: needed as u64,
                limit: env.local_limit as u64,
            });
        }
        let mut params = vec![0u8; f.param_bytes as usize];
        let new_base = self.regs.len();
        self.regs.resize(new_base.saturating_add(f.nregs as usize), 0); // within local_limit
        for (a, loc) in args.iter().zip(&f.params) {
            let caller = self.frames.last().map_or(&[][..], |f| &f.params[..]);
            let (bytes, n): ([u8; 8], usize) = match (a, loc) {
                (Arg::Param(off), ParamLoc::Param(to, size)) => {
                    let (o, s, to_o) = (*off as usize, *size as usize, *to as usize);
                    let src = caller.get(o..o.saturating_add(s)).ok_or(Self::param_error(*off, s))?;
                    let dst = params.get_mut(to_o..to_o.saturating_add(s)).ok_or(Self::param_error(*to, s))?;
                    dst.copy_from_slice(src);
                    continue;
                }
                (Arg::Param(off), ParamLoc::Rest(to)) => {
                    let src = caller.get(*off as usize..).ok_or(Self::param_error(*off, 0))?;
                    // The caller's buffer passed the stack limit; `to` is a frame offset.
                    let (at, end) = (*to as usize, (*to as usize).saturating_add(src.len()));
                    if params.len() < end {
                        params.resize(end, 0);
                    }
                    params.get_mut(at..end).ok_or(Self::param_error(*to, src.len()))?.copy_from_slice(src);
                    continue;
                }
                (Arg::Value(_), ParamLoc::Rest(_)) => {
                    return Err(ExecError::Unsupported("a register passed as an unsized array argument".into()));
                }
                (Arg::Param(off), ParamLoc::Reg(d)) => {
                    let s = d.bits.div_ceil(8) as usize;
                    let o = *off as usize;
                    let src = caller.get(o..o.saturating_add(s)).ok_or(Self::param_error(*off, s))?;
                    (to_le(from_le(src), s), s)
                }
                (Arg::Value(v), _) => (to_le(self.read(env, *v), 8), 8),
                (Arg::Reg(_), _) => return Err(internal("a register as a call argument")),
            };
            // n <= 8 (a register of up to 64 bits, or 8 bytes of a value).
            let bytes = bytes.get(..n).unwrap_or(&bytes[..]);
            match loc {
                ParamLoc::Param(to, size) => {
                    let s = (*size as usize).min(bytes.len());
                    let o = *to as usize;
                    let dst = params.get_mut(o..o.saturating_add(s)).ok_or(Self::param_error(*to, s))?;
                    dst.copy_from_slice(bytes.get(..s).unwrap_or_default());
                }
                ParamLoc::Reg(d) => self.set_slot(new_base, d.slot, from_le(bytes) & mask(d.bits)),
                ParamLoc::Rest(_) => return Err(internal("an unsized array parameter")),
            }
        }
        let top = self.local.len();
        let align = f.local_align.max(1) as usize;
        // Saturating: a stack past usize fails the limit below.
        let lb = top.div_ceil(align).saturating_mul(align);
        let end = lb.saturating_add(f.local_bytes as usize);
        if end > env.local_limit {
            return Err(ExecError::OutOfBounds { space: "local", addr: lb as u64, len: f.local_bytes as u64 });
        }
        self.local.resize(end, 0);
        self.frames.push(Frame {
            func: callee,
            base: new_base,
            local_base: lb as u32,
            local_top_before: top,
            params,
            ret_pc: self.pc.saturating_add(1), // as `advance`
            call_pc: self.pc,
        });
        self.base = new_base;
        self.pc = f.entry;
        Ok(())
    }

    /// `ret`: copies the return parameters to the caller's destinations and pops the frame;
    /// from the kernel, the thread exits.
    fn ret(&mut self, prog: &Program) -> Result<Event, ExecError> {
        if self.frames.len() <= 1 {
            return Ok(Event::Exit);
        }
        let Some(fr) = self.frames.pop() else { return Ok(Event::Exit) };
        let f = prog.funcs.get(fr.func as usize).ok_or_else(|| internal(&format!("function {}", fr.func)))?;
        let Some(Op::Call { rets, .. } | Op::CallIndirect { rets, .. }) =
            prog.insts.get(fr.call_pc as usize).map(|i| &i.op)
        else {
            return Err(internal(&format!("return to {}, not a call", fr.call_pc)));
        };
        // At least the kernel's frame is left (two or more frames before the pop).
        let caller_base = self.frames.last().map_or(0, |c| c.base);
        for (r, loc) in rets.iter().zip(&f.rets) {
            let (bytes, n): (Vec<u8>, usize) = match loc {
                ParamLoc::Param(o, s) => {
                    let (at, n) = (*o as usize, *s as usize);
                    let b = fr.params.get(at..at.saturating_add(n)).ok_or(Self::param_error(*o, n))?;
                    (b.to_vec(), n)
                }
                ParamLoc::Reg(d) => {
                    // A register of the returning frame (its slots are still allocated).
                    let v = self.regs.get(fr.base.saturating_add(d.slot as usize)).copied().unwrap_or(0);
                    let s = (d.bits.div_ceil(8) as usize).min(8);
                    (to_le(v, s).get(..s).unwrap_or_default().to_vec(), s)
                }
                ParamLoc::Rest(_) => (vec![], 0),
            };
            match r {
                Arg::Param(off) => {
                    let caller = self.frames.last_mut().map_or(&mut [][..], |c| &mut c.params[..]);
                    let o = *off as usize;
                    let dst = caller.get_mut(o..o.saturating_add(n)).ok_or(Self::param_error(*off, n))?;
                    dst.copy_from_slice(&bytes);
                }
                Arg::Reg(d) => {
                    let v = from_le(bytes.get(..n.min(8)).unwrap_or_default()) & mask(d.bits);
                    self.set_slot(caller_base, d.slot, v);
                }
                Arg::Value(_) => return Err(internal("a value as a call's return")),
            }
        }
        self.regs.truncate(fr.base);
        self.local.truncate(fr.local_top_before);
        self.base = caller_base;
        self.pc = fr.ret_pc;
        Ok(Event::None)
    }
}
