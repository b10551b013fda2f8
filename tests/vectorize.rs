//! Shared-load vectorization (`lower::mem::vectorize`): adjacent `ld.shared` words from one
//! base merge into `LDS.U.64`/`LDS.U.128` only where the address is proven aligned, and the
//! merged code loads the same values (both executors: the PTX interpreter and the
//! simulator running our SASS, which rejects a misaligned `LDS.64`/`LDS.128`).
//!
//! The shapes are ptxas 11.8's (`-arch=sm_50 -O3`, `cuobjdump -sass`; module notes of
//! `lower::mem::vectorize`): four words from `As + tid*16` with `As` at 0x0 are one
//! `LDS.U.128` (as in `samples/sgemm_reg.ptx`), with `As` at 0x4 the 8-aligned middle pair
//! merges (ptxas: `STS.64 [R0+0x8]` for the stores of that probe), from `As + tid*4`
//! nothing merges.

#[path = "common/launches.rs"]
mod launches;
#[path = "common/listing.rs"]
mod listing;

use launches::run_both_checked;
use listing::sass;

const THREADS: u32 = 64;
/// Words of `As`.
const WORDS: u32 = 1024;

/// A kernel that fills `As` (`As[i] = 3i + 7`), then loads four words at `As + pad +
/// tid*stride + 0, 4, 8, 12` (`body` may change what happens between them) and writes
/// them to `out[4*tid ..]`. With `pad`, a 4-byte variable `pad` is declared and used first,
/// so that `As` lands at 0x4 (`lower::mem::shared`: declaration order, each at its
/// alignment).
fn kernel(pad: bool, stride: u32, body: &str) -> String {
    let (pad_decl, pad_use) = if pad {
        (".shared .align 4 .b8 pad[4];", "mov.u64 %rd9, pad;\n st.shared.u32 [%rd9], %r1;")
    } else {
        ("", "")
    };
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         {pad_decl}\n.shared .align 4 .b8 As[{bytes}];\n\
         .reg .pred %p<4>;\n.reg .b32 %r<40>;\n.reg .b64 %rd<20>;\n\
         mov.u32 %r1, %tid.x;\n{pad_use}\n\
         mov.u64 %rd1, As;\n mov.u32 %r2, %r1;\n\
         FILL:\n mul.wide.u32 %rd2, %r2, 4;\n add.s64 %rd3, %rd1, %rd2;\n\
         mad.lo.u32 %r3, %r2, 3, 7;\n st.shared.u32 [%rd3], %r3;\n\
         add.u32 %r2, %r2, {THREADS};\n setp.lt.u32 %p1, %r2, {WORDS};\n @%p1 bra FILL;\n\
         bar.sync 0;\n\
         mul.wide.u32 %rd4, %r1, {stride};\n add.s64 %rd5, %rd1, %rd4;\n\
         {body}\n\
         ld.param.u64 %rd6, [out];\n mul.wide.u32 %rd7, %r1, 16;\n add.s64 %rd8, %rd6, %rd7;\n\
         st.global.v4.u32 [%rd8], {{%r10, %r11, %r12, %r13}};\n\
         ret;\n}}\n",
        bytes = WORDS * 4,
    )
}

/// The four plain loads.
const FOUR: &str = "ld.shared.u32 %r10, [%rd5];\n ld.shared.u32 %r11, [%rd5+4];\n\
    ld.shared.u32 %r12, [%rd5+8];\n ld.shared.u32 %r13, [%rd5+12];";

