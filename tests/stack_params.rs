//! Device functions whose parameters do not fit `R4..R15` (issue 20): the words beyond go
//! on the stack (`docs/abi.md` "Stack arguments"), up to the 0x1100 bytes of parameter
//! space `ptx::limits` allows. Each word used to be a destination of the function's one
//! `Op::Params` (and an operand of the caller's one `Op::Call`), so a 1 KiB array needed
//! 256 registers at once and allocation failed with an internal error (`TooManyLiveRegs`
//! from 1 KiB, "register packing failed" for other shapes). Now the caller stores each
//! stack word with its own `STL` and the callee loads each word where it reads it.
//!
//! * [`compile_sizes`]: arrays of 1, 2 and 4.25 KiB (the limit), many scalars, a mix, all
//!   with `--verify`, with inlining off and on (each function is also compiled on its own).
//! * [`array_reads_both_executors`] etc.: kernels calling such functions with
//!   `--inline never` run on the PTX interpreter and the simulator; every word read
//!   (first, middle, last, 64-bit, vector, sub-word, `.f64`, across a nested call and on
//!   both sides of a branch) is compared with the value computed here.

use ptx2sass::driver::{self, Options};
use ptx2sass::exec::ptx::args::{self, Arg};
use ptx2sass::lower::calls::callgraph::Inline;

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";
/// Threads of the one CTA launched.
const THREADS: u32 = 32;
/// Output words per thread.
const OUT_WORDS: usize = 16;

/// Compiles `src` with `inline` and every checker on; panics with the diagnostics.
fn build(src: &str, inline: Inline) -> ptx2sass::sass::program::Program {
    let mut opts = Options::default();
    opts.lower.inline = inline;
    opts.regalloc.verify = true;
    opts.check_hazards = true;
    match driver::compile(src, &opts) {
        Ok(o) => o.program.expect("a program"),
        Err(d) => panic!("{inline:?}: {}", ptx2sass::diag::SourceFile::new("ptx", src).render_all(&d)),
    }
}

/// Runs kernel `k(out)` of `src` (compiled with `inline`) on [`THREADS`] threads on both
/// executors, asserts they agree and returns each thread's [`OUT_WORDS`] output words.
fn run(src: &str, inline: Inline) -> Vec<[u32; OUT_WORDS]> {
    run_words(src, inline, OUT_WORDS).iter().map(|w| std::array::from_fn(|k| w[k])).collect()
}

