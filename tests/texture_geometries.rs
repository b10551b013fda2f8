//! Texture-fetch geometries and levels of detail lowered after the arrays (issue 18,
//! docs/textures.md §1.12): `tex.level` with `.s32` coordinates (`TLD.LL.CL`), `tex.level`
//! of arrays (`TEX.LL ... ARRAY_1D/2D`), `tex.grad` of arrays (`TXD ... ARRAY_1D/2D`, x
//! first and the index last) and with `.s32` coordinates (the integer bits read as
//! floats), `tld4` of `.a2d` (`TLD4 ... ARRAY_2D`).
//!
//! * `tex.2dms` (`TLDS.LZ.MS`, `TLD.LZ.MS`, `TLD.B.LZ.MS`) reads one sample of a
//!   multisample image (`--texture ...,samples=N`, §1.13).
//! * `tex.cube` / `tex.acube` (the direction divided by its largest magnitude, then `TEXS`/
//!   `TEX ... CUBE`, `TEX ... ARRAY_CUBE`) sample the face the direction points at of a
//!   cube map (`--texture ...,dims=W,W,6N,cube`, §1.13).
//! * Each form runs on both executors with `--compare` against values computed here (an
//!   image has one level, so every level and gradient reads level 0, `exec::image`).
//! * Our listing names ptxas 11.8's opcode, mask and operand shape for every kernel of
//!   `tests/data/textures/probe_geometries.ptx` (the expectations are kept here, so the
//!   test runs without ptxas; with ptxas installed they are checked against it too), and
//!   ptxas's words for these forms decode as nvdisasm prints them and encode back.

#[path = "common/nvidia.rs"]
mod nvidia;
#[path = "common/tex.rs"]
mod tex;

use std::process::Command;
use tex::*;

/// Copies the four f32 results to the stored words.
const MOVES: &str = "mov.b32 %r5, %f5;\nmov.b32 %r6, %f6;\nmov.b32 %r7, %f7;\nmov.b32 %r8, %f8;";
const ALL: [bool; 4] = [true; 4];
const X: [bool; 4] = [true, false, false, false];
const XZ: [bool; 4] = [true, false, true, false];
const Y: [bool; 4] = [false, true, false, false];

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

/// The texture instructions of a `cuobjdump -sass` or ptx2sass listing per function, in
/// function order sorted by name: opcode with `.P`/`.T` (reuse flags) dropped, registers
/// erased.
fn texture_lines(listing: &str) -> Vec<(String, Vec<String>)> {
    let ops = ["TEXS", "TLDS", "TLD4S", "TEX", "TLD", "TLD4", "TXD", "TXQ", "SULD", "SUST"];
    let mut out: Vec<(String, Vec<String>)> = vec![];
    for line in listing.lines() {
        if let Some(f) = line.split("Function : ").nth(1) {
            out.push((f.trim().to_string(), vec![]));
            continue;
        }
        let Some(body) = line.split("*/").nth(1) else { continue };
        let text = body.split(['&', '?', ';', '}']).next().unwrap_or("").trim();
        if !ops.contains(&text.split([' ', '.']).next().unwrap_or("")) {
            continue;
        }
        let (head, rest) = text.split_once(' ').unwrap_or((text, ""));
        let head: Vec<&str> = head.split('.').filter(|m| *m != "P" && *m != "T").collect();
        if let Some(last) = out.last_mut() {
            last.1.push(shape(&format!("{} {rest}", head.join("."))));
        }
    }
    out.sort();
    out
}

/// The texture lines of our listing of `probe(body)`, registers erased.
fn listing(name: &str, body: &str) -> Vec<String> {
    let p = write(name, &probe(body));
    let o = ptx2sass(&["compile", "--verify", p.to_str().unwrap()]);
    assert!(o.status.success(), "{body}\n{}", String::from_utf8_lossy(&o.stderr));
    texture_lines(&String::from_utf8_lossy(&o.stdout)).into_iter().flat_map(|f| f.1).collect()
}

/// One fetch: compiles to ptxas's `form`, runs on both executors with `--compare`, and
/// the components `read` equal `want` (the others stay 0).
#[allow(clippy::too_many_arguments)]
fn check(
    name: &str,
    body: &str,
    spec: &str,
    bytes: &[u8],
    input: &[[u32; 4]],
    form: &str,
    read: [bool; 4],
    want: &[[f32; 4]],
) {
    assert_eq!(listing(name, body), [form], "{name}");
    let (out, _) = run_probe(name, body, (spec, bytes), input);
    for (q, w) in want.iter().enumerate() {
        for c in 0..4 {
            let w = if read[c] { w[c] } else { 0.0 };
            assert_eq!(f32::from_bits(out[4 * q + c]), w, "{name}: input {:?}, component {c}", input[q]);
        }
    }
}

/// The layer an array index reads of `n`: `min(index, n - 1)` (`exec::image`; SASS clamps
/// it to 16 bits first, `I2I.U16.U32.SAT`).
fn layer(index: u32, n: usize) -> usize {
    (index as usize).min(n - 1)
}

/// (index, u, v) of the array fetches: in range, beyond the layers, beyond 16 bits,
/// addressed coordinates.
const ARRAY_PTS: [(u32, f32, f32); 4] = [(1, 1.3, 2.9), (7, 4.6, 0.2), (70000, -1.2, 1.5), (0, 6.7, -2.25)];

