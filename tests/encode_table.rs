//! The whole encoding table against nvdisasm 11.8: for every form of the table (every
//! opcode × operand kind, `sass::encode::table`), random values of every field (guard,
//! modifiers from their tables, registers, predicates, immediates, constant-bank operands,
//! addresses, branch targets), encoded into words, disassembled by nvdisasm in raw mode
//! (`-b SM50`, a few runs for thousands of words), and compared with our decoder's text;
//! then our text is encoded again and must give the same word.
//!
//! Knobs: `ENCODE_TABLE_CASES` (instances per form, default 24), `ENCODE_TABLE_SEED`.
//! NaN immediates are not generated: the listing prints every NaN as `±QNAN`, so a NaN's
//! payload does not survive the text. Skipped with a message without nvdisasm.

#[path = "common/nvidia.rs"]
mod nvidia;

use ptx2sass::sass::encode::field::Field;
use ptx2sass::sass::encode::form::{Core, Form, Mod};
use ptx2sass::sass::encode::{decode, encode_text, forms};
use ptx2sass::sass::text;
use std::collections::HashMap;
use std::process::Command;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn put(w: &mut u64, f: &Field, v: u64) {
    f.put(w, v & ((1u128 << f.width()) - 1) as u64);
}

/// A random word of form `f` at byte address `addr`, or None when the draw made a value
/// this test leaves out (a NaN immediate).
fn random_word(f: &Form, rng: &mut Rng, addr: u32) -> Option<u64> {
    let mut w = f.bits;
    if f.guard {
        // Mostly unguarded, as code is.
        let g = if rng.below(3) == 0 { rng.below(16) } else { 7 };
        put(&mut w, &Field::at(16, 4), g);
    }
    for m in &f.mods {
        match m {
            Mod::Flag { field, .. } => put(&mut w, field, rng.below(2)),
            Mod::Enum { table, field } => put(&mut w, field, table[rng.below(table.len() as u64) as usize].0),
            Mod::Lit(_) | Mod::Fixed { .. } | Mod::Forbid { .. } => {}
        }
    }
    for o in &f.operands {
        for b in [&o.neg, &o.abs, &o.inv, &o.not, &o.h1, &o.cc, &o.inv_suffix].into_iter().flatten() {
            put(&mut w, b, rng.below(2));
        }
        match &o.core {
            Core::Reg(fl, _) | Core::Pred(fl) | Core::Sb(fl) | Core::SbList(fl) | Core::Cc(fl) => {
                let v = match &o.core {
                    Core::Sb(_) => rng.below(6),
                    Core::SbList(_) => rng.below(64),
                    Core::Cc(_) => rng.below(32),
                    _ => rng.next(),
                };
                put(&mut w, fl, v)
            }
            Core::Int(fl, _) => put(&mut w, fl, rng.next()),
            Core::Float(fl, wide, shift) => {
                let v = rng.next() & ((1u128 << fl.width()) - 1) as u64;
                let bits = v << shift;
                let nan = if *wide { f64::from_bits(bits).is_nan() } else { f32::from_bits(bits as u32).is_nan() };
                if nan {
                    return None;
                }
                put(&mut w, fl, v)
            }
            Core::CBuf(_) => {
                put(&mut w, &Field::at(20, 14), rng.next());
                put(&mut w, &Field::at(34, 5), rng.below(18));
            }
            Core::Mem(b, off, ..) => {
                put(&mut w, b, rng.next());
                put(&mut w, off, rng.next());
            }
            Core::Ldc => {
                put(&mut w, &Field::at(8, 8), rng.next());
                put(&mut w, &Field::at(20, 16), rng.next());
                put(&mut w, &Field::at(36, 5), rng.below(18));
            }
            Core::Target => {
                // A target in the first MiB, any instruction slot.
                let t = 8 * rng.below(0x20000) as i64;
                put(&mut w, &Field::at(20, 24), (t - (addr as i64 + 8)) as u64);
            }
            Core::SReg => {
                let t = ptx2sass::sass::encode::table::SREGS;
                put(&mut w, &Field::at(20, 8), t[rng.below(t.len() as u64) as usize].0)
            }
            Core::Word(fl, table) => put(&mut w, fl, table[rng.below(table.len() as u64) as usize].0),
            Core::Lit(_) => {}
        }
    }
    f.matches(w).then_some(w)
}

/// nvdisasm's raw-mode text of `words` (placed three to a bundle with neutral control
/// fields), by address.
fn nvdisasm(bin: &std::path::Path, words: &[u64], dir: &std::path::Path) -> HashMap<u32, String> {
    let mut bytes = vec![];
    for b in words.chunks(3) {
        // stall 1, no yield, no scoreboards, in each slot.
        let c: u64 = 0x7f1 | 0x7f1 << 21 | 0x7f1 << 42;
        bytes.extend_from_slice(&c.to_le_bytes());
        for k in 0..3 {
            bytes.extend_from_slice(&b.get(k).copied().unwrap_or(0x50b0000000070f00).to_le_bytes());
        }
    }
    let p = dir.join("words.bin");
    std::fs::write(&p, &bytes).unwrap();
    let out = Command::new(bin.join("nvdisasm")).args(["-b", "SM50", "-novliw"]).arg(&p).output().unwrap();
    let mut m = HashMap::new();
    // Rejected words: `... at address 0x0000b208`.
    for l in String::from_utf8_lossy(&out.stderr).lines() {
        if let Some(a) = l.split("at address 0x").nth(1).and_then(|a| u32::from_str_radix(a.trim(), 16).ok()) {
            m.insert(a, format!("REJECTED: {l}"));
        }
    }
    if !m.is_empty() {
        return m;
    }
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let l = l.trim();
        let Some(rest) = l.strip_prefix("/*") else { continue };
        let Some((a, t)) = rest.split_once("*/") else { continue };
        let Ok(a) = u32::from_str_radix(a, 16) else { continue };
        m.insert(a, t.trim().trim_end_matches(';').trim().to_string());
    }
    m
}

