//! Scheduling annotations: allocated IR → [`Program`] with control fields.
//!
//! 1. `linearize`: blocks in layout order; branches to blocks that only jump are
//!    retargeted, branches to the next block dropped, and `EXIT` followed by a branch to
//!    itself, as ptxas ends every function (findings section 7).
//! 2. `annotate` (first version, conservative): every variable-latency result gets a
//!    write barrier that its readers (and overwriters) wait on; stores and fp64 /
//!    conversion instructions get a read barrier that overwriters of their sources wait on;
//!    every fixed-latency dependence gets a stall at least the producer's latency
//!    (`table`). Fixed latencies are drained at the end of every block; barriers flow into
//!    forward branch targets and are drained before backward branches.

pub mod check;
pub mod effects;
pub mod estimate;
pub mod table;

use crate::ir::Function;
use crate::sass::instr::{Dst, Instr, Reg, SrcKind};
use crate::sass::op::Op;
use crate::sass::program::{Ctrl, SassFunction, Scheduled};
use std::collections::HashMap;
use table::timing;

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

fn is_jump_only(f: &Function, b: crate::ir::BlockId) -> bool {
    let blk = &f.cfg[b];
    blk.instrs.len() == 1 && blk.instrs[0].op == Op::Bra && blk.instrs[0].guard.is_none()
}

/// Linear code of a function. Jump-only blocks disappear (branches to them are
/// retargeted) unless a conditional branch falls through into them; a `BRA` to the next
/// surviving block is dropped; branch targets become instruction indices.
fn linearize(f: &Function) -> Vec<Scheduled> {
    let target_of = |mut b: crate::ir::BlockId| {
        for _ in 0..64 {
            if is_jump_only(f, b) {
                b = f.succs(b)[0];
            } else {
                break;
            }
        }
        b
    };
    let is_fallthrough_succ = |b: crate::ir::BlockId| {
        f.preds(b).iter().any(|p| {
            f.cfg[*p].instrs.last().is_some_and(|i| i.op == Op::Bra && i.guard.is_some())
                && f.succs(*p).get(1) == Some(&b)
        })
    };
    let surviving: Vec<crate::ir::BlockId> = f
        .layout
        .iter()
        .copied()
        .filter(|&b| !is_jump_only(f, b) || is_fallthrough_succ(b) || is_jump_only(f, target_of(b)))
        .collect();
    let mut code: Vec<Scheduled> = vec![];
    let mut block_start: HashMap<usize, usize> = HashMap::new();
    for (si, &b) in surviving.iter().enumerate() {
        block_start.insert(b.index(), code.len());
        let blk = &f.cfg[b];
        let mut label = (!blk.name.is_empty()).then(|| blk.name.clone());
        let next = surviving.get(si + 1).copied();
        for (k, i) in blk.instrs.iter().enumerate() {
            let last = k + 1 == blk.instrs.len();
            if last && i.op == Op::Bra && i.guard.is_none() && Some(target_of(f.succs(b)[0])) == next {
                continue;
            }
            code.push(Scheduled { instr: i.clone(), ctrl: Ctrl::default(), label: label.take() });
        }
    }
    for s in code.iter_mut() {
        for src in s.instr.srcs.iter_mut() {
            if let SrcKind::Label(t) = src.kind {
                let node = target_of(petgraph::stable_graph::NodeIndex::new(t as usize));
                src.kind = SrcKind::Label(block_start[&node.index()] as u32);
            }
        }
    }
    let mut code = peephole(code);
    // ptxas ends every function with a branch to itself after the final EXIT.
    if code.last().is_some_and(|s| matches!(s.instr.op, Op::Exit | Op::Ret) && s.instr.guard.is_none()) {
        let k = code.len() as u32;
        code.push(Scheduled {
            instr: Instr::new(Op::Bra, vec![], vec![crate::sass::instr::Src::label(k)]),
            ctrl: Ctrl::default(),
            label: None,
        });
    }
    code
}

/// The branch target of a `BRA` (its label operand).
fn bra_target(i: &Instr) -> Option<usize> {
    match (i.op, i.srcs.first().map(|s| s.kind)) {
        (Op::Bra, Some(SrcKind::Label(t))) => Some(t as usize),
        _ => None,
    }
}