/// `tex.level` with `.s32` coordinates is a texel fetch at level 0 whatever the level:
/// `TLD.LL.CL` 1D, 2D (all, x and z read, bindless), 3D and `.a2d` (ptxas 11.8 kernels li1d,
/// li2d, li2d_xz, li2d_b, li3d, lia2d).
#[test]
fn level_with_integer_coordinates_fetches_texels_on_both_executors() {
    // 1D, wrap: (x, level).
    let (t1, b1) = image(6, 1, 1);
    let xs = [(2i32, 0i32), (7, 3), (-1, 1), (3, 9)];
    let input: Vec<[u32; 4]> = xs.iter().map(|&(x, l)| [x as u32, l as u32, 0, 0]).collect();
    let want: Vec<[f32; 4]> = xs.iter().map(|&(x, _)| t1[address(x as i64, 6, "wrap").unwrap() as usize]).collect();
    let body = format!("tex.level.1d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%r1}}], %r2;\n{MOVES}");
    let spec = "--texture fmt=f32x4,dims=6,addr=wrap";
    check("li1d", &body, spec, &b1, &input, "TLD.LL.CL R, R, R, 0x50, 1D, 0xf", ALL, &want);
    // 2D, mirror: (x, y, level).
    let (t2, b2) = image(5, 3, 1);
    let pts = [(1i32, 2i32, 0i32), (6, -1, 2), (-3, 4, 1), (4, 0, 7)];
    let input: Vec<[u32; 4]> = pts.iter().map(|&(x, y, l)| [x as u32, y as u32, l as u32, 0]).collect();
    let want: Vec<[f32; 4]> = pts
        .iter()
        .map(|&(x, y, _)| {
            let (x, y) = (address(x as i64, 5, "mirror").unwrap(), address(y as i64, 3, "mirror").unwrap());
            t2[(5 * y + x) as usize]
        })
        .collect();
    let spec = "--texture fmt=f32x4,dims=5,3,addr=mirror";
    let fetch = "tex.level.2d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [H, {%r1,%r2}], %r3;";
    let all = format!("{fetch}\n{MOVES}");
    let xz = format!("{fetch}\nmov.b32 %r5, %f5;\nmov.b32 %r7, %f7;");
    let cases = [
        ("li2d", &all, "%rd1", ALL, "TLD.LL.CL R, R, R, 0x50, 2D, 0xf"),
        ("li2d_xz", &xz, "%rd1", XZ, "TLD.LL.CL R, R, R, 0x50, 2D, 0x5"),
        ("li2d_b", &all, "%rd9", ALL, "TLD.B.LL.CL R, R, R, 0x0, 2D, 0xf"),
    ];
    for (name, body, h, read, form) in cases {
        check(name, &body.replace('H', h), spec, &b2, &input, form, read, &want);
    }
    // 3D, clamp: (x, y, z, level).
    let (t3, b3) = image(4, 3, 2);
    let pts = [(1i32, 2i32, 1i32, 0i32), (5, -1, 0, 4), (-2, 1, 3, 1), (3, 0, -1, 2)];
    let input: Vec<[u32; 4]> = pts.iter().map(|&(x, y, z, l)| [x as u32, y as u32, z as u32, l as u32]).collect();
    let want: Vec<[f32; 4]> =
        pts.iter().map(|&(x, y, z, _)| t3[(12 * z.clamp(0, 1) + 4 * y.clamp(0, 2) + x.clamp(0, 3)) as usize]).collect();
    let body = format!("tex.level.3d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%r1,%r2,%r3,%r3}}], %r4;\n{MOVES}");
    let spec = "--texture fmt=f32x4,dims=4,3,2";
    check("li3d", &body, spec, &b3, &input, "TLD.LL.CL R, R, R, 0x50, 3D, 0xf", ALL, &want);
    // `.a2d`, wrap: (index, x, y, level); a 4 x 3 x 3 image holds 3 layers of 4 x 3.
    let (ta, ba) = image(4, 3, 3);
    let pts = [(1u32, 2i32, 1i32, 0i32), (7, 5, -1, 3), (70000, -1, 4, 1), (0, 3, 2, 5)];
    let input: Vec<[u32; 4]> = pts.iter().map(|&(i, x, y, l)| [i, x as u32, y as u32, l as u32]).collect();
    let want: Vec<[f32; 4]> = pts
        .iter()
        .map(|&(i, x, y, _)| {
            let (x, y) = (address(x as i64, 4, "wrap").unwrap(), address(y as i64, 3, "wrap").unwrap());
            ta[12 * layer(i, 3) + (4 * y + x) as usize]
        })
        .collect();
    let body = format!("tex.level.a2d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%r1,%r2,%r3,%r3}}], %r4;\n{MOVES}");
    let spec = "--texture fmt=f32x4,dims=4,3,3,addr=wrap";
    check("lia2d", &body, spec, &ba, &input, "TLD.LL.CL R, R, R, 0x50, ARRAY_2D, 0xf", ALL, &want);
}

/// The expected values of an array fetch at `ARRAY_PTS` (linear, wrap): `.a1d` of the
/// 5 x 3 image (3 layers of 5 texels), `.a2d` of the 4 x 3 x 3 one.
fn array_want(two: bool) -> Vec<[f32; 4]> {
    let (t1, _) = image(5, 3, 1);
    let (t2, _) = image(4, 3, 3);
    ARRAY_PTS
        .iter()
        .map(|&(i, u, v)| {
            let l = layer(i, 3);
            if two {
                sample2d(&t2[12 * l..12 * l + 12], (4, 3), (u, v), true, "wrap")
            } else {
                sample2d(&t1[5 * l..5 * l + 5], (5, 1), (u, 0.5), true, "wrap")
            }
        })
        .collect()
}

