//! Reconvergence across a family of loop shapes (issue 20, fuzz findings
//! `tests/data/fuzz/reconverge_nonterminating{,_min}.ptx` and
//! `lower_bar_sync_reconvergence.ptx`): an inner loop whose exit is the back edge of an
//! outer loop (`while`, `do`-`while` or endless), with or without code between, with a
//! uniform or a per-thread trip count, a `return` from inside (uniform or per thread), and
//! a `bar.sync` inside the inner loop or after it; and a divergent spin before a
//! warp-synchronous instruction ([`Spin`]: a cycle through its own block, its loop's
//! header or an earlier block, both branch polarities, in no loop, one or two, first or
//! last in the kernel, ending or not). Every shape compiles (with the
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

/// Runs `launch` on both executors with seeds 1 and 0xbeef (the warp schedule's), pushing
/// to `failures` each run that fails or whose memory differs, prefixed with `label`.
fn compare_seeds(
    module: &ptx2sass::ptx::ast::Module,
    program: &ptx2sass::sass::program::Program,
    launch: &Launch,
    label: &str,
    failures: &mut Vec<String>,
) {
    for seed in [1, 0xbeef] {
        let l = Launch { seed, ..launch.clone() };
        match exec::compare(module, program, &l) {
            Err(e) => failures.push(format!("{label}: {e}")),
            Ok((_, _, diff)) if !diff.is_empty() => {
                failures.push(format!("{label}: {} difference(s), first {:?}", diff.len(), diff[0]))
            }
            Ok(_) => {}
        }
    }
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
        compare_seeds(&module, &program, &l, &format!("{shape:?}"), &mut failures);
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

/// Which cycle the divergent spin closes (see [`Spin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cycle {
    /// The spin's block branches back to its own top: with an outer loop, the outer
    /// loop's header too (its back edges share the header: the fuzz_found reproducer).
    SelfLoop,
    /// The branch goes back to the outer loop's header, a block before it (`SelfLoop` with
    /// code in between; without an outer loop, a two-block spin).
    ToHeader,
    /// The branch goes back to an earlier block of the outer loop that is not its header
    /// (an inner loop of its own).
    ToMiddle,
    /// The branch goes to the outer `do`-`while`'s latch block (`LATCH: bra SPIN`, after
    /// the loop's exit test), which the threads leaving the spin reach too: the spin's
    /// cycle shares a block with the outer one besides the header.
    SharedLatch,
}

/// How the spin's branch is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Polarity {
    /// `@p bra SPIN` (p: keep spinning), falling through to the exit.
    Back,
    /// `@!p bra SPIN` (p: done).
    BackNot,
    /// `@p bra EXIT` (p: done), then `bra SPIN`.
    Out,
}

/// The loops around the spin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Around {
    None,
    /// `do { } while`: 3 rounds.
    DoWhile,
    /// `while () { }`: the test in a block of its own before the spin, 2 rounds.
    While,
    /// A `do`-`while` inside another one (2 rounds).
    Nested,
}

/// The warp-synchronous instruction after the spin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SyncOp {
    Bar,
    BarRed,
    Vote,
    Shfl,
}

/// Where the kernel's code is relative to the spin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// The outermost loop's header is the kernel's first block.
    First,
    /// A prologue first, the spin inline.
    Middle,
    /// The spin's blocks are the last ones of the kernel (reached by a jump, leaving by one).
    Last,
}

/// A divergent spin (issue 20, `tests/fuzz_found.rs`'s `reconverge_inner_cycle`): each
/// thread `atom.global.add`s its own counter until it passes `tid % 4` (threads of a warp
/// leave at different rounds; `forever`: threads with `tid % 4 != 0` never leave, compile
/// only), then every thread comes to a `bar.sync`, `bar.red.popc`, `vote.ballot` or
/// `shfl.idx` (right at the spin's exit, or after a uniform `if`), whose result it adds
/// to `out[tid]`. Loop counters live in global memory (per thread, the same for all), so
/// that every block computes what it needs and the spin can be the kernel's first block.
#[derive(Clone, Copy, Debug)]
struct Spin {
    cycle: Cycle,
    polarity: Polarity,
    around: Around,
    sync: SyncOp,
    /// The warp-synchronous instruction comes after a uniform `if` rather than right at
    /// the spin's exit.
    later: bool,
    layout: Layout,
    forever: bool,
    /// The loops around count in registers (`%r8`, `%r7`, set by the prologue): their
    /// exits are uniform, as in the reproducer. Otherwise in global memory (per-thread
    /// `atom.global.add`: divergent for the analysis, the same in every thread at run time).
    uniform_outer: bool,
}

