//! Placement of a kernel's `.shared` variables in the CTA's shared window (PTX ISA 5.1.5
//! "Shared State Space", 5.4.2 "Array Declarations"), computed once per kernel before it
//! is lowered, the way ptxas 11.8 lays out `.nv.shared.<kernel>` for sm_50.
//!
//! **Which variables.** A variable is placed when some function the kernel can reach
//! (itself and, transitively, every function it calls) names it in an operand; ptxas drops
//! the others (`ptxas -v` reports 0 bytes smem for a kernel that declares a `.shared` array
//! it never uses). The test is by name, ignoring scopes, so it may keep a variable that is
//! shadowed everywhere it is named (a few wasted bytes, never an overlap).
//!
//! **One instance per declaration.** A `.shared` variable declared inside a `.func` is one
//! variable per CTA, however many call sites the function has (PTX ISA 5.1.5: shared
//! variables are owned by the CTA; ptxas 11.8 `CAL`s the function and addresses the same
//! bytes from every call). ptx2sass inlines each call, so the offset is keyed by the
//! declaration, not by the inlined copy.
//!
//! **Order** (observed with ptxas 11.8 `-O3 -arch=sm_50` on probe kernels and
//! `cuobjdump -sass`): the kernel's own declarations, then module-scope variables in
//! declaration order, then the declarations of the other reachable functions in module
//! order; each at the next multiple of its alignment (`.align`, else the element size).
//! A kernel declaring `ksh[32]`, using module `a[12]` and calling `f` (`fsh[16]`) and `g`
//! (`gsh[8]`, defined before `f`) gets `ksh` 0x0, `a` 0x20, `gsh` 0x2c, `fsh` 0x34, 68 bytes.
//!
//! **Dynamic shared memory.** An unsized `.extern .shared .align N .b8 dyn[]` array is the
//! start of the memory the launch adds after the kernel's static shared data. ptxas places
//! such arrays after all static data, in declaration order, as if they had size 0, each
//! rounded up to `max(16, N)`, and counts that padding in the kernel's shared size: static
//! data ending at 0xc: `dyn` with `.align 4` at 0x10, 16 bytes smem; with `.align 32` at
//! 0x20, 32 bytes smem; arrays `.align 4` then `.align 64` at 0x10 and 0x40, `.align 64`
//! then `.align 4` both at 0x40, 64 bytes smem; no static data: 0x0. The dynamic bytes of
//! the launch follow the kernel's shared size, so every such array has at least them.
//!
//! **Limit.** SPA 5.0 gives a CTA at most 48 KiB of shared memory; ptxas rejects more
//! static data: `Entry function 'k' uses too much shared data (0xc001 bytes, 0xc000 max)`.
// PTX input reaches here: no panicking shortcuts (issue 20, docs/fuzzing.md "No-panic
// discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::diag::Diag;
use crate::ptx::ast::{AddrBase, Block, Function, Item, Module, Operand, Statement, VarDecl, VecElem};
use crate::ptx::types::StateSpace;
use std::collections::{HashMap, HashSet};

/// Shared memory a CTA may use on SPA 5.0 (bytes): ptxas's limit `0xc000`.
pub const MAX_SHARED_BYTES: u64 = 0xc000;

/// The offset of a variable [`layout`] did not place (no reachable function names it).
pub const UNPLACED: u32 = u32::MAX;

/// ptxas's minimum alignment of dynamic shared memory (bytes; module notes).
pub const DYNAMIC_MIN_ALIGN: u64 = 16;

/// Where a kernel's shared variables live.
#[derive(Debug, Default)]
pub struct SharedLayout {
    /// Module-scope variables by name: offset in the shared window.
    pub module: HashMap<String, u32>,
    /// Function-scope declarations (by address; the module outlives the layout): offset.
    pub decls: HashMap<*const VarDecl, u32>,
    /// The kernel's shared size in bytes, padding for dynamic shared memory included (what
    /// `ptxas -v` reports as smem).
    pub bytes: u32,
}

/// True for an unsized `.shared` array: the start of dynamic shared memory.
fn is_dynamic(d: &VarDecl) -> bool {
    d.dims.iter().any(Option::is_none) && d.init.is_none()
}

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

/// Every name in an operand (registers, variables, functions, labels).
fn operand_names<'a>(op: &'a Operand, out: &mut HashSet<&'a str>) {
    match op {
        Operand::Name { name, .. } => {
            out.insert(&name.name);
        }
        Operand::Address { base: AddrBase::Name(n), .. } | Operand::VarPlus { name: n, .. } => {
            out.insert(&n.name);
        }
        Operand::Address { base: AddrBase::Imm(_), .. } | Operand::Imm(_) => {}
        Operand::Vector(elems, _) => {
            for e in elems {
                if let VecElem::Reg(n) = e {
                    out.insert(&n.name);
                }
            }
        }
        Operand::List(ops, _) => ops.iter().for_each(|o| operand_names(o, out)),
        Operand::Texture { image, parts, .. } => {
            out.insert(&image.name);
            parts.iter().for_each(|o| operand_names(o, out));
        }
        Operand::PredPair(a, b, _) => {
            out.insert(&a.name);
            out.insert(&b.name);
        }
    }
}

