//! The SPA 5.0 instruction model (registers, operands, opcodes with modifiers), its
//! nvdisasm-syntax printer, and the final scheduled program that `sched` produces.

pub mod abi;
pub mod asm;
pub mod data;
pub mod encode;
pub mod instr;
pub mod legal;
pub mod mods;
pub mod op;
pub mod print;
pub mod program;
pub mod read;
pub mod source_map;
pub mod sync;
pub mod texmods;

/// The listing readers keep their paths (`sass::listing`, `sass::text`).
pub use read::{listing, text};
