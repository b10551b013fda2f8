//! The subcommands' arguments (clap derive): what each flag means, its units and limits.

use clap::ValueEnum;
use std::path::PathBuf;

#[derive(clap::Args)]
pub(crate) struct ExploreArgs {
    /// Input PTX file.
    pub(crate) input: PathBuf,
    /// The HTML file to write.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Maximum registers per thread (like ptxas's --maxrregcount).
    #[arg(long, default_value_t = 255, value_parser = clap::value_parser!(u32).range(16..=255))]
    pub(crate) maxrregcount: u32,
}

#[derive(clap::Args)]
pub(crate) struct DisasmArgs {
    /// The cubin (`-` for standard input).
    pub(crate) input: PathBuf,
    /// Output file (`-` or absent for standard output).
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub(crate) struct AsmArgs {
    /// The listing (`-` for standard input).
    pub(crate) input: PathBuf,
    /// The cubin to write.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Executor {
    /// The PTX reference interpreter.
    Ptx,
    /// The SPA 5.0 simulator on the compiled SASS.
    Sim,
}

#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// Input PTX file (optional with `--sass`, whose listing then gives the parameter
    /// layout).
    pub(crate) input: Option<PathBuf>,
    /// Run this SASS listing instead of compiling the PTX: ptx2sass output,
    /// `sass-ctrl.py` output, or `nvdisasm -hex` output of a cubin (which carries the
    /// kernel's constant bank 2, shared size, frame and parameters). Facts the listing
    /// lacks come from the PTX file.
    #[arg(long, value_name = "LISTING")]
    pub(crate) sass: Option<PathBuf>,
    /// The simulator's MUFU estimates: `perturbed` (within the PTX ISA bound of each
    /// `.approx` instruction, chosen per seed) or `nearest` (correctly rounded). Default:
    /// `nearest` with `--sass` (ptxas 11.8's IEEE division and square root sequences need
    /// estimates tighter than the PTX bounds), `perturbed` otherwise.
    #[arg(long, value_enum)]
    pub(crate) mufu: Option<MufuArg>,
    /// The kernel (`.entry`) to launch.
    #[arg(long)]
    pub(crate) kernel: String,
    /// Grid size in CTAs: X, X,Y or X,Y,Z.
    #[arg(long, default_value = "1")]
    pub(crate) grid: String,
    /// CTA size in threads: X, X,Y or X,Y,Z.
    #[arg(long, default_value = "32")]
    pub(crate) block: String,
    /// One per kernel parameter, in order: i:N, f32:X, f64:X, rand:TYPE:COUNT, zeros:BYTES,
    /// file:PATH, bytes:HEX (buffers are passed as pointers, or by value to a byte-array
    /// parameter).
    #[arg(long = "arg")]
    pub(crate) args: Vec<String>,
    /// Bytes of dynamic shared memory per CTA (what `.extern .shared` arrays address).
    #[arg(long, default_value_t = 0)]
    pub(crate) dynamic_shared: u32,
    /// Initial contents of a module variable: NAME=file:PATH or NAME=bytes:HEX (`.const`;
    /// `.global` on the interpreter).
    #[arg(long = "init")]
    pub(crate) inits: Vec<String>,
    /// A texture bound to kernel parameter NAME (which then takes no `--arg`; it receives
    /// the texture's handle): NAME=DATA,fmt=f32x4|f32|u32|s32|u8x4,dims=W[,H[,D]]
    /// [,filter=point|linear][,addr=clamp|wrap|border|mirror][,norm] (DATA as for --init).
    #[arg(long = "texture")]
    pub(crate) textures: Vec<String>,
    /// A surface bound to kernel parameter NAME: NAME=DATA,fmt=...,dims=W[,H] (as
    /// --texture, without filter, addr and norm).
    #[arg(long = "surface")]
    pub(crate) surfaces: Vec<String>,
    /// A sampler bound to kernel parameter NAME (a `.u64`, then without `--arg`) or to the
    /// `.global .samplerref NAME` (independent texturing mode): NAME=[filter=point|linear]
    /// [,addr=clamp|wrap|border|mirror][,norm]; a fetch through it samples with this state.
    #[arg(long = "sampler")]
    pub(crate) samplers: Vec<String>,
    /// Stop with an error after this many instructions (thread instructions on the
    /// interpreter, warp instructions on the simulator).
    #[arg(long, default_value_t = ptx2sass::exec::DEFAULT_STEP_LIMIT)]
    pub(crate) max_steps: u64,
    /// Memory limit in bytes: for the buffers and variable contents of all arguments
    /// together, and for what an executor allocates per CTA.
    #[arg(long, default_value_t = ptx2sass::exec::DEFAULT_MEMORY_LIMIT)]
    pub(crate) max_memory: u64,
    /// Which executor runs the launch.
    #[arg(long, value_enum, default_value = "sim")]
    pub(crate) exec: Executor,
    /// Run both executors and compare all global memory after the launch.
    #[arg(long)]
    pub(crate) compare: bool,
    /// Seed of random buffers and of the simulator's completion order.
    #[arg(long, default_value_t = 1)]
    pub(crate) seed: u64,
    /// Also report the launch's cycles on the simulator's model GPU (a GTX 750 Ti: 5 SMs
    /// of 4 warp schedulers; `exec::sim::cycles`), deterministic for a seed.
    #[arg(long)]
    pub(crate) cycles: bool,
    /// Write each buffer after the launch to DIR/argK.bin.
    #[arg(long)]
    pub(crate) dump: Option<PathBuf>,
    /// Accept a `.target` newer than sm_50 with a warning (the interpreter runs what the
    /// PTX ISA defines; the compiler still rejects what SPA 5.0 lacks).
    #[arg(long)]
    pub(crate) allow_newer_target: bool,
    /// Which calls the compiler inlines (as `compile --inline`).
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) inline: InlineArg,
    /// Bytes of stack per thread for calls whose depth the program does not bound
    /// (recursion, indirect calls), beyond the kernel's own frame; CUDA's default
    /// `cudaLimitStackSize` is 1024.
    #[arg(long, default_value_t = ptx2sass::exec::DEFAULT_STACK_BYTES)]
    pub(crate) stack_size: u32,
}

