//! A cycle model of whole launches (`ptx2sass run --cycles`, issue 16): how many cycles a
//! launch of a kernel takes on a Maxwell GPU of compute capability 5.0, given its SASS
//! and control words.
//!
//! The functional simulation (module `sim`) records each warp's dynamic instruction
//! stream (instruction indices in execution order, and whether a `BAR` made the warp
//! wait); [`replay`] then times those streams on a model machine ([`Machine`]):
//!
//! * **CTAs to SMs**: CTAs are handed out in launch order to the SM with a free slot,
//!   first round robin, then to whichever SM retires a CTA first. An SM holds as many CTAs
//!   as its warp slots, registers, shared memory and CTA slots allow ([`occupancy`]; CUDA
//!   C Programming Guide, "Technical Specifications per Compute Capability", CC 5.0:
//!   64 warps, 32 CTAs, 64 K registers, 64 KiB shared memory per SM; registers allocated
//!   per warp in units of 256, shared memory in units of 256 bytes, as the CUDA Occupancy
//!   Calculator for CC 5.x).
//! * **Schedulers**: an SM has 4 warp schedulers (Maxwell GM107 whitepaper: "four warp
//!   schedulers" per SMM, each with its own 32 CUDA cores, 8 load/store and 8 SFU units);
//!   warp `n` of an SM belongs to scheduler `n mod 4`. Each cycle each scheduler issues
//!   from one warp: the warp it issued from last if that is ready and its last instruction
//!   did not set the yield hint, else the oldest ready warp (greedy-then-oldest). An
//!   instruction with stall 0 lets the same warp issue its next instruction in the same
//!   cycle (dual issue, ptxas findings section 7), at most 2 per scheduler and cycle.
//! * **Readiness from the control word** (ptxas findings section 7): a warp's next
//!   instruction issues no earlier than `stall` cycles after the previous one, and after
//!   every scoreboard barrier in its wait mask has completed (`DEPBAR.LE SBb, k`: all but
//!   the `k` youngest). Fixed-latency dependences need no tracking: the stall counts
//!   cover them (the functional run has checked that they do).
//! * **Variable latencies** ([`CYCLE_TABLE`]): a write barrier completes `result` cycles
//!   after issue, a read barrier `read` cycles after issue; completions on one barrier
//!   are in order.
//! * **Throughput**: an instruction occupies its unit in its scheduler's partition for
//!   `issue` cycles (32 lanes over the partition's lanes of that unit).
//! * **CTA barriers**: a warp that waited at `BAR.SYNC` in the functional run waits here
//!   until every warp of its CTA that has not finished is waiting too.
//!
//! Not modelled: memory bandwidth, coalescing, caches (every global access takes the
//! DRAM latency), shared-memory bank conflicts, the instruction cache, register-bank
//! conflicts and the operand reuse cache, the thread-count operand of `BAR.SYNC`, launch
//! and CTA dispatch overheads, clocks (cycles are SM cycles). The model is deterministic:
//! the seed only changes the data, and so the paths the warps take.

use super::state::WarpStatus;
use crate::exec::ExecError;
use crate::sass::op::{Op, Unit};
use crate::sass::program::SassFunction;
use std::collections::VecDeque;

/// The modelled GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Warp schedulers per SM.
    pub schedulers: u32,
    /// Resident warps per SM.
    pub max_warps: u32,
    /// Resident CTAs per SM.
    pub max_ctas: u32,
    /// 32-bit registers per SM.
    pub regs: u32,
    /// Registers are allocated per warp in multiples of this.
    pub reg_granule: u32,
    /// Shared memory bytes per SM.
    pub shared: u32,
    /// Shared memory is allocated per CTA in multiples of this many bytes.
    pub shared_granule: u32,
}

