//! Operands of the encoding table's templates ([`super::form`]): their kinds, how their
//! text is parsed and written, and how their fields are set and read.

use super::field::Field;
use super::form::{Reloc, bad, field};
use super::table;
use crate::sass::print::float_text;

/// What an operand is.
#[derive(Clone, Debug)]
pub enum Core {
    /// General-purpose register, 255 = RZ; plus a constant offset (CAS's implicit Rb+1).
    Reg(Field, u8),
    /// Predicate, 7 = PT.
    Pred(Field),
    /// `c[bank][offset]` at 20..38; `true` prints a space between the brackets.
    CBuf(bool),
    /// Integer immediate; `true` = printed signed.
    Int(Field, bool),
    /// Float immediate: the field holds the f32 (`false`) or f64 (`true`) bits above `shift`.
    Float(Field, bool, u8),
    /// Relative branch target.
    Target,
    /// Special register (S2R/CS2R).
    SReg,
    /// `[Ra+imm]`: base register, signed offset, offset unit in bytes.
    Mem(Field, Field, u8, bool),
    /// LDC `c[bank][Ra+imm]`.
    Ldc,
    /// `SBn`.
    Sb(Field),
    /// `{b,...}`: a scoreboard mask.
    SbList(Field),
    /// A condition-code test `CC.NEU` (5 bits; 15 = always, the default).
    Cc(Field),
    /// A fixed word such as `CC` (CSETP's condition-code source).
    Lit(&'static str),
    /// One of a named table's words, e.g. a texture geometry `2D` (`{TEXDIM}@28:3`).
    Word(Field, &'static [(u64, &'static str)]),
}

/// The words a template may name as a fixed operand (`'CC`; the texture forms' `'RZ`
/// destination of one-register TEXS, the `'0x0` index of the bindless forms).
const LIT_WORDS: &[&str] = &["CC", "RZ", "0x0"];

/// One operand slot.
#[derive(Clone, Debug)]
pub struct Operand {
    /// Omitted in print when the field holds its default.
    pub optional: bool,
    /// `-x` bit.
    pub neg: Option<Field>,
    /// `|x|` bit.
    pub abs: Option<Field>,
    /// `~x` bit.
    pub inv: Option<Field>,
    /// `!p` bit.
    pub not: Option<Field>,
    /// `.H1` bit.
    pub h1: Option<Field>,
    /// `.CC` bit.
    pub cc: Option<Field>,
    /// `.INV` bit: an inverted immediate (LOP32I), printed after the value.
    pub inv_suffix: Option<Field>,
    /// The value.
    pub core: Core,
}

/// Encoder state: the word and which bits are already decided.
pub(super) struct Enc {
    /// The word so far.
    pub(super) w: u64,
    /// Bits already decided.
    pub(super) set: u64,
    /// A relocated immediate.
    pub(super) reloc: Option<Reloc>,
}

impl Enc {
    /// Sets a field; a field set twice (FFMA32I's C is its Rd) must get the same value.
    pub(super) fn put(&mut self, f: &Field, v: u64) -> Result<(), String> {
        if !f.fits(v) {
            return Err(format!("value 0x{v:x} does not fit {} bits", f.width()));
        }
        let m = f.mask();
        let mut nw = self.w;
        f.put(&mut nw, v);
        if (nw ^ self.w) & m & self.set != 0 {
            return Err("conflicts with another operand or the opcode".into());
        }
        self.w = nw;
        self.set |= m;
        Ok(())
    }
}

pub(super) fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A signed or unsigned integer literal: `0x1f`, `-0x10`, `12`.
pub fn parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = i128::from(parse_u64(body)?);
    let v = if neg { v.checked_neg()? } else { v };
    i64::try_from(v).ok()
}

