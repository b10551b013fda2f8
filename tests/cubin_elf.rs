//! Our cubin against ptxas 11.8's for every sample, as `cuobjdump -elf` lists them: the
//! same sections (names, types, flags), the same EIATTR records in the same order in
//! `.nv.info` and each `.nv.info.<k>`, the same header line (ELF type, ABI, SM, toolkit,
//! flags). Deliberate differences ([`DELIBERATE`], docs/cubin.md) are removed from both
//! sides first. `readelf` (when installed) must report no error on ours.
//!
//! Needs ptxas and cuobjdump (see `tests/common/nvidia.rs`); skipped with a message
//! without them.

#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::sass::text::{self, TextInstr};
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// Sections and records ptxas writes that ours leaves out, and why.
const DELIBERATE: &[(&str, &str)] = &[
    (
        ".nv.constant2.",
        "ptxas's compiler constants (bank 2: large immediates, `c[0x2][..]`); ptx2sass \
         never addresses bank 2",
    ),
    (".debug_line", "line tables ptxas writes from the PTX's `.loc` directives; ptx2sass writes no debug information"),
    (".rel.debug_line", "relocations of the line table"),
    (".nv_debug_line_sass", "SASS line table (from `.loc`)"),
    (".rel.nv_debug_line_sass", "its relocations"),
    (".nv_debug_ptx_txt", "the PTX text kept for debuggers"),
];

/// The records whose presence depends on the code (so ptxas's and ours can differ when the
/// code differs), with the rule each file must follow for its own code, and the order of
/// all per-kernel records in ptxas 11.8's files.
const ORDER: &[&str] = &[
    "EIATTR_CUDA_API_VERSION",
    "EIATTR_SW2393858_WAR",
    "EIATTR_SW1850030_WAR",
    "EIATTR_PARAM_CBANK",
    "EIATTR_CBANK_PARAM_SIZE",
    "EIATTR_KPARAM_INFO",
    "EIATTR_MAXREG_COUNT",
    "EIATTR_EXTERNS",
    "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS",
    "EIATTR_S2RCTAID_INSTR_OFFSETS",
    "EIATTR_EXIT_INSTR_OFFSETS",
    "EIATTR_CTAIDZ_USED",
    "EIATTR_INDIRECT_BRANCH_TARGETS",
    "EIATTR_CRS_STACK_SIZE",
];

/// Whether a code-dependent record must be present for this code (`None`: either is
/// allowed, ptxas's CRS_STACK_SIZE for code without SSY/PBK/CAL).
fn required(attr: &str, code: &[TextInstr], ours: bool) -> Option<bool> {
    let has = |op: &str| code.iter().any(|i| i.opcode == op);
    let ctaid = |s: &str| code.iter().any(|i| i.opcode == "S2R" && i.operands.iter().any(|o| o.starts_with(s)));
    Some(match attr {
        "EIATTR_S2RCTAID_INSTR_OFFSETS" => ctaid("SR_CTAID"),
        "EIATTR_CTAIDZ_USED" => ctaid("SR_CTAID.Z"),
        "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS" | "EIATTR_COOP_GROUP_INSTR_OFFSETS" => has("SHFL") || has("VOTE"),
        "EIATTR_INDIRECT_BRANCH_TARGETS" => has("SYNC") || has("BRK") || has("BRX"),
        "EIATTR_CRS_STACK_SIZE" if ours => has("SSY") || has("PBK") || has("CAL"),
        "EIATTR_EXTERNS" => has("JCAL"),
        "EIATTR_CRS_STACK_SIZE" if has("SSY") || has("PBK") || has("CAL") => true,
        _ => return None,
    })
}

/// EIATTR names per `.nv.info*` section, in file order.
type Records = Vec<(String, Vec<String>)>;

