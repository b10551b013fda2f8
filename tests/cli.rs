//! The `ptx2sass` command line: bad input gets a diagnostic with file:line:col, a caret and
//! what was expected, exit status 1 and no output file; usage errors exit with 2; `-`
//! reads stdin / writes stdout; every `--emit` stage and `-v` work.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Compiles `bytes` from a file with `-o`; returns the process output and whether the
/// output file exists afterwards.
fn compile_bytes(name: &str, bytes: &[u8]) -> (Output, bool) {
    let d = scratch(name);
    let input = d.join("in.ptx");
    let out = d.join("out.sass");
    std::fs::write(&input, bytes).unwrap();
    let o = bin().arg("compile").arg(&input).arg("-o").arg(&out).output().unwrap();
    (o, out.exists())
}

/// Asserts a user error: status 1, no output file, and every `needle` in stderr.
fn assert_user_error(name: &str, src: &[u8], needles: &[&str]) {
    let (o, written) = compile_bytes(name, src);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{name}: status; stderr:\n{err}");
    assert!(!written, "{name}: an output file was written");
    for n in needles {
        assert!(err.contains(n), "{name}: stderr lacks {n:?}:\n{err}");
    }
    assert!(!err.contains("panicked"), "{name}: panic:\n{err}");
}

fn kernel(body: &str) -> String {
    format!("{HEADER}.visible .entry k(.param .u64 k_p)\n{{\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n{body}\nret;\n}}\n")
}

#[test]
fn unknown_opcode() {
    assert_user_error(
        "opcode",
        kernel("lod.global.u32 %r1, [%rd1];").as_bytes(),
        &["error: unknown opcode `lod`", "in.ptx:8:1", "^^^", "did you mean `ld`?"],
    );
}

#[test]
fn unknown_modifier() {
    assert_user_error(
        "modifier",
        kernel("add.s32.sideways %r1, %r2, %r3;").as_bytes(),
        &["unknown modifier `.sideways` for `add`", "in.ptx:8:8"],
    );
}

#[test]
fn conflicting_modifiers() {
    assert_user_error(
        "conflict1",
        kernel("ld.global.shared.u32 %r1, [%rd1];").as_bytes(),
        &["`.shared` conflicts with `.global` on `ld`", "in.ptx:8:10", "an `ld` takes at most one state space"],
    );
    assert_user_error(
        "conflict2",
        kernel("ld.ca.cg.global.u32 %r1, [%rd1];").as_bytes(),
        &["`.cg` conflicts with `.ca` on `ld`", "at most one cache operator"],
    );
}

#[test]
fn undeclared_register() {
    assert_user_error(
        "undeclared",
        kernel("add.s32 %r1, %r2, %q9;").as_bytes(),
        &["undeclared register `%q9`", "in.ptx:8:19", "declare registers with `.reg"],
    );
}

#[test]
fn register_of_the_wrong_width() {
    assert_user_error(
        "width",
        kernel("add.s32 %rd1, %r2, %r3;").as_bytes(),
        &[
            "register `%rd1` has the wrong type for `add.s32`",
            "`%rd1` is declared `.b64`; this operand needs a `.u32`, `.s32` or `.b32` register",
        ],
    );
}

#[test]
fn missing_semicolon() {
    assert_user_error(
        "semicolon",
        kernel("add.s32 %r1, %r2, %r3\nadd.s32 %r1, %r1, 1;").as_bytes(),
        &["error: expected `;`", "in.ptx:8:22", "missing `;` here", "found `add` instead"],
    );
}

#[test]
fn unterminated_brace() {
    let src = format!("{HEADER}.visible .entry k()\n{{\nret;\n");
    assert_user_error(
        "brace",
        src.as_bytes(),
        &["unexpected end of file: a `{` is never closed", "this `{` has no matching `}`", "in.ptx:6:5"],
    );
}

#[test]
fn label_defined_twice() {
    assert_user_error(
        "label2",
        kernel("L1:\nL1:").as_bytes(),
        &["label `L1` is defined twice", "first defined here", "in.ptx:9:1"],
    );
}

#[test]
fn label_never_defined() {
    assert_user_error(
        "label0",
        kernel("bra Nowhere;").as_bytes(),
        &["label `Nowhere` is not defined in this block or an enclosing one", "in.ptx:8:5"],
    );
}

#[test]
fn non_utf8_bytes() {
    let mut src = kernel("").into_bytes();
    src.splice(40..40, [0xff, 0xfe]);
    assert_user_error(
        "utf8",
        &src,
        &["the file is not valid UTF-8: byte 0xff at line 3, column 14", "in.ptx:3:14", "not UTF-8"],
    );
}

#[test]
fn empty_file() {
    assert_user_error("empty", b"", &["empty file: no PTX module", "in.ptx:1:1", "`.version`"]);
}

#[test]
fn c_file() {
    let src = b"#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n";
    assert_user_error(
        "cfile",
        src,
        &["this is not a PTX module: it has no `.version` directive", "in.ptx:1:1", "^^^^"],
    );
}

