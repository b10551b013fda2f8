//! The whole-launch cycle model (`exec::sim::cycles`, `ptx2sass run --cycles`): stall
//! counts, memory latency, latency hiding across warps and SMs, occupancy, CTA barriers,
//! determinism.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{Launch, sim};
use ptx2sass::sass::program::Program;

/// `out[i] = in[i] * 3 + 1` for `i < n`: one global load, one store per thread.
const SCALE: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\
    .visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 n)\n{\n\
    .reg .b32 %r<8>;\n.reg .b64 %a<8>;\n.reg .pred %p;\n\
    ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pout];\nld.param.u32 %r1, [n];\n\
    mov.u32 %r2, %tid.x;\nmov.u32 %r3, %ctaid.x;\nmov.u32 %r4, %ntid.x;\nmad.lo.s32 %r5, %r3, %r4, %r2;\n\
    setp.ge.u32 %p, %r5, %r1;\n@%p ret;\n\
    mul.wide.u32 %a3, %r5, 4;\nadd.s64 %a4, %a1, %a3;\nadd.s64 %a5, %a2, %a3;\n\
    ld.global.u32 %r6, [%a4];\nmad.lo.s32 %r7, %r6, 3, 1;\nst.global.u32 [%a5], %r7;\nret;\n}\n";

fn launch(p: &Program, ctas: u32, block: u32, seed: u64) -> Launch {
    let n = (ctas * block) as usize;
    let mut s = Setup::new();
    let mut rng = Rng::new(7);
    let (i, o) = (s.buf(rng.u32s(n)), s.buf(vec![0; 4 * n]));
    Launch { seed, ..s.launch(p, "k", [ctas, 1, 1], [block, 1, 1], &[Val::I(i), Val::I(o), Val::I(n as u64)]) }
}

fn cycles(p: &Program, l: &Launch) -> u64 {
    sim::run_cycles(p, l).expect("runs").1.cycles
}

#[test]
fn one_warp_pays_the_memory_latency_and_its_stalls() {
    let p = compile(SCALE);
    let one = cycles(&p, &launch(&p, 1, 32, 1));
    // The load's 350 cycles (cycles::CYCLE_TABLE) plus the rest of the code.
    assert!((350..1000).contains(&one), "{one}");
    // Every stall count 4 cycles longer: each issue (one warp, nothing to overlap with)
    // waits 4 more cycles, except where a scoreboard wait dominates.
    let mut slow = p.clone();
    let issued = sim::run_cycles(&p, &launch(&p, 1, 32, 1)).unwrap().1.issued;
    for s in slow.functions[0].code.iter_mut() {
        s.ctrl.stall = (s.ctrl.stall + 4).min(15);
    }
    let longer = cycles(&slow, &launch(&slow, 1, 32, 1));
    eprintln!("one warp: {one} cycles, {issued} instructions; stalls + 4: {longer}");
    assert!(longer >= one + 2 * issued, "{one} -> {longer} ({issued} instructions)");
}

#[test]
fn warps_and_sms_hide_latency_until_occupancy_runs_out() {
    let p = compile(SCALE);
    let one = cycles(&p, &launch(&p, 1, 32, 1));
    // One CTA per SM (5 SMs): as long as one.
    let five = cycles(&p, &launch(&p, 5, 32, 1));
    assert!(five <= one + 10, "{one} vs {five}");
    // 8 warps per SM over 4 schedulers: their loads overlap, far less than 8x.
    let forty = cycles(&p, &launch(&p, 40, 32, 1));
    assert!(forty < 2 * one, "{one} vs {forty}");
    // 2,000 single-warp CTAs: 32 resident per SM (the CTA-slot limit), 13 waves.
    let (_, c) = sim::run_cycles(&p, &launch(&p, 2000, 32, 1)).unwrap();
    eprintln!("1 CTA {one}, 5 CTAs {five}, 40 CTAs {forty}, 2000 CTAs {}", c.cycles);
    assert_eq!(c.ctas_per_sm.0, 32);
    assert!(c.cycles > 10 * one && c.cycles < 40 * one, "{one} vs {}", c.cycles);
}

#[test]
fn cycles_are_deterministic_for_a_seed() {
    let mut rng = Rng::new(3);
    let (p, l, _) = sample_launch("reduce_sum", &mut rng);
    let a = sim::run_cycles(&p, &Launch { seed: 5, ..l.clone() }).unwrap().1;
    let b = sim::run_cycles(&p, &Launch { seed: 5, ..l }).unwrap().1;
    assert_eq!(a, b);
    assert!(a.cycles > 0 && a.issued > 0);
}

#[test]
fn cta_barriers_wait_for_the_slowest_warp() {
    // Warp 0 loads (350 cycles) before the barrier; warp 1 waits at it, then loads: the
    // launch takes two load latencies (one if warp 1 did not wait).
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
        .visible .entry k(.param .u64 pin, .param .u64 pout, .param .u32 n)\n{\n\
        .reg .b32 %r<8>;\n.reg .b64 %a<8>;\n.reg .pred %p;\n.shared .align 4 .b32 s[1];\n\
        ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pout];\nmov.u32 %r2, %tid.x;\n\
        setp.ne.u32 %p, %r2, 0;\n@%p bra W;\nld.global.u32 %r6, [%a1];\nst.shared.u32 [s], %r6;\n\
        W:\nbar.sync 0;\nld.shared.u32 %r7, [s];\nsetp.lt.u32 %p, %r2, 32;\n@%p bra D;\n\
        ld.global.u32 %r6, [%a1+4];\nadd.s32 %r7, %r7, %r6;\nD:\nmul.wide.u32 %a3, %r2, 4;\nadd.s64 %a5, %a2, %a3;\n\
        st.global.u32 [%a5], %r7;\nret;\n}\n";
    let p = compile(src);
    let c = cycles(&p, &launch(&p, 1, 64, 1));
    eprintln!("barrier kernel: {c} cycles");
    assert!(c > 2 * 350 + 28, "{c}");
}
