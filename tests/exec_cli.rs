//! `ptx2sass run`'s launch options (issue 22 item 9, issue 20's `run` blow-ups):
//! `--dynamic-shared`, `--init`, `bytes:` and by-value structures, `i:` down to `-2^63`,
//! `--max-steps` and `--max-memory`; every limit ends with a message and exit status 1,
//! never a panic or an abort.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HEADER: &str = ".version 7.8\n.target sm_50\n.address_size 64\n";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
}

/// A fresh scratch directory holding `src` as `in.ptx`.
fn scratch(name: &str, src: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ptx2sass-exec-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("in.ptx"), format!("{HEADER}{src}")).unwrap();
    d
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin().arg("run").arg(dir.join("in.ptx")).args(["--kernel", "k"]).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit status 1 with `needle` in the message, and no panic.
fn assert_error(o: &Output, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "status; stderr:\n{e}");
    assert!(e.contains(needle), "stderr lacks {needle:?}:\n{e}");
    assert!(!e.contains("panicked"), "{e}");
}

fn dumped(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(format!("{name}.bin"))).unwrap()
}

#[test]
fn dynamic_shared_memory_and_structures_by_value() {
    let src = r#"
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 out, .param .align 8 .b8 s[16], .param .s64 n)
{
    .reg .u64 p, a, c;
    ld.param.u64 p, [out];
    ld.param.u64 a, [s+8];
    ld.param.s64 c, [n];
    st.shared.u64 [dyn+24], a;
    ld.shared.u64 a, [dyn+24];
    st.global.u64 [p], a;
    st.global.u64 [p+8], c;
    ret;
}
"#;
    let d = scratch("dyn", src);
    std::fs::write(d.join("s.bin"), (0u8..16).collect::<Vec<_>>()).unwrap();
    let file = format!("file:{}", d.join("s.bin").display());
    let dump = d.display().to_string();
    let full = ["--arg", "zeros:16", "--arg", &file, "--arg", "i:-9223372036854775808"];
    let full = [&full[..], &["--compare", "--dump", &dump, "--dynamic-shared", "32", "--block", "1"]].concat();
    let o = run(&d, &full);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("agree"));
    let out = dumped(&d, "arg0");
    assert_eq!(out[..8], (8u8..16).collect::<Vec<_>>()[..]);
    assert_eq!(out[8..], i64::MIN.to_le_bytes());
    // `bytes:` gives the same structure; without the dynamic bytes the access is out of
    // bounds on either executor.
    let bytes = "bytes:000102030405060708090a0b0c0d0e0f";
    let o = run(&d, &["--arg", "zeros:16", "--arg", bytes, "--arg", "i:1", "--dynamic-shared", "32", "--block", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for exec in ["ptx", "sim"] {
        let o = run(&d, &["--arg", "zeros:16", "--arg", bytes, "--arg", "i:1", "--exec", exec, "--block", "1"]);
        assert_error(&o, "out of bounds");
    }
    // More than 48 KiB per CTA.
    let o = run(&d, &["--arg", "zeros:16", "--arg", bytes, "--arg", "i:1", "--dynamic-shared", "49153"]);
    assert_error(&o, "at most 49152");
    // Below -2^63: a usage error.
    let o = run(&d, &["--arg", "zeros:16", "--arg", bytes, "--arg", "i:-9223372036854775809"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn module_variables_take_initial_contents() {
    let src = r#"
.const .align 4 .u32 table[4];
.visible .entry k(.param .u64 out)
{
    .reg .u64 p;
    .reg .u32 a;
    ld.param.u64 p, [out];
    ld.const.u32 a, [table+8];
    st.global.u32 [p], a;
    ret;
}
"#;
    let d = scratch("init", src);
    let f = d.join("table.bin");
    std::fs::write(&f, [1u32, 2, 3, 4].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>()).unwrap();
    let init = format!("table=file:{}", f.display());
    let dump = d.display().to_string();
    let o = run(&d, &["--arg", "zeros:4", "--init", &init, "--compare", "--block", "1", "--dump", &dump]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(dumped(&d, "arg0"), 3u32.to_le_bytes());
    assert_error(&run(&d, &["--arg", "zeros:4", "--init", "nope=bytes:00"]), "no .const or .global variable `nope`");
    assert_error(&run(&d, &["--arg", "zeros:4", "--init", "table=zeros:17"]), "17 bytes");
    let o = run(&d, &["--arg", "zeros:4", "--init", "table"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn limits_end_with_a_message() {
    let spin = "\n.visible .entry k(.param .u64 out)\n{\nL:\nbra L;\n}\n";
    let d = scratch("limits", spin);
    // Steps: a sensible default, a clear error, and huge grids fail at once.
    assert_error(&run(&d, &["--arg", "zeros:4", "--max-steps", "1000"]), "step limit of 1000");
    assert_error(&run(&d, &["--arg", "zeros:4", "--max-steps", "1000", "--exec", "ptx"]), "step limit of 1000");
    let t = std::time::Instant::now();
    for exec in ["ptx", "sim"] {
        let o = run(&d, &["--arg", "zeros:4", "--grid", "65535,65535,64", "--exec", exec]);
        assert_error(&o, "--max-steps");
    }
    assert!(t.elapsed().as_secs() < 10);
    // Memory: buffers are checked before they are allocated, files read only so far.
    for a in ["zeros:18446744073709551615", "rand:u64:200000000", "file:/dev/zero"] {
        assert_error(&run(&d, &["--arg", a]), "--max-memory");
    }
    assert_error(&run(&d, &["--arg", "zeros:4096", "--max-memory", "4095"]), "--max-memory");
    // The largest `.local` array the front end allows (512 KiB per thread, `ptx::limits`)
    // in a CTA of 1024 threads on the simulator (512 MiB), a 4 GiB parameter on the
    // interpreter.
    let local = "\n.visible .entry k(.param .u64 out)\n{\n.local .align 4 .b8 big[524288];\n.reg .u32 t;\n\
                 mov.u32 t, %tid.x;\nst.local.u32 [big+524280], t;\nret;\n}\n";
    let d = scratch("local", local);
    assert_error(&run(&d, &["--arg", "zeros:4", "--block", "1024", "--max-memory", "268435456"]), "--max-memory");
    let param = "\n.visible .entry k(.param .b8 p[4294967295])\n{\nret;\n}\n";
    let d = scratch("param", param);
    assert_error(&run(&d, &["--arg", "bytes:00", "--exec", "ptx"]), "4352");
}
