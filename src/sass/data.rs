//! Module data: what a cubin carries besides code for the module's `.global` and `.const`
//! variables — the sections `.nv.global.init` (initialized `.global` variables, PROGBITS),
//! `.nv.global` (uninitialized ones, NOBITS) and `.nv.constant3` (`.const` data; its bytes
//! are [`crate::sass::program::Program::const_bank`]), one symbol per variable, and the
//! relocations address initializers need (`sm50-encoding-and-cubin.md` §4.2, §4.4, §4.6;
//! measured on ptxas 11.8, `docs/cubin.md`). The placement itself (ptxas's order) is
//! computed by `lower::mem::globals`; the cubin writer, the listing and the simulator's loader
//! read this description.
//!
//! Code refers to a `.global` variable through relocated immediates
//! ([`crate::sass::instr::SrcKind::Sym`]: `MOV32I R2, 32@lo(var)`), data through
//! [`DataReloc`]s. Both are resolved by whoever places the sections: the CUDA driver, or
//! [`ModuleData::place`] for the simulator.

use std::collections::HashMap;

/// A data section of a cubin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataSection {
    /// `.nv.constant3`: `.const` variables (constant bank 3).
    Const3,
    /// `.nv.global.init`: `.global` variables with an initializer (ptxas 11.8 puts every
    /// initialized variable here, even one initialized to zero).
    GlobalInit,
    /// `.nv.global`: `.global` variables without initializer (NOBITS: zero-filled).
    Global,
}

impl DataSection {
    /// The section name.
    pub fn name(self) -> &'static str {
        match self {
            DataSection::Const3 => ".nv.constant3",
            DataSection::GlobalInit => ".nv.global.init",
            DataSection::Global => ".nv.global",
        }
    }

    /// The section called `name`, if it is a data section.
    pub fn from_name(name: &str) -> Option<DataSection> {
        [DataSection::Const3, DataSection::GlobalInit, DataSection::Global].into_iter().find(|s| s.name() == name)
    }
}

/// The binding of a variable's symbol (PTX linkage, PTX ISA 11.6): internal → `LOCAL`,
/// `.visible`/`.extern`/`.common` → `GLOBAL`, `.weak` → `WEAK` (ptxas 11.8, `readelf -s`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// `STB_LOCAL`.
    Local,
    /// `STB_GLOBAL`.
    Global,
    /// `STB_WEAK`.
    Weak,
}

impl Binding {
    /// The ELF `STB_*` value.
    pub fn stb(self) -> u8 {
        match self {
            Binding::Local => 0,
            Binding::Global => 1,
            Binding::Weak => 2,
        }
    }

    /// The binding of ELF `STB_*` value `b` (`None` for other values).
    pub fn from_stb(b: u8) -> Option<Binding> {
        match b {
            0 => Some(Binding::Local),
            1 => Some(Binding::Global),
            2 => Some(Binding::Weak),
            _ => None,
        }
    }

    /// The listing's spelling (`.local`, `.global`, `.weak`, as nvdisasm's directives).
    pub fn directive(self) -> &'static str {
        match self {
            Binding::Local => ".local",
            Binding::Global => ".global",
            Binding::Weak => ".weak",
        }
    }
}

/// One module variable: an `OBJECT` symbol whose value is the offset in its section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSymbol {
    /// The PTX name.
    pub name: String,
    /// Its section.
    pub section: DataSection,
    /// Byte offset in the section (`st_value`).
    pub offset: u64,
    /// Size in bytes (`st_size`).
    pub size: u64,
    /// Symbol binding.
    pub binding: Binding,
}

/// An address initializer: the 8 bytes at `offset` of `section` hold the (generic = global)
/// address of `symbol` plus `addend`. ptxas 11.8 writes `R_CUDA_G64` (type 4), in
/// `.rel.<section>` when the addend is 0 and in `.rela.<section>` otherwise, and leaves
/// zeros in the data (`cuobjdump -elf`, `readelf -r`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataReloc {
    /// The section holding the pointer.
    pub section: DataSection,
    /// Byte offset of the pointer in it.
    pub offset: u64,
    /// The variable whose address is stored.
    pub symbol: String,
    /// Bytes added to the address.
    pub addend: i64,
}

