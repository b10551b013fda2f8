//! Modifier parsing for [`super::assemble`]: each modifier of a mnemonic is consumed once,
//! and the typed readers map nvdisasm's spellings onto the instruction model.

use crate::sass::op::*;
use crate::sass::text::TextInstr;

/// The modifiers of a mnemonic, each to be consumed exactly once.
pub(super) struct Mods<'a> {
    opcode: &'a str,
    list: Vec<&'a str>,
    used: Vec<bool>,
}

impl<'a> Mods<'a> {
    pub(super) fn new(t: &'a TextInstr) -> Mods<'a> {
        Mods { opcode: &t.opcode, list: t.mods.iter().map(|m| m.as_str()).collect(), used: vec![false; t.mods.len()] }
    }
    /// Consumes `m` if present.
    pub(super) fn take(&mut self, m: &str) -> bool {
        match (0..self.list.len()).find(|&k| !self.used[k] && self.list[k] == m) {
            Some(k) => {
                self.used[k] = true;
                true
            }
            None => false,
        }
    }
    /// Consumes the first unused modifier that `f` maps to a value.
    pub(super) fn take_map<T>(&mut self, f: impl Fn(&str) -> Option<T>) -> Option<T> {
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
    pub(super) fn finish(&self) -> Result<(), String> {
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
pub(super) fn operand_signs(m: &mut Mods) -> Result<(bool, bool), String> {
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

pub(super) fn cmp_of(m: &str) -> Option<Cmp> {
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

pub(super) fn bop_of(m: &str) -> Option<BoolOp> {
    Some(match m {
        "AND" => BoolOp::And,
        "OR" => BoolOp::Or,
        "XOR" => BoolOp::Xor,
        _ => return None,
    })
}

pub(super) fn lop_of(m: &str) -> Option<LogicOp> {
    Some(match m {
        "AND" => LogicOp::And,
        "OR" => LogicOp::Or,
        "XOR" => LogicOp::Xor,
        "PASS_B" => LogicOp::PassB,
        _ => return None,
    })
}

pub(super) fn rnd_of(m: &str) -> Option<Rnd> {
    Some(match m {
        "RN" => Rnd::Rn,
        "RM" => Rnd::Rm,
        "RP" => Rnd::Rp,
        "RZ" => Rnd::Rz,
        _ => return None,
    })
}

pub(super) fn itype_of(m: &str) -> Option<IType> {
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

pub(super) fn ftype_of(m: &str) -> Option<FType> {
    Some(match m {
        "F16" => FType::F16,
        "F32" => FType::F32,
        "F64" => FType::F64,
        _ => return None,
    })
}

pub(super) fn size_of(m: &str) -> Option<MemSize> {
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

pub(super) fn cop_of(m: &str) -> Option<CacheOp> {
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

pub(super) fn special_reg(name: &str) -> Option<SpecialReg> {
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
pub(super) fn mem_mods(m: &mut Mods, lds: bool) -> MemMods {
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

pub(super) fn atom_mods(m: &mut Mods) -> Result<AtomMods, String> {
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
