//! Separate compilation (issue 21): `compile -c` writes a relocatable cubin as ptxas 11.8
//! `-c` does (docs/cubin.md "Relocatable cubins"), NVIDIA's `nvlink -arch=sm_50` links
//! it with a ptxas-compiled object in both directions and with another of ours, the
//! linked cubin has the call resolved (the `JCAL`'s `R_CUDA_ABS32_20` names the defined
//! function, nvdisasm prints `JCAL `(f)`), and the linked code, read back with `disasm`,
//! runs on the simulator with the interpreter's results. `cuobjdump -elf` of ours and of
//! ptxas's `-c` output have the same section kinds, symbol bindings, relocation kinds,
//! call graph and prototypes for the probes of `tests/data/reloc/`.
//!
//! Needs ptxas, nvlink, nvdisasm and cuobjdump (see `tests/common/nvidia.rs`); skipped
//! with a message without them.

#[path = "common/nvidia.rs"]
mod nvidia;

use object::elf;
use object::read::elf::{FileHeader, Rel as _, SectionHeader, Sym as _};
use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::lower::calls::callgraph::Inline;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reloc").join(name)
}

/// The NVIDIA tools folder when it has everything these tests use.
fn tools() -> Option<PathBuf> {
    match nvidia::tools() {
        Ok(b) if ["nvlink", "cuobjdump"].iter().all(|t| b.join(t).is_file()) => Some(b),
        Ok(b) => {
            eprintln!("skipped: no nvlink/cuobjdump in {}", b.display());
            None
        }
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-reloc-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Our `compile -c` of `src` (the library's options; `inline` as given).
fn ours(src: &str, inline: Inline) -> Vec<u8> {
    let mut opts = Options { emit: Emit::Cubin, relocatable: true, ..Options::default() };
    opts.lower.inline = inline;
    driver::compile(src, &opts).unwrap_or_else(|d| panic!("compile -c: {}", d[0].message)).binary.unwrap()
}

/// `ptxas -arch=sm_50 -O3 -c`.
fn ptxas(bin: &Path, ptx: &Path, out: &Path) {
    let st = Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3", "-c"]).arg(ptx).arg("-o").arg(out).output();
    let st = st.expect("ptxas runs");
    assert!(st.status.success(), "ptxas -c {}: {}", ptx.display(), String::from_utf8_lossy(&st.stderr));
}

/// `nvlink -arch=sm_50 a b -o out`; panics with nvlink's message when it fails.
fn nvlink(bin: &Path, inputs: &[&Path], out: &Path) -> Vec<u8> {
    let st = Command::new(bin.join("nvlink")).arg("-arch=sm_50").args(inputs).arg("-o").arg(out).output();
    let st = st.expect("nvlink runs");
    assert!(st.status.success(), "nvlink {inputs:?}: {}", String::from_utf8_lossy(&st.stderr));
    std::fs::read(out).unwrap()
}

fn tool_text(bin: &Path, tool: &str, args: &[&str], file: &Path) -> String {
    let out = Command::new(bin.join(tool)).args(args).arg(file).output().expect("tool runs");
    assert!(out.status.success(), "{tool} {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{tool} {} warns: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A cubin's ELF facts: header type, sections (name, type, flags), symbols (name, info,
/// other, section name), and the two-word entries of `.nv.callgraph`/`.nv.prototype`
/// with symbol indices as names and prototype offsets as their `.strtab` strings.
#[derive(Debug, Default)]
struct Elf {
    e_type: u16,
    sections: Vec<(String, u32, u64)>,
    symbols: Vec<(String, u8, u8, String)>,
    callgraph: Vec<(String, String)>,
    prototype: Vec<(String, String)>,
    /// Code relocations: (section, offset, type, symbol name, the symbol's section name).
    relocs: Vec<(String, u64, u32, String, String)>,
}

fn read_elf(bytes: &[u8]) -> Elf {
    let h = elf::FileHeader64::<object::Endianness>::parse(bytes).unwrap();
    let e = h.endian().unwrap();
    let secs = h.sections(e, bytes).unwrap();
    let syms = secs.symbols(e, bytes, elf::SHT_SYMTAB).unwrap();
    let sec_name = |i: usize| -> String {
        secs.section(object::SectionIndex(i))
            .ok()
            .and_then(|s| secs.section_name(e, s).ok())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default()
    };
    let sym_name = |i: u32| -> String {
        syms.symbol(object::SymbolIndex(i as usize))
            .ok()
            .and_then(|s| syms.symbol_name(e, s).ok())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .unwrap_or_default()
    };
    let strtab = syms.strings();
    let string = |off: u32| strtab.get(off).map(|s| String::from_utf8_lossy(s).into_owned()).unwrap_or_default();
    let mut out = Elf { e_type: h.e_type(e).0, ..Elf::default() };
    for (i, s) in secs.iter().enumerate().skip(1) {
        let name = sec_name(i);
        out.sections.push((name.clone(), s.sh_type(e).0, s.sh_flags(e).0));
        let d = s.data(e, bytes).unwrap_or(&[]);
        let pairs: Vec<(u32, u32)> = d
            .chunks_exact(8)
            .map(|c| (u32::from_le_bytes(c[..4].try_into().unwrap()), u32::from_le_bytes(c[4..].try_into().unwrap())))
            .collect();
        match name.as_str() {
            ".nv.callgraph" => {
                let mut part = 0;
                for (a, b) in pairs {
                    if a == 0 && b >= u32::MAX - 2 {
                        part = u32::MAX - b + 1;
                        out.callgraph.push(("-".into(), format!("part {part}")));
                    } else if part == 1 {
                        out.callgraph.push((sym_name(a), sym_name(b)));
                    } else {
                        out.callgraph.push((sym_name(a), string(b)));
                    }
                }
            }
            ".nv.prototype" => out.prototype.extend(pairs.into_iter().map(|(a, b)| (sym_name(a), string(b)))),
            _ => {}
        }
        if s.sh_type(e) == elf::SHT_REL {
            let (rels, _) = s.rel(e, bytes).unwrap().unwrap();
            for r in rels {
                let sym = syms.symbol(object::SymbolIndex(r.r_sym(e) as usize)).unwrap();
                out.relocs.push((
                    name.clone(),
                    r.r_offset(e),
                    r.r_type(e).0,
                    sym_name(r.r_sym(e)),
                    sec_name(sym.st_shndx(e).0 as usize),
                ));
            }
        }
    }
    for s in syms.iter().skip(1) {
        let name = String::from_utf8_lossy(syms.symbol_name(e, s).unwrap()).into_owned();
        out.symbols.push((name, s.st_info().0, s.st_other().0, sec_name(s.st_shndx(e).0 as usize)));
    }
    out
}

/// The kernel of ext_call.ptx with ext_def.ptx's `f`, as one module (the interpreter's
/// reference for the linked code).
fn whole_program() -> String {
    let def = std::fs::read_to_string(data("ext_def.ptx")).unwrap();
    let call = std::fs::read_to_string(data("ext_call.ptx")).unwrap();
    let kernel = &call[call.find(".visible .entry").unwrap()..];
    format!("{def}\n{kernel}")
}

/// f of ext_def.ptx.
fn f(a: u32) -> u32 {
    let m = a.wrapping_mul(3);
    (if a < 20 { m } else { m ^ 0x55 }).wrapping_add(7)
}

/// The linked cubin has the call resolved: `.rel.text.k` holds an `R_CUDA_ABS32_20`
/// against `f` defined in `.text.f` (the driver writes f's address into the `JCAL` at
/// load time, as for every nvlink output), nvdisasm prints `JCAL `(f)`, and `disasm`'s
/// listing runs on the simulator with the interpreter's results (`n` = 5, 32 threads:
/// f(5..36), both sides of f's branch).
fn check_linked(bin: &Path, linked: &Path, dir: &Path, what: &str) {
    let bytes = std::fs::read(linked).unwrap();
    let l = read_elf(&bytes);
    assert_eq!(l.e_type, elf::ET_EXEC.0, "{what}: nvlink writes an executable");
    let calls: Vec<_> = l.relocs.iter().filter(|r| r.0 == ".rel.text.k" && r.2 == 42).collect();
    assert_eq!(calls.len(), 1, "{what}: one JCAL relocation in .text.k: {:?}", l.relocs);
    assert_eq!((calls[0].3.as_str(), calls[0].4.as_str()), ("f", ".text.f"), "{what}: the call names f, defined");
    let sass = tool_text(bin, "nvdisasm", &["-c"], linked);
    assert!(sass.contains("JCAL `(f)"), "{what}: nvdisasm:\n{sass}");
    assert!(sass.contains(".text.f:"), "{what}: nvdisasm:\n{sass}");
    // Run it: the listing of the linked cubin, the whole program's PTX for the
    // interpreter and the facts the listing lacks.
    let (listing, warnings) = ptx2sass::cubin::disasm(&bytes).unwrap();
    assert!(warnings.is_empty(), "{what}: {warnings:?}");
    let sass_path = dir.join(format!("{what}.sass"));
    std::fs::write(&sass_path, listing).unwrap();
    let ptx = dir.join("whole.ptx");
    std::fs::write(&ptx, whole_program()).unwrap();
    let out_dir = dir.join(format!("{what}-dump"));
    std::fs::create_dir_all(&out_dir).unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
            .arg("run")
            .arg(&ptx)
            .arg("--sass")
            .arg(&sass_path)
            .args(["--kernel", "k", "--arg", "zeros:128", "--arg", "i:5"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{what}: run {extra:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["--compare"]);
    run(&["--exec", "sim", "--dump", out_dir.to_str().unwrap()]);
    let got: Vec<u32> = std::fs::read(out_dir.join("arg0.bin"))
        .unwrap()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<u32> = (0..32).map(|t| f(5 + t)).collect();
    assert_eq!(got, want, "{what}: the linked code's results");
}

#[test]
fn our_call_links_with_a_ptxas_definition() {
    let Some(bin) = tools() else { return };
    let dir = scratch("a");
    let a = dir.join("call.ours.cubin");
    std::fs::write(&a, ours(&std::fs::read_to_string(data("ext_call.ptx")).unwrap(), Inline::Auto)).unwrap();
    let b = dir.join("def.ptxas.cubin");
    ptxas(&bin, &data("ext_def.ptx"), &b);
    let out = dir.join("linked.cubin");
    nvlink(&bin, &[&a, &b], &out);
    check_linked(&bin, &out, &dir, "ours-ptxas");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ptxas_call_links_with_our_definition() {
    let Some(bin) = tools() else { return };
    let dir = scratch("b");
    let a = dir.join("call.ptxas.cubin");
    ptxas(&bin, &data("ext_call.ptx"), &a);
    let b = dir.join("def.ours.cubin");
    std::fs::write(&b, ours(&std::fs::read_to_string(data("ext_def.ptx")).unwrap(), Inline::Auto)).unwrap();
    let out = dir.join("linked.cubin");
    nvlink(&bin, &[&a, &b], &out);
    check_linked(&bin, &out, &dir, "ptxas-ours");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_of_our_objects_link() {
    let Some(bin) = tools() else { return };
    let dir = scratch("c");
    let a = dir.join("call.ours.cubin");
    std::fs::write(&a, ours(&std::fs::read_to_string(data("ext_call.ptx")).unwrap(), Inline::Auto)).unwrap();
    let b = dir.join("def.ours.cubin");
    std::fs::write(&b, ours(&std::fs::read_to_string(data("ext_def.ptx")).unwrap(), Inline::Auto)).unwrap();
    let out = dir.join("linked.cubin");
    nvlink(&bin, &[&a, &b], &out);
    check_linked(&bin, &out, &dir, "ours-ours");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Relocation kinds as `cuobjdump -elf` lists them: (section, symbol, kind), sorted.
fn cuobjdump_relocs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut section = "";
    for l in text.lines() {
        if let Some(s) = l.strip_prefix(".section ") {
            section = s.split_whitespace().next().unwrap_or("");
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 3 && w[2].starts_with("R_CUDA") {
            out.insert(format!("{section}: {} {}", w[1], w[2]));
        }
    }
    out
}

/// `cuobjdump -elf` of our `-c` cubin against ptxas's `-c` output: the same file type,
/// sections (name, type, flags; ptxas writes the per-function ones in an order of its
/// own, so they are compared as sets), symbols (name, binding and type, `st_other`,
/// section), relocation kinds, call graph and prototypes. Every function is called
/// (`--inline=never`), as ptxas keeps them.
#[test]
fn relocatable_cubins_match_ptxas() {
    let Some(bin) = tools() else { return };
    let dir = scratch("d");
    let mut bad = vec![];
    for name in ["ext_call", "recursion", "fptr", "prototypes"] {
        let ptx = data(&format!("{name}.ptx"));
        let o_path = dir.join(format!("{name}.ours.cubin"));
        std::fs::write(&o_path, ours(&std::fs::read_to_string(&ptx).unwrap(), Inline::Never)).unwrap();
        let t_path = dir.join(format!("{name}.ptxas.cubin"));
        ptxas(&bin, &ptx, &t_path);
        let (o, t) = (read_elf(&std::fs::read(&o_path).unwrap()), read_elf(&std::fs::read(&t_path).unwrap()));
        let set = |v: &[(String, u32, u64)]| v.iter().cloned().collect::<BTreeSet<_>>();
        let syms = |v: &[(String, u8, u8, String)]| v.iter().cloned().collect::<BTreeSet<_>>();
        let pairs = |v: &[(String, String)]| v.iter().cloned().collect::<BTreeSet<_>>();
        let eo = tool_text(&bin, "cuobjdump", &["-elf"], &o_path);
        let et = tool_text(&bin, "cuobjdump", &["-elf"], &t_path);
        let header = |s: &str| s.lines().find(|l| l.contains("64bit elf")).unwrap_or("").to_string();
        for (what, a, b) in [
            ("header", header(&eo), header(&et)),
            ("file type", o.e_type.to_string(), t.e_type.to_string()),
            ("sections", format!("{:?}", set(&o.sections)), format!("{:?}", set(&t.sections))),
            ("symbols", format!("{:?}", syms(&o.symbols)), format!("{:?}", syms(&t.symbols))),
            ("relocation kinds", format!("{:?}", cuobjdump_relocs(&eo)), format!("{:?}", cuobjdump_relocs(&et))),
            ("call graph", format!("{:?}", pairs(&o.callgraph)), format!("{:?}", pairs(&t.callgraph))),
            ("prototypes", format!("{:?}", pairs(&o.prototype)), format!("{:?}", pairs(&t.prototype))),
        ] {
            if a != b {
                bad.push(format!("{name}: {what}\n  ours  {a}\n  ptxas {b}"));
            }
        }
        // nvdisasm reads ours without a warning (tool_text asserts it).
        tool_text(&bin, "nvdisasm", &["-c"], &o_path);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Without `-c` the same module is an executable cubin with `CAL`s resolved in the
/// kernel's section; with it, every call between functions is a `JCAL` with a
/// relocation, and a function's call of itself stays a `CAL` (ptxas 11.8 `-c`:
/// `CAL `(.text.fact)` in `fact`, `JCAL `(fact)` in the kernel). Needs no NVIDIA tool.
#[test]
fn calls_become_relocated_jcal() {
    let src = std::fs::read_to_string(data("recursion.ptx")).unwrap();
    let o = read_elf(&ours(&src, Inline::Never));
    assert_eq!(o.e_type, elf::ET_REL.0);
    assert_eq!(
        o.relocs.iter().map(|r| (r.0.as_str(), r.2, r.3.as_str())).collect::<Vec<_>>(),
        [(".rel.text.k", 42, "fact")]
    );
    assert!(o.sections.iter().any(|s| s.0 == ".text.fact") && !o.sections.iter().any(|s| s.0 == ".nv.rel.action"));
    let fact = o.symbols.iter().find(|s| s.0 == "fact").unwrap();
    assert_eq!((fact.1, fact.3.as_str()), (0x02, ".text.fact"), "a LOCAL FUNC in its own section");
    let mut opts = Options { relocatable: true, ..Options::default() };
    opts.lower.inline = Inline::Never;
    let text = driver::compile(&src, &opts).unwrap().text;
    assert!(text.contains("JCAL `(fact)") && text.contains("CAL `(fact)"), "{text}");
    // The executable cubin has no JCAL to fact (its CAL is resolved in .text.k).
    opts.relocatable = false;
    assert!(!driver::compile(&src, &opts).unwrap().text.contains("JCAL"));
}

/// `-c` of a module with `.global` data: a diagnostic, not a wrong file.
#[test]
fn relocatable_module_data_is_rejected() {
    let src = ".version 7.8\n.target sm_50\n.address_size 64\n.global .u32 g;\n\
               .visible .entry k() { .reg .b32 %r; ld.global.u32 %r, [g]; st.global.u32 [g], %r; ret; }\n";
    let opts = Options { emit: Emit::Cubin, relocatable: true, ..Options::default() };
    let e = driver::compile(src, &opts).unwrap_err();
    assert!(e[0].message.contains("not supported yet"), "{}", e[0].message);
}

/// Our `-c` objects of the recursion and function-pointer probes, each linked alone by
/// nvlink (the kernel's `JCAL `(fact)` and the `32@lo(add1)`/`32@lo(dbl)` addresses
/// resolved by the link), read back with `disasm`, run on the simulator with the
/// interpreter's results: fact(0), fact(5); add1(0) (n = 0), dbl(3).
#[test]
fn linked_recursion_and_function_pointers_run() {
    let Some(bin) = tools() else { return };
    let dir = scratch("e");
    for (name, cases) in [("recursion", [(0u32, 1u32), (5, 120)]), ("fptr", [(0, 1), (3, 6)])] {
        let ptx = data(&format!("{name}.ptx"));
        let obj = dir.join(format!("{name}.ours.cubin"));
        std::fs::write(&obj, ours(&std::fs::read_to_string(&ptx).unwrap(), Inline::Never)).unwrap();
        let linked = dir.join(format!("{name}.linked.cubin"));
        let bytes = nvlink(&bin, &[&obj], &linked);
        let (listing, warnings) = ptx2sass::cubin::disasm(&bytes).unwrap();
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        let sass = dir.join(format!("{name}.sass"));
        std::fs::write(&sass, listing).unwrap();
        for (n, want) in cases {
            let dump = dir.join(format!("{name}-{n}"));
            std::fs::create_dir_all(&dump).unwrap();
            for extra in [vec!["--compare"], vec!["--exec", "sim", "--dump", dump.to_str().unwrap()]] {
                let out = Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
                    .arg("run")
                    .arg(&ptx)
                    .arg("--sass")
                    .arg(&sass)
                    .args(["--kernel", "k", "--block", "1", "--arg", "zeros:4", "--arg", &format!("i:{n}")])
                    .args(&extra)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{name} n={n} {extra:?}: {}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            let got = std::fs::read(dump.join("arg0.bin")).unwrap();
            assert_eq!(u32::from_le_bytes(got[..4].try_into().unwrap()), want, "{name} n={n}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CLI: `compile -c` and `compile --relocatable` write the relocatable cubin
/// (ET_REL); without the flag `-o X.cubin` is an executable (ET_EXEC). No NVIDIA tool.
#[test]
fn cli_relocatable_flag() {
    let dir = scratch("cli");
    let ptx = data("recursion.ptx");
    for (flag, e_type) in [(Some("-c"), 1u8), (Some("--relocatable"), 1), (None, 2)] {
        let out = dir.join("out.cubin");
        let st = Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
            .arg("compile")
            .args(flag)
            .arg(&ptx)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(st.status.success(), "{flag:?}: {}", String::from_utf8_lossy(&st.stderr));
        assert_eq!(std::fs::read(&out).unwrap()[16], e_type, "{flag:?}: e_type");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
