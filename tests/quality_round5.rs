//! Issue 19, fifth round (docs/performance.md "Fifth round"): code-size and register
//! changes found against ptxas 11.8 `-arch=sm_50 -O3`.
//!
//! * Whole-program output drops the device functions no kernel reaches
//!   (`lower::opt::unused`): ptxas without `-c` emits only the kernels and what they call.
//! * `mul.wide.s32` by a 16-bit constant computes its low word as `mul.lo` does
//!   (`XMAD; XMAD.PSL`, `lower::arith::mul`), so a product whose high word is unused
//!   costs two instructions, as ptxas's (`samples/transpose_tiled.ptx`).

#[path = "common/launches.rs"]
mod launches;
#[path = "common/listing.rs"]
mod listing;

use launches::run_both_checked;
use listing::{count, sass};
use ptx2sass::driver::{self, Options};

/// A module: kernel `k` calls `small` (inlined: small and called once) and `kept`
/// (`.pragma "noinline"`: a real `CAL`); `unused_visible` and `unused_internal` are called
/// by nobody; `addr` only has its address taken.
const MODULE: &str = r#"
.version 7.0
.target sm_50
.address_size 64
.func (.param .b32 r) small(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  add.s32 %r2, %r1, 7;
  st.param.b32 [r], %r2;
  ret;
}
.func (.param .b32 r) kept(.param .b32 a)
{
  .pragma "noinline";
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  mul.lo.s32 %r2, %r1, 3;
  st.param.b32 [r], %r2;
  ret;
}
.func (.param .b32 r) addr(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  st.param.b32 [r], %r1;
  ret;
}
.visible .func (.param .b32 r) unused_visible(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  add.s32 %r2, %r1, 9;
  st.param.b32 [r], %r2;
  ret;
}
.func (.param .b32 r) unused_internal(.param .b32 a)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [a];
  add.s32 %r2, %r1, 11;
  st.param.b32 [r], %r2;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  {
    .param .b32 p0;
    .param .b32 r0;
    st.param.b32 [p0], %r1;
    call.uni (r0), small, (p0);
    ld.param.b32 %r2, [r0];
  }
  {
    .param .b32 p0;
    .param .b32 r0;
    st.param.b32 [p0], %r2;
    call.uni (r0), kept, (p0);
    ld.param.b32 %r3, [r0];
  }
  mov.u64 %rd2, addr;
  cvt.u32.u64 %r4, %rd2;
  and.b32 %r4, %r4, 0;
  add.s32 %r3, %r3, %r4;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.u32 [%rd4], %r3;
  ret;
}
"#;

fn function_names(src: &str, relocatable: bool) -> Vec<String> {
    let opts = Options { relocatable, ..Options::default() };
    let out = driver::compile(src, &opts)
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()));
    let program = out.program.expect("a program");
    let names: Vec<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    let stats: Vec<String> = out.stats.iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, stats, "statistics for exactly the emitted functions");
    names
}

/// ptxas 11.8 `-arch=sm_50 -O3` on a module of one kernel and two functions it never
/// calls (one `.visible`, one internal) emits the kernel alone (`cuobjdump -sass`); with
/// `-c` all three. Ours: the functions whose every call was inlined and the uncalled ones
/// go; the real callee and the function whose address is taken stay; `-c` keeps all.
#[test]
fn whole_program_output_keeps_only_what_kernels_reach() {
    let mut names = function_names(MODULE, false);
    names.sort();
    assert_eq!(names, ["addr", "k", "kept"]);
    let mut all = function_names(MODULE, true);
    all.sort();
    assert_eq!(all, ["addr", "k", "kept", "small", "unused_internal", "unused_visible"]);
}

/// A module without a kernel is compiled to look at its functions: all stay.
#[test]
fn a_module_without_kernels_keeps_its_functions() {
    let funcs = MODULE.split(".visible .entry").next().expect("the functions");
    let mut names = function_names(funcs, false);
    names.sort();
    assert_eq!(names, ["addr", "kept", "small", "unused_internal", "unused_visible"]);
}