pub(super) fn parse_operand(s: &str, t: &str) -> Result<Operand, String> {
    let mut o = Operand {
        optional: false,
        neg: None,
        abs: None,
        inv: None,
        not: None,
        h1: None,
        cc: None,
        inv_suffix: None,
        core: Core::Target,
    };
    let mut core = None;
    for tok in s.split_whitespace() {
        let tok = match tok.strip_prefix('?') {
            Some(rest) => {
                o.optional = true;
                rest
            }
            None => tok,
        };
        if tok.is_empty() {
            continue;
        } else if let Some(f) = tok.strip_prefix('-') {
            o.neg = Some(field(f, t)?);
        } else if let Some(f) = tok.strip_prefix('|') {
            o.abs = Some(field(f, t)?);
        } else if let Some(f) = tok.strip_prefix('~') {
            o.inv = Some(field(f, t)?);
        } else if let Some(f) = tok.strip_prefix('!') {
            o.not = Some(field(f, t)?);
        } else if let Some(f) = tok.strip_prefix(".H1@") {
            o.h1 = Some(field(f, t)?);
        } else if let Some(f) = tok.strip_prefix(".INV@") {
            o.inv_suffix = Some(field(f, t)?);
        } else if let Some(f) = tok.strip_prefix(".CC@") {
            o.cc = Some(field(f, t)?);
        } else {
            core = Some(parse_core(tok, t)?);
        }
    }
    o.core = core.ok_or_else(|| bad(t, &format!("operand `{s}` has no value")))?;
    Ok(o)
}

fn parse_core(tok: &str, t: &str) -> Result<Core, String> {
    let imm = |f: &str| field(f, t);
    Ok(match tok {
        "C" => Core::CBuf(false),
        "CS" => Core::CBuf(true),
        "T" => Core::Target,
        "SR" => Core::SReg,
        "K" => Core::Ldc,
        _ if tok.starts_with('\'') => {
            Core::Lit(LIT_WORDS.iter().find(|l| **l == &tok[1..]).ok_or_else(|| bad(t, &format!("literal `{tok}`")))?)
        }
        _ if tok.starts_with('{') => {
            let (name, f) = tok[1..].split_once("}@").ok_or_else(|| bad(t, &format!("operand `{tok}`")))?;
            let table = super::table::enum_table(name).ok_or_else(|| bad(t, &format!("table `{name}`")))?;
            Core::Word(field(f, t)?, table)
        }
        "I20" => Core::Int(imm("20:19+56:1")?, true),
        "U20" => Core::Int(imm("20:19+56:1")?, false),
        "F20" => Core::Float(imm("20:19+56:1")?, false, 12),
        "D20" => Core::Float(imm("20:19+56:1")?, true, 44),
        "I32" => Core::Int(imm("20:32")?, true),
        "U32" => Core::Int(imm("20:32")?, false),
        "F32" => Core::Float(imm("20:32")?, false, 0),
        _ => {
            let (kind, rest) = tok.split_once('@').ok_or_else(|| bad(t, &format!("operand `{tok}`")))?;
            match kind {
                "R" => match rest.split_once('+') {
                    Some((f, k)) if !f.contains(':') => {
                        Core::Reg(field(&format!("{f}:8"), t)?, k.parse().map_err(|_| bad(t, tok))?)
                    }
                    _ => Core::Reg(field(&format!("{rest}:8"), t)?, 0),
                },
                "P" => Core::Pred(field(&format!("{rest}:3"), t)?),
                "I" => Core::Int(field(rest, t)?, true),
                "U" => Core::Int(field(rest, t)?, false),
                "SB" => Core::Sb(field(&format!("{rest}:3"), t)?),
                "SBL" => Core::SbList(field(&format!("{rest}:6"), t)?),
                "CC" => Core::Cc(field(&format!("{rest}:5"), t)?),
                // `[Ra]` without an offset (SULD/SUST): an offset field of no bits.
                "A" => Core::Mem(field(&format!("{rest}:8"), t)?, Field(vec![]), 4, false),
                "M" | "M4" | "MU4" => {
                    let (b, off) = rest.split_once('/').ok_or_else(|| bad(t, tok))?;
                    let unit = if kind == "M" { 1 } else { 4 };
                    Core::Mem(field(&format!("{b}:8"), t)?, field(off, t)?, unit, kind != "MU4")
                }
                _ => return Err(bad(t, &format!("operand `{tok}`"))),
            }
        }
    })
}

