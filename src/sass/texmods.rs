//! Modifiers of the texture and surface instructions (`TEXS TLDS TLD4S TEX TLD4 TXQ SULD
//! SUST`) and their operand text, which nvdisasm spells with trailing pseudo-operands
//! (`TEXS R6, R4, R4, R5, 0x50, 2D, RGBA`, `TXQ R0, R0, TEX_HEADER_DIMENSION, 0x50, 0x1`).
//! The spellings and operand orders are ptxas 11.8's (`docs/textures.md` §1.2, the encoder
//! rows in `sass::encode::table`).

use super::instr::{Instr, SrcKind};
use super::op::Op;

/// Geometry of a texture fetch as the SASS opcode names it. PTX `.1d` fetches with `.f32`
/// coordinates are 2D fetches at y = 0 (ptxas 11.8: `MOV R5, RZ` then `TEXS ... 2D`,
/// docs/textures.md §1.2); with `.s32` coordinates they are `1D` (`TLDS.LZ ... 1D`,
/// `TLD.LZ ... 1D`, `TLD.B.LZ ... 1D`, §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TexDim {
    /// `1D`: coordinate x (integer-coordinate fetches only).
    D1,
    /// `2D`: coordinates x, y.
    D2,
    /// `3D`: coordinates x, y, z.
    D3,
    /// `ARRAY_1D`: the array index (clamped to 16 bits), then x, in a register pair
    /// (ptxas 11.8 for `tex.a1d`: `I2I.U16.U32.SAT R4, index; MOV R5, x; TEX.P R4, R4,
    /// 0x50, ARRAY_1D, 0xf`; never `TEXS`, `probe_arrays.ptx`).
    A1,
    /// `ARRAY_2D`: the index, x, y; `TEXS`/`TLDS` read `{index, x}` in `Ra` and y in `Rb`
    /// (`TEXS.P R6, R4, R4, R6, 0x50, ARRAY_2D, RGBA`), `TEX`/`TLD` the three in `Ra..`.
    A2,
    /// `CUBE`: a direction x, y, z already divided by its largest magnitude (ptxas 11.8
    /// for `tex.cube`: `FMNMX`, `MUFU.RCP`, `FMUL` then `TEXS.P R6, R4, R4, R6, 0x50, CUBE,
    /// RGBA` with x, y in `Ra` and z in `Rb`, `TEX ... CUBE` with x, y, z in `Ra..`;
    /// docs/textures.md §1.13).
    Cube,
    /// `ARRAY_CUBE`: the index (clamped to 16 bits), then the projected x, y, z in `Ra..`
    /// (`TEX.P R4, R4, 0x50, ARRAY_CUBE, 0xf`; never `TEXS`).
    ACube,
}

impl TexDim {
    /// nvdisasm's spelling.
    pub fn name(self) -> &'static str {
        match self {
            TexDim::D1 => "1D",
            TexDim::D2 => "2D",
            TexDim::D3 => "3D",
            TexDim::A1 => "ARRAY_1D",
            TexDim::A2 => "ARRAY_2D",
            TexDim::Cube => "CUBE",
            TexDim::ACube => "ARRAY_CUBE",
        }
    }
}

/// Geometry of a surface access (`SULD`/`SUST` `.1D`/`.2D`/`.3D`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfDim {
    /// `.1D`: one coordinate (a byte offset).
    D1,
    /// `.2D`: x (bytes) and y (rows) in a register pair.
    D2,
    /// `.3D`: x (bytes), y (rows), z (planes) in consecutive registers (ptxas 11.8:
    /// `SULD.D.BA.3D.TRAP R0, [R4], 0x50` after `MOV R4, x; MOV R5, y; MOV R6, z`).
    D3,
    /// `.1D_ARRAY`: x (bytes), then the array index (ptxas 11.8 for `suld.b.a1d` `{index,
    /// x}`: `SULD.D.BA.1D_ARRAY.TRAP R0, [R4], 0x50` after `MOV R4, x; MOV R5, index`).
    A1d,
    /// `.2D_ARRAY`: x (bytes), y (rows), then the array index (`suld.b.a2d` `{index, x, y,
    /// _}`: `SULD.D.BA.2D_ARRAY.TRAP R0, [R4]` after `MOV R4, x; MOV R5, y; MOV R6, index`).
    A2d,
}

impl SurfDim {
    /// Coordinates it reads.
    pub fn coords(self) -> u8 {
        match self {
            SurfDim::D1 => 1,
            SurfDim::D2 | SurfDim::A1d => 2,
            SurfDim::D3 | SurfDim::A2d => 3,
        }
    }
}

