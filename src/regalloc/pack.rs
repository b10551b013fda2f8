//! Places regalloc2's slots in the physical register file.
//!
//! Input: a function whose general-purpose operands name slots (virtual registers
//! 0..192: 64 singles, 64 pairs, 64 quads), written many times. Output: the same function
//! on physical registers R0..R(limit-1), 64-bit slots at even registers, 128-bit slots at
//! multiples of 4, R1 left for the frame pointer when the function has local memory.
//!
//! Method: liveness of slots (backward dataflow over blocks), an interference graph (a
//! definition interferes with everything live after it, except the source of a copy), then
//! greedy coloring widest-first with alignment, preferring for each slot the registers its
//! `copy`/`join` partners already got (coalescing). With `complete = true` every slot is
//! treated as interfering with every other (a static partition that always fits when the
//! slot counts do).

use crate::ir::{Function, for_each_def, for_each_use};
use crate::sass::instr::{Dst, Reg, SrcKind};
use crate::sass::op::Op;
use std::collections::HashMap;

const N: usize = 192;

#[derive(Clone, Copy, Default, PartialEq)]
struct Set([u64; 3]);

impl Set {
    fn insert(&mut self, v: u32) {
        self.0[v as usize / 64] |= 1 << (v % 64);
    }
    fn remove(&mut self, v: u32) {
        self.0[v as usize / 64] &= !(1 << (v % 64));
    }
    fn union(&mut self, o: &Set) -> bool {
        let before = self.0;
        for k in 0..3 {
            self.0[k] |= o.0[k];
        }
        before != self.0
    }
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..N as u32).filter(|v| self.0[*v as usize / 64] >> (v % 64) & 1 == 1)
    }
}

fn width(v: u32) -> u32 {
    if v < 64 {
        1
    } else if v < 128 {
        2
    } else {
        4
    }
}

/// Does the function need the frame pointer R1 (local data, spills, or explicit R1 uses)?
pub fn needs_frame(f: &Function) -> bool {
    f.local_bytes > 0
        || f.spill_bytes > 0
        || f.layout.iter().any(|b| {
            f.cfg[*b].instrs.iter().any(|i| {
                i.srcs
                    .iter()
                    .any(|s| s.gprs().is_some_and(|r| r.reg == Reg::R(1)))
            })
        })
}

/// Colors the slots of `f` and rewrites its operands to physical registers; `frame` keeps
/// R1 free for the frame pointer.
pub fn pack(f: &mut Function, limit: u32, complete: bool, frame: bool) -> Result<(), String> {
    // Liveness.
    let blocks = f.layout.clone();
    let mut live_in: HashMap<petgraph::stable_graph::NodeIndex, Set> = HashMap::new();
    let mut used = Set::default();
    for &b in &blocks {
        for i in &f.cfg[b].instrs {
            for_each_use(i, |v| used.insert(v));
            for_each_def(i, |v| used.insert(v));
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &b in blocks.iter().rev() {
            let mut live = Set::default();
            for s in f.succs(b) {
                if let Some(l) = live_in.get(&s) {
                    live.union(l);
                }
            }
            for i in f.cfg[b].instrs.iter().rev() {
                for_each_def(i, |v| live.remove(v));
                for_each_use(i, |v| live.insert(v));
            }
            let e = live_in.entry(b).or_default();
            if *e != live {
                *e = live;
                changed = true;
            }
        }
    }
    // Interference and coalescing preferences.
    let mut adj = vec![Set::default(); N];
    let mut prefs: Vec<Vec<(u32, i32)>> = vec![vec![]; N]; // (partner slot, register offset)
    let add = |a: u32, b: u32, adj: &mut Vec<Set>| {
        if a != b {
            adj[a as usize].insert(b);
            adj[b as usize].insert(a);
        }
    };
    for &b in &blocks {
        let mut live = Set::default();
        for s in f.succs(b) {
            if let Some(l) = live_in.get(&s) {
                live.union(l);
            }
        }
        for i in f.cfg[b].instrs.iter().rev() {
            let copy_src: Option<u32> = match (i.op, i.srcs.first().and_then(|s| s.as_reg())) {
                (Op::Copy, Some(r)) => match r.reg {
                    Reg::V(v) if r.comp == 0 => Some(v),
                    _ => None,
                },
                _ => None,
            };
            let mut defs = vec![];
            for_each_def(i, |d| defs.push(d));
            for &d in &defs {
                for l in live.iter() {
                    if Some(l) != copy_src || defs.len() != 1 {
                        add(d, l, &mut adj);
                    }
                }
                for &d2 in &defs {
                    add(d, d2, &mut adj);
                }
            }
            // Preferences: copy dst <-> src; join component k <-> dst + k.
            match i.op {
                Op::Copy => {
                    if let (Some(Dst::Reg(d)), Some(s)) =
                        (i.dsts.first(), i.srcs.first().and_then(|s| s.as_reg()))
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
                                // src register = dst register + k - r.comp
                                prefs[sv as usize].push((dv, k as i32 - r.comp as i32));
                                prefs[dv as usize].push((sv, r.comp as i32 - k as i32));
                            }
                        }
                    }
                }
                _ => {}
            }
            for &d in &defs {
                live.remove(d);
            }
            for_each_use(i, |v| live.insert(v));
        }
        // Values live into the block interfere with each other.
        let li: Vec<u32> = live.iter().collect();
        for (k, &a) in li.iter().enumerate() {
            for &b2 in &li[k + 1..] {
                add(a, b2, &mut adj);
            }
        }
    }
    if complete {
        let all: Vec<u32> = used.iter().collect();
        for (k, &a) in all.iter().enumerate() {
            for &b2 in &all[k + 1..] {
                add(a, b2, &mut adj);
            }
        }
    }
    // Greedy coloring: widest first, then by slot number (regalloc2's preferred order).
    let mut order: Vec<u32> = used.iter().collect();
    order.sort_by_key(|v| (std::cmp::Reverse(width(*v)), *v));
    let mut color: Vec<Option<u32>> = vec![None; N];
    let usable = |r: u32, w: u32| -> bool {
        r + w <= limit && r + w <= 255 && !(frame && r <= 1 && 1 < r + w)
    };
    for &v in &order {
        let w = width(v);
        let conflicts = |base: u32, color: &Vec<Option<u32>>| -> bool {
            adj[v as usize]
                .iter()
                .any(|n| color[n as usize].is_some_and(|c| c < base + w && base < c + width(n)))
        };
        let mut chosen = None;
        for &(p, off) in &prefs[v as usize] {
            if let Some(c) = color[p as usize] {
                let base = c as i32 + off;
                if base >= 0
                    && base as u32 % w == 0
                    && usable(base as u32, w)
                    && !conflicts(base as u32, &color)
                {
                    chosen = Some(base as u32);
                    break;
                }
            }
        }
        if chosen.is_none() {
            let mut base = 0;
            while base + w <= limit.min(255) {
                if usable(base, w) && !conflicts(base, &color) {
                    chosen = Some(base);
                    break;
                }
                base += w;
            }
        }
        match chosen {
            Some(c) => color[v as usize] = Some(c),
            None => {
                return Err(format!(
                    "no register for a {}-bit slot within {limit} registers",
                    32 * w
                ));
            }
        }
    }
    // Rewrite operands.
    let phys = |r: &mut crate::sass::instr::RegRef| {
        if let Reg::V(v) = r.reg {
            let c = color[v as usize].expect("every used slot is colored");
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
