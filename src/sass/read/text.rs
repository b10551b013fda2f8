//! Reads SASS listings back as text: ptx2sass's own output and nvdisasm output with
//! decoded control fields (`../shared/tools/sass-ctrl.py`), so that the hazard checker
//! ([`crate::sched::check`]) can judge any program, ptxas's included.
//!
//! Accepted line shapes (anything else is ignored):
//! * function starts: `Function : NAME` (ptx2sass, cuobjdump) or `.text.NAME:` (nvdisasm);
//! * labels: `NAME:` alone on a line (nvdisasm `.L_x_1:`, `$f$g:`);
//! * instructions: `/*ADDR*/`, optionally `[CTRLHEX]` and `{`, then
//!   `{@{!}Pg} OPCODE{.MOD} operand, ... ;` (or `}` closing a dual-issue pair), with the
//!   control fields `&req={b,..} &rdN &wrN ?WAITn ?YIELD ?reuse=..` anywhere on the line
//!   (ptx2sass prints them before the `;`, sass-ctrl.py after it);
//! * raw `nvdisasm -hex` output: a line holding only `/* 0x<16 hex digits> */` is the
//!   control word of the next three instructions (Maxwell puts one before every three);
//!   each instruction without `?WAITn` takes its 21-bit field from it (bits `21*k ..` for
//!   the `k`-th instruction of the group: stall 0-3, yield 4 (0 = yield hint), write
//!   barrier 5-7, read barrier 8-10 (7 = none), wait mask 11-16, reuse 17-20; the maxas
//!   layout that `../shared/tools/sass-ctrl.py` decodes, findings section 7);
//! * sections: after a `.section` line naming anything but `.text.*` (nvdisasm's data
//!   sections `.nv.info.*`, `.nv.constant2.*`, ...) lines are not code; a `/*ADDR*/`
//!   line whose text is a directive (`.byte`, `.word`, `.zero`, ...) is never code.
//!
//! An instruction without control fields (no `?WAITn` and no control word) is an error:
//! the checker needs the stall counts.

use crate::sass::program::Ctrl;
use std::collections::HashMap;

/// A branch, `SSY`, `PBK` or `CAL` target as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A byte address in the same function (`BRA 0x568`).
    Addr(u32),
    /// A label (`` BRA `(.L_x_1) ``, `` CAL `($f) ``).
    Label(String),
}

/// One instruction of a listing.
#[derive(Clone, Debug, PartialEq)]
pub struct TextInstr {
    /// 1-based line number in the listing.
    pub line: usize,
    /// Byte address (`/*ADDR*/`).
    pub addr: u32,
    /// Guard predicate: (negated, register text such as `P0`).
    pub guard: Option<(bool, String)>,
    /// Opcode without modifiers (`LDG`).
    pub opcode: String,
    /// Modifiers in order (`["E", "64"]` for `LDG.E.64`).
    pub mods: Vec<String>,
    /// Operands as written, split at top-level commas and trimmed.
    pub operands: Vec<String>,
    /// Control fields.
    pub ctrl: Ctrl,
    /// Branch-like target: the operand of `BRA`/`SSY`/`PBK`/`CAL`, or the reconvergence
    /// target nvdisasm notes on `SYNC`/`BRK` (`(*"BRANCH_TARGETS .L_x_0"*)`).
    pub target: Option<Target>,
    /// The instruction text as written (for messages).
    pub text: String,
}

/// One function of a listing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TextFunction {
    /// Name.
    pub name: String,
    /// Instructions in address order.
    pub instrs: Vec<TextInstr>,
    /// Label name → index into `instrs` of the instruction it precedes.
    pub labels: HashMap<String, usize>,
}

