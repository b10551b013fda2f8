//! The IEEE f32 forms `div.{rn,rz,rm,rp}{.ftz}.f32`, `div.full{.ftz}.f32`,
//! `rcp.{rn,rz,rm,rp}{.ftz}.f32` and `sqrt.{rn,rz,rm,rp}{.ftz}.f32` (PTX ISA 9.7.3.8,
//! 9.7.3.12, 9.7.3.14): an f32 fast path guarded by a range test, and an out-of-line slow
//! path (`lower::arith::float_slow`, [`SlowPath::Div32`] ...) reached only when the test fails.
//!
//! **What ptxas does** (11.8 and 12.9, `-arch=sm_50 -O3`, one instruction per kernel,
//! `cuobjdump -sass`; constants read from `.nv.constant2`):
//! * `div.rn{.ftz}.f32`: `MUFU.RCP r0, b; FCHK.DIVIDE P0, a, b; FFMA e, r0, -b, 1;
//!   FFMA r, r0, e, r0; FFMA q0, r, a, RZ; FFMA rem, q0, -b, a; FFMA q, r, rem, q0;
//!   @!P0 BRA done; CAL __cuda_sm3x_div_rn_{noftz,ftz}_f32_slowpath` (the slow path: a
//!   ~60-instruction f32 subroutine that rescales the exponents and handles zeros,
//!   infinities, NaNs and subnormal results by integer arithmetic).
//! * `div.{rz,rm,rp}.f32`: no fast path, a `CAL __cuda_sm20_div_rz_f32` of a whole
//!   subroutine on every execution.
//! * `div.full{.ftz}.f32`: no branch: operands scaled by 1/4 when `|b| > 2^126`
//!   (`FSETP.GT |b|, 8.507e37`), by 2^24 when `|b|` is subnormal, then `MUFU.RCP` and one
//!   `FMUL`.
//! * `rcp.rn{.ftz}.f32`: `IADD32I t, b, 0x1800000; LOP32I.AND t, t, 0x7f800000;
//!   ISETP.GT.U32 P0, t, 0x1ffffff` (the exponent field of `b` in `[1, 252]`), else
//!   `CAL __cuda_sm20_rcp_rn_f32_slowpath`; the fast path `MUFU.RCP r0, b; FFMA t, r0, b,
//!   -1; FADD.FTZ t, -t, -RZ; FFMA r, r0, t, r0`. `rcp.r{z,m,p}.f32`: the same with the
//!   two FFMAs in the directed mode (a sequence that needs a correctly rounded `MUFU.RCP`
//!   for some operands: we do not copy it, see below).
//! * `sqrt.rn{.ftz}.f32`: `IADD32I t, x, -0xd000000; ISETP.GT.U32 P0, t, 0x727fffff`
//!   (`x` in `[2^-101, MAX]`, positive normal), else `CAL __cuda_sm20_sqrt_rn_f32_slowpath`;
//!   the fast path `MUFU.RSQ y, x; FMUL.FTZ s, y, x; FMUL.FTZ h, y, 0.5; FFMA e, s, -s, x;
//!   FFMA r, e, h, s`. `sqrt.r{z,m,p}.f32`: the same test, a second Newton step and the
//!   last FFMA in the directed mode.
//!
//! ptxas 12.9 emits the same kernel code for these forms (only the subroutines are named
//! differently: `$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath`, ...).
//!
//! **What we do.** The same guards, and the same fast paths but for the reciprocal:
//! ptxas's `rcp.rn` and `div.rn` sequences are correctly rounded only if `MUFU.RCP` is
//! better than the PTX ISA's 1 ulp (`rcp.approx.f32`, 9.7.3.13) and than the simulator's
//! model (`exec::sim::arith::mufu`: within `2^-24` relative): `1 / (2 - 2^-23)` with the
//! estimate `0.5` (`2^-24` below) makes the Newton step land exactly on a midpoint and
//! round to even, to `0.5` instead of `0.50000006`, and then `div.rn` gives `1 / (2 -
//! 2^-23) = 0.5` (test `ptxas_div_needs_a_good_estimate` in `exec::sim::arith::mufu`). We
//! round the reciprocal with a midpoint test (5 more instructions, `rcp32_rn`), which
//! holds for any estimate within 1 ulp. Then:
//! * `rcp.rn`: that reciprocal; `rcp.r{z,m,p}`: `FFMA.rnd(r, 1 - b r, r)` (Markstein);
//! * `div.rn`: ptxas's `q0 = a r; q = FFMA(r, FFMA(q0, -b, a), q0)` (`FMUL q0, a, r`
//!   for ptxas's `FFMA q0, r, a, RZ`: they differ only in the sign of a zero product,
//!   and a zero dividend takes the slow path); `div.r{z,m,p}`: one more correction from
//!   the correctly rounded `q`, `FFMA.rnd(r, FFMA(q, -b, a), q)` (instead of ptxas's
//!   whole-subroutine call);
//! * `sqrt`: ptxas's `.rn` sequence; the directed modes step its result by one ulp on
//!   the sign of the exact residual `x - r^2` (`FFMA(r, -r, x)`): down for `.rz`/`.rm`
//!   when negative, up for `.rp` when positive (instead of ptxas's second Newton step).
//! * `div.full`: the `div.rn` sequence (correctly rounded is within its 2 ulp).
//! * the slow path is our f64-based sequence of `lower::arith::float` (correctly rounded for all
//!   operands, ~20 instructions mostly fp64), emitted once per module and kind as a
//!   called subroutine like the f64 slow paths (`$__ptx2sass_div_rn_f32_slowpath`, ...).
//!
//! **Why the fast paths are correctly rounded.** Write `r0 = MUFU.RCP(b) = (1/b)(1 +
//! d)`, `|d| <= 2^-23` (1 ulp).
//! * Reciprocal. Scale `b` into `[1, 2)`. `e = FFMA(-b, r0, 1) = -d` exactly (`b r0` is a
//!   multiple of `2^-47` and `|d|` fits in 24 bits), so `r1 = FFMA(r0, e, r0)` rounds
//!   `(1/b)(1 - d^2)`, within `2^-46` relatively below `1/b`, i.e. within an eighth of an
//!   ulp: `r1` is `p = RN(1/b)` or, when a midpoint lies between, its predecessor `p-`
//!   (never above `p`: the rounded value is below `1/b`). Both are within an ulp of
//!   `1/b`, so their residuals `1 - b r1` and `1 - b r1+` are exact, and their sum `2 - b
//!   (r1 + r1+)` has the sign of `1/b - m`, `m` the midpoint of `r1` and `r1+` (never
//!   zero: `1/b` is no midpoint); when `1/b > m` the answer is `r1+`. (With `r1 = p >
//!   1/b` both residuals are negative and the test keeps `p`.) The comparison `e1 > -e2`
//!   is exact.
//! * Division (Markstein's theorem, Muller et al., "Handbook of Floating-Point
//!   Arithmetic", 2nd ed., section 4.9: if `y = RN(1/b)`, `q` is within one ulp of `a/b`
//!   and nothing under/overflows, then `rem = a - b q` is exact and `RN(q + rem y) =
//!   RN(a/b)`; for the directed modes `o(q + rem y) = o(a/b)` needs `q` within half an
//!   ulp, i.e. `q = RN(a/b)`, else an exactly representable quotient is missed: the
//!   test found `-13619.289 / 1.0915402e15`): `q0 = RN(a r)` errs by at most `2^-24 +
//!   2^-24 (1 + 2^-24)` relative, less than an ulp.
//! * `FCHK.DIVIDE` must send to the slow path every operand pair for which an
//!   intermediate leaves the normal range: zero, subnormal, infinite or NaN operands,
//!   quotients near the limits, and dividends below about `2^-102` (the residual `a - b
//!   q0`, about `2^-24 a`, would be subnormal and inexact; the test shows failures
//!   there). The simulator's model (`exec::sim::arith::ext`) passes only normal operands and
//!   quotients within `2^±100`, and the emulation test covers more than that (`|a| >=
//!   2^-100`, `b` within `2^±120`, normal quotients).
//! * Square root: `s = RN(x y)`, `h = y/2`, `r = RN(s + (x - s^2) h)` is one Newton
//!   step from `s`: its error is second order (about `2^-46` relative) against a
//!   distance of at least about `2^-49` between `sqrt(x)` and a midpoint; no proof here:
//!   the test checks every significand of both exponent parities with every `MUFU.RSQ`
//!   estimate of the simulator's model (`2^-24` relative; the PTX ISA's `rsqrt.approx`
//!   bound `2^-22.9` is not enough for this sequence, which ptxas uses as it is). The
//!   directed step is exact: the residual of a correctly rounded root is representable.
//!
//! The tests (`fast_paths` in `exec::sim::arith::mufu`) emulate each sequence instruction by
//! instruction with the simulator's FFMA/FMUL and every estimate the model (`RCP`: the
//! PTX ISA) allows, over every significand (`PTX2SASS_EXHAUSTIVE=1`; every 97th by
//! default).
//!
//! Exponent scaling: within the guards every value is normal and the sequences scale
//! exactly with the operands' exponents, so the significand tests cover the range.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::lower::arith::float_slow::SlowPath;
use crate::lower::ctx::Lowerer;
use crate::sass::instr::{Dst, Instr, Src};
use crate::sass::op::*;