/// Size of a `.D.BA` surface access, nvdisasm's spelling as for `LDG` (`SULD.D.BA.2D.U8`,
/// `.U16`, none for 32 bits, `.64`, `.128`; ptxas 11.8 for `suld.b.2d.b8`, `.b16`, `.b32`,
/// `.b64` and `.v2.b32`, `.v4.b32` and `.v2.b64`; docs/textures.md §1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfSize {
    /// One byte, zero-extended on load.
    U8,
    /// Two bytes, zero-extended on load.
    U16,
    /// One register.
    B32,
    /// Two registers.
    B64,
    /// Four registers.
    B128,
}

impl SurfSize {
    /// Bytes accessed.
    pub fn bytes(self) -> u32 {
        match self {
            SurfSize::U8 => 1,
            SurfSize::U16 => 2,
            SurfSize::B32 => 4,
            SurfSize::B64 => 8,
            SurfSize::B128 => 16,
        }
    }

    /// Registers of data.
    pub fn regs(self) -> u8 {
        match self {
            SurfSize::B64 => 2,
            SurfSize::B128 => 4,
            _ => 1,
        }
    }

    /// nvdisasm's modifier, with its dot (empty for 32 bits).
    pub fn name(self) -> &'static str {
        match self {
            SurfSize::U8 => ".U8",
            SurfSize::U16 => ".U16",
            SurfSize::B32 => "",
            SurfSize::B64 => ".64",
            SurfSize::B128 => ".128",
        }
    }
}

/// The operation of a surface reduction (`SURED`; PTX `sured.{b,p}.op`): nvdisasm 11.8
/// names bits 24..27 ADD MIN MAX INC DEC AND OR XOR (0..7); PTX has these five.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfRed {
    /// `.ADD` (0).
    Add,
    /// `.MIN` (1).
    Min,
    /// `.MAX` (2).
    Max,
    /// `.AND` (5).
    And,
    /// `.OR` (6).
    Or,
}

impl SurfRed {
    /// nvdisasm's modifier, with its dot.
    pub fn name(self) -> &'static str {
        match self {
            SurfRed::Add => ".ADD",
            SurfRed::Min => ".MIN",
            SurfRed::Max => ".MAX",
            SurfRed::And => ".AND",
            SurfRed::Or => ".OR",
        }
    }
}

/// The element type of a surface reduction (`SURED` bits 20..22, nvdisasm 11.8: none
/// (U32) 0, `.S32` 1, `.U64` 2; ptxas 11.8 gives `.b32` none, `.s32` `.S32`, `.u64`
/// `.U64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfRedType {
    /// 32-bit unsigned (or untyped: `.b32`).
    U32,
    /// 32-bit signed (`min`/`max` compare signed).
    S32,
    /// 64-bit unsigned, two registers of data.
    U64,
}

impl SurfRedType {
    /// nvdisasm's modifier, with its dot (empty for U32).
    pub fn name(self) -> &'static str {
        match self {
            SurfRedType::U32 => "",
            SurfRedType::S32 => ".S32",
            SurfRedType::U64 => ".U64",
        }
    }

    /// Bytes of the element.
    pub fn bytes(self) -> u32 {
        if self == SurfRedType::U64 { 8 } else { 4 }
    }
}

/// Out-of-range handling of a surface access: PTX `.zero` is `.IGN`, `.clamp` has no
/// suffix, `.trap` is `.TRAP` (ptxas 11.8, docs/textures.md §1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SurfClamp {
    /// `.IGN` (PTX `.zero`): loads return zero, stores are dropped.
    Ign,
    /// No suffix (PTX `.clamp`): coordinates are clamped to the surface.
    Clamp,
    /// `.TRAP`: an out-of-range access traps.
    Trap,
}

/// Texture channel letters in x, y, z, w order.
const CHANNELS: [char; 4] = ['R', 'G', 'B', 'A'];

/// The channel set of a TEXS/TLDS mask (bit k = component k), e.g. `RGBA`, `R`.
pub fn channel_text(mask: u8) -> String {
    (0..4).filter(|k| mask & (1 << k) != 0).map(|k| CHANNELS[k]).collect()
}

