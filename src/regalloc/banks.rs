//! Register banks: a way around regalloc2's limit of 64 registers per class.
//!
//! regalloc2 gives each of its three classes at most 64 registers (its `PReg` index has 6
//! bits). With one class per width that is 64 live 32-bit values, far below SPA 5.0's 255
//! registers, and a kernel with more live values would spill needlessly. When the
//! function needs it, its general-purpose virtual registers are split into *banks*; each
//! bank is allocated by its own regalloc2 run, with its own 64 slots per class, and
//! packing then places the slots of all banks in the one physical file. A bank holds
//! whole values for their whole life, so the runs are independent.
//!
//! Values are assigned to banks by interval partitioning: in the linear order regalloc2
//! sees (reverse postorder), each value's live range is approximated by the interval from
//! its first to its last live point, and each value goes to the bank where the fewest
//! values of its width are live at its start. Every bank then sees about `1/k` of the
//! pressure at every point.

use crate::ir::{Function, VRegKind, for_each_def, for_each_use};

/// Most banks ever used: 4 × 64 slots of 32-bit values cover R0..R254.
pub const MAX_BANKS: usize = 4;

/// Slots per regalloc2 class (its `PReg` index has 6 bits).
pub const CLASS_SLOTS: usize = 64;

/// The bank of every virtual register and the pressure that decided them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Banks {
    /// Bank of each virtual register (0 for predicates and unused numbers).
    pub of: Vec<u8>,
    /// Number of banks, 1..=[`MAX_BANKS`].
    pub count: usize,
    /// Most values of each width (32, 64, 128 bits) live at one point (interval estimate,
    /// an upper bound of the exact figure).
    pub pressure: [usize; 3],
    /// Per width, the most distinct registers of that width one instruction names (uses
    /// and definitions): no class may have fewer slots, or regalloc2 fails with
    /// `TooManyLiveRegs` (found by the property test in `tests/regalloc.rs`).
    pub need: [usize; 3],
}

/// Most banks worth having in a budget of `limit` registers (`--maxrregcount`): one per
/// 64 of the registers besides R1, 1 to [`MAX_BANKS`]. One bank already has 64 slots of
/// each width, as many 32-bit values as a budget of 65 registers holds; a second bank
/// there gives regalloc2 slots that cannot all be registers, and each bank needs slots
/// for the most values one instruction names (`Banks::need`), which the banks together
/// may not leave room for: a generated program (`tests/data/fuzz/packing_generated_26.ptx`),
/// its interval estimate 72 singles, took 2 banks in 26 registers and no sizes packed
/// ("no register for a 32-bit value within 26 registers").
pub fn max_banks(limit: u32) -> usize {
    (limit.saturating_sub(1) as usize).div_ceil(CLASS_SLOTS).clamp(1, MAX_BANKS)
}

/// Index of a GPR width in `[32, 64, 128]` bits.
fn width_index(kind: VRegKind) -> Option<usize> {
    match kind {
        VRegKind::Gpr(1) => Some(0),
        VRegKind::Gpr(2) => Some(1),
        VRegKind::Gpr(_) => Some(2),
        VRegKind::Pred => None,
    }
}

/// Live intervals `[lo, hi]` (linear instruction positions, reverse postorder) of the
/// general-purpose virtual registers of an SSA function; `None` for unused ones.
fn intervals(f: &Function, live: &crate::ir::Liveness) -> Vec<Option<(u32, u32)>> {
    let mut order = vec![];
    let mut dfs = petgraph::visit::DfsPostOrder::new(&f.cfg, f.entry);
    while let Some(b) = dfs.next(&f.cfg) {
        order.push(b);
    }
    order.reverse();
    let gpr = |v: u32| width_index(f.vregs[v as usize]).is_some();
    let n = f.vregs.len();
    let mut iv: Vec<Option<(u32, u32)>> = vec![None; n];
    let mut touch = |v: u32, p: u32| {
        if gpr(v) {
            let e = iv[v as usize].get_or_insert((p, p));
            e.0 = e.0.min(p);
            e.1 = e.1.max(p);
        }
    };
    let mut pos = 0u32;
    for &b in &order {
        let start = pos;
        for p in &f.cfg[b].params {
            touch(*p, start);
        }
        for &v in live.live_in(b) {
            touch(v, start);
        }
        for i in &f.cfg[b].instrs {
            for_each_use(i, |v| touch(v, pos));
            for_each_def(i, |v| touch(v, pos));
            pos += 1;
        }
        let end = pos.saturating_sub(1).max(start);
        for &v in live.live_out(b) {
            touch(v, end);
        }
    }
    iv
}

