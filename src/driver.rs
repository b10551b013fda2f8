//! The pipeline as one function: PTX text → the representation the user asked for.
//!
//! `ptx::parse` (AST) → `lower::lower` (SSA IR) → `regalloc::allocate` (IR on physical
//! registers) → `sched::schedule` (SASS with control fields). Each stage's output can be
//! printed (`--emit ast|ir|ir-alloc|dot|sass`).

use crate::diag::{Diag, line_col};
use crate::ptx::ast::Span;
use crate::sass::program::Program;
use crate::{ir, lower, ptx, regalloc, sass, sched};

/// Which representation to stop at and print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Emit {
    /// The checked syntax tree, printed back as PTX.
    Ast,
    /// The SSA IR after lowering and clean-up, on virtual registers.
    Ir,
    /// The SSA IR after the pre-allocation list scheduler ([`sched::list`]).
    IrSched,
    /// The IR after register allocation, on physical registers.
    IrAlloc,
    /// The IR's control-flow graphs in Graphviz `dot` syntax.
    Dot,
    /// SPA 5.0 assembly with scheduling control fields.
    #[default]
    Sass,
}

/// Compilation options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stage to print.
    pub emit: Emit,
    /// Lowering options.
    pub lower: lower::Options,
    /// Register-allocation options.
    pub regalloc: regalloc::Options,
    /// Run the hazard checker ([`sched::check`]) on the scheduled program and fail with an
    /// internal error if it finds one. On by default in debug builds (so every program
    /// compiled in the test suite is checked); the CLI's `--verify` turns it on.
    pub check_hazards: bool,
    /// Schedule conservatively (`--serial`, see [`sched::Options`]).
    pub sched: sched::Options,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emit: Emit::default(),
            lower: lower::Options::default(),
            regalloc: regalloc::Options::default(),
            check_hazards: cfg!(debug_assertions),
            sched: sched::Options::default(),
        }
    }
}

/// Per-function statistics, like `ptxas -v`.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionStats {
    /// Function name.
    pub name: String,
    /// Registers used.
    pub regs: u32,
    /// Instructions (without NOP and the final self-branch).
    pub instrs: usize,
    /// Stack frame bytes.
    pub frame_bytes: u32,
    /// Spill bytes.
    pub spill_bytes: u32,
    /// Estimated cycles ([`sched::estimate`]).
    pub cycles: u64,
    /// Shared memory bytes.
    pub shared_bytes: u32,
}

/// A successful compilation.
#[derive(Clone, Debug)]
pub struct Output {
    /// The requested representation, as text.
    pub text: String,
    /// Statistics (empty unless the pipeline reached scheduling).
    pub stats: Vec<FunctionStats>,
    /// Warnings.
    pub warnings: Vec<Diag>,
    /// The scheduled program, when `emit` is `Sass`.
    pub program: Option<Program>,
}

/// Decodes file bytes as UTF-8, or returns a diagnostic at the first invalid byte.
pub fn decode(bytes: &[u8]) -> Result<&str, Diag> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let lossy = String::from_utf8_lossy(bytes);
        let (line, col) = line_col(&lossy, at);
        Diag::error(
            Span::new(at, at + 1),
            format!("the file is not valid UTF-8: byte 0x{:02x} at line {line}, column {col}", bytes[at]),
        )
        .label("not UTF-8")
        .note("PTX is ASCII text (PTX ISA 4.1)")
    })
}

/// Runs the pipeline on PTX source text.
pub fn compile(src: &str, opts: &Options) -> Result<Output, Vec<Diag>> {
    let (module, mut warnings) = ptx::parse(src)?;
    if opts.emit == Emit::Ast {
        return Ok(Output { text: module.to_string(), stats: vec![], warnings, program: None });
    }
    let (mut irm, w) = lower::lower(&module, &opts.lower)?;
    warnings.extend(w);
    match opts.emit {
        Emit::Ir => {
            return Ok(Output { text: irm.to_string(), stats: vec![], warnings, program: None });
        }
        Emit::Dot => {
            return Ok(Output { text: ir::dot::to_dot(&irm), stats: vec![], warnings, program: None });
        }
        _ => {}
    }
    if opts.sched.reorder {
        for f in irm.functions.iter_mut() {
            sched::list::reorder(f, opts.regalloc.max_regs);
        }
    }
    if opts.emit == Emit::IrSched {
        return Ok(Output { text: irm.to_string(), stats: vec![], warnings, program: None });
    }
    let mut errors = vec![];
    for f in irm.functions.iter_mut() {
        if let Err(e) = regalloc::allocate(f, &opts.regalloc) {
            errors.push(Diag::error(
                Span::default(),
                format!("internal error in register allocation of `{}`: {e}", f.name),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if opts.sched.reorder {
        // Again on physical registers, where spill code now exists (reloads hoisted).
        for f in irm.functions.iter_mut() {
            sched::list::reorder(f, opts.regalloc.max_regs);
        }
    }
    if opts.emit == Emit::IrAlloc {
        return Ok(Output { text: irm.to_string(), stats: vec![], warnings, program: None });
    }
    let program = Program {
        functions: irm.functions.iter().map(|f| sched::schedule(f, &opts.sched)).collect(),
        const_bank: irm.const_bank.clone(),
    };
    if opts.lower.check_reconvergence {
        for f in &program.functions {
            lower::cfg::check::check_code(f).map_err(|e| {
                vec![Diag::error(Span::default(), format!("internal error: reconvergence in the scheduled code: {e}"))]
            })?;
        }
    }
    let text = program.to_string();
    // The printed listing read back: what the hazard checker and the estimate see.
    let listing = sass::text::parse(&text).map_err(|e| {
        vec![Diag::error(Span::default(), format!("internal error: the SASS listing does not read back: {e}"))]
    })?;
    if opts.check_hazards {
        let hazards = sched::check::check(&listing)
            .map_err(|e| vec![Diag::error(Span::default(), format!("internal error in the hazard checker: {e}"))])?;
        if !hazards.is_empty() {
            return Err(hazards
                .iter()
                .map(|h| Diag::error(Span::default(), format!("internal error: scheduling hazard: {h}")))
                .collect());
        }
    }
    let stats = program
        .functions
        .iter()
        .zip(&listing)
        .map(|(f, l)| FunctionStats {
            cycles: sched::estimate::cycles(l),
            name: f.name.clone(),
            regs: f.regs,
            instrs: f.instr_count(),
            frame_bytes: f.frame_bytes,
            spill_bytes: f.spill_bytes,
            shared_bytes: f.shared_bytes,
        })
        .collect();
    Ok(Output { text, stats, warnings, program: Some(program) })
}
