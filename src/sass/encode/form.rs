//! One row of the encoding table: an instruction form (fixed opcode bits, then its
//! modifiers and operands with their bit fields), written in a small template language
//! and used in both directions: text → word ([`Form::encode`]) and word → text
//! ([`Form::decode`]). The rows themselves are in [`super::table`].
//!
//! Template: `MNEMONIC MODS... : OPERAND, OPERAND, ...`.
//!
//! Modifiers, in the order nvdisasm prints them:
//! * `.NAME` always printed (`.LUT`, `.HI`);
//! * `[.NAME]F` printed when field `F` (one bit) is 1, `[.NAME]!F` when it is 0;
//! * `{TABLE}F` one of a named table's spellings (`{ICMP}49:3`);
//! * `=F=V` a field fixed to `V` that is not printed (`=39:4=15`, MOV's lane mask);
//! * `^F=V` a value field `F` must not hold (IADD's two negations, which mean `.PO`);
//! * `noguard`: the form has no guard predicate (bits 16..19 are then fixed to 0).
//!
//! Fields are `lo:len` pieces joined by `+`, least significant first (`20:19+56:1`); a
//! bare `lo` is one bit.
//!
//! Operands: prefixes `?` (omitted when the field holds its default: RZ, PT, 0), `-F`
//! (negate), `|F` (absolute value), `~F` (invert), `!F` (predicate not); suffixes `.H1@F`,
//! `.CC@F`; and one core:
//! `R@F` register (255 = RZ), `R@F+k` the register `k` above the field's (CAS data),
//! `P@F` predicate (7 = PT), `C`/`CS` constant bank `c[bank 34:5][offset 20:14 × 4]`
//! (`CS` printed `c[..] [..]` as nvdisasm does for XMAD and the conversions), `I@F`/`U@F`
//! signed/unsigned integer, `F@F`/`D@F` the high bits of an f32/f64 immediate, `T` a branch
//! target (signed 24-bit byte offset at 20 from the next instruction), `SR` a special
//! register (20:8), `M@BASE/OFF` an address `[Ra+imm]` (`M4@..`: offset in words),
//! `K` an LDC address `c[bank 36:5][Ra+imm16]`, `A@F` an address `[Ra]` without offset, `SB@F` a scoreboard `SB0`..`SB5`, `SBL@F`
//! a scoreboard list `{5,1,0}`.

use super::field::Field;
use super::operand::{
    Enc, decode_operand, encode_operand, is_default, parse_operand, parse_pred, parse_u64, pred_name, put_default,
};
use super::table;

pub use super::operand::{Core, Operand, parse_int, parse_reg};

/// How a modifier slot is encoded.
#[derive(Clone, Debug)]
pub enum Mod {
    /// Always printed (`.LUT`).
    Lit(String),
    /// Printed when the bit equals `when`.
    Flag {
        /// Spelling with its dot.
        name: String,
        /// One bit.
        field: Field,
        /// Bit value that prints the flag.
        when: u64,
    },
    /// One of a table's spellings (`""` prints nothing).
    Enum {
        /// (value, spelling) pairs.
        table: &'static [(u64, &'static str)],
        /// The field.
        field: Field,
    },
    /// A value the field must not hold (IADD: both negate bits together mean `.PO`).
    Forbid {
        /// The field.
        field: Field,
        /// The forbidden value.
        value: u64,
    },
    /// A fixed field.
    Fixed {
        /// The field.
        field: Field,
        /// Its value.
        value: u64,
    },
}

/// One instruction form.
#[derive(Clone, Debug)]
pub struct Form {
    /// Bare opcode (`IADD`).
    pub opcode: String,
    /// Fixed bits.
    pub bits: u64,
    /// Which bits are fixed.
    pub mask: u64,
    /// Has a guard predicate in bits 16..19.
    pub guard: bool,
    /// Modifier slots in print order.
    pub mods: Vec<Mod>,
    /// Operand slots in print order.
    pub operands: Vec<Operand>,
    /// The template, for messages.
    pub template: &'static str,
}

