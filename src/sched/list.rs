//! Pre-allocation list scheduler: reorders the instructions of every basic block of an
//! SSA function to hide latency (loads early, their consumers late) while bounding
//! register pressure, before register allocation assigns registers.
//!
//! A block is cut into regions at instructions that nothing may cross ([`is_fence`]:
//! branches, `SSY`/`PBK`, `BAR`, `MEMBAR`, `DEPBAR`, clock reads, and memory
//! instructions the table does not classify). In each region a dependence DAG
//! (`petgraph`) has an edge for every read after write (weighted by the producer's
//! latency: [`table::timing`] for fixed-latency results, [`table::nominal_latency`] for
//! variable ones), write after read, write after write (virtual and physical registers,
//! predicates, CC), and for every pair of memory accesses that may conflict
//! ([`table::mem_access`]: at least one store, or an observable access, in overlapping
//! spaces, unless both use the same base register with disjoint byte ranges).
//!
//! The scheduler is a cycle-driven list scheduler: among the instructions whose
//! predecessors are issued and whose operands are ready, it issues the one with the
//! longest latency-weighted path to the end of the region (ties: original order). A
//! candidate that would raise the number of live 32-bit registers above the limit is
//! passed over while another is within it; the limit is the larger of the region's
//! pressure in the original order and [`PRESSURE_TARGET`] (lowered under a tight
//! `--maxrregcount`), so reordering never needs more registers than the original order
//! where that order was already above the target. Predicates are bounded the same way by
//! the 7 predicate registers. The bound is greedy: when every ready instruction raises
//! pressure, the least harmful one issues, so a schedule can end above the limit. It is
//! then retried with a lower limit; the best attempt is kept if it exceeds the limit by at
//! most [`slack`], otherwise the region keeps its original order.

use super::table::{self, mem_access};
use crate::ir::{Function, VRegKind, for_each_def, for_each_use};
use crate::sass::instr::{Dst, Instr, Reg, SrcKind};
use crate::sass::op::{Op, SpecialReg, Unit};
use petgraph::Direction;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use std::collections::HashMap;

/// Live 32-bit registers the scheduler may use to hide latency where the original order
/// needs fewer. 32 keeps a Maxwell SM at full occupancy (64K registers for 2048 threads).
pub const PRESSURE_TARGET: u32 = 32;

/// Predicate registers P0..P6 (more live predicates are demoted to GPRs by allocation).
const PRED_TARGET: u32 = 7;

/// True for instructions that start a new scheduling region: nothing moves across them.
/// The control unit's ops are all fences (branches, `EXIT`, `SSY`/`PBK`, `SYNC`/`BRK`,
/// `BAR`, `MEMBAR`, `DEPBAR`); so are `NOP`, clock reads, and memory instructions the
/// table does not classify.
pub fn is_fence(i: &Instr) -> bool {
    let info = i.op.info();
    info.unit == Unit::Control
        || matches!(
            i.op,
            Op::Nop
                | Op::S2r(SpecialReg::ClockLo | SpecialReg::ClockHi)
                | Op::Cs2r(SpecialReg::ClockLo | SpecialReg::ClockHi)
        )
        || (matches!(info.unit, Unit::Mem | Unit::Shared)
            && mem_access(&i.op).is_none()
            && !matches!(i.op, Op::Shfl(_)))
}

/// A register resource for dependences.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    V(u32),
    R(u8),
    P(u8),
    Cc,
}

fn reg_keys(r: Reg, comp: u8, n: u8, out: &mut Vec<Key>) {
    match r {
        Reg::V(v) => out.push(Key::V(v)),
        Reg::R(x) => {
            for k in 0..n {
                let x = x as u16 + comp as u16 + k as u16;
                if x < 255 {
                    out.push(Key::R(x as u8));
                }
            }
        }
        Reg::P(p) if p < 7 => out.push(Key::P(p)),
        Reg::P(_) => {}
    }
}

/// Registers read and written by `i`.
fn keys(i: &Instr) -> (Vec<Key>, Vec<Key>) {
    let (mut r, mut w) = (vec![], vec![]);
    if let Some(g) = i.guard {
        reg_keys(g.pred, 0, 1, &mut r);
    }
    for s in &i.srcs {
        match s.kind {
            SrcKind::Pred(p) => reg_keys(p, 0, 1, &mut r),
            _ => {
                if let Some(g) = s.gprs() {
                    reg_keys(g.reg, g.comp, g.n, &mut r);
                }
            }
        }
    }
    for d in &i.dsts {
        match d {
            Dst::Reg(g) => reg_keys(g.reg, g.comp, g.n, &mut w),
            Dst::Pred(p) => reg_keys(*p, 0, 1, &mut w),
        }
    }
    if i.op.reads_cc() {
        r.push(Key::Cc);
    }
    if i.op.writes_cc() {
        w.push(Key::Cc);
    }
    (r, w)
}