/// Per-thread addresses (`%rd4` out, `%rd5` spin counter, `%rd6` outer, `%rd7` nested
/// counter) and `%r1` = `%tid.x`, `%r9` = `n`, `%p7` = `n == 12345` (false: a uniform
/// condition). Every block that needs them starts with this.
const ADDR: &str = "\tmov.u32 %r1, %tid.x;\n\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd1, %rd1;\n\
\tld.param.u64 %rd2, [ctr];\n\tcvta.to.global.u64 %rd2, %rd2;\n\tld.param.u32 %r9, [n];\n\
\tsetp.eq.u32 %p7, %r9, 12345;\n\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n\
\tadd.s64 %rd5, %rd2, %rd3;\n\tadd.s64 %rd6, %rd5, 256;\n\tadd.s64 %rd7, %rd5, 512;\n";

impl Spin {
    fn all() -> Vec<Spin> {
        let mut v = vec![];
        let mut k = 0usize;
        for cycle in [Cycle::SelfLoop, Cycle::ToHeader, Cycle::ToMiddle, Cycle::SharedLatch] {
            for polarity in [Polarity::Back, Polarity::BackNot, Polarity::Out] {
                for around in [Around::None, Around::DoWhile, Around::While, Around::Nested] {
                    if around == Around::None && cycle == Cycle::ToMiddle {
                        continue; // No loop for the spin to be in the middle of.
                    }
                    // A latch to share needs a `do`-`while` (a `while`'s latch goes through
                    // its test, which would count the spin's rounds).
                    if cycle == Cycle::SharedLatch && !matches!(around, Around::DoWhile | Around::Nested) {
                        continue;
                    }
                    for layout in [Layout::First, Layout::Middle, Layout::Last] {
                        for forever in [false, true] {
                            for uniform_outer in [false, true] {
                                // Registers need the prologue to set them.
                                if uniform_outer && (around == Around::None || layout == Layout::First) {
                                    continue;
                                }
                                // The instruction and its place rotate over the shapes.
                                let sync = [SyncOp::Bar, SyncOp::BarRed, SyncOp::Vote, SyncOp::Shfl][k % 4];
                                let later = k / 4 % 2 == 1;
                                k += 1;
                                v.push(Spin { cycle, polarity, around, sync, later, layout, forever, uniform_outer });
                            }
                        }
                    }
                }
            }
        }
        v
    }

    /// The spin: from its entry label `SPIN` (with `ToHeader`/`ToMiddle`, the block it
    /// goes back to) to an explicit `bra EXIT`.
    fn cycle(&self) -> String {
        let test = if self.forever {
            "\tand.b32 %r3, %r1, 3;\n\tsetp.ne.u32 %p1, %r3, 0;\n"
        } else {
            "\tand.b32 %r3, %r1, 3;\n\tsetp.lt.u32 %p1, %r2, %r3;\n"
        };
        // `%p1`: keep spinning.
        let branch = match self.polarity {
            Polarity::Back => "\t@%p1 bra BACK;\n\tbra EXIT;\n",
            Polarity::BackNot => "\tnot.pred %p2, %p1;\n\t@!%p2 bra BACK;\n\tbra EXIT;\n",
            Polarity::Out => "\tnot.pred %p2, %p1;\n\t@%p2 bra EXIT;\n\tbra BACK;\n",
        };
        let count = "\tatom.global.add.u32 %r2, [%rd5], 1;\n";
        let back = match self.cycle {
            Cycle::SelfLoop | Cycle::SharedLatch => format!("SPIN:\n{ADDR}{count}{test}{branch}"),
            // The back edge's target, a block of code, then the test.
            Cycle::ToHeader => format!(
                "SPIN:\n{ADDR}{count}\t@%p7 bra TEST;\n\tst.global.u32 [%rd4+0], %r2;\nTEST:\n{ADDR}{test}{branch}"
            ),
            Cycle::ToMiddle => {
                format!("SPIN:\n{ADDR}\tst.global.u32 [%rd4+0], %r9;\nMID:\n{ADDR}{count}{test}{branch}")
            }
        };
        let target = match self.cycle {
            Cycle::ToMiddle => "MID",
            Cycle::SharedLatch => "LATCH",
            Cycle::SelfLoop | Cycle::ToHeader => "SPIN",
        };
        back.replace("BACK", target)
    }

