//! PTX ISA vocabulary shared by the AST, the checks and lowering: fundamental types
//! (PTX ISA 5.2.1), state spaces (PTX ISA 5.1) and vector widths (PTX ISA 5.2.2).

use std::fmt;

/// A PTX fundamental type (PTX ISA 5.2.1 "Fundamental Types"), as written after a dot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum ScalarType {
    B8,
    B16,
    B32,
    B64,
    B128,
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    F16x2,
    Bf16,
    Bf16x2,
    F32,
    F64,
    Pred,
}

/// The basic kind of a fundamental type (PTX ISA 5.2.1 table "Fundamental Type Specifiers").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeKind {
    /// `.bN`: untyped bits.
    Bits,
    /// `.uN`.
    Unsigned,
    /// `.sN`.
    Signed,
    /// `.fN`, `.bf16`, `.f16x2`.
    Float,
    /// `.pred`.
    Pred,
}

impl ScalarType {
    /// Parses a type word with its leading dot (`".u32"`); `None` if it is not a type.
    pub fn from_dot(s: &str) -> Option<ScalarType> {
        use ScalarType::*;
        Some(match s {
            ".b8" => B8,
            ".b16" => B16,
            ".b32" => B32,
            ".b64" => B64,
            ".b128" => B128,
            ".u8" => U8,
            ".u16" => U16,
            ".u32" => U32,
            ".u64" => U64,
            ".s8" => S8,
            ".s16" => S16,
            ".s32" => S32,
            ".s64" => S64,
            ".f16" => F16,
            ".f16x2" => F16x2,
            ".bf16" => Bf16,
            ".bf16x2" => Bf16x2,
            ".f32" => F32,
            ".f64" => F64,
            ".pred" => Pred,
            _ => return None,
        })
    }

    /// The type word with its dot, e.g. `".u32"`.
    pub fn as_str(self) -> &'static str {
        use ScalarType::*;
        match self {
            B8 => ".b8",
            B16 => ".b16",
            B32 => ".b32",
            B64 => ".b64",
            B128 => ".b128",
            U8 => ".u8",
            U16 => ".u16",
            U32 => ".u32",
            U64 => ".u64",
            S8 => ".s8",
            S16 => ".s16",
            S32 => ".s32",
            S64 => ".s64",
            F16 => ".f16",
            F16x2 => ".f16x2",
            Bf16 => ".bf16",
            Bf16x2 => ".bf16x2",
            F32 => ".f32",
            F64 => ".f64",
            Pred => ".pred",
        }
    }

    /// Size in bits (`.pred` counts as 1).
    pub fn bits(self) -> u32 {
        use ScalarType::*;
        match self {
            Pred => 1,
            B8 | U8 | S8 => 8,
            B16 | U16 | S16 | F16 | Bf16 => 16,
            B32 | U32 | S32 | F32 | F16x2 | Bf16x2 => 32,
            B64 | U64 | S64 | F64 => 64,
            B128 => 128,
        }
    }

    /// Size in bytes in memory (`.pred` has none and reports 0).
    pub fn bytes(self) -> u32 {
        if self == ScalarType::Pred { 0 } else { self.bits() / 8 }
    }

    /// The kind (bits, unsigned, signed, float, predicate).
    pub fn kind(self) -> TypeKind {
        use ScalarType::*;
        match self {
            B8 | B16 | B32 | B64 | B128 => TypeKind::Bits,
            U8 | U16 | U32 | U64 => TypeKind::Unsigned,
            S8 | S16 | S32 | S64 => TypeKind::Signed,
            F16 | F16x2 | Bf16 | Bf16x2 | F32 | F64 => TypeKind::Float,
            Pred => TypeKind::Pred,
        }
    }

    /// True for `.sN`.
    pub fn is_signed(self) -> bool {
        self.kind() == TypeKind::Signed
    }

    /// True for the float kinds.
    pub fn is_float(self) -> bool {
        self.kind() == TypeKind::Float
    }

    /// True for `.bN`, `.uN` and `.sN`.
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), TypeKind::Bits | TypeKind::Unsigned | TypeKind::Signed)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A state space (PTX ISA 5.1), with the `::` sub-qualifiers of PTX ISA 7.8 / 8.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateSpace {
    /// `.reg`.
    Reg,
    /// `.const` (bank 3 on SPA 5.0, ptxas findings section 6).
    Const,
    /// `.global`.
    Global,
    /// `.local`.
    Local,
    /// `.param`, `.param::entry` or `.param::func`.
    Param(ParamSub),
    /// `.shared`, `.shared::cta` or `.shared::cluster`.
    Shared(SharedSub),
}

/// Sub-qualifier of `.param` (PTX ISA 8.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamSub {
    /// Plain `.param`: kernel or function parameter, decided by context.
    None,
    /// `.param::entry`: a kernel parameter.
    Entry,
    /// `.param::func`: a device-function parameter.
    Func,
}

/// Sub-qualifier of `.shared` (PTX ISA 7.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SharedSub {
    /// Plain `.shared` (means `::cta`).
    None,
    /// `.shared::cta`.
    Cta,
    /// `.shared::cluster` (no clusters on SPA 5.0).
    Cluster,
}

impl StateSpace {
    /// Parses a state-space word with its dot, including sub-qualifiers.
    pub fn from_dot(s: &str) -> Option<StateSpace> {
        Some(match s {
            ".reg" => StateSpace::Reg,
            ".const" => StateSpace::Const,
            ".global" => StateSpace::Global,
            ".local" => StateSpace::Local,
            ".param" => StateSpace::Param(ParamSub::None),
            ".param::entry" => StateSpace::Param(ParamSub::Entry),
            ".param::func" => StateSpace::Param(ParamSub::Func),
            ".shared" => StateSpace::Shared(SharedSub::None),
            ".shared::cta" => StateSpace::Shared(SharedSub::Cta),
            ".shared::cluster" => StateSpace::Shared(SharedSub::Cluster),
            _ => return None,
        })
    }

    /// The space word as written, with its dot.
    pub fn as_str(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg",
            StateSpace::Const => ".const",
            StateSpace::Global => ".global",
            StateSpace::Local => ".local",
            StateSpace::Param(ParamSub::None) => ".param",
            StateSpace::Param(ParamSub::Entry) => ".param::entry",
            StateSpace::Param(ParamSub::Func) => ".param::func",
            StateSpace::Shared(SharedSub::None) => ".shared",
            StateSpace::Shared(SharedSub::Cta) => ".shared::cta",
            StateSpace::Shared(SharedSub::Cluster) => ".shared::cluster",
        }
    }
}

impl fmt::Display for StateSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
