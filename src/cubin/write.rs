//! The ELF writer: sections, symbols, relocations and program headers of a cubin as ptxas
//! 11.8 writes them for `-arch=sm_50` (`sm50-encoding-and-cubin.md` §4, the `.global` data
//! of `docs/cubin.md`), with the `object` crate's low-level writer.
//!
//! The file is planned first — sections in file order, symbols in ptxas's creation order —
//! so that every index is known before any content that names one (`.nv.info` records,
//! `sh_info`, relocations) is built.
// Not yet under the module's no-panic discipline (issue 20): merged from the `link` work
// after the lints were set; a follow-up rewrites its sites.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::{
    E_VERSION, Kernel, ModuleRef, OSABI_CUDA, R_CUDA_SURF_HEADER_INDEX, R_CUDA_TEX_HEADER_INDEX, REL_ACTION,
    SHT_CUDA_INFO, SHT_CUDA_RELOCINFO, STO_CUDA_ENTRY, STT_CUDA_SURFACE, STT_CUDA_TEXTURE, const0_size, eiattr,
    kernel_info, rec_sval,
};
use crate::sass::data::{Binding, DataReloc, DataSection, ModuleData, R_CUDA_G64};
use crate::sass::program::Linkage;
use object::elf;
use object::write::elf::{FileHeader, ProgramHeader, Rel, SectionHeader, Sym, Writer};
use std::collections::HashMap;

/// What a section holds.
pub(super) enum Body {
    Bytes(Vec<u8>),
    NoBits(u64),
    /// Relocations: (offset, symbol index, type, addend); RELA when `rela`.
    Rel(Vec<(u64, u32, u32, i64)>, bool),
    /// Pairs of 32-bit words, the second possibly the `.strtab` offset of a string
    /// (`.nv.callgraph`, `.nv.prototype` of relocatable cubins, [`super::rel`]).
    Pairs(Vec<(u32, Word)>),
}

/// The second word of a [`Body::Pairs`] entry.
pub(super) enum Word {
    /// This value.
    Value(u32),
    /// The `.strtab` offset of this string (added to the table).
    Str(String),
}

/// One planned section (ELF fields as ptxas writes them).
pub(super) struct Sec {
    pub(super) name: String,
    pub(super) ty: u32,
    pub(super) flags: u64,
    /// Links to `.symtab`.
    pub(super) link_symtab: bool,
    pub(super) info: u32,
    pub(super) align: u64,
    pub(super) entsize: u64,
    pub(super) body: Body,
}

impl Sec {
    pub(super) fn new(name: String, ty: u32, flags: u64, align: u64, body: Body) -> Sec {
        Sec { name, ty, flags, link_symtab: false, info: 0, align, entsize: 0, body }
    }
    fn size(&self) -> u64 {
        match &self.body {
            Body::Bytes(b) => b.len() as u64,
            Body::NoBits(n) => *n,
            Body::Rel(r, rela) => r.len() as u64 * if *rela { 24 } else { 16 },
            Body::Pairs(p) => p.len() as u64 * 8,
        }
    }
}

/// One planned symbol.
pub(super) struct SymPlan {
    pub(super) name: String,
    /// File-order index of its section (0 = undefined).
    pub(super) section: usize,
    pub(super) info: u8,
    pub(super) other: u8,
    pub(super) value: u64,
    pub(super) size: u64,
    pub(super) local: bool,
    /// The section or kernel it stands for (for the indices records and headers name).
    pub(super) of: Option<Key>,
}

impl SymPlan {
    /// An undefined function called from this file (`GLOBAL FUNC`, section 0, value and
    /// size 0), as ptxas writes the target of a `JCAL` to another module.
    pub(super) fn undefined_func(name: &str) -> SymPlan {
        SymPlan {
            name: name.to_string(),
            section: 0,
            info: (elf::STB_GLOBAL.0 << 4) | elf::STT_FUNC.0,
            other: 0,
            value: 0,
            size: 0,
            local: false,
            of: None,
        }
    }
}

/// Section and symbol identities the plan needs to refer to.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Key {
    Text(usize),
    Shared(usize),
    Const0(usize),
    Data(DataSection),
    RelAction,
}

