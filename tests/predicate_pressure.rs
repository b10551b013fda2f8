//! Many live predicates under small register budgets: a family of kernels keeping `N`
//! predicates (`N` = 1..40) live at once across a loop, its branches and (in the later
//! shapes) loop-carried and if/else-joined predicate updates, compiled with `--verify`
//! (both allocation checkers, the hazard checker) at `--maxrregcount` 16..64 and run on
//! both executors (`ptx2sass run --compare`), which must agree.
//!
//! SPA 5.0 has seven predicate registers; more live predicates are kept in general-purpose
//! registers (`regalloc::predicates`), which a small budget then spills to local memory.
//! `fuzz/ compile` found an `sgemm_reg` mutant at `--maxrregcount 32` (tests/fuzz_found.rs)
//! where regalloc2 spilled a predicate although demotion had left only seven live, an
//! internal error. Without the retry of `regalloc::allocate` (more demotion when
//! regalloc2 spills a predicate) this family fails the same way at `N` = 6, shape 2, with
//! 16 and 20 registers (the other 1,558 cases of the full sweep compiled before the fix).
//!
//! By default every `N` runs each shape at 16 registers and at one more budget (rotating
//! through 20..64); `PRED_PRESSURE_FULL=1` runs every `N` × shape × budget 16, 20, .., 64.

/// The kernel `k(out)`: thread `t` computes `N` predicates from bits of `t`, `N`
/// accumulators, runs a 3-trip loop that reads every predicate (as a guard, or as a
/// branch condition for every third), and after the loop folds accumulators and
/// predicates into `out[t]` (so every predicate is live throughout the loop).
/// Shape 1 adds loop-carried updates (`xor.pred` of every fourth predicate with a
/// trip-dependent one: predicate block parameters); shape 2 also redefines every fifth
/// predicate differently on the two sides of an if/else inside the loop (a join).
fn kernel(n: usize, shape: u32) -> String {
    let mut s = String::from(".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{\n");
    s += &format!("\t.reg .pred %p<{n}>;\n\t.reg .pred %c, %q;\n\t.reg .u32 %a<{n}>;\n");
    s += "\t.reg .u32 %t, %i, %x, %s;\n\t.reg .u64 %o, %w;\n\tld.param.u64 %o, [out];\n\tmov.u32 %t, %tid.x;\n";
    for k in 0..n {
        s += &format!(
            "\tmad.lo.u32 %x, %t, {}, {k};\n\tshr.u32 %x, %x, {};\n\tand.b32 %x, %x, 1;\n\tsetp.ne.u32 %p{k}, %x, 0;\n",
            2 * k + 3,
            k % 4
        );
        s += &format!("\tmul.lo.u32 %a{k}, %t, {};\n", k + 1);
    }
    s += "\tmov.u32 %i, 0;\nLOOP:\n";
    for k in (0..n).rev() {
        if k % 3 == 0 {
            s += &format!("\t@!%p{k} bra S{k};\n\tmul.lo.u32 %a{k}, %a{k}, 3;\nS{k}:\n");
        } else {
            s += &format!("\t@%p{k} add.u32 %a{k}, %a{k}, %i;\n");
        }
        if shape >= 1 && k % 4 == 1 {
            s += &format!("\tsetp.eq.u32 %q, %i, {};\n\txor.pred %p{k}, %p{k}, %q;\n", k % 3);
        }
    }
    if shape >= 2 {
        s += "\tand.b32 %x, %t, 1;\n\tsetp.eq.u32 %q, %x, 0;\n\t@%q bra ELSE;\n";
        for k in (0..n).step_by(5) {
            s += &format!("\tsetp.lt.u32 %p{k}, %a{k}, 100;\n");
        }
        s += "\tbra.uni JOIN;\nELSE:\n";
        for k in (0..n).step_by(5) {
            s += &format!("\tnot.pred %p{k}, %p{k};\n");
        }
        s += "JOIN:\n";
    }
    s += "\tadd.u32 %i, %i, 1;\n\tsetp.lt.u32 %c, %i, 3;\n\t@%c bra LOOP;\n\tmov.u32 %s, 0;\n";
    for k in 0..n {
        s += &format!("\t@%p{k} add.u32 %s, %s, %a{k};\n\t@!%p{k} xor.b32 %s, %s, %a{k};\n");
    }
    s += "\tmul.wide.u32 %w, %t, 4;\n\tadd.u64 %w, %o, %w;\n\tst.global.u32 [%w], %s;\n\tret;\n}\n";
    s
}

/// Compiles `src` at `max_regs` with every checker on, runs `k` with 32 threads on both
/// executors and checks that they agree; returns the registers used.
fn compile_and_compare(src: &str, max_regs: u32, what: &str) -> u32 {
    let mut opts = ptx2sass::driver::Options::default();
    opts.regalloc.max_regs = max_regs;
    opts.regalloc.verify = true;
    opts.check_hazards = true;
    opts.check_encoding = true;
    let out = ptx2sass::driver::compile(src, &opts)
        .unwrap_or_else(|d| panic!("{what}: {:?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()));
    let program = out.program.expect("a program");
    let regs = program.functions.iter().map(|f| f.regs).max().expect("one function");
    assert!(regs <= max_regs, "{what}: {regs} registers");
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let arg = [ptx2sass::exec::ptx::args::Arg::Buf(vec![0xcd; 128])];
    let launch = ptx2sass::exec::ptx::args::launch(&module, "k", [1, 1, 1], [32, 1, 1], &arg, 1_000_000).unwrap();
    let (_, _, diff) = ptx2sass::exec::compare(&module, &program, &launch).expect("runs");
    assert!(diff.is_empty(), "{what}: executors differ: {diff:?}");
    regs
}

#[test]
fn many_live_predicates_under_small_budgets() {
    let full = std::env::var_os("PRED_PRESSURE_FULL").is_some();
    let budgets: Vec<u32> = (16..=64).step_by(4).collect();
    let mut cases = 0;
    for n in 1..=40 {
        for shape in 0..3u32 {
            let src = kernel(n, shape);
            let chosen: Vec<u32> = if full {
                budgets.clone()
            } else {
                vec![16, budgets[1 + (n + 5 * shape as usize) % (budgets.len() - 1)]]
            };
            for max_regs in chosen {
                compile_and_compare(&src, max_regs, &format!("N = {n}, shape {shape}, --maxrregcount {max_regs}"));
                cases += 1;
            }
        }
    }
    assert_eq!(cases, if full { 40 * 3 * budgets.len() } else { 240 });
}
