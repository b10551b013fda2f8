//! Front-end rules that decide what a program computes, checked by running it: every
//! kernel here runs on the PTX interpreter (`exec::ptx`, its own name resolution) and on the
//! SPA 5.0 simulator (our SASS), and the words it stores must be the expected ones on both.
//! Issue 22 item 2 (nested scopes), item 7 (`.b128` stores, `mov` of a one-element vector)
//! and item 11 (valid PTX that was rejected).

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec;

/// Compiles `src`, runs kernel `k(.param .u64 out)` with one thread on both executors (`out`
/// a zeroed buffer of `words` 32-bit words), checks they agree and returns the words.
fn run(src: &str, words: usize) -> Vec<u32> {
    run_launch(src, words, 1)
}

/// [`run`] with `threads` threads in one CTA.
fn run_launch(src: &str, words: usize, threads: u32) -> Vec<u32> {
    let program = compile(src);
    let (module, _) = ptx2sass::ptx::parse(src).unwrap_or_else(|d| {
        panic!("{}", ptx2sass::diag::SourceFile::new("t.ptx", src).render_all(&d));
    });
    let mut s = Setup::new();
    let out = s.buf(vec![0; words * 4]);
    let l = s.launch(&program, "k", [1, 1, 1], [threads, 1, 1], &[Val::I(out)]);
    let (want, _, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(diff.is_empty(), "the executors differ: {:?}\n{src}\n{program}", diff[0]);
    let (_, _, bytes) = want.global.regions().next().expect("the out buffer");
    bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The errors of compiling `src` (empty when it compiles).
fn errors(src: &str) -> Vec<String> {
    match ptx2sass::driver::compile(src, &ptx2sass::driver::Options::default()) {
        Ok(_) => vec![],
        Err(d) => d.into_iter().filter(|d| d.is_error()).map(|d| d.message).collect(),
    }
}

fn kernel(body: &str) -> String {
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n.reg .u64 p;\nld.param.u64 p, [out];\n{body}\nret;\n}}\n"
    )
}

// ---- issue 22 item 2: nested blocks scope every declaration kind ----------------------

/// The reproducer: the inner `a` hides the outer one, which keeps 1.
#[test]
fn nested_register_hides_the_outer_one() {
    let src = kernel(".reg .u32 a;\nmov.u32 a, 1;\n{\n.reg .u32 a;\nmov.u32 a, 5;\n}\nst.global.u32 [p], a;");
    assert_eq!(run(&src, 1), vec![1]);
}

/// Every kind of declaration in a nested block is a new variable: a register of another
/// width, a `%r<N>` range, `.local` and `.shared` variables; the outer ones keep their
/// values, and the inner ones work inside the block.
#[test]
fn nested_blocks_scope_every_declaration_kind() {
    let src = kernel(
        "
.reg .u32 a, %r<3>, t;
.local .u32 v;
.shared .u32 s;
mov.u32 a, 1;
mov.u32 %r1, 2;
st.local.u32 [v], 3;
st.shared.u32 [s], 4;
{
    .reg .u64 a;
    .reg .u32 %r<2>;
    .local .u32 v;
    .shared .u32 s;
    mov.u64 a, 0x100000007;
    mov.u32 %r1, 20;
    st.local.u32 [v], 30;
    st.shared.u32 [s], 40;
    st.global.u64 [p+16], a;
    ld.local.u32 t, [v];
    st.global.u32 [p+24], t;
    ld.shared.u32 t, [s];
    st.global.u32 [p+28], t;
    st.global.u32 [p+32], %r1;
}
st.global.u32 [p], a;
st.global.u32 [p+4], %r1;
ld.local.u32 t, [v];
st.global.u32 [p+8], t;
ld.shared.u32 t, [s];
st.global.u32 [p+12], t;",
    );
    assert_eq!(run(&src, 9), vec![1, 2, 3, 4, 7, 1, 30, 40, 20]);
}

/// Labels are scoped per block: sibling blocks reuse a name, a nested block's label hides
/// the outer one, and a branch inside a block reaches a label of an enclosing block.
#[test]
fn labels_are_scoped_per_block() {
    let src = kernel(
        "
.reg .u32 a;
.reg .pred q;
mov.u32 a, 1;
{ .reg .pred q; setp.eq.u32 q, a, 1; @q bra L; mov.u32 a, 100; L: add.u32 a, a, 2; }
{ .reg .pred q; setp.eq.u32 q, a, 3; @q bra L; mov.u32 a, 200; L: add.u32 a, a, 4; }
L: add.u32 a, a, 8;
{ setp.ne.u32 q, a, 0; @q bra OUT; mov.u32 a, 300; }
OUT: st.global.u32 [p], a;",
    );
    assert_eq!(run(&src, 1), vec![15]);
}

