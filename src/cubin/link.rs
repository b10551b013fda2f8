//! One kernel's `.text.<k>` section as ptxas 11.8 lays it out when device functions are
//! compiled on their own (real calls, `docs/abi.md`): the kernel, then every device
//! function it may call, transitively, each once, packed at instruction granularity
//! (a function may start in the middle of a 32-byte bundle), each named by a symbol
//! `$<kernel>$<func>`.
//!
//! Measured on `ptxas -arch=sm_50 -O3` of a probe module (kernel `k1` calling a recursive
//! `fact`, a `.visible` `vis` that calls `leaf`, a `.weak` `wk`, `leaf`'s address and
//! `vprintf`; kernel `k2` calling `leaf`), read with `nvdisasm` and `cuobjdump -elf`:
//! * `.text.k1` holds k1, `$k1$fact`, `$k1$leaf`, `$k1$vis`, `$k1$wk` (0xd8, 0x170, 0x190,
//!   0x1b0), `.text.k2` holds k2 and `$k2$leaf` (0x60): sorted by name, bytewise;
//!   `.visible` and `.weak` functions get no section of their own;
//! * a symbol's value is the address of its first instruction, or of the bundle when that
//!   instruction is the bundle's first (0x60 for an instruction at 0x68), as for branch
//!   targets; its size runs to the next function (the last one to the end of the section,
//!   the kernel's over the whole section);
//! * `CAL` is resolved in place (no relocation); `JCAL` to an undefined function gets
//!   `R_CUDA_ABS32_20` against a `GLOBAL FUNC` UND symbol.
// Not yet under the module's no-panic discipline (issue 20): merged from the `link` work
// after the lints were set; a follow-up rewrites its sites.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use crate::sass::instr::{SrcKind, SymPart};
use crate::sass::program::{Linkage, Program, SassFunction, Scheduled, address};
use std::collections::HashMap;

/// A device function placed in a kernel's section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The function's name in the program.
    pub name: String,
    /// Its symbol, `$<kernel>$<func>`.
    pub symbol: String,
    /// Index of its first instruction in the section's code.
    pub first: usize,
    /// Linkage (symbol binding: internal `LOCAL`, `.visible` `GLOBAL`, `.weak` `WEAK`).
    pub linkage: Linkage,
    /// Its own stack frame in bytes (EIATTR_FRAME_SIZE).
    pub frame_bytes: u32,
    /// EIATTR_MIN_STACK_SIZE: the frame plus the deepest callee's, or `0xffffffff` when
    /// the section's call graph has a cycle (ptxas 11.8 writes it for every function of
    /// `.text.k1`, also for `leaf`, which recurses nowhere).
    pub min_stack: u32,
}

/// A kernel's section code and the facts the cubin needs about its functions.
#[derive(Clone, Debug)]
pub struct Section {
    /// The kernel with its callees appended (one function, named after the kernel; `CAL`
    /// targets and function addresses name the `$<k>$<f>` symbols).
    pub func: SassFunction,
    /// The callees in placement order.
    pub placed: Vec<Placed>,
    /// The functions the section calls that the program does not define, in first-use
    /// order (EIATTR_EXTERNS).
    pub externs: Vec<String>,
    /// The kernel's EIATTR_MIN_STACK_SIZE (see [`Placed::min_stack`]).
    pub min_stack: u32,
    /// Longest chain of calls from the kernel (0 without calls); `None` with recursion.
    pub call_depth: Option<u32>,
}

/// The symbol ptxas gives function `f` placed in kernel `k`'s section.
pub fn symbol(kernel: &str, f: &str) -> String {
    format!("${kernel}${f}")
}

