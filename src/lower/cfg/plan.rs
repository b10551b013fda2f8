//! Where each divergent branch and each loop with divergent exits reconverges, and which
//! stack entry (SSY or PBK) holds its threads: the plan [`crate::lower::cfg::reconverge`]
//! applies, or the shapes it cannot apply to, which `restructure` fixes first.
//!
//! * The **join** of a divergent branch `B` is its immediate post-dominator, or, when its
//!   paths never meet because some of them exit, where the paths that can still reach a
//!   warp-synchronous instruction meet ([`Joins::join`]); inside a loop that needs PBK,
//!   where the threads staying in the loop meet (the others wait at the loop's target).
//! * A loop needs **PBK** when a divergent branch in it lets threads leave apart. Its
//!   **target** is the nearest common post-dominator of its exit targets: the blocks
//!   between the exits and the target (ptxas's "exit paths": `find`'s `out[i] = -2`
//!   before `BRK`) run inside the PBK region. Exits that only exit need no target.
//! * Sources (branches and loops) with the same join share **one entry**, pushed at the
//!   first of them that is not inside the region of an earlier one: the loop's preheader
//!   or the branch's block. It is a PBK when a loop is among them (edges into the join
//!   are then `BRK`, which also leaves nested SSY regions), else an SSY (edges are
//!   `SYNC`). ptxas does the same for `find`: one `PBK` before the bounds check, whose
//!   `@P1 BRK` and the loop's `BRK`s all land at `.L_x_0`.
//! * The **region** of an entry is every block reachable from its push without passing
//!   the join or leaving an enclosing PBK loop. It must be entered only through the push
//!   ([`Problem::SideEntry`] otherwise), must not run into the next iteration of an
//!   enclosing loop, and must reach the join ([`Problem::LoopExits`] otherwise).
//!
//! Per-block tables (indexed by `BlockId::index()`) and per-loop ones (by loop number in
//! the forest) are read through `get`, whose `None` cannot happen for the blocks and
//! loops of the function planned.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::graph::{IterMeet, IterationPostDom, LoopForest, PostDom, dominators, quiet_blocks, reverse_post_order};
use crate::ir::{BlockId, Function};
use petgraph::visit::NodeIndexable;
use std::collections::{HashMap, HashSet};

/// The kind of reconvergence-stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `SSY join` ... `SYNC`.
    Ssy,
    /// `PBK join` ... `BRK`.
    Pbk,
}

/// One stack entry to insert.
#[derive(Clone, Debug)]
pub struct Entry {
    /// SSY or PBK.
    pub kind: Kind,
    /// The block that pushes it (before its terminator).
    pub push: BlockId,
    /// The reconvergence point (SSY/PBK target).
    pub join: BlockId,
    /// The blocks from the push to the join (push included, join excluded).
    pub region: HashSet<BlockId>,
    /// The loops (indices in the plan's loop forest) whose PBK this entry is.
    pub loops: Vec<usize>,
}

/// A shape the plan cannot handle; `restructure` rewrites it.
#[derive(Clone, Debug)]
pub enum Problem {
    /// The loop with this header needs PBK but has no preheader.
    NoPreheader(BlockId),
    /// The exits of the loop with this header do not meet at a block its PBK region can
    /// reach (several exits meeting only outside an enclosing loop, or never).
    LoopExits(BlockId),
    /// Blocks of a region are entered from outside it.
    SideEntry {
        /// The region.
        region: HashSet<BlockId>,
        /// Its blocks with a predecessor outside it.
        entered: Vec<BlockId>,
    },
    /// The region of the divergent branch ending this block never reaches its join (a
    /// bug: its join post-dominates it inside its loop).
    Unreachable(BlockId),
    /// A divergent branch in the loop with this header whose sides meet at `exit` (in the
    /// loop) in the whole function but within an iteration only after one side came back
    /// to the header: a cycle inside the loop, through its header and avoiding `exit`,
    /// that leaves only through `exit` ([`super::nest`] makes it a loop of its own).
    InnerCycle {
        /// The shared header.
        header: BlockId,
        /// Where every path out of the inner cycle goes.
        exit: BlockId,
    },
}

