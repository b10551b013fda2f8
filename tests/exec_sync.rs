//! Differential tests of the synchronization and communication instructions (issue 7,
//! sync part): every `atom`/`red` form on `.global`, `.shared` and generic addresses, and
//! `shfl`/`vote`/`activemask`, each compiled into a kernel of its own, run by 2 CTAs of 128
//! threads on both the PTX interpreter (`exec::ptx`) and the SPA 5.0 simulator
//! (`exec::sim`, scheduling annotations enforced); global memory must agree bit for bit.
//! Every listing also passes the independent hazard checker (`sched::check`).
//!
//! Atomics are order-dependent in general, and the executors order them differently (the
//! interpreter runs lanes in order, the simulator in a seed-drawn order per warp
//! instruction, and its warps in another interleaving). So each atomic form runs twice:
//! * **private**: every thread updates a cell of its own, so both the returned old value
//!   and the final cell are deterministic and compared (this checks the operation's
//!   semantics bit for bit, `inc`/`dec` wrap-around, `cas` hits and misses, f32 denormal
//!   flushing);
//! * **contended**: all threads of a CTA update 4 cells, and only the final cells are
//!   compared, for the operations whose final value does not depend on the order
//!   (integer `add/min/max/and/or/xor`, f32 `add` of values whose sums are exact); the old
//!   values returned are order-dependent and are not stored (which also makes the compiler
//!   emit `RED`/`ATOMS RZ`, as ptxas does).
//!
//! The generic forms address, per thread, either a global cell (even threads) or a shared
//! cell converted with `cvta.shared` (odd threads), chosen by `selp`, so the lowering cannot
//! know the space and both sides of its shared-window branch run in one warp.

#[path = "common/launches.rs"]
mod launches;
#[path = "common/nvidia.rs"]
mod nvidia;
#[path = "common/ptxas.rs"]
mod ptxas;

use launches::*;
use ptx2sass::exec::{self, Launch};
use std::sync::atomic::{AtomicUsize, Ordering};

const CTAS: u32 = 2;
const BLOCK: u32 = 128;
const THREADS: usize = (CTAS * BLOCK) as usize;

static COMPARED: AtomicUsize = AtomicUsize::new(0);

