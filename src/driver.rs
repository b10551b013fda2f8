//! The pipeline as one function: PTX text → the representation the user asked for.
//!
//! `ptx::parse` (AST) → `lower::lower` (SSA IR) → `regalloc::allocate` (IR on physical
//! registers) → `sched::schedule` (SASS with control fields). Each stage's output can be
//! printed (`--emit ast|ir|ir-alloc|dot|sass`), and timed (`--time-passes`,
//! [`crate::timing`]).

use crate::diag::{Diag, line_col};
use crate::ptx::ast::Span;
use crate::sass::program::Program;
use crate::timing::PassTimer;
use crate::{ir, lower, ptx, regalloc, sass, sched};
use rayon::prelude::*;
use std::collections::HashMap;

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
    /// An sm_50 cubin (ELF) of the SASS, in [`Output::binary`] ([`crate::cubin`]).
    Cubin,
}

/// Compilation options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stage to print.
    pub emit: Emit,
    /// Front-end options (`--allow-newer-target`).
    pub front: ptx::target::Options,
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
    /// Encode the scheduled program ([`crate::sass::encode`]) even when no cubin is
    /// asked for, and fail with an internal error if an instruction has no encoding. On
    /// by default in debug builds (every program the test suite compiles is encoded);
    /// `--verify` turns it on.
    pub check_encoding: bool,
    /// Compile for separate compilation (`compile -c`, ptxas's `-c`): calls between
    /// functions become `JCAL` with relocations ([`Program::make_relocatable`]), register
    /// counts stay per function, and the cubin is relocatable ([`crate::cubin::rel`]).
    pub relocatable: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            emit: Emit::default(),
            front: ptx::target::Options::default(),
            lower: lower::Options::default(),
            regalloc: regalloc::Options::default(),
            check_hazards: cfg!(debug_assertions),
            sched: sched::Options::default(),
            check_encoding: cfg!(debug_assertions),
            relocatable: false,
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
    /// The scheduled program, when `emit` is `Sass` or `Cubin`.
    pub program: Option<Program>,
    /// The cubin, when `emit` is `Cubin`.
    pub binary: Option<Vec<u8>>,
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

