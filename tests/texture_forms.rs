//! Texture fetches whose results are partly read (write masks from liveness,
//! `lower::tex::mask`) and the forms ptxas 11.8 uses for them (docs/textures.md §1.2):
//! each runs on both executors with `--compare` against values computed here, and our
//! listing names the opcode and mask ptxas names for the same kernel
//! (`tests/data/textures/probe_liveness.ptx`).

#[path = "common/tex.rs"]
mod tex;

use tex::*;

/// `tex` of the f32x4 image `image(5, 3, 1)` at (1.3, 2.9), point sampling: texel (1, 2)
/// = (21, 1001, -2, 0).
const TEXEL: [f32; 4] = [21.0, 1001.0, -2.0, 0.0];

/// The texture lines of our listing of `probe(body)`.
fn listing(name: &str, body: &str) -> Vec<String> {
    let p = write(name, &probe(body));
    let o = ptx2sass(&["compile", "--verify", p.to_str().unwrap()]);
    assert!(o.status.success(), "{body}\n{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    out.lines()
        .filter_map(|l| l.split("*/").nth(1))
        .map(|t| t.split(['&', '?', ';']).next().unwrap_or("").trim().to_string())
        .filter(|t| ["TEX", "TLD", "TXD"].iter().any(|p| t.starts_with(p)))
        .collect()
}

/// Erases register numbers: `TEX R4, R6, 0x50` -> `TEX R, R, 0x50`.
fn shape(t: &str) -> String {
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

/// Each read pattern of a 2D fetch: the PTX moves into `%r5..%r8`, the components read,
/// and ptxas 11.8's instruction (registers erased) bound and bindless.
const PATTERNS: &[(&str, [bool; 4], &str, &str)] = &[
    // x and z: TEXS cannot name RB (ptxas `TEX.P R4, R6, 0x50, 2D, 0x5`, kernel b_xz).
    (
        "mov.b32 %r5, %f5;\nmov.b32 %r7, %f7;",
        [true, false, true, false],
        "TEX R, R, 0x50, 2D, 0x5",
        "TEX.B R, R, R, 0x0, 2D, 0x5",
    ),
    // y and z (b_yz: `TEX.P R4, R6, 0x50, 2D, 0x6`).
    (
        "mov.b32 %r6, %f6;\nmov.b32 %r7, %f7;",
        [false, true, true, false],
        "TEX R, R, 0x50, 2D, 0x6",
        "TEX.B R, R, R, 0x0, 2D, 0x6",
    ),
    // y, z, w (b_yzw: `TEXS.P R0, R2, R4, R6, 0x50, 2D, GBA`).
    (
        "mov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;",
        [false, true, true, true],
        "TEXS R, R, R, R, 0x50, 2D, GBA",
        "TEX.B R, R, R, 0x0, 2D, 0xe",
    ),
    // w (b_w: `TEXS.P RZ, R0, R0, R5, 0x50, 2D, A`).
    ("mov.b32 %r8, %f8;", [false, false, false, true], "TEXS RZ, R, R, R, 0x50, 2D, A", "TEX.B R, R, R, 0x0, 2D, 0x8"),
    // x, y, w through a sink for y: the PTX vector names x, z, w; z is not read.
    (
        "mov.b32 %r5, %f5;\nmov.b32 %r8, %f8;",
        [true, false, false, true],
        "TEXS RZ, R, R, R, 0x50, 2D, RA",
        "TEX.B R, R, R, 0x0, 2D, 0x9",
    ),
];

#[test]
fn fetches_write_only_the_components_read_on_both_executors() {
    let (_, bytes) = image(5, 3, 1);
    let input = [[1.3f32.to_bits(), 2.9f32.to_bits(), 0, 0]];
    for (k, &(moves, read, bound, bindless)) in PATTERNS.iter().enumerate() {
        for (h, want_form) in [("%rd1", bound), ("%rd9", bindless)] {
            let body = format!("tex.2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%f1,%f2}}];\n{moves}");
            let name = format!("mask{k}{}", &h[1..]);
            let (out, _) = run_probe(&name, &body, ("--texture fmt=f32x4,dims=5,3", &bytes), &input);
            let want: Vec<f32> = (0..4).map(|c| if read[c] { TEXEL[c] } else { 0.0 }).collect();
            assert_eq!(floats(&out), want, "{name}: {body}");
            let lines = listing(&name, &body);
            assert_eq!(lines.iter().map(|l| shape(l)).collect::<Vec<_>>(), [want_form], "{name}: {body}");
        }
    }
}

#[test]
fn partial_3d_integer_and_gather_fetches_on_both_executors() {
    // 3D x and z, bound: `TEX.P R4, R8, 0x50, 3D, 0x5` (d3_xz); bindless `TEX.B ... 0x5`.
    let (t, bytes) = image(4, 3, 2);
    let p = (2.5f32, 1.5f32, 1.5f32);
    let input = [[p.0.to_bits(), p.1.to_bits(), p.2.to_bits(), 0]];
    let texel = t[(3 + 1) * 4 + 2];
    for (h, form) in [("%rd1", "TEX R, R, 0x50, 3D, 0x5"), ("%rd9", "TEX.B R, R, R, 0x0, 3D, 0x5")] {
        let body = format!(
            "tex.3d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%f1,%f2,%f3,%f3}}];\nmov.b32 %r5, %f5;\nmov.b32 %r7, %f7;"
        );
        let name = format!("d3{}", &h[1..]);
        let (out, _) = run_probe(&name, &body, ("--texture fmt=f32x4,dims=4,3,2", &bytes), &input);
        assert_eq!(floats(&out), [texel[0], 0.0, texel[2], 0.0], "{name}");
        assert_eq!(listing(&name, &body).iter().map(|l| shape(l)).collect::<Vec<_>>(), [form], "{name}");
    }
    // Integer coordinates: x and z bound `TLD.LZ.P R4, R6, 0x50, 2D, 0x5` (i_xz); all four
    // bindless `TLD.B.LZ.P R8, R8, R2, 0x0, 2D, 0xf` (i_bindless); 3D bound `TLDS.LZ.P R6, R4,
    // R4, R5, 0x50, 3D, RGBA` (i_3d), and 3D bindless.
    let ij = [(1i32, 2i32, 1i32), (3, 0, 0), (-1, 5, 3)];
    let input: Vec<[u32; 4]> = ij.iter().map(|&(i, j, k)| [i as u32, j as u32, k as u32, 0]).collect();
    let at = |i: i32, j: i32, k: i32| t[((k.clamp(0, 1) * 3 + j.clamp(0, 2)) * 4 + i.clamp(0, 3)) as usize];
    let cases = [
        (
            "tex.2d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [%rd1, {%r1,%r2}];\nmov.b32 %r5, %f5;\nmov.b32 %r7, %f7;",
            "TLD.LZ R, R, 0x50, 2D, 0x5",
            false,
            [true, false, true, false],
        ),
        (
            "tex.2d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [%rd9, {%r1,%r2}];\nmov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;",
            "TLD.B.LZ R, R, R, 0x0, 2D, 0xf",
            false,
            [true; 4],
        ),
        (
            "tex.3d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [%rd1, {%r1,%r2,%r3,%r3}];\nmov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;",
            "TLDS.LZ R, R, R, R, 0x50, 3D, RGBA",
            true,
            [true; 4],
        ),
        (
            "tex.3d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [%rd9, {%r1,%r2,%r3,%r3}];\nmov.b32 %r6, %f6;",
            "TLD.B.LZ R, R, R, 0x0, 3D, 0x2",
            true,
            [false, true, false, false],
        ),
    ];
    for (k, (body, form, d3, read)) in cases.iter().enumerate() {
        let name = format!("int{k}");
        let (out, _) = run_probe(&name, body, ("--texture fmt=f32x4,dims=4,3,2", &bytes), &input);
        for (q, &(i, j, z)) in ij.iter().enumerate() {
            let texel = at(i, j, if *d3 { z } else { 0 });
            let want: Vec<f32> = (0..4).map(|c| if read[c] { texel[c] } else { 0.0 }).collect();
            assert_eq!(floats(&out[4 * q..4 * q + 4]), want, "{name} at {i},{j},{z}: {body}");
        }
        assert_eq!(listing(&name, body).iter().map(|l| shape(l)).collect::<Vec<_>>(), [*form], "{name}");
    }
    // Gathers of fewer than four texels: bound `TLD4.R.P R0, R4, 0x50, 2D, 0x2` (g_x),
    // `... 0x7` (g_xyz); bindless `TLD4.R.B ... 0x2`.
    let (t, bytes) = image(5, 3, 1);
    let p = (1.2f32, 1.7f32);
    let input = [[p.0.to_bits(), p.1.to_bits(), 0, 0]];
    let (i, j) = ((p.0 - 0.5).floor() as i64, (p.1 - 0.5).floor() as i64);
    let g = |x: i64, y: i64| t[(y.clamp(0, 2) * 5 + x.clamp(0, 4)) as usize][0];
    let gather = [g(i, j + 1), g(i + 1, j + 1), g(i + 1, j), g(i, j)];
    let cases = [
        ("%rd1", "mov.b32 %r6, %f6;", [false, true, false, false], "TLD4.R R, R, 0x50, 2D, 0x2"),
        (
            "%rd1",
            "mov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;",
            [true, true, true, false],
            "TLD4.R R, R, 0x50, 2D, 0x7",
        ),
        ("%rd9", "mov.b32 %r6, %f6;", [false, true, false, false], "TLD4.R.B R, R, R, 0x0, 2D, 0x2"),
    ];
    for (k, (h, moves, read, form)) in cases.iter().enumerate() {
        let body = format!("tld4.r.2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%f1,%f2}}];\n{moves}");
        let name = format!("tld4-{k}");
        let (out, _) = run_probe(&name, &body, ("--texture fmt=f32x4,dims=5,3", &bytes), &input);
        let want: Vec<f32> = (0..4).map(|c| if read[c] { gather[c] } else { 0.0 }).collect();
        assert_eq!(floats(&out), want, "{name}");
        assert_eq!(listing(&name, &body).iter().map(|l| shape(l)).collect::<Vec<_>>(), [*form], "{name}");
    }
}

/// Results read across blocks, as a register pair, and in a loop: the narrowed fetch
/// still gives every component read (both executors agree with the values here).
#[test]
fn components_read_in_other_blocks_and_as_ranges_stay_correct() {
    let (_, bytes) = image(5, 3, 1);
    let input = [[1.3f32.to_bits(), 2.9f32.to_bits(), 0, 0], [1.3f32.to_bits(), 2.9f32.to_bits(), 1, 0]];
    // z read in a branch only taken by thread 1 (in.z = 1), y and w as a 64-bit pair
    // moved out of the vector (a two-component range of Rd2 after the fetch).
    let body = "tex.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [%rd1, {%f1,%f2}];\n\
setp.ne.u32 %p1, %r3, 0;\n\
@!%p1 bra SKIP;\n\
mov.b32 %r7, %f7;\n\
SKIP:\n\
mov.b64 %rd10, {%f6,%f8};\n\
mov.b64 {%r6,%r8}, %rd10;";
    let body = body.replace("tex.2d", ".reg .pred %p1;\ntex.2d");
    let (out, _) = run_probe("blocks", &body, ("--texture fmt=f32x4,dims=5,3", &bytes), &input);
    assert_eq!(floats(&out[..4]), [0.0, TEXEL[1], 0.0, TEXEL[3]]);
    assert_eq!(floats(&out[4..]), [0.0, TEXEL[1], TEXEL[2], TEXEL[3]]);
    // A two-component range read of Rd2 (z, w stored as one 64-bit pair, here into the
    // input buffer, which `--compare` compares) with x dead: RGBA -> GBA would split z, w
    // across Rd and Rd2, so the fetch keeps its mask.
    let body = "tex.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [%rd1, {%f1,%f2}];\nmov.b32 %r6, %f6;\nst.global.v2.f32 [%rd7+8], {%f7,%f8};";
    let (out, _) = run_probe("range", body, ("--texture fmt=f32x4,dims=5,3", &bytes), &input[..1]);
    assert_eq!(floats(&out), [0.0, TEXEL[1], 0.0, 0.0]);
}

/// Runs `ptx2sass run ... --compare --dump DIR` and returns DIR.
fn run_sample(name: &str, args: &[&str]) -> std::path::PathBuf {
    let dump = scratch(name).join("dump");
    let src = format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let mut all = vec!["run", "--kernel", name, &src, "--compare", "--dump", dump.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = ptx2sass(&all);
    assert!(o.status.success(), "{name}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    dump
}

/// `samples/tex_bilinear` (clang-14 from `tex_bilinear.cu`): a 4 x 3 f32 image resized to
/// 7 x 5 with the texture unit's linear filter, on both executors, against the reference
/// bilinear sampling (8-bit weights) here.
#[test]
fn sample_tex_bilinear_resizes_on_both_executors() {
    let (w, h, dw, dh) = (4usize, 3usize, 7usize, 5usize);
    let src: Vec<f32> = (0..w * h).map(|k| (k * k) as f32 * 0.5 - 3.0).collect();
    let dir = scratch("tex_bilinear");
    let img = dir.join("src.bin");
    std::fs::write(&img, src.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let (sx, sy) = (w as f32 / dw as f32, h as f32 / dh as f32);
    let tex = format!("tex_bilinear_param_0=file:{},fmt=f32,dims={w},{h},filter=linear", img.display());
    let (out, a3, a4, a5, a6) = (
        format!("zeros:{}", 4 * dw * dh),
        format!("i:{dw}"),
        format!("i:{dh}"),
        format!("f32:{sx}"),
        format!("f32:{sy}"),
    );
    let dump = run_sample(
        "tex_bilinear",
        &["--texture", &tex, "--arg", &out, "--arg", &a3, "--arg", &a4, "--arg", &a5, "--arg", &a6, "--block", "8,8"],
    );
    let got: Vec<f32> = std::fs::read(dump.join("arg1.bin"))
        .unwrap()
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let texels: Vec<[f32; 4]> = src.iter().map(|&v| [v, 0.0, 0.0, 1.0]).collect();
    for y in 0..dh {
        for x in 0..dw {
            let (u, v) = ((x as f32 + 0.5) * sx, (y as f32 + 0.5) * sy);
            let want = sample2d(&texels, (w as i64, h as i64), (u, v), true, "clamp")[0];
            assert_eq!(got[y * dw + x], want, "pixel {x},{y}");
        }
    }
}

/// `samples/surf_write` (clang-14 from `surf_write.cu`): suld/sust read-modify-write of a
/// 5 x 4 u32 surface plus `.zero` stores past the right edge, on both executors.
#[test]
fn sample_surf_write_updates_the_surface_on_both_executors() {
    let (w, h) = (5usize, 4usize);
    let words: Vec<u32> = (0..w * h).map(|k| 0x100 + 7 * k as u32).collect();
    let dir = scratch("surf_write");
    let img = dir.join("surf.bin");
    std::fs::write(&img, words.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let surf = format!("surf_write_param_0=file:{},fmt=u32,dims={w},{h}", img.display());
    let dump = run_sample(
        "surf_write",
        &["--surface", &surf, "--arg", &format!("i:{w}"), "--arg", &format!("i:{h}"), "--block", "8,4"],
    );
    let got: Vec<u32> = std::fs::read(dump.join("tex:surf_write_param_0.bin"))
        .unwrap()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let mut want = words.clone();
    for y in 0..h - 1 {
        for x in 0..w {
            want[y * w + x] = words[y * w + x].wrapping_mul(3) + (x ^ y) as u32;
        }
    }
    for x in 0..w {
        want[(h - 1) * w + x] = 0x5000 + x as u32;
    }
    assert_eq!(got, want);
}

// ---- fourth slice: `tex.1d` with `.s32` coordinates, `tex.level`, `txq.level`, `suq` ----
// (docs/textures.md §1.6; ptxas 11.8's forms from `tests/data/textures/probe_slice4.ptx`,
// kept here so that the test runs without ptxas.)

/// The fetch moved from `%f5..%f8` to `%r5..%r8`.
const MOVES: &str = "mov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";

/// `tex.1d` with `.s32` coordinates is a 1D texel fetch: `TLDS.LZ ... 1D` (kernel i1d),
/// `TLD.LZ ... 1D` for a mask TLDS cannot name (i1d_xz), `TLD.B.LZ ... 1D` bindless (i1d_b).
#[test]
fn tex_1d_integer_coordinates_are_1d_texel_fetches_on_both_executors() {
    let (t, bytes) = image(6, 1, 1);
    let xs = [0i32, 3, 5, 8, -2];
    let input: Vec<[u32; 4]> = xs.iter().map(|&x| [x as u32, 0, 0, 0]).collect();
    let all = format!("tex.1d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [H, {{%r1}}];\n{MOVES}");
    // y and z read: mask 0x6, which TLDS cannot name.
    let yz = "tex.1d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [H, {%r1}];\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;";
    let cases = [
        (all.as_str(), "%rd1", [true; 4], "TLDS.LZ R, R, R, 0x50, 1D, RGBA"),
        (all.as_str(), "%rd9", [true; 4], "TLD.B.LZ R, R, R, 0x0, 1D, 0xf"),
        (yz, "%rd1", [false, true, true, false], "TLD.LZ R, R, 0x50, 1D, 0x6"),
        (yz, "%rd9", [false, true, true, false], "TLD.B.LZ R, R, R, 0x0, 1D, 0x6"),
    ];
    for (k, (body, h, read, form)) in cases.iter().enumerate() {
        let body = body.replace('H', h);
        let name = format!("i1d-{k}");
        assert_eq!(listing(&name, &body).iter().map(|t| shape(t)).collect::<Vec<_>>(), [*form], "{name}");
        let (out, _) = run_probe(&name, &body, ("--texture fmt=f32x4,dims=6,addr=wrap", &bytes), &input);
        for (q, &x) in xs.iter().enumerate() {
            let texel = t[x.rem_euclid(6) as usize];
            for c in 0..4 {
                let want = if read[c] { texel[c].to_bits() } else { 0 };
                assert_eq!(out[4 * q + c], want, "{name} at x = {x}, component {c}");
            }
        }
    }
}

/// `tex.level` reads level 0, the only level an image has (`exec::image`), whatever the
/// level; ptxas 11.8's forms: `TEXS.LL` 1D (2D at y = 0) and 2D (l1d, l2d, l2d_x),
/// `TEX.LL` for a mask TEXS cannot name (l2d_xz) and for 3D (l3d), `TEX.B.LL` bindless
/// (l2d_b).
#[test]
fn tex_level_fetches_level_0_on_both_executors() {
    let levels = [0.0f32, 1.5, 7.0, -3.0];
    // 2D, linear, mirror: (u, v, level).
    let pts = [(1.3f32, 2.9f32), (4.6, 0.2), (-1.2, 1.5), (6.7, -2.25)];
    let input: Vec<[u32; 4]> =
        pts.iter().zip(levels).map(|(&(u, v), l)| [u.to_bits(), v.to_bits(), l.to_bits(), 0]).collect();
    let all = format!("tex.level.2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [H, {{%f1,%f2}}], %f3;\n{MOVES}");
    let x = "tex.level.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1,%f2}], %f3;\nmov.b32 %r5, %f5;";
    let xz = "tex.level.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1,%f2}], %f3;\nmov.b32 %r5, %f5;\nmov.b32 %r7, %f7;";
    let cases = [
        (all.as_str(), "%rd1", [true; 4], "TEXS.LL R, R, R, R, 0x50, 2D, RGBA"),
        (x, "%rd1", [true, false, false, false], "TEXS.LL RZ, R, R, R, 0x50, 2D, R"),
        (xz, "%rd1", [true, false, true, false], "TEX.LL R, R, R, 0x50, 2D, 0x5"),
        (all.as_str(), "%rd9", [true; 4], "TEX.B.LL R, R, R, 0x0, 2D, 0xf"),
        (xz, "%rd9", [true, false, true, false], "TEX.B.LL R, R, R, 0x0, 2D, 0x5"),
    ];
    level_0_2d("level2d", &cases, &pts, &input);
    // 1D (TEXS.LL 2D with y = 0) and 3D (TEX.LL), point sampling, clamp, bound and bindless.
    let (t1, bytes1) = image(6, 1, 1);
    let us = [0.25f32, 3.5, 5.9, -2.0];
    let input: Vec<[u32; 4]> = us.iter().zip(levels).map(|(u, l)| [u.to_bits(), l.to_bits(), 0, 0]).collect();
    let body = format!("tex.level.1d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [H, {{%f1}}], %f2;\n{MOVES}");
    for (h, form) in [("%rd1", "TEXS.LL R, R, R, R, 0x50, 2D, RGBA"), ("%rd9", "TEX.B.LL R, R, R, 0x0, 2D, 0xf")] {
        let name = format!("level1d{}", &h[1..]);
        let b = body.replace('H', h);
        assert_eq!(listing(&name, &b).iter().map(|t| shape(t)).collect::<Vec<_>>(), [form], "{name}");
        let (out, _) = run_probe(&name, &b, ("--texture fmt=f32x4,dims=6", &bytes1), &input);
        for (q, &u) in us.iter().enumerate() {
            let want = t1[(u.floor() as i64).clamp(0, 5) as usize];
            assert_eq!(floats(&out[4 * q..4 * q + 4]), want, "{name} at {u}");
        }
    }
    let (t3, bytes3) = image(4, 3, 2);
    let pts = [(0.5f32, 0.5f32, 0.5f32), (3.9, 2.1, 1.7), (-1.0, 5.0, 9.0), (2.2, 1.1, 0.0)];
    let input: Vec<[u32; 4]> =
        pts.iter().zip(levels).map(|(p, l)| [p.0.to_bits(), p.1.to_bits(), p.2.to_bits(), l.to_bits()]).collect();
    let body = format!("tex.level.3d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [H, {{%f1,%f2,%f3,%f3}}], %f4;\n{MOVES}");
    for (h, form) in [("%rd1", "TEX.LL R, R, R, 0x50, 3D, 0xf"), ("%rd9", "TEX.B.LL R, R, R, 0x0, 3D, 0xf")] {
        let name = format!("level3d{}", &h[1..]);
        let b = body.replace('H', h);
        assert_eq!(listing(&name, &b).iter().map(|t| shape(t)).collect::<Vec<_>>(), [form], "{name}");
        let (out, _) = run_probe(&name, &b, ("--texture fmt=f32x4,dims=4,3,2", &bytes3), &input);
        for (q, p) in pts.iter().enumerate() {
            let c = |v: f32, n: i64| (v.floor() as i64).clamp(0, n - 1);
            let want = t3[((c(p.2, 2) * 3 + c(p.1, 3)) * 4 + c(p.0, 4)) as usize];
            assert_eq!(floats(&out[4 * q..4 * q + 4]), want, "{name} at {p:?}");
        }
    }
}

/// Runs each 2D case `(body, handle, components read, listing shape)` (`H` in `body`
/// stands for the handle register) as probe `{prefix}-{k}` on the f32x4 image
/// `image(5, 3, 1)`, linear and mirrored, one point of `pts` per thread (`input`): our
/// listing has the one texture instruction `shape`, and on both executors each point
/// reads level 0 (`sample2d`), 0 in the components not read. Shared by `tex.level` and
/// `tex.grad`, which both fetch level 0 (the only level an image has).
fn level_0_2d(prefix: &str, cases: &[(&str, &str, [bool; 4], &str)], pts: &[(f32, f32)], input: &[[u32; 4]]) {
    let (t, bytes) = image(5, 3, 1);
    for (k, (body, h, read, form)) in cases.iter().enumerate() {
        let body = body.replace('H', h);
        let name = format!("{prefix}-{k}");
        assert_eq!(listing(&name, &body).iter().map(|t| shape(t)).collect::<Vec<_>>(), [*form], "{name}");
        let spec = "--texture fmt=f32x4,dims=5,3,filter=linear,addr=mirror";
        let (out, _) = run_probe(&name, &body, (spec, &bytes), input);
        for (q, &p) in pts.iter().enumerate() {
            let want = sample2d(&t, (5, 3), p, true, "mirror");
            for c in 0..4 {
                let w = if read[c] { want[c] } else { 0.0 };
                assert_eq!(f32::from_bits(out[4 * q + c]), w, "{name} at {p:?}, component {c}");
            }
        }
    }
}

/// `tex.grad` samples level 0, the only level an image has (`exec::image`), whatever the
/// gradients; ptxas 11.8's forms (`probe_grad.ptx`, docs/textures.md §1.11): `TXD ... 2D`
/// with the mask of the components read (g2d, g2d_x, g2d_xz), `TXD.B` bindless (g2d_b,
/// g2d_b_y), 1D as 2D at y = 0 (g1d, g1d_b). The gradients differ per lane and between
/// dPdx and dPdy, so an operand read in the wrong order would still sample level 0: the
/// values check the coordinates' order, the listing the operand shape.
#[test]
fn tex_grad_fetches_level_0_on_both_executors() {
    let pts = [(1.3f32, 2.9f32), (4.6, 0.2), (-1.2, 1.5), (6.7, -2.25)];
    let grads = [(0.0f32, 0.0f32), (1.0, 0.5), (8.0, -3.0), (-0.25, 100.0)];
    let input: Vec<[u32; 4]> =
        pts.iter().zip(grads).map(|(&(u, v), (a, b))| [u.to_bits(), v.to_bits(), a.to_bits(), b.to_bits()]).collect();
    let fetch = "tex.grad.2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%f1,%f2}], {%f3,%f4}, {%f4,%f3};";
    let all = format!("{fetch}\n{MOVES}");
    let x = format!("{fetch}\nmov.b32 %r5, %f5;");
    let xz = format!("{fetch}\nmov.b32 %r5, %f5;\nmov.b32 %r7, %f7;");
    let y = format!("{fetch}\nmov.b32 %r6, %f6;");
    let cases = [
        (all.as_str(), "%rd1", [true; 4], "TXD R, R, R, 0x50, 2D, 0xf"),
        (x.as_str(), "%rd1", [true, false, false, false], "TXD R, R, R, 0x50, 2D, 0x1"),
        (xz.as_str(), "%rd1", [true, false, true, false], "TXD R, R, R, 0x50, 2D, 0x5"),
        (all.as_str(), "%rd9", [true; 4], "TXD.B R, R, R, 0x0, 2D, 0xf"),
        (y.as_str(), "%rd9", [false, true, false, false], "TXD.B R, R, R, 0x0, 2D, 0x2"),
    ];
    level_0_2d("grad2d", &cases, &pts, &input);
    // 1D: a 2D TXD at y = 0 (ptxas 11.8 g1d, g1d_b), point sampling, clamp.
    let (t1, bytes1) = image(6, 1, 1);
    let us = [0.25f32, 3.5, 5.9, -2.0];
    let input: Vec<[u32; 4]> =
        us.iter().zip(grads).map(|(u, (a, b))| [u.to_bits(), a.to_bits(), b.to_bits(), 0]).collect();
    let body = format!("tex.grad.1d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [H, {{%f1}}], {{%f2}}, {{%f3}};\n{MOVES}");
    for (h, form) in [("%rd1", "TXD R, R, R, 0x50, 2D, 0xf"), ("%rd9", "TXD.B R, R, R, 0x0, 2D, 0xf")] {
        let name = format!("grad1d{}", &h[1..]);
        let b = body.replace('H', h);
        assert_eq!(listing(&name, &b).iter().map(|t| shape(t)).collect::<Vec<_>>(), [form], "{name}");
        let (out, _) = run_probe(&name, &b, ("--texture fmt=f32x4,dims=6", &bytes1), &input);
        for (q, &u) in us.iter().enumerate() {
            let want = t1[(u.floor() as i64).clamp(0, 5) as usize];
            assert_eq!(floats(&out[4 * q..4 * q + 4]), want, "{name} at {u}");
        }
    }
}

/// `txq.level` passes its level to `TXQ` (`Ra`; bindless the pair `{handle, level}`) and
/// reads level 0's size; `suq.width/height` are `TXQ` with a zero level (ptxas 11.8 kernels
/// txql, txql_b, suq, suq_b).
#[test]
fn txq_level_and_suq_on_both_executors() {
    let (_, bytes) = image(4, 3, 2);
    let body =
        "txq.level.width.b32 %r5, [H], %r1;\ntxq.level.height.b32 %r6, [H], %r1;\ntxq.level.depth.b32 %r7, [H], %r1;";
    let input = [[0u32; 4], [1, 0, 0, 0], [3, 0, 0, 0]];
    for (h, form) in
        [("%rd1", "TXQ R, R, TEX_HEADER_DIMENSION, 0x50, 0x1"), ("%rd9", "TXQ.B R, R, TEX_HEADER_DIMENSION, 0x0, 0x1")]
    {
        let name = format!("txql{}", &h[1..]);
        let b = body.replace('H', h);
        let texts = listing_of(&name, &b, "TXQ");
        assert_eq!(texts.first().map(|t| shape(t)).as_deref(), Some(form), "{name}: {texts:?}");
        // The level is the query's `Ra` (bound) or the register after the handle
        // (bindless), the input word %r1: never `RZ`.
        assert!(texts.iter().all(|t| !t.contains("RZ")), "{name}: {texts:?}");
        let (out, _) = run_probe(&name, &b, ("--texture fmt=f32x4,dims=4,3,2", &bytes), &input);
        assert_eq!(out, [4, 3, 2, 0].repeat(3), "{name}");
    }
    let words: Vec<u8> = (0..12u32).flat_map(|w| w.to_le_bytes()).collect();
    let body = "suq.width.b32 %r5, [H];\nsuq.height.b32 %r6, [H];";
    for (h, form) in
        [("%rd1", "TXQ R, R, TEX_HEADER_DIMENSION, 0x50, 0x1"), ("%rd9", "TXQ.B R, R, TEX_HEADER_DIMENSION, 0x0, 0x1")]
    {
        let name = format!("suq{}", &h[1..]);
        let b = body.replace('H', h);
        let texts = listing_of(&name, &b, "TXQ");
        assert_eq!(texts.first().map(|t| shape(t)).as_deref(), Some(form), "{name}: {texts:?}");
        let (out, _) = run_probe(&name, &b, ("--surface fmt=u32,dims=4,3", &words), &[[0; 4]]);
        assert_eq!(out, [4, 3, 0, 0], "{name}");
    }
}

/// The lines of our listing of `probe(body)` whose opcode starts with `prefix`.
fn listing_of(name: &str, body: &str, prefix: &str) -> Vec<String> {
    let p = write(name, &probe(body));
    let o = ptx2sass(&["compile", "--verify", p.to_str().unwrap()]);
    assert!(o.status.success(), "{body}\n{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split("*/").nth(1))
        .map(|t| t.split(['&', '?', ';']).next().unwrap_or("").trim().to_string())
        .filter(|t| t.starts_with(prefix))
        .collect()
}

/// Reference surface access (`exec::image`): the byte offset of an access of `n` bytes at
/// byte `x`, row `y`, plane `z` of a `row` x `h` x `d` surface under `mode`, or `None`
/// when it reads zero / writes nothing (`.zero` outside).
fn surface_at(p: (i64, i64, i64), n: i64, (row, h, d): (i64, i64, i64), mode: &str) -> Option<usize> {
    let (x, y, z) = p;
    let fits = (0..=row - n).contains(&x) && (0..h).contains(&y) && (0..d).contains(&z);
    let (x, y, z) = match (fits, mode) {
        (true, _) => (x, y, z),
        (false, "clamp") => (x.clamp(0, row - n) / n * n, y.clamp(0, h - 1), z.clamp(0, d - 1)),
        (false, "zero") => return None,
        _ => panic!("{p:?} is outside and traps"),
    };
    Some(((z * h + y) * row + x) as usize)
}

/// Vector, 64-bit and sub-word surface loads and stores, 1D/2D/3D and arrays, in each out-of-range
/// mode, bound and bindless, on both executors against the reference (ptxas 11.8's forms:
/// `probe_surfaces.ptx`, checked in `tests/textures.rs`).
#[test]
fn surface_sizes_and_3d_on_both_executors() {
    // A 4 x 3 x 2 surface of u32 texels (rows of 16 bytes), bytes 7k + 3.
    let bytes: Vec<u8> = (0..96u32).map(|k| (7 * k + 3) as u8).collect();
    let dims = (16, 3, 2);
    // (body, access bytes, geometry rank, result words)
    let loads: &[(&str, i64, usize, usize)] = &[
        ("suld.b.3d.v4.b32M {%r5,%r6,%r7,%r8}, [H, {%r1,%r2,%r3,%r3}];", 16, 3, 4),
        ("suld.b.2d.v2.b32M {%r5,%r6}, [H, {%r1,%r2}];", 8, 2, 2),
        ("suld.b.1d.b64M {%rd10}, [H, {%r1}];\nmov.b64 {%r5,%r6}, %rd10;", 8, 1, 2),
        ("suld.b.3d.b32M {%r5}, [H, {%r1,%r2,%r3,%r3}];", 4, 3, 1),
        ("suld.b.2d.b16M {%r5}, [H, {%r1,%r2}];", 2, 2, 1),
        ("suld.b.2d.b8M {%r5}, [H, {%r1,%r2}];", 1, 2, 1),
        // Arrays: the index (first in PTX) is the row (`.a1d`) or the plane (`.a2d`).
        ("suld.b.a1d.b32M {%r5}, [H, {%r2,%r1}];", 4, 2, 1),
        ("suld.b.a2d.v2.b32M {%r5,%r6}, [H, {%r3,%r1,%r2,%r2}];", 8, 3, 2),
    ];
    for (k, &(body, n, rank, words)) in loads.iter().enumerate() {
        for (mode, sfx) in [("clamp", ".clamp"), ("zero", ".zero"), ("trap", ".trap")] {
            let mut pts = vec![(0i64, 0i64, 0i64), (16 - n, 2, 1), (8 / n * n, 1, 0)];
            if mode != "trap" {
                pts.extend([(16, 1, 0), (-n, 5, 3), (16 - n, -1, 2)]);
            }
            let input: Vec<[u32; 4]> = pts.iter().map(|p| [p.0 as u32, p.1 as u32, p.2 as u32, 0]).collect();
            for h in ["%rd1", "%rd9"] {
                let b = body.replace('M', sfx).replace('H', h);
                let name = format!("suld{k}-{mode}-{}", &h[1..]);
                let (out, after) = run_probe(&name, &b, ("--surface fmt=u32,dims=4,3,2", &bytes), &input);
                assert_eq!(after, bytes, "{name}: a load changed the surface");
                for (q, p) in pts.iter().enumerate() {
                    // Coordinates beyond the access's geometry are 0.
                    let c = [p.0, p.1, p.2];
                    let p3 = (c[0], if rank > 1 { c[1] } else { 0 }, if rank > 2 { c[2] } else { 0 });
                    let at = surface_at(p3, n, dims, mode);
                    let le = |o: usize, m: usize| (0..m).fold(0u32, |v, j| v | u32::from(bytes[o + j]) << (8 * j));
                    for j in 0..4 {
                        let want = match at {
                            Some(o) if j < words => le(o + 4 * j, n.min(4) as usize),
                            _ => 0,
                        };
                        assert_eq!(out[4 * q + j], want, "{name}: {b} at {p:?}, word {j}");
                    }
                }
            }
        }
    }
    // Stores: thread q stores at its own place; `.zero` drops the ones outside.
    let stores: &[(&str, i64, usize)] = &[
        ("sust.b.3d.v2.b32M [H, {%r1,%r2,%r3,%r3}], {%r4,%r5};", 8, 3),
        ("sust.b.2d.b64M [H, {%r1,%r2}], {%rd10};", 8, 2),
        ("sust.b.2d.b16M [H, {%r1,%r2}], {%r4};", 2, 2),
        ("sust.b.1d.b8M [H, {%r1}], {%r4};", 1, 1),
        ("sust.b.a2d.v2.b32M [H, {%r3,%r1,%r2,%r2}], {%r4,%r5};", 8, 3),
        ("sust.b.a1d.b16M [H, {%r2,%r1}], {%r4};", 2, 2),
    ];
    for (k, &(body, n, rank)) in stores.iter().enumerate() {
        for (mode, sfx) in [("zero", ".zero"), ("trap", ".trap")] {
            let mut pts = vec![(0i64, 0i64, 0i64, 0x1122_3344u32), (16 - n, 2, 1, 0x5566_7788), (8, 1, 1, 0x99aa_bbcc)];
            if mode == "zero" {
                pts.extend([(16, 1, 0, 0xdead_beef), (-n, 0, 0, 0xfeed_f00d)]);
            }
            let input: Vec<[u32; 4]> = pts.iter().map(|p| [p.0 as u32, p.1 as u32, p.2 as u32, p.3]).collect();
            let pre = "mov.b32 %r5, %r4;\nxor.b32 %r5, %r5, -1;\nmov.b64 %rd10, {%r4,%r5};\n";
            for h in ["%rd1", "%rd9"] {
                let b = format!("{pre}{}", body.replace('M', sfx).replace('H', h));
                let name = format!("sust{k}-{mode}-{}", &h[1..]);
                let (_, after) = run_probe(&name, &b, ("--surface fmt=u32,dims=4,3,2", &bytes), &input);
                let mut want = bytes.clone();
                for p in &pts {
                    let p3 = (p.0, if rank > 1 { p.1 } else { 0 }, if rank > 2 { p.2 } else { 0 });
                    let Some(o) = surface_at(p3, n, dims, mode) else { continue };
                    let v = u64::from(p.3) | u64::from(!p.3) << 32;
                    for j in 0..n as usize {
                        want[o + j] = (v >> (8 * j)) as u8;
                    }
                }
                assert_eq!(after, want, "{name}: {b}");
            }
        }
    }
}

/// `tex.a1d` / `tex.a2d` (`.f32` and `.s32` coordinates, bound and bindless, all or some
/// components): the index (first, clamped to 16 bits by `I2I.U16.U32.SAT` and then to the
/// layers, `exec::image`) picks a layer along the image's last axis, the other
/// coordinates are sampled in it; forms as ptxas 11.8's (`probe_arrays.ptx` kernels a1d,
/// a1d_x, a1d_i, a1d_b, a2d, a2d_xz, a2d_i, a2d_b).
#[test]
fn array_fetches_pick_a_layer_on_both_executors() {
    let spec1 = "--texture fmt=f32x4,dims=5,3,filter=linear,addr=wrap";
    let spec2 = "--texture fmt=f32x4,dims=4,3,3,filter=linear,addr=wrap";
    // (index, x, y): in range, beyond the layers, beyond 16 bits, wrapped coordinates.
    let pts = [(1u32, 1.3f32, 2.9f32), (7, 4.6, 0.2), (70000, -1.2, 1.5), (0, 6.7, -2.25)];
    let layer = |i: u32| i.min(2) as usize;
    let xz = [true, false, true, false];
    // a1d: a 5 x 3 image holds 3 layers of 5 texels (layer L = row L).
    let (t1, b1) = image(5, 3, 1);
    let a1d = format!("tex.a1d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [H, {{%r1,%f2}}];\n{MOVES}");
    let a1d_x = "tex.a1d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%r1,%f2}];\nmov.b32 %r5, %f5;";
    let a1d_i = format!("tex.a1d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [H, {{%r1,%r3}}];\n{MOVES}");
    // a2d: a 4 x 3 x 3 image holds 3 layers of 4 x 3 texels (layer L = plane L).
    let (t2, b2) = image(4, 3, 3);
    let a2d = format!("tex.a2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [H, {{%r1,%f2,%f3,%f3}}];\n{MOVES}");
    let a2d_xz = "tex.a2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%r1,%f2,%f3,%f3}];\nmov.b32 %r5, %f5;\nmov.b32 %r7, %f7;";
    let a2d_i = format!("tex.a2d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [H, {{%r1,%r3,%r4,%r4}}];\n{MOVES}");
    let all = [true; 4];
    let x = [true, false, false, false];
    // (body, handle, 2D, integer, components read, ptxas's form)
    let cases = [
        (a1d.as_str(), "%rd1", false, false, all, "TEX R, R, 0x50, ARRAY_1D, 0xf"),
        (a1d_x, "%rd1", false, false, x, "TEX R, R, 0x50, ARRAY_1D, 0x1"),
        (a1d_i.as_str(), "%rd1", false, true, all, "TLD.LZ R, R, 0x50, ARRAY_1D, 0xf"),
        (a1d.as_str(), "%rd9", false, false, all, "TEX.B R, R, R, 0x0, ARRAY_1D, 0xf"),
        (a2d.as_str(), "%rd1", true, false, all, "TEXS R, R, R, R, 0x50, ARRAY_2D, RGBA"),
        (a2d_xz, "%rd1", true, false, xz, "TEX R, R, 0x50, ARRAY_2D, 0x5"),
        (a2d_i.as_str(), "%rd1", true, true, all, "TLDS.LZ R, R, R, R, 0x50, ARRAY_2D, RGBA"),
        (a2d.as_str(), "%rd9", true, false, all, "TEX.B R, R, R, 0x0, ARRAY_2D, 0xf"),
    ];
    for (k, (body, h, two, int, read, form)) in cases.iter().enumerate() {
        let body = body.replace('H', h);
        let name = format!("array-{k}");
        assert_eq!(listing(&name, &body).iter().map(|t| shape(t)).collect::<Vec<_>>(), [*form], "{name}");
        // Integer coordinates: x = floor(u), y = floor(v) in %r3, %r4.
        let input: Vec<[u32; 4]> = pts
            .iter()
            .map(|&(i, u, v)| {
                if *int {
                    [i, 0, u.floor() as i32 as u32, v.floor() as i32 as u32]
                } else {
                    [i, u.to_bits(), v.to_bits(), 0]
                }
            })
            .collect();
        let (spec, bytes) = if *two { (spec2, &b2) } else { (spec1, &b1) };
        let (out, _) = run_probe(&name, &body, (spec, bytes), &input);
        for (q, &(i, u, v)) in pts.iter().enumerate() {
            let l = layer(i);
            let (slice, dims, p) = if *two {
                (&t2[12 * l..12 * l + 12], (4, 3), (u, v))
            } else {
                (&t1[5 * l..5 * l + 5], (5, 1), (u, 0.5))
            };
            // A texel fetch is a point sample at the texel's centre.
            let p = if *int { (p.0.floor() + 0.5, if *two { p.1.floor() + 0.5 } else { 0.5 }) } else { p };
            let want = sample2d(slice, dims, p, !*int, "wrap");
            for c in 0..4 {
                let w = if read[c] { want[c] } else { 0.0 };
                assert_eq!(f32::from_bits(out[4 * q + c]), w, "{name} at {:?}, component {c}", pts[q]);
            }
        }
    }
}

/// Copies the four f32 results to the stored words.
const MOVS: &str = "mov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";

// Panics found while putting `exec::{ptx,sim}::tex` under the no-panic lints (issue 20,
// docs/fuzzing.md "No-panic discipline"), one test each, failing (panicking) without the fix.

/// A linear fetch or a gather at a coordinate beyond 2^63 texels: `floor(u) as i64`
/// saturates to `i64::MAX` and the neighbour `i + 1` overflowed (a panic on both
/// executors in debug builds). Clamped, every texel of the footprint is the last column;
/// the weights are 0 (`u - 0.5 - floor(u - 0.5) = 0` at 1e30), so the fetch is that texel.
#[test]
fn linear_fetch_and_gather_far_beyond_the_image() {
    let (t, bytes) = image(5, 3, 1);
    let at = |x: usize, y: usize| t[5 * y + x];
    let input = [[0, 1e30f32.to_bits(), 0.5f32.to_bits(), 0]];
    for (name, handle) in [("far_bound", "%rd1"), ("far_bindless", "%rd9")] {
        let body = format!("tex.2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{handle}, {{%f2,%f3}}];\n{MOVS}");
        let (out, _) = run_probe(name, &body, ("--texture fmt=f32x4,dims=5,3,filter=linear", &bytes), &input);
        let got: Vec<f32> = out.iter().map(|&w| f32::from_bits(w)).collect();
        assert_eq!(got, at(4, 0), "{name}");
    }
    // tld4.r: texels (i, j+1), (i+1, j+1), (i+1, j), (i, j) with i clamped to 4, j = 0.
    let body = format!("tld4.r.2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%f2,%f3}}];\n{MOVS}");
    let (out, _) = run_probe("far_gather", &body, ("--texture fmt=f32x4,dims=5,3", &bytes), &input);
    let got: Vec<f32> = out.iter().map(|&w| f32::from_bits(w)).collect();
    assert_eq!(got, [at(4, 1)[0], at(4, 1)[0], at(4, 0)[0], at(4, 0)[0]]);
}

/// `suld.b.1d.v2.b32.clamp` (8 bytes) out of range on a surface whose rows are 4 bytes:
/// there is no position to clamp to, and the interpreter's `i64::clamp(0, row - 8)`
/// panicked (min > max). Both executors now report it (the simulator used to read the 8
/// bytes at x = 0, past the row).
#[test]
fn surface_clamp_wider_than_a_row() {
    let body = "suld.b.1d.v2.b32.clamp {%r5,%r6}, [%rd1, {%r2}];";
    let p = write("wide_clamp", &probe(body));
    let dir = scratch("wide_clamp");
    let img = dir.join("img.bin");
    std::fs::write(&img, [0u8; 8]).unwrap();
    let inp = dir.join("in.bin");
    std::fs::write(&inp, [0u32, 8, 0, 0].iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let spec = format!("t=file:{},fmt=u32,dims=1,2", img.display());
    for exec in ["ptx", "sim"] {
        let o = ptx2sass(&[
            "run",
            "--kernel",
            "k",
            p.to_str().unwrap(),
            "--surface",
            &spec,
            "--arg",
            "zeros:16",
            "--arg",
            &format!("file:{}", inp.display()),
            "--block",
            "1",
            "--exec",
            exec,
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("wider than a row"), "{exec}: {err}");
        assert!(!err.contains("panicked"), "{exec}: {err}");
    }
}
