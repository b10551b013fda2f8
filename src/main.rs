//! `ptx2sass` command line: wires clap to [`ptx2sass::driver`].
//!
//! Exit status: 0 on success, 1 when the input has errors (diagnostics on stderr, no
//! output file written), 2 for usage errors (clap).

use clap::{Parser, Subcommand, ValueEnum};
use ptx2sass::diag::SourceFile;
use ptx2sass::driver::{self, Emit};
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
    Run(RunArgs),
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
    /// Input PTX file.
    input: PathBuf,
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
    /// file:PATH (buffers are passed as pointers).
    #[arg(long = "arg")]
    args: Vec<String>,
    /// Which executor runs the launch.
    #[arg(long, value_enum, default_value = "sim")]
    exec: Executor,
    /// Run both executors and compare all global memory after the launch.
    #[arg(long)]
    compare: bool,
    /// Seed of random buffers and of the simulator's completion order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write each buffer after the launch to DIR/argK.bin.
    #[arg(long)]
    dump: Option<PathBuf>,
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
}

#[derive(clap::Args)]
struct CompileArgs {
    /// Input PTX file (`-` for standard input).
    input: PathBuf,
    /// Output file (`-` or absent for standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Stop after this stage and print it.
    #[arg(long, value_enum, default_value = "sass")]
    emit: EmitArg,
    /// Print per-function statistics (registers, instructions, stack and shared bytes).
    #[arg(short, long)]
    verbose: bool,
    /// Maximum registers per thread (like ptxas's --maxrregcount).
    #[arg(long, default_value_t = 255, value_parser = clap::value_parser!(u32).range(16..=255))]
    maxrregcount: u32,
    /// Run regalloc2's checker and the independent allocation verifier on every
    /// allocation, the reconvergence checker on every lowered function, and the hazard
    /// checker on the scheduled program.
    #[arg(long)]
    verify: bool,
    /// Safe scheduling: wait for every variable-latency result and source read right
    /// after the instruction that produces or reads it.
    #[arg(long)]
    serial: bool,
    /// Keep the lowering's instruction order (no pre-allocation list scheduling).
    #[arg(long)]
    no_reorder: bool,
    /// Reject sm_70+ features that would otherwise be emulated on SPA 5.0 with a warning
    /// (memory-model qualifiers, eviction priorities, cache hints, 256-bit accesses, ...).
    #[arg(long)]
    deny_emulation: bool,
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
            eprintln!("error: cannot write output: {e}");
            std::process::exit(1);
        }
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

/// Writes `text` to `path` atomically (temporary file, then rename), or to stdout.
fn write_output(path: Option<&PathBuf>, text: &str) -> std::io::Result<()> {
    match path {
        None => std::io::stdout().write_all(text.as_bytes()),
        Some(p) if p.as_os_str() == "-" => std::io::stdout().write_all(text.as_bytes()),
        // A device, FIFO or symbolic link (`-o /dev/null`, `-o >(...)`, a link to the real
        // output) is written through: renaming over it would replace it with a file.
        Some(p) if std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_file()) => std::fs::write(p, text),
        // A regular file (or a new one) is replaced whole: a temporary file renamed over
        // it, so a failed write leaves no partial output.
        Some(p) => {
            let tmp = p.with_extension("ptx2sass-tmp");
            std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, p)).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
        }
    }
}

