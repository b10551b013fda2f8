//! The operand shapes of the instructions `ptx::check` models, and the rules relating a
//! register's declared type to an instruction type (PTX ISA 6.4.1 "Type checking rules",
//! "Operand Size Exceeding Instruction-Type Size").

use super::instr::*;
use super::types::ScalarType;

/// The opcodes that take half-precision instruction types (PTX ISA 9.7.4 "Half Precision
/// Floating-Point Instructions", `cvt` 9.7.9.21, `atom`/`red` 9.7.13.5-6, and the matrix
/// instructions, which need newer targets).
pub(super) const HALF_OPCODES: &[&str] = &[
    "add",
    "sub",
    "mul",
    "fma",
    "neg",
    "abs",
    "min",
    "max",
    "setp",
    "set",
    "ex2",
    "tanh",
    "cvt",
    "atom",
    "red",
    "mma",
    "wmma",
    "ldmatrix",
    "stmatrix",
    "movmatrix",
    "cp",
];

/// How an operand's register must relate to the instruction type.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Width {
    /// Exactly this many bits, any kind.
    Exact(u32),
    /// A register whose type is compatible with this instruction type (PTX ISA 6.4.1
    /// "Type checking rules"): the same size, and a `.bN` instruction type takes any
    /// register, `.uN`/`.sN` take `.b`/`.u`/`.s` registers, `.fN` takes `.b`/`.f` ones
    /// (ptxas 11.8: `add.f32` of a `.u32` register and `add.u32` of an `.f32` one are
    /// "Arguments mismatch", `add.u32` of an `.s32` one is fine). With `true`, the relaxed
    /// rule of `ld`, `st` and `cvt` ("Operand Size Exceeding Instruction-Type Size") also
    /// lets a `.b`/`.u`/`.s` register be wider than the type, whose value it extends or
    /// chops (ptxas 11.8 accepts `cvt.s64.s32 %rd, %rd2` of a `.u64` source, reading its
    /// low word, and `ld.global.f32` into a `.b64` register, zeroing the high word, but
    /// not into a `.u64` one).
    Typed(ScalarType, bool),
}

/// Whether a register of type `reg` may be an operand of instruction type `inst` (see
/// [`Width::Typed`]).
pub(super) fn compatible(inst: ScalarType, reg: ScalarType, relaxed: bool) -> bool {
    use super::types::TypeKind::*;
    let kinds = match (inst.kind(), reg.kind()) {
        (Pred, _) | (_, Pred) => false,
        (Bits, _) | (_, Bits) => true,
        (Unsigned | Signed, Unsigned | Signed) => true,
        (Float, Float) => true,
        _ => false,
    };
    let size = reg.bits() == inst.bits()
        || (relaxed && reg.bits() > inst.bits() && reg.kind() != Float && (reg.kind() == Bits || inst.kind() != Float));
    kinds && size
}

/// The shape an operand must have.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(super) enum Shape {
    /// A destination register.
    Dst(Width),
    /// A source: register, immediate, special register, or variable address.
    Src(Width),
    /// A predicate destination (or `%p|%q` pair).
    PredDst,
    /// A predicate source, possibly `!%p`.
    PredSrc,
    /// A vector destination of `n` elements (or a scalar register of the whole width).
    VecDst(u32, Width),
    /// A vector source of `n` elements.
    VecSrc(u32, Width),
    /// A memory address `[...]`.
    Addr,
    /// A label.
    Label,
}

/// The register rule of an operand of instruction type `ty`: [`Width::Typed`], relaxed
/// (wider registers) for the data of `ld`/`st`/`cvt`.
pub(super) fn width_for(ty: ScalarType, relaxed: bool) -> Width {
    Width::Typed(ty, relaxed)
}

/// The register rule of a vector element of `ld`/`st`: sub-word integer elements may sit
/// in wider registers (clang's `ld.v4.u8 {%rs1, ...}` of 16-bit registers), others not.
pub(super) fn vector_ldst_width(ty: ScalarType) -> Width {
    Width::Typed(ty, ty.is_integer() && ty.bits() < 32)
}

