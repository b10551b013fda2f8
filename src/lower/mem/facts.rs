//! Facts about PTX registers' values that the memory lowering needs, tracked in program
//! order while lowering:
//! * the state space a 64-bit value provably points into (so that a generic access through
//!   it can use the specific instruction, e.g. `LDG` for an address from
//!   `cvta.to.global` or a `.ptr .global` kernel parameter);
//! * a known power-of-two alignment of the value (so that a statically misaligned access
//!   is an error, PTX ISA 6.4.2 "Addresses as Operands": addresses must be aligned to the
//!   access size).
//!
//! A register written once in the function keeps its facts everywhere (its only definition
//! is the value every use sees, or the use reads an undefined register). A register
//! written several times loses its facts at every label, where values from several paths
//! may meet; within a block the facts follow the writes.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::ctx::{Lowerer, VarLoc};
use crate::lower::mem::ldst::Space;
use crate::ptx::ast::{Block, Function, ImmValue, Instruction, Operand, Statement};
use crate::ptx::instr::{Arith, ArithOp, InstrKind, IntMode};
use crate::ptx::types::StateSpace;
use std::collections::{HashMap, HashSet};

/// What is known about one register's value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The space the value points into, if it is an address of a known space.
    pub space: Option<Space>,
    /// A power of two the value is a multiple of (1 when nothing is known).
    pub align: u32,
}

/// Per-function fact tracking.
#[derive(Default)]
pub struct FactTable {
    facts: HashMap<String, Facts>,
    /// Registers written more than once (their facts end at labels).
    multi: HashSet<String>,
    /// The keys of `facts` whose register is in `multi`: what [`FactTable::at_label`]
    /// drops (a scan of every fact per label was quadratic in the kernel's size).
    multi_keys: HashSet<String>,
    /// Kernel parameters with `.ptr` attributes: name → facts of the pointer they hold.
    pub param_ptrs: HashMap<String, Facts>,
    /// Registers written once, by `ld.param.{u64,b64,s64} r, [p]` of a whole kernel
    /// parameter `p`: key → the parameter's offset in constant bank 0. A texture or
    /// surface handle in such a register is named by its bank-0 word (the bound forms,
    /// `lower::tex`, docs/textures.md §1.1).
    pub kernel_params: HashMap<String, u32>,
}

/// Counts the definitions of each register name in `b` and its nested blocks (by bare
/// name: a name declared again in a nested block, or in several inlined callees, counts
/// once per definition of any of them, which only makes [`FactTable::at_label`] drop more).
fn count_defs(b: &Block, counts: &mut HashMap<String, u32>) {
    let mut stack = vec![b.stmts.iter()];
    while let Some(it) = stack.last_mut() {
        let Some(s) = it.next() else {
            stack.pop();
            continue;
        };
        match s {
            Statement::Instr(i) => {
                if let Some(Operand::Name { name, .. }) = i.operands.first()
                    && !matches!(i.kind, InstrKind::St(_) | InstrKind::Bra { .. } | InstrKind::Call)
                {
                    let n = counts.entry(name.name.clone()).or_default();
                    *n = n.saturating_add(1);
                }
            }
            Statement::Block(inner) => stack.push(inner.stmts.iter()),
            _ => {}
        }
    }
}

/// The PTX name a lowering key stands for: the key without the inlining prefix
/// (`::f#1::`) and block-scope mark (`{3}`), neither of which a PTX identifier contains.
fn bare(key: &str) -> &str {
    let k = key.rsplit("::").next().unwrap_or(key);
    k.rsplit('}').next().unwrap_or(k)
}

/// The alignment an integer immediate guarantees (its lowest set bit; 2^31 for 0).
fn imm_align(v: i64) -> u32 {
    if v == 0 { 1 << 31 } else { 1u32 << (v.trailing_zeros().min(31)) }
}

impl FactTable {
    /// Prepares tracking for a kernel: counts definitions (in the kernel and in every
    /// function of `funcs`, which may be inlined into it) and records `.ptr` parameters.
    pub fn new<'f>(k: &'f Function, funcs: impl IntoIterator<Item = &'f Function>) -> FactTable {
        let mut counts = HashMap::new();
        for f in std::iter::once(k).chain(funcs) {
            if let Some(b) = &f.body {
                count_defs(b, &mut counts);
            }
        }
        let multi = counts.into_iter().filter(|(_, n)| *n > 1).map(|(k, _)| k).collect();
        let mut param_ptrs = HashMap::new();
        for p in &k.params {
            if let Some(ptr) = &p.ptr {
                let space = match ptr.space {
                    Some(StateSpace::Global) => Some(Space::Global),
                    _ => None,
                };
                param_ptrs.insert(p.name.name.clone(), Facts { space, align: ptr.align.unwrap_or(1).max(1) });
            }
        }
        FactTable {
            facts: HashMap::new(),
            multi,
            multi_keys: HashSet::new(),
            param_ptrs,
            kernel_params: HashMap::new(),
        }
    }

    /// Facts of a register (default: nothing known).
    pub fn get(&self, key: &str) -> Facts {
        self.facts.get(key).copied().unwrap_or(Facts { space: None, align: 1 })
    }

    /// At a label: registers with several definitions lose their facts.
    pub fn at_label(&mut self) {
        for k in std::mem::take(&mut self.multi_keys) {
            self.facts.remove(&k);
        }
    }

    fn set(&mut self, key: String, f: Facts) {
        if f == (Facts { space: None, align: 1 }) {
            self.facts.remove(&key);
        } else {
            if self.multi.contains(bare(&key)) {
                self.multi_keys.insert(key.clone());
            }
            self.facts.insert(key, f);
        }
    }
}

