//! The text of a model turn as `text_loop` compares it (docs/detection.md, "Dimensions"): the
//! masked text in lower case, split into words at everything that is neither a word character
//! nor `#`; the hash of the words joined by single spaces, and the bottom-k sketch of the word
//! shingles. ASCII only (then `\w` is `[A-Za-z0-9_]` and lower case is ASCII's); the same
//! arithmetic as `otel_cycleguard.detect.dimensions.shingle_sketch`.

use xxhash_rust::xxh3::xxh3_64;

/// Mixes word hashes by position (the golden ratio's odd 64-bit constant).
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// Only the first this many words are shingled (the exact hash covers them all).
pub const MAX_SKETCH_WORDS: usize = 400;

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'#'
}

/// The words of masked ASCII text, lower-cased.
pub fn words(masked: &[u8]) -> Vec<Vec<u8>> {
    masked
        .split(|&b| !is_word(b))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_lowercase())
        .collect()
}

fn combine(hashes: &[u64]) -> u64 {
    hashes
        .iter()
        .fold(0u64, |value, &h| value.wrapping_mul(MIX).wrapping_add(h))
}

/// (hash of the words joined by spaces, the `k` smallest distinct shingle hashes ascending),
/// or `None` when the text has no word.
pub fn digest(masked: &[u8], shingle: usize, k: usize) -> Option<(u64, Vec<u64>)> {
    digest_words(&words(masked), shingle, k)
}

/// The words of masked text that is not ASCII, lower-cased by Python already: split at
/// every run of characters that are neither a word character (Python's `\w`) nor `#`, each
/// word as `encode("utf-8", "replace")` gives it.
pub fn unicode_words(lowered: &str) -> Vec<Vec<u8>> {
    lowered
        .split(|c: char| !(crate::pystr::is_word(c) || c == '#'))
        .filter(|w| !w.is_empty())
        .map(|w| crate::pystr::encode_replace(w).into_owned())
        .collect()
}

/// [`digest`] of words.
pub fn digest_words(words: &[Vec<u8>], shingle: usize, k: usize) -> Option<(u64, Vec<u64>)> {
    if words.is_empty() {
        return None;
    }
    let exact = xxh3_64(&words.join(&b' '));
    let hashes: Vec<u64> = words
        .iter()
        .take(MAX_SKETCH_WORDS)
        .map(|w| xxh3_64(w))
        .collect();
    let mut grams: Vec<u64> = if hashes.len() <= shingle {
        vec![combine(&hashes)]
    } else {
        hashes.windows(shingle.max(1)).map(combine).collect()
    };
    grams.sort_unstable();
    grams.dedup();
    grams.truncate(k);
    Some((exact, grams))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_punctuation_and_keep_the_mask() {
        let w = words(b"Hello, World! # at_x--y");
        let w: Vec<&[u8]> = w.iter().map(|v| v.as_slice()).collect();
        assert_eq!(w, vec![&b"hello"[..], b"world", b"#", b"at_x", b"y"]);
    }

    #[test]
    fn no_words_no_digest() {
        assert!(digest(b" ,.; ", 3, 64).is_none());
        let (_, sketch) = digest(b"a b", 3, 64).unwrap();
        assert_eq!(sketch.len(), 1);
    }
}
