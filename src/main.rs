//! `ptx2sass` command line: wires clap to [`ptx2sass::driver`].
//!
//! Exit status: 0 on success, 1 when the input has errors (diagnostics on stderr, no
//! output file written), 2 for usage errors (clap).

use clap::{Parser, Subcommand, ValueEnum};
use ptx2sass::diag::SourceFile;
use ptx2sass::driver::{self, Emit};
use ptx2sass::sass::source_map::{SourceMap, annotated_listing};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "ptx2sass", version, about = "Compile NVIDIA PTX to SASS for Maxwell (SPA 5.0, sm_50)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile a PTX file.
    Compile(CompileArgs),
    /// Check a scheduled SASS listing for hazards (ptx2sass output, or nvdisasm output with
    /// control fields from `sass-ctrl.py`). Exit status 1 when hazards are found.
    Check(CheckArgs),
    /// Run one kernel launch on the PTX interpreter or the SPA 5.0 simulator (or both,
    /// comparing all memory written). Exit status 1 on an execution error or a difference.
    Run(Box<RunArgs>),
    /// Disassemble an sm_50 cubin (ours or ptxas's) into a listing with decoded control
    /// fields, readable by `check`. Unknown words print as `.word` with a warning.
    Disasm(DisasmArgs),
    /// Assemble a listing (`compile` output, possibly edited) into a cubin.
    Asm(AsmArgs),
    /// Write a self-contained HTML report: PTX, IR after lowering and SASS side by side,
    /// lines linked by provenance, control fields in words, statistics, CFGs.
    Explore(ExploreArgs),
}

#[derive(clap::Args)]
struct ExploreArgs {
    /// Input PTX file.
    input: PathBuf,
    /// The HTML file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Maximum registers per thread (like ptxas's --maxrregcount).
    #[arg(long, default_value_t = 255, value_parser = clap::value_parser!(u32).range(16..=255))]
    maxrregcount: u32,
}

