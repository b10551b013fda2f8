//! The simulator's arithmetic units, written from the SPA 5.0 instruction descriptions:
//! integer ALU ([`alu`], [`int`]), floating point ([`float`]), the multi-function unit
//! ([`mufu`]) and the extended-precision helpers ([`ext`]).

pub mod alu;
pub mod ext;
pub mod float;
pub mod int;
pub mod mufu;
