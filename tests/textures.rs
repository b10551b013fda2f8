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
#[path = "common/tex.rs"]
mod tex;

use tex::*;

use std::path::PathBuf;
use std::process::Command;

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
    "tex.grad.1d.v4.s32.f32 {%r3,%r4,%r5,%r6}, [%rd1, {%f1}], {%f9}, {%f11};",
    // Rejected: ptxas 11.8 emulates 3D gradients over the lane quad (docs/textures.md
    // §1.11). Lowered since (§1.12): the array index last, integer coordinates unconverted.
    "tex.grad.3d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2,%f7,%f7}], {%f9,%f10,%f7,%f7}, {%f11,%f12,%f7,%f7};",
    "tex.grad.a1d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%f2}], {%f9}, {%f11};",
    "tex.grad.2d.v4.f32.s32 {%f3,%f4,%f5,%f6}, [%rd1, {%r1,%r2}], {%f9,%f10}, {%f11,%f12};",
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
    // ptxas 11.8: "Incorrect type '.s64' for operation '.min' in instruction 'sured.b'",
    // "Unexpected instruction types specified for 'sured.b'".
    ("sured.b.min.1d.s64.trap [%rd1, {%r2}], %rd2;", "`.s64` is not a type of `sured.b.min`", 15),
    ("sured.b.and.1d.b64.trap [%rd1, {%r2}], %rd2;", "`.b64` is not a type of `sured.b.and`", 15),
    ("sured.p.add.1d.b64.trap [%rd1, {%r2}], %rd2;", "`.b64` is not a type of `sured.p.add`", 15),
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

/// The forms this slice lowers (the others stay "not supported yet").
const LOWERED: &[&str] = &[
    "tex.1d.v4.f32.f32",
    "tex.2d.v4.s32.s32",
    "tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [%rd1, {%f1,%f2}]",
    "tex.3d.v4.f32.f32",
    "tex.level.2d.v4.f32.f32",
    "tex.grad.2d.v4.f32.f32",
    "tex.grad.1d.v4.s32.f32",
    "tex.grad.a1d.v4.f32.f32",
    "tex.grad.2d.v4.f32.s32",
    "tex.a1d.v4.u32.f32",
    "tex.a2d.v4.f32.f32",
    "tex.2dms.v4.f32.s32",
    "tex.cube.v4.f32.f32",
    "tex.acube.v4.f32.f32",
    "tld4.r.2d.v4.f32.f32",
    "tld4.a.a2d.v4.s32.f32",
    "txq.width.b32",
    "txq.level.height.b32",
    "suq.width.b32",
    "suld.b.1d.b32.trap",
    "suld.b.2d.v4.b32.zero",
    "suld.b.3d.v2.b64.clamp",
    "suld.b.a2d.b8.trap",
    "sust.b.2d.b32.trap",
    "sured.b.add.2d.u32.trap",
    "sured.p.or.1d.b32.clamp",
    "sust.p.1d.v4.b32.zero",
];

