//! Builders shared by the unit tests of the IR's analyses and of the CFG passes.

use super::{BlockId, Edge, EdgeKind, Function};
use crate::ptx::ast::FuncKind;

/// A random control-flow graph of `n` blocks (`n >= 1`), the entry first, laid out in
/// order: block `i` falls through to block `i + 1` (so every block is reachable; the last
/// one ends), and with probability 3/4 also has a taken edge to a block drawn uniformly,
/// itself and the entry included. The family has loops entered in the middle, nested and
/// overlapping cycles and self loops, reducible and irreducible members.
///
/// `next(m)` draws a number in `0..m`; it is called, per block in order, once with 4 and,
/// when that draw is not 0, once with `n` (the tests' random streams depend on this order).
/// Returns the function and its blocks in layout order.
pub(crate) fn random_cfg(n: usize, next: &mut impl FnMut(u64) -> u64) -> (Function, Vec<BlockId>) {
    let mut f = Function::new("t", FuncKind::Entry);
    // `Function::new` made the entry block; the others follow it.
    let blocks: Vec<BlockId> = std::iter::once(f.entry).chain((1..n).map(|i| f.new_block(format!("b{i}")))).collect();
    assert_eq!(f.cfg.node_count(), n);
    f.layout = blocks.clone();
    for (i, &b) in blocks.iter().enumerate() {
        if let Some(&fall) = blocks.get(i + 1) {
            f.cfg.add_edge(b, fall, Edge { kind: EdgeKind::Fallthrough, args: vec![] });
        }
        if next(4) != 0 {
            let t = blocks[next(n as u64) as usize];
            f.cfg.add_edge(b, t, Edge { kind: EdgeKind::Taken, args: vec![] });
        }
    }
    (f, blocks)
}
