//! Register operands of the texture and surface instructions (`TEXS TLDS TLD4S TEX TLD4
//! TXD TXQ SULD SUST`, `docs/textures.md`): which registers each one writes and reads, for
//! [`super::effects::effects`]. Their widths are not in the operand text: a texture result
//! fills as many consecutive registers as channels are written, coordinates take as many
//! as the geometry has.
//!
//! Sources (ptxas 11.8 probes, `tests/data/textures/`, read with nvdisasm 11.8):
//! * `TEXS Rd2, Rd, Ra, Rb, idx, 2D, RGBA` returns x, y in `Rd, Rd+1` and z, w in
//!   `Rd2, Rd2+1` (the four floats stored by `STG.E.128 [R2], R4` after `TEXS R6, R4, ...`);
//!   with `Rd2 = RZ` the one to two channels go to `Rd` (`TEXS RZ, R0, R0, R5, ..., R` then
//!   `STG.E [R2], R0`); 2D reads x in `Ra`, y in `Rb`; 3D reads x, y in `Ra, Ra+1` and z
//!   in `Rb` (`MOV R4, x; MOV R5, y; MOV R6, z; TEXS R6, R4, R4, R6, ..., 3D`);
//! * `TEX.B Rd, Ra, Rb, 0x0, dim, mask`: the written channels of `mask` packed into
//!   `Rd, Rd+1, ...` (`TEX.B R4, R10, R0, 0x0, 2D, 0x5` then `FADD R4, R4, R5`: x and z),
//!   coordinates in `Ra, Ra+1, ...` (2D: `R10, R11`; 3D: `R12, R13, R14`), handle in `Rb`;
//!   `TLD4.B` and `TXQ` likewise;
//! * `TXD Rd, Ra, Rb, idx, dim, mask`: results as `TEX`, coordinates in `Ra..` (`.B`:
//!   `{handle, x, y}`), gradients in the quad `Rb..` (`{dPdx.x, dPdy.x, dPdx.y, dPdy.y}`);
//! * `SULD Rd, [Ra], idx` / `SUST [Ra], Rd, idx`: coordinates in `Ra, Ra+1` for 2D
//!   (`MOV R4, x; MOV R5, y; SULD.D.BA.2D.TRAP R0, [R4], 0x50`), data of the access size.
//!
//! Array and cube coordinate counts (index first, PTX ISA 9.7.9.3) and the `.64`/`.128`
//! surface sizes are read from the PTX operand vectors, not from a probe.

use crate::sass::text::TextInstr;

