//! One test per ld/st lowering rule that the generated matrix (`ldst_matrix`) does not
//! pin by itself: address arithmetic, offsets and their field widths, Plg reuse, LDC
//! addressing, provable spaces, sign extension, sinks, uniform loads and alignment.
//! Each test compiles a small kernel to SASS and looks for the expected instructions,
//! with register numbers normalized (`R#`, `P#`) so that allocation changes do not
//! matter but opcodes, modifiers, immediates and operand shapes do.

#[path = "common/listing.rs"]
mod listing;

use listing::*;

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\
.const .align 8 .b8 tab[1024];\n.shared .align 16 .b8 sh[1024];\n";

/// A kernel with parameters `out` (u64, c[0x0][0x140]), `gp` (u64, 0x148), `i` (u32, 0x150)
/// and `arr` (64 bytes, 0x158); `%rd1` = out, `%rd2` = gp, `%r1` = i are loaded first.
fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 out, .param .u64 gp, .param .u32 i, .param .align 8 .b8 arr[64])\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<40>;\n.reg .f32 %f<16>;\n\
         ld.param.u64 %rd1, [out];\nld.param.u64 %rd2, [gp];\nld.param.u32 %r1, [i];\n{body}\nret;\n}}\n"
    )
}

#[test]
fn generic_access_folds_the_offset_into_lea_and_reuses_plg() {
    // spa50-LEA.txt, findings section 4: LEA/LEA.HI.X with Plg, the first offset in the
    // LEA, later accesses from the same base carry their offset difference in LD/ST.
    let code =
        sass(&kernel("ld.u32 %r2, [%rd2+16];\nld.u32 %r3, [%rd2+20];\nadd.s32 %r4, %r2, %r3;\nst.u32 [%rd2+8], %r4;"));
    assert_run(
        &code,
        &["LEA R#.CC, R#, 0x10", "LEA.HI.X P#, R#, R#, RZ, R#", "LD.E R#, [R#], P#", "LD.E R#, [R#+0x4], P#"],
    );
    assert_has(&code, "ST.E [R#+-0x8], R#, P#");
    assert_eq!(count(&code, "LEA"), 2, "one LEA pair for three accesses");
}

#[test]
fn scaled_index_goes_into_the_plg_lea_pair() {
    // spa50-LEA.txt example: `LEA.LO R0.CC, R2, R4, 3; LEA.HI.X P0, R1, R2, R5, R3, 3;
    // LD.64 Rd, [R0+80], P0` -- base + (i << s) and Plg in two instructions.
    let code = sass(&kernel(
        "mul.wide.s32 %rd3, %r1, 8;\nadd.s64 %rd4, %rd2, %rd3;\nld.u64 %rd5, [%rd4+80];\nst.global.u64 [%rd1], %rd5;",
    ));
    assert_run(
        &code,
        &[
            "LEA R#.CC, R#, c[0x0][0x148], 0x3",
            "LEA.HI.X P#, R#, R#, c[0x0][0x14c], R#, 0x3",
            "LD.E.64 R#, [R#+0x50], P#",
        ],
    );
    assert_has(&code, "SHR R#, R#, 0x1f");
    assert_eq!(count(&code, "LEA"), 2);
    assert_eq!(count(&code, "IADD"), 0);
}

#[test]
fn global_scaled_index_becomes_lea_pair() {
    // `base + (index << s) + imm` from mul.wide / shl / cvt+shl, then add.s64.
    for index in ["mul.wide.u32 %rd3, %r1, 4;", "cvt.u64.u32 %rd6, %r1;\nshl.b64 %rd3, %rd6, 2;"] {
        let code = sass(&kernel(&format!(
            "{index}\nadd.s64 %rd4, %rd2, %rd3;\nld.global.u32 %r2, [%rd4+12];\nst.global.u32 [%rd1], %r2;"
        )));
        assert_run(
            &code,
            &["LEA R#.CC, R#, c[0x0][0x148], 0x2", "LEA.HI.X R#, R#, c[0x0][0x14c], RZ, 0x2", "LDG.E R#, [R#+0xc]"],
        );
        assert_eq!(count(&code, "SH"), 0, "{index}: no shifts left");
    }
}

