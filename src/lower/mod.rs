//! Lowering: checked PTX AST → IR of SPA 5.0 instructions on virtual registers.
//!
//! Per function (every kernel and device function with a body): lay out a kernel's
//! parameters in constant bank 0 (from `c[0x0][0x140]`) or bind a device function's to
//! the words of the calling convention (`realcall`), walk the body building basic blocks,
//! lower each instruction (`mem`, `alu`, `call`), then split critical edges, build SSA form
//! (`ssa`) and clean up (`opt`: copy propagation, constant-operand folding, dead-code
//! elimination, address folding). Calls are inlined or real calls as `callgraph` decides;
//! the f64 slow paths the functions call are added once (`float_slow`).

pub mod arith;
pub mod barrier;
pub mod calls;
pub mod cfg;
pub mod ctx;
pub mod mem;
pub mod opt;
pub mod ssa;
pub mod tex;
pub mod warp;

use crate::diag::Diag;
use crate::ir::{self, EdgeKind, Function, ParamSlot};
use crate::ptx::ast::{self, Block, FuncKind, Instruction, Item, Statement};
use crate::ptx::instr::InstrKind;
use crate::ptx::types::StateSpace;
use crate::sass::instr::{Instr, Reg, Src};
use crate::sass::op::Op;
use ctx::{Failed, LResult, Lowerer, ModuleLayout, VarLoc};
use std::collections::{HashMap, HashSet};

// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline"). The lints are denied item by item: an inner attribute here would cover
// every submodule of `lower`, and some are not under them yet.

/// First byte of kernel parameters in constant bank 0 (ptxas findings section 6).
pub const PARAM_BASE: u32 = 0x140;

/// Options that change what lowering emits.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stop after SSA construction (no cleanup passes), for debugging lowering.
    pub no_opt: bool,
    /// Make every emulated sm_70+ feature (and dropped hint) an error instead of a warning.
    pub deny_emulation: bool,
    /// Which calls are inlined (`--inline`, [`calls::callgraph::Inline`]).
    pub inline: calls::callgraph::Inline,
    /// Run the reconvergence checker ([`cfg::check`]) on every lowered function and fail
    /// with an internal error if it finds a violation. On by default in debug builds (so
    /// every program compiled in the test suite is checked); the CLI's `--verify` turns
    /// it on.
    pub check_reconvergence: bool,
}

#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
impl Default for Options {
    fn default() -> Self {
        Options {
            no_opt: false,
            deny_emulation: false,
            inline: calls::callgraph::Inline::default(),
            check_reconvergence: cfg!(debug_assertions),
        }
    }
}

/// `x` rounded up to a multiple of `a`, saturating (a `.align` may be 2^31,
/// `ptx::limits::MAX_ALIGN`: the product exceeds `u32` for `x` past 2^31).
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn align_up(x: u32, a: u32) -> u32 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

/// Lowers every function of `m` that has a body, kernels and device functions alike
/// (called or not: each is checked and compiled on its own; calls of it are inlined or
/// real calls as [`callgraph`] decides). Returns the IR module and warnings, or every
/// error. Functions are lowered in parallel (rayon); the result does not depend on the
/// number of threads.
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn lower(m: &ast::Module, opts: &Options) -> Result<(ir::Module, Vec<Diag>), Vec<Diag>> {
    let mut staged = build(m, opts);
    clean_up(&mut staged, opts);
    reconverge(&mut staged, opts);
    finish(staged)
}

/// One function between the lowering's stages: its IR, until a stage fails.
#[derive(Debug)]
pub struct Kernel {
    /// The function, `None` once a stage reported an error.
    pub func: Option<Function>,
    /// Its diagnostics so far (warnings, and the errors that stopped it).
    pub diags: Vec<Diag>,
    /// The function's name in the source, where internal errors point.
    pub span: ast::Span,
}

