//! If-conversion: small conditional regions become predicated straight-line code.
//!
//! A block `A` ending in `@P BRA T` whose two successors `T` (taken) and `F` (fall-through)
//! are both reached only from `A`, both contain at most [`MAX_ARM_INSTRS`] instructions and
//! no control instruction, and both end in `BRA L` to the same join `L`, is rewritten to
//!
//! ```text
//! A:  ...
//!     @P  <T's instructions>       (guarded by the branch condition)
//!     @!P <F's instructions>       (guarded by its negation)
//!     SEL x, t, f, P               (one per 32-bit word of each block parameter of L whose
//!     BRA L                         arguments differ on the two edges)
//! ```
//!
//! A one-sided `if` has the form too: splitting critical edges (`opt::split_critical_edges`)
//! gives the skipped side an empty block. The branch disappears, and with it the `SSY`/`SYNC`
//! pair a divergent branch needs (`reconverge`), the 13-cycle predicate-to-branch stall and
//! the control-transfer stall (findings section 7, stall table).
//!
//! Justification (ptxas 11.8 `-O3 -arch=sm_50`, `samples/transpose_tiled.ptx`): ptxas
//! predicates whole guarded regions instead of branching around them, e.g. `@!P1 XMAD ..`,
//! `@!P1 ISCADD R2.CC, ..`, `@!P1 IADD.X ..`, `@!P1 LDG.E R2, [R2]`, interleaving four such
//! regions under `@!P1`..`@!P4`. A guarded instruction executes for the threads whose guard
//! holds and leaves every other thread's state untouched (nvdisasm predication), so
//! guarding each instruction of an arm with that arm's branch condition keeps the meaning:
//! side effects (memory) happen exactly for the threads that took the arm, and the values
//! the arm defines are only read under the same guard or through the `SEL`s, which pick
//! them only for those threads.
//!
//! SSA form holds: a guarded definition is still the single definition of its value (its
//! value is unspecified where the guard is false, and nothing reads it there), which is how
//! the optimiser (`opt::unguarded_def`) and the register allocator already treat guarded
//! instructions. Pseudo-ops (`join`, copies) stay unguarded: they only move values and
//! expand to register moves or nothing.
//!
//! A cold arm (a block lowering marks rarely executed, [`crate::ir::Block::cold`]) is
//! converted only if it is at most [`COLD_SLACK`] instructions longer than the other arm:
//! flattening would run it on every path.
//!
//! The pass also merges straight-line chains (`X: ...; BRA Y` where `Y` has `X` as its only
//! predecessor), which lowering and edge splitting leave behind, so that arms and joins
//! are single blocks.
//!
//! The pass's tables are indexed by block index (sized by the graph's node bound when the
//! pass starts; blocks are only removed meanwhile) and by virtual register number: read
//! through `get`/`get_mut`, whose `None` cannot happen for the blocks and registers of `f`
//! (a block outside them counts as removed, a register outside the renames as its own
//! name). A branch whose shape is not what [`eligible`] checked is left unconverted.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::{BlockId, Edge, EdgeKind, Function, VRegKind};
use crate::sass::instr::{Dst, Guard, Instr, Reg, RegRef, Src};
use crate::sass::op::{Op, Unit};
use petgraph::Direction;
use petgraph::visit::EdgeRef;

/// The most (non-pseudo) instructions the two arms of a converted branch may hold together.
/// Both arms issue on every path after conversion, so this bounds the issue slots spent
/// on the arm not taken; ptxas's predicated regions in `transpose_tiled` hold 4 to 8
/// instructions each.
pub const MAX_ARM_INSTRS: usize = 12;

/// How many more instructions than the other arm a cold arm ([`crate::ir::Block::cold`])
/// may hold and still be converted.
pub const COLD_SLACK: usize = 2;

/// The most `SEL` instructions (32-bit words of join parameters whose arguments differ) a
/// conversion may add.
pub const MAX_SELECTS: usize = 4;

/// Converts every eligible branch and merges straight-line chains. Returns true if the
/// function changed. Needs SSA form (`f.ssa`), runs before `reconverge::insert`.
///
/// Chains are merged to a fixed point first; then the first eligible branch in layout
/// order is converted, the chains it completes are merged, and so on. Only the blocks
/// around a change are looked at again (a block's eligibility depends on itself, its
/// successors and theirs), and renaming block parameters to the merged predecessor's
/// arguments is done once at the end ([`Pass::resolve`] meanwhile), so the pass is
/// `n log n` in the number of blocks plus linear in the instructions.
pub fn run(f: &mut Function) -> bool {
    let mut p = Pass::new(f);
    for b in f.layout.clone() {
        p.merge_queue.push(b);
    }
    p.merge_all(f);
    for b in f.layout.clone() {
        p.dirty(b);
    }
    while let Some(std::cmp::Reverse((_, a))) = p.convert_queue.pop() {
        let a = BlockId::new(a);
        if p.is_removed(a) {
            continue;
        }
        if let Some(conv) = eligible(f, &mut p, a) {
            p.convert(f, a, conv);
            p.merge_all(f);
        }
    }
    p.finish(f)
}