#[test]
fn offsets_beyond_the_field_are_materialized() {
    // LDG/STG 24-bit signed offsets; beyond, IADD32I .CC/.X (findings section 5).
    let code = sass(&kernel(
        "ld.global.u32 %r2, [%rd2+0x7ffffc];\nld.global.u32 %r3, [%rd2+0x1000000];\nld.global.u32 %r4, [%rd2+-0x1000004];\n\
         add.s32 %r5, %r2, %r3;\nadd.s32 %r5, %r5, %r4;\nst.global.u32 [%rd1], %r5;",
    ));
    assert_has(&code, "LDG.E R#, [R#+0x7ffffc]");
    assert_run(&code, &["IADD32I R#.CC, R#, 0x1000000", "IADD32I.X R#, R#, 0x0", "LDG.E R#, [R#]"]);
    assert_run(&code, &["IADD32I R#.CC, R#, -0x1000004", "IADD32I.X R#, R#, -0x1", "LDG.E R#, [R#]"]);
    // LD/ST take 32-bit offsets.
    let code = sass(&kernel(
        "ld.u32 %r2, [%rd2];\nld.u32 %r3, [%rd2+0x100000];\nadd.s32 %r4, %r2, %r3;\nst.global.u32 [%rd1], %r4;",
    ));
    assert_has(&code, "LD.E R#, [R#+0x100000], P#");
}

#[test]
fn shared_and_local_offsets() {
    let code = sass(&kernel(
        ".local .align 8 .b8 buf[64];\nld.shared.u32 %r2, [sh+1020];\nst.local.u32 [buf+60], %r2;\nld.local.u32 %r3, [buf+60];\n\
         st.global.u32 [%rd1], %r3;",
    ));
    assert_has(&code, "LDS.U.32 R#, [0x3fc]");
    assert_has(&code, "IADD32I R#, R#, -0x40");
    assert!(code.iter().any(|c| c.starts_with("STL [R#+0x3c]") || c.starts_with("LDL R#, [R#+0x3c]")), "{code:?}");
}

#[test]
fn ldc_register_address_and_16_bit_offset_split() {
    // spa50-LDC.txt IA mode: addr = Ra + ImmS16. Offsets outside ImmS16 are split as ptxas
    // does: IADD32I Ra, 0x10000 then [Ra+-0x7000] for +0x9000.
    let code = sass(&kernel(
        "cvt.u64.u32 %rd3, %r1;\nmov.u64 %rd4, tab;\nadd.s64 %rd5, %rd4, %rd3;\nld.const.u32 %r2, [%rd5+4];\n\
         ld.const.s16 %r3, [%rd5+2];\nld.const.u8 %r4, [%rd5+0x9000];\nld.const.f64 %rd6, [%rd5+8];\n\
         add.s32 %r5, %r2, %r3;\nadd.s32 %r5, %r5, %r4;\nst.global.u32 [%rd1], %r5;\nst.global.u64 [%rd1+8], %rd6;",
    ));
    assert_has(&code, "LDC R#, c[0x3][R#+0x4]");
    assert_has(&code, "LDC.S16 R#, c[0x3][R#+0x2]");
    assert_has(&code, "LDC.64 R#, c[0x3][R#+0x8]");
    assert_run(&code, &["IADD32I R#, R#, 0x10000", "LDC.U8 R#, c[0x3][R#+-0x7000]"]);
}

#[test]
fn static_const_and_param_accesses_are_operands() {
    let code = sass(&kernel(
        "ld.const.u32 %r2, [tab+8];\nld.param.u32 %r3, [arr+4];\nadd.s32 %r4, %r2, %r3;\nadd.s32 %r4, %r4, %r1;\nst.global.u32 [%rd1], %r4;",
    ));
    assert!(code.iter().any(|c| c.contains("c[0x3][0x8]")), "{code:?}");
    assert!(code.iter().any(|c| c.contains("c[0x0][0x15c]")), "{code:?}");
    assert_eq!(count(&code, "LDC"), 0);
    // A dynamic parameter address is an LDC in bank 0 with the parameter offset folded.
    let code = sass(&kernel(
        "cvt.u64.u32 %rd3, %r1;\nmov.u64 %rd4, arr;\nadd.s64 %rd5, %rd4, %rd3;\nld.param.u32 %r2, [%rd5];\nst.global.u32 [%rd1], %r2;",
    ));
    assert_has(&code, "LDC R#, c[0x0][R#+0x158]");
}

#[test]
fn static_const_offset_out_of_range_is_an_error() {
    let e = errors(&kernel("ld.const.u32 %r2, [tab+65536];\nst.global.u32 [%rd1], %r2;"));
    assert!(e.iter().any(|m| m.contains("outside the 64 KiB bank")), "{e:?}");
}

