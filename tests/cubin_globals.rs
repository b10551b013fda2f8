//! Module data in our cubins against ptxas 11.8's, as `cuobjdump -elf` lists them (issue 15,
//! `.global` part): for probe modules (every linkage, alignment, size mix, address
//! initializers in `.global` and `.const` data, two kernels, shared memory), a set of
//! random modules and the samples with module data, the same sections (name, type, flags,
//! link, alignment, entry size; sizes of all but code-dependent ones), the same symbols
//! (value, size, binding, `st_other`, section; in ptxas's order when there is one kernel),
//! the same `.nv.global.init`/`.nv.constant3` bytes, the same data relocations (entries
//! in order, sections in order) and the same (symbol, type) pairs in the code
//! relocations. Then nvdisasm reads our relocated code as our listing, and `asm` of our
//! listing gives our cubin back byte for byte.
//!
//! Needs ptxas, cuobjdump and nvdisasm 11.8 (`tests/common/nvidia.rs`); skipped with a
//! message without them. `CUBIN_GLOBALS_RANDOM=N` sets the number of random modules (24).

#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::driver::{self, Emit, Options};
use std::path::{Path, PathBuf};
use std::process::Command;

const HEAD: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

/// Probe modules: (name, module-scope declarations, extra kernels' bodies).
const PROBES: &[(&str, &str)] = &[
    (
        "kinds",
        ".global .align 4 .u32 counter = 7;\n.global .align 8 .u64 table[3] = {1, 2, 3};\n.global .align 8 .u64 ptr = generic(table);\n.visible .global .align 4 .f32 vis[4];\n.global .align 1 .b8 zeros[16];",
    ),
    (
        "equal8",
        ".global .u32 v0;\n.global .u32 v1;\n.global .u32 v2;\n.global .u32 v3;\n.global .u32 v4;\n.global .u32 v5;\n.global .u32 v6;\n.global .u32 v7;",
    ),
    (
        "linkages",
        ".visible .global .u32 z1 = 1;\n.global .u32 a2;\n.weak .global .u64 w3 = 4;\n.global .u8 b4[3] = {1,2,3};\n.visible .global .u16 v5;\n.global .u64 c6;\n.extern .global .u32 e7;\n.common .global .u32 m8;\n.visible .global .u32 y9[2] = {1,2};",
    ),
    (
        "weak_first",
        ".const .u32 cc = 1;\n.global .u32 a2;\n.weak .global .u32 w1;\n.weak .global .u32 w2 = 3;\n.global .u32 a3 = 4;",
    ),
    (
        "types",
        ".global .u32 z = 0;\n.global .u32 a[3] = {0,0,0};\n.global .u32 b[4] = {1,2};\n.global .v4 .f32 v[2] = {{1.0,2.0,3.0,4.0},{5.0,6.0,7.0,8.0}};\n.global .u8 c[] = {1,2,3};\n.global .f64 d = 0d3ff0000000000000;\n.global .f32 e = 0f3FC00000;\n.global .u64 f = -1;\n.global .s8 g = -2;",
    ),
    (
        "address_initializers",
        ".global .u64 tab[4] = {1,2,3,4};\n.global .u64 p1 = tab;\n.global .u64 p2 = generic(tab);\n.global .u64 p3 = tab+16;\n.global .u64 p4 = generic(tab)+8;\n.global .u64 arr[3] = {tab, p1, generic(p2)+4};\n.const .u64 cp = tab;\n.const .u64 cq = tab+8;\n.global .u64 pc = cp;\n.visible .global .u64 pv[2] = {p3, cq};",
    ),
    (
        "alignments",
        ".global .align 4 .u32 a;\n.global .align 16 .u32 b;\n.global .align 8 .u32 c;\n.global .align 32 .u8 d[3];\n.global .align 2 .u8 e;\n.global .u8 f[100];\n.global .align 64 .u8 g = 1;\n.global .align 128 .u8 h[2] = {1, 2};",
    ),
];

/// The probe kernel: reads one byte of every `.global`/`.const` variable named in `decls`.
fn probe(decls: &str) -> String {
    let mut body = String::new();
    for line in decls.lines() {
        let space = if line.contains(".const") { ".const" } else { ".global" };
        let head = line.split('=').next().unwrap_or(line);
        let name = head.split_whitespace().last().unwrap_or("").split('[').next().unwrap_or("").trim_end_matches(';');
        body.push_str(&format!("    ld{space}.u8 %r2, [{name}];\n    add.s32 %r1, %r1, %r2;\n"));
    }
    format!(
        "{HEAD}{decls}\n.visible .entry k(.param .u64 out)\n{{\n    .reg .b32 %r<4>;\n    .reg .b64 %rd<2>;\n    ld.param.u64 %rd1, [out];\n    mov.u32 %r1, 0;\n{body}    st.global.u32 [%rd1], %r1;\n    ret;\n}}\n"
    )
}

