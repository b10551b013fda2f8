//! Differential tests of the lowered float instruction forms (issue 7, float part),
//! modelled on `tests/exec_int.rs`: each form is compiled into a kernel of its own, which
//! 512 threads run on both the PTX interpreter (`exec::ptx`, PTX ISA semantics computed in
//! soft float) and the SPA 5.0 simulator (`exec::sim`, our SASS with its scheduling
//! annotations enforced). The first threads enumerate the cross product of float edge
//! values (±0, ±inf, NaNs, smallest and largest subnormals and normals, ±1, the largest
//! finite values, values next to 1 and 2, ...), the rest draw edge and random values
//! (random bit patterns and random values of moderate exponent).
//!
//! IEEE-rounded forms (`add/sub/mul/fma/mad` in every rounding mode with `.ftz/.sat`,
//! `div.{rn,rz,rm,rp}`, `div.full`, `rcp.{rn,rz,rm,rp}`, `sqrt.{rn,rz,rm,rp}`, `setp`,
//! `selp`, `cvt`) must agree bit for bit, under several simulator seeds: every seed is a
//! different error function of each MUFU estimate (up to 2 ulp within the PTX bounds,
//! `exec::sim::arith::mufu`), so a Newton sequence that is only right for a well-rounded estimate
//! fails some seed.
//!
//! `.approx` forms have no exact PTX result; they are compared within the PTX ISA's
//! maximum error (section 9.7.3) against the interpreter's correctly rounded value, plus
//! that value's own half-ulp rounding where the bound is relative or absolute, see
//! [`Tol`]; `sin`/`cos` results must also lie in `[-1, 1]`. Every listing also passes the
//! independent hazard checker (`sched::check`).

#[path = "common/forms.rs"]
mod forms;
#[path = "common/launches.rs"]
mod launches;
#[path = "common/nvidia.rs"]
mod nvidia;
#[path = "common/ptxas.rs"]
mod ptxas;

use forms::{SLOT, THREADS, int_core, int_edges, with_garbage};

use launches::*;
use ptx2sass::exec::{self, GLOBAL_BASE, Launch, Memory};
use ptx2sass::ptx::types::ScalarType;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a source operand's values are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// An integer of the operand type's width.
    Int,
    /// A float of the operand type.
    Float,
    /// An f64 over the whole range: the edge values of [`wide_edges`] first, then
    /// subnormals, values next to the under- and overflow thresholds and random exponents.
    Wide,
    /// As `Wide` without the edge values (every thread draws).
    WideRandom,
}

/// One instruction form: its text (sources `%s1..%s4`, destinations `%d0..%d3`) and the
/// types and value kinds of its operands.
#[derive(Clone, Debug)]
struct Form {
    text: String,
    srcs: Vec<(ScalarType, Kind)>,
    dsts: Vec<ScalarType>,
    /// `None`: bit-exact; else the tolerance of an `.approx` form.
    tol: Option<Tol>,
}

/// The accepted error of an approximate result (first destination, a float of the form's
/// type): `ulps` units in the last place, or `abs` absolute, or `rel` relative, whichever
/// is largest; NaN must match NaN. `skip` (operand bits -> bool) excludes operands outside
/// the range where PTX states the bound.
#[derive(Clone, Copy, Debug)]
struct Tol {
    ulps: u64,
    abs: f64,
    rel: f64,
    skip: fn(&[u64]) -> bool,
}

fn never(_: &[u64]) -> bool {
    false
}

fn ty(s: &str) -> ScalarType {
    ScalarType::from_dot(&format!(".{s}")).unwrap_or_else(|| panic!("type {s}"))
}

/// A form `op.TY %d0, %s1, ...` with `n` integer sources of type `t`.
fn simple(op: &str, t: &str, n: usize) -> Form {
    let srcs = (1..=n).map(|k| format!("%s{k}")).collect::<Vec<_>>().join(", ");
    Form { text: format!("{op}.{t} %d0, {srcs};"), srcs: vec![(ty(t), Kind::Float); n], dsts: vec![ty(t)], tol: None }
}

fn form(text: &str, srcs: &[(&str, Kind)], dsts: &[&str]) -> Form {
    Form {
        text: text.to_string(),
        srcs: srcs.iter().map(|(t, k)| (ty(t), *k)).collect(),
        dsts: dsts.iter().map(|t| ty(t)).collect(),
        tol: None,
    }
}

/// The kernel of one form (`tests/common/forms.rs`).
fn kernel(f: &Form) -> String {
    let srcs: Vec<ScalarType> = f.srcs.iter().map(|(t, _)| *t).collect();
    forms::kernel(&f.text, &srcs, &f.dsts)
}

