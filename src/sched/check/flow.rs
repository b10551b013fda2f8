//! How control moves in the hazard checker's model ([`super`]): the reconvergence stack
//! that `SSY`/`PBK` push and `SYNC`/`BRK` pop, and the calling contexts of subroutines.

use super::{Node, State};
use crate::sched::effects::Flow;
use std::collections::{HashMap, HashSet};

/// The call-return-sync stack as far as `SSY`/`SYNC` and `PBK`/`BRK` use it: `SSY t` pushes
/// a sync entry for `t`, `PBK t` a break entry; `SYNC` continues at the topmost sync entry
/// and pops it with everything above it, `BRK` the same with the topmost break entry
/// (nvdisasm semantics of the reconvergence stack). Each entry holds the targets it may be
/// (several after a join of paths); `unknown_below` says that entries below the known ones
/// may exist (paths with different stacks joined). A `SYNC`/`BRK` without a known entry
/// goes to every `SSY`/`PBK` target of its function, as if no stack were tracked.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Crs {
    /// (is a sync entry, possible targets sorted), bottom first.
    entries: Vec<(bool, Vec<usize>)>,
    unknown_below: bool,
}

impl Crs {
    /// Pushes an entry.
    pub(super) fn push(&mut self, sync: bool, target: usize) {
        self.entries.push((sync, vec![target]));
    }

    /// Where a `SYNC` (`sync`) or `BRK` goes, and the stack after it: the targets of the
    /// topmost entry of its kind, or `None` if there is none known.
    pub(super) fn pop(&self, sync: bool) -> (Option<Vec<usize>>, Crs) {
        match self.entries.iter().rposition(|(k, _)| *k == sync) {
            Some(p) => (
                Some(self.entries[p].1.clone()),
                Crs { entries: self.entries[..p].to_vec(), unknown_below: self.unknown_below },
            ),
            None => (None, Crs { entries: vec![], unknown_below: true }),
        }
    }

    /// The stack where either `self` or `o` may hold: entries aligned from the top are
    /// merged while their kinds agree; anything below becomes unknown.
    pub(super) fn join(&mut self, o: &Crs) {
        if self == o {
            return;
        }
        let (a, b) = (&self.entries, &o.entries);
        let mut merged = vec![];
        while merged.len() < a.len() && merged.len() < b.len() {
            let (ka, ta) = &a[a.len() - 1 - merged.len()];
            let (kb, tb) = &b[b.len() - 1 - merged.len()];
            if ka != kb {
                break;
            }
            let mut t: Vec<usize> = ta.iter().chain(tb).copied().collect();
            t.sort_unstable();
            t.dedup();
            merged.push((*ka, t));
        }
        let unknown = self.unknown_below || o.unknown_below || merged.len() < a.len() || merged.len() < b.len();
        merged.reverse();
        *self = Crs { entries: merged, unknown_below: unknown };
    }
}

/// The most call sites a function may have for the analysis to tell them apart; the
/// contexts of a function called from more sites are merged into one (see [`check`]).
pub const MAX_CALL_SITES: usize = 8;

/// Calling contexts: context 0 is "entered as a kernel"; `1 + k` is "called from the
/// `CAL` at node `k`" (the innermost call site only); `1 + n + f` is "called from any of
/// the call sites of function `f`" for a function with more than [`MAX_CALL_SITES`].
pub(super) struct Contexts {
    /// Per node: the context of the callee of a `CAL` at that node.
    pub(super) callee_ctx: Vec<usize>,
    /// Per context: the `CAL`s (node, context of the caller) that entered it.
    pub(super) callers: HashMap<usize, Vec<(usize, usize)>>,
    /// The same as a set of (context, node, caller's context).
    pub(super) seen_callers: HashSet<(usize, usize, usize)>,
    /// Per context: the join of the states after its `RET`s.
    pub(super) returned: HashMap<usize, State>,
}

impl Contexts {
    pub(super) fn new(nodes: &[Node]) -> Contexts {
        let n = nodes.len();
        let mut sites: HashMap<usize, usize> = HashMap::new();
        for x in nodes.iter().filter(|x| x.fx.flow == Flow::Call) {
            if let Some(&t) = x.succs.first() {
                *sites.entry(nodes[t].func).or_default() += 1;
            }
        }
        let callee_ctx = nodes
            .iter()
            .enumerate()
            .map(|(k, x)| match x.succs.first() {
                Some(&t) if x.fx.flow == Flow::Call => {
                    let f = nodes[t].func;
                    if sites[&f] > MAX_CALL_SITES { 1 + n + f } else { 1 + k }
                }
                _ => 0,
            })
            .collect();
        Contexts { callee_ctx, callers: HashMap::new(), seen_callers: HashSet::new(), returned: HashMap::new() }
    }
}
