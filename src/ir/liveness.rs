//! Block liveness of virtual registers in an SSA function, shared by register allocation
//! (bank assignment, predicate demotion) and the list scheduler.

use super::{BlockId, Function, for_each_def, for_each_use};
use std::collections::HashMap;

/// Live virtual registers at the start and end of every block in `layout`, as bit vectors
/// indexed by virtual-register number (length `f.vregs.len()`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Liveness {
    /// Live on entry to the block (block parameters excluded: they are defined at entry).
    pub live_in: HashMap<BlockId, Vec<bool>>,
    /// Live on exit from the block: what successors need on entry, less their block
    /// parameters, plus the edge arguments that feed those parameters.
    pub live_out: HashMap<BlockId, Vec<bool>>,
}

/// Computes [`Liveness`] by backward dataflow to a fixed point. Predicates and
/// general-purpose registers alike; callers filter by [`super::VRegKind`].
pub fn liveness(f: &Function) -> Liveness {
    let n = f.vregs.len();
    let mut live_in: HashMap<BlockId, Vec<bool>> = HashMap::new();
    let out_of = |b: BlockId, live_in: &HashMap<BlockId, Vec<bool>>| {
        let mut live = vec![false; n];
        for e in f.succ_edges(b) {
            let s = f.cfg.edge_endpoints(e).expect("edge").1;
            if let Some(l) = live_in.get(&s) {
                for (k, x) in l.iter().enumerate() {
                    live[k] |= *x;
                }
            }
            for p in &f.cfg[s].params {
                live[*p as usize] = false;
            }
            for a in &f.cfg[e].args {
                live[*a as usize] = true;
            }
        }
        live
    };
    let mut changed = true;
    while changed {
        changed = false;
        for &b in f.layout.iter().rev() {
            let mut live = out_of(b, &live_in);
            for i in f.cfg[b].instrs.iter().rev() {
                for_each_def(i, |v| live[v as usize] = false);
                for_each_use(i, |v| live[v as usize] = true);
            }
            if live_in.get(&b) != Some(&live) {
                live_in.insert(b, live);
                changed = true;
            }
        }
    }
    let live_out = f.layout.iter().map(|&b| (b, out_of(b, &live_in))).collect();
    Liveness { live_in, live_out }
}