fn float_edges(bits: u32) -> Vec<u64> {
    if bits == 32 {
        [
            0u32,
            0x8000_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7f80_0001,
            0xffff_ffff,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x0080_0000,
            0x8080_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x3f80_0001,
            0x3f7f_ffff,
            0x4000_0000,
            0x4040_0000,
            0xc0a0_0000,
            0x3eaa_aaab,
            0x7e80_0000,
            0x0100_0000,
            0x4f00_0000,
            0xcf00_0000,
            0x5f00_0000,
            0x3f00_0000,
        ]
        .iter()
        .map(|x| *x as u64)
        .collect()
    } else {
        vec![
            0,
            1 << 63,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff0_0000_0000_0001,
            0x7ff0_0001_0000_0000,
            u64::MAX,
            1,
            0x8000_0000_0000_0001,
            0x000f_ffff_ffff_ffff,
            0x0000_0001_0000_0000,
            0x0010_0000_0000_0000,
            0x8010_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0x3ff0_0000_0000_0001,
            0x3fef_ffff_ffff_ffff,
            0x4000_0000_0000_0000,
            0xc014_0000_0000_0000,
            0x3fd5_5555_5555_5555,
            0x41e0_0000_0000_0000,
            0xc3e0_0000_0000_0000,
            0x4330_0000_0000_0001,
            0x3fe0_0000_0000_0000,
            // Square roots next to a rounding midpoint: (1 + 1.5 ulp)^2, (1 + 2.5 ulp)^2,
            // (2 - 0.5 ulp)^2 rounded.
            0x3ff0_0000_0000_0003,
            0x3ff0_0000_0000_0005,
            0x400f_ffff_ffff_fffe,
            0x3fef_ffff_ffff_fffd,
        ]
    }
}

/// f64 edge values over the whole range (22, so that the cross product of two operands
/// fits in the 512 threads): subnormals (smallest, `3 * 2^-1074`, `2^-1023`, largest),
/// the smallest normals, the largest finite numbers, `2^1022 (1 + 2^-52)` (its reciprocal
/// rounds to the largest subnormal or up to the smallest normal), values next to 1, 2,
/// 3, `2^-54`, and the specials.
fn wide_edges() -> Vec<u64> {
    vec![
        0,
        1 << 63,
        0x7ff0_0000_0000_0000,
        0xfff8_0000_0000_0000,
        1,
        2,
        3,
        0x8000_0000_0000_0001,
        0x0008_0000_0000_0000,
        0x000f_ffff_ffff_ffff,
        0x0010_0000_0000_0000,
        0x8010_0000_0000_0001,
        0x7fef_ffff_ffff_ffff,
        0xffe0_0000_0000_0000,
        0x7fd0_0000_0000_0001,
        0x3ff0_0000_0000_0000,
        0x3ff0_0000_0000_0001,
        0xbfef_ffff_ffff_ffff,
        0x4000_0000_0000_0000,
        0x4008_0000_0000_0000,
        0x3c90_0000_0000_0000,
        0x4330_0000_0000_0001,
    ]
}

/// A random f64 over the whole range: a subnormal (random significand and length), an
/// exponent within 64 of either end of the finite range, or any finite exponent.
fn wide(rng: &mut Rng) -> u64 {
    let sign = rng.next() & (1 << 63);
    let frac = rng.next() & 0xf_ffff_ffff_ffff;
    let exp = match rng.next() % 3 {
        0 => return sign | frac >> (rng.next() % 52),
        1 if rng.next() & 1 == 0 => 1 + rng.next() % 64,
        1 => 2046 - rng.next() % 64,
        _ => 1 + rng.next() % 2046,
    };
    sign | exp << 52 | frac
}

/// A random float with an exponent within about `2^±40` (random sign and significand).
fn moderate(rng: &mut Rng, bits: u32) -> u64 {
    let e = rng.next() % 81;
    if bits == 32 {
        let exp = 127 + e - 40;
        (rng.next() & 0x8000_0000) | exp << 23 | (rng.next() & 0x7f_ffff)
    } else {
        let exp = 1023 + e - 40;
        (rng.next() & (1 << 63)) | exp << 52 | (rng.next() & 0xf_ffff_ffff_ffff)
    }
}

