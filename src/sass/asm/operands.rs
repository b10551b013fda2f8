//! Operands for [`super::assemble`]: immediates (by the opcode's kind), register names,
//! addresses, sources with their modifiers, and the register widths (pairs, quads) an
//! opcode's types imply.

use crate::sass::instr::{PT, Reg, RegRef, Src, SrcKind, SrcMods, SymPart};
use crate::sass::op::*;
use crate::sass::text::Target;

/// How an immediate operand of `op` is written: f32 values, the upper word of f64
/// values, or integers.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ImmKind {
    F32,
    F64Hi,
    Int,
}

pub(super) fn imm_kind(op: &Op) -> ImmKind {
    use Opcode::*;
    match op.opcode() {
        Fadd | Fadd32i | Fmul | Fmul32i | Ffma | Ffma32i | Fmnmx | Fsetp | Fset | Fchk | Fcmp => ImmKind::F32,
        Dadd | Dmul | Dfma | Dmnmx | Dsetp | Dset => ImmKind::F64Hi,
        _ => ImmKind::Int,
    }
}

/// A number as nvdisasm prints it: hex (`0x1f`, `-0x40`: the 32-bit two's complement
/// pattern), or a decimal/float value (`0.5`, `-3`, `1e+20`, `+INF`, `-QNAN`) whose bits
/// depend on `kind`.
pub(super) fn number(text: &str, kind: ImmKind) -> Result<u32, String> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if let Some(h) = body.strip_prefix("0x") {
        let v = u64::from_str_radix(h, 16).map_err(|_| format!("bad number `{t}`"))?;
        let v = if neg { (v as i64).wrapping_neg() as u64 } else { v };
        return Ok(v as u32);
    }
    let mag: f64 = match body {
        "INF" => f64::INFINITY,
        "QNAN" | "NAN" => f64::NAN,
        _ => body.parse().map_err(|_| format!("bad number `{t}`"))?,
    };
    let v = if neg { -mag } else { mag };
    Ok(match kind {
        // The canonical NaN of NVIDIA GPUs is 0x7fffffff (PTX ISA, "Floating point").
        ImmKind::F32 if v.is_nan() => 0x7fff_ffff | (neg as u32) << 31,
        ImmKind::F32 => (v as f32).to_bits(),
        ImmKind::F64Hi if v.is_nan() => 0x7fff_ffff | (neg as u32) << 31,
        ImmKind::F64Hi => (v.to_bits() >> 32) as u32,
        ImmKind::Int if v.fract() == 0.0 && v.abs() < 4294967296.0 => v as i64 as u32,
        ImmKind::Int => return Err(format!("`{t}` is not an integer")),
    })
}

/// A register name: `R12`, `RZ`, `P3`, `PT`.
pub(super) fn reg_name(t: &str) -> Option<Reg> {
    match t {
        "RZ" => Some(Reg::R(255)),
        "PT" => Some(PT),
        _ => {
            if let Some(n) = t.strip_prefix('R') {
                n.parse::<u8>().ok().filter(|n| *n < 255).map(Reg::R)
            } else if let Some(n) = t.strip_prefix('P') {
                n.parse::<u8>().ok().filter(|n| *n < 7).map(Reg::P)
            } else {
                None
            }
        }
    }
}

/// `[Ra+off]`, `[Ra]`, `[0x8]`, `[RZ]`, `[Ra+-0x4]` inside the brackets.
pub(super) fn address(inner: &str, width: u8) -> Result<(RegRef, i32), String> {
    let inner = inner.trim();
    let (base, off) = match inner.split_once('+') {
        Some((b, o)) => (b.trim(), Some(o.trim())),
        None => (inner, None),
    };
    let base = base.trim_end_matches(".reuse");
    match reg_name(base) {
        Some(r @ Reg::R(_)) => {
            let off = off.map(|o| number(o, ImmKind::Int)).transpose()?.unwrap_or(0) as i32;
            let n = if r == Reg::R(255) { 1 } else { width };
            Ok((RegRef::new(r, n), off))
        }
        _ if off.is_none() => Ok((RegRef::rz(1), number(base, ImmKind::Int)? as i32)),
        _ => Err(format!("bad address `[{inner}]`")),
    }
}

