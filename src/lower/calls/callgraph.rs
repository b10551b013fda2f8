//! The module's call graph and the inlining decision.
//!
//! ptxas 11.8 inlines nothing: it `CAL`s even a three-instruction `.func` called once
//! (`-O3`, `docs/abi.md`); nvcc and LLVM inline before they emit PTX. ptx2sass decides
//! as a compiler of its own would ([`Inline`]): in `auto` mode a call is inlined when the
//! callee is small or called from one place, and kept as a real call when the callee is
//! recursive, large and called from several places, or marked `noinline`. PTX has no
//! `.noinline` directive (ptxas 11.8 and 12.9 reject one as a syntax error); a body
//! holding `.pragma "noinline";` is the marker (ptxas accepts it with the warning
//! `Pragma 'noinline' unsupported`).
//!
//! Three kinds of call are never inlined: recursive calls (a callee already being inlined
//! on the current path), indirect calls, and calls of functions without a body
//! (`.extern`) or with `.weak` linkage (another module may replace them).
//!
//! A function that uses `.shared` variables (its own, or module-scope ones, directly or
//! in the functions it calls) is always inlined: ptx2sass places shared variables per
//! kernel (`shared.rs`), so one compiled copy of the function would see different
//! offsets from different kernels. Where it cannot be inlined (recursion, address taken)
//! that is a diagnostic.

use crate::ptx::ast::{Block, Function, Item, Linkage, Module, Operand, Statement};
use crate::ptx::instr::InstrKind;
use crate::ptx::types::StateSpace;
use std::collections::{HashMap, HashSet};

/// The `--inline` option.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Inline {
    /// Inline every call that can be (not recursive, indirect, external or `.weak`).
    Always,
    /// Inline no call (except functions that use `.shared` variables, which must be).
    Never,
    /// Small or single-call callees inlined, the others called.
    #[default]
    Auto,
}

/// PTX instructions up to which a callee counts as small in `auto` mode.
pub const SMALL_CALLEE: usize = 40;

/// Facts about the module's functions that the inlining decision needs.
#[derive(Debug, Default)]
pub struct CallGraph {
    /// Functions on a cycle of direct calls (recursive, directly or mutually).
    pub recursive: HashSet<String>,
    /// PTX instructions in each body.
    pub size: HashMap<String, usize>,
    /// Direct call sites of each function in the module.
    pub sites: HashMap<String, usize>,
    /// Bodies marked `.pragma "noinline"`.
    pub noinline: HashSet<String>,
    /// Functions that use `.shared` variables, themselves or through their callees.
    pub uses_shared: HashSet<String>,
    /// Functions with a body.
    pub defined: HashSet<String>,
    /// `.weak` functions.
    pub weak: HashSet<String>,
    /// The direct callees of each function with a body, each once, in first-call order.
    pub callees: HashMap<String, Vec<String>>,
}

/// What one body contains: instruction count, direct callees, names used, pragmas.
#[derive(Default)]
struct BodyFacts<'a> {
    instrs: usize,
    callees: Vec<&'a str>,
    names: HashSet<&'a str>,
    noinline: bool,
    shared_decl: bool,
}

/// The direct callee of a `call` instruction's operands: the name after the optional
/// return list.
pub fn direct_callee(ops: &[Operand]) -> Option<&crate::ptx::ast::Ident> {
    let mut it = ops.iter();
    let mut first = it.next();
    if let Some(Operand::List(..)) = first {
        first = it.next();
    }
    match first {
        Some(Operand::Name { name, .. }) => Some(name),
        _ => None,
    }
}

fn scan<'a>(b: &'a Block, out: &mut BodyFacts<'a>) {
    let mut stack: Vec<std::slice::Iter<'a, Statement>> = vec![b.stmts.iter()];
    while let Some(top) = stack.last_mut() {
        let Some(s) = top.next() else {
            stack.pop();
            continue;
        };
        match s {
            Statement::Instr(i) => {
                // At most one per instruction of the source.
                out.instrs = out.instrs.saturating_add(1);
                if matches!(i.kind, InstrKind::Call)
                    && let Some(n) = direct_callee(&i.operands)
                {
                    out.callees.push(&n.name);
                }
                for o in &i.operands {
                    names(o, &mut out.names);
                }
            }
            Statement::Block(b) => stack.push(b.stmts.iter()),
            Statement::Pragma(p, _) => out.noinline |= p.iter().any(|s| s.trim_matches('"') == "noinline"),
            Statement::Decl(ds) => out.shared_decl |= ds.iter().any(|d| matches!(d.space, StateSpace::Shared(_))),
            _ => {}
        }
    }
}

fn names<'a>(o: &'a Operand, out: &mut HashSet<&'a str>) {
    match o {
        Operand::Name { name, .. } => {
            out.insert(&name.name);
        }
        Operand::Address { base: crate::ptx::ast::AddrBase::Name(n), .. } => {
            out.insert(&n.name);
        }
        Operand::List(v, _) => v.iter().for_each(|x| names(x, out)),
        _ => {}
    }
}

