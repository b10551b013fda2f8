//! Both executors under step and memory limits on arbitrary PTX. The first 16 bytes are
//! the launch: byte 0 bit 7 takes the grid, bit 6 the block, raw from bytes 4..16
//! (hostile shapes), else small shapes from bytes 1..4; bit 5 asks for dynamic shared
//! memory; byte 3 is the seed. The rest is the PTX; its first kernel is launched with
//! every 8-byte parameter a pointer to a 4 KiB buffer, byte arrays filled, other
//! parameters a random integer. The interpreter runs the module; when it compiles, the
//! simulator runs the SASS. Oracles: no panic, no timeout or memory blow-up (the limits
//! hold), no internal compile error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx2sass::driver::{self, Options};
use ptx2sass::exec::ptx::args::{self, Arg};
use ptx2sass::exec::{self, Rng};
use ptx2sass::ptx::ast::{FuncKind, Item};
use ptx2sass_fuzz::{MAX_MEMORY, MAX_STEPS, bounded, no_internal_errors, text};

fuzz_target!(|data: &[u8]| {
    let Some((hdr, rest)) = data.split_first_chunk::<16>() else { return };
    let Some(src) = text(rest) else { return };
    let Ok((module, _)) = ptx2sass::ptx::parse(src) else { return };
    let Some(kernel) = module.items.iter().find_map(|i| match i {
        Item::Function(f) if f.kind == FuncKind::Entry && f.body.is_some() => Some(f),
        _ => None,
    }) else {
        return;
    };
    let raw = |k: usize| u32::from_le_bytes([hdr[4 + 4 * k], hdr[5 + 4 * k], hdr[6 + 4 * k], hdr[7 + 4 * k]]);
    let grid = if hdr[0] & 0x80 != 0 { [raw(0), raw(1), raw(2)] } else { [1 + u32::from(hdr[1]) % 3, 1, 1] };
    let block = if hdr[0] & 0x40 != 0 {
        [raw(2), raw(1), raw(0)]
    } else {
        [1 + u32::from(hdr[2]) % 96, 1 + u32::from(hdr[1] >> 6), 1]
    };
    let mut rng = Rng::new(u64::from(hdr[3]));
    let fill = |n: usize, rng: &mut Rng| (0..n).map(|_| rng.next_u64() as u8).collect::<Vec<u8>>();
    let arguments: Vec<Arg> = kernel
        .params
        .iter()
        .map(|p| match p.array {
            Some(n) => Arg::Bytes(fill(n.min(256) as usize, &mut rng)),
            None if p.ty.bits() == 64 => Arg::Buf(fill(4096, &mut rng)),
            None => Arg::Int((rng.next_u64() % 64) as i64),
        })
        .collect();
    let Ok(launch) = args::launch(&module, &kernel.name.name, grid, block, &arguments, MAX_STEPS) else { return };
    let launch = exec::Launch {
        seed: u64::from(hdr[3]),
        dynamic_shared: if hdr[0] & 0x20 != 0 { u32::from(hdr[2]) * 64 } else { 0 },
        memory_limit: MAX_MEMORY,
        ..launch
    };
    let _ = exec::ptx::run(&module, &launch);
    match driver::compile(src, &Options::default()) {
        Ok(out) => {
            let program = out.program.expect("SASS output has a program");
            let _ = exec::sim::run(&program, &launch);
        }
        Err(diags) => {
            bounded(src, &diags);
            no_internal_errors(src, &diags, |_| false);
        }
    }
});
