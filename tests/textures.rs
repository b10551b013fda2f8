//! Texture and surface instructions (issue 18, first slice; docs/textures.md).
//!
//! * Every geometry and type of `tex`, `tld4`, `txq`, `suq`, `suld`, `sust`, `sured` parses,
//!   passes the checker and prints back (`--emit ast`) as a module that parses to the same
//!   text; ptxas 11.8 accepts the same module (when installed).
//! * Bad forms (wrong coordinate or result count, a geometry the instruction does not
//!   take, a missing clamp mode, a missing coordinate vector) are diagnostics at
//!   `file:line:col` with exit status 1, and ptxas rejects each of them too.
//! * Lowering, texture references and both executors reject what is not supported yet
//!   with a precise message, never a panic.

#[path = "common/nvidia.rs"]
mod nvidia;

use std::path::PathBuf;
use std::process::{Command, Output};

const HEADER: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-textures-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, src: &str) -> PathBuf {
    let p = scratch(name).join("in.ptx");
    std::fs::write(&p, src).unwrap();
    p
}

fn ptx2sass(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptx2sass")).args(args).output().unwrap()
}

/// A kernel with the registers every form below uses, around `body`.
fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 t)\n{{\n.reg .u64 %rd<6>;\n.reg .f32 %f<20>;\n.reg .b32 %r<10>;\nld.param.u64 %rd1, [t];\n{body}\nret;\n}}\n"
    )
}

/// One form of every instruction family and geometry, each accepted by ptxas 11.8.
const FORMS: &[&str] = &[
    "tex.1d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1}];",
    "tex.2d.v4.s32.s32 {%r3,%r4,%r5,%r6}, [%rd1, {%r1,%r2}];",
    "tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}];",
    "tex.3d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2,%f7,%f7}];",
    "tex.a1d.v4.u32.f32 {%r3,%r4,%r5,%r6}, [%rd1, {%r1,%f2}];",
    "tex.a2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%f2,%f7,%f7}];",
    "tex.cube.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2,%f7,%f7}];",
    "tex.acube.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%f2,%f7,%f7}];",
    "tex.2dms.v4.f32.s32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%r2,%r3,%r3}];",
    "tex.a2dms.v4.f32.s32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%r2,%r3,%r3}];",
    "tex.level.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}], %f9;",
    "tex.grad.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}], {%f9,%f10}, {%f11,%f12};",
    "tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, %rd2, {%f1,%f2}];",
    "tld4.r.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}];",
    "tld4.a.a2d.v4.s32.f32 {%r3,%r4,%r5,%r6}, [%rd1, {%r1,%f2,%f7,%f7}];",
    "txq.width.b32 %r1, [%rd1];",
    "txq.level.height.b32 %r1, [%rd1], %r2;",
    "txq.filter_mode.b32 %r1, [%rd1];",
    "suq.width.b32 %r1, [%rd1];",
    "suld.b.1d.b32.trap {%r1}, [%rd1, {%r2}];",
    "suld.b.2d.v4.b32.zero {%r1,%r2,%r3,%r4}, [%rd1, {%r2,%r3}];",
    "suld.b.3d.v2.b64.clamp {%rd2,%rd3}, [%rd1, {%r2,%r3,%r4,%r4}];",
    "suld.b.a2d.b8.trap {%r1}, [%rd1, {%r2,%r3,%r4,%r4}];",
    "sust.b.2d.b32.trap [%rd1, {%r2,%r3}], {%r1};",
    "sust.p.1d.v4.b32.zero [%rd1, {%r2}], {%r1,%r2,%r3,%r4};",
    "sured.b.add.2d.u32.trap [%rd1, {%r2,%r3}], %r1;",
    "sured.p.or.1d.b32.clamp [%rd1, {%r2}], %r1;",
];

/// Bad forms: the line, what our diagnostic must say, and the column it points at.
const BAD: &[(&str, &str, usize)] = &[
    ("tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2,%f7}];", "takes 2 coordinates `{x, y}`", 45),
    ("tex.3d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}];", "takes 4 coordinates `{x, y, z, _}`", 45),
    (
        "tld4.r.3d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2,%f3,%f3}];",
        "`tld4` does not take the geometry `.3d`",
        7,
    ),
    ("tex.2d.v4.f32.f32 {%f3,%f4,%f5}, [%rd1, {%f1,%f2}];", "has a result of 4 elements", 19),
    ("suld.b.2d.b32 {%r1}, [%rd1, {%r2,%r3}];", "`suld` needs a clamp mode", 1),
    ("suld.b.cube.b32.trap {%r1}, [%rd1, {%r2,%r3,%r4,%r4}];", "`suld` does not take the geometry `.cube`", 7),
    ("tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1];", "needs a texture or surface address", 38),
    ("txq.width.b32 %r1, [%rd1, {%r2}];", "reads `[a]`", 20),
    (
        "tex.level.2dms.v4.f32.s32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%r2,%r3,%r3}], %f1;",
        "does not take the geometry `.2dms`",
        10,
    ),
];

