//! Block-local value numbers of the physical registers of allocated code, enough to tell
//! that two guard predicates hold one value ([`super::cc::verify_allocated`]).
//!
//! After allocation a predicate value may sit in several registers: `regalloc2` copies it
//! (`PSETP.AND.AND Pd, PT, Ps, PT, PT`), and predicate demotion (`regalloc::predicates`)
//! keeps it in a general-purpose register (`SEL Rg, RZ, 0x1, !P`) and rematerializes it
//! before each reader (`ISETP.NE.U32.AND Pq, PT, Rg, RZ, PT`), so a carry pair's writer
//! and reader may be guarded by `@P4` and `@P6` that both hold `Rg != 0`. Two registers
//! have one value number when a copy (`MOV`, the predicate copy, a spill store and its
//! reload) or the same pure computation (`ISETP` but `.X`, `PSETP`, `SEL` of equal operands)
//! made them equal since the block began; every other write (a guarded one too) gives a
//! fresh number, and a register first read in the block gets one for its value on entry.
//! The numbering is conservative: equal numbers mean equal values in every thread, so a
//! value undefined in the PTX program (a register never written) has one number too,
//! whatever it holds. Linear in the block's size.

use crate::sass::instr::{Dst, Instr, PT, Reg, Src, SrcKind};
use crate::sass::op::Op;
use std::collections::HashMap;

/// A physical location of allocated code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Loc {
    /// `R0`..`R254`.
    R(u8),
    /// `P0`..`P6`.
    P(u8),
    /// A spill word, by byte offset from `R1`.
    Spill(i32),
}

/// What a derived value is computed from: the op and its mods, the destination index,
/// and each source as value numbers (registers) or its text (other operands).
type Key = (String, usize, Vec<String>);

/// The value numbers of one block (see the module documentation).
#[derive(Default)]
pub struct GuardValues {
    ids: HashMap<Loc, u32>,
    derived: HashMap<Key, u32>,
    next: u32,
}

impl GuardValues {
    /// The numbering at the start of a block: every register holds its own entry value.
    pub fn new() -> GuardValues {
        GuardValues::default()
    }

    fn fresh(&mut self) -> u32 {
        self.next += 1;
        self.next
    }

    fn id(&mut self, l: Loc) -> u32 {
        if let Some(&v) = self.ids.get(&l) {
            return v;
        }
        let v = self.fresh();
        self.ids.insert(l, v);
        v
    }

    /// The value number of predicate `p` (`PT` has a number of its own); `None` for a
    /// virtual register (unallocated code).
    pub fn pred(&mut self, p: Reg) -> Option<u32> {
        match p {
            Reg::P(7) => Some(0),
            Reg::P(x) => Some(self.id(Loc::P(x))),
            _ => None,
        }
    }

    /// The value numbers of a source, as text for a derived value's key.
    fn src_key(&mut self, s: &Src) -> String {
        if let SrcKind::Pred(p) = s.kind {
            return format!("p{:?}{:?}", self.pred(p), s.mods);
        }
        match s.gprs() {
            Some(r) if matches!(r.reg, Reg::R(_)) => {
                let ids: Vec<Option<u32>> = gprs(r.reg, r.comp, r.n).map(|l| l.map(|l| self.id(l))).collect();
                let mut t = *s;
                if let Some(rr) = t.gprs_mut() {
                    rr.reg = Reg::R(0);
                }
                format!("r{ids:?}{t:?}")
            }
            _ => format!("{s:?}"),
        }
    }

