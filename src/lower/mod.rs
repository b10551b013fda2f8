//! Lowering: checked PTX AST → IR of SPA 5.0 instructions on virtual registers.
//!
//! Per kernel: lay out parameters in constant bank 0 (from `c[0x0][0x140]`), walk the body
//! building basic blocks, lower each instruction (`mem`, `alu`, `call`), then split critical
//! edges, build SSA form (`ssa`) and clean up (`opt`: copy propagation, constant-operand
//! folding, dead-code elimination, address folding). Device functions are inlined at
//! their call sites.

pub mod addr;
pub mod alu;
pub mod atom;
pub mod barrier;
pub mod bits;
pub mod call;
pub mod cfg;
pub mod combine;
pub mod ctx;
pub mod cvt;
pub mod div;
pub mod facts;
pub mod float;
pub mod float_slow;
pub mod hints;
pub mod ifconv;
pub mod int;
pub mod ldst;
pub mod mem;
pub mod memopt;
pub mod mul;
pub mod opt;
pub mod reconverge;
pub mod ssa;
pub mod warp;

use crate::diag::Diag;
use crate::ir::{self, EdgeKind, Function, ParamSlot};
use crate::ptx::ast::{self, Block, FuncKind, Init, InitValue, Instruction, Item, Statement};
use crate::ptx::instr::InstrKind;
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::instr::{Instr, Reg, Src};
use crate::sass::op::Op;
use ctx::{Failed, LResult, Lowerer, ModuleLayout, VarLoc};
use std::collections::HashMap;

/// First byte of kernel parameters in constant bank 0 (ptxas findings section 6).
pub const PARAM_BASE: u32 = 0x140;

/// Options that change what lowering emits.
#[derive(Clone, Debug)]
pub struct Options {
    /// Stop after SSA construction (no cleanup passes), for debugging lowering.
    pub no_opt: bool,
    /// Make every emulated sm_70+ feature (and dropped hint) an error instead of a warning.
    pub deny_emulation: bool,
    /// Run the reconvergence checker ([`cfg::check`]) on every lowered function and fail
    /// with an internal error if it finds a violation. On by default in debug builds (so
    /// every program compiled in the test suite is checked); the CLI's `--verify` turns
    /// it on.
    pub check_reconvergence: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { no_opt: false, deny_emulation: false, check_reconvergence: cfg!(debug_assertions) }
    }
}

fn align_up(x: u32, a: u32) -> u32 {
    x.div_ceil(a.max(1)) * a.max(1)
}

/// Lowers every kernel of `m`. Returns the IR module and warnings, or every error.
pub fn lower(m: &ast::Module, opts: &Options) -> Result<(ir::Module, Vec<Diag>), Vec<Diag>> {
    let mut diags = vec![];
    let mut out = ir::Module::default();
    let layout = module_layout(m, &mut out.const_bank, &mut diags);
    let funcs: HashMap<&str, &ast::Function> = m
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Function(f) if f.body.is_some() => Some((f.name.name.as_str(), f)),
            _ => None,
        })
        .collect();
    for item in &m.items {
        let Item::Function(f) = item else { continue };
        if f.kind != FuncKind::Entry || f.body.is_none() {
            continue;
        }
        match lower_kernel(f, &funcs, &layout, opts) {
            Ok((func, d)) => {
                diags.extend(d);
                out.functions.push(func);
            }
            Err(d) => diags.extend(d),
        }
    }
    if diags.iter().any(Diag::is_error) { Err(diags) } else { Ok((out, diags)) }
}

/// Places `.const` variables in bank 3 (with their initial bytes) and records `.shared`
/// and `.global` variables.
fn module_layout(m: &ast::Module, bank: &mut Vec<u8>, diags: &mut Vec<Diag>) -> ModuleLayout {
    let mut layout = ModuleLayout::default();
    for item in &m.items {
        let Item::Var(v) = item else { continue };
        layout.align.insert(v.name.name.clone(), v.alignment());
        match v.space {
            StateSpace::Const => {
                let off = align_up(bank.len() as u32, v.alignment());
                bank.resize(off as usize, 0);
                let mut bytes = vec![0u8; v.size() as usize];
                if let Some(init) = &v.init {
                    let mut pos = 0usize;
                    if let Err(e) = init_bytes(init, v.ty, &mut bytes, &mut pos) {
                        diags.push(Diag::error(v.span, e));
                    }
                }
                bank.extend_from_slice(&bytes);
                if bank.len() > 0x10000 {
                    diags.push(
                        Diag::error(
                            v.span,
                            format!("too much `.const` data: {} bytes, bank 3 holds 65536", bank.len()),
                        )
                        .note("the same limit as ptxas: `File uses too much global constant data`"),
                    );
                }
                layout.consts.insert(v.name.name.clone(), off);
            }
            StateSpace::Shared(_) => {
                layout.shared.insert(v.name.name.clone(), (v.size() as u32, v.alignment()));
                layout.shared_order.push(v.name.name.clone());
            }
            StateSpace::Global => {
                layout.globals.insert(v.name.name.clone(), v.ty);
            }
            _ => {}
        }
    }
    layout
}

