//! Loads a whole SASS listing as a [`Program`] the simulator can run (`ptx2sass run
//! --sass`): ptx2sass's own output, `../shared/tools/sass-ctrl.py` output, or raw
//! `nvdisasm -hex` output of a cubin (the only one that carries every fact a launch needs:
//! with it, a listing runs without the PTX).
//!
//! The code comes from [`super::text::parse`] and [`crate::sass::asm::assemble`]. The facts a
//! launch needs besides the code, and where each comes from (first found wins):
//!
//! | fact | nvdisasm data sections | ptx2sass header | `reference` (the PTX compiled by ptx2sass) |
//! |---|---|---|---|
//! | kernels | `.other K,@"STO_CUDA_ENTRY ..."` | `// .entry K:` | its `.entry` functions |
//! | registers | `.sectioninfo @"SHI_REGISTERS=N"` | `N registers` | - |
//! | parameters | `EIATTR_KPARAM_INFO` of `.nv.info.K` | `//   c[0x0][0x140] .u64 name` | its parameters (preferred: typed) |
//! | local bytes per thread | `EIATTR_FRAME_SIZE`/`MIN_STACK_SIZE` | `F bytes stack frame` | prologue `IADD32I R1, R1, -N` |
//! | static shared bytes | `.nv.shared.K` (absent: none) | `H bytes shared` | its shared size |
//! | constant bank 3 (`.const`) | `.nv.constant3` | - | its bank 3 and variables |
//! | constant bank 2 (compiler constants) | `.nv.constant2.K` | - | - |
//!
//! A listing printed with `nvdisasm -c` (code only, as `sass-ctrl.py` does) has no bank 2:
//! a kernel that reads `c[0x2][..]` then fails when it runs, naming the missing section.
//! The future `--cubin` input (the encoder's cubin reader) can fill the same
//! [`ListingFacts`] directly.

use crate::sass::asm::assemble;
use crate::sass::instr::SrcKind;
use crate::sass::program::{Program, SassFunction, Scheduled};
use crate::sass::text::{self, Target, TextFunction};
use std::collections::HashMap;

/// A listing that cannot be loaded: the line and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LoadError {
    /// 1-based line in the listing (0 when not tied to one).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Facts of one function found outside its code.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionFacts {
    /// `.entry` (from `STO_CUDA_ENTRY` or a ptx2sass header).
    pub entry: bool,
    /// Registers per thread.
    pub regs: Option<u32>,
    /// Local memory bytes per thread (frame and callee frames).
    pub local_bytes: Option<u32>,
    /// Static shared memory bytes.
    pub shared_bytes: Option<u32>,
    /// Parameters: (offset in bank 0, type such as `.u64` or `.b8[16]`, name).
    pub params: Option<Vec<(u32, String, String)>>,
    /// Constant bank 2 contents.
    pub bank2: Option<Vec<u8>>,
}

/// Facts of a listing found outside the code: per function, and the module's constant
/// bank 3.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListingFacts {
    /// By function name.
    pub functions: HashMap<String, FunctionFacts>,
    /// Constant bank 3 contents (`.nv.constant3`).
    pub bank3: Option<Vec<u8>>,
    /// The listing has nvdisasm data sections, so an absent `.nv.shared.K` means no shared
    /// memory.
    pub has_sections: bool,
}

