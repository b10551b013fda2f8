//! Clean-up passes over lowered IR.
//!
//! Before SSA: [`remove_unreachable`], [`thread_exits`] (a branch to a block that only
//! exits becomes `@P EXIT`, as ptxas emits), [`split_critical_edges`] (regalloc2 needs
//! none). On SSA form, [`run`] iterates copy propagation (including forwarding components
//! of `join`), constant-operand folding (`MOV c[..]`/`MOV32I` into the consumer slots that
//! can encode them, `sass::legal`), address-offset folding, and dead-code elimination.
//! Instruction combining is in [`combine`].
//!
//! A pass that does not find an operand, instruction or edge where its pattern expects
//! one leaves that site alone (no panic); tables indexed by virtual register treat an
//! unknown register conservatively (read whole, not a constant).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod combine;
mod dce;
pub mod unused;

pub use dce::dce;

use crate::ir::{BlockId, DefSites, EdgeKind, Function};
use crate::sass::instr::{Instr, Reg, RegRef, Src, SrcKind};
use crate::sass::legal;
use crate::sass::op::{Op, Rnd};
use petgraph::Direction;

/// Removes blocks not reachable from the entry.
pub fn remove_unreachable(f: &mut Function) {
    let seen = f.reached_from_entry();
    let reached = |b: &BlockId| seen.get(b.index()) == Some(&true);
    let dead: Vec<BlockId> = f.layout.iter().copied().filter(|b| !reached(b)).collect();
    // In bulk: one by one, each dead block's edge into a join walks the join's whole
    // incoming list (quadratic on a join of many predecessors).
    crate::ir::edit::remove_blocks(f, &dead);
    f.layout.retain(reached);
}

/// Follows blocks that contain only an unconditional `BRA` (and no parameters).
fn skip_trampolines(f: &Function, mut b: BlockId) -> BlockId {
    for _ in 0..64 {
        let blk = &f.cfg[b];
        let trampoline =
            matches!((blk.params.as_slice(), blk.instrs.as_slice()), ([], [i]) if i.op == Op::Bra && i.guard.is_none());
        if !trampoline {
            break;
        }
        match f.succs(b).first() {
            Some(&s) => b = s,
            None => break,
        }
    }
    b
}

fn is_exit_block(f: &Function, b: BlockId) -> bool {
    let blk = &f.cfg[b];
    matches!((blk.params.as_slice(), blk.instrs.as_slice()), ([], [i]) if i.op == Op::Exit && i.guard.is_none())
}

/// Replaces branches to exit-only blocks by (predicated) `EXIT`. Run before SSA.
pub fn thread_exits(f: &mut Function) {
    // Branches to the exit are removed in bulk at the end (one by one, each walks the exit
    // block's whole incoming list: quadratic on many branches to one exit).
    let mut gone = vec![];
    for b in f.layout.clone() {
        let Some(term) = f.cfg[b].instrs.last().cloned() else {
            continue;
        };
        if term.op != Op::Bra {
            continue;
        }
        // A `BRA` ends a block with its taken edge first (`succ_edges`), then, when
        // guarded, the fall-through edge.
        let edges = f.succ_edges(b);
        let Some(&taken) = edges.first() else { continue };
        let Some((_, t)) = f.cfg.edge_endpoints(taken) else { continue };
        if !is_exit_block(f, skip_trampolines(f, t)) {
            continue;
        }
        let Some(&origin) = f.cfg[b].origins.last() else { continue };
        match term.guard {
            None => {
                let Some(last) = f.cfg[b].instrs.last_mut() else { continue };
                *last = Instr::new(Op::Exit, vec![], vec![]);
                gone.push(taken);
            }
            Some(g) => {
                // `@P EXIT`, then continue to the fall-through block.
                let Some(&fall) = edges.get(1) else { continue };
                let Some((_, ft)) = f.cfg.edge_endpoints(fall) else { continue };
                let Some(last) = f.cfg[b].instrs.last_mut() else { continue };
                *last = Instr::new(Op::Exit, vec![], vec![]).guarded(g.pred, g.neg);
                f.cfg[b].push(Instr::new(Op::Bra, vec![], vec![Src::label(ft.index() as u32)]), origin);
                gone.push(taken);
                f.cfg[fall].kind = EdgeKind::Taken;
            }
        }
    }
    crate::ir::edit::remove_edges(f, &gone);
    remove_unreachable(f);
}