/// nvdisasm text → our spelling: no `.reuse`, no space before commas, floats by value, a
/// branch target at a bundle's address named by the bundle's first instruction (§3).
fn normalize(s: &str, branch: bool) -> Vec<String> {
    let s = s.replace(".reuse", "").replace(" ,", ",");
    let s = s.trim();
    let (guard, s) = match s.strip_prefix('@') {
        Some(r) => {
            let (g, rest) = r.split_once(' ').unwrap_or((r, ""));
            (g.to_string(), rest.trim())
        }
        None => (String::new(), s),
    };
    let (head, ops) = s.split_once(' ').unwrap_or((s, ""));
    let mut out = vec![guard, head.to_string()];
    let n = ops.split(", ").filter(|o| !o.trim().is_empty()).count();
    for (k, o) in ops.split(", ").filter(|o| !o.trim().is_empty()).enumerate() {
        let o = o.trim();
        let t = if branch && k + 1 == n && o.starts_with("0x") {
            let t = u32::from_str_radix(&o[2..], 16).unwrap_or(0);
            format!("0x{:x}", if t % 32 == 0 { t + 8 } else { t })
        } else {
            match o.parse::<f64>() {
                Ok(v) if !o.starts_with("0x") && !o.starts_with("-0x") => format!("{v:e}"),
                _ => o.to_string(),
            }
        };
        out.push(t);
    }
    out
}

#[test]
fn every_form_with_random_fields_matches_nvdisasm() {
    let bin = match nvidia::tools() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let cases: usize = std::env::var("ENCODE_TABLE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24);
    let seed: u64 = std::env::var("ENCODE_TABLE_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x005e_ed50);
    let mut rng = Rng(seed | 1);
    let table = forms();
    let mut words = vec![];
    let mut origin = vec![];
    for (k, f) in table.forms.iter().enumerate() {
        let mut made = 0;
        let mut tries = 0;
        while made < cases && tries < cases * 20 {
            tries += 1;
            let addr = ptx2sass::sass::encode::address(words.len());
            if let Some(w) = random_word(f, &mut rng, addr) {
                words.push(w);
                origin.push(k);
                made += 1;
            }
        }
        assert!(made > 0, "no instance of `{}`", f.template);
    }
    let dir = std::env::temp_dir().join(format!("ptx2sass-encode-table-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let theirs = nvdisasm(&bin, &words, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let mut bad = vec![];
    let mut forms_seen = std::collections::HashSet::new();
    for (i, &w) in words.iter().enumerate() {
        let addr = ptx2sass::sass::encode::address(i);
        let f = &table.forms[origin[i]];
        let Some(want) = theirs.get(&addr) else {
            bad.push(format!("{w:#018x} ({}): nvdisasm printed nothing", f.template));
            continue;
        };
        let Some(d) = decode(w, addr) else {
            bad.push(format!("{w:#018x} ({}): we decode nothing, nvdisasm `{want}`", f.template));
            continue;
        };
        let ours = d.text();
        let branch = d.target.is_some();
        if normalize(&ours, branch) != normalize(want, branch) {
            bad.push(format!("{w:#018x} ({}): ours `{ours}`, nvdisasm `{want}`", f.template));
            continue;
        }
        forms_seen.insert(origin[i]);
        // And back to the same word, except a raw target at a bundle's first slot (ptxas
        // never encodes one; we encode the bundle address, §3).
        if d.target.is_some_and(|t| t % 32 == 8) {
            continue;
        }
        let listing = format!("\t\tFunction : f\n        /*{addr:04x}*/  {ours}  ?WAIT1 ;\n");
        let t = &text::parse(&listing).unwrap()[0];
        match encode_text(&t.instrs[0], addr, &|_| None) {
            Ok((e, _)) if e == w => {}
            Ok((e, _)) => bad.push(format!("{w:#018x} ({}): `{ours}` encodes to {e:#018x}", f.template)),
            Err(m) => bad.push(format!("{w:#018x} ({}): `{ours}` does not encode: {m}", f.template)),
        }
    }
    eprintln!(
        "encoding table: {} forms, {} random words through nvdisasm, {} mismatches",
        table.forms.len(),
        words.len(),
        bad.len()
    );
    bad.sort_by_key(|b| !b.contains("REJECTED"));
    let mut by_form: std::collections::BTreeMap<String, usize> = Default::default();
    for b in &bad {
        *by_form.entry(b.split(['(', ')']).nth(1).unwrap_or("").to_string()).or_default() += 1;
    }
    for (f, n) in &by_form {
        eprintln!("{n:5} mismatches in `{f}`");
    }
    if let Ok(p) = std::env::var("ENCODE_TABLE_DUMP") {
        let _ = std::fs::write(p, bad.join("\n"));
    }
    bad.truncate(60);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
