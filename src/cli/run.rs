//! `run`: one kernel launch on the PTX interpreter, the SPA 5.0 simulator, or both
//! compared; the launch is described by `--grid/--block/--arg/--init/--texture/--surface`.

use super::args::*;
use super::io::*;
use ptx2sass::diag::SourceFile;
use ptx2sass::driver;

use std::process::ExitCode;

pub(crate) fn run(a: RunArgs) -> ExitCode {
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
    if a.samplers.len() > exec::sampler::MAX_SAMPLERS {
        return usage(format!("--sampler: at most {} samplers", exec::sampler::MAX_SAMPLERS));
    }
    for (k, s) in a.samplers.iter().enumerate() {
        // k < 4095: the handle is the sampler index 1..=4095 (`exec::sampler`).
        match exec::sampler::parse(s, k as u32 + 1) {
            Ok(x) => images.push((x, vec![])),
            Err(e) => return spec_error("--sampler", e),
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
        let Some(m) = &module else {
            return usage("--texture, --surface and --sampler need the PTX input".into());
        };
        let mut at = vec![];
        for (img, _) in &images {
            match exec::image::param_index(m, &a.kernel, &img.param) {
                Some(k) => at.push((k, img.handle)),
                // A `.samplerref`: no parameter; the executors find it by name.
                None if img.sampler => {
                    if !m.samplers.iter().any(|s| s.name == img.param) {
                        return usage(format!(
                            "--sampler: `{}` is not a parameter of kernel `{}` nor a `.samplerref`",
                            img.param, a.kernel
                        ));
                    }
                }
                // A `.texref`/`.surfref`: no parameter; the executors find the image by name.
                None => match exec::image::ref_kind(m, &img.param) {
                    Some(surface) if surface == img.surface => {}
                    Some(surface) => {
                        let (is, flag) = if surface { (".surfref", "--surface") } else { (".texref", "--texture") };
                        return usage(format!("`{}` is a `{is}`: bind it with {flag}", img.param));
                    }
                    None => {
                        return usage(format!(
                            "`{}` is not a parameter of kernel `{}` nor a `.texref`/`.surfref`",
                            img.param, a.kernel
                        ));
                    }
                },
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

/// A launch of `kernel` of a loaded listing, parameters laid out as the listing says
/// (`.b8[N]` byte arrays receive buffers by value).
pub(crate) fn listing_launch(
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
