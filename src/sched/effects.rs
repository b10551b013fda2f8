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
//!   complete in order;
//! * when each opcode reads its sources: [`TABLE`], one row per opcode class. Every
//!   instruction that reads a source after issue (memory, `LDC`, `SHFL`, `MUFU`, `POPC`,
//!   `FLO`, fp64, conversions) holds it until a read barrier or its write barrier is
//!   waited for, or [`LATE_READ_WINDOW`] cycles: a late read without that protection is
//!   not expressible in the table.

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
    /// Texture fetches and queries `TEXS TLDS TLD4S TEX TLD4 TXQ` complete in issue order:
    /// ptxas 11.8 issues `TEX.B.T R4 .. &wr5`, `TEX.B.T R6 .. &wr5`, `TLD4.G.B.P R7 .. &wr5`
    /// and waits for the first two with `DEPBAR.LE SB5, 0x1` before reading R4..R6
    /// (`tests/data/textures/probe_masks.ptx`, docs/textures.md §1.3). Surface loads are in
    /// the same queue: `TXQ.B R9, R6, ..` sets no barrier, `SULD.D.BA.1D.IGN R8, [R11], R6
    /// &wr5` follows, and `STG.E.64 [R4], R8` reads R9 after only `&req={5}`
    /// (`probe_refs.ptx`, kernel `reg_surf`).
    Texture,
    /// Shared memory: `LDS ATOMS STS`.
    Shared,
    /// The XU queue: conversions `F2F F2I I2F I2I`, `MUFU`, population count `POPC` and
    /// find-leading-one `FLO` complete in issue order. ptxas 11.8 relies on it:
    /// * `samples/int_ops` reads `POPC R28, R4` (no barrier) after waiting on a younger
    ///   `POPC R14, R5 &wr4`;
    /// * `samples/device_globals` has `FLO.U32 R12, R11 &wr0`, then `POPC R11, R11` with no
    ///   barrier overwriting FLO's late-read source 2 cycles later (safe only if POPC writes
    ///   after FLO has read), and `@P0 RED.E.ADD [R4], R11` reads that POPC result with no
    ///   wait of its own, after `STG .. &req={0}` waited for the younger
    ///   `F2I.S32.F32.TRUNC R8, R8 &wr0`;
    /// * `samples/float_math`: `MUFU.COS R19, R19` with no barrier, `MUFU.SIN R18, R22 &wr3`,
    ///   then `FADD R19, R18, R19 &req={3}`; `MUFU.EX2 R9, R23` and `MUFU.RCP R12, R12` with
    ///   no barrier covered by `MUFU.RSQ R15, R15 &wr4` and `&req={4}`; in the slow-path
    ///   subroutine `__cuda_sm20_rcp_rn_f32_slowpath`, `@!P0 MUFU.RCP R10, R9` with no
    ///   barrier covered by `@P0 MUFU.RCP R12, R11 &wr0` and `&req={0}`;
    /// * `__cuda_sm20_div_u16` (PTX `div.u16`) reads the result of an `I2F.F32.U16 R0, R0`
    ///   that sets no barrier after waiting on a younger `MUFU.RCP R5, R5 &wr0` (found by
    ///   the simulator on ptxas's code, `exec::sim::timing::Queue::Xu`).
    Conversion,
    /// Double precision: `DADD DMUL DFMA DMNMX DSETP DSET`.
    Fp64,
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
    /// `JCAL`, `JMX`: into a callee outside the listing (external, or the target of an
    /// indirect call), then the next instruction (`PRET` pushed it).
    CallOut,
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

/// When an instruction reads its register sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// At issue (fixed-latency instructions): the next instruction may overwrite them.
    AtIssue,
    /// After issue, no earlier than `earliest` cycles after it (so a fixed-latency producer
    /// may issue that much less before it) and possibly much later: a source must not be
    /// overwritten before the instruction's read barrier, or its write barrier, has been
    /// waited for, or [`LATE_READ_WINDOW`] cycles after issue. There is no third kind:
    /// an instruction that reads after issue is exposed to overwrites in that window.
    Late {
        /// Cycles after issue of the first register read (0, 2 or 4).
        earliest: u8,
    },
}

