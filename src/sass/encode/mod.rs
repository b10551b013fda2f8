//! SPA 5.0 binary encoding: instruction words from the table of forms ([`table`], read in
//! both directions by [`form`]), control words, and whole functions as the bytes of a
//! `.text` section (`sm50-encoding-and-cubin.md` §1–§3).
//!
//! The encoder reads the listing ([`crate::sass::text`]) that the printer writes, so that
//! what is encoded is exactly what the listing shows, and the same path assembles a
//! listing edited by hand (`ptx2sass asm`). [`decode`] is its inverse (`ptx2sass disasm`).
// Listings (`asm`) and cubins (`disasm`) are hostile input: no panicking shortcuts here
// (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod disasm;
pub mod field;
pub mod form;
pub mod operand;
pub mod table;

use crate::sass::program::Ctrl;
use crate::sass::text::{Target, TextFunction, TextInstr};
use form::{AsmInstr, Decoded, Form, Reloc};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The expanded table: every form, indexed by opcode (encoding) and in decoding order.
pub struct Table {
    /// All forms, in table order.
    pub forms: Vec<Form>,
    by_opcode: HashMap<String, Vec<usize>>,
    decode_order: Vec<usize>,
}

fn expand(rows: &[table::Row]) -> Result<Vec<Form>, String> {
    let mut out = vec![];
    for r in rows {
        match *r {
            table::Row::One(op, mask, t) => out.push(Form::parse(op, mask, t)?),
            table::Row::B3(reg, cb, imm, mask, t) => {
                let sub = |to: [&str; 4], strip: bool| -> &'static str {
                    let mut ops: Vec<String> = vec![];
                    let (head, tail) = t.split_once(" : ").unwrap_or((t, ""));
                    for o in tail.split(',') {
                        let mut o = o.trim().to_string();
                        if o.contains('$') {
                            if strip {
                                o = o
                                    .split_whitespace()
                                    .filter(|w| !(w.starts_with('-') || w.starts_with('|') || w.starts_with('~')))
                                    .collect::<Vec<_>>()
                                    .join(" ");
                            }
                            o = o.replace("$B", to[0]).replace("$F", to[1]).replace("$D", to[2]).replace("$S", to[3]);
                        }
                        ops.push(o);
                    }
                    // Leaked once per process: the table is built once.
                    Box::leak(format!("{head} : {}", ops.join(", ")).into_boxed_str())
                };
                out.push(Form::parse(reg, mask, sub(["R@20"; 4], false))?);
                out.push(Form::parse(cb, mask, sub(["C", "C", "C", "CS"], false))?);
                out.push(Form::parse(imm, mask & !0x0100, sub(["I20", "F20", "D20", "I20"], true))?);
            }
        }
    }
    Ok(out)
}

/// The table, built on first use. Panics only if a template in [`table::ROWS`] is
/// malformed, which the unit tests rule out.
pub fn forms() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let forms = expand(table::ROWS).unwrap_or_else(|e| panic!("{e}"));
        let mut by_opcode: HashMap<String, Vec<usize>> = HashMap::new();
        for (k, f) in forms.iter().enumerate() {
            by_opcode.entry(f.opcode.clone()).or_default().push(k);
        }
        let mut decode_order: Vec<usize> = (0..forms.len()).collect();
        decode_order.sort_by_key(|&k| std::cmp::Reverse(forms.get(k).map_or(0, |f| f.mask.count_ones())));
        Table { forms, by_opcode, decode_order }
    })
}

/// Decodes one instruction word at byte address `addr`; `None` for a word no form
/// matches (printed `.word` by the disassembler).
pub fn decode(w: u64, addr: u32) -> Option<Decoded> {
    let t = forms();
    t.decode_order.iter().filter_map(|&k| t.forms.get(k)).find(|f| f.matches(w)).map(|f| f.decode(w, addr))
}

/// Encodes one instruction at byte address `addr`. Errors name the reason the closest
/// form rejected it.
pub fn encode(i: &AsmInstr, addr: u32, resolve: &dyn Fn(&str) -> Option<u32>) -> Result<(u64, Option<Reloc>), String> {
    let t = forms();
    let Some(ks) = t.by_opcode.get(i.opcode) else {
        return Err(format!("unknown opcode `{}`", i.opcode));
    };
    let mut errs = vec![];
    for f in ks.iter().filter_map(|&k| t.forms.get(k)) {
        match f.encode(i, addr, resolve) {
            Ok(x) => return Ok(x),
            Err(e) => errs.push(e),
        }
    }
    // The error of the form that got furthest: modifier errors are reported only when no
    // form took the modifiers.
    // A form whose operand kinds fit but whose value does not (range, alignment) explains
    // more than one that wanted another kind of operand.
    let best = errs
        .iter()
        .find(|e| e.starts_with("operand") && !e.contains(": expected"))
        .or_else(|| errs.iter().find(|e| e.starts_with("operand")))
        .or(errs.first())
        .cloned()
        .unwrap_or_default();
    Err(best)
}

