//! Python's `str` methods as the detector's Python code used them: `isspace` (and so
//! `strip`, `lstrip`, `split()` without a separator), which differ from Rust's
//! `char::is_whitespace` (Python counts the separators `\x1c`-`\x1f` as space, Unicode's
//! White_Space property does not). `tests/detect/test_core_normalize.py` compares
//! [`is_space`] with `str.isspace` over every code point.

/// Where a lone surrogate of a Python `str` (U+D800..U+DFFF, which Rust text cannot hold)
/// lives in the core's text: `SURROGATE_BASE + code`, in the last private use plane. Like a
/// surrogate, such a character is in none of Python's classes (space, word, digit), and its
/// code keeps two different surrogates different; hashing writes it as `?`, as
/// `encode("utf-8", "replace")` does.
pub const SURROGATE_BASE: u32 = 0x10_0000;

/// Whether a character stands for a lone surrogate (see [`SURROGATE_BASE`]).
#[inline]
pub fn is_surrogate_stand_in(c: char) -> bool {
    (SURROGATE_BASE + 0xD800..SURROGATE_BASE + 0xE000).contains(&(c as u32))
}

/// The UTF-8 bytes Python's `text.encode("utf-8", "replace")` gives (stand-ins as `?`).
pub fn encode_replace(s: &str) -> std::borrow::Cow<'_, [u8]> {
    if !s.chars().any(is_surrogate_stand_in) {
        return std::borrow::Cow::Borrowed(s.as_bytes());
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.push(if is_surrogate_stand_in(c) { '?' } else { c });
    }
    std::borrow::Cow::Owned(out.into_bytes())
}

/// `str.isspace` of one character: ASCII `\t\n\v\f\r`, `\x1c`-`\x1f` and space; beyond
/// ASCII the characters of bidirectional class WS, B or S or category Zs.
#[inline]
pub const fn is_space(c: char) -> bool {
    match c {
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | '\u{1c}'..='\u{1f}' | ' ' => true,
        c if (c as u32) < 0x85 => false,
        '\u{85}'
        | '\u{a0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200a}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202f}'
        | '\u{205f}'
        | '\u{3000}' => true,
        _ => false,
    }
}

fn in_ranges(table: &[(u32, u32)], c: char) -> Option<u32> {
    let c = c as u32;
    let i = table.partition_point(|&(_, hi)| hi < c);
    match table.get(i) {
        Some(&(lo, _)) if lo <= c => Some(lo),
        _ => None,
    }
}

/// `str.isalnum` of one character (beyond ASCII: the generated tables of `pyclass`).
#[inline]
pub fn is_alnum(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric()
    } else {
        in_ranges(crate::pyclass::ALNUM, c).is_some()
    }
}

/// A regular expression's `\w` on `str` (`isalnum` or `_`).
#[inline]
pub fn is_word(c: char) -> bool {
    c == '_' || is_alnum(c)
}

/// A regular expression's `\d` on `str` (`str.isdecimal`).
#[inline]
pub fn is_decimal(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_digit()
    } else {
        in_ranges(crate::pyclass::DECIMAL, c).is_some()
    }
}

/// The value of a decimal digit (`int()` reads any of them).
#[inline]
pub fn decimal_value(c: char) -> Option<u32> {
    if c.is_ascii_digit() {
        return Some(c as u32 - '0' as u32);
    }
    in_ranges(crate::pyclass::DECIMAL, c).map(|start| (c as u32 - start) % 10)
}

/// `int(text)` of a regular expression's `-?\d+` (any decimal digits), if it fits.
pub fn parse_decimal(text: &str) -> Option<i64> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let mut v: i64 = 0;
    for c in digits.chars() {
        v = v.checked_mul(10)?.checked_add(decimal_value(c)? as i64)?;
    }
    Some(if neg { -v } else { v })
}

/// `str.lstrip()`.
#[inline]
pub fn lstrip(s: &str) -> &str {
    s.trim_start_matches(is_space)
}

/// `str.rstrip()`.
#[inline]
pub fn rstrip(s: &str) -> &str {
    s.trim_end_matches(is_space)
}

/// `str.strip()`.
#[inline]
pub fn strip(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// `str.split()`: the words between runs of space.
#[inline]
pub fn split(s: &str) -> Words<'_> {
    if s.is_ascii() {
        Words::Ascii { s, at: 0 }
    } else {
        Words::Unicode(s.split(is_space as fn(char) -> bool).filter(non_empty))
    }
}

fn non_empty(w: &&str) -> bool {
    !w.is_empty()
}

/// Python's spaces among ASCII bytes (256 entries: a byte indexes it without a check).
const ASCII_SPACE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = is_space(b as u8 as char);
        b += 1;
    }
    table
};