/// The state of [`run`]: the layout as a linked list, pending renames, work queues.
struct Pass {
    /// Position of each block in the initial layout (the conversion order).
    pos: Vec<usize>,
    next: Vec<Option<BlockId>>,
    prev: Vec<Option<BlockId>>,
    removed: Vec<bool>,
    /// Block parameters renamed to the arguments of the edge they were merged through.
    subst: Vec<u32>,
    merge_queue: Vec<BlockId>,
    convert_queue: std::collections::BinaryHeap<std::cmp::Reverse<(usize, usize)>>,
    changed: bool,
}

/// A branch to convert: taken arm, fall-through arm, join.
struct Conversion {
    t: BlockId,
    fl: BlockId,
    l: BlockId,
}

impl Pass {
    fn new(f: &Function) -> Pass {
        let nb = petgraph::visit::NodeIndexable::node_bound(&f.cfg);
        let mut pos = vec![usize::MAX; nb];
        let mut next = vec![None; nb];
        let mut prev = vec![None; nb];
        // Each block with the one after it and the one before it in the layout.
        let after = f.layout.iter().skip(1).copied().map(Some).chain(std::iter::once(None));
        let before = std::iter::once(None).chain(f.layout.iter().copied().map(Some));
        for (((k, &b), n), p) in f.layout.iter().enumerate().zip(after).zip(before) {
            if let (Some(pb), Some(nx), Some(pr)) =
                (pos.get_mut(b.index()), next.get_mut(b.index()), prev.get_mut(b.index()))
            {
                (*pb, *nx, *pr) = (k, n, p);
            }
        }
        Pass {
            pos,
            next,
            prev,
            removed: vec![false; nb],
            subst: (0..f.vregs.len() as u32).collect(),
            merge_queue: vec![],
            convert_queue: Default::default(),
            changed: false,
        }
    }

    /// True if `b` was removed (merged or converted away).
    fn is_removed(&self, b: BlockId) -> bool {
        self.removed.get(b.index()).copied().unwrap_or(true)
    }

    /// The current name of `v` (after the renames recorded so far).
    fn resolve(&mut self, mut v: u32) -> u32 {
        let mut path = vec![];
        while let Some(&s) = self.subst.get(v as usize)
            && s != v
        {
            path.push(v);
            v = s;
        }
        for p in path {
            if let Some(s) = self.subst.get_mut(p as usize) {
                *s = v;
            }
        }
        v
    }

    /// Records that `p` is renamed to `a`.
    fn rename(&mut self, p: u32, a: u32) {
        if let Some(s) = self.subst.get_mut(p as usize) {
            *s = a;
        }
    }

    /// `b` changed: its eligibility, and that of its predecessors (for which it may be an
    /// arm), are to be looked at again.
    fn dirty(&mut self, b: BlockId) {
        if let Some(&p) = self.pos.get(b.index())
            && p != usize::MAX
        {
            self.convert_queue.push(std::cmp::Reverse((p, b.index())));
        }
    }
    fn dirty_around(&mut self, f: &Function, b: BlockId) {
        self.dirty(b);
        for e in f.cfg.edges_directed(b, Direction::Incoming) {
            self.dirty(e.source());
        }
    }

    /// Removes `b` from the layout; the block before it is looked at again for merging
    /// (a block may absorb one ending in a conditional branch only if that one follows it).
    fn unlink(&mut self, b: BlockId) {
        if let Some(r) = self.removed.get_mut(b.index()) {
            *r = true;
        }
        let p = self.prev.get(b.index()).copied().flatten();
        let n = self.next.get(b.index()).copied().flatten();
        if let Some(p) = p {
            if let Some(pn) = self.next.get_mut(p.index()) {
                *pn = n;
            }
            self.merge_queue.push(p);
        }
        if let Some(np) = n.and_then(|n| self.prev.get_mut(n.index())) {
            *np = p;
        }
    }

    /// Merges every eligible chain reachable from the queue (to a fixed point).
    fn merge_all(&mut self, f: &mut Function) {
        while let Some(x) = self.merge_queue.pop() {
            if self.is_removed(x) {
                continue;
            }
            while let Some(y) = self.mergeable(f, x) {
                if !self.merge(f, x, y) {
                    break;
                }
            }
        }
    }

