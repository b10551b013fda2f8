//! PTX syntax tree (PTX ISA chapters 4-7 and 11), with a source span on every node.
//!
//! The grammar builds this tree with instructions in raw form (opcode, modifier words,
//! operands); [`crate::ptx::classify`] then fills [`Instruction::kind`] with the typed
//! meaning of the modifiers. Nothing here is resolved yet: names in operands may denote
//! registers, variables, labels or functions until [`crate::ptx::check`] has run.

use super::instr::InstrKind;
use super::types::{ScalarType, StateSpace};

/// A byte range `lo..hi` in the source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub struct Span {
    /// First byte.
    pub lo: u32,
    /// One past the last byte.
    pub hi: u32,
}

impl Span {
    /// The span `lo..hi` (byte offsets).
    pub fn new(lo: usize, hi: usize) -> Span {
        Span { lo: lo as u32, hi: hi as u32 }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }

    /// As a `Range<usize>` for diagnostics.
    pub fn range(self) -> std::ops::Range<usize> {
        self.lo as usize..self.hi as usize
    }
}

/// A name with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    /// The identifier text, e.g. `%r1`, `vecadd`, `$L__BB0_2`.
    pub name: String,
    /// Its span.
    pub span: Span,
}

/// A whole PTX module (PTX ISA 11.1 "PTX Module Directives").
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// `.version major.minor`.
    pub version: (u32, u32),
    /// Span of the `.version` directive.
    pub version_span: Span,
    /// `.target` words, e.g. `["sm_50"]`.
    pub target: Vec<String>,
    /// Span of the `.target` directive.
    pub target_span: Span,
    /// `.address_size` (32 or 64) if given (PTX ISA 11.1.3; absent means 32).
    pub address_size: Option<u32>,
    /// Functions and module-scope variables, in source order.
    pub items: Vec<Item>,
    /// `.alias a, b;`: function `a` is another name of function `b` (PTX ISA "Linking Directives").
    pub aliases: Vec<(Ident, Ident)>,
    /// `.global .texref`/`.surfref` declarations, in source order (unified texturing mode).
    pub refs: Vec<TexRef>,
    /// `.global .samplerref` declarations, in source order (independent texturing mode,
    /// `.target ..., texmode_independent`): the sampler operand of `tex`/`tld4` `[t, s,
    /// {c}]`. Their initializers are not kept (docs/textures.md §1.14).
    pub samplers: Vec<Ident>,
}

/// A texture or surface reference `.global .texref NAME;` / `.global .surfref NAME;` (PTX
/// ISA 5.3; unified mode): the texture operand of `tex`, `tld4`, `txq` (texref) or `suld`,
/// `sust`, `suq` (surfref), bound by the driver. ptxas gives each kernel using it a word
/// of constant bank 0 after the parameters (docs/textures.md §1.1).
#[derive(Clone, Debug, PartialEq)]
pub struct TexRef {
    /// The reference's name.
    pub name: Ident,
    /// `.surfref` rather than `.texref`.
    pub surface: bool,
}

impl Module {
    /// The function a call naming `name` reaches: `name` itself, or the target of an
    /// `.alias` (aliases of aliases are followed, at most as many as there are).
    pub fn resolve_alias<'a>(&'a self, name: &'a str) -> &'a str {
        let mut n = name;
        for _ in 0..=self.aliases.len() {
            match self.aliases.iter().find(|(a, _)| a.name == n) {
                Some((_, b)) => n = &b.name,
                None => return n,
            }
        }
        n
    }
}

/// A module-scope item.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A kernel or device function, declaration or definition.
    Function(Function),
    /// A module-scope variable (`.global`, `.const`, `.shared`, ...).
    Var(VarDecl),
}

/// Linkage directive (PTX ISA 11.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Linkage {
    /// No linkage directive: visible in this module only.
    #[default]
    Internal,
    /// `.visible`.
    Visible,
    /// `.extern`.
    Extern,
    /// `.weak`.
    Weak,
    /// `.common`.
    Common,
}

/// Whether a function is a kernel or a device function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FuncKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

/// A performance-tuning directive (PTX ISA 11.4).
#[derive(Clone, Debug, PartialEq)]
pub enum Tuning {
    /// `.maxntid nx{, ny{, nz}}`.
    Maxntid(Vec<u32>),
    /// `.reqntid nx{, ny{, nz}}`.
    Reqntid(Vec<u32>),
    /// `.minnctapersm n`.
    Minnctapersm(u32),
    /// `.maxnctapersm n` (deprecated spelling).
    Maxnctapersm(u32),
    /// `.maxnreg n`.
    Maxnreg(u32),
    /// `.noreturn`.
    Noreturn,
    /// `.pragma "..."` before the body.
    Pragma(Vec<String>),
}

