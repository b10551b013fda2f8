//! Synthetic PTX kernels for the compile-time benchmark (`benches/compile.rs`,
//! `scripts/bench.sh`, `examples/ptxgen.rs`): one generator per shape of code that real
//! large kernels have (generated and unrolled CUDA, code generators), each producing about
//! `lines` lines of PTX in the style clang-14/llc-14 emits (`.reg` ranges, `%r`/`%f`/`%rd`
//! registers, `$L__` labels).
//!
//! Every kernel is valid PTX ISA 7.8 that both ptx2sass and ptxas 11.8 accept. The output
//! is a pure function of `(shape, lines)`: no randomness, so timings are comparable across
//! runs and machines.
#![allow(dead_code)]

use std::fmt::Write;

/// A shape of kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One basic block: loads at thread-dependent (gathered) offsets, integer and float
    /// arithmetic, stores.
    Straight,
    /// Issue 14's kernel: the `Straight` statements with a data-dependent branch around
    /// a few of them every few statements.
    Branchy,
    /// Many small counted loops one after the other (load, FMA, pointer bump, compare,
    /// back edge).
    Loops,
    /// Long if/else-if chains on a thread-dependent selector (64 arms each).
    IfElse,
    /// High register pressure: groups of 300 loads all live until their sum is known
    /// (a normalization), forcing spills at the default 255-register budget.
    Spill,
    /// Many kernels of about 100 lines (the `Branchy` statements) in one module.
    Kernels,
    /// Issue 20: a chain of `setp` / `@p bra` to one exit label (3 lines per link).
    SetpBra,
    /// Issue 20: predicated adds (`@%p add`), a new predicate every 64 lines.
    PredAdd,
    /// Issue 20: small if-regions (`setp`, `@p bra`, `add`, label).
    IfRegions,
    /// Issue 20: empty kernels (`{ ret; }`), 4 lines each.
    EmptyKernels,
    /// Issue 20: nests of 200 counted loops (about 6 lines per level), one after the
    /// other (one shallower nest at 1k lines).
    NestedLoops,
}

impl Shape {
    /// Every shape, in the benchmark table's order.
    pub const ALL: [Shape; 11] = [
        Shape::Straight,
        Shape::Branchy,
        Shape::Loops,
        Shape::IfElse,
        Shape::Spill,
        Shape::Kernels,
        Shape::SetpBra,
        Shape::PredAdd,
        Shape::IfRegions,
        Shape::EmptyKernels,
        Shape::NestedLoops,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Straight => "straight",
            Shape::Branchy => "branchy",
            Shape::Loops => "loops",
            Shape::IfElse => "ifelse",
            Shape::Spill => "spill",
            Shape::Kernels => "kernels",
            Shape::SetpBra => "setp-bra",
            Shape::PredAdd => "pred-add",
            Shape::IfRegions => "if-regions",
            Shape::EmptyKernels => "empty-kernels",
            Shape::NestedLoops => "nested-loops",
        }
    }

    /// The shape called `name` ([`Shape::name`]).
    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL.iter().copied().find(|s| s.name() == name)
    }
}

/// A module of about `lines` lines of `shape`.
pub fn generate(shape: Shape, lines: usize) -> String {
    let mut out = String::from(".version 7.8\n.target sm_50\n.address_size 64\n\n");
    match shape {
        Shape::Kernels => {
            // About 100 lines per kernel (the kernel frame and a blank line are 32).
            let n = (lines / 100).max(1);
            for k in 0..n {
                let mut g = Kernel::new(&format!("k{k}"));
                g.body_lines(Shape::Branchy, 68);
                out.push_str(&g.finish());
                out.push('\n');
            }
        }
        Shape::EmptyKernels => {
            for k in 0..(lines / 4).max(1) {
                writeln!(out, ".visible .entry e{k}()\n{{\n\tret;\n}}").unwrap();
            }
        }
        _ => {
            let mut g = Kernel::new("big");
            // The module header and kernel frame (declarations, prologue, epilogue) are 35
            // lines.
            g.body_lines(shape, lines.saturating_sub(35));
            out.push_str(&g.finish());
        }
    }
    out
}

