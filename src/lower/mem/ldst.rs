//! The lowering plan of every `ld`/`st` form: which SPA 5.0 access, size, cache operator
//! and memory barriers a qualified PTX access becomes, or the PTX ISA rule that rejects it.
//!
//! One function, [`plan`], decides; `mem.rs` emits what it says, the `ldst_matrix` test
//! checks the emitted code against it for the whole qualifier cross product, and
//! `docs/lowering.md`'s tables are generated from it ([`doc_tables`]).
//!
//! Memory model (PTX ISA 8 "Memory Consistency Model") on SPA 5.0, which has no ordering
//! bits in its loads and stores, only cache operators and `MEMBAR`:
//! * `.weak` (and no qualifier) is a plain access.
//! * `.volatile` must not be cached where another thread could miss it: `.CV` loads
//!   (fetch again) and `.WT` stores (write through), as ptxas does (findings section 2);
//!   shared memory has no caches, so plain `LDS`/`STS`.
//! * `.relaxed.cta` needs coherence among the CTA's threads, which run on one SM and share
//!   its L1: plain accesses. `.relaxed.gpu` must see other SMs' writes, so it bypasses L1:
//!   `.CG` (L2 is the point of coherence of the GPU). `.relaxed.sys` must see the host's
//!   and peers' writes to system memory: `.CV` loads, `.WT` stores.
//! * `.acquire.scope` = the relaxed load, then `MEMBAR` of the scope (later accesses are
//!   ordered after it); `.release.scope` = `MEMBAR` of the scope, then the relaxed store.
//!   Scopes map to `MEMBAR.CTA`, `.GL.IVALLD`, `.SYS.IVALLD` (ptxas's `membar.cta/gl/sys`,
//!   findings section 2). MEMBAR orders the thread's earlier accesses, loads included,
//!   before its later ones (PTX ISA 9.7.12.4 membar: "prior memory accesses requested by
//!   this thread are performed"), so the load need not be waited for; `.IVALLD` drops
//!   L1 lines so later loads cannot return data older than the acquire. On shared memory
//!   the other threads are in the CTA whatever the scope, so `MEMBAR.CTA`.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

//! * `.mmio.relaxed.sys` = `.CV` load / `.WT` store that nothing reorders or removes.
//! * `.cluster` scope and `.shared::cluster` need thread-block clusters: rejected.
//!
//! Hints without a Maxwell control (L2 eviction priorities, `.L2::cache_hint`, prefetch
//! sizes, `.unified`) are dropped with a warning; L1 eviction priorities map to the
//! nearest cache operator.

use crate::ptx::instr::{CacheOp as PtxCop, L1Evict, LdSt, MemSem, Scope};
use crate::ptx::types::{ParamSub, ScalarType, SharedSub, StateSpace};
use crate::sass::op::{CacheOp, MemSize, MembarLevel, Op};

/// Where an access goes after resolving generic addresses that are provably in one space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Generic addressing (`LD`/`ST` with Plg).
    Generic,
    /// Global memory (`LDG`/`STG`).
    Global,
    /// Shared memory of the CTA (`LDS`/`STS`).
    Shared,
    /// The thread's local memory (`LDL`/`STL`).
    Local,
    /// User constants, bank 3.
    Const,
    /// Kernel parameters, bank 0 from 0x140.
    KernelParam,
    /// Parameters of calls and device functions (held in registers after inlining).
    FuncParam,
}

/// The access instruction a plan uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `LD.E ..., Plg` / `ST.E ..., Plg` after `LEA`/`LEA.HI.X`.
    Generic,
    /// `LDG.E` / `STG.E`.
    Global,
    /// `LDS.U` / `STS`.
    Shared,
    /// `LDL` / `STL`.
    Local,
    /// A constant-bank operand `c[bank][off]` (static address) or `LDC` (register address).
    ConstBank,
    /// A register copy (call parameters).
    Register,
}