/// A value of `kind` for an operand of type `t`: an edge value or a random one.
fn draw(rng: &mut Rng, t: ScalarType, kind: Kind) -> u64 {
    let bits = t.bits();
    let pick = |rng: &mut Rng, v: &[u64]| v[(rng.next() % v.len() as u64) as usize];
    let r = rng.next();
    let v = match kind {
        Kind::Int => match r % 4 {
            0 | 1 => pick(rng, &int_edges(bits)),
            2 => rng.next() >> (rng.next() % 64),
            _ => rng.next(),
        },
        Kind::Float => match r % 4 {
            0 => pick(rng, &float_edges(bits)),
            1 => rng.next() & if bits == 32 { 0xffff_ffff } else { u64::MAX },
            _ => moderate(rng, bits),
        },
        Kind::Wide | Kind::WideRandom => match r % 8 {
            0 => pick(rng, &wide_edges()),
            1 => moderate(rng, bits),
            _ => wide(rng),
        },
    };
    with_garbage(rng, t, v)
}

fn core(t: ScalarType, kind: Kind) -> Vec<u64> {
    match kind {
        Kind::Int => int_core(t.bits()),
        Kind::Float => float_edges(t.bits()),
        Kind::Wide => wide_edges(),
        Kind::WideRandom => vec![],
    }
}

/// The operand slots of `f` for one launch (`tests/common/forms.rs`).
fn inputs(f: &Form, rng: &mut Rng) -> Vec<u8> {
    forms::inputs(&f.srcs, rng, core, draw)
}

static COMPARED: AtomicUsize = AtomicUsize::new(0);

/// Compiles `f` and compares both executors on `sets` input sets (simulator seed = set).
fn check(f: &Form, sets: u64) {
    let src = kernel(f);
    let program = compile(&src);
    let (module, _) = ptx2sass::ptx::parse(&src).unwrap_or_else(|_| panic!("parses:\n{src}"));
    forms::assert_hazard_free(&program, &f.text);
    // With PTX2SASS_PTXAS=1: ptxas's code for the form too (`tests/sim_ptxas.rs`), except
    // where ptxas 11.8's code does not compute the PTX ISA's result whatever the simulator
    // does (ptxas deviations, not simulator bugs):
    // * `cvt.r{m,p}.ftz.f16.f32` becomes `F2F.F16.F32.RM` without `.FTZ`: a subnormal
    //   input is rounded away from zero instead of flushed (PTX ISA 9.7.9.21 `cvt`);
    // * `div.r{m,p}.ftz.f32` flushes a quotient that is subnormal before rounding but the
    //   smallest normal after it (`-2^-126 / 1.0000001` rounded down), which PTX's
    //   correctly rounded `div` keeps.
    let deviates = [
        "cvt.rm.ftz.f16.f32 %d0, %s1;",
        "cvt.rp.ftz.f16.f32 %d0, %s1;",
        "div.rm.ftz.f32 %d0, %s1, %s2;",
        "div.rp.ftz.f32 %d0, %s1, %s2;",
    ];
    let theirs = if deviates.contains(&f.text.as_str()) { None } else { ptxas::form_program(&src, &program) };
    for set in 0..sets {
        let mut rng = Rng::new(0x1717 + set * 104_729 + f.text.len() as u64);
        let input = inputs(f, &mut rng);
        let mut s = Setup::new();
        let pin = s.buf(input.clone());
        let pout = s.buf(vec![0xcd; (THREADS as u64 * SLOT) as usize]);
        let l = s.launch(&program, "k", [THREADS / 128, 1, 1], [128, 1, 1], &[Val::I(pin), Val::I(pout)]);
        let l = Launch { seed: set * 7 + 3, step_limit: 50_000_000, ..l };
        let (want, got, diff) =
            exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{}: {e}\n{src}", f.text));
        // ptxas's code is judged like ours, once ours agrees; its `div.full.f32` within the
        // PTX ISA's 2 ulp (9.7.3.8), where ours is exact.
        // Any NaN matches any NaN (PTX leaves NaN payloads unspecified; ptxas's f64
        // `div`/`rcp`/`sqrt` pass an input NaN through or build 0xfff8000000000000,
        // where the interpreter's NaN is canonical).
        let their_tol = f.tol.or_else(|| {
            let ulps = if f.text.starts_with("div.full") { 2 } else { 0 };
            (ulps > 0 || (f.dsts.len() == 1 && f.dsts[0].is_float())).then_some(Tol {
                ulps,
                abs: 0.0,
                rel: 0.0,
                skip: never,
            })
        });
        let (got, diff, who, program) = match &theirs {
            Some(t) if diff.is_empty() && their_tol.is_none() => {
                let g = exec::sim::run(t, &Launch { mufu: exec::MufuModel::Nearest, ..l.clone() })
                    .unwrap_or_else(|e| panic!("ptxas's code for `{}`: {e}\n{t}", f.text));
                let d = want.global.diff(&g.global);
                (g, d, "simulator on ptxas's code", t)
            }
            Some(t) if their_tol.is_some() => {
                let tol = their_tol.as_ref().expect("checked");
                let g = exec::sim::run(t, &Launch { mufu: exec::MufuModel::Nearest, ..l.clone() })
                    .unwrap_or_else(|e| panic!("ptxas's code for `{}`: {e}\n{t}", f.text));
                within(f, tol, &input, pout, &want.global, &g.global, set);
                (got, diff, "simulator", &program)
            }
            Some(_) => (got, diff, "simulator", &program),
            None => (got, diff, "simulator", &program),
        };
        if let Some(tol) = f.tol {
            within(f, &tol, &input, pout, &want.global, &got.global, set);
            COMPARED.fetch_add(THREADS as usize, Ordering::Relaxed);
            continue;
        }
        forms::assert_no_diff(
            &f.text,
            set,
            (f.srcs.len(), f.dsts.len()),
            &input,
            pout,
            (&want.global, &got.global),
            &diff,
            who,
            program,
        );
        assert!(pout >= GLOBAL_BASE);
        COMPARED.fetch_add(THREADS as usize, Ordering::Relaxed);
    }
}

