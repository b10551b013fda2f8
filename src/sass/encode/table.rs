//! The SPA 5.0 encoding table: one row per instruction form, in the template language of
//! [`super::form`]. Every field position is from `../shared/reference/sm50-encoding-and-cubin.md`
//! §1 (bit flips and sweeps of ptxas 11.8 words under nvdisasm 11.8), and every row is
//! checked against nvdisasm 11.8 by `tests/encode_table.rs` (random field values) and by
//! the 369 ptxas words of `sm50-encoding/exp/forms.tsv` (unit test below).
//!
//! `B3` rows expand to the register / constant-bank / 20-bit-immediate forms of one
//! operand class (§1.2: `0x5c..`/`0x4c..`/`0x38..` for two-source ALU ops, `0x5b..`/
//! `0x4b..`/`0x36..` for three-source ones); `$B` stands for the B operand (`R@20`, `C`,
//! `I20`), `$F`/`$D` for a float B (`F20`/`D20` immediates), `$S` for a B printed
//! `c[..] [..]`. Negation and absolute-value bits of B are dropped in the immediate form
//! (the immediate carries its own sign).

/// A row before expansion.
pub enum Row {
    /// One form: top-16 opcode bits, their mask, template.
    One(u16, u16, &'static str),
    /// Register, constant-bank and immediate forms: three opcodes, the mask of the
    /// register form (bit 56 is freed for the immediate's sign), template with `$B`.
    B3(u16, u16, u16, u16, &'static str),
}

use Row::*;

/// Integer comparisons (ISETP/ICMP/ISET bits 49..51; §1.4).
pub const ICMP: &[(u64, &str)] =
    &[(0, ".F"), (1, ".LT"), (2, ".EQ"), (3, ".LE"), (4, ".GT"), (5, ".NE"), (6, ".GE"), (7, ".T")];
/// Float comparisons (FSETP/FSET/DSETP bits 48..51; §1.4).
pub const FCMP: &[(u64, &str)] = &[
    (0, ".F"),
    (1, ".LT"),
    (2, ".EQ"),
    (3, ".LE"),
    (4, ".GT"),
    (5, ".NE"),
    (6, ".GE"),
    (7, ".NUM"),
    (8, ".NAN"),
    (9, ".LTU"),
    (10, ".EQU"),
    (11, ".LEU"),
    (12, ".GTU"),
    (13, ".NEU"),
    (14, ".GEU"),
    (15, ".T"),
];
const BOOL: &[(u64, &str)] = &[(0, ".AND"), (1, ".OR"), (2, ".XOR")];
const RND: &[(u64, &str)] = &[(0, ""), (1, ".RM"), (2, ".RP"), (3, ".RZ")];
const LOP: &[(u64, &str)] = &[(0, ".AND"), (1, ".OR"), (2, ".XOR"), (3, ".PASS_B")];
const LOPP: &[(u64, &str)] = &[(0, ""), (1, ".T"), (2, ".Z"), (3, ".NZ")];
const XSIGN: &[(u64, &str)] = &[(0, ""), (1, ".S16.U16"), (2, ".U16.S16"), (3, ".S16.S16")];
const XSB0: &[(u64, &str)] = &[(0, ""), (1, ".S16.U16")];
const XSB1: &[(u64, &str)] = &[(0, ".U16.S16"), (1, ".S16.S16")];
/// VABSDIFF operand types (A signed 48, B signed 49); with `.SD` both signed print nothing.
const VT: &[(u64, &str)] = &[(0, ".U32.U32"), (1, ".S32.U32"), (2, ".U32.S32"), (3, "")];
const VTSD: &[(u64, &str)] = &[(0, ".U32.U32"), (1, ".S32.U32"), (2, ".U32.S32"), (3, "")];
const VMODE: &[(u64, &str)] = &[(0, ".MRG_16H"), (4, ".ACC"), (5, ".MIN"), (6, ".MAX")];
const SHFX: &[(u64, &str)] = &[(0, ""), (1, ".HI"), (2, ".X"), (3, ".XHI")];
/// FCMP prints no comparison for GT (raw nvdisasm sweep of bits 48..51).
const FCMPT: &[(u64, &str)] = &[
    (0, ".F"),
    (1, ".LT"),
    (2, ".EQ"),
    (3, ".LE"),
    (4, ""),
    (5, ".NE"),
    (6, ".GE"),
    (7, ".NUM"),
    (8, ".NAN"),
    (9, ".LTU"),
    (10, ".EQU"),
    (11, ".LEU"),
    (12, ".GTU"),
    (13, ".NEU"),
    (14, ".GEU"),
    (15, ".T"),
];
const REDOP9: &[(u64, &str)] = &[
    (0, ".ADD"),
    (1, ".MIN"),
    (2, ".MAX"),
    (3, ".INC"),
    (4, ".DEC"),
    (5, ".AND"),
    (6, ".OR"),
    (7, ".XOR"),
    (8, ".EXCH"),
];
/// Integer types of 8..32 bits (I2I; F2I's destination has no 8-bit form).
const ITYPE32: &[(u64, &str)] = &[(0, ".U8"), (1, ".U16"), (2, ".U32"), (4, ".S8"), (5, ".S16"), (6, ".S32")];
const F2ITYPE: &[(u64, &str)] = &[(1, ".U16"), (2, ".U32"), (3, ".U64"), (5, ".S16"), (6, ".S32"), (7, ".S64")];
/// Same-type F2F: bit 42 selects rounding to an integral value; 1..3 without it print `.PASS`.
const F2FSAME: &[(u64, &str)] = &[(0, ""), (1, ".PASS"), (4, ".ROUND"), (5, ".FLOOR"), (6, ".CEIL"), (7, ".TRUNC")];
const XMODE: &[(u64, &str)] = &[(0, ""), (1, ".CLO"), (2, ".CHI"), (3, ".CSFU"), (4, ".CBCC")];
const XMODE2: &[(u64, &str)] = &[(0, ""), (1, ".CLO"), (2, ".CHI"), (3, ".CSFU")];
const PRMT: &[(u64, &str)] = &[(0, ""), (1, ".F4E"), (2, ".B4E"), (3, ".RC8"), (4, ".ECL"), (5, ".ECR"), (6, ".RC16")];
const MUFU: &[(u64, &str)] =
    &[(0, ".COS"), (1, ".SIN"), (2, ".EX2"), (3, ".LG2"), (4, ".RCP"), (5, ".RSQ"), (6, ".RCP64H"), (7, ".RSQ64H")];
const IADD3M: &[(u64, &str)] = &[(0, ""), (1, ".RS"), (2, ".LS")];
const IMNMXX: &[(u64, &str)] = &[(0, ""), (1, ".XLO"), (2, ".XMED"), (3, ".XHI")];
const SHFW: &[(u64, &str)] = &[(0, ""), (2, ".U64"), (3, ".S64")];
const FMZ: &[(u64, &str)] = &[(0, ""), (1, ".FTZ"), (2, ".FMZ")];
const FSCALE: &[(u64, &str)] = &[(0, ""), (1, ".D2"), (2, ".D4"), (3, ".D8"), (4, ".M8"), (5, ".M4"), (6, ".M2")];
const FTYPE: &[(u64, &str)] = &[(1, ".F16"), (2, ".F32"), (3, ".F64")];
/// size (2 bits) | signed << 2.
const ITYPE: &[(u64, &str)] =
    &[(0, ".U8"), (1, ".U16"), (2, ".U32"), (3, ".U64"), (4, ".S8"), (5, ".S16"), (6, ".S32"), (7, ".S64")];
const F2IRND: &[(u64, &str)] = &[(0, ""), (1, ".FLOOR"), (2, ".CEIL"), (3, ".TRUNC")];
/// Rounding (39..40) | integral rounding (42) << 2.
const F2FRND: &[(u64, &str)] =
    &[(0, ""), (1, ".RM"), (2, ".RP"), (3, ".RZ"), (4, ".ROUND"), (5, ".FLOOR"), (6, ".CEIL"), (7, ".TRUNC")];
const RRO: &[(u64, &str)] = &[(0, ".SINCOS"), (1, ".EX2")];
const SIZE: &[(u64, &str)] =
    &[(0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"), (4, ""), (5, ".64"), (6, ".128"), (7, ".U.128")];
const SIZE6: &[(u64, &str)] = &[(0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"), (4, ""), (5, ".64"), (6, ".128")];
const LDSSIZE: &[(u64, &str)] =
    &[(0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"), (4, ".32"), (5, ".64"), (6, ".128")];
const LDCSIZE: &[(u64, &str)] = &[(0, ".U8"), (1, ".S8"), (2, ".U16"), (3, ".S16"), (4, ""), (5, ".64")];
const LDCMODE: &[(u64, &str)] = &[(0, ""), (1, ".IL"), (2, ".IS"), (3, ".ISL")];
const LDCACHE: &[(u64, &str)] = &[(0, ""), (1, ".CG"), (2, ".CI"), (3, ".CV")];
const STCACHE: &[(u64, &str)] = &[(0, ""), (1, ".CG"), (2, ".CS"), (3, ".WT")];
const LDLCACHE: &[(u64, &str)] = &[(0, ""), (1, ".LU"), (2, ".CI"), (3, ".CV")];
const ATOMOP: &[(u64, &str)] = &[
    (0, ".ADD"),
    (1, ".MIN"),
    (2, ".MAX"),
    (3, ".INC"),
    (4, ".DEC"),
    (5, ".AND"),
    (6, ".OR"),
    (7, ".XOR"),
    (8, ".EXCH"),
    (10, ".SAFEADD"),
];
const REDOP: &[(u64, &str)] =
    &[(0, ".ADD"), (1, ".MIN"), (2, ".MAX"), (3, ".INC"), (4, ".DEC"), (5, ".AND"), (6, ".OR"), (7, ".XOR")];
const ATOMTYPE: &[(u64, &str)] = &[(0, ""), (1, ".S32"), (2, ".U64"), (3, ".F32.FTZ.RN"), (4, ".U128"), (5, ".S64")];
const ATOMSTYPE: &[(u64, &str)] = &[(0, ""), (1, ".S32"), (2, ".U64"), (3, ".S64")];
const SHFL: &[(u64, &str)] = &[(0, ".IDX"), (1, ".UP"), (2, ".DOWN"), (3, ".BFLY")];
const VOTE: &[(u64, &str)] = &[(0, ".ALL"), (1, ".ANY"), (2, ".EQ")];
const BARRED: &[(u64, &str)] = &[(0, ".POPC"), (1, ".AND"), (2, ".OR")];
const MEMBAR: &[(u64, &str)] = &[(0, ".CTA"), (1, ".GL"), (2, ".SYS"), (3, ".VC")];
const IVALL: &[(u64, &str)] = &[(0, ""), (1, ".IVALLD"), (2, ".IVALLT"), (3, ".IVALLTD")];
const BPT: &[(u64, &str)] =
    &[(0, ".DRAIN_ILLEGAL"), (1, ".CAL"), (2, ".PAUSE"), (3, ".TRAP"), (4, ".INT"), (5, ".DRAIN")];
const CCTLOP: &[(u64, &str)] = &[(1, ".PF1"), (2, ".PF1.5"), (3, ".PF2")];

/// Condition-code tests (BRA/EXIT/... bits 0..4, CSETP bits 8..12; §1.4, `exp/sweeps.txt`);
/// 15 is "always" and prints nothing.
pub const CCTEST: &[(u64, &str)] = &[
    (0, ".F"),
    (1, ".LT"),
    (2, ".EQ"),
    (3, ".LE"),
    (4, ".GT"),
    (5, ".NE"),
    (6, ".GE"),
    (7, ".NUM"),
    (8, ".NAN"),
    (9, ".LTU"),
    (10, ".EQU"),
    (11, ".LEU"),
    (12, ".GTU"),
    (13, ".NEU"),
    (14, ".GEU"),
    (15, ""),
    (16, ".OFF"),
    (17, ".LO"),
    (18, ".SFF"),
    (19, ".LS"),
    (20, ".HI"),
    (21, ".SFT"),
    (22, ".HS"),
    (23, ".OFT"),
    (24, ".CSM_TA"),
    (25, ".CSM_TR"),
    (26, ".CSM_MX"),
    (27, ".FCSM_TA"),
    (28, ".FCSM_TR"),
    (29, ".FCSM_MX"),
    (30, ".RLE"),
    (31, ".RGT"),
];

/// CSETP's condition-code tests: as [`CCTEST`], but 15 prints `.T`.
const CSETPT: &[(u64, &str)] = &[
    (0, ".F"),
    (1, ".LT"),
    (2, ".EQ"),
    (3, ".LE"),
    (4, ".GT"),
    (5, ".NE"),
    (6, ".GE"),
    (7, ".NUM"),
    (8, ".NAN"),
    (9, ".LTU"),
    (10, ".EQU"),
    (11, ".LEU"),
    (12, ".GTU"),
    (13, ".NEU"),
    (14, ".GEU"),
    (15, ".T"),
    (16, ".OFF"),
    (17, ".LO"),
    (18, ".SFF"),
    (19, ".LS"),
    (20, ".HI"),
    (21, ".SFT"),
    (22, ".HS"),
    (23, ".OFT"),
    (24, ".CSM_TA"),
    (25, ".CSM_TR"),
    (26, ".CSM_MX"),
    (27, ".FCSM_TA"),
    (28, ".FCSM_TR"),
    (29, ".FCSM_MX"),
    (30, ".RLE"),
    (31, ".RGT"),
];

/// Special registers of S2R/CS2R (bits 20..27; `exp/sweeps.txt`). Codes not listed print
/// as `SRn`.
pub const SREGS: &[(u64, &str)] = &[
    (0x0, "SR_LANEID"),
    (0x1, "SR_CLOCK"),
    (0x2, "SR_VIRTCFG"),
    (0x3, "SR_VIRTID"),
    (0x4, "SR_PM0"),
    (0x5, "SR_PM1"),
    (0x6, "SR_PM2"),
    (0x7, "SR_PM3"),
    (0x8, "SR_PM4"),
    (0x9, "SR_PM5"),
    (0xa, "SR_PM6"),
    (0xb, "SR_PM7"),
    (0x10, "SR_PRIM_TYPE"),
    (0x11, "SR_INVOCATION_ID"),
    (0x12, "SR_Y_DIRECTION"),
    (0x13, "SR_THREAD_KILL"),
    (0x15, "SR_DIRECTCBEWRITEADDRESSLOW"),
    (0x16, "SR_DIRECTCBEWRITEADDRESSHIGH"),
    (0x17, "SR_DIRECTCBEWRITEENABLED"),
    (0x18, "SR_MACHINE_ID_0"),
    (0x19, "SR_MACHINE_ID_1"),
    (0x1a, "SR_MACHINE_ID_2"),
    (0x1b, "SR_MACHINE_ID_3"),
    (0x1c, "SR_AFFINITY"),
    (0x1d, "SR_INVOCATION_INFO"),
    (0x1e, "SR_WSCALEFACTOR_XY"),
    (0x1f, "SR_WSCALEFACTOR_Z"),
    (0x20, "SR_TID"),
    (0x21, "SR_TID.X"),
    (0x22, "SR_TID.Y"),
    (0x23, "SR_TID.Z"),
    (0x24, "SR_CTA_PARAM"),
    (0x25, "SR_CTAID.X"),
    (0x26, "SR_CTAID.Y"),
    (0x27, "SR_CTAID.Z"),
    (0x28, "SR_NTID"),
    (0x29, "SR_CirQueueIncrMinusOne"),
    (0x2a, "SR_NLATC"),
    (0x30, "SR_SWINLO"),
    (0x31, "SR_SWINSZ"),
    (0x32, "SR_SMEMSZ"),
    (0x33, "SR_SMEMBANKS"),
    (0x34, "SR_LWINLO"),
    (0x35, "SR_LWINSZ"),
    (0x36, "SR_LMEMLOSZ"),
    (0x37, "SR_LMEMHIOFF"),
    (0x38, "SR_EQMASK"),
    (0x39, "SR_LTMASK"),
    (0x3a, "SR_LEMASK"),
    (0x3b, "SR_GTMASK"),
    (0x3c, "SR_GEMASK"),
    (0x3d, "SR_REGALLOC"),
    (0x3e, "SR_CTXADDR"),
    (0x40, "SR_GLOBALERRORSTATUS"),
    (0x42, "SR_WARPERRORSTATUS"),
    (0x43, "SR_WARPERRORSTATUSCLEAR"),
    (0x48, "SR_PM_HI0"),
    (0x49, "SR_PM_HI1"),
    (0x4a, "SR_PM_HI2"),
    (0x4b, "SR_PM_HI3"),
    (0x4c, "SR_PM_HI4"),
    (0x4d, "SR_PM_HI5"),
    (0x4e, "SR_PM_HI6"),
    (0x4f, "SR_PM_HI7"),
    (0x50, "SR_CLOCKLO"),
    (0x51, "SR_CLOCKHI"),
    (0x52, "SR_GLOBALTIMERLO"),
    (0x53, "SR_GLOBALTIMERHI"),
    (0x60, "SR_HWTASKID"),
    (0x61, "SR_CIRCULARQUEUEENTRYINDEX"),
    (0x62, "SR_CIRCULARQUEUEENTRYADDRESSLOW"),
    (0x63, "SR_CIRCULARQUEUEENTRYADDRESSHIGH"),
];

/// TEX/TLD4 geometry (bits 28..30; nvdisasm 11.8 sweep of `TEX.B R8, R8, R0, 0x0, 2D, 0xf`).
const TEXDIM: &[(u64, &str)] = &[
    (0, "1D"),
    (1, "ARRAY_1D"),
    (2, "2D"),
    (3, "ARRAY_2D"),
    (4, "3D"),
    (5, "ARRAY_3D"),
    (6, "CUBE"),
    (7, "ARRAY_CUBE"),
];
/// TEXS geometry and level of detail (bits 53..56; 7 `TEXS.P R6, R4, R4, R6, 0x50,
/// ARRAY_2D, RGBA` 0xd8f0050060670404, ptxas 11.8 `probe_arrays.ptx` a2d): only the forms without a level
/// modifier (the others print `.LZ`/`.LL`/`.DC`, not modelled).
const TEXSDIM: &[(u64, &str)] = &[(1, "2D"), (7, "ARRAY_2D"), (10, "3D"), (12, "CUBE")];
/// TEXS.LL geometry (bits 53..56; ptxas 11.8: 3 `TEXS.LL.P R6, R4, R4, R6, 0x50, 2D, RGBA`
/// 0xd870050060670404 for `tex.level.2d`, docs/textures.md §1.6).
const TEXSLLDIM: &[(u64, &str)] = &[(3, "2D"), (13, "CUBE")];
/// TLDS.LZ geometry (bits 53..56; ptxas 11.8: 0 `TLDS.LZ.P R6, R4, R4, 0x50, 1D, RGBA`
/// for `tex.1d.v4.f32.s32`, 2 `... 2D` for `.2d`, 7 `TLDS.LZ.P R6, R4, R4, R5, 0x50, 3D,
/// RGBA` for `.3d`, 8 `TLDS.LZ.P R6, R4, R4, R6, 0x50, ARRAY_2D, RGBA` 0xdb10050060670404
/// for `tex.a2d.v4.f32.s32`).
const TLDSDIM: &[(u64, &str)] = &[(0, "1D"), (2, "2D"), (7, "3D"), (8, "ARRAY_2D")];
/// TLDS.LZ.MS geometry (bits 53..56; ptxas 11.8: 6 `TLDS.LZ.MS.P R6, R4, R4, R6, 0x50, 2D,
/// RGBA` 0xdad0050060670404 for `tex.2dms`, docs/textures.md §1.13).
const TLDSMSDIM: &[(u64, &str)] = &[(6, "2D")];
/// TEXS/TLDS channels written, one destination pair (`Rd2` = RZ; bits 50..52).
const TEXSR: &[(u64, &str)] = &[(0, "R"), (1, "G"), (2, "B"), (3, "A"), (4, "RG"), (5, "RA"), (6, "GA"), (7, "BA")];
/// TEXS/TLDS channels written, two destination pairs (`Rd2` != RZ; bits 50..52).
const TEXSRGBA: &[(u64, &str)] = &[(0, "RGB"), (1, "RGA"), (2, "RBA"), (3, "GBA"), (4, "RGBA")];
/// TLD4S/TLD4 component (TLD4S bits 52..53, TLD4 bits 38..39).
const TLD4C: &[(u64, &str)] = &[(0, ".R"), (1, ".G"), (2, ".B"), (3, ".A")];
/// TXQ queries (bits 22..27; the values nvdisasm 11.8 names).
const TXQQ: &[(u64, &str)] =
    &[(1, "TEX_HEADER_DIMENSION"), (2, "TEX_HEADER_TEXTURE_TYPE"), (5, "TEX_HEADER_SAMPLER_POS")];
/// SULD/SUST surface geometry (bits 33..35).
const SUDIM: &[(u64, &str)] =
    &[(0, ".1D"), (1, ".1D_BUFFER"), (2, ".1D_ARRAY"), (3, ".2D"), (4, ".2D_ARRAY"), (5, ".3D")];
/// SULD/SUST out-of-range mode (bits 49..50): PTX `.zero` → `.IGN`, `.clamp` → none,
/// `.trap` → `.TRAP` (ptxas 11.8, docs/textures.md).
const SUCLAMP: &[(u64, &str)] = &[(0, ".IGN"), (1, ""), (2, ".TRAP")];
/// SURED element type (bits 20..22, nvdisasm 11.8 sweep; 4 is printed
/// `INVALIDATOMICSIZE4`).
const SUREDTYPE: &[(u64, &str)] =
    &[(0, ""), (1, ".S32"), (2, ".U64"), (3, ".F32.FTZ.RN"), (5, ".S64"), (6, ".SD32"), (7, ".SD64")];
/// SUST.P component mask (bits 20..23; nvdisasm 11.8 prints none for all four).
const SUPMASK: &[(u64, &str)] = &[
    (1, ".R"),
    (2, ".G"),
    (3, ".RG"),
    (4, ".B"),
    (5, ".RB"),
    (6, ".GB"),
    (7, ".RGB"),
    (8, ".A"),
    (9, ".RA"),
    (10, ".GA"),
    (11, ".RGA"),
    (12, ".BA"),
    (13, ".RBA"),
    (14, ".GBA"),
    (15, ""),
];

/// The named enumeration tables of the templates.
pub fn enum_table(name: &str) -> Option<&'static [(u64, &'static str)]> {
    Some(match name {
        "ICMP" => ICMP,
        "TEXDIM" => TEXDIM,
        "TEXSDIM" => TEXSDIM,
        "TEXSLLDIM" => TEXSLLDIM,
        "TLDSDIM" => TLDSDIM,
        "TLDSMSDIM" => TLDSMSDIM,
        "TEXSR" => TEXSR,
        "TEXSRGBA" => TEXSRGBA,
        "TLD4C" => TLD4C,
        "TXQQ" => TXQQ,
        "SUDIM" => SUDIM,
        "SUCLAMP" => SUCLAMP,
        "SUPMASK" => SUPMASK,
        "SUREDTYPE" => SUREDTYPE,
        "FCMP" => FCMP,
        "BOOL" => BOOL,
        "RND" => RND,
        "LOP" => LOP,
        "LOPP" => LOPP,
        "XSIGN" => XSIGN,
        "XMODE" => XMODE,
        "SHFX" => SHFX,
        "FCMPT" => FCMPT,
        "REDOP9" => REDOP9,
        "ITYPE32" => ITYPE32,
        "F2ITYPE" => F2ITYPE,
        "F2FSAME" => F2FSAME,
        "VT" => VT,
        "VTSD" => VTSD,
        "VMODE" => VMODE,
        "XSB0" => XSB0,
        "XSB1" => XSB1,
        "XMODE2" => XMODE2,
        "PRMT" => PRMT,
        "MUFU" => MUFU,
        "IADD3M" => IADD3M,
        "IMNMXX" => IMNMXX,
        "SHFW" => SHFW,
        "FMZ" => FMZ,
        "FSCALE" => FSCALE,
        "FTYPE" => FTYPE,
        "ITYPE" => ITYPE,
        "F2IRND" => F2IRND,
        "F2FRND" => F2FRND,
        "RRO" => RRO,
        "SIZE" => SIZE,
        "SIZE6" => SIZE6,
        "LDSSIZE" => LDSSIZE,
        "LDCSIZE" => LDCSIZE,
        "LDCMODE" => LDCMODE,
        "LDCACHE" => LDCACHE,
        "STCACHE" => STCACHE,
        "LDLCACHE" => LDLCACHE,
        "ATOMOP" => ATOMOP,
        "REDOP" => REDOP,
        "ATOMTYPE" => ATOMTYPE,
        "ATOMSTYPE" => ATOMSTYPE,
        "SHFL" => SHFL,
        "VOTE" => VOTE,
        "BARRED" => BARRED,
        "MEMBAR" => MEMBAR,
        "IVALL" => IVALL,
        "CCTLOP" => CCTLOP,
        "BPT" => BPT,
        "CCT" => CCTEST,
        "CSETPT" => CSETPT,
        _ => return None,
    })
}

/// The forms, most specific first within an opcode (the encoder takes the first row whose
/// template accepts the text; the decoder the row with the most fixed bits that matches).
pub const ROWS: &[Row] = &[
    // ---- moves, selects, special registers --------------------------------------------
    B3(0x5c98, 0x4c98, 0x3898, 0xfff8, "MOV =39:4=15 : R@0, $B"),
    One(0x0100, 0xfff0, "MOV32I =12:4=15 : R@0, U32"),
    One(0xf0c8, 0xfff8, "S2R : R@0, SR"),
    One(0x50c8, 0xfff8, "CS2R : R@0, SR"),
    B3(0x5ca0, 0x4ca0, 0x38a0, 0xfff8, "SEL : R@0, R@8, $B, !42 P@39"),
    One(0xf0b8, 0xfff8, "B2R .RESULT =8:8=255 =32=1 : R@0, ?P@45"),
    // ---- integer ------------------------------------------------------------------------
    B3(0x5c10, 0x4c10, 0x3810, 0xfff8, "IADD [.SAT]50 [.X]43 ^48:2=3 : R@0 .CC@47, -49 R@8, -48 $B"),
    // Both negate bits set is `.PO` (plus one: a + b + 1), not `-a + -b` (nvdisasm 11.8).
    One(0x5c10, 0xfff8, "IADD .PO [.SAT]50 [.X]43 =48:2=3 : R@0 .CC@47, R@8, R@20"),
    One(0x4c10, 0xfff8, "IADD .PO [.SAT]50 [.X]43 =48:2=3 : R@0 .CC@47, R@8, C"),
    One(0x1c00, 0xfe00, "IADD32I [.SAT]54 [.X]53 =55=0 : R@0 .CC@52, -56 R@8, I32"),
    // The register form's half-word selects (31..36) are not modelled: fixed to 0. The
    // mode (.RS/.LS, 37..38) exists only there: the other forms hold B in 20..38. nvdisasm
    // prints the immediate form's 20-bit field unsigned (`IADD3 R3, R3, 0xffffc, -R4`).
    One(0x5cc0, 0xfff0, "IADD3 {IADD3M}37:2 [.X]48 =31:6=0 : R@0 .CC@47, -51 R@8, -50 R@20, -49 R@39"),
    One(0x4cc0, 0xfff0, "IADD3 [.X]48 : R@0 .CC@47, -51 R@8, -50 C, -49 R@39"),
    One(0x38c0, 0xfef0, "IADD3 [.X]48 : R@0 .CC@47, -51 R@8, U20, -49 R@39"),
    B3(0x5c18, 0x4c18, 0x3818, 0xfff8, "ISCADD ^48:2=3 : R@0 .CC@47, -49 R@8, -48 $B, U@39:5"),
    One(0x5c18, 0xfff8, "ISCADD .PO =48:2=3 : R@0 .CC@47, R@8, R@20, U@39:5"),
    One(0x4c18, 0xfff8, "ISCADD .PO =48:2=3 : R@0 .CC@47, R@8, C, U@39:5"),
    One(0x1400, 0xfc00, "ISCADD32I : R@0 .CC@52, R@8, I32, U@53:5"),
    B3(0x5bd0, 0x4bd0, 0x36d0, 0xfff8, "LEA [.X]46 : ?P@48, R@0 .CC@47, -45 R@8, $B, ?U@39:5"),
    One(0x5bd8, 0xfff8, "LEA .HI [.X]38 : ?P@48, R@0 .CC@47, -37 R@8, R@20, R@39, ?U@28:5"),
    One(0x1800, 0xfc00, "LEA .HI [.X]57 : ?P@48, R@0 .CC@47, -56 R@8, C, R@39, ?U@51:5"),
    One(
        0x5b00,
        0xffc0,
        "XMAD {XSIGN}48:2 [.PSL]36 {XMODE}50:3 [.MRG]37 [.X]38 : R@0 .CC@47, R@8 .H1@53, R@20 .H1@35, R@39",
    ),
    // The 16-bit immediate prints signed when B is `.S16` (bit 49).
    One(
        0x3600,
        0xfec0,
        "XMAD {XSB0}48 =49=0 [.PSL]36 {XMODE}50:3 [.MRG]37 [.X]38 : R@0 .CC@47, R@8 .H1@53, U@20:16, R@39",
    ),
    One(
        0x3600,
        0xfec0,
        "XMAD {XSB1}48 =49=1 [.PSL]36 {XMODE}50:3 [.MRG]37 [.X]38 : R@0 .CC@47, R@8 .H1@53, I@20:16, R@39",
    ),
    One(
        0x4e00,
        0xfe00,
        "XMAD {XSIGN}48:2 [.PSL]55 {XMODE2}50:2 [.MRG]56 [.X]54 : R@0 .CC@47, R@8 .H1@53, CS .H1@52, R@39",
    ),
    One(0x5100, 0xff80, "XMAD {XSIGN}48:2 {XMODE2}50:2 [.X]54 : R@0 .CC@47, R@8 .H1@53, R@39 .H1@52, C"),
    B3(0x5c48, 0x4c48, 0x3848, 0xfff8, "SHL [.W]39 [.X]43 : R@0 .CC@47, R@8, $B"),
    B3(0x5c28, 0x4c28, 0x3828, 0xfff8, "SHR [.U32]!48 [.W]39 [.X]44 [.BREV]40 : R@0 .CC@47, R@8, $B"),
    One(0x5bf8, 0xfff8, "SHF .L [.W]50 {SHFW}37:2 {SHFX}48:2 : R@0 .CC@47, R@8, R@20, R@39"),
    One(0x36f8, 0xfef8, "SHF .L [.W]50 {SHFW}37:2 {SHFX}48:2 : R@0 .CC@47, R@8, U@20:6, R@39"),
    One(0x5cf8, 0xfff8, "SHF .R [.W]50 {SHFW}37:2 {SHFX}48:2 : R@0 .CC@47, R@8, R@20, R@39"),
    One(0x38f8, 0xfef8, "SHF .R [.W]50 {SHFW}37:2 {SHFX}48:2 : R@0 .CC@47, R@8, U@20:6, R@39"),
    B3(0x5c40, 0x4c40, 0x3840, 0xfff8, "LOP {LOP}41:2 [.X]43 {LOPP}44:2 : ?P@48, R@0 .CC@47, ~39 R@8, ~40 $B"),
    One(0x0400, 0xfc00, "LOP32I {LOP}53:2 [.X]57 : R@0 .CC@52, ~55 R@8, U32 .INV@56"),
    One(0x5be0, 0xfff8, "LOP3 .LUT [.X]38 {LOPP}36:2 : ?P@48, R@0 .CC@47, R@8, R@20, R@39, U@28:8"),
    One(0x0200, 0xfe00, "LOP3 .LUT [.X]56 : R@0 .CC@47, R@8, C, R@39, U@48:8"),
    One(0x3c00, 0xfc00, "LOP3 .LUT [.X]57 : R@0 .CC@47, R@8, I20, R@39, U@48:8"),
    B3(0x5c20, 0x4c20, 0x3820, 0xfff8, "IMNMX [.U32]!48 {IMNMXX}43:2 : R@0 .CC@47, R@8, $B, !42 P@39"),
    B3(0x5c00, 0x4c00, 0x3800, 0xfff8, "BFE [.U32]!48 [.BREV]40 : R@0 .CC@47, R@8, $B"),
    B3(0x5bf0, 0x4bf0, 0x36f0, 0xfff8, "BFI : R@0 .CC@47, R@8, $B, R@39"),
    One(0x53f0, 0xfff8, "BFI : R@0 .CC@47, R@8, R@39, C"),
    B3(0x5c08, 0x4c08, 0x3808, 0xfff8, "POPC : R@0, ~40 $B"),
    B3(0x5c30, 0x4c30, 0x3830, 0xfff8, "FLO [.U32]!48 [.SH]41 : R@0 .CC@47, ~40 $B"),
    B3(0x5bc0, 0x4bc0, 0x36c0, 0xfff0, "PRMT {PRMT}48:4 : R@0, R@8, $B, R@39"),
    One(0x53c0, 0xfff0, "PRMT {PRMT}48:4 : R@0, R@8, R@39, C"),
    B3(0x5b60, 0x4b60, 0x3660, 0xfff0, "ISETP {ICMP}49:3 [.U32]!48 [.X]43 {BOOL}45:2 : P@3, P@0, R@8, $B, !42 P@39"),
    B3(0x5ba0, 0x4ba0, 0x36a0, 0xfff0, "FCMP {FCMPT}48:4 [.FTZ]47 : R@0, R@8, $F, R@39"),
    One(0x53a0, 0xfff0, "FCMP {FCMPT}48:4 [.FTZ]47 : R@0, R@8, R@39, C"),
    B3(0x5b40, 0x4b40, 0x3640, 0xfff0, "ICMP {ICMP}49:3 [.U32]!48 : R@0, R@8, $B, R@39"),
    One(0x5340, 0xfff0, "ICMP {ICMP}49:3 [.U32]!48 : R@0, R@8, R@39, C"),
    B3(
        0x5b50,
        0x4b50,
        0x3650,
        0xfff0,
        "ISET [.BF]44 {ICMP}49:3 [.U32]!48 [.X]43 {BOOL}45:2 : R@0 .CC@47, R@8, $B, !42 P@39",
    ),
    One(0x50a0, 0xfff8, "CSETP {CSETPT}8:5 {BOOL}45:2 : P@3, P@0, 'CC, !42 P@39"),
    One(0x5090, 0xfff8, "PSETP {BOOL}24:2 {BOOL}45:2 : P@3, P@0, !15 P@12, !32 P@29, !42 P@39"),
    One(0x5088, 0xfff8, "PSET [.BF]44 {BOOL}24:2 {BOOL}45:2 : R@0 .CC@47, !15 P@12, !32 P@29, !42 P@39"),
    // VABSDIFF with 32-bit operand selects (28..30 and 36..38 = 6) and a register B (50):
    // the forms ptxas 11.8 emits for `sad` (`exp/bitflip.txt`, raw nvdisasm sweeps).
    One(
        0x5400,
        0xff00,
        "VABSDIFF [.SD]54 {VT}48:2 [.SAT]55 {VMODE}51:3 =50=1 =28:3=6 =36:3=6 : R@0 .CC@47, R@8, R@20, R@39",
    ),
    // ---- float --------------------------------------------------------------------------
    B3(0x5c58, 0x4c58, 0x3858, 0xfff8, "FADD [.FTZ]44 {RND}39:2 [.SAT]50 : R@0 .CC@47, -48 |46 R@8, -45 |49 $F"),
    One(0x0800, 0xfc00, "FADD32I [.FTZ]55 =53=0 =57=0 : R@0 .CC@52, -56 |54 R@8, F32"),
    B3(0x5c68, 0x4c68, 0x3868, 0xfff8, "FMUL {FMZ}44:2 {FSCALE}41:3 {RND}39:2 [.SAT]50 : R@0 .CC@47, R@8, -48 $F"),
    One(0x1e00, 0xff00, "FMUL32I {FMZ}53:2 [.SAT]55 : R@0 .CC@52, R@8, F32"),
    B3(0x5980, 0x4980, 0x3280, 0xff80, "FFMA {FMZ}53:2 {RND}51:2 [.SAT]50 : R@0 .CC@47, R@8, -48 $F, -49 R@39"),
    One(0x5180, 0xff80, "FFMA {FMZ}53:2 {RND}51:2 [.SAT]50 : R@0 .CC@47, R@8, -48 R@39, -49 C"),
    One(0x0c00, 0xfc00, "FFMA32I {FMZ}53:2 [.SAT]55 : R@0 .CC@52, -56 R@8, F32, -57 R@0"),
    B3(0x5c60, 0x4c60, 0x3860, 0xfff8, "FMNMX [.FTZ]44 : R@0 .CC@47, -48 |46 R@8, -45 |49 $F, !42 P@39"),
    B3(
        0x5bb0,
        0x4bb0,
        0x36b0,
        0xfff0,
        "FSETP {FCMP}48:4 [.FTZ]47 {BOOL}45:2 : P@3, P@0, -43 |7 R@8, -6 |44 $F, !42 P@39",
    ),
    B3(
        0x5800,
        0x4800,
        0x3000,
        0xff00,
        "FSET [.BF]52 {FCMP}48:4 [.FTZ]55 {BOOL}45:2 : R@0 .CC@47, -43 |54 R@8, -53 |44 $F, !42 P@39",
    ),
    One(0x5080, 0xfff8, "MUFU {MUFU}20:4 [.SAT]50 : R@0, -48 |46 R@8"),
    B3(0x5c90, 0x4c90, 0x3890, 0xfff8, "RRO {RRO}39 : R@0, -45 |49 $F"),
    B3(0x5c70, 0x4c70, 0x3870, 0xfff8, "DADD {RND}39:2 : R@0 .CC@47, -48 |46 R@8, -45 |49 $D"),
    B3(0x5c80, 0x4c80, 0x3880, 0xfff8, "DMUL {RND}39:2 : R@0 .CC@47, R@8, -48 $D"),
    B3(0x5b70, 0x4b70, 0x3670, 0xfff0, "DFMA {RND}50:2 : R@0, R@8, -48 $D, -49 R@39"),
    One(0x5370, 0xfff0, "DFMA {RND}50:2 : R@0, R@8, -48 R@39, -49 C"),
    B3(0x5c50, 0x4c50, 0x3850, 0xfff8, "DMNMX : R@0 .CC@47, -48 |46 R@8, -45 |49 $D, !42 P@39"),
    B3(0x5b80, 0x4b80, 0x3680, 0xfff0, "DSETP {FCMP}48:4 {BOOL}45:2 : P@3, P@0, -43 |7 R@8, -6 |44 $D, !42 P@39"),
    B3(
        0x5900,
        0x4900,
        0x3200,
        0xff80,
        "DSET [.BF]52 {FCMP}48:4 {BOOL}45:2 : R@0 .CC@47, -43 |54 R@8, -53 |44 $D, !42 P@39",
    ),
    One(0x5c88, 0xfff8, "FCHK .DIVIDE =39:2=0 : P@3, R@8, R@20"),
    // Conversions: the immediate of F2I/F2F is a float of the source type (f32: F20, f64:
    // D20; f16 immediates are not modelled); I2F/I2I take an integer. nvdisasm prints the
    // constant-bank operand `c[..] [..]` for F2I, I2F and I2I, `c[..][..]` for F2F.
    One(0x5cb0, 0xfff8, "F2I [.FTZ]44 {F2ITYPE}8:2+12:1 {FTYPE}10:2 {F2IRND}39:2 =41=0 : R@0 .CC@47, -45 |49 R@20"),
    One(0x4cb0, 0xfff8, "F2I [.FTZ]44 {F2ITYPE}8:2+12:1 {FTYPE}10:2 {F2IRND}39:2 =41=0 : R@0 .CC@47, -45 |49 CS"),
    One(0x38b0, 0xfef8, "F2I [.FTZ]44 {F2ITYPE}8:2+12:1 .F32 =10:2=2 {F2IRND}39:2 =41=0 : R@0 .CC@47, F20"),
    One(0x38b0, 0xfef8, "F2I [.FTZ]44 {F2ITYPE}8:2+12:1 .F64 =10:2=3 {F2IRND}39:2 =41=0 : R@0 .CC@47, D20"),
    B3(0x5cb8, 0x4cb8, 0x38b8, 0xfff8, "I2F {FTYPE}8:2 {ITYPE}10:2+13:1 {RND}39:2 =41:2=0 : R@0 .CC@47, -45 |49 $S"),
    // Same-type F2F: integral rounding (bit 42). Mixed types: IEEE rounding; the constant
    // bank prints `c[..] [..]` when the source is F16. Mixed-type rows forbid the same-type
    // encodings, which print differently (`.PASS`).
    One(0x5ca8, 0xfff8, "F2F [.FTZ]44 .F32.F32 =8:4=10 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 R@20"),
    One(0x5ca8, 0xfff8, "F2F [.FTZ]44 .F64.F64 =8:4=15 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 R@20"),
    One(0x5ca8, 0xfff8, "F2F [.FTZ]44 .F16.F16 =8:4=5 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 R@20"),
    One(
        0x5ca8,
        0xfff8,
        "F2F [.FTZ]44 {FTYPE}8:2 {FTYPE}10:2 ^8:4=10 ^8:4=15 ^8:4=5 {RND}39:2 =42=0 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 R@20",
    ),
    One(0x4ca8, 0xfff8, "F2F [.FTZ]44 .F32.F32 =8:4=10 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 C"),
    One(0x4ca8, 0xfff8, "F2F [.FTZ]44 .F64.F64 =8:4=15 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 C"),
    One(0x4ca8, 0xfff8, "F2F [.FTZ]44 .F16.F16 =8:4=5 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 CS"),
    One(
        0x4ca8,
        0xfff8,
        "F2F [.FTZ]44 {FTYPE}8:2 .F16 =10:2=1 ^8:2=1 {RND}39:2 =42=0 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 CS",
    ),
    One(
        0x4ca8,
        0xfff8,
        "F2F [.FTZ]44 {FTYPE}8:2 {FTYPE}10:2 ^10:2=1 ^8:4=10 ^8:4=15 {RND}39:2 =42=0 [.SAT]50 =41=0 : R@0 .CC@47, -45 |49 C",
    ),
    One(0x38a8, 0xfef8, "F2F [.FTZ]44 .F32.F32 =8:4=10 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, F20"),
    One(0x38a8, 0xfef8, "F2F [.FTZ]44 .F64.F64 =8:4=15 {F2FSAME}39:2+42:1 [.SAT]50 =41=0 : R@0 .CC@47, D20"),
    One(0x38a8, 0xfef8, "F2F [.FTZ]44 {FTYPE}8:2 .F32 =10:2=2 ^8:2=2 {RND}39:2 =42=0 [.SAT]50 =41=0 : R@0 .CC@47, F20"),
    One(0x38a8, 0xfef8, "F2F [.FTZ]44 {FTYPE}8:2 .F64 =10:2=3 ^8:2=3 {RND}39:2 =42=0 [.SAT]50 =41=0 : R@0 .CC@47, D20"),
    B3(
        0x5ce0,
        0x4ce0,
        0x38e0,
        0xfff8,
        "I2I {ITYPE32}8:2+12:1 {ITYPE32}10:2+13:1 [.SAT]50 =41:2=0 : R@0 .CC@47, -45 |49 $S",
    ),
    // ---- memory -------------------------------------------------------------------------
    One(0xeed0, 0xfff8, "LDG [.E]45 {LDCACHE}46:2 {SIZE}48:3 : R@0, M@8/20:24"),
    One(0xeed8, 0xfff8, "STG [.E]45 {STCACHE}46:2 {SIZE6}48:3 : M@8/20:24, R@0"),
    One(0x8000, 0xe000, "LD [.E]52 {LDCACHE}56:2 {SIZE}53:3 : R@0, M@8/20:32, ?P@58"),
    One(0xa000, 0xe000, "ST [.E]52 {STCACHE}56:2 {SIZE6}53:3 : M@8/20:32, R@0, ?P@58"),
    // `.32` is printed only after `.U` (`LDS.U.32`, but `LDS R0, [R1]`).
    One(0xef48, 0xfff8, "LDS .U =44=1 {LDSSIZE}48:3 : R@0, M@8/20:24"),
    One(0xef48, 0xfff8, "LDS =44=0 {SIZE6}48:3 : R@0, M@8/20:24"),
    One(0xef58, 0xfff8, "STS {SIZE6}48:3 : M@8/20:24, R@0"),
    One(0xef40, 0xfff8, "LDL {LDLCACHE}44:2 {SIZE6}48:3 : R@0, M@8/20:24"),
    One(0xef50, 0xfff8, "STL {STCACHE}44:2 {SIZE6}48:3 : M@8/20:24, R@0"),
    One(0xef90, 0xfff8, "LDC {LDCSIZE}48:3 {LDCMODE}44:2 : R@0, K"),
    One(0xeef0, 0xfff0, "ATOM [.E]48 .CAS =49=0 : R@0, M@8/28:20, R@20, R@20+1"),
    One(0xeef0, 0xfff0, "ATOM [.E]48 .CAS .64 =49=1 : R@0, M@8/28:20, R@20, R@20+2"),
    One(0xed00, 0xff00, "ATOM [.E]48 {ATOMOP}52:4 {ATOMTYPE}49:3 : R@0, M@8/28:20, R@20"),
    One(0xee40, 0xfff0, "ATOMS .CAS =52=0 : R@0, M4@8/30:22, R@20, R@20+1"),
    One(0xee40, 0xfff0, "ATOMS .CAS .64 =52=1 : R@0, M4@8/30:22, R@20, R@20+2"),
    One(0xec00, 0xff00, "ATOMS {REDOP9}52:4 {ATOMSTYPE}28:2 : R@0, M4@8/30:22, R@20"),
    One(0xebf8, 0xfff8, "RED [.E]48 {REDOP}23:3 {ATOMTYPE}20:3 : M@8/28:20, R@0"),
    One(0xef60, 0xffe8, "CCTL [.E]52 {CCTLOP}0:4 : MU4@8/22:22"),
    One(0xef80, 0xfff8, "CCTLL {CCTLOP}0:4 : M4@8/22:22"),
    One(0xef10, 0xfff8, "SHFL {SHFL}30:2 =28=0 =29=0 : P@48, R@0, R@8, R@20, R@39"),
    One(0xef10, 0xfff8, "SHFL {SHFL}30:2 =28=1 =29=0 : P@48, R@0, R@8, U@20:5, R@39"),
    One(0xef10, 0xfff8, "SHFL {SHFL}30:2 =28=0 =29=1 : P@48, R@0, R@8, R@20, U@34:13"),
    One(0xef10, 0xfff8, "SHFL {SHFL}30:2 =28=1 =29=1 : P@48, R@0, R@8, U@20:5, U@34:13"),
    One(0x50d8, 0xfff8, "VOTE {VOTE}48:2 : ?R@0, P@45, !42 P@39"),
    // ---- textures and surfaces (docs/textures.md: ptxas 11.8 words, nvdisasm 11.8 sweeps) ---
    // Bound forms name the texture by a word index into constant bank 0 (36:13); bindless
    // `.B` forms take the handle in Rb (20) and print index `0x0`. `.P`/`.T` after the
    // opcode in cuobjdump's text are the control word's reuse bits B/A (`?reuse=`), not
    // instruction bits.
    One(0xd800, 0xfe00, "TEXS [.NODEP]49 =28:8=255 : 'RZ, R@0, R@8, ?R@20, U@36:13, {TEXSDIM}@53:4, {TEXSR}@50:3"),
    One(0xd800, 0xfe00, "TEXS [.NODEP]49 ^28:8=255 : R@28, R@0, R@8, ?R@20, U@36:13, {TEXSDIM}@53:4, {TEXSRGBA}@50:3"),
    // TEXS.LL (ptxas 11.8 `tex.level.2d`: 0xd870050060670404, 0xd860050ff0670400).
    One(
        0xd800,
        0xfe00,
        "TEXS .LL [.NODEP]49 =28:8=255 : 'RZ, R@0, R@8, ?R@20, U@36:13, {TEXSLLDIM}@53:4, {TEXSR}@50:3",
    ),
    One(
        0xd800,
        0xfe00,
        "TEXS .LL [.NODEP]49 ^28:8=255 : R@28, R@0, R@8, ?R@20, U@36:13, {TEXSLLDIM}@53:4, {TEXSRGBA}@50:3",
    ),
    One(0xda00, 0xfe00, "TLDS .LZ [.NODEP]49 =28:8=255 : 'RZ, R@0, R@8, ?R@20, U@36:13, {TLDSDIM}@53:4, {TEXSR}@50:3"),
    One(
        0xda00,
        0xfe00,
        "TLDS .LZ [.NODEP]49 ^28:8=255 : R@28, R@0, R@8, ?R@20, U@36:13, {TLDSDIM}@53:4, {TEXSRGBA}@50:3",
    ),
    // TLDS.LZ.MS (ptxas 11.8 `tex.2dms`: 0xdad0050060670404, 0xdac0050ff0670400).
    One(
        0xda00,
        0xfe00,
        "TLDS .LZ .MS [.NODEP]49 =28:8=255 : 'RZ, R@0, R@8, ?R@20, U@36:13, {TLDSMSDIM}@53:4, {TEXSR}@50:3",
    ),
    One(
        0xda00,
        0xfe00,
        "TLDS .LZ .MS [.NODEP]49 ^28:8=255 : R@28, R@0, R@8, ?R@20, U@36:13, {TLDSMSDIM}@53:4, {TEXSRGBA}@50:3",
    ),
    One(0xdf00, 0xffc0, "TLD4S {TLD4C}52:2 [.NODEP]49 =50:2=0 : R@28, R@0, R@8, R@20, U@36:13"),
    One(
        0xdeb8,
        0xfff8,
        "TEX .B =35:2=0 =37:3=0 =40=0 =41:8=0 [.NODEP]49 =50=0 : R@0, R@8, ?R@20, '0x0, {TEXDIM}@28:3, U@31:4",
    ),
    // TEX.B.LL: level 37:3 = 3, `{handle, level}` in the pair Rb (ptxas 11.8
    // `TEX.B.LL.P R8, R8, R6, 0x0, 2D, 0xf` 0xdeb80067a0670808).
    One(
        0xdeb8,
        0xfff8,
        "TEX .B .LL =35:2=0 =37:3=3 =40=0 =41:8=0 [.NODEP]49 =50=0 : R@0, R@8, R@20, '0x0, {TEXDIM}@28:3, U@31:4",
    ),
    One(
        0xdef8,
        0xfff8,
        "TLD4 {TLD4C}38:2 .B =35:3=0 =40=0 =41:8=0 [.NODEP]49 =50=0 : R@0, R@8, ?R@20, '0x0, {TEXDIM}@28:3, U@31:4",
    ),
    // Bound TEX / TLD.LZ / TLD4 (ptxas 11.8 for masks TEXS/TLDS/TLD4S cannot name:
    // `TEX.P R4, R6, 0x50, 2D, 0x5` 0xc0380502aff70604, `TLD.LZ.P R4, R6, 0x50, 2D, 0x5`
    // 0xdc380502aff70604, `TLD4.R.P R0, R4, 0x50, 2D, 0x2` 0xc83805012ff70400). nvdisasm 11.8
    // sweeps: TEX .NDV 35, .DC 50, .AOFFI 54, level 55:3 (.LZ .LB ...); TLD .AOFFI 35, .MS 50,
    // .CL 54, .LL 55, .B 56 (handle in Rb, index printed 0x0); TLD4 .NDV 35, .DC 50,
    // .AOFFI 54, .PTP 55, component 56:2.
    One(0xc038, 0xfc38, "TEX =35=0 [.NODEP]49 =50=0 =54:4=0 : R@0, R@8, ?R@20, U@36:13, {TEXDIM}@28:3, U@31:4"),
    // TEX.LL: level 55:3 = 3, the level in Rb (ptxas 11.8 `TEX.LL.P R4, R6, R5, 0x50, 2D,
    // 0x5` 0xc1b80502a0570604, `TEX.LL.P R4, R4, R5, 0x50, 3D, 0xf` 0xc1b80507c0570404).
    One(
        0xc038,
        0xfc38,
        "TEX .LL =35=0 [.NODEP]49 =50=0 =54=0 =55:3=3 : R@0, R@8, R@20, U@36:13, {TEXDIM}@28:3, U@31:4",
    ),
    One(0xdc38, 0xfe38, "TLD .LZ =35=0 [.NODEP]49 =50=0 =54:3=0 : R@0, R@8, ?R@20, U@36:13, {TEXDIM}@28:3, U@31:4"),
    One(
        0xdc38,
        0xfe38,
        "TLD .B .LZ =35=0 =36:13=0 [.NODEP]49 =50=0 =54:2=0 =56=1 : R@0, R@8, ?R@20, '0x0, {TEXDIM}@28:3, U@31:4",
    ),
    // TLD.LL.CL: bits 54 (.CL) and 55 (.LL), the level in Rb (bound) or `{handle, level}`
    // in the pair Rb (.B, bit 56). ptxas 11.8 `tex.level` with `.s32` coordinates
    // (`probe_geometries.ptx`, docs/textures.md §1.12): `TLD.LL.CL.P R4, R4, R6, 0x50, 2D,
    // 0xf` 0xdcf80507a0670404, `TLD.B.LL.CL.P R8, R8, R6, 0x0, 2D, 0xf` 0xddf80007a0670808.
    One(0xdc38, 0xfe38, "TLD .LL .CL =35=0 [.NODEP]49 =50=0 =54:3=3 : R@0, R@8, R@20, U@36:13, {TEXDIM}@28:3, U@31:4"),
    // TLD.LZ.MS: bit 50 (.MS), the sample in Rb (bound) or `{handle, sample}` (.B). ptxas
    // 11.8 `tex.2dms` (docs/textures.md §1.13): `TLD.LZ.MS.P R4, R4, R6, 0x50, 2D, 0x5`
    // 0xdc3c0502a0670404, `TLD.B.LZ.MS.P R8, R8, R6, 0x0, 2D, 0xf` 0xdd3c0007a0670808.
    One(0xdc38, 0xfe38, "TLD .LZ .MS =35=0 [.NODEP]49 =50=1 =54:3=0 : R@0, R@8, R@20, U@36:13, {TEXDIM}@28:3, U@31:4"),
    One(
        0xdc38,
        0xfe38,
        "TLD .B .LZ .MS =35=0 =36:13=0 [.NODEP]49 =50=1 =54:3=4 : R@0, R@8, R@20, '0x0, {TEXDIM}@28:3, U@31:4",
    ),
    One(
        0xdc38,
        0xfe38,
        "TLD .B .LL .CL =35=0 =36:13=0 [.NODEP]49 =50=0 =54:3=7 : R@0, R@8, R@20, '0x0, {TEXDIM}@28:3, U@31:4",
    ),
    One(
        0xc838,
        0xfc38,
        "TLD4 {TLD4C}56:2 =35=0 [.NODEP]49 =50=0 =54:2=0 : R@0, R@8, ?R@20, U@36:13, {TEXDIM}@28:3, U@31:4",
    ),
    // TXD (ptxas 11.8 `tex.grad`, docs/textures.md §1.11: `TXD.P R4, R4, R8, 0x50, 2D,
    // 0xf` 0xde380507a0870404, `TXD.B.P R8, R8, R12, 0x0, 2D, 0xf` 0xde780007a0c70808).
    // nvdisasm 11.8 sweeps: opcode 0xde38 under bits 50..63 but 54, `.AOFFI` 35, index
    // 36:13 (ignored with `.B`), `.NODEP` 49, `.B` 54; Rb (the gradients) is always read.
    One(0xde38, 0xfffc, "TXD =35=0 [.NODEP]49 : R@0, R@8, R@20, U@36:13, {TEXDIM}@28:3, U@31:4"),
    One(0xde78, 0xfffc, "TXD .B =35=0 =36:13=0 [.NODEP]49 : R@0, R@8, R@20, '0x0, {TEXDIM}@28:3, U@31:4"),
    One(0xdf48, 0xfff8, "TXQ [.NODEP]49 =50=0 =20:2=0 =28:3=0 : R@0, R@8, {TXQQ}@22:6, U@36:13, U@31:4"),
    One(0xdf50, 0xfff8, "TXQ .B [.NODEP]49 =50=0 =20:2=0 =28:3=0 =36:13=0 : R@0, R@8, {TXQQ}@22:6, '0x0, U@31:4"),
    One(
        0xeb00,
        0xffe0,
        "SULD .D =52=1 [.BA]23 {SUDIM}33:3 {LDCACHE}24:2 {SIZE6}20:3 {SUCLAMP}49:2 =26:7=0 =51=1 : R@0, A@8, U@36:13",
    ),
    One(
        0xeb00,
        0xffe0,
        "SULD .D =52=1 [.BA]23 {SUDIM}33:3 {LDCACHE}24:2 {SIZE6}20:3 {SUCLAMP}49:2 =26:7=0 =51=0 =36:3=0 =47:2=0 : R@0, A@8, R@39",
    ),
    One(
        0xeb20,
        0xffe0,
        "SUST .D =52=1 [.BA]23 {SUDIM}33:3 {STCACHE}24:2 {SIZE6}20:3 {SUCLAMP}49:2 =26:7=0 =51=1 : A@8, R@0, U@36:13",
    ),
    One(
        0xeb20,
        0xffe0,
        "SUST .D =52=1 [.BA]23 {SUDIM}33:3 {STCACHE}24:2 {SIZE6}20:3 {SUCLAMP}49:2 =26:7=0 =51=0 =36:3=0 =47:2=0 : A@8, R@0, R@39",
    ),
    // SUST.P (ptxas 11.8 `sust.p`, nvdisasm 11.8 sweep of 0xeb2c050600f70804): `.D` 52
    // clear, component mask 20:4 (R G B A; 0xf prints none, docs/textures.md §1.15).
    One(
        0xeb20,
        0xffe0,
        "SUST .P =52=0 {SUDIM}33:3 {STCACHE}24:2 {SUPMASK}20:4 {SUCLAMP}49:2 =26:7=0 =51=1 : A@8, R@0, U@36:13",
    ),
    One(
        0xeb20,
        0xffe0,
        "SUST .P =52=0 {SUDIM}33:3 {STCACHE}24:2 {SUPMASK}20:4 {SUCLAMP}49:2 =26:7=0 =51=0 =36:3=0 =47:2=0 : A@8, R@0, R@39",
    ),
    // SURED (nvdisasm 11.8 sweeps of ptxas 11.8's 0xeb5c050600870200, docs/textures.md
    // §1.9): operation 24:4 (REDOP), type 20:3 (SUREDTYPE), `.BA` 23 (clear for `sured.p`),
    // geometry, index or handle and clamp as SUST.
    One(
        0xeb40,
        0xffe0,
        "SURED .D =52=1 [.BA]23 {SUDIM}33:3 {REDOP}24:4 {SUREDTYPE}20:3 {SUCLAMP}49:2 =28:5=0 =51=1 : A@8, R@0, U@36:13",
    ),
    One(
        0xeb40,
        0xffe0,
        "SURED .D =52=1 [.BA]23 {SUDIM}33:3 {REDOP}24:4 {SUREDTYPE}20:3 {SUCLAMP}49:2 =28:5=0 =51=0 =36:3=0 =47:2=0 : A@8, R@0, R@39",
    ),
    // ---- control and synchronization ----------------------------------------------------
    One(0xe240, 0xfff0, "BRA [.U]7 [.LMT]6 =5=0 : ?CC@0, T"),
    One(0xe300, 0xfff0, "EXIT [.KEEPREFCOUNT]5 : ?CC@0"),
    One(0xe320, 0xfff0, "RET : ?CC@0"),
    One(0xe290, 0xfff0, "SSY noguard =0:6=0 : T"),
    One(0xe2a0, 0xfff0, "PBK noguard =0:6=0 : T"),
    One(0xe2b0, 0xfff0, "PCNT noguard =0:6=0 : T"),
    One(0xe260, 0xfff0, "CAL noguard =6=1 =0:6=0 : T"),
    // JCAL: an absolute 32-bit target, patched by R_CUDA_ABS32_20 (`exp/elf/k_call.cubin`).
    One(0xe220, 0xfff0, "JCAL noguard =6=1 =0:6=0 : U32"),
    // PRET pushes the return address for the indirect call (JMX) after it: ptxas 11.8
    // `0xe270000000800040` PRET `(.L_x_0)` before `BRX R2 -0x60 (*"INDIRECT_CALL"*)` (probe
    // `calls.ptx`); bit 6 as in CAL.
    One(0xe270, 0xfff0, "PRET noguard =6=1 =0:6=0 : T"),
    // JMX Ra: nvdisasm 11.8 `-b SM50` prints `0xe20000000007020f` as `JMX R2` (condition
    // code in 0..4 as BRA's; the offset field 20..43 is kept 0, the only value we emit).
    One(0xe200, 0xfff0, "JMX =20:24=0 : ?CC@0, R@8"),
    One(0xf0f8, 0xfff8, "SYNC : ?CC@0"),
    One(0xe340, 0xfff0, "BRK : ?CC@0"),
    One(0xe350, 0xfff0, "CONT : ?CC@0"),
    One(0xf0a8, 0xfff8, "BAR .SYNC =32:3=0 =43=1 =44=1 =39:4=7 : U@8:8, ?U@20:12"),
    One(0xf0a8, 0xfff8, "BAR .ARV =32:3=1 =43=1 =44=1 =39:4=7 : U@8:8, ?U@20:12"),
    One(0xf0a8, 0xfff8, "BAR .RED {BARRED}35:2 =32:3=2 =43=1 =44=1 : U@8:8, ?U@20:12, !42 P@39"),
    // Barrier id in Ra (bit 44 = 0) and/or thread count in Rb (bit 43 = 0): reference §1,
    // BAR row ("imm 8-15 if bit 44 = 1, else Ra 8-15; thread count: imm 20-31 if bit 43 =
    // 1, else Rb"); `bar.sync %r` / `bar.sync a, %r` (PTX ISA 9.7.13.1) lower to these.
    One(0xf0a8, 0xfff8, "BAR .SYNC =32:3=0 =43=1 =44=0 =39:4=7 : R@8, ?U@20:12"),
    One(0xf0a8, 0xfff8, "BAR .SYNC =32:3=0 =43=0 =44=1 =39:4=7 : U@8:8, R@20"),
    One(0xf0a8, 0xfff8, "BAR .SYNC =32:3=0 =43=0 =44=0 =39:4=7 : R@8, R@20"),
    One(0xf0a8, 0xfff8, "BAR .ARV =32:3=1 =43=1 =44=0 =39:4=7 : R@8, ?U@20:12"),
    One(0xf0a8, 0xfff8, "BAR .ARV =32:3=1 =43=0 =44=1 =39:4=7 : U@8:8, R@20"),
    One(0xf0a8, 0xfff8, "BAR .ARV =32:3=1 =43=0 =44=0 =39:4=7 : R@8, R@20"),
    One(0xf0a8, 0xfff8, "BAR .RED {BARRED}35:2 =32:3=2 =43=1 =44=0 : R@8, ?U@20:12, !42 P@39"),
    One(0xf0a8, 0xfff8, "BAR .RED {BARRED}35:2 =32:3=2 =43=0 =44=1 : U@8:8, R@20, !42 P@39"),
    One(0xf0a8, 0xfff8, "BAR .RED {BARRED}35:2 =32:3=2 =43=0 =44=0 : R@8, R@20, !42 P@39"),
    One(0xef98, 0xfff8, "MEMBAR {MEMBAR}8:2 {IVALL}0:2"),
    One(0xe3a0, 0xfff0, "BPT noguard {BPT}6:3 : U@20:20"),
    One(0x50b0, 0xfff8, "NOP =8:4=15 [.TRIG]13 : ?U@20:16"),
    One(0xf0f0, 0xfff8, "DEPBAR .LE =29=1 : SB@26, U@20:6"),
    One(0xf0f0, 0xfff8, "DEPBAR =29=0 : ?SBL@0"),
];
