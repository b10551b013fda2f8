//! Lowering rules of the atomic and warp-level instructions (issue 7, sync part): each test
//! compiles a small kernel and looks for the SASS ptxas 11.8 emits for the same PTX on
//! sm_50 (observations quoted in `sass::sync`, `lower::mem::atom`, `lower::warp`), registers
//! normalized (`R#`, `P#`).

#[path = "common/listing.rs"]
mod listing;

use listing::*;
use ptx2sass::driver::{self, Emit, Options};

/// A kernel with `%rd1` = out (u64), `%rd2` = gp (u64), `%r1` = i (u32) loaded, a 1 KiB
/// shared array `sh`, and `%f1` = a float loaded from `[%rd2]`.
fn kernel(body: &str) -> String {
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n.shared .align 16 .b8 sh[1024];\n\
         .visible .entry k(.param .u64 out, .param .u64 gp, .param .u32 i)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n.reg .f32 %f<16>;\n\
         ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [gp];\nld.param.u32 %r1, [i];\nld.global.f32 %f1, [%rd2];\n\
         {body}\nret;\n}}\n"
    )
}

#[test]
fn global_atomics_are_atom_e_and_red_e() {
    // ptxas 11.8: ATOM.E.ADD / ATOM.E.MIN.S32 / ATOM.E.ADD.F32.FTZ.RN / ATOM.E.ADD.U64 /
    // ATOM.E.MIN.S64 / ATOM.E.EXCH.U64; RED.E.ADD when the result is unused.
    let cases = [
        ("atom.global.add.u32 %r2, [%rd2], %r1;", "ATOM.E.ADD R#, [R#], R#"),
        ("atom.global.min.s32 %r2, [%rd2+4], %r1;", "ATOM.E.MIN.S32 R#, [R#+0x4], R#"),
        ("atom.global.max.u32 %r2, [%rd2], %r1;", "ATOM.E.MAX R#, [R#], R#"),
        ("atom.global.inc.u32 %r2, [%rd2], %r1;", "ATOM.E.INC R#, [R#], R#"),
        ("atom.global.add.f32 %f2, [%rd2], %f1;", "ATOM.E.ADD.F32.FTZ.RN R#, [R#], R#"),
        ("cvt.u64.u32 %rd3, %r1;\natom.global.add.u64 %rd4, [%rd2], %rd3;", "ATOM.E.ADD.U64 R#, [R#], R#"),
        ("cvt.u64.u32 %rd3, %r1;\natom.global.min.s64 %rd4, [%rd2], %rd3;", "ATOM.E.MIN.S64 R#, [R#], R#"),
        ("cvt.u64.u32 %rd3, %r1;\natom.global.exch.b64 %rd4, [%rd2], %rd3;", "ATOM.E.EXCH.U64 R#, [R#], R#"),
    ];
    for (body, want) in cases {
        let store = if body.contains("%rd4") {
            "st.global.u64 [%rd1], %rd4;"
        } else if body.contains("%f2") {
            "st.global.f32 [%rd1], %f2;"
        } else {
            "st.global.u32 [%rd1], %r2;"
        };
        assert_has(&sass(&kernel(&format!("{body}\n{store}"))), want);
    }
    let code = sass(&kernel("atom.global.add.u32 %r2, [%rd2], %r1;\nred.global.max.s32 [%rd2+8], %r1;"));
    assert_has(&code, "RED.E.ADD [R#], R#");
    assert_has(&code, "RED.E.MAX.S32 [R#+0x8], R#");
    assert_eq!(count(&code, "ATOM"), 0, "unused results need no ATOM");
}

