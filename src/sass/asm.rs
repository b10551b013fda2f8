//! Reads one instruction of a listing ([`TextInstr`], nvdisasm syntax) into the instruction
//! model ([`Instr`]): the inverse of [`super::print::instr_text`] for every form the printer
//! writes, and the forms ptxas 11.8 emits that ptx2sass does not (`CAL`, `FSET`, `ICMP`,
//! `CSETP`, `LOP.AND.NZ`, `XMAD.CSFU`, `DEPBAR {0}`, ...), so that the simulator can run
//! code it did not compile ([`super::listing`]).
//!
//! Nothing is guessed: a modifier or operand the model cannot represent is an error naming
//! it (silently dropping one could change what the instruction computes). Operand widths
//! (pairs, quads) follow the opcode and its types, as the compiler would have built them.

use super::instr::{Dst, Guard, Instr, PT, Reg, RegRef, Src, SrcKind, SrcMods, SymPart};
use super::op::*;
use super::text::{Target, TextInstr};

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

/// The modifiers of a mnemonic, each to be consumed exactly once.
struct Mods<'a> {
    opcode: &'a str,
    list: Vec<&'a str>,
    used: Vec<bool>,
}

impl<'a> Mods<'a> {
    fn new(t: &'a TextInstr) -> Mods<'a> {
        Mods { opcode: &t.opcode, list: t.mods.iter().map(|m| m.as_str()).collect(), used: vec![false; t.mods.len()] }
    }
    /// Consumes `m` if present.
    fn take(&mut self, m: &str) -> bool {
        match (0..self.list.len()).find(|&k| !self.used[k] && self.list[k] == m) {
            Some(k) => {
                self.used[k] = true;
                true
            }
            None => false,
        }
    }
    /// Consumes the first unused modifier that `f` maps to a value.
    fn take_map<T>(&mut self, f: impl Fn(&str) -> Option<T>) -> Option<T> {
        for k in 0..self.list.len() {
            if !self.used[k]
                && let Some(v) = f(self.list[k])
            {
                self.used[k] = true;
                return Some(v);
            }
        }
        None
    }
    /// Errors unless every modifier was consumed.
    fn finish(&self) -> Result<(), String> {
        let left: Vec<&str> = (0..self.list.len()).filter(|&k| !self.used[k]).map(|k| self.list[k]).collect();
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("modifier `.{}` of {} is not modelled", left.join("."), self.opcode))
        }
    }
}

/// The signedness of IMAD/IMUL's two operands: `.U32`/`.S32` for `a` then `b`, or both
/// signed when nvdisasm prints neither (ptxas 11.8: `IMAD.HI.SAT` for `mad.hi.sat.s32`,
/// `IMUL32I.U32.U32.HI` for an unsigned high product).
fn operand_signs(m: &mut Mods) -> Result<(bool, bool), String> {
    let sign = |s: &str| match s {
        "U32" => Some(false),
        "S32" => Some(true),
        _ => None,
    };
    match (m.take_map(sign), m.take_map(sign)) {
        (None, None) => Ok((true, true)),
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(format!("{} with one operand type is not modelled", m.opcode)),
    }
}

fn cmp_of(m: &str) -> Option<Cmp> {
    use Cmp::*;
    Some(match m {
        "F" => F,
        "LT" => Lt,
        "EQ" => Eq,
        "LE" => Le,
        "GT" => Gt,
        "NE" => Ne,
        "GE" => Ge,
        "NUM" => Num,
        "NAN" => Nan,
        "LTU" => Ltu,
        "EQU" => Equ,
        "LEU" => Leu,
        "GTU" => Gtu,
        "NEU" => Neu,
        "GEU" => Geu,
        "T" => T,
        _ => return None,
    })
}

fn bop_of(m: &str) -> Option<BoolOp> {
    Some(match m {
        "AND" => BoolOp::And,
        "OR" => BoolOp::Or,
        "XOR" => BoolOp::Xor,
        _ => return None,
    })
}

fn lop_of(m: &str) -> Option<LogicOp> {
    Some(match m {
        "AND" => LogicOp::And,
        "OR" => LogicOp::Or,
        "XOR" => LogicOp::Xor,
        "PASS_B" => LogicOp::PassB,
        _ => return None,
    })
}

fn rnd_of(m: &str) -> Option<Rnd> {
    Some(match m {
        "RN" => Rnd::Rn,
        "RM" => Rnd::Rm,
        "RP" => Rnd::Rp,
        "RZ" => Rnd::Rz,
        _ => return None,
    })
}

