//! `ptx2sass asm`: a listing in our syntax (as `compile` prints it, possibly edited by
//! hand, or as `disasm` prints a cubin) → a cubin, with the module data (`.nv.constant3`,
//! `.nv.global.init`, `.nv.global`, their symbols and relocations) of the listing's data
//! block ([`ModuleData::listing`]). Every instruction is checked against
//! the encoding table (opcode, modifiers, operand kinds and ranges) and against the
//! register alignment the compiler guarantees (64-bit data and `.E` address pairs even,
//! 128-bit data 4-aligned: `ptxas-sm50-findings.md` §3), with `line:col` errors.
// Input is hostile (`run` arguments, disasm/asm input): no panicking shortcuts here
// (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::{E_FLAGS, Kernel, ModuleRef, PARAM_BASE, RefWord, is_ref, param_size, warp_wide, write};
use crate::sass::data::ModuleData;
use crate::sass::encode::{self, form::parse_reg};
use crate::sass::text::{self, TextInstr};

/// An error in the listing, 1-based line and column.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {message}")]
pub struct AsmError {
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
    /// What is wrong, with the offending text.
    pub message: String,
}

/// Facts the listing's header comments give (`// .entry k: 8 registers, 64 bytes stack
/// frame (0 spill), 1024 bytes shared`, `//   c[0x0][0x140]  .u64  name`).
#[derive(Default)]
struct Header {
    regs: Option<u32>,
    frame: u32,
    shared: u32,
    params: Vec<(u32, u32)>,
    /// `//   c[0x0][0x150]  .texref  ta`: a reference word (`compile` prints one per
    /// reference the kernel uses).
    refs: Vec<RefWord>,
}

fn headers(listing: &str) -> Vec<Header> {
    let mut out: Vec<Header> = vec![];
    for line in listing.lines().map(str::trim) {
        if line.starts_with("Function : ") || (line.starts_with(".text.") && line.ends_with(':')) {
            out.push(Header::default());
            continue;
        }
        let Some(h) = out.last_mut() else { continue };
        let Some(c) = line.strip_prefix("//") else { continue };
        let c = c.trim();
        // `compile` writes `// .entry k: 8 registers, ...`; `disasm` writes
        // `// sh_info: 8 registers` (the count of sh_info, so that `asm` of a disassembly
        // keeps it; without the function's name, which may hold anything, " registers"
        // included).
        if let Some(rest) =
            c.strip_prefix(".entry ").or_else(|| c.strip_prefix(".func ")).or_else(|| c.strip_prefix("sh_info: "))
        {
            let num = |key: &str| -> Option<u32> {
                let at = rest.find(key)?;
                rest[..at].split_whitespace().last()?.parse().ok()
            };
            h.regs = num(" registers");
            h.frame = num(" bytes stack frame").unwrap_or(0);
            h.shared = num(" bytes shared").unwrap_or(0);
        } else if let Some(rest) = c.strip_prefix("c[0x0][0x") {
            let mut w = rest.split_whitespace();
            let off = w.next().and_then(|o| u32::from_str_radix(o.trim_end_matches(']'), 16).ok());
            let ty = w.next();
            if let (Some(offset), Some(ty), Some(name)) = (off, ty, w.next())
                && is_ref(ty)
            {
                h.refs.push(RefWord { offset, name: name.to_string(), surface: ty == ".surfref" });
                continue;
            }
            let size = ty.and_then(param_size);
            if let (Some(off), Some(size)) = (off, size) {
                h.params.push((off.saturating_sub(PARAM_BASE), size));
            }
        }
    }
    out
}

fn col_of(listing: &str, i: &TextInstr, needle: &str) -> usize {
    let line = listing.lines().nth(i.line.saturating_sub(1)).unwrap_or("");
    line.find(needle).or_else(|| line.find(&i.text)).map_or(1, |c| c.saturating_add(1))
}

/// The register number of an operand such as `R4`, `[R4+0x8]`.
fn first_reg(op: &str) -> Option<u64> {
    let s = op.trim_start_matches('[');
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric())).unwrap_or(s.len());
    parse_reg(&s[..end]).filter(|r| *r != 255)
}

