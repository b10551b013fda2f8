//! What one SASS instruction, read as text ([`crate::sass::text`]), does to the register
//! file and when, for the hazard checker ([`super::check`]). This table is the checker's
//! own: it is derived from the mnemonics, not from the compiler's op model, so the
//! checker stays independent of the scheduler it checks.
//!
//! Sources for every number:
//! * fixed latencies: 6 cycles from an ALU result to an ALU consumer, 13 for predicates,
//!   6 from `.CC` to `.X` (ptxas findings section 7, verified on ptxas 11.8 control words;
//!   the maxas control-code notes and Mesa NAK `sm50.rs` give the same classes);
//! * late operand fetch of memory instructions: an ALU result may feed the address or data
//!   of `LDG/STG/LD/ST/LDL/STL/ATOM/RED` 2 cycles after issue and of `LDS/STS/LDC` 4 cycles
//!   after (findings section 7: "2 ALU->LDG/STG/LDL/STL address or data; 4
//!   ALU->LDS/STS/LDC"), i.e. those instructions read their registers 4 resp. 2 cycles
//!   after issue;
//! * variable latency (results guarded by write barriers): memory loads, `LDC`, `S2R`,
//!   `MUFU`, conversions, fp64, `SHFL`, `POPC`, `FLO`, `BREV` (findings section 7 table,
//!   NAK `sm50.rs` "variable latency" classes);
//! * `VOTE` is fixed-latency (Mesa NAK `sm50.rs` treats it as a plain ALU op; ptxas 11.8
//!   sets no write barrier on `VOTE.ANY R0, PT, PT` before its ISETP consumer);
//! * `VABSDIFF` and `CSETP` (ptxas's `sad` and 64-bit sign tests, `samples/int_ops`) are
//!   fixed-latency: ptxas 11.8 sets no write barrier on them;
//! * in-order pipelines ([`Queue`]; findings section 7 "a counting scoreboard: in-order
//!   completion", and ptxas 11.8's code as noted on `Queue`); `POPC` results also
//!   complete in order, and `FLO` reads its operand 4 cycles after issue (ptxas 11.8's
//!   code for `samples/int_ops`, as noted on the table rows).

use crate::sass::text::TextInstr;

/// A register unit: `R0..R254` are 0..=254, `P0..P6` are 256..=262, the CC flag is 263.
pub type Unit = u16;

/// First predicate unit.
pub const PRED_BASE: Unit = 256;
/// The condition-code flag.
pub const CC: Unit = 263;
/// Number of units.
pub const UNITS: usize = 264;

/// An in-order pipeline: its instructions fetch their sources in issue order and write
/// their results in issue order (ptxas relies on both: loads without a write barrier
/// covered by a younger load's barrier, `DEPBAR.LE SB5, k`, a load overwriting the data
/// register of an earlier store or the address of an earlier load without a read
/// barrier; seen in ptxas 11.8's code for `block_scan`, `many_params`, `stencil5`,
/// `strided_sum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// Global, local and generic memory: `LDG LD LDL ATOM RED STG ST STL`.
    Global,
    /// Shared memory: `LDS ATOMS STS`.
    Shared,
    /// Conversions: `F2F F2I I2F I2I`.
    Conversion,
    /// Double precision: `DADD DMUL DFMA DMNMX DSETP DSET`.
    Fp64,
    /// Population count `POPC`: ptxas 11.8 reads a POPC result without a write barrier of
    /// its own once a younger POPC's barrier has been waited for (`samples/int_ops`:
    /// `POPC R28, R4` with no barrier, `POPC R14, R5 &wr4`, then `IADD R28, R28, R14
    /// &req={4}`).
    Popc,
    /// The multi-function unit `MUFU`: ptxas 11.8 reads a MUFU result without a write
    /// barrier of its own once a younger MUFU's barrier has been waited for
    /// (`samples/float_math`: `MUFU.COS R19, R19` with no barrier, `MUFU.SIN R18, R22 &wr3`,
    /// then `FADD R19, R18, R19 &req={3}`; `MUFU.EX2 R9, R23` and `MUFU.RCP R12, R12` with no
    /// barrier covered by `MUFU.RSQ R15, R15 &wr4` and `&req={4}`; in the slow-path
    /// subroutine `__cuda_sm20_rcp_rn_f32_slowpath`, `@!P0 MUFU.RCP R10, R9` with no barrier
    /// covered by `@P0 MUFU.RCP R12, R11 &wr0` and `&req={0}`).
    Mufu,
}

