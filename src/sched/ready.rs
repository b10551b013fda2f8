//! The list-scheduling loop of [`super::list`]: register-pressure bookkeeping over the
//! virtual registers of a region, and a ready list that finds the next instruction in
//! time logarithmic in the region.
//!
//! The choice ([`list_schedule`]) depends on each ready candidate's height, earliest
//! issue cycle and the pressure it would cause. Pressure changes only through the
//! candidate's own registers, so each candidate's pressure figures are cached as a few
//! small numbers ([`Delta`]) and recomputed only when the state of one of its registers
//! changes (live, last reader, still read); candidates with equal figures share a
//! bucket, holding heaps by height and by earliest cycle. A step looks at the top of each
//! bucket (a handful), instead of every ready candidate.

use super::dag::Dag;
use crate::ir::{VRegKind, for_each_def, for_each_use};
use crate::sass::instr::Instr;
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Region-local numbering of virtual registers: dense marks over all of the function's
/// registers, reused (by stamp) for every region.
pub(super) struct LocalMap {
    idx: Vec<u32>,
    stamp: Vec<u32>,
    cur: u32,
}

impl LocalMap {
    /// A map for a function with `n` virtual registers.
    pub fn new(n: usize) -> LocalMap {
        LocalMap { idx: vec![0; n], stamp: vec![0; n], cur: 0 }
    }

    /// Numbers the registers of `code` and records what the pressure bookkeeping needs;
    /// `live_after` marks (by function register) those live after the region.
    pub fn region(&mut self, code: &[Instr], kinds: &[VRegKind], live_after: &[bool]) -> Region {
        self.cur += 1;
        let mut r = Region {
            vregs: vec![],
            weight: vec![],
            live_after: vec![],
            live_before: vec![],
            before: (0, 0),
            uses: vec![0],
            use_list: vec![],
            defs: vec![0],
            def_list: vec![],
            touchers: vec![],
        };
        let mut local = |v: u32, r: &mut Region| -> u32 {
            if self.stamp[v as usize] != self.cur {
                self.stamp[v as usize] = self.cur;
                self.idx[v as usize] = r.vregs.len() as u32;
                r.vregs.push(v);
                r.weight.push(match kinds[v as usize] {
                    VRegKind::Pred => (0, 1),
                    VRegKind::Gpr(n) => (n as u32, 0),
                });
                r.live_after.push(live_after[v as usize]);
                r.touchers.push(vec![]);
            }
            self.idx[v as usize]
        };
        for (j, i) in code.iter().enumerate() {
            // Uses once each (as the bookkeeping counts readers); definitions as written.
            let first = r.use_list.len();
            for_each_use(i, |v| {
                let l = local(v, &mut r);
                if !r.use_list[first..].contains(&l) {
                    r.use_list.push(l);
                }
            });
            r.uses.push(r.use_list.len());
            for_each_def(i, |v| {
                let l = local(v, &mut r);
                r.def_list.push(l);
            });
            r.defs.push(r.def_list.len());
            let (u, d) = (r.uses[j]..r.uses[j + 1], r.defs[j]..r.defs[j + 1]);
            for k in u.clone() {
                let l = r.use_list[k];
                r.touchers[l as usize].push(j as u32);
            }
            for k in d {
                let l = r.def_list[k];
                if r.touchers[l as usize].last() != Some(&(j as u32)) {
                    r.touchers[l as usize].push(j as u32);
                }
            }
        }
        r
    }
}

/// The register bookkeeping of one region, over region-local register numbers.
pub(super) struct Region {
    /// Function register of each local one.
    vregs: Vec<u32>,
    /// (GPR units, predicates) of each register.
    weight: Vec<(u32, u32)>,
    /// Live after the region.
    pub live_after: Vec<bool>,
    /// Live before the region.
    live_before: Vec<bool>,
    /// (GPR units, predicates) of everything live before the region.
    before: (u32, u32),
    /// Registers each instruction reads (distinct) and writes: `use_list[uses[j]..uses[j
    /// + 1]]`, likewise for definitions.
    uses: Vec<usize>,
    use_list: Vec<u32>,
    defs: Vec<usize>,
    def_list: Vec<u32>,
    /// Instructions reading or writing each register.
    touchers: Vec<Vec<u32>>,
}

