//! Bit fields of SPA 5.0 instruction words: a field is one or more bit ranges of the
//! 64-bit word, concatenated least significant piece first (the 20-bit immediates keep
//! their sign in bit 56, apart from bits 20..38: `sm50-encoding-and-cubin.md` §1.2).

/// A field of an instruction word: `(lo, len)` pieces, least significant first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field(pub Vec<(u8, u8)>);

impl Field {
    /// A field of `len` bits at bit `lo`.
    pub fn at(lo: u8, len: u8) -> Field {
        Field(vec![(lo, len)])
    }

    /// Total width in bits.
    pub fn width(&self) -> u32 {
        self.0.iter().map(|p| p.1 as u32).sum()
    }

    /// The word bits the field occupies.
    pub fn mask(&self) -> u64 {
        self.0.iter().fold(0, |m, &(lo, len)| m | ones(len).checked_shl(lo.into()).unwrap_or(0))
    }

    /// The field's value in `w`.
    pub fn get(&self, w: u64) -> u64 {
        let mut v = 0u64;
        let mut at = 0u32;
        for &(lo, len) in &self.0 {
            v |= (w.checked_shr(lo.into()).unwrap_or(0) & ones(len)).checked_shl(at).unwrap_or(0);
            at = at.saturating_add(len.into());
        }
        v
    }

    /// The value as a two's-complement number of the field's width.
    pub fn get_signed(&self, w: u64) -> i64 {
        let n = self.width();
        let v = self.get(w);
        // Sign bit n - 1 set: the bits above it are set too (v - 2^n).
        match n.checked_sub(1) {
            Some(top) if n < 64 && v.checked_shr(top).unwrap_or(0) & 1 == 1 => (v | !ones(n as u8)) as i64,
            _ => v as i64,
        }
    }

    /// Places `v` (which must fit the width) into `w`.
    pub fn put(&self, w: &mut u64, v: u64) {
        let mut at = 0u32;
        for &(lo, len) in &self.0 {
            let part = v.checked_shr(at).unwrap_or(0) & ones(len);
            let shl = |x: u64| x.checked_shl(lo.into()).unwrap_or(0);
            *w = (*w & !shl(ones(len))) | shl(part);
            at = at.saturating_add(len.into());
        }
    }

    /// True if `v` fits the field unsigned.
    pub fn fits(&self, v: u64) -> bool {
        let n = self.width();
        n >= 64 || v.checked_shr(n).unwrap_or(0) == 0
    }

    /// Parses `lo:len` pieces joined by `+` (`20:19+56:1`); a bare `lo` is one bit.
    pub fn parse(s: &str) -> Option<Field> {
        let mut pieces = vec![];
        for p in s.split('+') {
            let (lo, len) = match p.split_once(':') {
                Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
                None => (p.parse().ok()?, 1),
            };
            if len == 0 || u32::from(lo).saturating_add(u32::from(len)) > 64 {
                return None;
            }
            pieces.push((lo, len));
        }
        Some(Field(pieces))
    }
}

/// `len` low bits set.
pub fn ones(len: u8) -> u64 {
    if len >= 64 { u64::MAX } else { !(u64::MAX << len) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn split_immediate() {
        // IADD R3, R2, -0x7ffff = 0x3910000000170203 (sm50-encoding-and-cubin.md §1.2).
        let f = Field::parse("20:19+56:1").unwrap();
        assert_eq!(f.get_signed(0x3910000000170203), -0x7ffff);
        let mut w = 0x3810000000070203;
        f.put(&mut w, (-0x7ffffi64 as u64) & 0xfffff);
        assert_eq!(w, 0x3910000000170203);
        assert!(f.fits(0xfffff) && !f.fits(0x100000));
    }
}