/// One kernel being generated: `in` (f32/u32 array), `out` (f32 array), `n` (u32).
/// Registers are numbered freshly as clang does, except the accumulators `%f1` (float)
/// and `%r6` (integer), which are updated in place (PTX registers are not SSA).
struct Kernel {
    name: String,
    body: String,
    lines: usize,
    r: usize,
    f: usize,
    rd: usize,
    p: usize,
    label: usize,
    stmt: usize,
}

impl Kernel {
    fn new(name: &str) -> Kernel {
        // %r1..%r6, %f1..%f2, %rd1..%rd7 are the prologue's.
        Kernel { name: name.into(), body: String::new(), lines: 0, r: 6, f: 2, rd: 7, p: 0, label: 0, stmt: 0 }
    }
    fn line(&mut self, s: String) {
        self.body.push('\t');
        self.body.push_str(&s);
        self.body.push('\n');
        self.lines += 1;
    }
    fn label_line(&mut self, l: &str) {
        writeln!(self.body, "{l}:").unwrap();
        self.lines += 1;
    }
    fn r(&mut self) -> String {
        self.r += 1;
        format!("%r{}", self.r)
    }
    fn f(&mut self) -> String {
        self.f += 1;
        format!("%f{}", self.f)
    }
    fn rd(&mut self) -> String {
        self.rd += 1;
        format!("%rd{}", self.rd)
    }
    fn p(&mut self) -> String {
        self.p += 1;
        format!("%p{}", self.p)
    }
    fn new_label(&mut self) -> String {
        self.label += 1;
        format!("$L__BB0_{}", self.label)
    }

    /// Appends statements of `shape` until the body has `target` lines.
    fn body_lines(&mut self, shape: Shape, target: usize) {
        while self.lines < target {
            match shape {
                Shape::Straight | Shape::Kernels => self.statement(),
                Shape::Branchy => {
                    if self.stmt % 3 == 2 {
                        self.guarded_statement();
                    } else {
                        self.statement();
                    }
                }
                Shape::Loops => self.small_loop(),
                Shape::IfElse => self.if_else_chain((target.saturating_sub(self.lines) / 6).clamp(1, 64)),
                Shape::Spill => self.normalize((target.saturating_sub(self.lines) / 4).clamp(1, 300)),
                Shape::SetpBra => self.setp_bra(),
                Shape::PredAdd => self.pred_add(),
                Shape::IfRegions => self.if_region(),
                Shape::NestedLoops => {
                    let depth = (target.saturating_sub(self.lines) / 6).clamp(1, 200);
                    self.nest(depth);
                }
                Shape::EmptyKernels => unreachable!("a module shape"),
            }
            self.stmt += 1;
        }
    }

    /// About 11 lines: a gathered load (index from the integer accumulator), a load at a
    /// fixed offset from the thread's element, float and integer arithmetic, a store.
    fn statement(&mut self) {
        let k = self.stmt;
        let (idx, wide, addr) = (self.r(), self.rd(), self.rd());
        self.line(format!("and.b32 \t{idx}, %r6, 1023;"));
        self.line(format!("mul.wide.u32 \t{wide}, {idx}, 4;"));
        self.line(format!("add.s64 \t{addr}, %rd3, {wide};"));
        let (a, b, c) = (self.f(), self.f(), self.f());
        self.line(format!("ld.global.f32 \t{a}, [{addr}];"));
        self.line(format!("ld.global.f32 \t{b}, [%rd6+{}];", 4 * (k % 2048)));
        self.line(format!("fma.rn.f32 \t{c}, {a}, {b}, %f1;"));
        self.line(format!("mul.f32 \t%f1, {c}, 0f3F000000;"));
        let (x, y) = (self.r(), self.r());
        self.line(format!("cvt.rzi.s32.f32 \t{x}, {c};"));
        self.line(format!("xor.b32 \t{y}, {x}, %r6;"));
        self.line(format!("shf.l.wrap.b32 \t%r6, {y}, {y}, {};", 1 + k % 31));
        self.line(format!("st.global.f32 \t[%rd7+{}], {c};", 4 * (k % 4096)));
    }

