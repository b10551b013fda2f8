//! Every `ld`/`st` form of the PTX ISA, generated as the cross product of state space ×
//! memory-consistency qualifier and scope × cache operator × eviction priority / hint ×
//! vector × type, is either lowered as `lower::mem::ldst::plan` documents it (access opcode,
//! sizes, cache operator, MEMBAR placement, Plg use, warnings for emulated features) or
//! rejected with the plan's diagnostic. `docs/lowering.md` carries the same plan as tables
//! (`lowering_doc_is_current`; refresh with `UPDATE_DOCS=1 cargo test --test ldst_matrix`).

mod common;

use common::{Batch, Case, HEADER, cases};
use ptx2sass::ir::{Function, Module};
use ptx2sass::lower::mem::ldst::{Access, Form, Plan, Space, plan};
use ptx2sass::ptx::instr::{LdSt, MemSem, Scope};
use ptx2sass::ptx::types::{ScalarType, SharedSub, StateSpace};
use ptx2sass::sass::instr::SrcKind;
use ptx2sass::sass::op::{CacheOp, MemSize, MembarLevel, Op};
use std::collections::HashMap;

/// The memory accesses of a lowered kernel in layout order (the form's accesses come
/// first; the sink store comes last).
fn accesses(f: &Function) -> Vec<&ptx2sass::sass::instr::Instr> {
    f.layout
        .iter()
        .flat_map(|b| f.cfg[*b].instrs.iter())
        .filter(|i| i.op.mem().is_some() || matches!(i.op, Op::Membar(_) | Op::Ldc { .. }))
        .collect()
}

/// Checks a lowered kernel against its plan; returns a description of the first mismatch.
fn check_ok(f: &Function, c: &Case, p: &Plan) -> Result<(), String> {
    let all = accesses(f);
    let sink = if c.form.is_ld { c.ldst.vec.unwrap_or(1) as usize } else { 0 };
    let body: Vec<_> = all[..all.len() - sink].to_vec();
    // Function-parameter loads follow a store to the parameter (held in registers).
    let expected_op = |i: &ptx2sass::sass::instr::Instr| -> bool {
        matches!(
            (p.access, c.form.is_ld, i.op),
            (Access::Global, true, Op::Ldg(_))
                | (Access::Global, false, Op::Stg(_))
                | (Access::Generic, true, Op::Ld(_))
                | (Access::Generic, false, Op::St(_))
                | (Access::Shared, true, Op::Lds(_))
                | (Access::Shared, false, Op::Sts(_))
                | (Access::Local, true, Op::Ldl(_))
                | (Access::Local, false, Op::Stl(_))
        )
    };
    match p.access {
        Access::Register => {
            if body.iter().any(|i| i.op.mem().is_some()) {
                return Err(format!("a function-parameter access became memory instructions: {body:?}"));
            }
            return Ok(());
        }
        Access::ConstBank => {
            if body.iter().any(|i| i.op.mem().is_some()) {
                return Err("a constant-bank load became a memory instruction".into());
            }
            return Ok(());
        }
        _ => {}
    }
    let mem: Vec<_> = body.iter().filter(|i| i.op.mem().is_some()).collect();
    if mem.len() != p.sizes.len() || !mem.iter().all(|i| expected_op(i)) {
        return Err(format!(
            "expected {} {} access(es), found {:?}",
            p.sizes.len(),
            p.access.name(c.form.is_ld),
            mem.iter().map(|i| i.op.name()).collect::<Vec<_>>()
        ));
    }
    for (i, size) in mem.iter().zip(&p.sizes) {
        let m = i.op.mem().expect("memory op");
        if m.size != *size {
            return Err(format!("size {:?}, expected {:?} ({})", m.size, size, i.op.name()));
        }
        if matches!(p.access, Access::Global | Access::Generic) && m.cop != p.cop {
            return Err(format!("cache operator {:?}, expected {:?} ({})", m.cop, p.cop, i.op.name()));
        }
        if p.access == Access::Generic && !matches!(i.srcs.last().map(|s| s.kind), Some(SrcKind::Pred(_))) {
            return Err("generic access without Plg".into());
        }
    }
    let membars: Vec<(usize, MembarLevel)> = body
        .iter()
        .enumerate()
        .filter_map(|(k, i)| if let Op::Membar(l) = i.op { Some((k, l)) } else { None })
        .collect();
    let first = body.iter().position(|i| i.op.mem().is_some()).expect("an access");
    let last = body.iter().rposition(|i| i.op.mem().is_some()).expect("an access");
    let want: Vec<(usize, MembarLevel)> =
        p.membar_before.map(|l| (first - 1, l)).into_iter().chain(p.membar_after.map(|l| (last + 1, l))).collect();
    let got: Vec<(usize, MembarLevel)> = membars;
    if p.membar_before.is_some() && first == 0 {
        return Err("expected a MEMBAR before the access".into());
    }
    if got != want {
        return Err(format!("MEMBARs {got:?}, expected {want:?}"));
    }
    Ok(())
}

