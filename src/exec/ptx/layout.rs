//! Placement of module-scope and function-scope variables that live outside call frames
//! (PTX ISA 5.4 "Variables"): `.shared` variables in the CTA's shared memory and `.const`
//! variables, with their initializers (PTX ISA 5.4.4), in the constant bank.
//!
//! Each variable is placed at the next multiple of its alignment, in source order: first
//! module-scope `.shared` variables, then function-scope ones (every function, in order),
//! then `.extern` unsized ones (dynamic shared memory, size 0 here: the launch carries no
//! dynamic size, so any access to it is out of bounds). `.global` variables are not
//! modelled: the launch's global memory has no room for them.

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
    /// A variable the interpreter does not model, with the reason.
    Unsupported(String),
}

/// The placement of every shared and constant variable of a module.
#[derive(Debug, Default)]
pub struct Layout {
    /// Module-scope variables by name.
    pub syms: HashMap<String, ModSym>,
    /// Function-scope `.shared` variables by declaration address (stable while the module
    /// is borrowed).
    pub fn_shared: HashMap<*const VarDecl, u32>,
    /// Shared bytes per CTA.
    pub shared_bytes: u32,
    /// The constant bank.
    pub consts: Vec<u8>,
}

/// Largest shared memory per CTA and constant bank the interpreter allocates (bytes).
pub const MAX_BYTES: u64 = 1 << 24;

fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a.max(1)) * a.max(1)
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
        return vals.len() as u64 * d.ty.bytes() as u64;
    }
    d.size()
}

fn collect_shared<'a>(b: &'a Block, out: &mut Vec<&'a VarDecl>) {
    for s in &b.stmts {
        match s {
            Statement::Decl(ds) => out.extend(ds.iter().filter(|d| matches!(d.space, StateSpace::Shared(_)))),
            Statement::Block(inner) => collect_shared(inner, out),
            _ => {}
        }
    }
}

/// Places every variable of `module`.
pub fn layout(module: &Module) -> Result<Layout, ExecError> {
    let mut l = Layout::default();
    let mut shared_off = 0u64;
    let mut const_off = 0u64;
    let mut externs = vec![];
    let mut consts = vec![];
    let place_shared = |d: &VarDecl, off: &mut u64| {
        let a = align_up(*off, d.alignment() as u64);
        *off = a + var_size(d);
        a as u32
    };
    for item in &module.items {
        let Item::Var(d) = item else { continue };
        let name = d.name.name.clone();
        let sym = match d.space {
            StateSpace::Shared(_) if var_size(d) == 0 => {
                externs.push(d);
                continue;
            }
            StateSpace::Shared(_) => ModSym::Shared(place_shared(d, &mut shared_off)),
            StateSpace::Const => {
                let a = align_up(const_off, d.alignment() as u64);
                const_off = a + var_size(d);
                consts.push((d, a));
                ModSym::Const(a as u32)
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
                let a = place_shared(d, &mut shared_off);
                l.fn_shared.insert(d as *const VarDecl, a);
            }
        }
    }
    for d in externs {
        let a = align_up(shared_off, d.alignment() as u64);
        shared_off = a;
        l.syms.insert(d.name.name.clone(), ModSym::Shared(a as u32));
    }
    if shared_off > MAX_BYTES || const_off > MAX_BYTES {
        return Err(ExecError::Unsupported(format!("more than {MAX_BYTES} bytes of .shared or .const variables")));
    }
    l.shared_bytes = shared_off as u32;
    l.consts = vec![0; const_off as usize];
    for (d, base) in consts {
        let Some(init) = &d.init else { continue };
        let mut vals = vec![];
        flatten(init, &mut vals);
        let size = d.ty.bytes() as usize;
        if size > 8 {
            return Err(ExecError::Unsupported(format!("initializer of {} variable `{}`", d.ty, d.name.name)));
        }
        for (k, v) in vals.iter().enumerate() {
            let bits = match v {
                InitValue::Imm(i) => imm_bits(i.value, d.ty),
                InitValue::Addr { name, generic, offset } => {
                    let (space, a) = match l.syms.get(&name.name) {
                        Some(ModSym::Shared(a)) => (Space::Shared, *a),
                        Some(ModSym::Const(a)) => (Space::Const, *a),
                        _ => {
                            return Err(ExecError::Unsupported(format!(
                                "initializer of `{}` takes the address of `{}`",
                                d.name.name, name.name
                            )));
                        }
                    };
                    let a = (a as u64).wrapping_add(*offset as u64);
                    if *generic && window(space).is_some() { to_generic(space, a) } else { a }
                }
            };
            let at = base as usize + k * size;
            if at + size > l.consts.len() {
                break;
            }
            l.consts[at..at + size].copy_from_slice(&to_le(bits, size)[..size]);
        }
    }
    Ok(l)
}
