//! Control flow of every shape (issue 23): the kernels of the issue and of its "class"
//! (`tests/programs/*.cu`, compiled by clang-14 `-O3`) on both executors, against models
//! of their sources written here; the compiler's structure for them (one `PBK` for
//! `find`, as ptxas); and the checks that catch missing reconvergence: the invariant
//! checker on hand-broken IR (`lower::cfg::check`), the simulator on hand-broken SASS (a
//! barrier reached by part of a warp, an `SSY` pushed again before its `SYNC`), and the
//! interpreter running a warp-collective instruction with every lane that can still come
//! to it, whatever the code layout.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{self, ExecError, Launch, sim};
use ptx2sass::sass::op::Op;

fn program_src(name: &str) -> String {
    let path = format!("{}/tests/programs/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("program exists")
}

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

/// The issue's `find`: per thread, the first index `j = i, i + 32, ...` below `n` with
/// `a[j] == key`, `-1` if none, or `-2` if a negative element comes first.
fn find_model(a: &[i32], n: i32, key: i32, threads: usize) -> Vec<u32> {
    (0..threads as i32)
        .map(|i| {
            let mut j = i;
            while j < n {
                if a[j as usize] == key {
                    return j as u32;
                }
                if a[j as usize] < 0 {
                    return -2i32 as u32;
                }
                j += 32;
            }
            -1i32 as u32
        })
        .collect()
}

#[test]
fn find_matches_its_model_on_both_executors() {
    let src = program_src("find");
    let mut rng = Rng::new(23);
    for (n, negatives) in [(0, 0), (37, 0), (200, 40), (256, 8), (256, 0)] {
        // Small values so that keys match often; some negatives.
        let a: Vec<i32> = (0..256)
            .map(|_| {
                let r = rng.next();
                if negatives > 0 && r % 256 < negatives { -((r >> 8) as i32 & 0xff) - 1 } else { (r >> 16) as i32 & 15 }
            })
            .collect();
        let key = 5;
        let mut s = Setup::new();
        let ab = s.buf(a.iter().flat_map(|x| x.to_le_bytes()).collect());
        let out = s.buf(vec![0xcd; 4 * 64]);
        let l = s.launch(
            &compile(&src),
            "find",
            [1, 1, 1],
            [64, 1, 1],
            &[Val::I(ab), Val::I(out), Val::I(n as u64), Val::I(key)],
        );
        let got = run_both(&src, &l, out, 64);
        assert_eq!(got, find_model(&a, n, key as i32, 64), "n = {n}");
    }
}

/// The issue's `irreducible` kernel, as C.
fn irreducible_model(a: &[i32], n: i32) -> Vec<u32> {
    a.iter()
        .map(|&x0| {
            let (mut x, mut k) = (x0, 0i32);
            let mut at_top = x & 1 == 0;
            loop {
                if at_top {
                    x = x.wrapping_mul(3).wrapping_add(1);
                    k += 1;
                }
                x >>= 1;
                k += 1;
                if x > 1 && k < n {
                    at_top = true;
                } else {
                    return k as u32;
                }
            }
        })
        .collect()
}

#[test]
fn irreducible_loop_matches_its_model_on_both_executors() {
    let src = program_src("irreducible");
    let mut rng = Rng::new(64);
    for n in [0, 3, 20, 1000] {
        let a: Vec<i32> = (0..64).map(|_| (rng.next() % 5000) as i32 - 100).collect();
        let mut s = Setup::new();
        let ab = s.buf(a.iter().flat_map(|x| x.to_le_bytes()).collect());
        let out = s.buf(vec![0; 4 * 64]);
        let l = s.launch(&compile(&src), "irreducible", [1, 1, 1], [64, 1, 1], &[Val::I(ab), Val::I(out), Val::I(n)]);
        let got = run_both(&src, &l, out, 64);
        assert_eq!(got, irreducible_model(&a, n as i32), "n = {n}");
    }
}

/// `search_call`: a device function returning from inside its loop (inlined), then a
/// barrier and a neighbour's result.
#[test]
fn early_return_from_an_inlined_loop_then_a_barrier() {
    let src = program_src("search_call");
    let mut rng = Rng::new(5);
    for n in [0, 5, 16] {
        let a: Vec<i32> = (0..1024)
            .map(|_| {
                let r = rng.next();
                if r.is_multiple_of(16) { -1 } else { (r >> 8) as i32 & 15 }
            })
            .collect();
        let mut s = Setup::new();
        let ab = s.buf(a.iter().flat_map(|x| x.to_le_bytes()).collect());
        let out = s.buf(vec![0; 4 * 96]);
        let l = s.launch(&compile(&src), "search_call", [1, 1, 1], [96, 1, 1], &[Val::I(ab), Val::I(out), Val::I(n)]);
        let got = run_both(&src, &l, out, 96);
        let search = |i: usize| -> i32 {
            let base = (i & 63) * 16;
            for j in 0..n as usize {
                let v = a[base + j];
                if v == (i & 15) as i32 {
                    return j as i32;
                }
                if v < 0 {
                    return -2 - j as i32;
                }
            }
            -1
        };
        let want: Vec<u32> = (0..96).map(|i| search(i).wrapping_add(search((i + 1) & 63)) as u32).collect();
        assert_eq!(got, want, "n = {n}");
    }
}

/// `while_true`: a `while (true)` loop left by a `break` and by a `return`, then a barrier.
#[test]
fn while_true_with_break_and_return() {
    let src = program_src("while_true");
    let mut rng = Rng::new(9);
    for n in [1, 6, 40] {
        let mut s = Setup::new();
        let ab = s.buf(rng.u32s(64));
        let out = s.buf(vec![0; 4 * 64]);
        let l = s.launch(&compile(&src), "while_true", [1, 1, 1], [64, 1, 1], &[Val::I(ab), Val::I(out), Val::I(n)]);
        run_both(&src, &l, out, 64);
    }
}

/// `nested_break`: `goto` out of two loops, `continue` of the outer loop from the inner
/// one, then a ballot of the whole warp.
#[test]
fn break_out_of_two_loops_then_a_ballot() {
    let src = program_src("nested_break");
    let mut rng = Rng::new(11);
    for n in [0, 3, 9] {
        let a: Vec<i32> = (0..256).map(|_| (rng.next() % 40) as i32 - 4).collect();
        let mut s = Setup::new();
        let ab = s.buf(a.iter().flat_map(|x| x.to_le_bytes()).collect());
        let out = s.buf(vec![0; 4 * 64]);
        let l = s.launch(&compile(&src), "nested_break", [1, 1, 1], [64, 1, 1], &[Val::I(ab), Val::I(out), Val::I(n)]);
        run_both(&src, &l, out, 64);
    }
}

/// The opcodes of a kernel's compiled code.
fn ops(src: &str) -> Vec<Op> {
    compile(src).functions[0].code.iter().map(|s| s.instr.op).collect()
}

/// `find` reconverges as ptxas 11.8 does (`docs/reconvergence.md`): one `PBK` for the
/// bounds check and both loop exits, no `SSY`, no dispatch branch after the target.
#[test]
fn find_has_one_pbk_like_ptxas() {
    let code = ops(&program_src("find"));
    let count = |op: Op| code.iter().filter(|o| **o == op).count();
    assert_eq!(count(Op::Pbk), 1, "{code:?}");
    assert_eq!(count(Op::Ssy), 0, "{code:?}");
    assert!(count(Op::Brk) >= 3, "the bounds check and both exits break: {code:?}");
}

/// The IR of `src` after lowering (reconvergence inserted, not checked).
fn lower_ir(src: &str) -> ptx2sass::ir::Module {
    let (m, _) = ptx2sass::ptx::parse(src).expect("parses");
    let opts = ptx2sass::lower::Options { check_reconvergence: false, ..Default::default() };
    ptx2sass::lower::lower(&m, &opts).expect("lowers").0
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

#[test]
fn checker_catches_a_missing_sync_and_a_missing_ssy() {
    let m = lower_ir(IF_BARRIER);
    let f = &m.functions[0];
    ptx2sass::lower::cfg::check::check(f).expect("the compiler's own output passes");
    // Without the SSY: the SYNCs find no entry.
    let mut g = f.clone();
    for b in g.layout.clone() {
        g.cfg[b].instrs.retain(|i| i.op != Op::Ssy);
    }
    let e = ptx2sass::lower::cfg::check::check(&g).expect_err("a SYNC without SSY");
    assert!(e.contains("SYNC"), "{e}");
    // A SYNC turned into a branch to the join: the stack differs between the paths there.
    let mut g = f.clone();
    let b = g.layout.iter().copied().find(|b| g.cfg[*b].instrs.last().is_some_and(|i| i.op == Op::Sync)).unwrap();
    let t = g.succs(b)[0];
    *g.cfg[b].instrs.last_mut().unwrap() =
        ptx2sass::sass::instr::Instr::new(Op::Bra, vec![], vec![ptx2sass::sass::instr::Src::label(t.index() as u32)]);
    let e = ptx2sass::lower::cfg::check::check(&g).expect_err("a missing SYNC");
    assert!(e.contains("differs between paths"), "{e}");
}

#[test]
fn checker_catches_a_barrier_before_reconvergence() {
    let m = lower_ir(IF_BARRIER);
    // Without SSY, and each SYNC a plain branch to the join: the stack balances, but the
    // barrier runs while the branch's threads are still apart.
    let mut g = m.functions[0].clone();
    for b in g.layout.clone() {
        g.cfg[b].instrs.retain(|i| i.op != Op::Ssy);
        if g.cfg[b].instrs.last().is_some_and(|i| i.op == Op::Sync) {
            let target = g.succs(b)[0];
            let last = g.cfg[b].instrs.last_mut().unwrap();
            let guard = last.guard;
            *last = ptx2sass::sass::instr::Instr::new(
                Op::Bra,
                vec![],
                vec![ptx2sass::sass::instr::Src::label(target.index() as u32)],
            );
            last.guard = guard;
        }
    }
    let e = ptx2sass::lower::cfg::check::check(&g).expect_err("a barrier before reconvergence");
    assert!(e.contains("reconverge") && e.contains("BAR"), "{e}");
}

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

/// Restructuring must make progress in every round. A fuzzed `bitonic_sort512`
/// (`tests/data/fuzz/reconverge_nonterminating.ptx`, one `bra.uni` retargeted) and its
/// minimised core (`..._min.ptx`: a divergent loop around `bar.sync` whose exit is the
/// back edge of an enclosing endless loop, 16 lines; ptxas 11.8 compiles both) had a loop
/// whose single exit target was already a jump block: every round put another jump in
/// front of it (a landing with one target) and the plan saw the same problem, until the
/// `4 * blocks + 64` round limit ("does not terminate", after 12 s for the original).
/// Such a landing is no longer attempted. The shape itself now compiles
/// (`tests/reconverge_shapes.rs::loop_exiting_to_the_back_edge_of_an_endless_loop_compiles`).
#[test]
fn restructuring_never_repeats_a_landing_that_changes_nothing() {
    for name in ["reconverge_nonterminating_min", "reconverge_nonterminating"] {
        let path = format!("{}/tests/data/fuzz/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(path).expect("reproducer exists");
        let (m, _) = ptx2sass::ptx::parse(&src).expect("parses");
        let res = ptx2sass::lower::lower(&m, &ptx2sass::lower::Options::default());
        if let Err(diags) = &res {
            for d in diags {
                assert!(!d.message.contains("does not terminate"), "{name}: {}", d.message);
            }
        }
    }
}
