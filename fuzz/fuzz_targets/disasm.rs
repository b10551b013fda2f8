//! `ptx2sass disasm` on arbitrary bytes (ELF reader, `.nv.info` records, the decoder of
//! every form). Oracles: no panic; what it prints is readable by `check` (the listing
//! reader accepts it, unless disasm warned of a scoreboard 6) and goes through the hazard
//! checker and `asm` without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::cubin;
use ptx2sass::sass::text;
use ptx2sass::sched::check;

fuzz_target!(|data: &[u8]| {
    let Ok((listing, warnings)) = cubin::disasm(data) else { return };
    match text::parse(&listing) {
        Ok(funcs) => {
            let _ = check::check(&funcs);
        }
        // disasm warns about what the listing reader rejects (scoreboard 6).
        Err(_) if warnings.iter().any(|w| w.contains("scoreboard 6")) => {}
        Err(e) => panic!("disasm output does not read back: {e}\n--- listing ---\n{listing}"),
    }
    let _ = cubin::asm::assemble(&listing);
});
