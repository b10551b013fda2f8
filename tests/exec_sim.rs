//! The SPA 5.0 simulator (`exec::sim`) on the compiler's output: every sample kernel runs
//! to completion on a small launch with random inputs (several completion-order seeds),
//! some against a reference computed here, and hand-broken programs (a missing wait, a
//! too-short stall, an overwritten store source, a wrong Plg) are caught.

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::exec::{ExecError, GLOBAL_BASE, Launch, Memory, sim};
use ptx2sass::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use ptx2sass::sass::op::Op;
use ptx2sass::sass::program::{Ctrl, Program, SassFunction, Scheduled};

fn compile(src: &str) -> Program {
    let opts = Options { emit: Emit::Sass, ..Options::default() };
    match driver::compile(src, &opts) {
        Ok(o) => o.program.expect("a program"),
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("ptx", src).render_all(&d)),
    }
}

fn sample(name: &str) -> Program {
    let path = format!("{}/samples/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    compile(&std::fs::read_to_string(path).expect("sample exists"))
}

/// SplitMix64 for test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn u32s(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| (self.next() as u32).to_le_bytes()).collect()
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// Floats in [-8, 8) with 12 fractional bits.
    fn f32s(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| ((self.next() % 65536) as f32 / 4096.0 - 8.0).to_le_bytes()).collect()
    }
    fn f64s(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| ((self.next() % (1 << 40)) as f64 / (1u64 << 36) as f64 - 8.0).to_le_bytes()).collect()
    }
}

/// A parameter value.
#[derive(Clone, Copy, Debug)]
enum Val {
    /// An integer (or pointer) truncated to the parameter's size.
    I(u64),
    F32(f32),
    F64(f64),
}

/// A launch being built: global buffers, then parameters.
struct Setup {
    global: Memory,
    next: u64,
    bufs: Vec<u64>,
}

impl Setup {
    fn new() -> Setup {
        Setup { global: Memory::new(), next: GLOBAL_BASE, bufs: vec![] }
    }
    /// Allocates a global buffer holding `bytes`; returns its address.
    fn buf(&mut self, bytes: Vec<u8>) -> u64 {
        let at = self.next;
        let name = format!("buf{}", self.bufs.len());
        self.next += (bytes.len() as u64).div_ceil(0x1000).max(1) * 0x1000 + 0x1000;
        self.global.alloc(&name, at, bytes).expect("disjoint buffers");
        self.bufs.push(at);
        at
    }
    fn launch(self, p: &Program, kernel: &str, grid: [u32; 3], block: [u32; 3], vals: &[Val]) -> Launch {
        let f = p.functions.iter().find(|f| f.name == kernel).expect("kernel");
        assert_eq!(f.params.len(), vals.len(), "{kernel}: parameter count");
        let mut params = vec![];
        for ((off, ty, _), v) in f.params.iter().zip(vals) {
            let o = *off as usize - 0x140;
            let size: usize = ty.trim_start_matches(".")[1..].parse::<usize>().expect("scalar param") / 8;
            let bytes = match *v {
                Val::I(x) => x.to_le_bytes()[..size].to_vec(),
                Val::F32(x) => x.to_le_bytes().to_vec(),
                Val::F64(x) => x.to_le_bytes().to_vec(),
            };
            assert_eq!(bytes.len(), size, "{kernel}: parameter at 0x{off:x} of type {ty}");
            if params.len() < o + size {
                params.resize(o + size, 0);
            }
            params[o..o + size].copy_from_slice(&bytes);
        }
        Launch { kernel: kernel.into(), grid, block, params, global: self.global, seed: 0, step_limit: 5_000_000 }
    }
}

fn read_u32s(m: &Memory, at: u64, n: usize) -> Vec<u32> {
    (0..n).map(|k| m.read_uint("global", at + 4 * k as u64, 4).unwrap() as u32).collect()
}

fn read_f32s(m: &Memory, at: u64, n: usize) -> Vec<f32> {
    read_u32s(m, at, n).into_iter().map(f32::from_bits).collect()
}

const SEEDS: [u64; 3] = [1, 0xdead_beef, 42];

