//! CUBIN output: an ELF64 executable for sm_50 laid out as ptxas 11.8 writes it
//! (`../shared/reference/sm50-encoding-and-cubin.md` §4; docs/cubin.md lists every field and
//! the differences from ptxas), written with the `object` crate's low-level ELF writer,
//! and read back with its reader ([`read`]).
// Writes what hostile listings (`asm`) describe: no panicking shortcuts here (issue 20,
// docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod asm;
pub mod link;
pub mod read;
pub mod rel;
pub mod write;

pub use write::write;

use crate::sass::encode::{self, Code, EncodeError};
use crate::sass::program::Program;
use std::collections::HashMap;

/// `e_flags`: `EF_CUDA_SM50 | EF_CUDA_TEXMODE_UNIFIED | EF_CUDA_64BIT_ADDRESS |
/// EF_CUDA_VIRTUAL_SM(SM50)` (§4.1; every ptxas 11.8 sm_50 cubin of a module without
/// `texmode_independent`).
pub const E_FLAGS: u32 = 0x320532;
/// `EF_CUDA_TEXMODE_UNIFIED` (0x100) and `EF_CUDA_TEXMODE_INDEPENDENT` (0x200): ptxas 11.8
/// sets the latter for `.target sm_50, texmode_independent` (samples block_scan, daxpy).
const TEXMODE_BITS: u32 = 0x300;

/// `e_flags` for a module with these `.target` words.
pub fn e_flags(target: &[String]) -> u32 {
    if target.iter().any(|t| t == "texmode_independent") { (E_FLAGS & !TEXMODE_BITS) | 0x200 } else { E_FLAGS }
}
/// `e_version` as ptxas 11.8 writes it (the toolkit, 118; cuobjdump prints `toolkit=118`).
pub const E_VERSION: u32 = 118;
/// ELF OSABI of CUDA cubins, and its ABI version (§4.1).
pub const OSABI_CUDA: u8 = 0x33;
/// ABI version 7.
pub const ABI_VERSION: u8 = 7;
/// SHT_CUDA_INFO.
pub const SHT_CUDA_INFO: u32 = 0x7000_0000;
/// SHT_CUDA_RELOCINFO.
pub const SHT_CUDA_RELOCINFO: u32 = 0x7000_000b;
/// STO_CUDA_ENTRY (`st_other` of a kernel symbol).
pub const STO_CUDA_ENTRY: u8 = 0x10;
/// Kernel parameters start at this offset of constant bank 0 (findings §6).
pub const PARAM_BASE: u32 = 0x140;

/// `.nv.rel.action`: byte-identical in all 42 executable cubins ptxas 11.8 wrote for the
/// reference corpus (§4.2; these are the words of `samples/local_array`'s cubin). cuobjdump
/// decodes it as the relocation-action table.
pub(crate) const REL_ACTION: [u64; 28] = [
    0x000000000000004b,
    0x222f0a1008020200,
    0x0000000008000000,
    0x0000000008080000,
    0x0000000008100000,
    0x0000000008180000,
    0x0000000008200000,
    0x0000000008280000,
    0x0000000008300000,
    0x0000000008380000,
    0x0000000008000001,
    0x0000000008080001,
    0x0000000008100001,
    0x0000000008180001,
    0x0000000008200001,
    0x0000000008280001,
    0x0000000008300001,
    0x0000000008380001,
    0x0000000008000002,
    0x0000000008080002,
    0x0000000008100002,
    0x0000000008180002,
    0x0000000008200002,
    0x0000000008280002,
    0x0000000008300002,
    0x0000000008380002,
    0x0000002c14000000,
    0x000000000c000003,
];

