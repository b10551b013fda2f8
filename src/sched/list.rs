//! Pre-allocation list scheduler: reorders the instructions of every basic block of an
//! SSA function to hide latency (loads early, their consumers late) while bounding
//! register pressure, before register allocation assigns registers.
//!
//! A block is cut into regions at instructions that nothing may cross ([`is_fence`]:
//! branches, `SSY`/`PBK`, `BAR`, `MEMBAR`, `DEPBAR`, clock reads, and memory
//! instructions the table does not classify), and into windows of at most [`WINDOW`]
//! instructions, which bounds the work on huge blocks. In each region a dependence DAG
//! ([`super::dag`]) has an edge for every read after write (weighted by the producer's
//! latency: [`table::timing`] for fixed-latency results, [`table::nominal_latency`] for
//! variable ones), write after read, write after write (virtual and physical registers,
//! predicates, CC), and orders every pair of memory accesses that may conflict
//! ([`table::mem_access`]: at least one store, or an observable access, in overlapping
//! spaces, unless both use the same base register with disjoint byte ranges).
//!
//! The scheduler is a cycle-driven list scheduler ([`super::ready`]): among the
//! instructions whose predecessors are issued and whose operands are ready, it issues the
//! one with the longest latency-weighted path to the end of the region (ties: original
//! order). A candidate that would raise the number of live 32-bit registers above the
//! limit is passed over while another is within it; the limit is the larger of the
//! region's pressure in the original order and [`PRESSURE_TARGET`] (lowered under a tight
//! `--maxrregcount`), so reordering never needs more registers than the original order
//! where that order was already above the target. Predicates are bounded the same way by
//! the 7 predicate registers. The bound is greedy: when every ready instruction raises
//! pressure, the least harmful one issues, so a schedule can end above the limit. It is
//! then retried with a lower limit, from the first step where the lower limit changes a
//! choice; the best attempt is kept if it exceeds the limit by at most [`slack`],
//! otherwise the region keeps its original order.
//!
//! Time: linear in the block for the liveness walk and the register dependences,
//! `n log n` for the ready list; the memory dependences are near-linear ([`super::dag`])
//! and at worst quadratic within a window.

use super::dag;
use super::ready::{self, Attempt, Region};
use super::table::{self, mem_access};
use crate::ir::{Function, VRegKind, for_each_def, for_each_use};
use crate::sass::instr::Instr;
use crate::sass::op::{Op, SpecialReg, Unit};

/// Live 32-bit registers the scheduler may use to hide latency where the original order
/// needs fewer. 32 keeps a Maxwell SM at full occupancy (64K registers for 2048 threads).
pub const PRESSURE_TARGET: u32 = 32;

/// Predicate registers P0..P6 (more live predicates are demoted to GPRs by allocation).
pub(super) const PRED_TARGET: u32 = 7;

/// Most instructions scheduled together: longer fence-free runs are cut into windows of
/// this size, scheduled one after the other. Larger than any block of the samples
/// (`stress_spill`: 2,205 instructions after allocation, 5,546 with
/// `--maxrregcount 16`), so it only changes huge generated blocks, where it bounds the
/// time per instruction.
pub const WINDOW: usize = 8192;

/// True for instructions that start a new scheduling region: nothing moves across them.
/// The control unit's ops are all fences (branches, `EXIT`, `SSY`/`PBK`, `SYNC`/`BRK`,
/// `BAR`, `MEMBAR`, `DEPBAR`, calls); so are calls and a device function's parameter
/// words before allocation, `NOP`, clock reads, and memory instructions the table does
/// not classify.
pub fn is_fence(i: &Instr) -> bool {
    let info = i.op.info();
    info.unit == Unit::Control
        || matches!(
            i.op,
            Op::Call(_)
                | Op::Params
                | Op::Nop
                | Op::S2r(SpecialReg::ClockLo | SpecialReg::ClockHi)
                | Op::Cs2r(SpecialReg::ClockLo | SpecialReg::ClockHi)
                // Surface loads and stores stay in program order with every memory access
                // (the surface is memory the kernel may also reach through pointers).
                | Op::Suld { .. }
                | Op::Sust { .. }
                | Op::Sured { .. }
                | Op::SustP { .. }
        )
        || (matches!(info.unit, Unit::Mem | Unit::Shared)
            && mem_access(&i.op).is_none()
            && !matches!(i.op, Op::Shfl(_)))
}

/// The live set of a block walk: dense marks over all virtual registers (allocated once
/// per function), the list of those set (to clear them per block), and the GPR units and
/// predicates live.
struct LiveSet<'a> {
    kinds: &'a [VRegKind],
    live: Vec<bool>,
    set: Vec<u32>,
    gpr: u32,
    pred: u32,
}

impl LiveSet<'_> {
    fn weight(&self, v: u32) -> (u32, u32) {
        match self.kinds[v as usize] {
            VRegKind::Pred => (0, 1),
            VRegKind::Gpr(n) => (n as u32, 0),
        }
    }
    fn insert(&mut self, v: u32) {
        if !std::mem::replace(&mut self.live[v as usize], true) {
            self.set.push(v);
            let (g, p) = self.weight(v);
            self.gpr += g;
            self.pred += p;
        }
    }
    fn remove(&mut self, v: u32) {
        if std::mem::replace(&mut self.live[v as usize], false) {
            let (g, p) = self.weight(v);
            self.gpr -= g;
            self.pred -= p;
        }
    }
    /// Live before `i`, given live after it.
    fn step_back(&mut self, i: &Instr) {
        for_each_def(i, |v| self.remove(v));
        for_each_use(i, |v| self.insert(v));
    }
    fn clear(&mut self) {
        for v in std::mem::take(&mut self.set) {
            self.live[v as usize] = false;
        }
        self.gpr = 0;
        self.pred = 0;
    }
}