/// The address operand of a memory instruction: base register operand and byte offset.
fn address(i: &Instr) -> Option<(crate::sass::instr::RegRef, i32)> {
    i.srcs.iter().find_map(|s| match s.kind {
        SrcKind::Addr { base, offset } => Some((base, offset)),
        _ => None,
    })
}

/// Whether two memory instructions must stay in order.
fn mem_conflict(a: &Instr, b: &Instr) -> bool {
    let (Some(x), Some(y)) = (mem_access(&a.op), mem_access(&b.op)) else { return false };
    if x.keep || y.keep {
        return true;
    }
    if !(x.store || y.store) || x.spaces & y.spaces == 0 {
        return false;
    }
    // Same base register, disjoint byte ranges: different locations.
    if let (Some((ba, oa)), Some((bb, ob))) = (address(a), address(b))
        && ba == bb
        && !ba.reg.is_rz()
    {
        let (oa, ob) = (oa as i64, ob as i64);
        let disjoint = oa + x.bytes as i64 <= ob || ob + y.bytes as i64 <= oa;
        return !disjoint;
    }
    true
}

/// Latency of a read-after-write dependence on `key` produced by `p`.
fn raw_latency(p: &Instr, key: Key) -> u32 {
    let t = table::timing(&p.op);
    if t.variable {
        return table::nominal_latency(&p.op);
    }
    match key {
        Key::P(_) => t.pred as u32,
        Key::Cc => t.cc as u32,
        _ => t.gpr as u32,
    }
}

/// Register pressure bookkeeping over virtual registers.
struct Pressure<'a> {
    kinds: &'a [VRegKind],
    /// Live now.
    live: Vec<bool>,
    /// Live after the region.
    live_after: &'a [bool],
    /// Unissued readers in the region.
    remaining: HashMap<u32, u32>,
    gpr: u32,
    pred: u32,
}

impl Pressure<'_> {
    fn weight(&self, v: u32) -> (u32, u32) {
        match self.kinds[v as usize] {
            VRegKind::Pred => (0, 1),
            VRegKind::Gpr(n) => (n as u32, 0),
        }
    }
    /// Pressure if `i` issues now: the peak (GPR units, predicates) while it issues
    /// (results that are never read still need a register for an instant; sources read
    /// for the last time may share a register with a result), and the GPR units live after.
    fn after(&self, i: &Instr) -> (u32, u32, u32) {
        let (mut g, mut p) = (self.gpr as i64, self.pred as i64);
        let (mut dead_g, mut dead_p) = (0i64, 0i64);
        let mut seen = vec![];
        for_each_use(i, |v| {
            if !seen.contains(&v) {
                seen.push(v);
                if self.remaining.get(&v) == Some(&1) && !self.live_after[v as usize] && self.live[v as usize] {
                    let (a, b) = self.weight(v);
                    g -= a as i64;
                    p -= b as i64;
                }
            }
        });
        for_each_def(i, |v| {
            if !self.live[v as usize] {
                let (a, b) = self.weight(v);
                if self.live_after[v as usize] || self.remaining.get(&v).is_some_and(|r| *r > 0) {
                    g += a as i64;
                    p += b as i64;
                } else {
                    dead_g += a as i64;
                    dead_p += b as i64;
                }
            }
        });
        let peak_g = (self.gpr as i64).max(g + dead_g);
        let peak_p = (self.pred as i64).max(p + dead_p);
        (peak_g as u32, peak_p as u32, g.max(0) as u32)
    }
    fn issue(&mut self, i: &Instr) {
        let mut seen = vec![];
        for_each_use(i, |v| {
            if !seen.contains(&v) {
                seen.push(v);
                if let Some(r) = self.remaining.get_mut(&v) {
                    *r -= 1;
                    if *r == 0 && !self.live_after[v as usize] && self.live[v as usize] {
                        self.live[v as usize] = false;
                        let (a, b) = self.weight(v);
                        self.gpr -= a;
                        self.pred -= b;
                    }
                }
            }
        });
        for_each_def(i, |v| {
            let needed = self.live_after[v as usize] || self.remaining.get(&v).is_some_and(|r| *r > 0);
            if needed && !self.live[v as usize] {
                self.live[v as usize] = true;
                let (a, b) = self.weight(v);
                self.gpr += a;
                self.pred += b;
            }
        });
    }
}

