//! SPA 5.0 latency facts the scheduler relies on, keyed by execution unit
//! ([`crate::sass::op::Unit`]).
//!
//! Sources: ptxas 11.8 control words decoded with `sass-ctrl.py` (ptxas findings section 7:
//! dependent ALU instructions 6 cycles apart, predicate producers 13 before the predicate
//! consumer, `.CC` to `.X` 6, memory/S2R/LDC/conversion/fp64 results guarded by scoreboard
//! barriers, stores and fp64/conversions reading sources late enough to need read
//! barriers, long stalls after branches and barriers), matching the maxas control-word
//! documentation and Mesa NAK's `sm50.rs` latency classes.

use crate::sass::op::{Op, Unit};

/// How an opcode's results become available and when its sources are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// Results arrive after a variable time: consumers wait on a write barrier.
    pub variable: bool,
    /// Fixed latency in cycles of a general-purpose result (issue to availability).
    pub gpr: u8,
    /// Fixed latency of a predicate result.
    pub pred: u8,
    /// Fixed latency of a condition-code result.
    pub cc: u8,
    /// Sources may be read after issue: an overwrite must wait on a read barrier.
    pub reads_late: bool,
    /// Smallest stall the instruction itself needs (branches, barriers).
    pub min_stall: u8,
    /// Cycles after issue at which general-purpose sources are read, so a fixed-latency
    /// producer needs that much less stall (findings section 7: "2 ALU->LDG/STG/LDL/STL
    /// address or data; 4 ALU->LDS/STS/LDC", against 6 ALU->ALU: 4 and 2 cycles late).
    /// Predicates and CC are read at issue.
    pub read_delay: u8,
    /// Results complete in issue order with the other counted loads (global, local and
    /// generic loads): they share the counting barrier [`COUNTED_BARRIER`] and are waited
    /// for with `DEPBAR.LE` (findings section 7: "always &wr5 ... several loads share
    /// SB5 ... DEPBAR.LE SB5, k to wait for all but the k youngest").
    pub counted: bool,
}

/// The counting barrier of global, local and generic loads (findings section 7: ptxas
/// reserves SB5 for them).
pub const COUNTED_BARRIER: u8 = 5;
/// Stall ptxas gives `DEPBAR.LE` (findings section 7: "DEPBAR.LE SB5, k (stall 3)").
pub const DEPBAR_STALL: u8 = 3;
/// Most loads the scheduler keeps outstanding on the counting barrier; a further counted
/// load first retires the oldest with `DEPBAR.LE`. ptxas 11.8 keeps up to 21 loads
/// outstanding on SB5 (`samples/sha256.ptx`: 21 `LDG.E.U8 ... &wr5` before its first
/// `DEPBAR.LE SB5, 0x10`; `samples/stress_spill.ptx` likewise), and the count field is 6
/// bits (reference: DEPBAR bits 20-25). Raised from 15 on that evidence: in
/// `stress_spill` the limit of 15 put a `DEPBAR` before nearly every load of its long
/// load streams (simulated cycles -20%).
pub const MAX_COUNTED: usize = 21;

/// Fixed ALU latency (findings section 7: "dependent back-to-back FADD/FFMA/XMAD/IADD -> 6").
pub const ALU_LATENCY: u8 = 6;
/// Predicate latency (findings section 7: "LEA.HI.X P0 -> consumer 13", ISETP -> 13).
pub const PRED_LATENCY: u8 = 13;
/// Stall after control flow and barriers (findings section 7: BRA/EXIT/RET/BAR.SYNC 15).
pub const CONTROL_STALL: u8 = 15;
/// Stall after a predicated `BRA`/`EXIT`/`SYNC`/`BRK` (findings section 7: "15 (13 when
/// predicated)").
pub const GUARDED_CONTROL_STALL: u8 = 13;
/// Stall after `SSY`/`PBK`, which only push a reconvergence target (ptxas 11.8: `SSY ...
/// ?WAIT1` in all 5 of its SSYs for our samples, `sass-ctrl.py`).
pub const PUSH_STALL: u8 = 1;

/// Stall after a `MEMBAR.CTA` that directly follows `BAR.SYNC` (the lowering of
/// `bar.sync`): ptxas 11.8 `-O3` gives it 5 where other control instructions get 15
/// (findings section 2, "MEMBAR 5 (after BAR.SYNC) or 15"; `samples/nbody`,
/// `samples/sgemm_reg`: `BAR.SYNC 0x0 ?WAIT15` then `MEMBAR.CTA ?WAIT5`).
pub const MEMBAR_AFTER_BAR_STALL: u8 = 5;

/// The smallest stall after `op`, guarded (`@P`) or not.
pub fn min_stall(op: &Op, guarded: bool) -> u8 {
    match op {
        // PRET pushes a return address like SSY a reconvergence point (ptxas 11.8:
        // `PRET ... ?WAIT1` before `BRX`/`JMX`).
        Op::Ssy | Op::Pbk | Op::Pret => PUSH_STALL,
        Op::Bra | Op::Exit | Op::Sync | Op::Brk if guarded => GUARDED_CONTROL_STALL,
        _ => timing(op).min_stall,
    }
}