/// Where divergent paths meet: post-dominators of the whole function, modulo quiet exits
/// ([`quiet_blocks`]), and within each iteration of each loop.
pub struct Joins {
    pdom: PostDom,
    pdq: PostDom,
    /// Quiet blocks, indexed by `NodeIndex::index()`.
    pub quiet: Vec<bool>,
    /// The loop forest.
    pub forest: LoopForest,
    iteration: Vec<IterationPostDom>,
}

/// Where the exit targets of a loop meet ([`Joins::common`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meet {
    /// At this block.
    At(BlockId),
    /// Never, and no path from them reaches a warp-synchronous instruction.
    Never,
    /// Never, although some path continues to a warp-synchronous instruction.
    Apart,
}

impl Joins {
    /// The analyses for `f`.
    pub fn new(f: &Function) -> Joins {
        let quiet = quiet_blocks(f);
        let forest = LoopForest::new(f, &dominators(f));
        let iteration = IterationPostDom::for_forest(f, &forest);
        Joins { pdom: PostDom::new(f), pdq: PostDom::modulo_quiet(f, &quiet), quiet, forest, iteration }
    }

    /// Where the paths from `b` meet in the whole function: its immediate post-dominator,
    /// or, if some of its paths exit without meeting the others, the immediate
    /// post-dominator among the paths that can still reach a warp-synchronous instruction
    /// (threads that only exit never need to wait). `None` if they never meet.
    pub fn join_whole(&self, b: BlockId) -> Option<BlockId> {
        self.pdom.ipdom(b).or_else(|| if self.is_quiet(b) { None } else { self.pdq.ipdom(b) })
    }

    /// True if `b` is quiet ([`quiet_blocks`]).
    pub fn is_quiet(&self, b: BlockId) -> bool {
        self.quiet.get(b.index()).copied().unwrap_or(false)
    }

    /// The join of a divergent branch ending `b`: in a loop, where its paths meet within
    /// the iteration (the loop's header when that is only at the next iteration, as for a
    /// `continue` on one side; `None` when they all leave the loop); elsewhere
    /// [`Joins::join_whole`].
    pub fn join(&self, b: BlockId) -> Option<BlockId> {
        match self.forest.innermost.get(b.index()).copied().flatten() {
            Some(l) => match self.iteration.get(l).map_or(IterMeet::Never, |it| it.ipdom(b)) {
                IterMeet::Block(j) => Some(j),
                IterMeet::NextIteration => self.forest.loops.get(l).map(|lp| lp.header),
                IterMeet::Never => None,
            },
            None => self.join_whole(b),
        }
    }

    /// True if the divergent branch ending `b` lets threads leave the loop `body` apart:
    /// it exits the loop itself, or its sides meet again only outside the loop (or never),
    /// as a branch with a `break` on one side does, whatever the break's condition.
    pub fn leaves<S: std::hash::BuildHasher>(&self, f: &Function, b: BlockId, body: &HashSet<BlockId, S>) -> bool {
        f.succs(b).iter().any(|s| !body.contains(s)) || self.join_whole(b).is_none_or(|j| !body.contains(&j))
    }

    /// Where the exit targets `targets` of the loop `body` meet: their nearest common
    /// post-dominator, or that of the ones that are not quiet (the quiet ones only exit),
    /// provided no warp-synchronous instruction lies between the targets and it: the
    /// threads that leave first run those blocks while the others are still in the loop,
    /// and a `BAR` or `VOTE` there would run with part of the warp. (ptxas 11.8 puts its
    /// PBK target after such a `bar.sync` in `tests/programs/while_true.ptx`, running the
    /// barrier with part of the warp; we move the target before it.)
    pub fn common<S: std::hash::BuildHasher>(
        &self,
        f: &Function,
        body: &HashSet<BlockId, S>,
        targets: &[BlockId],
    ) -> Meet {
        let clean = |t: BlockId| {
            super::graph::reach(f, targets, |b| b == t || body.contains(&b))
                .iter()
                .all(|b| !f.cfg[*b].instrs.iter().any(|i| super::graph::warp_synchronous(i.op)))
        };
        if let Some(c) = self.pdom.common(targets)
            && clean(c)
        {
            return Meet::At(c);
        }
        let loud: Vec<BlockId> = targets.iter().copied().filter(|t| !self.is_quiet(*t)).collect();
        if loud.is_empty() {
            return Meet::Never;
        }
        match self.pdq.common(&loud) {
            Some(c) if clean(c) => Meet::At(c),
            _ => Meet::Apart,
        }
    }

