//! `.version` and `.target` (PTX ISA 11.1.1, 11.1.2) and the features that need a newer
//! PTX ISA version or target architecture than a module declares (issue 22 item 8).
//!
//! ptx2sass compiles for SPA 5.0 (`sm_50`). As ptxas does for `-arch=sm_50`, a module whose
//! `.target` is newer is an error ("SM version specified by .target is higher than default
//! SM version assumed", ptxas 11.8), unless `--allow-newer-target` turns it into a warning.
//! Every instruction, qualifier or type that needs a newer PTX ISA version or target than the
//! module declares is an error naming what it needs, in ptxas's words ("Feature 'activemask'
//! requires PTX ISA .version 6.2 or later", "... requires .target sm_53 or higher").
//!
//! [`FEATURES`] is the one table of these facts (the PTX ISA's "PTX ISA Notes" and "Target
//! ISA Notes" of each instruction); every row was checked against ptxas 12.9, which reports
//! both numbers for each feature: `tests/target.rs` compiles each row's example with it (when
//! `../shared/tools/ptxas-12.9.sh` has installed it) and compares. A feature
//! newer than sm_50 is either emulated on SPA 5.0 (a warning in lowering, an error with
//! `--deny-emulation`; `ld`/`st` qualifiers are planned and reported by `lower::mem::ldst`) or
//! missing: lowering rejects it even when `--allow-newer-target` let the front end accept it.

use super::ast::{Instruction, Module, Span, VarDecl};
use crate::diag::Diag;

/// The architecture ptx2sass generates code for.
pub const SM: u32 = 50;

/// The newest PTX ISA version whose features this table knows.
pub const KNOWN_PTX: (u32, u32) = (8, 8);

/// Front-end options that concern the target.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Accept a `.target` newer than sm_50 with a warning (its features are still checked
    /// against the declared target; lowering rejects what SPA 5.0 lacks).
    pub allow_newer_target: bool,
}

/// How ptx2sass handles a feature newer than sm_50.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnSm50 {
    /// The lowering handles it: equivalent SPA 5.0 code with a warning (an error with
    /// `--deny-emulation`), or a diagnostic of its own where it cannot (`ld`/`st`
    /// qualifiers: `lower::mem::ldst::plan` decides, e.g. `.shared::cluster` is rejected there).
    Emulated,
    /// Not available: lowering reports it.
    Missing,
}

/// One row of the feature table.
#[derive(Clone, Copy, Debug)]
pub struct Feature {
    /// The feature, as diagnostics name it.
    pub name: &'static str,
    /// An instruction using it (operands `p .u64`, `%r<4> .b32`, `%rd<4> .u64`, `%h<4>
    /// .b16`, `%f<4> .f32`, `%fd<4> .f64`, `%p<4> .pred`, `%q<4> .b128`), which
    /// `tests/target.rs` gives ptxas 12.9 to confirm `sm` and `ptx`.
    pub example: &'static str,
    /// The opcodes it concerns (empty: any instruction).
    pub opcodes: &'static [&'static str],
    /// Modifier words of which any marks the feature (empty: the opcode alone).
    pub any: &'static [&'static str],
    /// Modifier words that must all be present too.
    pub all: &'static [&'static str],
    /// The oldest target architecture that has it (`sm_NN`).
    pub sm: u32,
    /// The oldest PTX ISA version that has it.
    pub ptx: (u32, u32),
    /// What ptx2sass does with it on sm_50 (irrelevant when `sm <= 50`).
    pub on_sm50: OnSm50,
}

#[allow(clippy::too_many_arguments)]
const fn row(
    name: &'static str,
    example: &'static str,
    opcodes: &'static [&'static str],
    any: &'static [&'static str],
    all: &'static [&'static str],
    sm: u32,
    ptx: (u32, u32),
    on_sm50: OnSm50,
) -> Feature {
    Feature { name, example, opcodes, any, all, sm, ptx, on_sm50 }
}

use OnSm50::{Emulated, Missing};