/// Two kernels and shared memory: per-kernel sections interleave with the module data.
fn two_kernels() -> String {
    format!(
        r#"{HEAD}.global .u32 cnt;
.global .u64 tab[2] = {{1, 2}};
.visible .global .u32 vv;
.global .u64 p = tab+8;
.const .u64 cp = generic(tab);
.visible .entry k1(.param .u64 out)
{{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .shared .u32 sh[64];
    ld.param.u64 %rd1, [out];
    mov.u32 %r2, %tid.x;
    shl.b32 %r2, %r2, 2;
    mov.u32 %r3, sh;
    add.s32 %r3, %r3, %r2;
    atom.global.add.u32 %r1, [cnt], 1;
    st.shared.u32 [%r3], %r1;
    bar.sync 0;
    ld.shared.u32 %r1, [%r3+4];
    ld.global.u32 %r4, [tab];
    add.s32 %r1, %r1, %r4;
    st.global.u32 [vv], %r1;
    st.global.u32 [%rd1], %r1;
    ret;
}}
.visible .entry k2(.param .u64 out)
{{
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.global.u64 %rd2, [p];
    ld.global.u64 %rd3, [%rd2];
    ld.const.u64 %rd4, [cp];
    add.s64 %rd3, %rd3, %rd4;
    st.global.u64 [%rd1], %rd3;
    ret;
}}
"#
    )
}

/// A random module of `.global` and `.const` variables (linkages, alignments, sizes,
/// initializers, address initializers of earlier `.global` and `.const` variables) and
/// its kernel.
fn random_module(seed: u64) -> String {
    let mut r = ptx2sass::exec::Rng::new(seed);
    let mut pick = |n: u64| (r.next_u64() % n) as usize;
    let mut decls = vec![];
    let mut globals: Vec<String> = vec![];
    let mut consts: Vec<String> = vec![];
    for i in 0..1 + pick(10) {
        let name = format!("v{i}");
        let is_const = pick(5) == 0;
        let space = if is_const { ".const" } else { ".global" };
        let link = if is_const { "" } else { ["", "", "", ".visible ", ".weak "][pick(5)] };
        let (ty, b) = [(".u8", 1), (".u16", 2), (".u32", 4), (".u64", 8), (".u64", 8), (".s32", 4)][pick(6)];
        let align = [0, 0, 0, b, 8, 16, 32][pick(7)].max(if pick(7) < 3 { 0 } else { b });
        let count = [0, 0, 1, 2, 3, 5][pick(6)];
        let mut d = format!("{link}{space} ");
        if align != 0 {
            d.push_str(&format!(".align {} ", align.max(b)));
        }
        d.push_str(&format!("{ty} {name}"));
        if count > 0 {
            d.push_str(&format!("[{count}]"));
        }
        if pick(10) < if is_const { 7 } else { 5 } {
            let vals: Vec<String> = (0..count.max(1))
                .map(|_| {
                    if b == 8 && !consts.is_empty() && pick(4) == 0 {
                        // A `.const` address: resolved by ptxas, no relocation.
                        let t = &consts[pick(consts.len() as u64)];
                        return if pick(2) == 0 { t.clone() } else { format!("{t}+4") };
                    }
                    if b == 8 && !globals.is_empty() && pick(2) == 0 {
                        let t = &globals[pick(globals.len() as u64)];
                        let e = if pick(2) == 0 { format!("generic({t})") } else { t.clone() };
                        match [0, 0, 4, 8, 16][pick(5)] {
                            0 => e,
                            o => format!("{e}+{o}"),
                        }
                    } else {
                        pick(200).to_string()
                    }
                })
                .collect();
            d.push_str(&if count > 0 { format!(" = {{{}}}", vals.join(", ")) } else { format!(" = {}", vals[0]) });
        }
        decls.push(format!("{d};"));
        if is_const {
            consts.push(name);
        } else {
            globals.push(name);
        }
    }
    probe(&decls.join("\n"))
}

/// The comparable facts of a cubin from `cuobjdump -elf`: section rows, symbol rows,
/// data section contents, data relocations (in order) and code relocations (sorted).
#[derive(Debug, PartialEq)]
struct Facts {
    sections: Vec<String>,
    symbols: Vec<String>,
    data: Vec<String>,
    data_relocs: Vec<String>,
    code_relocs: Vec<String>,
}

