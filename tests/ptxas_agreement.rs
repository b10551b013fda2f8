//! Agreement with NVIDIA's ptxas 11.8 on every generated `ld`/`st` form written in the
//! vocabulary ptxas accepts for sm_50 (no qualifier or `.volatile`, cache operators,
//! `.nc`, every space it parses, vectors up to 128 bits, every type but `.b128`):
//!
//! * ptxas accepts a form exactly when our plan lowers it without emulation;
//! * for accepted forms, the memory instructions of each kernel (opcode with its size and
//!   cache operator, e.g. `LDG.E.CG.64`, and `MEMBAR`s) are the same multiset in
//!   ptxas's SASS and ours, except for the deliberate differences listed in
//!   [`DELIBERATE`] (and in docs/lowering.md), each with its reason.
//!
//! The test needs ptxas and nvdisasm: `$NVIDIA_REF_BIN`, else the folder
//! `../shared/tools/nvidia-reference.sh` installs into (`$NVIDIA_REF_PREFIX/usr/bin`,
//! default `~/.cache/nvidia-reference-11.8/usr/bin`), else `PATH`. Without them it prints
//! why and passes without checking anything.

mod common;
#[path = "common/nvidia.rs"]
mod nvidia;

use common::{Batch, Case, HEADER, Hint, cases};
use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::lower::mem::ldst::{Space, plan};
use ptx2sass::ptx::instr::MemSem;
use ptx2sass::ptx::types::{ParamSub, ScalarType, SharedSub, StateSpace};
use std::collections::{BTreeMap, HashMap};
use std::process::Command;

