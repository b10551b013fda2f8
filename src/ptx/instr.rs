//! Typed meaning of PTX instructions: what the opcode and its modifier words say, after
//! [`crate::ptx::classify`] has checked them. Modifier order is free (as ptxas accepts), but
//! every modifier lands in exactly one field, so duplicates and conflicts are caught.

use super::types::{ScalarType, StateSpace};

/// Memory-consistency qualifier of `ld`/`st` (PTX ISA 9.7.9.8 ld, 9.7.9.10 st; 8 "Memory
/// Consistency Model").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemSem {
    /// `.weak` (the default when nothing is written).
    Weak,
    /// `.volatile`.
    Volatile,
    /// `.relaxed` (needs a scope).
    Relaxed,
    /// `.acquire` (ld only; needs a scope).
    Acquire,
    /// `.release` (st only; needs a scope).
    Release,
}

/// Thread scope (PTX ISA 8.5 "Scope").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `.cta`.
    Cta,
    /// `.cluster` (no clusters on SPA 5.0).
    Cluster,
    /// `.gpu`.
    Gpu,
    /// `.sys`.
    Sys,
}

/// Cache operator (PTX ISA 9.7.9.1 "Cache Operators").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheOp {
    /// `.ca`: cache at all levels (ld default).
    Ca,
    /// `.cg`: cache at global level (L2).
    Cg,
    /// `.cs`: streaming.
    Cs,
    /// `.lu`: last use (ld).
    Lu,
    /// `.cv`: volatile, fetch again (ld).
    Cv,
    /// `.wb`: write-back (st default).
    Wb,
    /// `.wt`: write-through (st).
    Wt,
}

/// L1 eviction priority (PTX ISA 9.7.9.8, `.level1::eviction_priority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum L1Evict {
    /// `.L1::evict_normal`.
    Normal,
    /// `.L1::evict_unchanged`.
    Unchanged,
    /// `.L1::evict_first`.
    First,
    /// `.L1::evict_last`.
    Last,
    /// `.L1::no_allocate`.
    NoAllocate,
}

/// L2 eviction priority (`.level2::eviction_priority`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum L2Evict {
    /// `.L2::evict_normal`.
    Normal,
    /// `.L2::evict_first`.
    First,
    /// `.L2::evict_last`.
    Last,
}

/// L2 prefetch size (`.level::prefetch_size`): `.L2::64B`, `.L2::128B`, `.L2::256B`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PrefetchSize {
    /// 64 bytes.
    B64,
    /// 128 bytes.
    B128,
    /// 256 bytes.
    B256,
}

/// Every qualifier of an `ld` or `st` (PTX ISA 9.7.9.8 ld, 9.7.9.10 st).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LdSt {
    /// State space; `None` is generic addressing.
    pub space: Option<StateSpace>,
    /// `.weak/.volatile/.relaxed/.acquire/.release`, if written.
    pub sem: Option<MemSem>,
    /// `.cta/.cluster/.gpu/.sys`, if written.
    pub scope: Option<Scope>,
    /// `.mmio` (with `.relaxed.sys`).
    pub mmio: bool,
    /// Cache operator, if written.
    pub cop: Option<CacheOp>,
    /// `.nc` (`ld.global.nc`: non-coherent, read-only data).
    pub nc: bool,
    /// L1 eviction priority.
    pub l1_evict: Option<L1Evict>,
    /// L2 eviction priority.
    pub l2_evict: Option<L2Evict>,
    /// `.L2::cache_hint` (then a 64-bit cache-policy operand follows the address).
    pub cache_hint: bool,
    /// `.L2::64B/128B/256B`.
    pub prefetch: Option<PrefetchSize>,
    /// `.v2/.v4/.v8` element count; `None` for a scalar.
    pub vec: Option<u32>,
    /// Element type.
    pub ty: ScalarType,
}

impl LdSt {
    /// Bytes accessed: element size times vector length.
    pub fn access_bytes(&self) -> u32 {
        // At most 8 bytes times 4 elements (the grammar's vector lengths).
        self.ty.bytes().saturating_mul(self.vec.unwrap_or(1))
    }
}