/// Splits every edge from a block with several successors to a block with several
/// predecessors by inserting a block holding only `BRA`.
pub fn split_critical_edges(f: &mut Function) {
    // New blocks: after their source in the layout (fall-through edges), or at the end.
    let mut after: Vec<Option<BlockId>> = vec![None; petgraph::visit::NodeIndexable::node_bound(&f.cfg)];
    let mut at_end = vec![];
    let mut split = vec![];
    // Predecessor counts, counted once (a split replaces an edge into `t` by another:
    // the counts stay exact; counting per edge was quadratic on a join of many branches).
    let mut preds = vec![0usize; petgraph::visit::NodeIndexable::node_bound(&f.cfg)];
    for e in f.cfg.edge_indices() {
        // At most one per edge.
        if let Some((_, t)) = f.cfg.edge_endpoints(e)
            && let Some(n) = preds.get_mut(t.index())
        {
            *n = n.saturating_add(1);
        }
    }
    for b in f.layout.clone() {
        let succs = f.succ_edges(b);
        if succs.len() < 2 {
            continue;
        }
        for e in succs {
            let Some((_, t)) = f.cfg.edge_endpoints(e) else { continue };
            if preds.get(t.index()).is_none_or(|&n| n < 2) {
                continue;
            }
            let kind = f.cfg[e].kind;
            // A taken edge is retargeted through its branch's label, the terminator's
            // first source (and a fall-through edge's block placed after `b`).
            let retargetable = match kind {
                EdgeKind::Fallthrough => after.get(b.index()).is_some(),
                _ => f.cfg[b].instrs.last().is_some_and(|t| !t.srcs.is_empty()),
            };
            if !retargetable {
                continue;
            }
            let mid = f.new_block("");
            let origin = f.cfg[b].origins.last().copied().unwrap_or_default();
            f.cfg[mid].push(Instr::new(Op::Bra, vec![], vec![Src::label(t.index() as u32)]), origin);
            split.push((e, b, mid, t, kind));
            if kind == EdgeKind::Fallthrough {
                if let Some(a) = after.get_mut(b.index()) {
                    *a = Some(mid);
                }
            } else {
                // Retarget the branch; the new block goes to the end of the layout.
                if let Some(label) = f.cfg[b].instrs.last_mut().and_then(|t| t.srcs.first_mut()) {
                    *label = Src::label(mid.index() as u32);
                }
                at_end.push(mid);
            }
        }
    }
    // The edges are replaced in bulk: removed one by one, each walks its target's whole
    // incoming list (quadratic on a join of many branches).
    let gone: Vec<_> = split.iter().map(|s| s.0).collect();
    crate::ir::edit::remove_edges(f, &gone);
    for (_, b, mid, t, kind) in split {
        f.cfg.add_edge(b, mid, crate::ir::Edge { kind, args: vec![] });
        f.cfg.add_edge(mid, t, crate::ir::Edge { kind: EdgeKind::Taken, args: vec![] });
    }
    let mut layout = Vec::with_capacity(f.layout.len().saturating_add(at_end.len()));
    for &b in &f.layout {
        layout.push(b);
        layout.extend(after.get(b.index()).copied().flatten());
    }
    layout.extend(at_end);
    f.layout = layout;
}