/// The modifiers of a texture or surface opcode after its mnemonic, or `None` for another
/// opcode.
pub fn suffix(op: &Op) -> Option<String> {
    Some(match *op {
        Op::Texs { ll, .. } => if ll { ".LL" } else { "" }.to_string(),
        Op::Tlds { ms, .. } => if ms { ".LZ.MS" } else { ".LZ" }.to_string(),
        Op::Tld4s { comp } => format!(".{}", CHANNELS[comp as usize & 3]),
        // nvdisasm 11.8: `TEX.LL`, `TEX.B.LL` (docs/textures.md §1.6).
        Op::Tex { bindless, ll, .. } => {
            format!("{}{}", if bindless { ".B" } else { "" }, if ll { ".LL" } else { "" })
        }
        // nvdisasm 11.8: `TLD.LZ` bound, `TLD.B.LZ` bindless (bit 56 of the word);
        // `TLD.LL.CL`, `TLD.B.LL.CL` (bits 54, 55; docs/textures.md §1.12).
        Op::Tld { bindless, ll, ms, .. } => format!(
            "{}{}",
            if bindless { ".B" } else { "" },
            match (ll, ms) {
                (true, _) => ".LL.CL",
                (false, true) => ".LZ.MS",
                (false, false) => ".LZ",
            }
        ),
        Op::Tld4 { comp, bindless, .. } => {
            format!(".{}{}", CHANNELS[comp as usize & 3], if bindless { ".B" } else { "" })
        }
        Op::Txq { bindless, .. } | Op::Txd { bindless, .. } => if bindless { ".B" } else { "" }.to_string(),
        Op::Suld { dim, clamp, size } | Op::Sust { dim, clamp, size } => {
            format!(".D.BA{}{}{}", surf_dim(dim), size.name(), surf_clamp(clamp))
        }
        // nvdisasm 11.8: `SURED.D.BA.2D.ADD.TRAP`, `SURED.D.BA.1D.ADD.U64.TRAP`,
        // `SURED.D.BA.2D.MIN.S32`, `SURED.D.2D.ADD.TRAP` (`sured.p`).
        // nvdisasm 11.8: `SUST.P.2D.TRAP` (mask 0xf), `SUST.P.1D.R.IGN`, `SUST.P.3D.RG`.
        Op::SustP { dim, clamp, mask } => {
            let m: String = "RGBA".chars().enumerate().filter(|(k, _)| mask & (1 << k) != 0).map(|(_, c)| c).collect();
            let m = if mask & 0xf == 0xf { String::new() } else { format!(".{m}") };
            format!(".P{}{m}{}", surf_dim(dim), surf_clamp(clamp))
        }
        Op::Sured { dim, clamp, red, ty, ba } => format!(
            ".D{}{}{}{}{}",
            if ba { ".BA" } else { "" },
            surf_dim(dim),
            red.name(),
            ty.name(),
            surf_clamp(clamp)
        ),
        _ => return None,
    })
}

fn surf_dim(dim: SurfDim) -> &'static str {
    match dim {
        SurfDim::D1 => ".1D",
        SurfDim::D2 => ".2D",
        SurfDim::D3 => ".3D",
        SurfDim::A1d => ".1D_ARRAY",
        SurfDim::A2d => ".2D_ARRAY",
    }
}

fn surf_clamp(clamp: SurfClamp) -> &'static str {
    match clamp {
        SurfClamp::Ign => ".IGN",
        SurfClamp::Clamp => "",
        SurfClamp::Trap => ".TRAP",
    }
}

