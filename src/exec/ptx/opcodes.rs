//! Instructions the front end keeps as [`crate::ptx::instr::InstrKind::Other`] (opcode and
//! raw modifier words), decoded here from their PTX ISA syntax: `lop3 rcp sqrt rsqrt sin
//! cos lg2 ex2 tanh set slct isspacep atom red shfl vote activemask`, and the no-ops
//! `fence nanosleep prefetch prefetchu brkpt pmevent`. Anything else is an error naming
//! the instruction.

// Instructions come from the user's PTX (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::arith::fp::{self, Mods, Unary};
use super::compile::{FnCx, space_of};
use super::program::{Func, Op, Space};
use crate::ptx::ast::Instruction;
use crate::ptx::instr::{BoolOp, CmpOp, Rounding};
use crate::ptx::types::{ScalarType, StateSpace};

fn rounding(w: &str) -> Option<Rounding> {
    Some(match w {
        ".rn" => Rounding::Rn,
        ".rna" => Rounding::Rna,
        ".rz" => Rounding::Rz,
        ".rm" => Rounding::Rm,
        ".rp" => Rounding::Rp,
        _ => return None,
    })
}

/// Decodes an `Other` instruction `name` of `fx`'s function.
pub(super) fn other(fx: &mut FnCx, i: &Instruction, name: &str, text: &str) -> Result<Op, String> {
    let words: Vec<&str> = i.mods.iter().map(|m| m.text.as_str()).collect();
    let has = |w: &str| words.contains(&w);
    let types: Vec<ScalarType> = words.iter().filter_map(|w| ScalarType::from_dot(w)).collect();
    let ty = || types.first().copied().ok_or_else(|| format!("{text} has no type"));
    let ftz = has(".ftz");
    let rnd = words.iter().find_map(|w| rounding(w));
    use ScalarType::{B32, Pred};
    match name {
        "lop3" if i.operands.len() == 5 => fx_compute(fx, Func::Lop3, B32, B32, i, &[B32, B32, B32, B32]),
        "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => {
            let t = ty()?;
            if fp::format(t).is_none() {
                return Err(format!("{t} operands"));
            }
            let op = match name {
                "rcp" => Unary::Rcp,
                "sqrt" => Unary::Sqrt,
                "rsqrt" => Unary::Rsqrt,
                "sin" => Unary::Sin,
                "cos" => Unary::Cos,
                "lg2" => Unary::Lg2,
                "ex2" => Unary::Ex2,
                _ => Unary::Tanh,
            };
            let approx = !matches!(op, Unary::Rcp | Unary::Sqrt) || has(".approx") || rnd.is_none();
            let mods = Mods { mode: fp::mode(rnd), ftz, sat: false };
            fx_compute(fx, Func::FUnary(op, approx, mods), t, t, i, &[t])
        }
        "set" => {
            let cmp = words.iter().find_map(|w| CmpOp::from_modifier(w)).ok_or("set without a comparison")?;
            let bool_op = if has(".and") {
                Some(BoolOp::And)
            } else if has(".or") {
                Some(BoolOp::Or)
            } else if has(".xor") {
                Some(BoolOp::Xor)
            } else {
                None
            };
            let [d, s] = types[..] else { return Err("set needs two types".into()) };
            let f = Func::Set { cmp, bool_op, ftz, src: s };
            if bool_op.is_some() {
                fx_compute(fx, f, d, d, i, &[s, s, Pred])
            } else {
                fx_compute(fx, f, d, d, i, &[s, s])
            }
        }
        "slct" => {
            let [d, c] = types[..] else { return Err("slct needs two types".into()) };
            fx_compute(fx, Func::Slct(c, ftz), d, d, i, &[d, d, c])
        }
        "isspacep" => {
            let space = words
                .iter()
                .find_map(|w| StateSpace::from_dot(w))
                .map(|s| space_of(Some(s)))
                .transpose()?
                .ok_or("isspacep without a space")?;
            if !matches!(space, Space::Global | Space::Shared | Space::Local | Space::Const) {
                return Err(format!("isspacep.{}", space.name()));
            }
            let dst = fx.dst(i.operands.first().ok_or("missing operand")?)?;
            let src = fx.src(i.operands.get(1).ok_or("missing operand")?, ScalarType::U64)?;
            Ok(Op::Isspacep { space, dst, src })
        }
        "atom" | "red" => atom(fx, i, name == "atom", &words, &types),
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" => {
            let vop: &'static str = match name {
                "vadd" => "vadd",
                "vsub" => "vsub",
                "vabsdiff" => "vabsdiff",
                "vmin" => "vmin",
                "vmax" => "vmax",
                "vshl" => "vshl",
                _ => "vshr",
            };
            let signs: Vec<bool> = types.iter().map(|t| *t == ScalarType::S32).collect();
            let [d, a, b] = signs[..] else { return Err(format!("{text}: expected three types")) };
            if types.iter().any(|t| !matches!(t, ScalarType::U32 | ScalarType::S32)) {
                return Err(format!("{text}: video types other than .u32/.s32"));
            }
            let op2 = [".add", ".min", ".max"].into_iter().find(|w| has(w)).map(|w| &w[1..]);
            let u = ScalarType::U32;
            let f = Func::Video { vop, signed: [d, a, b], sat: has(".sat"), op2, clamp: has(".clamp") };
            match (op2, i.operands.len()) {
                (Some(_), 4) => fx_compute(fx, f, u, u, i, &[u, u, u]),
                (None, 3) => fx_compute(fx, f, u, u, i, &[u, u]),
                _ => Err(format!("{text}: operand selectors and merges are not modelled")),
            }
        }
        "shfl" | "vote" | "activemask" => super::warp::decode(fx, i, name, &words).map(Op::Warp),
        "fence" | "nanosleep" | "prefetch" | "prefetchu" | "brkpt" | "pmevent" => Ok(Op::Nop),
        "trap" => Ok(Op::Trap),
        "tex" | "tld4" | "txq" | "suq" | "suld" | "sust" | "sured" => {
            super::tex::decode(fx, i).map(|t| Op::Tex(Box::new(t)))
        }
        _ => Err(format!("{text} is not modelled by the PTX interpreter")),
    }
}

