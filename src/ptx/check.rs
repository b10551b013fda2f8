//! Semantic checks on a classified module: every name resolves (registers, special
//! registers, variables, labels, functions), labels are defined exactly once, and each
//! modelled instruction has the operand shapes and register widths its type requires
//! (PTX ISA 6.4 "Operand Type Information").
//!
//! Lowering relies on these checks: it may assume operand counts and kinds are right.

use super::ast::*;
use super::instr::*;
use super::shapes::{HALF_OPCODES, Shape, Width, compatible, shapes, unsigned};
use super::types::{ScalarType, StateSpace};
use crate::diag::Diag;
use std::collections::HashMap;

/// A special register (PTX ISA 10 "Special Registers"): its name and width in bits.
/// Names with `.x/.y/.z` components are listed without the component.
pub const SPECIAL_REGISTERS: &[(&str, u32, bool)] = &[
    // (name, bits, has .x/.y/.z components)
    ("%tid", 32, true),
    ("%ntid", 32, true),
    ("%ctaid", 32, true),
    ("%nctaid", 32, true),
    ("%laneid", 32, false),
    ("%warpid", 32, false),
    ("%nwarpid", 32, false),
    ("%smid", 32, false),
    ("%nsmid", 32, false),
    ("%gridid", 64, false),
    ("%lanemask_eq", 32, false),
    ("%lanemask_le", 32, false),
    ("%lanemask_lt", 32, false),
    ("%lanemask_ge", 32, false),
    ("%lanemask_gt", 32, false),
    ("%clock", 32, false),
    ("%clock_hi", 32, false),
    ("%clock64", 64, false),
    ("%globaltimer", 64, false),
    ("%globaltimer_lo", 32, false),
    ("%globaltimer_hi", 32, false),
    ("%total_smem_size", 32, false),
    ("%dynamic_smem_size", 32, false),
];

/// Looks up a special register; returns its width in bits and whether it takes a component.
/// `%envreg0` .. `%envreg31` are the driver-defined environment registers (PTX ISA 10
/// "Special Registers": `%envreg<32>`, 32 bits).
pub fn special_register(name: &str) -> Option<(u32, bool)> {
    if envreg(name).is_some() {
        return Some((32, false));
    }
    SPECIAL_REGISTERS.iter().find(|s| s.0 == name).map(|s| (s.1, s.2))
}

/// The number of an environment register `%envreg0` .. `%envreg31`.
pub fn envreg(name: &str) -> Option<u32> {
    let n = name.strip_prefix("%envreg")?;
    let k: u32 = n.parse().ok()?;
    (k < 32 && (n == "0" || !n.starts_with('0'))).then_some(k)
}

/// What a name in an operand denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// A register of this type (and vector width).
    Reg(ScalarType),
    /// A special register of this width.
    Special(u32),
    /// A variable in this state space (its address, or its value for `ld`/`st`).
    Var(StateSpace),
    /// A label.
    Label,
    /// A function.
    Func,
}

/// The names one block declares: a declaration is visible in the block holding it and in
/// the blocks nested inside, where a declaration of the same name hides it (ptxas 11.8
/// compiles a nested `.reg`, `.local` or `.shared` of an outer name as a new variable and
/// the outer one is unchanged after the block). Labels are scoped the same way: a branch may target a label of its own block
/// or of an enclosing one, not one inside a nested block (ptxas 11.8: `Unknown symbol 'L'`
/// for `bra L; { L: ... }`, and accepts the same label in sibling or nested blocks). The
/// function's parameters share the scope of its outermost block (ptxas 11.8: `Duplicate
/// definition of variable 'out'` for `.reg .u32 out;` in a kernel with parameter `out`).
#[derive(Default)]
struct Scope {
    /// `%r1` → type, space and where it is declared.
    names: HashMap<String, (ScalarType, StateSpace, Span)>,
    /// `%r<N>` ranges: prefix → (count, type, where).
    ranges: HashMap<String, (u32, ScalarType, Span)>,
    /// The labels placed directly in this block.
    labels: HashMap<String, Span>,
    /// Vector registers (`.reg .v4 .f32 v`, also as a range): name or range prefix →
    /// element count (PTX ISA 5.4.3 "Vectors": elements `v.x`, `v.y`, `v.z`, `v.w`, or
    /// `.r .g .b .a`).
    vecs: HashMap<String, u32>,
}