/// `R_CUDA_G64`: a 64-bit global address in data (cuobjdump's name for type 4).
pub const R_CUDA_G64: u32 = 4;
/// `R_CUDA_ABS32_LO_20`: the low 32 bits of an address into bits 20..51 of an instruction.
pub const R_CUDA_ABS32_LO_20: u32 = 43;
/// `R_CUDA_ABS32_HI_20`: the high 32 bits, same field.
pub const R_CUDA_ABS32_HI_20: u32 = 44;

/// The data sections of a module.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleData {
    /// Contents of `.nv.global.init` (address initializers are zero here; [`Self::relocs`]).
    pub init: Vec<u8>,
    /// Alignment of `.nv.global.init` (the largest of its variables).
    pub init_align: u64,
    /// Size of `.nv.global`.
    pub bss_size: u64,
    /// Alignment of `.nv.global`.
    pub bss_align: u64,
    /// Alignment of `.nv.constant3` (the largest of the `.const` variables).
    pub const_align: u64,
    /// The variables' symbols (`.const` and `.global`), in the order ptxas 11.8 creates
    /// them: the variables with linkage (`GLOBAL` and `WEAK`), then the `LOCAL` ones, each
    /// group in declaration order.
    pub symbols: Vec<DataSymbol>,
    /// Address initializers: per variable in [`Self::symbols`] order, its pointers from the
    /// last element to the first (the order of ptxas 11.8's relocation entries).
    pub relocs: Vec<DataReloc>,
    /// The relocation sections as (data section, with addend: `.rela`), in the order the
    /// cubin lists them (ptxas 11.8: met walking the variables from the last created to
    /// the first); groups missing here follow in the order of [`Self::relocs`]; groups
    /// without entries are not written.
    pub reloc_sections: Vec<(DataSection, bool)>,
}

/// Where a loader put the data sections.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Address of `.nv.global.init`.
    pub init_base: u64,
    /// Address of `.nv.global`.
    pub bss_base: u64,
}

impl ModuleData {
    /// True when the module has no `.global` variable.
    pub fn has_globals(&self) -> bool {
        self.symbols.iter().any(|s| s.section != DataSection::Const3)
    }

    /// The symbol called `name`.
    pub fn symbol(&self, name: &str) -> Option<&DataSymbol> {
        self.symbols.iter().find(|s| s.name == name)
    }

    /// The address of variable `name` when the sections are placed at `p`: a `.global`
    /// variable's global address; a `.const` variable's offset in bank 3 (what `mov.u64
    /// %rd, cvar` gives, PTX ISA 9.7.9.1).
    pub fn address(&self, p: &Placement, name: &str) -> Option<u64> {
        let s = self.symbol(name)?;
        Some(match s.section {
            DataSection::Const3 => s.offset,
            DataSection::GlobalInit => p.init_base + s.offset,
            DataSection::Global => p.bss_base + s.offset,
        })
    }

    /// What a loader does: places the sections at `p` and applies the data relocations to
    /// `init` (`.nv.global.init`) and `consts` (`.nv.constant3`). Returns every variable's
    /// address by name. Errors: a relocation against an unknown symbol or outside its
    /// section.
    pub fn place(&self, p: &Placement, init: &mut [u8], consts: &mut [u8]) -> Result<HashMap<String, u64>, String> {
        let mut addrs = HashMap::new();
        for s in &self.symbols {
            let base = match s.section {
                DataSection::Const3 => 0,
                DataSection::GlobalInit => p.init_base,
                DataSection::Global => p.bss_base,
            };
            addrs.insert(s.name.clone(), base + s.offset);
        }
        for r in &self.relocs {
            let a = addrs.get(&r.symbol).ok_or_else(|| format!("relocation against unknown symbol `{}`", r.symbol))?;
            let v = a.wrapping_add(r.addend as u64);
            let bytes = match r.section {
                DataSection::GlobalInit => &mut *init,
                DataSection::Const3 => &mut *consts,
                DataSection::Global => return Err(format!("relocation in {}", r.section.name())),
            };
            let at = r.offset as usize;
            let slot = bytes
                .get_mut(at..at + 8)
                .ok_or_else(|| format!("relocation at 0x{:x} outside {}", r.offset, r.section.name()))?;
            slot.copy_from_slice(&v.to_le_bytes());
        }
        Ok(addrs)
    }
}

