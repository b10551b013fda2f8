//! Launch validation and error reporting of [`super::run`].

use super::run;
use crate::exec::{ExecError, GLOBAL_BASE, Launch, Memory};

const SRC: &str = ".version 7.0\n.target sm_50\n.address_size 64\n\
.extern .shared .align 4 .b32 dyn[];\n\
.visible .entry k(.param .u64 p, .param .u32 n)\n{\n\
.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [n];\n\
setp.eq.u32 %p1, %r1, 7;\n@%p1 bra DYN;\n\
setp.eq.u32 %p1, %r1, 9;\n@%p1 bra TEX;\n\
st.global.u32 [%rd1], %r1;\nret;\n\
DYN:\nld.shared.u32 %r2, [dyn];\nret;\n\
TEX:\nshfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;\nret;\n}\n";

fn launch(n: u32, grid: [u32; 3], block: [u32; 3]) -> Launch {
    let mut global = Memory::new();
    global.alloc("buf", GLOBAL_BASE, vec![0; 4]).unwrap();
    let mut params = GLOBAL_BASE.to_le_bytes().to_vec();
    params.extend(n.to_le_bytes());
    Launch { step_limit: 1000, ..Launch::new("k", grid, block, params, global) }
}

#[test]
fn launches_are_validated() {
    let (m, _) = crate::ptx::parse(SRC).unwrap();
    let ok = run(&m, &launch(3, [1; 3], [1; 3])).unwrap();
    assert_eq!(ok.global.read_uint("global", GLOBAL_BASE, 4).unwrap(), 3);
    assert_eq!(ok.steps, 8);
    assert!(matches!(run(&m, &launch(3, [0, 1, 1], [1; 3])), Err(ExecError::Launch(_))));
    assert!(matches!(run(&m, &launch(3, [1; 3], [1025, 1, 1])), Err(ExecError::Launch(_))));
    let mut l = launch(3, [1; 3], [1; 3]);
    l.params.pop();
    assert!(matches!(run(&m, &l), Err(ExecError::Launch(_))));
    let l = Launch { kernel: "nope".into(), ..launch(3, [1; 3], [1; 3]) };
    assert!(matches!(run(&m, &l), Err(ExecError::Launch(_))));
}

#[test]
fn unmodelled_forms_fail_only_when_executed() {
    let (m, _) = crate::ptx::parse(SRC).unwrap();
    // Dynamic shared memory has size 0: any access is out of bounds.
    let e = run(&m, &launch(7, [1; 3], [1; 3]));
    assert!(matches!(e, Err(ExecError::OutOfBounds { space: "shared", .. })), "{e:?}");
    let e = run(&m, &launch(9, [1; 3], [1; 3]));
    assert!(matches!(e, Err(ExecError::Unsupported(ref s)) if s.contains("shfl")), "{e:?}");
}

#[test]
fn runaway_recursion_is_an_error() {
    let src = ".version 7.0\n.target sm_50\n.address_size 64\n\
.func f()\n{\ncall.uni f, ();\nret;\n}\n\
.visible .entry k(.param .u64 p, .param .u32 n)\n{\ncall.uni f, ();\nret;\n}\n";
    let (m, _) = crate::ptx::parse(src).unwrap();
    let e = run(&m, &Launch { step_limit: 100_000, ..launch(0, [1; 3], [1; 3]) });
    assert!(matches!(e, Err(ExecError::Unsupported(ref s)) if s.contains("call depth")), "{e:?}");
}

#[test]
fn argument_lists_build_launches() {
    use super::args::{Arg, buffer, launch as build};
    let (m, _) = crate::ptx::parse(SRC).unwrap();
    let l = build(&m, "k", [1; 3], [1; 3], &[Arg::Buf(vec![0; 4]), Arg::Int(3)], 100).unwrap();
    assert_eq!(l.params.len(), 12);
    assert_eq!(&l.params[..8], &GLOBAL_BASE.to_le_bytes());
    let o = run(&m, &l).unwrap();
    assert_eq!(buffer(&o.global, "arg0"), Some(&[3, 0, 0, 0][..]));
    assert!(matches!(build(&m, "k", [1; 3], [1; 3], &[Arg::Int(3)], 100), Err(ExecError::Launch(_))));
    assert!(matches!(build(&m, "x", [1; 3], [1; 3], &[], 100), Err(ExecError::Launch(_))));
}