pub(super) fn pred_name(p: u64) -> String {
    if p == 7 { "PT".into() } else { format!("P{p}") }
}

fn reg_name(r: u64) -> String {
    if r == 255 { "RZ".into() } else { format!("R{r}") }
}

/// `P0`..`P6`, `PT` → 0..7.
pub fn parse_pred(s: &str) -> Option<u64> {
    if s == "PT" {
        return Some(7);
    }
    let n: u64 = s.strip_prefix('P')?.parse().ok()?;
    (n < 7).then_some(n)
}

/// `R0`..`R254`, `RZ` → 0..255.
pub fn parse_reg(s: &str) -> Option<u64> {
    if s == "RZ" {
        return Some(255);
    }
    let n: u64 = s.strip_prefix('R')?.parse().ok()?;
    (n < 255).then_some(n)
}

fn hex(v: i64) -> String {
    if v < 0 { format!("-0x{:x}", v.unsigned_abs()) } else { format!("0x{v:x}") }
}

/// nvdisasm's float spelling through our printer's (`float_text`), keeping a NaN's sign.
fn float_str(v: f64) -> String {
    if v.is_nan() {
        return if v.is_sign_negative() { "-QNAN".into() } else { "+QNAN".into() };
    }
    float_text(v)
}

pub(super) fn is_default(o: &Operand, w: u64) -> bool {
    let flag_clear = |f: &Option<Field>| f.as_ref().is_none_or(|f| f.get(w) == 0);
    flag_clear(&o.not)
        && flag_clear(&o.neg)
        && match &o.core {
            Core::Reg(f, 0) => f.get(w) == 255,
            Core::Pred(f) => f.get(w) == 7,
            Core::Cc(f) => f.get(w) == 15,
            Core::SbList(f) => f.get(w) == 0,
            Core::Int(f, _) | Core::Float(f, ..) => f.get(w) == 0,
            _ => false,
        }
}

pub(super) fn put_default(o: &Operand, e: &mut Enc) -> Result<(), String> {
    for f in [&o.not, &o.neg, &o.abs, &o.inv, &o.h1, &o.cc, &o.inv_suffix].into_iter().flatten() {
        e.put(f, 0)?;
    }
    match &o.core {
        Core::Reg(f, _) => e.put(f, 255),
        Core::Pred(f) => e.put(f, 7),
        Core::Cc(f) => e.put(f, 15),
        Core::SbList(f) => e.put(f, 0),
        Core::Int(f, _) | Core::Float(f, ..) => e.put(f, 0),
        _ => Err("operand missing".into()),
    }
}

/// Bank and byte offset of a constant-bank operand. The offset is a signed 16-bit byte
/// offset (14 bits of words): nvdisasm prints `c[0x3][-0x15a4]` for byte 0xea5c
/// (`ptxas-sm50-findings.md` §6).
fn cbuf_parts(w: u64) -> (u64, i64) {
    // The 14-bit word offset at bit 20, in bytes: bits 18..33 with the low two clear.
    ((w >> 34) & 0x1f, ((w >> 18) & 0xfffc) as u16 as i16 as i64)
}

