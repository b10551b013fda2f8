//! Places regalloc2's slots in the physical register file.
//!
//! Input: a function whose general-purpose operands name slots (virtual registers 0..192:
//! 64 singles, 64 pairs, 64 quads), written many times. Output: the same function on
//! physical registers R0..R(limit-1), 64-bit values at even registers, 128-bit values at
//! multiples of 4, R1 left for the frame pointer when the function has local memory.
//!
//! Method:
//! 1. *Webs*: one slot holds many unrelated values over a function. SSA construction on
//!    the slot program followed by union of every block parameter with its arguments
//!    ("renumbering" in Chaitin-Briggs allocators) splits each slot into webs: the values
//!    that must share a register because they meet at a join.
//! 2. Liveness of webs (backward dataflow over blocks) and an interference graph: a
//!    definition interferes with everything live after it, except the components of a
//!    copy's source that it copies.
//! 3. Greedy coloring, widest first, with alignment, preferring for each web the registers
//!    its `copy`/`join` partners already got (coalescing: a `join` whose parts land in its
//!    destination's registers costs nothing).
//!
//! With `complete = true` webs are not split and every slot interferes with every other:
//! a static partition of the file that always fits when the slot counts do.

use crate::ir::{Function, for_each_def, for_each_use};
use crate::sass::abi::is_callee_saved;
use crate::sass::instr::{Dst, Reg, SrcKind};
use crate::sass::op::Op;

/// A growable bit set over web numbers.
#[derive(Clone, Default, PartialEq)]
struct Bits(Vec<u64>);

impl Bits {
    fn with_len(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn insert(&mut self, v: u32) {
        self.0[v as usize / 64] |= 1 << (v % 64);
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(w, bits)| {
            let mut b = *bits;
            std::iter::from_fn(move || {
                if b == 0 {
                    return None;
                }
                let t = b.trailing_zeros();
                b &= b - 1;
                Some(w as u32 * 64 + t)
            })
        })
    }
}

/// A set of register numbers (0..320: a base plus a component offset may pass R254).
#[derive(Clone, Copy, Default)]
struct RegMask([u64; 5]);

impl RegMask {
    fn set(&mut self, r: u32) {
        if r < 320 {
            self.0[r as usize / 64] |= 1 << (r % 64);
        }
    }
    fn has(&self, r: u32) -> bool {
        r < 320 && self.0[r as usize / 64] >> (r % 64) & 1 == 1
    }
}

/// A set of units with insertion, removal and iteration in time proportional to its size.
struct UnitSet {
    pos: Vec<u32>,
    items: Vec<u32>,
}

impl UnitSet {
    fn new(n: usize) -> UnitSet {
        UnitSet { pos: vec![u32::MAX; n], items: vec![] }
    }
    fn insert(&mut self, u: u32) {
        if self.pos[u as usize] == u32::MAX {
            self.pos[u as usize] = self.items.len() as u32;
            self.items.push(u);
        }
    }
    fn remove(&mut self, u: u32) {
        let k = self.pos[u as usize];
        if k != u32::MAX {
            self.pos[u as usize] = u32::MAX;
            let last = self.items.pop().expect("present");
            if last != u {
                self.items[k as usize] = last;
                self.pos[last as usize] = k;
            }
        }
    }
    fn contains(&self, u: u32) -> bool {
        self.pos[u as usize] != u32::MAX
    }
    fn clear(&mut self) {
        for &u in &self.items {
            self.pos[u as usize] = u32::MAX;
        }
        self.items.clear();
    }
    fn iter(&self) -> std::slice::Iter<'_, u32> {
        self.items.iter()
    }
}

/// Does the function need the frame pointer R1 (local data, spills, or explicit R1 uses)?
pub fn needs_frame(f: &Function) -> bool {
    f.local_bytes > 0
        || f.spill_bytes > 0
        || f.layout.iter().any(|b| {
            f.cfg[*b].instrs.iter().any(|i| i.srcs.iter().any(|s| s.gprs().is_some_and(|r| r.reg == Reg::R(1))))
        })
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        parent[x as usize] = parent[parent[x as usize] as usize];
        x = parent[x as usize];
    }
    x
}

