//! Property-based differential testing: random well-defined PTX kernels
//! (`tests/common/gen.rs`) are compiled (in debug builds with the register-allocation
//! verifier and the hazard checker) and run on the PTX interpreter and on the SPA 5.0
//! simulator with every launch shape of `generator::SHAPES`; global memory after each launch
//! must match bit for bit.
//!
//! The run is reproducible: a fixed proptest seed (override with `PROPTEST_RNG_SEED`),
//! `CASES` programs (override with `PROPTEST_CASES`). A failure prints the shrunk program
//! as PTX, the launch shape and the first differences.

#[path = "common/gen.rs"]
mod generator;
#[path = "common/inst.rs"]
mod inst;

use generator::{Program, SHAPES, SLOT, Shape};
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestError, TestRunner};
use ptx2sass::driver::{self, Options};
use ptx2sass::exec;

/// Programs per default run, each with the three launch shapes (about 13 s in a debug
/// `cargo test` on an idle two-core machine).
const CASES: u32 = 1000;

fn compile(src: &str, opts: &Options) -> Result<driver::Output, String> {
    let compiled = std::panic::catch_unwind(|| driver::compile(src, opts))
        .map_err(|e| format!("compiler panic: {}", panic_text(&e)))?;
    compiled
        .map_err(|d| format!("compile errors:\n{}", ptx2sass::diag::SourceFile::new("fuzz.ptx", src).render_all(&d)))
}

/// Compiles `src` and runs it with every shape on both executors (inputs from `seed`).
fn check_ptx(src: &str, seed: u64) -> Result<(), String> {
    check_ptx_in(src, seed, 255)
}

/// [`check_ptx`] with a register budget (`--maxrregcount`).
fn check_ptx_in(src: &str, seed: u64, max_regs: u32) -> Result<(), String> {
    let mut opts = Options::default();
    opts.regalloc.max_regs = max_regs;
    check_ptx_with(src, seed, &opts)
}

/// [`check_ptx`] with compile options.
fn check_ptx_with(src: &str, seed: u64, opts: &Options) -> Result<(), String> {
    let out = compile(src, opts)?;
    let program = out.program.expect("SASS output has a program");
    let (module, _) = ptx2sass::ptx::parse(src).map_err(|_| "the interpreter cannot parse it".to_string())?;
    for shape in SHAPES {
        let launch = exec::ptx::args::launch(
            &module,
            "fuzz",
            shape.grid,
            shape.block,
            &generator::args(seed, shape),
            20_000_000,
        )
        .map_err(|e| format!("launch: {e}"))?;
        let launch = exec::Launch { seed, ..launch };
        let ran = std::panic::catch_unwind(|| exec::compare(&module, &program, &launch))
            .map_err(|e| format!("{}: executor panic: {}", describe(shape), panic_text(&e)))?;
        let (_, _, diffs) = ran.map_err(|e| format!("{}: {e}", describe(shape)))?;
        if !diffs.is_empty() {
            let first: Vec<String> = diffs
                .iter()
                .take(6)
                .map(|d| {
                    format!(
                        "  {} byte {} (thread {}, slot byte {}): interpreter {:02x?}, simulator {:02x?}",
                        d.region,
                        d.offset,
                        d.offset / SLOT as u64,
                        d.offset % SLOT as u64,
                        d.left,
                        d.right
                    )
                })
                .collect();
            return Err(format!("{}: {} difference(s)\n{}", describe(shape), diffs.len(), first.join("\n")));
        }
    }
    Ok(())
}