/// The callees of function `g` (calls and address uses, in code order, each once).
fn callees(p: &Program, index: &HashMap<&str, usize>, g: usize) -> Vec<usize> {
    let mut out = vec![];
    for r in p.functions[g].relocations() {
        if let Some(&c) = index.get(r.symbol.as_str())
            && p.functions[c].kind != ".entry"
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

/// The callees of kernel `k`, callees before callers (the strongly connected components
/// of the call graph in Tarjan's order), and whether its call graph has a cycle. Tarjan's
/// algorithm, iterative (call chains may be deep); linear in the calls.
fn placement(p: &Program, index: &HashMap<&str, usize>, k: usize) -> (Vec<usize>, bool) {
    let n = p.functions.len();
    let mut num = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on = vec![false; n];
    let mut tstack: Vec<usize> = vec![];
    let mut order: Vec<usize> = vec![];
    let mut cyclic = false;
    let mut next = 0;
    let mut dfs: Vec<(usize, Vec<usize>, usize)> = vec![];
    let mut enter = |g: usize, num: &mut Vec<usize>, low: &mut Vec<usize>, on: &mut Vec<bool>, t: &mut Vec<usize>| {
        num[g] = next;
        low[g] = next;
        next += 1;
        on[g] = true;
        t.push(g);
        (g, callees(p, index, g), 0)
    };
    dfs.push(enter(k, &mut num, &mut low, &mut on, &mut tstack));
    while let Some((g, cs, at)) = dfs.last_mut() {
        let g = *g;
        if *at < cs.len() {
            let c = cs[*at];
            *at += 1;
            if c == g {
                cyclic = true;
            }
            if num[c] == usize::MAX {
                dfs.push(enter(c, &mut num, &mut low, &mut on, &mut tstack));
            } else if on[c] {
                low[g] = low[g].min(num[c]);
            }
            continue;
        }
        dfs.pop();
        if let Some((parent, _, _)) = dfs.last() {
            low[*parent] = low[*parent].min(low[g]);
        }
        if low[g] == num[g] {
            let at = tstack.iter().rposition(|&x| x == g).expect("on the Tarjan stack");
            let scc: Vec<usize> = tstack.drain(at..).collect();
            cyclic |= scc.len() > 1;
            for &x in &scc {
                on[x] = false;
            }
            order.extend(scc.into_iter().filter(|&x| x != k));
        }
    }
    (order, cyclic)
}

/// The stack kernel `kernel` needs per thread at launch, its EIATTR_MIN_STACK_SIZE: its
/// frame plus the deepest chain of its callees' frames (each frame with the stack
/// argument area of its calls, `sass::abi::frame_with_outgoing`), callees found as in
/// [`section`] (calls and address uses of functions the program defines). `None` when
/// the chain is unbounded (the call graph from the kernel has a cycle) or the sum
/// overflows. Panic-free (the simulator sizes local memory with it); linear in the code.
pub fn stack_need(p: &Program, kernel: &SassFunction) -> Option<u32> {
    let index: HashMap<&str, &SassFunction> = p.functions.iter().map(|f| (f.name.as_str(), f)).collect();
    let callees = |f: &SassFunction| -> Vec<&str> {
        let mut out: Vec<&str> = vec![];
        for r in f.relocations() {
            if let Some((name, g)) = index.get_key_value(r.symbol.as_str())
                && g.kind != ".entry"
                && !out.contains(name)
            {
                out.push(name);
            }
        }
        out
    };
    // Iterative depth-first search: `need` holds the finished functions, `open` those on
    // the path (reaching one of them again is a cycle).
    let mut need: HashMap<&str, u32> = HashMap::new();
    let mut open: std::collections::HashSet<&str> = [kernel.name.as_str()].into();
    let mut stack: Vec<(&SassFunction, Vec<&str>, usize)> = vec![(kernel, callees(kernel), 0)];
    while let Some(top) = stack.last_mut() {
        if let Some(&c) = top.1.get(top.2) {
            top.2 = top.2.saturating_add(1);
            if need.contains_key(c) {
                continue;
            }
            if !open.insert(c) {
                return None;
            }
            let g = index.get(c)?;
            stack.push((g, callees(g), 0));
            continue;
        }
        let (f, cs, _) = stack.pop()?;
        let deepest = cs.iter().filter_map(|c| need.get(c)).copied().max().unwrap_or(0);
        open.remove(f.name.as_str());
        need.insert(f.name.as_str(), f.frame_bytes.checked_add(deepest)?);
    }
    need.get(kernel.name.as_str()).copied()
}

/// Builds kernel `k`'s section. Linear in the code of the functions placed.
pub fn section(p: &Program, k: usize) -> Section {
    let index: HashMap<&str, usize> = p.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
    let kernel = &p.functions[k];
    let (order, cyclic) = placement(p, &index, k);
    // Stack needs and call depth, callees before callers (post order).
    let mut min_stack: HashMap<usize, u32> = HashMap::new();
    let mut depth: HashMap<usize, u32> = HashMap::new();
    for &g in order.iter().chain(std::iter::once(&k)) {
        let cs = callees(p, &index, g);
        let deepest = cs.iter().filter_map(|c| min_stack.get(c)).copied().max().unwrap_or(0);
        min_stack.insert(g, if cyclic { u32::MAX } else { p.functions[g].frame_bytes.saturating_add(deepest) });
        let d = cs.iter().filter_map(|c| depth.get(c)).map(|d| d + 1).max().unwrap_or(0);
        depth.insert(g, d);
    }
    // ptxas 11.8 places the callees sorted by name, bytewise (probe `order.ptx`: calls of
    // mid_2, zeta, alpha, Beta, _u, mid_10 are placed Beta, _u, alpha, mid_10, mid_2,
    // zeta; `k1`: fact, leaf, vis, wk; `parity`: is_even, is_odd).
    let mut order = order;
    order.sort_by(|a, b| p.functions[*a].name.as_bytes().cmp(p.functions[*b].name.as_bytes()));
    let mut names: HashMap<&str, String> = HashMap::new();
    for &g in &order {
        names.insert(p.functions[g].name.as_str(), symbol(&kernel.name, &p.functions[g].name));
    }
    let mut code: Vec<Scheduled> = vec![];
    let mut symbols: Vec<String> = vec![];
    let mut sym_ids: HashMap<String, u32> = HashMap::new();
    let mut externs: Vec<String> = vec![];
    let mut placed = vec![];
    for &g in std::iter::once(&k).chain(&order) {
        let f = &p.functions[g];
        let base = code.len();
        if g != k {
            placed.push(Placed {
                name: f.name.clone(),
                symbol: names[f.name.as_str()].clone(),
                first: base,
                linkage: f.linkage,
                frame_bytes: f.frame_bytes,
                min_stack: min_stack[&g],
            });
        }
        for s in &f.code {
            let mut s = s.clone();
            for src in s.instr.srcs.iter_mut() {
                match src.kind {
                    SrcKind::Label(t) => src.kind = SrcKind::Label((base + t as usize) as u32),
                    SrcKind::Sym { id, part } => {
                        let name = f.symbols.get(id as usize).cloned().unwrap_or_default();
                        let name = match names.get(name.as_str()) {
                            Some(s) => s.clone(),
                            None => {
                                if part == SymPart::Target
                                    && !index.contains_key(name.as_str())
                                    && !externs.contains(&name)
                                {
                                    externs.push(name.clone());
                                }
                                name
                            }
                        };
                        let next = symbols.len() as u32;
                        let id = *sym_ids.entry(name.clone()).or_insert_with(|| {
                            symbols.push(name);
                            next
                        });
                        src.kind = SrcKind::Sym { id, part };
                    }
                    _ => {}
                }
            }
            code.push(s);
        }
    }
    let func = SassFunction { code, symbols, ..kernel.clone() };
    let min_stack = min_stack[&k];
    Section { func, placed, externs, min_stack, call_depth: (!cyclic).then(|| depth[&k]) }
}

/// Byte value of a symbol for a function starting at instruction `first`: its address,
/// or its bundle's when it is the bundle's first instruction (ptxas: `$k2$leaf` = 0x60
/// for a first instruction at 0x68).
pub fn start_value(first: usize) -> u32 {
    let a = address(first) as u32;
    if a % 32 == 8 { a - 8 } else { a }
}
