//! The IEEE f32 forms `div.{rn,rz,rm,rp}{.ftz}.f32`, `div.full{.ftz}.f32`,
//! `rcp.{rn,rz,rm,rp}{.ftz}.f32` and `sqrt.{rn,rz,rm,rp}{.ftz}.f32` (`lower::arith::float32`: an
//! f32 fast path behind `FCHK.DIVIDE` or ptxas's exponent test, a called f64-based slow
//! path) on both executors, bit for bit: 4096 threads per launch, each on its own operands
//! drawn from the classes where a fast path goes wrong first (all-ones significands,
//! quotients and roots next to a rounding midpoint, exact quotients, the `2^±126`
//! boundaries, the edges of the fast paths' guards, huge and tiny quotients, zeros,
//! subnormals, infinities, NaNs, random bit patterns), under three simulator seeds (three
//! MUFU error functions, `exec::sim::arith::mufu`) and correctly rounded MUFU estimates.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{self, Launch, MufuModel};

const THREADS: u32 = 4096;

/// A kernel applying `op` (`%f3` from `%f1`, `%f2`) to the thread's pair of operands.
fn kernel(op: &str) -> String {
    format!(
        r#".version 7.8
.target sm_50
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 pout)
{{
  .reg .f32 %f<4>; .reg .b32 %r<3>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [pout];
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mad.lo.u32 %r1, %r2, 128, %r1;
  mul.wide.u32 %rd3, %r1, 8; add.u64 %rd4, %rd1, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4];
  {op}
  mul.wide.u32 %rd3, %r1, 4; add.u64 %rd5, %rd2, %rd3;
  st.global.f32 [%rd5], %f3;
  ret;
}}
"#
    )
}

/// A random significand (23 fraction bits) from one of the hard classes.
fn frac(rng: &mut Rng) -> u32 {
    match rng.next() % 6 {
        0 => 0x7f_ffff,                           // all ones
        1 => 0x7f_ffff - (rng.next() % 8) as u32, // next to all ones
        2 => (rng.next() % 8) as u32,             // next to a power of two
        3 => (rng.next() as u32 & 0xfff) << 11,   // short (exact products)
        _ => rng.next() as u32 & 0x7f_ffff,
    }
}

/// A biased exponent: the f32 range's ends, the fast paths' guard edges (`2^±100` of the
/// simulator's FCHK model, `2^-101` of `sqrt`, `2^126` of `rcp`), or moderate.
fn exp(rng: &mut Rng) -> u32 {
    const EDGES: [u32; 16] = [0, 1, 2, 3, 24, 25, 26, 27, 28, 127, 227, 228, 252, 253, 254, 255];
    match rng.next() % 4 {
        0 => EDGES[(rng.next() % EDGES.len() as u64) as usize],
        1 => 1 + (rng.next() % 254) as u32,
        _ => 127 - 30 + (rng.next() % 61) as u32,
    }
}

fn float(rng: &mut Rng) -> u32 {
    let sign = if rng.next().is_multiple_of(4) { 0x8000_0000 } else { 0 };
    match rng.next() % 16 {
        0 => rng.next() as u32,
        1 => sign | 0x7fc0_0000,
        _ => sign | exp(rng) << 23 | frac(rng),
    }
}

/// One operand pair: random, or a dividend making the quotient land next to a rounding
/// midpoint or on an exact value (`a = b * q` rounded, `q` a midpoint or a short number),
/// or a radicand next to the square of a midpoint (in `%f2`).
fn pair(rng: &mut Rng) -> (u32, u32) {
    let b = float(rng);
    match rng.next() % 4 {
        0 | 1 => (float(rng), b),
        _ => {
            let q = f32::from_bits(0x3f80_0000 | frac(rng)) as f64;
            let e = (rng.next() % 41) as i32 - 20;
            let mid = if rng.next().is_multiple_of(2) { q + 2f64.powi(-24) } else { q };
            let bb = f32::from_bits(b) as f64;
            let a = (bb * mid * 2f64.powi(e)) as f32;
            let x = (mid * mid * 2f64.powi(e & !1)) as f32;
            (a.to_bits(), if rng.next().is_multiple_of(3) { x.to_bits() } else { b })
        }
    }
}

/// Edge operands: the threads first run their cross product.
const EDGES: [u32; 40] = [
    0,
    0x8000_0000,
    0x7f80_0000,
    0xff80_0000,
    0x7fff_ffff,
    0x7f80_0001,
    1,
    0x8000_0001,
    0x007f_ffff,
    0x0040_0000,
    0x0080_0000,
    0x8080_0000,
    0x0080_0001,
    0x00ff_ffff,
    0x3f80_0000,
    0xbf80_0000,
    0x3fff_ffff,
    0xbfff_ffff,
    0x3f7f_ffff,
    0x3f80_0001,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f00_0000,
    0x7e80_0000,
    0x7e7f_ffff,
    0x0d00_0000,
    0x0cff_ffff,
    0x0d80_0000,
    0x0d7f_ffff,
    0x3400_0000,
    0x1a00_0000,
    0x19ff_ffff,
    0x6500_0000,
    0x64ff_ffff,
    0x4040_0000,
    0x4049_0fdb,
    0x3eaa_aaab,
    0x5f80_0000,
    0x2000_0000,
    0x4b7f_ffff,
];