fn describe(s: &Shape) -> String {
    format!("launch grid {:?} block {:?} n {}", s.grid, s.block, s.n)
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

fn check(p: &Program, max_regs: u32) -> Result<(), String> {
    let src = p.ptx();
    check_ptx_in(&src, p.seed, max_regs)
        .map_err(|e| format!("{e}\nin {max_regs} registers, inputs from seed {}\n--- program ---\n{src}", p.seed))
}

/// `fuzz/ generated` (`tests/data/fuzz/generated_packing_25_registers.bin`, the program it
/// generates saved beside it as `.ptx`): 128-bit and 64-bit values live through a loop
/// (20 aligned units and 4 singles) failed register packing in 24 and 25 registers, an
/// internal error. regalloc2 needs 4 pair slots for it where one instruction names 2; no
/// single extra slot satisfied it from 2, so the size search raised every class's floor
/// and the quads' (3) no longer packed beside the pairs; the floors are now measured
/// (`regalloc::class_floors`). Both executors, every shape, in 24 and 25 registers; then
/// compiled (both allocation checkers on) in odd and even budgets from 18 up, and so is
/// its minimised form (`_min.ptx`, which reads undefined registers: compiled only).
#[test]
fn packing_in_odd_and_even_budgets() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fuzz/");
    let src = std::fs::read_to_string(format!("{dir}generated_packing_25_registers.ptx")).expect("reproducer");
    let min = std::fs::read_to_string(format!("{dir}generated_packing_25_registers_min.ptx")).expect("reproducer");
    for budget in [24, 25] {
        check_ptx_in(&src, 1, budget).unwrap_or_else(|e| panic!("{budget} registers: {e}"));
    }
    let mut opts = Options::default();
    opts.regalloc.verify = true;
    for budget in (18..=33).chain([48, 63, 64, 255]) {
        opts.regalloc.max_regs = budget;
        for (name, p) in [("generated", &src), ("minimised", &min)] {
            // The minimised form (24 registers' worth of values live through its loop)
            // fails below 21 registers (README `--maxrregcount`: very tight budgets are
            // a documented limitation, a user error).
            if name == "minimised" && budget < 21 {
                continue;
            }
            if let Err(e) = compile(p, &opts) {
                panic!("{name} in {budget} registers: {e}");
            }
        }
    }
}

/// A generated program (fuzz target `generated`, 2026-11-25; issue 20) failed register
/// packing with `--maxrregcount 25`, 26 and 28 ("no register for a 32-bit value within 26
/// registers"; 27 and 32 compiled). Its interval estimate of 72 live 32-bit values took
/// two banks, whose slots for the values one instruction names (4 singles, 3 pairs, 2
/// quads each) did not pack together in 25 registers; a budget below 66 registers now
/// takes one bank (`regalloc::banks::max_banks`). In 21 to 23 registers (`--no-reorder`)
/// no sizes regalloc2 accepted packed by coloring webs; the static partition of the
/// slots is now tried too. Both executors, every shape, in 25, 26 and 28 registers, with
/// and without the list scheduler; then compiled (both allocation checkers on) in every
/// budget 21..=40, 64 and 255. In 16 to 20 registers it compiles or gets the user
/// diagnostic of a budget too small for ptx2sass (`regalloc::Error::Budget`: regalloc2
/// accepts no fewer than 4 singles, 4 pairs and 2 quads, 21 registers with R1), never an
/// internal error.
#[test]
fn packing_generated_26_in_small_budgets() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fuzz/");
    let src = std::fs::read_to_string(format!("{dir}packing_generated_26.ptx")).expect("reproducer");
    let mut opts = Options::default();
    for reorder in [false, true] {
        opts.sched.reorder = reorder;
        for budget in [25, 26, 28] {
            opts.regalloc.max_regs = budget;
            check_ptx_with(&src, 1, &opts).unwrap_or_else(|e| panic!("{budget} registers (reorder {reorder}): {e}"));
        }
    }
    opts.regalloc.verify = true;
    for reorder in [false, true] {
        opts.sched.reorder = reorder;
        for budget in (21..=40).chain([64, 255]) {
            opts.regalloc.max_regs = budget;
            if let Err(e) = compile(&src, &opts) {
                panic!("{budget} registers (reorder {reorder}): {e}");
            }
        }
        for budget in 16..=20 {
            opts.regalloc.max_regs = budget;
            if let Err(e) = compile(&src, &opts) {
                assert!(
                    !e.contains("internal error") && e.contains("use --maxrregcount 21 or more"),
                    "{budget} registers (reorder {reorder}): {e}"
                );
            }
        }
    }
}

#[test]
fn random_programs_match_the_interpreter() {
    run_random_programs(CASES, 255);
}

/// Programs per default run of [`random_programs_with_carry_chains_match_the_interpreter`].
const CARRY_CASES: u32 = 300;

/// Random programs with PTX carry chains (`generator::carry_program`, issue 22 item 1).
#[test]
fn random_programs_with_carry_chains_match_the_interpreter() {
    run_strategy(&generator::carry_program(), CARRY_CASES, 255);
}