/// [`run`] with `words` output words per thread.
fn run_words(src: &str, inline: Inline, words: usize) -> Vec<Vec<u32>> {
    let program = build(src, inline);
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let bytes = THREADS as usize * words * 4;
    let arg = [Arg::Buf(vec![0xcd; bytes])];
    // CUDA's default 1 KiB stack (`cudaLimitStackSize`): the simulator raises it to the
    // kernel's need (`g`'s 4 KiB of arguments, its frame and `h`'s arguments), as the
    // driver does (`stack_need_counts_argument_areas`).
    let launch = args::launch(&module, "k", [1, 1, 1], [THREADS, 1, 1], &arg, 10_000_000).expect("launch");
    let (want, got, diff) = ptx2sass::exec::compare(&module, &program, &launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(diff.is_empty(), "{inline:?}: executors differ: {diff:?}\n{program}");
    let w = args::buffer(&want.global, "arg0").expect("buffer").to_vec();
    assert_eq!(w, args::buffer(&got.global, "arg0").expect("buffer"));
    w.chunks(words * 4).map(|t| t.chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect()).collect()
}

/// The word the kernels store at byte `o` of a parameter for thread `t`
/// (`mad.lo.u32 v, t, 0x9e3779b9, o * 0x01000193 + 0x5bd1e995`).
fn word(t: u32, o: u32) -> u32 {
    t.wrapping_mul(0x9e37_79b9).wrapping_add(o.wrapping_mul(0x0100_0193).wrapping_add(0x5bd1_e995))
}

/// PTX setting `%v` to [`word`]`(%t, o)`.
fn word_ptx(o: u32) -> String {
    format!("mad.lo.u32 %v, %t, 0x9e3779b9, {};\n", o.wrapping_mul(0x0100_0193).wrapping_add(0x5bd1_e995))
}

/// The 64-bit value stored for thread `t`: `t * 0x10001 + 0x123456789`.
fn wide(t: u32) -> u64 {
    u64::from(t) * 0x10001 + 0x1_2345_6789
}

/// A kernel `k(out)` calling `g(out + 64 * tid, p[size], q, d)` (`p` an 8-aligned byte
/// array, `q` a `.u32`, `d` an `.f64`) with `g` storing what it reads to `out`. `g` has a
/// frame (a `.local` buffer), calls `h` with its own array (so it loads every word and
/// stores it for `h`) and reads words again after that call, and reads `q` and `p` on both
/// sides of a divergent branch.
fn array_kernel(size: u32) -> String {
    let mid = size / 2;
    let last = size - 4;
    let q64 = (size / 4) & !7;
    let vec = 16;
    let ld = |r: &str, ty: &str, o: u32| format!("ld.param.{ty} {r}, [p+{o}];\n");
    let st = |k: u32, r: &str, ty: &str| format!("st.global.{ty} [%o+{}], {r};\n", 4 * k);
    let mut g = String::new();
    g += &format!(
        ".func (.param .b32 rv) h(.param .align 8 .b8 a[{size}])\n{{\n.reg .b32 %r<4>;\n\
         ld.param.u32 %r0, [a];\nld.param.u32 %r1, [a+{last}];\nld.param.u32 %r2, [a+{mid}];\n\
         xor.b32 %r0, %r0, %r1;\nadd.u32 %r0, %r0, %r2;\nst.param.b32 [rv], %r0;\nret;\n}}\n"
    );
    g += &format!(
        ".func (.param .b32 rv) g(.param .b64 out, .param .align 8 .b8 p[{size}], .param .b32 q, .param .f64 d)\n{{\n\
         .reg .b32 %r<16>;\n.reg .b64 %o, %x;\n.reg .f64 %fd;\n.reg .pred %p;\n.local .align 8 .b8 buf[16];\n\
         ld.param.b64 %o, [out];\n"
    );
    g += &ld("%r1", "u32", 0);
    g += &st(0, "%r1", "u32");
    g += "st.local.u32 [buf+4], %r1;\n";
    g += &ld("%r2", "u32", mid);
    g += &st(1, "%r2", "u32");
    g += &ld("%x", "b64", q64);
    g += &st(2, "%x", "b64");
    g += &ld("%r3", "u32", last);
    g += &st(4, "%r3", "u32");
    g += &ld("%r4", "u8", last + 1);
    g += &st(5, "%r4", "u32");
    g += &ld("%r5", "s16", mid + 2);
    g += &st(6, "%r5", "u32");
    g += &format!("ld.param.v2.u32 {{%r6, %r7}}, [p+{vec}];\nld.param.v2.u32 {{%r8, %r9}}, [p+{}];\n", vec + 8);
    g += "add.u32 %r6, %r6, %r7;\nadd.u32 %r6, %r6, %r8;\nadd.u32 %r6, %r6, %r9;\n";
    g += &st(7, "%r6", "u32");
    g += "ld.param.u32 %r10, [q];\n";
    g += &st(10, "%r10", "u32");
    g += "ld.param.f64 %fd, [d];\nst.global.f64 [%o+32], %fd;\n";
    // A nested call passing the array on, then reads of the incoming area again.
    g += "{\n.param .b32 r;\ncall.uni (r), h, (p);\nld.param.b32 %r11, [r];\n}\n";
    g += &st(12, "%r11", "u32");
    g += &ld("%r12", "s8", mid + 1);
    g += &st(13, "%r12", "u32");
    // Both sides of a branch read `q` and a word of `p`.
    g += "and.b32 %r13, %r10, 1;\nsetp.ne.u32 %p, %r13, 0;\n@%p bra ODD;\n";
    g += &format!("ld.param.u32 %r13, [q];\nld.param.u32 %r14, [p+{last}];\nxor.b32 %r13, %r13, %r14;\nbra.uni END;\n");
    g += "ODD:\nld.param.u32 %r13, [q];\nld.param.u32 %r14, [p];\nadd.u32 %r13, %r13, %r14;\nEND:\n";
    g += &st(11, "%r13", "u32");
    g += "ld.local.u32 %r15, [buf+4];\n";
    g += &st(14, "%r15", "u32");
    g += &ld("%r15", "u32", mid);
    g += "st.param.b32 [rv], %r15;\nret;\n}\n";

    let mut k = format!(
        ".visible .entry k(.param .u64 out)\n{{\n.reg .b32 %t, %v, %r;\n.reg .b64 %o, %w;\n.reg .f64 %fd;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %o, [out];\nmul.wide.u32 %w, %t, {};\nadd.s64 %o, %o, %w;\n{{\n\
         .param .b64 po;\n.param .align 8 .b8 pa[{size}];\n.param .b32 pq;\n.param .f64 pd;\n.param .b32 pr;\n\
         st.param.b64 [po], %o;\n",
        OUT_WORDS * 4
    );
    for o in [0, mid, last, vec, vec + 4, vec + 8, vec + 12] {
        k += &word_ptx(o);
        k += &format!("st.param.b32 [pa+{o}], %v;\n");
    }
    k += "mul.wide.u32 %w, %t, 0x10001;\nadd.s64 %w, %w, 0x123456789;\n";
    k += &format!("st.param.b64 [pa+{q64}], %w;\n");
    k += "add.u32 %r, %t, 100;\nst.param.b32 [pq], %r;\n";
    k += "cvt.rn.f64.u32 %fd, %t;\nadd.f64 %fd, %fd, 0d3FE0000000000000;\nst.param.f64 [pd], %fd;\n";
    k += "call.uni (pr), g, (po, pa, pq, pd);\nld.param.b32 %r, [pr];\n}\nst.global.u32 [%o+60], %r;\nret;\n}\n";
    format!("{HEADER}{g}{k}")
}

/// The output [`array_kernel`]`(size)` writes for thread `t` (words 2 and 3 are the
/// 64-bit read, words 8 and 9 the `.f64`).
fn array_expected(size: u32, t: u32) -> [u32; OUT_WORDS] {
    let (mid, last) = (size / 2, size - 4);
    let w = |o| word(t, o);
    let q = t + 100;
    let d = (f64::from(t) + 0.5).to_bits();
    let branch = if q % 2 == 1 { q.wrapping_add(w(0)) } else { q ^ w(last) };
    [
        w(0),
        w(mid),
        wide(t) as u32,
        (wide(t) >> 32) as u32,
        w(last),
        (w(last) >> 8) & 0xff,
        (w(mid) >> 16) as u16 as i16 as i32 as u32,
        (16..32).step_by(4).map(w).fold(0u32, u32::wrapping_add),
        d as u32,
        (d >> 32) as u32,
        q,
        branch,
        (w(0) ^ w(last)).wrapping_add(w(mid)),
        (w(mid) >> 8) as u8 as i8 as i32 as u32,
        w(0),
        w(mid),
    ]
}

fn check_array(size: u32) {
    let src = array_kernel(size);
    let want: Vec<_> = (0..THREADS).map(|t| array_expected(size, t)).collect();
    for inline in [Inline::Never, Inline::Auto] {
        let got = run(&src, inline);
        for (t, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "{size} bytes, {inline:?}, thread {t}");
        }
    }
}