/// The kernel still computes `3 * (tid + 7)` on both executors with the inlined callee
/// dropped and the real one kept.
#[test]
fn the_kernel_runs_without_the_dropped_functions() {
    let threads = 32;
    let out = run_both_checked(MODULE, threads * 4, threads as u32, 1 << 16);
    for (t, w) in out.chunks(4).enumerate() {
        let got = u32::from_le_bytes(w.try_into().expect("a word"));
        assert_eq!(got, 3 * (t as u32 + 7), "thread {t}");
    }
}

/// `samples/generic_call.ptx`: `dot3_accum` is `.visible` but its one call is inlined, so
/// only the kernel is emitted (ptxas, which calls it, emits both: 45 instructions).
#[test]
fn generic_call_sample_emits_the_kernel_alone() {
    let src =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/generic_call.ptx")).expect("sample");
    assert_eq!(function_names(&src, false), ["generic_call"]);
}

/// A kernel storing `op(x_t, 132)` for `x_t = tid * 0x9e3779b9 ^ 0x80000000 * (tid odd)`
/// (large, small, negative and positive operands) at `out[t]`: `wide` the full 64-bit
/// `mul.wide.s32`, else only its low word (then truncated by `cvt.u32.u64`).
fn wide_kernel(wide: bool) -> String {
    let store = if wide {
        "mul.wide.u32 %rd3, %r1, 8;\n add.s64 %rd4, %rd1, %rd3;\n st.global.u64 [%rd4], %rd5;"
    } else {
        "cvt.u32.u64 %r5, %rd5;\n mul.wide.u32 %rd3, %r1, 4;\n add.s64 %rd4, %rd1, %rd3;\n st.global.u32 [%rd4], %r5;"
    };
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n\
         ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n\
         mov.u32 %r1, %tid.x;\n mul.lo.u32 %r2, %r1, 0x9e3779b9;\n\
         and.b32 %r3, %r1, 1;\n shl.b32 %r3, %r3, 31;\n xor.b32 %r4, %r2, %r3;\n\
         mul.wide.s32 %rd5, %r4, 132;\n {store}\n ret;\n}}\n"
    )
}

fn x(t: u32) -> u32 {
    t.wrapping_mul(0x9e37_79b9) ^ ((t & 1) << 31)
}

/// Only the low word used: `XMAD; XMAD.PSL` (ptxas 11.8 on `samples/transpose_tiled.ptx`:
/// `XMAD R3, R4, 0x84, RZ; XMAD.PSL R8, R4.H1, 0x84, R3`), not the signed partial
/// products and the `BFI` (four instructions before); the same values on both executors.
#[test]
fn low_word_of_a_signed_wide_product_by_a_constant_is_two_xmads() {
    let src = wide_kernel(false);
    let code = sass(&src);
    assert_eq!(count(&code, "BFI"), 0, "{code:#?}");
    assert_eq!(count(&code, "XMAD.PSL R#, R#.H1, 0x84"), 1, "{code:#?}");
    assert_eq!(count(&code, "XMAD"), 2 + 3, "two for the product, three for tid * 0x9e3779b9: {code:#?}");
    let threads = 64u32;
    let out = run_both_checked(&src, threads as usize * 4, threads, 1 << 16);
    for (t, w) in out.chunks(4).enumerate() {
        let want = (x(t as u32) as i32 as i64).wrapping_mul(132) as u32;
        assert_eq!(u32::from_le_bytes(w.try_into().expect("a word")), want, "thread {t}");
    }
}

/// Both words used: the low word from the shared first partial product, the high word
/// from the signed sequence; bit-exact on both executors.
#[test]
fn signed_wide_product_by_a_constant_keeps_both_words() {
    let src = wide_kernel(true);
    let threads = 64u32;
    let out = run_both_checked(&src, threads as usize * 8, threads, 1 << 16);
    for (t, w) in out.chunks(8).enumerate() {
        let want = (x(t as u32) as i32 as i64).wrapping_mul(132) as u64;
        assert_eq!(u64::from_le_bytes(w.try_into().expect("a doubleword")), want, "thread {t}");
    }
}

