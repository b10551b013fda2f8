//! The issue and scoreboard model that enforces the control fields (ptxas findings §7).
//!
//! * **Issue.** Each warp issues in order. Instruction `k+1` issues at
//!   `max(issue(k) + stall(k), completion of every barrier in its wait mask)`; a stall of
//!   0 issues both in the same cycle (dual issue).
//! * **Fixed latency** ([`LATENCY_TABLE`]): a result of an ALU instruction becomes
//!   visible `latency` cycles after issue; reading it earlier (in a lane that the producer
//!   wrote) is a hazard. Every register source, including the late-read sources of memory
//!   instructions, is checked at issue, as `sched` schedules them.
//! * **Variable latency** (memory, LDC, S2R, conversions, fp64, MUFU/POPC/FLO): the result arrives after
//!   a random delay (a [`crate::exec::Rng`] seeded from `Launch::seed`). The destinations are only
//!   known to be written once the warp has waited for the instruction's write barrier
//!   (`&req={b}` or `DEPBAR.LE SBb, k`); until then reading or overwriting them is a
//!   hazard, however long ago the result actually arrived. Register sources of these
//!   instructions are read late: until the read barrier (or the write barrier, whose
//!   completion implies the reads) has been waited for, overwriting one is a hazard.
//! * **Barriers count** (SB0..SB5): several instructions may set one barrier; waiting on
//!   it waits for all of them; completions on one barrier are in issue order (as ptxas
//!   relies on for SB5), so `DEPBAR.LE SBb, k` guarantees all but the `k` youngest.
//! * **In-order pipelines** ([`Queue`], [`queue`]): the instructions of one queue write
//!   their results and fetch their late sources in issue order, so waiting for a younger
//!   one's write (read) barrier also acknowledges the older ones' results (sources), even
//!   when they set no barrier. ptxas 11.8 relies on this (the hazard checker documents
//!   each case on its `Queue`: 17 `LDG.E.U8` in `samples/sha256` covered by one barrier,
//!   POPC and MUFU results covered by a younger one's barrier, `DEPBAR {0}` covering an
//!   older `LDS` in `samples/nvcc_scan`, and a MUFU covering an older conversion,
//!   [`Queue::Xu`]).
//! * **Late reads are bounded**: a late source is fetched within [`LATE_READ_WINDOW`]
//!   cycles of issue, so overwriting it later needs no read barrier (ptxas 11.8 relies on
//!   this: `samples/nbody` rewrites the address of an `LDS.U.128` 14 cycles after it;
//!   `sched::effects::LATE_READ_WINDOW`). Our scheduler gives every late reader a read
//!   barrier.
//!
//! Hazards are tracked per lane: a result written by some threads of a divergent path
//! does not constrain other threads.

use super::state::{PerLane, RegSet, WARP_SIZE, lanes, masked};
use crate::sass::op::{Op, Opcode, Unit};
use std::collections::VecDeque;

/// Fixed latency in cycles of a general-purpose result of an ALU instruction (findings
/// §7: "dependent back-to-back FADD/FFMA/XMAD/IADD -> 6, exactly the manual's ?WAIT6").
pub const ALU_LATENCY: u64 = 6;
/// Fixed latency of a predicate result (findings §7: "ISETP / FSETP: 13 before the
/// predicate consumer"; "LEA.HI.X P0 -> consumer 13 (?WAIT13)").
pub const PRED_LATENCY: u64 = 13;
/// Fixed latency of a condition-code result (findings §7: "6 for .CC->.X").
pub const CC_LATENCY: u64 = 6;

/// How an execution unit delivers results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    /// Results visible a fixed number of cycles after issue.
    Fixed {
        /// General-purpose register results.
        gpr: u64,
        /// Predicate results.
        pred: u64,
        /// CC results.
        cc: u64,
    },
    /// Results after a random delay of `min..=max` cycles; register sources are read
    /// late when `late_reads`.
    Variable {
        /// Shortest delay (cycles).
        min: u64,
        /// Longest delay (cycles).
        max: u64,
        /// Sources are read after issue (need a read barrier before being overwritten).
        late_reads: bool,
    },
}

