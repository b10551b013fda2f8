//! SPA 5.0 opcodes with their typed modifiers, and how nvdisasm spells them.
//!
//! [`Op`] carries the modifiers; [`Opcode`] is the bare opcode that indexes the ISA tables
//! ([`OPCODE_INFO`] here, latencies in `sched`). Pseudo-ops that exist only before
//! register allocation finishes (`copy`, `join`, `undef`) print in lower case.

mod mnemonic;
mod opcode;

pub use opcode::{OPCODE_INFO, Opcode, OpcodeInfo, Unit};

pub use crate::sass::sync::{AtomMods, AtomOp, AtomType, BarRedOp, ShflMode, VoteMode};

pub use crate::sass::mods::*;
pub use crate::sass::texmods::{SurfClamp, SurfDim, SurfSize, TexDim};

/// An SPA 5.0 opcode with its modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Op {
    // ---- pseudo-ops (removed by register allocation) ------------------------------------
    /// `dst = src`, any width (register-allocator moves; predicate copies).
    Copy,
    /// `dst(n regs) = {src0, src1, ...}`: builds a pair or quad from narrower values;
    /// components placed in the right registers by allocation cost nothing.
    Join,
    /// Defines an undefined value (a PTX register read before any write).
    Undef,
    /// A call before register allocation: `srcs[0]` is the target (a symbol, or the
    /// register holding a function address), `srcs[1..]` the argument words, `dsts` the
    /// returned words; where each goes in the calling convention is
    /// `ir::Function::calls[site]` (`regalloc::calls` expands it after allocation).
    Call(u32),
    /// A device function's entry before register allocation: `dsts` are the incoming
    /// parameter words, placed as `ir::Function::abi` says (expanded after allocation).
    Params,

    // ---- moves ------------------------------------------------------------------------
    Mov,
    Mov32i,
    S2r(SpecialReg),
    /// CS2R Rd, SR: fixed-latency read of `SR_CLOCKLO/HI` (ptxas 11.8 for `%clock`,
    /// `%clock64`).
    Cs2r(SpecialReg),
    Sel,

    // ---- integer ----------------------------------------------------------------------
    /// IADD{.X} Rd{.CC}, Ra, Sb.
    Iadd {
        cc: bool,
        x: bool,
    },
    /// IADD32I{.X} Rd{.CC}, Ra, imm32.
    Iadd32i {
        cc: bool,
        x: bool,
    },
    /// IADD.SAT Rd, Ra, Sb: the exact signed sum of the (possibly negated) operands,
    /// saturated to the s32 range (ptxas: `add.sat.s32`, and `sub.sat.s32` as `-Sb`).
    IaddSat,
    /// IADD3{.RS,.LS} Rd, Ra, Sb, Rc.
    Iadd3(Iadd3Mode),
    /// ISCADD Rd{.CC}, Ra, Sb, shift: (Ra << shift) + Sb.
    Iscadd {
        cc: bool,
    },
    /// LEA{.HI}{.X} {Plg,} Rd{.CC}, Ra, Sb{, Rc}{, scale} (spa50-LEA.txt).
    Lea {
        hi: bool,
        x: bool,
        cc: bool,
    },
    Xmad(XmadMods),
    Shl,
    /// SHR{.U32}.
    Shr {
        u32: bool,
    },
    /// SHF.{L,R}{.W}{.U64,.S64}: funnel shift; `wide` selects the 64-bit forms, `wrap`
    /// (`.W`) takes the amount modulo the width instead of clamping it.
    Shf {
        left: bool,
        signed: bool,
        wide: bool,
        wrap: bool,
    },
    Lop(LogicOp),
    Lop32i(LogicOp),
    /// LOP3.LUT Rd, Ra, Rb, Rc, lut.
    Lop3,
    /// IMNMX{.U32} Rd, Ra, Sb, Pp: min when Pp is true, max when false.
    Imnmx {
        u32: bool,
    },
    /// BFE{.U32}{.BREV} Rd, Ra, pos|len<<8 (`.BREV` reverses Ra's bits first; ptxas:
    /// `brev.b32` is `BFE.U32.BREV Rd, Ra, 0x2000`).
    Bfe {
        u32: bool,
        brev: bool,
    },
    /// BFI Rd, Ra, pos|len<<8, Rc.
    Bfi,
    /// POPC Rd, {~}Rb.
    Popc,
    /// FLO{.U32}{.SH} Rd, {~}Rb: the bit position PTX `bfind{.shiftamt}` returns (ptxas
    /// maps `bfind.u32/.s32{.shiftamt}` to it one to one).
    Flo {
        u32: bool,
        sh: bool,
    },
    /// PRMT{.mode} Rd, Ra, Sb(selector), Rc: byte permute of `{Rc, Ra}`.
    Prmt(PrmtMode),
    /// MUFU.fn Rd, Ra: the multi-function unit.
    Mufu(MufuOp),
    /// RRO.SINCOS / RRO.EX2 Rd, Rb: range reduction of an f32 before `MUFU.SIN/.COS`
    /// (`ex2` false) or `MUFU.EX2` (`ex2` true), as ptxas 11.8 sm_50 emits for
    /// `sin/cos/ex2.approx.f32` (`RRO.SINCOS R12, R0; MUFU.SIN R12, R12`). The result is
    /// an operand for MUFU only (see `exec::sim::arith::mufu` for the model).
    Rro {
        ex2: bool,
    },
    /// ISETP.cmp{.U32}{.X}.bop Pd, Qd, Ra, Sb, Pc.
    Isetp {
        cmp: Cmp,
        u32: bool,
        x: bool,
        bop: BoolOp,
    },
    /// PSETP.bop0.bop1 Pd, Qd, Pa, Pb, Pc: (Pa bop0 Pb) bop1 Pc.
    Psetp {
        bop0: BoolOp,
        bop1: BoolOp,
    },

    // ---- float ------------------------------------------------------------------------
    Fadd(FMods),
    Fadd32i(FMods),
    Fmul(FMods),
    Fmul32i(FMods),
    Ffma(FMods),
    Ffma32i(FMods),
    /// FMNMX{.FTZ} Rd, Ra, Sb, Pp (min when Pp).
    Fmnmx {
        ftz: bool,
    },
    Fsetp {
        cmp: Cmp,
        ftz: bool,
        bop: BoolOp,
    },
    Dadd(Rnd),
    Dmul(Rnd),
    Dfma(Rnd),
    Dmnmx,
    Dsetp {
        cmp: Cmp,
        bop: BoolOp,
    },
    I2f {
        dst: FType,
        src: IType,
        rnd: Rnd,
    },
    F2i {
        dst: IType,
        src: FType,
        rnd: IRnd,
        ftz: bool,
    },
    F2f {
        dst: FType,
        src: FType,
        rnd: Rnd,
        ftz: bool,
        /// Round to an integral value (`.ROUND/.FLOOR/.CEIL/.TRUNC` for `rnd` RN/RM/RP/RZ,
        /// as ptxas emits for PTX `cvt.rni/.rmi/.rpi/.rzi`); without it a same-type F2F
        /// only copies (with `.FTZ`).
        int: bool,
    },
    I2i {
        dst: IType,
        src: IType,
    },

    // ---- memory -----------------------------------------------------------------------
    /// Generic load (spa50-LD.txt).
    Ld(MemMods),
    /// Generic store (spa50-ST.txt).
    St(MemMods),
    Ldg(MemMods),
    Stg(MemMods),
    /// LDS; nvdisasm prints `LDS.U.<size>` (ptxas always sets `.U`).
    Lds(MemMods),
    Sts(MemMods),
    Ldl(MemMods),
    Stl(MemMods),
    /// LDC{.sz}{.ad} (spa50-LDC.txt).
    Ldc {
        size: MemSize,
        mode: LdcMode,
    },
    /// ATOM{.E}.op.type Rd, [Ra+imm], Rb{, Rb+n}: global/generic atomic, old value in Rd
    /// (module `sync`).
    Atom(AtomMods),
    /// ATOMS.op.type Rd, [Ra+imm], Rb{, Rb+n}: shared-memory atomic.
    Atoms(AtomMods),
    /// RED.E.op.type [Ra+imm], Rb: global reduction without a result.
    Red(AtomMods),
    /// CCTL{.E}.PF1/.PF2 [Ra+imm] (global/generic) or CCTLL.PF1/.PF2 [Ra+imm] (local,
    /// `local`): prefetch into L1 (`level` 1) or L2 (2); ptxas 11.8 for `prefetch`.
    Cctl {
        local: bool,
        level: u8,
    },
    /// SHFL.mode Pd, Rd, Ra, Sb(lane), Sc(clamp | segmask << 8).
    Shfl(ShflMode),
    /// VOTE.mode {Rd,} Pd, Pa: warp vote; `Rd` receives the ballot of `Pa`.
    Vote(VoteMode),

    // ---- control and synchronization --------------------------------------------------
    Bra,
    Exit,
    /// RET. Before register allocation a device function's `RET` reads the returned words
    /// (`ir::Function::abi` places them); afterwards it has no operands.
    Ret,
    /// CAL target: call of a function of the module (relative; `srcs[0]` a symbol).
    Cal,
    /// JCAL target: call of an absolute address, for functions outside the module (the
    /// relocation `R_CUDA_ABS32_20` fills it in).
    Jcal,
    /// PRET target: pushes the return address of the indirect call that follows.
    Pret,
    /// JMX Ra: jumps to the absolute code address in `Ra` (the indirect call after PRET).
    Jmx,
    /// SSY target: push a reconvergence point.
    Ssy,
    /// SYNC: wait for the other threads at the SSY reconvergence point.
    Sync,
    /// PBK target: push a loop-break point.
    Pbk,
    /// BRK: leave to the PBK point.
    Brk,
    /// BAR.SYNC barrier (`arrive` = BAR.ARV).
    Bar {
        arrive: bool,
    },
    Membar(MembarLevel),
    /// BAR.RED.op id{, count}, {!}Pc: waits like BAR.SYNC and reduces the threads'
    /// predicates; B2R.RESULT reads the result.
    BarRed(BarRedOp),
    /// B2R.RESULT Rd{, Pd}: the last BAR.RED's result (a count, or 0/1), `Pd` = non-zero.
    B2r,
    /// BPT.TRAP 0x1 (`trap`, and ptxas 11.8's `brkpt`) or BPT.INT 0x0 (`brkpt` here):
    /// breakpoint; `.TRAP` ends the launch with an error.
    Bpt {
        trap: bool,
    },
    Nop,
    /// DEPBAR.LE SBn, count: wait until at most `count` operations on barrier `sb` are
    /// outstanding.
    Depbar {
        sb: u8,
        count: u8,
    },

    // ---- forms ptxas 11.8 emits and ptx2sass does not: they occur only in listings ----
    // ---- loaded for the simulator (`sass::listing`); semantics in `exec::sim::arith::ext` ----
    /// BRA CC.test, target: a branch taken where the guard holds and CC passes `test`
    /// (ptxas 11.8: `@!P0 BRA CC.NEU, `(.L_x_1)` after `ISET.EQ.AND RZ.CC, ...`).
    BraCc {
        test: CcTest,
    },
    /// ISCADD32I Rd, Ra, imm32, shift: `(Ra << shift) + imm32`.
    Iscadd32i,
    /// SHL.W Rd, Ra, Sb: shift left by `Sb & 31`.
    ShlW,
    /// SHR{.U32}.W Rd, Ra, Sb: shift right by `Sb & 31`.
    ShrW {
        u32: bool,
    },
    /// IADD3{.X} Rd{.CC}, Ra, Sb, Rc: three-operand add with carry in and/or out.
    Iadd3C {
        x: bool,
        cc: bool,
    },
    /// IMNMX{.U32}.XHI Rd.CC, Ra, Sb, Pp / IMNMX.U32.XLO Rd, Ra, Sb, Pp: the high and then
    /// the low word of a 64-bit min/max, linked through CC.
    ImnmxX {
        u32: bool,
        hi: bool,
    },
    /// LOP.op{.Z,.NZ} {Pd,} Rd{.CC}, Ra, Sb: a logic operation that also sets `Pd` to the
    /// result being zero (`pred` = `Some(false)`, `.Z`) or not (`Some(true)`, `.NZ`),
    /// and/or CC from the result (`cc`).
    LopX {
        op: LogicOp,
        pred: Option<bool>,
        cc: bool,
    },
    /// LOP32I.op{.Z,.NZ} {Pd,} Rd{.CC}, Ra, imm32.
    Lop32iX {
        op: LogicOp,
        pred: Option<bool>,
        cc: bool,
    },
    /// LOP3.LUT{.Z,.NZ} {Pd,} Rd{.CC}, Ra, Sb, Rc, lut.
    Lop3X {
        pred: Option<bool>,
        cc: bool,
    },
    /// ICMP.cmp{.U32} Rd, Ra, Sb, Rc: `Rd = (Rc cmp 0) ? Ra : Sb`.
    Icmp {
        cmp: Cmp,
        u32: bool,
    },
    /// ISET{.BF}.cmp{.U32}{.X}.bop Rd{.CC}, Ra, Sb, Pc: the comparison as a value (all ones,
    /// or 1.0 with `.BF`).
    Iset {
        cmp: Cmp,
        u32: bool,
        x: bool,
        bf: bool,
        bop: BoolOp,
        cc: bool,
    },
    /// FSET{.BF}.cmp{.FTZ}.bop Rd{.CC}, Ra, Sb, Pc.
    Fset {
        cmp: Cmp,
        ftz: bool,
        bf: bool,
        bop: BoolOp,
        cc: bool,
    },
    /// DSET{.BF}.cmp.bop Rd, Ra, Sb, Pc (64-bit operands).
    Dset {
        cmp: Cmp,
        bf: bool,
        bop: BoolOp,
    },
    /// CSETP.test.bop Pd, Qd, CC, Pc: a condition-code test.
    Csetp {
        test: CcTest,
        bop: BoolOp,
    },
    /// I2I.dst.src RZ.CC, Ra: a conversion that also writes CC.
    I2iCc {
        dst: IType,
        src: IType,
    },
    /// FCHK.DIVIDE Pd, Ra, Rb: whether `Ra / Rb` needs the slow path.
    Fchk,
    /// VABSDIFF{.types}{.SD}{.SAT}{.ACC} Rd, Ra, Sb, Rc: `|a - b|` (+ c).
    Vabsdiff(VabsdiffMods),
    /// IMAD{.ta.tb}{.HI}{.SAT} Rd, Ra, Sb, Rc: `a * b` (its high word with `.HI`) plus
    /// `c`, clamped to the s32 range with `.SAT`; `signed` per operand (`.U32`/`.S32`,
    /// both signed when nvdisasm prints neither).
    Imad {
        signed: (bool, bool),
        hi: bool,
        sat: bool,
    },
    /// IMUL{.ta.tb}{.HI} Rd, Ra, Sb: the low (high with `.HI`) word of the 64-bit product,
    /// `signed` per operand as for [`Op::Imad`].
    Imul {
        signed: (bool, bool),
        hi: bool,
    },
    /// IMUL32I{.ta.tb}{.HI} Rd, Ra, imm32: [`Op::Imul`] with a 32-bit immediate (ptxas
    /// 11.8: `IMUL32I.U32.U32.HI R11, R8, 0x8`).
    Imul32i {
        signed: (bool, bool),
        hi: bool,
    },
    /// FCMP.cmp{.FTZ} Rd, Ra, Sb, Rc: `Rd = (Rc cmp 0.0) ? Ra : Sb`.
    Fcmp {
        cmp: Cmp,
        ftz: bool,
    },
    /// IADD32I.SAT Rd, Ra, imm32: `IADD.SAT` with a 32-bit immediate (ptxas 11.8 for
    /// `add.sat.s32` with a constant).
    Iadd32iSat,
    /// I2I.dst.src.SAT Rd, Ra: a conversion that clamps to the destination's range.
    I2iSat {
        dst: IType,
        src: IType,
    },
    /// F2F{.FTZ}.dst.src{.rnd}.SAT Rd, Sa: [`Op::F2f`] with the result clamped to
    /// [0.0, 1.0], NaN to +0 (ptxas 11.8 for `cvt.rni.sat.f32.f32`, `cvt.rn.sat.f16.f32`).
    F2fSat {
        dst: FType,
        src: FType,
        rnd: Rnd,
        ftz: bool,
        int: bool,
    },

    // ---- textures and surfaces (module `texmods`, docs/textures.md) --------------------
    /// TEXS Rd2, Rd, Ra, Rb, index, dim, channels: a bound fetch (the texture handle is
    /// word `index` of constant bank 0); `chans` is the mask of the components written
    /// (x, y to `Rd, Rd+1`; z, w to `Rd2, Rd2+1`; `Rd2` = RZ when at most two are
    /// written, packed into `Rd`). With `ll` (`TEXS.LL`, `tex.level.2d`; 2D only) `Ra` is
    /// the pair x, y and `Rb` the level (ptxas 11.8: `TEXS.LL.P R6, R4, R4, R6, 0x50, 2D,
    /// RGBA`, docs/textures.md §1.6).
    Texs {
        dim: TexDim,
        chans: u8,
        ll: bool,
    },
    /// TLDS.LZ Rd2, Rd, Ra, Rb, index, dim, channels: bound fetch at integer coordinates,
    /// level zero; operands and results as for [`Op::Texs`] (ptxas 11.8: `TLDS.LZ.P R6,
    /// R4, R4, R5, 0x50, 3D, RGBA` for `tex.3d.v4.f32.s32`; `1D` reads x in `Ra` and `Rb`
    /// = RZ: `TLDS.LZ.P R6, R4, R4, 0x50, 1D, RGBA`).
    /// With `ms` (`TLDS.LZ.MS`, `tex.2dms`) `Ra` is the pair x, y and `Rb` the sample
    /// (ptxas 11.8 `TLDS.LZ.MS.P R6, R4, R4, R6, 0x50, 2D, RGBA`, docs/textures.md §1.13).
    Tlds {
        dim: TexDim,
        chans: u8,
        ms: bool,
    },
    /// TLD4S.comp Rd2, Rd, Ra, Rb, index: bound 2D gather of component `comp` (0..3).
    Tld4s {
        comp: u8,
    },
    /// TEX Rd, Ra, index, dim, mask (bound) or TEX.B Rd, Ra, Rb, 0x0, dim, mask
    /// (bindless, the handle's low word in Rb): coordinates in `Ra..`, the components of
    /// `mask` packed into `Rd..`. srcs `[Ra, index (immediate) | Rb]`. ptxas 11.8 uses the
    /// bound form where TEXS has no channel set for the mask (`0x5`, `0x6`). With `ll`
    /// (`TEX.LL`, an explicit level) the bound form reads the level in `Rb` (srcs `[Ra,
    /// Rlevel, index]`: `TEX.LL.P R4, R6, R5, 0x50, 2D, 0x5`) and the bindless form reads
    /// `{handle, level}` as the pair `Rb` (`TEX.B.LL.P R8, R8, R6, 0x0, 2D, 0xf` after
    /// `MOV R7, level`; ptxas 11.8, docs/textures.md §1.6).
    Tex {
        dim: TexDim,
        mask: u8,
        bindless: bool,
        ll: bool,
    },
    /// TLD.LZ Rd, Ra, index, dim, mask (bound) or TLD.B.LZ Rd, Ra, Rb, 0x0, dim, mask:
    /// fetch at integer coordinates, level zero; operands as for [`Op::Tex`]. With `ll`
    /// (`TLD.LL.CL`, `tex.level` with `.s32` coordinates) the level is read as `TEX.LL`'s:
    /// bound srcs `[Ra, Rlevel, index]` (`TLD.LL.CL.P R4, R4, R6, 0x50, 2D, 0xf`),
    /// bindless `[Ra, {handle, level}]` (`TLD.B.LL.CL.P R8, R8, R6, 0x0, 2D, 0xf`; ptxas
    /// 11.8 `probe_geometries.ptx`, docs/textures.md §1.12). There is no `TLDS.LL`.
    /// With `ms` (`TLD.LZ.MS`, `tex.2dms`) the sample is read where `.LL.CL` reads the
    /// level (`TLD.LZ.MS.P R4, R4, R6, 0x50, 2D, 0x5`, `TLD.B.LZ.MS.P R8, R8, R6, 0x0,
    /// 2D, 0xf`; §1.13).
    Tld {
        dim: TexDim,
        mask: u8,
        bindless: bool,
        ll: bool,
        ms: bool,
    },
    /// TLD4.comp Rd, Ra, index, dim, mask (bound) or TLD4.comp.B Rd, Ra, Rb, 0x0, dim,
    /// mask: gather of component `comp`, `dim` 2D or `ARRAY_2D` (`{index, x, y}` in
    /// `Ra..`, ptxas 11.8 `TLD4.R.P R4, R4, 0x50, ARRAY_2D, 0xf` for `tld4.r.a2d`,
    /// docs/textures.md §1.12); operands as for [`Op::Tex`].
    Tld4 {
        comp: u8,
        mask: u8,
        bindless: bool,
        dim: TexDim,
    },
    /// TXD Rd, Ra, Rb, index, dim, mask (bound) or TXD.B Rd, Ra, Rb, 0x0, dim, mask: a
    /// sample with explicit gradients (`tex.grad`). Bound: srcs `[Ra (coordinates), Rb
    /// (gradients), index]`; bindless: srcs `[Ra ({handle, coordinates}), Rb
    /// (gradients)]`, the handle *first in `Ra`* (unlike `TEX.B`). The gradients are
    /// interleaved per axis: 2D `Rb` = the quad `{dPdx.x, dPdy.x, dPdx.y, dPdy.y}`, 1D
    /// arrays the pair `{dPdx, dPdy}`. Components of `mask` packed into `Rd..` as for
    /// [`Op::Tex`]. ptxas 11.8 `TXD.P R4, R4, R8, 0x50, 2D, 0xf`, `TXD.B.P R8, R8, R12,
    /// 0x0, 2D, 0xf` (docs/textures.md §1.11, `probe_grad.ptx`).
    Txd {
        dim: TexDim,
        mask: u8,
        bindless: bool,
    },
    /// TXQ{.B} Rd, Ra, TEX_HEADER_DIMENSION, index, mask: width (mask 1), height (2),
    /// depth (4) of level Ra (bindless: Ra = {handle, level}); `txq.level` passes its
    /// level, `txq` and `suq` a zero (ptxas 11.8, docs/textures.md §1.6).
    Txq {
        bindless: bool,
        mask: u8,
    },
    /// SULD.D.BA.dim.size.clamp Rd, [Ra], index|Rh: surface load of `size` into `Rd..`.
    Suld {
        dim: SurfDim,
        clamp: SurfClamp,
        size: SurfSize,
    },
    /// SUST.D.BA.dim.size.clamp [Ra], Rd, index|Rh: surface store of `size` from `Rd..`.
    Sust {
        dim: SurfDim,
        clamp: SurfClamp,
        size: SurfSize,
    },
    /// SURED.D{.BA}.dim.op{.type}.clamp [Ra], Rd, index|Rh: atomic reduction of the
    /// surface element at `Ra` with `Rd` (`Rd, Rd+1` for `.U64`); `.BA` (byte addressing,
    /// `sured.b`) or not (`sured.p`, x in samples). ptxas 11.8 `SURED.D.BA.2D.ADD.TRAP
    /// [R2], R0, 0x50`, `SURED.D.2D.ADD.TRAP` (docs/textures.md §1.9).
    Sured {
        dim: SurfDim,
        clamp: SurfClamp,
        red: crate::sass::texmods::SurfRed,
        ty: crate::sass::texmods::SurfRedType,
        ba: bool,
    },
    /// SUST.P.dim{.mask}.clamp [Ra], Rd, index|Rh: formatted store (`sust.p`) of the
    /// components `mask` (R G B A = bits 0..3; 0xf prints nothing) from `Rd..`, x in
    /// samples, converted to the surface's format. ptxas 11.8 `SUST.P.2D.TRAP [R8], R4,
    /// 0x50`, `SUST.P.1D.R.IGN`, `SUST.P.3D.RG` (docs/textures.md §1.15).
    SustP {
        dim: SurfDim,
        clamp: SurfClamp,
        mask: u8,
    },
}

