//! Register allocation: the stress kernel spills and verifies, the register-blocked SGEMM
//! does not spill, the independent verifier
//! (`regalloc::verify`) rejects broken allocations, and random programs of mixed widths,
//! straight-line and looping, allocate under tight register budgets with both regalloc2's
//! checker and the verifier on.

#[path = "common/launches.rs"]
mod launches;

use launches::run_both_checked;
use proptest::prelude::*;
use ptx2sass::ir::Function;
use ptx2sass::regalloc::{self, Options, Stats};
use ptx2sass::sass::instr::{Dst, Reg, SrcKind};
use ptx2sass::sass::op::Op;

/// The SSA functions of a PTX module.
fn lower(src: &str) -> Vec<Function> {
    let (m, _) =
        ptx2sass::ptx::parse(src).unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()));
    let (ir, _) = ptx2sass::lower::lower(&m, &Default::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()));
    ir.functions
}

/// Allocates `f` with both checkers on; returns the SSA input, the result and statistics.
fn allocate(f: &Function, max_regs: u32) -> (Function, Stats) {
    let mut g = f.clone();
    let stats = regalloc::allocate(&mut g, &Options { max_regs, verify: true })
        .unwrap_or_else(|e| panic!("allocation of {} with {max_regs} registers: {e}", f.name));
    (g, stats)
}

#[test]
fn register_blocked_sgemm_does_not_spill() {
    // 62 live 32-bit values at the peak: one regalloc2 bank (64 slots) spilled 32 bytes in
    // the k loop; ptxas 11.8 uses 72 registers and no spill. With a second bank it fits.
    // Since the shared loads are quads (`lower::mem::vectorize`) the lowering's order
    // needs 64 registers (it needed 65 to 80); `stress_kernel_spills_and_verifies` covers
    // allocations beyond one bank.
    let src = std::fs::read_to_string("samples/sgemm_reg.ptx").unwrap();
    let (_, stats) = allocate(&lower(&src)[0], 255);
    let (regs, spill) = (stats.regs, stats.spill_bytes);
    assert_eq!(spill, 0, "{regs} registers, {spill} bytes spilled");
    assert!(regs > 56 && regs <= 80, "{regs} registers");
    // Under a budget of 56 registers it must spill, and still verifies.
    let (_, tight) = allocate(&lower(&src)[0], 56);
    assert!(tight.regs <= 56 && tight.spill_bytes > 0, "{} registers, {} bytes spilled", tight.regs, tight.spill_bytes);
}

#[test]
fn stress_kernel_spills_and_verifies() {
    let src = std::fs::read_to_string("samples/stress_spill.ptx").unwrap();
    let f = &lower(&src)[0];
    let (g, stats) = allocate(f, 255);
    assert!(stats.regs <= 255, "{} registers", stats.regs);
    // The whole file but the margin `spill` leaves for packing (16 of 255) is used.
    assert!(stats.regs >= 238, "the whole file is used before spilling: {} registers", stats.regs);
    assert!(stats.spill_bytes > 0 && stats.spill_stores > 0 && stats.spill_loads > 0, "{stats:?}");
    // Spills are off R1, inside the frame.
    for b in &g.layout {
        for i in &g.cfg[*b].instrs {
            if let Op::Stl(m) | Op::Ldl(m) = i.op
                && m.spill
            {
                let SrcKind::Addr { base, offset } = i.srcs[0].kind else { panic!("spill address") };
                assert_eq!(base.reg, Reg::R(1));
                assert!(offset >= 0 && (offset as u32) < g.local_bytes + stats.spill_bytes);
            }
        }
    }
    // A smaller budget spills more and still verifies.
    let (_, tight) = allocate(f, 128);
    assert!(tight.regs <= 128 && tight.spill_bytes > stats.spill_bytes, "{tight:?}");
}

/// The allocated instruction positions (block, index) that are not moves.
fn kept_positions(g: &Function, stats: &Stats) -> Vec<(ptx2sass::ir::BlockId, usize)> {
    let mut out = vec![];
    for &b in &g.layout {
        let moves = stats.moves.get(&b);
        for (k, i) in g.cfg[b].instrs.iter().enumerate() {
            let is_move = moves.is_some_and(|m| m[k]) || matches!(i.op, Op::Ldl(m) | Op::Stl(m) if m.spill);
            if !is_move {
                out.push((b, k));
            }
        }
    }
    out
}