/// Programs per default run in the smallest register budget, where allocation spills
/// (`regalloc::spill` and regalloc2).
const TIGHT_CASES: u32 = 200;

#[test]
fn random_programs_match_the_interpreter_in_48_registers() {
    run_random_programs(TIGHT_CASES, 48);
}

fn run_random_programs(default_cases: u32, max_regs: u32) {
    run_strategy(&generator::program(), default_cases, max_regs);
}

fn run_strategy(strategy: &impl Strategy<Value = Program>, default_cases: u32, max_regs: u32) {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases);
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_f022);
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        // Shrinking a slow failure can take long: `PROPTEST_MAX_SHRINK_ITERS` bounds it.
        max_shrink_iters: std::env::var("PROPTEST_MAX_SHRINK_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(2000),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    // The panic hook would print every panic met while shrinking.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = runner.run(strategy, |p| check(&p, max_regs).map_err(TestCaseError::fail));
    std::panic::set_hook(hook);
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, p)) => panic!("random program failed (proptest seed {seed}):\n{why}\n{p:#?}"),
        Err(e) => panic!("{e}"),
    }
}

/// Runs a hand-written body in the generator's kernel on every shape.
fn regression(body: &str) {
    let src = generator::kernel(body, 0);
    if let Err(e) = check_ptx(&src, 0) {
        panic!("{e}\n--- program ---\n{src}");
    }
}

/// `cvt` from a signed type to a narrower unsigned type, or from a signed type widened to
/// an unsigned type, into a wider register: the value is extended by the destination
/// type (zero), not the source type (found by the generator: `cvt.u8.s32 %rd0, %r0`
/// sign-extended the byte).
#[test]
fn cvt_extends_by_the_destination_type() {
    regression(
        "cvt.u8.s32 %rd0, %r0;\ncvt.u16.s8 %r1, %r2;\ncvt.u16.s8 %rd1, %r3;\ncvt.u64.s8 %rd2, %r4;\n\
         cvt.s16.u8 %rd3, %r5;\ncvt.u8.s16 %r4, %h1;\n",
    );
}
/// `neg`/`abs` of a NaN: PTX leaves the NaN unspecified; the interpreter gives the
/// canonical NaN like SPA 5.0's `FADD -RZ, -a` (found by the generator: the interpreter
/// flipped the sign of the payload).
#[test]
fn neg_and_abs_of_nan_are_canonical() {
    regression(
        "mov.f32 %f0, 0f7FC00001;\nneg.f32 %f0, %f0;\nmov.f32 %f1, 0fFFFFFFED;\nabs.f32 %f1, %f1;\n\
         mov.f64 %fd0, 0dFFF8000000000001;\nneg.f64 %fd0, %fd0;\nmov.f64 %fd1, 0d7FF0000000000001;\nabs.f64 %fd1, %fd1;\n",
    );
}
/// A `0f` literal used with a bit or integer type gives its own 32 bits (found by the
/// generator: `mov.b32 %f0, 0f7FC00001` moved 0x20000000, the low word of the literal's
/// f64 value; `mov.b32 %r, 0f3F800000` moved 0).
#[test]
fn f32_literals_keep_their_bits_in_b32_operands() {
    regression(
        "mov.b32 %r0, 0f3F800000;\nmov.b32 %f0, 0f7FC00001;\nselp.b32 %r1, 0fBF800001, %r2, %p0;\n\
         setp.eq.b32 %p1, %r3, 0f00000000;\nadd.u32 %r4, %r4, 0f00000010;\n",
    );
}

/// Packing let a copy of one component of a 128-bit load (`copy %r, %q.0`) take the
/// register of another component still live (`%q.2`), clobbering it before its own copy
/// (found by the generator; the register-allocation verifier reported "R6 does not hold
/// the value").
#[test]
fn copy_of_one_component_keeps_the_others() {
    regression(
        "setp.lt.u32 %q2, %uni, 3;\n@!%q2 bra L3;\nld.param.v2.u32 {%r5, %r0}, [pv+0];\nbra.uni L4;\nL3:\n\
         abs.s32 %r2, %r0;\nL4:\n",
    );
}