/// Fixed latency of a GPR or CC result, cycles.
pub const ALU_LATENCY: u8 = 6;
/// Fixed latency of a predicate result, cycles.
pub const PRED_LATENCY: u8 = 13;

/// The checker's view of one instruction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Effects {
    /// Units read when the instruction issues (plus `read_delay`).
    pub reads: Vec<Unit>,
    /// Units written.
    pub writes: Vec<Unit>,
    /// Variable latency: results must be waited for through a write barrier.
    pub variable: bool,
    /// The in-order pipeline the instruction belongs to, if any ([`Queue`]).
    pub queue: Option<Queue>,
    /// Sources are fetched after issue and may still be being read while later
    /// instructions run (memory, fp64 and conversion instructions): an overwrite must wait
    /// on the instruction's read barrier, or come at least [`LATE_READ_WINDOW`] cycles later.
    pub reads_late: bool,
    /// Cycles after issue at which register sources are read (0, 2 or 4).
    pub read_delay: u8,
    /// Control transfer class.
    pub flow: Flow,
}

/// Control-flow behaviour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Flow {
    /// Falls through.
    #[default]
    Next,
    /// `BRA`: to its target (and the next instruction if guarded).
    Branch,
    /// `EXIT`: ends the thread (falls through if guarded).
    Exit,
    /// `RET`: back after the calls of this function.
    Ret,
    /// `CAL`: into the callee, then the next instruction after its `RET`.
    Call,
    /// `SYNC`: to the reconvergence point of an `SSY`.
    Sync,
    /// `BRK`: to the break target of a `PBK`.
    Brk,
    /// `SSY`/`PBK`: pushes a target, falls through.
    Push,
}

/// Cycles within which a late reader without a read barrier has fetched its sources.
/// ptxas 11.8 relies on such a bound: it rewrites the sources of some stores and loads
/// without a read barrier (`STS [R9], R0` ... `FADD R0, R0, R5` after a `BAR.SYNC`). 14 is
/// the largest window for which ptxas's code for all our samples passes: `samples/nbody`
/// rewrites the address of an `LDS.U.128 R8, [R21+-0x10]` 14 cycles after it
/// (`IADD32I R21, R21, 0x20`); with 20 one other sample fails, with 40 three (measured
/// with `ptx2sass check`). Our scheduler never relies on it: every late reader gets a
/// read barrier.
pub const LATE_READ_WINDOW: u8 = 14;

/// An instruction the table does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown(pub String);

fn reg_unit(tok: &str) -> Option<(bool, Unit)> {
    // Strip negation, absolute value, complement and suffixes such as `.reuse`, `.H1`, `.CC`.
    let t = tok.trim_start_matches(['-', '|', '~', '!']);
    let name = t.split(['.', '|', ' ', ']', '+']).next().unwrap_or("");
    if let Some(n) = name.strip_prefix('R') {
        return n.parse::<u16>().ok().filter(|n| *n < 255).map(|n| (true, n));
    }
    if let Some(n) = name.strip_prefix('P') {
        return n.parse::<u16>().ok().filter(|n| *n < 7).map(|n| (false, PRED_BASE + n));
    }
    None
}

fn is_pred_operand(tok: &str) -> bool {
    let t = tok.trim_start_matches('!');
    t == "PT" || (t.starts_with('P') && t[1..].parse::<u8>().is_ok())
}

/// Width in registers of a type modifier (`64`, `F64`, `S64`, `U64` → 2; `128` → 4).
fn type_width(m: &str) -> Option<u16> {
    match m {
        "64" | "F64" | "S64" | "U64" => Some(2),
        "128" => Some(4),
        "32" | "F32" | "S32" | "U32" | "U8" | "S8" | "U16" | "S16" | "F16" => Some(1),
        _ => None,
    }
}

/// Adds every register named in `tok` (`R3`, `[R2+0x4]`, `c[0x3][R0+0x10]`), the first one
/// `width` registers wide.
fn add_regs(tok: &str, width: u16, out: &mut Vec<Unit>) {
    for piece in tok.split(['[', ']', '+', ' ']) {
        if let Some((gpr, u)) = reg_unit(piece) {
            let w = if gpr { width } else { 1 };
            for i in 0..w {
                if u + i < 255 || !gpr {
                    out.push(u + i);
                }
            }
        }
    }
}

