//! Our cubins read back by NVIDIA's tools: every sample compiles to a cubin whose code
//! nvdisasm 11.8 (through `../shared/tools/sass-ctrl.py`, which also decodes the control
//! words) prints as the same instructions, operands and control fields as our listing, for
//! 100% of the instructions (and so do random programs of `tests/common/gen.rs` and the
//! kept regression programs of `tests/programs/`); and `ptx2sass disasm` agrees with nvdisasm on every
//! instruction of ptxas 11.8's cubins of every sample, which `check` then accepts and
//! `asm` turns back into ptxas's exact code.
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

#[path = "common/gen.rs"]
mod generator;
#[path = "common/inst.rs"]
mod inst;
#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::cubin;
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
        // No cubin of a texture-sampler pair's word yet (`cubin::sampler_error`,
        // docs/textures.md §1.14): its listing is checked in tests/surfaces.rs.
        .filter(|p| !p.ends_with("tex_sampler.ptx"))
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
        && matches!(i.opcode.as_str(), "BRA" | "SSY" | "PBK" | "CAL" | "PRET")
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
    // nvdisasm prints a texture instruction's reuse flags as a last `.P` (reuse B) or `.T`
    // (reuse A) after the opcode (docs/textures.md §1.4); ours are in the control word,
    // compared below.
    let mut mods = i.mods.clone();
    if ["TEXS", "TLDS", "TLD4S", "TEX", "TLD", "TLD4", "TXQ", "TXD"].contains(&i.opcode.as_str())
        && mods.last().is_some_and(|m| m == "P" || m == "T")
    {
        mods.pop();
    }
    let mut head = vec![format!("{:?}", i.guard), i.opcode.clone(), mods.join(".")];
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
    let mut cuobjdump_total = 0;
    let mut syncs = 0;
    let mut bad = vec![];
    for p in samples() {
        let src = std::fs::read_to_string(&p).unwrap();
        let out = driver::compile(&src, &Options { emit: Emit::Cubin, ..Options::default() })
            .unwrap_or_else(|_| panic!("{} compiles", p.display()));
        let cubin = dir.join(p.file_stem().unwrap()).with_extension("cubin");
        std::fs::write(&cubin, out.binary.as_ref().unwrap()).unwrap();
        // Each kernel's section as the cubin holds it: the kernel and its callees.
        let ours = text::parse(&cubin::linked_listing(out.program.as_ref().unwrap())).unwrap();
        let theirs = nvdisasm_listing(&bin, &sc, &cubin);
        let (n, b) = compare(&ours, &theirs, &p.file_name().unwrap().to_string_lossy());
        total += n;
        bad.extend(b);
        cuobjdump_total += cuobjdump_agrees(&bin, &cubin, &ours, &mut bad);
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
        "round trip through nvdisasm: {total} instructions checked, {syncs} SYNC/BRK targets; cuobjdump -sass: \
         {cuobjdump_total} instructions; {} mismatches",
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
    let mut words = 0;
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
        // `asm` of the disassembly gives ptxas's code back, word for word (instructions,
        // control words, padding).
        match ptx2sass::cubin::asm::assemble(&listing) {
            Ok(again) => {
                let a = ptx2sass::cubin::read::text_sections(&bytes).unwrap();
                let b = ptx2sass::cubin::read::text_sections(&again).unwrap();
                for t in &a {
                    words += t.bytes.len() / 8;
                    if b.iter().find(|u| u.name == t.name).map(|u| &u.bytes) != Some(&t.bytes) {
                        bad.push(format!("{name}: asm of the disassembly of .text.{} differs from ptxas's", t.name));
                    }
                }
            }
            Err(e) => bad.push(format!("{name}: the disassembly does not assemble: {}", e[0])),
        }
        // The hazard checker reads our disassembly of ptxas's code (SYNC/BRK targets from
        // the cubin's INDIRECT_BRANCH_TARGETS) and finds no hazard in it.
        match ptx2sass::sched::check::check(&ours) {
            Ok(h) if h.is_empty() => {}
            Ok(h) => bad.push(format!("{name}: check finds hazards in ptxas's code: {}", h[0])),
            Err(e) => bad.push(format!("{name}: check cannot read the disassembly: {e}")),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "disasm of ptxas 11.8 cubins: {total} instructions checked; asm of the disassembly: {words} words; {} mismatches",
        bad.len()
    );
    assert!(total > 5000, "only {total} instructions");
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

/// Round trip of one module: compile to a cubin, read back through sass-ctrl.py, compare.
fn round_trip(bin: &Path, sc: &Path, dir: &Path, name: &str, src: &str) -> (usize, Vec<String>) {
    let out = match driver::compile(src, &Options { emit: Emit::Cubin, ..Options::default() }) {
        Ok(o) => o,
        Err(_) => return (0, vec![format!("{name}: does not compile")]),
    };
    let cubin = dir.join(format!("{name}.cubin"));
    std::fs::write(&cubin, out.binary.as_ref().unwrap()).unwrap();
    let ours = text::parse(&cubin::linked_listing(out.program.as_ref().unwrap())).unwrap();
    let theirs = nvdisasm_listing(bin, sc, &cubin);
    compare(&ours, &theirs, name)
}

/// Random programs (the generator of `tests/random_programs.rs`, a fixed seed) and the
/// programs kept in `tests/programs/`, through nvdisasm like the samples (20 programs per
/// run; more with `ROUNDTRIP_PROGRAMS`).
#[test]
fn random_and_kept_programs_read_back_as_our_listing() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::{Config, RngSeed, TestRunner};
    let Some((bin, sc)) = tools() else { return };
    let dir = std::env::temp_dir().join(format!("ptx2sass-roundtrip-rand-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n: usize = std::env::var("ROUNDTRIP_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let mut runner = TestRunner::new(Config { rng_seed: RngSeed::Fixed(15), ..Config::default() });
    let mut total = 0;
    let mut bad = vec![];
    for k in 0..n {
        let p = generator::program().new_tree(&mut runner).unwrap().current();
        let (c, b) = round_trip(&bin, &sc, &dir, &format!("random{k}"), &p.ptx());
        total += c;
        bad.extend(b);
    }
    let mut files = vec![];
    // The kept programs and the real-call probes of `tests/cubin_calls.rs`.
    for d in ["tests/programs", "tests/data/calls"] {
        let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join(d);
        let mut v: Vec<PathBuf> = std::fs::read_dir(&kept).unwrap().map(|e| e.unwrap().path()).collect();
        v.sort();
        files.extend(v);
    }
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "ptx")) {
        let name = f.file_stem().unwrap().to_string_lossy().to_string();
        let (c, b) = round_trip(&bin, &sc, &dir, &name, &std::fs::read_to_string(f).unwrap());
        total += c;
        bad.extend(b);
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "round trip of {n} random and {} kept programs: {total} instructions, {} mismatches",
        files.len(),
        bad.len()
    );
    assert!(total > 1000, "only {total} instructions");
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

/// `cuobjdump -sass` of our cubin prints every instruction of our listing the same way
/// (branch targets as addresses, bundle addresses naming the bundle's first instruction;
/// the normalizations of [`normalize`]). Returns the instructions compared.
fn cuobjdump_agrees(bin: &Path, cubin: &Path, ours: &[TextFunction], bad: &mut Vec<String>) -> usize {
    let Ok(out) = Command::new(bin.join("cuobjdump")).arg("-sass").arg(cubin).output() else {
        return 0;
    };
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut n = 0;
    let mut func = String::new();
    let mut by_func: std::collections::HashMap<String, std::collections::HashMap<u32, String>> = Default::default();
    for l in text.lines() {
        if let Some(f) = l.trim().strip_prefix("Function : ") {
            func = f.trim().to_string();
            continue;
        }
        let Some((a, rest)) = l.trim().strip_prefix("/*").and_then(|r| r.split_once("*/")) else { continue };
        let Ok(a) = u32::from_str_radix(a, 16) else { continue };
        let t = rest.split(';').next().unwrap_or("").trim().to_string();
        by_func.entry(func.clone()).or_default().insert(a, t);
    }
    let norm = |t: &str, branch: bool| -> Vec<String> {
        let t = t.split("(*").next().unwrap_or(t).replace(".reuse", "").replace(" ,", ",");
        let (head, ops) = match t.trim().split_once(' ') {
            Some((g, r)) if g.starts_with('@') => {
                let (m, o) = r.trim().split_once(' ').unwrap_or((r.trim(), ""));
                (format!("{g} {m}"), o.to_string())
            }
            Some((m, o)) => (m.to_string(), o.to_string()),
            None => (t.trim().to_string(), String::new()),
        };
        let mut v = vec![head];
        let parts: Vec<&str> = ops.split(", ").map(str::trim).filter(|o| !o.is_empty()).collect();
        for (k, o) in parts.iter().enumerate() {
            // cuobjdump -sass prints the unrelocated field of a relocated immediate
            // (`MOV32I R4, 0x0` for `32@lo(lut)`): the relocation is not applied.
            let o = if o.starts_with("32@lo(") || o.starts_with("32@hi(") {
                "0x0".to_string()
            } else if branch && k + 1 == parts.len() && o.starts_with("0x") {
                let a = u32::from_str_radix(&o[2..], 16).unwrap_or(0);
                format!("0x{:x}", if a % 32 == 0 { a + 8 } else { a })
            } else {
                match o.parse::<f64>() {
                    Ok(x) if !o.starts_with("0x") && !o.starts_with("-0x") => format!("{x:e}"),
                    _ => o.to_string(),
                }
            };
            v.push(o);
        }
        v
    };
    for f in ours {
        let Some(theirs) = by_func.get(&f.name) else {
            bad.push(format!("cuobjdump -sass {}: function {} missing", cubin.display(), f.name));
            continue;
        };
        for i in &f.instrs {
            n += 1;
            let branch = matches!(i.opcode.as_str(), "BRA" | "SSY" | "PBK" | "CAL" | "PRET");
            // cuobjdump prints call targets as addresses (`CAL 0x1038` for
            // `` CAL `($k$f) ``) and a JCAL's unrelocated field (`JCAL 0x0`).
            let text = match &i.target {
                Some(Target::Label(l)) if branch => match f.labels.get(l) {
                    Some(&k) => i.text.replace(&format!("`({l})"), &format!("0x{:x}", f.instrs[k].addr)),
                    None => i.text.clone(),
                },
                Some(Target::Label(l)) if i.opcode == "JCAL" => i.text.replace(&format!("`({l})"), "0x0"),
                _ => i.text.clone(),
            };
            let mine = norm(&text, branch);
            let iadd3_imm = |v: &mut Vec<String>| {
                if (v[0].ends_with("IADD3") || v[0].contains("IADD3."))
                    && let Some(o) = v.get_mut(3)
                    && let Some(h) = o.strip_prefix("-0x").and_then(|h| i64::from_str_radix(h, 16).ok())
                {
                    *o = format!("0x{:x}", (-h) & 0xfffff);
                }
            };
            let mut mine = mine;
            iadd3_imm(&mut mine);
            match theirs.get(&i.addr) {
                Some(t) if norm(t, branch) == mine => {}
                t => bad.push(format!(
                    "cuobjdump -sass {} /*{:04x}*/: ours `{}`, cuobjdump `{t:?}`",
                    f.name, i.addr, i.text
                )),
            }
        }
    }
    n
}
