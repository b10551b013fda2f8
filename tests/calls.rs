//! Calls to `.func`s with every kind of parameter and return value (issue 22 item 5: a
//! function returning only a `.pred` failed with an internal error): predicates alone and
//! with registers, 16/32/64-bit and float registers, several returns, `.param` vectors.
//! Each kernel is compiled with every inlining mode (`--inline=auto|never|always`: the
//! callees inlined, and called in the calling convention of `docs/abi.md`) and runs on
//! both executors (64 threads, one input word each); the results must agree and equal
//! the values computed here.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::exec;
use ptx2sass::lower::calls::callgraph::Inline;

const HEADER: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

/// A kernel `k(in, out)`: `%x` = the thread's input word, `%o` = its 32-byte output slot.
fn kernel(funcs: &str, body: &str) -> String {
    format!(
        "{HEADER}{funcs}\n.visible .entry k(.param .u64 pin, .param .u64 pout)\n{{\n\
         .reg .b32 %t, %x, %r<8>;\n.reg .b64 %i, %o, %d<4>;\n.reg .pred %p<4>;\n.reg .f32 %f<4>;\n.reg .b16 %h<2>;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %i, [pin];\nld.param.u64 %o, [pout];\n\
         mul.wide.u32 %d0, %t, 4;\nadd.s64 %i, %i, %d0;\nmul.wide.u32 %d0, %t, 32;\nadd.s64 %o, %o, %d0;\n\
         ld.global.u32 %x, [%i];\n{body}\nret;\n}}\n"
    )
}