/// The 21-bit control field of one instruction (`ptxas-sm50-findings.md` §7: stall 0..3,
/// yield 4 (0 = hint set), write barrier 5..7, read barrier 8..10 (7 = none), wait mask
/// 11..16, reuse 17..20).
pub fn ctrl_bits(c: &Ctrl) -> u64 {
    (c.stall as u64 & 0xf)
        | ((!c.yield_hint) as u64) << 4
        | (c.wr.unwrap_or(7) as u64 & 7) << 5
        | (c.rd.unwrap_or(7) as u64 & 7) << 8
        | (c.wait as u64 & 0x3f) << 11
        | (c.reuse as u64 & 0xf) << 17
}

/// The inverse of [`ctrl_bits`]; barrier index 7 is "none" (6 is kept as written).
pub fn ctrl_of(b: u64) -> Ctrl {
    let bar = |v: u64| if v == 7 { None } else { Some(v as u8) };
    Ctrl {
        stall: (b & 0xf) as u8,
        yield_hint: (b >> 4) & 1 == 0,
        wr: bar((b >> 5) & 7),
        rd: bar((b >> 8) & 7),
        wait: ((b >> 11) & 0x3f) as u8,
        reuse: ((b >> 17) & 0xf) as u8,
    }
}

/// ptxas's padding: `NOP` with control field 0x7e0 (stall 0, yield hint, no barriers;
/// `sm50-encoding-and-cubin.md` §2).
pub const NOP_WORD: u64 = 0x50b0000000070f00;
/// The control field of a padding NOP.
pub const NOP_CTRL: u64 = 0x7e0;

/// One function's code as the bytes of its `.text` section, and what the cubin's
/// `.nv.info` records need from it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Code {
    /// Control words and instruction words, little-endian, a multiple of 64 bytes.
    pub bytes: Vec<u8>,
    /// (byte offset of the instruction word, relocation).
    pub relocs: Vec<(u32, Reloc)>,
    /// Offsets of every `EXIT` (EIATTR_EXIT_INSTR_OFFSETS).
    pub exits: Vec<u32>,
    /// Offsets of every `S2R SR_CTAID.*` (EIATTR_S2RCTAID_INSTR_OFFSETS).
    pub s2r_ctaid: Vec<u32>,
    /// `SR_CTAID.Z` is read (EIATTR_CTAIDZ_USED).
    pub ctaid_z: bool,
    /// Highest barrier id + 1 of `BAR` with an immediate id (`.text` sh_flags bits 20..26).
    pub barriers: u32,
    /// Instruction words encoded (without padding).
    pub instrs: usize,
    /// Each `SYNC` (`BRK`) with the target of the `SSY` (`PBK`) it returns to, as ptxas
    /// lists them in EIATTR_INDIRECT_BRANCH_TARGETS (targets in ptxas's convention: a
    /// bundle's first instruction is named by the bundle's address).
    pub sync_targets: Vec<(u32, u32)>,
    /// Offsets of every `JMX` (an indirect call: EIATTR_INDIRECT_BRANCH_TARGETS lists it
    /// with kind 1, "kind_call", and no target, as ptxas 11.8 lists its `BRX` calls).
    pub indirect_calls: Vec<u32>,
    /// Deepest nesting of `SSY`/`PBK` regions (a region runs from the instruction to its
    /// target).
    pub crs_depth: u32,
}

/// An instruction that cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: `{text}`: {message}")]
pub struct EncodeError {
    /// Line in the listing.
    pub line: usize,
    /// The instruction.
    pub text: String,
    /// Why.
    pub message: String,
}

/// Byte address of instruction `k` of a function: a control word before every three.
pub fn address(k: usize) -> u32 {
    // k + k/3 + 1 words of 8 bytes; beyond 4 GiB (no real listing) it stays at u32::MAX,
    // which no instruction's `/*addr*/` matches.
    let words = k.saturating_add(k / 3).saturating_add(1);
    u32::try_from(words.saturating_mul(8)).unwrap_or(u32::MAX)
}

