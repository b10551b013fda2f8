//! The explorer's live-register strip (`explore::live`): counts of occupied registers at
//! each SASS instruction, checked by hand on small kernels and against
//! `nvdisasm --print-life-ranges` on ptxas's code (fixtures in `tests/data/plr/`).

use ptx2sass::explore::live::{Live, live_counts};
use ptx2sass::sass::text;

fn counts(listing: &str) -> Vec<(u16, u8)> {
    let funcs = text::parse(listing).expect("reads");
    let c = live_counts(&funcs).expect("analysed");
    c[0].iter().map(|l: &Live| (l.gprs, l.preds)).collect()
}

/// A loop: R0 and R2 live around the back edge, a predicate per branch, `R1` (set, never
/// read) counted to `EXIT`, the pointer pair R4:R5 of `STG.E` (64-bit address), nothing at
/// the unreachable self-branch. Counted by hand, instruction by instruction (live before,
/// plus written).
#[test]
fn loop_counts_by_hand() {
    let listing = "\t\tFunction : k
        /*0008*/                   MOV R1, c[0x0][0x20] ?WAIT6 ;
        /*0010*/                   S2R R0, SR_TID.X &wr0 ?WAIT1 ;
        /*0018*/                   MOV R2, RZ ?WAIT6 ;
        /*0028*/                   ISETP.GE.AND P0, PT, R0, 0x10, PT &req={0} ?WAIT13 ;
        /*0030*/               @P0 BRA 0x68 ?WAIT5 ;
        /*0038*/                   IADD R2, R2, R0 ?WAIT6 ;
        /*0048*/                   IADD32I R0, R0, 0x1 ?WAIT6 ;
        /*0050*/                   ISETP.LT.AND P1, PT, R0, 0x10, PT ?WAIT13 ;
        /*0058*/               @P1 BRA 0x38 ?WAIT5 ;
        /*0068*/                   MOV R4, c[0x0][0x140] ?WAIT6 ;
        /*0070*/                   MOV R5, c[0x0][0x144] ?WAIT6 ;
        /*0078*/                   STG.E [R4], R2 ?WAIT1 ;
        /*0088*/                   EXIT ?WAIT5 ;
        /*0090*/                   BRA 0x90 ?WAIT5 ;
";
    let want = [
        (1, 0), // MOV R1: R1 written
        (2, 0), // S2R R0: + R0 written
        (3, 0), // MOV R2: R0 live, R2 written
        (3, 1), // ISETP: R0, R2 live, P0 written
        (3, 1), // @P0 BRA: reads P0
        (3, 0), // loop head: R0, R2 (around the back edge)
        (3, 0),
        (3, 1), // P1 written
        (3, 1), // @P1 BRA reads P1; R0 still live for the next iteration
        (3, 0), // R0 dead after the loop: R2 live, R4 written
        (4, 0), // R2, R4 live, R5 written
        (4, 0), // STG.E reads R4:R5 and R2
        (1, 0), // EXIT: only R1
        (0, 0), // the self-branch is never reached
    ];
    assert_eq!(counts(listing), want);
}

/// `SYNC` continues at its `SSY`'s target, so R0 (read there) is live across it; the dead
/// write `MOV R3, R0` counts only at itself. A listing in which `SYNC` led nowhere would
/// count 0 at the unguarded `SYNC`.
#[test]
fn sync_goes_to_its_ssy_target() {
    let listing = "\t\tFunction : k
        /*0008*/                   S2R R0, SR_TID.X &wr0 ?WAIT1 ;
        /*0010*/                   ISETP.GE.AND P0, PT, R0, 0x4, PT &req={0} ?WAIT13 ;
        /*0018*/                   SSY 0x50 ?WAIT6 ;
        /*0028*/               @P0 SYNC ?WAIT5 ;
        /*0030*/                   IADD32I R0, R0, 0x1 ?WAIT6 ;
        /*0038*/                   MOV R3, R0 ?WAIT6 ;
        /*0048*/                   SYNC ?WAIT5 ;
        /*0050*/                   MOV R2, c[0x0][0x140] ?WAIT6 ;
        /*0058*/                   MOV R3, c[0x0][0x144] ?WAIT6 ;
        /*0068*/                   STG.E [R2], R0 ?WAIT1 ;
        /*0070*/                   EXIT ?WAIT5 ;
";
    let want = [(1, 0), (1, 1), (1, 1), (1, 1), (1, 0), (2, 0), (1, 0), (2, 0), (3, 0), (3, 0), (0, 0)];
    assert_eq!(counts(listing), want);
}

