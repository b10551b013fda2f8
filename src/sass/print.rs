//! Prints instructions in nvdisasm syntax (so output diffs against `cuobjdump -sass`):
//! `@!P0 LDG.E.64 R4, [R2+0x10] ;`. Virtual registers print as `%r7` (32-bit), `%d7`
//! (pair), `%q7` (quad) and `%p7` (predicate), with `.lo/.hi` or `.N` for components.

use super::instr::*;
use super::op::{Op, Opcode};
use std::fmt::Write;

/// Register widths of virtual registers, so they print with the right prefix.
pub trait VRegNames {
    /// `%r`, `%d`, `%q` or `%p` for virtual register `v`.
    fn prefix(&self, v: u32) -> &'static str;
    /// Number of 32-bit components of virtual register `v` (1, 2, 4; predicates 1).
    fn width(&self, v: u32) -> u8;
    /// The name of symbol `id` ([`SrcKind::Sym`]); `sym<id>` when there is no table.
    fn symbol(&self, id: u32) -> String {
        format!("sym{id}")
    }
}

/// Physical registers only (as [`NoVRegs`]), with a symbol table.
pub struct Symbols<'a>(pub &'a [String]);

impl VRegNames for Symbols<'_> {
    fn prefix(&self, _: u32) -> &'static str {
        "%v"
    }
    fn width(&self, _: u32) -> u8 {
        1
    }
    fn symbol(&self, id: u32) -> String {
        self.0.get(id as usize).cloned().unwrap_or_else(|| format!("sym{id}"))
    }
}

/// Prints physical registers only; virtual ones print as `%v<N>`.
pub struct NoVRegs;

impl VRegNames for NoVRegs {
    fn prefix(&self, _: u32) -> &'static str {
        "%v"
    }
    fn width(&self, _: u32) -> u8 {
        1
    }
}

fn reg_name(r: Reg, comp: u8, n: u8, names: &dyn VRegNames) -> String {
    match r {
        Reg::R(255) => "RZ".into(),
        Reg::R(x) => format!("R{}", x as u32 + comp as u32),
        Reg::P(7) => "PT".into(),
        Reg::P(x) => format!("P{x}"),
        Reg::V(v) => {
            let w = names.width(v);
            let base = format!("{}{v}", names.prefix(v));
            if n >= w && comp == 0 {
                base
            } else if w == 2 && n == 1 {
                format!("{base}.{}", if comp == 0 { "lo" } else { "hi" })
            } else if n == 1 {
                format!("{base}.{comp}")
            } else {
                format!("{base}.{comp}:{n}")
            }
        }
    }
}

/// How immediates of an opcode print.
#[derive(PartialEq)]
enum ImmStyle {
    Signed,
    Unsigned,
    F32,
    F64Hi,
}

fn imm_style(op: &Op) -> ImmStyle {
    use Opcode::*;
    match op.opcode() {
        Fadd | Fadd32i | Fmul | Fmul32i | Ffma | Ffma32i | Fmnmx | Fsetp | Fset | Fchk | Fcmp => ImmStyle::F32,
        Dadd | Dmul | Dfma | Dmnmx | Dsetp | Dset => ImmStyle::F64Hi,
        Iadd | IaddSat | Iadd32i | Iadd32iSat | Iadd3 | Iadd3C | Iscadd | Iscadd32i | Isetp | Iset | Icmp | Imnmx
        | ImnmxX | Imad | Sel => ImmStyle::Signed,
        _ => ImmStyle::Unsigned,
    }
}

