//! The PTX reference interpreter: runs one kernel launch straight from the PTX ISA
//! semantics, as an oracle for the compiled SASS. It shares nothing with `lower`.
//!
//! Execution model (PTX ISA 2 "Programming Model", 3 "PTX Machine Model"):
//! * The grid's CTAs run one after another, in linear `%ctaid` order (x fastest).
//! * A CTA's threads have linear ids `x + y*ntid.x + z*ntid.x*ntid.y`; warps are 32
//!   consecutive ids. Each warp runs until none of its threads can (all wait at a barrier
//!   or have exited), lowest warp first, as the simulator's warps do (PTX leaves the
//!   interleaving of warps unspecified; sharing it keeps atomics of different warps in one
//!   order in both executors).
//! * Within a warp, each thread has its own program counter; a warp instruction executes
//!   the instruction at the smallest program counter among its runnable threads, for every
//!   runnable thread at that counter. Only warp-collective instructions can observe this
//!   order; for everything else PTX threads are independent (PTX ISA 2.2).
//! * `bar.sync a{, b}` / `barrier.sync` makes the thread wait until `b` threads (all
//!   non-exited threads of the CTA without `b`) have arrived at barrier `a`; `bar.arrive a, b`
//!   arrives without waiting. Arrivals are counted per thread. `bar.red.popc/.and/.or`
//!   waits like `bar.sync` and, at the release, gives each of its threads the count of
//!   true predicates (or their AND / OR) over the threads that arrived with `bar.red`.
//!   Barriers are released once no warp can run; when none can be released and some
//!   threads have not exited, the launch fails with [`ExecError::Deadlock`].
//! * `membar`/`fence` have no effect: every access is immediately visible to all threads.
//! * Warp-collective instructions (`shfl`, `vote`, `activemask`, see [`warp`]) execute once
//!   for a group of lanes. A lane that reaches one waits there until every runnable lane
//!   of its warp waits at one too (the others exited or wait at a barrier): the group is
//!   then every lane at one such instruction that no lane waiting at another one can still
//!   reach (reachability in the program's control-flow graph), or, when they all can
//!   (inside one loop), the one with the smallest program counter. So the lanes that
//!   come to an instruction execute it together whatever the code layout or the shape of
//!   the control flow (irreducible loops, exits from loops, `goto`s backwards), as
//!   `shfl.sync`/`vote.sync` require of the lanes of their membermask (PTX ISA 9.7.8.6:
//!   "wait until all non-exited threads corresponding to membermask have executed"); a
//!   membermask naming a lane that is not in the group is undefined behavior and an
//!   error. This shares nothing with the compiler's reconvergence analysis: no
//!   post-dominators, only "who can still arrive".
//! * `atom`/`red` are trivially atomic: one thread instruction runs at a time; the lanes of
//!   one warp's atomic run in the order [`crate::exec::rng::atomic_lane_order`] draws from
//!   [`Launch::seed`], the simulator's order, so order-dependent results (old values of
//!   contended atomics) vary with the seed and agree between the executors.
//!
//! State spaces and generic addressing are described in [`memory`]; register values in
//! [`value`]; float rounding in [`float`] and [`fp`]. Registers never written read as 0,
//! shared and local memory start zeroed. Every error is a value: out-of-bounds or misaligned
//! accesses, unmodelled instructions ([`ExecError::Unsupported`], raised when executed),
//! exceeding [`Launch::step_limit`] thread instructions.
//!
//! Approximate instructions (`rcp/sqrt/rsqrt/sin/cos/lg2/ex2/tanh .approx`, `div.approx`,
//! `div.full`) have no exact PTX definition: they return the best-rounded value of the
//! exact function (see [`fp`]); compare them with a tolerance.
//!
//! Module `.global` variables live in global memory and `.extern .shared` arrays address
//! the launch's [`Launch::dynamic_shared`] bytes ([`layout`]).
//!
//! Not modelled (an error when executed, or for variables when named):
//! `.shared::cluster`, the half-precision special functions (`ex2`/`tanh` of `.f16`; `add
//! sub mul fma neg abs min max setp set` of `.f16`, `.bf16` and their packed forms are
//! modelled, see [`fp`]), texture/surface instructions,
//! `match`/`redux`/`elect`, vector atomics, indirect calls and branches, `mov` of a
//! function address, and the `.b128` arguments of a `call` passed in registers.

