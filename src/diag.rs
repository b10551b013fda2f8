//! Diagnostics shared by every stage: an error or warning with a primary source span,
//! optional secondary spans and notes, rendered `file:line:col` with a caret line by
//! codespan-reporting.
//!
//! Stages never panic on bad input: they return [`Diag`]s, and the driver renders them and
//! exits with status 1.

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
    /// line with carets under the span, then notes.
    pub fn render(&self, d: &Diag) -> String {
        let severity = match d.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
        };
        let mut labels = vec![Label::primary((), d.primary.0.range()).with_message(&d.primary.1)];
        labels.extend(d.secondary.iter().map(|(s, m)| Label::secondary((), s.range()).with_message(m)));
        let diagnostic =
            Diagnostic::new(severity).with_message(&d.message).with_labels(labels).with_notes(d.notes.clone());
        let config = term::Config::default();
        term::emit_into_string(&config, &self.files, &diagnostic).unwrap_or_else(|_| {
            format!("{:?}: {} (at bytes {}..{})\n", d.severity, d.message, d.primary.0.lo, d.primary.0.hi)
        })
    }

    /// Renders a list of diagnostics, errors and warnings in source order.
    pub fn render_all(&self, diags: &[Diag]) -> String {
        let mut sorted: Vec<&Diag> = diags.iter().collect();
        sorted.sort_by_key(|d| (d.primary.0.lo, d.primary.0.hi));
        sorted.iter().map(|d| self.render(d)).collect()
    }
}

/// 1-based `(line, column)` of a byte offset, columns counted in characters.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}