const F16: &[&str] = &[".f16", ".f16x2"];
const BF16: &[&str] = &[".bf16", ".bf16x2"];
const LD_ST: &[&str] = &["ld", "st", "ldu"];

/// Every feature newer than sm_50 or PTX ISA 4.0 that the front end accepts, with the
/// versions ptxas 12.9 reports for it (`-arch=sm_50`, `.version 8.8` for the target,
/// `.version 4.0` for the PTX ISA version). Rows are matched in order; every matching row
/// applies.
pub const FEATURES: &[Feature] = &[
    // Half precision (PTX ISA 9.7.4): the f16 instructions need sm_53, bf16 sm_80/sm_90.
    row(
        "f16 arithmetic",
        "add.f16 %h1, %h2, %h3;",
        &["add", "sub", "mul", "fma", "mad"],
        F16,
        &[],
        53,
        (4, 2),
        Missing,
    ),
    row("f16 `neg`", "neg.f16 %h1, %h2;", &["neg"], F16, &[], 53, (6, 0), Missing),
    row("f16 `abs`", "abs.f16 %h1, %h2;", &["abs"], F16, &[], 53, (6, 5), Missing),
    row("f16 compare", "setp.lt.f16 %p1, %h2, %h3;", &["setp"], F16, &[], 53, (4, 2), Missing),
    row("f16 `set`", "set.lt.f16.f16 %h1, %h2, %h3;", &["set"], F16, &[], 53, (4, 2), Missing),
    row(
        "`set` of f16 operands with an integer result",
        "set.lt.u32.f16 %r1, %h2, %h3;",
        &["set"],
        F16,
        &[".u32", ".s32"],
        53,
        (6, 5),
        Missing,
    ),
    row("f16 `min`/`max`", "min.f16 %h1, %h2, %h3;", &["min", "max"], F16, &[], 80, (7, 0), Missing),
    row(
        "`.relu`",
        "fma.rn.relu.f16 %h1, %h2, %h3, %h0;",
        &["fma", "cvt", "min", "max"],
        &[".relu"],
        &[],
        80,
        (7, 0),
        Missing,
    ),
    row("f16 `ex2`/`tanh`", "ex2.approx.f16 %h1, %h2;", &["ex2", "tanh"], F16, &[], 75, (7, 0), Missing),
    row("bf16 `add`/`sub`/`mul`", "add.bf16 %h1, %h2, %h3;", &["add", "sub", "mul"], BF16, &[], 90, (7, 8), Missing),
    row("bf16 `fma`", "fma.rn.bf16 %h1, %h2, %h3, %h0;", &["fma"], BF16, &[], 80, (7, 0), Missing),
    row(
        "bf16 `neg`/`abs`/`min`/`max`",
        "neg.bf16 %h1, %h2;",
        &["neg", "abs", "min", "max"],
        BF16,
        &[],
        80,
        (7, 0),
        Missing,
    ),
    row("bf16 compare", "setp.lt.bf16 %p1, %h2, %h3;", &["setp", "set"], BF16, &[], 90, (7, 8), Missing),
    row("bf16 `ex2`", "ex2.approx.ftz.bf16 %h1, %h2;", &["ex2"], BF16, &[], 90, (7, 8), Missing),
    row("`cvt` to or from bf16", "cvt.rn.bf16.f32 %h1, %f1;", &["cvt"], BF16, &[], 80, (7, 0), Missing),
    row("`cvt` packing two f16", "cvt.rn.f16x2.f32 %r1, %f1, %f2;", &["cvt"], &[".f16x2"], &[], 80, (7, 0), Missing),
    row("`cvt` to tf32", "cvt.rna.tf32.f32 %r1, %f1;", &["cvt"], &[".tf32"], &[], 80, (7, 0), Missing),
    row("`cvt.satfinite`", "cvt.rn.satfinite.f16.f32 %h1, %f1;", &["cvt"], &[".satfinite"], &[], 70, (8, 1), Missing),
    row("`tanh`", "tanh.approx.f32 %f1, %f2;", &["tanh"], &[], &[], 75, (7, 0), Missing),
    // 128-bit data (PTX ISA 8.3): quad registers on SPA 5.0.
    row("`.b128` data", "mov.b128 %q1, %q2;", &["mov"], &[".b128"], &[], 70, (8, 3), Emulated),
    row("`.b128` data", "st.global.b128 [p], %q1;", LD_ST, &[".b128"], &[], 70, (8, 3), Emulated),
    // ld/st qualifiers (PTX ISA 9.7.9.8): emulated, see `lower::mem::ldst::plan`.
    row(
        "memory-consistency qualifiers",
        "ld.relaxed.gpu.global.u32 %r1, [p];",
        LD_ST,
        &[".relaxed", ".acquire", ".release"],
        &[],
        70,
        (6, 0),
        Emulated,
    ),
    row("`.mmio`", "ld.mmio.relaxed.sys.global.u32 %r1, [p];", LD_ST, &[".mmio"], &[], 70, (8, 2), Emulated),
    row(
        "eviction priorities",
        "ld.global.L1::evict_last.u32 %r1, [p];",
        &["ld", "st", "ldu", "prefetch"],
        &[
            ".L1::evict_normal",
            ".L1::evict_unchanged",
            ".L1::evict_first",
            ".L1::evict_last",
            ".L1::no_allocate",
            ".L2::evict_normal",
            ".L2::evict_first",
            ".L2::evict_last",
        ],
        &[],
        70,
        (7, 4),
        Emulated,
    ),
    row(
        "`.L2::cache_hint`",
        "ld.global.L2::cache_hint.u32 %r1, [p], %rd1;",
        LD_ST,
        &[".L2::cache_hint"],
        &[],
        80,
        (7, 4),
        Emulated,
    ),
    row(
        "prefetch sizes",
        "ld.global.L2::64B.u32 %r1, [p];",
        LD_ST,
        &[".L2::64B", ".L2::128B", ".L2::256B"],
        &[],
        75,
        (7, 4),
        Emulated,
    ),
    row(
        "256-bit accesses",
        "ld.global.v8.b32 {%r1,%r2,%r3,%r0,%r1,%r2,%r3,%r0}, [p];",
        LD_ST,
        &[".v8"],
        &[],
        100,
        (8, 8),
        Emulated,
    ),
    row("`.shared::cta`", "ld.shared::cta.u32 %r1, [p];", &[], &[".shared::cta"], &[], 30, (7, 8), Emulated),
    row(
        "`.shared::cluster`",
        "ld.shared::cluster.u32 %r1, [p];",
        &[],
        &[".shared::cluster"],
        &[],
        90,
        (7, 8),
        Emulated,
    ),
    row(
        "`.param::entry`/`.param::func`",
        "ld.param::entry.u32 %r1, [out];",
        &[],
        &[".param::entry", ".param::func"],
        &[],
        30,
        (8, 3),
        Emulated,
    ),
    // Warp-level and synchronization instructions.
    row("`activemask`", "activemask.b32 %r1;", &["activemask"], &[], &[], 30, (6, 2), Emulated),
    row(
        "`.sync` warp instructions",
        "shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;",
        &["shfl", "vote"],
        &[".sync"],
        &[],
        30,
        (6, 0),
        Emulated,
    ),
    row("`bar.warp.sync`", "bar.warp.sync -1;", &["bar"], &[".warp"], &[], 30, (6, 0), Emulated),
    row("`barrier`", "barrier.sync 0;", &["barrier"], &[], &[], 30, (6, 0), Emulated),
    row("`bar.cta`", "bar.cta.sync 0;", &["bar", "barrier"], &[".cta"], &[], 30, (7, 8), Emulated),
    row("`fns`", "fns.b32 %r1, %r2, %r3, %r0;", &["fns"], &[], &[], 30, (6, 0), Missing),
    row("`match.sync`", "match.any.sync.b32 %r1, %r2, -1;", &["match"], &[], &[], 70, (6, 0), Missing),
    row("`redux.sync`", "redux.sync.add.u32 %r1, %r2, -1;", &["redux"], &[], &[], 80, (7, 0), Missing),
    row("`fence.sc`/`fence.acq_rel`", "fence.sc.gpu;", &["fence"], &[".sc", ".acq_rel"], &[], 70, (6, 0), Emulated),
    row("`fence.proxy`", "fence.proxy.alias;", &["fence"], &[".proxy"], &[], 70, (7, 5), Missing),
    row("`nanosleep`", "nanosleep.u32 10;", &["nanosleep"], &[], &[], 70, (6, 2), Missing),
    // Atomics (PTX ISA 9.7.13.5).
    row(
        "64-bit float atomic add",
        "atom.global.add.f64 %fd1, [p], %fd2;",
        &["atom", "red"],
        &[".f64"],
        &[".add"],
        60,
        (5, 0),
        Missing,
    ),
    row(
        "half-precision atomics",
        "atom.global.add.noftz.f16 %h1, [p], %h2;",
        &["atom", "red"],
        &[".f16", ".f16x2", ".bf16", ".bf16x2"],
        &[],
        70,
        (6, 3),
        Missing,
    ),
    row(
        "atomic scopes",
        "atom.global.cta.add.u32 %r1, [p], %r2;",
        &["atom", "red"],
        &[".cta", ".gpu", ".sys", ".cluster"],
        &[],
        60,
        (5, 0),
        Emulated,
    ),
    row(
        "atomic memory orders",
        "atom.acquire.gpu.global.add.u32 %r1, [p], %r2;",
        &["atom", "red"],
        &[".relaxed", ".acquire", ".release", ".acq_rel"],
        &[],
        70,
        (6, 0),
        Emulated,
    ),
    row("128-bit atomics", "atom.global.exch.b128 %q1, [p], %q2;", &["atom"], &[".b128"], &[], 90, (8, 3), Missing),
    // Integer and other instructions.
    row("`lop3`", "lop3.b32 %r1, %r2, %r3, %r0, 0x96;", &["lop3"], &[], &[], 50, (4, 3), Emulated),
    row("`dp4a`/`dp2a`", "dp4a.u32.u32 %r1, %r2, %r3, %r0;", &["dp4a", "dp2a"], &[], &[], 61, (5, 0), Missing),
    row("`szext`/`bmsk`", "szext.wrap.u32 %r1, %r2, %r3;", &["szext", "bmsk"], &[], &[], 70, (7, 6), Missing),
    row("`min`/`max` `.NaN`", "min.NaN.f32 %f1, %f2, %f3;", &["min", "max"], &[".NaN"], &[], 80, (7, 0), Missing),
    row(
        "`min`/`max` `.xorsign.abs`",
        "max.xorsign.abs.f32 %f1, %f2, %f3;",
        &["min", "max"],
        &[".xorsign"],
        &[],
        86,
        (7, 2),
        Missing,
    ),
    row(
        "`alloca`/`stacksave`/`stackrestore`",
        "alloca.u64 %rd1, 16;",
        &["alloca", "stacksave", "stackrestore"],
        &[],
        &[],
        52,
        (7, 3),
        Missing,
    ),
    row("`cp.async`", "cp.async.ca.shared.global [p], [p], 4;", &["cp"], &[], &[], 80, (7, 0), Missing),
    row("`mbarrier`", "mbarrier.init.shared.b64 [p], 1;", &["mbarrier"], &[], &[], 80, (7, 0), Missing),
    row(
        "`ldmatrix`",
        "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r1}, [p];",
        &["ldmatrix"],
        &[],
        &[],
        75,
        (6, 5),
        Missing,
    ),
    row(
        "`movmatrix`",
        "movmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;",
        &["movmatrix"],
        &[],
        &[],
        75,
        (7, 8),
        Missing,
    ),
    row(
        "`stmatrix`",
        "stmatrix.sync.aligned.m8n8.x1.shared.b16 [p], {%r1};",
        &["stmatrix"],
        &[],
        &[],
        90,
        (7, 8),
        Missing,
    ),
    row(
        "`wmma`",
        "wmma.load.a.sync.aligned.row.m16n16k16.f16 {%r1,%r2,%r3,%r0,%r1,%r2,%r3,%r0}, [p];",
        &["wmma"],
        &[],
        &[],
        70,
        (6, 3),
        Missing,
    ),
    row(
        "`mma`",
        "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3,%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3,%f0,%f1,%f2,%f3};",
        &["mma"],
        &[],
        &[],
        70,
        (6, 4),
        Missing,
    ),
    row("`elect.sync`", "elect.sync %r1|%p1, -1;", &["elect"], &[], &[], 90, (8, 0), Missing),
    row("`griddepcontrol`", "griddepcontrol.wait;", &["griddepcontrol"], &[], &[], 90, (7, 8), Missing),
    row("`mapa`/`getctarank`", "mapa.u64 %rd1, %rd2, %r1;", &["mapa", "getctarank"], &[], &[], 90, (7, 8), Missing),
    row(
        "`createpolicy`",
        "createpolicy.fractional.L2::evict_last.b64 %rd1, 1.0;",
        &["createpolicy"],
        &[],
        &[],
        80,
        (7, 4),
        Missing,
    ),
    row(
        "`discard`/`applypriority`",
        "discard.global.L2 [p], 128;",
        &["discard", "applypriority"],
        &[],
        &[],
        80,
        (7, 4),
        Missing,
    ),
    row(
        "`multimem`",
        "multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [p];",
        &["multimem"],
        &[],
        &[],
        90,
        (8, 1),
        Missing,
    ),
    row("`setmaxnreg`", "setmaxnreg.inc.sync.aligned.u32 64;", &["setmaxnreg"], &[], &[], 90, (8, 0), Missing),
    row("`wgmma`", "wgmma.fence.sync.aligned;", &["wgmma"], &[], &[], 90, (8, 0), Missing),
    row("`tcgen05`", "tcgen05.fence::before_thread_sync;", &["tcgen05"], &[], &[], 100, (8, 6), Missing),
    row(
        "`isspacep.param`/`cvta.param`",
        "isspacep.param %p1, %rd1;",
        &["isspacep", "cvta"],
        &[".param"],
        &[],
        70,
        (7, 7),
        Missing,
    ),
];