/// Compiles `src`, checks hazards, and compares both executors under `seeds` simulator
/// seeds on the buffers `bufs` (global cells first); returns the number of launches.
fn run(src: &str, what: &str, bufs: &[Vec<u8>], seeds: u64) {
    let program = compile(src);
    let (module, _) = ptx2sass::ptx::parse(src).unwrap_or_else(|_| panic!("parses:\n{src}"));
    let listing = program.to_string();
    let funcs = ptx2sass::sass::text::parse(&listing).expect("listing parses");
    let hazards = ptx2sass::sched::check::check(&funcs).expect("every opcode is in the checker's table");
    assert!(hazards.is_empty(), "{what}: {:?}\n{listing}", hazards.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    // With PTX2SASS_PTXAS=1: ptxas's code for the form too (`tests/sim_ptxas.rs`), except
    // where ptxas 11.8's code does not do what the PTX ISA says:
    // * `brkpt` becomes `BPT.TRAP 0x1` (ending the launch without a debugger, where PTX's
    //   `brkpt` only suspends under one);
    // * `atom`/`red` `.add.f32` on shared memory (and generic addresses, which may be
    //   shared) becomes an `ATOMS.CAS` loop around a plain `FADD`, which keeps subnormal
    //   operands that PTX's `atom.add.f32` flushes (PTX ISA 9.7.13.5).
    let deviates = what == "brkpt" || (what.contains(".add.f32") && !what.contains(".global."));
    let theirs = if deviates { None } else { ptxas::form_program(src, &program) };
    for seed in 0..seeds {
        let mut s = Setup::new();
        let vals: Vec<Val> = bufs.iter().map(|b| Val::I(s.buf(b.clone()))).collect();
        let l = s.launch(&program, "k", [CTAS, 1, 1], [BLOCK, 1, 1], &vals);
        let l = Launch { seed: seed * 31 + 1, step_limit: 50_000_000, ..l };
        let before = l.global.clone();
        let (want, _, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{what}: {e}\n{src}"));
        if let Some(t) = &theirs {
            let g = exec::sim::run(t, &Launch { mufu: exec::MufuModel::Nearest, ..l.clone() })
                .unwrap_or_else(|e| panic!("ptxas's code for {what}: {e}"));
            let d = want.global.diff(&g.global);
            assert!(d.is_empty(), "ptxas's code for {what} (seed {seed}): {:?}", d.first());
        }
        assert!(
            diff.is_empty(),
            "{what} (seed {seed}): {} difference(s), first {:?}\n{src}\n{listing}",
            diff.len(),
            diff[0]
        );
        assert!(!before.diff(&want.global).is_empty(), "{what}: the launch writes nothing");
        COMPARED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Where an atomic form's cells live.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sp {
    Global,
    Shared,
    /// No state space: even threads address global cells, odd threads shared ones.
    Generic,
}

/// An atomic form: `atom` or `red`, its qualifiers (`.global.add.u32` without the space),
/// whether it takes `c`.
#[derive(Clone, Debug)]
struct Atomic {
    red: bool,
    quals: String,
    op: &'static str,
    ty: &'static str,
    space: Sp,
}

impl Atomic {
    fn bits(&self) -> u32 {
        if self.ty.ends_with("64") { 64 } else { 32 }
    }
    fn text(&self) -> String {
        let sp = match self.space {
            Sp::Global => ".global",
            Sp::Shared => ".shared",
            Sp::Generic => "",
        };
        format!("{}{}{sp}.{}.{}", if self.red { "red" } else { "atom" }, self.quals, self.op, self.ty)
    }
}

/// The kernel of an atomic form: params `pin` (b, c per thread, 16 bytes), `pcell`
/// (cells: 128 per CTA, 8 bytes each), `pout` (old values, 8 bytes per thread).
fn atomic_kernel(a: &Atomic, private: bool) -> String {
    let reg = match (a.ty, a.bits()) {
        ("f32", _) => ".f32",
        (_, 64) => ".b64",
        _ => ".b32",
    };
    let ld = match (a.ty, a.bits()) {
        ("f32", _) => ".f32",
        (_, 64) => ".b64",
        _ => ".b32",
    };
    let mut b = format!(
        ".reg .b32 %t<10>;\n.reg .b64 %a<16>;\n.reg .pred %q<4>;\n.reg {reg} %b, %c, %d, %e;\n\
         .shared .align 8 .b8 sh[1024];\n\
         ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pcell];\nld.param.u64 %a3, [pout];\n\
         mov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\nmov.u32 %t3, %ntid.x;\nmad.lo.s32 %t4, %t2, %t3, %t1;\n\
         mul.wide.u32 %a4, %t4, 16;\nadd.s64 %a4, %a1, %a4;\nld.global{ld} %b, [%a4];\nld.global{ld} %c, [%a4+8];\n"
    );
    // Cell index within the CTA, and its global and shared addresses.
    b.push_str(if private { "mov.u32 %t5, %t1;\n" } else { "and.b32 %t5, %t1, 3;\n" });
    b.push_str(
        "mul.lo.s32 %t6, %t2, 128;\nadd.s32 %t6, %t6, %t5;\nmul.wide.u32 %a5, %t6, 8;\nadd.s64 %a6, %a2, %a5;\n\
         mul.wide.u32 %a7, %t5, 8;\nmov.u64 %a8, sh;\nadd.s64 %a8, %a8, %a7;\n",
    );
    let uses_shared = a.space != Sp::Global;
    if uses_shared {
        // Copy this CTA's cells into shared memory.
        b.push_str(
            "mul.wide.u32 %a9, %t1, 8;\nmov.u64 %a10, sh;\nadd.s64 %a10, %a10, %a9;\n\
             mul.lo.s32 %t7, %t2, 128;\nadd.s32 %t7, %t7, %t1;\nmul.wide.u32 %a11, %t7, 8;\nadd.s64 %a11, %a2, %a11;\n\
             ld.global.b64 %a12, [%a11];\nst.shared.b64 [%a10], %a12;\nbar.sync 0;\n",
        );
    }
    let addr = match a.space {
        Sp::Global => "%a6",
        Sp::Shared => "%a8",
        Sp::Generic => {
            b.push_str("cvta.shared.u64 %a13, %a8;\nand.b32 %t8, %t1, 1;\nsetp.eq.u32 %q1, %t8, 0;\nselp.b64 %a14, %a6, %a13, %q1;\n");
            "%a14"
        }
    };
    let cas = a.op == "cas";
    let operands = if cas { "%b, %c" } else { "%b" };
    if a.red {
        b.push_str(&format!("{} [{addr}], {operands};\n", a.text()));
    } else if private {
        b.push_str(&format!(
            "{} %d, [{addr}], {operands};\nmul.wide.u32 %a15, %t4, 8;\nadd.s64 %a15, %a3, %a15;\nst.global{ld} [%a15], %d;\n",
            a.text()
        ));
    } else {
        b.push_str(&format!("{} %d, [{addr}], {operands};\n", a.text()));
    }
    if uses_shared {
        b.push_str("bar.sync 0;\nld.shared.b64 %a12, [%a10];\nst.global.b64 [%a11], %a12;\n");
    }
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 pin, .param .u64 pcell, .param .u64 pout)\n{{\n{b}ret;\n}}\n"
    )
}

/// An operand value of the form's type.
fn value(rng: &mut Rng, a: &Atomic, exact: bool) -> u64 {
    let r = rng.next();
    match (a.ty, a.op) {
        ("f32", _) if exact => (((r % 129) as f32 - 64.0) / 4.0).to_bits() as u64,
        // Subnormals every few values: atom.add.f32 flushes them (PTX ISA 9.7.13.5).
        ("f32", _) => match r % 5 {
            0 => f32::from_bits((r >> 8) as u32 & 0x807f_ffff).to_bits() as u64,
            _ => ((((r >> 8) % 65536) as f32 / 256.0 - 128.0) * if r & 64 != 0 { 1e-36 } else { 1.0 }).to_bits() as u64,
        },
        (_, "inc" | "dec") => r % 12,
        _ if a.bits() == 32 => [r as u32 as u64, 0, u32::MAX as u64, 0x8000_0000, 7, r % 16][(r >> 40) as usize % 6],
        _ => [r, 0, u64::MAX, 1 << 63, 7, r % 16, r >> 32][(r >> 40) as usize % 7],
    }
}

fn words(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn check_atomic(a: &Atomic) {
    let order_free = matches!(a.op, "add" | "min" | "max" | "and" | "or" | "xor");
    for private in [true, false] {
        if !private && !order_free {
            continue;
        }
        let src = atomic_kernel(a, private);
        let mut rng = Rng::new(0xa70 + a.text().len() as u64 * 131 + private as u64);
        let exact = !private;
        let mut ins = vec![];
        for _ in 0..THREADS {
            ins.push(value(&mut rng, a, exact));
            ins.push(value(&mut rng, a, exact));
        }
        let mut cells: Vec<u64> = (0..THREADS).map(|_| value(&mut rng, a, exact)).collect();
        if a.op == "cas" {
            // Even threads compare equal (the swap happens), odd ones mostly not.
            for (t, c) in cells.iter_mut().enumerate() {
                if t % 2 == 0 {
                    *c = ins[2 * t];
                }
            }
        }
        let what = format!("`{}` ({})", a.text(), if private { "private cells" } else { "contended cells" });
        run(&src, &what, &[words(&ins), words(&cells), vec![0xcd; 8 * THREADS]], 3);
    }
}

fn atomic_forms() -> Vec<Atomic> {
    let mut v = vec![];
    let ops: &[(&str, &[&str])] = &[
        ("add", &["u32", "s32", "u64", "f32"]),
        ("min", &["u32", "s32", "u64", "s64"]),
        ("max", &["u32", "s32", "u64", "s64"]),
        ("inc", &["u32"]),
        ("dec", &["u32"]),
        ("and", &["b32", "b64"]),
        ("or", &["b32", "b64"]),
        ("xor", &["b32", "b64"]),
        ("exch", &["b32", "b64"]),
        ("cas", &["b32", "b64"]),
    ];
    for space in [Sp::Global, Sp::Shared, Sp::Generic] {
        for (op, tys) in ops {
            for ty in *tys {
                v.push(Atomic { red: false, quals: String::new(), op, ty, space });
                if *op != "cas" && *op != "exch" {
                    v.push(Atomic { red: true, quals: String::new(), op, ty, space });
                }
            }
        }
    }
    // Memory-order qualifiers (lowered with MEMBARs around the atomic).
    for (q, sp) in [
        (".relaxed.gpu", Sp::Global),
        (".acq_rel.gpu", Sp::Global),
        (".acquire.cta", Sp::Shared),
        (".release.sys", Sp::Generic),
    ] {
        v.push(Atomic { red: false, quals: q.into(), op: "add", ty: "u32", space: sp });
    }
    v.push(Atomic { red: true, quals: ".release.gpu".into(), op: "add", ty: "u32", space: Sp::Global });
    v
}

#[test]
fn atomics_match_the_interpreter() {
    let forms = atomic_forms();
    for a in &forms {
        check_atomic(a);
    }
    eprintln!("{} atomic forms, {} launches compared", forms.len(), COMPARED.load(Ordering::Relaxed));
}

/// A warp-level form: its text (sources `%s1`..`%s3` b32 loaded per thread, `%p1` a
/// per-thread predicate, results `%d0` (b32) and `%q0` (pred)).
fn warp_kernel(text: &str, divergent: bool) -> String {
    let mut b = String::from(
        ".reg .b32 %t<10>;\n.reg .b64 %a<8>;\n.reg .b32 %s<4>;\n.reg .b32 %d0;\n.reg .pred %q0, %p1, %p2;\n\
         ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pout];\n\
         mov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\nmov.u32 %t3, %ntid.x;\nmad.lo.s32 %t4, %t2, %t3, %t1;\n\
         mul.wide.u32 %a3, %t4, 16;\nadd.s64 %a4, %a1, %a3;\nadd.s64 %a5, %a2, %a3;\n\
         ld.global.b32 %s1, [%a4];\nld.global.b32 %s2, [%a4+4];\nld.global.b32 %s3, [%a4+8];\n\
         and.b32 %t5, %s3, 1;\nsetp.ne.u32 %p1, %t5, 0;\nmov.u32 %d0, 0;\nsetp.ne.u32 %q0, %d0, 0;\n",
    );
    if divergent {
        // Lanes whose tid % 3 == 0 skip the instruction.
        b.push_str("rem.u32 %t6, %t1, 3;\nsetp.eq.u32 %p2, %t6, 0;\n@%p2 bra SKIP;\n");
    }
    b.push_str(text);
    b.push('\n');
    if divergent {
        b.push_str("SKIP:\n");
    }
    b.push_str("st.global.b32 [%a5], %d0;\nselp.u32 %t7, 1, 0, %q0;\nst.global.b32 [%a5+4], %t7;\n");
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 pin, .param .u64 pout)\n{{\n{b}ret;\n}}\n"
    )
}