/// Compares the first result of every thread of an approximate form within `tol`.
fn within(f: &Form, tol: &Tol, input: &[u8], pout: u64, want: &Memory, got: &Memory, set: u64) {
    let bits = f.dsts[0].bits();
    let size = (bits / 8) as u64;
    for th in 0..THREADS as u64 {
        let ops: Vec<u64> = (0..f.srcs.len())
            .map(|k| {
                let at = th as usize * SLOT as usize + 8 * k;
                let v = u64::from_le_bytes(input[at..at + 8].try_into().unwrap());
                if f.srcs[k].0.bits() == 32 { v & 0xffff_ffff } else { v }
            })
            .collect();
        if (tol.skip)(&ops) {
            continue;
        }
        let at = pout + th * SLOT;
        let w = want.read_uint("global", at, size).unwrap();
        let g = got.read_uint("global", at, size).unwrap();
        let (wf, gf) = if bits == 32 {
            (f32::from_bits(w as u32) as f64, f32::from_bits(g as u32) as f64)
        } else {
            (f64::from_bits(w), f64::from_bits(g))
        };
        let ok = if wf.is_nan() || gf.is_nan() {
            wf.is_nan() && gf.is_nan()
        } else if w == g {
            true
        } else if tol.ulps == 0 && tol.abs == 0.0 && tol.rel == 0.0 {
            // Exact but for NaN payloads: +0 and -0 differ.
            false
        } else if wf == gf {
            true
        } else {
            let ulps = if (wf < 0.0) == (gf < 0.0) { w.abs_diff(g) } else { u64::MAX };
            let d = (wf - gf).abs();
            let bounded = f.text.starts_with("sin") || f.text.starts_with("cos");
            (ulps <= tol.ulps || d <= tol.abs || d <= tol.rel * wf.abs()) && !(bounded && gf.abs() > 1.0)
        };
        assert!(
            ok,
            "`{}` (input set {set}): thread {th}, operands {:x?}: interpreter {wf:e} ({w:#x}), simulator {gf:e} ({g:#x}) beyond {tol:?}",
            f.text, ops
        );
    }
}

fn check_all(forms: &[Form], sets: u64) {
    let mut bad = vec![];
    for f in forms {
        if std::panic::catch_unwind(|| check(f, sets)).is_err() {
            bad.push(f.text.clone());
        }
    }
    assert!(bad.is_empty(), "FAILING FORMS: {bad:#?}");
    eprintln!("{} forms, {} thread-instances compared so far", forms.len(), COMPARED.load(Ordering::Relaxed));
}

const RND: &[&str] = &["", ".rn", ".rz", ".rm", ".rp"];
const DIRECTED: &[&str] = &[".rn", ".rz", ".rm", ".rp"];

fn with_tol(mut f: Form, ulps: u64, abs: f64, rel: f64, skip: fn(&[u64]) -> bool) -> Form {
    f.tol = Some(Tol { ulps, abs, rel, skip });
    f
}

/// The f64 magnitude exponent of `v` (unbiased; -1023 for zero and subnormals).
fn exp64(v: u64) -> i64 {
    ((v >> 52) & 0x7ff) as i64 - 1023
}

/// f64 operands (or an operand ratio) outside `2^±960` (not zero, inf or NaN): where
/// ptxas calls a slow path, which `rcp.approx.ftz.f64` (a bare MUFU estimate) does not
/// have in ptx2sass (`lower::arith::float`, Limits).
fn f64_extreme(ops: &[u64]) -> bool {
    let e = |v: u64| {
        let x = exp64(v);
        let zero = v << 1 == 0;
        !zero && x != 1024 && !(-960..=960).contains(&x)
    };
    ops.iter().any(|v| e(*v)) || (ops.len() == 2 && (exp64(ops[0]) - exp64(ops[1])).abs() > 960)
}

