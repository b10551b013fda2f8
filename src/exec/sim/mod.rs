//! The SPA 5.0 simulator: runs a compiled [`Program`] on one [`Launch`] and enforces its
//! scheduling annotations, so that differential tests against the PTX interpreter check
//! both what the SASS computes and that its control fields are sufficient.
//!
//! # Execution model
//!
//! * **Threads and warps.** A CTA's threads are numbered `x + y*bx + z*bx*by` and grouped
//!   into warps of 32 consecutive threads (lanes of a partial last warp count as exited).
//!   CTAs run one after another in `x`, `y`, `z` order; within a CTA, each warp runs until
//!   it reaches `BAR.SYNC` or finishes, then the next one; a barrier releases when every
//!   warp that has not exited is waiting at it (a thread-count operand `b` releases once
//!   `b/32` warps wait). Each thread has R0..R254, P0..P6 and CC (module `state`); memory is
//!   described in module `mem` (shared window `c[0x0][0x0]`, local window `c[0x0][0x4]`,
//!   parameters at `c[0x0][0x140]`, user constants in bank 3).
//! * **Reconvergence** (the SIMT stack as envytools describes it for the NVIDIA
//!   architectures with `joinat`/`prebrk`, and as Fermi-to-Pascal hardware implements
//!   `SSY`/`PBK`): each warp has an active mask, an exited mask and a stack of entries
//!   (kind, thread mask, resume address).
//!   - `SSY t` pushes (SYNC, active, t); `PBK t` pushes (BRK, active, t).
//!   - A `BRA` whose guard holds for every active thread jumps, for none falls through;
//!     otherwise it pushes (DIV, not-taken threads, next instruction) and continues at
//!     the target with the taken threads.
//!   - `SYNC` (guarded: its threads) removes its threads from the active mask: they wait
//!     at the reconvergence point. The nearest non-DIV entry must be a SYNC entry.
//!   - `BRK` removes its threads from the active mask and from every entry above the
//!     nearest BRK entry: they wait at the loop's exit.
//!   - `EXIT` removes its threads from the warp for good.
//!   - When no thread is active, the stack is popped until an entry has a thread that has
//!     not exited; its threads (minus exited ones) resume at its address. A DIV entry runs
//!     the other side of a branch; a SYNC entry reconverges everyone at the SSY target; a
//!     BRK entry resumes the loop's threads at the PBK target. An empty stack with
//!     threads still waiting is a [`ExecError::Deadlock`].
//!   - Missing reconvergence is an [`ExecError::Divergence`] rather than a plausible
//!     result: a `BAR` executed by part of a warp's live threads (the others parked on
//!     the stack; the hardware counts the warp as arrived and runs them after the
//!     release), and an `SSY`/`PBK` pushed while an entry for the same target still holds
//!     threads (a region left without `SYNC`/`BRK`: a loop would grow the stack, an `if`
//!     would reconverge at the wrong place).
//! * **Timing** (module `timing`): each warp issues in order at
//!   `max(previous issue + previous stall, completion of the barriers it waits on)`;
//!   fixed-latency results (ALU 6, predicates 13, CC 6 cycles: findings §7, Mesa NAK
//!   `instr_latency`/`paw_latency` for SM < 70) may not be read earlier, except that
//!   LDG/STG/LD/ST/LDL/STL read their registers 4 cycles and LDS/STS/LDC/FP64 2 cycles after
//!   issue (findings §7: ptxas separates an ALU producer from them by 2 and 4);
//!   control instructions need a stall of at least 13 (NAK `exec_latency`); variable-
//!   latency results (memory, LDC, S2R, conversions, fp64, MUFU/POPC/FLO) arrive after a delay drawn
//!   from `Launch::seed` (completions on one barrier in order, across barriers in random
//!   order), and may be read or overwritten only after the warp waited on their write
//!   barrier (`&req`, or `DEPBAR.LE` counting); sources those instructions read late may
//!   be overwritten only after waiting on the read (or write) barrier. Violations are
//!   [`ExecError::Hazard`] naming the function, instruction index, address and text.
//!   A wait on a barrier the warp never set is allowed and reported in
//!   [`Report::notes`].
//! * **Loading** (module `load`): the module's `.global` data is placed and initialized
//!   and the code's relocated immediates are patched before the first CTA runs.
//! * **Initial state**: registers, shared and local memory start as garbage drawn from
//!   the seed, so results that depend on uninitialized state differ between seeds; a CTA
//!   finds shared and local memory as the previous CTA left them (hardware does not clear
//!   them either).
//! * **Limits** (`exec::check_shape`, `exec::check_memory`): the launch shape of compute
//!   capability 5.0, 48 KiB of static plus dynamic shared memory, the step limit (a grid
//!   whose warps cannot all issue once within it fails before running) and the memory
//!   limit for one CTA's shared, local and register memory.
//! * Values are computed when an instruction issues: every hazard being reported, a
//!   program without hazards cannot observe the difference.
//!
//! # Not modeled
//!
//! Instructions outside [`crate::sass::op::Op`] (SHFL, ATOM/RED, CAL/JCAL, PCNT/
//! CONT, VOTE, ...), `BAR.ARV`, `RET` (calls), predicated `SSY`/`PBK`,
//! `DFMA` with a directed rounding, `LDC.128`, constant banks other than 0 and 3, and
//! loads without a write barrier that rely on in-order completion behind a later waited
//! load (ptxas does this; the simulator calls the result never waited for). These are
//! [`ExecError::Unsupported`] (or a hazard for the last). Warps of a CTA run one after
//! another between barriers, so inter-warp races without a barrier are not explored.

