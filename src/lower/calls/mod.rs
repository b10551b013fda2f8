//! Calls: the call graph, inlining, and real calls with the ABI of `docs/abi.md`
//! (PTX ISA 9.7.12 call/ret).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod call;
pub mod callgraph;
pub mod inline;
pub mod realcall;
