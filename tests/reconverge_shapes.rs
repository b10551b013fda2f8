//! Reconvergence across a family of loop shapes (issue 20, fuzz findings
//! `tests/data/fuzz/reconverge_nonterminating{,_min}.ptx` and
//! `lower_bar_sync_reconvergence.ptx`): an inner loop whose exit is the back edge of an
//! outer loop (`while`, `do`-`while` or endless), with or without code between, with a
//! uniform or a per-thread trip count, a `return` from inside (uniform or per thread), and
//! a `bar.sync` inside the inner loop or after it. Every shape compiles (with the
//! reconvergence checker on, as in every debug build) or gets a diagnostic that is not an
//! internal error, with and without the clean-up passes; those that end and use barriers
//! as PTX defines run on both executors with the same memory.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec::{self, Launch};

/// The outer loop around the inner one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outer {
    /// `while (i < n)`: the test at the header, the back edge an unconditional jump.
    While,
    /// `do { } while (i < n)`: the test at the latch.
    DoWhile,
    /// `for (;;)`: no exit but the inner loop's `return`.
    Endless,
}

/// What lies between the inner loop's exit and the outer back edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    /// Nothing: the exit edge is the outer back edge (a jump-only block).
    Jump,
    /// A store.
    Code,
}

/// Where a `bar.sync 0` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bar {
    None,
    /// At the top of the inner loop.
    Inner,
    /// In the outer loop after the inner one.
    After,
}

/// One shape of the family.
#[derive(Clone, Copy, Debug)]
struct Shape {
    outer: Outer,
    tail: Tail,
    /// The inner loop's trip count depends on `%tid.x`.
    divergent: bool,
    /// The inner loop may `return` (`None`: no return; `Some(divergent)`).
    ret: Option<bool>,
    bar: Bar,
}

impl Shape {
    fn all() -> Vec<Shape> {
        let mut v = vec![];
        for outer in [Outer::While, Outer::DoWhile, Outer::Endless] {
            for tail in [Tail::Jump, Tail::Code] {
                for divergent in [false, true] {
                    for ret in [None, Some(false), Some(true)] {
                        for bar in [Bar::None, Bar::Inner, Bar::After] {
                            v.push(Shape { outer, tail, divergent, ret, bar });
                        }
                    }
                }
            }
        }
        v
    }

    /// True if every thread ends (an endless outer loop needs the `return`).
    fn terminates(&self) -> bool {
        self.outer != Outer::Endless || self.ret.is_some()
    }

    /// True if every thread of the CTA comes to each barrier the same number of times
    /// (PTX ISA 9.7.13.1 bar: otherwise undefined): the barrier is inside no loop or
    /// branch whose trip count differs between threads.
    fn barriers_defined(&self) -> bool {
        let divergent_ret = self.ret == Some(true);
        match self.bar {
            Bar::None => true,
            Bar::Inner => !self.divergent && !divergent_ret,
            Bar::After => !divergent_ret,
        }
    }

    /// The kernel `k(out, n)`: per thread, `out[tid]` = what it computed.
    fn ptx(&self) -> String {
        let limit = if self.divergent { "and.b32 %r5, %r1, 3;\n\tadd.s32 %r5, %r5, 1;" } else { "mov.u32 %r5, %r9;" };
        let bar_inner = if self.bar == Bar::Inner { "bar.sync 0;" } else { "" };
        let bar_after = if self.bar == Bar::After { "bar.sync 0;" } else { "" };
        // `return` once the sum passes a bound (per thread) or once the outer counter
        // reaches `n` - 1 (uniform).
        let ret = match self.ret {
            None => String::new(),
            Some(true) => "setp.gt.u32 %p3, %r3, 24;\n\t@%p3 bra RET;".into(),
            Some(false) => "add.s32 %r6, %r2, 1;\n\tsetp.ge.u32 %p3, %r6, %r9;\n\t@%p3 bra RET;".into(),
        };
        let tail = if self.tail == Tail::Code { "st.global.u32 [%rd3], %r3;" } else { "" };
        let (top, latch) = match self.outer {
            Outer::While => ("setp.ge.u32 %p2, %r2, %r9;\n\t@%p2 bra DONE;", "bra.uni OUTER;"),
            Outer::DoWhile => ("", "setp.lt.u32 %p2, %r2, %r9;\n\t@%p2 bra OUTER;\n\tbra.uni DONE;"),
            Outer::Endless => ("", "bra.uni OUTER;"),
        };
        // The outer counter's increment goes before the inner loop, so that with `Jump`
        // the inner loop's exit is the back edge itself.
        format!(
            ".version 4.0\n.target sm_50\n.address_size 64\n\
.visible .entry k(.param .u64 out, .param .u32 n)\n{{\n\
\t.reg .pred %p<4>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<4>;\n\
\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tld.param.u32 %r9, [n];\n\
\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
\tand.b32 %r3, %r1, 7;\n\tmov.u32 %r2, 0;\n\t{limit}\n\
OUTER:\n\t{top}\n\tadd.s32 %r2, %r2, 1;\n\tmov.u32 %r4, 0;\n\
INNER:\n\t{bar_inner}\n\tadd.s32 %r3, %r3, %r4;\n\tadd.s32 %r3, %r3, 1;\n\tadd.s32 %r4, %r4, 1;\n\t{ret}\n\
\tsetp.lt.u32 %p1, %r4, %r5;\n\t@%p1 bra INNER;\n\t{tail}\n\t{bar_after}\n\t{latch}\n\
DONE:\n\tmad.lo.s32 %r3, %r2, 100, %r3;\n\tst.global.u32 [%rd3], %r3;\n\tret;\n\
RET:\n\tmad.lo.s32 %r3, %r2, 1000, %r3;\n\tst.global.u32 [%rd3], %r3;\n\tret;\n}}\n"
        )
    }
}