/// Latency per execution unit ([`crate::sass::op::Unit`]). Fixed latencies: findings
/// §7 (see [`ALU_LATENCY`], [`PRED_LATENCY`], [`CC_LATENCY`]). Variable ranges are this
/// simulator's choice (findings §7 only says these results are guarded by scoreboard
/// barriers: S2R, LDG/LD/LDL on SB5, LDS, LDC, MUFU/DADD/DMUL/F2F/I2F/F2I; POPC and FLO
/// are variable latency in Mesa NAK); they are
/// wide so that different seeds explore different completion orders.
pub const LATENCY_TABLE: &[(Unit, Latency)] = &[
    (Unit::Alu, Latency::Fixed { gpr: ALU_LATENCY, pred: PRED_LATENCY, cc: CC_LATENCY }),
    (Unit::Control, Latency::Fixed { gpr: ALU_LATENCY, pred: PRED_LATENCY, cc: CC_LATENCY }),
    (Unit::Pseudo, Latency::Fixed { gpr: ALU_LATENCY, pred: PRED_LATENCY, cc: CC_LATENCY }),
    (Unit::Fp64, Latency::Variable { min: 8, max: 64, late_reads: true }),
    (Unit::Conv, Latency::Variable { min: 8, max: 48, late_reads: true }),
    (Unit::Sreg, Latency::Variable { min: 4, max: 40, late_reads: false }),
    // MUFU/POPC/FLO read their sources after issue (ptxas 11.8 issues them 2 cycles after
    // a 6-cycle producer and protects a source it rewrites soon with a read barrier:
    // `MUFU.RSQ R13, R21 &rd3 &wr2` ... `FFMA R21, RZ, R5, R11 &req={3}`, float_math).
    (Unit::Xu, Latency::Variable { min: 4, max: 40, late_reads: true }),
    (Unit::Mem, Latency::Variable { min: 20, max: 600, late_reads: true }),
    (Unit::Shared, Latency::Variable { min: 10, max: 80, late_reads: true }),
    (Unit::Const, Latency::Variable { min: 6, max: 60, late_reads: true }),
    // Texture fetches, queries and surface accesses (docs/textures.md §1.3: write
    // barriers, sources read 4 cycles after issue).
    (Unit::Tex, Latency::Variable { min: 20, max: 600, late_reads: true }),
];

/// Cycles after issue at which an instruction of `unit` reads its general-purpose
/// register sources, as far as fixed-latency producers are concerned. Findings §7 (ptxas
/// 11.8 control words): an ALU result feeding the address or data of LDG/STG/LDL/STL
/// needs a stall of only 2 (so these read 4 cycles late), one feeding LDS/STS/LDC needs 4
/// (2 cycles late), against 6 for an ALU consumer. Conversions and the MUFU/POPC/FLO unit
/// also read 4 cycles late (ptxas 11.8: `SHR.U32 R8, R8, 0x8 ?WAIT2` then `I2F.F32.U32
/// R8, R8`; `ICMP.EQ.U32 R17, ... ?WAIT2` then `FLO.U32 R17, R17`; an FMUL result read by
/// `MUFU.RCP` 2 cycles later in `samples/black_scholes`; the hazard checker's table).
/// The FP64 unit reads at least 2 cycles late (ptxas 11.8 for `cvt.rm.ftz.f32.f64`:
/// `ICMP.EQ R4, RZ, c[0x2][0x0], R4 ?WAIT4` then `DSETP.GT.AND P0, PT, R4, |R2|, PT`).
/// Everything else reads at issue.
pub fn operand_read_delay(unit: Unit) -> u64 {
    match unit {
        Unit::Mem | Unit::Conv | Unit::Xu | Unit::Tex => ALU_LATENCY - 2,
        Unit::Shared | Unit::Const | Unit::Fp64 => ALU_LATENCY - 4,
        _ => 0,
    }
}

