//! What a launch can express and where it stops, on both executors (issue 22 items 3 and
//! 9, issue 20's executor items): dynamic shared memory after every static shared
//! variable of the kernel and its callees, one instance of a function's `.shared` variable
//! however many calls inline it, atomics whose lanes apply in one order in both executors,
//! initial contents of module variables, structures passed by value, the most negative
//! 64-bit integer, and the limits (steps, memory, parameter space, shared memory) that end
//! a launch with an error instead of an abort.

use ptx2sass::driver::{self, Options};
use ptx2sass::exec::ptx::args::{self, Arg};
use ptx2sass::exec::spec::{self, Budget, SpecError};
use ptx2sass::exec::{self, ExecError, Launch, Rng};
use ptx2sass::ptx::ast::Module;
use ptx2sass::sass::program::Program;

const HEAD: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

fn parse(src: &str) -> Module {
    match ptx2sass::ptx::parse(src) {
        Ok((m, _)) => m,
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("test", src).render_all(&d)),
    }
}

fn compile(src: &str) -> Program {
    match driver::compile(src, &Options::default()) {
        Ok(o) => o.program.expect("a program"),
        Err(d) => panic!("{}", ptx2sass::diag::SourceFile::new("test", src).render_all(&d)),
    }
}

fn words(b: &[u8]) -> Vec<u32> {
    b.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
}

