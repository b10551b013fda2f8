//! Typed modifiers of SPA 5.0 instructions (memory size and cache operator, rounding,
//! comparisons, logic and XMAD modes, MUFU functions, conversion types, special
//! registers, MEMBAR levels) and how nvdisasm spells them. Re-exported by [`super::op`].

/// Memory access size (spa50-LD.txt `.sz`; spa50-ST.txt `.sz`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MemSize {
    U8,
    S8,
    U16,
    S16,
    B32,
    B64,
    B128,
    /// `.U.128`: 128-bit load hinted warp-uniform (spa50-LD.txt).
    U128,
}

impl MemSize {
    /// Bytes accessed.
    pub fn bytes(self) -> u32 {
        match self {
            MemSize::U8 | MemSize::S8 => 1,
            MemSize::U16 | MemSize::S16 => 2,
            MemSize::B32 => 4,
            MemSize::B64 => 8,
            MemSize::B128 | MemSize::U128 => 16,
        }
    }

    /// 32-bit registers of the data operand (1, 2 or 4).
    pub fn regs(self) -> u8 {
        (self.bytes().div_ceil(4)) as u8
    }

    pub(super) fn suffix(self, always32: bool) -> &'static str {
        match self {
            MemSize::U8 => ".U8",
            MemSize::S8 => ".S8",
            MemSize::U16 => ".U16",
            MemSize::S16 => ".S16",
            MemSize::B32 if always32 => ".32",
            MemSize::B32 => "",
            MemSize::B64 => ".64",
            MemSize::B128 => ".128",
            MemSize::U128 => ".U.128",
        }
    }
}

/// Cache operator of LD/LDG/ST/STG (ptxas findings section 2: LDG `CA CG CI CV`, STG
/// `WB CG CS WT`, LD `CA CG CV`; the defaults CA and WB are not printed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CacheOp {
    /// `.CA` for loads, `.WB` for stores: printed as nothing.
    #[default]
    Default,
    /// `.CG`: cache in L2 only.
    Cg,
    /// `.CI`: cache as inconsistent (read-only, `ld.global.nc`).
    Ci,
    /// `.CV`: volatile, fetch again.
    Cv,
    /// `.CS`: streaming (stores).
    Cs,
    /// `.WT`: write-through (stores).
    Wt,
    /// `.LU`: last use (`LDL.LU`, ptxas 11.8's spill reloads: the line may be evicted
    /// after this read; no architectural effect).
    Lu,
}

impl CacheOp {
    /// The mnemonic suffix as nvdisasm prints it (`.CG`; empty for the default).
    pub fn suffix(self) -> &'static str {
        match self {
            CacheOp::Default => "",
            CacheOp::Cg => ".CG",
            CacheOp::Ci => ".CI",
            CacheOp::Cv => ".CV",
            CacheOp::Cs => ".CS",
            CacheOp::Wt => ".WT",
            CacheOp::Lu => ".LU",
        }
    }
}

/// Modifiers of the memory instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemMods {
    /// `.E`: 64-bit address in a register pair.
    pub e: bool,
    /// Cache operator.
    pub cop: CacheOp,
    /// Access size.
    pub size: MemSize,
    /// Not an encoding bit: the access is observable (volatile, acquire, release, mmio)
    /// and must not be removed or moved across other memory accesses.
    pub keep: bool,
    /// Not an encoding bit: a 128-bit load that may become `.U.128` if its address is
    /// warp-uniform (`lower::mem::ldst::Plan::uniform_ok`).
    pub uniform_ok: bool,
    /// Not an encoding bit: a spill store or reload inserted by register allocation.
    pub spill: bool,
    /// Not an encoding bit: an `LDL` of a device function's incoming stack argument
    /// (`sass::abi`, `docs/abi.md` "Stack arguments"). Until `regalloc::calls::finish` its
    /// offset is from the caller's stack pointer; that pass adds the function's frame, known
    /// only after allocation (ptxas 11.8 `-c`: `LDL R3, [R1+0x208]` for byte 0x200 of
    /// the stack arguments behind an 8-byte frame).
    pub incoming: bool,
}

impl MemMods {
    /// A plain access of `size` with a 64-bit (`e`) or 32-bit address.
    pub fn new(size: MemSize, e: bool) -> MemMods {
        MemMods { e, cop: CacheOp::Default, size, keep: false, uniform_ok: false, spill: false, incoming: false }
    }
}

