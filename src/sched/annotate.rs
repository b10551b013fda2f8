//! Control fields for linear code: stall counts, write and read barriers, wait masks, and
//! `DEPBAR.LE` partial waits on the counting barrier.
//!
//! One forward pass in code order, with a scoreboard state ([`Board`]) that flows along
//! fall-through and forward branches:
//! * **Fixed latencies** ([`table::timing`]): an instruction issues no earlier than every
//!   fixed-latency source is ready, less the cycles after issue at which it reads general
//!   registers (`read_delay`); the previous instruction's stall covers the gap. Fixed
//!   latencies are drained at the end of every block.
//! * **Counted loads** (global, local, generic: `Timing::counted`) all set the counting
//!   barrier SB5 ([`table::COUNTED_BARRIER`]), as ptxas does. Their results complete in
//!   issue order, so a consumer of the j-th youngest waits with `DEPBAR.LE SB5, j`
//!   (inserted before it), or with `&req={5}` when it needs the youngest. A wait also
//!   covers the consumers of loads issued together with its own that follow closely
//!   ([`group_wait`], as ptxas waits once for a group), and at most
//!   [`table::MAX_COUNTED`] loads stay outstanding.
//! * **Other variable-latency results** (S2R, LDS, LDC, conversions, fp64) get one of
//!   SB0..SB4 as write barrier, a free one or else the least recently set (waiting on a
//!   shared barrier waits for both users, which is safe).
//! * **Late reads**: a memory, fp64 or conversion instruction reads its sources after
//!   issue. When a later instruction of the same block overwrites one of them, the
//!   instruction gets a read barrier (SB0..SB4) that the overwriter waits on, so the wait
//!   ends as soon as the sources are read (`LDG.E.CV R6, [R2] &rd0 &wr5` in ptxas's code);
//!   otherwise the sources are tracked with its write barrier, whose completion implies
//!   the reads.
//! * A wait comes at least 2 cycles after the barrier was set (findings section 7).
//! * A backward branch and `BRK` drain every barrier: their targets (a loop header, a
//!   break target) assume nothing outstanding. So do calls and `RET`: neither side of a
//!   call assumes anything of the other's barriers.
//! * `SYNC` passes the scoreboard on to its reconvergence point (the target of the `SSY`
//!   on top of the stack the pass tracks, [`Board::crs`]) like a forward branch, instead
//!   of draining it: the loads of a divergent path are waited for after reconvergence,
//!   together with the other path's (ptxas 11.8 on `samples/stencil5.ptx`: `@P0 LDG.E
//!   R10, [R4] &wr5; @P0 SYNC` without a wait, `STG.E [R4], R10 &req={5}` after the
//!   reconvergence point). Sound under divergence: the other path runs with the first
//!   path's results outstanding but in other lanes (results and hazards are per lane,
//!   `exec::sim::timing`); barriers SB0..SB4 are counters, so a wait there waits for both
//!   paths' producers; counted loads complete in issue order, and a load with `j` younger
//!   ones on its own path has at least `j` younger ones in the warp's queue whatever the
//!   order the paths ran in, so `DEPBAR.LE SB5, j` of the joined state still covers it.
//!   Where the stack is not known (paths with different stacks joined, or a block entered
//!   only backwards) `SYNC` drains as before.

use super::table::{self, COUNTED_BARRIER, DEPBAR_STALL, MAX_COUNTED, timing};
use crate::sass::instr::{Dst, Instr, Reg, SrcKind};
use crate::sass::op::{MembarLevel, Op};
use crate::sass::program::{Ctrl, Scheduled};
use std::collections::HashMap;

/// A set of register units: R0..R254, P0..P6, CC.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
struct Units {
    gpr: [u64; 4],
    pred: u8,
    cc: bool,
}