#[test]
fn verifier_rejects_broken_allocations() {
    let src = std::fs::read_to_string("samples/pair_dist_f64.ptx").unwrap();
    let f = &lower(&src)[0];
    let (g, stats) = allocate(f, 255);
    regalloc::verify::verify(f, &g, &stats.moves).expect("the real allocation verifies");
    let kept = kept_positions(&g, &stats);
    // 1. A source register replaced by another live register.
    let mut broken = 0;
    for &(b, k) in &kept {
        let i = &g.cfg[b].instrs[k];
        let Some(pos) = i.srcs.iter().position(|s| s.as_reg().is_some_and(|r| r.n == 1 && !r.reg.is_rz())) else {
            continue;
        };
        let mut h = g.clone();
        let r = h.cfg[b].instrs[k].srcs[pos].as_reg().unwrap();
        let Reg::R(x) = r.reg else { continue };
        let other = if x == 0 { 2 } else { x - 1 };
        if let SrcKind::Reg(rr) = &mut h.cfg[b].instrs[k].srcs[pos].kind {
            rr.reg = Reg::R(other);
        }
        if regalloc::verify::verify(f, &h, &stats.moves).is_err() {
            broken += 1;
        }
    }
    assert!(broken > 0, "no wrong source register was caught");
    // 2. A 64-bit destination moved to an odd register.
    let (b, k) = *kept
        .iter()
        .find(|(b, k)| matches!(g.cfg[*b].instrs[*k].dsts.first(), Some(Dst::Reg(r)) if r.n == 2))
        .expect("a 64-bit result");
    let mut h = g.clone();
    if let Some(Dst::Reg(r)) = h.cfg[b].instrs[k].dsts.first_mut()
        && let Reg::R(x) = r.reg
    {
        r.reg = Reg::R(x + 1);
    }
    let e = regalloc::verify::verify(f, &h, &stats.moves).unwrap_err();
    assert!(e.contains("aligned") || e.contains("hold"), "{e}");
    // 3. A result written to a register that still holds a live value.
    let mut caught = false;
    for &(b, k) in &kept {
        let mut h = g.clone();
        let Some(Dst::Reg(r)) = h.cfg[b].instrs[k].dsts.first_mut() else { continue };
        let Reg::R(x) = r.reg else { continue };
        if r.n != 1 || x == 255 {
            continue;
        }
        r.reg = Reg::R(if x == 0 { 3 } else { x - 1 });
        if regalloc::verify::verify(f, &h, &stats.moves).is_err() {
            caught = true;
            break;
        }
    }
    assert!(caught, "an overwrite of a live value was not caught");
    // 4. A dropped instruction.
    let (b, k) = kept[kept.len() / 2];
    let mut h = g.clone();
    h.cfg[b].instrs.remove(k);
    h.cfg[b].origins.remove(k);
    let mut moves = stats.moves.clone();
    if let Some(m) = moves.get_mut(&b) {
        m.remove(k);
    }
    assert!(regalloc::verify::verify(f, &h, &moves).is_err());
}

#[test]
fn verifier_rejects_a_wrong_spill_slot() {
    let src = std::fs::read_to_string("samples/stress_spill.ptx").unwrap();
    let f = &lower(&src)[0];
    let (g, stats) = allocate(f, 64);
    let mut caught = 0;
    let mut tried = 0;
    for &b in &g.layout {
        for k in 0..g.cfg[b].instrs.len() {
            if !matches!(g.cfg[b].instrs[k].op, Op::Ldl(m) if m.spill) || tried >= 20 {
                continue;
            }
            tried += 1;
            let mut h = g.clone();
            if let SrcKind::Addr { offset, .. } = &mut h.cfg[b].instrs[k].srcs[0].kind {
                *offset += 4;
            }
            caught += usize::from(regalloc::verify::verify(f, &h, &stats.moves).is_err());
        }
    }
    assert!(tried > 0 && caught == tried, "{caught} of {tried} wrong reloads caught");
}

