//! What the checker knows about each location of the register file: sets of value
//! numbers per location, the join of two such states, and the symbolic `LOP.XOR` swaps
//! (see the module documentation of [`super`]).

use crate::sass::instr::{Reg, RegRef};
use std::collections::{BTreeSet, HashMap};

/// What a location is known to hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Content {
    /// Equal to each of these values.
    Vals(BTreeSet<u32>),
    /// The exclusive or of these values (mid-way through an XOR swap), each given as the
    /// set of value numbers it is known equal to.
    Xor(Vec<BTreeSet<u32>>),
}

/// A register file location: GPR `0..255`, predicate `256 + p`, spill word `512 + k`.
pub(super) type Loc = u32;
pub(super) const PRED_BASE: Loc = 256;
pub(super) const SPILL_BASE: Loc = 512;
/// Not a location: the values every location holds, because they are undefined on every
/// path taken so far (a block parameter whose argument is an `undef`, as LLVM's `undef`
/// in a loop's phi). Whatever a register holds is a valid value of such a value, so the
/// allocator need not place it anywhere; reads of it are accepted from any location
/// until a join with a path on which it is defined. General-purpose values only.
pub(super) const ANY_LOC: Loc = u32::MAX;

pub(super) type State = HashMap<Loc, Content>;

pub(super) fn gpr_locs(r: RegRef) -> Option<Vec<Loc>> {
    match r.reg {
        Reg::R(x) if !r.reg.is_rz() => Some((0..r.n).map(|k| x as u32 + r.comp as u32 + k as u32).collect()),
        _ => None,
    }
}

/// The values every location of `s` holds ([`ANY_LOC`]).
pub(super) fn anywhere(s: &State) -> BTreeSet<u32> {
    match s.get(&ANY_LOC) {
        Some(Content::Vals(v)) => v.clone(),
        _ => BTreeSet::new(),
    }
}

/// `a` at a join with `b`: each location keeps what both sides agree it holds, counting
/// the values a side holds everywhere ([`ANY_LOC`]) as held by each of its locations
/// (whatever a register holds on a path where a value is undefined is a valid value of
/// it: PTX leaves a never-written register's value undefined), and [`ANY_LOC`] keeps the
/// values undefined on both sides. So a location holding value `v` on one side, where the
/// other leaves `v` undefined, holds `v` after the join, whether or not that other side
/// knows what the location holds (it dropped the location when it did).
pub(super) fn meet(a: &mut State, b: &State) {
    let (any_a, any_b) = (anywhere(a), anywhere(b));
    // What a side holds at `loc`, with its values held everywhere (a location mid-way
    // through an XOR swap holds none of its own).
    let side = |s: &State, any: &BTreeSet<u32>, loc: &Loc| -> BTreeSet<u32> {
        match s.get(loc) {
            Some(Content::Vals(x)) => x.union(any).copied().collect(),
            _ => any.clone(),
        }
    };
    let locs: BTreeSet<Loc> = a.keys().chain(b.keys()).copied().filter(|l| *l != ANY_LOC).collect();
    let mut out = State::new();
    for loc in locs {
        match (a.get(&loc), b.get(&loc)) {
            (Some(x @ Content::Xor(_)), Some(y)) if x == y => {
                out.insert(loc, x.clone());
            }
            _ => {
                let z: BTreeSet<u32> = side(a, &any_a, &loc).intersection(&side(b, &any_b, &loc)).copied().collect();
                if !z.is_empty() {
                    out.insert(loc, Content::Vals(z));
                }
            }
        }
    }
    let any: BTreeSet<u32> = any_a.intersection(&any_b).copied().collect();
    if !any.is_empty() {
        out.insert(ANY_LOC, Content::Vals(any));
    }
    *a = out;
}

/// `a ^ b`: a term on both sides cancels. A term is the set of value numbers a location
/// is known equal to (one value); only identical terms cancel, so that a swap of two
/// registers holding the same value gives each the other's whole set back.
pub(super) fn xor(a: &Content, b: &Content) -> Option<Content> {
    let terms = |c: &Content| match c {
        Content::Vals(s) if s.is_empty() => None,
        Content::Vals(s) => Some(vec![s.clone()]),
        Content::Xor(t) => Some(t.clone()),
    };
    let mut r = terms(a)?;
    for t in terms(b)? {
        match r.iter().position(|x| *x == t) {
            Some(k) => {
                r.remove(k);
            }
            None => r.push(t),
        }
    }
    Some(if r.len() == 1 { Content::Vals(r.pop().expect("one term")) } else { Content::Xor(r) })
}

pub(super) const RZ_LOC: Loc = 255;

pub(super) fn loc1(r: RegRef) -> Loc {
    gpr_locs(r).map_or(RZ_LOC, |l| l[0])
}

pub(super) fn set(s: &mut State, locs: Option<Vec<Loc>>, c: Option<Content>) {
    if let Some(l) = locs {
        for loc in l {
            set_loc(s, loc, c.clone());
        }
    }
}

pub(super) fn set_loc(s: &mut State, loc: Loc, c: Option<Content>) {
    match c {
        Some(c) => {
            s.insert(loc, c);
        }
        None => {
            s.remove(&loc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value defined on one path into a join (in `R8`) and undefined on the other (held
    /// everywhere, while that path's `R8` holds something else) is in `R8` after the
    /// join, whichever side the meet starts from. Starting from the undefined side, the
    /// location was dropped (tests/data/fuzz/regalloc_undef_phi.ptx: "R8 does not hold
    /// the value"). Values undefined on both sides stay held everywhere.
    #[test]
    fn a_join_keeps_a_value_undefined_on_one_side() {
        let vals = |v: &[u32]| Content::Vals(v.iter().copied().collect());
        let undefined_side: State = HashMap::from([(8, vals(&[5])), (ANY_LOC, vals(&[7, 9]))]);
        let defined_side: State = HashMap::from([(8, vals(&[3, 7])), (ANY_LOC, vals(&[9]))]);
        let want: State = HashMap::from([(8, vals(&[7, 9])), (ANY_LOC, vals(&[9]))]);
        for (a, b) in [(&undefined_side, &defined_side), (&defined_side, &undefined_side)] {
            let mut m = a.clone();
            meet(&mut m, b);
            assert_eq!(m, want);
        }
    }

    /// A register known equal to two value numbers (one value) swapped by three XORs
    /// with another keeps both numbers.
    #[test]
    fn xor_swap_keeps_equal_value_numbers() {
        let a = Content::Vals(BTreeSet::from([1, 2]));
        let b = Content::Vals(BTreeSet::from([3]));
        let a1 = xor(&a, &b).expect("known");
        let b1 = xor(&b, &a1).expect("known");
        let a2 = xor(&a1, &b1).expect("known");
        assert_eq!(b1, Content::Vals(BTreeSet::from([1, 2])));
        assert_eq!(a2, Content::Vals(BTreeSet::from([3])));
        // Two registers holding one value known under different numbers, swapped.
        let c = Content::Vals(BTreeSet::from([2]));
        let a1 = xor(&a, &c).expect("known");
        let c1 = xor(&c, &a1).expect("known");
        let a2 = xor(&a1, &c1).expect("known");
        assert_eq!((a2, c1), (c.clone(), a.clone()));
    }
}