/// The `--inline` choices.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum InlineArg {
    /// Inline every call that can be (not recursive, indirect, external or `.weak`).
    Always,
    /// Inline no call (functions using `.shared` variables still are).
    Never,
    /// Inline small and single-call functions; keep recursive, large multi-call and
    /// `.pragma "noinline"` ones as calls.
    Auto,
}

impl From<InlineArg> for ptx2sass::lower::calls::callgraph::Inline {
    fn from(a: InlineArg) -> Self {
        match a {
            InlineArg::Always => Self::Always,
            InlineArg::Never => Self::Never,
            InlineArg::Auto => Self::Auto,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MufuArg {
    /// Moved within the PTX ISA bound, per seed.
    Perturbed,
    /// Correctly rounded.
    Nearest,
}

#[derive(clap::Args)]
pub(crate) struct CheckArgs {
    /// The listing (`-` for standard input).
    pub(crate) input: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum EmitArg {
    /// The parsed and checked PTX, printed back.
    Ast,
    /// SSA IR on virtual registers, after lowering.
    Ir,
    /// SSA IR after the pre-allocation list scheduler.
    IrSched,
    /// IR on physical registers, after register allocation.
    IrAlloc,
    /// The control-flow graphs in Graphviz dot syntax.
    Dot,
    /// SPA 5.0 assembly with scheduling annotations.
    Sass,
    /// An sm_50 cubin (ELF), as ptxas writes it (also chosen by `-o NAME.cubin`).
    Cubin,
}

#[derive(clap::Args)]
pub(crate) struct CompileArgs {
    /// Input PTX file (`-` for standard input).
    pub(crate) input: PathBuf,
    /// Output file (`-` or absent for standard output).
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Stop after this stage and print it (default `sass`, or `cubin` for `-o NAME.cubin`).
    #[arg(long, value_enum)]
    pub(crate) emit: Option<EmitArg>,
    /// Print per-function statistics (registers, instructions, stack and shared bytes).
    #[arg(short, long)]
    pub(crate) verbose: bool,
    /// Maximum registers per thread (like ptxas's --maxrregcount).
    #[arg(long, default_value_t = 255, value_parser = clap::value_parser!(u32).range(16..=255))]
    pub(crate) maxrregcount: u32,
    /// Run regalloc2's checker and the independent allocation verifier on every
    /// allocation, the reconvergence checker on every lowered function, the hazard
    /// checker on the scheduled program, and encode it.
    #[arg(long)]
    pub(crate) verify: bool,
    /// Safe scheduling: wait for every variable-latency result and source read right
    /// after the instruction that produces or reads it.
    #[arg(long)]
    pub(crate) serial: bool,
    /// Keep the lowering's instruction order (no pre-allocation list scheduling).
    #[arg(long)]
    pub(crate) no_reorder: bool,
    /// Compile for separate compilation, like ptxas `-c`: a relocatable cubin (ET_REL)
    /// with every function in its own section and calls as `JCAL` with relocations, for
    /// `nvlink -arch=sm_50` (docs/cubin.md "Relocatable cubins").
    #[arg(short = 'c', long = "relocatable", visible_alias = "compile-only")]
    pub(crate) relocatable: bool,
    /// Reject sm_70+ features that would otherwise be emulated on SPA 5.0 with a warning
    /// (memory-model qualifiers, eviction priorities, cache hints, 256-bit accesses, ...).
    #[arg(long)]
    pub(crate) deny_emulation: bool,
    /// Accept a `.target` newer than sm_50 with a warning (features SPA 5.0 lacks are
    /// still rejected).
    #[arg(long)]
    pub(crate) allow_newer_target: bool,
    /// Which calls are inlined: `auto` inlines small and single-call functions and keeps
    /// recursive, large multi-call and `.pragma "noinline"` ones as calls.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) inline: InlineArg,
    /// Print the wall time and peak memory of each compilation stage on stderr.
    #[arg(long)]
    pub(crate) time_passes: bool,
    /// Before each run of SASS instructions, print the PTX statement they implement
    /// (`// k.ptx:42  ld.global.f32 %f1, [%rd4];`) and, where the PTX has `.loc`
    /// directives, the source line, as comments (SASS listing only).
    #[arg(long)]
    pub(crate) annotate: bool,
    /// Threads compiling functions in parallel (default: one per core; the output does
    /// not depend on it).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub(crate) threads: Option<u32>,
}
