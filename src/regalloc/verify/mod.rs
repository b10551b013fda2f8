//! An independent check of the final allocated code: every register read holds the value
//! the SSA program before allocation reads there, and every wide operand is aligned.
//!
//! It shares nothing with regalloc2 or with packing. The allocated function keeps the SSA
//! function's instructions in order and only adds moves (copies and joins expanded into
//! `MOV`/`LOP.XOR`, spill `STL`/`LDL`, predicate copies, the frame prologue), which
//! `expand` reports. The check runs a forward dataflow analysis over the allocated code in
//! which each register, predicate and spill slot holds a set of SSA values (components of
//! virtual registers) it is known to equal:
//!
//! * an original instruction must read, in each source register, the value the SSA
//!   instruction names (after `copy`/`join`, which make values equal); its results then
//!   hold the SSA results;
//! * a move copies what its source holds (`LOP.XOR` swaps are followed symbolically);
//! * along an edge, registers holding a block argument also hold the block parameter;
//! * at a join of control flow a location keeps only what every predecessor agrees on;
//! * an undefined general-purpose value (an `undef`, PTX's never-written register) is
//!   held by every location on the paths where it is undefined: whatever a register holds
//!   is a valid value of it, and a join with a path on which it is defined keeps the
//!   locations holding the defined value. An undefined predicate is an error: lowering
//!   gives every predicate a value (`lower::ssa::define_undefined_predicates`), so that
//!   the checker proves every guard of one predicate value reads the same value (which
//!   the carry-flag check of allocated code, [`crate::ir::cc::verify_allocated`], relies
//!   on).
//!
//! Two values that are live at once in one register would make a later read fail, so
//! this proves the allocation (within the SSA program's own semantics) and finds errors
//! in allocation, packing and move expansion alike. Alignment: 64-bit operands in even
//! registers, 128-bit operands in registers divisible by 4 (findings section 3).

mod state;
mod values;

use crate::ir::{BlockId, Function, VRegKind};
use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src, SrcKind};
use crate::sass::op::{BoolOp, Op};
use state::{
    ANY_LOC, Content, Loc, PRED_BASE, RZ_LOC, SPILL_BASE, State, anywhere, gpr_locs, loc1, meet, set, set_loc, xor,
};
use std::collections::{BTreeSet, HashMap};
use values::Values;

/// The allocated instructions that are moves added by allocation, per block (same length
/// as the block's instructions).
pub type Moves = HashMap<BlockId, Vec<bool>>;

/// `PSETP.AND.AND Pd, PT, Ps, PT, PT`: the predicate copy allocation inserts.
fn is_pred_copy(i: &Instr) -> bool {
    i.op == (Op::Psetp { bop0: BoolOp::And, bop1: BoolOp::And })
        && i.guard.is_none()
        && i.dsts.get(1) == Some(&Dst::Pred(PT))
        && matches!(i.srcs.as_slice(), [a, b, c] if matches!(a.kind, SrcKind::Pred(_)) && !a.mods.inv
            && *b == Src::pt() && *c == Src::pt())
}

/// SSA instructions that allocation keeps (everything but moves and undefs).
fn is_kept(i: &Instr) -> bool {
    !matches!(i.op, Op::Copy | Op::Join | Op::Undef) && !is_pred_copy(i)
}

struct Checker<'a> {
    before: &'a Function,
    after: &'a Function,
    moves: &'a Moves,
    values: Values,
    /// The kept SSA instructions of each block, in order.
    kept: HashMap<BlockId, Vec<&'a Instr>>,
    /// The instruction being applied (block, index in the allocated block).
    site: (BlockId, usize),
    /// The opaque values of unknown `LOP.XOR` operands ([`Checker::xor_term`]), by site
    /// and location.
    opaque: HashMap<(BlockId, usize, Loc), u32>,
}