/// A random kernel: values of 32, 64 and 128 bits and predicates, computed from loads
/// and from each other, optionally inside a counted loop, all stored at the end so that
/// every value stays live. `ops` picks operations, `loop_body` whether the middle part
/// is a loop.
fn random_kernel(ops: &[(u8, u8, u8)], loop_body: bool) -> String {
    let mut body = String::new();
    let (mut r, mut d, mut q, mut p) = (vec![], vec![], vec![], vec![]);
    let mut n = 0;
    let mut fresh = |prefix: &str| {
        n += 1;
        format!("%{prefix}{n}")
    };
    body.push_str("ld.param.u64 %a, [in];\nld.param.u64 %o, [out];\n");
    for k in 0..4 {
        let x = fresh("r");
        body.push_str(&format!("ld.global.u32 {x}, [%a+{}];\n", 4 * k));
        r.push(x);
    }
    let y = fresh("d");
    body.push_str(&format!("ld.global.u64 {y}, [%a+16];\n"));
    d.push(y);
    let (q0, q1, q2, q3) = (fresh("r"), fresh("r"), fresh("r"), fresh("r"));
    body.push_str(&format!("ld.global.v4.u32 {{{q0}, {q1}, {q2}, {q3}}}, [%a+32];\n"));
    q.push([q0, q1, q2, q3]);
    if loop_body {
        body.push_str("mov.u32 %i, 0;\nLOOP:\n");
    }
    for (k, &(op, a, b)) in ops.iter().enumerate() {
        let pick = |v: &Vec<String>, x: u8| v[x as usize % v.len()].clone();
        match op % 7 {
            0 => {
                let x = fresh("r");
                body.push_str(&format!("add.s32 {x}, {}, {};\n", pick(&r, a), pick(&r, b)));
                r.push(x);
            }
            1 => {
                let x = fresh("d");
                body.push_str(&format!("mul.wide.u32 {x}, {}, {};\n", pick(&r, a), pick(&r, b)));
                d.push(x);
            }
            2 => {
                let x = fresh("d");
                body.push_str(&format!("add.s64 {x}, {}, {};\n", pick(&d, a), pick(&d, b)));
                d.push(x);
            }
            3 => {
                let x = fresh("p");
                body.push_str(&format!("setp.lt.u32 {x}, {}, {};\n", pick(&r, a), pick(&r, b)));
                p.push(x);
            }
            4 if !p.is_empty() => {
                let x = fresh("r");
                body.push_str(&format!("selp.b32 {x}, {}, {}, {};\n", pick(&r, a), pick(&r, b), pick(&p, a)));
                r.push(x);
            }
            5 => {
                let quad = &q[a as usize % q.len()];
                let n: Vec<String> = (0..4).map(|_| fresh("r")).collect();
                for (k, x) in n.iter().enumerate() {
                    body.push_str(&format!("xor.b32 {x}, {}, {};\n", quad[k], pick(&r, b)));
                }
                q.push([n[0].clone(), n[1].clone(), n[2].clone(), n[3].clone()]);
            }
            _ => {
                let (lo, hi) = (fresh("r"), fresh("r"));
                body.push_str(&format!("mov.b64 {{{lo}, {hi}}}, {};\n", pick(&d, a)));
                r.push(lo);
                r.push(hi);
            }
        }
        if loop_body && k == ops.len() / 2 {
            body.push_str("add.s32 %i, %i, 1;\nsetp.lt.u32 %pl, %i, 3;\n@%pl bra LOOP;\n");
        }
    }
    let mut off = 0u32;
    for x in &r {
        body.push_str(&format!("st.global.u32 [%o+{off}], {x};\n"));
        off += 4;
    }
    off = off.div_ceil(8) * 8;
    for x in &d {
        body.push_str(&format!("st.global.u64 [%o+{off}], {x};\n"));
        off += 8;
    }
    off = off.div_ceil(16) * 16;
    for x in &q {
        body.push_str(&format!("st.global.v4.u32 [%o+{off}], {{{}, {}, {}, {}}};\n", x[0], x[1], x[2], x[3]));
        off += 16;
    }
    for x in &p {
        let v = fresh("r");
        body.push_str(&format!("selp.b32 {v}, 1, 0, {x};\nst.global.u32 [%o+{off}], {v};\n"));
        off += 4;
    }
    let decl = |prefix: &str, ty: &str| format!(".reg {ty} %{prefix}<{}>;\n", n + 1);
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .b64 %a, %o;\n.reg .b32 %i;\n.reg .pred %pl;\n{}{}{}{}ret;\n}}\n",
        decl("r", ".b32") + &decl("d", ".b64") + &decl("p", ".pred"),
        "",
        body,
        ""
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_allocate_and_verify(
        ops in proptest::collection::vec((0u8..7, any::<u8>(), any::<u8>()), 4..60),
        loop_body in any::<bool>(),
        budget in prop_oneof![Just(255u32), Just(48), Just(24)],
    ) {
        let src = random_kernel(&ops, loop_body);
        for f in lower(&src) {
            let mut g = f.clone();
            match regalloc::allocate(&mut g, &Options { max_regs: budget, verify: true }) {
                Ok(stats) => prop_assert!(stats.regs <= budget),
                Err(e) => prop_assert!(false, "allocation with {} registers: {}\n{}", budget, e, src),
            }
        }
    }
}