/// 256 bytes, which compiled before, but `q`, read on both sides of the branch, was
/// taken on the second side from the first side's read (undefined there: `undef` in the
/// IR), and with inlining the sub-word reads of the caller's stored words were "read of a
/// parameter slot at offset 130 that was never written".
#[test]
fn array_reads_both_executors_256() {
    check_array(256);
}

/// 1 KiB: `TooManyLiveRegs` in `g` before.
#[test]
fn array_reads_both_executors_1k() {
    check_array(1024);
}

/// 2 KiB, and the largest array that fits the 0x1100-byte parameter space next to `out`,
/// `q` and `d` (4328 + 24 bytes).
#[test]
fn array_reads_both_executors_2k_and_limit() {
    check_array(2048);
    check_array(4328);
}

/// A function of `out` and `n` scalar `.u32` parameters followed by a `.b64` and an
/// `.f64` (all beyond `R15`), storing the first, middle and last scalars and both wide
/// ones; with `reg`, the scalars are `.reg .u32` parameters instead (registers from the
/// function's entry: their stack words are loaded there).
fn scalars_kernel(n: u32, reg: bool) -> String {
    let space = if reg { ".reg" } else { ".param" };
    let mut params = vec![".param .b64 out".to_string()];
    params.extend((0..n).map(|j| format!("{space} .u32 s{j}")));
    params.push(".param .b64 w".into());
    params.push(".param .f64 d".into());
    let read =
        |j: u32, r: &str| if reg { format!("mov.u32 {r}, s{j};\n") } else { format!("ld.param.u32 {r}, [s{j}];\n") };
    let mut g = format!(
        ".func g({})\n{{\n.reg .b32 %r<4>;\n.reg .b64 %o, %x;\n.reg .f64 %fd;\nld.param.b64 %o, [out];\n",
        params.join(", ")
    );
    for (k, j) in [0, n / 2, n - 1].into_iter().enumerate() {
        g += &read(j, "%r1");
        g += &format!("st.global.u32 [%o+{}], %r1;\n", 4 * k);
    }
    g += "ld.param.b64 %x, [w];\nst.global.b64 [%o+16], %x;\nld.param.f64 %fd, [d];\nst.global.f64 [%o+24], %fd;\nret;\n}\n";
    let mut k = format!(
        ".visible .entry k(.param .u64 out)\n{{\n.reg .b32 %t, %v;\n.reg .b64 %o, %w;\n.reg .f64 %fd;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %o, [out];\nmul.wide.u32 %w, %t, {};\nadd.s64 %o, %o, %w;\n{{\n\
         .param .b64 po;\n.param .b64 pw;\n.param .f64 pd;\n",
        OUT_WORDS * 4
    );
    let mut args = vec!["po".to_string()];
    for j in 0..n {
        k += &word_ptx(4 * j);
        if reg {
            k += &format!(".reg .u32 %a{j};\nmov.u32 %a{j}, %v;\n");
            args.push(format!("%a{j}"));
        } else {
            k += &format!(".param .u32 ps{j};\nst.param.u32 [ps{j}], %v;\n");
            args.push(format!("ps{j}"));
        }
    }
    args.extend(["pw".into(), "pd".into()]);
    k +=
        "st.param.b64 [po], %o;\nmul.wide.u32 %w, %t, 0x10001;\nadd.s64 %w, %w, 0x123456789;\nst.param.b64 [pw], %w;\n";
    k += "cvt.rn.f64.u32 %fd, %t;\nadd.f64 %fd, %fd, 0d3FE0000000000000;\nst.param.f64 [pd], %fd;\n";
    k += &format!("call.uni g, ({});\n}}\nret;\n}}\n", args.join(", "));
    format!("{HEADER}{g}{k}")
}

