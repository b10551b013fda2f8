//! Classifies an instruction's opcode and modifier words into a typed [`InstrKind`].
//!
//! Each opcode declares its modifier *slots* (a state space, a cache operator, a type, ...).
//! Every modifier word must land in exactly one slot, in any order (ptxas accepts
//! `ld.global.relaxed.gpu` and `ld.relaxed.gpu.global` alike). Two words in one slot are a
//! conflict (`ld.global.shared`, `ld.ca.cg`), the same word twice a duplicate, and a word no
//! slot takes is reported as unknown for that opcode. Rules that relate slots to each other
//! (PTX ISA restrictions such as "`.nc` requires `.global`") are checked where lowering
//! decides what to emit, so the AST can represent everything the grammar accepts.

use super::ast::{Instruction, Modifier, Span};
use super::instr::*;
use super::types::{ScalarType, StateSpace};
use crate::diag::Diag;

/// Every PTX ISA 8.x opcode. A name outside this list is an unknown opcode; a name inside
/// it that [`classify`] does not model becomes [`InstrKind::Other`].
pub const PTX_OPCODES: &[&str] = &[
    "abs",
    "activemask",
    "add",
    "addc",
    "alloca",
    "and",
    "applypriority",
    "atom",
    "bar",
    "barrier",
    "bfe",
    "bfi",
    "bfind",
    "bmsk",
    "bra",
    "brev",
    "brkpt",
    "brx",
    "call",
    "clz",
    "cnot",
    "copysign",
    "cos",
    "cp",
    "createpolicy",
    "cvt",
    "cvta",
    "discard",
    "div",
    "dp2a",
    "dp4a",
    "elect",
    "ex2",
    "exit",
    "fence",
    "fma",
    "fns",
    "getctarank",
    "griddepcontrol",
    "isspacep",
    "istypep",
    "ld",
    "ldmatrix",
    "ldu",
    "lg2",
    "lop3",
    "mad",
    "mad24",
    "madc",
    "mapa",
    "match",
    "max",
    "mbarrier",
    "membar",
    "min",
    "mma",
    "mov",
    "movmatrix",
    "mul",
    "mul24",
    "multimem",
    "nanosleep",
    "neg",
    "not",
    "or",
    "pmevent",
    "popc",
    "prefetch",
    "prefetchu",
    "prmt",
    "rcp",
    "red",
    "redux",
    "rem",
    "ret",
    "rsqrt",
    "sad",
    "selp",
    "set",
    "setmaxnreg",
    "setp",
    "shf",
    "shfl",
    "shl",
    "shr",
    "sin",
    "slct",
    "sqrt",
    "st",
    "stackrestore",
    "stacksave",
    "stmatrix",
    "sub",
    "subc",
    "suld",
    "suq",
    "sured",
    "sust",
    "szext",
    "tanh",
    "tcgen05",
    "testp",
    "tex",
    "tld4",
    "trap",
    "txq",
    "vabsdiff",
    "vabsdiff2",
    "vabsdiff4",
    "vadd",
    "vadd2",
    "vadd4",
    "vavrg2",
    "vavrg4",
    "vmad",
    "vmax",
    "vmax2",
    "vmax4",
    "vmin",
    "vmin2",
    "vmin4",
    "vote",
    "vset",
    "vset2",
    "vset4",
    "vshl",
    "vshr",
    "vsub",
    "vsub2",
    "vsub4",
    "wgmma",
    "wmma",
    "xor",
];

/// Tracks which modifier words of one instruction have been claimed by a slot.
struct Mods<'a> {
    opcode: &'a str,
    mods: &'a [Modifier],
    used: Vec<bool>,
    diags: Vec<Diag>,
}

impl<'a> Mods<'a> {
    fn new(opcode: &'a str, mods: &'a [Modifier]) -> Self {
        Mods { opcode, mods, used: vec![false; mods.len()], diags: vec![] }
    }

