//! Write masks of texture fetches from liveness (issue 18): a fetch writes only the
//! components of its result that some instruction reads, as ptxas 11.8 does.
//!
//! ptxas 11.8 `-O3` (docs/textures.md §1.2, probes `tests/data/textures/probe_masks.ptx`
//! and `probe_liveness.ptx`): `tex.1d` whose x and z are read is `TEX.B ... 0x5`, a 3D
//! fetch whose z is read `TEX.B ... 0x4`, a gather whose y is read `TLD4.G.B ... 0x2`;
//! bound fetches keep `TEXS`/`TLDS` where their channel sets can name the mask (`TEXS RZ,
//! R0, R0, R5, 0x50, 2D, R` when only x is read, `... GBA`, `3D, RA`) and become the
//! general bound forms where they cannot: `TEX.P R4, R6, 0x50, 2D, 0x5` (x, z),
//! `TEX.P ... 0x6` (y, z), `TLD.LZ.P R4, R6, 0x50, 2D, 0x5`; a gather of fewer than four
//! components is `TLD4.R.P R0, R4, 0x50, 2D, 0x2` instead of `TLD4S` (which writes all four).
//!
//! [`narrow`] runs after dead-code elimination: the reads of each fetch's destination
//! registers are counted per component (a read of a register range counts every
//! component in it; a whole-register edge argument counts all), the unread components are
//! dropped from the mask, the opcode is chosen again ([`fetch_op`]), the live components
//! are packed into fresh registers and every read is renumbered. A fetch whose reads would
//! not stay within one register range after packing, or whose guard makes its
//! destinations partly old values, is left as it is.

use crate::ir::{Function, VRegKind};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src};
use crate::sass::op::{Op, TexDim};
use std::collections::HashMap;

/// What a fetch computes (independently of the opcode form).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fetch {
    /// `tex` with `.f32` coordinates: filtered sample.
    Sample,
    /// `tex` with `.s32` coordinates: texel fetch at level zero.
    Integer,
    /// `tld4.comp`: gather of component `comp` (0..3).
    Gather(u8),
    /// `tex.level` with `.f32` coordinates: filtered sample at an explicit level
    /// (`TEXS.LL` 2D when the channel set allows, else `TEX.LL`; ptxas 11.8 probes
    /// `probe_slice4.ptx` kernels l2d, l2d_x, l2d_xz, l3d, l2d_b).
    Level,
    /// `tex.grad` with `.f32` coordinates: filtered sample with explicit gradients, always
    /// `TXD` (no short form; ptxas 11.8 `TXD.P R0, R4, R8, 0x50, 2D, 0x1` when only x is
    /// read, `probe_grad.ptx` g2d_x).
    Grad,
    /// `tex.level` with `.s32` coordinates: texel fetch at an explicit level, always
    /// `TLD.LL.CL` (no short form; ptxas 11.8 `TLD.LL.CL.P R4, R4, R6, 0x50, 2D, 0xf` with
    /// all four read, `probe_geometries.ptx` li2d, docs/textures.md §1.12).
    IntLevel,
    /// `tex.2dms`: texel fetch of one sample, `TLDS.LZ.MS` where the channel set allows,
    /// else `TLD.LZ.MS` (ptxas 11.8 `probe_multisample.ptx` ms, ms_x, ms_xz, ms_b;
    /// docs/textures.md §1.13).
    Multisample,
}

/// Whether `TEXS`/`TLDS` can name the channel set `mask`: any one, three or four
/// channels, and of the pairs RG, RA, GA, BA (nvdisasm 11.8: bits 50..52 with `Rd2` = RZ
/// spell R G B A RG RA GA BA; `sass::encode::table` TEXSR/TEXSRGBA).
pub fn texs_can_name(mask: u8) -> bool {
    match mask.count_ones() {
        1 | 3 | 4 => mask & !0xf == 0,
        2 => matches!(mask, 0x3 | 0x9 | 0xa | 0xc),
        _ => false,
    }
}