/// `tex.level` and `tex.grad` of `.a1d`/`.a2d` (`.f32` coordinates): the index picks the
/// layer, the level or gradients read level 0, the other coordinates are sampled in it.
/// ptxas 11.8: `TEX.LL`/`TEX.B.LL ... ARRAY_1D/2D` (`{index, x(, y)}` in `Ra`, the level
/// in `Rb`; la1d, la1d_b, la2d, la2d_xz, la2d_b) and `TXD`/`TXD.B ... ARRAY_1D/2D` (`{x(,
/// y), index}`; ga1d, ga1d_b, ga2d, ga2d_x, ga2d_b).
#[test]
fn level_and_gradients_of_arrays_on_both_executors() {
    let spec1 = "--texture fmt=f32x4,dims=5,3,filter=linear,addr=wrap";
    let spec2 = "--texture fmt=f32x4,dims=4,3,3,filter=linear,addr=wrap";
    let (_, b1) = image(5, 3, 1);
    let (_, b2) = image(4, 3, 3);
    // (index, u, v, level or gradient)
    let input: Vec<[u32; 4]> = ARRAY_PTS
        .iter()
        .zip([0.0f32, 2.5, -1.0, 9.0])
        .map(|(&(i, u, v), g)| [i, u.to_bits(), v.to_bits(), g.to_bits()])
        .collect();
    let la1d = "tex.level.a1d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%r1,%f2}], %f4;";
    let la2d = "tex.level.a2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%r1,%f2,%f3,%f3}], %f4;";
    let ga1d = "tex.grad.a1d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%r1,%f2}], {%f4}, {%f3};";
    let ga2d = "tex.grad.a2d.v4.f32.f32 {%f5,%f6,%f7,%f8}, [H, {%r1,%f2,%f3,%f3}], {%f4,%f3}, {%f3,%f4};";
    let xz = "mov.b32 %r5, %f5;\nmov.b32 %r7, %f7;";
    let x = "mov.b32 %r5, %f5;";
    // (name, fetch, moves, handle, 2D, components read, ptxas's form)
    let cases = [
        ("la1d", la1d, MOVES, "%rd1", false, ALL, "TEX.LL R, R, R, 0x50, ARRAY_1D, 0xf"),
        ("la1d_b", la1d, MOVES, "%rd9", false, ALL, "TEX.B.LL R, R, R, 0x0, ARRAY_1D, 0xf"),
        ("la2d", la2d, MOVES, "%rd1", true, ALL, "TEX.LL R, R, R, 0x50, ARRAY_2D, 0xf"),
        ("la2d_xz", la2d, xz, "%rd1", true, XZ, "TEX.LL R, R, R, 0x50, ARRAY_2D, 0x5"),
        ("la2d_b", la2d, MOVES, "%rd9", true, ALL, "TEX.B.LL R, R, R, 0x0, ARRAY_2D, 0xf"),
        ("ga1d", ga1d, MOVES, "%rd1", false, ALL, "TXD R, R, R, 0x50, ARRAY_1D, 0xf"),
        ("ga1d_b", ga1d, MOVES, "%rd9", false, ALL, "TXD.B R, R, R, 0x0, ARRAY_1D, 0xf"),
        ("ga2d", ga2d, MOVES, "%rd1", true, ALL, "TXD R, R, R, 0x50, ARRAY_2D, 0xf"),
        ("ga2d_x", ga2d, x, "%rd1", true, X, "TXD R, R, R, 0x50, ARRAY_2D, 0x1"),
        ("ga2d_b", ga2d, MOVES, "%rd9", true, ALL, "TXD.B R, R, R, 0x0, ARRAY_2D, 0xf"),
    ];
    for (name, fetch, moves, h, two, read, form) in cases {
        let body = format!("{}\n{moves}", fetch.replace('H', h));
        let (spec, bytes) = if two { (spec2, &b2) } else { (spec1, &b1) };
        check(name, &body, spec, bytes, &input, form, read, &array_want(two));
    }
}

/// `tex.grad` with `.s32` coordinates: ptxas 11.8 passes the integer registers to `TXD`
/// unconverted, so the hardware reads their bits as floats (`TXD ... 1D` with the
/// gradient pair for 1D, `TXD ... 2D`, `TXD.B`, `TXD ... ARRAY_1D`; gi1d, gi2d, gi2d_b,
/// gia1d). Both executors do the same: the coordinate words are sampled as `.f32` ones.
#[test]
fn gradients_with_integer_coordinates_read_their_bits_as_floats_on_both_executors() {
    // Integers whose bits are the floats 1.5, 4.25, 7.0 and a denormal (3).
    let ints = [1.5f32.to_bits(), 4.25f32.to_bits(), 7.0f32.to_bits(), 3];
    let ys = [2.75f32.to_bits(), 0.5f32.to_bits(), 5, (-1.25f32).to_bits()];
    let input: Vec<[u32; 4]> = ints.iter().zip(ys).map(|(&x, y)| [x, y, 1.0f32.to_bits(), 0.5f32.to_bits()]).collect();
    let f = |w: u32| f32::from_bits(w);
    let (t1, b1) = image(6, 1, 1);
    let want1: Vec<[f32; 4]> = ints.iter().map(|&x| sample2d(&t1, (6, 1), (f(x), 0.5), true, "wrap")).collect();
    let body = format!("tex.grad.1d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%r1}}], {{%f3}}, {{%f4}};\n{MOVES}");
    let spec = "--texture fmt=f32x4,dims=6,filter=linear,addr=wrap";
    check("gi1d", &body, spec, &b1, &input, "TXD R, R, R, 0x50, 1D, 0xf", ALL, &want1);
    let (t2, b2) = image(5, 3, 1);
    let want2: Vec<[f32; 4]> =
        ints.iter().zip(ys).map(|(&x, y)| sample2d(&t2, (5, 3), (f(x), f(y)), true, "wrap")).collect();
    let fetch = "tex.grad.2d.v4.f32.s32 {%f5,%f6,%f7,%f8}, [H, {%r1,%r2}], {%f3,%f4}, {%f4,%f3};";
    let spec = "--texture fmt=f32x4,dims=5,3,filter=linear,addr=wrap";
    for (name, h, form) in
        [("gi2d", "%rd1", "TXD R, R, R, 0x50, 2D, 0xf"), ("gi2d_b", "%rd9", "TXD.B R, R, R, 0x0, 2D, 0xf")]
    {
        let body = format!("{}\n{MOVES}", fetch.replace('H', h));
        check(name, &body, spec, &b2, &input, form, ALL, &want2);
    }
    // `.a1d`: the index stays an integer (layer), x's bits are read as a float.
    let (ta, ba) = image(5, 3, 1);
    let input: Vec<[u32; 4]> = ints.iter().zip([0u32, 2, 9, 1]).map(|(&x, i)| [i, x, 0, 0]).collect();
    let want: Vec<[f32; 4]> = input
        .iter()
        .map(|&[i, x, _, _]| {
            let l = layer(i, 3);
            sample2d(&ta[5 * l..5 * l + 5], (5, 1), (f(x), 0.5), true, "wrap")
        })
        .collect();
    let body = format!("tex.grad.a1d.v4.f32.s32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%r1,%r2}}], {{%f3}}, {{%f4}};\n{MOVES}");
    let spec = "--texture fmt=f32x4,dims=5,3,filter=linear,addr=wrap";
    check("gia1d", &body, spec, &ba, &input, "TXD R, R, R, 0x50, ARRAY_1D, 0xf", ALL, &want);
}

