//! Resolves a checked PTX AST into a [`Program`]: numbers each function's registers (one
//! slot per scalar register, `n` consecutive slots for a `.vN` register), lays out its
//! `.param` and `.local` variables per frame, resolves labels to program counters and
//! names to registers, special registers or variable addresses, and turns each
//! instruction into an [`Op`]. Only the kernel and the functions it calls (transitively)
//! are compiled.
//!
//! A form the interpreter does not model becomes [`Op::Unsupported`], so it is an error
//! only if a thread executes it.
//!
//! Register slots are bounded by [`MAX_REG_SLOTS`] and frame offsets by [`FRAME_LIMIT`]
//! (an allocation beyond them is an error); slot numbers computed from a register's name
//! are checked, since a failed allocation still declares the register.

// The module comes from the user's PTX (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::layout::{Layout, ModSym, layout};
use super::memory::{LOCAL_WINDOW, to_generic, window};
use super::program::*;
use super::value::imm_bits;
use crate::exec::{ExecError, param_layout};
use crate::ptx::ast::*;
use crate::ptx::instr::*;
use crate::ptx::types::{ScalarType, SharedSub, StateSpace};
use std::collections::HashMap;

mod instr;

/// What a name inside a function denotes.
#[derive(Clone, Debug)]
enum Sym {
    /// A register: first slot, type, vector width.
    Reg(Slot, ScalarType, u32),
    /// `%r<N>`: first slot, count, type, vector width.
    Range(Slot, u32, ScalarType, u32),
    /// A `.param` variable at this offset of the frame's parameter buffer.
    Param(u32),
    /// A `.local` variable at this offset of the frame's local block.
    Local(u32),
    /// A `.shared` variable at this shared address.
    Shared(u32),
    /// A `.const` variable at this constant-bank address.
    Const(u32),
    /// A `.global` variable at this global address.
    Global(u64),
    /// Something not modelled.
    Unsupported(String),
}

/// Compiles `kernel` of `module` and every function it calls.
pub fn compile(module: &Module, kernel: &str) -> Result<Program, ExecError> {
    let mut functions: HashMap<&str, &Function> = HashMap::new();
    for item in &module.items {
        if let Item::Function(f) = item
            && (f.body.is_some() || !functions.contains_key(f.name.name.as_str()))
        {
            functions.insert(&f.name.name, f);
        }
    }
    // `.alias a, b` (PTX ISA "Linking Directives"): calling `a` calls `b`.
    for (a, _) in &module.aliases {
        if let Some(f) = functions.get(module.resolve_alias(&a.name)).copied() {
            functions.insert(&a.name, f);
        }
    }
    let k = functions
        .get(kernel)
        .filter(|f| f.kind == FuncKind::Entry && f.body.is_some())
        .ok_or_else(|| ExecError::Launch(format!("no kernel (.entry with a body) named `{kernel}`")))?;
    let kernel_param_bytes = param_layout(&k.params)?.1;
    let layout = layout(module)?;
    let addr_of: HashMap<&str, u64> = module
        .items
        .iter()
        .enumerate()
        .filter_map(|(k, i)| match i {
            Item::Function(f) if f.body.is_some() => {
                // One 16-byte slot per module item; a module has far fewer than 2^60 items.
                Some((f.name.name.as_str(), (k as u64).saturating_mul(16).saturating_add(FUNC_ADDR_BASE)))
            }
            _ => None,
        })
        .collect();
    let mut cx = Cx {
        layout: &layout,
        functions: &functions,
        insts: vec![],
        funcs: vec![],
        ids: HashMap::new(),
        work: vec![],
        error: None,
        addr_of: &addr_of,
        taken: Default::default(),
    };
    cx.func_id(k);
    loop {
        while let Some((id, f)) = cx.work.pop() {
            let info = FnCx::new(&mut cx).compile(f);
            // `func_id` pushed this entry when it queued the function.
            if let Some(slot) = cx.funcs.get_mut(id as usize) {
                *slot = info;
            }
        }
        // Functions whose address is taken may be called indirectly.
        let taken = std::mem::take(&mut *cx.taken.borrow_mut());
        if taken.is_empty() {
            break;
        }
        for f in taken {
            cx.func_id(f);
        }
    }
    if let Some(e) = cx.error {
        return Err(e);
    }
    let by_addr = cx.ids.iter().filter_map(|(name, id)| addr_of.get(name.as_str()).map(|a| (*a, *id))).collect();
    Ok(Program {
        insts: cx.insts,
        funcs: cx.funcs,
        shared_bytes: layout.shared_bytes,
        dynamic_base: layout.dynamic_base,
        consts: layout.consts.clone(),
        globals: layout.globals.clone(),
        vars: layout.vars.clone(),
        kernel_param_bytes,
        by_addr,
    })
}