/// Packing fails within 16 or 24 registers when the stored quads and pair are read before
/// any write (undefined values, live from the entry); with the same values loaded first it
/// fits in 16. Found while `random_programs_allocate_and_verify` shrank a failure; fixed by
/// allocation shrinking the largest register class until packing succeeds.
#[test]
fn undefined_vectors_pack_at_tight_budgets() {
    let src = ".version 7.0\n\
     .target sm_50\n\
     .address_size 64\n\
     .visible .entry k(.param .u64 in, .param .u64 out)\n\
     {\n\
     .reg .b64 %a, %o;\n\
     .reg .b32 %i;\n\
     .reg .pred %pl;\n\
     .reg .b32 %r<109>;\n\
     .reg .b64 %d<109>;\n\
     .reg .pred %p<109>;\n\
     ld.param.u64 %a, [in];\n\
     ld.param.u64 %o, [out];\n\
     st.global.u32 [%o+108], %r85;\n\
     st.global.u32 [%o+112], %r91;\n\
     st.global.u32 [%o+116], %r92;\n\
     st.global.u32 [%o+120], %r94;\n\
     st.global.u64 [%o+200], %d83;\n\
     st.global.v4.u32 [%o+288], {%r45, %r46, %r47, %r48};\n\
     st.global.v4.u32 [%o+304], {%r56, %r57, %r58, %r59};\n\
     st.global.v4.u32 [%o+320], {%r66, %r67, %r68, %r69};\n\
     st.global.v4.u32 [%o+336], {%r70, %r71, %r72, %r73};\n\
     st.global.v4.u32 [%o+352], {%r75, %r76, %r77, %r78};\n\
     st.global.v4.u32 [%o+368], {%r86, %r87, %r88, %r89};\n\
     }\n";
    for f in lower(src) {
        for budget in [16, 24] {
            allocate(&f, budget);
        }
    }
}

#[test]
fn spills_are_chosen_by_next_use_before_regalloc2() {
    // samples/stress_spill.ptx: 320 loaded words live at once. Left to regalloc2, the
    // spilled values were the loaded ones, each store right after its load and waiting for
    // it: 242 spill stores, 44,963 estimated cycles (ptxas 11.8: 124 stores, 9,682
    // cycles). `regalloc::spill` evicts by farthest next use, never a fresh load result, and
    // hoists the reloads.
    let src = std::fs::read_to_string("samples/stress_spill.ptx").unwrap();
    let out = ptx2sass::driver::compile(&src, &ptx2sass::driver::Options::default()).expect("compiles");
    let s = &out.stats[0];
    assert!(s.regs <= 255 && s.spill_bytes > 0, "{s:?}");
    let listing = ptx2sass::sass::text::parse(&out.text).unwrap();
    let stores = listing[0].instrs.iter().filter(|i| i.opcode == "STL").count();
    assert!(stores <= 200, "{stores} spill stores");
    assert!(s.cycles < 12_000, "{} estimated cycles", s.cycles);
    // No spill store reads the result of a global load issued less than 20 instructions
    // before it (its store would wait for the load).
    let code = &listing[0].instrs;
    for (k, i) in code.iter().enumerate().filter(|(_, i)| i.opcode == "STL") {
        let data = i.operands.last().unwrap();
        let fresh = code[k.saturating_sub(20)..k].iter().any(|p| p.opcode == "LDG" && p.operands.first() == Some(data));
        assert!(!fresh, "line {}: `{}` stores a fresh load result", i.line, i.text);
    }
}