impl Checker<'_> {
    fn content(&self, s: &State, loc: Loc) -> Option<Content> {
        if loc == RZ_LOC {
            return Some(Content::Vals(BTreeSet::from([self.values.zero])));
        }
        s.get(&loc).cloned()
    }

    /// Whether `loc` holds value `want` in `s`. An undefined general-purpose value is held
    /// by every location; an undefined predicate by none (every read of one predicate
    /// value must agree, `lower::ssa::define_undefined_predicates`, which leaves none).
    fn holds(&mut self, s: &State, loc: Loc, want: u32) -> bool {
        let undefined = self.values.undef[want as usize] && !self.values.pred[want as usize];
        if undefined || anywhere(s).iter().any(|x| self.values.find(*x) == want) {
            return true;
        }
        match self.content(s, loc) {
            Some(Content::Vals(v)) => v.iter().any(|x| self.values.find(*x) == want),
            _ => false,
        }
    }

    /// What `loc` holds as an operand of a `LOP.XOR` move: its content, or, where nothing
    /// is known about it (a register holding an undefined value, or one the paths into a
    /// join disagree on), an opaque value standing for whatever bits it holds here, which
    /// `loc` is then known to hold. The swap `R17 = R16 ^ R10; R10 = R10 ^ R17; R8 = R17
    /// ^ R10` moves `R10` into `R8` whatever `R16` holds: the opaque term cancels
    /// (tests/data/fuzz/compile_undef_quad_component.bin, where `R16` held an undefined
    /// quad component and the checker lost `R8`). The term is numbered by the move's
    /// place, so every round of the dataflow analysis gives it the same number.
    fn xor_term(&mut self, s: &mut State, loc: Loc) -> Content {
        match self.content(s, loc) {
            Some(Content::Vals(v)) if v.is_empty() => {}
            Some(c) => return c,
            None => {}
        }
        let site = (self.site.0, self.site.1, loc);
        let x = match self.opaque.get(&site) {
            Some(&x) => x,
            None => {
                let x = self.values.fresh();
                self.opaque.insert(site, x);
                x
            }
        };
        let c = Content::Vals(BTreeSet::from([x]));
        if loc != RZ_LOC {
            s.insert(loc, c.clone());
        }
        c
    }

    /// Applies one allocated instruction to `s`; with `check`, verifies it against the
    /// SSA instruction it stands for (`orig`, `None` for a move).
    fn step(&mut self, s: &mut State, i: &Instr, orig: Option<&Instr>, check: bool) -> Result<(), String> {
        let Some(o) = orig else { return self.apply_move(s, i) };
        if check {
            if i.op != o.op || i.srcs.len() != o.srcs.len() || i.dsts.len() != o.dsts.len() {
                return Err(format!("`{i:?}` does not match the SSA instruction `{o:?}`"));
            }
            match (i.guard, o.guard) {
                (None, None) => {}
                (Some(g), Some(h)) if g.neg == h.neg => self.check_pred(s, g.pred, h.pred, i)?,
                _ => return Err(format!("guard of `{i:?}` differs from `{o:?}`")),
            }
            for (a, b) in i.srcs.iter().zip(&o.srcs) {
                self.check_src(s, a, b, i)?;
            }
        }
        if let Op::Call(site) = o.op {
            // The callee may change every caller-saved register and predicate. R1, the
            // stack pointer, comes back as it went (docs/abi.md: a function moves it down
            // on entry and back before `RET`, as ptxas 11.8 does). A callee in the private
            // convention changes `PRIVATE_CLOBBERED` only.
            let preserves = self.before.calls.get(site as usize).is_some_and(|c| c.preserves);
            s.retain(|loc, _| match *loc {
                1 => true,
                l if l < 255 && preserves => !crate::sass::abi::PRIVATE_CLOBBERED.contains(&(l as u8)),
                l if l < 255 => crate::sass::abi::is_callee_saved(l as u8),
                l if (PRED_BASE..SPILL_BASE).contains(&l) => false,
                _ => true,
            });
        }
        for (d, od) in i.dsts.iter().zip(&o.dsts) {
            match (d, od) {
                (Dst::Reg(r), Dst::Reg(or)) => {
                    aligned(*r, i)?;
                    let Some(locs) = gpr_locs(*r) else { continue };
                    for (k, loc) in locs.into_iter().enumerate() {
                        let v = match or.reg {
                            Reg::V(v) => Content::Vals(BTreeSet::from([self.values.of(v, or.comp + k as u8)])),
                            Reg::R(1) => Content::Vals(BTreeSet::from([self.values.frame])),
                            _ => return Err(format!("`{o:?}` writes a physical register")),
                        };
                        s.insert(loc, v);
                    }
                }
                (Dst::Pred(p), Dst::Pred(op)) => {
                    if let (Reg::P(x), Reg::V(v)) = (p, op)
                        && *p != PT
                    {
                        s.insert(PRED_BASE + *x as u32, Content::Vals(BTreeSet::from([self.values.of(*v, 0)])));
                    }
                }
                _ => return Err(format!("destinations of `{i:?}` differ from `{o:?}`")),
            }
        }
        Ok(())
    }

    fn check_pred(&mut self, s: &State, got: Reg, want: Reg, i: &Instr) -> Result<(), String> {
        match (got, want) {
            (Reg::P(x), Reg::V(v)) => {
                let w = self.values.of(v, 0);
                if x != 7 && self.holds(s, PRED_BASE + x as u32, w) {
                    return Ok(());
                }
                let undefined = if self.values.undef[w as usize] { " (an undefined predicate)" } else { "" };
                Err(format!("P{x} does not hold the predicate `{i:?}` reads{undefined}"))
            }
            (a, b) if a == b => Ok(()),
            _ => Err(format!("predicate operand of `{i:?}` is not the SSA one")),
        }
    }

    fn check_src(&mut self, s: &State, a: &Src, b: &Src, i: &Instr) -> Result<(), String> {
        if let (SrcKind::Pred(x), SrcKind::Pred(y)) = (a.kind, b.kind) {
            return self.check_pred(s, x, y, i);
        }
        match (a.gprs(), b.gprs()) {
            (Some(ra), Some(rb)) => {
                let same_kind = std::mem::discriminant(&a.kind) == std::mem::discriminant(&b.kind);
                let mut a2 = *a;
                let mut b2 = *b;
                *a2.gprs_mut().expect("register") = RegRef::new(Reg::R(0), 1);
                *b2.gprs_mut().expect("register") = RegRef::new(Reg::R(0), 1);
                if !same_kind || a2 != b2 || ra.n != rb.n {
                    return Err(format!("operand `{a:?}` of `{i:?}` differs from `{b:?}`"));
                }
                aligned(ra, i)?;
                match self.values.of_src(rb) {
                    Some(want) => {
                        let locs = gpr_locs(ra).unwrap_or_else(|| vec![RZ_LOC; ra.n as usize]);
                        for (loc, w) in locs.into_iter().zip(want) {
                            if !self.holds(s, loc, w) {
                                return Err(format!("R{loc} does not hold the value `{i:?}` reads"));
                            }
                        }
                        Ok(())
                    }
                    None if rb.reg == Reg::R(1) => {
                        if ra.reg == Reg::R(1) && self.holds(s, 1, self.values.frame) {
                            Ok(())
                        } else {
                            Err(format!("`{i:?}` reads the frame pointer from somewhere else"))
                        }
                    }
                    None if ra == rb => Ok(()),
                    None => Err(format!("operand `{a:?}` of `{i:?}` differs from `{b:?}`")),
                }
            }
            (None, None) if a == b => Ok(()),
            _ => Err(format!("operand `{a:?}` of `{i:?}` differs from `{b:?}`")),
        }
    }

    /// A move added by allocation: copies contents without checking.
    fn apply_move(&mut self, s: &mut State, i: &Instr) -> Result<(), String> {
        let src_regs = |k: usize| i.srcs.get(k).and_then(|x| x.as_reg());
        match i.op {
            Op::Mov if i.guard.is_none() => {
                let Some(Dst::Reg(d)) = i.dsts.first() else { return Err(format!("bad move `{i:?}`")) };
                let c = match i.srcs[0].kind {
                    SrcKind::CBuf { bank: 0, offset: 0x20, index: None, .. } if d.reg == Reg::R(1) => {
                        Some(Content::Vals(BTreeSet::from([self.values.frame])))
                    }
                    SrcKind::Reg(r) if i.srcs[0].mods == Default::default() => {
                        self.content(s, gpr_locs(r).map_or(RZ_LOC, |l| l[0]))
                    }
                    _ => return Err(format!("bad move `{i:?}`")),
                };
                set(s, gpr_locs(*d), c);
            }
            Op::Iadd32i { cc: false, x: false } if i.dsts.first() == Some(&Dst::reg(Reg::R(1), 1)) => {
                // The frame prologue: R1 -= frame size.
            }
            Op::Lop(crate::sass::op::LogicOp::Xor) => {
                let (Some(Dst::Reg(d)), Some(a), Some(b)) = (i.dsts.first(), src_regs(0), src_regs(1)) else {
                    return Err(format!("bad move `{i:?}`"));
                };
                let (ca, cb) = (self.xor_term(s, loc1(a)), self.xor_term(s, loc1(b)));
                set(s, gpr_locs(*d), xor(&ca, &cb));
            }
            Op::Ldl(m) if m.spill => {
                let (Some(Dst::Reg(d)), SrcKind::Addr { offset, .. }) = (i.dsts.first(), i.srcs[0].kind) else {
                    return Err(format!("bad spill `{i:?}`"));
                };
                aligned(*d, i)?;
                for k in 0..d.n {
                    let c = s.get(&(SPILL_BASE + offset as u32 / 4 + k as u32)).cloned();
                    set(s, gpr_locs(RegRef { n: 1, comp: d.comp + k, ..*d }), c);
                }
            }
            Op::Stl(m) if m.spill => {
                let (SrcKind::Addr { offset, .. }, Some(r)) = (i.srcs[0].kind, src_regs(1)) else {
                    return Err(format!("bad spill `{i:?}`"));
                };
                aligned(r, i)?;
                for k in 0..r.n {
                    let c = self.content(s, loc1(RegRef { n: 1, comp: r.comp + k, ..r }));
                    set_loc(s, SPILL_BASE + offset as u32 / 4 + k as u32, c);
                }
            }
            _ if is_pred_copy(i) => {
                let (Some(Dst::Pred(Reg::P(d))), SrcKind::Pred(Reg::P(x))) = (i.dsts.first(), i.srcs[0].kind) else {
                    return Err(format!("bad predicate copy `{i:?}`"));
                };
                let c = if x == 7 { None } else { s.get(&(PRED_BASE + x as u32)).cloned() };
                set_loc(s, PRED_BASE + *d as u32, c);
            }
            _ => return Err(format!("`{i:?}` is marked as a move but is none")),
        }
        Ok(())
    }

    /// Runs one block from `s`; returns the state at its end.
    fn block(&mut self, b: BlockId, mut s: State, check: bool) -> Result<State, String> {
        let kept = self.kept.get(&b).cloned().unwrap_or_default();
        let moves = self.moves.get(&b);
        let mut next = 0;
        for (k, i) in self.after.cfg[b].instrs.iter().enumerate() {
            let is_move = moves.is_some_and(|m| m.get(k).copied().unwrap_or(false))
                || matches!(i.op, Op::Ldl(m) | Op::Stl(m) if m.spill)
                || is_pred_copy(i);
            let orig = if is_move {
                None
            } else {
                let o = kept.get(next).copied().ok_or_else(|| format!("`{i:?}` has no SSA counterpart"))?;
                next += 1;
                Some(o)
            };
            self.site = (b, k);
            self.step(&mut s, i, orig, check).map_err(|e| format!("{}: {e}", self.after.cfg[b].name))?;
        }
        if check && next != kept.len() {
            return Err(format!("{}: SSA instruction `{:?}` is missing", self.after.cfg[b].name, kept[next]));
        }
        Ok(s)
    }

    /// The state entering `succ` along edge `e` from a block ending in `s`: locations
    /// holding a block argument also hold the matching parameter, and a general-purpose
    /// parameter whose argument is undefined is held everywhere ([`ANY_LOC`]).
    fn along(&mut self, e: petgraph::stable_graph::EdgeIndex, s: &State) -> State {
        let to = self.before.cfg.edge_endpoints(e).expect("edge").1;
        let args = self.before.cfg[e].args.clone();
        let params = self.before.cfg[to].params.clone();
        let mut out = s.clone();
        for (p, a) in params.iter().zip(&args) {
            let w = match self.before.vregs[*p as usize] {
                VRegKind::Gpr(w) => w,
                VRegKind::Pred => 1,
            };
            for c in 0..w {
                let (pv, av) = (self.values.of(*p, c), self.values.of(*a, c));
                let undefined = self.values.undef[av as usize] && !self.values.pred[av as usize];
                if undefined || anywhere(s).iter().any(|x| self.values.find(*x) == av) {
                    match out.entry(ANY_LOC).or_insert_with(|| Content::Vals(BTreeSet::new())) {
                        Content::Vals(set) => {
                            set.insert(pv);
                        }
                        Content::Xor(_) => unreachable!("ANY_LOC holds a value set"),
                    }
                }
                for content in out.values_mut() {
                    if let Content::Vals(set) = content
                        && set.iter().any(|x| self.values.find(*x) == av)
                    {
                        set.insert(pv);
                    }
                }
            }
        }
        out
    }
}