impl Access {
    /// The mnemonic family, e.g. `LDG`/`STG`.
    pub fn name(self, is_ld: bool) -> &'static str {
        match (self, is_ld) {
            (Access::Generic, true) => "LD.E (Plg)",
            (Access::Generic, false) => "ST.E (Plg)",
            (Access::Global, true) => "LDG.E",
            (Access::Global, false) => "STG.E",
            (Access::Shared, true) => "LDS.U",
            (Access::Shared, false) => "STS",
            (Access::Local, true) => "LDL",
            (Access::Local, false) => "STL",
            (Access::ConstBank, _) => "c[bank][..] / LDC",
            (Access::Register, _) => "register",
        }
    }
}

/// What one `ld`/`st` form becomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The access instruction.
    pub access: Access,
    /// Size of each access, in order (two for a 256-bit access split in halves).
    pub sizes: Vec<MemSize>,
    /// Cache operator of `LD/ST/LDG/STG` (others have none).
    pub cop: CacheOp,
    /// `MEMBAR` before the access (release).
    pub membar_before: Option<MembarLevel>,
    /// `MEMBAR` after the access (acquire).
    pub membar_after: Option<MembarLevel>,
    /// The access must not be removed or reordered (volatile, mmio).
    pub keep: bool,
    /// A 128-bit load may be marked `.U.128` when its address turns out warp-uniform:
    /// plain, `.ca` and `.nc` loads only, as ptxas does (`.cg/.cs/.lu/.cv` and volatile
    /// loads never get `.U`, ptxas 11.8).
    pub uniform_ok: bool,
    /// sm_70+ features implemented on SPA 5.0 (each gives a warning; errors with
    /// `--deny-emulation`).
    pub emulated: Vec<String>,
    /// Hints with no SPA 5.0 equivalent, dropped (each gives a warning).
    pub dropped: Vec<String>,
}

/// Why a form is rejected: the qualifier and the rule it breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The offending qualifier as written, e.g. `.volatile`.
    pub qualifier: String,
    /// The message, naming the rule and the PTX ISA section.
    pub message: String,
}

fn reject<T>(q: &str, msg: impl Into<String>) -> Result<T, Rejection> {
    Err(Rejection { qualifier: q.to_string(), message: msg.into() })
}

/// Everything [`plan`] needs to know besides the qualifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Form {
    /// `ld` (true) or `st`.
    pub is_ld: bool,
    /// The space after resolving provable generic addresses (`space_of`).
    pub space: Space,
    /// The address is an immediate `[imm]`.
    pub immediate_address: bool,
    /// A cache-policy operand follows the address.
    pub has_policy_operand: bool,
    /// The address operand carries `.unified`.
    pub unified: bool,
    /// The address is warp-uniform and depends only on parameters and constants
    /// (enables `.U.128`, findings section 3).
    pub uniform_address: bool,
}

/// The memory-barrier level of a scope on `space`.
fn membar(scope: Scope, space: Space) -> MembarLevel {
    match (space, scope) {
        (Space::Shared, _) | (_, Scope::Cta) => MembarLevel::Cta,
        (_, Scope::Gpu) | (_, Scope::Cluster) => MembarLevel::Gl,
        (_, Scope::Sys) => MembarLevel::Sys,
    }
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Cta => ".cta",
        Scope::Cluster => ".cluster",
        Scope::Gpu => ".gpu",
        Scope::Sys => ".sys",
    }
}

/// The SASS size for `bytes` (1, 2, 4, 8 or 16) of an access of element type `ty`
/// (sub-word signedness from the type; vectors of sub-word elements use the unsigned size
/// of the whole vector).
pub fn mem_size(ty: ScalarType, bytes: u32) -> MemSize {
    match bytes {
        1 if ty.is_signed() => MemSize::S8,
        1 => MemSize::U8,
        2 if ty.is_signed() && ty.bits() == 16 => MemSize::S16,
        2 => MemSize::U16,
        4 => MemSize::B32,
        8 => MemSize::B64,
        _ => MemSize::B128,
    }
}