/// One row of [`TABLE`]: how an opcode's results and sources are timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Results arrive after a variable time, guarded by a write barrier.
    pub variable: bool,
    /// The in-order pipeline the opcode belongs to ([`Queue`]).
    pub queue: Option<Queue>,
    /// When its sources are read.
    pub reads: Reads,
}

const fn late(variable: bool, queue: Option<Queue>, earliest: u8) -> Row {
    Row { variable, queue, reads: Reads::Late { earliest } }
}

const FIXED: Row = Row { variable: false, queue: None, reads: Reads::AtIssue };

/// The checker's timing of every opcode it knows, the one place these facts live (the
/// checker and the estimate read them through [`effects`]). Sources:
/// * `LDG LD LDL ATOM RED STG ST STL CCTL CCTLL` read their registers 4 cycles after issue,
///   `LDS ATOMS STS LDC` 2 (findings section 7: "2 ALU->LDG/STG/LDL/STL address or data; 4
///   ALU->LDS/STS/LDC"); stores and prefetches (`CCTL`) write nothing;
/// * `SHFL` reads 2 cycles after issue and needs read barriers (ptxas 11.8: `IMNMX R0, ...
///   ?WAIT4` then `SHFL.BFLY PT, R2, R0, 0x2, 0x1f`; `SHFL.DOWN PT, R3, R2, 0x1, 0x1f &rd0
///   &wr1`);
/// * conversions read 4 cycles after issue (ptxas 11.8: `SHR.U32 R8, R8, 0x8 ?WAIT2` then
///   `I2F.F32.U32 R8, R8`); fp64 is read late from issue on (ptxas 11.8,
///   `samples/float_math`: `DFMA R10, R12, R14, R10 &rd2 &wr3`, then `MUFU.RSQ R13, R21
///   &req={2}` waits on the read barrier before overwriting R13, half of the source R12);
/// * `MUFU`, `POPC` and `FLO` read 4 cycles after issue (ptxas 11.8: `samples/black_scholes`
///   `MUFU.RCP R10, R12` 2 cycles after the FMUL writing R12; `samples/int_ops` `FLO.U32 R17,
///   R17` 2 cycles after the ICMP writing R17; `samples/warp_reduce` `POPC R2, R8` 2 cycles
///   after the VOTE writing R8) and therefore late: ptxas 11.8 never overwrites one of their
///   sources without a read barrier before their result is waited for (57 `MUFU`, 5 `POPC`, 3
///   `FLO` in its code for the 31 samples; 6 `MUFU`s carry `&rdN`, e.g. `samples/float_math`
///   `MUFU.RSQ R13, R21 &rd3 &wr2` then, 7 cycles later, `FFMA R21, RZ, R5, R11 &req={3}`);
/// * `BREV` (never emitted by ptxas 11.8 for our samples) is variable-latency (Mesa NAK
///   `sm50.rs`) and counted late from issue on, the conservative reading;
/// * `S2R`, `B2R` read no registers; `VOTE`, `VABSDIFF`, `CSETP` and the ALU are fixed-latency
///   (module documentation).
pub const TABLE: &[(&[&str], Row)] = {
    use Queue::*;
    &[
        (&["LDG", "LD", "LDL", "ATOM"], late(true, Some(Global), 4)),
        (&["RED", "STG", "ST", "STL", "CCTL", "CCTLL"], late(false, Some(Global), 4)),
        (&["LDS", "ATOMS"], late(true, Some(Shared), 2)),
        (&["STS"], late(false, Some(Shared), 2)),
        (&["LDC"], late(true, None, 2)),
        // Texture and surface instructions read their registers 4 cycles after issue
        // (ptxas 11.8: `MOV R5, c[0x0][0x154] ?WAIT2` then `TEXS R6, R4, R4, R5`,
        // `TLD4S.R R6, R4, R4, R5`, `SULD.D.BA.2D.TRAP R0, [R4]`; `MOV R3, .. ?WAIT2` then
        // `SUST.D.BA.2D.TRAP [R2], R0`); results come through a write barrier (`&wr5`,
        // `&req={5}`). Operand widths: `sched::tex`.
        (&["TEXS", "TLDS", "TLD4S", "TEX", "TLD", "TLD4", "TXD", "TXQ", "SULD"], late(true, Some(Texture), 4)),
        (&["SUST", "SURED"], late(false, None, 4)),
        (&["SHFL"], late(true, None, 2)),
        (&["MUFU"], late(true, Some(Conversion), 4)),
        (&["POPC", "FLO"], late(true, Some(Conversion), 4)),
        (&["BREV"], late(true, None, 0)),
        (&["DADD", "DMUL", "DFMA", "DMNMX", "DSETP", "DSET"], late(true, Some(Fp64), 0)),
        (&["F2F", "F2I", "I2F", "I2I"], late(true, Some(Conversion), 4)),
        // B2R.RESULT reads the barrier unit's result (treated like S2R).
        (&["S2R", "B2R"], Row { variable: true, queue: None, reads: Reads::AtIssue }),
        (
            &[
                "MOV",
                "MOV32I",
                "IADD",
                "IADD32I",
                "IADD3",
                "ISCADD",
                "ISCADD32I",
                "XMAD",
                "IMNMX",
                "ISETP",
                "ISET",
                "ICMP",
                "SHL",
                "SHR",
                "SHF",
                "LOP",
                "LOP32I",
                "LOP3",
                "BFE",
                "BFI",
                "SEL",
                "LEA",
                "FADD",
                "FADD32I",
                "FMUL",
                "FMUL32I",
                "FFMA",
                "FFMA32I",
                "FMNMX",
                "FSETP",
                "FSET",
                "FCMP",
                "PSETP",
                "PSET",
                "CSETP",
                "VABSDIFF",
                "P2R",
                "R2P",
                "CS2R",
                "PRMT",
                "RRO",
                "FCHK",
                "NOP",
                "DEPBAR",
                "BAR",
                "MEMBAR",
                "VOTE",
                "BPT",
                "BRA",
                "EXIT",
                "RET",
                "CAL",
                "JCAL",
                "PRET",
                "JMX",
                "SYNC",
                "BRK",
                "SSY",
                "PBK",
            ],
            FIXED,
        ),
    ]
};