/// A GeForce GTX 750 Ti (GM107, compute capability 5.0, 5 SMs; CUDA C Programming Guide,
/// technical specifications for CC 5.0; Maxwell GM107 whitepaper).
pub const GM107: Machine = Machine {
    sms: 5,
    schedulers: 4,
    max_warps: 64,
    max_ctas: 32,
    regs: 65536,
    reg_granule: 256,
    shared: 65536,
    shared_granule: 256,
};

/// Timing of one unit in the cycle model (cycles).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitTiming {
    /// Issue to write-barrier completion (variable-latency results).
    pub result: u64,
    /// Issue to read-barrier completion (sources read).
    pub read: u64,
    /// Cycles the instruction occupies its unit in one scheduler's partition.
    pub issue: u64,
}

/// Timing per unit, with sources:
/// * ALU, control: results after 6 cycles (findings section 7, as the stall counts
///   encode); one warp instruction per cycle and partition (32 FP32 cores per partition,
///   GM107 whitepaper).
/// * FP64: 4 results per clock per SM for CC 5.x (CUDA C Programming Guide, arithmetic
///   instruction throughput), so a warp occupies a partition's unit for 32 cycles; its
///   result latency (48) is this model's choice.
/// * Conversions, MUFU/POPC/FLO: 32 results per clock per SM (programming guide), so 4
///   cycles per warp and partition; result latencies (14, 20) are this model's choice.
/// * Global and local memory: 350 cycles, the order of Mei and Chu's DRAM access latency
///   on Maxwell ("Dissecting GPU Memory Hierarchy through Microbenchmarking", IEEE TPDS
///   2017, GTX 980; an L2 hit is about 200); shared memory: 28 cycles without bank
///   conflicts (same paper, Maxwell); 8 load/store units per partition, so 4 cycles per
///   warp. Sources of late-reading instructions are read within the 14-cycle window
///   ptxas relies on (`timing::LATE_READ_WINDOW`).
/// * LDC and S2R: 20 cycles, this model's choice.
pub const CYCLE_TABLE: &[(Unit, UnitTiming)] = &[
    (Unit::Pseudo, UnitTiming { result: 6, read: 1, issue: 1 }),
    (Unit::Alu, UnitTiming { result: 6, read: 1, issue: 1 }),
    (Unit::Control, UnitTiming { result: 6, read: 1, issue: 1 }),
    (Unit::Fp64, UnitTiming { result: 48, read: 14, issue: 32 }),
    (Unit::Conv, UnitTiming { result: 14, read: 14, issue: 4 }),
    (Unit::Xu, UnitTiming { result: 20, read: 4, issue: 4 }),
    (Unit::Sreg, UnitTiming { result: 20, read: 1, issue: 1 }),
    (Unit::Mem, UnitTiming { result: 350, read: super::timing::LATE_READ_WINDOW, issue: 4 }),
    (Unit::Shared, UnitTiming { result: 28, read: super::timing::LATE_READ_WINDOW, issue: 4 }),
    (Unit::Const, UnitTiming { result: 20, read: 4, issue: 1 }),
    // Texture unit: a texture-cache hit is a few hundred cycles on Maxwell (Mei and Chu,
    // as for global memory above); this model's choice, like the global figure.
    (Unit::Tex, UnitTiming { result: 350, read: super::timing::LATE_READ_WINDOW, issue: 4 }),
];

/// The timing of `unit` from [`CYCLE_TABLE`].
pub fn unit_timing(unit: Unit) -> UnitTiming {
    CYCLE_TABLE.iter().find(|(u, _)| *u == unit).map_or(UnitTiming { result: 6, read: 1, issue: 1 }, |(_, t)| *t)
}

/// What limits the CTAs resident per SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// The SM's warp slots.
    Warps,
    /// The SM's CTA slots.
    Ctas,
    /// The register file.
    Registers,
    /// Shared memory.
    Shared,
}