struct Cx<'m> {
    layout: &'m Layout,
    functions: &'m HashMap<&'m str, &'m Function>,
    insts: Vec<Inst>,
    funcs: Vec<FuncInfo>,
    ids: HashMap<String, u32>,
    work: Vec<(u32, &'m Function)>,
    /// The first frame or register file beyond the interpreter's limits.
    error: Option<ExecError>,
    /// Each defined function's address ([`FUNC_ADDR_BASE`]).
    addr_of: &'m HashMap<&'m str, u64>,
    /// Functions whose address an operand takes (compiled too).
    taken: std::cell::RefCell<Vec<&'m Function>>,
}

/// Largest `.param` or `.local` block of one frame (bytes): a thread's whole stack
/// ([`super::memory::LOCAL_LIMIT`]); the launch's memory limit usually bounds it first.
pub const FRAME_LIMIT: u64 = super::memory::LOCAL_LIMIT as u64;

/// Most register slots of one frame (8 bytes each).
pub const MAX_REG_SLOTS: u64 = 1 << 20;

impl<'m> Cx<'m> {
    fn func_id(&mut self, f: &'m Function) -> u32 {
        if let Some(id) = self.ids.get(&f.name.name) {
            return *id;
        }
        let id = self.funcs.len() as u32;
        self.funcs.push(FuncInfo {
            name: f.name.name.clone(),
            entry: 0,
            nregs: 0,
            params: vec![],
            rets: vec![],
            param_bytes: 0,
            local_bytes: 0,
            local_align: 1,
        });
        self.ids.insert(f.name.name.clone(), id);
        self.work.push((id, f));
        id
    }
}

/// Register slots of one element of type `ty`: two for `.b128`, else one.
fn slots(ty: ScalarType) -> u32 {
    if ty.bits() > 64 { 2 } else { 1 }
}

/// The slot of element `k` (below the vector width, at most 8) of a vector register whose
/// first slot is `first`. Saturating: a register whose allocation failed (beyond
/// [`MAX_REG_SLOTS`], an error already recorded) may lie past the end.
fn elem_slot(first: Slot, k: u32, ty: ScalarType) -> Slot {
    first.saturating_add(k.saturating_mul(slots(ty)))
}

/// The interpreter's space for a PTX state space of a memory instruction.
pub(super) fn space_of(s: Option<StateSpace>) -> Result<Space, String> {
    Ok(match s {
        None => Space::Generic,
        Some(StateSpace::Global) => Space::Global,
        Some(StateSpace::Shared(SharedSub::Cluster)) => return Err("the .shared::cluster space".into()),
        Some(StateSpace::Shared(_)) => Space::Shared,
        Some(StateSpace::Local) => Space::Local,
        Some(StateSpace::Const) => Space::Const,
        Some(StateSpace::Param(_)) => Space::Param,
        Some(StateSpace::Reg) => return Err("the .reg space in a memory instruction".into()),
    })
}

/// Per-function compilation state.
pub(super) struct FnCx<'c, 'm> {
    cx: &'c mut Cx<'m>,
    scopes: Vec<HashMap<String, Sym>>,
    nregs: u32,
    param_off: u32,
    local_off: u32,
    local_align: u32,
    /// Labels placed directly in each open block, innermost last: name → label number.
    /// PTX scopes labels like variables: a branch reaches labels of its own block and of
    /// enclosing ones, never into a nested block.
    label_scopes: Vec<HashMap<String, u32>>,
    /// Program counter of each label number (`None` until placed).
    label_pcs: Vec<Option<u32>>,
    /// Branches to patch: instruction index → label number (`None`: no such label).
    fixups: Vec<(usize, Option<u32>, String)>,
    /// `.callprototype`s by label.
    protos: HashMap<String, CallPrototype>,
}

type R<T> = Result<T, String>;

