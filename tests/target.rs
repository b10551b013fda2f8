//! `.version` / `.target` rules and the feature table (issue 22 items 4 and 8): a target
//! newer than sm_50 is an error unless `--allow-newer-target`; a feature newer than the
//! declared version or target says which version or target it needs; half-precision
//! instructions are rejected for sm_50 as ptxas does (`requires .target sm_53`), and the PTX
//! interpreter computes them itself (IEEE binary16 / bfloat16) when a newer target lets
//! them through, while the compiler still rejects them for SPA 5.0.

use ptx2sass::driver::{self, Options};
use ptx2sass::ptx::target::Options as Front;

fn module(version: &str, target: &str, body: &str) -> String {
    format!(
        ".version {version}\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n.reg .u64 p;\n.reg .b16 h<4>;\n.reg .b32 r<4>;\n.reg .f32 f<4>;\n.reg .pred q<4>;\nld.param.u64 p, [out];\n{body}\nret;\n}}\n"
    )
}

/// Compiles with `--allow-newer-target` set to `allow`; returns (errors, warnings).
fn diags(src: &str, allow: bool) -> (Vec<String>, Vec<String>) {
    let opts = Options { front: Front { allow_newer_target: allow }, ..Options::default() };
    match driver::compile(src, &opts) {
        Ok(o) => (vec![], o.warnings.into_iter().map(|d| d.message).collect()),
        Err(d) => {
            let (e, w): (Vec<_>, Vec<_>) = d.into_iter().partition(|d| d.is_error());
            (e.into_iter().map(|d| d.message).collect(), w.into_iter().map(|d| d.message).collect())
        }
    }
}

fn has(v: &[String], needle: &str) -> bool {
    v.iter().any(|m| m.contains(needle))
}

#[test]
fn newer_target_is_an_error_unless_allowed() {
    let src = module("7.0", "sm_70", "mov.u32 r0, 1;\nst.global.u32 [p], r0;");
    let (e, _) = diags(&src, false);
    assert!(has(&e, "`.target sm_70` is newer than sm_50"), "{e:?}");
    let (e, w) = diags(&src, true);
    assert!(e.is_empty(), "{e:?}");
    assert!(has(&w, "`.target sm_70` is newer than sm_50"), "{w:?}");
    for t in ["sm_90a", "sm_100f", "compute_75"] {
        let (e, _) = diags(&module("8.6", t, ""), false);
        assert!(has(&e, "is newer than sm_50"), "{t}: {e:?}");
    }
    // Older targets and options are fine; unknown words are not.
    assert_eq!(diags(&module("7.0", "sm_35", ""), false).0, Vec::<String>::new());
    assert_eq!(diags(&module("7.0", "sm_50, texmode_independent", ""), false).0, Vec::<String>::new());
    assert!(has(&diags(&module("7.0", "sm_51", ""), false).0, "unknown `.target` `sm_51`"));
    // A target the declared version does not know (ptxas: "PTX .version 4.1 does not support .target sm_53").
    assert!(has(&diags(&module("4.1", "sm_53", ""), true).0, "PTX ISA 4.1 does not support `.target sm_53`"));
}

#[test]
fn features_name_the_version_they_need() {
    for (ver, body, need) in [
        ("6.0", "activemask.b32 r0;", "requires PTX ISA 6.2"),
        ("5.0", "bar.warp.sync -1;", "requires PTX ISA 6.0"),
        ("5.0", "shfl.sync.idx.b32 r0, r1, 0, 31, -1;", "requires PTX ISA 6.0"),
        ("8.2", ".reg .b128 x;", "requires PTX ISA 8.3"),
        ("7.3", "ld.global.L2::cache_hint.u32 r0, [p], p;", "requires PTX ISA 7.4"),
        ("8.5", "ld.global.v8.b32 {r0, r1, r2, r3, r0, r1, r2, r3}, [p];", "requires PTX ISA 8.8"),
    ] {
        let (e, _) = diags(&module(ver, "sm_50", body), false);
        assert!(has(&e, need), "{body}: {e:?}");
    }
}