#[test]
fn warp_level_matches_the_interpreter() {
    // Shuffle lane operands: in range, a register (per-thread, masked to 0..31 by the
    // hardware and by PTX), clamp values and segment masks (c = clamp | segmask << 8).
    let mut forms: Vec<(String, bool)> = vec![];
    for mode in ["up", "down", "bfly", "idx"] {
        for (bop, cop) in
            [("1", "31"), ("5", "0x1f"), ("%s2", "31"), ("3", "%s3"), ("17", "0x0f"), ("2", "0x1c07"), ("0", "0")]
        {
            let c = if mode == "up" && cop == "31" { "0" } else { cop };
            forms.push((format!("shfl.{mode}.b32 %d0|%q0, %s1, {bop}, {c};"), false));
            forms.push((format!("shfl.sync.{mode}.b32 %d0, %s1, {bop}, {c}, -1;"), false));
        }
    }
    for v in ["all", "any", "uni"] {
        forms.push((format!("vote.{v}.pred %q0, %p1;"), false));
        forms.push((format!("vote.{v}.pred %q0, !%p1;"), true));
        forms.push((format!("vote.sync.{v}.pred %q0, %p1, -1;"), false));
    }
    forms.push(("vote.ballot.b32 %d0, %p1;".into(), false));
    forms.push(("vote.ballot.b32 %d0, !%p1;".into(), true));
    forms.push(("vote.sync.ballot.b32 %d0, %p1, 0xffffffff;".into(), false));
    // A membermask in a register (all lanes): the ballot forms of the lowering.
    forms.push(("or.b32 %t8, %s3, 0xffffffff;\nvote.sync.ballot.b32 %d0, %p1, %t8;".into(), false));
    for v in ["all", "any", "uni"] {
        forms.push((format!("or.b32 %t8, %s3, 0xffffffff;\nvote.sync.{v}.pred %q0, %p1, %t8;"), false));
    }
    forms.push(("activemask.b32 %d0;".into(), false));
    forms.push(("activemask.b32 %d0;".into(), true));
    for (text, divergent) in &forms {
        let src = warp_kernel(text, *divergent);
        let mut rng = Rng::new(0x5f1 + text.len() as u64);
        // Third operand: mostly odd (predicate true) with some even lanes, and for vote.uni
        // some warps entirely one way.
        let mut ins = vec![];
        for t in 0..THREADS {
            let mut w = [rng.next() as u32, rng.next() as u32, rng.next() as u32 | 1, 0];
            if rng.next().is_multiple_of(4) || (t / 32) % 3 == 1 {
                w[2] &= !1;
            }
            if (t / 32) % 4 == 3 {
                w[2] |= 1;
            }
            ins.extend(w.iter().flat_map(|x| x.to_le_bytes()));
        }
        run(&src, text, &[ins, vec![0xcd; 16 * THREADS]], 2);
    }
}

