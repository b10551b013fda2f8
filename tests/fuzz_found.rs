//! Reproducers of what the fuzz targets (`fuzz/`, docs/fuzzing.md) found, one test each,
//! minimised by hand from the crashing input; each fails (panics) without its fix.

#[path = "common/launches.rs"]
mod launches;

use ptx2sass::cubin::{self, read};
use ptx2sass::sass::op::Op;
use ptx2sass::sass::text;
use ptx2sass::sched::check;

/// `fuzz/ check`: a listing whose last instruction falls through (a truncated listing)
/// made the hazard checker index past its last instruction (`block_end`).
#[test]
fn check_listing_ending_without_branch() {
    for listing in [
        "Function : f\n/*0008*/ MOV R0, R1 ?WAIT1 ;\n",
        "Function : f\n/*0008*/ S2R R0, SR_TID.X &wr0 ?WAIT1 ;\n/*0010*/ IADD R1, R0, R0 &req={0} ?WAIT6 ;\n",
        // Two functions, the first falling into the second's address range.
        "Function : f\n/*0008*/ MOV R0, R1 ?WAIT1 ;\nFunction : g\n/*0008*/ MOV R0, R1 ?WAIT1 ;\n",
    ] {
        let funcs = text::parse(listing).expect("the listing parses");
        // No panic; what it reports does not matter here.
        let _ = check::check(&funcs);
    }
}

/// `fuzz/ disasm`: a cubin whose control field names scoreboard 6 (nvdisasm accepts the
/// index, SPA 5.0 has SB0-SB5) disassembled to a listing `check` rejects, with no word
/// of warning. Now disasm warns, and the listing reader's error is a diagnostic.
#[test]
fn disasm_warns_of_scoreboard_6() {
    let listing = "\t\tFunction : f\n/*0008*/ S2R R0, SR_TID.X &wr0 ?WAIT1 ;\n/*0010*/ EXIT ?WAIT15 ;\n/*0018*/ BRA 0x18 ?WAIT15 ;\n";
    let mut bytes = cubin::asm::assemble(listing).expect("assembles");
    let (clean, warnings) = cubin::disasm(&bytes).expect("disassembles");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(clean.contains("&wr0"), "{clean}");
    // The bundle's control word is the first 8 bytes of `.text.f`; S2R's write scoreboard
    // is bits 5..7 of its 21-bit field (sm50-encoding-and-cubin.md §2).
    let code = read::text_sections(&bytes).expect("reads")[0].bytes.clone();
    let at = bytes.windows(code.len()).position(|w| w == code.as_slice()).expect("the code is in the cubin");
    bytes[at] |= 6 << 5;
    let (listing6, warnings) = cubin::disasm(&bytes).expect("disassembles");
    assert!(listing6.contains("&wr6"), "{listing6}");
    assert!(warnings.iter().any(|w| w.contains("scoreboard 6") && w.contains("0x0008")), "{warnings:?}");
    let e = text::parse(&listing6).expect_err("the listing reader rejects SB6");
    assert!(e.to_string().contains("bad write barrier `&wr6`"), "{e}");
}

/// `fuzz/ asm`: the register count of a listing's header comment went into sh_info, but
/// `disasm` did not print it, so `asm` of the disassembly counted the registers named
/// (here R0 → 1) instead: asm(disasm(asm(x))) had another `.text` than asm(x). Now disasm
/// prints `// sh_info: N registers` and asm reads it back; a function name holding
/// " registers" or an instruction's text does not confuse it (the name is not repeated in
/// that line: `// .text.NAME: N registers`, the first form, read a count from the name).
#[test]
fn asm_of_disasm_keeps_the_register_count() {
    let listing = "\t\tFunction : k\n\t// .entry k: 12 registers, 0 bytes stack frame (0 spill), 0 bytes shared\n/*0008*/ S2R R0, SR_TID.X &wr0 ?WAIT1 ;\n/*0010*/ EXIT ?WAIT15 ;\n/*0018*/ BRA 0x18 ?WAIT15 ;\n";
    let once = cubin::asm::assemble(listing).expect("assembles");
    assert_eq!(read::text_sections(&once).expect("reads")[0].regs, 12);
    let (dis, _) = cubin::disasm(&once).expect("disassembles");
    assert!(dis.contains("// sh_info: 12 registers"), "{dis}");
    let twice = cubin::asm::assemble(&dis).expect("the disassembly assembles");
    assert_eq!(read::text_sections(&twice).expect("reads")[0].regs, 12, "{dis}");
    for name in ["k: 7 registers", "k /*0010*/ BRA 0x10 ?WAIT15 ;"] {
        let listing = listing.replace("Function : k", &format!("Function : {name}"));
        let once = cubin::asm::assemble(&listing).expect("assembles");
        let (dis, _) = cubin::disasm(&once).expect("disassembles");
        let twice = cubin::asm::assemble(&dis).expect("the disassembly assembles");
        assert_eq!(read::text_sections(&twice).expect("reads")[0].regs, 12, "{dis}");
    }
}