#[test]
fn cas_takes_compare_and_new_in_consecutive_registers() {
    // ptxas 11.8: `ATOM.E.CAS R0, [R4], R6, R7`, `ATOM.E.CAS.64 R26, [R28+0x30], R8, R10`,
    // `ATOMS.CAS R20, [R14], R20, R21`.
    for (body, op, step) in [
        ("atom.global.cas.b32 %r2, [%rd2], %r1, %r3;\nst.global.u32 [%rd1], %r2;", "ATOM.E.CAS", 1),
        ("atom.shared.cas.b32 %r2, [sh+8], %r1, %r3;\nst.global.u32 [%rd1], %r2;", "ATOMS.CAS", 1),
        (
            "cvt.u64.u32 %rd3, %r1;\nld.global.u64 %rd5, [%rd2+8];\natom.global.cas.b64 %rd4, [%rd2], %rd3, %rd5;\nst.global.u64 [%rd1], %rd4;",
            "ATOM.E.CAS.64",
            2,
        ),
    ] {
        let body = format!("ld.global.u32 %r3, [%rd2+4];\n{body}");
        let code = sass_text(&kernel(&body), false);
        let line = code.iter().find(|l| l.starts_with(&format!("{op} "))).unwrap_or_else(|| panic!("{op} in {code:?}"));
        let regs: Vec<u32> =
            line.split([' ', ',']).filter_map(|w| w.strip_prefix('R').and_then(|n| n.parse().ok())).collect();
        let (b, c) = (regs[regs.len() - 2], regs[regs.len() - 1]);
        assert_eq!(c, b + step, "`{line}`: the new value follows the compare value");
        assert_eq!(b % (2 * step), 0, "`{line}`: an aligned pair/quad");
    }
}

#[test]
fn shared_atomics_are_atoms_or_cas_loops() {
    let code = sass(&kernel("mov.u32 %r3, 1;\natom.shared.add.u32 %r2, [sh+4], %r3;"));
    assert_has(&code, "ATOMS.ADD RZ, [0x4], R#");
    // ATOMS has no f32 add: LDS, FADD.FTZ, ATOMS.CAS, compare, retry (ptxas 11.8).
    let code = sass(&kernel("atom.shared.add.f32 %f2, [sh+8], %f1;\nst.global.f32 [%rd1], %f2;"));
    assert_has(&code, "LDS.U.32 R#, [0x8]");
    assert_has(&code, "FADD.FTZ R#, R#, R#");
    assert_has(&code, "ATOMS.CAS R#, [0x8], R#, R#");
    assert_has(&code, "ISETP.NE.U32.AND P#, PT, R#, R#, PT");
    // 64-bit add: LDS.U.64, IADD/IADD.X, ATOMS.CAS.64, 64-bit compare.
    let code =
        sass(&kernel("cvt.u64.u32 %rd3, %r1;\natom.shared.add.u64 %rd4, [sh+16], %rd3;\nst.global.u64 [%rd1], %rd4;"));
    assert_has(&code, "LDS.U.64 R#, [0x10]");
    assert_has(&code, "ATOMS.CAS.64 R#, [0x10], R#, R#");
    assert_has(&code, "ISETP.NE.U32.X.AND P#, PT, R#, R#, PT");
}

#[test]
fn generic_atomics_split_on_the_shared_window() {
    // ptxas 11.8: LEA/LEA.HI.X window test, `@!P1` → `LOP32I.AND R, R, 0xffffff; ATOMS.ADD`,
    // else `ATOM.E.ADD`. The two short arms are if-converted (`lower/cfg/ifconv.rs`): each
    // atomic runs under its side of the window predicate, and a SEL joins the results.
    let code = sass(&kernel("atom.add.u32 %r2, [%rd2], %r1;\nst.global.u32 [%rd1], %r2;"));
    assert_has(&code, "LEA.HI.X P#, R#, R#, RZ, R#");
    assert_run(
        &code,
        &["@!P# LOP32I.AND R#, R#, 0xffffff", "@!P# ATOMS.ADD R#, [R#], R#", "@P# ATOM.E.ADD R#, [R#], R#"],
    );
    assert_eq!(count(&code, "SEL "), 1, "{code:#?}");
}

#[test]
fn memory_order_qualifiers_put_membars_around_the_atomic() {
    let code = sass(&kernel("atom.acq_rel.gpu.global.add.u32 %r2, [%rd2], %r1;\nst.global.u32 [%rd1], %r2;"));
    assert_run(&code, &["MEMBAR.GL.IVALLD", "ATOM.E.ADD R#, [R#], R#", "MEMBAR.GL.IVALLD"]);
    let code = sass(&kernel("atom.relaxed.cta.global.add.u32 %r2, [%rd2], %r1;\nst.global.u32 [%rd1], %r2;"));
    assert_eq!(count(&code, "MEMBAR"), 0);
    let code = sass(&kernel("red.release.cta.shared.add.u32 [sh], %r1;"));
    assert_run(&code, &["MEMBAR.CTA", "ATOMS.ADD RZ, [RZ], R#"]);
}

