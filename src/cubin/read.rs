//! Reading cubins (ours or ptxas's) with the `object` crate's ELF reader: the code
//! sections and their relocations, and the module data, for `ptx2sass disasm` and the
//! tests.
// Input is hostile (`run` arguments, disasm/asm input): no panicking shortcuts here
// (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::sass::data::{Binding, DataReloc, DataSection, DataSymbol, ModuleData, R_CUDA_G64};
use object::elf;
use object::read::elf::{FileHeader, Rel as _, Rela as _, SectionHeader, Sym as _};
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
            // Indirect calls (kind 1) have no target: nothing to name.
            if !targets.is_empty() {
                out.insert(*off, targets.to_vec());
            }
            entries = next;
        }
    }
    out
}

/// Relocation texts (`32@lo(NAME)`, one per relocation, kept for the listing) may hold at
/// most this many bytes per byte of the file: every relocation names a symbol, so without
/// a bound a file of n bytes with n/16 relocations of a symbol named by n/2 bytes asks for
/// n²/32 bytes (a 1 MB file: 32 GB). Real cubins name each symbol a few times in short
/// names, far below the bound.
const MAX_RELOC_TEXT_PER_BYTE: usize = 64;

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
    // Bytes of relocation text held so far ([`MAX_RELOC_TEXT_PER_BYTE`]).
    let mut reloc_text: usize = 0;
    let reloc_budget = data.len().saturating_mul(MAX_RELOC_TEXT_PER_BYTE);
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
                    42 => format!("`({sname})"),
                    _ => sname.into_owned(),
                };
                reloc_text = reloc_text.saturating_add(text.len());
                if reloc_text > reloc_budget {
                    return Err(ReadError(format!(
                        "relocation symbol names of more than {reloc_budget} bytes in all \
                         ({MAX_RELOC_TEXT_PER_BYTE} per byte of the {}-byte file): damaged relocations",
                        data.len()
                    )));
                }
                let offset = u32::try_from(r.r_offset(e))
                    .map_err(|_| ReadError(format!("relocation offset {:#x} beyond 4 GiB", r.r_offset(e))))?;
                relocs.entry(target).or_default().insert(offset, text);
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

/// The module data of a cubin (`.nv.constant3`, `.nv.global.init`, `.nv.global`): their
/// sizes and alignments, the `OBJECT` symbols in them (in symbol-table order) and the
/// `R_CUDA_G64` relocations of `.rel`/`.rela` sections applying to them. Returns the data
/// and bank 3's contents. Errors: damaged tables (the file was checked by
/// [`text_sections`]).
pub fn module_data(data: &[u8]) -> Result<(ModuleData, Vec<u8>), ReadError> {
    let h = elf::FileHeader64::<object::Endianness>::parse(data).map_err(err("not a 64-bit ELF file"))?;
    let e = h.endian().map_err(err("bad ELF header"))?;
    let sections = h.sections(e, data).map_err(err("bad section table"))?;
    let symbols = sections.symbols(e, data, elf::SHT_SYMTAB).map_err(err("bad symbol table"))?;
    let mut out = ModuleData::default();
    let mut const_bank = vec![];
    // Section index → (kind, size in bytes: the data's, or `sh_size` of `.nv.global`).
    let mut kinds: HashMap<usize, (DataSection, u64)> = HashMap::new();
    for (idx, s) in sections.enumerate() {
        let name = sections.section_name(e, s).map_err(err("bad section name"))?;
        let Some(kind) = DataSection::from_name(&String::from_utf8_lossy(name)) else { continue };
        let align = s.sh_addralign(e);
        match kind {
            DataSection::Global => {
                out.bss_size = s.sh_size(e);
                out.bss_align = align;
                kinds.insert(idx.0, (kind, s.sh_size(e)));
            }
            _ => {
                let bytes = s.data(e, data).map_err(err("section data out of the file"))?.to_vec();
                kinds.insert(idx.0, (kind, bytes.len() as u64));
                if kind == DataSection::Const3 {
                    const_bank = bytes;
                    out.const_align = align;
                } else {
                    out.init = bytes;
                    out.init_align = align;
                }
            }
        }
    }
    for sym in symbols.iter() {
        if sym.st_type() != elf::STT_OBJECT {
            continue;
        }
        let Some(&(section, section_size)) = kinds.get(&(sym.st_shndx(e).0 as usize)) else { continue };
        let name = String::from_utf8_lossy(symbols.symbol_name(e, sym).map_err(err("bad symbol name"))?).into_owned();
        let binding = Binding::from_stb(sym.st_bind().0).unwrap_or(Binding::Global);
        let (offset, size) = (sym.st_value(e), sym.st_size(e));
        // The listing prints a variable's bytes one by one: a size from the file must lie
        // within its section (a `.nv.constant3` symbol of 0x1f00000000000100 bytes in a
        // 10 KB file made the listing grow past 2 GB; found by fuzz/ disasm).
        if offset.checked_add(size).is_none_or(|end| end > section_size) {
            return Err(ReadError(format!(
                "symbol `{name}`: {size:#x} bytes at offset {offset:#x} run past its section {} of {section_size:#x} bytes",
                section.name()
            )));
        }
        out.symbols.push(DataSymbol { name, section, offset, size, binding });
    }
    let sym_name = |k: u32| -> Result<String, ReadError> {
        let sym = symbols.symbol(object::SymbolIndex(k as usize)).map_err(err("bad relocation symbol"))?;
        Ok(String::from_utf8_lossy(symbols.symbol_name(e, sym).map_err(err("bad symbol name"))?).into_owned())
    };
    for s in sections.iter() {
        let Some(&(section, _)) = kinds.get(&(s.sh_info(e) as usize)) else { continue };
        if matches!(s.sh_type(e), elf::SHT_REL | elf::SHT_RELA) {
            out.reloc_sections.push((section, s.sh_type(e) == elf::SHT_RELA));
        }
        if s.sh_type(e) == elf::SHT_REL {
            let (rels, _) = s.rel(e, data).map_err(err("bad relocation section"))?.ok_or(ReadError("no REL".into()))?;
            for r in rels.iter().filter(|r| r.r_type(e).0 == R_CUDA_G64) {
                out.relocs.push(DataReloc { section, offset: r.r_offset(e), symbol: sym_name(r.r_sym(e))?, addend: 0 });
            }
        } else if s.sh_type(e) == elf::SHT_RELA {
            let (rels, _) =
                s.rela(e, data).map_err(err("bad relocation section"))?.ok_or(ReadError("no RELA".into()))?;
            for r in rels.iter().filter(|r| r.r_type(e, false).0 == R_CUDA_G64) {
                out.relocs.push(DataReloc {
                    section,
                    offset: r.r_offset(e),
                    symbol: sym_name(r.r_sym(e, false))?,
                    addend: r.r_addend(e),
                });
            }
        }
    }
    Ok((out, const_bank))
}