/// Integer multiply mode (PTX ISA 9.7.1.5 mul): `.lo`, `.hi`, `.wide`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntMode {
    /// Low half of the product.
    Lo,
    /// High half of the product.
    Hi,
    /// Full product, twice the width.
    Wide,
}

/// Rounding modifier (PTX ISA 9.7.3 float rounding; 9.7.9.21 cvt integer rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Rounding {
    Rn,
    Rna,
    Rz,
    Rm,
    Rp,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

/// The arithmetic and logic opcodes handled by [`Arith`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Mad,
    Fma,
    Div,
    Rem,
    Min,
    Max,
    Neg,
    Abs,
    Not,
    Cnot,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    /// `addc{.cc}` (PTX ISA 9.7.2.2): add with carry-in.
    Addc,
    /// `subc{.cc}` (PTX ISA 9.7.2.4): subtract with borrow-in.
    Subc,
    /// `madc{.lo,.hi}{.cc}` (PTX ISA 9.7.2.6): multiply-add with carry-in.
    Madc,
    /// `mul24{.lo,.hi}` (PTX ISA 9.7.1.12).
    Mul24,
    /// `mad24{.lo,.hi}` (PTX ISA 9.7.1.13).
    Mad24,
    /// `sad` (PTX ISA 9.7.1.9): `c + |a - b|`.
    Sad,
}

impl ArithOp {
    /// True for the operations that read the carry flag `CC.CF` (`addc subc madc`).
    pub fn carry_in(self) -> bool {
        matches!(self, ArithOp::Addc | ArithOp::Subc | ArithOp::Madc)
    }
}

/// Integer bit-manipulation opcodes (PTX ISA 9.7.1.15-9.7.1.20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// `popc.b32/.b64`: number of one bits (a `.u32` result).
    Popc,
    /// `clz.b32/.b64`: leading zeros (a `.u32` result).
    Clz,
    /// `brev.b32/.b64`: bit reversal.
    Brev,
    /// `bfind{.shiftamt}.u32/.s32/.u64/.s64`: most significant non-sign bit (a `.u32`).
    Bfind {
        /// `.shiftamt`: the left shift that moves that bit to the msb.
        shiftamt: bool,
    },
    /// `bfe.u32/.s32/.u64/.s64 d, a, pos, len`: bit-field extract.
    Bfe,
    /// `bfi.b32/.b64 f, a, b, pos, len`: bit-field insert.
    Bfi,
}

/// The modes of `prmt.b32{.mode}` (PTX ISA 9.7.8.7); `None` in [`InstrKind::Prmt`] is the
/// generic form with four 4-bit selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum PrmtMode {
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

/// What `testp.op` tests (PTX ISA 9.7.3.7; zero counts as normal).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TestpOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// An arithmetic or logic instruction (PTX ISA 9.7.1-9.7.4, 9.7.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arith {
    /// Which operation.
    pub op: ArithOp,
    /// Instruction type.
    pub ty: ScalarType,
    /// `.lo/.hi/.wide` for integer `mul`/`mad` (`.lo/.hi` for `madc`, `mul24`, `mad24`).
    pub mode: Option<IntMode>,
    /// Rounding for floats.
    pub rnd: Option<Rounding>,
    /// `.ftz`.
    pub ftz: bool,
    /// `.sat`.
    pub sat: bool,
    /// `.cc` (carry out: `add.cc`, `sub.cc`, `mad.cc`, `addc.cc`, `subc.cc`, `madc.cc`).
    pub cc: bool,
    /// `.approx` / `.full` (float `div`).
    pub approx: bool,
}

/// Comparison of `setp` (PTX ISA 9.7.8.6 "Comparison and Selection" tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

impl CmpOp {
    /// The comparison a `setp`/`set` modifier word names (`".lt"` → `Lt`), or `None` for
    /// any other word (PTX ISA 9.7.8.6 comparison tables).
    pub fn from_modifier(s: &str) -> Option<CmpOp> {
        use CmpOp::*;
        Some(match s {
            ".eq" => Eq,
            ".ne" => Ne,
            ".lt" => Lt,
            ".le" => Le,
            ".gt" => Gt,
            ".ge" => Ge,
            ".lo" => Lo,
            ".ls" => Ls,
            ".hi" => Hi,
            ".hs" => Hs,
            ".equ" => Equ,
            ".neu" => Neu,
            ".ltu" => Ltu,
            ".leu" => Leu,
            ".gtu" => Gtu,
            ".geu" => Geu,
            ".num" => Num,
            ".nan" => Nan,
            _ => return None,
        })
    }
}

