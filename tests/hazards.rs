//! The hazard checker (`sched::check`): every program ptx2sass emits for the samples is
//! hazard-free, so is ptxas 11.8's code for them (when the NVIDIA tools are present), and
//! hand-broken programs are rejected, each for the reason that was broken.

#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::driver::{self, Emit, Options};
use ptx2sass::sass::text;
use ptx2sass::sched::check::{Hazard, check};
use std::path::Path;
use std::process::Command;

fn samples() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir("samples")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    v.sort();
    v
}

fn ours(path: &Path) -> String {
    let src = std::fs::read_to_string(path).unwrap();
    let opts = Options { emit: Emit::Sass, ..Options::default() };
    driver::compile(&src, &opts).unwrap_or_else(|_| panic!("{} compiles", path.display())).text
}

fn hazards(listing: &str) -> Vec<Hazard> {
    let funcs = text::parse(listing).expect("listing parses");
    assert!(!funcs.is_empty() && funcs.iter().all(|f| !f.instrs.is_empty()), "no code parsed");
    check(&funcs).expect("every opcode is in the checker's table")
}

#[test]
fn our_code_for_every_sample_is_hazard_free() {
    let mut instrs = 0;
    for p in samples() {
        let listing = ours(&p);
        let h = hazards(&listing);
        assert!(h.is_empty(), "{}:\n{}", p.display(), h.iter().map(|h| h.to_string()).collect::<Vec<_>>().join("\n"));
        instrs += text::parse(&listing).unwrap().iter().map(|f| f.instrs.len()).sum::<usize>();
    }
    assert!(instrs > 3000, "only {instrs} instructions checked");
}

