//! The instruction vocabulary of the random PTX kernels (`gen.rs`): register pools and
//! one instruction family per kind, each decoded from eight raw choices, so that
//! shrinking (every choice towards 0) gives the simplest form. Every instruction reads and
//! writes only pool registers and the scratch registers `%ai`, `%a0` (set before use in
//! the same text), with in-bounds, aligned addresses.
#![allow(dead_code)]

use super::generator::IN_BYTES;

/// Register classes of the variable pools: (prefix, PTX type, pool size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// `.b16` registers `%h0..2`.
    H,
    /// `.b32` registers `%r0..5`.
    R,
    /// `.b64` registers `%rd0..3`.
    D,
    /// `.f32` registers `%f0..3`.
    F,
    /// `.f64` registers `%fd0..2`.
    G,
    /// `.pred` registers `%p0..2`.
    P,
}
pub use Class::*;

impl Class {
    /// (register prefix, PTX type, pool size).
    pub fn info(self) -> (&'static str, &'static str, usize) {
        match self {
            H => ("%h", ".b16", 3),
            R => ("%r", ".b32", 6),
            D => ("%rd", ".b64", 4),
            F => ("%f", ".f32", 4),
            G => ("%fd", ".f64", 3),
            P => ("%p", ".pred", 3),
        }
    }
    /// Width in bits (1 for predicates).
    pub fn bits(self) -> u32 {
        match self {
            H => 16,
            R | F => 32,
            D | G => 64,
            P => 1,
        }
    }
}

/// Every class, in declaration order.
pub const CLASSES: [Class; 6] = [H, R, D, F, G, P];

/// The register `i` (modulo the pool size) of class `c`.
pub fn reg(c: Class, i: usize) -> String {
    let (p, _, n) = c.info();
    format!("{p}{}", i % n)
}

/// Raw choices, consumed in order.
pub struct Ch<'a>(pub &'a [u16; 8], pub usize);

impl Ch<'_> {
    /// The next choice, modulo `n`.
    pub fn n(&mut self, n: usize) -> usize {
        let v = self.0[self.1 % 8] as usize;
        self.1 += 1;
        v % n
    }
    /// One of `v`.
    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.n(v.len())]
    }
    /// True one time in `one_in`.
    pub fn flag(&mut self, one_in: usize) -> bool {
        self.n(one_in) == one_in - 1
    }
    /// A register of class `c`.
    pub fn reg(&mut self, c: Class) -> String {
        reg(c, self.n(64))
    }
    /// `k` distinct registers of class `c` (`k` at most the pool size).
    pub fn regs(&mut self, c: Class, k: usize) -> Vec<String> {
        let n = c.info().2;
        let first = self.n(n);
        (0..k).map(|j| reg(c, first + j)).collect()
    }
}

/// Integer immediates: small values and the edges of 16, 20 (ALU immediates), 32 and 64 bits.
pub const IMMS: &[i64] = &[
    0,
    1,
    2,
    3,
    7,
    16,
    31,
    32,
    33,
    255,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    (1 << 19) - 1,
    1 << 19,
    -(1 << 19),
    -(1 << 19) - 1,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_2345_6789,
    i64::MAX,
    i64::MIN,
    -1,
    -2,
    -100,
];

/// An integer immediate for a `bits`-wide type: signed types in decimal, others in hex.
pub fn imm(ch: &mut Ch, bits: u32, signed: bool) -> String {
    let v = ch.pick(IMMS);
    let v = if bits == 64 { v } else { v & ((1i64 << bits) - 1) };
    if signed {
        let s = if bits == 64 { v } else { (v << (64 - bits)) >> (64 - bits) };
        format!("{s}")
    } else {
        format!("0x{:x}", v as u64 & if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 })
    }
}