/// The opcode ptxas 11.8 uses for fetch `kind` of geometry `dim` writing `mask`
/// (see the module docs).
pub fn fetch_op(kind: Fetch, dim: TexDim, bindless: bool, mask: u8) -> Op {
    // `ARRAY_1D` has no short form: ptxas 11.8 `TEX.P R4, R4, 0x50, ARRAY_1D, 0xf`,
    // `TLD.LZ.P R4, R4, 0x50, ARRAY_1D, 0xf` (`probe_arrays.ptx` a1d, a1d_i).
    // Nor `ARRAY_CUBE`: `TEX.P R4, R4, 0x50, ARRAY_CUBE, 0xf` (`probe_cube.ptx` acube).
    if matches!(dim, TexDim::A1 | TexDim::ACube) {
        return general(kind, dim, bindless, mask);
    }
    match kind {
        Fetch::Sample if !bindless && texs_can_name(mask) => Op::Texs { dim, chans: mask, ll: false },
        // TEXS.LL has no 3D form: ptxas 11.8 `TEX.LL.P R4, R4, R5, 0x50, 3D, 0xf`.
        // TEXS.LL CUBE exists: `TEXS.LL.P R6, R4, R4, R6, 0x50, CUBE, RGBA` (lcube).
        Fetch::Level if !bindless && matches!(dim, TexDim::D2 | TexDim::Cube) && texs_can_name(mask) => {
            Op::Texs { dim, chans: mask, ll: true }
        }
        Fetch::Integer if !bindless && texs_can_name(mask) => Op::Tlds { dim, chans: mask, ms: false },
        Fetch::Multisample if !bindless && dim == TexDim::D2 && texs_can_name(mask) => {
            Op::Tlds { dim, chans: mask, ms: true }
        }
        // TLD4S is 2D only: ptxas 11.8 `TLD4.R.P R4, R4, 0x50, ARRAY_2D, 0xf` for
        // `tld4.r.a2d` with all four read (`probe_geometries.ptx` t4a2d).
        Fetch::Gather(comp) if !bindless && mask == 0xf && dim == TexDim::D2 => Op::Tld4s { comp },
        Fetch::Gather(_) if dim == TexDim::ACube => general(kind, dim, bindless, mask),
        _ => general(kind, dim, bindless, mask),
    }
}

/// The general form (`TEX`/`TLD`/`TLD4`) of fetch `kind`.
fn general(kind: Fetch, dim: TexDim, bindless: bool, mask: u8) -> Op {
    match kind {
        Fetch::Sample => Op::Tex { dim, mask, bindless, ll: false },
        Fetch::Level => Op::Tex { dim, mask, bindless, ll: true },
        Fetch::Integer => Op::Tld { dim, mask, bindless, ll: false, ms: false },
        Fetch::IntLevel => Op::Tld { dim, mask, bindless, ll: true, ms: false },
        Fetch::Multisample => Op::Tld { dim, mask, bindless, ll: false, ms: true },
        Fetch::Gather(comp) => Op::Tld4 { comp, mask, bindless, dim },
        Fetch::Grad => Op::Txd { dim, mask, bindless },
    }
}

/// Whether `op` is one of the short bound forms `TEXS`/`TLDS`/`TLD4S` (sources `[Ra, Rb,
/// index]`, destinations `[Rd2, Rd]`) rather than `TEX`/`TLD`/`TLD4` (`[Ra, index | Rb]`,
/// `[Rd]`).
pub fn is_short(op: &Op) -> bool {
    matches!(op, Op::Texs { .. } | Op::Tlds { .. } | Op::Tld4s { .. })
}

/// The fetch an instruction is: kind, geometry, bindless, channels written.
fn fetch_of(op: &Op) -> Option<(Fetch, TexDim, bool, u8)> {
    Some(match *op {
        Op::Texs { dim, chans, ll: false } => (Fetch::Sample, dim, false, chans),
        Op::Texs { dim, chans, ll: true } => (Fetch::Level, dim, false, chans),
        Op::Tlds { dim, chans, ms: false } => (Fetch::Integer, dim, false, chans),
        Op::Tlds { dim, chans, ms: true } => (Fetch::Multisample, dim, false, chans),
        Op::Tld4s { comp } => (Fetch::Gather(comp), TexDim::D2, false, 0xf),
        Op::Tex { dim, mask, bindless, ll: false } => (Fetch::Sample, dim, bindless, mask),
        Op::Tex { dim, mask, bindless, ll: true } => (Fetch::Level, dim, bindless, mask),
        Op::Tld { dim, mask, bindless, ms: true, .. } => (Fetch::Multisample, dim, bindless, mask),
        Op::Tld { dim, mask, bindless, ll: false, .. } => (Fetch::Integer, dim, bindless, mask),
        Op::Tld { dim, mask, bindless, ll: true, .. } => (Fetch::IntLevel, dim, bindless, mask),
        Op::Tld4 { comp, mask, bindless, dim } => (Fetch::Gather(comp), dim, bindless, mask),
        Op::Txd { dim, mask, bindless } => (Fetch::Grad, dim, bindless, mask),
        _ => return None,
    })
}