/// `tld4.{r,g,a}.a2d`: the four texels of the bilinear footprint in the layer the index
/// picks, in the order `T[i,j+1], T[i+1,j+1], T[i+1,j], T[i,j]` (`exec::image`); ptxas
/// 11.8 `TLD4.R ... ARRAY_2D, 0xf` (no `TLD4S` for arrays), `TLD4.G ... 0x2` when only y is
/// read, `TLD4.A.B` bindless (t4a2d, t4a2d_y, t4a2d_b).
#[test]
fn gathers_of_2d_arrays_on_both_executors() {
    let (t, bytes) = image(4, 3, 3);
    let spec = "--texture fmt=f32x4,dims=4,3,3,addr=wrap";
    let input: Vec<[u32; 4]> = ARRAY_PTS.iter().map(|&(i, u, v)| [i, u.to_bits(), v.to_bits(), 0]).collect();
    let want = |comp: usize| -> Vec<[f32; 4]> {
        ARRAY_PTS
            .iter()
            .map(|&(i, u, v)| {
                let l = layer(i, 3);
                let (x0, y0) = ((u - 0.5).floor() as i64, (v - 0.5).floor() as i64);
                let at = |dx: i64, dy: i64| {
                    let (x, y) = (address(x0 + dx, 4, "wrap").unwrap(), address(y0 + dy, 3, "wrap").unwrap());
                    t[12 * l + (4 * y + x) as usize][comp]
                };
                [at(0, 1), at(1, 1), at(1, 0), at(0, 0)]
            })
            .collect()
    };
    let fetch = |c: char, h: &str| format!("tld4.{c}.a2d.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%r1,%f2,%f3,%f3}}];");
    let cases = [
        ("t4a2d", fetch('r', "%rd1"), MOVES, 0, ALL, "TLD4.R R, R, 0x50, ARRAY_2D, 0xf"),
        ("t4a2d_y", fetch('g', "%rd1"), "mov.b32 %r6, %f6;", 1, Y, "TLD4.G R, R, 0x50, ARRAY_2D, 0x2"),
        ("t4a2d_b", fetch('a', "%rd9"), MOVES, 3, ALL, "TLD4.A.B R, R, R, 0x0, ARRAY_2D, 0xf"),
    ];
    for (name, fetch, moves, comp, read, form) in cases {
        check(name, &format!("{fetch}\n{moves}"), spec, &bytes, &input, form, read, &want(comp));
    }
}

/// ptxas 11.8's texture instruction per kernel of `probe_geometries.ptx` (`-arch=sm_50
/// -O3`, `cuobjdump -sass`, registers erased; docs/textures.md §1.12).
const PTXAS_FORMS: &[(&str, &str)] = &[
    ("ga1d", "TXD R, R, R, 0x50, ARRAY_1D, 0xf"),
    ("ga1d_b", "TXD.B R, R, R, 0x0, ARRAY_1D, 0xf"),
    ("ga2d", "TXD R, R, R, 0x50, ARRAY_2D, 0xf"),
    ("ga2d_b", "TXD.B R, R, R, 0x0, ARRAY_2D, 0xf"),
    ("ga2d_x", "TXD R, R, R, 0x50, ARRAY_2D, 0x1"),
    ("gi1d", "TXD R, R, R, 0x50, 1D, 0xf"),
    ("gi2d", "TXD R, R, R, 0x50, 2D, 0xf"),
    ("gi2d_b", "TXD.B R, R, R, 0x0, 2D, 0xf"),
    ("gia1d", "TXD R, R, R, 0x50, ARRAY_1D, 0xf"),
    ("gia2d", "TXD R, R, R, 0x50, ARRAY_2D, 0xf"),
    ("la1d", "TEX.LL R, R, R, 0x50, ARRAY_1D, 0xf"),
    ("la1d_b", "TEX.B.LL R, R, R, 0x0, ARRAY_1D, 0xf"),
    ("la2d", "TEX.LL R, R, R, 0x50, ARRAY_2D, 0xf"),
    ("la2d_b", "TEX.B.LL R, R, R, 0x0, ARRAY_2D, 0xf"),
    ("la2d_x", "TEX.LL R, R, R, 0x50, ARRAY_2D, 0x1"),
    ("la2d_xz", "TEX.LL R, R, R, 0x50, ARRAY_2D, 0x5"),
    ("li1d", "TLD.LL.CL R, R, R, 0x50, 1D, 0xf"),
    ("li2d", "TLD.LL.CL R, R, R, 0x50, 2D, 0xf"),
    ("li2d_b", "TLD.B.LL.CL R, R, R, 0x0, 2D, 0xf"),
    ("li2d_x", "TLD.LL.CL R, R, R, 0x50, 2D, 0x1"),
    ("li2d_xz", "TLD.LL.CL R, R, R, 0x50, 2D, 0x5"),
    ("li3d", "TLD.LL.CL R, R, R, 0x50, 3D, 0xf"),
    ("lia1d", "TLD.LL.CL R, R, R, 0x50, ARRAY_1D, 0xf"),
    ("lia2d", "TLD.LL.CL R, R, R, 0x50, ARRAY_2D, 0xf"),
    ("t4a2d", "TLD4.R R, R, 0x50, ARRAY_2D, 0xf"),
    ("t4a2d_b", "TLD4.A.B R, R, R, 0x0, ARRAY_2D, 0xf"),
    ("t4a2d_y", "TLD4.G R, R, 0x50, ARRAY_2D, 0x2"),
];

/// ptxas 11.8's texture instruction per kernel of `probe_multisample.ptx` (§1.13).
const PTXAS_MS_FORMS: &[(&str, &str)] = &[
    ("ms", "TLDS.LZ.MS R, R, R, R, 0x50, 2D, RGBA"),
    ("ms_b", "TLD.B.LZ.MS R, R, R, 0x0, 2D, 0xf"),
    ("ms_x", "TLDS.LZ.MS RZ, R, R, R, 0x50, 2D, R"),
    ("ms_xz", "TLD.LZ.MS R, R, R, 0x50, 2D, 0x5"),
];

/// Our listing of `probe_geometries.ptx` and `probe_multisample.ptx` (compiled with
/// `--verify`) has ptxas's opcode, mask and operand shape per kernel; with ptxas 11.8
/// installed, `PTXAS_FORMS`/`PTXAS_MS_FORMS` are checked against its cubins too.
#[test]
fn the_forms_of_probe_geometries_are_ptxas_s() {
    agree("probe_geometries", PTXAS_FORMS);
    agree("probe_multisample", PTXAS_MS_FORMS);
    agree("probe_cube", PTXAS_CUBE_FORMS);
}