/// f32 bit patterns: zeros, ones, halves, a huge value, subnormals, the edges, infinities,
/// a NaN, 1/3, and 2^24 + 2.
pub const F32S: &[u32] = &[
    0x0000_0000,
    0x8000_0000,
    0x3f80_0000,
    0xbf80_0000,
    0x3f00_0000,
    0x4040_0000,
    0x7149_f2ca,
    0x0000_0001,
    0x007f_ffff,
    0x0080_0000,
    0x7f7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x3eaa_aaab,
    0x4b80_0001,
];
/// f64 bit patterns, as [`F32S`].
pub const F64S: &[u64] = &[
    0,
    0x8000_0000_0000_0000,
    0x3ff0_0000_0000_0000,
    0xbff0_0000_0000_0000,
    0x3fe0_0000_0000_0000,
    0x4008_0000_0000_0000,
    0x0000_0000_0000_0001,
    0x7fef_ffff_ffff_ffff,
    0x7ff0_0000_0000_0000,
    0x7ff8_0000_0000_0000,
    0x3fd5_5555_5555_5555,
    0x4340_0000_0000_0001,
];

/// A register of class `c`, or one time in `one_in` an immediate of its type.
pub fn src(ch: &mut Ch, c: Class, signed: bool, one_in: usize) -> String {
    if !ch.flag(one_in) {
        return ch.reg(c);
    }
    match c {
        F => format!("0f{:08X}", ch.pick(F32S)),
        G => format!("0d{:016X}", ch.pick(F64S)),
        _ => imm(ch, c.bits(), signed),
    }
}

/// `.sN` or `.uN` for class `c`.
pub fn int_ty(c: Class, signed: bool) -> String {
    format!(".{}{}", if signed { "s" } else { "u" }, c.bits())
}

/// Float rounding modifiers (none is `.rn`).
pub const RND: &[&str] = &["", ".rn", ".rz", ".rm", ".rp"];
/// Integer rounding modifiers.
pub const RNDI: &[&str] = &[".rni", ".rzi", ".rmi", ".rpi"];
/// Signed comparisons.
pub const CMP_S: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge"];
/// Unsigned comparisons.
pub const CMP_U: &[&str] = &["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"];
/// Float comparisons, ordered and unordered.
pub const CMP_F: &[&str] =
    &["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"];
/// Integer types of `cvt`, with their widths.
pub const CVT_INT: &[(&str, u32)] =
    &[("u8", 8), ("s8", 8), ("u16", 16), ("s16", 16), ("u32", 32), ("s32", 32), ("u64", 64), ("s64", 64)];

/// A register class able to hold an integer of `bits` under the relaxed width rules of
/// `ld`/`st`/`cvt` (PTX ISA 6.4.1): wider classes for sub-word types.
pub fn int_class(ch: &mut Ch, bits: u32) -> Class {
    match bits {
        8 | 16 => ch.pick(&[H, R, D]),
        32 => R,
        _ => D,
    }
}

/// A memory access type for class `c`: (type word, element bytes).
pub fn mem_ty(ch: &mut Ch, c: Class) -> (&'static str, u32) {
    match c {
        H => ch.pick(&[(".u16", 2), (".s16", 2), (".b16", 2), (".u8", 1), (".s8", 1)]),
        R => ch.pick(&[(".u32", 4), (".s32", 4), (".b32", 4), (".u16", 2), (".s16", 2), (".u8", 1), (".s8", 1)]),
        D => ch.pick(&[(".u64", 8), (".s64", 8), (".b64", 8), (".u16", 2), (".s16", 2), (".s8", 1)]),
        F => ch.pick(&[(".f32", 4), (".b32", 4)]),
        _ => ch.pick(&[(".f64", 8), (".b64", 8)]),
    }
}

/// A memory access: data class, vector width (one the pool allows), type word, element
/// bytes. 256-bit vectors (`.v4` of 64-bit elements) only where `wide` (`.global`).
pub fn mem_access(ch: &mut Ch, wide: bool) -> (Class, u32, &'static str, u32) {
    let c = ch.pick(&[R, R, D, H, F, G]);
    let v = ch.pick(&[1u32, 1, 2, 4]);
    let v = if c.info().2 < v as usize { 2 } else { v };
    let (ty, eb) = mem_ty(ch, c);
    let v = if eb * v > 16 && !wide { 2 } else { v };
    (c, v, ty, eb)
}

