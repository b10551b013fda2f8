//! Source mapping: from a SASS instruction's provenance ([`Instr::origin`], the byte offset
//! of the PTX statement it implements) to the PTX line and statement, and to the CUDA/OpenCL
//! source line named by the PTX's `.loc` directives (PTX ISA 11.5.3 `.file`, 11.5.4 `.loc`;
//! emitted by clang `-g`/`-gline-tables-only` and nvcc `-lineinfo`).
//!
//! [`annotated_listing`] prints a program with the PTX statement before each run of
//! instructions that implement it, in the style of `cuobjdump -sass` on a cubin built with
//! line info (which prints `//## File "k.cu", line 12` before such runs). The annotations
//! are `//` comment lines, which [`crate::sass::text::parse`] ignores.
//!
//! [`Instr::origin`]: crate::sass::instr::Instr::origin

use super::program::{Program, address};
use crate::ptx::lexer::{Tok, Tokens};
use std::collections::HashMap;
use std::fmt::Write;

/// Where one position of the PTX text comes from in the original source (`.loc`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLine {
    /// The file named by `.file N "name"` (or `file N` when no `.file` names it).
    pub file: String,
    /// 1-based line.
    pub line: u32,
}

/// Offsets → PTX lines, statements and `.loc` source lines for one PTX file. Built in one
/// pass over the text; every query is a binary search.
#[derive(Clone, Debug)]
pub struct SourceMap<'a> {
    src: &'a str,
    /// Byte offset of the start of each line.
    line_starts: Vec<u32>,
    /// `.loc` directives in source order: (offset, file number, line).
    locs: Vec<(u32, u32, u32)>,
    /// `.file` names by number.
    files: HashMap<u32, String>,
}

impl<'a> SourceMap<'a> {
    /// Indexes `src`. `.loc` and `.file` are read from the lexer's debug-line tokens (so a
    /// directive inside a comment does not count); malformed ones are skipped (the front
    /// end ignores them too).
    pub fn new(src: &'a str) -> SourceMap<'a> {
        let mut line_starts = vec![0u32];
        line_starts.extend(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(k, _)| k as u32 + 1));
        let (mut locs, mut files) = (vec![], HashMap::new());
        for (lo, tok, _) in Tokens::new(src).flatten() {
            let Tok::DebugLine(text) = tok else { continue };
            let mut words = text.split_whitespace();
            let kind = words.next().unwrap_or("");
            let num = |w: Option<&str>| w.and_then(|w| w.trim_end_matches(',').parse::<u32>().ok());
            match kind {
                ".loc" => {
                    if let (Some(f), Some(l)) = (num(words.next()), num(words.next())) {
                        locs.push((lo as u32, f, l));
                    }
                }
                ".file" => {
                    if let Some(f) = num(words.next()) {
                        let rest = text.splitn(3, char::is_whitespace).nth(2).unwrap_or("");
                        if let Some(name) = rest.split('"').nth(1) {
                            files.insert(f, name.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        SourceMap { src, line_starts, locs, files }
    }

    /// The 1-based PTX line of byte offset `at`.
    pub fn line(&self, at: u32) -> u32 {
        self.line_starts.partition_point(|&s| s <= at) as u32
    }

    /// The PTX statement starting at `at`: its text up to and including the `;` (or the end
    /// of the line), whitespace collapsed, at most 100 characters.
    pub fn statement(&self, at: u32) -> String {
        let rest = self.src.get(at as usize..).unwrap_or("");
        let end = rest.find([';', '\n', '{']).map_or(rest.len(), |k| k + usize::from(rest.as_bytes()[k] == b';'));
        let text: Vec<&str> = rest[..end].split_whitespace().collect();
        let text = text.join(" ");
        match text.char_indices().nth(100) {
            Some((k, _)) => format!("{}...", &text[..k]),
            None => text,
        }
    }

    /// The source line of the last `.loc` before `at`, if any.
    pub fn source_line(&self, at: u32) -> Option<SourceLine> {
        let k = self.locs.partition_point(|&(o, _, _)| o <= at);
        let &(_, f, line) = self.locs.get(k.checked_sub(1)?)?;
        let file = self.files.get(&f).cloned().unwrap_or_else(|| format!("file {f}"));
        Some(SourceLine { file, line })
    }
}

/// The program's listing (its `Display`) with, before each run of instructions that come
/// from one PTX statement, a comment `// NAME:LINE  STATEMENT` and, when the PTX has `.loc`
/// directives, `// FILE:LINE` of the source line. `name` is how the PTX file is named.
pub fn annotated_listing(program: &Program, map: &SourceMap, name: &str) -> String {
    let text = program.to_string();
    let mut out = String::with_capacity(text.len() * 2);
    let mut funcs = program.functions.iter();
    let mut code: &[super::program::Scheduled] = &[];
    let mut k = 0;
    let mut last: Option<(u32, Option<SourceLine>)> = None;
    for line in text.lines() {
        if line.starts_with("\t\tFunction : ") {
            code = funcs.next().map_or(&[], |f| &f.code);
            k = 0;
            last = None;
        } else if line.trim_start().starts_with("/*") && k < code.len() {
            debug_assert!(line.contains(&format!("/*{:04x}*/", address(k))));
            if let Some(at) = code[k].instr.origin {
                let here = (map.line(at), map.source_line(at));
                if last.as_ref() != Some(&here) {
                    if let Some(s) = &here.1
                        && last.as_ref().and_then(|l| l.1.as_ref()) != Some(s)
                    {
                        let _ = writeln!(out, "        // {}:{}", s.file, s.line);
                    }
                    let _ = writeln!(out, "        // {name}:{}  {}", here.0, map.statement(at));
                    last = Some(here);
                }
            }
            k += 1;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The mapping itself, one line per PTX statement and function:
/// `FUNCTION  LINE  STATEMENT  -> ADDR ADDR ...` (addresses of the SASS instructions that
/// implement it, in code order), sorted by PTX line. Instructions without provenance are
/// listed last as `-`.
pub fn mapping_text(program: &Program, map: &SourceMap) -> String {
    let mut out = String::new();
    for f in &program.functions {
        let mut by_line: std::collections::BTreeMap<Option<u32>, (String, Vec<usize>)> = Default::default();
        for (k, s) in f.code.iter().enumerate() {
            let key = s.instr.origin.map(|at| map.line(at));
            let e = by_line
                .entry(key)
                .or_insert_with(|| (s.instr.origin.map(|at| map.statement(at)).unwrap_or_default(), vec![]));
            e.1.push(address(k));
        }
        let mut rows: Vec<_> = by_line.into_iter().collect();
        let unattributed = usize::from(rows.first().is_some_and(|r| r.0.is_none()));
        rows.rotate_left(unattributed);
        for (line, (stmt, addrs)) in rows {
            let addrs: Vec<String> = addrs.iter().map(|a| format!("{a:04x}")).collect();
            let line = line.map_or("-".to_string(), |l| l.to_string());
            let _ = writeln!(out, "{}  {line:>4}  {stmt}  -> {}", f.name, addrs.join(" "));
        }
    }
    out
}