fn check_scalars(n: u32, reg: bool) {
    let src = scalars_kernel(n, reg);
    for inline in [Inline::Never, Inline::Auto] {
        let got = run(&src, inline);
        for (t, g) in got.iter().enumerate() {
            let t = t as u32;
            let d = (f64::from(t) + 0.5).to_bits();
            let want = [word(t, 0), word(t, 4 * (n / 2)), word(t, 4 * (n - 1)), wide(t) as u32, (wide(t) >> 32) as u32];
            assert_eq!([g[0], g[1], g[2], g[4], g[5]], want, "{n} scalars (reg {reg}), {inline:?}, thread {t}");
            assert_eq!((g[6], g[7]), (d as u32, (d >> 32) as u32), "{n} scalars, {inline:?}, thread {t}");
        }
    }
}

/// 300 `.param .u32` scalars (the `.b64` and `.f64` after them on the stack too).
#[test]
fn scalar_params_both_executors() {
    check_scalars(300, false);
}

/// 200 `.reg .u32` scalars: loaded at the entry, many live at once (spilled).
#[test]
fn reg_params_both_executors() {
    check_scalars(200, true);
}

/// Compiles (with `--verify`) device functions with the parameter shapes that failed
/// register allocation with an internal error, each called from a kernel, with inlining
/// off and on.
#[test]
fn compile_sizes() {
    let mut cases = vec![];
    for size in [256, 1024, 2048, 4328] {
        cases.push((format!("array of {size}"), array_kernel(size)));
    }
    // The whole parameter space in one array (no other parameter).
    cases.push((
        "one 4352-byte array".into(),
        format!(
            "{HEADER}.func (.param .b32 r) f(.param .align 4 .b8 p[4352])\n{{\n.reg .b32 %r<3>;\n\
             ld.param.u32 %r0, [p+4348];\nld.param.u32 %r1, [p+2048];\nadd.u32 %r0, %r0, %r1;\n\
             st.param.b32 [r], %r0;\nret;\n}}\n\
             .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r;\n.reg .b64 %o;\nld.param.u64 %o, [out];\n\
             mov.u32 %r, %tid.x;\n{{\n.param .align 4 .b8 a[4352];\n.param .b32 b;\n\
             st.param.b32 [a+4348], %r;\nst.param.b32 [a+2048], %r;\ncall.uni (b), f, (a);\n\
             ld.param.b32 %r, [b];\n}}\nst.global.u32 [%o], %r;\nret;\n}}\n"
        ),
    ));
    cases.push(("300 scalars".into(), scalars_kernel(300, false)));
    cases.push(("1000 scalars".into(), scalars_kernel(1000, false)));
    cases.push(("200 .reg scalars".into(), scalars_kernel(200, true)));
    for (name, src) in &cases {
        for inline in [Inline::Never, Inline::Auto] {
            let mut opts = Options::default();
            opts.lower.inline = inline;
            opts.regalloc.verify = true;
            opts.check_hazards = true;
            if let Err(d) = driver::compile(src, &opts) {
                panic!("{name}, {inline:?}: {}", ptx2sass::diag::SourceFile::new("ptx", src).render_all(&d));
            }
        }
    }
}

/// The callee's code: each stack word read is one `LDL` at its offset past the frame, a
/// sub-word one `LDL.U8`/`LDL.S16` of its bytes, as ptxas 11.8 `-c` reads them; no
/// `STL` of the incoming area.
#[test]
fn callee_loads_where_read() {
    let src = format!(
        "{HEADER}.visible .func (.param .b32 r) f(.param .align 4 .b8 p[1024])\n{{\n.reg .b32 %r<3>;\n\
         ld.param.u32 %r0, [p];\nld.param.u32 %r1, [p+512];\nadd.u32 %r0, %r0, %r1;\n\
         ld.param.u8 %r1, [p+1021];\nadd.u32 %r0, %r0, %r1;\nld.param.s16 %r1, [p+1018];\nadd.u32 %r0, %r0, %r1;\n\
         st.param.b32 [r], %r0;\nret;\n}}\n"
    );
    let p = build(&src, Inline::Never);
    let text = p.to_string();
    let f = text.split("Function : f").nth(1).expect("f");
    assert!(f.contains("LDL R") && f.contains("[R1]") && f.contains("[R1+0x200]"), "{f}");
    assert!(f.contains("LDL.U8 R") && f.contains("[R1+0x3fd]"), "{f}");
    assert!(f.contains("LDL.S16 R") && f.contains("[R1+0x3fa]"), "{f}");
    assert_eq!(f.matches("LDL").count(), 4, "{f}");
    assert!(!f.contains("STL"), "{f}");
}