/// A nested block declaring a name the module also declares hides the module variable.
#[test]
fn nested_register_hides_a_module_variable() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n.const .u32 g = 9;\n\
.visible .entry k(.param .u64 out)\n{\n.reg .u64 p;\n.reg .u32 t;\nld.param.u64 p, [out];\n\
ld.const.u32 t, [g];\nst.global.u32 [p], t;\n{ .reg .u32 g; mov.u32 g, 5; st.global.u32 [p+4], g; }\n\
ld.const.u32 t, [g];\nst.global.u32 [p+8], t;\nret;\n}\n";
    assert_eq!(run(src, 3), vec![9, 5, 9]);
}

/// Call sequences (nvcc wraps each in a block declaring `param0`, `retval0`) reuse the
/// parameter names of earlier blocks, and a callee's names never resolve to the caller's.
#[test]
fn call_sequences_in_blocks_reuse_parameter_names() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
.func (.param .b32 r) f(.param .b32 x)\n{\n.reg .b32 a;\nld.param.b32 a, [x];\n{ .reg .b32 a; mov.b32 a, 1000; }\nadd.u32 a, a, 1;\nst.param.b32 [r], a;\nret;\n}\n\
.visible .entry k(.param .u64 out)\n{\n.reg .u64 p;\n.reg .b32 a, b;\nld.param.u64 p, [out];\nmov.b32 a, 10;\n\
{\n.param .b32 param0;\nst.param.b32 [param0], a;\n.param .b32 retval0;\ncall.uni (retval0), f, (param0);\nld.param.b32 b, [retval0];\n}\n\
st.global.u32 [p], b;\n\
{\n.reg .b32 a;\nmov.b32 a, 20;\n.param .b32 param0;\nst.param.b32 [param0], a;\n.param .b32 retval0;\ncall.uni (retval0), f, (param0);\nld.param.b32 b, [retval0];\n}\n\
st.global.u32 [p+4], b;\nst.global.u32 [p+8], a;\nret;\n}\n";
    assert_eq!(run(src, 3), vec![11, 21, 10]);
}

/// What the scoping rules reject, as ptxas 11.8 does: a branch into a nested block
/// (`Unknown symbol 'L'`), a name declared twice in one block, also through a range or a
/// parameter (`Duplicate definition of variable`), a label placed twice in one block.
#[test]
fn scoping_errors() {
    let e = errors(&kernel(".reg .u32 a;\nbra L;\n{ L: mov.u32 a, 2; }"));
    assert!(e.iter().any(|m| m.contains("label `L` is not defined in this block or an enclosing one")), "{e:?}");
    let e = errors(&kernel(".reg .u32 a;\n.reg .u32 a;\nmov.u32 a, 1;"));
    assert!(e.iter().any(|m| m.contains("`a` is declared twice in the same scope")), "{e:?}");
    let e = errors(&kernel(".reg .u32 %r<3>;\n.reg .u32 %r1;\nmov.u32 %r1, 1;"));
    assert!(e.iter().any(|m| m.contains("`%r1` is declared twice in the same scope")), "{e:?}");
    let e = errors(&kernel(".reg .u32 out;\nmov.u32 out, 1;"));
    assert!(e.iter().any(|m| m.contains("`out` is declared twice in the same scope")), "{e:?}");
    let e = errors(&kernel("L: { L: }\nL:"));
    assert!(e.iter().any(|m| m.contains("label `L` is defined twice in the same block")), "{e:?}");
    // The same names in nested blocks are fine.
    assert_eq!(
        errors(&kernel(".reg .u32 a;\nL: mov.u32 a, 1;\n{ .reg .u32 a; L: mov.u32 a, 2; }")),
        Vec::<String>::new()
    );
}

// ---- issue 22 item 7: `.b128` data and `mov` vectors ----------------------------------

fn kernel83(body: &str) -> String {
    kernel(body).replace(".version 7.8", ".version 8.3")
}

