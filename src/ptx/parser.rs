//! Glue between the lalrpop grammar (`grammar/ptx.lalrpop`) and the rest of the front end:
//! literal parsing, conversion of parse errors into [`Diag`]s, and assembly of the module
//! header (`.version`, `.target`, `.address_size`) from the top-level items.

use super::ast::*;
use super::lexer::{LexError, SyntaxError, Tok, Tokens};
use crate::diag::Diag;
use lalrpop_util::{ErrorRecovery, ParseError};

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused_parens, missing_docs)]
    grammar,
    "/ptx.rs"
);

/// A top-level item as the grammar sees it, before the header is pulled out.
pub enum TopItem {
    /// `.version major.minor`.
    Version((u32, u32), Span),
    /// `.target a, b`.
    Target(Vec<String>, Span),
    /// `.address_size n`.
    AddressSize(u32, Span),
    /// A function or variable.
    Item(Item),
    /// One declaration statement at module scope.
    Vars(Vec<VarDecl>),
    /// `.alias alias, aliasee;` (PTX ISA "Linking Directives": `.alias`).
    Alias(Ident, Ident, Span),
    /// `.global .texref t;`, `.samplerref`, `.surfref` (PTX ISA 5.3): the type word and
    /// the declaration's span; recognised, not supported yet (issue 18).
    Opaque(String, Span),
    /// Debug directives, pragmas, and statements skipped after an error.
    Ignored,
}

/// Wraps a literal error with its span for the grammar's fallible actions.
pub fn user(kind: LexError, lo: usize, hi: usize) -> ParseError<usize, Tok<'static>, SyntaxError> {
    ParseError::User { error: SyntaxError { kind, span: Span::new(lo, hi) } }
}

/// Parses a PTX integer literal (PTX ISA 4.5.1): decimal, `0x` hex, `0` octal, `0b`
/// binary, optional `U` suffix. Values up to 2^64-1 are kept as two's-complement `i64`.
pub fn parse_int(s: &str) -> Result<i64, LexError> {
    let s = s.strip_suffix('U').unwrap_or(s);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if let Some(b) = s.strip_prefix("0b").or_else(|| s.strip_prefix("0B")) {
        (b, 2)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    u64::from_str_radix(digits, radix).map(|v| v as i64).map_err(|_| LexError::BadNumber)
}

/// Parses a float literal: `0f` + 8 hex digits (an f32 bit pattern), `0d` + 16 hex digits
/// (f64 bits), or a decimal (rounded to f64, PTX ISA 4.5.1). `neg` flips the sign bit.
pub fn parse_float(s: &str, neg: bool) -> Result<ImmValue, LexError> {
    if let Some(h) = s.strip_prefix("0f").or_else(|| s.strip_prefix("0F")) {
        let bits = u32::from_str_radix(h, 16).map_err(|_| LexError::BadNumber)?;
        return Ok(ImmValue::F32(if neg { bits ^ 0x8000_0000 } else { bits }));
    }
    if let Some(h) = s.strip_prefix("0d").or_else(|| s.strip_prefix("0D")) {
        let bits = u64::from_str_radix(h, 16).map_err(|_| LexError::BadNumber)?;
        return Ok(ImmValue::F64(if neg { bits ^ (1 << 63) } else { bits }));
    }
    let v: f64 = s.parse().map_err(|_| LexError::BadNumber)?;
    Ok(ImmValue::F64(if neg { -v } else { v }.to_bits()))
}

/// Parses the `major.minor` of `.version` (lexed as a float token).
pub fn parse_version(s: &str) -> Result<(u32, u32), LexError> {
    let (a, b) = s.split_once('.').ok_or(LexError::BadVersion)?;
    Ok((a.parse().map_err(|_| LexError::BadVersion)?, b.parse().map_err(|_| LexError::BadVersion)?))
}

/// How a grammar terminal is named in "expected ..." lists.
fn terminal_name(t: &str) -> String {
    match t {
        "IDENT" => "an identifier".into(),
        "INT" => "an integer".into(),
        "FLOAT" => "a float".into(),
        "TYPE" => "a type such as `.b32`".into(),
        "VEC" => "`.v2` or `.v4`".into(),
        "DOT" => "a modifier".into(),
        "STR" => "a string".into(),
        "\"debug line\"" => "a debug directive".into(),
        _ => format!("`{}`", t.trim_matches('"')),
    }
}

fn expected_note(expected: &[String]) -> Option<String> {
    if expected.is_empty() {
        return None;
    }
    let names: Vec<String> = expected.iter().map(|t| terminal_name(t)).collect();
    Some(if names.len() <= 8 {
        format!("expected {}", names.join(", "))
    } else {
        format!("expected one of {} tokens, e.g. {}", names.len(), names[..6].join(", "))
    })
}

/// Turns a lalrpop error into a diagnostic. `toks` is the token list (for "missing `;`"
/// and "unclosed `{`" positions).
fn convert(err: ParseError<usize, Tok<'_>, SyntaxError>, toks: &[(usize, Tok<'_>, usize)]) -> Option<Diag> {
    Some(match err {
        ParseError::User { error } => Diag::error(error.span, error.kind.to_string()),
        ParseError::InvalidToken { location } => Diag::error(Span::new(location, location + 1), "invalid token"),
        ParseError::UnrecognizedEof { location, expected } => {
            let mut d =
                Diag::error(Span::new(location, location), "unexpected end of file").label("the file ends here");
            if expected.iter().any(|e| e == "\"}\"") {
                d.message = "unexpected end of file: a `{` is never closed".into();
                if let Some(open) = unclosed_brace(toks) {
                    d = d.with_secondary(open, "this `{` has no matching `}`");
                }
            }
            if let Some(n) = expected_note(&expected) {
                d = d.note(n);
            }
            d
        }
        ParseError::UnrecognizedToken { token: (lo, tok, hi), expected } => {
            if tok == Tok::Bad {
                return None; // already reported by the lexer
            }
            if expected.iter().any(|e| e == "\";\"") {
                // Point just after the previous token: that is where the `;` belongs.
                let prev_end = toks.iter().take_while(|t| t.0 < lo).last().map_or(lo, |t| t.2);
                let mut d = Diag::error(Span::new(prev_end, prev_end), "expected `;`")
                    .label("missing `;` here")
                    .with_secondary(Span::new(lo, hi), format!("found {} instead", tok.describe()));
                if let Some(n) = expected_note(&expected) {
                    d = d.note(n);
                }
                d
            } else {
                let mut d =
                    Diag::error(Span::new(lo, hi), format!("unexpected {}", tok.describe())).label("not expected here");
                if let Some(n) = expected_note(&expected) {
                    d = d.note(n);
                }
                d
            }
        }
        ParseError::ExtraToken { token: (lo, tok, hi) } => {
            Diag::error(Span::new(lo, hi), format!("unexpected {}", tok.describe()))
        }
    })
}

