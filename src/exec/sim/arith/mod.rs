//! The simulator's arithmetic units, written from the SPA 5.0 instruction descriptions:
//! integer ALU ([`alu`], [`int`]), floating point ([`float`]), the multi-function unit
//! ([`mufu`]) and the extended-precision helpers ([`ext`]).

// Not yet rewritten for the no-panic lints (docs/fuzzing.md "No-panic discipline").
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub mod alu;
// Not yet rewritten for the no-panic lints (docs/fuzzing.md "No-panic discipline").
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub mod ext;
pub mod float;
pub mod int;
pub mod mufu;