/// The operand shapes of a modelled instruction; `None` for kinds checked elsewhere.
pub(super) fn shapes(kind: &InstrKind) -> Option<Vec<Shape>> {
    use Shape::*;
    let reg = |ty: ScalarType| {
        if ty == ScalarType::Pred { (PredDst, PredSrc) } else { (Dst(width_for(ty, false)), Src(width_for(ty, false))) }
    };
    Some(match kind {
        InstrKind::Ld(l) => {
            let d = match l.vec {
                Some(n) => VecDst(n, vector_ldst_width(l.ty)),
                None => Dst(width_for(l.ty, true)),
            };
            let mut v = vec![d, Addr];
            if l.cache_hint {
                v.push(Src(Width::Exact(64)));
            }
            v
        }
        InstrKind::St(l) => {
            let s = match l.vec {
                Some(n) => VecSrc(n, vector_ldst_width(l.ty)),
                None => Src(width_for(l.ty, true)),
            };
            let mut v = vec![Addr, s];
            if l.cache_hint {
                v.push(Src(Width::Exact(64)));
            }
            v
        }
        InstrKind::Mov(ty) => {
            let (d, s) = reg(*ty);
            vec![d, s]
        }
        InstrKind::Cvta(c) => vec![Dst(Width::Exact(c.ty.bits())), Src(Width::Exact(c.ty.bits()))],
        // A float destination is written whole (no relaxed wider register for it).
        InstrKind::Cvt(c) => vec![Dst(width_for(c.dst, c.dst.is_integer())), Src(width_for(c.src, true))],
        InstrKind::Selp(ty) => {
            let (d, s) = reg(*ty);
            vec![d, s, s, PredSrc]
        }
        InstrKind::Setp(s) => {
            let (_, src) = reg(s.ty);
            let mut v = vec![PredDst, src, src];
            if s.bool_op.is_some() {
                v.push(PredSrc);
            }
            v
        }
        InstrKind::Arith(a) => {
            let (d, s) = reg(a.ty);
            // At most 64 bits doubled.
            let wide = |ty: ScalarType| Dst(Width::Exact(ty.bits().saturating_mul(2)));
            match a.op {
                ArithOp::Mul if a.mode == Some(IntMode::Wide) => vec![wide(a.ty), s, s],
                ArithOp::Mad if a.mode == Some(IntMode::Wide) => {
                    vec![wide(a.ty), s, s, Src(Width::Exact(a.ty.bits().saturating_mul(2)))]
                }
                ArithOp::Mad | ArithOp::Fma | ArithOp::Madc | ArithOp::Mad24 | ArithOp::Sad => vec![d, s, s, s],
                ArithOp::Neg | ArithOp::Abs | ArithOp::Not | ArithOp::Cnot => vec![d, s],
                ArithOp::Shl | ArithOp::Shr => vec![d, s, Src(Width::Exact(32))],
                _ => vec![d, s, s],
            }
        }
        InstrKind::Bit { op, ty } => {
            let (d, s) = reg(*ty);
            let u32 = Src(Width::Exact(32));
            match op {
                BitOp::Popc | BitOp::Clz | BitOp::Bfind { .. } => vec![Dst(Width::Exact(32)), s],
                BitOp::Brev => vec![d, s],
                BitOp::Bfe => vec![d, s, u32, u32],
                BitOp::Bfi => vec![d, s, s, u32, u32],
            }
        }
        InstrKind::Prmt(_) | InstrKind::Shf { .. } => {
            let (d, s) = reg(ScalarType::B32);
            vec![d, s, s, s]
        }
        InstrKind::Testp { ty, .. } => vec![PredDst, Src(width_for(*ty, false))],
        InstrKind::Copysign(ty) => {
            let (d, s) = reg(*ty);
            vec![d, s, s]
        }
        InstrKind::Bra { .. } => vec![Label],
        InstrKind::Ret | InstrKind::Exit => vec![],
        InstrKind::Membar(_) => vec![],
        InstrKind::Bar(BarOp::WarpSync) => vec![Src(Width::Exact(32))],
        _ => return None,
    })
}

/// The unsigned type of `bits` bits (the type of a special register).
pub(super) fn unsigned(bits: u32) -> ScalarType {
    match bits {
        8 => ScalarType::U8,
        16 => ScalarType::U16,
        64 => ScalarType::U64,
        _ => ScalarType::U32,
    }
}