/// Cycles within which an instruction has fetched its late sources (module docs; the
/// hazard checker's `LATE_READ_WINDOW`, measured on ptxas 11.8's code).
pub const LATE_READ_WINDOW: u64 = 14;

/// An in-order pipeline (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Global, local and generic memory: loads, stores, atomics, reductions, prefetches.
    Global,
    /// Shared memory: LDS, STS, ATOMS.
    Shared,
    /// The multi-function unit: MUFU, the conversions F2F, F2I, I2F, I2I, POPC and FLO.
    /// One queue: ptxas 11.8 reads the result of an `I2F.F32.U16 R0, R0` that sets no
    /// barrier after waiting on a younger `MUFU.RCP R5, R5 &wr0` (its `__cuda_sm20_div_u16`,
    /// PTX `div.u16`), and in `samples/device_globals` overwrites the source of
    /// `FLO.U32 R12, R11 &wr0` with a barrier-less `POPC R11, R11` 2 cycles later, whose
    /// result it reads after waiting only for a younger `F2I &wr0` (the hazard checker's
    /// `sched::effects::Queue::Conversion` is the same queue).
    Xu,
    /// Double precision: DADD, DMUL, DFMA, DMNMX, DSETP, DSET.
    Fp64,
}

/// Which opcodes complete in order in which queue (sources: module docs).
pub const QUEUE_TABLE: &[(Opcode, Queue)] = &[
    (Opcode::Ld, Queue::Global),
    (Opcode::Ldg, Queue::Global),
    (Opcode::Ldl, Queue::Global),
    (Opcode::St, Queue::Global),
    (Opcode::Stg, Queue::Global),
    (Opcode::Stl, Queue::Global),
    (Opcode::Atom, Queue::Global),
    (Opcode::Red, Queue::Global),
    (Opcode::Cctl, Queue::Global),
    (Opcode::Lds, Queue::Shared),
    (Opcode::Sts, Queue::Shared),
    (Opcode::Atoms, Queue::Shared),
    (Opcode::F2f, Queue::Xu),
    (Opcode::F2i, Queue::Xu),
    (Opcode::I2f, Queue::Xu),
    (Opcode::I2i, Queue::Xu),
    (Opcode::I2iCc, Queue::Xu),
    (Opcode::I2iSat, Queue::Xu),
    (Opcode::F2fSat, Queue::Xu),
    (Opcode::Dadd, Queue::Fp64),
    (Opcode::Dmul, Queue::Fp64),
    (Opcode::Dfma, Queue::Fp64),
    (Opcode::Dmnmx, Queue::Fp64),
    (Opcode::Dsetp, Queue::Fp64),
    (Opcode::Dset, Queue::Fp64),
    (Opcode::Popc, Queue::Xu),
    (Opcode::Flo, Queue::Xu),
    (Opcode::Mufu, Queue::Xu),
];

/// The in-order queue of `op`, from [`QUEUE_TABLE`].
pub fn queue(op: &Op) -> Option<Queue> {
    let o = op.opcode();
    QUEUE_TABLE.iter().find(|(x, _)| *x == o).map(|(_, q)| *q)
}

/// Smallest stall count after a control transfer (BRA, SYNC, BRK, EXIT, CAL, RET) or
/// BAR.SYNC. ptxas 11.8 mostly uses 13 (predicated) or 15 (findings §7; Mesa NAK's
/// `exec_latency` for SM < 70 is 13), but also less where the next instruction does not
/// depend on the transfer: `SYNC ?WAIT5` (`samples/bitonic_sort`), `@P2 SYNC ?WAIT8`, `@!P0
/// BRA ?WAIT6` (`samples/nvcc_matvec`), 5 being the smallest in its code for every
/// sample. `SSY` and `PBK` only push a target on the reconvergence stack: ptxas 11.8
/// issues the next instruction 1 cycle after them (`SSY ... ?WAIT1`), so they are not
/// held to this.
pub const CONTROL_MIN_STALL: u8 = 5;

