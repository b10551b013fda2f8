//! `ptx2sass check` on arbitrary listings: the listing reader, the hazard checker and the
//! cycle estimate. Oracle: no panic (the checker is linear, so libFuzzer's timeout also
//! catches blow-ups).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::sass::text;
use ptx2sass::sched::{check, estimate};

fuzz_target!(|data: &[u8]| {
    let listing = String::from_utf8_lossy(data);
    let Ok(funcs) = text::parse(&listing) else { return };
    let _ = check::check(&funcs).map(|hazards| hazards.iter().map(|h| h.to_string()).count());
    for f in &funcs {
        let _ = estimate::cycles(f);
    }
});