#[test]
fn ldu_and_prefetch_match_the_interpreter() {
    // `ldu` reads like `ld`; prefetches change nothing.
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
        .visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\
        .reg .b32 %t<8>;\n.reg .b64 %a<8>;\n.reg .f32 %f<4>;\n.local .align 4 .b8 loc[16];\n\
        ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pout];\nmov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\n\
        mov.u32 %t3, %ntid.x;\nmad.lo.s32 %t4, %t2, %t3, %t1;\nmul.wide.u32 %a3, %t4, 16;\nadd.s64 %a4, %a1, %a3;\n\
        add.s64 %a5, %a2, %a3;\nprefetch.global.L1 [%a4];\nprefetchu.L1 [%a4+8];\nprefetch.local.L2 [loc];\nprefetch.L2 [%a5];\n\
        ldu.global.u32 %t5, [%a4];\nldu.global.v2.f32 {%f1, %f2}, [%a4+8];\nldu.u32 %t6, [%a4+4];\n\
        add.f32 %f3, %f1, %f2;\nadd.u32 %t5, %t5, %t6;\nst.global.u32 [%a5], %t5;\nst.global.f32 [%a5+4], %f3;\nret;\n}\n";
    let mut rng = Rng::new(77);
    run(src, "ldu/prefetch", &[rng.f32s(4 * THREADS), vec![0; 16 * THREADS]], 2);
}

