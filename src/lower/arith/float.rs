//! Lowering of float division and the special functions (PTX ISA 9.7.3.8 `div`, 9.7.3.12
//! `rcp`, 9.7.3.14 `sqrt`, 9.7.3.15 `rsqrt`, 9.7.3.17-9.7.3.20 `sin cos lg2 ex2`).
//!
//! **Approximate forms** follow ptxas 11.8 sm_50 (observed on `ptxas -arch=sm_50 -O3`):
//! * `rcp.approx.ftz.f32` → `MUFU.RCP`; `rsqrt.approx.ftz.f32` → `MUFU.RSQ`;
//!   `sqrt.approx.ftz.f32` → `MUFU.RSQ` then `MUFU.RCP`; `lg2.approx.ftz.f32` →
//!   `MUFU.LG2`; `ex2.approx(.ftz).f32` → `RRO.EX2` + `MUFU.EX2`; `sin/cos.approx(.ftz).f32`
//!   → `RRO.SINCOS` + `MUFU.SIN/.COS`; `div.approx.f32` → `MUFU.RCP` + `FMUL`;
//!   `rcp.approx.ftz.f64` → `MUFU.RCP64H` of the high word with a zero low word (`MUFU.RCP64H
//!   R5, R5; MOV R4, RZ`).
//! * Without `.ftz` MUFU's flushing of subnormal operands is undone as ptxas does:
//!   `FSETP.GEU P, |x|, 1.17549435e-38`, the operand scaled by `2^24` when below, and the
//!   result corrected (`rcp`: `*2^24`, `rsqrt`: `*4096`, `sqrt`: `*2^-12`, `lg2`: `-24`);
//!   `ex2` halves operands below `-126` and squares the result (`FSETP.GEU P1, x, -126`,
//!   `@!P1 FMUL r, r, r`). ptxas applies the corrections with predicated instructions; we
//!   compute both and `SEL` (no predicated definitions in SSA), same meaning.
//! * `rsqrt.approx.f64`: `MUFU.RSQ64H` then two coupled Newton steps in DFMA (ptxas: one
//!   step plus a range check and a called slow path for subnormal and huge operands,
//!   which this approximate form does not have: f64 subnormal operands are flushed by
//!   MUFU, see "Limits").
//!
//! **IEEE f32 forms** (`div.{rn,rz,rm,rp}.f32`, `div.full.f32`, `rcp.{rn,rz,rm,rp}.f32`,
//! `sqrt.{rn,rz,rm,rp}.f32`, each with or without `.ftz`) are `lower::arith::float32`'s: an f32
//! fast path as ptxas's (`MUFU.RCP`/`MUFU.RSQ`, FFMA refinement and residual
//! correction, guarded by `FCHK.DIVIDE` or ptxas's exponent test), and a called slow path
//! computed here through f64 (`div32_via64`, `sqrt32_via64`): both operands are widened
//! exactly (`F2F.F64.F32`, subnormals become normal), the f64 quotient or root is
//! computed by Newton steps to within 1 f64 ulp (exact when representable), and one
//! `F2F.F32.F64` rounds it in the requested mode. This is correctly rounded for every
//! operand: the exact quotient of two 24-bit significands is either representable or at
//! least `2^-49` (relative) away from every f32 rounding boundary (a midpoint for RN, an
//! f32 number for the directed modes), and a square root at least `2^-50` away, while
//! the f64 estimate errs by less than `2^-52` (the double-rounding argument of Figueroa,
//! "When is double rounding innocuous?", 1995, for `p' >= 2p + 2`). Zero, infinite and
//! NaN operands are handled by a `SEL` on an `FSETP` test (a quotient `a * (1/b)` with the
//! unrefined `MUFU.RCP64H` estimate, which is exact for those operands). About 20
//! instructions, most of them fp64 (1/32 rate on GM107): too slow to run on every
//! execution, which is why it is only the slow path.
//!
//! **f64 IEEE forms** (`div.{rn,rz,rm,rp}.f64`, `rcp.{rn,...}.f64`, `sqrt.{rn,...}.f64`)
//! follow ptxas's fast path: `MUFU.RCP64H`/`MUFU.RSQ64H`, DFMA Newton steps (a cubic step
//! `e = 1 - b r; r += r (e + e^2)`, then a quadratic one), the product with the
//! numerator and a residual correction `q + r (a - b q)` rounded in the requested mode.
//!
//! **Range and rounding.** The fast path above is exact for operands and quotients within
//! about `[2^-960, 2^960]` in magnitude (MUFU flushes f64 subnormals; intermediate
//! products may overflow or lose exactness beyond). `lower::arith::float_slow` tests the
//! exponents first and branches to a slow path for everything else (zeros, subnormals,
//! infinities, NaNs, huge operands, quotients out of range), which scales the operands
//! exactly into range, runs this fast path and scales back, rounding subnormal results on
//! their own grid (see that module for the argument); the f32 forms computed through f64
//! never leave the range and use the fast path alone (as slow paths of `lower::arith::float32`). Within the range, the f64 Newton
//! result is faithful (within 1 ulp), not correctly rounded in every case: Markstein's
//! final correction `q + r (a - b q)` is correctly rounded only when `r` is the correctly
//! rounded reciprocal, which the Newton steps do not guarantee for divisors with an
//! all-ones significand (`1 / (1 - 2^-53)` lands on the tie between 1 and `1 + 2^-52`
//! when `r` converges to 1.0; the differential test found it under one of the
//! simulator's MUFU error functions). ptxas's fast path has the same shape (11.8 `-O3`,
//! `samples/float_math.ptx`: `DMUL q, a, r; DFMA e, b, -q, a; DFMA q, r, e, q` after the
//! five reciprocal DFMA, no test). We make the reciprocal correctly rounded instead, by
//! the midpoint test of the f32 reciprocal (`lower::arith::float32`, `rcp32_rn`): the
//! last Newton step `r = RN(r1 + r1 (1 - b r1))` rounds `(1/b)(1 - d^2)` (`r1 = (1/b)(1 +
//! d)`, `|d| < 2^-52` after the cubic step, so `1 - b r1` is exact), a value below `1/b`
//! by less than `2^-104` relatively, so `r` is `RN(1/b)` or its predecessor in
//! magnitude; the residuals of `r` and of its successor are exact (both within an ulp
//! of `1/b`) and their sum has the sign of `1/b` minus their midpoint (`recip64_rn`:
//! two DFMA, a DSETP). Then `rcp.rn` is that `y = RN(1/b)`, the directed `rcp` one
//! correction `o(y + y (1 - b y))` (the exact value is within `2^-106` of `1/b`, closer
//! than any f64 number, as in the f32 argument), and `div` applies Markstein's theorem
//! (Muller et al., "Handbook of Floating-Point Arithmetic", 2nd ed., section 4.9: `y =
//! RN(1/b)` and `q` within one ulp give `RN(q + y (a - b q)) = RN(a/b)`, `a - b q`
//! exact) to ptxas's faithful quotient, and in a directed mode one more correction from
//! the correctly rounded quotient. Cost against the remainder-sign test on the quotient
//! this replaces (`round_div64`, two DADD, three DFMA, two DSETP and about 20 integer
//! instructions): `rcp.rn.f64` 6 FP64 instructions fewer, `div.rn.f64` 2 FP64 and about
//! 18 integer instructions fewer. `sqrt.{rn,rz,rm,rp}.f64` end with a remainder test
//! on squares (`round_sqrt64`). So all IEEE f64 forms are correctly rounded over the
//! whole range. The f32 forms computed through f64 are not affected (a faithful f64
//! result suffices for them, see above).
//!
//! **Limits.** `rcp.approx.ftz.f64` is ptxas's bare `MUFU.RCP64H` estimate, with no
//! range handling: operands beyond `2^±1022` flush (as `.ftz` allows). `rsqrt.approx.f64`
//! scales operands below `2^-960` by `2^256` (subnormals included) and is within its
//! stated error over the whole range.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::alu::Val;
use crate::lower::ctx::{LResult, Lowerer, PtxReg};
use crate::ptx::ast::Instruction;
use crate::ptx::instr::{Arith, Rounding};
use crate::ptx::types::ScalarType;
use crate::sass::instr::{Dst, Instr, PT, RegRef, Src};
use crate::sass::op::*;

