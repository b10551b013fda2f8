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
//! * ptxas's texture and surface words (docs/textures.md §1.2) decode as nvdisasm prints
//!   them and encode back (`ptx2sass disasm`/`asm` of a ptxas cubin with textures).

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

/// ptxas 11.8's texture and surface words (docs/textures.md §1.2) and nvdisasm 11.8's text
/// of them (raw mode, no reuse bits: cuobjdump's `.P`/`.T` are the control word's reuse
/// flags), plus words of the nvdisasm sweeps (channel sets, sizes, geometries, a bindless
/// handle or coordinate register RZ, which nvdisasm omits).
const WORDS: &[(u64, &str)] = &[
    (0xd830050060570404, "TEXS R6, R4, R4, R5, 0x50, 2D, RGBA"),
    (0xd820050ff0570000, "TEXS RZ, R0, R0, R5, 0x50, 2D, R"),
    (0xd950050060670404, "TEXS R6, R4, R4, R6, 0x50, 3D, RGBA"),
    (0xd830054060570404, "TEXS R6, R4, R4, R5, 0x54, 2D, RGBA"),
    (0xda50054060570404, "TLDS.LZ R6, R4, R4, R5, 0x54, 2D, RGBA"),
    (0xdf00050060570404, "TLD4S.R R6, R4, R4, R5, 0x50"),
    (0xdeb80007a0270808, "TEX.B R8, R8, R2, 0x0, 2D, 0xf"),
    (0xdeb80002a0070a04, "TEX.B R4, R10, R0, 0x0, 2D, 0x5"),
    (0xdeb8000240070c06, "TEX.B R6, R12, R0, 0x0, 3D, 0x4"),
    (0xdef8004120071207, "TLD4.G.B R7, R18, R0, 0x0, 2D, 0x2"),
    (0xdf48050080470000, "TXQ R0, R0, TEX_HEADER_DIMENSION, 0x50, 0x1"),
    (0xdf50000100470609, "TXQ.B R9, R6, TEX_HEADER_DIMENSION, 0x0, 0x2"),
    (0xeb1c050000c70000, "SULD.D.BA.1D.TRAP R0, [R0], 0x50"),
    (0xeb1c050600c70400, "SULD.D.BA.2D.TRAP R0, [R4], 0x50"),
    (0xeb10030000c70b08, "SULD.D.BA.1D.IGN R8, [R11], R6"),
    (0xeb3c050000c70200, "SUST.D.BA.1D.TRAP [R2], R0, 0x50"),
    (0xeb3c050600c70200, "SUST.D.BA.2D.TRAP [R2], R0, 0x50"),
    (0xeb32030000c70b08, "SUST.D.BA.1D [R11], R8, R6"),
    // Sweeps.
    (0xd83c050ff0570000, "TEXS RZ, R0, R0, R5, 0x50, 2D, BA"),
    (0xd824050060570404, "TEXS R6, R4, R4, R5, 0x50, 2D, RGA"),
    (0xd832050060570404, "TEXS.NODEP R6, R4, R4, R5, 0x50, 2D, RGBA"),
    (0xd83005006ff70404, "TEXS R6, R4, R4, 0x50, 2D, RGBA"),
    (0xdeb80007aff70808, "TEX.B R8, R8, 0x0, 2D, 0xf"),
    (0xdeb80007f0070808, "TEX.B R8, R8, R0, 0x0, ARRAY_CUBE, 0xf"),
    (0xdf0005006ff70404, "TLD4S.R R6, R4, R4, RZ, 0x50"),
    (0xdf50000100870609, "TXQ.B R9, R6, TEX_HEADER_TEXTURE_TYPE, 0x0, 0x2"),
    (0xeb1c050600970400, "SULD.D.BA.2D.S8.TRAP R0, [R4], 0x50"),
    (0xeb1c050603c70400, "SULD.D.BA.2D.CV.TRAP R0, [R4], 0x50"),
    (0xeb1c050a00c70400, "SULD.D.BA.3D.TRAP R0, [R4], 0x50"),
    (0xeb3c050603c70200, "SUST.D.BA.2D.WT.TRAP [R2], R0, 0x50"),
    (0xeb12030000c70b08, "SULD.D.BA.1D R8, [R11], R6"),
    (0xeb107f8000c70b08, "SULD.D.BA.1D.IGN R8, [R11], RZ"),
];