/// Splits the general-purpose virtual registers of the SSA function `f` into banks (see
/// the module documentation): as many as the pressure needs, at least `min_count` (more
/// when regalloc2 spilled with fewer), at most [`MAX_BANKS`]; the pressure asks for at
/// most [`max_banks`] of the register budget `limit`. `live`: the liveness of `f`.
pub fn assign(f: &Function, min_count: usize, limit: u32, live: &crate::ir::Liveness) -> Banks {
    let iv = intervals(f, live);
    let mut by_start: Vec<(u32, u32, u32, usize)> = iv
        .iter()
        .enumerate()
        .filter_map(|(v, r)| r.map(|(lo, hi)| (lo, hi, v as u32, width_index(f.vregs[v]).expect("GPR"))))
        .collect();
    by_start.sort();
    // Pressure per width: the most intervals overlapping at one start point.
    let mut pressure = [0usize; 3];
    let mut ends: Vec<Vec<u32>> = vec![vec![]; 3];
    for &(lo, hi, _, w) in &by_start {
        ends[w].retain(|e| *e >= lo);
        ends[w].push(hi);
        pressure[w] = pressure[w].max(ends[w].len());
    }
    let count = pressure
        .iter()
        .map(|p| p.div_ceil(CLASS_SLOTS))
        .max()
        .unwrap_or(1)
        .min(max_banks(limit))
        .max(min_count)
        .clamp(1, MAX_BANKS);
    let mut of = vec![0u8; f.vregs.len()];
    if count > 1 {
        // active[w][bank] = ends of the live intervals of width w in that bank.
        let mut active: Vec<Vec<Vec<u32>>> = vec![vec![vec![]; count]; 3];
        for &(lo, hi, v, w) in &by_start {
            for a in active[w].iter_mut() {
                a.retain(|e| *e >= lo);
            }
            let b = (0..count).min_by_key(|b| active[w][*b].len()).expect("a bank");
            active[w][b].push(hi);
            of[v as usize] = b as u8;
        }
        // A block parameter and its edge arguments are one value for regalloc2: they must
        // share a bank. Each such web takes the bank of its first member.
        let mut parent: Vec<u32> = (0..f.vregs.len() as u32).collect();
        fn find(p: &mut [u32], mut x: u32) -> u32 {
            while p[x as usize] != x {
                p[x as usize] = p[p[x as usize] as usize];
                x = p[x as usize];
            }
            x
        }
        for &b in &f.layout {
            for e in f.pred_edges(b) {
                for (p, a) in f.cfg[b].params.iter().zip(&f.cfg[e].args) {
                    let (x, y) = (find(&mut parent, *p), find(&mut parent, *a));
                    if x != y {
                        parent[x as usize] = y;
                    }
                }
            }
        }
        for v in 0..f.vregs.len() as u32 {
            let r = find(&mut parent, v);
            of[v as usize] = of[r as usize];
        }
    }
    let mut need = [0usize; 3];
    for b in f.cfg.node_indices() {
        for i in &f.cfg[b].instrs {
            let mut seen: Vec<u32> = vec![];
            for_each_use(i, |v| seen.push(v));
            for_each_def(i, |v| seen.push(v));
            seen.sort_unstable();
            seen.dedup();
            let mut n = [0usize; 3];
            for v in seen {
                if let Some(w) = width_index(f.vregs[v as usize]) {
                    n[w] += 1;
                }
            }
            for w in 0..3 {
                need[w] = need[w].max(n[w]);
            }
        }
    }
    Banks { of, count, pressure, need }
}