/// Reorders every block of the SSA function `f` (see the module docs). `max_regs` is the
/// register budget (`--maxrregcount`).
pub fn reorder(f: &mut Function, max_regs: u32) {
    let outs = crate::ir::liveness(f);
    let target = PRESSURE_TARGET.min(max_regs.saturating_sub(8).max(8));
    for &b in &f.layout.clone() {
        let mut live = vec![false; f.vregs.len()];
        for &v in outs.live_out(b) {
            live[v as usize] = true;
        }
        let instrs = std::mem::take(&mut f.cfg[b].instrs);
        let origins = std::mem::take(&mut f.cfg[b].origins);
        // Regions, last first, with the live set after each.
        let n = instrs.len();
        let mut order: Vec<usize> = (0..n).collect();
        let mut end = n;
        for k in (0..=n).rev() {
            let boundary = k == 0 || is_fence(&instrs[k - 1]);
            if boundary {
                // Region [k, end) (instruction k-1 is a fence or k = 0).
                let live_after = live.clone();
                // Live set before the region.
                for i in instrs[k..end].iter().rev() {
                    for_each_def(i, |v| live[v as usize] = false);
                    for_each_use(i, |v| live[v as usize] = true);
                }
                if end - k >= 2 {
                    let sched = schedule_region(&instrs[k..end], &f.vregs, &live, &live_after, target);
                    for (pos, &src) in sched.iter().enumerate() {
                        order[k + pos] = k + src;
                    }
                }
                if k > 0 {
                    let i = &instrs[k - 1];
                    for_each_def(i, |v| live[v as usize] = false);
                    for_each_use(i, |v| live[v as usize] = true);
                }
                end = k.saturating_sub(1);
            }
        }
        let blk = &mut f.cfg[b];
        blk.instrs = order.iter().map(|&k| instrs[k].clone()).collect();
        blk.origins = order.iter().map(|&k| origins[k]).collect();
    }
}

/// Pressure of the region in its original order (max live GPR units, predicates).
fn original_pressure(code: &[Instr], p: &mut Pressure) -> (u32, u32) {
    let (mut g, mut q) = (p.gpr, p.pred);
    for i in code {
        let (a, b, _) = p.after(i);
        g = g.max(a);
        q = q.max(b);
        p.issue(i);
    }
    (g, q)
}