/// Runs `k` on 64 threads with inputs `0, 1, 7, 8, ...` (thread `t` gets `t * t % 23`) in
/// every inlining mode, compares the executors, and returns each thread's 8 output words
/// (interpreter; the same in every mode).
fn run(src: &str) -> Vec<[u32; 8]> {
    let mut first: Option<Vec<[u32; 8]>> = None;
    for mode in [Inline::Auto, Inline::Never, Inline::Always] {
        let mut opts = Options { emit: Emit::Sass, ..Options::default() };
        opts.lower.inline = mode;
        let program = match driver::compile(src, &opts) {
            Ok(o) => o.program.expect("a program"),
            Err(d) => panic!("{mode:?}: {}", ptx2sass::diag::SourceFile::new("ptx", src).render_all(&d)),
        };
        let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
        let input: Vec<u8> = (0..64u32).flat_map(|t| (t * t % 23).to_le_bytes()).collect();
        let mut s = Setup::new();
        let pin = s.buf(input);
        let pout = s.buf(vec![0; 64 * 32]);
        let l = s.launch(&program, "k", [1, 1, 1], [64, 1, 1], &[Val::I(pin), Val::I(pout)]);
        let (want, _, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{mode:?}: {e}\n{src}"));
        assert!(diff.is_empty(), "{mode:?}: executors differ\n{program}");
        let out: Vec<[u32; 8]> = (0..64u64)
            .map(|t| {
                std::array::from_fn(|k| {
                    want.global.read_uint("global", pout + 32 * t + 4 * k as u64, 4).unwrap() as u32
                })
            })
            .collect();
        if mode == Inline::Never {
            assert!(program.to_string().contains("CAL "), "--inline=never keeps the call\n{program}");
        }
        match &first {
            None => first = Some(out),
            Some(f) => assert_eq!(f, &out, "{mode:?} differs from auto"),
        }
    }
    first.expect("ran")
}

fn input(t: u32) -> u32 {
    t * t % 23
}

/// The reproducer of issue 22 item 5: `f` returns only a predicate, used as a guard.
#[test]
fn a_function_returning_only_a_predicate() {
    let src = kernel(
        ".func (.reg .pred q) f(.reg .u32 x) { setp.eq.u32 q, x, 7; ret; }",
        "call (%p0), f, (%x);\n@%p0 st.global.u32 [%o], 123;",
    );
    for (t, out) in run(&src).iter().enumerate() {
        assert_eq!(out[0], if input(t as u32) == 7 { 123 } else { 0 }, "thread {t}");
    }
}

/// Predicates in and out together with registers, passed on to a second call.
#[test]
fn predicates_and_registers_in_and_out() {
    let funcs = ".func (.reg .pred q, .reg .u32 r) f(.reg .u32 x, .reg .pred c)\n{\n\
        setp.gt.u32 q, x, 10;\n selp.u32 r, x, 1000, c;\n @q add.u32 r, r, 1;\n ret;\n}\n\
        .func (.reg .u32 r) g(.reg .pred a, .reg .pred b)\n{\n .reg .pred t;\n\
        and.pred t, a, !b;\n selp.u32 r, 1, 2, t;\n ret;\n}";
    let body = "setp.lt.u32 %p1, %x, 15;\ncall (%p0, %r0), f, (%x, %p1);\ncall (%r1), g, (%p0, %p1);\n\
        selp.u32 %r2, 1, 0, %p0;\nst.global.v4.u32 [%o], {%r0, %r1, %r2, %x};";
    for (t, out) in run(&kernel(funcs, body)).iter().enumerate() {
        let x = input(t as u32);
        let (q, c) = (x > 10, x < 15);
        let r = if c { x } else { 1000 } + u32::from(q);
        assert_eq!(out[..3], [r, if q && !c { 1 } else { 2 }, u32::from(q)], "thread {t}");
    }
}

/// 16-, 64-bit and float registers, and several return values of different kinds.
#[test]
fn wide_narrow_float_and_several_returns() {
    let funcs = ".func (.reg .u64 w, .reg .b16 h, .reg .f32 f, .reg .pred p) f(.reg .u64 a, .reg .u16 b, .reg .f32 c)\n{\n\
        add.u64 w, a, 0x100000000;\n add.u16 h, b, 3;\n mul.f32 f, c, 0f40000000;\n setp.ne.u16 p, b, 0;\n ret;\n}";
    let body = "cvt.u64.u32 %d1, %x;\ncvt.u16.u32 %h0, %x;\ncvt.rn.f32.u32 %f0, %x;\n\
        call (%d2, %h1, %f1, %p0), f, (%d1, %h0, %f0);\n\
        cvt.u32.u16 %r0, %h1;\nmov.b32 %r1, %f1;\nselp.u32 %r2, 1, 0, %p0;\n\
        st.global.u64 [%o], %d2;\nst.global.v4.u32 [%o+16], {%r0, %r1, %r2, %x};";
    for (t, out) in run(&kernel(funcs, body)).iter().enumerate() {
        let x = input(t as u32);
        assert_eq!(out[..2], [x, 1], "thread {t}: 64-bit");
        assert_eq!(out[4..7], [x + 3, (2.0 * x as f32).to_bits(), u32::from(x != 0)], "thread {t}");
    }
}

/// A `.param` vector argument and return value (`st.param.v4` / `ld.param.v4`).
#[test]
fn param_vectors_in_and_out() {
    let funcs = ".func (.param .align 16 .b8 r[16]) f(.param .align 16 .b8 a[16])\n{\n\
        .reg .b32 %e<4>;\n ld.param.v4.u32 {%e0, %e1, %e2, %e3}, [a];\n\
        add.u32 %e0, %e0, %e3;\n xor.b32 %e1, %e1, 5;\n\
        st.param.v4.u32 [r], {%e3, %e2, %e1, %e0};\n ret;\n}";
    let body = "{\n.param .align 16 .b8 pa[16];\n.param .align 16 .b8 pr[16];\n\
        add.u32 %r0, %x, 1;\nst.param.v4.u32 [pa], {%x, %r0, 9, %t};\ncall (pr), f, (pa);\n\
        ld.param.v4.u32 {%r1, %r2, %r3, %r4}, [pr];\n}\nst.global.v4.u32 [%o], {%r1, %r2, %r3, %r4};";
    for (t, out) in run(&kernel(funcs, body)).iter().enumerate() {
        let x = input(t as u32);
        assert_eq!(out[..4], [t as u32, 9, (x + 1) ^ 5, x + t as u32], "thread {t}");
    }
}

/// A `.local` array written before a call and read after it: the caller's frame pointer
/// `R1` comes back from the callee unchanged (docs/abi.md), which the allocation checker
/// did not know (`--inline=never` failed with "reads the frame pointer from somewhere
/// else"; found by the random programs of arbitrary control flow).
#[test]
fn local_array_read_after_a_call() {
    let funcs = ".func (.reg .u32 r) twice(.reg .u32 a) { add.u32 r, a, a; ret; }";
    let body = "{\n.local .align 8 .b8 loc[16];\nst.local.u32 [loc], %x;\nst.local.u32 [loc+4], 5;\n\
        call (%r0), twice, (%x);\nld.local.u32 %r1, [loc];\nld.local.u32 %r2, [loc+4];\n\
        add.u32 %r3, %r0, %r1;\nadd.u32 %r3, %r3, %r2;\nst.global.u32 [%o], %r3;\n}";
    for (t, out) in run(&kernel(funcs, body)).iter().enumerate() {
        let x = input(t as u32);
        assert_eq!(out[0], 3 * x + 5, "thread {t}");
    }
}

/// Predicates joined at block parameters (a loop-carried predicate, one redefined in one
/// arm of an `if`) and live across a kept call: every predicate register is caller-saved,
/// so they go to general-purpose registers with their whole phi web (it was an internal
/// error "more than 7 predicates that cannot be kept in general-purpose registers"; found
/// by the random programs of arbitrary control flow).
#[test]
fn predicates_joined_at_blocks_live_across_calls() {
    let funcs = ".func (.reg .u32 r) twice(.reg .u32 a) { add.u32 r, a, a; ret; }";
    let body = "mov.u32 %r0, %x;\nmov.u32 %r1, 0;\nsetp.lt.u32 %p0, %x, 10;\n\
        setp.eq.u32 %p1, %x, 3;\n@%p1 bra SKIP;\nadd.u32 %r0, %r0, 1;\nmul.lo.u32 %r0, %r0, 3;\n\
        xor.b32 %r0, %r0, 5;\nsetp.gt.u32 %p1, %x, 15;\nSKIP:\n\
        LOOP:\ncall (%r0), twice, (%r0);\nnot.pred %p0, %p0;\nadd.u32 %r1, %r1, 1;\n\
        setp.lt.u32 %p2, %r1, 3;\n@%p2 bra LOOP;\n\
        selp.u32 %r2, 1, 0, %p0;\nselp.u32 %r3, 1, 0, %p1;\nst.global.v4.u32 [%o], {%r0, %r2, %r3, %x};";
    for (t, out) in run(&kernel(funcs, body)).iter().enumerate() {
        let x = input(t as u32);
        let r0 = if x == 3 { x } else { ((x + 1) * 3) ^ 5 };
        // Three negations of `x < 10`; `p1` is `x > 15` unless x == 3 (then true).
        assert_eq!(out[..3], [r0.wrapping_mul(8), u32::from(x >= 10), u32::from(x == 3 || x > 15)], "thread {t}");
    }
}

/// A predicate argument or return variable for a non-predicate parameter (or a register
/// of another size) is a diagnostic, as in ptxas, not an internal error.
#[test]
fn mismatched_argument_types_are_diagnosed() {
    let src = kernel(".func (.reg .pred q) f(.reg .u32 x) { setp.eq.u32 q, x, 7; ret; }", "call (%r0), f, (%x);");
    let Err(d) = ptx2sass::driver::compile(&src, &Default::default()) else { panic!("accepted") };
    let m = &d[0].message;
    assert!(m.contains("does not match formal parameter `q` (.pred)") && !m.contains("internal"), "{m}");
    let src = kernel(".func (.reg .u64 q) f(.reg .u64 x) { mov.u64 q, x; ret; }", "call (%d1), f, (%x);");
    let Err(d) = ptx2sass::driver::compile(&src, &Default::default()) else { panic!("accepted") };
    assert!(d[0].message.contains("argument `%x` (.b32)"), "{}", d[0].message);
}

/// Sub-word `.param` values wider than their type: the callee stores `st.param.b8/.b16`
/// of 32-bit registers whose values do not fit (`x * 0x10101 + 0x8070`), the caller reads
/// them with `ld.param.u8/.s8/.u16/.s16`, which zero- or sign-extend only the stored
/// bytes (PTX ISA 9.7.9.8 ld). Inlined, the parameter slot held the whole register and the
/// load read it unextended (an `ld.param.u16` of a stored 0x703b8 gave 0x703b8: found
/// while testing large return values, `tests/data/open` of that session).
#[test]
fn sub_word_params_are_extended_by_the_load() {
    let funcs = ".func (.param .align 4 .b8 r[8]) f(.param .b8 a, .param .b16 b)\n{\n\
        .reg .b32 %v<4>;\n ld.param.u8 %v0, [a];\n ld.param.s16 %v1, [b];\n\
        mad.lo.u32 %v2, %v0, 0x10101, 0x8070;\n\
        st.param.b8 [r+0], %v2;\n st.param.b8 [r+1], %v2;\n st.param.b16 [r+2], %v2;\n\
        st.param.b16 [r+4], %v1;\n st.param.b16 [r+6], %v2;\n ret;\n}";
    let body = "mad.lo.u32 %r0, %x, 0x1234567, 0x89abcdef;\n\
        { .param .b8 pa; .param .b16 pb; .param .align 4 .b8 rr[8];\n\
        st.param.b8 [pa], %r0;\n st.param.b16 [pb], %r0;\n call (rr), f, (pa, pb);\n\
        ld.param.u8 %r1, [rr+0];\n ld.param.s8 %r2, [rr+1];\n ld.param.u16 %r3, [rr+2];\n\
        ld.param.s16 %r4, [rr+4];\n ld.param.s16 %r5, [rr+6]; }\n\
        st.global.v4.u32 [%o], {%r1, %r2, %r3, %r4};\nst.global.u32 [%o+16], %r5;";
    for (t, out) in run(&kernel(funcs, body)).iter().enumerate() {
        let r0 = input(t as u32).wrapping_mul(0x1234567).wrapping_add(0x89abcdef);
        let (a, b) = (r0 & 0xff, r0 as u16 as i16 as i32 as u32);
        let v2 = a.wrapping_mul(0x10101).wrapping_add(0x8070);
        let want = [
            v2 & 0xff,
            v2 as u8 as i8 as i32 as u32,
            v2 & 0xffff,
            b as u16 as i16 as i32 as u32,
            v2 as u16 as i16 as i32 as u32,
        ];
        assert_eq!(out[..5], want, "thread {t}");
    }
}