#[test]
fn arithmetic_every_rounding_mode() {
    let mut forms = vec![];
    for r in RND {
        for ftz in ["", ".ftz"] {
            for sat in ["", ".sat"] {
                for op in ["add", "sub", "mul"] {
                    forms.push(simple(&format!("{op}{r}{ftz}{sat}"), "f32", 2));
                }
                if !r.is_empty() {
                    forms.push(simple(&format!("fma{r}{ftz}{sat}"), "f32", 3));
                    forms.push(simple(&format!("mad{r}{ftz}{sat}"), "f32", 3));
                }
            }
        }
        for op in ["add", "sub", "mul"] {
            forms.push(simple(&format!("{op}{r}"), "f64", 2));
        }
        if !r.is_empty() {
            forms.push(simple(&format!("fma{r}"), "f64", 3));
            forms.push(simple(&format!("mad{r}"), "f64", 3));
        }
    }
    for ftz in ["", ".ftz"] {
        for op in ["min", "max"] {
            forms.push(simple(&format!("{op}{ftz}"), "f32", 2));
        }
        for op in ["abs", "neg"] {
            forms.push(simple(&format!("{op}{ftz}"), "f32", 1));
        }
    }
    for op in ["min", "max"] {
        forms.push(simple(op, "f64", 2));
    }
    for op in ["abs", "neg"] {
        forms.push(simple(op, "f64", 1));
    }
    forms.push(form("add.f32 %d0, %s1, 0f3F800000;", &[("f32", Kind::Float)], &["f32"]));
    forms.push(form("mul.rn.f64 %d0, %s1, 0d4000000000000000;", &[("f64", Kind::Float)], &["f64"]));
    check_all(&forms, 2);
}

#[test]
fn f32_division_and_reciprocal_are_correctly_rounded() {
    let mut forms = vec![];
    for r in DIRECTED {
        for ftz in ["", ".ftz"] {
            forms.push(simple(&format!("div{r}{ftz}"), "f32", 2));
            forms.push(simple(&format!("rcp{r}{ftz}"), "f32", 1));
        }
    }
    forms.push(simple("div.full", "f32", 2));
    forms.push(simple("div.full.ftz", "f32", 2));
    forms.push(form("div.rn.f32 %d0, 0f3F800000, %s1;", &[("f32", Kind::Float)], &["f32"]));
    forms.push(form("div.rn.f32 %d0, %s1, 0f40400000;", &[("f32", Kind::Float)], &["f32"]));
    check_all(&forms, 4);
}

#[test]
fn f32_square_root_is_correctly_rounded() {
    let mut forms = vec![];
    for r in DIRECTED {
        for ftz in ["", ".ftz"] {
            forms.push(simple(&format!("sqrt{r}{ftz}"), "f32", 1));
        }
    }
    check_all(&forms, 4);
}

#[test]
fn f64_division_square_root_reciprocal() {
    // Bit-exact over the whole range. The Newton results alone are faithful, not always
    // correctly rounded (`lower::arith::float`, Limits: the differential test found
    // `1 / (1 - 2^-53)` rounding the wrong way under one MUFU error function), so every
    // form ends with a remainder-sign rounding test; operands or quotients out of the fast
    // path's range take the slow path (`lower::arith::float_slow`).
    let mut forms = vec![];
    for r in DIRECTED {
        forms.push(simple(&format!("div{r}"), "f64", 2));
        forms.push(simple(&format!("rcp{r}"), "f64", 1));
        forms.push(simple(&format!("sqrt{r}"), "f64", 1));
    }
    check_all(&forms, 4);
}

#[test]
fn values_live_across_f64_slow_path_calls_survive_them() {
    // The operands and earlier results stay live across each slow-path CAL, in registers
    // the slow paths' private convention leaves alone (`ir::FuncAbi::preserves`: the callee
    // saves what it writes outside R4..R7); operands over the whole range take the slow
    // paths.
    let text = "div.rn.f64 %d0, %s1, %s2; sqrt.rn.f64 %d1, %s1; rcp.rn.f64 %d2, %s2; \
                div.rz.f64 %d3, %s2, %s1; add.f64 %d3, %d3, %d0;";
    let chain = form(text, &[("f64", Kind::Wide), ("f64", Kind::Wide)], &["f64", "f64", "f64", "f64"]);
    check_all(&[chain, many_live_across_slow_paths("div.rn.f64 %d0, %s1, %s2;", "f64")], 8);
    check_all(&[many_live_across_slow_paths("div.rn.f32 %d0, %s1, %s2;", "f32")], 8);
}