/// Little-endian bytes of one data directive (`.byte 0x04, 0x2f`, `.short 0x0140`,
/// `.word 0x00000012`, `.dword ...`, `.zero 372`); None for symbolic values.
fn directive_bytes(d: &str) -> Option<Vec<u8>> {
    let (kind, args) = d.split_once(char::is_whitespace).unwrap_or((d, ""));
    let nums = || -> Option<Vec<u64>> {
        args.split(',')
            .map(|a| {
                let a = a.trim();
                a.strip_prefix("0x").map_or_else(|| a.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
            })
            .collect()
    };
    let width = match kind {
        ".byte" => 1,
        ".short" => 2,
        ".word" => 4,
        ".dword" => 8,
        ".zero" => return Some(vec![0; nums()?.first().copied()? as usize]),
        _ => return None,
    };
    Some(nums()?.into_iter().flat_map(|v| v.to_le_bytes().into_iter().take(width)).collect())
}

/// Reads the facts of `listing` (module docs).
pub fn facts(listing: &str) -> ListingFacts {
    let mut f = ListingFacts::default();
    let mut section = String::new();
    let mut attr = String::new();
    // Per-section data words, and the symbol of the last `.word index@(NAME)`.
    let mut data: Vec<u8> = vec![];
    let mut index_of: Option<String> = None;
    let mut kparam: Vec<(u32, u32, u32)> = vec![];
    let flush = |f: &mut ListingFacts, section: &str, data: &mut Vec<u8>, kparam: &mut Vec<(u32, u32, u32)>| {
        let d = std::mem::take(data);
        if let Some(k) = section.strip_prefix(".nv.constant2.") {
            f.functions.entry(k.to_string()).or_default().bank2 = Some(d);
        } else if section == ".nv.constant3" {
            f.bank3 = Some(d);
        } else if let Some(k) = section.strip_prefix(".nv.shared.") {
            f.functions.entry(k.to_string()).or_default().shared_bytes = Some(d.len() as u32);
        } else if let Some(k) = section.strip_prefix(".nv.info.")
            && !kparam.is_empty()
        {
            kparam.sort();
            let params = kparam
                .iter()
                .map(|&(ord, off, size)| {
                    let ty = match size {
                        1 | 2 | 4 | 8 => format!(".b{}", size * 8),
                        n => format!(".b8[{n}]"),
                    };
                    (0x140 + off, ty, format!("p{ord}"))
                })
                .collect();
            f.functions.entry(k.to_string()).or_default().params = Some(params);
        }
        kparam.clear();
    };
    let mut kp_words: Vec<u8> = vec![];
    // The function of the last ptx2sass header: its parameter lines follow it.
    let mut header: Option<String> = None;
    for raw in listing.lines() {
        let line = raw.trim();
        if let Some(sec) = line.strip_prefix(".section").filter(|r| r.starts_with(char::is_whitespace)) {
            flush(&mut f, &section, &mut data, &mut kparam);
            section = sec.trim().split(',').next().unwrap_or("").to_string();
            f.has_sections = true;
            attr.clear();
            continue;
        }
        if let Some(a) = line.strip_prefix("//----- nvinfo :") {
            attr = a.trim().to_string();
            kp_words.clear();
            continue;
        }
        if let Some(info) = line.strip_prefix(".sectioninfo") {
            if let (Some(k), Some(n)) = (
                section.strip_prefix(".text."),
                info.split("SHI_REGISTERS=").nth(1).and_then(|n| n.trim_end_matches('"').parse::<u32>().ok()),
            ) {
                f.functions.entry(k.to_string()).or_default().regs = Some(n);
            }
            continue;
        }
        if line.starts_with(".other") && line.contains("STO_CUDA_ENTRY") {
            if let Some(name) = line.split_whitespace().nth(1).and_then(|n| n.split(',').next()) {
                f.functions.entry(name.to_string()).or_default().entry = true;
            }
            continue;
        }
        // `// .entry K: 12 registers, 64 bytes stack frame (0 spill), 1024 bytes shared`
        if let Some(h) = line.strip_prefix("// .entry ").or_else(|| line.strip_prefix("// .func ")) {
            if let Some((name, rest)) = h.split_once(':') {
                let num = |what: &str| {
                    rest.split(',').find(|p| p.contains(what)).and_then(|p| p.split_whitespace().next()?.parse().ok())
                };
                let e = f.functions.entry(name.trim().to_string()).or_default();
                header = Some(name.trim().to_string());
                e.entry = line.starts_with("// .entry");
                e.regs = num("registers");
                e.local_bytes = num("stack frame");
                e.shared_bytes = num("shared");
            }
            continue;
        }
        // `//   c[0x0][0x140]  .u64     name` (parameters of the last ptx2sass header)
        if let Some(p) = line.strip_prefix("//   c[0x0][0x") {
            let mut w = p.split_whitespace();
            if let (Some(off), Some(ty), Some(name)) = (w.next(), w.next(), w.next())
                && let Ok(off) = u32::from_str_radix(off.trim_end_matches(']'), 16)
                && let Some(last) = &header
            {
                f.functions.entry(last.clone()).or_default().params.get_or_insert_with(Vec::new).push((
                    off,
                    ty.to_string(),
                    name.to_string(),
                ));
            }
            continue;
        }
        // Data: `/*0000*/ .byte ...`, or a bare `.zero N` (nvdisasm prints `.nv.shared.K`'s
        // size that way).
        let d = line.split_once("*/").map_or(line, |(_, d)| d.trim());
        if !d.starts_with('.') {
            continue;
        }
        if section.starts_with(".nv.info") {
            if let Some(sym) = d.strip_prefix(".word").map(str::trim).and_then(|w| w.strip_prefix("index@(")) {
                index_of = Some(sym.trim_end_matches(')').to_string());
                continue;
            }
            let Some(bytes) = directive_bytes(d) else { continue };
            if attr == "EIATTR_KPARAM_INFO" {
                kp_words.extend(&bytes);
                // The entry's header (`.byte 0x04, 0x17`; its `.short` length is symbolic
                // and skipped), then index (4), ordinal (2), offset (2), flags with the
                // size in bits 18.. (4).
                if kp_words.len() >= 14 {
                    let at = kp_words.len() - 8;
                    let ord = u16::from_le_bytes([kp_words[at], kp_words[at + 1]]) as u32;
                    let off = u16::from_le_bytes([kp_words[at + 2], kp_words[at + 3]]) as u32;
                    let flags =
                        u32::from_le_bytes([kp_words[at + 4], kp_words[at + 5], kp_words[at + 6], kp_words[at + 7]]);
                    kparam.push((ord, off, (flags >> 18) & 0x3fff));
                    kp_words.clear();
                }
            } else if let Some(sym) = index_of.take()
                && matches!(attr.as_str(), "EIATTR_FRAME_SIZE" | "EIATTR_MIN_STACK_SIZE" | "EIATTR_MAX_STACK_SIZE")
                && bytes.len() == 4
            {
                let v = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                // Subroutines of a kernel are named `$K$sub`: their frames add to K's.
                let owner = sym.strip_prefix('$').and_then(|s| s.split('$').next()).unwrap_or(&sym).to_string();
                let e = f.functions.entry(owner.clone()).or_default();
                let cur = e.local_bytes.unwrap_or(0);
                e.local_bytes = Some(if owner == sym { cur.max(v) } else { cur + v });
            }
        } else if (section.starts_with(".nv.constant") || section.starts_with(".nv.shared."))
            && let Some(b) = directive_bytes(d)
        {
            data.extend(b);
        }
    }
    flush(&mut f, &section, &mut data, &mut kparam);
    f
}

/// The local bytes a function's prologue reserves: `IADD32I R1, R1, -N` (ptxas findings
/// section 5: "frame in R1: IADD32I R1, R1, -0x40"), summed over the function.
fn prologue_frame(f: &TextFunction) -> u32 {
    f.instrs
        .iter()
        .filter(|i| i.opcode == "IADD32I" && i.operands.len() == 3 && i.operands[0] == "R1" && i.operands[1] == "R1")
        .filter_map(|i| i.operands[2].strip_prefix("-0x").and_then(|h| u32::from_str_radix(h, 16).ok()))
        .sum()
}

/// Loads `listing`. Facts the listing lacks come from `reference` (the same module
/// compiled by ptx2sass), see the module docs. Errors: a line that does not parse, an
/// instruction the model cannot represent, or a branch target outside its function.
pub fn load(listing: &str, reference: Option<&Program>) -> Result<Program, LoadError> {
    let funcs = text::parse(listing).map_err(|e| LoadError { line: e.line, message: e.message })?;
    let facts = self::facts(listing);
    let any_entry = facts.functions.values().any(|f| f.entry);
    let mut program = Program::default();
    if let Some(r) = reference {
        program.const_bank = r.const_bank.clone();
        program.const_vars = r.const_vars.clone();
        // Module `.global` data: the listing's relocated operands (`32@lo(lut)`) name its
        // variables; the simulator's loader places them (`exec::sim::load`).
        program.data = r.data.clone();
    }
    if let Some(b3) = &facts.bank3 {
        program.const_bank = b3.clone();
    }
    for tf in &funcs {
        let fx = facts.functions.get(&tf.name).cloned().unwrap_or_default();
        let rf = reference.and_then(|r| r.functions.iter().find(|f| f.name == tf.name));
        // A function the reference lacks is a device function it dropped (whole-program
        // output keeps only what kernels reach, `lower::opt::unused`; kernels always stay).
        let entry = fx.entry || rf.is_some_and(|f| f.kind == ".entry") || (!any_entry && reference.is_none());
        let (code, symbols) = function_code(tf)?;
        let shared = match (fx.shared_bytes, facts.has_sections) {
            (Some(s), _) => s,
            (None, true) => 0,
            (None, false) => rf.map_or(0, |f| f.shared_bytes),
        };
        program.functions.push(SassFunction {
            name: tf.name.clone(),
            kind: if entry { ".entry" } else { ".func" },
            regs: fx.regs.unwrap_or(255),
            frame_bytes: fx.local_bytes.unwrap_or_else(|| prologue_frame(tf)),
            spill_bytes: 0,
            shared_bytes: shared,
            params: rf.map(|f| f.params.clone()).or(fx.params).unwrap_or_default(),
            compiler_consts: fx.bank2.unwrap_or_default(),
            code,
            symbols,
            linkage: Default::default(),
        });
    }
    Ok(program)
}

/// The instructions of one function with branch targets resolved to indices.
fn function_code(tf: &TextFunction) -> Result<(Vec<Scheduled>, Vec<String>), LoadError> {
    let by_addr: HashMap<u32, u32> = tf.instrs.iter().enumerate().map(|(k, i)| (i.addr, k as u32)).collect();
    let mut label_at: HashMap<usize, String> = HashMap::new();
    for (l, &k) in &tf.labels {
        label_at.entry(k).or_insert_with(|| l.clone());
    }
    let target = |t: &Target| match t {
        Target::Addr(a) => by_addr.get(a).copied(),
        Target::Label(l) => tf.labels.get(l).map(|&k| k as u32),
    };
    let mut code = vec![];
    let mut symbols: Vec<String> = vec![];
    for (k, ti) in tf.instrs.iter().enumerate() {
        let mut a = assemble(ti, &target)
            .map_err(|m| LoadError { line: ti.line, message: format!("`{}` in `{}`: {m}", ti.text, tf.name) })?;
        // The instruction's symbols renumbered into the function's table.
        for s in a.instr.srcs.iter_mut() {
            if let SrcKind::Sym { id, part } = s.kind {
                let name = &a.symbols[id as usize];
                let g = match symbols.iter().position(|x| x == name) {
                    Some(g) => g,
                    None => {
                        symbols.push(name.clone());
                        symbols.len() - 1
                    }
                };
                s.kind = SrcKind::Sym { id: g as u32, part };
            }
        }
        let mut ctrl = ti.ctrl;
        ctrl.wait |= a.extra_wait;
        code.push(Scheduled { instr: a.instr, ctrl, label: label_at.get(&k).cloned() });
    }
    Ok((code, symbols))
}
