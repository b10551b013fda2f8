//! Def-use indexes over virtual registers, dense (indexed by register number) so that a
//! pass builds them once in linear time and queries them in constant time, instead of
//! hashing or rescanning the function per query.

use super::{BlockId, Function, for_each_def, for_each_use};

/// Where each virtual register is defined: block and instruction index (the last
/// definition in layout order when there are several; block parameters are not
/// instruction definitions).
#[derive(Clone, Debug, Default)]
pub struct DefSites {
    sites: Vec<Option<(BlockId, usize)>>,
}

impl DefSites {
    /// The definition sites of `f`'s registers.
    pub fn new(f: &Function) -> DefSites {
        let mut sites = vec![None; f.vregs.len()];
        for &b in &f.layout {
            for (k, i) in f.cfg[b].instrs.iter().enumerate() {
                for_each_def(i, |v| {
                    if let Some(s) = sites.get_mut(v as usize) {
                        *s = Some((b, k));
                    }
                });
            }
        }
        DefSites { sites }
    }

    /// The definition site of `v`, if an instruction defines it.
    pub fn get(&self, v: u32) -> Option<(BlockId, usize)> {
        self.sites.get(v as usize).copied().flatten()
    }
}

/// Number of reads of each virtual register: instruction operands (as
/// [`for_each_use`] counts them) and edge arguments.
pub fn use_counts(f: &Function) -> Vec<u32> {
    let mut n = vec![0u32; f.vregs.len()];
    for &b in &f.layout {
        for i in &f.cfg[b].instrs {
            for_each_use(i, |v| n[v as usize] += 1);
        }
        for e in f.succ_edges(b) {
            for a in &f.cfg[e].args {
                n[*a as usize] += 1;
            }
        }
    }
    n
}