/// A form in which twelve distinct values (24 registers for f64) are live across the
/// slow-path call of `call` and are folded, in order, into a second result after it: with
/// that many, the allocator must use registers on both sides of `R4..R7`, including ones the
/// slow path's own body writes, so a slow path that forgets to save one of them (the save
/// set of `regalloc::calls`) changes a result. (The call alone, with two or three values
/// live across it, did not catch that.)
fn many_live_across_slow_paths(call: &str, ty: &str) -> Form {
    let (one, kind) = if ty == "f64" { ("0d3FF0000000000000", Kind::Wide) } else { ("0f3F800000", Kind::Float) };
    let mut text = format!("{{ .reg .{ty} %v<12>;\n");
    for v in 0..12 {
        // Distinct values: s1 * (v + 1) + s2, each rounded once.
        text.push_str(&format!("cvt.rn.{ty}.u32 %v{v}, {};\n", v + 1));
        text.push_str(&format!("fma.rn.{ty} %v{v}, %s1, %v{v}, %s2;\n"));
    }
    text.push_str(call);
    text.push_str(&format!("\nmov.{ty} %d1, {one};\n"));
    for v in 0..12 {
        text.push_str(&format!("fma.rn.{ty} %d1, %d1, %v{v}, %v{v};\n"));
    }
    text.push('}');
    form(&text, &[(ty, kind), (ty, kind)], &[ty, ty])
}

/// A form `op.f64 %d0, %s1, ...` with `n` sources of `kind`.
fn wide_form(op: &str, n: usize, kind: Kind) -> Form {
    let mut f = simple(op, "f64", n);
    f.srcs = vec![(ScalarType::F64, kind); n];
    f
}

#[test]
fn f64_division_square_root_reciprocal_full_range() {
    // Subnormal operands and results (rounding up to the smallest normal, down to zero,
    // ties on the subnormal grid), huge operands, overflow in every rounding mode,
    // quotients of extreme operands: the slow path (`lower::arith::float_slow`), bit-exact, under
    // the simulator's several MUFU error seeds.
    let mut forms = vec![];
    for r in DIRECTED {
        forms.push(wide_form(&format!("div{r}"), 2, Kind::Wide));
        forms.push(wide_form(&format!("div{r}"), 2, Kind::WideRandom));
        forms.push(wide_form(&format!("rcp{r}"), 1, Kind::Wide));
        forms.push(wide_form(&format!("sqrt{r}"), 1, Kind::Wide));
        // Quotients of moderate operands scaled to about 2^-1022 +- 2^40: results on both
        // sides of the subnormal boundary, and rounding across it.
        let near = format!("mul.rn.f64 %d0, %s2, 0d7FD0000000000000; div{r}.f64 %d0, %s1, %d0;");
        forms.push(form(&near, &[("f64", Kind::Float), ("f64", Kind::Float)], &["f64"]));
        let near = format!("mul.rn.f64 %d0, %s1, 0d0010000000000000; rcp{r}.f64 %d0, %d0;");
        forms.push(form(&near, &[("f64", Kind::Float)], &["f64"]));
    }
    check_all(&forms, 16);
}

/// f32 operands whose magnitude is above `2^126` (reciprocal subnormal: MUFU flushes it
/// to zero; PTX states the `div.approx` bound only for `|b|` in `[2^-126, 2^126]`).
fn big_divisor(ops: &[u64]) -> bool {
    let b = f32::from_bits(*ops.last().unwrap() as u32).abs();
    !(b.is_nan() || b.is_infinite() || b == 0.0 || (1.1754944e-38..=8.507059e37).contains(&b))
}

/// `ex2` operands above 128 or below -150 overflow / underflow (both agree); keep the
/// moderate range.
fn ex2_range(ops: &[u64]) -> bool {
    let x = f32::from_bits(ops[0] as u32);
    x.abs() > 100.0
}

/// sin/cos: PTX states the bound on `[-100 pi, 100 pi]`.
fn sincos_range(ops: &[u64]) -> bool {
    f32::from_bits(ops[0] as u32).abs() > 314.0
}

/// `rcp.approx.ftz.f64` is ptxas's bare `MUFU.RCP64H` of the high word: a NaN whose
/// payload is only in the low word reads as infinity (ptxas's sequence behaves the same);
/// those and the f64 extremes are skipped.
fn rcp64_skip(ops: &[u64]) -> bool {
    let low_nan = f64::from_bits(ops[0]).is_nan() && (ops[0] >> 32) & 0xf_ffff == 0;
    low_nan || f64_extreme(ops)
}