#[test]
fn provable_spaces_use_the_specific_instruction() {
    // cvta.to.global -> LDG; a generic access naming a shared variable -> LDS (findings 4).
    let code = sass(&kernel(
        "cvta.to.global.u64 %rd3, %rd2;\nld.u32 %r2, [%rd3+4];\nld.u32 %r3, [sh+8];\nadd.s32 %r4, %r2, %r3;\nst.u32 [%rd3], %r4;",
    ));
    assert_has(&code, "LDG.E R#, [R#+0x4]");
    assert_has(&code, "LDS.U.32 R#, [0x8]");
    assert_has(&code, "STG.E [R#], R#");
    assert_eq!(count(&code, "LEA"), 0);
}

#[test]
fn narrow_loads_extend_into_wide_registers() {
    let code = sass(&kernel(
        "ld.global.s8 %rd3, [%rd2];\nld.global.u16 %rd4, [%rd2+2];\nst.global.u64 [%rd1], %rd3;\nst.global.u64 [%rd1+8], %rd4;",
    ));
    assert_has(&code, "LDG.E.S8 R#, [R#]");
    assert_has(&code, "LDG.E.U16 R#, [R#+0x2]");
    // The sign of the s8 value fills the high word; the u16 value's high word is zero.
    assert_has(&code, "SHR R#, R#, 0x1f");
    assert_eq!(count(&code, "STG.E.64"), 2);
}

#[test]
fn sinks_and_uniform_128_bit_loads() {
    // `_` elements are loaded and dropped; a parameter-derived address is warp-uniform.
    let code = sass(&kernel(
        "ld.global.v4.f32 {%f1, _, %f3, %f4}, [%rd2];\nadd.f32 %f5, %f1, %f3;\nadd.f32 %f5, %f5, %f4;\nst.global.f32 [%rd1], %f5;",
    ));
    assert_has(&code, "LDG.E.U.128 R#, [R#]");
    // A thread-dependent address is not uniform.
    let code = sass(&kernel(
        "mov.u32 %r2, %tid.x;\nmul.wide.u32 %rd3, %r2, 16;\nadd.s64 %rd4, %rd2, %rd3;\nld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];\n\
         add.f32 %f5, %f1, %f2;\nadd.f32 %f5, %f5, %f3;\nadd.f32 %f5, %f5, %f4;\nst.global.f32 [%rd1], %f5;",
    ));
    assert_has(&code, "LDG.E.128 R#, [R#]");
}

#[test]
fn vectors_of_256_bits_split_in_two() {
    let code = sass(&kernel(
        "ld.global.v4.u64 {%rd3, %rd4, %rd5, %rd6}, [%rd2];\nst.global.v2.u64 [%rd1], {%rd3, %rd6};\nst.global.v2.u64 [%rd1+16], {%rd4, %rd5};",
    ));
    assert_eq!(count(&code, "LDG.E.U.128"), 2, "{code:?}");
    assert_has(&code, "LDG.E.U.128 R#, [R#+0x10]");
}

#[test]
fn acquire_and_release_place_membars() {
    let code = sass(&kernel("ld.acquire.gpu.global.u32 %r2, [%rd2];\nst.release.sys.global.u32 [%rd1], %r2;"));
    assert_run(&code, &["LDG.E.CG R#, [R#]", "MEMBAR.GL.IVALLD"]);
    assert_run(&code, &["MEMBAR.SYS.IVALLD", "STG.E.WT [R#], R#"]);
}

#[test]
fn statically_misaligned_addresses_are_errors() {
    let e = errors(&kernel("ld.shared.u32 %r2, [sh+2];\nst.global.u32 [%rd1], %r2;"));
    assert!(e.iter().any(|m| m.contains("misaligned") || m.contains("aligned")), "{e:?}");
    let e = errors(&kernel(".local .align 8 .b8 buf[16];\nld.local.u64 %rd3, [buf+4];\nst.global.u64 [%rd1], %rd3;"));
    assert!(e.iter().any(|m| m.contains("aligned")), "{e:?}");
    // An address with unknown alignment is the program's responsibility (PTX ISA 9.7.9.8).
    let code = sass(&kernel("ld.global.u64 %rd3, [%rd2+4];\nst.global.u64 [%rd1], %rd3;"));
    assert_has(&code, "LDG.E.64 R#, [R#+0x4]");
}

/// Branches (guarded or not, and the guarded EXIT/SYNC a branch to an exit or a join
/// becomes), without the function's closing `BRA` to itself.
fn branches(code: &[String]) -> usize {
    let body = &code[..code.len() - 1];
    body.iter()
        .filter(|c| {
            c.starts_with("BRA")
                || c.ends_with(" BRA")
                || c.contains(" BRA ")
                || c.contains("P# EXIT")
                || c.contains("P# SYNC")
        })
        .count()
}