/// A kernel or device function (PTX ISA 11.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Linkage.
    pub linkage: Linkage,
    /// `.entry` or `.func`.
    pub kind: FuncKind,
    /// Function name.
    pub name: Ident,
    /// Return parameters of a `.func` (`.func (.param .b32 r) f(...)`).
    pub ret_params: Vec<ParamDecl>,
    /// Parameters, in order.
    pub params: Vec<ParamDecl>,
    /// Tuning directives between the parameter list and the body.
    pub tuning: Vec<Tuning>,
    /// The body; `None` for a prototype (`... ;`).
    pub body: Option<Block>,
    /// The whole function.
    pub span: Span,
}

/// Pointer attributes of a kernel parameter (`.ptr .global .align 16`, PTX ISA 5.1.6.1).
#[derive(Clone, Debug, PartialEq)]
pub struct PtrAttr {
    /// The pointed-to state space, if given.
    pub space: Option<StateSpace>,
    /// The pointed-to alignment in bytes, if given.
    pub align: Option<u32>,
}

/// One parameter of a function (PTX ISA 5.1.6).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    /// `.param` or `.reg`.
    pub space: StateSpace,
    /// `.align N` (bytes).
    pub align: Option<u32>,
    /// The element type.
    pub ty: ScalarType,
    /// `.ptr` attributes.
    pub ptr: Option<PtrAttr>,
    /// Name.
    pub name: Ident,
    /// Array element count (`.b8 p[16]`), `None` for a scalar or an unsized array.
    pub array: Option<u32>,
    /// `.b8 p[]`: an array of unspecified size (a device function's variadic arguments,
    /// PTX ISA 11.3 `.func` parameters); it takes the caller's argument whole.
    pub unsized_array: bool,
    /// The whole declaration.
    pub span: Span,
}

impl ParamDecl {
    /// Size in bytes: element size times the array length (0 for an unsized array).
    pub fn size(&self) -> u32 {
        if self.unsized_array {
            return 0;
        }
        self.ty.bytes().max(1).saturating_mul(self.array.unwrap_or(1))
    }

    /// Alignment in bytes: `.align` if given, else the element size.
    pub fn alignment(&self) -> u32 {
        self.align.unwrap_or(self.ty.bytes().max(1))
    }
}

/// A variable declaration (PTX ISA 5.4): registers (`.reg .b32 %r<5>`), module or function
/// scope variables (`.global .align 4 .b8 a[16] = {...}`), local `.param` blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// Linkage (module scope only).
    pub linkage: Linkage,
    /// State space.
    pub space: StateSpace,
    /// `.align N` (bytes).
    pub align: Option<u32>,
    /// `.v2` / `.v4` element vector width.
    pub vec: Option<u32>,
    /// Element type.
    pub ty: ScalarType,
    /// Name (for a range `%r<N>`, the prefix `%r`).
    pub name: Ident,
    /// `%r<N>`: declares `%r0` .. `%r{N-1}`.
    pub range: Option<u32>,
    /// Array dimensions; `None` for `[]` (size from the initializer or extern).
    pub dims: Vec<Option<u64>>,
    /// Initializer.
    pub init: Option<Init>,
    /// `.attribute(.managed)` words (PTX ISA "Variable and Function Attribute Directive").
    pub attributes: Vec<String>,
    /// The whole declarator.
    pub span: Span,
}

impl VarDecl {
    /// Number of elements (product of dimensions, 1 for a scalar, 0 for an unsized array).
    /// Saturates at `u64::MAX` (`ptx::limits` rejects sizes beyond the state space's).
    pub fn elements(&self) -> u64 {
        self.dims.iter().map(|d| d.unwrap_or(0)).fold(u64::from(self.vec.unwrap_or(1)), |acc, d| acc.saturating_mul(d))
    }

    /// Size in bytes (saturating, like [`Self::elements`]).
    pub fn size(&self) -> u64 {
        self.elements().saturating_mul(u64::from(self.ty.bytes()))
    }

    /// Alignment in bytes: `.align` if given, else the element size.
    pub fn alignment(&self) -> u32 {
        self.align.unwrap_or(self.ty.bytes().saturating_mul(self.vec.unwrap_or(1)).max(1))
    }
}

/// An initializer (PTX ISA 5.4.4).
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// A single constant.
    Scalar(InitValue),
    /// `{ a, b, ... }`, possibly nested.
    List(Vec<Init>, Span),
}

/// A constant in an initializer.
#[derive(Clone, Debug, PartialEq)]
pub enum InitValue {
    /// An integer or float literal.
    Imm(Immediate),
    /// The address of a variable or function, `name`, `name+off` or `generic(name)+off`.
    Addr {
        /// The symbol.
        name: Ident,
        /// Whether written as `generic(name)`.
        generic: bool,
        /// Byte offset added.
        offset: i64,
    },
}

/// A `{ ... }` block of statements (function body or nested scope).
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Statements in order.
    pub stmts: Vec<Statement>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A statement inside a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// `name:`.
    Label(Ident),
    /// One declaration statement, possibly declaring several names.
    Decl(Vec<VarDecl>),
    /// An instruction.
    Instr(Instruction),
    /// A nested `{ ... }` scope.
    Block(Block),
    /// `.pragma "..."`.
    Pragma(Vec<String>, Span),
    /// `label: .callprototype (rets) _ (params);`: the signature of indirect calls that
    /// name `label` (PTX ISA 11.3.3); the label is the [`Statement::Label`] before it.
    CallPrototype(CallPrototype),
    /// A statement the parser skipped after a syntax error (already reported).
    Error(Span),
}

