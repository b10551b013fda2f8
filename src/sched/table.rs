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
}

/// Fixed ALU latency (findings section 7: "dependent back-to-back FADD/FFMA/XMAD/IADD -> 6").
pub const ALU_LATENCY: u8 = 6;
/// Predicate latency (findings section 7: "LEA.HI.X P0 -> consumer 13", ISETP -> 13).
pub const PRED_LATENCY: u8 = 13;
/// Stall after control flow and barriers (findings section 7: BRA/EXIT/RET/BAR.SYNC 15).
pub const CONTROL_STALL: u8 = 15;

/// The timing of `op`.
pub fn timing(op: &Op) -> Timing {
    let fixed = Timing {
        variable: false,
        gpr: ALU_LATENCY,
        pred: PRED_LATENCY,
        cc: ALU_LATENCY,
        reads_late: false,
        min_stall: 1,
    };
    let info = op.info();
    match info.unit {
        Unit::Alu | Unit::Pseudo => fixed,
        Unit::Fp64 | Unit::Conv => Timing { variable: true, reads_late: true, ..fixed },
        // S2R, and MUFU/POPC/FLO (Mesa NAK: not fixed-latency on SM < 70; ptxas 11.8 guards
        // MUFU and most POPC/FLO results with write barriers). FLO may read its operand up
        // to 4 cycles after issue (effects.rs); reading it at issue, as assumed here, only
        // makes the stall before it longer.
        Unit::Sreg | Unit::Xu => Timing { variable: true, ..fixed },
        // Memory instructions, loads included, read their registers after issue: ptxas
        // sets a read barrier on a load whose address register is rewritten soon after
        // (`LDG.E.CV R6, [R2] &rd0` ... `LDG.E R2, [R2+0x4] &req={0}`, ptxas 11.8).
        Unit::Const | Unit::Mem | Unit::Shared => Timing { variable: true, reads_late: true, ..fixed },

        Unit::Control => Timing { variable: false, min_stall: CONTROL_STALL, ..fixed },
    }
}