/// Writes the cubin of `kernels` (in this order), constant bank 3 `const_bank`, the
/// `.global` data `data` and the module's `.texref`/`.surfref` `refs` (declaration order).
/// Errors: a relocation against a symbol the module does not define (a reference word
/// naming no reference of `refs`).
pub fn write(
    kernels: &[Kernel],
    const_bank: &[u8],
    data: &ModuleData,
    refs: &[ModuleRef],
    e_flags: u32,
) -> Result<Vec<u8>, String> {
    // Sections in file order (§4.2, docs/cubin.md): .nv.info, .nv.info.<k>…, .nv.rel.action,
    // .rel.text.<k>…, data relocations, .rel.nv.constant0.<k>… (the kernels with reference
    // words, docs/textures.md §1.1), [.nv.constant3], .nv.constant0.<k>…, .text.<k>…,
    // [.nv.global.init], then the NOBITS sections: the first kernel's .nv.shared, .nv.global,
    // the other kernels' .nv.shared (ptxas's creation order). Index 0..3 are null,
    // .shstrtab, .strtab, .symtab.
    let has_init = !data.init.is_empty() || data.symbols.iter().any(|s| s.section == DataSection::GlobalInit);
    let has_bss = data.bss_size > 0 || data.symbols.iter().any(|s| s.section == DataSection::Global);
    let has_c3 = !const_bank.is_empty() || data.symbols.iter().any(|s| s.section == DataSection::Const3);
    let mut order: Vec<Key> = vec![];
    let mut rel_text: Vec<usize> = vec![];
    for (k, kern) in kernels.iter().enumerate() {
        if !kern.code.relocs.is_empty() {
            rel_text.push(k);
        }
    }
    let groups = data_reloc_groups(data);
    let rel_c0: Vec<usize> = (0..kernels.len()).filter(|&k| !kernels[k].refs.is_empty()).collect();
    if has_c3 {
        order.push(Key::Data(DataSection::Const3));
    }
    order.extend((0..kernels.len()).map(Key::Const0));
    order.extend((0..kernels.len()).map(Key::Text));
    if has_init {
        order.push(Key::Data(DataSection::GlobalInit));
    }
    let mut nobits: Vec<Key> = vec![];
    for (k, kern) in kernels.iter().enumerate() {
        if k == 1 && has_bss {
            nobits.push(Key::Data(DataSection::Global));
        }
        if kern.shared_bytes > 0 {
            nobits.push(Key::Shared(k));
        }
    }
    if kernels.len() <= 1 && has_bss {
        nobits.push(Key::Data(DataSection::Global));
    }
    order.extend(nobits);
    // File-order index of every section: 4 fixed, .nv.info, the kernel infos, .nv.rel.action,
    // the relocation sections, then `order`.
    let first_info = 4;
    let relact = first_info + 1 + kernels.len();
    let first_rel = relact + 1;
    let n_rel = rel_text.len() + groups.len() + rel_c0.len();
    let mut index: HashMap<Key, usize> = HashMap::new();
    index.insert(Key::RelAction, relact);
    for (k, key) in order.iter().enumerate() {
        index.insert(*key, first_rel + n_rel + k);
    }

    // Symbols in ptxas's creation order (§4.4; docs/cubin.md): the first kernel's .text and
    // .nv.shared, the module variables (each section's symbol before its first variable),
    // its .nv.constant0; then each other kernel's; .nv.rel.action. Locals (and ptxas's weak
    // variables) keep that order, then the globals: kernels and visible variables.
    let mut syms: Vec<SymPlan> = vec![];
    let section_sym = |name: &str, section: usize, of: Option<Key>| SymPlan {
        name: name.to_string(),
        section,
        info: elf::STT_SECTION.0,
        other: 0,
        value: 0,
        size: 0,
        local: true,
        of,
    };
    let kernel_sym = |k: usize| SymPlan {
        name: kernels[k].name.clone(),
        section: index[&Key::Text(k)],
        info: (elf::STB_GLOBAL.0 << 4) | elf::STT_FUNC.0,
        other: STO_CUDA_ENTRY,
        value: 0,
        size: kernels[k].code.bytes.len() as u64,
        local: false,
        of: Some(Key::Text(k)),
    };
    let mut data_done = false;
    let mut externs_done: Vec<String> = vec![];
    let module_data = |syms: &mut Vec<SymPlan>| {
        let mut seen: Vec<DataSection> = vec![];
        if has_c3 && !data.symbols.iter().any(|s| s.section == DataSection::Const3) {
            syms.push(section_sym(".nv.constant3", index[&Key::Data(DataSection::Const3)], None));
        }
        for s in &data.symbols {
            let sec = index[&Key::Data(s.section)];
            if !seen.contains(&s.section) {
                seen.push(s.section);
                syms.push(section_sym(s.section.name(), sec, None));
            }
            syms.push(SymPlan {
                name: s.name.clone(),
                section: sec,
                info: (s.binding.stb() << 4) | elf::STT_OBJECT.0,
                other: 0,
                value: s.offset,
                size: s.size,
                local: s.binding != Binding::Global,
                of: None,
            });
        }
    };
    for k in 0..kernels.len() {
        syms.push(section_sym(&format!(".text.{}", kernels[k].name), index[&Key::Text(k)], None));
        if kernels[k].shared_bytes > 0 {
            syms.push(section_sym(&format!(".nv.shared.{}", kernels[k].name), index[&Key::Shared(k)], None));
        }
        syms.push(kernel_sym(k));
        if !data_done {
            // ptxas 11.8 (probes p2, p3 of docs/textures.md §1.1): the first kernel's
            // references in order of first use, the module variables, then every other
            // reference in declaration order (`GLOBAL`, type STT_CUDA_TEXTURE/SURFACE,
            // section 0, value and size 0).
            let first: Vec<&ModuleRef> =
                kernels[k].refs.iter().filter_map(|w| refs.iter().find(|r| r.name == w.name)).collect();
            for r in &first {
                syms.push(ref_sym(r));
            }
            module_data(&mut syms);
            for r in refs.iter().filter(|r| !first.iter().any(|f| f.name == r.name)) {
                syms.push(ref_sym(r));
            }
            data_done = true;
        }
        // ptxas 11.8 (docs/cubin.md, probe `calls.ptx`): the undefined functions the
        // section calls (`GLOBAL FUNC`, UND; once per module), then the placed device
        // functions (`$k$f`: internal `LOCAL`, `.visible` `GLOBAL`, `.weak` `WEAK`, kept
        // among the locals like weak variables), before the kernel's `.nv.constant0`.
        for e in &kernels[k].externs {
            if !externs_done.contains(e) {
                externs_done.push(e.clone());
                syms.push(SymPlan::undefined_func(e));
            }
        }
        for g in &kernels[k].funcs {
            let stb = match g.linkage {
                Linkage::Internal => elf::STB_LOCAL.0,
                Linkage::Visible => elf::STB_GLOBAL.0,
                Linkage::Weak => elf::STB_WEAK.0,
            };
            syms.push(SymPlan {
                name: g.name.clone(),
                section: index[&Key::Text(k)],
                info: (stb << 4) | elf::STT_FUNC.0,
                other: 0,
                value: g.value as u64,
                size: g.size as u64,
                local: g.linkage != Linkage::Visible,
                of: None,
            });
        }
        syms.push(section_sym(
            &format!(".nv.constant0.{}", kernels[k].name),
            index[&Key::Const0(k)],
            Some(Key::Const0(k)),
        ));
    }
    if !data_done {
        module_data(&mut syms);
        for r in refs {
            syms.push(ref_sym(r));
        }
    }
    syms.push(section_sym(".nv.rel.action", relact, None));
    // Final order: locals, then globals, each in creation order; index 0 is the null symbol.
    let (locals, globals): (Vec<SymPlan>, Vec<SymPlan>) = syms.into_iter().partition(|s| s.local);
    let num_local = locals.len() as u32 + 1;
    let syms: Vec<SymPlan> = locals.into_iter().chain(globals).collect();
    // Final indices of the kernel and `.nv.constant0` symbols and of the variables.
    let mut kernel_idx = vec![0u32; kernels.len()];
    let mut c0_idx = vec![0u32; kernels.len()];
    // Variables, device functions and undefined functions: what relocations name.
    let mut var_idx: HashMap<&str, u32> = HashMap::new();
    // The references (what `.rel.nv.constant0.<k>` names).
    let mut ref_idx: HashMap<(&str, bool), u32> = HashMap::new();
    for (k, s) in syms.iter().enumerate() {
        let at = k as u32 + 1;
        match s.of {
            Some(Key::Text(j)) => kernel_idx[j] = at,
            Some(Key::Const0(j)) => c0_idx[j] = at,
            _ if s.info & 0xf == STT_CUDA_TEXTURE || s.info & 0xf == STT_CUDA_SURFACE => {
                ref_idx.insert((s.name.as_str(), s.info & 0xf == STT_CUDA_SURFACE), at);
            }
            _ if s.info & 0xf == elf::STT_OBJECT.0 || s.info & 0xf == elf::STT_FUNC.0 => {
                var_idx.insert(s.name.as_str(), at);
            }
            _ => {}
        }
    }
    let lookup = |name: &str| {
        var_idx
            .get(name)
            .copied()
            .ok_or_else(|| format!("relocation against `{name}`, which the module does not define"))
    };

    // Contents.
    let mut secs: Vec<Sec> = vec![];
    let mut info = vec![];
    for (k, sym) in kernels.iter().zip(&kernel_idx) {
        rec_sval(&mut info, eiattr::REGCOUNT, &[*sym, k.regs]);
        // ptxas 11.8 (probe `calls.ptx`): the stack records of the placed functions, last
        // placed first, then the kernel's; MAX_STACK_SIZE is 0 in every one.
        for g in k.funcs.iter().rev() {
            let at = lookup(&g.name)?;
            rec_sval(&mut info, eiattr::MAX_STACK_SIZE, &[at, 0]);
            rec_sval(&mut info, eiattr::MIN_STACK_SIZE, &[at, g.min_stack]);
            rec_sval(&mut info, eiattr::FRAME_SIZE, &[at, g.frame_bytes]);
        }
        rec_sval(&mut info, eiattr::MAX_STACK_SIZE, &[*sym, 0]);
        rec_sval(&mut info, eiattr::MIN_STACK_SIZE, &[*sym, k.min_stack]);
        rec_sval(&mut info, eiattr::FRAME_SIZE, &[*sym, k.frame_bytes]);
    }
    let mut s = Sec::new(".nv.info".into(), SHT_CUDA_INFO, 0, 4, Body::Bytes(info));
    s.link_symtab = true;
    secs.push(s);
    for (k, kern) in kernels.iter().enumerate() {
        let externs = kern.externs.iter().map(|e| lookup(e)).collect::<Result<Vec<u32>, String>>()?;
        let mut s = Sec::new(
            format!(".nv.info.{}", kern.name),
            SHT_CUDA_INFO,
            0,
            4,
            Body::Bytes(kernel_info(kern, c0_idx[k], &externs)),
        );
        s.link_symtab = true;
        s.info = index[&Key::Text(k)] as u32;
        secs.push(s);
    }
    let relact_bytes: Vec<u8> = REL_ACTION.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut s = Sec::new(".nv.rel.action".into(), SHT_CUDA_RELOCINFO, 0, 8, Body::Bytes(relact_bytes));
    s.entsize = 8;
    secs.push(s);
    // Code relocations, last instruction first (ptxas 11.8: `.rel.text.kglob` lists 0xb8,
    // 0xb0, 0x88, 0x70, 0x38, 0x28).
    for &k in &rel_text {
        let mut entries = vec![];
        for (off, r) in &kernels[k].code.relocs {
            entries.push((*off as u64, lookup(&r.symbol)?, r.kind, 0));
        }
        entries.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut s = Sec::new(format!(".rel.text.{}", kernels[k].name), elf::SHT_REL.0, 0, 8, Body::Rel(entries, false));
        s.link_symtab = true;
        s.info = index[&Key::Text(k)] as u32;
        s.entsize = 16;
        secs.push(s);
    }
    for ((section, rela), list) in &groups {
        let mut entries = vec![];
        for r in list {
            entries.push((r.offset, lookup(&r.symbol)?, R_CUDA_G64, r.addend));
        }
        let prefix = if *rela { ".rela" } else { ".rel" };
        let ty = if *rela { elf::SHT_RELA.0 } else { elf::SHT_REL.0 };
        let mut s = Sec::new(format!("{prefix}{}", section.name()), ty, 0, 8, Body::Rel(entries, *rela));
        s.link_symtab = true;
        s.info = index[&Key::Data(*section)] as u32;
        s.entsize = if *rela { 24 } else { 16 };
        secs.push(s);
    }
    // Reference words (ptxas 11.8, probe_texref.ptx: `two` lists 0x154 tb, 0x150 ta): last
    // word first, R_CUDA_TEX_HEADER_INDEX / R_CUDA_SURF_HEADER_INDEX against the reference.
    for &k in &rel_c0 {
        let mut entries = vec![];
        for w in &kernels[k].refs {
            let Some(&at) = ref_idx.get(&(w.name.as_str(), w.surface)) else {
                let what = if w.surface { ".surfref" } else { ".texref" };
                return Err(format!(
                    "constant-bank word of `{}` names `{}`, which the module does not declare as a `{what}`",
                    kernels[k].name, w.name
                ));
            };
            let ty = if w.surface { R_CUDA_SURF_HEADER_INDEX } else { R_CUDA_TEX_HEADER_INDEX };
            entries.push((w.offset as u64, at, ty, 0));
        }
        entries.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut s =
            Sec::new(format!(".rel.nv.constant0.{}", kernels[k].name), elf::SHT_REL.0, 0, 8, Body::Rel(entries, false));
        s.link_symtab = true;
        s.info = index[&Key::Const0(k)] as u32;
        s.entsize = 16;
        secs.push(s);
    }
    let wa = elf::SHF_WRITE.0 | elf::SHF_ALLOC.0;
    for key in &order {
        secs.push(match *key {
            Key::Data(DataSection::Const3) => Sec::new(
                ".nv.constant3".into(),
                elf::SHT_PROGBITS.0,
                elf::SHF_ALLOC.0,
                data.const_align.max(1),
                Body::Bytes(const_bank.to_vec()),
            ),
            Key::Const0(k) => {
                let mut s = Sec::new(
                    format!(".nv.constant0.{}", kernels[k].name),
                    elf::SHT_PROGBITS.0,
                    elf::SHF_ALLOC.0,
                    4,
                    Body::Bytes(vec![0; const0_size(&kernels[k]) as usize]),
                );
                s.info = index[&Key::Text(k)] as u32;
                s
            }
            Key::Text(k) => {
                let kern = &kernels[k];
                // sh_flags: AX | barriers << 20; sh_info: registers << 24 | kernel symbol (§4.2).
                let flags = (elf::SHF_ALLOC.0 | elf::SHF_EXECINSTR.0) | ((kern.code.barriers as u64 & 0x7f) << 20);
                let mut s = Sec::new(
                    format!(".text.{}", kern.name),
                    elf::SHT_PROGBITS.0,
                    flags,
                    32,
                    Body::Bytes(kern.code.bytes.clone()),
                );
                s.link_symtab = true;
                s.info = (kern.regs << 24) | kernel_idx[k];
                s
            }
            Key::Data(DataSection::GlobalInit) => Sec::new(
                ".nv.global.init".into(),
                elf::SHT_PROGBITS.0,
                wa,
                data.init_align.max(1),
                Body::Bytes(data.init.clone()),
            ),
            Key::Data(DataSection::Global) => {
                Sec::new(".nv.global".into(), elf::SHT_NOBITS.0, wa, data.bss_align.max(1), Body::NoBits(data.bss_size))
            }
            Key::Shared(k) => {
                let mut s = Sec::new(
                    format!(".nv.shared.{}", kernels[k].name),
                    elf::SHT_NOBITS.0,
                    wa,
                    16,
                    Body::NoBits(kernels[k].shared_bytes as u64),
                );
                s.info = index[&Key::Text(k)] as u32;
                s
            }
            Key::RelAction => unreachable!("not in the data order"),
        });
    }
    Ok(emit(&secs, &syms, num_local, e_flags, false))
}

