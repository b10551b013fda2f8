//! SplitMix64 (Steele, Lea, Flood 2014): the small deterministic generator behind the
//! simulator's completion delays and initial garbage, `ptx2sass run`'s random buffers and
//! both executors' order of atomic lanes ([`atomic_lane_order`]), so that a seed
//! reproduces a run exactly.

// No panicking shortcuts in the executors (issue 20, docs/fuzzing.md "No-panic discipline").
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// `n` random bytes (eight per draw).
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let r = self.next_u64().to_le_bytes();
            let take = n.saturating_sub(out.len()).min(r.len());
            out.extend(r.iter().take(take));
        }
        out
    }
    /// A value in `lo..=hi` (`lo` when `hi < lo`; one draw either way).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        let r = self.next_u64();
        // `hi - lo + 1` values; none is 2^64 (all of them: any draw fits).
        match hi.checked_sub(lo).map(|d| d.checked_add(1)) {
            Some(Some(span)) => lo.saturating_add(r.checked_rem(span).unwrap_or(0)),
            Some(None) => r,
            None => lo,
        }
    }
    /// A completion delay within `min..=max`: one draw in four is short (1..=8 cycles),
    /// so that waiting on a barrier never hides a too-short stall by accident.
    pub fn delay(&mut self, min: u64, max: u64) -> u64 {
        if self.next_u64().is_multiple_of(4) { self.range(1, 8.min(max)) } else { self.range(min, max) }
    }
}

/// The order in which the lanes of warp `warp` of CTA `cta` (linear indices) apply an
/// atomic (`atom`/`red`; SASS `ATOM`, `ATOMS`, `RED`, and each round of a CAS loop): lane
/// `order[0]` first. The PTX ISA leaves the order of a warp's atomic operations on one
/// address unspecified (9.7.13.5 atom: "atomic operations ... performed atomically with
/// respect to all other atomic operations"; no order among threads); both executors take
/// it from here, so old values returned by contended atomics (slot allocation with
/// `atom.add`) agree between them and vary with the seed. The order is one fixed
/// permutation per warp for the whole launch: a CAS loop (ptxas's code for
/// `atom.shared.add.f32`) retries the losing lanes, and only a fixed priority lets its
/// rounds succeed in the order a single atomic would.
pub fn atomic_lane_order(seed: u64, cta: u64, warp: u64) -> [u8; 32] {
    let mut r = Rng::new(seed ^ cta.wrapping_mul(0xd6e8_feb8_6659_fd93) ^ warp.wrapping_mul(0xa076_1d64_78bd_642f));
    let mut order: [u8; 32] = std::array::from_fn(|k| k as u8);
    for k in (1..32).rev() {
        order.swap(k, r.range(0, k as u64) as usize);
    }
    order
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
mod tests {
    use super::*;

    #[test]
    fn lane_orders_are_permutations_that_vary() {
        let a = atomic_lane_order(1, 0, 0);
        let mut sorted = a;
        sorted.sort_unstable();
        assert_eq!(sorted, std::array::from_fn(|k| k as u8));
        assert_eq!(a, atomic_lane_order(1, 0, 0));
        assert_ne!(a, atomic_lane_order(2, 0, 0));
        assert_ne!(a, atomic_lane_order(1, 1, 0));
        assert_ne!(a, atomic_lane_order(1, 0, 1));
    }
}
