//! Size and alignment limits of declarations, checked before anything is laid out or
//! allocated (issue 20: `.const .b8 c[18446744073709551615]` overflowed, `.align 0` divided
//! by zero, `.shared` sizes wrapped at 2^32, `.param p[4294967295]` passed the 4 KiB check).
//! Every size is computed in `u64` with saturation, so nothing wraps.

use super::ast::{Function, Item, Module, ParamDecl, Span, Statement, VarDecl};
use super::types::StateSpace;
use crate::diag::Diag;

/// The largest `.align`: ptxas 11.8 accepts `.align 2147483648` and rejects larger values
/// ("Constant overflow"), and any non-power of two ("Alignment must be a power of two").
pub const MAX_ALIGN: u64 = 1 << 31;

/// Constant bank 3 holds the module's `.const` data: 64 KiB (spa50-LDC.txt: banks of 64 KiB;
/// ptxas: "File uses too much global constant data").
pub const CONST_BYTES: u64 = 0x10000;

/// Shared memory of one CTA on SPA 5.0: 48 KiB (compute capability 5.0, CUDA C Programming
/// Guide "Technical Specifications per Compute Capability": maximum shared memory per block).
pub const SHARED_BYTES: u64 = 48 * 1024;

/// Local memory of one thread: 512 KiB (same table: maximum local memory per thread).
pub const LOCAL_BYTES: u64 = 512 * 1024;

/// Kernel parameters: 4,352 bytes (0x1100). They live in constant bank 0 from
/// `c[0x0][0x140]`; ptxas 11.8 `-arch=sm_50` accepts `.param .align 4 .b8 p[4352]` and
/// rejects 4,353 bytes with "uses too much parameter space (0x1101 bytes, 0x1100 max)"
/// (the CUDA C Programming Guide's 4 KB for `__global__` parameters is the language's
/// limit, not the assembler's). `exec::MAX_PARAM_BYTES` is the executors' own copy.
pub const KERNEL_PARAM_BYTES: u64 = 0x1100;

/// Registers declared by one function (ptx2sass's limit: the PTX interpreter gives every
/// declared register of every thread a slot; SPA 5.0 has 255 per thread, and compiler
/// output declares at most one per virtual register).
pub const REGISTERS: u64 = 1 << 22;

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

fn kib(b: u64) -> String {
    if b.is_multiple_of(1024) { format!("{} KiB", b / 1024) } else { format!("{b} bytes") }
}

/// The limit on the size of one variable (or all of them) in `space`, with its name.
fn space_limit(space: StateSpace) -> Option<(u64, &'static str)> {
    match space {
        StateSpace::Const => Some((CONST_BYTES, "the constant bank")),
        StateSpace::Shared(_) => Some((SHARED_BYTES, "shared memory per CTA")),
        StateSpace::Local => Some((LOCAL_BYTES, "local memory per thread")),
        StateSpace::Param(_) => Some((KERNEL_PARAM_BYTES, "the parameter space")),
        StateSpace::Global => Some((1 << 40, "ptx2sass's global variables")),
        StateSpace::Reg => None,
    }
}

fn check_align(align: Option<u32>, span: Span, diags: &mut Vec<Diag>) {
    if let Some(a) = align
        && !u64::from(a).is_power_of_two()
    {
        diags.push(Diag::error(span, format!("`.align {a}` is not a power of two")).label("alignment").note(format!(
            "alignments are powers of two up to {MAX_ALIGN} (ptxas: \"Alignment must be a power of two\")"
        )));
    }
}

fn check_var(d: &VarDecl, diags: &mut Vec<Diag>, regs: &mut u64) {
    check_align(d.align, d.span, diags);
    if d.space == StateSpace::Reg {
        *regs = regs.saturating_add(u64::from(d.range.unwrap_or(1)).saturating_mul(u64::from(d.vec.unwrap_or(1))));
        return;
    }
    if let Some((limit, what)) = space_limit(d.space)
        && d.size() > limit
    {
        diags.push(
            Diag::error(
                d.span,
                format!(
                    "`{}` is too large: {} bytes, more than {} for {what}",
                    d.name.name,
                    size_text(d.size()),
                    kib(limit)
                ),
            )
            .label(format!("{} variable", d.space))
            .note("each state space has a fixed size on SPA 5.0 (see `ptx::limits`)"),
        );
    }
}

