//! Atomics (ATOM, ATOMS, RED) and warp-level instructions (SHFL, VOTE).
//!
//! * **Atomics.** Each lane's read-modify-write is indivisible; the lanes of one warp
//!   instruction update memory one after another in the order
//!   [`crate::exec::rng::atomic_lane_order`] draws from the launch seed (the hardware order
//!   is unspecified), the interpreter's order, so results that depend on the order differ
//!   between seeds but not between the executors. `ATOM.E` and `RED.E` address global memory only (ptxas 11.8 sends
//!   generic atomics on shared-window addresses to `ATOMS` itself, module `sass::sync`);
//!   `ATOMS` addresses the CTA's shared memory. `.F32.FTZ.RN` adds with denormal inputs and
//!   results flushed to zero, rounding to nearest even. `INC` stores `old >= b ? 0 :
//!   old + 1`, `DEC` stores `old == 0 || old > b ? b : old - 1` (the CUDA atomicInc/Dec
//!   definition). `CAS` reads `{compare, new}` from one register operand twice the data
//!   width (`Rb` and `Rb+n`, printed as two operands).
//! * **SHFL.mode Pd, Rd, Ra, b, c** (lane `b & 31`, `c` = clamp `| segmask << 8`): with
//!   `seg = (c >> 8) & 31`, `max = (lane & seg) | (c & 31 & !seg)`, `min = lane & seg`, the
//!   source lane is `lane - b` (UP, valid if `>= max`), `lane + b` (DOWN, valid if `<=
//!   max`), `lane ^ b` (BFLY, valid if `<= max`) or `min | (b & !seg)` (IDX, valid if `<=
//!   max`); an invalid source reads the lane's own `Ra`. `Pd` is the validity. A source
//!   lane outside the active mask yields its register as it is (the hardware returns the
//!   register of a non-participating lane).
//! * **VOTE.mode Rd, Pd, Pa**: `Rd` = ballot of `Pa` over the executing lanes, `Pd` =
//!   ALL / ANY / EQ (all equal) of `Pa` over them.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::Sim;
use super::mem::{CtaMem, Space};
use super::state::{Lanes, PerLane, WARP_SIZE, Warp, in_mask, lanes};
use crate::exec::ExecError;
use crate::sass::instr::{Dst, Instr, Reg, RegRef, SrcKind};
use crate::sass::op::{AtomMods, AtomOp, AtomType, MemSize, Op, ShflMode, VoteMode};

/// The value an atomic stores given the old value and its operands (`n`-bit values).
fn atom_result(m: AtomMods, old: u64, b: u64, c: u64) -> u64 {
    let wide = m.ty.regs() == 2; // 64-bit data, else 32-bit
    let mask = if wide { u64::MAX } else { u32::MAX as u64 };
    let sext = |v: u64| if wide { v as i64 } else { v as u32 as i32 as i64 };
    let signed = matches!(m.ty, AtomType::S32 | AtomType::S64);
    let r = match m.op {
        AtomOp::Add if m.ty == AtomType::F32 => {
            let f = |v: u64| super::arith::float::ftz32(f32::from_bits(v as u32));
            let s = super::arith::float::ftz32(super::arith::float::fadd(f(old), f(b), crate::sass::op::Rnd::Rn));
            s.to_bits() as u64
        }
        AtomOp::Add => old.wrapping_add(b),
        AtomOp::Min if signed => sext(old).min(sext(b)) as u64,
        AtomOp::Max if signed => sext(old).max(sext(b)) as u64,
        AtomOp::Min => old.min(b),
        AtomOp::Max => old.max(b),
        AtomOp::Inc => {
            // old < b <= u64::MAX: no overflow (and the result is masked to the width).
            if old >= b { 0 } else { old.saturating_add(1) }
        }
        AtomOp::Dec => {
            // old > 0 here.
            if old == 0 || old > b { b } else { old.saturating_sub(1) }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if old == b {
                c
            } else {
                old
            }
        }
    };
    r & mask
}

fn reg_value(w: &Warp, r: RegRef, lane: usize, n: u8) -> u64 {
    let Reg::R(base) = r.reg else { return 0 };
    if r.reg.is_rz() {
        return 0;
    }
    // At most two registers (`n` is 1 or 2): the low word, then the high word. A register
    // number beyond R254 (a hand-written listing) reads 0 as `Warp::reg` does.
    let first = (base as usize).saturating_add(r.comp as usize);
    (first..).take(n as usize).zip([0, 32]).fold(0u64, |v, (k, sh)| v | (w.reg(k, lane) as u64) << sh)
}

