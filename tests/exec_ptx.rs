//! The PTX reference interpreter (`exec::ptx`): hand-written kernels with hand-computed
//! results (integer ops, float rounding, sub-word loads, vectors, shared memory and
//! barriers, generic addressing, divergence, calls, errors), and every sample kernel on a
//! small launch with random inputs, several checked against a host computation.

use ptx2sass::exec::ptx::args::{self, Arg};
use ptx2sass::exec::{ExecError, Launch, Outcome, ptx};
use ptx2sass::ptx::ast::Module;

/// Deterministic pseudo-random bytes.
fn random(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

fn words(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn as_u32(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn as_u64(b: &[u8]) -> Vec<u64> {
    b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn parse(src: &str) -> Module {
    match ptx2sass::ptx::parse(src) {
        Ok((m, _)) => m,
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("test", src).render_all(&d)),
    }
}

/// A prepared launch (see `exec::ptx::args`).
struct Setup {
    launch: Launch,
}

impl Setup {
    fn new(module: &Module, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> Setup {
        Setup { launch: args::launch(module, kernel, grid, block, args, 5_000_000).unwrap() }
    }
}

/// Runs `kernel` of `src`.
fn run(src: &str, kernel: &str, grid: [u32; 3], block: [u32; 3], args: &[Arg]) -> Result<Outcome, ExecError> {
    let m = parse(src);
    let s = Setup::new(&m, kernel, grid, block, args);
    ptx::run(&m, &s.launch)
}

/// The bytes of buffer `name` after the launch.
fn buffer(o: &Outcome, name: &str) -> Vec<u8> {
    args::buffer(&o.global, name).expect("buffer").to_vec()
}

const HEAD: &str = ".version 8.3\n.target sm_50\n.address_size 64\n";

/// A one-thread kernel `k(.param .u64 out, .param .u64 in)` with `body`.
fn single(body: &str) -> String {
    format!(
        "{HEAD}.visible .entry k(.param .u64 out_p, .param .u64 in_p)\n{{\n\
         .reg .pred %p<8>;\n.reg .b16 %h<8>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<32>;\n\
         .reg .f32 %f<16>;\n.reg .f64 %fd<8>;\n.reg .b128 %q<4>;\n\
         ld.param.u64 %rd30, [out_p];\nld.param.u64 %rd31, [in_p];\n{body}\nret;\n}}\n"
    )
}

/// Runs a [`single`] kernel on one CTA of `threads` threads with a zeroed output of
/// `out` bytes and an 8-byte input.
fn run1(body: &str, threads: u32, out: usize) -> Result<Outcome, ExecError> {
    run(&single(body), "k", [1; 3], [threads, 1, 1], &[Arg::Buf(vec![0; out]), Arg::Buf(vec![0; 8])])
}

/// Runs a one-thread [`single`] kernel with `input` and a 256-byte output; returns the
/// output.
fn single_out(body: &str, input: Vec<u8>) -> Vec<u8> {
    let o = run(&single(body), "k", [1; 3], [1; 3], &[Arg::Buf(vec![0; 256]), Arg::Buf(input)]).unwrap();
    buffer(&o, "arg0")
}

#[test]
fn integer_arithmetic() {
    let body = "
        mov.u32 %r1, 0x7fffffff;
        add.s32 %r2, %r1, 1;            st.global.u32 [%rd30], %r2;
        mov.s32 %r3, -7;
        div.s32 %r4, %r3, 2;            st.global.u32 [%rd30+4], %r4;
        rem.s32 %r4, %r3, 2;            st.global.u32 [%rd30+8], %r4;
        div.u32 %r4, %r3, 2;            st.global.u32 [%rd30+12], %r4;
        shr.s32 %r4, %r3, 1;            st.global.u32 [%rd30+16], %r4;
        shr.u32 %r4, %r3, 1;            st.global.u32 [%rd30+20], %r4;
        mul.hi.s32 %r4, %r3, 0x40000000; st.global.u32 [%rd30+24], %r4;
        mul.hi.u32 %r4, %r3, 0x40000000; st.global.u32 [%rd30+28], %r4;
        mul.wide.s32 %rd1, %r3, 3;      st.global.u64 [%rd30+32], %rd1;
        mul.wide.u32 %rd1, %r3, 3;      st.global.u64 [%rd30+40], %rd1;
        min.s32 %r4, %r3, 5;            st.global.u32 [%rd30+48], %r4;
        min.u32 %r4, %r3, 5;            st.global.u32 [%rd30+52], %r4;
        mad.lo.s32 %r4, %r3, %r3, 100;  st.global.u32 [%rd30+56], %r4;
        bfe.s32 %r4, 0x00000f80, 7, 5;  st.global.u32 [%rd30+60], %r4;
        neg.s32 %r4, %r3;               st.global.u32 [%rd30+64], %r4;
        not.b32 %r4, 0x0f0f0f0f;        st.global.u32 [%rd30+68], %r4;
        add.cc.u32 %r5, 0xffffffff, 2;
        addc.u32 %r6, 0, 0;             st.global.v2.u32 [%rd30+72], {%r5, %r6};
        cvt.s8.s32 %r4, 0x1ff;          st.global.u32 [%rd30+80], %r4;
        cvt.sat.u8.s32 %r4, -5;         st.global.u32 [%rd30+84], %r4;
        cvt.s64.s32 %rd2, %r3;          st.global.u64 [%rd30+88], %rd2;
        cvt.u64.u32 %rd2, %r3;          st.global.u64 [%rd30+96], %rd2;
        shl.b32 %r4, 1, 40;             st.global.u32 [%rd30+104], %r4;
        setp.lt.s32 %p1, %r3, 0;
        setp.lt.u32 %p2, %r3, 0;
        selp.u32 %r4, 11, 22, %p1;      st.global.u32 [%rd30+108], %r4;
        selp.u32 %r4, 11, 22, %p2;      st.global.u32 [%rd30+112], %r4;
        popc.b32 %r4, 0xf0f0;           st.global.u32 [%rd30+116], %r4;
        clz.b32 %r4, 0x00010000;        st.global.u32 [%rd30+120], %r4;
        prmt.b32 %r4, 0x44332211, 0x88776655, 0x4501; st.global.u32 [%rd30+124], %r4;
        xor.b64 %rd3, 0xff00ff00ff00ff00, -1; st.global.u64 [%rd30+128], %rd3;
        not.b16 %h1, 0x00ff;  cvt.u32.u16 %r4, %h1; st.global.u32 [%rd30+136], %r4;
    ";
    let out = as_u32(&single_out(body, vec![0; 16]));
    let m7 = (-7i32) as u32;
    assert_eq!(out[0], 0x8000_0000, "add wraps");
    assert_eq!(out[1], (-3i32) as u32, "div.s32 truncates");
    assert_eq!(out[2], (-1i32) as u32, "rem.s32 has the sign of a");
    assert_eq!(out[3], m7 / 2);
    assert_eq!(out[4], (-4i32) as u32, "shr.s32 is arithmetic");
    assert_eq!(out[5], m7 >> 1);
    assert_eq!(out[6], (-2i32) as u32, "mul.hi.s32");
    assert_eq!(out[7], ((m7 as u64 * 0x4000_0000) >> 32) as u32, "mul.hi.u32");
    assert_eq!(out[8] as u64 | (out[9] as u64) << 32, (-21i64) as u64, "mul.wide.s32");
    assert_eq!(out[10] as u64 | (out[11] as u64) << 32, m7 as u64 * 3, "mul.wide.u32");
    assert_eq!(out[12], m7, "min.s32");
    assert_eq!(out[13], 5, "min.u32");
    assert_eq!(out[14], 149);
    assert_eq!(out[15], (-1i32) as u32, "bfe.s32 sign-extends the field");
    assert_eq!(out[16], 7);
    assert_eq!(out[17], 0xf0f0_f0f0);
    assert_eq!((out[18], out[19]), (1, 1), "add.cc carry into addc");
    assert_eq!(out[20], (-1i32) as u32, "cvt.s8.s32 chops then sign-extends");
    assert_eq!(out[21], 0, "cvt.sat.u8.s32 clamps");
    assert_eq!(out[22] as u64 | (out[23] as u64) << 32, (-7i64) as u64);
    assert_eq!(out[24] as u64 | (out[25] as u64) << 32, m7 as u64);
    assert_eq!(out[26], 0, "shl by more than the width");
    assert_eq!((out[27], out[28]), (11, 22), "signed vs unsigned compare");
    assert_eq!(out[29], 8);
    assert_eq!(out[30], 15);
    assert_eq!(out[31], 0x5566_1122, "prmt selectors 1, 0, 5, 4 (lowest nibble first)");
    assert_eq!(out[32] as u64 | (out[33] as u64) << 32, 0x00ff_00ff_00ff_00ff);
    assert_eq!(out[34], 0xff00, "not.b16 into a 16-bit register");
}

#[test]
fn float_rounding() {
    let body = "
        mov.f32 %f1, 0f3F800000;         // 1.0
        mov.f32 %f2, 0f30800000;         // 2^-30
        add.rz.f32 %f3, %f1, %f2;   st.global.f32 [%rd30], %f3;
        add.rp.f32 %f3, %f1, %f2;   st.global.f32 [%rd30+4], %f3;
        add.f32 %f3, %f1, %f2;      st.global.f32 [%rd30+8], %f3;
        mov.f32 %f4, 0f40400000;         // 3.0
        div.rn.f32 %f3, %f1, %f4;   st.global.f32 [%rd30+12], %f3;
        div.rz.f32 %f3, %f1, %f4;   st.global.f32 [%rd30+16], %f3;
        neg.f32 %f5, %f1;
        div.rm.f32 %f3, %f5, %f4;   st.global.f32 [%rd30+20], %f3;
        mov.f32 %f6, 0f3F800800;         // 1 + 2^-12
        mov.f32 %f7, 0fBF801000;         // -(1 + 2^-11)
        fma.rn.f32 %f3, %f6, %f6, %f7;   st.global.f32 [%rd30+24], %f3;
        mul.f32 %f8, %f6, %f6;
        add.f32 %f3, %f8, %f7;           st.global.f32 [%rd30+28], %f3;
        mad.f32 %f3, %f6, %f6, %f7;      st.global.f32 [%rd30+32], %f3;
        add.sat.f32 %f3, %f1, %f1;       st.global.f32 [%rd30+36], %f3;
        mov.f32 %f9, 0f00000010;         // subnormal
        add.f32 %f3, %f9, %f9;           st.global.f32 [%rd30+40], %f3;
        add.ftz.f32 %f3, %f9, %f9;       st.global.f32 [%rd30+44], %f3;
        cvt.rni.s32.f32 %r1, 0f40200000; st.global.u32 [%rd30+48], %r1;    // 2.5 -> 2
        cvt.rzi.s32.f32 %r1, 0fC02CCCCD; st.global.u32 [%rd30+52], %r1;    // -2.7 -> -2
        cvt.rmi.s32.f32 %r1, 0fC02CCCCD; st.global.u32 [%rd30+56], %r1;    // -2.7 -> -3
        cvt.rn.f32.s32 %f3, 16777217;    st.global.f32 [%rd30+60], %f3;
        cvt.rp.f32.s32 %f3, 16777217;    st.global.f32 [%rd30+64], %f3;
        sqrt.rn.f32 %f3, 0f40000000;     st.global.f32 [%rd30+68], %f3;
        ex2.approx.f32 %f3, 0f40400000;  st.global.f32 [%rd30+72], %f3;
        mov.f64 %fd1, 0d3FF0000000000000;
        mov.f64 %fd2, 0d4008000000000000;
        div.rn.f64 %fd3, %fd1, %fd2;     st.global.f64 [%rd30+80], %fd3;
        cvt.rn.f32.f64 %f3, %fd3;        st.global.f32 [%rd30+88], %f3;
        cvt.rz.f32.f64 %f3, %fd3;        st.global.f32 [%rd30+92], %f3;
        min.f32 %f3, 0f7FFFFFFF, %f1;    st.global.f32 [%rd30+96], %f3;
        setp.lt.f32 %p1, 0f7FFFFFFF, %f1;
        setp.ltu.f32 %p2, 0f7FFFFFFF, %f1;
        selp.u32 %r1, 1, 0, %p1;         st.global.u32 [%rd30+100], %r1;
        selp.u32 %r1, 1, 0, %p2;         st.global.u32 [%rd30+104], %r1;
        abs.f32 %f3, %f5;                st.global.f32 [%rd30+108], %f3;
    ";
    let out = as_u32(&single_out(body, vec![0; 16]));
    let f = |x: f32| x.to_bits();
    assert_eq!(out[0], f(1.0), "add.rz drops 2^-30");
    assert_eq!(out[1], f(1.0) + 1, "add.rp rounds up to 1 + 2^-23");
    assert_eq!(out[2], f(1.0));
    assert_eq!(out[3], 0x3eaa_aaab, "1/3 to nearest");
    assert_eq!(out[4], 0x3eaa_aaaa, "1/3 toward zero");
    assert_eq!(out[5], 0xbeaa_aaab, "-1/3 toward -inf");
    assert_eq!(out[6], f(2f32.powi(-24)), "fma keeps the product exact");
    assert_eq!(out[7], 0, "mul then add rounds the product");
    assert_eq!(out[8], f(2f32.powi(-24)), "mad.f32 is fused");
    assert_eq!(out[9], f(1.0), ".sat clamps");
    assert_eq!(out[10], 0x20, "subnormals kept without .ftz");
    assert_eq!(out[11], 0, ".ftz flushes");
    assert_eq!(out[12], 2, "cvt.rni ties to even");
    assert_eq!(out[13], (-2i32) as u32);
    assert_eq!(out[14], (-3i32) as u32);
    assert_eq!(out[15], f(16_777_216.0));
    assert_eq!(out[16], f(16_777_218.0));
    assert_eq!(out[17], 0x3fb5_04f3, "sqrt(2)");
    assert_eq!(out[18], f(8.0));
    assert_eq!(out[20] as u64 | (out[21] as u64) << 32, (1.0f64 / 3.0).to_bits());
    assert_eq!(out[22], 0x3eaa_aaab);
    assert_eq!(out[23], 0x3eaa_aaaa);
    assert_eq!(out[24], f(1.0), "min with a NaN gives the number");
    assert_eq!((out[25], out[26]), (0, 1), "ordered vs unordered compare");
    assert_eq!(out[27], f(1.0));
}

#[test]
fn subword_loads_and_vectors() {
    let body = "
        ld.global.s8 %r1, [%rd31];       st.global.u32 [%rd30], %r1;
        ld.global.u8 %r1, [%rd31];       st.global.u32 [%rd30+4], %r1;
        ld.global.s16 %r1, [%rd31+2];    st.global.u32 [%rd30+8], %r1;
        ld.global.u16 %r1, [%rd31+2];    st.global.u32 [%rd30+12], %r1;
        ld.global.s8 %rd1, [%rd31+1];    st.global.u64 [%rd30+16], %rd1;
        ld.global.s32 %r1, [%rd31+4];    cvt.s64.s32 %rd1, %r1; st.global.u64 [%rd30+24], %rd1;
        ld.global.v4.u32 {%r2, _, %r4, %r5}, [%rd31];
        st.global.v4.u32 [%rd30+32], {%r5, %r4, %r2, 7};
        ld.global.v2.u64 {%rd2, %rd3}, [%rd31];
        st.global.v2.u64 [%rd30+48], {%rd3, %rd2};
        ld.global.u8 %h1, [%rd31];
        st.global.u8 [%rd30+64], %h1;
        st.global.u16 [%rd30+66], %h1;
        st.global.u8 [%rd30+65], %r1;
        ld.global.b128 %q1, [%rd31];
        mov.b128 %q2, %q1;
        st.global.b128 [%rd30+80], %q2;
        .local .align 16 .b8 lq[32];
        st.local.b128 [lq+16], %q1;
        ld.local.v2.u64 {%rd4, %rd5}, [lq+16];
        st.global.v2.u64 [%rd30+96], {%rd5, %rd4};
    ";
    let input: Vec<u8> = vec![0x80, 0xfe, 0x34, 0x92, 0xf0, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8];
    let out = single_out(body, input.clone());
    let w = as_u32(&out);
    assert_eq!(w[0], 0xffff_ff80, "ld.s8 sign-extends");
    assert_eq!(w[1], 0x80, "ld.u8 zero-extends");
    assert_eq!(w[2], 0xffff_9234, "ld.s16 sign-extends");
    assert_eq!(w[3], 0x9234);
    assert_eq!(as_u64(&out[16..32]), [(-2i64) as u64, (-16i64) as u64], "to 64-bit registers");
    let iw = as_u32(&input);
    assert_eq!(&w[8..12], &[iw[3], iw[2], iw[0], 7], "v4 load with a sink, store with an immediate");
    let iq = as_u64(&input);
    assert_eq!(as_u64(&out[48..64]), [iq[1], iq[0]]);
    assert_eq!(&out[64..68], &[0x80, 0xf0, 0x80, 0x00], "sub-word stores");
    assert_eq!(&out[80..96], &input[..], ".b128 load, move and store");
    assert_eq!(as_u64(&out[96..112]), [iq[1], iq[0]], ".b128 is little-endian, low half first");
}

#[test]
fn misaligned_and_out_of_bounds() {
    let e = run1("ld.global.u32 %r1, [%rd31+2];", 1, 8);
    assert!(matches!(e, Err(ExecError::Misaligned { space: "global", len: 4, .. })), "{e:?}");
    let e = run1("st.global.u32 [%rd30+8], %r1;", 1, 8);
    assert!(matches!(e, Err(ExecError::OutOfBounds { space: "global", len: 4, .. })), "{e:?}");
    let e = run(
        &single("ld.global.v4.u32 {%r1,%r2,%r3,%r4}, [%rd31+8];"),
        "k",
        [1; 3],
        [1; 3],
        &[Arg::Buf(vec![0; 8]), Arg::Buf(vec![0; 32])],
    );
    assert!(matches!(e, Err(ExecError::Misaligned { len: 16, .. })), "vector alignment: {e:?}");
    let e = run1("loop: bra loop;", 1, 8);
    assert_eq!(e.unwrap_err(), ExecError::StepLimit(5_000_000));
    // A surface reduction through a handle no image has is a launch error naming it
    // (surface reductions run since issue 18's `sured` slice, tests/surfaces.rs).
    let e = run1("sured.b.add.1d.u32.trap [%rd1, {%r1}], %r1;", 1, 8);
    assert!(matches!(&e, Err(ExecError::Launch(m)) if m.contains("no texture or surface has the handle")), "{e:?}");
    // A texture query through a handle no image has is a launch error naming it.
    let e = run1("txq.width.b32 %r1, [%rd1];", 1, 8);
    assert!(matches!(&e, Err(ExecError::Launch(m)) if m.contains("no texture or surface has the handle")), "{e:?}");
}

/// Block-wide tree reduction in shared memory with `bar.sync` in a loop; thread 0 of
/// every CTA writes the CTA's sum. Then every thread reads a value another warp wrote.
const REDUCE: &str = "
.visible .entry reduce(.param .u64 in_p, .param .u64 out_p)
{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .shared .align 4 .b32 buf[128];
    ld.param.u64 %rd1, [in_p];
    ld.param.u64 %rd2, [out_p];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %ctaid.x;
    mad.lo.s32 %r4, %r3, %r2, %r1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r5, [%rd4];
    mov.u64 %rd5, buf;
    mul.wide.u32 %rd6, %r1, 4;
    add.s64 %rd7, %rd5, %rd6;
    st.shared.u32 [%rd7], %r5;
    bar.sync 0;
    shr.u32 %r6, %r2, 1;
LOOP:
    setp.eq.u32 %p1, %r6, 0;
    @%p1 bra DONE;
    setp.ge.u32 %p2, %r1, %r6;
    @%p2 bra SKIP;
    add.s32 %r7, %r1, %r6;
    mul.wide.u32 %rd8, %r7, 4;
    add.s64 %rd9, %rd5, %rd8;
    ld.shared.u32 %r8, [%rd9];
    ld.shared.u32 %r9, [%rd7];
    add.s32 %r9, %r9, %r8;
    st.shared.u32 [%rd7], %r9;
SKIP:
    bar.sync 0;
    shr.u32 %r6, %r6, 1;
    bra.uni LOOP;
DONE:
    setp.ne.u32 %p3, %r1, 0;
    @%p3 bra OUT;
    ld.shared.u32 %r10, [buf];
    mul.wide.u32 %rd10, %r3, 4;
    add.s64 %rd11, %rd2, %rd10;
    st.global.u32 [%rd11], %r10;
OUT:
    ret;
}
";

#[test]
fn shared_reduction_with_barriers() {
    let src = format!("{HEAD}{REDUCE}");
    let input: Vec<u32> = (0..256).map(|k| k * k + 1).collect();
    let o = run(&src, "reduce", [2, 1, 1], [128, 1, 1], &[Arg::Buf(words(&input)), Arg::Buf(vec![0; 8])]).unwrap();
    let out = as_u32(&buffer(&o, "arg1"));
    assert_eq!(out, [input[..128].iter().sum::<u32>(), input[128..].iter().sum::<u32>()]);
}

#[test]
fn barrier_orders_a_slow_warp_before_a_fast_one() {
    // Warp 1 spins before storing; thread 0 reads its value after the barrier.
    let body = "
        .shared .align 4 .b32 slot;
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 32;
        @%p1 bra WAIT;
        mov.u32 %r2, 0;
    SPIN:
        add.u32 %r2, %r2, 1;
        setp.lt.u32 %p2, %r2, 50;
        @%p2 bra SPIN;
        st.shared.u32 [slot], %r2;
    WAIT:
        bar.sync 0;
        setp.ne.u32 %p3, %r1, 0;
        @%p3 bra END;
        ld.shared.u32 %r3, [slot];
        st.global.u32 [%rd30], %r3;
    END:
    ";
    let args = [Arg::Buf(vec![0; 8]), Arg::Buf(vec![0; 8])];
    let o = run(&single(body), "k", [1; 3], [64, 1, 1], &args).unwrap();
    assert_eq!(as_u32(&buffer(&o, "arg0"))[0], 50);
    let o = run(&single(&body.replace("bar.sync 0;", "")), "k", [1; 3], [64, 1, 1], &args).unwrap();
    assert_eq!(as_u32(&buffer(&o, "arg0"))[0], 0, "without the barrier thread 0 reads too early");
}

#[test]
fn deadlock_is_reported() {
    // Even threads wait at barrier 0, odd ones at barrier 1: neither fills.
    let body = "
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 1;
        setp.eq.u32 %p1, %r2, 0;
        @%p1 bar.sync 0;
        @!%p1 bar.sync 1;
    ";
    let e = run1(body, 64, 8);
    assert!(matches!(e, Err(ExecError::Deadlock(_))), "{e:?}");
    // A thread count that can never be reached.
    let e = run1("bar.sync 0, 64;", 32, 8);
    assert!(matches!(e, Err(ExecError::Deadlock(_))), "{e:?}");
    // Threads that exit early do not block the others.
    let body = "
        mov.u32 %r1, %tid.x;
        setp.ge.u32 %p1, %r1, 40;
        @%p1 ret;
        bar.sync 0;
        st.global.u32 [%rd30], 5;
    ";
    let o = run1(body, 64, 8).unwrap();
    assert_eq!(as_u32(&buffer(&o, "arg0"))[0], 5);
}

#[test]
fn generic_addressing_through_cvta() {
    let src = format!(
        "{HEAD}
.visible .entry g(.param .u64 out_p)
{{
    .reg .pred %p<4>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<16>;
    .shared .align 8 .b32 sh[64];
    .local .align 8 .b32 lo[4];
    ld.param.u64 %rd1, [out_p];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, sh;
    cvta.shared.u64 %rd3, %rd2;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    add.u32 %r2, %r1, 1000;
    st.u32 [%rd5], %r2;
    bar.sync 0;
    xor.b32 %r3, %r1, 1;
    mul.wide.u32 %rd6, %r3, 4;
    add.s64 %rd7, %rd2, %rd6;
    ld.shared.u32 %r4, [%rd7];
    mov.u64 %rd8, lo;
    cvta.local.u64 %rd9, %rd8;
    st.u32 [%rd9+4], %r4;
    ld.local.u32 %r5, [lo+4];
    isspacep.shared %p1, %rd5;
    isspacep.global %p2, %rd5;
    isspacep.local %p3, %rd9;
    selp.u32 %r6, 1, 0, %p1;
    selp.u32 %r7, 2, 0, %p2;
    selp.u32 %r8, 4, 0, %p3;
    add.u32 %r6, %r6, %r7;
    add.u32 %r6, %r6, %r8;
    cvta.to.shared.u64 %rd10, %rd5;
    cvt.u32.u64 %r9, %rd10;
    mul.wide.u32 %rd11, %r1, 16;
    add.s64 %rd12, %rd1, %rd11;
    st.global.v4.u32 [%rd12], {{%r5, %r6, %r9, 0}};
    ret;
}}
"
    );
    let o = run(&src, "g", [1; 3], [4, 1, 1], &[Arg::Buf(vec![0; 64])]).unwrap();
    let out = as_u32(&buffer(&o, "arg0"));
    for t in 0..4u32 {
        let row = &out[4 * t as usize..4 * t as usize + 4];
        assert_eq!(row, [1000 + (t ^ 1), 5, 4 * t, 0], "thread {t}");
    }
    // A generic pointer made from a local address is not valid in another space.
    let bad = src.replace("st.u32 [%rd9+4], %r4;", "st.global.u32 [%rd9+4], %r4;");
    let e = run(&bad, "g", [1; 3], [4, 1, 1], &[Arg::Buf(vec![0; 64])]);
    assert!(matches!(e, Err(ExecError::OutOfBounds { space: "global", .. })), "{e:?}");
}

#[test]
fn divergence_and_reconvergence() {
    let body = "
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 3;
        mov.u32 %r3, 0;
        mov.u32 %r4, 0;
    LOOP:
        setp.ge.u32 %p1, %r4, %r2;
        @%p1 bra END;
        add.u32 %r3, %r3, %r4;
        add.u32 %r3, %r3, 10;
        add.u32 %r4, %r4, 1;
        bra LOOP;
    END:
        setp.lt.u32 %p2, %r1, 16;
        @%p2 bra LOW;
        mul.lo.u32 %r3, %r3, 100;
        bra JOIN;
    LOW:
        add.u32 %r3, %r3, 1;
    JOIN:
        mul.wide.u32 %rd1, %r1, 4;
        add.s64 %rd2, %rd30, %rd1;
        st.global.u32 [%rd2], %r3;
    ";
    let o = run1(body, 40, 160).unwrap();
    let out = as_u32(&buffer(&o, "arg0"));
    for t in 0..40u32 {
        let n = t & 3;
        let s: u32 = (0..n).map(|k| k + 10).sum();
        assert_eq!(out[t as usize], if t < 16 { s + 1 } else { s * 100 }, "thread {t}");
    }
}

#[test]
fn calls_consts_and_special_registers() {
    let src = format!(
        "{HEAD}
.const .align 4 .u32 tab[4] = {{10, 20, 30, 40}};
.const .align 8 .f64 half = 0d3FE0000000000000;
.func (.param .b32 r) twice(.param .b32 a, .param .b32 b)
{{
    .reg .b32 %r<4>;
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    mad.lo.u32 %r3, %r1, 2, %r2;
    st.param.b32 [r], %r3;
    ret;
}}
.visible .entry c(.param .u64 out_p)
{{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .f64 %fd<2>;
    ld.param.u64 %rd1, [out_p];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %nctaid.x;
    mad.lo.u32 %r6, %r2, %r4, %r1;
    and.b32 %r7, %r6, 3;
    mul.wide.u32 %rd2, %r7, 4;
    mov.u64 %rd3, tab;
    add.s64 %rd3, %rd3, %rd2;
    ld.const.u32 %r8, [%rd3];
    {{
        .param .b32 a0;
        .param .b32 a1;
        .param .b32 r0;
        st.param.b32 [a0], %r8;
        st.param.b32 [a1], %r3;
        call.uni (r0), twice, (a0, a1);
        ld.param.b32 %r9, [r0];
    }}
    ld.const.f64 %fd1, [half];
    cvt.rzi.u32.f64 %r10, %fd1;
    add.u32 %r9, %r9, %r10;
    mov.u32 %r11, %laneid;
    mov.u32 %r12, %warpid;
    mad.lo.u32 %r13, %r3, 64, %r6;
    mul.wide.u32 %rd4, %r13, 16;
    add.s64 %rd5, %rd1, %rd4;
    st.global.v4.u32 [%rd5], {{%r9, %r11, %r12, %r5}};
    ret;
}}
"
    );
    let o = run(&src, "c", [2, 1, 1], [16, 4, 1], &[Arg::Buf(vec![0; 2 * 64 * 16])]).unwrap();
    let out = as_u32(&buffer(&o, "arg0"));
    for cta in 0..2u32 {
        for lin in 0..64u32 {
            let row = &out[4 * (cta * 64 + lin) as usize..][..4];
            let expect = [[10, 20, 30, 40][(lin & 3) as usize] * 2 + cta, lin % 32, lin / 32, 2];
            assert_eq!(row, expect, "cta {cta} thread {lin}");
        }
    }
}

fn sample(name: &str) -> String {
    std::fs::read_to_string(format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Random floats in [-4, 4) (no NaN), as bytes.
fn rand_floats(seed: u64, n: usize) -> Vec<u8> {
    let r = random(seed, 4 * n);
    floats(&as_u32(&r).iter().map(|x| (*x as f32 / u32::MAX as f32) * 8.0 - 4.0).collect::<Vec<f32>>())
}

/// Random f64 in [-4, 4), as bytes.
fn rand_doubles(seed: u64, n: usize) -> Vec<u8> {
    let r = random(seed, 8 * n);
    as_u64(&r).iter().flat_map(|x| ((*x >> 11) as f64 / (1u64 << 53) as f64 * 8.0 - 4.0).to_le_bytes()).collect()
}

/// A launch of one sample kernel.
struct SampleRun {
    file: &'static str,
    kernel: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<Arg>,
}

const KB: usize = 1024;

#[rustfmt::skip]
fn sample_runs() -> Vec<SampleRun> {
    use Arg::*;
    let b = |seed: u64| Buf(random(seed, 16 * KB));
    let f = |seed: u64| Buf(rand_floats(seed, 4 * KB));
    let d = |seed: u64| Buf(rand_doubles(seed, 2 * KB));
    let s = |file, kernel, grid: [u32; 3], block: [u32; 3], args| SampleRun { file, kernel, grid, block, args };
    let (g2, b64) = ([2, 1, 1], [64, 1, 1]);
    // Box {lo_x, lo_y, hi_x, hi_y} of nvcc_particles, passed by value (.b8[16]).
    let bx = Bytes([-3.0f32, -2.0, 3.0, 2.5].iter().flat_map(|x| x.to_le_bytes()).collect());
    vec![
        s("atomic_max_f32", "atomic_max_f32", g2, b64, vec![f(1), f(2), b(3), Int(100)]),
        s("bitonic_sort", "bitonic_sort512", g2, [256, 1, 1], vec![b(1), Int(1000)]),
        s("block_scan", "block_scan", g2, [256, 1, 1], vec![b(1), b(2), b(3)]),
        s("bytes_shorts", "bytes_shorts", g2, b64, vec![b(1), b(2), b(3), b(4), Int(3), Int(100)]),
        s("clamp_select", "clamp_select", g2, b64,
          vec![b(1), b(2), f(3), d(4), Int(-5), Int(100), F32(2.5), F64(-1.0), Int(100)]),
        s("const_table", "const_table", g2, b64, vec![b(1), f(2), f(3), Int(100)]),
        s("daxpy", "daxpy", g2, b64, vec![Int(100), F64(1.5), d(1), d(2)]),
        s("device_globals", "device_globals", g2, b64, vec![b(1), b(2), Int(100)]),
        s("generic_call", "generic_call", g2, b64, vec![f(1), f(2), f(3), f(4), Int(100)]),
        s("histogram_atomic", "histogram_atomic", g2, b64, vec![b(1), b(2), Int(1000)]),
        s("int_ops", "int_ops", g2, b64, vec![
            Buf(int_ops_input(1, 4)), Buf(int_ops_input(2, 4)), Buf(int_ops_input(3, 8)), Buf(int_ops_input(4, 8)),
            Buf(vec![0; 64 * 100]), Buf(vec![0; 64 * 100]), Int(100),
        ]),
        s("local_array", "local_array", g2, b64, vec![b(1), b(2), Int(8), Int(128)]),
        s("many_params", "many_params", g2, b64, vec![
            Int(-3), Int(200), Int(-1000), Int(60000), Int(7), Int(9), Int(-5), Int(1 << 40),
            F32(0.5), F64(2.25), b(1), b(2), b(3), b(4), Int(100),
        ]),
        s("nvcc_matvec", "_Z6matvecPKfS0_Pfii", g2, b64, vec![f(1), f(2), f(3), Int(100), Int(13)]),
        s("nvcc_particles", "_Z7advanceP6float2PKS_3Boxfi", g2, b64, vec![f(1), f(2), bx, F32(0.75), Int(100)]),
        s("nvcc_scan", "_Z5scan4PK4int4PS_Pii", g2, b64, vec![b(1), b(2), b(3), Int(100)]),
        s("nvcc_style", "_Z9scale_addPKfS0_Pffi", g2, b64, vec![f(1), f(2), f(3), F32(1.5), Int(100)]),
        s("nbody", "nbody", g2, b64, vec![f(1), f(2), f(3), f(4), Int(100), F32(0.01), F32(0.5)]),
        s("black_scholes", "black_scholes", g2, b64,
          vec![f(1), f(2), f(3), f(4), f(5), F32(0.02), F32(0.3), Int(100)]),
        s("float_math", "float_math", g2, b64, vec![f(1), f(2), d(3), d(4), f(5), d(6), b(7), Int(100)]),
        s("pair_dist_f64", "pair_dist_f64", g2, b64,
          vec![d(1), d(2), d(3), d(4), d(5), b(6), F64(1.0), F64(9.0), Int(2), Int(100)]),
        s("pointer_table", "pointer_table", g2, b64, vec![
            Table((1..5).map(|k| rand_floats(k, 256)).collect()),
            Table(vec![vec![0; 1024], vec![0; 1024]]),
            f(7),
            Int(100),
        ]),
        s("reduce_sum", "reduce_sum", g2, [128, 1, 1], vec![f(1), f(2), Int(500)]),
        s("saxpy", "saxpy", g2, b64, vec![Int(100), F32(2.0), f(1), f(2)]),
        s("sgemm_reg", "sgemm_reg4x4", g2, [8, 8, 1], vec![
            Int(30), Int(60), Int(20), F32(0.5), f(1), Int(21), f(2), Int(63), F32(-1.0), f(3), Int(62),
        ]),
        s("sha256", "sha256_blocks", g2, b64, vec![b(1), b(2), Int(100)]),
        s("stencil5", "stencil5", [3, 3, 1], [8, 4, 1],
          vec![f(1), f(2), Int(20), Int(10), Int(24), F32(0.5), F32(0.125)]),
        s("strided_sum", "strided_sum", [1, 1, 1], b64, vec![f(1), f(2), Int(5), Int(50), Int(64)]),
        s("transpose_tiled", "transpose_tiled", [2, 2, 1], [32, 8, 1],
          vec![Buf(vec![0; 40 * 36 * 4]), f(1), Int(40), Int(36)]),
        s("vector_add", "vector_add", g2, b64, vec![f(1), f(2), f(3), Int(100)]),
        s("vector_types", "vector_types", g2, b64, vec![f(1), b(2), f(3), b(4), F32(0.5), Int(100)]),
        s("warp_reduce", "warp_reduce", g2, b64, vec![b(1), b(2), b(3), b(4), Int(100)]),
        s("xorshift64", "xorshift64", g2, b64, vec![b(1), f(2), Int(5), Int(100)]),
    ]
}

fn run_sample(r: &SampleRun) -> (Outcome, Launch) {
    let src = sample(r.file);
    let m = parse(&src);
    let s = Setup::new(&m, r.kernel, r.grid, r.block, &r.args);
    match ptx::run(&m, &s.launch) {
        Ok(o) => (o, s.launch),
        Err(e) => panic!("{}: {e}", r.file),
    }
}

#[test]
fn every_sample_runs() {
    let runs = sample_runs();
    let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".ptx").map(str::to_string))
        .filter(|n| n != "stress_spill")
        // Texture and surface samples need images: tests/texture_forms.rs runs them.
        .filter(|n| !["surf_write", "tex_bilinear", "tex_sampler"].contains(&n.as_str()))
        .collect();
    files.sort();
    for f in &files {
        assert!(runs.iter().any(|r| r.file == f), "sample {f} has no launch in this test");
    }
    for r in &runs {
        let (o, l) = run_sample(r);
        assert!(o.steps > 0);
        eprintln!("{}: {} steps", r.file, o.steps);
        assert!(!l.global.diff(&o.global).is_empty(), "{}: the launch wrote nothing", r.file);
    }
}

fn find<'a>(runs: &'a [SampleRun], file: &str) -> &'a SampleRun {
    runs.iter().find(|r| r.file == file).unwrap()
}

fn arg_bytes(r: &SampleRun, k: usize) -> Vec<u8> {
    match &r.args[k] {
        Arg::Buf(b) => b.clone(),
        _ => panic!("argument {k} is not a buffer"),
    }
}

/// 100 operands of `bytes` bytes for `int_ops`: edge values (0, 1, -1, MIN, MAX, small
/// divisors) at every third element, random values of random magnitude otherwise.
fn int_ops_input(seed: u64, bytes: usize) -> Vec<u8> {
    let r = random(seed, 1600);
    let bits = 8 * bytes as u32;
    let min = 1u64 << (bits - 1);
    let edges = [0, 1, u64::MAX, min, min - 1, 7, 3, u64::MAX - 9];
    (0..100)
        .flat_map(|k| {
            let x = u64::from_le_bytes(r[16 * k..16 * k + 8].try_into().unwrap());
            let v = if k % 3 == 0 { edges[(k / 3 + seed as usize) % edges.len()] } else { x >> (r[16 * k + 8] % 64) };
            v.to_le_bytes()[..bytes].to_vec()
        })
        .collect()
}

/// `samples/int_ops.cu` computed on the host (wrapping arithmetic where C would overflow,
/// as the PTX instructions clang emits define it).
fn int_ops_host(x: i32, y: i32, p: i64, q: i64) -> ([u32; 16], [u64; 8]) {
    let (ux, uy, up, uq) = (x as u32, y as u32, p as u64, q as u64);
    let mulhi = |a: i64, b: i64| ((a as i128 * b as i128) >> 32) as u32;
    let sad_u = ux.abs_diff(uy).wrapping_add(5);
    let sad_i = x.abs_diff(y).wrapping_add(-5i32 as u32);
    let prmt = {
        let bytes = ((uy as u64) << 32 | ux as u64).to_le_bytes();
        u32::from_le_bytes([bytes[0], bytes[4], bytes[1], bytes[5]])
    };
    let mul24 = ((x << 8 >> 8) as i64 * (y << 8 >> 8) as i64) as u32;
    let o = [
        if y != 0 { x.wrapping_div(y) as u32 } else { 0 },
        if y != 0 { x.wrapping_rem(y) as u32 } else { 0 },
        ux.checked_div(uy).unwrap_or(0),
        ux.checked_rem(uy).unwrap_or(0),
        (ux / 7).wrapping_add((x / -10) as u32),
        mulhi(ux as i64, uy as i64) ^ mulhi(x as i64, y as i64),
        ux.count_ones() + 64 * up.count_ones(),
        ux.leading_zeros() | up.leading_zeros() << 8,
        ux.reverse_bits() ^ (up.reverse_bits() >> 7) as u32,
        ux.rotate_left(uy % 32) ^ ux.rotate_right((uy >> 3) % 32),
        (x.min(y).wrapping_add(x.max(y).wrapping_mul(3)) as u32) ^ x.wrapping_abs() as u32 ^ ux.min(uy),
        sad_u.wrapping_add(sad_i),
        prmt.wrapping_add(mul24),
        ((up as u128 + uq as u128) >> 32) as u32,
        (((ux as u64 * uy as u64) >> 16) as u32).wrapping_add(((x as i64 * y as i64) >> 32) as u32),
        ((x >> (uy & 31)) as u32).wrapping_add(ux >> (uy & 31)),
    ];
    let hi64 = |a: i128, b: i128| ((a * b) >> 64) as u64;
    let o64 = [
        if q != 0 { p.wrapping_div(q) as u64 } else { 0 },
        if q != 0 { p.wrapping_rem(q) as u64 } else { 0 },
        up.checked_div(uq).unwrap_or(0),
        up.checked_rem(uq).unwrap_or(0),
        up.wrapping_mul(uq).wrapping_add(hi64(p as i128, q as i128)),
        hi64(up as i128, uq as i128),
        (up << (uy & 63)) ^ (up >> (ux & 63)) ^ (p >> (uy & 63)) as u64,
        (p.min(q).wrapping_sub(up.max(uq) as i64) as u64)
            .wrapping_add(p.wrapping_abs() as u64)
            .wrapping_add(up / 1_000_000_007),
    ];
    (o, o64)
}

#[test]
fn int_ops_matches_the_host() {
    let runs = sample_runs();
    let r = find(&runs, "int_ops");
    let (o, _) = run_sample(r);
    let (a, b) = (as_u32(&arg_bytes(r, 0)), as_u32(&arg_bytes(r, 1)));
    let (c, d) = (as_u64(&arg_bytes(r, 2)), as_u64(&arg_bytes(r, 3)));
    let (out, out64) = (as_u32(&buffer(&o, "arg4")), as_u64(&buffer(&o, "arg5")));
    for i in 0..100 {
        let (want, want64) = int_ops_host(a[i] as i32, b[i] as i32, c[i] as i64, d[i] as i64);
        let ops = (a[i], b[i], c[i], d[i]);
        for k in 0..16 {
            assert_eq!(out[16 * i + k], want[k], "int_ops o[{k}] of thread {i}, operands {ops:#x?}");
        }
        for k in 0..8 {
            assert_eq!(out64[8 * i + k], want64[k], "int_ops o64[{k}] of thread {i}, operands {ops:#x?}");
        }
    }
}

#[test]
#[allow(clippy::needless_range_loop)]
fn samples_match_host_computations() {
    let runs = sample_runs();
    // block_scan: inclusive prefix sums of each 256-element block, and block totals.
    let r = find(&runs, "block_scan");
    let (o, _) = run_sample(r);
    let input = as_u32(&arg_bytes(r, 0));
    let (out, totals) = (as_u32(&buffer(&o, "arg1")), as_u32(&buffer(&o, "arg2")));
    for blk in 0..2 {
        let mut acc = 0u32;
        for k in 0..256 {
            acc = acc.wrapping_add(input[blk * 256 + k]);
            assert_eq!(out[blk * 256 + k], acc, "block_scan element {}", blk * 256 + k);
        }
        assert_eq!(totals[blk], acc);
    }
    // saxpy: y = fma(a, x, y) for i < n, the rest untouched.
    let r = find(&runs, "saxpy");
    let (o, _) = run_sample(r);
    let (x, y0) = (as_u32(&arg_bytes(r, 2)), as_u32(&arg_bytes(r, 3)));
    let y = as_u32(&buffer(&o, "arg3"));
    for i in 0..y.len() {
        let want = if i < 100 { 2.0f32.mul_add(f32::from_bits(x[i]), f32::from_bits(y0[i])).to_bits() } else { y0[i] };
        assert_eq!(y[i], want, "saxpy y[{i}]");
    }
    // vector_add.
    let r = find(&runs, "vector_add");
    let (o, l) = run_sample(r);
    let (a, b) = (as_u32(&arg_bytes(r, 0)), as_u32(&arg_bytes(r, 1)));
    let c = as_u32(&buffer(&o, "arg2"));
    for i in 0..100 {
        assert_eq!(c[i], (f32::from_bits(a[i]) + f32::from_bits(b[i])).to_bits(), "vector_add c[{i}]");
    }
    assert_eq!(&buffer(&o, "arg2")[400..], &arg_bytes(r, 2)[400..], "vector_add writes only i < n");
    assert_eq!(o.global.diff(&l.global).len(), 1, "vector_add changes only c");
    // xorshift64: the state after 5 steps.
    let r = find(&runs, "xorshift64");
    let (o, _) = run_sample(r);
    let st0 = as_u64(&arg_bytes(r, 0));
    let st = as_u64(&buffer(&o, "arg0"));
    for i in 0..100 {
        let mut x = st0[i];
        for _ in 0..5 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
        }
        assert_eq!(st[i], x, "xorshift64 state[{i}]");
    }
    // bytes_shorts: u8 zero extension, s16 sign extension, 16-bit truncation.
    let r = find(&runs, "bytes_shorts");
    let (o, _) = run_sample(r);
    let (pix, off) = (arg_bytes(r, 0), arg_bytes(r, 1));
    let (out, mask) = (buffer(&o, "arg2"), buffer(&o, "arg3"));
    for i in 0..100 {
        let v = (pix[i] as i32 - 128) * 3 + i16::from_le_bytes([off[2 * i], off[2 * i + 1]]) as i32;
        assert_eq!(i16::from_le_bytes([out[2 * i], out[2 * i + 1]]), v as i16, "bytes_shorts out[{i}]");
        assert_eq!(mask[i], if v < 0 { 0 } else { 255 }, "bytes_shorts mask[{i}]");
    }
    // transpose_tiled: out[x][y] = in[y][x] for a 40 x 36 matrix.
    let r = find(&runs, "transpose_tiled");
    let (o, _) = run_sample(r);
    let (input, out) = (as_u32(&arg_bytes(r, 1)), as_u32(&buffer(&o, "arg0")));
    for y in 0..36 {
        for x in 0..40 {
            assert_eq!(out[x * 36 + y], input[y * 40 + x], "transpose ({x}, {y})");
        }
    }
    // generic_call: a device function through generic pointers and .param arguments.
    let r = find(&runs, "generic_call");
    let (o, _) = run_sample(r);
    let fl = |k: usize| as_u32(&arg_bytes(r, k)).into_iter().map(f32::from_bits).collect::<Vec<f32>>();
    let (pa, pb, sums0) = (fl(0), fl(1), fl(2));
    let (sums, dots) = (as_u32(&buffer(&o, "arg2")), as_u32(&buffer(&o, "arg3")));
    for i in 0..100 {
        let (a, b) = (&pa[3 * i..3 * i + 3], &pb[3 * i..3 * i + 3]);
        let dot = a[2].mul_add(b[2], a[0].mul_add(b[0], a[1] * b[1]));
        assert_eq!(dots[i], dot.to_bits(), "generic_call dots[{i}]");
        assert_eq!(sums[i], (sums0[i] + dot).to_bits(), "generic_call sums[{i}]");
    }
    // reduce_sum: pairwise loads, then a shared-memory tree per CTA of 128 threads.
    let r = find(&runs, "reduce_sum");
    let (o, _) = run_sample(r);
    let input: Vec<f32> = as_u32(&arg_bytes(r, 0)).into_iter().map(f32::from_bits).collect();
    let partial = as_u32(&buffer(&o, "arg1"));
    for blk in 0..2 {
        let mut v: Vec<f32> = (0..128)
            .map(|t| {
                let i = blk * 256 + t;
                let x = if i < 500 { input[i] } else { 0.0 };
                if i + 128 < 500 { x + input[i + 128] } else { x }
            })
            .collect();
        let mut s = 64;
        while s > 0 {
            for t in 0..s {
                v[t] += v[t + s];
            }
            s /= 2;
        }
        assert_eq!(partial[blk], v[0].to_bits(), "reduce_sum partial[{blk}]");
    }
    // pointer_table: dst_rows[r][i] = w[r] * sum of src_rows[s][i].
    let r = find(&runs, "pointer_table");
    let (o, _) = run_sample(r);
    let Arg::Table(src) = &r.args[0] else { unreachable!() };
    let w = as_u32(&arg_bytes(r, 2));
    for row in 0..2 {
        let dst = as_u32(&buffer(&o, &format!("arg1.{row}")));
        for i in 0..100 {
            let sum = (0..4).fold(0.0f32, |acc, s| acc + f32::from_bits(as_u32(&src[s])[i]));
            assert_eq!(dst[i], (f32::from_bits(w[row]) * sum).to_bits(), "pointer_table [{row}][{i}]");
        }
    }
}

#[test]
fn atomics_and_reductions() {
    let body = "
        .shared .align 8 .b32 sh[2];
        mov.u32 %r1, %tid.x;
        and.b32 %r2, %r1, 3;
        mul.wide.u32 %rd1, %r2, 4;
        add.s64 %rd2, %rd30, %rd1;
        atom.global.add.u32 %r3, [%rd2], %r1;
        red.shared.add.u32 [sh], 1;
        atom.global.max.s32 %r4, [%rd30+16], %r1;
        neg.s32 %r5, %r1;
        atom.relaxed.gpu.global.min.s32 %r4, [%rd30+20], %r5;
        atom.global.inc.u32 %r4, [%rd30+24], 9;
        atom.global.cas.b32 %r6, [%rd30+28], %r1, 100;
        atom.global.exch.b64 %rd3, [%rd30+32], 7;
        mov.f32 %f1, 0f3F000000;
        atom.global.add.f32 %f2, [%rd30+40], %f1;
        mov.u64 %rd4, sh;
        cvta.shared.u64 %rd5, %rd4;
        atom.or.b32 %r7, [%rd5+4], %r1;
        bar.sync 0;
        setp.ne.u32 %p1, %r1, 0;
        @%p1 bra END;
        ld.shared.v2.u32 {%r8, %r9}, [sh];
        st.global.v2.u32 [%rd30+48], {%r8, %r9};
    END:
    ";
    let o = run1(body, 64, 64).unwrap();
    let out = as_u32(&buffer(&o, "arg0"));
    for k in 0..4u32 {
        assert_eq!(out[k as usize], (0..64).filter(|t| t & 3 == k).sum::<u32>(), "atom.add bucket {k}");
    }
    assert_eq!(out[4], 63, "atom.max.s32");
    assert_eq!(out[5], (-63i32) as u32, "atom.min.s32");
    assert_eq!(out[6], 64 % 10, "atom.inc wraps at b + 1");
    assert_eq!(out[7], 100, "cas succeeds once (thread 0 sees 0), then never matches");
    assert_eq!((out[8], out[9]), (7, 0), "exch.b64");
    assert_eq!(out[10], 32f32.to_bits(), "64 times 0.5");
    assert_eq!(out[12], 64, "red.shared.add");
    assert_eq!(out[13], 63, "generic atom.or on shared memory");
    // An atomic is still bounds-checked.
    let e = run1("atom.global.add.u32 %r1, [%rd30+8], 1;", 1, 8);
    assert!(matches!(e, Err(ExecError::OutOfBounds { .. })), "{e:?}");
}

/// One `ld`/`st` round trip kernel: loads `vec` elements of `ty` from the input with
/// `ld.global`, stores them with `st{st_q}{space}`, loads them back with `ld{ld_q}{space}`
/// and writes them to the output with `st.global`. `const` and kernel-param spaces are
/// only loaded from (their bytes are the pattern 0, 1, 2, ...).
fn round_trip_kernel(idx: usize, space: &str, ld_q: &str, st_q: &str, vec: u32, ty: &str) -> String {
    let bits: u32 = ty[1..].parse().unwrap();
    let reg = |k: u32| match bits {
        128 => format!("%q{k}"),
        64 => format!("%rd{}", 10 + k),
        _ => format!("%r{k}"),
    };
    let list = |base: u32| {
        let v: Vec<String> = (0..vec).map(|k| reg(base + k)).collect();
        if vec == 1 { v[0].clone() } else { format!("{{{}}}", v.join(", ")) }
    };
    let v = if vec == 1 { String::new() } else { format!(".v{vec}") };
    let (addr, setup) = match space {
        "" => ("[%rd3]", "mov.u64 %rd4, sh;\ncvta.shared.u64 %rd3, %rd4;\n"),
        ".global" => ("[%rd3+64]", "mov.u64 %rd3, %rd1;\n"),
        ".shared" | ".shared::cta" => ("[sh+32]", ""),
        ".local" => ("[lv]", ""),
        ".param::func" => ("[fp]", ""),
        ".const" => ("[cv+32]", ""),
        _ => ("[kbig+32]", ""),
    };
    let load_only = matches!(space, ".const" | ".param" | ".param::entry");
    let mut body = format!("ld.param.u64 %rd1, [out_p];\nld.param.u64 %rd2, [in_p];\n{setup}");
    if !load_only {
        body += &format!("ld.global{v}.{ty} {}, [%rd2];\nst{st_q}{space}{v}.{ty} {addr}, {};\n", list(0), list(0));
    }
    body += &format!("ld{ld_q}{space}{v}.{ty} {}, {addr};\nst.global{v}.{ty} [%rd1], {};\n", list(8), list(8));
    format!(
        ".visible .entry k{idx}(.param .u64 out_p, .param .u64 in_p, .param .align 32 .b8 kbig[64])\n{{\n\
         .reg .b32 %r<17>;\n.reg .b64 %rd<26>;\n.reg .b128 %q<17>;\n\
         .local .align 32 .b8 lv[64];\n.param .align 32 .b8 fp[64];\n{body}ret;\n}}\n"
    )
}

#[test]
fn every_ld_st_form_round_trips() {
    let spaces =
        ["", ".global", ".shared", ".shared::cta", ".local", ".param::func", ".const", ".param", ".param::entry"];
    let quals: [(&str, &str); 9] = [
        ("", ""),
        (".weak", ".weak"),
        (".volatile", ".volatile"),
        (".relaxed.gpu", ".relaxed.sys"),
        (".acquire.cta", ".release.gpu"),
        (".ca", ".wb"),
        (".cg", ".cg"),
        (".cs", ".wt"),
        (".L1::evict_last", ".L1::no_allocate"),
    ];
    let types = ["u8", "s8", "u16", "s16", "b32", "f32", "s32", "b64", "f64", "u64", "b128"];
    let mut cases = vec![];
    for space in spaces {
        for ty in types {
            for vec in [1u32, 2, 4, 8] {
                let bits: u32 = ty[1..].parse().unwrap();
                if (vec == 8 && bits != 32) || (bits == 128 && vec > 1) || bits * vec > 256 {
                    continue;
                }
                let sems_ok = matches!(space, "" | ".global" | ".shared" | ".shared::cta");
                let (ld_q, st_q) = quals[cases.len() % if sems_ok { quals.len() } else { 1 }];
                cases.push((space, ld_q, st_q, vec, ty));
            }
        }
    }
    let mut src = format!("{HEAD}.shared .align 32 .b8 sh[64];\n.const .align 32 .b8 cv[64] = {{");
    src += &(0..64).map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
    src += "};\n";
    for (k, (space, ld_q, st_q, vec, ty)) in cases.iter().enumerate() {
        src += &round_trip_kernel(k, space, ld_q, st_q, *vec, ty);
    }
    let m = parse(&src.replace(".version 8.3", ".version 8.8"));
    let input = random(9, 64);
    let pattern: Vec<u8> = (0..64).collect();
    for (k, (space, ld_q, st_q, vec, ty)) in cases.iter().enumerate() {
        let bytes = *vec as usize * ty[1..].parse::<usize>().unwrap() / 8;
        let args = [Arg::Buf(vec![0; 128]), Arg::Buf(input.clone()), Arg::Bytes(pattern.clone())];
        let s = Setup::new(&m, &format!("k{k}"), [1; 3], [1; 3], &args);
        let what = format!("ld{ld_q}/st{st_q}{space}.v{vec}.{ty}");
        let o = ptx::run(&m, &s.launch).unwrap_or_else(|e| panic!("{what}: {e}"));
        let out = buffer(&o, "arg0");
        let want = if matches!(*space, ".const" | ".param" | ".param::entry") { &pattern[32..] } else { &input[..] };
        assert_eq!(&out[..bytes], &want[..bytes], "{what}");
        assert!(out[bytes..64].iter().all(|b| *b == 0), "{what} wrote past its end");
    }
}

#[test]
fn warp_shuffles_and_votes() {
    // Per lane: butterfly sum of lane ids, inclusive scan via shfl.up, ballot of odd lanes,
    // vote.all/any, activemask inside a branch taken by lanes < 8; 40 threads (a tail warp).
    let body = "
        mov.u32 %r1, %laneid;
        mov.u32 %r2, %r1;
        shfl.sync.bfly.b32 %r3, %r2, 16, 31, -1;  add.u32 %r2, %r2, %r3;
        shfl.sync.bfly.b32 %r3, %r2, 8, 31, -1;   add.u32 %r2, %r2, %r3;
        shfl.sync.bfly.b32 %r3, %r2, 4, 31, -1;   add.u32 %r2, %r2, %r3;
        shfl.sync.bfly.b32 %r3, %r2, 2, 31, -1;   add.u32 %r2, %r2, %r3;
        shfl.sync.bfly.b32 %r3, %r2, 1, 31, -1;   add.u32 %r2, %r2, %r3;
        mov.u32 %r4, %r1;
        shfl.sync.up.b32 %r5|%p1, %r4, 1, 0, -1;  @%p1 add.u32 %r4, %r4, %r5;
        shfl.sync.up.b32 %r5|%p1, %r4, 2, 0, -1;  @%p1 add.u32 %r4, %r4, %r5;
        and.b32 %r6, %r1, 1;
        setp.eq.u32 %p2, %r6, 1;
        vote.sync.ballot.b32 %r7, %p2, -1;
        vote.sync.any.pred %p3, %p2, -1;
        vote.sync.all.pred %p4, %p2, -1;
        selp.u32 %r8, 1, 0, %p3;
        selp.u32 %r9, 2, 0, %p4;
        or.b32 %r8, %r8, %r9;
        mov.u32 %r10, 0;
        setp.lt.u32 %p5, %r1, 8;
        @!%p5 bra SKIP;
        activemask.b32 %r10;
    SKIP:
        mov.u32 %r11, %tid.x;
        mul.wide.u32 %rd1, %r11, 32;
        add.s64 %rd2, %rd30, %rd1;
        st.global.v4.u32 [%rd2], {%r2, %r4, %r7, %r8};
        st.global.u32 [%rd2+16], %r10;
    ";
    // The tail warp's shuffles read lanes that do not exist: undefined, reported.
    let e = run1(body, 40, 40 * 32);
    assert!(matches!(e, Err(ExecError::Unsupported(ref s)) if s.contains("inactive lane")), "{e:?}");
    let o = run1(body, 64, 64 * 32).unwrap();
    let out = as_u32(&buffer(&o, "arg0"));
    for t in 0..64u32 {
        let lane = t % 32;
        let row = &out[8 * t as usize..][..5];
        let scan: u32 = (lane.saturating_sub(3)..=lane).sum();
        assert_eq!(row[0], (0..32).sum::<u32>(), "butterfly sum, thread {t}");
        assert_eq!(row[1], scan, "shfl.up scan, thread {t}");
        assert_eq!(row[2], 0xaaaa_aaaa, "ballot, thread {t}");
        assert_eq!(row[3], 1, "any but not all, thread {t}");
        assert_eq!(row[4], if lane < 8 { 0xff } else { 0 }, "activemask, thread {t}");
    }
}

#[test]
fn samples_with_tiny_buffers_fail_cleanly() {
    // Every buffer 4 bytes and every integer argument large: an error value, never a panic.
    for r in sample_runs() {
        let args: Vec<Arg> = r
            .args
            .iter()
            .map(|a| match a {
                Arg::Buf(_) => Arg::Buf(vec![0; 4]),
                Arg::Table(rows) => Arg::Table(rows.iter().map(|_| vec![0; 4]).collect()),
                Arg::Int(_) => Arg::Int(1 << 20),
                other => other.clone(),
            })
            .collect();
        let e = run(&sample(r.file), r.kernel, r.grid, r.block, &args);
        assert!(matches!(e, Err(ExecError::OutOfBounds { .. } | ExecError::StepLimit(_))), "{}: {e:?}", r.file);
    }
}