/// The symbol of a `.global .texref`/`.surfref` (ptxas 11.8: `st_info` 0x1a / 0x1c, i.e.
/// GLOBAL with type STT_CUDA_TEXTURE / STT_CUDA_SURFACE; `st_other` 0, section 0, value
/// and size 0).
fn ref_sym(r: &ModuleRef) -> SymPlan {
    SymPlan {
        name: r.name.clone(),
        section: 0,
        info: (elf::STB_GLOBAL.0 << 4) | if r.surface { STT_CUDA_SURFACE } else { STT_CUDA_TEXTURE },
        other: 0,
        value: 0,
        size: 0,
        local: false,
        of: None,
    }
}

/// The data relocations grouped into sections as ptxas 11.8 writes them: one group per
/// (section, with addend), entries in [`ModuleData::relocs`] order (per variable, last
/// element first); groups in [`ModuleData::reloc_sections`] order, the others after them
/// in order of first entry.
fn data_reloc_groups(data: &ModuleData) -> Vec<((DataSection, bool), Vec<&DataReloc>)> {
    let mut groups: Vec<((DataSection, bool), Vec<&DataReloc>)> =
        data.reloc_sections.iter().map(|k| (*k, vec![])).collect();
    for r in &data.relocs {
        let key = (r.section, r.addend != 0);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(r),
            None => groups.push((key, vec![r])),
        }
    }
    groups.retain(|g| !g.1.is_empty());
    groups
}

