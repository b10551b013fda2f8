//! The opcode table of the assembler: a mnemonic and its modifiers read into an [`Op`]
//! (the inverse of `Op::name`), one arm per opcode.

use super::mods::*;
use crate::sass::op::*;
use crate::sass::text::TextInstr;

/// The opcode and modifiers of `t` as an [`Op`]. `cc` is true when the first destination
/// carries `.CC`.
pub(super) fn parse_op(t: &TextInstr, cc: bool) -> Result<Op, String> {
    let mut m = Mods::new(t);
    let no_cc = |op: Op| if cc { Err(format!("`.CC` on {} is not modelled", t.opcode)) } else { Ok(op) };
    let op = match t.opcode.as_str() {
        "MOV" => no_cc(Op::Mov)?,
        "MOV32I" => no_cc(Op::Mov32i)?,
        "SEL" => Op::Sel,
        "S2R" | "CS2R" => {
            let name = t.operands.get(1).ok_or("S2R without a special register")?;
            let sr = special_reg(name).ok_or_else(|| format!("special register `{name}` is not modelled"))?;
            if t.opcode == "S2R" { Op::S2r(sr) } else { Op::Cs2r(sr) }
        }
        "IADD" => {
            if m.take("SAT") {
                no_cc(Op::IaddSat)?
            } else {
                Op::Iadd { cc, x: m.take("X") }
            }
        }
        "IADD32I" => {
            if m.take("SAT") {
                no_cc(Op::Iadd32iSat)?
            } else {
                Op::Iadd32i { cc, x: m.take("X") }
            }
        }
        "IADD3" => {
            let x = m.take("X");
            let mode = if m.take("RS") {
                Iadd3Mode::Rs
            } else if m.take("LS") {
                Iadd3Mode::Ls
            } else {
                Iadd3Mode::Plain
            };
            match (mode, x || cc) {
                (_, false) => Op::Iadd3(mode),
                (Iadd3Mode::Plain, true) => Op::Iadd3C { x, cc },
                _ => return Err("IADD3.RS/.LS with carry is not modelled".into()),
            }
        }
        "ISCADD" => Op::Iscadd { cc },
        "ISCADD32I" => no_cc(Op::Iscadd32i)?,
        "LEA" => Op::Lea { hi: m.take("HI"), x: m.take("X"), cc },
        "XMAD" => {
            let mut x = XmadMods { cc, ..Default::default() };
            let signs: Vec<bool> =
                (0..2).filter_map(|_| m.take_map(|s| (s == "S16" || s == "U16").then_some(s == "S16"))).collect();
            if let [a, b] = signs[..] {
                x.signed_a = a;
                x.signed_b = b;
            } else if !signs.is_empty() {
                return Err("XMAD with one operand type".into());
            }
            x.psl = m.take("PSL");
            x.mrg = m.take("MRG");
            x.c = m
                .take_map(|s| {
                    Some(match s {
                        "CBCC" => XmadC::Cbcc,
                        "CHI" => XmadC::Chi,
                        "CLO" => XmadC::Clo,
                        "CSFU" => XmadC::Csfu,
                        _ => return None,
                    })
                })
                .unwrap_or_default();
            x.x = m.take("X");
            Op::Xmad(x)
        }
        "SHL" => no_cc(if m.take("W") { Op::ShlW } else { Op::Shl })?,
        "SHR" => {
            let u32 = m.take("U32");
            no_cc(if m.take("W") { Op::ShrW { u32 } } else { Op::Shr { u32 } })?
        }
        "SHF" => {
            let left = m.take("L");
            if !left && !m.take("R") {
                return Err("SHF without .L or .R".into());
            }
            let wrap = m.take("W");
            let (wide, signed) = if m.take("U64") {
                (true, false)
            } else if m.take("S64") {
                (true, true)
            } else {
                m.take("U32");
                (false, m.take("S32"))
            };
            no_cc(Op::Shf { left, signed, wide, wrap })?
        }
        "LOP" | "LOP32I" => {
            let op = m.take_map(lop_of).ok_or("LOP without an operation")?;
            let test = m.take_map(|s| match s {
                "Z" => Some(false),
                "NZ" => Some(true),
                _ => None,
            });
            match (t.opcode.as_str(), test.is_some() || cc) {
                ("LOP", false) => Op::Lop(op),
                ("LOP", true) => Op::LopX { op, pred: test, cc },
                (_, false) => Op::Lop32i(op),
                (_, true) => Op::Lop32iX { op, pred: test, cc },
            }
        }
        "LOP3" => {
            if !m.take("LUT") {
                return Err("LOP3 without .LUT".into());
            }
            let test = m.take_map(|s| match s {
                "Z" => Some(false),
                "NZ" => Some(true),
                _ => None,
            });
            if test.is_some() || cc { Op::Lop3X { pred: test, cc } } else { Op::Lop3 }
        }
        "IMNMX" => {
            let u32 = m.take("U32");
            if m.take("XHI") {
                Op::ImnmxX { u32, hi: true }
            } else if m.take("XLO") {
                no_cc(Op::ImnmxX { u32, hi: false })?
            } else {
                no_cc(Op::Imnmx { u32 })?
            }
        }
        "BFE" => no_cc(Op::Bfe { u32: m.take("U32"), brev: m.take("BREV") })?,
        "BFI" => no_cc(Op::Bfi)?,
        "POPC" => no_cc(Op::Popc)?,
        "FLO" => no_cc(Op::Flo { u32: m.take("U32"), sh: m.take("SH") })?,
        "PRMT" => {
            let mode = m
                .take_map(|s| {
                    Some(match s {
                        "F4E" => PrmtMode::F4e,
                        "B4E" => PrmtMode::B4e,
                        "RC8" => PrmtMode::Rc8,
                        "ECL" => PrmtMode::Ecl,
                        "ECR" => PrmtMode::Ecr,
                        "RC16" => PrmtMode::Rc16,
                        _ => return None,
                    })
                })
                .unwrap_or_default();
            no_cc(Op::Prmt(mode))?
        }
        "MUFU" => {
            let f = m
                .take_map(|s| {
                    Some(match s {
                        "COS" => MufuOp::Cos,
                        "SIN" => MufuOp::Sin,
                        "EX2" => MufuOp::Ex2,
                        "LG2" => MufuOp::Lg2,
                        "RCP" => MufuOp::Rcp,
                        "RSQ" => MufuOp::Rsq,
                        "RCP64H" => MufuOp::Rcp64h,
                        "RSQ64H" => MufuOp::Rsq64h,
                        _ => return None,
                    })
                })
                .ok_or("MUFU without a function")?;
            no_cc(Op::Mufu(f))?
        }
        "RRO" => {
            let ex2 = m.take("EX2");
            if !ex2 && !m.take("SINCOS") {
                return Err("RRO without .SINCOS or .EX2".into());
            }
            no_cc(Op::Rro { ex2 })?
        }
        "ISETP" | "ISET" | "ICMP" => {
            let bf = m.take("BF");
            let cmp = m.take_map(cmp_of).ok_or("integer comparison without a test")?;
            let u32 = m.take("U32");
            m.take("S32");
            let x = m.take("X");
            match t.opcode.as_str() {
                "ICMP" => no_cc(Op::Icmp { cmp, u32 })?,
                op => {
                    let bop = m.take_map(bop_of).ok_or("comparison without .AND/.OR/.XOR")?;
                    if op == "ISETP" {
                        no_cc(Op::Isetp { cmp, u32, x, bop })?
                    } else {
                        Op::Iset { cmp, u32, x, bf, bop, cc }
                    }
                }
            }
        }
        "PSETP" => {
            let bop0 = m.take_map(bop_of).ok_or("PSETP without operations")?;
            let bop1 = m.take_map(bop_of).ok_or("PSETP without a second operation")?;
            Op::Psetp { bop0, bop1 }
        }
        "CSETP" => {
            let test = m
                .take_map(|s| CcTest::ALL.iter().find(|(_, n)| *n == s).map(|(t, _)| *t))
                .ok_or("CSETP without a test")?;
            Op::Csetp { test, bop: m.take_map(bop_of).ok_or("CSETP without .AND/.OR/.XOR")? }
        }
        "FADD" | "FADD32I" | "FMUL" | "FMUL32I" | "FFMA" | "FFMA32I" => {
            let f = FMods { ftz: m.take("FTZ"), rnd: m.take_map(rnd_of).unwrap_or_default(), sat: m.take("SAT") };
            no_cc(match t.opcode.as_str() {
                "FADD" => Op::Fadd(f),
                "FADD32I" => Op::Fadd32i(f),
                "FMUL" => Op::Fmul(f),
                "FMUL32I" => Op::Fmul32i(f),
                "FFMA" => Op::Ffma(f),
                _ => Op::Ffma32i(f),
            })?
        }
        "FMNMX" => no_cc(Op::Fmnmx { ftz: m.take("FTZ") })?,
        "FSETP" | "FSET" => {
            let bf = m.take("BF");
            let cmp = m.take_map(cmp_of).ok_or("float comparison without a test")?;
            let ftz = m.take("FTZ");
            let bop = m.take_map(bop_of).ok_or("comparison without .AND/.OR/.XOR")?;
            if t.opcode == "FSETP" { no_cc(Op::Fsetp { cmp, ftz, bop })? } else { Op::Fset { cmp, ftz, bf, bop, cc } }
        }
        "FCMP" => {
            let cmp = m.take_map(cmp_of).ok_or("FCMP without a test")?;
            no_cc(Op::Fcmp { cmp, ftz: m.take("FTZ") })?
        }
        "FCHK" => {
            if !m.take("DIVIDE") {
                return Err("FCHK without .DIVIDE".into());
            }
            no_cc(Op::Fchk)?
        }
        "DADD" | "DMUL" | "DFMA" => {
            let r = m.take_map(rnd_of).unwrap_or_default();
            no_cc(match t.opcode.as_str() {
                "DADD" => Op::Dadd(r),
                "DMUL" => Op::Dmul(r),
                _ => Op::Dfma(r),
            })?
        }
        "DMNMX" => no_cc(Op::Dmnmx)?,
        "DSETP" | "DSET" => {
            let bf = m.take("BF");
            let cmp = m.take_map(cmp_of).ok_or("DSETP without a test")?;
            let bop = m.take_map(bop_of).ok_or("comparison without .AND/.OR/.XOR")?;
            no_cc(if t.opcode == "DSETP" { Op::Dsetp { cmp, bop } } else { Op::Dset { cmp, bf, bop } })?
        }
        "I2F" => {
            let dst = m.take_map(ftype_of).unwrap_or(FType::F32);
            let src = m.take_map(itype_of).unwrap_or(IType::S32);
            no_cc(Op::I2f { dst, src, rnd: m.take_map(rnd_of).unwrap_or_default() })?
        }
        "F2I" => {
            let ftz = m.take("FTZ");
            let dst = m.take_map(itype_of).unwrap_or(IType::S32);
            let src = m.take_map(ftype_of).unwrap_or(FType::F32);
            let rnd = m
                .take_map(|s| {
                    Some(match s {
                        "ROUND" => IRnd::Round,
                        "FLOOR" => IRnd::Floor,
                        "CEIL" => IRnd::Ceil,
                        "TRUNC" => IRnd::Trunc,
                        _ => return None,
                    })
                })
                .unwrap_or_default();
            no_cc(Op::F2i { dst, src, rnd, ftz })?
        }
        "F2F" => {
            let ftz = m.take("FTZ");
            let dst = m.take_map(ftype_of).unwrap_or(FType::F32);
            let src = m.take_map(ftype_of).unwrap_or(FType::F32);
            let (rnd, int) = if let Some(r) = m.take_map(rnd_of) {
                (r, false)
            } else if let Some(r) = m.take_map(|s| {
                Some(match s {
                    "ROUND" => Rnd::Rn,
                    "FLOOR" => Rnd::Rm,
                    "CEIL" => Rnd::Rp,
                    "TRUNC" => Rnd::Rz,
                    _ => return None,
                })
            }) {
                (r, true)
            } else {
                (Rnd::Rn, false)
            };
            if m.take("SAT") {
                no_cc(Op::F2fSat { dst, src, rnd, ftz, int })?
            } else {
                no_cc(Op::F2f { dst, src, rnd, ftz, int })?
            }
        }
        "I2I" => {
            let dst = m.take_map(itype_of).unwrap_or(IType::S32);
            let src = m.take_map(itype_of).unwrap_or(IType::S32);
            match (cc, m.take("SAT")) {
                (false, false) => Op::I2i { dst, src },
                (true, false) => Op::I2iCc { dst, src },
                (false, true) => Op::I2iSat { dst, src },
                (true, true) => return Err("I2I.SAT with .CC is not modelled".into()),
            }
        }
        "IMAD" => {
            let signed = operand_signs(&mut m)?;
            no_cc(Op::Imad { signed, hi: m.take("HI"), sat: m.take("SAT") })?
        }
        "IMUL" | "IMUL32I" => {
            let (signed, hi) = (operand_signs(&mut m)?, m.take("HI"));
            no_cc(if t.opcode == "IMUL" { Op::Imul { signed, hi } } else { Op::Imul32i { signed, hi } })?
        }
        "LD" => Op::Ld(mem_mods(&mut m, false)),
        "ST" => Op::St(mem_mods(&mut m, false)),
        "LDG" => Op::Ldg(mem_mods(&mut m, false)),
        "STG" => Op::Stg(mem_mods(&mut m, false)),
        "LDS" => Op::Lds(mem_mods(&mut m, true)),
        "STS" => Op::Sts(mem_mods(&mut m, false)),
        "LDL" => Op::Ldl(mem_mods(&mut m, false)),
        "STL" => Op::Stl(mem_mods(&mut m, false)),
        "LDC" => {
            let size = m.take_map(size_of).unwrap_or(MemSize::B32);
            let mode = m
                .take_map(|s| {
                    Some(match s {
                        "IL" => LdcMode::Il,
                        "IS" => LdcMode::Is,
                        "ISL" => LdcMode::Isl,
                        _ => return None,
                    })
                })
                .unwrap_or_default();
            Op::Ldc { size, mode }
        }
        "ATOM" => Op::Atom(atom_mods(&mut m)?),
        "ATOMS" => Op::Atoms(atom_mods(&mut m)?),
        "RED" => Op::Red(atom_mods(&mut m)?),
        "CCTL" | "CCTLL" => {
            m.take("E");
            let level = if m.take("PF1") {
                1
            } else if m.take("PF2") {
                2
            } else {
                return Err("CCTL without .PF1/.PF2".into());
            };
            Op::Cctl { local: t.opcode == "CCTLL", level }
        }
        "SHFL" => Op::Shfl(
            m.take_map(|s| {
                Some(match s {
                    "IDX" => ShflMode::Idx,
                    "UP" => ShflMode::Up,
                    "DOWN" => ShflMode::Down,
                    "BFLY" => ShflMode::Bfly,
                    _ => return None,
                })
            })
            .ok_or("SHFL without a mode")?,
        ),
        "VOTE" => Op::Vote(
            m.take_map(|s| {
                Some(match s {
                    "ALL" => VoteMode::All,
                    "ANY" => VoteMode::Any,
                    "EQ" => VoteMode::Eq,
                    _ => return None,
                })
            })
            .ok_or("VOTE without a mode")?,
        ),
        "BRA" => match t.operands.first().and_then(|o| o.strip_prefix("CC.")) {
            Some(test) => Op::BraCc {
                test: CcTest::ALL
                    .iter()
                    .find(|(_, n)| *n == test)
                    .map(|(t, _)| *t)
                    .ok_or_else(|| format!("branch condition `CC.{test}` is not modelled"))?,
            },
            None => Op::Bra,
        },
        "EXIT" => Op::Exit,
        "RET" => Op::Ret,
        "CAL" => Op::Cal,
        "JCAL" => Op::Jcal,
        "PRET" => Op::Pret,
        "JMX" => Op::Jmx,
        "SSY" => Op::Ssy,
        "SYNC" => Op::Sync,
        "PBK" => Op::Pbk,
        "BRK" => Op::Brk,
        "NOP" => Op::Nop,
        "BAR" => {
            if m.take("RED") {
                Op::BarRed(
                    m.take_map(|s| {
                        Some(match s {
                            "POPC" => BarRedOp::Popc,
                            "AND" => BarRedOp::And,
                            "OR" => BarRedOp::Or,
                            _ => return None,
                        })
                    })
                    .ok_or("BAR.RED without an operation")?,
                )
            } else if m.take("ARV") {
                Op::Bar { arrive: true }
            } else {
                m.take("SYNC");
                Op::Bar { arrive: false }
            }
        }
        "B2R" => {
            m.take("RESULT");
            Op::B2r
        }
        "MEMBAR" => {
            let level = if m.take("CTA") {
                MembarLevel::Cta
            } else if m.take("GL") {
                MembarLevel::Gl
            } else if m.take("SYS") {
                MembarLevel::Sys
            } else {
                return Err("MEMBAR without a level".into());
            };
            m.take("IVALLD");
            Op::Membar(level)
        }
        "BPT" => {
            let trap = m.take("TRAP");
            if !trap {
                m.take("INT");
            }
            Op::Bpt { trap }
        }
        "DEPBAR" => {
            m.take("LE");
            Op::Depbar { sb: 0, count: 0 }
        }
        "VABSDIFF" => {
            let types: Vec<bool> =
                (0..2).filter_map(|_| m.take_map(|s| (s == "U32" || s == "S32").then_some(s == "U32"))).collect();
            let v = VabsdiffMods {
                a_unsigned: types.first() == Some(&true),
                b_unsigned: types.get(1) == Some(&true),
                sd: m.take("SD"),
                sat: m.take("SAT"),
                acc: m.take("ACC"),
            };
            m.take("UD");
            no_cc(Op::Vabsdiff(v))?
        }
        other => return Err(format!("opcode {other} is not modelled")),
    };
    m.finish()?;
    Ok(op)
}