/// Splits slots into webs (see the module documentation); renumbers operands to webs.
fn split_webs(f: &mut Function) {
    crate::lower::ssa::construct_with(f, false);
    let n = f.vregs.len();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    for b in f.layout.clone() {
        let params = f.cfg[b].params.clone();
        for e in f.pred_edges(b) {
            for (p, a) in params.iter().zip(f.cfg[e].args.clone()) {
                let (x, y) = (find(&mut parent, *p), find(&mut parent, a));
                if x != y {
                    parent[x as usize] = y;
                }
            }
        }
    }
    let root: Vec<u32> = (0..n as u32).map(|v| find(&mut parent, v)).collect();
    let rename = |v: &mut u32| *v = root[*v as usize];
    for b in f.layout.clone() {
        let blk = &mut f.cfg[b];
        blk.params.clear();
        for i in blk.instrs.iter_mut() {
            if let Some(g) = &mut i.guard
                && let Reg::V(v) = &mut g.pred
            {
                rename(v);
            }
            for s in i.srcs.iter_mut() {
                if let Some(r) = s.gprs_mut()
                    && let Reg::V(v) = &mut r.reg
                {
                    rename(v);
                }
            }
            for d in i.dsts.iter_mut() {
                if let Dst::Reg(r) = d
                    && let Reg::V(v) = &mut r.reg
                {
                    rename(v);
                }
            }
        }
    }
    for e in f.cfg.edge_indices().collect::<Vec<_>>() {
        f.cfg[e].args.clear();
    }
    f.ssa = false;
}

/// Conflict lists per web, (other web, my component mask, its component mask), compacted
/// (sorted, duplicates removed) whenever one doubles: the same pair is found at many
/// places (every block both webs are live into), and kept uncompacted the lists held
/// O(blocks * live^2) entries (nested-loops 40k: 700 MB). Entries are stored as one
/// `u64` each (`other << 16 | mine << 8 | its`): sorting the lists was a third of the
/// instructions of a spilling 10k-line kernel, and one integer compares faster than a
/// tuple of three.
struct Conflicts {
    lists: Vec<Vec<u64>>,
    /// Length after which a list is compacted next.
    caps: Vec<usize>,
}

impl Conflicts {
    fn new(n: usize) -> Conflicts {
        Conflicts { lists: vec![vec![]; n], caps: vec![64; n] }
    }

    fn push(&mut self, a: u32, c: (u32, u8, u8)) {
        let (l, cap) = (&mut self.lists[a as usize], &mut self.caps[a as usize]);
        l.push((c.0 as u64) << 16 | (c.1 as u64) << 8 | c.2 as u64);
        if l.len() >= *cap {
            l.sort_unstable();
            l.dedup();
            *cap = (2 * l.len()).max(64);
        }
    }

    /// The lists, as pushed (compacted at most to half their length). Their readers in
    /// [`pack`] only take unions of the registers the entries forbid, which neither the
    /// order nor repeated entries change, so they are not sorted again here.
    fn finish(self) -> Vec<Vec<u64>> {
        self.lists
    }
}

/// A conflict entry of [`Conflicts`]: (other web, my component mask, its component mask).
fn conflict(e: u64) -> (u32, u8, u8) {
    ((e >> 16) as u32, (e >> 8) as u8, e as u8)
}

