//! PTX lexer (PTX ISA 4.0-8.x, chapter 4 "Syntax").
//!
//! Produces `(start, Tok, end)` triples (byte offsets) for the lalrpop grammar in
//! `grammar/ptx.lalrpop`. Whitespace and `//` / `/* */` comments are trivia. Directive
//! keywords used by the module grammar (`.reg`, `.entry`, `.global`, ...) and type words
//! (`.b32`, `.f64`, ...) get tokens of their own; any other dot word (`.rn`, `.L2::64B`,
//! `.shared::cta`) is a [`Tok::Dot`]. Instruction modifiers are lexed as the dot words that
//! follow the opcode identifier; the grammar accepts every dot token as a modifier.
//!
//! `.section` bodies (DWARF data) and `.loc` / `.file` lines are swallowed here: they are
//! accepted and ignored, as the issue asks for debug directives.

use super::ast::Span;
use logos::{Lexer, Logos};

/// Why a stretch of input is not a PTX token (its `Display` is the diagnostic message).
#[derive(Debug, Clone, PartialEq, Default, thiserror::Error)]
pub enum LexError {
    /// A character that starts no PTX token.
    #[default]
    #[error("invalid token")]
    InvalidToken,
    /// A `.section` whose `{` is never closed.
    #[error("unterminated `.section`: its `{{` is never closed")]
    UnterminatedSection,
    /// A `/*` comment that is never closed.
    #[error("unterminated comment: `/*` is never closed")]
    UnterminatedComment,
    /// An integer literal that does not fit in 64 bits, or a malformed float.
    #[error("number out of range")]
    BadNumber,
    /// A `.version` that is not `major.minor`.
    #[error("malformed `.version`: expected `major.minor`, e.g. `7.8`")]
    BadVersion,
    /// A `.x`-style component longer than one letter.
    #[error("a vector component is one letter: `.x`, `.y`, `.z` or `.w`")]
    BadComponent,
    /// `name(...)` in an initializer where `name` is not `generic`.
    #[error("only `generic(name)` may be written with parentheses in an initializer")]
    NotGeneric,
    /// A dot word after `]` other than `.unified`.
    #[error("only `.unified` may follow an address operand")]
    NotUnified,
    /// A `.param .texref`/`.samplerref`/`.surfref` parameter (issue 18: not lowered yet).
    #[error(
        "not supported yet: `.texref`, `.samplerref` and `.surfref` parameters (texture references); ptx2sass reads texture objects, `.u64` handles (docs/textures.md)"
    )]
    OpaqueParam,
}

/// A lexical or literal error with its span (the error type of the lalrpop parser).
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// What is wrong.
    pub kind: LexError,
    /// Where.
    pub span: Span,
}

