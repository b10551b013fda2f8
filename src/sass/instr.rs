//! The SPA 5.0 instruction model shared by every back-end stage: registers, operands and
//! instructions. Before register allocation, operands name virtual registers; after it,
//! physical ones. Each register operand carries its width (1, 2 or 4 consecutive 32-bit
//! registers), so hazard and alignment checks need no side tables.

use super::op::Op;

/// A register: virtual (before allocation) or physical.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reg {
    /// Virtual register number (index into the function's virtual-register table). Used
    /// for both general-purpose and predicate values; the table says which.
    V(u32),
    /// Physical general-purpose register `R0`..`R254`; 255 is `RZ` (reads zero, writes are
    /// discarded).
    R(u8),
    /// Physical predicate `P0`..`P6`; 7 is `PT` (reads true, writes are discarded).
    P(u8),
}

/// `RZ`, the zero register (spa50-LD.txt: "An omitted Ra register is assembled as RZ").
pub const RZ: Reg = Reg::R(255);
/// `PT`, the always-true predicate.
pub const PT: Reg = Reg::P(7);

impl Reg {
    /// True for `RZ`.
    pub fn is_rz(self) -> bool {
        self == RZ
    }
    /// True for `PT`.
    pub fn is_pt(self) -> bool {
        self == PT
    }
}

/// A general-purpose register operand: `n` consecutive 32-bit registers starting at
/// component `comp` of `reg`. Before allocation `reg` is a virtual register that may be
/// wider than the operand (reading the high half of a 64-bit value is `comp = 1, n = 1`);
/// after allocation `comp` is folded into the register number and is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegRef {
    /// The register.
    pub reg: Reg,
    /// First 32-bit component read or written.
    pub comp: u8,
    /// Number of 32-bit registers: 1, 2 (aligned pair) or 4 (aligned quad).
    pub n: u8,
}

impl RegRef {
    /// A whole register of `n` 32-bit components.
    pub fn new(reg: Reg, n: u8) -> RegRef {
        RegRef { reg, comp: 0, n }
    }
    /// The zero register, as a `n`-wide operand (`RZ` for 32 bits).
    pub fn rz(n: u8) -> RegRef {
        RegRef::new(RZ, n)
    }
    /// One 32-bit component `comp` of this operand.
    pub fn part(self, comp: u8) -> RegRef {
        RegRef { reg: self.reg, comp: self.comp + comp, n: 1 }
    }
}

/// Source-operand modifiers (`-R`, `|R|`, `~R`, `R.H1`), each meaningful only for some
/// opcodes (nvdisasm syntax).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SrcMods {
    /// `-x`: arithmetic negation.
    pub neg: bool,
    /// `|x|`: absolute value.
    pub abs: bool,
    /// `~x`: bitwise inversion (LOP).
    pub inv: bool,
    /// `x.H1`: the high 16 bits (XMAD).
    pub h1: bool,
}

/// The value of a source operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SrcKind {
    /// A general-purpose register.
    Reg(RegRef),
    /// A predicate (`P0`, `!P1`, `PT`); negation is [`SrcMods::neg`].
    Pred(Reg),
    /// An immediate: the 32-bit pattern the instruction encodes (ints sign-extended from
    /// their field, floats as f32 bits; f64 immediates keep the upper 32 bits).
    Imm(u32),
    /// A constant-bank operand `c[bank][offset]`, or `c[bank][Ra+offset]` for LDC. `n`
    /// is the width in 32-bit words read (2 for a 64-bit operand of DADD etc.).
    CBuf {
        /// Bank 0..17 (bank 0 holds driver constants and kernel parameters, bank 2
        /// compiler constants, bank 3 user `.const` data).
        bank: u8,
        /// Byte offset (signed for LDC's `Ra+ImmS16`).
        offset: i32,
        /// Index register of LDC.
        index: Option<RegRef>,
        /// Words read.
        n: u8,
    },
    /// A memory address `[Ra+offset]` of LD/ST/LDG/STG/LDS/STS/LDL/STL; `base` is `RZ`
    /// (n = 1) for an absolute address, a pair for `.E` addressing.
    Addr {
        /// Base register.
        base: RegRef,
        /// Byte offset.
        offset: i32,
    },
    /// A branch or SSY/PBK/PRET target: a block of the function.
    Label(u32),
    /// A symbol: entry `id` of the function's symbol table (`ir::Function::symbols`,
    /// `SassFunction::symbols`), a function of the module or an external one. As `part`
    /// says, the call target of `CAL`/`JCAL` (nvdisasm `` `(name) ``) or the low or high
    /// 32 bits of the function's address in a `MOV32I` (`32@lo(name)`, `32@hi(name)`,
    /// relocations `R_CUDA_ABS32_LO_20`/`_HI_20` in ptxas 11.8 `-c` output).
    Sym {
        /// Index into the symbol table.
        id: u32,
        /// Which use of the symbol.
        part: SymPart,
    },
}