/// EIATTR codes (§4.5; names as cuobjdump prints them).
#[allow(missing_docs)]
pub mod eiattr {
    pub const CTAIDZ_USED: u8 = 0x04;
    pub const PARAM_CBANK: u8 = 0x0a;
    pub const FRAME_SIZE: u8 = 0x11;
    pub const MIN_STACK_SIZE: u8 = 0x12;
    pub const KPARAM_INFO: u8 = 0x17;
    pub const CBANK_PARAM_SIZE: u8 = 0x19;
    pub const MAXREG_COUNT: u8 = 0x1b;
    pub const EXIT_INSTR_OFFSETS: u8 = 0x1c;
    pub const EXTERNS: u8 = 0x0f;
    pub const S2RCTAID_INSTR_OFFSETS: u8 = 0x1d;
    pub const MAX_STACK_SIZE: u8 = 0x23;
    pub const COOP_GROUP_INSTR_OFFSETS: u8 = 0x28;
    pub const INT_WARP_WIDE_INSTR_OFFSETS: u8 = 0x31;
    pub const INDIRECT_BRANCH_TARGETS: u8 = 0x34;
    pub const CRS_STACK_SIZE: u8 = 0x1e;
    pub const SW1850030_WAR: u8 = 0x2a;
    pub const REGCOUNT: u8 = 0x2f;
    pub const SW2393858_WAR: u8 = 0x30;
    pub const CUDA_API_VERSION: u8 = 0x37;
    /// `EIFMT_BVAL`, value 0 (the bank): the kernel uses a `.texref` (docs/textures.md §1.1).
    pub const BINDLESS_TEXTURE_BANK: u8 = 0x15;
    /// `EIFMT_BVAL`, value 0: the kernel uses a `.surfref`.
    pub const BINDLESS_SURFACE_BANK: u8 = 0x16;
}

/// `R_CUDA_TEX_HEADER_INDEX`: the driver writes a `.texref`'s texture header index into
/// the 32-bit constant-bank-0 word at the offset (ptxas 11.8, `readelf -r`: type 6).
pub const R_CUDA_TEX_HEADER_INDEX: u32 = 6;
/// `R_CUDA_SURF_HEADER_INDEX`: the same for a `.surfref` (type 0x34).
pub const R_CUDA_SURF_HEADER_INDEX: u32 = 0x34;
/// `STT_CUDA_TEXTURE`: symbol type of a `.global .texref` (`st_info` 0x1a with GLOBAL).
pub const STT_CUDA_TEXTURE: u8 = 10;
/// `STT_CUDA_SURFACE`: symbol type of a `.global .surfref` (`st_info` 0x1c with GLOBAL).
pub const STT_CUDA_SURFACE: u8 = 12;

/// A module's `.global .texref`/`.surfref` (every one has a symbol, used or not).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleRef {
    /// The reference's name.
    pub name: String,
    /// `.surfref` rather than `.texref`.
    pub surface: bool,
}

/// A kernel's constant-bank-0 word for a reference (`lower::tex`): the driver writes the
/// header index there through the relocation of `.rel.nv.constant0.<k>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefWord {
    /// Byte offset in constant bank 0 (0x140 + parameter bytes, then 4 per reference).
    pub offset: u32,
    /// The reference.
    pub name: String,
    /// `.surfref` rather than `.texref`.
    pub surface: bool,
}

/// `.nv.info` record formats: no value, 16-bit value, sized payload.
const EIFMT_NVAL: u8 = 1;
/// A one-byte value (EIATTR_BINDLESS_*_BANK).
const EIFMT_BVAL: u8 = 2;
const EIFMT_HVAL: u8 = 3;
const EIFMT_SVAL: u8 = 4;

fn rec_nval(out: &mut Vec<u8>, attr: u8) {
    out.extend_from_slice(&[EIFMT_NVAL, attr, 0, 0]);
}

fn rec_bval(out: &mut Vec<u8>, attr: u8, v: u8) {
    out.extend_from_slice(&[EIFMT_BVAL, attr, v, 0]);
}

fn rec_hval(out: &mut Vec<u8>, attr: u8, v: u16) {
    out.extend_from_slice(&[EIFMT_HVAL, attr]);
    out.extend_from_slice(&v.to_le_bytes());
}