/// The effects of `i`, or [`Unknown`] for an opcode outside the table.
pub fn effects(i: &TextInstr) -> Result<Effects, Unknown> {
    let op = i.opcode.as_str();
    let has = |m: &str| i.mods.iter().any(|x| x == m);
    let size = i.mods.iter().find_map(|m| type_width(m)).unwrap_or(1);
    let mut e = Effects::default();
    if let Some((_, p)) = &i.guard
        && let Some((false, u)) = reg_unit(p)
    {
        e.reads.push(u);
    }
    // (variable, queue, reads_late, read_delay). Conversions read their sources 4 cycles
    // after issue (ptxas 11.8: `SHR.U32 R8, R8, 0x8 ?WAIT2` then `I2F.F32.U32 R8, R8`).
    use Queue::*;
    let class = match op {
        "LDG" | "LD" | "LDL" | "ATOM" => (true, Some(Global), true, 4),
        // CCTL/CCTLL (prefetch) only read their address, like a store.
        "RED" | "STG" | "ST" | "STL" | "CCTL" | "CCTLL" => (false, Some(Global), true, 4),
        "LDS" | "ATOMS" => (true, Some(Shared), true, 2),
        "STS" => (false, Some(Shared), true, 2),
        "LDC" => (true, None, true, 2),
        // B2R.RESULT reads the barrier unit's result (treated like S2R).
        "S2R" | "BREV" | "B2R" => (true, None, false, 0),
        // MUFU reads its operand late like a conversion (ptxas 11.8, `samples/black_scholes`:
        // `MUFU.RCP R10, R12` 2 cycles after the FMUL that writes R12).
        "MUFU" => (true, Some(Mufu), false, 4),
        // SHFL reads its sources 2 cycles after issue, late enough to need read barriers
        // (ptxas 11.8: `IMNMX R0, ... ?WAIT4` then `SHFL.BFLY PT, R2, R0, 0x2, 0x1f`;
        // `SHFL.DOWN PT, R3, R2, 0x1, 0x1f &rd0 &wr1`).
        "SHFL" => (true, None, true, 2),
        // POPC reads its operand 4 cycles after issue, like FLO (ptxas 11.8,
        // `samples/warp_reduce`: `VOTE.ANY R8, PT, PT ?WAIT0`, `POPC R9, R12 ?WAIT2`, then
        // `POPC R2, R8` 2 cycles after the VOTE, whose result takes 6: `VOTE.ANY R12
        // ?WAIT1`, `MOV ?WAIT5`, `ISETP ..., R12`).
        "POPC" => (true, Some(Popc), false, 4),
        // FLO reads its operand late like a conversion (ptxas 11.8, `samples/int_ops`:
        // `ICMP.EQ.U32 R17, R4, R5, R5 ?WAIT2` then `FLO.U32 R17, R17` 2 cycles later).
        "FLO" => (true, None, false, 4),
        "DADD" | "DMUL" | "DFMA" | "DMNMX" | "DSETP" | "DSET" => (true, Some(Fp64), true, 0),
        "F2F" | "F2I" | "I2F" | "I2I" => (true, Some(Conversion), true, 4),
        "MOV" | "MOV32I" | "IADD" | "IADD32I" | "IADD3" | "ISCADD" | "ISCADD32I" | "XMAD" | "IMNMX" | "ISETP"
        | "ISET" | "ICMP" | "SHL" | "SHR" | "SHF" | "LOP" | "LOP32I" | "LOP3" | "BFE" | "BFI" | "SEL" | "LEA"
        | "FADD" | "FADD32I" | "FMUL" | "FMUL32I" | "FFMA" | "FFMA32I" | "FMNMX" | "FSETP" | "FSET" | "FCMP"
        | "PSETP" | "PSET" | "CSETP" | "VABSDIFF" | "P2R" | "R2P" | "CS2R" | "PRMT" | "RRO" | "FCHK" | "NOP"
        | "DEPBAR" | "BAR" | "MEMBAR" | "VOTE" | "BPT" | "BRA" | "EXIT" | "RET" | "CAL" | "SYNC" | "BRK" | "SSY"
        | "PBK" => (false, None, false, 0),
        _ => return Err(Unknown(i.text.clone())),
    };
    e.variable = class.0;
    e.queue = class.1;
    e.reads_late = class.2;
    e.read_delay = class.3;
    e.flow = match op {
        "BRA" => Flow::Branch,
        "EXIT" => Flow::Exit,
        "RET" => Flow::Ret,
        "CAL" => Flow::Call,
        "SYNC" => Flow::Sync,
        "BRK" => Flow::Brk,
        "SSY" | "PBK" => Flow::Push,
        _ => Flow::Next,
    };
    let no_dst = matches!(
        op,
        "STG"
            | "ST"
            | "STL"
            | "STS"
            | "RED"
            | "CCTL"
            | "CCTLL"
            | "NOP"
            | "DEPBAR"
            | "BAR"
            | "MEMBAR"
            | "BPT"
            | "BRA"
            | "EXIT"
            | "RET"
            | "CAL"
            | "SYNC"
            | "BRK"
            | "SSY"
            | "PBK"
    );
    let setp = matches!(op, "ISETP" | "FSETP" | "DSETP" | "PSETP" | "CSETP");
    // VOTE.mode {Rd,} Pd, Pa: every operand but the last is written.
    let ndst = if no_dst {
        0
    } else if op == "VOTE" {
        i.operands.len().saturating_sub(1)
    } else if op == "B2R" {
        // B2R.RESULT Rd{, Pd}: every operand is written.
        i.operands.len()
    } else if op == "FCHK" {
        // `FCHK.DIVIDE Pd, Ra, Rb` writes only its predicate (ptxas 11.8, `black_scholes`:
        // `FFMA R10, ... ?WAIT6`, `FCHK.DIVIDE P0, R10, R12 ?WAIT1`, `FFMA R7, R10, ...`).
        1
    } else if setp || i.operands.first().is_some_and(|o| is_pred_operand(o)) {
        2
    } else {
        1
    };
    let fp64 = matches!(op, "DADD" | "DMUL" | "DFMA" | "DMNMX" | "DSETP" | "DSET");
    let conv = matches!(op, "F2F" | "F2I" | "I2F" | "I2I");
    let conv_types: Vec<u16> = i.mods.iter().filter_map(|m| type_width(m)).collect();
    let mem_data = matches!(op, "LDG" | "LD" | "LDL" | "LDS" | "LDC" | "STG" | "ST" | "STL" | "STS" | "ATOM" | "ATOMS");
    let wide_addr = has("E") && matches!(op, "LDG" | "LD" | "STG" | "ST" | "ATOM" | "RED" | "CCTL");
    for (k, tok) in i.operands.iter().enumerate() {
        let is_dst = k < ndst;
        let width = if tok.contains('[') {
            if wide_addr && !tok.starts_with("c[") { 2 } else { 1 }
        } else if mem_data {
            size
        } else if fp64 {
            if op == "DSET" && is_dst { 1 } else { 2 }
        } else if conv {
            let t = if is_dst { conv_types.first() } else { conv_types.get(1) };
            t.copied().unwrap_or(1)
        } else {
            1
        };
        if is_dst {
            if let Some((gpr, u)) = reg_unit(tok) {
                let w = if gpr { width } else { 1 };
                e.writes.extend((0..w).map(|x| u + x).filter(|u| !gpr || *u < 255));
            }
            if tok.contains(".CC") {
                e.writes.push(CC);
            }
        } else {
            add_regs(tok, width, &mut e.reads);
        }
    }
    // `.X` forms read the carry; CSETP names CC as an operand (`CSETP.SFT.AND P0, PT, CC, PT`).
    if has("X") || i.operands.iter().skip(ndst).any(|o| o == "CC") {
        e.reads.push(CC);
    }
    Ok(e)
}

