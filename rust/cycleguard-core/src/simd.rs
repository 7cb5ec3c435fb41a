//! Byte classes sixteen at a time with SSE2, the x86-64 baseline (every x86-64 CPU has it,
//! so no detection at run time): the masking's candidate scan reads most of a large text, and
//! one 16-byte comparison does what two words of `crate::swar` do.
//!
//! Each function returns a bit mask: bit `k` is set when byte `i + k` is in the class. The
//! sixteen bytes are read with one unaligned load from a bounds-checked 16-byte slice.
//!
//! Soundness of the `unsafe` blocks: calling an SSE2 intrinsic is only unsafe because the
//! CPU might lack SSE2. Everything here is compiled only where `target_feature = "sse2"` is
//! enabled for the whole build (every x86-64 target enables it), so the CPU has it; and the
//! intrinsics used touch no memory (values in registers only), except the one load, whose
//! own comment says why it stays in bounds. Other builds
//! have no such module; their callers use `crate::swar` alone.

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8, _mm_sub_epi8,
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
        let sixteen: &[u8] = &t[i..i + 16]; // (bounds-checked: panics past the end)
                                            // SAFETY: `sixteen` is 16 readable bytes, all an unaligned load reads (`loadu` has no
                                            // alignment requirement); SSE2 is enabled for this build (module doc).
        unsafe {
            let bytes = _mm_loadu_si128(sixteen.as_ptr() as *const __m128i);
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

    /// Bytes equal to `byte`.
    #[inline(always)]
    pub fn equal(&self, byte: u8) -> u32 {
        // SAFETY: SSE2 is enabled for this build and these touch no memory (module doc).
        Self::mask(unsafe { _mm_cmpeq_epi8(self.bytes, _mm_set1_epi8(byte as i8)) })
    }

    /// `[a-fA-F]`.
    #[inline(always)]
    pub fn hex_letters(&self) -> u32 {
        Self::mask(Self::within(self.folded, b'a', b'f'))
    }

    /// `[0-9]`.
    #[inline(always)]
    pub fn digits(&self) -> u32 {
        Self::mask(Self::within(self.bytes, b'0', b'9'))
    }

    /// What a JSON string escapes: control characters, `"` and `\\`.
    #[inline(always)]
    pub fn escapes(&self) -> u32 {
        let control = Self::within(self.bytes, 0, 0x1f);
        // SAFETY: SSE2 is enabled for this build and these touch no memory (module doc).
        let marks = unsafe {
            _mm_or_si128(
                _mm_cmpeq_epi8(self.bytes, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(self.bytes, _mm_set1_epi8(b'\\' as i8)),
            )
        };
        // SAFETY: as above.
        Self::mask(unsafe { _mm_or_si128(control, marks) })
    }

    /// `[0-9A-Za-z]`.
    #[inline(always)]
    pub fn alphanumeric(&self) -> u32 {
        let digits = Self::within(self.bytes, b'0', b'9');
        let letters = Self::within(self.folded, b'a', b'z');
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

/// The first index at or after `from` whose byte is in `class` (sixteen bytes at a time),
/// or `t.len()`. A text of 16 bytes or more ends with one load of its last sixteen bytes,
/// overlapping what was read, its bits below `i` shifted out: a fixed cost where a word and
/// then byte loop took a varying number of steps (and the branch predictor's misses with
/// them). A shorter text is read as `swar::find` reads it (`flags`: the class on words).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn find16(
    t: &[u8],
    from: usize,
    class: impl Fn(&Chunk) -> u32,
    flags: impl Fn(u64) -> u64,
) -> usize {
    let mut i = from;
    while i + 16 <= t.len() {
        let found = class(&Chunk::at(t, i));
        if found != 0 {
            return i + found.trailing_zeros() as usize;
        }
        i += 16;
    }
    if i >= t.len() {
        return t.len();
    }
    if t.len() < 16 {
        return crate::swar::find(t, i, flags);
    }
    // `t.len() - 16 < i < t.len()`: the shift is 1..=15 and drops the bytes before `i`
    let last = t.len() - 16;
    let found = class(&Chunk::at(t, last)) >> (i - last);
    if found != 0 {
        i + found.trailing_zeros() as usize
    } else {
        t.len()
    }
}

#[cfg(test)]
fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

/// What a JSON string escapes, byte by byte (the reference of the tests).
#[cfg(test)]
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

#[inline(always)]
fn escaped_flags(x: u64) -> u64 {
    crate::swar::below(x, 0x20)
        | crate::swar::equal(x, b'"' as u64)
        | crate::swar::equal(x, b'\\' as u64)
}

/// The first `byte` (ASCII: the word-at-a-time test is exact below 128) at or after `from`,
/// or `t.len()`.
#[inline(always)]
pub fn find_byte(t: &[u8], from: usize, byte: u8) -> usize {
    debug_assert!(byte < 128);
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return find16(
        t,
        from,
        |c| c.equal(byte),
        |x| crate::swar::equal(x, byte as u64),
    );
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    return crate::swar::find(t, from, |x| crate::swar::equal(x, byte as u64));
}

/// The first ASCII digit at or after `from`, or `t.len()`.
#[inline(always)]
pub fn find_digit(t: &[u8], from: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return find16(t, from, Chunk::digits, crate::swar::digits);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    return crate::swar::find(t, from, crate::swar::digits);
}

/// The first byte a JSON string escapes at or after `from` (a control character, `"`, `\\`),
/// or `t.len()`.
#[inline(always)]
pub fn find_escape(t: &[u8], from: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return find16(t, from, Chunk::escapes, escaped_flags);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    return crate::swar::find(t, from, escaped_flags);
}

#[cfg(test)]
mod find_tests {
    use super::*;

    #[test]
    fn the_finders_find_the_first_member_from_any_start() {
        let mut y: u64 = 0x2545_F491_4F6C_DD1D;
        let alphabet = b"ab 09\"\\\n\x1f\x7f\x80\xff";
        for _ in 0..20_000 {
            let n = (crate::testing::xorshift(&mut y) % 70) as usize;
            let t: Vec<u8> = (0..n)
                .map(|_| {
                    let y = crate::testing::xorshift(&mut y);
                    // mostly letters, so the members are sparse
                    if y.is_multiple_of(5) {
                        alphabet[((y >> 8) % alphabet.len() as u64) as usize]
                    } else {
                        b'a' + (y % 26) as u8
                    }
                })
                .collect();
            for from in 0..=n {
                let naive = |class: fn(u8) -> bool| (from..n).find(|&i| class(t[i])).unwrap_or(n);
                assert_eq!(find_digit(&t, from), naive(is_digit));
                assert_eq!(find_escape(&t, from), naive(escaped));
                assert_eq!(find_byte(&t, from, b'\n'), naive(|b| b == b'\n'));
                assert_eq!(find_byte(&t, from, b'"'), naive(|b| b == b'"'));
            }
        }
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