mod arith;
mod builtin;
mod control;
pub mod cycles;
pub mod link;
pub mod load;
mod mem;
mod state;
mod surf;
mod sync;
mod tex;
mod timing;

pub use mem::{LOCAL_WINDOW, PARAM_BASE, SHARED_WINDOW};
pub use timing::{ALU_LATENCY, CC_LATENCY, LATENCY_TABLE, Latency, PRED_LATENCY};

use super::{ExecError, Launch, Memory, Outcome};
use crate::exec::Rng;
use crate::sass::instr::{Dst, Instr, SrcKind};
use crate::sass::op::Op;
use crate::sass::print::instr_text;
use crate::sass::program::{Program, SassFunction, address};
use mem::{ConstBanks, CtaMem};
use state::{PerLane, RegSet, Warp, WarpStatus};
use timing::Conflict;

/// What the scoreboard needs to know about one instruction, computed once.
#[derive(Clone, Copy)]
struct Decoded {
    /// The guard predicate.
    guard: RegSet,
    /// Every register unit read (sources, address bases, LDC indices, predicates, CC).
    reads: RegSet,
    /// Every register unit written.
    writes: RegSet,
    /// General-purpose sources read after issue (variable-latency units only).
    late: RegSet,
    /// Latency class of the opcode's unit.
    lat: Latency,
    /// Cycles after issue at which general-purpose sources are read
    /// ([`timing::operand_read_delay`]).
    read_delay: u64,
    /// Needs a stall of at least [`timing::CONTROL_MIN_STALL`].
    control: bool,
    /// In-order pipeline ([`timing::queue`]).
    queue: Option<timing::Queue>,
}

fn decode(i: &Instr) -> Decoded {
    let mut guard = RegSet::default();
    if let Some(g) = i.guard {
        guard.add_pred(g.pred);
    }
    let mut reads = RegSet::default();
    let mut late = RegSet::default();
    for s in &i.srcs {
        match s.kind {
            SrcKind::Pred(p) => reads.add_pred(p),
            _ => {
                if let Some(r) = s.gprs() {
                    reads.add_ref(r);
                    late.add_ref(r);
                }
            }
        }
    }
    // FFMA32I reads its destination as the addend when no third source is given.
    if matches!(i.op, Op::Ffma32i(_))
        && i.srcs.len() == 2
        && let Some(Dst::Reg(r)) = i.dsts.first()
    {
        reads.add_ref(*r);
    }
    reads.cc = i.op.reads_cc();
    let mut writes = RegSet::default();
    for d in &i.dsts {
        match d {
            Dst::Reg(r) => writes.add_ref(*r),
            Dst::Pred(p) => writes.add_pred(*p),
        }
    }
    writes.cc = i.op.writes_cc();
    let lat = timing::latency(i.op.info().unit);
    if !matches!(lat, Latency::Variable { late_reads: true, .. }) {
        late = RegSet::default();
    }
    let unit = i.op.info().unit;
    let control = matches!(
        i.op,
        Op::Bra
            | Op::BraCc { .. }
            | Op::Sync
            | Op::Brk
            | Op::Exit
            | Op::Ret
            | Op::Cal
            | Op::Jcal
            | Op::Jmx
            | Op::Bar { .. }
            | Op::BarRed(_)
    );
    Decoded {
        guard,
        reads,
        writes,
        late,
        lat,
        read_delay: timing::operand_read_delay(unit),
        control,
        queue: timing::queue(&i.op),
    }
}

