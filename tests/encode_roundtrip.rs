//! Our cubins read back by NVIDIA's tools: every sample compiles to a cubin whose code
//! nvdisasm 11.8 (through `../shared/tools/sass-ctrl.py`, which also decodes the control
//! words) prints as the same instructions, operands and control fields as our listing, for
//! 100% of the instructions; and `ptx2sass disasm` agrees with nvdisasm on every
//! instruction of ptxas 11.8's cubins of every sample, which `check` then accepts.
//!
//! Differences of spelling, normalized explicitly ([`normalize`], docs/cubin.md):
//! `.reuse` marks (compared as control bits instead), branch targets by label (compared
//! as the labelled instruction's address), nvdisasm's `BRANCH_TARGETS` notes, spaces
//! before commas, floats (compared by value: nvdisasm prints 20 significant digits, we
//! print 17), IADD3's 20-bit immediate (nvdisasm prints it unsigned, `0xffffc`). The
//! padding NOPs after a function's last instruction are ours, not the listing's.
//!
//! Needs nvdisasm and ptxas (see `tests/common/nvidia.rs`) and python3; without them it
//! prints why and passes without checking anything.

#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::sass::text::{self, Target, TextFunction, TextInstr};
use std::path::{Path, PathBuf};
use std::process::Command;

fn sass_ctrl() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/sass-ctrl.py");
    p.is_file().then_some(p)
}

fn tools() -> Option<(PathBuf, PathBuf)> {
    let bin = match nvidia::tools() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipped: {e}");
            return None;
        }
    };
    let Some(sc) = sass_ctrl() else {
        eprintln!("skipped: ../shared/tools/sass-ctrl.py not found");
        return None;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 not found");
        return None;
    }
    Some((bin, sc))
}

fn samples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    v.sort();
    v
}

/// `sass-ctrl.py` on a cubin: nvdisasm's text with decoded control fields, read back.
fn nvdisasm_listing(bin: &Path, sc: &Path, cubin: &Path) -> Vec<TextFunction> {
    let out = Command::new("python3")
        .arg(sc)
        .arg(cubin)
        .env("NVDISASM", bin.join("nvdisasm"))
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "sass-ctrl.py {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    text::parse(&String::from_utf8_lossy(&out.stdout)).expect("sass-ctrl.py output reads back")
}

/// Operand texts in a comparable spelling (see the module docs).
fn normalize(f: &TextFunction, i: &TextInstr) -> Vec<String> {
    let mut ops: Vec<String> = i
        .operands
        .iter()
        .filter(|o| !o.starts_with("(*"))
        .map(|o| {
            let o = o.split("(*").next().unwrap_or(o).replace(".reuse", "").trim().to_string();
            match o.parse::<f64>() {
                Ok(v) if !o.starts_with("0x") && !o.starts_with("-0x") => format!("{v:e}"),
                _ => o,
            }
        })
        .collect();
    if let (Some(Target::Label(l)), Some(last)) = (&i.target, ops.last_mut())
        && matches!(i.opcode.as_str(), "BRA" | "SSY" | "PBK" | "CAL")
        && let Some(&k) = f.labels.get(l)
    {
        *last = format!("0x{:x}", f.instrs[k].addr);
    }
    if i.opcode == "IADD3"
        && let Some(o) = ops.get_mut(2)
        && let Some(v) = o.strip_prefix("-0x").and_then(|h| i64::from_str_radix(h, 16).ok())
    {
        *o = format!("0x{:x}", (-v) & 0xfffff);
    }
    let mut head = vec![format!("{:?}", i.guard), i.opcode.clone(), i.mods.join(".")];
    head.extend(ops);
    head
}

/// Compares two listings instruction by instruction: text and control fields. Returns
/// (instructions compared, mismatch descriptions).
fn compare(ours: &[TextFunction], theirs: &[TextFunction], what: &str) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut bad = vec![];
    for o in ours {
        let Some(t) = theirs.iter().find(|t| t.name == o.name) else {
            bad.push(format!("{what}: function {} missing", o.name));
            continue;
        };
        for (k, oi) in o.instrs.iter().enumerate() {
            let Some(ti) = t.instrs.get(k) else {
                bad.push(format!("{what} {}: instruction {k} missing", o.name));
                break;
            };
            n += 1;
            if normalize(o, oi) != normalize(t, ti) || oi.ctrl != ti.ctrl || oi.addr != ti.addr {
                bad.push(format!(
                    "{what} {} /*{:04x}*/: ours `{}` {:?}, nvdisasm `{}` {:?}",
                    o.name, oi.addr, oi.text, oi.ctrl, ti.text, ti.ctrl
                ));
            }
        }
        // What follows our last instruction is padding: NOP with control field 0x7e0.
        for ti in &t.instrs[o.instrs.len().min(t.instrs.len())..] {
            if ti.opcode != "NOP" || ti.ctrl.stall != 0 || !ti.ctrl.yield_hint {
                bad.push(format!("{what} {}: padding `{}` {:?}", o.name, ti.text, ti.ctrl));
            }
        }
    }
    (n, bad)
}