/// Runs `launch` on both executors, asserts they agree on every buffer, and returns the
/// bytes of buffer `arg{k}` after the launch.
fn both(src: &str, launch: &Launch, k: usize) -> Vec<u8> {
    let (m, p) = (parse(src), compile(src));
    let (want, got, diff) = exec::compare(&m, &p, launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(diff.is_empty(), "the executors differ: {diff:?}");
    let name = format!("arg{k}");
    let w = args::buffer(&want.global, &name).expect("buffer").to_vec();
    assert_eq!(w, args::buffer(&got.global, &name).expect("buffer"));
    w
}

fn launch(src: &str, grid: [u32; 3], block: [u32; 3], a: &[Arg]) -> Launch {
    args::launch(&parse(src), "k", grid, block, a, 5_000_000).unwrap()
}

/// Issue 22 item 3: `dyn` used before the call that declares a `.shared` variable; the
/// dynamic array was placed at offset 0, on top of `kept`.
const DYN_AFTER_CALLEE: &str = r#"
.extern .shared .align 8 .b64 dyn[];
.func (.reg .u32 r) keep(.reg .u32 v)
{
    .shared .align 4 .u32 kept;
    st.shared.u32 [kept], v;
    bar.sync 0;
    ld.shared.u32 r, [kept];
    ret;
}
.visible .entry k(.param .u64 out)
{
    .reg .u64 p, v, a;
    .reg .u32 t, r;
    ld.param.u64 p, [out];
    mov.u32 t, %tid.x;
    cvt.u64.u32 v, t;
    mul.wide.u32 a, t, 8;
    add.u64 v, v, 1000;
    st.shared.u64 [dyn], v;
    mov.u64 a, dyn;
    mov.u32 r, 123;
    call (r), keep, (r);
    ld.shared.u64 v, [dyn];
    st.global.u64 [p], v;
    st.global.u32 [p+8], r;
    ret;
}
"#;

#[test]
fn dynamic_shared_memory_follows_the_static_data_of_called_functions() {
    let src = format!("{HEAD}{DYN_AFTER_CALLEE}");
    for seed in 0..4 {
        let l = Launch { seed, dynamic_shared: 8, ..launch(&src, [1; 3], [1, 1, 1], &[Arg::Buf(vec![0; 16])]) };
        assert_eq!(words(&both(&src, &l, 0)), [1000, 0, 123, 0]);
    }
}

#[test]
fn dynamic_shared_memory_has_the_launch_size() {
    let src = format!("{HEAD}{DYN_AFTER_CALLEE}");
    let (m, p) = (parse(&src), compile(&src));
    // `dyn` needs 8 dynamic bytes: with 4 both executors report an access out of bounds.
    let l = Launch { dynamic_shared: 4, ..launch(&src, [1; 3], [1, 1, 1], &[Arg::Buf(vec![0; 16])]) };
    let oob = |e: ExecError| matches!(e, ExecError::OutOfBounds { space: "shared", .. });
    assert!(oob(exec::ptx::run(&m, &l).unwrap_err()));
    assert!(oob(exec::sim::run(&p, &l).unwrap_err()));
    // 48 KiB per CTA, static and dynamic together (compute capability 5.0).
    let l = Launch { dynamic_shared: 0xc000, ..l };
    assert!(exec::ptx::run(&m, &l).is_ok());
    assert!(matches!(exec::sim::run(&p, &l), Err(ExecError::Launch(e)) if e.contains("49152")));
    let l = Launch { dynamic_shared: 0xc001, ..l };
    assert!(matches!(exec::ptx::run(&m, &l), Err(ExecError::Launch(_))));
}

/// A function's `.shared` variable is one per CTA, whatever the number of calls: the
/// second call reads what the first stored (each inlined copy had its own).
#[test]
fn a_function_shared_variable_is_one_per_declaration() {
    let src = format!(
        r#"{HEAD}
.func (.reg .u32 r) slot(.reg .u32 op, .reg .u32 v)
{{
    .shared .align 4 .u32 saved;
    .reg .pred w;
    setp.eq.u32 w, op, 0;
    @w st.shared.u32 [saved], v;
    bar.sync 0;
    ld.shared.u32 r, [saved];
    ret;
}}
.visible .entry k(.param .u64 out)
{{
    .reg .u64 p;
    .reg .u32 a, b, z, one;
    ld.param.u64 p, [out];
    mov.u32 z, 0;
    mov.u32 one, 1;
    mov.u32 a, 41;
    call (a), slot, (z, a);
    mov.u32 b, 7;
    call (b), slot, (one, b);
    st.global.u32 [p], a;
    st.global.u32 [p+4], b;
    ret;
}}
"#
    );
    for seed in 0..4 {
        let l = Launch { seed, ..launch(&src, [1; 3], [64, 1, 1], &[Arg::Buf(vec![0; 8])]) };
        assert_eq!(words(&both(&src, &l, 0)), [41, 41]);
    }
}

/// Slots allocated with `atom.add` by every lane of several warps, twice per thread: the
/// executors must agree on who got which slot (each drew the lane order from its own
/// random stream, and interleaved warps differently).
#[test]
fn atomic_slot_allocation_agrees_between_the_executors() {
    let src = format!(
        r#"{HEAD}
.visible .entry k(.param .u64 out, .param .u64 cnt)
{{
    .reg .u64 p, c, a;
    .reg .u32 t, i, n;
    .reg .pred q;
    ld.param.u64 p, [out];
    ld.param.u64 c, [cnt];
    mov.u32 t, %tid.x;
    mov.u32 n, 0;
L:
    atom.global.add.u32 i, [c], 1;
    mul.wide.u32 a, i, 4;
    add.u64 a, p, a;
    st.global.u32 [a], t;
    add.u32 n, n, 1;
    setp.lt.u32 q, n, 2;
    @q bra L;
    ret;
}}
"#
    );
    let mut seen = std::collections::HashSet::new();
    for seed in 0..6 {
        let l =
            Launch { seed, ..launch(&src, [2, 1, 1], [96, 1, 1], &[Arg::Buf(vec![0; 4 * 384]), Arg::Buf(vec![0; 4])]) };
        let out = words(&both(&src, &l, 0));
        // Every slot taken once per CTA and thread: each thread id 0..95 four times.
        let mut sorted = out.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..96u32).flat_map(|t| [t; 4]).collect::<Vec<_>>());
        seen.insert(out);
    }
    assert!(seen.len() > 1, "the order varies with the seed");
}