// The interpreter runs user programs on user data (issue 20, docs/fuzzing.md "No-panic
// discipline"): every error is a value, never a panic. This covers every submodule but
// the unit tests.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod args;
pub mod arith;
pub mod compile;
pub mod eval;
pub mod layout;
pub mod memory;
mod opcodes;
pub mod program;
mod surf;
pub mod tex;
pub mod thread;
pub mod value;
pub mod warp;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests;

use crate::exec::{ExecError, Launch, Memory, Outcome};
use crate::ptx::ast::Module;
use program::Program;
use thread::{Env, Event, Frame, State, Thread};

/// Runs `launch.kernel` of `module` (a checked AST from [`crate::ptx::parse`]) on
/// `launch.grid` CTAs of `launch.block` threads, with the parameter bytes `launch.params`
/// (laid out by [`crate::exec::param_layout`]) and the global memory `launch.global`.
/// Returns global memory after the launch and the number of thread instructions executed
/// (guarded-off instructions included).
pub fn run(module: &Module, launch: &Launch) -> Result<Outcome, ExecError> {
    let threads = launch.threads();
    // Static shared data is the interpreter's own layout (module-wide); only the dynamic
    // part is a launch parameter checked against the hardware limit.
    crate::exec::check_shape(launch, 0, threads)?;
    let mut prog = compile::compile(module, &launch.kernel)?;
    let k = prog.funcs.first().ok_or_else(|| internal("no kernel compiled"))?;
    // Sums of u32 sizes; saturating, so a size beyond u64 fails the memory limit.
    let shared = u64::from(prog.dynamic_base).saturating_add(u64::from(launch.dynamic_shared));
    let per_thread = u64::from(k.nregs)
        .saturating_mul(8)
        .saturating_add(u64::from(k.local_bytes))
        .saturating_add(u64::from(k.param_bytes));
    let bytes = shared.saturating_add(threads.saturating_mul(per_thread));
    crate::exec::check_memory(launch, "one CTA's shared, register and local memory", bytes)?;
    if launch.params.len() != prog.kernel_param_bytes as usize {
        return Err(ExecError::Launch(format!(
            "`{}` takes {} parameter bytes, the launch gives {}",
            launch.kernel,
            prog.kernel_param_bytes,
            launch.params.len()
        )));
    }
    let mut global = launch.global.clone();
    init_module(&mut prog, &mut global, launch)?;
    let local_limit = memory::LOCAL_LIMIT
        .min(launch.memory_limit.checked_div(threads.max(1)).unwrap_or(launch.memory_limit) as usize);
    let mut run =
        Run { prog: &prog, launch, global, steps: 0, local_limit, output: vec![], reach_cache: Default::default() };
    let [gx, gy, gz] = launch.grid;
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                run.cta([x, y, z])?;
            }
        }
    }
    Ok(Outcome { global: run.global, steps: run.steps, output: run.output })
}

/// Places module `.global` variables in `global` and applies
/// [`Launch::module_init`] to them and to `.const` variables.
fn init_module(prog: &mut Program, global: &mut Memory, launch: &Launch) -> Result<(), ExecError> {
    let mut globals = std::mem::take(&mut prog.globals);
    for (name, bytes) in &launch.module_init {
        let v = prog.vars.get(name).ok_or_else(|| {
            ExecError::Launch(format!("--init {name}: the module has no .const or .global variable `{name}`"))
        })?;
        if bytes.len() as u64 > v.size {
            return Err(ExecError::Launch(format!(
                "--init {name}: {} bytes for a variable of {} bytes",
                bytes.len(),
                v.size
            )));
        }
        let image = match v.space {
            program::Space::Const => prog.consts.get_mut(v.addr as usize..),
            _ => globals.iter_mut().find(|(_, a, _)| *a == v.addr).map(|(_, _, b)| &mut b[..]),
        };
        // The layout places each variable's `size` bytes; `bytes` is no longer (checked above).
        let Some(image) = image.and_then(|b| b.get_mut(..bytes.len())) else {
            return Err(ExecError::Launch(format!("--init {name}: variable not placed")));
        };
        image.copy_from_slice(bytes);
    }
    for (name, addr, bytes) in globals {
        global.alloc(&name, addr, bytes)?;
    }
    Ok(())
}

/// One barrier's arrivals in the current phase.
#[derive(Clone, Copy, Default)]
struct Barrier {
    arrived: u32,
    expected: Option<u32>,
    /// `bar.red` arrivals and how many of them voted true.
    voters: u32,
    votes: u32,
}

