//! Bad calls are diagnostics at the call (`file:line:col`, the offending text, exit status
//! 1), never panics or internal errors: argument lists of the wrong length or size,
//! undeclared callees, calls of kernels, indirect calls whose prototype does not match or
//! is missing. Errors inside functions nothing calls
//! are reported too (each function is compiled on its own), and the inlining options
//! choose what is inlined.

use std::path::PathBuf;
use std::process::{Command, Output};

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-calldiag-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `ptx2sass compile` on `src` with `args`.
fn compile(name: &str, src: &str, args: &[&str]) -> Output {
    let d = scratch(name);
    let input = d.join("in.ptx");
    std::fs::write(&input, src).unwrap();
    Command::new(env!("CARGO_BIN_EXE_ptx2sass")).arg("compile").arg(&input).args(args).output().unwrap()
}

/// Asserts status 1 and every `needle` in stderr.
#[track_caller]
fn assert_error(name: &str, src: &str, needles: &[&str]) {
    let o = compile(name, src, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{name}: status; stderr:\n{err}");
    for n in needles {
        assert!(err.contains(n), "{name}: stderr lacks {n:?}:\n{err}");
    }
    assert!(!err.contains("panicked") && !err.contains("internal error"), "{name}:\n{err}");
}

const F: &str =
    ".func (.param .b32 r) f(.param .b32 a)\n{\n.reg .b32 %v;\nld.param.b32 %v, [a];\nst.param.b32 [r], %v;\nret;\n}\n";

/// A kernel calling with `call` (after the header, `F`, the kernel's first three lines and
/// `decls`).
fn kernel(decls: &str, call: &str) -> String {
    format!(
        "{HEADER}{F}.visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{decls}\n{call}\nret;\n}}\n"
    )
}

#[test]
fn argument_lists_of_the_wrong_length() {
    let src = kernel(".param .b32 a;\n.param .b32 b;\n.param .b32 r;", "call (r), f, (a, b);");
    assert_error("count", &src, &["`f` takes 1 arguments and 1 return values", "in.ptx:18:1", "call (r), f, (a, b)"]);
    let src = kernel(".param .b32 a;", "call f, (a);");
    assert_error("rets", &src, &["`f` takes 1 arguments and 1 return values", "in.ptx:16:1"]);
}

#[test]
fn arguments_of_the_wrong_size() {
    let src = kernel(".param .b64 a;\n.param .b32 r;", "st.param.b64 [a], 1;\ncall (r), f, (a);");
    let want = "type of argument `a` (8 bytes) does not match formal parameter `a` of `f` (4 bytes)";
    assert_error("size", &src, &[want, "in.ptx:18:15"]);
    let src = kernel(".param .b32 r;", "call (r), f, (%rd1);");
    assert_error("regsize", &src, &["type of argument `%rd1` (.b64) does not match formal parameter `a` (.b32)"]);
}

#[test]
fn undeclared_callees_and_kernels() {
    let src = kernel(".param .b32 a;\n.param .b32 r;", "call (r), g, (a);");
    assert_error("undeclared", &src, &["undeclared identifier `g`", "in.ptx:17:11"]);
    let src = format!("{HEADER}.visible .entry j()\n{{\nret;\n}}\n.visible .entry k()\n{{\ncall j;\nret;\n}}\n");
    assert_error("kernel", &src, &["`j` is a kernel; only `.func`s can be called", "in.ptx:10:6"]);
}

#[test]
fn indirect_calls_need_a_matching_prototype() {
    let decls = ".param .b32 a;\n.param .b32 r;\nmov.u64 %rd1, f;";
    let src = kernel(
        &format!("{decls}\nproto: .callprototype (.param .b32 _) _ (.param .b32 _, .param .b32 _);"),
        "call (r), %rd1, (a), proto;",
    );
    assert_error("proto", &src, &["prototype `proto` takes 2 arguments and 1 return values", "in.ptx:19:1"]);
    let src = kernel(decls, "call (r), %rd1, (a), nope;");
    assert_error("noproto", &src, &["undeclared identifier `nope`", "in.ptx:18:22"]);
    let src = kernel(&format!("{decls}\nnope:"), "call (r), %rd1, (a), nope;");
    assert_error("notproto", &src, &["`nope` is not a `.callprototype` label"]);
    let src = kernel(
        ".param .b32 a;\n.param .b32 r;\nproto: .callprototype (.param .b32 _) _ (.param .b32 _);",
        "call (r), %r1, (a), proto;",
    );
    assert_error("narrow", &src, &["an indirect call needs a 64-bit register holding the function's address"]);
}

/// A return value over 48 bytes is no longer a diagnostic: it goes through memory
/// (`tests/real_calls.rs` runs such calls; this was `` `big` returns more than 48 bytes ``).
/// No kernel in the module: with one that does not call `big`, whole-program output drops
/// `big` as ptxas does (`lower::opt::unused`).
#[test]
fn return_values_beyond_the_registers() {
    let src = format!("{HEADER}.func (.param .align 8 .b8 r[64]) big()\n{{\nst.param.b32 [r], 1;\nret;\n}}\n");
    let o = compile("bigret", &src, &[]);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "stderr:\n{err}");
    assert!(out.contains("STL [R4], R"), "the callee stores through R4:\n{out}");
}

/// An error in a function that nothing calls is found: every function is compiled.
#[test]
fn errors_in_uncalled_functions_are_reported() {
    let src = format!(
        "{HEADER}.func g(.param .b64 a)\n{{\n.reg .b64 %d;\nld.param.b64 %d, [a];\nst.const.u32 [%d], 1;\nret;\n}}\n\
         .visible .entry k()\n{{\nret;\n}}\n"
    );
    assert_error("uncalled", &src, &["`st.const` is not allowed", "in.ptx:8:"]);
}

/// `--inline`: `never` keeps a small single-call function as a call, `always` inlines a
/// `.pragma "noinline"` one, `auto` honours the pragma; a `.weak` function is never
/// inlined (another module may replace it).
#[test]
fn inlining_options() {
    let src = |pragma: &str, linkage: &str| {
        format!(
            "{HEADER}{linkage}.func (.param .b32 r) f(.param .b32 a)\n{{\n{pragma}.reg .b32 %v;\nld.param.b32 %v, [a];\n\
             add.u32 %v, %v, 1;\nst.param.b32 [r], %v;\nret;\n}}\n\
             .visible .entry k(.param .u64 p)\n{{\n.reg .b32 %r;\n.reg .b64 %rd;\nld.param.u64 %rd, [p];\n\
             {{ .param .b32 a; .param .b32 r; st.param.b32 [a], 3; call (r), f, (a); ld.param.b32 %r, [r]; }}\n\
             st.global.u32 [%rd], %r;\nret;\n}}\n"
        )
    };
    let calls = |src: &str, mode: &str| -> usize {
        let o = compile(&format!("inline-{mode}"), src, &["--inline", mode]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let k = &text[text.find("Function : k").expect("kernel k")..];
        k.matches("CAL `(f)").count()
    };
    let plain = src("", "");
    assert_eq!(calls(&plain, "auto"), 0);
    assert_eq!(calls(&plain, "never"), 1);
    let pragma = src(".pragma \"noinline\";\n", "");
    assert_eq!(calls(&pragma, "auto"), 1);
    assert_eq!(calls(&pragma, "always"), 0);
    let weak = src("", ".weak ");
    assert_eq!(calls(&weak, "always"), 1);
}