/// `cvt` between floats: `.sat` clamps to [0, 1] and the integer roundings round to an
/// integral value (found by the generator: `cvt.rn.sat.f32.f64` ignored `.sat`, and
/// `cvt.rni.f32.f32` was a plain copy).
#[test]
fn float_cvt_saturates_and_rounds_to_integers() {
    regression(
        "cvt.rni.f32.f32 %f0, %f0;\ncvt.rmi.f32.f32 %f1, %f1;\ncvt.rn.sat.f32.f64 %f2, %fd0;\n\
         cvt.rzi.ftz.sat.f32.f32 %f3, %f3;\ncvt.rni.f64.f64 %fd0, %fd1;\ncvt.sat.f64.f32 %fd1, %f2;\n\
         cvt.rpi.sat.f64.f64 %fd2, %fd2;\n",
    );
}

/// A loop with a divergent exit in one arm of a divergent if/else, leaving to the join:
/// its threads reconverge with the other arm's through a landing block that SYNCs (found
/// by the generator: "cannot place SYNC before a join"). The barrier after the join needs
/// the whole warp back together.
#[test]
fn divergent_loop_in_one_arm_of_an_if() {
    for (arm, other) in [("else", "then"), ("then", "else")] {
        let lp = "mov.u32 %c0, 0;\nand.b32 %t0, %r0, 7;\nLOOP:\nsetp.ge.u32 %q2, %c0, %t0;\n@%q2 bra END;\n\
                  add.u32 %r1, %r1, %c0;\nadd.u32 %c0, %c0, 1;\nbra.uni LOOP;\n";
        let simple = "add.u32 %r1, %r1, 7;\n";
        let (then, els) = if arm == "then" { (lp, simple) } else { (simple, lp) };
        let body = format!(
            "// loop in the {arm} arm, straight code in the {other} arm\nand.b32 %ai, %ltid, 3;\n\
             setp.eq.u32 %q1, %ai, 0;\n@%q1 bra ELSE;\n{then}bra.uni END;\nELSE:\n{els}END:\nbar.sync 0;\n"
        );
        regression(&body);
    }
}

/// `cvt` from an 8-bit integer to a float converts the low byte only (found by the
/// generator: `cvt.rn.f32.u8 %f0, %r0` converted the whole register).
#[test]
fn int8_to_float_converts_the_low_byte() {
    regression(
        "cvt.rn.f32.u8 %f0, %r0;\ncvt.rz.f32.s8 %f1, %r1;\ncvt.rn.f64.s8 %fd0, %h0;\ncvt.rm.f64.u8 %fd1, %rd0;\n",
    );
}

/// fp64 add/mul overflowing under a directed rounding give the largest finite value where
/// the mode rounds toward zero (found by the generator: the simulator's `DMUL.RZ` gave
/// infinity).
#[test]
fn fp64_directed_overflow_is_finite() {
    regression(
        "mov.f64 %fd2, 0d7FEFFFFFFFFFFFFF;\nmul.rz.f64 %fd0, %fd2, %fd2;\nadd.rm.f64 %fd1, %fd2, %fd2;\n\
         neg.f64 %fd2, %fd2;\nmul.rp.f64 %fd2, %fd2, 0d4000000000000000;\n",
    );
}

/// fp64 multiplication with a directed rounding and a subnormal result whose rounding
/// error is below the smallest subnormal (found by the generator: the simulator's
/// `DMUL.RZ` rounded to nearest).
#[test]
fn fp64_directed_subnormal_product() {
    regression(
        "mov.f64 %fd0, 0d0000000100000001;\nmul.rz.f64 %fd1, %fd0, 0d3FE8000000000001;\n\
         mul.rp.f64 %fd2, %fd0, 0d3FE8000000000001;\nmul.rm.f64 %fd0, %fd0, 0dBFE8000000000001;\n",
    );
}

/// Scheduler bug found by the generator, fixed by the rewritten annotation pass
/// (`sched::annotate` keeps 2 cycles between setting a barrier and waiting on it also at
/// block starts): an `LDG` that set a write barrier with a 1-cycle stall fell through
/// into a join whose first instruction waited on that barrier.
#[test]
fn a_wait_at_a_join_comes_two_cycles_after_the_barrier_is_set() {
    regression(
        "setp.lt.u32 %q2, %uni, 4;\n@!%q2 bra.uni L3;\nbra.uni L4;\nL3:\nand.b32 %ai, %r0, 1023;\n\
         mul.wide.u32 %a0, %ai, 4;\nadd.s64 %a0, %in0, %a0;\nld.global.u32 %r4, [%a0];\nL4:\n\
         mul.wide.u32 %a0, %ltid, 16;\nadd.s64 %shme, %shb, %a0;\nst.shared.v4.b32 [%shme], {%r0, %r1, %r2, %r3};\n",
    );
}