#[test]
fn special_registers_match_the_interpreter() {
    // Lane masks, lane/warp/SM ids (one SM: %smid 0, %nsmid 1; %nwarpid 64; %gridid 0 in
    // both executors) are compared bit for bit. Clock values cannot match across the
    // executors (instruction counts vs simulated cycles): only their monotonicity is
    // stored (`%clock64` never decreases, `%clock` advances by less than 2^31).
    let regs = [
        "%laneid",
        "%lanemask_eq",
        "%lanemask_le",
        "%lanemask_lt",
        "%lanemask_ge",
        "%lanemask_gt",
        "%warpid",
        "%nwarpid",
        "%smid",
        "%nsmid",
    ];
    let mut b = String::from(
        ".reg .b32 %t<16>;\n.reg .b64 %a<12>;\n.reg .b32 %v<16>;\n.reg .pred %q<4>;\n\
         ld.param.u64 %a1, [pout];\nmov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\nmov.u32 %t3, %ntid.x;\n\
         mad.lo.s32 %t4, %t2, %t3, %t1;\nmul.wide.u32 %a2, %t4, 64;\nadd.s64 %a3, %a1, %a2;\n\
         mov.u64 %a4, %clock64;\nmov.u32 %t5, %clock;\n",
    );
    for (k, r) in regs.iter().enumerate() {
        b.push_str(&format!("mov.u32 %v{k}, {r};\nst.global.u32 [%a3+{}], %v{k};\n", 4 * k));
    }
    b.push_str(
        "mov.u64 %a5, %gridid;\nst.global.u64 [%a3+48], %a5;\n\
         mov.u64 %a6, %clock64;\nmov.u32 %t6, %clock;\n\
         setp.ge.u64 %q1, %a6, %a4;\nselp.u32 %t7, 1, 0, %q1;\nst.global.u32 [%a3+56], %t7;\n\
         sub.s32 %t8, %t6, %t5;\nsetp.ge.s32 %q2, %t8, 0;\nselp.u32 %t9, 1, 0, %q2;\nst.global.u32 [%a3+60], %t9;\n",
    );
    let src = format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 pout)\n{{\n{b}ret;\n}}\n"
    );
    run(&src, "special registers", &[vec![0xcd; 64 * THREADS]], 2);
    // The clock reads are CS2R (ptxas 11.8), the ids S2R SR_VIRTID/SR_VIRTCFG + BFE.
    let listing = compile(&src).to_string();
    for want in ["CS2R", "SR_CLOCKLO", "SR_CLOCKHI", "SR_VIRTID", "SR_VIRTCFG", "SR_LANEID", "SR_GEMASK", "BFE.U32"] {
        assert!(listing.contains(want), "{want} in\n{listing}");
    }
}

