//! Byte classes eight at a time (SIMD within a register): the scans of masking and of the
//! JSON writer skip the bytes that cannot start a match or need no escape a word at a time.
//!
//! Each function returns, for the eight bytes of `x` (little-endian: byte 0 is the first), the
//! byte's high bit set exactly when the byte is in the class. The arithmetic is the
//! "has between" bit trick: within each byte, `(127 + n) - (b & 127)` and `(b & 127) + (127 - m)`
//! stay in 0..=254, so nothing carries or borrows into the next byte, and the high bit of the
//! first says `b & 127 < n`, of the second `b & 127 > m`; `!x` keeps bytes below 128 only.

const L: u64 = 0x0101_0101_0101_0101;
const H: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = L * 127;

/// Bytes `b` with `m < b < n` (and `b < 128`). `m` in 0..=127, `n` in 0..=128.
#[inline(always)]
pub const fn between(x: u64, m: u64, n: u64) -> u64 {
    ((L * (127 + n)).wrapping_sub(x & LOW7)) & !x & ((x & LOW7) + L * (127 - m)) & H
}

/// Bytes `b < n` (and `b < 128`). `n` in 0..=128.
#[inline(always)]
pub const fn below(x: u64, n: u64) -> u64 {
    ((L * (127 + n)).wrapping_sub(x & LOW7)) & !x & H
}

/// Bytes equal to `c` (`c < 128`).
#[inline(always)]
pub const fn equal(x: u64, c: u64) -> u64 {
    // 0 <= c - 1 only for c >= 1; c = 0 is `below(x, 1)`
    if c == 0 {
        below(x, 1)
    } else {
        between(x, c - 1, c + 1)
    }
}

/// ASCII digits.
#[inline(always)]
pub const fn digits(x: u64) -> u64 {
    between(x, b'0' as u64 - 1, b'9' as u64 + 1)
}

/// Hex letters `a-f` and `A-F` (`x | 0x20` folds exactly `A-F` onto `a-f`, see `either_case`).
#[inline(always)]
pub const fn hex_letters(x: u64) -> u64 {
    between(x | (L * 0x20), b'a' as u64 - 1, b'f' as u64 + 1)
}

/// A letter in either case (`lower`: a lower-case ASCII letter; `x | 0x20` folds exactly the
/// two cases of a letter onto the lower one).
#[inline(always)]
pub const fn either_case(x: u64, lower: u8) -> u64 {
    equal(x | (L * 0x20), lower as u64)
}

/// `p` or `P`.
#[inline(always)]
pub const fn p_either(x: u64) -> u64 {
    equal(x | (L * 0x20), b'p' as u64)
}

#[inline(always)]
pub fn word(t: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&t[i..i + 8]);
    u64::from_le_bytes(b)
}

/// The first index at or after `from` whose byte is in the class (`flags` on words), or
/// `t.len()`. Words from `from` on; a text of eight bytes or more ends with its last word,
/// overlapping what was read, the bytes before the ones left shifted out (the classes are
/// exact per byte: nothing carries between bytes). A shorter text is read byte by byte: one
/// word built from fewer than eight bytes measured slower than the loop over them.
#[inline(always)]
pub fn find(t: &[u8], from: usize, flags: impl Fn(u64) -> u64) -> usize {
    let n = t.len();
    let mut i = from;
    while i + 8 <= n {
        let f = flags(word(t, i));
        if f != 0 {
            return i + (f.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    if i >= n {
        return n;
    }
    if n < 8 {
        while i < n && flags(u64::from(t[i])) & 0x80 == 0 {
            i += 1;
        }
        return i;
    }
    // `n - 8 < i < n`: the shift is 8..=56 bits
    let last = n - 8;
    let f = flags(word(t, last)) >> (8 * (i - last));
    if f != 0 {
        i + (f.trailing_zeros() / 8) as usize
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_exact_for_every_byte_in_every_position() {
        for b in 0u8..=255 {
            for pos in 0..8 {
                let mut bytes = [b'x'; 8];
                bytes[pos] = b;
                let x = u64::from_le_bytes(bytes);
                let at = |f: u64| f & (0x80u64 << (8 * pos)) != 0;
                assert_eq!(at(digits(x)), b.is_ascii_digit(), "{b}");
                assert_eq!(
                    at(hex_letters(x)),
                    b.is_ascii_hexdigit() && !b.is_ascii_digit(),
                    "{b}"
                );
                assert_eq!(at(p_either(x)), b == b'p' || b == b'P', "{b}");
                assert_eq!(at(below(x, 0x20)), b < 0x20, "{b}");
                assert_eq!(at(equal(x, b'"' as u64)), b == b'"', "{b}");
                assert_eq!(at(equal(x, 0)), b == 0, "{b}");
            }
        }
    }

    #[test]
    fn find_skips_to_the_first_member() {
        let t = b"abcdefghijklmnopq7rs";
        assert_eq!(find(t, 0, digits), 17);
        assert_eq!(find(t, 18, digits), t.len());
    }

    #[test]
    fn find_agrees_with_a_byte_loop_for_every_length_and_start() {
        let mut y: u64 = 0x9E37_79B9_7F4A_7C15;
        let alphabet = b"ab7\"\x00\x1f\x80\xffpP";
        for _ in 0..3_000 {
            let n = (crate::testing::xorshift(&mut y) % 30) as usize;
            let t: Vec<u8> = (0..n)
                .map(|_| {
                    let y = crate::testing::xorshift(&mut y);
                    alphabet[(y % alphabet.len() as u64) as usize]
                })
                .collect();
            for from in 0..=n + 1 {
                let naive = |class: fn(u8) -> bool| (from..n).find(|&i| class(t[i])).unwrap_or(n);
                assert_eq!(
                    find(&t, from, digits),
                    naive(|b| b.is_ascii_digit()),
                    "{t:?}"
                );
                assert_eq!(
                    find(&t, from, |x| below(x, 0x20)),
                    naive(|b| b < 0x20),
                    "{t:?}"
                );
                assert_eq!(find(&t, from, |x| equal(x, 0)), naive(|b| b == 0), "{t:?}");
                assert_eq!(find(&t, from, p_either), naive(|b| b == b'p' || b == b'P'));
            }
        }
    }
}
