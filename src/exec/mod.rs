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
//!
//! Limits (each an [`ExecError`], never an abort): the launch shape ([`check_shape`]),
//! [`Launch::step_limit`] instructions (a launch whose threads cannot all run one
//! instruction within it fails before it starts), [`Launch::memory_limit`] bytes of
//! per-CTA memory (shared and local) and parameter space ([`MAX_PARAM_BYTES`]).

// The executors run user programs on user data (issue 20, docs/fuzzing.md "No-panic
// discipline"): a bad launch or access is an [`ExecError`], never a panic. This holds for
// the whole of `exec` (unit-test modules aside).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod image;
pub mod memory;
pub mod printf;
pub mod ptx;
pub mod rng;
pub mod sampler;
pub mod sim;
pub mod spec;

pub use memory::{Difference, Memory};
pub use rng::Rng;

use crate::ptx::ast::ParamDecl;
use thiserror::Error;

/// Lowest address of a global buffer (bytes).
pub const GLOBAL_BASE: u64 = 1 << 32;

/// Default of [`Launch::step_limit`] (`ptx2sass run --max-steps`).
pub const DEFAULT_STEP_LIMIT: u64 = 50_000_000;

/// Default of [`Launch::stack_bytes`] (`ptx2sass run --stack-size`): CUDA's default
/// `cudaLimitStackSize`, 1 KiB per thread.
pub const DEFAULT_STACK_BYTES: u32 = 1024;

/// Default of [`Launch::memory_limit`] (`ptx2sass run --max-memory`): 1 GiB.
pub const DEFAULT_MEMORY_LIMIT: u64 = 1 << 30;

/// Largest parameter space of a kernel (bytes): ptxas 11.8 for sm_50 rejects more with
/// `Entry function 'k' uses too much parameter space (0x1104 bytes, 0x1100 max)`.
pub const MAX_PARAM_BYTES: u64 = 0x1100;

/// Shared memory a CTA may use on SPA 5.0, static and dynamic together (bytes; ptxas:
/// `uses too much shared data (0xc001 bytes, 0xc000 max)`, the CUDA limit of 48 KiB per
/// block for compute capability 5.0).
pub const MAX_SHARED_BYTES: u64 = 0xc000;

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
    /// Bytes of dynamic shared memory per CTA: what `.extern .shared` unsized arrays
    /// address, after the kernel's static shared data (CUDA's third launch parameter).
    pub dynamic_shared: u32,
    /// Initial contents of module variables (`.const`, and `.global` on the interpreter)
    /// by name, replacing the start of the variable's initializer (at most its size).
    pub module_init: Vec<(String, Vec<u8>)>,
    /// Upper bound on the bytes an executor allocates per CTA (shared memory and every
    /// thread's local memory); exceeding it is [`ExecError::MemoryLimit`].
    pub memory_limit: u64,
    /// Stack bytes per thread the simulator gives calls whose depth the program does not
    /// bound (recursion, indirect calls), beyond the kernel's frame (CUDA's
    /// `cudaLimitStackSize`); a deeper stack is an out-of-bounds local access.
    pub stack_bytes: u32,
    /// How the simulator's `MUFU` estimates deviate from the exact functions
    /// ([`MufuModel`]; the interpreter ignores it).
    pub mufu: MufuModel,
    /// Textures and surfaces bound to kernel parameters ([`image`]).
    pub images: Vec<image::Image>,
}

/// The simulator's model of `MUFU` estimates (module `exec::sim::arith::mufu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MufuModel {
    /// Moved by up to 2 ulp within the PTX ISA's bound of each `.approx` instruction,
    /// chosen per seed: code that needs a particular rounding of the estimate fails under
    /// some seed (the check for ptx2sass's own code).
    #[default]
    Perturbed,
    /// The correctly rounded value: ptxas 11.8's IEEE `div/rcp/sqrt` sequences need
    /// estimates closer than the PTX bounds (`rcp.rn.f32` of `0x3f7fffff` and of the
    /// smallest normal come out one ulp off with a 1-ulp `MUFU.RCP`), so its code runs with
    /// this model (`tests/sim_ptxas.rs`, `ptx2sass run --mufu nearest`).
    Nearest,
}

impl Launch {
    /// A launch of `kernel` with seed 0, no dynamic shared memory or module initializers,
    /// and the default step and memory limits.
    pub fn new(kernel: &str, grid: [u32; 3], block: [u32; 3], params: Vec<u8>, global: Memory) -> Launch {
        Launch {
            kernel: kernel.to_string(),
            grid,
            block,
            params,
            global,
            seed: 0,
            step_limit: DEFAULT_STEP_LIMIT,
            dynamic_shared: 0,
            module_init: vec![],
            memory_limit: DEFAULT_MEMORY_LIMIT,
            stack_bytes: DEFAULT_STACK_BYTES,
            mufu: MufuModel::default(),
            images: vec![],
        }
    }