/// One launch in progress.
pub(crate) struct Sim<'a> {
    /// The linked code (`link`): the kernel and every device function.
    func: &'a SassFunction,
    image: &'a link::Image,
    /// What `vprintf` printed.
    output: Vec<String>,
    info: Vec<Decoded>,
    banks: ConstBanks,
    global: Memory,
    rng: Rng,
    /// Generator of the initial contents of registers, shared and local memory.
    garbage: Rng,
    /// Remarks that are not errors ([`Report::notes`]), and the (instruction, barrier)
    /// pairs already remarked on.
    notes: Vec<String>,
    noted: std::collections::HashSet<(usize, u8)>,
    steps: u64,
    step_limit: u64,
    ctaid: [u32; 3],
    /// The launch's grid and seed (atomic lane order, `exec::rng::atomic_lane_order`).
    grid: [u32; 3],
    seed: u64,
    /// Chooses the MUFU error functions ([`mufu`]): `Launch::seed`, or `None` for
    /// correctly rounded estimates ([`crate::exec::MufuModel::Nearest`]).
    mufu_seed: Option<u64>,
    /// Warps of the current CTA that arrived at each barrier with BAR.ARV (without
    /// waiting) since its last release.
    arrived: [usize; 16],
    /// Per CTA, per warp: the instruction stream, when recording for the cycle model
    /// ([`run_cycles`]).
    traces: Option<cycles::LaunchTraces>,
    /// The launch's textures and surfaces (module `tex`).
    images: &'a [crate::exec::image::Image],
}

/// Byte size of a scalar parameter type such as `.u64` (None for other spellings).
fn param_size(ty: &str) -> Option<u32> {
    let t = ty.trim().trim_start_matches('.');
    let bits: u32 = t.get(1..)?.parse().ok()?;
    matches!(t.as_bytes().first(), Some(b'u' | b's' | b'b' | b'f')).then_some(bits / 8)
}

/// A successful simulation.
#[derive(Clone, Debug)]
pub struct Report {
    /// Global memory afterwards and the number of warp instructions executed.
    pub outcome: Outcome,
    /// Remarks that are not errors, at most one per instruction and barrier: a wait on a
    /// scoreboard barrier that no instruction of the warp has set yet (harmless, but a
    /// sign of an over-conservative or confused annotation).
    pub notes: Vec<String>,
}

/// Runs `launch` on `program`: every CTA of the grid, each thread from the kernel's first
/// instruction, with the scheduling annotations enforced. Returns global memory afterwards
/// and the number of warp instructions executed ([`run_report`] also returns notes).
///
/// Registers, shared memory and local memory start with garbage drawn from
/// `Launch::seed` (as on hardware, where they are not cleared), so a program whose result
/// depends on uninitialized state gives different results for different seeds.
///
/// Errors: [`ExecError::Launch`] for an unknown kernel or bad shape,
/// [`ExecError::Hazard`] for an unprotected dependence, out-of-bounds and misaligned
/// accesses, [`ExecError::Unsupported`] for opcodes and forms not modeled,
/// [`ExecError::Deadlock`] for barriers or reconvergence that cannot complete,
/// [`ExecError::StepLimit`].
pub fn run(program: &Program, launch: &Launch) -> Result<Outcome, ExecError> {
    run_report(program, launch).map(|r| r.outcome)
}

/// [`run`], also returning the notes of the run ([`Report`]).
pub fn run_report(program: &Program, launch: &Launch) -> Result<Report, ExecError> {
    run_recording(program, launch, false).map(|(r, _)| r)
}

