//! Per-warp architectural state: general-purpose registers R0..R254 (RZ = R255 reads 0),
//! predicates P0..P6 (PT = P7 reads true), the condition code (CC), the active and
//! exited masks, the reconvergence stack, and operand reading.
//!
//! Registers are stored register-major (`regs[r][lane]`), predicates as one lane mask per
//! predicate register, CC as four flag bits per lane ([`CF`], [`ZF`], [`SF`], [`OF`]).

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline"):
// per-lane arrays are reached through `get`/`get_mut` or iterators, never by index.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::mem::ConstBanks;
use super::timing::Scoreboard;
use crate::exec::ExecError;
use crate::sass::instr::{Reg, RegRef, Src, SrcKind};

/// Threads per warp.
pub const WARP_SIZE: usize = 32;
/// General-purpose registers per thread (R0..R254; R255 is RZ).
pub const NUM_GPRS: usize = 255;

/// CC carry flag (CC.CF; spa50-LEA.txt calls the flags CF, ZF, SF, OF).
pub const CF: u8 = 1;
/// CC zero flag.
pub const ZF: u8 = 2;
/// CC sign flag.
pub const SF: u8 = 4;
/// CC overflow flag; LEA writes `!(shared-window-detect)` here (spa50-LEA.txt).
pub const OF: u8 = 8;

/// One value per lane.
pub type Lanes = [u32; WARP_SIZE];
/// One 64-bit value per lane.
pub type Lanes64 = [u64; WARP_SIZE];

/// The lanes set in `mask`, lowest first.
pub fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m.wrapping_sub(1); // clears the lowest set bit (m != 0)
            Some(l)
        }
    })
}

/// Whether lane `l` is set in `mask` (lanes 32 and beyond never are).
pub fn in_mask(mask: u32, l: usize) -> bool {
    u32::try_from(l).ok().and_then(|l| mask.checked_shr(l)).is_some_and(|m| m & 1 == 1)
}

/// The elements of the per-lane array `a` in the lanes of `mask`, with their lane.
pub fn masked<T>(a: &mut [T; WARP_SIZE], mask: u32) -> impl Iterator<Item = (usize, &mut T)> {
    a.iter_mut().enumerate().filter(move |(l, _)| in_mask(mask, *l))
}

/// Reading and writing one lane of a per-lane array by the lane numbers `lanes` yields
/// (always below [`WARP_SIZE`]); a lane beyond the warp reads the default and is not
/// written, so a per-lane loop needs no index that could panic.
pub trait PerLane<T> {
    /// The value of lane `l` (the default for a lane beyond the warp).
    fn at(&self, l: usize) -> T;
    /// Sets lane `l` to `v` (nothing for a lane beyond the warp).
    fn set(&mut self, l: usize, v: T);
}

impl<T: Copy + Default> PerLane<T> for [T; WARP_SIZE] {
    fn at(&self, l: usize) -> T {
        self.get(l).copied().unwrap_or_default()
    }
    fn set(&mut self, l: usize, v: T) {
        if let Some(x) = self.get_mut(l) {
            *x = v;
        }
    }
}

/// A set of architectural register units: R0..R254, P0..P6 and CC (RZ and PT are never
/// members). Used for the scoreboard's read, write and late-read sets.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct RegSet {
    /// Bit `r` = `Rr`.
    pub gpr: [u64; 4],
    /// Bit `p` = `Pp`.
    pub pred: u8,
    /// The condition code.
    pub cc: bool,
}