/// The module between the lowering's stages ([`build`], [`clean_up`], [`reconverge`],
/// [`finish`]), which the driver times one by one (`--time-passes`).
#[derive(Debug)]
pub struct Staged {
    /// The functions with bodies in source order (kernels and device functions), then the
    /// f64 slow paths they call ([`float_slow`]).
    pub kernels: Vec<Kernel>,
    /// Initial contents of constant bank 3.
    pub const_bank: Vec<u8>,
    /// The `.const` module variables in bank 3: (name, byte offset, size in bytes).
    pub const_vars: Vec<(String, u32, u32)>,
    /// The `.global` data ([`globals`]).
    pub data: crate::sass::data::ModuleData,
    /// Diagnostics of module-scope declarations.
    pub diags: Vec<Diag>,
}

/// Stage 1: module layout, then every function (in parallel) lowered, its critical edges
/// split and put in SSA form ([`ssa::construct`]); then the f64 slow paths the functions
/// call, once each.
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn build(m: &ast::Module, opts: &Options) -> Staged {
    use rayon::prelude::*;
    let mut diags = vec![];
    let placed = mem::globals::place(m, &mut diags);
    let mut layout = placed.layout;
    layout.calls = calls::callgraph::CallGraph::new(m);
    layout.inline = opts.inline;
    // Every function by name, a definition over a declaration.
    let mut funcs: HashMap<&str, &ast::Function> = HashMap::new();
    for i in &m.items {
        if let Item::Function(f) = i
            && (f.body.is_some() || !funcs.contains_key(f.name.name.as_str()))
        {
            funcs.insert(f.name.name.as_str(), f);
        }
    }
    // `.alias a, b`: a call of `a` inlines `b`.
    for (a, _) in &m.aliases {
        if let Some(f) = funcs.get(m.resolve_alias(&a.name)).copied() {
            funcs.insert(a.name.as_str(), f);
        }
    }
    layout.func_names = funcs.keys().map(|n| n.to_string()).collect();
    layout.refs = m.refs.iter().map(|r| (r.name.name.clone(), r.surface)).collect();
    layout.samplers = m.samplers.iter().map(|s| s.name.clone()).collect();
    layout.independent = crate::ptx::sampler::independent(m);
    // Bounds on what inlining can produce (`inline`): every call counted as inlined, so a
    // function within them stays within them whatever `--inline` decides.
    let inlined = calls::inline::measure(&funcs);
    let index = mem::shared::ModuleIndex::new(m);
    let bodies: Vec<&ast::Function> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) if f.body.is_some() => Some(f),
            _ => None,
        })
        .collect();
    let lowered: Vec<(Kernel, HashSet<arith::float_slow::SlowPath>)> = bodies
        .par_iter()
        .map(|f| {
            let span = f.name.span;
            if let Some(d) = calls::inline::check(f, &inlined) {
                return (Kernel { func: None, diags: vec![d], span }, HashSet::new());
            }
            match lower_function(&index, f, &funcs, &layout, opts) {
                Ok((func, d, slow)) => (Kernel { func: Some(func), diags: d, span }, slow),
                Err(d) => (Kernel { func: None, diags: d, span }, HashSet::new()),
            }
        })
        .collect();
    let mut kernels = vec![];
    let mut slow_paths: HashSet<arith::float_slow::SlowPath> = HashSet::new();
    for (k, slow) in lowered {
        kernels.push(k);
        slow_paths.extend(slow);
    }
    // The f64 slow paths the functions call, once each (`float_slow`), in name order.
    let mut slow_paths: Vec<arith::float_slow::SlowPath> = slow_paths.into_iter().collect();
    slow_paths.sort_by_key(|k| k.name());
    for kind in slow_paths {
        let mut lw = Lowerer::new(Function::new(&kind.name(), FuncKind::Func), &layout);
        lw.slow_path_body(kind);
        kernels.push(Kernel { func: Some(prepare(lw.f)), diags: lw.diags, span: ast::Span::default() });
    }
    Staged { kernels, const_bank: placed.const_bank, const_vars: placed.const_vars, data: placed.data, diags }
}