impl Op {
    /// The bare opcode.
    pub fn opcode(&self) -> Opcode {
        use Op::*;
        match self {
            Copy => Opcode::Copy,
            Join => Opcode::Join,
            Undef => Opcode::Undef,
            Call(_) => Opcode::Call,
            Params => Opcode::Params,
            Mov => Opcode::Mov,
            Mov32i => Opcode::Mov32i,
            S2r(_) => Opcode::S2r,
            Cs2r(_) => Opcode::Cs2r,
            Sel => Opcode::Sel,
            Iadd { .. } => Opcode::Iadd,
            Iadd32i { .. } => Opcode::Iadd32i,
            IaddSat => Opcode::IaddSat,
            Iadd3(_) => Opcode::Iadd3,
            Iscadd { .. } => Opcode::Iscadd,
            Lea { .. } => Opcode::Lea,
            Xmad(_) => Opcode::Xmad,
            Shl => Opcode::Shl,
            Shr { .. } => Opcode::Shr,
            Shf { .. } => Opcode::Shf,
            Lop(_) => Opcode::Lop,
            Lop32i(_) => Opcode::Lop32i,
            Lop3 => Opcode::Lop3,
            Imnmx { .. } => Opcode::Imnmx,
            Bfe { .. } => Opcode::Bfe,
            Bfi => Opcode::Bfi,
            Popc => Opcode::Popc,
            Flo { .. } => Opcode::Flo,
            Prmt(_) => Opcode::Prmt,
            Mufu(_) => Opcode::Mufu,
            Rro { .. } => Opcode::Rro,
            Isetp { .. } => Opcode::Isetp,
            Psetp { .. } => Opcode::Psetp,
            Fadd(_) => Opcode::Fadd,
            Fadd32i(_) => Opcode::Fadd32i,
            Fmul(_) => Opcode::Fmul,
            Fmul32i(_) => Opcode::Fmul32i,
            Ffma(_) => Opcode::Ffma,
            Ffma32i(_) => Opcode::Ffma32i,
            Fmnmx { .. } => Opcode::Fmnmx,
            Fsetp { .. } => Opcode::Fsetp,
            Dadd(_) => Opcode::Dadd,
            Dmul(_) => Opcode::Dmul,
            Dfma(_) => Opcode::Dfma,
            Dmnmx => Opcode::Dmnmx,
            Dsetp { .. } => Opcode::Dsetp,
            I2f { .. } => Opcode::I2f,
            F2i { .. } => Opcode::F2i,
            F2f { .. } => Opcode::F2f,
            I2i { .. } => Opcode::I2i,
            Ld(_) => Opcode::Ld,
            St(_) => Opcode::St,
            Ldg(_) => Opcode::Ldg,
            Stg(_) => Opcode::Stg,
            Lds(_) => Opcode::Lds,
            Sts(_) => Opcode::Sts,
            Ldl(_) => Opcode::Ldl,
            Stl(_) => Opcode::Stl,
            Ldc { .. } => Opcode::Ldc,
            Atom(_) => Opcode::Atom,
            Atoms(_) => Opcode::Atoms,
            Red(_) => Opcode::Red,
            Cctl { .. } => Opcode::Cctl,
            Shfl(_) => Opcode::Shfl,
            Vote(_) => Opcode::Vote,
            Bra => Opcode::Bra,
            Exit => Opcode::Exit,
            Ret => Opcode::Ret,
            Cal => Opcode::Cal,
            Jcal => Opcode::Jcal,
            Pret => Opcode::Pret,
            Jmx => Opcode::Jmx,
            Ssy => Opcode::Ssy,
            Sync => Opcode::Sync,
            Pbk => Opcode::Pbk,
            Brk => Opcode::Brk,
            Bar { .. } => Opcode::Bar,
            Membar(_) => Opcode::Membar,
            BarRed(_) => Opcode::BarRed,
            B2r => Opcode::B2r,
            Bpt { .. } => Opcode::Bpt,
            Nop => Opcode::Nop,
            Depbar { .. } => Opcode::Depbar,
            BraCc { .. } => Opcode::BraCc,
            Iscadd32i => Opcode::Iscadd32i,
            ShlW => Opcode::ShlW,
            ShrW { .. } => Opcode::ShrW,
            Iadd3C { .. } => Opcode::Iadd3C,
            ImnmxX { .. } => Opcode::ImnmxX,
            LopX { .. } => Opcode::LopX,
            Lop32iX { .. } => Opcode::Lop32iX,
            Lop3X { .. } => Opcode::Lop3X,
            Icmp { .. } => Opcode::Icmp,
            Iset { .. } => Opcode::Iset,
            Fset { .. } => Opcode::Fset,
            Dset { .. } => Opcode::Dset,
            Csetp { .. } => Opcode::Csetp,
            I2iCc { .. } => Opcode::I2iCc,
            Fchk => Opcode::Fchk,
            Vabsdiff(_) => Opcode::Vabsdiff,
            Imad { .. } => Opcode::Imad,
            Imul { .. } => Opcode::Imul,
            Imul32i { .. } => Opcode::Imul32i,
            Fcmp { .. } => Opcode::Fcmp,
            Iadd32iSat => Opcode::Iadd32iSat,
            I2iSat { .. } => Opcode::I2iSat,
            F2fSat { .. } => Opcode::F2fSat,
            Texs { .. } => Opcode::Texs,
            Tlds { .. } => Opcode::Tlds,
            Tld4s { .. } => Opcode::Tld4s,
            Tex { .. } => Opcode::Tex,
            Tld { .. } => Opcode::Tld,
            Tld4 { .. } => Opcode::Tld4,
            Txd { .. } => Opcode::Txd,
            Txq { .. } => Opcode::Txq,
            Suld { .. } => Opcode::Suld,
            Sust { .. } => Opcode::Sust,
            Sured { .. } => Opcode::Sured,
            SustP { .. } => Opcode::SustP,
        }
    }

