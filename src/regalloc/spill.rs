//! Spilling before allocation: where the scheduled SSA code needs more registers than the
//! file holds, choose what lives in local memory, before regalloc2 runs.
//!
//! regalloc2 spills by its own weights (uses per live-range length), which favours
//! spilling values with one distant use — in `samples/stress_spill.ptx`, the loaded
//! values themselves, each spill store waiting for its global load (242 `STL` and 38,866
//! cycles of waiting in the estimate, where ptxas 11.8 spills 124 values). This pass
//! chooses instead, per basic block, with Belady's MIN rule as in Braun and Hack,
//! "Register spilling and live-range splitting for SSA-form programs" (CC 2009; Mesa NAK
//! `spill_values.rs` uses the same rule):
//!
//! * walking the block in order with the set `W` of values in registers, when an operand
//!   or a result needs room, evict the value whose next use is farthest, but not one
//!   whose variable-latency producer (a load) issued within the last
//!   [`YOUNG_WINDOW`] instructions: its store would wait for the load;
//! * an evicted value is stored (`STL`, marked as a spill) just before the instruction
//!   that needs its register, once; a use of an evicted value reloads it (`LDL`) into a
//!   new virtual register, renamed in the block's later uses;
//! * reloads are then hoisted up to [`HOIST`] instructions earlier, as far as the
//!   register budget allows at every point they pass and not above their store, so that
//!   they issue well before their use (latency hiding without serialising on one
//!   register).
//!
//! The interface between blocks is unchanged: values live out of a block (and block
//! parameters' arguments) are never evicted in it, and a block is only processed when
//! its live-in and live-out values fit the budget. Whatever pressure is left (other
//! blocks, fragmentation of wide values) regalloc2 still handles.

use crate::ir::{Function, Liveness, VRegKind, for_each_def, for_each_use, for_each_use_mut};
use crate::ptx::ast::Span;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src};
use crate::sass::op::{MemMods, MemSize, Op};
use crate::sched::table;
use std::collections::{HashMap, HashSet};

/// Instructions after a variable-latency producer during which its result is not
/// evicted (a store of it would wait for it). 40 instructions of address arithmetic and
/// loads take about the 200 cycles of a global load (`sched::table::nominal_latency`).
pub const YOUNG_WINDOW: usize = 40;

/// Most instructions a reload is hoisted above its use (about 200 cycles of issue).
pub const HOIST: usize = 64;

/// What [`spill`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spilled {
    /// Spill stores inserted.
    pub stores: u32,
    /// Reloads inserted.
    pub reloads: u32,
}

fn width(f: &Function, v: u32) -> Option<usize> {
    match f.vregs[v as usize] {
        VRegKind::Gpr(w) => Some(w as usize),
        VRegKind::Pred => None,
    }
}

fn gpr_uses(f: &Function, i: &Instr) -> Vec<u32> {
    let mut u = vec![];
    for_each_use(i, |v| {
        if width(f, v).is_some() && !u.contains(&v) {
            u.push(v)
        }
    });
    u
}

fn gpr_defs(f: &Function, i: &Instr) -> Vec<u32> {
    let mut d = vec![];
    for_each_def(i, |v| {
        if width(f, v).is_some() && !d.contains(&v) {
            d.push(v)
        }
    });
    d
}

fn mem(w: usize) -> MemSize {
    match w {
        1 => MemSize::B32,
        2 => MemSize::B64,
        _ => MemSize::B128,
    }
}