/// Runs `op` on both executors for each MUFU model; panics on the first difference.
fn check(op: &str) {
    let src = kernel(op);
    let program = compile(&src);
    let (module, _) = ptx2sass::ptx::parse(&src).unwrap_or_else(|_| panic!("parses:\n{src}"));
    let mut rng = Rng::new(0xf32d + op.len() as u64 * 7919);
    let n = EDGES.len();
    let pairs: Vec<(u32, u32)> =
        (0..THREADS as usize).map(|t| if t < n * n { (EDGES[t / n], EDGES[t % n]) } else { pair(&mut rng) }).collect();
    let input: Vec<u8> = pairs.iter().flat_map(|(a, b)| [a.to_le_bytes(), b.to_le_bytes()].concat()).collect();
    let models =
        [(MufuModel::Perturbed, 1), (MufuModel::Perturbed, 2), (MufuModel::Perturbed, 3), (MufuModel::Nearest, 0)];
    for (mufu, seed) in models {
        let mut s = Setup::new();
        let pin = s.buf(input.clone());
        let pout = s.buf(vec![0xcd; THREADS as usize * 4]);
        let l = s.launch(&program, "k", [THREADS / 128, 1, 1], [128, 1, 1], &[Val::I(pin), Val::I(pout)]);
        let l = Launch { seed, mufu, step_limit: 50_000_000, ..l };
        let (want, got, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{op}: {e}"));
        if !diff.is_empty() {
            let read = |m: &exec::Memory, th: usize| m.read_uint("global", pout + 4 * th as u64, 4).unwrap();
            let th = (0..THREADS as usize).find(|t| read(&want.global, *t) != read(&got.global, *t)).expect("a thread");
            let (a, b) = pairs[th];
            panic!(
                "`{op}` ({mufu:?}, seed {seed}): thread {th}, operands {a:#010x} {b:#010x}: interpreter {:#010x}, simulator {:#010x}\n{program}",
                read(&want.global, th),
                read(&got.global, th)
            );
        }
    }
}

#[test]
fn division_in_every_mode() {
    for r in [".rn", ".rz", ".rm", ".rp", ".full"] {
        for ftz in ["", ".ftz"] {
            check(&format!("div{r}{ftz}.f32 %f3, %f1, %f2;"));
        }
    }
}

#[test]
fn reciprocal_in_every_mode() {
    for r in [".rn", ".rz", ".rm", ".rp"] {
        for ftz in ["", ".ftz"] {
            check(&format!("rcp{r}{ftz}.f32 %f3, %f2;"));
        }
    }
}

#[test]
fn square_root_in_every_mode() {
    for r in [".rn", ".rz", ".rm", ".rp"] {
        for ftz in ["", ".ftz"] {
            check(&format!("sqrt{r}{ftz}.f32 %f3, %f2;"));
        }
    }
}

/// Values live across slow-path calls: the operands, the running sum and the thread's
/// output address stay in registers the private convention of the slow paths leaves
/// alone (`ir::FuncAbi::preserves`: the callee saves every register it writes outside
/// R4..R7), on operands that take the slow paths (subnormals, huge quotients).
#[test]
fn values_live_across_slow_path_calls_survive_them() {
    check(
        "div.rn.f32 %f0, %f1, %f2; sqrt.rn.f32 %f3, %f1; add.f32 %f3, %f3, %f0; \
         rcp.rn.f32 %f0, %f2; add.f32 %f3, %f3, %f0; div.rz.f32 %f0, %f2, %f1; add.f32 %f3, %f3, %f0; \
         sqrt.rm.f32 %f0, %f2; add.f32 %f3, %f3, %f0;",
    );
}

/// Several forms in one kernel share one slow path subroutine per kind and mode.
#[test]
fn slow_paths_are_called_subroutines_shared_by_uses() {
    let op = "div.rn.f32 %f3, %f1, %f2; div.rn.f32 %f3, %f3, %f1; sqrt.rn.f32 %f3, %f3; rcp.rn.f32 %f3, %f3;";
    let program = compile(&kernel(op));
    let text = program.to_string();
    for name in
        ["$__ptx2sass_div_rn_f32_slowpath", "$__ptx2sass_sqrt_rn_f32_slowpath", "$__ptx2sass_rcp_rn_f32_slowpath"]
    {
        let calls = text.lines().filter(|l| l.contains("CAL") && l.contains(name)).count();
        let want = if name.contains("div") { 2 } else { 1 };
        assert_eq!(calls, want, "{name}\n{text}");
    }
    assert_eq!(text.matches("FCHK.DIVIDE").count(), 2, "{text}");
    check(op);
}