/// `fuzz/ asm`: a header comment's register count above 255 wrapped silently in sh_info's
/// eight bits (300 registers became 44); it is an error now.
#[test]
fn asm_rejects_more_than_255_registers() {
    let listing =
        "\t\tFunction : k\n\t// .entry k: 300 registers\n/*0008*/ EXIT ?WAIT15 ;\n/*0010*/ BRA 0x10 ?WAIT15 ;\n";
    let e = cubin::asm::assemble(listing).expect_err("300 registers do not fit");
    assert!(e.iter().any(|e| e.message.contains("300 registers") && e.message.contains("at most 255")), "{e:?}");
}

/// `fuzz/ disasm`: an INDIRECT_BRANCH_TARGETS record (`.nv.info.k`, attribute 0x34)
/// whose target count is 2^32 - 1 was walked word by word (seconds for a 6 KB cubin,
/// the target's timeout). The count is now checked against the record first.
#[test]
fn disasm_branch_target_count_beyond_the_record() {
    let listing = "\t\tFunction : k\n/*0008*/ EXIT ?WAIT15 ;\n/*0010*/ BRA 0x10 ?WAIT15 ;\n";
    let mut bytes = cubin::asm::assemble(listing).expect("assembles");
    // The first 16 bytes of `.nv.info.k` become one record: format 4, attribute 0x34,
    // 12 bytes of payload: offset 8, 0, count 0xffffffff.
    let record = [4u8, 0x34, 12, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
    let at = info_section(&bytes, "k");
    bytes[at..at + record.len()].copy_from_slice(&record);
    let start = std::time::Instant::now();
    let (listing, _) = cubin::disasm(&bytes).expect("disassembles");
    assert!(listing.contains("EXIT"), "{listing}");
    // Walking 2^32 words takes seconds even optimized; the checked reader microseconds.
    assert!(start.elapsed() < std::time::Duration::from_millis(500), "{:?}", start.elapsed());
}

/// `fuzz/ disasm` (`tests/data/fuzz/disasm_oom.bin`, a mutant of a cubin with a
/// `.nv.constant3` table): the symbol `sha256_k` claims 0x1f00000000000100 bytes of its
/// 0x100-byte section, and the module-data listing printed a variable's bytes one by one
/// up to its size, past 2 GB (libFuzzer's RSS limit). The reader now checks a symbol's
/// offset and size against its section; `module_data` fails first, so without the check
/// this test fails at once instead of allocating.
#[test]
fn disasm_rejects_a_symbol_larger_than_its_section() {
    let path = format!("{}/tests/data/fuzz/disasm_oom.bin", env!("CARGO_MANIFEST_DIR"));
    let mut bytes = std::fs::read(path).expect("reproducer");
    let e = read::module_data(&bytes).expect_err("the symbol runs past its section");
    assert!(e.0.contains("symbol `sha256_k`") && e.0.contains("run past its section .nv.constant3"), "{e}");
    let e = cubin::disasm(&bytes).expect_err("disasm reports it");
    assert!(e.0.contains("0x1f00000000000100 bytes at offset 0x0"), "{e}");
    // Offset + size beyond 2^64 (an overflow, not a large allocation): the symbol's
    // `st_value` and `st_size` are at 0x1b8 and 0x1c0 of this file (its second symbol).
    bytes[0x1b8..0x1c0].copy_from_slice(&0x10u64.to_le_bytes());
    bytes[0x1c0..0x1c8].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = read::module_data(&bytes).expect_err("offset + size overflows");
    assert!(e.0.contains("at offset 0x10 run past"), "{e}");
    // The same symbol within its section reads and lists its 0x100 bytes.
    bytes[0x1b8..0x1c0].copy_from_slice(&0u64.to_le_bytes());
    bytes[0x1c0..0x1c8].copy_from_slice(&0x100u64.to_le_bytes());
    let (data, bank) = read::module_data(&bytes).expect("a symbol within its section");
    assert_eq!((data.symbols.len(), bank.len()), (1, 0x100));
    assert!(data.listing(&bank).contains("sha256_k"));
}

/// File offset of `.nv.info.NAME`'s data in an ELF64 cubin, for patching.
fn info_section(elf: &[u8], name: &str) -> usize {
    use object::read::elf::{FileHeader, SectionHeader};
    let h = object::elf::FileHeader64::<object::Endianness>::parse(elf).expect("ELF");
    let e = h.endian().expect("endian");
    let sections = h.sections(e, elf).expect("sections");
    let want = format!(".nv.info.{name}");
    let s = sections
        .iter()
        .find(|s| sections.section_name(e, s).is_ok_and(|n| n == want.as_bytes()))
        .expect("the section exists");
    assert!(s.sh_size(e) >= 16, "room for the record");
    s.sh_offset(e) as usize
}

/// Compiles `tests/data/fuzz/NAME` with `--verify` (as `fuzz/ compile` and `fuzz/ exec`
/// do) and returns its internal errors.
fn internal_errors(name: &str) -> Vec<String> {
    let path = format!("{}/tests/data/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("reproducer");
    let mut opts = ptx2sass::driver::Options::default();
    opts.regalloc.verify = true;
    match ptx2sass::driver::compile(&src, &opts) {
        Ok(_) => vec![],
        Err(d) => d.into_iter().map(|d| d.message).filter(|m| m.contains("internal error")).collect(),
    }
}

/// Found by `fuzz/ exec` (minimised from a mutant of samples/int_ops.ptx): a value defined
/// on one path into a join (`%rd84`, with many undefined registers around it) and
/// undefined on the other failed the allocation checker ("R8 does not hold the value").
/// The allocation was right (the defined path's `R8:R9` reaches the store intact; the
/// other path's `R8` holds an unrelated value, a valid value of an undefined register);
/// the checker's meet at the join dropped a location when it started from the side where
/// the value is undefined (held everywhere). Runnable form in tests/regalloc.rs.
#[test]
fn regalloc_value_undefined_on_one_path() {
    let e = internal_errors("regalloc_undef_phi.ptx");
    assert!(e.is_empty(), "{e:?}");
}

/// Found by `fuzz/ compile` (minimised from a mutant of samples/sgemm_reg4x4.ptx): a block
/// guarded by a never-written predicate is if-converted; with 18 undefined predicates
/// live, predicate demotion rematerialized the guard before each reader, so the 64-bit
/// address add's halves were guarded by two registers (`@P4 LEA R2.CC` / `@P6 LEA.HI.X`,
/// both `ISETP.NE.U32.AND .., R8, RZ, PT`: one value), which the carry-flag check of
/// allocated code compared by register. Now lowering defines every undefined predicate
/// (one false value), the allocation checker proves each guard reads it, and the carry
/// check compares guards by value (`ir::guards`). Runnable form in tests/regalloc.rs.
#[test]
fn carry_pair_under_one_guard_with_undefined_predicate() {
    let e = internal_errors("carry_guard_undef_pred.ptx");
    assert!(e.is_empty(), "{e:?}");
}

/// Found by `fuzz/ compile` (a generated program mutated to `ld.global.v4.u32 {%r0, %r1,
/// %r0, %r3}`, so `%r2` is undefined where `st.local.v4.u32 [loc], {%r0, %r1, %r2, %r3}`
/// stores it; option bytes `--maxrregcount 32 --serial`): the allocation checker reported
/// "R8 does not hold the value" of the `STL.128`. The allocation was right: the quad was
/// assembled by an XOR swap through `R16`, which held the undefined component (`R17 =
/// R16 ^ R10; R10 = R10 ^ R17; R8 = R17 ^ R10` puts the old `R10`, `%r0`, in `R8` whatever
/// `R16` holds), and the checker gave up on an XOR with an operand it knew nothing about.
/// Now such an operand is an opaque value that cancels (`regalloc::verify::xor_term`).
#[test]
fn regalloc_xor_swap_through_an_undefined_register() {
    compile_reproducer_at_32_serial("compile_undef_quad_component.bin", false);
}

/// Found by `fuzz/ compile` (`compile_predicate_pressure_32_registers.bin`: samples/
/// sgemm_reg.ptx with `ld.global.f32 %f334, [%rd24]` reading an address defined only after
/// the k loop, and `fma.rn.f32 %f301, ...` writing an accumulator the loop carries; option
/// bytes `--maxrregcount 32 --serial`): "internal error in register allocation of
/// sgemm_reg4x4: more than 7 predicates that cannot be kept in general-purpose registers
/// are live at once". Demotion had left at most 7 predicates live, but regalloc2 still
/// gave one a spill slot (its Ion allocator puts the use-free part of a split range, the
/// spill bundle, in a register only if one is free over all of it). Now allocation
/// demotes more predicates (here down to 6 live) when regalloc2 spills one
/// (`regalloc::allocate`). The class: tests/predicate_pressure.rs.
#[test]
fn predicates_spilled_by_regalloc2_at_seven_live() {
    compile_reproducer_at_32_serial("compile_predicate_pressure_32_registers.bin", true);
}

/// Compiles the `compile` fuzz target's reproducer `tests/data/fuzz/NAME` whose two
/// option bytes say `--maxrregcount 32 --serial` (asserted; the decoding of
/// `fuzz/fuzz_targets/compile.rs`: 16 + byte 0 % 240 registers, bit 0 of byte 1
/// `--serial`) with the allocation checker on and, if `hazards`, the hazard checker
/// (otherwise as `driver::Options::default()` has it);
/// panics with the diagnostics if compilation fails.
fn compile_reproducer_at_32_serial(name: &str, hazards: bool) {
    let path = format!("{}/tests/data/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read(&path).expect("reproducer");
    let [regs, flags, rest @ ..] = data.as_slice() else { panic!("two option bytes") };
    assert_eq!((16 + u32::from(*regs) % 240, flags & 1), (32, 1));
    let src = std::str::from_utf8(rest).expect("PTX text");
    let mut opts = ptx2sass::driver::Options::default();
    opts.regalloc.max_regs = 32;
    opts.regalloc.verify = true;
    opts.sched.serial = true;
    opts.check_hazards |= hazards;
    if let Err(d) = ptx2sass::driver::compile(src, &opts) {
        let e: Vec<String> = d.into_iter().map(|d| d.message).collect();
        panic!("{e:?}");
    }
}

/// A parameter comment naming `c[0x0][0xffffffff]` overflowed the cubin writer's
/// constant-bank size (a panic with overflow checks, a wrapped size without); found while
/// applying `clippy::arithmetic_side_effects` to `src/cubin/`. Now an `asm` error.
#[test]
fn asm_rejects_parameters_beyond_the_parameter_space() {
    let listing = "\t\tFunction : k\n\t//   c[0x0][0xffffffff]  .u64     p\n/*0008*/ EXIT ?WAIT15 ;\n/*0010*/ BRA 0x10 ?WAIT15 ;\n";
    let e = cubin::asm::assemble(listing).expect_err("beyond the parameter space");
    assert!(e.iter().any(|e| e.message.contains("beyond the 0x1100 bytes of parameter space")), "{e:?}");
    // The last 8 bytes of the space are fine.
    let ok =
        "\t\tFunction : k\n\t//   c[0x0][0x1238]  .u64     p\n/*0008*/ EXIT ?WAIT15 ;\n/*0010*/ BRA 0x10 ?WAIT15 ;\n";
    cubin::asm::assemble(ok).expect("within the parameter space");
}

/// `fuzz/ asm`: a function name with a NUL byte reached the ELF string tables, whose
/// writer panicked (`object`'s assertion, then our `reserve_strtab().expect`).
#[test]
fn asm_rejects_a_nul_in_a_function_name() {
    let listing = "\t\tFunction : st\0encil5\n/*0008*/ EXIT ?WAIT15 ;\n/*0010*/ BRA 0x10 ?WAIT15 ;\n";
    let e = cubin::asm::assemble(listing).expect_err("NUL in a name");
    assert!(e.iter().any(|e| e.message.contains("NUL")), "{e:?}");
}

/// `fuzz/ asm` (CI smoke run): a module-data line whose initial bytes hold a multi-byte
/// character (`0\u{e9}0`, four bytes) was sliced by byte pairs inside the character (a
/// panic in `sass::data`). Now an error naming the token.
#[test]
fn asm_rejects_non_hex_initial_bytes() {
    let listing = "\t\tFunction : k\n/*0008*/ EXIT ?WAIT15 ;\n/*0010*/ BRA 0x10 ?WAIT15 ;\n\t\t..........\n\n\
        \t// module data (symbols in creation order):\n\
        \t//   .section .nv.constant3 0x4 bytes, align 4\n\
        \t//   v: .global .nv.constant3+0x0, 4 bytes = 0\u{e9}0\n";
    let e = cubin::asm::assemble(listing).expect_err("not hex");
    assert!(e.iter().any(|e| e.message.contains("expected hex byte pairs")), "{e:?}");
}

/// Compiles `body` as the body of kernel `k(.param .u64 p)` and returns its errors.
fn compile_errors(body: &str) -> Vec<String> {
    let src = format!(
        ".version 8.8\n.target sm_50\n.address_size 64\n.const .u32 c[4];\n.entry k(.param .u64 p)\n{{\n\
         .reg .u32 %r<4>;\n.reg .u64 %rd<8>;\nmov.u64 %rd1, 0;\n{body}\nret;\n}}\n"
    );
    match ptx2sass::driver::compile(&src, &ptx2sass::driver::Options::default()) {
        Ok(_) => vec![],
        Err(d) => d.into_iter().map(|d| d.message).collect(),
    }
}

/// Found applying `clippy::arithmetic_side_effects` to `src/lower/mem/mod.rs`: an address
/// offset near `i64::MAX` overflowed (a panic with overflow checks) where lowering adds to
/// it: the LDC split of a register-indexed `.const` offset (`o - lo`), the parameter
/// space's base `c[0x0][0x140]`, the second half of a 256-bit access (`+16`). Now the first
/// wraps as LDC's 32-bit address does and the others are errors, as `[imm+off]` was.
#[test]
fn lowering_address_offsets_near_i64_max() {
    // `o - lo` wraps: only its low 32 bits reach IADD32I; the access compiles.
    let e = compile_errors("mov.u64 %rd1, c;\nld.const.v2.u32 {%r1,%r2}, [%rd1+9223372036854775800];");
    assert!(e.is_empty(), "{e:?}");
    for body in [
        "mov.u64 %rd1, p;\nld.param.u32 %r1, [%rd1+9223372036854775804];",
        "ld.global.v4.u64 {%rd1,%rd2,%rd3,%rd4}, [%rd1+9223372036854775792];",
    ] {
        let e = compile_errors(body);
        assert!(e.iter().any(|m| m.contains("overflows 64 bits")), "{body}: {e:?}");
    }
}

/// Found applying the no-panic lints to `src/lower/mod.rs`: a vector register of 8
/// elements (`.reg .v8 .b32 %v`, which the front end accepted) used whole as the data of a
/// `.v8` load indexed the element names `x y z w` with 4 (a panic). Lowering now errors
/// there, and the front end rejects the declaration (PTX ISA 5.4.2: vector variables have
/// 2 or 4 elements of at most 128 bits in all; ptxas 11.8 rejects both declarations).
#[test]
fn lowering_rejects_a_vector_register_of_8_elements() {
    let e = compile_errors(".reg .v8 .b32 %v;\nld.global.v8.b32 %v, [%rd1];");
    // The front end now rejects the declaration itself, as ptxas 11.8 does.
    assert!(e.iter().any(|m| m.contains("`.v8 .b32` is not a PTX vector type")), "{e:?}");
    // And a vector wider than 128 bits.
    let e = compile_errors(".reg .v4 .b64 %w;");
    assert!(e.iter().any(|m| m.contains("`.v4 .b64` is not a PTX vector type")), "{e:?}");
}

/// Found applying the no-panic lints to `src/lower/mem/memopt.rs`: `scaled_index` matched
/// the halves of a 64-bit `y << s` (`SHL lo, a, s; SHR hi, a, r` with `r + s == 32`) by
/// adding the two shift immediates in `u32`; a `shr` by `0xfffffff0` (a 20-bit immediate
/// of `SHR`, sign-extended) next to a `shl` by 16 overflowed (a panic with overflow
/// checks). Now the sum is checked and such a pair is not a scaled index.
#[test]
fn scaled_index_shift_immediates_summing_past_u32() {
    let e = compile_errors(
        "ld.param.u64 %rd2, [p];\nld.global.u32 %r1, [%rd2];\nshl.b32 %r2, %r1, 16;\n\
         shr.u32 %r3, %r1, 0xfffffff0;\nmov.b64 %rd3, {%r2, %r3};\nadd.s64 %rd4, %rd3, %rd2;\n\
         st.global.u64 [%rd2], %rd4;",
    );
    assert!(e.is_empty(), "{e:?}");
}

/// Found applying the no-panic lints to `src/lower/calls/realcall.rs`: in a function
/// compiled on its own (a real call), `ld.param` at a negative offset of a parameter
/// (`[a+-1]`) rounded `o / 4` to word 0 and took the bit position `(o % 4) * 8` of a
/// negative remainder as `u32` (0xfffffff8): a `BFE` of garbage, no diagnostic. Now it is
/// the error for a read of a slot where nothing was written, as in an inlined call.
#[test]
fn real_call_parameter_read_at_a_negative_offset() {
    let src = ".version 8.8\n.target sm_50\n.address_size 64\n\
               .func (.param .b32 r) f(.param .b32 a)\n{\n.reg .b32 %v;\nld.param.u8 %v, [a+-1];\n\
               st.param.b32 [r], %v;\nret;\n}\n\
               .entry k(.param .u64 p)\n{\n.reg .b32 %x;\n.reg .u64 %rd;\n.param .b32 pa;\n.param .b32 pr;\n\
               st.param.b32 [pa], 7;\ncall (pr), f, (pa);\nld.param.b32 %x, [pr];\nld.param.u64 %rd, [p];\n\
               st.global.u32 [%rd], %x;\nret;\n}\n";
    let mut opts = ptx2sass::driver::Options::default();
    opts.lower.inline = ptx2sass::lower::calls::callgraph::Inline::Never;
    let e: Vec<String> = match ptx2sass::driver::compile(src, &opts) {
        Ok(_) => vec![],
        Err(d) => d.into_iter().map(|d| d.message).collect(),
    };
    assert!(e.iter().any(|m| m.contains("at offset -1 that was never written")), "{e:?}");
}

/// Reported by the `lintlow3` review: a `.func` whose return value (or parameter) is a
/// `.param .b8 r[2000000000]` made lowering allocate a register per word of it (4 GB,
/// an allocation abort), even when the function is never called. `ptx::limits` now
/// bounds a device function's parameters and return values as a call site's `.param`
/// variables are bounded (0x1100 bytes). (Within the bound, a `.func` with about 1 KiB of
/// parameters still fails register allocation with an internal error, since every
/// stack-passed word is defined at entry: an open finding of issue 20, so this test
/// compiles 256 bytes.)
#[test]
fn device_function_parameters_beyond_the_parameter_space() {
    let module = |ret: u64, arg: u64| {
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n\
             .func (.param .b8 r[{ret}]) g(.param .b8 a[{arg}])\n{{\n.reg .b32 %r<2>;\n\
             ld.param.b32 %r1, [a];\nst.param.b32 [r+0], %r1;\nret;\n}}\n\
             .visible .entry k(.param .u64 p)\n{{\nret;\n}}\n"
        )
    };
    let errors = |src: String| -> Vec<String> {
        match ptx2sass::driver::compile(&src, &ptx2sass::driver::Options::default()) {
            Ok(_) => vec![],
            Err(d) => d.into_iter().map(|d| d.message).collect(),
        }
    };
    let e = errors(module(2_000_000_000, 4));
    assert!(
        e.iter().any(|m| m.contains("the return values of `g` take 2000000000 bytes, more than 4352 bytes")),
        "{e:?}"
    );
    let e = errors(module(4, 4_294_967_295));
    assert!(e.iter().any(|m| m.contains("the parameters of `g` take 4294967295 bytes")), "{e:?}");
    assert_eq!(errors(module(256, 256)), Vec::<String>::new());
}

/// Runs kernel `k(.param .u64 out)` with `body` on the PTX interpreter (one thread, an
/// 8-byte buffer `out`): the launch's result, or the parse errors.
fn interpret(body: &str) -> Result<Vec<u8>, String> {
    use ptx2sass::exec::ptx::args::{self, Arg};
    let src = format!(
        ".version 8.8\n.target sm_50\n.address_size 64\n.entry k(.param .u64 out)\n{{\n\
         .reg .u32 %r<8>;\n.reg .u64 %rd<8>;\n.local .align 4 .b8 loc[16];\n\
         ld.param.u64 %rd1, [out];\n{body}\nret;\n}}\n"
    );
    let (m, _) = ptx2sass::ptx::parse(&src).map_err(|d| format!("{d:?}"))?;
    let l = args::launch(&m, "k", [1; 3], [1; 3], &[Arg::Buf(vec![0; 8])], 10_000).map_err(|e| e.to_string())?;
    let out = ptx2sass::exec::ptx::run(&m, &l).map_err(|e| e.to_string())?;
    Ok(out.global.read("global", ptx2sass::exec::GLOBAL_BASE, 8).map_err(|e| e.to_string())?.to_vec())
}

/// Found applying `clippy::arithmetic_side_effects` to the PTX interpreter
/// (`exec/ptx/compile/mod.rs`): a generic access to a `.local` variable whose offset is near
/// `i64::MAX` overflowed adding the local window's base (a panic with overflow checks).
/// Now an error naming the offset.
#[test]
fn interpreter_generic_local_offset_near_i64_max() {
    let e = interpret("ld.u32 %r1, [loc+9223372036854775800];").expect_err("an error");
    assert!(e.contains("offset 9223372036854775800"), "{e}");
}

/// Found applying `clippy::arithmetic_side_effects` to the PTX interpreter (`eval.rs`):
/// `vshl`/`vshr` with `.clamp` took a negative `.s32` shift amount as a huge one (a shift
/// overflow, a panic with overflow checks). The amount is the `.u32` value of `b` (PTX ISA
/// 9.7.10.2: `.btype` is `.u32`), so -1 is clamped to 32.
#[test]
fn interpreter_video_shift_by_a_negative_amount() {
    let r = interpret(
        "mov.u32 %r1, 1;\nmov.u32 %r2, -1;\nvshl.u32.u32.s32.clamp %r3, %r1, %r2;\n\
         vshr.u32.u32.s32.clamp %r4, %r1, %r2;\nadd.u32 %r3, %r3, %r4;\nadd.u32 %r3, %r3, 7;\n\
         st.global.u32 [%rd1], %r3;",
    );
    // 1 << 32 and 1 >> 32 both leave 0 in the low 32 bits; 0 + 0 + 7.
    assert_eq!(r.map(|b| b[..4].to_vec()), Ok(vec![7, 0, 0, 0]));
}

/// Found applying the no-panic lints to `src/exec/sim/sync.rs`: a hand-written listing run
/// by the simulator (`run --sass`) with a SHFL of fewer than three sources (the listing
/// reader does not count operands) indexed the missing operand (a panic). Now an error.
#[test]
fn sim_rejects_shfl_missing_operands() {
    let dir = std::env::temp_dir().join(format!("ptx2sass-fuzz-found-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, instr) in [("one", "SHFL.IDX PT, R0, R1"), ("two", "SHFL.BFLY PT, R0, R1, 0x1")] {
        let listing = format!(
            "\t\tFunction : k\n/*0008*/ {instr} ?WAIT6 ;\n/*0010*/ EXIT ?WAIT15 ;\n/*0018*/ BRA 0x18 ?WAIT15 ;\n"
        );
        let path = dir.join(format!("shfl-{name}.sass"));
        std::fs::write(&path, listing).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ptx2sass"))
            .args(["run", "--sass"])
            .arg(&path)
            .args(["--kernel", "k", "--exec", "sim"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{instr}: {err}");
        assert!(err.contains("SHFL takes three source operands"), "{instr}: {err}");
    }
}

/// Found by the 30-minute `exec` campaign of 2026-11-25 (a mutant of `many_params.ptx`):
/// `ld.param.f64` of a `.u16` kernel parameter placed at `c[0x0][0x142]` passed the front
/// end's alignment check (which knows only the parameter's declared alignment, 2) and reached
/// the encoder as `MOV R4, c[0x0][0x142]`: an internal error ("constant-bank offset must be
/// a multiple of 4"). A constant-bank load at a placed offset that is not a multiple of its
/// size is now the usual misaligned-access error, for parameters and `.const` variables,
/// scalar and vector, at every width.
#[test]
fn constant_bank_load_misaligned_at_its_placed_offset() {
    let cases = [
        // (declarations, load)
        (".param .u16 a, .param .u16 b", "ld.param.f64 %fd1, [b];"),
        (".param .u16 a, .param .u16 b", "ld.param.u32 %r1, [b];"),
        (".param .u8 a, .param .u8 b", "ld.param.u16 %rs1, [b];"),
        (".param .u16 a, .param .u16 b", "ld.param.v2.u32 {%r1, %r2}, [b];"),
        (".param .u32 a, .param .u32 b", "ld.param.v4.u32 {%r1, %r2, %r3, %r4}, [b];"),
    ];
    let module = |decls: &str, body: &str, consts: &str| {
        format!(
            ".version 7.8\n.target sm_50\n.address_size 64\n{consts}\
             .entry k({decls}, .param .u64 out)\n{{\n.reg .b32 %r<5>;\n.reg .b16 %rs<2>;\n.reg .f64 %fd<2>;\n\
             .reg .u64 %rd<2>;\n{body}\nld.param.u64 %rd1, [out];\nst.global.u32 [%rd1], %r1;\nret;\n}}\n"
        )
    };
    let mut sources: Vec<String> = cases.iter().map(|(d, b)| module(d, b, "")).collect();
    // A `.const` variable of alignment 2 placed after a 2-byte one, read as a word.
    sources.push(module(
        ".param .u32 a",
        "ld.const.u32 %r1, [c2];",
        ".const .align 2 .b8 c1[2] = {1, 2};\n.const .align 2 .b8 c2[4] = {3, 4, 5, 6};\n",
    ));
    for src in &sources {
        let e: Vec<String> = match ptx2sass::driver::compile(src, &ptx2sass::driver::Options::default()) {
            Ok(_) => panic!("compiled a misaligned constant-bank load:\n{src}"),
            Err(d) => d.into_iter().map(|d| d.message).collect(),
        };
        assert!(e.iter().all(|m| !m.contains("internal error")), "{src}\n{e:?}");
        assert!(e.iter().any(|m| m.contains("misaligned")), "{src}\n{e:?}");
    }
    // Aligned at their placed offsets: still compiled.
    for (decls, body) in
        [(".param .u16 a, .param .u16 b", "ld.param.u32 %r1, [a];"), (".param .u32 a", "ld.param.u32 %r1, [a];")]
    {
        let src = module(decls, body, "");
        assert!(ptx2sass::driver::compile(&src, &ptx2sass::driver::Options::default()).is_ok(), "{src}");
    }
}

/// Found by hand (docs/fuzzing.md "Found by hand (2026-11-25)"): samples/nvcc_scan.ptx with
/// the scan loop's `@%p3 bra $L__BB0_4` retargeted to `$L__BB0_3`, the top of its own block
/// (`tests/data/fuzz/reconverge_inner_cycle.ptx`): threads with `%p3` spin there, the
/// others go on to `ld.shared` and `bar.sync`. Both back edges share the header, so the
/// spin was no loop of its own; the branch reconverged at the header, after the barrier,
/// and the checker reported an internal error ("`BAR.SYNC 0x0` in BB6 ... runs before the
/// threads of the divergent branch at the end of BB5 reconverge"). Now the spin is
/// separated into an inner loop (`lower::cfg::nest`) whose PBK target is before the
/// barrier. The spin never ends for thread 0 (its condition is loop-invariant): compile only.
#[test]
fn spin_at_a_shared_loop_header_before_a_barrier() {
    let e = internal_errors("reconverge_inner_cycle.ptx");
    assert!(e.is_empty(), "{e:?}");
    let src =
        std::fs::read_to_string(format!("{}/tests/data/fuzz/reconverge_inner_cycle.ptx", env!("CARGO_MANIFEST_DIR")))
            .expect("reproducer");
    let program = launches::compile(&src);
    let ops: Vec<_> = program.functions.iter().flat_map(|f| f.code.iter().map(|c| c.instr.op)).collect();
    assert!(ops.contains(&Op::Pbk) && ops.contains(&Op::Brk), "the spin reconverges with PBK/BRK\n{program}");
}

/// The reproducer's terminating variant (`reconverge_inner_cycle_spin.ptx`): the spin runs
/// `tid % 4` extra times, each an `atom.shared.add` of 0 (ptxas 11.8 keeps it), so the
/// threads of a warp leave it at different times and must wait for each other before the
/// `bar.sync`. Compiled with `--verify` and run on both executors (2 warps, seeds 1 and
/// 0xbeef): same memory as the PTX interpreter, and the scan is right.
#[test]
fn spin_at_a_shared_loop_header_runs_alike() {
    use launches::{Setup, Val};
    assert!(internal_errors("reconverge_inner_cycle_spin.ptx").is_empty());
    let src = std::fs::read_to_string(format!(
        "{}/tests/data/fuzz/reconverge_inner_cycle_spin.ptx",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("reproducer");
    let program = launches::compile(&src);
    let (module, _) = ptx2sass::ptx::parse(&src).expect("parses");
    let n = 64u32;
    let input: Vec<u8> = (0..4 * n).flat_map(|i| (i % 7 + 1).to_le_bytes()).collect();
    let mut s = Setup::new();
    let a = s.buf(input.clone());
    let b = s.buf(vec![0; 16 * n as usize]);
    let c = s.buf(vec![0; 4]);
    let l = s.launch(
        &program,
        "_Z5scan4PK4int4PS_Pii",
        [1, 1, 1],
        [n, 1, 1],
        &[Val::I(a), Val::I(b), Val::I(c), Val::I(u64::from(n))],
    );
    for seed in [1, 0xbeef] {
        let l = ptx2sass::exec::Launch { seed, ..l.clone() };
        let (want, _, diff) = ptx2sass::exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{e}"));
        assert!(diff.is_empty(), "{} difference(s), first {:?}", diff.len(), diff.first());
        // Thread i's last output is the sum of the first 4 (i + 1) inputs.
        let mut sum = 0u64;
        for i in 0..u64::from(n) {
            sum += (4 * i..4 * i + 4).map(|k| k % 7 + 1).sum::<u64>();
            let got = want.global.read_uint("global", b + 16 * i + 12, 4).expect("in the buffer");
            assert_eq!(got, sum, "thread {i}");
        }
    }
}

/// Found by `fuzz/ exec` (docs/fuzzing.md "Found by the `exec` campaign"): a mutant of
/// samples/bitonic_sort.ptx (`bra.uni LBB0_42` -> `bra.uni LBB0_21` after the second
/// compare-exchange, plus register renames), `tests/data/fuzz/restructure_inner_cycle_loops.ptx`.
/// A divergent branch whose sides meet at `w` in the whole function but not within an
/// iteration of its loop was reported as `Problem::InnerCycle`, though none of its paths
/// back to the header avoids `w`: separating left it in the outer loop under the new
/// header with the same problem, one more header each round, until "restructuring for
/// reconvergence does not terminate". Now such a branch is no `InnerCycle` (it is planned
/// as before `lower::cfg::nest`), and the kernel compiles with `--verify`. The mutant loops
/// forever (step limit reached on the interpreter for n = 0, 1, 10 and 1000 keys), so it
/// is compiled only.
#[test]
fn inner_cycle_without_progress_is_not_separated() {
    assert!(internal_errors("restructure_inner_cycle_loops.ptx").is_empty());
    let path = format!("{}/tests/data/fuzz/restructure_inner_cycle_loops.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("reproducer");
    let mut opts = ptx2sass::driver::Options::default();
    opts.regalloc.verify = true;
    if let Err(d) = ptx2sass::driver::compile(&src, &opts) {
        let m: Vec<_> = d.into_iter().map(|d| d.message).collect();
        panic!("{m:?}");
    }
}

/// Found by `fuzz/ exec` (2026-11-25, docs/fuzzing.md "Found by the afternoon campaigns"):
/// an `nvcc_scan` mutant with `bar.sync %rd9, %rd10` stopped with "internal error: cannot
/// encode the SASS listing: `BAR.SYNC R8, R10`". Two causes: the encoding table had only
/// BAR's immediate forms (reference §1 BAR row: barrier id in Ra when bit 44 = 0, thread
/// count in Rb when bit 43 = 0), so `bar.sync %r1` could not be encoded either; and the
/// front end let 64-bit registers through (ptxas 11.8: "Arguments mismatch for
/// instruction 'bar'").
#[test]
fn barrier_operands_in_registers() {
    use launches::{Setup, Val};
    for body in ["bar.sync %rd1;", "bar.sync 0, %rd1;", "bar.sync %rd1, %rd2;", "bar.arrive %rd1, 32;"] {
        let errors = compile_errors(body);
        assert!(!errors.is_empty(), "`{body}` must be rejected");
        assert!(errors.iter().all(|e| !e.contains("internal error")), "`{body}`: {errors:?}");
    }
    // Barrier 1 by a register, a register thread count on barrier 0, and both: each
    // thread reads its neighbour's shared word after each barrier.
    let src = ".version 8.0\n.target sm_50\n.address_size 64\n\
        .entry k(.param .u64 out)\n{\n.reg .u32 %r<12>;\n.reg .u64 %rd<4>;\n\
        .shared .align 4 .b32 s[64];\n\
        mov.u32 %r1, %tid.x;\nmov.u32 %r2, 1;\nmov.u32 %r3, 64;\n\
        shl.b32 %r4, %r1, 2;\nmov.u32 %r5, s;\nadd.u32 %r5, %r5, %r4;\n\
        add.u32 %r6, %r1, 1;\nand.b32 %r6, %r6, 63;\nshl.b32 %r6, %r6, 2;\nmov.u32 %r7, s;\nadd.u32 %r7, %r7, %r6;\n\
        st.shared.u32 [%r5], %r1;\nbar.sync %r2;\nld.shared.u32 %r8, [%r7];\nbar.sync 0, %r3;\n\
        add.u32 %r8, %r8, 100;\nst.shared.u32 [%r5], %r8;\nbar.sync %r2, %r3;\nld.shared.u32 %r9, [%r7];\n\
        ld.param.u64 %rd1, [out];\nmul.wide.u32 %rd2, %r1, 4;\nadd.u64 %rd1, %rd1, %rd2;\n\
        st.global.u32 [%rd1], %r9;\nret;\n}\n";
    let opts = ptx2sass::driver::Options { check_encoding: true, ..Default::default() };
    let out = ptx2sass::driver::compile(src, &opts).unwrap_or_else(|d| panic!("{d:?}"));
    let text = out.text;
    for form in ["BAR.SYNC R", "BAR.SYNC 0x0, R"] {
        assert!(text.contains(form), "no `{form}` in\n{text}");
    }
    let program = launches::compile(src);
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let mut s = Setup::new();
    let b = s.buf(vec![0; 4 * 64]);
    let l = s.launch(&program, "k", [1, 1, 1], [64, 1, 1], &[Val::I(b)]);
    let (want, _, diff) = ptx2sass::exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{e}"));
    assert!(diff.is_empty(), "{} difference(s), first {:?}", diff.len(), diff.first());
    for i in 0..64u64 {
        let got = want.global.read_uint("global", b + 4 * i, 4).expect("in the buffer");
        assert_eq!(got, (i + 2) % 64 + 100, "thread {i}");
    }
}

/// `fuzz/ disasm` (CI smoke run of 2026-11-25, seed 1): a mutated cubin whose code section
/// is `.text.` with an empty function name disassembled to `Function :  `, a line the
/// listing reader does not take for a function start ("instruction outside any
/// function"). Now `disasm` refuses such a cubin with a reason.
#[test]
fn disasm_refuses_an_empty_function_name() {
    let bytes = std::fs::read("tests/data/fuzz/disasm_empty_function_name.bin").expect("the reproducer");
    match cubin::disasm(&bytes) {
        Err(e) => assert!(e.to_string().contains("names no function"), "{e}"),
        Ok((listing, _)) => {
            text::parse(&listing).unwrap_or_else(|e| panic!("disasm output does not read back: {e}\n{listing}"));
        }
    }
}
