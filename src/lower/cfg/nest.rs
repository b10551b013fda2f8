//! Separating an inner cycle that shares its loop's header ([`Problem::InnerCycle`]), out
//! of SSA form like the other fixes of [`super::restructure`].
//!
//! A natural loop is one per header, so back edges to one header make one loop even when
//! some of them close a cycle of their own inside it: `H: @p BRA H` (a spin on `p`) followed
//! by `W: BAR.SYNC; @q BRA H` is one loop `{H, W}` with two back edges. A divergent branch
//! whose sides meet at `W` in the whole function but only at the next iteration within the
//! loop (one side is the back edge) then reconverged at `H`, and the threads leaving the
//! spin ran `W`'s barrier while the others still spun (the reconvergence checker rejected
//! it: "`BAR.SYNC` ... runs before the threads of the divergent branch ... reconverge";
//! `tests/data/fuzz/reconverge_inner_cycle.ptx`). Every path out of the inner cycle passes `W`, so its threads can
//! all come there: they must wait for each other before it.
//!
//! The fix makes the inner cycle a loop of its own, whose exits the plan reconverges with a
//! PBK entry as for any loop:
//!
//! 1. `R`: the blocks reached from `W` within the loop without entering `H` (the part of an
//!    iteration after the cycle). Blocks of `R` other than `W` entered from the rest of the
//!    loop (a latch both sides share) are copied, with what they reach in `R` short of `W`
//!    and `H`, and the edges from the rest of the loop go to the copies.
//! 2. A new block `H'` (`BRA H`) in front of `H` takes the edges into `H` from outside the
//!    loop and from `R`: `H'` heads the outer loop, and `H` with the remaining back edges
//!    the inner one, which `W` (outside it) post-dominates.
//!
//! ptxas 11.8 (`-O3`) deletes the side-effect-free spin of the fuzz reproducer
//! (`tests/data/fuzz/reconverge_inner_cycle.ptx`). With a side effect in the spin (an
//! `atom.shared.add` of 0, the reproducer's terminating variant) it keeps the shape and
//! pushes no entry for the spin: `@!P1 BRA` back to its top, then `LDS` and `BAR.SYNC 0x0`
//! right after it, the only SSY around the whole scan loop; the threads leaving the spin
//! first wait on the stack while the others still spin, and the barrier runs with part of
//! the warp. We reconverge them instead (`PBK` before the spin, `BRK` on its exit, the
//! barrier after the PBK target), which the checker requires and the simulator runs like
//! the PTX interpreter.
// No panicking shortcuts (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::graph::{LoopForest, copy_blocks, reach, retarget};
use super::plan::Problem;
use crate::ir::{BlockId, Edge, EdgeKind, Function};
use crate::sass::instr::{Instr, Src};
use crate::sass::op::Op;
use std::collections::HashSet;

/// Separates the inner cycle of the loop headed by `header` that avoids `w` (see the
/// module docs). `divergent` gains the copies of divergent branches; `budget` (in
/// instructions) pays for the copies. Errors: more copying than `budget` allows, or an
/// internal inconsistency (the loop or an edge missing).
pub fn separate(
    f: &mut Function,
    forest: &LoopForest,
    header: BlockId,
    w: BlockId,
    divergent: &mut HashSet<BlockId>,
    budget: &mut usize,
) -> Result<(), String> {
    let lp = forest
        .loops
        .iter()
        .find(|l| l.header == header)
        .ok_or_else(|| format!("internal error in restructuring: no loop headed by BB{}", header.index()))?;
    let body: HashSet<BlockId> = lp.body.iter().copied().collect();
    if !body.contains(&w) || w == header {
        return Err(format!(
            "internal error in restructuring: BB{} is not inside the loop of BB{}",
            w.index(),
            header.index()
        ));
    }
    // 1. The part after the cycle, and the blocks of it the cycle enters besides `w`.
    let after: HashSet<BlockId> = reach(f, &[w], |b| b == header || !body.contains(&b)).into_iter().collect();
    let mut entered: Vec<BlockId> = after
        .iter()
        .copied()
        .filter(|x| *x != w && f.preds(*x).iter().any(|p| body.contains(p) && !after.contains(p)))
        .collect();
    entered.sort();
    if !entered.is_empty() {
        let pos = f.layout_positions();
        let mut blocks = reach(f, &entered, |b| b == w || b == header || !after.contains(&b));
        blocks.sort_by_key(|b| pos.get(b.index()).copied().unwrap_or(usize::MAX));
        let size: usize = blocks.iter().map(|b| f.cfg[*b].instrs.len()).sum();
        *budget = budget.checked_sub(size).ok_or_else(|| {
            format!(
                "control flow too irregular to reconverge: separating the inner cycle of a loop would copy \
                 {size} more instructions (limit {}x the function's size)",
                super::restructure::GROWTH_LIMIT
            )
        })?;
        let map = copy_blocks(f, &blocks);
        for b in &blocks {
            if divergent.contains(b)
                && let Some(&c) = map.get(b)
            {
                divergent.insert(c);
            }
        }
        for &x in &entered {
            let copy = *map
                .get(&x)
                .ok_or_else(|| format!("internal error in restructuring: BB{} was not copied", x.index()))?;
            for pe in f.pred_edges(x) {
                let Some((p, _)) = f.cfg.edge_endpoints(pe) else { continue };
                if body.contains(&p) && !after.contains(&p) {
                    retarget(f, pe, copy).ok_or_else(|| {
                        format!("internal error in restructuring: an edge into BB{} is gone", x.index())
                    })?;
                }
            }
        }
    }
    // 2. The outer header in front of `header`, taking the entering edges and those of the
    // outer back edges (from `after`: the copies are not in it).
    let outer: Vec<_> = f
        .pred_edges(header)
        .into_iter()
        .filter(|e| f.cfg.edge_endpoints(*e).is_some_and(|(p, _)| !body.contains(&p) || after.contains(&p)))
        .collect();
    let origin = f.cfg[header].origins.first().copied().unwrap_or_default();
    let h2 = f.new_block("");
    f.cfg[h2].push(Instr::new(Op::Bra, vec![], vec![Src::label(header.index() as u32)]), origin);
    f.cfg.add_edge(h2, header, Edge { kind: EdgeKind::Taken, args: vec![] });
    let at = f
        .layout
        .iter()
        .position(|b| *b == header)
        .ok_or_else(|| format!("internal error in restructuring: BB{} is not in the layout", header.index()))?;
    f.layout.insert(at, h2);
    if f.entry == header {
        f.entry = h2;
    }
    for e in outer {
        retarget(f, e, h2)
            .ok_or_else(|| format!("internal error in restructuring: an edge into BB{} is gone", header.index()))?;
    }
    Ok(())
}

