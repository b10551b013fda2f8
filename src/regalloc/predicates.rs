//! Predicate pressure: SPA 5.0 has seven predicate registers (P0..P6; P7 is PT). When
//! more predicate values are live at once, some are *demoted* before allocation: kept in
//! a general-purpose register as 0/1 right after their definition, and turned back into a
//! short-lived predicate just before each use (rematerialization). GPRs can then be
//! spilled like any other value.
//!
//! * after `p`'s definition: `SEL g, RZ, 0x1, !p` (`g = p ? 1 : 0`);
//! * before each reader of `p`: `ISETP.NE.AND q, PT, g, RZ, PT`, and the reader uses `q`.
//!
//! Neither instruction touches the condition code, so they may sit inside `.CC`/`.X`
//! chains. Predicates merged at joins (block parameters and the edge arguments passed to
//! them) are demoted together, as one phi web: the parameters become general-purpose
//! block parameters. An if-converted (guarded) definition is saved under its own guard.
//! Only the short-lived predicates demotion creates are never demoted; if those alone
//! exceeded seven at some instruction, allocation would fail.
//!
//! Seven live predicates do not guarantee that regalloc2 allocates them without spilling:
//! its Ion allocator gives the parts of a split live range that hold no use (the *spill
//! bundle*) a register only if one is free over all of it, and otherwise a stack slot. An
//! `sgemm_reg` mutant at `--maxrregcount 32` (`tests/fuzz_found.rs`) has at most 7 live
//! predicates after demotion and still got a predicate spill slot. So [`demote`] takes a
//! target below seven when `regalloc::allocate` retries (down to 0: every predicate that
//! can be kept in a GPR is), like ptxas 11.8, which keeps few predicates live there and
//! recomputes the others (`ISETP` from spilled values; no `P2R`/`R2P` on that input).

use super::Error;
use crate::ir::{BlockId, Function, Liveness, VRegKind, for_each_def, for_each_use};
use crate::sass::instr::{Dst, Instr, PT, Reg, Src};
use crate::sass::op::{BoolOp, Cmp, Op};
use std::collections::{HashMap, HashSet};

/// Physical predicate registers available to values (P0..P6).
pub const PRED_REGS: usize = 7;

fn is_pred(f: &Function, v: u32) -> bool {
    f.vregs[v as usize] == VRegKind::Pred
}

/// Predicate values live at each instruction (before it executes), per block. `given`:
/// the liveness of `f` if known (computed otherwise).
fn live_sets(f: &Function, given: Option<&Liveness>) -> HashMap<BlockId, Vec<Vec<u32>>> {
    let mut computed = None;
    let liveness = crate::ir::liveness::given_or_computed(f, given, &mut computed);
    let mut out = HashMap::new();
    for &b in &f.layout {
        let mut live: HashSet<u32> = liveness.live_out(b).iter().copied().filter(|&v| is_pred(f, v)).collect();
        let mut at = vec![];
        for i in f.cfg[b].instrs.iter().rev() {
            // Live across the instruction: live after it, plus its predicate results
            // (which need a register at that point too).
            let mut here: Vec<u32> = live.iter().copied().collect();
            for_each_def(i, |v| {
                if is_pred(f, v) && !here.contains(&v) {
                    here.push(v);
                }
                live.remove(&v);
            });
            for_each_use(i, |v| {
                if is_pred(f, v) {
                    live.insert(v);
                    if !here.contains(&v) {
                        here.push(v);
                    }
                }
            });
            at.push(here);
        }
        at.reverse();
        out.insert(b, at);
    }
    out
}

/// Predicate values live across a call (live after it), in order of number. `given`: the
/// liveness of `f` if known.
fn live_across_calls(f: &Function, given: Option<&Liveness>) -> Vec<u32> {
    if !f.has_calls() {
        return vec![];
    }
    let mut computed = None;
    let liveness = crate::ir::liveness::given_or_computed(f, given, &mut computed);
    let mut out: HashSet<u32> = HashSet::new();
    for &b in &f.layout {
        let mut live: HashSet<u32> = liveness.live_out(b).iter().copied().filter(|&v| is_pred(f, v)).collect();
        for i in f.cfg[b].instrs.iter().rev() {
            if matches!(i.op, Op::Call(_)) {
                out.extend(live.iter().copied());
            }
            for_each_def(i, |v| {
                live.remove(&v);
            });
            for_each_use(i, |v| {
                if is_pred(f, v) {
                    live.insert(v);
                }
            });
        }
    }
    let mut v: Vec<u32> = out.into_iter().collect();
    v.sort_unstable();
    v
}