/// The latency class of `unit`, from [`LATENCY_TABLE`].
// An invariant of our own table: it has a row for every `Unit` (`every_unit_has_a_latency`).
#[allow(clippy::expect_used)]
pub fn latency(unit: Unit) -> Latency {
    LATENCY_TABLE.iter().find(|(u, _)| *u == unit).map(|(_, l)| *l).expect("every unit is in the table")
}

/// A dependence the control fields do not protect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    /// A fixed-latency result read too early.
    TooEarly {
        /// Register name.
        reg: String,
        /// Producer instruction index.
        producer: usize,
        /// Cycle the result becomes visible.
        ready: u64,
        /// Cycle of the read.
        at: u64,
    },
    /// A variable-latency result read or overwritten before its write barrier was waited for.
    Unwaited {
        /// Register name.
        reg: String,
        /// Producer instruction index.
        producer: usize,
        /// The producer's write barrier.
        barrier: Option<u8>,
        /// True for an overwrite (WAW), false for a read (RAW).
        overwrite: bool,
    },
    /// A source still being read by a variable-latency instruction, overwritten before
    /// its read barrier was waited for (WAR).
    StillRead {
        /// Register name.
        reg: String,
        /// The reading instruction's index.
        reader: usize,
        /// Its read barrier.
        barrier: Option<u8>,
    },
}

/// A variable-latency instruction whose effects the warp has not yet waited for.
#[derive(Clone, Debug)]
struct LiveOp {
    /// Instruction index.
    k: usize,
    wr: Option<u8>,
    rd: Option<u8>,
    /// Position among the operations counted on `wr` / `rd` (1-based).
    wr_ord: u64,
    rd_ord: u64,
    lanes: u32,
    writes: RegSet,
    reads: RegSet,
    w_pending: bool,
    r_pending: bool,
    /// Its in-order queue.
    queue: Option<Queue>,
    /// Cycle by which its late sources have been fetched ([`LATE_READ_WINDOW`]).
    read_by: u64,
}

/// Most live operations kept separately; older ones with the same barriers are merged
/// (conservatively: a merged operation is acknowledged with the younger one).
const MAX_LIVE: usize = 48;

/// Per-lane cycles at which fixed-latency results become visible, per register unit.
struct Ready {
    at: Vec<[u64; WARP_SIZE]>,
    max: Vec<u64>,
    by: Vec<usize>,
}

impl Ready {
    /// Units are added as they are set: a warp's scoreboard costs what it uses, not the
    /// 255 registers it could.
    fn new() -> Ready {
        Ready { at: vec![], max: vec![], by: vec![] }
    }
    fn set(&mut self, u: usize, mask: u32, when: u64, k: usize) {
        if u >= self.at.len() {
            let n = u.saturating_add(1); // u is a register unit, below 256
            self.at.resize(n, [0; WARP_SIZE]);
            self.max.resize(n, 0);
            self.by.resize(n, 0);
        }
        if let Some(at) = self.at.get_mut(u) {
            for (_, a) in masked(at, mask) {
                *a = when;
            }
        }
        if let Some(m) = self.max.get_mut(u) {
            *m = (*m).max(when);
        }
        if let Some(b) = self.by.get_mut(u) {
            *b = k;
        }
    }
    /// The cycle a lane of `mask` can first read unit `u`, if later than `t`, and the
    /// instruction that last set it.
    fn late(&self, u: usize, mask: u32, t: u64) -> Option<(u64, usize)> {
        if self.max.get(u).is_none_or(|&m| m <= t) {
            return None;
        }
        let at = self.at.get(u)?;
        let ready = lanes(mask).map(|l| at.at(l)).filter(|&r| r > t).max()?;
        Some((ready, self.by.get(u).copied().unwrap_or(0)))
    }
}

/// Sets the entry of queue `q` in a per-queue table.
fn set_at<T>(table: &mut [T; 6], q: Queue, v: T) {
    if let Some(x) = table.get_mut(q as usize) {
        *x = v;
    }
}

