//! `.global .texref`/`.surfref` in unified texturing mode (issue 18, docs/textures.md
//! §1.1): each reference a kernel uses gets a constant-bank-0 word after its parameters,
//! in order of first use, as ptxas 11.8 gives it (`tests/data/textures/probe_texref.ptx`;
//! ptxas's instructions are kept here, registers erased, so the test runs without ptxas);
//! `run --texture/--surface NAME=...` binds an image to a reference on both executors
//! (checked against values computed here); misuse is a diagnostic at the name.

#[path = "common/tex.rs"]
mod tex;

use tex::*;

/// The texture and surface lines (and the reference header lines) of our listing of `src`,
/// registers erased, `.P`/`.T` dropped, per function.
fn listing(name: &str, src: &str) -> Vec<(String, Vec<String>)> {
    let p = write(name, src);
    let o = ptx2sass(&["compile", "--verify", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut out: Vec<(String, Vec<String>)> = vec![];
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        if let Some(f) = l.trim().strip_prefix("Function : ") {
            out.push((f.to_string(), vec![]));
        } else if let Some(t) = l.split("*/").nth(1) {
            let t = t.split(['&', '?', ';']).next().unwrap_or("").trim();
            if ["TEX", "TLD", "TXQ", "SU"].iter().any(|p| t.starts_with(p)) {
                out.last_mut().unwrap().1.push(erase(t));
            }
        } else if l.contains(".texref") || l.contains(".surfref") {
            let words: Vec<&str> = l.trim_start_matches(['\t', '/', ' ']).split_whitespace().collect();
            out.last_mut().unwrap().1.push(words.join(" "));
        }
    }
    out
}

/// `TEXS.P R6, R4, R4, R5, 0x54` -> `TEXS R, R, R, R, 0x54`.
fn erase(t: &str) -> String {
    let t = t.replace(".P ", " ").replace(".T ", " ");
    let mut r = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        r.push(c);
        if c == 'R' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
    }
    r
}

/// Our opcode, bank word and operand shape per kernel of `probe_texref.ptx` against ptxas
/// 11.8's (`cuobjdump -sass`, registers erased; docs/textures.md §1.1), and the words in
/// the listing header: `two` (16 bytes of parameters) gives `ta`, `tb` 0x150, 0x154; `rev`
/// (12 bytes) gives `tb` first 0x14c, then `ta`; `mixed` shares `ta`'s word between `tex`
/// and `txq`, `sa`'s between `suld`, `sust` and `suq`; `noparams` starts at 0x140; `none`
/// uses no reference and gets no word.
#[test]
fn probe_texref_words_and_forms_match_ptxas() {
    let src = std::fs::read_to_string("tests/data/textures/probe_texref.ptx").unwrap();
    let ours = listing("probe_texref", &src);
    let ptxas: &[(&str, &[&str])] = &[
        ("none", &[]),
        ("noparams", &["c[0x0][0x140] .texref ta", "TEXS RZ, R, R, R, 0x50, 2D, R"]),
        (
            "mixed",
            &[
                "c[0x0][0x150] .texref ta",
                "c[0x0][0x154] .surfref sa",
                "TLDS.LZ RZ, R, R, R, 0x54, 2D, RG",
                "TXQ R, R, TEX_HEADER_DIMENSION, 0x54, 0x1",
                "TXQ R, R, TEX_HEADER_DIMENSION, 0x55, 0x2",
                "SULD.D.BA.2D.TRAP R, [R], 0x55",
                "SUST.D.BA.2D.TRAP [R], R, 0x55",
            ],
        ),
        (
            "rev",
            &[
                "c[0x0][0x14c] .texref tb",
                "c[0x0][0x150] .texref ta",
                "TEXS R, R, R, R, 0x53, 2D, RGBA",
                "TEXS R, R, R, R, 0x54, 2D, RGBA",
            ],
        ),
        (
            "two",
            &[
                "c[0x0][0x150] .texref ta",
                "c[0x0][0x154] .texref tb",
                "TEXS R, R, R, R, 0x54, 2D, RGBA",
                "TEXS R, R, R, R, 0x55, 2D, RGBA",
            ],
        ),
    ];
    for (k, want) in ptxas {
        let Some((_, got)) = ours.iter().find(|(f, _)| f == k) else { panic!("no function {k} in {ours:?}") };
        let mut got = got.clone();
        let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        // Instruction order within a kernel may differ (scheduling); the multiset must not.
        got.sort();
        want.sort();
        assert_eq!(got, want, "kernel {k}");
    }
}

