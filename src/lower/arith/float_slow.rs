//! The full-range IEEE f64 `div`, `rcp` and `sqrt` (PTX ISA 9.7.3.8, 9.7.3.12, 9.7.3.14:
//! `.rn/.rz/.rm/.rp` are IEEE 754 compliant, subnormals supported): a range test that
//! keeps the fast path of `lower::arith::float` (MUFU estimate, DFMA Newton steps, remainder
//! rounding test) for operands in range and branches to a slow path for the rest.
//!
//! **Range test.** ptxas 11.8 sm_50 (`div.rn.f64`, `-O3`) runs the fast sequence first,
//! then tests the numerator's and the quotient's high words (`FSET.GTU.AND R6, |a.hi|, c`,
//! `FFMA R0, RZ, b.hi, q.hi`, `FSET.GT.AND R0, |R0|, c`, `LOP.AND.NZ P0, RZ, R6, R0`) and
//! calls a slow-path subroutine (`@P0 BRA` over `CAL`) that redoes the division with
//! scaled operands. We do the same with `FSETP` on the high words read as f32 (a
//! nonnegative f32 bit pattern orders as the integer does; the unordered `GEU` catches
//! the NaN patterns): the fast result stands when `|a|`, `|b|` and the fast quotient `q`
//! all lie in `[2^-960, 2^961)` (high word magnitude in `[63 << 20, 1984 << 20)`, two
//! `FSETP` each; `rcp`: `b` only, which bounds `1 / b`; `sqrt`: the operand, signed, so
//! negative operands fail too), else the slow path recomputes it. Zeros, subnormals,
//! infinities and NaNs fail the test, so the fast path leaves out the special-operand
//! selections (`div64` without `specials`; the slow path has them). In that range the
//! fast path is exact (`lower::arith::float`, "Range and rounding"); a quotient computed from
//! in-range operands is within an ulp of the true one, so one out of range fails the test
//! too. The slow path is too long for if-conversion; branch layout makes the fast path
//! one `@!P BRA` over it. Instructions executed by a one-instruction kernel on the fast
//! path, before and after: `div.rn.f64` 62 → 57, `rcp.rn.f64` 57 → 50, `sqrt.rn.f64`
//! 42 → 35 (the test costs fewer than the special selections it replaces).
//!
//! **Division and reciprocal, slow path** (`1 / b` is `div` with `a = 1`). Each operand
//! is normalised exactly: a subnormal one is first multiplied by `2^64` (exact), then the
//! exponent field is replaced by 1023, giving `an = ±1.f` and `a = an 2^ea`; zeros,
//! infinities and NaNs are kept as they are. The fast path computes `q = an / bn` in
//! `(1/2, 2]` correctly rounded in the requested mode (or the exact special result for a
//! zero, infinite or NaN operand, which the normalised operands give as the originals
//! do: `0 / subnormal = 0`, `subnormal / 0 = inf`, ...). With `k = ea - eb` clamped to
//! `[-1200, 1100]` (beyond, the result overflows, or is below half the smallest
//! subnormal, the same after the clamp), the result is `q 2^k`, computed as
//! `DMUL.rnd(DMUL(q, 2^k1), 2^k2)` with `k1 = k >> 1`, `k2 = k - k1` (both powers of two
//! are normal, the first product is exact), so one rounding of `q 2^k`:
//! * If the result is normal, this product is exact: the 53-bit rounding of `an / bn` in
//!   mode `rnd` is the rounding of the quotient scaled by `2^-k`. On overflow `DMUL.rnd`
//!   gives what IEEE asks of the mode (`inf`, or the largest finite number toward zero),
//!   since `q 2^k`, the correctly rounded quotient with unbounded exponent, overflows
//!   exactly when the true rounding does.
//! * If it is subnormal (or zero), the product rounds `q` a second time, to the grid of
//!   spacing `G = 2^-1074`, which is coarser than and nested with `q`'s 53-bit grid
//!   (scaled). For the directed modes that is harmless: rounding down (up, toward zero)
//!   twice on nested grids is rounding down (up, toward zero) once. For round to nearest
//!   it can double-round (the test found it), so results below `2^-1021` are rounded
//!   again by a remainder-sign test (`round_tiny64`) on the grid `G` (uniform from 0 to
//!   `2^-1021`, across the subnormal/normal boundary), in the scaled domain.
//!   `Q = DMUL.rn(DMUL(q, 2^k1), 2^k2)` is within `G` of the true quotient (`q` within
//!   half a 53-bit ulp, at most `G/2` scaled; the rounding `G/2`), so the correct result
//!   is `Q`, `Q + G` or `Q - G` (integer steps of `|Q|`'s bits). With `A = |an|`,
//!   `B = |bn|`, `Q' = |Q| 2^-k1 2^-k2` and `H' = 2^(-1075-k)` (both exact and normal),
//!   the quotient lies above the midpoint `Q + G/2` when `A - B (Q' + H') > 0`, computed
//!   as `rem - B H'` with `rem = A - B Q'` (one DFMA each), and below `Q - G/2` when
//!   `rem + B H' < 0`. `rem` is exact: `|rem| <= B |A/B - Q'| < 2 G'` (`G' = 2 H'`) is a
//!   multiple of `2^-52 G'` when `G' <= 1`, i.e. `k >= -1074`; for `k <= -1076` the
//!   product `Q` is 0 and `rem = A`; for `k = -1075` `Q` is 0 or `G` (`Q' = 2`), and then
//!   `A/B >= 1` (else `Q = 0`) makes `|rem| = |A - 2B| < 2` a multiple of `2^-52`. A
//!   single rounding of the exact `rem -+ B H'` keeps its sign. An exact tie on the grid
//!   (e.g. `2^-1074 / 2`) leaves both tests false and keeps `Q`, which is then right: a
//!   quotient on a midpoint of `G` has at most 53 significant bits (54 would need `b` to
//!   be a power of two, and then the quotient has 53), so `q` is exact and `Q` is its
//!   single rounding by `DMUL.rn`, ties to even. `Q = 0` never steps down (`rem = A > 0`).
//!   This covers results that round up to the smallest normal and down to zero.
//!
//! **Square root, slow path.** `x` below `2^-960` (subnormals included) is multiplied by
//! `2^256`, above `2^961` by `2^-256` (exact), the fast path's root of the scaled operand
//! is correctly rounded in mode `rnd`, and the root is multiplied back by `2^-128` or
//! `2^128`: the root of an f64 is always normal (`sqrt(2^-1074) = 2^-537`), so that
//! product is exact. Zero, negative, infinite and NaN operands then select their special
//! results (`x + -0` for `±0`, `+inf` and NaN; the canonical NaN below zero).
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::{CallKind, CallSite, FuncAbi};
use crate::lower::ctx::Lowerer;
use crate::sass::abi::{self, AbiLoc};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SrcKind, SymPart};
use crate::sass::op::*;

