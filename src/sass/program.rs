//! The final program: per function, a linear list of instructions with their scheduling
//! control fields, and its printer.
//!
//! Output format: cuobjdump-style lines (`/*0008*/` addresses skipping the control word
//! that Maxwell places before every three instructions, branch targets as addresses),
//! with control fields in the SPA 5.0 manual's syntax before the `;`:
//! `{@{!}Pg} OPCODE{.mods} operands {&req={b,...}} {&rdN} {&wrN} {?WAITn} ;`.

use super::instr::{Instr, SrcKind, SymPart};
use super::op::Op;
use super::print::{Symbols, VRegNames, instr_text};
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write};

/// The scheduling control fields of one instruction (ptxas findings section 7: stall
/// count, yield hint, write and read scoreboard barriers, wait mask, reuse flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ctrl {
    /// Cycles to wait before issuing the next instruction (0..=15).
    pub stall: u8,
    /// Yield hint.
    pub yield_hint: bool,
    /// Scoreboard barrier (0..=5) released when the results are written.
    pub wr: Option<u8>,
    /// Scoreboard barrier (0..=5) released when the sources have been read.
    pub rd: Option<u8>,
    /// Barriers to wait for before issuing (bit n = SBn).
    pub wait: u8,
    /// Operand reuse-cache flags (bit 0 = slot A, 1 = B, 2 = C).
    pub reuse: u8,
}

impl fmt::Display for Ctrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = vec![];
        if self.wait != 0 {
            let bs: Vec<String> = (0..6).filter(|b| self.wait >> b & 1 == 1).map(|b| b.to_string()).collect();
            parts.push(format!("&req={{{}}}", bs.join(",")));
        }
        if let Some(r) = self.rd {
            parts.push(format!("&rd{r}"));
        }
        if let Some(w) = self.wr {
            parts.push(format!("&wr{w}"));
        }
        parts.push(format!("?WAIT{}", self.stall));
        if self.yield_hint {
            parts.push("?YIELD".into());
        }
        f.write_str(&parts.join(" "))
    }
}

/// One scheduled instruction. Branch and SSY targets (`SrcKind::Label`) name indices into
/// [`SassFunction::code`].
#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    /// The instruction, on physical registers.
    pub instr: Instr,
    /// Its control fields.
    pub ctrl: Ctrl,
    /// A PTX label or block name that starts here (printed as a comment).
    pub label: Option<String>,
}

/// One function's final code and the facts its header reports.
#[derive(Clone, Debug, PartialEq)]
pub struct SassFunction {
    /// Name.
    pub name: String,
    /// `.entry` or `.func`.
    pub kind: &'static str,
    /// Registers used.
    pub regs: u32,
    /// Stack frame bytes (local data and spills).
    pub frame_bytes: u32,
    /// Spill bytes within the frame.
    pub spill_bytes: u32,
    /// Shared memory bytes.
    pub shared_bytes: u32,
    /// Parameter layout: (offset in bank 0, type, name).
    pub params: Vec<(u32, String, String)>,
    /// Constant bank 2: compiler-generated constants (ptxas's `.nv.constant2.K`, read as
    /// `c[0x2][..]`; empty for ptx2sass's code, which builds such constants in registers).
    pub compiler_consts: Vec<u8>,
    /// The code.
    pub code: Vec<Scheduled>,
    /// Names of the symbols the code refers to ([`SrcKind::Sym`] ids index this).
    pub symbols: Vec<String>,
    /// Whether other modules see the function (PTX ISA 11.6 linking directives).
    pub linkage: Linkage,
}

/// A function's visibility to the linker (PTX ISA 11.6): `.visible` and `.weak` ones get
/// global symbols in a cubin, a `.weak` one may be replaced by a strong definition from
/// another module (`nvlink`), internal ones are local to the module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Linkage {
    /// No linking directive: local to the module.
    #[default]
    Internal,
    /// `.visible` (and every kernel).
    Visible,
    /// `.weak`.
    Weak,
}

/// How the cubin writer fills in a symbol's address in one instruction (ptxas 11.8
/// `cuobjdump -elf` on calls and function addresses, `docs/abi.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelocKind {
    /// `CAL` to a function of the module: a relative offset, known once the callee is
    /// placed (ptxas resolves it without a relocation when both are in one section).
    Call,
    /// `JCAL` to a function outside the module: absolute 32-bit target,
    /// `R_CUDA_ABS32_20`.
    AbsCall,
    /// `MOV32I Rd, 32@lo(f)`: `R_CUDA_ABS32_LO_20`.
    AbsLo,
    /// `MOV32I Rd, 32@hi(f)`: `R_CUDA_ABS32_HI_20`.
    AbsHi,
}

