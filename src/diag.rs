//! Diagnostics shared by every stage: an error or warning with a primary source span,
//! optional secondary spans and notes, rendered `file:line:col` with a caret line by
//! codespan-reporting.
//!
//! Stages never panic on bad input: they return [`Diag`]s, and the driver renders them and
//! exits with status 1.
// Diagnostics quote hostile input: no panicking shortcuts here (issue 20,
// docs/fuzzing.md "No-panic discipline"). Slicing of the source text is at char
// boundaries found by `floor_boundary`, `find` and `rfind`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ptx::ast::Span;
use codespan_reporting::diagnostic::{Diagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Compilation continues; reported to the user.
    Warning,
    /// Compilation fails after the current stage.
    Error,
}

/// One diagnostic: a message, where it applies, and what would be valid instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Diag {
    /// Error or warning.
    pub severity: Severity,
    /// One-line message, e.g. "unknown opcode `lod`".
    pub message: String,
    /// The offending text, with a short label (e.g. "expected `;` here").
    pub primary: (Span, String),
    /// Related places (e.g. "first defined here").
    pub secondary: Vec<(Span, String)>,
    /// Extra lines: what was expected, which rule applies.
    pub notes: Vec<String>,
}

impl Diag {
    /// An error at `span` with `message`; the label repeats nothing by default.
    pub fn error(span: Span, message: impl Into<String>) -> Diag {
        Diag {
            severity: Severity::Error,
            message: message.into(),
            primary: (span, String::new()),
            secondary: vec![],
            notes: vec![],
        }
    }

    /// A warning at `span`.
    pub fn warning(span: Span, message: impl Into<String>) -> Diag {
        Diag { severity: Severity::Warning, ..Diag::error(span, message) }
    }

    /// Sets the label under the primary caret.
    pub fn label(mut self, label: impl Into<String>) -> Diag {
        self.primary.1 = label.into();
        self
    }

    /// Adds a secondary span with a label.
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diag {
        self.secondary.push((span, label.into()));
        self
    }

    /// Adds a note line.
    pub fn note(mut self, note: impl Into<String>) -> Diag {
        self.notes.push(note.into());
        self
    }

    /// True for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The source file diagnostics refer to: a display name and its text.
pub struct SourceFile<'a> {
    files: SimpleFile<&'a str, &'a str>,
}

impl<'a> SourceFile<'a> {
    /// `name` is what the user passed (a path, or `<stdin>`); `text` the decoded source.
    pub fn new(name: &'a str, text: &'a str) -> SourceFile<'a> {
        SourceFile { files: SimpleFile::new(name, text) }
    }

    /// Renders one diagnostic as plain text: `error: msg`, ` --> file:line:col`, the source
    /// line with carets under the span, then notes. A quoted line longer than
    /// [`QUOTED_CHARS`] shows only a window around the spans (`...` marks the cut), with the
    /// real line and column numbers.
    pub fn render(&self, d: &Diag) -> String {
        let severity = match d.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
        };
        let text = self.files.source();
        let spans: Vec<(Span, &str, bool)> = std::iter::once((d.primary.0, d.primary.1.as_str(), true))
            .chain(d.secondary.iter().map(|(s, m)| (*s, m.as_str(), false)))
            .collect();
        let config = term::Config::default();
        let long = spans.iter().any(|(s, _, _)| line_of(text, s.lo as usize).len() > QUOTED_CHARS);
        let fallback =
            || format!("{:?}: {} (at bytes {}..{})\n", d.severity, d.message, d.primary.0.lo, d.primary.0.hi);
        if !long {
            let labels: Vec<Label<()>> = spans
                .iter()
                .map(|(s, m, p)| {
                    if *p { Label::primary((), s.range()) } else { Label::secondary((), s.range()) }.with_message(*m)
                })
                .collect();
            let diagnostic =
                Diagnostic::new(severity).with_message(&d.message).with_labels(labels).with_notes(d.notes.clone());
            return term::emit_into_string(&config, &self.files, &diagnostic).unwrap_or_else(|_| fallback());
        }
        let window = Window::new(self.files.name(), text, spans.iter().map(|(s, _, _)| *s));
        let labels: Vec<Label<()>> = spans
            .iter()
            .map(|(s, m, p)| {
                let r = window.map(*s);
                if *p { Label::primary((), r) } else { Label::secondary((), r) }.with_message(*m)
            })
            .collect();
        let diagnostic =
            Diagnostic::new(severity).with_message(&d.message).with_labels(labels).with_notes(d.notes.clone());
        term::emit_into_string(&config, &window, &diagnostic).unwrap_or_else(|_| fallback())
    }

    /// Renders a list of diagnostics, errors and warnings in source order; after
    /// [`MAX_RENDERED`] of them, one line says how many more there are (as compilers cap
    /// their error output).
    pub fn render_all(&self, diags: &[Diag]) -> String {
        let mut sorted: Vec<&Diag> = diags.iter().collect();
        sorted.sort_by_key(|d| (d.primary.0.lo, d.primary.0.hi));
        let mut out: String = sorted.iter().take(MAX_RENDERED).map(|d| self.render(d)).collect();
        if sorted.len() > MAX_RENDERED {
            out += &format!("note: {} more diagnostics not shown\n", sorted.len().saturating_sub(MAX_RENDERED));
        }
        out
    }
}

/// Diagnostics rendered at most per run (the rest are counted), like a compiler's error limit.
pub const MAX_RENDERED: usize = 50;