/// Issue 22 item 10: LLVM's `undef` is a register read before any write. In a loop it
/// reaches the loop header's block parameter from the entry edge; the allocation may leave
/// that parameter in any register there (any bits are a value of an undefined value), and
/// the verifier must accept it (it rejected `hoge` below: "R0 does not hold the value").
const UNDEF_IN_LOOP: &str = ".version 6.4\n.target sm_50\n.address_size 64\n\
    .visible .entry hoge()\n{\n\t.reg .pred \t%p<3>;\n\t.reg .b64 \t%rd<5>;\n\
    \t@%p1 bra \t$L__BB1_3;\n$L__BB1_2:\n\tadd.s64 \t%rd4, %rd4, 1;\n\tsetp.lt.s64 \t%p2, %rd4, 1;\n\
    \t@%p2 bra \t$L__BB1_2;\n$L__BB1_3:\n\tbra.uni \t$L__BB1_3;\n}\n";

/// A kernel whose loop carries a register of type `ty` that is undefined on the first
/// trip and only observed from the second on (`sel`ected away on the first), so that
/// both executors agree; the loop runs 4 times and stores what it accumulated.
fn loop_carried_undef(ty: &str) -> String {
    let (decl, body) = match ty {
        "pred" => (
            ".reg .pred %x, %y;",
            "and.pred %y, %x, %f;\nselp.u32 %t, 1, 0, %y;\nadd.u32 %acc, %acc, %t;\nsetp.lt.u32 %x, %i, 2;",
        ),
        "b32" => (".reg .b32 %x;", "selp.b32 %t, %x, 0, %f;\nadd.u32 %acc, %acc, %t;\nmul.lo.u32 %x, %i, 3;"),
        _ => (
            ".reg .b64 %x;",
            "selp.b64 %w, %x, 0, %f;\ncvt.u32.u64 %t, %w;\nadd.u32 %acc, %acc, %t;\nmul.wide.u32 %x, %i, 5;",
        ),
    };
    format!(
        ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n\
         .reg .b64 %p, %w;\n.reg .b32 %i, %t, %acc;\n.reg .pred %f, %c;\n{decl}\n\
         ld.param.u64 %p, [out];\nmov.u32 %i, 0;\nmov.u32 %acc, 0;\n\
         L:\nsetp.ne.u32 %f, %i, 0;\n{body}\nadd.u32 %i, %i, 1;\nsetp.lt.u32 %c, %i, 4;\n@%c bra L;\n\
         st.global.u32 [%p], %acc;\nret;\n}}\n"
    )
}

