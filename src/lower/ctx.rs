//! The lowering context: one function being built, the block being filled, and how PTX
//! names map to IR values (registers to variables, parameters to constant-bank offsets,
//! `.local`/`.shared`/`.const` variables to offsets in their windows).
//!
//! Lowering produces non-SSA IR: each PTX register is one IR *variable* (a virtual
//! register that may be written many times). `lower::ssa` then renames into SSA form.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::diag::Diag;
use crate::ir::{Block, BlockId, Edge, EdgeKind, Function, VRegKind};
use crate::ptx::ast::{Ident, ImmValue, Operand, Span};
use crate::ptx::types::{ScalarType, StateSpace};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, Src};
use crate::sass::op::Op;
use std::collections::HashMap;

/// A PTX register bound to an IR variable.
#[derive(Clone, Copy, Debug)]
pub struct PtxReg {
    /// The IR variable (virtual register, possibly written many times before SSA).
    pub reg: Reg,
    /// Declared PTX type (its width decides sign/zero extension rules).
    pub ty: ScalarType,
}

/// Where a named PTX variable lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VarLoc {
    /// Kernel parameter at this byte offset of constant bank 0.
    KernelParam(u32),
    /// A `.param` slot held in registers (call arguments, device-function parameters
    /// and return values): key into [`Lowerer::param_slots`].
    ParamSlot(u32),
    /// `.local` variable at this byte offset in the frame.
    Local(u32),
    /// `.shared` variable at this byte offset in the CTA's shared window.
    Shared(u32),
    /// `.const` variable at this byte offset in constant bank 3.
    Const(u32),
    /// A module `.global` variable: its address is materialized from relocated immediates
    /// ([`Lowerer::global_var_base`]).
    Global,
}

/// The names one `{ }` block of the PTX source declares, for name resolution in lowering
/// (the rules are `ptx::check`'s: a declaration is visible in its block and the blocks
/// nested inside, where one of the same name hides it; labels likewise).
#[derive(Default)]
pub struct Scope {
    /// The inlining prefix ([`Lowerer::prefix`]) of the function instance the block
    /// belongs to: names never resolve into a caller's blocks.
    pub func: String,
    /// What the block's names become in the flat maps (`reg_types`, `regs`, `vars`,
    /// `labels`): the function's prefix for its outermost block, plus `{k}` (a number
    /// unique in the function) for nested blocks; `{` occurs in no PTX identifier.
    pub key: String,
    /// Names declared by the block.
    pub names: std::collections::HashSet<String>,
    /// `%r<N>` ranges declared by the block: prefix → N.
    pub ranges: HashMap<String, u32>,
    /// Labels placed directly in the block.
    pub labels: std::collections::HashSet<String>,
}

impl Scope {
    fn declares(&self, name: &str) -> bool {
        if self.names.contains(name) {
            return true;
        }
        // An element `v.x` of a vector register `v` (validated by `ptx::check`).
        if let Some((base, _)) = name.split_once('.') {
            return self.declares(base);
        }
        let digits = name.len().saturating_sub(name.bytes().rev().take_while(u8::is_ascii_digit).count());
        let (prefix, num) = name.split_at(digits);
        matches!((self.ranges.get(prefix), num.parse::<u64>()), (Some(n), Ok(i)) if i < u64::from(*n))
    }
}

/// Module-wide layouts shared by every function.
#[derive(Default)]
pub struct ModuleLayout {
    /// `.const` variables: name → offset in bank 3.
    pub consts: HashMap<String, u32>,
    /// `.global` module variables.
    pub globals: HashMap<String, ScalarType>,
    /// Alignment in bytes of module variables.
    pub align: HashMap<String, u32>,
    /// The call graph and inlining facts ([`super::calls::callgraph`]).
    pub calls: super::calls::callgraph::CallGraph,
    /// The `--inline` mode.
    pub inline: super::calls::callgraph::Inline,
    /// Names of the module's functions with bodies (for the diagnostic on taking their
    /// address); one set for all kernels.
    pub func_names: std::collections::HashSet<String>,
    /// The module's `.global .texref`/`.surfref` names (`true`: a surface), for
    /// [`super::tex`].
    pub refs: HashMap<String, bool>,
    /// The module's `.global .samplerref` names (independent texturing mode), for
    /// [`super::tex`].
    pub samplers: std::collections::HashSet<String>,
    /// `.target ..., texmode_independent` (a fetch's second operand is its sampler).
    pub independent: bool,
}

