//! Which operand kinds each source slot of an SPA 5.0 opcode accepts: the encoding
//! families of the Maxwell ISA (register / 20-bit immediate / constant-bank forms of the
//! "B" operand, the constant-bank form of the "C" operand of FFMA/DFMA/XMAD, and the
//! 32-bit-immediate `*32I` opcodes).
//!
//! Used by constant-operand folding: a value loaded by `MOV`/`MOV32I` is substituted into
//! a consumer only where the consumer's encoding can carry it.

use super::instr::{Src, SrcKind};
use super::op::{Cmp, Op};

/// What a source slot can hold besides a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// A constant-bank operand `c[b][o]`.
    pub cbuf: bool,
    /// An immediate, and which values fit.
    pub imm: ImmKind,
}

/// Immediate encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImmKind {
    /// No immediate form.
    None,
    /// Signed 20-bit integer (sign-extended).
    I20,
    /// Unsigned 16-bit integer (XMAD).
    U16,
    /// f32 whose low 12 mantissa bits are zero (the 20-bit float immediate).
    F20,
    /// f64 whose low 44 bits are zero (stored as its high word).
    D20,
    /// Any 32-bit value (`MOV32I`).
    Any,
}

impl ImmKind {
    /// True if the immediate `v` is encodable.
    pub fn fits(self, v: u32) -> bool {
        match self {
            ImmKind::None => false,
            ImmKind::I20 => (-(1i64 << 19)..(1i64 << 19)).contains(&(v as i32 as i64)),
            ImmKind::U16 => v <= 0xffff,
            ImmKind::F20 => v & 0xfff == 0,
            ImmKind::D20 => v & 0xfff == 0,
            ImmKind::Any => true,
        }
    }
}

const REG: Slot = Slot { cbuf: false, imm: ImmKind::None };

fn b(imm: ImmKind) -> Slot {
    Slot { cbuf: true, imm }
}

/// The slot kinds of source `idx` of `op` (the other sources as they are now decide the
/// FFMA/DFMA/XMAD choice between a constant B and a constant C).
pub fn slot(op: &Op, idx: usize, srcs: &[Src]) -> Slot {
    use Op::*;
    let is_const = |k: usize| srcs.get(k).is_some_and(|s| matches!(s.kind, SrcKind::CBuf { .. } | SrcKind::Imm(_)));
    match (op, idx) {
        (Mov, 0) => b(ImmKind::Any),
        (I2f { .. } | F2i { .. } | F2f { .. } | I2i { .. } | Popc | Flo { .. }, 0) => b(ImmKind::I20),
        (Iadd { .. } | IaddSat | Isetp { .. } | Imnmx { .. } | Iscadd { .. } | Iadd3(_) | Sel | Prmt(_), 1) => {
            b(ImmKind::I20)
        }
        // The 20-bit signed immediate of the B operand (`sm50-encoding-and-cubin.md`; the
        // encoder rejects more): a shift amount or bitfield control folded from a register
        // may be any 32-bit value (`shr.u32 d, a, r` with `r = 0x80000` was an internal
        // error in the encoder; found by the random programs).
        (Shl | Shr { .. } | Bfe { .. } | Bfi, 1) => b(ImmKind::I20),
        (Lop(_), 1) => Slot { cbuf: true, imm: ImmKind::None },
        (Lea { hi: false, .. }, 1) => b(ImmKind::I20),
        (Lea { hi: true, .. }, 1) => Slot { cbuf: true, imm: ImmKind::None },
        (Fadd(_) | Fmul(_) | Fsetp { .. } | Fmnmx { .. }, 1) => b(ImmKind::F20),
        (Dadd(_) | Dmul(_) | Dsetp { .. } | Dmnmx, 1) => b(ImmKind::D20),
        (Ffma(_), 1) if !is_const(2) => b(ImmKind::F20),
        (Ffma(_), 2) if !is_const(1) => Slot { cbuf: true, imm: ImmKind::None },
        (Dfma(_), 1) if !is_const(2) => b(ImmKind::D20),
        (Dfma(_), 2) if !is_const(1) => Slot { cbuf: true, imm: ImmKind::None },
        (Xmad(_), 1) if !is_const(2) => b(ImmKind::U16),
        (Xmad(_), 2) if !is_const(1) => Slot { cbuf: true, imm: ImmKind::None },
        // SHFL Pd, Rd, Ra, Sb, Sc: lane (5-bit) and clamp/segmask (13-bit) immediates
        // (ptxas 11.8: `SHFL.DOWN PT, R3, R2, 0x10, 0x1f`, `SHFL.UP P4, R21, R12, R18, RZ`).
        (Shfl(_), 1 | 2) => Slot { cbuf: false, imm: ImmKind::Any },
        _ => REG,
    }
}

/// True if source `idx` of `op` is a dedicated immediate field (a shift or scale amount
/// encoded apart from the B operand), not the instruction's one constant operand.
pub fn is_field(op: &Op, idx: usize, srcs: &[Src]) -> bool {
    match op {
        // LEA{.HI}{.X} ..., #ScaleU05 (spa50-LEA.txt): the scale follows the register
        // operands (2 of LEA.LO, 3 of LEA.HI).
        Op::Lea { hi, .. } => idx == if *hi { 3 } else { 2 } && idx + 1 == srcs.len(),
        // ISCADD Rd, Ra, Sb, shift.
        Op::Iscadd { .. } => idx == 2,
        // SHFL's lane and clamp immediates have fields of their own.
        Op::Shfl(_) => idx == 2,
        _ => false,
    }
}