    /// True if every path from `b` comes to `w` in the sense of [`Joins::join`]: `w`
    /// post-dominates `b`, or, when `b`'s paths never all meet, post-dominates it modulo
    /// quiet exits. Then `b`'s join is `w` or comes before it.
    pub fn reaches_all(&self, w: BlockId, b: BlockId) -> bool {
        if self.pdom.ipdom(b).is_some() { self.pdom.post_dominates(w, b) } else { self.pdq.post_dominates(w, b) }
    }
}

/// The loops of `f` that need PBK, with their targets (`None`: exits that never meet and
/// only exit), and the problems found on the way.
pub struct Loops {
    /// The loop forest.
    pub forest: LoopForest,
    /// Per loop: `Some(target)` when it needs PBK.
    pub target: Vec<Option<Option<BlockId>>>,
}

impl Loops {
    /// True if loop `l` needs a PBK entry.
    pub fn pbk(&self, l: usize) -> bool {
        matches!(self.target.get(l), Some(Some(Some(_))))
    }
}

/// Finds the PBK loops of `f` given its divergent branches.
pub fn loops(f: &Function, joins: &Joins, divergent: &HashSet<BlockId>, problems: &mut Vec<Problem>) -> Loops {
    let forest = joins.forest.clone();
    let mut target = vec![None; forest.loops.len()];
    for ((l, lp), target) in forest.loops.iter().enumerate().zip(target.iter_mut()) {
        let body = &lp.body;
        let divergent_exit = body.iter().any(|b| divergent.contains(b) && joins.leaves(f, *b, body));
        if !divergent_exit {
            continue;
        }
        let mut targets: Vec<BlockId> = forest.exits(f, l).into_iter().map(|(_, s)| s).collect();
        targets.sort();
        targets.dedup();
        *target = Some(match joins.common(f, body, &targets) {
            Meet::At(t) if !body.contains(&t) => Some(t),
            Meet::Never => None,
            _ => {
                problems.push(Problem::LoopExits(lp.header));
                None
            }
        });
    }
    Loops { forest, target }
}

/// `b`, or the block it jumps to when it only jumps (an edge split by
/// `opt::split_critical_edges`), repeatedly, but not past a block of `stops` (the joins of
/// other entries) nor into a loop header of `headers` (the jump is then its preheader,
/// where its PBK goes): a loop's exit target is where its threads meet, not the empty
/// block in front of it (the jump then runs inside the PBK region as a `BRK`), so that
/// the loop can share the PBK of a branch around it that joins there.
pub fn past_jumps(f: &Function, mut b: BlockId, stops: &HashSet<BlockId>, headers: &HashSet<BlockId>) -> BlockId {
    for _ in 0..64 {
        // Jump-only: a `BRA` after nothing but `undef`s (which SSA construction and the
        // landings of `restructure` leave, and which move to the entry block).
        let blk = &f.cfg[b];
        let Some((last, rest)) = blk.instrs.split_last() else { break };
        if stops.contains(&b)
            || !blk.params.is_empty()
            || rest.iter().any(|i| i.op != crate::sass::op::Op::Undef)
            || last.op != crate::sass::op::Op::Bra
            || last.guard.is_some()
        {
            break;
        }
        let Some(&s) = f.succs(b).first() else { break };
        if headers.contains(&s) {
            break;
        }
        b = s;
    }
    b
}