/// LDC address mode (spa50-LDC.txt `.ad`): how bank and offset are formed from `Ra+imm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LdcMode {
    /// `.IA` (default, not printed): bank = imm bank, addr = Ra + ImmS16.
    #[default]
    Ia,
    /// `.IL`: linear; bank += (Ra + imm) >> 16.
    Il,
    /// `.IS`: segmented; bank += Ra >> 16, addr = imm + (Ra & 0xffff).
    Is,
    /// `.ISL`: segmented with bounds check.
    Isl,
}

/// Float rounding (FADD/FMUL/FFMA/DADD/...: `.RN` default, `.RM`, `.RP`, `.RZ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[allow(missing_docs)]
pub enum Rnd {
    #[default]
    Rn,
    Rm,
    Rp,
    Rz,
}

impl Rnd {
    pub(super) fn suffix(self) -> &'static str {
        match self {
            Rnd::Rn => "",
            Rnd::Rm => ".RM",
            Rnd::Rp => ".RP",
            Rnd::Rz => ".RZ",
        }
    }
}

/// Float arithmetic modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FMods {
    /// `.FTZ`: flush denormals to zero.
    pub ftz: bool,
    /// Rounding.
    pub rnd: Rnd,
    /// `.SAT`: clamp to [0, 1].
    pub sat: bool,
}

/// A comparison of ISETP/FSETP/DSETP (`.LT`, `.GE`, ...; float `U` forms are unordered).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Cmp {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Ne,
    Ge,
    Num,
    Nan,
    Ltu,
    Equ,
    Leu,
    Gtu,
    Neu,
    Geu,
    T,
}

impl Cmp {
    pub(super) fn name(self) -> &'static str {
        use Cmp::*;
        match self {
            F => ".F",
            Lt => ".LT",
            Eq => ".EQ",
            Le => ".LE",
            Gt => ".GT",
            Ne => ".NE",
            Ge => ".GE",
            Num => ".NUM",
            Nan => ".NAN",
            Ltu => ".LTU",
            Equ => ".EQU",
            Leu => ".LEU",
            Gtu => ".GTU",
            Neu => ".NEU",
            Geu => ".GEU",
            T => ".T",
        }
    }
}

/// Boolean combination of a compare result with a predicate (`.AND/.OR/.XOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

impl BoolOp {
    pub(super) fn name(self) -> &'static str {
        match self {
            BoolOp::And => ".AND",
            BoolOp::Or => ".OR",
            BoolOp::Xor => ".XOR",
        }
    }
}

/// Logic operation of LOP/LOP32I.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum LogicOp {
    And,
    Or,
    Xor,
    /// `.PASS_B`: the second operand (with `~` gives NOT).
    PassB,
}

impl LogicOp {
    pub(super) fn name(self) -> &'static str {
        match self {
            LogicOp::And => ".AND",
            LogicOp::Or => ".OR",
            LogicOp::Xor => ".XOR",
            LogicOp::PassB => ".PASS_B",
        }
    }
}

/// How XMAD forms its addend (`.CBCC`: c + (b << 16); `.CHI`: c >> 16; `.CLO`: c & 0xffff;
/// `.CSFU`: c minus 0x10000 for each negative (signed) factor when both are non-zero,
/// envytools `maxwell/cuda/int.rst`; none: c).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[allow(missing_docs)]
pub enum XmadC {
    #[default]
    C,
    Cbcc,
    Chi,
    Clo,
    /// Sign fix-up: ptxas 11.8 uses `XMAD.S16.S16.CSFU` in `mul.hi.s32` (`samples/int_ops`).
    Csfu,
}

/// XMAD modifiers: a 16x16-bit multiply-add (the Maxwell integer multiply).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct XmadMods {
    /// `.PSL`: product shifted left by 16.
    pub psl: bool,
    /// `.MRG`: result high half replaced by b's low half.
    pub mrg: bool,
    /// Addend mode.
    pub c: XmadC,
    /// `.X`: add with carry in.
    pub x: bool,
    /// Writes CC (`Rd.CC`).
    pub cc: bool,
    /// `.S16` for operand a.
    pub signed_a: bool,
    /// `.S16` for operand b.
    pub signed_b: bool,
}

