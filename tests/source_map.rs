//! Provenance from PTX statements to SASS instructions (`Instr::origin`), the annotated
//! listing (`compile --annotate`) and the `explore` HTML report.

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::sass::instr::Reg;
use ptx2sass::sass::program::Program;
use ptx2sass::sass::source_map::{SourceMap, annotated_listing, mapping_text};
use ptx2sass::sass::text;

fn program(src: &str) -> Program {
    let out = driver::compile(src, &Options { emit: Emit::Sass, ..Options::default() }).expect("compiles");
    out.program.expect("a program")
}

fn sample(name: &str) -> String {
    std::fs::read_to_string(format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// PTX line → SASS addresses, pinned for samples of each kind: straight-line loads and
/// stores, a loop with `.loc` lines (nvcc), local memory, shared memory and barriers.
#[test]
fn mapping_snapshots() {
    for name in ["vector_add.ptx", "nvcc_matvec.ptx", "local_array.ptx", "reduce_sum.ptx"] {
        let src = sample(name);
        let text = mapping_text(&program(&src), &SourceMap::new(&src));
        insta::assert_snapshot!(format!("mapping_{name}"), text);
    }
}

/// Every SASS instruction of every sample, but the ones the compiler adds on its own (the
/// final self-branch `BRA` after `EXIT`, the f64 slow-path functions `$__ptx2sass_*` it
/// generates, the stack-pointer set-up `MOV R1, c[0x0][0x20]` / `IADD32I R1, R1, -N` of a
/// function with a frame), names the PTX statement it implements.
#[test]
fn every_instruction_has_a_ptx_origin() {
    let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let (mut total, mut missing) = (0, vec![]);
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "ptx") || path.ends_with("stress_spill.ptx") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let p = program(&src);
        for f in p.functions.iter().filter(|f| !f.name.starts_with("$__ptx2sass")) {
            let n = f.code.len();
            for (k, s) in f.code.iter().enumerate() {
                let self_branch = k + 1 == n && s.instr.op == ptx2sass::sass::op::Op::Bra;
                let stack_pointer = s.instr.dsts.first().is_some_and(|d| d.reg_of() == Reg::R(1));
                total += 1;
                if s.instr.origin.is_none() && !self_branch && !stack_pointer {
                    missing.push(format!("{}: {}: {:?}", path.display(), f.name, s.instr.op));
                }
            }
        }
    }
    assert!(total > 1000);
    let shown: Vec<&String> = missing.iter().take(20).collect();
    assert!(missing.is_empty(), "{} of {total} instructions without origin: {shown:#?}", missing.len());
}

/// Each `ld.global` of `vector_add.ptx` maps to its own `LDG`, and each `st.global` to an
/// `STG` (the statement a load comes from, not its neighbours).
#[test]
fn loads_map_to_their_ldg() {
    let src = sample("vector_add.ptx");
    let p = program(&src);
    let map = SourceMap::new(&src);
    let mut seen = 0;
    for s in &p.functions[0].code {
        let Some(at) = s.instr.origin else { continue };
        let stmt = map.statement(at);
        let op = format!("{:?}", s.instr.op);
        if op.starts_with("Ldg") {
            assert!(stmt.starts_with("ld.global"), "{op} attributed to `{stmt}`");
            seen += 1;
        }
        if op.starts_with("Stg") {
            assert!(stmt.starts_with("st.global"), "{op} attributed to `{stmt}`");
            seen += 1;
        }
    }
    assert_eq!(seen, 3);
}

/// `.loc` lines give the CUDA source line; a `.loc` inside a comment does not count.
#[test]
fn loc_directives_give_source_lines() {
    let src = ".version 7.0\n.target sm_50\n.address_size 64\n.file 1 \"k.cu\"\n.visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n.loc 1 7 3\nld.param.u64 %rd1, [p];\ncvta.to.global.u64 %rd2, %rd1;\n// .loc 1 99 1\n.loc 1 8 5\nmov.u32 %r1, 5;\nst.global.u32 [%rd2], %r1;\nret;\n}\n";
    let p = program(src);
    let out = annotated_listing(&p, &SourceMap::new(src), "k.ptx");
    assert!(out.contains("        // k.cu:7\n        // k.ptx:10  ld.param.u64 %rd1, [p];\n"), "{out}");
    assert!(out.contains("        // k.cu:8\n"), "{out}");
    assert!(!out.contains("k.cu:99"), "{out}");
}

/// The annotated listing is the plain one plus `//` comment lines, and reads back to the
/// same instructions.
#[test]
fn annotated_listing_reads_back() {
    for name in ["vector_add.ptx", "nvcc_matvec.ptx", "bitonic_sort.ptx", "generic_call.ptx"] {
        let src = sample(name);
        let p = program(&src);
        let plain = p.to_string();
        let annotated = annotated_listing(&p, &SourceMap::new(&src), name);
        let kept: Vec<&str> = annotated.lines().filter(|l| !l.starts_with("        // ")).collect();
        assert_eq!(kept, plain.lines().collect::<Vec<_>>(), "{name}");
        assert!(annotated.lines().count() > plain.lines().count(), "{name}: no annotation");
        let a = text::parse(&annotated).unwrap();
        let b = text::parse(&plain).unwrap();
        let texts = |fs: &[text::TextFunction]| {
            fs.iter().flat_map(|f| f.instrs.iter().map(|i| i.text.clone())).collect::<Vec<_>>()
        };
        assert_eq!(texts(&a), texts(&b), "{name}");
    }
}

/// The explorer's report links the PTX `ld.global` line to the IR and SASS lines that
/// implement it, and is one self-contained page (no external resources).
#[test]
fn explore_report_links_lines() {
    let src = sample("vector_add.ptx");
    let html = ptx2sass::explore::report(&src, "vector_add.ptx", &Options::default()).unwrap();
    let line = src.lines().position(|l| l.trim_start().starts_with("ld.global")).unwrap() + 1;
    let tag = format!("data-p=\"{line}\"");
    let linked: Vec<&str> = html.split("<span").filter(|s| s.contains(&tag)).collect();
    assert!(linked.iter().any(|s| s.contains("LDG.E")), "no SASS line linked to PTX line {line}");
    assert!(linked.iter().any(|s| s.contains("id=\"p")), "PTX line {line} not linkable");
    assert!(linked.len() >= 3, "{linked:#?}");
    assert!(html.contains("<svg"));
    for bad in ["http://", "https://", "src=\""] {
        let outside = html.replace("http://www.w3.org/2000/svg", "");
        assert!(!outside.contains(bad), "external reference `{bad}`");
    }
}