#[test]
fn several_errors_in_one_run() {
    let (o, _) = compile_bytes("several", kernel("lod %r1;\nadd.s32 %r1, %r2, %q9;\nbra Nowhere;").as_bytes());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("unknown opcode `lod`"), "{err}");
    assert!(err.contains("error: 1 error in") || err.contains("errors in"), "{err}");
}

#[test]
fn usage_errors_exit_with_2() {
    let o = bin().arg("compile").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin().args(["compile", "x.ptx", "--emit", "bogus"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = bin().args(["frobnicate"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn missing_input_file_is_a_user_error() {
    let o = bin().args(["compile", "/nonexistent/k.ptx"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read /nonexistent/k.ptx"));
}

#[test]
fn stdin_to_stdout() {
    let src = std::fs::read("samples/vector_add.ptx").unwrap();
    let mut child =
        bin().args(["compile", "-", "-o", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(&src).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("Function : vector_add"));
    assert!(text.contains("LDG.E"));
}

#[test]
fn every_emit_stage() {
    let expect = [
        ("ast", ".visible .entry vector_add("),
        ("ir", "ISETP.GE.AND %p"),
        ("ir-alloc", "ISETP.GE.AND P"),
        ("dot", "digraph \"vector_add\""),
        ("sass", "/*0008*/"),
    ];
    for (emit, needle) in expect {
        let o = bin().args(["compile", "samples/vector_add.ptx", "--emit", emit]).output().unwrap();
        assert!(o.status.success(), "{emit}");
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(needle), "--emit {emit} lacks {needle:?}:\n{text}");
    }
}

#[test]
fn verbose_statistics() {
    let o = bin().args(["compile", "samples/reduce_sum.ptx", "-v", "-o", "-"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success());
    assert!(err.contains("ptx2sass info    : Function properties for reduce_sum"), "{err}");
    assert!(err.contains("registers,") && err.contains("instructions,") && err.contains("1024 bytes smem"), "{err}");
}

#[test]
fn output_file_is_written_on_success() {
    let d = scratch("ok");
    let out = d.join("v.sass");
    let o = bin().args(["compile", "samples/saxpy.ptx", "-o"]).arg(&out).output().unwrap();
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&out).unwrap().contains("Function : saxpy"));
}

#[test]
fn check_accepts_our_output_and_rejects_a_broken_listing() {
    let sass = scratch("check").join("ok.sass");
    let out = bin().args(["compile", "samples/vector_add.ptx", "--serial", "-v", "-o"]).arg(&sass).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Estimated"), "-v reports estimated cycles");
    let out = bin().arg("check").arg(&sass).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("vector_add: 20 instructions, estimated"));
    // The same listing with every wait mask removed reads load results too early.
    let text = std::fs::read_to_string(&sass).unwrap();
    let broken: String = text
        .lines()
        .map(|l| match l.find("&req={") {
            Some(a) => format!("{}{}\n", &l[..a], &l[a + l[a..].find('}').unwrap() + 1..]),
            None => format!("{l}\n"),
        })
        .collect();
    let bad = sass.with_file_name("bad.sass");
    std::fs::write(&bad, broken).unwrap();
    let out = bin().arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hazard:") && err.contains("is not waited for"), "{err}");
    // A listing without control fields is a clear error, not a panic.
    std::fs::write(&bad, "Function : f\n /*0008*/ EXIT ;\n").unwrap();
    let out = bin().arg("check").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no control fields"));
}

#[test]
fn run_compares_both_executors_and_reports_errors() {
    let dir = scratch("run");
    let saxpy = ["run", "samples/saxpy.ptx", "--kernel", "saxpy", "--grid", "2", "--block", "64"];
    let args = ["--arg", "i:128", "--arg", "f32:2.5", "--arg", "rand:f32:128", "--arg", "rand:f32:128"];
    let out = bin().args(saxpy).args(args).arg("--compare").arg("--dump").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("agree on all global memory"));
    // y = a*x + y was written: the dumped y differs from the same random fill run on
    // the interpreter with a = 0.
    let y = std::fs::read(dir.join("arg3.bin")).unwrap();
    let zero_a = ["--arg", "i:128", "--arg", "f32:0", "--arg", "rand:f32:128", "--arg", "rand:f32:128"];
    let dir0 = scratch("run0");
    let out = bin().args(saxpy).args(zero_a).args(["--exec", "ptx", "--dump"]).arg(&dir0).output().unwrap();
    assert!(out.status.success());
    assert_ne!(y, std::fs::read(dir0.join("arg3.bin")).unwrap());
    // n larger than the buffers: an out-of-bounds access is a user error (exit 1).
    let big = ["--arg", "i:4096", "--arg", "f32:1", "--arg", "rand:f32:64", "--arg", "rand:f32:64"];
    let out = bin().args(saxpy).args(big).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of bounds"));
    // Bad shapes and argument syntax are usage errors (exit 2).
    let out = bin().args(["run", "samples/saxpy.ptx", "--kernel", "saxpy", "--grid", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin().args(["run", "samples/saxpy.ptx", "--kernel", "saxpy", "--arg", "rand:f16:4"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("f16"));
}

/// A reader that closes the pipe early (`ptx2sass ... | head`) ends the program quietly
/// with status 0: no panic (status 101), no error message. The reader is gone before the
/// program writes, so every write meets a closed pipe.
#[test]
fn closed_stdout_pipe_is_not_an_error() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/vector_add.ptx");
    let runs: [&[&str]; 2] = [
        &["compile", sample],
        &[
            "run",
            sample,
            "--kernel",
            "vector_add",
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "rand:f32:64",
            "--arg",
            "rand:f32:64",
            "--arg",
            "zeros:256",
            "--arg",
            "i:64",
            "--compare",
        ],
    ];
    for args in runs {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = bin().args(args).stdout(writer).stderr(Stdio::piped()).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

/// `-o` naming something other than a regular file is written through, not replaced: a
/// FIFO (like `/dev/null`, a device, which the earlier temp-file-and-rename write turned
/// into a regular file) stays a FIFO and its reader gets the listing; a symbolic link
/// stays a link and its target gets the listing.
#[test]
fn output_to_a_fifo_or_a_link_writes_through() {
    use std::os::unix::fs::FileTypeExt;
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/vector_add.ptx");
    let dir = scratch("through");
    let fifo = dir.join("out.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let path = fifo.clone();
        let reader = std::thread::spawn(move || std::fs::read_to_string(path).unwrap());
        let out = bin().args(["compile", sample, "-o"]).arg(&fifo).output().expect("runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        // Checked first: a replaced FIFO never gets a writer, and its reader stays blocked.
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
        assert!(reader.join().unwrap().contains("code for sm_50"));
    } else {
        eprintln!("skipped the FIFO case: mkfifo is not available");
    }
    let target = dir.join("target.sass");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.sass");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = bin().args(["compile", sample, "-o"]).arg(&link).output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::read_to_string(&target).unwrap().contains("code for sm_50"));
}

/// A closed standard error (`ptx2sass compile bad.ptx 2>&1 >/dev/null | head -c 10`) ends
/// the program with its status (1: the input has errors), not a panic (issue 20 crash 6).
#[test]
fn closed_stderr_pipe_is_not_a_panic() {
    let d = scratch("stderr");
    let input = d.join("bad.ptx");
    std::fs::write(&input, kernel("bogus.u32 %r1;\nnot_an_opcode;")).unwrap();
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = bin().arg("compile").arg(&input).stdout(Stdio::null()).stderr(writer).output().expect("runs");
    assert_eq!(out.status.code(), Some(1));
}

/// The output is written through a uniquely named temporary file: an unrelated file named
/// like the old temporary (`OUT.ptx2sass-tmp`) is left alone, no temporary file remains, and
/// a replaced output keeps its permissions (issue 20).
#[test]
fn output_temp_file_is_unique() {
    use std::os::unix::fs::PermissionsExt;
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/vector_add.ptx");
    let d = scratch("tempfile");
    let unrelated = d.join("out.ptx2sass-tmp");
    std::fs::write(&unrelated, "keep me").unwrap();
    let out_file = d.join("out.sass");
    std::fs::write(&out_file, "old").unwrap();
    std::fs::set_permissions(&out_file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let o = bin().args(["compile", sample, "-o"]).arg(&out_file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&unrelated).unwrap(), "keep me");
    assert!(std::fs::read_to_string(&out_file).unwrap().contains("code for sm_50"));
    assert_eq!(std::fs::metadata(&out_file).unwrap().permissions().mode() & 0o777, 0o640);
    let names: Vec<String> =
        std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// Diagnostics stay small on hostile input (issue 20): a run of identical syntax errors on
/// one line is one diagnostic with a count, a long quoted line shows a window around the
/// error with its real line and column, and at most 50 diagnostics are printed.
#[test]
fn diagnostics_do_not_blow_up() {
    let run = |name: &str, src: String| {
        let (o, written) = compile_bytes(name, src.as_bytes());
        assert_eq!(o.status.code(), Some(1));
        assert!(!written);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let err = run("hashes", kernel(&"#".repeat(10_000)));
    assert!(err.len() < 2_000, "{} bytes", err.len());
    assert!(err.contains("invalid token") && err.contains("9999 more like this on the same line"), "{err}");
    let err = run("semicolons", kernel(&";".repeat(40_000)));
    assert!(err.len() < 2_000, "{} bytes", err.len());
    assert!(err.contains("39999 more like this on the same line"), "{err}");
    let long = format!("{} bogus.u32 %r1;", "add.u32 %r1, %r1, 1; ".repeat(300));
    let err = run("longline", kernel(&long));
    assert!(err.contains("in.ptx:8:6302"), "{err}");
    assert!(err.lines().all(|l| l.len() < 400), "{err}");
    let many: String = (0..200).map(|k| format!("bogus{k}.u32 %r1;\n")).collect();
    let err = run("many", kernel(&many));
    assert_eq!(err.matches("error: unknown opcode").count(), 50, "{err}");
    assert!(err.contains("150 more diagnostics not shown"), "{err}");
}