impl Sim<'_> {
    /// ATOM / ATOMS / RED for the lanes of `mask`, in a seed-drawn lane order.
    pub(super) fn exec_atom(&mut self, w: &mut Warp, mem: &mut CtaMem, i: &Instr, mask: u32) -> Result<(), ExecError> {
        let (Op::Atom(m) | Op::Atoms(m) | Op::Red(m)) = i.op else { unreachable!("atomic op") };
        if mask == 0 {
            return Ok(());
        }
        let n = m.ty.regs();
        let size = if n == 2 { MemSize::B64 } else { MemSize::B32 };
        let addr_src = i.srcs.first().ok_or_else(|| ExecError::Unsupported("atomic without address".into()))?;
        let addrs = Self::addresses(w, addr_src, m.e, mask)?;
        let data = match i.srcs.get(1).map(|s| s.kind) {
            Some(SrcKind::Reg(r)) => r,
            _ => return Err(ExecError::Unsupported(format!("`{}` without a data register", i.op.name()))),
        };
        let space = if matches!(i.op, Op::Atoms(_)) { Space::Shared } else { Space::Global };
        let [gx, gy, _] = self.grid;
        // The CTA's linear index, below 2^63 (`exec::check_shape`: at most 2^31 x 65535 x
        // 65535 CTAs), so the wrapping operations never wrap.
        let [cx, cy, cz] = self.ctaid.map(|c| c as u64);
        let cta = cx.wrapping_add((gx as u64).wrapping_mul(cy.wrapping_add((gy as u64).wrapping_mul(cz))));
        let prio = crate::exec::rng::atomic_lane_order(self.seed, cta, w.index as u64);
        let order: Vec<usize> = prio.iter().map(|&l| l as usize).filter(|&l| in_mask(mask, l)).collect();
        let mut out = [[0u32; 4]; WARP_SIZE];
        for l in order {
            let a = addrs.at(l);
            if space == Space::Global && super::mem::in_shared_window(a) {
                return Err(ExecError::Unsupported(format!(
                    "`{}` on the shared-window address 0x{a:x} (generic atomics on shared memory are ATOMS)",
                    i.op.name()
                )));
            }
            let thread = w.linear.at(l) as usize;
            let raw = self.access(mem, space, thread, a, size, None)?;
            let [lo, hi, ..] = raw;
            let old = lo as u64 | if n == 2 { (hi as u64) << 32 } else { 0 };
            let b = reg_value(w, data, l, n);
            let c = if m.op == AtomOp::Cas {
                // `Rb+n`: the second half of the CAS operand (n is 1 or 2).
                reg_value(w, RegRef { comp: data.comp.saturating_add(n), ..data }, l, n)
            } else {
                0
            };
            let new = atom_result(m, old, b, c);
            let words = [new as u32, (new >> 32) as u32, 0, 0];
            self.access(mem, space, thread, a, size, Some(&words))?;
            out.set(l, [old as u32, (old >> 32) as u32, 0, 0]);
        }
        if let Some(Dst::Reg(d)) = i.dsts.first()
            && !d.reg.is_rz()
        {
            w.write_regs(RegRef { n, ..*d }, mask, &out);
        }
        Ok(())
    }

    /// SHFL / VOTE for the lanes of `mask`.
    pub(super) fn exec_warp(&mut self, w: &mut Warp, i: &Instr, mask: u32) -> Result<(), ExecError> {
        match i.op {
            Op::Shfl(mode) => {
                // SHFL Pd, Rd, Ra, Sb, Sc.
                let (Some(Dst::Pred(pd)), Some(Dst::Reg(rd))) = (i.dsts.first(), i.dsts.get(1)) else {
                    return Err(ExecError::Unsupported("SHFL destinations".into()));
                };
                let [sa, sb, sc, ..] = i.srcs.as_slice() else {
                    return Err(ExecError::Unsupported("SHFL takes three source operands".into()));
                };
                let a: Lanes = w.gather(sa, &self.banks, u32::MAX)?;
                let b = w.gather(sb, &self.banks, mask)?;
                let c = w.gather(sc, &self.banks, mask)?;
                let mut out: Lanes = [0; WARP_SIZE];
                let mut valid = 0u32;
                for l in lanes(mask) {
                    let lane = l as u32;
                    let (bl, cl) = (b.at(l) & 31, c.at(l));
                    let seg = (cl >> 8) & 31;
                    let max = (lane & seg) | (cl & 31 & !seg);
                    let min = lane & seg;
                    let (src, ok) = match mode {
                        // lane and bl are below 32: the sums and differences are lane
                        // numbers or, for UP below lane 0, wrap to an invalid source.
                        ShflMode::Up => (lane.wrapping_sub(bl), lane >= bl && lane.wrapping_sub(bl) >= max),
                        ShflMode::Down => (lane.wrapping_add(bl), lane.wrapping_add(bl) <= max),
                        ShflMode::Bfly => (lane ^ bl, (lane ^ bl) <= max),
                        ShflMode::Idx => (min | (bl & !seg), (min | (bl & !seg)) <= max),
                    };
                    let s = if ok && src < 32 { src as usize } else { l };
                    out.set(l, a.at(s));
                    if ok {
                        valid |= 1 << l;
                    }
                }
                w.write32(*rd, mask, &out);
                w.set_pred(*pd, mask, valid);
                Ok(())
            }
            Op::Vote(mode) => {
                // VOTE.mode {Rd,} Pd, Pa.
                let (rd, pd) = match (i.dsts.first(), i.dsts.get(1)) {
                    (Some(Dst::Reg(r)), Some(Dst::Pred(p))) => (Some(*r), *p),
                    (Some(Dst::Pred(p)), None) => (None, *p),
                    _ => return Err(ExecError::Unsupported("VOTE destinations".into())),
                };
                let pa = i.srcs.first().ok_or_else(|| ExecError::Unsupported("VOTE without a predicate".into()))?;
                let votes = w.pred_src(pa)? & mask;
                if let Some(rd) = rd {
                    w.write32(rd, mask, &[votes; WARP_SIZE]);
                }
                let r = match mode {
                    VoteMode::All => votes == mask,
                    VoteMode::Any => votes != 0,
                    VoteMode::Eq => votes == 0 || votes == mask,
                };
                w.set_pred(pd, mask, if r { u32::MAX } else { 0 });
                Ok(())
            }
            _ => unreachable!("warp op"),
        }
    }
}