impl RegSet {
    /// Adds `n` consecutive registers from `Rr` (RZ and beyond are skipped).
    pub fn add_gpr(&mut self, r: u8, n: u8) {
        for k in (r as usize..NUM_GPRS).take(n as usize) {
            if let Some(w) = self.gpr.get_mut(k / 64) {
                *w |= 1 << (k % 64);
            }
        }
    }
    /// Adds a register operand (virtual registers cannot be executed and are ignored).
    pub fn add_ref(&mut self, r: RegRef) {
        if let Reg::R(x) = r.reg {
            self.add_gpr(x, r.n);
        }
    }
    /// Adds `Pp` (PT is skipped).
    pub fn add_pred(&mut self, p: Reg) {
        if let Reg::P(x) = p
            && x < 7
        {
            self.pred |= 1 << x; // x < 7
        }
    }
    /// True when no unit is a member.
    pub fn is_empty(&self) -> bool {
        *self == RegSet::default()
    }
    /// Units in both sets.
    pub fn and(&self, o: &RegSet) -> RegSet {
        let [a0, a1, a2, a3] = self.gpr;
        let [b0, b1, b2, b3] = o.gpr;
        RegSet { gpr: [a0 & b0, a1 & b1, a2 & b2, a3 & b3], pred: self.pred & o.pred, cc: self.cc && o.cc }
    }
    /// Adds every unit of `o`.
    pub fn union(&mut self, o: &RegSet) {
        for (a, b) in self.gpr.iter_mut().zip(o.gpr) {
            *a |= b;
        }
        self.pred |= o.pred;
        self.cc |= o.cc;
    }
    /// The general-purpose registers in the set, ascending.
    pub fn gprs(&self) -> impl Iterator<Item = usize> + '_ {
        self.gpr.iter().enumerate().flat_map(|(w, &word)| {
            let mut m = word;
            std::iter::from_fn(move || {
                if m == 0 {
                    None
                } else {
                    let b = m.trailing_zeros() as usize;
                    m &= m.wrapping_sub(1); // clears the lowest set bit (m != 0)
                    Some(w.wrapping_mul(64) | b) // w < 4, b < 64
                }
            })
        })
    }
    /// The predicates in the set, ascending.
    pub fn preds(&self) -> impl Iterator<Item = usize> + '_ {
        (0..7).filter(move |&p| self.pred >> p & 1 == 1)
    }
    /// The first member's name (`R4`, `P0`, `CC`), for messages.
    pub fn first_name(&self) -> String {
        if let Some(r) = self.gprs().next() {
            format!("R{r}")
        } else if let Some(p) = self.preds().next() {
            format!("P{p}")
        } else if self.cc {
            "CC".into()
        } else {
            "nothing".into()
        }
    }
}

/// Kind of a reconvergence-stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackKind {
    /// Pushed by `SSY target`: the reconvergence point of an if-region.
    Sync,
    /// Pushed by `PBK target`: where threads leaving a loop with `BRK` wait.
    Brk,
    /// Pushed by a divergent `BRA`: the not-taken threads and where they resume.
    Div,
    /// Pushed by `CAL`/`JCAL`/`PRET`: the calling threads and the return address, where
    /// `RET` sends them.
    Call,
}

/// One reconvergence-stack entry: the threads it resumes and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackEntry {
    /// Kind.
    pub kind: StackKind,
    /// Threads resumed when the entry is popped (minus exited ones).
    pub mask: u32,
    /// Instruction index they resume at.
    pub pc: usize,
}

/// Why a warp is not issuing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpStatus {
    /// Issuing instructions.
    Running,
    /// Waiting at `BAR.SYNC` barrier `id`.
    AtBarrier(u32),
    /// Every thread exited.
    Done,
}

/// One warp of a CTA.
pub struct Warp {
    /// Warp index within the CTA (threads `32*index ..`).
    pub index: usize,
    /// `regs[r][lane]`: the registers written so far or filled at the start (a register
    /// beyond the vector reads 0; writing it grows the vector).
    pub regs: Vec<Lanes>,
    /// P0..P6 as lane masks.
    pub preds: [u32; 7],
    /// CC flags per lane.
    pub cc: [u8; WARP_SIZE],
    /// Threads executing the current path.
    pub active: u32,
    /// Threads that executed `EXIT` (and lanes beyond the CTA's threads).
    pub exited: u32,
    /// Next instruction index.
    pub pc: usize,
    /// The reconvergence stack (top last).
    pub stack: Vec<StackEntry>,
    /// Status.
    pub status: WarpStatus,
    /// Earliest cycle of the next issue (previous issue + its stall count).
    pub next_issue: u64,
    /// Scoreboard and latency bookkeeping.
    pub sb: Scoreboard,
    /// `%tid` (x, y, z) per lane.
    pub tid: [[u32; 3]; WARP_SIZE],
    /// Linear thread index within the CTA per lane.
    pub linear: [u32; WARP_SIZE],
    /// The warp's contribution to the BAR.RED it waits at: (reduction, threads whose
    /// predicate is true, participating threads).
    pub bar_red: Option<(crate::sass::op::BarRedOp, u32, u32)>,
    /// What B2R.RESULT reads: the result of the warp's last BAR.RED.
    pub b2r: u32,
}

