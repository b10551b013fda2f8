//! Byte-addressed memory made of allocations (global buffers, a CTA's shared memory, a
//! thread's local memory), with bounds checks.

// Addresses come from the executed program (issue 20, docs/fuzzing.md "No-panic
// discipline"): an access outside every allocation is an error, never a panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use super::ExecError;
use std::collections::BTreeMap;

/// Memory as a set of non-overlapping allocations, each a base address and its bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    regions: BTreeMap<u64, Region>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Region {
    name: String,
    bytes: Vec<u8>,
}

/// Bytes that differ between two memories, within one allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Allocation name.
    pub region: String,
    /// Byte offset of the first differing byte within the allocation.
    pub offset: u64,
    /// The first memory's bytes from there (up to 16).
    pub left: Vec<u8>,
    /// The second memory's bytes from there (up to 16).
    pub right: Vec<u8>,
}

impl Memory {
    /// Empty memory.
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Adds an allocation `name` of `bytes` at `base`. Errors if it overlaps another.
    pub fn alloc(&mut self, name: &str, base: u64, bytes: Vec<u8>) -> Result<(), ExecError> {
        let end = base.checked_add(bytes.len() as u64).ok_or_else(|| ExecError::Launch(format!("{name} wraps")))?;
        // Allocations never wrap (checked above when each was added), so `b + len` fits.
        let overlaps = self.regions.range(..end).next_back().is_some_and(|(b, r)| region_end(*b, r) > base);
        if overlaps {
            return Err(ExecError::Launch(format!("allocation {name} at 0x{base:x} overlaps another")));
        }
        self.regions.insert(base, Region { name: name.to_string(), bytes });
        Ok(())
    }

    /// The base of the allocation holding `[addr, addr + len)` and the range of its bytes
    /// that is.
    fn find(&self, addr: u64, len: u64) -> Option<(u64, std::ops::Range<usize>)> {
        let (&b, r) = self.regions.range(..=addr).next_back()?;
        let start = usize::try_from(addr.checked_sub(b)?).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        (end <= r.bytes.len()).then_some((b, start..end))
    }

    /// `len` bytes at `addr`; `space` names the state space in the error.
    pub fn read(&self, space: &'static str, addr: u64, len: u64) -> Result<&[u8], ExecError> {
        let oob = ExecError::OutOfBounds { space, addr, len };
        let (b, range) = self.find(addr, len).ok_or_else(|| oob.clone())?;
        self.regions.get(&b).and_then(|r| r.bytes.get(range)).ok_or(oob)
    }

    /// Writes `data` at `addr`; `space` names the state space in the error.
    pub fn write(&mut self, space: &'static str, addr: u64, data: &[u8]) -> Result<(), ExecError> {
        let len = data.len() as u64;
        let oob = ExecError::OutOfBounds { space, addr, len };
        let (b, range) = self.find(addr, len).ok_or_else(|| oob.clone())?;
        let dst = self.regions.get_mut(&b).and_then(|r| r.bytes.get_mut(range)).ok_or(oob)?;
        dst.copy_from_slice(data);
        Ok(())
    }

    /// Reads a little-endian unsigned value of `len` (1, 2, 4 or 8) bytes.
    pub fn read_uint(&self, space: &'static str, addr: u64, len: u64) -> Result<u64, ExecError> {
        let b = self.read(space, addr, len)?;
        Ok(b.iter().rev().fold(0u64, |v, x| v.wrapping_shl(8) | *x as u64))
    }

    /// Writes the low `len` (1, 2, 4 or 8) bytes of `v`, little-endian.
    pub fn write_uint(&mut self, space: &'static str, addr: u64, len: u64, v: u64) -> Result<(), ExecError> {
        // Bytes past the eighth are zero.
        let bytes: Vec<u8> = (0..len).map(|k| v.to_le_bytes().get(k as usize).copied().unwrap_or(0)).collect();
        self.write(space, addr, &bytes)
    }

    /// Allocations as (name, base, bytes), by address.
    pub fn regions(&self) -> impl Iterator<Item = (&str, u64, &[u8])> {
        self.regions.iter().map(|(b, r)| (r.name.as_str(), *b, r.bytes.as_slice()))
    }

    /// Where `self` and `other` differ: per allocation of `self`, the first differing byte
    /// (allocations missing from `other` or of another size count as differing at 0).
    pub fn diff(&self, other: &Memory) -> Vec<Difference> {
        let mut out = vec![];
        for (b, r) in &self.regions {
            let o = other.regions.get(b);
            let right: &[u8] = o.map_or(&[], |o| &o.bytes);
            let first = if o.is_some_and(|o| o.bytes.len() == r.bytes.len()) {
                r.bytes.iter().zip(right).position(|(x, y)| x != y)
            } else {
                Some(0)
            };
            if let Some(k) = first {
                let take = |v: &[u8]| v.iter().skip(k).take(16).copied().collect::<Vec<u8>>();
                out.push(Difference {
                    region: r.name.clone(),
                    offset: k as u64,
                    left: take(&r.bytes),
                    right: take(right),
                });
            }
        }
        out
    }
}

/// One past the last byte of region `r` at `base` (allocations never wrap: [`Memory::alloc`]).
fn region_end(base: u64, r: &Region) -> u64 {
    base.saturating_add(r.bytes.len() as u64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_values() {
        let mut m = Memory::new();
        m.alloc("a", 0x1000, vec![0; 16]).unwrap();
        assert!(m.alloc("b", 0x100f, vec![0; 4]).is_err());
        m.write_uint("global", 0x1004, 4, 0xdeadbeef).unwrap();
        assert_eq!(m.read_uint("global", 0x1004, 4).unwrap(), 0xdeadbeef);
        assert_eq!(m.read_uint("global", 0x1005, 1).unwrap(), 0xbe);
        assert!(matches!(m.read("global", 0x100e, 4), Err(ExecError::OutOfBounds { .. })));
        assert!(m.read("global", 0xfff, 1).is_err());
        let mut n = m.clone();
        assert!(m.diff(&n).is_empty());
        n.write_uint("global", 0x100c, 1, 7).unwrap();
        assert_eq!(m.diff(&n)[0].offset, 12);
    }
}
