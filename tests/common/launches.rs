//! Launches of every sample kernel on random inputs, shared by the simulator tests and
//! the differential tests: buffers, parameters and launch shapes per sample.
#![allow(dead_code)]

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::exec::{GLOBAL_BASE, Launch, Memory};
use ptx2sass::sass::program::Program;

/// Compiles PTX to a program (panics with the diagnostics).
pub fn compile(src: &str) -> Program {
    let opts = Options { emit: Emit::Sass, ..Options::default() };
    match driver::compile(src, &opts) {
        Ok(o) => o.program.expect("a program"),
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("ptx", src).render_all(&d)),
    }
}

/// Compiles `samples/NAME.ptx`.
pub fn sample(name: &str) -> Program {
    let path = format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    compile(&std::fs::read_to_string(path).expect("sample exists"))
}

/// Test inputs from `exec::Rng` (SplitMix64).
pub struct Rng(ptx2sass::exec::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(ptx2sass::exec::Rng::new(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    pub fn u32s(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| (self.next() as u32).to_le_bytes()).collect()
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// Floats in [-8, 8) with 12 fractional bits.
    pub fn f32s(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| ((self.next() % 65536) as f32 / 4096.0 - 8.0).to_le_bytes()).collect()
    }
    pub fn f64s(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| ((self.next() % (1 << 40)) as f64 / (1u64 << 36) as f64 - 8.0).to_le_bytes()).collect()
    }
}

/// A parameter value.
#[derive(Clone, Copy, Debug)]
pub enum Val {
    /// An integer (or pointer) truncated to the parameter's size.
    I(u64),
    F32(f32),
    F64(f64),
    /// A 16-byte aggregate of four floats (a struct passed by value, `.param .align 4
    /// .b8 name[16]`).
    F32x4([f32; 4]),
}

/// A launch being built: global buffers, then parameters.
pub struct Setup {
    pub global: Memory,
    pub next: u64,
    pub bufs: Vec<u64>,
}

impl Setup {
    pub fn new() -> Setup {
        Setup { global: Memory::new(), next: GLOBAL_BASE, bufs: vec![] }
    }
    /// Allocates a global buffer holding `bytes`; returns its address.
    pub fn buf(&mut self, bytes: Vec<u8>) -> u64 {
        let at = self.next;
        let name = format!("buf{}", self.bufs.len());
        self.next += (bytes.len() as u64).div_ceil(0x1000).max(1) * 0x1000 + 0x1000;
        self.global.alloc(&name, at, bytes).expect("disjoint buffers");
        self.bufs.push(at);
        at
    }
    pub fn launch(self, p: &Program, kernel: &str, grid: [u32; 3], block: [u32; 3], vals: &[Val]) -> Launch {
        let f = p.functions.iter().find(|f| f.name == kernel).expect("kernel");
        assert_eq!(f.params.len(), vals.len(), "{kernel}: parameter count");
        let mut params = vec![];
        for ((off, ty, _), v) in f.params.iter().zip(vals) {
            let o = *off as usize - 0x140;
            // `.u32` or an array `.b8[16]`: element bits / 8 times the element count.
            let (elem, count) = ty.split_once('[').unwrap_or((ty, "1]"));
            let count: usize = count.trim_end_matches(']').parse().expect("array length");
            let size = elem.trim_start_matches(".")[1..].parse::<usize>().expect("scalar param") / 8 * count;
            let bytes = match *v {
                Val::I(x) => x.to_le_bytes()[..size.min(8)].to_vec(),
                Val::F32(x) => x.to_le_bytes().to_vec(),
                Val::F64(x) => x.to_le_bytes().to_vec(),
                Val::F32x4(x) => x.iter().flat_map(|f| f.to_le_bytes()).collect(),
            };
            assert_eq!(bytes.len(), size, "{kernel}: parameter at 0x{off:x} of type {ty}");
            if params.len() < o + size {
                params.resize(o + size, 0);
            }
            params[o..o + size].copy_from_slice(&bytes);
        }
        Launch { step_limit: 5_000_000, ..Launch::new(kernel, grid, block, params, self.global) }
    }
}