/// Stage 2: the clean-up passes on every function (unless `opts.no_opt`): copy
/// propagation, folding and dead code ([`opt`]), memory-address rewrites ([`memopt`]),
/// three-input fusion ([`combine`]), if-conversion ([`ifconv`]), texture write masks
/// ([`tex::mask`]).
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn clean_up(st: &mut Staged, opts: &Options) {
    use rayon::prelude::*;
    if opts.no_opt {
        return;
    }
    st.kernels.par_iter_mut().filter_map(|k| k.func.as_mut()).for_each(clean_up_function);
}

#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn clean_up_function(func: &mut Function) {
    opt::run(func);
    let mut again = mem::memopt::reuse_plg(func);
    while mem::memopt::scaled_index(func) {
        again = true;
    }
    again |= mem::memopt::fuse_generic_add(func);
    again |= mem::memopt::uniform_loads(func);
    again |= mem::vectorize::run(func);
    if again {
        opt::run(func);
    }
    if opt::combine::run(func) {
        opt::run(func);
    }
    if cfg::ifconv::run(func) {
        opt::run(func);
    }
    // After dead-code elimination: texture fetches write only the components read.
    tex::mask::narrow(func);
}

/// Stage 3: reconvergence points for divergent branches ([`cfg::reconverge::insert`]), a value
/// for every undefined predicate ([`ssa::define_undefined_predicates`]), the IR verifier
/// and (with `opts.check_reconvergence`) the reconvergence checker ([`cfg::check`]) on
/// every function.
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn reconverge(st: &mut Staged, opts: &Options) {
    use rayon::prelude::*;
    st.kernels.par_iter_mut().for_each(|k| {
        let Some(func) = &mut k.func else { return };
        let failed = match cfg::reconverge::insert(func, k.span).map(|()| ssa::define_undefined_predicates(func)) {
            Err(d) => Some(d),
            Ok(()) => match ir::verify::verify(func) {
                Err(e) => Some(Diag::error(k.span, format!("internal error after lowering: {e}"))),
                Ok(()) if opts.check_reconvergence => cfg::check::check(func)
                    .err()
                    .map(|e| Diag::error(k.span, format!("internal error: reconvergence: {e}"))),
                Ok(()) => None,
            },
        };
        if let Some(d) = failed {
            k.diags.push(d);
            k.func = None;
        }
    });
}

/// The lowered module and warnings, or every diagnostic (in source order) when a function
/// failed.
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
pub fn finish(st: Staged) -> Result<(ir::Module, Vec<Diag>), Vec<Diag>> {
    let mut diags = st.diags;
    let mut out = ir::Module { functions: vec![], const_bank: st.const_bank, const_vars: st.const_vars, data: st.data };
    for k in st.kernels {
        diags.extend(k.diags);
        out.functions.extend(k.func);
    }
    if diags.iter().any(Diag::is_error) { Err(diags) } else { Ok((out, diags)) }
}

/// The passes right after lowering a function: unreachable code, exits, irreducible
/// regions made reducible ([`cfg::reducible`]), critical edges, SSA form.
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn prepare(mut func: Function) -> Function {
    opt::remove_unreachable(&mut func);
    opt::thread_exits(&mut func);
    cfg::reducible::make_reducible(&mut func);
    opt::split_critical_edges(&mut func);
    ssa::construct(&mut func);
    func
}