#[test]
fn approximate_functions_within_their_bounds() {
    let mut forms = vec![];
    for ftz in ["", ".ftz"] {
        // PTX ISA 9.7.3 bounds against the exact value; the interpreter's correctly rounded
        // value is within half an ulp (2^-24 relative) of it.
        let half = 2f64.powi(-24);
        // rcp.approx: 1 ulp of the exact value (9.7.3.13): one step from the rounded one.
        forms.push(with_tol(simple(&format!("rcp.approx{ftz}"), "f32", 1), 1, 0.0, 0.0, big_divisor));
        // div.approx: 2 ulp for |b| in [2^-126, 2^126] (9.7.3.8). Tiny quotients: absolute
        // 2^-126 (FTZ of the product).
        forms.push(with_tol(simple(&format!("div.approx{ftz}"), "f32", 2), 2, 1.2e-38, 0.0, big_divisor));
        // rsqrt.approx: relative 2^-22.9 (9.7.3.16).
        forms.push(with_tol(simple(&format!("rsqrt.approx{ftz}"), "f32", 1), 0, 0.0, 2f64.powf(-22.9) + half, never));
        // sqrt.approx: relative 2^-23 (9.7.3.15).
        forms.push(with_tol(simple(&format!("sqrt.approx{ftz}"), "f32", 1), 0, 0.0, 2f64.powi(-23) + half, never));
        // ex2.approx: 2 ulp from the correctly rounded result (9.7.3.21).
        forms.push(with_tol(simple(&format!("ex2.approx{ftz}"), "f32", 1), 2, 0.0, 0.0, ex2_range));
        // lg2.approx: absolute 2^-22 for x in (0.5, 2), else relative 2^-22 (9.7.3.20):
        // |lg2 x| < 1 exactly inside the interval, so "absolute or relative" is that bound.
        forms.push(with_tol(
            simple(&format!("lg2.approx{ftz}"), "f32", 1),
            0,
            2f64.powi(-22) + 2f64.powi(-25),
            2f64.powi(-22) + half,
            never,
        ));
        // sin/cos.approx: absolute 2^-20.5 on [-2 pi, 2 pi] (9.7.3.18-19; the model keeps
        // it up to 100 pi, where PTX allows 2^-14.7), and never beyond 1.
        forms.push(with_tol(simple(&format!("sin.approx{ftz}"), "f32", 1), 0, 2f64.powf(-20.5), 0.0, sincos_range));
        forms.push(with_tol(simple(&format!("cos.approx{ftz}"), "f32", 1), 0, 2f64.powf(-20.5), 0.0, sincos_range));
    }
    // f64: rcp.approx.ftz.f64 is the MUFU.RCP64H estimate (relative 2^-18 in the model);
    // rsqrt.approx.f64 is refined to near full precision (relative 2^-50).
    forms.push(with_tol(simple("rcp.approx.ftz", "f64", 1), 0, 0.0, 2f64.powi(-18), rcp64_skip));
    forms.push(with_tol(simple("rsqrt.approx", "f64", 1), 4, 0.0, 2f64.powi(-50), never));
    check_all(&forms, 4);
}

#[test]
fn comparisons_and_selects() {
    let cmps = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"];
    let mut forms = vec![];
    for c in cmps {
        for (t, ftz) in [("f32", ""), ("f32", ".ftz"), ("f64", "")] {
            forms.push(form(
                &format!("setp.{c}{ftz}.{t} %d0, %s1, %s2;"),
                &[(t, Kind::Float), (t, Kind::Float)],
                &["pred"],
            ));
        }
    }
    for b in ["and", "or", "xor"] {
        for (t, ftz) in [("f32", ""), ("f32", ".ftz"), ("f64", "")] {
            forms.push(form(
                &format!("setp.gt.f32 %d2, %s3, 0f00000000;\nsetp.lt.{b}{ftz}.{t} %d0|%d1, %s1, %s2, !%d2;"),
                &[(t, Kind::Float), (t, Kind::Float), ("f32", Kind::Float)],
                &["pred", "pred", "pred"],
            ));
        }
    }
    for c in ["lt", "equ", "nan"] {
        for (t, ftz) in [("f32", ""), ("f32", ".ftz"), ("f64", "")] {
            for d in ["u32", "s32", "f32"] {
                forms.push(form(
                    &format!("set.{c}{ftz}.{d}.{t} %d0, %s1, %s2;"),
                    &[(t, Kind::Float), (t, Kind::Float)],
                    &[d],
                ));
            }
        }
    }
    forms.push(form(
        "setp.gt.f32 %d1, %s3, 0f00000000;\nset.ge.or.u32.f32 %d0, %s1, %s2, !%d1;",
        &[("f32", Kind::Float), ("f32", Kind::Float), ("f32", Kind::Float)],
        &["u32", "pred"],
    ));
    for t in ["s32", "u64", "s16"] {
        forms.push(form(&format!("set.lt.u32.{t} %d0, %s1, %s2;"), &[(t, Kind::Int), (t, Kind::Int)], &["u32"]));
        forms.push(form(&format!("setp.hi.{t} %d0, %s1, %s2;"), &[(t, Kind::Int), (t, Kind::Int)], &["pred"]));
    }
    for t in ["f32", "f64"] {
        forms.push(form(
            &format!("setp.gtu.f32 %d1, %s3, 0f00000000;\nselp.{t} %d0, %s1, %s2, %d1;"),
            &[(t, Kind::Float), (t, Kind::Float), ("f32", Kind::Float)],
            &[t, "pred"],
        ));
    }
    check_all(&forms, 2);
}

