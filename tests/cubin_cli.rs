//! `compile -o X.cubin`, `disasm` and `asm` on good and bad input: a listing assembles to
//! the same cubin the compiler writes, and bad input (truncated ELF, wrong machine,
//! garbage words, bad syntax) gives a clear error and exit status 1, never a panic.

use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-cubin-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn run(c: &mut Command) -> Output {
    let o = c.output().expect("ptx2sass runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "panic: {err}");
    o
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn compile_to_cubin_then_disasm_then_asm_gives_the_same_cubin() {
    let cubin = tmp("va.cubin");
    let o = run(bin().args(["compile", &sample("vector_add.ptx"), "-o"]).arg(&cubin));
    assert!(o.status.success());
    let bytes = std::fs::read(&cubin).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), 190, "EM_CUDA");
    assert_eq!(u32::from_le_bytes(bytes[0x14..0x18].try_into().unwrap()), 118, "e_version as ptxas");
    // The listing the compiler prints assembles to the same bytes.
    let listing = tmp("va.sass");
    assert!(run(bin().args(["compile", &sample("vector_add.ptx"), "-o"]).arg(&listing)).status.success());
    let again = tmp("va2.cubin");
    let o = run(bin().arg("asm").arg(&listing).arg("-o").arg(&again));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&again).unwrap(), bytes);
    // disasm reads it back, and check accepts the result.
    let dis = tmp("va.dis");
    let o = run(bin().arg("disasm").arg(&cubin).arg("-o").arg(&dis));
    assert!(o.status.success());
    let text = std::fs::read_to_string(&dis).unwrap();
    assert!(text.contains("Function : vector_add") && text.contains("LDG.E"), "{text}");
    let o = run(bin().arg("check").arg(&dis));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn disasm_rejects_bad_files_with_a_message() {
    let cubin = tmp("ok.cubin");
    assert!(run(bin().args(["compile", &sample("saxpy.ptx"), "-o"]).arg(&cubin)).status.success());
    let good = std::fs::read(&cubin).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..40].to_vec(), "ELF"),
        ("empty", vec![], "ELF"),
        ("text", b"not an elf at all".to_vec(), "ELF"),
        (
            "machine",
            {
                let mut b = good.clone();
                b[18] = 62;
                b[19] = 0;
                b
            },
            "EM_CUDA",
        ),
        (
            "sm",
            {
                let mut b = good.clone();
                b[0x30] = 0x46;
                b
            },
            "sm_50",
        ),
    ];
    for (name, bytes, want) in cases {
        let p = tmp(&format!("{name}.cubin"));
        std::fs::write(&p, bytes).unwrap();
        let o = run(bin().arg("disasm").arg(&p));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("error") && err.contains(want), "{name}: {err}");
    }
}

#[test]
fn disasm_prints_unknown_words_with_a_warning() {
    let cubin = tmp("garbage.cubin");
    assert!(run(bin().args(["compile", &sample("saxpy.ptx"), "-o"]).arg(&cubin)).status.success());
    let mut b = std::fs::read(&cubin).unwrap();
    // The first instruction word of .text (its offset from the section table).
    let text = ptx2sass::cubin::read::text_sections(&b).unwrap();
    let at = b.windows(text[0].bytes.len()).position(|w| w == text[0].bytes.as_slice()).unwrap() + 8;
    b[at..at + 8].copy_from_slice(&0xffff_ffff_ffff_ffffu64.to_le_bytes());
    std::fs::write(&cubin, &b).unwrap();
    let o = run(bin().arg("disasm").arg(&cubin));
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(".word 0xffffffffffffffff"));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning")
            && String::from_utf8_lossy(&o.stderr).contains("unknown instruction word")
    );
}

#[test]
fn asm_reports_line_and_column() {
    let cases = [
        ("IADD R1, R2, c[0x0][0x3]", "multiple of 4"),
        ("IADD R1, R2, 0x100000", "does not fit"),
        ("FOO R1, R2", "unknown opcode"),
        ("IADD.Q R1, R2, R3", "unexpected modifier"),
        ("LDG.E.64 R3, [R4]", "divisible by 2"),
        ("FADD R1, R2, 1.1", "not exactly representable"),
        ("FADD R1, R2, 1.10000002384185791015625", "low 12 bits"),
        ("MOV32I R2, 32@lo(gvar)", "`gvar` is not a module variable"),
    ];
    for (ins, want) in cases {
        let listing = format!("\t\tFunction : k\n        /*0008*/                   {ins}   ?WAIT6 ;\n");
        let p = tmp("bad.sass");
        std::fs::write(&p, listing).unwrap();
        let o = run(bin().arg("asm").arg(&p).arg("-o").arg(tmp("bad.cubin")));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{ins}: {err}");
        assert!(err.contains(":2:") && err.contains(want), "{ins}: {err}");
    }
}