impl Units {
    fn add_gpr(&mut self, r: u8, n: u8) {
        for k in r..r.saturating_add(n) {
            if k != 255 {
                self.gpr[k as usize / 64] |= 1 << (k % 64);
            }
        }
    }
    fn add_pred(&mut self, p: u8) {
        if p != 7 {
            self.pred |= 1 << p;
        }
    }
    fn intersects(&self, o: &Units) -> bool {
        (0..4).any(|k| self.gpr[k] & o.gpr[k] != 0) || self.pred & o.pred != 0 || (self.cc && o.cc)
    }
    fn union(&mut self, o: &Units) {
        for k in 0..4 {
            self.gpr[k] |= o.gpr[k];
        }
        self.pred |= o.pred;
        self.cc |= o.cc;
    }
    fn remove(&mut self, o: &Units) {
        for k in 0..4 {
            self.gpr[k] &= !o.gpr[k];
        }
        self.pred &= !o.pred;
        self.cc &= !o.cc;
    }
    fn is_empty(&self) -> bool {
        *self == Units::default()
    }
    fn iter_gpr(&self) -> impl Iterator<Item = u8> + '_ {
        (0..255u16).filter(|k| self.gpr[*k as usize / 64] >> (k % 64) & 1 == 1).map(|k| k as u8)
    }
}

/// Registers an instruction reads.
fn reads(i: &Instr) -> Units {
    let mut u = Units::default();
    if let Some(g) = i.guard
        && let Reg::P(p) = g.pred
    {
        u.add_pred(p);
    }
    for s in &i.srcs {
        match s.kind {
            SrcKind::Pred(Reg::P(p)) => u.add_pred(p),
            _ => {
                if let Some(r) = s.gprs()
                    && let Reg::R(x) = r.reg
                {
                    u.add_gpr(x, r.n);
                }
            }
        }
    }
    u.cc = i.op.reads_cc();
    u
}

/// Registers an instruction writes.
fn writes(i: &Instr) -> Units {
    let mut u = Units::default();
    for d in &i.dsts {
        match d {
            Dst::Reg(r) => {
                if let Reg::R(x) = r.reg {
                    u.add_gpr(x, r.n);
                }
            }
            Dst::Pred(Reg::P(p)) => u.add_pred(*p),
            _ => {}
        }
    }
    u.cc = i.op.writes_cc();
    u
}

/// One counted load outstanding on the counting barrier.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
struct Counted {
    /// Registers it writes.
    writes: Units,
    /// Registers it may still read (when it has no read barrier of its own).
    reads: Units,
    /// Estimated issue cycle (the latest of the joined paths'), for grouping waits only.
    issued: u64,
}

/// Scoreboard state at a program point.
#[derive(Clone, Default, PartialEq)]
struct Board {
    /// SB0..SB4: registers written by producers on each barrier, still outstanding.
    wr: [Units; 6],
    /// SB0..SB4: registers read late by instructions on each barrier.
    rd: [Units; 6],
    /// When each barrier was last set (instruction count, for choosing one to reuse).
    set_at: [u64; 6],
    /// The counting barrier's loads, oldest first.
    counted: Vec<Counted>,
    /// The reconvergence stack as far as `SSY`/`SYNC` and `PBK`/`BRK` use it: (a sync
    /// entry, its target), bottom first; `None` where unknown (paths with different
    /// stacks joined, or a block not entered forwards).
    crs: Option<Vec<(bool, usize)>>,
}

impl Board {
    fn busy(&self, b: usize) -> bool {
        if b == COUNTED_BARRIER as usize {
            return !self.counted.is_empty();
        }
        !self.wr[b].is_empty() || !self.rd[b].is_empty()
    }
    /// The state where either `self` or `o` may hold. Counted loads are aligned on the
    /// youngest: the j-th youngest of the join may be the j-th youngest of either path,
    /// so `DEPBAR.LE SB5, j` drains it on both.
    fn join(&mut self, o: &Board) {
        for b in 0..6 {
            self.wr[b].union(&o.wr[b]);
            self.rd[b].union(&o.rd[b]);
            self.set_at[b] = self.set_at[b].max(o.set_at[b]);
        }
        let n = self.counted.len().max(o.counted.len());
        let mut c = vec![Counted::default(); n];
        for src in [&self.counted, &o.counted] {
            for (j, e) in src.iter().rev().enumerate() {
                c[n - 1 - j].writes.union(&e.writes);
                c[n - 1 - j].reads.union(&e.reads);
                c[n - 1 - j].issued = c[n - 1 - j].issued.max(e.issued);
            }
        }
        self.counted = c;
        if self.crs != o.crs {
            self.crs = None;
        }
    }
    fn all_busy_mask(&self) -> u8 {
        (0..6).filter(|b| self.busy(*b)).fold(0, |m, b| m | 1 << b)
    }
    fn drain(&mut self, b: usize) {
        if b == COUNTED_BARRIER as usize {
            self.counted.clear();
        } else {
            self.wr[b] = Units::default();
            self.rd[b] = Units::default();
        }
    }
    /// A barrier of SB0..SB4 for a new write or read barrier: a free one, else the least
    /// recently set; not `not`.
    fn pick(&self, not: Option<usize>) -> usize {
        let pool = (0..6).filter(|b| *b != COUNTED_BARRIER as usize && Some(*b) != not);
        pool.clone()
            .find(|b| !self.busy(*b))
            .unwrap_or_else(|| pool.min_by_key(|b| self.set_at[*b]).expect("five barriers"))
    }
}