impl Warp {
    /// Warp `index` of a CTA of `block` threads, with room for `nregs` registers (more
    /// are added when written); lanes beyond the CTA count as exited.
    pub fn new(index: usize, block: [u32; 3], nregs: usize) -> Warp {
        // At most 1024 threads (`check_shape`); saturating all the same.
        let [bx, by, bz] = block.map(|b| b.max(1));
        let n = bx.saturating_mul(by).saturating_mul(bz) as usize;
        let mut tid = [[0u32; 3]; WARP_SIZE];
        let mut linear = [0u32; WARP_SIZE];
        let mut valid = 0u32;
        for (lane, (t, lin)) in tid.iter_mut().zip(linear.iter_mut()).enumerate() {
            let l = index.saturating_mul(WARP_SIZE).saturating_add(lane);
            *lin = l as u32;
            if l < n {
                valid |= 1 << lane; // lane < WARP_SIZE
                let l = l as u32;
                // Divisors are at least 1 (`max(1)` above).
                let (row, plane) = (l.checked_div(bx).unwrap_or(0), l.checked_div(bx.saturating_mul(by)).unwrap_or(0));
                *t = [l.checked_rem(bx).unwrap_or(0), row.checked_rem(by).unwrap_or(0), plane];
            }
        }
        Warp {
            index,
            regs: vec![[0; WARP_SIZE]; nregs.min(NUM_GPRS)],
            preds: [0; 7],
            cc: [0; WARP_SIZE],
            active: valid,
            exited: !valid,
            pc: 0,
            stack: vec![],
            status: if valid == 0 { WarpStatus::Done } else { WarpStatus::Running },
            next_issue: 0,
            sb: Scoreboard::new(),
            tid,
            linear,
            bar_red: None,
            b2r: 0,
        }
    }

    /// `Rr` of `lane` (RZ and beyond read 0).
    pub fn reg(&self, r: usize, lane: usize) -> u32 {
        self.regs.get(r).and_then(|x| x.get(lane)).copied().unwrap_or(0)
    }

    /// The lanes of `Rr` for writing (`None` for RZ and beyond), growing the file.
    fn reg_mut(&mut self, r: usize) -> Option<&mut Lanes> {
        if r >= NUM_GPRS {
            return None;
        }
        if r >= self.regs.len() {
            self.regs.resize(r.saturating_add(1), [0; WARP_SIZE]);
        }
        self.regs.get_mut(r)
    }

    /// Writes `Rr` of `lane` (RZ and beyond are discarded).
    pub fn set_reg(&mut self, r: usize, lane: usize, v: u32) {
        if let Some(x) = self.reg_mut(r).and_then(|x| x.get_mut(lane)) {
            *x = v;
        }
    }

    /// Predicate `p` as a lane mask (PT: all lanes).
    pub fn pred(&self, p: Reg) -> u32 {
        match p {
            Reg::P(x) => self.preds.get(x as usize).copied().unwrap_or(u32::MAX),
            _ => u32::MAX,
        }
    }

    /// Sets predicate `p` to `values` in the lanes of `mask` (PT is discarded).
    pub fn set_pred(&mut self, p: Reg, mask: u32, values: u32) {
        if let Reg::P(x) = p
            && let Some(v) = self.preds.get_mut(x as usize)
        {
            *v = (*v & !mask) | (values & mask);
        }
    }

    /// A predicate source (`P0`, `!P1`, `PT`) as a lane mask.
    pub fn pred_src(&self, s: &Src) -> Result<u32, ExecError> {
        match s.kind {
            SrcKind::Pred(p) => Ok(if s.mods.neg { !self.pred(p) } else { self.pred(p) }),
            _ => Err(ExecError::Unsupported(format!("expected a predicate operand, found {:?}", s.kind))),
        }
    }