    /// A data-dependent branch around two updates of the accumulators and a store.
    fn guarded_statement(&mut self) {
        let k = self.stmt;
        let (p, l) = (self.p(), self.new_label());
        self.line(format!("setp.gt.f32 \t{p}, %f1, 0f3F800000;"));
        self.line(format!("@{p} bra \t{l};"));
        let (a, t) = (self.f(), self.r());
        self.line(format!("ld.global.f32 \t{a}, [%rd6+{}];", 4 * (k % 2048)));
        self.line(format!("add.f32 \t%f1, %f1, {a};"));
        self.line(format!("add.s32 \t{t}, %r6, {k};"));
        self.line(format!("mul.lo.s32 \t%r6, {t}, 1664525;"));
        self.line(format!("st.global.f32 \t[%rd7+{}], %f1;", 4 * (k % 4096)));
        self.label_line(&l);
    }

    /// A counted loop of `n` (a kernel parameter) iterations over the input.
    fn small_loop(&mut self) {
        let (i, ptr, l) = (self.r(), self.rd(), self.new_label());
        self.line(format!("mov.u32 \t{i}, 0;"));
        self.line(format!("add.s64 \t{ptr}, %rd6, {};", 4 * (self.stmt % 64)));
        self.label_line(&l);
        let (a, p) = (self.f(), self.p());
        self.line(format!("ld.global.f32 \t{a}, [{ptr}];"));
        self.line(format!("fma.rn.f32 \t%f1, {a}, %f2, %f1;"));
        self.line(format!("add.s64 \t{ptr}, {ptr}, 4;"));
        self.line(format!("add.s32 \t{i}, {i}, 1;"));
        self.line(format!("setp.lt.u32 \t{p}, {i}, %r1;"));
        self.line(format!("@{p} bra \t{l};"));
        self.line(format!("st.global.f32 \t[%rd7+{}], %f1;", 4 * (self.stmt % 4096)));
    }

    /// `if (sel == 0) {..} else if (sel == 1) {..} ...` with `arms` arms, then a store.
    fn if_else_chain(&mut self, arms: usize) {
        let (sel, end) = (self.r(), self.new_label());
        self.line(format!("and.b32 \t{sel}, %r6, 127;"));
        for a in 0..arms {
            let (p, next) = (self.p(), self.new_label());
            self.line(format!("setp.ne.s32 \t{p}, {sel}, {a};"));
            self.line(format!("@{p} bra \t{next};"));
            let t = self.f();
            self.line(format!("ld.global.f32 \t{t}, [%rd6+{}];", 4 * a));
            self.line(format!("fma.rn.f32 \t%f1, {t}, %f2, %f1;"));
            self.line(format!("bra.uni \t{end};"));
            self.label_line(&next);
        }
        self.line("add.f32 \t%f1, %f1, %f2;".into());
        self.label_line(&end);
        self.line(format!("st.global.f32 \t[%rd7+{}], %f1;", 4 * (self.stmt % 4096)));
        self.line("add.s32 \t%r6, %r6, 1;".into());
    }

    /// `k` loads, their sum, then every load scaled by the reciprocal of the sum and
    /// stored: all `k` values are live across the sum.
    fn normalize(&mut self, k: usize) {
        let vals: Vec<String> = (0..k).map(|_| self.f()).collect();
        for (j, v) in vals.iter().enumerate() {
            self.line(format!("ld.global.f32 \t{v}, [%rd6+{}];", 4 * j));
        }
        let mut sum = vals[0].clone();
        for v in &vals[1..] {
            let s = self.f();
            self.line(format!("add.f32 \t{s}, {sum}, {v};"));
            sum = s;
        }
        let inv = self.f();
        self.line(format!("rcp.approx.f32 \t{inv}, {sum};"));
        for (j, v) in vals.iter().enumerate() {
            let o = self.f();
            self.line(format!("mul.f32 \t{o}, {v}, {inv};"));
            self.line(format!("st.global.f32 \t[%rd7+{}], {o};", 4 * j));
        }
    }

    /// One link of a chain of early exits: update, compare, branch to the shared exit.
    fn setp_bra(&mut self) {
        let p = self.p();
        self.line(format!("add.s32 \t%r6, %r6, {};", self.stmt | 1));
        self.line(format!("setp.eq.s32 \t{p}, %r6, {};", self.stmt * 7));
        self.line(format!("@{p} bra \t$L__exit;"));
    }