/// For every instruction, the registers the instructions after it in the same block (up
/// to the block end) write: one backward pass, so that asking whether a late-read source
/// is overwritten in its block costs one intersection.
fn written_later_in_block(code: &[Scheduled], starts: &[bool]) -> Vec<Units> {
    let mut later = vec![Units::default(); code.len()];
    let mut acc = Units::default();
    for k in (0..code.len()).rev() {
        later[k] = acc;
        if starts[k] {
            acc = Units::default();
        } else {
            acc.union(&writes(&code[k].instr));
        }
    }
    later
}

/// Instructions after one that waits on the counting barrier whose waits it may take over.
const GROUP_WINDOW: usize = 8;
/// Instructions after a counted load issued with [`MAX_COUNTED`] loads outstanding whose
/// counted loads it retires room for ([`group_wait`]).
const CAP_WINDOW: usize = 64;
/// Cycles after the load a wait needs within which a later load must have issued for
/// the wait to take it over ([`group_wait`]): loads issued together complete together.
const GROUP_ISSUE_GAP: u64 = 8;
/// Loads a grouped wait may wait for beyond those its own instruction needs.
const GROUP_EXTRA: usize = 4;

/// Groups partial waits on the counting barrier: instruction `k` must wait until the
/// counted loads `queue[..=j]` are complete (`DEPBAR.LE SB5, len - 1 - j`). The next
/// [`GROUP_WINDOW`] instructions of its block that will need one of `queue[j + 1..]`
/// are covered by the same wait as long as it waits for at most [`GROUP_EXTRA`] more
/// loads, so they need no `DEPBAR` of their own. When `at_cap` (instruction `k` is a
/// counted load with [`MAX_COUNTED`] outstanding), each counted load in the next
/// [`CAP_WINDOW`] instructions would retire the oldest again: the wait retires one more
/// per such load as well (up to [`GROUP_EXTRA`]). Either way only loads issued within
/// [`GROUP_ISSUE_GAP`] cycles of `queue[j]` are waited for in addition (a pointer chase
/// must not wait for the loads issued after its pointer). Returns the
/// last index to wait for (`j` or later, never the youngest).
///
/// Counted loads complete in issue order one after another, so the extra loads add a
/// few cycles to this instruction's wait where each `DEPBAR` they replace costs an issue
/// slot and a stall of [`DEPBAR_STALL`] cycles. ptxas 11.8 does the same: in
/// `samples/sha256.ptx` `DEPBAR.LE SB5, 0x10` with 21 loads outstanding completes the
/// 5 oldest, read by the next 5 `SHL`s (15 `DEPBAR`s in all; one per consumer would be
/// 64), and in `samples/stress_spill.ptx` 67 `DEPBAR`s serve 475 loads.
/// Waiting longer is always safe; the hazard checker and the simulator check the result.
fn group_wait(code: &[Scheduled], starts: &[bool], k: usize, queue: &[Counted], j: usize, at_cap: bool) -> usize {
    let mut last = j;
    let mut loads = 0;
    let window = if at_cap { CAP_WINDOW } else { GROUP_WINDOW };
    // Only loads issued soon after the one needed complete soon after it.
    let close = |n: usize| queue[n].issued <= queue[j].issued + GROUP_ISSUE_GAP;
    for q in k + 1..code.len().min(k + 1 + window) {
        if starts[q] || code[q].instr.op.info().control {
            break;
        }
        let ins = &code[q].instr;
        let (r, w) = (reads(ins), writes(ins));
        if at_cap && timing(&ins.op).counted && !w.is_empty() {
            loads += 1;
        }
        if q > k + GROUP_WINDOW {
            continue;
        }
        let need =
            queue.iter().rposition(|c| c.writes.intersects(&r) || c.writes.intersects(&w) || c.reads.intersects(&w));
        if let Some(n) = need
            && n > last
            && n + 1 < queue.len()
            && n - j <= GROUP_EXTRA
            && close(n)
        {
            last = n;
        }
    }
    let mut capped = j;
    while capped < j + loads.min(GROUP_EXTRA) && capped + 2 < queue.len() && close(capped + 1) {
        capped += 1;
    }
    last.max(capped)
}

