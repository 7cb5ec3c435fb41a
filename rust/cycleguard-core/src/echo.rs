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

use std::collections::HashSet;

/// Words of at least this many bytes count (shorter ones are too common to tell an echo).
const MIN_WORD: usize = 2;
/// A line with fewer words is never called an echo: too little to judge.
const MIN_WORDS: usize = 3;
/// At most this many bytes of the arguments are read for their words.
const MAX_INPUT: usize = 16 * 1024;

#[inline]
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The words of `text`; a backslash escape of JSON (`\n`, `\"`) separates words rather than
/// starting one, so that code in a JSON string splits where its lines do.
fn words(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < text.len() {
            if text[i] == b'\\' {
                i += 2;
                continue;
            }
            if !is_word(text[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < text.len() && is_word(text[i]) {
                i += 1;
            }
            if i - start >= MIN_WORD {
                return Some(&text[start..i]);
            }
        }
        None
    })
}

/// Whether a line points into the line above (`    ^`, `~~~^~~~`): no letter or digit, and a
/// caret or tilde.
fn is_pointer(line: &[u8]) -> bool {
    line.iter().any(|&b| b == b'^' || b == b'~') && !line.iter().any(|&b| b.is_ascii_alphanumeric())
}

/// `masked` without the lines that quote `input` (the canonical arguments), or `None` when
/// no line does (the caller then keeps what it had, byte for byte).
pub fn without_echoes(masked: &[u8], input: &[u8]) -> Option<Vec<u8>> {
    let input = &input[..input.len().min(MAX_INPUT)];
    let known: HashSet<&[u8]> = words(input).collect();
    if known.is_empty() {
        return None;
    }
    let mut kept: Vec<u8> = Vec::with_capacity(masked.len());
    let mut dropped = false;
    for line in masked.split_inclusive(|&b| b == b'\n') {
        let (mut total, mut quoted) = (0usize, 0usize);
        for w in words(line) {
            total += 1;
            quoted += known.contains(w) as usize;
        }
        let echo = (total >= MIN_WORDS && 4 * quoted >= 3 * total) || is_pointer(line);
        if echo {
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

    #[test]
    fn short_lines_and_empty_arguments_are_left_alone() {
        assert_eq!(without_echoes(b"a.py b.py", br#"{"a":"a.py b.py"}"#), None);
        assert_eq!(without_echoes(b"SELECT x FROM y", b"{}"), None);
    }
}