    /// CTAs in the grid.
    pub fn ctas(&self) -> u64 {
        self.grid.iter().map(|&g| g as u64).product()
    }

    /// Threads per CTA.
    pub fn threads(&self) -> u64 {
        self.block.iter().map(|&b| b as u64).product()
    }
}

/// Checks a launch's shape against SPA 5.0's limits (CUDA compute capability 5.0: grid
/// `x <= 2^31 - 1`, `y, z <= 65535`; block `x, y <= 1024`, `z <= 64`, at most 1024
/// threads), the parameter space against [`MAX_PARAM_BYTES`] and shared memory (`static_shared`
/// bytes of the kernel plus [`Launch::dynamic_shared`]) against [`MAX_SHARED_BYTES`].
/// `min_steps_per_cta` is what each CTA executes at least (its threads for the
/// interpreter, its warps for the simulator): a grid that cannot fit in
/// [`Launch::step_limit`] fails here, before running.
pub fn check_shape(launch: &Launch, static_shared: u64, min_steps_per_cta: u64) -> Result<(), ExecError> {
    let [gx, gy, gz] = launch.grid;
    let [bx, by, bz] = launch.block;
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(ExecError::Launch(format!(
            "grid {:?} and block {:?}: every dimension must be at least 1",
            launch.grid, launch.block
        )));
    }
    if gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
        return Err(ExecError::Launch(format!(
            "grid {:?}: at most 2147483647 x 65535 x 65535 CTAs (compute capability 5.0)",
            launch.grid
        )));
    }
    if bx > 1024 || by > 1024 || bz > 64 || launch.threads() > 1024 {
        return Err(ExecError::Launch(format!(
            "block {:?}: at most 1024 x 1024 x 64 and 1024 threads in all (compute capability 5.0)",
            launch.block
        )));
    }
    if launch.params.len() as u64 > MAX_PARAM_BYTES {
        return Err(ExecError::Launch(format!("{} parameter bytes (at most {MAX_PARAM_BYTES})", launch.params.len())));
    }
    let shared = static_shared.saturating_add(launch.dynamic_shared as u64);
    if shared > MAX_SHARED_BYTES {
        return Err(ExecError::Launch(format!(
            "{static_shared} bytes of static and {} of dynamic shared memory: at most {MAX_SHARED_BYTES} per CTA",
            launch.dynamic_shared
        )));
    }
    let min = launch.ctas().saturating_mul(min_steps_per_cta);
    if min > launch.step_limit {
        return Err(ExecError::Launch(format!(
            "{} CTAs need at least {min} instructions ({min_steps_per_cta} each), more than the step limit of {} \
             (raise it with --max-steps)",
            launch.ctas(),
            launch.step_limit
        )));
    }
    Ok(())
}

/// Checks that `bytes` more bytes of `what` fit in [`Launch::memory_limit`].
pub fn check_memory(launch: &Launch, what: &str, bytes: u64) -> Result<(), ExecError> {
    if bytes > launch.memory_limit {
        return Err(ExecError::MemoryLimit { what: what.to_string(), bytes, limit: launch.memory_limit });
    }
    Ok(())
}

