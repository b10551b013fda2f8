//! Arithmetic lowering: integer ALU, multiply, divide, bit ops, conversions, video
//! instructions and floating point (PTX ISA 9.7.1 to 9.7.4), each family in its own file.
// PTX input reaches every file here: no panicking shortcuts (issue 20, docs/fuzzing.md
// "No-panic discipline"); each file also carries its own `deny`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod alu;
pub mod bits;
pub mod cvt;
pub mod div;
pub mod float;
pub mod float32;
pub mod float_slow;
pub mod int;
pub mod mul;
pub mod video;