/// Known, deliberate differences: (predicate on the form and the two instruction lists,
/// reason). The reasons are repeated in docs/lowering.md ("Differences from ptxas").
type Rule = (&'static str, fn(&Case, &[String], &[String]) -> bool);

const DELIBERATE: &[Rule] = &[
    (
        "local: ptxas deletes dead local-memory accesses (stores to a private array nothing \
         reads, loads of never-written local memory); ptx2sass does not eliminate dead \
         local accesses yet (LLVM-generated PTX has none)",
        |c, ours, theirs| c.form.space == Space::Local && strip(ours, "LDL", "STL") == strip(theirs, "LDL", "STL"),
    ),
    (
        "sub-word constant-bank reads at static addresses: ptx2sass emits one LDC.U8/.S8/.U16/.S16 \
         per element (spa50-LDC.txt sizes, sign-extending); ptxas reads a 4-aligned element \
         with MOV + LOP32I.AND and signed elements with LDC.U8/.U16 + BFE, two instructions",
        |c, ours, theirs| {
            matches!(c.form.space, Space::Const | Space::KernelParam)
                && c.ldst.ty.bits() < 32
                && strip(ours, "LDC", "LDC") == strip(theirs, "LDC", "LDC")
        },
    ),
];

/// `list` without the instructions whose opcode starts with `a` or `b`.
fn strip(list: &[String], a: &str, b: &str) -> Vec<String> {
    list.iter().filter(|s| !s.starts_with(a) && !s.starts_with(b)).cloned().collect()
}

/// Forms written only with qualifiers ptxas 11.8 parses at `.version 7.8`.
fn in_ptxas_vocabulary(c: &Case) -> bool {
    let l = &c.ldst;
    c.hint == Hint::None
        && matches!(l.sem, None | Some(MemSem::Volatile))
        && l.scope.is_none()
        && !l.mmio
        && l.ty != ScalarType::B128
        && !matches!(
            l.space,
            Some(StateSpace::Param(ParamSub::Func | ParamSub::Entry) | StateSpace::Shared(SharedSub::Cluster))
        )
}

/// The module text as ptxas 11.8 reads it: `.version 7.8`, no `.b128` registers (the
/// lines stay where they are, so ptxas's line numbers are the batch's).
fn for_ptxas(src: &str) -> String {
    src.replace(".version 8.8", ".version 7.8").replace(".reg .b128 %q<9>;", "// (no .b128 registers for ptxas)")
}

/// The memory instructions of each function in `cuobjdump -sass` or nvdisasm text: opcode and
/// modifiers of every LD*/ST*/MEMBAR, by function name, sorted.
fn memory_ops(sass: &str) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let mut cur = String::new();
    for line in sass.lines() {
        // `Function : k0` (ours, cuobjdump style) or `//---- .text.k0 ----` (nvdisasm).
        let header = line.trim().strip_prefix("Function : ").map(str::trim).or_else(|| {
            line.strip_prefix("//-").and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix(".text.")))
        });
        if let Some(name) = header {
            cur = name.to_string();
            out.entry(cur.clone()).or_default();
            continue;
        }
        let Some((_, rest)) = line.trim().strip_prefix("/*").and_then(|l| l.split_once("*/")) else { continue };
        let mut words = rest.trim().trim_start_matches('{').split_whitespace();
        let mut op = words.next().unwrap_or("");
        if op.starts_with('@') {
            op = words.next().unwrap_or("");
        }
        let op = op.trim_end_matches(';');
        let base = op.split('.').next().unwrap_or("");
        if matches!(base, "LD" | "LDG" | "LDS" | "LDL" | "LDC" | "ST" | "STG" | "STS" | "STL" | "MEMBAR") {
            out.entry(cur.clone()).or_default().push(op.to_string());
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

/// Kernels (by index) that ptxas reports errors for: `ptxas FILE, line N; error : ...`.
fn rejected_kernels(b: &Batch, stderr: &str) -> BTreeMap<usize, String> {
    let line_start: Vec<u32> = std::iter::once(0).chain(b.src.match_indices('\n').map(|(k, _)| k as u32 + 1)).collect();
    let mut out = BTreeMap::new();
    for l in stderr.lines() {
        let Some((_, rest)) = l.split_once(", line ") else { continue };
        let Some((n, msg)) = rest.split_once(';') else { continue };
        let Ok(n) = n.trim().parse::<usize>() else { continue };
        if let Some(&o) = line_start.get(n - 1)
            && let Some(k) = b.kernel_at(o)
        {
            out.entry(k).or_insert_with(|| msg.trim().to_string());
        }
    }
    out
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let o = cmd.output().expect("run an NVIDIA tool");
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

#[test]
fn ld_st_forms_agree_with_ptxas() {
    let bin = match nvidia::tools() {
        Ok(b) => b,
        Err(why) => {
            eprintln!("ptxas_agreement: SKIPPED: {why}");
            return;
        }
    };
    let tmp = std::env::temp_dir().join(format!("ptx2sass-agreement-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let forms: Vec<Case> = [true, false].into_iter().flat_map(cases).filter(in_ptxas_vocabulary).collect();
    let (mut same, mut deliberate) = (0usize, BTreeMap::<&str, usize>::new());
    let (mut rejected_both, mut emulated) = (0usize, 0usize);
    let mut failures = vec![];
    for chunk in forms.chunks(400) {
        // ptxas stops at some errors: drop the kernels it rejects until the rest compiles.
        let ptx = tmp.join("batch.ptx");
        let cubin = tmp.join("batch.cubin");
        let mut alive: Vec<usize> = (0..chunk.len()).collect();
        let mut rejected: BTreeMap<usize, String> = BTreeMap::new();
        let b = loop {
            let refs: Vec<&Case> = alive.iter().map(|&k| &chunk[k]).collect();
            let b = Batch::new(HEADER, &refs);
            std::fs::write(&ptx, for_ptxas(&b.src)).unwrap();
            let (ok, _, err) =
                run(Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3"]).arg(&ptx).arg("-o").arg(&cubin));
            if ok {
                break b;
            }
            let now = rejected_kernels(&b, &err);
            assert!(!now.is_empty(), "ptxas failed without a line number:\n{err}");
            for (k, msg) in now {
                rejected.insert(alive[k], msg);
            }
            alive.retain(|k| !rejected.contains_key(k));
        };
        // ptxas accepts a form <=> we lower it natively.
        for (k, c) in chunk.iter().enumerate() {
            let ours = plan(&c.ldst, c.form);
            let native = ours.as_ref().is_ok_and(|p| p.emulated.is_empty());
            match (rejected.get(&k), native) {
                (None, true) => {}
                (Some(_), false) if ours.is_err() => rejected_both += 1,
                (Some(_), false) => emulated += 1,
                (Some(msg), true) => {
                    failures.push(format!("{}: ptxas rejects it ({msg}), we lower it natively", c.text))
                }
                (None, false) => {
                    failures.push(format!("{}: ptxas accepts it, we {:?}", c.text, ours.map(|p| p.emulated)))
                }
            }
        }
        let accepted: Vec<&Case> = alive.iter().map(|&k| &chunk[k]).collect();
        if accepted.is_empty() {
            continue;
        }
        // nvdisasm, not `cuobjdump -sass`: the same listing, but cuobjdump takes ~25 s on
        // a cubin of 300 kernels and nvdisasm 0.2 s.
        let (ok, dump, err) = run(Command::new(bin.join("nvdisasm")).arg(&cubin));
        assert!(ok, "nvdisasm: {err}");
        let theirs = memory_ops(&dump);
        let opts = Options { emit: Emit::Sass, ..Options::default() };
        let ours = match driver::compile(&b.src, &opts) {
            Ok(o) => memory_ops(&o.text),
            Err(d) => panic!("{}", d.iter().map(|d| d.message.as_str()).collect::<Vec<_>>().join("\n")),
        };
        for (k, c) in accepted.iter().enumerate() {
            let name = format!("k{k}");
            let (o, t) = (&ours[&name], &theirs[&name]);
            if o == t {
                same += 1;
            } else if let Some((why, _)) = DELIBERATE.iter().find(|(_, f)| f(c, o, t)) {
                *deliberate.entry(why).or_default() += 1;
            } else {
                failures.push(format!("{}: ours {o:?}, ptxas {t:?}", c.text));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "ptxas agreement: {} forms in ptxas's vocabulary; ptxas rejects {}: we reject {rejected_both} and emulate \
         {emulated}; both accept {}: {same} identical memory instructions, {} deliberate differences {deliberate:?}",
        forms.len(),
        rejected_both + emulated,
        same + deliberate.values().sum::<usize>(),
        deliberate.values().sum::<usize>()
    );
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
}