/// `{a, b}` for vectors, `a` for scalars.
pub fn vec_text(v: u32, regs: &[String]) -> (String, String) {
    if v == 1 { (String::new(), regs[0].clone()) } else { (format!(".v{v}"), format!("{{{}}}", regs.join(", "))) }
}

/// `and.b32 %ai, IDX, mask; mul.wide.u32 %a0, %ai, bytes` (or the shift form) and the
/// base added: `%a0 = base + (idx & mask) * bytes`.
pub fn indexed(ch: &mut Ch, base: &str, idx: &str, count: u32, bytes: u32) -> String {
    let mask = count - 1;
    let scale = if ch.flag(2) {
        format!("cvt.u64.u32 %a0, %ai;\nshl.b64 %a0, %a0, {};\n", bytes.trailing_zeros())
    } else {
        format!("mul.wide.u32 %a0, %ai, {bytes};\n")
    };
    format!("and.b32 %ai, {idx}, {mask};\n{scale}add.s64 %a0, {base}, %a0;\n")
}

/// Number of instruction kinds ([`Inst::text`]).
pub const KINDS: u8 = 24;
/// Kinds outside the weighted table of `generator::program`, inserted by
/// `generator::carry_program`: a PTX carry-out and a carry-in ([`carry`]).
pub const CARRY_OUT: u8 = KINDS;
/// See [`CARRY_OUT`].
pub const CARRY_IN: u8 = KINDS + 1;

/// A carry-out (`add.cc`, `sub.cc`, `mad.lo/hi.cc`, `addc.cc`, `subc.cc`, `madc.lo/hi.cc`;
/// PTX ISA 9.7.2), whose sum goes one time in two to the scratch register `%ai`/`%a0`
/// that nothing reads, or a carry-in (`addc`, `subc`, `madc.lo/hi`, or `addc.u32 d, 0,
/// 0`, which captures the flag), 32 or 64 bits.
pub fn carry(cin: bool, ch: &mut Ch) -> String {
    let c = ch.pick(&[R, R, D]);
    let signed = ch.flag(2);
    let ty = int_ty(c, signed);
    if cin && ch.flag(4) {
        return format!("addc.u32 {}, 0, 0;", ch.reg(R));
    }
    let op = if cin {
        ch.pick(&["addc", "subc", "madc.lo", "madc.hi"]).to_string()
    } else {
        let op = ch.pick(&["add", "sub", "mad.lo", "mad.hi", "addc", "subc", "madc.lo", "madc.hi"]);
        format!("{op}.cc")
    };
    let d = if !cin && ch.flag(2) { (if c == D { "%a0" } else { "%ai" }).to_string() } else { ch.reg(c) };
    let a = ch.reg(c);
    let b = src(ch, c, signed, 3);
    if op.starts_with("mad") {
        format!("{op}{ty} {d}, {a}, {b}, {};", src(ch, c, signed, 3))
    } else {
        format!("{op}{ty} {d}, {a}, {b};")
    }
}

/// One instruction (or a few, for memory accesses with address arithmetic): a kind and
/// raw choices, decoded by [`Inst::text`].
#[derive(Clone, PartialEq, Eq)]
pub struct Inst {
    /// Which instruction family.
    pub kind: u8,
    /// The raw choices of its form and operands.
    pub ch: [u16; 8],
}

impl std::fmt::Debug for Inst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.text().trim_end())
    }
}

