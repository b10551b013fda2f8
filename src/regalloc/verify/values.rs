//! Value numbers of the SSA function before allocation: one per 32-bit component of a
//! virtual register, merged through `copy`, `join` and predicate copies (see the module
//! documentation of [`super`]).

use super::is_pred_copy;
use crate::ir::{Function, VRegKind};
use crate::sass::instr::{Dst, Instr, Reg, RegRef, SrcKind};
use crate::sass::op::Op;

/// Canonical value numbers of the SSA function's virtual-register components, merged
/// through `copy` and `join` (which only move values).
pub(super) struct Values {
    pub(super) first: Vec<u32>,
    pub(super) parent: Vec<u32>,
    pub(super) undef: Vec<bool>,
    /// Which value numbers are predicates.
    pub(super) pred: Vec<bool>,
    pub(super) zero: u32,
    pub(super) frame: u32,
}

impl Values {
    pub(super) fn new(f: &Function) -> Values {
        let mut first = vec![];
        let mut pred = vec![];
        let mut n = 0u32;
        for k in &f.vregs {
            first.push(n);
            let w = match k {
                VRegKind::Gpr(w) => *w as u32,
                VRegKind::Pred => 1,
            };
            pred.extend(std::iter::repeat_n(*k == VRegKind::Pred, w as usize));
            n += w;
        }
        pred.extend([false, false]);
        let (zero, frame) = (n, n + 1);
        let undef = vec![false; n as usize + 2];
        let mut v = Values { first, parent: (0..n + 2).collect(), undef, pred, zero, frame };
        for &b in &f.layout {
            for i in &f.cfg[b].instrs {
                v.note_moves(i);
            }
        }
        v
    }

    /// A new value number equal to no value of the SSA function (an opaque value, see
    /// [`Checker::xor_term`]).
    pub(super) fn fresh(&mut self) -> u32 {
        let x = self.parent.len() as u32;
        self.parent.push(x);
        self.undef.push(false);
        self.pred.push(false);
        x
    }

    pub(super) fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            self.parent[x as usize] = self.parent[self.parent[x as usize] as usize];
            x = self.parent[x as usize];
        }
        x
    }

    pub(super) fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a as usize] = b;
            self.undef[b as usize] |= self.undef[a as usize];
        }
    }

    /// The value of component `c` of virtual register `v`.
    pub(super) fn of(&mut self, v: u32, c: u8) -> u32 {
        let x = self.first[v as usize] + c as u32;
        self.find(x)
    }

    /// The values a source operand's components hold in the SSA function, if it is a
    /// register (`RZ` is the value zero).
    pub(super) fn of_src(&mut self, r: RegRef) -> Option<Vec<u32>> {
        match r.reg {
            Reg::V(v) => Some((0..r.n).map(|k| self.of(v, r.comp + k)).collect()),
            x if x.is_rz() => Some(vec![self.zero; r.n as usize]),
            _ => None,
        }
    }

    /// Records what a copy, a join or an undef says about values.
    pub(super) fn note_moves(&mut self, i: &Instr) {
        let Some(d) = i.dsts.first() else { return };
        let Some(dv) = crate::ir::dst_vreg(d) else { return };
        match i.op {
            Op::Undef => {
                let w = match d {
                    Dst::Reg(r) => r.n,
                    Dst::Pred(_) => 1,
                };
                for c in 0..w {
                    let x = self.of(dv, c);
                    self.undef[x as usize] = true;
                }
            }
            Op::Copy | Op::Join => {
                let mut c = 0u8;
                for s in &i.srcs {
                    let Some(r) = s.as_reg() else { return };
                    let Some(vals) = self.of_src(r) else { return };
                    for x in vals {
                        let y = self.of(dv, c);
                        self.union(y, x);
                        c += 1;
                    }
                }
            }
            _ if is_pred_copy(i) => {
                if let SrcKind::Pred(Reg::V(s)) = i.srcs[0].kind {
                    let (x, y) = (self.of(dv, 0), self.of(s, 0));
                    self.union(x, y);
                }
            }
            _ => {}
        }
    }
}
