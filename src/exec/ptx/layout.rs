//! Placement of module-scope and function-scope variables that live outside call frames
//! (PTX ISA 5.4 "Variables"): `.shared` variables in the CTA's shared memory, `.const`
//! variables in the constant bank and `.global` variables in global memory, with their
//! initializers (PTX ISA 5.4.4).
//!
//! The PTX ISA fixes no addresses, only that variables do not overlap; this layout is the
//! interpreter's own (it shares nothing with `lower::mem::shared`), so differential tests compare
//! what kernels store, not where variables are:
//! * static `.shared` variables in source order, each at the next multiple of its
//!   alignment: module-scope ones, then those of every function in module order (one
//!   instance per declaration, however many calls reach it);
//! * every unsized `.extern .shared` array (dynamic shared memory, PTX ISA 5.4.2) at one
//!   common address after all static data, aligned to the largest alignment among them (the
//!   CUDA Programming Guide: all `extern __shared__` arrays start at the same address);
//!   the launch's [`crate::exec::Launch::dynamic_shared`] bytes follow it;
//! * `.const` variables in source order from address 0 of the constant bank;
//! * `.global` variables in source order from [`MODULE_GLOBAL_BASE`], far above the
//!   harness's buffers, each its own allocation named `var_NAME`.

// Declarations come from the user's PTX (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::memory::{to_generic, window};
use super::program::Space;
use super::value::{imm_bits, to_le};
use crate::exec::ExecError;
use crate::ptx::ast::{Block, Init, InitValue, Item, Module, Statement, VarDecl};
use crate::ptx::types::StateSpace;
use std::collections::HashMap;

/// What a module-scope name denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum ModSym {
    /// A `.shared` variable at this shared address.
    Shared(u32),
    /// A `.const` variable at this constant-bank address.
    Const(u32),
    /// A `.global` variable at this global address.
    Global(u64),
    /// A variable the interpreter does not model, with the reason.
    Unsupported(String),
}

/// A module variable whose initial contents a launch may set
/// ([`crate::exec::Launch::module_init`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModVar {
    /// `.const` or `.global`.
    pub space: Space,
    /// Its address in that space.
    pub addr: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// The placement of every shared, constant and global variable of a module.
#[derive(Debug, Default)]
pub struct Layout {
    /// Module-scope variables by name.
    pub syms: HashMap<String, ModSym>,
    /// Function-scope `.shared` variables by declaration address (stable while the module
    /// is borrowed).
    pub fn_shared: HashMap<*const VarDecl, u32>,
    /// Static shared bytes per CTA; dynamic shared memory starts at the next multiple of
    /// the `.extern` arrays' alignment ([`Layout::dynamic_base`]).
    pub shared_bytes: u32,
    /// Shared address of every unsized `.extern .shared` array.
    pub dynamic_base: u32,
    /// The constant bank.
    pub consts: Vec<u8>,
    /// Module `.global` variables: (allocation name, address, initial bytes).
    pub globals: Vec<(String, u64, Vec<u8>)>,
    /// `.const` and `.global` module variables by name.
    pub vars: HashMap<String, ModVar>,
}

/// Largest shared memory per CTA, constant bank and `.global` data the interpreter
/// allocates (bytes).
pub const MAX_BYTES: u64 = 1 << 24;

/// Address of the first module `.global` variable (64 TiB: far above the buffers the
/// harness places from [`crate::exec::GLOBAL_BASE`]).
pub const MODULE_GLOBAL_BASE: u64 = 1 << 46;

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

/// Flattens an initializer into its scalar values, in order.
fn flatten<'a>(i: &'a Init, out: &mut Vec<&'a InitValue>) {
    match i {
        Init::Scalar(v) => out.push(v),
        Init::List(v, _) => v.iter().for_each(|x| flatten(x, out)),
    }
}

/// Size in bytes of a variable; an unsized array takes its size from the initializer.
fn var_size(d: &VarDecl) -> u64 {
    if d.dims.iter().any(Option::is_none) {
        let mut vals = vec![];
        if let Some(i) = &d.init {
            flatten(i, &mut vals);
        }
        return (vals.len() as u64).saturating_mul(d.ty.bytes() as u64);
    }
    let elem = (d.vec.unwrap_or(1) as u64).saturating_mul(d.ty.bytes() as u64);
    d.dims.iter().map(|x| x.unwrap_or(0)).fold(elem, u64::saturating_mul)
}

/// An unsized array without initializer: in `.shared`, dynamic shared memory.
fn is_unsized(d: &VarDecl) -> bool {
    d.dims.iter().any(Option::is_none) && d.init.is_none()
}

/// The `.shared` declarations of a function body, in order (an explicit stack: nesting
/// depth is input-controlled).
fn collect_shared<'a>(b: &'a Block, out: &mut Vec<&'a VarDecl>) {
    let mut stack = vec![b.stmts.iter()];
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None => {
                stack.pop();
            }
            Some(Statement::Decl(ds)) => out.extend(ds.iter().filter(|d| matches!(d.space, StateSpace::Shared(_)))),
            Some(Statement::Block(inner)) => stack.push(inner.stmts.iter()),
            Some(_) => {}
        }
    }
}