/// The [`TABLE`] row of an opcode (mnemonic without modifiers).
pub fn row(opcode: &str) -> Option<Row> {
    TABLE.iter().find(|(ops, _)| ops.contains(&opcode)).map(|(_, r)| *r)
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
    let Some(row) = row(op) else {
        return Err(Unknown(i.text.clone()));
    };
    e.variable = row.variable;
    e.queue = row.queue;
    (e.reads_late, e.read_delay) = match row.reads {
        Reads::AtIssue => (false, 0),
        Reads::Late { earliest } => (true, earliest),
    };
    e.flow = match op {
        "BRA" => Flow::Branch,
        "EXIT" => Flow::Exit,
        "RET" => Flow::Ret,
        "CAL" => Flow::Call,
        "JCAL" | "JMX" => Flow::CallOut,
        "SYNC" => Flow::Sync,
        "BRK" => Flow::Brk,
        "SSY" | "PBK" => Flow::Push,
        _ => Flow::Next,
    };
    if let Some(t) = super::tex::regs(i) {
        for (tok, w) in t.writes {
            if let Some((true, u)) = reg_unit(tok) {
                e.writes.extend((0..w).map(|x| u + x).filter(|u| *u < 255));
            }
        }
        for (tok, w) in t.reads {
            add_regs(tok, w, &mut e.reads);
        }
        return Ok(e);
    }
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
            | "JCAL"
            | "PRET"
            | "JMX"
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