#[test]
fn ptxas_code_for_every_sample_is_hazard_free() {
    let bin = match nvidia::tools() {
        Ok(b) => b,
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let script = Path::new("../shared/tools/sass-ctrl.py");
    if !script.is_file() {
        eprintln!("SKIPPED: ../shared/tools/sass-ctrl.py not found");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ptx2sass-hazards-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for p in samples() {
        // ptxas 11.8 reads PTX ISA up to 7.8 (the nvcc-style sample says 8.0).
        let src = std::fs::read_to_string(&p).unwrap().replace(".version 8.0", ".version 7.8");
        let ptx = dir.join("in.ptx");
        let cubin = dir.join("out.cubin");
        std::fs::write(&ptx, src).unwrap();
        let st =
            Command::new(bin.join("ptxas")).args(["-arch=sm_50", "-O3", "-o"]).arg(&cubin).arg(&ptx).status().unwrap();
        assert!(st.success(), "ptxas failed on {}", p.display());
        let out =
            Command::new("python3").arg(script).arg(&cubin).env("NVDISASM", bin.join("nvdisasm")).output().unwrap();
        assert!(out.status.success(), "sass-ctrl.py failed: {}", String::from_utf8_lossy(&out.stderr));
        let listing = String::from_utf8(out.stdout).unwrap();
        let h = hazards(&listing);
        assert!(
            h.is_empty(),
            "ptxas {}:\n{}",
            p.display(),
            h.iter().map(|h| h.to_string()).collect::<Vec<_>>().join("\n")
        );
        checked += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(checked, samples().len());
}

/// Edits line `n` (0-based) of a listing.
fn edit(listing: &str, n: usize, f: impl Fn(&str) -> String) -> String {
    listing.lines().enumerate().map(|(k, l)| if k == n { f(l) } else { l.to_string() } + "\n").collect()
}

fn find(listing: &str, pred: impl Fn(&str) -> bool) -> usize {
    listing.lines().position(pred).expect("a line to break")
}

fn assert_caught(listing: &str, what: &str) {
    let h = hazards(listing);
    assert!(h.iter().any(|h| h.message.contains(what)), "expected a hazard containing {what:?}, got {h:#?}");
}

#[test]
fn a_missing_wait_on_a_load_result_is_caught() {
    let l = ours(Path::new("samples/vector_add.ptx"));
    // The first instruction that waits on a barrier, with its wait mask removed.
    let n = find(&l, |s| s.contains("FADD") && s.contains("&req="));
    let broken = edit(&l, n, |s| {
        let a = s.find("&req=").unwrap();
        let b = a + s[a..].find('}').unwrap() + 1;
        format!("{}{}", &s[..a], &s[b..])
    });
    assert!(hazards(&l).is_empty());
    assert_caught(&broken, "variable-latency result");
}

#[test]
fn a_too_short_stall_is_caught() {
    let l = ours(Path::new("samples/saxpy.ptx"));
    // An ALU producer whose consumer is next and needs the full 6 cycles.
    let n = find(&l, |s| s.contains("XMAD") && s.contains("?WAIT6"));
    let broken = edit(&l, n, |s| s.replace("?WAIT6", "?WAIT1"));
    assert_caught(&broken, "before its producer's result is ready");
    // A predicate needs 13 cycles.
    let n = find(&l, |s| s.contains("ISETP") && s.contains("?WAIT13"));
    let broken = edit(&l, n, |s| s.replace("?WAIT13", "?WAIT6"));
    assert_caught(&broken, "reads P");
}

#[test]
fn an_overwritten_store_source_is_caught() {
    // STG reads its data late; rewriting the data register right after without waiting
    // on the store's read barrier is a WAR hazard.
    let l = ours(Path::new("samples/vector_add.ptx"));
    let n = find(&l, |s| s.contains("STG.E") && s.contains("&rd"));
    let data = l.lines().nth(n).unwrap().split(',').nth(1).unwrap().split_whitespace().next().unwrap().to_string();
    let broken = edit(&l, n, |s| format!("{s}\n        /*0000*/                   MOV32I {data}, 0x1  ?WAIT6 ;"));
    assert_caught(&broken, "may still read it");
    // Waiting on the read barrier (2 cycles after the store set it) makes it safe.
    let rd = l.lines().nth(n).unwrap().split("&rd").nth(1).unwrap()[..1].to_string();
    let fixed = edit(&l, n, |s| {
        let s = s.replace("?WAIT1", "?WAIT2");
        format!("{s}\n        /*0000*/                   MOV32I {data}, 0x1  &req={{{rd}}} ?WAIT6 ;")
    });
    assert!(hazards(&fixed).is_empty(), "{:#?}", hazards(&fixed));
}

#[test]
fn a_wait_too_soon_after_setting_the_barrier_is_caught() {
    let l = "Function : f\n\
        /*0008*/ S2R R0, SR_TID.X &wr0 ?WAIT1 ;\n\
        /*0010*/ IADD R1, R0, R0 &req={0} ?WAIT6 ;\n\
        /*0018*/ EXIT ?WAIT15 ;\n";
    assert_caught(l, "after it was set");
    assert!(hazards(&l.replace("&wr0 ?WAIT1", "&wr0 ?WAIT2")).is_empty());
}

#[test]
fn a_load_without_a_write_barrier_is_caught_unless_a_younger_load_covers_it() {
    // In-order completion: a wait on the younger load's barrier covers the older load.
    let covered = "Function : f\n\
        /*0008*/ LDG.E R4, [R2] ?WAIT1 ;\n\
        /*0010*/ LDG.E R5, [R2+0x4] &wr5 ?WAIT2 ;\n\
        /*0018*/ IADD R6, R4, R5 &req={5} ?WAIT6 ;\n\
        /*0028*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(covered).is_empty(), "{:#?}", hazards(covered));
    // An S2R is not in an in-order queue with the load.
    let uncovered = covered.replace("LDG.E R5, [R2+0x4]", "S2R R5, SR_TID.X");
    assert_caught(&uncovered, "sets no write barrier");
    // DEPBAR.LE SB5, 1 leaves the younger of two loads outstanding.
    let depbar = "Function : f\n\
        /*0008*/ LDG.E R4, [R2] &wr5 ?WAIT1 ;\n\
        /*0010*/ LDG.E R5, [R2+0x4] &wr5 ?WAIT2 ;\n\
        /*0018*/ DEPBAR.LE SB5, 0x1 ?WAIT3 ;\n\
        /*0028*/ IADD R6, R4, R4 ?WAIT6 ;\n\
        /*0030*/ IADD R7, R5, R5 ?WAIT6 ;\n\
        /*0038*/ EXIT ?WAIT15 ;\n";
    let h = hazards(depbar);
    assert_eq!(h.len(), 1, "{h:#?}");
    assert!(h[0].text.contains("R7") && h[0].message.contains("reads R5"));
}

#[test]
fn depbar_with_a_barrier_list_waits_for_every_listed_barrier() {
    // nvdisasm's `DEPBAR {0}` (ptxas 11.8, samples/nvcc_scan.ptx): wait until SB0 is clear.
    // The older shared load without a barrier completes first (in-order queue).
    let l = "Function : f\n\
        /*0008*/ @P1 LDS.U.32 R3, [R6] ?WAIT1 ;\n\
        /*0010*/ LDS.U.32 R8, [R5] &wr0 ?WAIT2 ;\n\
        /*0018*/ DEPBAR {0} ?WAIT13 ;\n\
        /*0028*/ IADD R3, R8, R3 ?WAIT6 ;\n\
        /*0030*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    // A list naming another barrier does not cover SB0; nor does a missing DEPBAR.
    assert_caught(&l.replace("DEPBAR {0}", "DEPBAR {1,2}"), "variable-latency result");
    assert_caught(&l.replace("DEPBAR {0}", "NOP"), "variable-latency result");
    // The list may follow the counting form.
    assert!(hazards(&l.replace("DEPBAR {0}", "DEPBAR.LE SB5, 0x1, {0}")).is_empty());
}

#[test]
fn a_wait_on_a_younger_loads_read_barrier_covers_older_loads_sources() {
    // ptxas 11.8 (samples/sha256.ptx): loads of one in-order queue fetch their sources in
    // order, so `&req={0}` on the younger load's read barrier frees R2:R3 for both.
    let l = "Function : f\n\
        /*0008*/ LDG.E.U8 R4, [R2+0x1] &wr5 ?WAIT1 ;\n\
        /*0010*/ LDG.E.U8 R5, [R2+0x2] &rd0 &wr5 ?WAIT2 ;\n\
        /*0018*/ MOV32I R3, 0x1 &req={0} ?WAIT1 ;\n\
        /*0028*/ EXIT &req={5} ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    // Without the wait R3 may still be read; a read barrier on the older load only does
    // not cover the younger one.
    assert_caught(&l.replace(" &req={0}", ""), "may still read it");
    let older_only = "Function : f\n\
        /*0008*/ LDG.E.U8 R4, [R2+0x1] &rd0 &wr5 ?WAIT2 ;\n\
        /*0010*/ LDG.E.U8 R5, [R2+0x2] &wr5 ?WAIT1 ;\n\
        /*0018*/ MOV32I R3, 0x1 &req={0} ?WAIT1 ;\n\
        /*0028*/ EXIT &req={5} ?WAIT15 ;\n";
    assert_caught(older_only, "may still read it");
}

#[test]
fn hazards_are_found_across_branches_and_loops() {
    // The load is waited for on the fall-through path only; the branch path reads early.
    let l = "Function : f\n\
        /*0008*/ LDG.E R4, [R2] &wr5 ?WAIT1 ;\n\
        /*0010*/ ISETP.NE.AND P0, PT, R0, RZ, PT ?WAIT13 ;\n\
        /*0018*/ @P0 BRA 0x30 ?WAIT15 ;\n\
        /*0028*/ IADD R6, R4, R4 &req={5} ?WAIT6 ;\n\
        /*0030*/ IADD R7, R4, R4 ?WAIT6 ;\n\
        /*0038*/ EXIT ?WAIT15 ;\n";
    let h = hazards(l);
    assert_eq!(h.len(), 1, "{h:#?}");
    assert_eq!(h[0].addr, 0x30);
    // A loop whose body reads a load issued at the bottom of the previous iteration.
    let l = "Function : f\n\
        /*0008*/ MOV R4, RZ ?WAIT6 ;\n\
        /*0010*/ IADD R6, R4, R4 ?WAIT6 ;\n\
        /*0018*/ LDG.E R4, [R2] &wr5 ?WAIT1 ;\n\
        /*0028*/ @P0 BRA 0x10 ?WAIT15 ;\n\
        /*0030*/ EXIT ?WAIT15 ;\n";
    let h = hazards(l);
    assert!(h.iter().any(|h| h.addr == 0x10 && h.message.contains("reads R4")), "{h:#?}");
}

#[test]
fn returns_go_back_to_their_own_call_site() {
    // One subroutine, two call sites. Before the second call a load into R6 is in flight;
    // only the second call's continuation reads R6, after waiting. The first call's
    // continuation overwrites R6 at once: safe, since on that path no load is in flight.
    // (Joining every RET with every call site's continuation would report it.)
    let l = "Function : f\n\
        /*0008*/ CAL 0x48 ?WAIT13 ;\n\
        /*0010*/ MOV R6, RZ ?WAIT6 ;\n\
        /*0018*/ LDG.E R6, [R2] &wr1 ?WAIT1 ;\n\
        /*0028*/ CAL 0x48 ?WAIT13 ;\n\
        /*0030*/ IADD R7, R6, R6 &req={1} ?WAIT6 ;\n\
        /*0038*/ EXIT ?WAIT15 ;\n\
        /*0048*/ MUFU.RCP R4, R5 &wr0 ?WAIT2 ;\n\
        /*0050*/ FADD R8, R4, R4 &req={0} ?WAIT6 ;\n\
        /*0058*/ RET ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    // A result left in flight by the subroutine is still a hazard at the call site that
    // does not wait for it ...
    let h = hazards(&l.replace("FADD R8, R4, R4 &req={0}", "FADD R8, R5, R5").replace("MOV R6, RZ", "MOV R6, R4"));
    assert!(h.iter().any(|h| h.addr == 0x10 && h.message.contains("reads R4")), "{h:#?}");
    // ... and a subroutine reading what one call site left in flight is caught too.
    let h = hazards(&l.replace("MUFU.RCP R4, R5", "MUFU.RCP R4, R6"));
    assert!(h.iter().any(|h| h.addr == 0x48 && h.message.contains("reads R6")), "{h:#?}");
}

#[test]
fn mufu_results_complete_in_order() {
    // ptxas 11.8 (samples/float_math.ptx): `MUFU.COS R19` without a barrier is covered by
    // the wait on the younger `MUFU.SIN`'s barrier.
    let l = "Function : f\n\
        /*0008*/ MUFU.COS R19, R19 ?WAIT2 ;\n\
        /*0010*/ MUFU.SIN R18, R22 &wr3 ?WAIT2 ;\n\
        /*0018*/ FADD R19, R18, R19 &req={3} ?WAIT6 ;\n\
        /*0028*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    // A younger op of another unit does not cover it.
    assert_caught(&l.replace("MUFU.SIN R18, R22", "S2R R18, SR_TID.X"), "sets no write barrier");
}

#[test]
fn fchk_writes_only_its_predicate() {
    // ptxas 11.8 (samples/black_scholes.ptx): the FFMA after FCHK reads R10, written 7
    // cycles earlier, and the branch on P0 waits the 13-cycle predicate latency.
    let l = "Function : f\n\
        /*0008*/ FFMA R10, R4, R9, R7 ?WAIT6 ;\n\
        /*0010*/ FCHK.DIVIDE P0, R10, R12 ?WAIT1 ;\n\
        /*0018*/ FFMA R7, R10, R8, RZ ?WAIT12 ;\n\
        /*0028*/ @!P0 EXIT ?WAIT15 ;\n\
        /*0030*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    assert_caught(&l.replace("?WAIT12", "?WAIT6"), "reads P0");
}

/// An instruction of every opcode the checker's table says reads its sources late
/// (`effects::TABLE`, `Reads::Late`), reading R4 (and R5 for 64-bit operands), written to
/// R6 (R6:R7) when it has a result. A form is needed for every such opcode: a new late
/// reader in the table fails here until it is tested.
fn late_reader_form(op: &str) -> &'static str {
    match op {
        "LDG" => "LDG.E R6, [R4]",
        "LD" => "LD.E R6, [R4]",
        "LDL" => "LDL R6, [R4]",
        "ATOM" => "ATOM.E.ADD R6, [R4], R8",
        "RED" => "RED.E.ADD [R4], R8",
        "STG" => "STG.E [R4], R8",
        "ST" => "ST.E [R4], R8",
        "STL" => "STL [R4], R8",
        "CCTL" => "CCTL.E.PF2 [R4]",
        "CCTLL" => "CCTLL.PF1 [R4]",
        "LDS" => "LDS.U.32 R6, [R4]",
        "ATOMS" => "ATOMS.ADD R6, [R4], R8",
        "STS" => "STS [R4], R8",
        "LDC" => "LDC R6, c[0x3][R4]",
        "SHFL" => "SHFL.BFLY PT, R6, R4, 0x1, 0x1f",
        "MUFU" => "MUFU.LG2 R6, R4",
        "POPC" => "POPC R6, R4",
        "FLO" => "FLO.U32 R6, R4",
        "BREV" => "BREV R6, R4",
        "DADD" => "DADD R6, R4, R8",
        "DMUL" => "DMUL R6, R4, R8",
        "DFMA" => "DFMA R6, R4, R8, R10",
        "DMNMX" => "DMNMX R6, R4, R8, PT",
        "DSETP" => "DSETP.GT.AND P0, PT, R4, R8, PT",
        "DSET" => "DSET.GT.AND R6, R4, R8, PT",
        "F2F" => "F2F.F32.F32 R6, R4",
        "F2I" => "F2I.S32.F32 R6, R4",
        "I2F" => "I2F.F32.S32 R6, R4",
        "I2I" => "I2I.S32.S32 R6, R4",
        // Texture and surface instructions (docs/textures.md): coordinates from R4.
        "TEXS" => "TEXS RZ, R6, R4, R8, 0x50, 2D, R",
        "TLDS" => "TLDS.LZ RZ, R6, R4, R8, 0x50, 2D, R",
        "TLD4S" => "TLD4S.R R8, R6, R4, R10, 0x50",
        "TEX" => "TEX.B R6, R4, R8, 0x0, 2D, 0x1",
        "TLD" => "TLD.B.LZ R6, R4, R8, 0x0, 2D, 0x1",
        "TLD4" => "TLD4.R.B R6, R4, R8, 0x0, 2D, 0x1",
        "TXD" => "TXD R6, R4, R8, 0x50, 2D, 0x1",
        "TXQ" => "TXQ R6, R4, TEX_HEADER_DIMENSION, 0x50, 0x1",
        "SULD" => "SULD.D.BA.2D.TRAP R6, [R4], 0x50",
        "SUST" => "SUST.D.BA.2D.TRAP [R4], R8, 0x50",
        "SURED" => "SURED.D.BA.2D.ADD.TRAP [R4], R8, 0x50",
        _ => panic!("no test form for the late reader {op}"),
    }
}

/// Issue 22 item 6: a late reader's source overwritten 1 cycle after it issued is caught
/// for every late-reading opcode; a read barrier waited for, a wait on the write barrier
/// or 14 cycles (the late-read window) make the overwrite safe.
#[test]
fn every_late_reader_holds_its_sources() {
    use ptx2sass::sched::effects::{LATE_READ_WINDOW, Reads, TABLE};
    let mut tested = 0;
    for (ops, row) in TABLE {
        let Reads::Late { .. } = row.reads else { continue };
        for op in *ops {
            let form = late_reader_form(op);
            let wr = if row.variable { " &wr0" } else { "" };
            let listing = |extra: &str, stall: u8, req: &str| {
                format!(
                    "Function : f\n\
                     /*0008*/ MOV R4, c[0x0][0x140] ?WAIT1 ;\n\
                     /*0010*/ MOV R5, c[0x0][0x144] ?WAIT6 ;\n\
                     /*0018*/ {form}{wr}{extra} ?WAIT{stall} ;\n\
                     /*0028*/ MOV R4, RZ{req} ?WAIT1 ;\n\
                     /*0030*/ EXIT ?WAIT15 ;\n"
                )
            };
            let h = hazards(&listing("", 1, ""));
            assert!(
                h.iter()
                    .any(|h| h.addr == 0x28
                        && h.message.contains("overwrites R4 while instruction #2 may still read it")),
                "{op}: {h:#?}"
            );
            for ok in [listing(" &rd1", 2, " &req={1}"), listing("", LATE_READ_WINDOW, "")] {
                assert!(hazards(&ok).is_empty(), "{op}: {:#?}\n{ok}", hazards(&ok));
            }
            if row.variable {
                let ok = listing("", 2, " &req={0}");
                assert!(hazards(&ok).is_empty(), "{op}: {:#?}\n{ok}", hazards(&ok));
            }
            tested += 1;
        }
    }
    assert!(tested >= 29, "{tested} late readers");
}

/// The pattern of issue 22 item 6 (ptx2sass's code for `black_scholes`), and ptxas
/// 11.8's way of overwriting a MUFU source soon (`samples/float_math`).
#[test]
fn a_mufu_source_overwritten_without_a_read_barrier_is_caught() {
    let bad = "Function : f\n\
        /*0008*/ MUFU.LG2 R5, R4 &wr0 ?WAIT1 ;\n\
        /*0010*/ MOV R4, RZ ?WAIT1 ;\n\
        /*0018*/ FADD R6, R5, R5 &req={0} ?WAIT6 ;\n\
        /*0028*/ EXIT ?WAIT15 ;\n";
    assert_caught(bad, "overwrites R4 while instruction #0 may still read it (no read barrier)");
    let ptxas = "Function : f\n\
        /*0008*/ MUFU.RSQ R13, R21 &rd3 &wr2 ?WAIT1 ;\n\
        /*0010*/ SEL R12, R9, R0, !P0 ?WAIT0 ;\n\
        /*0018*/ MUFU.EX2 R9, R23 ?WAIT2 ;\n\
        /*0028*/ FMUL R14, R17, 16777216 ?WAIT0 ;\n\
        /*0030*/ MUFU.RCP R12, R12 ?WAIT1 ;\n\
        /*0038*/ FADD R15, |R17|, 1 ?WAIT2 ;\n\
        /*0048*/ MUFU.RSQ R15, R15 &wr4 ?WAIT1 ;\n\
        /*0050*/ FFMA R21, RZ, R5, R11 &req={3} ?WAIT0 ;\n\
        /*0058*/ MUFU.RCP R13, R13 &req={2} &wr2 ?WAIT2 ;\n\
        /*0068*/ EXIT &req={2,4} ?WAIT15 ;\n";
    assert!(hazards(ptxas).is_empty(), "{:#?}", hazards(ptxas));
    assert_caught(&ptxas.replace("FFMA R21, RZ, R5, R11 &req={3}", "FFMA R21, RZ, R5, R11"), "overwrites R21");
}

/// CC is a register like any other for the checker: `.X` reads it 6 cycles after `.CC`.
#[test]
fn a_carry_read_too_soon_is_caught() {
    let l = "Function : f\n\
        /*0008*/ IADD RZ.CC, R2, -R4 ?WAIT6 ;\n\
        /*0010*/ IADD.X R3, R3, RZ ?WAIT6 ;\n\
        /*0018*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    assert_caught(&l.replace("-R4 ?WAIT6", "-R4 ?WAIT2"), "reads CC 4 cycle(s) before");
}

/// `SYNC` continues at the target of the `SSY` that is innermost on the reconvergence
/// stack, not at every `SSY` target of the function: a load left in flight by the first
/// if-region and waited for at its join is not in flight at the second region's join.
#[test]
fn sync_goes_to_its_own_ssy_target() {
    let l = "Function : f\n\
        /*0008*/ SSY 0x30 ?WAIT1 ;\n\
        /*0010*/ LDG.E R2, [R4] &wr0 ?WAIT2 ;\n\
        /*0018*/ SYNC ?WAIT15 ;\n\
        /*0030*/ FADD R3, R2, R2 &req={0} ?WAIT6 ;\n\
        /*0038*/ SSY 0x58 ?WAIT1 ;\n\
        /*0048*/ MOV R6, R3 ?WAIT1 ;\n\
        /*0050*/ SYNC ?WAIT15 ;\n\
        /*0058*/ FADD R5, R2, R2 ?WAIT6 ;\n\
        /*0068*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    assert_caught(&l.replace("FADD R3, R2, R2 &req={0}", "FADD R3, R2, R2"), "reads R2");
}

/// `BRK` leaves through the innermost `PBK` entry, past the `SSY` above it: what is in
/// flight on the break path reaches the break target.
#[test]
fn brk_leaves_through_its_pbk_past_inner_ssy() {
    let l = "Function : f\n\
        /*0008*/ PBK 0x48 ?WAIT1 ;\n\
        /*0010*/ SSY 0x38 ?WAIT1 ;\n\
        /*0018*/ LDG.E R2, [R4] &wr0 ?WAIT2 ;\n\
        /*0028*/ @P0 BRK ?WAIT13 ;\n\
        /*0030*/ SYNC &req={0} ?WAIT15 ;\n\
        /*0038*/ BRK ?WAIT15 ;\n\
        /*0048*/ FADD R3, R2, R2 &req={0} ?WAIT6 ;\n\
        /*0050*/ EXIT ?WAIT15 ;\n";
    assert!(hazards(l).is_empty(), "{:#?}", hazards(l));
    let h = hazards(&l.replace("FADD R3, R2, R2 &req={0}", "FADD R3, R2, R2"));
    assert!(h.iter().any(|h| h.addr == 0x48 && h.message.contains("reads R2")), "{h:#?}");
}

/// A call tree 20 levels deep (each function calls the next from two sites): analysed per
/// call site, not per call stack (2^20 stacks took 78 s in a debug build; the analysis'
/// size is tested in `sched::check`), and the hazard in the leaf is still found.
#[test]
fn deep_call_trees_are_checked_per_call_site() {
    let depth = 20;
    let mut l = String::new();
    for i in 0..=depth {
        l += &format!("Function : f{i}\nf{i}:\n");
        if i < depth {
            l += &format!(
                "/*0008*/ CAL `(f{}) ?WAIT13 ;\n/*0010*/ MOV R2, R3 ?WAIT6 ;\n/*0018*/ CAL `(f{}) ?WAIT13 ;\n",
                i + 1,
                i + 1
            );
        } else {
            l += "/*0008*/ MUFU.RCP R4, R5 &wr0 ?WAIT2 ;\n/*0010*/ FADD R6, R4, R4 &req={0} ?WAIT6 ;\n";
        }
        l += if i == 0 { "/*0028*/ EXIT ?WAIT15 ;\n" } else { "/*0028*/ RET ?WAIT15 ;\n" };
    }
    assert!(hazards(&l).is_empty(), "{:#?}", hazards(&l));
    // The leaf's result read without waiting, in the caller after the return.
    let h = hazards(&l.replace("FADD R6, R4, R4 &req={0}", "FADD R6, R5, R5").replace("MOV R2, R3", "MOV R2, R4"));
    assert!(h.iter().any(|h| h.function == format!("f{}", depth - 1) && h.message.contains("reads R4")), "{h:#?}");
}