    /// The block `x` can absorb: `x` ends in `BRA Y`, `Y` has no other predecessor and is
    /// not the entry; when `Y` ends in a conditional branch, its fall-through block must
    /// stay next in the layout, so `Y` must directly follow `X`.
    fn mergeable(&self, f: &Function, x: BlockId) -> Option<BlockId> {
        let y = jump_target(f, x)?;
        let single_pred = f.cfg.edges_directed(y, Direction::Incoming).take(2).count() == 1;
        let ok = y != x
            && y != f.entry
            && single_pred
            && (!ends_in_cond_branch(f, y) || self.next.get(x.index()) == Some(&Some(y)));
        ok.then_some(y)
    }

    /// Merges `Y` into `X` (`X` ends in `BRA Y`, `Y`'s only predecessor). False, and
    /// nothing changed, if `X` has no edge (which [`Pass::mergeable`] rules out).
    fn merge(&mut self, f: &mut Function, x: BlockId, y: BlockId) -> bool {
        let Some(&e) = f.succ_edges(x).first() else { return false };
        let args = f.cfg[e].args.clone();
        let params = f.cfg[y].params.clone();
        for (p, a) in params.into_iter().zip(args) {
            let a = self.resolve(a);
            if a != p {
                self.rename(p, a);
            }
        }
        let yb = std::mem::take(&mut f.cfg[y]);
        let xb = &mut f.cfg[x];
        xb.instrs.pop();
        xb.origins.pop();
        xb.instrs.extend(yb.instrs);
        xb.origins.extend(yb.origins);
        xb.uni = yb.uni;
        // X only jumps to Y: they run equally often.
        xb.cold |= yb.cold;
        for (t, w) in out_edges(f, y) {
            f.cfg.add_edge(x, t, w);
        }
        f.cfg.remove_node(y);
        self.unlink(y);
        self.changed = true;
        self.dirty_around(f, x);
        true
    }

    /// Converts the branch at the end of `a` (checked by [`eligible`]).
    fn convert(&mut self, f: &mut Function, a: BlockId, c: Conversion) {
        let Conversion { t, fl, l } = c;
        // What `eligible` checked: both arms jump to `l`, `a` ends in a guarded branch.
        let (Some(&et), Some(&ef)) = (f.succ_edges(t).first(), f.succ_edges(fl).first()) else { return };
        let Some(g) = f.cfg[a].instrs.last().and_then(|br| br.guard) else { return };
        let Some(&origin) = f.cfg[a].origins.last() else { return };
        let arg_t = f.cfg[et].args.clone();
        let arg_f = f.cfg[ef].args.clone();
        let params = f.cfg[l].params.clone();
        f.cfg[a].instrs.pop();
        f.cfg[a].origins.pop();
        // Taken when `g` holds; the fall-through arm under its negation.
        for (arm, neg) in [(t, g.neg), (fl, !g.neg)] {
            let blk = std::mem::take(&mut f.cfg[arm]);
            // All but the arm's final `BRA` (`arm_ok`: it has one).
            let n = blk.instrs.len().saturating_sub(1);
            for (mut i, o) in blk.instrs.into_iter().zip(blk.origins).take(n) {
                if !i.op.is_pseudo() {
                    i.guard = Some(Guard { pred: g.pred, neg });
                }
                f.cfg[a].push(i, o);
            }
        }
        // Join arguments: one SEL per 32-bit word where the two arms pass different values.
        let mut args = vec![];
        // `eligible`: one argument per parameter on both edges.
        for ((p, &at), &af) in params.iter().zip(&arg_t).zip(&arg_f) {
            if self.resolve(at) == self.resolve(af) {
                args.push(at);
                continue;
            }
            let Some(&VRegKind::Gpr(n)) = f.vregs.get(*p as usize) else {
                unreachable!("predicate parameters are skipped")
            };
            let cond = Src::pred(g.pred, g.neg);
            let mut parts = vec![];
            let mut words = vec![];
            for w in 0..n {
                let part = |v: u32| {
                    let r = RegRef::new(Reg::V(v), n);
                    Src::reg(if n == 1 { r } else { r.part(w) })
                };
                let d = f.new_vreg(VRegKind::Gpr(1));
                f.cfg[a].push(Instr::new(Op::Sel, vec![Dst::reg(d, 1)], vec![part(at), part(af), cond]), origin);
                parts.push(Src::r32(d));
                words.push(d);
            }
            let v = if let [d] = words.as_slice() {
                *d
            } else {
                let d = f.new_vreg(VRegKind::Gpr(n));
                f.cfg[a].push(Instr::new(Op::Join, vec![Dst::reg(d, n)], parts), origin);
                d
            };
            let Reg::V(v) = v else { unreachable!("virtual") };
            args.push(v);
        }
        // New values are their own names.
        let known = self.subst.len() as u32;
        self.subst.extend(known..f.vregs.len() as u32);
        f.cfg[a].push(Instr::new(Op::Bra, vec![], vec![Src::label(l.index() as u32)]), origin);
        for e in f.cfg.edges_directed(a, Direction::Outgoing).map(|e| e.id()).collect::<Vec<_>>() {
            f.cfg.remove_edge(e);
        }
        f.cfg.remove_node(t);
        f.cfg.remove_node(fl);
        f.cfg.add_edge(a, l, Edge { kind: EdgeKind::Taken, args });
        self.unlink(t);
        self.unlink(fl);
        self.changed = true;
        self.merge_queue.push(a);
        self.dirty_around(f, a);
    }