#[test]
fn trap_ends_the_launch_in_both_executors() {
    // Thread 150 (CTA 1) traps after the first store: both executors fail with the same
    // `ExecError::Trap`; `brkpt` (BPT.INT) lets execution go on.
    let kernel = |what: &str| {
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 pout)\n{{\n\
             .reg .b32 %t<8>;\n.reg .b64 %a<4>;\n.reg .pred %q<2>;\nld.param.u64 %a1, [pout];\n\
             mov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\nmov.u32 %t3, %ntid.x;\nmad.lo.s32 %t4, %t2, %t3, %t1;\n\
             mul.wide.u32 %a2, %t4, 4;\nadd.s64 %a3, %a1, %a2;\nst.global.u32 [%a3], %t4;\n\
             setp.eq.u32 %q1, %t4, 150;\n@%q1 {what};\nst.global.u32 [%a3], %t1;\nret;\n}}\n"
        )
    };
    let src = kernel("trap");
    let program = compile(&src);
    assert!(program.to_string().contains("BPT.TRAP 0x1"), "{program}");
    let (module, _) = ptx2sass::ptx::parse(&src).unwrap();
    let mut s = Setup::new();
    let out = s.buf(vec![0; 4 * THREADS]);
    let l = s.launch(&program, "k", [CTAS, 1, 1], [BLOCK, 1, 1], &[Val::I(out)]);
    let want = exec::ptx::run(&module, &l).expect_err("the interpreter traps");
    let got = exec::sim::run(&program, &l).expect_err("the simulator traps");
    assert_eq!(want, exec::ExecError::Trap { ctaid: [1, 0, 0] });
    assert_eq!(got, want);
    let src = kernel("brkpt");
    assert!(compile(&src).to_string().contains("BPT.INT 0x0"));
    run(&src, "brkpt", &[vec![0; 4 * THREADS]], 1);
}

