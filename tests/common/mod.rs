//! The generator of every `ld`/`st` form shared by `ldst_matrix` and `ptxas_agreement`:
//! the cross product of state space × memory-consistency qualifier and scope × cache
//! operator × eviction priority / hint × vector × type, each form placed in a kernel of
//! its own inside batches of kernels.
#![allow(dead_code)]

use ptx2sass::lower::mem::ldst::{Form, Space};
use ptx2sass::ptx::instr::{CacheOp as PtxCop, L1Evict, L2Evict, LdSt, MemSem, PrefetchSize, Scope};
use ptx2sass::ptx::types::{ParamSub, ScalarType, SharedSub, StateSpace};

pub const HEADER: &str = ".version 8.8\n.target sm_50\n.address_size 64\n\
.shared .align 32 .b8 sh[64];\n.const .align 32 .b8 cv[64];\n";

/// The eviction-priority / hint column of the cross product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// No hint.
    None,
    /// `.L1::evict_first`.
    L1First,
    /// `.L1::no_allocate`.
    L1NoAlloc,
    /// `.L2::evict_last`.
    L2Last,
    /// `.L2::cache_hint` with its cache-policy operand.
    L2CachePolicy,
    /// `.L2::128B` (loads only).
    Prefetch,
    /// `.unified` on the address.
    Unified,
    /// `.L2::cache_hint` without the operand (an error).
    MissingPolicy,
    /// A cache-policy operand without `.L2::cache_hint` (an error).
    ExtraPolicy,
}

#[derive(Clone, Debug)]
pub struct Case {
    /// The instruction as written in the kernel.
    pub text: String,
    /// Its expected classification.
    pub ldst: LdSt,
    /// The context `plan` needs.
    pub form: Form,
    /// The hint column it was generated from.
    pub hint: Hint,
}

pub fn spaces() -> Vec<(&'static str, Option<StateSpace>, Space)> {
    vec![
        ("", None, Space::Generic),
        (".global", Some(StateSpace::Global), Space::Global),
        (".shared", Some(StateSpace::Shared(SharedSub::None)), Space::Shared),
        (".shared::cta", Some(StateSpace::Shared(SharedSub::Cta)), Space::Shared),
        (".shared::cluster", Some(StateSpace::Shared(SharedSub::Cluster)), Space::Shared),
        (".local", Some(StateSpace::Local), Space::Local),
        (".const", Some(StateSpace::Const), Space::Const),
        (".param", Some(StateSpace::Param(ParamSub::None)), Space::KernelParam),
        (".param::entry", Some(StateSpace::Param(ParamSub::Entry)), Space::KernelParam),
        (".param::func", Some(StateSpace::Param(ParamSub::Func)), Space::FuncParam),
    ]
}

pub fn sems(is_ld: bool) -> Vec<(&'static str, Option<MemSem>, Option<Scope>, bool)> {
    let ar = if is_ld { MemSem::Acquire } else { MemSem::Release };
    let arw = if is_ld { ".acquire" } else { ".release" };
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    vec![
        ("", None, None, false),
        (".weak", Some(MemSem::Weak), None, false),
        (".volatile", Some(MemSem::Volatile), None, false),
        (".relaxed.cta", Some(MemSem::Relaxed), Some(Scope::Cta), false),
        (".relaxed.gpu", Some(MemSem::Relaxed), Some(Scope::Gpu), false),
        (".relaxed.sys", Some(MemSem::Relaxed), Some(Scope::Sys), false),
        (".relaxed.cluster", Some(MemSem::Relaxed), Some(Scope::Cluster), false),
        (leak(format!("{arw}.cta")), Some(ar), Some(Scope::Cta), false),
        (leak(format!("{arw}.gpu")), Some(ar), Some(Scope::Gpu), false),
        (leak(format!("{arw}.sys")), Some(ar), Some(Scope::Sys), false),
        (".mmio.relaxed.sys", Some(MemSem::Relaxed), Some(Scope::Sys), true),
        (".relaxed", Some(MemSem::Relaxed), None, false),
        (".volatile.gpu", Some(MemSem::Volatile), Some(Scope::Gpu), false),
    ]
}