    /// A 32-bit source operand's raw bits in every lane of `mask` (modifiers are left to
    /// the instruction): a register, an immediate, or `c[bank][offset]`.
    pub fn gather(&self, s: &Src, banks: &ConstBanks, mask: u32) -> Result<Lanes, ExecError> {
        match s.kind {
            SrcKind::Reg(r) => match r.reg {
                Reg::R(x) => Ok(self.regs.get(x as usize).copied().unwrap_or([0; WARP_SIZE])),
                _ => Err(ExecError::Unsupported(format!("register operand {:?}", r.reg))),
            },
            SrcKind::Imm(v) => Ok([v; WARP_SIZE]),
            SrcKind::CBuf { bank, offset, index: None, .. } => {
                Ok([banks.operand(bank, offset as i64, 4)? as u32; WARP_SIZE])
            }
            SrcKind::Pred(_) => {
                let m = self.pred_src(s)?;
                let mut out = [0; WARP_SIZE];
                for (l, o) in masked(&mut out, mask) {
                    *o = u32::from(in_mask(m, l));
                }
                Ok(out)
            }
            _ => Err(ExecError::Unsupported(format!("operand {:?} here", s.kind))),
        }
    }

    /// A 64-bit source operand (a register pair, `c[bank][offset]` of two words, or an
    /// fp64 immediate holding the upper 32 bits) in every lane.
    pub fn gather64(&self, s: &Src, banks: &ConstBanks) -> Result<Lanes64, ExecError> {
        match s.kind {
            SrcKind::Reg(r) => {
                let Reg::R(x) = r.reg else {
                    return Err(ExecError::Unsupported(format!("register operand {:?}", r.reg)));
                };
                let x = x as usize;
                let mut out = [0u64; WARP_SIZE];
                for (l, o) in out.iter_mut().enumerate() {
                    *o = self.reg(x, l) as u64 | (self.reg(x.saturating_add(1), l) as u64) << 32;
                }
                Ok(out)
            }
            SrcKind::Imm(v) => Ok([(v as u64) << 32; WARP_SIZE]),
            SrcKind::CBuf { bank, offset, index: None, .. } => Ok([banks.operand(bank, offset as i64, 8)?; WARP_SIZE]),
            _ => Err(ExecError::Unsupported(format!("64-bit operand {:?}", s.kind))),
        }
    }

    /// Writes `n` consecutive registers from `r` with the words of `v` in the lanes of
    /// `mask` (`v[lane][k]` goes to `R(r+k)`).
    pub fn write_regs(&mut self, r: RegRef, mask: u32, v: &[[u32; 4]; WARP_SIZE]) {
        let Reg::R(x) = r.reg else { return };
        for (k, reg) in (x as usize..NUM_GPRS).take((r.n as usize).min(4)).enumerate() {
            if let Some(dst) = self.reg_mut(reg) {
                for (l, d) in masked(dst, mask) {
                    if let Some(&w) = v.get(l).and_then(|words| words.get(k)) {
                        *d = w;
                    }
                }
            }
        }
    }

    /// Writes a 32-bit register destination in the lanes of `mask`.
    pub fn write32(&mut self, r: RegRef, mask: u32, v: &Lanes) {
        if let Reg::R(x) = r.reg
            && let Some(dst) = self.reg_mut(x as usize)
        {
            for ((d, &s), _) in dst.iter_mut().zip(v).zip(0..).filter(|(_, l)| in_mask(mask, *l)) {
                *d = s;
            }
        }
    }

    /// Writes a 64-bit (pair) register destination in the lanes of `mask`.
    pub fn write64(&mut self, r: RegRef, mask: u32, v: &Lanes64) {
        if let Reg::R(x) = r.reg {
            for (l, &w) in v.iter().enumerate().filter(|(l, _)| in_mask(mask, *l)) {
                self.set_reg(x as usize, l, w as u32);
                self.set_reg((x as usize).saturating_add(1), l, (w >> 32) as u32);
            }
        }
    }
}
