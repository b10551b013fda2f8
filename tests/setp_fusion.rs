//! A comparison combined with another predicate (`and.pred`/`or.pred`/`xor.pred`, or
//! `setp`'s own `.and`/`.or`/`.xor` form lowered as two instructions) becomes one
//! `ISETP`/`FSETP` using its boolean operand, as ptxas 11.8 writes it
//! (`ISETP.LT.AND P0, PT, R20, c[0x0][0x148], !P4` in `samples/sgemm_reg.ptx`), not a
//! comparison followed by a `PSETP` (`lower::opt::combine`). Each kernel runs on both executors
//! (64 threads) and the stored flags must equal the values computed here.

#[path = "common/launches.rs"]
mod launches;

use launches::*;
use ptx2sass::exec;

const HEADER: &str = ".version 7.0\n.target sm_50\n.address_size 64\n";

/// `k(in, out)`: `%x` = the thread's input word, `%y` = 37 - x, `%f` = x as f32; `body`
/// sets `%p1`..`%p3`, stored as three words.
fn kernel(body: &str) -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 pin, .param .u64 pout)\n{{\n\
         .reg .b32 %t, %x, %y, %r<4>;\n.reg .b64 %i, %o, %d;\n.reg .pred %p<4>, %q<4>;\n.reg .f32 %f;\n\
         mov.u32 %t, %tid.x;\nld.param.u64 %i, [pin];\nld.param.u64 %o, [pout];\n\
         mul.wide.u32 %d, %t, 4;\nadd.s64 %i, %i, %d;\nmul.wide.u32 %d, %t, 16;\nadd.s64 %o, %o, %d;\n\
         ld.global.u32 %x, [%i];\nsub.u32 %y, 37, %x;\ncvt.rn.f32.u32 %f, %x;\n{body}\n\
         selp.u32 %r1, 1, 0, %p1;\nselp.u32 %r2, 1, 0, %p2;\nselp.u32 %r3, 1, 0, %p3;\n\
         st.global.v4.u32 [%o], {{%r1, %r2, %r3, %x}};\nret;\n}}\n"
    )
}

/// Runs `src` on 64 threads with input `t * 7 % 41`, compares the executors and returns
/// the SASS listing and each thread's three flags.
fn run(src: &str) -> (String, Vec<[bool; 3]>) {
    let program = compile(src);
    let (module, _) = ptx2sass::ptx::parse(src).expect("parses");
    let mut s = Setup::new();
    let pin = s.buf((0..64u32).flat_map(|t| (t * 7 % 41).to_le_bytes()).collect());
    let pout = s.buf(vec![0; 64 * 16]);
    let l = s.launch(&program, "k", [1, 1, 1], [64, 1, 1], &[Val::I(pin), Val::I(pout)]);
    let (want, _, diff) = exec::compare(&module, &program, &l).unwrap_or_else(|e| panic!("{e}\n{src}"));
    assert!(diff.is_empty(), "executors differ\n{program}");
    let flags = (0..64u64)
        .map(|t| {
            std::array::from_fn(|k| want.global.read_uint("global", pout + 16 * t + 4 * k as u64, 4).unwrap() != 0)
        })
        .collect();
    (program.to_string(), flags)
}

#[test]
fn comparison_and_predicate_fuse_for_every_boolean_operation() {
    let body = "setp.lt.u32 %q0, %x, 20;\nsetp.gt.u32 %q1, %y, 5;\n\
        setp.eq.u32 %q2, %x, 9;\nand.pred %p1, %q1, %q0;\n\
        setp.ne.u32 %q3, %y, 12;\nor.pred %p2, %q2, !%q3;\n\
        setp.ge.f32 %q1, %f, 0f41200000;\nxor.pred %p3, %q0, %q1;";
    let (listing, flags) = run(&kernel(body));
    for (t, got) in flags.iter().enumerate() {
        let x = t as u32 * 7 % 41;
        let y = 37u32.wrapping_sub(x);
        let want = [y > 5 && x < 20, x == 9 || y == 12, (x < 20) ^ (x as f32 >= 10.0)];
        assert_eq!(*got, want, "thread {t}, x = {x}");
    }
    assert!(!listing.contains("PSETP"), "every combination fused into its comparison\n{listing}");
    assert!(listing.contains("FSETP.GE.XOR"), "{listing}");
    assert!(listing.contains("SETP.NE.U32.OR") || listing.contains("SETP.EQ.U32.OR"), "{listing}");
}

/// A comparison read twice is not fused (it would be computed twice), and the result is
/// still right.
#[test]
fn a_comparison_with_two_readers_stays() {
    let body = "setp.lt.u32 %q0, %x, 20;\nsetp.gt.u32 %q1, %y, 5;\nand.pred %p1, %q0, %q1;\n\
        or.pred %p2, %q0, %q1;\nmov.pred %p3, %q0;";
    let (_, flags) = run(&kernel(body));
    for (t, got) in flags.iter().enumerate() {
        let x = t as u32 * 7 % 41;
        let y = 37u32.wrapping_sub(x);
        assert_eq!(*got, [x < 20 && y > 5, x < 20 || y > 5, x < 20], "thread {t}");
    }
}