/// `str.split(is_space)` without its empty pieces: the words of a text that is not ASCII.
type UnicodeWords<'a> =
    std::iter::Filter<std::str::Split<'a, fn(char) -> bool>, fn(&&'a str) -> bool>;

/// The words of [`split`]: read byte by byte when the text is ASCII (a command line almost
/// always is), else a character at a time.
pub enum Words<'a> {
    Ascii { s: &'a str, at: usize },
    Unicode(UnicodeWords<'a>),
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Words::Unicode(words) => words.next(),
            Words::Ascii { s, at } => {
                let text: &'a str = s;
                let rest = &text.as_bytes()[*at..];
                let start = rest
                    .iter()
                    .position(|&b| !ASCII_SPACE[b as usize])
                    .unwrap_or(rest.len());
                let len = rest[start..]
                    .iter()
                    .position(|&b| ASCII_SPACE[b as usize])
                    .unwrap_or(rest.len() - start);
                let from = *at + start;
                *at = from + len;
                (len > 0).then(|| &text[from..from + len])
            }
        }
    }
}

/// `str.split(None, 1)`: the first word and the rest after the space that follows it
/// (`rest` keeps its own leading and trailing space but the first run of separators).
pub fn split_once_ws(s: &str) -> Option<(&str, Option<&str>)> {
    let s = lstrip(s);
    if s.is_empty() {
        return None;
    }
    match s.char_indices().find(|&(_, c)| is_space(c)) {
        None => Some((s, None)),
        Some((i, _)) => {
            let rest = lstrip(&s[i..]);
            Some((&s[..i], if rest.is_empty() { None } else { Some(rest) }))
        }
    }
}

/// `s[:n]` in characters (Python slices count code points).
#[inline]
pub fn head_chars(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s; // n bytes hold at least n characters
    }
    if s.as_bytes()[..n].is_ascii() {
        // a byte a character: the first n bytes are the first n characters (tested a word at
        // a time, where walking n characters decodes each)
        return &s[..n];
    }
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `len(s)` in characters.
#[inline]
pub fn char_len(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_the_standard_split_on_python_spaces() {
        let cases = [
            "",
            "   ",
            "a",
            " a  b\tc\n",
            "x\u{a0}y\u{3000}z",
            "é è\u{2028}ü",
            "\u{1c}a\u{1f}b ",
            "ls -la /tmp",
            "naïve\u{85}café  ok",
        ];
        for text in cases {
            let plain: Vec<&str> = text.split(is_space).filter(|w| !w.is_empty()).collect();
            assert_eq!(split(text).collect::<Vec<_>>(), plain, "{text:?}");
        }
    }

    #[test]
    fn python_space_includes_the_information_separators() {
        assert!(is_space('\u{1c}') && is_space('\u{85}') && is_space('\u{3000}'));
        assert!(!is_space('\u{180e}') && !is_space('\u{200b}') && !is_space('x'));
        assert_eq!(
            split("\u{1f}a  b\u{a0}c ").collect::<Vec<_>>(),
            vec!["a", "b", "c"]
        );
        assert_eq!(strip("\u{1c} x \n"), "x");
    }

    #[test]
    fn split_once_is_split_none_1() {
        assert_eq!(split_once_ws("  cat  a b "), Some(("cat", Some("a b "))));
        assert_eq!(split_once_ws("cat"), Some(("cat", None)));
        assert_eq!(split_once_ws("  "), None);
    }

    #[test]
    fn classes_beyond_ascii_are_pythons() {
        assert!(is_word('é') && is_word('_') && !is_word('-') && !is_word('\u{93e}'));
        assert!(is_decimal('\u{663}') && !is_decimal('\u{b2}'));
        assert_eq!(parse_decimal("-\u{661}\u{662}"), Some(-12));
    }

    #[test]
    fn head_counts_characters() {
        assert_eq!(head_chars("ééé", 2), "éé");
        assert_eq!(head_chars("abc", 5), "abc");
        assert_eq!(head_chars("abcé", 3), "abc");
        assert_eq!(head_chars("abcé", 4), "abcé");
        let mut y: u64 = 0xC0FF_EE00_1234_5678;
        let pieces = ["a", "b", " ", "\n", "é", "€", "😀"];
        for _ in 0..20_000 {
            let len = (crate::testing::xorshift(&mut y) % 40) as usize;
            let s: String = (0..len)
                .map(|_| {
                    let y = crate::testing::xorshift(&mut y);
                    // mostly ASCII, as outputs are: the fast path and its edges
                    if y.is_multiple_of(8) {
                        pieces[((y >> 8) % pieces.len() as u64) as usize]
                    } else {
                        "x"
                    }
                })
                .collect();
            let n = (crate::testing::xorshift(&mut y) % 45) as usize;
            let reference: String = s.chars().take(n).collect();
            assert_eq!(head_chars(&s, n), reference, "{s:?} {n}");
        }
    }
}
