//! Helpers of the texture tests (`tests/textures.rs`, `tests/texture_forms.rs`): a probe
//! kernel around a texture instruction, run on both executors with `--compare`, and
//! reference images and sampling to compute the expected values.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

pub const HEADER: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-textures-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub fn write(name: &str, src: &str) -> PathBuf {
    let p = scratch(name).join("in.ptx");
    std::fs::write(&p, src).unwrap();
    p
}

pub fn ptx2sass(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ptx2sass")).args(args).output().unwrap()
}

/// A kernel `k(.param .u64 t, .param .u64 out, .param .u64 in)`: thread i reads four words
/// `%r1..%r4` (also as `%f1..%f4`) from `in[4i..]`, runs `body` (results in `%r5..%r8` /
/// `%f5..%f8`; `%rd1` is the handle loaded from `t`, `%rd9` a copy of it, used bindless)
/// and stores `%r5..%r8` to `out[4i..]`.
pub fn probe(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 t, .param .u64 out, .param .u64 in)\n{{\n.reg .u64 %rd<12>;\n.reg .f32 %f<12>;\n.reg .b32 %r<12>;\n\
ld.param.u64 %rd1, [t];\nld.param.u64 %rd2, [out];\nld.param.u64 %rd3, [in];\nmov.b64 %rd9, %rd1;\n\
cvta.to.global.u64 %rd4, %rd2;\ncvta.to.global.u64 %rd5, %rd3;\nmov.u32 %r10, %tid.x;\nmul.wide.u32 %rd6, %r10, 16;\n\
add.u64 %rd7, %rd5, %rd6;\nadd.u64 %rd8, %rd4, %rd6;\nld.global.v4.b32 {{%r1,%r2,%r3,%r4}}, [%rd7];\n\
mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b32 %f3, %r3;\nmov.b32 %f4, %r4;\nmov.b32 %r5, 0;\nmov.b32 %r6, 0;\nmov.b32 %r7, 0;\nmov.b32 %r8, 0;\n\
{body}\nst.global.v4.b32 [%rd8], {{%r5,%r6,%r7,%r8}};\nret;\n}}\n"
    )
}

/// Runs `probe(body)` with `--compare` (both executors must agree on all memory, the
/// image included) on one thread per input quad; returns `out` and the image after.
pub fn run_probe(name: &str, body: &str, image: (&str, &[u8]), input: &[[u32; 4]]) -> (Vec<u32>, Vec<u8>) {
    let dir = scratch(name);
    let p = write(name, &probe(body));
    let img = dir.join("img.bin");
    std::fs::write(&img, image.1).unwrap();
    let inp = dir.join("in.bin");
    std::fs::write(&inp, input.iter().flatten().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let (flag, spec) = image.0.split_once(' ').unwrap();
    let spec = format!("t=file:{},{spec}", img.display());
    let dump = dir.join("dump");
    let n = input.len().to_string();
    let args = [
        "run",
        "--kernel",
        "k",
        p.to_str().unwrap(),
        flag,
        &spec,
        "--arg",
        &format!("zeros:{}", 16 * input.len()),
        "--arg",
        &format!("file:{}", inp.display()),
        "--block",
        &n,
        "--compare",
        "--dump",
        dump.to_str().unwrap(),
    ];
    let o = ptx2sass(&args);
    assert!(o.status.success(), "{body}\n{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let out = std::fs::read(dump.join("arg1.bin")).unwrap();
    let words = out.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    (words, std::fs::read(dump.join("tex:t.bin")).unwrap())
}

/// An f32x4 image whose texel (x, y, z) is `(x + 10y + 100z, 1000 + x, -y, 0.25 * z)`.
pub fn image(w: usize, h: usize, d: usize) -> (Vec<[f32; 4]>, Vec<u8>) {
    let mut t = vec![];
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                t.push([(x + 10 * y + 100 * z) as f32, 1000.0 + x as f32, -(y as f32), 0.25 * z as f32]);
            }
        }
    }
    let bytes = t.iter().flatten().flat_map(|v| v.to_le_bytes()).collect();
    (t, bytes)
}

/// Reference texel addressing (docs in `exec::image`): `None` outside a border image.
pub fn address(i: i64, n: i64, mode: &str) -> Option<i64> {
    match mode {
        "clamp" => Some(i.clamp(0, n - 1)),
        "wrap" => Some(i.rem_euclid(n)),
        "mirror" => Some(if i.rem_euclid(2 * n) < n { i.rem_euclid(2 * n) } else { 2 * n - 1 - i.rem_euclid(2 * n) }),
        _ => (0..n).contains(&i).then_some(i),
    }
}

/// Reference 2D sampling of `t` (w x h) at (u, v) in texel units.
pub fn sample2d(t: &[[f32; 4]], (w, h): (i64, i64), (u, v): (f32, f32), linear: bool, mode: &str) -> [f32; 4] {
    let at = |x: i64, y: i64| match (address(x, w, mode), address(y, h, mode)) {
        (Some(x), Some(y)) => t[(y * w + x) as usize],
        _ => [0.0; 4],
    };
    if !linear {
        return at(u.floor() as i64, v.floor() as i64);
    }
    let (x, y) = (u - 0.5, v - 0.5);
    let (i, j) = (x.floor(), y.floor());
    // 8 fractional bits (CUDA C Programming Guide, "Texture Fetching": 9-bit fixed point).
    let (a, b) = (((x - i) * 256.0).floor() / 256.0, ((y - j) * 256.0).floor() / 256.0);
    let (i, j) = (i as i64, j as i64);
    let mut r = [0f32; 4];
    for (dx, dy, wt) in [(0, 0, (1.0 - a) * (1.0 - b)), (1, 0, a * (1.0 - b)), (0, 1, (1.0 - a) * b), (1, 1, a * b)] {
        let t = at(i + dx, j + dy);
        for c in 0..4 {
            r[c] += wt * t[c];
        }
    }
    r
}

pub fn floats(out: &[u32]) -> Vec<f32> {
    out.iter().map(|w| f32::from_bits(*w)).collect()
}
