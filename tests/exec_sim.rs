//! The SPA 5.0 simulator (`exec::sim`) on the compiler's output: every sample kernel runs
//! to completion on a small launch with random inputs (several completion-order seeds),
//! some against a reference computed here, and hand-broken programs (a missing wait, a
//! too-short stall, an overwritten store source, a wrong Plg) are caught.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{ExecError, Launch, Memory, sim};
use ptx2sass::sass::instr::{Dst, Instr, Reg, RegRef, Src, SrcKind};
use ptx2sass::sass::op::Op;
use ptx2sass::sass::program::{Ctrl, Program, SassFunction, Scheduled};

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
            // Samples with `.approx` instructions differ between seeds by design: each seed
            // is a different MUFU error function (`launches::sample_tolerance`).
            Some(_) if sample_tolerance(&launch.kernel).is_some() => {}
            Some(m) => assert!(m.diff(&out.global).is_empty(), "seeds disagree: {:?}", m.diff(&out.global)),
        }
    }
    first.expect("a run")
}

#[test]
fn every_sample_has_a_launch() {
    let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".ptx").map(String::from))
        .filter(|n| !IMAGE_SAMPLES.contains(&n.as_str()))
        .collect();
    names.sort();
    assert_eq!(names, SAMPLES.iter().map(|s| s.to_string()).collect::<Vec<_>>());
}

#[test]
fn every_sample_runs() {
    let mut rng = Rng::new(7);
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

/// Corpus kernels checked against outside references: `sha256` against the FIPS 180-4
/// example "abc" (one padded block, published digest), `bitonic_sort` against a sort of
/// each 512-key tile of its input, `nvcc_particles` (struct-by-value parameter, device
/// function) against its source evaluated here.
#[test]
fn corpus_results_match_references() {
    let p = sample("sha256");
    let mut s = Setup::new();
    let mut block = vec![0u8; 64];
    block[..4].copy_from_slice(b"abc\x80");
    block[63] = 24; // message length in bits, big-endian
    let (m, d) = (s.buf(block), s.buf(vec![0; 32]));
    let l = s.launch(&p, "sha256_blocks", [1, 1, 1], [32, 1, 1], &[Val::I(m), Val::I(d), Val::I(1)]);
    let out = run_all(&p, &l);
    let want = [0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223, 0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad];
    assert_eq!(read_u32s(&out, d, 8), want, "SHA-256(\"abc\")");

    let mut rng = Rng::new(5);
    for sh in sample_shapes("bitonic_sort") {
        let (p, l, b) = sample_launch_shape("bitonic_sort", sh, &mut rng);
        let out = run_all(&p, &l);
        let inp: Vec<u32> = read_u32s(&l.global, b[0], sh.n);
        let mut want = vec![];
        for tile in inp.chunks(512) {
            let mut t = tile.to_vec();
            t.sort_unstable();
            want.extend(t);
        }
        assert_eq!(read_u32s(&out, b[0], sh.n), want, "bitonic_sort {sh:?}");
    }

    // nvcc_particles: Box {lo_x, lo_y, hi_x, hi_y} = {-6, -5, 6, 5.5}, dt = 0.75.
    let (lo, hi) = ([-6.0f32, -5.0], [6.0f32, 5.5]);
    let reflect = |x: f32, lo: f32, hi: f32| {
        if x < lo {
            (lo + lo) - x
        } else if x > hi {
            (hi + hi) - x
        } else {
            x
        }
    };
    for sh in sample_shapes("nvcc_particles") {
        let (p, l, b) = sample_launch_shape("nvcc_particles", sh, &mut rng);
        let out = run_all(&p, &l);
        let pos = read_f32s(&l.global, b[0], 2 * sh.n);
        if sh.n.is_multiple_of(2) {
            let vel = read_f32s(&l.global, b[1], 2 * sh.n);
            let want: Vec<u32> = (0..2 * sh.n)
                .map(|k| reflect(0.75f32.mul_add(vel[k], pos[k]), lo[k % 2], hi[k % 2]).to_bits())
                .collect();
            assert_eq!(read_u32s(&out, b[0], 2 * sh.n), want, "nvcc_particles advance {sh:?}");
        } else {
            let inside = |k: usize| (0..2).all(|d| pos[2 * k + d] >= lo[d] && pos[2 * k + d] <= hi[d]);
            let want: Vec<u32> = (0..sh.n).map(|k| inside(k) as u32).collect();
            assert!(want.contains(&0) && want.contains(&1));
            assert_eq!(read_u32s(&out, b[1], sh.n), want, "nvcc_particles count_inside {sh:?}");
        }
    }
}

/// Samples whose results are checked against a reference computed here.
#[test]
fn sample_results_match_references() {
    let mut rng = Rng::new(99);
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
    let (p, l, _) = sample_launch("vector_add", &mut Rng::new(3));
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
    let (p, l, _) = sample_launch("vector_add", &mut Rng::new(3));
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
    let (p, l, b) = sample_launch("vector_add", &mut Rng::new(3));
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

/// Issue 22 item 6: MUFU reads its source after issue, so the simulator reports a source
/// overwritten before MUFU's read or write barrier is waited for (`black_scholes`).
#[test]
fn overwritten_mufu_source_is_caught() {
    let (p, l, _) = sample_launch("black_scholes", &mut Rng::new(3));
    let good = run_all(&p, &l);
    let f = &p.functions[0];
    let k = f.code.iter().position(|s| matches!(s.instr.op, Op::Mufu(_))).expect("a MUFU");
    let src = f.code[k].instr.srcs[0].as_reg().expect("source register");
    let rd = f.code[k].ctrl.rd.unwrap_or(4);
    let clobber = |wait: u8| {
        let mut q = p.clone();
        q.functions[0].code[k].ctrl.rd = Some(rd);
        q.functions[0].code[k].ctrl.stall = q.functions[0].code[k].ctrl.stall.max(2);
        // The source rewritten with its own value: only the timing changes.
        let mov = Instr::new(Op::Mov, vec![Dst::Reg(src)], vec![Src::reg(src)]);
        insert(
            &mut q.functions[0],
            k + 1,
            Scheduled { instr: mov, ctrl: Ctrl { stall: 6, wait, ..Ctrl::default() }, label: None },
        );
        q
    };
    expect_hazard(&clobber(0), &l, "may still read it");
    let fixed = run_all(&clobber(1 << rd), &l);
    assert!(fixed.diff(&good).is_empty());
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
    let (p, l, _) = sample_launch("generic_call", &mut Rng::new(5));
    run_all(&p, &l);
    let kf = p.functions.iter().position(|f| f.name == "generic_call").expect("the kernel");
    let ld = p.functions[kf].code.iter().position(|s| matches!(s.instr.op, Op::Ld(_))).expect("LD");
    let mut q = p.clone();
    q.functions[kf].code[ld].instr.srcs[1] = Src::pred(ptx2sass::sass::instr::PT, true);
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
