//! Lowering rules of the float special functions and divisions (`lower::arith::float`): the
//! MUFU sequences ptxas 11.8 uses for the `.approx` forms (observed with `ptxas -arch=sm_50
//! -O3`), the subnormal scaling of the non-`.ftz` forms, and the shape of the IEEE forms
//! (`lower::arith::float32`, `lower::arith::float_slow`).
//! Registers are normalized (`R#`, `P#`) as in `tests/lowering_rules.rs`.

#[path = "common/listing.rs"]
mod listing;

use listing::*;

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// A kernel that loads `%f1`, `%f2` (f32) and `%fd1`, `%fd2` (f64) from `out`, runs
/// `body` (which writes `%f3` or `%fd3`) and stores both.
fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<8>;\n.reg .f64 %fd<8>;\n\
         ld.param.u64 %rd1, [out];\nld.global.f32 %f1, [%rd1];\nld.global.f32 %f2, [%rd1+4];\n\
         ld.global.f64 %fd1, [%rd1+8];\nld.global.f64 %fd2, [%rd1+16];\n{body}\n\
         st.global.f32 [%rd1], %f3;\nst.global.f64 [%rd1+8], %fd3;\nret;\n}}\n"
    )
}

#[test]
fn sin_and_cos_reduce_the_range_first() {
    // ptxas: `RRO.SINCOS R12, R0; MUFU.SIN R12, R12`.
    let code = sass(&kernel("sin.approx.ftz.f32 %f3, %f1;\ncos.approx.f32 %f4, %f2;\nadd.f32 %f3, %f3, %f4;"));
    assert_run(&code, &["RRO.SINCOS R#, R#", "MUFU.SIN R#, R#"]);
    assert_run(&code, &["RRO.SINCOS R#, R#", "MUFU.COS R#, R#"]);
}

#[test]
fn ex2_reduces_and_rescales_subnormal_results() {
    let ftz = sass(&kernel("ex2.approx.ftz.f32 %f3, %f1;"));
    assert_run(&ftz, &["RRO.EX2 R#, R#", "MUFU.EX2 R#, R#"]);
    assert_eq!(count(&ftz, "FSETP"), 0);
    // Without .ftz: operands below -126 are halved and the result squared (ptxas:
    // `FSETP.GEU.AND P1, PT, R0, -126, PT` ... `@!P1 FMUL R13, R13, R13`).
    let code = sass(&kernel("ex2.approx.f32 %f3, %f1;"));
    assert_has(&code, "FSETP.GEU.AND P#, PT, R#, -126, PT");
    assert_has(&code, "FMUL R#, R#, 0.5");
    assert_run(&code, &["RRO.EX2 R#, R#", "MUFU.EX2 R#, R#"]);
}

#[test]
fn approximate_reciprocals_and_roots_scale_subnormal_operands() {
    let ftz = sass(&kernel("rcp.approx.ftz.f32 %f3, %f1;"));
    assert_eq!(count(&ftz, "MUFU.RCP"), 1);
    assert_eq!(count(&ftz, "FMUL"), 0);
    for (op, fix) in [("rcp", "16777216"), ("rsqrt", "4096"), ("sqrt", "0.000244140625")] {
        let code = sass(&kernel(&format!("{op}.approx.f32 %f3, %f1;")));
        assert_has(&code, "FSETP.GEU.AND P#, PT, |R#|, 1.1754943508222875e-38, PT");
        assert_has(&code, "FMUL R#, R#, 16777216");
        assert_has(&code, &format!("FMUL R#, R#, {fix}"));
    }
    let code = sass(&kernel("sqrt.approx.ftz.f32 %f3, %f1;"));
    assert_run(&code, &["MUFU.RSQ R#, R#", "MUFU.RCP R#, R#"]);
    let code = sass(&kernel("lg2.approx.f32 %f3, %f1;"));
    assert_has(&code, "FADD R#, R#, -24");
}

#[test]
fn div_approx_is_a_reciprocal_and_a_product() {
    let code = sass(&kernel("div.approx.f32 %f3, %f1, %f2;"));
    assert_run(&code, &["MUFU.RCP R#, R#", "FMUL R#, R#, R#"]);
}

#[test]
fn f64_reciprocal_estimate_has_a_zero_low_word() {
    // ptxas: `MUFU.RCP64H R5, R5; MOV R4, RZ`.
    let code = sass(&kernel("rcp.approx.ftz.f64 %fd3, %fd1;"));
    assert_eq!(count(&code, "MUFU.RCP64H"), 1);
    assert_eq!(count(&code, "DFMA"), 0);
}

