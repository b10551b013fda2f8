//! The interpreter's arithmetic, written from the PTX ISA alone: integer operations
//! ([`int`]), floating point with IEEE rounding modes ([`float`], [`fp`] soft-float
//! helpers) and conversions ([`cvt`]).

pub mod cvt;
pub mod float;
pub mod fp;
pub mod int;