/// Copy propagation forwarded a 64-bit read of two registers loaded as components 1 and 2
/// of a 128-bit load to that quad's middle (`%q.1:2`), an odd register pair (found by the
/// generator: "R25 is not aligned for a 64-bit operand"; the epilogue stores `{%r4, %r5}`).
#[test]
fn vector_parts_forwarded_only_when_aligned() {
    regression("ld.global.v4.u32 {%r3, %r4, %r5, %r0}, [%ing+0];\n");
}

/// A 64-bit logical right shift by 64 or more gives 0 (PTX clamps the amount to 64; found
/// by the generator: `shr.u64 %rd2, %rd0, 64` gave the sign bit).
#[test]
fn shr_u64_by_64_is_zero() {
    regression("shr.u64 %rd0, %rd0, 64;\nshr.u64 %rd1, %rd1, 100;\nshr.s64 %rd2, %rd2, 64;\nshl.b64 %rd3, %rd1, 64;\n");
}

/// Shift amounts and bitfield controls held in registers set to constants beyond the
/// 20-bit immediate field stay in registers (constant folding put `0x80000` into `SHR`'s
/// immediate: an internal error in the encoder; found by a random-program sweep, seed 7).
#[test]
fn large_constant_shift_amounts_stay_in_registers() {
    regression(
        "mov.u32 %r4, 0x80000;\nshr.u32 %r0, %r0, %r4;\nshl.b32 %r1, %r1, %r4;\nshr.s32 %r2, %r2, %r4;\n\
         mov.u32 %r5, 0xfff00808;\nbfe.u32 %r3, %r3, %r5, %r5;\n",
    );
}

/// `cnot.b16` of a value whose register has upper bits set (here by a 16-bit multiply)
/// tests the low 16 bits only (found by the generator).
#[test]
fn cnot_b16_ignores_the_upper_half() {
    regression(
        "mov.b32 {%h0, %h1}, %r0;\nmul.lo.u16 %h2, %h0, 0x100;\nmul.lo.u16 %h2, %h2, 0x100;\ncnot.b16 %h0, %h2;\n",
    );
}

/// fp64 multiplication with a directed rounding of a nonzero product below the smallest
/// subnormal (found by the generator: the simulator's `DMUL.RM` of a tiny negative
/// product gave -0, not the negative smallest subnormal).
#[test]
fn fp64_directed_product_rounded_from_zero() {
    regression(
        "mov.f64 %fd0, 0d0000000000000003;\nmul.rm.f64 %fd1, %fd0, 0d8000000000000005;\n\
         mul.rp.f64 %fd2, %fd0, 0d0000000000000005;\nmul.rz.f64 %fd0, %fd0, 0d8000000000000005;\n",
    );
}

/// `mul.wide.s32` by -2^31 (0x80000000, a power of two only as an unsigned number; found
/// by the generator: it was lowered as a shift by 31).
#[test]
fn mul_wide_s32_by_minus_2_pow_31() {
    regression(
        "mul.wide.s32 %rd0, %r0, -2147483648;\nmul.wide.u32 %rd1, %r1, 0x80000000;\nmul.wide.s32 %rd2, %r2, 1024;\n",
    );
}