#[test]
fn barriers_match_the_interpreter() {
    // bar.red.popc/.and/.or over each CTA's 128 threads (with `!p` and an explicit thread
    // count), and a producer/consumer pair on a named barrier: warps 0-1 write shared
    // memory and `bar.arrive 3, 128`, warps 2-3 `bar.sync 3, 128` and read it.
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
        .visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\
        .reg .b32 %t<16>;\n.reg .b64 %a<8>;\n.reg .pred %p<6>;\n.shared .align 4 .b8 sh[512];\n\
        ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pout];\nmov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\n\
        mov.u32 %t3, %ntid.x;\nmad.lo.s32 %t4, %t2, %t3, %t1;\nmul.wide.u32 %a3, %t4, 4;\nadd.s64 %a4, %a1, %a3;\n\
        mul.wide.u32 %a5, %t4, 16;\nadd.s64 %a6, %a2, %a5;\nld.global.u32 %t5, [%a4];\n\
        and.b32 %t6, %t5, 1;\nsetp.ne.u32 %p1, %t6, 0;\n\
        bar.red.popc.u32 %t7, 0, %p1;\nbar.red.and.pred %p2, 1, %p1;\nbar.red.or.pred %p3, 2, 128, !%p1;\n\
        setp.lt.u32 %p4, %t5, 0xf0000000;\nbar.red.and.pred %p5, 5, %p4;\n\
        selp.u32 %t8, 1, 0, %p2;\nselp.u32 %t9, 2, 0, %p3;\nselp.u32 %t10, 4, 0, %p5;\nadd.u32 %t8, %t8, %t9;\nadd.u32 %t8, %t8, %t10;\n\
        st.global.u32 [%a6], %t7;\nst.global.u32 [%a6+4], %t8;\n\
        mov.u64 %a7, sh;\nsetp.lt.u32 %p4, %t1, 64;\n@!%p4 bra CONSUME;\n\
        mul.wide.u32 %a5, %t1, 4;\nadd.s64 %a5, %a7, %a5;\nst.shared.u32 [%a5], %t5;\nbar.arrive 3, 128;\nbra.uni DONE;\n\
        CONSUME:\nbar.sync 3, 128;\nsub.u32 %t11, %t1, 64;\nmul.wide.u32 %a5, %t11, 4;\nadd.s64 %a5, %a7, %a5;\n\
        ld.shared.u32 %t12, [%a5];\nst.global.u32 [%a6+8], %t12;\n\
        DONE:\nbar.sync 4, 64;\nst.global.u32 [%a6+12], %t1;\nret;\n}\n";
    let program = compile(src);
    let listing = program.to_string();
    for want in [
        "BAR.RED.POPC 0x0, P",
        "BAR.RED.AND 0x1, P",
        "BAR.RED.OR 0x2, 0x80, !P",
        "B2R.RESULT R",
        "B2R.RESULT RZ, P",
        "BAR.ARV 0x3, 0x80",
        "BAR.SYNC 0x3, 0x80",
    ] {
        assert!(listing.contains(want), "{want} in\n{listing}");
    }
    let mut rng = Rng::new(0xba7);
    for k in 0..3 {
        // Inputs: random, all odd (AND true), all even (OR of !p true) per CTA half.
        let mut ins = rng.u32s(THREADS);
        if k > 0 {
            for w in ins.chunks_mut(4) {
                w[0] = (w[0] & !1) | (k == 1) as u8;
                w[3] &= 0x7f;
            }
        }
        run(src, &format!("barriers, input {k}"), &[ins, vec![0xcd; 16 * THREADS]], 2);
    }
}

