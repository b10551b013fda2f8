//! `cargo bench`: the whole pipeline (`driver::compile`, PTX text to SASS text, release
//! options: no allocation verifier or hazard checker) on the synthetic kernels of
//! `benches/common/ptxgen.rs`, every shape at 1k and 10k lines (100k with
//! `PTX2SASS_BENCH_LINES=1000,10000,100000`; `scripts/bench.sh` prints the table with
//! per-stage times, peak memory and ptxas beside it).

#[path = "common/ptxgen.rs"]
mod ptxgen;

use ptx2sass::driver::{self, Options};
use ptxgen::Shape;

fn main() {
    divan::main();
}

fn sizes() -> Vec<usize> {
    std::env::var("PTX2SASS_BENCH_LINES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1000, 10000])
}

fn options() -> Options {
    let mut o = Options { check_hazards: false, ..Options::default() };
    o.regalloc.verify = false;
    o
}

fn run(bencher: divan::Bencher, shape: Shape, lines: usize) {
    let src = ptxgen::generate(shape, lines);
    let opts = options();
    // A kernel that does not compile is a failure, not a time.
    driver::compile(&src, &opts).unwrap_or_else(|_| panic!("{} at {lines} lines does not compile", shape.name()));
    bencher
        .counter(divan::counter::ItemsCount::new(src.lines().count()))
        .bench(|| driver::compile(divan::black_box(&src), &opts).map(|o| o.text.len()).unwrap_or(0));
}

macro_rules! shapes {
    ($($name:ident => $shape:expr),* $(,)?) => {
        $(
            #[divan::bench(args = sizes(), sample_count = 5, sample_size = 1)]
            fn $name(bencher: divan::Bencher, lines: usize) {
                run(bencher, $shape, lines);
            }
        )*
    };
}

shapes! {
    straight => Shape::Straight,
    branchy => Shape::Branchy,
    loops => Shape::Loops,
    ifelse => Shape::IfElse,
    spill => Shape::Spill,
    kernels => Shape::Kernels,
    setp_bra => Shape::SetpBra,
    pred_add => Shape::PredAdd,
    if_regions => Shape::IfRegions,
    empty_kernels => Shape::EmptyKernels,
    nested_loops => Shape::NestedLoops,
}