/// Computes control fields for linear code; returns the code with `DEPBAR` instructions
/// inserted and branch targets renumbered.
pub(super) fn annotate(code: Vec<Scheduled>) -> Vec<Scheduled> {
    let n = code.len();
    // Block starts: branch targets and instructions after control transfers.
    let mut starts = vec![false; n + 1];
    starts[0] = true;
    for (k, s) in code.iter().enumerate() {
        for src in &s.instr.srcs {
            if let SrcKind::Label(t) = src.kind {
                starts[t as usize] = true;
            }
        }
        if s.instr.op.info().control {
            starts[k + 1] = true;
        }
    }
    let written_later = written_later_in_block(&code, &starts);
    let mut out: Vec<Scheduled> = Vec::with_capacity(n + n / 8);
    let mut new_index = vec![0usize; n + 1];
    // Issue cycle of each emitted instruction.
    let mut issue: Vec<u64> = Vec::with_capacity(n);
    let mut pending: HashMap<usize, Board> = HashMap::new();
    let mut board = Board { crs: Some(vec![]), ..Board::default() };
    let mut ready: HashMap<(u8, u16), u64> = HashMap::new(); // (file, index) -> cycle
    // Cycle each barrier was last set.
    let mut set_cycle = [0u64; 6];
    let mut clock: u64 = 0;
    let mut falls_in = true;
    for (k, s) in code.iter().enumerate() {
        new_index[k] = out.len();
        let ins = s.instr.clone();
        if starts[k] {
            // Merge the scoreboard from forward branches into this block.
            let mut b = falls_in.then(|| board.clone());
            if let Some(p) = pending.remove(&k) {
                match &mut b {
                    Some(b) => b.join(&p),
                    None => b = Some(p),
                }
            }
            board = b.unwrap_or_default();
            ready.clear();
        }
        let t = timing(&ins.op);
        let r = reads(&ins);
        let w = writes(&ins);
        // Barrier waits: RAW and WAW on outstanding results, WAR on late reads.
        let mut wait = 0u8;
        for b in (0..6).filter(|b| *b != COUNTED_BARRIER as usize) {
            if board.wr[b].intersects(&r) || board.wr[b].intersects(&w) || board.rd[b].intersects(&w) {
                wait |= 1 << b;
            }
        }
        // The youngest counted load this instruction depends on.
        let dep = board
            .counted
            .iter()
            .rposition(|c| c.writes.intersects(&r) || c.writes.intersects(&w) || c.reads.intersects(&w));
        // The oldest counted loads that must be complete before this instruction issues:
        // those up to index `upto` of the queue.
        let mut upto = dep;
        // A new counted load beyond what DEPBAR counts: retire the oldest first.
        if t.counted && !w.is_empty() && board.counted.len() >= MAX_COUNTED {
            let cut = board.counted.len() + 1 - MAX_COUNTED;
            upto = upto.max(Some(cut - 1));
        }
        let mut depbar: Option<u8> = None;
        if let Some(j) = upto {
            let at_cap = t.counted && !w.is_empty() && board.counted.len() >= MAX_COUNTED;
            let j =
                if j + 1 < board.counted.len() { group_wait(&code, &starts, k, &board.counted, j, at_cap) } else { j };
            let younger = board.counted.len() - 1 - j;
            if younger == 0 {
                wait |= 1 << COUNTED_BARRIER;
                board.counted.clear();
            } else {
                depbar = Some(younger as u8);
                board.counted.drain(..=j);
            }
        }
        // A backward branch drains everything (the loop header assumes nothing pending),
        // and so does BRK. SYNC passes the board to its reconvergence point when the stack
        // names it and it lies ahead (module docs), else drains too. EXIT does not wait:
        // ptxas never waits for stores before EXIT (findings section 7).
        let backward = ins.srcs.iter().any(|s| matches!(s.kind, SrcKind::Label(tg) if (tg as usize) <= k));
        let sync_to = match ins.op {
            Op::Sync => board.crs.as_ref().and_then(|c| {
                let at = c.iter().rposition(|e| e.0)?;
                (c[at].1 > k).then(|| (c[at].1, c[..at].to_vec()))
            }),
            _ => None,
        };
        // Calls and returns too: the calling convention leaves nothing outstanding across
        // them (ptxas 11.8: `JCAL ... &req={0,5}`, `RET &req={5}`).
        if backward
            || (ins.op == Op::Sync && sync_to.is_none())
            || matches!(ins.op, Op::Brk | Op::Cal | Op::Jcal | Op::Jmx | Op::Ret)
        {
            wait |= board.all_busy_mask();
            depbar = None;
        }
        for b in 0..6 {
            if wait >> b & 1 == 1 {
                board.drain(b);
            }
        }
        // Earliest issue: fixed-latency sources (RAW), and 2 cycles after setting a barrier
        // that is waited for.
        let mut earliest = clock;
        for g in r.iter_gpr() {
            if let Some(&c) = ready.get(&(0, g as u16)) {
                earliest = earliest.max(c.saturating_sub(t.read_delay as u64));
            }
        }
        for p in 0..7 {
            if r.pred >> p & 1 == 1
                && let Some(&c) = ready.get(&(1, p))
            {
                earliest = earliest.max(c);
            }
        }
        if r.cc
            && let Some(&c) = ready.get(&(2, 0))
        {
            earliest = earliest.max(c);
        }
        for (b, &at) in set_cycle.iter().enumerate() {
            if wait >> b & 1 == 1 {
                earliest = earliest.max(at + 2);
            }
        }
        // `DEPBAR.LE SB5, j` before the instruction.
        if let Some(count) = depbar {
            let d = Scheduled {
                // Attributed to the instruction it waits for the operands of.
                instr: Instr::new(Op::Depbar { sb: COUNTED_BARRIER, count }, vec![], vec![]).from_origin(ins.origin),
                ctrl: Ctrl { stall: DEPBAR_STALL, ..Ctrl::default() },
                label: None,
            };
            let now = clock;
            place(&mut out, &mut issue, &mut clock, d, now);
        }
        let mut cur = Scheduled { instr: ins.clone(), ctrl: Ctrl::default(), label: s.label.clone() };
        if depbar.is_some() {
            // The label (a block start) belongs to the DEPBAR now.
            let last = out.len() - 1;
            out[last].label = cur.label.take();
        }
        cur.ctrl.wait = wait;
        cur.ctrl.stall = table::min_stall(&ins.op, ins.guard.is_some());
        if ins.op == Op::Membar(MembarLevel::Cta)
            && ins.guard.is_none()
            && k > 0
            && !starts[k]
            && matches!(code[k - 1].instr.op, Op::Bar { arrive: false })
        {
            cur.ctrl.stall = table::MEMBAR_AFTER_BAR_STALL;
        }
        place(&mut out, &mut issue, &mut clock, cur, earliest);
        let here = out.len() - 1;
        // Results.
        if t.variable {
            // Registers read after issue; the instruction's own results are covered by
            // the WAW wait on its write barrier.
            let mut rr = r;
            rr.cc = false;
            rr.pred = 0;
            rr.remove(&w);
            let late = t.reads_late && !rr.is_empty();
            let own_rd = late && (w.is_empty() || written_later[k].intersects(&rr));
            let mut wr = None;
            if !w.is_empty() {
                let tracked = if late && !own_rd { rr } else { Units::default() };
                let b = if t.counted {
                    board.counted.push(Counted { writes: w, reads: tracked, issued: issue[here] });
                    COUNTED_BARRIER as usize
                } else {
                    let b = board.pick(None);
                    board.wr[b].union(&w);
                    board.rd[b].union(&tracked);
                    b
                };
                board.set_at[b] = k as u64 + 1;
                set_cycle[b] = clock;
                out[here].ctrl.wr = Some(b as u8);
                wr = Some(b);
            }
            if own_rd {
                let b = board.pick(wr);
                board.set_at[b] = k as u64 + 1;
                set_cycle[b] = clock;
                board.rd[b].union(&rr);
                out[here].ctrl.rd = Some(b as u8);
            }
        } else {
            for g in w.iter_gpr() {
                ready.insert((0, g as u16), clock + t.gpr as u64);
            }
            for p in 0..7 {
                if w.pred >> p & 1 == 1 {
                    ready.insert((1, p), clock + t.pred as u64);
                }
            }
            if w.cc {
                ready.insert((2, 0), clock + t.cc as u64);
            }
        }
        // Forward branch targets inherit the scoreboard.
        for s in &ins.srcs {
            if let SrcKind::Label(tg) = s.kind
                && (tg as usize) > k
            {
                join_into(&mut pending, tg as usize, &board);
            }
        }
        if let Some((tg, below)) = sync_to {
            let mut b = board.clone();
            b.crs = Some(below);
            join_into(&mut pending, tg, &b);
        }
        // The stack after SSY/PBK (their targets got the stack before, above).
        if let (Op::Ssy | Op::Pbk, Some(SrcKind::Label(tg))) = (ins.op, ins.srcs.first().map(|s| s.kind))
            && let Some(c) = &mut board.crs
        {
            c.push((ins.op == Op::Ssy, tg as usize));
        }
        if starts[k + 1] {
            // Drain fixed latencies before leaving the block.
            let last_ready = ready.values().copied().max().unwrap_or(0);
            let need_stall = last_ready.saturating_sub(clock).min(15) as u8;
            out[here].ctrl.stall = out[here].ctrl.stall.max(need_stall).max(1);
            falls_in = !(ins.guard.is_none() && ins.op.info().control);
        }
    }
    new_index[n] = out.len();
    for s in out.iter_mut() {
        for src in s.instr.srcs.iter_mut() {
            if let SrcKind::Label(t) = src.kind {
                src.kind = SrcKind::Label(new_index[t as usize] as u32);
            }
        }
    }
    out
}

