//! Arithmetic lowering: integer ALU, multiply, divide, bit ops, conversions, video
//! instructions and floating point (PTX ISA 9.7.1 to 9.7.4), each family in its own file.

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
