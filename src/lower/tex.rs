//! Texture and surface instructions (`tex`, `tld4`, `txq`, `suq`, `suld`, `sust`, `sured`;
//! issue 18). The front end parses and checks every form (`crate::ptx::texture`); none is
//! lowered yet. What ptxas 11.8 emits for each form (TEXS/TEX.B/TLDS/TLD4S/TXQ/SULD/SUST,
//! bound index `c[0x0]` word or bindless handle register, write masks, scoreboards) is in
//! `docs/textures.md`, the plan for this lowering.

use super::ctx::{LResult, Lowerer};
use crate::diag::Diag;
use crate::ptx::ast::Instruction;
use crate::ptx::texture::{self, Family};

impl Lowerer<'_> {
    /// Reports a texture or surface instruction as not supported yet, naming its form and
    /// what ptxas emits for it (a precise diagnostic at the instruction, never a panic).
    pub(super) fn lower_texture(&mut self, i: &Instruction) -> LResult<()> {
        // The classifier accepted the instruction, so it decodes; a failure here would be
        // a front-end bug, reported as the same error.
        let what = match texture::decode(i) {
            Ok(t) => match t.family {
                Family::Tex => "texture fetch (ptxas: TEXS, TEX.B, TLDS)",
                Family::Tld4 => "texture gather (ptxas: TLD4S, TLD4.B)",
                Family::Txq => "texture query (ptxas: TXQ)",
                Family::Suq => "surface query",
                Family::Suld => "surface load (ptxas: SULD.D.BA)",
                Family::Sust => "surface store (ptxas: SUST.D.BA)",
                Family::Sured => "surface reduction",
            },
            Err(_) => "texture or surface instruction",
        };
        let mut text = i.opcode.name.clone();
        for m in &i.mods {
            text.push_str(&m.text);
        }
        self.fail(
            Diag::error(i.opcode.span, format!("not supported yet: `{text}`, a {what}"))
                .label("no SPA 5.0 lowering for textures and surfaces yet")
                .note("ptx2sass parses and checks texture and surface instructions; lowering them is issue 18's next step (docs/textures.md)"),
        )
    }
}
