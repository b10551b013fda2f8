//! The dependence DAG of one scheduling region ([`super::list`]), built in time linear in
//! the region (near-linear for memory instructions, see [`MemOrder`]).
//!
//! Nodes `0..n` are the region's instructions; nodes from `n` on are *virtual*: they
//! stand for a set of memory instructions (their predecessors) that several later ones
//! must follow, so that `k` accesses each ordered after the same `m` earlier ones cost
//! `k + m` edges instead of `k * m`. A virtual node takes no issue slot: the scheduler
//! passes it as soon as its predecessors have issued. Every edge through one has latency
//! 0, so it orders exactly as the direct edges would (a 0-latency edge `q -> j` only
//! requires `q` to issue first; the height of `q` is at least that of `j`).
//!
//! Register dependences come from last-writer / readers-since maps: an edge for every read
//! after write (weighted by the producer's latency: [`table::timing`] for fixed-latency
//! results, [`table::nominal_latency`] for variable ones), write after read (0) and write
//! after write (1), on virtual and physical registers, predicates and CC.
//!
//! Memory dependences: two accesses must stay in order when they may conflict
//! ([`table::mem_access`]): at least one is a store, or one is observable (`keep`), in
//! overlapping state spaces, unless both use the same base register with disjoint byte
//! ranges. The DAG orders every such pair, directly or through a path; it never orders a
//! pair that does not conflict unless a path already orders it.

