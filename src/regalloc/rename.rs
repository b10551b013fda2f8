//! Register renaming after allocation, for the post-allocation list scheduler.
//!
//! regalloc2 and packing give a value that lives for a few instructions whatever register
//! is free, often the one the previous short value just left; the scheduler then cannot
//! move the second value's producer above the first value's last reader (a false, WAR
//! dependence). In `samples/sha256.ptx` sixteen byte loads all went to `R4`, each
//! `LDG.E.U8 R4` waiting for the `LOP.OR` that read the previous one, so each load's
//! 200-cycle latency was exposed in turn; ptxas 11.8 keeps its byte loads in flight
//! together (`DEPBAR.LE SB5, 0x10`).
//!
//! This pass gives such a value the register, among those the function already uses
//! (the register count does not grow), that has been free the longest at its
//! definition and stays free over its whole life: the least recently used one, as a
//! renaming scheduler's free list would. Predicates are renamed the same way among
//! P0..P6: in `samples/sgemm_reg.ptx` every guarded tile load `@P4 LDG` was followed by
//! its `SEL ..., !P4`, which had to issue (and wait for the load) before the next tile's
//! `ISETP` could write P4 again. Only values that live inside one basic block are
//! renamed: a definition of a whole register (or aligned pair or quad), or a pair whose
//! halves are defined one after the other (a 64-bit address: `LEA R0.CC`, `LEA.HI.X R1`),
//! read only as that same group, not redefined in part while the rest is still read,
//! not live out of the block. `R1`, when it is the frame pointer, is never renamed or chosen.

use crate::ir::{BlockId, Function};
use crate::ptx::ast::FuncKind;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, SrcKind};
use petgraph::visit::NodeIndexable;
use std::ops::Range;

/// A set of registers (R0..R254, or P0..P6), as bits.
type Units = [u64; 4];

fn has(s: &Units, u: u32) -> bool {
    s[(u / 64) as usize] >> (u % 64) & 1 == 1
}

fn set(s: &mut Units, u: u32, on: bool) {
    if on {
        s[(u / 64) as usize] |= 1 << (u % 64);
    } else {
        s[(u / 64) as usize] &= !(1 << (u % 64));
    }
}

/// The register file renamed in one pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum File {
    Gpr,
    Pred,
}

/// The registers a general-purpose reference covers (not RZ).
fn gpr_units(r: RegRef) -> Option<Range<u32>> {
    match r.reg {
        Reg::R(x) if !r.reg.is_rz() => {
            let b = x as u32 + r.comp as u32;
            Some(b..b + r.n as u32)
        }
        _ => None,
    }
}

/// P0..P6 (not PT).
fn pred_unit(p: Reg) -> Option<Range<u32>> {
    match p {
        Reg::P(x) if x < 7 => Some(x as u32..x as u32 + 1),
        _ => None,
    }
}

/// The registers of `file` instruction `i` reads, in operand order (guard first).
fn reads(i: &Instr, file: File) -> impl Iterator<Item = Range<u32>> + '_ {
    let guard = i.guard.iter().filter(move |_| file == File::Pred).filter_map(|g| pred_unit(g.pred));
    let srcs = i.srcs.iter().filter_map(move |s| match file {
        File::Gpr => s.gprs().and_then(gpr_units),
        File::Pred => match s.kind {
            SrcKind::Pred(p) => pred_unit(p),
            _ => None,
        },
    });
    guard.chain(srcs)
}

/// The registers of `file` instruction `i` writes, in operand order.
fn writes(i: &Instr, file: File) -> impl Iterator<Item = Range<u32>> + '_ {
    i.dsts.iter().filter_map(move |d| match (d, file) {
        (Dst::Reg(r), File::Gpr) => gpr_units(*r),
        (Dst::Pred(p), File::Pred) => pred_unit(*p),
        _ => None,
    })
}

