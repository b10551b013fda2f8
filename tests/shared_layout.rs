//! The compiler's placement of `.shared` variables (`lower::mem::shared`) against what ptxas
//! 11.8 `-O3 -arch=sm_50` does on the same kernels (offsets read with `cuobjdump -sass`,
//! sizes with `ptxas -v`): declaration order, one instance per declaration, dynamic shared
//! memory after all static data rounded to `max(16, .align)`, the 48 KiB limit.

use ptx2sass::driver::{self, Options};

const HEAD: &str = ".version 6.5\n.target sm_50\n.address_size 64\n";

/// The kernel's shared bytes and the `STS`/`MOV32I` lines of its listing.
fn layout(src: &str) -> (u32, String) {
    let src = format!("{HEAD}{src}");
    let out = driver::compile(&src, &Options::default())
        .unwrap_or_else(|d| panic!("{}", ptx2sass::diag::SourceFile::new("t", &src).render_all(&d)));
    let p = out.program.expect("program");
    // The kernel's code (every `.func` is also compiled on its own, with its own layout).
    let k = p.functions.iter().find(|f| f.kind == ".entry").expect("a kernel");
    let text = k.to_string();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("STS") || l.contains("MOV32I")).collect();
    (k.shared_bytes, lines.join("\n"))
}

/// The address operands of the `STS` instructions, in order.
fn sts(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| l.contains("STS"))
        .map(|l| l[l.find('[').unwrap()..=l.find(']').unwrap()].to_string())
        .collect()
}

/// ptxas: `ksh` 0x0, `a` 0x20, `gsh` 0x2c, `fsh` 0x34, 68 bytes (kernel's own, module,
/// then the callees in module order; not in order of use).
#[test]
fn static_variables_in_ptxas_order() {
    let src = r#"
.func g(.reg .u32 i)
{
    .shared .align 4 .b8 gsh[8];
    st.shared.u32 [gsh+4], i;
    ret;
}
.shared .align 4 .b8 a[12];
.shared .align 4 .b8 unused[100];
.func f(.reg .u32 i)
{
    .shared .align 4 .b8 fsh[16];
    st.shared.u32 [fsh+4], i;
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .u32 t;
    .shared .align 4 .b8 ksh[32];
    mov.u32 t, %tid.x;
    st.shared.u32 [ksh+4], t;
    call f, (t);
    call g, (t);
    st.shared.u32 [a+4], t;
    ret;
}
"#;
    let (bytes, listing) = layout(src);
    assert_eq!(bytes, 68);
    let mut got = sts(&listing);
    got.sort();
    let mut want = ["[0x4]", "[0x38]", "[0x30]", "[0x24]"].map(String::from).to_vec();
    want.sort();
    assert_eq!(got, want, "{listing}");
}

/// A `.func`'s `.shared` variable has one address for every call (ptxas `CAL`s one body).
#[test]
fn one_address_per_declaration() {
    let src = r#"
.func f(.reg .u32 i)
{
    .shared .align 4 .u32 cnt;
    st.shared.u32 [cnt], i;
    ret;
}
.visible .entry k()
{
    .reg .u32 t;
    mov.u32 t, %tid.x;
    call f, (t);
    add.u32 t, t, 1;
    call f, (t);
    ret;
}
"#;
    let (bytes, listing) = layout(src);
    assert_eq!(bytes, 4);
    assert!(sts(&listing).iter().all(|a| a == "[RZ]"), "{listing}");
}