#[derive(clap::Args)]
struct DisasmArgs {
    /// The cubin (`-` for standard input).
    input: PathBuf,
    /// Output file (`-` or absent for standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
struct AsmArgs {
    /// The listing (`-` for standard input).
    input: PathBuf,
    /// The cubin to write.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Executor {
    /// The PTX reference interpreter.
    Ptx,
    /// The SPA 5.0 simulator on the compiled SASS.
    Sim,
}

#[derive(clap::Args)]
struct RunArgs {
    /// Input PTX file (optional with `--sass`, whose listing then gives the parameter
    /// layout).
    input: Option<PathBuf>,
    /// Run this SASS listing instead of compiling the PTX: ptx2sass output,
    /// `sass-ctrl.py` output, or `nvdisasm -hex` output of a cubin (which carries the
    /// kernel's constant bank 2, shared size, frame and parameters). Facts the listing
    /// lacks come from the PTX file.
    #[arg(long, value_name = "LISTING")]
    sass: Option<PathBuf>,
    /// The simulator's MUFU estimates: `perturbed` (within the PTX ISA bound of each
    /// `.approx` instruction, chosen per seed) or `nearest` (correctly rounded). Default:
    /// `nearest` with `--sass` (ptxas 11.8's IEEE division and square root sequences need
    /// estimates tighter than the PTX bounds), `perturbed` otherwise.
    #[arg(long, value_enum)]
    mufu: Option<MufuArg>,
    /// The kernel (`.entry`) to launch.
    #[arg(long)]
    kernel: String,
    /// Grid size in CTAs: X, X,Y or X,Y,Z.
    #[arg(long, default_value = "1")]
    grid: String,
    /// CTA size in threads: X, X,Y or X,Y,Z.
    #[arg(long, default_value = "32")]
    block: String,
    /// One per kernel parameter, in order: i:N, f32:X, f64:X, rand:TYPE:COUNT, zeros:BYTES,
    /// file:PATH, bytes:HEX (buffers are passed as pointers, or by value to a byte-array
    /// parameter).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Bytes of dynamic shared memory per CTA (what `.extern .shared` arrays address).
    #[arg(long, default_value_t = 0)]
    dynamic_shared: u32,
    /// Initial contents of a module variable: NAME=file:PATH or NAME=bytes:HEX (`.const`;
    /// `.global` on the interpreter).
    #[arg(long = "init")]
    inits: Vec<String>,
    /// A texture bound to kernel parameter NAME (which then takes no `--arg`; it receives
    /// the texture's handle): NAME=DATA,fmt=f32x4|f32|u32|s32|u8x4,dims=W[,H[,D]]
    /// [,filter=point|linear][,addr=clamp|wrap|border|mirror][,norm] (DATA as for --init).
    #[arg(long = "texture")]
    textures: Vec<String>,
    /// A surface bound to kernel parameter NAME: NAME=DATA,fmt=...,dims=W[,H] (as
    /// --texture, without filter, addr and norm).
    #[arg(long = "surface")]
    surfaces: Vec<String>,
    /// Stop with an error after this many instructions (thread instructions on the
    /// interpreter, warp instructions on the simulator).
    #[arg(long, default_value_t = ptx2sass::exec::DEFAULT_STEP_LIMIT)]
    max_steps: u64,
    /// Memory limit in bytes: for the buffers and variable contents of all arguments
    /// together, and for what an executor allocates per CTA.
    #[arg(long, default_value_t = ptx2sass::exec::DEFAULT_MEMORY_LIMIT)]
    max_memory: u64,
    /// Which executor runs the launch.
    #[arg(long, value_enum, default_value = "sim")]
    exec: Executor,
    /// Run both executors and compare all global memory after the launch.
    #[arg(long)]
    compare: bool,
    /// Seed of random buffers and of the simulator's completion order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also report the launch's cycles on the simulator's model GPU (a GTX 750 Ti: 5 SMs
    /// of 4 warp schedulers; `exec::sim::cycles`), deterministic for a seed.
    #[arg(long)]
    cycles: bool,
    /// Write each buffer after the launch to DIR/argK.bin.
    #[arg(long)]
    dump: Option<PathBuf>,
    /// Accept a `.target` newer than sm_50 with a warning (the interpreter runs what the
    /// PTX ISA defines; the compiler still rejects what SPA 5.0 lacks).
    #[arg(long)]
    allow_newer_target: bool,
    /// Which calls the compiler inlines (as `compile --inline`).
    #[arg(long, value_enum, default_value = "auto")]
    inline: InlineArg,
    /// Bytes of stack per thread for calls whose depth the program does not bound
    /// (recursion, indirect calls), beyond the kernel's own frame; CUDA's default
    /// `cudaLimitStackSize` is 1024.
    #[arg(long, default_value_t = ptx2sass::exec::DEFAULT_STACK_BYTES)]
    stack_size: u32,
}

/// The `--inline` choices.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum InlineArg {
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
enum MufuArg {
    /// Moved within the PTX ISA bound, per seed.
    Perturbed,
    /// Correctly rounded.
    Nearest,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The listing (`-` for standard input).
    input: PathBuf,
}

#[derive(Clone, Copy, ValueEnum)]
enum EmitArg {
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
struct CompileArgs {
    /// Input PTX file (`-` for standard input).
    input: PathBuf,
    /// Output file (`-` or absent for standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Stop after this stage and print it (default `sass`, or `cubin` for `-o NAME.cubin`).
    #[arg(long, value_enum)]
    emit: Option<EmitArg>,
    /// Print per-function statistics (registers, instructions, stack and shared bytes).
    #[arg(short, long)]
    verbose: bool,
    /// Maximum registers per thread (like ptxas's --maxrregcount).
    #[arg(long, default_value_t = 255, value_parser = clap::value_parser!(u32).range(16..=255))]
    maxrregcount: u32,
    /// Run regalloc2's checker and the independent allocation verifier on every
    /// allocation, the reconvergence checker on every lowered function, the hazard
    /// checker on the scheduled program, and encode it.
    #[arg(long)]
    verify: bool,
    /// Safe scheduling: wait for every variable-latency result and source read right
    /// after the instruction that produces or reads it.
    #[arg(long)]
    serial: bool,
    /// Keep the lowering's instruction order (no pre-allocation list scheduling).
    #[arg(long)]
    no_reorder: bool,
    /// Compile for separate compilation, like ptxas `-c`: a relocatable cubin (ET_REL)
    /// with every function in its own section and calls as `JCAL` with relocations, for
    /// `nvlink -arch=sm_50` (docs/cubin.md "Relocatable cubins").
    #[arg(short = 'c', long = "relocatable", visible_alias = "compile-only")]
    relocatable: bool,
    /// Reject sm_70+ features that would otherwise be emulated on SPA 5.0 with a warning
    /// (memory-model qualifiers, eviction priorities, cache hints, 256-bit accesses, ...).
    #[arg(long)]
    deny_emulation: bool,
    /// Accept a `.target` newer than sm_50 with a warning (features SPA 5.0 lacks are
    /// still rejected).
    #[arg(long)]
    allow_newer_target: bool,
    /// Which calls are inlined: `auto` inlines small and single-call functions and keeps
    /// recursive, large multi-call and `.pragma "noinline"` ones as calls.
    #[arg(long, value_enum, default_value = "auto")]
    inline: InlineArg,
    /// Print the wall time and peak memory of each compilation stage on stderr.
    #[arg(long)]
    time_passes: bool,
    /// Before each run of SASS instructions, print the PTX statement they implement
    /// (`// k.ptx:42  ld.global.f32 %f1, [%rd4];`) and, where the PTX has `.loc`
    /// directives, the source line, as comments (SASS listing only).
    #[arg(long)]
    annotate: bool,
    /// Threads compiling functions in parallel (default: one per core; the output does
    /// not depend on it).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
}

/// `println!` to stdout that ends the program quietly (status 0) when the reader has
/// closed the pipe (`ptx2sass run ... | head`), and with status 1 on any other write error,
/// instead of panicking.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout(), $($t)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
            errln!("error: cannot write output: {e}");
            std::process::exit(1);
        }
    }};
}