/// The plan for `f` (reducible) given its divergent branches (blocks ending in a
/// divergent conditional `BRA`), or every problem found.
pub fn plan(f: &Function, divergent: &HashSet<BlockId>) -> Result<Vec<Entry>, Vec<Problem>> {
    let joins = Joins::new(f);
    let mut problems = vec![];
    let lps = loops(f, &joins, divergent, &mut problems);
    let forest = &lps.forest;
    let rpo = reverse_post_order(f);
    let mut rpo_pos = vec![usize::MAX; f.cfg.node_bound()];
    for (i, b) in rpo.iter().enumerate() {
        if let Some(p) = rpo_pos.get_mut(b.index()) {
            *p = i;
        }
    }
    // Sources per join: (push block, loop).
    let mut branch_sources: Vec<(BlockId, BlockId)> = vec![];
    let mut branches: Vec<BlockId> =
        divergent.iter().copied().filter(|b| rpo_position(&rpo_pos, *b) != usize::MAX).collect();
    branches.sort_by_key(|b| rpo_position(&rpo_pos, *b));
    for b in branches {
        let encl = forest.enclosing(b).into_iter().find(|l| lps.pbk(*l));
        // A branch leaving its PBK loop: the loop's entry reconverges its threads.
        if let Some(l) = encl
            && f.succs(b).iter().any(|s| !forest.contains(l, *s))
        {
            continue;
        }
        if let Some(p) = super::nest::inner_cycle(f, &joins, b) {
            problems.push(p);
            continue;
        }
        if let Some(j) = joins.join(b) {
            branch_sources.push((j, b));
        }
    }
    let mut loop_sources: Vec<(usize, BlockId, BlockId)> = vec![];
    for (l, (lp, target)) in forest.loops.iter().zip(&lps.target).enumerate() {
        let Some(Some(t)) = *target else { continue };
        match forest.preheader(f, l) {
            Some(p) => loop_sources.push((l, p, t)),
            None => problems.push(Problem::NoPreheader(lp.header)),
        }
    }
    // A loop's threads meet past the jump-only blocks after its exits, where a branch
    // around the loop may join too (one PBK for both, as ptxas does); when that shared
    // region would hold a `break` out of an enclosing PBK loop (whose `BRK` would find
    // the shared PBK first), the loop keeps its jump block as a target of its own.
    let mut own: HashSet<usize> = HashSet::new();
    let branch_joins: HashSet<BlockId> = branch_sources.iter().map(|(j, _)| *j).collect();
    let headers: HashSet<BlockId> = forest.loops.iter().map(|l| l.header).collect();
    loop {
        let mut sources: HashMap<BlockId, Vec<(BlockId, Option<usize>)>> = HashMap::new();
        for &(j, b) in &branch_sources {
            sources.entry(j).or_default().push((b, None));
        }
        for &(l, p, t) in &loop_sources {
            let t = if own.contains(&l) { t } else { past_jumps(f, t, &branch_joins, &headers) };
            sources.entry(t).or_default().push((p, Some(l)));
        }
        let mut found = problems.clone();
        let (entries, escaping) = group(f, &lps, sources, &rpo_pos, &mut found);
        stale_breaks(f, &lps, &entries, &mut found);
        let mut more = false;
        for l in escaping {
            // `escaping` holds loops of PBK entries: loops with a target and a header.
            let (Some(Some(Some(t))), Some(lp)) = (lps.target.get(l), forest.loops.get(l)) else { continue };
            let t = *t;
            if own.contains(&l) || past_jumps(f, t, &branch_joins, &headers) == t {
                found.push(Problem::LoopExits(lp.header));
            } else {
                own.insert(l);
                more = true;
            }
        }
        if !more {
            return if found.is_empty() { Ok(entries) } else { Err(found) };
        }
    }
}

/// The reverse post-order position of `b` in `rpo_pos` (`usize::MAX`: unreachable).
fn rpo_position(rpo_pos: &[usize], b: BlockId) -> usize {
    rpo_pos.get(b.index()).copied().unwrap_or(usize::MAX)
}