impl<'c, 'm> FnCx<'c, 'm> {
    fn new(cx: &'c mut Cx<'m>) -> Self {
        FnCx {
            cx,
            scopes: vec![HashMap::new()],
            nregs: 0,
            param_off: 0,
            local_off: 0,
            local_align: 1,
            label_scopes: vec![],
            label_pcs: vec![],
            fixups: vec![],
            protos: HashMap::new(),
        }
    }

    fn compile(mut self, f: &'m Function) -> FuncInfo {
        let entry = self.cx.insts.len() as u32;
        let (mut params, mut rets) = (vec![], vec![]);
        if f.kind == FuncKind::Entry {
            let (slots, total) = match param_layout(&f.params) {
                Ok(l) => l,
                Err(e) => {
                    self.fail(e);
                    (vec![], 0)
                }
            };
            for s in slots {
                self.declare_outer(s.name, Sym::Param(s.offset));
            }
            self.param_off = total;
        } else {
            for p in &f.params {
                params.push(self.declare_param(p));
            }
            for p in &f.ret_params {
                rets.push(self.declare_param(p));
            }
        }
        if let Some(body) = &f.body {
            self.block(body);
        }
        self.push(None, Op::Ret, "ret (end of function)".into());
        for (at, id, label) in std::mem::take(&mut self.fixups) {
            match id.and_then(|id| self.label_pcs.get(id as usize).copied().flatten()) {
                Some(pc) => self.set_op(at, Op::Bra(pc)),
                None => self.set_op(at, Op::Unsupported(format!("branch to unknown label `{label}`"))),
            }
        }
        FuncInfo {
            name: f.name.name.clone(),
            entry,
            nregs: self.nregs,
            params,
            rets,
            param_bytes: self.param_off,
            local_bytes: self.local_off,
            local_align: self.local_align,
        }
    }

    fn declare_param(&mut self, p: &ParamDecl) -> ParamLoc {
        if p.space == StateSpace::Reg {
            let slot = self.alloc(slots(p.ty) as u64);
            self.declare_outer(p.name.name.clone(), Sym::Reg(slot, p.ty, 1));
            ParamLoc::Reg(Dst { slot, bits: p.ty.bits() })
        } else {
            // A u32 times a u32: no overflow in u64.
            let size = u64::from(p.ty.bytes().max(1)).saturating_mul(u64::from(p.array.unwrap_or(1)));
            let off = self.grow_param(p.alignment(), size, &p.name.name);
            self.declare_outer(p.name.name.clone(), Sym::Param(off));
            if p.unsized_array { ParamLoc::Rest(off) } else { ParamLoc::Param(off, size.min(FRAME_LIMIT) as u32) }
        }
    }

    /// Declares `name` in the function's outermost scope (its parameters).
    fn declare_outer(&mut self, name: String, sym: Sym) {
        if let Some(scope) = self.scopes.first_mut() {
            scope.insert(name, sym);
        }
    }

    /// Replaces the op of instruction `at` (a branch pushed by this function).
    fn set_op(&mut self, at: usize, op: Op) {
        if let Some(inst) = self.cx.insts.get_mut(at) {
            inst.op = op;
        }
    }

    fn alloc(&mut self, n: u64) -> Slot {
        let s = self.nregs;
        match (self.nregs as u64).checked_add(n).filter(|&e| e <= MAX_REG_SLOTS) {
            Some(e) => self.nregs = e as u32,
            None => self.fail(ExecError::Unsupported(format!("more than {MAX_REG_SLOTS} registers in one function"))),
        }
        s
    }

    fn fail(&mut self, e: ExecError) {
        self.cx.error.get_or_insert(e);
    }

    /// `off` aligned to `align`, plus `size`, within [`FRAME_LIMIT`] (else an error is
    /// recorded and the block left as it was). Returns the start.
    fn grow(&mut self, off: u32, align: u32, size: u64, what: &str) -> (u32, u32) {
        let align = u64::from(align.max(1));
        // Below 2^33: `off` and `align` are u32.
        let a = u64::from(off).div_ceil(align).saturating_mul(align);
        match a.checked_add(size).filter(|&e| e <= FRAME_LIMIT) {
            Some(end) => (a as u32, end as u32),
            None => {
                self.fail(ExecError::Unsupported(format!("{what}: more than {FRAME_LIMIT} bytes in one frame")));
                (off, off)
            }
        }
    }