/// [`run_report`], and the launch's cycles on the model GPU [`cycles::GM107`] (module
/// [`cycles`]: `ptx2sass run --cycles`). The warps' instruction streams are recorded, 4
/// bytes per warp instruction, and replayed on the linked and relocated code that ran.
///
/// Errors: those of [`run`], and [`ExecError::Launch`] when no CTA fits on an SM.
pub fn run_cycles(program: &Program, launch: &Launch) -> Result<(Report, cycles::Cycles), ExecError> {
    let (report, recorded) = run_recording(program, launch, true)?;
    let (traces, func) = recorded.ok_or_else(|| ExecError::Launch("the launch recorded no trace".into()))?;
    let c = cycles::replay(&func, &traces, launch.dynamic_shared, &cycles::GM107)?;
    Ok((report, c))
}

/// [`run_report`], recording the warps' instruction streams when `record` (with the code
/// they index).
fn run_recording(
    program: &Program,
    launch: &Launch,
    record: bool,
) -> Result<(Report, Option<(cycles::LaunchTraces, SassFunction)>), ExecError> {
    let kernel = program
        .functions
        .iter()
        .find(|f| f.name == launch.kernel)
        .ok_or_else(|| ExecError::Launch(format!("no kernel `{}` in the program", launch.kernel)))?;
    if kernel.kind != ".entry" {
        return Err(ExecError::Launch(format!("`{}` is a {}, not a kernel", kernel.name, kernel.kind)));
    }
    let image = link::link(program, kernel)?;
    let func = &image.func;
    let (grid, block) = (launch.grid, launch.block);
    let threads = launch.threads();
    let warps = threads.div_ceil(32);
    crate::exec::check_shape(launch, func.shared_bytes as u64, warps)?;
    // Shared memory (the kernel's static data, then the launch's dynamic bytes), every
    // thread's local frame and the warps' register files, allocated per CTA.
    // Sums and products of u32 sizes and the checked warp count: saturating, so a
    // size beyond u64 fails `check_memory` below instead of wrapping.
    let shared = (func.shared_bytes as u64).saturating_add(launch.dynamic_shared as u64);
    let regs = warps
        .saturating_mul((func.regs as u64).clamp(1, state::NUM_GPRS as u64))
        .saturating_mul((state::WARP_SIZE * 4) as u64);
    // Local memory per thread: the kernel's frame, and the stack for the functions it
    // calls (`--stack-size`, as the driver's `cudaLimitStackSize`), at least what the
    // kernel's call chain needs (EIATTR_MIN_STACK_SIZE, `cubin::link::stack_need`): "The
    // driver automatically increases the per-thread stack size for each kernel launch as
    // needed" (CUDA driver API, `cuCtxSetLimit`, CU_LIMIT_STACK_SIZE). The stack pointer
    // starts at its top and a deeper stack is an out-of-bounds access.
    let frame_bytes = if image.calls {
        let need = crate::cubin::link::stack_need(program, kernel).unwrap_or(0);
        (func.frame_bytes as u64).saturating_add(launch.stack_bytes as u64).max(u64::from(need))
    } else {
        func.frame_bytes as u64
    };
    crate::exec::check_memory(
        launch,
        "one CTA's shared, local and register memory",
        shared.saturating_add(frame_bytes.saturating_mul(threads)).saturating_add(regs),
    )?;
    // The loader: module data placed and initialized, code and data relocated.
    let mut global = launch.global.clone();
    let loaded = load::load(program, func, launch, &mut global)?;
    let func = &loaded.func;
    for (off, ty, name) in &func.params {
        if let Some(size) = param_size(ty) {
            let end = (*off as usize).saturating_sub(PARAM_BASE).saturating_add(size as usize);
            if end > launch.params.len() {
                return Err(ExecError::Launch(format!(
                    "parameter `{name}` needs bytes up to {end}, the launch has {}",
                    launch.params.len()
                )));
            }
        }
    }
    for (k, s) in func.code.iter().enumerate() {
        if s.instr.op.is_pseudo() {
            return Err(ExecError::Unsupported(format!(
                "IR pseudo-op `{}` at `{}` #{k} in a program",
                s.instr.op.name(),
                func.name
            )));
        }
    }
    let frame = frame_bytes as usize;
    let mut sim = Sim {
        func,
        image: &image,
        output: vec![],
        info: func.code.iter().map(|s| decode(&s.instr)).collect(),
        banks: ConstBanks::new(
            block,
            grid,
            frame as u32,
            launch.dynamic_shared,
            &launch.params,
            (&loaded.const_bank, &func.compiler_consts),
        ),
        global,
        rng: Rng::new(launch.seed),
        garbage: Rng::new(launch.seed ^ 0x9a4b_a9e5_eed0_0f00),
        notes: vec![],
        noted: Default::default(),
        steps: 0,
        step_limit: launch.step_limit,
        ctaid: [0; 3],
        grid,
        seed: launch.seed,
        mufu_seed: (launch.mufu == crate::exec::MufuModel::Perturbed).then_some(launch.seed),
        arrived: [0; 16],
        traces: record.then(Vec::new),
        images: &launch.images,
    };
    // One CTA's shared and local memory, garbage at the start and reused by every CTA (as
    // on hardware, which does not clear them between CTAs): a CTA costs what it executes,
    // not a fresh fill of up to the memory limit.
    let mut mem = CtaMem {
        shared: sim.garbage.bytes(shared as usize),
        // Within the memory limit (`check_memory` above), so the product does not saturate.
        local: sim.garbage.bytes(frame.saturating_mul(threads as usize)),
        frame,
    };
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                sim.ctaid = [x, y, z];
                sim.arrived = [0; 16];
                if let Some(t) = sim.traces.as_mut() {
                    t.push(vec![vec![]; warps as usize]);
                }
                sim.run_cta(block, &mut mem)?;
            }
        }
    }
    let recorded = sim.traces.map(|t| (t, func.clone()));
    Ok((
        Report { outcome: Outcome { global: sim.global, steps: sim.steps, output: sim.output }, notes: sim.notes },
        recorded,
    ))
}

