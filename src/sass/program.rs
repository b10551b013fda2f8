//! The final program: per function, a linear list of instructions with their scheduling
//! control fields, and its printer.
//!
//! Output format: cuobjdump-style lines (`/*0008*/` addresses skipping the control word
//! that Maxwell places before every three instructions, branch targets as addresses),
//! with control fields in the SPA 5.0 manual's syntax before the `;`:
//! `{@{!}Pg} OPCODE{.mods} operands {&req={b,...}} {&rdN} {&wrN} {?WAITn} ;`.

use super::instr::Instr;
use super::print::{NoVRegs, instr_text};
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
}

/// Byte address of instruction `k`: Maxwell puts one control word before every three
/// instructions, so instructions sit at 0x08, 0x10, 0x18, 0x28, ...
pub fn address(k: usize) -> usize {
    8 * (k + k / 3 + 1)
}

impl SassFunction {
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
                            .is_some_and(|x| matches!(x.kind, super::instr::SrcKind::Label(t) if t as usize == *k)))
            })
            .count()
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
        for (k, s) in self.code.iter().enumerate() {
            if let Some(l) = &s.label {
                writeln!(f, "\t// {l}:")?;
            }
            let text = instr_text(&s.instr, &NoVRegs, &label);
            let mut line = String::new();
            let _ = write!(line, "        /*{:04x}*/                   {text}", address(k));
            let pad = 72usize.saturating_sub(line.len()).max(1);
            writeln!(f, "{line}{} {} ;", " ".repeat(pad), s.ctrl)?;
        }
        Ok(())
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "\tcode for sm_50")?;
        for func in &self.functions {
            write!(f, "{func}")?;
            writeln!(f, "\t\t..........")?;
            writeln!(f)?;
        }
        Ok(())
    }
}
