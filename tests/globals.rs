//! Module `.global` variables end to end (issue 15, `.global` part): every declaration form
//! (scalar, array, unsized array, vector, `.visible`/`.weak`/`.extern`/`.common`/internal,
//! `.align`, with and without initializer, address initializers `var`, `var+off`,
//! `generic(var)+off`) × every access kind (`ld`/`st.global`, generic `ld`/`st` naming
//! the variable, `mov`/`cvta` of its address then `ld`/`st` through the register,
//! `atom`/`red`, vectors, prefetch, the address itself stored), each a kernel compiled and
//! run on both executors, which must agree on the output buffer and on every module
//! variable afterwards (`exec::compare` matches variables by name and pointers into them
//! by variable and offset); the interpreter's results are also checked against values
//! computed here. Plus the lowering's shape (ptxas 11.8's `MOV32I 32@lo/32@hi`, offsets
//! in the access) and the diagnostics for bad declarations.

#[path = "common/listing.rs"]
mod listing;

use ptx2sass::driver::{self, Options};
use ptx2sass::exec::ptx::args::{self, Arg};
use ptx2sass::exec::{self, Launch};
use ptx2sass::ptx::ast::Module;
use ptx2sass::sass::program::Program;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

fn parse(src: &str) -> Module {
    match ptx2sass::ptx::parse(src) {
        Ok((m, _)) => m,
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("test", src).render_all(&d)),
    }
}

fn compile(src: &str) -> Program {
    match driver::compile(src, &Options::default()) {
        Ok(o) => o.program.expect("a program"),
        Err(d) => panic!("{}\n{src}", ptx2sass::diag::SourceFile::new("test", src).render_all(&d)),
    }
}

/// Threads per launch (two warps) and the output slots (one u64 per thread).
const THREADS: u32 = 64;

/// Runs kernel `k` of `src` on both executors with one CTA of [`THREADS`] threads and a
/// zeroed output buffer of one u64 per thread; asserts they agree on the buffer and on
/// every module variable. Returns the interpreter's output words and its final contents
/// of module variable `var`.
fn both(src: &str, var: &str, seed: u64) -> (Vec<u64>, Vec<u8>) {
    let m = parse(src);
    let p = compile(src);
    let mut l: Launch =
        args::launch(&m, "k", [1, 1, 1], [THREADS, 1, 1], &[Arg::Buf(vec![0; 8 * THREADS as usize])], 5_000_000)
            .unwrap();
    l.seed = seed;
    let (want, _, diff) = exec::compare(&m, &p, &l).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(diff.is_empty(), "the executors differ: {diff:?}\n{src}");
    let out = args::buffer(&want.global, "arg0").unwrap();
    let words = out.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let v = args::buffer(&want.global, &format!("var_{var}")).map(<[u8]>::to_vec).unwrap_or_default();
    (words, v)
}

/// A declaration form of the variable under test, `v`.
struct Decl {
    /// The declaration (without `;`).
    text: &'static str,
    /// Element type (`u8 u16 u32 u64 f32 f64`).
    ty: &'static str,
    /// Number of elements (vector components counted).
    count: u64,
    /// Initial values of the elements (missing ones are 0).
    init: &'static [u64],
}

const DECLS: &[Decl] = &[
    Decl { text: ".global .u32 v", ty: "u32", count: 1, init: &[] },
    Decl { text: ".global .u32 v = 7", ty: "u32", count: 1, init: &[7] },
    Decl { text: ".global .align 4 .u32 v[5] = {1, 2, 3}", ty: "u32", count: 5, init: &[1, 2, 3] },
    Decl { text: ".global .u32 v[] = {10, 20, 30, 40}", ty: "u32", count: 4, init: &[10, 20, 30, 40] },
    Decl { text: ".visible .global .align 16 .u64 v[3]", ty: "u64", count: 3, init: &[] },
    Decl {
        text: ".visible .global .u64 v[2] = {0x123456789abcdef0, 5}",
        ty: "u64",
        count: 2,
        init: &[0x1234_5678_9abc_def0, 5],
    },
    Decl {
        text: ".weak .global .align 32 .u16 v[6] = {1, 2, 3, 4, 5, 6}",
        ty: "u16",
        count: 6,
        init: &[1, 2, 3, 4, 5, 6],
    },
    Decl { text: ".extern .global .u8 v[9]", ty: "u8", count: 9, init: &[] },
    Decl { text: ".common .global .f32 v[2]", ty: "f32", count: 2, init: &[] },
    Decl {
        text: ".global .v4 .f32 v[2] = {{1.0, 2.0, 3.0, 4.0}, {5.0, 6.0, 7.0, 8.0}}",
        ty: "f32",
        count: 8,
        init: &[0x3f80_0000, 0x4000_0000, 0x4040_0000, 0x4080_0000, 0x40a0_0000, 0x40c0_0000, 0x40e0_0000, 0x4100_0000],
    },
    Decl { text: ".global .v2 .u32 v = {3, 4}", ty: "u32", count: 2, init: &[3, 4] },
    Decl { text: ".global .f64 v = 0d4000000000000000", ty: "f64", count: 1, init: &[0x4000_0000_0000_0000] },
    Decl { text: ".global .u8 v[3] = {250, 251, 252}", ty: "u8", count: 3, init: &[250, 251, 252] },
];