impl Sim<'_> {
    /// Runs one CTA to completion.
    fn run_cta(&mut self, block: [u32; 3], mem: &mut CtaMem) -> Result<(), ExecError> {
        // At most 1024 threads (`exec::check_shape`).
        let threads = block.iter().fold(1usize, |n, &b| n.saturating_mul(b as usize));
        let mut warps: Vec<Warp> = (0..threads.div_ceil(32))
            .map(|k| {
                // Garbage in the registers the function uses (R0..R(regs-1)): the rest are
                // never read before written, and filling all 255 made a CTA's setup cost far
                // more than its instructions (a huge grid of a short kernel took minutes to
                // reach the step limit).
                let used = (self.func.regs as usize).clamp(1, state::NUM_GPRS);
                let mut w = Warp::new(k, block, used);
                for r in w.regs.iter_mut() {
                    for pair in r.chunks_mut(2) {
                        let g = self.garbage.next_u64();
                        for (v, word) in pair.iter_mut().zip([g as u32, (g >> 32) as u32]) {
                            *v = word;
                        }
                    }
                }
                w
            })
            .collect();
        loop {
            for w in warps.iter_mut() {
                while w.status == WarpStatus::Running {
                    self.step(w, mem)?;
                }
            }
            let live = warps.iter().filter(|w| w.status != WarpStatus::Done).count();
            if live == 0 {
                return Ok(());
            }
            // Every live warp waits at a barrier: release the barriers that are complete.
            let mut released = false;
            let ids: Vec<u32> = warps
                .iter()
                .filter_map(|w| if let WarpStatus::AtBarrier(id) = w.status { Some(id) } else { None })
                .collect();
            for id in ids {
                let waits = |w: &Warp| w.status == WarpStatus::AtBarrier(id);
                let Some(first) = warps.iter().find(|w| waits(w)) else {
                    continue;
                };
                let needed = self.bar_counts(first, live);
                let at = warps.iter().filter(|w| waits(w)).count();
                let arv = self.arrived.get(id as usize).copied().unwrap_or(0);
                if at.saturating_add(arv) >= needed {
                    let release = warps.iter().filter(|w| waits(w)).map(|w| w.next_issue).max().unwrap_or(0);
                    // BAR.RED: reduce the waiting warps' contributions (thread counts, at
                    // most 1024 per CTA, so the sums do not saturate).
                    let (mut votes, mut voters) = (0u32, 0u32);
                    for w in warps.iter().filter(|w| waits(w)) {
                        if let Some((_, v, n)) = w.bar_red {
                            votes = votes.saturating_add(v);
                            voters = voters.saturating_add(n);
                        }
                    }
                    for w in warps.iter_mut().filter(|w| waits(w)) {
                        if let Some((op, _, _)) = w.bar_red.take() {
                            w.b2r = match op {
                                crate::sass::op::BarRedOp::Popc => votes,
                                crate::sass::op::BarRedOp::And => (votes == voters) as u32,
                                crate::sass::op::BarRedOp::Or => (votes > 0) as u32,
                            };
                        }
                        w.status = WarpStatus::Running;
                        w.next_issue = release;
                    }
                    if let Some(a) = self.arrived.get_mut(id as usize) {
                        *a = 0;
                    }
                    released = true;
                }
            }
            if !released {
                let waiting: Vec<String> = warps
                    .iter()
                    .filter_map(|w| match w.status {
                        // The BAR it executed is the instruction before `pc` (pc >= 1).
                        WarpStatus::AtBarrier(id) => {
                            Some(format!("warp {} at barrier {id} (#{})", w.index, w.pc.saturating_sub(1)))
                        }
                        _ => None,
                    })
                    .collect();
                return Err(ExecError::Deadlock(format!(
                    "`{}` CTA {:?}: {} of {live} live warps wait: {}",
                    self.func.name,
                    self.ctaid,
                    waiting.len(),
                    waiting.join(", ")
                )));
            }
        }
    }

    /// Warps needed to release the barrier the warp `w` (one of those waiting) waits on:
    /// all live warps, or `count / 32` when `BAR.SYNC id, count` gives a thread count.
    fn bar_counts(&self, w: &Warp, live: usize) -> usize {
        // The BAR the warp executed is the instruction before `pc`.
        let Some(s) = w.pc.checked_sub(1).and_then(|k| self.func.code.get(k)) else {
            return live;
        };
        // BAR.SYNC id, count / BAR.RED.op id, count, Pc: the count is the second source
        // unless that is BAR.RED's predicate.
        let count = s.instr.srcs.get(1).filter(|s| !matches!(s.kind, SrcKind::Pred(_)));
        match count.map(|s| w.gather(s, &self.banks, w.active)) {
            Some(Ok(v)) => {
                let lane = w.active.trailing_zeros().min(31) as usize;
                (v.at(lane) as usize).div_ceil(32).max(1)
            }
            _ => live,
        }
    }

    /// The hazard error for instruction `k`.
    fn hazard(&self, k: usize, c: Conflict) -> ExecError {
        let text = |j: usize| {
            self.func.code.get(j).map_or(String::from("?"), |s| {
                instr_text(&s.instr, self.func, &|t| format!("0x{:x}", address(t as usize)))
            })
        };
        let (owner, local) = self.image.owner(k);
        let at = format!("`{owner}` #{local} /*{:04x}*/ `{}`", address(local), text(k));
        let sb = |b: Option<u8>| b.map_or("none set".to_string(), |b| format!("SB{b}"));
        ExecError::Hazard(match c {
            Conflict::TooEarly { reg, producer, ready, at: t } => format!(
                "{at} reads {reg} at cycle {t}, before `{}` (#{producer}) makes it visible at cycle {ready}: \
                 the stall counts are shorter than its fixed latency",
                text(producer)
            ),
            Conflict::Unwaited { reg, producer, barrier, overwrite } => format!(
                "{at} {} {reg} without waiting for the write barrier ({}) of `{}` (#{producer})",
                if overwrite { "overwrites" } else { "reads" },
                sb(barrier),
                text(producer)
            ),
            Conflict::StillRead { reg, reader, barrier } => format!(
                "{at} overwrites {reg} while `{}` (#{reader}) may still read it: no wait on its read barrier ({})",
                text(reader),
                sb(barrier)
            ),
        })
    }

    /// Issues and executes the warp's next instruction.
    fn step(&mut self, w: &mut Warp, mem: &mut CtaMem) -> Result<(), ExecError> {
        let func = self.func;
        let k = w.pc;
        let Some(s) = func.code.get(k) else {
            return Err(ExecError::Unsupported(format!(
                "`{}`: warp {} ran past the last instruction (#{k})",
                func.name, w.index
            )));
        };
        self.steps = self.steps.saturating_add(1); // stops at step_limit < u64::MAX
        if self.steps > self.step_limit {
            return Err(ExecError::StepLimit(self.step_limit));
        }
        let Some(&d) = self.info.get(k) else {
            return Err(ExecError::Unsupported(format!("internal: no decoded form of instruction #{k}")));
        };
        let depbar = if let Op::Depbar { sb, count } = s.instr.op { Some((sb, count)) } else { None };
        let mut waits = s.ctrl.wait;
        if let Some((b, _)) = depbar {
            waits |= 1 << (b % 6);
        }
        for b in 0..6u8 {
            if waits >> b & 1 == 1 && !w.sb.ever_set(b) && self.noted.insert((k, b)) {
                self.notes.push(format!(
                    "`{}` #{k} /*{:04x}*/ waits on SB{b}, which warp {} has not set yet",
                    func.name,
                    address(k),
                    w.index
                ));
            }
        }
        let t = w.sb.issue(w.next_issue, s.ctrl.wait, depbar);
        w.sb.check(t, &d.guard, w.active, &RegSet::default(), 0).map_err(|c| self.hazard(k, c))?;
        let guard = match s.instr.guard {
            Some(g) => {
                let m = w.pred(g.pred);
                if g.neg { !m } else { m }
            }
            None => u32::MAX,
        };
        let exec = w.active & guard;
        w.sb.check_at(t, d.read_delay, &d.reads, exec, (&d.writes, exec), d.queue).map_err(|c| self.hazard(k, c))?;
        if d.control && s.ctrl.stall < timing::CONTROL_MIN_STALL {
            return Err(ExecError::Hazard(format!(
                "`{}` #{k} /*{:04x}*/ `{}`: stall {} after a control instruction (at least {})",
                func.name,
                address(k),
                s.instr.op.name(),
                s.ctrl.stall,
                timing::CONTROL_MIN_STALL
            )));
        }
        w.pc = k.saturating_add(1); // k indexes `code`, so k + 1 <= code.len()
        // Cycles: a u64 count that no launch within the step limit comes near.
        w.next_issue = t.saturating_add(s.ctrl.stall as u64);
        self.exec(w, mem, &s.instr, k, exec)?;
        if let Some(tw) = self.traces.as_mut().and_then(|t| t.last_mut()).and_then(|t| t.get_mut(w.index)) {
            tw.push(cycles::entry(k, exec, w.status));
        }
        match d.lat {
            Latency::Fixed { .. } => w.sb.record_fixed(k, t, &d.writes, exec, d.lat),
            Latency::Variable { min, max, .. } => {
                // A result cannot be written before the instruction has read its
                // operands (a MUFU that reads R4 4 cycles late and writes R4 completes after
                // an older FMUL's write of R4, ptxas 11.8's `__cuda_sm20_div_u16`).
                let delay = self.rng.delay(min, max).max(d.read_delay.saturating_add(1));
                let read_delay = self.rng.range(1, delay.max(1));
                w.sb.record_variable(
                    k,
                    t,
                    (s.ctrl.wr, s.ctrl.rd),
                    &d.writes,
                    &d.late,
                    exec,
                    (delay, read_delay),
                    d.queue,
                );
            }
        }
        Ok(())
    }

    /// The semantics of instruction `k` for the threads of `exec`.
    fn exec(&mut self, w: &mut Warp, mem: &mut CtaMem, i: &Instr, k: usize, exec: u32) -> Result<(), ExecError> {
        // SPA 5.0 barriers count warps: a warp arriving with some of its live threads
        // parked on the reconvergence stack counts as all of them, and those threads run
        // later, after the barrier released (missing reconvergence).
        if matches!(i.op, Op::Bar { .. } | Op::BarRed(_)) && exec != 0 && exec != !w.exited {
            return Err(ExecError::Divergence(format!(
                "`{}` #{k} /*{:04x}*/ `{}` reached by threads 0x{exec:08x} of warp {} whose live threads are 0x{:08x}",
                self.func.name,
                address(k),
                i.op.name(),
                w.index,
                !w.exited
            )));
        }
        match i.op {
            // CCTL prefetches: no architectural effect.
            Op::Nop | Op::Membar(_) | Op::Depbar { .. } | Op::Cctl { .. } => Ok(()),
            Op::Bar { arrive: false } => {
                if exec != 0 {
                    let lane = exec.trailing_zeros() as usize;
                    let id = match i.srcs.first() {
                        Some(s) => w.gather(s, &self.banks, exec)?.at(lane),
                        None => 0,
                    };
                    w.status = WarpStatus::AtBarrier(id);
                }
                Ok(())
            }
            Op::Bar { arrive: true } => {
                // Arrives without waiting; counted toward the barrier's next release.
                if exec != 0 {
                    let lane = exec.trailing_zeros() as usize;
                    let id = match i.srcs.first() {
                        Some(s) => w.gather(s, &self.banks, exec)?.at(lane),
                        None => 0,
                    };
                    let Some(a) = self.arrived.get_mut(id as usize) else {
                        return Err(ExecError::Unsupported(format!("barrier id {id} (ids are 0..15)")));
                    };
                    *a = a.saturating_add(1); // at most one per warp and barrier phase
                }
                Ok(())
            }
            Op::BarRed(op) => {
                if exec != 0 {
                    let lane = exec.trailing_zeros() as usize;
                    let id = match i.srcs.first() {
                        Some(s) => w.gather(s, &self.banks, exec)?.at(lane),
                        None => 0,
                    };
                    let p = i.srcs.last().ok_or_else(|| ExecError::Unsupported("BAR.RED predicate".into()))?;
                    let votes = w.pred_src(p)? & exec;
                    w.bar_red = Some((op, votes.count_ones(), exec.count_ones()));
                    w.status = WarpStatus::AtBarrier(id);
                }
                Ok(())
            }
            Op::B2r => {
                // B2R.RESULT Rd{, Pd}.
                if let Some(Dst::Reg(r)) = i.dsts.first() {
                    w.write32(*r, exec, &[w.b2r; state::WARP_SIZE]);
                }
                if let Some(Dst::Pred(p)) = i.dsts.get(1) {
                    w.set_pred(*p, exec, if w.b2r != 0 { u32::MAX } else { 0 });
                }
                Ok(())
            }
            // BPT.TRAP ends the launch; BPT.INT without a debugger attached goes on.
            Op::Bpt { trap: true } if exec != 0 => Err(ExecError::Trap { ctaid: self.ctaid }),
            Op::Bpt { .. } => Ok(()),
            Op::Ld(_) | Op::St(_) | Op::Ldg(_) | Op::Stg(_) | Op::Lds(_) | Op::Sts(_) | Op::Ldl(_) | Op::Stl(_) => {
                if exec == 0 {
                    Ok(())
                } else {
                    self.exec_mem(w, mem, i, exec)
                }
            }
            Op::Ldc { .. } => self.exec_mem(w, mem, i, exec),
            Op::Atom(_) | Op::Atoms(_) | Op::Red(_) => self.exec_atom(w, mem, i, exec),
            Op::Shfl(_) | Op::Vote(_) => self.exec_warp(w, i, exec),
            Op::Texs { .. }
            | Op::Tlds { .. }
            | Op::Tld4s { .. }
            | Op::Tex { .. }
            | Op::Tld { .. }
            | Op::Tld4 { .. }
            | Op::Txd { .. }
            | Op::Txq { .. }
            | Op::Suld { .. }
            | Op::Sust { .. }
            | Op::Sured { .. }
            | Op::SustP { .. } => self.exec_tex(w, i, exec).map(|_| ()),
            Op::Copy | Op::Join | Op::Undef => {
                Err(ExecError::Unsupported(format!("IR pseudo-op `{}` in a program", i.op.name())))
            }
            _ => {
                if self.exec_control(w, mem, i, k, exec)?
                    || self.exec_alu(w, i, exec)?
                    || self.exec_int(w, i, exec)?
                    || self.exec_float(w, i, exec)?
                    || self.exec_ext(w, i, exec)?
                {
                    Ok(())
                } else {
                    Err(ExecError::Unsupported(i.op.name()))
                }
            }
        }
    }
}