/// A kernel reading `ta` (f32x4, 2D) at two points, `tb` (f32, 1D, linear) and querying
/// `ta`'s width w, then adding 1 to the surface word `sa` at (x = 4w bytes, y = w).
const KERNEL: &str = ".global .texref ta;\n.global .surfref sa;\n.global .texref tb;\n\
.visible .entry k(.param .u64 out, .param .f32 x, .param .f32 y) {\n\
.reg .u64 %rd<6>; .reg .f32 %f<20>; .reg .b32 %r<12>;\n\
ld.param.f32 %f1, [x]; ld.param.f32 %f2, [y];\n\
tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [ta, {%f1,%f2}];\n\
tex.1d.v4.f32.f32 {%f7,%f8,%f9,%f10}, [tb, {%f2}];\n\
tex.2d.v4.f32.f32 {%f11,%f12,%f13,%f14}, [ta, {%f2,%f1}];\n\
txq.width.b32 %r1, [ta];\n\
shl.b32 %r3, %r1, 2;\n\
suld.b.2d.b32.trap {%r2}, [sa, {%r3, %r1}];\n\
add.s32 %r2, %r2, 1;\n\
sust.b.2d.b32.trap [sa, {%r3, %r1}], {%r2};\n\
ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;\n\
st.global.v4.f32 [%rd2], {%f3,%f4,%f5,%f6};\n\
st.global.v4.f32 [%rd2+16], {%f11,%f12,%f13,%f14};\n\
st.global.f32 [%rd2+32], %f7;\n\
st.global.u32 [%rd2+36], %r1;\n\
ret;\n}\n";