/// The innermost `{` that is never closed, if any.
fn unclosed_brace(toks: &[(usize, Tok<'_>, usize)]) -> Option<Span> {
    let mut stack = vec![];
    for (lo, t, hi) in toks {
        match t {
            Tok::LBrace => stack.push(Span::new(*lo, *hi)),
            Tok::RBrace => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.pop()
}

/// Parses `src` into a module without classifying instructions. Returns the module (absent
/// if the file has no module header at all) and every syntax diagnostic.
pub fn parse_syntax(src: &str) -> (Option<Module>, Vec<Diag>) {
    let mut lexer = Tokens::new(src);
    let toks: Vec<(usize, Tok<'_>, usize)> = lexer.by_ref().map(|t| t.expect("Tokens never yields Err")).collect();
    let mut diags: Vec<Diag> = lexer.errors.iter().map(|e| Diag::error(e.span, e.kind.to_string())).collect();
    if !src.trim().is_empty() && !toks.iter().any(|t| t.1 == Tok::Version) {
        // Not PTX at all (a C file, a binary): one clear error instead of a cascade.
        let first = src.len() - src.trim_start().len();
        let end = src[first..].find('\n').map_or(src.len(), |n| first + n);
        let mut d = Diag::error(Span::new(first, end), "this is not a PTX module: it has no `.version` directive")
            .label("a PTX module would start with `.version`")
            .note("a PTX module starts with `.version`, `.target` and `.address_size` (PTX ISA 11.1)");
        if let Some(e) = diags.first() {
            d = d.note(format!("the first thing that is not PTX: {}", e.message));
        }
        return (None, vec![d]);
    }
    if let Some(d) = too_deep(&toks) {
        diags.push(d);
        return (None, coalesce(src, diags));
    }
    let mut recovered: Vec<ErrorRecovery<usize, Tok<'_>, SyntaxError>> = vec![];
    let result = grammar::ModuleParser::new().parse(&mut recovered, toks.iter().cloned().map(Ok::<_, SyntaxError>));
    diags.extend(recovered.into_iter().filter_map(|r| convert(r.error, &toks)));
    let items = match result {
        Ok(items) => items,
        Err(e) => {
            diags.extend(convert(e, &toks));
            return (None, coalesce(src, diags));
        }
    };
    let mut diags = coalesce(src, diags);
    let module = assemble(items, src, &mut diags);
    (module, diags)
}

/// The deepest nesting of `{ }` blocks (and `( )` lists, `{ }` initializers and vectors)
/// ptx2sass reads: deeper input is rejected before it is parsed, so that no walk over the
/// syntax tree (and no destructor) recurses deeper than this (issue 20: 20,000 nested blocks
/// overflowed the stack). Compiler output nests a few levels (inline-assembly blocks, call
/// sequences).
pub const MAX_NESTING: usize = 256;

/// An error at the first bracket nested deeper than [`MAX_NESTING`], if any.
fn too_deep(toks: &[(usize, Tok<'_>, usize)]) -> Option<Diag> {
    let mut depth = 0usize;
    for (lo, t, hi) in toks {
        match t {
            Tok::LBrace | Tok::LParen => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(
                        Diag::error(Span::new(*lo, *hi), format!("nesting deeper than {MAX_NESTING} levels"))
                            .label("too deeply nested")
                            .note("ptx2sass reads at most 256 nested `{ }` blocks, lists and initializers"),
                    );
                }
            }
            Tok::RBrace | Tok::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// One diagnostic per kind of syntax error and line: a run of errors with the same message
/// on one line (a line of 10,000 invalid characters, 40,000 `;`) becomes its first one, with
/// a note counting the others (issue 20: each used to be reported, quoting the whole line).
fn coalesce(src: &str, mut diags: Vec<Diag>) -> Vec<Diag> {
    diags.sort_by_key(|d| (d.primary.0.lo, d.primary.0.hi));
    let starts: Vec<usize> = std::iter::once(0).chain(src.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let line = |at: u32| starts.partition_point(|&s| s <= at as usize);
    let mut out: Vec<(Diag, usize, usize)> = vec![];
    for d in diags {
        let l = line(d.primary.0.lo);
        match out.last_mut() {
            Some((first, n, fl)) if first.message == d.message && *fl == l => *n += 1,
            _ => out.push((d, 0, l)),
        }
    }
    out.into_iter()
        .map(|(d, n, _)| if n > 0 { d.note(format!("and {n} more like this on the same line")) } else { d })
        .collect()
}

/// Pulls the header directives out of the top-level items and checks they are present.
fn assemble(items: Vec<TopItem>, src: &str, diags: &mut Vec<Diag>) -> Option<Module> {
    let mut version = None;
    let mut target = None;
    let mut address_size = None;
    let mut out = vec![];
    let mut aliases = vec![];
    for item in items {
        match item {
            TopItem::Version(v, s) => version = version.or(Some((v, s))),
            TopItem::Target(t, s) => target = target.or(Some((t, s))),
            TopItem::AddressSize(n, s) => {
                if n != 32 && n != 64 {
                    diags.push(Diag::error(s, format!("`.address_size {n}` is not valid")).note("PTX allows 32 or 64"));
                }
                address_size = Some(n);
            }
            TopItem::Item(i) => out.push(i),
            TopItem::Vars(vs) => out.extend(vs.into_iter().map(Item::Var)),
            TopItem::Alias(a, b, _) => aliases.push((a, b)),
            TopItem::Opaque(ty, s) => diags.push(
                Diag::error(s, format!("not supported yet: `{ty}` variables (texture, sampler and surface references)"))
                    .label(format!("a `{ty}` variable"))
                    .note("ptx2sass reads texture and surface objects (`.u64` handles), not `.texref`, `.samplerref` or `.surfref` variables (docs/textures.md)"),
            ),
            TopItem::Ignored => {}
        }
    }
    let Some((version, version_span)) = version else {
        // A `.version` token exists (else parse_syntax returned early) but was not parsed as a
        // directive, or the file is empty.
        if src.trim().is_empty() {
            diags.push(
                Diag::error(Span::new(0, 0), "empty file: no PTX module")
                    .note("a PTX module starts with `.version`, `.target` and `.address_size` (PTX ISA 11.1)"),
            );
        }
        return None;
    };
    let (target, target_span) = match target {
        Some(t) => t,
        None => {
            diags.push(
                Diag::error(version_span, "missing `.target` directive")
                    .note("add e.g. `.target sm_50` after `.version`"),
            );
            (vec![], version_span)
        }
    };
    Some(Module { version, version_span, target, target_span, address_size, items: out, aliases })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_in_every_radix() {
        assert_eq!(parse_int("42"), Ok(42));
        assert_eq!(parse_int("0x2a"), Ok(42));
        assert_eq!(parse_int("052"), Ok(42));
        assert_eq!(parse_int("0b101010"), Ok(42));
        assert_eq!(parse_int("42U"), Ok(42));
        assert_eq!(parse_int("0"), Ok(0));
        assert_eq!(parse_int("0xFFFFFFFFFFFFFFFF"), Ok(-1));
        assert_eq!(parse_int("0x1FFFFFFFFFFFFFFFF"), Err(LexError::BadNumber));
    }

    #[test]
    fn floats() {
        assert_eq!(parse_float("0f3F800000", false), Ok(ImmValue::F32(0x3F80_0000)));
        assert_eq!(parse_float("0f3F800000", true), Ok(ImmValue::F32(0xBF80_0000)));
        assert_eq!(parse_float("0d3FF0000000000000", false), Ok(ImmValue::F64(1f64.to_bits())));
        assert_eq!(parse_float("1.5", true), Ok(ImmValue::F64((-1.5f64).to_bits())));
    }
}
