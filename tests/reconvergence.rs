//! Reconvergence seen by the executors (issue 23): the PTX interpreter runs a
//! warp-collective instruction with every lane that can still come to it, whatever the
//! code layout, and reports a `.sync` membermask lane that never does; the simulator
//! reports missing reconvergence in hand-broken SASS (a barrier reached by part of a
//! warp, an `SSY` pushed again before its `SYNC`) instead of a plausible result.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{self, ExecError, Launch, sim};
use ptx2sass::sass::op::Op;

/// Runs `launch` of `src` on both executors with three simulator seeds; memory must agree
/// bit for bit. Returns the interpreter's output buffer `out` (`words` 32-bit words).
fn run_both(src: &str, launch: &Launch, out: u64, words: usize) -> Vec<u32> {
    let program = compile(src);
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let mut got = None;
    for seed in [1, 7, 0xbeef] {
        let l = Launch { seed, ..launch.clone() };
        let (want, _, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{e}\n{program}"));
        assert!(diff.is_empty(), "{}: {} difference(s), first {:?}\n{program}", l.kernel, diff.len(), diff[0]);
        got =
            Some((0..words).map(|k| want.global.read_uint("global", out + 4 * k as u64, 4).unwrap() as u32).collect());
    }
    got.expect("a run")
}

/// A divergent if/else joining before a barrier.
const IF_BARRIER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\
    .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>;\n.reg .pred %p<2>;\n.reg .b64 %d<4>;\n\
    .shared .align 4 .b32 sh[64];\n\
    mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 1;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 bra EVEN;\n\
    mul.lo.u32 %r3, %r1, 7;\nadd.u32 %r3, %r3, 5;\nxor.b32 %r3, %r3, 99;\nmul.lo.u32 %r3, %r3, %r3;\n\
    add.u32 %r3, %r3, %r1;\nmul.lo.u32 %r3, %r3, 3;\nxor.b32 %r3, %r3, 17;\nadd.u32 %r3, %r3, 1;\n\
    mul.lo.u32 %r3, %r3, 11;\nxor.b32 %r3, %r3, %r1;\nadd.u32 %r3, %r3, 2;\nmul.lo.u32 %r3, %r3, 13;\n\
    add.u32 %r3, %r3, 9;\nbra.uni JOIN;\n\
    EVEN:\nmul.lo.u32 %r3, %r1, 3;\nJOIN:\nmul.wide.u32 %d1, %r1, 4;\nmov.u64 %d2, sh;\nadd.s64 %d2, %d2, %d1;\n\
    st.shared.u32 [%d2], %r3;\nbar.sync 0;\nxor.b32 %r2, %r1, 1;\nmul.wide.u32 %d1, %r2, 4;\nmov.u64 %d2, sh;\n\
    add.s64 %d2, %d2, %d1;\nld.shared.u32 %r3, [%d2];\nld.param.u64 %d3, [out];\nmul.wide.u32 %d1, %r1, 4;\n\
    add.s64 %d3, %d3, %d1;\nst.global.u32 [%d3], %r3;\nret;\n}\n";

/// Replaces every `op` of the kernel's code by a `NOP` (keeping the control fields).
fn without(p: &mut ptx2sass::sass::program::Program, op: Op) {
    for s in p.functions[0].code.iter_mut() {
        if s.instr.op == op {
            s.instr = ptx2sass::sass::instr::Instr::new(Op::Nop, vec![], vec![]);
        }
    }
}

#[test]
fn simulator_catches_a_barrier_reached_by_part_of_a_warp() {
    let mut p = compile(IF_BARRIER);
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 64]);
    let l = s.launch(&p, "k", [1, 1, 1], [64, 1, 1], &[Val::I(out)]);
    sim::run(&p, &l).expect("the compiled program runs");
    // Without SSY the SYNCs fail; without both, the two sides reach the barrier apart.
    without(&mut p, Op::Ssy);
    without(&mut p, Op::Sync);
    match sim::run(&p, &l) {
        Err(ExecError::Divergence(m)) => assert!(m.contains("BAR"), "{m}"),
        other => panic!("expected a divergence error, got {other:?}\n{p}"),
    }
}