/// Characters of a source line quoted at most; a longer line shows a window around the spans.
pub const QUOTED_CHARS: usize = 160;

/// The line of `text` holding byte `at`.
fn line_of(text: &str, at: usize) -> &str {
    let at = floor_boundary(text, at.min(text.len()));
    let start = text[..at].rfind('\n').map_or(0, |k| k.saturating_add(1));
    let end = text[at..].find('\n').map_or(text.len(), |k| at.saturating_add(k));
    &text[start..end]
}

/// The largest char boundary of `s` at or below `i`.
fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i = i.saturating_sub(1);
    }
    i
}

/// A view of the lines of a source that some spans touch, each cut to a window of at most
/// [`QUOTED_CHARS`] characters around its spans; reports the real line and column numbers
/// (a codespan `Files` of its own).
struct Window<'a> {
    name: &'a str,
    /// The windows, one per line, each ending in `\n`.
    text: String,
    /// Per window: (byte in `text` where it starts, real 0-based line, real byte where the
    /// line starts, real byte where the quoted part starts, length of the `...` prefix, real
    /// byte where the quoted part ends).
    lines: Vec<(usize, usize, usize, usize, usize, usize)>,
    /// The real source (for columns).
    real: &'a str,
}

impl<'a> Window<'a> {
    fn new(name: &'a str, real: &'a str, spans: impl Iterator<Item = Span>) -> Window<'a> {
        let mut by_line: Vec<(usize, usize, usize)> = vec![]; // (line start, lo, hi) per line
        for s in spans {
            let lo = floor_boundary(real, (s.lo as usize).min(real.len()));
            let start = real[..lo].rfind('\n').map_or(0, |k| k.saturating_add(1));
            let end = real[lo..].find('\n').map_or(real.len(), |k| lo.saturating_add(k));
            let hi = floor_boundary(real, (s.hi as usize).clamp(lo, end));
            match by_line.iter_mut().find(|l| l.0 == start) {
                Some(l) => {
                    l.1 = l.1.min(lo);
                    l.2 = l.2.max(hi);
                }
                None => by_line.push((start, lo, hi)),
            }
        }
        by_line.sort();
        let mut text = String::new();
        let mut lines = vec![];
        for (start, lo, hi) in by_line {
            let end = real[start..].find('\n').map_or(real.len(), |k| start.saturating_add(k));
            // A window of QUOTED_CHARS bytes: from 40 before the spans (or the line start).
            let from = floor_boundary(real, lo.saturating_sub(40).max(start));
            let to = floor_boundary(
                real,
                from.saturating_add(QUOTED_CHARS).max(hi.min(from.saturating_add(QUOTED_CHARS))).min(end),
            );
            let prefix = if from > start { "..." } else { "" };
            let line = real[..start].matches('\n').count();
            lines.push((text.len(), line, start, from, prefix.len(), to));
            text += prefix;
            text += &real[from..to];
            if to < end {
                text += "...";
            }
            text.push('\n');
        }
        Window { name, text, lines, real }
    }

    /// A real span, as a range of the window text (clipped to its window).
    fn map(&self, s: Span) -> std::ops::Range<usize> {
        let lo = floor_boundary(self.real, (s.lo as usize).min(self.real.len()));
        let start = self.real[..lo].rfind('\n').map_or(0, |k| k.saturating_add(1));
        let Some(&(at, _, _, from, pre, to)) = self.lines.iter().find(|l| l.2 == start) else {
            return 0..0;
        };
        let clip = |x: usize| at.saturating_add(pre).saturating_add(x.clamp(from, to).saturating_sub(from));
        clip(lo)..clip((s.hi as usize).max(lo))
    }

    #[allow(clippy::type_complexity)]
    fn window_of(
        &self,
        line_index: usize,
    ) -> Result<(usize, usize, usize, usize, usize, usize), codespan_reporting::files::Error> {
        self.lines
            .get(line_index)
            .copied()
            .ok_or(codespan_reporting::files::Error::LineTooLarge { given: line_index, max: self.lines.len() })
    }
}

impl<'a> codespan_reporting::files::Files<'a> for Window<'a> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, codespan_reporting::files::Error> {
        Ok(&self.text)
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self.lines.iter().rposition(|l| l.0 <= byte_index).unwrap_or(0))
    }

    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, codespan_reporting::files::Error> {
        Ok(self.window_of(line_index)?.1.saturating_add(1))
    }

    fn column_number(
        &'a self,
        (): (),
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, codespan_reporting::files::Error> {
        let (at, _, line_start, from, pre, _) = self.window_of(line_index)?;
        let real = floor_boundary(
            self.real,
            from.saturating_add(byte_index.saturating_sub(at.saturating_add(pre))).min(self.real.len()),
        );
        Ok(self.real[line_start.min(real)..real].chars().count().saturating_add(1))
    }

    fn line_range(
        &'a self,
        (): (),
        line_index: usize,
    ) -> Result<std::ops::Range<usize>, codespan_reporting::files::Error> {
        let (at, ..) = self.window_of(line_index)?;
        let end = self.lines.get(line_index.saturating_add(1)).map_or(self.text.len(), |l| l.0);
        Ok(at..end)
    }
}

/// 1-based `(line, column)` of a byte offset, columns counted in characters.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count().saturating_add(1);
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()).saturating_add(1);
    (line, col)
}