impl Region {
    /// Records which registers are live before the region (`live_before` by function
    /// register) and the (GPR units, predicates) live then.
    pub fn set_live_before(&mut self, live_before: &[bool], before: (u32, u32)) {
        self.live_before = self.vregs.iter().map(|&v| live_before[v as usize]).collect();
        self.before = before;
    }
    fn uses(&self, j: usize) -> &[u32] {
        &self.use_list[self.uses[j]..self.uses[j + 1]]
    }
    /// Local registers instruction `j` writes.
    pub fn defs(&self, j: usize) -> &[u32] {
        &self.def_list[self.defs[j]..self.defs[j + 1]]
    }
    fn len(&self) -> usize {
        self.uses.len() - 1
    }
    fn pressure(&self) -> Pressure<'_> {
        let mut remaining = vec![0u32; self.vregs.len()];
        for &v in &self.use_list {
            remaining[v as usize] += 1;
        }
        Pressure { r: self, live: self.live_before.clone(), remaining, gpr: self.before.0, pred: self.before.1 }
    }
    /// Pressure of the region in its original order (max live GPR units, predicates).
    pub fn original_pressure(&self) -> (u32, u32) {
        let mut p = self.pressure();
        let (mut g, mut q) = (p.gpr, p.pred);
        for j in 0..self.len() {
            let d = p.delta(j);
            g = g.max(d.peak_g(p.gpr));
            q = q.max(d.peak_p(p.pred));
            p.issue(j, |_| {});
        }
        (g, q)
    }
}

/// What issuing an instruction would do to pressure, relative to the live counts: the
/// change of live GPR units (`a_g`), and the peak changes while it issues (`d_g`, `d_p`:
/// results never read still need a register for an instant; sources read for the last
/// time may share a register with a result).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Delta {
    d_g: i32,
    d_p: i32,
    a_g: i32,
}

impl Delta {
    fn peak_g(&self, gpr: u32) -> u32 {
        gpr + self.d_g.max(0) as u32
    }
    fn peak_p(&self, pred: u32) -> u32 {
        pred + self.d_p.max(0) as u32
    }
    fn after_g(&self, gpr: u32) -> u32 {
        (gpr as i64 + self.a_g as i64).max(0) as u32
    }
    /// The bucket key: the figures the choice compares ([`Delta::peak_g`] etc. only
    /// depend on these).
    fn key(&self) -> (i32, i32, i32) {
        (self.d_g.max(0), self.d_p.max(0), self.a_g)
    }
}

/// Register pressure bookkeeping over a region's registers.
struct Pressure<'a> {
    r: &'a Region,
    /// Live now.
    live: Vec<bool>,
    /// Unissued readers in the region.
    remaining: Vec<u32>,
    gpr: u32,
    pred: u32,
}

impl Pressure<'_> {
    /// The effect of issuing instruction `j` now.
    fn delta(&self, j: usize) -> Delta {
        let (mut g, mut p) = (0i64, 0i64);
        let (mut dead_g, mut dead_p) = (0i64, 0i64);
        for &v in self.r.uses(j) {
            let v = v as usize;
            if self.remaining[v] == 1 && !self.r.live_after[v] && self.live[v] {
                let (a, b) = self.r.weight[v];
                g -= a as i64;
                p -= b as i64;
            }
        }
        for &v in self.r.defs(j) {
            let v = v as usize;
            if !self.live[v] {
                let (a, b) = self.r.weight[v];
                if self.r.live_after[v] || self.remaining[v] > 0 {
                    g += a as i64;
                    p += b as i64;
                } else {
                    dead_g += a as i64;
                    dead_p += b as i64;
                }
            }
        }
        Delta { d_g: (g + dead_g) as i32, d_p: (p + dead_p) as i32, a_g: g as i32 }
    }
    /// What of a register's state [`Pressure::delta`] looks at.
    fn state(&self, v: usize) -> (bool, bool, bool) {
        (self.live[v], self.remaining[v] == 1, self.remaining[v] > 0)
    }
    /// Issues instruction `j`; calls `changed` with every register whose state changed.
    fn issue(&mut self, j: usize, mut changed: impl FnMut(u32)) {
        let r = self.r;
        for &v in r.uses(j) {
            let v = v as usize;
            let old = self.state(v);
            self.remaining[v] -= 1;
            if self.remaining[v] == 0 && !r.live_after[v] && self.live[v] {
                self.live[v] = false;
                let (a, b) = r.weight[v];
                self.gpr -= a;
                self.pred -= b;
            }
            if self.state(v) != old {
                changed(v as u32);
            }
        }
        for &v in r.defs(j) {
            let v = v as usize;
            let needed = r.live_after[v] || self.remaining[v] > 0;
            if needed && !self.live[v] {
                self.live[v] = true;
                let (a, b) = r.weight[v];
                self.gpr += a;
                self.pred += b;
                changed(v as u32);
            }
        }
    }
}

/// A candidate waiting for its operands: (earliest cycle, height, candidate, version),
/// the smallest first in a max-heap.
type Pending = Reverse<(u32, Reverse<u32>, u32, u32)>;

