//! The condition code (CC) as a value of the IR.
//!
//! SPA 5.0 has one carry flag per thread (CC.CF; spa50-LEA.txt names the flags CF, ZF, SF,
//! OF). The `.CC` forms of `IADD`, `IADD32I`, `ISCADD`, `LEA` and `XMAD` write it, the
//! `.X` forms of `IADD`, `IADD32I`, `LEA.HI` and `XMAD` and `ISETP.X` read it
//! ([`crate::sass::op::Op::writes_cc`], [`crate::sass::op::Op::reads_cc`]). Lowering uses
//! it for 64-bit arithmetic and compares and for PTX's `add.cc`/`addc`/`sub.cc`/`subc`/
//! `mad.cc`/`madc` (PTX ISA 9.7.2).
//!
//! In the IR every writer defines a fresh *CC value* ([`crate::sass::instr::CcLink::def`],
//! numbered by [`Function::new_cc`]) and every reader names the value it reads
//! ([`crate::sass::instr::CcLink::read`]), so a pass sees who writes the flag and who
//! reads it as it sees any other value. Invariants ([`verify`]):
//!
//! * `def` is set exactly on the instructions whose op writes CC, `read` exactly on those
//!   whose op reads it, and each value is defined once;
//! * a reader reads the last CC value written before it in its block: the hardware has one
//!   flag, so a value is live from its writer to its last reader and no other writer may
//!   come in between, and no value is live across a block boundary (lowering restores a
//!   carry needed in another block from a register, [`crate::lower`]'s `carry_in`);
//! * a reader of a value whose writer is guarded has the same guard: a thread for which the
//!   writer did not execute would read an older flag (if-conversion guards a whole arm with
//!   one predicate, so its writers and readers agree).
//!
//! Who relies on what: dead-code elimination keeps a writer while a reader of its value is
//! live and drops `.CC` from a writer whose value nobody reads (`lower::opt`); address
//! rewrites that change a writer's sum check that its value has no other reader
//! (`lower::mem::memopt`); both list-scheduling passes order CC writers and readers as accesses
//! of one register (`sched::list`); register allocation inserts only moves, spill code and
//! predicate rematerialisation, none of which touches CC, and keeps the links as they are
//! (the one flag needs no allocation); [`verify`] runs after lowering, after each
//! scheduling pass and after allocation (`driver`, in debug builds and with `--verify`),
//! so a pass that breaks a link is an internal error, not wrong code.
//!
//! The values are not printed: by the second invariant, the `.CC` writers and `.X`
//! readers of a listing name them unambiguously.

use super::{BlockId, Function};
use crate::sass::instr::Instr;

/// Checks the invariants of the module documentation on `f` (linear in its size).
pub fn verify(f: &Function) -> Result<(), String> {
    verify_links(f, true)
}

/// [`verify`] on allocated code: the third invariant compares guards by register before
/// allocation (one SSA value, one register), but after it a predicate value may sit in two
/// registers (a writer guarded by `P4`, its reader by a copy in `P3`, or both by
/// rematerializations of one demoted predicate, `ISETP.NE.U32.AND P4, PT, R8, RZ, PT` and
/// `.. P6, PT, R8, ..`), so the guards are compared by value: block-local value numbers
/// ([`super::guards`]) must show that the reader's guard holds the writer's guard's value.
/// This holds whatever the predicate's value in the PTX program (a never-written
/// predicate too) and runs after every pass on allocated code (allocation and the
/// post-allocation scheduler), where the allocation verifier (`regalloc::verify`, which
/// proves each guard reads the SSA value) runs only after allocation.
pub fn verify_allocated(f: &Function) -> Result<(), String> {
    verify_links(f, false)
}

fn verify_links(f: &Function, same_guard: bool) -> Result<(), String> {
    let n = f.cc_values as usize;
    let mut defined = vec![false; n];
    for &b in &f.layout {
        let here = || format!("{} in {}", f.block_label(b.index() as u32), f.name);
        // The value in the flag, its writer, and the value number of the writer's guard
        // (allocated code).
        let mut cur: Option<(u32, &Instr, Option<u32>)> = None;
        let mut values = super::guards::GuardValues::new();
        for i in &f.cfg[b].instrs {
            let text = || f.instr_text(i);
            let guard_value = match i.guard {
                Some(g) if !same_guard && (i.cc.def.is_some() || i.cc.read.is_some()) => values.pred(g.pred),
                _ => None,
            };
            if i.op.reads_cc() != i.cc.read.is_some() || i.op.writes_cc() != i.cc.def.is_some() {
                return Err(format!(
                    "{}: `{}` has CC links {:?} that do not match what it does with CC",
                    here(),
                    text(),
                    i.cc
                ));
            }
            if let Some(v) = i.cc.read {
                let Some((c, w, w_value)) = cur else {
                    return Err(format!("{}: `{}` reads CC not set earlier in the block", here(), text()));
                };
                if c != v {
                    return Err(format!(
                        "{}: `{}` reads CC value {v}, but the flag holds value {c} of `{}`",
                        here(),
                        text(),
                        f.instr_text(w)
                    ));
                }
                let agree = match (w.guard, i.guard) {
                    (None, _) => true,
                    (Some(_), None) => false,
                    (Some(x), Some(y)) if same_guard => x == y,
                    (Some(x), Some(y)) => x.neg == y.neg && w_value.is_some() && w_value == guard_value,
                };
                if !agree {
                    return Err(format!(
                        "{}: `{}` reads the CC of `{}`, which not every thread that reads it executes",
                        here(),
                        text(),
                        f.instr_text(w)
                    ));
                }
            }
            if let Some(v) = i.cc.def {
                match defined.get_mut(v as usize) {
                    None => return Err(format!("{}: `{}` defines CC value {v} of {n}", here(), text())),
                    Some(d) if *d => return Err(format!("{}: `{}` defines CC value {v} again", here(), text())),
                    Some(d) => *d = true,
                }
                cur = Some((v, i, guard_value));
            }
            // The numbering is read only on allocated code (`guard_value` above).
            if !same_guard {
                values.step(i);
            }
        }
    }
    Ok(())
}