/// How an instruction uses a symbol ([`SrcKind::Sym`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymPart {
    /// The call target of `CAL`/`JCAL`.
    Target,
    /// The low 32 bits of the symbol's address.
    Lo,
    /// The high 32 bits of the symbol's address.
    Hi,
}

/// A source operand: value plus modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src {
    /// What is read.
    pub kind: SrcKind,
    /// How it is modified.
    pub mods: SrcMods,
}

impl Src {
    /// A register source without modifiers.
    pub fn reg(r: RegRef) -> Src {
        Src { kind: SrcKind::Reg(r), mods: SrcMods::default() }
    }
    /// A 32-bit virtual or physical register source.
    pub fn r32(r: Reg) -> Src {
        Src::reg(RegRef::new(r, 1))
    }
    /// `RZ`.
    pub fn rz() -> Src {
        Src::reg(RegRef::rz(1))
    }
    /// An immediate.
    pub fn imm(v: u32) -> Src {
        Src { kind: SrcKind::Imm(v), mods: SrcMods::default() }
    }
    /// A predicate source, `!p` when `neg`.
    pub fn pred(p: Reg, neg: bool) -> Src {
        Src { kind: SrcKind::Pred(p), mods: SrcMods { neg, ..SrcMods::default() } }
    }
    /// `PT`.
    pub fn pt() -> Src {
        Src::pred(super::instr::PT, false)
    }
    /// `c[bank][offset]`, `n` words wide.
    pub fn cbuf(bank: u8, offset: i32, n: u8) -> Src {
        Src { kind: SrcKind::CBuf { bank, offset, index: None, n }, mods: SrcMods::default() }
    }
    /// `[base+offset]`.
    pub fn addr(base: RegRef, offset: i32) -> Src {
        Src { kind: SrcKind::Addr { base, offset }, mods: SrcMods::default() }
    }
    /// A block target.
    pub fn label(block: u32) -> Src {
        Src { kind: SrcKind::Label(block), mods: SrcMods::default() }
    }
    /// Symbol `id` used as `part`.
    pub fn sym(id: u32, part: SymPart) -> Src {
        Src { kind: SrcKind::Sym { id, part }, mods: SrcMods::default() }
    }
    /// With `-` applied (toggles).
    pub fn negated(mut self) -> Src {
        self.mods.neg = !self.mods.neg;
        self
    }
    /// With `~` applied.
    pub fn inv(mut self) -> Src {
        self.mods.inv = !self.mods.inv;
        self
    }
    /// With `.H1` applied.
    pub fn h1(mut self) -> Src {
        self.mods.h1 = true;
        self
    }
    /// With `|x|` applied.
    pub fn abs(mut self) -> Src {
        self.mods.abs = true;
        self.mods.neg = false;
        self
    }
    /// The register operand, if this is one.
    pub fn as_reg(&self) -> Option<RegRef> {
        match self.kind {
            SrcKind::Reg(r) => Some(r),
            _ => None,
        }
    }
    /// Every general-purpose register this source reads (a register, an address base,
    /// an LDC index).
    pub fn gprs(&self) -> Option<RegRef> {
        match self.kind {
            SrcKind::Reg(r) => Some(r),
            SrcKind::Addr { base, .. } => Some(base),
            SrcKind::CBuf { index, .. } => index,
            _ => None,
        }
    }
    /// Mutable access to the general-purpose register this source reads, if any.
    pub fn gprs_mut(&mut self) -> Option<&mut RegRef> {
        match &mut self.kind {
            SrcKind::Reg(r) => Some(r),
            SrcKind::Addr { base, .. } => Some(base),
            SrcKind::CBuf { index, .. } => index.as_mut(),
            _ => None,
        }
    }
}