#[test]
fn ptxas_texture_words_decode_as_nvdisasm_prints_them_and_encode_back() {
    use ptx2sass::sass::encode::{decode, encode_text};
    use ptx2sass::sass::text;
    let mut bad = vec![];
    for (w, want) in WORDS {
        let Some(d) = decode(*w, 0x100) else {
            bad.push(format!("{w:#018x}: no form (nvdisasm: {want})"));
            continue;
        };
        if d.text() != *want {
            bad.push(format!("{w:#018x}: ours `{}`, nvdisasm `{want}`", d.text()));
            continue;
        }
        let listing = format!("\t\tFunction : f\n        /*0100*/  {want}  ?WAIT1 ;\n");
        let f = &text::parse(&listing).unwrap()[0];
        match encode_text(&f.instrs[0], 0x100, &|_| None) {
            Ok((e, _)) if e == *w => {}
            Ok((e, _)) => bad.push(format!("{w:#018x}: `{want}` encodes to {e:#018x}")),
            Err(m) => bad.push(format!("{w:#018x}: `{want}` does not encode: {m}")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `ptx2sass disasm` of ptxas 11.8's cubins of the probes (texture objects, texture and
/// surface references, write masks) decodes every word, and `ptx2sass asm` of that listing
/// gives back ptxas's words, control words included (compared in `cuobjdump -sass`); the
/// hazard checker accepts ptxas's scheduling of them.
#[test]
fn ptxas_texture_cubins_round_trip_through_disasm_and_asm() {
    let Ok(bin) = nvidia::tools() else {
        eprintln!("skipped: no ptxas/cuobjdump");
        return;
    };
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/textures");
    for probe in ["probe_objects", "probe_refs", "probe_masks"] {
        let d = scratch(probe);
        let cubin = d.join("ptxas.cubin");
        let o = Command::new(bin.join("ptxas"))
            .args(["-arch=sm_50", "-O3", "-o"])
            .arg(&cubin)
            .arg(data.join(format!("{probe}.ptx")))
            .output()
            .unwrap();
        assert!(o.status.success(), "{probe}: {}", String::from_utf8_lossy(&o.stderr));
        let listing = d.join("ours.sass");
        let o = ptx2sass(&["disasm", cubin.to_str().unwrap(), "-o", listing.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success() && !err.contains("unknown instruction word"), "{probe}: {err}");
        // ptxas's own texture code passes the hazard checker (operand widths, queues).
        let o = ptx2sass(&["check", listing.to_str().unwrap()]);
        assert!(o.status.success(), "{probe}: {}", String::from_utf8_lossy(&o.stderr));
        let back = d.join("ours.cubin");
        let o = ptx2sass(&["asm", listing.to_str().unwrap(), "-o", back.to_str().unwrap()]);
        assert!(o.status.success(), "{probe}: {}", String::from_utf8_lossy(&o.stderr));
        let words = |c: &PathBuf| -> Vec<String> {
            let o = Command::new(bin.join("cuobjdump")).arg("-sass").arg(c).output().unwrap();
            String::from_utf8_lossy(&o.stdout).split("/* 0x").skip(1).map(|s| s.chars().take(16).collect()).collect()
        };
        let (want, got) = (words(&cubin), words(&back));
        assert!(want.len() > 20, "{probe}: {} words", want.len());
        assert_eq!(got, want, "{probe}");
    }
}

fn hazards(listing: &str) -> Vec<String> {
    let funcs = ptx2sass::sass::text::parse(listing).unwrap();
    ptx2sass::sched::check::check(&funcs)
        .expect("every opcode is in the checker's table")
        .iter()
        .map(|h| format!("{h:?}"))
        .collect()
}

/// The checker knows how many registers each texture and surface instruction writes and
/// reads (`sched::tex`): a read of the last register of a result without waiting for its
/// barrier is a hazard, of the register after it is not; so is overwriting the last
/// coordinate register before the (late) read, and not the register after.
#[test]
fn texture_results_and_coordinates_are_timed_by_their_width() {
    let cases = [
        // TEX.B with mask 0x5 packs x, z into R4, R5.
        ("TEX.B R4, R10, R0, 0x0, 2D, 0x5", "FADD R9, R5, R5", "FADD R9, R6, R6"),
        // TEXS RGBA: x, y in R4, R5; z, w in R6, R7.
        ("TEXS R6, R4, R2, R3, 0x50, 2D, RGBA", "FADD R9, R7, R7", "FADD R9, R8, R8"),
        // TEXS with Rd2 = RZ and two channels: R4, R5.
        ("TEXS RZ, R4, R2, R3, 0x50, 2D, RG", "FADD R9, R5, R5", "FADD R9, R6, R6"),
        // SULD .64: R4, R5.
        ("SULD.D.BA.2D.64.TRAP R4, [R2], 0x50", "IADD R9, R5, R5", "IADD R9, R6, R6"),
        // TXQ mask 0x3: R4, R5.
        ("TXQ R4, R2, TEX_HEADER_DIMENSION, 0x50, 0x3", "IADD R9, R5, R5", "IADD R9, R6, R6"),
        // 3D coordinates R12..R14 are read late: overwriting R14 at once is a hazard.
        ("TEX.B R4, R12, R0, 0x0, 3D, 0x1", "MOV R14, RZ", "MOV R15, RZ"),
        // 2D surface coordinates R2, R3.
        ("SUST.D.BA.2D.TRAP [R2], R8, 0x50", "MOV R3, RZ", "MOV R4, RZ"),
    ];
    for (fetch, bad, good) in cases {
        // A store writes no register and so sets no write barrier.
        let wr = if fetch.starts_with("SUST") { "" } else { "&wr5" };
        let listing = |next: &str| {
            format!(
                "\t\tFunction : k\n        /*0008*/  {fetch}  {wr} ?WAIT2 ;\n        /*0010*/  {next}  ?WAIT6 ;\n        /*0018*/  EXIT  ?WAIT15 ;\n"
            )
        };
        let h = hazards(&listing(bad));
        assert_eq!(h.len(), 1, "{fetch} / {bad}: {h:?}");
        assert!(hazards(&listing(good)).is_empty(), "{fetch} / {good}");
    }
}