/// The fast path's bounds as f64 high words read as f32 (module notes): magnitudes below
/// `2^-960` (exponent field 63) or from `2^961` (field 1984) take the slow path.
const LOW_HI: u32 = 63 << 20;
const HIGH_HI: u32 = 1984 << 20;
/// The clamp of the slow path's scale exponent `k` (module notes).
const K_MIN: i32 = -1200;
const K_MAX: i32 = 1100;

impl Lowerer<'_> {
    /// The high word's exponent field bits of the pair `x` (`x.hi & 0x7ff00000`).
    fn field(&mut self, x: Src) -> Src {
        let h = self.hi_word(x);
        self.emit1(Op::Lop32i(LogicOp::And), vec![h, Src::imm(0x7ff0_0000)])
    }

    /// A predicate, or'ed into `c`: the f64 pair `x` is outside the fast path's range
    /// (zero, subnormal, below `2^-960`, from `2^961`, infinite or NaN). ptxas's test
    /// (`FSET.GTU.AND R6, |a.hi|, c`): the high word's magnitude read as an f32 orders as
    /// the integer does (NaN patterns, from `0x7f800001`, are caught by the unordered
    /// `GEU`).
    fn out_of_range(&mut self, x: Src, c: Src) -> Src {
        let h = self.hi_word(x);
        let p = self.fsetp(Cmp::Lt, false, BoolOp::Or, h.abs(), Src::imm(LOW_HI), c);
        self.fsetp(Cmp::Geu, false, BoolOp::Or, h.abs(), Src::imm(HIGH_HI), p)
    }

    /// `fast` computes a result (a pair, or a word for the f32 kinds) and a predicate;
    /// `@p BRA slow` then skips to the cold block that calls the module's one copy of slow
    /// path `kind` on `args`
    /// (ptxas 11.8 `CAL`s its slow paths too: `div.rn.f64` twice, `sqrt.rn.f64` and
    /// `rcp.rn.f64` in one kernel give three subroutines and four `CAL`s); its pair
    /// replaces the fast one; returns the register both write.
    pub(in crate::lower) fn branch_slow(
        &mut self,
        fast: impl FnOnce(&mut Self) -> (Src, Src),
        kind: SlowPath,
        args: &[Src],
    ) -> Src {
        let n = kind.result_words() as u8;
        let out = self.tmp(n);
        let slow_blk = self.f.new_block(String::new());
        self.f.cfg[slow_blk].cold = true;
        let join = self.f.new_block(String::new());
        let (q, p) = fast(self);
        let p = self.in_pred(p);
        self.branch_if(p, false, slow_blk);
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(out, n)], vec![q]));
        self.jump(join);
        self.fallthrough_to(slow_blk);
        let q = self.call_slow_path(kind, args);
        self.emit(Instr::new(Op::Copy, vec![Dst::reg(out, n)], vec![q]));
        self.fallthrough_to(join);
        Src::reg(RegRef::new(out, n))
    }

    /// A call of slow path `kind` with the arguments `args` (f64 pairs or f32 words, in
    /// consecutive registers from `R4`, the result in `R4` or `R4:R5`, `sass::abi`); records
    /// that the module needs it. The call is in the private convention
    /// ([`crate::ir::FuncAbi::preserves`]): the slow path keeps every register outside
    /// `R4..R7`, so values live across it need no callee-saved register (`black_scholes`,
    /// five slow-path calls in the kernel: 22 registers with the common convention).
    pub(in crate::lower) fn call_slow_path(&mut self, kind: SlowPath, args: &[Src]) -> Src {
        let mut srcs = vec![];
        let id = self.f.symbol(&kind.name());
        srcs.push(Src::sym(id, SymPart::Target));
        for a in args {
            // A register argument passes its words; anything else is a 32-bit word (an
            // immediate: IR immediates are one word), which `in_reg` materialises.
            match a.as_reg() {
                Some(r) => srcs.extend((0..r.n).map(|k| Src::reg(r.part(k)))),
                None => {
                    let w = self.in_reg(*a);
                    srcs.push(w);
                }
            }
        }
        // The argument words go to consecutive registers from `R4` (`sass::abi`); a slow
        // path has at most two f64 arguments (`R4..R7`), far below `u8::MAX`.
        let locs: Vec<AbiLoc> =
            (abi::FIRST_ARG_REG..=u8::MAX).zip(srcs.iter().skip(1)).map(|(r, _)| AbiLoc::Reg(r)).collect();
        let words = kind.result_words();
        let outs: Vec<Reg> = (0..words).map(|_| self.tmp(1)).collect();
        let site = self.f.calls.len() as u32;
        let rets = (abi::FIRST_ARG_REG..=u8::MAX).take(words).collect();
        self.f.calls.push(CallSite { kind: CallKind::Internal, args: locs, rets, stack_bytes: 0, preserves: true });
        self.emit(Instr::new(Op::Call(site), outs.iter().map(|r| Dst::reg(*r, 1)).collect(), srcs));
        self.cc_now = None;
        self.slow_paths.insert(kind);
        self.join_words(&outs)
    }

    /// One value from `words` (a slow path's argument or result: one or two 32-bit words):
    /// the word itself, or a `Join` of them into consecutive registers.
    fn join_words(&mut self, words: &[Reg]) -> Src {
        if let [w] = *words {
            return Src::r32(w);
        }
        let n = words.len() as u8;
        let t = self.tmp(n);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, n)], words.iter().map(|w| Src::r32(*w)).collect()));
        Src::reg(RegRef::new(t, n))
    }

    /// The body of slow path `kind` as a device function of the module: its parameter
    /// words (joined into f64 pairs for the f64 kinds), the slow computation, the result
    /// returned.
    pub fn slow_path_body(&mut self, kind: SlowPath) {
        let per = if kind.is_f32() { 1 } else { 2 };
        // At most two arguments of two words (`SlowPath::args`).
        let words: Vec<Reg> = (0..kind.args().saturating_mul(per)).map(|_| self.tmp(1)).collect();
        self.emit(Instr::new(Op::Params, words.iter().map(|w| Dst::reg(*w, 1)).collect(), vec![]));
        // The arguments in order; `kind.args()` of them are set (the second stays RZ, unread,
        // for the one-argument kinds).
        let mut vals = [Src::rz(); 2];
        for (v, c) in vals.iter_mut().zip(words.chunks(per)) {
            *v = self.join_words(c);
        }
        let [v0, v1] = vals;
        let q = match kind {
            SlowPath::Div(rnd) => self.div64_slow(Some(v0), v1, rnd),
            SlowPath::Rcp(rnd) => self.div64_slow(None, v0, rnd),
            SlowPath::Sqrt(rnd) => self.sqrt64_slow(v0, rnd),
            SlowPath::Div32(rnd, ftz) => self.div32_via64(Some(v0), v1, rnd, ftz),
            SlowPath::Rcp32(rnd, ftz) => self.div32_via64(None, v0, rnd, ftz),
            SlowPath::Sqrt32(rnd, ftz) => self.sqrt32_via64(v0, rnd, ftz),
        };
        // The result's words (a non-register result is one 32-bit word).
        let ret = match q.as_reg() {
            Some(q) => (0..q.n).map(|k| Src::reg(q.part(k))).collect(),
            None => vec![q],
        };
        self.emit(Instr::new(Op::Ret, vec![], ret));
        let base = abi::FIRST_ARG_REG;
        self.f.abi = Some(FuncAbi {
            params: (base..=u8::MAX).take(words.len()).map(AbiLoc::Reg).collect(),
            rets: (base..=u8::MAX).take(kind.result_words()).collect(),
            preserves: true,
        });
    }

    /// The register of a plain (not negated) predicate source.
    fn in_pred(&mut self, p: Src) -> Reg {
        match p.kind {
            SrcKind::Pred(r) if !p.mods.neg => r,
            _ => unreachable!("branch_slow predicates are plain"),
        }
    }

    /// IEEE `a / b` of f64 pairs in mode `rnd` over the whole range (`a` None: `1 / b`).
    /// The fast path's quotient is tested too (`a` and `b` in range do not bound it).
    pub(in crate::lower) fn div64_ieee(&mut self, a: Option<Src>, b: Src, rnd: Rnd) -> Src {
        let (kind, args) = match a {
            Some(a) => (SlowPath::Div(rnd), vec![a, b]),
            None => (SlowPath::Rcp(rnd), vec![b]),
        };
        self.branch_slow(
            |s| {
                let q = s.div64(a, b, rnd, true, false);
                let p = s.out_of_range(b, Src::pred(PT, true));
                let p = match a {
                    Some(a) => {
                        let p = s.out_of_range(a, p);
                        s.out_of_range(q, p)
                    }
                    None => p,
                };
                (q, p)
            },
            kind,
            &args,
        )
    }

    /// `-x` of a 32-bit integer register (`IADD d, RZ, -x`).
    fn neg_int(&mut self, x: Src) -> Src {
        self.emit1(Op::Iadd { cc: false, x: false }, vec![Src::rz(), x.negated()])
    }

    /// `2^k` as an f64 pair, for `k` (a register) with `k + 1023` in `[1, 2046]`.
    fn pow2(&mut self, k: Src, bias: i32) -> Src {
        let t = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![k, Src::imm(bias as u32)]);
        let h = self.emit1(Op::Shl, vec![t, Src::imm(20)]);
        self.with_zero_low(h)
    }

    /// Normalises the f64 `x` exactly (module notes): `(xn, e)` with `x = xn 2^e` and
    /// `|xn|` in `[1, 2)` for finite nonzero `x`; zeros, infinities and NaNs are kept.
    fn normalise64(&mut self, x: Src) -> (Src, Src) {
        let f = self.field(x);
        let sub =
            self.isetp(Op::Isetp { cmp: Cmp::Eq, u32: true, x: false, bop: BoolOp::And }, f, Src::rz(), Src::pt());
        let sub = Src::pred(sub, false);
        let scaled = self.emit2(Op::Dmul(Rnd::Rn), vec![x, Src::imm(0x43f0_0000)]);
        let x1 = self.sel64(sub, scaled, x);
        let f1 = self.field(x1);
        let e = self.emit1(Op::Shr { u32: true }, vec![f1, Src::imm(20)]);
        let e = self.emit1(Op::Iadd32i { cc: false, x: false }, vec![e, Src::imm((-1023i32) as u32)]);
        let m64 = self.in_reg(Src::imm((-64i32) as u32));
        let adj = self.emit1(Op::Sel, vec![m64, Src::rz(), sub]);
        let e = self.emit1(Op::Iadd { cc: false, x: false }, vec![e, adj]);
        let p = self.isetp(Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And }, f1, Src::rz(), Src::pt());
        let inf = self.in_reg(Src::imm(0x7ff0_0000));
        let fin =
            self.isetp(Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And }, f1, inf, Src::pred(p, false));
        let (l1, h1) = Self::pair_words(x1);
        let m = self.emit1(Op::Lop32i(LogicOp::And), vec![h1, Src::imm(0x800f_ffff)]);
        let m = self.emit1(Op::Lop32i(LogicOp::Or), vec![m, Src::imm(0x3ff0_0000)]);
        let h = self.emit1(Op::Sel, vec![m, h1, Src::pred(fin, false)]);
        let t = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(t, 2)], vec![l1, h]));
        (Src::reg(RegRef::new(t, 2)), e)
    }

    /// The slow path of `div64_ieee` (module notes).
    fn div64_slow(&mut self, a: Option<Src>, b: Src, rnd: Rnd) -> Src {
        let a = match a {
            Some(a) => a,
            None => self.const64(0x3ff0_0000_0000_0000),
        };
        let (an, ea) = self.normalise64(a);
        let (bn, eb) = self.normalise64(b);
        let q = self.div64(Some(an), bn, rnd, true, true);
        let k = self.emit1(Op::Iadd { cc: false, x: false }, vec![ea, eb.negated()]);
        let k = self.emit1(Op::Imnmx { u32: false }, vec![k, Src::imm(K_MAX as u32), Src::pt()]);
        let k = self.emit1(Op::Imnmx { u32: false }, vec![k, Src::imm(K_MIN as u32), Src::pred(PT, true)]);
        let k1 = self.emit1(Op::Shr { u32: false }, vec![k, Src::imm(1)]);
        let k2 = self.emit1(Op::Iadd { cc: false, x: false }, vec![k, k1.negated()]);
        let (p1, p2) = (self.pow2(k1, 1023), self.pow2(k2, 1023));
        let t = self.emit2(Op::Dmul(Rnd::Rn), vec![q, p1]);
        let plain = self.emit2(Op::Dmul(rnd), vec![t, p2]);
        // Round to nearest, results below 2^-1021 (nonzero q): the rounding on the grid
        // G = 2^-1074.
        let z = Src::reg(RegRef::rz(2));
        if rnd != Rnd::Rn {
            // Directed roundings of nested grids compose (module notes).
            return plain;
        }
        let qn = self.emit2(Op::Dmul(Rnd::Rn), vec![t, p2]);
        let tiny = self.dsetp(Cmp::Lt, BoolOp::And, qn.abs(), Src::imm(0x0020_0000), Src::pt());
        let tiny = self.dsetp(Cmp::Ne, BoolOp::And, q, z, tiny);
        let fixed = self.round_tiny64(an, bn, qn, (k, k1, k2));
        self.sel64(tiny, fixed, plain)
    }

    /// The quotient `an / bn 2^k` rounded to nearest on the grid `G = 2^-1074`, from
    /// `qn` within `G` of it (module notes; only meaningful when `|qn| < 2^-1021`).
    fn round_tiny64(&mut self, an: Src, bn: Src, qn: Src, (k, k1, k2): (Src, Src, Src)) -> Src {
        let (big_a, big_b, big_q, mag_h, sign) = self.remainder_operands(an, bn, qn);
        let ql = Self::pair_words(qn).0;
        let z = Src::reg(RegRef::rz(2));
        // Q' = |Q| 2^-k1 2^-k2, G' = 2^(-1074-k), G'/2.
        let (m1, m2, nk) = (self.neg_int(k1), self.neg_int(k2), self.neg_int(k));
        let (n1, n2) = (self.pow2(m1, 1023), self.pow2(m2, 1023));
        let sq = self.emit2(Op::Dmul(Rnd::Rn), vec![big_q, n1]);
        let sq = self.emit2(Op::Dmul(Rnd::Rn), vec![sq, n2]);
        let h = self.pow2(nk, 1023 - 1075);
        let rem = self.emit2(Op::Dfma(Rnd::Rn), vec![big_b.negated(), sq, big_a]);
        let up = self.add64((ql, mag_h), (Src::imm(1), Src::rz()));
        let dn = self.sub64((ql, mag_h), (Src::imm(1), Src::rz()));
        let up_test = self.emit2(Op::Dfma(Rnd::Rn), vec![big_b.negated(), h, rem]);
        let dn_test = self.emit2(Op::Dfma(Rnd::Rn), vec![big_b, h, rem]);
        let go_up = self.dsetp(Cmp::Gt, BoolOp::And, up_test, z, Src::pt());
        let go_dn = self.dsetp(Cmp::Lt, BoolOp::And, dn_test, z, Src::pt());
        let lo = self.emit1(Op::Sel, vec![dn.0, ql, go_dn]);
        let hi = self.emit1(Op::Sel, vec![dn.1, mag_h, go_dn]);
        let lo = self.emit1(Op::Sel, vec![up.0, lo, go_up]);
        let hi = self.emit1(Op::Sel, vec![up.1, hi, go_up]);
        let hi = self.emit1(Op::Lop(LogicOp::Or), vec![hi, sign]);
        let r = self.tmp(2);
        self.emit(Instr::new(Op::Join, vec![Dst::reg(r, 2)], vec![lo, hi]));
        Src::reg(RegRef::new(r, 2))
    }

    /// IEEE `sqrt(x)` of an f64 pair in mode `rnd` over the whole range (module notes).
    pub(in crate::lower) fn sqrt64_ieee(&mut self, x: Src, rnd: Rnd) -> Src {
        self.branch_slow(
            |s| {
                let r = s.sqrt64_rounded(x, rnd);
                // The signed high word: negative operands fail the test too.
                let h = s.hi_word(x);
                let p = s.fsetp(Cmp::Lt, false, BoolOp::And, h, Src::imm(LOW_HI), Src::pt());
                let p = s.fsetp(Cmp::Geu, false, BoolOp::Or, h, Src::imm(HIGH_HI), p);
                (r, p)
            },
            SlowPath::Sqrt(rnd),
            &[x],
        )
    }

    /// The slow path of `sqrt64_ieee` (module notes).
    fn sqrt64_slow(&mut self, x: Src, rnd: Rnd) -> Src {
        let f = self.field(x);
        let small = self.isetp(
            Op::Isetp { cmp: Cmp::Lt, u32: true, x: false, bop: BoolOp::And },
            f,
            Src::imm(1023 << 20),
            Src::pt(),
        );
        let small = Src::pred(small, false);
        let (up, down) = (self.in_reg(Src::imm(0x4ff0_0000)), self.in_reg(Src::imm(0x2ff0_0000)));
        let scale = self.emit1(Op::Sel, vec![up, down, small]);
        let scale = self.with_zero_low(scale);
        let (bu, bd) = (self.in_reg(Src::imm(0x37f0_0000)), self.in_reg(Src::imm(0x47f0_0000)));
        let back = self.emit1(Op::Sel, vec![bu, bd, small]);
        let back = self.with_zero_low(back);
        let xs = self.emit2(Op::Dmul(Rnd::Rn), vec![x, scale]);
        let r = self.sqrt64_rounded(xs, rnd);
        let r = self.emit2(Op::Dmul(Rnd::Rn), vec![r, back]);
        self.sqrt64_special(x, r)
    }
}