const INTS: &[&str] = &["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"];

/// The register type holding a cvt operand of type `t` (8-bit values live in 16-bit
/// registers; operands are loaded from 32 bits, so their upper bits are garbage).
fn cvt_reg(t: &str) -> &str {
    match t {
        "u8" => "u16",
        "s8" => "s16",
        t => t,
    }
}

#[test]
fn conversions_between_floats_and_integers() {
    let mut forms = vec![];
    let mut cvt = |text: String, d: &str, s: &str| {
        let k = if s.starts_with('f') { Kind::Float } else { Kind::Int };
        forms.push(form(&text, &[(cvt_reg(s), k)], &[cvt_reg(d)]));
    };
    for (d, s) in [("f32", "f64"), ("f64", "f32"), ("f32", "f32"), ("f64", "f64")] {
        let modes: &[&str] = if d == "f32" && s == "f64" { &[".rn", ".rz", ".rm", ".rp"] } else { &[""] };
        for r in modes.iter().chain(&[".rni", ".rzi", ".rmi", ".rpi"]) {
            if d == s && r.is_empty() {
                continue;
            }
            for ftz in ["", ".ftz"] {
                for sat in ["", ".sat"] {
                    if ftz == ".ftz" && d == "f64" && s == "f64" {
                        continue;
                    }
                    cvt(format!("cvt{r}{ftz}{sat}.{d}.{s} %d0, %s1;"), d, s);
                }
            }
        }
    }
    for f in ["f32", "f64"] {
        for i in INTS {
            for r in [".rn", ".rz", ".rm", ".rp"] {
                cvt(format!("cvt{r}.{f}.{i} %d0, %s1;"), f, i);
            }
            for r in [".rni", ".rzi", ".rmi", ".rpi"] {
                cvt(format!("cvt{r}.{i}.{f} %d0, %s1;"), i, f);
                if f == "f32" {
                    cvt(format!("cvt{r}.ftz.sat.{i}.{f} %d0, %s1;"), i, f);
                }
            }
        }
        cvt(format!("cvt.rn.sat.{f}.s32 %d0, %s1;"), f, "s32");
    }
    for (d, s) in [
        ("u8", "s32"),
        ("s8", "u32"),
        ("u16", "s64"),
        ("s16", "u16"),
        ("u32", "s64"),
        ("s32", "u64"),
        ("u64", "s32"),
        ("s64", "u64"),
    ] {
        cvt(format!("cvt.sat.{d}.{s} %d0, %s1;"), d, s);
    }
    // Half precision (`.f16` values in 16-bit registers loaded with garbage upper bits).
    for r in [".rn", ".rz", ".rm", ".rp"] {
        for (ftz, sat) in [("", ""), (".ftz", ""), ("", ".sat")] {
            forms.push(form(&format!("cvt{r}{ftz}{sat}.f16.f32 %d0, %s1;"), &[("f32", Kind::Float)], &["b16"]));
        }
        forms.push(form(&format!("cvt{r}.f16.f64 %d0, %s1;"), &[("f64", Kind::Float)], &["b16"]));
        for i in ["s32", "u32", "s64", "u16", "s8"] {
            forms.push(form(&format!("cvt{r}.f16.{i} %d0, %s1;"), &[(cvt_reg(i), Kind::Int)], &["b16"]));
        }
    }
    for (d, r) in [("f32", ""), ("f32", ".sat"), ("f64", ""), ("s32", ".rzi"), ("u16", ".rni"), ("s64", ".rmi")] {
        forms.push(form(&format!("cvt{r}.{d}.f16 %d0, %s1;"), &[("b16", Kind::Int)], &[d]));
    }
    check_all(&forms, 2);
}