    /// The kernel `k(out, ctr, n)`.
    fn ptx(&self) -> String {
        let sync = match self.sync {
            SyncOp::Bar => "\tbar.sync 0;\n\tmov.u32 %r4, 1;\n",
            SyncOp::BarRed => "\tand.b32 %r3, %r1, 1;\n\tsetp.ne.u32 %p3, %r3, 0;\n\tbar.red.popc.u32 %r4, 0, %p3;\n",
            SyncOp::Vote => "\tand.b32 %r3, %r1, 5;\n\tsetp.ne.u32 %p3, %r3, 0;\n\tvote.ballot.b32 %r4, %p3;\n",
            SyncOp::Shfl => "\tadd.s32 %r3, %r1, 7;\n\tshfl.idx.b32 %r4, %r3, 3, 31;\n",
        };
        let skip = if self.later {
            format!("\t@%p7 bra SYNC;\n\tst.global.u32 [%rd4+0], %r9;\nSYNC:\n{ADDR}")
        } else {
            String::new()
        };
        let exit = format!(
            "EXIT:\n{ADDR}\tst.global.u32 [%rd5], 0;\n{skip}{sync}\tld.global.u32 %r5, [%rd4];\n\
\tadd.s32 %r5, %r5, %r4;\n\tst.global.u32 [%rd4], %r5;\n"
        );
        let (cycle, tail) = match self.layout {
            Layout::Last => ("\tbra SPIN;\n".to_string(), self.cycle()),
            _ => (self.cycle(), String::new()),
        };
        // The outer loop's header: the spin's first block (`SPIN`), or the `while` test.
        // Sets `%p4` when the loop counting in `slot` (memory) or `reg` goes on: `rounds`
        // rounds per entry (a register restarts at 0 outside the loop, a memory counter
        // runs on: its value modulo `rounds`).
        let counted = |slot: &str, reg: &str, rounds: u32| {
            if self.uniform_outer {
                format!("\tadd.s32 {reg}, {reg}, 1;\n\tsetp.lt.u32 %p4, {reg}, {rounds};\n")
            } else {
                format!(
                    "{ADDR}\tatom.global.add.u32 %r6, [{slot}], 1;\n\trem.u32 %r6, %r6, {rounds};\n\
\tsetp.ne.u32 %p4, %r6, {};\n",
                    rounds - 1
                )
            }
        };
        let reset = if self.uniform_outer { "\tmov.u32 %r8, 0;\n" } else { "" };
        // The do-while's back edge: straight to the spin, or through the shared latch.
        let again = if self.cycle == Cycle::SharedLatch {
            "\t@!%p4 bra OUTEND;\nLATCH:\n\tbra SPIN;\nOUTEND:\n"
        } else {
            "\t@%p4 bra SPIN;\n"
        };
        let body = match self.around {
            Around::None => format!("{cycle}{exit}"),
            Around::DoWhile => format!("{cycle}{exit}{}{again}", counted("%rd6", "%r8", 3)),
            Around::While => {
                format!("OUTER:\n{}\t@!%p4 bra DONE;\n{cycle}{exit}\tbra OUTER;\n", counted("%rd6", "%r8", 3))
            }
            // `NEST:` and the spin's first label name one block unless the spin is laid out last.
            Around::Nested => format!(
                "NEST:\n{cycle}{exit}{}{again}{reset}{}\t@%p4 bra NEST;\n",
                counted("%rd6", "%r8", 3),
                counted("%rd7", "%r7", 2)
            ),
        };
        let prologue = if self.layout == Layout::First {
            String::new()
        } else {
            format!("{ADDR}\tst.global.u32 [%rd5], 0;\n{reset}\tmov.u32 %r7, 0;\n")
        };
        format!(
            ".version 4.0\n.target sm_50\n.address_size 64\n\
.visible .entry k(.param .u64 out, .param .u64 ctr, .param .u32 n)\n{{\n\
\t.reg .pred %p<8>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<8>;\n{prologue}{body}DONE:\n\tret;\n{tail}}}\n"
        )
    }
}

/// Every [`Spin`]: compiled with `--verify` (and the reconvergence checker, as in every
/// debug build) and lowered without the clean-up passes, never an internal error; the
/// terminating ones run on both executors (2 warps) with the same memory as the PTX
/// interpreter. Before `lower::cfg::nest`, the spins closing a cycle through a shared
/// header (`SelfLoop`/`ToHeader` inside a loop) were internal errors; before
/// `cfg::graph::PostDom` counted a guarded `EXIT` as an exit, the `SharedLatch` ones ran
/// the barrier with part of the warp.
#[test]
fn spin_shapes_compile_and_run_alike() {
    let (mut compiled, mut ran) = (0, 0);
    let mut failures = vec![];
    for shape in Spin::all() {
        let src = shape.ptx();
        for m in lower_without_clean_up(&src).err().unwrap_or_default() {
            if m.contains("internal error") {
                failures.push(format!("{shape:?} without clean-up: {m}"));
            }
        }
        let mut opts = ptx2sass::driver::Options::default();
        opts.regalloc.verify = true;
        let program = match ptx2sass::driver::compile(&src, &opts) {
            Ok(o) => o.program.expect("a program"),
            Err(d) => {
                failures.extend(d.into_iter().map(|d| format!("{shape:?}: {}", d.message)));
                continue;
            }
        };
        compiled += 1;
        if shape.forever {
            continue;
        }
        let (module, _) = ptx2sass::ptx::parse(&src).expect("parses");
        let mut s = Setup::new();
        let out = s.buf(vec![0; 4 * 64]);
        let ctr = s.buf(vec![0; 3 * 4 * 64]);
        let l = s.launch(&program, "k", [1, 1, 1], [64, 1, 1], &[Val::I(out), Val::I(ctr), Val::I(3)]);
        compare_seeds(&module, &program, &l, &format!("{shape:?}"), &mut failures);
        ran += 1;
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    assert_eq!((compiled, ran), (366, 183), "shapes compiled, shapes run");
}