/// Control-flow peepholes on linear code (ptxas's idioms):
/// * `@P BRA T` where `T` is an unguarded `SYNC`, `BRK` or `EXIT` becomes `@P SYNC` etc.;
/// * `@P BRA A; X; A:` with `X` an unguarded `BRA B`, `EXIT`, `SYNC` or `BRK` that no
///   branch targets becomes `@!P X`.
///
/// Then drops the removed instructions and renumbers branch targets.
fn peephole(mut code: Vec<Scheduled>) -> Vec<Scheduled> {
    let n = code.len();
    let mut targeted = vec![false; n + 1];
    for s in &code {
        for src in &s.instr.srcs {
            if let SrcKind::Label(t) = src.kind {
                targeted[t as usize] = true;
            }
        }
    }
    let mut dead = vec![false; n];
    for k in 0..n {
        let i = code[k].instr.clone();
        let (Some(t), Some(g)) = (bra_target(&i), i.guard) else { continue };
        if let Some(ts) = code.get(t)
            && ts.instr.guard.is_none()
            && matches!(ts.instr.op, Op::Sync | Op::Brk | Op::Exit)
        {
            code[k].instr = Instr::new(ts.instr.op, vec![], vec![]).guarded(g.pred, g.neg);
            continue;
        }
        if t == k + 2
            && let Some(x) = code.get(k + 1)
            && x.instr.guard.is_none()
            && matches!(x.instr.op, Op::Bra | Op::Exit | Op::Sync | Op::Brk)
            && !targeted[k + 1]
            && !dead[k]
        {
            let mut inv = x.instr.clone();
            inv.guard = Some(crate::sass::instr::Guard { pred: g.pred, neg: !g.neg });
            code[k + 1].instr = inv;
            code[k + 1].label = code[k].label.take().or(code[k + 1].label.take());
            dead[k] = true;
        }
    }
    let code = compact(code, &dead);
    // Code no control path reaches any more (e.g. a SYNC-only block now used as `@P SYNC`).
    let n = code.len();
    let mut reached = vec![false; n];
    let mut work = vec![0usize];
    while let Some(k) = work.pop() {
        if k >= n || std::mem::replace(&mut reached[k], true) {
            continue;
        }
        let i = &code[k].instr;
        for src in &i.srcs {
            if let SrcKind::Label(t) = src.kind {
                work.push(t as usize);
            }
        }
        let stops = i.guard.is_none() && matches!(i.op, Op::Bra | Op::Exit | Op::Ret | Op::Sync | Op::Brk);
        if !stops {
            work.push(k + 1);
        }
    }
    let dead: Vec<bool> = reached.iter().map(|r| !r).collect();
    compact(code, &dead)
}

/// Removes the instructions marked `dead`; a branch target pointing at a removed
/// instruction moves to the next kept one.
fn compact(code: Vec<Scheduled>, dead: &[bool]) -> Vec<Scheduled> {
    let n = code.len();
    let mut new_index = vec![0usize; n + 1];
    let mut next = 0;
    for k in 0..n {
        new_index[k] = next;
        if !dead[k] {
            next += 1;
        }
    }
    new_index[n] = next;
    let mut out: Vec<Scheduled> = code.into_iter().zip(dead).filter(|(_, d)| !**d).map(|(s, _)| s).collect();
    for s in out.iter_mut() {
        for src in s.instr.srcs.iter_mut() {
            if let SrcKind::Label(t) = src.kind {
                src.kind = SrcKind::Label(new_index[t as usize] as u32);
            }
        }
    }
    out
}

/// Scoreboard state at a program point.
#[derive(Clone, Default, PartialEq)]
struct Board {
    /// Registers written by producers on each barrier, still outstanding.
    wr: [Units; 6],
    /// Registers read late by instructions on each barrier.
    rd: [Units; 6],
    /// When each barrier was last set (for choosing one to reuse).
    set_at: [u64; 6],
}

impl Board {
    fn busy(&self, b: usize) -> bool {
        !self.wr[b].is_empty() || !self.rd[b].is_empty()
    }
    fn join(&mut self, o: &Board) {
        for b in 0..6 {
            self.wr[b].union(&o.wr[b]);
            self.rd[b].union(&o.rd[b]);
            self.set_at[b] = self.set_at[b].max(o.set_at[b]);
        }
    }
    fn all_busy_mask(&self) -> u8 {
        (0..6).filter(|b| self.busy(*b)).fold(0, |m, b| m | 1 << b)
    }
}