/// Reorders every block of the SSA function `f` (see the module docs). `max_regs` is the
/// register budget (`--maxrregcount`).
pub fn reorder(f: &mut Function, max_regs: u32) {
    let liveness = crate::ir::liveness(f);
    let target = PRESSURE_TARGET.min(max_regs.saturating_sub(8).max(8));
    let kinds = std::mem::take(&mut f.vregs);
    let mut live = LiveSet { kinds: &kinds, live: vec![false; kinds.len()], set: vec![], gpr: 0, pred: 0 };
    let mut local = ready::LocalMap::new(kinds.len());
    for &b in &f.layout {
        live.clear();
        for &v in liveness.live_out(b) {
            live.insert(v);
        }
        let instrs = std::mem::take(&mut f.cfg[b].instrs);
        let origins = std::mem::take(&mut f.cfg[b].origins);
        let n = instrs.len();
        let mut order: Vec<usize> = (0..n).collect();
        // Regions, last first: [start, end) holds no fence and at most WINDOW instructions.
        let mut end = n;
        loop {
            let mut start = end;
            while start > 0 && !is_fence(&instrs[start - 1]) && end - start < WINDOW {
                start -= 1;
            }
            let code = &instrs[start..end];
            if code.len() >= 2 {
                let mut region = local.region(code, &kinds, &live.live);
                // Live before the region.
                for i in code.iter().rev() {
                    live.step_back(i);
                }
                region.set_live_before(&live.live, (live.gpr, live.pred));
                let sched = schedule_region(code, &region, target);
                for (pos, &src) in sched.iter().enumerate() {
                    order[start + pos] = start + src;
                }
            } else {
                for i in code.iter().rev() {
                    live.step_back(i);
                }
            }
            if start == 0 {
                break;
            }
            if is_fence(&instrs[start - 1]) {
                live.step_back(&instrs[start - 1]);
                end = start - 1;
            } else {
                end = start;
            }
        }
        let blk = &mut f.cfg[b];
        // `order` is a permutation: each instruction moves to its place (cloning them all
        // was a tenth of this pass).
        let mut slots: Vec<Option<Instr>> = instrs.into_iter().map(Some).collect();
        blk.instrs = order.iter().map(|&k| slots[k].take().expect("the order is a permutation")).collect();
        blk.origins = order.iter().map(|&k| origins[k]).collect();
    }
    f.vregs = kinds;
}

/// The new order of a region: `result[pos]` is the original index of the instruction
/// issued at position `pos`; `region` is its register bookkeeping.
fn schedule_region(code: &[Instr], region: &Region, target: u32) -> Vec<usize> {
    let n = code.len();
    let g = dag::build(code);
    // Latency-weighted height: the longest path to the end of the region, counting the
    // latency of results read after the region.
    let mut height = vec![0u32; g.succs.len()];
    for &x in g.topo.iter().rev() {
        let mut h = 0;
        if !g.is_virtual(x) {
            let i = &code[x as usize];
            if region.defs(x as usize).iter().any(|&v| region.live_after[v as usize]) {
                h = table::nominal_latency(&i.op);
            }
        }
        for &(t, w) in &g.succs[x as usize] {
            h = h.max(w + height[t as usize]);
        }
        height[x as usize] = h;
    }
    // Pressure limits.
    let (orig_g, orig_p) = region.original_pressure();
    let limit_g = orig_g.max(target);
    let limit_p = orig_p.max(PRED_TARGET);
    // The greedy bound below is local: once every ready candidate raises pressure, it
    // issues the least harmful one and may end above the limit (several chains opened
    // early). Such a schedule is retried with the limit lowered by the overshoot; the
    // attempt with the lowest peak is kept if it exceeds the limit by at most
    // [`slack`], else the region keeps its original order, which is within the limit by
    // construction. A retry replays the previous attempt up to the first step where the
    // lower limit changes the choice ([`Attempt::steps_valid_under`]).
    let mut soft = limit_g;
    let mut best: Option<(u32, Vec<usize>)> = None;
    let mut prev: Option<Attempt> = None;
    for _ in 0..MAX_RETRIES {
        let attempt = ready::list_schedule(&g, &height, region, soft, limit_p, prev.as_ref());
        let peak_g = attempt.peak_g;
        if attempt.peak_p <= limit_p {
            if peak_g <= limit_g {
                return attempt.order;
            }
            if best.as_ref().is_none_or(|(p, _)| peak_g < *p) {
                best = Some((peak_g, attempt.order.clone()));
            }
        }
        let lower = soft.saturating_sub(peak_g.saturating_sub(limit_g).max(1)).max(1);
        if lower == soft {
            // Already at the floor: another attempt would repeat this one.
            break;
        }
        soft = lower;
        prev = Some(attempt);
    }
    match best {
        Some((peak, order)) if peak <= limit_g + slack(limit_g) => order,
        _ => (0..n).collect(),
    }
}

/// How far (32-bit registers) a schedule may exceed its region's pressure limit `limit`:
/// an eighth of it, at least 4. Regions within the occupancy target stay within 36
/// registers; above it (already spilling, like `stress_spill`), a latency-hiding schedule
/// is worth a few more spills.
fn slack(limit: u32) -> u32 {
    (limit / 8).max(4)
}

/// Schedules retried with a lower pressure limit before a region keeps its original order.
const MAX_RETRIES: usize = 4;