#[test]
fn ieee_f32_division_has_an_f32_fast_path_and_an_f64_slow_path() {
    // `lower::arith::float32`: ptxas's fast path (MUFU, FFMA; FCHK.DIVIDE or ptxas's exponent
    // test), then a CAL of the slow path, which is widened exactly, refined in f64 and
    // rounded once by the requested mode.
    for (op, rnd, guard) in [
        ("div.rn.f32 %f3, %f1, %f2;", "", "FCHK.DIVIDE P#, R#, R#"),
        ("div.rz.f32 %f3, %f1, %f2;", ".RZ", "FCHK.DIVIDE P#, R#, R#"),
        ("div.full.f32 %f3, %f1, %f2;", "", "FCHK.DIVIDE P#, R#, R#"),
        ("rcp.rm.f32 %f3, %f1;", ".RM", "ISETP.LE.U32.AND"),
        ("sqrt.rp.f32 %f3, %f1;", ".RP", "ISETP.GT.U32.AND"),
    ] {
        let code = sass(&kernel(op));
        let cal = code.iter().position(|l| l.starts_with("CAL ")).unwrap_or_else(|| panic!("{op}: {code:?}"));
        let (fast, slow) = code.split_at(cal);
        assert_eq!(count(fast, "DFMA") + count(fast, "F2F"), 0, "{op}: {code:?}");
        assert_eq!(count(fast, guard), 1, "{op}: {code:?}");
        assert!(count(fast, "MUFU.RCP R#") + count(fast, "MUFU.RSQ R#") == 1, "{op}: {code:?}");
        assert!(count(slow, "F2F.F64.F32") >= 1, "{op}: {code:?}");
        assert!(count(slow, "DFMA") >= 5, "{op}: {code:?}");
        assert_eq!(count(slow, &format!("F2F.F32.F64{rnd} ")), 1, "{op}: {code:?}");
    }
}

#[test]
fn f64_division_rounds_the_reciprocal_then_corrects_the_quotient() {
    // The fast path: the instructions up to the range test's branch to (or around) the
    // slow path (`lower::arith::float_slow`), which follows the fast computation as in ptxas.
    let fast = |op: &str| -> Vec<String> {
        let code = sass(&kernel(op));
        let end = code.iter().position(|l| l.starts_with('@') && l.contains(" BRA ")).expect("a range test branch");
        code[..=end].to_vec()
    };
    let fp64 = |code: &[String]| ["DFMA", "DMUL", "DADD", "DSETP"].iter().map(|op| count(code, op)).sum::<usize>();
    let rn = fast("div.rn.f64 %fd3, %fd1, %fd2;");
    let rz = fast("div.rz.f64 %fd3, %fd1, %fd2;");
    let rcp = fast("rcp.rn.f64 %fd3, %fd2;");
    // The range test: the high words of both operands and of the quotient (ptxas: FSET on
    // `|a.hi|` and `|q.hi|`).
    assert_eq!(count(&rn, "FSETP"), 6, "{rn:?}");
    // ptxas's reciprocal (MUFU.RCP64H, 5 DFMA) made correctly rounded by one midpoint test
    // (the successor's 64-bit step, two residual DFMA, one DSETP; lower::arith::float,
    // "Range and rounding"), then ptxas's quotient (DMUL, 2 DFMA) and one Markstein
    // correction (2 DFMA): 13 FP64 instructions where the remainder-sign test on the
    // quotient took 15 (and about 20 integer ones); rcp.rn.f64 8 where it took 14.
    assert_eq!(fp64(&rn), 13, "{rn:?}");
    assert_eq!(fp64(&rcp), 8, "{rcp:?}");
    for code in [&rn, &rz, &rcp] {
        assert_eq!(count(code, "DSETP"), 1, "{code:?}");
        assert_eq!(count(code, "IADD.X"), 1, "{code:?}");
        assert_eq!(count(code, "DADD"), 0, "{code:?}");
    }
    // A directed mode: one more correction, rounded in the mode, from RN(a/b).
    assert_eq!(count(&rz, "DFMA"), count(&rn, "DFMA") + 2, "{rz:?}");
    assert_eq!(count(&rz, "DFMA.RZ"), 1, "{rz:?}");
    assert_has(&rz, "DFMA.RZ R#, R#, R#, R#");
}

#[test]
fn special_function_errors_name_the_instruction() {
    let e = errors(&kernel("sin.rn.f32 %f3, %f1;"));
    assert!(
        e.iter().any(|m| m.contains("`.rn` is not supported on `sin`") || m.contains("only defined with `.approx`")),
        "{e:?}"
    );
    let e = errors(&kernel("sqrt.f32 %f3, %f1;"));
    assert!(e.iter().any(|m| m.contains("needs `.approx` or a rounding modifier")), "{e:?}");
}