#[test]
fn undefined_values_in_loops_allocate_and_verify() {
    for f in lower(UNDEF_IN_LOOP) {
        for budget in [255, 16] {
            allocate(&f, budget);
        }
    }
    for ty in ["b32", "b64", "pred"] {
        let src = loop_carried_undef(ty);
        for f in lower(&src) {
            for budget in [255, 16] {
                allocate(&f, budget);
            }
        }
        // Both executors, through the whole pipeline (hazard checker included).
        let out = ptx2sass::driver::compile(&src, &Default::default())
            .unwrap_or_else(|d| panic!("{ty}: {:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()));
        let program = out.program.expect("a program");
        let (module, _) = ptx2sass::ptx::parse(&src).expect("parses");
        let arg = [ptx2sass::exec::ptx::args::Arg::Buf(vec![0xcd; 4])];
        let launch = ptx2sass::exec::ptx::args::launch(&module, "k", [1, 1, 1], [32, 1, 1], &arg, 100_000).unwrap();
        let (want, _, diff) = ptx2sass::exec::compare(&module, &program, &launch).expect("runs");
        assert!(diff.is_empty(), "{ty}: executors differ\n{program}");
        let expect = match ty {
            "pred" => 2, // %x is true after trips 0 and 1, read on trips 1..3
            "b32" => 9,  // 0 + 3 + 6
            _ => 15,     // 0 + 5 + 10
        };
        let at = want.global.regions().next().expect("the output buffer").1;
        assert_eq!(want.global.read_uint("global", at, 4).unwrap(), expect, "{ty}");
    }
    // A 128-bit register read before written in a loop (its block parameter is a quad).
    let quad = ".version 8.3\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n\
        .reg .u64 p, a, b;\n.reg .b128 q;\n.reg .u32 i;\n.reg .pred f, c;\n\
        ld.param.u64 p, [out];\nmov.u32 i, 0;\nmov.u64 a, 0;\n\
        L:\nsetp.ne.u32 f, i, 0;\n@f mov.b128 {a, b}, q;\nld.global.b128 q, [p];\n\
        add.u32 i, i, 1;\nsetp.lt.u32 c, i, 4;\n@c bra L;\nst.global.u64 [p], a;\nret;\n}\n";
    for f in lower(quad) {
        assert!(f.vregs.contains(&ptx2sass::ir::VRegKind::Gpr(4)));
        for budget in [255, 16] {
            allocate(&f, budget);
        }
    }
}

/// Undefined on the entry edge does not make the back edge's value optional: a loop that
/// carries the wrong register around is still caught.
#[test]
fn verifier_rejects_a_wrong_loop_carried_register_after_an_undef() {
    let f = &lower(UNDEF_IN_LOOP)[0];
    let (g, stats) = allocate(f, 255);
    regalloc::verify::verify(f, &g, &stats.moves).expect("the real allocation verifies");
    let mut caught = 0;
    for (b, k) in kept_positions(&g, &stats) {
        let i = &g.cfg[b].instrs[k];
        if !matches!(i.op, Op::Iadd32i { .. } | Op::Iadd { .. }) {
            continue;
        }
        let Some(Dst::Reg(r)) = i.dsts.first() else { continue };
        if r.reg.is_rz() {
            continue;
        }
        let mut h = g.clone();
        if let Some(Dst::Reg(r)) = h.cfg[b].instrs[k].dsts.first_mut() {
            r.reg = Reg::R(20);
        }
        caught += usize::from(regalloc::verify::verify(f, &h, &stats.moves).is_err());
    }
    assert!(caught >= 2, "{caught} wrong loop-carried registers caught");
}

/// [`run_both_checked`] with a limit of 100,000 steps.
fn run_both(src: &str, bytes: usize, threads: u32) -> Vec<u8> {
    run_both_checked(src, bytes, threads, 100_000)
}

/// tests/data/fuzz/regalloc_undef_phi.ptx's shape, runnable: a 64-bit value defined on one
/// path into a join (a carry pair, `sub.s64`) and undefined on the other, read after the
/// join only by the threads that took the defined path. The allocation checker rejected
/// such allocations ("R8 does not hold the value") when the meet at the join started from
/// the undefined side; the defined value must arrive intact (both executors), at every
/// budget.
#[test]
fn value_defined_on_one_path_arrives_intact() {
    let src = ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n\
        .reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<8>;\n\
        ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 8;\n\
        add.s64 %rd3, %rd1, %rd2;\nsetp.lt.u32 %p1, %r1, 16;\n@%p1 bra SKIP;\n\
        cvt.u64.u32 %rd4, %r1;\nmul.lo.s64 %rd5, %rd4, 4294967297;\nsub.s64 %rd6, %rd5, 12345;\n\
        SKIP:\n@!%p1 st.global.u64 [%rd3], %rd6;\nret;\n}\n";
    for f in lower(src) {
        for budget in [255, 16] {
            allocate(&f, budget);
        }
    }
    let reproducer = std::fs::read_to_string("tests/data/fuzz/regalloc_undef_phi.ptx").unwrap();
    for f in lower(&reproducer) {
        for budget in [255, 16] {
            allocate(&f, budget);
        }
    }
    let out = run_both(src, 32 * 8, 32);
    for t in 0..32u64 {
        let got = u64::from_le_bytes(out[8 * t as usize..8 * t as usize + 8].try_into().unwrap());
        let want = if t < 16 { 0xcdcd_cdcd_cdcd_cdcd } else { t.wrapping_mul(0x1_0000_0001).wrapping_sub(12345) };
        assert_eq!(got, want, "thread {t}");
    }
}

/// tests/data/fuzz/carry_guard_undef_pred.ptx's shape, runnable: a never-written
/// predicate decides whether a 64-bit address is computed (a carry pair) and loaded from;
/// if-conversion guards the pair and the load with it. Every read of the predicate must
/// see one value (lowering defines it as false, as the interpreter reads it), else a
/// thread could run the `.X` half without the `.CC` half or load from an uncomputed
/// address; the allocation checker rejects a guard reading an undefined predicate. Also
/// with eight more never-written predicates (the reproducer had 18, which demotion kept
/// in general-purpose registers). Both executors.
#[test]
fn never_written_predicate_guards_a_carry_pair_as_one_value() {
    for extra in [0, 8] {
        let stores: String =
            (0..extra).map(|k| format!("@%q{k} st.global.u32 [%rd1+{}], %r1;\n", 256 + 4 * k)).collect();
        let src = format!(
            ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n\
            .reg .pred %p<3>;\n.reg .pred %q<9>;\n.reg .b32 %r<4>;\n.reg .f32 %f<3>;\n.reg .b64 %rd<8>;\n\
            ld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.f32 %f1, 0f3F800000;\n\
            @!%p2 bra DONE;\nmul.wide.s32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nld.global.f32 %f1, [%rd3];\n\
            DONE:\n{stores}mul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd1, %rd4;\nst.global.f32 [%rd5+128], %f1;\n\
            ret;\n}}\n"
        );
        let out = run_both(&src, 128 + 4 * 32 + 256, 32);
        for t in 0..32 {
            let at = 128 + 4 * t;
            assert_eq!(f32::from_le_bytes(out[at..at + 4].try_into().unwrap()), 1.0, "{extra}: thread {t}");
        }
        assert!(out[256..].iter().all(|&b| b == 0xcd), "{extra}: a store under a never-written predicate ran");
    }
    let reproducer = std::fs::read_to_string("tests/data/fuzz/carry_guard_undef_pred.ptx").unwrap();
    for f in lower(&reproducer) {
        for budget in [255, 16] {
            allocate(&f, budget);
        }
    }
}