#[test]
fn bad_atomics_are_diagnosed() {
    for (body, want) in [
        ("atom.global.inc.s32 %r2, [%rd2], %r1;", "does not take"),
        ("atom.global.add.f64 %rd3, [%rd2], %rd4;", "requires `.target sm_60` or higher"),
        ("red.global.cas.b32 [%rd2], %r1, %r2;", "no `.cas`"),
        ("atom.global.add.u32 %r2, [%rd2];", "operands"),
    ] {
        let e = errors(&kernel(body));
        assert!(e.iter().any(|m| m.contains(want)), "{body}: {e:?}");
    }
}

#[test]
fn shfl_and_vote_map_one_to_one() {
    let code = sass(&kernel(
        "shfl.down.b32 %r2, %r1, 16, 31;\nshfl.up.b32 %r3|%p1, %r1, 1, 0;\nshfl.sync.idx.b32 %r4, %r1, %r2, 31, -1;\n\
         selp.u32 %r5, 1, 0, %p1;\nadd.u32 %r6, %r2, %r3;\nadd.u32 %r6, %r6, %r4;\nadd.u32 %r6, %r6, %r5;\nst.global.u32 [%rd1], %r6;",
    ));
    assert_has(&code, "SHFL.DOWN PT, R#, R#, 0x10, 0x1f");
    assert_has(&code, "SHFL.UP P#, R#, R#, 0x1, 0x0");
    assert_has(&code, "SHFL.IDX PT, R#, R#, R#, 0x1f");
    let code = sass(&kernel(
        "setp.ne.u32 %p1, %r1, 7;\nvote.ballot.b32 %r2, %p1;\nactivemask.b32 %r3;\nvote.all.pred %p2, %p1;\nvote.uni.pred %p3, !%p1;\n\
         selp.u32 %r4, 1, 0, %p2;\nselp.u32 %r5, 1, 0, %p3;\nadd.u32 %r6, %r2, %r3;\nadd.u32 %r6, %r6, %r4;\nadd.u32 %r6, %r6, %r5;\nst.global.u32 [%rd1], %r6;",
    ));
    assert_has(&code, "VOTE.ANY R#, PT, P#");
    assert_has(&code, "VOTE.ANY R#, PT, PT");
    assert_has(&code, "VOTE.ALL P#, P#");
    assert_has(&code, "VOTE.EQ P#, !P#");
}

#[test]
fn ldu_is_ldg_and_prefetch_is_cctl() {
    // ptxas 11.8: `ldu.global.u32` → `LDG.E`, `ldu.global.v2.f32` → `LDG.E.64`;
    // `prefetch.global.L1/.L2` → `CCTL.E.PF1/.PF2`, `prefetch.local.L1` → `CCTLL.PF1`,
    // `prefetchu.L1` → `CCTL.E.PF1`, generic `prefetch.L2` → `CCTL.E.PF2`.
    let code = sass(&kernel(
        ".local .align 4 .b8 loc[16];\nldu.global.u32 %r2, [%rd2];\nldu.global.v2.f32 {%f2, %f3}, [%rd2+8];\n\
         prefetch.global.L1 [%rd2+64];\nprefetch.global.L2 [%rd2+128];\nprefetch.local.L1 [loc];\n\
         prefetchu.L1 [%rd2+256];\nprefetch.L2 [%rd1];\nadd.f32 %f4, %f2, %f3;\nst.global.u32 [%rd1], %r2;\nst.global.f32 [%rd1+4], %f4;",
    ));
    for want in [
        "LDG.E R#, [R#]",
        "LDG.E.64 R#, [R#+0x8]",
        "CCTL.E.PF1 [R#+0x40]",
        "CCTL.E.PF2 [R#+0x80]",
        "CCTLL.PF1 [R#]",
        "CCTL.E.PF1 [R#+0x100]",
        "CCTL.E.PF2 [R#]",
    ] {
        assert_has(&code, want);
    }
    let e = errors(&kernel("ldu.shared.u32 %r2, [%rd2];"));
    assert!(e.iter().any(|m| m.contains("`ldu`")), "{e:?}");
}