pub(super) fn decode_operand(o: &Operand, w: u64, addr: u32) -> (String, Option<u32>) {
    let bit = |f: &Option<Field>| f.as_ref().is_some_and(|f| f.get(w) == 1);
    let mut target = None;
    let body = match &o.core {
        Core::Reg(f, k) => {
            let r = f.get(w);
            if r == 255 { "RZ".into() } else { reg_name(r.saturating_add(*k as u64)) }
        }
        Core::Pred(f) => pred_name(f.get(w)),
        Core::CBuf(space) => {
            let (b, off) = cbuf_parts(w);
            format!("c[0x{b:x}]{}[{}]", if *space { " " } else { "" }, hex(off))
        }
        Core::Int(f, signed) => {
            if *signed {
                hex(f.get_signed(w))
            } else {
                hex(f.get(w) as i64)
            }
        }
        Core::Float(f, wide, shift) => {
            let bits = f.get(w) << shift;
            float_str(if *wide { f64::from_bits(bits) } else { f32::from_bits(bits as u32) as f64 })
        }
        Core::Target => {
            let off = Field::at(20, 24).get_signed(w);
            // Relative to the next instruction; addresses are modulo 2^32 (a 24-bit offset
            // from an address near 0 prints as 0xfffffff0).
            let t = i64::from(addr).saturating_add(8).saturating_add(off) as u32;
            // ptxas targets a bundle's first instruction through the bundle's own address
            // (its control word, §3); the listing names the instruction.
            let t = if t.is_multiple_of(32) { t.wrapping_add(8) } else { t };
            target = Some(t);
            format!("0x{t:x}")
        }
        Core::SReg => {
            let v = (w >> 20) & 0xff;
            table::SREGS.iter().find(|e| e.0 == v).map_or_else(|| format!("SR{v}"), |e| e.1.to_string())
        }
        Core::Mem(b, off, unit, signed) => {
            let base = b.get(w);
            // Without a base register nvdisasm prints the offset field unsigned (`[0xa05f7a]`).
            let o = if *signed && base != 255 { off.get_signed(w) } else { off.get(w) as i64 };
            // A field of at most 24 bits times a unit of at most 16: no saturation.
            let o = o.saturating_mul(*unit as i64);
            if base == 255 {
                if o == 0 { "[RZ]".into() } else { format!("[{}]", hex(o as i32 as u32 as i64)) }
            } else if o == 0 {
                format!("[{}]", reg_name(base))
            } else {
                format!("[{}+{}]", reg_name(base), hex(o))
            }
        }
        Core::Ldc => {
            let base = (w >> 8) & 0xff;
            let bank = (w >> 36) & 0x1f;
            let o = Field::at(20, 16).get_signed(w);
            if base == 255 {
                format!("c[0x{bank:x}][{}]", hex(o))
            } else if o == 0 {
                format!("c[0x{bank:x}][{}]", reg_name(base))
            } else {
                format!("c[0x{bank:x}][{}+{}]", reg_name(base), hex(o))
            }
        }
        Core::Sb(f) => format!("SB{}", f.get(w)),
        Core::SbList(f) => {
            let m = f.get(w);
            let l: Vec<String> = (0..6).rev().filter(|b| m >> b & 1 == 1).map(|b| b.to_string()).collect();
            format!("{{{}}}", l.join(","))
        }
        Core::Cc(f) => {
            let v = f.get(w);
            format!("CC{}", table::CCTEST.iter().find(|e| e.0 == v).map_or("", |e| e.1))
        }
        Core::Lit(l) => l.to_string(),
        Core::Word(f, table) => {
            let v = f.get(w);
            table.iter().find(|e| e.0 == v).map_or_else(|| format!("INVALID{v}"), |e| e.1.to_string())
        }
    };
    let mut s = String::new();
    if bit(&o.not) {
        s.push('!');
    }
    if bit(&o.neg) {
        s.push('-');
    }
    if bit(&o.inv) {
        s.push('~');
    }
    if bit(&o.abs) {
        s.push('|');
        s.push_str(&body);
        s.push('|');
    } else {
        s.push_str(&body);
    }
    if bit(&o.h1) {
        s.push_str(".H1");
    }
    if bit(&o.inv_suffix) {
        s.push_str(".INV");
    }
    if bit(&o.cc) {
        s.push_str(".CC");
    }
    (s, target)
}

/// Operand text split into its modifiers and value.
struct Parts<'a> {
    neg: bool,
    abs: bool,
    inv: bool,
    not: bool,
    h1: bool,
    cc: bool,
    body: &'a str,
}