/// CTAs resident per SM for a kernel using `regs` registers per thread, `shared` bytes of
/// shared memory (static plus dynamic) per CTA and `warps` warps per CTA, and what limits
/// it. `Err` when not even one CTA fits.
pub fn occupancy(m: &Machine, regs: u32, shared: u32, warps: u32) -> Result<(u32, Limit), String> {
    // Allocations rounded up to their granules; a size beyond u32 (or a zero granule)
    // saturates, and then no CTA fits.
    let round = |n: u32, granule: u32| n.checked_next_multiple_of(granule).unwrap_or(u32::MAX);
    let per_warp = round(regs.max(1).saturating_mul(32), m.reg_granule);
    let mut best = (m.max_ctas, Limit::Ctas);
    let mut cap = |n: Option<u32>, l: Limit| {
        let n = n.unwrap_or(0); // a zero divisor only from a zero granule: nothing fits
        if n < best.0 {
            best = (n, l);
        }
    };
    cap(m.max_warps.checked_div(warps.max(1)), Limit::Warps);
    cap(m.regs.checked_div(per_warp.saturating_mul(warps.max(1))), Limit::Registers);
    if shared > 0 {
        cap(m.shared.checked_div(round(shared, m.shared_granule)), Limit::Shared);
    }
    if best.0 == 0 {
        return Err(format!(
            "no CTA fits on an SM ({warps} warps, {regs} registers per thread, {shared} bytes of shared memory)"
        ));
    }
    Ok(best)
}

/// The result of [`replay`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cycles {
    /// Cycles from the launch until the last warp's results are written.
    pub cycles: u64,
    /// Resident CTAs per SM and what limits them.
    pub ctas_per_sm: (u32, Limit),
    /// Warp instructions issued.
    pub issued: u64,
    /// The machine.
    pub machine: Machine,
}

/// One warp's recorded stream: instruction indices, with the flags [`WAITED`] and
/// [`IDLE`].
pub(super) type Trace = Vec<u32>;
/// Per CTA, per warp: the streams of a launch.
pub(super) type LaunchTraces = Vec<Vec<Trace>>;
/// The flag on a trace entry for a `BAR` the warp waited at.
pub(super) const WAITED: u32 = 1 << 31;
/// The flag on a trace entry for an instruction that no lane executed (inactive or
/// guarded off): it issues, but a memory instruction sends no request, so its barriers
/// complete one cycle after issue (this model's choice).
pub(super) const IDLE: u32 = 1 << 30;
const FLAGS: u32 = WAITED | IDLE;

/// The trace entry for instruction `k` after it executed for the lanes `exec`, leaving
/// the warp in `status`.
pub(super) fn entry(k: usize, exec: u32, status: WarpStatus) -> u32 {
    k as u32 | if matches!(status, WarpStatus::AtBarrier(_)) { WAITED } else { 0 } | if exec == 0 { IDLE } else { 0 }
}

/// Static facts of one instruction for the replay.
struct Static {
    stall: u64,
    yield_hint: bool,
    wait: u8,
    wr: Option<u8>,
    rd: Option<u8>,
    depbar: Option<(u8, u8)>,
    unit: usize,
    timing: UnitTiming,
}

/// A resident warp in the replay.
struct WarpState {
    sm: usize,
    sched: usize,
    cta: usize,
    trace: usize,
    pos: usize,
    ready: u64,
    /// Pending completion times per scoreboard barrier, in order.
    sb: [VecDeque<u64>; 6],
    at_bar: bool,
    done: Option<u64>,
    yielded: bool,
}

