//! Lowering of the bit instructions (PTX ISA 9.7.1.15 `popc`, 9.7.1.16 `clz`, 9.7.1.17
//! `bfind`, 9.7.1.18 `brev`, 9.7.1.19 `bfe`, 9.7.1.20 `bfi`, 9.7.8.7 `prmt`, 9.7.7.9 `shf`)
//! and of the float bit tests `testp` (9.7.3.7) and `copysign` (9.7.3.16).
//!
//! 32-bit forms map one to one, as ptxas 11.8 does for sm_50 (observed): `POPC d, a`;
//! `bfind{.shiftamt}.u32/.s32` is `FLO{.U32}{.SH}`; `clz.b32` is `FLO.U32 t, a; IADD32I d,
//! -t, 0x1f`; `brev.b32` is `BFE.U32.BREV d, a, 0x2000`; `bfe` is `BFE{.U32} d, a, ctrl`
//! with `ctrl = pos | len << 8` (an immediate, or `BFI ctrl, len, 0x808, pos` for
//! registers); `bfi` is `BFI d, a, ctrl, b`; `prmt.b32{.mode} d, a, b, c` is
//! `PRMT{.MODE} d, a, c, b`; `shf.l.wrap` is `SHF.L.W d, a, c, b` (`.clamp`: no `.W`).
//!
//! 64-bit forms: `popc.b64` is two POPCs and an IADD (ptxas); `brev.b64` reverses and swaps
//! the words (ptxas); `clz.b64` and `bfind.b64` pick the word with `ISETP` + `SEL` and add
//! 32 (ptxas uses `ICMP` or a branch); `bfe.b64`/`bfi.b64` build `(1 << len) - 1` and shift
//! with `SHF` as ptxas does, masking `pos` and `len` to 8 bits as the PTX ISA's pseudocode
//! does (ptxas does not).
//!
//! `testp` compares the magnitude bits (ptxas: `LOP32I.AND |a|`, then `ISET`/`ISETP`
//! against the exponent limits; the `.f64` forms first set CC from the low word with
//! `IADD RZ.CC, -RZ, lo` and compare the high word with `.X`). `copysign.f32 d, a, b` is
//! one `BFI d, b, 0x1f00, a` (b's bits 0..30 into a); ptxas uses `LOP32I.AND` + `LOP3`.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::int::W64;
use crate::lower::ctx::{LResult, Lowerer};
use crate::ptx::ast::{Instruction, Operand};
use crate::ptx::instr::{BitOp, PrmtMode as PPrmt, TestpOp};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, PT, RZ, Reg, Src, SrcKind};
use crate::sass::op::*;