/// Parses a batch, checks that every kernel's form is classified into the case's
/// qualifiers, and lowers it.
fn parse_and_lower(
    b: &Batch,
    cases: &[&Case],
) -> Result<(Module, Vec<ptx2sass::diag::Diag>), Vec<ptx2sass::diag::Diag>> {
    let (m, mut w) = match ptx2sass::ptx::parse(&b.src) {
        Ok(x) => x,
        Err(d) => {
            let first = d.iter().find(|d| d.is_error()).expect("an error");
            let form = b.kernel_at(first.primary.0.lo).map_or("?", |k| cases[k].text.as_str());
            panic!("a form does not parse: {} (form: {form})", first.message);
        }
    };
    let mut seen = vec![false; cases.len()];
    for item in &m.items {
        use ptx2sass::ptx::ast::{Item, Statement};
        use ptx2sass::ptx::instr::InstrKind;
        let Item::Function(f) = item else { continue };
        for s in f.body.iter().flat_map(|b| &b.stmts) {
            let Statement::Instr(i) = s else { continue };
            let Some(k) = b.kernel_at(i.span.lo) else { continue };
            let (InstrKind::Ld(l) | InstrKind::St(l)) = &i.kind else { panic!("{}: not an ld/st", cases[k].text) };
            assert_eq!(*l, cases[k].ldst, "classification of {}", cases[k].text);
            seen[k] = true;
        }
    }
    assert!(seen.iter().all(|s| *s), "every form is found in its kernel");
    let (ir, w2) = ptx2sass::lower::lower(&m, &Default::default())?;
    w.extend(w2);
    Ok((ir, w))
}

/// Forms per batch: large enough to amortize the module overhead, small enough to keep
/// a failure readable.
const BATCH: usize = 500;

#[test]
fn every_ld_st_form_is_lowered_or_rejected_as_planned() {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for is_ld in [true, false] {
        let all = cases(is_ld);
        let (mut ok, mut rejected) = (vec![], vec![]);
        for c in &all {
            match plan(&c.ldst, c.form) {
                Ok(p) => ok.push((c, p)),
                Err(r) => rejected.push((c, r)),
            }
        }
        // Accepted forms: lower them in batches and compare with the plan.
        for chunk in ok.chunks(BATCH) {
            let cs: Vec<&Case> = chunk.iter().map(|(c, _)| *c).collect();
            let b = Batch::new(HEADER, &cs);
            let (ir, warnings) = match parse_and_lower(&b, &cs) {
                Ok(x) => x,
                Err(d) => {
                    let first = d.iter().find(|d| d.is_error()).expect("an error");
                    let form = b.src[..first.primary.0.lo as usize]
                        .rsplit_once(".entry k")
                        .and_then(|(_, k)| k.split('(').next()?.parse::<usize>().ok())
                        .map_or("?", |k| cs[k].text.as_str());
                    panic!("a planned-ok form failed: {} (form: {form})", first.message);
                }
            };
            let warned: std::collections::HashSet<usize> =
                warnings.iter().filter_map(|w| b.kernel_at(w.primary.0.lo)).collect();
            for (k, (c, p)) in chunk.iter().enumerate() {
                let f = &ir.functions[k];
                assert_eq!(f.name, format!("k{k}"));
                if let Err(e) = check_ok(f, c, p) {
                    panic!("{}: {e}\n{f}", c.text);
                }
                // Emulated features and dropped hints are reported on the form's line.
                let expect_warning = !(p.emulated.is_empty() && p.dropped.is_empty());
                assert_eq!(warned.contains(&k), expect_warning, "{}: warning expected: {expect_warning}", c.text);
                let kind = match (p.emulated.is_empty(), p.dropped.is_empty()) {
                    (false, _) => "emulated",
                    (true, false) => "native, hint dropped",
                    (true, true) => "native",
                };
                *counts.entry(kind).or_default() += 1;
            }
        }
        // Rejected forms: each kernel's error carries the plan's message.
        for chunk in rejected.chunks(BATCH) {
            let cs: Vec<&Case> = chunk.iter().map(|(c, _)| *c).collect();
            let b = Batch::new(HEADER, &cs);
            let diags = match parse_and_lower(&b, &cs) {
                Ok(_) => panic!("a batch of rejected forms compiled"),
                Err(d) => d,
            };
            let mut errors: HashMap<usize, Vec<&str>> = HashMap::new();
            for d in diags.iter().filter(|d| d.is_error()) {
                if let Some(k) = b.kernel_at(d.primary.0.lo) {
                    errors.entry(k).or_default().push(&d.message);
                }
            }
            for (k, (c, r)) in chunk.iter().enumerate() {
                let got = errors.get(&k).cloned().unwrap_or_default();
                assert!(
                    got.iter().any(|m| m.contains(&r.message)),
                    "{}: expected the error {:?}; got {got:?}",
                    c.text,
                    r.message
                );
                *counts.entry("rejected").or_default() += 1;
            }
        }
    }
    let total: usize = counts.values().sum();
    println!("ld/st forms: {total} ({counts:?})");
    assert!(total > 1000);
}

