//! `.texref`/`.surfref` in executable cubins (issue 18 item 4, docs/textures.md §1.1): the
//! grown `.nv.constant0.<k>`, `.rel.nv.constant0.<k>` with R_CUDA_TEX_HEADER_INDEX (6) /
//! R_CUDA_SURF_HEADER_INDEX (0x34), a symbol per declared reference and
//! EIATTR_BINDLESS_{SURFACE,TEXTURE}_BANK, read back with the `object` crate against the
//! values ptxas 11.8 wrote for `tests/data/textures/probe_texref.ptx` (kept here, so the
//! test runs without ptxas); with `$NVIDIA_REF_BIN`, the same lines of `cuobjdump -elf`
//! compared per kernel with ptxas's, and nvdisasm reads our cubin.

#[path = "common/tex.rs"]
mod tex;

use object::{Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tex::*;

/// A relocation entry: offset, symbol, type.
type Entry<'a> = (u64, &'a str, u32);

const PROBE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/textures/probe_texref.ptx");

/// What the test reads of a cubin, per kernel: constant0 size, relocations (offset,
/// symbol, type) in file order, the raw `.nv.info.<k>` words; and the reference symbols
/// (name, st_info, section, value, size) in table order.
struct Facts {
    c0_size: BTreeMap<String, u64>,
    relocs: BTreeMap<String, Vec<(u64, String, u32)>>,
    info: BTreeMap<String, Vec<u32>>,
    refs: Vec<(String, u8, u16, u64, u64)>,
}

fn facts(path: &Path) -> Facts {
    let data = std::fs::read(path).unwrap();
    let file = object::read::elf::ElfFile64::<object::Endianness>::parse(&*data).unwrap();
    let mut f = Facts { c0_size: BTreeMap::new(), relocs: BTreeMap::new(), info: BTreeMap::new(), refs: vec![] };
    for s in file.sections() {
        let name = s.name().unwrap().to_string();
        if let Some(k) = name.strip_prefix(".nv.constant0.") {
            f.c0_size.insert(k.into(), s.size());
            // The entries of the REL section whose sh_info is this section, in file order.
            let mut v = vec![];
            for (off, r) in s.relocations() {
                let RelocationTarget::Symbol(i) = r.target() else { panic!("{name}: no symbol") };
                let RelocationFlags::Elf { r_type } = r.flags() else { panic!() };
                v.push((off, file.symbol_by_index(i).unwrap().name().unwrap().to_string(), r_type.0));
            }
            if !v.is_empty() {
                f.relocs.insert(k.into(), v);
            }
        } else if let Some(k) = name.strip_prefix(".nv.info.") {
            let words = s.data().unwrap().chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            f.info.insert(k.into(), words);
        }
    }
    for s in file.symbols() {
        let e = s.elf_symbol();
        let (st_info, st_shndx) = (e.st_info().0, e.st_shndx(object::Endianness::Little).0);
        if matches!(st_info, 0x1a | 0x1c) {
            f.refs.push((s.name().unwrap().into(), st_info, st_shndx, s.address(), s.size()));
        }
    }
    f
}
use object::read::elf::Sym as _;