/// A symbol reference that the loader patches (`32@lo(gvar)`, `sm50-encoding-and-cubin.md`
/// §4.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// R_CUDA_ABS32_LO_20 (43), R_CUDA_ABS32_HI_20 (44) or R_CUDA_ABS32_20 (42).
    pub kind: u32,
    /// The symbol.
    pub symbol: String,
}

/// One instruction as text, split as [`crate::sass::text`] reads it.
#[derive(Clone, Debug)]
pub struct AsmInstr<'a> {
    /// Guard: negated, register text.
    pub guard: Option<(bool, &'a str)>,
    /// Opcode (`LDG`).
    pub opcode: &'a str,
    /// Modifiers (`["E", "64"]`).
    pub mods: &'a [String],
    /// Operands as written.
    pub operands: &'a [String],
}

/// A decoded instruction in nvdisasm-like syntax (our listing's operand spelling).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// `@P0 ` / `@!P0 ` or empty.
    pub guard: String,
    /// Opcode with modifiers.
    pub name: String,
    /// Operands.
    pub operands: Vec<String>,
    /// Absolute target address of a relative branch.
    pub target: Option<u32>,
}

impl Decoded {
    /// `@P0 OPCODE.MODS op, op`.
    pub fn text(&self) -> String {
        let mut s = format!("{}{}", self.guard, self.name);
        if !self.operands.is_empty() {
            s.push(' ');
            s.push_str(&self.operands.join(", "));
        }
        s
    }
}

pub(super) fn bad(t: &str, why: &str) -> String {
    format!("bad encoding template `{t}`: {why}")
}

pub(super) fn field(s: &str, t: &str) -> Result<Field, String> {
    Field::parse(s).ok_or_else(|| bad(t, &format!("field `{s}`")))
}

impl Form {
    /// Parses a template; `op16`/`mask16` are the fixed top 16 bits.
    pub fn parse(op16: u16, mask16: u16, template: &'static str) -> Result<Form, String> {
        let t = template;
        let (head, ops) = match template.split_once(" : ") {
            Some((h, o)) => (h, o.trim()),
            None => (template, ""),
        };
        let mut words = head.split_whitespace();
        let opcode = words.next().ok_or_else(|| bad(t, "empty"))?.to_string();
        let mut form = Form {
            opcode,
            bits: (op16 as u64) << 48,
            mask: (mask16 as u64) << 48,
            guard: true,
            mods: vec![],
            operands: vec![],
            template,
        };
        for w in words {
            if w == "noguard" {
                form.guard = false;
            } else if let Some(rest) = w.strip_prefix('=') {
                let (f, v) = rest.split_once('=').ok_or_else(|| bad(t, w))?;
                let value = parse_u64(v).ok_or_else(|| bad(t, w))?;
                form.mods.push(Mod::Fixed { field: field(f, t)?, value });
            } else if let Some(rest) = w.strip_prefix('^') {
                let (f, v) = rest.split_once('=').ok_or_else(|| bad(t, w))?;
                let value = parse_u64(v).ok_or_else(|| bad(t, w))?;
                form.mods.push(Mod::Forbid { field: field(f, t)?, value });
            } else if let Some(rest) = w.strip_prefix('[') {
                let (name, f) = rest.split_once(']').ok_or_else(|| bad(t, w))?;
                let (when, f) = match f.strip_prefix('!') {
                    Some(f) => (0, f),
                    None => (1, f),
                };
                form.mods.push(Mod::Flag { name: name.to_string(), field: field(f, t)?, when });
            } else if let Some(rest) = w.strip_prefix('{') {
                let (name, f) = rest.split_once('}').ok_or_else(|| bad(t, w))?;
                let table = table::enum_table(name).ok_or_else(|| bad(t, &format!("no table {name}")))?;
                form.mods.push(Mod::Enum { table, field: field(f, t)? });
            } else if w.starts_with('.') {
                form.mods.push(Mod::Lit(w.to_string()));
            } else {
                return Err(bad(t, &format!("modifier `{w}`")));
            }
        }
        if !ops.is_empty() {
            for o in ops.split(',') {
                form.operands.push(parse_operand(o.trim(), t)?);
            }
        }
        if !form.guard {
            form.mask |= 0xf << 16;
        }
        // Fixed modifier fields are part of the opcode match.
        for m in &form.mods {
            if let Mod::Fixed { field, value } = m {
                field.put(&mut form.bits, *value);
                form.mask |= field.mask();
            }
        }
        Ok(form)
    }