/// One source operand of `op`, `width` registers wide when it names a register.
pub(super) fn source(
    text: &str,
    op: &Op,
    width: u8,
    target: &dyn Fn(&Target) -> Option<u32>,
    symbols: &mut Vec<String>,
) -> Result<Src, String> {
    let mut t = text.trim();
    let mut mods = SrcMods::default();
    if let Some(r) = t.strip_prefix('!') {
        mods.neg = true;
        t = r;
    }
    if let Some(r) = t.strip_prefix('-') {
        mods.neg = true;
        t = r.trim_start();
    }
    if let Some(r) = t.strip_prefix('~') {
        mods.inv = true;
        t = r;
    }
    loop {
        if let Some(r) = t.strip_suffix(".reuse") {
            t = r;
        } else if let Some(r) = t.strip_suffix(".H1") {
            mods.h1 = true;
            t = r;
        } else if let Some(r) = t.strip_suffix(".H0") {
            t = r;
        } else {
            break;
        }
    }
    if let Some(r) = t.strip_prefix('|').and_then(|r| r.strip_suffix('|')) {
        mods.abs = true;
        t = r.trim();
    }
    t = t.trim_end_matches(".reuse");
    let kind = if let Some(r) = reg_name(t) {
        match r {
            Reg::P(_) => SrcKind::Pred(r),
            _ => SrcKind::Reg(RegRef::new(r, if r == Reg::R(255) { 1 } else { width })),
        }
    } else if let Some(rest) = t.strip_prefix("c[") {
        let (bank, rest) = rest.split_once(']').ok_or_else(|| format!("bad constant operand `{text}`"))?;
        let inner = rest.trim().strip_prefix('[').and_then(|r| r.strip_suffix(']'));
        let inner = inner.ok_or_else(|| format!("bad constant operand `{text}`"))?;
        let bank = number(bank, ImmKind::Int)? as u8;
        let (index, offset) = match inner.split_once('+') {
            Some((r, o)) => (Some(r.trim()), number(o, ImmKind::Int)? as i32),
            None if reg_name(inner.trim()).is_some() => (Some(inner.trim()), 0),
            None => (None, number(inner, ImmKind::Int)? as i32),
        };
        let index = match index {
            Some(r) => match reg_name(r) {
                Some(x @ Reg::R(_)) => Some(RegRef::new(x, 1)),
                _ => return Err(format!("bad constant index `{r}`")),
            },
            // nvdisasm prints the 16-bit offset of an ALU operand signed
            // (`c[0x3][-0x15a4]` is byte 0xea5c, findings section 6).
            None => None,
        };
        let offset = if index.is_none() { offset & 0xffff } else { offset };
        SrcKind::CBuf { bank, offset, index, n: width }
    } else if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        let (base, offset) = address(inner, width)?;
        SrcKind::Addr { base, offset }
    } else if let Some(name) = t.strip_prefix("`(").and_then(|r| r.strip_suffix(')')).filter(|_| *op == Op::Jcal) {
        // `JCAL `(f)`: an absolute call of a function by its symbol (R_CUDA_ABS32_20;
        // `disasm` of a relocatable or nvlink-linked cubin), resolved by the loader.
        let id = match symbols.iter().position(|s| s == name) {
            Some(k) => k,
            None => {
                symbols.push(name.to_string());
                symbols.len() - 1
            }
        };
        SrcKind::Sym { id: id as u32, part: SymPart::Target }
    } else if t.starts_with("`(")
        || (matches!(op, Op::Bra | Op::BraCc { .. } | Op::Ssy | Op::Pbk | Op::Cal | Op::Pret) && t.starts_with("0x"))
    {
        let tg = if let Some(l) = t.strip_prefix("`(").and_then(|r| r.strip_suffix(')')) {
            Target::Label(l.to_string())
        } else {
            Target::Addr(number(t, ImmKind::Int)?)
        };
        SrcKind::Label(target(&tg).ok_or_else(|| format!("branch target `{t}` is not an instruction of the function"))?)
    } else if let Some((part, name)) = t
        .strip_prefix("32@lo(")
        .map(|r| (SymPart::Lo, r))
        .or_else(|| t.strip_prefix("32@hi(").map(|r| (SymPart::Hi, r)))
        .and_then(|(p, r)| r.strip_suffix(')').map(|n| (p, n)))
    {
        // A relocated immediate: half of a symbol's address, which the loader fills in
        // (R_CUDA_ABS32_LO_20/HI_20; nvdisasm 11.8 prints `MOV32I R9, 32@lo(lut)`).
        let id = match symbols.iter().position(|s| s == name) {
            Some(k) => k,
            None => {
                symbols.push(name.to_string());
                symbols.len() - 1
            }
        };
        SrcKind::Sym { id: id as u32, part }
    } else if t.contains('@') {
        return Err(format!("relocated operand `{t}` is not modelled"));
    } else {
        // A sign belongs to the number (`ISETP ... R6, -0x1`, `FADD R0, R0, -3`,
        // `IADD32I.X R5, R5, -0x1`: the immediate field holds the value).
        let v = number(t, imm_kind(op))?;
        let v = match (std::mem::take(&mut mods.neg), imm_kind(op)) {
            (false, _) => v,
            (true, ImmKind::Int) => v.wrapping_neg(),
            (true, _) => v ^ 0x8000_0000,
        };
        // IADD3's immediate is a signed 20-bit field that nvdisasm prints unsigned
        // (`IADD3 R6, R6, 0xfffff, R4` adds -1: ptxas 11.8's `__cuda_sm3x_div_rn_noftz_f32_
        // slowpath`; envytools `iadd3 ... S20_2`): no positive value beyond 0x7ffff fits.
        let v = if matches!(op, Op::Iadd3(_) | Op::Iadd3C { .. }) && (0x8_0000..0x10_0000).contains(&v) {
            v | 0xfff0_0000
        } else {
            v
        };
        SrcKind::Imm(v)
    };
    Ok(Src { kind, mods })
}