/// `eprint!` that never panics: when standard error is closed (`ptx2sass ... 2>&1 | head
/// -c 10`), the message is dropped and the program ends with the status it would have had,
/// as other command-line tools do.
macro_rules! err {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($t)*);
    }};
}

/// `eprintln!` that never panics (see [`err!`]).
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

fn read_input(path: &PathBuf) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut v = vec![];
        std::io::stdin().read_to_end(&mut v)?;
        Ok(v)
    } else {
        std::fs::read(path)
    }
}

/// Writes `text` (listing or cubin bytes) to `path` atomically (temporary file, then rename), or to stdout.
fn write_output(path: Option<&PathBuf>, text: &[u8]) -> std::io::Result<()> {
    match path {
        None => std::io::stdout().write_all(text),
        Some(p) if p.as_os_str() == "-" => std::io::stdout().write_all(text),
        // A device, FIFO or symbolic link (`-o /dev/null`, `-o >(...)`, a link to the real
        // output) is written through: renaming over it would replace it with a file.
        Some(p) if std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_file()) => std::fs::write(p, text),
        // A regular file (or a new one) is replaced whole: a uniquely named temporary file
        // in the same directory (the `tempfile` crate; it never touches an existing file and
        // is removed if anything fails), renamed over it, so a failed write leaves no
        // partial output.
        Some(p) => {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => std::path::Path::new("."),
            };
            let mut tmp = tempfile::Builder::new().prefix(".ptx2sass-").suffix(".tmp").tempfile_in(dir)?;
            tmp.write_all(text)?;
            // The temporary file is private (0600); the output keeps the permissions of the
            // file it replaces, or gets the usual 0644 of a new file.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(p).map_or(0o644, |m| m.permissions().mode() & 0o7777);
                tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode))?;
            }
            tmp.persist(p).map(|_| ()).map_err(|e| e.error)
        }
    }
}

