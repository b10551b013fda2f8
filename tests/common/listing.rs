//! SASS listings for lowering-rule tests (`tests/lowering_rules.rs`, `float_rules.rs`,
//! `lowering_sync.rs`): compile, strip addresses and control fields, normalize register
//! numbers, and look for instruction runs.
#![allow(dead_code)]

use ptx2sass::driver::{self, Emit, Options};

/// The SASS instructions of `src`, without addresses, control annotations or the `DEPBAR`s
/// the scoreboard inserts, in the lowering's order (no list scheduling, so that the
/// sequence a rule produces stays adjacent); `normalized` replaces register numbers
/// ([`normalize`]). Panics with the rendered diagnostics if `src` does not compile.
pub fn sass_text(src: &str, normalized: bool) -> Vec<String> {
    let mut opts = Options { emit: Emit::Sass, ..Options::default() };
    opts.regalloc.verify = true;
    opts.sched.reorder = false;
    let out = match driver::compile(src, &opts) {
        Ok(o) => o,
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("test", src).render_all(&d)),
    };
    out.text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("/*").and_then(|l| l.split_once("*/")).map(|(_, i)| i.trim()))
        .map(|i| i.split("  ").next().unwrap_or(i).trim_end_matches(" ;").to_string())
        .map(|i| if normalized { normalize(&i) } else { i })
        .filter(|i| !i.starts_with("DEPBAR"))
        .collect()
}

/// [`sass_text`] with registers normalized.
pub fn sass(src: &str) -> Vec<String> {
    sass_text(src, true)
}

/// `R12` -> `R#`, `P3` -> `P#` (but not `PT`, `RZ`).
pub fn normalize(s: &str) -> String {
    let mut out = String::new();
    let b = s.as_bytes();
    let mut k = 0;
    while k < b.len() {
        let c = b[k];
        let word_start = k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
        if word_start && (c == b'R' || c == b'P') && k + 1 < b.len() && b[k + 1].is_ascii_digit() {
            out.push(c as char);
            out.push('#');
            k += 1;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
        } else {
            out.push(c as char);
            k += 1;
        }
    }
    out
}

/// The error messages of `src`, which must fail to compile.
pub fn errors(src: &str) -> Vec<String> {
    match driver::compile(src, &Options { emit: Emit::Sass, ..Options::default() }) {
        Ok(_) => panic!("compiled, expected an error"),
        Err(d) => d.iter().filter(|d| d.is_error()).map(|d| d.message.clone()).collect(),
    }
}

/// Asserts that `want` occurs in `code` as a contiguous run.
#[track_caller]
pub fn assert_run(code: &[String], want: &[&str]) {
    let found = code.windows(want.len()).any(|w| w.iter().zip(want).all(|(a, b)| a == b));
    assert!(found, "expected\n  {}\nin\n  {}", want.join("\n  "), code.join("\n  "));
}

/// Asserts that `want` is one of the instructions of `code`.
#[track_caller]
pub fn assert_has(code: &[String], want: &str) {
    assert!(code.iter().any(|c| c == want), "expected `{want}` in\n  {}", code.join("\n  "));
}

/// The instructions of `code` starting with `prefix`.
pub fn count(code: &[String], prefix: &str) -> usize {
    code.iter().filter(|c| c.starts_with(prefix)).count()
}
