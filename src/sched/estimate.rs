//! Estimated cycles of a scheduled function, from the hazard checker's issue model
//! ([`super::effects`]), for `-v` and for comparing schedules with ptxas's.
//!
//! The estimate is one pass over the code in address order, as if every instruction ran
//! once (branches are not followed, so a loop body counts once and unrolled code counts
//! every copy): each instruction issues `stall` cycles after the previous one, or later
//! if it waits on a barrier whose producers are not done; a variable-latency instruction
//! is done [`nominal_latency`] cycles after issue. The result is the issue cycle of the
//! last instruction plus its stall. Only relative comparisons between schedules of the
//! same code mean something.

use super::effects::{Queue, depbar, effects};
use crate::sass::text::{TextFunction, TextInstr};

/// Nominal completion latency, cycles, assumed for a variable-latency instruction. These
/// are round figures for the estimate, not measurements: global/local memory 200, shared
/// memory 30, constant loads 20, special registers 20, conversions and `MUFU` 20, fp64 50.
pub fn nominal_latency(i: &TextInstr) -> u64 {
    let Ok(fx) = effects(i) else { return 0 };
    match fx.queue {
        Some(Queue::Global) => 200,
        Some(Queue::Shared) => 30,
        Some(Queue::Fp64) => 50,
        _ => 20,
    }
}

/// The estimated cycles of `f` (see the module docs).
pub fn cycles(f: &TextFunction) -> u64 {
    // Per barrier: completion cycles of the ops outstanding on it, oldest first.
    let mut on: [Vec<u64>; 6] = Default::default();
    let mut clock = 0u64;
    let mut next = 0u64;
    for i in &f.instrs {
        let mut t = next;
        for (b, ops) in on.iter_mut().enumerate() {
            if i.ctrl.wait >> b & 1 == 1 {
                t = t.max(ops.iter().copied().max().unwrap_or(0));
                ops.clear();
            }
        }
        for (b, k) in depbar(i) {
            let b = b as usize;
            let keep = (k as usize).min(on[b].len());
            let cut = on[b].len() - keep;
            t = t.max(on[b][..cut].iter().copied().max().unwrap_or(0));
            on[b].drain(..cut);
        }
        clock = t;
        let done = clock + nominal_latency(i);
        if let Some(b) = i.ctrl.wr {
            on[b as usize].push(done);
        }
        if let Some(b) = i.ctrl.rd {
            // Sources are fetched within a few cycles of issue.
            on[b as usize].push(clock + 4);
        }
        next = clock + i.ctrl.stall as u64;
    }
    next.max(clock)
}