/// Joins `board` into the state pending at forward target `tg`.
fn join_into(pending: &mut HashMap<usize, Board>, tg: usize, board: &Board) {
    match pending.get_mut(&tg) {
        Some(p) => p.join(board),
        None => {
            pending.insert(tg, board.clone());
        }
    }
}

/// Appends `s`, issuing no earlier than `earliest`: the previous instruction's stall
/// grows to cover the gap (at most 15; the scheduler's latencies never need more).
fn place(out: &mut Vec<Scheduled>, issue: &mut Vec<u64>, clock: &mut u64, s: Scheduled, earliest: u64) {
    if let Some(prev) = out.last_mut() {
        let p = *issue.last().expect("issued");
        let gap = earliest.saturating_sub(p).max(1).max(prev.ctrl.stall as u64).min(15);
        prev.ctrl.stall = gap as u8;
        *clock = p + gap;
    } else {
        *clock = earliest.max(*clock);
    }
    issue.push(*clock);
    out.push(s);
}

/// Makes every variable-latency instruction's barriers waited for by the next one
/// (`--serial`). A `DEPBAR` the next instruction needed is then redundant but harmless.
pub(super) fn serialize(code: &mut [Scheduled]) {
    for k in 0..code.len().saturating_sub(1) {
        let c = code[k].ctrl;
        let mask = c.wr.map_or(0, |b| 1 << b) | c.rd.map_or(0, |b| 1 << b);
        if mask != 0 {
            code[k].ctrl.stall = code[k].ctrl.stall.max(2);
            code[k + 1].ctrl.wait |= mask;
        }
    }
}