/// Declaration types newer than sm_50 (`.reg .f16x2` needs sm_53, `.b128` sm_70; ptxas
/// 12.9: "Feature '.f16x2 packed data-type' requires .target sm_53 or higher").
pub const DECL_FEATURES: &[(&str, &str, u32, (u32, u32))] =
    &[(".f16x2", "the `.f16x2` packed type", 53, (4, 2)), (".b128", "`.b128` data", 70, (8, 3))];

/// The oldest PTX ISA version that knows each target (ptxas 12.9: "PTX .version 4.1 does
/// not support .target sm_53"), and the targets ptx2sass knows at all.
const TARGET_PTX: &[(u32, (u32, u32))] = &[
    (10, (1, 0)),
    (11, (1, 0)),
    (12, (1, 2)),
    (13, (1, 2)),
    (20, (2, 0)),
    (21, (2, 0)),
    (30, (3, 0)),
    (32, (4, 0)),
    (35, (3, 1)),
    (37, (4, 1)),
    (50, (4, 0)),
    (52, (4, 1)),
    (53, (4, 2)),
    (60, (5, 0)),
    (61, (5, 0)),
    (62, (5, 0)),
    (70, (6, 0)),
    (72, (6, 1)),
    (75, (6, 3)),
    (80, (7, 0)),
    (86, (7, 1)),
    (87, (7, 4)),
    (89, (7, 8)),
    (90, (7, 8)),
    (100, (8, 6)),
    (101, (8, 6)),
    (103, (8, 8)),
    (120, (8, 7)),
    (121, (8, 8)),
];

