//! The builder's one deterministic PRNG: xoshiro256** (Blackman & Vigna), seeded either from
//! 32 bytes (the codeword's HMAC output) or from a `u64` expanded with splitmix64.
//!
//! Kept in-crate (no `rand`) so the exact stream is frozen by this file alone, identical on
//! every target including wasm32: a bundle's codeword must be reproducible from its key.

/// xoshiro256** generator.
#[derive(Debug, Clone)]
pub struct Xoshiro256 {
    s: [u64; 4],
}

/// One splitmix64 step: advances `state` and returns the next output.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Xoshiro256 {
    /// State = four splitmix64 outputs of `seed`.
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut st = seed;
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        Xoshiro256 { s }
    }

    /// State = the 32 bytes read as four little-endian `u64`s; the all-zero state (a fixed
    /// point of xoshiro) is replaced by `seed_from_u64(0)`.
    pub fn from_seed_bytes(bytes: [u8; 32]) -> Self {
        let mut s = [0u64; 4];
        for (i, w) in s.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[8 * i..8 * i + 8]);
            *w = u64::from_le_bytes(b);
        }
        if s == [0; 4] {
            return Self::seed_from_u64(0);
        }
        Xoshiro256 { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` (`n > 0`) without modulo bias: outputs below 2⁶⁴ mod n are
    /// rejected.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        let threshold = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            if x >= threshold {
                return x % n;
            }
        }
    }

    /// Uniform `f64` in [0, 1) from the top 53 bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fisher–Yates shuffle: for i = len−1 down to 1, swap item i with item `below(i + 1)`.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs for seed 0 (reference implementation by S. Vigna).
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn xoshiro256starstar_published_reference_outputs() {
        // State {1, 2, 3, 4}: the first ten outputs of the reference xoshiro256** (Blackman &
        // Vigna's xoshiro256starstar.c), as the rand_xoshiro crate's `reference` test pins them.
        let mut bytes = [0u8; 32];
        for (i, w) in [1u64, 2, 3, 4].iter().enumerate() {
            bytes[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
        }
        let mut r = Xoshiro256::from_seed_bytes(bytes);
        let expected: [u64; 10] = [
            11520,
            0,
            1509978240,
            1215971899390074240,
            1216172134540287360,
            607988272756665600,
            16172922978634559625,
            8476171486693032832,
            10595114339597558777,
            2904607092377533576,
        ];
        for e in expected {
            assert_eq!(r.next_u64(), e);
        }
    }

    #[test]
    fn below_stays_in_range_and_f64_in_unit_interval() {
        let mut r = Xoshiro256::seed_from_u64(7);
        for n in 1..50u64 {
            assert!(r.below(n) < n);
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
    }
}