/// `atom.shared.add.f32` is a CAS loop in SASS (ptxas's code): its rounds must apply the
/// lanes in the interpreter's order, so the old values (float sums in that order) agree.
#[test]
fn atomic_float_add_through_a_cas_loop_agrees() {
    let src = format!(
        r#"{HEAD}
.visible .entry k(.param .u64 out)
{{
    .reg .u64 p, a;
    .reg .u32 t;
    .reg .f32 f, o;
    .reg .pred z;
    .shared .align 4 .f32 acc;
    ld.param.u64 p, [out];
    mov.u32 t, %tid.x;
    setp.eq.u32 z, t, 0;
    @z st.shared.f32 [acc], 0f3f800000;
    bar.sync 0;
    cvt.rn.f32.u32 f, t;
    mul.f32 f, f, 0f3dcccccd;
    atom.shared.add.f32 o, [acc], f;
    mul.wide.u32 a, t, 4;
    add.u64 a, p, a;
    st.global.f32 [a], o;
    ret;
}}
"#
    );
    for seed in 0..4 {
        let l = Launch { seed, ..launch(&src, [2, 1, 1], [64, 1, 1], &[Arg::Buf(vec![0; 4 * 64])]) };
        both(&src, &l, 0);
    }
}

const TABLE: &str = r#"
.const .align 4 .u32 table[4] = {1, 2, 3, 4};
.const .align 4 .u32 zeros[2];
.visible .entry k(.param .u64 out)
{
    .reg .u64 p;
    .reg .u32 a, b, c;
    ld.param.u64 p, [out];
    ld.const.u32 a, [table+4];
    ld.const.u32 b, [table+12];
    ld.const.u32 c, [zeros+4];
    st.global.u32 [p], a;
    st.global.u32 [p+4], b;
    st.global.u32 [p+8], c;
    ret;
}
"#;

#[test]
fn module_constants_take_their_launch_contents() {
    let src = format!("{HEAD}{TABLE}");
    let base = launch(&src, [1; 3], [1, 1, 1], &[Arg::Buf(vec![0; 12])]);
    assert_eq!(words(&both(&src, &base, 0)), [2, 4, 0]);
    // The start of `table` replaced, the rest keeps its initializer; `zeros` set whole.
    let init = vec![
        ("table".to_string(), [9u32, 10].iter().flat_map(|x| x.to_le_bytes()).collect()),
        ("zeros".to_string(), [5u32, 6].iter().flat_map(|x| x.to_le_bytes()).collect()),
    ];
    let l = Launch { module_init: init, ..base.clone() };
    assert_eq!(words(&both(&src, &l, 0)), [10, 4, 6]);
    // Unknown names and contents longer than the variable are launch errors.
    let (m, p) = (parse(&src), compile(&src));
    for bad in [("nope", 4), ("zeros", 12)] {
        let l = Launch { module_init: vec![(bad.0.to_string(), vec![0; bad.1])], ..base.clone() };
        assert!(matches!(exec::ptx::run(&m, &l), Err(ExecError::Launch(_))), "{bad:?}");
        assert!(matches!(exec::sim::run(&p, &l), Err(ExecError::Launch(_))), "{bad:?}");
    }
}

/// The interpreter models module `.global` variables, with initializers and launch
/// contents (the compiler rejects them: they need relocations).
#[test]
fn module_globals_on_the_interpreter() {
    let src = format!(
        r#"{HEAD}
.global .align 4 .u32 g[2] = {{7, 8}};
.visible .entry k(.param .u64 out)
{{
    .reg .u64 p, q;
    .reg .u32 a, b;
    ld.param.u64 p, [out];
    ld.global.u32 a, [g+4];
    mov.u64 q, g;
    ld.u32 b, [q];
    add.u32 b, b, 1;
    st.global.u32 [g], b;
    st.global.u32 [p], a;
    st.global.u32 [p+4], b;
    ret;
}}
"#
    );
    let m = parse(&src);
    let base = launch(&src, [1; 3], [1, 1, 1], &[Arg::Buf(vec![0; 8])]);
    let o = exec::ptx::run(&m, &base).unwrap();
    assert_eq!(words(args::buffer(&o.global, "arg0").unwrap()), [8, 8]);
    assert_eq!(words(args::buffer(&o.global, "var_g").unwrap()), [8, 8]);
    let l = Launch { module_init: vec![("g".into(), vec![1, 0, 0, 0, 2, 0, 0, 0])], ..base };
    let o = exec::ptx::run(&m, &l).unwrap();
    assert_eq!(words(args::buffer(&o.global, "arg0").unwrap()), [2, 2]);
}