/// Groups the sources of each join into entries (see the module docs). Returns the
/// entries and the loops in PBK entries whose regions hold a `break` out of an enclosing
/// PBK loop; problems go to `problems`.
fn group(
    f: &Function,
    lps: &Loops,
    mut sources: HashMap<BlockId, Vec<(BlockId, Option<usize>)>>,
    rpo_pos: &[usize],
    problems: &mut Vec<Problem>,
) -> (Vec<Entry>, Vec<usize>) {
    let forest = &lps.forest;
    let mut order: Vec<BlockId> = sources.keys().copied().collect();
    order.sort_by_key(|j| (rpo_position(rpo_pos, *j), j.index()));
    let mut entries = vec![];
    let mut escaping = vec![];
    for join in order {
        let mut srcs = sources.remove(&join).unwrap_or_default();
        srcs.sort_by_key(|(p, l)| (rpo_position(rpo_pos, *p), l.is_some()));
        // (entry, breaks out of an enclosing PBK loop, loops covered)
        let mut group: Vec<(Entry, bool, Vec<usize>)> = vec![];
        for (push, lp) in srcs {
            let at = lp.and_then(|l| forest.loops.get(l)).map_or(push, |lp| lp.header);
            if let Some((e, _, ls)) = group.iter_mut().find(|(e, _, _)| e.push == push || e.region.contains(&at)) {
                if let Some(l) = lp {
                    e.kind = Kind::Pbk;
                    e.loops.push(l);
                    ls.push(l);
                }
                continue;
            }
            match region(f, lps, push, join) {
                Ok((region, escapes)) => {
                    let kind = if lp.is_some() { Kind::Pbk } else { Kind::Ssy };
                    let loops: Vec<usize> = lp.into_iter().collect();
                    group.push((Entry { kind, push, join, region, loops: loops.clone() }, escapes, loops));
                }
                Err(Some(p)) => problems.push(p),
                Err(None) => match lp {
                    Some(l) => problems.extend(forest.loops.get(l).map(|lp| Problem::LoopExits(lp.header))),
                    // A branch leaving a loop whose exits need no PBK (they never meet and
                    // reach no warp-synchronous instruction, `Meet::Never`): the threads
                    // that leave never wait for the others, so the branch needs no entry
                    // either (its region would run into the enclosing loop's next
                    // iteration: a `break` to the back edge of an outer loop, without
                    // the clean-up passes, `tests/reconverge_shapes.rs`).
                    None if forest.enclosing(push).into_iter().any(|l| {
                        lps.target.get(l) == Some(&Some(None)) && f.succs(push).iter().any(|s| !forest.contains(l, *s))
                    }) => {}
                    None => problems.push(Problem::Unreachable(push)),
                },
            }
        }
        for (e, escapes, ls) in group {
            if e.kind == Kind::Pbk && escapes {
                escaping.extend(ls);
            }
            entries.push(e);
        }
    }
    (entries, escaping)
}

/// True if a thread entering `s` comes to `t` through jump-only blocks (which the
/// conversion to `BRK` bypasses) and blocks of straight-line code reached only from the
/// previous one, with no warp-synchronous instruction.
fn breaks_to(f: &Function, mut s: BlockId, t: BlockId, stops: &HashSet<BlockId>, headers: &HashSet<BlockId>) -> bool {
    for _ in 0..64 {
        if s == t {
            return true;
        }
        let j = past_jumps(f, s, stops, headers);
        if j != s {
            s = j;
            continue;
        }
        let blk = &f.cfg[s];
        let Some((last, rest)) = blk.instrs.split_last() else { return false };
        let straight = blk.params.is_empty()
            && f.preds(s).len() == 1
            && last.op == crate::sass::op::Op::Bra
            && last.guard.is_none()
            && rest.iter().all(|i| !i.op.info().control && !super::graph::warp_synchronous(i.op) && i.guard.is_none());
        if !straight {
            return false;
        }
        let Some(&next) = f.succs(s).first() else { return false };
        s = next;
    }
    false
}