/// The operand text of a texture or surface instruction in nvdisasm's order, from the
/// texts of its destinations and sources, or `None` for another opcode. Operand layouts
/// (the IR's, `lower::tex`):
/// * `TEXS/TLDS`: dsts `[Rd2 (or RZ), Rd]`, srcs `[Ra, Rb, index]` (`TLDS ... 1D`: `Rb` =
///   RZ, not printed; `TEXS.LL`: `Ra` = x, y, `Rb` = level);
/// * `TLD4S`: dsts `[Rd2, Rd]`, srcs `[Ra, Rb, index]`;
/// * `TEX/TLD/TLD4` (bound or `.B`): dsts `[Rd]`, srcs `[Ra (coordinates), index or Rb
///   (handle)]`; bound `TEX.LL`/`TLD.LL.CL` `[Ra, Rb (level), index]`, `TEX.B.LL`/`TLD.B.LL.CL` `[Ra, Rb (handle,
///   level)]`;
/// * `TXD`: dsts `[Rd]`, srcs bound `[Ra (coordinates), Rb (gradients), index]`, `.B`
///   `[Ra (handle, coordinates), Rb (gradients)]`;
/// * `TXQ`: dsts `[Rd]`, srcs `[Ra (level; bindless: handle and level), index]`;
/// * `SULD`: dsts `[Rd]`, srcs `[Ra (coordinates), index or handle register]`;
/// * `SUST`, `SURED`: srcs `[Ra (coordinates), data, index or handle register]`.
pub fn operands(i: &Instr, dst: &[String], src: &[String]) -> Option<String> {
    let s = |k: usize| src.get(k).cloned().unwrap_or_default();
    let d = |k: usize| dst.get(k).cloned().unwrap_or_default();
    // Bound: the index (`TEX R4, R6, 0x50, 2D, 0x5`); bindless: the handle register and
    // index 0x0 (`TEX.B R8, R8, R2, 0x0, 2D, 0xf`).
    let handle = |bindless: bool| if bindless { format!("{}, 0x0", s(1)) } else { s(1) };
    Some(match i.op {
        // nvdisasm omits an `Rb` of RZ (`TLDS.LZ R6, R4, R4, 0x50, 1D, RGBA`).
        Op::Texs { dim, chans, .. } | Op::Tlds { dim, chans, .. } => {
            let rb = if s(1) == "RZ" { String::new() } else { format!("{}, ", s(1)) };
            format!("{}, {}, {}, {rb}{}, {}, {}", d(0), d(1), s(0), s(2), dim.name(), channel_text(chans))
        }
        Op::Tld4s { .. } => format!("{}, {}, {}, {}, {}", d(0), d(1), s(0), s(1), s(2)),
        Op::Tex { dim, mask, bindless: false, ll: true }
        | Op::Tld { dim, mask, bindless: false, ll: true, .. }
        | Op::Tld { dim, mask, bindless: false, ms: true, .. } => {
            format!("{}, {}, {}, {}, {}, 0x{mask:x}", d(0), s(0), s(1), s(2), dim.name())
        }
        // `TLD.B.LL.CL R8, R8, R6, 0x0, 2D, 0xf`: `{handle, level}` in the pair Rb.
        Op::Tld { dim, mask, bindless: true, ll: true, .. } | Op::Tld { dim, mask, bindless: true, ms: true, .. } => {
            format!("{}, {}, {}, 0x0, {}, 0x{mask:x}", d(0), s(0), s(1), dim.name())
        }
        Op::Tex { dim, mask, bindless, .. } => {
            format!("{}, {}, {}, {}, 0x{mask:x}", d(0), s(0), handle(bindless), dim.name())
        }
        Op::Tld { dim, mask, bindless, .. } => {
            format!("{}, {}, {}, {}, 0x{mask:x}", d(0), s(0), handle(bindless), dim.name())
        }
        Op::Tld4 { mask, bindless, dim, .. } => {
            format!("{}, {}, {}, {}, 0x{mask:x}", d(0), s(0), handle(bindless), dim.name())
        }
        // nvdisasm 11.8: `TXD R4, R4, R8, 0x50, 2D, 0xf`, `TXD.B R8, R8, R12, 0x0, 2D, 0xf`.
        Op::Txd { dim, mask, bindless } => {
            let index = if bindless { "0x0".to_string() } else { s(2) };
            format!("{}, {}, {}, {index}, {}, 0x{mask:x}", d(0), s(0), s(1), dim.name())
        }
        Op::Txq { bindless, mask } => {
            let index = if bindless { "0x0".to_string() } else { s(1) };
            format!("{}, {}, TEX_HEADER_DIMENSION, {index}, 0x{mask:x}", d(0), s(0))
        }
        Op::Suld { .. } => format!("{}, [{}], {}", d(0), s(0), s(1)),
        Op::Sust { .. } | Op::Sured { .. } | Op::SustP { .. } => format!("[{}], {}, {}", s(0), s(1), s(2)),
        _ => return None,
    })
}

/// The texture or surface index a bound instruction names (a word index into constant
/// bank 0), or `None` for a bindless one (handle in a register) or another opcode.
pub fn bound_index(i: &Instr) -> Option<u32> {
    let k = match i.op {
        Op::Texs { .. } | Op::Tlds { .. } | Op::Tld4s { .. } => 2,
        Op::Tex { bindless: false, ll: true, .. }
        | Op::Tld { bindless: false, ll: true, .. }
        | Op::Tld { bindless: false, ms: true, .. }
        | Op::Txd { bindless: false, .. } => 2,
        Op::Tex { bindless: false, .. } | Op::Tld { bindless: false, .. } | Op::Tld4 { bindless: false, .. } => 1,
        Op::Txq { bindless: false, .. } | Op::Suld { .. } => 1,
        Op::Sust { .. } | Op::Sured { .. } | Op::SustP { .. } => 2,
        _ => return None,
    };
    match i.srcs.get(k)?.kind {
        SrcKind::Imm(v) => Some(v),
        _ => None,
    }
}