/// Spills so that at most `budget` 32-bit registers of general-purpose values are live
/// at any point of the blocks where that is possible without changing what is live
/// between blocks (see the module docs). Spill slots are added above `f.spill_bytes`
/// (which grows by their size); the function stays in SSA form. Before its first change
/// of `f`, a copy of `f` is stored in `unspilled` unless that already holds one (so that
/// callers copy the function only when it is spilled). `live`: the liveness of `f` if the
/// caller has it (computed otherwise).
pub fn spill(f: &mut Function, budget: usize, unspilled: &mut Option<Function>, live: Option<&Liveness>) -> Spilled {
    let mut computed = None;
    let live = crate::ir::liveness::given_or_computed(f, live, &mut computed);
    let mut done = Spilled::default();
    // Live-out marks of the block being looked at (set and cleared per block).
    let mut out_mark = vec![false; f.vregs.len()];
    for b in f.layout.clone() {
        let live_out: Vec<u32> = live.live_out(b).iter().copied().filter(|&v| width(f, v).is_some()).collect();
        let mut entry: Vec<u32> = live.live_in(b).iter().copied().filter(|&v| width(f, v).is_some()).collect();
        entry.extend(f.cfg[b].params.iter().copied().filter(|&v| width(f, v).is_some()));
        let units = |vs: &[u32]| vs.iter().map(|&v| width(f, v).unwrap_or(0)).sum::<usize>();
        if units(&entry) > budget || units(&live_out) > budget {
            continue;
        }
        out_mark.resize(f.vregs.len(), false);
        for &v in live.live_out(b) {
            out_mark[v as usize] = true;
        }
        let fits = peak(f, b, &entry, &out_mark) <= budget;
        for &v in live.live_out(b) {
            out_mark[v as usize] = false;
        }
        if fits {
            continue;
        }
        if unspilled.is_none() {
            *unspilled = Some(f.clone());
        }
        let s = spill_block(f, b, &entry, &live_out, budget);
        done.stores += s.stores;
        done.reloads += s.reloads;
    }
    done
}

/// Most GPR units live at once in block `b` entered with `entry` live.
fn peak(f: &Function, b: crate::ir::BlockId, entry: &[u32], out: &[bool]) -> usize {
    let code = &f.cfg[b].instrs;
    let mut last: HashMap<u32, usize> = HashMap::new();
    for (k, i) in code.iter().enumerate() {
        for v in gpr_uses(f, i) {
            last.insert(v, k);
        }
    }
    let mut cur: usize = entry.iter().map(|&v| width(f, v).unwrap_or(0)).sum();
    let mut top = cur;
    let dead_after = |v: u32, k: usize| !out[v as usize] && last.get(&v).is_none_or(|&l| l <= k);
    for (k, i) in code.iter().enumerate() {
        let defs = gpr_defs(f, i);
        cur += defs.iter().map(|&v| width(f, v).unwrap_or(0)).sum::<usize>();
        top = top.max(cur);
        for v in gpr_uses(f, i).into_iter().chain(defs) {
            if dead_after(v, k) {
                cur -= width(f, v).unwrap_or(0);
            }
        }
    }
    top
}

/// The walk of one block: values in registers, spill slots, the code built so far.
struct Walk<'a> {
    /// Positions of each value's uses in the original block, ascending.
    uses: HashMap<u32, Vec<usize>>,
    /// Values live out of the block: they stay in registers to its end.
    live_out: HashSet<u32>,
    /// Values never evicted: live out of the block, or defined under a guard (their
    /// register holds nothing when the guard is false, and a store would read it).
    unspillable: HashSet<u32>,
    /// Values in registers, with the position of their variable-latency producer if any.
    in_regs: HashMap<u32, Option<usize>>,
    /// GPR units in registers.
    occupied: usize,
    budget: usize,
    /// Frame offset of each spilled value's slot.
    slot: HashMap<u32, i32>,
    /// The current name of each reloaded value.
    name: HashMap<u32, u32>,
    /// Next free byte of the spill area (relative to its start).
    next_slot: u32,
    out: Vec<Instr>,
    origins: Vec<Span>,
    /// Reloads: (index in `out`, original value).
    reloads: Vec<(usize, u32)>,
    /// Index in `out` of each value's spill store.
    stores: HashMap<u32, usize>,
    done: Spilled,
    f: &'a mut Function,
}

/// Next use "never" (not used again in the block, not live out).
const DEAD: usize = usize::MAX - 1;

