//! Control-flow passes for SIMT reconvergence (`docs/reconvergence.md`):
//!
//! * [`reducible`] (before SSA): every cycle becomes a natural loop, by node splitting or
//!   a dispatch variable;
//! * [`plan`]: where each divergent branch and loop reconverges, as SSY/PBK entries with
//!   their regions, or the shapes that prevent it;
//! * [`restructure`]: rewrites those shapes (loop landings with a dispatch, tail
//!   duplication of side-entered regions, preheaders, and, with [`nest`], inner cycles
//!   sharing their loop's header) out of SSA form;
//! * [`check`]: the invariant checker run on every compiled function in debug builds and
//!   with `--verify`;
//! * [`graph`]: the shared analyses and CFG edits.
//!
//! [`crate::lower::cfg::reconverge`] drives the post-SSA part.
//!
//! No panicking shortcuts anywhere in the folder (issue 20, docs/fuzzing.md "No-panic
//! discipline"); each file repeats the attribute, so it stays when a file moves.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod check;
pub mod graph;
pub mod ifconv;
pub mod nest;
pub mod plan;
pub mod reconverge;
pub mod reducible;
pub mod restructure;