/// The predicate values joined through block parameters: each block parameter with the
/// arguments every incoming edge passes it, transitively (a union-find over parameters and
/// arguments). A phi web is demoted as a whole: its parameters become general-purpose
/// block parameters and its arguments general-purpose values, so no predicate has to
/// cross an edge.
struct Webs {
    parent: HashMap<u32, u32>,
}

impl Webs {
    fn new(f: &Function) -> Webs {
        let mut w = Webs { parent: HashMap::new() };
        for &b in &f.layout {
            for e in f.pred_edges(b) {
                for (&p, &a) in f.cfg[b].params.iter().zip(&f.cfg[e].args) {
                    if is_pred(f, p) {
                        w.union(p, a);
                    }
                }
            }
        }
        w
    }

    fn find(&mut self, v: u32) -> u32 {
        let mut r = v;
        while let Some(&p) = self.parent.get(&r)
            && p != r
        {
            r = p;
        }
        // Path compression.
        let mut x = v;
        while let Some(&p) = self.parent.get(&x)
            && p != r
        {
            self.parent.insert(x, r);
            x = p;
        }
        r
    }

    fn union(&mut self, a: u32, b: u32) {
        self.parent.entry(a).or_insert(a);
        self.parent.entry(b).or_insert(b);
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra.max(rb), ra.min(rb));
        }
    }

    /// Every value of `v`'s web (`v` alone when it meets no block parameter).
    fn members(&mut self, v: u32) -> Vec<u32> {
        if !self.parent.contains_key(&v) {
            return vec![v];
        }
        let r = self.find(v);
        let keys: Vec<u32> = self.parent.keys().copied().collect();
        let mut out: Vec<u32> = keys.into_iter().filter(|&x| self.find(x) == r).collect();
        out.sort_unstable();
        out
    }
}

/// Demotes predicates of the SSA function `f` that live across a call, and more until at
/// most `target` (at most [`PRED_REGS`]) are live at any instruction, or no predicate
/// live where more are can be demoted; a value joined with others through block
/// parameters is demoted with its whole web ([`Webs`]). Returns how many webs were
/// demoted; errors if the predicates that cannot be demoted (the short-lived ones
/// demotion itself creates) still need more than [`PRED_REGS`] at some instruction.
/// Before its first change of `f`, a copy of `f` is stored in `undemoted` unless that
/// already holds one (callers copy the function only when demotion changes it). `live`:
/// the liveness of `f` on entry if the caller has it (computed otherwise); `f` is
/// unchanged when the count returned is 0.
pub fn demote(
    f: &mut Function,
    target: usize,
    undemoted: &mut Option<Function>,
    live: Option<&Liveness>,
) -> Result<usize, Error> {
    // The liveness of `f` as it is now, while demotion has not changed it.
    let mut live = live;
    let target = target.min(PRED_REGS);
    let mut demoted = 0;
    let mut webs = Webs::new(f);
    // Values already demoted, and the short-lived predicates that replace them.
    let mut fixed: HashSet<u32> = HashSet::new();
    // Predicates live across a call: every predicate register is caller-saved.
    for v in live_across_calls(f, live) {
        if fixed.contains(&v) {
            continue;
        }
        let web = webs.members(v);
        let first_new = f.vregs.len() as u32;
        if undemoted.is_none() {
            *undemoted = Some(f.clone());
        }
        demote_web(f, &web)?;
        live = None;
        fixed.extend(web);
        fixed.extend(first_new..f.vregs.len() as u32);
        demoted += 1;
    }
    loop {
        let live_at = live_sets(f, live);
        // Among points over the limit, count how often each demotable value is live.
        let mut score: HashMap<u32, usize> = HashMap::new();
        let mut over = false;
        for sets in live_at.values() {
            for here in sets {
                over |= here.len() > PRED_REGS;
                if here.len() > target {
                    for v in here {
                        if !fixed.contains(v) {
                            *score.entry(*v).or_default() += 1;
                        }
                    }
                }
            }
        }
        let Some((&v, _)) = score.iter().max_by_key(|(v, n)| (**n, std::cmp::Reverse(**v))) else {
            return if over { Err(Error::PredicatePressure) } else { Ok(demoted) };
        };
        let web = webs.members(v);
        let first_new = f.vregs.len() as u32;
        if undemoted.is_none() {
            *undemoted = Some(f.clone());
        }
        demote_web(f, &web)?;
        live = None;
        // The values and the short-lived predicates that replace them are final.
        fixed.extend(web);
        fixed.extend(first_new..f.vregs.len() as u32);
        demoted += 1;
    }
}