#[test]
fn lowering_compiles_the_supported_forms_and_rejects_the_others() {
    for (k, f) in FORMS.iter().enumerate() {
        let p = write(&format!("lower{k}"), &kernel(f));
        let o = ptx2sass(&["compile", "--verify", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked") && !err.contains("internal error"), "{err}");
        if LOWERED.iter().any(|l| f.starts_with(l)) {
            assert!(o.status.success(), "{f}: {err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "{f}: {err}");
        let text = f.split(' ').next().unwrap();
        assert!(err.contains(&format!("not supported yet: `{text}`")), "{f}:\n{err}");
        assert!(err.contains("in.ptx:10:1"), "{f}:\n{err}");
    }
}

/// `.global .texref`/`.surfref` are accepted (unified mode, with or without attribute
/// initializers, which ptxas leaves out of the cubin; `tests/texrefs.rs` runs them);
/// `.samplerref` in unified mode (tests/surfaces.rs: independent mode) and reference
/// parameters are rejected at the declaration.
#[test]
fn texture_references_are_recognised() {
    let src = format!(
        "{HEADER}.global .texref tr = {{ filter_mode = linear }};\n.global .samplerref sm = {{ filter_mode = linear, addr_mode_0 = clamp }};\n.global .surfref sr;\n.visible .entry k() {{ ret; }}\n"
    );
    let o = ptx2sass(&["compile", write("refs", &src).to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("a `.samplerref` variable needs `.target ..., texmode_independent`"), "{err}");
    assert!(err.contains("in.ptx:5:1"), "{err}");
    assert!(err.contains("1 error"), "only the sampler is rejected:\n{err}");
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
fn a_texture_without_a_binding_is_a_precise_error_on_both_executors() {
    let p = write("run", &probe(&FETCH2D.replace('H', "%rd1")));
    for exec in ["ptx", "sim"] {
        let o = ptx2sass(&[
            "run",
            "--kernel",
            "k",
            "--exec",
            exec,
            p.to_str().unwrap(),
            "--arg",
            "i:0",
            "--arg",
            "zeros:16",
            "--arg",
            "zeros:16",
            "--block",
            "1",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{exec}: {err}");
        assert!(err.contains("no texture or surface has the handle 0x0"), "{exec}: {err}");
        assert!(err.contains("--texture"), "{exec}: {err}");
        assert!(!err.contains("panicked"), "{exec}: {err}");
    }
    // A binding that names no parameter, and texels that do not fill the image.
    let bin = scratch("nobind").join("t.bin");
    std::fs::write(&bin, [0u8; 16]).unwrap();
    let spec = |n: &str, dims: &str| format!("{n}=file:{},fmt=f32x4,dims={dims}", bin.display());
    let o = ptx2sass(&["run", "--kernel", "k", p.to_str().unwrap(), "--texture", &spec("u", "1")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`u` is not a parameter of kernel `k`"), "{err}");
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        "--texture",
        &spec("t", "2,1"),
        "--arg",
        "zeros:16",
        "--arg",
        "zeros:16",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("16 bytes of texels, but 2x1x1 texels of 16 bytes need 32"), "{err}");
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        "--texture",
        "t=zeros:16,fmt=u32,dims=4,filter=linear",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot be filtered linearly"), "{err}");
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        "--texture",
        "t=zeros:18446744073709551615,fmt=f32x4,dims=65536,65536,65536",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("memory limit"), "{err}");
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
    // probe_liveness.ptx: the forms of partial masks and integer coordinates.
    (0xc0380502aff70604, "TEX R4, R6, 0x50, 2D, 0x5"),
    (0xc03805032ff70604, "TEX R4, R6, 0x50, 2D, 0x6"),
    (0xc0380502cff70804, "TEX R4, R8, 0x50, 3D, 0x5"),
    (0xdc380502aff70604, "TLD.LZ R4, R6, 0x50, 2D, 0x5"),
    (0xdd380007a0270808, "TLD.B.LZ R8, R8, R2, 0x0, 2D, 0xf"),
    (0xc83805012ff70400, "TLD4.R R0, R4, 0x50, 2D, 0x2"),
    (0xc8380503aff70604, "TLD4.R R4, R6, 0x50, 2D, 0x7"),
    (0xd82c050ff0570000, "TEXS RZ, R0, R0, R5, 0x50, 2D, A"),
    (0xd82c050000670402, "TEXS R0, R2, R4, R6, 0x50, 2D, GBA"),
    (0xd954050ff0770604, "TEXS RZ, R4, R6, R7, 0x50, 3D, RA"),
    (0xda1005006ff70404, "TLDS.LZ R6, R4, R4, 0x50, 1D, RGBA"),
    (0xdaf0050060570404, "TLDS.LZ R6, R4, R4, R5, 0x50, 3D, RGBA"),
    // probe_slice4.ptx: levels, 1D integer coordinates, level queries.
    (0xd870050060670404, "TEXS.LL R6, R4, R4, R6, 0x50, 2D, RGBA"),
    (0xd860050ff0670400, "TEXS.LL RZ, R0, R4, R6, 0x50, 2D, R"),
    (0xc1b80502a0570604, "TEX.LL R4, R6, R5, 0x50, 2D, 0x5"),
    (0xc1b80507c0570404, "TEX.LL R4, R4, R5, 0x50, 3D, 0xf"),
    (0xdeb80067a0670808, "TEX.B.LL R8, R8, R6, 0x0, 2D, 0xf"),
    (0xdd38000780270808, "TLD.B.LZ R8, R8, R2, 0x0, 1D, 0xf"),
    (0xdc3805028ff70504, "TLD.LZ R4, R5, 0x50, 1D, 0x5"),
    (0xdf48050080470704, "TXQ R4, R7, TEX_HEADER_DIMENSION, 0x50, 0x1"),
    (0xdf48050200470706, "TXQ R6, R7, TEX_HEADER_DIMENSION, 0x50, 0x4"),
    (0xdf50000080470606, "TXQ.B R6, R6, TEX_HEADER_DIMENSION, 0x0, 0x1"),
    // probe_surfaces.ptx: sizes and 3D.
    (0xeb1c050000e70404, "SULD.D.BA.1D.128.TRAP R4, [R4], 0x50"),
    (0xeb1c050000a70400, "SULD.D.BA.1D.U16.TRAP R0, [R4], 0x50"),
    (0xeb18050600870400, "SULD.D.BA.2D.U8.IGN R0, [R4], 0x50"),
    (0xeb1a050600e70404, "SULD.D.BA.2D.128 R4, [R4], 0x50"),
    (0xeb14010600e70808, "SULD.D.BA.2D.128.TRAP R8, [R8], R2"),
    (0xeb1c050600d70202, "SULD.D.BA.2D.64.TRAP R2, [R2], 0x50"),
    (0xeb3c050600e70804, "SUST.D.BA.2D.128.TRAP [R8], R4, 0x50"),
    (0xeb38050600d70402, "SUST.D.BA.2D.64.IGN [R4], R2, 0x50"),
    (0xeb3a050600870402, "SUST.D.BA.2D.U8 [R4], R2, 0x50"),
    (0xeb3c050a00c70402, "SUST.D.BA.3D.TRAP [R4], R2, 0x50"),
    (0xeb38050400c70402, "SUST.D.BA.1D_ARRAY.IGN [R4], R2, 0x50"),
    (0xeb34010800d70804, "SUST.D.BA.2D_ARRAY.64.TRAP [R8], R4, R2"),
    // probe_grad.ptx: tex.grad (TXD; docs/textures.md §1.11).
    (0xde380507a0870404, "TXD R4, R4, R8, 0x50, 2D, 0xf"),
    (0xde380500a0870400, "TXD R0, R4, R8, 0x50, 2D, 0x1"),
    (0xde380502a0870404, "TXD R4, R4, R8, 0x50, 2D, 0x5"),
    (0xde780007a0c70808, "TXD.B R8, R8, R12, 0x0, 2D, 0xf"),
    (0xde78000120c70809, "TXD.B R9, R8, R12, 0x0, 2D, 0x2"),
    (0xde38050790670404, "TXD R4, R4, R6, 0x50, ARRAY_1D, 0xf"),
    (0xde380507b0870404, "TXD R4, R4, R8, 0x50, ARRAY_2D, 0xf"),
    // probe_arrays.ptx: tex.a1d, tex.a2d.
    (0xc03805079ff70404, "TEX R4, R4, 0x50, ARRAY_1D, 0xf"),
    (0xc03805009ff70400, "TEX R0, R4, 0x50, ARRAY_1D, 0x1"),
    (0xdc3805079ff70404, "TLD.LZ R4, R4, 0x50, ARRAY_1D, 0xf"),
    (0xdeb8000790270808, "TEX.B R8, R8, R2, 0x0, ARRAY_1D, 0xf"),
    (0xd8f0050060670404, "TEXS R6, R4, R4, R6, 0x50, ARRAY_2D, RGBA"),
    (0xc0380502bff70404, "TEX R4, R4, 0x50, ARRAY_2D, 0x5"),
    (0xdb10050060670404, "TLDS.LZ R6, R4, R4, R6, 0x50, ARRAY_2D, RGBA"),
    (0xdeb80007b0270808, "TEX.B R8, R8, R2, 0x0, ARRAY_2D, 0xf"),
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
    (0xc03a0502aff70604, "TEX.NODEP R4, R6, 0x50, 2D, 0x5"),
    (0xc0380502a0170604, "TEX R4, R6, R1, 0x50, 2D, 0x5"),
    (0xc93805012ff70400, "TLD4.G R0, R4, 0x50, 2D, 0x2"),
    (0xdc380502aff70604 ^ (1 << 28), "TLD.LZ R4, R6, 0x50, ARRAY_2D, 0x5"),
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

/// The probes of `tests/data/textures` (docs/textures.md §1) that both the round trip
/// through `disasm`/`asm` and the comparison of instruction shapes with ptxas 11.8 take;
/// the round trip takes `probe_refs` too.
const PROBES: [&str; 7] = [
    "probe_objects",
    "probe_masks",
    "probe_liveness",
    "probe_slice4",
    "probe_surfaces",
    "probe_arrays",
    "probe_grad_lowered",
];

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
    // The references' probe as well (its shapes are not compared below).
    for probe in ["probe_refs"].into_iter().chain(PROBES) {
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
        // TEXS ARRAY_2D reads `{index, x}` as the pair R2, R3 (ptxas 11.8 `TEXS.P R6, R4,
        // R4, R6, 0x50, ARRAY_2D, RGBA`): overwriting R3 at once is a hazard.
        ("TEXS R6, R4, R2, R8, 0x50, ARRAY_2D, RGBA", "MOV R3, RZ", "MOV R9, RZ"),
        // TEX ARRAY_1D reads `{index, x}` R12, R13.
        ("TEX R4, R12, 0x50, ARRAY_1D, 0x1", "MOV R13, RZ", "MOV R14, RZ"),
        // 2D surface coordinates R2, R3.
        ("SUST.D.BA.2D.TRAP [R2], R8, 0x50", "MOV R3, RZ", "MOV R4, RZ"),
        // TXQ.B reads the handle and the level as a pair R6, R7 (ptxas: `MOV R7, RZ`
        // before `TXQ.B R9, R6`): overwriting R7 at once is a hazard.
        ("TXQ.B R9, R6, TEX_HEADER_DIMENSION, 0x0, 0x2", "MOV R7, RZ", "MOV R8, RZ"),
        // TXD reads the gradient quad R8..R11 late (ptxas 11.8 `TXD.P R4, R4, R8, 0x50, 2D,
        // 0xf`, docs/textures.md §1.11); mask 0x5 writes R0, R1.
        ("TXD R0, R4, R8, 0x50, 2D, 0x5", "MOV R11, RZ", "MOV R12, RZ"),
        ("TXD R0, R4, R8, 0x50, 2D, 0x5", "FADD R13, R1, R1", "FADD R13, R2, R2"),
        // TXD.B reads `{handle, x, y}` R4..R6 (`TXD.B.P R8, R8, R12, 0x0, 2D, 0xf`).
        ("TXD.B R0, R4, R12, 0x0, 2D, 0xf", "MOV R6, RZ", "MOV R7, RZ"),
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

// ---- differential tests: each lowered form on both executors, expected values here ----

const FETCH2D: &str = "tex.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1,%f2}];\nmov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";

#[test]
fn tex_2d_point_and_linear_in_every_addressing_mode_bound_and_bindless() {
    let (t, bytes) = image(5, 3, 1);
    let coords: Vec<(f32, f32)> =
        vec![(0.0, 0.0), (1.3, 2.9), (4.99, 0.5), (-1.2, 1.5), (6.7, -2.25), (2.75, 3.6), (-7.1, 9.3)];
    for handle in ["%rd1", "%rd9"] {
        for (filter, linear) in [("point", false), ("linear", true)] {
            for mode in ["clamp", "wrap", "border", "mirror"] {
                for norm in [false, true] {
                    let spec = format!(
                        "--texture fmt=f32x4,dims=5,3,filter={filter},addr={mode}{}",
                        if norm { ",norm" } else { "" }
                    );
                    let input: Vec<[u32; 4]> = coords
                        .iter()
                        .map(|&(u, v)| {
                            if norm {
                                [(u / 5.0).to_bits(), (v / 3.0).to_bits(), 0, 0]
                            } else {
                                [u.to_bits(), v.to_bits(), 0, 0]
                            }
                        })
                        .collect();
                    let name = format!("t2d-{}-{filter}-{mode}-{norm}", &handle[1..]);
                    let (out, _) = run_probe(&name, &FETCH2D.replace('H', handle), (&spec, &bytes), &input);
                    for (k, q) in input.iter().enumerate() {
                        let (mut u, mut v) = (f32::from_bits(q[0]), f32::from_bits(q[1]));
                        if norm {
                            (u, v) = (u * 5.0, v * 3.0);
                        }
                        let want = sample2d(&t, (5, 3), (u, v), linear, mode);
                        assert_eq!(floats(&out[4 * k..4 * k + 4]), want, "{name} at {:?}", coords[k]);
                    }
                }
            }
        }
    }
}

#[test]
fn tex_1d_3d_integer_coordinates_gather_and_query() {
    // 1D: a 2D fetch at y = 0 in SASS; the image's rank decides that y is ignored.
    let (t, bytes) = image(6, 1, 1);
    let input: Vec<[u32; 4]> = [0.25f32, 3.5, 5.9, -2.0, 7.5].iter().map(|u| [u.to_bits(), 0, 0, 0]).collect();
    let body = "tex.1d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1}];\nmov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";
    for h in ["%rd1", "%rd9"] {
        let (out, _) = run_probe(
            &format!("t1d{}", &h[1..]),
            &body.replace('H', h),
            ("--texture fmt=f32x4,dims=6,filter=linear", &bytes),
            &input,
        );
        for (k, q) in input.iter().enumerate() {
            let want = sample2d(&t, (6, 1), (f32::from_bits(q[0]), 0.5), true, "clamp");
            assert_eq!(floats(&out[4 * k..4 * k + 4]), want, "1D {h} at {}", f32::from_bits(q[0]));
        }
    }
    // 3D, point sampling, clamp.
    let (t, bytes) = image(4, 3, 2);
    let pts = [(0.5f32, 0.5f32, 0.5f32), (3.9, 2.1, 1.7), (-1.0, 5.0, 9.0), (2.2, 1.1, 0.0)];
    let input: Vec<[u32; 4]> = pts.iter().map(|p| [p.0.to_bits(), p.1.to_bits(), p.2.to_bits(), 0]).collect();
    let body = "tex.3d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1,%f2,%f3,%f3}];\nmov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";
    for h in ["%rd1", "%rd9"] {
        let (out, _) = run_probe(
            &format!("t3d{}", &h[1..]),
            &body.replace('H', h),
            ("--texture fmt=f32x4,dims=4,3,2", &bytes),
            &input,
        );
        for (k, p) in pts.iter().enumerate() {
            let c = |v: f32, n: i64| (v.floor() as i64).clamp(0, n - 1);
            let want = t[((c(p.2, 2) * 3 + c(p.1, 3)) * 4 + c(p.0, 4)) as usize];
            assert_eq!(floats(&out[4 * k..4 * k + 4]), want, "3D {h} at {p:?}");
        }
    }
    // Integer coordinates (bound: TLDS.LZ), a u32 image: (v, 0, 0, 1).
    let words: Vec<u32> = (0..12).map(|k| 7 * k + 3).collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let ij = [(0i32, 0i32), (3, 2), (5, -1), (-3, 1)];
    let input: Vec<[u32; 4]> = ij.iter().map(|&(i, j)| [i as u32, j as u32, 0, 0]).collect();
    let body = "tex.2d.v4.u32.s32 {%r5,%r6,%r7,%r8}, [%rd1, {%r1,%r2}];";
    let (out, _) = run_probe("tlds", body, ("--texture fmt=u32,dims=4,3,addr=wrap", &bytes), &input);
    for (k, &(i, j)) in ij.iter().enumerate() {
        let v = words[(j.rem_euclid(3) * 4 + i.rem_euclid(4)) as usize];
        assert_eq!(out[4 * k..4 * k + 4], [v, 0, 0, 1], "TLDS at {i},{j}");
    }
    // tld4.g, bound (TLD4S) and bindless (TLD4.B): component y of the four footprint texels.
    let (t, bytes) = image(5, 3, 1);
    let pts = [(1.2f32, 1.7f32), (0.1, 0.1), (4.8, 2.9)];
    let input: Vec<[u32; 4]> = pts.iter().map(|p| [p.0.to_bits(), p.1.to_bits(), 0, 0]).collect();
    let body = "tld4.g.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1,%f2}];\nmov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";
    for h in ["%rd1", "%rd9"] {
        let (out, _) = run_probe(
            &format!("tld4{}", &h[1..]),
            &body.replace('H', h),
            ("--texture fmt=f32x4,dims=5,3", &bytes),
            &input,
        );
        for (k, p) in pts.iter().enumerate() {
            let (i, j) = ((p.0 - 0.5).floor() as i64, (p.1 - 0.5).floor() as i64);
            let g = |x: i64, y: i64| t[(y.clamp(0, 2) * 5 + x.clamp(0, 4)) as usize][1];
            let want = [g(i, j + 1), g(i + 1, j + 1), g(i + 1, j), g(i, j)];
            assert_eq!(floats(&out[4 * k..4 * k + 4]), want, "tld4 {h} at {p:?}");
        }
    }
    // txq width/height/depth, bound (TXQ) and bindless (TXQ.B).
    let body = "txq.width.b32 %r5, [H];\ntxq.height.b32 %r6, [H];\ntxq.depth.b32 %r7, [H];";
    let (_, bytes) = image(4, 3, 2);
    for h in ["%rd1", "%rd9"] {
        let (out, _) = run_probe(
            &format!("txq{}", &h[1..]),
            &body.replace('H', h),
            ("--texture fmt=f32x4,dims=4,3,2", &bytes),
            &[[0; 4]],
        );
        assert_eq!(out, [4, 3, 2, 0], "txq {h}");
    }
}

#[test]
fn surface_loads_and_stores_in_each_out_of_range_mode() {
    // A 4 x 3 surface of u32; thread i loads at (x, y) = (in.x, in.y), stores in.w at
    // (in.z, in.y) and loads 1D (row 0) at in.z. No two threads touch the same word (the
    // executors interleave threads differently).
    let words: Vec<u32> = (0..12).map(|k| 0x100 + k).collect();
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    for (mode, sfx) in [("clamp", ".clamp"), ("zero", ".zero"), ("trap", ".trap")] {
        for h in ["%rd1", "%rd9"] {
            let body = format!(
                "suld.b.2d.b32{sfx} {{%r5}}, [H, {{%r1,%r2}}];\nsust.b.2d.b32{sfx} [H, {{%r3,%r2}}], {{%r4}};\nsuld.b.1d.b32{sfx} {{%r6}}, [H, {{%r3}}];"
            )
            .replace('H', h);
            let inside = [[4u32, 1, 8, 0xaa], [12, 2, 4, 0xbb]];
            let outside = [[16u32, 1, 20, 0xcc], [(-4i32) as u32, 5, (-8i32) as u32, 0xdd]];
            let input: Vec<[u32; 4]> =
                if mode == "trap" { inside.to_vec() } else { inside.iter().chain(&outside).copied().collect() };
            let name = format!("surf-{mode}-{}", &h[1..]);
            let (out, after) = run_probe(&name, &body, ("--surface fmt=u32,dims=4,3", &bytes), &input);
            let mut want_img = words.clone();
            for (k, q) in input.iter().enumerate() {
                let (x, y, xs) = (q[0] as i32 as i64, q[1] as i32 as i64, q[2] as i32 as i64);
                let load = |x: i64, y: i64, img: &[u32]| -> u32 {
                    let fits = (0..=12).contains(&x) && (0..3).contains(&y);
                    match (fits, mode) {
                        (true, _) => img[(y * 4 + x / 4) as usize],
                        (false, "clamp") => img[(y.clamp(0, 2) * 4 + x.clamp(0, 12) / 4) as usize],
                        _ => 0,
                    }
                };
                assert_eq!(out[4 * k], load(x, y, &words), "{name}: suld 2D at {x},{y}");
                assert_eq!(out[4 * k + 1], load(xs, 0, &words), "{name}: suld 1D at {xs}");
                let fits = (0..=12).contains(&xs) && (0..3).contains(&y);
                if fits || mode == "clamp" {
                    want_img[(y.clamp(0, 2) * 4 + xs.clamp(0, 12) / 4) as usize] = q[3];
                }
            }
            let got: Vec<u32> = after.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            assert_eq!(got, want_img, "{name}: surface after the stores");
        }
    }
    // `.trap` out of range is an error on both executors, not a value.
    let body = "suld.b.1d.b32.trap {%r5}, [%rd1, {%r1}];";
    let dir = scratch("trap");
    let p = write("trap", &probe(body));
    let img = dir.join("img.bin");
    std::fs::write(&img, &bytes).unwrap();
    let inp = dir.join("in.bin");
    std::fs::write(&inp, [64u32, 0, 0, 0].iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    for exec in ["ptx", "sim"] {
        let o = ptx2sass(&[
            "run",
            "--kernel",
            "k",
            p.to_str().unwrap(),
            "--exec",
            exec,
            "--surface",
            &format!("t=file:{},fmt=u32,dims=4,3", img.display()),
            "--arg",
            "zeros:16",
            "--arg",
            &format!("file:{}", inp.display()),
            "--block",
            "1",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{exec}: {err}");
        assert!(err.contains("x = 64 bytes, y = 0 is out of range (.trap)"), "{exec}: {err}");
    }
}

/// The texture and surface instructions of a `cuobjdump -sass` or ptx2sass listing, per
/// function: the text with `.P`/`.T` (reuse flags) dropped and register numbers erased
/// (`R6` → `R`, `RZ` kept), or only the opcode with `opcode_only`.
fn texture_lines(listing: &str, opcode_only: bool) -> Vec<(String, Vec<String>)> {
    let ops = ["TEXS", "TLDS", "TLD4S", "TEX", "TLD", "TLD4", "TXD", "TXQ", "SULD", "SUST"];
    let mut out: Vec<(String, Vec<String>)> = vec![];
    for line in listing.lines() {
        if let Some(f) = line.split("Function : ").nth(1) {
            out.push((f.trim().to_string(), vec![]));
            continue;
        }
        let Some(body) = line.split("*/").nth(1) else { continue };
        // `}` closes a dual-issue pair in cuobjdump's text.
        let text = body.split(['&', '?', ';', '}']).next().unwrap_or("").trim();
        let op = text.split([' ', '.']).next().unwrap_or("");
        if !ops.contains(&op) {
            continue;
        }
        let (head, rest) = text.split_once(' ').unwrap_or((text, ""));
        let head: Vec<&str> = head.split('.').filter(|m| *m != "P" && *m != "T").collect();
        let mut t = head.join(".");
        if !opcode_only {
            let mut r = String::new();
            let mut chars = rest.chars().peekable();
            while let Some(c) = chars.next() {
                r.push(c);
                if c == 'R' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                        chars.next();
                    }
                }
            }
            t = format!("{t} {r}");
        }
        if let Some(last) = out.last_mut() {
            last.1.push(t);
        }
    }
    out.sort();
    out
}

/// ptxas 11.8's opcode and operand shape (registers erased) per texture instruction of
/// each probe equal ours: `probe_objects.ptx` (texture objects), `probe_masks.ptx` and
/// `probe_liveness.ptx` (write masks narrowed to the components read, `lower::tex::mask`,
/// and the forms ptxas picks for them: `TEX`/`TLD.LZ`/`TLD4` bound where `TEXS`/`TLDS`/
/// `TLD4S` cannot name the mask), `probe_slice4.ptx` (`txq.level`, `suq`, `tex.1d` with
/// `.s32` coordinates as `TLDS.LZ`/`TLD.LZ`/`TLD.B.LZ ... 1D`, `tex.level` as `TEXS.LL`/
/// `TEX.LL`/`TEX.B.LL`), `probe_surfaces.ptx` (`SULD`/`SUST` `.U8`, `.U16`, `.64`, `.128`,
/// `.3D`), `probe_arrays.ptx` (`tex.a1d`/`tex.a2d` as `TEX`/`TLD.LZ`/`TEX.B ... ARRAY_1D`,
/// `TEXS`/`TLDS.LZ`/`TEX`/`TEX.B ... ARRAY_2D`), `probe_grad_lowered.ptx` (`tex.grad` 1D
/// and 2D as `TXD`/`TXD.B` with partial masks).
#[test]
fn the_opcode_and_operand_shape_of_each_form_are_ptxas_s() {
    let Some(ptxas) = ptxas() else { return };
    let cuobjdump = ptxas.with_file_name("cuobjdump");
    for probe in PROBES {
        let src = format!("{}/tests/data/textures/{probe}.ptx", env!("CARGO_MANIFEST_DIR"));
        let cubin = scratch(probe).join("ref.cubin");
        let o = Command::new(&ptxas).args(["-arch=sm_50", "-O3", &src, "-o"]).arg(&cubin).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = Command::new(&cuobjdump).arg("-sass").arg(&cubin).output().unwrap();
        let theirs = texture_lines(&String::from_utf8_lossy(&o.stdout), false);
        let o = ptx2sass(&["compile", "--verify", &src]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let ours = texture_lines(&String::from_utf8_lossy(&o.stdout), false);
        assert!(theirs.iter().map(|f| f.1.len()).sum::<usize>() >= 3, "{theirs:?}");
        assert_eq!(ours, theirs, "{probe}: ptx2sass (left) and ptxas 11.8 (right)");
    }
}