/// nvdisasm's float spelling, C's `%.17g`: 17 significant digits, trailing zeros dropped,
/// exponent form (`5.9604644775390625e-08`) outside 1e-4 .. 1e17.
pub(crate) fn float_text(v: f64) -> String {
    if v.is_nan() {
        return "+QNAN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "+INF".into() } else { "-INF".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let e = format!("{v:.16e}");
    let (mant, exp) = e.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("integer exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
    };
    if (-4..17).contains(&exp) {
        let decimals = (16 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    } else {
        format!("{}e{}{:02}", trim(mant), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

fn hex(v: i64) -> String {
    if v < 0 { format!("-0x{:x}", -(v as i128)) } else { format!("0x{v:x}") }
}

/// True if nvdisasm 11.8 prints a constant-bank operand in source slot `idx` of `op` as
/// `c[0x0] [0x8]` (with a space): XMAD's B operand, and the conversions F2I, I2F, I2I and
/// F2F from F16 (raw nvdisasm sweeps, `tests/encode_table.rs`).
fn cbuf_spaced(op: &Op, idx: usize) -> bool {
    match op {
        Op::Xmad(_) => idx == 1,
        Op::F2i { .. } | Op::I2f { .. } | Op::I2i { .. } => true,
        Op::F2f { src, .. } => *src == crate::sass::op::FType::F16,
        _ => false,
    }
}

/// Writes source operand `idx` of an instruction of `op`.
pub fn src_text(op: &Op, idx: usize, s: &Src, names: &dyn VRegNames, label: &dyn Fn(u32) -> String) -> String {
    let body = match s.kind {
        SrcKind::Reg(r) => reg_name(r.reg, r.comp, r.n, names),
        SrcKind::Pred(p) => reg_name(p, 0, 1, names),
        // nvdisasm prints XMAD's 16-bit immediate signed when B is `.S16`
        // (`XMAD.S16.S16 R0, R16.H1, -0x6667, RZ`: the word holds 0x9999).
        SrcKind::Imm(v) if matches!(op, Op::Xmad(m) if m.signed_b) => hex(v as u16 as i16 as i64),
        SrcKind::Imm(v) => match imm_style(op) {
            ImmStyle::Signed => hex(v as i32 as i64),
            ImmStyle::Unsigned => hex(v as i64),
            ImmStyle::F32 => float_text(f32::from_bits(v) as f64),
            ImmStyle::F64Hi => float_text(f64::from_bits((v as u64) << 32)),
        },
        SrcKind::CBuf { bank, offset, index, .. } => {
            let space = if cbuf_spaced(op, idx) { " " } else { "" };
            match index {
                Some(r) if !r.reg.is_rz() => {
                    let base = reg_name(r.reg, r.comp, r.n, names);
                    if offset == 0 {
                        format!("c[{}]{space}[{base}]", hex(bank as i64))
                    } else {
                        format!("c[{}]{space}[{base}+{}]", hex(bank as i64), hex(offset as i64))
                    }
                }
                // The offset field is a signed 16-bit byte offset: nvdisasm prints byte
                // 0xea5c of bank 3 as `c[0x3][-0x15a4]` (findings §6).
                _ => format!("c[{}]{space}[{}]", hex(bank as i64), hex(offset as u16 as i16 as i64)),
            }
        }
        SrcKind::Addr { base, offset } => {
            if base.reg.is_rz() {
                if offset == 0 { "[RZ]".into() } else { format!("[{}]", hex(offset as u32 as i64)) }
            } else {
                let b = reg_name(base.reg, base.comp, base.n, names);
                if offset == 0 { format!("[{b}]") } else { format!("[{b}+{}]", hex(offset as i64)) }
            }
        }
        SrcKind::Label(b) => label(b),
        SrcKind::Sym { id, part } => {
            let name = names.symbol(id);
            match part {
                SymPart::Target => format!("`({name})"),
                SymPart::Lo => format!("32@lo({name})"),
                SymPart::Hi => format!("32@hi({name})"),
            }
        }
    };
    let mut t = String::new();
    if s.mods.neg {
        t.push(if matches!(s.kind, SrcKind::Pred(_)) { '!' } else { '-' });
    }
    if s.mods.inv {
        t.push('~');
    }
    if s.mods.abs {
        let _ = write!(t, "|{body}|");
    } else {
        t.push_str(&body);
    }
    if s.mods.h1 {
        t.push_str(".H1");
    }
    t
}

/// Writes one instruction without the trailing ` ;`, e.g. `@P0 IADD R4.CC, R6, c[0x0][0x148]`.
/// `label` turns a block number into a branch-target text.
pub fn instr_text(i: &Instr, names: &dyn VRegNames, label: &dyn Fn(u32) -> String) -> String {
    let mut s = String::new();
    if let Some(g) = i.guard {
        let _ = write!(s, "@{}{} ", if g.neg { "!" } else { "" }, reg_name(g.pred, 0, 1, names));
    }
    s.push_str(&i.op.name());
    if let Op::Depbar { sb, count } = i.op {
        let _ = write!(s, " SB{sb}, {}", hex(count as i64));
        return s;
    }
    if let Op::S2r(sr) | Op::Cs2r(sr) = i.op {
        if let Some(Dst::Reg(r)) = i.dsts.first() {
            let _ = write!(s, " {}, {}", reg_name(r.reg, r.comp, r.n, names), sr.name());
        }
        return s;
    }
    // Texture and surface instructions: nvdisasm's trailing pseudo-operands (`sass::texmods`).
    if i.op.info().unit == super::op::Unit::Tex {
        let dsts: Vec<String> = i
            .dsts
            .iter()
            .map(|d| match d {
                Dst::Reg(r) => reg_name(r.reg, r.comp, r.n, names),
                Dst::Pred(p) => reg_name(*p, 0, 1, names),
            })
            .collect();
        let srcs: Vec<String> = i.srcs.iter().enumerate().map(|(k, x)| src_text(&i.op, k, x, names, label)).collect();
        if let Some(t) = super::texmods::operands(i, &dsts, &srcs) {
            s.push(' ');
            s.push_str(&t);
            return s;
        }
    }
    let cc = i.op.writes_cc();
    let mut first = true;
    let mut cc_done = false;
    for d in &i.dsts {
        s.push_str(if first { " " } else { ", " });
        first = false;
        match d {
            Dst::Reg(r) => {
                s.push_str(&reg_name(r.reg, r.comp, r.n, names));
                if cc && !cc_done {
                    s.push_str(".CC");
                    cc_done = true;
                }
            }
            Dst::Pred(p) => s.push_str(&reg_name(*p, 0, 1, names)),
        }
    }
    match i.op {
        // `CSETP.test.bop Pd, Qd, CC, Pc`: the condition code is an operand in nvdisasm.
        Op::Csetp { .. } => {
            s.push_str(if first { " CC" } else { ", CC" });
            first = false;
        }
        Op::BraCc { test } => {
            let _ = write!(s, " CC.{}", test.name());
            first = false;
        }
        _ => {}
    }
    for (k, src) in i.srcs.iter().enumerate() {
        s.push_str(if first { " " } else { ", " });
        first = false;
        // CAS data: one pair/quad `{compare, new}` that nvdisasm prints as `Rb, Rb+n`
        // (`ATOM.E.CAS R0, [R4], R6, R7`, `ATOMS.CAS.64 R12, [0x18], R12, R14`).
        if let (Op::Atom(m) | Op::Atoms(m), 1, SrcKind::Reg(r)) = (i.op, k, src.kind)
            && m.op == crate::sass::op::AtomOp::Cas
            && r.n == 2 * m.ty.regs()
        {
            let half = m.ty.regs();
            let _ =
                write!(s, "{}, {}", reg_name(r.reg, r.comp, half, names), reg_name(r.reg, r.comp + half, half, names));
            continue;
        }
        s.push_str(&src_text(&i.op, k, src, names, label));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::op::*;

    fn text(i: &Instr) -> String {
        instr_text(i, &NoVRegs, &|b| format!("BB{b}"))
    }

    #[test]
    fn nvdisasm_spellings() {
        let r = |n: u8| RegRef::new(Reg::R(n), 1);
        let i = Instr::new(
            Op::Iadd { cc: true, x: false },
            vec![Dst::Reg(r(4))],
            vec![Src::reg(r(6)), Src::cbuf(0, 0x148, 1)],
        );
        assert_eq!(text(&i), "IADD R4.CC, R6, c[0x0][0x148]");
        let i = Instr::new(
            Op::Lea { hi: true, x: true, cc: false },
            vec![Dst::Pred(Reg::P(0)), Dst::Reg(r(5))],
            vec![Src::reg(r(0)), Src::rz(), Src::reg(r(2))],
        );
        assert_eq!(text(&i), "LEA.HI.X P0, R5, R0, RZ, R2");
        let i = Instr::new(
            Op::Ld(MemMods::new(MemSize::B32, true)),
            vec![Dst::Reg(r(4))],
            vec![Src::addr(RegRef::new(Reg::R(4), 2), -4), Src::pred(Reg::P(0), false)],
        );
        assert_eq!(text(&i), "LD.E R4, [R4+-0x4], P0");
        let i = Instr::new(
            Op::Xmad(XmadMods { psl: true, c: XmadC::Cbcc, ..Default::default() }),
            vec![Dst::Reg(r(0))],
            vec![Src::reg(r(0)).h1(), Src::reg(r(3)).h1(), Src::reg(r(2))],
        );
        assert_eq!(text(&i), "XMAD.PSL.CBCC R0, R0.H1, R3.H1, R2");
        let i = Instr::new(
            Op::Xmad(XmadMods { mrg: true, ..Default::default() }),
            vec![Dst::Reg(r(3))],
            vec![Src::reg(r(0)), Src::cbuf(0, 8, 1).h1(), Src::rz()],
        );
        assert_eq!(text(&i), "XMAD.MRG R3, R0, c[0x0] [0x8].H1, RZ");
        let i = Instr::new(
            Op::Iadd32i { cc: false, x: false },
            vec![Dst::Reg(r(1))],
            vec![Src::reg(r(1)), Src::imm(-0x40i32 as u32)],
        );
        assert_eq!(text(&i), "IADD32I R1, R1, -0x40");
        let i = Instr::new(
            Op::Lds(MemMods::new(MemSize::B32, false)),
            vec![Dst::Reg(r(0))],
            vec![Src::addr(RegRef::rz(1), 8)],
        );
        assert_eq!(text(&i), "LDS.U.32 R0, [0x8]");
        let i = Instr::new(
            Op::Fmul(FMods::default()),
            vec![Dst::Reg(r(0))],
            vec![Src::reg(r(0)), Src::imm(0.5f32.to_bits())],
        );
        assert_eq!(text(&i), "FMUL R0, R0, 0.5");
        assert_eq!(float_text(2f64.powi(-24)), "5.9604644775390625e-08");
        assert_eq!(float_text(0.1f32 as f64), "0.10000000149011612");
        assert_eq!(float_text(-3.0), "-3");
        assert_eq!(float_text(1e20), "1e+20");
        let i = Instr::new(
            Op::Isetp { cmp: Cmp::Ge, u32: true, x: false, bop: BoolOp::And },
            vec![Dst::Pred(Reg::P(0)), Dst::Pred(PT)],
            vec![Src::reg(r(0)), Src::cbuf(0, 0x158, 1), Src::pt()],
        );
        assert_eq!(text(&i), "ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x158], PT");
        let i = Instr::new(Op::Bra, vec![], vec![Src::label(3)]).guarded(Reg::P(1), true);
        assert_eq!(text(&i), "@!P1 BRA BB3");
        let i = Instr::new(Op::Lop(LogicOp::PassB), vec![Dst::Reg(r(2))], vec![Src::rz(), Src::reg(r(3)).inv()]);
        assert_eq!(text(&i), "LOP.PASS_B R2, RZ, ~R3");
        let i = Instr::new(
            Op::Ldc { size: MemSize::B32, mode: LdcMode::Ia },
            vec![Dst::Reg(r(0))],
            vec![Src {
                kind: SrcKind::CBuf { bank: 3, offset: -0x63c0, index: Some(r(0)), n: 1 },
                mods: SrcMods::default(),
            }],
        );
        assert_eq!(text(&i), "LDC R0, c[0x3][R0+-0x63c0]");
        // Constant-bank spelling as nvdisasm 11.8 prints the same bits (raw sweeps in
        // tests/encode_table.rs): a space for XMAD's B and the integer conversions, none
        // for XMAD's C; offsets from 0x8000 are negative.
        let i = Instr::new(
            Op::Xmad(XmadMods { c: XmadC::Clo, mrg: true, ..Default::default() }),
            vec![Dst::Reg(r(7))],
            vec![Src::reg(r(6)), Src::reg(r(7)), Src::cbuf(0, 0x1a4, 1)],
        );
        assert_eq!(text(&i), "XMAD.CLO.MRG R7, R6, R7, c[0x0][0x1a4]");
        let i = Instr::new(
            Op::I2f { dst: FType::F32, src: IType::S32, rnd: Rnd::Rn },
            vec![Dst::Reg(r(0))],
            vec![Src::cbuf(3, 0xea5c, 1)],
        );
        assert_eq!(text(&i), "I2F.F32.S32 R0, c[0x3] [-0x15a4]");
    }
}