fn bytes(ty: &str) -> u64 {
    match ty {
        "u8" => 1,
        "u16" => 2,
        "u32" | "f32" => 4,
        _ => 8,
    }
}

/// Loads element address `addr` (`[...]` text) of type `ty` with `ld{space}` into `%rd9`
/// (zero-extended bits).
fn load(space: &str, ty: &str, addr: &str) -> String {
    match bytes(ty) {
        8 => format!("ld{space}.u64 %rd9, {addr};"),
        n => format!("ld{space}.u{} %r9, {addr}; cvt.u64.u32 %rd9, %r9;", 8 * n),
    }
}

/// Stores the low bits of `%rd8` as element type `ty` at `addr` with `st{space}`.
fn store(space: &str, ty: &str, addr: &str) -> String {
    match bytes(ty) {
        8 => format!("st{space}.u64 {addr}, %rd8;"),
        n => format!("cvt.u32.u64 %r8, %rd8; st{space}.u{} {addr}, %r8;", 8 * n),
    }
}

/// The access kinds: (name, kernel body). The body sees `%r1` = tid, `%rd3` = this
/// thread's output slot, and stores one u64 there.
fn accesses(d: &Decl) -> Vec<(&'static str, String)> {
    let ty = d.ty;
    let n = bytes(ty);
    let last = (d.count - 1) * n;
    // This thread's element: tid % count, as a byte offset in %rd6.
    let index = format!("rem.u32 %r5, %r1, {}; mul.wide.u32 %rd6, %r5, {n};", d.count);
    let mut v = vec![
        ("ld.global [v+off]", format!("{} st.global.u64 [%rd3], %rd9;", load(".global", ty, &format!("[v+{last}]")))),
        ("generic ld [v+off]", format!("{} st.global.u64 [%rd3], %rd9;", load("", ty, &format!("[v+{last}]")))),
        (
            "mov.u64 + ld.global [reg]",
            format!(
                "{index} mov.u64 %rd5, v; add.s64 %rd7, %rd5, %rd6; {} st.global.u64 [%rd3], %rd9;",
                load(".global", ty, "[%rd7]")
            ),
        ),
        (
            "cvta.global + generic ld [reg]",
            format!(
                "{index} cvta.global.u64 %rd5, v; add.s64 %rd7, %rd5, %rd6; {} st.global.u64 [%rd3], %rd9;",
                load("", ty, "[%rd7]")
            ),
        ),
        (
            "st.global [v+off] then ld",
            format!(
                "setp.ne.u32 %p1, %r1, 0; @%p1 bra $L1; mov.u64 %rd8, 0x5a5a5a5a5a5a5a5a; {} $L1: bar.sync 0; {} st.global.u64 [%rd3], %rd9;",
                store(".global", ty, &format!("[v+{last}]")),
                load(".global", ty, &format!("[v+{last}]"))
            ),
        ),
        (
            "generic st [reg] per element then ld",
            format!(
                "setp.ge.u32 %p1, %r1, {}; @%p1 bra $L1; {index} mov.u64 %rd5, v; add.s64 %rd7, %rd5, %rd6; cvt.u64.u32 %rd8, %r1; add.u64 %rd8, %rd8, 100; {} $L1: bar.sync 0; {} st.global.u64 [%rd3], %rd9;",
                d.count,
                store("", ty, "[%rd7]"),
                load("", ty, "[v]")
            ),
        ),
        ("address stored", format!("mov.u64 %rd5, v; add.s64 %rd5, %rd5, {last}; st.global.u64 [%rd3], %rd5;")),
        (
            "prefetch",
            format!("prefetch.global.L2 [v+{last}]; {} st.global.u64 [%rd3], %rd9;", load(".global", ty, "[v]")),
        ),
    ];
    match ty {
        "u32" | "u64" => {
            let b = if ty == "u32" { "u32" } else { "u64" };
            let r = if ty == "u32" { "%r9" } else { "%rd9" };
            let widen = if ty == "u32" { "cvt.u64.u32 %rd9, %r9;" } else { "" };
            v.push((
                "atom.global.add [v+off]",
                format!("atom.global.add.{b} {r}, [v+{last}], 1; {widen} st.global.u64 [%rd3], %rd9;"),
            ));
            v.push(("generic atom.add [v]", format!("atom.add.{b} {r}, [v], 3; {widen} st.global.u64 [%rd3], %rd9;")));
            v.push((
                "red.global.add then ld",
                format!(
                    "red.global.add.{b} [v+{last}], 2; bar.sync 0; {}  st.global.u64 [%rd3], %rd9;",
                    load(".global", ty, &format!("[v+{last}]"))
                ),
            ));
            v.push((
                "atom.exch [reg]",
                format!("{index} mov.u64 %rd5, v; add.s64 %rd7, %rd5, %rd6; cvt.u64.u32 %rd8, %r1; atom.global.exch.b{} {r}, [%rd7], {}; {widen} st.global.u64 [%rd3], %rd9;", 8 * n, if ty == "u32" { "%r1" } else { "%rd8" }),
            ));
        }
        "f32" => {
            v.push((
                "atom.global.add.f32 [v+off]",
                format!("atom.global.add.f32 %f1, [v+{last}], 0f3F800000; mov.b32 %r9, %f1; cvt.u64.u32 %rd9, %r9; st.global.u64 [%rd3], %rd9;"),
            ));
        }
        _ => {}
    }
    if d.text.contains(".v2 .u32") {
        v.push((
            "ld.global.v2 [v]",
            "ld.global.v2.u32 {%r9, %r10}, [v]; mul.wide.u32 %rd9, %r10, 0x10000; cvt.u64.u32 %rd10, %r9; add.s64 %rd9, %rd9, %rd10; st.global.u64 [%rd3], %rd9;".to_string(),
        ));
    }
    if d.text.contains(".v4 .f32") {
        v.push((
            "ld.global.v4.f32 [v+16]",
            "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [v+16]; add.f32 %f1, %f1, %f4; mov.b32 %r9, %f1; cvt.u64.u32 %rd9, %r9; st.global.u64 [%rd3], %rd9;".to_string(),
        ));
    }
    v
}