/// The `.target` options that are not architectures (PTX ISA 11.1.2).
const TARGET_OPTIONS: &[&str] = &["texmode_unified", "texmode_independent", "debug", "map_f64_to_f32"];

/// The architecture number of a `.target` word: `sm_70` → 70, also `sm_90a`, `sm_100f`
/// and `compute_50` (ptxas accepts it); `None` for an option or an unknown word.
pub fn target_sm(word: &str) -> Option<u32> {
    let digits = word.strip_prefix("sm_").or_else(|| word.strip_prefix("compute_"))?;
    let digits = digits.strip_suffix('a').or_else(|| digits.strip_suffix('f')).unwrap_or(digits);
    let sm: u32 = digits.parse().ok()?;
    TARGET_PTX.iter().any(|t| t.0 == sm).then_some(sm)
}

/// The rows of [`FEATURES`] instruction `i` uses.
pub fn features(i: &Instruction) -> impl Iterator<Item = &'static Feature> + '_ {
    let op = i.opcode.name.as_str();
    let has = |w: &str| i.mods.iter().any(|m| m.text == w);
    FEATURES.iter().filter(move |f| {
        (f.opcodes.is_empty() || f.opcodes.contains(&op))
            && (f.any.is_empty() || f.any.iter().any(|w| has(w)))
            && f.all.iter().all(|w| has(w))
    })
}