/// The issue clock's view of one warp: barrier counters and pending results.
pub struct Scoreboard {
    /// Completion cycles of operations still counted on each barrier, in order.
    inflight: [VecDeque<u64>; 6],
    /// Operations ever counted on each barrier.
    issued: [u64; 6],
    /// Completion cycle of the last operation counted on each barrier.
    last_done: [u64; 6],
    /// Completion cycle of the last operation of each in-order queue ([`Queue`] order).
    queue_done: [u64; 6],
    live: Vec<LiveOp>,
    gpr: Ready,
    pred: Ready,
    cc: Ready,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard::new()
    }
}

impl Scoreboard {
    /// A scoreboard with nothing pending.
    pub fn new() -> Scoreboard {
        Scoreboard {
            inflight: Default::default(),
            issued: [0; 6],
            last_done: [0; 6],
            queue_done: [0; 6],
            live: vec![],
            gpr: Ready::new(),
            pred: Ready::new(),
            cc: Ready::new(),
        }
    }

    /// The issue cycle of an instruction that may issue at `earliest` and waits for the
    /// barriers in `wait` (bit b = SBb) and, for `DEPBAR.LE SBb, k`, `depbar = (b, k)`.
    /// Acknowledges the operations these waits cover.
    pub fn issue(&mut self, earliest: u64, wait: u8, depbar: Option<(u8, u8)>) -> u64 {
        let mut t = earliest;
        for (b, &done) in self.last_done.iter().enumerate() {
            if wait >> b & 1 == 1 {
                t = t.max(done);
            }
        }
        // DEPBAR.LE SBb, k: wait until at most k operations are in flight on SBb, that is
        // for the (k+1)-th youngest.
        if let Some((b, k)) = depbar
            && let Some(&done) = self.inflight.get(b as usize % 6).and_then(|q| q.iter().rev().nth(k as usize))
        {
            t = t.max(done);
        }
        for q in self.inflight.iter_mut() {
            while q.front().is_some_and(|&d| d <= t) {
                q.pop_front();
            }
        }
        let issued = self.issued;
        let covers = |b: Option<u8>, ord: u64| match b {
            Some(b) => {
                wait >> b & 1 == 1
                    || depbar.is_some_and(|(db, k)| {
                        db == b && issued.get(b as usize).is_some_and(|&n| ord.saturating_add(k as u64) <= n)
                    })
            }
            None => false,
        };
        // Youngest acknowledged write and read per queue: older ops of the queue are done
        // too (in-order completion and operand fetch).
        let mut done_upto: [Option<usize>; 6] = [None; 6];
        let mut read_upto: [Option<usize>; 6] = [None; 6];
        for (j, op) in self.live.iter_mut().enumerate() {
            if covers(op.wr, op.wr_ord) {
                op.w_pending = false;
                op.r_pending = false;
                if let Some(q) = op.queue {
                    set_at(&mut done_upto, q, Some(j));
                    set_at(&mut read_upto, q, Some(j));
                }
            }
            if covers(op.rd, op.rd_ord) {
                op.r_pending = false;
                if let Some(q) = op.queue {
                    let r = read_upto.get(q as usize).copied().flatten().max(Some(j));
                    set_at(&mut read_upto, q, r);
                }
            }
            if t >= op.read_by {
                op.r_pending = false;
            }
        }
        for (j, op) in self.live.iter_mut().enumerate() {
            if let Some(q) = op.queue {
                if done_upto.get(q as usize).copied().flatten().is_some_and(|u| j < u) {
                    op.w_pending = false;
                    op.r_pending = false;
                }
                if read_upto.get(q as usize).copied().flatten().is_some_and(|u| j < u) {
                    op.r_pending = false;
                }
            }
        }
        self.live.retain(|op| op.w_pending || op.r_pending);
        t
    }

    /// True once some instruction has counted on barrier `b` (SB0..SB5).
    pub fn ever_set(&self, b: u8) -> bool {
        self.issued.get(b as usize).is_some_and(|&n| n > 0)
    }