impl Scope {
    /// Where `name` is declared in this scope (by name or in a `%r<N>` range), with its
    /// type and space.
    fn find(&self, name: &str) -> Option<(ScalarType, StateSpace, Span)> {
        if let Some(x) = self.names.get(name) {
            return Some(*x);
        }
        // `v.y` inside a vector operand `{a, v.y}`: an element of vector register `v`.
        if let Some((base, c)) = name.split_once('.') {
            let n = self.vecs.get(base).or_else(|| self.vecs.get(range_index(base)?.0))?;
            let k = c.chars().next().and_then(vector_component)?;
            return (c.len() == 1 && k < *n).then(|| self.find(base)).flatten();
        }
        let (prefix, i) = range_index(name)?;
        let (n, ty, at) = self.ranges.get(prefix)?;
        (i < u64::from(*n)).then_some((*ty, StateSpace::Reg, *at))
    }
}

/// `%r12` → (`%r`, 12): the prefix and index a name has as a member of a `%r<N>` range
/// (PTX ISA 5.4.2 "Parameterized Variable Names": `%r0` .. `%r{N-1}`, no leading zeros).
fn range_index(name: &str) -> Option<(&str, u64)> {
    let digits = name.len().saturating_sub(name.bytes().rev().take_while(u8::is_ascii_digit).count());
    let (prefix, num) = name.split_at_checked(digits)?;
    if num.is_empty() || (num.len() > 1 && num.starts_with('0')) {
        return None;
    }
    Some((prefix, num.parse().ok()?))
}

struct FnCtx<'m> {
    module_vars: &'m HashMap<String, StateSpace>,
    functions: &'m HashMap<String, Span>,
    scopes: Vec<Scope>,
    diags: Vec<Diag>,
}