/// A structure passed by value (`.param .align 8 .b8 s[16]`) from `bytes:` or a buffer
/// (`file:` data), and `i:` down to the most negative 64-bit value.
#[test]
fn structures_by_value_and_extreme_integers() {
    let src = format!(
        r#"{HEAD}
.visible .entry k(.param .u64 out, .param .align 8 .b8 s[16], .param .s64 n)
{{
    .reg .u64 p, a, b, c;
    .reg .u32 w;
    ld.param.u64 p, [out];
    ld.param.u64 a, [s];
    ld.param.u32 w, [s+12];
    ld.param.s64 c, [n];
    st.global.u64 [p], a;
    st.global.u32 [p+8], w;
    st.global.u64 [p+16], c;
    ret;
}}
"#
    );
    let mut r = Rng::new(1);
    let b = &mut Budget::new(1 << 20);
    let s = spec::arg("bytes:0102030405060708090a0b0c0d0e0f10", &mut r, b).unwrap();
    let n = spec::arg("i:-9223372036854775808", &mut r, b).unwrap();
    assert_eq!(n, Arg::Int(i64::MIN));
    let out = Arg::Buf(vec![0; 24]);
    let l = launch(&src, [1; 3], [1, 1, 1], &[out.clone(), s, n.clone()]);
    let got = both(&src, &l, 0);
    assert_eq!(got[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(got[8..12], [13, 14, 15, 16]);
    assert_eq!(got[16..], i64::MIN.to_le_bytes());
    // A buffer (here `zeros:`/`file:` data) given to a byte array is its value, not a
    // pointer; one longer than the array is refused.
    let l = launch(&src, [1; 3], [1, 1, 1], &[out.clone(), Arg::Buf((20..36).collect()), n.clone()]);
    assert_eq!(both(&src, &l, 0)[..8], [20, 21, 22, 23, 24, 25, 26, 27]);
    let e = args::launch(&parse(&src), "k", [1; 3], [1; 3], &[out, Arg::Buf(vec![0; 17]), n], 1000);
    assert!(matches!(e, Err(ExecError::Launch(m)) if m.contains("17 bytes")));
}

/// Issue 20: sizes are checked before anything is allocated, and every limit is an error.
#[test]
fn limits_are_errors_not_aborts() {
    let mut r = Rng::new(1);
    let b = &mut Budget::new(1 << 20);
    for s in ["zeros:18446744073709551615", "rand:u64:200000000", "rand:u8:18446744073709551615", "file:/dev/zero"] {
        assert!(matches!(spec::arg(s, &mut r, b), Err(SpecError::Input(_))), "{s}");
    }
    // A 4 GiB parameter and a 2 GiB `.local` array per thread are refused by the front end
    // (`ptx::limits`: 0x1100 parameter bytes, 512 KiB of local memory per thread); the
    // executors' own bounds are reached with the largest arrays it allows.
    let big_param = format!("{HEAD}.visible .entry k(.param .b8 p[4294967295])\n{{\nret;\n}}\n");
    assert!(ptx2sass::ptx::parse(&big_param).is_err());
    let big_local =
        format!("{HEAD}.visible .entry k(.param .u64 out)\n{{\n.local .align 4 .b8 big[2147483648];\nret;\n}}\n");
    assert!(ptx2sass::ptx::parse(&big_local).is_err());
    let big_local = format!(
        "{HEAD}.visible .entry k(.param .u64 out)\n{{\n.local .align 4 .b8 big[524288];\n.reg .u32 t;\n\
         mov.u32 t, %tid.x;\nst.local.u32 [big+524280], t;\nret;\n}}\n"
    );
    let l = Launch { memory_limit: 64 << 20, ..launch(&big_local, [1; 3], [1024, 1, 1], &[Arg::Int(0)]) };
    assert!(matches!(exec::sim::run(&compile(&big_local), &l), Err(ExecError::MemoryLimit { .. })));
    assert!(exec::ptx::run(&parse(&big_local), &l).is_err());
    // Recursion whose frames (registers, parameters, locals) outgrow a thread's share of
    // the memory limit (it grew until the call-depth limit: 1024 frames of 80 KB a thread).
    let deep = format!(
        "{HEAD}.func f(.reg .u32 n)\n{{\n.reg .b32 %r<10000>;\n.reg .pred p;\nsetp.gt.u32 p, n, 0;\n\
         sub.u32 %r9999, n, 1;\n@p call f, (%r9999);\nret;\n}}\n\
         .visible .entry k(.param .u32 n)\n{{\n.reg .u32 m;\nld.param.u32 m, [n];\ncall f, (m);\nret;\n}}\n"
    );
    let l = Launch { memory_limit: 16 << 20, ..launch(&deep, [1; 3], [32, 1, 1], &[Arg::Int(1000)]) };
    assert!(matches!(exec::ptx::run(&parse(&deep), &l), Err(ExecError::MemoryLimit { .. })));
    let l = Launch { memory_limit: 16 << 20, ..launch(&deep, [1; 3], [32, 1, 1], &[Arg::Int(3)]) };
    assert!(exec::ptx::run(&parse(&deep), &l).is_ok());
    // A grid whose threads cannot all run once within the step limit fails at once.
    let empty = format!("{HEAD}.visible .entry k()\n{{\nret;\n}}\n");
    let l = Launch { step_limit: 50_000_000, ..launch(&empty, [65535, 65535, 64], [1024, 1, 1], &[]) };
    let t = std::time::Instant::now();
    assert!(matches!(exec::ptx::run(&parse(&empty), &l), Err(ExecError::Launch(m)) if m.contains("--max-steps")));
    assert!(matches!(exec::sim::run(&compile(&empty), &l), Err(ExecError::Launch(m)) if m.contains("--max-steps")));
    assert!(t.elapsed().as_secs() < 5);
    // Block and grid dimensions beyond compute capability 5.0.
    for (g, bl) in [([1, 65536, 1], [1, 1, 1]), ([1, 1, 1], [1, 1, 65])] {
        let l = launch(&empty, g, bl, &[]);
        assert!(matches!(exec::ptx::run(&parse(&empty), &l), Err(ExecError::Launch(_))));
        assert!(matches!(exec::sim::run(&compile(&empty), &l), Err(ExecError::Launch(_))));
    }
    // A step limit reached while running.
    let spin = format!("{HEAD}.visible .entry k()\n{{\nL:\nbra L;\n}}\n");
    let l = Launch { step_limit: 10_000, ..launch(&spin, [1; 3], [32, 1, 1], &[]) };
    assert_eq!(exec::ptx::run(&parse(&spin), &l).unwrap_err(), ExecError::StepLimit(10_000));
    assert_eq!(exec::sim::run(&compile(&spin), &l).unwrap_err(), ExecError::StepLimit(10_000));
}

/// The simulator's constant bank 0 holds the dynamic shared size at `0xfc`, where ptxas
/// 11.8 reads `%dynamic_smem_size` (`MOV R4, c[0x0][0xfc]`): the parameter read of a
/// compiled kernel is redirected there.
#[test]
fn dynamic_shared_size_in_constant_bank_zero() {
    use ptx2sass::sass::instr::SrcKind;
    let src = format!(
        "{HEAD}.visible .entry k(.param .u64 out, .param .u32 n)\n{{\n.reg .u64 p;\n.reg .u32 a;\n\
         ld.param.u64 p, [out];\nld.param.u32 a, [n];\nst.global.u32 [p], a;\nret;\n}}\n"
    );
    let mut p = compile(&src);
    let mut redirected = 0;
    for s in &mut p.functions[0].code {
        for x in &mut s.instr.srcs {
            if let SrcKind::CBuf { bank: 0, offset, .. } = &mut x.kind
                && *offset == 0x148
            {
                *offset = 0xfc;
                redirected += 1;
            }
        }
    }
    assert_eq!(redirected, 1);
    let l = Launch { dynamic_shared: 100, ..launch(&src, [1; 3], [1, 1, 1], &[Arg::Buf(vec![0; 4]), Arg::Int(7)]) };
    let o = exec::sim::run(&p, &l).unwrap();
    assert_eq!(words(args::buffer(&o.global, "arg0").unwrap()), [100]);
}