/// Boolean combination of `setp` with a third predicate operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// `setp.CmpOp{.BoolOp}{.ftz}.type` (PTX ISA 9.7.8.6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Setp {
    /// Comparison.
    pub cmp: CmpOp,
    /// Combination with the `c` operand.
    pub bool_op: Option<BoolOp>,
    /// `.ftz`.
    pub ftz: bool,
    /// Operand type.
    pub ty: ScalarType,
}

/// `cvt{.rnd}{.ftz}{.sat}.dtype.atype` (PTX ISA 9.7.9.21).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cvt {
    /// Destination type.
    pub dst: ScalarType,
    /// Source type.
    pub src: ScalarType,
    /// Rounding.
    pub rnd: Option<Rounding>,
    /// `.ftz`.
    pub ftz: bool,
    /// `.sat`.
    pub sat: bool,
}

/// `cvta{.to}.space.size` (PTX ISA 9.7.9.19).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cvta {
    /// `.to`: generic to `space`; otherwise `space` to generic.
    pub to: bool,
    /// The specific space.
    pub space: StateSpace,
    /// `.u32` or `.u64`.
    pub ty: ScalarType,
}

/// What a `bar`/`barrier` instruction does (PTX ISA 9.7.13.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarOp {
    /// `bar.sync` / `barrier.sync`: wait for all threads.
    Sync,
    /// `bar.arrive`: signal without waiting.
    Arrive,
    /// `bar.red.op`: reduction (not lowered yet).
    Red,
    /// `bar.warp.sync membermask` (PTX ISA 9.7.13.1, PTX ISA 6.0): the threads of
    /// `membermask` in the warp wait for each other.
    WarpSync,
}

/// Barrier scope of `membar` (PTX ISA 9.7.13.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MembarLevel {
    /// `.cta`.
    Cta,
    /// `.gl`.
    Gl,
    /// `.sys`.
    Sys,
}

/// The typed meaning of an instruction.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum InstrKind {
    /// Not classified (classification failed; an error was reported).
    #[default]
    Unclassified,
    /// `ld`.
    Ld(LdSt),
    /// `st`.
    St(LdSt),
    /// `mov.type`.
    Mov(ScalarType),
    /// `cvta`.
    Cvta(Cvta),
    /// `cvt`.
    Cvt(Cvt),
    /// Arithmetic and logic.
    Arith(Arith),
    /// `setp`.
    Setp(Setp),
    /// `selp.type`.
    Selp(ScalarType),
    /// `bra{.uni}`.
    Bra {
        /// `.uni`: the branch is known non-divergent.
        uni: bool,
    },
    /// `ret{.uni}`.
    Ret,
    /// `exit`.
    Exit,
    /// `bar`/`barrier`.
    Bar(BarOp),
    /// `membar.level`.
    Membar(MembarLevel),
    /// `call{.uni}`.
    Call,
    /// `popc clz brev bfind bfe bfi` of an integer type.
    Bit {
        /// Which operation.
        op: BitOp,
        /// Instruction type (of the operand `a`).
        ty: ScalarType,
    },
    /// `prmt.b32{.mode}`.
    Prmt(Option<PrmtMode>),
    /// `shf.{l,r}.{wrap,clamp}.b32` (PTX ISA 9.7.7.9).
    Shf {
        /// `.l` (true) or `.r`.
        left: bool,
        /// `.clamp` (true) or `.wrap`.
        clamp: bool,
    },
    /// `testp.op.f32/.f64`.
    Testp {
        /// What is tested.
        op: TestpOp,
        /// `.f32` or `.f64`.
        ty: ScalarType,
    },
    /// `copysign.f32/.f64` (PTX ISA 9.7.3.16).
    Copysign(ScalarType),
    /// A PTX opcode that ptx2sass recognises but does not model yet (lowering rejects it
    /// with a diagnostic naming it).
    Other(String),
}