/// Serializes an initializer into little-endian element bytes.
fn init_bytes(init: &Init, ty: ScalarType, out: &mut [u8], pos: &mut usize) -> Result<(), String> {
    match init {
        Init::List(items, _) => {
            for i in items {
                init_bytes(i, ty, out, pos)?;
            }
            Ok(())
        }
        Init::Scalar(InitValue::Imm(i)) => {
            let n = ty.bytes() as usize;
            let bits = match (i.value, ty.is_float()) {
                (ast::ImmValue::Int(v), false) => v as u64,
                (ast::ImmValue::Int(v), true) if n == 4 => (v as f32).to_bits() as u64,
                (ast::ImmValue::Int(v), true) => (v as f64).to_bits(),
                (v, _) if n == 4 => ctx::imm_bits32(v) as u64,
                (v, _) => ctx::imm_bits64(v),
            };
            if *pos + n > out.len() {
                return Err("initializer has more elements than the variable".into());
            }
            out[*pos..*pos + n].copy_from_slice(&bits.to_le_bytes()[..n]);
            *pos += n;
            Ok(())
        }
        Init::Scalar(InitValue::Addr { name, .. }) => {
            Err(format!("address initializers (`{}`) are not supported: they need relocations", name.name))
        }
    }
}

fn lower_kernel(
    k: &ast::Function,
    funcs: &HashMap<&str, &ast::Function>,
    layout: &ModuleLayout,
    opts: &Options,
) -> Result<(Function, Vec<Diag>), Vec<Diag>> {
    let mut lw = Lowerer::new(Function::new(&k.name.name, FuncKind::Entry), layout);
    lw.deny_emulation = opts.deny_emulation;
    lw.func_names = funcs.keys().map(|n| n.to_string()).collect();
    lw.facts = facts::FactTable::new(k);
    // Parameters: natural or declared alignment, from c[0x0][0x140].
    let mut off = PARAM_BASE;
    for p in &k.params {
        off = align_up(off, p.alignment());
        let ty = match p.array {
            Some(n) => format!("{}[{n}]", p.ty),
            None => p.ty.to_string(),
        };
        lw.f.params.push(ParamSlot { name: p.name.name.clone(), ty, offset: off, size: p.size() });
        lw.vars.insert(p.name.name.clone(), VarLoc::KernelParam(off));
        lw.var_align.insert(p.name.name.clone(), p.alignment());
        off += p.size();
    }
    if off > 0x140 + 4096 {
        lw.diags.push(Diag::error(
            k.name.span,
            format!("kernel parameters take {} bytes; the limit is 4096", off - PARAM_BASE),
        ));
    }
    for name in layout.consts.keys() {
        lw.vars.insert(name.clone(), VarLoc::Const(layout.consts[name]));
    }
    lw.var_align.extend(layout.align.iter().map(|(k, v)| (k.clone(), *v)));
    for name in layout.globals.keys() {
        lw.vars.insert(name.clone(), VarLoc::Global);
    }
    for name in &layout.shared_order {
        lw.vars.insert(name.clone(), VarLoc::Shared(u32::MAX));
    }
    let body = k.body.as_ref().expect("kernels have bodies");
    let _ = lw.lower_block(body, funcs);
    lw.finish_body();
    if lw.diags.iter().any(Diag::is_error) {
        return Err(lw.diags);
    }
    let mut func = lw.f;
    let mut diags = lw.diags;
    opt::remove_unreachable(&mut func);
    opt::thread_exits(&mut func);
    cfg::reducible::make_reducible(&mut func);
    opt::split_critical_edges(&mut func);
    ssa::construct(&mut func);
    if !opts.no_opt {
        opt::run(&mut func);
        let mut again = memopt::reuse_plg(&mut func);
        while memopt::scaled_index(&mut func) {
            again = true;
        }
        again |= memopt::fuse_generic_add(&mut func);
        again |= memopt::uniform_loads(&mut func);
        if again {
            opt::run(&mut func);
        }
        if combine::run(&mut func) {
            opt::run(&mut func);
        }
        if ifconv::run(&mut func) {
            opt::run(&mut func);
        }
    }
    if let Err(d) = reconverge::insert(&mut func, k.name.span) {
        diags.push(d);
        return Err(diags);
    }
    if let Err(e) = ir::verify::verify(&func) {
        diags.push(Diag::error(k.name.span, format!("internal error after lowering: {e}")));
        return Err(diags);
    }
    if opts.check_reconvergence
        && let Err(e) = cfg::check::check(&func)
    {
        diags.push(Diag::error(k.name.span, format!("internal error: reconvergence: {e}")));
        return Err(diags);
    }
    Ok((func, diags))
}

