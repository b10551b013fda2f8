//! The simulator validated on code it did not compile (issue 16): ptxas 11.8 compiles
//! every sample, the simulator runs ptxas's SASS (loaded from `nvdisasm -hex`, control
//! fields enforced) and the PTX interpreter runs the PTX, on every launch shape of the
//! sample; all global memory must agree (within the sample's tolerance for `.approx`
//! results). A disagreement is a simulator bug until shown otherwise: the simulator and
//! the compiler could share a misreading of an instruction, ptxas and the interpreter
//! cannot. Skipped, with a message, when the NVIDIA tools are absent.

#[path = "common/launches.rs"]
mod launches;
#[path = "common/nvidia.rs"]
mod nvidia;
#[path = "common/ptxas.rs"]
mod ptxas;

use launches::*;
use ptx2sass::exec::{self, Launch, Memory, MufuModel};
use ptx2sass::sass::listing;

fn source(name: &str) -> String {
    std::fs::read_to_string(format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The first difference between the interpreter's memory `want` and the simulator's `got`
/// beyond the sample's tolerance `tol`, if any.
fn difference(want: &Memory, got: &Memory, tol: Option<(&[Elem], f64)>) -> Option<String> {
    let d = exec::differences(want, got);
    if d.is_empty() {
        return None;
    }
    let Some((elems, t)) = tol else {
        return Some(format!("{} difference(s), first {:?}", d.len(), d[0]));
    };
    for (k, (((_, base, wb), (_, _, gb)), e)) in want.regions().zip(got.regions()).zip(elems).enumerate() {
        let size = match e {
            Elem::Exact if wb != gb => return Some(format!("buffer {k} ({base:#x}) differs")),
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
            let ok =
                if a.is_nan() || b.is_nan() { a.is_nan() && b.is_nan() } else { (a - b).abs() <= t * (a.abs() + 1.0) };
            if !ok {
                return Some(format!("buffer {k} element {i}: interpreter {a:e}, simulator {b:e}"));
            }
        }
    }
    None
}

#[test]
fn ptxas_code_for_every_sample_matches_the_interpreter() {
    let (mut launched, mut instrs, mut failures) = (0, 0, vec![]);
    for name in SAMPLES {
        let src = source(name);
        let ours = sample(name);
        let theirs = match ptxas::program(&src, &ours) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        instrs += theirs.functions.iter().map(|f| f.code.len()).sum::<usize>();
        let (module, _) = ptx2sass::ptx::parse(&src).unwrap();
        for (k, sh) in sample_shapes(name).into_iter().enumerate() {
            let mut rng = Rng::new(0x5eed + k as u64);
            let (_, l, _) = sample_launch_shape(name, sh, &mut rng);
            // ptxas's IEEE sequences need correctly rounded MUFU estimates (`MufuModel`).
            let l = Launch { seed: k as u64 + 1, mufu: MufuModel::Nearest, ..l };
            let want = exec::ptx::run(&module, &l).unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
            match exec::sim::run(&theirs, &l) {
                Ok(got) => {
                    if let Some(d) = difference(&want.global, &got.global, sample_tolerance(name)) {
                        failures.push(format!("{name} {sh:?}: {d}"));
                    }
                }
                Err(e) => failures.push(format!("{name} {sh:?}: simulator on ptxas's code: {e}")),
            }
            launched += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {launched} launches:\n{}", failures.len(), failures.join("\n"));
    assert!(instrs > 5000, "only {instrs} ptxas instructions loaded");
    eprintln!("{} samples, {launched} launches of ptxas's code ({instrs} instructions) agree", SAMPLES.len());
}

/// The launch facts read from nvdisasm's data sections alone (no PTX) agree with the PTX:
/// parameter offsets and sizes (`EIATTR_KPARAM_INFO`) and static shared memory
/// (`.nv.shared.K`, which ptx2sass lays out as ptxas does).
#[test]
fn listing_facts_match_the_ptx() {
    for name in SAMPLES {
        let ours = sample(name);
        let text = match ptxas::listing(&source(name)) {
            Ok(t) => t,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        let theirs = listing::load(&text, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        for f in ours.functions.iter().filter(|f| f.kind == ".entry") {
            let t = theirs.functions.iter().find(|t| t.name == f.name).unwrap_or_else(|| panic!("{name}: {}", f.name));
            assert_eq!(t.kind, ".entry", "{name}: {}", f.name);
            assert_eq!(t.shared_bytes, f.shared_bytes, "{name}: {} shared bytes", f.name);
            let size = |ty: &str| -> u32 {
                let (elem, n) = ty.split_once('[').unwrap_or((ty, "1]"));
                elem.trim_start_matches('.')[1..].parse::<u32>().unwrap() / 8
                    * n.trim_end_matches(']').parse::<u32>().unwrap()
            };
            let shape = |p: &[(u32, String, String)]| p.iter().map(|(o, ty, _)| (*o, size(ty))).collect::<Vec<_>>();
            assert_eq!(shape(&t.params), shape(&f.params), "{name}: {} parameters", f.name);
            assert!(t.regs <= 255 && t.regs > 0, "{name}: registers");
        }
    }
}

/// ptxas 11.8's IEEE `rcp.rn.f32` refines a `MUFU.RCP` estimate with one FFMA step that
/// needs the estimate correctly rounded: with an estimate 1 ulp off (inside the PTX bound
/// of `rcp.approx.f32`, the simulator's default `MufuModel::Perturbed`), `rcp.rn.f32` of
/// `0x3f7fffff` or of the smallest normal comes out one ulp off under some seed. The
/// simulator therefore runs ptxas's code with `MufuModel::Nearest` (`run --sass`
/// default); this test fails if it is `Perturbed`.
#[test]
fn ptxas_ieee_reciprocal_needs_correctly_rounded_estimates() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
        .visible .entry k(.param .u64 p)\n{\n.reg .b32 %f<3>;\n.reg .b32 %r<2>;\n.reg .b64 %a<4>;\n\
        ld.param.u64 %a1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %a2, %r1, 4;\nadd.s64 %a3, %a1, %a2;\n\
        ld.global.f32 %f1, [%a3];\nrcp.rn.f32 %f2, %f1;\nst.global.f32 [%a3], %f2;\nret;\n}\n";
    let ours = compile(src);
    let theirs = match ptxas::program(src, &ours) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let (module, _) = ptx2sass::ptx::parse(src).unwrap();
    let operands: Vec<u8> = [0x3f7f_ffffu32, 0x0080_0000, 0x3f80_0001, 0x4040_0000]
        .iter()
        .cycle()
        .take(32)
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let (mut perturbed_differs, mut runs) = (false, 0);
    for seed in 0..16 {
        let mut s = Setup::new();
        let buf = s.buf(operands.clone());
        let l = Launch { seed, ..s.launch(&ours, "k", [1, 1, 1], [32, 1, 1], &[Val::I(buf)]) };
        let want = exec::ptx::run(&module, &l).unwrap();
        let nearest = exec::sim::run(&theirs, &Launch { mufu: MufuModel::Nearest, ..l.clone() }).unwrap();
        assert!(want.global.diff(&nearest.global).is_empty(), "seed {seed}: ptxas's rcp.rn.f32 with exact MUFU.RCP");
        let perturbed = exec::sim::run(&theirs, &Launch { mufu: MufuModel::Perturbed, ..l }).unwrap();
        perturbed_differs |= !want.global.diff(&perturbed.global).is_empty();
        runs += 1;
    }
    assert!(perturbed_differs, "{runs} seeds: a 1-ulp MUFU.RCP never changed ptxas's rcp.rn.f32");
}

/// The race of issue 16 (`scripts/compare-sim-cycles.sh`; ignored by default: it runs
/// every sample launch twice through the cycle model): per sample kernel and launch, the
/// simulated cycles of ptx2sass's code and of ptxas 11.8's code on the same inputs
/// (`exec::sim::cycles`), their ratio, totals and the geometric mean; and whether
/// ptxas's code is hazard-free under `ptx2sass check`. Prints a Markdown table.
#[test]
#[ignore]
fn race_against_ptxas() {
    let mut rows = vec![];
    let (mut total_ours, mut total_theirs, mut log_sum) = (0u64, 0u64, 0f64);
    let mut checks = vec![];
    for name in SAMPLES {
        let src = source(name);
        let ours = sample(name);
        let text = match ptxas::listing(&src) {
            Ok(t) => t,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        let theirs = listing::load(&text, Some(&ours)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let funcs = ptx2sass::sass::text::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let verdict = match ptx2sass::sched::check::check(&funcs) {
            Ok(h) if h.is_empty() => "hazard-free".to_string(),
            Ok(h) => format!("{} hazard(s): {}", h.len(), h[0]),
            Err(e) => format!("not checked: {e}"),
        };
        checks.push(format!("| {name} | {verdict} |"));
        for (k, sh) in sample_shapes(name).into_iter().enumerate() {
            let mut rng = Rng::new(0x5eed + k as u64);
            let (_, l, _) = sample_launch_shape(name, sh, &mut rng);
            let l = Launch { seed: k as u64 + 1, mufu: MufuModel::Nearest, ..l };
            let (_, a) = exec::sim::run_cycles(&ours, &l).unwrap_or_else(|e| panic!("{name} ours: {e}"));
            let (_, b) = exec::sim::run_cycles(&theirs, &l).unwrap_or_else(|e| panic!("{name} ptxas: {e}"));
            let ratio = a.cycles as f64 / b.cycles as f64;
            total_ours += a.cycles;
            total_theirs += b.cycles;
            log_sum += ratio.ln();
            rows.push((
                ratio,
                format!(
                    "| {name} | {} | {:?}x{:?} | {} | {} | {ratio:.3} | {} | {} |",
                    l.kernel, sh.grid, sh.block, a.cycles, b.cycles, a.issued, b.issued
                ),
            ));
        }
    }
    println!("| sample | kernel | grid x block | ours | ptxas | ours/ptxas | our warp instrs | ptxas's |");
    println!("|---|---|---|---:|---:|---:|---:|---:|");
    for (_, r) in &rows {
        println!("{r}");
    }
    let geomean = (log_sum / rows.len() as f64).exp();
    println!(
        "| **total** ({} launches) | | | {total_ours} | {total_theirs} | {:.3} | | |",
        rows.len(),
        total_ours as f64 / total_theirs as f64
    );
    println!("| **geomean** | | | | | {geomean:.3} | | |");
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("\nWorst launches:");
    for (_, r) in rows.iter().take(8) {
        println!("{r}");
    }
    println!("\n| sample | ptxas 11.8's code under `ptx2sass check` |");
    println!("|---|---|");
    for c in &checks {
        println!("{c}");
    }
}

/// `F2I` from an F16 source reads the low half of the register (ptxas 11.8 emits
/// `F2I.U16.F16 R0, R0` for `cvt.rni.u16.f16` and `F2I.TRUNC.F16` for
/// `cvt.rzi.s32.f16`); the simulator read the register as f64 bits, so every half
/// converted to 0. ptx2sass itself converts through F32 (`F2F.F32.F16`), so its code
/// was not affected. Found by the opt-in `PTX2SASS_PTXAS=1` sweep of `tests/exec_float.rs`.
#[test]
fn f2i_reads_a_half_source_from_the_low_half() {
    for (cvt, dty) in [("cvt.rni.u16.f16", "u16"), ("cvt.rzi.s32.f16", "s32")] {
        let src = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .b16 %h<2>;\n.reg .{dty} %o;\n.reg .b32 %r<3>;\n.reg .b64 %a<4>;\n\
             ld.param.u64 %a1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %a2, %r1, 4;\nadd.s64 %a3, %a1, %a2;\n\
             ld.global.u32 %r1, [%a3];\ncvt.u16.u32 %h1, %r1;\n{cvt} %o, %h1;\ncvt.u32.{dty} %r2, %o;\n\
             st.global.u32 [%a3], %r2;\nret;\n}}\n"
        );
        let ours = compile(&src);
        let theirs = match ptxas::program(&src, &ours) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        assert!(theirs.to_string().contains(".F16"), "{cvt}: {theirs}");
        let (module, _) = ptx2sass::ptx::parse(&src).unwrap();
        // 85.3125, -2.5 (0xc100), 1.0 (0x3c00), 65504 (0x7bff) in the low halves.
        let input: Vec<u8> = [0x79cf_5555u32, 0x1234_c100, 0x0000_3c00, 0xffff_7bff]
            .iter()
            .cycle()
            .take(32)
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut s = Setup::new();
        let buf = s.buf(input);
        let l = s.launch(&ours, "k", [1, 1, 1], [32, 1, 1], &[Val::I(buf)]);
        let want = exec::ptx::run(&module, &l).unwrap();
        let got = exec::sim::run(&theirs, &Launch { mufu: MufuModel::Nearest, ..l }).unwrap();
        let d = want.global.diff(&got.global);
        assert!(d.is_empty(), "{cvt}: {:?}", d.first());
    }
}

/// The FP64 unit reads its register sources late: ptxas 11.8's `cvt.rm.ftz.f32.f64`
/// issues `DSETP.GT.AND P0, PT, R4, |R2|, PT` 4 cycles after `ICMP.EQ R4, ...` (a 6-cycle
/// ALU result). The simulator called that a hazard when FP64 instructions read at
/// issue; this test fails then. (ptx2sass's scheduler keeps 6 cycles, so its code did
/// not depend on it.)
#[test]
fn fp64_instructions_read_their_sources_late() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
        .reg .f32 %f;\n.reg .f64 %d;\n.reg .b32 %r<2>;\n.reg .b64 %a<4>;\n\
        ld.param.u64 %a1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %a2, %r1, 8;\nadd.s64 %a3, %a1, %a2;\n\
        ld.global.f64 %d, [%a3];\ncvt.rm.ftz.f32.f64 %f, %d;\nst.global.f32 [%a3], %f;\nret;\n}\n";
    let ours = compile(src);
    let theirs = match ptxas::program(src, &ours) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    assert!(theirs.to_string().contains("DSETP"), "{theirs}");
    let (module, _) = ptx2sass::ptx::parse(src).unwrap();
    let input: Vec<u8> = [1.5f64, -1e300, 3e-310, -0.0, 1e-45, f64::INFINITY, 0.1, -7.25]
        .iter()
        .cycle()
        .take(32)
        .flat_map(|v| v.to_le_bytes())
        .collect();
    for seed in 0..4 {
        let mut s = Setup::new();
        let buf = s.buf(input.clone());
        let l = Launch { seed, ..s.launch(&ours, "k", [1, 1, 1], [32, 1, 1], &[Val::I(buf)]) };
        let want = exec::ptx::run(&module, &l).unwrap();
        let got = exec::sim::run(&theirs, &Launch { mufu: MufuModel::Nearest, ..l })
            .unwrap_or_else(|e| panic!("ptxas's code: {e}\n{theirs}"));
        let d = want.global.diff(&got.global);
        assert!(d.is_empty(), "seed {seed}: {:?}", d.first());
    }
}

/// `I2F.F16` (ptxas 11.8 for `cvt.rn.f16.u16`, `cvt.rz.f16.s8`): the integer rounded to
/// binary16 in the low half. The simulator did not support it.
#[test]
fn i2f_to_half() {
    for (cvt, sty) in [("cvt.rn.f16.u16", "u16"), ("cvt.rz.f16.s8", "s8"), ("cvt.rm.f16.s32", "s32")] {
        let src = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .b16 %h;\n.reg .{sty} %i;\n.reg .b32 %r<3>;\n.reg .b64 %a<4>;\n\
             ld.param.u64 %a1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %a2, %r1, 4;\nadd.s64 %a3, %a1, %a2;\n\
             ld.global.{sty} %i, [%a3];\n{cvt} %h, %i;\ncvt.u32.u16 %r2, %h;\n\
             st.global.u32 [%a3], %r2;\nret;\n}}\n"
        );
        let ours = compile(&src);
        let theirs = match ptxas::program(&src, &ours) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        let (module, _) = ptx2sass::ptx::parse(&src).unwrap();
        let input: Vec<u8> = [0u32, 1, 2049, 65535, 0xff80, 0x7fff_ffff, 0x8000_0001, 0xffff_fff3]
            .iter()
            .cycle()
            .take(32)
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut s = Setup::new();
        let buf = s.buf(input);
        let l = s.launch(&ours, "k", [1, 1, 1], [32, 1, 1], &[Val::I(buf)]);
        let want = exec::ptx::run(&module, &l).unwrap();
        let got = exec::sim::run(&theirs, &Launch { mufu: MufuModel::Nearest, ..l })
            .unwrap_or_else(|e| panic!("{cvt}: ptxas's code: {e}\n{theirs}"));
        let d = want.global.diff(&got.global);
        assert!(d.is_empty(), "{cvt}: {:?}", d.first());
    }
}