    /// Checks the reads (`reads`, in the lanes of `read_lanes`) and writes (`writes`, in
    /// `write_lanes`) of an instruction issuing at cycle `t` that reads its
    /// general-purpose sources at issue.
    pub fn check(
        &self,
        t: u64,
        reads: &RegSet,
        read_lanes: u32,
        writes: &RegSet,
        write_lanes: u32,
    ) -> Result<(), Conflict> {
        self.check_at(t, 0, reads, read_lanes, (writes, write_lanes), None)
    }

    /// [`Scoreboard::check`] for an instruction of in-order queue `queue` that reads its
    /// general-purpose sources `gpr_delay` cycles after issue ([`operand_read_delay`]);
    /// predicates and CC are read at issue. An instruction of a queue may overwrite the
    /// results and late sources of older instructions of the same queue: its own results
    /// arrive after theirs, and after they fetched their sources (module docs).
    pub fn check_at(
        &self,
        t: u64,
        gpr_delay: u64,
        reads: &RegSet,
        read_lanes: u32,
        (writes, write_lanes): (&RegSet, u32),
        queue: Option<Queue>,
    ) -> Result<(), Conflict> {
        if read_lanes != 0 {
            let tg = t.saturating_add(gpr_delay); // cycles: far below u64::MAX
            for r in reads.gprs() {
                if let Some((ready, producer)) = self.gpr.late(r, read_lanes, tg) {
                    return Err(Conflict::TooEarly { reg: format!("R{r}"), producer, ready, at: tg });
                }
            }
            for p in reads.preds() {
                if let Some((ready, producer)) = self.pred.late(p, read_lanes, t) {
                    return Err(Conflict::TooEarly { reg: format!("P{p}"), producer, ready, at: t });
                }
            }
            if reads.cc
                && let Some((ready, producer)) = self.cc.late(0, read_lanes, t)
            {
                return Err(Conflict::TooEarly { reg: "CC".into(), producer, ready, at: t });
            }
        }
        for op in &self.live {
            if op.w_pending {
                let raw = op.writes.and(reads);
                if op.lanes & read_lanes != 0 && !raw.is_empty() {
                    return Err(Conflict::Unwaited {
                        reg: raw.first_name(),
                        producer: op.k,
                        barrier: op.wr,
                        overwrite: false,
                    });
                }
                let waw = op.writes.and(writes);
                if op.lanes & write_lanes != 0 && !waw.is_empty() && (queue.is_none() || op.queue != queue) {
                    return Err(Conflict::Unwaited {
                        reg: waw.first_name(),
                        producer: op.k,
                        barrier: op.wr,
                        overwrite: true,
                    });
                }
            }
            if op.r_pending && t < op.read_by && (queue.is_none() || op.queue != queue) {
                let war = op.reads.and(writes);
                if op.lanes & write_lanes != 0 && !war.is_empty() {
                    return Err(Conflict::StillRead { reg: war.first_name(), reader: op.k, barrier: op.rd });
                }
            }
        }
        Ok(())
    }

    /// Records the results of fixed-latency instruction `k` issued at `t` in the lanes of
    /// `mask`.
    pub fn record_fixed(&mut self, k: usize, t: u64, writes: &RegSet, mask: u32, lat: Latency) {
        let Latency::Fixed { gpr, pred, cc } = lat else { return };
        // Cycles plus a latency: far below u64::MAX, the saturating adds never saturate.
        for r in writes.gprs() {
            self.gpr.set(r, mask, t.saturating_add(gpr), k);
        }
        for p in writes.preds() {
            self.pred.set(p, mask, t.saturating_add(pred), k);
        }
        if writes.cc {
            self.cc.set(0, mask, t.saturating_add(cc), k);
        }
    }

