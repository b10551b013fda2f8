//! Parse -> check -> lower on arbitrary bytes (with and without the clean-up passes, and
//! with `--deny-emulation`, every `--inline` mode, the reconvergence checker on), then the IR printed and its Graphviz form. Oracles: no panic,
//! bounded diagnostics, no internal error (the IR verifier after lowering).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::{ir, lower, ptx};
use ptx2sass_fuzz::{bounded, no_internal_errors, text};

fuzz_target!(|data: &[u8]| {
    let Some(src) = text(data) else { return };
    let flags = data.first().copied().unwrap_or(0);
    let front = ptx::target::Options { allow_newer_target: flags & 1 == 1 };
    let Ok((module, _)) = ptx::parse_with(src, &front) else { return };
    let inline = match flags >> 3 & 3 {
        1 => lower::calls::callgraph::Inline::Never,
        2 => lower::calls::callgraph::Inline::Always,
        _ => lower::calls::callgraph::Inline::Auto,
    };
    // The reconvergence checker on: a violation is an internal error.
    let opts =
        lower::Options { no_opt: flags & 2 == 2, deny_emulation: flags & 4 == 4, inline, check_reconvergence: true };
    match lower::lower(&module, &opts) {
        Ok((irm, warnings)) => {
            bounded(src, &warnings);
            let _ = irm.to_string();
            let _ = ir::dot::to_dot(&irm);
        }
        Err(diags) => {
            bounded(src, &diags);
            no_internal_errors(src, &diags, |_| false);
        }
    }
});