/// `atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}` and `red{.sem}{.scope}{.space}.op.type
/// [a], b` (PTX ISA 9.7.13.5, 9.7.13.6); memory-order and scope qualifiers do not change
/// single-thread semantics and are ignored.
fn atom(fx: &mut FnCx, i: &Instruction, is_atom: bool, words: &[&str], types: &[ScalarType]) -> Result<Op, String> {
    use super::program::AtomOp::*;
    if words.iter().any(|w| w.starts_with(".v") || w.starts_with(".L2") || *w == ".mmio") {
        return Err("vector atomics, cache hints and .mmio".into());
    }
    let op = words
        .iter()
        .find_map(|w| {
            Some(match *w {
                ".and" => And,
                ".or" => Or,
                ".xor" => Xor,
                ".exch" => Exch,
                ".cas" => Cas,
                ".add" => Add,
                ".inc" => Inc,
                ".dec" => Dec,
                ".min" => Min,
                ".max" => Max,
                _ => return None,
            })
        })
        .ok_or("no atomic operation")?;
    let [ty] = types[..] else { return Err("expected exactly one type".into()) };
    let ok_ty = match ty {
        ScalarType::F32 | ScalarType::F64 => op == Add || op == Exch || op == Cas,
        t => t.is_integer() && (t.bits() == 32 || t.bits() == 64),
    };
    if !ok_ty {
        return Err(format!("{ty} operands"));
    }
    let space = space_of(words.iter().find_map(|w| StateSpace::from_dot(w)))?;
    if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
        return Err(format!("atomics on the .{} space", space.name()));
    }
    let ops = &i.operands;
    let (dst, rest) = if is_atom {
        let (d, rest) = ops.split_first().ok_or("missing destination")?;
        (fx.dst(d)?, rest)
    } else {
        (None, ops.as_slice())
    };
    let addr = fx.addr(rest.first().ok_or("missing address")?, space)?;
    let b = fx.src(rest.get(1).ok_or("missing operand")?, ty)?;
    let c = match (op, rest.get(2)) {
        (Cas, Some(c)) => Some(fx.src(c, ty)?),
        (Cas, None) => return Err("cas needs a third operand".into()),
        (_, None) => None,
        (_, Some(_)) => return Err("too many operands".into()),
    };
    Ok(Op::Atom { space, op, ty, dst, addr, b, c })
}

fn fx_compute(
    fx: &FnCx,
    func: Func,
    ty: ScalarType,
    dst_ty: ScalarType,
    i: &Instruction,
    tys: &[ScalarType],
) -> Result<Op, String> {
    let (dst, ops) = i.operands.split_first().ok_or("missing destination")?;
    let dst = fx.dst(dst)?;
    let mut srcs = vec![];
    for (k, t) in tys.iter().enumerate() {
        // Operand `k + 2` in the message counts from 1 with the destination.
        let op = ops.get(k).ok_or_else(|| format!("missing operand {}", k.saturating_add(2)))?;
        srcs.push((fx.src(op, *t)?, *t));
    }
    Ok(Op::Compute { func, ty, dst, dst_ty, srcs })
}
