//! Modifiers of the SPA 5.0 atomic and warp-level opcodes (ATOM, ATOMS, RED, SHFL, VOTE)
//! and how nvdisasm spells them. Every spelling here was observed in `cuobjdump -sass`
//! of ptxas 11.8 `-arch=sm_50` output:
//!
//! * `atom.global.add.u32` → `ATOM.E.ADD`, `.min.s32` → `ATOM.E.MIN.S32`, `.max.u32` →
//!   `ATOM.E.MAX`, `.inc/.dec/.and/.exch` → `ATOM.E.INC` ..., `.cas.b32` →
//!   `ATOM.E.CAS Rd, [Ra], Rb, Rb+1`, `.add.f32` → `ATOM.E.ADD.F32.FTZ.RN`, `.add.u64` →
//!   `ATOM.E.ADD.U64`, `.exch/.and.b64` → `ATOM.E.EXCH.U64`/`ATOM.E.AND.U64`,
//!   `.min.s64` → `ATOM.E.MIN.S64`, `.cas.b64` → `ATOM.E.CAS.64 Rd, [Ra], Rb, Rb+2`;
//! * `atom.shared.*` → `ATOMS.ADD`, `ATOMS.MIN.S32`, `ATOMS.EXCH`, `ATOMS.INC`,
//!   `ATOMS.CAS`, `ATOMS.CAS.64` (ATOMS has no f32 add and no 64-bit arithmetic: ptxas
//!   loops on `ATOMS.CAS`/`ATOMS.CAS.64`);
//! * `red.global.*` → `RED.E.ADD [Ra], Rb`, `RED.E.MAX.S32`, `RED.E.INC`,
//!   `RED.E.ADD.F32.FTZ.RN`, `RED.E.ADD.U64`; `red.shared.add` → `ATOMS.ADD RZ, [Ra], Rb`;
//! * `shfl.{up,down,bfly,idx}.b32` → `SHFL.UP/DOWN/BFLY/IDX Pd, Rd, Ra, Sb, Sc` (`PT` when
//!   the predicate output is unused);
//! * `vote.all/.any/.uni.pred` → `VOTE.ALL/ANY/EQ Pd, Pa`; `vote.ballot.b32` → `VOTE.ANY
//!   Rd, PT, Pa`; `activemask.b32` → `VOTE.ANY Rd, PT, PT`.

/// The operation of ATOM/ATOMS/RED.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AtomOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
    Exch,
    /// Compare and swap: the data operand is a pair (quad for 64 bits) `{compare, new}`.
    Cas,
}

impl AtomOp {
    /// nvdisasm suffix, e.g. `.ADD`.
    pub fn suffix(self) -> &'static str {
        match self {
            AtomOp::Add => ".ADD",
            AtomOp::Min => ".MIN",
            AtomOp::Max => ".MAX",
            AtomOp::Inc => ".INC",
            AtomOp::Dec => ".DEC",
            AtomOp::And => ".AND",
            AtomOp::Or => ".OR",
            AtomOp::Xor => ".XOR",
            AtomOp::Exch => ".EXCH",
            AtomOp::Cas => ".CAS",
        }
    }
}

/// The operand type of ATOM/ATOMS/RED.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomType {
    /// 32-bit unsigned / untyped (not printed).
    U32,
    /// `.S32` (signed min/max).
    S32,
    /// `.U64` (64-bit add, unsigned min/max, bitwise, exchange; `.64` for CAS).
    U64,
    /// `.S64` (signed 64-bit min/max).
    S64,
    /// `.F32.FTZ.RN` (float add: denormals flushed, round to nearest).
    F32,
}

impl AtomType {
    /// 32-bit registers of one data value (1 or 2).
    pub fn regs(self) -> u8 {
        if matches!(self, AtomType::U64 | AtomType::S64) { 2 } else { 1 }
    }
}

/// ATOM/ATOMS/RED modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AtomMods {
    /// The operation.
    pub op: AtomOp,
    /// The data type.
    pub ty: AtomType,
    /// `.E`: 64-bit address (ATOM/RED; ATOMS addresses are 32-bit shared offsets).
    pub e: bool,
}

impl AtomMods {
    /// The modifier text after the mnemonic, e.g. `.E.ADD.F32.FTZ.RN`, `.CAS.64`.
    pub fn suffix(self) -> String {
        let mut s = String::new();
        if self.e {
            s.push_str(".E");
        }
        s.push_str(self.op.suffix());
        s.push_str(match (self.op, self.ty) {
            (_, AtomType::U32) => "",
            (_, AtomType::S32) => ".S32",
            (AtomOp::Cas, AtomType::U64 | AtomType::S64) => ".64",
            (_, AtomType::U64) => ".U64",
            (_, AtomType::S64) => ".S64",
            (_, AtomType::F32) => ".F32.FTZ.RN",
        });
        s
    }
}

/// SHFL mode (PTX `shfl.up/.down/.bfly/.idx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ShflMode {
    Idx,
    Up,
    Down,
    Bfly,
}

impl ShflMode {
    /// nvdisasm suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            ShflMode::Idx => ".IDX",
            ShflMode::Up => ".UP",
            ShflMode::Down => ".DOWN",
            ShflMode::Bfly => ".BFLY",
        }
    }
}

/// VOTE mode: `.ALL`, `.ANY` (also the ballot into `Rd`), `.EQ` (PTX `vote.uni`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum VoteMode {
    All,
    Any,
    Eq,
}

impl VoteMode {
    /// nvdisasm suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            VoteMode::All => ".ALL",
            VoteMode::Any => ".ANY",
            VoteMode::Eq => ".EQ",
        }
    }
}

/// BAR.RED reduction (PTX `bar.red.popc.u32` / `.and.pred` / `.or.pred`; ptxas 11.8:
/// `BAR.RED.POPC 0x0, P4; MEMBAR.CTA; B2R.RESULT R9` and `BAR.RED.AND 0x1, P4;
/// MEMBAR.CTA; B2R.RESULT RZ, P2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BarRedOp {
    Popc,
    And,
    Or,
}

impl BarRedOp {
    /// nvdisasm suffix.
    pub fn suffix(self) -> &'static str {
        match self {
            BarRedOp::Popc => ".POPC",
            BarRedOp::And => ".AND",
            BarRedOp::Or => ".OR",
        }
    }
}