/// Encodes one function of a listing. Instructions must sit at their natural addresses
/// (`/*0008*/`, `/*0010*/`, ...); branch targets are addresses or labels of the listing.
/// A target at the first instruction of a bundle is encoded as the bundle's own address,
/// as ptxas does (§3). The code is padded with NOPs to a multiple of 64 bytes, as ptxas
/// pads every `.text` section.
pub fn encode_function(f: &TextFunction) -> Result<Code, Vec<EncodeError>> {
    let mut labels: HashMap<&str, u32> = HashMap::new();
    for (l, &k) in &f.labels {
        labels.insert(l.as_str(), address(k));
    }
    let resolve = |l: &str| labels.get(l).copied();
    let mut code = Code::default();
    let mut errors = vec![];
    let mut words: Vec<(u64, u64)> = vec![];
    for (k, i) in f.instrs.iter().enumerate() {
        let addr = address(k);
        let err = |m: String| EncodeError { line: i.line, text: i.text.clone(), message: m };
        if i.addr != addr {
            errors.push(err(format!(
                "at address 0x{:x}, expected 0x{addr:x} (instructions must be consecutive)",
                i.addr
            )));
            continue;
        }
        match encode_text(i, addr, &resolve) {
            Ok((w, reloc)) => {
                if let Some(r) = reloc {
                    code.relocs.push((addr, r));
                }
                note(&mut code, i, addr);
                words.push((w, ctrl_bits(&i.ctrl)));
            }
            Err(m) => errors.push(err(m)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    code.instrs = words.len();
    crs_regions(&mut code, f);
    while !words.len().is_multiple_of(3) || !(words.len() / 3).is_multiple_of(2) {
        words.push((NOP_WORD, NOP_CTRL));
    }
    for b in words.chunks_exact(3) {
        // Slot k's 21 control bits at bit 21k (§2).
        let ctrl = b.iter().zip([0, 21, 42]).fold(0u64, |c, (&(_, f), at)| c | f.checked_shl(at).unwrap_or(0));
        code.bytes.extend_from_slice(&ctrl.to_le_bytes());
        for (w, _) in b {
            code.bytes.extend_from_slice(&w.to_le_bytes());
        }
    }
    Ok(code)
}

/// Encodes one listing instruction.
pub fn encode_text(
    i: &TextInstr,
    addr: u32,
    resolve: &dyn Fn(&str) -> Option<u32>,
) -> Result<(u64, Option<Reloc>), String> {
    let mut operands = i.operands.clone();
    // nvdisasm's branch-target notes on SYNC/BRK are comments, not operands.
    operands.retain(|o| !o.starts_with("(*"));
    if let (Some(Target::Label(l)), Some(last)) = (&i.target, operands.last_mut())
        && matches!(i.opcode.as_str(), "BRA" | "SSY" | "PBK" | "CAL" | "PCNT" | "PRET")
        && last.contains(l.as_str())
    {
        *last = l.clone();
    }
    let a = AsmInstr {
        guard: i.guard.as_ref().map(|(n, p)| (*n, p.as_str())),
        opcode: &i.opcode,
        mods: &i.mods,
        operands: &operands,
    };
    encode(&a, addr, resolve)
}

/// The `SSY`/`PBK` regions of `f`: which `SSY` each `SYNC` returns to and which `PBK`
/// each `BRK` leaves to (the innermost region of that kind open at the instruction: our
/// reconvergence code is structured, regions nest), and the deepest nesting. One sweep in
/// address order with a stack of open regions.
fn crs_regions(code: &mut Code, f: &TextFunction) {
    let target_of = |i: &TextInstr| -> Option<u32> {
        match &i.target {
            Some(Target::Addr(a)) => Some(*a),
            Some(Target::Label(l)) => f.labels.get(l).map(|&k| address(k)),
            None => None,
        }
    };
    // (target, is SSY)
    let mut open: Vec<(u32, bool)> = vec![];
    for (k, i) in f.instrs.iter().enumerate() {
        let a = address(k);
        while open.last().is_some_and(|r| r.0 <= a) {
            open.pop();
        }
        match i.opcode.as_str() {
            "SSY" | "PBK" => {
                if let Some(t) = target_of(i).filter(|t| *t > a) {
                    // Regions nest: one that ends after an enclosing one is clipped to it.
                    let t = open.last().map_or(t, |r| t.min(r.0));
                    open.push((t, i.opcode == "SSY"));
                    code.crs_depth = code.crs_depth.max(open.len() as u32);
                }
            }
            "SYNC" | "BRK" => {
                let ssy = i.opcode == "SYNC";
                if let Some(&(t, _)) = open.iter().rev().find(|r| r.1 == ssy) {
                    code.sync_targets.push((a, if t % 32 == 8 { t.saturating_sub(8) } else { t }));
                }
            }
            _ => {}
        }
    }
}

fn note(code: &mut Code, i: &TextInstr, addr: u32) {
    match i.opcode.as_str() {
        "EXIT" => code.exits.push(addr),
        "JMX" => code.indirect_calls.push(addr),
        "S2R" if i.operands.get(1).is_some_and(|o| o.starts_with("SR_CTAID")) => {
            code.s2r_ctaid.push(addr);
            code.ctaid_z |= i.operands.get(1).is_some_and(|o| o == "SR_CTAID.Z");
        }
        "BAR" => {
            if let Some(id) = i.operands.first().and_then(|o| form::parse_int(o)) {
                code.barriers = code.barriers.max((id as u32).saturating_add(1));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests;