/// The names a function's body uses and its `.shared` declarations, in order (an explicit
/// stack: nesting depth is input-controlled).
fn scan<'a>(body: &'a Block, names: &mut HashSet<&'a str>, shared: &mut Vec<&'a VarDecl>) {
    let mut stack: Vec<std::slice::Iter<'a, Statement>> = vec![body.stmts.iter()];
    while let Some(top) = stack.last_mut() {
        let Some(s) = top.next() else {
            stack.pop();
            continue;
        };
        match s {
            Statement::Decl(ds) => shared.extend(ds.iter().filter(|d| matches!(d.space, StateSpace::Shared(_)))),
            Statement::Instr(i) => i.operands.iter().for_each(|o| operand_names(o, names)),
            Statement::Block(b) => stack.push(b.stmts.iter()),
            Statement::Label(_) | Statement::Pragma(..) | Statement::CallPrototype(_) | Statement::Error(_) => {}
        }
    }
}

/// Module-wide facts [`layout`] needs, gathered once for all kernels so that laying out
/// one kernel costs what its reachable functions cost, not the module's size.
pub struct ModuleIndex<'m> {
    /// Module-scope `.shared` variables by name: (position in the module, declaration).
    vars: HashMap<&'m str, (usize, &'m VarDecl)>,
    /// Function definitions by name: (position in the module, definition).
    funcs: HashMap<&'m str, (usize, &'m Function)>,
}

impl<'m> ModuleIndex<'m> {
    /// Indexes `m`'s module-scope `.shared` variables and function definitions.
    pub fn new(m: &'m Module) -> ModuleIndex<'m> {
        let mut ix = ModuleIndex { vars: HashMap::new(), funcs: HashMap::new() };
        for (k, item) in m.items.iter().enumerate() {
            match item {
                Item::Var(v) if matches!(v.space, StateSpace::Shared(_)) => {
                    ix.vars.insert(&v.name.name, (k, v));
                }
                Item::Function(f) if f.body.is_some() => {
                    ix.funcs.insert(&f.name.name, (k, f));
                }
                _ => {}
            }
        }
        ix
    }
}

/// Lays out the shared variables of `kernel` (module notes). Errors: more than
/// [`MAX_SHARED_BYTES`] of static data.
pub fn layout(ix: &ModuleIndex, kernel: &Function) -> Result<SharedLayout, Diag> {
    // Reachable functions and the names they use (one scan per function).
    let mut names: HashSet<&str> = HashSet::new();
    let mut decls: Vec<(usize, Vec<&VarDecl>)> = vec![];
    let mut own = vec![];
    let mut work = vec![(usize::MAX, kernel)];
    let mut seen: HashSet<&str> = HashSet::from([kernel.name.name.as_str()]);
    while let Some((pos, f)) = work.pop() {
        let mut used = HashSet::new();
        let mut shared = vec![];
        if let Some(b) = &f.body {
            scan(b, &mut used, &mut shared);
        }
        for n in &used {
            if let Some(&(k, g)) = ix.funcs.get(n)
                && seen.insert(g.name.name.as_str())
            {
                work.push((k, g));
            }
        }
        names.extend(used);
        if std::ptr::eq(f, kernel) {
            own = shared;
        } else {
            decls.push((pos, shared));
        }
    }
    let mut module: Vec<(usize, &VarDecl)> = names.iter().filter_map(|n| ix.vars.get(n).copied()).collect();
    module.sort_unstable_by_key(|(k, _)| *k);
    decls.sort_unstable_by_key(|(k, _)| *k);
    let mut order: Vec<(Option<&VarDecl>, &VarDecl)> = own.into_iter().map(|d| (Some(d), d)).collect();
    order.extend(module.into_iter().map(|(_, d)| (None, d)));
    order.extend(decls.into_iter().flat_map(|(_, ds)| ds).map(|d| (Some(d), d)));
    let mut out = SharedLayout::default();
    let mut end = 0u64;
    let mut dynamic = vec![];
    for (scoped, d) in order {
        if !names.contains(d.name.name.as_str()) {
            continue;
        }
        if is_dynamic(d) {
            dynamic.push((scoped, d));
            continue;
        }
        let at = align_up(end, d.alignment() as u64);
        end = at.saturating_add(d.size());
        place(&mut out, scoped, d, at);
    }
    for (scoped, d) in dynamic {
        end = align_up(end, DYNAMIC_MIN_ALIGN.max(d.alignment() as u64));
        place(&mut out, scoped, d, end);
    }
    let bytes = end;
    if bytes > MAX_SHARED_BYTES {
        return Err(Diag::error(
            kernel.name.span,
            format!(
                "kernel `{}` uses too much shared data ({bytes:#x} bytes, {MAX_SHARED_BYTES:#x} max)",
                kernel.name.name
            ),
        )
        .note("SPA 5.0 gives a CTA at most 48 KiB of shared memory (ptxas: `uses too much shared data`)"));
    }
    out.bytes = bytes as u32;
    Ok(out)
}

fn place(out: &mut SharedLayout, scoped: Option<&VarDecl>, d: &VarDecl, at: u64) {
    // `at` is at most MAX_SHARED_BYTES here or the layout is rejected as a whole.
    let at = at.min(u32::MAX as u64) as u32;
    match scoped {
        Some(d) => {
            out.decls.insert(d as *const VarDecl, at);
        }
        None => {
            out.module.insert(d.name.name.clone(), at);
        }
    }
}