/// One symbol reference of a function's code, for the cubin writer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// Index of the instruction in [`SassFunction::code`] (its address is
    /// [`address`]`(instr)`).
    pub instr: usize,
    /// How the address is encoded.
    pub kind: RelocKind,
    /// The symbol.
    pub symbol: String,
}

/// A whole compiled module.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    /// Functions in source order.
    pub functions: Vec<SassFunction>,
    /// Initial contents of constant bank 3 (user `.const` data), in bytes.
    pub const_bank: Vec<u8>,
    /// The `.const` module variables in bank 3: (name, byte offset, size in bytes), for a
    /// launch that sets their contents (`ptx2sass run --init`).
    pub const_vars: Vec<(String, u32, u32)>,
    /// The `.global` data sections, every module variable's symbol and the address
    /// initializers ([`crate::sass::data`]).
    pub data: super::data::ModuleData,
    /// The module's `.global .texref`/`.surfref`, in declaration order: the cubin has a
    /// symbol for each, used or not (ptxas 11.8, docs/textures.md §1.1).
    pub refs: Vec<crate::cubin::ModuleRef>,
}

/// Byte address of instruction `k`: Maxwell puts one control word before every three
/// instructions, so instructions sit at 0x08, 0x10, 0x18, 0x28, ...
pub fn address(k: usize) -> usize {
    8 * (k + k / 3 + 1)
}

impl SassFunction {
    /// Every symbol reference of the code: calls and function addresses, in code order.
    pub fn relocations(&self) -> Vec<Reloc> {
        let mut out = vec![];
        for (k, s) in self.code.iter().enumerate() {
            for src in &s.instr.srcs {
                if let SrcKind::Sym { id, part } = src.kind {
                    let kind = match (part, s.instr.op) {
                        (SymPart::Target, Op::Jcal) => RelocKind::AbsCall,
                        (SymPart::Target, _) => RelocKind::Call,
                        (SymPart::Lo, _) => RelocKind::AbsLo,
                        (SymPart::Hi, _) => RelocKind::AbsHi,
                    };
                    let symbol = self.symbols.get(id as usize).cloned().unwrap_or_default();
                    out.push(Reloc { instr: k, kind, symbol });
                }
            }
        }
        out
    }

    /// Real instructions, excluding `NOP` and the final self-branch after `EXIT` (the
    /// count `scripts/ptxas-ref.sh` reports for ptxas).
    pub fn instr_count(&self) -> usize {
        let n = self.code.len();
        self.code
            .iter()
            .enumerate()
            .filter(|(k, s)| {
                s.instr.op != super::op::Op::Nop
                    && !(*k + 1 == n
                        && s.instr.op == super::op::Op::Bra
                        && s.instr
                            .srcs
                            .first()
                            .is_some_and(|x| matches!(x.kind, SrcKind::Label(t) if t as usize == *k)))
            })
            .count()
    }
}

/// Physical registers only; symbols by the function's names.
impl VRegNames for SassFunction {
    fn prefix(&self, _: u32) -> &'static str {
        "%v"
    }
    fn width(&self, _: u32) -> u8 {
        1
    }
    fn symbol(&self, id: u32) -> String {
        self.symbols.get(id as usize).cloned().unwrap_or_else(|| format!("sym{id}"))
    }
}

impl fmt::Display for SassFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "\t\tFunction : {}", self.name)?;
        writeln!(
            f,
            "\t// {} {}: {} registers, {} bytes stack frame ({} spill), {} bytes shared",
            self.kind, self.name, self.regs, self.frame_bytes, self.spill_bytes, self.shared_bytes
        )?;
        if !self.params.is_empty() {
            writeln!(f, "\t// parameters in constant bank 0:")?;
            for (off, ty, name) in &self.params {
                writeln!(f, "\t//   c[0x0][0x{off:x}]  {ty:<8} {name}")?;
            }
        }
        let label = |t: u32| format!("0x{:x}", address(t as usize));
        let names = Symbols(&self.symbols);
        for (k, s) in self.code.iter().enumerate() {
            if let Some(l) = &s.label {
                writeln!(f, "\t// {l}:")?;
            }
            let text = instr_text(&s.instr, &names, &label);
            let mut line = String::new();
            let _ = write!(line, "        /*{:04x}*/                   {text}", address(k));
            let pad = 72usize.saturating_sub(line.len()).max(1);
            writeln!(f, "{line}{} {} ;", " ".repeat(pad), s.ctrl)?;
        }
        Ok(())
    }
}