/// Number of named barriers per CTA (PTX ISA 9.7.13.1: ids 0..15).
const BARRIERS: usize = 16;

struct Run<'a> {
    prog: &'a Program,
    launch: &'a Launch,
    global: Memory,
    steps: u64,
    /// [`thread::Env::local_limit`].
    local_limit: usize,
    /// `printf` output so far.
    output: Vec<String>,
    /// [`Run::reaches`] answers.
    reach_cache: std::collections::HashMap<(u32, u32), bool>,
}

struct Cta {
    threads: Vec<Thread>,
    shared: Vec<u8>,
    barriers: [Barrier; BARRIERS],
    live: u32,
}

impl Cta {
    /// Releases barrier `id` if enough threads have arrived; returns whether it did.
    fn check(&mut self, id: usize) -> bool {
        let Some(b) = self.barriers.get(id).copied() else { return false };
        let release = b.arrived > 0 && b.arrived >= b.expected.unwrap_or(self.live);
        if release {
            for t in &mut self.threads {
                if t.state == State::Waiting(id as u32) {
                    t.state = State::Ready;
                    if let Some((r, d)) = t.red.take() {
                        let v = match r {
                            program::BarRed::Popc => b.votes as u64,
                            program::BarRed::And => (b.votes == b.voters) as u64,
                            program::BarRed::Or => (b.votes > 0) as u64,
                        };
                        t.write_raw(d, v);
                    }
                }
            }
            if let Some(slot) = self.barriers.get_mut(id) {
                *slot = Barrier::default();
            }
        }
        release
    }
}

