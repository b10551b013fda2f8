//! Functions are compiled in parallel (rayon): the output must not depend on the number
//! of threads, in-process (`driver::compile` in pools of 1, 2 and 4 threads) and on the
//! command line (`--threads`); `--time-passes` reports every stage.

#[path = "../benches/common/ptxgen.rs"]
mod ptxgen;

use ptx2sass::driver::{self, Emit, Options};
use std::process::Command;

/// A module of many kernels (the benchmark's `kernels` shape, and empty ones), so that
/// the functions differ in size and finish in varying order.
fn many_kernels() -> String {
    let mut src = ptxgen::generate(ptxgen::Shape::Kernels, 1500);
    src.push_str(&ptxgen::generate(ptxgen::Shape::EmptyKernels, 200).replacen(
        ".version 7.8\n.target sm_50\n.address_size 64\n",
        "",
        1,
    ));
    src
}

fn compile_in(threads: usize, src: &str, emit: Emit) -> (String, String) {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
    pool.install(|| {
        let opts = Options { emit, ..Options::default() };
        let out = driver::compile(src, &opts).unwrap_or_else(|d| panic!("compile errors: {d:?}"));
        (out.text, format!("{:?} {:?}", out.stats, out.warnings))
    })
}

#[test]
fn output_does_not_depend_on_the_thread_count() {
    let src = many_kernels();
    for emit in [Emit::Ir, Emit::IrAlloc, Emit::Sass] {
        let one = compile_in(1, &src, emit);
        assert!(one.0.matches(".entry").count() >= 60 || emit != Emit::Sass, "many kernels");
        for threads in [2, 4] {
            let many = compile_in(threads, &src, emit);
            assert!(one == many, "{emit:?}: output with {threads} threads differs from 1 thread");
        }
    }
}

#[test]
fn sample_outputs_do_not_depend_on_the_thread_count() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/samples");
    let mut files: Vec<_> = std::fs::read_dir(dir).expect("samples").map(|e| e.expect("entry").path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "ptx"));
    files.sort();
    // All samples in one module: kernel names are unique across the corpus.
    let mut checked = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read");
        if driver::compile(&src, &Options::default()).is_err() {
            continue;
        }
        assert_eq!(compile_in(1, &src, Emit::Sass), compile_in(3, &src, Emit::Sass), "{}", f.display());
        checked += 1;
    }
    assert!(checked >= 30, "{checked} samples checked");
}

#[test]
fn cli_threads_and_time_passes() {
    let dir = std::env::temp_dir().join(format!("ptx2sass-parallel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = dir.join("many.ptx");
    std::fs::write(&input, many_kernels()).expect("write");
    let run = |extra: &[&str]| {
        let out =
            Command::new(env!("CARGO_BIN_EXE_ptx2sass")).arg("compile").arg(&input).args(extra).output().expect("runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (String::from_utf8(out.stdout).expect("utf8"), String::from_utf8(out.stderr).expect("utf8"))
    };
    let (one, _) = run(&["--threads", "1"]);
    let (three, stderr) = run(&["--threads", "3", "--time-passes"]);
    assert_eq!(one, three, "output with 3 threads differs from 1 thread");
    for stage in ["parse", "lower", "clean-up", "reconverge", "list-sched", "regalloc", "annotate", "print", "total"] {
        assert!(
            stderr.lines().any(|l| l.split_whitespace().next() == Some(stage)),
            "--time-passes does not report `{stage}`:\n{stderr}"
        );
    }
    // Without the flag, nothing on stderr.
    let (_, quiet) = run(&["--threads", "2"]);
    assert!(quiet.is_empty(), "{quiet}");
    std::fs::remove_dir_all(&dir).ok();
}
