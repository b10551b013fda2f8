//! `ptx2sass` command line: wires clap to [`ptx2sass::driver`].
//!
//! Exit status: 0 on success, 1 when the input has errors (diagnostics on stderr, no
//! output file written), 2 for usage errors (clap).

use clap::{Parser, Subcommand};
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

mod cli;

use cli::args::*;
use cli::commands::*;
use cli::run::run;

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