/// A callee that stores into its own incoming array (a word and a byte of another word),
/// passes it on to `h` and reads it again: the stored bytes replace the arguments', the
/// other words stay where they arrived (before, the first store loaded all 1024 words of
/// the 4 KiB array into registers: 241 registers and 3.6 KB of spills in `g`).
#[test]
fn callee_stores_into_its_array() {
    let src = format!(
        "{HEADER}.func (.param .b32 rv) h(.param .align 8 .b8 a[4096])\n{{\n.reg .b32 %r<4>;\n\
         ld.param.u32 %r0, [a];\nld.param.u32 %r1, [a+4092];\nld.param.u32 %r2, [a+2048];\n\
         xor.b32 %r0, %r0, %r1;\nadd.u32 %r0, %r0, %r2;\nst.param.b32 [rv], %r0;\nret;\n}}\n\
         .func g(.param .b64 out, .param .align 8 .b8 p[4096], .param .b32 q)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %o;\n\
         ld.param.b64 %o, [out];\nld.param.u32 %r0, [q];\nst.param.u32 [p+2048], %r0;\nst.param.u8 [p+1], %r0;\n\
         {{\n.param .b32 r;\ncall.uni (r), h, (p);\nld.param.b32 %r1, [r];\n}}\nst.global.u32 [%o], %r1;\n\
         ld.param.u32 %r2, [p+2048];\nst.global.u32 [%o+4], %r2;\nld.param.u32 %r2, [p];\nst.global.u32 [%o+8], %r2;\n\
         ld.param.u8 %r2, [p+1];\nst.global.u32 [%o+12], %r2;\nld.param.u32 %r2, [p+4092];\nst.global.u32 [%o+16], %r2;\n\
         ret;\n}}\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %t, %v;\n.reg .b64 %o, %w;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %o, [out];\nmul.wide.u32 %w, %t, {};\nadd.s64 %o, %o, %w;\n{{\n\
         .param .b64 po;\n.param .align 8 .b8 a[4096];\n.param .b32 b;\nst.param.b64 [po], %o;\n{}\
         st.param.b32 [a], %v;\n{}st.param.b32 [a+4092], %v;\n{}st.param.b32 [a+2048], %v;\n\
         add.u32 %v, %t, 0x1234;\nst.param.b32 [b], %v;\ncall.uni g, (po, a, b);\n}}\nret;\n}}\n",
        OUT_WORDS * 4,
        word_ptx(0),
        word_ptx(4092),
        word_ptx(2048)
    );
    for inline in [Inline::Never, Inline::Auto] {
        let got = run(&src, inline);
        for (t, g) in got.iter().enumerate() {
            let t = t as u32;
            let q = t + 0x1234;
            let w0 = (word(t, 0) & !0xff00) | (q & 0xff) << 8;
            let want = [(w0 ^ word(t, 4092)).wrapping_add(q), q, w0, q & 0xff, word(t, 4092)];
            assert_eq!(g[..5], want, "{inline:?}, thread {t}");
        }
    }
}

/// One `st.param` of [`subword_stores`]: element bits, vector length, byte offset.
#[derive(Clone, Copy, Debug)]
struct Store {
    bits: u32,
    vec: u32,
    off: u32,
}

impl Store {
    /// Bytes written.
    fn bytes(self) -> std::ops::Range<u32> {
        self.off..self.off + self.bits / 8 * self.vec
    }
}

/// Every store of `.b8`/`.b16`/`.b32`/`.b64` elements (scalar, `.v2`, `.v4`, at most 8
/// bytes) at every offset of an 8-byte slot its size aligns (PTX ISA 6.4: accesses are
/// aligned to their size, a vector's to the whole vector).
fn store_shapes() -> Vec<Store> {
    let mut v = vec![];
    for bits in [8, 16, 32, 64] {
        for vec in [1, 2, 4] {
            let size = bits / 8 * vec;
            if size > 8 {
                continue;
            }
            v.extend((0..8).step_by(size as usize).map(|off| Store { bits, vec, off }));
        }
    }
    v
}

/// Every ordered pair of stores whose bytes overlap (the second partly or wholly over
/// the first).
fn store_pairs() -> Vec<[Store; 2]> {
    let shapes = store_shapes();
    let mut v = vec![];
    for &a in &shapes {
        for &b in &shapes {
            if a.bytes().start < b.bytes().end && b.bytes().start < a.bytes().end {
                v.push([a, b]);
            }
        }
    }
    v
}

/// The value element `e` of store `j` of pair `i` stores for thread `t` (a 64-bit
/// element takes this and the next salt's word as its halves).
fn elem_salt(i: usize, j: usize, e: u32) -> u32 {
    0x1000 + 64 * i as u32 + 16 * j as u32 + 2 * e
}