    /// Writes the layout back and applies the renames; returns whether anything changed.
    fn finish(mut self, f: &mut Function) -> bool {
        f.layout.retain(|b| !self.is_removed(*b));
        if !self.changed {
            return false;
        }
        for v in 0..self.subst.len() as u32 {
            self.resolve(v);
        }
        let subst = &self.subst;
        for b in f.layout.clone() {
            for i in &mut f.cfg[b].instrs {
                crate::ir::for_each_use_mut(i, |v| *v = renamed(subst, *v));
            }
        }
        for e in f.cfg.edge_indices().collect::<Vec<_>>() {
            for a in &mut f.cfg[e].args {
                *a = renamed(subst, *a);
            }
        }
        true
    }
}

/// The name `v` resolved to in `subst` (its own for a register created after the pass).
fn renamed(subst: &[u32], v: u32) -> u32 {
    subst.get(v as usize).copied().unwrap_or(v)
}

/// The single successor of `b` when `b` ends in an unguarded `BRA`.
fn jump_target(f: &Function, b: BlockId) -> Option<BlockId> {
    let last = f.cfg[b].instrs.last()?;
    if last.op != Op::Bra || last.guard.is_some() {
        return None;
    }
    let mut s = f.cfg.edges_directed(b, Direction::Outgoing);
    let first = s.next()?;
    s.next().is_none().then(|| first.target())
}

/// True if `b` ends in a guarded `BRA` (whose fall-through successor must follow it in
/// the layout).
fn ends_in_cond_branch(f: &Function, b: BlockId) -> bool {
    f.cfg[b].instrs.last().is_some_and(|i| i.op == Op::Bra && i.guard.is_some())
}

/// The outgoing edges of `b` as (target, weight), in successor order.
fn out_edges(f: &Function, b: BlockId) -> Vec<(BlockId, Edge)> {
    f.succ_edges(b).into_iter().filter_map(|e| Some((f.cfg.edge_endpoints(e)?.1, f.cfg[e].clone()))).collect()
}

/// True if `b` can be an arm: single predecessor, ends in `BRA` to a single successor, no
/// control instruction or guard before that, no block parameters.
fn arm_ok(f: &Function, b: BlockId, a: BlockId) -> bool {
    let blk = &f.cfg[b];
    if b == f.entry || !blk.params.is_empty() || f.preds(b) != [a] || jump_target(f, b).is_none() {
        return false;
    }
    let Some((_, body)) = blk.instrs.split_last() else { return false };
    body.iter().all(|i| {
        i.guard.is_none() && !i.op.info().control && i.op.info().unit != Unit::Control && !matches!(i.op, Op::Call(_))
    })
}

/// Instructions that issue (not pseudo-ops) in the body of arm `b`.
fn issued(f: &Function, b: BlockId) -> usize {
    f.cfg[b].instrs.split_last().map_or(0, |(_, body)| body.iter().filter(|i| !i.op.is_pseudo()).count())
}