/// `.b128` stores in every writable state space (emulated with a warning as `ld` is: a
/// quad register on SPA 5.0), from a register, from an immediate (a 64-bit literal
/// zero-extended, as ptxas 12.9 does), and `mov.b128` copies, packs and unpacks.
#[test]
fn b128_stores_and_moves() {
    let src = kernel83(
        "
.reg .b128 q, r;
.reg .b64 x, y;
.reg .b32 a, b, c, d;
.local .align 16 .b8 loc[16];
.shared .align 16 .b8 sh[16];
mov.b64 x, 0x0000000200000001;
mov.b64 y, 0x0000000400000003;
mov.b128 q, {x, y};
st.global.b128 [p], q;
st.local.b128 [loc], q;
ld.local.b128 r, [loc];
mov.b128 {a, b, c, d}, r;
st.global.v4.b32 [p+16], {d, c, b, a};
st.shared.b128 [sh], -2;
ld.shared.b128 r, [sh];
st.global.b128 [p+32], r;
mov.b128 r, {a, c, b, d};
mov.b128 q, r;
mov.b128 {x, y}, q;
st.global.v2.b64 [p+48], {y, x};
mov.b128 q, 7;
st.global.b128 [p+64], q;",
    );
    let got = run(&src, 20);
    assert_eq!(got[0..4], [1, 2, 3, 4]);
    assert_eq!(got[4..8], [4, 3, 2, 1]);
    assert_eq!(got[8..12], [0xffff_fffe, 0xffff_ffff, 0, 0]);
    assert_eq!(got[12..16], [2, 4, 1, 3]);
    assert_eq!(got[16..20], [7, 0, 0, 0]);
}

/// Packing and unpacking sub-word and 32-bit elements, with immediates and a sink.
#[test]
fn mov_packs_and_unpacks_vectors() {
    let src = kernel(
        "
.reg .b16 h<4>;
.reg .b32 a, b;
.reg .b64 x;
mov.b32 a, 0x44332211;
mov.b32 {h0, h1}, a;
mov.b64 x, {h1, h0, h1, 0x7777};
st.global.u64 [p], x;
mov.b32 b, {h0, 0};
st.global.u32 [p+8], b;
mov.b64 {a, _}, x;
st.global.u32 [p+12], a;",
    );
    assert_eq!(run(&src, 4), vec![0x2211_4433, 0x7777_4433, 0x2211, 0x2211_4433]);
}

/// Vector shapes `mov` does not have are errors, never a crash (issue 20 crash 3: `mov.u64
/// %rd2, {%rd1}` panicked); `.b128` is not an arithmetic type.
#[test]
fn bad_mov_vectors_and_b128_types_are_errors() {
    for (body, want) in [
        (".reg .u64 a;\nmov.u64 a, {p};", "1 element(s) of 64 bits"),
        (".reg .u64 a;\n.reg .b32 x, y, z;\nmov.b64 a, {x, y, z};", "3 element(s)"),
        (".reg .b16 a;\n.reg .b8 x, y, z, w;\nmov.b16 a, {x, y, z, w};", "4 element(s) of 4 bits"),
        (".reg .b32 x, y, z, w;\nmov.b64 {x, y}, {z, w};", "only one operand of `mov` may be a vector"),
    ] {
        let e = errors(&kernel(body));
        assert!(e.iter().any(|m| m.contains("cannot pack or unpack this vector")), "{body}: {e:?}");
        let d = ptx2sass::driver::compile(&kernel(body), &Default::default()).err().unwrap();
        assert!(d.iter().any(|d| d.primary.1.contains(want)), "{body}: {d:?}");
    }
    let e = errors(&kernel(".reg .u64 a;\n.reg .b32 x;\nmov.b64 a, {x, _};"));
    assert!(e.iter().any(|m| m.contains("a sink `_` cannot be a source of `mov.b64`")), "{e:?}");
    let e = errors(&kernel83(".reg .b128 q;\nadd.b128 q, q, q;"));
    assert!(e.iter().any(|m| m.contains("`.b128` is not an instruction type of `add`")), "{e:?}");
}

// ---- issue 22 item 11: valid PTX that was rejected ------------------------------------

/// The relaxed operand sizes of `ld`, `st` and `cvt` (PTX ISA 6.4.1; ptxas 11.8 accepts
/// each): an f32 loaded into a `.b64` register has a zero high word (`MOV R5, RZ`); a
/// wider source of `cvt.s64.s32` is read as its low 32 bits (`SHR R3, R2, 0x1f` of the low
/// word); an f32 stored from a `.b64` register is its low word.
#[test]
fn relaxed_operand_sizes_of_ld_st_cvt() {
    let src = kernel(
        "
.reg .b64 b, c;
.reg .u64 u;
.reg .s32 s;
mov.b64 b, 0xdeadbeef00000000;
st.global.u32 [p+32], 0x40490fdb;
ld.global.f32 b, [p+32];
st.global.u64 [p], b;
mov.u64 u, 0x12345678fffffffe;
cvt.s64.s32 u, u;
st.global.u64 [p+8], u;
mov.b64 c, 0x777777773f800000;
st.global.f32 [p+16], c;
cvt.rzi.s32.f32 s, c;
st.global.u32 [p+20], s;",
    );
    assert_eq!(run(&src, 9), vec![0x4049_0fdb, 0, 0xffff_fffe, 0xffff_ffff, 0x3f80_0000, 1, 0, 0, 0x4049_0fdb]);
}