    /// 64 adds guarded by one predicate (alternately negated).
    fn pred_add(&mut self) {
        let p = self.p();
        self.line(format!("setp.lt.s32 \t{p}, %r6, {};", self.stmt * 3));
        for j in 0..63 {
            let neg = if j % 2 == 0 { "" } else { "!" };
            self.line(format!("@{neg}{p} add.s32 \t%r6, %r6, {};", j + 1));
        }
    }

    /// `if (acc < k) acc += k;` as a branch around one add.
    fn if_region(&mut self) {
        let (p, l) = (self.p(), self.new_label());
        self.line(format!("setp.lt.s32 \t{p}, %r6, {};", self.stmt));
        self.line(format!("@{p} bra \t{l};"));
        self.line(format!("add.s32 \t%r6, %r6, {};", self.stmt + 1));
        self.label_line(&l);
    }

    /// `depth` nested loops of two iterations each, an accumulator update innermost.
    fn nest(&mut self, depth: usize) {
        let mut open = vec![];
        for _ in 0..depth {
            let (i, l) = (self.r(), self.new_label());
            self.line(format!("mov.u32 \t{i}, 0;"));
            self.label_line(&l);
            open.push((i, l));
        }
        self.line("add.s32 \t%r6, %r6, %r5;".into());
        while let Some((i, l)) = open.pop() {
            let p = self.p();
            self.line(format!("add.s32 \t{i}, {i}, 1;"));
            self.line(format!("setp.lt.u32 \t{p}, {i}, 2;"));
            self.line(format!("@{p} bra \t{l};"));
            self.line("xor.b32 \t%r6, %r6, 1;".into());
        }
    }

    /// The whole `.entry`: header, declarations, prologue, body, epilogue.
    fn finish(self) -> String {
        let n = &self.name;
        let mut s = String::new();
        writeln!(s, ".visible .entry {n}(").unwrap();
        writeln!(s, "\t.param .u64 {n}_param_0,\n\t.param .u64 {n}_param_1,\n\t.param .u32 {n}_param_2\n)\n{{")
            .unwrap();
        writeln!(s, "\t.reg .pred \t%p<{}>;", self.p + 1).unwrap();
        writeln!(s, "\t.reg .b32 \t%r<{}>;", self.r + 1).unwrap();
        writeln!(s, "\t.reg .f32 \t%f<{}>;", self.f + 1).unwrap();
        writeln!(s, "\t.reg .b64 \t%rd<{}>;", self.rd + 1).unwrap();
        s.push('\n');
        for l in [
            format!("ld.param.u64 \t%rd1, [{n}_param_0];"),
            format!("ld.param.u64 \t%rd2, [{n}_param_1];"),
            format!("ld.param.u32 \t%r1, [{n}_param_2];"),
            "cvta.to.global.u64 \t%rd3, %rd1;".into(),
            "cvta.to.global.u64 \t%rd4, %rd2;".into(),
            "mov.u32 \t%r2, %ctaid.x;".into(),
            "mov.u32 \t%r3, %ntid.x;".into(),
            "mov.u32 \t%r4, %tid.x;".into(),
            "mad.lo.s32 \t%r5, %r2, %r3, %r4;".into(),
            "mul.wide.u32 \t%rd5, %r5, 4;".into(),
            "add.s64 \t%rd6, %rd3, %rd5;".into(),
            "add.s64 \t%rd7, %rd4, %rd5;".into(),
            "ld.global.u32 \t%r6, [%rd6];".into(),
            "cvt.rn.f32.u32 \t%f1, %r6;".into(),
            "cvt.rn.f32.u32 \t%f2, %r5;".into(),
        ] {
            writeln!(s, "\t{l}").unwrap();
        }
        s.push_str(&self.body);
        s.push_str("$L__exit:\n");
        s.push_str("\tst.global.f32 \t[%rd7], %f1;\n\tst.global.u32 \t[%rd7+4], %r6;\n\tret;\n}\n");
        s
    }
}
