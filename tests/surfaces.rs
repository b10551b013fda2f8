//! Surfaces, samplers and queries (issue 18, docs/textures.md §1.14 and §2): the
//! independent texturing mode (`.samplerref`, `tex [t, s, {c}]`, `run --sampler`), each
//! lowered form against ptxas 11.8's opcode and operand shape (kept here, registers
//! erased, so the tests run without ptxas), run on both executors with `--compare`
//! against values computed here, and the diagnostics of bad input.

#[path = "common/tex.rs"]
mod tex;

use tex::*;

/// The texture/surface lines (and reference header lines) of our `--verify` listing of
/// `src`, registers erased and `.P`/`.T` dropped, per function; `extra` opcodes (e.g.
/// `SHL`, `BFI`) are kept too.
fn listing(name: &str, src: &str, extra: &[&str]) -> Vec<(String, Vec<String>)> {
    let p = write(name, src);
    let o = ptx2sass(&["compile", "--verify", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut out: Vec<(String, Vec<String>)> = vec![];
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        if let Some(f) = l.trim().strip_prefix("Function : ") {
            out.push((f.to_string(), vec![]));
        } else if let Some(t) = l.split("*/").nth(1) {
            let t = t.split(['&', '?', ';']).next().unwrap_or("").trim();
            if ["TEX", "TLD", "TXQ", "SU"].iter().chain(extra).any(|p| t.starts_with(p)) {
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

/// Compares our listing per kernel with ptxas's lines (as multisets: scheduling may
/// reorder).
fn agree(ours: &[(String, Vec<String>)], ptxas: &[(&str, &[&str])]) {
    for (k, want) in ptxas {
        let Some((_, got)) = ours.iter().find(|(f, _)| f == k) else { panic!("no function {k} in {ours:?}") };
        let mut got = got.clone();
        let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "kernel {k}");
    }
}

/// Our opcode, word and operand shape per kernel of `probe_independent.ptx` against ptxas
/// 11.8's (`cuobjdump -sass`, registers erased; docs/textures.md §1.14): a `.texref` with
/// a `.samplerref` is a bound `TEXS` on one word per pair after the parameters (0x14c
/// after 12 bytes), two pairs two words in order of first use; `.u64` registers combine
/// into `(s << 20) | t` (`SHL`, `BFI ... 0x1400`) for `TEX.B` / `TLD4.G.B`.
#[test]
fn probe_independent_forms_match_ptxas() {
    let src = std::fs::read_to_string("tests/data/textures/probe_independent.ptx").unwrap();
    let ours = listing("probe_independent", &src, &["SHL", "BFI"]);
    let ptxas: &[(&str, &[&str])] = &[
        ("globals", &["c[0x0][0x14c] .texref gt,gs", "TEXS R, R, R, R, 0x53, 2D, RGBA"]),
        (
            "globals2",
            &[
                "c[0x0][0x14c] .texref gt,gs2",
                "c[0x0][0x150] .texref gt,gs",
                "TEXS R, R, R, R, 0x53, 2D, RGBA",
                "TEXS R, R, R, R, 0x54, 2D, RGBA",
            ],
        ),
        ("regs", &["SHL R, R, 0x14", "BFI R, R, 0x1400, R", "TEX.B R, R, R, 0x0, 2D, 0xf"]),
        ("xonly", &["c[0x0][0x14c] .texref gt,gs", "TEXS RZ, R, R, R, 0x53, 2D, R"]),
        ("gather", &["SHL R, R, 0x14", "BFI R, R, 0x1400, R", "TLD4.G.B R, R, R, 0x0, 2D, 0xf"]),
    ];
    // ptxas prints the pair's word as two relocations, not a header line; the header
    // lines are ours (`c[0x0][0x14c] .texref gt,gs`), the TEXS index is ptxas's.
    agree(&ours, ptxas);
}

const INDEPENDENT: &str = ".version 7.0\n.target sm_50, texmode_independent\n.address_size 64\n";

/// A kernel sampling `gt` with the samplers `gs` and `gs2` at (x, y) and the texture and
/// sampler handles `th`, `sh` (registers) at (y, x).
const KERNEL: &str = ".global .texref gt;\n.global .samplerref gs = { filter_mode = nearest };\n.global .samplerref gs2;\n\
.visible .entry k(.param .u64 th, .param .u64 sh, .param .u64 out, .param .f32 x, .param .f32 y) {\n\
.reg .u64 %rd<6>; .reg .f32 %f<20>;\n\
ld.param.f32 %f1, [x]; ld.param.f32 %f2, [y]; ld.param.u64 %rd3, [th]; ld.param.u64 %rd4, [sh];\n\
tex.2d.v4.f32.f32 {%f3,%f4,%f5,%f6}, [gt, gs, {%f1,%f2}];\n\
tex.2d.v4.f32.f32 {%f7,%f8,%f9,%f10}, [gt, gs2, {%f1,%f2}];\n\
tex.2d.v4.f32.f32 {%f11,%f12,%f13,%f14}, [%rd3, %rd4, {%f2,%f1}];\n\
ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;\n\
st.global.v4.f32 [%rd2], {%f3,%f4,%f5,%f6};\n\
st.global.v4.f32 [%rd2+16], {%f7,%f8,%f9,%f10};\n\
st.global.v4.f32 [%rd2+32], {%f11,%f12,%f13,%f14};\n\
ret;\n}\n";

/// `KERNEL` with `gt` and `th` bound to one 5 x 3 f32x4 image (the texture's own state:
/// point, clamp), `gs` point/wrap, `gs2` linear/mirror/normalized, `sh` linear/border: each
/// fetch samples with its sampler's state (`exec::sampler`), on both executors with
/// `--compare`, against the reference sampling here.
#[test]
fn samplers_set_the_sampling_on_both_executors() {
    let (t, bytes) = image(5, 3, 1);
    let p = write("sampled", &format!("{INDEPENDENT}{KERNEL}"));
    let dir = scratch("sampled");
    std::fs::write(dir.join("img.bin"), &bytes).unwrap();
    let img = |name: &str| format!("{name}=file:{},fmt=f32x4,dims=5,3", dir.join("img.bin").display());
    for (x, y) in [(1.25f32, 2.75f32), (-0.6, 0.4), (5.9, 1.5), (0.3, 0.9)] {
        let dump = dir.join(format!("dump{x}{y}"));
        let (xs, ys) = (format!("f32:{x}"), format!("f32:{y}"));
        let (gt, th) = (img("gt"), img("th"));
        let o = ptx2sass(&[
            "run",
            "--kernel",
            "k",
            p.to_str().unwrap(),
            "--texture",
            &gt,
            "--texture",
            &th,
            "--sampler",
            "gs=filter=point,addr=wrap",
            "--sampler",
            "gs2=filter=linear,addr=mirror,norm",
            "--sampler",
            "sh=filter=linear,addr=border",
            "--arg",
            "zeros:48",
            "--arg",
            &xs,
            "--arg",
            &ys,
            "--compare",
            "--dump",
            dump.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        let got = floats(
            &std::fs::read(dump.join("arg2.bin"))
                .unwrap()
                .chunks(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect::<Vec<u32>>(),
        );
        let want: Vec<f32> = [
            sample2d(&t, (5, 3), (x, y), false, "wrap"),
            sample2d(&t, (5, 3), (x * 5.0, y * 3.0), true, "mirror"),
            sample2d(&t, (5, 3), (y, x), true, "border"),
        ]
        .concat();
        assert_eq!(got, want, "at ({x}, {y})");
    }
}

/// `samples/tex_sampler` (llc-14 from `tex_sampler.ll`: OpenCL's `read_imagef` with a
/// sampler, as NVVM intrinsics): a 1D row of 6 texels resized to 11 through the `.texref
/// src` and the `.samplerref smp` bound with `--sampler smp=filter=linear` (the sample's
/// initializer says clamp_to_edge, linear, unnormalized; initializers are not read, so the
/// test gives the same state), on both executors against the reference.
#[test]
fn sample_tex_sampler_resizes_on_both_executors() {
    let (w, n) = (6usize, 11usize);
    let row: Vec<f32> = (0..w).map(|k| (k * k) as f32 - 2.5).collect();
    let dir = scratch("tex_sampler");
    std::fs::write(dir.join("src.bin"), row.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let sx = w as f32 / n as f32;
    let tex = format!("src=file:{},fmt=f32,dims={w},1", dir.join("src.bin").display());
    let dump = dir.join("dump");
    let src = format!("{}/samples/tex_sampler.ptx", env!("CARGO_MANIFEST_DIR"));
    let (out, a1, a2) = (format!("zeros:{}", 4 * n), format!("i:{n}"), format!("f32:{sx}"));
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "resize",
        &src,
        "--texture",
        &tex,
        "--sampler",
        "smp=filter=linear,addr=clamp",
        "--arg",
        &out,
        "--arg",
        &a1,
        "--arg",
        &a2,
        "--block",
        "16",
        "--compare",
        "--dump",
        dump.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let got: Vec<f32> = std::fs::read(dump.join("arg0.bin"))
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let texels: Vec<[f32; 4]> = row.iter().map(|&v| [v, 0.0, 0.0, 1.0]).collect();
    for (i, g) in got.iter().enumerate() {
        let want = sample2d(&texels, (w as i64, 1), (i as f32 * sx, 0.5), true, "clamp")[0];
        assert_eq!(*g, want, "pixel {i}");
    }
}

/// Bad input in independent mode: a fetch without a sampler (ptxas 11.8: `Argument 2 of
/// instruction 'tex': .samplerref or .u64 register expected`), a sampler in unified mode
/// (declaration and operand), a sampler used as another operand, a texture reference in
/// the sampler's place, a mixed reference/register pair; a cubin of a kernel with a pair's
/// word is refused with the reason; `run` without the sampler bound, and a bad
/// `--sampler`.
#[test]
fn independent_mode_misuse_is_diagnosed() {
    let errors = |name: &str, src: &str| {
        let p = write(name, src);
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        assert!(!o.status.success(), "{src}");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let body = |b: &str| {
        format!(
            "{INDEPENDENT}.global .texref gt;\n.global .samplerref gs;\n.visible .entry k(.param .u64 h) {{\n.reg .u64 %rd<4>; .reg .b32 %r<4>; .reg .f32 %f<8>;\n{b}\nret;\n}}\n"
        )
    };
    for (name, b, want) in [
        ("no_sampler", "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [gt, {%f5,%f6}];", "needs a sampler: `[t, s, {c}]`"),
        ("operand", "mov.u64 %rd1, gs;", "`gs` is a `.samplerref`: it can only be the sampler operand"),
        (
            "texref_as_sampler",
            "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [gt, gt, {%f5,%f6}];",
            "`gt` is a texture or surface reference, not a sampler",
        ),
        (
            "mixed",
            "ld.param.u64 %rd1, [h]; tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [gt, %rd1, {%f5,%f6}];",
            "a texture reference with a sampler in a register",
        ),
        ("narrow", "tex.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [%rd1, %r1, {%f5,%f6}];", "must be a `.u64` handle"),
    ] {
        let err = errors(name, &body(b));
        assert!(err.contains(want), "{name}: {err}");
        assert!(err.contains("in.ptx:8:"), "{name}: the error is at the instruction's line: {err}");
    }
    let err = errors("unified_decl", &format!("{HEADER}.global .samplerref s;\n.visible .entry k() {{ ret; }}\n"));
    assert!(err.contains("a `.samplerref` variable needs `.target ..., texmode_independent`"), "{err}");
    let err = errors(
        "unified_operand",
        &format!(
            "{HEADER}.visible .entry k(.param .u64 h) {{\n.reg .u64 %rd<4>; .reg .f32 %f<8>;\nld.param.u64 %rd1, [h];\n\
tex.2d.v4.f32.f32 {{%f1,%f2,%f3,%f4}}, [%rd1, %rd1, {{%f5,%f6}}];\nret;\n}}\n"
        ),
    );
    assert!(err.contains("a second texture operand in unified texturing mode"), "{err}");
    // A cubin: refused with the reason (ptxas writes R_CUDA_SAMP_HEADER_INDEX, not us).
    let p = write("cubin", &format!("{INDEPENDENT}{KERNEL}"));
    let out = scratch("cubin").join("k.cubin");
    let o = ptx2sass(&["compile", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("not supported yet: a cubin of kernel `k`"), "{err}");
    assert!(err.contains("R_CUDA_SAMP_HEADER_INDEX"), "{err}");
    // `asm` of our listing likewise.
    let o = ptx2sass(&["compile", p.to_str().unwrap()]);
    let listing = scratch("cubin").join("k.sass");
    std::fs::write(&listing, &o.stdout).unwrap();
    let o = ptx2sass(&["asm", listing.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("uses the texture and sampler `gt,gs`"), "{err}");
    // `run`: a sampler not bound, a bad --sampler, a --sampler naming nothing.
    let img = "gt=zeros:240,fmt=f32x4,dims=5,3";
    let th = "th=zeros:240,fmt=f32x4,dims=5,3";
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--kernel", "k", p.to_str().unwrap(), "--texture", img, "--texture", th];
        a.extend_from_slice(extra);
        a.extend(["--arg", "zeros:48", "--arg", "f32:1", "--arg", "f32:1"]);
        let o = ptx2sass(&a);
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    for exec in ["ptx", "sim"] {
        let err = run(&["--exec", exec, "--sampler", "gs=", "--sampler", "sh="]);
        assert!(err.contains("no sampler is bound to the `.samplerref` `gs2`"), "{exec}: {err}");
    }
    let err = run(&["--sampler", "gs=filter=cubic"]);
    assert!(err.contains("--sampler `filter=cubic`"), "{err}");
    let err = run(&["--sampler", "zz=norm"]);
    assert!(err.contains("`zz` is not a parameter of kernel `k` nor a `.samplerref`"), "{err}");
}

/// Surface reductions: thread i (of 64) reduces into column i % 4 of a 4 x 6 u32 surface
/// `s` (row 0 `.add.u32` of i; row 1 `.min.s32` of i - 40; row 2 `.max.u32` of 7i mod 50
/// with `.clamp`; row 3 `.and.b32` of !(1 << i % 32) with `.zero`, and an `.or` far out of
/// range that `.zero` drops; row 4 `.or.b32` of 1 << i % 32 through a register handle;
/// row 5 `sured.p.add` with x in samples) and into a 2 x 1 u64 surface `d` (`.add.u64` of
/// 2^32 + i at x = 8 (i % 2)), on both executors with `--compare`, against the values
/// computed here.
const REDUCE: &str = ".visible .entry k(.param .u64 s, .param .u64 d) {\n\
.reg .u64 %rd<12>; .reg .b32 %r<20>;\n\
ld.param.u64 %rd1, [s]; ld.param.u64 %rd2, [d]; mov.b64 %rd9, %rd1;\n\
mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 3; shl.b32 %r3, %r2, 2;\n\
sured.b.add.2d.u32.trap [%rd1, {%r3, 0}], %r1;\n\
sub.s32 %r4, %r1, 40; sured.b.min.2d.s32.trap [%rd1, {%r3, 1}], %r4;\n\
mul.lo.u32 %r5, %r1, 7; rem.u32 %r5, %r5, 50; sured.b.max.2d.u32.clamp [%rd1, {%r3, 2}], %r5;\n\
and.b32 %r6, %r1, 31; shl.b32 %r7, 1, %r6; not.b32 %r8, %r7;\n\
sured.b.and.2d.b32.zero [%rd1, {%r3, 3}], %r8;\n\
add.s32 %r9, %r3, 4000; sured.b.or.2d.b32.zero [%rd1, {%r9, 3}], %r7;\n\
sured.b.or.2d.b32.trap [%rd9, {%r3, 4}], %r7;\n\
sured.p.add.2d.b32.trap [%rd1, {%r2, 5}], 1;\n\
and.b32 %r10, %r1, 1; shl.b32 %r11, %r10, 3; cvt.u64.u32 %rd3, %r1; add.u64 %rd4, %rd3, 4294967296;\n\
sured.b.add.1d.u64.trap [%rd2, {%r11}], %rd4;\n\
ret;\n}\n";

#[test]
fn surface_reductions_on_both_executors() {
    let dir = scratch("reduce");
    let p = write("reduce", &format!("{HEADER}{REDUCE}"));
    let init: Vec<u32> = [0u32, 100, 0, u32::MAX, 0, 0].iter().flat_map(|&v| [v; 4]).collect();
    std::fs::write(dir.join("s.bin"), init.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let s = format!("s=file:{},fmt=u32,dims=4,6", dir.join("s.bin").display());
    let dump = dir.join("dump");
    for exec in [&["--compare"][..], &["--exec", "ptx"], &["--exec", "sim"]] {
        let mut a = vec!["run", "--kernel", "k", p.to_str().unwrap(), "--surface", &s];
        a.extend(["--surface", "d=zeros:16,fmt=u32,dims=4", "--block", "64", "--dump", dump.to_str().unwrap()]);
        a.extend_from_slice(exec);
        let o = ptx2sass(&a);
        assert!(
            o.status.success(),
            "{exec:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let words = |f: &str| -> Vec<u32> {
            std::fs::read(dump.join(f)).unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
        };
        let got = words("tex:s.bin");
        let mut want = init.clone();
        for i in 0..64u32 {
            let c = (i % 4) as usize;
            want[c] = want[c].wrapping_add(i);
            want[4 + c] = (want[4 + c] as i32).min(i as i32 - 40) as u32;
            want[8 + c] = want[8 + c].max(i * 7 % 50);
            want[12 + c] &= !(1 << (i % 32));
            want[16 + c] |= 1 << (i % 32);
            want[20 + c] += 1;
        }
        assert_eq!(got, want, "{exec:?}");
        let d = words("tex:d.bin");
        let lanes = |m: u64| (0..64u64).filter(|i| i % 2 == m).map(|i| (1u64 << 32) + i).fold(0u64, u64::wrapping_add);
        let want_d: Vec<u32> = [lanes(0), lanes(1)].iter().flat_map(|v| [*v as u32, (*v >> 32) as u32]).collect();
        assert_eq!(d, want_d, "{exec:?}");
    }
}

/// Our `SURED` per kernel of `probe_sured.ptx` against ptxas 11.8's (`cuobjdump -sass`,
/// registers erased, predicates dropped; docs/textures.md §1.9): operation, type (`.S32`,
/// `.U64`, none for `.u32`/`.b32`), clamp, `.BA` (not for `sured.p`), bound index or handle
/// register. In k5, k9 and k13 (1D, coordinates and value uniform kernel parameters)
/// ptxas aggregates the warp's reductions (`VOTE.ANY`, `@!P0 SURED` per lane for a partial
/// warp, else one lane's `SURED`, of `popc * v` for `.add` in k13); the `SURED` form is the
/// same, and our one `SURED` per lane has the same result.
#[test]
fn probe_sured_forms_match_ptxas() {
    let src = std::fs::read_to_string("tests/data/textures/probe_sured.ptx").unwrap();
    let ours = listing("probe_sured", &src, &[]);
    let ptxas: &[(&str, &[&str])] = &[
        ("k0_add_u32_2d_trap", &["SURED.D.BA.2D.ADD.TRAP [R], R, 0x50"]),
        ("k1_add_s32_2d_trap", &["SURED.D.BA.2D.ADD.S32.TRAP [R], R, 0x50"]),
        ("k2_add_u64_1d_trap", &["SURED.D.BA.1D.ADD.U64.TRAP [R], R, 0x50"]),
        ("k3_min_u32_2d_trap", &["SURED.D.BA.2D.MIN.TRAP [R], R, 0x50"]),
        ("k4_min_s32_2d_clamp", &["SURED.D.BA.2D.MIN.S32 [R], R, 0x50"]),
        ("k5_max_u32_1d_trap", &["SURED.D.BA.1D.MAX.TRAP [R], R, 0x50"]),
        ("k6_max_s32_3d_trap", &["SURED.D.BA.3D.MAX.S32.TRAP [R], R, 0x50"]),
        ("k7_and_b32_2d_trap", &["SURED.D.BA.2D.AND.TRAP [R], R, 0x50"]),
        ("k8_or_b32_3d_trap", &["SURED.D.BA.3D.OR.TRAP [R], R, 0x50"]),
        ("k9_max_u32_1d_zero", &["SURED.D.BA.1D.MAX.IGN [R], R, 0x50"]),
        ("k10_add_u32_2d_zero", &["SURED.D.BA.2D.ADD.IGN [R], R, 0x50"]),
        ("k13_add_u32_1d_clamp", &["SURED.D.BA.1D.ADD [R], R, 0x50"]),
        ("kp", &["SURED.D.2D.ADD.TRAP [R], R, 0x50"]),
        ("kb", &["SURED.D.BA.2D.ADD.TRAP [R], R, R"]),
    ];
    agree(&ours, ptxas);
}

/// Bad surface reductions: a type ptxas 11.8 does not take for the operation (at the type
/// word), `sured.p` of `.b64`, an array geometry (ptxas: `Illegal modifier '.a1d'`), and
/// at run time `.trap` out of range and `sured.p` on a float surface, on both executors.
#[test]
fn surface_reduction_misuse_is_diagnosed() {
    let body = |b: &str| {
        format!(
            "{HEADER}.visible .entry k(.param .u64 s) {{\n.reg .u64 %rd<4>; .reg .b32 %r<4>;\nld.param.u64 %rd1, [s];\n{b}\nret;\n}}\n"
        )
    };
    for (name, b, want) in [
        ("s64_min", "sured.b.min.1d.s64.trap [%rd1, {%r1}], %rd2;", "`.s64` is not a type of `sured.b.min`"),
        ("and_u32", "sured.b.and.1d.u32.trap [%rd1, {%r1}], %r2;", "`.u32` is not a type of `sured.b.and`"),
        ("p_b64", "sured.p.add.1d.b64.trap [%rd1, {%r1}], %rd2;", "`.b64` is not a type of `sured.p.add`"),
        ("array", "sured.b.add.a1d.u32.trap [%rd1, {%r1, %r1}], %r2;", "a1d"),
    ] {
        let p = write(name, &body(b));
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{name}: {err}");
        assert!(err.contains("in.ptx:7:"), "{name}: at the instruction's line: {err}");
    }
    let run = |name: &str, b: &str, surf: &str| {
        let p = write(name, &body(b));
        let mut errs = vec![];
        for exec in ["ptx", "sim"] {
            let o = ptx2sass(&["run", "--kernel", "k", p.to_str().unwrap(), "--surface", surf, "--exec", exec]);
            assert!(!o.status.success(), "{name} {exec}");
            errs.push(String::from_utf8_lossy(&o.stderr).to_string());
        }
        errs
    };
    for err in run("trap", "mov.u32 %r1, 64;\nsured.b.add.1d.u32.trap [%rd1, {%r1}], 1;", "s=zeros:16,fmt=u32,dims=4") {
        assert!(err.contains("access at x = 64 bytes, y = 0 is out of range (.trap)"), "{err}");
    }
    for err in run("p_float", "mov.u32 %r1, 1;\nsured.p.add.1d.b32.trap [%rd1, {%r1}], 1;", "s=zeros:16,fmt=f32,dims=4")
    {
        assert!(err.contains("a formatted reduction (sured.p) needs fmt=u32 or s32"), "{err}");
    }
}

/// Our `SULD`/`SUST` of vectors of `.b8`/`.b16` per kernel of `probe_subword.ptx`
/// against ptxas 11.8's (docs/textures.md §1.15): one access of all the bytes (`.v2.b8`
/// `.U16`, `.v4.b8` and `.v2.b16` 32 bits, `.v4.b16` `.64`); ptxas unpacks with `BFE.U32`
/// (and `XMAD.PSL.CHI` for a `.b16` high half) and packs with `BFI` (`XMAD.PSL.CLO`), we
/// with `BFE.U32` and `BFI` throughout.
#[test]
fn probe_subword_vectors_match_ptxas() {
    let src = std::fs::read_to_string("tests/data/textures/probe_subword.ptx").unwrap();
    let ours = listing("probe_subword", &src, &[]);
    let ptxas: &[(&str, &[&str])] = &[
        ("suld_v2_b8", &["SULD.D.BA.2D.U16.TRAP R, [R], 0x50"]),
        ("suld_v4_b8", &["SULD.D.BA.2D.TRAP R, [R], 0x50"]),
        ("suld_v2_b16", &["SULD.D.BA.2D.TRAP R, [R], 0x50"]),
        ("suld_v4_b16", &["SULD.D.BA.2D.64.TRAP R, [R], 0x50"]),
        ("sust_v2_b8", &["SUST.D.BA.2D.U16.TRAP [R], R, 0x50"]),
        ("sust_v4_b8", &["SUST.D.BA.2D.TRAP [R], R, 0x50"]),
        ("sust_v2_b16", &["SUST.D.BA.2D.TRAP [R], R, 0x50"]),
        ("sust_v4_b16", &["SUST.D.BA.2D.64.TRAP [R], R, 0x50"]),
    ];
    agree(&ours, ptxas);
}

/// One thread reads vectors of `.b8`/`.b16` from row 0 of a 6 x 2 u32 surface (24-byte
/// rows) and writes them to row 1 reordered (`.v4.b8` at x = 0 reversed, `.v2.b16` at 4
/// swapped, `.v2.b8` from 8 to 10 swapped, `.v4.b16` at 16 reversed), and stores every
/// loaded element as a u16 to `out`, on both executors with `--compare`, against the
/// bytes computed here.
const SUBWORD: &str = ".visible .entry k(.param .u64 s, .param .u64 out) {\n\
.reg .u64 %rd<4>; .reg .b16 %h<16>;\n\
ld.param.u64 %rd1, [s]; ld.param.u64 %rd2, [out]; cvta.to.global.u64 %rd3, %rd2;\n\
suld.b.2d.v4.b8.trap {%h1,%h2,%h3,%h4}, [%rd1, {0, 0}];\n\
sust.b.2d.v4.b8.trap [%rd1, {0, 1}], {%h4,%h3,%h2,%h1};\n\
suld.b.2d.v2.b16.trap {%h5,%h6}, [%rd1, {4, 0}];\n\
sust.b.2d.v2.b16.trap [%rd1, {4, 1}], {%h6,%h5};\n\
suld.b.2d.v2.b8.clamp {%h7,%h8}, [%rd1, {8, 0}];\n\
sust.b.2d.v2.b8.zero [%rd1, {10, 1}], {%h8,%h7};\n\
suld.b.2d.v4.b16.trap {%h9,%h10,%h11,%h12}, [%rd1, {16, 0}];\n\
sust.b.2d.v4.b16.trap [%rd1, {16, 1}], {%h12,%h11,%h10,%h9};\n\
st.global.v4.u16 [%rd3], {%h1,%h2,%h3,%h4};\n\
st.global.v4.u16 [%rd3+8], {%h5,%h6,%h7,%h8};\n\
st.global.v4.u16 [%rd3+16], {%h9,%h10,%h11,%h12};\n\
ret;\n}\n";

#[test]
fn subword_vectors_on_both_executors() {
    let dir = scratch("subword");
    let p = write("subword", &format!("{HEADER}{SUBWORD}"));
    let row0: Vec<u8> = (0..24u8).map(|k| 0x11u8.wrapping_mul(k + 1) ^ 0x80).collect();
    let mut img = row0.clone();
    img.extend([0u8; 24]);
    std::fs::write(dir.join("s.bin"), &img).unwrap();
    let s = format!("s=file:{},fmt=u32,dims=6,2", dir.join("s.bin").display());
    let dump = dir.join("dump");
    for exec in [&["--compare"][..], &["--exec", "ptx"], &["--exec", "sim"]] {
        let mut a = vec!["run", "--kernel", "k", p.to_str().unwrap(), "--surface", &s, "--arg", "zeros:24"];
        a.extend(["--dump", dump.to_str().unwrap()]);
        a.extend_from_slice(exec);
        let o = ptx2sass(&a);
        assert!(
            o.status.success(),
            "{exec:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let b = &row0;
        let h = |k: usize| u16::from_le_bytes([b[k], b[k + 1]]);
        let mut want = img.clone();
        let row1 = &mut want[24..];
        row1[0..4].copy_from_slice(&[b[3], b[2], b[1], b[0]]);
        row1[4..8].copy_from_slice(&[b[6], b[7], b[4], b[5]]);
        row1[10..12].copy_from_slice(&[b[9], b[8]]);
        row1[16..24].copy_from_slice(&[b[22], b[23], b[20], b[21], b[18], b[19], b[16], b[17]]);
        assert_eq!(std::fs::read(dump.join("tex:s.bin")).unwrap(), want, "{exec:?}");
        let out: Vec<u16> =
            std::fs::read(dump.join("arg1.bin")).unwrap().chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        let loads: Vec<u16> = [0, 1, 2, 3]
            .map(|k| u16::from(b[k]))
            .into_iter()
            .chain([h(4), h(6), u16::from(b[8]), u16::from(b[9]), h(16), h(18), h(20), h(22)])
            .collect();
        assert_eq!(out, loads, "{exec:?}");
    }
}

/// Our `SUST.P` per kernel of `probe_sustp.ptx` against ptxas 11.8's (docs/textures.md
/// §1.15): the component mask of the source vector (`.R` for one, `.RG` for `.v2`, none
/// for `.v4`), no size, no `.BA`.
#[test]
fn probe_sustp_forms_match_ptxas() {
    let src = std::fs::read_to_string("tests/data/textures/probe_sustp.ptx").unwrap();
    let ours = listing("probe_sustp", &src, &[]);
    let ptxas: &[(&str, &[&str])] = &[
        ("sustp_v4", &["SUST.P.2D.TRAP [R], R, 0x50"]),
        ("sustp_1", &["SUST.P.1D.R.IGN [R], R, 0x50"]),
        ("sustp_v2", &["SUST.P.3D.RG [R], R, 0x50"]),
    ];
    agree(&ours, ptxas);
}

/// `sust.p` on four surfaces (x in samples): a `.v4` of floats into a 3 x 1 `f32x4`
/// surface at sample 1, the same into a 4 x 1 `u8x4` (unsigned normalized: NaN, below 0,
/// above 1, a tie 0.5 * 255 = 127.5 to even) and a `.v2` into sample 2 (B, A kept), a lone
/// `.b32` into a `u32` surface at sample 3, and an `.zero` store off the end dropped, on
/// both executors with `--compare`, against the bytes computed here.
const FORMATTED: &str = ".visible .entry k(.param .u64 a, .param .u64 b, .param .u64 c) {\n\
.reg .u64 %rd<4>; .reg .f32 %f<8>; .reg .b32 %r<4>;\n\
ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b]; ld.param.u64 %rd3, [c];\n\
mov.f32 %f1, 0f3FC00000; mov.f32 %f2, 0fC0200000; mov.f32 %f3, 0f7FC00000; mov.f32 %f4, 0f3F000000;\n\
sust.p.1d.v4.b32.trap [%rd1, {1}], {%f1, %f2, %f3, %f4};\n\
sust.p.1d.v4.b32.trap [%rd2, {1}], {%f1, %f2, %f3, %f4};\n\
mov.f32 %f5, 0f3E800000; sust.p.1d.v2.b32.clamp [%rd2, {2}], {%f5, %f4};\n\
mov.b32 %r1, 0xdeadbeef; sust.p.1d.b32.trap [%rd3, {3}], {%r1};\n\
sust.p.1d.b32.zero [%rd3, {9}], {%r1};\n\
ret;\n}\n";

#[test]
fn formatted_stores_on_both_executors() {
    let dir = scratch("formatted");
    let p = write("formatted", &format!("{HEADER}{FORMATTED}"));
    let dump = dir.join("dump");
    let fill = |n: usize| format!("bytes:{}", "a5".repeat(n));
    let (a, b, c) = (
        format!("a={},fmt=f32x4,dims=3", fill(48)),
        format!("b={},fmt=u8x4,dims=4", fill(16)),
        format!("c={},fmt=u32,dims=4", fill(16)),
    );
    for exec in [&["--compare"][..], &["--exec", "ptx"], &["--exec", "sim"]] {
        let mut args = vec!["run", "--kernel", "k", p.to_str().unwrap(), "--surface", &a, "--surface", &b];
        args.extend(["--surface", &c, "--dump", dump.to_str().unwrap()]);
        args.extend_from_slice(exec);
        let o = ptx2sass(&args);
        assert!(
            o.status.success(),
            "{exec:?}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let v = [1.5f32, -2.5, f32::NAN, 0.5];
        let mut want_a = vec![0xa5u8; 48];
        for (k, f) in v.iter().enumerate() {
            want_a[16 + 4 * k..20 + 4 * k].copy_from_slice(&f.to_bits().to_le_bytes());
        }
        assert_eq!(std::fs::read(dump.join("tex:a.bin")).unwrap(), want_a, "{exec:?}");
        let mut want_b = vec![0xa5u8; 16];
        // 1.5 -> 255, -2.5 -> 0, NaN -> 0, 0.5 * 255 = 127.5 -> 128 (to even); then 0.25 ->
        // 63.75 -> 64 and 0.5 -> 128 at sample 2, its B and A kept.
        want_b[4..8].copy_from_slice(&[255, 0, 0, 128]);
        want_b[8..10].copy_from_slice(&[64, 128]);
        assert_eq!(std::fs::read(dump.join("tex:b.bin")).unwrap(), want_b, "{exec:?}");
        let mut want_c = vec![0xa5u8; 16];
        want_c[12..16].copy_from_slice(&0xdeadbeefu32.to_le_bytes());
        assert_eq!(std::fs::read(dump.join("tex:c.bin")).unwrap(), want_c, "{exec:?}");
    }
}