    /// Claims the words `parse` recognises. More than one is a duplicate (same word) or a
    /// conflict (`what` names the slot, e.g. "state space").
    fn one<T: Copy>(&mut self, what: &str, parse: impl Fn(&str) -> Option<T>) -> Option<(T, Span)> {
        let mut found: Option<(T, &Modifier)> = None;
        for (m, used) in self.mods.iter().zip(self.used.iter_mut()) {
            if *used {
                continue;
            }
            let Some(v) = parse(&m.text) else { continue };
            *used = true;
            match found {
                None => found = Some((v, m)),
                Some((_, f)) => {
                    let d = if f.text == m.text {
                        Diag::error(m.span, format!("duplicate modifier `{}` on `{}`", m.text, self.opcode))
                            .label("given again here")
                            .with_secondary(f.span, "first given here")
                    } else {
                        Diag::error(m.span, format!("`{}` conflicts with `{}` on `{}`", m.text, f.text, self.opcode))
                            .label(format!("a second {what}"))
                            .with_secondary(f.span, format!("{what} already given here"))
                            .note(format!("an `{}` takes at most one {what}", self.opcode))
                    };
                    self.diags.push(d);
                }
            }
        }
        found.map(|(v, m)| (v, m.span))
    }

    /// Claims one of the listed words, returning its index in `words`.
    fn word(&mut self, what: &str, words: &[&str]) -> Option<(usize, Span)> {
        self.one(what, |s| words.iter().position(|w| *w == s))
    }

    /// Claims a flag word such as `.ftz`.
    fn flag(&mut self, word: &str) -> bool {
        self.one(word, |s| (s == word).then_some(())).is_some()
    }

    /// Claims every unclaimed word in `words` and reports it as misplaced, with `why` (the
    /// rule it breaks).
    fn misplaced(&mut self, words: &[&str], why: impl Fn(&str) -> String) {
        for (m, used) in self.mods.iter().zip(self.used.iter_mut()) {
            if !*used && words.contains(&m.text.as_str()) {
                *used = true;
                self.diags.push(
                    Diag::error(m.span, format!("`{}` is not allowed on `{}`", m.text, self.opcode))
                        .label("not a modifier of this instruction")
                        .note(why(&m.text)),
                );
            }
        }
    }

    /// Claims every type word, in source order (for `cvt`, whose two types are ordered).
    fn types(&mut self) -> Vec<(ScalarType, Span)> {
        let mut out = vec![];
        for (m, used) in self.mods.iter().zip(self.used.iter_mut()) {
            if !*used && let Some(t) = ScalarType::from_dot(&m.text) {
                *used = true;
                out.push((t, m.span));
            }
        }
        out
    }

    /// Claims exactly one type word; a missing type is an error at `at`.
    fn ty(&mut self, at: Span) -> Option<ScalarType> {
        let t = self.one("type", ScalarType::from_dot);
        if t.is_none() {
            self.diags.push(
                Diag::error(at, format!("`{}` needs a type", self.opcode))
                    .label("no type modifier")
                    .note("add one of `.b32`, `.u32`, `.s32`, `.f32`, `.b64`, ... (PTX ISA 5.2.1)"),
            );
        }
        t.map(|t| t.0)
    }

    /// Reports every unclaimed word and returns all diagnostics.
    fn finish(mut self) -> Vec<Diag> {
        for (m, used) in self.mods.iter().zip(&self.used) {
            if !*used {
                self.diags.push(
                    Diag::error(m.span, format!("unknown modifier `{}` for `{}`", m.text, self.opcode))
                        .label("not a modifier of this instruction"),
                );
            }
        }
        self.diags
    }
}

fn rounding(s: &str) -> Option<Rounding> {
    use Rounding::*;
    Some(match s {
        ".rn" => Rn,
        ".rna" => Rna,
        ".rz" => Rz,
        ".rm" => Rm,
        ".rp" => Rp,
        ".rni" => Rni,
        ".rzi" => Rzi,
        ".rmi" => Rmi,
        ".rpi" => Rpi,
        _ => return None,
    })
}

fn int_mode(s: &str) -> Option<IntMode> {
    Some(match s {
        ".lo" => IntMode::Lo,
        ".hi" => IntMode::Hi,
        ".wide" => IntMode::Wide,
        _ => return None,
    })
}

fn scope(s: &str) -> Option<Scope> {
    Some(match s {
        ".cta" => Scope::Cta,
        ".cluster" => Scope::Cluster,
        ".gpu" => Scope::Gpu,
        ".sys" => Scope::Sys,
        _ => return None,
    })
}