    fn grow_param(&mut self, align: u32, size: u64, name: &str) -> u32 {
        let (a, end) = self.grow(self.param_off, align, size, &format!(".param `{name}`"));
        self.param_off = end;
        a
    }

    fn push(&mut self, guard: Option<(Slot, bool)>, op: Op, text: String) {
        self.cx.insts.push(Inst { guard, op, text });
    }

    /// Opens the scope of block `b`: a register/variable scope and its own labels.
    fn open(&mut self, b: &'m Block) {
        self.scopes.push(HashMap::new());
        let mut labels = HashMap::new();
        for s in &b.stmts {
            if let Statement::Label(l) = s {
                labels.insert(l.name.clone(), self.label_pcs.len() as u32);
                self.label_pcs.push(None);
            }
        }
        self.label_scopes.push(labels);
    }

    /// The number of label `name` as seen from the current block.
    fn label(&self, name: &str) -> Option<u32> {
        self.label_scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// Compiles a function body and its nested blocks (an iterative walk).
    fn block(&mut self, b: &'m Block) {
        self.open(b);
        let mut stack = vec![b.stmts.iter()];
        // The label of the statement just compiled: a `.callprototype` after it takes its name.
        let mut label: Option<&'m str> = None;
        while let Some(it) = stack.last_mut() {
            let Some(s) = it.next() else {
                stack.pop();
                self.scopes.pop();
                self.label_scopes.pop();
                continue;
            };
            let prev = label.take();
            match s {
                Statement::CallPrototype(p) => {
                    if let Some(l) = prev {
                        self.protos.insert(l.to_string(), p.clone());
                    }
                }
                Statement::Label(l) => {
                    label = Some(&l.name);
                    if let Some(id) = self.label_scopes.last().and_then(|m| m.get(&l.name)).copied() {
                        let pc = self.cx.insts.len() as u32;
                        if let Some(at) = self.label_pcs.get_mut(id as usize) {
                            *at = Some(pc);
                        }
                    }
                }
                Statement::Decl(ds) => ds.iter().for_each(|d| self.declare(d)),
                Statement::Instr(i) => self.instr(i),
                Statement::Block(inner) => {
                    self.open(inner);
                    stack.push(inner.stmts.iter());
                }
                _ => {}
            }
        }
    }

    fn declare(&mut self, d: &VarDecl) {
        let vec = d.vec.unwrap_or(1);
        let sym = match d.space {
            StateSpace::Reg => match d.range {
                // Products of u32s below 2^66 saturate, then fail `alloc`'s MAX_REG_SLOTS.
                Some(n) => Sym::Range(
                    self.alloc(u64::from(n).saturating_mul(u64::from(vec).saturating_mul(u64::from(slots(d.ty))))),
                    n,
                    d.ty,
                    vec,
                ),
                None => Sym::Reg(self.alloc(u64::from(vec).saturating_mul(u64::from(slots(d.ty)))), d.ty, vec),
            },
            StateSpace::Param(_) => Sym::Param(self.grow_param(d.alignment(), d.size(), &d.name.name)),
            StateSpace::Local => {
                let what = format!(".local `{}`", d.name.name);
                let (off, end) = self.grow(self.local_off, d.alignment(), d.size(), &what);
                self.local_off = end;
                self.local_align = self.local_align.max(d.alignment().min(FRAME_LIMIT as u32));
                Sym::Local(off)
            }
            StateSpace::Shared(_) => match self.cx.layout.fn_shared.get(&(d as *const VarDecl)) {
                Some(a) => Sym::Shared(*a),
                None => Sym::Unsupported(format!("shared variable `{}`", d.name.name)),
            },
            s => Sym::Unsupported(format!("function-scope {s} variable `{}`", d.name.name)),
        };
        // `scopes` always holds the function's outermost scope.
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(d.name.name.clone(), sym);
        }
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        for scope in self.scopes.iter().rev() {
            if let Some(s) = scope.get(name) {
                return Some(s.clone());
            }
            let digits = name.len().saturating_sub(name.bytes().rev().take_while(u8::is_ascii_digit).count());
            let (prefix, num) = name.split_at(digits);
            if !num.is_empty()
                && (num == "0" || !num.starts_with('0'))
                && let (Some(Sym::Range(first, n, ty, vec)), Ok(i)) = (scope.get(prefix), num.parse::<u32>())
                && i < *n
            {
                // Checked: the range may be one whose allocation failed (too many slots).
                let slot =
                    i.checked_mul(*vec).and_then(|k| k.checked_mul(slots(*ty))).and_then(|k| first.checked_add(k));
                return Some(match slot {
                    Some(slot) => Sym::Reg(slot, *ty, *vec),
                    None => Sym::Unsupported(format!("register `{name}` beyond the register slots")),
                });
            }
        }
        match self.cx.layout.syms.get(name) {
            Some(ModSym::Shared(a)) => Some(Sym::Shared(*a)),
            Some(ModSym::Const(a)) => Some(Sym::Const(*a)),
            Some(ModSym::Global(a)) => Some(Sym::Global(*a)),
            Some(ModSym::Unsupported(why)) => Some(Sym::Unsupported(why.clone())),
            None => None,
        }
    }

