//! Front end: PTX text to a checked syntax tree.
//!
//! `lexer` (logos tokens) → `parser` (lalrpop grammar in `grammar/ptx.lalrpop`, error
//! recovery per statement) → `classify` (typed meaning of every instruction's modifiers) →
//! `check` (declarations, register widths, labels). [`parse`] runs all of them; `print`
//! writes the tree back as PTX (`--emit ast`).
// PTX input is hostile: no panicking shortcuts here (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

pub mod ast;
pub mod check;
pub mod classify;
pub mod instr;
pub mod lexer;
pub mod limits;
pub mod operands;
pub mod parser;
pub mod print;
pub mod sampler;
pub mod shapes;
pub mod target;
pub mod texture;
pub mod types;

use crate::diag::Diag;
use ast::{Block, Item, Module, Statement};

/// Parses and classifies a PTX module with the default options (a `.target` newer than
/// sm_50 is an error). On success returns the module and any warnings; on failure every
/// error found (syntax errors, unknown opcodes and modifiers, names, widths, features the
/// declared `.version`/`.target` lack).
pub fn parse(src: &str) -> Result<(Module, Vec<Diag>), Vec<Diag>> {
    parse_with(src, &target::Options::default())
}

/// [`parse`] with front-end options.
pub fn parse_with(src: &str, opts: &target::Options) -> Result<(Module, Vec<Diag>), Vec<Diag>> {
    let (module, mut diags) = parser::parse_syntax(src);
    let Some(mut module) = module else {
        return Err(diags);
    };
    for item in &mut module.items {
        if let Item::Function(f) = item
            && let Some(body) = &mut f.body
        {
            classify_block(body, &mut diags);
        }
    }
    if !diags.iter().any(Diag::is_error) {
        // Name and width checks only on a syntactically clean module, so that one syntax
        // error does not cascade into "undeclared" reports.
        diags.extend(check::check(&module));
        diags.extend(limits::check(&module));
        diags.extend(target::check(&module, opts));
    }
    if diags.iter().any(Diag::is_error) { Err(diags) } else { Ok((module, diags)) }
}

/// Classifies every instruction of `b` and its nested blocks (an iterative walk).
fn classify_block(b: &mut Block, diags: &mut Vec<Diag>) {
    let mut stack = vec![b.stmts.iter_mut()];
    while let Some(it) = stack.last_mut() {
        let Some(s) = it.next() else {
            stack.pop();
            continue;
        };
        match s {
            Statement::Instr(i) => diags.extend(classify::classify(i)),
            Statement::Block(inner) => stack.push(inner.stmts.iter_mut()),
            _ => {}
        }
    }
}
