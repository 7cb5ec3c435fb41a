//! Byte classes sixteen at a time with SSE2, the x86-64 baseline (every x86-64 CPU has it,
//! so no detection at run time): the masking's candidate scan reads most of a large text, and
//! one 16-byte comparison does what two words of `crate::swar` do.
//!
//! Each function returns a bit mask: bit `k` is set when byte `i + k` is in the class. The
//! sixteen bytes are read as two little-endian words (bounds-checked slices, no raw pointer).
//!
//! Soundness of the `unsafe` blocks: calling an SSE2 intrinsic is only unsafe because the
//! CPU might lack SSE2. Everything here is compiled only where `target_feature = "sse2"` is
//! enabled for the whole build (every x86-64 target enables it), so the CPU has it; and none
//! of the intrinsics used reads or writes memory (values in registers only). Other builds
//! have no such module; their callers use `crate::swar` alone.

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    _mm_set_epi64x, _mm_sub_epi8,
};

/// Sixteen bytes of text starting at `i` (`i + 16 <= t.len()`), case-folded where it helps.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub struct Chunk {
    bytes: __m128i,
    /// Each byte `| 0x20`: an ASCII letter's two cases become the lower one (and only those:
    /// the other bytes that change are no letter).
    folded: __m128i,
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl Chunk {
    #[inline(always)]
    pub fn at(t: &[u8], i: usize) -> Self {
        let lo = crate::swar::word(t, i) as i64;
        let hi = crate::swar::word(t, i + 8) as i64;
        // SAFETY: SSE2 is enabled for this build and these touch no memory (module doc).
        unsafe {
            let bytes = _mm_set_epi64x(hi, lo);
            Chunk {
                bytes,
                folded: _mm_or_si128(bytes, _mm_set1_epi8(0x20)),
            }
        }
    }

    /// Bytes in `lo..=hi` (unsigned: `b - lo <= hi - lo` is `min(b - lo, hi - lo) == b - lo`).
    #[inline(always)]
    fn within(x: __m128i, lo: u8, hi: u8) -> __m128i {
        // SAFETY: SSE2 is enabled for this build and these touch no memory (module doc).
        unsafe {
            let shifted = _mm_sub_epi8(x, _mm_set1_epi8(lo as i8));
            _mm_cmpeq_epi8(
                _mm_min_epu8(shifted, _mm_set1_epi8((hi - lo) as i8)),
                shifted,
            )
        }
    }

    #[inline(always)]
    fn mask(x: __m128i) -> u32 {
        // SAFETY: SSE2 is enabled for this build and this touches no memory (module doc).
        unsafe { _mm_movemask_epi8(x) as u32 }
    }

    /// `[0-9a-fA-F]`.
    #[inline(always)]
    pub fn hex(&self) -> u32 {
        let digits = Self::within(self.bytes, b'0', b'9');
        let letters = Self::within(self.folded, b'a', b'f');
        // SAFETY: SSE2 is enabled for this build and this touches no memory (module doc).
        Self::mask(unsafe { _mm_or_si128(digits, letters) })
    }

    /// An ASCII letter in either case (`lower`: its lower-case form).
    #[inline(always)]
    pub fn either_case(&self, lower: u8) -> u32 {
        // SAFETY: SSE2 is enabled for this build and these touch no memory (module doc).
        Self::mask(unsafe { _mm_cmpeq_epi8(self.folded, _mm_set1_epi8(lower as i8)) })
    }
}

#[cfg(all(test, target_arch = "x86_64", target_feature = "sse2"))]
mod tests {
    use super::*;

    #[test]
    fn classes_are_exact_for_every_byte_in_every_position() {
        for b in 0u8..=255 {
            for pos in 0..16 {
                let mut bytes = [b'x'; 16];
                bytes[pos] = b;
                let c = Chunk::at(&bytes, 0);
                let at = |m: u32| m & (1 << pos) != 0;
                assert_eq!(at(c.hex()), b.is_ascii_hexdigit(), "{b}");
                assert_eq!(at(c.either_case(b'p')), b == b'p' || b == b'P', "{b}");
                assert_eq!(at(c.either_case(b'i')), b == b'i' || b == b'I', "{b}");
                // the other positions hold `x`: in neither class
                assert_eq!(c.hex() & !(1 << pos), 0);
                assert_eq!(c.either_case(b'p') & !(1 << pos), 0);
            }
        }
    }
}