impl Walk<'_> {
    fn w(&self, v: u32) -> usize {
        width(self.f, v).unwrap_or(0)
    }

    fn next_use(&self, v: u32, k: usize) -> usize {
        let u = self.uses.get(&v).map(|u| u.as_slice()).unwrap_or(&[]);
        match u.get(u.partition_point(|&x| x < k)) {
            Some(&p) => p,
            None if self.live_out.contains(&v) => usize::MAX,
            None => DEAD,
        }
    }

    /// Evicts values until `need` more units fit, before instruction `k` (never one of
    /// its operands `ops`).
    fn make_room(&mut self, need: usize, k: usize, ops: &[u32], origin: Span) {
        while self.occupied + need > self.budget {
            let victim = self
                .in_regs
                .iter()
                .filter(|(v, _)| !ops.contains(v) && !self.unspillable.contains(v))
                .map(|(&v, &born)| (born.is_none_or(|p| p + YOUNG_WINDOW <= k), self.next_use(v, k), v))
                .max();
            let Some((_, nu, v)) = victim else { return };
            self.in_regs.remove(&v);
            self.occupied -= self.w(v);
            if nu == DEAD || self.slot.contains_key(&v) {
                continue; // dead, or already in memory
            }
            let wv = self.w(v) as u32;
            let rel = self.next_slot.div_ceil(4 * wv) * 4 * wv;
            self.next_slot = rel + 4 * wv;
            let off = (self.f.local_bytes.div_ceil(16) * 16 + rel) as i32;
            self.slot.insert(v, off);
            let cur = self.name.get(&v).copied().unwrap_or(v);
            self.stores.insert(v, self.out.len());
            self.out.push(Instr::new(
                Op::Stl(MemMods { spill: true, ..MemMods::new(mem(wv as usize), false) }),
                vec![],
                vec![Src::addr(RegRef::new(Reg::R(1), 1), off), Src::reg(RegRef::new(Reg::V(cur), wv as u8))],
            ));
            self.origins.push(origin);
            self.done.stores += 1;
        }
    }

    /// Reloads `v` (evicted) into a new virtual register before instruction `k`.
    fn reload(&mut self, v: u32, k: usize, ops: &[u32], origin: Span) {
        let wv = self.w(v);
        self.make_room(wv, k, ops, origin);
        let Reg::V(nv) = self.f.new_vreg(self.f.vregs[v as usize]) else { unreachable!("a virtual register") };
        self.name.insert(v, nv);
        self.reloads.push((self.out.len(), v));
        self.out.push(Instr::new(
            Op::Ldl(MemMods { spill: true, ..MemMods::new(mem(wv), false) }),
            vec![Dst::reg(Reg::V(nv), wv as u8)],
            vec![Src::addr(RegRef::new(Reg::R(1), 1), self.slot[&v])],
        ));
        self.origins.push(origin);
        self.done.reloads += 1;
        self.in_regs.insert(v, None);
        self.occupied += wv;
    }
}

