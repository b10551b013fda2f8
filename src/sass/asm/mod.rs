//! Reads one instruction of a listing ([`TextInstr`], nvdisasm syntax) into the instruction
//! model ([`Instr`]): the inverse of [`crate::sass::print::instr_text`] for every form the printer
//! writes, and the forms ptxas 11.8 emits that ptx2sass does not (`CAL`, `FSET`, `ICMP`,
//! `CSETP`, `LOP.AND.NZ`, `XMAD.CSFU`, `DEPBAR {0}`, ...), so that the simulator can run
//! code it did not compile ([`crate::sass::listing`]).
//!
//! Nothing is guessed: a modifier or operand the model cannot represent is an error naming
//! it (silently dropping one could change what the instruction computes). Operand widths
//! (pairs, quads) follow the opcode and its types, as the compiler would have built them.

mod mods;
mod opcode;
mod operands;

use crate::sass::instr::{Dst, Guard, Instr, Reg, RegRef, SrcKind};
use crate::sass::op::*;
use crate::sass::text::{Target, TextInstr};
use opcode::parse_op;
use operands::*;

/// One instruction read from text, with the scoreboard barriers a `DEPBAR {b,...}` waits
/// on beyond its first (to be added to the instruction's wait mask).
#[derive(Clone, Debug, PartialEq)]
pub struct Assembled {
    /// The instruction; branch targets are instruction indices ([`SrcKind::Label`]).
    pub instr: Instr,
    /// Extra barriers to wait on (bit b = SBb).
    pub extra_wait: u8,
    /// The symbols the instruction names (`32@lo(lut)`), indexed by its
    /// [`SrcKind::Sym`] ids; the caller renumbers them into its function's table.
    pub symbols: Vec<String>,
}