/// A launch shape of a sample: grid, block, and its element count (`n`, or the problem
/// size the kernel derives its bounds from).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// CTAs per dimension.
    pub grid: [u32; 3],
    /// Threads per dimension.
    pub block: [u32; 3],
    /// Elements (or the size the kernel's bounds derive from).
    pub n: usize,
}

const fn shape(grid: [u32; 3], block: [u32; 3], n: usize) -> Shape {
    Shape { grid, block, n }
}

/// The launch shapes each sample runs with, the first one being [`sample_launch`]'s. What
/// the kernels assume limits them:
/// * `block_scan` is written for CTAs of exactly 256 threads (`WG`), one element each;
/// * `transpose_tiled` needs 32x8 blocks (its 32x33 shared tile is filled by 8 rows of
///   threads, 4 times); its width and height vary;
/// * `stencil5` takes its 2D problem size (`nx`, `ny`, `pitch`) from the shape;
/// * `local_array` and `stress_spill` have no bounds check: every launched thread works,
///   buffers are sized for all of them;
/// * `bitonic_sort` sorts 512-key tiles (one per CTA) with any block size up to 256; `n`
///   leaves the last tile partial;
/// * `sgemm_reg` needs 8x8 blocks (one 32x32 tile of C each); `n` is the column count N,
///   the row count M and depth K derive from the grid and `n` (see its launch);
/// * `reduce_sum` keeps a 256-entry shared array (blocks of at most 256 threads; its tree
///   halves `blockDim`, so 48 threads leave some inputs out, which both executors do alike);
/// * `nvcc_particles` has two entries: shapes with an even `n` launch `advance`, odd ones
///   `count_inside`;
/// * the others check `i < n`: one shape with partial last CTAs and warps (3 CTAs of 48
///   threads for 137 elements), one whose last warp exits in part (32 threads, 29
///   elements).
pub fn sample_shapes(name: &str) -> Vec<Shape> {
    match name {
        "block_scan" => vec![shape([2, 1, 1], [256, 1, 1], 512), shape([3, 1, 1], [256, 1, 1], 768)],
        "stencil5" => vec![shape([2, 2, 1], [8, 8, 1], 14), shape([3, 2, 1], [6, 8, 1], 17)],
        "transpose_tiled" => vec![shape([2, 2, 1], [32, 8, 1], 40), shape([3, 2, 1], [32, 8, 1], 70)],
        "local_array" => vec![shape([2, 1, 1], [64, 1, 1], 128), shape([3, 1, 1], [48, 1, 1], 144)],
        "stress_spill" => vec![shape([2, 1, 1], [32, 1, 1], 64), shape([3, 1, 1], [16, 1, 1], 48)],
        "reduce_sum" => vec![shape([2, 1, 1], [64, 1, 1], 200), shape([3, 1, 1], [48, 1, 1], 250)],
        "nvcc_particles" => vec![
            shape([2, 1, 1], [64, 1, 1], 100),
            shape([3, 1, 1], [48, 1, 1], 137),
            shape([3, 1, 1], [48, 1, 1], 138),
            shape([1, 1, 1], [32, 1, 1], 29),
        ],
        "bitonic_sort" => vec![
            shape([2, 1, 1], [256, 1, 1], 1000),
            shape([3, 1, 1], [128, 1, 1], 1300),
            shape([1, 1, 1], [64, 1, 1], 300),
        ],
        "sgemm_reg" => {
            vec![shape([2, 2, 1], [8, 8, 1], 50), shape([3, 1, 1], [8, 8, 1], 96), shape([1, 2, 1], [8, 8, 1], 32)]
        }
        // Grid-stride loop: fewer threads than bytes, partial warps included.
        "histogram_atomic" => vec![shape([2, 1, 1], [64, 1, 1], 1000), shape([3, 1, 1], [48, 1, 1], 777)],
        // Shuffles read every lane of a warp: whole warps only (PTX ISA 9.7.8.6 leaves a
        // read from a non-existent lane undefined); `n` cuts the data short instead.
        "warp_reduce" => vec![shape([2, 1, 1], [64, 1, 1], 100), shape([3, 1, 1], [32, 1, 1], 70)],
        _ => {
            vec![shape([2, 1, 1], [64, 1, 1], 100), shape([3, 1, 1], [48, 1, 1], 137), shape([1, 1, 1], [32, 1, 1], 29)]
        }
    }
}