/// Candidates with equal [`Delta::key`]: heaps of entries `(.., candidate, version)`, an
/// entry being current while the version matches the candidate's.
#[derive(Default)]
struct Bucket {
    key: (i32, i32, i32),
    count: u32,
    /// Ready at the current cycle, by (height, earlier first).
    avail: BinaryHeap<(u32, Reverse<u32>, u32)>,
    /// Not yet ready, by (earliest cycle, higher first, earlier first).
    pend: BinaryHeap<Pending>,
    /// All, by (height, earlier first).
    all: BinaryHeap<(u32, Reverse<u32>, u32)>,
}

/// One scheduling attempt.
pub(super) struct Attempt {
    /// The order: original indices.
    pub order: Vec<usize>,
    /// Peak live GPR units and predicates.
    pub peak_g: u32,
    pub peak_p: u32,
    /// Per step, the largest peak of a candidate within the GPR limit (0 when none was;
    /// for steps repeated from the previous attempt, that attempt's figure, which is
    /// this one's too).
    fit_peak: Vec<u32>,
}

impl Attempt {
    /// How many of this attempt's first choices a lower GPR limit `soft` would repeat:
    /// up to the first step where a candidate within this attempt's limit exceeds `soft`
    /// (steps where no candidate fit choose alike under any GPR limit).
    pub fn steps_valid_under(&self, soft: u32) -> usize {
        self.fit_peak.iter().position(|&p| p > soft).unwrap_or(self.fit_peak.len())
    }
}

/// The ready list.
struct Ready {
    buckets: Vec<Bucket>,
    by_key: FxHashMap<(i32, i32, i32), usize>,
    /// Per candidate: bucket, version, whether ready.
    bucket: Vec<u32>,
    version: Vec<u32>,
    ready: Vec<bool>,
}

impl Ready {
    fn insert(&mut self, j: usize, d: Delta, height: u32, earliest: u32, clock: u32) {
        let key = d.key();
        let b = *self.by_key.entry(key).or_insert_with(|| {
            self.buckets.push(Bucket { key, ..Bucket::default() });
            self.buckets.len() - 1
        });
        self.version[j] += 1;
        let ver = self.version[j];
        self.bucket[j] = b as u32;
        self.ready[j] = true;
        let bk = &mut self.buckets[b];
        bk.count += 1;
        let j32 = j as u32;
        if earliest <= clock {
            bk.avail.push((height, Reverse(j32), ver));
        } else {
            bk.pend.push(Reverse((earliest, Reverse(height), j32, ver)));
        }
        bk.all.push((height, Reverse(j32), ver));
    }
    fn remove(&mut self, j: usize) {
        self.version[j] += 1;
        self.ready[j] = false;
        self.buckets[self.bucket[j] as usize].count -= 1;
    }
}

/// One list-scheduling pass over a region's DAG `g` with GPR limit `limit_g` and predicate
/// limit `limit_p`, issuing first the choices of `prev` that still hold under `limit_g`
/// ([`Attempt::steps_valid_under`]).
pub(super) fn list_schedule(
    g: &Dag,
    height: &[u32],
    region: &Region,
    limit_g: u32,
    limit_p: u32,
    prev: Option<&Attempt>,
) -> Attempt {
    let valid = prev.map_or(0, |a| a.steps_valid_under(limit_g));
    let n = g.n;
    let mut p = region.pressure();
    let (mut peak_g, mut peak_p) = (p.gpr, p.pred);
    let mut preds_left: Vec<u32> = g.npreds.clone();
    let mut earliest = vec![0u32; g.succs.len()];
    let mut rd = Ready {
        buckets: vec![],
        by_key: FxHashMap::default(),
        bucket: vec![0; n],
        version: vec![0; n],
        ready: vec![false; n],
    };
    let mut delta: Vec<Delta> = vec![Delta { d_g: 0, d_p: 0, a_g: 0 }; n];
    let mut clock = 0u32;
    for j in 0..n {
        if preds_left[j] == 0 {
            delta[j] = p.delta(j);
            rd.insert(j, delta[j], height[j], earliest[j], clock);
        }
    }
    let mut out = Vec::with_capacity(n);
    let mut fit_peak = Vec::with_capacity(n);
    let mut stack: Vec<u32> = vec![];
    let mut changed: Vec<u32> = vec![];
    while out.len() < n {
        let step = out.len();
        let (pick, fp) = match prev {
            Some(a) if step < valid => (a.order[step], a.fit_peak[step]),
            _ => choose(&mut rd, &p, clock, limit_g, limit_p),
        };
        fit_peak.push(fp);
        debug_assert!(rd.ready[pick], "the choice is a ready instruction");
        debug_assert_eq!(delta[pick], p.delta(pick), "cached pressure figures are current");
        rd.remove(pick);
        clock = clock.max(earliest[pick]);
        let d = delta[pick];
        (peak_g, peak_p) = (peak_g.max(d.peak_g(p.gpr)), peak_p.max(d.peak_p(p.pred)));
        changed.clear();
        p.issue(pick, |v| changed.push(v));
        out.push(pick);
        // Successors; virtual nodes pass at once, at the cycle their last input allows.
        stack.push(pick as u32);
        while let Some(x) = stack.pop() {
            let at = if g.is_virtual(x) { earliest[x as usize] } else { clock };
            for &(s, w) in &g.succs[x as usize] {
                let s = s as usize;
                earliest[s] = earliest[s].max(at + w);
                preds_left[s] -= 1;
                if preds_left[s] == 0 {
                    if g.is_virtual(s as u32) {
                        stack.push(s as u32);
                    } else {
                        delta[s] = p.delta(s);
                        rd.insert(s, delta[s], height[s], earliest[s], clock + 1);
                    }
                }
            }
        }
        // Candidates whose registers changed state get new figures.
        for &v in &changed {
            for &c in &region.touchers[v as usize] {
                let c = c as usize;
                if rd.ready[c] {
                    let nd = p.delta(c);
                    if nd.key() != delta[c].key() {
                        rd.remove(c);
                        rd.insert(c, nd, height[c], earliest[c], clock + 1);
                    }
                    delta[c] = nd;
                }
            }
        }
        clock += 1;
    }
    Attempt { order: out, peak_g, peak_p, fit_peak }
}

