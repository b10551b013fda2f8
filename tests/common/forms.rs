//! The kernel and operand values shared by the per-form differential tests
//! (`tests/exec_int.rs`, `tests/exec_float.rs`): one instruction form per kernel, each
//! thread loading its sources from 8-byte slots of `pin` and storing its destinations to
//! `pout` (32-byte slots per thread).
#![allow(dead_code)]

use crate::launches::Rng;
use ptx2sass::ptx::types::ScalarType;
use ptx2sass::sass::program::Program;

/// Threads per launch (4 CTAs of 128).
pub const THREADS: u32 = 512;
/// Bytes per thread in `pin` and `pout`: four 8-byte operand or result slots.
pub const SLOT: u64 = 32;

/// The `.reg` type declaring a register of type `t`.
pub fn reg_decl(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Pred => ".pred",
        t if t.is_float() => {
            if t.bits() == 64 {
                ".f64"
            } else {
                ".f32"
            }
        }
        t => match t.bits() {
            16 => ".b16",
            32 => ".b32",
            _ => ".b64",
        },
    }
}

/// The kernel of one form: `text` with sources `%s1..` of types `srcs` and destinations
/// `%d0..` of types `dsts`. 16-bit sources are loaded as 32 bits and converted, so their
/// registers carry garbage in the upper half; predicates are stored as 0/1 words.
pub fn kernel(text: &str, srcs: &[ScalarType], dsts: &[ScalarType]) -> String {
    let mut b = String::new();
    for (k, t) in srcs.iter().enumerate() {
        b.push_str(&format!(".reg {} %s{};\n", reg_decl(*t), k + 1));
    }
    for (k, t) in dsts.iter().enumerate() {
        b.push_str(&format!(".reg {} %d{k};\n", reg_decl(*t)));
    }
    b.push_str(
        ".reg .b32 %t<8>;\n.reg .b64 %a<8>;\n\
         ld.param.u64 %a1, [pin];\nld.param.u64 %a2, [pout];\n\
         mov.u32 %t1, %tid.x;\nmov.u32 %t2, %ctaid.x;\nmov.u32 %t3, %ntid.x;\nmad.lo.s32 %t1, %t2, %t3, %t1;\n\
         mul.wide.u32 %a3, %t1, 32;\nadd.s64 %a4, %a1, %a3;\nadd.s64 %a5, %a2, %a3;\n",
    );
    for (k, t) in srcs.iter().enumerate() {
        let off = 8 * k;
        if t.bits() == 16 {
            // A 16-bit register whose upper half is whatever the 32-bit load brought.
            b.push_str(&format!("ld.global.u32 %t4, [%a4+{off}];\ncvt.u16.u32 %s{}, %t4;\n", k + 1));
        } else {
            b.push_str(&format!("ld.global{} %s{}, [%a4+{off}];\n", t.as_str(), k + 1));
        }
    }
    b.push_str(text);
    b.push('\n');
    for (k, t) in dsts.iter().enumerate() {
        let off = 8 * k;
        if *t == ScalarType::Pred {
            b.push_str(&format!("selp.u32 %t5, 1, 0, %d{k};\nst.global.u32 [%a5+{off}], %t5;\n"));
        } else {
            let st = if t.is_float() { t.as_str().to_string() } else { format!(".b{}", t.bits()) };
            b.push_str(&format!("st.global{st} [%a5+{off}], %d{k};\n"));
        }
    }
    format!(
        ".version 7.8\n.target sm_50\n.address_size 64\n\
         .visible .entry k(.param .u64 pin, .param .u64 pout)\n{{\n{b}ret;\n}}\n"
    )
}

/// Edge values of an integer of `bits` bits (as u64 bit patterns, sign-extended).
pub fn int_core(bits: u32) -> Vec<u64> {
    let m = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let min = 1u64 << (bits - 1);
    let v = [0, 1, 2, 3, 7, m, m - 1, min, min + 1, min - 1, 1u64 << (bits / 2), (1u64 << (bits / 2)) - 1];
    v.iter().map(|x| x & m).collect()
}