/// How IADD3 combines its first two operands before adding the third (envytools
/// `maxwell/cuda/int.rst` iadd3: `.RS` `((a + b) >> 16) + c`, `.LS` `((a + b) << 16) + c`;
/// ptxas 11.8 uses `.RS` to finish every 32-bit high product, `mul.hi.u32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Iadd3Mode {
    /// `a + b + c`.
    #[default]
    Plain,
    /// `.RS`: the carry-keeping sum `a + b` shifted right by 16, plus `c`.
    Rs,
    /// `.LS`: `(a + b) << 16`, plus `c`.
    Ls,
}

/// PRMT byte-selection mode (`PRMT{.F4E,.B4E,.RC8,.ECL,.ECR,.RC16}`, the modes of PTX
/// `prmt.b32{.mode}`, PTX ISA 9.7.8.7, which ptxas maps one to one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[allow(missing_docs)]
pub enum PrmtMode {
    /// Generic: four 4-bit selectors (bit 3 of each replicates the byte's sign).
    #[default]
    Idx,
    F4e,
    B4e,
    Rc8,
    Ecl,
    Ecr,
    Rc16,
}

impl PrmtMode {
    pub(super) fn suffix(self) -> &'static str {
        match self {
            PrmtMode::Idx => "",
            PrmtMode::F4e => ".F4E",
            PrmtMode::B4e => ".B4E",
            PrmtMode::Rc8 => ".RC8",
            PrmtMode::Ecl => ".ECL",
            PrmtMode::Ecr => ".ECR",
            PrmtMode::Rc16 => ".RC16",
        }
    }
}

/// MUFU function (nvdisasm `MUFU.RCP` etc.; Mesa NAK `MuFuOp` encodings 0..7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum MufuOp {
    Cos,
    Sin,
    Ex2,
    Lg2,
    /// Approximate f32 reciprocal (PTX `rcp.approx.f32`: at most 1 ulp from the exact value).
    Rcp,
    Rsq,
    Rcp64h,
    Rsq64h,
}

impl MufuOp {
    pub(super) fn suffix(self) -> &'static str {
        match self {
            MufuOp::Cos => ".COS",
            MufuOp::Sin => ".SIN",
            MufuOp::Ex2 => ".EX2",
            MufuOp::Lg2 => ".LG2",
            MufuOp::Rcp => ".RCP",
            MufuOp::Rsq => ".RSQ",
            MufuOp::Rcp64h => ".RCP64H",
            MufuOp::Rsq64h => ".RSQ64H",
        }
    }
}

/// Integer type of conversions (I2F source, F2I destination, I2I both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum IType {
    U8,
    S8,
    U16,
    S16,
    U32,
    S32,
    U64,
    S64,
}

impl IType {
    pub(super) fn name(self) -> &'static str {
        match self {
            IType::U8 => ".U8",
            IType::S8 => ".S8",
            IType::U16 => ".U16",
            IType::S16 => ".S16",
            IType::U32 => ".U32",
            IType::S32 => ".S32",
            IType::U64 => ".U64",
            IType::S64 => ".S64",
        }
    }
    /// 32-bit registers (1 or 2).
    pub fn regs(self) -> u8 {
        if matches!(self, IType::U64 | IType::S64) { 2 } else { 1 }
    }
}

/// Float type of conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum FType {
    F16,
    F32,
    F64,
}

impl FType {
    pub(super) fn name(self) -> &'static str {
        match self {
            FType::F16 => ".F16",
            FType::F32 => ".F32",
            FType::F64 => ".F64",
        }
    }
    /// 32-bit registers (1 or 2).
    pub fn regs(self) -> u8 {
        if self == FType::F64 { 2 } else { 1 }
    }
}

/// F2I rounding: to nearest even (default), floor, ceil, toward zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[allow(missing_docs)]
pub enum IRnd {
    #[default]
    Round,
    Floor,
    Ceil,
    Trunc,
}

/// Special register read by S2R.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum SpecialReg {
    TidX,
    TidY,
    TidZ,
    CtaidX,
    CtaidY,
    CtaidZ,
    LaneId,
    ClockLo,
    ClockHi,
    /// `SR_VIRTID`: bits 8..13 the warp's slot on its SM (`%warpid`), bits 20..28 the SM
    /// (`%smid`); ptxas 11.8 extracts them with `BFE.U32 R, R, 0x608` / `0x914`.
    VirtId,
    /// `SR_VIRTCFG`: bits 20..28 the number of SMs (`%nsmid`, `BFE.U32 R, R, 0x914`).
    VirtCfg,
    LtMask,
    LeMask,
    GtMask,
    GeMask,
    EqMask,
}

