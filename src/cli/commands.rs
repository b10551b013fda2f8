//! `compile`, `check`, `disasm`, `asm` and `explore`: read the input, call the library,
//! print diagnostics, write the output; exit status 0, 1 (bad input) or 2 (usage).

use super::args::*;
use super::io::*;
use ptx2sass::diag::SourceFile;
use ptx2sass::driver::{self, Emit};
use ptx2sass::sass::source_map::{SourceMap, annotated_listing};
use std::process::ExitCode;

pub(crate) fn compile(args: CompileArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let name = if name == "-" { "<stdin>".to_string() } else { name };
    let text = match read_ptx(&args.input, &name) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let src = text.as_str();
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

pub(crate) fn check(args: CheckArgs) -> ExitCode {
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

pub(crate) fn disasm(args: DisasmArgs) -> ExitCode {
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

pub(crate) fn asm(args: AsmArgs) -> ExitCode {
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

pub(crate) fn explore(args: ExploreArgs) -> ExitCode {
    let name = args.input.display().to_string();
    let text = match read_ptx(&args.input, &name) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let src = text.as_str();
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