/// The state spaces an `ld`/`st` may name (PTX ISA 9.7.9.8 `.ss`).
fn ldst_space(s: &str) -> Option<StateSpace> {
    StateSpace::from_dot(s).filter(|sp| *sp != StateSpace::Reg)
}

fn classify_ldst(m: &mut Mods, is_ld: bool, at: Span) -> Option<LdSt> {
    let space = m.one("state space", ldst_space).map(|s| s.0);
    let sem = if is_ld {
        m.one("memory-consistency qualifier", |s| match s {
            ".weak" => Some(MemSem::Weak),
            ".volatile" => Some(MemSem::Volatile),
            ".relaxed" => Some(MemSem::Relaxed),
            ".acquire" => Some(MemSem::Acquire),
            _ => None,
        })
    } else {
        m.one("memory-consistency qualifier", |s| match s {
            ".weak" => Some(MemSem::Weak),
            ".volatile" => Some(MemSem::Volatile),
            ".relaxed" => Some(MemSem::Relaxed),
            ".release" => Some(MemSem::Release),
            _ => None,
        })
    }
    .map(|s| s.0);
    let scope = m.one("scope", scope).map(|s| s.0);
    let mmio = m.flag(".mmio");
    let cop = if is_ld {
        m.one("cache operator", |s| match s {
            ".ca" => Some(CacheOp::Ca),
            ".cg" => Some(CacheOp::Cg),
            ".cs" => Some(CacheOp::Cs),
            ".lu" => Some(CacheOp::Lu),
            ".cv" => Some(CacheOp::Cv),
            _ => None,
        })
    } else {
        m.one("cache operator", |s| match s {
            ".wb" => Some(CacheOp::Wb),
            ".cg" => Some(CacheOp::Cg),
            ".cs" => Some(CacheOp::Cs),
            ".wt" => Some(CacheOp::Wt),
            _ => None,
        })
    }
    .map(|c| c.0);
    let nc = is_ld && m.flag(".nc");
    if is_ld {
        m.misplaced(&[".wb", ".wt"], |w| {
            format!("`{w}` is a store cache operator; `ld` takes `.ca`, `.cg`, `.cs`, `.lu`, `.cv` (PTX ISA 9.7.9.8)")
        });
    } else {
        m.misplaced(&[".ca", ".lu", ".cv", ".nc"], |w| {
            format!(
                "`{w}` applies to loads only; `st` takes the cache operators `.wb`, `.cg`, `.cs`, `.wt` (PTX ISA 9.7.9.10)"
            )
        });
    }
    let l1_evict = m
        .one("L1 eviction priority", |s| match s {
            ".L1::evict_normal" => Some(L1Evict::Normal),
            ".L1::evict_unchanged" => Some(L1Evict::Unchanged),
            ".L1::evict_first" => Some(L1Evict::First),
            ".L1::evict_last" => Some(L1Evict::Last),
            ".L1::no_allocate" => Some(L1Evict::NoAllocate),
            _ => None,
        })
        .map(|e| e.0);
    let l2_evict = m
        .one("L2 eviction priority", |s| match s {
            ".L2::evict_normal" => Some(L2Evict::Normal),
            ".L2::evict_first" => Some(L2Evict::First),
            ".L2::evict_last" => Some(L2Evict::Last),
            _ => None,
        })
        .map(|e| e.0);
    let cache_hint = m.flag(".L2::cache_hint");
    let prefetch = if is_ld {
        m.one("prefetch size", |s| match s {
            ".L2::64B" => Some(PrefetchSize::B64),
            ".L2::128B" => Some(PrefetchSize::B128),
            ".L2::256B" => Some(PrefetchSize::B256),
            _ => None,
        })
        .map(|p| p.0)
    } else {
        None
    };
    let vec = m
        .one("vector width", |s| match s {
            ".v2" => Some(2),
            ".v4" => Some(4),
            ".v8" => Some(8),
            _ => None,
        })
        .map(|v| v.0);
    let ty = m.ty(at)?;
    Some(LdSt { space, sem, scope, mmio, cop, nc, l1_evict, l2_evict, cache_hint, prefetch, vec, ty })
}