/// One PTX token. Text-carrying variants borrow from the source; punctuation and keyword
/// variants are named after the text they match.
#[allow(missing_docs)]
#[derive(Logos, Debug, Clone, Copy, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip r"/\*([^*]|\*+[^*/])*\*+/")]
pub enum Tok<'a> {
    #[token(";")]
    Semi,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("@")]
    At,
    #[token("!")]
    Bang,
    #[token("|")]
    Pipe,
    #[token("=")]
    Eq,
    /// The vector sink `_` (PTX ISA 9.7.9.8 ld: "sink symbol").
    #[token("_")]
    Sink,
    /// `/*` with no closing `*/`.
    #[token("/*", unterminated_comment)]
    UnterminatedComment,

    // ---- directive keywords -----------------------------------------------------------
    #[token(".version")]
    Version,
    #[token(".target")]
    Target,
    #[token(".address_size")]
    AddressSize,
    #[token(".visible")]
    Visible,
    #[token(".extern")]
    Extern,
    #[token(".weak")]
    Weak,
    #[token(".common")]
    Common,
    #[token(".entry")]
    Entry,
    #[token(".func")]
    Func,
    #[token(".reg")]
    Reg,
    #[token(".param")]
    Param,
    #[token(".local")]
    Local,
    #[token(".shared")]
    Shared,
    #[token(".global")]
    Global,
    #[token(".const")]
    Const,
    #[token(".align")]
    Align,
    #[token(".ptr")]
    Ptr,
    #[token(".maxntid")]
    Maxntid,
    #[token(".reqntid")]
    Reqntid,
    #[token(".minnctapersm")]
    Minnctapersm,
    #[token(".maxnctapersm")]
    Maxnctapersm,
    #[token(".maxnreg")]
    Maxnreg,
    #[token(".noreturn")]
    Noreturn,
    #[token(".pragma")]
    Pragma,
    #[token(".callprototype")]
    Callprototype,
    #[token(".alias")]
    Alias,
    #[token(".attribute")]
    Attribute,
    /// A whole `.loc ...` or `.file ...` line (debug information, ignored).
    #[regex(r"\.(loc|file)[ \t][^\n]*", allow_greedy = true)]
    DebugLine(&'a str),
    /// A whole `.section NAME { ... }` (DWARF data, ignored).
    #[token(".section", skip_section)]
    Section,

    /// A fundamental type word (PTX ISA 5.2.1), e.g. `.b32`, `.f64`, `.pred`.
    #[regex(r"\.(b8|b16|b32|b64|b128|u8|u16|u32|u64|s8|s16|s32|s64|f16|f16x2|bf16|bf16x2|f32|f64|pred)")]
    Type(&'a str),
    /// A vector width word: `.v2`, `.v4`, `.v8`.
    #[regex(r"\.v(2|4|8)")]
    Vec(&'a str),
    /// Any other dot word: instruction modifiers (`.rn`, `.L2::cache_hint`, `.shared::cta`),
    /// special-register components (`.x`) and directives the grammar does not name.
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z0-9_]+)*")]
    // Texture and surface geometries that start with a digit (PTX ISA 9.7.9.3 `tex`):
    // `.1d`, `.2d`, `.3d`, `.2dms`.
    #[regex(r"\.([123]d|2dms)")]
    Dot(&'a str),

    /// Identifier (PTX ISA 4.4): `[a-zA-Z][a-zA-Z0-9_$]*` or `[_$%][a-zA-Z0-9_$]+`.
    #[regex(r"[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+")]
    Ident(&'a str),

    /// Integer literal in any PTX radix (PTX ISA 4.5.1): decimal, `0x` hex, `0` octal,
    /// `0b` binary, with an optional `U` suffix.
    #[regex(r"(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?")]
    Int(&'a str),
    /// Floating-point literal: `0f` + 8 hex digits (f32 bits), `0d` + 16 hex digits (f64
    /// bits), or decimal with a fraction and/or exponent.
    #[regex(r"0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16}|[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+")]
    Float(&'a str),
    /// String literal (`.file`, `.pragma`).
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str(&'a str),
    /// Stands for a lexical error in the token stream, so the parser can recover after it;
    /// the error itself is reported by [`Tokens`]. Never produced by the logos automaton.
    Bad,
}

/// A `/*` without `*/`: the rest of the file is comment; report it once.
fn unterminated_comment<'a>(lex: &mut Lexer<'a, Tok<'a>>) -> Result<(), LexError> {
    lex.bump(lex.remainder().len());
    Err(LexError::UnterminatedComment)
}

/// Consumes `NAME { ... }` after `.section`, honouring nested braces and string literals.
fn skip_section<'a>(lex: &mut Lexer<'a, Tok<'a>>) -> Result<(), LexError> {
    let rest = lex.remainder();
    let bytes = rest.as_bytes();
    let mut depth = 0usize;
    let mut seen_open = false;
    // Byte positions with the bytes; strings and `//` comments are consumed whole, so that
    // braces inside them do not count.
    let mut it = bytes.iter().copied().enumerate().peekable();
    while let Some((i, b)) = it.next() {
        match b {
            b'{' => {
                depth = depth.saturating_add(1);
                seen_open = true;
            }
            b'}' if depth > 0 => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    lex.bump(i.saturating_add(1));
                    return Ok(());
                }
            }
            b'"' => {
                // To the closing quote; a backslash escapes the next byte.
                while let Some((_, c)) = it.next() {
                    match c {
                        b'"' => break,
                        b'\\' => {
                            it.next();
                        }
                        _ => {}
                    }
                }
            }
            b'/' if it.peek().is_some_and(|&(_, c)| c == b'/') => {
                // To the end of the line, the newline included.
                for (_, c) in it.by_ref() {
                    if c == b'\n' {
                        break;
                    }
                }
            }
            b';' if !seen_open => {
                // `.section .name;` without a body is not PTX; stop here and let the
                // grammar report the unexpected `;`.
                lex.bump(i);
                return Ok(());
            }
            _ => {}
        }
    }
    lex.bump(bytes.len());
    Err(LexError::UnterminatedSection)
}

/// The token stream the lalrpop parser consumes: `(start, token, end)` byte offsets. A
/// lexical error is recorded in [`Tokens::errors`] and replaced by [`Tok::Bad`], so that
/// statement-level recovery keeps going and one run reports every error.
pub struct Tokens<'a> {
    inner: logos::SpannedIter<'a, Tok<'a>>,
    /// Lexical errors seen so far, in source order.
    pub errors: Vec<SyntaxError>,
}

