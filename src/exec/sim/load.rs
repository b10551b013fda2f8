//! The loader: what the CUDA driver does with a cubin's data before a launch, for the
//! program the simulator runs. It places `.nv.global.init` and `.nv.global` in global
//! memory (at [`MODULE_DATA_BASE`], far from the launch's buffers), fills them from the
//! initializers and the launch's `--init` contents, applies the data relocations (address
//! initializers, in `.nv.global.init` and in bank 3) and the code relocations: every
//! `32@lo(sym)`/`32@hi(sym)` immediate ([`SrcKind::Sym`]) becomes the half of the
//! variable's address it names, as R_CUDA_ABS32_LO_20/HI_20 patch the instruction word
//! (`sm50-encoding-and-cubin.md` §4.6).
//!
//! Each variable is its own allocation `var_NAME` at its section's base plus its offset
//! (ptxas's layout), so accesses between variables (into alignment padding) are out of
//! bounds, as they are for the interpreter, and `--dump`/`--compare` see variables by name.

// A loaded listing may be edited by hand (issue 20, docs/fuzzing.md "No-panic discipline"):
// offsets and sizes are checked, never trusted.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::{ExecError, Launch, Memory};
use crate::sass::data::{DataSection, Placement};
use crate::sass::instr::{Src, SrcKind, SymPart};
use crate::sass::program::{Program, SassFunction};
use std::collections::HashMap;

/// Address of `.nv.global.init` (16 TiB: above the buffers the harness places from
/// [`crate::exec::GLOBAL_BASE`], below the interpreter's module variables, so that an
/// address of one executor is never one of the other's).
pub const MODULE_DATA_BASE: u64 = 1 << 44;

/// The loaded module: relocated code of the kernel and constant bank 3.
pub struct Loaded {
    /// The kernel with every symbol operand replaced by its address half.
    pub func: SassFunction,
    /// Constant bank 3 with `--init` contents and relocated address initializers.
    pub const_bank: Vec<u8>,
}

/// Loads `program` for `launch`: allocates its module `.global` variables in `global` and
/// returns `func` relocated and bank 3. Errors: `--init` of an unknown variable or with
/// too many bytes, module data beyond the memory limit, a symbol the module does not
/// define (a listing edited by hand).
pub fn load(program: &Program, func: &SassFunction, launch: &Launch, global: &mut Memory) -> Result<Loaded, ExecError> {
    let data = &program.data;
    let init_len = data.init.len() as u64;
    crate::exec::check_memory(launch, "the module's .global data", init_len.saturating_add(data.bss_size))?;
    // Within the memory limit (at most 2^64 / 2), so neither sum wraps.
    let bss_base = MODULE_DATA_BASE.saturating_add(init_len).next_multiple_of(data.bss_align.max(256));
    let placement = Placement { init_base: MODULE_DATA_BASE, bss_base };
    let mut init = data.init.clone();
    let mut bss = vec![0u8; data.bss_size as usize];
    let mut const_bank = program.const_bank.clone();
    for (name, bytes) in &launch.module_init {
        let Some(s) = data.symbol(name) else {
            return Err(ExecError::Launch(format!(
                "--init {name}: the program has no .const or .global variable `{name}`"
            )));
        };
        if bytes.len() as u64 > s.size {
            return Err(ExecError::Launch(format!(
                "--init {name}: {} bytes for a variable of {} bytes",
                bytes.len(),
                s.size
            )));
        }
        let image = match s.section {
            DataSection::Const3 => &mut const_bank,
            DataSection::GlobalInit => &mut init,
            DataSection::Global => &mut bss,
        };
        let at = s.offset as usize;
        let end = at.saturating_add(bytes.len());
        crate::exec::check_memory(launch, &format!("--init {name}"), end as u64)?;
        if image.len() < end {
            image.resize(end, 0);
        }
        if let Some(d) = image.get_mut(at..end) {
            d.copy_from_slice(bytes);
        }
    }
    // Relocations after `--init`: an initializer's pointer is the loader's to write.
    let addrs = data.place(&placement, &mut init, &mut const_bank).map_err(ExecError::Launch)?;
    for s in &data.symbols {
        let (image, base) = match s.section {
            DataSection::Const3 => continue,
            DataSection::GlobalInit => (&init, placement.init_base),
            DataSection::Global => (&bss, placement.bss_base),
        };
        if s.size == 0 {
            continue;
        }
        let bytes = image
            .get(s.offset as usize..s.offset.saturating_add(s.size) as usize)
            .ok_or_else(|| ExecError::Launch(format!("variable `{}` lies outside {}", s.name, s.section.name())))?;
        // `base + offset` lies within the image just checked, placed below 2^64.
        global.alloc(&format!("var_{}", s.name), base.saturating_add(s.offset), bytes.to_vec())?;
    }
    Ok(Loaded { func: relocate(func, &addrs)?, const_bank })
}

/// `func` with every `32@lo`/`32@hi` symbol operand of a module variable replaced by the
/// half of the address it names (functions' symbols are the linker's, `super::link`).
fn relocate(func: &SassFunction, addrs: &HashMap<String, u64>) -> Result<SassFunction, ExecError> {
    let mut f = func.clone();
    for s in f.code.iter_mut() {
        for src in s.instr.srcs.iter_mut() {
            if let SrcKind::Sym { id, part: part @ (SymPart::Lo | SymPart::Hi) } = src.kind {
                let hi = part == SymPart::Hi;
                let name = func.symbols.get(id as usize).map_or("?", String::as_str);
                let a = addrs.get(name).ok_or_else(|| {
                    ExecError::Launch(format!("`{}` refers to `{name}`, which the module does not define", func.name))
                })?;
                *src = Src { kind: SrcKind::Imm(if hi { (a >> 32) as u32 } else { *a as u32 }), mods: src.mods };
            }
        }
    }
    Ok(f)
}