/// Checks the `break`s out of SSY regions: a thread leaving an SSY region other than
/// through its join must reach `BRK` without meeting other paths or a `SYNC` (`BRK` skips
/// the SSY entry, which stays on the stack until then), so the edge must lead to the
/// target of the innermost PBK entry around it through jump-only blocks (bypassed) and
/// straight-line blocks of its own ([`breaks_to`]): the stack would otherwise differ
/// between the paths into a shared block, and a `SYNC` there would find the stale entry.
/// Otherwise the loop gets a landing ([`Problem::LoopExits`]).
fn stale_breaks(f: &Function, lps: &Loops, entries: &[Entry], problems: &mut Vec<Problem>) {
    let forest = &lps.forest;
    let joins: HashSet<BlockId> = entries.iter().map(|e| e.join).collect();
    let headers: HashSet<BlockId> = forest.loops.iter().map(|l| l.header).collect();
    // The innermost PBK entry around each block: (region size, join).
    let mut pbk_at: HashMap<BlockId, (usize, BlockId)> = HashMap::new();
    for e in entries.iter().filter(|e| e.kind == Kind::Pbk) {
        for x in &e.region {
            let cur = pbk_at.entry(*x).or_insert((usize::MAX, e.join));
            if e.region.len() < cur.0 {
                *cur = (e.region.len(), e.join);
            }
        }
    }
    let mut bad: Vec<BlockId> = vec![];
    for e in entries.iter().filter(|e| e.kind == Kind::Ssy) {
        for &x in &e.region {
            for s in f.succs(x) {
                if s == e.join || e.region.contains(&s) {
                    continue;
                }
                if pbk_at.get(&x).is_some_and(|(_, t)| breaks_to(f, s, *t, &joins, &headers)) {
                    continue;
                }
                // The loop this edge leaves.
                let l = forest.enclosing(x).into_iter().find(|l| lps.pbk(*l) && !forest.contains(*l, s));
                let h = l.and_then(|l| forest.loops.get(l)).map_or(x, |lp| lp.header);
                if !bad.contains(&h) {
                    bad.push(h);
                }
            }
        }
    }
    bad.sort();
    problems.extend(bad.into_iter().map(Problem::LoopExits));
}

/// The region from `push` to `join` (see the module docs), and whether an edge from it
/// leaves an enclosing PBK loop (a `break` of that loop, left out of the region).
/// `Err(None)` when it runs into the next iteration of an enclosing loop or never reaches
/// the join; `Err(Some(side entry))` when it is entered from outside.
pub fn region(
    f: &Function,
    lps: &Loops,
    push: BlockId,
    join: BlockId,
) -> Result<(HashSet<BlockId>, bool), Option<Problem>> {
    let forest = &lps.forest;
    let encl = forest.enclosing(push);
    let headers: HashSet<BlockId> = encl.iter().filter_map(|l| forest.loops.get(*l)).map(|lp| lp.header).collect();
    let bounds: Vec<&rustc_hash::FxHashSet<BlockId>> =
        encl.iter().filter(|l| lps.pbk(**l)).filter_map(|l| forest.loops.get(*l)).map(|lp| &lp.body).collect();
    let mut r: HashSet<BlockId> = [push].into_iter().collect();
    let mut work: Vec<BlockId> = f.succs(push);
    let mut reached = false;
    let mut escapes = false;
    while let Some(x) = work.pop() {
        if x == join {
            reached = true;
            continue;
        }
        if bounds.iter().any(|b| !b.contains(&x)) {
            escapes = true;
            continue;
        }
        if headers.contains(&x) {
            return Err(None);
        }
        if r.insert(x) {
            work.extend(f.succs(x));
        }
    }
    if !reached {
        return Err(None);
    }
    let mut entered: Vec<BlockId> =
        r.iter().copied().filter(|x| *x != push && f.preds(*x).iter().any(|p| !r.contains(p))).collect();
    if !entered.is_empty() {
        entered.sort();
        return Err(Some(Problem::SideEntry { region: r, entered }));
    }
    Ok((r, escapes))
}