/// Runs `KERNEL` at (x, y) on `exec` (`--compare` runs both and compares all memory, the
/// surface included); returns the 10 output words and the surface after.
fn run(name: &str, exec: &[&str], x: f32, y: f32, ta: &[u8], tb: &[u8], sa: &[u8]) -> (Vec<u32>, Vec<u8>) {
    let p = write(name, &format!("{HEADER}{KERNEL}"));
    let dir = scratch(name);
    for (f, b) in [("ta.bin", ta), ("tb.bin", tb), ("sa.bin", sa)] {
        std::fs::write(dir.join(f), b).unwrap();
    }
    let dump = dir.join("dump");
    let file = |f: &str| format!("file:{}", dir.join(f).display());
    let (ta, tb, sa) = (
        format!("ta={},fmt=f32x4,dims=5,3", file("ta.bin")),
        format!("tb={},fmt=f32,dims=6,filter=linear", file("tb.bin")),
        format!("sa={},fmt=u32,dims=8,8", file("sa.bin")),
    );
    let (xs, ys) = (format!("f32:{x}"), format!("f32:{y}"));
    let mut args = vec!["run", "--kernel", "k", p.to_str().unwrap(), "--texture", &ta, "--texture", &tb];
    args.extend(["--surface", &sa, "--arg", "zeros:40", "--arg", &xs, "--arg", &ys]);
    args.extend(exec);
    let d = dump.to_str().unwrap();
    args.extend(["--dump", d]);
    let o = ptx2sass(&args);
    assert!(
        o.status.success(),
        "{exec:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let out = std::fs::read(dump.join("arg0.bin")).unwrap();
    (
        out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect(),
        std::fs::read(dump.join("tex:sa.bin")).unwrap(),
    )
}

/// `--texture ta=... --texture tb=... --surface sa=...` bind the images to the three
/// references (no parameter takes them): point samples of `ta` at (x, y) and (y, x), a
/// linear sample of the 1D `tb` at y, `ta`'s width 5, and surface word (5, 5) plus one,
/// on each executor alone and on both with `--compare`.
#[test]
fn references_bound_by_name_on_both_executors() {
    let (t, ta) = image(5, 3, 1);
    let tbv: Vec<f32> = (0..6).map(|i| (i * i) as f32).collect();
    let tb: Vec<u8> = tbv.iter().flat_map(|v| v.to_le_bytes()).collect();
    let sa: Vec<u8> = (0u32..64).flat_map(|v| (100 + v).to_le_bytes()).collect();
    let (x, y) = (1.25f32, 2.5f32);
    for exec in [&["--compare"][..], &["--exec", "sim"], &["--exec", "ptx"]] {
        let (out, surf) = run("bound", exec, x, y, &ta, &tb, &sa);
        let f = |k: usize| f32::from_bits(out[k]);
        // Point sampling: texel (floor x, floor y) = (1, 2); (y, x) -> (2, 1).
        assert_eq!([f(0), f(1), f(2), f(3)], t[5 * 2 + 1], "{exec:?}");
        assert_eq!([f(4), f(5), f(6), f(7)], t[5 + 2], "{exec:?}");
        // Linear 1D at u = 2.5: i = floor(2.0) = 2, weight 0: T[2].
        assert_eq!(f(8), tbv[2], "{exec:?}");
        assert_eq!(out[9], 5, "{exec:?}");
        let words: Vec<u32> = surf.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
        for (k, w) in words.iter().enumerate() {
            assert_eq!(*w, 100 + k as u32 + u32::from(k == 8 * 5 + 5), "{exec:?} surface word {k}");
        }
    }
}

/// Misuse is an error at the name (or the declaration): a `.texref` as a surface and a
/// `.surfref` as a texture, a reference as an ordinary operand, an undeclared name, a
/// reference in a device function (ptxas specialises the callee to its kernel's word; not
/// lowered), a `.samplerref` (independent mode), a non-`.global` reference; binding the
/// wrong kind at `run`; a cubin (the relocation is not written yet).
#[test]
fn reference_misuse_is_diagnosed() {
    let errors = |name: &str, src: &str| {
        let p = write(name, &format!("{HEADER}{src}"));
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        assert!(!o.status.success(), "{src}");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let body = |b: &str| {
        format!(
            ".global .texref ta;\n.global .surfref sa;\n.visible .entry k() {{\n.reg .u64 %rd<4>; .reg .b32 %r<4>; .reg .f32 %f<8>;\n{b}\nret;\n}}\n"
        )
    };
    for (name, b, want) in [
        (
            "as_surface",
            "suld.b.2d.b32.trap {%r2}, [ta, {%r1, %r1}];",
            "`ta` is a `.texref`, but `suld` takes a surface",
        ),
        (
            "as_texture",
            "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [sa, {%f5,%f6}];",
            "`sa` is a `.surfref`, but `tex` takes a texture",
        ),
        ("txq_surface", "txq.width.b32 %r1, [sa];", "`sa` is a `.surfref`, but `txq` takes a texture"),
        ("operand", "mov.u64 %rd1, ta;", "`ta` is a `.texref`: it can only be the texture operand"),
        ("undeclared", "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [tz, {%f5,%f6}];", "undeclared identifier `tz`"),
    ] {
        let err = errors(name, &body(b));
        assert!(err.contains(want), "{name}: {err}");
        assert!(err.contains("in.ptx:8:"), "{name}: the error is at the instruction's line: {err}");
    }
    let func = ".global .texref ta;\n.func (.reg .f32 r) f(.reg .f32 x) {\n.reg .f32 %f<8>;\n\
tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [ta, {x, x}];\nmov.f32 r, %f1;\nret;\n}\n\
.visible .entry k(.param .f32 x) {\n.reg .f32 %f<4>;\nld.param.f32 %f1, [x];\ncall (%f2), f, (%f1);\nret;\n}\n";
    let err = errors("func", func);
    assert!(err.contains("not supported yet: the `.texref` `ta` in a device function"), "{err}");
    let err = errors("sampler", ".global .samplerref s;\n.visible .entry k() { ret; }\n");
    assert!(err.contains("a `.samplerref` variable needs `.target ..., texmode_independent`"), "{err}");
    let err = errors("const", ".const .texref t;\n.visible .entry k() { ret; }\n");
    assert!(err.contains("a `.texref` variable must be `.global`"), "{err}");
    // A cubin is written (its relocations: tests/texref_cubin.rs), and `asm` of our
    // listing assembles the reference word.
    let p = write("cubin", &format!("{HEADER}{KERNEL}"));
    let out = scratch("cubin").join("k.cubin");
    let o = ptx2sass(&["compile", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success() && out.exists(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = ptx2sass(&["compile", p.to_str().unwrap()]);
    let listing = scratch("cubin").join("k.sass");
    std::fs::write(&listing, &o.stdout).unwrap();
    let asm = scratch("cubin").join("asm.cubin");
    let o = ptx2sass(&["asm", listing.to_str().unwrap(), "-o", asm.to_str().unwrap()]);
    assert!(o.status.success() && asm.exists(), "{}", String::from_utf8_lossy(&o.stderr));
    // `--surface` naming a `.texref`.
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        "--surface",
        "ta=zeros:16,fmt=u32,dims=4",
        "--arg",
        "zeros:40",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("`ta` is a `.texref`: bind it with --texture"), "{err}");
}