fn kernel(decl: &str, body: &str) -> String {
    format!(
        r#"{HEAD}.global .align 8 .u64 tab[4] = {{11, 22, 33, 44}};
{decl};
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .pred %p<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    {body}
    ret;
}}
"#
    )
}

/// Every declaration form × every access kind: both executors agree (output and module
/// variables), and plain loads return the initializer's values.
#[test]
fn every_declaration_form_with_every_access_kind() {
    let mut kernels = 0;
    for (k, d) in DECLS.iter().enumerate() {
        let elem = |e: u64| d.init.get(e as usize).copied().unwrap_or(0);
        let last = elem(d.count - 1);
        for (name, body) in accesses(d) {
            let src = kernel(d.text, &body);
            let (out, var) = both(&src, "v", k as u64);
            kernels += 1;
            let what = format!("`{}` × {name}", d.text);
            match name {
                "ld.global [v+off]" | "generic ld [v+off]" | "prefetch" => {
                    let want = if name == "prefetch" { elem(0) } else { last };
                    assert!(out.iter().all(|&x| x == want), "{what}: {out:x?}, want 0x{want:x}");
                }
                "mov.u64 + ld.global [reg]" | "cvta.global + generic ld [reg]" => {
                    for (t, &x) in out.iter().enumerate() {
                        assert_eq!(x, elem(t as u64 % d.count), "{what}: thread {t}");
                    }
                }
                "st.global [v+off] then ld" => {
                    let mask = if bytes(d.ty) == 8 { u64::MAX } else { (1u64 << (8 * bytes(d.ty))) - 1 };
                    assert!(out.iter().all(|&x| x == 0x5a5a_5a5a_5a5a_5a5a & mask), "{what}: {out:x?}");
                }
                "atom.global.add [v+off]" => {
                    // Every thread got a distinct old value; the variable ends at init + 64.
                    let mut s = out.clone();
                    s.sort();
                    assert_eq!(s, (0..THREADS as u64).map(|t| last + t).collect::<Vec<_>>(), "{what}");
                    let off = ((d.count - 1) * bytes(d.ty)) as usize;
                    let n = bytes(d.ty) as usize;
                    let mut word = [0u8; 8];
                    word[..n].copy_from_slice(&var[off..off + n]);
                    assert_eq!(u64::from_le_bytes(word), last + THREADS as u64, "{what}");
                }
                _ => {}
            }
        }
    }
    assert!(kernels >= 120, "{kernels} kernels");
}