/// If-conversion (`lower/cfg/ifconv.rs`, after ptxas's predicated regions in
/// `transpose_tiled`): a small guarded region (here divergent) becomes guarded instructions,
/// with no branch and no SSY/SYNC; its loads and stores carry the guard.
#[test]
fn small_guarded_regions_are_predicated() {
    let code = sass(&kernel(
        "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 7;\n@%p1 bra SKIP;\nld.global.u32 %r2, [%rd2];\nadd.s32 %r2, %r2, 1;\n\
         st.global.u32 [%rd1], %r2;\nSKIP:\nst.global.u32 [%rd1+64], %r1;",
    ));
    assert_eq!(branches(&code) + count(&code, "SSY"), 0, "{code:#?}");
    assert_has(&code, "@!P# LDG.E R#, [R#]");
    assert_has(&code, "@!P# STG.E [R#], R#");
}

/// Both arms of an if/else are predicated, and the value they define is picked by a SEL.
#[test]
fn if_else_values_meet_in_a_sel() {
    let code = sass(&kernel(
        "setp.lt.u32 %p1, %r1, 7;\n@%p1 bra ELSE;\nadd.s32 %r3, %r1, 5;\nbra.uni DONE;\nELSE:\n\
         shl.b32 %r3, %r1, 3;\nDONE:\nst.global.u32 [%rd1], %r3;",
    ));
    assert_eq!(branches(&code) + count(&code, "SSY"), 0, "{code:#?}");
    assert_eq!(count(&code, "SEL "), 1, "{code:#?}");
    assert_eq!(count(&code, "@P# ") + count(&code, "@!P# "), 2, "{code:#?}");
}

/// Regions with a barrier, or longer than the limit, keep their branch.
#[test]
fn regions_with_barriers_or_many_instructions_keep_the_branch() {
    let barrier =
        sass(&kernel("setp.lt.u32 %p1, %r1, 7;\n@%p1 bra SKIP;\nbar.sync 0;\nSKIP:\nst.global.u32 [%rd1], %r1;"));
    assert_eq!(branches(&barrier), 1, "{barrier:#?}");
    let long: String = (0..13).map(|k| format!("st.global.u32 [%rd1+{}], %r1;\n", 4 * k)).collect();
    let long = sass(&kernel(&format!(
        "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 7;\n@%p1 bra SKIP;\n{long}SKIP:\nst.global.u32 [%rd1+64], %r1;"
    )));
    assert_eq!(count(&long, "STG"), 14, "{long:#?}");
    assert_eq!(branches(&long), 1, "{long:#?}");
    assert_eq!(count(&long, "SSY"), 1, "{long:#?}");
}

/// `lower::opt::combine`: two dependent logic operations become one `LOP3.LUT` (xor of three is
/// table 0x96, `(a & b) | c` 0xea), two dependent additions one `IADD3`, with the
/// parameter `i` (`c[0x0][0x150]`) in the `b` slot; an intermediate read twice stays.
#[test]
fn dependent_pairs_become_three_input_instructions() {
    let code = sass(&kernel(
        "mov.u32 %r2, %tid.x;\nmov.u32 %r3, %ctaid.x;\nxor.b32 %r4, %r1, %r2;\nxor.b32 %r5, %r4, %r3;\n\
         and.b32 %r6, %r1, %r2;\nor.b32 %r7, %r6, %r3;\nadd.s32 %r8, %r1, %r2;\nadd.s32 %r9, %r8, %r3;\n\
         st.global.v4.u32 [%rd1], {%r5, %r7, %r9, %r9};",
    ));
    assert_has(&code, "LOP3.LUT R#, R#, c[0x0][0x150], R#, 0x96");
    assert_has(&code, "LOP3.LUT R#, R#, c[0x0][0x150], R#, 0xea");
    assert_has(&code, "IADD3 R#, R#, c[0x0][0x150], R#");
    assert_eq!(count(&code, "LOP."), 0, "{code:#?}");
    let code = sass(&kernel(
        "mov.u32 %r2, %tid.x;\nxor.b32 %r4, %r1, %r2;\nxor.b32 %r5, %r4, %r2;\nst.global.v2.u32 [%rd1], {%r4, %r5};",
    ));
    assert_eq!(count(&code, "LOP3"), 0, "{code:#?}");
}