/// A listing that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Splits `s` at commas outside brackets.
fn split_operands(s: &str) -> Vec<String> {
    let mut out = vec![];
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in s.chars() {
        match ch {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Removes the control-field tokens from `line` and returns them decoded.
fn take_ctrl(line: &str, lineno: usize) -> Result<(String, Option<Ctrl>), ParseError> {
    let err = |m: String| ParseError { line: lineno, message: m };
    let mut ctrl = Ctrl::default();
    let mut seen_wait = false;
    let mut rest = String::new();
    for tok in line.split_whitespace() {
        if let Some(list) = tok.strip_prefix("&req={").and_then(|t| t.strip_suffix('}')) {
            for b in list.split(',').filter(|b| !b.is_empty()) {
                let b: u8 = b.parse().ok().filter(|b| *b < 6).ok_or_else(|| err(format!("bad barrier in `{tok}`")))?;
                ctrl.wait |= 1 << b;
            }
        } else if let Some(b) = tok.strip_prefix("&rd") {
            ctrl.rd = Some(b.parse().ok().filter(|b| *b < 6).ok_or_else(|| err(format!("bad read barrier `{tok}`")))?);
        } else if let Some(b) = tok.strip_prefix("&wr") {
            ctrl.wr = Some(b.parse().ok().filter(|b| *b < 6).ok_or_else(|| err(format!("bad write barrier `{tok}`")))?);
        } else if let Some(n) = tok.strip_prefix("?WAIT") {
            ctrl.stall = n.parse().ok().filter(|n| *n < 16).ok_or_else(|| err(format!("bad stall count `{tok}`")))?;
            seen_wait = true;
        } else if tok == "?YIELD" {
            ctrl.yield_hint = true;
        } else if let Some(slots) = tok.strip_prefix("?reuse=") {
            // Operand reuse flags as `sass-ctrl.py` and `disasm` print them (A..D = bits 0..3).
            for c in slots.chars() {
                let b = "ABCD".find(c).ok_or_else(|| err(format!("bad reuse flags `{tok}`")))?;
                ctrl.reuse |= 1 << b;
            }
        } else {
            rest.push_str(tok);
            rest.push(' ');
        }
    }
    Ok((rest, seen_wait.then_some(ctrl)))
}

/// The value of a raw `nvdisasm -hex` control-word line (`/* 0x001cfc00e22007f6 */`
/// alone on the line).
fn control_word(line: &str) -> Option<u64> {
    let hex = line.strip_prefix("/*")?.strip_suffix("*/")?.trim().strip_prefix("0x")?;
    (hex.len() == 16).then(|| u64::from_str_radix(hex, 16).ok()).flatten()
}

/// The control fields of the instruction at byte address `addr` from its group's
/// control word (module docs).
fn decode_control(word: u64, addr: u32) -> Option<Ctrl> {
    let slot = (addr / 8 % 4).checked_sub(1)?;
    let c = (word >> (21 * slot)) & 0x1f_ffff;
    let barrier = |v: u64| (v != 7).then_some(v as u8);
    Some(Ctrl {
        stall: (c & 0xf) as u8,
        yield_hint: c >> 4 & 1 == 0,
        wr: barrier(c >> 5 & 7),
        rd: barrier(c >> 8 & 7),
        wait: (c >> 11 & 0x3f) as u8,
        reuse: (c >> 17 & 0xf) as u8,
    })
}

fn parse_target(op: &str) -> Option<Target> {
    if let Some(l) = op.strip_prefix("`(").and_then(|t| t.strip_suffix(')')) {
        return Some(Target::Label(l.to_string()));
    }
    op.strip_prefix("0x").and_then(|h| u32::from_str_radix(h, 16).ok()).map(Target::Addr)
}

/// Parses a listing into functions (see the module docs for the accepted shapes).
/// Errors: an instruction line without a stall count, or malformed control fields.
pub fn parse(listing: &str) -> Result<Vec<TextFunction>, ParseError> {
    let mut funcs: Vec<TextFunction> = vec![];
    let mut pending_labels: Vec<String> = vec![];
    // In a code section (listings without `.section` lines are code throughout).
    let mut in_code = true;
    // The last raw control word; whether the last instruction's encoding is still to come
    // on a line of its own (nvdisasm wraps it after long lines, as sass-ctrl.py expects).
    let mut word: Option<u64> = None;
    let mut encoding_due = false;
    for (k, raw) in listing.lines().enumerate() {
        let lineno = k + 1;
        let line = raw.trim();
        // `.section NAME` (not `.sectioninfo` or `.sectionflags`).
        if let Some(sec) = line.strip_prefix(".section").filter(|r| r.starts_with(char::is_whitespace)) {
            in_code = sec.trim_start().starts_with(".text.");
            pending_labels.clear();
            continue;
        }
        if let Some(w) = control_word(line) {
            if !std::mem::take(&mut encoding_due) {
                word = Some(w);
            }
            continue;
        }
        if !in_code {
            continue;
        }
        if let Some(name) = line.strip_prefix("Function : ") {
            funcs.push(TextFunction { name: name.trim().to_string(), ..Default::default() });
            // The function's name labels its first instruction (a `CAL` target).
            pending_labels.push(name.trim().to_string());
            continue;
        }
        if let Some(name) = line.strip_prefix(".text.").and_then(|n| n.strip_suffix(':')) {
            funcs.push(TextFunction { name: name.to_string(), ..Default::default() });
            continue;
        }
        if let Some(l) = line.strip_suffix(':')
            && !l.is_empty()
            && !l.contains(char::is_whitespace)
            && !l.starts_with("//")
        {
            pending_labels.push(l.to_string());
            continue;
        }
        let Some(at) = line.find("/*") else { continue };
        let Some(end) = line[at + 2..].find("*/") else { continue };
        let Ok(addr) = u32::from_str_radix(&line[at + 2..at + 2 + end], 16) else { continue };
        let mut body = line[at + 2 + end + 2..].trim_start();
        encoding_due = word.is_some() && !body.contains("/* 0x");
        if body.starts_with('[')
            && let Some(e) = body.find(']')
        {
            body = body[e + 1..].trim_start();
        }
        body = body.trim_start_matches('{').trim_start();
        if body.starts_with('.') {
            // A data directive (`.byte 0x04, 0x2f`, `.word index@(f)`) at an address.
            continue;
        }
        let (body, ctrl) = take_ctrl(body, lineno)?;
        let ctrl = ctrl.or_else(|| word.and_then(|w| decode_control(w, addr)));
        let mut text = body.split(';').next().unwrap_or("").trim().to_string();
        // A `}` closing a dual-issue pair is not part of the instruction; braces the
        // instruction opens itself are (`DEPBAR {0}`, ptxas 11.8 for samples/nvcc_scan).
        // The unmatched ones are cut from the end in one pass (linear in the line).
        let excess = text.matches('}').count().saturating_sub(text.matches('{').count());
        let mut end = text.len();
        for _ in 0..excess {
            match text[..end].rfind('}') {
                Some(k) => end = text[..k].trim_end().len(),
                None => break,
            }
        }
        text.truncate(end);
        if text.is_empty() {
            continue;
        }
        let ctrl = ctrl.ok_or_else(|| ParseError {
            line: lineno,
            message: format!(
                "`{text}` has no control fields (`?WAITn`, or a control word as `nvdisasm -hex` prints); \
                 use sass-ctrl.py or `nvdisasm -hex` output"
            ),
        })?;
        let Some(func) = funcs.last_mut() else {
            return Err(ParseError { line: lineno, message: "instruction outside any function".into() });
        };
        let mut rest = text.as_str();
        let mut guard = None;
        if let Some(g) = rest.strip_prefix('@') {
            let (p, r) = g.split_once(' ').unwrap_or((g, ""));
            guard = Some(match p.strip_prefix('!') {
                Some(q) => (true, q.to_string()),
                None => (false, p.to_string()),
            });
            rest = r.trim_start();
        }
        let (mnemonic, ops) = rest.split_once(' ').unwrap_or((rest, ""));
        let mut parts = mnemonic.split('.');
        let opcode = parts.next().unwrap_or("").to_string();
        let mods = parts.map(str::to_string).collect();
        let operands = split_operands(ops);
        let target = if matches!(opcode.as_str(), "BRA" | "SSY" | "PBK" | "CAL" | "JCAL" | "PCNT" | "PRET") {
            operands.iter().find_map(|o| parse_target(o))
        } else if let Some(t) = text.split("BRANCH_TARGETS ").nth(1) {
            // nvdisasm names the reconvergence target of SYNC/BRK in a comment:
            // `SYNC (*"BRANCH_TARGETS .L_x_0"*)`.
            t.split(['"', ',', ' ']).next().filter(|l| !l.is_empty()).map(|l| Target::Label(l.to_string()))
        } else {
            None
        };
        for l in pending_labels.drain(..) {
            func.labels.insert(l, func.instrs.len());
        }
        func.instrs.push(TextInstr { line: lineno, addr, guard, opcode, mods, operands, ctrl, target, text });
    }
    Ok(funcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Raw `nvdisasm -hex` output: control words on lines of their own, an encoding
    /// wrapped onto the next line after a long instruction, data sections skipped.
    #[test]
    fn raw_nvdisasm_control_words() {
        let listing = "\t.section\t.nv.info.k,\"\",@\"SHT_CUDA_INFO\"\n\
            \x20       /*0000*/ \t.byte\t0x04, 0x2f\n\
            \t.section\t.text.k,\"ax\",@progbits\n\
            \t.sectioninfo\t@\"SHI_REGISTERS=7\"\n\
            .text.k:\n\
            \x20                                 /* 0x001cfc00e22007f6 */\n\
            \x20       /*0008*/                   MOV R1, c[0x0][0x20] ;       /* 0x4c98078000870001 */\n\
            \x20       /*0010*/                   S2R R0, SR_CTAID.X ;         /* 0xf0c8000002570000 */\n\
            \x20       /*0018*/         {         S2R R2, SR_TID.X ;  \n\
            \x20                                 /* 0xf0c8000002170002 */\n\
            \x20                                 /* 0x001ffc00fe2007f1 */\n\
            \x20       /*0028*/                   EXIT }                      /* 0xe30000000007000f */\n\
            \t.section\t.nv.constant0.k,\"a\",@progbits\n\
            \x20       /*0000*/ \t.zero\t\t372\n";
        let f = parse(listing).unwrap();
        assert_eq!(f.len(), 1);
        let i = &f[0].instrs;
        assert_eq!(i.len(), 4);
        // sass-ctrl.py on the same cubin: `?WAIT6`, `&wr0 ?WAIT1`, `&wr1 ?WAIT15`.
        assert_eq!((i[0].ctrl.stall, i[0].ctrl.wr), (6, None));
        assert_eq!((i[1].ctrl.stall, i[1].ctrl.wr), (1, Some(0)));
        assert_eq!((i[2].ctrl.stall, i[2].ctrl.wr), (15, Some(1)));
        // The wrapped encoding of the third instruction is not taken for a control word.
        assert_eq!((i[3].opcode.as_str(), i[3].ctrl.stall), ("EXIT", 1));
    }
}