/// Registers an instruction writes or reads: `(operand text, registers from it)`.
pub struct TexRegs<'a> {
    /// Destinations.
    pub writes: Vec<(&'a str, u16)>,
    /// Sources.
    pub reads: Vec<(&'a str, u16)>,
}

/// The texture/surface opcodes [`regs`] knows.
pub const OPCODES: &[&str] = &["TEXS", "TLDS", "TLD4S", "TEX", "TLD", "TLD4", "TXD", "TXQ", "SULD", "SUST", "SURED"];

fn is_reg(o: &str) -> bool {
    o.starts_with('R') && o[1..].chars().next().is_some_and(|c| c.is_ascii_digit() || c == 'Z')
}

/// Coordinates of a TEX/TLD4 geometry.
fn tex_coords(dim: &str) -> u16 {
    match dim {
        "1D" => 1,
        "2D" | "ARRAY_1D" => 2,
        "3D" | "ARRAY_2D" | "CUBE" => 3,
        _ => 4,
    }
}

/// Coordinates of a surface geometry modifier.
fn surface_coords(i: &TextInstr) -> u16 {
    i.mods
        .iter()
        .find_map(|m| match m.as_str() {
            "1D" | "1D_BUFFER" => Some(1),
            "1D_ARRAY" | "2D" => Some(2),
            "2D_ARRAY" | "3D" => Some(3),
            _ => None,
        })
        .unwrap_or(1)
}

/// Registers of a surface access's data.
fn surface_size(i: &TextInstr) -> u16 {
    if i.mods.iter().any(|m| m == "128") {
        4
    } else if i.mods.iter().any(|m| m == "64") {
        2
    } else {
        1
    }
}

/// The registers `i` writes and reads, or `None` for another opcode or a malformed
/// operand list (which the encoder rejects).
pub fn regs(i: &TextInstr) -> Option<TexRegs<'_>> {
    let o: Vec<&str> = i.operands.iter().map(String::as_str).collect();
    let mask = |t: &str| -> Option<u16> {
        let v = u16::from_str_radix(t.strip_prefix("0x")?, 16).ok()?;
        Some(v.count_ones() as u16)
    };
    let (writes, reads) = match i.opcode.as_str() {
        "TEXS" | "TLDS" => {
            let (ch, dim) = (*o.last()?, *o.get(o.len().checked_sub(2)?)?);
            let n = ch.len() as u16;
            let (rd2, rd, ra) = (*o.first()?, *o.get(1)?, *o.get(2)?);
            let w = if rd2 == "RZ" { vec![(rd, n)] } else { vec![(rd, 2), (rd2, n.checked_sub(2)?)] };
            // 3D and `TEXS.LL` 2D read x, y as the pair `Ra` (`TEXS.LL.P R6, R4, R4, R6, 0x50,
            // 2D, RGBA` after `MOV R4, x; MOV R5, y; MOV R6, level`, ptxas 11.8), and ARRAY_2D
            // `{index, x}` (`TEXS.P R6, R4, R4, R6, 0x50, ARRAY_2D, RGBA`, docs/textures.md §1.10).
            let ll = i.mods.iter().any(|m| m == "LL");
            let mut r = vec![(ra, if matches!(dim, "3D" | "ARRAY_2D") || ll { 2 } else { 1 })];
            if is_reg(o.get(3)?) {
                r.push((o[3], 1));
            }
            (w, r)
        }
        "TLD4S" => {
            let (rd2, rd, ra, rb) = (*o.first()?, *o.get(1)?, *o.get(2)?, *o.get(3)?);
            (vec![(rd, 2), (rd2, 2)], vec![(ra, 1), (rb, 1)])
        }
        // Bound `TEX R4, R6, 0x50, 2D, 0x5` (Rb = RZ not printed) and bindless `TEX.B R8, R8,
        // R2, 0x0, 2D, 0xf` (handle in Rb): ptxas 11.8, docs/textures.md §1.2.
        "TEX" | "TLD" | "TLD4" => {
            let (m, dim) = (mask(o.last()?)?, *o.get(o.len().checked_sub(2)?)?);
            let mut r = vec![(*o.get(1)?, tex_coords(dim))];
            if is_reg(o.get(2)?) {
                // `TEX.B.LL` reads `{handle, level}` as a pair (`TEX.B.LL.P R8, R8, R6, 0x0,
                // 2D, 0xf` after `MOV R7, level`, ptxas 11.8); bound `TEX.LL` the level.
                let pair = i.mods.iter().any(|m| m == "B") && i.mods.iter().any(|m| m == "LL");
                r.push((o[2], if pair { 2 } else { 1 }));
            }
            (vec![(*o.first()?, m)], r)
        }
        // `TXD R4, R4, R8, 0x50, 2D, 0xf`: the coordinates in `Ra..` (bindless `TXD.B R8, R8,
        // R12, 0x0, 2D, 0xf`: the handle first, then the coordinates, `R8..R10`) and the
        // gradients in `Rb..`, interleaved per axis: a quad for 2D and ARRAY_2D, a pair for
        // ARRAY_1D (ptxas 11.8 probe_grad.ptx, docs/textures.md §1.11).
        "TXD" => {
            let (m, dim) = (mask(o.last()?)?, *o.get(o.len().checked_sub(2)?)?);
            let handle = u16::from(i.mods.iter().any(|m| m == "B"));
            let grads = if matches!(dim, "1D" | "ARRAY_1D") { 2 } else { 4 };
            (vec![(*o.first()?, m)], vec![(*o.get(1)?, tex_coords(dim).saturating_add(handle)), (*o.get(2)?, grads)])
        }
        // TXQ.B reads the handle and the level as a pair (`TXQ.B R9, R6` after `MOV R7,
        // RZ`, ptxas 11.8 probe_refs.ptx kernel reg_surf); the bound form the level only.
        "TXQ" => {
            let n = if i.mods.iter().any(|m| m == "B") { 2 } else { 1 };
            (vec![(*o.first()?, mask(o.last()?)?)], vec![(*o.get(1)?, n)])
        }
        "SULD" => {
            let mut r = vec![(*o.get(1)?, surface_coords(i))];
            if is_reg(o.get(2)?) {
                r.push((o[2], 1));
            }
            (vec![(*o.first()?, surface_size(i))], r)
        }
        // SURED reads as SUST: coordinates, data (two registers for `.U64`), handle.
        "SUST" | "SURED" => {
            let data = if i.mods.iter().any(|m| m == "U64") {
                2
            } else if i.mods.iter().any(|m| m == "P") {
                // SUST.P: one register per component of its mask (none printed: four).
                i.mods
                    .iter()
                    .find(|m| !m.is_empty() && m.chars().all(|c| "RGBA".contains(c)))
                    .map_or(4, |m| m.len() as u16)
            } else {
                surface_size(i)
            };
            let mut r = vec![(*o.first()?, surface_coords(i)), (*o.get(1)?, data)];
            if is_reg(o.get(2)?) {
                r.push((o[2], 1));
            }
            (vec![], r)
        }
        _ => return None,
    };
    Some(TexRegs { writes, reads })
}