/// The waits of a `DEPBAR`, each `(b, k)` = wait until at most `k` ops are outstanding
/// on SBb; empty for any other instruction. nvdisasm prints two forms, which may combine:
/// * `DEPBAR.LE SBb, k`: counting (`k` in hex with `0x` as nvdisasm prints it, or
///   decimal);
/// * `DEPBAR {b,...}`: wait until every listed barrier is clear (`k` = 0). ptxas 11.8
///   emits it for `samples/nvcc_scan.ptx`: `LDS.U.32 R8, [R5] &wr0`, then `DEPBAR {0}`
///   before reading R8 (and, by in-order completion of shared loads, the result of an
///   older `@P1 LDS.U.32 R3` that set no barrier).
pub fn depbar(i: &TextInstr) -> Vec<(u8, u8)> {
    if i.opcode != "DEPBAR" {
        return vec![];
    }
    let barrier = |b: &str| b.trim().parse::<u8>().ok().filter(|b| *b < 6);
    let mut waits = vec![];
    if let Some(sb) = i.operands.first().and_then(|o| o.strip_prefix("SB")).and_then(barrier) {
        let k = i
            .operands
            .get(1)
            .and_then(|o| o.strip_prefix("0x").map(|h| u8::from_str_radix(h, 16).ok()).unwrap_or(o.parse().ok()))
            .unwrap_or(0);
        waits.push((sb, k));
    }
    for o in &i.operands {
        if let Some(list) = o.strip_prefix('{').and_then(|o| o.strip_suffix('}')) {
            waits.extend(list.split(',').filter_map(barrier).map(|b| (b, 0)));
        }
    }
    waits
}