/// The register operands of one block's instructions in one file, read once: per
/// instruction its read and written ranges (in operand order, as [`reads`] and [`writes`]
/// list them) and their unions as bit sets, so that the scans of [`life`] skip an
/// instruction that names none of a value's registers with one test and allocate nothing
/// (they allocated two lists per instruction visited: half the allocation time of a
/// spilling 10k-line kernel).
#[derive(Default)]
struct Ops {
    /// `reads[r_at[j]..r_at[j + 1]]`: the registers instruction `j` reads.
    r_at: Vec<u32>,
    reads: Vec<Range<u32>>,
    /// `writes[w_at[j]..w_at[j + 1]]`: the registers instruction `j` writes.
    w_at: Vec<u32>,
    writes: Vec<Range<u32>>,
    /// Per instruction, the union of its reads / writes.
    rmask: Vec<Units>,
    wmask: Vec<Units>,
    /// Per instruction, whether it has a guard (its writes do not kill).
    guarded: Vec<bool>,
}

fn mask_of(rs: impl IntoIterator<Item = Range<u32>>) -> Units {
    let mut m = [0u64; 4];
    for u in rs.into_iter().flatten() {
        set(&mut m, u, true);
    }
    m
}

/// `a |= b`.
fn or_in(a: &mut Units, b: &Units) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

/// `a &= !b`.
fn and_not(a: &mut Units, b: &Units) {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= !y;
    }
}

fn meets(a: &Units, b: &Units) -> bool {
    (0..4).any(|w| a[w] & b[w] != 0)
}

impl Ops {
    /// Reads `code` (one block) into `self`, replacing what it held; the vectors keep
    /// their capacity, so one `Ops` serves every block of a function.
    fn fill(&mut self, code: &[Instr], file: File) {
        let o = self;
        o.r_at.clear();
        o.reads.clear();
        o.w_at.clear();
        o.writes.clear();
        o.rmask.clear();
        o.wmask.clear();
        o.guarded.clear();
        for i in code {
            o.r_at.push(o.reads.len() as u32);
            o.w_at.push(o.writes.len() as u32);
            let r0 = o.reads.len();
            o.reads.extend(reads(i, file));
            let w0 = o.writes.len();
            o.writes.extend(writes(i, file));
            o.rmask.push(mask_of(o.reads[r0..].iter().cloned()));
            o.wmask.push(mask_of(o.writes[w0..].iter().cloned()));
            o.guarded.push(i.guard.is_some());
        }
        o.r_at.push(o.reads.len() as u32);
        o.w_at.push(o.writes.len() as u32);
    }

    fn reads(&self, j: usize) -> &[Range<u32>] {
        &self.reads[self.r_at[j] as usize..self.r_at[j + 1] as usize]
    }

    fn writes(&self, j: usize) -> &[Range<u32>] {
        &self.writes[self.w_at[j] as usize..self.w_at[j + 1] as usize]
    }

    /// Reads instruction `j` again after a renaming changed its registers (not their
    /// number: a renamed operand is never `RZ`).
    fn refresh(&mut self, j: usize, i: &Instr, file: File) {
        let (r0, r1) = (self.r_at[j] as usize, self.r_at[j + 1] as usize);
        let (w0, w1) = (self.w_at[j] as usize, self.w_at[j + 1] as usize);
        debug_assert!(reads(i, file).count() == r1 - r0 && writes(i, file).count() == w1 - w0);
        for (d, s) in self.reads[r0..r1].iter_mut().zip(reads(i, file)) {
            *d = s;
        }
        for (d, s) in self.writes[w0..w1].iter_mut().zip(writes(i, file)) {
            *d = s;
        }
        self.rmask[j] = mask_of(self.reads[r0..r1].iter().cloned());
        self.wmask[j] = mask_of(self.writes[w0..w1].iter().cloned());
    }

    /// Liveness across instruction `j`, backwards: unguarded writes kill, reads make live.
    fn step_back(&self, j: usize, s: &mut Units) {
        if !self.guarded[j] {
            and_not(s, &self.wmask[j]);
        }
        or_in(s, &self.rmask[j]);
    }
}