impl Lowerer<'_> {
    /// `popc clz brev bfind bfe bfi` of 32- and 64-bit integer types.
    pub fn lower_bit(&mut self, i: &Instruction, op: BitOp, ty: ScalarType) -> LResult<()> {
        if !ty.is_integer() || !matches!(ty.bits(), 32 | 64) {
            return self.unsupported(i, &format!("`{ty}` is not a type of this instruction (32- or 64-bit integers)"));
        }
        let typed_ok = match op {
            BitOp::Popc | BitOp::Clz | BitOp::Brev | BitOp::Bfi => matches!(ty, ScalarType::B32 | ScalarType::B64),
            BitOp::Bfind { .. } | BitOp::Bfe => !matches!(ty, ScalarType::B32 | ScalarType::B64),
        };
        if !typed_ok {
            let want = if typed_ok {
                ""
            } else if matches!(op, BitOp::Bfind { .. } | BitOp::Bfe) {
                "`.u32 .s32 .u64 .s64`"
            } else {
                "`.b32 .b64`"
            };
            return self.unsupported(i, &format!("this instruction takes {want} (PTX ISA 9.7.1)"));
        }
        let d = self.dst_of(i, 0)?;
        let wide = ty.bits() == 64;
        let signed = ty.is_signed();
        if !wide {
            let a = self.r32(i, 1, ty, false)?;
            let out = match op {
                BitOp::Popc => self.emit1(Op::Popc, vec![a]),
                BitOp::Clz => self.clz32(a),
                BitOp::Brev => self.emit1(Op::Bfe { u32: true, brev: true }, vec![a, Src::imm(0x2000)]),
                BitOp::Bfind { shiftamt } => self.emit1(Op::Flo { u32: !signed, sh: shiftamt }, vec![a]),
                BitOp::Bfe => {
                    let ctrl = self.field_ctrl(i, 2)?;
                    self.emit1(Op::Bfe { u32: !signed, brev: false }, vec![a, ctrl])
                }
                BitOp::Bfi => {
                    let b = self.r32(i, 2, ty, false)?;
                    let ctrl = self.field_ctrl(i, 3)?;
                    self.emit1(Op::Bfi, vec![a, ctrl, b])
                }
            };
            self.set32(d.reg, out);
            return Ok(());
        }
        let a = self.w64(i, 1, ty)?;
        match op {
            BitOp::Popc => {
                let lo = self.emit1(Op::Popc, vec![a.0]);
                let hi = self.emit1(Op::Popc, vec![a.1]);
                self.op(Op::Iadd { cc: false, x: false }, Dst::reg(d.reg, 1), vec![lo, hi]);
            }
            BitOp::Clz => {
                // hi != 0 ? clz(hi) : 32 + clz(lo); clz(0) = 32 falls out of FLO's -1.
                let z = self.cmp_zero(a.1, Cmp::Eq);
                let w = self.sel(Src::pred(z, false), a.0, a.1);
                let f = self.emit1(Op::Flo { u32: true, sh: false }, vec![w]);
                let base = self.emit1(Op::Sel, vec![Src::rz(), Src::imm(0x20), Src::pred(z, true)]);
                self.op(Op::Iadd3(Iadd3Mode::Plain), Dst::reg(d.reg, 1), vec![base, Src::imm(0x1f), f.negated()]);
            }
            BitOp::Brev => {
                let lo = self.emit1(Op::Bfe { u32: true, brev: true }, vec![a.1, Src::imm(0x2000)]);
                let hi = self.emit1(Op::Bfe { u32: true, brev: true }, vec![a.0, Src::imm(0x2000)]);
                self.set64(d.reg, (lo, hi));
            }
            BitOp::Bfind { shiftamt } => {
                // The bits that differ from the sign: a ^ (a >> 63) for signed types.
                let x = if signed {
                    let m = self.emit1(Op::Shr { u32: false }, vec![a.1, Src::imm(31)]);
                    (self.emit1(Op::Lop(LogicOp::Xor), vec![a.0, m]), self.emit1(Op::Lop(LogicOp::Xor), vec![a.1, m]))
                } else {
                    a
                };
                let nz = self.cmp_zero(x.1, Cmp::Ne);
                let w = self.sel(Src::pred(nz, false), x.1, x.0);
                let f = self.emit1(Op::Flo { u32: true, sh: false }, vec![w]);
                let add = self.emit1(Op::Sel, vec![Src::rz(), Src::imm(0x20), Src::pred(nz, true)]);
                let pos = self.emit1(Op::Iadd { cc: false, x: false }, vec![f, add]);
                if shiftamt {
                    // 63 - pos, or -1 when nothing was found (pos = -1): XOR with 63 flips
                    // 0..63 into 63..0; -1 ^ 63 has bit 6 clear, so OR back all ones then.
                    let sh = self.emit1(Op::Lop32i(LogicOp::Xor), vec![pos, Src::imm(63)]);
                    let none = self.emit1(Op::Shr { u32: false }, vec![pos, Src::imm(31)]);
                    self.op(Op::Lop(LogicOp::Or), Dst::reg(d.reg, 1), vec![sh, none]);
                } else {
                    self.set32(d.reg, pos);
                }
            }
            BitOp::Bfe => {
                let (pos, len) = (self.byte_operand(i, 2)?, self.byte_operand(i, 3)?);
                let v = self.shift64(false, signed, a, pos);
                let m = self.low_mask64(len);
                let mut v = (
                    self.emit1(Op::Lop(LogicOp::And), vec![v.0, m.0]),
                    self.emit1(Op::Lop(LogicOp::And), vec![v.1, m.1]),
                );
                if signed {
                    // Sign-extend from bit len-1 of the field: v |= ~m when that bit is
                    // set (v >> (len - 1) is then 1; for len = 0 the shift clamps to 0).
                    let l1 = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![len, Src::imm(u32::MAX)]);
                    let t = self.shift64(false, false, v, l1);
                    let bit = self.emit1(Op::Lop(LogicOp::Or), vec![t.0, t.1]);
                    let neg = self.emit1(Op::Iadd { cc: false, x: false }, vec![bit.negated(), Src::rz()]);
                    let ext = (
                        self.emit1(Op::Lop(LogicOp::And), vec![neg, m.0.inv()]),
                        self.emit1(Op::Lop(LogicOp::And), vec![neg, m.1.inv()]),
                    );
                    v = (
                        self.emit1(Op::Lop(LogicOp::Or), vec![v.0, ext.0]),
                        self.emit1(Op::Lop(LogicOp::Or), vec![v.1, ext.1]),
                    );
                }
                self.set64(d.reg, v);
            }
            BitOp::Bfi => {
                let b = self.w64(i, 2, ty)?;
                let (pos, len) = (self.byte_operand(i, 3)?, self.byte_operand(i, 4)?);
                let m = self.low_mask64(len);
                let am = (
                    self.emit1(Op::Lop(LogicOp::And), vec![a.0, m.0]),
                    self.emit1(Op::Lop(LogicOp::And), vec![a.1, m.1]),
                );
                let ins = self.shift64(true, false, am, pos);
                let ms = self.shift64(true, false, m, pos);
                // f = ins | (b & ~ms): LOP3.LUT with a = ins, b = b, c = ms is 0xf4 (ptxas).
                let lo = self.emit1(Op::Lop3, vec![ins.0, b.0, ms.0, Src::imm(0xf4)]);
                let hi = self.emit1(Op::Lop3, vec![ins.1, b.1, ms.1, Src::imm(0xf4)]);
                self.set64(d.reg, (lo, hi));
            }
        }
        Ok(())
    }

    /// `clz.b32`: `FLO.U32 t, a; IADD32I d, -t, 0x1f` (ptxas).
    fn clz32(&mut self, a: Src) -> Src {
        let f = self.emit1(Op::Flo { u32: true, sh: false }, vec![a]);
        self.emit1(Op::Iadd32i { cc: false, x: false }, vec![f.negated(), Src::imm(0x1f)])
    }

    /// A predicate: `x cmp 0` (unsigned).
    fn cmp_zero(&mut self, x: Src, cmp: Cmp) -> Reg {
        self.isetp(Op::Isetp { cmp, u32: true, x: false, bop: BoolOp::And }, x, Src::rz(), Src::pt())
    }

    /// Operand `k` as the low 8 bits in a register (`bfe`/`bfi` positions and lengths of
    /// the 64-bit forms: PTX ISA 9.7.1.19 `pos = b & 0xff`, `len = c & 0xff`).
    fn byte_operand(&mut self, i: &Instruction, k: usize) -> LResult<Src> {
        let v = self.val_of(i, k, ScalarType::U32)?;
        Ok(match v.lo.kind {
            SrcKind::Imm(x) => self.in_reg(Src::imm(x & 0xff)),
            _ => {
                let r = self.in_reg(v.lo);
                self.emit1(Op::Lop32i(LogicOp::And), vec![r, Src::imm(0xff)])
            }
        })
    }

    /// `(1 << len) - 1` as 64 bits (all ones for `len >= 64`): `SHL`/`SHF.L.U64` of 1,
    /// then a 64-bit decrement (ptxas's sequence for `bfe.u64`).
    fn low_mask64(&mut self, len: Src) -> W64 {
        let one = self.in_reg(Src::imm(1));
        let (lo, hi) = self.shift64(true, false, (one, Src::rz()), len);
        let lo = self.emit1(Op::Iadd32i { cc: true, x: false }, vec![lo, Src::imm(u32::MAX)]);
        let hi = self.emit1(Op::Iadd32i { cc: false, x: true }, vec![hi, Src::imm(u32::MAX)]);
        (lo, hi)
    }

    /// The BFE/BFI control `pos | len << 8` from operands `k` (pos) and `k + 1` (len).
    fn field_ctrl(&mut self, i: &Instruction, k: usize) -> LResult<Src> {
        let pos = self.val_of(i, k, ScalarType::U32)?.lo;
        let len = self.val_of(i, k.saturating_add(1), ScalarType::U32)?.lo;
        Ok(match (pos.kind, len.kind) {
            (SrcKind::Imm(p), SrcKind::Imm(l)) => Src::imm((p & 0xff) | (l & 0xff) << 8),
            _ => {
                // BFI ctrl, len, 0x808, pos: len's low byte into bits 8..15 of pos (ptxas);
                // BFE and BFI read only bits 0..15 of the control.
                let len = self.in_reg(len);
                let pos = self.in_reg(pos);
                self.emit1(Op::Bfi, vec![len, Src::imm(0x808), pos])
            }
        })
    }

    /// `prmt.b32{.mode} d, a, b, c`: `PRMT{.MODE} d, a, c, b`.
    pub fn lower_prmt(&mut self, i: &Instruction, mode: Option<PPrmt>) -> LResult<()> {
        let d = self.dst_of(i, 0)?;
        let ty = ScalarType::B32;
        let a = self.r32(i, 1, ty, false)?;
        let b = self.r32(i, 2, ty, false)?;
        let c = self.val_of(i, 3, ty)?.lo;
        let c = match c.kind {
            SrcKind::Imm(v) => Src::imm(v & 0xffff),
            _ => c,
        };
        let c = self.b_slot(c, false);
        let m = match mode {
            None => PrmtMode::Idx,
            Some(PPrmt::F4e) => PrmtMode::F4e,
            Some(PPrmt::B4e) => PrmtMode::B4e,
            Some(PPrmt::Rc8) => PrmtMode::Rc8,
            Some(PPrmt::Ecl) => PrmtMode::Ecl,
            Some(PPrmt::Ecr) => PrmtMode::Ecr,
            Some(PPrmt::Rc16) => PrmtMode::Rc16,
        };
        self.op(Op::Prmt(m), Dst::reg(d.reg, 1), vec![a, c, b]);
        Ok(())
    }

    /// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`: `SHF.{L,R}{.W} d, a, c, b`.
    pub fn lower_shf(&mut self, i: &Instruction, left: bool, clamp: bool) -> LResult<()> {
        let d = self.dst_of(i, 0)?;
        let ty = ScalarType::B32;
        let a = self.r32(i, 1, ty, false)?;
        let b = self.r32(i, 2, ty, false)?;
        let c = self.val_of(i, 3, ScalarType::U32)?.lo;
        let c = match c.kind {
            // An immediate amount is reduced here (PTX ISA 9.7.7.9: `.wrap` takes it mod
            // 32, `.clamp` clamps it to 32).
            SrcKind::Imm(v) => Src::imm(if clamp { v.min(32) } else { v & 31 }),
            _ => self.in_reg(c),
        };
        self.op(Op::Shf { left, signed: false, wide: false, wrap: !clamp }, Dst::reg(d.reg, 1), vec![a, c, b]);
        Ok(())
    }

    /// `testp.op.f32/.f64 p, a` (zero counts as normal, PTX ISA 9.7.3.7).
    pub fn lower_testp(&mut self, i: &Instruction, op: TestpOp, ty: ScalarType) -> LResult<()> {
        let p = match self.operand(i, 0)? {
            Operand::Name { name, .. } => self.ptx_reg(name)?.reg,
            o => return self.error(o.span(), "expected a predicate"),
        };
        let isetp = |cmp: Cmp, x: bool, bop: BoolOp| Op::Isetp { cmp, u32: true, x, bop };
        let out = [Dst::Pred(p), Dst::Pred(PT)];
        match ty {
            ScalarType::F32 => {
                let a = self.r32(i, 1, ty, false)?;
                let mag = self.emit1(Op::Lop32i(LogicOp::And), vec![a, Src::imm(0x7fff_ffff)]);
                let inf = self.in_reg(Src::imm(0x7f80_0000));
                let (cmp, x, k, c) = match op {
                    TestpOp::Finite => (Cmp::Lt, mag, inf, Src::pt()),
                    TestpOp::Infinite => (Cmp::Eq, mag, inf, Src::pt()),
                    TestpOp::Number => (Cmp::Le, mag, inf, Src::pt()),
                    TestpOp::NotANumber => (Cmp::Gt, mag, inf, Src::pt()),
                    TestpOp::Normal => {
                        // Biased exponent 1..254: mag - 2^23 < 254 << 23; or zero.
                        let t = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![mag, Src::imm(0xff80_0000)]);
                        let lim = self.in_reg(Src::imm(0x7f00_0000));
                        let n = self.isetp(isetp(Cmp::Lt, false, BoolOp::And), t, lim, Src::pt());
                        self.emit(Instr::new(
                            isetp(Cmp::Eq, false, BoolOp::Or),
                            out.to_vec(),
                            vec![mag, Src::rz(), Src::pred(n, false)],
                        ));
                        return Ok(());
                    }
                    TestpOp::Subnormal => {
                        let t = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![mag, Src::imm(u32::MAX)]);
                        let lim = self.in_reg(Src::imm(0x007f_ffff));
                        (Cmp::Lt, t, lim, Src::pt())
                    }
                };
                self.emit(Instr::new(isetp(cmp, false, BoolOp::And), out.to_vec(), vec![x, k, c]));
            }
            ScalarType::F64 => {
                let (lo, hi) = self.w64(i, 1, ty)?;
                let mag = self.emit1(Op::Lop32i(LogicOp::And), vec![hi, Src::imm(0x7fff_ffff)]);
                let cmp = match op {
                    TestpOp::Finite => Cmp::Lt,
                    TestpOp::Infinite => Cmp::Eq,
                    TestpOp::Number => Cmp::Le,
                    TestpOp::NotANumber => Cmp::Gt,
                    TestpOp::Normal | TestpOp::Subnormal => {
                        let z = self.emit1(Op::Lop(LogicOp::Or), vec![mag, lo]);
                        let n = if op == TestpOp::Normal {
                            // Exponent 1..2046: mag - 2^20 < 2046 << 20 (the low word does
                            // not matter); or zero.
                            let t = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![mag, Src::imm(0xfff0_0000)]);
                            let lim = self.in_reg(Src::imm(0x7fe0_0000));
                            let n = self.isetp(isetp(Cmp::Lt, false, BoolOp::And), t, lim, Src::pt());
                            (Cmp::Eq, BoolOp::Or, n)
                        } else {
                            let lim = self.in_reg(Src::imm(0x0010_0000));
                            let n = self.isetp(isetp(Cmp::Lt, false, BoolOp::And), mag, lim, Src::pt());
                            (Cmp::Ne, BoolOp::And, n)
                        };
                        self.emit(Instr::new(
                            isetp(n.0, false, n.1),
                            out.to_vec(),
                            vec![z, Src::rz(), Src::pred(n.2, false)],
                        ));
                        return Ok(());
                    }
                };
                // {mag, lo} against {0x7ff00000, 0}: CC from `lo - 0` (ptxas: `IADD RZ.CC,
                // -RZ, lo`), then the high words with `.X`.
                self.op(Op::Iadd { cc: true, x: false }, Dst::reg(RZ, 1), vec![Src::rz().negated(), lo]);
                let inf = self.in_reg(Src::imm(0x7ff0_0000));
                self.emit(Instr::new(isetp(cmp, true, BoolOp::And), out.to_vec(), vec![mag, inf, Src::pt()]));
            }
            _ => return self.unsupported(i, "`testp` takes `.f32` or `.f64`"),
        }
        Ok(())
    }

    /// `copysign.f32/.f64 d, a, b`: `b` with the sign of `a`.
    pub fn lower_copysign(&mut self, i: &Instruction, ty: ScalarType) -> LResult<()> {
        let d = self.dst_of(i, 0)?;
        match ty {
            ScalarType::F32 => {
                let a = self.r32(i, 1, ty, false)?;
                let b = self.r32(i, 2, ty, false)?;
                self.op(Op::Bfi, Dst::reg(d.reg, 1), vec![b, Src::imm(0x1f00), a]);
            }
            ScalarType::F64 => {
                let a = self.w64(i, 1, ty)?;
                let b = self.w64(i, 2, ty)?;
                let hi = self.emit1(Op::Bfi, vec![b.1, Src::imm(0x1f00), a.1]);
                self.set64(d.reg, (b.0, hi));
            }
            _ => return self.unsupported(i, "`copysign` takes `.f32` or `.f64`"),
        }
        Ok(())
    }
}