fn aligned(r: RegRef, i: &Instr) -> Result<(), String> {
    if let Reg::R(x) = r.reg
        && !r.reg.is_rz()
    {
        let base = x as u32 + r.comp as u32;
        if (r.n == 2 || r.n == 4) && !base.is_multiple_of(r.n as u32) {
            return Err(format!("R{base} is not aligned for a {}-bit operand in `{i:?}`", 32 * r.n as u32));
        }
    }
    Ok(())
}

/// Checks `after` (allocated, moves expanded; `moves` marks the moves `expand` added)
/// against `before` (the SSA function given to allocation). Errors name the block and
/// the instruction. The carry flag is checked on its CC values ([`crate::ir::cc`]), which
/// allocation carries over unchanged: in `after`, every reader must still read the value
/// last written before it in its block (no inserted instruction writes CC, none was
/// reordered across a CC writer or moved into another block).
pub fn verify(before: &Function, after: &Function, moves: &Moves) -> Result<(), String> {
    crate::ir::cc::verify_allocated(after)?;
    let mut kept: HashMap<BlockId, Vec<&Instr>> = HashMap::new();
    for &b in &before.layout {
        kept.insert(b, before.cfg[b].instrs.iter().filter(|i| is_kept(i)).collect());
    }
    let mut c = Checker {
        before,
        after,
        moves,
        values: Values::new(before),
        kept,
        site: (after.entry, 0),
        opaque: HashMap::new(),
    };
    // Reverse postorder over the allocated blocks.
    let mut order = vec![];
    let mut dfs = petgraph::visit::DfsPostOrder::new(&after.cfg, after.entry);
    while let Some(b) = dfs.next(&after.cfg) {
        order.push(b);
    }
    order.reverse();
    let mut entry_state: HashMap<BlockId, State> = HashMap::new();
    let mut start = State::new();
    if after.kind == crate::ptx::ast::FuncKind::Func {
        // A device function receives the stack pointer in R1.
        start.insert(1, Content::Vals(BTreeSet::from([c.values.frame])));
    }
    entry_state.insert(after.entry, start);
    let mut changed = true;
    let mut rounds = 0;
    while changed {
        changed = false;
        rounds += 1;
        if rounds > 1000 {
            return Err("the analysis does not converge".into());
        }
        for &b in &order {
            let Some(s) = entry_state.get(&b).cloned() else { continue };
            let out = c.block(b, s, false)?;
            for e in after.succ_edges(b) {
                let to = after.cfg.edge_endpoints(e).expect("edge").1;
                let incoming = c.along(e, &out);
                match entry_state.get_mut(&to) {
                    Some(old) => {
                        let before_meet = old.clone();
                        meet(old, &incoming);
                        changed |= *old != before_meet;
                    }
                    None => {
                        entry_state.insert(to, incoming);
                        changed = true;
                    }
                }
            }
        }
    }
    for &b in &order {
        let s = entry_state.get(&b).cloned().unwrap_or_default();
        c.block(b, s, true)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An undefined general-purpose value may be read from any register; an undefined
    /// predicate from none (lowering defines every predicate, so that all readers of one
    /// predicate value provably agree).
    #[test]
    fn undefined_predicates_are_not_held_anywhere() {
        use crate::ptx::ast::{FuncKind, Span};
        let mut before = Function::new("k", FuncKind::Entry);
        let (p, r) = (before.new_vreg(VRegKind::Pred), before.new_vreg(VRegKind::Gpr(1)));
        let b = before.entry;
        before.cfg[b].push(Instr::new(Op::Undef, vec![Dst::Pred(p)], vec![]), Span::default());
        before.cfg[b].push(Instr::new(Op::Undef, vec![Dst::reg(r, 1)], vec![]), Span::default());
        let store = |g: Reg, v: Reg| {
            Instr::new(
                Op::Stg(crate::sass::op::MemMods::new(crate::sass::op::MemSize::B32, true)),
                vec![],
                vec![Src::addr(RegRef::rz(2), 0), Src::reg(RegRef::new(v, 1))],
            )
            .guarded(g, false)
        };
        before.cfg[b].push(store(p, r), Span::default());
        before.cfg[b].push(Instr::new(Op::Exit, vec![], vec![]), Span::default());
        let mut after = before.clone();
        after.cfg[b].instrs = vec![store(Reg::P(0), Reg::R(5)), Instr::new(Op::Exit, vec![], vec![])];
        let moves: Moves = HashMap::from([(b, vec![false, false])]);
        let e = verify(&before, &after, &moves).expect_err("an undefined guard");
        assert!(e.contains("P0 does not hold the predicate") && e.contains("undefined"), "{e}");
        // The predicate defined, the stored value still undefined: accepted.
        let def = Instr::new(
            Op::Isetp { cmp: crate::sass::op::Cmp::Ne, u32: true, x: false, bop: BoolOp::And },
            vec![Dst::Pred(p), Dst::Pred(PT)],
            vec![Src::rz(), Src::rz(), Src::pt()],
        );
        before.cfg[b].instrs[0] = def.clone();
        let mut pdef = def;
        pdef.dsts[0] = Dst::Pred(Reg::P(0));
        after.cfg[b].instrs.insert(0, pdef);
        let moves: Moves = HashMap::from([(b, vec![false; 3])]);
        assert_eq!(verify(&before, &after, &moves), Ok(()));
    }

    /// Three `LOP.XOR`s through a register holding nothing known (`R16`) move `R10` into
    /// `R8` whatever `R16` holds (tests/data/fuzz/compile_undef_quad_component.bin: the
    /// unknown operand made the checker lose `R8`). Without the first XOR (`R10` alone
    /// flipped by `R16`), `R8` holds an unknown value and the store is rejected.
    #[test]
    fn xor_moves_through_an_unknown_register() {
        use crate::ptx::ast::{FuncKind, Span};
        use crate::sass::op::LogicOp;
        let mut before = Function::new("k", FuncKind::Entry);
        let a = before.new_vreg(VRegKind::Gpr(1));
        let b = before.entry;
        let def = |d: Reg| Instr::new(Op::Mov, vec![Dst::reg(d, 1)], vec![Src::imm(7)]);
        let store = |v: Reg| {
            Instr::new(
                Op::Stg(crate::sass::op::MemMods::new(crate::sass::op::MemSize::B32, true)),
                vec![],
                vec![Src::addr(RegRef::rz(2), 0), Src::reg(RegRef::new(v, 1))],
            )
        };
        let xor = |d: u8, x: u8, y: u8| {
            Instr::new(
                Op::Lop(LogicOp::Xor),
                vec![Dst::reg(Reg::R(d), 1)],
                vec![Src::reg(RegRef::new(Reg::R(x), 1)), Src::reg(RegRef::new(Reg::R(y), 1))],
            )
        };
        for i in [def(a), store(a), Instr::new(Op::Exit, vec![], vec![])] {
            before.cfg[b].push(i, Span::default());
        }
        let mut after = before.clone();
        let tail = [store(Reg::R(8)), Instr::new(Op::Exit, vec![], vec![])];
        after.cfg[b].instrs = [def(Reg::R(10)), xor(17, 16, 10), xor(10, 10, 17), xor(8, 17, 10)]
            .into_iter()
            .chain(tail.clone())
            .collect();
        let moves: Moves = HashMap::from([(b, vec![false, true, true, true, false, false])]);
        assert_eq!(verify(&before, &after, &moves), Ok(()));
        after.cfg[b].instrs = [def(Reg::R(10)), xor(8, 16, 10)].into_iter().chain(tail).collect();
        let moves: Moves = HashMap::from([(b, vec![false, true, false, false])]);
        let e = verify(&before, &after, &moves).expect_err("R8 = R16 ^ R10");
        assert!(e.contains("R8 does not hold the value"), "{e}");
    }
}