/// Runs `launch` with every seed; all runs must succeed and agree.
fn run_all(p: &Program, launch: &Launch) -> Memory {
    let mut first: Option<Memory> = None;
    for seed in SEEDS {
        let l = Launch { seed, ..launch.clone() };
        let out = match sim::run_report(p, &l) {
            Ok(r) => {
                for n in &r.notes {
                    eprintln!("note: {n}");
                }
                r.outcome
            }
            Err(e) => panic!("`{}` with seed {seed}: {e}\n{p}", launch.kernel),
        };
        assert!(out.steps > 0);
        match &first {
            None => first = Some(out.global),
            Some(m) => assert!(m.diff(&out.global).is_empty(), "seeds disagree: {:?}", m.diff(&out.global)),
        }
    }
    first.expect("a run")
}

/// Builds the launch of one sample on random inputs: (program, launch, buffer addresses).
fn sample_launch(name: &str, rng: &mut Rng) -> (Program, Launch, Vec<u64>) {
    let p = sample(name);
    let mut s = Setup::new();
    let n = 100usize;
    let (g, b) = ([2, 1, 1], [64, 1, 1]);
    let nn = Val::I(n as u64);
    let l = match name {
        "block_scan" => {
            let i = s.buf(rng.u32s(512));
            let o = s.buf(vec![0; 2048]);
            let t = s.buf(vec![0; 8]);
            s.launch(&p, name, g, [256, 1, 1], &[Val::I(i), Val::I(o), Val::I(t)])
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
        "daxpy" => {
            let (x, y) = (s.buf(rng.f64s(n)), s.buf(rng.f64s(n)));
            s.launch(&p, name, g, b, &[nn, Val::F64(1.5), Val::I(x), Val::I(y)])
        }
        "generic_call" => {
            let (a, bb) = (s.buf(rng.f32s(3 * n)), s.buf(rng.f32s(3 * n)));
            let (sums, dots) = (s.buf(rng.f32s(n)), s.buf(vec![0; 4 * n]));
            s.launch(&p, name, g, b, &[Val::I(a), Val::I(bb), Val::I(sums), Val::I(dots), nn])
        }
        "local_array" => {
            let (per, stride) = (5usize, 37usize);
            let d = s.buf(rng.bytes(128 + per * stride));
            let h = s.buf(vec![0; 128 * 16 * 4]);
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
            let (i, o) = (s.buf(rng.f32s(200)), s.buf(vec![0; 8]));
            s.launch(&p, name, g, b, &[Val::I(i), Val::I(o), Val::I(200)])
        }
        "saxpy" => {
            let (x, y) = (s.buf(rng.f32s(n)), s.buf(rng.f32s(n)));
            s.launch(&p, name, g, b, &[nn, Val::F32(1.75), Val::I(x), Val::I(y)])
        }
        "stencil5" => {
            let (nx, ny, pitch) = (14u64, 13u64, 16u64);
            let (i, o) = (s.buf(rng.f32s(16 * 16)), s.buf(vec![0; 4 * 16 * 16]));
            let v = [Val::I(i), Val::I(o), Val::I(nx), Val::I(ny), Val::I(pitch), Val::F32(0.5), Val::F32(0.125)];
            s.launch(&p, name, [2, 2, 1], [8, 8, 1], &v)
        }
        "strided_sum" => {
            let (rows, cols, stride) = (7u64, 100u64, 103u64);
            let (m, c) = (s.buf(rng.f32s((rows * stride) as usize)), s.buf(vec![0; 4 * cols as usize]));
            s.launch(&p, name, g, b, &[Val::I(m), Val::I(c), Val::I(rows), Val::I(cols), Val::I(stride)])
        }
        "transpose_tiled" => {
            let (w, h) = (40u64, 50u64);
            let (o, i) = (s.buf(vec![0; 4 * 40 * 50]), s.buf(rng.f32s(40 * 50)));
            s.launch(&p, name, [2, 2, 1], [32, 8, 1], &[Val::I(o), Val::I(i), Val::I(w), Val::I(h)])
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
        other => panic!("no launch for sample {other}"),
    };
    let bufs = l.global.regions().map(|(_, b, _)| b).collect();
    (p, l, bufs)
}

const SAMPLES: &[&str] = &[
    "block_scan",
    "bytes_shorts",
    "clamp_select",
    "const_table",
    "daxpy",
    "generic_call",
    "local_array",
    "many_params",
    "nvcc_style",
    "pair_dist_f64",
    "pointer_table",
    "reduce_sum",
    "saxpy",
    "stencil5",
    "strided_sum",
    "transpose_tiled",
    "vector_add",
    "vector_types",
    "xorshift64",
];

#[test]
fn every_sample_has_a_launch() {
    let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".ptx").map(String::from))
        .collect();
    names.sort();
    assert_eq!(names, SAMPLES.iter().map(|s| s.to_string()).collect::<Vec<_>>());
}