/// Address initializers: `var`, `var+off`, `generic(var)+off`, in scalars and arrays,
/// followed through on both executors; the pointers themselves (in `p`, `q` and stored to
/// the output) compare as the same variable and offset.
#[test]
fn address_initializers_are_followed_on_both_executors() {
    let src = format!(
        r#"{HEAD}.global .align 8 .u64 tab[4] = {{11, 22, 33, 44}};
.global .u32 cnt = 5;
.global .u64 p = generic(tab)+8;
.visible .global .u64 q[3] = {{tab, tab+24, cnt}};
.weak .global .u64 r = generic(q)+16;
.const .u64 c = tab+16;
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<16>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 64;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u64 %rd4, [p];
    ld.u64 %rd5, [%rd4];
    st.global.u64 [%rd3], %rd5;
    ld.global.u64 %rd4, [q+8];
    ld.global.u64 %rd5, [%rd4];
    st.global.u64 [%rd3+8], %rd5;
    ld.global.u64 %rd4, [r];
    ld.u64 %rd6, [%rd4];
    ld.u32 %r2, [%rd6];
    atom.global.add.u32 %r3, [%rd6], 1;
    cvt.u64.u32 %rd5, %r2;
    st.global.u64 [%rd3+16], %rd5;
    ld.const.u64 %rd4, [c];
    ld.global.u64 %rd5, [%rd4];
    st.global.u64 [%rd3+24], %rd5;
    st.global.u64 [%rd3+32], %rd6;
    ld.global.u64 %rd4, [q];
    st.global.u64 [%rd3+40], %rd4;
    ret;
}}
"#
    );
    let m = parse(&src);
    let p = compile(&src);
    let l = args::launch(&m, "k", [1, 1, 1], [32, 1, 1], &[Arg::Buf(vec![0; 64 * 32])], 1_000_000).unwrap();
    let (want, got, diff) = exec::compare(&m, &p, &l).unwrap();
    assert!(diff.is_empty(), "{diff:?}");
    let out = args::buffer(&want.global, "arg0").unwrap();
    let w = |k: usize| u64::from_le_bytes(out[8 * k..8 * k + 8].try_into().unwrap());
    assert_eq!((w(0), w(1), w(2), w(3)), (22, 44, 5, 33));
    assert_eq!(args::buffer(&got.global, "var_cnt").unwrap(), 37u32.to_le_bytes());
    // The stored pointers are addresses of `cnt` and `tab` in each executor's own layout.
    let addr = |o: &exec::Outcome, v: &str| o.global.regions().find(|r| r.0 == format!("var_{v}")).unwrap().1;
    assert_eq!(w(4), addr(&want, "cnt"));
    assert_eq!(w(5), addr(&want, "tab"));
    let gout = args::buffer(&got.global, "arg0").unwrap();
    assert_eq!(u64::from_le_bytes(gout[32..40].try_into().unwrap()), addr(&got, "cnt"));
    assert_ne!(addr(&want, "cnt"), addr(&got, "cnt"), "the executors place variables independently");
}

/// `--init` contents of `.global` variables reach the simulator's loader (before the
/// address initializers are applied) as they reach the interpreter.
#[test]
fn launch_contents_of_global_variables() {
    let src = kernel(
        ".global .align 4 .u32 v[4] = {1, 2, 3, 4}",
        "ld.global.u32 %r9, [v+4]; ld.global.u32 %r10, [v+12]; add.u32 %r9, %r9, %r10; cvt.u64.u32 %rd9, %r9; st.global.u64 [%rd3], %rd9;",
    );
    let m = parse(&src);
    let p = compile(&src);
    let mut l = args::launch(&m, "k", [1, 1, 1], [1, 1, 1], &[Arg::Buf(vec![0; 8])], 100_000).unwrap();
    l.module_init = vec![("v".into(), vec![9, 0, 0, 0, 7, 0, 0, 0])];
    let (want, got, diff) = exec::compare(&m, &p, &l).unwrap();
    assert!(diff.is_empty(), "{diff:?}");
    assert_eq!(args::buffer(&got.global, "arg0").unwrap(), 11u64.to_le_bytes());
    assert_eq!(args::buffer(&want.global, "arg0").unwrap(), 11u64.to_le_bytes());
    for bad in [("nope", 4), ("v", 17)] {
        let l = Launch { module_init: vec![(bad.0.to_string(), vec![0; bad.1])], ..l.clone() };
        assert!(exec::sim::run(&p, &l).is_err(), "{bad:?}");
    }
}