/// A module with `.global` and `.const` data: `compile -o X.sass` carries the module data
/// block, `asm` of it gives the compiler's cubin byte for byte (sections, symbols,
/// relocations), `disasm` prints the relocated operands and the data block again, and
/// `asm` of the disassembly gives the same module data (its data sections and relocation
/// sections equal the original's).
#[test]
fn module_data_survives_listing_asm_and_disasm() {
    let ptx = tmp("globals.ptx");
    std::fs::write(
        &ptx,
        ".version 7.8\n.target sm_50\n.address_size 64\n\
         .global .align 8 .u64 tab[2] = {5, 6};\n.global .u64 p = generic(tab)+8;\n\
         .visible .global .u32 hits;\n.const .u64 cp = tab;\n\
         .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<4>;\n\
         ld.param.u64 %rd1, [out];\nld.global.u64 %rd2, [p];\nld.global.u64 %rd3, [%rd2];\n\
         atom.global.add.u32 %r1, [hits], 1;\nld.const.u64 %rd2, [cp];\nadd.s64 %rd3, %rd3, %rd2;\n\
         st.global.u64 [%rd1], %rd3;\nret;\n}\n",
    )
    .unwrap();
    let (cubin, listing) = (tmp("globals.cubin"), tmp("globals.sass"));
    assert!(run(bin().arg("compile").arg(&ptx).arg("-o").arg(&cubin)).status.success());
    assert!(run(bin().arg("compile").arg(&ptx).arg("-o").arg(&listing)).status.success());
    let text = std::fs::read_to_string(&listing).unwrap();
    assert!(
        text.contains("32@lo(hits)") && text.contains("p: .local .nv.global.init+0x0, 8 bytes = {tab+0x8}"),
        "{text}"
    );
    let again = tmp("globals2.cubin");
    let o = run(bin().arg("asm").arg(&listing).arg("-o").arg(&again));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&cubin).unwrap());
    let dis = tmp("globals.dis");
    assert!(run(bin().arg("disasm").arg(&cubin).arg("-o").arg(&dis)).status.success());
    let d = std::fs::read_to_string(&dis).unwrap();
    assert!(
        d.contains("MOV32I")
            && d.contains("32@hi(p)")
            && d.contains("{tab+0x8}")
            && d.contains("cp: .local .nv.constant3+0x0, 8 bytes = {tab}"),
        "{d}"
    );
    let third = tmp("globals3.cubin");
    let o = run(bin().arg("asm").arg(&dis).arg("-o").arg(&third));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = |p: &std::path::Path| ptx2sass::cubin::read::module_data(&std::fs::read(p).unwrap()).unwrap();
    assert_eq!(data(&third), data(&cubin));
}

/// Malformed module data lines and relocated operands naming no variable of the data
/// block: errors with line and column, exit 1.
#[test]
fn asm_reports_bad_module_data() {
    let code = "\t\tFunction : k\n        /*0008*/                   MOV32I R2, 32@lo(g)   ?WAIT6 ;\n        /*0010*/                   EXIT   ?WAIT15 ;\n";
    let title = "\t// module data (symbols in creation order):\n";
    let cases = [
        (
            "\t//   .section .nv.global 0x4 bytes, align 4\n\t//   g: .local .nv.global+0x0, 8 bytes\n",
            ":6:7:",
            "outside .nv.global",
        ),
        (
            "\t//   .section .nv.global.init 0x4 bytes, align 4\n\t//   g: .local .nv.global.init+0x0, 4 bytes = 0102\n",
            ":6:7:",
            "2 initial bytes for a variable of 4",
        ),
        ("\t//   g: .local .nv.global+0x0, 4 bytes\n", ":5:7:", "not declared before it"),
        ("\t//   .section .nv.bogus 0x4 bytes, align 4\n", ":5:7:", "expected `.section NAME"),
        (
            "\t//   .section .nv.global.init 0x8 bytes, align 8\n\t//   h: .visible .nv.global.init+0x0, 8 bytes = {g}\n",
            ":6:7:",
            "expected `NAME: .local|.global|.weak",
        ),
        (
            "\t//   .section .nv.global 0x4 bytes, align 4\n\t//   h: .local .nv.global+0x0, 4 bytes\n",
            ":2:",
            "`g` is not a module variable",
        ),
        (
            "\t//   .section .nv.global.init 0x8 bytes, align 8\n\t//   g: .local .nv.global.init+0x0, 8 bytes = {nosuch}\n",
            ":6:",
            "`nosuch` is not a variable",
        ),
    ];
    for (data, at, want) in cases {
        let p = tmp("bad_data.sass");
        std::fs::write(&p, format!("{code}{title}{data}")).unwrap();
        let o = run(bin().arg("asm").arg(&p).arg("-o").arg(tmp("bad_data.cubin")));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{data}: {err}");
        assert!(err.contains(at) && err.contains(want), "{data}: {err}");
    }
}

#[test]
fn real_calls_compile_to_a_cubin_and_their_listing_is_refused_by_asm() {
    let src = format!("{}/tests/data/calls/mixed_calls.ptx", env!("CARGO_MANIFEST_DIR"));
    let cubin = tmp("calls.cubin");
    let o = run(bin().args(["compile", &src, "-o"]).arg(&cubin));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // disasm reads the kernels' sections (callees inside) and check accepts them.
    let dis = tmp("calls.dis");
    assert!(run(bin().arg("disasm").arg(&cubin).arg("-o").arg(&dis)).status.success());
    let text = std::fs::read_to_string(&dis).unwrap();
    assert!(text.contains("Function : k1") && text.contains("JCAL `(vprintf)") && text.contains("CAL "), "{text}");
    let o = run(bin().arg("check").arg(&dis));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The compile listing has the device functions on their own: a clear error, exit 1.
    let listing = tmp("calls.sass");
    assert!(run(bin().args(["compile", &src, "-o"]).arg(&listing)).status.success());
    let o = run(bin().arg("asm").arg(&listing).arg("-o").arg(tmp("calls2.cubin")));
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot be assembled from a listing yet"), "{err}");
}