fn compile(args: CompileArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let name = if name == "-" { "<stdin>".to_string() } else { name };
    let bytes = match read_input(&args.input) {
        Ok(b) => b,
        Err(e) => {
            errln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    let src = match driver::decode(&bytes) {
        Ok(s) => s,
        Err(d) => {
            let lossy = String::from_utf8_lossy(&bytes);
            err!("{}", SourceFile::new(&name, &lossy).render(&d));
            return ExitCode::from(1);
        }
    };
    let by_extension = args.output.as_ref().is_some_and(|p| p.extension().is_some_and(|e| e == "cubin"));
    let emit = match args.emit.unwrap_or(if by_extension { EmitArg::Cubin } else { EmitArg::Sass }) {
        EmitArg::Ast => Emit::Ast,
        EmitArg::Ir => Emit::Ir,
        EmitArg::IrSched => Emit::IrSched,
        EmitArg::IrAlloc => Emit::IrAlloc,
        EmitArg::Dot => Emit::Dot,
        EmitArg::Sass => Emit::Sass,
        EmitArg::Cubin => Emit::Cubin,
    };
    if args.annotate && emit != Emit::Sass {
        errln!("error: --annotate annotates the SASS listing; it cannot be used with --emit other than sass");
        return ExitCode::from(1);
    }
    let mut opts = driver::Options { emit, ..driver::Options::default() };
    opts.regalloc.max_regs = args.maxrregcount;
    opts.regalloc.verify |= args.verify;
    opts.check_hazards |= args.verify;
    opts.check_encoding |= args.verify;
    opts.lower.check_reconvergence |= args.verify;
    opts.sched.serial = args.serial;
    opts.sched.reorder = !args.no_reorder;
    opts.lower.deny_emulation = args.deny_emulation;
    opts.front.allow_newer_target = args.allow_newer_target;
    opts.lower.inline = args.inline.into();
    opts.relocatable = args.relocatable;
    let file = SourceFile::new(&name, src);
    if let Some(n) = args.threads {
        // Only fails when the global pool was already built, which nothing does before.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n as usize).build_global();
    }
    let mut timer = ptx2sass::timing::PassTimer::new(args.time_passes);
    let result = driver::compile_timed(src, &opts, &mut timer);
    if args.time_passes {
        err!("{}", timer.report());
    }
    match result {
        Ok(out) => {
            err!("{}", file.render_all(&out.warnings));
            if args.verbose {
                for s in &out.stats {
                    errln!("ptx2sass info    : Function properties for {}", s.name);
                    errln!(
                        "ptx2sass info    : Used {} registers, {} instructions, {} bytes stack frame, {} bytes spill, {} bytes smem",
                        s.regs,
                        s.instrs,
                        s.frame_bytes,
                        s.spill_bytes,
                        s.shared_bytes
                    );
                    errln!("ptx2sass info    : Estimated {} cycles (one pass through the code)", s.cycles);
                }
            }
            let annotated = match (&out.program, args.annotate && out.binary.is_none()) {
                (Some(p), true) => Some(annotated_listing(p, &SourceMap::new(src), &name)),
                _ => None,
            };
            let text = annotated.as_deref().unwrap_or(&out.text);
            let bytes = out.binary.as_deref().unwrap_or(text.as_bytes());
            if let Err(e) = write_output(args.output.as_ref(), bytes) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    // The reader stopped early (`| head`): not an error, as for Unix tools.
                    return ExitCode::SUCCESS;
                }
                errln!("error: cannot write output: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(diags) => {
            err!("{}", file.render_all(&diags));
            let n = diags.iter().filter(|d| d.is_error()).count();
            errln!("error: {n} error{} in {name}; no output written", if n == 1 { "" } else { "s" });
            ExitCode::from(1)
        }
    }
}

fn check(args: CheckArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let text = match read_input(&args.input) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            errln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    let funcs = match ptx2sass::sass::text::parse(&text) {
        Ok(f) => f,
        Err(e) => {
            errln!("error: {name}:{e}");
            return ExitCode::from(1);
        }
    };
    match ptx2sass::sched::check::check(&funcs) {
        Ok(hazards) if hazards.is_empty() => {
            for f in &funcs {
                say!(
                    "{name}: {}: {} instructions, estimated {} cycles, no hazards",
                    f.name,
                    f.instrs.len(),
                    ptx2sass::sched::estimate::cycles(f)
                );
            }
            ExitCode::SUCCESS
        }
        Ok(hazards) => {
            for h in &hazards {
                errln!("hazard: {name}:{h}");
            }
            errln!("error: {} hazard(s) in {name}", hazards.len());
            ExitCode::from(1)
        }
        Err(e) => {
            errln!("error: {name}:{e}");
            ExitCode::from(1)
        }
    }
}

fn run(a: RunArgs) -> ExitCode {
    use ptx2sass::exec::{self, spec};
    let name = a.input.as_ref().map_or_else(|| "<no PTX>".to_string(), |p| p.display().to_string());
    let usage = |m: String| {
        errln!("error: {m}");
        ExitCode::from(2)
    };
    let (grid, block) = match (spec::dims(&a.grid), spec::dims(&a.block)) {
        (Ok(g), Ok(b)) => (g, b),
        (Err(e), _) | (_, Err(e)) => return usage(e),
    };
    let mut rng = exec::Rng::new(a.seed);
    let mut budget = spec::Budget::new(a.max_memory);
    let mut args = vec![];
    let spec_error = |flag: &str, e: spec::SpecError| match e {
        spec::SpecError::Usage(m) => usage(format!("{flag} {m}")),
        spec::SpecError::Input(m) => {
            eprintln!("error: {flag} {m}");
            ExitCode::from(1)
        }
    };
    for s in &a.args {
        match spec::arg(s, &mut rng, &mut budget) {
            Ok(x) => args.push(x),
            Err(e) => return spec_error("--arg", e),
        }
    }
    let mut images = vec![];
    for (k, (s, surface)) in
        a.textures.iter().map(|s| (s, false)).chain(a.surfaces.iter().map(|s| (s, true))).enumerate()
    {
        let handle = exec::image::FIRST_HANDLE + k as u32;
        match spec::image(s, surface, handle, &mut rng, &mut budget) {
            Ok(x) => images.push(x),
            Err(e) => return spec_error(if surface { "--surface" } else { "--texture" }, e),
        }
    }
    let mut inits = vec![];
    for s in &a.inits {
        match spec::init(s, &mut rng, &mut budget) {
            Ok(x) => inits.push(x),
            Err(e) => return spec_error("--init", e),
        }
    }
    let source = match &a.input {
        Some(path) => match read_input(path) {
            Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            Err(e) => {
                errln!("error: cannot read {name}: {e}");
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let file = SourceFile::new(&name, source.as_deref().unwrap_or(""));
    let front = ptx2sass::ptx::target::Options { allow_newer_target: a.allow_newer_target };
    let mut copts = driver::Options { front, ..driver::Options::default() };
    copts.lower.inline = a.inline.into();
    let module = match &source {
        Some(src) => match ptx2sass::ptx::parse_with(src, &front) {
            Ok((m, _)) => Some(m),
            Err(d) => {
                err!("{}", file.render_all(&d));
                return ExitCode::from(1);
            }
        },
        None => None,
    };
    let compiled = || match &source {
        Some(src) => driver::compile(src, &copts)
            .map(|out| out.program.expect("SASS output has a program"))
            .map_err(|d| file.render_all(&d)),
        None => Err("no PTX input".to_string()),
    };
    // The program: the listing (`--sass`), its missing facts from the compiled PTX; or
    // the compiled PTX. (A `--cubin` input, once the cubin reader exists, plugs in here:
    // it yields the same `sass::listing` facts and code.)
    let program = match &a.sass {
        Some(path) => {
            let text = match std::fs::read(path) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    eprintln!("error: cannot read {}: {e}", path.display());
                    return ExitCode::from(1);
                }
            };
            let reference = compiled().ok();
            match ptx2sass::sass::listing::load(&text, reference.as_ref()) {
                Ok(p) => Some(p),
                Err(e) => {
                    eprintln!("error: {}:{e}", path.display());
                    return ExitCode::from(1);
                }
            }
        }
        None => None,
    };
    if a.cycles && a.exec == Executor::Ptx && !a.compare {
        return usage("--cycles times the simulator's run; it does not apply to `--exec ptx`".into());
    }
    if module.is_none() && (a.compare || a.exec == Executor::Ptx) {
        return usage("the PTX interpreter (`--exec ptx`, `--compare`) needs the PTX input".into());
    }
    // Each image's parameter receives its handle instead of an `--arg`.
    if !images.is_empty() {
        let Some(m) = &module else { return usage("--texture and --surface need the PTX input".into()) };
        let mut at = vec![];
        for (img, _) in &images {
            match exec::image::param_index(m, &a.kernel, &img.param) {
                Some(k) => at.push((k, img.handle)),
                None => return usage(format!("`{}` is not a parameter of kernel `{}`", img.param, a.kernel)),
            }
        }
        at.sort_unstable();
        for (k, h) in at {
            if k > args.len() {
                return usage(format!("parameter {k} has no --arg before it"));
            }
            args.insert(k, exec::ptx::args::Arg::Int(i64::from(h)));
        }
    }
    let built = match (&module, &program) {
        (Some(m), _) => exec::ptx::args::launch(m, &a.kernel, grid, block, &args, a.max_steps),
        (None, Some(p)) => listing_launch(p, &a.kernel, grid, block, &args, a.max_steps),
        (None, None) => return usage("give a PTX input, or a listing with --sass".into()),
    };
    let launch = match built {
        Ok(l) => exec::Launch {
            seed: a.seed,
            dynamic_shared: a.dynamic_shared,
            module_init: inits,
            memory_limit: a.max_memory,
            stack_bytes: a.stack_size,
            mufu: match a.mufu {
                Some(MufuArg::Nearest) => exec::MufuModel::Nearest,
                Some(MufuArg::Perturbed) => exec::MufuModel::Perturbed,
                None if a.sass.is_some() => exec::MufuModel::Nearest,
                None => exec::MufuModel::Perturbed,
            },
            ..l
        },
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let mut launch = launch;
    if let Err(e) = exec::image::bind(&mut launch, images) {
        errln!("error: {e}");
        return ExitCode::from(1);
    }
    drop(args);
    let program = || match &program {
        Some(p) => Ok(p.clone()),
        None => compiled(),
    };
    let result = if a.compare {
        program().and_then(|program| {
            let module = module.as_ref().expect("checked above");
            let (want, got, d) = exec::compare(module, &program, &launch)?;
            for x in &d {
                errln!(
                    "difference: {} at byte {}: interpreter {:02x?}, simulator {:02x?}",
                    x.region,
                    x.offset,
                    x.left,
                    x.right
                );
            }
            if d.is_empty() {
                say!("interpreter and simulator agree on all global memory ({} / {} steps)", want.steps, got.steps);
                Ok(got)
            } else {
                Err(format!("{} difference(s)", d.len()))
            }
        })
    } else if a.exec == Executor::Ptx {
        exec::ptx::run(module.as_ref().expect("checked above"), &launch).map_err(|e| format!("interpreter: {e}"))
    } else {
        program().and_then(|program| exec::sim::run(&program, &launch).map_err(|e| format!("simulator: {e}")))
    };
    let result = match result {
        Ok(o) if a.cycles => program().and_then(|program| {
            let (_, c) = exec::sim::run_cycles(&program, &launch).map_err(|e| format!("simulator: {e}"))?;
            say!(
                "cycles: {} ({} warp instructions; {} CTAs per SM, limited by {:?}; {} SMs x {} schedulers)",
                c.cycles,
                c.issued,
                c.ctas_per_sm.0,
                c.ctas_per_sm.1,
                c.machine.sms,
                c.machine.schedulers
            );
            Ok(o)
        }),
        r => r,
    };
    let out = match result {
        Ok(o) => o,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    for (region, base, data) in out.global.regions() {
        say!("{region} @ 0x{base:x}: {} bytes", data.len());
        if let Some(dir) = &a.dump {
            let path = dir.join(format!("{region}.bin"));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, data)) {
                errln!("error: cannot write {}: {e}", path.display());
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

fn disasm(args: DisasmArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let bytes = match read_input(&args.input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    match ptx2sass::cubin::disasm(&bytes) {
        Ok((text, warnings)) => {
            for w in &warnings {
                eprintln!("warning: {name}: {w}");
            }
            if let Err(e) = write_output(args.output.as_ref(), text.as_bytes()) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
                eprintln!("error: cannot write output: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {name}: {e}");
            ExitCode::from(1)
        }
    }
}

fn asm(args: AsmArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let text = match read_input(&args.input) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    match ptx2sass::cubin::asm::assemble(&text) {
        Ok(bytes) => match write_output(Some(&args.output), &bytes) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", args.output.display());
                ExitCode::from(1)
            }
        },
        Err(errors) => {
            for e in &errors {
                eprintln!("error: {name}:{e}");
            }
            eprintln!("error: {} error(s) in {name}; no output written", errors.len());
            ExitCode::from(1)
        }
    }
}

/// A launch of `kernel` of a loaded listing, parameters laid out as the listing says
/// (`.b8[N]` byte arrays receive buffers by value).
fn listing_launch(
    p: &ptx2sass::sass::program::Program,
    kernel: &str,
    grid: [u32; 3],
    block: [u32; 3],
    args: &[ptx2sass::exec::ptx::args::Arg],
    max_steps: u64,
) -> Result<ptx2sass::exec::Launch, ptx2sass::exec::ExecError> {
    use ptx2sass::exec::{ExecError, ParamSlot, sim::PARAM_BASE};
    let f = p
        .functions
        .iter()
        .find(|f| f.name == kernel && f.kind == ".entry")
        .ok_or_else(|| ExecError::Launch(format!("no kernel named `{kernel}` in the listing")))?;
    let mut slots = vec![];
    let mut arrays = vec![];
    for (off, ty, name) in &f.params {
        let (elem, n) = ty.split_once('[').unwrap_or((ty, "1]"));
        let bits: u32 = elem.trim_start_matches('.').get(1..).and_then(|b| b.parse().ok()).unwrap_or(8);
        let n: u32 = n.trim_end_matches(']').parse().unwrap_or(1);
        let offset = (*off as usize)
            .checked_sub(PARAM_BASE)
            .ok_or_else(|| ExecError::Launch(format!("parameter `{name}` at 0x{off:x} lies below 0x{PARAM_BASE:x}")))?
            as u32;
        slots.push(ParamSlot { name: name.clone(), offset, size: bits / 8 * n });
        arrays.push(ty.contains('['));
    }
    let total = slots.iter().map(|s| s.offset + s.size).max().unwrap_or(0);
    ptx2sass::exec::ptx::args::launch_with_layout(kernel, (&slots, &arrays, total), grid, block, args, max_steps)
}

fn explore(args: ExploreArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let bytes = match read_input(&args.input) {
        Ok(b) => b,
        Err(e) => {
            errln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    let src = match driver::decode(&bytes) {
        Ok(s) => s,
        Err(d) => {
            let lossy = String::from_utf8_lossy(&bytes);
            err!("{}", SourceFile::new(&name, &lossy).render(&d));
            return ExitCode::from(1);
        }
    };
    let mut opts = driver::Options::default();
    opts.regalloc.max_regs = args.maxrregcount;
    let short = args.input.file_name().map_or(name.clone(), |n| n.to_string_lossy().into_owned());
    match ptx2sass::explore::report(src, &short, &opts) {
        Ok(html) => match write_output(Some(&args.output), html.as_bytes()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                errln!("error: cannot write {}: {e}", args.output.display());
                ExitCode::from(1)
            }
        },
        Err(diags) => {
            err!("{}", SourceFile::new(&name, src).render_all(&diags));
            errln!("error: {name} does not compile; no report written");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Compile(args) => compile(args),
        Command::Check(args) => check(args),
        Command::Run(args) => run(*args),
        Command::Disasm(args) => disasm(args),
        Command::Asm(args) => asm(args),
        Command::Explore(args) => explore(args),
    }
}