/// The new order of a region: `result[pos]` is the original index of the instruction
/// issued at position `pos`.
fn schedule_region(
    code: &[Instr],
    kinds: &[VRegKind],
    live_before: &[bool],
    live_after: &[bool],
    target: u32,
) -> Vec<usize> {
    let n = code.len();
    // Dependence DAG.
    let mut g: DiGraph<usize, u32> = DiGraph::with_capacity(n, n * 2);
    let nodes: Vec<NodeIndex> = (0..n).map(|k| g.add_node(k)).collect();
    let mut last_write: HashMap<Key, usize> = HashMap::new();
    let mut readers: HashMap<Key, Vec<usize>> = HashMap::new();
    let mut mems: Vec<usize> = vec![];
    let edge = |g: &mut DiGraph<usize, u32>, a: usize, b: usize, lat: u32| {
        if let Some(e) = g.find_edge(nodes[a], nodes[b]) {
            g[e] = g[e].max(lat);
        } else {
            g.add_edge(nodes[a], nodes[b], lat);
        }
    };
    for (j, i) in code.iter().enumerate() {
        let (r, w) = keys(i);
        for k in &r {
            if let Some(&p) = last_write.get(k) {
                edge(&mut g, p, j, raw_latency(&code[p], *k));
            }
        }
        for k in &w {
            if let Some(&p) = last_write.get(k) {
                edge(&mut g, p, j, 1);
            }
            for &q in readers.get(k).map(|v| v.as_slice()).unwrap_or(&[]) {
                if q != j {
                    edge(&mut g, q, j, 0);
                }
            }
        }
        for k in r {
            readers.entry(k).or_default().push(j);
        }
        for k in w {
            last_write.insert(k, j);
            readers.remove(&k);
        }
        if mem_access(&i.op).is_some() {
            for &q in &mems {
                if mem_conflict(&code[q], i) {
                    edge(&mut g, q, j, 0);
                }
            }
            mems.push(j);
        }
    }
    // Latency-weighted height: the longest path to the end of the region, counting the
    // latency of results read after the region.
    let mut height = vec![0u32; n];
    for j in (0..n).rev() {
        let mut h = 0;
        let mut used_later = false;
        for_each_def(&code[j], |v| used_later |= live_after[v as usize]);
        if used_later {
            h = table::nominal_latency(&code[j].op);
        }
        for e in g.edges_directed(nodes[j], Direction::Outgoing) {
            h = h.max(e.weight() + height[g[e.target()]]);
        }
        height[j] = h;
    }
    // Pressure limits.
    let mut remaining: HashMap<u32, u32> = HashMap::new();
    for i in code {
        let mut seen = vec![];
        for_each_use(i, |v| {
            if !seen.contains(&v) {
                seen.push(v);
                *remaining.entry(v).or_default() += 1;
            }
        });
    }
    let fresh = |remaining: HashMap<u32, u32>| {
        let mut p = Pressure { kinds, live: live_before.to_vec(), live_after, remaining, gpr: 0, pred: 0 };
        for (v, l) in live_before.iter().enumerate() {
            if *l {
                let (a, b) = p.weight(v as u32);
                p.gpr += a;
                p.pred += b;
            }
        }
        p
    };
    let (orig_g, orig_p) = original_pressure(code, &mut fresh(remaining.clone()));
    let limit_g = orig_g.max(target);
    let limit_p = orig_p.max(PRED_TARGET);
    // The greedy bound below is local: once every ready candidate raises pressure, it
    // issues the least harmful one and may end above the limit (several chains opened
    // early). Such a schedule is retried with the limit lowered by the overshoot; the
    // attempt with the lowest peak is kept if it exceeds the limit by at most
    // [`slack`], else the region keeps its original order, which is within the limit by
    // construction.
    let mut soft = limit_g;
    let mut best: Option<(u32, Vec<usize>)> = None;
    for _ in 0..MAX_RETRIES {
        let (order, peak_g, peak_p) =
            list_schedule(code, &g, &nodes, &height, &mut fresh(remaining.clone()), soft, limit_p);
        if peak_p <= limit_p {
            if peak_g <= limit_g {
                return order;
            }
            if best.as_ref().is_none_or(|(p, _)| peak_g < *p) {
                best = Some((peak_g, order));
            }
        }
        let lower = soft.saturating_sub(peak_g.saturating_sub(limit_g).max(1)).max(1);
        if lower == soft {
            // Already at the floor: another attempt would repeat this one.
            break;
        }
        soft = lower;
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

/// One list-scheduling pass over a region's DAG `g` with GPR limit `limit_g` and predicate
/// limit `limit_p`: (order, peak live GPR units, peak live predicates).
fn list_schedule(
    code: &[Instr],
    g: &DiGraph<usize, u32>,
    nodes: &[NodeIndex],
    height: &[u32],
    pressure: &mut Pressure,
    limit_g: u32,
    limit_p: u32,
) -> (Vec<usize>, u32, u32) {
    let n = code.len();
    let (mut peak_g, mut peak_p) = (pressure.gpr, pressure.pred);
    // List scheduling.
    let mut preds_left: Vec<usize> = (0..n).map(|j| g.edges_directed(nodes[j], Direction::Incoming).count()).collect();
    let mut earliest = vec![0u32; n];
    let mut ready: Vec<usize> = (0..n).filter(|j| preds_left[*j] == 0).collect();
    let mut out = Vec::with_capacity(n);
    let mut clock = 0u32;
    while !ready.is_empty() {
        let fits: Vec<usize> = ready
            .iter()
            .copied()
            .filter(|&j| {
                let (a, b, _) = pressure.after(&code[j]);
                a <= limit_g && b <= limit_p
            })
            .collect();
        let pick = if fits.is_empty() {
            // Over the limit whatever issues: the candidate that leaves the fewest live.
            *ready
                .iter()
                .min_by_key(|&&j| {
                    let (_, b, after) = pressure.after(&code[j]);
                    (b.saturating_sub(limit_p), after, std::cmp::Reverse(height[j]), j)
                })
                .expect("ready is not empty")
        } else if let Some(&j) =
            fits.iter().filter(|&&j| earliest[j] <= clock).max_by_key(|&&j| (height[j], std::cmp::Reverse(j)))
        {
            j
        } else {
            *fits.iter().min_by_key(|&&j| (earliest[j], std::cmp::Reverse(height[j]), j)).expect("fits is not empty")
        };
        ready.retain(|&j| j != pick);
        clock = clock.max(earliest[pick]);
        let (a, b, _) = pressure.after(&code[pick]);
        (peak_g, peak_p) = (peak_g.max(a), peak_p.max(b));
        pressure.issue(&code[pick]);
        out.push(pick);
        for e in g.edges_directed(nodes[pick], Direction::Outgoing) {
            let s = g[e.target()];
            earliest[s] = earliest[s].max(clock + e.weight());
            preds_left[s] -= 1;
            if preds_left[s] == 0 {
                ready.push(s);
            }
        }
        clock += 1;
    }
    debug_assert_eq!(out.len(), n, "the dependence graph is acyclic");
    (out, peak_g, peak_p)
}
