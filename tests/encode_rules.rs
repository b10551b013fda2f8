//! Lowerings that produced instructions SPA 5.0 cannot encode, found by encoding every
//! compiled program (debug builds encode everything: `driver::Options::check_encoding`).
//! Each kernel must compile (so it encodes), have the shape ptxas 11.8 gives it, and agree
//! on both executors (`ptx2sass run --compare`).

use ptx2sass::driver::{self, Emit, Options};
use std::process::Command;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// A kernel reading `pin[tid]` (`ty`) and writing `pout[tid]` through `body`, which sees
/// `%in` and must set `%out` (both of `ty`).
fn kernel(ty: &str, bytes: u32, body: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 pin, .param .u64 pout)\n{{\n\
         .reg .b64 %rd<8>;\n.reg .b32 %r<8>;\n.reg .b16 %h<4>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n.reg .pred %p<4>;\n\
         .reg {ty} %in;\n.reg {ty} %out;\n\
         ld.param.u64 %rd1, [pin];\nld.param.u64 %rd2, [pout];\nmov.u32 %r1, %tid.x;\n\
         mul.wide.u32 %rd3, %r1, {bytes};\nadd.s64 %rd4, %rd1, %rd3;\nadd.s64 %rd5, %rd2, %rd3;\n\
         ld.global{ty} %in, [%rd4];\n{body}\nst.global{ty} [%rd5], %out;\nret;\n}}\n"
    )
}

fn sass(src: &str) -> String {
    match driver::compile(src, &Options { emit: Emit::Sass, ..Options::default() }) {
        Ok(o) => o.text,
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("k.ptx", src).render_all(&d)),
    }
}

/// Both executors on 64 threads of random inputs of `elem` (`f32`, `f64`, `u32`).
fn compare(name: &str, src: &str, elem: &str) {
    let p = std::env::temp_dir().join(format!("ptx2sass-encode-rules-{}-{name}.ptx", std::process::id()));
    std::fs::write(&p, src).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
        .arg("run")
        .arg(&p)
        .args([
            "--kernel",
            "k",
            "--block",
            "64",
            "--compare",
            "--arg",
            &format!("rand:{elem}:64"),
            "--arg",
            "zeros:512",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&p);
    assert!(
        out.status.success(),
        "{name}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sel_takes_float_constants_from_a_register() {
    // SEL's immediate is a 20-bit integer: +INF (0x7f800000) needs MOV32I.
    let src = kernel(".f32", 4, "setp.gt.f32 %p1, %in, 0f00000000;\nselp.f32 %out, %in, 0f7F800000, %p1;");
    let s = sass(&src);
    assert!(!s.contains("0x7f800000, P") && !s.contains("0x7f800000, !P"), "{s}");
    assert!(s.contains("MOV32I") && s.contains("SEL"), "{s}");
    compare("sel", &src, "f32");
}

#[test]
fn float_to_8_bit_integers_clamp_after_a_32_bit_f2i() {
    for (cvt, ty) in [("cvt.rzi.u8.f32 %h1, %in;", "U32"), ("cvt.rzi.s8.f32 %h1, %in;", "S32")] {
        let src = kernel(".f32", 4, &format!("{cvt}\ncvt.s32.s16 %r2, %h1;\nmov.b32 %out, %r2;"));
        let src = src.replace(".reg .f32 %out;", ".reg .b32 %out;").replace("st.global.f32", "st.global.b32");
        let s = sass(&src);
        assert!(!s.contains("F2I.U8") && !s.contains("F2I.S8"), "{s}");
        assert!(s.contains(&format!("F2I.{ty}.F32.TRUNC")) && s.contains("IMNMX"), "{s}");
        compare(ty, &src, "f32");
    }
}

#[test]
fn integral_rounding_between_float_sizes_rounds_in_f64() {
    let src = kernel(".f32", 4, "cvt.rni.f64.f32 %fd1, %in;\ncvt.rn.f32.f64 %out, %fd1;");
    let s = sass(&src);
    assert!(s.contains("F2F.F64.F32") && s.contains("F2F.F64.F64.ROUND") && !s.contains("F2F.F64.F32.ROUND"), "{s}");
    compare("rni_up", &src, "f32");
    let src = kernel(".f64", 8, "cvt.rzi.f32.f64 %f1, %in;\ncvt.f64.f32 %out, %f1;");
    let s = sass(&src);
    assert!(s.contains("F2F.F64.F64.TRUNC") && s.contains("F2F.F32.F64.RZ"), "{s}");
    compare("rzi_down", &src, "f64");
}

#[test]
fn unused_exchange_stays_an_atom() {
    let src = kernel(".b32", 4, "atom.global.exch.b32 %r3, [%rd5], %in;\nmov.b32 %out, %in;");
    let s = sass(&src);
    assert!(s.contains("ATOM.E.EXCH RZ") && !s.contains("RED"), "{s}");
}

#[test]
fn rounded_float_adds_keep_their_rounding() {
    // FADD32I/FMUL32I have no rounding field.
    let src = kernel(".f32", 4, "add.rz.f32 %f1, %in, 0f3DCCCCCD;\nmul.rm.f32 %out, %f1, 0f3DCCCCCD;");
    let s = sass(&src);
    assert!(!s.contains("32I.R"), "{s}");
    compare("rz", &src, "f32");
}

#[test]
fn negated_multiplicand_moves_to_b() {
    // The f64 division's Newton steps are `DFMA e, -b, r, 1` in the lowering; DFMA has no
    // negate bit for A (`sass::legal::encodable`).
    let src = kernel(".f64", 8, "add.f64 %fd2, %in, 0d3FF0000000000000;\ndiv.rn.f64 %out, %in, %fd2;");
    let s = sass(&src);
    let dfma: Vec<&str> = s.lines().filter(|l| l.contains("DFMA")).collect();
    assert!(!dfma.is_empty(), "{s}");
    assert!(dfma.iter().all(|l| !l.split(',').nth(1).is_some_and(|a| a.trim().starts_with('-'))), "{s}");
    compare("dfma", &src, "f64");
}

#[test]
fn prefetch_offsets_fit_cctl() {
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 p)\n{{\n.reg .b64 %rd<3>;\nld.param.u64 %rd1, [p];\n\
         prefetch.global.L1 [%rd1+-16];\nprefetch.global.L2 [%rd1+6];\nret;\n}}\n"
    );
    let s = sass(&src);
    assert!(s.contains("CCTL.E.PF2 [R") && s.contains("+0x4]") && !s.contains("+-0x10]"), "{s}");
}
