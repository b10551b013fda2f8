//! `ptx2sass asm` on arbitrary listings (listing reader, operand checks against the
//! encoding table, cubin writer). Oracles: no panic; a cubin it writes disassembles, and
//! assembling that disassembly gives the same cubin byte for byte (README: `asm` of
//! `disasm` output rebuilds the `.text` word for word).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::cubin;

fuzz_target!(|data: &[u8]| {
    let listing = String::from_utf8_lossy(data);
    let Ok(bytes) = cubin::asm::assemble(&listing) else { return };
    let (again, _) = match cubin::disasm(&bytes) {
        Ok(x) => x,
        Err(e) => panic!("asm wrote a cubin disasm rejects: {e}"),
    };
    match cubin::asm::assemble(&again) {
        Ok(b) => assert!(b == bytes, "asm(disasm(asm(x))) differs from asm(x)\n--- disassembly ---\n{again}"),
        Err(e) => panic!("the disassembly of asm's cubin does not assemble: {e:?}\n--- disassembly ---\n{again}"),
    }
});
