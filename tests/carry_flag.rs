//! The carry flag (CC) as a value (issue 22 item 1): a carry-out whose sum is unused must
//! survive for the carry-in that reads it, whatever lies between them. Each form runs on
//! both executors (PTX interpreter and SPA 5.0 simulator, 512 threads on edge and random
//! operands) and must agree bit for bit; every listing also passes the hazard checker.
//! Compilation runs the IR verifier, which checks every CC link after lowering, after both
//! scheduling passes and after allocation (`ir::cc`).

#[path = "common/forms.rs"]
mod forms;
#[path = "common/launches.rs"]
mod launches;

use forms::{SLOT, THREADS, int_core};
use launches::*;
use ptx2sass::exec::{self, Launch};
use ptx2sass::ptx::types::ScalarType;

fn ty(s: &str) -> ScalarType {
    ScalarType::from_dot(&format!(".{s}")).unwrap_or_else(|| panic!("type {s}"))
}

/// Compiles the form `text` (sources `%s1..` of types `srcs`, destinations `%d0..`) and
/// compares both executors on two input sets; returns the interpreter's first result word
/// of every thread.
fn check(text: &str, srcs: &[&str], dsts: &[&str]) -> Vec<u64> {
    let srcs: Vec<ScalarType> = srcs.iter().map(|s| ty(s)).collect();
    let dsts: Vec<ScalarType> = dsts.iter().map(|s| ty(s)).collect();
    let body = format!(".reg .b32 %u<4>;\n.reg .b64 %v<4>;\n.reg .pred %q<2>;\n{text}");
    let src = forms::kernel(&body, &srcs, &dsts);
    let program = compile(&src);
    let (module, _) = ptx2sass::ptx::parse(&src).unwrap_or_else(|_| panic!("parses:\n{src}"));
    forms::assert_hazard_free(&program, text);
    let mut first = vec![];
    for set in 0..2u64 {
        let mut rng = Rng::new(0xcc + set * 7919 + text.len() as u64);
        let with: Vec<(ScalarType, ())> = srcs.iter().map(|t| (*t, ())).collect();
        let input = forms::inputs(&with, &mut rng, |t, _| int_core(t.bits()), |r, _, _| r.next());
        let mut s = Setup::new();
        let pin = s.buf(input);
        let pout = s.buf(vec![0xcd; (THREADS as u64 * SLOT) as usize]);
        let l = s.launch(&program, "k", [THREADS / 128, 1, 1], [128, 1, 1], &[Val::I(pin), Val::I(pout)]);
        let l = Launch { seed: set + 1, ..l };
        let (want, _, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{text}: {e}\n{src}"));
        assert!(diff.is_empty(), "`{text}`: executors differ in {} region(s)\n{program}", diff.len());
        if set == 0 {
            first = (0..THREADS as u64).map(|t| want.global.read_uint("global", pout + t * SLOT, 8).unwrap()).collect();
        }
    }
    first
}

/// The reproducer of issue 22 item 1, as filed: `out[0]` must be 1, the carry of
/// `0xffffffff + 1`, although the sum `t` is never read.
#[test]
fn carry_of_an_unused_sum_reaches_addc() {
    let src = ".version 6.5\n.target sm_50\n.address_size 64\n\
        .visible .entry k(.param .u64 out)\n{\n    .reg .u64 p;\n    .reg .b32 t, c;\n\
        ld.param.u64 p, [out];\n    add.cc.u32 t, 0xffffffff, 1;\n    addc.u32 c, 0, 0;\n\
        st.global.u32 [p], c;\n    ret;\n}\n";
    let program = compile(src);
    forms::assert_hazard_free(&program, "issue 22 item 1");
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let mut s = Setup::new();
    let out = s.buf(vec![0xcd; 4]);
    let l = s.launch(&program, "k", [1, 1, 1], [1, 1, 1], &[Val::I(out)]);
    let (want, got, diff) = exec::compare(&module, &program, &l).expect("runs");
    assert!(diff.is_empty(), "executors differ\n{program}");
    assert_eq!(want.global.read_uint("global", out, 4).unwrap(), 1, "interpreter");
    assert_eq!(got.global.read_uint("global", out, 4).unwrap(), 1, "simulator\n{program}");
}

/// Carry-outs whose sums are unused, for every carry-producing instruction, 32 and 64 bits,
/// the carry captured by `addc d, 0, 0` (or read by `subc`/`madc`).
#[test]
fn unused_sums_of_every_carry_out_form() {
    for t in ["u32", "s32", "u64", "s64"] {
        let capture = "addc.u32 %u0, 0, 0;\ncvt.u64.u32 %d0, %u0;";
        let w = if t.ends_with("64") { "%v1" } else { "%u1" };
        for out in [
            format!("add.cc.{t} {w}, %s1, %s2;"),
            format!("sub.cc.{t} {w}, %s1, %s2;"),
            format!("mad.lo.cc.{t} {w}, %s1, %s2, %s3;"),
            format!("mad.hi.cc.{t} {w}, %s1, %s2, %s3;"),
        ] {
            check(&format!("{out}\n{capture}"), &[t, t, t], &["u64"]);
            // Read by a carry-in of the other kinds, whose own sum is used.
            check(&format!("{out}\nsubc.{t} %d0, %s3, %s1;"), &[t, t, t], &[t]);
            check(&format!("{out}\nmadc.hi.{t} %d0, %s3, %s1, %s2;"), &[t, t, t], &[t]);
        }
        // A chain whose middle sums are unused: the first carry flows through them.
        check(
            &format!("add.cc.{t} {w}, %s1, %s2;\naddc.cc.{t} {w}, %s2, %s3;\nsubc.cc.{t} {w}, %s3, %s1;\n{capture}"),
            &[t, t, t],
            &["u64"],
        );
        check(
            &format!("mad.lo.cc.{t} {w}, %s1, %s2, %s3;\nmadc.hi.cc.{t} {w}, %s1, %s2, %s3;\n{capture}"),
            &[t, t, t],
            &["u64"],
        );
    }
}

/// Unrelated instructions between a carry-out and its reader: 64-bit address arithmetic,
/// a load from it, a 64-bit compare (each writes the hardware flag), a branch, a guarded
/// carry-out and a loop.
#[test]
fn carries_across_unrelated_flag_writers_and_branches() {
    let capture = "addc.u32 %u0, 0, 0;\ncvt.u64.u32 %d0, %u0;";
    let forms = [
        // Address arithmetic and a load between them; the loaded value used afterwards.
        format!(
            "add.cc.u32 %u1, %s1, %s2;\nadd.s64 %v1, %a4, 8;\nld.global.u32 %u2, [%v1];\n{capture}\nadd.u32 %u0, %u0, %u2;\ncvt.u64.u32 %d1, %u0;"
        ),
        // A load after the carry-in: the list schedulers hoist it and its address
        // arithmetic (`IADD.CC`/`IADD.X`) as early as they can, but not between the carry
        // and its reader.
        format!(
            "add.cc.u32 %u1, %s1, %s2;\n{capture}\nadd.s64 %v1, %a4, 8;\nld.global.u32 %u2, [%v1];\ncvt.u64.u32 %d1, %u2;"
        ),
        // A 64-bit compare and a 64-bit add in between.
        format!(
            "sub.cc.u32 %u1, %s1, %s2;\nsetp.lt.u64 %q0, %a3, %a4;\nadd.u64 %v2, %a4, %a5;\n{capture}\nselp.u64 %d1, %v2, 0, %q0;"
        ),
        // A branch in between, the sum unused on both paths.
        format!(
            "add.cc.u32 %u1, %s1, %s2;\nsetp.eq.u32 %q0, %s1, 7;\n@%q0 bra L1;\nadd.u64 %v1, %a4, 16;\nL1:\n{capture}\nmov.u64 %d1, 5;"
        ),
        // A guarded carry-out whose sum is unused: the flag is the first or the second carry.
        format!(
            "add.cc.u32 %u1, %s1, %s2;\nsetp.lt.u32 %q0, %s1, %s2;\n@%q0 sub.cc.u32 %u1, %s2, %s1;\n{capture}\nmov.u64 %d1, 5;"
        ),
        // A carry accumulated over a loop (three carry-outs per trip, sums unused).
        format!(
            "mov.u32 %u3, 0;\nmov.u32 %u2, 0;\nL2:\nadd.cc.u32 %u1, %s1, %u3;\naddc.cc.u32 %u1, %s2, 0;\naddc.u32 %u2, %u2, 0;\nadd.u32 %u3, %u3, 0x40000000;\nsetp.lt.u32 %q1, %u3, 0xc0000000;\n@%q1 bra L2;\nadd.cc.u32 %u1, %u2, 0xfffffffe;\n{capture}\ncvt.u64.u32 %d1, %u2;"
        ),
    ];
    for f in &forms {
        check(f, &["u32", "u32"], &["u64", "u64"]);
    }
    // `0xffffffff + 1` carries on every thread.
    let ones = check(
        "add.cc.u32 %u1, 0xffffffff, 1;\nadd.s64 %v1, %a4, 8;\naddc.u32 %u0, 0, 0;\ncvt.u64.u32 %d0, %u0;",
        &[],
        &["u64"],
    );
    assert!(ones.iter().all(|&v| v == 1), "{ones:?}");
}

/// The executors' carry against the arithmetic it stands for (PTX ISA 9.7.2: chains of
/// `add.cc`/`addc`, `sub.cc`/`subc` and `mad.lo.cc`/`madc.hi` compute multi-word sums,
/// differences and products), computed here with u128 on every thread's operands: both
/// the interpreter and the simulator must give these values.
#[test]
fn carry_chains_compute_multiword_arithmetic() {
    // (text, source types, destination types, expected words from the four 64-bit operands)
    type Want = fn(u64, u64, u64, u64) -> Vec<u64>;
    let cases: Vec<(&str, Vec<&str>, Vec<&str>, Want)> = vec![
        (
            "mov.b64 {%u0, %u1}, %s1;\nmov.b64 {%u2, %u3}, %s2;\nadd.cc.u32 %u0, %u0, %u2;\naddc.u32 %u1, %u1, %u3;\nmov.b64 %d0, {%u0, %u1};",
            vec!["u64", "u64"],
            vec!["u64"],
            |a, b, _, _| vec![a.wrapping_add(b)],
        ),
        (
            "mov.b64 {%u0, %u1}, %s1;\nmov.b64 {%u2, %u3}, %s2;\nsub.cc.u32 %u0, %u0, %u2;\nsubc.u32 %u1, %u1, %u3;\nmov.b64 %d0, {%u0, %u1};",
            vec!["u64", "u64"],
            vec!["u64"],
            |a, b, _, _| vec![a.wrapping_sub(b)],
        ),
        (
            "add.cc.u64 %d0, %s1, %s2;\naddc.cc.u64 %d1, %s3, %s4;\naddc.u64 %d2, 0, 0;",
            vec!["u64", "u64", "u64", "u64"],
            vec!["u64", "u64", "u64"],
            |a, b, c, d| {
                let s = (a as u128 | (c as u128) << 64).wrapping_add(b as u128 | (d as u128) << 64);
                let carry = ((c as u128) << 64 | a as u128).checked_add((d as u128) << 64 | b as u128).is_none();
                vec![s as u64, (s >> 64) as u64, carry as u64]
            },
        ),
        (
            "sub.cc.u64 %d0, %s1, %s2;\nsubc.u64 %d1, %s3, %s4;",
            vec!["u64", "u64", "u64", "u64"],
            vec!["u64", "u64"],
            |a, b, c, d| {
                let s = (a as u128 | (c as u128) << 64).wrapping_sub(b as u128 | (d as u128) << 64);
                vec![s as u64, (s >> 64) as u64]
            },
        ),
        (
            "mov.b64 {%u2, %u3}, %s3;\ncvt.u32.u64 %u0, %s1;\ncvt.u32.u64 %u1, %s2;\n\
             mad.lo.cc.u32 %u2, %u0, %u1, %u2;\nmadc.hi.u32 %u3, %u0, %u1, %u3;\nmov.b64 %d0, {%u2, %u3};",
            vec!["u64", "u64", "u64"],
            vec!["u64"],
            |a, b, c, _| vec![((a & 0xffff_ffff) * (b & 0xffff_ffff)).wrapping_add(c)],
        ),
        (
            "mad.lo.cc.u64 %d0, %s1, %s2, %s3;\nmadc.hi.u64 %d1, %s1, %s2, %s4;",
            vec!["u64", "u64", "u64", "u64"],
            vec!["u64", "u64"],
            |a, b, c, d| {
                let p = (a as u128 * b as u128).wrapping_add(c as u128 | (d as u128) << 64);
                vec![p as u64, (p >> 64) as u64]
            },
        ),
        (
            "mov.b64 {%u0, %u1}, %s1;\nmov.b64 {%u2, %u3}, %s2;\nsub.cc.u32 %u0, %u0, %u2;\nsubc.cc.u32 %u1, %u1, %u3;\n\
             subc.u32 %u2, 0, 0;\nmov.b64 %d0, {%u0, %u1};\ncvt.u64.u32 %d1, %u2;",
            vec!["u64", "u64"],
            vec!["u64", "u64"],
            // 0 - 0 - borrow: all ones after a borrow out of the 64-bit subtraction.
            |a, b, _, _| vec![a.wrapping_sub(b), if a < b { 0xffff_ffff } else { 0 }],
        ),
    ];
    for (text, srcs, dsts, want) in cases {
        let src_t: Vec<ScalarType> = srcs.iter().map(|s| ty(s)).collect();
        let dst_t: Vec<ScalarType> = dsts.iter().map(|s| ty(s)).collect();
        let body = format!(".reg .b32 %u<4>;\n{text}");
        let src = forms::kernel(&body, &src_t, &dst_t);
        let program = compile(&src);
        let (module, _) = ptx2sass::ptx::parse(&src).expect("parses");
        let mut rng = Rng::new(text.len() as u64);
        let with: Vec<(ScalarType, ())> = src_t.iter().map(|t| (*t, ())).collect();
        let input = forms::inputs(&with, &mut rng, |t, _| int_core(t.bits()), |r, _, _| r.next());
        let mut s = Setup::new();
        let pin = s.buf(input.clone());
        let pout = s.buf(vec![0xcd; (THREADS as u64 * SLOT) as usize]);
        let l = s.launch(&program, "k", [THREADS / 128, 1, 1], [128, 1, 1], &[Val::I(pin), Val::I(pout)]);
        let (ptx, sim, _) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{text}: {e}"));
        for t in 0..THREADS as u64 {
            let op = |k: usize| {
                let at = (t * SLOT) as usize + 8 * k;
                if k < srcs.len() { u64::from_le_bytes(input[at..at + 8].try_into().unwrap()) } else { 0 }
            };
            let expect = want(op(0), op(1), op(2), op(3));
            for (name, m) in [("interpreter", &ptx.global), ("simulator", &sim.global)] {
                let got: Vec<u64> = (0..expect.len())
                    .map(|k| m.read_uint("global", pout + t * SLOT + 8 * k as u64, 8).unwrap())
                    .collect();
                assert_eq!(
                    got,
                    expect,
                    "{name}, `{text}`, thread {t}, operands {:#x} {:#x} {:#x} {:#x}",
                    op(0),
                    op(1),
                    op(2),
                    op(3)
                );
            }
        }
    }
}