/// The SASS access size(s) of `bytes` of elements of type `ty`: one access, or 128-bit
/// halves of a 256-bit access.
fn sizes(ty: ScalarType, bytes: u32) -> Vec<MemSize> {
    if bytes > 16 { vec![MemSize::B128; (bytes / 16) as usize] } else { vec![mem_size(ty, bytes)] }
}

/// The space an `ld`/`st` names, as a [`Space`] (generic stays generic here).
pub fn declared_space(s: Option<StateSpace>) -> Space {
    match s {
        None => Space::Generic,
        Some(StateSpace::Global) => Space::Global,
        Some(StateSpace::Shared(_)) => Space::Shared,
        Some(StateSpace::Local) => Space::Local,
        Some(StateSpace::Const) => Space::Const,
        Some(StateSpace::Param(ParamSub::Func)) => Space::FuncParam,
        Some(StateSpace::Param(_)) => Space::KernelParam,
        Some(StateSpace::Reg) => Space::Generic,
    }
}

/// Plans one `ld`/`st` form (PTX ISA 9.7.9.8 ld, 9.7.9.10 st).
pub fn plan(l: &LdSt, f: Form) -> Result<Plan, Rejection> {
    let op = if f.is_ld { "ld" } else { "st" };
    let mut emulated: Vec<String> = vec![];
    let mut dropped: Vec<String> = vec![];
    let space = f.space;
    let memory_like = matches!(space, Space::Generic | Space::Global | Space::Shared);
    // ---- spaces -------------------------------------------------------------------------
    if matches!(l.space, Some(StateSpace::Shared(SharedSub::Cluster))) {
        return reject(
            ".shared::cluster",
            "`.shared::cluster` needs thread-block clusters, which SPA 5.0 does not have (PTX ISA 5.1.5, sm_90)",
        );
    }
    if !f.is_ld && space == Space::Const {
        return reject(".const", "`st.const` is not allowed: the constant space is read-only (PTX ISA 5.1.3)");
    }
    if !f.is_ld && space == Space::KernelParam {
        return reject(
            ".param",
            "`st` to a kernel parameter is not allowed: kernel parameters are read-only (PTX ISA 5.1.6.1)",
        );
    }
    if f.immediate_address && space != Space::Local {
        return reject(
            "[imm]",
            "an immediate address is allowed only for `.local` (ptxas: `Immediate addresses allowed only for .local state space`)",
        );
    }
    // ---- types and vectors --------------------------------------------------------------
    let vec = l.vec.unwrap_or(1);
    if l.ty == ScalarType::Pred
        || matches!(l.ty, ScalarType::F16 | ScalarType::Bf16 | ScalarType::F16x2 | ScalarType::Bf16x2)
    {
        return reject(l.ty.as_str(), format!("`{op}{}` is not a valid type for {op} (PTX ISA 9.7.9.8 `.type`)", l.ty));
    }
    if l.ty == ScalarType::B128 {
        if vec > 1 {
            return reject(
                ".b128",
                format!("`.b128` cannot be a vector element (PTX ISA 9.7.9.8: `.b128` {op}s are scalar)"),
            );
        }
        emulated.push("`.b128` accesses (sm_70; a quad register on SPA 5.0)".into());
    }
    if vec == 8 && l.ty.bits() != 32 {
        return reject(".v8", format!("`.v8` needs a 32-bit element type, not `{}` (PTX ISA 9.7.9.8 `.v8`)", l.ty));
    }
    // `vec` is the vector count as written (`.v2` .. `.v8`); saturating, any larger is
    // rejected below.
    let bytes = l.ty.bytes().saturating_mul(vec);
    if bytes > 32 {
        return reject(
            &format!(".v{vec}"),
            format!("`.v{vec}{}` is {bytes} bytes; the widest access is 32 bytes (PTX ISA 9.7.9.8)", l.ty),
        );
    }
    if bytes == 32 {
        if space != Space::Global {
            return reject(
                &format!(".v{vec}"),
                format!("a 256-bit `.v{vec}{}` access must be in `.global` (PTX ISA 9.7.9.8)", l.ty),
            );
        }
        emulated.push(format!("256-bit `.v{vec}{}` (sm_100; two 128-bit accesses on SPA 5.0)", l.ty));
    }
    // ---- memory-consistency qualifiers --------------------------------------------------
    let sem_word = |s: MemSem| match s {
        MemSem::Weak => ".weak",
        MemSem::Volatile => ".volatile",
        MemSem::Relaxed => ".relaxed",
        MemSem::Acquire => ".acquire",
        MemSem::Release => ".release",
    };
    let ordered = matches!(l.sem, Some(MemSem::Volatile | MemSem::Relaxed | MemSem::Acquire | MemSem::Release));
    if let Some(sem) = l.sem
        && ordered
        && !memory_like
    {
        return reject(
            sem_word(sem),
            format!(
                "`{}` may be used only with `.global`, `.shared` and generic addressing (PTX ISA 9.7.9.8)",
                sem_word(sem)
            ),
        );
    }
    match (l.sem, l.scope) {
        (Some(sem @ (MemSem::Relaxed | MemSem::Acquire | MemSem::Release)), None) => {
            return reject(
                sem_word(sem),
                format!("`{}` needs a scope: `.cta`, `.gpu` or `.sys` (PTX ISA 9.7.9.8)", sem_word(sem)),
            );
        }
        (Some(MemSem::Weak | MemSem::Volatile) | None, Some(s)) if !l.mmio => {
            return reject(
                scope_name(s),
                format!(
                    "a scope such as `{}` needs `.relaxed`, `.acquire` or `.release` (PTX ISA 9.7.9.8)",
                    scope_name(s)
                ),
            );
        }
        (_, Some(Scope::Cluster)) => {
            return reject(
                ".cluster",
                "the `.cluster` scope needs thread-block clusters, which SPA 5.0 does not have (PTX ISA 8.5, sm_90)",
            );
        }
        _ => {}
    }
    if let (Some(sem), true, Some(_)) = (l.sem, ordered, l.cop) {
        return reject(
            sem_word(sem),
            format!("cache operators are not permitted with `{}` (PTX ISA 9.7.9.8)", sem_word(sem)),
        );
    }
    if l.mmio {
        if l.sem != Some(MemSem::Relaxed) || l.scope != Some(Scope::Sys) {
            return reject(
                ".mmio",
                "`.mmio` must be written with `.relaxed.sys` (PTX ISA 9.7.9.8: `ld.mmio.relaxed.sys`)",
            );
        }
        if !matches!(space, Space::Global | Space::Generic) {
            return reject(".mmio", "`.mmio` may be used only with `.global` and generic addressing (PTX ISA 9.7.9.8)");
        }
        if l.vec.is_some()
            || l.cop.is_some()
            || l.l1_evict.is_some()
            || l.l2_evict.is_some()
            || l.cache_hint
            || l.prefetch.is_some()
        {
            return reject(
                ".mmio",
                "`.mmio` takes no vector, cache operator or hint (PTX ISA 9.7.9.8: `ld.mmio.relaxed.sys{.global}.type`)",
            );
        }
    }
    if l.nc {
        if space != Space::Global {
            return reject(".nc", "`.nc` requires `.global` (PTX ISA 9.7.9.9 ld.global.nc)");
        }
        if l.sem.is_some_and(|s| s != MemSem::Weak) || l.mmio {
            return reject(
                ".nc",
                "`.nc` (non-coherent) cannot be combined with `.volatile/.relaxed/.acquire/.mmio` (PTX ISA 9.7.9.9)",
            );
        }
    }
    // ---- hints ---------------------------------------------------------------------------
    let global_like = matches!(space, Space::Global | Space::Generic);
    if l.cop.is_some() && (l.l1_evict.is_some() || l.l2_evict.is_some()) {
        return reject(
            "eviction priority",
            "a cache operator and an eviction priority cannot be combined (they are different `ld`/`st` syntaxes, PTX ISA 9.7.9.8)",
        );
    }
    if l.sem == Some(MemSem::Volatile) && (l.l1_evict.is_some() || l.l2_evict.is_some() || l.cache_hint) {
        return reject(
            ".volatile",
            "`.volatile` takes no eviction priority or cache hint (PTX ISA 9.7.9.8: `ld.volatile{.ss}{.level::prefetch_size}{.vec}.type`)",
        );
    }
    if l.cache_hint != f.has_policy_operand {
        return if l.cache_hint {
            reject(
                ".L2::cache_hint",
                "`.L2::cache_hint` needs a 64-bit cache-policy operand after the address (PTX ISA 9.7.9.8)",
            )
        } else {
            reject("cache-policy", "a cache-policy operand needs `.L2::cache_hint` (PTX ISA 9.7.9.8)")
        };
    }
    if (l.cache_hint || l.prefetch.is_some() || f.unified) && !global_like {
        let q = if l.cache_hint {
            ".L2::cache_hint"
        } else if f.unified {
            ".unified"
        } else {
            ".L2::<size>B"
        };
        return reject(q, format!("`{q}` is supported only for `.global` and generic addressing (PTX ISA 9.7.9.8)"));
    }
    if l.l2_evict.is_some() && !(bytes == 32 && space == Space::Global) {
        return reject(
            ".L2::evict_*",
            "an L2 eviction priority needs a 256-bit `.v8.b32`/`.v4.b64` access in `.global` (PTX ISA 9.7.9.8; ptxas: \"requires '.v8.b32/.v4.b64' type\")",
        );
    }
    // ---- cache operator --------------------------------------------------------------------
    let mut cop = CacheOp::Default;
    if matches!(space, Space::Global | Space::Generic) {
        cop = match (f.is_ld, l.cop) {
            (_, None) => CacheOp::Default,
            // spa50-LD.txt: ".CS maps to .CA", ".LU maps to .CG".
            (true, Some(PtxCop::Ca | PtxCop::Cs)) => CacheOp::Default,
            (true, Some(PtxCop::Cg | PtxCop::Lu)) => CacheOp::Cg,
            (true, Some(PtxCop::Cv)) => CacheOp::Cv,
            (false, Some(PtxCop::Wb)) => CacheOp::Default,
            (false, Some(PtxCop::Cg)) => CacheOp::Cg,
            (false, Some(PtxCop::Cs)) => CacheOp::Cs,
            (false, Some(PtxCop::Wt)) => CacheOp::Wt,
            (_, Some(c)) => unreachable!("classification admits {c:?} only for the other operation"),
        };
        if l.nc {
            cop = CacheOp::Ci;
        }
        // L1 eviction priorities: the nearest cache operator.
        if let Some(e) = l.l1_evict {
            let (c, name) = match (e, f.is_ld) {
                (L1Evict::NoAllocate, _) => (CacheOp::Cg, ".L1::no_allocate → .CG (no L1 allocation)"),
                (L1Evict::First, false) => (CacheOp::Cs, ".L1::evict_first → .CS (streaming store)"),
                (L1Evict::First, true) => {
                    (CacheOp::Default, ".L1::evict_first → default (loads have no streaming operator: .CS maps to .CA)")
                }
                (L1Evict::Last, _) => (CacheOp::Default, ".L1::evict_last → default (cache at all levels)"),
                (L1Evict::Normal | L1Evict::Unchanged, _) => {
                    (CacheOp::Default, ".L1::evict_normal/unchanged → default")
                }
            };
            if !l.nc {
                cop = c;
            }
            emulated.push(format!("L1 eviction priority ({name}; sm_70)"));
        }
    } else if let Some(e) = l.l1_evict {
        let _ = e;
        dropped.push("L1 eviction priority (no cache on this space)".into());
    }
    if l.l2_evict.is_some() {
        dropped.push("L2 eviction priority (SPA 5.0 has no L2 policy control)".into());
    }
    if l.cache_hint {
        dropped.push(
            "`.L2::cache_hint` (the cache-policy operand is evaluated and ignored; no L2 policy control on SPA 5.0)"
                .into(),
        );
    }
    if l.prefetch.is_some() {
        dropped.push("L2 prefetch size (no prefetch control on SPA 5.0)".into());
    }
    if f.unified {
        dropped.push("`.unified` (SPA 5.0 has one address space for unified memory)".into());
    }
    // ---- memory model -----------------------------------------------------------------------
    let mut membar_before = None;
    let mut membar_after = None;
    let mut keep = false;
    match l.sem {
        Some(MemSem::Weak) => emulated.push("`.weak` (sm_70; a plain access)".into()),
        Some(MemSem::Volatile) => {
            keep = true;
            if global_like {
                cop = if f.is_ld { CacheOp::Cv } else { CacheOp::Wt };
            }
        }
        Some(s @ (MemSem::Relaxed | MemSem::Acquire | MemSem::Release)) => {
            // Rejected above without a scope; the same rejection, not a panic, if not.
            let Some(scope) = l.scope else {
                return reject(
                    sem_word(s),
                    format!("`{}` needs a scope: `.cta`, `.gpu` or `.sys` (PTX ISA 9.7.9.8)", sem_word(s)),
                );
            };
            if global_like {
                cop = match (scope, f.is_ld) {
                    (Scope::Cta, _) => cop,
                    (Scope::Gpu, _) => CacheOp::Cg,
                    (Scope::Sys, true) => CacheOp::Cv,
                    (Scope::Sys, false) => CacheOp::Wt,
                    (Scope::Cluster, _) => unreachable!("rejected above"),
                };
            }
            keep = true;
            let word = sem_word(s);
            if l.mmio {
                emulated.push("`.mmio.relaxed.sys` (sm_70; .CV/.WT, never removed or reordered)".into());
            } else {
                emulated.push(format!("`{word}{}` (sm_70)", scope_name(scope)));
            }
            match s {
                MemSem::Acquire => membar_after = Some(membar(scope, space)),
                MemSem::Release => membar_before = Some(membar(scope, space)),
                _ => {}
            }
        }
        None => {}
    }
    // ---- access and sizes -------------------------------------------------------------------
    let access = match space {
        Space::Generic => Access::Generic,
        Space::Global => Access::Global,
        Space::Shared => Access::Shared,
        Space::Local => Access::Local,
        Space::Const | Space::KernelParam => Access::ConstBank,
        Space::FuncParam => Access::Register,
    };
    if !matches!(access, Access::Generic | Access::Global) {
        cop = CacheOp::Default;
    }
    let mut szs = sizes(l.ty, bytes);
    // `.U.128`: 128-bit loads from warp-uniform, parameter-derived addresses (findings §3).
    let uniform_ok = f.is_ld
        && matches!(access, Access::Generic | Access::Global)
        && matches!(l.sem, None | Some(MemSem::Weak))
        && (l.nc || matches!(l.cop, None | Some(PtxCop::Ca)));
    if f.uniform_address && uniform_ok {
        for s in szs.iter_mut() {
            if *s == MemSize::B128 {
                *s = MemSize::U128;
            }
        }
    }
    Ok(Plan { access, sizes: szs, cop, membar_before, membar_after, keep, uniform_ok, emulated, dropped })
}

