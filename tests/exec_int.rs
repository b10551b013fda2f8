//! Differential tests of every lowered integer instruction form (issue 7, integer part):
//! each form is compiled into a kernel of its own, which 512 threads run on both the PTX
//! interpreter (`exec::ptx`, PTX ISA semantics) and the SPA 5.0 simulator (`exec::sim`, our
//! SASS with its scheduling annotations enforced); all global memory must agree bit for
//! bit.
//!
//! Each thread reads four 8-byte operand slots and writes up to four 8-byte results. The
//! first threads of a launch enumerate the cross product of the edge values of the first
//! two operands (0, 1, -1, INT_MIN, INT_MAX, powers of two, shift amounts 0/31/32/33/63/
//! 64/large, ...), the rest draw edge values and random values. 16-bit operands are
//! loaded as 32 bits and converted, so their registers carry garbage in the upper half, as
//! the lowering must tolerate. Forms that divide (MUFU.RCP) run under more simulator seeds:
//! each seed is a different ±2-ulp error function of the reciprocal estimate. Every
//! listing also passes the independent hazard checker (`sched::check`).

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
use ptx2sass::exec::{self, GLOBAL_BASE, Launch};
use ptx2sass::ptx::types::ScalarType;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a source operand's values are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// An integer of the operand type's width.
    Int,
    /// A shift amount.
    Amount,
    /// A bit-field position or length (`bfe`/`bfi`).
    Field,
    /// A `prmt` selector.
    Sel,
    /// A float of the operand type.
    Float,
}

/// One instruction form: its text (sources `%s1..%s4`, destinations `%d0..%d3`) and the
/// types and value kinds of its operands.
#[derive(Clone, Debug)]
struct Form {
    text: String,
    srcs: Vec<(ScalarType, Kind)>,
    dsts: Vec<ScalarType>,
}

fn ty(s: &str) -> ScalarType {
    ScalarType::from_dot(&format!(".{s}")).unwrap_or_else(|| panic!("type {s}"))
}

/// A form `op.TY %d0, %s1, ...` with `n` integer sources of type `t`.
fn simple(op: &str, t: &str, n: usize) -> Form {
    let srcs = (1..=n).map(|k| format!("%s{k}")).collect::<Vec<_>>().join(", ");
    Form { text: format!("{op}.{t} %d0, {srcs};"), srcs: vec![(ty(t), Kind::Int); n], dsts: vec![ty(t)] }
}

fn form(text: &str, srcs: &[(&str, Kind)], dsts: &[&str]) -> Form {
    Form {
        text: text.to_string(),
        srcs: srcs.iter().map(|(t, k)| (ty(t), *k)).collect(),
        dsts: dsts.iter().map(|t| ty(t)).collect(),
    }
}

/// The kernel of one form (`tests/common/forms.rs`).
fn kernel(f: &Form) -> String {
    let srcs: Vec<ScalarType> = f.srcs.iter().map(|(t, _)| *t).collect();
    forms::kernel(&f.text, &srcs, &f.dsts)
}

const AMOUNTS: &[u64] =
    &[0, 1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 255, 256, 1000, 0x8000_0000, 0xffff_ffff];
const FIELDS: &[u64] = &[0, 1, 2, 7, 8, 15, 16, 17, 23, 24, 31, 32, 33, 40, 63, 64, 65, 100, 255, 256, 257, 0x1_0003];

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
        ]
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
        Kind::Amount => {
            if r.is_multiple_of(2) {
                pick(rng, AMOUNTS)
            } else {
                rng.next() % 70
            }
        }
        Kind::Field => {
            if r.is_multiple_of(2) {
                pick(rng, FIELDS)
            } else {
                rng.next() % 70
            }
        }
        Kind::Sel => rng.next() & 0xffff_ffff,
        Kind::Float => {
            if r.is_multiple_of(2) {
                pick(rng, &float_edges(bits))
            } else {
                rng.next()
            }
        }
    };
    with_garbage(rng, t, v)
}

