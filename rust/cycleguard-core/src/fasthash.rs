//! The hash maps and sets of names the detector looks tool names up in, several times per
//! call: std's maps with a fast non-keyed hasher (the Fx hash of rustc) instead of SipHash.
//! The keys are configuration names (lower-cased tool names, categories), the look-ups a few
//! per call; nothing here needs a keyed hash's resistance to chosen collisions.

use std::hash::{BuildHasherDefault, Hasher};

/// `std::collections::HashMap` with [`FxHasher`] (`HashMap::default()` makes one).
pub type HashMap<K, V> = std::collections::HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// `std::collections::HashSet` with [`FxHasher`].
pub type HashSet<K> = std::collections::HashSet<K, BuildHasherDefault<FxHasher>>;

/// rustc's Fx hash: per word, rotate, xor, multiply.
#[derive(Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_holds_and_only_that() {
        let names: HashSet<String> = (0..500).map(|i| format!("tool_{i}")).collect();
        for i in 0..500 {
            assert!(names.contains(&format!("tool_{i}")));
            assert!(!names.contains(&format!("tool_{}", i + 500)));
        }
        assert!(!names.contains("tool_"));
        let mut m: HashMap<String, i64> = HashMap::default();
        m.insert("a".into(), 1);
        m.insert("a\0".into(), 2);
        assert_eq!(m.get("a"), Some(&1));
        assert_eq!(m.get("a\0"), Some(&2));
    }
}
