//! Every sample in `samples/` compiles; its IR and SASS are pinned by insta snapshots
//! (review them like code: `cargo insta review`), and every emitted program respects
//! SPA 5.0's register alignment.

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::sass::instr::{Dst, Reg, SrcKind};
use ptx2sass::sass::program::Program;

fn compile(src: &str, emit: Emit) -> driver::Output {
    let mut opts = Options { emit, ..Options::default() };
    opts.regalloc.verify = true;
    match driver::compile(src, &opts) {
        Ok(o) => o,
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("sample", src).render_all(&d)),
    }
}

/// Samples too large to review as a snapshot, with the reason; each is tested elsewhere.
/// `stress_spill.ptx` (thousands of instructions of spill code) is checked by
/// `tests/regalloc.rs` (register count, spill size, both verifiers). `sha256.ptx` (~900
/// SASS instructions of unrolled rounds) and `sgemm_reg.ptx` (~700, unrolled 4x4x8 fma
/// blocks) run bit for bit against the PTX interpreter in `tests/differential.rs`
/// (3 launch shapes each), and `sha256` against the FIPS 180-4 "abc" digest in
/// `tests/exec_sim.rs`.
const NOT_SNAPSHOTTED: &[&str] = &["stress_spill.ptx", "sha256.ptx", "sgemm_reg.ptx"];

fn snapshotted(path: &std::path::Path) -> bool {
    !NOT_SNAPSHOTTED.iter().any(|n| path.ends_with(n))
}

#[test]
fn ir_snapshots() {
    insta::glob!("../samples", "*.ptx", |path| {
        if !snapshotted(path) {
            return;
        }
        let src = std::fs::read_to_string(path).unwrap();
        insta::assert_snapshot!("ir", compile(&src, Emit::Ir).text);
    });
}

#[test]
fn sass_snapshots() {
    insta::glob!("../samples", "*.ptx", |path| {
        if !snapshotted(path) {
            return;
        }
        let src = std::fs::read_to_string(path).unwrap();
        insta::assert_snapshot!("sass", compile(&src, Emit::Sass).text);
    });
}

/// Checks every register operand of a scheduled program: 64-bit operands (and `.E`
/// address pairs) start at an even register, 128-bit operands at a multiple of 4, no
/// operand runs past R254, predicates are P0..P6 or PT.
fn check_alignment(p: &Program) -> Vec<String> {
    let mut errors = vec![];
    for f in &p.functions {
        for (k, s) in f.code.iter().enumerate() {
            let check = |r: ptx2sass::sass::instr::RegRef, what: &str, errors: &mut Vec<String>| {
                if let Reg::R(x) = r.reg {
                    if x == 255 {
                        return;
                    }
                    if r.n > 1 && !(x as u32).is_multiple_of(r.n as u32) {
                        errors.push(format!("{} #{k}: {what} R{x} is {} registers wide but not aligned", f.name, r.n));
                    }
                    if x as u32 + r.n as u32 > 255 {
                        errors.push(format!("{} #{k}: {what} R{x} runs past R254", f.name));
                    }
                } else {
                    errors.push(format!("{} #{k}: {what} is not a physical register: {:?}", f.name, r.reg));
                }
            };
            for d in &s.instr.dsts {
                match d {
                    Dst::Reg(r) => check(*r, "destination", &mut errors),
                    Dst::Pred(Reg::P(_)) => {}
                    Dst::Pred(p) => errors.push(format!("{} #{k}: predicate destination {p:?}", f.name)),
                }
            }
            for src in &s.instr.srcs {
                match src.kind {
                    SrcKind::Addr { base, .. } => {
                        let e = s.instr.op.mem().is_some_and(|m| m.e);
                        if e && base.n != 2 && !base.reg.is_rz() {
                            errors.push(format!("{} #{k}: .E address is not a register pair", f.name));
                        }
                        check(base, "address", &mut errors);
                    }
                    SrcKind::Pred(Reg::P(_)) => {}
                    SrcKind::Pred(p) => errors.push(format!("{} #{k}: predicate source {p:?}", f.name)),
                    _ => {
                        if let Some(r) = src.gprs() {
                            check(r, "source", &mut errors);
                        }
                    }
                }
            }
        }
    }
    errors
}

#[test]
fn every_program_is_aligned() {
    let mut checked = 0;
    insta::glob!("../samples", "*.ptx", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let out = compile(&src, Emit::Sass);
        let program = out.program.expect("SASS output has a program");
        let errors = check_alignment(&program);
        assert!(errors.is_empty(), "{}:\n{}", path.display(), errors.join("\n"));
        checked += program.functions.iter().map(|f| f.code.len()).sum::<usize>();
    });
    assert!(checked > 1000, "only {checked} instructions checked");
}

#[test]
fn alignment_check_catches_misaligned_pairs() {
    // The checker itself must be able to fail.
    let src = std::fs::read_to_string("samples/vector_add.ptx").unwrap();
    let mut program = compile(&src, Emit::Sass).program.unwrap();
    let f = &mut program.functions[0];
    let ldg = f.code.iter_mut().find(|s| matches!(s.instr.op, ptx2sass::sass::op::Op::Ldg(_))).unwrap();
    if let SrcKind::Addr { base, .. } = &mut ldg.instr.srcs[0].kind {
        base.reg = Reg::R(3);
    }
    let errors = check_alignment(&program);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("not aligned"));
}