/// PTX storing `st` (the values of [`elem_salt`]`(i, j, ..)`) into `.param` `p`.
fn store_ptx(st: Store, i: usize, j: usize, p: &str) -> String {
    let mut s = String::new();
    let mut elems = vec![];
    for e in 0..st.vec {
        let salt = elem_salt(i, j, e);
        s += &word_ptx(salt).replace("%v", &format!("%e{e}"));
        if st.bits == 64 {
            s += &word_ptx(salt + 1).replace("%v", "%h");
            s += &format!("mov.b64 %d, {{%e{e}, %h}};\n");
            elems.push("%d".to_string());
        } else {
            elems.push(format!("%e{e}"));
        }
    }
    let data = if st.vec == 1 { elems.concat() } else { format!("{{{}}}", elems.join(", ")) };
    let v = if st.vec == 1 { String::new() } else { format!(".v{}", st.vec) };
    s + &format!("st.param{v}.b{} [{p}+{}], {data};\n", st.bits, st.off)
}

/// The reads [`subword_kernel`]'s callees make of `p` and store to `out`, one output word
/// each (a 64-bit read two): (type, byte offset).
const READS: [(&str, u32); 7] = [("b32", 0), ("b32", 4), ("b64", 0), ("u16", 2), ("u8", 5), ("s8", 3), ("u16", 6)];
/// Output words per pair.
const PAIR_WORDS: usize = 8;

/// PTX reading `p` as [`READS`] and storing to `[%o]`: only the reads of bytes `m`
/// defines (with inlining, a read of a word never written is diagnosed).
fn reads_ptx(m: &[Option<u8>; 8]) -> String {
    let mut s = String::new();
    let mut w = 0;
    for (ty, off) in READS {
        let n = ty[1..].parse::<usize>().unwrap() / 8;
        let defined = m[off as usize..off as usize + n].iter().all(Option::is_some);
        if ty == "b64" {
            if defined {
                s += &format!("ld.param.b64 %d, [p+{off}];\nst.global.b64 [%o+{}], %d;\n", 4 * w);
            }
            w += 2;
        } else {
            if defined {
                s += &format!("ld.param.{ty} %r, [p+{off}];\nst.global.u32 [%o+{}], %r;\n", 4 * w);
            }
            w += 1;
        }
    }
    s
}

/// Who makes the stores of a pair in [`subword_kernel`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Storer {
    /// The caller, into the argument, which it has not written before.
    Caller,
    /// The caller, into the argument, after storing all of it as one `.b64`.
    CallerOver,
    /// The callee, into its own parameter (the caller stored it as one `.b64`).
    Own,
}

/// A kernel `k(out)` running `pairs` (numbered from `first`), each in its own call of a
/// device function `g<i>` that reads its 8-byte `.param` array `p` ([`reads_ptx`]) and
/// stores what it reads at `out + 32 * pair` ([`Storer`]: who stores the pair, and the
/// `.b64` of [`elem_salt`]`(i, 2, 0..2)` before it). With `stack`, a 48-byte array before
/// `p` puts it on the stack.
fn subword_kernel(pairs: &[[Store; 2]], first: usize, who: Storer, stack: bool) -> String {
    let regs = ".reg .b32 %t, %r, %h, %e<4>;\n.reg .b64 %o, %w, %d;\n";
    let pad = if stack { ".param .align 8 .b8 pad[48], " } else { "" };
    let pad_arg = if stack { "pd, " } else { "" };
    let whole = Store { bits: 64, vec: 1, off: 0 };
    let mut src = HEADER.to_string();
    for (k, pair) in pairs.iter().enumerate() {
        let i = first + k;
        let body = if who == Storer::Own {
            store_ptx(pair[0], i, 0, "p") + &store_ptx(pair[1], i, 1, "p")
        } else {
            String::new()
        };
        src += &format!(
            ".func g{i}(.param .b64 out, {pad}.param .align 8 .b8 p[8])\n{{\n{regs}\
             mov.u32 %t, %tid.x;\nld.param.b64 %o, [out];\n{body}{}ret;\n}}\n",
            reads_ptx(&subword_bytes(pair, i, 0, who))
        );
    }
    src += &format!(
        ".visible .entry k(.param .u64 out)\n{{\n{regs}mov.u32 %t, %tid.x;\nld.param.u64 %o, [out];\n\
         mul.wide.u32 %w, %t, {};\nadd.s64 %o, %o, %w;\n",
        pairs.len() * PAIR_WORDS * 4
    );
    for (k, pair) in pairs.iter().enumerate() {
        let i = first + k;
        src += &format!(
            "{{\n.param .b64 po;\n.param .align 8 .b8 pd[48];\n.param .align 8 .b8 a[8];\n\
             add.s64 %w, %o, {};\nst.param.b64 [po], %w;\n",
            k * PAIR_WORDS * 4
        );
        if who != Storer::Caller {
            src += &store_ptx(whole, i, 2, "a");
        }
        if who != Storer::Own {
            src += &store_ptx(pair[0], i, 0, "a");
            src += &store_ptx(pair[1], i, 1, "a");
        }
        src += &format!("call.uni g{i}, (po, {pad_arg}a);\n}}\n");
    }
    src + "ret;\n}\n"
}