impl FnCtx<'_> {
    /// Declares `d` in the innermost scope; a name the same scope already declares (also
    /// as a member of a `%r<N>` range) is an error, as in ptxas 11.8 ("Duplicate definition
    /// of variable '%r1'" for `.reg .u32 %r<3>; .reg .u32 %r1;`).
    fn declare(&mut self, d: &VarDecl) {
        let Some(scope) = self.scopes.last_mut() else {
            self.diags.push(Diag::error(d.name.span, "internal error: a declaration outside every scope"));
            return;
        };
        let clash = match d.range {
            None => scope.find(&d.name.name).map(|x| x.2),
            Some(n) => scope.ranges.get(&d.name.name).map(|x| x.2).or_else(|| {
                scope
                    .names
                    .iter()
                    .filter(|(k, _)| range_index(k).is_some_and(|(p, i)| p == d.name.name && i < u64::from(n)))
                    .map(|(_, v)| v.2)
                    .min_by_key(|s| s.lo)
            }),
        };
        if let Some(first) = clash {
            self.diags.push(
                Diag::error(d.name.span, format!("`{}` is declared twice in the same scope", d.name.name))
                    .label("declared again here")
                    .with_secondary(first, "first declared here")
                    .note("a nested `{ }` block may declare the name again, hiding the outer one"),
            );
            return;
        }
        if let Some(n) = d.vec.filter(|n| *n > 1) {
            // PTX ISA 5.4.2 (Vectors): `.v2` and `.v4` of a scalar type, at most 128 bits
            // (ptxas 11.8: "Parsing error near '.v8'", and for `.v4 .b64` "Vector type too
            // large, exceeds 128 bit limit").
            let bits = u64::from(d.ty.bits()).saturating_mul(u64::from(n));
            if !matches!(n, 2 | 4) || bits > 128 {
                self.diags.push(
                    Diag::error(d.span, format!("`.v{n} {}` is not a PTX vector type", d.ty))
                        .label(format!("{n} elements, {bits} bits"))
                        .note("PTX vectors are `.v2` or `.v4` of a scalar type, at most 128 bits (PTX ISA 5.4.2)"),
                );
            }
        }
        if let Some(n) = d.vec.filter(|n| *n > 1 && d.space == StateSpace::Reg) {
            scope.vecs.insert(d.name.name.clone(), n);
        }
        match d.range {
            Some(n) => {
                scope.ranges.insert(d.name.name.clone(), (n, d.ty, d.name.span));
            }
            None => {
                scope.names.insert(d.name.name.clone(), (d.ty, d.space, d.name.span));
            }
        }
    }

    /// The element count of `name` when it is a vector register (of its innermost
    /// declaration).
    fn vector_len(&self, name: &str) -> Option<u32> {
        let scope = self.scopes.iter().rev().find(|s| s.find(name).is_some())?;
        if scope.names.contains_key(name) {
            return scope.vecs.get(name).copied();
        }
        scope.vecs.get(range_index(name)?.0).copied()
    }

    fn lookup(&self, name: &str) -> Option<Resolved> {
        for scope in self.scopes.iter().rev() {
            if let Some((ty, space, _)) = scope.find(name) {
                return Some(if space == StateSpace::Reg { Resolved::Reg(ty) } else { Resolved::Var(space) });
            }
        }
        if let Some((bits, _)) = special_register(name) {
            return Some(Resolved::Special(bits));
        }
        if let Some(space) = self.module_vars.get(name) {
            return Some(Resolved::Var(*space));
        }
        if self.label(name) {
            return Some(Resolved::Label);
        }
        if self.functions.contains_key(name) {
            return Some(Resolved::Func);
        }
        None
    }

    /// True when a label `name` is visible: placed in the current block or an enclosing one.
    fn label(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.labels.contains_key(name))
    }

    fn undeclared(&mut self, id: &Ident) {
        let what = if id.name.starts_with('%') { "register" } else { "identifier" };
        self.diags.push(
            Diag::error(id.span, format!("undeclared {what} `{}`", id.name))
                .label("not declared in this function or module")
                .note("declare registers with `.reg .TYPE name;` or `.reg .TYPE prefix<N>;` (PTX ISA 5.1.1)"),
        );
    }
}

fn register_bits(r: &Resolved) -> Option<u32> {
    match r {
        Resolved::Reg(ty) => Some(ty.bits()),
        Resolved::Special(b) => Some(*b),
        _ => None,
    }
}