#[test]
fn fences_are_membars() {
    // ptxas 11.8: membar.cta/.gl/.sys → MEMBAR.CTA/.GL.IVALLD/.SYS.IVALLD; `fence` is
    // rejected by ptxas below sm_70 and emulated with the MEMBAR of its scope (a warning).
    let code = sass(&kernel(
        "st.global.u32 [%rd1], %r1;\nfence.sc.cta;\nst.global.u32 [%rd1+4], %r1;\nfence.acq_rel.gpu;\n\
         st.global.u32 [%rd1+8], %r1;\nfence.sc.sys;\nst.global.u32 [%rd1+12], %r1;\nmembar.gl;\nst.global.u32 [%rd1+16], %r1;",
    ));
    let membars: Vec<&String> = code.iter().filter(|c| c.starts_with("MEMBAR")).collect();
    assert_eq!(membars, ["MEMBAR.CTA", "MEMBAR.GL.IVALLD", "MEMBAR.SYS.IVALLD", "MEMBAR.GL.IVALLD"], "{code:?}");
    let mut opts = Options { emit: Emit::Sass, ..Options::default() };
    opts.lower.deny_emulation = true;
    assert!(driver::compile(&kernel("fence.sc.gpu;"), &opts).is_err(), "--deny-emulation rejects fence");
}

#[test]
fn trap_and_brkpt_are_bpt() {
    // ptxas 11.8: `trap` → `BPT.TRAP 0x1` (it emits the same for `brkpt`; ptx2sass keeps
    // `brkpt` a breakpoint execution continues past: `BPT.INT 0x0`).
    let code = sass(&kernel("setp.eq.u32 %p1, %r1, 3;\n@%p1 trap;\nbrkpt;\nst.global.u32 [%rd1], %r1;"));
    assert_has(&code, "BPT.TRAP 0x1");
    assert_has(&code, "BPT.INT 0x0");
}

/// Recursion and calls through a register were rejected while every call was inlined;
/// they are real calls now (`CAL`, `PRET` + `JMX`, as ptxas 11.8; `docs/abi.md`).
#[test]
fn recursion_and_indirect_calls_are_real_calls() {
    let head = ".version 7.8\n.target sm_50\n.address_size 64\n";
    let recursive = format!(
        "{head}.visible .func (.param .b32 r) f(.param .b32 a)\n{{\n.reg .b32 %r<4>;\nld.param.b32 %r1, [a];\n\
         {{ .param .b32 p; .param .b32 q; st.param.b32 [p], %r1; call.uni (q), f, (p); ld.param.b32 %r2, [q]; }}\n\
         st.param.b32 [r], %r2;\nret;\n}}\n\
         .visible .entry k(.param .u64 pout)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [pout];\n\
         {{ .param .b32 p; .param .b32 q; st.param.b32 [p], 3; call.uni (q), f, (p); ld.param.b32 %r2, [q]; }}\n\
         st.global.u32 [%rd1], %r2;\nret;\n}}\n"
    );
    let code = sass(&recursive);
    assert_eq!(count(&code, "CAL `(f)"), 2, "{code:?}");
    let indirect = |target: &str| {
        format!(
            "{head}.visible .func (.param .b32 r) f(.param .b32 a)\n{{\n.reg .b32 %r<4>;\nld.param.b32 %r1, [a];\nst.param.b32 [r], %r1;\nret;\n}}\n\
             .visible .entry k(.param .u64 pout)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [pout];\n{target}\n\
             {{ .param .b32 p; .param .b32 q; st.param.b32 [p], 3;\nprot: .callprototype (.param .b32 _) _ (.param .b32 _);\n\
             call (q), %rd2, (p), prot; ld.param.b32 %r2, [q]; }}\nst.global.u32 [%rd1], %r2;\nret;\n}}\n"
        )
    };
    for target in ["ld.global.u64 %rd2, [%rd1];", "mov.u64 %rd2, f;"] {
        let code = sass(&indirect(target));
        assert_eq!(count(&code, "PRET"), 1, "{code:?}");
        assert_eq!(count(&code, "JMX R#"), 1, "{code:?}");
    }
    assert_has(&sass(&indirect("mov.u64 %rd2, f;")), "MOV32I R#, 32@lo(f)");
}
