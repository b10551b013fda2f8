//! Calls: the call graph, inlining, and real calls with the ABI of `docs/abi.md`
//! (PTX ISA 9.7.12 call/ret).

pub mod call;
pub mod callgraph;
pub mod inline;
pub mod realcall;
