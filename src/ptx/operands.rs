//! How many operands each PTX instruction takes (issue 20: lowering indexes operands, so
//! every instruction's count is checked in the front end first, and an extra operand is an
//! error rather than silently ignored).
//!
//! The instructions `ptx::check` models get their operand *shapes* there (`check::shapes`);
//! this table covers every other opcode of [`super::classify::PTX_OPCODES`], from the
//! syntax of each instruction in the PTX ISA (chapter 9.7). A `d|p` predicate pair and a
//! `{...}` vector count as one operand; optional operands widen the range (`bar.sync a{,
//! b}` takes 1 or 2).

use super::ast::Instruction;

/// The operand counts an instruction may have: `lo..=hi`, with the syntax it follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Fewest operands.
    pub lo: usize,
    /// Most operands.
    pub hi: usize,
    /// The syntax, for the diagnostic.
    pub syntax: &'static str,
}

const fn c(lo: usize, hi: usize, syntax: &'static str) -> Counts {
    Counts { lo, hi, syntax }
}

/// Counts by opcode; `None` for the opcodes `check::shapes` models (`ld st mov cvt ...`),
/// whose shapes fix the count. Rules that depend on modifiers come first.
pub fn counts(i: &Instruction) -> Option<Counts> {
    let has = |w: &str| i.mods.iter().any(|m| m.text == w);
    let bool_op = has(".and") || has(".or") || has(".xor");
    // The optional cache-policy operand: 3 + policy is at most 4 (`usize` adds of 0/1).
    let policy = usize::from(has(".L2::cache_hint"));
    let plus = |n: usize| n.saturating_add(policy);
    Some(match i.opcode.name.as_str() {
        "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" => c(2, 2, "op.type d, a"),
        "set" if bool_op => c(4, 4, "set.CmpOp.BoolOp.dtype.stype d, a, b, {!}c"),
        "set" => c(3, 3, "set.CmpOp.dtype.stype d, a, b"),
        "slct" => c(4, 4, "slct.dtype.ctype d, a, b, c"),
        "lop3" => c(5, 5, "lop3.b32 d, a, b, c, immLut"),
        "atom" if has(".cas") => c(plus(4), plus(4), "atom.cas.type d, [a], b, c"),
        "atom" => c(plus(3), plus(3), "atom.op.type d, [a], b"),
        // (`red` has no `.cas`; lowering says so, for the 3 operands it would take.)
        "red" if has(".cas") => c(3, 3, "red.op.type [a], b"),
        "red" => c(plus(2), plus(2), "red.op.type [a], b"),
        "shfl" if has(".sync") => c(5, 5, "shfl.sync.mode.b32 d{|p}, a, b, c, membermask"),
        "shfl" => c(4, 4, "shfl.mode.b32 d{|p}, a, b, c"),
        "vote" if has(".sync") => c(3, 3, "vote.sync.mode.type d, {!}a, membermask"),
        "vote" => c(2, 2, "vote.mode.type d, {!}a"),
        "match" => c(3, 4, "match.sync.op.type d{|p}, a, membermask"),
        "redux" => c(3, 3, "redux.sync.op.type d, a, membermask"),
        "activemask" => c(1, 1, "activemask.b32 d"),
        "elect" => c(2, 2, "elect.sync d|p, membermask"),
        "bar" | "barrier" if has(".warp") => c(1, 1, "bar.warp.sync membermask"),
        "bar" | "barrier" if has(".red") => c(3, 4, "bar.red.op.type d, a{, b}, {!}c"),
        "bar" | "barrier" if has(".arrive") => c(2, 2, "bar.arrive a, b"),
        "bar" | "barrier" => c(1, 2, "bar.sync a{, b}"),
        "membar" | "fence" => c(0, 0, "membar.level / fence.sem.scope"),
        "griddepcontrol" => c(0, 0, "griddepcontrol.action"),
        "prefetch" | "prefetchu" => c(1, 1, "prefetch{.space}.level [a]"),
        "applypriority" | "discard" => c(2, 2, "discard.global.L2 [a], size"),
        "createpolicy" => c(2, 4, "createpolicy.fractional.L2::primary{.L2::secondary}.b64 policy, fraction"),
        "isspacep" => c(2, 2, "isspacep.space p, a"),
        "istypep" => c(2, 2, "istypep.type p, a"),
        "trap" | "brkpt" | "exit" | "ret" => c(0, 0, "op"),
        "bra" => c(1, 1, "bra target"),
        "brx" => c(2, 2, "brx.idx index, tlist"),
        "call" => c(1, 4, "call (ret-params), func, (params){, prototype}"),
        "pmevent" | "nanosleep" => c(1, 1, "op a"),
        "alloca" => c(2, 3, "alloca.type ptr, size{, immAlign}"),
        "stacksave" | "stackrestore" => c(1, 1, "stacksave.type d"),
        "setmaxnreg" => c(1, 1, "setmaxnreg.action.sync.aligned.u32 imm-reg-count"),
        "mapa" => c(3, 3, "mapa.space.type d, a, b"),
        "getctarank" => c(2, 2, "getctarank.space.type d, a"),
        "dp4a" | "dp2a" | "fns" => c(4, 4, "op.type d, a, b, c"),
        "bmsk" | "szext" => c(3, 3, "op.mode.type d, a, b"),
        // Video instructions (PTX ISA 9.7.10): a secondary operation or merge adds `c`.
        "vadd" | "vsub" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" => {
            c(3, 4, "vop.dtype.atype.btype d, a, b{, c}")
        }
        "vmad" => c(4, 4, "vmad.dtype.atype.btype d, a, b, c"),
        "vset" => c(3, 4, "vset.atype.btype.cmp d, a, b{, c}"),
        "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vadd4" | "vsub4" | "vavrg4" | "vabsdiff4"
        | "vmin4" | "vmax4" | "vset2" | "vset4" => c(4, 4, "vop2.dtype.atype.btype d, a, b, c"),
        // Texture, surface, matrix and asynchronous-copy instructions: ptx2sass lowers none of
        // them (their targets, or "not supported" in lowering); the widest forms bound them.
        "tex" | "tld4" => c(2, 6, "tex.geom.dtype.ctype d, [a, c]{, lod | dPdx, dPdy}{, e}{, f}"),
        "txq" => c(2, 3, "txq{.level}.query.b32 d, [a]{, lod}"),
        "suq" => c(2, 2, "suq.query.b32 d, [a]"),
        "suld" => c(2, 2, "suld.b.geom d, [a, b]"),
        "sust" | "sured" => c(2, 3, "sust.b.geom [a, b], c"),
        "cp" | "mbarrier" | "ldmatrix" | "stmatrix" | "movmatrix" | "mma" | "wmma" | "wgmma" | "multimem"
        | "tcgen05" => c(0, 8, "see the PTX ISA"),
        _ => return None,
    })
}