/// The timing of `op`.
pub fn timing(op: &Op) -> Timing {
    let fixed = Timing {
        variable: false,
        gpr: ALU_LATENCY,
        pred: PRED_LATENCY,
        cc: ALU_LATENCY,
        reads_late: false,
        min_stall: 1,
        read_delay: 0,
        counted: false,
    };
    let info = op.info();
    match info.unit {
        Unit::Alu | Unit::Pseudo => fixed,
        Unit::Fp64 | Unit::Conv => Timing { variable: true, reads_late: true, ..fixed },
        // S2R (reads no register).
        Unit::Sreg => Timing { variable: true, ..fixed },
        // MUFU/POPC/FLO (Mesa NAK: not fixed-latency on SM < 70; ptxas 11.8 guards MUFU and
        // most POPC/FLO results with write barriers) read their sources 4 cycles after issue
        // (the checker's table, `effects::TABLE`), so they must hold them: a source rewritten
        // before the result is waited for needs a read barrier, as ptxas sets one
        // (`MUFU.RSQ R13, R21 &rd3 &wr2` ... `FFMA R21, RZ, R5, R11 &req={3}`,
        // `samples/float_math`). Their first read is taken at issue here, which only makes
        // the stall before them longer.
        Unit::Xu => Timing { variable: true, reads_late: true, ..fixed },
        // ATOM is counted with the loads (ptxas 11.8: `ATOM.E.CAS R0, [R4], R6, R7 &wr5`
        // on SB5 after two `LDG.E ... &wr5`); RED, a store, is not.
        // Memory instructions, loads included, read their registers after issue: ptxas
        // sets a read barrier on a load whose address register is rewritten soon after
        // (`LDG.E.CV R6, [R2] &rd0` ... `LDG.E R2, [R2+0x4] &req={0}`, ptxas 11.8).
        Unit::Mem => {
            Timing { variable: true, reads_late: true, read_delay: ALU_LATENCY - 2, counted: !info.store, ..fixed }
        }
        Unit::Const | Unit::Shared => Timing { variable: true, reads_late: true, read_delay: ALU_LATENCY - 4, ..fixed },

        Unit::Control => Timing { variable: false, min_stall: CONTROL_STALL, ..fixed },
        // Texture and surface instructions read their registers 4 cycles after issue and
        // hold them (ptxas 11.8: `MOV R5, c[0x0][0x154] ?WAIT2` then `TEXS R6, R4, R4, R5`;
        // docs/textures.md §1.3). They complete in order among themselves but not with the
        // global loads counted on SB5, so each result gets its own barrier here.
        Unit::Tex => Timing { variable: true, reads_late: true, read_delay: ALU_LATENCY - 2, ..fixed },
    }
}

/// Nominal completion latency in cycles of a variable-latency result, used by the list
/// scheduler ([`super::list`]) to rank instructions by critical path. These are the same
/// round figures as the cycle estimate's ([`super::estimate::nominal_latency`]: global
/// and local memory 200, shared memory 30, fp64 50, constant loads, special registers
/// and conversions 20), so the scheduler optimises what `-v` reports; they are not
/// measurements. Fixed-latency results use [`Timing::gpr`] / [`Timing::pred`].
pub fn nominal_latency(op: &Op) -> u32 {
    match op.info().unit {
        Unit::Mem if !op.info().store => 200,
        Unit::Tex if !op.info().store => 200,
        Unit::Shared if !op.info().store => 30,
        Unit::Fp64 => 50,
        Unit::Const | Unit::Sreg | Unit::Conv => 20,
        _ => timing(op).gpr as u32,
    }
}

/// State spaces a memory instruction may touch, as a bit set.
pub mod space {
    /// Global memory.
    pub const GLOBAL: u8 = 1;
    /// Shared memory.
    pub const SHARED: u8 = 2;
    /// Local memory.
    pub const LOCAL: u8 = 4;
}

/// How a memory instruction accesses memory, for ordering memory operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAccess {
    /// Spaces it may touch ([`space`] bits): `LD`/`ST` with a generic address may touch
    /// all three (spa50-LD.txt: the generic address selects the shared or local window or
    /// global memory).
    pub spaces: u8,
    /// It writes memory.
    pub store: bool,
    /// Observable (volatile, acquire, release, mmio; [`crate::sass::op::MemMods::keep`]):
    /// stays in order with every other memory access.
    pub keep: bool,
    /// Access size in bytes.
    pub bytes: u32,
}

/// The memory access of `op`, or `None` when it does not access memory. `LDC` reads the
/// read-only constant banks, which no instruction writes, so it is not an access here.
pub fn mem_access(op: &Op) -> Option<MemAccess> {
    // Atomics read and write memory and stay in order with every other access of their
    // spaces (a generic ATOM may reach shared memory too: ptxas branches to ATOMS for the
    // shared window, so ATOM itself only reaches global memory).
    if let Op::Atom(a) | Op::Atoms(a) | Op::Red(a) = op {
        let spaces = if matches!(op, Op::Atoms(_)) { space::SHARED } else { space::GLOBAL };
        let bytes = if a.op == crate::sass::op::AtomOp::Cas { 8 } else { 4 } * a.ty.regs() as u32;
        return Some(MemAccess { spaces, store: true, keep: true, bytes });
    }
    let m = op.mem()?;
    let spaces = match op {
        Op::Ld(_) | Op::St(_) => space::GLOBAL | space::SHARED | space::LOCAL,
        Op::Ldg(_) | Op::Stg(_) => space::GLOBAL,
        Op::Lds(_) | Op::Sts(_) => space::SHARED,
        Op::Ldl(_) | Op::Stl(_) => space::LOCAL,
        _ => return None,
    };
    Some(MemAccess { spaces, store: op.info().store, keep: m.keep, bytes: m.size.bytes() })
}