impl Program {
    /// The functions of the program that function `k` may call, transitively: those it
    /// `CAL`s or `JCAL`s and those whose address it takes (possible indirect callees).
    /// Indices into [`Program::functions`], `k` first.
    pub fn reachable(&self, k: usize) -> Vec<usize> {
        reachable_in(&self.callees(), k)
    }

    /// Per function (indices into [`Program::functions`]), the functions of the program
    /// its relocations name, in relocation order (repeats kept): the call graph's edges,
    /// built once (one pass over the code and one name index).
    fn callees(&self) -> Vec<Vec<usize>> {
        let index: HashMap<&str, usize> =
            self.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
        self.functions
            .iter()
            .map(|f| f.relocations().iter().filter_map(|r| index.get(r.symbol.as_str()).copied()).collect())
            .collect()
    }

    /// Gives every kernel the register count of the deepest need among the functions it
    /// may call (the hardware allocates a kernel's registers for all its callees; ptxas
    /// 11.8 reports the kernel of `fact` with fact's 5 registers).
    pub fn propagate_register_counts(&mut self) {
        let callees = self.callees();
        for k in 0..self.functions.len() {
            if self.functions[k].kind != ".entry" {
                continue;
            }
            let regs = reachable_in(&callees, k).iter().map(|&g| self.functions[g].regs).max().unwrap_or(0);
            self.functions[k].regs = regs;
        }
    }

    /// Turns the program into what `ptxas -c` emits for a relocatable cubin: every `CAL`
    /// of another function becomes `JCAL` of its symbol (an absolute target the linker
    /// fills in, `R_CUDA_ABS32_20`); a function's calls of itself stay `CAL`, resolved
    /// in its own section. ptxas 11.8 `-arch=sm_50 -O3 -c` (docs/abi.md): a kernel
    /// calling the internal `fact` has `JCAL `(fact)` with an `R_CUDA_ABS32_20` against
    /// the LOCAL `fact`, and `fact` calls itself with `CAL `(.text.fact)`.
    pub fn make_relocatable(&mut self) {
        for f in &mut self.functions {
            for s in &mut f.code {
                if s.instr.op != Op::Cal {
                    continue;
                }
                let other = s.instr.srcs.iter().any(|src| {
                    matches!(src.kind, SrcKind::Sym { id, part: SymPart::Target }
                        if f.symbols.get(id as usize).is_some_and(|n| *n != f.name))
                });
                if other {
                    s.instr.op = Op::Jcal;
                }
            }
        }
    }

    /// The functions the code calls or takes the address of that the program does not
    /// define (`.extern .func` declarations such as `vprintf`), in first-use order: what
    /// a linker must resolve (ptxas: `EIATTR_EXTERNS`).
    pub fn externs(&self) -> Vec<String> {
        let defined: HashSet<&str> = self.functions.iter().map(|f| f.name.as_str()).collect();
        let mut seen: HashSet<String> = HashSet::new();
        let mut out: Vec<String> = vec![];
        for f in &self.functions {
            for r in f.relocations() {
                if !defined.contains(r.symbol.as_str()) && seen.insert(r.symbol.clone()) {
                    out.push(r.symbol);
                }
            }
        }
        out
    }
}

/// Breadth-first over the call graph `callees` (from [`Program::callees`]) from `k`:
/// `k` first, then every function it reaches, each once, in discovery order.
fn reachable_in(callees: &[Vec<usize>], k: usize) -> Vec<usize> {
    let mut seen = vec![false; callees.len()];
    let mut out = vec![k];
    seen[k] = true;
    let mut at = 0;
    while at < out.len() {
        for &g in &callees[out[at]] {
            if !std::mem::replace(&mut seen[g], true) {
                out.push(g);
            }
        }
        at += 1;
    }
    out
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "\tcode for sm_50")?;
        for func in &self.functions {
            write!(f, "{func}")?;
            writeln!(f, "\t\t..........")?;
            writeln!(f)?;
        }
        // The module's data, in comments (`asm` reads them back).
        f.write_str(&self.data.listing(&self.const_bank))
    }
}