/// Registers of `file` live at the end of each block (backward dataflow over the CFG),
/// indexed by `BlockId::index()`. Each block is summarised once as `in = (out - kill) |
/// gen` (its instructions composed backwards), so the iteration to the fixed point costs
/// blocks, not instructions, per round.
fn live_out(f: &Function, file: File) -> Vec<Units> {
    let nb = f.cfg.node_bound();
    let mut gen_kill = vec![([0u64; 4], [0u64; 4]); nb];
    for &b in &f.layout {
        let (mut g, mut k) = ([0u64; 4], [0u64; 4]);
        for i in f.cfg[b].instrs.iter().rev() {
            let (r, w) = (mask_of(reads(i, file)), mask_of(writes(i, file)));
            let kills = i.guard.is_none();
            for x in 0..4 {
                if kills {
                    g[x] &= !w[x];
                    k[x] |= w[x];
                }
                g[x] |= r[x];
            }
        }
        gen_kill[b.index()] = (g, k);
    }
    let mut live_in = vec![[0u64; 4]; nb];
    let out_of = |b: BlockId, live_in: &[Units]| {
        let mut s = [0u64; 4];
        for t in f.succs(b) {
            let l = &live_in[t.index()];
            for k in 0..4 {
                s[k] |= l[k];
            }
        }
        s
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in f.layout.iter().rev() {
            let mut s = out_of(b, &live_in);
            let (g, k) = &gen_kill[b.index()];
            for x in 0..4 {
                s[x] = s[x] & !k[x] | g[x];
            }
            if live_in[b.index()] != s {
                live_in[b.index()] = s;
                changed = true;
            }
        }
    }
    let mut outs = vec![[0u64; 4]; nb];
    for &b in &f.layout {
        outs[b.index()] = out_of(b, &live_in);
    }
    outs
}

/// Renames short-lived values of `f` (allocated, moves expanded, `f.num_regs` set) to the
/// least recently used free register, general-purpose registers below `f.num_regs` and
/// predicates (see the module docs); `frame`: R1 is the frame pointer. Returns how many
/// values were renamed.
pub fn rename(f: &mut Function, frame: bool) -> usize {
    if f.kind != FuncKind::Entry {
        return 0;
    }
    let mut renamed = 0;
    let mut scratch = Scratch::default();
    for (file, limit) in [(File::Gpr, f.num_regs.min(255)), (File::Pred, 7)] {
        let outs = live_out(f, file);
        for b in f.layout.clone() {
            renamed += rename_block(&mut f.cfg[b].instrs, outs[b.index()], file, limit, frame, &mut scratch);
        }
    }
    renamed
}

/// The per-block tables of [`rename_block`], allocated once per function and refilled
/// for each block (allocated per block, their zeroing and freeing were about half of
/// this pass: `last_ref` alone is a 256-entry table, at 13k blocks of `setp-bra` 10k
/// lines 67M of 125M instructions).
#[derive(Default)]
struct Scratch {
    ops: Ops,
    live_after: Vec<Units>,
    /// Per register, 1 + the index of the last instruction (before the current one)
    /// naming it, 0 if none: ordered as `Option<usize>` is (`None` first).
    last_ref: Vec<u32>,
    defined: Vec<Range<u32>>,
}

/// The definitions of a value: (position, registers) of each.
type Defs = Vec<(usize, Range<u32>)>;

/// One renaming: the definitions of a value (one for a whole register, pair or quad; two
/// for a pair whose halves are defined separately, as `LEA R0.CC` then `LEA.HI.X R1` of a
/// 64-bit address), the old registers `group`, the new base `x`, and the value's last
/// reader.
struct Plan {
    /// (position, old registers) of each definition, in order.
    defs: Defs,
    group: Range<u32>,
    x: u32,
    last: usize,
}

/// Renames in one block; registers of `file` below `limit` may be chosen.
fn rename_block(code: &mut [Instr], out: Units, file: File, limit: u32, frame: bool, scratch: &mut Scratch) -> usize {
    let n = code.len();
    let Scratch { ops, live_after, last_ref, defined } = scratch;
    ops.fill(code, file);
    live_after.clear();
    live_after.resize(n, [0u64; 4]);
    let mut s = out;
    for k in (0..n).rev() {
        live_after[k] = s;
        ops.step_back(k, &mut s);
    }
    last_ref.clear();
    last_ref.resize(256, 0);
    let mut renamed = 0;
    for k in 0..n {
        // The writes as they were before any of them was renamed.
        defined.clear();
        defined.extend_from_slice(ops.writes(k));
        for d in defined.iter().cloned() {
            if let Some(plan) = choose(code, ops, live_after, last_ref, k, d, file, limit, frame) {
                apply(code, ops, live_after, &plan, file);
                renamed += 1;
            }
        }
        for u in ops.reads(k).iter().chain(ops.writes(k)).cloned().flatten() {
            last_ref[u as usize] = k as u32 + 1;
        }
    }
    renamed
}