impl SpecialReg {
    /// nvdisasm name, e.g. `SR_TID.X`.
    pub fn name(self) -> &'static str {
        use SpecialReg::*;
        match self {
            TidX => "SR_TID.X",
            TidY => "SR_TID.Y",
            TidZ => "SR_TID.Z",
            CtaidX => "SR_CTAID.X",
            CtaidY => "SR_CTAID.Y",
            CtaidZ => "SR_CTAID.Z",
            LaneId => "SR_LANEID",
            ClockLo => "SR_CLOCKLO",
            ClockHi => "SR_CLOCKHI",
            VirtId => "SR_VIRTID",
            VirtCfg => "SR_VIRTCFG",
            LtMask => "SR_LTMASK",
            LeMask => "SR_LEMASK",
            GtMask => "SR_GTMASK",
            GeMask => "SR_GEMASK",
            EqMask => "SR_EQMASK",
        }
    }
}

/// Memory barrier level (MEMBAR). The device and system levels are always emitted with
/// `.IVALLD` (invalidate the L1 lines of earlier loads), as ptxas emits `membar.gl` and
/// `membar.sys` for sm_50 (`MEMBAR.GL.IVALLD`, `MEMBAR.SYS.IVALLD`, findings section 2):
/// after an acquire, later loads must not hit L1 lines older than the fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MembarLevel {
    /// `.CTA`.
    Cta,
    /// `.GL.IVALLD` (device).
    Gl,
    /// `.SYS.IVALLD` (system).
    Sys,
}

/// A condition-code test of `CSETP` (envytools `envydis/gm107.c`, the 32 tests in encoding
/// order): the comparisons read CC as the flags of a subtraction (`LT` = SF xor OF), the
/// others test single flags (`SFT` sign true, `LO` carry clear, `HI` carry and not zero,
/// ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CcTest {
    F,
    Lt,
    Eq,
    Le,
    Gt,
    Ne,
    Ge,
    /// Not equal or unordered: CC's zero flag clear (`BRA CC.NEU` after `ISET.EQ RZ.CC`).
    Neu,
    /// Equal or unordered: the zero flag set.
    Equ,
    T,
    /// Overflow flag false.
    Off,
    /// Carry flag false.
    Lo,
    /// Sign flag false.
    Sff,
    /// Carry false or zero.
    Ls,
    /// Carry true and not zero.
    Hi,
    /// Sign flag true.
    Sft,
    /// Carry flag true.
    Hs,
    /// Overflow flag true.
    Oft,
}

impl CcTest {
    /// Every test with its nvdisasm spelling (without the dot).
    pub const ALL: [(CcTest, &'static str); 18] = [
        (CcTest::F, "F"),
        (CcTest::Lt, "LT"),
        (CcTest::Eq, "EQ"),
        (CcTest::Le, "LE"),
        (CcTest::Gt, "GT"),
        (CcTest::Ne, "NE"),
        (CcTest::Ge, "GE"),
        (CcTest::Neu, "NEU"),
        (CcTest::Equ, "EQU"),
        (CcTest::T, "T"),
        (CcTest::Off, "OFF"),
        (CcTest::Lo, "LO"),
        (CcTest::Sff, "SFF"),
        (CcTest::Ls, "LS"),
        (CcTest::Hi, "HI"),
        (CcTest::Sft, "SFT"),
        (CcTest::Hs, "HS"),
        (CcTest::Oft, "OFT"),
    ];

    /// The nvdisasm spelling, e.g. `SFT`.
    pub fn name(self) -> &'static str {
        CcTest::ALL.iter().find(|(t, _)| *t == self).map_or("?", |(_, n)| n)
    }
}

/// Modifiers of `VABSDIFF` (the scalar video instruction behind PTX `sad`, ptxas 11.8:
/// `sad.u32` is `VABSDIFF.U32.U32.ACC d, a, b, c`, `sad.s32` is `VABSDIFF.SD.ACC`): the
/// operand types (`.S32` when not printed), a signed destination (`.SD`, which only
/// matters with `.SAT`), saturation and accumulation of the third operand (`.ACC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct VabsdiffMods {
    /// Operand a is unsigned (`.U32` first type).
    pub a_unsigned: bool,
    /// Operand b is unsigned (`.U32` second type).
    pub b_unsigned: bool,
    /// `.SD`: signed destination.
    pub sd: bool,
    /// `.SAT`: clamp to the destination's range.
    pub sat: bool,
    /// `.ACC`: add the third operand.
    pub acc: bool,
}