/// Writes the planned sections and symbols: header, string tables, symbols, section
/// contents in order, section headers, program headers (§4.3: PHDR, LOAD R X over the
/// constant and code sections, LOAD RW over the data and shared sections when there are
/// any, LOAD over the program headers). A `relocatable` file (`compile -c`, [`super::rel`])
/// is ET_REL without program headers, as ptxas 11.8 `-c` writes it.
pub(super) fn emit(secs: &[Sec], syms: &[SymPlan], num_local: u32, e_flags: u32, relocatable: bool) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut w = Writer::new(object::Endianness::Little, true, &mut buf);
    let leak = |s: &str| -> &'static [u8] { Box::leak(s.as_bytes().to_vec().into_boxed_slice()) };
    w.reserve_null_section_index();
    w.reserve_shstrtab_section_index();
    w.reserve_strtab_section_index();
    w.reserve_symtab_section_index();
    let names: Vec<_> = secs.iter().map(|s| (w.add_section_name(leak(&s.name)), w.reserve_section_index())).collect();
    w.reserve_null_symbol_index();
    let sym_names: Vec<_> = syms
        .iter()
        .map(|s| {
            w.reserve_symbol_index(None);
            w.add_string(leak(&s.name))
        })
        .collect();
    // Strings the `.nv.callgraph`/`.nv.prototype` words name, added before the table is laid out.
    let mut pair_strs: HashMap<String, object::write::StringId> = HashMap::new();
    for s in secs {
        if let Body::Pairs(p) = &s.body {
            for (_, v) in p {
                if let Word::Str(t) = v
                    && !pair_strs.contains_key(t)
                {
                    pair_strs.insert(t.clone(), w.add_string(leak(t)));
                }
            }
        }
    }
    w.reserve_file_header();
    w.reserve_shstrtab().expect("section names fit a 32-bit string table");
    w.reserve_strtab().expect("symbol names fit a 32-bit string table");
    w.reserve_symtab();
    let mut offsets = vec![];
    let mut nobits_at = 0;
    for s in secs {
        offsets.push(match s.body {
            Body::NoBits(_) => {
                if nobits_at == 0 {
                    nobits_at = w.reserved_len();
                }
                nobits_at
            }
            _ => w.reserve(s.size(), s.align.max(1)),
        });
    }
    let end_of_data = w.reserved_len();
    w.reserve_section_headers();
    let is = |s: &Sec, p: &str| s.name.starts_with(p);
    let rw: Vec<usize> =
        (0..secs.len()).filter(|&k| is(&secs[k], ".nv.global") || is(&secs[k], ".nv.shared.")).collect();
    let nph = if relocatable {
        0
    } else if rw.is_empty() {
        3
    } else {
        4
    };
    if nph > 0 {
        w.reserve_program_headers(nph);
    }
    let ph_off = w.reserved_len() - nph as u64 * 56;

    w.write_file_header(&FileHeader {
        os_abi: elf::OsAbi(OSABI_CUDA),
        abi_version: super::ABI_VERSION,
        e_type: if relocatable { elf::ET_REL } else { elf::ET_EXEC },
        e_machine: elf::EM_CUDA,
        e_entry: 0,
        e_flags: elf::FileFlags(e_flags),
    })
    .expect("a 64-bit ELF header");
    w.write_shstrtab();
    w.write_strtab();
    w.write_null_symbol();
    for (s, n) in syms.iter().zip(&sym_names) {
        w.write_symbol(&Sym {
            section: (s.section > 0).then(|| names[s.section - 4].1.0),
            st_name: w.string_offset(Some(*n)),
            st_info: elf::SymbolInfo(s.info),
            st_other: elf::SymbolOther(s.other),
            st_shndx: elf::SymbolSection(0),
            st_value: s.value,
            st_size: s.size,
        });
    }
    for s in secs {
        match &s.body {
            Body::Bytes(b) => {
                w.write_align(s.align.max(1));
                w.write(b);
            }
            Body::NoBits(_) => {}
            Body::Pairs(p) => {
                w.write_align(s.align.max(1));
                for (a, v) in p {
                    let b = match v {
                        Word::Value(x) => *x,
                        Word::Str(t) => pair_strs.get(t).map_or(0, |id| w.string_offset(Some(*id))),
                    };
                    w.write(&a.to_le_bytes());
                    w.write(&b.to_le_bytes());
                }
            }
            Body::Rel(entries, rela) => {
                w.write_align(s.align.max(1));
                for &(off, sym, ty, addend) in entries {
                    w.write_relocation(
                        *rela,
                        &Rel { r_offset: off, r_sym: sym, r_type: elf::RelocationType(ty), r_addend: addend },
                    );
                }
            }
        }
    }
    w.write_null_section_header();
    w.write_shstrtab_section_header();
    w.write_strtab_section_header();
    w.write_symtab_section_header(num_local);
    let symtab = w.symtab_index().0;
    for ((s, (name, _)), off) in secs.iter().zip(&names).zip(&offsets) {
        w.write_section_header(&SectionHeader {
            sh_name: w.section_name_offset(Some(*name)),
            sh_type: elf::SectionType(s.ty),
            sh_flags: elf::SectionFlags(s.flags),
            sh_addr: 0,
            sh_offset: *off,
            sh_size: s.size(),
            sh_link: if s.link_symtab { symtab } else { 0 },
            sh_info: s.info,
            sh_addralign: s.align,
            sh_entsize: s.entsize,
        });
    }
    let ph = |w: &mut Writer, ty: elf::ProgramType, flags: u32, off: u64, filesz: u64, memsz: u64| {
        w.write_program_header(&ProgramHeader {
            p_type: ty,
            p_flags: elf::ProgramFlags(flags),
            p_offset: off,
            p_vaddr: 0,
            p_paddr: 0,
            p_filesz: filesz,
            p_memsz: memsz,
            p_align: 8,
        });
    };
    let phsize = nph as u64 * 56;
    if relocatable {
        drop(w);
        buf[0x14..0x18].copy_from_slice(&E_VERSION.to_le_bytes());
        return buf;
    }
    ph(&mut w, elf::PT_PHDR, 5, ph_off, phsize, phsize);
    // R X: from the first constant section through the last code section.
    let code: Vec<usize> =
        (0..secs.len()).filter(|&k| is(&secs[k], ".nv.constant") || is(&secs[k], ".text.")).collect();
    let start = code.first().map_or(end_of_data, |&k| offsets[k]);
    let end = code.last().map_or(end_of_data, |&k| offsets[k] + secs[k].size());
    ph(&mut w, elf::PT_LOAD, 5, start, end - start, end - start);
    if let Some(&first) = rw.first() {
        // RW: file bytes of `.nv.global.init`, memory for it and every NOBITS section
        // (ptxas 11.8: filesz 0x10, memsz 0x198 = 0x10 + 0x80 + 0x8 + 0x100).
        let filesz: u64 =
            rw.iter().filter(|&&k| !matches!(secs[k].body, Body::NoBits(_))).map(|&k| secs[k].size()).sum();
        let memsz: u64 = rw.iter().map(|&k| secs[k].size()).sum();
        ph(&mut w, elf::PT_LOAD, 6, offsets[first], filesz, memsz);
    }
    ph(&mut w, elf::PT_LOAD, 5, ph_off, phsize, phsize);
    drop(w);
    // The writer sets e_version to EV_CURRENT (1); ptxas writes the toolkit version.
    buf[0x14..0x18].copy_from_slice(&E_VERSION.to_le_bytes());
    buf
}