/// A malformed module data line: (1-based line, column, message).
pub type ListingError = (usize, usize, String);

/// The title line of the module data block in a listing ([`ModuleData::listing`]).
pub const LISTING_TITLE: &str = "// module data (symbols in creation order):";

impl ModuleData {
    /// The module data as comment lines after the functions of a listing, so that `asm`
    /// rebuilds the same sections, symbols and relocations (the code's `32@lo(sym)`
    /// operands name these symbols). One line per section symbol and variable, in the
    /// order their symbols are created:
    ///
    /// ```text
    ///     // module data (symbols in creation order):
    ///     //   .section .nv.global 0x20 bytes, align 4
    ///     //   vis: .global .nv.global+0x0, 16 bytes
    ///     //   .section .nv.global.init 0x24 bytes, align 8
    ///     //   counter: .local .nv.global.init+0x20, 4 bytes = 07000000
    ///     //   ptr: .local .nv.global.init+0x0, 8 bytes = {table+0x8}
    ///     //   .relocations .rel.nv.global.init
    /// ```
    ///
    /// Initial bytes are hex, at most 8 bytes per group; `{sym}` / `{sym+0xN}` is an
    /// 8-byte address initializer. `const_bank` is bank 3's contents.
    pub fn listing(&self, const_bank: &[u8]) -> String {
        use std::fmt::Write;
        if self.symbols.is_empty() && const_bank.is_empty() && self.init.is_empty() && self.bss_size == 0 {
            return String::new();
        }
        let mut out = format!("\t{LISTING_TITLE}\n");
        let section_line = |out: &mut String, s: DataSection| {
            let (size, align) = match s {
                DataSection::Const3 => (const_bank.len() as u64, self.const_align.max(1)),
                DataSection::GlobalInit => (self.init.len() as u64, self.init_align.max(1)),
                DataSection::Global => (self.bss_size, self.bss_align.max(1)),
            };
            let _ = writeln!(out, "\t//   .section {} 0x{size:x} bytes, align {align}", s.name());
        };
        let mut relocs: HashMap<(DataSection, u64), &DataReloc> = HashMap::new();
        for r in &self.relocs {
            relocs.insert((r.section, r.offset), r);
        }
        let mut seen: Vec<DataSection> = vec![];
        let mut sections = vec![];
        if !const_bank.is_empty() {
            sections.push(DataSection::Const3);
        }
        if !self.init.is_empty() {
            sections.push(DataSection::GlobalInit);
        }
        if self.bss_size > 0 {
            sections.push(DataSection::Global);
        }
        // A section without variables is created before the module's variables.
        for s in sections {
            if !self.symbols.iter().any(|v| v.section == s) {
                section_line(&mut out, s);
                seen.push(s);
            }
        }
        for v in &self.symbols {
            if !seen.contains(&v.section) {
                seen.push(v.section);
                section_line(&mut out, v.section);
            }
            let _ = write!(
                out,
                "\t//   {}: {} {}+0x{:x}, {} bytes",
                v.name,
                v.binding.directive(),
                v.section.name(),
                v.offset,
                v.size
            );
            let bytes = match v.section {
                DataSection::Const3 => Some(const_bank),
                DataSection::GlobalInit => Some(&self.init[..]),
                DataSection::Global => None,
            };
            if let Some(bytes) = bytes {
                let reloc_at = |k: u64| relocs.get(&(v.section, k));
                out.push_str(" =");
                let mut k = v.offset;
                let end = v.offset + v.size;
                while k < end {
                    if let Some(r) = reloc_at(k) {
                        match r.addend {
                            0 => {
                                let _ = write!(out, " {{{}}}", r.symbol);
                            }
                            a if a < 0 => {
                                let _ = write!(out, " {{{}-0x{:x}}}", r.symbol, a.unsigned_abs());
                            }
                            a => {
                                let _ = write!(out, " {{{}+0x{a:x}}}", r.symbol);
                            }
                        }
                        k += 8;
                        continue;
                    }
                    out.push(' ');
                    let stop = (k + 8).min(end);
                    while k < stop && reloc_at(k).is_none() {
                        let _ = write!(out, "{:02x}", bytes.get(k as usize).copied().unwrap_or(0));
                        k += 1;
                    }
                }
            }
            out.push('\n');
        }
        if !self.reloc_sections.is_empty() {
            let names: Vec<String> = self
                .reloc_sections
                .iter()
                .map(|(s, rela)| format!("{}{}", if *rela { ".rela" } else { ".rel" }, s.name()))
                .collect();
            let _ = writeln!(out, "\t//   .relocations {}", names.join(" "));
        }
        out
    }

