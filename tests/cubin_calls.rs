//! Cubins of modules with real calls (device functions compiled on their own) against
//! ptxas 11.8's, as `cuobjdump -elf` lists them (docs/cubin.md, "Calls"): for the probe
//! modules of `tests/data/calls/` (recursion, mutual recursion, a call chain, `.visible`
//! and `.weak` functions, a function's address, `vprintf`) the same sections, the same
//! `FUNC` symbols (names, binding, `st_other`, section) in the same order, the same code
//! relocations (type and symbol), the same `.nv.info` records naming the same functions
//! in the same order, the same EXTERNS and CRS_STACK_SIZE; nvdisasm reads ours without a
//! warning. Values that depend on the code (offsets, sizes) are not compared: ptxas's
//! code is not ours.
//!
//! Needs ptxas and cuobjdump (see `tests/common/nvidia.rs`); skipped with a message
//! without them.

#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::lower::calls::callgraph::Inline;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What is compared of one cubin, each as lines of text.
#[derive(Debug, PartialEq, Default)]
struct Facts {
    sections: Vec<String>,
    func_symbols: Vec<String>,
    relocations: Vec<String>,
    info: Vec<String>,
}

/// Reads the compared facts from `cuobjdump -elf` text.
fn facts(text: &str) -> Facts {
    let mut f = Facts::default();
    let mut names: Vec<String> = vec![String::new()];
    let mut part = "";
    let mut section = String::new();
    let mut attr = String::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if l.starts_with("Sections:") {
            part = "sections";
            continue;
        }
        if l.starts_with(".section .symtab") {
            part = "symtab";
            continue;
        }
        if let Some(s) = l.strip_prefix(".section ") {
            part = "rel";
            section = s.split_whitespace().next().unwrap_or("").to_string();
            continue;
        }
        if l.starts_with('.') {
            part = if l.starts_with(".nv.info") { "info" } else { "" };
            section = l.trim().to_string();
            continue;
        }
        match part {
            "sections" if w.len() >= 10 && w[0] != "Index" => {
                names.push(w[9].to_string());
                f.sections.push(format!("{} {} {}", w[9], w[5], w[6]));
            }
            "symtab" if w.len() == 7 && w[0] != "index" => {
                let info = u32::from_str_radix(w[3].trim_start_matches("0x"), 16).unwrap_or(0);
                let shndx = usize::from_str_radix(w[5].trim_start_matches("0x"), 16).unwrap_or(0);
                if info & 0xf == 2 {
                    let sec = names.get(shndx).cloned().unwrap_or_default();
                    f.func_symbols.push(format!("{} info {:#x} other {} in {sec}", w[6], info, w[4]));
                }
            }
            "rel" if w.len() == 3 && w[2].starts_with("R_CUDA") => {
                f.relocations.push(format!("{section}: {} {}", w[1], w[2]));
            }
            "info" => {
                if let Some(a) = l.trim().strip_prefix("Attribute:") {
                    attr = a.trim().to_string();
                    if matches!(attr.as_str(), "EIATTR_CRS_STACK_SIZE" | "EIATTR_EXTERNS") {
                        continue;
                    }
                    f.info.push(format!("{section} {attr}"));
                } else if let Some(v) = l.trim().strip_prefix("Value:") {
                    let v = v.trim();
                    if let Some(rest) = v.strip_prefix("function: ") {
                        let name = rest.split('(').next().unwrap_or("");
                        if let Some(last) = f.info.last_mut() {
                            last.push_str(&format!(" {name}"));
                        }
                    }
                    if matches!(attr.as_str(), "EIATTR_CRS_STACK_SIZE" | "EIATTR_EXTERNS") {
                        let v: String =
                            v.split('(').next().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" ");
                        f.info.push(format!("{section} {attr} {v}"));
                    }
                    // MIN_STACK_SIZE with recursion: ptxas's "cannot be statically
                    // determined" marker.
                    if attr == "EIATTR_MIN_STACK_SIZE"
                        && v.ends_with("0xffffffff")
                        && let Some(last) = f.info.last_mut()
                    {
                        last.push_str(" unbounded");
                    }
                }
            }
            _ => {}
        }
    }
    f
}