/// (header line, sections as `name type flags`, EIATTRs per info section).
fn elf(cuobjdump: &Path, cubin: &Path) -> (String, Vec<String>, Records) {
    let out = Command::new(cuobjdump).arg("-elf").arg(cubin).output().expect("cuobjdump runs");
    assert!(out.status.success(), "cuobjdump -elf {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let header = text.lines().find(|l| l.contains("64bit elf")).unwrap_or("").trim().to_string();
    let mut sections = vec![];
    let mut in_table = false;
    for l in text.lines() {
        if l.starts_with("Sections:") {
            in_table = true;
            continue;
        }
        if in_table {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() < 9 || w[0] == "Index" {
                if l.trim().is_empty() {
                    in_table = false;
                }
                continue;
            }
            // Index Offset Size ES Align Type Flags Link Info Name
            sections.push(format!("{} {} {}", w[9], w[5], w[6]));
        }
    }
    let mut infos: Vec<(String, Vec<String>)> = vec![];
    for l in text.lines() {
        if l.starts_with(".nv.info") {
            infos.push((l.trim().to_string(), vec![]));
        } else if l.starts_with('.') {
            infos.push((String::new(), vec![]));
        } else if let Some(a) = l.trim().strip_prefix("Attribute:")
            && let Some(last) = infos.last_mut()
            && !last.0.is_empty()
        {
            let a = a.trim().to_string();
            if last.1.last() != Some(&a) {
                last.1.push(a);
            }
        }
    }
    infos.retain(|i| !i.0.is_empty());
    (header, sections, infos)
}

#[test]
fn sections_and_records_match_ptxas_for_every_sample() {
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
    let dir = std::env::temp_dir().join(format!("ptx2sass-cubin-elf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut samples: Vec<_> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        // No cubin of a texture-sampler pair's word yet (`cubin::sampler_error`,
        // docs/textures.md §1.14).
        .filter(|p| !p.ends_with("tex_sampler.ptx"))
        .collect();
    samples.sort();
    let mut bad = vec![];
    let mut checked = 0;
    for p in &samples {
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        let src = std::fs::read_to_string(p).unwrap();
        let ours = dir.join(format!("{name}.ours.cubin"));
        let out = match driver::compile(&src, &Options { emit: Emit::Cubin, ..Options::default() }) {
            Ok(out) => out,
            Err(d) => panic!("{name}: {}", d[0].message),
        };
        std::fs::write(&ours, out.binary.unwrap()).unwrap();
        let ptx = dir.join(format!("{name}.ptx"));
        let theirs = dir.join(format!("{name}.ptxas.cubin"));
        let src78: Vec<&str> =
            src.lines().map(|l| if l.trim_start().starts_with(".version") { ".version 7.8" } else { l }).collect();
        std::fs::write(&ptx, src78.join("\n")).unwrap();
        let st = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3"]).arg(&ptx).arg("-o").arg(&theirs).output();
        if !st.is_ok_and(|s| s.status.success()) {
            bad.push(format!("{name}: ptxas failed"));
            continue;
        }
        let (ho, so, io) = elf(&cuobjdump, &ours);
        let (ht, st, it) = elf(&cuobjdump, &theirs);
        let keep = |s: &String| !DELIBERATE.iter().any(|(d, _)| s.starts_with(d));
        let so: Vec<_> = so.into_iter().filter(keep).collect();
        let st: Vec<_> = st.into_iter().filter(keep).collect();
        let mut so_sorted = so.clone();
        let mut st_sorted = st.clone();
        so_sorted.sort();
        st_sorted.sort();
        if ho != ht {
            bad.push(format!("{name}: header `{ho}`, ptxas `{ht}`"));
        }
        if so_sorted != st_sorted {
            bad.push(format!("{name}: sections {so_sorted:?}, ptxas {st_sorted:?}"));
        }
        // Code-independent records: the same, in the same order; `.nv.info` (one set of
        // stack records per function; ptxas and we keep different callees as called
        // functions: `tests/cubin_calls.rs` compares them where both keep the same): the
        // same kinds.
        let code = |cubin: &Path| -> HashMap<String, Vec<TextInstr>> {
            let (listing, _) = ptx2sass::cubin::disasm(&std::fs::read(cubin).unwrap()).unwrap();
            text::parse(&listing).unwrap().into_iter().map(|f| (f.name, f.instrs)).collect()
        };
        let (co, ct) = (code(&ours), code(&theirs));
        let dependent = |a: &String| {
            required(a, &[], true).is_some()
                || required(a, &[], false).is_some()
                || a == "EIATTR_COOP_GROUP_INSTR_OFFSETS"
                || a == "EIATTR_CRS_STACK_SIZE"
        };
        let strip = |v: &Records| -> Records {
            let mut v: Vec<_> = v
                .iter()
                .map(|(s, a)| {
                    let mut a: Vec<String> = a.iter().filter(|x| !dependent(x)).cloned().collect();
                    if s == ".nv.info" {
                        a.sort();
                        a.dedup();
                    }
                    (s.clone(), a)
                })
                .collect();
            v.sort();
            v
        };
        if strip(&io) != strip(&it) {
            bad.push(format!("{name}: records {:?}, ptxas {:?}", strip(&io), strip(&it)));
        }
        for (info, file, code, is_ours) in
            io.iter().map(|i| (i, "ours", &co, true)).chain(it.iter().map(|i| (i, "ptxas", &ct, false)))
        {
            let Some(k) = info.0.strip_prefix(".nv.info.") else { continue };
            let instrs = code.get(k).map(Vec::as_slice).unwrap_or(&[]);
            for attr in ORDER.iter().chain(&["EIATTR_COOP_GROUP_INSTR_OFFSETS"]) {
                let present = info.1.iter().any(|a| a == attr);
                if let Some(want) = required(attr, instrs, is_ours)
                    && want != present
                    && !(*attr == "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"
                        && info.1.iter().any(|a| a == "EIATTR_COOP_GROUP_INSTR_OFFSETS"))
                    && !(*attr == "EIATTR_COOP_GROUP_INSTR_OFFSETS"
                        && info.1.iter().any(|a| a == "EIATTR_INT_WARP_WIDE_INSTR_OFFSETS"))
                {
                    bad.push(format!("{name} {file} {k}: {attr} present {present}, code says {want}"));
                }
            }
            if is_ours {
                let pos: Vec<usize> = info.1.iter().filter_map(|a| ORDER.iter().position(|o| o == a)).collect();
                if pos.windows(2).any(|w| w[0] > w[1]) || pos.len() != info.1.len() {
                    bad.push(format!("{name} ours {k}: record order {:?}", info.1));
                }
            }
        }
        if let Ok(r) = Command::new("readelf").arg("-a").arg(&ours).output() {
            let e = String::from_utf8_lossy(&r.stderr);
            if e.lines().any(|l| l.contains("Error")) {
                bad.push(format!("{name}: readelf: {e}"));
            }
        }
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("cuobjdump -elf: {checked} samples compared with ptxas 11.8, {} differences", bad.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
