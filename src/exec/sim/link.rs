//! Links a program for one launch: the kernel and every device function of the program in
//! one code image, as a loader places a cubin's functions in code memory.
//!
//! In the image, `CAL` targets and `PRET`/`BRA` labels are instruction indices; a
//! function's address (`MOV32I Rd, 32@lo(f)`) is the byte address of its first
//! instruction in the image ([`address`]); `JMX` jumps to the function at such an
//! address. `JCAL` to a function the program does not define keeps its symbol: the
//! simulator provides the CUDA runtime's `vprintf` and `__assertfail` (`super::builtin`);
//! their addresses are [`EXTERN_BASE`] and up.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::exec::ExecError;
use crate::sass::instr::{Src, SrcKind, SymPart};
use crate::sass::op::Op;
use crate::sass::program::{Program, SassFunction, Scheduled, address};
use std::collections::HashMap;

/// Addresses of the functions outside the program (one every 16 bytes from here).
pub const EXTERN_BASE: u32 = 0xfff0_0000;

/// The linked code of a launch.
pub struct Image {
    /// The code, the kernel first, as one function named after the kernel.
    pub func: SassFunction,
    /// Where each function starts: (first instruction, name), in image order.
    pub starts: Vec<(usize, String)>,
    /// Function start by byte address.
    pub by_addr: HashMap<u32, usize>,
    /// Names of the symbols `JCAL` keeps (functions outside the program).
    pub externs: Vec<String>,
    /// The image calls functions (its stack needs room beyond the kernel's frame).
    pub calls: bool,
}

impl Image {
    /// The function holding instruction `k` and `k`'s index in it.
    pub fn owner(&self, k: usize) -> (&str, usize) {
        let at = self.starts.partition_point(|(s, _)| *s <= k).saturating_sub(1);
        // The kernel starts at 0, so every `k` has an owner.
        self.starts.get(at).map_or(("", k), |(s, name)| (name.as_str(), k.saturating_sub(*s)))
    }
}

/// Links `kernel` with every device function of `program`.
pub fn link(program: &Program, kernel: &SassFunction) -> Result<Image, ExecError> {
    let mut parts: Vec<&SassFunction> = vec![kernel];
    parts.extend(program.functions.iter().filter(|f| f.kind == ".func"));
    let mut starts = vec![];
    let mut n = 0usize;
    for f in &parts {
        starts.push((n, f.name.clone()));
        n = n.saturating_add(f.code.len());
    }
    let index: HashMap<&str, usize> = starts.iter().map(|(s, name)| (name.as_str(), *s)).collect();
    let mut externs: Vec<String> = vec![];
    let mut code: Vec<Scheduled> = Vec::with_capacity(n);
    let mut calls = false;
    for (f, (start, _)) in parts.iter().zip(&starts) {
        for s in &f.code {
            let mut s = s.clone();
            if matches!(s.instr.op, Op::Cal | Op::Jcal | Op::Jmx) {
                calls = true;
            }
            for src in s.instr.srcs.iter_mut() {
                match src.kind {
                    SrcKind::Label(t) => src.kind = SrcKind::Label(start.saturating_add(t as usize) as u32),
                    SrcKind::Sym { id, part } => {
                        let name = f.symbols.get(id as usize).cloned().unwrap_or_default();
                        let internal = index.get(name.as_str()).copied();
                        let ext = |externs: &mut Vec<String>| match externs.iter().position(|e| *e == name) {
                            Some(k) => k,
                            None => {
                                externs.push(name.clone());
                                externs.len().saturating_sub(1) // the one just pushed
                            }
                        };
                        *src = match (part, internal) {
                            (SymPart::Target, Some(t)) => Src::label(t as u32),
                            (SymPart::Target, None) => {
                                if s.instr.op == Op::Cal {
                                    return Err(ExecError::Unsupported(format!(
                                        "`{}` CALs `{name}`, which the program does not define",
                                        f.name
                                    )));
                                }
                                Src::sym(ext(&mut externs) as u32, SymPart::Target)
                            }
                            // A module variable's address: the loader's (`super::load`).
                            (SymPart::Lo | SymPart::Hi, None) if program.data.symbol(&name).is_some() => {
                                Src::sym(ext(&mut externs) as u32, part)
                            }
                            (SymPart::Lo, Some(t)) => Src::imm(address(t) as u32),
                            (SymPart::Lo, None) => {
                                // A made-up address per extern, 16 bytes apart (few externs).
                                Src::imm(EXTERN_BASE.wrapping_add((ext(&mut externs) as u32).wrapping_mul(16)))
                            }
                            (SymPart::Hi, _) => Src::imm(0),
                        };
                    }
                    _ => {}
                }
            }
            code.push(s);
        }
    }
    let by_addr = starts.iter().map(|(s, _)| (address(*s) as u32, *s)).collect();
    let func = SassFunction {
        name: kernel.name.clone(),
        kind: kernel.kind,
        regs: parts.iter().map(|f| f.regs).max().unwrap_or(0),
        frame_bytes: kernel.frame_bytes,
        spill_bytes: kernel.spill_bytes,
        shared_bytes: kernel.shared_bytes,
        params: kernel.params.clone(),
        code,
        symbols: externs.clone(),
        linkage: kernel.linkage,
        compiler_consts: kernel.compiler_consts.clone(),
    };
    Ok(Image { func, starts, by_addr, externs, calls })
}