/// Runs the SSA clean-up passes to a fixed point (bounded).
///
/// A round in which only [`dce`] changed the function is not followed by a confirming
/// round when dead-code elimination cannot have enabled anything: it removes only
/// unused definitions, so every value still read keeps its defining instruction
/// (constant and address folding see the same definitions), and it is idempotent; what
/// it can enable is copy propagation of a `join` component (when the last whole read of
/// the joined value went, see [`forward`]) and the dropping of a `.CC` (when the last
/// reader of a CC value went, see [`simplify`]), which are checked by comparing those
/// two facts before and after it.
pub fn run(f: &mut Function) {
    for _ in 0..8 {
        let mut changed = copy_prop(f);
        changed |= simplify(f);
        changed |= fold_constants(f);
        changed |= fold_addresses(f);
        if changed {
            dce(f);
            continue;
        }
        let whole = whole_uses(f);
        let cc_read = cc_read(f);
        if !dce(f) || (whole_uses(f) == whole && cc_read_by_live_writers(f, &cc_read)) {
            break;
        }
    }
}

/// Which CC values some instruction reads (indexed by value).
fn cc_read(f: &Function) -> Vec<bool> {
    crate::ir::cc::reader_counts(f).into_iter().map(|n| n > 0).collect()
}

/// True if every CC value a remaining writer defines is still read when it was read
/// before (`before`, from [`cc_read`]): nothing new for [`simplify`].
fn cc_read_by_live_writers(f: &Function, before: &[bool]) -> bool {
    let now = cc_read(f);
    f.layout.iter().flat_map(|b| &f.cfg[*b].instrs).filter_map(|i| i.cc.def).all(|v| {
        let v = v as usize;
        now.get(v) == before.get(v)
    })
}

/// The virtual register number of `r` and its defining instruction, if that instruction is
/// not guarded (a guarded definition tells nothing about the value).
fn unguarded_def<'f>(f: &'f Function, defs: &DefSites, r: RegRef) -> Option<(u32, &'f Instr)> {
    let Reg::V(v) = r.reg else { return None };
    let (b, k) = defs.get(v)?;
    let d = f.cfg[b].instrs.get(k)?;
    d.guard.is_none().then_some((v, d))
}

/// The defining instruction of every SSA value: (block, index).
fn def_sites(f: &Function) -> DefSites {
    DefSites::new(f)
}

/// Values read whole somewhere (as a source of full width, or as an edge argument),
/// indexed by virtual register number.
fn whole_uses(f: &Function) -> Vec<bool> {
    let mut w = vec![false; f.vregs.len()];
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            for s in &i.srcs {
                if let Some(r) = s.gprs()
                    && let Reg::V(v) = r.reg
                    && r.comp == 0
                    && f.vregs.get(v as usize).is_some_and(|k| r.n == k.width())
                    && let Some(x) = w.get_mut(v as usize)
                {
                    *x = true;
                }
            }
        }
        for e in f.cfg.edges_directed(b, Direction::Outgoing) {
            for &a in &e.weight().args {
                if let Some(x) = w.get_mut(a as usize) {
                    *x = true;
                }
            }
        }
    }
    w
}

/// Context of [`forward`]: definition sites and values read whole.
struct Defs {
    sites: DefSites,
    whole: Vec<bool>,
}