/// High words of the f64 powers of two that scale `rsqrt.approx.f64` operands out of
/// MUFU's flushing range: 2^-960 (exponent field 63), 2^256 (1279), 2^128 (1151).
const TWO_M960_HI: u32 = 0x03f0_0000;
const TWO_256_HI: u32 = 0x4ff0_0000;
const TWO_128_HI: u32 = 0x47f0_0000;

/// f32 bits of the smallest normal number (MUFU's flushing threshold).
const MIN_NORMAL32: u32 = 0x0080_0000;
/// f32 bits of `+inf`.
const INF32: u32 = 0x7f80_0000;
/// f32 bits of `2^24`, `4096`, `2^-12`, `0.5`, `-24`, `-126`.
const TWO_24: u32 = 0x4b80_0000;
const TWO_12: u32 = 0x4580_0000;
const TWO_M12: u32 = 0x3980_0000;
const MINUS_24: u32 = 0xc1c0_0000;
const MINUS_126: u32 = 0xc2fc_0000;
/// The canonical f32 NaN (what SPA 5.0 arithmetic produces).
const NAN32: u32 = 0x7fff_ffff;
/// The canonical f64 NaN.
const NAN64: u64 = 0x7fff_ffff_ffff_ffff;

/// The special function opcodes lowered here (the PTX opcode names), and `set`.
pub const SPECIAL_FUNCTIONS: &[&str] = &["rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "set"];

/// The modifiers of a special-function instruction (`rcp sqrt rsqrt sin cos lg2 ex2`),
/// read from its modifier words (these opcodes are not typed by `ptx::classify`).
struct FnMods {
    ty: ScalarType,
    approx: bool,
    ftz: bool,
    rnd: Rnd,
}

fn rnd_of(r: Option<Rounding>) -> Rnd {
    match r {
        Some(Rounding::Rz) => Rnd::Rz,
        Some(Rounding::Rm) => Rnd::Rm,
        Some(Rounding::Rp) => Rnd::Rp,
        _ => Rnd::Rn,
    }
}

impl Lowerer<'_> {
    /// A 64-bit result of `op` in a fresh pair.
    pub(in crate::lower) fn emit2(&mut self, op: Op, srcs: Vec<Src>) -> Src {
        let t = self.tmp(2);
        self.op(op, Dst::reg(t, 2), srcs);
        Src::reg(RegRef::new(t, 2))
    }

    /// The f64 constant `v` as a pair register.
    pub(in crate::lower) fn const64(&mut self, bits: u64) -> Src {
        self.pair(Val { lo: Src::imm(bits as u32), hi: Some(Src::imm((bits >> 32) as u32)), whole: None })
    }

    /// The f32 constant with bits `v` in a register.
    fn const32(&mut self, v: u32) -> Src {
        self.in_reg(Src::imm(v))
    }

    /// The high word of the pair `x`.
    pub(in crate::lower) fn hi_word(&mut self, x: Src) -> Src {
        Self::pair_words(x).1
    }

    /// The low and high words of the f64 pair `x` (modifiers dropped). Every f64 value of
    /// these sequences is a register pair built here (`pair`, `tmp(2)`, `emit2`,
    /// `RegRef::rz(2)`), never an immediate: an invariant of our own IR construction.
    #[allow(clippy::expect_used)] // f64 values here are always register pairs (see above)
    pub(in crate::lower) fn pair_words(x: Src) -> (Src, Src) {
        let r = x.as_reg().filter(|r| r.n == 2).expect("an f64 value is a register pair");
        (Src::reg(r.part(0)), Src::reg(r.part(1)))
    }

    /// `{RZ, h}`: an f64 whose high word is `h` (a MUFU.RCP64H/RSQ64H estimate).
    pub(in crate::lower) fn with_zero_low(&mut self, h: Src) -> Src {
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![Src::rz(), h]));
        Src::reg(RegRef::new(t, 2))
    }

    /// `p ? a : b` of two f64 pairs, word by word.
    pub(in crate::lower) fn sel64(&mut self, p: Src, a: Src, b: Src) -> Src {
        let ((al, ah), (bl, bh)) = (Self::pair_words(a), Self::pair_words(b));
        let lo = self.emit1(Op::Sel, vec![al, bl, p]);
        let hi = self.emit1(Op::Sel, vec![ah, bh, p]);
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![lo, hi]));
        Src::reg(RegRef::new(t, 2))
    }

    /// `FSETP.cmp.bop P, a, b, c` into a fresh predicate.
    pub(in crate::lower) fn fsetp(&mut self, cmp: Cmp, ftz: bool, bop: BoolOp, a: Src, b: Src, c: Src) -> Src {
        let p = self.tmp_pred();
        let b = self.b_slot(b, true);
        self.emit(Instr::new(Op::Fsetp { cmp, ftz, bop }, vec![Dst::Pred(p), Dst::Pred(PT)], vec![a, b, c]));
        Src::pred(p, false)
    }

    /// `DSETP.cmp.bop P, a, b, c` into a fresh predicate.
    pub(in crate::lower) fn dsetp(&mut self, cmp: Cmp, bop: BoolOp, a: Src, b: Src, c: Src) -> Src {
        let p = self.tmp_pred();
        self.emit(Instr::new(Op::Dsetp { cmp, bop }, vec![Dst::Pred(p), Dst::Pred(PT)], vec![a, b, c]));
        Src::pred(p, false)
    }

    /// True (a predicate) when the f64 `x` is zero, infinite or NaN, or'ed into `c`.
    fn special64(&mut self, x: Src, c: Src) -> Src {
        // `+INF` as DSETP's 20-bit f64 immediate (the high word; low bits zero).
        let p = self.dsetp(Cmp::Geu, BoolOp::Or, x.abs(), Src::imm(0x7ff0_0000), c);
        let z = Src::reg(RegRef::rz(2));
        self.dsetp(Cmp::Eq, BoolOp::Or, x.abs(), z, p)
    }

    /// The refined f64 reciprocal of the pair `b` (`one`: 1.0 in a pair) and its raw
    /// `MUFU.RCP64H` estimate
    /// `{0, RCP64H(b.hi)}`: a cubic Newton step then a quadratic one (relative error
    /// `2^-19` → `2^-57` → rounding), ptxas's sequence (11.8 `-O3`, `rcp.rn.f64` of
    /// `samples/float_math.ptx`: `MUFU.RCP64H; DFMA e, b, -r0, 1; DFMA e, e, e, e; DFMA r,
    /// r0, e, r0; DFMA e, b, -r, 1; DFMA r, r, e, r`).
    fn recip64(&mut self, b: Src, one: Src) -> (Src, Src) {
        let bh = self.hi_word(b);
        let h = self.emit1(Op::Mufu(MufuOp::Rcp64h), vec![bh]);
        let r0 = self.with_zero_low(h);
        let e = self.emit2(Op::Dfma(Rnd::Rn), vec![b.negated(), r0, one]);
        let t = self.emit2(Op::Dfma(Rnd::Rn), vec![e, e, e]);
        let r = self.emit2(Op::Dfma(Rnd::Rn), vec![r0, t, r0]);
        let e = self.emit2(Op::Dfma(Rnd::Rn), vec![b.negated(), r, one]);
        let r = self.emit2(Op::Dfma(Rnd::Rn), vec![r, e, r]);
        (r, r0)
    }

    /// `y = RN(1/b)` and its residual `1 - b y` (exact) from `r = recip64(b)`, by the
    /// midpoint test of `lower::arith::float32` (`rcp32_rn`) carried over to f64 (module
    /// notes, "Range and rounding"): `r` is `RN(1/b)` or its predecessor in magnitude, and
    /// the successor `r+` (64-bit integer step of the bits) is taken when the residuals
    /// `e1` of `r` and `e2` of `r+` sum to more than zero. Three FP64 instructions (two
    /// DFMA, one DSETP) and four integer ones.
    fn recip64_rn(&mut self, b: Src, r: Src, one: Src) -> (Src, Src) {
        let (rl, rh) = Self::pair_words(r);
        let (ul, uh) = self.add64((rl, rh), (Src::imm(1), Src::rz()));
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![ul, uh]));
        let up = Src::reg(RegRef::new(t, 2));
        let e1 = self.emit2(Op::Dfma(Rnd::Rn), vec![b.negated(), r, one]);
        let e2 = self.emit2(Op::Dfma(Rnd::Rn), vec![b.negated(), up, one]);
        let p = self.dsetp(Cmp::Gt, BoolOp::And, e1, e2.negated(), Src::pt());
        (self.sel64(p, up, r), self.sel64(p, e2, e1))
    }

    /// The operands of a remainder test (`float_slow::round_tiny64`) on the f64 quotient
    /// `q` of `a / b`: `|a|`, `|b|`, `|q|` (pairs; `DADD |x|, -RZ` as the f64 absolute
    /// value), the high word of `|q|` and `q`'s sign bit (32-bit).
    pub(in crate::lower) fn remainder_operands(&mut self, a: Src, b: Src, q: Src) -> (Src, Src, Src, Src, Src) {
        let z = Src::reg(RegRef::rz(2));
        let big_a = self.emit2(Op::Dadd(Rnd::Rn), vec![a.abs(), z.negated()]);
        let big_b = self.emit2(Op::Dadd(Rnd::Rn), vec![b.abs(), z.negated()]);
        let (ql, qh) = Self::pair_words(q);
        let mag_h = self.emit1(Op::Lop32i(LogicOp::And), vec![qh, Src::imm(0x7fff_ffff)]);
        let sign = self.emit1(Op::Lop32i(LogicOp::And), vec![qh, Src::imm(0x8000_0000)]);
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![ql, mag_h]));
        let big_q = Src::reg(RegRef::new(t, 2));
        (big_a, big_b, big_q, mag_h, sign)
    }

    /// `a / b` of f64 pairs in mode `rnd`; `a` None is 1.0 (a reciprocal). With `exact`
    /// correctly rounded (module notes, "Range and rounding"): from `y = RN(1/b)`
    /// (`recip64_rn`), `1 / b` is `y` (`.rn`) or `o(y + y (1 - b y))`, and `a / b` is
    /// Markstein's correction `RN(q + y (a - b q))` of ptxas's faithful quotient `q`, then
    /// in a directed mode one more correction `o(q' + y (a - b q'))` from the correctly
    /// rounded `q'`. Without `exact`, ptxas's fast path alone (faithful: `q0 = a r; q = o(q0
    /// + r (a - b q0))`). With `specials`, zero,
    /// infinite and NaN operands give `a * RCP64H(b)` (exact for them: `x/0 = x*inf`,
    /// `x/inf = x*0`, NaN propagates as the canonical NaN); without, they give garbage
    /// (the fast path of `lower::arith::float_slow`, whose range test sends them elsewhere).
    pub(in crate::lower) fn div64(&mut self, a: Option<Src>, b: Src, rnd: Rnd, exact: bool, specials: bool) -> Src {
        let one = self.const64(0x3ff0_0000_0000_0000);
        let (r, r0) = self.recip64(b, one);
        let rounded = exact.then(|| self.recip64_rn(b, r, one));
        // `o(q + y (x - b q))`: one Markstein correction of `q`.
        let correct = |me: &mut Self, q: Src, x: Src, y: Src, m: Rnd| {
            let e = me.emit2(Op::Dfma(Rnd::Rn), vec![b.negated(), q, x]);
            me.emit2(Op::Dfma(m), vec![y, e, q])
        };
        let (q, special) = match a {
            Some(a) => {
                let q = self.emit2(Op::Dmul(Rnd::Rn), vec![a, r]);
                let q = match rounded {
                    None => correct(self, q, a, r, rnd),
                    Some((y, _)) => {
                        let q = correct(self, q, a, r, Rnd::Rn);
                        let q = correct(self, q, a, y, Rnd::Rn);
                        if rnd == Rnd::Rn { q } else { correct(self, q, a, y, rnd) }
                    }
                };
                let p = self.special64(a, Src::pred(PT, true));
                let p = self.special64(b, p);
                (q, (p, a))
            }
            None => {
                let q = match rounded {
                    None => correct(self, r, one, r, rnd),
                    Some((y, _)) if rnd == Rnd::Rn => y,
                    Some((y, rem)) => self.emit2(Op::Dfma(rnd), vec![y, rem, y]),
                };
                let p = self.special64(b, Src::pred(PT, true));
                (q, (p, one))
            }
        };
        if !specials {
            return q;
        }
        let s = self.emit2(Op::Dmul(Rnd::Rn), vec![special.1, r0]);
        // RCP64H sees only the high word: a NaN whose payload is all in the low word looks
        // infinite to it, so NaN operands select the canonical NaN explicitly.
        let nan = self.dsetp(Cmp::Nan, BoolOp::And, special.1, b, Src::pt());
        let nan64 = self.const64(NAN64);
        let s = self.sel64(nan, nan64, s);
        self.sel64(special.0, s, q)
    }

    /// The f64 square root of the pair `x` rounded by `rnd`, for `0 < x < inf` (other
    /// operands give garbage; callers select): `g = x y`, `h = y / 2` from `MUFU.RSQ64H`,
    /// two coupled Newton steps `r = 1/2 - g h; g += g r; h += h r`, then `g + (x - g^2) h`.
    fn sqrt64_core(&mut self, x: Src, rnd: Rnd) -> Src {
        let xh = self.hi_word(x);
        let h0 = self.emit1(Op::Mufu(MufuOp::Rsq64h), vec![xh]);
        let y = self.with_zero_low(h0);
        let half = self.const64(0x3fe0_0000_0000_0000);
        let mut g = self.emit2(Op::Dmul(Rnd::Rn), vec![x, y]);
        let mut h = self.emit2(Op::Dmul(Rnd::Rn), vec![y, Src::imm(0x3fe0_0000)]);
        for _ in 0..2 {
            let r = self.emit2(Op::Dfma(Rnd::Rn), vec![g.negated(), h, half]);
            g = self.emit2(Op::Dfma(Rnd::Rn), vec![g, r, g]);
            h = self.emit2(Op::Dfma(Rnd::Rn), vec![h, r, h]);
        }
        let e = self.emit2(Op::Dfma(Rnd::Rn), vec![g.negated(), g, x]);
        self.emit2(Op::Dfma(rnd), vec![e, h, g])
    }

    /// The correctly rounded square root (mode `rnd`) of the f64 `x` (`0 < x < inf`, within
    /// the module's range) from a faithful root `s`: the candidates are `s` and its
    /// neighbours `s+` and `s-` (64-bit integer steps of the bits, `s > 0`). For round to
    /// nearest, the midpoint test `x > (s + h)^2 = s s+ + h^2` is `x - s s+ > 0` (one DFMA:
    /// the exact `x - s s+` is a multiple of `4 h^2`, so `h^2` never decides, and a single
    /// rounding keeps the sign), likewise `x - s s- <= 0` for the lower midpoint. Directed
    /// modes compare squares: down (`.rz`, `.rm`) takes the largest candidate `c` with
    /// `x - c^2 >= 0`, up (`.rp`) the smallest with `x - c^2 <= 0`.
    fn round_sqrt64(&mut self, x: Src, s: Src, rnd: Rnd) -> Src {
        let z = Src::reg(RegRef::rz(2));
        let (sl, sh) = Self::pair_words(s);
        let up = self.add64((sl, sh), (Src::imm(1), Src::rz()));
        let dn = self.sub64((sl, sh), (Src::imm(1), Src::rz()));
        let join = |me: &mut Self, (l, h): (Src, Src)| {
            let t = me.tmp(2);
            let (l, h) = (me.in_reg(l), me.in_reg(h));
            me.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![l, h]));
            Src::reg(RegRef::new(t, 2))
        };
        let (up_p, dn_p) = (join(self, up), join(self, dn));
        let (go_up, go_dn) = match rnd {
            Rnd::Rn => {
                let tu = self.emit2(Op::Dfma(Rnd::Rn), vec![s.negated(), up_p, x]);
                let td = self.emit2(Op::Dfma(Rnd::Rn), vec![s.negated(), dn_p, x]);
                (self.dsetp(Cmp::Gt, BoolOp::And, tu, z, Src::pt()), self.dsetp(Cmp::Le, BoolOp::And, td, z, Src::pt()))
            }
            Rnd::Rz | Rnd::Rm => {
                let t = self.emit2(Op::Dfma(Rnd::Rn), vec![s.negated(), s, x]);
                let tu = self.emit2(Op::Dfma(Rnd::Rn), vec![up_p.negated(), up_p, x]);
                (self.dsetp(Cmp::Ge, BoolOp::And, tu, z, Src::pt()), self.dsetp(Cmp::Lt, BoolOp::And, t, z, Src::pt()))
            }
            Rnd::Rp => {
                let t = self.emit2(Op::Dfma(Rnd::Rn), vec![s.negated(), s, x]);
                let td = self.emit2(Op::Dfma(Rnd::Rn), vec![dn_p.negated(), dn_p, x]);
                (self.dsetp(Cmp::Gt, BoolOp::And, t, z, Src::pt()), self.dsetp(Cmp::Le, BoolOp::And, td, z, Src::pt()))
            }
        };
        let r = self.sel64(go_dn, dn_p, s);
        self.sel64(go_up, up_p, r)
    }

    /// The correctly rounded root (mode `rnd`) of the f64 `x` within the fast path's range
    /// (`0 < x`, module notes, "Range and rounding").
    pub(in crate::lower) fn sqrt64_rounded(&mut self, x: Src, rnd: Rnd) -> Src {
        let s = self.sqrt64_core(x, Rnd::Rn);
        self.round_sqrt64(x, s, rnd)
    }

    /// `s` (the root of `x`) for `0 < x < inf`, else the special result: `x + -0` (`±0`,
    /// `+inf`, the canonical NaN) or, below zero, the canonical NaN.
    pub(in crate::lower) fn sqrt64_special(&mut self, x: Src, s: Src) -> Src {
        let z = Src::reg(RegRef::rz(2));
        let ok = self.dsetp(Cmp::Gt, BoolOp::And, x, z, Src::pt());
        let ok = self.dsetp(Cmp::Lt, BoolOp::And, x, Src::imm(0x7ff0_0000), ok);
        let neg = self.dsetp(Cmp::Lt, BoolOp::And, x, z, Src::pt());
        let same = self.emit2(Op::Dadd(Rnd::Rn), vec![x, z.negated()]);
        let nan = self.const64(NAN64);
        let special = self.sel64(neg, nan, same);
        self.sel64(ok, s, special)
    }

    /// Float `div` (PTX ISA 9.7.3.8) of `.f32`/`.f64` (module notes).
    pub(in crate::lower) fn lower_fdiv(&mut self, i: &Instruction, a: &Arith, d: PtxReg) -> LResult<()> {
        let full = i.mods.iter().any(|m| m.text == ".full");
        let f64 = a.ty == ScalarType::F64;
        if a.approx && !full {
            if f64 {
                return self.unsupported(i, "`div.approx` is only defined for `.f32`");
            }
            // ptxas 11.8 sm_50: `MUFU.RCP r, b; FMUL q, a, r`.
            let x = self.f32_operand(i, 1)?;
            let y = self.f32_operand(i, 2)?;
            let r = self.emit1(Op::Mufu(MufuOp::Rcp), vec![y]);
            let m = FMods { ftz: a.ftz, ..FMods::default() };
            self.op(Op::Fmul(m), Dst::reg(d.reg, 1), vec![x, r]);
            return Ok(());
        }
        let rnd = rnd_of(a.rnd);
        if f64 {
            let op = self.operand(i, 1)?;
            let x = self.val(op, a.ty)?;
            let op = self.operand(i, 2)?;
            let y = self.val(op, a.ty)?;
            let (x, y) = (self.pair(x), self.pair(y));
            let q = self.div64_ieee(Some(x), y, rnd);
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 2)], vec![q]));
            return Ok(());
        }
        let x = self.f32_operand(i, 1)?;
        let y = self.f32_operand(i, 2)?;
        let q = self.div32_ieee(Some(x), y, rnd, a.ftz);
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], vec![q]));
        Ok(())
    }

    /// Operand `k` of an f32 instruction in a register.
    fn f32_operand(&mut self, i: &Instruction, k: usize) -> LResult<Src> {
        let op = self.operand(i, k)?;
        let v = self.val(op, ScalarType::F32)?;
        Ok(self.in_reg(v.lo))
    }

    /// The widened f32 `x` (`F2F.F64.F32`, exact; `.FTZ` flushes a subnormal).
    fn widen(&mut self, x: Src, ftz: bool) -> Src {
        self.emit2(Op::F2f { dst: FType::F64, src: FType::F32, rnd: Rnd::Rn, ftz, int: false }, vec![x])
    }

    /// Rounds the f64 `q` to f32 (`F2F.F32.F64.rnd`).
    fn narrow(&mut self, q: Src, rnd: Rnd, ftz: bool) -> Src {
        self.emit1(Op::F2f { dst: FType::F32, src: FType::F64, rnd, ftz, int: false }, vec![q])
    }

    /// IEEE f32 `x / y` (or `1 / y` for `x` None) through f64 (module notes): the slow
    /// path of `lower::arith::float32`.
    pub(in crate::lower) fn div32_via64(&mut self, x: Option<Src>, y: Src, rnd: Rnd, ftz: bool) -> Src {
        let b = self.widen(y, ftz);
        let a = x.map(|x| self.widen(x, ftz));
        let q = self.div64(a, b, Rnd::Rn, false, true);
        self.narrow(q, rnd, ftz)
    }

    /// `set.CmpOp{.BoolOp}{.ftz}.dtype.stype d, a, b{, {!}c}` (PTX ISA 9.7.8.6.2): the
    /// `setp` comparison into a predicate, then `SEL d, 1.0 (f32 dtype) or 0xffffffff
    /// (integer dtype), RZ, P`. ptxas emits one `FSET.BF`/`ISET`/`DSET`; we use the
    /// predicate compare and SEL, which our simulator and checker already model (one
    /// instruction more).
    fn lower_set(&mut self, i: &Instruction) -> LResult<()> {
        use crate::ptx::instr::{BoolOp as PBool, CmpOp, Setp};
        let mut cmp = None;
        let (mut bool_op, mut ftz, mut types) = (None, false, vec![]);
        for m in &i.mods {
            let t = m.text.as_str();
            if let Some(c) = CmpOp::from_modifier(t) {
                cmp = Some(c);
            } else if let Some(ty) = ScalarType::from_dot(t) {
                types.push(ty);
            } else {
                match t {
                    ".and" => bool_op = Some(PBool::And),
                    ".or" => bool_op = Some(PBool::Or),
                    ".xor" => bool_op = Some(PBool::Xor),
                    ".ftz" => ftz = true,
                    _ => return self.error(m.span, format!("`{t}` is not a modifier of `set`")),
                }
            }
        }
        let (Some(cmp), &[dt, st]) = (cmp, &types[..]) else {
            return self.error(i.opcode.span, "`set` needs a comparison and two types (`set.lt.u32.f32`)");
        };
        if dt.bits() != 32 || (dt.is_float() && dt != ScalarType::F32) {
            return self.unsupported(i, "`set` results other than 32-bit integers and `.f32`");
        }
        let op = self.operand(i, 0)?;
        let d = self.dst_reg(op)?;
        let p = self.tmp_pred();
        self.setp_into(i, &Setp { cmp, bool_op, ftz, ty: st }, p, PT)?;
        let one = self.in_reg(Src::imm(if dt.is_float() { 0x3f80_0000 } else { u32::MAX }));
        self.op(Op::Sel, Dst::reg(d.reg, 1), vec![one, Src::rz(), Src::pred(p, false)]);
        Ok(())
    }

    /// `rcp sqrt rsqrt sin cos lg2 ex2` (module notes) and `set`; `name` is the PTX opcode.
    pub(in crate::lower) fn lower_special_fn(&mut self, i: &Instruction, name: &str) -> LResult<()> {
        if name == "set" {
            return self.lower_set(i);
        }
        let m = self.fn_mods(i)?;
        let op = self.operand(i, 0)?;
        let d = self.dst_reg(op)?;
        if m.ty == ScalarType::F64 {
            return self.special_fn64(i, name, &m, d);
        }
        let x = self.f32_operand(i, 1)?;
        let exact = !m.approx && matches!(name, "rcp" | "sqrt");
        if exact {
            let r =
                if name == "rcp" { self.div32_ieee(None, x, m.rnd, m.ftz) } else { self.sqrt32_ieee(x, m.rnd, m.ftz) };
            self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], vec![r]));
            return Ok(());
        }
        let plain = FMods::default();
        let out = match name {
            "sin" | "cos" => {
                let t = self.emit1(Op::Rro { ex2: false }, vec![x]);
                let f = if name == "sin" { MufuOp::Sin } else { MufuOp::Cos };
                self.emit1(Op::Mufu(f), vec![t])
            }
            "ex2" if m.ftz => {
                let t = self.emit1(Op::Rro { ex2: true }, vec![x]);
                self.emit1(Op::Mufu(MufuOp::Ex2), vec![t])
            }
            "ex2" => {
                // ptxas: FSETP.GEU P1, x, -126; x/2 below; RRO.EX2; MUFU.EX2; @!P1 FMUL r, r, r.
                let p = self.fsetp(Cmp::Geu, false, BoolOp::And, x, Src::imm(MINUS_126), Src::pt());
                let half = self.emit1(Op::Fmul(plain), vec![x, Src::imm(0x3f00_0000)]);
                let xs = self.emit1(Op::Sel, vec![x, half, p]);
                let t = self.emit1(Op::Rro { ex2: true }, vec![xs]);
                let r = self.emit1(Op::Mufu(MufuOp::Ex2), vec![t]);
                let sq = self.emit1(Op::Fmul(plain), vec![r, r]);
                self.emit1(Op::Sel, vec![r, sq, p])
            }
            "rcp" | "rsqrt" | "sqrt" | "lg2" => {
                let run = |s: &mut Self, v: Src| -> Src {
                    match name {
                        "rcp" => s.emit1(Op::Mufu(MufuOp::Rcp), vec![v]),
                        "rsqrt" => s.emit1(Op::Mufu(MufuOp::Rsq), vec![v]),
                        "lg2" => s.emit1(Op::Mufu(MufuOp::Lg2), vec![v]),
                        _ => {
                            let r = s.emit1(Op::Mufu(MufuOp::Rsq), vec![v]);
                            s.emit1(Op::Mufu(MufuOp::Rcp), vec![r])
                        }
                    }
                };
                if m.ftz {
                    run(self, x)
                } else {
                    // ptxas: FSETP.GEU P0, |x|, 1.17549435e-38; FMUL xs, x, 16777216; SEL;
                    // MUFU; then the result's correction under !P0.
                    let p = self.fsetp(Cmp::Geu, false, BoolOp::And, x.abs(), Src::imm(MIN_NORMAL32), Src::pt());
                    let scaled = self.emit1(Op::Fmul(plain), vec![x, Src::imm(TWO_24)]);
                    let xs = self.emit1(Op::Sel, vec![x, scaled, p]);
                    let r = run(self, xs);
                    let fixed = match name {
                        "rcp" => self.emit1(Op::Fmul(plain), vec![r, Src::imm(TWO_24)]),
                        "rsqrt" => self.emit1(Op::Fmul(plain), vec![r, Src::imm(TWO_12)]),
                        "sqrt" => self.emit1(Op::Fmul(plain), vec![r, Src::imm(TWO_M12)]),
                        _ => self.emit1(Op::Fadd(plain), vec![r, Src::imm(MINUS_24)]),
                    };
                    self.emit1(Op::Sel, vec![r, fixed, p])
                }
            }
            _ => return self.unsupported(i, "unknown special function"),
        };
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 1)], vec![out]));
        Ok(())
    }

    /// IEEE f32 square root through f64 (module notes): the slow path of
    /// `lower::arith::float32`. Operands other than `0 < x < inf` select `x + -0` (`±0`, `+inf`,
    /// canonical NaN) or, below zero, the canonical NaN.
    pub(in crate::lower) fn sqrt32_via64(&mut self, x: Src, rnd: Rnd, ftz: bool) -> Src {
        let wide = self.widen(x, ftz);
        let s = self.sqrt64_core(wide, Rnd::Rn);
        let t = self.narrow(s, rnd, ftz);
        let ok = self.fsetp(Cmp::Gt, ftz, BoolOp::And, x, Src::rz(), Src::pt());
        let ok = self.fsetp(Cmp::Lt, ftz, BoolOp::And, x, Src::imm(INF32), ok);
        let neg = self.fsetp(Cmp::Lt, ftz, BoolOp::And, x, Src::rz(), Src::pt());
        let same = self.emit1(Op::Fadd(FMods { ftz, ..FMods::default() }), vec![x, Src::rz().negated()]);
        let nan = self.const32(NAN32);
        let special = self.emit1(Op::Sel, vec![nan, same, neg]);
        self.emit1(Op::Sel, vec![t, special, ok])
    }

    /// The f64 forms: `rcp.{rn,rz,rm,rp}.f64`, `rcp.approx.ftz.f64`, `sqrt.{rn,...}.f64`,
    /// `rsqrt.approx.f64`.
    fn special_fn64(&mut self, i: &Instruction, name: &str, m: &FnMods, d: PtxReg) -> LResult<()> {
        let op = self.operand(i, 1)?;
        let v = self.val(op, ScalarType::F64)?;
        let x = self.pair(v);
        let out = match (name, m.approx) {
            ("rcp", false) => self.div64_ieee(None, x, m.rnd),
            ("rcp", true) => {
                // ptxas 11.8: `MUFU.RCP64H R5, R5; MOV R4, RZ`.
                let xh = self.hi_word(x);
                let h = self.emit1(Op::Mufu(MufuOp::Rcp64h), vec![xh]);
                self.with_zero_low(h)
            }
            ("sqrt", false) => self.sqrt64_ieee(x, m.rnd),
            ("rsqrt", true) => {
                // Operands below 2^-960 (subnormals, which MUFU flushes) are scaled by 2^256
                // and the result by 2^128, both exact; `x y²` stays near 1 for every other
                // positive normal, so the Newton steps need no range handling.
                let orig = x;
                let tiny = self.dsetp(Cmp::Lt, BoolOp::And, orig, Src::imm(TWO_M960_HI), Src::pt());
                let scaled = self.emit2(Op::Dmul(Rnd::Rn), vec![orig, Src::imm(TWO_256_HI)]);
                let x = self.sel64(tiny, scaled, orig);
                let xh = self.hi_word(x);
                let h0 = self.emit1(Op::Mufu(MufuOp::Rsq64h), vec![xh]);
                let y0 = self.with_zero_low(h0);
                let half = self.const64(0x3fe0_0000_0000_0000);
                let mut y = y0;
                for _ in 0..2 {
                    // y += y (1/2 - (x y)(y/2)).
                    let g = self.emit2(Op::Dmul(Rnd::Rn), vec![x, y]);
                    let h = self.emit2(Op::Dmul(Rnd::Rn), vec![y, Src::imm(0x3fe0_0000)]);
                    let r = self.emit2(Op::Dfma(Rnd::Rn), vec![g.negated(), h, half]);
                    y = self.emit2(Op::Dfma(Rnd::Rn), vec![y, r, y]);
                }
                let z = Src::reg(RegRef::rz(2));
                let ok = self.dsetp(Cmp::Gt, BoolOp::And, x, z, Src::pt());
                let ok = self.dsetp(Cmp::Lt, BoolOp::And, x, Src::imm(0x7ff0_0000), ok);
                let special = self.emit2(Op::Dmul(Rnd::Rn), vec![y0, Src::imm(0x3ff0_0000)]);
                // RSQ64H sees only the high word (a low-word NaN payload reads as inf).
                let nan = self.dsetp(Cmp::Nan, BoolOp::And, x, x, Src::pt());
                let nan64 = self.const64(NAN64);
                let special = self.sel64(nan, nan64, special);
                let unscaled = self.emit2(Op::Dmul(Rnd::Rn), vec![y, Src::imm(TWO_128_HI)]);
                let y = self.sel64(tiny, unscaled, y);
                self.sel64(ok, y, special)
            }
            _ => {
                let what = format!("`{}` of `.f64`", crate::ptx::check::instr_text(i));
                return self.unsupported(i, &what);
            }
        };
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(d.reg, 2)], vec![out]));
        Ok(())
    }

    /// Reads the type, `.approx`, `.ftz` and rounding words of a special function.
    fn fn_mods(&mut self, i: &Instruction) -> LResult<FnMods> {
        let mut ty = None;
        let (mut approx, mut ftz, mut rnd) = (false, false, None);
        for m in &i.mods {
            match m.text.as_str() {
                ".f32" => ty = Some(ScalarType::F32),
                ".f64" => ty = Some(ScalarType::F64),
                ".approx" => approx = true,
                ".ftz" => ftz = true,
                ".rn" => rnd = Some(Rounding::Rn),
                ".rz" => rnd = Some(Rounding::Rz),
                ".rm" => rnd = Some(Rounding::Rm),
                ".rp" => rnd = Some(Rounding::Rp),
                _ => return self.error(m.span, format!("`{}` is not supported on `{}`", m.text, i.opcode.name)),
            }
        }
        let Some(ty) = ty else {
            return self.error(i.opcode.span, format!("`{}` needs a type (`.f32` or `.f64`)", i.opcode.name));
        };
        let name = i.opcode.name.as_str();
        if !approx && rnd.is_none() {
            return self.error(i.opcode.span, format!("`{name}` needs `.approx` or a rounding modifier"));
        }
        if !approx && !matches!(name, "rcp" | "sqrt") {
            return self.error(i.opcode.span, format!("`{name}` is only defined with `.approx` (PTX ISA 9.7.3)"));
        }
        Ok(FnMods { ty, approx, ftz, rnd: rnd_of(rnd) })
    }
}