fn arith(m: &mut Mods, op: ArithOp, at: Span) -> Option<InstrKind> {
    let mode = match op {
        ArithOp::Mul | ArithOp::Mad | ArithOp::Madc | ArithOp::Mul24 | ArithOp::Mad24 => {
            m.one("multiply mode", int_mode).map(|x| x.0)
        }
        _ => None,
    };
    let rnd = match op {
        ArithOp::Add | ArithOp::Sub | ArithOp::Mul | ArithOp::Mad | ArithOp::Fma | ArithOp::Div => {
            m.one("rounding modifier", rounding).map(|x| x.0)
        }
        _ => None,
    };
    let approx = op == ArithOp::Div && (m.flag(".approx") | m.flag(".full"));
    let ftz = m.flag(".ftz");
    let sat = m.flag(".sat");
    let cc = matches!(op, ArithOp::Add | ArithOp::Sub | ArithOp::Mad | ArithOp::Addc | ArithOp::Subc | ArithOp::Madc)
        && m.flag(".cc");
    let ty = m.ty(at)?;
    Some(InstrKind::Arith(Arith { op, ty, mode, rnd, ftz, sat, cc, approx }))
}

/// Fills `instr.kind` from its opcode and modifiers; returns the diagnostics (empty when
/// the instruction is well formed). An unknown opcode is an error naming it.
pub fn classify(instr: &mut Instruction) -> Vec<Diag> {
    let op = instr.opcode.name.as_str();
    let at = instr.opcode.span;
    let mut m = Mods::new(op, &instr.mods);
    let kind = match op {
        "ld" => classify_ldst(&mut m, true, at).map(InstrKind::Ld),
        // `ldu{.global}` (PTX ISA 9.7.9.11) reads like `ld`: ptxas 11.8 emits a plain
        // `LDG.E` (`ldu.global.u32` → `LDG.E`, `ldu.global.v2.f32` → `LDG.E.64`).
        "ldu" => classify_ldst(&mut m, true, at).and_then(|l| {
            if matches!(l.space, None | Some(crate::ptx::types::StateSpace::Global)) {
                Some(InstrKind::Ld(l))
            } else {
                m.diags.push(Diag::error(at, "`ldu` reads `.global` or generic addresses only (PTX ISA 9.7.9.11)"));
                None
            }
        }),
        "st" => classify_ldst(&mut m, false, at).map(InstrKind::St),
        "mov" => m.ty(at).map(InstrKind::Mov),
        "selp" => m.ty(at).map(InstrKind::Selp),
        "add" => arith(&mut m, ArithOp::Add, at),
        "sub" => arith(&mut m, ArithOp::Sub, at),
        "mul" => arith(&mut m, ArithOp::Mul, at),
        "mad" => arith(&mut m, ArithOp::Mad, at),
        "fma" => arith(&mut m, ArithOp::Fma, at),
        "div" => arith(&mut m, ArithOp::Div, at),
        "rem" => arith(&mut m, ArithOp::Rem, at),
        "min" => arith(&mut m, ArithOp::Min, at),
        "max" => arith(&mut m, ArithOp::Max, at),
        "neg" => arith(&mut m, ArithOp::Neg, at),
        "abs" => arith(&mut m, ArithOp::Abs, at),
        "not" => arith(&mut m, ArithOp::Not, at),
        "cnot" => arith(&mut m, ArithOp::Cnot, at),
        "and" => arith(&mut m, ArithOp::And, at),
        "or" => arith(&mut m, ArithOp::Or, at),
        "xor" => arith(&mut m, ArithOp::Xor, at),
        "shl" => arith(&mut m, ArithOp::Shl, at),
        "shr" => arith(&mut m, ArithOp::Shr, at),
        "addc" => arith(&mut m, ArithOp::Addc, at),
        "subc" => arith(&mut m, ArithOp::Subc, at),
        "madc" => arith(&mut m, ArithOp::Madc, at),
        "mul24" => arith(&mut m, ArithOp::Mul24, at),
        "mad24" => arith(&mut m, ArithOp::Mad24, at),
        "sad" => arith(&mut m, ArithOp::Sad, at),
        "popc" | "clz" | "brev" | "bfind" | "bfe" | "bfi" => {
            let op = match op {
                "popc" => BitOp::Popc,
                "clz" => BitOp::Clz,
                "brev" => BitOp::Brev,
                "bfind" => BitOp::Bfind { shiftamt: m.flag(".shiftamt") },
                "bfe" => BitOp::Bfe,
                _ => BitOp::Bfi,
            };
            m.ty(at).map(|ty| InstrKind::Bit { op, ty })
        }
        "prmt" => {
            let mode = m.word("permute mode", &[".f4e", ".b4e", ".rc8", ".ecl", ".ecr", ".rc16"]).and_then(|(k, _)| {
                [PrmtMode::F4e, PrmtMode::B4e, PrmtMode::Rc8, PrmtMode::Ecl, PrmtMode::Ecr, PrmtMode::Rc16]
                    .get(k)
                    .copied()
            });
            m.ty(at).map(|_| InstrKind::Prmt(mode))
        }
        "shf" => {
            let dir = m.word("shift direction", &[".l", ".r"]);
            let how = m.word("shift mode", &[".wrap", ".clamp"]);
            let ty = m.ty(at);
            if dir.is_none() || how.is_none() {
                m.diags.push(
                    Diag::error(at, "`shf` needs a direction and a mode")
                        .note("write `shf.l.wrap.b32`, `shf.r.clamp.b32`, ... (PTX ISA 9.7.7.9)"),
                );
            }
            match (dir, how, ty) {
                (Some((d, _)), Some((h, _)), Some(_)) => Some(InstrKind::Shf { left: d == 0, clamp: h == 1 }),
                _ => None,
            }
        }
        "testp" => {
            let what = m.word("test", &[".finite", ".infinite", ".number", ".notanumber", ".normal", ".subnormal"]);
            let ty = m.ty(at);
            if what.is_none() {
                m.diags.push(
                    Diag::error(at, "`testp` needs a test").note(
                        "add one of `.finite .infinite .number .notanumber .normal .subnormal` (PTX ISA 9.7.3.7)",
                    ),
                );
            }
            let ops = [
                TestpOp::Finite,
                TestpOp::Infinite,
                TestpOp::Number,
                TestpOp::NotANumber,
                TestpOp::Normal,
                TestpOp::Subnormal,
            ];
            match (what, ty) {
                (Some((k, _)), Some(ty)) => ops.get(k).map(|&op| InstrKind::Testp { op, ty }),
                _ => None,
            }
        }
        "copysign" => m.ty(at).map(InstrKind::Copysign),
        "setp" => {
            let cmp = m.one("comparison", CmpOp::from_modifier);
            let bool_op = m
                .one("boolean operation", |s| match s {
                    ".and" => Some(BoolOp::And),
                    ".or" => Some(BoolOp::Or),
                    ".xor" => Some(BoolOp::Xor),
                    _ => None,
                })
                .map(|b| b.0);
            let ftz = m.flag(".ftz");
            let ty = m.ty(at);
            if cmp.is_none() {
                m.diags.push(
                    Diag::error(at, "`setp` needs a comparison")
                        .label("no comparison modifier")
                        .note("add one of `.eq .ne .lt .le .gt .ge .lo .ls .hi .hs` (PTX ISA 9.7.8.6.1)"),
                );
            }
            match (cmp, ty) {
                (Some((cmp, _)), Some(ty)) => Some(InstrKind::Setp(Setp { cmp, bool_op, ftz, ty })),
                _ => None,
            }
        }
        "cvt" => {
            let rnd = m.one("rounding modifier", rounding).map(|x| x.0);
            let ftz = m.flag(".ftz");
            let sat = m.flag(".sat");
            let types = m.types();
            if let [(dst, _), (src, _)] = types[..] {
                Some(InstrKind::Cvt(Cvt { dst, src, rnd, ftz, sat }))
            } else {
                let span = types.get(2).map_or(at, |t| t.1);
                m.diags.push(
                    Diag::error(span, format!("`cvt` needs exactly two types, found {}", types.len()))
                        .note("write `cvt.dtype.atype`, destination type first (PTX ISA 9.7.9.21)"),
                );
                None
            }
        }
        "cvta" => {
            let to = m.flag(".to");
            let space = m.one("state space", |s| {
                StateSpace::from_dot(s).filter(|sp| !matches!(sp, StateSpace::Reg | StateSpace::Param(_)))
            });
            let ty = m.ty(at);
            if space.is_none() {
                m.diags.push(
                    Diag::error(at, "`cvta` needs a state space")
                        .note("write `cvta{.to}.global|.shared|.local|.const.u64` (PTX ISA 9.7.9.19)"),
                );
            }
            match (space, ty) {
                (Some((space, _)), Some(ty)) => Some(InstrKind::Cvta(Cvta { to, space, ty })),
                _ => None,
            }
        }
        "bra" => Some(InstrKind::Bra { uni: m.flag(".uni") }),
        "ret" => {
            m.flag(".uni");
            Some(InstrKind::Ret)
        }
        "exit" => Some(InstrKind::Exit),
        "call" => {
            m.flag(".uni");
            Some(InstrKind::Call)
        }
        "bar" if m.flag(".warp") => {
            // `bar.warp.sync membermask` (PTX ISA 9.7.13.1).
            if m.word("barrier operation", &[".sync"]).is_none() {
                m.diags.push(Diag::error(at, "`bar.warp` needs `.sync`: `bar.warp.sync membermask`"));
            }
            Some(InstrKind::Bar(BarOp::WarpSync))
        }
        "bar" | "barrier" => {
            m.flag(".cta");
            m.flag(".aligned");
            let what = m.word("barrier operation", &[".sync", ".arrive", ".red"]);
            match what {
                Some((0, _)) => Some(InstrKind::Bar(BarOp::Sync)),
                Some((1, _)) => Some(InstrKind::Bar(BarOp::Arrive)),
                Some(_) => {
                    // `bar.red.popc.u32` / `.and.pred` / `.or.pred`: keep the rest as known words.
                    m.word("reduction", &[".popc", ".and", ".or"]);
                    m.types();
                    Some(InstrKind::Bar(BarOp::Red))
                }
                None => {
                    m.diags.push(Diag::error(at, format!("`{op}` needs `.sync`, `.arrive` or `.red`")));
                    None
                }
            }
        }
        "membar" => match m.word("level", &[".cta", ".gl", ".sys"]) {
            Some((0, _)) => Some(InstrKind::Membar(MembarLevel::Cta)),
            Some((1, _)) => Some(InstrKind::Membar(MembarLevel::Gl)),
            Some(_) => Some(InstrKind::Membar(MembarLevel::Sys)),
            None => {
                m.diags.push(Diag::error(at, "`membar` needs `.cta`, `.gl` or `.sys`"));
                None
            }
        },
        // Texture and surface instructions (issue 18): checked by `ptx::texture`, kept as
        // `Other` for lowering, which decodes them again.
        _ if super::texture::OPCODES.contains(&op) => {
            m.used.iter_mut().for_each(|u| *u = true);
            match super::texture::decode(instr) {
                Ok(_) => Some(InstrKind::Other(op.to_string())),
                Err(d) => {
                    m.diags.extend(d);
                    None
                }
            }
        }
        _ if PTX_OPCODES.contains(&op) => {
            // Known but not modelled: keep every modifier; lowering names the opcode.
            m.used.iter_mut().for_each(|u| *u = true);
            Some(InstrKind::Other(op.to_string()))
        }
        _ => {
            let mut d = Diag::error(at, format!("unknown opcode `{op}`")).label("not a PTX instruction");
            if let Some(s) = closest(op, PTX_OPCODES) {
                d = d.note(format!("did you mean `{s}`?"));
            }
            return vec![d];
        }
    };
    let diags = m.finish();
    instr.kind = if diags.is_empty() { kind.unwrap_or_default() } else { InstrKind::Unclassified };
    diags
}

/// The closest candidate, if within edit distance 1 (2 for words of 6 or more letters).
fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    // Levenshtein distance, row by row: `prev[j]` is the distance between the first `i`
    // characters of `a` and the first `j` of `b` (counts bounded by the word lengths).
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in (1usize..).zip(a.chars()) {
            let mut cur = vec![i];
            for ((cb, diag), up) in b.iter().zip(&prev).zip(prev.iter().skip(1)) {
                let left = cur.last().copied().unwrap_or(i);
                let d =
                    diag.saturating_add(usize::from(ca != *cb)).min(up.saturating_add(1)).min(left.saturating_add(1));
                cur.push(d);
            }
            prev = cur;
        }
        prev.last().copied().unwrap_or(0)
    }
    let limit = if word.chars().count() >= 6 { 2 } else { 1 };
    candidates.iter().map(|c| (dist(word, c), *c)).filter(|(d, _)| *d <= limit).min().map(|(_, c)| c)
}