/// Lowers one kernel or device function (with its inlined callees) to SSA IR.
#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
fn lower_function(
    index: &mem::shared::ModuleIndex,
    k: &ast::Function,
    funcs: &HashMap<&str, &ast::Function>,
    layout: &ModuleLayout,
    opts: &Options,
) -> Result<(Function, Vec<Diag>, std::collections::HashSet<arith::float_slow::SlowPath>), Vec<Diag>> {
    let mut lw = Lowerer::new(Function::new(&k.name.name, k.kind), layout);
    lw.f.linkage = match (k.kind, k.linkage) {
        (FuncKind::Entry, _) | (_, ast::Linkage::Visible | ast::Linkage::Extern) => ir::Linkage::Visible,
        (_, ast::Linkage::Weak) => ir::Linkage::Weak,
        _ => ir::Linkage::Internal,
    };
    lw.deny_emulation = opts.deny_emulation;
    // Definitions are counted in the functions that may be inlined into `k` (those it
    // reaches by calls), not in the whole module: one kernel's facts cost what it reaches.
    let reached = layout.calls.reachable(&k.name.name);
    lw.facts = mem::facts::FactTable::new(
        k,
        reached.iter().filter(|n| **n != k.name.name).filter_map(|n| funcs.get(n).copied()),
    );
    // Kernel parameters: natural or declared alignment, from c[0x0][0x140] (a device
    // function's arrive in registers, `realcall`).
    let mut off = PARAM_BASE;
    let kernel_params: &[ast::ParamDecl] = if k.kind == FuncKind::Entry { &k.params } else { &[] };
    for p in kernel_params {
        if p.unsized_array {
            lw.diags.push(
                Diag::error(p.span, format!("kernel parameter `{}` has no size", p.name.name))
                    .note("an unsized array `[]` is a device function's (variadic) parameter only"),
            );
        }
        off = align_up(off, p.alignment());
        let ty = match p.array {
            Some(n) => format!("{}[{n}]", p.ty),
            None => p.ty.to_string(),
        };
        lw.f.params.push(ParamSlot { name: p.name.name.clone(), ty, offset: off, size: p.size() });
        lw.vars.insert(p.name.name.clone(), VarLoc::KernelParam(off));
        lw.var_align.insert(p.name.name.clone(), p.alignment());
        // Saturating: `ptx::limits` rejects more than 0x1100 bytes of parameters first.
        off = off.saturating_add(p.size());
    }
    if off > 0x140 + 4096 {
        lw.diags.push(Diag::error(
            k.name.span,
            format!("kernel parameters take {} bytes; the limit is 4096", off.saturating_sub(PARAM_BASE)),
        ));
    }
    for (name, &o) in &layout.consts {
        lw.vars.insert(name.clone(), VarLoc::Const(o));
    }
    lw.var_align.extend(layout.align.iter().map(|(k, v)| (k.clone(), *v)));
    for name in layout.globals.keys() {
        lw.vars.insert(name.clone(), VarLoc::Global);
    }
    let shared = match mem::shared::layout(index, k) {
        Ok(s) => s,
        Err(d) => return Err(vec![d]),
    };
    // Only the module variables a reachable function names (the others are never looked
    // up): the cost is the kernel's, not the module's.
    for (name, off) in &shared.module {
        lw.vars.insert(name.clone(), VarLoc::Shared(*off));
    }
    lw.f.shared_bytes = shared.bytes;
    lw.shared = shared;
    if k.kind == FuncKind::Func {
        let _ = lw.begin_device_function(k);
    }
    let Some(body) = k.body.as_ref() else {
        lw.diags.push(Diag::error(k.name.span, "internal error: a function without a body lowered"));
        return Err(lw.diags);
    };
    let _ = lw.lower_block(body, funcs);
    lw.finish_device_function();
    lw.finish_body();
    if lw.diags.iter().any(Diag::is_error) {
        return Err(lw.diags);
    }
    let slow = std::mem::take(&mut lw.slow_paths);
    Ok((prepare(lw.f), lw.diags, slow))
}

