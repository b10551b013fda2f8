//! Device functions no kernel can reach, dropped from a whole-program compile.
//!
//! ptxas 11.8 without `-c` emits only the kernels and the functions they call: probed with
//! `ptxas -arch=sm_50 -O3` on a module of one kernel and two functions it never calls, one
//! `.visible` and one internal, `cuobjdump -sass` lists the kernel alone (with `-c` all
//! three). ptx2sass inlines most calls (`lower::calls::callgraph`), so a device function
//! whose every call was inlined is in the same position: no `CAL` reaches it, and its code
//! is only size. Only whole-program output drops such functions (`-c` keeps every
//! function for the linker), and only from a module with a kernel: a module of device
//! functions alone is compiled to look at them.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::ir::{Linkage, Module};
use crate::ptx::ast::FuncKind;
use std::collections::HashSet;

/// Drops the device functions of `m` that no kernel reaches: roots are the kernels, the
/// `.weak` functions (another module's definition may be the one that is replaced, so
/// they stay as written) and any function named by a data address initializer; a root or
/// reached function reaches every name in its [`crate::ir::Function::symbols`] (the
/// functions its code calls or takes the address of; a name whose use the clean-up
/// removed still counts, which only keeps more). Does nothing to a module without a
/// kernel. Returns how many functions were dropped. Linear in the functions and their
/// symbols.
pub fn drop_unreached_functions(m: &mut Module) -> usize {
    if !m.functions.iter().any(|f| f.kind == FuncKind::Entry) {
        return 0;
    }
    let by_name: std::collections::HashMap<&str, usize> =
        m.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
    let mut reached = vec![false; m.functions.len()];
    let mut work: Vec<usize> = m
        .functions
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == FuncKind::Entry || f.linkage == Linkage::Weak)
        .map(|(i, _)| i)
        .collect();
    let data_names: HashSet<&str> = m.data.relocs.iter().map(|r| r.symbol.as_str()).collect();
    work.extend(data_names.iter().filter_map(|n| by_name.get(n).copied()));
    while let Some(i) = work.pop() {
        match reached.get_mut(i) {
            Some(r) if !*r => *r = true,
            _ => continue,
        }
        if let Some(f) = m.functions.get(i) {
            work.extend(f.symbols.iter().filter_map(|n| by_name.get(n.as_str()).copied()));
        }
    }
    let before = m.functions.len();
    let mut keep = reached.into_iter();
    m.functions.retain(|_| keep.next().unwrap_or(true));
    before.saturating_sub(m.functions.len())
}