/// State of lowering one function.
pub struct Lowerer<'a> {
    /// The function being built.
    pub f: Function,
    /// Block receiving instructions.
    pub cur: BlockId,
    /// PTX source span of the instruction being lowered.
    pub origin: Span,
    /// Declared PTX register types, by name (scopes flattened; names are unique in
    /// compiler output, and inlined callees get a prefix).
    pub reg_types: HashMap<String, ScalarType>,
    /// Declared `%r<N>` ranges: prefix → (N, type).
    pub reg_ranges: HashMap<String, (u32, ScalarType)>,
    /// PTX registers bound so far.
    pub regs: HashMap<String, PtxReg>,
    /// Variables visible by name.
    pub vars: HashMap<String, VarLoc>,
    /// Register-held `.param` slots: (slot, byte offset) → the IR variable holding the
    /// value stored there, and the type it was stored with.
    pub param_slots: HashMap<(u32, i64), (Reg, ScalarType)>,
    /// Number of param slots allocated.
    pub next_slot: u32,
    /// Labels → blocks.
    pub labels: HashMap<String, BlockId>,
    /// The kernel's shared-memory layout ([`super::mem::shared`]).
    pub shared: super::mem::shared::SharedLayout,
    /// Module layouts.
    pub layout: &'a ModuleLayout,
    /// Prefix for names inside an inlined callee (`""` at top level).
    pub prefix: String,
    /// Errors and warnings.
    pub diags: Vec<Diag>,
    /// The stack pointer `R1` is needed (the function has local memory).
    pub uses_frame: bool,
    /// Names of the functions being inlined (outermost first), to reject recursion.
    pub inline_stack: Vec<String>,
    /// Where `ret` of each inlined callee continues.
    pub return_targets: Vec<BlockId>,
    /// Calls inlined so far (makes callee name prefixes unique).
    pub inline_count: u32,
    /// What is known about PTX registers' values (space, alignment).
    pub facts: super::mem::facts::FactTable,
    /// Alignment in bytes of named variables (scoped names).
    pub var_align: HashMap<String, u32>,
    /// sm_70+ features emulated on SPA 5.0 are errors instead of warnings.
    pub deny_emulation: bool,
    /// The IR variable holding PTX's carry flag `CC.CF` as 0 or 1 (PTX ISA 9.7.2), written
    /// after every carry-out instruction; created on first use ([`super::arith::int`]).
    pub carry_var: Option<Reg>,
    /// The CC value ([`crate::ir::cc`]) of the last PTX carry-out. A carry-in reads the
    /// flag directly while it still holds this value ([`Lowerer::cc_now`]).
    pub carry_at: Option<u32>,
    /// The CC value the flag holds at the end of the current block, if it was written in
    /// that block: what the next CC reader [`Lowerer::emit`]s reads.
    pub cc_now: Option<(BlockId, u32)>,
    /// The PTX blocks being lowered, outermost first (see [`Scope`]).
    pub scopes: Vec<Scope>,
    /// Nested blocks opened so far (makes their [`Scope::key`]s unique).
    pub scope_count: u32,
    /// Vector registers (`.reg .v4 .f32 v`): key of the name (or of a range's prefix) →
    /// element count. Their elements `v.x` .. `v.w` are registers of their own, keyed
    /// `key.x` ..; the whole vector is no register.
    pub vec_regs: HashMap<String, u32>,
    /// Words of `.param` slots that arrive whole (a device function's parameters, the
    /// results of a call): slot → where each 32-bit word is (a register, or an incoming
    /// stack argument loaded where it is read); `ld.param` extracts from them
    /// ([`Lowerer::extract_param`]).
    pub param_words: HashMap<u32, Vec<crate::lower::calls::realcall::ParamWord>>,
    /// Declared size in bytes of each `.param` slot.
    pub slot_sizes: HashMap<u32, u32>,
    /// The block holding a device function's `RET` (`ret` jumps there), when lowering one.
    pub ret_block: Option<BlockId>,
    /// A device function's return values: (slot of a `.param` return, or the `.reg` name;
    /// the declaration), in order.
    pub ret_bindings: Vec<(Option<u32>, crate::ptx::ast::ParamDecl)>,
    /// A device function whose return values go through memory: the register holding
    /// the buffer's address (arrives in `R4`, `sass::abi::RET_ADDRESS_REG`).
    pub ret_address: Option<Reg>,
    /// The buffer in this function's frame that calls returning through memory share:
    /// (byte offset in the `.local` area, size in bytes).
    pub ret_buffer: Option<(u32, u32)>,
    /// `.callprototype`s declared so far, by (scoped) label.
    pub protos: HashMap<String, crate::ptx::ast::CallPrototype>,
    /// The label of the statement just lowered, if it was one (a `.callprototype` after
    /// it takes its name).
    pub last_label: Option<String>,
    /// The f64 slow paths the function calls ([`super::arith::float_slow::SlowPath`]), compiled
    /// once per module.
    pub slow_paths: std::collections::HashSet<super::arith::float_slow::SlowPath>,
    /// The register pair holding a `.global` variable's address, per (block, variable),
    /// reused by later accesses in the same block ([`Lowerer::global_var_base`]).
    pub global_bases: HashMap<(BlockId, String), RegRef>,
    /// Blocks known to be in `f.layout`, by `BlockId::index()`, covering its first
    /// `layout_seen` entries ([`Lowerer::in_layout`]; the layout only grows at its end
    /// while a body is lowered).
    pub layout_member: Vec<bool>,
    /// How many entries of `f.layout` `layout_member` covers.
    pub layout_seen: usize,
}