/// f32 `1.0` and `0.5`.
const ONE32: u32 = 0x3f80_0000;
const HALF32: u32 = 0x3f00_0000;
/// ptxas's `rcp` test: `(b + 3 << 23) & 0x7f800000 > 0x1ffffff` (exponent field of `b`
/// in `[1, 252]`).
const RCP_BIAS: u32 = 0x0180_0000;
const RCP_LIMIT: u32 = 0x01ff_ffff;
/// ptxas's `sqrt` test: `x - 0x0d000000 <= 0x727fffff` (unsigned: `x` in `[2^-101,
/// MAX]`).
const SQRT_LOW: u32 = 0x0d00_0000;
const SQRT_SPAN: u32 = 0x727f_ffff;

impl Lowerer<'_> {
    /// IEEE f32 `a / b` in mode `rnd` (`a` None: `1 / b`), the fast path guarded, the
    /// slow path called (module notes).
    pub(in crate::lower) fn div32_ieee(&mut self, a: Option<Src>, b: Src, rnd: Rnd, ftz: bool) -> Src {
        let (kind, args) = match a {
            Some(a) => (SlowPath::Div32(rnd, ftz), vec![a, b]),
            None => (SlowPath::Rcp32(rnd, ftz), vec![b]),
        };
        let plain = FMods::default();
        self.branch_slow(
            |s| {
                let r0 = s.emit1(Op::Mufu(MufuOp::Rcp), vec![b]);
                let slow = match a {
                    Some(a) => {
                        let p = s.tmp_pred();
                        s.emit(Instr::new(Op::Fchk, vec![Dst::Pred(p)], vec![a, b]));
                        Src::pred(p, false)
                    }
                    None => {
                        let t = s.emit1(Op::Iadd32i { cc: false, x: false }, vec![b, Src::imm(RCP_BIAS)]);
                        let t = s.emit1(Op::Lop32i(LogicOp::And), vec![t, Src::imm(0x7f80_0000)]);
                        let c = Op::Isetp { cmp: Cmp::Le, u32: true, x: false, bop: BoolOp::And };
                        Src::pred(s.isetp(c, t, Src::imm(RCP_LIMIT), Src::pt()), false)
                    }
                };
                let one = s.in_reg(Src::imm(ONE32));
                let (r, rem) = s.rcp32_rn(b, r0, one);
                let q = match a {
                    Some(a) => {
                        let q0 = s.emit1(Op::Fmul(plain), vec![a, r]);
                        let rem = s.emit1(Op::Ffma(plain), vec![q0, b.negated(), a]);
                        let q = s.emit1(Op::Ffma(plain), vec![r, rem, q0]);
                        if rnd == Rnd::Rn {
                            q
                        } else {
                            let rem = s.emit1(Op::Ffma(plain), vec![q, b.negated(), a]);
                            s.emit1(Op::Ffma(FMods { rnd, ..plain }), vec![r, rem, q])
                        }
                    }
                    None if rnd == Rnd::Rn => r,
                    None => s.emit1(Op::Ffma(FMods { rnd, ..plain }), vec![r, rem, r]),
                };
                (q, slow)
            },
            kind,
            &args,
        )
    }

    /// `RN(1/b)` from the estimate `r0 = MUFU.RCP(b)` (`one`: 1.0 in a register) and its
    /// residual `1 - b RN(1/b)` (module notes): ptxas's Newton step `r1 = r0 + r0 (1 - b
    /// r0)`, then `r1+` (one ulp up in magnitude, the integer successor of the bits) when
    /// `1/b` lies above the midpoint of `r1` and `r1+`, i.e. when the residuals `e1` of
    /// `r1` and `e2` of `r1+` (both exact) sum to more than zero.
    fn rcp32_rn(&mut self, b: Src, r0: Src, one: Src) -> (Src, Src) {
        let plain = FMods::default();
        let e = self.emit1(Op::Ffma(plain), vec![r0, b.negated(), one]);
        let r1 = self.emit1(Op::Ffma(plain), vec![r0, e, r0]);
        let e1 = self.emit1(Op::Ffma(plain), vec![r1, b.negated(), one]);
        let up = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![r1, Src::imm(1)]);
        let e2 = self.emit1(Op::Ffma(plain), vec![up, b.negated(), one]);
        let p = self.fsetp(Cmp::Gt, false, BoolOp::And, e1, e2.negated(), Src::pt());
        let r = self.emit1(Op::Sel, vec![up, r1, p]);
        let rem = self.emit1(Op::Sel, vec![e2, e1, p]);
        (r, rem)
    }

    /// IEEE f32 `sqrt(x)` in mode `rnd`, the fast path guarded, the slow path called
    /// (module notes).
    pub(in crate::lower) fn sqrt32_ieee(&mut self, x: Src, rnd: Rnd, ftz: bool) -> Src {
        let plain = FMods::default();
        self.branch_slow(
            |s| {
                let t = s.emit1(Op::Iadd32i { cc: false, x: false }, vec![x, Src::imm(SQRT_LOW.wrapping_neg())]);
                let c = Op::Isetp { cmp: Cmp::Gt, u32: true, x: false, bop: BoolOp::And };
                let slow = Src::pred(s.isetp(c, t, Src::imm(SQRT_SPAN), Src::pt()), false);
                let y = s.emit1(Op::Mufu(MufuOp::Rsq), vec![x]);
                let g = s.emit1(Op::Fmul(plain), vec![y, x]);
                let h = s.emit1(Op::Fmul(plain), vec![y, Src::imm(HALF32)]);
                let e = s.emit1(Op::Ffma(plain), vec![g, g.negated(), x]);
                let r = s.emit1(Op::Ffma(plain), vec![e, h, g]);
                if rnd == Rnd::Rn {
                    return (r, slow);
                }
                // x - r^2, exact; one ulp down (`.rz`, `.rm`: r > sqrt(x)) or up (`.rp`).
                let d = s.emit1(Op::Ffma(plain), vec![r, r.negated(), x]);
                let (cmp, step) = if rnd == Rnd::Rp { (Cmp::Gt, 1u32) } else { (Cmp::Lt, u32::MAX) };
                let p = s.fsetp(cmp, false, BoolOp::And, d, Src::rz(), Src::pt());
                let moved = s.emit1(Op::Iadd32i { cc: false, x: false }, vec![r, Src::imm(step)]);
                (s.emit1(Op::Sel, vec![moved, r, p]), slow)
            },
            SlowPath::Sqrt32(rnd, ftz),
            &[x],
        )
    }
}