/// The 8 bytes of `p` after the stores of `pair` `i` for thread `t` (`None`: never
/// written), as PTX ISA 5.1.6 defines the `.param` space: byte-addressed memory, each
/// store overwriting exactly its own bytes (little-endian).
fn subword_bytes(pair: &[Store; 2], i: usize, t: u32, who: Storer) -> [Option<u8>; 8] {
    let mut m = [None; 8];
    let mut apply = |st: Store, j: usize| {
        for e in 0..st.vec {
            let salt = elem_salt(i, j, e);
            let v = u64::from(word(t, salt)) | u64::from(word(t, salt + 1)) << 32;
            let n = st.bits / 8;
            for b in 0..n {
                m[(st.off + e * n + b) as usize] = Some((v >> (8 * b)) as u8);
            }
        }
    };
    if who != Storer::Caller {
        apply(Store { bits: 64, vec: 1, off: 0 }, 2);
    }
    apply(pair[0], 0);
    apply(pair[1], 1);
    m
}

/// The output words [`READS`] give for bytes `m` (`None` where a read covers a byte never
/// written: not compared).
fn subword_expected(m: &[Option<u8>; 8]) -> Vec<Option<u32>> {
    let mut out = vec![];
    for (ty, off) in READS {
        let n = ty[1..].parse::<usize>().unwrap() / 8;
        let bytes: Option<Vec<u8>> = m[off as usize..off as usize + n].iter().copied().collect();
        let v = bytes.map(|b| b.iter().rev().fold(0u64, |a, &x| a << 8 | u64::from(x)));
        match (ty, v) {
            ("b64", v) => {
                out.push(v.map(|v| v as u32));
                out.push(v.map(|v| (v >> 32) as u32));
            }
            ("s8", v) => out.push(v.map(|v| v as u8 as i8 as i32 as u32)),
            (_, v) => out.push(v.map(|v| v as u32)),
        }
    }
    out
}