/// Register rules for the operands of instructions `ptx::check` does not model as a typed
/// [`InstrKind`] (their counts come from `ptx::operands`): `Some(shape)` for an operand
/// whose register must match its instruction type, `None` for one checked only for
/// existence. `None` overall for opcodes without such a table here. Each rule follows the
/// instruction's syntax in the PTX ISA (chapter 9.7) and ptxas 11.8's "Arguments
/// mismatch" for a register of another size or kind (`rsqrt.approx.f32` of `.f64`
/// registers was accepted and reached lowering, which wrote a 32-bit result into a
/// 64-bit value: an internal error found by fuzzing `lower`; verdicts compared with
/// ptxas in `tests/operand_types.rs`). The operand count is checked first; a table for
/// another count is not applied.
pub(super) fn other_shapes(i: &super::ast::Instruction) -> Option<Vec<Option<Shape>>> {
    use Shape::*;
    let types: Vec<ScalarType> = i.mods.iter().filter_map(|m| ScalarType::from_dot(&m.text)).collect();
    let has = |w: &str| i.mods.iter().any(|m| m.text == w);
    let t = |k: usize| types.get(k).copied();
    let typed = |ty: ScalarType| Some(Src(width_for(ty, false)));
    let n = i.operands.len();
    let policy = |v: &mut Vec<Option<Shape>>| {
        if has(".L2::cache_hint") {
            v.push(Some(Src(Width::Exact(64))));
        }
    };
    let b32 = ScalarType::B32;
    Some(match i.opcode.name.as_str() {
        // PTX ISA 9.7.3.12-9.7.3.20, 9.7.4: `op.type d, a`.
        "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" if types.len() == 1 => {
            let ty = t(0)?;
            vec![Some(Dst(width_for(ty, false))), typed(ty)]
        }
        // 9.7.13.1 bar / barrier: the barrier id `a` and thread count `b` are 32-bit
        // (`bar{.cta}.sync a{, b}`, `bar.arrive a, b`, `bar.red.op d, a{, b}, {!}c`); ptxas
        // 11.8 rejects a 64-bit register there ("Arguments mismatch for instruction
        // 'bar'"). Found by fuzzing `exec`: `bar.sync %rd9, %rd10` reached the encoder.
        "bar" | "barrier" if !has(".warp") => {
            let w32 = Some(Src(Width::Exact(32)));
            match (has(".red"), n) {
                (false, 1) => vec![w32],
                (false, 2) => vec![w32, w32],
                (true, 3) => vec![None, w32, None],
                (true, 4) => vec![None, w32, w32, None],
                _ => return None,
            }
        }
        // 9.7.6.1 set: `set.CmpOp{.BoolOp}.dtype.stype d, a, b{, {!}c}`.
        "set" if types.len() == 2 => {
            let (d, s) = (t(0)?, t(1)?);
            let mut v = vec![Some(Dst(width_for(d, false))), typed(s), typed(s)];
            if n == 4 {
                v.push(Some(PredSrc));
            }
            v
        }
        // 9.7.6.3 slct: `slct.dtype.ctype d, a, b, c` (`c` is `.s32` or `.f32`).
        "slct" if types.len() == 2 => {
            let (d, c) = (t(0)?, t(1)?);
            vec![Some(Dst(width_for(d, false))), typed(d), typed(d), typed(c)]
        }
        // 9.7.8.6 lop3: `lop3.b32 d, a, b, c, immLut`.
        "lop3" if n == 5 => vec![Some(Dst(width_for(b32, false))), typed(b32), typed(b32), typed(b32), typed(b32)],
        // 9.7.13.5 atom: `atom{...}.op.type d, [a], b{, c}{, cache-policy}` (scalar types;
        // the vector forms of newer targets are not checked here).
        "atom" if types.len() == 1 && !i.mods.iter().any(|m| m.text.starts_with(".v")) => {
            let ty = t(0)?;
            let mut v = vec![Some(Dst(width_for(ty, false))), Some(Addr), typed(ty)];
            if has(".cas") {
                v.push(typed(ty));
            }
            policy(&mut v);
            v
        }
        // 9.7.13.6 red: `red{...}.op.type [a], b{, cache-policy}`.
        "red" if types.len() == 1 && !i.mods.iter().any(|m| m.text.starts_with(".v")) => {
            let ty = t(0)?;
            let mut v = vec![Some(Addr), typed(ty)];
            policy(&mut v);
            v
        }
        // 9.7.9.6 shfl: `shfl{.sync}.mode.b32 d{|p}, a, b, c{, membermask}` (a `d|p`
        // destination pair is checked for existence only).
        "shfl" => {
            let d = match i.operands.first() {
                Some(super::ast::Operand::PredPair(..)) => None,
                _ => Some(Dst(width_for(b32, false))),
            };
            let mut v = vec![d, typed(b32), typed(b32), typed(b32)];
            if has(".sync") {
                v.push(typed(b32));
            }
            v
        }
        // 9.7.13.9 vote: `vote{.sync}.ballot.b32 d, {!}a{, membermask}`,
        // `vote{.sync}.{all,any,uni}.pred d, {!}a{, membermask}`.
        "vote" => {
            let d = if has(".ballot") { Dst(width_for(b32, false)) } else { PredDst };
            let mut v = vec![Some(d), Some(PredSrc)];
            if has(".sync") {
                v.push(typed(b32));
            }
            v
        }
        // 9.7.13.13 activemask: `activemask.b32 d`.
        "activemask" => vec![Some(Dst(width_for(b32, false)))],
        // 9.7.1.23-24 dp4a, dp2a: `d, a, b, c`, all 32-bit.
        "dp4a" | "dp2a" => vec![
            Some(Dst(Width::Exact(32))),
            Some(Src(Width::Exact(32))),
            Some(Src(Width::Exact(32))),
            Some(Src(Width::Exact(32))),
        ],
        _ => return None,
    })
}
