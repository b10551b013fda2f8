//! Executors of one kernel launch, to check without a GPU that the SASS does what the PTX
//! says (issue: execution oracle).
//!
//! * [`ptx`] interprets the checked PTX AST straight from the PTX ISA semantics; it
//!   shares nothing with `lower`.
//! * [`sim`] runs the compiled SPA 5.0 [`crate::sass::program::Program`] and enforces its
//!   scheduling annotations (waits, read barriers, stall counts).
//!
//! Both take the same [`Launch`] (grid, block, parameter bytes, global memory) and return
//! an [`Outcome`] holding global memory after the launch, which callers compare byte for
//! byte ([`Memory::diff`]).
//!
//! Address conventions shared by the harness and both executors: global buffers live at
//! or above [`GLOBAL_BASE`] (4 GiB), so that each executor is free to place its shared and
//! local windows for generic addressing below 4 GiB.

pub mod memory;
pub mod ptx;
pub mod rng;
pub mod sim;
pub mod spec;

pub use memory::{Difference, Memory};
pub use rng::Rng;

use crate::ptx::ast::ParamDecl;
use thiserror::Error;

/// Lowest address of a global buffer (bytes).
pub const GLOBAL_BASE: u64 = 1 << 32;

/// One kernel launch.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The kernel (`.entry`) to run.
    pub kernel: String,
    /// Grid size in CTAs (x, y, z), each at least 1.
    pub grid: [u32; 3],
    /// CTA size in threads (x, y, z), each at least 1, at most 1024 threads in all.
    pub block: [u32; 3],
    /// The kernel's parameter space as bytes, laid out by [`param_layout`] (offset 0 is
    /// the first parameter; the simulator places these bytes at `c[0x0][0x140]`).
    pub params: Vec<u8>,
    /// Global memory before the launch.
    pub global: Memory,
    /// Seed of the simulator's randomized completion order of variable-latency results and
    /// of both executors' order of the lanes of an atomic warp instruction.
    pub seed: u64,
    /// Upper bound on executed instructions over all threads (warp instructions for the
    /// simulator); exceeding it is [`ExecError::StepLimit`].
    pub step_limit: u64,
}

/// What a launch produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Global memory after the launch.
    pub global: Memory,
    /// Instructions executed (thread instructions for the interpreter, warp instructions
    /// for the simulator).
    pub steps: u64,
}

/// Why a launch failed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ExecError {
    /// An access outside every allocation of its space.
    #[error("{space} access of {len} bytes at 0x{addr:x} is out of bounds")]
    OutOfBounds {
        /// The state space (`global`, `shared`, `local`, `const`, `param`, `generic`).
        space: &'static str,
        /// Byte address.
        addr: u64,
        /// Access size in bytes.
        len: u64,
    },
    /// An access not aligned to its size.
    #[error("{space} access of {len} bytes at 0x{addr:x} is misaligned")]
    Misaligned {
        /// The state space.
        space: &'static str,
        /// Byte address.
        addr: u64,
        /// Access size in bytes.
        len: u64,
    },
    /// An instruction or operand form the executor does not model.
    #[error("not supported by the executor: {0}")]
    Unsupported(String),
    /// The scheduling annotations do not protect a dependence (simulator only): a read of
    /// a register whose producer was not waited for, an overwrite of a source still being
    /// read, a too-short stall.
    #[error("hazard: {0}")]
    Hazard(String),
    /// Threads of a CTA that can never all reach the same barrier.
    #[error("deadlock: {0}")]
    Deadlock(String),
    /// Missing reconvergence (simulator only): a barrier reached by part of a warp while
    /// its other live threads wait on the reconvergence stack, or an `SSY`/`PBK` pushed
    /// again while its earlier entry still holds threads (a region left without its
    /// `SYNC`/`BRK`).
    #[error("divergence: {0}")]
    Divergence(String),
    /// The launch itself is invalid (no such kernel, bad shape, wrong parameter bytes).
    #[error("invalid launch: {0}")]
    Launch(String),
    /// A thread executed `trap` (PTX ISA 9.7.19.1; SASS `BPT.TRAP`): the launch ends with
    /// this error, naming the first CTA (in launch order) that trapped.
    #[error("trap in CTA {ctaid:?}")]
    Trap {
        /// The CTA whose thread trapped.
        ctaid: [u32; 3],
    },
    /// More than [`Launch::step_limit`] instructions.
    #[error("step limit of {0} instructions exceeded")]
    StepLimit(u64),
}

/// One kernel parameter's place in the parameter space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    /// Parameter name.
    pub name: String,
    /// Byte offset from the start of the parameter space.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
}

/// The layout of a kernel's parameters (PTX ISA 5.1.6.1 kernel parameters): in order,
/// each at the next multiple of its alignment (`.align N`, else its element size).
/// Returns the slots and the total size in bytes.
pub fn param_layout(params: &[ParamDecl]) -> (Vec<ParamSlot>, u32) {
    let mut off = 0u32;
    let mut out = vec![];
    for p in params {
        let align = p.align.unwrap_or(p.ty.bytes().max(1)).max(1);
        off = off.div_ceil(align) * align;
        out.push(ParamSlot { name: p.name.name.clone(), offset: off, size: p.size() });
        off += p.size();
    }
    (out, off)
}

/// Runs `launch` on both executors: the PTX interpreter on `module` and the simulator on
/// `program` (compiled from it). Returns both outcomes (interpreter first) and the
/// differences in global memory after the launch (empty when they agree bit for bit).
/// Errors: the first executor's failure, prefixed with `interpreter: ` or `simulator: `.
pub fn compare(
    module: &crate::ptx::ast::Module,
    program: &crate::sass::program::Program,
    launch: &Launch,
) -> Result<(Outcome, Outcome, Vec<Difference>), String> {
    let want = ptx::run(module, launch).map_err(|e| format!("interpreter: {e}"))?;
    let got = sim::run(program, launch).map_err(|e| format!("simulator: {e}"))?;
    let diff = want.global.diff(&got.global);
    Ok((want, got, diff))
}
