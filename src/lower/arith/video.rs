//! `lop3` (below), and the scalar video instructions `vadd vsub vabsdiff vmin vmax vshl vshr` (PTX ISA 9.7.10.1
//! and 9.7.10.2), without operand selectors or merges (those are rejected):
//!
//! ```text
//! ta = a extended by atype; tb = b extended by btype (.u32 for the shifts)
//! tmp = ta op tb  (at full precision; shifts take min(tb, 32) with .clamp, tb & 31 with .wrap)
//! tmp = .sat ? clamp(tmp, dtype range) : tmp
//! d   = .op2 ? (tmp + c | min(tmp, c) | max(tmp, c)), c extended by dtype : tmp   (low 32 bits)
//! ```
//!
//! SPA 5.0 has VADD/VMNMX/VABSDIFF/VSHL/VSHR, which ptx2sass does not model; the values are
//! computed exactly with 64-bit integer arithmetic instead (every intermediate fits 64
//! signed bits: two 33-bit values, or a 33-bit value shifted by at most 32).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::int::W64;
use crate::lower::ctx::{LResult, Lowerer};
use crate::ptx::ast::Instruction;
use crate::ptx::types::ScalarType;
use crate::sass::instr::Src;
use crate::sass::op::{Cmp, Op};

/// A scalar video instruction's modifiers (PTX ISA 9.7.10).
pub struct Video {
    /// `vadd` ... `vshr`.
    pub op: &'static str,
    /// Signedness of `dtype`, `atype`, `btype`.
    pub signed: [bool; 3],
    /// `.sat`.
    pub sat: bool,
    /// `.add`, `.min` or `.max`.
    pub op2: Option<&'static str>,
    /// `.clamp` (true) or `.wrap` (shifts).
    pub clamp: bool,
}

/// Reads the modifiers of a scalar video instruction; `Err` names what is not supported.
pub fn decode(i: &Instruction) -> Result<Video, String> {
    let op = match i.opcode.name.as_str() {
        "vadd" => "vadd",
        "vsub" => "vsub",
        "vabsdiff" => "vabsdiff",
        "vmin" => "vmin",
        "vmax" => "vmax",
        "vshl" => "vshl",
        "vshr" => "vshr",
        o => return Err(format!("`{o}`")),
    };
    let (mut types, mut sat, mut op2, mut mode) = (vec![], false, None, None);
    for m in &i.mods {
        match m.text.as_str() {
            ".u32" => types.push(false),
            ".s32" => types.push(true),
            ".sat" => sat = true,
            ".add" => op2 = Some("add"),
            ".min" => op2 = Some("min"),
            ".max" => op2 = Some("max"),
            ".clamp" => mode = Some(true),
            ".wrap" => mode = Some(false),
            w => return Err(format!("the modifier `{w}`")),
        }
    }
    let shift = matches!(op, "vshl" | "vshr");
    let [d, a, b] = types[..] else { return Err("other than three types (`.dtype.atype.btype`)".into()) };
    if shift && (b || mode.is_none()) {
        return Err("a shift without `.u32` shift amounts and `.clamp` or `.wrap`".into());
    }
    if !shift && mode.is_some() {
        return Err("`.clamp`/`.wrap` on a non-shift".into());
    }
    if op2.is_some() != (i.operands.len() == 4) {
        return Err("a `c` operand without a secondary operation (merges `d.h0` are not supported)".into());
    }
    Ok(Video { op, signed: [d, a, b], sat, op2, clamp: mode.unwrap_or(false) })
}