pub(crate) fn rec_sval(out: &mut Vec<u8>, attr: u8, words: &[u32]) {
    out.extend_from_slice(&[EIFMT_SVAL, attr]);
    out.extend_from_slice(&(words.len().saturating_mul(4) as u16).to_le_bytes());
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// One kernel as the writer needs it.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// Name.
    pub name: String,
    /// Encoded code.
    pub code: Code,
    /// Registers (`.text` sh_info bits 24..31, EIATTR_REGCOUNT).
    pub regs: u32,
    /// Local frame bytes (MIN_STACK_SIZE, FRAME_SIZE).
    pub frame_bytes: u32,
    /// Static shared bytes (`.nv.shared.<k>`).
    pub shared_bytes: u32,
    /// Parameters: (offset from the start of the parameter area, size in bytes).
    pub params: Vec<(u32, u32)>,
    /// Offsets of the SHFL/VOTE instructions (EIATTR_INT_WARP_WIDE_INSTR_OFFSETS).
    pub warp_wide: Vec<u32>,
    /// The device functions placed after the kernel in its section ([`link`]).
    pub funcs: Vec<FuncSym>,
    /// Undefined functions the section calls (`JCAL`), in first-use order (EIATTR_EXTERNS).
    pub externs: Vec<String>,
    /// EIATTR_MIN_STACK_SIZE of the kernel: its frame plus its callees' deepest need
    /// (`0xffffffff` with recursion, as ptxas 11.8 writes it).
    pub min_stack: u32,
    /// Longest chain of calls from the kernel, `None` with recursion (CRS_STACK_SIZE).
    pub call_depth: Option<u32>,
    /// The kernel's `.texref`/`.surfref` words, in order of first use (ascending offsets).
    pub refs: Vec<RefWord>,
}

/// A device function's `FUNC` symbol in a kernel's section (`$<k>$<f>`, [`link`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncSym {
    /// Symbol name.
    pub name: String,
    /// Byte offset in the section (`st_value`).
    pub value: u32,
    /// Bytes up to the next function or the end of the section (`st_size`).
    pub size: u32,
    /// Binding: internal `LOCAL`, `.visible` `GLOBAL`, `.weak` `WEAK`.
    pub linkage: crate::sass::program::Linkage,
    /// EIATTR_FRAME_SIZE.
    pub frame_bytes: u32,
    /// EIATTR_MIN_STACK_SIZE.
    pub min_stack: u32,
}

impl Kernel {
    /// A kernel without calls (`asm` of a listing): stack = frame.
    pub fn new(name: String, code: Code, regs: u32, frame_bytes: u32) -> Kernel {
        Kernel {
            name,
            code,
            regs,
            frame_bytes,
            shared_bytes: 0,
            params: vec![],
            warp_wide: vec![],
            funcs: vec![],
            externs: vec![],
            min_stack: frame_bytes,
            call_depth: Some(0),
            refs: vec![],
        }
    }
}

/// Whether a listing parameter type is a `.texref`/`.surfref` word (`lower::tex`).
pub fn is_ref(ty: &str) -> bool {
    matches!(ty, ".texref" | ".surfref")
}

/// The error for a kernel that uses a `.texref`/`.surfref` in a relocatable cubin (`-c`):
/// there ptxas 11.8 gives the reference no constant-bank word at all (`.nv.constant0.<k>`
/// holds only the parameters) but relocates every instruction on it, `R_CUDA_BINDLESSOFF13_36`
/// (0x33) in `.rel.text.<k>` at the TEXS/TLDS/TXQ/SULD/SUST with index 0x0
/// (probe_texref.ptx, docs/textures.md §1.1), the linker choosing the word; our lowering
/// gives the word itself, so the relocatable writer ([`rel`]) refuses such a kernel. The
/// executable writer writes the word's relocation ([`write`]).
pub fn texref_error(f: &crate::sass::program::SassFunction) -> Option<EncodeError> {
    let (_, ty, name) = f.params.iter().find(|(_, ty, _)| is_ref(ty))?;
    Some(EncodeError {
        line: 0,
        text: String::new(),
        message: format!(
            "not supported yet: a relocatable cubin (`-c`) of kernel `{}`, which uses the `{ty}` `{name}` (ptxas -c relocates each instruction on it, R_CUDA_BINDLESSOFF13_36, instead of giving it a constant-bank word; docs/textures.md §1.1); an executable cubin (without `-c`), the listing and `run` support it",
            f.name
        ),
    })
}