impl WarpState {
    /// The length of the warp's recorded trace.
    fn trace_len(&self, ctas: &[Vec<Trace>]) -> usize {
        ctas.get(self.cta).and_then(|c| c.get(self.trace)).map_or(0, |t| t.len())
    }
    /// The trace entry of the warp's next instruction (it is not done, so there is one).
    fn next_entry(&self, ctas: &[Vec<Trace>]) -> Result<u32, ExecError> {
        ctas.get(self.cta)
            .and_then(|c| c.get(self.trace))
            .and_then(|t| t.get(self.pos))
            .copied()
            .ok_or_else(|| internal("a warp past the end of its trace"))
    }
    /// The static facts of the warp's next instruction.
    fn next_static<'a>(&self, ctas: &[Vec<Trace>], stat: &'a [Static]) -> Result<&'a Static, ExecError> {
        static_of(stat, self.next_entry(ctas)?)
    }
    /// The warp's scheduler slot, `sm * schedulers + sched` (below `sms * schedulers`).
    fn slot(&self, scheds: usize) -> usize {
        self.sm.saturating_mul(scheds).saturating_add(self.sched)
    }
    /// The earliest cycle at which instruction `s` can issue, as far as this warp is
    /// concerned (stall, scoreboard waits).
    fn earliest(&self, s: &Static) -> u64 {
        let mut t = self.ready;
        for (b, q) in self.sb.iter().enumerate() {
            if s.wait >> b & 1 == 1
                && let Some(&last) = q.back()
            {
                t = t.max(last);
            }
        }
        // DEPBAR.LE SBb, k: the (k+1)-th youngest completion on SBb.
        if let Some((b, k)) = s.depbar
            && let Some(&done) = self.sb.get(b as usize % 6).and_then(|q| q.iter().rev().nth(k as usize))
        {
            t = t.max(done);
        }
        t
    }
}