/// A divergent if inside a loop: its SSY is pushed once per iteration.
const IF_IN_LOOP: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\
    .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<6>;\n.reg .pred %p<3>;\n.reg .b64 %d<4>;\n\
    mov.u32 %r1, %tid.x;\nmov.u32 %r4, 0;\nmov.u32 %r5, 0;\nLOOP:\nadd.u32 %r2, %r1, %r4;\nand.b32 %r2, %r2, 1;\n\
    setp.eq.u32 %p1, %r2, 0;\n@%p1 bra EVEN;\nmul.lo.u32 %r3, %r1, 7;\nadd.u32 %r3, %r3, %r4;\nxor.b32 %r3, %r3, 99;\n\
    mul.lo.u32 %r3, %r3, %r3;\nadd.u32 %r3, %r3, %r1;\nmul.lo.u32 %r3, %r3, 3;\nxor.b32 %r3, %r3, 17;\n\
    add.u32 %r3, %r3, 1;\nmul.lo.u32 %r3, %r3, 11;\nxor.b32 %r3, %r3, %r1;\nadd.u32 %r3, %r3, 2;\n\
    mul.lo.u32 %r3, %r3, 13;\nadd.u32 %r5, %r5, %r3;\nbra.uni NEXT;\nEVEN:\nadd.u32 %r5, %r5, 3;\nNEXT:\n\
    add.u32 %r4, %r4, 1;\nsetp.lt.u32 %p2, %r4, 4;\n@%p2 bra.uni LOOP;\nld.param.u64 %d3, [out];\n\
    mul.wide.u32 %d1, %r1, 4;\nadd.s64 %d3, %d3, %d1;\nst.global.u32 [%d3], %r5;\nret;\n}\n";

#[test]
fn simulator_catches_an_ssy_pushed_again_before_its_sync() {
    let mut p = compile(IF_IN_LOOP);
    assert!(p.functions[0].code.iter().any(|s| s.instr.op == Op::Ssy), "{p}");
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 32]);
    let l = s.launch(&p, "k", [1, 1, 1], [32, 1, 1], &[Val::I(out)]);
    sim::run(&p, &l).expect("the compiled program runs");
    // SYNCs gone: the threads never wait at the join, and the next iteration pushes the
    // SSY again while the first entry still holds them.
    without(&mut p, Op::Sync);
    match sim::run(&p, &l) {
        Err(ExecError::Divergence(m)) => assert!(m.contains("SSY"), "{m}"),
        other => panic!("expected a divergence error, got {other:?}\n{p}"),
    }
}

/// A `vote.sync` that half the warp reaches by a branch forwards and back (`FAR` is laid
/// out after the vote): all 32 lanes must vote together. An interpreter that runs the
/// smallest program counter first would let the lanes already there vote alone; the
/// compiled code reconverges before the vote (SSY at the branch, join at `BACK`).
const VOTE_AFTER_DETOUR: &str = ".version 7.8\n.target sm_50\n.address_size 64\n\
    .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<6>;\n.reg .pred %p<3>;\n.reg .b64 %d<4>;\n\
    mov.u32 %r1, %tid.x;\nand.b32 %r2, %r1, 1;\nsetp.eq.u32 %p1, %r2, 0;\nsetp.lt.u32 %p2, %r1, 20;\n\
    mov.u32 %r4, 7;\n@%p1 bra FAR;\nBACK:\nvote.sync.ballot.b32 %r3, %p2, 0xffffffff;\nadd.u32 %r3, %r3, %r4;\n\
    ld.param.u64 %d3, [out];\nmul.wide.u32 %d1, %r1, 4;\nadd.s64 %d3, %d3, %d1;\nst.global.u32 [%d3], %r3;\nret;\n\
    FAR:\nmul.lo.u32 %r4, %r1, 3;\nbra.uni BACK;\n}\n";

#[test]
fn vote_waits_for_lanes_coming_back_from_a_detour() {
    let p = compile(VOTE_AFTER_DETOUR);
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 32]);
    let l = s.launch(&p, "k", [1, 1, 1], [32, 1, 1], &[Val::I(out)]);
    let got = run_both(VOTE_AFTER_DETOUR, &l, out, 32);
    // Lanes below 20 vote true, whichever path they took.
    let want: Vec<u32> = (0..32u32).map(|i| 0xfffff + if i % 2 == 0 { i * 3 } else { 7 }).collect();
    assert_eq!(got, want);
}

/// Two `vote.sync` with a full membermask, one per half of the warp: undefined in PTX (the
/// lanes of a membermask must execute the same instruction, for sm_6x and below), reported
/// as such by the interpreter.
#[test]
fn interpreter_reports_a_membermask_lane_that_never_arrives() {
    let src = VOTE_AFTER_DETOUR.replace("bra.uni BACK;\n}", "vote.sync.ballot.b32 %r5, %p2, 0xffffffff;\nret;\n}");
    let (module, _) = ptx2sass::ptx::parse(&src).expect("parses");
    let p = compile(&src);
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * 32]);
    let l = s.launch(&p, "k", [1, 1, 1], [32, 1, 1], &[Val::I(out)]);
    match exec::ptx::run(&module, &l) {
        Err(ExecError::Unsupported(m)) => assert!(m.contains("membermask"), "{m}"),
        other => panic!("expected an undefined-use error, got {other:?}"),
    }
}