/// A kernel with a 64-byte `.local .align 4` array: `a[i] = tid + i`, `a[tid & 15] += 1`
/// through a computed address, then the sixteen words read back (`ld.local.u32`) and
/// stored to `out[16 * tid + i]`: the shape of `samples/local_array.ptx`.
fn local_kernel() -> String {
    let mut body = String::new();
    for i in 0..16 {
        body += &format!("add.s32 %r2, %r1, {i};\n st.local.u32 [%rd3+{}], %r2;\n", 4 * i);
    }
    body += "and.b32 %r3, %r1, 15;\n mul.wide.u32 %rd4, %r3, 4;\n add.s64 %rd5, %rd3, %rd4;\n\
             ld.local.u32 %r4, [%rd5];\n add.s32 %r4, %r4, 1;\n st.local.u32 [%rd5], %r4;\n\
             shl.b32 %r5, %r1, 6;\n cvt.u64.u32 %rd6, %r5;\n add.s64 %rd7, %rd1, %rd6;\n";
    for i in 0..16 {
        body += &format!("ld.local.u32 %r{}, [%rd3+{}];\n", 10 + i, 4 * i);
    }
    for i in 0..16 {
        body += &format!("st.global.u32 [%rd7+{}], %r{};\n", 4 * i, 10 + i);
    }
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         .local .align 4 .b8 depot[64];\n.reg .b64 %SPL;\n\
         .reg .b32 %r<40>;\n.reg .b64 %rd<10>;\n\
         mov.u64 %SPL, depot;\n add.u64 %rd3, %SPL, 0;\n\
         ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n\
         mov.u32 %r1, %tid.x;\n{body} ret;\n}}\n"
    )
}

/// ptxas 11.8 reads the array of `samples/local_array.ptx` back with eight `LDL.64` from
/// the 8-aligned frame pointer (`LDL.64 R16, [R1]`, ...); so do we
/// (`lower::mem::vectorize`), with the same values on both executors (the simulator
/// rejects a misaligned `LDL.64`).
#[test]
fn local_array_words_are_read_in_aligned_pairs() {
    let src = local_kernel();
    let code = sass(&src);
    assert_eq!(count(&code, "LDL.64"), 8, "{code:#?}");
    assert_eq!(count(&code, "LDL "), 1, "the indexed read stays one word: {code:#?}");
    let threads = 32u32;
    let out = run_both_checked(&src, threads as usize * 64, threads, 1 << 16);
    for (k, w) in out.chunks(4).enumerate() {
        let (t, i) = ((k / 16) as u32, (k % 16) as u32);
        let want = t + i + u32::from(t % 16 == i);
        assert_eq!(u32::from_le_bytes(w.try_into().expect("a word")), want, "thread {t} word {i}");
    }
}

/// ptxas 11.8 zero-fills the array of `samples/local_array.ptx` with eight `STL.64 [R1+..],
/// RZ`; so do we for zero stores to the two words of an aligned 8 bytes (`lower::mem::
/// vectorize`). The kernel of [`local_kernel`] with the array zeroed first (then `a[i] =
/// tid + i` for the even words only): the odd words read back zero on both executors.
#[test]
fn zero_stores_to_aligned_pairs_are_one_wide_store() {
    let src = local_kernel();
    let zero: String = (0..16).map(|i| format!("st.local.u32 [%rd3+{}], 0;\n", 4 * i)).collect();
    let src = src.replacen("mov.u32 %r1, %tid.x;\n", &format!("mov.u32 %r1, %tid.x;\n{zero}"), 1);
    let src = (0..16)
        .filter(|i| i % 2 == 1)
        .fold(src, |s, i| s.replace(&format!("add.s32 %r2, %r1, {i};\n st.local.u32 [%rd3+{}], %r2;\n", 4 * i), ""));
    let code = sass(&src);
    assert_eq!(count(&code, "STL.64 [R#+0x"), 7, "{code:#?}");
    assert_eq!(count(&code, "STL.64 [R#], RZ"), 1, "{code:#?}");
    let threads = 32u32;
    let out = run_both_checked(&src, threads as usize * 64, threads, 1 << 16);
    for (k, w) in out.chunks(4).enumerate() {
        let (t, i) = ((k / 16) as u32, (k % 16) as u32);
        let want = if i % 2 == 0 { t + i } else { 0 } + u32::from(t % 16 == i);
        assert_eq!(u32::from_le_bytes(w.try_into().expect("a word")), want, "thread {t} word {i}");
    }
}