/// The error for a cubin of a kernel that uses a texture-sampler pair (independent
/// texturing mode, a `ParamSlot` `.texref` named `t,s`): ptxas 11.8 writes two relocations
/// at the pair's word, `R_CUDA_TEX_HEADER_INDEX` (6) against `t` and
/// `R_CUDA_SAMP_HEADER_INDEX` (7) against `s`, a symbol of type 11 (`st_info` 0x1b) per
/// `.samplerref` and `EIATTR_SAMPLER_INIT` records of the initializers
/// (probe_independent.ptx, docs/textures.md §1.14); not written yet.
pub fn sampler_error(f: &crate::sass::program::SassFunction) -> Option<EncodeError> {
    let (_, _, name) = f.params.iter().find(|(_, ty, name)| is_ref(ty) && name.contains(','))?;
    Some(EncodeError {
        line: 0,
        text: String::new(),
        message: format!(
            "not supported yet: a cubin of kernel `{}`, which uses the texture and sampler `{name}` (independent mode: ptxas writes R_CUDA_TEX_HEADER_INDEX and R_CUDA_SAMP_HEADER_INDEX at the word, sampler symbols and EIATTR_SAMPLER_INIT; docs/textures.md §1.14); the listing, --verify and `run` support it",
            f.name
        ),
    })
}

/// The kernel's reference words from its listing parameters (`lower::tex` records each
/// as a `ParamSlot` of type `.texref`/`.surfref`).
pub fn ref_words(f: &crate::sass::program::SassFunction) -> Vec<RefWord> {
    f.params
        .iter()
        // A texture-sampler pair's word (`t,s`, independent mode, `lower::tex::sampler`)
        // has no relocation here: the driver refuses a cubin of such a kernel
        // ([`sampler_error`]), and the encoding check needs none.
        .filter(|(_, ty, name)| is_ref(ty) && !name.contains(','))
        .map(|(off, ty, name)| RefWord { offset: *off, name: name.clone(), surface: ty == ".surfref" })
        .collect()
}

/// The bytes of a PTX parameter type as the listing header spells it (`.u64`, `.b8[16]`,
/// `.align 16 .b8[24]`).
pub fn param_size(ty: &str) -> Option<u32> {
    let t = ty.split_whitespace().last()?;
    let (base, count) = match t.split_once('[') {
        Some((b, n)) => (b, n.trim_end_matches(']').parse::<u32>().ok()?),
        None => (t, 1),
    };
    let bits: u32 = base.get(2..)?.parse().ok()?;
    (bits / 8).checked_mul(count)
}

