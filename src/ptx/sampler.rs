//! Independent texturing mode (`.target ..., texmode_independent`, PTX ISA 5.3 "Texture
//! Sampler and Surface Types"): the checks of the sampler operand of `tex`/`tld4` `[t, s,
//! {c}]` and of `.global .samplerref` names (docs/textures.md §1.14).
//!
//! ptxas 11.8 (`-arch=sm_50`) rejects a texture fetch without a sampler in independent
//! mode (`Argument 2 of instruction 'tex': .samplerref or .u64 register expected`) and a
//! `.samplerref` in unified mode (the parser reports that one).

use super::ast::{Module, Operand};
use crate::diag::Diag;

/// Whether `module` is in independent texturing mode.
pub fn independent(module: &Module) -> bool {
    module.target.iter().any(|t| t == "texmode_independent")
}

/// Checks every `tex`/`tld4` and every use of a `.samplerref` name: in independent mode a
/// fetch names a sampler (a `.samplerref` or a `.u64` register, not a texture reference)
/// after its texture; a `.samplerref` is only that operand. Linear in the module; errors
/// at the operand.
pub fn check(module: &Module) -> Vec<Diag> {
    let indep = independent(module);
    let samplers: std::collections::HashSet<&str> = module.samplers.iter().map(|s| s.name.as_str()).collect();
    let refs: std::collections::HashSet<&str> = module.refs.iter().map(|r| r.name.name.as_str()).collect();
    let mut diags = vec![];
    let mut check = |i: &super::ast::Instruction| {
        let op = i.opcode.name.as_str();
        let fetch = matches!(op, "tex" | "tld4");
        for (k, o) in i.operands.iter().enumerate() {
            let mut named: Vec<&super::ast::Ident> = vec![];
            match o {
                Operand::Texture { image, parts, span } => {
                    named.push(image);
                    match (fetch && k == 1, parts.as_slice()) {
                        // Unified mode: ptxas 11.8 takes `[t, %rd, {c}]` too (as
                        // `TEX.AOFFI`; the lowering reports it as not supported).
                        (true, [Operand::Name { name, .. }, _]) if indep && refs.contains(name.name.as_str()) => {
                            diags.push(
                                Diag::error(name.span, format!("`{}` is a texture or surface reference, not a sampler", name.name))
                                    .label("expected a `.samplerref` or a `.u64` register"),
                            );
                        }
                        (true, [_]) if indep => diags.push(
                            Diag::error(*span, format!("`{op}` in independent texturing mode needs a sampler: `[t, s, {{c}}]`"))
                                .label("no sampler")
                                .note("ptxas 11.8: `Argument 2 of instruction 'tex': .samplerref or .u64 register expected` (docs/textures.md §1.14)"),
                        ),
                        _ => {}
                    }
                    for p in parts.iter().skip(usize::from(fetch && k == 1 && parts.len() == 2)) {
                        named.extend(super::texture::operand_names(p));
                    }
                }
                other => named.extend(super::texture::operand_names(other)),
            }
            for n in named {
                if samplers.contains(n.name.as_str()) {
                    diags.push(
                        Diag::error(n.span, format!("`{}` is a `.samplerref`: it can only be the sampler operand of `tex` or `tld4`", n.name))
                            .label("a sampler here")
                            .note("PTX ISA 9.7.9.3: `tex.geom.v4.dtype.ctype d, [a, b, c]` with `b` the sampler (independent mode)"),
                    );
                }
            }
        }
    };
    super::texture::for_each_instruction(module, &mut check);
    diags
}