#[test]
fn every_sample_runs() {
    let mut rng = Rng(7);
    for name in SAMPLES {
        let (p, l, _) = sample_launch(name, &mut rng);
        let out = run_all(&p, &l);
        assert!(!out.diff(&l.global).is_empty() || *name == "nothing", "{name} wrote nothing");
    }
}

fn f32_at(bytes: &[u8], k: usize) -> f32 {
    f32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap())
}

fn u32_at(bytes: &[u8], k: usize) -> u32 {
    u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap())
}

fn region(m: &Memory, at: u64) -> Vec<u8> {
    m.regions().find(|(_, b, _)| *b == at).expect("buffer").2.to_vec()
}

/// Samples whose results are checked against a reference computed here.
#[test]
fn sample_results_match_references() {
    let mut rng = Rng(99);
    // vector_add: c[i] = a[i] + b[i] for i < 100, the rest untouched.
    let (p, l, b) = sample_launch("vector_add", &mut rng);
    let out = run_all(&p, &l);
    let (a, bb) = (region(&l.global, b[0]), region(&l.global, b[1]));
    let want: Vec<f32> = (0..128).map(|i| if i < 100 { f32_at(&a, i) + f32_at(&bb, i) } else { 0.0 }).collect();
    assert_eq!(read_f32s(&out, b[2], 100), want[..100]);

    // saxpy: y = fma(a, x, y).
    let (p, l, b) = sample_launch("saxpy", &mut rng);
    let out = run_all(&p, &l);
    let (x, y) = (region(&l.global, b[0]), region(&l.global, b[1]));
    let want: Vec<f32> = (0..100).map(|i| 1.75f32.mul_add(f32_at(&x, i), f32_at(&y, i))).collect();
    assert_eq!(read_f32s(&out, b[1], 100), want);

    // reduce_sum: the tree of the source, two CTAs of 64 threads over 200 inputs.
    let (p, l, b) = sample_launch("reduce_sum", &mut rng);
    let out = run_all(&p, &l);
    let inp = region(&l.global, b[0]);
    for cta in 0..2usize {
        let mut s: Vec<f32> = (0..64)
            .map(|t| {
                let i = cta * 128 + t;
                let mut v = if i < 200 { f32_at(&inp, i) } else { 0.0 };
                if i + 64 < 200 {
                    v += f32_at(&inp, i + 64);
                }
                v
            })
            .collect();
        let mut h = 32;
        while h > 0 {
            for t in 0..h {
                s[t] += s[t + h];
            }
            h >>= 1;
        }
        assert_eq!(read_f32s(&out, b[1], 2)[cta], s[0], "reduce_sum CTA {cta}");
    }

    // block_scan: inclusive prefix sums per CTA of 256 and the CTA totals.
    let (p, l, b) = sample_launch("block_scan", &mut rng);
    let out = run_all(&p, &l);
    let inp = region(&l.global, b[0]);
    let mut want = vec![];
    let mut totals = vec![];
    for cta in 0..2 {
        let mut acc = 0u32;
        for t in 0..256 {
            acc = acc.wrapping_add(u32_at(&inp, cta * 256 + t));
            want.push(acc);
        }
        totals.push(acc);
    }
    assert_eq!(read_u32s(&out, b[1], 512), want);
    assert_eq!(read_u32s(&out, b[2], 2), totals);

    // xorshift64, 3 steps.
    let (p, l, b) = sample_launch("xorshift64", &mut rng);
    let out = run_all(&p, &l);
    let st = region(&l.global, b[0]);
    for i in 0..100 {
        let mut x = u64::from_le_bytes(st[8 * i..8 * i + 8].try_into().unwrap());
        for _ in 0..3 {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
        }
        assert_eq!(out.read_uint("global", b[0] + 8 * i as u64, 8).unwrap(), x, "state {i}");
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let f = ((r >> 40) as u32 as f32) * (1.0 / 16_777_216.0);
        assert_eq!(read_f32s(&out, b[1] + 4 * i as u64, 1)[0], f, "out {i}");
    }

    // local_array: 16-bin histograms of data[t + k * 37], k < 5.
    let (p, l, b) = sample_launch("local_array", &mut rng);
    let out = run_all(&p, &l);
    let data = region(&l.global, b[0]);
    for t in 0..128 {
        let mut bins = [0u32; 16];
        for k in 0..5 {
            bins[(data[t + 37 * k] & 15) as usize] += 1;
        }
        assert_eq!(read_u32s(&out, b[1] + 64 * t as u64, 16), bins, "thread {t}");
    }

    // transpose_tiled: out[x * h + y] = in[y * w + x], w = 40, h = 50.
    let (p, l, b) = sample_launch("transpose_tiled", &mut rng);
    let out = run_all(&p, &l);
    let inp = region(&l.global, b[1]);
    let got = read_u32s(&out, b[0], 2000);
    for y in 0..50 {
        for x in 0..40 {
            assert_eq!(got[x * 50 + y], u32_at(&inp, y * 40 + x), "({x}, {y})");
        }
    }

    // bytes_shorts with gain -3.
    let (p, l, b) = sample_launch("bytes_shorts", &mut rng);
    let out = run_all(&p, &l);
    let (pix, off) = (region(&l.global, b[0]), region(&l.global, b[1]));
    for i in 0..100 {
        let o = i16::from_le_bytes([off[2 * i], off[2 * i + 1]]) as i32;
        let v = (pix[i] as i32 - 128) * -3 + o;
        assert_eq!(out.read_uint("global", b[2] + 2 * i as u64, 2).unwrap(), v as u16 as u64, "out {i}");
        assert_eq!(out.read_uint("global", b[3] + i as u64, 1).unwrap(), if v < 0 { 0 } else { 255 }, "mask {i}");
    }

    // strided_sum: 7 rows, stride 103.
    let (p, l, b) = sample_launch("strided_sum", &mut rng);
    let out = run_all(&p, &l);
    let m = region(&l.global, b[0]);
    let want: Vec<f32> = (0..100).map(|c| (0..7).fold(0.0f32, |acc, r| acc + f32_at(&m, r * 103 + c))).collect();
    assert_eq!(read_f32s(&out, b[1], 100), want);
}