/// Encodes every kernel of `p` with the device functions it calls (through the printed
/// listing of its section, [`section_listing`], which is what the encoder reads) and
/// writes the cubin; `target` are the module's `.target` words.
pub fn from_program(p: &Program, target: &[String]) -> Result<Vec<u8>, Vec<EncodeError>> {
    let mut kernels = vec![];
    let mut errors = vec![];
    // Each kernel's section holds the kernel and its callees ([`link`]); device functions
    // no kernel calls are not written (they have no section of their own in ptxas's
    // cubins either).
    for (k, f) in p.functions.iter().enumerate().filter(|(_, f)| f.kind == ".entry") {
        let (l, sec) = match section_listing(p, k) {
            Ok(x) => x,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        match encode::encode_function(&l) {
            Ok(code) => {
                let starts: Vec<u32> = sec.placed.iter().map(|g| link::start_value(g.first)).collect();
                let end = code.bytes.len() as u32;
                let funcs = sec
                    .placed
                    .iter()
                    .zip(starts.iter().zip(starts.iter().skip(1).chain(std::iter::once(&end))))
                    .map(|(g, (&start, &next))| FuncSym {
                        name: g.symbol.clone(),
                        value: start,
                        size: next.saturating_sub(start),
                        linkage: g.linkage,
                        frame_bytes: g.frame_bytes,
                        min_stack: g.min_stack,
                    })
                    .collect();
                kernels.push(Kernel {
                    name: f.name.clone(),
                    warp_wide: warp_wide(&l),
                    code,
                    regs: f.regs,
                    frame_bytes: f.frame_bytes,
                    shared_bytes: f.shared_bytes,
                    // A `.texref`/`.surfref` word is no parameter (`refs`).
                    params: f
                        .params
                        .iter()
                        .filter(|(_, ty, _)| !is_ref(ty))
                        .map(|(off, ty, _)| (off.saturating_sub(PARAM_BASE), param_size(ty).unwrap_or(4)))
                        .collect(),
                    funcs,
                    externs: sec.externs,
                    min_stack: sec.min_stack,
                    call_depth: sec.call_depth,
                    refs: ref_words(f),
                })
            }
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    write(&kernels, &p.const_bank, &p.data, &p.refs, e_flags(target))
        .map_err(|m| vec![EncodeError { line: 0, text: String::new(), message: m }])
}

/// Kernel `k`'s section ([`link::section`]) as a listing function: the printed code of
/// the kernel and its callees, each callee's first instruction labelled by its symbol
/// (the `CAL` targets). Errors: the printed listing does not read back (a printer bug).
pub fn section_listing(p: &Program, k: usize) -> Result<(crate::sass::text::TextFunction, link::Section), EncodeError> {
    let sec = link::section(p, k);
    let text = format!("{}", sec.func);
    let mut l = crate::sass::text::parse(&text)
        .map_err(|e| EncodeError { line: e.line, text: String::new(), message: e.message })?
        .into_iter()
        .next()
        .unwrap_or_default();
    for g in &sec.placed {
        l.labels.insert(g.symbol.clone(), g.first);
    }
    Ok((l, sec))
}

/// The first function of a printed listing, read back for the encoder. Errors: the text
/// does not read back (a printer bug).
pub(crate) fn section_text(text: &str) -> Result<crate::sass::text::TextFunction, Vec<EncodeError>> {
    Ok(crate::sass::text::parse(text)
        .map_err(|e| vec![EncodeError { line: e.line, text: String::new(), message: e.message }])?
        .into_iter()
        .next()
        .unwrap_or_default())
}

/// Every kernel section of `p` as listing text: [`section_listing`]'s code, printed with
/// a `$<k>$<f>:` label line before each callee, as nvdisasm prints the section.
pub fn linked_listing(p: &Program) -> String {
    let mut out = String::from("\tcode for sm_50\n");
    for (k, _) in p.functions.iter().enumerate().filter(|(_, f)| f.kind == ".entry") {
        let sec = link::section(p, k);
        let starts: HashMap<usize, &str> = sec.placed.iter().map(|g| (g.first, g.symbol.as_str())).collect();
        let text = format!("{}", sec.func);
        let mut at = 0;
        for line in text.lines() {
            if line.trim_start().starts_with("/*") {
                if let Some(s) = starts.get(&at) {
                    out.push_str(&format!("{s}:\n"));
                }
                at = at.saturating_add(1);
            }
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("\t\t..........\n\n");
    }
    out
}

/// Offsets of the SHFL and VOTE instructions of a listing function.
pub fn warp_wide(f: &crate::sass::text::TextFunction) -> Vec<u32> {
    f.instrs.iter().filter(|i| matches!(i.opcode.as_str(), "SHFL" | "VOTE")).map(|i| i.addr).collect()
}

pub(crate) fn param_bytes(k: &Kernel) -> u32 {
    k.params.iter().map(|(o, s)| o.saturating_add(*s)).max().unwrap_or(0)
}

/// Bytes of `.nv.constant0.<k>`: 0x140 + the parameters, grown to the end of the last
/// reference word (ptxas 11.8: 0x158 for 16 parameter bytes and two words, 0x144 for
/// none and one word; docs/textures.md §1.1).
pub(crate) fn const0_size(k: &Kernel) -> u32 {
    let words = k.refs.iter().map(|r| r.offset.saturating_add(4)).max().unwrap_or(0);
    PARAM_BASE.saturating_add(param_bytes(k)).max(words)
}

/// `.nv.info.<k>` (§4.5, in ptxas 11.8's order): CUDA_API_VERSION, the two WAR flags,
/// PARAM_CBANK, CBANK_PARAM_SIZE, KPARAM_INFO (last parameter first), MAXREG_COUNT,
/// INT_WARP_WIDE offsets, S2RCTAID offsets, EXIT offsets, CTAIDZ_USED,
/// INDIRECT_BRANCH_TARGETS, CRS_STACK_SIZE.
pub(crate) fn kernel_info(k: &Kernel, c0_sym: u32, externs: &[u32]) -> Vec<u8> {
    info_records(k, Some(c0_sym), externs)
}

/// `.nv.info.<f>` of a kernel (`c0_sym` its `.nv.constant0` symbol) or, with `None`, of a
/// device function in a relocatable cubin ([`rel`]): ptxas 11.8 `-c` writes
/// CUDA_API_VERSION, the two WAR flags, EXTERNS and CRS_STACK_SIZE there (probe `g.ptx`
/// in docs/cubin.md), none of the parameter records, MAXREG_COUNT or EXIT offsets.
pub(crate) fn info_records(k: &Kernel, c0_sym: Option<u32>, externs: &[u32]) -> Vec<u8> {
    let mut d = vec![];
    rec_sval(&mut d, eiattr::CUDA_API_VERSION, &[E_VERSION]);
    rec_nval(&mut d, eiattr::SW2393858_WAR);
    rec_nval(&mut d, eiattr::SW1850030_WAR);
    let kernel = c0_sym.is_some();
    if let Some(c0_sym) = c0_sym
        && !k.params.is_empty()
    {
        let bytes = param_bytes(k);
        rec_sval(&mut d, eiattr::PARAM_CBANK, &[c0_sym, (bytes << 16) | PARAM_BASE]);
        rec_hval(&mut d, eiattr::CBANK_PARAM_SIZE, bytes as u16);
        for (ord, (off, size)) in k.params.iter().enumerate().rev() {
            // u32 index 0; u16 ordinal, u16 offset; flags = size << 18 | cbank 0x1f << 12.
            rec_sval(&mut d, eiattr::KPARAM_INFO, &[0, (off << 16) | ord as u32, (size << 18) | (0x1f << 12)]);
        }
    }
    if kernel {
        rec_hval(&mut d, eiattr::MAXREG_COUNT, 0xff);
    }
    // ptxas 11.8 (probe_texref.ptx `mixed`, docs/textures.md §1.1): after MAXREG_COUNT,
    // SURFACE_BANK then TEXTURE_BANK, value 0 (constant bank 0), when the kernel has a
    // word of that kind; before S2RCTAID_INSTR_OFFSETS (probe p2 in docs/cubin.md).
    if k.refs.iter().any(|r| r.surface) {
        rec_bval(&mut d, eiattr::BINDLESS_SURFACE_BANK, 0);
    }
    if k.refs.iter().any(|r| !r.surface) {
        rec_bval(&mut d, eiattr::BINDLESS_TEXTURE_BANK, 0);
    }
    // ptxas 11.8 (probe `calls.ptx`): the symbols of the undefined functions the section
    // calls, right after MAXREG_COUNT.
    if !externs.is_empty() {
        rec_sval(&mut d, eiattr::EXTERNS, externs);
    }
    // ptxas 11.8 lists SHFL/VOTE here for `shfl`/`vote` without `.sync` and for the ones it
    // inserts itself (samples warp_reduce, atomic_max_f32); user `.sync` forms go to
    // COOP_GROUP_INSTR_OFFSETS, which the listing cannot tell apart (docs/cubin.md).
    if !k.warp_wide.is_empty() {
        rec_sval(&mut d, eiattr::INT_WARP_WIDE_INSTR_OFFSETS, &k.warp_wide);
    }
    if !k.code.s2r_ctaid.is_empty() {
        rec_sval(&mut d, eiattr::S2RCTAID_INSTR_OFFSETS, &k.code.s2r_ctaid);
    }
    if kernel {
        rec_sval(&mut d, eiattr::EXIT_INSTR_OFFSETS, &k.code.exits);
    }
    if k.code.ctaid_z {
        rec_nval(&mut d, eiattr::CTAIDZ_USED);
    }
    if !k.code.sync_targets.is_empty() || !k.code.indirect_calls.is_empty() {
        // Per SYNC/BRK: offset, kind 0, one target, the target. Per indirect call (JMX):
        // offset, kind 1 (cuobjdump: "kind_call"), no target — ptxas 11.8 writes
        // `58 1 0` for its `BRX R2 -0x60 (*"INDIRECT_CALL"*)` at 0x58 (probe
        // `calls.ptx`), and nvdisasm warns about an indirect branch without a record.
        // In address order.
        let mut entries: Vec<(u32, Vec<u32>)> =
            k.code.sync_targets.iter().map(|&(a, t)| (a, vec![a, 0, 1, t])).collect();
        entries.extend(k.code.indirect_calls.iter().map(|&a| (a, vec![a, 1, 0])));
        entries.sort_by_key(|e| e.0);
        let words: Vec<u32> = entries.into_iter().flat_map(|e| e.1).collect();
        rec_sval(&mut d, eiattr::INDIRECT_BRANCH_TARGETS, &words);
    }
    // ptxas's formula is unknown (`sm50-encoding-and-cubin.md` §4.5). For SSY/PBK nesting
    // this bound is at least every value ptxas 11.8 wrote for the samples (0x10..0x220):
    // 0x200 plus one 16-byte entry per nesting level and one more. Calls push a return
    // address: ptxas writes 0x10 per level of the longest call chain (probes: one CAL
    // 0x10, kernel → f → g 0x20) and 0x600 with recursion (probe `calls.ptx`).
    let ssy = if k.code.crs_depth > 0 {
        k.code.crs_depth.saturating_add(1).saturating_mul(0x10).saturating_add(0x200)
    } else {
        0
    };
    let calls = match k.call_depth {
        Some(d) => d.saturating_mul(0x10),
        None => 0x600,
    };
    let crs = ssy.max(calls);
    if crs > 0 {
        rec_sval(&mut d, eiattr::CRS_STACK_SIZE, &[crs]);
    }
    d
}

/// Disassembles every code section of a cubin into our listing syntax (functions in file
/// order). Returns the listing and one warning per word no form decodes (printed as
/// `.word 0x...`). Errors: see [`read::text_sections`]; code that is not whole bundles; a
/// code section whose function name is empty or blank (`.text.`: the listing's
/// `Function : NAME` line would name nothing; found by fuzz/ `disasm`).
pub fn disasm(data: &[u8]) -> Result<(String, Vec<String>), read::ReadError> {
    let mut out = String::from("\tcode for sm_50\n");
    let mut warnings = vec![];
    for t in read::text_sections(data)? {
        if t.name.trim().is_empty() {
            return Err(read::ReadError(format!("code section `.text.{}` names no function", t.name)));
        }
        let lines = encode::disasm::disassemble(&t.bytes, &t.relocs)
            .map_err(|e| read::ReadError(format!(".text.{}: {e}", t.name)))?;
        for l in lines.iter().filter(|l| !l.known) {
            warnings.push(format!(".text.{} at 0x{:04x}: unknown instruction word 0x{:016x}", t.name, l.addr, l.word));
        }
        // A scoreboard field of 6 (7 is none): nvdisasm prints it without complaint
        // (sm50-encoding-and-cubin.md §2, `barrier_ok.py`), but SPA 5.0 has scoreboards
        // 0-5, so `check` and `asm` reject the listing; say so here (found by fuzz/
        // `disasm` on mutated cubins).
        for l in lines.iter().filter(|l| l.ctrl.wr == Some(6) || l.ctrl.rd == Some(6)) {
            warnings.push(format!(
                ".text.{} at 0x{:04x}: scoreboard 6 in the control field (SPA 5.0 has SB0-SB5); `check` and `asm` reject this listing",
                t.name, l.addr
            ));
        }
        out.push_str(&encode::disasm::listing(&t.name, t.regs, &lines, &t.branch_targets));
        out.push_str("\t\t..........\n\n");
    }
    let (data, const_bank) = read::module_data(data)?;
    out.push_str(&data.listing(&const_bank));
    Ok((out, warnings))
}