/// A call reads what its callee reads before writing it (the argument R4, `docs/abi.md`),
/// and callee-saved registers (R16:R17) stay live across it. Without the callee's entry
/// set the `CAL` would count 3.
#[test]
fn calls_read_the_callees_arguments() {
    let listing = "\t\tFunction : k
        /*0008*/                   MOV R1, c[0x0][0x20] ?WAIT6 ;
        /*0010*/                   S2R R4, SR_TID.X &wr0 ?WAIT1 ;
        /*0018*/                   MOV R16, c[0x0][0x140] ?WAIT6 ;
        /*0028*/                   MOV R17, c[0x0][0x144] ?WAIT6 ;
        /*0030*/                   CAL `(f) &req={0} ?WAIT15 ;
        /*0038*/                   STG.E [R16], R4 ?WAIT1 ;
        /*0048*/                   EXIT ?WAIT5 ;
\t\tFunction : f
        /*0008*/                   IADD32I R4, R4, 0x1 ?WAIT6 ;
        /*0010*/                   RET ?WAIT5 ;
";
    let funcs = text::parse(listing).expect("reads");
    let c = live_counts(&funcs).expect("analysed");
    let gprs = |g: usize| c[g].iter().map(|l| l.gprs).collect::<Vec<_>>();
    assert_eq!(gprs(0), [1, 2, 3, 4, 4, 4, 1]);
    assert_eq!(gprs(1), [1, 0]);
}

/// On the code of every sample: each instruction counts at least the distinct registers it
/// reads and writes, and no count exceeds the function's register count (every occupied
/// register is one of `R0..R(regs-1)`); some instruction of each function that uses more
/// than the stack pointer counts more than one register.
#[test]
fn sample_counts_are_bounded_by_operands_and_register_count() {
    use ptx2sass::driver::{self, Emit, Options};
    use ptx2sass::sched::effects::{PRED_BASE, effects};
    let dir = format!("{}/samples", env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "ptx") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        let out = driver::compile(&src, &Options { emit: Emit::Sass, ..Options::default() }).expect("compiles");
        let program = out.program.expect("a program");
        let funcs = text::parse(&program.to_string()).expect("reads");
        let live = live_counts(&funcs).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for ((f, tf), counts) in program.functions.iter().zip(&funcs).zip(&live) {
            assert_eq!(counts.len(), f.code.len(), "{}: {}", path.display(), f.name);
            for (i, l) in tf.instrs.iter().zip(counts) {
                let fx = effects(i).unwrap();
                let mut gprs: Vec<u16> =
                    fx.reads.iter().chain(&fx.writes).copied().filter(|&u| u < PRED_BASE).collect();
                gprs.sort_unstable();
                gprs.dedup();
                let at = format!("{}: {}: {}", path.display(), f.name, i.text);
                assert!(usize::from(l.gprs) >= gprs.len(), "{at}: {l:?} < operands {gprs:?}");
                assert!(u32::from(l.gprs) <= f.regs, "{at}: {l:?} > {} registers", f.regs);
                checked += 1;
            }
            if f.regs > 2 {
                assert!(counts.iter().any(|l| l.gprs > 1), "{}: {}", path.display(), f.name);
            }
        }
    }
    assert!(checked > 5000, "{checked}");
}