    fn count(&mut self, b: u8, done: u64) -> u64 {
        let b = b as usize % 6;
        let (Some(last), Some(q), Some(n)) =
            (self.last_done.get_mut(b), self.inflight.get_mut(b), self.issued.get_mut(b))
        else {
            return 0;
        };
        *last = done.max(*last);
        q.push_back(*last);
        *n = n.saturating_add(1); // one per instruction, within the step limit
        *n
    }

    /// Records variable-latency instruction `k` of in-order queue `queue` issued at `t` in
    /// the lanes of `mask`: its results (`writes`) arrive after `delay` cycles (not before
    /// the older results of its queue) on write barrier `wr`, its late sources (`reads`)
    /// are read within `read_delay` cycles on read barrier `rd`.
    #[allow(clippy::too_many_arguments)]
    pub fn record_variable(
        &mut self,
        k: usize,
        t: u64,
        (wr, rd): (Option<u8>, Option<u8>),
        writes: &RegSet,
        reads: &RegSet,
        mask: u32,
        (delay, read_delay): (u64, u64),
        queue: Option<Queue>,
    ) {
        // Cycles plus delays: far below u64::MAX, the saturating adds never saturate.
        let mut done = t.saturating_add(delay);
        if let Some(qd) = queue.and_then(|q| self.queue_done.get_mut(q as usize)) {
            done = done.max(*qd);
            *qd = done;
        }
        let read_delay = read_delay.min(LATE_READ_WINDOW);
        let wr_ord = wr.map_or(0, |b| self.count(b, done));
        let rd_ord = rd.map_or(0, |b| self.count(b, t.saturating_add(read_delay)));
        // An instruction of an in-order queue keeps its place even with no lane executing
        // or nothing to track: a wait on its barriers acknowledges the older ones (ptxas
        // 11.8, `samples/reduce_sum`: `@!P0 LDG.E R0` without a barrier is covered by
        // `@!P1 LDG.E R5 &wr5` and `&req={5}` when no lane has P1 false).
        let marker = queue.is_some() && (wr.is_some() || rd.is_some());
        if (mask == 0 || (writes.is_empty() && reads.is_empty())) && !marker {
            return;
        }
        let (writes, reads) = if mask == 0 { (&RegSet::default(), &RegSet::default()) } else { (writes, reads) };
        self.live.push(LiveOp {
            k,
            wr,
            rd,
            wr_ord,
            rd_ord,
            lanes: mask,
            writes: *writes,
            reads: *reads,
            w_pending: !writes.is_empty() || (marker && wr.is_some()),
            r_pending: !reads.is_empty() || (marker && rd.is_some()),
            queue,
            read_by: t.saturating_add(LATE_READ_WINDOW),
        });
        if self.live.len() > MAX_LIVE
            && let Some(old) = self.live.first().cloned()
            && let Some(y) =
                self.live.iter_mut().skip(1).find(|y| y.wr == old.wr && y.rd == old.rd && y.queue == old.queue)
        {
            y.lanes |= old.lanes;
            y.writes.union(&old.writes);
            y.reads.union(&old.reads);
            y.w_pending |= old.w_pending;
            y.r_pending |= old.r_pending;
            y.read_by = y.read_by.max(old.read_by);
            self.live.remove(0);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn set(r: u8) -> RegSet {
        let mut s = RegSet::default();
        s.add_gpr(r, 1);
        s
    }

    #[test]
    fn every_unit_has_a_latency() {
        let all = [
            Unit::Pseudo,
            Unit::Alu,
            Unit::Fp64,
            Unit::Conv,
            Unit::Xu,
            Unit::Sreg,
            Unit::Mem,
            Unit::Shared,
            Unit::Const,
            Unit::Tex,
            Unit::Control,
        ];
        for u in all {
            // Exhaustive: a new unit does not compile here until it is listed above.
            match u {
                Unit::Pseudo
                | Unit::Alu
                | Unit::Fp64
                | Unit::Conv
                | Unit::Xu
                | Unit::Sreg
                | Unit::Mem
                | Unit::Shared
                | Unit::Const
                | Unit::Tex
                | Unit::Control => {}
            }
            assert!(LATENCY_TABLE.iter().any(|(x, _)| *x == u), "{u:?} has no row in LATENCY_TABLE");
        }
    }

    #[test]
    fn fixed_latency_per_lane() {
        let mut sb = Scoreboard::new();
        sb.record_fixed(0, 10, &set(4), 0x0000_ffff, latency(Unit::Alu));
        assert!(sb.check(15, &set(4), 0xffff_0000, &RegSet::default(), 0).is_ok());
        assert!(matches!(sb.check(15, &set(4), 1, &RegSet::default(), 0), Err(Conflict::TooEarly { ready: 16, .. })));
        assert!(sb.check(16, &set(4), 1, &RegSet::default(), 0).is_ok());
    }

    #[test]
    fn counting_barriers_and_depbar() {
        let mut sb = Scoreboard::new();
        for (k, r) in [(0usize, 1u8), (1, 2), (2, 3)] {
            sb.record_variable(k, k as u64, (Some(5), None), &set(r), &RegSet::default(), 1, (100, 0), None);
        }
        // DEPBAR.LE SB5, 1: the two oldest are done and acknowledged.
        let t = sb.issue(3, 0, Some((5, 1)));
        assert_eq!(t, 101);
        assert!(sb.check(t, &set(2), 1, &RegSet::default(), 0).is_ok());
        assert!(matches!(sb.check(t, &set(3), 1, &RegSet::default(), 0), Err(Conflict::Unwaited { .. })));
        let t = sb.issue(t, 1 << 5, None);
        assert_eq!(t, 102);
        assert!(sb.check(t, &set(3), 1, &set(3), 1).is_ok());
    }

    #[test]
    fn in_order_queue_covers_older_results() {
        let mut sb = Scoreboard::new();
        // An LDG without a barrier, then one on SB5: waiting on SB5 covers both.
        sb.record_variable(0, 0, (None, None), &set(1), &RegSet::default(), 1, (50, 0), Some(Queue::Global));
        sb.record_variable(1, 1, (Some(5), None), &set(2), &RegSet::default(), 1, (10, 0), Some(Queue::Global));
        assert!(matches!(sb.check(2, &set(1), 1, &RegSet::default(), 0), Err(Conflict::Unwaited { .. })));
        let t = sb.issue(2, 1 << 5, None);
        // In-order completion: the younger load cannot complete before the older one.
        assert_eq!(t, 50);
        assert!(sb.check(t, &set(1), 1, &RegSet::default(), 0).is_ok());
        // Another queue is not covered.
        sb.record_variable(2, t, (None, None), &set(3), &RegSet::default(), 1, (50, 0), Some(Queue::Shared));
        sb.record_variable(3, t, (Some(4), None), &set(4), &RegSet::default(), 1, (5, 0), Some(Queue::Global));
        let t = sb.issue(t, 1 << 4, None);
        assert!(matches!(sb.check(t, &set(3), 1, &RegSet::default(), 0), Err(Conflict::Unwaited { .. })));
    }

    #[test]
    fn late_reads_end_within_the_window() {
        let mut sb = Scoreboard::new();
        sb.record_variable(0, 0, (None, None), &RegSet::default(), &set(7), 1, (0, 100), None);
        assert!(matches!(sb.check(13, &RegSet::default(), 0, &set(7), 1), Err(Conflict::StillRead { .. })));
        assert!(sb.check(LATE_READ_WINDOW, &RegSet::default(), 0, &set(7), 1).is_ok());
    }

    #[test]
    fn read_barrier_protects_sources() {
        let mut sb = Scoreboard::new();
        sb.record_variable(0, 0, (None, Some(0)), &RegSet::default(), &set(7), 1, (0, 12), None);
        assert!(matches!(sb.check(5, &RegSet::default(), 0, &set(7), 1), Err(Conflict::StillRead { .. })));
        let t = sb.issue(5, 1, None);
        assert_eq!(t, 12);
        assert!(sb.check(t, &RegSet::default(), 0, &set(7), 1).is_ok());
    }
}