/// What a component of a value is known to be equal to. A part of a `join` is forwarded
/// to the join's source only if the joined value is never read whole (then the join
/// dies); otherwise reads stay on the joined register so that allocation can coalesce
/// the join's sources into it.
fn forward(f: &Function, defs: &Defs, r: RegRef) -> Option<Src> {
    let whole = &defs.whole;
    let defs = &defs.sites;
    let (v, d) = unguarded_def(f, defs, r)?;
    // A 64- or 128-bit operand must start at a multiple of its width (an even register, a
    // multiple of 4): a part of another register is forwarded only where it is aligned.
    let aligned = |comp: u8| r.n == 1 || comp.is_multiple_of(r.n);
    match d.op {
        Op::Copy => {
            let s = *d.srcs.first()?;
            // Component numbers are small (a value has at most 4); a sum past `u8` is
            // not forwarded.
            match s.kind {
                SrcKind::Reg(x) if s.mods == Default::default() && x.comp.checked_add(r.comp).is_some_and(aligned) => {
                    Some(Src::reg(RegRef { reg: x.reg, comp: x.comp.checked_add(r.comp)?, n: r.n }))
                }
                _ if r.n == 1 && r.comp == 0 => Some(s),
                _ => None,
            }
        }
        Op::Mov if r.n == 1 => {
            let s = d.srcs.first()?;
            let x = s.as_reg()?;
            (s.mods == Default::default()).then_some(Src::reg(x))
        }
        Op::Join if r.n == 1 => {
            let s = join_component(d, r.comp)??;
            let movable = !whole.get(v as usize).copied().unwrap_or(true) || s.reg.is_rz();
            movable.then_some(Src::reg(s))
        }
        Op::Join => {
            // A whole-or-part read of a join of consecutive components of one register.
            let first = join_component(d, r.comp)??;
            let mut whole = true;
            for k in 1..r.n {
                let p = join_component(d, r.comp.checked_add(k)?)?;
                whole &= first.comp.checked_add(k).is_some_and(|comp| p == Some(RegRef { reg: first.reg, comp, n: 1 }));
            }
            (whole && !first.reg.is_rz() && aligned(first.comp)).then_some(Src::reg(RegRef {
                reg: first.reg,
                comp: first.comp,
                n: r.n,
            }))
        }
        _ => None,
    }
}

/// Component `c` (a 32-bit word) of a `join`'s result, as the register component it comes
/// from (`Some(None)` for an immediate or a modified source; `None` if the join has fewer
/// components). Sources may be wider than one component (a 128-bit value joined from two
/// 64-bit halves).
fn join_component(d: &Instr, c: u8) -> Option<Option<RegRef>> {
    let mut at = 0u32;
    let c = u32::from(c);
    for s in &d.srcs {
        let (n, x) = match s.as_reg() {
            Some(x) => (u32::from(x.n), (s.mods == Default::default()).then_some(x)),
            None => (1, None),
        };
        // `c` is a `u8`, `n` at most 4: the sums stay small, and a component past `u8`
        // is not one the join has.
        let end = at.checked_add(n)?;
        if c < end {
            let Some(x) = x else { return Some(None) };
            let i = u8::try_from(c.checked_sub(at)?).ok()?;
            let comp = if x.reg.is_rz() { 0 } else { x.comp.checked_add(i)? };
            return Some(Some(RegRef { reg: x.reg, comp, n: 1 }));
        }
        at = end;
    }
    None
}

/// The register a read of `r` is forwarded to through a chain of copies (at most 16),
/// or `None` if it stays (a chain ending in a constant stays: constants are placed only
/// where the slot can encode them, by [`fold_constants`]).
fn forward_chain(f: &Function, defs: &Defs, r: RegRef) -> Option<RegRef> {
    let mut cur = r;
    let mut repl: Option<Src> = None;
    for _ in 0..16 {
        match forward(f, defs, cur) {
            Some(n) => {
                repl = Some(n);
                match n.kind {
                    SrcKind::Reg(x) => cur = x,
                    _ => break,
                }
            }
            None => break,
        }
    }
    match repl?.kind {
        SrcKind::Reg(x) => Some(x),
        _ => None,
    }
}