#[deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
impl Lowerer<'_> {
    /// Lowers the statements of a block (a function body), with its nested blocks, each
    /// a scope of its own ([`ctx::Scope`]). The walk is iterative: its depth is the input's
    /// nesting depth.
    pub fn lower_block(&mut self, b: &Block, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        let mut ok = true;
        self.open_scope(b);
        let mut stack = vec![b.stmts.iter()];
        while let Some(it) = stack.last_mut() {
            let Some(s) = it.next() else {
                stack.pop();
                self.scopes.pop();
                continue;
            };
            let label = self.last_label.take();
            match s {
                Statement::Decl(ds) => {
                    for d in ds {
                        self.declare(d);
                    }
                }
                Statement::Label(l) => {
                    let target = self.label_block(&l.name);
                    self.fallthrough_to(target);
                    self.f.cfg[target].name = l.name.clone();
                    self.facts.at_label();
                    self.last_label = Some(l.name.clone());
                }
                Statement::CallPrototype(p) => {
                    if let Some(l) = label {
                        self.protos.insert(self.scoped(&l), p.clone());
                    }
                }
                Statement::Instr(i) => {
                    if self.lower_instr(i, funcs).is_err() {
                        ok = false;
                    }
                    self.update_facts(i);
                }
                Statement::Block(inner) => {
                    self.open_scope(inner);
                    stack.push(inner.stmts.iter());
                }
                Statement::Pragma(..) | Statement::Error(_) => {}
            }
        }
        if ok { Ok(()) } else { Err(Failed) }
    }

    /// Handles a declaration inside a function body: the name is declared in the current
    /// block's scope.
    fn declare(&mut self, d: &ast::VarDecl) {
        match d.space {
            StateSpace::Reg => {
                let key = self.declare_in_scope(&d.name.name, d.range);
                if let Some(n) = d.vec.filter(|n| *n > 1) {
                    self.vec_regs.insert(key.clone(), n);
                }
                self.declare_reg_key(key, d.range, d.ty)
            }
            StateSpace::Local => {
                // In u64: many large arrays must not wrap (`ptx::limits` bounds each one).
                let end = u64::from(self.f.local_bytes)
                    .div_ceil(u64::from(d.alignment()))
                    .saturating_mul(u64::from(d.alignment()))
                    .saturating_add(d.size());
                if end > crate::ptx::limits::LOCAL_BYTES {
                    self.diags.push(
                        Diag::error(
                            d.span,
                            format!("local memory exceeds {} bytes per thread", crate::ptx::limits::LOCAL_BYTES),
                        )
                        .label("this variable does not fit")
                        .note("SPA 5.0 gives a thread at most 512 KiB of local memory"),
                    );
                }
                // (Past the limit the variable is still declared, at offset 0, so that its
                // uses raise no further errors; the error above stops the compile.)
                let off = if end > crate::ptx::limits::LOCAL_BYTES { 0 } else { end.saturating_sub(d.size()) as u32 };
                self.f.local_bytes = end.min(crate::ptx::limits::LOCAL_BYTES) as u32;
                let key = self.declare_in_scope(&d.name.name, None);
                self.var_align.insert(key.clone(), d.alignment().min(16));
                self.vars.insert(key, VarLoc::Local(off));
                self.uses_frame = true;
            }
            StateSpace::Shared(_) => {
                // One offset per declaration, shared by every inlined copy (`shared`).
                let key = self.declare_in_scope(&d.name.name, None);
                let off = self.shared.decls.get(&(d as *const ast::VarDecl)).copied().unwrap_or(mem::shared::UNPLACED);
                self.var_align.insert(key.clone(), d.alignment());
                self.vars.insert(key, VarLoc::Shared(off));
            }
            StateSpace::Param(_) => {
                self.new_param_slot(&d.name.name, d.alignment(), d.size().min(u32::MAX as u64) as u32);
            }
            StateSpace::Const | StateSpace::Global => {
                self.diags.push(Diag::error(
                    d.span,
                    format!(
                        "`{}` variables inside a function are not supported; declare them at module scope",
                        d.space
                    ),
                ));
            }
        }
    }

    /// The block of label `name`, created on first reference.
    pub fn label_block(&mut self, name: &str) -> ir::BlockId {
        let key = self.label_key(name);
        if let Some(b) = self.labels.get(&key) {
            return *b;
        }
        let b = self.f.new_block(name.to_string());
        self.labels.insert(key, b);
        b
    }

    /// True when the current block already ends in a terminator.
    pub fn terminated(&self) -> bool {
        let b = &self.f.cfg[self.cur];
        b.instrs.last().is_some_and(|i| matches!(i.op, Op::Bra | Op::Exit | Op::Ret) && i.guard.is_none())
            || b.instrs.last().is_some_and(|i| i.op == Op::Bra)
    }

    /// Ends the current block with a jump to `target` (unless already terminated) and
    /// continues in `target`, which is appended to the layout.
    pub fn fallthrough_to(&mut self, target: ir::BlockId) {
        if !self.terminated() {
            self.jump(target);
        }
        if !self.in_layout(target) {
            self.f.layout.push(target);
        }
        self.cur = target;
    }

    /// Terminates the current block with `BRA target`.
    pub fn jump(&mut self, target: ir::BlockId) {
        self.emit(Instr::new(Op::Bra, vec![], vec![Src::label(target.index() as u32)]));
        self.edge(self.cur, target, EdgeKind::Taken);
    }

    /// Terminates the current block with `@[!]p BRA target` and continues in a new
    /// fall-through block.
    pub fn branch_if(&mut self, p: Reg, neg: bool, target: ir::BlockId) {
        self.emit(Instr::new(Op::Bra, vec![], vec![Src::label(target.index() as u32)]).guarded(p, neg));
        let from = self.cur;
        self.edge(from, target, EdgeKind::Taken);
        let next = self.new_block(String::new());
        self.edge(from, next, EdgeKind::Fallthrough);
        self.cur = next;
    }

    /// Starts a new unreachable block after an unconditional transfer.
    fn after_terminator(&mut self) {
        self.cur = self.new_block(String::new());
    }

    /// Ends the body: a block without terminator gets `EXIT` (running off the end of a
    /// kernel), and labels that were referenced but never placed are an internal error.
    fn finish_body(&mut self) {
        let blocks: Vec<_> = self.f.layout.clone();
        // `jump` and `emit` leave the layout as it is: `pos` is `b`'s place in it.
        for (pos, b) in blocks.into_iter().enumerate() {
            let block = &self.f.cfg[b];
            let needs_exit = match block.instrs.last() {
                None => true,
                Some(i) => !(i.guard.is_none() && matches!(i.op, Op::Bra | Op::Exit | Op::Ret)) && i.op != Op::Bra,
            };
            if needs_exit {
                self.cur = b;
                // A block falls through to the next in layout; the last one exits.
                match self.f.layout.get(pos.saturating_add(1)).copied() {
                    Some(next) => self.jump(next),
                    None => self.emit(Instr::new(Op::Exit, vec![], vec![])),
                }
            }
        }
    }

    /// Lowers one instruction (with its guard).
    fn lower_instr(&mut self, i: &Instruction, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        self.origin = i.span;
        // Features SPA 5.0 lacks (the front end let them through for a newer `.target`
        // with `--allow-newer-target`), and the emulated ones no other lowering reports.
        let at = i.opcode.span.to(i.mods.last().map_or(i.opcode.span, |m| m.span));
        if let Some(f) = crate::ptx::target::missing_on_sm50(i) {
            return self.fail(
                Diag::error(at, format!("`{}`: {} requires sm_{}", crate::ptx::check::instr_text(i), f.name, f.sm))
                    .label("SPA 5.0 (sm_50) does not have this")
                    .note("ptx2sass compiles for sm_50 and does not emulate it"),
            );
        }
        for f in crate::ptx::target::emulated_on_sm50(i) {
            let d = if self.deny_emulation { Diag::error } else { Diag::warning };
            self.diags.push(
                d(at, format!("`{}` emulated on SPA 5.0: {} (sm_{})", crate::ptx::check::instr_text(i), f.name, f.sm))
                    .label(format!("ptxas rejects this for sm_50 (sm_{} and later)", f.sm))
                    .note("pass `--deny-emulation` to make this an error"),
            );
            if self.deny_emulation {
                return Err(Failed);
            }
        }
        // Control flow first: guards on branches and returns are part of the branch.
        match &i.kind {
            InstrKind::Bra { .. } => {
                let Some(ast::Operand::Name { name, .. }) = i.operands.first() else {
                    return self.error(i.span, "bad branch target");
                };
                let target = self.label_block(&name.name);
                match &i.guard {
                    None => {
                        self.jump(target);
                        self.after_terminator();
                    }
                    Some(g) => {
                        let p = self.ptx_reg(&g.reg)?;
                        let uni = matches!(i.kind, InstrKind::Bra { uni: true });
                        self.f.cfg[self.cur].uni = uni;
                        self.branch_if(p.reg, g.negated, target);
                    }
                }
                return Ok(());
            }
            InstrKind::Ret if !self.return_targets.is_empty() => {
                // `ret` inside an inlined callee: continue after the call.
                return self.inline_return(i);
            }
            InstrKind::Ret if self.ret_block.is_some() => return self.device_return(i),
            // `exit` ends the thread wherever it is (PTX ISA 9.7.12.4), `ret` a kernel.
            InstrKind::Ret | InstrKind::Exit => {
                let mut e = Instr::new(Op::Exit, vec![], vec![]);
                match &i.guard {
                    None => {
                        self.emit(e);
                        self.after_terminator();
                    }
                    Some(g) => {
                        let p = self.ptx_reg(&g.reg)?;
                        e = e.guarded(p.reg, g.negated);
                        self.emit(e);
                    }
                }
                return Ok(());
            }
            _ => {}
        }
        // Any other guarded instruction: branch around it (keeps SSA construction exact;
        // ptxas does the same for guarded loads and stores, findings section 7).
        let skip = match &i.guard {
            Some(g) => {
                let p = self.ptx_reg(&g.reg)?;
                let skip = self.f.new_block(String::new());
                self.branch_if(p.reg, !g.negated, skip);
                Some(skip)
            }
            None => None,
        };
        let r = match self.expand_vector_registers(i) {
            Ok(expanded) => self.lower_unguarded(expanded.as_ref().unwrap_or(i), funcs),
            Err(d) => self.fail(d),
        };
        if let Some(skip) = skip {
            self.fallthrough_to(skip);
        }
        r
    }

    /// `i` with its vector-register operands spelled as element registers (PTX ISA 5.4.3):
    /// `v.y` becomes the register `v.y`, a whole `v` the vector `{v.x, v.y}` (the data of
    /// a vector `ld`/`st`/`mov`); `None` when `i` names no vector register. A vector of
    /// more than 4 elements is an error: its elements have no names (`.reg .v8 .b32 %v`
    /// passes the front end; PTX ISA 5.4.2 declares vectors of 2 and 4 elements only, and
    /// indexing `XYZW` with element 4 panicked).
    fn expand_vector_registers(&self, i: &Instruction) -> Result<Option<Instruction>, Diag> {
        const XYZW: [&str; 4] = ["x", "y", "z", "w"];
        let is_vec = |s: &Self, name: &str| s.vector_of(&s.scoped(name));
        if !i
            .operands
            .iter()
            .any(|o| matches!(o, ast::Operand::Name { name, .. } if is_vec(self, &name.name).is_some()))
        {
            return Ok(None);
        }
        let mut out = i.clone();
        for o in &mut out.operands {
            let ast::Operand::Name { name, component, negated: false, span } = o else { continue };
            let Some(n) = is_vec(self, &name.name) else { continue };
            let elem =
                |k: usize| XYZW.get(k).map(|c| ast::Ident { name: format!("{}.{c}", name.name), span: name.span });
            let unnamed = || {
                Diag::error(name.span, format!("vector register `{}` has {n} elements", name.name))
                    .label("elements beyond `.w` have no name")
                    .note("PTX ISA 5.4.2: vector variables have 2 or 4 elements (`.v2`, `.v4`)")
            };
            *o = match component.and_then(crate::ptx::check::vector_component) {
                Some(k) => {
                    let Some(e) = elem(k as usize) else { return Err(unnamed()) };
                    ast::Operand::Name { name: e, component: None, negated: false, span: *span }
                }
                None => {
                    let elems: Option<Vec<ast::VecElem>> =
                        (0..n as usize).map(|k| elem(k).map(ast::VecElem::Reg)).collect();
                    let Some(elems) = elems else { return Err(unnamed()) };
                    ast::Operand::Vector(elems, *span)
                }
            };
        }
        Ok(Some(out))
    }

    fn lower_unguarded(&mut self, i: &Instruction, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        match &i.kind {
            InstrKind::Ld(l) => self.lower_ld(i, l),
            InstrKind::St(l) => self.lower_st(i, l),
            InstrKind::Mov(t) => self.lower_mov(i, *t),
            InstrKind::Cvta(c) => self.lower_cvta(i, c),
            InstrKind::Cvt(c) => self.lower_cvt(i, c),
            InstrKind::Arith(a) => self.lower_arith(i, a),
            InstrKind::Setp(s) => self.lower_setp(i, s),
            InstrKind::Selp(t) => self.lower_selp(i, *t),
            InstrKind::Bar(op) => self.lower_bar(i, *op),
            InstrKind::Membar(l) => {
                let level = match l {
                    crate::ptx::instr::MembarLevel::Cta => crate::sass::op::MembarLevel::Cta,
                    crate::ptx::instr::MembarLevel::Gl => crate::sass::op::MembarLevel::Gl,
                    crate::ptx::instr::MembarLevel::Sys => crate::sass::op::MembarLevel::Sys,
                };
                self.emit(Instr::new(Op::Membar(level), vec![], vec![]));
                Ok(())
            }
            InstrKind::Call => self.lower_call(i, funcs),
            InstrKind::Bit { op, ty } => self.lower_bit(i, *op, *ty),
            InstrKind::Prmt(mode) => self.lower_prmt(i, *mode),
            InstrKind::Shf { left, clamp } => self.lower_shf(i, *left, *clamp),
            InstrKind::Testp { op, ty } => self.lower_testp(i, *op, *ty),
            InstrKind::Copysign(ty) => self.lower_copysign(i, *ty),
            InstrKind::Other(name) if arith::float::SPECIAL_FUNCTIONS.contains(&name.as_str()) => {
                self.lower_special_fn(i, name)
            }
            InstrKind::Other(name) if name == "atom" || name == "red" => self.lower_atom(i, name == "atom"),
            InstrKind::Other(name) if name == "prefetch" || name == "prefetchu" => self.lower_prefetch(i),
            InstrKind::Other(name) if name == "fence" => self.lower_fence(i),
            InstrKind::Other(name) if name == "lop3" => self.lower_lop3(i),
            InstrKind::Other(name)
                if matches!(name.as_str(), "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr") =>
            {
                self.lower_video(i)
            }
            InstrKind::Other(name) if name == "isspacep" => self.lower_isspacep(i),
            InstrKind::Other(name) if crate::ptx::texture::OPCODES.contains(&name.as_str()) => self.lower_texture(i),
            InstrKind::Other(name) if name == "trap" || name == "brkpt" => {
                // ptxas 11.8: `trap` → `BPT.TRAP 0x1`. It also emits `BPT.TRAP 0x1` for
                // `brkpt`; ptx2sass emits `BPT.INT 0x0` (a debugger breakpoint that
                // execution continues past), keeping `brkpt` distinct from `trap`.
                let trap = name == "trap";
                self.emit(Instr::new(Op::Bpt { trap }, vec![], vec![Src::imm(trap as u32)]));
                Ok(())
            }
            InstrKind::Other(name) if matches!(name.as_str(), "shfl" | "vote" | "activemask") => {
                self.lower_warp(i, name)
            }
            InstrKind::Other(name) => self.fail(
                Diag::error(i.opcode.span, format!("`{name}` is not supported by ptx2sass yet"))
                    .label("no lowering to SPA 5.0 for this instruction")
                    .note("supported: ld st mov cvta cvt lop3 vadd vsub vabsdiff vmin vmax vshl vshr add sub mul mad madc mul24 mad24 sad div rem addc subc fma min max neg abs not cnot and or xor shl shr shf bfe bfi popc clz brev bfind prmt testp copysign rcp sqrt rsqrt sin cos lg2 ex2 setp set selp bra ret exit bar.sync membar call atom red shfl vote activemask prefetch prefetchu ldu fence trap brkpt isspacep"),
            ),
            InstrKind::Unclassified => Err(Failed),
            InstrKind::Bra { .. } | InstrKind::Ret | InstrKind::Exit => unreachable!("handled in lower_instr"),
        }
    }
}