impl Lowerer<'_> {
    /// A 32-bit operand extended to 64 bits by its signedness.
    fn video_operand(&mut self, i: &Instruction, k: usize, signed: bool) -> LResult<W64> {
        let ty = if signed { ScalarType::S32 } else { ScalarType::U32 };
        let lo = self.r32(i, k, ty, false)?;
        let hi = if signed { self.emit1(Op::Shr { u32: false }, vec![lo, Src::imm(31)]) } else { Src::rz() };
        Ok((lo, hi))
    }

    /// `p ? a : b` of 64-bit values.
    fn sel64w(&mut self, p: crate::sass::instr::Reg, (al, ah): W64, (bl, bh): W64) -> W64 {
        let p = Src::pred(p, false);
        (self.sel(p, al, bl), self.sel(p, ah, bh))
    }

    /// Lowers a scalar video instruction (module notes).
    pub fn lower_video(&mut self, i: &Instruction) -> LResult<()> {
        let v = match decode(i) {
            Ok(v) => v,
            Err(why) => return self.unsupported(i, &format!("video instructions with {why}")),
        };
        let d = self.dst_of(i, 0)?;
        let a = self.video_operand(i, 1, v.signed[1])?;
        let b = self.video_operand(i, 2, v.signed[2])?;
        let mut t = match v.op {
            "vadd" => self.add64(a, b),
            "vsub" => self.sub64(a, b),
            "vabsdiff" => {
                let x = self.sub64(a, b);
                let y = self.sub64(b, a);
                let lt = self.cmp64(Cmp::Lt, false, a, b);
                self.sel64w(lt, y, x)
            }
            "vmin" | "vmax" => {
                let lt = self.cmp64(Cmp::Lt, false, a, b);
                if v.op == "vmin" { self.sel64w(lt, a, b) } else { self.sel64w(lt, b, a) }
            }
            _ => {
                // The amount: min(b, 32) (`.clamp`) or b & 31 (`.wrap`).
                let n = if v.clamp {
                    let big = self.isetp(
                        Op::Isetp { cmp: Cmp::Gt, u32: true, x: false, bop: crate::sass::op::BoolOp::And },
                        b.0,
                        Src::imm(32),
                        Src::pt(),
                    );
                    self.sel(Src::pred(big, false), Src::imm(32), b.0)
                } else {
                    self.emit1(Op::Lop32i(crate::sass::op::LogicOp::And), vec![b.0, Src::imm(31)])
                };
                self.shift64(v.op == "vshl", v.signed[1], a, n)
            }
        };
        if v.sat {
            let (lo, hi) = if v.signed[0] { (i32::MIN as i64, i32::MAX as i64) } else { (0, u32::MAX as i64) };
            let (lo, hi) = (self.const_w64(lo), self.const_w64(hi));
            let under = self.cmp64(Cmp::Lt, false, t, lo);
            t = self.sel64w(under, lo, t);
            let over = self.cmp64(Cmp::Gt, false, t, hi);
            t = self.sel64w(over, hi, t);
        }
        if let Some(op2) = v.op2 {
            let c = self.video_operand(i, 3, v.signed[0])?;
            t = match op2 {
                "add" => self.add64(t, c),
                "min" => {
                    let lt = self.cmp64(Cmp::Lt, false, t, c);
                    self.sel64w(lt, t, c)
                }
                _ => {
                    let lt = self.cmp64(Cmp::Lt, false, t, c);
                    self.sel64w(lt, c, t)
                }
            };
        }
        self.set32(d.reg, t.0);
        Ok(())
    }

    /// `lop3.b32 d, a, b, c, immLut` (PTX ISA 9.7.7.6, PTX ISA 4.3, sm_50): one
    /// `LOP3.LUT d, a, b, c, lut`, the instruction ptxas emits for it on sm_50 (and the one
    /// `lower::opt::combine` fuses logic pairs into).
    pub fn lower_lop3(&mut self, i: &Instruction) -> LResult<()> {
        let lut_op = self.operand(i, 4)?;
        let crate::ptx::ast::Operand::Imm(lut) = lut_op else {
            return self.error(lut_op.span(), "the truth table of `lop3` must be an immediate (`immLut`)");
        };
        let lut = crate::lower::ctx::imm_bits32(lut.value) & 0xff;
        let d = self.dst_of(i, 0)?;
        let a = self.r32(i, 1, ScalarType::B32, false)?;
        let b = self.r32(i, 2, ScalarType::B32, false)?;
        let c = self.r32(i, 3, ScalarType::B32, false)?;
        let r = self.emit1(Op::Lop3, vec![a, b, c, Src::imm(lut)]);
        self.set32(d.reg, r);
        Ok(())
    }

    /// A 64-bit constant as two words (registers or RZ).
    fn const_w64(&mut self, v: i64) -> W64 {
        (self.imm_reg(v as u32), self.imm_reg((v >> 32) as u32))
    }
}