fn size_text(b: u64) -> String {
    if b == u64::MAX { "2^64 or more".into() } else { b.to_string() }
}

/// The kernel's parameters laid out as `lower` and the executors do (natural or declared
/// alignment, in order): their total must fit the parameter space.
fn check_params(f: &Function, diags: &mut Vec<Diag>) {
    let mut off = 0u64;
    for p in &f.params {
        check_align(p.align, p.span, diags);
        off = align_up(off, u64::from(p.alignment())).saturating_add(param_size(p));
    }
    if f.kind == super::ast::FuncKind::Entry && off > KERNEL_PARAM_BYTES {
        diags.push(
            Diag::error(
                f.name.span,
                format!(
                    "the parameters of `{}` take {} bytes, more than {}",
                    f.name.name,
                    size_text(off),
                    kib(KERNEL_PARAM_BYTES)
                ),
            )
            .label("kernel parameters")
            .note("kernel parameters are limited to 0x1100 bytes, as ptxas 11.8 enforces for sm_50 (constant bank 0, from c[0x0][0x140])"),
        );
    }
    let mut rets = 0u64;
    for p in &f.ret_params {
        check_align(p.align, p.span, diags);
        rets = align_up(rets, u64::from(p.alignment())).saturating_add(param_size(p));
    }
    // A device function's parameters and return values: each list at most as large as a
    // call site's `.param` variables may be (`space_limit`, checked at their declaration),
    // since a call passes them through such variables. ptxas 11.8 has no limit of its own
    // here: it compiles a `.func` returning `.param .b8 r[1048576]`, and one returning
    // 2,000,000,000 bytes ran out of time after 127 s at 20 GB; ptx2sass allocated a
    // register per word of them and aborted.
    if f.kind == super::ast::FuncKind::Func {
        for (total, what) in [(off, "parameters"), (rets, "return values")] {
            if total > KERNEL_PARAM_BYTES {
                diags.push(
                    Diag::error(
                        f.name.span,
                        format!(
                            "the {what} of `{}` take {} bytes, more than {}",
                            f.name.name,
                            size_text(total),
                            kib(KERNEL_PARAM_BYTES)
                        ),
                    )
                    .label(format!("device function {what}"))
                    .note("a call passes them through `.param` variables of the call site, which are limited to 0x1100 bytes like kernel parameters"),
                );
            }
        }
    }
}

fn param_size(p: &ParamDecl) -> u64 {
    if p.unsized_array { 0 } else { u64::from(p.ty.bytes().max(1)).saturating_mul(u64::from(p.array.unwrap_or(1))) }
}

/// Checks every declaration of `module`; returns the errors.
pub fn check(module: &Module) -> Vec<Diag> {
    let mut diags = vec![];
    let mut consts = 0u64;
    let mut module_regs = 0;
    for item in &module.items {
        match item {
            Item::Var(v) => {
                check_var(v, &mut diags, &mut module_regs);
                if v.space == StateSpace::Const {
                    consts = align_up(consts, u64::from(v.alignment())).saturating_add(v.size());
                    if consts > CONST_BYTES && v.size() <= CONST_BYTES {
                        diags.push(
                            Diag::error(
                                v.span,
                                format!(
                                    "too much `.const` data: {} bytes, the constant bank holds {}",
                                    size_text(consts),
                                    kib(CONST_BYTES)
                                ),
                            )
                            .note("ptxas: \"File uses too much global constant data\""),
                        );
                    }
                }
            }
            Item::Function(f) => {
                check_params(f, &mut diags);
                let Some(body) = &f.body else { continue };
                let mut regs = 0u64;
                let mut stack = vec![body.stmts.iter()];
                while let Some(it) = stack.last_mut() {
                    let Some(s) = it.next() else {
                        stack.pop();
                        continue;
                    };
                    match s {
                        Statement::Decl(ds) => ds.iter().for_each(|d| check_var(d, &mut diags, &mut regs)),
                        Statement::Block(b) => stack.push(b.stmts.iter()),
                        _ => {}
                    }
                }
                if regs > REGISTERS {
                    diags.push(
                        Diag::error(
                            f.name.span,
                            format!(
                                "`{}` declares {} registers, more than ptx2sass's limit of {REGISTERS}",
                                f.name.name,
                                size_text(regs)
                            ),
                        )
                        .label("too many registers")
                        .note("the PTX interpreter keeps every declared register of every thread"),
                    );
                }
            }
        }
    }
    diags
}