/// A destination operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dst {
    /// A general-purpose register (or `RZ`).
    Reg(RegRef),
    /// A predicate (or `PT`).
    Pred(Reg),
}

impl Dst {
    /// A general-purpose destination of `n` registers.
    pub fn reg(r: Reg, n: u8) -> Dst {
        Dst::Reg(RegRef::new(r, n))
    }
    /// The register written, general-purpose or predicate.
    pub fn reg_of(&self) -> Reg {
        match self {
            Dst::Reg(r) => r.reg,
            Dst::Pred(p) => *p,
        }
    }
}

/// A guard predicate `@P0` / `@!P0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The predicate register.
    pub pred: Reg,
    /// `@!P`.
    pub neg: bool,
}

/// The condition-code values an instruction defines and reads in the IR
/// ([`crate::ir::cc`]): numbers of the function's CC values, `def` for a `.CC` form (it
/// writes the carry flag), `read` for an `.X` form or `ISETP.X` (it reads it). The op's
/// modifiers say what the hardware does; these say which value flows where, so that
/// passes see every CC writer's readers. Both are `None` outside the IR (listings read
/// back, the encoder).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CcLink {
    /// The CC value this instruction writes.
    pub def: Option<u32>,
    /// The CC value this instruction reads.
    pub read: Option<u32>,
}

/// One instruction: optional guard, opcode with typed modifiers, destinations and sources
/// in nvdisasm operand order (destinations first).
///
/// Equality ignores [`Instr::origin`]: provenance is not part of what the instruction does.
#[derive(Clone, Debug)]
pub struct Instr {
    /// Guard predicate.
    pub guard: Option<Guard>,
    /// Opcode and modifiers.
    pub op: Op,
    /// Destinations.
    pub dsts: Vec<Dst>,
    /// Sources.
    pub srcs: Vec<Src>,
    /// The CC values it writes and reads (IR only).
    pub cc: CcLink,
    /// Provenance: the byte offset in the PTX source of the statement this instruction
    /// implements, or `None` (listings read back, code the compiler adds on its own such as
    /// the final self-branch). In the IR the same fact lives in `ir::Block::origins`;
    /// [`crate::sched::schedule`] copies it here, and `sass::source_map` maps it
    /// to PTX lines and `.loc` source lines.
    pub origin: Option<u32>,
}

impl PartialEq for Instr {
    fn eq(&self, o: &Instr) -> bool {
        self.guard == o.guard && self.op == o.op && self.dsts == o.dsts && self.srcs == o.srcs && self.cc == o.cc
    }
}

impl Instr {
    /// An unguarded instruction (no provenance).
    pub fn new(op: Op, dsts: Vec<Dst>, srcs: Vec<Src>) -> Instr {
        Instr { guard: None, op, dsts, srcs, cc: CcLink::default(), origin: None }
    }

    /// With provenance `origin` (a PTX byte offset, see [`Instr::origin`]).
    pub fn from_origin(mut self, origin: Option<u32>) -> Instr {
        self.origin = origin;
        self
    }

    /// With a guard predicate.
    pub fn guarded(mut self, pred: Reg, neg: bool) -> Instr {
        self.guard = Some(Guard { pred, neg });
        self
    }
}