#[test]
fn every_form_parses_checks_and_prints_back() {
    let src = kernel(&FORMS.join("\n"));
    let p = write("forms", &src);
    let o = ptx2sass(&["compile", "--emit", "ast", p.to_str().unwrap()]);
    let ast = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in FORMS {
        let op = f.split(' ').next().unwrap();
        assert!(ast.contains(&format!("\t{op} ")), "{op} missing from\n{ast}");
    }
    // The printed module parses to the same text.
    let p2 = write("forms-again", &ast);
    let o2 = ptx2sass(&["compile", "--emit", "ast", p2.to_str().unwrap()]);
    assert!(o2.status.success(), "{}", String::from_utf8_lossy(&o2.stderr));
    assert_eq!(String::from_utf8_lossy(&o2.stdout), ast);
    if let Some(ptxas) = ptxas() {
        let o = Command::new(ptxas).args(["-arch=sm_50", "-o", "/dev/null"]).arg(&p).output().unwrap();
        assert!(o.status.success(), "ptxas rejects the forms: {}", String::from_utf8_lossy(&o.stderr));
    }
}

fn ptxas() -> Option<PathBuf> {
    match nvidia::tools() {
        Ok(b) => Some(b.join("ptxas")),
        Err(e) => {
            eprintln!("ptxas not checked: {e}");
            None
        }
    }
}

#[test]
fn bad_forms_are_diagnostics_at_their_line_and_column() {
    for (k, (line, needle, col)) in BAD.iter().enumerate() {
        let src = kernel(line);
        let p = write(&format!("bad{k}"), &src);
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{line}: {err}");
        assert!(err.contains(needle), "{line}: stderr lacks {needle:?}:\n{err}");
        // The kernel's lines: header (3), .entry, {, 3 .reg, ld.param, then the form.
        let at = format!("in.ptx:10:{col}");
        assert!(err.contains(&at), "{line}: stderr lacks {at}:\n{err}");
        assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
        assert!(!err.contains("not supported yet"), "{line}: a bad form must not reach lowering:\n{err}");
        if let Some(ptxas) = ptxas() {
            let o = Command::new(ptxas).args(["-arch=sm_50", "-o", "/dev/null"]).arg(&p).output().unwrap();
            assert!(!o.status.success(), "ptxas accepts {line}");
        }
    }
}

#[test]
fn lowering_rejects_each_form_as_not_supported_yet() {
    for (k, f) in FORMS.iter().enumerate() {
        let p = write(&format!("lower{k}"), &kernel(f));
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{f}: {err}");
        let text = f.split(' ').next().unwrap();
        assert!(err.contains(&format!("not supported yet: `{text}`")), "{f}:\n{err}");
        assert!(err.contains("in.ptx:10:1"), "{f}:\n{err}");
        assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
    }
}

#[test]
fn texture_references_are_recognised_and_rejected() {
    let src = format!(
        "{HEADER}.global .texref tr;\n.global .samplerref sm = {{ filter_mode = linear, addr_mode_0 = clamp }};\n.global .surfref sr;\n.visible .entry k() {{ ret; }}\n"
    );
    let o = ptx2sass(&["compile", write("refs", &src).to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for (ty, line) in [(".texref", 4), (".samplerref", 5), (".surfref", 6)] {
        assert!(err.contains(&format!("not supported yet: `{ty}` variables")), "{ty}:\n{err}");
        assert!(err.contains(&format!("in.ptx:{line}:1")), "{ty}:\n{err}");
    }
    let src = format!("{HEADER}.visible .entry k(.param .texref t) {{ ret; }}\n");
    let o = ptx2sass(&["compile", write("param", &src).to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not supported yet: `.texref`, `.samplerref` and `.surfref` parameters"), "{err}");
    assert!(err.contains("in.ptx:4:19"), "{err}");
    // Another dot word in the type's place is still a syntax error at that word.
    let src = format!("{HEADER}.global .nosuchtype x;\n");
    let o = ptx2sass(&["compile", write("other", &src).to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("invalid token") && err.contains("in.ptx:4:9"), "{err}");
}

#[test]
fn both_executors_reject_textures_without_panicking() {
    let src = kernel("tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}];");
    let p = write("run", &src);
    for exec in ["ptx", "sim"] {
        let o = ptx2sass(&["run", "--kernel", "k", "--exec", exec, p.to_str().unwrap(), "--arg", "i:0"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{exec}: {err}");
        assert!(err.contains("tex.2d.v4.f32.f32"), "{exec}: {err}");
        assert!(!err.contains("panicked"), "{exec}: {err}");
    }
}