/// Builds the launch of one sample on random inputs with its first shape: (program,
/// launch, buffer addresses).
pub fn sample_launch(name: &str, rng: &mut Rng) -> (Program, Launch, Vec<u64>) {
    sample_launch_shape(name, sample_shapes(name)[0], rng)
}

/// Builds the launch of one sample on random inputs with shape `sh` (one of
/// [`sample_shapes`]): (program, launch, buffer addresses).
pub fn sample_launch_shape(name: &str, sh: Shape, rng: &mut Rng) -> (Program, Launch, Vec<u64>) {
    let p = sample(name);
    let mut s = Setup::new();
    let n = sh.n;
    let (g, b) = (sh.grid, sh.block);
    let threads = (g.iter().product::<u32>() * b.iter().product::<u32>()) as usize;
    let nn = Val::I(n as u64);
    let l = match name {
        "atomic_max_f32" => {
            // Final maxima only (order-independent); start below and above some inputs.
            let (i, r, m) =
                (s.buf(rng.f32s(n)), s.buf((-2.5f32).to_le_bytes().to_vec()), s.buf((-40i32).to_le_bytes().to_vec()));
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(r), Val::I(m), nn])
        }
        "histogram_atomic" => {
            // The 64 bins are sums of atomic increments: the same in any order.
            let (d, h) = (s.buf(rng.bytes(n)), s.buf(rng.u32s(64)));
            s.launch(&p, name, g, b, &[Val::I(d), Val::I(h), nn])
        }
        "warp_reduce" => {
            // Wrapping integer sums and ballot counts: the same in any order.
            let warps = threads.div_ceil(32);
            let (i, t, c, m) = (s.buf(rng.u32s(n)), s.buf(rng.u32s(1)), s.buf(vec![0; 4]), s.buf(vec![0; 4 * warps]));
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(t), Val::I(c), Val::I(m), nn])
        }
        "block_scan" => {
            let i = s.buf(rng.u32s(n));
            let o = s.buf(vec![0; 4 * n]);
            let t = s.buf(vec![0; 4 * g[0] as usize]);
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(o), Val::I(t)])
        }
        "bitonic_sort" => {
            // Keys drawn from 0..1000 so tiles hold duplicates.
            let keys = (0..n).map(|_| (rng.next() % 1000) as u32).flat_map(u32::to_le_bytes).collect();
            let k = s.buf(keys);
            s.launch(&p, "bitonic_sort512", g, b, &[Val::I(k), nn])
        }
        "bytes_shorts" => {
            let (a, o) = (s.buf(rng.bytes(n)), s.buf(rng.bytes(2 * n)));
            let (out, m) = (s.buf(vec![0; 2 * n]), s.buf(vec![0; n]));
            s.launch(&p, name, g, b, &[Val::I(a), Val::I(o), Val::I(out), Val::I(m), Val::I(-3i64 as u64), nn])
        }
        "clamp_select" => {
            let (q, a, f, d) = (s.buf(rng.u32s(n)), s.buf(vec![0; 4 * n]), s.buf(rng.f32s(n)), s.buf(rng.f64s(n)));
            let v = [Val::I(q), Val::I(a), Val::I(f), Val::I(d)];
            let rest = [Val::I(-1000i64 as u64), Val::I(1 << 30), Val::F32(2.5), Val::F64(-1.25), nn];
            s.launch(&p, name, g, b, &[&v[..], &rest[..]].concat())
        }
        "const_table" => {
            let (k, x, y) = (s.buf(rng.u32s(n)), s.buf(rng.f32s(n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, name, g, b, &[Val::I(k), Val::I(x), Val::I(y), nn])
        }
        "device_globals" => {
            // The hit counter and the bins (module `.global` variables, compared by name)
            // are sums of atomic increments: the same in any order.
            let (i, o) = (s.buf(rng.u32s(n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(o), nn])
        }
        "daxpy" => {
            let (x, y) = (s.buf(rng.f64s(n)), s.buf(rng.f64s(n)));
            s.launch(&p, name, g, b, &[nn, Val::F64(1.5), Val::I(x), Val::I(y)])
        }
        "generic_call" => {
            let (a, bb) = (s.buf(rng.f32s(3 * n)), s.buf(rng.f32s(3 * n)));
            let (sums, dots) = (s.buf(rng.f32s(n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, name, g, b, &[Val::I(a), Val::I(bb), Val::I(sums), Val::I(dots), nn])
        }
        "int_ops" => {
            // Edge values (0, -1, INT_MIN, ...) every few elements; 64-bit operands alternate
            // between values that fit 32 bits (clang's 32-bit division shortcut) and wide ones.
            let edges32 = [0u32, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 7, 0xffff_fff6, 3];
            let edges64 = ([0, u64::MAX, 1 << 63, 5], [u64::MAX, 0, 3, 1 << 40]);
            let (mut av, mut bv, mut cv, mut dv) = (vec![], vec![], vec![], vec![]);
            for k in 0..n {
                let (x, y) = (rng.next() as u32, rng.next() as u32 >> (rng.next() % 32));
                let (x, y) = if k % 4 == 0 { (edges32[k / 4 % 8], edges32[(k / 32 + k / 4) % 8]) } else { (x, y) };
                av.extend(x.to_le_bytes());
                bv.extend(y.to_le_bytes());
                let (p, q) = match k % 3 {
                    0 => (rng.next() >> 32, rng.next() >> (32 + rng.next() % 32)),
                    1 => (rng.next(), rng.next() >> (rng.next() % 64)),
                    _ => (edges64.0[k % 4], edges64.1[k / 3 % 4]),
                };
                cv.extend(p.to_le_bytes());
                dv.extend(q.to_le_bytes());
            }
            let v = [av, bv, cv, dv, vec![0; 64 * n], vec![0; 64 * n]].map(|bytes| Val::I(s.buf(bytes)));
            s.launch(&p, name, g, b, &[&v[..], &[nn]].concat())
        }
        "local_array" => {
            let (per, stride) = (5usize, 37usize);
            let d = s.buf(rng.bytes(threads + per * stride));
            let h = s.buf(vec![0; threads * 16 * 4]);
            s.launch(&p, name, g, b, &[Val::I(d), Val::I(h), Val::I(per as u64), Val::I(stride as u64)])
        }
        "many_params" => {
            let i = s.buf(rng.u32s(n));
            let (ol, of, od) = (s.buf(vec![0; 8 * n]), s.buf(vec![0; 4 * n]), s.buf(rng.f64s(n)));
            let v = [
                Val::I(0xf3),
                Val::I(0xf3),
                Val::I(0x8001),
                Val::I(0x8001),
                Val::I(-7i64 as u64),
                Val::I(0xffff_fff0),
                Val::I(-5_000_000_000i64 as u64),
                Val::I(0x1234_5678_9abc_def0),
                Val::F32(0.75),
                Val::F64(-3.5),
                Val::I(i),
                Val::I(ol),
                Val::I(of),
                Val::I(od),
                nn,
            ];
            s.launch(&p, name, g, b, &v)
        }
        "nvcc_style" => {
            let (x, y, o) = (s.buf(rng.f32s(n)), s.buf(rng.f32s(n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, "_Z9scale_addPKfS0_Pffi", g, b, &[Val::I(x), Val::I(y), Val::I(o), Val::F32(-0.5), nn])
        }
        "nvcc_matvec" => {
            let (rows, cols) = (n, n % 7 + 9);
            let (a, x, y) = (s.buf(rng.f32s(rows * cols)), s.buf(rng.f32s(cols)), s.buf(vec![0; 4 * rows]));
            s.launch(&p, "_Z6matvecPKfS0_Pfii", g, b, &[Val::I(a), Val::I(x), Val::I(y), nn, Val::I(cols as u64)])
        }
        "nvcc_scan" => {
            let (i, o, t) = (s.buf(rng.u32s(4 * n)), s.buf(vec![0; 16 * n]), s.buf(vec![0; 4 * g[0] as usize]));
            s.launch(&p, "_Z5scan4PK4int4PS_Pii", g, b, &[Val::I(i), Val::I(o), Val::I(t), nn])
        }
        "nvcc_particles" => {
            // Positions in [-8, 8)^2 start inside and outside the box.
            let bx = Val::F32x4([-6.0, -5.0, 6.0, 5.5]);
            let pos = s.buf(rng.f32s(2 * n));
            if n.is_multiple_of(2) {
                let vel = s.buf(rng.f32s(2 * n));
                s.launch(&p, "_Z7advanceP6float2PKS_3Boxfi", g, b, &[Val::I(pos), Val::I(vel), bx, Val::F32(0.75), nn])
            } else {
                let flags = s.buf(vec![0xab; 4 * n]);
                s.launch(&p, "_Z12count_insidePK6float23BoxPii", g, b, &[Val::I(pos), bx, Val::I(flags), nn])
            }
        }
        "nbody" => {
            let (pos, vel) = (s.buf(rng.f32s(4 * n)), s.buf(rng.f32s(4 * n)));
            let (np, sp) = (s.buf(vec![0; 16 * n]), s.buf(vec![0; 4 * n]));
            let v = [Val::I(pos), Val::I(vel), Val::I(np), Val::I(sp), nn, Val::F32(0.01), Val::F32(0.5)];
            s.launch(&p, name, g, b, &v)
        }
        "black_scholes" => {
            // Prices and strikes in [5, 100), maturities in [0.1, 5) years.
            let mut range = |lo: f32, hi: f32| -> Vec<u8> {
                (0..n).flat_map(|_| (lo + (rng.next() % 65536) as f32 / 65536.0 * (hi - lo)).to_le_bytes()).collect()
            };
            let (pr, st, yr) = (range(5.0, 100.0), range(5.0, 100.0), range(0.1, 5.0));
            let v = [pr, st, yr, vec![0; 4 * n], vec![0; 4 * n]].map(|bytes| Val::I(s.buf(bytes)));
            s.launch(&p, name, g, b, &[&v[..], &[Val::F32(0.02), Val::F32(0.3), nn]].concat())
        }
        "float_math" => {
            let (a, bb, c, d) = (s.buf(rng.f32s(n)), s.buf(rng.f32s(n)), s.buf(rng.f64s(n)), s.buf(rng.f64s(n)));
            let (o, o64, oi) = (s.buf(vec![0; 64 * n]), s.buf(vec![0; 32 * n]), s.buf(vec![0; 16 * n]));
            let v = [a, bb, c, d, o, o64, oi].map(Val::I);
            s.launch(&p, name, g, b, &[&v[..], &[nn]].concat())
        }
        "pair_dist_f64" => {
            let bufs: Vec<Val> = (0..4).map(|_| Val::I(s.buf(rng.f64s(n)))).collect();
            let (tot, fl) = (s.buf(rng.f64s(n)), s.buf(vec![0; 4 * n]));
            let rest = [Val::I(tot), Val::I(fl), Val::F64(16.0), Val::F64(100.0), Val::I(2), nn];
            s.launch(&p, name, g, b, &[&bufs[..], &rest[..]].concat())
        }
        "pointer_table" => {
            let srcs: Vec<u64> = (0..4).map(|_| s.buf(rng.f32s(n))).collect();
            let dsts: Vec<u64> = (0..2).map(|_| s.buf(vec![0; 4 * n])).collect();
            let st = s.buf(srcs.iter().flat_map(|a| a.to_le_bytes()).collect());
            let dt = s.buf(dsts.iter().flat_map(|a| a.to_le_bytes()).collect());
            let w = s.buf(rng.f32s(2));
            s.launch(&p, name, g, b, &[Val::I(st), Val::I(dt), Val::I(w), nn])
        }
        "reduce_sum" => {
            let (i, o) = (s.buf(rng.f32s(n)), s.buf(vec![0; 4 * g[0] as usize]));
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(o), nn])
        }
        "saxpy" => {
            let (x, y) = (s.buf(rng.f32s(n)), s.buf(rng.f32s(n)));
            s.launch(&p, name, g, b, &[nn, Val::F32(1.75), Val::I(x), Val::I(y)])
        }
        "sgemm_reg" => {
            // C is M x N (N = n), A is M x K, B is K x N, all row-major with padded rows.
            let (m, nc, k) = (g[1] as usize * 32 - 9, n, n % 29 + 5);
            let (lda, ldb, ldc) = (k + 1, nc + 3, nc + 2);
            let (a, bm, c) = (s.buf(rng.f32s(m * lda)), s.buf(rng.f32s(k * ldb)), s.buf(rng.f32s(m * ldc)));
            let i = |x: usize| Val::I(x as u64);
            let v = [
                i(m),
                i(nc),
                i(k),
                Val::F32(0.75),
                Val::I(a),
                i(lda),
                Val::I(bm),
                i(ldb),
                Val::F32(-1.5),
                Val::I(c),
                i(ldc),
            ];
            s.launch(&p, "sgemm_reg4x4", g, b, &v)
        }
        "sha256" => {
            let (m, d) = (s.buf(rng.bytes(64 * n)), s.buf(vec![0; 32 * n]));
            s.launch(&p, "sha256_blocks", g, b, &[Val::I(m), Val::I(d), nn])
        }
        "stencil5" => {
            // nx = n; the grid covers (grid.x * block.x) x (grid.y * block.y) cells.
            let (nx, ny) = (n as u64, (g[1] * b[1]) as u64 - 3);
            let pitch = nx + 2;
            let cells = (pitch * (ny + 3)) as usize;
            let (i, o) = (s.buf(rng.f32s(cells)), s.buf(vec![0; 4 * cells]));
            let v = [Val::I(i), Val::I(o), Val::I(nx), Val::I(ny), Val::I(pitch), Val::F32(0.5), Val::F32(0.125)];
            s.launch(&p, name, g, b, &v)
        }
        "strided_sum" => {
            let (rows, cols, stride) = (7u64, n as u64, n as u64 + 3);
            let (m, c) = (s.buf(rng.f32s((rows * stride) as usize)), s.buf(vec![0; 4 * cols as usize]));
            s.launch(&p, name, g, b, &[Val::I(m), Val::I(c), Val::I(rows), Val::I(cols), Val::I(stride)])
        }
        "transpose_tiled" => {
            let (w, h) = (n as u64, 50u64);
            let (o, i) = (s.buf(vec![0; 4 * (w * h) as usize]), s.buf(rng.f32s((w * h) as usize)));
            s.launch(&p, name, g, b, &[Val::I(o), Val::I(i), Val::I(w), Val::I(h)])
        }
        "vector_add" => {
            let (a, bb, c) = (s.buf(rng.f32s(n)), s.buf(rng.f32s(n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, name, g, b, &[Val::I(a), Val::I(bb), Val::I(c), nn])
        }
        "vector_types" => {
            let (pos, cell) = (s.buf(rng.f32s(4 * n)), s.buf(rng.u32s(2 * n)));
            let (o, co) = (s.buf(vec![0; 16 * n]), s.buf(vec![0; 8 * n]));
            s.launch(&p, name, g, b, &[Val::I(pos), Val::I(cell), Val::I(o), Val::I(co), Val::F32(0.5), nn])
        }
        "xorshift64" => {
            let (st, o) = (s.buf(rng.bytes(8 * n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, name, g, b, &[Val::I(st), Val::I(o), Val::I(3), nn])
        }
        "stress_spill" => {
            // Values in [0, 0.5) keep the 288-step recurrence finite.
            let small = |rng: &mut Rng, k: usize| -> Vec<u8> {
                (0..k).flat_map(|_| ((rng.next() % 4096) as f32 / 8192.0).to_le_bytes()).collect()
            };
            let small64 = |rng: &mut Rng, k: usize| -> Vec<u8> {
                (0..k).flat_map(|_| ((rng.next() % 4096) as f64 / 8192.0).to_le_bytes()).collect()
            };
            let i = s.buf(small(rng, 288 * threads));
            let d = s.buf(small64(rng, 16 * threads));
            let (o, od) = (s.buf(vec![0; 4 * threads]), s.buf(vec![0; 8 * threads]));
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(d), Val::I(o), Val::I(od)])
        }
        other => panic!("no launch for sample {other}"),
    };
    let bufs = l.global.regions().map(|(_, b, _)| b).collect();
    (p, l, bufs)
}

/// How an output buffer of a sample with approximate instructions is compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Elem {
    /// Bit for bit.
    Exact,
    /// As f32 values within the sample's tolerance.
    F32,
    /// As f64 values within the sample's tolerance.
    F64,
}

/// For the samples that use `.approx` instructions (whose results PTX bounds but does
/// not define, and which the simulator perturbs by its MUFU error model): each buffer's
/// comparison, in allocation order, and the accepted error `|a - b| <= tol * (|a| + 1)`
/// (NaN only against NaN). The approximation errors (a few ulp per MUFU, see
/// `tests/exec_float.rs` for the per-instruction bounds) accumulate through sums with
/// cancellation, hence the loose relative-plus-absolute bound. `None`: bit for bit.
pub fn sample_tolerance(name: &str) -> Option<(&'static [Elem], f64)> {
    use Elem::*;
    match name {
        "nbody" => Some((&[Exact, F32, F32, F32], 1e-3)),
        "black_scholes" => Some((&[Exact, Exact, Exact, F32, F32], 1e-4)),
        "float_math" => Some((&[Exact, Exact, Exact, Exact, F32, F64, Exact], 1e-4)),
        _ => None,
    }
}

/// Samples that read textures or surfaces: they need images bound to their handle
/// parameters (`run --texture/--surface`), which these launches do not make; they run
/// with images against reference values in `tests/texture_forms.rs` and
/// `tests/surfaces.rs` (`tex_sampler`).
pub const IMAGE_SAMPLES: &[&str] = &["surf_write", "tex_bilinear", "tex_sampler"];

pub const SAMPLES: &[&str] = &[
    "atomic_max_f32",
    "bitonic_sort",
    "black_scholes",
    "block_scan",
    "bytes_shorts",
    "clamp_select",
    "const_table",
    "daxpy",
    "device_globals",
    "float_math",
    "generic_call",
    "histogram_atomic",
    "int_ops",
    "local_array",
    "many_params",
    "nbody",
    "nvcc_matvec",
    "nvcc_particles",
    "nvcc_scan",
    "nvcc_style",
    "pair_dist_f64",
    "pointer_table",
    "reduce_sum",
    "saxpy",
    "sgemm_reg",
    "sha256",
    "stencil5",
    "stress_spill",
    "strided_sum",
    "transpose_tiled",
    "vector_add",
    "vector_types",
    "warp_reduce",
    "xorshift64",
];

/// Compiles `src` with every checker on (both allocation checkers, the carry-flag and
/// hazard checkers), runs kernel `k` as one CTA of `threads` threads with one buffer of
/// `bytes` bytes (filled with 0xcd) on both executors under a limit of `max_steps`, asserts
/// that they agree, and returns the buffer as the interpreter left it (panics with the
/// diagnostics or the differences otherwise).
pub fn run_both_checked(src: &str, bytes: usize, threads: u32, max_steps: u64) -> Vec<u8> {
    use ptx2sass::exec::ptx::args::{self, Arg};
    let mut opts = Options::default();
    opts.regalloc.verify = true;
    opts.check_hazards = true;
    let out = driver::compile(src, &opts)
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()));
    let program = out.program.expect("a program");
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let arg = [Arg::Buf(vec![0xcd; bytes])];
    let launch = args::launch(&module, "k", [1, 1, 1], [threads, 1, 1], &arg, max_steps).unwrap();
    let (want, got, diff) = ptx2sass::exec::compare(&module, &program, &launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(diff.is_empty(), "executors differ: {diff:?}\n{program}");
    let w = args::buffer(&want.global, "arg0").expect("buffer").to_vec();
    assert_eq!(w, args::buffer(&got.global, "arg0").expect("buffer"));
    w
}