/// Replaces `func.code` after inserting `s` at `at` (branch targets behind it move).
fn insert(func: &mut SassFunction, at: usize, s: Scheduled) {
    for x in func.code.iter_mut() {
        for src in x.instr.srcs.iter_mut() {
            if let SrcKind::Label(t) = src.kind
                && t as usize >= at
            {
                src.kind = SrcKind::Label(t + 1);
            }
        }
    }
    func.code.insert(at, s);
}

fn expect_hazard(p: &Program, l: &Launch, what: &str) -> String {
    match sim::run(p, l) {
        Err(ExecError::Hazard(m)) => {
            assert!(m.contains(what), "hazard message `{m}` lacks `{what}`");
            m
        }
        other => panic!("expected a hazard ({what}), got {other:?}\n{p}"),
    }
}

/// Registers a general-purpose destination or source operand covers.
fn regs_of(r: &RegRef) -> Vec<u8> {
    match r.reg {
        Reg::R(x) if x != 255 => (x..x + r.n).collect(),
        _ => vec![],
    }
}

fn dst_regs(i: &Instr) -> Vec<u8> {
    i.dsts.iter().flat_map(|d| if let Dst::Reg(r) = d { regs_of(r) } else { vec![] }).collect()
}

fn src_regs(i: &Instr) -> Vec<u8> {
    i.srcs.iter().flat_map(|s| s.gprs().map(|r| regs_of(&r)).unwrap_or_default()).collect()
}

#[test]
fn missing_wait_on_a_load_is_caught() {
    let (p, l, _) = sample_launch("vector_add", &mut Rng(3));
    run_all(&p, &l);
    let f = &p.functions[0];
    let ldg = f.code.iter().position(|s| matches!(s.instr.op, Op::Ldg(_))).expect("an LDG");
    let loaded = dst_regs(&f.code[ldg].instr);
    let consumer = (ldg + 1..f.code.len())
        .find(|&k| src_regs(&f.code[k].instr).iter().any(|r| loaded.contains(r)))
        .expect("a consumer of the load");
    assert_ne!(f.code[consumer].ctrl.wait, 0, "the consumer waits");
    let mut broken = p.clone();
    broken.functions[0].code[consumer].ctrl.wait = 0;
    for seed in SEEDS {
        let m = expect_hazard(&broken, &Launch { seed, ..l.clone() }, "without waiting for the write barrier");
        assert!(m.contains("LDG"), "{m}");
    }
}

