//! Limits on inlining, checked on the call graph before a kernel is lowered (issue 20: a
//! `.func` chain 6,000 calls deep overflowed the stack, and functions that each call the
//! next twice grew exponentially: depth 16 took 10 s, depth 18 over 40 s).
//!
//! ptx2sass inlines every call (`lower::calls::call`), so a kernel's code is its own instructions
//! plus, per call, the callee's inlined code. Both the depth of the call chain and that
//! total are computed here in one pass over the call graph (each function once, iteratively)
//! and bounded with a diagnostic.

use crate::diag::Diag;
use crate::ptx::ast::{Function, Operand, Statement};
use crate::ptx::instr::InstrKind;
use std::collections::HashMap;

/// The deepest chain of calls inlined (ptx2sass's limit; real call chains are a few levels,
/// and each level is a recursion of the lowering).
pub const MAX_DEPTH: u64 = 64;

/// The most PTX instructions a kernel may have once every call is inlined (ptx2sass's
/// limit: the largest samples have a few thousand; a chain of functions each calling the
/// next twice, 16 deep, inlines 2^16 bodies).
pub const MAX_INSTRUCTIONS: u64 = 250_000;

/// Per function: its instructions once inlined (saturating) and its call depth.
pub struct Measures(HashMap<String, (u64, u64)>);

/// A function's own instruction count and the functions it calls (iterative walk).
fn own(f: &Function) -> (u64, Vec<String>) {
    let (mut n, mut calls) = (0u64, vec![]);
    let Some(body) = &f.body else { return (0, calls) };
    let mut stack = vec![body.stmts.iter()];
    while let Some(it) = stack.last_mut() {
        let Some(s) = it.next() else {
            stack.pop();
            continue;
        };
        match s {
            Statement::Instr(i) => {
                // At most one per instruction of the source.
                n = n.saturating_add(1);
                if i.kind == InstrKind::Call {
                    // `call (rets), f, (args)` or `call f, (args)`: the first name.
                    if let Some(Operand::Name { name, .. }) =
                        i.operands.iter().find(|o| matches!(o, Operand::Name { .. }))
                    {
                        calls.push(name.name.clone());
                    }
                }
            }
            Statement::Block(b) => stack.push(b.stmts.iter()),
            _ => {}
        }
    }
    (n, calls)
}

/// Measures every function of `funcs` (the module's functions with bodies, aliases
/// included): a depth-first walk with an explicit stack; a call cycle (recursion, which
/// `lower::calls::call` rejects) counts its back edge as nothing.
pub fn measure(funcs: &HashMap<&str, &Function>) -> Measures {
    let own: HashMap<&str, (u64, Vec<String>)> = funcs.iter().map(|(k, f)| (*k, own(f))).collect();
    let mut done: HashMap<String, (u64, u64)> = HashMap::new();
    let mut on_stack: std::collections::HashSet<&str> = Default::default();
    for root in funcs.keys() {
        if done.contains_key(*root) {
            continue;
        }
        // (function, index of the next callee to visit)
        let mut stack: Vec<(&str, usize)> = vec![(root, 0)];
        on_stack.insert(root);
        while let Some(&mut (f, ref mut k)) = stack.last_mut() {
            // Every function on the stack is a key of `own` (a root, or a callee pushed
            // because it is one).
            let Some((own_n, calls)) = own.get(f) else {
                on_stack.remove(f);
                stack.pop();
                continue;
            };
            if let Some(c) = calls.get(*k) {
                // `k` indexes `calls`.
                *k = k.saturating_add(1);
                let c = c.as_str();
                if own.contains_key(c) && !done.contains_key(c) && on_stack.insert(c) {
                    stack.push((c, 0));
                }
                continue;
            }
            let (mut size, mut depth) = (*own_n, 0u64);
            for c in calls {
                if let Some(&(s, d)) = done.get(c.as_str()) {
                    size = size.saturating_add(s);
                    depth = depth.max(d.saturating_add(1));
                }
            }
            done.insert(f.to_string(), (size, depth));
            on_stack.remove(f);
            stack.pop();
        }
    }
    Measures(done)
}

/// The diagnostic for kernel `k` if inlining its calls passes a limit.
pub fn check(k: &Function, m: &Measures) -> Option<Diag> {
    let &(size, depth) = m.0.get(&k.name.name)?;
    if depth > MAX_DEPTH {
        return Some(
            Diag::error(k.name.span, format!("`{}` calls functions {depth} levels deep", k.name.name))
                .label("call chain too deep to inline")
                .note(format!("ptx2sass inlines every call and allows {MAX_DEPTH} levels")),
        );
    }
    if size > MAX_INSTRUCTIONS {
        return Some(
            Diag::error(
                k.name.span,
                format!(
                    "inlining the calls of `{}` would make {} PTX instructions",
                    k.name.name,
                    if size == u64::MAX { "2^64 or more".to_string() } else { size.to_string() }
                ),
            )
            .label("too much code once inlined")
            .note(format!("ptx2sass inlines every call and allows {MAX_INSTRUCTIONS} instructions per kernel")),
        );
    }
    None
}