fn compile(name: &str, src: &Path) -> PathBuf {
    let out = scratch(name).join("our.cubin");
    let o = ptx2sass(&["compile", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// ptxas 11.8's values for probe_texref.ptx (docs/textures.md §1.1).
fn expect_probe(f: &Facts, with_unused: bool) {
    let c0: Vec<(&str, u64)> =
        vec![("two", 0x158), ("rev", 0x154), ("mixed", 0x158), ("noparams", 0x144), ("none", 0x148)];
    for (k, size) in c0 {
        assert_eq!(f.c0_size[k], size, "{k}");
    }
    let (tex, surf) = (6u32, 0x34u32);
    let want: Vec<(&str, Vec<Entry>)> = vec![
        ("noparams", vec![(0x140, "ta", tex)]),
        ("mixed", vec![(0x154, "sa", surf), (0x150, "ta", tex)]),
        ("rev", vec![(0x150, "ta", tex), (0x14c, "tb", tex)]),
        ("two", vec![(0x154, "tb", tex), (0x150, "ta", tex)]),
    ];
    assert_eq!(f.relocs.len(), want.len(), "no section for `none`: {:?}", f.relocs.keys());
    for (k, w) in want {
        let got: Vec<Entry> = f.relocs[k].iter().map(|(o, s, t)| (*o, s.as_str(), *t)).collect();
        assert_eq!(got, w, "{k}");
    }
    // EIFMT_BVAL (2) records: BINDLESS_SURFACE_BANK 0x16, BINDLESS_TEXTURE_BANK 0x15, value
    // 0, right after MAXREG_COUNT (0x031bff00 little-endian: 03 1b ff 00).
    let after_maxreg = |k: &str| -> Vec<u32> {
        let w = &f.info[k];
        let at = w.iter().position(|&x| x == 0x00ff_1b03).unwrap();
        w[at + 1..].iter().copied().take_while(|x| x & 0xff == 2).collect()
    };
    assert_eq!(after_maxreg("mixed"), vec![0x0000_1602, 0x0000_1502]);
    for k in ["two", "rev", "noparams"] {
        assert_eq!(after_maxreg(k), vec![0x0000_1502], "{k}");
    }
    assert_eq!(after_maxreg("none"), Vec::<u32>::new());
    let mut refs: Vec<(String, u8, u16, u64, u64)> = f.refs.clone();
    refs.sort();
    let mut want = vec![("sa", 0x1c), ("ta", 0x1a), ("tb", 0x1a)];
    if with_unused {
        want.push(("unused_t", 0x1a));
    }
    let want: Vec<(String, u8, u16, u64, u64)> = want.into_iter().map(|(n, i)| (n.to_string(), i, 0, 0, 0)).collect();
    assert_eq!(refs, want);
}

#[test]
fn probe_texref_cubin_has_ptxas_relocations_symbols_and_attributes() {
    let ours = compile("texref_cubin", Path::new(PROBE));
    let f = facts(&ours);
    expect_probe(&f, true);
    // Symbol order (docs/textures.md §1.1): the first kernel's references in order of first
    // use, then the others in declaration order; our first kernel is `two` (ta, tb).
    let names: Vec<&str> = f.refs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names, ["ta", "tb", "unused_t", "sa"]);
    // `disasm` reads it back (the ELF reader skips the constant-bank relocations).
    let o = ptx2sass(&["disasm", ours.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("TEXS"));
}

#[test]
fn asm_of_the_listing_writes_the_reference_words() {
    let dir = scratch("texref_asm");
    let o = ptx2sass(&["compile", PROBE]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listing = dir.join("probe.sass");
    std::fs::write(&listing, &o.stdout).unwrap();
    let out = dir.join("asm.cubin");
    let o = ptx2sass(&["asm", listing.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The listing names only the references the kernels use: no `unused_t` symbol.
    expect_probe(&facts(&out), false);
}

#[test]
fn relocatable_cubin_of_a_reference_is_refused() {
    let out = scratch("texref_rel").join("k.cubin");
    let o = ptx2sass(&["compile", "-c", PROBE, "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("relocatable cubin (`-c`)") && !out.exists(), "{err}");
}

/// The lines of `cuobjdump -elf` this feature writes, per kernel: its relocation section,
/// its `.nv.info` records, and the reference symbols (name, info, value, size, section).
fn cuobjdump_lines(bin: &Path, cubin: &Path) -> (BTreeMap<String, Vec<String>>, Vec<String>) {
    let o = std::process::Command::new(bin.join("cuobjdump")).arg("-elf").arg(cubin).output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let mut per: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur: Option<String> = None;
    let mut syms = vec![];
    for l in text.lines() {
        let t = l.trim();
        if let Some(k) = t.strip_prefix(".section .rel.nv.constant0.") {
            cur = Some(format!("rel {}", k.split_whitespace().next().unwrap()));
            continue;
        }
        if let Some(k) = t.strip_prefix(".nv.info.") {
            cur = Some(format!("info {k}"));
            continue;
        }
        if t.starts_with(".section") || t.starts_with(".nv.") {
            cur = None;
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        if w.len() == 7 && (w[3] == "0x1a" || w[3] == "0x1c") {
            syms.push(format!("{} {} {} {} {}", w[6], w[3], w[1], w[2], w[5]));
        }
        // Relocation lines whole; of `.nv.info.<k>` the attribute names and formats in
        // order, and the values of the BINDLESS records (the other values hold code offsets
        // and symbol indices, which differ for other reasons: docs/cubin.md).
        if let Some(c) = &cur
            && !t.is_empty()
        {
            let v = per.entry(c.clone()).or_default();
            let bindless = v.iter().rev().nth(1).is_some_and(|a| a.contains("BINDLESS"));
            if c.starts_with("rel")
                || t.starts_with("Attribute:")
                || t.starts_with("Format:")
                || (t.starts_with("Value:") && bindless)
            {
                v.push(t.to_string());
            }
        }
    }
    syms.sort();
    (per, syms)
}

#[test]
fn cuobjdump_lines_match_ptxas() {
    let Some(bin) = std::env::var_os("NVIDIA_REF_BIN").map(PathBuf::from) else {
        eprintln!("skipped: set NVIDIA_REF_BIN to the folder of ptxas/cuobjdump/nvdisasm 11.8");
        return;
    };
    let dir = scratch("texref_ptxas");
    let theirs = dir.join("ptxas.cubin");
    let o = std::process::Command::new(bin.join("ptxas"))
        .args(["-arch=sm_50", "-O3", PROBE, "-o"])
        .arg(&theirs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = compile("texref_ptxas_ours", Path::new(PROBE));
    let (ours_l, ours_s) = cuobjdump_lines(&bin, &ours);
    let (theirs_l, theirs_s) = cuobjdump_lines(&bin, &theirs);
    assert_eq!(theirs_s.len(), 4, "{theirs_s:?}");
    assert!(theirs_l["info mixed"].iter().any(|l| l.contains("EIATTR_BINDLESS_SURFACE_BANK")));
    assert_eq!(theirs_l["rel two"].len(), 2);
    assert_eq!(ours_s, theirs_s, "reference symbols");
    for k in ["two", "rev", "mixed", "noparams", "none"] {
        for what in ["rel", "info"] {
            let key = format!("{what} {k}");
            assert_eq!(ours_l.get(&key), theirs_l.get(&key), "{key}");
        }
    }
    let o = std::process::Command::new(bin.join("nvdisasm")).arg(&ours).output().unwrap();
    assert!(o.status.success(), "nvdisasm: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn asm_rejects_bad_reference_words() {
    let dir = scratch("texref_asm_bad");
    let o = ptx2sass(&["compile", PROBE]);
    let listing = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(listing.contains("c[0x0][0x150]  .texref  ta"), "{listing}");
    for (what, from, to, want) in [
        ("huge", "c[0x0][0x150]  .texref  ta", "c[0x0][0xfffffffc]  .texref  ta", "not a 4-aligned word"),
        ("unaligned", "c[0x0][0x150]  .texref  ta", "c[0x0][0x151]  .texref  ta", "not a 4-aligned word"),
        (
            "both",
            "c[0x0][0x150]  .texref  ta",
            "c[0x0][0x150]  .surfref  ta",
            "both as a `.texref` and as a `.surfref`",
        ),
    ] {
        let p = dir.join(format!("{what}.sass"));
        std::fs::write(&p, listing.replacen(from, to, 1)).unwrap();
        let out = dir.join(format!("{what}.cubin"));
        let o = ptx2sass(&["asm", p.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want) && !out.exists(), "{what}: {err}");
    }
}

#[test]
fn reference_symbols_follow_ptxas_creation_order() {
    // ptxas 11.8 on probe_texref_order.ptx (its first kernel `k2` uses tb then sa):
    // globals `k2 tb sa vis vis2 ta k1`. Our first kernel is `k1` (source order), which
    // uses `ta`: the same rule gives `k1 ta vis vis2 sa tb k2`.
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/textures/probe_texref_order.ptx");
    let ours = compile("texref_order", Path::new(src));
    let data = std::fs::read(&ours).unwrap();
    let file = object::read::elf::ElfFile64::<object::Endianness>::parse(&*data).unwrap();
    let globals: Vec<String> =
        file.symbols().filter(|s| s.is_global()).map(|s| s.name().unwrap().to_string()).collect();
    assert_eq!(globals, ["k1", "ta", "vis", "vis2", "sa", "tb", "k2"]);
    let f = facts(&ours);
    let relocs: Vec<Entry> = f.relocs["k2"].iter().map(|(o, s, t)| (*o, s.as_str(), *t)).collect();
    assert_eq!(relocs, [(0x14c, "sa", 0x34), (0x148, "tb", 6)]);
}
