//! Differential testing: every sample kernel runs on the PTX reference interpreter
//! (`exec::ptx`, PTX ISA semantics, sharing nothing with the compiler) and on the SPA 5.0
//! simulator (`exec::sim`, running our SASS and enforcing its scheduling annotations), with
//! each of its launch shapes (`launches::sample_shapes`) on several random inputs; all
//! global memory after the launch must match bit for bit.
//! Samples with `.approx` instructions (`nbody`, `black_scholes`, `float_math`) compare
//! their float output buffers within a tolerance (`launches::sample_tolerance`), the
//! others bit for bit.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{self, Launch};
use ptx2sass::ptx::ast::Module;
use ptx2sass::sass::program::Program;

/// Input sets per sample (each a different random fill of every buffer) and simulator
/// completion-order seeds per input.
const INPUTS: u64 = 3;

fn module(name: &str) -> Module {
    let path = format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).unwrap();
    ptx2sass::ptx::parse(&src).map(|(m, _)| m).unwrap_or_else(|_| panic!("{name} parses"))
}

/// Runs both executors; returns a description of the first difference, if any (beyond
/// the sample's tolerance, `tol`).
fn compare(m: &Module, p: &Program, l: &Launch, tol: Option<(&[Elem], f64)>) -> Result<(), String> {
    let (want, got, d) = exec::compare(m, p, l)?;
    if d.is_empty() {
        return Ok(());
    }
    let Some((elems, t)) = tol else {
        return Err(format!("{} difference(s), first: {:?}", d.len(), d[0]));
    };
    let (w, g): (Vec<_>, Vec<_>) = (want.global.regions().collect(), got.global.regions().collect());
    assert_eq!(w.len(), elems.len(), "one comparison per buffer");
    for (k, (((_, base, wb), (_, _, gb)), e)) in w.iter().zip(&g).zip(elems).enumerate() {
        let size = match e {
            Elem::Exact if wb != gb => return Err(format!("buffer {k} ({base:#x}) differs")),
            Elem::Exact => continue,
            Elem::F32 => 4,
            Elem::F64 => 8,
        };
        for (i, (x, y)) in wb.chunks(size).zip(gb.chunks(size)).enumerate() {
            let val = |c: &[u8]| {
                if size == 4 {
                    f32::from_le_bytes(c.try_into().unwrap()) as f64
                } else {
                    f64::from_le_bytes(c.try_into().unwrap())
                }
            };
            let (a, b) = (val(x), val(y));
            let ok = if a.is_nan() || b.is_nan() {
                a.is_nan() && b.is_nan()
            } else {
                a == b || (a - b).abs() <= t * (a.abs() + 1.0)
            };
            if !ok {
                return Err(format!("buffer {k} element {i}: interpreter {a:e}, simulator {b:e} (tolerance {t})"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_sample_matches_the_interpreter() {
    let mut compared = 0;
    let mut failures = vec![];
    for name in SAMPLES {
        let m = module(name);
        let shapes = sample_shapes(name);
        assert!(shapes.len() >= 2, "{name}: at least two launch shapes");
        for sh in shapes {
            for input in 0..INPUTS {
                let mut rng = Rng::new(0x5eed + input * 7919);
                let (p, l, _) = sample_launch_shape(name, sh, &mut rng);
                let l = Launch { seed: input, ..l };
                // The launch must change memory, or the comparison proves nothing.
                let before = l.global.clone();
                match compare(&m, &p, &l, sample_tolerance(name)) {
                    Ok(()) => {
                        let after = exec::ptx::run(&m, &l).unwrap().global;
                        assert!(!before.diff(&after).is_empty(), "{name} {sh:?}: the launch writes nothing");
                    }
                    Err(e) => failures.push(format!("{name} {sh:?} input {input}: {e}")),
                }
                compared += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let shapes: usize = SAMPLES.iter().map(|n| sample_shapes(n).len()).sum();
    assert_eq!(compared, shapes * INPUTS as usize);
    eprintln!("{} kernels, {shapes} kernel launch shapes, {compared} launches compared", SAMPLES.len());
}

/// Register budgets (`--maxrregcount`) under which every sample runs again: allocation
/// must spill (before regalloc2 by `regalloc::spill`, and by regalloc2), and the spilled
/// code must compute the same results.
const TIGHT_BUDGETS: [u32; 2] = [16, 24];

#[test]
fn every_sample_matches_the_interpreter_under_tight_register_budgets() {
    let mut failures = vec![];
    let mut spilled = 0;
    for name in SAMPLES {
        let m = module(name);
        let path = format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(path).unwrap();
        let sh = sample_shapes(name)[0];
        let mut rng = Rng::new(0x5eed);
        let (_, l, _) = sample_launch_shape(name, sh, &mut rng);
        for budget in TIGHT_BUDGETS {
            let mut opts = ptx2sass::driver::Options::default();
            opts.regalloc.max_regs = budget;
            let out = ptx2sass::driver::compile(&src, &opts).unwrap_or_else(|_| panic!("{name} compiles in {budget}"));
            assert!(out.stats.iter().all(|s| s.regs <= budget), "{name}: more than {budget} registers");
            spilled += out.stats.iter().filter(|s| s.spill_bytes > 0).count();
            if let Err(e) = compare(&m, &out.program.expect("a program"), &l, sample_tolerance(name)) {
                failures.push(format!("{name} {sh:?} in {budget} registers: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The budgets are tight enough to make many kernels spill.
    assert!(spilled >= 12, "only {spilled} compilations spilled");
}
