//! Disassembly of `.text` bytes into our listing syntax: the printer's line format
//! (`/*0008*/  MOV R1, c[0x0][0x20]  ?WAIT6 ;`) with the control fields decoded from the
//! control words, so that [`crate::sass::text::parse`] and the hazard checker read the
//! result. Words no form matches print as `.word 0x...` with a warning.

use super::{ctrl_of, decode};
use crate::sass::program::Ctrl;
use std::collections::HashMap;
use std::fmt::Write;

/// One disassembled instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Byte address.
    pub addr: u32,
    /// The raw word.
    pub word: u64,
    /// Decoded text (without control fields), or `.word 0x...`.
    pub text: String,
    /// Control fields.
    pub ctrl: Ctrl,
    /// False for a word no form matches.
    pub known: bool,
}

/// The control fields as the listing prints them, with `?reuse=` when reuse bits are set
/// (bit 0 = A, 1 = B, 2 = C, 3 = D, the raw bits as `sass-ctrl.py` prints them).
pub fn ctrl_text(c: &Ctrl) -> String {
    let mut s = c.to_string();
    if c.reuse != 0 {
        s.push_str(" ?reuse=");
        for (b, l) in ['A', 'B', 'C', 'D'].iter().enumerate() {
            if c.reuse >> b & 1 == 1 {
                s.push(*l);
            }
        }
    }
    s
}

/// Decodes `bytes` (whole 32-byte bundles: a control word, then three instructions);
/// `relocs` maps the offset of a relocated word to the text of its patched immediate
/// (`32@lo(gvar)`). Errors: a length that is not a multiple of 32, or of 4 GiB or more.
pub fn disassemble(bytes: &[u8], relocs: &HashMap<u32, String>) -> Result<Vec<Line>, String> {
    if !bytes.len().is_multiple_of(32) {
        return Err(format!("code of {} bytes is not a whole number of 32-byte bundles", bytes.len()));
    }
    if u32::try_from(bytes.len()).is_err() {
        return Err(format!("code of {} bytes is beyond 4 GiB", bytes.len()));
    }
    let word = |w: &[u8]| w.try_into().map(u64::from_le_bytes).unwrap_or_default();
    let mut out = vec![];
    for (bundle, b) in bytes.chunks_exact(32).zip((0u32..).step_by(32)) {
        let (c, insts) = bundle.split_at(8);
        // Slot k's control fields are bits 21k..21k+20 of the control word
        // (`sm50-encoding-and-cubin.md` §2); its address is the bundle's plus 8 + 8k.
        for ((w, shift), addr) in insts.chunks_exact(8).zip([0, 21, 42]).zip((b..).step_by(8).skip(1)) {
            let w = word(w);
            let ctrl = ctrl_of(word(c).checked_shr(shift).unwrap_or(0) & 0x1f_ffff);
            let (text, known) = match decode(w, addr) {
                Some(mut d) => {
                    if let (Some(r), Some(last)) = (relocs.get(&addr), d.operands.last_mut()) {
                        *last = r.clone();
                    }
                    (d.text(), true)
                }
                None => (format!(".word 0x{w:016x}"), false),
            };
            out.push(Line { addr, word: w, text, ctrl, known });
        }
    }
    Ok(out)
}

/// The lines of one function as listing text (`\t\tFunction : NAME` header first, then
/// `\t// sh_info: N registers` with the section's register count `regs`, which `asm`
/// reads back; the name is not repeated there, since it may hold anything). `targets` are the indirect-branch targets of SYNC/BRK (the cubin's
/// EIATTR_INDIRECT_BRANCH_TARGETS): each target gets a label line `.L_x_N:` and the
/// instruction nvdisasm's note `(*"BRANCH_TARGETS .L_x_N"*)`, which the hazard checker
/// follows. A target at a bundle's address names the bundle's first instruction.
pub fn listing(name: &str, regs: u32, lines: &[Line], targets: &HashMap<u32, Vec<u32>>) -> String {
    let at = |t: u32| if t.is_multiple_of(32) { t.saturating_add(8) } else { t };
    let mut addrs: Vec<u32> = targets.values().flatten().map(|&t| at(t)).collect();
    addrs.sort_unstable();
    addrs.dedup();
    let label: HashMap<u32, String> = addrs.iter().enumerate().map(|(k, &a)| (a, format!(".L_x_{k}"))).collect();
    let mut s = format!("\t\tFunction : {name}\n\t// sh_info: {regs} registers\n");
    for l in lines {
        if let Some(lb) = label.get(&l.addr) {
            let _ = writeln!(s, "{lb}:");
        }
        let mut text = l.text.clone();
        if let Some(ts) = targets.get(&l.addr) {
            let names: Vec<&str> = ts.iter().filter_map(|&t| label.get(&at(t)).map(String::as_str)).collect();
            let _ = write!(text, " (*\"BRANCH_TARGETS {}\"*)", names.join(","));
        }
        let mut line = String::new();
        let _ = write!(line, "        /*{:04x}*/                   {}", l.addr, text);
        let pad = 72usize.saturating_sub(line.len()).max(1);
        let _ = writeln!(s, "{line}{} {} ;", " ".repeat(pad), ctrl_text(&l.ctrl));
    }
    s
}