impl Lowerer<'_> {
    fn operand_facts(&self, op: &Operand) -> Facts {
        match op {
            Operand::Imm(i) => match i.value {
                ImmValue::Int(v) => Facts { space: None, align: imm_align(v) },
                _ => Facts { space: None, align: 1 },
            },
            Operand::Name { name, component: None, .. } => {
                if let Some(loc) = self.var(&name.name) {
                    // `mov d, var`: an address in the variable's own space.
                    let align = self.var_align.get(&self.scoped(&name.name)).or_else(|| self.var_align.get(&name.name));
                    let _ = loc;
                    return Facts { space: None, align: align.copied().unwrap_or(1) };
                }
                self.facts.get(&self.scoped(&name.name))
            }
            _ => Facts { space: None, align: 1 },
        }
    }

    /// Updates register facts after lowering instruction `i`.
    pub fn update_facts(&mut self, i: &Instruction) {
        let Some(Operand::Name { name: d, .. }) = i.operands.first() else { return };
        if matches!(i.kind, InstrKind::St(_) | InstrKind::Bra { .. } | InstrKind::Call) {
            return;
        }
        let key = self.scoped(&d.name);
        if let InstrKind::Ld(l) = &i.kind
            && matches!(l.space, Some(StateSpace::Param(_)))
            && l.vec.is_none()
            && l.ty.bits() == 64
            && !self.facts.multi.contains(bare(&key))
            && let Some(Operand::Address { base: crate::ptx::ast::AddrBase::Name(n), offset: 0, .. }) =
                i.operands.get(1)
            && let Some(VarLoc::KernelParam(o)) = self.var(&n.name)
        {
            self.facts.kernel_params.insert(key.clone(), o);
        }
        let unknown = Facts { space: None, align: 1 };
        let src = |k: usize| i.operands.get(k);
        let f = match &i.kind {
            InstrKind::Ld(l) if matches!(l.space, Some(StateSpace::Param(_))) && l.vec.is_none() => match src(1) {
                Some(Operand::Address { base: crate::ptx::ast::AddrBase::Name(n), offset: 0, .. })
                    if matches!(self.var(&n.name), Some(VarLoc::KernelParam(_))) =>
                {
                    self.facts.param_ptrs.get(&n.name).copied().unwrap_or(unknown)
                }
                _ => unknown,
            },
            InstrKind::Mov(_) | InstrKind::Cvt(_) => src(1).map_or(unknown, |o| {
                let f = self.operand_facts(o);
                if matches!(i.kind, InstrKind::Cvt(_)) { Facts { space: None, ..f } } else { f }
            }),
            InstrKind::Cvta(c) => {
                let f = src(1).map_or(unknown, |o| self.operand_facts(o));
                match c.space {
                    StateSpace::Global => Facts { space: Some(Space::Global), align: f.align },
                    _ => Facts { space: None, align: f.align.min(1 << 24) },
                }
            }
            InstrKind::Arith(Arith { op: op @ (ArithOp::Add | ArithOp::Sub), ty, .. }) if ty.is_integer() => {
                let (a, b) = (
                    src(1).map_or(unknown, |o| self.operand_facts(o)),
                    src(2).map_or(unknown, |o| self.operand_facts(o)),
                );
                let space = match (a.space, b.space, op) {
                    (Some(s), None, _) => Some(s),
                    (None, Some(s), ArithOp::Add) => Some(s),
                    _ => None,
                };
                Facts { space, align: a.align.min(b.align) }
            }
            InstrKind::Arith(Arith { op: ArithOp::Mul, mode: Some(IntMode::Wide | IntMode::Lo), .. })
            | InstrKind::Arith(Arith { op: ArithOp::Shl, .. }) => {
                let (a, b) = (src(1).map_or(unknown, |o| self.operand_facts(o)), src(2));
                let factor = match (&i.kind, b) {
                    (InstrKind::Arith(Arith { op: ArithOp::Shl, .. }), Some(Operand::Imm(m))) => match m.value {
                        ImmValue::Int(s) if (0..31).contains(&s) => 1u32 << s,
                        _ => 1,
                    },
                    (_, Some(o)) => self.operand_facts(o).align,
                    _ => 1,
                };
                Facts { space: None, align: a.align.saturating_mul(factor).clamp(1, 1 << 31) }
            }
            _ => unknown,
        };
        self.facts.set(key, f);
    }
}