/// How to rename the value defined by `code[k]` in registers `du`, if that helps.
#[allow(clippy::too_many_arguments)]
fn choose(
    code: &[Instr],
    ops: &Ops,
    live_after: &[Units],
    last_ref: &[u32],
    k: usize,
    du: Range<u32>,
    file: File,
    limit: u32,
    frame: bool,
) -> Option<Plan> {
    let fixed = |u: u32| file == File::Gpr && frame && u == 1;
    if du.is_empty() {
        return None;
    }
    // The value's life: its readers until a whole redefinition. A definition under a guard
    // counts as one: allocation comes from SSA code, where a guarded definition makes a new
    // value that is only read where the guard held (or by a `SEL` on the guard), so no
    // reader after it can want the register's older value (it would interfere with the new
    // one and have another register). A single register read as a pair is renamed with
    // the pair's other half when that half is defined after it and before the pair's reads.
    let out = &live_after[code.len() - 1];
    let (group, (defs, last)) = match life(ops, out, k, du.clone(), du.clone()) {
        Some(l) => (du, l),
        None if du.len() == 1 && file == File::Gpr => {
            let pair = du.start & !1..(du.start & !1) + 2;
            (pair.clone(), life(ops, out, k, du, pair)?)
        }
        None => return None,
    };
    if group.clone().any(fixed) {
        return None;
    }
    // A value live across a call stays in its callee-saved register, and the words a
    // call passes or returns stay where the calling convention put them.
    use crate::sass::op::Op;
    if code[k + 1..last].iter().any(|i| matches!(i.op, Op::Call(_)))
        || matches!(code[k].op, Op::Call(_) | Op::Params)
        || matches!(code[last].op, Op::Call(_) | Op::Ret)
    {
        return None;
    }
    // Registers named by the instructions of the life, and live during it.
    let mut busy = [0u64; 4];
    for (j, la) in live_after.iter().enumerate().take(last + 1).skip(k) {
        or_in(&mut busy, &ops.rmask[j]);
        or_in(&mut busy, &ops.wmask[j]);
        or_in(&mut busy, la);
    }
    let width = group.end - group.start;
    // 1 + the last reference to any of `x..x + width` before `k`, 0 if none.
    let free_since = |x: u32| -> u32 { last_ref[x as usize..(x + width) as usize].iter().fold(0, |m, &t| m.max(t)) };
    let current = free_since(group.start);
    let mut best: Option<(u32, u32)> = None;
    let mut x = 0;
    while x + width <= limit {
        let ok = !(x..x + width).any(|u| fixed(u) || has(&busy, u));
        if ok {
            let since = free_since(x);
            if best.is_none_or(|(s, _)| since < s) {
                best = Some((since, x));
            }
        }
        x += width;
    }
    let (since, x) = best?;
    // Only registers free for longer than the current ones help.
    (since < current && x != group.start).then_some(Plan { defs, group, x, last })
}