/// One slow path of the IEEE f64 and f32 forms: compiled once per module as an internal
/// device function (named by [`SlowPath::name`]) and called from the cold branch of each
/// use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlowPath {
    /// `div.rnd.f64`: `(a, b) -> a / b`.
    Div(Rnd),
    /// `rcp.rnd.f64`: `b -> 1 / b`.
    Rcp(Rnd),
    /// `sqrt.rnd.f64`: `x -> sqrt(x)`.
    Sqrt(Rnd),
    /// `div.rnd{.ftz}.f32` (`true`: `.ftz`): `(a, b) -> a / b` (`lower::arith::float32`).
    Div32(Rnd, bool),
    /// `rcp.rnd{.ftz}.f32`: `b -> 1 / b`.
    Rcp32(Rnd, bool),
    /// `sqrt.rnd{.ftz}.f32`: `x -> sqrt(x)`.
    Sqrt32(Rnd, bool),
}

impl SlowPath {
    /// The function's name (ptxas names its subroutines `__internal_...` or
    /// `__cuda_sm20_...`; these cannot clash with PTX names, which do not start with `$`).
    pub fn name(self) -> String {
        let (op, rnd, ty) = match self {
            SlowPath::Div(r) => ("div", r, "f64"),
            SlowPath::Rcp(r) => ("rcp", r, "f64"),
            SlowPath::Sqrt(r) => ("sqrt", r, "f64"),
            SlowPath::Div32(r, ftz) => ("div", r, if ftz { "ftz_f32" } else { "f32" }),
            SlowPath::Rcp32(r, ftz) => ("rcp", r, if ftz { "ftz_f32" } else { "f32" }),
            SlowPath::Sqrt32(r, ftz) => ("sqrt", r, if ftz { "ftz_f32" } else { "f32" }),
        };
        let rnd = match rnd {
            Rnd::Rn => "rn",
            Rnd::Rm => "rm",
            Rnd::Rp => "rp",
            Rnd::Rz => "rz",
        };
        format!("$__ptx2sass_{op}_{rnd}_{ty}_slowpath")
    }

    /// Number of arguments (f64 pairs, or f32 words for the f32 kinds).
    pub fn args(self) -> usize {
        if matches!(self, SlowPath::Div(_) | SlowPath::Div32(..)) { 2 } else { 1 }
    }

    /// Whether the operands and the result are f32 words (else f64 pairs).
    pub fn is_f32(self) -> bool {
        matches!(self, SlowPath::Div32(..) | SlowPath::Rcp32(..) | SlowPath::Sqrt32(..))
    }

    /// Registers of the result (1 or 2).
    pub fn result_words(self) -> usize {
        if self.is_f32() { 1 } else { 2 }
    }
}