/// Whether the branch ending `a` can be converted (see the module docs).
fn eligible(f: &Function, p: &mut Pass, a: BlockId) -> Option<Conversion> {
    if !ends_in_cond_branch(f, a) {
        return None;
    }
    let edges = f.succ_edges(a);
    if edges.len() != 2 || edges.iter().any(|e| !f.cfg[*e].args.is_empty()) {
        return None;
    }
    let &[t, fl] = f.succs(a).as_slice() else { return None };
    debug_assert_eq!(edges.first().map(|e| f.cfg[*e].kind), Some(EdgeKind::Taken));
    if t == fl || !arm_ok(f, t, a) || !arm_ok(f, fl, a) {
        return None;
    }
    let (Some(lt), Some(lf)) = (jump_target(f, t), jump_target(f, fl)) else { return None };
    let (it, ifl) = (issued(f, t), issued(f, fl));
    // Instruction counts: far below `usize::MAX`, the sums saturate never.
    if lt != lf || lt == a || it.saturating_add(ifl) > MAX_ARM_INSTRS {
        return None;
    }
    // A cold arm (the call of an f64 slow path) much longer than the other would run on
    // every path after conversion instead of almost never.
    if (f.cfg[t].cold && it > ifl.saturating_add(COLD_SLACK)) || (f.cfg[fl].cold && ifl > it.saturating_add(COLD_SLACK))
    {
        return None;
    }
    let l = lt;
    let arg_t = &f.cfg[*f.succ_edges(t).first()?].args;
    let arg_f = &f.cfg[*f.succ_edges(fl).first()?].args;
    let params = &f.cfg[l].params;
    if arg_t.len() != params.len() || arg_f.len() != params.len() {
        return None;
    }
    let mut words: usize = 0;
    let mut pred_param = false;
    for ((v, &at), &af) in params.iter().zip(arg_t).zip(arg_f) {
        if p.resolve(at) != p.resolve(af) {
            match f.vregs.get(*v as usize)? {
                // At most 4 words per register: the sum saturates never.
                VRegKind::Gpr(n) => words = words.saturating_add(usize::from(*n)),
                VRegKind::Pred => pred_param = true,
            }
        }
    }
    if pred_param || words > MAX_SELECTS {
        return None;
    }
    Some(Conversion { t, fl, l })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;
    use crate::ptx::ast::FuncKind;
    use crate::sass::op::{BoolOp, Cmp};

    /// `A: @p BRA T; F: BRA L; T: six IADDs; BRA L; L: EXIT` with `T` cold or not.
    fn diamond(cold: bool) -> Function {
        let mut f = Function::new("f", FuncKind::Entry);
        let a = f.entry;
        let (t, fl, l) = (f.new_block("t"), f.new_block("f"), f.new_block("l"));
        f.layout.extend([fl, t, l]);
        let x = f.new_vreg(VRegKind::Gpr(1));
        let p = f.new_vreg(VRegKind::Pred);
        let blk = |f: &mut Function, b: BlockId, i: Instr| f.cfg[b].push(i, Default::default());
        blk(&mut f, a, Instr::new(Op::Mov32i, vec![Dst::reg(x, 1)], vec![Src::imm(5)]));
        blk(
            &mut f,
            a,
            Instr::new(
                Op::Isetp { cmp: Cmp::Gt, u32: true, x: false, bop: BoolOp::And },
                vec![Dst::Pred(p), Dst::Pred(crate::sass::instr::PT)],
                vec![Src::r32(x), Src::imm(3), Src::pt()],
            ),
        );
        blk(&mut f, a, Instr::new(Op::Bra, vec![], vec![Src::label(t.index() as u32)]).guarded(p, false));
        f.cfg.add_edge(a, t, Edge { kind: EdgeKind::Taken, args: vec![] });
        f.cfg.add_edge(a, fl, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
        for _ in 0..6 {
            let y = f.new_vreg(VRegKind::Gpr(1));
            blk(
                &mut f,
                t,
                Instr::new(Op::Iadd32i { cc: false, x: false }, vec![Dst::reg(y, 1)], vec![Src::r32(x), Src::imm(1)]),
            );
        }
        f.cfg[t].cold = cold;
        for b in [t, fl] {
            blk(&mut f, b, Instr::new(Op::Bra, vec![], vec![Src::label(l.index() as u32)]));
            f.cfg.add_edge(b, l, Edge { kind: EdgeKind::Taken, args: vec![] });
        }
        blk(&mut f, l, Instr::new(Op::Exit, vec![], vec![]));
        f.ssa = true;
        f
    }

    fn branches(f: &Function) -> usize {
        f.layout.iter().flat_map(|b| &f.cfg[*b].instrs).filter(|i| i.op == Op::Bra && i.guard.is_some()).count()
    }

    /// A six-instruction arm against an empty one is converted, unless it is cold.
    #[test]
    fn cold_arms_are_not_flattened() {
        let mut hot = diamond(false);
        run(&mut hot);
        assert_eq!(branches(&hot), 0, "{hot}");
        let mut cold = diamond(true);
        run(&mut cold);
        assert_eq!(branches(&cold), 1, "{cold}");
    }
}