/// Replaces reads of copies by their sources. Returns true if anything changed.
pub fn copy_prop(f: &mut Function) -> bool {
    let defs = Defs { sites: def_sites(f), whole: whole_uses(f) };
    let mut changed = false;
    // Replacements of one instruction's operands, found on the unchanged function and
    // then applied (no instruction is cloned unless it changes).
    let mut repl: Vec<(usize, RegRef)> = vec![];
    let mut addr_repl: Vec<(usize, RegRef)> = vec![];
    let mut edge_repl: Vec<(usize, u32)> = vec![];
    for bi in 0..f.layout.len() {
        let Some(&b) = f.layout.get(bi) else { break };
        for k in 0..f.cfg[b].instrs.len() {
            repl.clear();
            addr_repl.clear();
            let Some(ins) = f.cfg[b].instrs.get(k) else { break };
            for (idx, s) in ins.srcs.iter().enumerate() {
                match s.kind {
                    SrcKind::Reg(r) => {
                        if let Some(x) = forward_chain(f, &defs, r) {
                            repl.push((idx, x));
                        }
                    }
                    // Address bases and LDC indices.
                    SrcKind::Addr { base: r, .. } | SrcKind::CBuf { index: Some(r), .. } => {
                        if let Some(Src { kind: SrcKind::Reg(x), .. }) = forward(f, &defs, r) {
                            addr_repl.push((idx, x));
                        }
                    }
                    _ => {}
                }
            }
            if repl.is_empty() && addr_repl.is_empty() {
                continue;
            }
            let Some(ins) = f.cfg[b].instrs.get_mut(k) else { break };
            // `idx` indexes `ins.srcs`, enumerated above.
            for &(idx, x) in &repl {
                if let Some(s) = ins.srcs.get_mut(idx) {
                    *s = Src { kind: SrcKind::Reg(x), mods: s.mods };
                }
            }
            for &(idx, x) in &addr_repl {
                if let Some(s) = ins.srcs.get_mut(idx)
                    && let SrcKind::Addr { base: r, .. } | SrcKind::CBuf { index: Some(r), .. } = &mut s.kind
                {
                    *r = x;
                }
            }
            changed = true;
        }
        // Edge arguments: substitute whole-register copies.
        for e in f.succ_edges(b) {
            edge_repl.clear();
            for (idx, a) in f.cfg[e].args.iter().enumerate() {
                let Some(kind) = f.vregs.get(*a as usize) else { continue };
                if let Some(Src { kind: SrcKind::Reg(x), .. }) =
                    forward(f, &defs, RegRef { reg: Reg::V(*a), comp: 0, n: kind.width() })
                    && let Reg::V(v) = x.reg
                    && x.comp == 0
                    && f.vregs.get(v as usize) == Some(kind)
                    && v != *a
                {
                    edge_repl.push((idx, v));
                }
            }
            if !edge_repl.is_empty() {
                let args = &mut f.cfg[e].args;
                for &(idx, v) in &edge_repl {
                    if let Some(a) = args.get_mut(idx) {
                        *a = v;
                    }
                }
                changed = true;
            }
        }
    }
    changed
}