impl Lowerer<'_> {
    /// Lowers the statements of a block (function body or nested scope).
    pub fn lower_block(&mut self, b: &Block, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        let mut ok = true;
        for s in &b.stmts {
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
                }
                Statement::Instr(i) => {
                    if self.lower_instr(i, funcs).is_err() {
                        ok = false;
                    }
                    self.update_facts(i);
                }
                Statement::Block(inner) => {
                    if self.lower_block(inner, funcs).is_err() {
                        ok = false;
                    }
                }
                Statement::Pragma(..) | Statement::CallPrototype(_) | Statement::Error(_) => {}
            }
        }
        if ok { Ok(()) } else { Err(Failed) }
    }

    /// Handles a declaration inside a function body.
    fn declare(&mut self, d: &ast::VarDecl) {
        match d.space {
            StateSpace::Reg => self.declare_reg(&d.name.name, d.range, d.ty),
            StateSpace::Local => {
                let off = align_up(self.f.local_bytes, d.alignment());
                self.f.local_bytes = off + d.size() as u32;
                let key = self.scoped(&d.name.name);
                self.var_align.insert(key.clone(), d.alignment().min(16));
                self.vars.insert(key, VarLoc::Local(off));
                self.uses_frame = true;
            }
            StateSpace::Shared(_) => {
                let key = self.scoped(&d.name.name);
                self.var_align.insert(key.clone(), d.alignment());
                self.vars.insert(key.clone(), VarLoc::Shared(u32::MAX));
                self.local_shared.insert(key, (d.size() as u32, d.alignment()));
            }
            StateSpace::Param(_) => {
                let slot = self.next_slot;
                self.next_slot += 1;
                let key = self.scoped(&d.name.name);
                self.var_align.insert(key.clone(), d.alignment());
                self.vars.insert(key, VarLoc::ParamSlot(slot));
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
        let key = self.scoped(name);
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
        if !self.f.layout.contains(&target) {
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
        for b in blocks {
            let block = &self.f.cfg[b];
            let needs_exit = match block.instrs.last() {
                None => true,
                Some(i) => !(i.guard.is_none() && matches!(i.op, Op::Bra | Op::Exit | Op::Ret)) && i.op != Op::Bra,
            };
            if needs_exit {
                self.cur = b;
                // A block falls through to the next in layout; the last one exits.
                let pos = self.f.layout.iter().position(|x| *x == b).expect("in layout");
                match self.f.layout.get(pos + 1).copied() {
                    Some(next) => self.jump(next),
                    None => self.emit(Instr::new(Op::Exit, vec![], vec![])),
                }
            }
        }
    }

    /// Lowers one instruction (with its guard).
    fn lower_instr(&mut self, i: &Instruction, funcs: &HashMap<&str, &ast::Function>) -> LResult<()> {
        self.origin = i.span;
        // Control flow first: guards on branches and returns are part of the branch.
        match &i.kind {
            InstrKind::Bra { .. } => {
                let ast::Operand::Name { name, .. } = &i.operands[0] else {
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
            InstrKind::Ret | InstrKind::Exit if !self.prefix.is_empty() => {
                // `ret` inside an inlined callee: continue after the call.
                return self.inline_return(i);
            }
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
        let r = self.lower_unguarded(i, funcs);
        if let Some(skip) = skip {
            self.fallthrough_to(skip);
        }
        r
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
            InstrKind::Other(name) if float::SPECIAL_FUNCTIONS.contains(&name.as_str()) => {
                self.lower_special_fn(i, name)
            }
            InstrKind::Other(name) if name == "atom" || name == "red" => self.lower_atom(i, name == "atom"),
            InstrKind::Other(name) if name == "prefetch" || name == "prefetchu" => self.lower_prefetch(i),
            InstrKind::Other(name) if name == "fence" => self.lower_fence(i),
            InstrKind::Other(name) if name == "isspacep" => self.lower_isspacep(i),
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
                    .note("supported: ld st mov cvta cvt add sub mul mad madc mul24 mad24 sad div rem addc subc fma min max neg abs not cnot and or xor shl shr shf bfe bfi popc clz brev bfind prmt testp copysign rcp sqrt rsqrt sin cos lg2 ex2 setp set selp bra ret exit bar.sync membar call atom red shfl vote activemask prefetch prefetchu ldu fence trap brkpt isspacep"),
            ),
            InstrKind::Unclassified => Err(Failed),
            InstrKind::Bra { .. } | InstrKind::Ret | InstrKind::Exit => unreachable!("handled in lower_instr"),
        }
    }
}