fn facts(cuobjdump: &Path, cubin: &Path, kernels: usize) -> Facts {
    let out = Command::new(cuobjdump).arg("-elf").arg(cubin).output().expect("cuobjdump runs");
    assert!(out.status.success(), "cuobjdump -elf {}: {}", cubin.display(), String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut f = Facts { sections: vec![], symbols: vec![], data: vec![], data_relocs: vec![], code_relocs: vec![] };
    // Section names by index (`Info` names sections that come later in the table).
    let mut names: std::collections::HashMap<String, String> = Default::default();
    let mut in_table = false;
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if l.starts_with("Sections:") {
            in_table = true;
        } else if in_table && w.len() >= 10 && w[0] != "Index" {
            names.insert(w[0].to_string(), w[9].to_string());
        } else if in_table && l.trim().is_empty() {
            in_table = false;
        }
    }
    let mut block = String::new();
    for l in text.lines() {
        if l.starts_with("Sections:") || l.starts_with(".section ") || (l.starts_with('.') && !l.contains(' ')) {
            block = l.trim().to_string();
            continue;
        }
        if l.trim().is_empty() {
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if block == "Sections:" && w.len() >= 10 && w[0] != "Index" {
            // Index Offset Size ES Align Type Flags Link Info Name
            let name = w[9];
            let code_dependent = name.starts_with(".text.")
                || name.starts_with(".nv.info")
                || name.starts_with(".rel.text.")
                || name.ends_with("strtab")
                || name.starts_with(".nv.shared.");
            let size = if code_dependent { "-" } else { w[2] };
            let info = if name.starts_with(".text.") { "-" } else { w[8] };
            // sh_info names a section, except for `.symtab` (the first global symbol).
            let info =
                if name == ".symtab" { info.to_string() } else { names.get(info).cloned().unwrap_or(info.to_string()) };
            // `.nv.shared.<k>` alignment: ptx2sass writes 16 (docs/cubin.md).
            let align = if name.starts_with(".nv.shared.") { "-" } else { w[4] };
            f.sections.push(format!("{name} {size} {} {align} {} {} {info}", w[3], w[5], w[6]));
        } else if block == ".section .symtab" && w.len() >= 6 && w[0] != "index" {
            // index value size info other shndx name
            let name = w.get(6).copied().unwrap_or("");
            let sec = names.get(w[5].trim_start_matches("0x")).cloned().unwrap_or(w[5].to_string());
            let size = if w[3] == "0x12" { "-" } else { w[2] };
            f.symbols.push(format!("{name} {} {size} {} {} {sec}", w[1], w[3], w[4]));
        } else if block.starts_with(".section .rel.text.") {
            f.code_relocs.push(format!("{} {}", w.get(1).unwrap_or(&""), w.get(2).unwrap_or(&"")));
        } else if block.starts_with(".section .rel") {
            f.data_relocs.push(format!("{} {l}", block.split_whitespace().nth(1).unwrap_or("")));
        } else if block == ".nv.global.init" || block == ".nv.constant3" {
            f.data.push(format!("{block} {l}"));
        }
    }
    f.code_relocs.sort();
    f.code_relocs.dedup();
    if kernels > 1 {
        // Per-kernel sections are written in source order, ptxas's in reverse
        // (docs/cubin.md): compare as sets.
        f.sections.sort();
        f.symbols.sort();
    }
    f
}

fn tools() -> Option<PathBuf> {
    match nvidia::tools() {
        Ok(b) if b.join("cuobjdump").is_file() => Some(b),
        Ok(b) => {
            eprintln!("skipped: no cuobjdump in {}", b.display());
            None
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// (name, source, kernels) of every module compared.
fn modules() -> Vec<(String, String, usize)> {
    let mut out: Vec<(String, String, usize)> = PROBES.iter().map(|(n, d)| (n.to_string(), probe(d), 1)).collect();
    out.push(("two_kernels".into(), two_kernels(), 2));
    let n: u64 = std::env::var("CUBIN_GLOBALS_RANDOM").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    out.extend((0..n).map(|k| (format!("random{k}"), random_module(k), 1)));
    for s in ["const_table", "device_globals", "sha256"] {
        let src = std::fs::read_to_string(format!("{}/samples/{s}.ptx", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let src78: Vec<&str> =
            src.lines().map(|l| if l.trim_start().starts_with(".version") { ".version 7.8" } else { l }).collect();
        out.push((s.to_string(), src78.join("\n"), 1));
    }
    out
}

#[test]
fn module_data_matches_ptxas() {
    let Some(bin) = tools() else { return };
    let dir = std::env::temp_dir().join(format!("ptx2sass-cubin-globals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut bad = vec![];
    let mut checked = 0;
    for (name, src, kernels) in modules() {
        let ptx = dir.join(format!("{name}.ptx"));
        std::fs::write(&ptx, &src).unwrap();
        let theirs = dir.join(format!("{name}.ptxas.cubin"));
        let st = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3"]).arg(&ptx).arg("-o").arg(&theirs).output();
        if !st.as_ref().is_ok_and(|s| s.status.success()) {
            bad.push(format!(
                "{name}: ptxas failed: {:?}\n{src}",
                st.map(|s| String::from_utf8_lossy(&s.stderr).into_owned())
            ));
            continue;
        }
        let out = match driver::compile(&src, &Options { emit: Emit::Cubin, ..Options::default() }) {
            Ok(o) => o,
            Err(d) => {
                bad.push(format!("{name}: {}", ptx2sass::diag::SourceFile::new("ptx", &src).render_all(&d)));
                continue;
            }
        };
        let ours = dir.join(format!("{name}.ours.cubin"));
        std::fs::write(&ours, out.binary.unwrap()).unwrap();
        let (fo, ft) = (facts(&bin.join("cuobjdump"), &ours, kernels), facts(&bin.join("cuobjdump"), &theirs, kernels));
        for (what, o, t) in [
            ("sections", &fo.sections, &ft.sections),
            ("symbols", &fo.symbols, &ft.symbols),
            ("data", &fo.data, &ft.data),
            ("data relocations", &fo.data_relocs, &ft.data_relocs),
            ("code relocation symbols", &fo.code_relocs, &ft.code_relocs),
        ] {
            if o != t {
                bad.push(format!("{name}: {what}\n  ours  {o:?}\n  ptxas {t:?}\n{src}"));
            }
        }
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("cuobjdump -elf module data: {checked} modules compared with ptxas 11.8, {} differences", bad.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Our relocated code through nvdisasm 11.8 reads as our listing (`MOV32I R2,
/// 32@lo(counter)` on both sides), `disasm` prints it the same way, and `asm` of our
/// listing (module data block included) gives our cubin byte for byte.
#[test]
fn relocated_code_reads_back_and_reassembles() {
    let Some(bin) = tools() else { return };
    let dir = std::env::temp_dir().join(format!("ptx2sass-cubin-globals-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut relocated = 0;
    for (name, src, _) in modules() {
        let out = driver::compile(&src, &Options { emit: Emit::Cubin, ..Options::default() }).unwrap();
        let cubin = out.binary.unwrap();
        let listing = out.program.unwrap().to_string();
        assert_eq!(ptx2sass::cubin::asm::assemble(&listing).unwrap(), cubin, "{name}: asm of the listing");
        let path = dir.join(format!("{name}.cubin"));
        std::fs::write(&path, &cubin).unwrap();
        let nv = Command::new(bin.join("nvdisasm")).arg(&path).output().unwrap();
        assert!(nv.status.success(), "{name}: nvdisasm: {}", String::from_utf8_lossy(&nv.stderr));
        let theirs: Vec<String> = String::from_utf8_lossy(&nv.stdout)
            .lines()
            .filter(|l| l.contains("32@"))
            .map(|l| {
                l.split("*/")
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .trim_start_matches('{')
                    .trim()
                    .trim_end_matches(';')
                    .trim()
                    .to_string()
            })
            .collect();
        let ours: Vec<String> = listing
            .lines()
            .filter(|l| l.contains("32@") && l.contains("/*"))
            .map(|l| {
                l.split("*/").nth(1).unwrap_or("").split("  ").find(|s| !s.is_empty()).unwrap_or("").trim().to_string()
            })
            .collect();
        assert_eq!(theirs, ours, "{name}: nvdisasm's relocated instructions");
        let (dis, warnings) = ptx2sass::cubin::disasm(&cubin).unwrap();
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        let dis_ours: Vec<&str> = dis
            .lines()
            .filter(|l| l.contains("32@"))
            .map(|l| l.split("  ").find(|s| s.contains("32@")).unwrap_or("").trim())
            .collect();
        assert_eq!(dis_ours.len(), ours.len(), "{name}: disasm");
        relocated += ours.len();
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{relocated} relocated instructions read back by nvdisasm 11.8 and disasm, 0 mismatches");
    assert!(relocated > 100, "{relocated}");
}