/// The comparison of module variables is not vacuous: the same launch with different
/// `--init` contents on the two executors differs in the variable and in the output.
#[test]
fn differing_variables_are_reported() {
    let src = kernel(
        ".global .u32 v = 1",
        "atom.global.add.u32 %r9, [v], 1; cvt.u64.u32 %rd9, %r9; st.global.u64 [%rd3], %rd9;",
    );
    let (m, p) = (parse(&src), compile(&src));
    let l = args::launch(&m, "k", [1, 1, 1], [1, 1, 1], &[Arg::Buf(vec![0; 8])], 100_000).unwrap();
    let a = exec::ptx::run(&m, &l).unwrap();
    let other = Launch { module_init: vec![("v".into(), vec![5, 0, 0, 0])], ..l };
    let b = exec::sim::run(&p, &other).unwrap();
    let d = exec::differences(&a.global, &b.global);
    let regions: Vec<&str> = d.iter().map(|x| x.region.as_str()).collect();
    assert_eq!(regions, ["arg0", "var_v"], "{d:?}");
}

/// ptxas 11.8's shape: the address from `MOV32I 32@lo/32@hi` pairs (one per variable and
/// block), constant offsets in the access (`LDG.E R, [R+0x8]`), generic accesses through
/// a register holding the address via `LD.E` with Plg (ptxas does not infer `.global`).
#[test]
fn lowering_shape_matches_ptxas() {
    let src = kernel(
        ".global .align 8 .u64 g[4]",
        "ld.global.u64 %rd9, [g+8]; ld.global.u64 %rd10, [g+24]; add.s64 %rd9, %rd9, %rd10; st.global.u64 [%rd3], %rd9; mov.u64 %rd5, tab; ld.u32 %r2, [%rd5+4]; cvt.u64.u32 %rd9, %r2; st.global.u64 [%rd3+8], %rd9;",
    );
    let code = listing::sass_text(&src, false);
    assert_eq!(listing::count(&code, "MOV32I"), 4, "{code:#?}");
    assert!(code.iter().any(|c| c.contains("32@lo(g)")) && code.iter().any(|c| c.contains("32@hi(g)")), "{code:#?}");
    assert!(code.iter().any(|c| c.starts_with("LDG.E.64") && c.ends_with("+0x8]")), "{code:#?}");
    assert!(code.iter().any(|c| c.starts_with("LDG.E.64") && c.ends_with("+0x18]")), "{code:#?}");
    assert!(code.iter().any(|c| c.starts_with("LEA.HI.X P")), "{code:#?}");
    assert!(code.iter().any(|c| c.starts_with("LD.E ")), "{code:#?}");
}

/// Bad declarations and initializers: an error at the offending text each, as ptxas
/// rejects them (its messages in the notes).
#[test]
fn bad_declarations_are_diagnosed() {
    let cases = [
        (".global .u32 a[2] = {1, 2, 3}", "has 3 values, the variable holds 2"),
        (".global .u64 a = nosuch", "`nosuch` in the initializer of `a` is not a variable"),
        (".global .u32 t; .global .u32 a = t", "needs a `.u64` element"),
        (".global .u32 t; .global .s64 a = t", "needs a `.u64` element"),
        (".const .u32 t = 1; .global .u64 a = generic(t)", "generic addresses of `.const` variables"),
        (".shared .u32 t; .global .u64 a = t", "is a `.shared` variable"),
        (".func f() { ret; } .global .u64 a = f", "is a function"),
        (".global .u64 a = k", "is a kernel"),
        (".global .f16 a = 0x3c00", "no initial value is allowed for `.f16`"),
        (".extern .global .u32 a[]", "has no size"),
    ];
    for (decl, want) in cases {
        let src = kernel(decl, "");
        let errs = listing::errors(&src);
        assert!(errs.iter().any(|e| e.contains(want)), "{decl}: {errs:?}");
    }
}