/// Lowers `src` as `fuzz/ lower` does with its option byte `/`: no clean-up passes,
/// `--deny-emulation`, `--allow-newer-target`, `--inline=never`, the reconvergence checker
/// on. Returns the error messages.
fn lower_without_clean_up(src: &str) -> Result<ptx2sass::ir::Module, Vec<String>> {
    let front = ptx2sass::ptx::target::Options { allow_newer_target: true };
    let (m, _) = ptx2sass::ptx::parse_with(src, &front).expect("parses");
    let opts = ptx2sass::lower::Options {
        no_opt: true,
        deny_emulation: true,
        inline: ptx2sass::lower::calls::callgraph::Inline::Never,
        check_reconvergence: true,
    };
    ptx2sass::lower::lower(&m, &opts).map(|(irm, _)| irm).map_err(|d| d.into_iter().map(|d| d.message).collect())
}

/// Every shape: compiled (debug build: the reconvergence checker runs) and lowered without
/// the clean-up passes, never an internal error; run on both executors when it ends and
/// its barriers are defined (1 CTA of 64 threads, two warps, `n` = 3).
#[test]
fn loop_shapes_compile_and_run_alike() {
    let (mut compiled, mut ran) = (0, 0);
    let mut failures = vec![];
    for shape in Shape::all() {
        let src = shape.ptx();
        for m in lower_without_clean_up(&src).err().unwrap_or_default() {
            if m.contains("internal error") {
                failures.push(format!("{shape:?} without clean-up: {m}"));
            }
        }
        let opts = ptx2sass::driver::Options::default();
        let program = match ptx2sass::driver::compile(&src, &opts) {
            Ok(o) => o.program.expect("a program"),
            Err(d) => {
                for d in d {
                    if d.message.contains("internal error") {
                        failures.push(format!("{shape:?}: {}", d.message));
                    }
                }
                continue;
            }
        };
        compiled += 1;
        if !shape.terminates() || !shape.barriers_defined() {
            continue;
        }
        let (module, _) = ptx2sass::ptx::parse(&src).expect("parses");
        let mut s = Setup::new();
        let out = s.buf(vec![0; 4 * 64]);
        let l = s.launch(&program, "k", [1, 1, 1], [64, 1, 1], &[Val::I(out), Val::I(3)]);
        for seed in [1, 0xbeef] {
            let l = Launch { seed, ..l.clone() };
            match exec::compare(&module, &program, &l) {
                Err(e) => failures.push(format!("{shape:?}: {e}")),
                Ok((_, _, diff)) if !diff.is_empty() => {
                    failures.push(format!("{shape:?}: {} difference(s), first {:?}", diff.len(), diff[0]))
                }
                Ok(_) => {}
            }
        }
        ran += 1;
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    assert_eq!((compiled, ran), (108, 62), "shapes compiled, shapes run");
}

/// `fuzz/ exec`'s `bitonic_sort512` mutant and its minimised core: a divergent loop around
/// `bar.sync` whose exit is the back edge of an endless outer loop. No block reaches an
/// exit, so there were no post-dominators to place the loop's PBK target by, and
/// lowering stopped with "no fix for the reconvergence problems found (internal
/// error)". ptxas 11.8 compiles both (`-O3`: it drops the minimised core's branch, whose
/// sides both come to the loop's `bar.sync`). Now the latch of an endless loop flows into
/// the virtual exit (`cfg::graph::PostDom`): the inner loop's PBK target is the back
/// edge's block.
#[test]
fn loop_exiting_to_the_back_edge_of_an_endless_loop_compiles() {
    for name in ["reconverge_nonterminating_min", "reconverge_nonterminating"] {
        let path = format!("{}/tests/data/fuzz/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(path).expect("reproducer exists");
        let p = compile(&src);
        assert!(!p.functions.is_empty(), "{name}");
        let irm = lower_without_clean_up(&src).unwrap_or_else(|e| panic!("{name} without clean-up: {e:?}"));
        assert!(!irm.functions.is_empty(), "{name}");
    }
}

/// `fuzz/ lower`'s `sgemm_reg` mutant (`tests/data/fuzz/lower_bar_sync_reconvergence.ptx`,
/// the loop branch retargeted so that a divergent `if` joins at the loop header), lowered
/// as the fuzz target did (its option byte `/`: no clean-up passes). Restructuring gave
/// the loop a preheader and SSA was rebuilt on copies, so the loop counter entered the
/// loop through a parameter of the `if`'s join receiving per-edge copies of one value
/// (`copy %r815, RZ` / `copy %r1092, RZ`), which the divergence analysis took as
/// divergent: the loop's exit, and so the `bar.sync` in it, looked divergent and the
/// checker rejected the barrier. The code was right (the counter is uniform at run time;
/// a real per-thread exit would be the program's own undefined barrier). Now a parameter
/// receiving one value (through copies) is that value: the loop needs no PBK.
#[test]
fn loop_counter_through_copies_of_one_value_stays_uniform() {
    let path = format!("{}/tests/data/fuzz/lower_bar_sync_reconvergence.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(path).expect("reproducer exists");
    let irm = lower_without_clean_up(&src).unwrap_or_else(|e| panic!("{e:?}"));
    let f = irm.functions.iter().find(|f| f.name == "sgemm_reg4x4").expect("kernel");
    let pbk = f.layout.iter().flat_map(|b| &f.cfg[*b].instrs).filter(|i| i.op == ptx2sass::sass::op::Op::Pbk).count();
    assert_eq!(pbk, 0, "{f}");
}