/// ptxas 11.8's texture instruction per kernel of `probe_cube.ptx` (§1.13).
const PTXAS_CUBE_FORMS: &[(&str, &str)] = &[
    ("acube", "TEX R, R, 0x50, ARRAY_CUBE, 0xf"),
    ("acube_b", "TEX.B R, R, R, 0x0, ARRAY_CUBE, 0xf"),
    ("acube_x", "TEX R, R, 0x50, ARRAY_CUBE, 0x1"),
    ("cube", "TEXS R, R, R, R, 0x50, CUBE, RGBA"),
    ("cube_b", "TEX.B R, R, R, 0x0, CUBE, 0xf"),
    ("cube_x", "TEXS RZ, R, R, R, 0x50, CUBE, R"),
    ("cube_xz", "TEX R, R, 0x50, CUBE, 0x5"),
    ("lacube", "TEX.LL R, R, R, 0x50, ARRAY_CUBE, 0xf"),
    ("lacube_b", "TEX.B.LL R, R, R, 0x0, ARRAY_CUBE, 0xf"),
    ("lacube_x", "TEX.LL R, R, R, 0x50, ARRAY_CUBE, 0x1"),
    ("lcube", "TEXS.LL R, R, R, R, 0x50, CUBE, RGBA"),
    ("lcube_b", "TEX.B.LL R, R, R, 0x0, CUBE, 0xf"),
    ("lcube_x", "TEXS.LL RZ, R, R, R, 0x50, CUBE, R"),
    ("lcube_xz", "TEX.LL R, R, R, 0x50, CUBE, 0x5"),
    ("t4acube", "TLD4.R R, R, 0x50, ARRAY_CUBE, 0xf"),
    ("t4cube", "TLD4.R R, R, 0x50, CUBE, 0xf"),
];