/// With verification on (`--verify`, debug builds), checks that `stage` kept every carry
/// flag reader reading its own writer's value ([`ir::cc::verify`]).
fn cc_links_kept(irm: &ir::Module, opts: &Options, stage: &str, allocated: bool) -> Result<(), Vec<Diag>> {
    if !opts.regalloc.verify {
        return Ok(());
    }
    let errors: Vec<Diag> = irm
        .functions
        .iter()
        .filter_map(|f| if allocated { ir::cc::verify_allocated(f) } else { ir::cc::verify(f) }.err())
        .map(|e| Diag::error(Span::default(), format!("internal error after {stage}: {e}")))
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// The `.maxnreg` of every kernel that has one (PTX ISA 11.4 "Performance-Tuning
/// Directives"), with where the kernel is named, by kernel name: built once per module
/// (a scan of the module per function was quadratic in the number of functions).
fn maxnregs(module: &ptx::ast::Module) -> HashMap<&str, (u32, Span)> {
    let mut out = HashMap::new();
    for i in &module.items {
        if let ptx::ast::Item::Function(f) = i
            && f.body.is_some()
            && let Some(n) = f.tuning.iter().find_map(|t| match t {
                ptx::ast::Tuning::Maxnreg(n) => Some(*n),
                _ => None,
            })
        {
            out.entry(f.name.name.as_str()).or_insert((n, f.name.span));
        }
    }
    out
}

/// Runs the pipeline on PTX source text.
pub fn compile(src: &str, opts: &Options) -> Result<Output, Vec<Diag>> {
    compile_timed(src, opts, &mut PassTimer::new(false))
}

/// [`compile`], timing each stage with `timer` (`--time-passes`). Functions are compiled
/// in parallel (rayon's global pool, `--threads`); the output does not depend on the
/// number of threads.
pub fn compile_timed(src: &str, opts: &Options, timer: &mut PassTimer) -> Result<Output, Vec<Diag>> {
    let (module, mut warnings) = timer.time("parse", || ptx::parse_with(src, &opts.front))?;
    if opts.emit == Emit::Ast {
        return Ok(Output { text: module.to_string(), stats: vec![], warnings, program: None, binary: None });
    }
    let mut staged = timer.time("lower", || lower::build(&module, &opts.lower));
    timer.time("clean-up", || lower::clean_up(&mut staged, &opts.lower));
    timer.time("reconverge", || lower::reconverge(&mut staged, &opts.lower));
    let (mut irm, w) = lower::finish(staged)?;
    warnings.extend(w);
    match opts.emit {
        Emit::Ir => {
            return Ok(Output { text: irm.to_string(), stats: vec![], warnings, program: None, binary: None });
        }
        Emit::Dot => {
            return Ok(Output { text: ir::dot::to_dot(&irm), stats: vec![], warnings, program: None, binary: None });
        }
        _ => {}
    }
    // Whole-program output keeps only what the kernels reach, as ptxas 11.8 without `-c`
    // does (`lower::opt::unused`).
    if !opts.relocatable {
        lower::opt::unused::drop_unreached_functions(&mut irm);
    }
    // `.maxnreg N` bounds a kernel's registers like `--maxrregcount` (the smaller applies);
    // below 16 it is raised to 16 with a warning, as ptxas 11.8 does ("adjusting per thread
    // register count of 8 to lower bound of 16").
    let maxnreg = maxnregs(&module);
    let budgets: Vec<regalloc::Options> = irm
        .functions
        .iter()
        .map(|f| {
            let mut o = opts.regalloc.clone();
            if let Some(&(n, span)) = maxnreg.get(f.name.as_str()) {
                if n < 16 {
                    warnings.push(
                        Diag::warning(span, format!("`.maxnreg {n}` of `{}` raised to the lower bound of 16", f.name))
                            .label("fewer than 16 registers")
                            .note("as ptxas does: \"adjusting per thread register count ... to lower bound of 16\""),
                    );
                }
                o.max_regs = o.max_regs.min(n.max(16));
            }
            o
        })
        .collect();
    if opts.sched.reorder {
        timer.time("list-sched", || {
            irm.functions.par_iter_mut().zip(budgets.par_iter()).for_each(|(f, b)| sched::list::reorder(f, b.max_regs))
        });
        cc_links_kept(&irm, opts, "list scheduling", false)?;
    }
    if opts.emit == Emit::IrSched {
        return Ok(Output { text: irm.to_string(), stats: vec![], warnings, program: None, binary: None });
    }
    let errors: Vec<Diag> = timer.time("regalloc", || {
        irm.functions
            .par_iter_mut()
            .zip(budgets.par_iter())
            .filter_map(|(f, b)| {
                regalloc::allocate(f, b).err().map(|e| match e {
                    // A budget ptx2sass cannot allocate in: the user's to change.
                    regalloc::Error::Budget { .. } => {
                        Diag::error(Span::default(), format!("register allocation of `{}`: {e}", f.name))
                    }
                    _ => Diag::error(
                        Span::default(),
                        format!("internal error in register allocation of `{}`: {e}", f.name),
                    ),
                })
            })
            .collect()
    });
    if !errors.is_empty() {
        return Err(errors);
    }
    if opts.sched.reorder {
        // Again on physical registers, where spill code now exists (reloads hoisted).
        timer.time("list-sched-post", || {
            irm.functions.par_iter_mut().zip(budgets.par_iter()).for_each(|(f, b)| sched::list::reorder(f, b.max_regs))
        });
        cc_links_kept(&irm, opts, "list scheduling after allocation", true)?;
    }
    if opts.emit == Emit::IrAlloc {
        return Ok(Output { text: irm.to_string(), stats: vec![], warnings, program: None, binary: None });
    }
    let mut program = timer.time("annotate", || Program {
        functions: irm
            .functions
            .par_iter()
            .map(|f| {
                let mut s = sched::schedule(f, &opts.sched);
                // The frame as reported: with the stack argument area of its calls.
                s.frame_bytes = sass::abi::frame_with_outgoing(s.frame_bytes, f.calls.iter().map(|c| c.stack_bytes));
                s
            })
            .collect(),
        const_bank: irm.const_bank.clone(),
        const_vars: irm.const_vars.clone(),
        data: irm.data.clone(),
        refs: module
            .refs
            .iter()
            .map(|r| crate::cubin::ModuleRef { name: r.name.name.clone(), surface: r.surface })
            .collect(),
    });
    // Negations on operands whose encoding has no negate bit move to one that has.
    for f in program.functions.iter_mut() {
        for s in f.code.iter_mut() {
            sass::legal::encodable(&mut s.instr);
        }
    }
    if opts.relocatable {
        if !program.data.symbols.is_empty() || !program.const_bank.is_empty() {
            return Err(vec![
                Diag::error(
                    Span::default(),
                    "`-c` (relocatable output) of a module with `.global` or `.const` variables is not supported yet",
                )
                .note("ptxas -c writes module data differently (`.nv.global` of type SHT_CUDA_GLOBAL); docs/cubin.md"),
            ]);
        }
        program.make_relocatable();
    } else {
        program.propagate_register_counts();
    }
    if opts.lower.check_reconvergence {
        for f in &program.functions {
            lower::cfg::check::check_code(f).map_err(|e| {
                vec![Diag::error(Span::default(), format!("internal error: reconvergence in the scheduled code: {e}"))]
            })?;
        }
    }
    let text = timer.time("print", || program.to_string());
    // The printed listing read back: what the hazard checker and the estimate see.
    let listing = timer.time("read-back", || sass::text::parse(&text)).map_err(|e| {
        vec![Diag::error(Span::default(), format!("internal error: the SASS listing does not read back: {e}"))]
    })?;
    if opts.check_hazards {
        let hazards = timer
            .time("hazard-check", || sched::check::check(&listing))
            .map_err(|e| vec![Diag::error(Span::default(), format!("internal error in the hazard checker: {e}"))])?;
        if !hazards.is_empty() {
            return Err(hazards
                .iter()
                .map(|h| Diag::error(Span::default(), format!("internal error: scheduling hazard: {h}")))
                .collect());
        }
    }
    let cycles: Vec<u64> = timer.time("estimate", || listing.par_iter().map(sched::estimate::cycles).collect());
    let stats = program
        .functions
        .iter()
        .zip(cycles)
        .map(|(f, cycles)| FunctionStats {
            cycles,
            name: f.name.clone(),
            regs: f.regs,
            instrs: f.instr_count(),
            frame_bytes: f.frame_bytes,
            spill_bytes: f.spill_bytes,
            shared_bytes: f.shared_bytes,
        })
        .collect();
    if opts.emit == Emit::Cubin
        && opts.relocatable
        && let Some(e) = program.functions.iter().find_map(crate::cubin::texref_error)
    {
        return Err(vec![Diag::error(Span::default(), e.message)]);
    }
    if opts.emit == Emit::Cubin
        && let Some(e) = program.functions.iter().find_map(crate::cubin::sampler_error)
    {
        return Err(vec![Diag::error(Span::default(), e.message)]);
    }
    let binary = if opts.emit == Emit::Cubin || opts.check_encoding {
        let bytes = if opts.relocatable {
            crate::cubin::rel::from_program(&program, &module.target, &crate::cubin::rel::prototypes(&module))
        } else {
            crate::cubin::from_program(&program, &module.target)
        };
        Some(bytes.map_err(|es| {
            es.iter()
                .map(|e| Diag::error(Span::default(), format!("internal error: cannot encode the SASS listing: {e}")))
                .collect::<Vec<_>>()
        })?)
    } else {
        None
    };
    let binary = if opts.emit == Emit::Cubin { binary } else { None };
    Ok(Output { text, stats, warnings, program: Some(program), binary })
}