impl FnCtx<'_> {
    fn check_width(&mut self, id: &Ident, r: &Resolved, want: Width, instr: &Instruction) {
        let Some(bits) = register_bits(r) else { return };
        let ok = match (want, r) {
            (Width::Exact(w), _) => bits == w,
            (Width::Typed(t, relaxed), Resolved::Reg(rt)) => compatible(t, *rt, relaxed),
            // Special registers are unsigned integers (PTX ISA 10).
            (Width::Typed(t, relaxed), _) => compatible(t, unsigned(bits), relaxed),
        };
        if !ok {
            let need = match want {
                Width::Exact(w) => format!("a {w}-bit register"),
                Width::Typed(t, true) if t.is_float() => {
                    format!("a `{t}` register, or a `.b` one of at least {} bits", t.bits())
                }
                Width::Typed(t, true) => format!("a register of `{t}`'s kind (or `.b`) of at least {} bits", t.bits()),
                Width::Typed(t, false) if t.is_float() => format!("a `{t}` or `.b{}` register", t.bits()),
                Width::Typed(t, false) if t.kind() == super::types::TypeKind::Bits => {
                    format!("a {}-bit register", t.bits())
                }
                Width::Typed(t, false) => format!("a `.u{0}`, `.s{0}` or `.b{0}` register", t.bits()),
            };
            let have = match r {
                Resolved::Reg(ty) => format!("`{}` is declared `{ty}`", id.name),
                _ => format!("`{}` is {bits} bits wide", id.name),
            };
            self.diags.push(
                Diag::error(id.span, format!("register `{}` has the wrong type for `{}`", id.name, instr_text(instr)))
                    .label(format!("{have}; this operand needs {need}")),
            );
        }
    }

    /// Resolves a name used as a register operand and checks its width / predicate-ness.
    fn reg_operand(&mut self, id: &Ident, want: Option<Width>, pred: bool, instr: &Instruction, allow_var: bool) {
        let Some(r) = self.lookup(&id.name) else {
            self.undeclared(id);
            return;
        };
        let is_pred = r == Resolved::Reg(ScalarType::Pred);
        match (&r, pred) {
            (Resolved::Reg(_) | Resolved::Special(_), _) if is_pred != pred => {
                let msg = if pred {
                    format!("`{}` is not a predicate register, but `{}` needs one here", id.name, instr_text(instr))
                } else {
                    format!(
                        "`{}` is a predicate register, but `{}` needs a data register here",
                        id.name,
                        instr_text(instr)
                    )
                };
                self.diags.push(Diag::error(id.span, msg).label("wrong register kind"));
            }
            (Resolved::Reg(_) | Resolved::Special(_), _) => {
                if let Some(w) = want {
                    self.check_width(id, &r, w, instr);
                }
            }
            (Resolved::Var(_) | Resolved::Func, false) if allow_var => {}
            _ => self.diags.push(
                Diag::error(
                    id.span,
                    format!("`{}` cannot be used as this operand of `{}`", id.name, instr_text(instr)),
                )
                .label("expected a register"),
            ),
        }
    }

    /// The instruction-type rules every instruction obeys, modelled or not: half-precision
    /// and `.b128` types only where the PTX ISA has them. False when one is broken.
    fn type_rules(&mut self, instr: &Instruction) -> bool {
        // Half-precision types are instruction types of the half-precision instructions
        // (PTX ISA 9.7.4), `cvt`, `set`/`setp` and the atomics only; ptxas 12.9: "Unexpected
        // instruction types specified for 'mov'" (also `ld`, `st`, `selp`, `testp`,
        // `copysign`, `rcp`, `sqrt`, `div`, `slct`), where `.b16` is the data type.
        if let Some(m) = instr.mods.iter().find(|m| matches!(m.text.as_str(), ".f16" | ".f16x2" | ".bf16" | ".bf16x2"))
            && !HALF_OPCODES.contains(&instr.opcode.name.as_str())
        {
            self.diags.push(
                Diag::error(m.span, format!("`{}` is not an instruction type of `{}`", m.text, instr.opcode.name))
                    .label("not allowed here")
                    .note("half-precision types are types of `add sub mul fma neg abs min max setp set ex2 tanh cvt atom red` (PTX ISA 9.7.4); move 16-bit data as `.b16`"),
            );
            return false;
        }
        // `.b128` (PTX ISA 8.3) is a type of `ld`, `st`, `mov` and `atom`/`red` only.
        let b128 = instr.mods.iter().find(|m| m.text == ".b128");
        if let Some(m) = b128
            && !matches!(instr.kind, InstrKind::Ld(_) | InstrKind::St(_) | InstrKind::Mov(_))
            && !matches!(instr.opcode.name.as_str(), "atom" | "red")
        {
            self.diags.push(
                Diag::error(m.span, format!("`.b128` is not an instruction type of `{}`", instr.opcode.name))
                    .label("not allowed here")
                    .note("`.b128` is an instruction type of `ld`, `st` and `mov` (and of `atom`, from sm_90) only (PTX ISA 8.3)"),
            );
            return false;
        }
        true
    }

    fn check_instr(&mut self, instr: &Instruction) {
        if let Some(g) = &instr.guard {
            self.reg_operand(&g.reg, None, true, instr, false);
        }
        if !self.type_rules(instr) {
            self.resolve_all(&instr.operands);
            return;
        }
        // Names anywhere in the operands must resolve, whatever the instruction; the
        // instructions without shapes here have their operand counts in `operands`.
        let Some(shapes) = shapes(&instr.kind) else {
            if let Some(c) = super::operands::counts(instr)
                && !(c.lo..=c.hi).contains(&instr.operands.len())
            {
                let n = instr.operands.len();
                let span = instr.operands.get(c.hi).map_or(instr.span, |o| o.span());
                let want = if c.lo == c.hi { c.lo.to_string() } else { format!("{} to {}", c.lo, c.hi) };
                self.diags.push(
                    Diag::error(
                        span,
                        format!(
                            "`{}` takes {want} operand{}, found {n}",
                            instr_text(instr),
                            if c.hi == 1 { "" } else { "s" }
                        ),
                    )
                    .label(if n > c.hi { "an operand too many" } else { "operands missing" })
                    .note(format!("syntax: `{}` (PTX ISA 9.7)", c.syntax)),
                );
            } else if let Some(rules) = super::shapes::other_shapes(instr)
                && rules.len() == instr.operands.len()
            {
                for (op, rule) in instr.operands.iter().zip(rules) {
                    match rule {
                        Some(shape) => self.check_operand(op, shape, instr),
                        None => self.resolve_all(std::slice::from_ref(op)),
                    }
                }
                return;
            }
            self.resolve_all(&instr.operands);
            return;
        };
        let mut shapes = shapes;
        // `mov.b64 {a, b}, %rd` unpacks and `mov.b64 %rd, {a, b}` packs (PTX ISA 9.7.9.1
        // mov): a vector operand has elements of the type's width divided by their count.
        // 2 or 4 elements of at least 8 bits, one vector operand at most (ptxas 12.9:
        // "Argument vector size mismatch for instruction 'mov'" for `mov.u64 %rd2, {%rd1}`,
        // "Illegal vector size: 3" for three).
        if let InstrKind::Mov(ty) = instr.kind {
            let vectors = instr.operands.iter().take(2).filter(|o| matches!(o, Operand::Vector(..))).count();
            for (k, op) in instr.operands.iter().enumerate().take(2) {
                if let Operand::Vector(elems, span) = op {
                    let n = elems.len() as u32;
                    let elem_bits = ty.bits().checked_div(n.max(1)).unwrap_or(0);
                    if !matches!(n, 2 | 4) || elem_bits < 8 || vectors > 1 || ty == ScalarType::Pred {
                        self.diags.push(
                            Diag::error(*span, format!("`{}` cannot pack or unpack this vector", instr_text(instr)))
                                .label(if vectors > 1 {
                                    "only one operand of `mov` may be a vector".to_string()
                                } else {
                                    format!("{n} element(s) of {elem_bits} bits")
                                })
                                .note("`mov.bN` packs or unpacks 2 or 4 elements of N/2 or N/4 bits, at least 8 (PTX ISA 9.7.9.1 mov)"),
                        );
                        self.resolve_all(&instr.operands);
                        return;
                    }
                    let w = Width::Exact(elem_bits);
                    if let Some(s) = shapes.get_mut(k) {
                        *s = if k == 0 { Shape::VecDst(n, w) } else { Shape::VecSrc(n, w) };
                    }
                }
            }
        }
        // The cache-policy operand of `ld`/`st` is checked against `.L2::cache_hint` by
        // `lower::mem::ldst::plan`, which owns every ld/st rule and its diagnostic; here an
        // optional third operand only has to be a 64-bit register.
        if matches!(instr.kind, InstrKind::Ld(_) | InstrKind::St(_)) {
            match (shapes.len(), instr.operands.len()) {
                (3, 2) => shapes.truncate(2),
                (2, 3) => shapes.push(Shape::Src(Width::Exact(64))),
                _ => {}
            }
        }
        if instr.operands.len() != shapes.len() {
            let span = instr.operands.get(shapes.len()).map_or(instr.span, |o| o.span());
            self.diags.push(
                Diag::error(
                    span,
                    format!("`{}` takes {} operands, found {}", instr_text(instr), shapes.len(), instr.operands.len()),
                )
                .label("operand count mismatch"),
            );
            self.resolve_all(&instr.operands);
            return;
        }
        for (op, shape) in instr.operands.iter().zip(shapes) {
            self.check_operand(op, shape, instr);
        }
    }

    fn resolve_all(&mut self, ops: &[Operand]) {
        for op in ops {
            match op {
                Operand::Name { name, .. } if self.lookup(&name.name).is_none() => self.undeclared(name),
                Operand::Vector(elems, _) => {
                    for e in elems {
                        if let VecElem::Reg(r) = e
                            && self.lookup(&r.name).is_none()
                        {
                            self.undeclared(r);
                        }
                    }
                }
                Operand::Address { base: AddrBase::Name(n), .. } if self.lookup(&n.name).is_none() => {
                    self.undeclared(n)
                }
                Operand::List(v, _) => self.resolve_all(v),
                Operand::Texture { image, parts, .. } => {
                    if self.lookup(&image.name).is_none() {
                        self.undeclared(image);
                    }
                    self.resolve_all(parts);
                }
                Operand::VarPlus { name, .. } if self.lookup(&name.name).is_none() => self.undeclared(name),
                Operand::PredPair(a, b, _) => {
                    for r in [a, b] {
                        if self.lookup(&r.name).is_none() {
                            self.undeclared(r);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn check_operand(&mut self, op: &Operand, shape: Shape, instr: &Instruction) {
        // Vector registers: `v.x` is a register of the element type; `v` whole is the data
        // of a vector `ld`/`st`/`mov` of as many elements.
        let elem;
        let op = if let Operand::Name { name, component, negated: false, span } = op
            && let Some(n) = self.vector_len(&name.name)
        {
            match (component, shape) {
                (Some(c), _) => {
                    if vector_component(*c).is_none_or(|k| k >= n) {
                        self.diags.push(
                            Diag::error(*span, format!("`{}` has no component `.{c}`", name.name))
                                .label(format!("a vector of {n} elements"))
                                .note("components are `.x .y .z .w` (or `.r .g .b .a`) (PTX ISA 5.4.3)"),
                        );
                        return;
                    }
                    elem = Operand::Name { name: name.clone(), component: None, negated: false, span: *span };
                    &elem
                }
                (None, Shape::VecDst(m, w) | Shape::VecSrc(m, w)) if m == n => {
                    return self.reg_operand(name, Some(w), false, instr, false);
                }
                (None, _) => {
                    self.diags.push(
                        Diag::error(*span, format!("vector register `{}` cannot be this operand of `{}`", name.name, instr_text(instr)))
                            .label(format!("a vector of {n} elements"))
                            .note("name one element (`v.x`), or use the whole vector as the data of a vector `ld`/`st`/`mov` of as many elements"),
                    );
                    return;
                }
            }
        } else {
            op
        };
        let bad = |what: &str| {
            Diag::error(op.span(), format!("expected {what} as this operand of `{}`", instr_text(instr)))
                .label("wrong kind of operand")
        };
        match (shape, op) {
            (Shape::Dst(w), Operand::Name { name, component: None, negated: false, .. }) => {
                self.reg_operand(name, Some(w), false, instr, false)
            }
            (Shape::Src(w), Operand::Name { name, negated: false, .. }) => {
                self.reg_operand(name, Some(w), false, instr, true)
            }
            (Shape::Src(_), Operand::Imm(_)) => {}
            (Shape::Src(_), Operand::VarPlus { name, .. }) => match self.lookup(&name.name) {
                Some(Resolved::Var(_)) => {}
                None => self.undeclared(name),
                Some(_) => self.diags.push(
                    Diag::error(
                        name.span,
                        format!("`{}` is not a variable: only a variable's address takes `+offset`", name.name),
                    )
                    .label("not a variable")
                    .note("`var+imm` is the address of variable `var` plus `imm` bytes (PTX ISA 6.4.2)"),
                ),
            },
            (Shape::PredDst, Operand::Name { name, component: None, negated: false, .. }) => {
                self.reg_operand(name, None, true, instr, false)
            }
            (Shape::PredDst, Operand::PredPair(a, b, _)) => {
                self.reg_operand(a, None, true, instr, false);
                self.reg_operand(b, None, true, instr, false);
            }
            (Shape::PredSrc, Operand::Name { name, component: None, .. }) => {
                self.reg_operand(name, None, true, instr, false)
            }
            (Shape::PredSrc, Operand::Imm(_)) => {}
            (Shape::VecDst(n, w) | Shape::VecSrc(n, w), Operand::Vector(elems, span)) => {
                if elems.len() as u32 != n {
                    self.diags.push(
                        Diag::error(
                            *span,
                            format!("`{}` needs a vector of {n} elements, found {}", instr_text(instr), elems.len()),
                        )
                        .label("vector length mismatch"),
                    );
                }
                for e in elems {
                    match e {
                        VecElem::Reg(r) => self.reg_operand(r, Some(w), false, instr, false),
                        VecElem::Sink(sp) if matches!(shape, Shape::VecSrc(..)) => self.diags.push(
                            Diag::error(*sp, format!("a sink `_` cannot be a source of `{}`", instr_text(instr)))
                                .label("`_` only discards a destination element")
                                .note("ptxas 11.8: \"Sink '_' not allowed as a source operand\""),
                        ),
                        VecElem::Sink(_) => {}
                        VecElem::Imm(i) if matches!(shape, Shape::VecSrc(..)) => {
                            let _ = i;
                        }
                        VecElem::Imm(i) => self.diags.push(Diag::error(i.span, "an immediate cannot be a destination")),
                    }
                }
            }
            (Shape::Addr, Operand::Address { base, .. }) => {
                if let AddrBase::Name(n) = base {
                    match self.lookup(&n.name) {
                        None => self.undeclared(n),
                        Some(Resolved::Reg(ScalarType::Pred)) => {
                            self.diags.push(Diag::error(n.span, "a predicate cannot be an address"))
                        }
                        Some(Resolved::Reg(ty)) if ty.bits() != 32 && ty.bits() != 64 => self.diags.push(Diag::error(
                            n.span,
                            format!("address register `{}` is {} bits; addresses are 32 or 64 bits", n.name, ty.bits()),
                        )),
                        _ => {}
                    }
                }
            }
            (Shape::Label, Operand::Name { name, component: None, negated: false, .. }) => {
                if !self.label(&name.name) {
                    self.diags.push(
                        Diag::error(
                            name.span,
                            format!("label `{}` is not defined in this block or an enclosing one", name.name),
                        )
                        .label("no label of this name in scope")
                        .note("a label inside a nested `{ }` block is visible only in that block (as in ptxas)"),
                    );
                }
            }
            (Shape::Dst(_) | Shape::PredDst | Shape::VecDst(..), Operand::Imm(_)) => {
                self.diags.push(bad("a register").label("an immediate cannot be a destination"))
            }
            (Shape::VecDst(..) | Shape::VecSrc(..), _) => self.diags.push(bad("a vector `{a, b, ...}`")),
            (Shape::Addr, _) => self.diags.push(bad("an address `[...]`")),
            (Shape::Label, _) => self.diags.push(bad("a label")),
            (Shape::Dst(_) | Shape::PredDst, _) => self.diags.push(bad("a register")),
            (Shape::Src(_) | Shape::PredSrc, _) => self.diags.push(bad("a register or immediate")),
        }
    }

    /// Opens the scope of block `b`: its own labels (not those of nested blocks) are
    /// visible in all of it, also before they are placed; one placed twice is an error.
    fn open(&mut self, b: &Block, mut scope: Scope) {
        for s in &b.stmts {
            if let Statement::Label(l) = s {
                if let Some(first) = scope.labels.get(&l.name) {
                    self.diags.push(
                        Diag::error(l.span, format!("label `{}` is defined twice in the same block", l.name))
                            .label("defined again here")
                            .with_secondary(*first, "first defined here"),
                    );
                } else {
                    scope.labels.insert(l.name.clone(), l.span);
                }
            }
        }
        self.scopes.push(scope);
    }

    /// Checks a function body whose outermost scope is `top` (the parameters). The walk
    /// over nested blocks is iterative: its depth is the input's nesting depth.
    fn check_body(&mut self, body: &Block, top: Scope) {
        self.open(body, top);
        let mut stack = vec![body.stmts.iter()];
        while let Some(it) = stack.last_mut() {
            let Some(s) = it.next() else {
                stack.pop();
                self.scopes.pop();
                continue;
            };
            match s {
                Statement::Decl(ds) => {
                    for d in ds {
                        self.declare(d);
                    }
                }
                Statement::Instr(i) => self.check_instr(i),
                Statement::Block(inner) => {
                    self.open(inner, Scope::default());
                    stack.push(inner.stmts.iter());
                }
                _ => {}
            }
        }
    }
}

/// The index of a vector component letter: `x y z w` or `r g b a` (PTX ISA 5.4.3).
pub fn vector_component(c: char) -> Option<u32> {
    match c {
        'x' | 'r' => Some(0),
        'y' | 'g' => Some(1),
        'z' | 'b' => Some(2),
        'w' | 'a' => Some(3),
        _ => None,
    }
}

/// `opcode.mod.mod` as written, for messages.
pub fn instr_text(i: &Instruction) -> String {
    let mut s = i.opcode.name.clone();
    for m in &i.mods {
        s.push_str(&m.text);
    }
    s
}

/// Checks the whole module; returns every error found.
pub fn check(module: &Module) -> Vec<Diag> {
    let mut diags = vec![];
    let mut module_vars = HashMap::new();
    let mut functions: HashMap<String, Span> = HashMap::new();
    let mut defined: HashMap<&str, Span> = HashMap::new();
    for item in &module.items {
        match item {
            Item::Var(v) => {
                module_vars.insert(v.name.name.clone(), v.space);
            }
            Item::Function(f) => {
                functions.entry(f.name.name.clone()).or_insert(f.name.span);
                if f.body.is_some()
                    && let Some(prev) = defined.insert(&f.name.name, f.name.span)
                {
                    diags.push(
                        Diag::error(f.name.span, format!("function `{}` is defined twice", f.name.name))
                            .label("defined again here")
                            .with_secondary(prev, "first defined here"),
                    );
                }
            }
        }
    }
    // Texture and surface references resolve as `.global` names; `texture::check_refs`
    // checks where they are used.
    for r in &module.refs {
        module_vars.insert(r.name.name.clone(), crate::ptx::types::StateSpace::Global);
    }
    for s in &module.samplers {
        module_vars.insert(s.name.clone(), crate::ptx::types::StateSpace::Global);
    }
    diags.extend(super::texture::check_refs(module));
    diags.extend(super::sampler::check(module));
    for (a, b) in &module.aliases {
        if !functions.contains_key(&b.name) {
            diags.push(
                Diag::error(
                    b.span,
                    format!("`.alias {}, {}`: `{}` is not a function of this module", a.name, b.name, b.name),
                )
                .label("no function of this name"),
            );
        }
        if let Some(first) = functions.insert(a.name.clone(), a.span) {
            diags.push(
                Diag::error(a.span, format!("`{}` is already a function name", a.name))
                    .label("an alias must be a new name")
                    .with_secondary(first, "declared here"),
            );
        }
    }
    if module.address_size != Some(64) {
        diags
            .push(Diag::error(module.version_span, "ptx2sass needs `.address_size 64`").note(
                "SPA 5.0 code uses 64-bit (.E) addresses; 32-bit addressing is not supported by ptxas 12 either",
            ));
    }
    for item in &module.items {
        let Item::Function(f) = item else { continue };
        let Some(body) = &f.body else { continue };
        let mut cx = FnCtx { module_vars: &module_vars, functions: &functions, scopes: vec![], diags: vec![] };
        let mut params = Scope::default();
        for p in f.params.iter().chain(&f.ret_params) {
            if let Some(first) = params.names.get(&p.name.name).filter(|_| p.name.name != "_") {
                cx.diags.push(
                    Diag::error(p.name.span, format!("parameter `{}` is declared twice", p.name.name))
                        .label("declared again here")
                        .with_secondary(first.2, "first declared here"),
                );
            }
            params.names.insert(p.name.name.clone(), (p.ty, p.space, p.name.span));
        }
        cx.check_body(body, params);
        diags.extend(cx.diags);
    }
    diags
}