fn split_operand(s: &str) -> Parts<'_> {
    let mut p = Parts { neg: false, abs: false, inv: false, not: false, h1: false, cc: false, body: s.trim() };
    // nvdisasm's `.reuse` marks live in the control word; they are ignored here.
    loop {
        if let Some(b) = p.body.strip_suffix(".reuse") {
            p.body = b;
        } else if let Some(b) = p.body.strip_suffix(".H1") {
            p.h1 = true;
            p.body = b;
        } else if let Some(b) = p.body.strip_suffix(".INV") {
            p.inv = true;
            p.body = b;
        } else if let Some(b) = p.body.strip_suffix(".CC") {
            p.cc = true;
            p.body = b;
        } else {
            break;
        }
    }
    loop {
        if let Some(b) = p.body.strip_prefix('!') {
            p.not = true;
            p.body = b;
        } else if let Some(b) = p.body.strip_prefix('-').filter(|b| !b.starts_with(|c: char| c.is_ascii_digit())) {
            p.neg = true;
            p.body = b;
        } else if let Some(b) = p.body.strip_prefix('~') {
            p.inv = true;
            p.body = b;
        } else {
            break;
        }
    }
    if let Some(b) = p.body.strip_prefix('|').and_then(|b| b.strip_suffix('|')) {
        p.abs = true;
        p.body = b;
    }
    p.body = p.body.trim();
    p
}

/// Parses a float literal as nvdisasm and our printer spell it.
fn parse_float(s: &str) -> Option<f64> {
    match s {
        "+INF" | "INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "+QNAN" | "QNAN" | "+SNAN" => Some(f64::NAN),
        "-QNAN" | "-SNAN" => Some(-f64::NAN),
        _ => s.parse().ok(),
    }
}

