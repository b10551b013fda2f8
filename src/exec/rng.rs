//! SplitMix64 (Steele, Lea, Flood 2014): the small deterministic generator behind the
//! simulator's completion delays and initial garbage, and `ptx2sass run`'s random buffers,
//! so that a seed reproduces a run exactly.

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
    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
    /// A value in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    /// A completion delay within `min..=max`: one draw in four is short (1..=8 cycles),
    /// so that waiting on a barrier never hides a too-short stall by accident.
    pub fn delay(&mut self, min: u64, max: u64) -> u64 {
        if self.next_u64().is_multiple_of(4) { self.range(1, 8.min(max)) } else { self.range(min, max) }
    }
}