/// The `.nv.info` records grouped per kernel (a group starts at each REGCOUNT; ptxas
/// writes the kernels in reverse source order, we in source order: docs/cubin.md), the
/// groups sorted, the per-kernel sections after them; INDIRECT_BRANCH_TARGETS (present
/// for SYNC, which our code and ptxas's place differently) left out.
fn kernels_sorted(info: &[String]) -> Vec<String> {
    let mut groups: Vec<Vec<String>> = vec![];
    let mut rest = vec![];
    for r in info.iter().filter(|r| !r.contains("INDIRECT_BRANCH_TARGETS")) {
        if r.starts_with(".nv.info EIATTR_REGCOUNT") {
            groups.push(vec![]);
        }
        match groups.last_mut() {
            Some(g) if r.starts_with(".nv.info ") => g.push(r.clone()),
            _ => rest.push(r.clone()),
        }
    }
    groups.sort();
    groups.into_iter().flatten().chain(rest).collect()
}

fn elf(cuobjdump: &Path, cubin: &Path) -> String {
    let out = Command::new(cuobjdump).arg("-elf").arg(cubin).output().expect("cuobjdump runs");
    assert!(out.status.success(), "cuobjdump -elf {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The probe modules.
pub fn probes() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/calls");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    v.sort();
    v
}

#[test]
fn real_call_cubins_match_ptxas() {
    let bin = match nvidia::tools() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let cuobjdump = bin.join("cuobjdump");
    if !cuobjdump.is_file() {
        eprintln!("skipped: no cuobjdump in {}", bin.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("ptx2sass-cubin-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bad = vec![];
    let mut n = 0;
    for p in probes() {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(&p).unwrap();
        // Every function called, as ptxas keeps them in these probes.
        let mut opts = Options { emit: Emit::Cubin, ..Options::default() };
        opts.lower.inline = Inline::Never;
        let out = driver::compile(&src, &opts).unwrap_or_else(|d| panic!("{name}: {}", d[0].message));
        let ours = dir.join(format!("{name}.ours.cubin"));
        std::fs::write(&ours, out.binary.unwrap()).unwrap();
        let theirs = dir.join(format!("{name}.ptxas.cubin"));
        let st = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3"]).arg(&p).arg("-o").arg(&theirs).output();
        assert!(st.is_ok_and(|s| s.status.success()), "{name}: ptxas failed");
        let (o, t) = (facts(&elf(&cuobjdump, &ours)), facts(&elf(&cuobjdump, &theirs)));
        // ptxas keeps compiler constants in bank 2 (here: the address of `leaf`, which it
        // loads for the indirect call; ours is a relocated MOV32I pair), docs/cubin.md.
        let strip =
            |v: &[String]| -> Vec<String> { v.iter().filter(|s| !s.contains(".nv.constant2")).cloned().collect() };
        for (what, a, b) in [
            ("sections", strip(&o.sections), strip(&t.sections)),
            ("FUNC symbols", o.func_symbols.clone(), t.func_symbols.clone()),
            ("info records", kernels_sorted(&o.info), kernels_sorted(&t.info)),
        ] {
            if a != b {
                bad.push(format!("{name}: {what}\n  ours  {a:?}\n  ptxas {b:?}"));
            }
        }
        // Ours has one relocation pair per use of a function's address (ptxas: none,
        // the address is in bank 2); the others must be ptxas's.
        // Offsets (and so the order of entries) depend on the code.
        let mut rel: Vec<String> = o.relocations.iter().filter(|r| !r.contains('$')).cloned().collect();
        let mut want = t.relocations.clone();
        rel.sort();
        want.sort();
        if rel != want {
            bad.push(format!("{name}: relocations\n  ours  {rel:?}\n  ptxas {want:?}"));
        }
        // nvdisasm reads ours without a warning (it warns about an indirect branch, our
        // JMX, without an EIATTR_INDIRECT_BRANCH_TARGETS record).
        let dis = Command::new(bin.join("nvdisasm")).arg(&ours).output().expect("nvdisasm runs");
        let err = String::from_utf8_lossy(&dis.stderr);
        if !dis.status.success() || !err.trim().is_empty() {
            bad.push(format!("{name}: nvdisasm: {err}"));
        }
        n += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("cuobjdump -elf of {n} real-call modules compared with ptxas 11.8: {} differences", bad.len());
    assert!(n >= 3);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