/// Where each CC value is defined ((block, index), indexed by value).
pub fn def_sites(f: &Function) -> Vec<Option<(BlockId, usize)>> {
    let mut sites = vec![None; f.cc_values as usize];
    for &b in &f.layout {
        for (k, i) in f.cfg[b].instrs.iter().enumerate() {
            if let Some(v) = i.cc.def
                && let Some(s) = sites.get_mut(v as usize)
            {
                *s = Some((b, k));
            }
        }
    }
    sites
}

/// How many instructions read each CC value (indexed by value).
pub fn reader_counts(f: &Function) -> Vec<u32> {
    let mut n = vec![0u32; f.cc_values as usize];
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            if let Some(v) = i.cc.read
                && let Some(c) = n.get_mut(v as usize)
            {
                *c += 1;
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::verify;
    use crate::ir::{Function, VRegKind};
    use crate::ptx::ast::{FuncKind, Span};
    use crate::sass::instr::{Dst, Instr, PT, Reg, RegRef, Src};
    use crate::sass::op::Op;

    /// `IADD.CC` (writer) or `IADD.X` (reader) of fresh registers, linked to `def`/`read`.
    fn add(f: &mut Function, def: Option<u32>, read: Option<u32>) -> Instr {
        let d = f.new_vreg(VRegKind::Gpr(1));
        let mut i = Instr::new(
            Op::Iadd { cc: def.is_some(), x: read.is_some() },
            vec![Dst::reg(d, 1)],
            vec![Src::rz(), Src::rz()],
        );
        i.cc.def = def;
        i.cc.read = read;
        i
    }

    /// A one-block function holding `body` then `EXIT`.
    fn func(f: &mut Function, body: Vec<Instr>) {
        let b = f.entry;
        for i in body {
            f.cfg[b].push(i, Span::default());
        }
        f.cfg[b].push(Instr::new(Op::Exit, vec![], vec![]), Span::default());
    }

    #[test]
    fn a_reader_reads_the_last_value_written_in_its_block() {
        let mut f = Function::new("k", FuncKind::Entry);
        let (a, b) = (f.new_cc(), f.new_cc());
        let body = vec![add(&mut f, Some(a), None), add(&mut f, Some(b), Some(a)), add(&mut f, None, Some(b))];
        func(&mut f, body);
        assert_eq!(verify(&f), Ok(()));
    }

    #[test]
    fn broken_links_are_reported() {
        // Another writer between a writer and its reader (as a scheduler moving it would).
        let mut f = Function::new("k", FuncKind::Entry);
        let (a, b) = (f.new_cc(), f.new_cc());
        let body = vec![add(&mut f, Some(a), None), add(&mut f, Some(b), None), add(&mut f, None, Some(a))];
        func(&mut f, body);
        assert!(verify(&f).is_err_and(|e| e.contains("the flag holds value 1")), "{:?}", verify(&f));
        // The writer deleted (as dead-code elimination of an unused sum did).
        let mut f = Function::new("k", FuncKind::Entry);
        let a = f.new_cc();
        let body = vec![add(&mut f, None, Some(a))];
        func(&mut f, body);
        assert!(verify(&f).is_err_and(|e| e.contains("not set earlier")));
        // A guarded writer read by an unguarded reader.
        let mut f = Function::new("k", FuncKind::Entry);
        let a = f.new_cc();
        let p = f.new_vreg(VRegKind::Pred);
        let w = add(&mut f, Some(a), None).guarded(p, false);
        let body = vec![w, add(&mut f, None, Some(a))];
        func(&mut f, body);
        assert!(verify(&f).is_err_and(|e| e.contains("not every thread")));
        // A CC writer without its value (a pass that set `.CC` and forgot the link), and a
        // value defined twice.
        let mut f = Function::new("k", FuncKind::Entry);
        let a = f.new_cc();
        let mut w = add(&mut f, Some(a), None);
        w.cc.def = None;
        func(&mut f, vec![w]);
        assert!(verify(&f).is_err_and(|e| e.contains("do not match")));
        let mut f = Function::new("k", FuncKind::Entry);
        let a = f.new_cc();
        let body = vec![add(&mut f, Some(a), None), add(&mut f, Some(a), None)];
        func(&mut f, body);
        assert!(verify(&f).is_err_and(|e| e.contains("again")));
    }

    /// `ISETP.NE.U32.AND Pp, PT, Rg, RZ, PT`: predicate demotion's rematerialization.
    fn remat(p: u8, g: u8) -> Instr {
        Instr::new(
            Op::Isetp { cmp: crate::sass::op::Cmp::Ne, u32: true, x: false, bop: crate::sass::op::BoolOp::And },
            vec![Dst::Pred(Reg::P(p)), Dst::Pred(PT)],
            vec![Src::reg(RegRef::new(Reg::R(g), 1)), Src::rz(), Src::pt()],
        )
    }

    /// `@Pp IADD R2.CC` (writer) or `@Pp IADD.X R3` (reader) on physical registers.
    fn phys_add(p: u8, def: Option<u32>, read: Option<u32>) -> Instr {
        let d = if def.is_some() { 2 } else { 3 };
        let mut i = Instr::new(
            Op::Iadd { cc: def.is_some(), x: read.is_some() },
            vec![Dst::reg(Reg::R(d), 1)],
            vec![Src::rz(), Src::rz()],
        )
        .guarded(Reg::P(p), false);
        i.cc.def = def;
        i.cc.read = read;
        i
    }

    /// Allocated code: a carry pair's writer and reader guarded by two registers are
    /// accepted when they hold one value (rematerializations of one demoted predicate, a
    /// predicate copy), rejected when they may not (rematerialized from two registers, or
    /// the writer's register written in between). The first was the allocation of
    /// tests/data/fuzz/carry_guard_undef_pred.ptx (`@P4 LEA R2.CC` / `@P6 LEA.HI.X`, both
    /// from `R8`); the register comparison rejected it, and no comparison (this branch
    /// before the fix) accepted all of them.
    #[test]
    fn allocated_guards_are_compared_by_value() {
        let psetp_copy = |d: u8, s: u8| {
            Instr::new(
                Op::Psetp { bop0: crate::sass::op::BoolOp::And, bop1: crate::sass::op::BoolOp::And },
                vec![Dst::Pred(Reg::P(d)), Dst::Pred(PT)],
                vec![Src::pred(Reg::P(s), false), Src::pt(), Src::pt()],
            )
        };
        let mov =
            |d: u8, s: u8| Instr::new(Op::Mov, vec![Dst::reg(Reg::R(d), 1)], vec![Src::reg(RegRef::new(Reg::R(s), 1))]);
        let run = |body: Vec<Instr>| {
            let mut f = Function::new("k", FuncKind::Entry);
            f.new_cc();
            func(&mut f, body);
            super::verify_allocated(&f)
        };
        let (w, r) = (|p| phys_add(p, Some(0), None), |p| phys_add(p, None, Some(0)));
        let same = [
            vec![remat(4, 8), remat(6, 8), w(4), r(6)],
            vec![remat(4, 8), w(4), remat(6, 8), r(6)],
            vec![w(0), psetp_copy(3, 0), r(3)],
            vec![mov(9, 8), remat(4, 8), w(4), remat(6, 9), r(6)],
            vec![w(5), r(5)],
        ];
        for body in same {
            assert_eq!(run(body.clone()), Ok(()), "{body:?}");
        }
        let different = [
            vec![remat(4, 8), remat(6, 9), w(4), r(6)],
            vec![remat(4, 8), w(4), mov(8, 9), remat(6, 8), r(6)],
            vec![w(4), remat(4, 8), r(4)],
            vec![w(0), psetp_copy(3, 1), r(3)],
        ];
        for body in different {
            assert!(run(body.clone()).is_err_and(|e| e.contains("not every thread")), "{body:?}");
        }
    }

    #[test]
    fn no_value_crosses_a_block_boundary() {
        let mut f = Function::new("k", FuncKind::Entry);
        let a = f.new_cc();
        let w = add(&mut f, Some(a), None);
        let entry = f.entry;
        f.cfg[entry].push(w, Span::default());
        let next = f.new_block("next");
        f.layout.push(next);
        f.cfg[entry].push(Instr::new(Op::Bra, vec![], vec![Src::label(next.index() as u32)]), Span::default());
        f.cfg.add_edge(entry, next, crate::ir::Edge { kind: crate::ir::EdgeKind::Taken, args: vec![] });
        let r = add(&mut f, None, Some(a));
        f.cfg[next].push(r, Span::default());
        f.cfg[next].push(Instr::new(Op::Exit, vec![], vec![]), Span::default());
        assert!(verify(&f).is_err_and(|e| e.contains("not set earlier")));
    }
}