/// Belady's MIN over one block (see the module docs).
fn spill_block(f: &mut Function, b: crate::ir::BlockId, entry: &[u32], live_out: &[u32], budget: usize) -> Spilled {
    let code = std::mem::take(&mut f.cfg[b].instrs);
    let origins = std::mem::take(&mut f.cfg[b].origins);
    let mut uses: HashMap<u32, Vec<usize>> = HashMap::new();
    let out_set: HashSet<u32> = live_out.iter().copied().collect();
    let mut unspillable = out_set.clone();
    for (k, i) in code.iter().enumerate() {
        for v in gpr_uses(f, i) {
            uses.entry(v).or_default().push(k);
        }
        if i.guard.is_some() {
            unspillable.extend(gpr_defs(f, i));
        }
    }
    let occupied = entry.iter().map(|&v| width(f, v).unwrap_or(0)).sum();
    let next_slot = f.spill_bytes;
    let mut s = Walk {
        uses,
        live_out: out_set,
        unspillable,
        in_regs: entry.iter().map(|&v| (v, None)).collect(),
        occupied,
        budget,
        slot: HashMap::new(),
        name: HashMap::new(),
        next_slot,
        out: vec![],
        origins: vec![],
        reloads: vec![],
        stores: HashMap::new(),
        done: Spilled::default(),
        f,
    };
    for (k, i) in code.iter().enumerate() {
        let origin = origins[k];
        let ops = gpr_uses(s.f, i);
        let defs = gpr_defs(s.f, i);
        for &v in &ops {
            if !s.in_regs.contains_key(&v) {
                s.reload(v, k, &ops, origin);
            }
        }
        // Operands used for the last time free their registers; then room for results.
        let dying: Vec<u32> = ops.iter().copied().filter(|&v| s.next_use(v, k + 1) == DEAD).collect();
        let freed: usize = dying.iter().map(|&v| s.w(v)).sum();
        let need = defs.iter().map(|&v| s.w(v)).sum::<usize>().saturating_sub(freed);
        s.make_room(need, k, &ops, origin);
        let mut ins = i.clone();
        for_each_use_mut(&mut ins, |v| {
            if let Some(&n) = s.name.get(v) {
                *v = n;
            }
        });
        s.out.push(ins);
        s.origins.push(origin);
        for v in dying {
            if s.in_regs.remove(&v).is_some() {
                s.occupied -= s.w(v);
            }
        }
        let variable = table::timing(&i.op).variable;
        for v in defs {
            if s.next_use(v, k + 1) != DEAD {
                s.in_regs.insert(v, variable.then_some(k));
                s.occupied += s.w(v);
            }
        }
    }
    let (mut out, mut out_origins) = (std::mem::take(&mut s.out), std::mem::take(&mut s.origins));
    let (reloads, stores, done, next_slot) =
        (std::mem::take(&mut s.reloads), std::mem::take(&mut s.stores), s.done, s.next_slot);
    hoist(f, &mut out, &mut out_origins, &reloads, &stores, entry, live_out, budget);
    f.cfg[b].instrs = out;
    f.cfg[b].origins = out_origins;
    f.spill_bytes = next_slot.div_ceil(16) * 16;
    done
}

/// Moves each reload earlier (up to [`HOIST`] instructions, not above the store of its
/// value, nor above an instruction after which the budget would be exceeded with it live,
/// nor above a fence).
#[allow(clippy::too_many_arguments)]
fn hoist(
    f: &Function,
    out: &mut Vec<Instr>,
    origins: &mut Vec<Span>,
    reloads: &[(usize, u32)],
    stores: &HashMap<u32, usize>,
    entry: &[u32],
    live_out: &[u32],
    budget: usize,
) {
    // GPR units live after each instruction of `out`: each value from its definition (or
    // the block entry) to its last use, or to the end if it is live out.
    let n = out.len();
    let mut last: HashMap<u32, usize> = HashMap::new();
    for (k, i) in out.iter().enumerate() {
        for v in gpr_uses(f, i) {
            last.insert(v, k);
        }
    }
    for &v in live_out {
        last.insert(v, n);
    }
    let mut delta = vec![0isize; n + 1];
    let range = |from: usize, v: u32, delta: &mut Vec<isize>| {
        let wv = width(f, v).unwrap_or(0) as isize;
        let end = last.get(&v).copied().filter(|&l| l > from).unwrap_or(from);
        delta[from] += wv;
        delta[end] -= wv;
    };
    for &v in entry {
        range(0, v, &mut delta);
    }
    for (k, i) in out.iter().enumerate() {
        for v in gpr_defs(f, i) {
            range(k, v, &mut delta);
        }
    }
    let mut live_after = vec![0usize; n];
    let mut cur = 0isize;
    for k in 0..n {
        cur += delta[k];
        live_after[k] = cur.max(0) as usize;
    }
    // Hoist, latest reload first; each keeps its place relative to the others.
    let mut key: Vec<(usize, usize)> = (0..n).map(|k| (k, 1)).collect();
    for &(at, v) in reloads.iter().rev() {
        let wv = width(f, v).unwrap_or(0);
        let floor = stores.get(&v).map_or(0, |&s| s + 1).max(at.saturating_sub(HOIST));
        let mut to = at;
        while to > floor && live_after[to - 1] + wv <= budget && !crate::sched::list::is_fence(&out[to - 1]) {
            to -= 1;
        }
        if to < at {
            for x in &mut live_after[to..at] {
                *x += wv;
            }
            key[at] = (to, 0);
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&k| (key[k], k));
    let old = std::mem::take(out);
    let old_origins = std::mem::take(origins);
    for k in order {
        out.push(old[k].clone());
        origins.push(old_origins[k]);
    }
}