/// The life of the value instruction `k` of the block (`ops`) defines in `du`, as part of
/// the registers `group` (`du` itself, or the pair holding it): its definitions and last
/// reader. `None` if it is not renamable: read together with registers outside `group` or
/// with an older value, redefined in part, the pair's other half never defined before it
/// is read, not read at all, or live out of the block. Instructions naming no register
/// of `group` are skipped by their masks.
fn life(ops: &Ops, out: &Units, k: usize, du: Range<u32>, group: Range<u32>) -> Option<(Defs, usize)> {
    let n = ops.rmask.len();
    let gmask = mask_of([group.clone()]);
    let overlap = |a: &Range<u32>| a.start < group.end && group.start < a.end;
    let mut defs = vec![(k, du.clone())];
    let defined = |defs: &[(usize, Range<u32>)], u: u32, j: usize| defs.iter().any(|(p, r)| r.contains(&u) && *p < j);
    let mut last = None;
    let mut end = false;
    for j in k + 1..n {
        if !meets(&ops.rmask[j], &gmask) && !meets(&ops.wmask[j], &gmask) {
            continue;
        }
        for ru in ops.reads(j) {
            if !overlap(ru) {
                continue;
            }
            if ru.start < group.start || ru.end > group.end {
                return None; // read together with other registers
            }
            let new = ru.clone().filter(|&u| defined(&defs, u, j)).count();
            if new == ru.len() {
                last = Some(j);
            } else if new > 0 {
                return None; // read together with an older value
            }
        }
        let ws: Vec<Range<u32>> = ops.writes(j).iter().filter(|w| overlap(w)).cloned().collect();
        if ws.is_empty() {
            continue;
        }
        let rest: Vec<u32> = group.clone().filter(|&u| !defs.iter().any(|(_, r)| r.contains(&u))).collect();
        if let [w] = ws.as_slice()
            && !rest.is_empty()
            && w.clone().all(|u| rest.contains(&u))
        {
            defs.push((j, w.clone())); // the pair's other half
            continue;
        }
        // Redefined: wholly, or in part if the rest is not read again before it is
        // redefined too (and not live out).
        let mut rest = [0u64; 4];
        for u in group.clone().filter(|&u| !ws.iter().any(|w| w.contains(&u))) {
            set(&mut rest, u, true);
        }
        for i in j + 1..n {
            if rest == [0; 4] {
                break;
            }
            if meets(&ops.rmask[i], &rest) {
                return None;
            }
            and_not(&mut rest, &ops.wmask[i]);
        }
        if meets(&rest, out) {
            return None;
        }
        end = true;
        break;
    }
    let last = last?;
    let covered = group.clone().all(|u| defs.iter().any(|(_, r)| r.contains(&u)));
    if !covered || !end && group.clone().any(|u| has(out, u)) {
        return None; // the pair's other half never defined, or live out of the block
    }
    Some((defs, last))
}
/// Applies a plan: each definition and every read of the value (a read after all the
/// definitions of the registers it names) move to the new registers; the liveness
/// follows.
fn apply(code: &mut [Instr], ops: &mut Ops, live_after: &mut [Units], plan: &Plan, file: File) {
    let moved = |u: u32| plan.x + (u - plan.group.start);
    let k = plan.defs[0].0;
    let is_new = |u: u32, j: usize| plan.defs.iter().any(|(p, r)| r.contains(&u) && *p < j);
    for (pos, old) in &plan.defs {
        for dst in code[*pos].dsts.iter_mut() {
            match (dst, file) {
                (Dst::Reg(r), File::Gpr) if gpr_units(*r) == Some(old.clone()) => {
                    *r = RegRef { reg: Reg::R(moved(old.start) as u8), comp: 0, n: r.n };
                }
                (Dst::Pred(p), File::Pred) if pred_unit(*p) == Some(old.clone()) => *p = Reg::P(moved(old.start) as u8),
                _ => {}
            }
        }
    }
    for (j, i) in code.iter_mut().enumerate().take(plan.last + 1).skip(k + 1) {
        let renamed = |ru: Range<u32>| -> Option<u32> {
            (ru.start >= plan.group.start && ru.end <= plan.group.end && ru.clone().all(|u| is_new(u, j)))
                .then(|| moved(ru.start))
        };
        match file {
            File::Gpr => {
                for s in i.srcs.iter_mut() {
                    if let Some(r) = s.gprs_mut()
                        && let Some(x) = gpr_units(*r).and_then(renamed)
                    {
                        *r = RegRef { reg: Reg::R(x as u8), comp: 0, n: r.n };
                    }
                }
            }
            File::Pred => {
                if let Some(g) = &mut i.guard
                    && let Some(x) = pred_unit(g.pred).and_then(renamed)
                {
                    g.pred = Reg::P(x as u8);
                }
                for s in i.srcs.iter_mut() {
                    if let SrcKind::Pred(p) = &mut s.kind
                        && let Some(x) = pred_unit(*p).and_then(renamed)
                    {
                        *p = Reg::P(x as u8);
                    }
                }
            }
        }
    }
    for (pos, _) in &plan.defs {
        ops.refresh(*pos, &code[*pos], file);
    }
    for (j, i) in code.iter().enumerate().take(plan.last + 1).skip(k + 1) {
        ops.refresh(j, i, file);
    }
    for (pos, old) in &plan.defs {
        for la in live_after.iter_mut().take(plan.last).skip(*pos) {
            for u in old.clone() {
                set(la, u, false);
                set(la, moved(u), true);
            }
        }
    }
}