/// The register-allocation verifier lost track of a register known equal to two value
/// numbers when an XOR swap moved it, and rejected a correct allocation (found by the
/// generator: "R11 does not hold the value"). Compiled only (the reduced body does not
/// terminate); debug builds verify every allocation.
#[test]
fn verifier_follows_xor_swaps_of_equal_values() {
    let src = generator::kernel(
        "setp.ne.u32 %q0, %ltid, 0;\nsetp.ne.u32 %q1, %ltid, 1;\nsetp.ne.u32 %q2, %ltid, 2;\n\
         setp.ne.u32 %q3, %ltid, 3;\nsetp.ne.u32 %q4, %ltid, 4;\nsetp.ne.u32 %q5, %ltid, 5;\n\
         setp.ne.u32 %q6, %ltid, 6;\nsetp.ne.u32 %q7, %ltid, 7;\nmov.u32 %c0, 0;\nmov.u32 %t0, 2;\n\
         mov.u32 %c1, 1;\nmov.u32 %t1, 2;\nmov.u32 %c2, 2;\nmov.u32 %t2, 2;\nmov.u32 %nb, %ltid;\n\
         mov.u64 %shme, %shb;\nmov.u64 %a0, %in0;\nmov.u64 %a1, %in0;\n\
         ld.v4.u32 {%r5, %r0, %r1, %r2}, [%a1+0];\nbar.sync 0;\nmul.wide.u16 %r2, %h1, %h1;\n\
         ld.local.v4.u32 {%r3, %r4, %r5, %r0}, [%a0];\nand.b32 %t0, %t0, 3;\nadd.u32 %t0, %t0, 1;\n\
         L3:\ncvt.u32.u32 %r5, %r5;\nadd.u32 %c0, %c0, 1;\n@%q1 bra L3;\n@!%p0 bra L5;\n\
         add.u32 %t0, %t0, 1;\nL7:\ncvt.rn.f32.f64 %f3, %fd0;\nadd.u64 %rd0, %rd1, %rd1;\n\
         @!%p0 bra L9;\nneg.s32 %r4, %r2;\nbra.uni L10;\nL9:\ncnot.b16 %h2, %h1;\n\
         ld.param.f64 %fd0, [pd];\nL10:\nadd.u32 %c0, %c0, 1;\nsetp.lt.u32 %q2, %c0, %t0;\n\
         @%q2 bra L7;\nL8:\nsetp.ge.xor.s16 %p1|%p2, %h2, %h0, %p0;\nL5:\nand.b32 %t0, %r0, 3;\n\
         setp.ge.u32 %q2, %c0, %t0;\n@%q2 bra L14;\nL14:\n\
         selp.f64 %fd1, 0dBFF0000000000000, %fd2, !%p1;\n",
        0,
    );
    if let Err(e) = compile(&src, &Options::default()) {
        panic!("{e}\n--- program ---\n{src}");
    }
}

/// A branch on a 64-bit comparison of a thread-dependent value (`IADD RZ.CC` then
/// `ISETP.X`, whose register operands are all RZ) is divergent: without SSY/SYNC the warp
/// reached the barrier in two halves and the first read its neighbours' shared slots
/// before they were written (found by the generator; the guarded self-move becomes an
/// empty if).
#[test]
fn branch_on_64_bit_compare_of_thread_id_reconverges() {
    regression(
        "setp.ge.s64 %p1, %rd3, 7;\n@%p1 mov.u16 %h0, %h0;\nmul.wide.u32 %a0, %ltid, 16;\n\
         add.s64 %shme, %shb, %a0;\nst.shared.v4.b32 [%shme], {%r0, %r1, %r2, %r3};\nbar.sync 0;\n\
         sub.u32 %nb, %m, 1;\nsub.u32 %nb, %nb, %ltid;\nmul.wide.u32 %a0, %nb, 16;\nadd.s64 %a1, %shb, %a0;\n\
         ld.shared.u32 %r4, [%a1+0];\nbar.sync 0;\n",
    );
}

/// A `break` (a divergent loop exit) in one arm of a divergent if/else, or in an if without
/// else: the branch reconverges where the threads staying in the loop meet, the breaking
/// threads at the loop's exit (was "cannot place SYNC before a join"). The barrier after
/// the loop needs the whole warp back together.
#[test]
fn break_in_one_arm_of_an_if() {
    let else_arm = "bra.uni JOIN;\nELSE:\nadd.u32 %r1, %r1, 1;\n";
    for els in [else_arm, ""] {
        let body = format!(
            "mov.u32 %c0, 0;\nLOOP:\nand.b32 %ai, %c0, 1;\nsetp.eq.u32 %q1, %ai, 0;\n@%q1 bra ELSE;\n\
             add.u32 %r1, %r1, 7;\nsetp.gt.u32 %q2, %c0, %ltid;\n@%q2 bra END;\n{els}{}JOIN:\n\
             add.u32 %c0, %c0, 1;\nsetp.lt.u32 %q3, %c0, 40;\n@%q3 bra LOOP;\nEND:\nbar.sync 0;\n",
            if els.is_empty() { "ELSE:\n" } else { "" }
        );
        regression(&body);
    }
}