/// The constant (or constant-bank operand) a value of `n` words is known to hold.
fn constant_of(f: &Function, defs: &DefSites, r: RegRef) -> Option<Src> {
    let (_, d) = unguarded_def(f, defs, r)?;
    match (d.op, r.n) {
        (Op::Mov | Op::Mov32i, 1) if r.comp == 0 => match d.srcs.first() {
            Some(&s) if matches!(s.kind, SrcKind::CBuf { index: None, .. } | SrcKind::Imm(_)) => Some(s),
            _ => None,
        },
        (Op::Join, 1) => constant_of(f, defs, d.srcs.get(r.comp as usize)?.as_reg()?),
        (Op::Join, 2) if r.comp == 0 => {
            let [lo, hi, ..] = d.srcs.as_slice() else { return None };
            // A 64-bit constant-bank operand: c[b][o] and c[b][o+4].
            let lo = constant_of(f, defs, lo.as_reg()?)?;
            let hi = constant_of(f, defs, hi.as_reg()?)?;
            match (lo.kind, hi.kind) {
                (
                    SrcKind::CBuf { bank, offset, index: None, .. },
                    SrcKind::CBuf { bank: b2, offset: o2, index: None, .. },
                ) if bank == b2 && offset.checked_add(4) == Some(o2) && offset % 8 == 0 => {
                    Some(Src::cbuf(bank, offset, 2))
                }
                (SrcKind::Imm(0), SrcKind::Imm(h)) => Some(Src::imm(h)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Substitutes constants and constant-bank values into the slots that can encode them,
/// swapping commutative operands to reach the B slot.
pub fn fold_constants(f: &mut Function) -> bool {
    let defs = def_sites(f);
    let mut changed = false;
    for b in f.layout.clone() {
        for k in 0..f.cfg[b].instrs.len() {
            let Some(ins) = f.cfg[b].instrs.get(k) else { break };
            if ins.op.is_pseudo()
                || ins.op.mem().is_some()
                || matches!(ins.op, Op::Atom(_) | Op::Atoms(_) | Op::Red(_) | Op::Shfl(_) | Op::Vote(_))
            {
                continue;
            }
            // Only an operand holding a constant can change (cloned only then).
            let any = ins.srcs.iter().any(|s| matches!(s.kind, SrcKind::Reg(r) if constant_of(f, &defs, r).is_some()));
            if !any {
                continue;
            }
            let mut ins = ins.clone();
            let mut here = false;
            for idx in 0..ins.srcs.len() {
                let Some(&s) = ins.srcs.get(idx) else { break };
                let SrcKind::Reg(r) = s.kind else { continue };
                let Some(c) = constant_of(f, &defs, r) else {
                    continue;
                };
                // 64-bit float immediates are only meaningful for D* ops.
                if r.n == 2 && !matches!(ins.op, Op::Dadd(_) | Op::Dmul(_) | Op::Dfma(_) | Op::Dsetp { .. } | Op::Dmnmx)
                {
                    continue;
                }
                let cand = Src { kind: c.kind, mods: s.mods };
                if legal::accepts(&ins.op, idx, &ins.srcs, &cand)
                    && let Some(x) = ins.srcs.get_mut(idx)
                {
                    *x = cand;
                    here = true;
                } else if idx == 0
                    && let [_, second, ..] = ins.srcs.as_slice()
                    && second.as_reg().is_some()
                    && let Some(sw) = legal::swapped(&ins.op)
                {
                    let mut srcs = ins.srcs.clone();
                    srcs.swap(0, 1);
                    if legal::accepts(&sw, 1, &srcs, &cand)
                        && let Some(x) = srcs.get_mut(1)
                    {
                        *x = cand;
                        ins.srcs = srcs;
                        ins.op = sw;
                        here = true;
                    }
                } else if let SrcKind::Imm(v) = cand.kind
                    && idx == 1
                    && cand.mods == Default::default()
                    && !ins.srcs.iter().any(|o| matches!(o.kind, SrcKind::CBuf { .. } | SrcKind::Imm(_)))
                {
                    // 32-bit immediate forms.
                    let a_plain = ins.srcs.first().is_some_and(|a| a.mods == Default::default());
                    let op32 = match ins.op {
                        Op::Iadd { cc, x } if a_plain => Some(Op::Iadd32i { cc, x }),
                        // FADD32I and FMUL32I round to nearest only: they have no rounding
                        // field (sm50-encoding-and-cubin.md §1.3 FADD32I/FMUL32I).
                        Op::Fadd(m) if !m.sat && m.rnd == Rnd::Rn && a_plain => Some(Op::Fadd32i(m)),
                        Op::Fmul(m) if !m.sat && m.rnd == Rnd::Rn && a_plain => Some(Op::Fmul32i(m)),
                        Op::Lop(l) if l != crate::sass::op::LogicOp::PassB => Some(Op::Lop32i(l)),
                        _ => None,
                    };
                    if let Some(op32) = op32
                        && let Some(second) = ins.srcs.get_mut(1)
                    {
                        *second = Src::imm(v);
                        ins.op = op32;
                        here = true;
                    }
                }
            }
            // A MOV of a register holding a constant becomes MOV of the constant.
            if here && let Some(x) = f.cfg[b].instrs.get_mut(k) {
                *x = ins;
                changed = true;
            }
        }
    }
    changed
}

/// Local simplifications: a `.CC` whose CC value nothing reads ([`crate::ir::cc`]) is
/// dropped (so the instruction is a plain add again), and adding zero becomes a copy.
pub fn simplify(f: &mut Function) -> bool {
    let mut changed = false;
    let cc_readers = crate::ir::cc::reader_counts(f);
    for b in f.layout.clone() {
        let n = f.cfg[b].instrs.len();
        for k in 0..n {
            let Some(i) = f.cfg[b].instrs.get_mut(k) else { break };
            if let Some(v) = i.cc.def
                && cc_readers.get(v as usize) == Some(&0)
            {
                let op = match i.op {
                    Op::Iadd { x, .. } => Some(Op::Iadd { cc: false, x }),
                    Op::Iadd32i { x, .. } => Some(Op::Iadd32i { cc: false, x }),
                    Op::Iscadd { .. } => Some(Op::Iscadd { cc: false }),
                    Op::Lea { hi, x, .. } => Some(Op::Lea { hi, x, cc: false }),
                    Op::Xmad(m) => Some(Op::Xmad(crate::sass::op::XmadMods { cc: false, ..m })),
                    _ => None,
                };
                if let Some(op) = op {
                    i.op = op;
                    i.cc.def = None;
                    changed = true;
                }
            }
            let i = &*i;
            let zero = |s: &Src| {
                s.mods == Default::default()
                    && (matches!(s.kind, SrcKind::Imm(0)) || s.as_reg().is_some_and(|r| r.reg.is_rz()))
            };
            let plain = |s: &Src| s.mods == Default::default() && s.as_reg().is_some();
            let copy_of = match i.op {
                Op::Iadd { cc: false, x: false } | Op::Iadd32i { cc: false, x: false } if i.guard.is_none() => {
                    match i.srcs.as_slice() {
                        [a, b, ..] if zero(b) && plain(a) => Some(*a),
                        [a, b, ..] if zero(a) && plain(b) => Some(*b),
                        _ => None,
                    }
                }
                _ => None,
            };
            // `x + 0` with `x` a constant-bank operand or an immediate is a MOV of it.
            let mov_of = match i.op {
                Op::Iadd { cc: false, x: false } if i.guard.is_none() && copy_of.is_none() => {
                    let movable = |s: &Src| {
                        s.mods == Default::default() && matches!(s.kind, SrcKind::CBuf { .. } | SrcKind::Imm(_))
                    };
                    match i.srcs.as_slice() {
                        [a, b, ..] if zero(b) && movable(a) => Some(*a),
                        [a, b, ..] if zero(a) && movable(b) => Some(*b),
                        _ => None,
                    }
                }
                _ => None,
            };
            let Some(ins) = f.cfg[b].instrs.get_mut(k) else { break };
            if let Some(src) = copy_of {
                ins.op = Op::Copy;
                ins.srcs = vec![src];
                changed = true;
            } else if let Some(src) = mov_of {
                ins.op = if matches!(src.kind, SrcKind::Imm(_)) { Op::Mov32i } else { Op::Mov };
                ins.srcs = vec![src];
                changed = true;
            }
        }
    }
    changed
}

/// Folds `IADD32I`/`IADD` immediate address arithmetic into the memory instruction's
/// offset: 24-bit for LDG/STG/LDS/STS/LDL/STL, signed 16-bit for LDC.
pub fn fold_addresses(f: &mut Function) -> bool {
    let defs = def_sites(f);
    let mut changed = false;
    for b in f.layout.clone() {
        for k in 0..f.cfg[b].instrs.len() {
            let Some(ins) = f.cfg[b].instrs.get(k) else { break };
            // The address operand, first.
            let Some(addr) = ins.srcs.first().map(|s| s.kind) else { continue };
            // LDC c[bank][Ra+ImmS16] (spa50-LDC.txt, IA mode).
            if let Op::Ldc { .. } = ins.op
                && let SrcKind::CBuf { bank, offset, index: Some(ix), n } = addr
                && let Some((nb, add)) = added_constant(f, &defs, ix)
                && let Some(sum) = i64::from(offset).checked_add(add)
                && let Ok(off) = i16::try_from(sum)
            {
                set_address(f, b, k, SrcKind::CBuf { bank, offset: i32::from(off), index: Some(nb), n });
                changed = true;
                continue;
            }
            if !matches!(ins.op, Op::Ldg(_) | Op::Stg(_) | Op::Lds(_) | Op::Sts(_) | Op::Ldl(_) | Op::Stl(_)) {
                continue;
            }
            let SrcKind::Addr { base, offset } = addr else {
                continue;
            };
            let Some((nb, add)) = added_constant(f, &defs, base) else {
                continue;
            };
            // Both 32-bit: no overflow in `i64`, checked all the same.
            let Some(off) = i64::from(offset).checked_add(add) else { continue };
            if !(-(1i64 << 23)..(1i64 << 23)).contains(&off) {
                continue;
            }
            set_address(f, b, k, SrcKind::Addr { base: nb, offset: off as i32 });
            changed = true;
        }
    }
    changed
}

/// Sets the address operand (the first source) of instruction `k` of block `b`.
fn set_address(f: &mut Function, b: BlockId, k: usize, kind: SrcKind) {
    if let Some(s) = f.cfg[b].instrs.get_mut(k).and_then(|i| i.srcs.first_mut()) {
        s.kind = kind;
    }
}

/// If `r` = `x + c` for a constant `c` (64-bit `IADD32I.CC`/`.X` pair or 32-bit
/// `IADD32I`), returns `(x, c)`.
fn added_constant(f: &Function, defs: &DefSites, r: RegRef) -> Option<(RegRef, i64)> {
    let (_, d) = unguarded_def(f, defs, r)?;
    match (d.op, r.n) {
        (Op::Iadd32i { cc: false, x: false } | Op::Iadd { cc: false, x: false }, 1) => {
            if d.srcs.iter().any(|s| s.mods != Default::default()) {
                return None;
            }
            let [a, b, ..] = d.srcs.as_slice() else { return None };
            let (SrcKind::Imm(c), Some(x)) = (b.kind, a.as_reg()) else {
                return None;
            };
            Some((x, c as i32 as i64))
        }
        (Op::Join, 2) => {
            let [lo, hi, ..] = d.srcs.as_slice() else { return None };
            let (lo, hi) = (lo.as_reg()?, hi.as_reg()?);
            let (Reg::V(lv), Reg::V(hv)) = (lo.reg, hi.reg) else {
                return None;
            };
            let (lb, lk) = defs.get(lv)?;
            let (hb, hk) = defs.get(hv)?;
            let li = f.cfg[lb].instrs.get(lk)?;
            let hi_i = f.cfg[hb].instrs.get(hk)?;
            // One 64-bit add: the high word reads the low word's carry.
            if li.cc.def.is_none() || hi_i.cc.read != li.cc.def || li.guard.is_some() || hi_i.guard.is_some() {
                return None;
            }
            let Op::Iadd32i { cc: true, x: false } = li.op else {
                return None;
            };
            let ([l0, l1, ..], [h0, h1, ..]) = (li.srcs.as_slice(), hi_i.srcs.as_slice()) else { return None };
            let SrcKind::Imm(c) = l1.kind else {
                return None;
            };
            let base_lo = l0.as_reg()?;
            let (base_hi, chi) = match (hi_i.op, h1.kind) {
                (Op::Iadd32i { cc: false, x: true }, SrcKind::Imm(h)) => (h0.as_reg()?, h),
                (Op::Iadd { cc: false, x: true }, SrcKind::Reg(z)) if z.reg.is_rz() => (h0.as_reg()?, 0),
                _ => return None,
            };
            let c = c as i32 as i64;
            // The high word must be the sign extension of the 32-bit constant.
            if chi != (c >> 32) as u32
                || base_lo.reg != base_hi.reg
                || base_lo.comp.checked_add(1) != Some(base_hi.comp)
                || base_lo.comp % 2 != 0
            {
                return None;
            }
            if l0.mods != Default::default() || h0.mods != Default::default() {
                return None;
            }
            Some((RegRef { reg: base_lo.reg, comp: base_lo.comp, n: 2 }, c))
        }
        _ => None,
    }
}
