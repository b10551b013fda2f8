//! Resolves a checked PTX AST into a [`Program`]: numbers each function's registers (one
//! slot per scalar register, `n` consecutive slots for a `.vN` register), lays out its
//! `.param` and `.local` variables per frame, resolves labels to program counters and
//! names to registers, special registers or variable addresses, and turns each
//! instruction into an [`Op`]. Only the kernel and the functions it calls (transitively)
//! are compiled.
//!
//! A form the interpreter does not model becomes [`Op::Unsupported`], so it is an error
//! only if a thread executes it.

use super::arith::fp;
use super::eval::widened;
use super::layout::{Layout, ModSym, layout};
use super::memory::{LOCAL_WINDOW, to_generic, window};
use super::program::*;
use super::value::imm_bits;
use crate::exec::{ExecError, param_layout};
use crate::ptx::ast::*;
use crate::ptx::check::instr_text;
use crate::ptx::instr::*;
use crate::ptx::types::{ScalarType, SharedSub, StateSpace};
use std::collections::HashMap;

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
            Item::Function(f) if f.body.is_some() => Some((f.name.name.as_str(), FUNC_ADDR_BASE + 16 * k as u64)),
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
            cx.funcs[id as usize] = info;
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
                self.scopes[0].insert(s.name, Sym::Param(s.offset));
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
                Some(pc) => self.cx.insts[at].op = Op::Bra(pc),
                None => self.cx.insts[at].op = Op::Unsupported(format!("branch to unknown label `{label}`")),
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
            self.scopes[0].insert(p.name.name.clone(), Sym::Reg(slot, p.ty, 1));
            ParamLoc::Reg(Dst { slot, bits: p.ty.bits() })
        } else {
            let size = p.ty.bytes().max(1) as u64 * p.array.unwrap_or(1) as u64;
            let off = self.grow_param(p.alignment(), size, &p.name.name);
            self.scopes[0].insert(p.name.name.clone(), Sym::Param(off));
            if p.unsized_array { ParamLoc::Rest(off) } else { ParamLoc::Param(off, size.min(FRAME_LIMIT) as u32) }
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
        let a = (off as u64).div_ceil(align.max(1) as u64) * align.max(1) as u64;
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
                        self.label_pcs[id as usize] = Some(self.cx.insts.len() as u32);
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
                Some(n) => Sym::Range(self.alloc(n as u64 * vec as u64 * slots(d.ty) as u64), n, d.ty, vec),
                None => Sym::Reg(self.alloc(vec as u64 * slots(d.ty) as u64), d.ty, vec),
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
        self.scopes.last_mut().expect("scope").insert(d.name.name.clone(), sym);
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        for scope in self.scopes.iter().rev() {
            if let Some(s) = scope.get(name) {
                return Some(s.clone());
            }
            let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
            let (prefix, num) = name.split_at(digits);
            if !num.is_empty()
                && (num == "0" || !num.starts_with('0'))
                && let (Some(Sym::Range(first, n, ty, vec)), Ok(i)) = (scope.get(prefix), num.parse::<u32>())
                && i < *n
            {
                return Some(Sym::Reg(first + i * vec * slots(*ty), *ty, *vec));
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
                Ok(Some(Dst { slot: slot + k * slots(ty), bits: ty.bits() }))
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
                    Ok((0..n).map(|k| Some(Dst { slot: slot + k * slots(ty), bits: ty.bits() })).collect())
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
                Some((slot, t, n)) => Ok((0..n).map(|k| Src::Reg(slot + k * slots(t))).collect()),
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
                        Ok(Addr { base: Src::LocalAddr(o), offset: offset + LOCAL_WINDOW as i64 })
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

    fn instr(&mut self, i: &'m Instruction) {
        let text = instr_text(i);
        let guard = match &i.guard {
            None => Ok(None),
            Some(g) => match self.reg(&g.reg, None) {
                Ok(Some(d)) => Ok(Some((d.slot, g.negated))),
                _ => Err(format!("guard `{}`", g.reg.name)),
            },
        };
        let op = guard
            .clone()
            .and_then(|_| self.op(i, &text))
            .unwrap_or_else(|why| Op::Unsupported(if why.starts_with(&text) { why } else { format!("{text}: {why}") }));
        if let Op::Bra(_) = op
            && let Some(Operand::Name { name, .. }) = i.operands.first()
        {
            self.fixups.push((self.cx.insts.len(), self.label(&name.name), name.name.clone()));
        }
        self.push(guard.unwrap_or(None), op, text);
    }

    fn operand(i: &Instruction, k: usize) -> R<&Operand> {
        i.operands.get(k).ok_or_else(|| format!("missing operand {}", k + 1))
    }

    fn compute(&self, func: Func, ty: ScalarType, dst_ty: ScalarType, i: &Instruction, tys: &[ScalarType]) -> R<Op> {
        let dst = self.dst(Self::operand(i, 0)?)?;
        let mut srcs = vec![];
        for (k, t) in tys.iter().enumerate() {
            srcs.push((self.src(Self::operand(i, k + 1)?, *t)?, *t));
        }
        Ok(Op::Compute { func, ty, dst, dst_ty, srcs })
    }

    fn op(&mut self, i: &'m Instruction, text: &str) -> R<Op> {
        let o = |k| Self::operand(i, k);
        match &i.kind {
            InstrKind::Ld(l) | InstrKind::St(l) => {
                if l.ty.bits() > 128 || l.ty == ScalarType::Pred {
                    return Err(format!("{} elements", l.ty));
                }
                let space = space_of(l.space)?;
                if let InstrKind::Ld(_) = i.kind {
                    let dsts = self.dsts(o(0)?)?;
                    Ok(Op::Ld { space, ty: l.ty, dsts, addr: self.addr(o(1)?, space)? })
                } else {
                    let srcs = self.srcs(o(1)?, l.ty)?;
                    Ok(Op::St { space, ty: l.ty, srcs, addr: self.addr(o(0)?, space)? })
                }
            }
            InstrKind::Mov(ty) => {
                if ty.bits() > 128 {
                    return Err(format!("{ty} registers"));
                }
                match (o(0)?, o(1)?) {
                    (Operand::Vector(v, _), s) => {
                        let elem_bits = ty.bits() / v.len() as u32;
                        Ok(Op::Unpack { dsts: self.dsts(o(0)?)?, elem_bits, src: self.src(s, *ty)? })
                    }
                    (d, Operand::Vector(v, _)) => {
                        let elem_bits = ty.bits() / v.len() as u32;
                        let ety = match elem_bits {
                            8 => ScalarType::B8,
                            16 => ScalarType::B16,
                            32 => ScalarType::B32,
                            64 => ScalarType::B64,
                            _ => return Err("packing into this width".into()),
                        };
                        let dst = self.dst(d)?.ok_or("a sink destination")?;
                        Ok(Op::Pack { dst, elem_bits, srcs: self.srcs(o(1)?, ety)? })
                    }
                    (d, s) if ty.bits() > 64 => {
                        let dst = self.dst(d)?.ok_or("a sink destination")?;
                        Ok(Op::Pack { dst, elem_bits: 128, srcs: vec![self.src(s, *ty)?] })
                    }
                    _ => self.compute(Func::Mov, *ty, *ty, i, &[*ty]),
                }
            }
            InstrKind::Cvta(c) => {
                let space = space_of(Some(c.space))?;
                if space == Space::Param {
                    return Err("cvta of the .param space".into());
                }
                Ok(Op::Cvta { to: c.to, space, dst: self.dst(o(0)?)?, bits: c.ty.bits(), src: self.src(o(1)?, c.ty)? })
            }
            InstrKind::Cvt(c) => self.compute(Func::Cvt(*c), c.dst, c.dst, i, &[c.src]),
            InstrKind::Arith(a) => self.arith(a, i),
            InstrKind::Setp(s) => {
                let (p, q) = match o(0)? {
                    Operand::PredPair(a, b, _) => (self.reg(a, None)?, self.reg(b, None)?),
                    d => (self.dst(d)?, None),
                };
                let c = match (s.bool_op, i.operands.get(3)) {
                    (Some(_), Some(c)) => Some(self.src(c, ScalarType::Pred)?),
                    (Some(_), None) => return Err("missing predicate operand".into()),
                    _ => None,
                };
                Ok(Op::Setp {
                    cmp: s.cmp,
                    bool_op: s.bool_op,
                    ftz: s.ftz,
                    ty: s.ty,
                    p,
                    q,
                    a: self.src(o(1)?, s.ty)?,
                    b: self.src(o(2)?, s.ty)?,
                    c,
                })
            }
            InstrKind::Selp(ty) => self.compute(Func::Selp, *ty, *ty, i, &[*ty, *ty, ScalarType::Pred]),
            InstrKind::Bra { .. } => match o(0)? {
                Operand::Name { .. } => Ok(Op::Bra(u32::MAX)),
                _ => Err("indirect branch".into()),
            },
            InstrKind::Ret => Ok(Op::Ret),
            InstrKind::Exit => Ok(Op::Exit),
            InstrKind::Bar(BarOp::WarpSync) => {
                // The lanes of `membermask` meet: a warp collective without a result, which
                // the scheduler runs once the warp's lanes reach it (see `warp`).
                let mask = Some(self.src(o(0)?, ScalarType::U32)?);
                Ok(Op::Warp(WarpOp::Vote { mode: VoteMode::Any, dst: None, a: Src::Imm(0), mask }))
            }
            InstrKind::Bar(BarOp::Red) => {
                use super::program::BarRed;
                let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
                let red = if words.contains(&".popc") {
                    BarRed::Popc
                } else if words.contains(&".and") {
                    BarRed::And
                } else if words.contains(&".or") {
                    BarRed::Or
                } else {
                    return Err("bar.red without .popc, .and or .or".into());
                };
                let ops = &i.operands;
                if !(3..=4).contains(&ops.len()) {
                    return Err("bar.red takes d, a{, b}, {!}c".into());
                }
                let d = self.dst(&ops[0])?.ok_or("bar.red destination")?;
                let id = self.src(&ops[1], ScalarType::U32)?;
                let count = if ops.len() == 4 { Some(self.src(&ops[2], ScalarType::U32)?) } else { None };
                let c = self.src(ops.last().expect("operands"), ScalarType::Pred)?;
                Ok(Op::Bar { id, count, arrive: false, red: Some((red, c, d)) })
            }
            InstrKind::Bar(b) => {
                let arrive = *b == BarOp::Arrive;
                let id = match i.operands.first() {
                    Some(op) => self.src(op, ScalarType::U32)?,
                    None => Src::Imm(0),
                };
                let count = i.operands.get(1).map(|c| self.src(c, ScalarType::U32)).transpose()?;
                if arrive && count.is_none() {
                    return Err("bar.arrive without a thread count".into());
                }
                Ok(Op::Bar { id, count, arrive, red: None })
            }
            InstrKind::Membar(_) => Ok(Op::Nop),
            InstrKind::Call => self.call(i),
            InstrKind::Bit { op, ty } => {
                let t = *ty;
                if !t.is_integer() || t.bits() < 32 || t.bits() > 64 {
                    return Err(format!("{t} operands"));
                }
                let u = ScalarType::U32;
                match op {
                    BitOp::Popc => self.compute(Func::Popc, t, u, i, &[t]),
                    BitOp::Clz => self.compute(Func::Clz, t, u, i, &[t]),
                    BitOp::Brev => self.compute(Func::Brev, t, t, i, &[t]),
                    BitOp::Bfind { shiftamt } => self.compute(Func::Bfind(*shiftamt), t, u, i, &[t]),
                    BitOp::Bfe => self.compute(Func::Bfe, t, t, i, &[t, u, u]),
                    BitOp::Bfi => self.compute(Func::Bfi, t, t, i, &[t, t, u, u]),
                }
            }
            InstrKind::Prmt(mode) => {
                let mode = mode.map(|m| match m {
                    PrmtMode::F4e => "f4e",
                    PrmtMode::B4e => "b4e",
                    PrmtMode::Rc8 => "rc8",
                    PrmtMode::Ecl => "ecl",
                    PrmtMode::Ecr => "ecr",
                    PrmtMode::Rc16 => "rc16",
                });
                let b = ScalarType::B32;
                self.compute(Func::Prmt(mode), b, b, i, &[b, b, b])
            }
            InstrKind::Shf { left, clamp } => {
                let b = ScalarType::B32;
                self.compute(Func::Shf(*left, *clamp), b, b, i, &[b, b, ScalarType::U32])
            }
            InstrKind::Testp { op, ty } => {
                let name = match op {
                    TestpOp::Finite => "finite",
                    TestpOp::Infinite => "infinite",
                    TestpOp::Number => "number",
                    TestpOp::NotANumber => "notanumber",
                    TestpOp::Normal => "normal",
                    TestpOp::Subnormal => "subnormal",
                };
                if fp::format(*ty).is_none() {
                    return Err(format!("testp on {ty}"));
                }
                self.compute(Func::Testp(name), *ty, ScalarType::Pred, i, &[*ty])
            }
            InstrKind::Copysign(ty) => {
                if fp::format(*ty).is_none() {
                    return Err(format!("copysign on {ty}"));
                }
                self.compute(Func::Copysign, *ty, *ty, i, &[*ty, *ty])
            }
            InstrKind::Other(name) => super::opcodes::other(self, i, name, text),
            InstrKind::Unclassified => Err("unclassified instruction".into()),
        }
    }

    fn arith(&self, a: &Arith, i: &Instruction) -> R<Op> {
        use ArithOp::*;
        let ty = a.ty;
        if ty.is_float() {
            if fp::format(ty).is_none() && fp::packed(ty).is_none() {
                return Err(format!("{ty} arithmetic"));
            }
            let mods = fp::Mods { mode: fp::mode(a.rnd), ftz: a.ftz, sat: a.sat };
            let bin = |b| self.compute(Func::FBin(b, mods), ty, ty, i, &[ty, ty]);
            return match a.op {
                Add => bin(fp::Binary::Add),
                Sub => bin(fp::Binary::Sub),
                Mul => bin(fp::Binary::Mul),
                Div if a.approx => bin(fp::Binary::DivApprox),
                Div => bin(fp::Binary::Div),
                Min => bin(fp::Binary::Min),
                Max => bin(fp::Binary::Max),
                Mad | Fma => self.compute(Func::Fma(mods), ty, ty, i, &[ty, ty, ty]),
                Neg | Abs => self.compute(Func::FNegAbs(a.op == Neg, a.ftz), ty, ty, i, &[ty]),
                op => Err(format!("{op:?} on {ty}")),
            };
        }
        if ty.bits() > 64 {
            return Err(format!("{ty} arithmetic"));
        }
        let mode = a.mode.unwrap_or(IntMode::Lo);
        let wide = if mode == IntMode::Wide { widened(ty) } else { ty };
        match a.op {
            Add | Sub if a.cc || a.sat => {
                let f = Func::AddSub { sub: a.op == Sub, sat: a.sat, carry_in: false, carry_out: a.cc };
                self.compute(f, ty, ty, i, &[ty, ty])
            }
            Mul => self.compute(Func::Mul(mode), ty, wide, i, &[ty, ty]),
            Mad => {
                let f = Func::Mad { mode, sat: a.sat, carry_in: false, carry_out: a.cc };
                self.compute(f, ty, wide, i, &[ty, ty, wide])
            }
            Fma => Err(format!("fma on {ty}")),
            Addc | Subc => {
                let f = Func::AddSub { sub: a.op == Subc, sat: false, carry_in: true, carry_out: a.cc };
                self.compute(f, ty, ty, i, &[ty, ty])
            }
            Madc => {
                let f = Func::Mad { mode, sat: false, carry_in: true, carry_out: a.cc };
                self.compute(f, ty, ty, i, &[ty, ty, ty])
            }
            Mul24 | Mad24 if ty.bits() != 32 || a.sat => {
                Err(format!("{:?}{} on {ty}", a.op, if a.sat { ".sat" } else { "" }))
            }
            Mul24 => self.compute(Func::Mul24(mode == IntMode::Hi), ty, ty, i, &[ty, ty]),
            Mad24 => self.compute(Func::Mad24(mode == IntMode::Hi), ty, ty, i, &[ty, ty, ty]),
            Sad => self.compute(Func::Sad, ty, ty, i, &[ty, ty, ty]),
            Shl | Shr => self.compute(Func::Int(a.op), ty, ty, i, &[ty, ScalarType::U32]),
            Neg | Abs | Not | Cnot => self.compute(Func::Int(a.op), ty, ty, i, &[ty]),
            op => self.compute(Func::Int(op), ty, ty, i, &[ty, ty]),
        }
    }

    fn call(&mut self, i: &'m Instruction) -> R<Op> {
        let ops = &i.operands;
        let (rets, k) = match ops.first() {
            Some(Operand::List(v, _)) => (v.as_slice(), 1),
            _ => (&[][..], 0),
        };
        let Some(Operand::Name { name, .. }) = ops.get(k) else { return Err("this call target".into()) };
        let (args, rest): (&[Operand], &[Operand]) = match ops.get(k + 1) {
            Some(Operand::List(v, _)) => (v, &ops[k + 2..]),
            _ => (&[], &ops[k + 1..]),
        };
        let Some(f) = self.cx.functions.get(name.name.as_str()).copied() else {
            return self.indirect_call(name, args, rets, rest);
        };
        let (a, r) = self.call_args(&f.params, &f.ret_params, args, rets, &name.name)?;
        if f.body.is_none() {
            return match Builtin::by_name(&name.name) {
                Some(func) => Ok(Op::Builtin { func, args: a, rets: r }),
                None => Err(format!("call of `{}`, which has no body", name.name)),
            };
        }
        let callee = self.cx.func_id(f);
        Ok(Op::Call { callee, args: a, rets: r })
    }

    /// `call (rets), %fptr, (args), proto;` with the signature of `.callprototype` `proto`.
    fn indirect_call(&mut self, target: &Ident, args: &[Operand], rets: &[Operand], rest: &[Operand]) -> R<Op> {
        let t = self.src(
            &Operand::Name { name: target.clone(), component: None, negated: false, span: target.span },
            ScalarType::U64,
        )?;
        let Some(Operand::Name { name: proto, .. }) = rest.first() else {
            return Err("an indirect call without a prototype".into());
        };
        let p = self.protos.get(&proto.name).cloned().ok_or_else(|| format!("prototype `{}`", proto.name))?;
        let (a, r) = self.call_args(&p.params, &p.ret_params, args, rets, &proto.name)?;
        Ok(Op::CallIndirect { target: t, args: a, rets: r })
    }

    /// The arguments and return destinations of a call of a function with `params` and
    /// `ret_params`.
    fn call_args(
        &mut self,
        params: &[ParamDecl],
        ret_params: &[ParamDecl],
        args: &[Operand],
        rets: &[Operand],
        name: &str,
    ) -> R<(Vec<Arg>, Vec<Arg>)> {
        if params.iter().chain(ret_params).any(|p| p.space == StateSpace::Reg && p.ty.bits() > 64) {
            return Err(format!("call of `{name}`, which has a .reg parameter wider than 64 bits"));
        }
        if args.len() != params.len() || rets.len() != ret_params.len() {
            return Err(format!("call of `{name}` with the wrong number of arguments"));
        }
        let mut a = vec![];
        for (op, p) in args.iter().zip(params) {
            a.push(match op {
                Operand::Name { name, .. } => match self.lookup(&name.name) {
                    Some(Sym::Param(off)) => Arg::Param(off),
                    _ => Arg::Value(self.src(op, p.ty)?),
                },
                _ => Arg::Value(self.src(op, p.ty)?),
            });
        }
        let mut r = vec![];
        for op in rets {
            r.push(match op {
                Operand::Name { name, .. } => match self.lookup(&name.name) {
                    Some(Sym::Param(off)) => Arg::Param(off),
                    _ => Arg::Reg(self.dst(op)?.ok_or("a sink return")?),
                },
                _ => return Err("this return operand".into()),
            });
        }
        Ok((a, r))
    }
}