pub(super) fn encode_operand(
    o: &Operand,
    text: &str,
    e: &mut Enc,
    addr: u32,
    resolve: &dyn Fn(&str) -> Option<u32>,
) -> Result<(), String> {
    // A negative immediate keeps its sign in the number (`-0x10`, `-INF`), not as `-x`.
    let numeric = matches!(o.core, Core::Int(..) | Core::Float(..));
    let mut p = split_operand(text);
    if numeric && p.neg {
        p.neg = false;
        p.body = text.trim();
    }
    for (want, f, what) in [
        (p.neg, &o.neg, "`-`"),
        (p.abs, &o.abs, "`|..|`"),
        (p.inv, if o.inv.is_some() { &o.inv } else { &o.inv_suffix }, "`~`"),
        (p.not, &o.not, "`!`"),
        (p.h1, &o.h1, "`.H1`"),
        (p.cc, &o.cc, "`.CC`"),
    ] {
        match f {
            Some(f) => e.put(f, want as u64)?,
            None if want => return Err(format!("{what} is not allowed here")),
            None => {}
        }
    }
    let body = p.body;
    match &o.core {
        Core::Reg(f, k) => {
            let r = parse_reg(body).ok_or("expected a register R0..R254 or RZ")?;
            let v = match (r, *k) {
                (255, 0) => 255,
                (255, _) => return Err("RZ cannot hold the data of CAS (its pair is Rb, Rb+1)".into()),
                _ => r.checked_sub(*k as u64).filter(|_| r < 255).ok_or("register out of range")?,
            };
            e.put(f, v)
        }
        Core::Pred(f) => e.put(f, parse_pred(body).ok_or("expected a predicate P0..P6 or PT")?),
        Core::CBuf(_) => {
            let (bank, off) = parse_cbuf(body).ok_or("expected a constant-bank operand c[bank][offset]")?;
            if off % 4 != 0 || !(-0x8000..0x10000).contains(&off) || bank >= 32 {
                return Err("constant-bank offset must be a multiple of 4 in -0x8000..0x10000, bank below 32".into());
            }
            e.put(&Field::at(20, 14), (off as u16 as u64) / 4)?;
            e.put(&Field::at(34, 5), bank)
        }
        Core::Int(f, signed) => {
            if let Some(r) = parse_reloc(body) {
                e.reloc = Some(r);
                return e.put(f, 0);
            }
            let v = parse_int(body).ok_or("expected an integer")?;
            e.put(f, int_field(v, f.width(), *signed)?)
        }
        Core::Float(f, wide, shift) => {
            let v = parse_float(body).ok_or("expected a floating-point number")?;
            let bits = if *wide {
                v.to_bits()
            } else {
                let x = v as f32;
                if !(x as f64 == v || v.is_nan()) {
                    return Err("not exactly representable as f32".into());
                }
                let b = x.to_bits() as u64;
                if v.is_nan() { (b & 0x8000_0000) | 0x7fc0_0000 } else { b }
            };
            if bits & super::field::ones(*shift) != 0 {
                return Err(format!("the low {shift} bits of this immediate must be zero"));
            }
            e.put(f, bits >> shift)
        }
        Core::Target => {
            let t = match parse_int(body) {
                Some(t) => t,
                None => {
                    let l = body.trim_start_matches("`(").trim_end_matches(')');
                    resolve(l).ok_or_else(|| format!("unknown label `{l}`"))? as i64
                }
            };
            // A bundle's first instruction is reached through the bundle's address, as
            // ptxas encodes it (`sm50-encoding-and-cubin.md` §3: 0 of 435 ptxas branches
            // target `addr % 32 == 8`; a self-branch in slot 0 has offset -16).
            let t = if t.rem_euclid(32) == 8 { t.checked_sub(8) } else { Some(t) };
            let off = t.and_then(|t| t.checked_sub(i64::from(addr))).and_then(|o| o.checked_sub(8));
            let Some(off) = off.filter(|o| (-(1 << 23)..(1 << 23)).contains(o)) else {
                return Err("branch target out of range".into());
            };
            e.put(&Field::at(20, 24), off as u64 & 0xff_ffff)
        }
        Core::SReg => {
            let v = table::SREGS.iter().find(|x| x.1 == body).ok_or("unknown special register")?.0;
            e.put(&Field::at(20, 8), v)
        }
        Core::Mem(b, off, unit, signed) => {
            let (base, o) = parse_mem(body).ok_or("expected an address [Ra+imm]")?;
            let Some(words) = o.checked_div(*unit as i64).filter(|_| o.checked_rem(*unit as i64) == Some(0)) else {
                return Err(format!("offset must be a multiple of {unit}"));
            };
            if !*signed && o < 0 {
                return Err("this offset is unsigned".into());
            }
            e.put(b, base)?;
            // An absolute address (no base) may be written as the field's unsigned value.
            let unsigned = !*signed || (base == 255 && words >= 0 && words.checked_shr(off.width()).unwrap_or(0) == 0);
            e.put(off, int_field(words, off.width(), !unsigned)?)
        }
        Core::Ldc => {
            let (bank, inner) =
                body.strip_prefix("c[").and_then(|r| r.split_once(']')).ok_or("expected c[bank][Ra+imm]")?;
            let bank = parse_u64(bank.trim()).filter(|b| *b < 32).ok_or("bad bank")?;
            let inner = inner.trim().strip_prefix('[').and_then(|r| r.strip_suffix(']')).ok_or("expected [Ra+imm]")?;
            let (base, o) = parse_mem(&format!("[{inner}]")).ok_or("expected [Ra+imm]")?;
            // ptxas wraps LDC offsets modulo 64 KiB (findings §5: [R0+40000] → [R0+-0x63c0]).
            e.put(&Field::at(8, 8), base)?;
            e.put(&Field::at(36, 5), bank)?;
            e.put(&Field::at(20, 16), int_field(o, 16, true)?)
        }
        Core::Sb(f) => {
            let n: u64 =
                body.strip_prefix("SB").and_then(|n| n.parse().ok()).filter(|n| *n < 6).ok_or("expected SB0..SB5")?;
            e.put(f, n)
        }
        Core::SbList(f) => {
            let l = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')).ok_or("expected {b,...}")?;
            let mut m = 0;
            for b in l.split(',').filter(|b| !b.trim().is_empty()) {
                let n: u64 = b.trim().parse().ok().filter(|n| *n < 6).ok_or("bad scoreboard")?;
                m |= 1 << n;
            }
            e.put(f, m)
        }
        Core::Cc(f) => {
            let t = body.strip_prefix("CC").ok_or("expected a condition-code test CC.xx")?;
            let v = table::CCTEST.iter().find(|x| x.1 == t && !t.is_empty()).ok_or("unknown condition-code test")?.0;
            e.put(f, v)
        }
        Core::Lit(l) => {
            if body == *l {
                Ok(())
            } else {
                Err(format!("expected `{l}`"))
            }
        }
        Core::Word(f, table) => match table.iter().find(|x| x.1 == body) {
            Some(x) => e.put(f, x.0),
            None => Err(format!("expected one of {}", table.iter().map(|x| x.1).collect::<Vec<_>>().join(", "))),
        },
    }
}