#[test]
fn every_sample_cubin_reads_back_as_our_listing() {
    let Some((bin, sc)) = tools() else { return };
    let dir = std::env::temp_dir().join(format!("ptx2sass-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut total = 0;
    let mut syncs = 0;
    let mut bad = vec![];
    for p in samples() {
        let src = std::fs::read_to_string(&p).unwrap();
        let out = driver::compile(&src, &Options { emit: Emit::Cubin, ..Options::default() })
            .unwrap_or_else(|_| panic!("{} compiles", p.display()));
        let cubin = dir.join(p.file_stem().unwrap()).with_extension("cubin");
        std::fs::write(&cubin, out.binary.as_ref().unwrap()).unwrap();
        let ours = text::parse(&out.text).unwrap();
        let theirs = nvdisasm_listing(&bin, &sc, &cubin);
        let (n, b) = compare(&ours, &theirs, &p.file_name().unwrap().to_string_lossy());
        total += n;
        bad.extend(b);
        // The SYNC/BRK targets we record (EIATTR_INDIRECT_BRANCH_TARGETS) are the ones
        // nvdisasm's own branch-stack analysis finds (`(*"BRANCH_TARGETS .L_x_0"*)`).
        for (o, t) in ours.iter().zip(&theirs) {
            let code = ptx2sass::sass::encode::encode_function(o).unwrap();
            let want: Vec<(u32, u32)> = t
                .instrs
                .iter()
                .filter(|i| i.opcode == "SYNC" || i.opcode == "BRK")
                .filter_map(|i| match &i.target {
                    Some(Target::Label(l)) => t.labels.get(l).map(|&k| (i.addr, t.instrs[k].addr)),
                    _ => None,
                })
                .collect();
            let got: Vec<(u32, u32)> =
                code.sync_targets.iter().map(|&(a, x)| (a, if x % 32 == 0 { x + 8 } else { x })).collect();
            syncs += got.len();
            if got != want {
                bad.push(format!("{}: SYNC/BRK targets {got:x?}, nvdisasm {want:x?}", o.name));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "round trip through nvdisasm: {total} instructions checked, {syncs} SYNC/BRK targets, {} mismatches",
        bad.len()
    );
    assert!(total > 5000, "only {total} instructions");
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn disasm_agrees_with_nvdisasm_on_ptxas_cubins() {
    let Some((bin, sc)) = tools() else { return };
    let dir = std::env::temp_dir().join(format!("ptx2sass-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut total = 0;
    let mut bad = vec![];
    for p in samples() {
        // ptxas 11.8 reads PTX ISA up to 7.8 (findings §1).
        let src = std::fs::read_to_string(&p).unwrap();
        let src: String = src
            .lines()
            .map(|l| if l.trim_start().starts_with(".version") { ".version 7.8" } else { l })
            .collect::<Vec<_>>()
            .join("\n");
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let ptx = dir.join(format!("{name}.ptx"));
        let cubin = dir.join(format!("{name}.cubin"));
        std::fs::write(&ptx, &src).unwrap();
        let st = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3"]).arg(&ptx).arg("-o").arg(&cubin).status();
        if !st.is_ok_and(|s| s.success()) {
            bad.push(format!("{name}: ptxas failed"));
            continue;
        }
        let bytes = std::fs::read(&cubin).unwrap();
        let (listing, warnings) = ptx2sass::cubin::disasm(&bytes).unwrap();
        bad.extend(warnings.iter().map(|w| format!("{name}: {w}")));
        let ours = text::parse(&listing).unwrap();
        let theirs = nvdisasm_listing(&bin, &sc, &cubin);
        let (n, b) = compare(&ours, &theirs, &name);
        total += n;
        bad.extend(b);
        // The hazard checker reads our disassembly of ptxas's code.
        if let Err(e) = ptx2sass::sched::check::check(&ours) {
            bad.push(format!("{name}: check cannot read the disassembly: {e}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("disasm of ptxas 11.8 cubins: {total} instructions checked, {} mismatches", bad.len());
    assert!(total > 5000, "only {total} instructions");
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}