/// Alignment of 64/128-bit data registers and `.E` address pairs of memory instructions.
fn alignment(i: &TextInstr) -> Option<(String, String)> {
    let (data, addr) = match i.opcode.as_str() {
        "LDG" | "LD" | "LDS" | "LDL" => (i.operands.first(), i.operands.get(1)),
        "STG" | "ST" | "STS" | "STL" => (i.operands.get(1), i.operands.first()),
        _ => return None,
    };
    let width = if i.mods.iter().any(|m| m == "128") {
        4
    } else if i.mods.iter().any(|m| m == "64") {
        2
    } else {
        1
    };
    if let Some(d) = data
        && let Some(r) = first_reg(d)
        && !r.is_multiple_of(width)
    {
        return Some((
            d.clone(),
            format!("a {}-bit operand must start at a register divisible by {width}", width.saturating_mul(32)),
        ));
    }
    if i.mods.iter().any(|m| m == "E")
        && let Some(a) = addr
        && let Some(r) = first_reg(a)
        && r % 2 != 0
    {
        return Some((a.clone(), "a 64-bit (.E) address must be an even register pair".into()));
    }
    None
}

/// Assembles a listing into a cubin. All errors are reported, in line order.
pub fn assemble(listing: &str) -> Result<Vec<u8>, Vec<AsmError>> {
    let funcs = text::parse(listing).map_err(|e| vec![AsmError { line: e.line, col: 1, message: e.message }])?;
    if funcs.is_empty() {
        return Err(vec![AsmError {
            line: 1,
            col: 1,
            message: "no function (`Function : NAME`) in the listing".into(),
        }]);
    }
    // `compile` lists a device function compiled on its own as a function of its own
    // (`// .func f: ...`); the cubin places it in its callers' sections with symbols and
    // stack records (`super::link`) that a listing does not carry yet.
    if let Some((k, _)) = listing.lines().enumerate().find(|(_, l)| l.trim_start().starts_with("// .func ")) {
        return Err(vec![AsmError {
            line: k.saturating_add(1),
            col: 1,
            message: "device functions compiled on their own (`.func`) cannot be assembled from a listing yet; \
                      compile the PTX to a cubin instead"
                .into(),
        }]);
    }
    let heads = headers(listing);
    let (data, const_bank) = match ModuleData::parse_listing(listing) {
        Ok(d) => d.unwrap_or_default(),
        Err((line, col, message)) => return Err(vec![AsmError { line, col, message }]),
    };
    let known: std::collections::HashSet<&str> = data.symbols.iter().map(|s| s.name.as_str()).collect();
    let mut errors = vec![];
    let mut kernels = vec![];
    for (k, f) in funcs.iter().enumerate() {
        // The name goes into NUL-terminated ELF string tables (section `.text.NAME` and the
        // symbol; ELF gABI "String Table"): a NUL in it made the ELF writer panic (found by
        // fuzz/ asm).
        if f.name.is_empty() || f.name.contains('\0') {
            errors.push(AsmError {
                line: f.instrs.first().map_or(1, |i| i.line),
                col: 1,
                message: format!("function name `{}` is empty or has a NUL character", f.name.escape_debug()),
            });
            continue;
        }
        for i in &f.instrs {
            if let Some((op, m)) = alignment(i) {
                errors.push(AsmError { line: i.line, col: col_of(listing, i, &op), message: format!("`{op}`: {m}") });
            }
        }
        match encode::encode_function(f) {
            // Relocated operands name module variables the data block defines.
            Ok(code) if code.relocs.iter().any(|(_, r)| !known.contains(r.symbol.as_str())) => {
                for (addr, r) in code.relocs.iter().filter(|(_, r)| !known.contains(r.symbol.as_str())) {
                    if let Some(i) = f.instrs.iter().find(|i| i.addr == *addr) {
                        let needle = format!("({})", r.symbol);
                        errors.push(AsmError {
                            line: i.line,
                            col: col_of(listing, i, &needle).saturating_add(1),
                            message: format!(
                                "`{}`: symbol `{}` is not a module variable of the listing's data block (`{}`)",
                                i.text,
                                r.symbol,
                                crate::sass::data::LISTING_TITLE
                            ),
                        });
                    }
                }
            }
            Ok(code) => {
                let h = heads.get(k);
                // sh_info keeps the count in bits 24..31 (sm50-encoding-and-cubin.md §4.2),
                // and SPA 5.0 has at most 255 registers per thread (R0..R254): a larger
                // count in a header comment would wrap silently (found by fuzz/ asm).
                // Parameters end within the parameter space, 0x1100 bytes from c[0x0][0x140]
                // (ptx::limits::KERNEL_PARAM_BYTES, ptxas 11.8's limit); a header comment
                // naming c[0x0][0xffffffff] overflowed the writer's constant bank size
                // (found with clippy::arithmetic_side_effects).
                if let Some((off, size)) = h.into_iter().flat_map(|h| &h.params).find(|(off, size)| {
                    u64::from(*off).saturating_add(u64::from(*size)) > crate::ptx::limits::KERNEL_PARAM_BYTES
                }) {
                    errors.push(AsmError {
                        line: f.instrs.first().map_or(1, |i| i.line),
                        col: 1,
                        message: format!(
                            "`{}`: a {size}-byte parameter at c[0x0][{:#x}] in the header comment ends beyond the 0x1100 bytes of parameter space",
                            f.name,
                            u64::from(*off).saturating_add(u64::from(PARAM_BASE))
                        ),
                    });
                    continue;
                }
                // A reference word (`.texref`/`.surfref` header line) is a 4-byte word of
                // constant bank 0 after c[0x0][0x140]; the bank holds 64 KB (an offset of
                // 0xfffffffc would size `.nv.constant0` at 4 GB); its name goes into the
                // string table, so no NUL (as for function names above).
                if let Some(w) = h.into_iter().flat_map(|h| &h.refs).find(|w| {
                    w.offset < PARAM_BASE
                        || w.offset % 4 != 0
                        || u64::from(w.offset).saturating_add(4) > 0x1_0000
                        || w.name.contains('\0')
                }) {
                    errors.push(AsmError {
                        line: f.instrs.first().map_or(1, |i| i.line),
                        col: 1,
                        message: format!(
                            "`{}`: the reference word of `{}` at c[0x0][{:#x}] in the header comment is not a 4-aligned word of constant bank 0 after c[0x0][0x140] (64 KB), or its name has a NUL character",
                            f.name, w.name.escape_debug(), w.offset
                        ),
                    });
                    continue;
                }
                // A texture-sampler pair's word (`t,s`, independent mode): no cubin yet
                // (`super::sampler_error`).
                if let Some(w) = h.into_iter().flat_map(|h| &h.refs).find(|w| w.name.contains(',')) {
                    errors.push(AsmError {
                        line: f.instrs.first().map_or(1, |i| i.line),
                        col: 1,
                        message: format!(
                            "not supported yet: `{}` uses the texture and sampler `{}` (independent mode: ptxas writes R_CUDA_TEX_HEADER_INDEX and R_CUDA_SAMP_HEADER_INDEX at the word; docs/textures.md §1.14)",
                            f.name,
                            w.name.escape_debug()
                        ),
                    });
                    continue;
                }
                if let Some(n) = h.and_then(|h| h.regs).filter(|n| *n > 255) {
                    errors.push(AsmError {
                        line: f.instrs.first().map_or(1, |i| i.line),
                        col: 1,
                        message: format!(
                            "`{}`: {n} registers in the header comment; at most 255 fit (R0..R254)",
                            f.name
                        ),
                    });
                    continue;
                }
                // Without a header, the register count is the highest register named + 1.
                let regs = h.and_then(|h| h.regs).unwrap_or_else(|| {
                    f.instrs
                        .iter()
                        .flat_map(|i| i.operands.iter())
                        .filter_map(|o| first_reg(o.trim_start_matches(['-', '|', '~', '!'])))
                        .max()
                        .map_or(0, |r| (r as u32).saturating_add(1))
                });
                kernels.push(Kernel {
                    warp_wide: warp_wide(f),
                    shared_bytes: h.map_or(0, |h| h.shared),
                    params: h.map_or(vec![], |h| h.params.clone()),
                    refs: h.map_or(vec![], |h| h.refs.clone()),
                    ..Kernel::new(f.name.clone(), code, regs, h.map_or(0, |h| h.frame))
                })
            }
            Err(es) => {
                for e in es {
                    let i = f.instrs.iter().find(|i| i.line == e.line);
                    let needle = e.message.split('`').nth(1).unwrap_or("").to_string();
                    let col = i.map_or(1, |i| col_of(listing, i, &needle));
                    errors.push(AsmError { line: e.line, col, message: format!("`{}`: {}", e.text, e.message) });
                }
            }
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| (e.line, e.col));
        return Err(errors);
    }
    // The references the listing names (a listing does not carry the unused ones, which
    // ptxas's cubin also has symbols for): first mention, kernel by kernel. One name is
    // one symbol: given as both kinds, it is an error.
    let mut refs: Vec<ModuleRef> = vec![];
    for w in kernels.iter().flat_map(|k| &k.refs) {
        match refs.iter().find(|r| r.name == w.name) {
            Some(r) if r.surface != w.surface => {
                return Err(vec![AsmError {
                    line: 1,
                    col: 1,
                    message: format!(
                        "`{}` is named both as a `.texref` and as a `.surfref` in the header comments",
                        w.name
                    ),
                }]);
            }
            Some(_) => {}
            None => refs.push(ModuleRef { name: w.name.clone(), surface: w.surface }),
        }
    }
    write(&kernels, &const_bank, &data, &refs, E_FLAGS).map_err(|m| vec![AsmError { line: 1, col: 1, message: m }])
}