#[test]
fn too_short_stall_on_an_alu_dependence_is_caught() {
    let (p, l, _) = sample_launch("vector_add", &mut Rng(3));
    let f = &p.functions[0];
    let alu = |k: usize| f.code[k].instr.op.info().unit == ptx2sass::sass::op::Unit::Alu;
    let k = (0..f.code.len() - 1)
        .find(|&k| {
            alu(k)
                && alu(k + 1)
                && f.code[k + 1].ctrl.wait == 0
                && src_regs(&f.code[k + 1].instr).iter().any(|r| dst_regs(&f.code[k].instr).contains(r))
        })
        .expect("back-to-back dependent ALU instructions");
    assert!(f.code[k].ctrl.stall >= 6);
    for stall in [1u8, 5] {
        let mut broken = p.clone();
        broken.functions[0].code[k].ctrl.stall = stall;
        expect_hazard(&broken, &l, "the stall counts are shorter than its fixed latency");
    }
}

#[test]
fn overwritten_store_source_is_caught() {
    let (p, l, b) = sample_launch("vector_add", &mut Rng(3));
    let good = run_all(&p, &l);
    let f = &p.functions[0];
    let stg = f.code.iter().position(|s| matches!(s.instr.op, Op::Stg(_))).expect("an STG");
    let data = f.code[stg].instr.srcs[1].as_reg().expect("data register");
    let rd = f.code[stg].ctrl.rd.unwrap_or(4);
    let clobber = |wait: u8| {
        let mut q = p.clone();
        q.functions[0].code[stg].ctrl.rd = Some(rd);
        let mov = Instr::new(Op::Mov32i, vec![Dst::Reg(data)], vec![Src::imm(0x7fc0_0000)]);
        insert(
            &mut q.functions[0],
            stg + 1,
            Scheduled { instr: mov, ctrl: Ctrl { stall: 1, wait, ..Ctrl::default() }, label: None },
        );
        q
    };
    expect_hazard(&clobber(0), &l, "may still read it");
    // Waiting on the read barrier makes the overwrite safe: same result as before.
    let fixed = run_all(&clobber(1 << rd), &l);
    assert!(fixed.diff(&good).is_empty());
    assert_eq!(read_f32s(&fixed, b[2], 1), read_f32s(&good, b[2], 1));
}

const GENERIC_SHARED: &str = r#"
.version 8.5
.target sm_50
.address_size 64
.visible .entry gshared(.param .u64 out)
{
    .shared .align 4 .b32 sh[64];
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    mov.u64 %rd1, sh;
    cvta.shared.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd2, %rd3;
    mul.lo.u32 %r2, %r1, 7;
    st.u32 [%rd4], %r2;
    bar.sync 0;
    xor.b32 %r3, %r1, 1;
    mul.wide.u32 %rd5, %r3, 4;
    add.s64 %rd6, %rd2, %rd5;
    ld.u32 %r4, [%rd6];
    ld.param.u64 %rd7, [out];
    cvta.to.global.u64 %rd7, %rd7;
    add.s64 %rd7, %rd7, %rd3;
    st.global.u32 [%rd7], %r4;
    ret;
}
"#;