impl Run<'_> {
    fn new_cta(&self) -> Result<Cta, ExecError> {
        let [bx, by, bz] = self.launch.block;
        // `check_shape` bounds the CTA to 1024 threads, each dimension nonzero.
        let n = bx.saturating_mul(by).saturating_mul(bz);
        let k = self.prog.funcs.first().ok_or_else(|| internal("no kernel compiled"))?;
        let mut params = self.launch.params.clone();
        params.resize(k.param_bytes as usize, 0);
        let threads = (0..n)
            .map(|id| Thread {
                pc: k.entry,
                state: State::Ready,
                regs: vec![0; k.nregs as usize],
                base: 0,
                frames: vec![Frame {
                    func: 0,
                    base: 0,
                    local_base: 0,
                    local_top_before: 0,
                    params: params.clone(),
                    ret_pc: 0,
                    call_pc: u32::MAX,
                }],
                local: vec![0; k.local_bytes as usize],
                cc: false,
                tid: tid_of(id, self.launch.block),
                lane: id % 32,
                warp: id / 32,
                red: None,
            })
            .collect();
        // Both sizes passed `check_memory` in `run`.
        let shared_bytes = (self.prog.dynamic_base as usize).saturating_add(self.launch.dynamic_shared as usize);
        Ok(Cta { threads, shared: vec![0; shared_bytes], barriers: [Barrier::default(); BARRIERS], live: n })
    }

    /// Runs one CTA to completion.
    fn cta(&mut self, ctaid: [u32; 3]) -> Result<(), ExecError> {
        let mut cta = self.new_cta()?;
        let mut env = Env {
            prog: self.prog,
            ctaid,
            ntid: self.launch.block,
            nctaid: self.launch.grid,
            steps: 0,
            dynamic_shared: self.launch.dynamic_shared,
            local_limit: self.local_limit,
            output: Default::default(),
            images: &self.launch.images,
        };
        let n = cta.threads.len();
        let warps = n.div_ceil(32);
        loop {
            // Each warp runs until none of its threads can (all wait at a barrier or have
            // exited), lowest warp first, as the simulator's warps do; barriers are released
            // once no warp can run. PTX leaves the interleaving of warps unspecified, and this
            // one makes atomics of different warps apply in the simulator's order.
            let mut progress = false;
            for w in 0..warps {
                // w < n / 32 + 1 with n <= 1024 threads: no overflow.
                let first = w.saturating_mul(32);
                let lanes = first..n.min(first.saturating_add(32));
                loop {
                    let warp = cta.threads.get(lanes.clone()).unwrap_or_default();
                    let ready: Vec<u32> = warp.iter().filter(|t| t.state == State::Ready).map(|t| t.pc).collect();
                    if ready.is_empty() {
                        break;
                    }
                    let collective = |pc: u32| {
                        self.prog.insts.get(pc as usize).is_some_and(|i| matches!(i.op, program::Op::Warp(_)))
                    };
                    // Lanes at a warp-collective instruction wait for the others.
                    let pc = match ready.iter().copied().filter(|pc| !collective(*pc)).min() {
                        Some(pc) => pc,
                        None => self.collective_to_run(&ready),
                    };
                    progress = true;
                    self.warp_instr(&mut cta, &mut env, w, lanes.clone(), pc)?;
                }
            }
            self.output.append(&mut env.output.borrow_mut());
            if !progress {
                let mut released = false;
                for id in 0..BARRIERS {
                    released |= cta.check(id);
                }
                if released {
                    continue;
                }
                if cta.live == 0 {
                    return Ok(());
                }
                return Err(deadlock(&cta, ctaid));
            }
        }
    }

    /// Executes the instruction at `pc` for the ready threads of warp `w` (`lanes`).
    fn warp_instr(
        &mut self,
        cta: &mut Cta,
        env: &mut Env,
        w: usize,
        lanes: std::ops::Range<usize>,
        pc: u32,
    ) -> Result<(), ExecError> {
        let inst = self.prog.insts.get(pc as usize).ok_or_else(|| internal(&format!("program counter {pc}")))?;
        let at_pc = |t: Option<&Thread>| t.is_some_and(|t| t.state == State::Ready && t.pc == pc);
        if let program::Op::Warp(op) = &inst.op {
            let at: Vec<usize> = lanes.filter(|&l| at_pc(cta.threads.get(l))).collect();
            self.steps = self.steps.saturating_add(at.len() as u64);
            if self.steps > self.launch.step_limit {
                return Err(ExecError::StepLimit(self.launch.step_limit));
            }
            env.steps = self.steps;
            return warp::exec(op, inst.guard, &mut cta.threads, &at, env);
        }
        // The lanes of an atomic run one after another in the order both executors draw
        // from the seed (`exec::rng::atomic_lane_order`); all other instructions in lane
        // order.
        let mut order: Vec<usize> = lanes.collect();
        if matches!(inst.op, program::Op::Atom { .. }) {
            let ([gx, gy, _], c) = (self.launch.grid, env.ctaid);
            let [cx, cy, cz] = c.map(u64::from);
            // The linear CTA index: below the grid size, a product of three u32s.
            let cta_index =
                cx.saturating_add(u64::from(gx).saturating_mul(cy.saturating_add(u64::from(gy).saturating_mul(cz))));
            let prio = crate::exec::rng::atomic_lane_order(self.launch.seed, cta_index, w as u64);
            // Lane numbers of warp w: below the CTA's thread count.
            let first = w.saturating_mul(32);
            order = prio.iter().map(|&l| first.saturating_add(l as usize)).filter(|l| order.contains(l)).collect();
        }
        for l in order {
            let Some(t) = cta.threads.get_mut(l) else { continue };
            if t.state != State::Ready || t.pc != pc {
                continue;
            }
            self.steps = self.steps.saturating_add(1);
            if self.steps > self.launch.step_limit {
                return Err(ExecError::StepLimit(self.launch.step_limit));
            }
            env.steps = self.steps;
            let ev = t.step(env, &mut self.global, &mut cta.shared)?;
            self.event(cta, l, ev)?;
        }
        Ok(())
    }

    /// Which of the warp-collective instructions its runnable lanes all wait at (program
    /// counters `pcs`) runs first: one that no lane waiting at another can reach, else
    /// the smallest program counter.
    fn collective_to_run(&mut self, pcs: &[u32]) -> u32 {
        let mut at: Vec<u32> = pcs.to_vec();
        at.sort_unstable();
        at.dedup();
        // `pcs` is the nonempty set of ready lanes' counters.
        let smallest = at.first().copied().unwrap_or(0);
        if at.len() == 1 {
            return smallest;
        }
        for &x in &at {
            if !at.iter().any(|&y| y != x && self.reaches(y, x)) {
                return x;
            }
        }
        smallest
    }

    /// True if a thread past the instruction at `from` can come to the one at `to`
    /// (breadth-first over the program's instructions: fall-through, branch targets,
    /// callee entries, and the instructions after every call of a function for its `ret`).
    fn reaches(&mut self, from: u32, to: u32) -> bool {
        if let Some(r) = self.reach_cache.get(&(from, to)) {
            return *r;
        }
        let insts = &self.prog.insts;
        let func_of = |pc: u32| self.prog.funcs.iter().rposition(|f| f.entry <= pc).unwrap_or(0);
        let mut seen = vec![false; insts.len()];
        let mut work: Vec<u32> = vec![];
        let push_succs = |pc: u32, work: &mut Vec<u32>| {
            let Some(i) = insts.get(pc as usize) else { return };
            let next = pc.checked_add(1).filter(|&n| (n as usize) < insts.len());
            match &i.op {
                program::Op::Bra(t) => {
                    work.push(*t);
                    if i.guard.is_some() {
                        work.extend(next);
                    }
                }
                program::Op::Exit => {
                    if i.guard.is_some() {
                        work.extend(next);
                    }
                }
                program::Op::Ret => {
                    if i.guard.is_some() {
                        work.extend(next);
                    }
                    let f = func_of(pc) as u32;
                    for (c, ci) in insts.iter().enumerate() {
                        if matches!(ci.op, program::Op::Call { callee, .. } if callee == f) {
                            work.push((c as u32).saturating_add(1)); // past the end: not followed
                        }
                    }
                }
                program::Op::Call { callee, .. } => {
                    work.extend(self.prog.funcs.get(*callee as usize).map(|f| f.entry));
                    work.extend(next);
                }
                _ => work.extend(next),
            }
        };
        push_succs(from, &mut work);
        let mut found = false;
        while let Some(pc) = work.pop() {
            if pc == to {
                found = true;
                break;
            }
            if seen.get_mut(pc as usize).is_some_and(|s| !std::mem::replace(s, true)) {
                push_succs(pc, &mut work);
            }
        }
        self.reach_cache.insert((from, to), found);
        found
    }

    fn event(&self, cta: &mut Cta, l: usize, ev: Event) -> Result<(), ExecError> {
        match ev {
            Event::None => {}
            Event::Exit => {
                if let Some(t) = cta.threads.get_mut(l) {
                    t.state = State::Exited;
                }
                cta.live = cta.live.saturating_sub(1); // each thread exits once
            }
            Event::Barrier { id, count, wait, vote } => {
                let Some(b) = cta.barriers.get_mut(id as usize) else {
                    return Err(ExecError::Unsupported(format!("barrier id {id} (ids are 0..15)")));
                };
                // Counts of arrivals in one phase: at most the CTA's 1024 threads.
                b.arrived = b.arrived.saturating_add(1);
                if let Some(v) = vote {
                    b.voters = b.voters.saturating_add(1);
                    b.votes = b.votes.saturating_add(u32::from(v));
                }
                if count.is_some() {
                    b.expected = count;
                }
                if wait && let Some(t) = cta.threads.get_mut(l) {
                    t.state = State::Waiting(id);
                }
            }
        }
        Ok(())
    }
}