/// The inner cycle problem of the divergent branch ending `b`, if any: its sides meet in
/// the whole function at a block `w` of its innermost loop other than the header, but
/// within an iteration only later (one side comes back to the header first, through a
/// cycle that avoids `w`).
///
/// Reported only when [`separate`] makes progress on it, i.e. when `b` lies on a cycle
/// through the header `H` that avoids `w`: `b` is not in `R` (the blocks reached from `w`
/// in the loop without entering `H`) and reaches `H` in the loop without passing `w`.
/// Proof of progress: `separate` neither copies nor moves `b` (only blocks of `R` are
/// copied), and keeps a cycle `H ->* b ->* H` avoiding `w`: its part `H ->* b` avoids `R`
/// (else `b` would be in `R`), so none of its edges is retargeted; where `b ->* H` enters
/// `R` it goes to the copies instead, which lead back to `H` itself (only edges from `R`
/// and from outside the loop go to `H'`). So `b` is afterwards in the natural loop of `H` whose back edges all come from outside `R`;
/// `w` is not in it (every block reached from `w` short of `H` is in `R`, so `w` reaches
/// none of its latches without `H'`), so `b`'s innermost loop no longer contains `w`
/// and `b` cannot be reported again with `w`; and `w` stays outside every loop `b` gets
/// into later (copies and new headers only split existing loops). Otherwise (`b` in `R`,
/// or every path from `b` back to `H` passes `w`: the `fuzz/ exec` reproducer
/// `tests/data/fuzz/restructure_inner_cycle_loops.ptx`, whose branch reaches the header
/// only through `w`) `b` is on no cycle that separating could make a loop: it stayed in
/// the outer loop headed by the new `H'` with the same problem, and every round added
/// another `H'` until the round limit ("restructuring for reconvergence does not
/// terminate"). Such a branch is planned as before [`Problem::InnerCycle`] existed.
pub fn inner_cycle(f: &Function, joins: &super::plan::Joins, b: BlockId) -> Option<Problem> {
    let l = joins.forest.innermost.get(b.index()).copied().flatten()?;
    let lp = joins.forest.loops.get(l)?;
    let w = joins.join_whole(b)?;
    if !(lp.body.contains(&w) && w != lp.header && joins.join(b) != Some(w)) {
        return None;
    }
    let header = lp.header;
    let body: HashSet<BlockId> = lp.body.iter().copied().collect();
    let after = reach(f, &[w], |x| x == header || !body.contains(&x));
    if after.contains(&b) {
        return None;
    }
    // `reach` leaves out the blocks it stops at: stop only at `w` and outside the loop,
    // and look for `H` among the blocks reached.
    let cycle = reach(f, &f.succs(b), |x| x == w || !body.contains(&x));
    cycle.contains(&header).then_some(Problem::InnerCycle { header, exit: w })
}