    /// True if `w` has this form's fixed bits and valid table values.
    pub fn matches(&self, w: u64) -> bool {
        w & self.mask == self.bits
            && self.mods.iter().all(|m| match m {
                Mod::Enum { table, field } => {
                    let v = field.get(w);
                    table.iter().any(|e| e.0 == v)
                }
                Mod::Forbid { field, value } => field.get(w) != *value,
                _ => true,
            })
            // CAS's implicit second register must exist (nvdisasm prints `???255`), so RZ is no
            // CAS data either.
            && self.operands.iter().all(|o| match &o.core {
                Core::Reg(f, k) if *k > 0 => {
                    f.get(w).saturating_add(*k as u64) < 255
                }
                // A word operand (texture geometry, query) must be one of its table's.
                Core::Word(f, table) => {
                    let v = f.get(w);
                    table.iter().any(|e| e.0 == v)
                }
                _ => true,
            })
    }

    /// The text of `w` (which [`Form::matches`]) at byte address `addr`.
    pub fn decode(&self, w: u64, addr: u32) -> Decoded {
        let mut guard = String::new();
        if self.guard {
            let p = (w >> 16) & 7;
            let neg = (w >> 19) & 1 == 1;
            if p != 7 || neg {
                guard = format!("@{}{} ", if neg { "!" } else { "" }, pred_name(p));
            }
        }
        let mut name = self.opcode.clone();
        for m in &self.mods {
            match m {
                Mod::Lit(s) => name.push_str(s),
                Mod::Flag { name: n, field, when } => {
                    if field.get(w) == *when {
                        name.push_str(n);
                    }
                }
                Mod::Enum { table, field } => {
                    let v = field.get(w);
                    name.push_str(table.iter().find(|e| e.0 == v).map_or("", |e| e.1));
                }
                Mod::Fixed { .. } | Mod::Forbid { .. } => {}
            }
        }
        let mut operands = vec![];
        let mut target = None;
        for o in &self.operands {
            if o.optional && is_default(o, w) {
                continue;
            }
            let (text, t) = decode_operand(o, w, addr);
            if t.is_some() {
                target = t;
            }
            operands.push(text);
        }
        Decoded { guard, name, operands, target }
    }

    /// Encodes `i` at byte address `addr`; `resolve` maps a label to its address. Errors
    /// say which modifier or operand does not fit this form.
    pub fn encode(
        &self,
        i: &AsmInstr,
        addr: u32,
        resolve: &dyn Fn(&str) -> Option<u32>,
    ) -> Result<(u64, Option<Reloc>), String> {
        let mut e = Enc { w: self.bits, set: self.mask, reloc: None };
        if self.guard {
            let (neg, p) = match i.guard {
                Some((neg, p)) => (neg, parse_pred(p).ok_or_else(|| format!("bad guard predicate `{p}`"))?),
                None => (false, 7),
            };
            e.put(&Field::at(16, 3), p)?;
            e.put(&Field::at(19, 1), neg as u64)?;
        } else if i.guard.is_some() {
            return Err(format!("{} takes no guard predicate", self.opcode));
        }
        self.encode_mods(&mut e, i.mods)?;
        let n_opt = self.operands.iter().filter(|o| o.optional).count();
        let n_req = self.operands.len().saturating_sub(n_opt);
        // How many optional operands are left out.
        let skip = i.operands.len().checked_sub(n_req).and_then(|present| n_opt.checked_sub(present));
        let (Some(skip), Some(choices)) = (skip, 1u32.checked_shl(n_opt as u32)) else {
            return Err(format!("expected {} operands, found {}", self.operand_count_text(), i.operands.len()));
        };
        // Which optional operands are present: the first combination that parses.
        let mut last_err = String::new();
        for choice in 0..choices {
            if choice.count_ones() as usize != skip {
                continue;
            }
            let mut e2 = Enc { w: e.w, set: e.set, reloc: None };
            match self.encode_operands(&mut e2, i.operands, choice, addr, resolve) {
                Ok(()) => {
                    let forbidden = self
                        .mods
                        .iter()
                        .any(|m| matches!(m, Mod::Forbid { field, value } if field.get(e2.w) == *value));
                    if forbidden {
                        last_err = format!("this combination of operand modifiers does not exist in `{}`", self.opcode);
                        continue;
                    }
                    // Omitted optional operands hold their defaults.
                    return Ok((e2.w, e2.reloc));
                }
                Err(m) => last_err = m,
            }
        }
        Err(last_err)
    }

