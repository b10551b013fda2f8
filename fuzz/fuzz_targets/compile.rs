//! The whole compile (`ptx2sass compile --verify`) on arbitrary bytes: the first byte
//! picks `--maxrregcount` (16..=255), the second `--serial`, `--no-reorder`,
//! `--allow-newer-target`, `--deny-emulation` and cubin output; the rest is the PTX.
//! Oracles: no panic, bounded diagnostics, no internal error (allocation checkers, the
//! hazard checker on the listing, the encoder), except the documented tight-budget
//! allocation failure.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::driver::{self, Emit, Options};
use ptx2sass_fuzz::{bounded, no_internal_errors, text, tight_budget_failure};

fuzz_target!(|data: &[u8]| {
    let [regs, flags, rest @ ..] = data else { return };
    let Some(src) = text(rest) else { return };
    let max_regs = 16 + u32::from(*regs) % 240;
    let mut opts = Options { emit: if flags & 16 == 16 { Emit::Cubin } else { Emit::Sass }, ..Options::default() };
    opts.regalloc.max_regs = max_regs;
    opts.regalloc.verify = true;
    opts.check_hazards = true;
    opts.check_encoding = true;
    opts.sched.serial = flags & 1 == 1;
    opts.sched.reorder = flags & 2 == 0;
    opts.front.allow_newer_target = flags & 4 == 4;
    opts.lower.deny_emulation = flags & 8 == 8;
    match driver::compile(src, &opts) {
        Ok(out) => bounded(src, &out.warnings),
        Err(diags) => {
            bounded(src, &diags);
            no_internal_errors(src, &diags, |d| tight_budget_failure(max_regs, d));
        }
    }
});