fn version(v: (u32, u32)) -> String {
    format!("{}.{}", v.0, v.1)
}

/// The module's declared target: its architecture number and where it is written.
struct Declared {
    sm: u32,
    word: String,
}

/// Checks `.version`/`.target` and every feature's requirements; returns errors and warnings.
pub fn check(module: &Module, opts: &Options) -> Vec<Diag> {
    let mut diags = vec![];
    let (ver, vspan) = (module.version, module.version_span);
    if ver > KNOWN_PTX {
        diags.push(
            Diag::warning(
                vspan,
                format!("PTX ISA {} is newer than ptx2sass knows ({})", version(ver), version(KNOWN_PTX)),
            )
            .note("features introduced after it are not recognised"),
        );
    }
    let mut declared = None;
    for w in &module.target {
        if TARGET_OPTIONS.contains(&w.as_str()) {
            if w == "map_f64_to_f32" {
                diags.push(
                    Diag::error(module.target_span, "`.target map_f64_to_f32` is not supported for sm_50")
                        .note("ptxas 11.8: \"Directive map_f64_to_f32 is not supported with SM 1.3 or higher\""),
                );
            }
            continue;
        }
        let Some(sm) = target_sm(w) else {
            diags.push(
                Diag::error(module.target_span, format!("unknown `.target` `{w}`"))
                    .note("expected an architecture such as `sm_50` or an option (PTX ISA 11.1.2)"),
            );
            continue;
        };
        if let Some(&(_, min)) = TARGET_PTX.iter().find(|t| t.0 == sm)
            && ver < min
        {
            diags.push(Diag::error(
                module.target_span,
                format!(
                    "PTX ISA {} does not support `.target {w}`: it needs `.version {}` or later",
                    version(ver),
                    version(min)
                ),
            ));
        }
        if sm > SM {
            let d = if opts.allow_newer_target { Diag::warning } else { Diag::error };
            let mut d = d(
                module.target_span,
                format!("`.target {w}` is newer than sm_50, the architecture ptx2sass compiles for"),
            )
            .label("ptx2sass compiles for sm_50 (SPA 5.0)");
            d = if opts.allow_newer_target {
                d.note("continuing (`--allow-newer-target`): features SPA 5.0 lacks are still rejected")
            } else {
                d.note("compiling for sm_50 requires `.target sm_50` or lower (ptxas 11.8: \"SM version specified by .target is higher than default SM version assumed\"); `--allow-newer-target` continues with a warning")
            };
            diags.push(d);
        }
        declared = Some(Declared { sm, word: w.clone() });
    }
    let declared = declared.unwrap_or(Declared { sm: SM, word: "sm_50".into() });
    let mut seen = std::collections::HashSet::new();
    let mut feature_use = |name: &str,
                           sm: u32,
                           ptx: (u32, u32),
                           on: OnSm50,
                           at: Span,
                           what: &str,
                           diags: &mut Vec<Diag>| {
        if ver < ptx && seen.insert((name.to_string(), at.lo, 0)) {
            diags.push(
                Diag::error(at, format!("{what}: {name} requires PTX ISA {} or later", version(ptx)))
                    .label(format!("the module declares `.version {}`", version(ver)))
                    .note(format!("write `.version {}` or newer (PTX ISA notes of the instruction)", version(ptx))),
            );
        }
        if sm > declared.sm && on == OnSm50::Missing && seen.insert((name.to_string(), at.lo, 1)) {
            diags.push(
                Diag::error(at, format!("{what}: {name} requires `.target sm_{sm}` or higher"))
                    .label(format!("the module declares `.target {}`", declared.word))
                    .note("SPA 5.0 (sm_50) does not have it and ptx2sass does not emulate it (PTX ISA target notes of the instruction)"),
            );
        }
    };
    let mut stack: Vec<std::slice::Iter<'_, super::ast::Statement>> = vec![];
    for item in &module.items {
        match item {
            super::ast::Item::Var(v) => {
                decl_features(v, &mut |n, sm, p, at| feature_use(n, sm, p, Missing, at, "a declaration", &mut diags))
            }
            super::ast::Item::Function(f) => {
                for p in f.params.iter().chain(&f.ret_params) {
                    if let Some((_, name, sm, ptx)) = DECL_FEATURES.iter().find(|d| d.0 == p.ty.as_str()) {
                        feature_use(name, *sm, *ptx, Missing, p.span, "a parameter", &mut diags);
                    }
                }
                let Some(body) = &f.body else { continue };
                stack.push(body.stmts.iter());
                while let Some(it) = stack.last_mut() {
                    let Some(s) = it.next() else {
                        stack.pop();
                        continue;
                    };
                    match s {
                        super::ast::Statement::Instr(i) => {
                            let what = format!("`{}`", super::check::instr_text(i));
                            for f in features(i) {
                                feature_use(
                                    f.name,
                                    f.sm,
                                    f.ptx,
                                    f.on_sm50,
                                    i.opcode.span.to(i.mods.last().map_or(i.opcode.span, |m| m.span)),
                                    &what,
                                    &mut diags,
                                );
                            }
                        }
                        super::ast::Statement::Decl(ds) => {
                            for d in ds {
                                decl_features(d, &mut |n, sm, p, at| {
                                    // `.reg .b128` registers are emulated as quads.
                                    let on = if n.contains("b128") { Emulated } else { Missing };
                                    feature_use(n, sm, p, on, at, "a declaration", &mut diags)
                                });
                            }
                        }
                        super::ast::Statement::Block(b) => stack.push(b.stmts.iter()),
                        _ => {}
                    }
                }
            }
        }
    }
    diags
}