    /// A register operand's slot and width (with a vector register's component).
    pub(super) fn reg(&self, name: &Ident, comp: Option<char>) -> R<Option<Dst>> {
        // `v.y` written inside a vector operand `{a, v.y}`: element `y` of `v`.
        if comp.is_none()
            && let Some((base, c)) = name.name.split_once('.')
            && c.len() == 1
        {
            let base = Ident { name: base.to_string(), span: name.span };
            return self.reg(&base, c.chars().next());
        }
        match self.lookup(&name.name) {
            Some(Sym::Reg(slot, ty, vec)) => {
                let k = match comp {
                    None if vec == 1 => 0,
                    Some(c) if vec > 1 => match c {
                        'x' | 'r' => 0,
                        'y' | 'g' => 1,
                        'z' | 'b' => 2,
                        'w' | 'a' => 3,
                        _ => return Err(format!("component .{c} of `{}`", name.name)),
                    },
                    _ => return Err(format!("vector register `{}` used as a scalar", name.name)),
                };
                if k >= vec {
                    return Err(format!("component {k} of `{}`", name.name));
                }
                Ok(Some(Dst { slot: elem_slot(slot, k, ty), bits: ty.bits() }))
            }
            _ => Ok(None),
        }
    }

    /// The address of variable `name` in its own space, as a source, with the space.
    fn var_addr(&self, name: &str) -> R<Option<(Src, Space)>> {
        Ok(match self.lookup(name) {
            Some(Sym::Param(off)) => Some((Src::Imm(off as u64), Space::Param)),
            Some(Sym::Local(off)) => Some((Src::LocalAddr(off), Space::Local)),
            Some(Sym::Shared(a)) => Some((Src::Imm(a as u64), Space::Shared)),
            Some(Sym::Const(a)) => Some((Src::Imm(a as u64), Space::Const)),
            Some(Sym::Global(a)) => Some((Src::Imm(a), Space::Global)),
            Some(Sym::Unsupported(why)) => return Err(why),
            _ => None,
        })
    }

    /// A source operand read as type `ty`.
    pub(super) fn src(&self, op: &Operand, ty: ScalarType) -> R<Src> {
        match op {
            Operand::Imm(i) => Ok(Src::Imm(imm_bits(i.value, ty))),
            Operand::Name { name, component, negated, .. } => {
                if let Some(d) = self.reg(name, *component)? {
                    return Ok(if *negated { Src::RegNot(d.slot) } else { Src::Reg(d.slot) });
                }
                if let Some(s) = Special::from_name(&name.name, *component) {
                    return Ok(Src::Special(s));
                }
                if let Some((s, _)) = self.var_addr(&name.name)? {
                    return Ok(s);
                }
                if let Some(a) = self.cx.addr_of.get(name.name.as_str()) {
                    // A function's address (`mov.u64 %rd, f`).
                    self.cx.taken.borrow_mut().push(self.cx.functions[name.name.as_str()]);
                    return Ok(Src::Imm(*a));
                }
                if self.cx.functions.contains_key(name.name.as_str()) {
                    return Err(format!("the address of `{}`, which has no body", name.name));
                }
                Err(format!("operand `{}`", name.name))
            }
            Operand::VarPlus { name, offset, .. } => match self.var_addr(&name.name)? {
                Some((Src::Imm(a), _)) => Ok(Src::Imm(a.wrapping_add(*offset as u64))),
                Some((Src::LocalAddr(o), _)) => Ok(Src::LocalAddr(o.wrapping_add(*offset as u32))),
                _ => Err(format!("operand `{}+{offset}`", name.name)),
            },
            _ => Err("this operand form".into()),
        }
    }