/// Forms from real compiler output that ptxas 11.8 accepts for sm_50: `WARP_SZ` (the
/// predefined identifier, 32), `%envreg<N>` (driver constants `c[0x0][0x30 + 4N]`, 0 in
/// both executors' launch environment), `bar.warp.sync`, `.alias`, `.attribute(.managed)`,
/// `.callprototype ... .noreturn`, an operand `var+imm`.
#[test]
fn accepted_forms_from_compiler_output() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
.global .attribute(.managed) .align 4 .b8 managed_var[4];\n\
.const .align 4 .b32 cv[4] = {10, 20, 30, 40};\n\
.func (.param .b32 r) f(.param .b32 x)\n{\n.reg .b32 a;\nld.param.b32 a, [x];\nadd.u32 a, a, 1;\nst.param.b32 [r], a;\nret;\n}\n\
.alias g, f;\n\
.visible .entry k(.param .u64 out)\n{\n.reg .u64 p, q;\n.reg .u32 a, b;\nld.param.u64 p, [out];\n\
prototype_0 : .callprototype ()_ (.param .b64 _) .noreturn;\n\
mov.u32 a, WARP_SZ;\nadd.u32 a, a, WARP_SZ;\nst.global.u32 [p], a;\n\
mov.u32 a, %envreg3;\nst.global.u32 [p+4], a;\n\
bar.warp.sync -1;\n\
{ .param .b32 x; st.param.b32 [x], 5; .param .b32 r; call (r), g, (x); ld.param.b32 a, [r]; }\nst.global.u32 [p+8], a;\n\
mov.u64 q, cv+8;\nld.const.u32 a, [q];\nst.global.u32 [p+12], a;\n\
ret;\n}\n";
    assert_eq!(run(src, 4), vec![64, 0, 6, 30]);
}

/// Vector variables (PTX ISA 5.4.3): `.reg .v2/.v4` registers used by element (`v.x`,
/// `v.g`) and whole as the data of vector loads and stores, in a range too, and `.v4`
/// variables in memory.
#[test]
fn vector_registers_and_variables() {
    let src = kernel(
        "
.reg .v2 .u32 v;
.reg .v4 .b32 w<2>;
.reg .u32 a;
.local .v4 .u32 lv;
mov.u32 v.x, 3;
mov.u32 v.g, 4;
add.u32 a, v.x, v.y;
st.local.v4.u32 [lv], {a, a, v.y, a};
ld.local.v4.u32 w1, [lv];
st.global.u32 [p], w1.z;
st.global.v2.u32 [p+8], v;
ld.global.v2.u32 v, [p+8];
add.u32 w0.w, v.y, 100;
st.global.u32 [p+16], w0.w;",
    );
    assert_eq!(run(&src, 5), vec![4, 0, 3, 4, 104]);
}

/// An unsized array parameter (`.param .align 8 .b8 va[]`, a variadic function) takes the
/// caller's argument whole.
#[test]
fn unsized_array_parameters() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
.func (.param .b32 r) f(.param .b32 n, .param .align 8 .b8 va[])\n\
{\n.reg .b32 a, b;\nld.param.b32 a, [n];\nld.param.b32 b, [va+4];\nadd.u32 a, a, b;\nst.param.b32 [r], a;\nret;\n}\n\
.visible .entry k(.param .u64 out)\n{\n.reg .u64 p;\n.reg .u32 a;\nld.param.u64 p, [out];\n\
{ .param .b32 n; st.param.b32 [n], 5; .param .align 8 .b8 va[8]; st.param.b32 [va], 1; st.param.b32 [va+4], 7;\n\
.param .b32 r; call (r), f, (n, va); ld.param.b32 a, [r]; }\nst.global.u32 [p], a;\nret;\n}\n";
    assert_eq!(run(src, 1), vec![12]);
    let e = errors(&kernel("").replace("k(.param .u64 out)", "k(.param .u64 out, .param .b8 x[])"));
    assert!(e.iter().any(|m| m.contains("kernel parameter `x` has no size")), "{e:?}");
}