/// Issue 22 item 4: every half-precision compare and arithmetic form ptxas rejects for
/// sm_50 is rejected naming the target it needs (the compiler used to emit one f32 compare
/// of the raw bits).
#[test]
fn half_precision_instructions_need_their_target() {
    for (body, sm) in [
        ("set.gt.u32.f16 r0, h0, h1;", 53),
        ("set.gt.f16x2.f16x2 r0, r1, r2;", 53),
        ("setp.gt.f16 q0, h0, h1;", 53),
        ("setp.gt.f16x2 q0|q1, r1, r2;", 53),
        ("set.gt.u32.bf16x2 r0, r1, r2;", 90),
        ("setp.lt.bf16 q0, h0, h1;", 90),
        ("add.f16 h0, h1, h2;", 53),
        ("sub.f16x2 r0, r1, r2;", 53),
        ("mul.rn.f16 h0, h1, h2;", 53),
        ("fma.rn.f16 h0, h1, h2, h3;", 53),
        ("neg.f16 h0, h1;", 53),
        ("abs.f16x2 r0, r1;", 53),
        ("min.f16 h0, h1, h2;", 80),
        ("max.f16x2 r0, r1, r2;", 80),
        ("add.bf16 h0, h1, h2;", 90),
        ("fma.rn.bf16x2 r0, r1, r2, r3;", 80),
        ("cvt.rn.bf16.f32 h0, f0;", 80),
        ("cvt.f32.bf16 f0, h0;", 80),
        ("ex2.approx.f16 h0, h1;", 75),
    ] {
        let (e, _) = diags(&module("8.8", "sm_50", body), false);
        assert!(has(&e, &format!("requires `.target sm_{sm}` or higher")), "{body}: {e:?}");
        // Accepted with a newer target, the compiler still refuses: SPA 5.0 lacks it.
        let (e, _) = diags(&module("8.8", "sm_90", body), true);
        assert!(has(&e, &format!("requires sm_{sm}")), "{body}: {e:?}");
    }
    // What ptxas accepts for sm_50 stays: conversions between f16 and f32/f64/integers.
    for body in ["cvt.rn.f16.f32 h0, f0;", "cvt.f32.f16 f0, h0;", "cvt.rzi.s32.f16 r0, h0;", "cvt.rn.f16.s32 h0, r0;"] {
        assert_eq!(diags(&module("7.0", "sm_50", body), false).0, Vec::<String>::new(), "{body}");
    }
    // Half types where the PTX ISA has none (ptxas: "Unexpected instruction types").
    for body in [
        "mov.f16 h0, h1;",
        "selp.f16 h0, h1, h2, q0;",
        "ld.global.f16 h0, [p];",
        "rcp.approx.f16 h0, h1;",
        "testp.finite.f16 q0, h0;",
    ] {
        let (e, _) = diags(&module("7.0", "sm_50", body), false);
        assert!(has(&e, "is not an instruction type of"), "{body}: {e:?}");
    }
}

/// The interpreter's own half-precision semantics (PTX ISA 9.7.4), run on a `.target sm_90`
/// module accepted with `--allow-newer-target`: compares of f16/bf16 values (not of their
/// bit patterns), per-half packed compares and arithmetic, correctly rounded results.
#[test]
fn interpreter_computes_half_precision() {
    use ptx2sass::exec::{self, GLOBAL_BASE, Launch, Memory};
    let body = "
mov.b16 h0, 0xbc00;            // -1.0 (f16)
mov.b16 h1, 0x3c00;            // +1.0
setp.gt.f16 q0, h0, h1;        // -1 > 1 is false (as raw bits 0xbc00 > 0x3c00)
selp.u32 r0, 1, 0, q0;
st.global.u32 [p], r0;
set.gt.u32.f16 r0, h1, h0;     // true: all ones
st.global.u32 [p+4], r0;
mov.b32 r1, 0x3c00bc00;        // {lo -1.0, hi 1.0}
mov.b32 r2, 0x00003c00;        // {lo 1.0, hi 0.0}
setp.lt.f16x2 q0|q1, r1, r2;   // lo: -1 < 1 true; hi: 1 < 0 false
selp.u32 r0, 1, 0, q0;
st.global.u32 [p+8], r0;
selp.u32 r0, 1, 0, q1;
st.global.u32 [p+12], r0;
set.lt.f16x2.f16x2 r0, r1, r2; // {1.0, 0.0}
st.global.u32 [p+16], r0;
add.rn.f16x2 r0, r1, r2;       // {0.0, 1.0}
st.global.u32 [p+20], r0;
mov.b16 h2, 0x3c01;            // 1 + 2^-10
mul.rn.f16 h3, h2, h2;         // 1 + 2^-9 + 2^-20: rounds to 1 + 2^-9 = 0x3c02
cvt.u32.u16 r0, h3;
st.global.u32 [p+24], r0;
mov.b16 h0, 0xbf80;            // bf16 -1.0
mov.b16 h1, 0x3f80;            // bf16 +1.0
setp.lt.bf16 q0, h0, h1;
selp.u32 r0, 1, 0, q0;
st.global.u32 [p+28], r0;
fma.rn.bf16 h2, h1, h1, h1;    // 2.0 = 0x4000
cvt.u32.u16 r0, h2;
st.global.u32 [p+32], r0;";
    let src = module("8.8", "sm_90", body);
    let (m, _) = ptx2sass::ptx::parse_with(&src, &Front { allow_newer_target: true }).expect("parses");
    let mut global = Memory::new();
    global.alloc("out", GLOBAL_BASE, vec![0; 36]).unwrap();
    let launch = Launch {
        step_limit: 10_000,
        ..Launch::new("k", [1, 1, 1], [1, 1, 1], GLOBAL_BASE.to_le_bytes().to_vec(), global)
    };
    let out = exec::ptx::run(&m, &launch).expect("runs");
    let (_, _, bytes) = out.global.regions().next().unwrap();
    let w: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(w, vec![0, u32::MAX, 1, 0, 0x0000_3c00, 0x3c00_0000, 0x3c02, 1, 0x4000]);
}