/// Registers per destination and per source of `op` (memory data by size, fp64 pairs,
/// conversions by type, addresses of `.E` accesses as pairs).
pub(super) struct Widths {
    pub(super) dst: u8,
    pub(super) src: Vec<u8>,
}

pub(super) fn widths(op: &Op, nsrc: usize) -> Widths {
    let mut src = vec![1u8; nsrc];
    let dst = match *op {
        Op::Ld(m) | Op::Ldg(m) => {
            if m.e {
                src[0] = 2;
            }
            m.size.regs()
        }
        Op::Lds(m) | Op::Ldl(m) => m.size.regs(),
        Op::St(m) | Op::Stg(m) | Op::Sts(m) | Op::Stl(m) => {
            if m.e {
                src[0] = 2;
            }
            if nsrc > 1 {
                src[1] = m.size.regs();
            }
            1
        }
        Op::Ldc { size, .. } => size.regs(),
        Op::Atom(m) | Op::Atoms(m) | Op::Red(m) => {
            if m.e {
                src[0] = 2;
            }
            for s in src.iter_mut().skip(1) {
                *s = m.ty.regs();
            }
            m.ty.regs()
        }
        Op::Dadd(_) | Op::Dmul(_) | Op::Dfma(_) | Op::Dmnmx => {
            src.iter_mut().for_each(|s| *s = 2);
            2
        }
        Op::Dsetp { .. } | Op::Dset { .. } => {
            src.iter_mut().for_each(|s| *s = 2);
            1
        }
        Op::I2f { dst, src: s, .. } => {
            src[0] = s.regs();
            dst.regs()
        }
        Op::F2i { dst, src: s, .. } => {
            src[0] = s.regs();
            dst.regs()
        }
        Op::F2f { dst, src: s, .. } | Op::F2fSat { dst, src: s, .. } => {
            src[0] = s.regs();
            dst.regs()
        }
        Op::I2i { dst, src: s } | Op::I2iCc { dst, src: s } | Op::I2iSat { dst, src: s } => {
            src[0] = s.regs();
            dst.regs()
        }
        Op::Cctl { .. } => {
            src[0] = 2;
            1
        }
        _ => 1,
    };
    Widths { dst, src }
}

/// How many leading operands of `op` are destinations.
pub(super) fn dst_count(op: &Op, operands: &[String], pred_first: bool) -> usize {
    use Opcode::*;
    match op.opcode() {
        St | Stg | Sts | Stl | Red | Cctl | Nop | Depbar | Bar | BarRed | Membar | Bpt | Bra | BraCc | Exit | Ret
        | Cal | Jcal | Pret | Jmx | Sync | Brk | Ssy | Pbk => 0,
        Isetp | Fsetp | Dsetp | Psetp | Csetp | Shfl => 2,
        LopX | Lop32iX | Lop3X if pred_first => 2,
        Vote => operands.len().saturating_sub(1),
        B2r => operands.len(),
        S2r | Cs2r | Fchk => 1,
        Lea if pred_first => 2,
        _ => 1,
    }
}