    /// Reads the module data block of a listing ([`ModuleData::listing`]); returns the
    /// data and bank 3's contents, or `None` when the listing has no such block. Errors:
    /// (1-based line, column, message) for a malformed line.
    pub fn parse_listing(listing: &str) -> Result<Option<(ModuleData, Vec<u8>)>, ListingError> {
        let mut lines = listing.lines().enumerate().skip_while(|(_, l)| l.trim() != LISTING_TITLE);
        if lines.next().is_none() {
            return Ok(None);
        }
        let mut data = ModuleData::default();
        let mut const_bank = vec![];
        let mut sizes: HashMap<DataSection, u64> = HashMap::new();
        // Where each address initializer was written, to report unknown symbols.
        let mut reloc_lines: Vec<(usize, usize)> = vec![];
        for (k, raw) in lines {
            let line = raw.trim();
            let Some(body) = line.strip_prefix("//") else { break };
            let body = body.trim();
            let col = raw.find(body).unwrap_or(0) + 1;
            let err = |m: String| (k + 1, col, m);
            if let Some(rest) = body.strip_prefix(".section ") {
                // `.section NAME 0xSIZE bytes, align N`
                let w: Vec<&str> = rest.split([' ', ',']).filter(|w| !w.is_empty()).collect();
                let (Some(s), Some(size), Some(align)) = (
                    w.first().and_then(|n| DataSection::from_name(n)),
                    w.get(1).and_then(|n| parse_num(n)),
                    w.get(4).and_then(|n| parse_num(n)),
                ) else {
                    return Err(err(format!("`{body}`: expected `.section NAME 0xSIZE bytes, align N`")));
                };
                sizes.insert(s, size);
                match s {
                    DataSection::Const3 => {
                        const_bank = vec![0; size as usize];
                        data.const_align = align;
                    }
                    DataSection::GlobalInit => {
                        data.init = vec![0; size as usize];
                        data.init_align = align;
                    }
                    DataSection::Global => {
                        data.bss_size = size;
                        data.bss_align = align;
                    }
                }
                continue;
            }
            if let Some(rest) = body.strip_prefix(".relocations ") {
                for w in rest.split_whitespace() {
                    let (rela, name) = match w.strip_prefix(".rela") {
                        Some(n) => (true, n),
                        None => (false, w.strip_prefix(".rel").unwrap_or(w)),
                    };
                    let s = DataSection::from_name(name)
                        .ok_or_else(|| err(format!("`{w}`: not a relocation section of a data section")))?;
                    data.reloc_sections.push((s, rela));
                }
                continue;
            }
            // `NAME: BINDING SECTION+0xOFF, SIZE bytes[ = BYTES]`
            let bad = || {
                err(format!("`{body}`: expected `NAME: .local|.global|.weak SECTION+0xOFFSET, SIZE bytes [= BYTES]`"))
            };
            let (name, rest) = body.split_once(':').ok_or_else(bad)?;
            let (head, init) = match rest.split_once('=') {
                Some((h, i)) => (h, Some(i)),
                None => (rest, None),
            };
            let w: Vec<&str> = head.split([' ', ',']).filter(|w| !w.is_empty()).collect();
            let binding = match w.first() {
                Some(&".local") => Binding::Local,
                Some(&".global") => Binding::Global,
                Some(&".weak") => Binding::Weak,
                _ => return Err(bad()),
            };
            let (sec, off) = w.get(1).and_then(|p| p.split_once('+')).ok_or_else(bad)?;
            let section = DataSection::from_name(sec).ok_or_else(bad)?;
            let offset = parse_num(off).ok_or_else(bad)?;
            let size = w.get(2).and_then(|n| parse_num(n)).ok_or_else(bad)?;
            let Some(&sec_size) = sizes.get(&section) else {
                return Err(err(format!("`{name}`: section {} is not declared before it", section.name())));
            };
            if offset.checked_add(size).is_none_or(|e| e > sec_size) {
                return Err(err(format!(
                    "`{name}`: 0x{offset:x} + {size} bytes is outside {} (0x{sec_size:x} bytes)",
                    section.name()
                )));
            }
            let name = name.trim().to_string();
            if let Some(init) = init {
                let image = match section {
                    DataSection::Const3 => &mut const_bank,
                    DataSection::GlobalInit => &mut data.init,
                    DataSection::Global => {
                        return Err(err(format!("`{name}`: {} holds no initial bytes", section.name())));
                    }
                };
                let mut at = offset;
                for tok in init.split_whitespace() {
                    if let Some(t) = tok.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                        let (symbol, addend) = match t.find(['+', '-']) {
                            Some(p) => {
                                let v =
                                    parse_num(&t[p + 1..]).ok_or_else(|| err(format!("`{tok}`: bad addend")))? as i64;
                                (&t[..p], if t.as_bytes()[p] == b'-' { -v } else { v })
                            }
                            None => (t, 0),
                        };
                        data.relocs.push(DataReloc { section, offset: at, symbol: symbol.to_string(), addend });
                        reloc_lines.push((k + 1, raw.find(tok).unwrap_or(0) + 1));
                        at += 8;
                    } else {
                        // Hex digits only, checked before slicing by byte pairs (a multi-byte
                        // character split a pair: a panic found by fuzz/ asm).
                        if tok.len() % 2 != 0 || !tok.bytes().all(|c| c.is_ascii_hexdigit()) {
                            return Err(err(format!("`{tok}`: expected hex byte pairs")));
                        }
                        for p in 0..tok.len() / 2 {
                            let b = u8::from_str_radix(&tok[2 * p..2 * p + 2], 16)
                                .map_err(|_| err(format!("`{tok}`: expected hex byte pairs")))?;
                            if at < offset + size {
                                image[at as usize] = b;
                            }
                            at += 1;
                        }
                    }
                }
                if at != offset + size {
                    return Err(err(format!("`{name}`: {} initial bytes for a variable of {size}", at - offset)));
                }
            }
            data.symbols.push(DataSymbol { name, section, offset, size, binding });
        }
        let names: std::collections::HashSet<&str> = data.symbols.iter().map(|s| s.name.as_str()).collect();
        for (r, &(line, col)) in data.relocs.iter().zip(&reloc_lines) {
            if !names.contains(r.symbol.as_str()) {
                return Err((line, col, format!("`{}` is not a variable of the module data", r.symbol)));
            }
        }
        // Each variable's relocations from its last element to its first (the order
        // lowering produces and ptxas writes).
        let mut by_place: Vec<DataReloc> = std::mem::take(&mut data.relocs);
        by_place.sort_by_key(|r| (r.section, r.offset));
        for s in &data.symbols {
            let first = by_place.partition_point(|r| (r.section, r.offset) < (s.section, s.offset));
            let end = by_place.partition_point(|r| (r.section, r.offset) < (s.section, s.offset + s.size));
            data.relocs.extend(by_place[first..end].iter().rev().cloned());
        }
        Ok(Some((data, const_bank)))
    }
}

fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}