#[test]
fn wrong_plg_is_caught() {
    let p = compile(GENERIC_SHARED);
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 64]);
    let l = s.launch(&p, "gshared", [1, 1, 1], [64, 1, 1], &[Val::I(out)]);
    let good = run_all(&p, &l);
    let want: Vec<u32> = (0..64u32).map(|t| (t ^ 1) * 7).collect();
    assert_eq!(read_u32s(&good, out, 64), want);
    let f = &p.functions[0];
    let generic: Vec<usize> =
        (0..f.code.len()).filter(|&k| matches!(f.code[k].instr.op, Op::St(_) | Op::Ld(_))).collect();
    assert_eq!(generic.len(), 2, "one generic store and one generic load\n{p}");
    for k in generic {
        let i = &f.code[k].instr;
        let at = if matches!(i.op, Op::St(_)) { 2 } else { 1 };
        assert!(matches!(i.srcs[at].kind, SrcKind::Pred(_)), "Plg operand of {i:?}");
        // Plg = PT: the shared-window address goes to the global space.
        let mut broken = p.clone();
        broken.functions[0].code[k].instr.srcs[at] = Src::pt();
        match sim::run(&broken, &l) {
            Err(ExecError::OutOfBounds { space: "global", addr, .. }) => {
                assert_eq!(addr >> 24, sim::SHARED_WINDOW as u64 >> 24, "a shared-window address");
            }
            Ok(o) => assert!(!o.global.diff(&good).is_empty(), "a wrong Plg changes nothing"),
            other => panic!("expected a global out-of-bounds access, got {other:?}"),
        }
    }
    // And the other way: generic_call's loads of global data steered to shared (Plg false).
    let (p, l, _) = sample_launch("generic_call", &mut Rng(5));
    run_all(&p, &l);
    let ld = p.functions[0].code.iter().position(|s| matches!(s.instr.op, Op::Ld(_))).expect("LD");
    let mut q = p.clone();
    q.functions[0].code[ld].instr.srcs[1] = Src::pred(ptx2sass::sass::instr::PT, true);
    assert!(matches!(sim::run(&q, &l), Err(ExecError::OutOfBounds { space: "shared", .. })));
}

const DIVERGENT: &str = r#".version 8.5
.target sm_50
.address_size 64
.visible .entry divergent(.param .u64 out)
{
    .shared .align 4 .b32 sh[64];
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, 0;
    mov.u32 %r3, 0;
    and.b32 %r4, %r1, 7;
LOOP:
    and.b32 %r5, %r3, 1;
    setp.eq.u32 %p1, %r5, 0;
    @%p1 bra EVEN;
    mul.lo.u32 %r6, %r3, 3;
    add.u32 %r2, %r2, %r6;
    bra.uni NEXT;
EVEN:
    xor.b32 %r2, %r2, %r3;
NEXT:
    add.u32 %r3, %r3, 1;
    setp.le.u32 %p2, %r3, %r4;
    setp.le.and.u32 %p3, %r2, 40, %p2;
    @%p3 bra LOOP;
DONE:
    mul.wide.u32 %rd1, %r1, 4;
    mov.u64 %rd2, sh;
    add.s64 %rd3, %rd2, %rd1;
    st.shared.u32 [%rd3], %r2;
    bar.sync 0;
    xor.b32 %r7, %r1, 33;
    mul.wide.u32 %rd4, %r7, 4;
    add.s64 %rd5, %rd2, %rd4;
    ld.shared.u32 %r8, [%rd5];
    ld.param.u64 %rd6, [out];
    cvta.to.global.u64 %rd6, %rd6;
    add.s64 %rd7, %rd6, %rd1;
    st.global.u32 [%rd7], %r8;
    ret;
}
"#;

/// A divergent loop with a divergent if/else inside (PBK/BRK, SSY/SYNC), then a CTA
/// barrier that only works if the warps reconverged, checked against a reference.
#[test]
fn divergent_loop_reconverges() {
    let p = compile(DIVERGENT);
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 64]);
    let l = s.launch(&p, "divergent", [1, 1, 1], [64, 1, 1], &[Val::I(out)]);
    let got = read_u32s(&run_all(&p, &l), out, 64);
    let value = |tid: u32| {
        let (mut r2, mut r3, r4) = (0u32, 0u32, tid & 7);
        loop {
            if r3 & 1 == 1 {
                r2 = r2.wrapping_add(3 * r3);
            } else {
                r2 ^= r3;
            }
            r3 += 1;
            if !(r3 <= r4 && r2 <= 40) {
                break r2;
            }
        }
    };
    let want: Vec<u32> = (0..64).map(|t| value(t ^ 33)).collect();
    assert_eq!(got, want);
}

/// The two warps of a CTA wait at different barriers: a deadlock.
#[test]
fn barrier_deadlock_is_caught() {
    let src =
        DIVERGENT.replace("bar.sync 0;", "setp.lt.u32 %p1, %r1, 32;\n    @%p1 bar.sync 0;\n    @!%p1 bar.sync 1;");
    let p = compile(&src);
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 64]);
    let l = s.launch(&p, "divergent", [1, 1, 1], [64, 1, 1], &[Val::I(out)]);
    match sim::run(&p, &l) {
        Err(ExecError::Deadlock(m)) => assert!(m.contains("2 of 2 live warps wait"), "{m}"),
        other => panic!("expected a deadlock, got {other:?}\n{p}"),
    }
}