/// What a launch produced.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Global memory after the launch.
    pub global: Memory,
    /// Instructions executed (thread instructions for the interpreter, warp instructions
    /// for the simulator).
    pub steps: u64,
    /// What device `printf` (`vprintf`) printed: one text per thread and call, in the
    /// executor's order (CUDA leaves the order between threads open; [`compare`] sorts).
    pub output: Vec<String>,
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
    /// More than [`Launch::step_limit`] instructions (or a grid too large to run within
    /// them).
    #[error("step limit of {0} instructions reached (raise it with --max-steps)")]
    StepLimit(u64),
    /// A thread called `__assertfail` (a failed `assert` in CUDA C): the message, file,
    /// line and function it passed.
    #[error("assertion failed: {0}")]
    Assertion(String),
    /// An allocation beyond [`Launch::memory_limit`].
    #[error("{what} needs {bytes} bytes, more than the memory limit of {limit} (raise it with --max-memory)")]
    MemoryLimit {
        /// What would have been allocated.
        what: String,
        /// Its size in bytes.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
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
/// Returns the slots and the total size in bytes. Errors: more than [`MAX_PARAM_BYTES`].
pub fn param_layout(params: &[ParamDecl]) -> Result<(Vec<ParamSlot>, u32), ExecError> {
    let mut off = 0u64;
    let mut out = vec![];
    for p in params {
        let align = p.align.unwrap_or(p.ty.bytes().max(1)).max(1) as u64;
        // Saturating: any overflow is far beyond MAX_PARAM_BYTES and refused below.
        let size = (p.ty.bytes().max(1) as u64).saturating_mul(p.array.unwrap_or(1) as u64);
        off = off.div_ceil(align).saturating_mul(align);
        let end = off.saturating_add(size);
        if end > MAX_PARAM_BYTES {
            return Err(ExecError::Launch(format!(
                "parameter `{}` ends at byte {end}: the parameter space holds at most {MAX_PARAM_BYTES}",
                p.name.name,
            )));
        }
        out.push(ParamSlot { name: p.name.name.clone(), offset: off as u32, size: size as u32 });
        off = end;
    }
    Ok((out, off as u32))
}

/// Runs `launch` on both executors: the PTX interpreter on `module` and the simulator on
/// `program` (compiled from it). Returns both outcomes (interpreter first) and the
/// differences after the launch ([`differences`]: the launch's buffers and the module's
/// `.global` variables; empty when they agree) and in their `printf` output (sorted:
/// region `printf`, the index of the first differing text).
/// Errors: the first executor's failure, prefixed with `interpreter: ` or `simulator: `.
pub fn compare(
    module: &crate::ptx::ast::Module,
    program: &crate::sass::program::Program,
    launch: &Launch,
) -> Result<(Outcome, Outcome, Vec<Difference>), String> {
    let want = ptx::run(module, launch).map_err(|e| format!("interpreter: {e}"))?;
    let got = sim::run(program, launch).map_err(|e| format!("simulator: {e}"))?;
    let mut diff = differences(&want.global, &got.global);
    // printf output: the same texts, in any order (threads print in no fixed order).
    let (mut a, mut b) = (want.output.clone(), got.output.clone());
    a.sort();
    b.sort();
    let n = a.len().max(b.len());
    if let Some(k) = (0..n).find(|&k| a.get(k) != b.get(k)) {
        let text = |v: &Vec<String>| v.get(k).map_or(vec![], |s| s.as_bytes().iter().take(64).copied().collect());
        diff.push(Difference { region: "printf".into(), offset: k as u64, left: text(&a), right: text(&b) });
    }
    Ok((want, got, diff))
}

/// Name prefix of the allocation of a module `.global` variable, in both executors.
pub const MODULE_VAR_PREFIX: &str = "var_";

/// Where the interpreter's memory `a` and the simulator's `b` differ after a launch: per
/// allocation of `a` (the launch's buffers, which both place at the same addresses, and
/// the module's `.global` variables `var_NAME`, which each executor places where it
/// likes), the first differing byte of the allocation of the same name in `b`. Because
/// module variables have different addresses in the two, an aligned 8-byte word that holds
/// an address within (or just past) a module variable is compared as that variable and
/// offset: a pointer initializer `p = table+8`, or a kernel storing `&table[1]`, agrees.
pub fn differences(a: &Memory, b: &Memory) -> Vec<Difference> {
    let vars = |m: &Memory| -> Vec<(u64, u64, String)> {
        let mut v: Vec<(u64, u64, String)> = m
            .regions()
            .filter(|(n, _, _)| n.starts_with(MODULE_VAR_PREFIX))
            .map(|(n, base, d)| (base, d.len() as u64, n.to_string()))
            .collect();
        v.sort();
        v
    };
    let (va, vb) = (vars(a), vars(b));
    // The variable and offset an address points into (one past the end included).
    let canon = |vs: &[(u64, u64, String)], x: u64| -> Option<(String, u64)> {
        let k = vs.partition_point(|(base, _, _)| *base <= x);
        let (base, len, name) = vs.get(k.checked_sub(1)?)?;
        let off = x.checked_sub(*base)?;
        (off <= *len).then(|| (name.clone(), off))
    };
    let theirs: std::collections::HashMap<&str, &[u8]> = b.regions().map(|(n, _, d)| (n, d)).collect();
    let mut out = vec![];
    for (name, _, left) in a.regions() {
        let right: &[u8] = theirs.get(name).copied().unwrap_or(&[]);
        let mut first = (left.len() != right.len()).then_some(0usize);
        if first.is_none() {
            // Aligned 8-byte words (the last chunk may be shorter), at byte offset `8 * w`.
            for (w, (l, r)) in left.chunks(8).zip(right.chunks(8)).enumerate() {
                let word = |x: &[u8]| <[u8; 8]>::try_from(x).ok().map(u64::from_le_bytes);
                let same = match (word(l), word(r)) {
                    (Some(wl), Some(wr)) => match (canon(&va, wl), canon(&vb, wr)) {
                        (Some(x), Some(y)) => x == y,
                        (None, None) => l == r,
                        _ => false,
                    },
                    _ => l == r,
                };
                if !same {
                    let at = l.iter().zip(r).position(|(x, y)| x != y).unwrap_or(0);
                    first = Some(w.saturating_mul(8).saturating_add(at));
                    break;
                }
            }
        }
        if let Some(k) = first {
            let take = |v: &[u8]| v.iter().skip(k).take(16).copied().collect::<Vec<u8>>();
            out.push(Difference { region: name.to_string(), offset: k as u64, left: take(left), right: take(right) });
        }
    }
    out
}