fn itype_of(m: &str) -> Option<IType> {
    use IType::*;
    Some(match m {
        "U8" => U8,
        "S8" => S8,
        "U16" => U16,
        "S16" => S16,
        "U32" => U32,
        "S32" => S32,
        "U64" => U64,
        "S64" => S64,
        _ => return None,
    })
}

fn ftype_of(m: &str) -> Option<FType> {
    Some(match m {
        "F16" => FType::F16,
        "F32" => FType::F32,
        "F64" => FType::F64,
        _ => return None,
    })
}

fn size_of(m: &str) -> Option<MemSize> {
    use MemSize::*;
    Some(match m {
        "U8" => U8,
        "S8" => S8,
        "U16" => U16,
        "S16" => S16,
        "32" => B32,
        "64" => B64,
        "128" => B128,
        _ => return None,
    })
}

fn cop_of(m: &str) -> Option<CacheOp> {
    Some(match m {
        "CA" | "WB" => CacheOp::Default,
        "CG" => CacheOp::Cg,
        "CI" => CacheOp::Ci,
        "CV" => CacheOp::Cv,
        "CS" => CacheOp::Cs,
        "WT" => CacheOp::Wt,
        "LU" => CacheOp::Lu,
        _ => return None,
    })
}

fn special_reg(name: &str) -> Option<SpecialReg> {
    use SpecialReg::*;
    [
        TidX, TidY, TidZ, CtaidX, CtaidY, CtaidZ, LaneId, ClockLo, ClockHi, VirtId, VirtCfg, LtMask, LeMask, GtMask,
        GeMask, EqMask,
    ]
    .into_iter()
    .find(|s| s.name() == name)
}

/// A memory access's modifiers: `.E`, the cache operator and the size (`.U.128` for a
/// uniform 128-bit load).
fn mem_mods(m: &mut Mods, lds: bool) -> MemMods {
    let e = m.take("E");
    if lds {
        m.take("U");
    }
    let cop = m.take_map(cop_of).unwrap_or_default();
    let size = if !lds && m.list.contains(&"U") && m.take("128") {
        m.take("U");
        MemSize::U128
    } else {
        m.take_map(size_of).unwrap_or(MemSize::B32)
    };
    MemMods { cop, ..MemMods::new(size, e) }
}

fn atom_mods(m: &mut Mods) -> Result<AtomMods, String> {
    let e = m.take("E");
    let op = m
        .take_map(|x| {
            Some(match x {
                "ADD" => AtomOp::Add,
                "MIN" => AtomOp::Min,
                "MAX" => AtomOp::Max,
                "INC" => AtomOp::Inc,
                "DEC" => AtomOp::Dec,
                "AND" => AtomOp::And,
                "OR" => AtomOp::Or,
                "XOR" => AtomOp::Xor,
                "EXCH" => AtomOp::Exch,
                "CAS" => AtomOp::Cas,
                _ => return None,
            })
        })
        .ok_or("atomic without an operation")?;
    let ty = if m.take("F32") {
        if !(m.take("FTZ") && m.take("RN")) {
            return Err("f32 atomic without .FTZ.RN".into());
        }
        AtomType::F32
    } else if m.take("S32") {
        AtomType::S32
    } else if m.take("U64") || m.take("64") {
        AtomType::U64
    } else if m.take("S64") {
        AtomType::S64
    } else {
        m.take("U32");
        AtomType::U32
    };
    Ok(AtomMods { op, ty, e })
}

/// The opcode and modifiers of `t` as an [`Op`]. `cc` is true when the first destination
/// carries `.CC`.
fn parse_op(t: &TextInstr, cc: bool) -> Result<Op, String> {
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

/// How an immediate operand of `op` is written: f32 values, the upper word of f64
/// values, or integers.
#[derive(Clone, Copy, PartialEq)]
enum ImmKind {
    F32,
    F64Hi,
    Int,
}

fn imm_kind(op: &Op) -> ImmKind {
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
fn number(text: &str, kind: ImmKind) -> Result<u32, String> {
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
fn reg_name(t: &str) -> Option<Reg> {
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
fn address(inner: &str, width: u8) -> Result<(RegRef, i32), String> {
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
fn source(
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
struct Widths {
    dst: u8,
    src: Vec<u8>,
}

fn widths(op: &Op, nsrc: usize) -> Widths {
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
fn dst_count(op: &Op, operands: &[String], pred_first: bool) -> usize {
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