    fn operand_count_text(&self) -> String {
        let n_opt = self.operands.iter().filter(|o| o.optional).count();
        let n = self.operands.len();
        if n_opt == 0 { n.to_string() } else { format!("{} to {n}", n.saturating_sub(n_opt)) }
    }

    fn encode_mods(&self, e: &mut Enc, mods: &[String]) -> Result<(), String> {
        // `at` counts the modifiers taken so far: at most `mods.len()` (`takes`).
        let mut at = 0usize;
        let takes = |at: usize, spelling: &str| -> Option<usize> {
            let parts: Vec<&str> = spelling.trim_start_matches('.').split('.').collect();
            let rest = mods.get(at..)?;
            (rest.len() >= parts.len() && parts.iter().zip(rest).all(|(a, b)| a == b)).then_some(parts.len())
        };
        for m in &self.mods {
            match m {
                Mod::Lit(s) => at = at.saturating_add(takes(at, s).ok_or_else(|| format!("expected `{s}`"))?),
                Mod::Flag { name, field, when } => match takes(at, name) {
                    Some(n) => {
                        at = at.saturating_add(n);
                        e.put(field, *when)?;
                    }
                    // A flag's field is one bit: `when` is 0 or 1 (the table).
                    None => e.put(field, *when ^ 1)?,
                },
                Mod::Enum { table, field } => {
                    let best = table
                        .iter()
                        .filter(|x| !x.1.is_empty())
                        .filter_map(|x| takes(at, x.1).map(|n| (n, x.0)))
                        .max_by_key(|x| x.0);
                    match best {
                        Some((n, v)) => {
                            at = at.saturating_add(n);
                            e.put(field, v)?;
                        }
                        None => {
                            let d = table.iter().find(|x| x.1.is_empty()).ok_or_else(|| {
                                format!("expected one of {}", table.iter().map(|x| x.1).collect::<Vec<_>>().join(" "))
                            })?;
                            e.put(field, d.0)?;
                        }
                    }
                }
                Mod::Fixed { .. } | Mod::Forbid { .. } => {}
            }
        }
        if let Some(rest) = mods.get(at..)
            && !rest.is_empty()
        {
            return Err(format!("unexpected modifier `.{}`", rest.join(".")));
        }
        Ok(())
    }

    fn encode_operands(
        &self,
        e: &mut Enc,
        texts: &[String],
        skip_mask: u32,
        addr: u32,
        resolve: &dyn Fn(&str) -> Option<u32>,
    ) -> Result<(), String> {
        let mut texts = texts.iter();
        let mut opt_idx = 0u32;
        for o in &self.operands {
            if o.optional {
                let skipped = skip_mask.checked_shr(opt_idx).unwrap_or(0) & 1 == 1;
                opt_idx = opt_idx.saturating_add(1);
                if skipped {
                    put_default(o, e)?;
                    continue;
                }
            }
            let text = texts.next().ok_or("too few operands")?;
            encode_operand(o, text, e, addr, resolve).map_err(|m| format!("operand `{text}`: {m}"))?;
        }
        Ok(())
    }
}