/// Keeps the predicates of `web` in GPRs (see the module documentation): each value `x`
/// gets a GPR `gx` holding 0/1, written right after `x`'s defining instruction under
/// that instruction's guard (an if-converted definition is read only under the same
/// guard, `lower::cfg::ifconv`), or received as a block parameter in place of `x`; edge
/// arguments pass `gx`; every instruction reading `x` reads a predicate rematerialized
/// from `gx` just before it.
fn demote_web(f: &mut Function, web: &[u32]) -> Result<(), Error> {
    let mut gpr: HashMap<u32, u32> = HashMap::new();
    for &x in web {
        let Reg::V(g) = f.new_vreg(VRegKind::Gpr(1)) else { unreachable!("new_vreg gives a virtual register") };
        gpr.insert(x, g);
    }
    for b in f.layout.clone() {
        for p in f.cfg[b].params.iter_mut() {
            if let Some(&g) = gpr.get(p) {
                *p = g;
            }
        }
        for e in f.pred_edges(b) {
            for a in f.cfg[e].args.iter_mut() {
                if let Some(&g) = gpr.get(a) {
                    *a = g;
                }
            }
        }
        let mut k = 0;
        while k < f.cfg[b].instrs.len() {
            let i = f.cfg[b].instrs[k].clone();
            let origin = f.cfg[b].origins[k];
            // The web values the instruction reads, each once.
            let mut used = vec![];
            for_each_use(&i, |u| {
                if gpr.contains_key(&u) && !used.contains(&u) {
                    used.push(u);
                }
            });
            let mut written = None;
            for_each_def(&i, |d| {
                if gpr.contains_key(&d) {
                    written = Some(d);
                }
            });
            // Each read from a fresh predicate rematerialized just before.
            for u in used {
                let q = f.new_vreg(VRegKind::Pred);
                let p = Reg::V(u);
                let remat = Instr::new(
                    Op::Isetp { cmp: Cmp::Ne, u32: true, x: false, bop: BoolOp::And },
                    vec![Dst::Pred(q), Dst::Pred(PT)],
                    vec![Src::r32(Reg::V(gpr[&u])), Src::rz(), Src::pt()],
                );
                let ins = &mut f.cfg[b].instrs[k];
                if let Some(gd) = &mut ins.guard
                    && gd.pred == p
                {
                    gd.pred = q;
                }
                for s in ins.srcs.iter_mut() {
                    if let crate::sass::instr::SrcKind::Pred(x) = &mut s.kind
                        && *x == p
                    {
                        *x = q;
                    }
                }
                f.cfg[b].instrs.insert(k, remat);
                f.cfg[b].origins.insert(k, origin);
                k += 1;
            }
            if let Some(x) = written {
                // Under the guard the (rewritten) definition has.
                let mut save = Instr::new(
                    Op::Sel,
                    vec![Dst::reg(Reg::V(gpr[&x]), 1)],
                    vec![Src::rz(), Src::imm(1), Src::pred(Reg::V(x), true)],
                );
                save.guard = f.cfg[b].instrs[k].guard;
                f.cfg[b].instrs.insert(k + 1, save);
                f.cfg[b].origins.insert(k + 1, origin);
                k += 2;
                continue;
            }
            k += 1;
        }
    }
    Ok(())
}