impl Inst {
    /// The PTX text: lines ending in `\n`.
    pub fn text(&self) -> String {
        let ch = &mut Ch(&self.ch, 0);
        let s = match if self.kind < KINDS { self.kind } else { self.kind.min(CARRY_IN) } {
            CARRY_OUT => carry(false, ch),
            CARRY_IN => carry(true, ch),
            0 => {
                let c = ch.pick(&[H, R, D, F, G]);
                let ty = match c {
                    F => ".f32".to_string(),
                    G => ".f64".to_string(),
                    _ => int_ty(c, false),
                };
                let d = ch.reg(c);
                format!("mov{ty} {d}, {};", src(ch, c, false, 2))
            }
            1 => {
                let c = ch.pick(&[H, R, D]);
                let ops: &[&str] = if c == D {
                    // 64-bit min/max: "`min.s64 ...` is not supported yet".
                    &["add", "sub", "mul.lo", "and", "or", "xor"]
                } else {
                    &["add", "sub", "mul.lo", "min", "max", "and", "or", "xor"]
                };
                let op = ch.pick(ops);
                let signed = ch.flag(2);
                let ty = if ["and", "or", "xor"].contains(&op) { format!(".b{}", c.bits()) } else { int_ty(c, signed) };
                let (d, a) = (ch.reg(c), ch.reg(c));
                format!("{op}{ty} {d}, {a}, {};", src(ch, c, signed, 3))
            }
            2 => {
                // 64-bit mad.lo: "`mad.lo.s64 ...` is not supported yet".
                let c = ch.pick(&[R, H]);
                let signed = ch.flag(2);
                let (d, a) = (ch.reg(c), ch.reg(c));
                let b = src(ch, c, signed, 3);
                format!("mad.lo{} {d}, {a}, {b}, {};", int_ty(c, signed), src(ch, c, signed, 4))
            }
            3 => {
                let (c, w) = ch.pick(&[(R, D), (H, R)]);
                let signed = ch.flag(2);
                let (d, a) = (ch.reg(w), ch.reg(c));
                format!("mul.wide{} {d}, {a}, {};", int_ty(c, signed), src(ch, c, signed, 3))
            }
            4 => {
                // 64-bit abs and cnot: "`abs.s64 ...` is not supported yet".
                let (op, c) = ch.pick(&[
                    ("neg.s", R),
                    ("neg.s", H),
                    ("neg.s", D),
                    ("abs.s", R),
                    ("abs.s", H),
                    ("not.b", R),
                    ("not.b", H),
                    ("not.b", D),
                    ("cnot.b", R),
                    ("cnot.b", H),
                ]);
                let (d, a) = (ch.reg(c), ch.reg(c));
                format!("{op}{} {d}, {a};", c.bits())
            }
            5 => {
                let c = ch.pick(&[R, H, D]);
                let left = ch.flag(2);
                let ty = if left { format!(".b{}", c.bits()) } else { int_ty(c, ch.flag(2)) };
                let (d, a) = (ch.reg(c), ch.reg(c));
                // 64-bit shifts by a register: "64-bit shifts by a register are not
                // supported yet".
                let amt = if c != D && ch.flag(2) {
                    ch.reg(R)
                } else {
                    ch.pick(&[0u32, 1, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100]).to_string()
                };
                format!("{}{ty} {d}, {a}, {amt};", if left { "shl" } else { "shr" })
            }
            6 => {
                let c = ch.pick(&[F, G]);
                let op = ch.pick(&["add", "sub", "mul", "min", "max"]);
                let minmax = op == "min" || op == "max";
                let rnd = if minmax { "" } else { ch.pick(RND) };
                let ftz = if c == F && ch.flag(2) { ".ftz" } else { "" };
                let sat = if c == F && !minmax && ch.flag(4) { ".sat" } else { "" };
                let (d, a) = (ch.reg(c), ch.reg(c));
                format!("{op}{rnd}{ftz}{sat}{} {d}, {a}, {};", c.info().1, src(ch, c, false, 3))
            }
            7 => {
                let c = ch.pick(&[F, F, G]);
                // fma.rz/rm/rp.f64: the simulator does not model DFMA's directed roundings.
                let rnd = if c == F { ch.pick(&[".rn", ".rz", ".rm", ".rp"]) } else { ".rn" };
                let op = if c == F && ch.flag(4) { "mad" } else { "fma" };
                let ftz = if c == F && ch.flag(2) { ".ftz" } else { "" };
                let sat = if c == F && ch.flag(4) { ".sat" } else { "" };
                let (d, a, b) = (ch.reg(c), ch.reg(c), src(ch, c, false, 4));
                format!("{op}{rnd}{ftz}{sat}{} {d}, {a}, {b}, {};", c.info().1, src(ch, c, false, 4))
            }
            8 => {
                let c = ch.pick(&[F, G]);
                let op = ch.pick(&["neg", "abs"]);
                let ftz = if c == F && ch.flag(2) { ".ftz" } else { "" };
                let (d, a) = (ch.reg(c), ch.reg(c));
                format!("{op}{ftz}{} {d}, {a};", c.info().1)
            }
            9 | 10 => {
                let (c, ty, cmp) = if self.kind % KINDS == 9 {
                    let c = ch.pick(&[R, H, D]);
                    match ch.n(3) {
                        0 => (c, int_ty(c, true), ch.pick(CMP_S)),
                        1 => (c, int_ty(c, false), ch.pick(CMP_U)),
                        _ => (c, format!(".b{}", c.bits()), ch.pick(&["eq", "ne"])),
                    }
                } else {
                    let c = ch.pick(&[F, G]);
                    let ftz = if c == F && ch.flag(3) { ".ftz" } else { "" };
                    (c, format!("{ftz}{}", c.info().1), ch.pick(CMP_F))
                };
                let signed = ty.contains(".s");
                let d = ch.regs(P, 2);
                let dst = if ch.flag(3) { format!("{}|{}", d[0], d[1]) } else { d[0].clone() };
                let (a, b) = (ch.reg(c), src(ch, c, signed, 3));
                let comb = if ch.flag(2) {
                    let neg = if ch.flag(2) { "!" } else { "" };
                    Some((ch.pick(&[".and", ".or", ".xor"]), format!(", {neg}{}", ch.reg(P))))
                } else {
                    None
                };
                let (bop, c3) = comb.unwrap_or(("", String::new()));
                format!("setp.{cmp}{bop}{ty} {dst}, {a}, {b}{c3};")
            }
            11 => {
                let op = ch.pick(&["and", "or", "xor", "not"]);
                let (d, a, b) = (ch.reg(P), ch.reg(P), ch.reg(P));
                if op == "not" { format!("not.pred {d}, {a};") } else { format!("{op}.pred {d}, {a}, {b};") }
            }
            12 => {
                let c = ch.pick(&[R, H, D, F, G]);
                let signed = ch.flag(2);
                let ty = match c {
                    F | G => c.info().1.to_string(),
                    _ => int_ty(c, signed),
                };
                let d = ch.reg(c);
                let (a, b) = (src(ch, c, signed, 3), src(ch, c, signed, 3));
                let neg = if ch.flag(3) { "!" } else { "" };
                format!("selp{ty} {d}, {a}, {b}, {neg}{};", ch.reg(P))
            }
            13 => {
                let (dt, db) = ch.pick(CVT_INT);
                let (st, sb) = ch.pick(CVT_INT);
                let (dc, sc) = (int_class(ch, db), int_class(ch, sb));
                let (d, a) = (ch.reg(dc), ch.reg(sc));
                format!("cvt.{dt}.{st} {d}, {a};")
            }
            14 => {
                let (st, sb) = ch.pick(CVT_INT);
                let sc = int_class(ch, sb);
                let c = ch.pick(&[F, G]);
                let rnd = ch.pick(&[".rn", ".rz", ".rm", ".rp"]);
                let (d, a) = (ch.reg(c), ch.reg(sc));
                format!("cvt{rnd}{}.{st} {d}, {a};", c.info().1)
            }
            15 => {
                // Float to 8/16-bit integers: "float to 8/16-bit integer conversion is
                // not supported yet".
                let (dt, db) = ch.pick(&CVT_INT[4..]);
                let c = ch.pick(&[F, G]);
                let rnd = ch.pick(&["", ".rni", ".rzi", ".rmi", ".rpi"]);
                let ftz = if c == F && ch.flag(3) { ".ftz" } else { "" };
                let (d, a) = (ch.reg(if db == 64 { D } else { R }), ch.reg(c));
                format!("cvt{rnd}{ftz}.{dt}{} {d}, {a};", c.info().1)
            }
            16 => {
                let (dc, sc, rnd) = match ch.n(4) {
                    0 => (G, F, ""),
                    1 => (F, G, ch.pick(&[".rn", ".rz", ".rm", ".rp"])),
                    2 => (F, F, ch.pick(RNDI)),
                    _ => (G, G, ch.pick(RNDI)),
                };
                let ftz = if (dc == F || sc == F) && ch.flag(3) { ".ftz" } else { "" };
                let sat = if dc == F && ch.flag(4) { ".sat" } else { "" };
                let (d, a) = (ch.reg(dc), ch.reg(sc));
                format!("cvt{rnd}{ftz}{sat}{}{} {d}, {a};", dc.info().1, sc.info().1)
            }
            17 => match ch.n(8) {
                0 => format!("mov.b32 {}, {};", ch.reg(F), ch.reg(R)),
                1 => format!("mov.b32 {}, {};", ch.reg(R), ch.reg(F)),
                2 => format!("mov.b64 {}, {};", ch.reg(G), ch.reg(D)),
                3 => format!("mov.b64 {}, {};", ch.reg(D), ch.reg(G)),
                4 => format!("mov.b64 {}, {{{}, {}}};", ch.reg(D), ch.reg(R), ch.reg(R)),
                5 => {
                    let r = ch.regs(R, 2);
                    format!("mov.b64 {{{}, {}}}, {};", r[0], r[1], ch.reg(D))
                }
                6 => format!("mov.b32 {}, {{{}, {}}};", ch.reg(R), ch.reg(H), ch.reg(H)),
                _ => {
                    let h = ch.regs(H, 2);
                    format!("mov.b32 {{{}, {}}}, {};", h[0], h[1], ch.reg(R))
                }
            },
            18 => {
                let s = ch.pick(&[
                    "%tid.x",
                    "%tid.y",
                    "%ntid.x",
                    "%ntid.y",
                    "%ctaid.x",
                    "%ctaid.y",
                    "%nctaid.x",
                    "%nctaid.y",
                    "%laneid",
                    "%lanemask_lt",
                    "%lanemask_le",
                    "%lanemask_eq",
                    "%lanemask_gt",
                    "%lanemask_ge",
                ]);
                format!("mov.u32 {}, {s};", ch.reg(R))
            }
            19 => {
                // Global loads from the read-only input.
                let form = ch.n(3);
                let (c, v, ty, eb) = mem_access(ch, form < 2);
                let bytes = eb * v;
                let qual = ch.pick(&["", "", ".ca", ".cg", ".cs", ".lu", ".cv", ".nc", ".volatile"]);
                let (_, d) = vec_text(v, &ch.regs(c, v as usize));
                let vv = if v == 1 { String::new() } else { format!(".v{v}") };
                match form {
                    0 => {
                        let off = ch.n((64 / bytes) as usize) as u32 * bytes;
                        format!("ld.global{qual}{vv}{ty} {d}, [%ing+{off}];")
                    }
                    1 => {
                        let idx = ch.reg(R);
                        let a = indexed(ch, "%in0", &idx, IN_BYTES as u32 / bytes, bytes);
                        format!("{a}ld.global{qual}{vv}{ty} {d}, [%a0];")
                    }
                    _ => {
                        // Generic: the kernel argument is a generic address.
                        let qual = if qual == ".nc" { "" } else { qual };
                        let off = ch.n((64 / bytes) as usize) as u32 * bytes;
                        format!("ld{qual}{vv}{ty} {d}, [%inb+{off}];")
                    }
                }
            }
            20 => {
                // Stores to the thread's own output slot, [128, 256).
                let generic = ch.flag(3);
                let (c, v, ty, eb) = mem_access(ch, !generic);
                let bytes = eb * v;
                let qual = ch.pick(&["", "", ".wb", ".cg", ".cs", ".wt", ".volatile"]);
                let regs: Vec<String> = (0..v).map(|_| ch.reg(c)).collect();
                let (vv, s) = vec_text(v, &regs);
                let off = 128 + ch.n((128 / bytes) as usize) as u32 * bytes;
                let (space, base) = if generic { ("", "%outb") } else { (".global", "%outg") };
                format!("st{space}{qual}{vv}{ty} [{base}+{off}], {s};")
            }
            21 => {
                // The thread's local array (64 bytes, initialized by the prologue).
                let (c, v, ty, eb) = mem_access(ch, false);
                let bytes = eb * v;
                let regs = ch.regs(c, v as usize);
                let (vv, data) = vec_text(v, &regs);
                // Static, indexed, generic (`cvta.local`), or there and back (`cvta.to.local`).
                let (addr, space) = match ch.n(4) {
                    0 => (format!("[loc+{}]", ch.n((64 / bytes) as usize) as u32 * bytes), ".local"),
                    k => {
                        let idx = ch.reg(R);
                        let a = indexed(ch, "%locb", &idx, 64 / bytes, bytes);
                        match k {
                            1 => (format!("{a}[%a0]"), ".local"),
                            2 => (format!("{a}cvta.local.u64 %a0, %a0;\n[%a0]"), ""),
                            _ => (format!("{a}cvta.local.u64 %a0, %a0;\ncvta.to.local.u64 %a0, %a0;\n[%a0]"), ".local"),
                        }
                    }
                };
                let (pre, addr) = match addr.rfind('\n') {
                    Some(i) => (addr[..=i].to_string(), addr[i + 1..].to_string()),
                    None => (String::new(), addr),
                };
                if ch.flag(2) {
                    format!("{pre}st{space}{vv}{ty} {addr}, {data};")
                } else {
                    format!("{pre}ld{space}{vv}{ty} {data}, {addr};")
                }
            }
            22 => {
                let (c, v, ty, eb) = mem_access(ch, false);
                let bytes = eb * v;
                let (_, d) = vec_text(v, &ch.regs(c, v as usize));
                let vv = if v == 1 { String::new() } else { format!(".v{v}") };
                if ch.flag(2) {
                    let idx = ch.reg(R);
                    let a = indexed(ch, "%ctb", &idx, 64 / bytes, bytes);
                    format!("{a}ld.const{vv}{ty} {d}, [%a0];")
                } else {
                    format!("ld.const{vv}{ty} {d}, [ctab+{}];", ch.n((64 / bytes) as usize) as u32 * bytes)
                }
            }
            _ => match ch.n(9) {
                0 => format!("ld.param.u32 {}, [pa];", ch.reg(R)),
                1 => format!("ld.param.u64 {}, [pb];", ch.reg(D)),
                2 => format!("ld.param.f32 {}, [pf];", ch.reg(F)),
                3 => format!("ld.param.f64 {}, [pd];", ch.reg(G)),
                4 => {
                    let r = ch.regs(R, 2);
                    format!("ld.param.v2.u32 {{{}, {}}}, [pv+{}];", r[0], r[1], 8 * ch.n(2))
                }
                5 => format!("ld.param.u8 {}, [pv+{}];", ch.reg(H), ch.n(16)),
                6 => format!("ld.param.s16 {}, [pv+{}];", ch.reg(R), 2 * ch.n(8)),
                7 => format!("ld.param.u64 {}, [pv+8];", ch.reg(D)),
                _ => {
                    let f = ch.regs(F, 4);
                    format!("ld.param.v4.f32 {{{}}}, [pv];", f.join(", "))
                }
            },
        };
        // One instruction in four is predicated (the last one, for those with address
        // arithmetic): `@%p` / `@!%p`.
        let guard = match self.ch[7] % 8 {
            6 => format!("@{} ", reg(P, self.ch[6] as usize)),
            7 => format!("@!{} ", reg(P, self.ch[6] as usize)),
            _ => String::new(),
        };
        let at = s.rfind('\n').map_or(0, |i| i + 1);
        format!("{}{guard}{}\n", &s[..at], &s[at..])
    }
}