/// Every row of the feature table against ptxas 12.9 (`../shared/tools/ptxas-12.9.sh`
/// installs it; `$PTXAS129` names another binary): its example, compiled for sm_50 with
/// `.version 8.8`, must be refused as needing exactly the row's target (or accepted when the
/// row's target is sm_50 or older), and with `.version 4.0` as needing the row's PTX ISA
/// version. Skips (passing) when ptxas 12.9 is absent.
#[test]
fn feature_table_agrees_with_ptxas_12_9() {
    use ptx2sass::ptx::target::FEATURES;
    let bin = std::env::var("PTXAS129").map(std::path::PathBuf::from).unwrap_or_else(|_| {
        std::path::Path::new(&std::env::var("HOME").unwrap_or_default())
            .join(".cache/nvidia-cuda-nvcc-12.9/nvidia/cuda_nvcc/bin/ptxas")
    });
    if !bin.is_file() {
        eprintln!("skipped: ptxas 12.9 not found at {} (run ../shared/tools/ptxas-12.9.sh)", bin.display());
        return;
    }
    let dir = std::env::temp_dir().join(format!("ptx2sass-features-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ptxas = |version: &str, example: &str| -> String {
        let q = if example.contains("%q") { ".reg .b128 %q<4>;\n" } else { "" };
        let src = format!(
            ".version {version}\n.target sm_50\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n\
             .reg .u64 p, %rd<4>;\n.reg .b16 %h<4>;\n.reg .b32 %r<4>;\n.reg .f32 %f<4>;\n.reg .f64 %fd<4>;\n\
             .reg .pred %p<4>;\n{q}ld.param.u64 p, [out];\n{example}\nret;\n}}\n"
        );
        let f = dir.join("f.ptx");
        std::fs::write(&f, src).unwrap();
        let o = std::process::Command::new(&bin).args(["-arch=sm_50", "-o", "/dev/null"]).arg(&f).output().unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // The largest number ptxas names after `prefix` (it may name several requirements).
    let largest = |text: &str, prefix: &str| -> Option<(u32, u32)> {
        text.match_indices(prefix)
            .filter_map(|(k, _)| {
                let rest = &text[k + prefix.len()..];
                let num: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
                let (a, b) = num.split_once('.').unwrap_or((&num, "0"));
                Some((a.parse().ok()?, b.trim_end_matches('.').parse().unwrap_or(0)))
            })
            .max()
    };
    let mut wrong = vec![];
    for f in FEATURES {
        let err = ptxas("8.8", f.example);
        let sm = largest(&err, "requires .target sm_").map_or(0, |v| v.0);
        let sm_ok = if f.sm > 50 { sm == f.sm || err.contains("not supported on .target 'sm_50'") } else { sm == 0 };
        let ptx = largest(&ptxas("4.0", f.example), "requires PTX ISA .version ").unwrap_or((4, 0));
        if !sm_ok || ptx != f.ptx {
            wrong.push(format!(
                "{} ({}): table sm_{} PTX {:?}, ptxas sm_{sm} PTX {ptx:?}",
                f.name, f.example, f.sm, f.ptx
            ));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(wrong.is_empty(), "{} row(s) disagree with ptxas 12.9:\n{}", wrong.len(), wrong.join("\n"));
}