/// Where each written channel of a fetch lands, in x, y, z, w order: `(channel,
/// register, component)`. Short forms put the first two in `Rd` (`dsts[1]`) and the rest
/// in `Rd2` (`dsts[0]`); the general forms pack all into `Rd`.
fn placement(op: &Op, mask: u8, dsts: &[Dst]) -> Option<Vec<(usize, Reg, u8)>> {
    let reg = |k: usize| match dsts.get(k) {
        Some(Dst::Reg(r)) => Some(*r),
        _ => None,
    };
    let chans = (0..4).filter(|c| mask & (1 << c) != 0);
    let mut out = vec![];
    if is_short(op) {
        let (rd2, rd) = (reg(0)?, reg(1)?);
        for (k, c) in chans.enumerate() {
            let (r, j) = if k < 2 { (rd, k) } else { (rd2, k.saturating_sub(2)) };
            out.push((c, r.reg, r.comp.checked_add(j as u8)?));
        }
    } else {
        let rd = reg(0)?;
        for (k, c) in chans.enumerate() {
            out.push((c, rd.reg, rd.comp.checked_add(k as u8)?));
        }
    }
    Some(out)
}

/// A fetch to rewrite: where it is, its new opcode, destinations and sources, and the
/// component renumbering of its old destination registers.
struct Rewrite {
    at: (crate::ir::BlockId, usize),
    op: Op,
    dsts: Vec<Dst>,
    srcs: Vec<Src>,
    /// A `Join` to insert before the fetch (short form to general form: the coordinates
    /// joined into one register range).
    join: Option<Instr>,
}