/// The next instruction at cycle `clock` (see the module docs of [`super::list`]), and
/// the largest peak of a candidate within the GPR limit (0 when none is).
fn choose(rd: &mut Ready, p: &Pressure, clock: u32, limit_g: u32, limit_p: u32) -> (usize, u32) {
    let fits = |k: (i32, i32, i32)| p.gpr + k.0 as u32 <= limit_g && p.pred + k.1 as u32 <= limit_p;
    let version = &rd.version;
    let current = |j: u32, ver: u32| version[j as usize] == ver;
    let mut best_avail: Option<(u32, Reverse<u32>)> = None;
    let mut best_pend: Option<(u32, Reverse<u32>, u32)> = None;
    let mut fit_peak = 0;
    let mut any_fit = false;
    for bk in rd.buckets.iter_mut().filter(|b| b.count > 0 && fits(b.key)) {
        any_fit = true;
        fit_peak = fit_peak.max(p.gpr + bk.key.0 as u32);
        // Entries that became ready by now move to `avail`.
        while let Some(Reverse((e, h, j, ver))) = bk.pend.peek().copied() {
            if !current(j, ver) {
                bk.pend.pop();
            } else if e <= clock {
                bk.pend.pop();
                bk.avail.push((h.0, Reverse(j), ver));
            } else {
                break;
            }
        }
        while bk.avail.peek().is_some_and(|&(_, Reverse(j), ver)| !current(j, ver)) {
            bk.avail.pop();
        }
        if let Some(&(h, j, _)) = bk.avail.peek() {
            best_avail = best_avail.max(Some((h, j)));
        }
        if let Some(&Reverse((e, h, j, _))) = bk.pend.peek() {
            let c = (e, h, j);
            if best_pend.is_none_or(|b| c < b) {
                best_pend = Some(c);
            }
        }
    }
    if any_fit {
        if let Some((_, Reverse(j))) = best_avail {
            return (j as usize, fit_peak);
        }
        let (_, _, j) = best_pend.expect("a fitting bucket has a candidate");
        return (j as usize, fit_peak);
    }
    // Over the limit whatever issues: the candidate that leaves the fewest live.
    let mut best: Option<(u32, u32, Reverse<u32>, u32)> = None;
    for bk in rd.buckets.iter_mut().filter(|b| b.count > 0) {
        while bk.all.peek().is_some_and(|&(_, Reverse(j), ver)| !current(j, ver)) {
            bk.all.pop();
        }
        let &(h, Reverse(j), _) = bk.all.peek().expect("a counted bucket has a candidate");
        let d = Delta { d_g: bk.key.0, d_p: bk.key.1, a_g: bk.key.2 };
        let c = (d.peak_p(p.pred).saturating_sub(limit_p), d.after_g(p.gpr), Reverse(h), j);
        if best.is_none_or(|b| c < b) {
            best = Some(c);
        }
    }
    (best.expect("a ready candidate").3 as usize, 0)
}