/// A `break` with a uniform condition in one arm of a divergent if: only the threads of
/// that arm leave, so the loop's exit is divergent and needs PBK/BRK (found by the
/// generator: the loop got none, the if's SSY was pushed on every iteration and the warp
/// reached the barrier after the loop in parts).
#[test]
fn uniform_break_in_a_divergent_if() {
    regression(
        "and.b32 %t0, %uni, 3;\nadd.u32 %t0, %t0, 1;\nadd.u32 %t0, %t0, 1;\nmov.u32 %c0, 0;\nsetp.lt.u32 %q5, %uni, 9;\nLOOP:\n\
         @%p2 bra ELSE;\nbra.uni JOIN;\nELSE:\n@%q5 bra END;\nJOIN:\nadd.u32 %r1, %r1, %c0;\n\
         add.u32 %c0, %c0, 1;\nsetp.lt.u32 %q1, %c0, %t0;\n@%q1 bra LOOP;\nEND:\nmul.wide.u32 %a0, %ltid, 16;\n\
         add.s64 %shme, %shb, %a0;\nst.shared.v4.b32 [%shme], {%r1, %r2, %r3, %r4};\nbar.sync 0;\n\
         sub.u32 %nb, %m, 1;\nsub.u32 %nb, %nb, %ltid;\nmul.wide.u32 %a0, %nb, 16;\nadd.s64 %a1, %shb, %a0;\n\
         ld.shared.u32 %r0, [%a1+0];\nbar.sync 0;\n",
    );
}

/// The verifier after an XOR swap of two registers holding one value known under different
/// value numbers (one through a loop): each register keeps the other's whole set (found
/// by the generator: it kept only one register's numbers for both).
#[test]
fn verifier_swaps_registers_holding_one_value() {
    regression(
        "mov.f32 %f1, %f0;\nshr.u32 %t0, %ltid, 0;\nand.b32 %t0, %t0, 3;\nmov.u32 %c0, 0;\nL1:\n\
         setp.ge.u32 %q1, %c0, %t0;\n@%q1 bra L2;\nmov.u32 %r0, %r0;\nmov.u32 %t1, 0;\n\
         mov.u32 %c1, 0;\nadd.u32 %t1, %t1, 1;\nL3:\ncvt.rn.f32.u8 %f0, %h0;\n\
         add.u32 %c1, %c1, 1;\nsetp.lt.u32 %q2, %c1, %t1;\n@%q2 bra L3;\nL4:\n\
         selp.u64 %rd3, %rd0, %rd0, %p0;\nadd.u32 %r1, %r0, %r0;\nadd.u32 %c0, %c0, 1;\n\
         bra.uni L1;\nL2:\n",
    );
}

/// `setp.lt.s64` of a constant and a register: the immediate cannot move to `ISETP.X`'s
/// second operand by mirroring the comparison, since the borrow in CC comes from the low
/// words in the original order (found by the generator: `mov.u64 %rd1, -2^19` in a loop,
/// then `setp.lt.s64 %p0, %rd1, %rd0`).
#[test]
fn isetp_x_is_not_mirrored() {
    regression(
        "mov.u32 %c0, 0;\nL1:\nmov.u64 %rd1, 0xfffffffffff80000;\nadd.u32 %c0, %c0, 1;\nsetp.lt.u32 %q1, %c0, 2;\n\
         @%q1 bra L1;\nsetp.lt.s64 %p0, %rd1, %rd0;\nsetp.gt.u64 %p1, %rd1, %rd2;\n",
    );
}