    /// A destination register operand.
    pub(super) fn dst(&self, op: &Operand) -> R<Option<Dst>> {
        match op {
            Operand::Name { name, component, negated: false, .. } => {
                self.reg(name, *component)?.map(Some).ok_or_else(|| format!("destination `{}`", name.name))
            }
            _ => Err("this destination form".into()),
        }
    }

    /// A vector operand's elements as destinations (sinks `None`), or a scalar destination.
    pub(super) fn dsts(&self, op: &Operand) -> R<Vec<Option<Dst>>> {
        match op {
            Operand::Vector(elems, _) => elems
                .iter()
                .map(|e| match e {
                    VecElem::Reg(r) => self.reg(r, None)?.map(Some).ok_or_else(|| format!("destination `{}`", r.name)),
                    VecElem::Sink(_) => Ok(None),
                    VecElem::Imm(_) => Err("an immediate destination".into()),
                })
                .collect(),
            _ => match self.whole_vector(op) {
                Some((slot, ty, n)) => {
                    Ok((0..n).map(|k| Some(Dst { slot: elem_slot(slot, k, ty), bits: ty.bits() })).collect())
                }
                None => Ok(vec![self.dst(op)?]),
            },
        }
    }

    /// A vector register named whole (`v` of `.reg .v4 .f32 v`, PTX ISA 5.4.3), the data
    /// operand of a vector `ld`/`st`/`mov`: its first slot, element type and length.
    fn whole_vector(&self, op: &Operand) -> Option<(Slot, ScalarType, u32)> {
        match op {
            Operand::Name { name, component: None, negated: false, .. } => match self.lookup(&name.name) {
                Some(Sym::Reg(slot, ty, vec)) if vec > 1 => Some((slot, ty, vec)),
                _ => None,
            },
            _ => None,
        }
    }

    pub(super) fn srcs(&self, op: &Operand, ty: ScalarType) -> R<Vec<Src>> {
        match op {
            Operand::Vector(elems, _) => elems
                .iter()
                .map(|e| match e {
                    VecElem::Reg(r) => {
                        self.src(&Operand::Name { name: r.clone(), component: None, negated: false, span: r.span }, ty)
                    }
                    VecElem::Imm(i) => Ok(Src::Imm(imm_bits(i.value, ty))),
                    VecElem::Sink(_) => Err("a sink `_` as a source".into()),
                })
                .collect(),
            _ => match self.whole_vector(op) {
                Some((slot, t, n)) => Ok((0..n).map(|k| Src::Reg(elem_slot(slot, k, t))).collect()),
                None => Ok(vec![self.src(op, ty)?]),
            },
        }
    }

    /// An address operand for an access in `space`.
    pub(super) fn addr(&self, op: &Operand, space: Space) -> R<Addr> {
        let Operand::Address { base, offset, .. } = op else { return Err("expected an address".into()) };
        match base {
            AddrBase::Imm(v) => Ok(Addr { base: Src::Imm(*v as u64), offset: *offset }),
            AddrBase::Name(n) => {
                if let Some(d) = self.reg(n, None)? {
                    return Ok(Addr { base: Src::Reg(d.slot), offset: *offset });
                }
                let Some((src, vs)) = self.var_addr(&n.name)? else {
                    return Err(format!("address base `{}`", n.name));
                };
                if space != Space::Generic {
                    return Ok(Addr { base: src, offset: *offset });
                }
                match (src, window(vs)) {
                    (Src::LocalAddr(o), _) => {
                        let offset = offset
                            .checked_add(LOCAL_WINDOW as i64)
                            .ok_or_else(|| format!("offset {offset} of a generic access to `{}`", n.name))?;
                        Ok(Addr { base: Src::LocalAddr(o), offset })
                    }
                    (Src::Imm(a), Some(_)) => Ok(Addr { base: Src::Imm(to_generic(vs, a)), offset: *offset }),
                    // The global space is the identity in the generic one (PTX ISA 5.1:
                    // `cvta.global` leaves a global address unchanged).
                    (Src::Imm(a), None) if vs == Space::Global => Ok(Addr { base: Src::Imm(a), offset: *offset }),
                    _ => Err(format!("a generic access to {} variable `{}`", vs.name(), n.name)),
                }
            }
        }
    }
}
