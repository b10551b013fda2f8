//! The front end on arbitrary bytes: UTF-8 decoding, lexer, parser, checks. Oracles: no
//! panic, bounded diagnostics, and the checked module printed back (`--emit ast`) parses
//! again to the same text (the printer writes only what the front end accepts).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::ptx;
use ptx2sass_fuzz::{bounded, text};

fuzz_target!(|data: &[u8]| {
    let Some(src) = text(data) else { return };
    let opts = ptx::target::Options { allow_newer_target: data.first().is_some_and(|b| b & 1 == 1) };
    match ptx::parse_with(src, &opts) {
        Ok((module, warnings)) => {
            bounded(src, &warnings);
            let printed = module.to_string();
            match ptx::parse_with(&printed, &opts) {
                Ok((again, _)) => assert_eq!(printed, again.to_string(), "printing is not stable"),
                Err(d) => panic!(
                    "the printed module does not parse again:\n{}\n--- printed ---\n{printed}",
                    ptx2sass::diag::SourceFile::new("printed.ptx", &printed).render_all(&d)
                ),
            }
        }
        Err(diags) => bounded(src, &diags),
    }
});