    /// Static facts from [`OPCODE_INFO`].
    pub fn info(&self) -> &'static OpcodeInfo {
        let info = &OPCODE_INFO[self.opcode() as usize];
        debug_assert_eq!(info.opcode, self.opcode());
        info
    }

    /// True for the pseudo-ops that must be gone before scheduling.
    pub fn is_pseudo(&self) -> bool {
        self.info().unit == Unit::Pseudo
    }

    /// Writes the condition-code register (`.CC` on the destination).
    pub fn writes_cc(&self) -> bool {
        matches!(
            self,
            Op::Iadd { cc: true, .. }
                | Op::Iadd32i { cc: true, .. }
                | Op::Iscadd { cc: true }
                | Op::Lea { cc: true, .. }
                | Op::Iadd3C { cc: true, .. }
                | Op::ImnmxX { hi: true, .. }
                | Op::Iset { cc: true, .. }
                | Op::Fset { cc: true, .. }
                | Op::I2iCc { .. }
                | Op::LopX { cc: true, .. }
                | Op::Lop32iX { cc: true, .. }
                | Op::Lop3X { cc: true, .. }
        ) || matches!(self, Op::Xmad(m) if m.cc)
    }

    /// Reads the condition-code register (`.X` forms).
    pub fn reads_cc(&self) -> bool {
        matches!(
            self,
            Op::Iadd { x: true, .. }
                | Op::Iadd32i { x: true, .. }
                | Op::Lea { x: true, .. }
                | Op::Isetp { x: true, .. }
                | Op::Iadd3C { x: true, .. }
                | Op::ImnmxX { hi: false, .. }
                | Op::Iset { x: true, .. }
                | Op::Csetp { .. }
                | Op::BraCc { .. }
        ) || matches!(self, Op::Xmad(m) if m.x)
    }

    /// The memory modifiers of a memory instruction.
    pub fn mem(&self) -> Option<&MemMods> {
        match self {
            Op::Ld(m) | Op::St(m) | Op::Ldg(m) | Op::Stg(m) | Op::Lds(m) | Op::Sts(m) | Op::Ldl(m) | Op::Stl(m) => {
                Some(m)
            }
            _ => None,
        }
    }

    /// Mnemonic with modifiers in nvdisasm spelling, e.g. `LDG.E.CI.U.128`,
    /// `ISETP.GE.U32.AND`, `XMAD.PSL.CBCC`.
    pub fn name(&self) -> String {
        let mut s = String::from(self.info().mnemonic);
        self.write_mods(&mut s).expect("writing to a String cannot fail");
        s
    }
}