/// `F2F...SAT` (ptxas 11.8 for `cvt.rni.sat.f32.f32`, `cvt.rm.sat.f16.f32`): the
/// conversion clamped to [0, 1], NaN and -0 to +0. The listing loader rejected `.SAT`.
#[test]
fn f2f_saturates() {
    for (cvt, dty, conv) in
        [("cvt.rni.sat.f32.f32", "f32", "mov.b32 %r2, %o;"), ("cvt.rm.sat.f16.f32", "b16", "cvt.u32.u16 %r2, %o;")]
    {
        let src = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n\
             .reg .f32 %f;\n.reg .{dty} %o;\n.reg .b32 %r<3>;\n.reg .b64 %a<4>;\n\
             ld.param.u64 %a1, [p];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %a2, %r1, 4;\nadd.s64 %a3, %a1, %a2;\n\
             ld.global.f32 %f, [%a3];\n{cvt} %o, %f;\n{conv}\nst.global.u32 [%a3], %r2;\nret;\n}}\n"
        );
        let ours = compile(&src);
        let theirs = match ptxas::program(&src, &ours) {
            Ok(p) => p,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        assert!(theirs.to_string().contains(".SAT"), "{cvt}: {theirs}");
        let (module, _) = ptx2sass::ptx::parse(&src).unwrap();
        let input: Vec<u8> = [0.4f32, 0.6, 1.5, -0.0, -3.0, f32::NAN, 0.99999, 7e-41]
            .iter()
            .cycle()
            .take(32)
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut s = Setup::new();
        let buf = s.buf(input);
        let l = s.launch(&ours, "k", [1, 1, 1], [32, 1, 1], &[Val::I(buf)]);
        let want = exec::ptx::run(&module, &l).unwrap();
        let got = exec::sim::run(&theirs, &Launch { mufu: MufuModel::Nearest, ..l })
            .unwrap_or_else(|e| panic!("{cvt}: ptxas's code: {e}\n{theirs}"));
        let d = want.global.diff(&got.global);
        assert!(d.is_empty(), "{cvt}: {:?}", d.first());
    }
}