/// Reads `t` into an instruction. `target` maps a branch target to an instruction index.
/// Errors name what cannot be represented.
pub fn assemble(t: &TextInstr, target: &dyn Fn(&Target) -> Option<u32>) -> Result<Assembled, String> {
    let guard = match &t.guard {
        Some((neg, p)) => match reg_name(p) {
            Some(r @ Reg::P(_)) => Some(Guard { pred: r, neg: *neg }),
            _ => return Err(format!("bad guard `{p}`")),
        },
        None => None,
    };
    let cc = t.operands.first().is_some_and(|o| o.trim_end_matches(".reuse").ends_with(".CC"));
    let pred_first = t.operands.first().is_some_and(|o| matches!(reg_name(o.trim_start_matches('!')), Some(Reg::P(_))));
    let mut op = parse_op(t, cc)?;
    let mut extra_wait = 0u8;
    // nvdisasm's comments (`SYNC (*"BRANCH_TARGETS .L_x_0"*)`) are not operands.
    let mut operands: Vec<&str> = t.operands.iter().map(|s| s.as_str()).filter(|o| !o.starts_with("(*")).collect();
    // Operands that belong to the opcode.
    match op {
        Op::S2r(_) | Op::Cs2r(_) => operands.truncate(1),
        Op::Depbar { .. } => {
            let (mut sb, mut count) = (None, 0u8);
            for o in operands.drain(..) {
                if let Some(b) = o.strip_prefix("SB") {
                    sb = Some(b.parse::<u8>().map_err(|_| format!("bad barrier `{o}`"))?);
                } else if let Some(list) = o.strip_prefix('{').and_then(|l| l.strip_suffix('}')) {
                    // `DEPBAR {b,..}`: wait until each listed barrier is clear (ptxas 11.8,
                    // samples/nvcc_scan; the hazard checker reads it the same way).
                    for b in list.split(',').filter(|b| !b.trim().is_empty()) {
                        let b: u8 = b.trim().parse().map_err(|_| format!("bad barrier list `{o}`"))?;
                        if b > 5 {
                            return Err(format!("bad barrier list `{o}`"));
                        }
                        extra_wait |= 1 << b;
                    }
                } else {
                    count = number(o, ImmKind::Int)? as u8;
                }
            }
            op = match sb {
                Some(sb) if sb < 6 => Op::Depbar { sb, count },
                Some(sb) => return Err(format!("bad barrier SB{sb}")),
                None => {
                    // Only a list: the first listed barrier becomes the DEPBAR's own wait.
                    let b = extra_wait.trailing_zeros() as u8;
                    if b > 5 {
                        return Err("DEPBAR without a barrier".into());
                    }
                    extra_wait &= !(1 << b);
                    Op::Depbar { sb: b, count: 0 }
                }
            };
        }
        Op::BraCc { .. } => {
            operands.remove(0);
        }
        Op::Csetp { .. } => {
            // `CSETP.test.bop Pd, Qd, CC, Pc`: CC is implied by the opcode.
            if operands.get(2) != Some(&"CC") {
                return Err("CSETP without its CC operand".into());
            }
            operands.remove(2);
        }
        _ => {}
    }
    let ndst = dst_count(&op, &t.operands, pred_first).min(operands.len());
    let (dtext, stext) = operands.split_at(ndst);
    let w = widths(&op, stext.len());
    let mut dsts = vec![];
    for d in dtext {
        let name = d.trim().trim_end_matches(".reuse").trim_end_matches(".CC");
        match reg_name(name) {
            Some(p @ Reg::P(_)) => dsts.push(Dst::Pred(p)),
            Some(Reg::R(255)) => dsts.push(Dst::Reg(RegRef::rz(1))),
            Some(r) => dsts.push(Dst::Reg(RegRef::new(r, w.dst))),
            None => return Err(format!("bad destination `{d}`")),
        }
    }
    let mut srcs = vec![];
    let mut symbols = vec![];
    let mut k = 0;
    while k < stext.len() {
        let mut s = source(stext[k], &op, w.src[k], target, &mut symbols)?;
        // CAS data: nvdisasm prints the pair/quad `{compare, new}` as `Rb, Rb+n`.
        if let (Op::Atom(m) | Op::Atoms(m), SrcKind::Reg(r)) = (op, s.kind)
            && m.op == AtomOp::Cas
            && k == 1
        {
            let next = stext.get(2).ok_or("CAS without its new value")?;
            let n = m.ty.regs();
            match (r.reg, source(next, &op, n, target, &mut symbols)?.kind) {
                (Reg::R(a), SrcKind::Reg(RegRef { reg: Reg::R(b), .. })) if b as u16 == a as u16 + n as u16 => {
                    s.kind = SrcKind::Reg(RegRef::new(r.reg, 2 * n));
                    k += 1;
                }
                _ => return Err(format!("CAS operands `{}, {next}` are not consecutive registers", stext[k])),
            }
        }
        srcs.push(s);
        k += 1;
    }
    Ok(Assembled {
        instr: Instr { guard, op, dsts, srcs, cc: Default::default(), origin: Default::default() },
        extra_wait,
        symbols,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sass::instr::Src;
    use crate::sass::print::{NoVRegs, instr_text};

    fn round_trip(line: &str) -> String {
        let listing = format!(".text.k:\n  /*0008*/ {line} ; ?WAIT1\n");
        let f = crate::sass::text::parse(&listing).unwrap();
        let t = &f[0].instrs[0];
        let a = assemble(t, &|tg| match tg {
            Target::Label(l) if l == ".L_x_0" => Some(7),
            Target::Addr(0x28) => Some(3),
            _ => None,
        })
        .unwrap_or_else(|e| panic!("{line}: {e}"));
        instr_text(&a.instr, &NoVRegs, &|b| format!("#{b}"))
    }

    #[test]
    fn printer_spellings_read_back() {
        for (text, want) in [
            ("IADD R4.CC, R6, c[0x0][0x148]", None),
            ("LEA.HI.X P0, R5, R0, RZ, R2", None),
            ("LD.E R4, [R4+-0x4], P0", None),
            ("XMAD.PSL.CBCC R0, R0.H1, R3.H1, R2", None),
            ("XMAD.MRG R3, R0.reuse, c[0x0] [0x8].H1, RZ", Some("XMAD.MRG R3, R0, c[0x0] [0x8].H1, RZ")),
            ("IADD32I R1, R1, -0x40", None),
            ("ISETP.EQ.U32.AND P0, PT, R6, -0x1, PT", None),
            ("FADD R0, -R1, -3", None),
            ("LDS.U.32 R0, [0x8]", None),
            ("FMUL R0, R0, 0.5", None),
            ("ISETP.GE.U32.AND P0, PT, R0, c[0x0][0x158], PT", None),
            ("@!P1 BRA `(.L_x_0)", Some("@!P1 BRA #7")),
            ("SSY 0x28", Some("SSY #3")),
            ("LOP.PASS_B R2, RZ, ~R3", None),
            ("LDC R0, c[0x3][R0+-0x63c0]", None),
            ("LDG.E.CI.U.128 R4, [R2]", None),
            ("ATOM.E.CAS R0, [R4], R6, R7", None),
            ("ATOMS.CAS.64 R12, [0x18], R12, R14", None),
            ("DSETP.GTU.AND P0, PT, |R4|, +INF , PT", Some("DSETP.GTU.AND P0, PT, |R4|, +INF, PT")),
            ("FSET.NEU.FTZ.AND RZ.CC, |R7|, +INF , PT", Some("FSET.NEU.FTZ.AND RZ.CC, |R7|, +INF, PT")),
            ("CSETP.SFT.AND P0, PT, CC, PT", None),
            ("XMAD.S16.S16.CSFU R18, R10.H1, R0.H1, RZ", None),
            ("IMNMX.U32.XHI R23.CC, R5.reuse, R7, !PT", Some("IMNMX.U32.XHI R23.CC, R5, R7, !PT")),
            ("LOP.AND.NZ P0, RZ, R2, R3", None),
            ("VABSDIFF.U32.U32.ACC R18, R10, R0, R27", None),
            ("I2I.S32.S32 R16, -|R0|", None),
            ("LDL.LU.64 R4, [R1+0x8]", None),
            ("S2R R0, SR_CTAID.X", None),
            ("DEPBAR.LE SB5, 0x1", None),
            ("DEPBAR {0}", Some("DEPBAR.LE SB0, 0x0")),
            ("SHFL.BFLY PT, R2, R0, 0x1, 0x1f", None),
            ("VOTE.ANY R8, PT, PT", None),
            ("F2I.FTZ.U32.F32.TRUNC R0, R0", None),
            ("ISCADD32I R10, R14, -0x3f800000, 0x17", None),
            ("IMAD.HI.SAT R6, R0, R6, R7", None),
            ("IMAD.U32.U32.HI R6, R0, R6, R7", None),
            ("@P0 IMUL32I.U32.U32.HI R11, R8, 0x8", None),
            ("IMUL.S32.U32 R11, R8, R9", None),
            ("FCMP.LEU R9, RZ, c[0x2][0x0], R6", None),
            ("IADD32I.SAT R6, R2, -0x80000000", None),
            ("I2I.U16.U32.SAT R6, R6", None),
            ("F2F.FTZ.F32.F32.TRUNC.SAT R6, R2", None),
            ("F2F.F16.F32.RM.SAT R0, R0", None),
            ("@!P0 BRA CC.NEU, `(.L_x_0)", Some("@!P0 BRA CC.NEU, #7")),
            ("LOP3.LUT.NZ P0, RZ, R8, R9, R7, 0xc8", None),
            ("LOP.XOR RZ.CC, R5.reuse, R7", Some("LOP.XOR RZ.CC, R5, R7")),
        ] {
            assert_eq!(round_trip(text), want.unwrap_or(text), "{text}");
        }
    }

    #[test]
    fn widths_follow_the_opcode() {
        let listing =
            ".text.k:\n  /*0008*/ DADD R4, R6, c[0x0][0x140] ; ?WAIT1\n  /*0010*/ STG.E.64 [R2], R4 ; ?WAIT1\n";
        let f = crate::sass::text::parse(listing).unwrap();
        let none = |_: &Target| None;
        let d = assemble(&f[0].instrs[0], &none).unwrap().instr;
        assert_eq!(d.dsts[0], Dst::Reg(RegRef::new(Reg::R(4), 2)));
        assert!(matches!(d.srcs[1].kind, SrcKind::CBuf { n: 2, .. }));
        let s = assemble(&f[0].instrs[1], &none).unwrap().instr;
        assert!(matches!(s.srcs[0].kind, SrcKind::Addr { base: RegRef { n: 2, .. }, .. }));
        assert_eq!(s.srcs[1].as_reg(), Some(RegRef::new(Reg::R(4), 2)));
    }

    #[test]
    fn signs_belong_to_immediates() {
        let listing = ".text.k:\n  /*0008*/ ISETP.EQ.U32.AND P0, PT, R6, -0x1, PT ; ?WAIT1\n  /*0010*/ FADD R0, R0, -3 ; ?WAIT1\n";
        let f = crate::sass::text::parse(listing).unwrap();
        let none = |_: &Target| None;
        let i = assemble(&f[0].instrs[0], &none).unwrap().instr;
        assert_eq!(i.srcs[1], Src::imm(u32::MAX));
        let i = assemble(&f[0].instrs[1], &none).unwrap().instr;
        assert_eq!(i.srcs[1], Src::imm((-3.0f32).to_bits()));
        let listing = ".text.k:\n  /*0008*/ IADD3 R6, R6, 0xfffff, R4 ; ?WAIT1\n";
        let f = crate::sass::text::parse(listing).unwrap();
        let i = assemble(&f[0].instrs[0], &none).unwrap().instr;
        assert_eq!(i.srcs[1], Src::imm(u32::MAX), "20-bit immediate sign-extended");
    }

    #[test]
    fn unmodelled_forms_are_named() {
        let listing = ".text.k:\n  /*0008*/ FMUL.D2 R0, R0, R1 ; ?WAIT1\n  /*0010*/ TEXS R0, R1, R2 ; ?WAIT1\n";
        let f = crate::sass::text::parse(listing).unwrap();
        let none = |_: &Target| None;
        assert!(assemble(&f[0].instrs[0], &none).unwrap_err().contains("`.D2`"));
        assert!(assemble(&f[0].instrs[1], &none).unwrap_err().contains("TEXS"));
    }
}