/// Runs `k` (one CTA of [`THREADS`]) on both executors with every checker on, asserts they
/// agree, and returns the output words.
fn run_both(src: &str) -> Vec<u32> {
    let w = run_both_checked(src, THREADS as usize * 16, THREADS, 1_000_000);
    w.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The words thread `t` reads at byte offsets `offs` from `As + t*stride` (`As[i] = 3i+7`).
fn expected(stride: u32, offs: [u32; 4]) -> Vec<u32> {
    (0..THREADS).flat_map(|t| offs.map(|o| 3 * ((t * stride + o) / 4) + 7)).collect()
}

fn count(listing: &[String], prefix: &str) -> usize {
    listing.iter().filter(|i| i.starts_with(prefix)).count()
}

#[test]
fn sixteen_byte_aligned_words_are_one_lds_128() {
    let src = kernel(false, 16, FOUR);
    let l = sass(&src);
    assert_eq!(count(&l, "LDS.U.128 "), 1, "{l:#?}");
    assert_eq!(count(&l, "LDS.U.32 "), 0, "{l:#?}");
    assert_eq!(run_both(&src), expected(16, [0, 4, 8, 12]));
}

/// `As + tid*4` is only 4-byte aligned: nothing merges (an `LDS.64` there would be
/// misaligned for odd threads, and the simulator faults on it).
#[test]
fn four_byte_aligned_words_stay_single() {
    let src = kernel(false, 4, FOUR);
    let l = sass(&src);
    assert_eq!(count(&l, "LDS.U.32 "), 4, "{l:#?}");
    assert_eq!(count(&l, "LDS.U.64 ") + count(&l, "LDS.U.128 "), 0, "{l:#?}");
    assert_eq!(run_both(&src), expected(4, [0, 4, 8, 12]));
}

/// `As` at 0x4: `As + tid*16 + {0, 4, 8, 12}` is 4, 8, 12, 16 modulo 16; only the words
/// at 8 and 12 (an 8-aligned pair) merge.
#[test]
fn a_shifted_array_merges_only_its_aligned_pair() {
    let src = kernel(true, 16, FOUR);
    let l = sass(&src);
    assert_eq!(count(&l, "LDS.U.128 "), 0, "{l:#?}");
    assert_eq!(count(&l, "LDS.U.64 "), 1, "{l:#?}");
    assert_eq!(count(&l, "LDS.U.32 "), 2, "{l:#?}");
    assert_eq!(run_both(&src), expected(16, [0, 4, 8, 12]));
}

/// A store between the loads (to one of the words loaded after it): no load moves across
/// it, so only the pairs on each side may merge, and the later loads see the stored value.
#[test]
fn no_merge_across_a_store() {
    let body = "ld.shared.u32 %r10, [%rd5];\n ld.shared.u32 %r11, [%rd5+4];\n\
        add.u32 %r20, %r1, 1000;\n st.shared.u32 [%rd5+8], %r20;\n\
        ld.shared.u32 %r12, [%rd5+8];\n ld.shared.u32 %r13, [%rd5+12];";
    let src = kernel(false, 16, body);
    let l = sass(&src);
    assert_eq!(count(&l, "LDS.U.128 "), 0, "{l:#?}");
    let got = run_both(&src);
    let want: Vec<u32> = (0..THREADS).flat_map(|t| [12 * t + 7, 12 * t + 10, t + 1000, 12 * t + 16]).collect();
    assert_eq!(got, want);
}

/// A loop-carried base stepping by 16-byte multiples keeps its alignment through the
/// block parameter; one stepping by 4 does not.
#[test]
fn loop_carried_bases() {
    for (step, merged) in [(1024u32, true), (4, false)] {
        let body = format!(
            "mov.u32 %r10, 0;\n mov.u32 %r11, 0;\n mov.u32 %r12, 0;\n mov.u32 %r13, 0;\n mov.u32 %r30, 0;\n\
             LOOP:\n ld.shared.u32 %r21, [%rd5];\n ld.shared.u32 %r22, [%rd5+4];\n\
             ld.shared.u32 %r23, [%rd5+8];\n ld.shared.u32 %r24, [%rd5+12];\n\
             add.u32 %r10, %r10, %r21;\n add.u32 %r11, %r11, %r22;\n\
             add.u32 %r12, %r12, %r23;\n add.u32 %r13, %r13, %r24;\n\
             add.s64 %rd5, %rd5, {step};\n add.u32 %r30, %r30, 1;\n\
             setp.lt.u32 %p2, %r30, 3;\n @%p2 bra LOOP;"
        );
        let src = kernel(false, 16, &body);
        let l = sass(&src);
        assert_eq!(count(&l, "LDS.U.128 "), usize::from(merged), "step {step}: {l:#?}");
        assert_eq!(count(&l, "LDS.U.32 "), if merged { 0 } else { 4 }, "step {step}: {l:#?}");
        let want: Vec<u32> = (0..THREADS)
            .flat_map(|t| [0u32, 4, 8, 12].map(|o| (0..3).map(|i| 3 * ((t * 16 + i * step + o) / 4) + 7).sum::<u32>()))
            .collect();
        assert_eq!(run_both(&src), want, "step {step}");
    }
}

/// `samples/sgemm_reg.ptx`: ptxas 11.8 loads each k step's 64 words as 16 `LDS.U.128`
/// (`cuobjdump -sass`: `LDS.U.128 R24, [R12]`, `LDS.U.128 R28, [R13+0x400]`, ...); so do we.
#[test]
fn sgemm_reg_loads_quads_like_ptxas() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/samples/sgemm_reg.ptx")).unwrap();
    let l = sass(&src);
    assert_eq!(count(&l, "LDS.U.128 "), 16, "{l:#?}");
    assert_eq!(count(&l, "LDS.U.32 "), 0, "{l:#?}");
}

/// Two 64-bit loads at `+0` and `+8` of a 16-aligned address are one `LDS.U.128`, each an
/// aligned pair of it.
#[test]
fn two_pairs_are_one_lds_128() {
    let body = "ld.shared.u64 %rd10, [%rd5];\n ld.shared.u64 %rd11, [%rd5+8];\n\
        mov.b64 {%r10, %r11}, %rd10;\n mov.b64 {%r12, %r13}, %rd11;";
    let src = kernel(false, 16, body);
    let l = sass(&src);
    assert_eq!(count(&l, "LDS.U.128 "), 1, "{l:#?}");
    assert_eq!(count(&l, "LDS.U.64 "), 0, "{l:#?}");
    assert_eq!(run_both(&src), expected(16, [0, 4, 8, 12]));
}