/// True if `s` may be placed in source `idx` of `op` given the other sources: its kind is
/// accepted, and no other source already uses the one constant operand an instruction has.
pub fn accepts(op: &Op, idx: usize, srcs: &[Src], s: &Src) -> bool {
    let sl = slot(op, idx, srcs);
    let ok = match s.kind {
        SrcKind::CBuf { index: None, .. } => sl.cbuf,
        // No immediate form takes a half selector (XMAD's `.H1` exists for registers and
        // constant-bank operands only).
        SrcKind::Imm(v) => !s.mods.neg && !s.mods.abs && !s.mods.h1 && sl.imm.fits(v),
        _ => return true,
    };
    ok && !srcs
        .iter()
        .enumerate()
        .any(|(k, o)| k != idx && !is_field(op, k, srcs) && matches!(o.kind, SrcKind::CBuf { .. } | SrcKind::Imm(_)))
}

/// If swapping sources 0 and 1 of `op` preserves its meaning, the op to use after the
/// swap (comparisons are mirrored).
pub fn swapped(op: &Op) -> Option<Op> {
    use Op::*;
    let mirror = |c: Cmp| match c {
        Cmp::Lt => Cmp::Gt,
        Cmp::Gt => Cmp::Lt,
        Cmp::Le => Cmp::Ge,
        Cmp::Ge => Cmp::Le,
        Cmp::Ltu => Cmp::Gtu,
        Cmp::Gtu => Cmp::Ltu,
        Cmp::Leu => Cmp::Geu,
        Cmp::Geu => Cmp::Leu,
        other => other,
    };
    Some(match *op {
        Iadd { .. }
        | Fadd(_)
        | Fmul(_)
        | Dadd(_)
        | Dmul(_)
        | Imnmx { .. }
        | Fmnmx { .. }
        | Dmnmx
        | Ffma(_)
        | Dfma(_) => *op,
        Lop(l) if l != super::op::LogicOp::PassB => *op,
        Xmad(m) if !m.psl && !m.mrg && m.c == super::op::XmadC::C => *op,
        // `ISETP.X` takes the borrow of the low words' `a - b` from CC: mirrored, it would
        // compare the high words the other way round with the same borrow.
        Isetp { cmp, u32, x: false, bop } => Isetp { cmp: mirror(cmp), u32, x: false, bop },
        Fsetp { cmp, ftz, bop } => Fsetp { cmp: mirror(cmp), ftz, bop },
        Dsetp { cmp, bop } => Dsetp { cmp: mirror(cmp), bop },
        _ => return None,
    })
}

/// Moves a negation the encoding cannot hold to an operand that can: the multiplications
/// (FMUL, DMUL, FFMA, DFMA) have a negate bit for B (and C) but none for A
/// (`sm50-encoding-and-cubin.md` §1.3: FMUL 48 neg B, FFMA 48 neg B / 49 neg C, DMUL 48,
/// DFMA 48/49), and `-a * b` is `a * -b` exactly (IEEE 754 multiplication is sign
/// symmetric). An immediate B takes the sign into its value (the float immediates keep
/// their sign bit: bit 56 of the 20-bit forms, bit 31 of FMUL32I's). Lowering writes `-a`
/// on A freely (and operand swaps move it there), so this runs once on the final code.
pub fn encodable(i: &mut super::instr::Instr) {
    use super::op::Op;
    if !matches!(i.op, Op::Fmul(_) | Op::Dmul(_) | Op::Ffma(_) | Op::Dfma(_) | Op::Fmul32i(_)) {
        return;
    }
    if i.srcs.len() < 2 || !i.srcs[0].mods.neg {
        return;
    }
    i.srcs[0].mods.neg = false;
    match &mut i.srcs[1].kind {
        // f32 immediates hold the f32 bits, f64 immediates their upper word: the sign is
        // bit 31 either way.
        SrcKind::Imm(v) => *v ^= 0x8000_0000,
        _ => i.srcs[1].mods.neg = !i.srcs[1].mods.neg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::instr::{Dst, Instr, Reg, RegRef};
    use crate::sass::op::{Op, Rnd};

    #[test]
    fn negated_a_of_a_multiplication_moves_to_b() {
        let r = |n: u8| Src::reg(RegRef::new(Reg::R(n), 2));
        let mut i = Instr::new(Op::Dfma(Rnd::Rn), vec![Dst::reg(Reg::R(8), 2)], vec![r(4).negated(), r(0), r(2)]);
        encodable(&mut i);
        assert_eq!(i.srcs, vec![r(4), r(0).negated(), r(2)]);
        // -a * -b = a * b.
        let mut i = Instr::new(Op::Dmul(Rnd::Rn), vec![Dst::reg(Reg::R(8), 2)], vec![r(4).negated(), r(0).negated()]);
        encodable(&mut i);
        assert_eq!(i.srcs, vec![r(4), r(0)]);
        // An immediate takes the sign into its value.
        let mut i = Instr::new(
            Op::Fmul32i(Default::default()),
            vec![Dst::reg(Reg::R(1), 1)],
            vec![Src::r32(Reg::R(2)).negated(), Src::imm(2.0f32.to_bits())],
        );
        encodable(&mut i);
        assert_eq!(i.srcs, vec![Src::r32(Reg::R(2)), Src::imm((-2.0f32).to_bits())]);
    }
}