/// Narrows the write masks of the texture fetches of `f` to the components that are read
/// (see the module docs). Returns whether anything changed. Linear in the function size.
pub fn narrow(f: &mut Function) -> bool {
    let nv = f.vregs.len();
    // The fetches' destination registers.
    let mut is_dst = vec![false; nv];
    let mut fetches = vec![];
    for &b in &f.layout {
        for (k, i) in f.cfg[b].instrs.iter().enumerate() {
            if fetch_of(&i.op).is_none() || i.guard.is_some() {
                continue;
            }
            for d in &i.dsts {
                if let Dst::Reg(RegRef { reg: Reg::V(v), .. }) = d
                    && let Some(x) = is_dst.get_mut(*v as usize)
                {
                    *x = true;
                }
            }
            fetches.push((b, k));
        }
    }
    if fetches.is_empty() {
        return false;
    }
    // Per destination register: the components read and the distinct ranges read.
    let mut read = vec![0u8; nv];
    let is_dst = |v: u32| is_dst.get(v as usize).copied().unwrap_or(false);
    let mut ranges: HashMap<u32, Vec<(u8, u8)>> = HashMap::new();
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            for s in &i.srcs {
                if let Some(RegRef { reg: Reg::V(v), comp, n }) = s.gprs()
                    && is_dst(v)
                    && let Some(m) = read.get_mut(v as usize)
                {
                    // Components comp..comp + n (a range of at most 4 registers; wider
                    // ranges count as all): ((1 << n) - 1) << comp.
                    let ones = 1u32.checked_shl(u32::from(n)).map_or(u32::MAX, |b| b.wrapping_sub(1));
                    *m |= ones.checked_shl(u32::from(comp)).unwrap_or(0) as u8;
                    let r = ranges.entry(v).or_default();
                    if !r.contains(&(comp, n)) {
                        r.push((comp, n));
                    }
                }
            }
        }
        for e in f.succ_edges(b) {
            for &v in &f.cfg[e].args {
                if is_dst(v)
                    && let Some(m) = read.get_mut(v as usize)
                {
                    *m = 0xff;
                    ranges.entry(v).or_default().push((0, 8));
                }
            }
        }
    }
    let mut remap: HashMap<(u32, u8), RegRef> = HashMap::new();
    let mut rewrites = vec![];
    for (b, k) in fetches {
        let Some(i) = f.cfg[b].instrs.get(k).cloned() else { continue };
        let Some((kind, dim, bindless, mask)) = fetch_of(&i.op) else { continue };
        let Some(place) = placement(&i.op, mask, &i.dsts) else { continue };
        let live = |r: Reg, c: u8| matches!(r, Reg::V(v) if read.get(v as usize).is_some_and(|m| m.checked_shr(u32::from(c)).unwrap_or(0) & 1 != 0));
        let new_mask = place.iter().filter(|&&(_, r, c)| live(r, c)).fold(0u8, |m, &(ch, _, _)| m | (1 << ch));
        if new_mask == mask || new_mask == 0 {
            continue;
        }
        // ptxas's opcode for the new mask; a fetch already in a general form (a PTX sink
        // made it so) keeps it, its coordinates being joined already.
        let op = match fetch_op(kind, dim, bindless, new_mask) {
            o if is_short(&o) && !is_short(&i.op) => general(kind, dim, bindless, new_mask),
            o => o,
        };
        // New destinations, packed as `lower::tex` packs them: short forms two in `Rd`
        // (group 0), the rest in `Rd2` (group 1); general forms all in `Rd` (a quad for
        // three). Slots are (group, component) until the reads are known to fit.
        let n = new_mask.count_ones() as u8;
        let short = is_short(&op);
        let slot = |j: u8| if short && j >= 2 { (1u8, j.saturating_sub(2)) } else { (0u8, j) };
        // Old (register, component) -> new slot, for the live channels in order.
        let map: Vec<((u32, u8), (u8, u8))> = place
            .iter()
            .filter(|&&(_, r, c)| live(r, c))
            .zip(0..)
            .filter_map(|(&(_, r, c), j)| if let Reg::V(v) = r { Some(((v, c), slot(j))) } else { None })
            .collect();
        // Every range read must land in one new register, consecutively.
        let lookup = |v: u32, c: u8| map.iter().find(|(k, _)| *k == (v, c)).map(|(_, s)| *s);
        let fits = map.iter().map(|((v, _), _)| *v).all(|v| {
            ranges.get(&v).is_none_or(|rs| {
                rs.iter().all(|&(c, n)| {
                    let Some(first) = lookup(v, c) else { return false };
                    (1..n).all(|j| {
                        matches!((c.checked_add(j), first.1.checked_add(j)),
                            (Some(cj), Some(fj)) if lookup(v, cj) == Some((first.0, fj)))
                    })
                })
            })
        });
        if !fits {
            continue;
        }
        let (dsts, groups): (Vec<Dst>, Vec<Reg>) = if short {
            let lo = f.new_vreg(VRegKind::Gpr(n.min(2)));
            if let Some(rest) = n.checked_sub(2).filter(|r| *r > 0) {
                let hi = f.new_vreg(VRegKind::Gpr(rest));
                (vec![Dst::reg(hi, rest), Dst::reg(lo, n.min(2))], vec![lo, hi])
            } else {
                (vec![Dst::Reg(RegRef::rz(1)), Dst::reg(lo, n)], vec![lo])
            }
        } else {
            let w = if n == 3 { 4 } else { n };
            let d = f.new_vreg(VRegKind::Gpr(w));
            (vec![Dst::reg(d, w)], vec![d])
        };
        // Sources: short -> general joins the coordinates (TEXS 2D `x, y` or 3D `{x, y},
        // z` -> `TEX {x, y}` / `{x, y, z, _}`, as the lowering joins them), drops the `Rb`
        // of RZ of `TLDS ... 1D` (`TLD.LZ R4, R5, 0x50, 1D, 0x5`, ptxas 11.8) and keeps
        // `TEXS.LL`'s `{x, y}, level` (`TEX.LL R4, R6, R5, 0x50, 2D, 0x5`); otherwise the
        // same.
        // `TLDS.LZ.MS`'s `{x, y}, sample` are `TLD.LZ.MS`'s as they are.
        let (srcs, join) = if kind == Fetch::Level && dim == TexDim::Cube && is_short(&i.op) && !is_short(&op) {
            // `TEXS.LL {x', y'}, {z', level}` -> `TEX.LL {x', y', z', _}, level` (ptxas 11.8
            // `TEX.LL.P R4, R4, R7, 0x50, CUBE, 0x5`, lcube_xz).
            let (Some(ra), Some(rb), Some(last)) =
                (i.srcs.first().and_then(Src::as_reg), i.srcs.get(1).and_then(Src::as_reg), i.srcs.get(2))
            else {
                continue;
            };
            let (Some(a1), Some(b1)) = (ra.comp.checked_add(1), rb.comp.checked_add(1)) else { continue };
            let one = |r: RegRef, comp: u8| Src::reg(RegRef { comp, n: 1, ..r });
            let parts = vec![one(ra, ra.comp), one(ra, a1), one(rb, rb.comp), Src::rz()];
            let t = f.new_vreg(VRegKind::Gpr(4));
            (
                vec![Src::reg(RegRef::new(t, 4)), one(rb, b1), *last],
                Some(Instr::new(Op::Join, vec![Dst::reg(t, 4)], parts)),
            )
        } else if matches!(kind, Fetch::Level | Fetch::Multisample) || !is_short(&i.op) || is_short(&op) {
            (i.srcs.clone(), None)
        } else if dim == TexDim::D1 {
            let (Some(ra), Some(last)) = (i.srcs.first(), i.srcs.get(2)) else { continue };
            (vec![*ra, *last], None)
        } else {
            let (Some(ra), Some(rb), Some(last)) = (i.srcs.first(), i.srcs.get(1), i.srcs.get(2)) else { continue };
            let parts: Vec<Src> = match dim {
                TexDim::D1 | TexDim::D2 | TexDim::A1 | TexDim::ACube => vec![*ra, *rb],
                // `{x, y}, z` / `{index, x}, y` -> `{x, y, z, _}` / `{index, x, y, _}`
                // (ptxas 11.8 `TEX.P R4, R4, 0x50, ARRAY_2D, 0x5`, `probe_arrays.ptx`).
                // `TEXS ... CUBE` `{x, y}, z` -> `TEX ... CUBE` `{x, y, z, _}` (cube_xz).
                TexDim::D3 | TexDim::A2 | TexDim::Cube => {
                    let (Some(pair), Some(second)) = (ra.as_reg(), ra.as_reg().and_then(|p| p.comp.checked_add(1)))
                    else {
                        continue;
                    };
                    let c = |comp: u8| Src::reg(RegRef { comp, n: 1, ..pair });
                    vec![c(pair.comp), c(second), *rb, Src::rz()]
                }
            };
            let w = parts.len() as u8;
            let t = f.new_vreg(VRegKind::Gpr(w));
            (vec![Src::reg(RegRef::new(t, w)), *last], Some(Instr::new(Op::Join, vec![Dst::reg(t, w)], parts)))
        };
        // Group 1 exists whenever a slot names it (a short form writing more than two).
        let Some(moves) = map
            .iter()
            .map(|&(k, (g, c))| groups.get(usize::from(g)).map(|&reg| (k, RegRef { reg, comp: c, n: 1 })))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        remap.extend(moves);
        rewrites.push(Rewrite { at: (b, k), op, dsts, srcs, join });
    }
    if rewrites.is_empty() {
        return false;
    }
    // Renumber the reads.
    for &b in &f.layout {
        for i in f.cfg[b].instrs.iter_mut() {
            for s in i.srcs.iter_mut() {
                if let Some(r) = s.gprs_mut()
                    && let Reg::V(v) = r.reg
                    && let Some(to) = remap.get(&(v, r.comp))
                {
                    *r = RegRef { n: r.n, ..*to };
                }
            }
        }
    }
    // Rewrite the fetches, inserting joins from the last index of each block down.
    rewrites.sort_by_key(|r| std::cmp::Reverse((r.at.0.index(), r.at.1)));
    for r in rewrites {
        let (b, k) = r.at;
        let blk = &mut f.cfg[b];
        // `k` indexes an instruction of `b` (collected above; joins go in from the last
        // index down, so earlier indices stay valid).
        let Some(i) = blk.instrs.get_mut(k) else { continue };
        i.op = r.op;
        i.dsts = r.dsts;
        i.srcs = r.srcs;
        if let (Some(j), Some(&origin)) = (r.join, blk.origins.get(k)) {
            blk.instrs.insert(k, j);
            blk.origins.insert(k, origin);
        }
    }
    true
}