impl CallGraph {
    /// Gathers the facts of `m` (linear in the module).
    pub fn new(m: &Module) -> CallGraph {
        let shared_vars: HashSet<&str> = m
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Var(v) if matches!(v.space, StateSpace::Shared(_)) => Some(v.name.name.as_str()),
                _ => None,
            })
            .collect();
        let mut g = CallGraph::default();
        let mut facts: HashMap<&str, BodyFacts> = HashMap::new();
        for item in &m.items {
            let Item::Function(f) = item else { continue };
            if f.linkage == Linkage::Weak {
                g.weak.insert(f.name.name.clone());
            }
            let Some(b) = &f.body else { continue };
            let mut bf = BodyFacts::default();
            scan(b, &mut bf);
            bf.noinline |= f.tuning.iter().any(
                |t| matches!(t, crate::ptx::ast::Tuning::Pragma(p) if p.iter().any(|s| s.trim_matches('"') == "noinline")),
            );
            g.defined.insert(f.name.name.clone());
            g.size.insert(f.name.name.clone(), bf.instrs);
            if bf.noinline {
                g.noinline.insert(f.name.name.clone());
            }
            facts.insert(&f.name.name, bf);
        }
        for (name, bf) in &facts {
            let mut seen = HashSet::new();
            // Through `.alias` to the function itself.
            let direct =
                bf.callees.iter().map(|c| m.resolve_alias(c)).filter(|c| seen.insert(*c)).map(str::to_string).collect();
            g.callees.insert(name.to_string(), direct);
            for c in &bf.callees {
                let n = g.sites.entry(c.to_string()).or_default();
                *n = n.saturating_add(1);
            }
        }
        // Recursion: strongly connected components of the direct-call graph.
        let mut graph = petgraph::graph::DiGraph::<&str, ()>::new();
        let mut node = HashMap::new();
        for name in facts.keys() {
            node.insert(*name, graph.add_node(*name));
        }
        for (name, bf) in &facts {
            for c in &bf.callees {
                if let (Some(&s), Some(&t)) = (node.get(name), node.get(c)) {
                    graph.add_edge(s, t, ());
                }
            }
        }
        for scc in petgraph::algo::tarjan_scc(&graph) {
            let self_loop = matches!(scc.as_slice(), [n] if graph.contains_edge(*n, *n));
            if scc.len() > 1 || self_loop {
                g.recursive.extend(scc.iter().map(|n| graph[*n].to_string()));
            }
        }
        // Shared-memory users: direct, then propagated to callers (reverse reachability).
        let mut work: Vec<&str> = facts
            .iter()
            .filter(|(_, bf)| bf.shared_decl || bf.names.iter().any(|n| shared_vars.contains(n)))
            .map(|(n, _)| *n)
            .collect();
        let mut callers: HashMap<&str, Vec<&str>> = HashMap::new();
        for (name, bf) in &facts {
            for c in &bf.callees {
                callers.entry(*c).or_default().push(name);
            }
        }
        while let Some(n) = work.pop() {
            if g.uses_shared.insert(n.to_string()) {
                work.extend(callers.get(n).into_iter().flatten().copied());
            }
        }
        g
    }

    /// The functions `root` calls directly or through others (not `root` itself unless it
    /// is recursive), each once: a walk over [`CallGraph::callees`], linear in what it
    /// reaches.
    pub fn reachable(&self, root: &str) -> Vec<&str> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut out = vec![];
        let mut work: Vec<&str> = self.callees.get(root).into_iter().flatten().map(String::as_str).collect();
        while let Some(f) = work.pop() {
            if seen.insert(f) {
                out.push(f);
                work.extend(self.callees.get(f).into_iter().flatten().map(String::as_str));
            }
        }
        out
    }

    /// Whether a direct call of `callee` is inlined in `mode`, given that `on_stack`
    /// (the functions being inlined on this path) does not contain it. `Err` for a call
    /// that must be inlined but cannot be (see the module docs).
    pub fn inline(&self, mode: Inline, callee: &str) -> bool {
        if !self.defined.contains(callee) || self.weak.contains(callee) {
            return false;
        }
        if self.uses_shared.contains(callee) {
            return true;
        }
        match mode {
            Inline::Always => true,
            Inline::Never => false,
            Inline::Auto => {
                !self.noinline.contains(callee)
                    && !self.recursive.contains(callee)
                    && (self.size.get(callee).copied().unwrap_or(0) <= SMALL_CALLEE
                        || self.sites.get(callee).copied().unwrap_or(0) <= 1)
            }
        }
    }
}

/// The `.callprototype` signatures declared in a body, by the label before each.
pub fn prototypes(f: &Function) -> HashMap<&str, &crate::ptx::ast::CallPrototype> {
    let mut out = HashMap::new();
    let Some(b) = &f.body else { return out };
    let mut stack: Vec<std::slice::Iter<'_, Statement>> = vec![b.stmts.iter()];
    let mut label: Option<&str> = None;
    while let Some(top) = stack.last_mut() {
        let Some(s) = top.next() else {
            stack.pop();
            continue;
        };
        match s {
            Statement::Label(l) => {
                label = Some(&l.name);
                continue;
            }
            Statement::CallPrototype(p) => {
                if let Some(l) = label {
                    out.insert(l, p);
                }
            }
            Statement::Block(b) => stack.push(b.stmts.iter()),
            _ => {}
        }
        label = None;
    }
    out
}