    /// Applies allocated instruction `i` to the numbering.
    pub fn step(&mut self, i: &Instr) {
        if matches!(i.op, Op::Call(_)) {
            // The callee may change any register: everything read later is a new value.
            self.ids.clear();
            self.derived.clear();
        }
        let unguarded = i.guard.is_none_or(|g| g.pred == PT && !g.neg);
        // Copies: the destination gets the source's number.
        if unguarded {
            match (i.op, i.dsts.as_slice(), i.srcs.as_slice()) {
                (Op::Mov, [Dst::Reg(d)], [s]) if s.mods == Default::default() => {
                    if let SrcKind::Reg(r) = s.kind {
                        let from: Vec<Option<Loc>> = gprs(r.reg, r.comp, d.n).collect();
                        let vals: Vec<Option<u32>> = from.into_iter().map(|l| l.map(|l| self.id(l))).collect();
                        self.write_gprs(*d, vals);
                        return;
                    }
                }
                (
                    Op::Psetp { bop0: crate::sass::op::BoolOp::And, bop1: crate::sass::op::BoolOp::And },
                    [Dst::Pred(d), Dst::Pred(PT)],
                    [a, b, c],
                ) if matches!(a.kind, SrcKind::Pred(_)) && !a.mods.inv && *b == Src::pt() && *c == Src::pt() => {
                    if let (SrcKind::Pred(p), Reg::P(x)) = (a.kind, *d)
                        && let Some(v) = self.pred(p)
                        && x != 7
                    {
                        self.ids.insert(Loc::P(x), v);
                        return;
                    }
                }
                (Op::Ldl(m), [Dst::Reg(d)], [s]) if m.spill => {
                    if let SrcKind::Addr { offset, .. } = s.kind {
                        let vals: Vec<Option<u32>> =
                            (0..d.n as i32).map(|k| Some(self.id(Loc::Spill(offset + 4 * k)))).collect();
                        self.write_gprs(*d, vals);
                        return;
                    }
                }
                (Op::Stl(m), [], [a, r]) if m.spill => {
                    if let (SrcKind::Addr { offset, .. }, Some(r)) = (a.kind, r.as_reg()) {
                        let from: Vec<Option<Loc>> = gprs(r.reg, r.comp, r.n).collect();
                        for (k, l) in from.into_iter().enumerate() {
                            let v = match l {
                                Some(l) => self.id(l),
                                None => self.fresh(),
                            };
                            self.ids.insert(Loc::Spill(offset + 4 * k as i32), v);
                        }
                        return;
                    }
                }
                _ => {}
            }
        }
        // Pure computations: equal operands give equal results (`ISETP.X` also reads the
        // carry flag, which the numbering does not follow).
        let pure = unguarded && matches!(i.op, Op::Isetp { x: false, .. } | Op::Psetp { .. } | Op::Sel);
        let srcs: Vec<String> = if pure { i.srcs.iter().map(|s| self.src_key(s)).collect() } else { vec![] };
        for (k, d) in i.dsts.iter().enumerate() {
            let value = |me: &mut GuardValues, c: u8| {
                if pure {
                    let key = (format!("{:?}/{c}", i.op), k, srcs.clone());
                    if let Some(&v) = me.derived.get(&key) {
                        return v;
                    }
                    let v = me.fresh();
                    me.derived.insert(key, v);
                    v
                } else {
                    me.fresh()
                }
            };
            match *d {
                Dst::Reg(r) => {
                    let vals: Vec<Option<u32>> = (0..r.n).map(|c| Some(value(self, c))).collect();
                    self.write_gprs(r, vals);
                }
                Dst::Pred(Reg::P(x)) if x != 7 => {
                    let v = value(self, 0);
                    self.ids.insert(Loc::P(x), v);
                }
                Dst::Pred(_) => {}
            }
        }
    }

    fn write_gprs(&mut self, d: crate::sass::instr::RegRef, vals: Vec<Option<u32>>) {
        let to: Vec<Option<Loc>> = gprs(d.reg, d.comp, d.n).collect();
        for (l, v) in to.into_iter().zip(vals) {
            if let Some(l) = l {
                let v = match v {
                    Some(v) => v,
                    None => self.fresh(),
                };
                self.ids.insert(l, v);
            }
        }
    }
}

/// The locations of `n` registers from `reg + comp`; `None` for `RZ` (and virtual
/// registers).
fn gprs(reg: Reg, comp: u8, n: u8) -> impl Iterator<Item = Option<Loc>> {
    (0..n).map(move |k| match reg {
        Reg::R(x) if x != 255 => Some(Loc::R(x.wrapping_add(comp).wrapping_add(k))),
        _ => None,
    })
}