fn core(t: ScalarType, kind: Kind) -> Vec<u64> {
    match kind {
        Kind::Int => int_core(t.bits()),
        Kind::Amount => AMOUNTS.to_vec(),
        Kind::Field => FIELDS[..12].to_vec(),
        Kind::Sel => vec![0x3210, 0x7654, 0x0123, 0x8888, 0x4501, 1, 2, 3],
        Kind::Float => float_edges(t.bits()),
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
    // * the 64-bit bit-field forms with register fields shift by the whole position and
    //   length registers (`SHL`, `SHF.L.U64`, `SHF.R.U64`) instead of taking them modulo
    //   256 (PTX ISA 9.7.1.19/9.7.1.20), and its `shl.b32 d, a, r` is a plain `SHL`, which
    //   must then clamp on the whole register: fields of 256 or more differ;
    // * `bfe.s32 d, a, p, l` with a constant position past bit 31 (60, 40) is folded to
    //   `MOV32I R0, 0xffffffff` (PTX: the sign bit of `a` in every bit);
    // * `sub.sat.s32 d, a, -2147483648` becomes `IADD32I.SAT R0, R0, -0x80000000`, which
    //   adds INT_MIN instead of subtracting it.
    let deviates = [
        "bfe.u64 %d0, %s1, %s2, %s3;",
        "bfe.s64 %d0, %s1, %s2, %s3;",
        "bfi.b64 %d0, %s1, %s2, %s3, %s4;",
        "bfe.s32 %d0, %s1, 60, 10;",
        "bfe.s32 %d0, %s1, 40, 24;",
        "sub.sat.s32 %d0, %s1, -2147483648;",
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
        // ptxas's code is judged like ours, once ours agrees.
        let (got, diff, who, program) = match &theirs {
            Some(t) if diff.is_empty() => {
                let g = exec::sim::run(t, &Launch { mufu: exec::MufuModel::Nearest, ..l.clone() })
                    .unwrap_or_else(|e| panic!("ptxas's code for `{}`: {e}\n{t}", f.text));
                let d = want.global.diff(&g.global);
                (g, d, "simulator on ptxas's code", t)
            }
            _ => (got, diff, "simulator", &program),
        };
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

fn check_all(forms: &[Form], sets: u64) {
    for f in forms {
        check(f, sets);
    }
    eprintln!("{} forms, {} thread-instances compared so far", forms.len(), COMPARED.load(Ordering::Relaxed));
}

const INT16: &[&str] = &["u16", "s16"];
const INT32: &[&str] = &["u32", "s32"];
const ALL_INT: &[&str] = &["u16", "s16", "u32", "s32", "u64", "s64"];

#[test]
fn add_sub_min_max_abs_neg() {
    let mut forms = vec![];
    for t in ALL_INT {
        for op in ["add", "sub", "min", "max"] {
            forms.push(simple(op, t, 2));
        }
        forms.push(simple("neg", t, 1));
        if t.starts_with('s') {
            forms.push(simple("abs", t, 1));
        }
    }
    // Immediate operands.
    for (t, imm) in [("u32", "0x12345"), ("s32", "-7"), ("u64", "0x123456789"), ("s64", "-1"), ("u16", "300")] {
        forms.push(form(&format!("add.{t} %d0, %s1, {imm};"), &[(t, Kind::Int)], &[t]));
        forms.push(form(&format!("sub.{t} %d0, %s1, {imm};"), &[(t, Kind::Int)], &[t]));
        forms.push(form(&format!("max.{t} %d0, %s1, {imm};"), &[(t, Kind::Int)], &[t]));
    }
    forms.push(simple("add.sat", "s32", 2));
    forms.push(simple("sub.sat", "s32", 2));
    forms.push(form("sub.sat.s32 %d0, %s1, -2147483648;", &[("s32", Kind::Int)], &["s32"]));
    forms.push(simple("sad", "u16", 3));
    for t in ALL_INT {
        forms.push(simple("sad", t, 3));
    }
    check_all(&forms, 2);
}

#[test]
fn logic_and_shifts() {
    let mut forms = vec![];
    for t in ["b16", "b32", "b64"] {
        for op in ["and", "or", "xor"] {
            forms.push(simple(op, t, 2));
        }
        forms.push(simple("not", t, 1));
        forms.push(simple("cnot", t, 1));
        forms.push(form(&format!("xor.{t} %d0, %s1, 0x5a5a;"), &[(t, Kind::Int)], &[t]));
    }
    for t in ["b16", "b32", "b64", "u16", "s16", "u32", "s32", "u64", "s64"] {
        let op = if t.starts_with('b') { "shl" } else { "shr" };
        forms.push(form(&format!("{op}.{t} %d0, %s1, %s2;"), &[(t, Kind::Int), ("u32", Kind::Amount)], &[t]));
        for s in [0, 1, 15, 16, 31, 32, 33, 63, 64, 100] {
            forms.push(form(&format!("{op}.{t} %d0, %s1, {s};"), &[(t, Kind::Int)], &[t]));
        }
    }
    for (dir, mode) in [("l", "wrap"), ("l", "clamp"), ("r", "wrap"), ("r", "clamp")] {
        let sh = format!("shf.{dir}.{mode}.b32");
        forms.push(form(
            &format!("{sh} %d0, %s1, %s2, %s3;"),
            &[("b32", Kind::Int), ("b32", Kind::Int), ("u32", Kind::Amount)],
            &["b32"],
        ));
        for s in [0, 5, 31, 32, 33, 64] {
            forms.push(form(&format!("{sh} %d0, %s1, %s2, {s};"), &[("b32", Kind::Int), ("b32", Kind::Int)], &["b32"]));
        }
    }
    check_all(&forms, 2);
}

#[test]
fn multiplies() {
    let mut forms = vec![];
    for t in ALL_INT {
        forms.push(simple("mul.lo", t, 2));
        forms.push(simple("mul.hi", t, 2));
        forms.push(simple("mad.lo", t, 3));
        forms.push(simple("mad.hi", t, 3));
    }
    for t in INT16.iter().chain(INT32) {
        let w = if t.ends_with("16") { &t.replace("16", "32") } else { &t.replace("32", "64") };
        let w: &str = w;
        forms.push(form(&format!("mul.wide.{t} %d0, %s1, %s2;"), &[(t, Kind::Int), (t, Kind::Int)], &[w]));
        forms.push(form(
            &format!("mad.wide.{t} %d0, %s1, %s2, %s3;"),
            &[(t, Kind::Int), (t, Kind::Int), (w, Kind::Int)],
            &[w],
        ));
    }
    forms.push(simple("mad.hi.sat", "s32", 3));
    for t in INT32 {
        forms.push(simple("mul24.lo", t, 2));
        forms.push(simple("mul24.hi", t, 2));
        forms.push(simple("mad24.lo", t, 3));
        forms.push(simple("mad24.hi", t, 3));
    }
    // Constant multipliers.
    for (t, k) in [("u32", "12345"), ("s32", "-3"), ("u32", "0x10000"), ("u32", "65535"), ("s64", "0x5851f42d4c957f2d")]
    {
        forms.push(form(&format!("mul.lo.{t} %d0, %s1, {k};"), &[(t, Kind::Int)], &[t]));
        forms.push(form(&format!("mul.hi.{t} %d0, %s1, {k};"), &[(t, Kind::Int)], &[t]));
    }
    forms.push(form("mul.wide.s32 %d0, %s1, 8;", &[("s32", Kind::Int)], &["s64"]));
    forms.push(form("mul.wide.u32 %d0, %s1, 1000;", &[("u32", Kind::Int)], &["u64"]));
    check_all(&forms, 2);
}

#[test]
fn divisions() {
    let mut forms = vec![];
    for t in ALL_INT {
        forms.push(simple("div", t, 2));
        forms.push(simple("rem", t, 2));
    }
    for (t, k) in [("u32", "7"), ("s32", "-3"), ("u32", "0"), ("s64", "1000000007"), ("u64", "3")] {
        forms.push(form(&format!("div.{t} %d0, %s1, {k};"), &[(t, Kind::Int)], &[t]));
        forms.push(form(&format!("rem.{t} %d0, {k}, %s1;"), &[(t, Kind::Int)], &[t]));
    }
    check_all(&forms, 4);
}

#[test]
fn carries() {
    fn i(t: &str) -> (&str, Kind) {
        (t, Kind::Int)
    }
    let mut forms = vec![];
    for t in ["u32", "s32", "u64", "s64"] {
        // Chains of add.cc/addc.cc/addc and sub.cc/subc.cc/subc, the last carry
        // captured by `addc d, 0, 0`.
        for (a, c) in [("add", "addc"), ("sub", "subc"), ("add", "subc"), ("sub", "addc")] {
            forms.push(form(
                &format!(
                    "{a}.cc.{t} %d0, %s1, %s2;\n{c}.cc.{t} %d1, %s3, %s4;\n{c}.{t} %d2, %s1, %s3;\naddc.u32 %t6, 0, 0;\ncvt.u64.u32 %d3, %t6;"
                ),
                &[i(t), i(t), i(t), i(t)],
                &[t, t, t, "u64"],
            ));
        }
        // Immediate operands, including subtracting 0.
        forms.push(form(
            &format!("sub.cc.{t} %d0, %s1, 0;\nsubc.cc.{t} %d1, %s2, 5;\naddc.{t} %d2, %s3, 7;"),
            &[i(t), i(t), i(t)],
            &[t, t, t],
        ));
    }
    // A CC writer (64-bit add and compare) between the carry and its reader.
    forms.push(form(
        "add.cc.u32 %d0, %s1, %s2;\nadd.s64 %d1, %s3, %s4;\nsetp.lt.s64 %p1, %s3, %s4;\naddc.u32 %t6, %t1, 0;\nselp.u32 %t7, 1, 0, %p1;\nadd.u32 %t6, %t6, %t7;\ncvt.u64.u32 %d2, %t6;",
        &[i("u32"), i("u32"), i("u64"), i("u64")],
        &["u32", "u64", "u64"],
    ));
    // The carry across a branch.
    forms.push(form(
        "sub.cc.u32 %d0, %s1, %s2;\nsetp.eq.u32 %p1, %s1, 7;\n@%p1 bra L1;\nxor.b32 %d0, %d0, 1;\nL1:\nsubc.u32 %d1, %s1, %s2;",
        &[i("u32"), i("u32")],
        &["u32", "u32"],
    ));
    // Predicated carry-out.
    forms.push(form(
        "add.cc.u32 %d0, %s1, %s2;\nsetp.lt.u32 %p1, %s1, %s2;\n@%p1 add.cc.u32 %d0, %s2, %s2;\naddc.u32 %d1, 0, 0;",
        &[i("u32"), i("u32")],
        &["u32", "u32"],
    ));
    for t in ["u32", "s32", "u64", "s64"] {
        forms.push(form(
            &format!(
                "mad.lo.cc.{t} %d0, %s1, %s2, %s3;\nmadc.hi.cc.{t} %d1, %s1, %s2, %s4;\nmadc.lo.{t} %d2, %s3, %s4, %s1;"
            ),
            &[i(t), i(t), i(t), i(t)],
            &[t, t, t],
        ));
    }
    let forms: Vec<Form> = forms
        .into_iter()
        .map(|mut f| {
            f.text = f.text.replace("%p1", "%t0p");
            f.text = format!(".reg .pred %t0p;\n{}", f.text);
            f
        })
        .collect();
    check_all(&forms, 2);
}

#[test]
fn bit_instructions() {
    let mut forms = vec![];
    for t in ["b32", "b64"] {
        for op in ["popc", "clz"] {
            forms.push(form(&format!("{op}.{t} %d0, %s1;"), &[(t, Kind::Int)], &["u32"]));
        }
        forms.push(simple("brev", t, 1));
        forms.push(form(
            &format!("bfi.{t} %d0, %s1, %s2, %s3, %s4;"),
            &[(t, Kind::Int), (t, Kind::Int), ("u32", Kind::Field), ("u32", Kind::Field)],
            &[t],
        ));
        forms.push(form(&format!("bfi.{t} %d0, %s1, %s2, 5, 9;"), &[(t, Kind::Int), (t, Kind::Int)], &[t]));
    }
    for t in ["u32", "s32", "u64", "s64"] {
        for sa in ["", ".shiftamt"] {
            forms.push(form(&format!("bfind{sa}.{t} %d0, %s1;"), &[(t, Kind::Int)], &["u32"]));
        }
        forms.push(form(
            &format!("bfe.{t} %d0, %s1, %s2, %s3;"),
            &[(t, Kind::Int), ("u32", Kind::Field), ("u32", Kind::Field)],
            &[t],
        ));
        forms.push(form(
            &format!("bfe.{t} %d0, %s1, %s2, %s3;"),
            &[(t, Kind::Int), ("u32", Kind::Int), ("u32", Kind::Int)],
            &[t],
        ));
        for (p, l) in [(3, 7), (0, 32), (28, 8), (60, 10), (0, 0), (40, 24)] {
            forms.push(form(&format!("bfe.{t} %d0, %s1, {p}, {l};"), &[(t, Kind::Int)], &[t]));
        }
    }
    for m in ["", ".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"] {
        forms.push(form(
            &format!("prmt.b32{m} %d0, %s1, %s2, %s3;"),
            &[("b32", Kind::Int), ("b32", Kind::Int), ("b32", Kind::Sel)],
            &["b32"],
        ));
    }
    forms.push(form("prmt.b32 %d0, %s1, %s2, 0x8421;", &[("b32", Kind::Int), ("b32", Kind::Int)], &["b32"]));
    for t in ["f32", "f64"] {
        for op in ["finite", "infinite", "number", "notanumber", "normal", "subnormal"] {
            forms.push(form(&format!("testp.{op}.{t} %d0, %s1;"), &[(t, Kind::Float)], &["pred"]));
        }
        forms.push(form(&format!("copysign.{t} %d0, %s1, %s2;"), &[(t, Kind::Float), (t, Kind::Float)], &[t]));
    }
    check_all(&forms, 2);
}

#[test]
fn unsupported_forms_are_named() {
    for (text, want) in [
        ("mad24.hi.sat.s32 %r1, %r2, %r3, %r4;", "mad24.hi.sat.s32"),
        ("mul.wide.u64 %rd1, %rd2, %rd3;", "mul.wide.u64"),
        ("add.sat.u32 %r1, %r2, %r3;", "add.sat.u32"),
        ("popc.u32 %r1, %r2;", "popc.u32"),
        ("add.cc.u16 %h1, %h2, %h3;", "add.cc.u16"),
    ] {
        let src = format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k()\n{{\n.reg .b16 %h<4>;\n.reg .b32 %r<5>;\n.reg .b64 %rd<4>;\n{text}\nret;\n}}\n"
        );
        let opts = ptx2sass::driver::Options::default();
        let Err(d) = ptx2sass::driver::compile(&src, &opts) else { panic!("`{text}` compiled") };
        let msg = ptx2sass::diag::SourceFile::new("t.ptx", &src).render_all(&d);
        assert!(msg.contains(&format!("`{want}`")), "{text}: {msg}");
    }
}