/// Times the recorded warp streams `ctas` (per CTA, per warp) of a launch of `func` with
/// `dynamic_shared` extra bytes on machine `m` (module docs).
pub(super) fn replay(
    func: &SassFunction,
    ctas: &[Vec<Trace>],
    dynamic_shared: u32,
    m: &Machine,
) -> Result<Cycles, ExecError> {
    const UNITS: usize = 16;
    let units: Vec<Unit> = CYCLE_TABLE.iter().map(|(u, _)| *u).collect();
    let stat: Vec<Static> = func
        .code
        .iter()
        .map(|s| {
            let unit = s.instr.op.info().unit;
            Static {
                stall: s.ctrl.stall as u64,
                yield_hint: s.ctrl.yield_hint,
                wait: s.ctrl.wait,
                wr: s.ctrl.wr,
                rd: s.ctrl.rd,
                depbar: if let Op::Depbar { sb, count } = s.instr.op { Some((sb, count)) } else { None },
                unit: units.iter().position(|u| *u == unit).unwrap_or(0) % UNITS,
                timing: unit_timing(unit),
            }
        })
        .collect();
    let warps_per_cta = ctas.first().map_or(1, |c| c.len() as u32);
    // Within the shared-memory limit `exec::check_shape` enforces: the sum does not saturate.
    let shared = func.shared_bytes.saturating_add(dynamic_shared);
    let occ = occupancy(m, func.regs, shared, warps_per_cta).map_err(ExecError::Launch)?;
    let sms = m.sms as usize;
    let scheds = m.schedulers as usize;
    // One slot per scheduler of each SM (20 on GM107).
    let slots = sms.saturating_mul(scheds);
    let mut warps: Vec<WarpState> = vec![];
    // Resident CTAs: (CTA, SM, warps not finished).
    let mut running: Vec<(usize, usize, usize)> = vec![];
    // Warps ever placed per SM (scheduler assignment).
    let mut placed = vec![0usize; sms];
    let mut unit_free = vec![[0u64; UNITS]; slots];
    let mut last = vec![usize::MAX; slots];
    // Cycle and instruction counts below stay far from u64::MAX (the functional run is
    // bounded by its step limit), and CTA and warp counts are bounded by the launch, so
    // the saturating operations never saturate.
    let (mut now, mut issued, mut end, mut next_cta) = (0u64, 0u64, 0u64, 0usize);
    let place = |sm: usize, cta: usize, at: u64, warps: &mut Vec<WarpState>, placed: &mut Vec<usize>| {
        let traces = ctas.get(cta).map_or(&[][..], |c| c.as_slice());
        for (w, trace) in traces.iter().enumerate() {
            let n = placed.get(sm).copied().unwrap_or(0);
            warps.push(WarpState {
                sm,
                sched: n.checked_rem(scheds).unwrap_or(0),
                cta,
                trace: w,
                pos: 0,
                ready: at,
                sb: Default::default(),
                at_bar: false,
                done: if trace.is_empty() { Some(at) } else { None },
                yielded: false,
            });
            if let Some(p) = placed.get_mut(sm) {
                *p = n.saturating_add(1);
            }
        }
        (cta, sm, traces.iter().filter(|t| !t.is_empty()).count())
    };
    // The first wave, round robin over the SMs.
    'fill: for _ in 0..occ.0 {
        for sm in 0..sms {
            if next_cta == ctas.len() {
                break 'fill;
            }
            running.push(place(sm, next_cta, 0, &mut warps, &mut placed));
            next_cta = next_cta.saturating_add(1);
        }
    }
    let mut pick = vec![usize::MAX; slots];
    while !running.is_empty() {
        let mut any = false;
        let mut next = u64::MAX;
        // Candidates: per scheduler, the warp it issued from last if ready and not
        // yielded, else the oldest ready one (warps are in placement order).
        pick.iter_mut().for_each(|p| *p = usize::MAX);
        for (i, w) in warps.iter().enumerate() {
            if w.done.is_some() || w.at_bar {
                continue;
            }
            let s = w.next_static(ctas, &stat)?;
            let slot = w.slot(scheds);
            let t = w.earliest(s).max(unit_free.get(slot).and_then(|u| u.get(s.unit)).copied().unwrap_or(0));
            if t > now {
                next = next.min(t);
                continue;
            }
            if let Some(p) = pick.get_mut(slot)
                && (*p == usize::MAX || (last.get(slot) == Some(&i) && !w.yielded))
            {
                *p = i;
            }
        }
        for (slot, &i) in pick.iter().enumerate() {
            // Up to two instructions of the warp this cycle (dual issue after stall 0).
            for n in 0..2 {
                let Some(w) = warps.get_mut(i) else {
                    break; // no candidate (usize::MAX)
                };
                if w.done.is_some() || w.at_bar {
                    break;
                }
                let e = w.next_entry(ctas)?;
                let s = static_of(&stat, e)?;
                let Some(free) = unit_free.get_mut(slot).and_then(|u| u.get_mut(s.unit)) else {
                    return Err(internal("a scheduler slot or unit out of range"));
                };
                if n > 0 && (w.earliest(s) > now || *free > now) {
                    break;
                }
                any = true;
                issued = issued.saturating_add(1);
                *free = now.saturating_add(s.timing.issue);
                // Waited barriers are consumed.
                for (b, q) in w.sb.iter_mut().enumerate() {
                    if s.wait >> b & 1 == 1 {
                        q.retain(|&t| t > now);
                    }
                }
                if let Some((b, _)) = s.depbar
                    && let Some(q) = w.sb.get_mut(b as usize % 6)
                {
                    q.retain(|&t| t > now);
                }
                let push = |q: &mut VecDeque<u64>, t: u64| {
                    let t = t.max(q.back().copied().unwrap_or(0));
                    q.push_back(t);
                };
                let idle = e & IDLE != 0;
                if let Some(q) = s.wr.and_then(|b| w.sb.get_mut(b as usize % 6)) {
                    push(q, now.saturating_add(if idle { 1 } else { s.timing.result }));
                }
                if let Some(q) = s.rd.and_then(|b| w.sb.get_mut(b as usize % 6)) {
                    push(q, now.saturating_add(if idle { 1 } else { s.timing.read }));
                }
                w.ready = now.saturating_add(s.stall);
                w.yielded = s.yield_hint;
                w.at_bar = e & WAITED != 0;
                w.pos = w.pos.saturating_add(1);
                if let Some(l) = last.get_mut(slot) {
                    *l = i;
                }
                if w.trace_len(ctas) == w.pos {
                    let drain = w.sb.iter().filter_map(|q| q.back().copied()).max().unwrap_or(0);
                    w.done = Some(drain.max(now.saturating_add(1)));
                    if let Some(r) = running.iter_mut().find(|r| r.0 == w.cta) {
                        r.2 = r.2.saturating_sub(1);
                    }
                }
                if s.stall != 0 {
                    break;
                }
            }
        }
        // CTA barriers: release when every unfinished warp of the CTA waits.
        let barriers = warps.iter().any(|w| w.at_bar);
        for &(c, _, live) in running.iter().filter(|_| barriers) {
            let waiting = warps.iter().filter(|w| w.cta == c && w.at_bar).count();
            if waiting > 0 && waiting == live {
                for w in warps.iter_mut().filter(|w| w.cta == c) {
                    w.at_bar = false;
                    w.ready = w.ready.max(now.saturating_add(1));
                }
                any = true;
            }
        }
        // Retire finished CTAs (their last results written); start the next ones on the
        // freed SMs.
        let mut k = 0;
        while let Some(&(c, sm, live)) = running.get(k) {
            if live == 0 {
                let t = warps.iter().filter(|w| w.cta == c).filter_map(|w| w.done).max().unwrap_or(now);
                if t <= now {
                    end = end.max(t);
                    warps.retain(|w| w.cta != c);
                    last.iter_mut().for_each(|l| *l = usize::MAX);
                    running.swap_remove(k);
                    if next_cta < ctas.len() {
                        running.push(place(sm, next_cta, now.saturating_add(1), &mut warps, &mut placed));
                        next_cta = next_cta.saturating_add(1);
                    }
                    any = true;
                    continue;
                }
                next = next.min(t);
            }
            k = k.saturating_add(1); // k < running.len()
        }
        if running.is_empty() {
            break;
        }
        now = if any {
            now.saturating_add(1)
        } else if next == u64::MAX {
            return Err(stuck(&warps));
        } else {
            next
        };
    }
    Ok(Cycles { cycles: end.max(now), ctas_per_sm: occ, issued, machine: *m })
}