/// [`int_core`] plus powers of two and their neighbours, and a few patterns.
pub fn int_edges(bits: u32) -> Vec<u64> {
    let m = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let mut v = int_core(bits);
    for k in 0..bits {
        v.push(1u64 << k);
        v.push((1u64 << k).wrapping_sub(1) & m);
        v.push((1u64 << k).wrapping_add(1) & m);
        v.push((1u64 << k).wrapping_neg() & m);
    }
    v.extend([10, 100, 1000, 65535, 65536, 0x7fff, 0x8000, 0x5555_5555_5555_5555 & m, 0xaaaa_aaaa_aaaa_aaaa & m]);
    v.iter().map(|x| x & m).collect()
}

/// `v` as the bits a register of type `t` holds: 16-bit values get random upper halves
/// (the lowering must not rely on them).
pub fn with_garbage(rng: &mut Rng, t: ScalarType, v: u64) -> u64 {
    if t.bits() == 16 { (v & 0xffff) | (rng.next() & 0xffff_0000) } else { v }
}

/// The `pin` buffer of one launch for sources `srcs` (type and value kind `K`), `SLOT`
/// bytes per thread: the first threads enumerate the cross product of the first two
/// sources' `core` values (the other sources cycling through theirs), the rest draw with
/// `draw`.
pub fn inputs<K: Copy>(
    srcs: &[(ScalarType, K)],
    rng: &mut Rng,
    core: impl Fn(ScalarType, K) -> Vec<u64>,
    draw: impl Fn(&mut Rng, ScalarType, K) -> u64,
) -> Vec<u8> {
    let mut out = vec![0u8; (THREADS as u64 * SLOT) as usize];
    let cores: Vec<Vec<u64>> = srcs.iter().map(|(t, k)| core(*t, *k)).collect();
    let n0 = cores.first().map_or(1, |c| c.len());
    let n1 = cores.get(1).map_or(1, |c| c.len());
    for th in 0..THREADS as usize {
        for (k, (t, kind)) in srcs.iter().enumerate() {
            let v = if th < n0 * n1 && k < 2 {
                let idx = if k == 0 { th % n0 } else { th / n0 };
                with_garbage(rng, *t, cores[k][idx])
            } else if th < n0 * n1 {
                let c = &cores[k];
                with_garbage(rng, *t, c[(th + k) % c.len()])
            } else {
                draw(rng, *t, *kind)
            };
            let at = th * SLOT as usize + 8 * k;
            out[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// Asserts that the independent hazard checker (`sched::check`) accepts `program`'s
/// listing, which also shows that it knows every opcode; `what` names the form.
pub fn assert_hazard_free(program: &Program, what: &str) {
    let listing = program.to_string();
    let funcs = ptx2sass::sass::text::parse(&listing).expect("listing parses");
    let hazards = ptx2sass::sched::check::check(&funcs).expect("every opcode is in the checker's table");
    assert!(hazards.is_empty(), "`{what}`: {:?}\n{listing}", hazards.iter().map(|h| h.to_string()).collect::<Vec<_>>());
}

/// Panics with the first thread whose results differ between the interpreter (`want`)
/// and `who` (`got`): the form `text`, input set `set`, that thread's `n_srcs` operand
/// slots of `input` and `n_dsts` result slots at `pout` (`SLOT` bytes per thread, 8 per
/// value), the number of differing regions and `program`. Returns when `diff` is empty.
#[allow(clippy::too_many_arguments)]
pub fn assert_no_diff(
    text: &str,
    set: u64,
    (n_srcs, n_dsts): (usize, usize),
    input: &[u8],
    pout: u64,
    (want, got): (&ptx2sass::exec::Memory, &ptx2sass::exec::Memory),
    diff: &[ptx2sass::exec::Difference],
    who: &str,
    program: &dyn std::fmt::Display,
) {
    let Some(d) = diff.first() else { return };
    let th = (d.offset / SLOT) as usize;
    let ops: Vec<String> = (0..n_srcs)
        .map(|k| {
            let at = th * SLOT as usize + 8 * k;
            format!("{:#x}", u64::from_le_bytes(input[at..at + 8].try_into().unwrap()))
        })
        .collect();
    let read = |m: &ptx2sass::exec::Memory| -> Vec<String> {
        (0..n_dsts)
            .map(|k| {
                let at = pout + th as u64 * SLOT + 8 * k as u64;
                format!("{:#x}", m.read_uint("global", at, 8).unwrap())
            })
            .collect()
    };
    panic!(
        "`{text}` (input set {set}): thread {th}, operands {ops:?}: interpreter {:?}, {who} {:?} ({} differing region(s))\n{program}",
        read(want),
        read(got),
        diff.len(),
    );
}