impl<'a> Tokens<'a> {
    /// Starts lexing `src`.
    pub fn new(src: &'a str) -> Tokens<'a> {
        Tokens { inner: Tok::lexer(src).spanned(), errors: vec![] }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Result<(usize, Tok<'a>, usize), SyntaxError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (tok, span) = self.inner.next()?;
        Some(Ok(match tok {
            Ok(t) => (span.start, t, span.end),
            Err(kind) => {
                self.errors.push(SyntaxError { kind, span: Span::new(span.start, span.end) });
                (span.start, Tok::Bad, span.end)
            }
        }))
    }
}

impl Tok<'_> {
    /// How the token is shown in "expected ..." diagnostics.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Dot(s) | Tok::Type(s) | Tok::Vec(s) | Tok::Int(s) | Tok::Float(s) => {
                format!("`{s}`")
            }
            Tok::Str(_) => "a string".into(),
            Tok::DebugLine(_) => "a debug directive".into(),
            Tok::Section => "`.section`".into(),
            Tok::Bad => "an invalid token".into(),
            Tok::Semi => "`;`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Colon => "`:`".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::LBrace => "`{`".into(),
            Tok::RBrace => "`}`".into(),
            Tok::Lt => "`<`".into(),
            Tok::Gt => "`>`".into(),
            Tok::Plus => "`+`".into(),
            Tok::Minus => "`-`".into(),
            Tok::At => "`@`".into(),
            Tok::Bang => "`!`".into(),
            Tok::Pipe => "`|`".into(),
            Tok::Eq => "`=`".into(),
            Tok::Sink => "`_`".into(),
            other => format!("{other:?}"),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        let mut t = Tokens::new(src);
        let v: Vec<Tok<'_>> = t.by_ref().map(|t| t.expect("lexes").1).collect();
        assert_eq!(t.errors, vec![]);
        v
    }

    #[test]
    fn opcode_modifiers_are_separate_dot_tokens() {
        assert_eq!(
            toks("ld.global.L2::cache_hint.v4.f32"),
            vec![Tok::Ident("ld"), Tok::Global, Tok::Dot(".L2::cache_hint"), Tok::Vec(".v4"), Tok::Type(".f32")]
        );
        assert_eq!(toks("ld.shared::cta.u32"), vec![Tok::Ident("ld"), Tok::Dot(".shared::cta"), Tok::Type(".u32")]);
        assert_eq!(toks(".L2::64B"), vec![Tok::Dot(".L2::64B")]);
    }

    #[test]
    fn literals_in_every_radix() {
        assert_eq!(
            toks("42 0x2A 052 0b101010 42U 0 0f3F800000 0d3FF0000000000000 1.5 2e3"),
            vec![
                Tok::Int("42"),
                Tok::Int("0x2A"),
                Tok::Int("052"),
                Tok::Int("0b101010"),
                Tok::Int("42U"),
                Tok::Int("0"),
                Tok::Float("0f3F800000"),
                Tok::Float("0d3FF0000000000000"),
                Tok::Float("1.5"),
                Tok::Float("2e3"),
            ]
        );
    }

    #[test]
    fn identifiers_and_special_registers() {
        assert_eq!(
            toks("%r12 %tid.x $L__BB0_2 __local_depot0 _"),
            vec![
                Tok::Ident("%r12"),
                Tok::Ident("%tid"),
                Tok::Dot(".x"),
                Tok::Ident("$L__BB0_2"),
                Tok::Ident("__local_depot0"),
                Tok::Sink
            ]
        );
    }

    #[test]
    fn comments_sections_and_debug_lines_are_skipped() {
        let src = "// c\n/* a\n b */ .loc 1 2 3\n.file 1 \"x.cu\"\n.section .debug_str { a: .b8 1 }\nret;";
        assert_eq!(
            toks(src),
            vec![
                Tok::DebugLine(".loc 1 2 3"),
                Tok::DebugLine(".file 1 \"x.cu\""),
                Tok::Section,
                Tok::Ident("ret"),
                Tok::Semi
            ]
        );
    }

    #[test]
    fn lexical_errors_are_recorded_and_replaced_by_bad() {
        let mut t = Tokens::new("ret; # /* never closed");
        let v: Vec<_> = t.by_ref().map(|t| t.unwrap().1).collect();
        assert_eq!(v, vec![Tok::Ident("ret"), Tok::Semi, Tok::Bad, Tok::Bad]);
        let kinds: Vec<_> = t.errors.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(kinds, vec![LexError::InvalidToken, LexError::UnterminatedComment]);
        assert_eq!(t.errors[0].span, Span::new(5, 6));
    }
}
