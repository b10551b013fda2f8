//! The lowering context: one function being built, the block being filled, and how PTX
//! names map to IR values (registers to variables, parameters to constant-bank offsets,
//! `.local`/`.shared`/`.const` variables to offsets in their windows).
//!
//! Lowering produces non-SSA IR: each PTX register is one IR *variable* (a virtual
//! register that may be written many times). `lower::ssa` then renames into SSA form.

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
    /// `.global` variable (needs a relocation; not supported without cubin output).
    Global,
}

/// Module-wide layouts shared by every function.
#[derive(Default)]
pub struct ModuleLayout {
    /// `.const` variables: name → offset in bank 3.
    pub consts: HashMap<String, u32>,
    /// `.shared` module variables: name → (size, alignment).
    pub shared: HashMap<String, (u32, u32)>,
    /// Declaration order of shared variables.
    pub shared_order: Vec<String>,
    /// `.global` module variables.
    pub globals: HashMap<String, ScalarType>,
    /// Alignment in bytes of module variables.
    pub align: HashMap<String, u32>,
    /// Names of the module's functions with bodies (for the diagnostic on taking their
    /// address); one set for all kernels.
    pub func_names: std::collections::HashSet<String>,
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
    /// Shared variables placed so far: name → offset.
    pub shared_offsets: HashMap<String, u32>,
    /// Module layouts.
    pub layout: &'a ModuleLayout,
    /// Prefix for names inside an inlined callee (`""` at top level).
    pub prefix: String,
    /// Errors and warnings.
    pub diags: Vec<Diag>,
    /// The stack pointer `R1` is needed (the function has local memory).
    pub uses_frame: bool,
    /// `.shared` variables declared inside the function: name → (size, alignment).
    pub local_shared: HashMap<String, (u32, u32)>,
    /// Names of the functions being inlined (outermost first), to reject recursion.
    pub inline_stack: Vec<String>,
    /// Where `ret` of each inlined callee continues.
    pub return_targets: Vec<BlockId>,
    /// Calls inlined so far (makes callee name prefixes unique).
    pub inline_count: u32,
    /// What is known about PTX registers' values (space, alignment).
    pub facts: super::facts::FactTable,
    /// Alignment in bytes of named variables (scoped names).
    pub var_align: HashMap<String, u32>,
    /// sm_70+ features emulated on SPA 5.0 are errors instead of warnings.
    pub deny_emulation: bool,
    /// The IR variable holding PTX's carry flag `CC.CF` as 0 or 1 (PTX ISA 9.7.2), written
    /// after every carry-out instruction; created on first use ([`super::int`]).
    pub carry_var: Option<Reg>,
    /// Where the hardware CC of the last PTX carry-out was written: (block, instruction
    /// index). A carry-in in the same block with no CC writer since reads CC directly.
    pub carry_at: Option<(BlockId, usize)>,
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
            shared_offsets: HashMap::new(),
            layout,
            prefix: String::new(),
            diags: vec![],
            uses_frame: false,
            local_shared: HashMap::new(),
            inline_stack: vec![],
            return_targets: vec![],
            inline_count: 0,
            facts: Default::default(),
            var_align: HashMap::new(),
            deny_emulation: false,
            carry_var: None,
            carry_at: None,
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

    /// Appends an instruction to the current block.
    pub fn emit(&mut self, i: Instr) {
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

    /// Creates a block and appends it to the layout.
    pub fn new_block(&mut self, name: impl Into<String>) -> BlockId {
        let b = self.f.cfg.add_node(Block { name: name.into(), ..Block::default() });
        self.f.layout.push(b);
        b
    }

    /// The name with the current inlining prefix.
    pub fn scoped(&self, name: &str) -> String {
        format!("{}{}", self.prefix, name)
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
                    Diag::error(id.span, format!("the address of function `{}` cannot be taken", id.name))
                        .note("ptx2sass inlines device functions: indirect calls are not supported"),
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
        if let Some(t) = self.reg_types.get(key) {
            return Some(*t);
        }
        let digits = key.len() - key.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, num) = key.split_at(digits);
        let n: u32 = num.parse().ok()?;
        let (count, ty) = self.reg_ranges.get(prefix)?;
        (n < *count).then_some(*ty)
    }

    /// Declares PTX registers (one name, or a `%r<N>` range).
    pub fn declare_reg(&mut self, name: &str, range: Option<u32>, ty: ScalarType) {
        let key = self.scoped(name);
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
        self.vars.get(&self.scoped(name)).or_else(|| self.vars.get(name)).copied()
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