/// ptxas: static data ending at 0xc puts `.align 4` dynamic shared memory at 0x10 (16
/// bytes smem); `.align 4` then `.align 64` arrays at 0x10 and 0x40, `.align 64` then
/// `.align 4` both at 0x40 (64 bytes smem); a callee's static data counts.
#[test]
fn dynamic_shared_memory_after_all_static_data() {
    let kernel = |decls: &str| {
        format!(
            r#"
.shared .align 4 .b8 modsh[12];
{decls}
.visible .entry k(.param .u64 out)
{{
    .reg .u64 p;
    .reg .u32 t, a, b;
    ld.param.u64 p, [out];
    mov.u32 t, %tid.x;
    st.shared.u32 [modsh], t;
    mov.u32 a, dynA;
    mov.u32 b, dynB;
    st.global.u32 [p], a;
    st.global.u32 [p+4], b;
    ret;
}}
"#
        )
    };
    let imm = |l: &str| -> Vec<String> {
        l.lines()
            .filter(|x| x.contains("MOV32I"))
            .map(|x| x.split(", ").nth(1).unwrap().split_whitespace().next().unwrap().to_string())
            .collect()
    };
    let (bytes, l) = layout(&kernel(".extern .shared .align 4 .b8 dynA[];\n.extern .shared .align 64 .b8 dynB[];"));
    assert_eq!((bytes, imm(&l)), (64, vec!["0x10".to_string(), "0x40".to_string()]), "{l}");
    let (bytes, l) = layout(&kernel(".extern .shared .align 64 .b8 dynA[];\n.extern .shared .align 4 .b8 dynB[];"));
    assert_eq!(bytes, 64);
    assert!(imm(&l).iter().all(|x| x == "0x40"), "{l}");
    // Used first, before the call that declares `fsh` (issue 22 item 3's reproducer).
    let src = r#"
.shared .align 4 .b8 modsh[12];
.extern .shared .align 8 .b64 dyn[];
.func f(.reg .u32 i)
{
    .shared .align 16 .b8 fsh[20];
    st.shared.u32 [fsh+4], i;
    ret;
}
.visible .entry k()
{
    .reg .u32 t;
    mov.u32 t, %tid.x;
    st.shared.u32 [dyn], t;
    st.shared.u32 [modsh], t;
    call f, (t);
    ret;
}
"#;
    let (bytes, l) = layout(src);
    assert_eq!(bytes, 0x30);
    let mut got = sts(&l);
    got.sort();
    assert_eq!(got, ["[0x14]", "[0x30]", "[RZ]"], "{l}");
}

/// ptxas: `Entry function 'k' uses too much shared data (0xc001 bytes, 0xc000 max)`.
#[test]
fn more_than_48_kib_is_an_error() {
    let src = |n: u32| {
        format!(
            "{HEAD}.shared .align 4 .b8 big[{n}];\n.visible .entry k()\n{{\n.reg .u32 t;\nmov.u32 t, %tid.x;\n\
             st.shared.u32 [big], t;\nret;\n}}\n"
        )
    };
    assert!(driver::compile(&src(49152), &Options::default()).is_ok());
    // One variable over 48 KiB is refused by the front end (`ptx::limits`); two that fit
    // alone but not together are refused by the kernel's layout, in ptxas's words.
    assert!(driver::compile(&src(49153), &Options::default()).is_err());
    let two = format!(
        "{HEAD}.shared .align 4 .b8 a[24576];\n.shared .align 4 .b8 b[24577];\n.visible .entry k()\n{{\n\
         .reg .u32 t;\nmov.u32 t, %tid.x;\nst.shared.u32 [a], t;\nst.shared.u32 [b], t;\nret;\n}}\n"
    );
    let Err(e) = driver::compile(&two, &Options::default()) else { panic!("49153 bytes accepted") };
    assert!(e.iter().any(|d| d.message.contains("too much shared data (0xc001 bytes, 0xc000 max)")), "{e:?}");
    // Sizes beyond 32 bits do not wrap around to small ones.
    let wrap = format!(
        "{HEAD}.shared .align 4 .b8 a[4294967296];\n.shared .align 4 .b8 b[16];\n.visible .entry k()\n{{\n\
         .reg .u32 t;\nmov.u32 t, %tid.x;\nst.shared.u32 [a], t;\nst.shared.u32 [b], t;\nret;\n}}\n"
    );
    assert!(driver::compile(&wrap, &Options::default()).is_err());
}