#[test]
fn isspacep_matches_the_interpreter() {
    // Generic addresses of global, shared (cvta.shared) and local (cvta.local) data, one
    // kind per thread (tid % 3), tested against every space; no generic address is
    // constant (ptx2sass has no generic constant window), so `.const` is false.
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n\
        .visible .entry k(.param .u64 pout)\n{\n\
        .reg .b32 %t<16>;\n.reg .b64 %a<12>;\n.reg .pred %p<8>;\n.shared .align 4 .b8 sh[64];\n.local .align 4 .b8 loc[16];\n\
        ld.param.u64 %a1, [pout];\nmov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\nmov.u32 %t3, %ntid.x;\n\
        mad.lo.s32 %t4, %t2, %t3, %t1;\nmul.wide.u32 %a2, %t4, 16;\nadd.s64 %a3, %a1, %a2;\n\
        mov.u64 %a4, sh;\ncvta.shared.u64 %a5, %a4;\nmov.u64 %a6, loc;\ncvta.local.u64 %a7, %a6;\n\
        rem.u32 %t5, %t1, 3;\nsetp.eq.u32 %p1, %t5, 1;\nsetp.eq.u32 %p2, %t5, 2;\n\
        selp.b64 %a8, %a5, %a3, %p1;\nselp.b64 %a9, %a7, %a8, %p2;\n\
        isspacep.global %p3, %a9;\nisspacep.shared %p4, %a9;\nisspacep.local %p5, %a9;\nisspacep.const %p6, %a9;\n\
        selp.u32 %t6, 1, 0, %p3;\nselp.u32 %t7, 1, 0, %p4;\nselp.u32 %t8, 1, 0, %p5;\nselp.u32 %t9, 1, 0, %p6;\n\
        st.global.u32 [%a3], %t6;\nst.global.u32 [%a3+4], %t7;\nst.global.u32 [%a3+8], %t8;\nst.global.u32 [%a3+12], %t9;\nret;\n}\n";
    run(src, "isspacep", &[vec![0xcd; 16 * THREADS]], 2);
    let listing = compile(src).to_string();
    assert!(
        listing.contains("LOP32I.AND") && listing.contains("c[0x0][0x0]") && listing.contains("c[0x0][0x4]"),
        "{listing}"
    );
}

#[test]
fn atomic_lane_order_depends_on_the_seed_in_both_executors() {
    // Every thread exchanges its id into one cell: the final value is the last lane to
    // run, which both executors draw from `Launch::seed` (why the other tests compare
    // order-independent results only).
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 pout)\n{\n\
        .reg .b32 %t<4>;\n.reg .b64 %a<2>;\nld.param.u64 %a1, [pout];\nmov.u32 %t1, %tid.x;\n\
        atom.global.exch.b32 %t2, [%a1], %t1;\nret;\n}\n";
    let program = compile(src);
    let (module, _) = ptx2sass::ptx::parse(src).unwrap();
    let (mut interp, mut sim) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    for seed in 0..8 {
        let mut s = Setup::new();
        let out = s.buf(vec![0; 4]);
        let l = Launch { seed, ..s.launch(&program, "k", [1, 1, 1], [32, 1, 1], &[Val::I(out)]) };
        interp.insert(exec::ptx::run(&module, &l).unwrap().global.read_uint("global", out, 4).unwrap());
        sim.insert(exec::sim::run(&program, &l).unwrap().global.read_uint("global", out, 4).unwrap());
    }
    assert!(interp.len() > 1 && sim.len() > 1, "interpreter {interp:?}, simulator {sim:?}");
}

#[test]
fn constant_predicates_match_the_interpreter() {
    // `mov.pred %p, 0/1` (and `isspacep.const`, always false) are `ISETP RZ, RZ`
    // comparisons; a PSETP move of PT used to break register allocation.
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 pout)\n{\n\
        .reg .b32 %t<8>;\n.reg .b64 %a<4>;\n.reg .pred %p<4>;\nld.param.u64 %a1, [pout];\n\
        mov.pred %p1, 0;\nmov.pred %p2, 1;\nisspacep.const %p3, %a1;\nselp.u32 %t1, 1, 0, %p1;\nselp.u32 %t2, 2, 0, %p2;\n\
        selp.u32 %t3, 4, 0, %p3;\nadd.u32 %t1, %t1, %t2;\nadd.u32 %t1, %t1, %t3;\nst.global.u32 [%a1], %t1;\nret;\n}\n";
    run(src, "constant predicates", &[vec![0xcd; 4]], 1);
}
