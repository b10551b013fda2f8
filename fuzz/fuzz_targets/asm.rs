//! `ptx2sass asm` on arbitrary listings (listing reader, operand checks against the
//! encoding table, cubin writer). Oracles: no panic; a cubin it writes disassembles, and
//! assembling that disassembly gives the same code: every `.text` section equal in name,
//! bytes, register count, relocations and indirect-branch targets (README: `asm` of
//! `disasm` output rebuilds the `.text` word for word; the parameter layout, which a
//! listing carries only in `compile`'s comments, is not in a disassembly).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::cubin::{self, read};

fuzz_target!(|data: &[u8]| {
    let listing = String::from_utf8_lossy(data);
    let Ok(bytes) = cubin::asm::assemble(&listing) else { return };
    let (again, _) = match cubin::disasm(&bytes) {
        Ok(x) => x,
        Err(e) => panic!("asm wrote a cubin disasm rejects: {e}"),
    };
    let rebuilt = match cubin::asm::assemble(&again) {
        Ok(b) => b,
        Err(e) => panic!("the disassembly of asm's cubin does not assemble: {e:?}\n--- disassembly ---\n{again}"),
    };
    let code = |b: &[u8]| {
        let t = read::text_sections(b).expect("asm's cubin reads back");
        t.into_iter().map(|s| (s.name, s.bytes, s.regs, s.relocs, s.branch_targets)).collect::<Vec<_>>()
    };
    assert!(
        code(&rebuilt) == code(&bytes),
        "asm(disasm(asm(x))) has other code than asm(x)\n--- disassembly ---\n{again}"
    );
});