pub fn cops(is_ld: bool) -> Vec<(&'static str, Option<PtxCop>, bool)> {
    if is_ld {
        vec![
            ("", None, false),
            (".ca", Some(PtxCop::Ca), false),
            (".cg", Some(PtxCop::Cg), false),
            (".cs", Some(PtxCop::Cs), false),
            (".lu", Some(PtxCop::Lu), false),
            (".cv", Some(PtxCop::Cv), false),
            (".nc", None, true),
        ]
    } else {
        vec![
            ("", None, false),
            (".wb", Some(PtxCop::Wb), false),
            (".cg", Some(PtxCop::Cg), false),
            (".cs", Some(PtxCop::Cs), false),
            (".wt", Some(PtxCop::Wt), false),
        ]
    }
}

pub fn hints(is_ld: bool) -> Vec<Hint> {
    let mut v = vec![
        Hint::None,
        Hint::L1First,
        Hint::L1NoAlloc,
        Hint::L2Last,
        Hint::L2CachePolicy,
        Hint::Unified,
        Hint::MissingPolicy,
        Hint::ExtraPolicy,
    ];
    if is_ld {
        v.push(Hint::Prefetch);
    }
    v
}

pub const TYPES: &[ScalarType] = &[
    ScalarType::U8,
    ScalarType::S16,
    ScalarType::B32,
    ScalarType::F32,
    ScalarType::B64,
    ScalarType::F64,
    ScalarType::B128,
];

/// The register holding one element of type `t`.
pub fn reg_of(t: ScalarType, k: usize) -> String {
    match t.bits() {
        128 => format!("%q{k}"),
        64 => format!("%rd{}", 10 + k),
        _ => format!("%r{k}"),
    }
}

/// All generated forms of `ld` (true) or `st`.
pub fn cases(is_ld: bool) -> Vec<Case> {
    let mut out = vec![];
    let op = if is_ld { "ld" } else { "st" };
    for (sp_word, sp, space) in spaces() {
        for (sem_word, sem, scope, mmio) in sems(is_ld) {
            for (cop_word, cop, nc) in cops(is_ld) {
                for hint in hints(is_ld) {
                    for vec in [None, Some(2u32), Some(4), Some(8)] {
                        for &ty in TYPES {
                            let mut mods = String::new();
                            mods.push_str(sem_word);
                            mods.push_str(sp_word);
                            mods.push_str(cop_word);
                            let (mut l1, mut l2, mut ch, mut pf, mut unified, mut policy) =
                                (None, None, false, None, false, false);
                            match hint {
                                Hint::None => {}
                                Hint::L1First => {
                                    mods.push_str(".L1::evict_first");
                                    l1 = Some(L1Evict::First);
                                }
                                Hint::L1NoAlloc => {
                                    mods.push_str(".L1::no_allocate");
                                    l1 = Some(L1Evict::NoAllocate);
                                }
                                Hint::L2Last => {
                                    mods.push_str(".L2::evict_last");
                                    l2 = Some(L2Evict::Last);
                                }
                                Hint::L2CachePolicy => {
                                    mods.push_str(".L2::cache_hint");
                                    ch = true;
                                    policy = true;
                                }
                                Hint::Prefetch => {
                                    mods.push_str(".L2::128B");
                                    pf = Some(PrefetchSize::B128);
                                }
                                Hint::Unified => unified = true,
                                Hint::MissingPolicy => {
                                    mods.push_str(".L2::cache_hint");
                                    ch = true;
                                }
                                Hint::ExtraPolicy => policy = true,
                            }
                            if let Some(v) = vec {
                                mods.push_str(&format!(".v{v}"));
                            }
                            mods.push_str(ty.as_str());
                            let n = vec.unwrap_or(1) as usize;
                            let data = if vec.is_some() {
                                format!("{{{}}}", (0..n).map(|k| reg_of(ty, k)).collect::<Vec<_>>().join(", "))
                            } else {
                                reg_of(ty, 0)
                            };
                            let (addr, immediate) = match space {
                                Space::Generic | Space::Global => ("[%rd1+32]".to_string(), false),
                                Space::Shared => ("[sh]".into(), false),
                                Space::Local => ("[lv]".into(), false),
                                Space::Const => ("[cv]".into(), false),
                                Space::KernelParam => ("[k_big]".into(), false),
                                Space::FuncParam => ("[fp]".into(), false),
                            };
                            let addr = if unified { format!("{addr}.unified") } else { addr };
                            let pol = if policy { ", %rd2" } else { "" };
                            let text = if is_ld {
                                format!("{op}{mods} {data}, {addr}{pol};")
                            } else {
                                format!("{op}{mods} {addr}, {data}{pol};")
                            };
                            let ldst = LdSt {
                                space: sp,
                                sem,
                                scope,
                                mmio,
                                cop,
                                nc,
                                l1_evict: l1,
                                l2_evict: l2,
                                cache_hint: ch,
                                prefetch: pf,
                                vec,
                                ty,
                            };
                            let form = Form {
                                is_ld,
                                space,
                                immediate_address: immediate,
                                has_policy_operand: policy,
                                unified,
                                uniform_address: matches!(space, Space::Generic | Space::Global),
                            };
                            out.push(Case { text, ldst, form, hint });
                        }
                    }
                }
            }
        }
    }
    out
}

