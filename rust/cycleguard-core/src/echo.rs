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

/// Whether `line` is an echo when `quoted` says which word hashes occur in the arguments: a
/// pointer, or at least three words, three quarters of them quoted.
fn is_echo(line: &[u8], quoted: impl Fn(u64) -> bool) -> bool {
    if is_pointer(line) {
        return true;
    }
    let (mut total, mut hits) = (0, 0);
    each_word(line, |h| {
        total += 1;
        hits += quoted(h) as usize;
    });
    total >= MIN_WORDS && 4 * hits >= 3 * total
}

/// `masked` without the lines that quote `input` (the canonical arguments), or `None` when
/// no line does (the caller then keeps what it had, byte for byte).
///
/// Cost: the arguments' words are hashed once (up to 4 KiB) into a bit filter, and each line
/// of the output is first judged by that filter, which can only say too much: a line it does
/// not call an echo is none, and most failures quote nothing, so they stop there. Only the
/// lines it calls echoes are checked exactly, against the sorted hashes of the arguments'
/// words. Only failed calls pay it.
pub fn without_echoes(masked: &[u8], input: &[u8]) -> Option<Vec<u8>> {
    let input = &input[..input.len().min(MAX_INPUT)];
    // one bit per argument word in 4,096: 4 KiB of arguments hold some 700 words, which
    // leave five bits in six clear (1,024 bits were half full and let every other line by)
    let mut filter = [0u64; 64];
    each_word(input, |h| {
        filter[(h >> 58) as usize] |= 1 << ((h >> 52) & 63)
    });
    let maybe = |h: u64| filter[(h >> 58) as usize] & (1 << ((h >> 52) & 63)) != 0;
    // the first line that may be an echo, judged by the filter
    let skipped = masked
        .split_inclusive(|&b| b == b'\n')
        .position(|line| is_echo(line, maybe))?;
    // exactly: the arguments' words, sorted
    let mut table: Vec<u64> = Vec::new();
    each_word(input, |h| table.push(h));
    table.sort_unstable();
    table.dedup();
    let quoted = |h: u64| table.binary_search(&h).is_ok();
    let mut kept: Vec<u8> = Vec::with_capacity(masked.len());
    let mut dropped = false;
    for (index, line) in masked.split_inclusive(|&b| b == b'\n').enumerate() {
        if index >= skipped && is_echo(line, quoted) {
            dropped = true;
        } else {
            kept.extend_from_slice(line);
        }
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

    /// The rule read plainly: a set of the arguments' words, each line judged against it.
    fn reference(masked: &[u8], input: &[u8]) -> Option<Vec<u8>> {
        let mut words = std::collections::HashSet::new();
        each_word(&input[..input.len().min(MAX_INPUT)], |h| {
            words.insert(h);
        });
        let mut kept = Vec::new();
        let mut dropped = false;
        for line in masked.split_inclusive(|&b| b == b'\n') {
            let mut hashes = Vec::new();
            each_word(line, |h| hashes.push(h));
            let hits = hashes.iter().filter(|h| words.contains(h)).count();
            if is_pointer(line) || (hashes.len() >= MIN_WORDS && 4 * hits >= 3 * hashes.len()) {
                dropped = true;
            } else {
                kept.extend_from_slice(line);
            }
        }
        dropped.then_some(kept)
    }

    #[test]
    fn the_filtered_search_drops_exactly_the_lines_the_plain_rule_drops() {
        let vocabulary: [&[u8]; 12] = [
            b"select", b"from", b"users", b"where", b"id", b"x", b"ERROR", b"line", b"^", b"~~^",
            b"\\n", b"col_a",
        ];
        use crate::testing::xorshift as next;
        let text = |y: &mut u64, words: u64| {
            let mut out = Vec::new();
            for _ in 0..words {
                let r = next(y);
                out.extend_from_slice(vocabulary[(r % 12) as usize]);
                out.push(if r.is_multiple_of(7) { b'\n' } else { b' ' });
            }
            out
        };
        let mut y: u64 = 0x1234_5678_9ABC_DEF1;
        for _ in 0..50_000 {
            let n = next(&mut y) % 12;
            let input = text(&mut y, n);
            let n = next(&mut y) % 30;
            let masked = text(&mut y, n);
            assert_eq!(
                without_echoes(&masked, &input),
                reference(&masked, &input),
                "{:?} / {:?}",
                String::from_utf8_lossy(&masked),
                String::from_utf8_lossy(&input)
            );
        }
    }

    #[test]
    fn short_lines_and_empty_arguments_are_left_alone() {
        assert_eq!(without_echoes(b"a.py b.py", br#"{"a":"a.py b.py"}"#), None);
        assert_eq!(without_echoes(b"SELECT x FROM y", b"{}"), None);
    }
}