fn deadlock(cta: &Cta, ctaid: [u32; 3]) -> ExecError {
    let mut parts = vec![];
    for (id, b) in cta.barriers.iter().enumerate() {
        let waiting = cta.threads.iter().filter(|t| t.state == State::Waiting(id as u32)).count();
        if waiting > 0 {
            let want = b.expected.map_or(format!("all {} live threads", cta.live), |c| format!("{c} threads"));
            parts.push(format!("barrier {id}: {} arrived ({waiting} waiting), needs {want}", b.arrived));
        }
    }
    let exited = cta.threads.len().saturating_sub(cta.live as usize);
    ExecError::Deadlock(format!("CTA {ctaid:?}: {}; {exited} threads exited", parts.join("; ")))
}

/// A run-time error for a broken invariant of the interpreter's own program.
fn internal(what: &str) -> ExecError {
    ExecError::Unsupported(format!("internal error in the PTX interpreter: {what}"))
}

/// `%tid` of the thread with linear id `id` in a CTA of shape `block` (PTX ISA 2.2: x
/// fastest). `check_shape` makes every dimension nonzero; a zero one gives 0.
fn tid_of(id: u32, [bx, by, _]: [u32; 3]) -> [u32; 3] {
    let x = id.checked_rem(bx).unwrap_or(0);
    let yz = id.checked_div(bx).unwrap_or(0);
    [x, yz.checked_rem(by).unwrap_or(0), yz.checked_div(by).unwrap_or(0)]
}