/// A `.callprototype` directive's signature (PTX ISA 11.3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct CallPrototype {
    /// Return parameters (names are `_` or ignored).
    pub ret_params: Vec<ParamDecl>,
    /// Parameters.
    pub params: Vec<ParamDecl>,
    /// The whole directive.
    pub span: Span,
}

/// A guard predicate `@%p` / `@!%p` (PTX ISA 9.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    /// `@!`.
    pub negated: bool,
    /// The predicate register.
    pub reg: Ident,
    /// From `@` to the register's end.
    pub span: Span,
}

/// A modifier word of an instruction, e.g. `.global` in `ld.global.f32`.
#[derive(Clone, Debug, PartialEq)]
pub struct Modifier {
    /// The word with its dot.
    pub text: String,
    /// Its span.
    pub span: Span,
}

/// An instruction statement (PTX ISA 4.3.1): `{@{!}p} opcode{.mod}* operands ;`.
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    /// Guard predicate.
    pub guard: Option<Guard>,
    /// The opcode word (`ld`).
    pub opcode: Ident,
    /// Modifier words in source order.
    pub mods: Vec<Modifier>,
    /// Operands in source order.
    pub operands: Vec<Operand>,
    /// Typed meaning of opcode and modifiers, filled by [`crate::ptx::classify`].
    pub kind: InstrKind,
    /// The whole instruction, guard to `;`.
    pub span: Span,
}

/// An integer or float literal (PTX ISA 4.5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImmValue {
    /// An integer, as 64-bit two's-complement bits.
    Int(i64),
    /// `0fXXXXXXXX`: f32 bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX` or a decimal float: f64 bits.
    F64(u64),
}

/// A literal with its span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Immediate {
    /// The value.
    pub value: ImmValue,
    /// Its span.
    pub span: Span,
}

/// The base of an address operand.
#[derive(Clone, Debug, PartialEq)]
pub enum AddrBase {
    /// A register or a variable name (resolved by the checks).
    Name(Ident),
    /// An absolute address `[imm]`.
    Imm(i64),
}

/// An element of a vector operand `{a, b, _, d}`.
#[derive(Clone, Debug, PartialEq)]
pub enum VecElem {
    /// A register.
    Reg(Ident),
    /// The sink `_`.
    Sink(Span),
    /// An immediate (allowed in `st` vectors and `mov` packing).
    Imm(Immediate),
}

/// An instruction operand (PTX ISA 6 "Instruction Operands").
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A name: register, special register (`%tid` with component `.x`), variable, label or
    /// function. `negated` is `!%p` (predicate operands only).
    Name {
        /// The name.
        name: Ident,
        /// Vector component or special-register field, e.g. `x` of `%tid.x`.
        component: Option<char>,
        /// Written with a leading `!`.
        negated: bool,
        /// The whole operand.
        span: Span,
    },
    /// A literal, possibly written with a leading `-`.
    Imm(Immediate),
    /// `{a, b, ...}`.
    Vector(Vec<VecElem>, Span),
    /// `[base]`, `[base+imm]`, `[base+-imm]`, `[imm]`, optionally followed by `.unified`.
    Address {
        /// The base.
        base: AddrBase,
        /// Byte offset.
        offset: i64,
        /// `.unified` after the bracket.
        unified: bool,
        /// The whole operand.
        span: Span,
    },
    /// `(a, b)`: a call's parameter or return list.
    List(Vec<Operand>, Span),
    /// `var+imm`: the address of a variable plus a byte offset (PTX ISA 6.4.2).
    VarPlus {
        /// The variable.
        name: Ident,
        /// Byte offset.
        offset: i64,
        /// The whole operand.
        span: Span,
    },
    /// `%p|%q`: the two destinations of `setp`.
    PredPair(Ident, Ident, Span),
    /// `[a, b]` or `[a, s, b]`: the texture or surface (`a`, a `.u64` handle or a
    /// `.texref`/`.surfref` name), the sampler `s` (independent mode) and the coordinates `b`
    /// of `tex`, `tld4`, `suld`, `sust` and `sured` (PTX ISA 9.7.9.3, 9.7.10).
    Texture {
        /// The texture or surface.
        image: Ident,
        /// What follows it: `[sampler,] coordinates`.
        parts: Vec<Operand>,
        /// The whole operand.
        span: Span,
    },
}

impl Operand {
    /// The operand's span.
    pub fn span(&self) -> Span {
        match self {
            Operand::Name { span, .. }
            | Operand::VarPlus { span, .. }
            | Operand::Vector(_, span)
            | Operand::Address { span, .. }
            | Operand::List(_, span)
            | Operand::PredPair(_, _, span)
            | Operand::Texture { span, .. } => *span,
            Operand::Imm(i) => i.span,
        }
    }
}