use super::table::{self, MemAccess, mem_access};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, SrcKind};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

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
fn keys(i: &Instr, r: &mut Vec<Key>, w: &mut Vec<Key>) {
    r.clear();
    w.clear();
    if let Some(g) = i.guard {
        reg_keys(g.pred, 0, 1, r);
    }
    for s in &i.srcs {
        match s.kind {
            SrcKind::Pred(p) => reg_keys(p, 0, 1, r),
            _ => {
                if let Some(g) = s.gprs() {
                    reg_keys(g.reg, g.comp, g.n, r);
                }
            }
        }
    }
    for d in &i.dsts {
        match d {
            Dst::Reg(g) => reg_keys(g.reg, g.comp, g.n, w),
            Dst::Pred(p) => reg_keys(*p, 0, 1, w),
        }
    }
    if i.op.reads_cc() {
        r.push(Key::Cc);
    }
    if i.op.writes_cc() {
        w.push(Key::Cc);
    }
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

/// The address operand of a memory instruction: base register operand and byte offset.
fn address(i: &Instr) -> Option<(RegRef, i32)> {
    i.srcs.iter().find_map(|s| match s.kind {
        SrcKind::Addr { base, offset } => Some((base, offset)),
        _ => None,
    })
}

/// A region's dependence DAG.
#[derive(Debug, Default)]
pub(super) struct Dag {
    /// Real nodes (instructions) are `0..n`; virtual nodes follow.
    pub n: usize,
    /// Successors of every node with the edge latency; at most one edge per pair.
    pub succs: Vec<Vec<(u32, u32)>>,
    /// Number of predecessors of every node.
    pub npreds: Vec<u32>,
    /// Every node in a topological order.
    pub topo: Vec<u32>,
}

impl Dag {
    fn node(&mut self) -> u32 {
        self.succs.push(vec![]);
        self.npreds.push(0);
        (self.succs.len() - 1) as u32
    }
    /// Adds `a -> b` (or raises its latency). Edges into a node are all added while it is
    /// being built, so a repeated edge is the last one of `a`'s list.
    fn edge(&mut self, a: u32, b: u32, lat: u32) {
        if let Some(last) = self.succs[a as usize].last_mut()
            && last.0 == b
        {
            last.1 = last.1.max(lat);
            return;
        }
        self.succs[a as usize].push((b, lat));
        self.npreds[b as usize] += 1;
    }
    /// A virtual node after `preds` (none for an empty set).
    fn join(&mut self, preds: &[u32]) -> Option<u32> {
        match preds {
            [] => None,
            [one] => Some(*one),
            _ => {
                let v = self.node();
                for &p in preds {
                    self.edge(p, v, 0);
                }
                self.topo.push(v);
                Some(v)
            }
        }
    }
    /// True for virtual nodes.
    pub fn is_virtual(&self, x: u32) -> bool {
        x as usize >= self.n
    }
}

/// Builds the DAG of `code` (one region).
pub(super) fn build(code: &[Instr]) -> Dag {
    let n = code.len();
    let mut dag = Dag { n, succs: vec![vec![]; n], npreds: vec![0; n], topo: Vec::with_capacity(n) };
    let mut last_write: FxHashMap<Key, u32> = FxHashMap::default();
    let mut readers: FxHashMap<Key, Vec<u32>> = FxHashMap::default();
    let mut mem = MemOrder::default();
    let (mut r, mut w) = (vec![], vec![]);
    for (j, i) in code.iter().enumerate() {
        let j = j as u32;
        keys(i, &mut r, &mut w);
        for k in &r {
            if let Some(&p) = last_write.get(k) {
                dag.edge(p, j, raw_latency(&code[p as usize], *k));
            }
        }
        for k in &w {
            if let Some(&p) = last_write.get(k) {
                dag.edge(p, j, 1);
            }
            if let Some(rs) = readers.get(k) {
                for &q in rs {
                    if q != j {
                        dag.edge(q, j, 0);
                    }
                }
            }
        }
        for k in &r {
            readers.entry(*k).or_default().push(j);
        }
        for k in &w {
            last_write.insert(*k, j);
            readers.remove(k);
        }
        if let Some(acc) = mem_access(&i.op) {
            mem.add(&mut dag, j, acc, address(i));
        }
        dag.topo.push(j);
    }
    dag
}

/// One memory access of the region.
#[derive(Clone, Copy, Debug)]
struct Access {
    node: u32,
    acc: MemAccess,
    /// Base register (not RZ) and byte range `[lo, hi)` relative to it.
    base: Option<RegRef>,
    lo: i64,
    hi: i64,
}

/// Whether `q` (earlier, not `keep`) and `j` must stay in order when their addresses do
/// not tell them apart: a store between them, in overlapping spaces.
fn class_conflict(q: &MemAccess, j: &MemAccess) -> bool {
    (q.store || j.store) && q.spaces & j.spaces != 0
}

/// Memory instructions of one base register.
#[derive(Debug, Default)]
struct BaseState {
    /// Accesses by start offset: (loads, stores), each in region order (indices into
    /// [`MemOrder::seq`]).
    by_off: BTreeMap<i64, (Vec<usize>, Vec<usize>)>,
    /// Largest access size seen, the latest start and the earliest end (to tell whether
    /// every access so far overlaps a given range).
    max_bytes: i64,
    max_lo: i64,
    min_hi: i64,
    /// Per (store, spaces) class: the latest access of the class and the node standing
    /// for its predecessors with other bases, when that node holds nothing else
    /// (`pure`).
    last_of_class: FxHashMap<(bool, u8), (usize, Option<u32>, bool)>,
}

/// Orders the memory instructions of a region (see the module docs). For an access `j`
/// with base register `B`, the earlier accesses it must follow are
/// * every `keep` access: `j` follows the latest one, which follows all before it;
/// * accesses with another base (or none), of a conflicting class: through the node that
///   stands for them for the previous access of `j`'s class with base `B` (which had
///   the same set up to there) plus those in between, so each class of each base scans
///   the region once; or, the first time, through the class prefixes ([`Prefix`]) when
///   every earlier `B` access overlaps `j`, else by one scan;
/// * accesses with base `B` whose byte ranges overlap `j`'s, found by offset; a store of
///   `B` covering `j`'s range and spaces ends the search (everything before it that
///   conflicts with `j` conflicts with it too).
///
/// Accesses without a base register follow the class prefixes.
#[derive(Debug, Default)]
struct MemOrder {
    seq: Vec<Access>,
    last_keep: Option<u32>,
    /// Index in `seq` of the latest `keep` access (0 when none).
    keep_seq: usize,
    /// Per (store, spaces) class of the earlier access: a node standing for all of them
    /// up to some point, and the accesses after it.
    prefix: FxHashMap<(bool, u8), Prefix>,
    bases: FxHashMap<RegRef, BaseState>,
    scratch: Vec<u32>,
}

/// A class's accesses: `head` stands for the earlier ones, `tail` follows it.
#[derive(Debug, Default)]
struct Prefix {
    head: Option<u32>,
    tail: Vec<u32>,
}

impl MemOrder {
    /// Nodes standing for every earlier access of a class that conflicts with `acc`.
    fn prefixes(&mut self, dag: &mut Dag, acc: &MemAccess, all: bool, out: &mut Vec<u32>) {
        let mut classes: Vec<(bool, u8)> =
            self.prefix.keys().copied().filter(|(s, sp)| all || class_conflict(&mem_class(*s, *sp), acc)).collect();
        classes.sort_unstable();
        for c in classes {
            let p = self.prefix.get_mut(&c).expect("class present");
            if !p.tail.is_empty() {
                let mut preds: Vec<u32> = p.head.into_iter().collect();
                preds.append(&mut p.tail);
                p.head = dag.join(&preds);
            }
            out.extend(p.head);
        }
    }

    fn add(&mut self, dag: &mut Dag, j: u32, acc: MemAccess, addr: Option<(RegRef, i32)>) {
        let base = addr.filter(|(b, _)| !b.reg.is_rz()).map(|(b, _)| b);
        let lo = addr.map_or(0, |(_, o)| o as i64);
        let a = Access { node: j, acc, base, lo, hi: lo + acc.bytes as i64 };
        let mut preds = std::mem::take(&mut self.scratch);
        preds.clear();
        preds.extend(self.last_keep);
        let mut class_node: Option<(Option<u32>, bool)> = None;
        if acc.keep {
            self.prefixes(dag, &acc, true, &mut preds);
            self.last_keep = Some(j);
            self.keep_seq = self.seq.len();
        } else if let Some(b) = base {
            let (other, pure) = self.other_bases(dag, &a, b);
            preds.extend(other);
            class_node = Some((other, pure));
            self.same_base(&a, b, &mut preds);
        } else {
            self.prefixes(dag, &acc, false, &mut preds);
        }
        preds.sort_unstable();
        preds.dedup();
        for &p in &preds {
            dag.edge(p, j, 0);
        }
        self.scratch = preds;
        // Record the access.
        let pos = self.seq.len();
        self.seq.push(a);
        self.prefix.entry((acc.store, acc.spaces)).or_default().tail.push(j);
        if let Some(b) = base {
            let st = self.bases.entry(b).or_insert_with(|| BaseState {
                max_lo: i64::MIN,
                min_hi: i64::MAX,
                ..BaseState::default()
            });
            let e = st.by_off.entry(lo).or_default();
            if acc.store { &mut e.1 } else { &mut e.0 }.push(pos);
            st.max_bytes = st.max_bytes.max(acc.bytes as i64);
            st.max_lo = st.max_lo.max(a.lo);
            st.min_hi = st.min_hi.min(a.hi);
            if let Some((node, pure)) = class_node {
                st.last_of_class.insert((acc.store, acc.spaces), (pos, node, pure));
            }
        }
    }

    /// The node for the earlier accesses with a base other than `b` that conflict with
    /// `a`, and whether it stands for nothing else.
    fn other_bases(&mut self, dag: &mut Dag, a: &Access, b: RegRef) -> (Option<u32>, bool) {
        let class = (a.acc.store, a.acc.spaces);
        let st = self.bases.get(&b);
        let prev = st.and_then(|s| s.last_of_class.get(&class).copied());
        let mut preds = vec![];
        let start = match prev {
            Some((pos, node, true)) => {
                preds.extend(node);
                pos + 1
            }
            _ => {
                let all_overlap = st.is_none_or(|s| s.max_lo < a.hi && s.min_hi > a.lo);
                if all_overlap {
                    // Every earlier `b` access that conflicts with `a` by class overlaps
                    // it: the class prefixes hold exactly what `a` must follow (and
                    // nothing with base `b` when there is none yet).
                    let pure = st.is_none();
                    self.prefixes(dag, &a.acc, false, &mut preds);
                    return (dag.join(&preds), pure);
                }
                0
            }
        };
        // Accesses before the latest `keep` one are ordered through it.
        for q in &self.seq[start.max(self.keep_seq)..] {
            if q.base != Some(b) && class_conflict(&q.acc, &a.acc) {
                preds.push(q.node);
            }
        }
        (dag.join(&preds), true)
    }

    /// Earlier accesses with base `b` whose byte ranges overlap `a`'s and that conflict
    /// with it.
    fn same_base(&self, a: &Access, b: RegRef, out: &mut Vec<u32>) {
        let Some(st) = self.bases.get(&b) else { return };
        let range = (a.lo - st.max_bytes + 1)..a.hi;
        // The latest store covering `a`'s range and spaces: nothing before it needs a
        // direct edge.
        let mut cut = 0usize;
        for (&off, (_, stores)) in st.by_off.range(range.clone()) {
            if off > a.lo {
                break;
            }
            for &k in stores.iter().rev().take(4) {
                let q = &self.seq[k];
                if q.hi >= a.hi && q.acc.spaces & a.acc.spaces == a.acc.spaces {
                    cut = cut.max(k);
                    break;
                }
            }
        }
        for (_, (loads, stores)) in st.by_off.range(range) {
            let lists: &[&Vec<usize>] = if a.acc.store { &[loads, stores] } else { &[stores] };
            for list in lists {
                for &k in list.iter().rev() {
                    if k < cut {
                        break;
                    }
                    let q = &self.seq[k];
                    if q.hi > a.lo && q.lo < a.hi && class_conflict(&q.acc, &a.acc) {
                        out.push(q.node);
                    }
                }
            }
        }
    }
}

/// A stand-in access of a class, for [`class_conflict`].
fn mem_class(store: bool, spaces: u8) -> MemAccess {
    MemAccess { spaces, store, keep: false, bytes: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairwise definition: `a` before `b` must stay in order.
    fn mem_conflict(a: &Instr, b: &Instr) -> bool {
        let (Some(x), Some(y)) = (mem_access(&a.op), mem_access(&b.op)) else { return false };
        if x.keep || y.keep {
            return true;
        }
        if !(x.store || y.store) || x.spaces & y.spaces == 0 {
            return false;
        }
        if let (Some((ba, oa)), Some((bb, ob))) = (address(a), address(b))
            && ba == bb
            && !ba.reg.is_rz()
        {
            let (oa, ob) = (oa as i64, ob as i64);
            return !(oa + x.bytes as i64 <= ob || ob + y.bytes as i64 <= oa);
        }
        true
    }

    /// Reachability between real nodes (bit sets).
    fn closure(n: usize, succs: &[Vec<(u32, u32)>], topo: &[u32]) -> Vec<Vec<u64>> {
        let words = n.div_ceil(64);
        let mut reach = vec![vec![0u64; words]; succs.len()];
        for &x in topo.iter().rev() {
            let mut r = vec![0u64; words];
            for &(s, _) in &succs[x as usize] {
                let s = s as usize;
                if s < n {
                    r[s / 64] |= 1 << (s % 64);
                }
                for k in 0..words {
                    r[k] |= reach[s][k];
                }
            }
            reach[x as usize] = r;
        }
        reach.truncate(n);
        reach
    }

    /// The DAG orders exactly the pairs the pairwise definition orders (up to paths).
    pub(crate) fn check_region(code: &[Instr]) {
        let n = code.len();
        let g = build(code);
        // The reference: register edges as built, memory edges pairwise.
        let mut reference: Vec<Vec<(u32, u32)>> = vec![vec![]; n];
        for x in 0..n {
            let mut stack = vec![x as u32];
            let mut seen = vec![false; g.succs.len()];
            while let Some(y) = stack.pop() {
                for &(s, w) in &g.succs[y as usize] {
                    if g.is_virtual(s) {
                        if !std::mem::replace(&mut seen[s as usize], true) {
                            stack.push(s);
                        }
                    } else if !g.is_virtual(y) && (w > 0 || !mem_conflict(&code[x], &code[s as usize])) {
                        // A register edge (memory edges are checked below).
                        reference[x].push((s, w));
                    }
                }
            }
        }
        for b in 0..n {
            for a in 0..b {
                if mem_conflict(&code[a], &code[b]) {
                    reference[a].push((b as u32, 0));
                }
            }
        }
        let topo: Vec<u32> = (0..n as u32).collect();
        let want = closure(n, &reference, &topo);
        let got = closure(n, &g.succs, &g.topo);
        for a in 0..n {
            for b in 0..n {
                let (w, h) = (want[a][b / 64] >> (b % 64) & 1, got[a][b / 64] >> (b % 64) & 1);
                assert_eq!(w, h, "order of {a} `{:?}` and {b} `{:?}`", code[a].op, code[b].op);
            }
        }
    }

    /// Random sequences of loads and stores in every space, with `keep` accesses, a few
    /// base registers (RZ included), overlapping and disjoint offsets and three sizes.
    #[test]
    fn memory_order_matches_the_pairwise_definition_on_random_accesses() {
        use crate::sass::instr::Src;
        use crate::sass::op::{MemMods, MemSize, Op};
        let mut rng = crate::exec::Rng::new(14);
        for _ in 0..200 {
            let n = 2 + (rng.next_u64() % 120) as usize;
            let code: Vec<Instr> = (0..n)
                .map(|_| {
                    let size = [MemSize::B32, MemSize::B64, MemSize::B128][(rng.next_u64() % 3) as usize];
                    let mut m = MemMods::new(size, true);
                    m.keep = rng.next_u64().is_multiple_of(12);
                    let op = match rng.next_u64() % 8 {
                        0 => Op::Ldg(m),
                        1 => Op::Stg(m),
                        2 => Op::Lds(m),
                        3 => Op::Sts(m),
                        4 => Op::Ld(m),
                        5 => Op::St(m),
                        6 => Op::Ldl(m),
                        _ => Op::Stl(m),
                    };
                    let base =
                        RegRef::new([Reg::R(2), Reg::R(4), Reg::R(6), Reg::R(255)][(rng.next_u64() % 4) as usize], 2);
                    let addr = Src::addr(base, 4 * (rng.next_u64() % 6) as i32);
                    let v = RegRef::new(Reg::R(8 + 4 * (rng.next_u64() % 4) as u8), 1);
                    if op.info().store {
                        Instr::new(op, vec![], vec![addr, Src::reg(v)])
                    } else {
                        Instr::new(op, vec![Dst::Reg(v)], vec![addr])
                    }
                })
                .collect();
            check_region(&code);
        }
    }

    #[test]
    fn memory_order_matches_the_pairwise_definition_on_stress_spill() {
        let src = include_str!("../../samples/stress_spill.ptx");
        let (m, _) = crate::ptx::parse(src).expect("parses");
        for budget in [16, 255] {
            let (mut irm, _) = crate::lower::lower(&m, &Default::default()).expect("lowers");
            let f = &mut irm.functions[0];
            let opts = crate::regalloc::Options { max_regs: budget, verify: false };
            for &b in &f.layout {
                check_region(&f.cfg[b].instrs);
            }
            crate::regalloc::allocate(f, &opts).expect("allocates");
            for &b in &f.layout {
                check_region(&f.cfg[b].instrs);
            }
        }
    }
}
