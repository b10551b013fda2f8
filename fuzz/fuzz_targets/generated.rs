//! Structure-aware: a well-defined random kernel from the differential tests' generator
//! (`tests/common/gen.rs`, seeded by the fuzz input) compiled with `--verify` in a
//! random register budget and schedule mode, then run on the PTX interpreter and on the
//! SPA 5.0 simulator with one of the generator's launch shapes. Oracles: no panic, no
//! compile error of any kind (the program is valid PTX), no internal error, both
//! executors finish, and global memory after the launch is equal bit for bit.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use ptx2sass::diag::SourceFile;
use ptx2sass::driver::{self, Options};
use ptx2sass::exec;
use ptx2sass_fuzz::generator::{self, SHAPES};
use ptx2sass_fuzz::{MAX_MEMORY, program_from_bytes};

#[derive(Arbitrary, Debug)]
struct Input {
    /// `--maxrregcount` is 25 + this modulo 231 (smaller budgets are not fuzzed: very
    /// tight ones are a documented limitation, README `--maxrregcount`).
    regs: u8,
    /// Index into the generator's launch shapes.
    shape: u8,
    serial: bool,
    no_reorder: bool,
    /// The generator's strategy with carry chains.
    carry: bool,
    /// Seed of the generator's random choices ([`program_from_bytes`]).
    choices: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let Some(p) = program_from_bytes(&input.choices, input.carry) else { return };
    let src = p.ptx();
    let max_regs = 25 + u32::from(input.regs) % 231;
    let mut opts = Options::default();
    opts.regalloc.max_regs = max_regs;
    opts.regalloc.verify = true;
    opts.check_hazards = true;
    opts.check_encoding = true;
    opts.sched.serial = input.serial;
    opts.sched.reorder = !input.no_reorder;
    let out = match driver::compile(&src, &opts) {
        Ok(out) => out,
        Err(d) => panic!(
            "a generated program does not compile in {max_regs} registers:\n{}\n--- program ---\n{src}",
            SourceFile::new("generated.ptx", &src).render_all(&d)
        ),
    };
    let program = out.program.expect("SASS output has a program");
    let (module, _) = ptx2sass::ptx::parse(&src).expect("the interpreter parses what the compiler compiled");
    let shape = &SHAPES[usize::from(input.shape) % SHAPES.len()];
    let launch =
        exec::ptx::args::launch(&module, "fuzz", shape.grid, shape.block, &generator::args(p.seed, shape), 20_000_000)
            .expect("the generator's launch is valid");
    let launch = exec::Launch { seed: p.seed, memory_limit: MAX_MEMORY, ..launch };
    match exec::compare(&module, &program, &launch) {
        Ok((_, _, diffs)) => assert!(
            diffs.is_empty(),
            "{} difference(s) in {max_regs} registers, shape {shape:?}, first: {:?}\n--- program ---\n{src}",
            diffs.len(),
            diffs.first()
        ),
        Err(e) => panic!("{e} in {max_regs} registers, shape {shape:?}\n--- program ---\n{src}"),
    }
});
