//! ptx2sass: a compiler from NVIDIA PTX to SASS for the Maxwell architecture (SPA 5.0,
//! sm_50).
//!
//! The pipeline, one module per stage, each stage a function from one printable
//! representation to the next:
//!
//! `ptx` (text → checked AST) → `lower` (AST → SSA IR of SPA 5.0 operations on virtual
//! registers, in `ir`) → `regalloc` (IR on physical registers) → `sched` (scoreboards and
//! stall counts) → `sass` (instruction model and printer).
#![warn(missing_docs)]

pub mod cubin;
pub mod diag;
pub mod driver;
pub mod exec;
pub mod explore;
pub mod ir;
pub mod lower;
pub mod ptx;
pub mod regalloc;
pub mod sass;
pub mod sched;
pub mod timing;