/// A pointer to a local (`alloca`-style) buffer passed to a device function (clang's
/// `__local_depot` + `cvta.local` + `.param .b64`), read there through generic addressing.
#[test]
fn local_buffer_passed_to_a_call() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
.func (.param .b32 r) f(.param .b64 buf)\n{\n.reg .b64 b;\n.reg .b32 a, c;\nld.param.b64 b, [buf];\nld.u32 a, [b+4];\nld.u8 c, [b+9];\nadd.u32 a, a, c;\nst.param.b32 [r], a;\nret;\n}\n\
.visible .entry k(.param .u64 out)\n{\n.local .align 4 .b8 __local_depot0[16];\n.reg .b64 %SP, %SPL, p, t;\n.reg .u32 a;\n\
mov.u64 %SPL, __local_depot0;\ncvta.local.u64 %SP, %SPL;\nld.param.u64 p, [out];\nadd.u64 t, %SPL, 4;\nst.local.u32 [t], 42;\n\
st.local.u8 [__local_depot0+9], 3;\nadd.u64 t, %SP, 0;\n\
{ .param .b64 buf; st.param.b64 [buf], t; .param .b32 r; call (r), f, (buf); ld.param.b32 a, [r]; }\n\
st.global.u32 [p], a;\nret;\n}\n";
    assert_eq!(run(src, 1), vec![45]);
}

/// Scalar video instructions (PTX ISA 9.7.10: `vadd vsub vabsdiff vmin vmax vshl vshr`,
/// every signedness of `.dtype.atype.btype`, with and without `.sat` and a secondary
/// `.add/.min/.max`), on edge values: the interpreter computes them in 128-bit integers, the
/// compiler in 64-bit SASS arithmetic; both must agree, and with hand-computed values.
#[test]
fn video_instructions() {
    const VALUES: [u32; 6] = [0, 1, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 33];
    let mut words = 0;
    let mut body = String::from(".reg .u32 a, b, c, d;\n");
    for op in ["vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr"] {
        for (ty, sat, op2) in [
            (".u32.u32.u32", "", ""),
            (".s32.s32.s32", ".sat", ""),
            (".u32.s32.u32", ".sat", ".min"),
            (".s32.u32.s32", "", ".add"),
            (".s32.s32.u32", ".sat", ".max"),
        ] {
            let shift = op.starts_with("vsh");
            let ty = if shift { &format!("{}.u32", &ty[..8]) } else { ty };
            let mode = if shift { if sat.is_empty() { ".wrap" } else { ".clamp" } } else { "" };
            for (k, (x, y)) in VALUES.iter().zip(VALUES.iter().rev().cycle().skip(1)).enumerate() {
                let c = VALUES[(k + 2) % VALUES.len()];
                let cop = if op2.is_empty() { String::new() } else { ", c".into() };
                body += &format!(
                    "mov.u32 a, {x};\nmov.u32 b, {y};\nmov.u32 c, {c};\n{op}{ty}{sat}{mode}{op2} d, a, b{cop};\nst.global.u32 [p+{}], d;\n",
                    4 * words
                );
                words += 1;
            }
        }
    }
    let got = run(&kernel(&body), words);
    // Hand-computed (the pairs are (VALUES[k], VALUES reversed from 0xffffffff)[k]): vadd.u32
    // 0 + 0xffffffff; vsub.s32.s32.s32.sat INT_MIN - 1 saturates to INT_MIN; vabsdiff.u32
    // 0x7fffffff vs 0x7fffffff; vshr.u32.wrap 1 >> (0x80000000 & 31) = 1.
    assert_eq!(got[0], 0xffff_ffff);
    assert_eq!(got[30 + 6 + 3], 0x8000_0000);
    assert_eq!(got[60 + 2], 0);
    assert_eq!(got[180 + 1], 1);
}

/// `lop3.b32` (PTX ISA 4.3, sm_50; ptxas emits one `LOP3.LUT`): every truth table applied to
/// three words whose bits cover all eight input combinations.
#[test]
fn lop3_applies_its_truth_table() {
    let mut body =
        String::from(".reg .b32 a, b, c, d;\nmov.b32 a, 0xF0F0F0F0;\nmov.b32 b, 0xCCCCCCCC;\nmov.b32 c, 0xAAAAAAAA;\n");
    for lut in 0..256u32 {
        body += &format!("lop3.b32 d, a, b, c, {lut};\nst.global.u32 [p+{}], d;\n", 4 * lut);
    }
    let got = run(&kernel(&body), 256);
    for (lut, w) in got.iter().enumerate() {
        let byte = lut as u32;
        assert_eq!(*w, byte | byte << 8 | byte << 16 | byte << 24, "lut {lut:#x}");
    }
}