/// An inconsistency of the recorded traces with the function (a simulator bug).
fn internal(what: &str) -> ExecError {
    ExecError::Unsupported(format!("internal error in the cycle model: {what}"))
}

/// The static facts of the instruction of trace entry `e`.
fn static_of(stat: &[Static], e: u32) -> Result<&Static, ExecError> {
    stat.get((e & !FLAGS) as usize).ok_or_else(|| internal("a trace entry beyond the function"))
}

/// The error for warps that can never issue again (every one waits at a CTA barrier that
/// cannot release; the functional run would have reported it first).
fn stuck(warps: &[WarpState]) -> ExecError {
    ExecError::Deadlock(format!("cycle model: {} warps wait at CTA barriers that cannot release", warps.len()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_follows_the_limits() {
        // 256 threads, 32 registers: 8 warps x 1024 registers; warps allow 8 CTAs,
        // registers 8.
        assert_eq!(occupancy(&GM107, 32, 0, 8), Ok((8, Limit::Warps)));
        // 64 registers: 2048 per warp, 4 CTAs of 8 warps.
        assert_eq!(occupancy(&GM107, 64, 0, 8), Ok((4, Limit::Registers)));
        // 20 KiB of shared memory: 3 CTAs.
        assert_eq!(occupancy(&GM107, 16, 20 * 1024, 2), Ok((3, Limit::Shared)));
        // One warp, few registers: the 32 CTA slots.
        assert_eq!(occupancy(&GM107, 8, 0, 1), Ok((32, Limit::Ctas)));
        // 255 registers x 32 warps do not fit.
        assert!(occupancy(&GM107, 255, 0, 32).is_err());
    }
}