/// Colors the slots of `f` and rewrites its operands to physical registers; `frame` keeps
/// R1 free for the frame pointer.
pub fn pack(f: &mut Function, limit: u32, complete: bool, frame: bool) -> Result<(), String> {
    if !complete {
        split_webs(f);
    }
    let n = f.vregs.len();
    let width = |v: u32| f.vregs[v as usize].width() as u32;
    let blocks = f.layout.clone();
    let mut used = Bits::with_len(n);
    for &b in &blocks {
        for i in &f.cfg[b].instrs {
            for_each_use(i, |v| used.insert(v));
            for_each_def(i, |v| used.insert(v));
        }
    }
    // Liveness of 32-bit units (web, component): a wide value whose low half is dead may
    // share that register with a new value while its high half is still read (ptxas's
    // in-place `IADD R4.CC, R4, ..; IADD.X R5, R5, ..`).
    let unit = |v: u32, c: u8| v * 4 + c as u32;
    let uses_of = |i: &crate::sass::instr::Instr, out: &mut Vec<u32>| {
        if let Some(g) = i.guard
            && let Reg::V(v) = g.pred
        {
            out.push(unit(v, 0));
        }
        for s in &i.srcs {
            if matches!(s.kind, SrcKind::Pred(_)) {
                continue;
            }
            if let Some(r) = s.gprs()
                && let Reg::V(v) = r.reg
            {
                for c in r.comp..r.comp + r.n {
                    out.push(unit(v, c));
                }
            }
        }
    };
    // Units live into and out of each block: sparse sets by path exploration
    // ([`crate::ir::liveness::explore`]); a definition of a web ends every component.
    let nb = petgraph::visit::NodeIndexable::node_bound(&f.cfg);
    let mut preds: Vec<Vec<u32>> = vec![vec![]; nb];
    let (mut ue, mut defs) = (vec![], vec![]);
    let mut defined = vec![usize::MAX; n];
    let mut buf = vec![];
    for &b in &blocks {
        let bi = b.index() as u32;
        for s in f.succs(b) {
            preds[s.index()].push(bi);
        }
        for i in &f.cfg[b].instrs {
            buf.clear();
            uses_of(i, &mut buf);
            for &u in &buf {
                if defined[(u / 4) as usize] != b.index() {
                    ue.push((u, bi));
                }
            }
            for_each_def(i, |v| {
                if defined[v as usize] != b.index() {
                    defined[v as usize] = b.index();
                    for c in 0..width(v) {
                        defs.push((unit(v, c as u8), bi));
                    }
                }
            });
        }
    }
    let (_, live_out) = crate::ir::liveness::explore(&preds, 4 * n, ue, defs, vec![], vec![]);
    // Conflicts: (other web, my component mask, its component mask): no register may hold
    // one of my masked components and one of its masked components.
    let mut adj = Conflicts::new(n);
    let mut prefs: Vec<Vec<(u32, i32)>> = vec![vec![]; n]; // (partner, register offset)
    let full = |v: u32| ((1u32 << width(v)) - 1) as u8;
    let add = |a: u32, am: u8, b: u32, bm: u8, adj: &mut Conflicts| {
        if a != b {
            adj.push(a, (b, am, bm));
            adj.push(b, (a, bm, am));
        }
    };
    // Where the calling convention wants a web (an argument or result word of a call,
    // a parameter or returned word): tried first, so the convention's moves vanish.
    let mut abi_pref: Vec<Option<u32>> = vec![None; n];
    {
        let mut want = |r: crate::sass::instr::RegRef, phys: u8| {
            if let Reg::V(v) = r.reg
                && let Some(base) = (phys as u32).checked_sub(r.comp as u32)
            {
                abi_pref[v as usize].get_or_insert(base);
            }
        };
        let params = f.abi.as_ref().map(|a| a.params.clone()).unwrap_or_default();
        let rets = f.abi.as_ref().map(|a| a.rets.clone()).unwrap_or_default();
        for &b in &blocks {
            for i in &f.cfg[b].instrs {
                match i.op {
                    Op::Call(site) => {
                        let c = &f.calls[site as usize];
                        for (s, loc) in i.srcs[1..].iter().zip(&c.args) {
                            if let (Some(r), crate::sass::abi::AbiLoc::Reg(p)) = (s.as_reg(), loc) {
                                want(r, *p);
                            }
                        }
                        for (d, p) in i.dsts.iter().zip(&c.rets) {
                            if let Dst::Reg(r) = d {
                                want(*r, *p);
                            }
                        }
                    }
                    Op::Params => {
                        for (d, loc) in i.dsts.iter().zip(&params) {
                            if let (Dst::Reg(r), crate::sass::abi::AbiLoc::Reg(p)) = (d, loc) {
                                want(*r, *p);
                            }
                        }
                    }
                    Op::Ret => {
                        for (s, p) in i.srcs.iter().zip(&rets) {
                            if let Some(r) = s.as_reg() {
                                want(r, *p);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // Copy partners: the webs a `copy` relates (destination and source, both ways), whose
    // conflict at the copy is left out below.
    let mut partners: Vec<Vec<u32>> = vec![vec![]; n];
    for &b in &blocks {
        for i in &f.cfg[b].instrs {
            if let (Op::Copy, Some(r)) = (i.op, i.srcs.first().and_then(|s| s.as_reg()))
                && let Reg::V(s) = r.reg
                && r.comp == 0
            {
                for_each_def(i, |d| {
                    if d != s {
                        partners[d as usize].push(s);
                        partners[s as usize].push(d);
                    }
                });
            }
        }
    }
    for p in partners.iter_mut() {
        p.sort_unstable();
        p.dedup();
    }
    // Blocks reached from the entry (see "Units live into the block" below).
    let reached = f.reached_from_entry();
    // Webs live across a call: callee-saved registers only (`calls`); across a call in
    // the private convention of our slow paths (`ir::FuncAbi::preserves`) only, any
    // register outside `abi::PRIVATE_CLOBBERED`.
    let mut across_call = vec![false; n];
    let mut across_private = vec![false; n];
    let mut live = UnitSet::new(4 * n);
    // The webs an instruction defines (one buffer for all instructions).
    let mut defs: Vec<u32> = vec![];
    for &b in &blocks {
        live.clear();
        for &u in live_out.of(b.index()) {
            live.insert(u);
        }
        for i in f.cfg[b].instrs.iter().rev() {
            if let Op::Call(site) = i.op {
                let private = f.calls[site as usize].preserves;
                defs.clear();
                for_each_def(i, |d| defs.push(d));
                for u in live.iter() {
                    if !defs.contains(&(u / 4)) {
                        if private {
                            across_private[(u / 4) as usize] = true;
                        } else {
                            across_call[(u / 4) as usize] = true;
                        }
                    }
                }
            }
            // A copy's destination may share registers with the components it copies
            // (only those: the source's other components may still be live).
            let copy_src: Option<(u32, u8)> = match (i.op, i.srcs.first().and_then(|s| s.as_reg())) {
                (Op::Copy, Some(r)) => match r.reg {
                    Reg::V(v) if r.comp == 0 => Some((v, r.n)),
                    _ => None,
                },
                _ => None,
            };
            defs.clear();
            for_each_def(i, |d| defs.push(d));
            for &d in &defs {
                for &u in live.iter() {
                    let (l, c) = (u / 4, (u % 4) as u8);
                    if !copy_src.is_some_and(|(s, n)| s == l && c < n) {
                        add(d, full(d), l, 1 << c, &mut adj);
                    }
                }
                for &d2 in &defs {
                    add(d, full(d), d2, full(d2), &mut adj);
                }
            }
            match i.op {
                Op::Copy => {
                    if let (Some(Dst::Reg(d)), Some(s)) = (i.dsts.first(), i.srcs.first().and_then(|s| s.as_reg()))
                        && let (Reg::V(dv), Reg::V(sv)) = (d.reg, s.reg)
                    {
                        prefs[dv as usize].push((sv, -(s.comp as i32)));
                        prefs[sv as usize].push((dv, s.comp as i32));
                    }
                }
                Op::Join => {
                    if let Some(Dst::Reg(d)) = i.dsts.first()
                        && let Reg::V(dv) = d.reg
                    {
                        for (k, s) in i.srcs.iter().enumerate() {
                            if let Some(r) = s.as_reg()
                                && let Reg::V(sv) = r.reg
                                && r.n == 1
                            {
                                // Source register = destination register + k - r.comp.
                                prefs[sv as usize].push((dv, k as i32 - r.comp as i32));
                                prefs[dv as usize].push((sv, r.comp as i32 - k as i32));
                            }
                        }
                    }
                }
                _ => {}
            }
            for_each_def(i, |v| {
                for c in 0..width(v) as u8 {
                    live.remove(unit(v, c));
                }
            });
            buf.clear();
            uses_of(i, &mut buf);
            for &u in buf.iter() {
                live.insert(u);
            }
        }
        // Units live into the block interfere with each other. Two units live together
        // at the start of a block reached from the entry either are both live into the
        // entry, or one of them is defined later than the other on a path there, where
        // the other is live after that definition: that conflict is added above, with the
        // whole defined web (a superset of the unit's masks here), unless the definition
        // is a copy of the other. So only the entry block (and any unreached block) pairs
        // every unit; others pair copy partners only. Pairing everywhere was
        // `O(blocks * live^2)`: a nest of 200 loops keeps 200 counters live in its inner
        // blocks (nested-loops 100k: a third of the compile time, in sorting these pairs).
        if b == f.entry || !reached[b.index()] {
            let li: Vec<u32> = live.iter().copied().collect();
            for (k, &x) in li.iter().enumerate() {
                for &y in &li[k + 1..] {
                    add(x / 4, 1 << (x % 4), y / 4, 1 << (y % 4), &mut adj);
                }
            }
        } else {
            for &x in live.iter() {
                for &s in &partners[(x / 4) as usize] {
                    for c in 0..width(s) as u8 {
                        let y = unit(s, c);
                        // Each pair once (from its lower unit), as in the pairing above.
                        if x < y && live.contains(y) {
                            add(x / 4, 1 << (x % 4), s, 1 << c, &mut adj);
                        }
                    }
                }
            }
        }
    }
    let adj = adj.finish();
    // Greedy coloring: webs live across calls first, widest first, then in order of
    // number (slot order first).
    let mut order: Vec<u32> = used.iter().collect();
    order.sort_by_key(|v| (!across_call[*v as usize], std::cmp::Reverse(width(*v)), *v));
    let mut color: Vec<Option<u32>> = vec![None; n];
    let usable = |r: u32, w: u32| -> bool { r + w <= limit && r + w <= 255 && !(frame && r <= 1 && 1 < r + w) };
    let all_saved = |r: u32, w: u32| (r..r + w).all(|x| x < 255 && is_callee_saved(x as u8));
    // A device function saves the callee-saved registers it writes: one other modules
    // may call (`.visible`, `.weak`) takes others first, as ptxas 11.8 `-c` does
    // (`R0, R3..R15, R32..R35, R40..R43, ...` for a function with 24 values live, no
    // save); an internal one takes `R0, R3..R15` first and then the lowest registers,
    // its callers' register count (which includes its own) being what matters.
    let device = f.kind == crate::ptx::ast::FuncKind::Func;
    let abi_callable = device && f.linkage != crate::ir::Linkage::Internal;
    let any_saved = |r: u32, w: u32| (r..r + w).any(|x| x < 255 && is_callee_saved(x as u8));
    for &v in &order {
        let w = width(v);
        let saved_only = across_call[v as usize];
        let private = across_private[v as usize];
        let usable = |r: u32, w: u32| {
            usable(r, w)
                && (!saved_only || all_saved(r, w))
                && (!private || !(r..r + w).any(|x| crate::sass::abi::PRIVATE_CLOBBERED.contains(&(x as u8))))
        };
        // Registers each component of `v` may not take, given the webs colored so far
        // (the same test as checking every neighbour at every candidate, computed once).
        let mut forbidden = [RegMask::default(); 4];
        if complete {
            // Static partition: every slot conflicts with every other.
            let mut taken = RegMask::default();
            for o in 0..n as u32 {
                if o != v
                    && let Some(c) = color[o as usize]
                {
                    for j in 0..width(o) {
                        taken.set(c + j);
                    }
                }
            }
            for m in forbidden.iter_mut().take(w as usize) {
                *m = taken;
            }
        } else {
            for (o, mine, theirs) in adj[v as usize].iter().map(|&e| conflict(e)) {
                let Some(co) = color[o as usize] else { continue };
                for k in (0..w).filter(|k| mine >> k & 1 == 1) {
                    for j in (0..width(o)).filter(|j| theirs >> j & 1 == 1) {
                        forbidden[k as usize].set(co + j);
                    }
                }
            }
        }
        let conflicts = |base: u32| (0..w).any(|k| forbidden[k as usize].has(base + k));
        let mut chosen = None;
        if let Some(base) = abi_pref[v as usize]
            && base.is_multiple_of(w)
            && usable(base, w)
            && !conflicts(base)
        {
            chosen = Some(base);
        }
        for &(p, off) in prefs[v as usize].iter().filter(|_| chosen.is_none()) {
            if let Some(c) = color[p as usize] {
                let base = c as i32 + off;
                if base >= 0 && (base as u32).is_multiple_of(w) && usable(base as u32, w) && !conflicts(base as u32) {
                    chosen = Some(base as u32);
                    break;
                }
            }
        }
        if chosen.is_none() {
            // Lookahead for join destinations: prefer a base where every uncolored partner
            // (a join source) can later take its own register, so the join costs nothing.
            // Per partner: the registers its first component may not take.
            let partners: Vec<(i32, Option<RegMask>)> = prefs[v as usize]
                .iter()
                .map(|&(p, off)| {
                    if color[p as usize].is_some() || width(p) >= w {
                        return (off, None);
                    }
                    let mut m = RegMask::default();
                    for (o, mine, theirs) in adj[p as usize].iter().map(|&e| conflict(e)) {
                        if let Some(co) = color[o as usize]
                            && mine & 1 == 1
                        {
                            for j in (0..width(o)).filter(|j| theirs >> j & 1 == 1) {
                                m.set(co + j);
                            }
                        }
                    }
                    (off, Some(m))
                })
                .collect();
            let partners_fit = |base: u32| {
                partners.iter().all(|&(off, m)| {
                    let Some(m) = m else { return true };
                    let pos = base as i32 - off;
                    pos >= 0 && !m.has(pos as u32)
                })
            };
            // ... and keep clear of the registers that uncolored, interfering join sources
            // are expected to take (their partner's color plus offset).
            let mut reserved = RegMask::default();
            for (o, _, theirs) in adj[v as usize].iter().map(|&e| conflict(e)) {
                if color[o as usize].is_some() {
                    continue;
                }
                let Some(pos) =
                    prefs[o as usize].iter().find_map(|&(p, off)| color[p as usize].map(|c| c as i32 + off))
                else {
                    continue;
                };
                for j in (0..width(o) as i32).filter(|j| theirs >> j & 1 == 1) {
                    if pos + j >= 0 {
                        reserved.set((pos + j) as u32);
                    }
                }
            }
            let reserved_clear = |base: u32| (base..base + w).all(|r| !reserved.has(r));
            for pass in 0..if device { 4 } else { 2 } {
                let mut base = 0;
                while base + w <= limit.min(255) {
                    // Device functions: passes 0 and 1 avoid callee-saved registers
                    // (an internal one only below R16, above which they all are).
                    let saved_ok =
                        !device || pass >= 2 || saved_only || (!any_saved(base, w) && (abi_callable || base + w <= 16));
                    if usable(base, w)
                        && saved_ok
                        && !conflicts(base)
                        && (pass % 2 == 1 || (partners_fit(base) && reserved_clear(base)))
                    {
                        chosen = Some(base);
                        break;
                    }
                    base += w;
                }
                if chosen.is_some() {
                    break;
                }
            }
        }
        match chosen {
            Some(c) => color[v as usize] = Some(c),
            None => return Err(format!("no register for a {}-bit value within {limit} registers", 32 * w)),
        }
    }
    // Rewrite operands.
    let phys = |r: &mut crate::sass::instr::RegRef| {
        if let Reg::V(v) = r.reg {
            let c = color[v as usize].expect("every used web is colored");
            r.reg = Reg::R((c + r.comp as u32) as u8);
            r.comp = 0;
        }
    };
    for &b in &blocks {
        for i in f.cfg[b].instrs.iter_mut() {
            for s in i.srcs.iter_mut() {
                if !matches!(s.kind, SrcKind::Pred(_))
                    && let Some(r) = s.gprs_mut()
                {
                    phys(r);
                }
            }
            for d in i.dsts.iter_mut() {
                if let Dst::Reg(r) = d {
                    phys(r);
                }
            }
        }
    }
    f.vregs.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Conflicts, conflict};

    /// A pair found again at every block both webs are live into is stored about once:
    /// memory in the number of distinct conflicts, not in the number of findings.
    #[test]
    fn repeated_conflicts_are_stored_once() {
        let mut c = Conflicts::new(3);
        for k in 0..100_000u32 {
            c.push(0, (1 + k % 2, 1, 1));
            c.push(1, (0, 1, 1 << (k % 4)));
            assert!(c.lists[0].len() <= 64 && c.lists[1].len() <= 64);
        }
        // `finish` leaves the order and any repeats since the last compaction.
        let lists: Vec<Vec<(u32, u8, u8)>> = c
            .finish()
            .into_iter()
            .map(|mut l| {
                l.sort_unstable();
                l.dedup();
                l.into_iter().map(conflict).collect()
            })
            .collect();
        assert_eq!(lists[0], vec![(1, 1, 1), (2, 1, 1)]);
        assert_eq!(lists[1], vec![(0, 1, 1), (0, 1, 2), (0, 1, 4), (0, 1, 8)]);
        assert!(lists[2].is_empty());
    }
}