fn decl_features(d: &VarDecl, f: &mut dyn FnMut(&'static str, u32, (u32, u32), Span)) {
    if let Some((_, name, sm, ptx)) = DECL_FEATURES.iter().find(|x| x.0 == d.ty.as_str()) {
        f(name, *sm, *ptx, d.span);
    }
}

/// The lowering's view: the first feature of `i` that SPA 5.0 lacks, if any.
pub fn missing_on_sm50(i: &Instruction) -> Option<&'static Feature> {
    features(i).find(|f| f.sm > SM && f.on_sm50 == OnSm50::Missing)
}

/// The features of a `mov` that are newer than sm_50 and emulated (`.b128`), for the
/// lowering's warning; the lowerings of `ld`/`st`, atomics and `fence` report their own.
pub fn emulated_on_sm50(i: &Instruction) -> impl Iterator<Item = &'static Feature> + '_ {
    features(i).filter(|f| f.sm > SM && f.on_sm50 == OnSm50::Emulated && f.opcodes == ["mov"])
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn target_words() {
        assert_eq!(target_sm("sm_50"), Some(50));
        assert_eq!(target_sm("sm_90a"), Some(90));
        assert_eq!(target_sm("compute_35"), Some(35));
        assert_eq!(target_sm("sm_51"), None);
        assert_eq!(target_sm("texmode_unified"), None);
    }
}