fn compile(args: CompileArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let name = if name == "-" { "<stdin>".to_string() } else { name };
    let bytes = match read_input(&args.input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    let src = match driver::decode(&bytes) {
        Ok(s) => s,
        Err(d) => {
            let lossy = String::from_utf8_lossy(&bytes);
            eprint!("{}", SourceFile::new(&name, &lossy).render(&d));
            return ExitCode::from(1);
        }
    };
    let emit = match args.emit {
        EmitArg::Ast => Emit::Ast,
        EmitArg::Ir => Emit::Ir,
        EmitArg::IrSched => Emit::IrSched,
        EmitArg::IrAlloc => Emit::IrAlloc,
        EmitArg::Dot => Emit::Dot,
        EmitArg::Sass => Emit::Sass,
    };
    let mut opts = driver::Options { emit, ..driver::Options::default() };
    opts.regalloc.max_regs = args.maxrregcount;
    opts.regalloc.verify |= args.verify;
    opts.check_hazards |= args.verify;
    opts.lower.check_reconvergence |= args.verify;
    opts.sched.serial = args.serial;
    opts.sched.reorder = !args.no_reorder;
    opts.lower.deny_emulation = args.deny_emulation;
    let file = SourceFile::new(&name, src);
    match driver::compile(src, &opts) {
        Ok(out) => {
            eprint!("{}", file.render_all(&out.warnings));
            if args.verbose {
                for s in &out.stats {
                    eprintln!("ptx2sass info    : Function properties for {}", s.name);
                    eprintln!(
                        "ptx2sass info    : Used {} registers, {} instructions, {} bytes stack frame, {} bytes spill, {} bytes smem",
                        s.regs, s.instrs, s.frame_bytes, s.spill_bytes, s.shared_bytes
                    );
                    eprintln!("ptx2sass info    : Estimated {} cycles (one pass through the code)", s.cycles);
                }
            }
            if let Err(e) = write_output(args.output.as_ref(), &out.text) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    // The reader stopped early (`| head`): not an error, as for Unix tools.
                    return ExitCode::SUCCESS;
                }
                eprintln!("error: cannot write output: {e}");
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(diags) => {
            eprint!("{}", file.render_all(&diags));
            let n = diags.iter().filter(|d| d.is_error()).count();
            eprintln!("error: {n} error{} in {name}; no output written", if n == 1 { "" } else { "s" });
            ExitCode::from(1)
        }
    }
}

fn check(args: CheckArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let text = match read_input(&args.input) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    let funcs = match ptx2sass::sass::text::parse(&text) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {name}:{e}");
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
                eprintln!("hazard: {name}:{h}");
            }
            eprintln!("error: {} hazard(s) in {name}", hazards.len());
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {name}:{e}");
            ExitCode::from(1)
        }
    }
}

fn run(a: RunArgs) -> ExitCode {
    use ptx2sass::exec::{self, spec};
    let name = a.input.display().to_string();
    let usage = |m: String| {
        eprintln!("error: {m}");
        ExitCode::from(2)
    };
    let (grid, block) = match (spec::dims(&a.grid), spec::dims(&a.block)) {
        (Ok(g), Ok(b)) => (g, b),
        (Err(e), _) | (_, Err(e)) => return usage(e),
    };
    let mut rng = exec::Rng::new(a.seed);
    let mut args = vec![];
    for s in &a.args {
        match spec::arg(s, &mut rng) {
            Ok(x) => args.push(x),
            Err(e) => return usage(format!("--arg {e}")),
        }
    }
    let bytes = match read_input(&a.input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return ExitCode::from(1);
        }
    };
    let src = String::from_utf8_lossy(&bytes).into_owned();
    let file = SourceFile::new(&name, &src);
    let module = match ptx2sass::ptx::parse(&src) {
        Ok((m, _)) => m,
        Err(d) => {
            eprint!("{}", file.render_all(&d));
            return ExitCode::from(1);
        }
    };
    let launch = match exec::ptx::args::launch(&module, &a.kernel, grid, block, &args, 50_000_000) {
        Ok(l) => exec::Launch { seed: a.seed, ..l },
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let compiled = || driver::compile(&src, &driver::Options::default()).map_err(|d| file.render_all(&d));
    let result = if a.compare {
        compiled().and_then(|out| {
            let program = out.program.expect("SASS output has a program");
            let (want, got, d) = exec::compare(&module, &program, &launch)?;
            for x in &d {
                eprintln!(
                    "difference: {} at byte {}: interpreter {:02x?}, simulator {:02x?}",
                    x.region, x.offset, x.left, x.right
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
        exec::ptx::run(&module, &launch).map_err(|e| format!("interpreter: {e}"))
    } else {
        compiled().and_then(|out| {
            let program = out.program.expect("SASS output has a program");
            exec::sim::run(&program, &launch).map_err(|e| format!("simulator: {e}"))
        })
    };
    let out = match result {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(1);
        }
    };
    for (region, base, data) in out.global.regions() {
        say!("{region} @ 0x{base:x}: {} bytes", data.len());
        if let Some(dir) = &a.dump {
            let path = dir.join(format!("{region}.bin"));
            if let Err(e) = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, data)) {
                eprintln!("error: cannot write {}: {e}", path.display());
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Compile(args) => compile(args),
        Command::Check(args) => check(args),
        Command::Run(args) => run(args),
    }
}