/// A lowering failure for one instruction; already recorded as a diagnostic.
#[derive(Debug)]
pub struct Failed;

/// Result type of lowering steps.
pub type LResult<T> = Result<T, Failed>;

impl<'a> Lowerer<'a> {
    /// Starts a function.
    pub fn new(f: Function, layout: &'a ModuleLayout) -> Lowerer<'a> {
        let cur = f.entry;
        Lowerer {
            f,
            cur,
            origin: Span::default(),
            reg_types: HashMap::new(),
            reg_ranges: HashMap::new(),
            regs: HashMap::new(),
            vars: HashMap::new(),
            param_slots: HashMap::new(),
            next_slot: 0,
            labels: HashMap::new(),
            shared: Default::default(),
            layout,
            prefix: String::new(),
            diags: vec![],
            uses_frame: false,
            inline_stack: vec![],
            return_targets: vec![],
            inline_count: 0,
            facts: Default::default(),
            var_align: HashMap::new(),
            deny_emulation: false,
            carry_var: None,
            carry_at: None,
            cc_now: None,
            scopes: vec![],
            scope_count: 0,
            vec_regs: HashMap::new(),
            param_words: HashMap::new(),
            slot_sizes: HashMap::new(),
            ret_block: None,
            ret_bindings: vec![],
            ret_address: None,
            ret_buffer: None,
            protos: HashMap::new(),
            last_label: None,
            slow_paths: Default::default(),
            global_bases: HashMap::new(),
            layout_member: vec![],
            layout_seen: 0,
        }
    }

    /// Records an error at `span` and fails.
    pub fn error<T>(&mut self, span: Span, msg: impl Into<String>) -> LResult<T> {
        self.diags.push(Diag::error(span, msg));
        Err(Failed)
    }

    /// Records a ready-made diagnostic and fails.
    pub fn fail<T>(&mut self, d: Diag) -> LResult<T> {
        self.diags.push(d);
        Err(Failed)
    }

    /// Appends an instruction to the current block, linking its CC use and definition
    /// ([`crate::ir::cc`]): a reader reads the value last written in this block (none at
    /// the start of a block: the IR verifier reports such a reader), a writer defines a
    /// new one.
    pub fn emit(&mut self, mut i: Instr) {
        if i.op.reads_cc() {
            i.cc.read = self.cc_now.filter(|(b, _)| *b == self.cur).map(|(_, v)| v);
        }
        if i.op.writes_cc() {
            let v = self.f.new_cc();
            i.cc.def = Some(v);
            self.cc_now = Some((self.cur, v));
        }
        let origin = self.origin;
        self.f.cfg[self.cur].push(i, origin);
    }

    /// Emits `op` with one destination and the given sources.
    pub fn op(&mut self, op: Op, dst: Dst, srcs: Vec<Src>) {
        self.emit(Instr::new(op, vec![dst], srcs));
    }

    /// A fresh virtual register of `n` 32-bit components.
    pub fn tmp(&mut self, n: u8) -> Reg {
        self.f.new_vreg(VRegKind::Gpr(n))
    }

    /// A fresh predicate.
    pub fn tmp_pred(&mut self) -> Reg {
        self.f.new_vreg(VRegKind::Pred)
    }

    /// Starts a new block that the current one does not flow into (the caller adds edges).
    pub fn start_block(&mut self, b: BlockId) {
        self.cur = b;
    }

    /// Adds a CFG edge.
    pub fn edge(&mut self, from: BlockId, to: BlockId, kind: EdgeKind) {
        self.f.cfg.add_edge(from, to, Edge { kind, args: vec![] });
    }

    /// True if block `b` is in `f.layout`: amortized `O(1)` (a scan of the layout per
    /// query was quadratic in the number of labels).
    pub fn in_layout(&mut self, b: BlockId) -> bool {
        if self.layout_seen > self.f.layout.len() {
            // The layout shrank: start over.
            self.layout_member.clear();
            self.layout_seen = 0;
        }
        for &x in self.f.layout.get(self.layout_seen..).unwrap_or_default() {
            if self.layout_member.len() <= x.index() {
                self.layout_member.resize(x.index().saturating_add(1), false);
            }
            if let Some(m) = self.layout_member.get_mut(x.index()) {
                *m = true;
            }
        }
        self.layout_seen = self.f.layout.len();
        self.layout_member.get(b.index()).copied().unwrap_or(false)
    }

    /// Creates a block and appends it to the layout.
    pub fn new_block(&mut self, name: impl Into<String>) -> BlockId {
        let b = self.f.cfg.add_node(Block { name: name.into(), ..Block::default() });
        self.f.layout.push(b);
        b
    }

    /// The key of the innermost block of the current function instance declaring `name`,
    /// if any (`None` for parameters and module-scope names).
    fn declaring(&self, name: &str) -> Option<&Scope> {
        self.scopes.iter().rev().take_while(|s| s.func == self.prefix).find(|s| s.declares(name))
    }

    /// The flat-map key of a name used in the current block: the declaration in the
    /// innermost enclosing block that has one, else the current function instance's
    /// parameter (or module-scope name) key, `prefix + name`.
    pub fn scoped(&self, name: &str) -> String {
        match self.declaring(name) {
            Some(s) => format!("{}{}", s.key, name),
            None => format!("{}{}", self.prefix, name),
        }
    }

    /// The key a declaration of `name` in the current block gets; records it there.
    pub fn declare_in_scope(&mut self, name: &str, range: Option<u32>) -> String {
        match self.scopes.last_mut().filter(|s| s.func == self.prefix) {
            Some(s) => {
                match range {
                    Some(n) => {
                        s.ranges.insert(name.to_string(), n);
                    }
                    None => {
                        s.names.insert(name.to_string());
                    }
                }
                format!("{}{}", s.key, name)
            }
            None => format!("{}{}", self.prefix, name),
        }
    }

    /// The flat-map key of label `name` as seen from the current block: the innermost
    /// enclosing block placing it (branches never reach into nested blocks).
    pub fn label_key(&self, name: &str) -> String {
        let s = self.scopes.iter().rev().take_while(|s| s.func == self.prefix).find(|s| s.labels.contains(name));
        format!("{}{}", s.map_or(self.prefix.as_str(), |s| s.key.as_str()), name)
    }

    /// Opens the scope of a PTX block (its labels, collected here, are visible in all of
    /// it); the outermost block of a function instance keys its names with the prefix alone.
    pub fn open_scope(&mut self, b: &crate::ptx::ast::Block) {
        let outermost = self.scopes.last().is_none_or(|s| s.func != self.prefix);
        let key = if outermost {
            self.prefix.clone()
        } else {
            // One per nested block of the input: far from the integer's limit.
            self.scope_count = self.scope_count.saturating_add(1);
            format!("{}{{{}}}", self.prefix, self.scope_count)
        };
        let labels = b
            .stmts
            .iter()
            .filter_map(|s| match s {
                crate::ptx::ast::Statement::Label(l) => Some(l.name.clone()),
                _ => None,
            })
            .collect();
        self.scopes.push(Scope { func: self.prefix.clone(), key, labels, ..Scope::default() });
    }

    /// Whether `name` is declared by a block of the current function instance (so it
    /// hides any module-scope name).
    pub fn is_local_name(&self, name: &str) -> bool {
        self.declaring(name).is_some()
    }

    /// The IR variable of PTX register `id` (created on first use).
    pub fn ptx_reg(&mut self, id: &Ident) -> LResult<PtxReg> {
        let key = self.scoped(&id.name);
        if let Some(r) = self.regs.get(&key) {
            return Ok(*r);
        }
        let Some(ty) = self.lookup_reg_type(&key) else {
            if self.layout.func_names.contains(&id.name) {
                return self.fail(
                    Diag::error(id.span, format!("function `{}` used where a register is expected", id.name))
                        .note("a function's address is taken with `mov.u64 %rd, name` (PTX ISA 9.7.9.1)"),
                );
            }
            return self.error(id.span, format!("`{}` is not a register", id.name));
        };
        let kind = match ty {
            ScalarType::Pred => VRegKind::Pred,
            t if t.bits() == 128 => VRegKind::Gpr(4),
            t if t.bits() == 64 => VRegKind::Gpr(2),
            _ => VRegKind::Gpr(1),
        };
        let reg = self.f.new_vreg(kind);
        let r = PtxReg { reg, ty };
        self.regs.insert(key, r);
        Ok(r)
    }

    /// The declared type of a (scoped) register name, resolving `%r<N>` ranges.
    pub(super) fn lookup_reg_type(&self, key: &str) -> Option<ScalarType> {
        // An element `key.x` of a vector register: the element type.
        if let Some((base, c)) = key.rsplit_once('.')
            && matches!(c, "x" | "y" | "z" | "w")
        {
            return self.vector_of(base).and(self.lookup_reg_type_raw(base));
        }
        if self.vector_of(key).is_some() {
            return None;
        }
        self.lookup_reg_type_raw(key)
    }

    /// The element count of the vector register with key `key` (a name or a range member).
    pub fn vector_of(&self, key: &str) -> Option<u32> {
        if let Some(n) = self.vec_regs.get(key) {
            return Some(*n);
        }
        let digits = key.len().saturating_sub(key.bytes().rev().take_while(u8::is_ascii_digit).count());
        self.vec_regs.get(key.get(..digits)?).copied().filter(|_| digits < key.len())
    }

    fn lookup_reg_type_raw(&self, key: &str) -> Option<ScalarType> {
        if let Some(t) = self.reg_types.get(key) {
            return Some(*t);
        }
        let digits = key.len().saturating_sub(key.bytes().rev().take_while(u8::is_ascii_digit).count());
        let (prefix, num) = key.split_at(digits);
        let n: u32 = num.parse().ok()?;
        let (count, ty) = self.reg_ranges.get(prefix)?;
        (n < *count).then_some(*ty)
    }

    /// Declares PTX registers (one name, or a `%r<N>` range).
    pub fn declare_reg(&mut self, name: &str, range: Option<u32>, ty: ScalarType) {
        let key = self.scoped(name);
        self.declare_reg_key(key, range, ty);
    }

    /// Declares PTX registers under a flat-map key (see [`Self::declare_in_scope`]).
    pub fn declare_reg_key(&mut self, key: String, range: Option<u32>, ty: ScalarType) {
        match range {
            None => {
                self.reg_types.insert(key, ty);
            }
            Some(n) => {
                self.reg_ranges.insert(key, (n, ty));
            }
        }
    }

    /// Looks up a named variable (parameter, local, shared, const, global): the current
    /// callee's scope first, then module scope.
    pub fn var(&self, name: &str) -> Option<VarLoc> {
        let own = self.vars.get(&self.scoped(name));
        if own.is_some() || self.is_local_name(name) {
            return own.copied();
        }
        self.vars.get(name).copied()
    }

    /// Operand `k` of `i`. `ptx::check` checks every instruction's operand count against
    /// its shape before lowering, so a missing operand is an internal error: reported at
    /// the instruction, not an index out of bounds.
    pub fn operand<'i>(&mut self, i: &'i crate::ptx::ast::Instruction, k: usize) -> LResult<&'i Operand> {
        match i.operands.get(k) {
            Some(op) => Ok(op),
            None => {
                self.error(i.span, format!("internal error: `{}` has no operand {k}", crate::ptx::check::instr_text(i)))
            }
        }
    }

    /// A 32-bit source for a PTX operand: register (component `comp` of a wider one),
    /// or immediate.
    pub fn src32(&mut self, op: &Operand) -> LResult<Src> {
        match op {
            Operand::Name { name, negated: false, component: None, .. } => {
                let r = self.ptx_reg(name)?;
                Ok(Src::reg(RegRef { reg: r.reg, comp: 0, n: 1 }))
            }
            Operand::Imm(i) => Ok(Src::imm(imm_bits32(i.value))),
            _ => self.error(op.span(), "expected a register or an immediate"),
        }
    }
}

/// The low 32 bits an immediate contributes to a 32-bit operand (f64 literals used as
/// f32 operands are rounded to f32, as PTX ISA 4.5.1 specifies for float literals).
pub fn imm_bits32(v: ImmValue) -> u32 {
    match v {
        ImmValue::Int(i) => i as u32,
        ImmValue::F32(b) => b,
        ImmValue::F64(b) => (f64::from_bits(b) as f32).to_bits(),
    }
}

/// The 64-bit pattern of an immediate used as a 64-bit operand.
pub fn imm_bits64(v: ImmValue) -> u64 {
    match v {
        ImmValue::Int(i) => i as u64,
        ImmValue::F32(b) => (f32::from_bits(b) as f64).to_bits(),
        ImmValue::F64(b) => b,
    }
}

/// Bytes and alignment of a state-space variable's placement.
pub fn space_name(s: StateSpace) -> &'static str {
    s.as_str()
}