fn too_big(what: &str) -> ExecError {
    ExecError::Unsupported(format!("more than {MAX_BYTES} bytes of {what} variables"))
}

/// Places every variable of `module`.
pub fn layout(module: &Module) -> Result<Layout, ExecError> {
    let mut l = Layout::default();
    let mut shared_off = 0u64;
    let mut const_off = 0u64;
    let mut global_off = 0u64;
    let mut externs: Vec<(Option<&VarDecl>, &VarDecl)> = vec![];
    let mut consts = vec![];
    let mut globals = vec![];
    let place = |d: &VarDecl, off: &mut u64| {
        let a = align_up(*off, d.alignment() as u64);
        *off = a.saturating_add(var_size(d));
        a
    };
    for item in &module.items {
        let Item::Var(d) = item else { continue };
        let name = d.name.name.clone();
        let sym = match d.space {
            StateSpace::Shared(_) if is_unsized(d) => {
                externs.push((None, d));
                continue;
            }
            StateSpace::Shared(_) => ModSym::Shared(place(d, &mut shared_off).min(MAX_BYTES) as u32),
            StateSpace::Const => {
                let a = place(d, &mut const_off);
                consts.push((d, a));
                l.vars.insert(name.clone(), ModVar { space: Space::Const, addr: a, size: var_size(d) });
                ModSym::Const(a.min(MAX_BYTES) as u32)
            }
            StateSpace::Global => {
                let a = MODULE_GLOBAL_BASE.saturating_add(place(d, &mut global_off).min(MAX_BYTES));
                globals.push((d, a));
                l.vars.insert(name.clone(), ModVar { space: Space::Global, addr: a, size: var_size(d) });
                ModSym::Global(a)
            }
            s => ModSym::Unsupported(format!("module-scope {s} variable `{name}`")),
        };
        l.syms.insert(name, sym);
    }
    for item in &module.items {
        if let Item::Function(f) = item
            && let Some(body) = &f.body
        {
            let mut ds = vec![];
            collect_shared(body, &mut ds);
            for d in ds {
                if is_unsized(d) {
                    externs.push((Some(d), d));
                } else {
                    let a = place(d, &mut shared_off).min(MAX_BYTES) as u32;
                    l.fn_shared.insert(d as *const VarDecl, a);
                }
            }
        }
    }
    if shared_off > MAX_BYTES {
        return Err(too_big(".shared"));
    }
    if const_off > MAX_BYTES {
        return Err(too_big(".const"));
    }
    if global_off > MAX_BYTES {
        return Err(too_big(".global"));
    }
    l.shared_bytes = shared_off as u32;
    let align = externs.iter().map(|(_, d)| d.alignment() as u64).max().unwrap_or(1);
    l.dynamic_base = align_up(shared_off, align).min(MAX_BYTES) as u32;
    for (scoped, d) in externs {
        match scoped {
            Some(d) => {
                l.fn_shared.insert(d as *const VarDecl, l.dynamic_base);
            }
            None => {
                l.syms.insert(d.name.name.clone(), ModSym::Shared(l.dynamic_base));
            }
        }
    }
    l.consts = vec![0; const_off as usize];
    for (d, base) in consts {
        let image = init_image(&l, d)?;
        // The part of the image that fits in the bank.
        let dst = l.consts.iter_mut().skip(base as usize);
        for (d, b) in dst.zip(image) {
            *d = b;
        }
    }
    for (d, addr) in globals {
        let image = init_image(&l, d)?;
        l.globals.push((format!("var_{}", d.name.name), addr, image));
    }
    Ok(l)
}

/// The initial bytes of a `.const` or `.global` variable: its initializer's values, zero
/// elsewhere (PTX ISA 5.4.4: variables without initializer start as zero).
fn init_image(l: &Layout, d: &VarDecl) -> Result<Vec<u8>, ExecError> {
    let size = var_size(d);
    let mut out = vec![0u8; size as usize];
    let Some(init) = &d.init else { return Ok(out) };
    let mut vals = vec![];
    flatten(init, &mut vals);
    let elem = d.ty.bytes() as usize;
    if elem > 8 {
        return Err(ExecError::Unsupported(format!("initializer of {} variable `{}`", d.ty, d.name.name)));
    }
    for (k, v) in vals.iter().enumerate() {
        let bits = match v {
            InitValue::Imm(i) => imm_bits(i.value, d.ty),
            InitValue::Addr { name, generic, offset } => {
                let (space, a) = match l.syms.get(&name.name) {
                    Some(ModSym::Shared(a)) => (Space::Shared, *a as u64),
                    Some(ModSym::Const(a)) => (Space::Const, *a as u64),
                    Some(ModSym::Global(a)) => (Space::Global, *a),
                    _ => {
                        return Err(ExecError::Unsupported(format!(
                            "initializer of `{}` takes the address of `{}`",
                            d.name.name, name.name
                        )));
                    }
                };
                let a = a.wrapping_add(*offset as u64);
                if *generic && window(space).is_some() { to_generic(space, a) } else { a }
            }
        };
        let at = k.saturating_mul(elem);
        let le = to_le(bits, elem);
        let (Some(dst), Some(src)) = (out.get_mut(at..at.saturating_add(elem)), le.get(..elem)) else {
            break;
        };
        dst.copy_from_slice(src);
    }
    Ok(out)
}