/// Two inner loops with divergent exits, one in each arm of an if with a `break`, both
/// leaving to the if's join: each gets a landing block that SYNCs (found by the generator:
/// the second loop's landing was missed because the outer loop's body did not include the
/// first one's landing block).
#[test]
fn inner_loops_in_both_arms_of_an_if_with_a_break() {
    regression(
        "mov.u32 %t0, 0;\nmov.u32 %c0, 0;\nadd.u32 %t0, %t0, 1;\nL1:\n@!%p0 bra L3;\n@%p0 bra L2;\n\
         mov.u32 %t1, 0;\nmov.u32 %c1, 0;\nL5:\nsetp.ge.u32 %q3, %c1, %t1;\n@%q3 bra L6;\n\
         mov.u16 %h0, %h0;\nadd.u32 %c1, %c1, 1;\nbra.uni L5;\nL6:\nbra.uni L4;\nL3:\n\
         mov.u32 %t1, 0;\nmov.u32 %c1, 0;\nL7:\nsetp.ge.u32 %q3, %c1, %t1;\n@%q3 bra L8;\n\
         mov.u16 %h0, %h0;\nadd.u32 %c1, %c1, 1;\nbra.uni L7;\nL8:\nL4:\nadd.u32 %c0, %c0, 1;\n\
         setp.lt.u32 %q1, %c0, %t0;\n@%q1 bra L1;\nL2:\nmov.u16 %h0, %h0;\n",
    );
}

/// Every pair of dependent logic operations (`and/or/xor` × `and/or/xor`, the inner result
/// as first and as second operand of the outer one) and dependent additions, which
/// `lower::opt::combine` fuses into `LOP3.LUT` and `IADD3`: both executors agree on the values
/// (stored after the generator's outputs, at byte 128 of each thread's slot).
#[test]
fn fused_logic_and_additions_keep_their_values() {
    let ops = ["and", "or", "xor"];
    let mut body = String::new();
    let mut off = 128;
    for op1 in ops {
        for (j, op2) in ops.iter().enumerate() {
            body.push_str(&format!("{op1}.b32 %c0, %r0, %r1;\n"));
            if j % 2 == 0 {
                body.push_str(&format!("{op2}.b32 %c1, %c0, %r2;\n"));
            } else {
                body.push_str(&format!("{op2}.b32 %c1, %r3, %c0;\n"));
            }
            body.push_str(&format!("st.global.u32 [%outg+{off}], %c1;\n"));
            off += 4;
        }
    }
    body.push_str(&format!(
        "add.s32 %c0, %r0, %r1;\nadd.s32 %c1, %r2, %c0;\nst.global.u32 [%outg+{off}], %c1;\n\
         add.s32 %c0, %r3, %r1;\nadd.s32 %c1, %c0, %r0;\nst.global.u32 [%outg+{}], %c1;\n",
        off + 4
    ));
    regression(&body);
}

/// Random programs (generator output, kept as found) that allocation could not fit in
/// these budgets: regalloc2 failed with `TooManyLiveRegs` at every class size allocation
/// tried, before a too-small size raised the class floors (the last one needs the floors
/// raised by trial, the others by the classes at their floor).
#[test]
fn vector_heavy_programs_allocate_in_tight_budgets() {
    for (file, budget) in
        [("vectors_in_32_registers", 32), ("vectors_in_48_registers", 48), ("vectors_in_48_registers_b", 48)]
    {
        let path = format!("{}/tests/programs/{file}.ptx", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(path).unwrap();
        if let Err(e) = check_ptx_in(&src, 1, budget) {
            panic!("{file}: {e}");
        }
    }
}

/// A loop whose exit became `@P BRK` with the jump-only back edge as its fall-through:
/// linearization dropped the jump block (it kept only those after a guarded `BRA`), so
/// the loop fell out of itself into its PBK target (found by the arbitrary-CFG
/// generator: "the reconvergence stack differs between paths" in the scheduled code).
#[test]
fn loop_exit_brk_keeps_its_back_edge() {
    regression(
        "@!%p0 bra L1;\nmov.u32 %g0, 1;\nL3:\nmov.u32 %g1, 1;\nL6:\nsub.u32 %g1, %g1, 1;\n\
         setp.eq.u32 %qf, %g1, 0;\n@%qf bra L8;\nbra L6;\nL8:\nsub.u32 %g0, %g0, 1;\n\
         setp.eq.u32 %qf, %g0, 0;\n@%qf bra L1;\n@%p0 bra L3;\nL1:\n",
    );
}

/// The values a loop landing leaves undefined on the exits that do not use them share one
/// `undef` per register kind: one each, all hoisted to the entry, took 251 registers and
/// failed register packing in 48 (found by the generator in 48 registers;
/// `tests/programs/landing_undefs.ptx`).
#[test]
fn landing_undefs_share_one_register() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs/landing_undefs.ptx"))
        .expect("program exists");
    if let Err(e) = check_ptx_in(&src, 0, 48) {
        panic!("{e}");
    }
}