/// The rows of `docs/lowering.md`'s ld/st tables, generated from [`plan`]: one table per
/// dimension, each cell the plan of a representative form.
pub fn doc_tables() -> String {
    use std::fmt::Write;
    let base = LdSt {
        space: Some(StateSpace::Global),
        sem: None,
        scope: None,
        mmio: false,
        cop: None,
        nc: false,
        l1_evict: None,
        l2_evict: None,
        cache_hint: false,
        prefetch: None,
        vec: None,
        ty: ScalarType::U32,
    };
    let form = |is_ld: bool, space: Space| Form {
        is_ld,
        space,
        immediate_address: false,
        has_policy_operand: false,
        unified: false,
        uniform_address: false,
    };
    let show = |r: Result<Plan, Rejection>, is_ld: bool| -> String {
        match r {
            Err(rej) => format!("rejected: {}", rej.message.split(" (").next().unwrap_or(&rej.message)),
            Ok(p) => {
                let mut s = String::new();
                if let Some(m) = p.membar_before {
                    let _ = write!(s, "{} + ", Op::Membar(m).name());
                }
                let _ = write!(s, "{}", p.access.name(is_ld));
                s.push_str(p.cop.suffix());
                if let Some(m) = p.membar_after {
                    let _ = write!(s, " + {}", Op::Membar(m).name());
                }
                if !p.emulated.is_empty() {
                    s.push_str(" (emulated)");
                }
                if !p.dropped.is_empty() {
                    s.push_str(" (hint dropped)");
                }
                s
            }
        }
    };
    let spaces = [
        ("generic", None, Space::Generic),
        (".global", Some(StateSpace::Global), Space::Global),
        (".shared", Some(StateSpace::Shared(SharedSub::None)), Space::Shared),
        (".local", Some(StateSpace::Local), Space::Local),
        (".const", Some(StateSpace::Const), Space::Const),
        (".param", Some(StateSpace::Param(ParamSub::None)), Space::KernelParam),
    ];
    let mut out = String::new();
    // Semantics × space.
    let sems: Vec<(&str, Option<MemSem>, Option<Scope>, bool)> = vec![
        ("(none)", None, None, false),
        (".weak", Some(MemSem::Weak), None, false),
        (".volatile", Some(MemSem::Volatile), None, false),
        (".relaxed.cta", Some(MemSem::Relaxed), Some(Scope::Cta), false),
        (".relaxed.gpu", Some(MemSem::Relaxed), Some(Scope::Gpu), false),
        (".relaxed.sys", Some(MemSem::Relaxed), Some(Scope::Sys), false),
        (".relaxed.cluster", Some(MemSem::Relaxed), Some(Scope::Cluster), false),
        (".acquire/.release.cta", Some(MemSem::Acquire), Some(Scope::Cta), false),
        (".acquire/.release.gpu", Some(MemSem::Acquire), Some(Scope::Gpu), false),
        (".acquire/.release.sys", Some(MemSem::Acquire), Some(Scope::Sys), false),
        (".mmio.relaxed.sys", Some(MemSem::Relaxed), Some(Scope::Sys), true),
    ];
    for is_ld in [true, false] {
        let op = if is_ld { "ld" } else { "st" };
        let _ = writeln!(out, "\n### `{op}`: memory-consistency qualifier × state space\n");
        let _ = writeln!(
            out,
            "| qualifier | {} |",
            spaces.iter().map(|s| format!("`{}`", s.0)).collect::<Vec<_>>().join(" | ")
        );
        let _ = writeln!(out, "|---{}|", "|---".repeat(spaces.len()));
        for (name, sem, scope, mmio) in &sems {
            let sem = match sem {
                Some(MemSem::Acquire) if !is_ld => Some(MemSem::Release),
                s => *s,
            };
            let cells: Vec<String> = spaces
                .iter()
                .map(|(_, sp, space)| {
                    let l = LdSt { space: *sp, sem, scope: *scope, mmio: *mmio, ..base };
                    show(plan(&l, form(is_ld, *space)), is_ld)
                })
                .collect();
            let _ = writeln!(out, "| `{name}` | {} |", cells.join(" | "));
        }
    }
    // Cache operators × space.
    for is_ld in [true, false] {
        let op = if is_ld { "ld" } else { "st" };
        let cops: &[(&str, PtxCop)] = if is_ld {
            &[(".ca", PtxCop::Ca), (".cg", PtxCop::Cg), (".cs", PtxCop::Cs), (".lu", PtxCop::Lu), (".cv", PtxCop::Cv)]
        } else {
            &[(".wb", PtxCop::Wb), (".cg", PtxCop::Cg), (".cs", PtxCop::Cs), (".wt", PtxCop::Wt)]
        };
        let _ = writeln!(out, "\n### `{op}`: cache operator × state space\n");
        let _ = writeln!(
            out,
            "| operator | {} |",
            spaces.iter().map(|s| format!("`{}`", s.0)).collect::<Vec<_>>().join(" | ")
        );
        let _ = writeln!(out, "|---{}|", "|---".repeat(spaces.len()));
        for (name, c) in cops {
            let cells: Vec<String> = spaces
                .iter()
                .map(|(_, sp, space)| {
                    show(plan(&LdSt { space: *sp, cop: Some(*c), ..base }, form(is_ld, *space)), is_ld)
                })
                .collect();
            let _ = writeln!(out, "| `{name}` | {} |", cells.join(" | "));
        }
        if is_ld {
            let cells: Vec<String> = spaces
                .iter()
                .map(|(_, sp, space)| show(plan(&LdSt { space: *sp, nc: true, ..base }, form(is_ld, *space)), is_ld))
                .collect();
            let _ = writeln!(out, "| `.nc` | {} |", cells.join(" | "));
        }
    }
    // Hints on .global.
    let _ = writeln!(out, "\n### Eviction priorities and hints (`.global`)\n");
    let _ = writeln!(out, "| hint | `ld` | `st` |\n|---|---|---|");
    let v8 = LdSt { vec: Some(8), ty: ScalarType::B32, ..base };
    let hints: Vec<(&str, LdSt, bool, bool)> = vec![
        (".L1::evict_normal", LdSt { l1_evict: Some(L1Evict::Normal), ..base }, false, false),
        (".L1::evict_unchanged", LdSt { l1_evict: Some(L1Evict::Unchanged), ..base }, false, false),
        (".L1::evict_first", LdSt { l1_evict: Some(L1Evict::First), ..base }, false, false),
        (".L1::evict_last", LdSt { l1_evict: Some(L1Evict::Last), ..base }, false, false),
        (".L1::no_allocate", LdSt { l1_evict: Some(L1Evict::NoAllocate), ..base }, false, false),
        (".L2::evict_last (scalar)", LdSt { l2_evict: Some(crate::ptx::instr::L2Evict::Last), ..base }, false, false),
        (".L2::evict_last (.v8.b32)", LdSt { l2_evict: Some(crate::ptx::instr::L2Evict::Last), ..v8 }, false, false),
        (".L2::cache_hint + policy", LdSt { cache_hint: true, ..base }, true, false),
        (".L2::128B", LdSt { prefetch: Some(crate::ptx::instr::PrefetchSize::B128), ..base }, false, false),
        ("`[a].unified`", base, false, true),
    ];
    for (name, l, policy, unified) in hints {
        let cell = |is_ld: bool| {
            let f = Form { has_policy_operand: policy, unified, ..form(is_ld, Space::Global) };
            if !is_ld && l.prefetch.is_some() {
                return "rejected: not a `st` modifier".to_string();
            }
            show(plan(&l, f), is_ld)
        };
        let _ = writeln!(out, "| `{name}` | {} | {} |", cell(true), cell(false));
    }
    // Vectors and types on .global.
    let _ = writeln!(out, "\n### Vectors × types (`ld.global`; `st` identical)\n");
    let types = [ScalarType::U8, ScalarType::S16, ScalarType::B32, ScalarType::F64, ScalarType::B128];
    let _ = writeln!(out, "| vector | {} |", types.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---{}|", "|---".repeat(types.len()));
    for v in [None, Some(2), Some(4), Some(8)] {
        let cells: Vec<String> = types
            .iter()
            .map(|t| match plan(&LdSt { vec: v, ty: *t, ..base }, form(true, Space::Global)) {
                Err(r) => format!("rejected: {}", r.message.split(" (").next().unwrap_or("")),
                Ok(p) => {
                    let s: Vec<String> = p.sizes.iter().map(|s| format!("{s:?}")).collect();
                    format!("{}{}", s.join(" + "), if p.emulated.is_empty() { "" } else { " (emulated)" })
                }
            })
            .collect();
        let name = v.map_or("(scalar)".to_string(), |v| format!(".v{v}"));
        let _ = writeln!(out, "| `{name}` | {} |", cells.join(" | "));
    }
    out
}
