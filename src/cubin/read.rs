//! Reading cubins (ours or ptxas's) with the `object` crate's ELF reader: the code
//! sections and their relocations, for `ptx2sass disasm` and the tests.
// Input is hostile (`run` arguments, disasm/asm input): no panicking shortcuts here
// (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use object::elf;
use object::read::elf::{FileHeader, Rel as _, SectionHeader};
use std::collections::HashMap;

/// One `.text.<name>` section.
#[derive(Clone, Debug)]
pub struct TextSection {
    /// Function name (the section name without `.text.`).
    pub name: String,
    /// The code bytes.
    pub bytes: Vec<u8>,
    /// Register count (`sh_info` bits 24..31).
    pub regs: u32,
    /// Relocations: byte offset → text the disassembler prints for the patched field
    /// (`32@lo(gvar)`, `32@hi(gvar)`, or the symbol for absolute call targets).
    pub relocs: HashMap<u32, String>,
    /// EIATTR_INDIRECT_BRANCH_TARGETS of `.nv.info.<name>`: the offset of each SYNC/BRK
    /// (or BRX) → its targets.
    pub branch_targets: HashMap<u32, Vec<u32>>,
}

/// The INDIRECT_BRANCH_TARGETS records (attribute 0x34, `sm50-encoding-and-cubin.md` §4.5)
/// of a `.nv.info.<k>` section: per entry offset, 0, count, targets. Damaged records are
/// ignored (the listing then has no targets for those instructions).
fn branch_targets(info: &[u8]) -> HashMap<u32, Vec<u32>> {
    let mut out = HashMap::new();
    let mut rest = info;
    while let [fmt, attr, v0, v1, tail @ ..] = rest {
        rest = tail;
        if *fmt != 4 {
            continue;
        }
        let v = usize::from(u16::from_le_bytes([*v0, *v1]));
        let (Some(payload), Some(after)) = (rest.get(..v), rest.get(v..)) else { break };
        rest = after;
        if *attr != crate::cubin::eiattr::INDIRECT_BRANCH_TARGETS {
            continue;
        }
        let words: Vec<u32> =
            payload.chunks_exact(4).map(|w| w.try_into().map(u32::from_le_bytes).unwrap_or_default()).collect();
        let mut entries = words.as_slice();
        // The count is the file's: an entry whose targets run past the record is damaged,
        // and ends the record (a count of 2^32 - 1 used to be walked word by word: a
        // 6 KB file took seconds; found by fuzz/ disasm).
        while let [off, _, n, tail @ ..] = entries {
            let n = *n as usize;
            let (Some(targets), Some(next)) = (tail.get(..n), tail.get(n..)) else { break };
            out.insert(*off, targets.to_vec());
            entries = next;
        }
    }
    out
}

/// A file that is not an sm_50..sm_53 cubin, or is damaged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ReadError(pub String);

fn err<E: std::fmt::Display>(what: &str) -> impl FnOnce(E) -> ReadError + '_ {
    move |e| ReadError(format!("{what}: {e}"))
}

/// The code sections of a cubin, in file order. Errors: not a 64-bit little-endian ELF,
/// `e_machine` not EM_CUDA (190), an SM other than 5.x in `e_flags`, or damaged tables.
pub fn text_sections(data: &[u8]) -> Result<Vec<TextSection>, ReadError> {
    let h = elf::FileHeader64::<object::Endianness>::parse(data).map_err(err("not a 64-bit ELF file"))?;
    let e = h.endian().map_err(err("bad ELF header"))?;
    if h.e_machine(e) != elf::EM_CUDA {
        return Err(ReadError(format!("e_machine is {}, not EM_CUDA (190): not a CUDA cubin", h.e_machine(e).0)));
    }
    let sm = h.e_flags(e).0 & 0xff;
    if !matches!(sm, 0x32 | 0x34 | 0x35) {
        return Err(ReadError(format!("e_flags 0x{:x}: SM {sm:#x} is not sm_50/52/53 (Maxwell)", h.e_flags(e).0)));
    }
    let sections = h.sections(e, data).map_err(err("bad section table"))?;
    let symbols = sections.symbols(e, data, elf::SHT_SYMTAB).map_err(err("bad symbol table"))?;
    let mut out = vec![];
    let mut relocs: HashMap<usize, HashMap<u32, String>> = HashMap::new();
    let mut infos: HashMap<String, HashMap<u32, Vec<u32>>> = HashMap::new();
    for (idx, s) in sections.enumerate() {
        let name = sections.section_name(e, s).map_err(err("bad section name"))?;
        if s.sh_type(e) == elf::SHT_REL {
            let target = s.sh_info(e) as usize;
            let (rels, _) = s.rel(e, data).map_err(err("bad relocation section"))?.ok_or(ReadError("no REL".into()))?;
            for r in rels {
                let sym =
                    symbols.symbol(object::SymbolIndex(r.r_sym(e) as usize)).map_err(err("bad relocation symbol"))?;
                let sname = String::from_utf8_lossy(symbols.symbol_name(e, sym).map_err(err("bad symbol name"))?);
                let text = match r.r_type(e).0 {
                    43 => format!("32@lo({sname})"),
                    44 => format!("32@hi({sname})"),
                    _ => sname.into_owned(),
                };
                relocs.entry(target).or_default().insert(r.r_offset(e) as u32, text);
            }
            continue;
        }
        if let Some(k) = name.strip_prefix(b".nv.info.") {
            let d = s.data(e, data).map_err(err("section data out of the file"))?;
            infos.insert(String::from_utf8_lossy(k).into_owned(), branch_targets(d));
            continue;
        }
        let Some(fname) = name.strip_prefix(b".text.") else { continue };
        let bytes = s.data(e, data).map_err(err("section data out of the file"))?.to_vec();
        out.push((
            idx.0,
            TextSection {
                name: String::from_utf8_lossy(fname).into_owned(),
                bytes,
                regs: s.sh_info(e) >> 24,
                relocs: HashMap::new(),
                branch_targets: HashMap::new(),
            },
        ));
    }
    Ok(out
        .into_iter()
        .map(|(idx, mut t)| {
            t.relocs = relocs.remove(&idx).unwrap_or_default();
            t.branch_targets = infos.remove(&t.name).unwrap_or_default();
            t
        })
        .collect())
}