fn agree(probe: &str, forms: &[(&str, &str)]) {
    let src = format!("{}/tests/data/textures/{probe}.ptx", env!("CARGO_MANIFEST_DIR"));
    let want: Vec<(String, Vec<String>)> = forms.iter().map(|(k, f)| (k.to_string(), vec![f.to_string()])).collect();
    let o = ptx2sass(&["compile", "--verify", &src]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(texture_lines(&String::from_utf8_lossy(&o.stdout)), want, "ptx2sass (left), ptxas 11.8 (right)");
    let Ok(bin) = nvidia::tools() else {
        eprintln!("ptxas not checked: no NVIDIA reference tools");
        return;
    };
    let cubin = scratch(probe).join("ref.cubin");
    let o = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3", &src, "-o"]).arg(&cubin).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(bin.join("cuobjdump")).arg("-sass").arg(&cubin).output().unwrap();
    assert_eq!(texture_lines(&String::from_utf8_lossy(&o.stdout)), want, "ptxas 11.8 (left), PTXAS_FORMS (right)");
}

/// ptxas 11.8's words for these forms (`probe_geometries.ptx`, `cuobjdump -sass`) and
/// nvdisasm's text of them: each decodes to that text and encodes back to the word.
const WORDS: &[(u64, &str)] = &[
    (0xdcf80507a0670404, "TLD.LL.CL R4, R4, R6, 0x50, 2D, 0xf"),
    (0xdcf80500a0670400, "TLD.LL.CL R0, R4, R6, 0x50, 2D, 0x1"),
    (0xdcf8050780570404, "TLD.LL.CL R4, R4, R5, 0x50, 1D, 0xf"),
    (0xdcf80507c0770404, "TLD.LL.CL R4, R4, R7, 0x50, 3D, 0xf"),
    (0xdcf80507b0770404, "TLD.LL.CL R4, R4, R7, 0x50, ARRAY_2D, 0xf"),
    (0xddf80007a0670808, "TLD.B.LL.CL R8, R8, R6, 0x0, 2D, 0xf"),
    (0xc1b8050790670404, "TEX.LL R4, R4, R6, 0x50, ARRAY_1D, 0xf"),
    (0xc1b80502b0770404, "TEX.LL R4, R4, R7, 0x50, ARRAY_2D, 0x5"),
    (0xdeb8006790670808, "TEX.B.LL R8, R8, R6, 0x0, ARRAY_1D, 0xf"),
    (0xdeb80067b0670808, "TEX.B.LL R8, R8, R6, 0x0, ARRAY_2D, 0xf"),
    (0xde38050790670404, "TXD R4, R4, R6, 0x50, ARRAY_1D, 0xf"),
    (0xde380500b0870400, "TXD R0, R4, R8, 0x50, ARRAY_2D, 0x1"),
    (0xde38050780670404, "TXD R4, R4, R6, 0x50, 1D, 0xf"),
    (0xde78000790670808, "TXD.B R8, R8, R6, 0x0, ARRAY_1D, 0xf"),
    (0xde780007b0c70808, "TXD.B R8, R8, R12, 0x0, ARRAY_2D, 0xf"),
    (0xc8380507bff70404, "TLD4.R R4, R4, 0x50, ARRAY_2D, 0xf"),
    (0xc93805013ff70400, "TLD4.G R0, R4, 0x50, ARRAY_2D, 0x2"),
    (0xdef800c7b0270808, "TLD4.A.B R8, R8, R2, 0x0, ARRAY_2D, 0xf"),
    // probe_multisample.ptx
    (0xdad0050060670404, "TLDS.LZ.MS R6, R4, R4, R6, 0x50, 2D, RGBA"),
    (0xdac0050ff0670400, "TLDS.LZ.MS RZ, R0, R4, R6, 0x50, 2D, R"),
    (0xdc3c0502a0670404, "TLD.LZ.MS R4, R4, R6, 0x50, 2D, 0x5"),
    (0xdd3c0007a0670808, "TLD.B.LZ.MS R8, R8, R6, 0x0, 2D, 0xf"),
    // probe_cube.ptx
    (0xd990050060670404, "TEXS R6, R4, R4, R6, 0x50, CUBE, RGBA"),
    (0xd980050ff0070600, "TEXS RZ, R0, R6, R0, 0x50, CUBE, R"),
    (0xc0380502eff70404, "TEX R4, R4, 0x50, CUBE, 0x5"),
    (0xdeb80007e0270808, "TEX.B R8, R8, R2, 0x0, CUBE, 0xf"),
    (0xc0380507fff70404, "TEX R4, R4, 0x50, ARRAY_CUBE, 0xf"),
    (0xc0380500fff70400, "TEX R0, R4, 0x50, ARRAY_CUBE, 0x1"),
    (0xdeb80007f0270808, "TEX.B R8, R8, R2, 0x0, ARRAY_CUBE, 0xf"),
    (0xd9b0050060670404, "TEXS.LL R6, R4, R4, R6, 0x50, CUBE, RGBA"),
    (0xd9a0050ff0870600, "TEXS.LL RZ, R0, R6, R8, 0x50, CUBE, R"),
    (0xc1b80502e0770404, "TEX.LL R4, R4, R7, 0x50, CUBE, 0x5"),
    (0xdeb80067e0670808, "TEX.B.LL R8, R8, R6, 0x0, CUBE, 0xf"),
    (0xc1b80500f0070400, "TEX.LL R0, R4, R0, 0x50, ARRAY_CUBE, 0x1"),
    (0xdeb80067f0470804, "TEX.B.LL R4, R8, R4, 0x0, ARRAY_CUBE, 0xf"),
    (0xc8380507eff70404, "TLD4.R R4, R4, 0x50, CUBE, 0xf"),
    (0xc8380507fff70404, "TLD4.R R4, R4, 0x50, ARRAY_CUBE, 0xf"),
];

#[test]
fn ptxas_words_of_these_forms_decode_and_encode_back() {
    use ptx2sass::sass::encode::{decode, encode_text};
    use ptx2sass::sass::text;
    let mut bad = vec![];
    for (w, want) in WORDS {
        let Some(d) = decode(*w, 0x100) else {
            bad.push(format!("{w:#018x}: no form (nvdisasm: {want})"));
            continue;
        };
        if d.text() != *want {
            bad.push(format!("{w:#018x}: ours `{}`, nvdisasm `{want}`", d.text()));
            continue;
        }
        let listing = format!("\t\tFunction : f\n        /*0100*/  {want}  ?WAIT1 ;\n");
        let f = &text::parse(&listing).unwrap()[0];
        match encode_text(&f.instrs[0], 0x100, &|_| None) {
            Ok((e, _)) if e == *w => {}
            Ok((e, _)) => bad.push(format!("{w:#018x}: `{want}` encodes to {e:#018x}")),
            Err(m) => bad.push(format!("{w:#018x}: `{want}` does not encode: {m}")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A level whose type is not the coordinates' is rejected at the level operand, as ptxas
/// 11.8 rejects it ("Arguments mismatch for instruction 'tex.level'"); `.b32` goes with
/// either, as ptxas takes it.
#[test]
fn a_level_of_the_wrong_type_is_a_diagnostic_at_the_operand() {
    let kernel = |decl: &str, fetch: &str| {
        format!(
            "{HEADER}.visible .entry k(.param .u64 t)\n{{\n.reg .u64 %rd<2>;\n.reg .f32 %f<8>;\n.reg .s32 %r<8>;\n.reg {decl} %q;\nld.param.u64 %rd1, [t];\n{fetch}\nret;\n}}\n"
        )
    };
    let f32c = "tex.level.2d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [%rd1, {%f5,%f6}], %q;";
    let s32c = "tex.level.2d.v4.f32.s32 {%f1,%f2,%f3,%f4}, [%rd1, {%r5,%r6}], %q;";
    for (k, (decl, fetch, ok)) in [
        (".u32", f32c, false),
        (".s32", f32c, false),
        (".f32", s32c, false),
        (".b32", f32c, true),
        (".u32", s32c, true),
        (".f32", f32c, true),
    ]
    .into_iter()
    .enumerate()
    {
        let p = write(&format!("badlevel{k}"), &kernel(decl, fetch));
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        if ok {
            assert!(o.status.success(), "{decl} {fetch}: {err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "{decl} {fetch}: {err}");
        let want = if fetch == s32c { ".s32" } else { ".f32" };
        assert!(err.contains(&format!("must be a `{want}` register")), "{err}");
        assert!(err.contains("in.ptx:11:63"), "{err}");
    }
}

/// `tex.2dms` `{sample, x, y, _}` reads sample `sample` of texel (x, y) of a multisample
/// image (`samples=N`: N planes of W x H texels, `exec::image`), x and y addressed as any
/// texel fetch, a sample outside `0..N` all zero; ptxas 11.8 `TLDS.LZ.MS` (all, only x
/// read), `TLD.LZ.MS` (x and z), `TLD.B.LZ.MS` (kernels ms, ms_x, ms_xz, ms_b).
#[test]
fn multisample_fetches_read_one_sample_on_both_executors() {
    // A 5 x 3 image with 4 samples: texel (x, y) of sample s = `image(5, 3, 4)`'s (x, y, s).
    let (t, bytes) = image(5, 3, 4);
    let spec = "--texture fmt=f32x4,dims=5,3,samples=4,addr=wrap";
    let pts = [(1i32, 2i32, 1i32), (3, 6, -1), (5, 1, 1), (0, -2, 4), (-1, 0, 0)];
    let input: Vec<[u32; 4]> = pts.iter().map(|&(s, x, y)| [s as u32, x as u32, y as u32, 0]).collect();
    let want: Vec<[f32; 4]> = pts
        .iter()
        .map(|&(s, x, y)| {
            if !(0..4).contains(&s) {
                return [0.0; 4];
            }
            let (x, y) = (address(x as i64, 5, "wrap").unwrap(), address(y as i64, 3, "wrap").unwrap());
            t[15 * s as usize + (5 * y + x) as usize]
        })
        .collect();
    let fetch = "tex.2dms.v4.f32.s32 {%f5,%f6,%f7,%f8}, [H, {%r1,%r2,%r3,%r3}];";
    let cases = [
        ("ms", MOVES, "%rd1", ALL, "TLDS.LZ.MS R, R, R, R, 0x50, 2D, RGBA"),
        ("ms_x", "mov.b32 %r5, %f5;", "%rd1", X, "TLDS.LZ.MS RZ, R, R, R, 0x50, 2D, R"),
        ("ms_xz", "mov.b32 %r5, %f5;\nmov.b32 %r7, %f7;", "%rd1", XZ, "TLD.LZ.MS R, R, R, 0x50, 2D, 0x5"),
        ("ms_b", MOVES, "%rd9", ALL, "TLD.B.LZ.MS R, R, R, 0x0, 2D, 0xf"),
    ];
    for (name, moves, h, read, form) in cases {
        let body = format!("{}\n{moves}", fetch.replace('H', h));
        check(name, &body, spec, &bytes, &input, form, read, &want);
    }
    // `samples=` needs a 2D texture.
    let img = scratch("ms_bad").join("img.bin");
    std::fs::write(&img, [0u8; 64]).unwrap();
    let p = write("ms_bad", &probe(&format!("{}\n{MOVES}", fetch.replace('H', "%rd1"))));
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        "--texture",
        &format!("t=file:{},fmt=f32x4,dims=4,samples=1", img.display()),
        "--arg",
        "zeros:16",
        "--arg",
        "zeros:16",
        "--block",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "samples=1 on a 1D texture is an ordinary one: {err}");
    let o = ptx2sass(&[
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        "--texture",
        &format!("t=file:{},fmt=f32x4,dims=4,samples=2", img.display()),
        "--arg",
        "zeros:16",
        "--arg",
        "zeros:16",
        "--block",
        "1",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("samples= needs a 2D texture (dims=W,H)"), "{err}");
}

/// The face (+X -X +Y -Y +Z -Z = 0..5) and texel a point-sampled cube fetch in direction
/// `d` reads of W x W faces with clamp addressing: OpenGL 4.6, section 8.13, table 8.19
/// (computed in f64 here).
fn cube_texel(d: [f32; 3], w: i64) -> (usize, i64, i64) {
    let [x, y, z] = d.map(f64::from);
    let (face, sc, tc, ma) = if x.abs() >= y.abs() && x.abs() >= z.abs() {
        if x >= 0.0 { (0, -z, -y, x.abs()) } else { (1, z, -y, x.abs()) }
    } else if y.abs() >= z.abs() {
        if y >= 0.0 { (2, x, z, y.abs()) } else { (3, x, -z, y.abs()) }
    } else if z >= 0.0 {
        (4, x, -y, z.abs())
    } else {
        (5, -x, -y, z.abs())
    };
    let at = |c: f64| ((((c / ma + 1.0) / 2.0) * w as f64).floor() as i64).clamp(0, w - 1);
    (face, at(sc), at(tc))
}

/// `tex.cube` / `tex.acube` sample the face their direction points at (one direction per
/// face, none of magnitude 1, so that ptxas's projection matters to the simulator) of cube
/// `min(index, cubes - 1)` of a 4 x 4 x 12 cube map (two cubes; face f of cube c = plane
/// 6c + f); forms as ptxas 11.8's (cube, cube_x, cube_xz, cube_b, acube, acube_x,
/// acube_b).
#[test]
fn cube_fetches_sample_the_face_of_the_direction_on_both_executors() {
    let (t, bytes) = image(4, 4, 12);
    let spec = "--texture fmt=f32x4,dims=4,4,12,cube";
    let dirs: [[f32; 3]; 6] = [
        [2.5, 0.75, -1.5],
        [-3.0, 1.2, 0.9],
        [0.5, 2.0, -0.7],
        [-0.45, -1.5, 0.6],
        [0.7, -0.3, 1.8],
        [-0.35, 0.55, -1.4],
    ];
    let indices = [0u32, 1, 5, 70000, 1, 0];
    let input: Vec<[u32; 4]> =
        dirs.iter().zip(indices).map(|(d, i)| [i, d[0].to_bits(), d[1].to_bits(), d[2].to_bits()]).collect();
    let want = |array: bool| -> Vec<[f32; 4]> {
        dirs.iter()
            .zip(indices)
            .map(|(&d, i)| {
                let (face, s, tt) = cube_texel(d, 4);
                let cube = if array { i.min(1) as usize } else { 0 };
                t[16 * (6 * cube + face) + (4 * tt + s) as usize]
            })
            .collect()
    };
    let cube = |h: &str| format!("tex.cube.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%f2,%f3,%f4,%f4}}];");
    let acube = |h: &str| format!("tex.acube.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%r1,%f2,%f3,%f4}}];");
    let lcube = |h: &str| {
        format!(
            "mov.f32 %f9, 0f40200000;\ntex.level.cube.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%f2,%f3,%f4,%f4}}], %f9;"
        )
    };
    let lacube = |h: &str| {
        format!(
            "mov.f32 %f9, 0f40200000;\ntex.level.acube.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [{h}, {{%r1,%f2,%f3,%f4}}], %f9;"
        )
    };
    let xz = "mov.b32 %r5, %f5;\nmov.b32 %r7, %f7;";
    let x = "mov.b32 %r5, %f5;";
    let cases = [
        ("cube", cube("%rd1"), MOVES, false, ALL, "TEXS R, R, R, R, 0x50, CUBE, RGBA"),
        ("cube_x", cube("%rd1"), x, false, X, "TEXS RZ, R, R, R, 0x50, CUBE, R"),
        ("cube_xz", cube("%rd1"), xz, false, XZ, "TEX R, R, 0x50, CUBE, 0x5"),
        ("cube_b", cube("%rd9"), MOVES, false, ALL, "TEX.B R, R, R, 0x0, CUBE, 0xf"),
        ("acube", acube("%rd1"), MOVES, true, ALL, "TEX R, R, 0x50, ARRAY_CUBE, 0xf"),
        ("acube_x", acube("%rd1"), x, true, X, "TEX R, R, 0x50, ARRAY_CUBE, 0x1"),
        ("acube_b", acube("%rd9"), MOVES, true, ALL, "TEX.B R, R, R, 0x0, ARRAY_CUBE, 0xf"),
        // `.level` (the level, 2.5, reads level 0): `TEXS.LL ... CUBE` with `{z', level}`
        // in Rb, `TEX.LL`/`TEX.B.LL ... CUBE/ARRAY_CUBE` (lcube, lcube_xz, lcube_b, lacube,
        // lacube_b).
        ("lcube", lcube("%rd1"), MOVES, false, ALL, "TEXS.LL R, R, R, R, 0x50, CUBE, RGBA"),
        ("lcube_xz", lcube("%rd1"), xz, false, XZ, "TEX.LL R, R, R, 0x50, CUBE, 0x5"),
        ("lcube_b", lcube("%rd9"), MOVES, false, ALL, "TEX.B.LL R, R, R, 0x0, CUBE, 0xf"),
        ("lacube", lacube("%rd1"), MOVES, true, ALL, "TEX.LL R, R, R, 0x50, ARRAY_CUBE, 0xf"),
        ("lacube_b", lacube("%rd9"), MOVES, true, ALL, "TEX.B.LL R, R, R, 0x0, ARRAY_CUBE, 0xf"),
    ];
    for (name, fetch, moves, array, read, form) in cases {
        check(name, &format!("{fetch}\n{moves}"), spec, &bytes, &input, form, read, &want(array));
    }
}

/// Bad cube fetches are diagnostics at the offending word or operand, as ptxas 11.8
/// rejects them ("Floating-point coordinates required", "Illegal vector size: 3"); a cube
/// map must be dims=W,W,6N.
#[test]
fn bad_cube_fetches_and_cube_maps_are_diagnostics() {
    let kernel = |fetch: &str| {
        format!(
            "{HEADER}.visible .entry k(.param .u64 t)\n{{\n.reg .u64 %rd<2>;\n.reg .f32 %f<8>;\n.reg .s32 %r<8>;\nld.param.u64 %rd1, [t];\n{fetch}\nret;\n}}\n"
        )
    };
    let bad = [
        (
            "tex.cube.v4.f32.s32 {%f1,%f2,%f3,%f4}, [%rd1, {%r1,%r2,%r3,%r3}];",
            "cube textures take `.f32` coordinates",
            16,
        ),
        (
            "tex.acube.v4.f32.s32 {%f1,%f2,%f3,%f4}, [%rd1, {%r1,%r2,%r3,%r3}];",
            "cube textures take `.f32` coordinates",
            17,
        ),
        ("tex.cube.v4.f32.f32 {%f1,%f2,%f3,%f4}, [%rd1, {%f5,%f6,%f7}];", "takes 4 coordinates `{x, y, z, _}`", 47),
        (
            "tex.acube.v4.f32.f32 {%f1,%f2,%f3,%f4}, [%rd1, {%f5,%f6,%f7}];",
            "takes 4 coordinates `{index, x, y, z}`",
            48,
        ),
    ];
    for (k, (fetch, msg, col)) in bad.into_iter().enumerate() {
        let p = write(&format!("badcube{k}"), &kernel(fetch));
        let o = ptx2sass(&["compile", p.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{fetch}: {err}");
        assert!(err.contains(msg) && err.contains(&format!("in.ptx:10:{col}")), "{fetch}: {err}");
    }
    let p = write(
        "badcubemap",
        &probe(&format!("tex.cube.v4.f32.f32 {{%f5,%f6,%f7,%f8}}, [%rd1, {{%f2,%f3,%f4,%f4}}];\n{MOVES}")),
    );
    let img = scratch("badcubemap").join("img.bin");
    std::fs::write(&img, vec![0u8; 16 * 4 * 4 * 5]).unwrap();
    for dims in ["4,4,5", "4,2,6", "4,4,6,norm"] {
        let o = ptx2sass(&[
            "run",
            "--kernel",
            "k",
            p.to_str().unwrap(),
            "--texture",
            &format!("t=file:{},fmt=f32x4,dims={dims},cube", img.display()),
            "--arg",
            "zeros:16",
            "--arg",
            "zeros:16",
            "--block",
            "1",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("a cube map is a texture of dims=W,W,6N"), "{dims}: {err}");
    }
}

/// `tld4.{r,b}.cube` / `.acube`: the four texels of the bilinear footprint at the face
/// coordinates, in the order `T[i,j+1], T[i+1,j+1], T[i+1,j], T[i,j]`, in the face the
/// direction selects (clamp addressing within the face); ptxas 11.8 `TLD4.R ... CUBE`,
/// `... ARRAY_CUBE` (no `TLD4S`; t4cube, t4acube). The directions keep the footprint away
/// from texel centres, where the simulator's projected direction could round across.
#[test]
fn cube_gathers_on_both_executors() {
    let (t, bytes) = image(4, 4, 12);
    let spec = "--texture fmt=f32x4,dims=4,4,12,cube";
    let dirs: [[f32; 3]; 6] = [
        [2.5, 0.75, -1.5],
        [-3.0, 1.2, 0.9],
        [0.6, 2.0, -0.7],
        [-0.45, -1.5, 0.6],
        [0.7, -0.3, 1.8],
        [-0.42, 0.55, -1.4],
    ];
    let indices = [0u32, 1, 5, 70000, 1, 0];
    let input: Vec<[u32; 4]> =
        dirs.iter().zip(indices).map(|(d, i)| [i, d[0].to_bits(), d[1].to_bits(), d[2].to_bits()]).collect();
    let want = |array: bool, comp: usize| -> Vec<[f32; 4]> {
        dirs.iter()
            .zip(indices)
            .map(|(&d, i)| {
                let [x, y, z] = d.map(f64::from);
                let (face, sc, tc, ma) = if x.abs() >= y.abs() && x.abs() >= z.abs() {
                    if x >= 0.0 { (0, -z, -y, x.abs()) } else { (1, z, -y, x.abs()) }
                } else if y.abs() >= z.abs() {
                    if y >= 0.0 { (2, x, z, y.abs()) } else { (3, x, -z, y.abs()) }
                } else if z >= 0.0 {
                    (4, x, -y, z.abs())
                } else {
                    (5, -x, -y, z.abs())
                };
                let lo = |c: f64| (((c / ma + 1.0) / 2.0) * 4.0 - 0.5).floor() as i64;
                let (x0, y0) = (lo(sc), lo(tc));
                let plane = 6 * if array { i.min(1) as usize } else { 0 } + face;
                let at = |dx: i64, dy: i64| {
                    let (x, y) = ((x0 + dx).clamp(0, 3), (y0 + dy).clamp(0, 3));
                    t[16 * plane + (4 * y + x) as usize][comp]
                };
                [at(0, 1), at(1, 1), at(1, 0), at(0, 0)]
            })
            .collect()
    };
    let cases = [
        (
            "t4cube",
            "tld4.r.cube.v4.f32.f32 {%f5,%f6,%f7,%f8}, [%rd1, {%f2,%f3,%f4,%f4}];",
            false,
            0,
            "TLD4.R R, R, 0x50, CUBE, 0xf",
        ),
        (
            "t4acube",
            "tld4.b.acube.v4.f32.f32 {%f5,%f6,%f7,%f8}, [%rd1, {%r1,%f2,%f3,%f4}];",
            true,
            2,
            "TLD4.B R, R, 0x50, ARRAY_CUBE, 0xf",
        ),
    ];
    for (name, fetch, array, comp, form) in cases {
        check(name, &format!("{fetch}\n{MOVES}"), spec, &bytes, &input, form, ALL, &want(array, comp));
    }
}