/// One kernel per case: registers of every width, the address registers, and for loads a
/// volatile sink store of every loaded register so no part of the load is dead.
pub fn kernel(idx: usize, c: &Case) -> String {
    let mut body = String::new();
    body.push_str(".reg .b32 %r<9>;\n.reg .b64 %rd<20>;\n.reg .b128 %q<9>;\n.local .align 32 .b8 lv[64];\n.param .align 32 .b8 fp[64];\n");
    body.push_str("ld.param.u64 %rd1, [k_p];\nld.param.u64 %rd2, [k_p+8];\nld.param.u64 %rd3, [k_p+16];\n");
    if c.form.is_ld && c.form.space == Space::FuncParam {
        // A function parameter must be written before it is read: a plain store of the
        // same shape.
        let n = c.ldst.vec.unwrap_or(1) as usize;
        let data: Vec<String> = (0..n).map(|k| reg_of(c.ldst.ty, k)).collect();
        let (v, data) = match c.ldst.vec {
            Some(n) => (format!(".v{n}"), format!("{{{}}}", data.join(", "))),
            None => (String::new(), data[0].clone()),
        };
        body.push_str(&format!("st.param::func{v}{} [fp], {data};\n", c.ldst.ty.as_str()));
    }

    body.push_str(&c.text);
    body.push('\n');
    if c.form.is_ld {
        let sink_ty = match c.ldst.ty.bits() {
            128 => ".b128",
            64 => ".b64",
            _ => ".b32",
        };
        for k in 0..c.ldst.vec.unwrap_or(1) as usize {
            let r = reg_of(c.ldst.ty, k);
            body.push_str(&format!("st.volatile.global{sink_ty} [%rd3+{}], {r};\n", 16 * k));
        }
    }
    format!(
        ".visible .entry k{idx}(.param .align 32 .b8 k_p[64], .param .align 32 .b8 k_big[64])\n{{\n{body}ret;\n}}\n"
    )
}

/// Many kernels in one module, one form each.
pub struct Batch {
    /// The module text.
    pub src: String,
    /// Byte range of each kernel's form line, in kernel order.
    pub ranges: Vec<(u32, u32)>,
}

impl Batch {
    /// Kernel `k` of the batch holds `cases[k]`.
    pub fn new(header: &str, cases: &[&Case]) -> Batch {
        let mut src = header.to_string();
        let mut ranges = vec![];
        for (k, c) in cases.iter().enumerate() {
            let text = kernel(k, c);
            let at = text.find(&format!("\n{}\n", c.text)).expect("form line") + 1;
            let lo = (src.len() + at) as u32;
            ranges.push((lo, lo + c.text.len() as u32));
            src.push_str(&text);
        }
        Batch { src, ranges }
    }

    /// The kernel whose form line holds byte offset `o`.
    pub fn kernel_at(&self, o: u32) -> Option<usize> {
        let k = self.ranges.partition_point(|r| r.0 <= o).checked_sub(1)?;
        (o < self.ranges[k].1).then_some(k)
    }
}
