//! The lines of a failure's output that quote the call's own input.
//!
//! Many tools repeat what they were given when they fail: PostgreSQL prints `LINE 1: <the
//! query>` and a caret under the bad column, IPython prints `----> 3 <the code line>`, a shell
//! echoes the command. When the agent rewrites its input and hits the same error, those lines
//! change every time and hide that the error did not: the message is the same wall. This
//! module finds them, harness-agnostically, by the words they share with the arguments: a line
//! of at least three words, three quarters of which occur in the arguments, is an echo; a line
//! with no letter or digit but a caret (`^`, `~`) is a pointer into an echo. What remains is the
//! error as the tool states it.

use std::hash::Hasher;

use crate::fasthash::FxHasher;

/// Words of at least this many bytes count (shorter ones are too common to tell an echo).
const MIN_WORD: usize = 2;
/// A line with fewer words is never called an echo: too little to judge.
const MIN_WORDS: usize = 3;
/// At most this many bytes of the arguments are read for their words: what tools quote back
/// is a line or two of what they were given, and every failed call pays for the reading.
const MAX_INPUT: usize = 4 * 1024;

/// Which bytes make words: ASCII letters, digits, `_`, and every byte of a non-ASCII character.
const WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80;
        b += 1;
    }
    table
};

#[inline]
fn is_word(b: u8) -> bool {
    WORD[b as usize]
}

/// A word's hash: the project's Fx hash (eight bytes a step, most words take one); enough to
/// tell words apart within one output and its arguments.
#[inline]
fn word_hash(word: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(word);
    h.finish()
}

/// Calls `f` with the hash of each word of `text`; a backslash escape of JSON (`\n`, `\"`)
/// separates words rather than starting one, so that code in a JSON string splits where its
/// lines do.
fn each_word(text: &[u8], mut f: impl FnMut(u64)) {
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b == b'\\' {
            i += 2;
            continue;
        }
        if !is_word(b) {
            i += 1;
            continue;
        }
        let start = i;
        while i < text.len() && is_word(text[i]) {
            i += 1;
        }
        if i - start >= MIN_WORD {
            f(word_hash(&text[start..i]));
        }
    }
}

/// Whether a line points into the line above (`    ^`, `~~~^~~~`): no letter or digit, and a
/// caret or tilde.
fn is_pointer(line: &[u8]) -> bool {
    line.iter().any(|&b| b == b'^' || b == b'~') && !line.iter().any(|&b| b.is_ascii_alphanumeric())
}

/// `masked` without the lines that quote `input` (the canonical arguments), or `None` when
/// no line does (the caller then keeps what it had, byte for byte).
///
/// Cost: the output's words are hashed once, and the arguments are scanned once (up to 4 KiB),
/// each of their words looked up among the output's (a bit filter, then a binary search in a
/// sorted table): no set of the arguments' words is built. Measured on 2026-12-03: about
/// 20 µs for a 2 KiB output and 4 KiB of arguments, under 1 µs on a failed call with a few
/// hundred bytes of each; only failed calls pay it.
pub fn without_echoes(masked: &[u8], input: &[u8]) -> Option<Vec<u8>> {
    // the output's lines, with the hashes of their words
    let mut hashes: Vec<u64> = Vec::new();
    let mut lines: Vec<(usize, usize, bool)> = Vec::new(); // (end of line, end of its words, pointer)
    let mut candidates = false;
    let mut at = 0;
    for line in masked.split_inclusive(|&b| b == b'\n') {
        at += line.len();
        let first = hashes.len();
        each_word(line, |h| hashes.push(h));
        let pointer = is_pointer(line);
        candidates |= pointer || hashes.len() - first >= MIN_WORDS;
        lines.push((at, hashes.len(), pointer));
    }
    if !candidates {
        return None;
    }
    let mut table: Vec<u64> = hashes.clone();
    table.sort_unstable();
    table.dedup();
    // one bit per output word in 1,024: most words of the arguments are not in the output
    // and stop at the filter, before the search
    let mut filter = [0u64; 16];
    for &h in &table {
        filter[(h >> 60) as usize] |= 1 << ((h >> 54) & 63);
    }
    let mut quoted = vec![false; table.len()];
    each_word(&input[..input.len().min(MAX_INPUT)], |h| {
        if filter[(h >> 60) as usize] & (1 << ((h >> 54) & 63)) != 0 {
            if let Ok(i) = table.binary_search(&h) {
                quoted[i] = true;
            }
        }
    });
    let in_input = |h: &u64| table.binary_search(h).is_ok_and(|i| quoted[i]);
    let mut kept: Vec<u8> = Vec::with_capacity(masked.len());
    let mut dropped = false;
    let (mut start, mut first) = (0, 0);
    for &(end, words_end, pointer) in &lines {
        let words = &hashes[first..words_end];
        let total = words.len();
        let echo = pointer
            || (total >= MIN_WORDS
                && 4 * words.iter().filter(|h| in_input(h)).count() >= 3 * total);
        if echo {
            dropped = true;
        } else {
            kept.extend_from_slice(&masked[start..end]);
        }
        (start, first) = (end, words_end);
    }
    dropped.then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_quoted_back_by_the_database_is_dropped_and_the_message_kept() {
        let input = br#"{"sql":"SELECT utm_source, AVG(duration) FROM web_sessions GROUP BY 1"}"#;
        let out = b"ERROR:  column \"duration\" does not exist\nLINE #: SELECT utm_source, AVG(duration) FROM web_sessions GR...\n              ^\nHINT:  Perhaps you meant duration_ms.";
        let kept = without_echoes(out, input).unwrap();
        assert_eq!(
            kept,
            b"ERROR:  column \"duration\" does not exist\nHINT:  Perhaps you meant duration_ms."
                .to_vec()
        );
    }

    #[test]
    fn code_lines_of_a_json_string_split_at_their_escaped_newlines() {
        let input =
            br#"{"code":"import pandas as pd\ndf = pd.read_csv(path)\ndf.groupby(key).mean()"}"#;
        let out = b"KeyError                 Traceback (most recent call last)\n----> 3 df.groupby(key).mean()\nKeyError: 'region'";
        let kept = without_echoes(out, input).unwrap();
        assert_eq!(
            kept,
            b"KeyError                 Traceback (most recent call last)\nKeyError: 'region'"
                .to_vec()
        );
    }

    #[test]
    fn an_error_naming_one_argument_is_not_an_echo() {
        let input = br#"{"command":"frobnicate --all"}"#;
        assert_eq!(
            without_echoes(b"bash: frobnicate: command not found", input),
            None
        );
    }

    #[test]
    fn short_lines_and_empty_arguments_are_left_alone() {
        assert_eq!(without_echoes(b"a.py b.py", br#"{"a":"a.py b.py"}"#), None);
        assert_eq!(without_echoes(b"SELECT x FROM y", b"{}"), None);
    }
}
