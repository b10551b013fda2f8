//! Graphviz rendering of a function's CFG (`--emit dot`): one record node per block
//! listing its instructions, edges labelled `T` (taken) and `F` (fall-through).

use super::{EdgeKind, Function, Module};
use std::fmt::Write;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('{', "\\{")
        .replace('}', "\\}")
        .replace('|', "\\|")
        .replace('<', "\\<")
        .replace('>', "\\>")
}

/// One `digraph` per function, as Graphviz `dot` text.
pub fn to_dot(m: &Module) -> String {
    let mut s = String::new();
    for f in &m.functions {
        write_function(&mut s, f);
    }
    s
}

fn write_function(s: &mut String, f: &Function) {
    let _ = writeln!(s, "digraph \"{}\" {{", escape(&f.name));
    let _ = writeln!(s, "  node [shape=record, fontname=\"monospace\", fontsize=10];");
    for &b in &f.layout {
        let block = &f.cfg[b];
        let mut label = format!("{}: {}\\l", f.block_label(b.index() as u32), escape(&block.name));
        for i in &block.instrs {
            label.push_str(&escape(&f.instr_text(i)));
            label.push_str("\\l");
        }
        let _ = writeln!(s, "  b{} [label=\"{{{label}}}\"];", b.index());
    }
    for &b in &f.layout {
        for e in f.succ_edges(b) {
            let (_, t) = f.cfg.edge_endpoints(e).expect("edge exists");
            let tag = match f.cfg[e].kind {
                EdgeKind::Taken => "T",
                EdgeKind::Fallthrough => "F",
            };
            let _ = writeln!(s, "  b{} -> b{} [label=\"{tag}\"];", b.index(), t.index());
        }
    }
    let _ = writeln!(s, "}}");
}