/// Sub-word `st.param` over earlier stores (issue 20): every ordered pair of overlapping
/// stores of [`store_shapes`] (b8 at bytes 0..7, b16 at 0, 2, 4, 6, b32 at 0 and 4, b64,
/// and the `.v2`/`.v4` vectors of them) into an 8-byte `.param` array, made by the caller
/// before a call or by the callee into its own parameter, the array passed in registers
/// or on the stack, called for real (`--inline never`) and inlined: each read
/// ([`READS`]) on both executors gives the bytes computed here from PTX semantics. Before,
/// a store at the first byte of a wider stored value replaced the whole value
/// (`st.param.b32 [a], x; st.param.b8 [a], y; ld.param.b32 [p]` read `y` alone), and a
/// sub-word store over the high half of a `.b64` was lost.
#[test]
fn subword_stores() {
    let pairs = store_pairs();
    let mut failures = vec![];
    let mut compared = 0usize;
    // Inlined, where the array is passed does not matter.
    let configs = [(false, Inline::Never), (true, Inline::Never), (false, Inline::Auto)];
    for who in [Storer::Caller, Storer::CallerOver, Storer::Own] {
        for (stack, inline) in configs {
            for (c, chunk) in pairs.chunks(128).enumerate() {
                let first = 128 * c;
                let src = subword_kernel(chunk, first, who, stack);
                let got = run_words(&src, inline, chunk.len() * PAIR_WORDS);
                for (t, g) in got.iter().enumerate() {
                    for (k, pair) in chunk.iter().enumerate() {
                        let want = subword_expected(&subword_bytes(pair, first + k, t as u32, who));
                        let have = &g[k * PAIR_WORDS..(k + 1) * PAIR_WORDS];
                        for (r, (w, h)) in want.iter().zip(have).enumerate() {
                            let Some(w) = w else { continue };
                            compared += 1;
                            if w != h && failures.len() < 20 {
                                failures.push(format!(
                                    "{who:?}, stack {stack}, {inline:?}, thread {t}, {pair:?}, output word {r}: \
                                     {h:#x}, want {w:#x}"
                                ));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} pairs; first failures:\n{}", pairs.len(), failures.join("\n"));
    // 311 pairs, 3 storers, 3 configurations, 32 threads, the defined ones of 8 words.
    assert!(compared > 100_000, "{compared} words compared");
    eprintln!("{} pairs, {compared} words compared", pairs.len());
}

/// The stack sizes reported count the argument areas below `R1` (issue 20): a caller's
/// frame grows by its largest outgoing area (ptxas 11.8 `-c`: a kernel with a 64-byte
/// `.local` array calling `g` with a 1 KiB parameter has FRAME_SIZE 0x440 and lowers `R1`
/// by 0x440; `g`, with a 32-byte array, 0x20), and the kernel's EIATTR_MIN_STACK_SIZE
/// (`cubin::link`), which the simulator's local memory covers, is the chain's sum. Before,
/// the kernel reported 0x40 and the simulator gave the call chain CUDA's default 1 KiB
/// beyond it, too little for `g`'s 1 KiB of arguments (the tests raised it by hand).
#[test]
fn stack_need_counts_argument_areas() {
    let src = format!(
        "{HEADER}.func (.param .b32 rv) g(.param .align 8 .b8 p[1024])\n{{\n.reg .b32 %r<4>;\n\
         .local .align 8 .b8 buf[32];\nld.param.u32 %r0, [p+512];\nld.param.u32 %r1, [p+1020];\n\
         and.b32 %r2, %r0, 28;\nmov.u32 %r3, buf;\nadd.u32 %r3, %r3, %r2;\nst.local.u32 [%r3], %r1;\n\
         ld.local.u32 %r1, [%r3];\nadd.u32 %r0, %r0, %r1;\nst.param.b32 [rv], %r0;\nret;\n}}\n\
         .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %o, %w;\n\
         .local .align 8 .b8 kb[64];\nld.param.u64 %o, [out];\nmov.u32 %r0, %tid.x;\n\
         mul.wide.u32 %w, %r0, {};\nadd.s64 %o, %o, %w;\n\
         and.b32 %r2, %r0, 60;\nmov.u32 %r3, kb;\nadd.u32 %r3, %r3, %r2;\nst.local.u32 [%r3], %r0;\n\
         ld.local.u32 %r0, [%r3];\n{{\n.param .align 8 .b8 a[1024];\n.param .b32 r;\n\
         st.param.b32 [a+512], %r0;\nst.param.b32 [a+1020], %r0;\nst.param.b32 [a], %r0;\n\
         call.uni (r), g, (a);\nld.param.b32 %r1, [r];\n}}\nst.global.u32 [%o], %r1;\nret;\n}}\n",
        OUT_WORDS * 4
    );
    let program = build(&src, Inline::Never);
    let frame = |name: &str| program.functions.iter().find(|f| f.name == name).unwrap().frame_bytes;
    // 64 bytes of `kb` and the 1 KiB area; 32 bytes of `buf`.
    assert_eq!((frame("k"), frame("g")), (0x440, 0x20));
    let k = program.functions.iter().position(|f| f.name == "k").unwrap();
    assert_eq!(ptx2sass::cubin::link::section(&program, k).min_stack, 0x460);
    assert_eq!(ptx2sass::cubin::link::stack_need(&program, &program.functions[k]), Some(0x460));
    // Runs with the default stack: `g` returns the two words it was passed (thread t's
    // `t`, through `kb` and `buf`) added.
    let got = run(&src, Inline::Never);
    for (t, g) in got.iter().enumerate() {
        assert_eq!(g[0], 2 * t as u32, "thread {t}");
    }
}

/// Only the written words of a stack-passed `.param` argument are stored, as ptxas 11.8
/// `-c` stores them (`STL [R1+0x200], R0; STL [R1+0x3fc], R0` for two words of a 1 KiB
/// array; before, the other 254 words were stored as zero with `STL RZ`). A word with one
/// byte written is stored whole. Reading a word never written is reading memory nobody
/// wrote; with the callee inlined it is diagnosed.
#[test]
fn unwritten_words_not_stored() {
    let src = |reads: &str| {
        format!(
            "{HEADER}.func (.param .b32 rv) g(.param .align 8 .b8 p[1024])\n{{\n.reg .b32 %r<4>;\n\
             ld.param.u32 %r0, [p+512];\nld.param.u32 %r1, [p+1020];\nadd.u32 %r0, %r0, %r1;\n\
             ld.param.u8 %r1, [p+9];\nadd.u32 %r0, %r0, %r1;\n{reads}st.param.b32 [rv], %r0;\nret;\n}}\n\
             .visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %o, %w;\n\
             ld.param.u64 %o, [out];\nmov.u32 %r0, %tid.x;\nmul.wide.u32 %w, %r0, {};\nadd.s64 %o, %o, %w;\n\
             {{\n.param .align 8 .b8 a[1024];\n.param .b32 r;\nst.param.b32 [a+512], %r0;\n\
             st.param.b32 [a+1020], %r0;\nst.param.b8 [a+9], %r0;\ncall.uni (r), g, (a);\n\
             ld.param.b32 %r1, [r];\n}}\nst.global.u32 [%o], %r1;\nret;\n}}\n",
            OUT_WORDS * 4
        )
    };
    let p = build(&src(""), Inline::Never);
    let text = p.to_string();
    let k = text.split("Function : k").nth(1).unwrap().split("Function :").next().unwrap();
    assert_eq!(k.matches("STL").count(), 3, "{k}");
    assert!(!k.lines().any(|l| l.contains("STL") && l.contains("RZ")), "{k}");
    let got = run(&src(""), Inline::Never);
    for (t, g) in got.iter().enumerate() {
        let t = t as u32;
        assert_eq!(g[0], (2 * t).wrapping_add(t & 0xff), "thread {t}");
    }
    let mut opts = Options::default();
    opts.lower.inline = Inline::Always;
    let Err(d) = driver::compile(&src("ld.param.u32 %r1, [p+16];\n"), &opts) else { panic!("not diagnosed") };
    assert!(format!("{d:?}").contains("never written"), "{d:?}");
}