#[test]
fn values_live_across_a_slow_path_call_stay_in_low_registers() {
    // Our slow paths (`lower::arith::float_slow`) keep every register outside R4..R7
    // (`ir::FuncAbi::preserves`, `regalloc::calls`): values live across their CAL need no
    // callee-saved register. Under the common convention the five values live across the
    // `div.rn.f32` slow path here took R2 and R16 and up (`samples/black_scholes`: 22
    // registers where ptxas 11.8 uses 18).
    let src = r#".version 7.8
.target sm_50
.address_size 64
.visible .entry k(.param .u64 out)
{
  .reg .f32 %f<12>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4]; ld.global.f32 %f3, [%rd1+8];
  add.f32 %f4, %f1, %f3; mul.f32 %f5, %f2, %f3; sub.f32 %f6, %f1, %f2;
  div.rn.f32 %f7, %f1, %f2;
  add.f32 %f8, %f7, %f4; add.f32 %f9, %f8, %f5; add.f32 %f10, %f9, %f6;
  st.global.f32 [%rd1], %f10;
  ret;
}
"#;
    let fs = lower(src);
    let k = fs.iter().find(|f| f.name == "k").expect("the kernel");
    let (g, stats) = allocate(k, 255);
    let calls = g.layout.iter().flat_map(|b| &g.cfg[*b].instrs).filter(|i| i.op == Op::Cal).count();
    assert_eq!(calls, 1, "one slow-path call");
    assert!(stats.regs <= 16, "{} registers: values live across the call went to callee-saved ones", stats.regs);
    // The slow path saves what it writes outside R4..R7 (the frame's STL), restores it
    // before RET.
    let slow = fs.iter().find(|f| f.name != "k").expect("the slow path");
    let (s, _) = allocate(slow, 255);
    let code: Vec<_> = s.layout.iter().flat_map(|b| &s.cfg[*b].instrs).collect();
    let stores = code.iter().filter(|i| matches!(i.op, Op::Stl(_))).count();
    let loads = code.iter().filter(|i| matches!(i.op, Op::Ldl(_))).count();
    assert!(stores > 0 && loads >= stores, "{stores} saves, {loads} restores");
}