#[test]
fn lowering_doc_is_current() {
    let path = "docs/lowering.md";
    let doc = std::fs::read_to_string(path).unwrap();
    let (begin, end) =
        ("<!-- ldst-tables:begin (generated from lower::mem::ldst::plan) -->", "<!-- ldst-tables:end -->");
    let tables = ptx2sass::lower::mem::ldst::doc_tables();
    let (a, rest) = doc.split_once(begin).expect("begin marker");
    let (_, b) = rest.split_once(end).expect("end marker");
    let fresh = format!("{a}{begin}\n{tables}\n{end}{b}");
    if std::env::var("UPDATE_DOCS").is_ok() {
        std::fs::write(path, &fresh).unwrap();
    } else {
        assert!(
            fresh == doc,
            "docs/lowering.md is out of date with lower::mem::ldst::plan; run `UPDATE_DOCS=1 cargo test --test ldst_matrix`"
        );
    }
}

#[test]
fn plan_details() {
    // Spot checks of rows whose reasons matter.
    let base = LdSt {
        space: Some(StateSpace::Global),
        sem: None,
        scope: None,
        mmio: false,
        cop: None,
        nc: false,
        l1_evict: None,
        l2_evict: None,
        cache_hint: false,
        prefetch: None,
        vec: None,
        ty: ScalarType::B32,
    };
    let f = |is_ld, space| Form {
        is_ld,
        space,
        immediate_address: false,
        has_policy_operand: false,
        unified: false,
        uniform_address: false,
    };
    let p =
        plan(&LdSt { sem: Some(MemSem::Acquire), scope: Some(Scope::Gpu), ..base }, f(true, Space::Global)).unwrap();
    assert_eq!((p.cop, p.membar_after, p.membar_before), (CacheOp::Cg, Some(MembarLevel::Gl), None));
    let p =
        plan(&LdSt { sem: Some(MemSem::Release), scope: Some(Scope::Sys), ..base }, f(false, Space::Global)).unwrap();
    assert_eq!((p.cop, p.membar_before), (CacheOp::Wt, Some(MembarLevel::Sys)));
    let p = plan(
        &LdSt {
            sem: Some(MemSem::Acquire),
            scope: Some(Scope::Sys),
            space: Some(StateSpace::Shared(SharedSub::None)),
            ..base
        },
        f(true, Space::Shared),
    )
    .unwrap();
    assert_eq!((p.cop, p.membar_after), (CacheOp::Default, Some(MembarLevel::Cta)));
    let p = plan(&LdSt { vec: Some(8), ..base }, f(true, Space::Global)).unwrap();
    assert_eq!(p.sizes, vec![MemSize::B128, MemSize::B128]);
    assert!(!p.emulated.is_empty());
    let p = plan(
        &LdSt { vec: Some(4), ty: ScalarType::F32, ..base },
        Form { uniform_address: true, ..f(true, Space::Global) },
    )
    .unwrap();
    assert_eq!(p.sizes, vec![MemSize::U128]);
    let r = plan(&LdSt { sem: Some(MemSem::Volatile), space: Some(StateSpace::Local), ..base }, f(true, Space::Local))
        .unwrap_err();
    assert_eq!(r.qualifier, ".volatile");
    let r = plan(&LdSt { nc: true, space: Some(StateSpace::Shared(SharedSub::None)), ..base }, f(true, Space::Shared))
        .unwrap_err();
    assert_eq!(r.qualifier, ".nc");
    let r = plan(&base, Form { immediate_address: true, ..f(true, Space::Global) }).unwrap_err();
    assert!(r.message.contains("only for `.local`"));
}