/// Fits `v` into a `width`-bit field: signed fields take -2^(w-1)..2^(w-1), and a value
/// written as an unsigned 32-bit pattern (`0xfffff000`) is read as its signed value; an
/// unsigned field takes 0..2^w. 32-bit fields take any 32-bit pattern.
fn int_field(v: i64, width: u32, signed: bool) -> Result<u64, String> {
    let m = super::field::ones(width as u8);
    if width == 32 && (-(1i64 << 31)..(1i64 << 32)).contains(&v) {
        return Ok(v as u64 & m);
    }
    // In i128, 2^width for the table's widths (at most 64) and the sums below are exact.
    let pow = |k: u32| 1i128.checked_shl(k).unwrap_or(i128::MAX);
    let (half, v) = (pow(width.saturating_sub(1)), i128::from(v));
    let v = if signed && width < 32 && (pow(31)..pow(32)).contains(&v) { v.saturating_sub(pow(32)) } else { v };
    // A negative value for a wide unsigned field (`IADD3 R3, R3, -0x4, ..`, printed
    // `0xffffc` by nvdisasm) is its two's complement.
    let v =
        if !signed && width >= 20 && v < 0 && v >= half.saturating_neg() { v.saturating_add(pow(width)) } else { v };
    let ok = if signed { (half.saturating_neg()..half).contains(&v) } else { (0..pow(width)).contains(&v) };
    if ok { Ok(v as u64 & m) } else { Err(format!("{} does not fit {width} bits", hex(v as i64))) }
}

fn parse_cbuf(s: &str) -> Option<(u64, i64)> {
    let r = s.strip_prefix("c[")?;
    let (bank, rest) = r.split_once(']')?;
    let off = rest.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some((parse_u64(bank.trim())?, parse_int(off.trim())?))
}

fn parse_mem(s: &str) -> Option<(u64, i64)> {
    let inner = s.strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.starts_with('R') {
        let (r, off) = match inner.split_once('+') {
            Some((r, o)) => (r.trim(), parse_int(o.trim())?),
            None => (inner, 0),
        };
        Some((parse_reg(r)?, off))
    } else {
        // `[0x8]`: an absolute offset printed as an unsigned 32-bit pattern.
        let v = parse_int(inner)?;
        let v = if (1i64 << 31..1i64 << 32).contains(&v) { v.checked_sub(1i64 << 32)? } else { v };
        Some((255, v))
    }
}

/// `32@lo(sym)`, `32@hi(sym)`: the halves of a symbol's address, patched at load time;
/// `` `(sym) ``: a `JCAL`'s absolute target, R_CUDA_ABS32_20 (ptxas 11.8 `JCAL `(vprintf)`,
/// `sm50-encoding-and-cubin.md` §3).
fn parse_reloc(s: &str) -> Option<Reloc> {
    let (kind, rest) = if let Some(r) = s.strip_prefix("32@lo(") {
        (43, r)
    } else if let Some(r) = s.strip_prefix("32@hi(") {
        (44, r)
    } else if let Some(r) = s.strip_prefix("`(") {
        (42, r)
    } else {
        return None;
    };
    Some(Reloc { kind, symbol: rest.strip_suffix(')')?.to_string() })
}