/// Computes control fields for linear code.
fn annotate(code: &mut [Scheduled]) {
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
    let mut pending: HashMap<usize, Board> = HashMap::new();
    let mut board = Board::default();
    let mut clock: u64 = 0;
    let mut ready: HashMap<(u8, u16), u64> = HashMap::new(); // (file, index) -> cycle
    let mut issue: Vec<u64> = vec![0; n];
    let mut falls_in = true;
    for k in 0..n {
        if starts[k] {
            // Merge the scoreboard from forward branches into this block.
            let mut b = if falls_in { board.clone() } else { Board::default() };
            if let Some(p) = pending.remove(&k) {
                b.join(&p);
            }
            board = b;
            ready.clear();
        }
        let ins = code[k].instr.clone();
        let t = timing(&ins.op);
        let r = reads(&ins);
        let w = writes(&ins);
        // Barrier waits: RAW and WAW on outstanding results, WAR on late reads.
        let mut wait = 0u8;
        for b in 0..6 {
            if board.wr[b].intersects(&r) || board.wr[b].intersects(&w) || board.rd[b].intersects(&w) {
                wait |= 1 << b;
            }
        }
        // A backward branch drains everything (the loop header assumes nothing pending),
        // and so do SYNC/BRK, whose target (on the reconvergence stack) is not in the code.
        // EXIT does not wait: ptxas never waits for stores before EXIT (findings section 7).
        let backward = ins.srcs.iter().any(|s| matches!(s.kind, SrcKind::Label(tg) if (tg as usize) <= k));
        if backward || matches!(ins.op, Op::Sync | Op::Brk) {
            wait |= board.all_busy_mask();
        }
        for b in 0..6 {
            if wait >> b & 1 == 1 {
                board.wr[b] = Units::default();
                board.rd[b] = Units::default();
            }
        }
        // Fixed-latency readiness of sources (RAW).
        let mut earliest = clock;
        let mut need = |file: u8, idx: u16| {
            if let Some(&c) = ready.get(&(file, idx)) {
                earliest = earliest.max(c);
            }
        };
        for g in r.iter_gpr() {
            need(0, g as u16);
        }
        for p in 0..7 {
            if r.pred >> p & 1 == 1 {
                need(1, p);
            }
        }
        if r.cc {
            need(2, 0);
        }
        // The previous instruction's stall delays this one.
        if k > 0 && !starts[k] {
            let prev = issue[k - 1];
            let mut gap = earliest.saturating_sub(prev).max(1);
            if wait & code[k - 1].ctrl.wr.map_or(0, |b| 1 << b) != 0
                || wait & code[k - 1].ctrl.rd.map_or(0, |b| 1 << b) != 0
            {
                gap = gap.max(2);
            }
            let stall = gap.max(code[k - 1].ctrl.stall as u64);
            code[k - 1].ctrl.stall = stall.min(15) as u8;
            clock = prev + stall;
        } else {
            clock = earliest.max(clock);
        }
        issue[k] = clock;
        code[k].ctrl.wait = wait;
        code[k].ctrl.stall = t.min_stall;
        // Results.
        if t.variable {
            // Registers read after issue; the instruction's own results are covered by
            // the WAW wait on its write barrier.
            let mut rr = r;
            rr.cc = false;
            rr.pred = 0;
            rr.remove(&w);
            let late_reads = t.reads_late && !rr.is_empty();
            // A free barrier, else the least recently set one (waiting on it then waits
            // for both users, which is safe). The read barrier is separate from the write
            // barrier so that rewriting a source waits only until it has been read, as
            // ptxas does (`LDG.E.CV R6, [R2] &rd0 &wr5`).
            let pick = |board: &Board, not: Option<usize>| {
                let free = (0..6).filter(|b| Some(*b) != not);
                free.clone()
                    .find(|b| !board.busy(*b))
                    .unwrap_or_else(|| free.min_by_key(|b| board.set_at[*b]).expect("six barriers"))
            };
            let mut wr = None;
            if !w.is_empty() {
                let b = pick(&board, None);
                board.set_at[b] = k as u64 + 1;
                board.wr[b].union(&w);
                code[k].ctrl.wr = Some(b as u8);
                wr = Some(b);
            }
            if late_reads {
                let b = pick(&board, wr);
                board.set_at[b] = k as u64 + 1;
                board.rd[b].union(&rr);
                code[k].ctrl.rd = Some(b as u8);
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
                pending.entry(tg as usize).or_default().join(&board);
            }
        }
        let ends_block = starts[k + 1];
        if ends_block {
            // Drain fixed latencies before leaving the block.
            let last_ready = ready.values().copied().max().unwrap_or(0);
            let need_stall = last_ready.saturating_sub(clock).min(15) as u8;
            code[k].ctrl.stall = code[k].ctrl.stall.max(need_stall).max(1);
            falls_in = !(ins.guard.is_none() && ins.op.info().control);
        }
    }
}

/// Scheduling options.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Safe mode (`--serial`): the instruction after every variable-latency instruction
    /// waits for its write and read barriers (2 cycles after it, the minimum between
    /// setting a barrier and waiting on it), so no result or source is ever in flight
    /// while anything else runs.
    pub serial: bool,
}

/// Makes every variable-latency instruction's barriers waited for by the next one.
fn serialize(code: &mut [Scheduled]) {
    for k in 0..code.len().saturating_sub(1) {
        let c = code[k].ctrl;
        let mask = c.wr.map_or(0, |b| 1 << b) | c.rd.map_or(0, |b| 1 << b);
        if mask != 0 {
            code[k].ctrl.stall = code[k].ctrl.stall.max(2);
            code[k + 1].ctrl.wait |= mask;
        }
    }
}

/// Schedules an allocated function into final code.
pub fn schedule(f: &Function, opts: &Options) -> SassFunction {
    let mut code = linearize(f);
    annotate(&mut code);
    if opts.serial {
        serialize(&mut code);
    }
    SassFunction {
        name: f.name.clone(),
        kind: match f.kind {
            crate::ptx::ast::FuncKind::Entry => ".entry",
            crate::ptx::ast::FuncKind::Func => ".func",
        },
        regs: f.num_regs,
        frame_bytes: if f.local_bytes + f.spill_bytes > 0 {
            (f.local_bytes.div_ceil(16) * 16 + f.spill_bytes).div_ceil(8) * 8
        } else {
            0
        },
        spill_bytes: f.spill_bytes,
        shared_bytes: f.shared_bytes,
        params: f.params.iter().map(|p| (p.offset, p.ty.clone(), p.name.clone())).collect(),
        code,
    }
}
