//! Masking of volatile content in ASCII text: the default patterns of
//! `otel_cycleguard.detect.normalize.DEFAULT_MASK_PATTERNS`, joined as one alternation
//! (`(?:p1)|(?:p2)|...`) and applied as Python's `re.sub("#", text)` would, in one pass over
//! the bytes.
//!
//! Python's engine tries the alternatives in order at each position and takes the first that
//! matches; each pattern below is written out as the deterministic parse its backtracking
//! reduces to (the reasoning is beside each one). Only ASCII text comes here: in ASCII `\d` is
//! `[0-9]`, `\w` is `[A-Za-z0-9_]` and `\s` is what `str.isspace` says (which includes
//! `\x1c`-`\x1f`). Non-ASCII text keeps Python's regular expressions (their Unicode classes
//! are the reference). Every access is bounds-checked through `at`, so no input can panic.

use crate::simd;
use crate::swar;

/// The byte at `i`, or 0 past the end (0 is in none of the classes below).
#[inline(always)]
fn at(t: &[u8], i: usize) -> u8 {
    t.get(i).copied().unwrap_or(0)
}

#[inline(always)]
pub fn is_digit(b: u8) -> bool {
    b.is_ascii_digit()
}

#[inline(always)]
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == PLACEHOLDER
}

#[inline(always)]
fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// `[0-9a-f]` (the lower-case hex class of the hex-id pattern).
#[inline(always)]
fn is_lhex(b: u8) -> bool {
    is_digit(b) || (b'a'..=b'f').contains(&b)
}

/// Python's `\s` on ASCII (`str.isspace`).
#[inline(always)]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f)
}

#[inline(always)]
fn run(t: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    t.get(from..)
        .map_or(0, |rest| rest.iter().take_while(|&&b| class(b)).count())
}

#[inline(always)]
fn two_digits(t: &[u8], i: usize) -> bool {
    is_digit(at(t, i)) && is_digit(at(t, i + 1))
}

/// `\b` after a match that ends with a word character: the next byte is not one.
#[inline(always)]
fn word_end(t: &[u8], i: usize) -> bool {
    i >= t.len() || !is_word(t[i])
}

/// `(?:[.,]\d+)?` at `k`, greedy (nothing after it can fail): the new end.
#[inline(always)]
fn fraction(t: &[u8], k: usize) -> usize {
    if matches!(at(t, k), b'.' | b',') && is_digit(at(t, k + 1)) {
        k + 1 + run(t, k + 1, is_digit)
    } else {
        k
    }
}

/// `\d{4}[-/]\d\d[-/]\d\d(?:[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)?`.
/// The optional tail ends the pattern, so each optional part is taken when it matches
/// (greedy, no later element to backtrack for); in the zone `:?` is tried with the colon
/// first, then without (where the colon would then have to be a digit, which fails).
fn iso_timestamp(t: &[u8], i: usize) -> Option<usize> {
    if !(two_digits(t, i) && two_digits(t, i + 2)) {
        return None;
    }
    let sep = |b: u8| b == b'-' || b == b'/';
    if !(sep(at(t, i + 4)) && two_digits(t, i + 5) && sep(at(t, i + 7)) && two_digits(t, i + 8)) {
        return None;
    }
    let j = i + 10;
    if !(matches!(at(t, j), b'T' | b' ')
        && two_digits(t, j + 1)
        && at(t, j + 3) == b':'
        && two_digits(t, j + 4))
    {
        return Some(j);
    }
    let mut k = j + 6;
    if at(t, k) == b':' && two_digits(t, k + 1) {
        k += 3;
    }
    k = fraction(t, k);
    match at(t, k) {
        b'Z' => k += 1,
        b'+' | b'-' if two_digits(t, k + 1) => {
            let m = k + 3;
            if at(t, m) == b':' && two_digits(t, m + 1) {
                k = m + 3;
            } else if two_digits(t, m) {
                k = m + 2;
            }
        }
        _ => {}
    }
    Some(k)
}

/// `\d\d:\d\d:\d\d(?:[.,]\d+)?`
fn clock_time(t: &[u8], i: usize) -> Option<usize> {
    if two_digits(t, i)
        && at(t, i + 2) == b':'
        && two_digits(t, i + 3)
        && at(t, i + 5) == b':'
        && two_digits(t, i + 6)
    {
        Some(fraction(t, i + 8))
    } else {
        None
    }
}

/// `[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`
fn uuid(t: &[u8], i: usize) -> Option<usize> {
    let mut k = i;
    for (n, group) in [8usize, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            if at(t, k) != b'-' {
                return None;
            }
            k += 1;
        }
        if run(t, k, is_hex) < group {
            return None;
        }
        k += group;
    }
    Some(k)
}

/// `0x[0-9a-fA-F]+` (greedy, ends the pattern).
fn hex_literal(t: &[u8], i: usize) -> Option<usize> {
    if at(t, i) == b'0' && at(t, i + 1) == b'x' {
        let n = run(t, i + 2, is_hex);
        if n > 0 {
            return Some(i + 2 + n);
        }
    }
    None
}

/// `(?<![^\W_])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b`: the run starts a word or
/// follows an underscore (`req_9f1c2a7b3e4d`); the greedy run is the whole maximal run of
/// `[0-9a-f]`; a shorter one would end before a `[0-9a-f]` byte, a word character, so the
/// closing `\b` holds only after the maximal run. The look-aheads ask that run for a digit
/// and a letter.
fn hex_id(t: &[u8], i: usize) -> Option<usize> {
    if i > 0 && is_word(t[i - 1]) && t[i - 1] != b'_' {
        return None;
    }
    let n = run(t, i, is_lhex);
    if n < 7 || !word_end(t, i + n) {
        return None;
    }
    let id = &t[i..i + n];
    if id.iter().any(|&b| is_digit(b)) && id.iter().any(|&b| b.is_ascii_lowercase()) {
        Some(i + n)
    } else {
        None
    }
}

/// The duration units in the pattern's order (`µs` is not ASCII, so never here).
const UNITS: [&[u8]; 10] = [
    b"ms", b"us", b"ns", b"s", b"sec", b"secs", b"seconds", b"m", b"min", b"h",
];

/// `\d+(?:\.\d+)?\s?(?:ms|us|µs|ns|s|sec|secs|seconds|m|min|h)(?:\b|(?=\d))`. Backtracking
/// any of the greedy parts leaves a digit (or the `.`, or the space) where the next part would
/// need a unit letter, so only the greedy parse can match; the units are tried in order, each
/// with its `\b` or a digit after it (each part of `1m11s` is a duration).
fn duration(t: &[u8], i: usize) -> Option<usize> {
    let mut k = i + run(t, i, is_digit);
    if at(t, k) == b'.' && is_digit(at(t, k + 1)) {
        k += 1 + run(t, k + 1, is_digit);
    }
    if is_space(at(t, k)) {
        k += 1;
    }
    let rest = t.get(k..)?;
    if !matches!(rest.first(), Some(b'm' | b'u' | b'n' | b's' | b'h')) {
        return None; // (what every unit starts with)
    }
    UNITS
        .iter()
        .find(|unit| {
            let end = k + unit.len();
            rest.starts_with(unit) && (word_end(t, end) || is_digit(at(t, end)))
        })
        .map(|unit| k + unit.len())
}

/// `(?i:pid)[=: ]\s*\d+`
fn pid(t: &[u8], i: usize) -> Option<usize> {
    if !(at(t, i).eq_ignore_ascii_case(&b'p')
        && at(t, i + 1).eq_ignore_ascii_case(&b'i')
        && at(t, i + 2).eq_ignore_ascii_case(&b'd')
        && matches!(at(t, i + 3), b'=' | b':' | b' '))
    {
        return None;
    }
    let k = i + 4 + run(t, i + 4, is_space);
    let n = run(t, k, is_digit);
    if n > 0 {
        Some(k + n)
    } else {
        None
    }
}

/// How many digits run from `i` (`run(t, i, is_digit)`): sixteen bytes at a time where SSE2
/// is there, so counting a number's digits costs no branch on each of them (whose exit, at the
/// number's length, is mispredicted as often as lengths differ).
#[inline(always)]
fn digit_count(t: &[u8], i: usize) -> usize {
    #[allow(unused_mut)]
    let mut k = i;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while k + 16 <= t.len() {
        // the mask has 16 bits: its complement has bit 16 set, so at most 16 come out
        let n = (!simd::Chunk::at(t, k).digits()).trailing_zeros() as usize;
        if n < 16 {
            return k + n - i;
        }
        k += 16;
    }
    k - i + run(t, k, is_digit)
}

/// `\d+\.\d{2,}`
fn decimal(t: &[u8], i: usize) -> Option<usize> {
    let k = i + run(t, i, is_digit);
    if at(t, k) != b'.' {
        return None;
    }
    let n = run(t, k + 1, is_digit);
    if n >= 2 {
        Some(k + 1 + n)
    } else {
        None
    }
}

/// Stands for a letter-led match between the two passes: a word character (as Python's
/// placeholder `\u02b0` is) that no class of the digit-led pass contains. Never in ASCII text.
const PLACEHOLDER: u8 = 0x80;

/// The letter-led alternatives at `i` (a UUID or a hex id that starts with a letter, `pid N`).
#[inline]
pub fn letter_led(t: &[u8], i: usize) -> Option<usize> {
    let b = t[i];
    if b == b'p' || b == b'P' {
        return pid(t, i);
    }
    if !is_hex(b) || is_digit(b) {
        return None;
    }
    // (a UUID has its first dash 8 characters on: the cheap test first)
    let uuid_here = if at(t, i + 8) == b'-' {
        uuid(t, i)
    } else {
        None
    };
    uuid_here.or_else(|| if is_lhex(b) { hex_id(t, i) } else { None })
}

/// The digit-led alternatives at `i`, in the reference order.
///
/// Most digits start none of them (a short number in prose), so each alternative is tried
/// only where the run of digits at `i` and the byte after it allow a match; the condition
/// beside each is necessary for it (`next` is 0 past the end, in no class):
/// - ISO timestamp: exactly 4 digits, then `-` or `/`;
/// - clock time: exactly 2 digits, then `:`;
/// - UUID: 8 hex characters before its first `-`, so 8 digits or a hex letter next;
/// - hex literal: `0x`, a single digit then `x`;
/// - hex id: a run of `[0-9a-f]` with a letter in it, so `a`-`f` next;
/// - duration: a unit letter (`m`, `u`, `n`, `s`, `h`) next or after one space, or `.` next;
/// - four digits or more: matched by the digit run (`\d{4,}`) when nothing before did;
/// - decimal: `.` next.
#[inline]
pub fn digit_led(t: &[u8], i: usize) -> Option<usize> {
    let digits = digit_count(t, i);
    let next = at(t, i + digits);
    let tried = |possible: bool, alternative: fn(&[u8], usize) -> Option<usize>| {
        if possible {
            alternative(t, i)
        } else {
            None
        }
    };
    tried(digits == 4 && (next == b'-' || next == b'/'), iso_timestamp)
        .or_else(|| tried(digits == 2 && next == b':', clock_time))
        .or_else(|| tried(digits >= 8 || is_hex(next), uuid))
        .or_else(|| tried(digits == 1 && next == b'x', hex_literal))
        .or_else(|| tried((b'a'..=b'f').contains(&next), hex_id))
        .or_else(|| {
            let unit = |b: u8| matches!(b, b'm' | b'u' | b'n' | b's' | b'h');
            let after_space = is_space(next) && unit(at(t, i + digits + 1));
            tried(next == b'.' || unit(next) || after_space, duration)
        })
        .or_else(|| (digits >= 4).then_some(i + digits)) // (`\d{4,}`: the run counted above)
        .or_else(|| tried(next == b'.', decimal))
}

/// One `re.sub` pass: every match of `alternatives` (tried at each position `find` gives,
/// the next one that can start a match, from `from` on: the caller knows none starts before
/// it) replaced by `with`; `None` when nothing matched.
#[inline(always)]
pub fn replace_pass(
    t: &[u8],
    from: usize,
    find: impl Fn(&[u8], usize) -> usize,
    alternatives: impl Fn(&[u8], usize) -> Option<usize>,
    with: u8,
) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    replace_pass_into(t, from, find, alternatives, with, &mut out).then_some(out)
}

/// [`replace_pass`] into `out` (cleared first): whether anything matched (`out` is the
/// replaced text then, else empty).
#[inline(always)]
pub fn replace_pass_into(
    t: &[u8],
    from: usize,
    find: impl Fn(&[u8], usize) -> usize,
    alternatives: impl Fn(&[u8], usize) -> Option<usize>,
    with: u8,
    out: &mut Vec<u8>,
) -> bool {
    out.clear();
    let mut matched = false;
    let mut done = 0;
    let mut i = from;
    loop {
        i = find(t, i);
        if i >= t.len() {
            break;
        }
        if let Some(end) = alternatives(t, i) {
            if !matched {
                matched = true;
                out.reserve(t.len());
            }
            crate::copy::copy_run(out, &t[done..i]);
            out.push(with);
            done = end;
            i = end;
            continue;
        }
        i += 1;
    }
    if matched {
        out.extend_from_slice(&t[done..]);
    }
    matched
}

/// The next position at or after `i` that may lead a letter-led match. With SSE2 (x86-64),
/// sixteen bytes at a time and only where one can start: a hex letter that begins a run of 7
/// hex characters, or `pid` in any case (see [`letter_candidate`]); the last 31 bytes, and
/// every byte elsewhere, by [`may_lead_letter_flags`] (a superset: `letter_led` rejects the
/// rest).
#[inline(always)]
pub fn find_letter_lead(t: &[u8], i: usize) -> usize {
    #[allow(unused_mut)]
    let mut i = i;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while i + 32 <= t.len() {
        // bits 0..15: the sixteen bytes at i; 16..31 the ones after (runs look 6 bytes on)
        let (a, b) = (simd::Chunk::at(t, i), simd::Chunk::at(t, i + 16));
        let hex = a.hex() | (b.hex() << 16);
        let two = hex & (hex >> 1);
        let four = two & (two >> 2);
        let mut lead = four & (four >> 3) & a.hex_letters();
        let p = a.either_case(b'p');
        if p != 0 {
            let i_next = (a.either_case(b'i') | (b.either_case(b'i') << 16)) >> 1;
            let d_next = (a.either_case(b'd') | (b.either_case(b'd') << 16)) >> 2;
            lead |= p & i_next & d_next;
        }
        if lead != 0 {
            return i + lead.trailing_zeros() as usize;
        }
        i += 16;
    }
    swar::find(t, i, may_lead_letter_flags)
}

/// The letter-led pass's positions byte class by byte class (the reference of
/// [`find_letter_lead`] in the tests).
#[cfg(test)]
fn find_letter_lead_bytewise(t: &[u8], i: usize) -> usize {
    swar::find(t, i, may_lead_letter_flags)
}

/// Bytes that may lead a letter-led match, eight at a time: a hex letter, or `p` in either
/// case.
#[inline(always)]
pub fn may_lead_letter_flags(x: u64) -> u64 {
    swar::hex_letters(x) | swar::p_either(x)
}

/// `text` with the default volatile patterns replaced by `#`, exactly as
/// `otel_cycleguard.detect.normalize` has always masked ASCII text (the golden outputs hold
/// it): nothing when the text has no digit; else two passes, first the letter-led matches
/// (to a placeholder that is a word character, as the text it replaces), then the digit-led
/// ones over the result. This is the documented single alternation except where a letter-led
/// match lies inside what the alternation would match from an earlier digit (a UUID whose
/// last group starts with a letter: `1f54fe63-...-dfc63854eec1` leaves `#-e663-468d-82ad-#`),
/// and except an all-letter UUID (no digit: kept).
/// `None` when nothing matched (the caller keeps the text it has).
pub fn mask_ascii(t: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    mask_ascii_into(t, &mut out).then_some(out)
}

/// [`mask_ascii`] into `out` (cleared first): whether anything matched (`out` is the masked
/// text then, else empty).
pub fn mask_ascii_into(t: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    if simd::find_digit(t, 0) == t.len() {
        return false;
    }
    // tokens first (each has a digit), then temporary names, then the patterns over what is
    // left
    let tokens = mask_tokens(t);
    let after_tokens = tokens.as_deref().unwrap_or(t);
    let passes = mask_temp_names(after_tokens).or(tokens);
    let t = passes.as_deref().unwrap_or(t);
    // As the Python masker: the letter-led pass only where a match is possible at all (7 hex
    // characters in a row, for a UUID or a hex id, or `pid` in any case).
    let first = letter_candidate(t)
        .and_then(|from| replace_pass(t, from, find_letter_lead, letter_led, PLACEHOLDER));
    // The letter-led pass left a placeholder for each match (it returns nothing when none):
    // the digit-led pass keeps them all (it is in none of its classes).
    let lettered = first.is_some();
    let source = first.as_deref().unwrap_or(t);
    if !replace_pass_into(source, 0, simd::find_digit, digit_led, b'#', out) {
        match (first, passes) {
            (Some(first), _) => *out = first,
            (None, Some(passes)) => {
                *out = passes;
                return true;
            }
            (None, None) => return false,
        }
    }
    if lettered {
        for b in out.iter_mut() {
            if *b == PLACEHOLDER {
                *b = b'#';
            }
        }
    }
    true
}

/// A token is at least this many ASCII letters and digits in a row (bounded by other bytes)...
pub const TOKEN_MIN: usize = 16;
/// ...that change between a letter and a digit at least this many times: a request id
/// (`HZBYGNG0AT62833C89YSQ…` changes 20 times), a key, base64. A name with versions in it
/// changes fewer times (`Base64EncoderVariant2Test`: 4).
pub const TOKEN_FLIPS: usize = 6;

/// Where the first run of [`TOKEN_MIN`] letters and digits may start: a superset test (None
/// when there is none), sixteen bytes at a time where SSE2 is there, the run carried from
/// chunk to chunk.
fn token_candidate(t: &[u8]) -> Option<usize> {
    let mut run = 0usize; // letters and digits ending the previous chunk
    #[allow(unused_mut)]
    let mut i = 0;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while i + 16 <= t.len() {
        let m = crate::simd::Chunk::at(t, i).alphanumeric();
        let lead = (!m).trailing_zeros() as usize; // (16 when the chunk is all letters and digits)
        if run + lead >= TOKEN_MIN {
            return Some(i - run);
        }
        // the letters and digits that end this chunk (it is not all of them: that returned)
        run = ((!m & 0xFFFF) << 16).leading_zeros() as usize;
        i += 16;
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if i < t.len() && t.len() >= 16 {
        // the last bytes, fewer than sixteen, read as the end of the last sixteen: only a run
        // carried into them can still reach the length
        let left = t.len() - i;
        let m = crate::simd::Chunk::at(t, t.len() - 16).alphanumeric() >> (16 - left);
        let lead = ((!m).trailing_zeros() as usize).min(left);
        return (run + lead >= TOKEN_MIN).then(|| i - run);
    }
    while i < t.len() {
        if t[i].is_ascii_alphanumeric() {
            run += 1;
            if run >= TOKEN_MIN {
                return Some(i + 1 - run);
            }
        } else {
            run = 0;
        }
        i += 1;
    }
    None
}

/// `t` with every token (see [`TOKEN_MIN`], [`TOKEN_FLIPS`]) replaced by `#`, or None when
/// there is none: the pass before the patterns, as `normalize.mask_tokens` is.
pub fn mask_tokens(t: &[u8]) -> Option<Vec<u8>> {
    let mut i = token_candidate(t)?;
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    while i < t.len() {
        if !t[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let start = i;
        let mut digit = t[i].is_ascii_digit();
        let mut flips = 0;
        i += 1;
        while i < t.len() && t[i].is_ascii_alphanumeric() {
            if t[i].is_ascii_digit() != digit {
                digit = !digit;
                flips += 1;
            }
            i += 1;
        }
        if i - start >= TOKEN_MIN && flips >= TOKEN_FLIPS {
            let o = out.get_or_insert_with(|| Vec::with_capacity(t.len()));
            o.extend_from_slice(&t[copied..start]);
            o.push(b'#');
            copied = i;
        }
    }
    out.map(|mut o| {
        o.extend_from_slice(&t[copied..]);
        o
    })
}

/// How many random characters Python's `tempfile` puts in a name.
const TEMP_RANDOM: usize = 8;

/// Whether `t[s..]` starts with a temporary name's random part: 8 of `[a-z0-9_]` with a
/// digit among them, not followed by a word byte.
fn random_part(t: &[u8], s: usize) -> bool {
    let Some(part) = t.get(s..s + TEMP_RANDOM) else {
        return false;
    };
    part.iter()
        .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && part.iter().any(u8::is_ascii_digit)
        && !t.get(s + TEMP_RANDOM).copied().is_some_and(is_word)
}

/// Where the random part after `pip-` (at `j`) starts: the kind is `[a-z]+(?:-[a-z]+)*-`, the
/// longest that leaves a random part (the regular expression's greedy choice).
fn pip_random_start(t: &[u8], j: usize) -> Option<usize> {
    let mut ends = Vec::new(); // after each hyphen that may end the kind, in order
    let mut k = j;
    while k < t.len() && t[k].is_ascii_lowercase() {
        let word = k;
        while k < t.len() && t[k].is_ascii_lowercase() {
            k += 1;
        }
        if k == word || t.get(k) != Some(&b'-') {
            break;
        }
        ends.push(k + 1);
        k += 1;
    }
    ends.into_iter().rev().find(|&s| random_part(t, s))
}

/// The next `p` at or after `from` that may be the `p` of `tmp` (an `m` before it) or of
/// `pip-` (an `i` after it), or `t.len()`: sixteen bytes at a time where SSE2 is there, each
/// chunk's neighbours read as the chunks one byte to either side; bytewise elsewhere.
fn find_temp_lead(t: &[u8], from: usize) -> usize {
    let lead =
        |j: usize| t[j] == b'p' && ((j > 0 && t[j - 1] == b'm') || t.get(j + 1) == Some(&b'i'));
    let mut i = from;
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        if i == 0 {
            if !t.is_empty() && lead(0) {
                return 0;
            }
            i = 1;
        }
        while i + 17 <= t.len() {
            // the three loads and tests before the one branch (a branch on a `p` alone, in
            // about a third of the chunks of prose, is mispredicted often)
            let p = simd::Chunk::at(t, i).equal(b'p');
            let after_m = simd::Chunk::at(t, i - 1).equal(b'm');
            let before_i = simd::Chunk::at(t, i + 1).equal(b'i');
            let found = p & (after_m | before_i);
            if found != 0 {
                return i + found.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    while i < t.len() && !lead(i) {
        i += 1;
    }
    i.min(t.len())
}

/// `t` with the random part of each temporary name replaced by `#`, or None when there is
/// none: `tmp` or `pip-<kind>-` at the start of a word, then 8 of `[a-z0-9_]` with a digit
/// among them and no word byte after them; the pass after the tokens, as
/// `normalize.mask_temp_names`. Both prefixes have a `p` ([`find_temp_lead`]). It runs before
/// the letter-led pass, so no placeholder is in `t` and [`is_word`] is Python's ASCII `\w`.
pub fn mask_temp_names(t: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    loop {
        i = find_temp_lead(t, i);
        if i >= t.len() {
            break;
        }
        let word_start = |at: usize| at == 0 || !is_word(t[at - 1]);
        let start = if i >= 2 && &t[i - 2..i] == b"tm" && word_start(i - 2) {
            Some(i + 1).filter(|&s| random_part(t, s))
        } else if t[i..].starts_with(b"pip-") && word_start(i) {
            pip_random_start(t, i + 4)
        } else {
            None
        };
        match start {
            Some(s) => {
                let o = out.get_or_insert_with(|| Vec::with_capacity(t.len()));
                o.extend_from_slice(&t[copied..s]);
                o.push(b'#');
                copied = s + TEMP_RANDOM;
                i = copied;
            }
            None => i += 1,
        }
    }
    out.map(|mut o| {
        o.extend_from_slice(&t[copied..]);
        o
    })
}

/// `pid` in any case at `i`.
#[inline]
fn pid_at(t: &[u8], i: usize) -> bool {
    at(t, i + 1).eq_ignore_ascii_case(&b'i') && at(t, i + 2).eq_ignore_ascii_case(&b'd')
}

/// Where the letter-led pass must begin: no letter-led match starts before the returned
/// position, and None when none can start anywhere (a superset test: the pass finds nothing
/// where it says none). Every letter-led match starts a run of 7 hex characters (a UUID's
/// first group, a hex id) or `pid` in any case. Eight bytes at a time: the hex run carried
/// from word to word, a run of 7 inside one word found by and-ing the flags with themselves
/// shifted. A run found in a word started at most 6 bytes before it (a longer carried run
/// would have been found in the word before), so the pass may begin one word back.
fn letter_candidate(t: &[u8]) -> Option<usize> {
    const H: u64 = 0x8080_8080_8080_8080;
    let mut run = 0usize; // hex bytes ending the previous word
    let mut i = 0;
    // Sixteen bytes at a time where SSE2 is there (x86-64), the same tests on bit masks (bit
    // k: byte i + k); then words, then bytes, the run carried through.
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    while i + 16 <= t.len() {
        let back = i.saturating_sub(8);
        let chunk = crate::simd::Chunk::at(t, i);
        // Every test of the chunk is worked out before the one branch on them: a `p` is in
        // about a third of the chunks of prose, so a branch on it alone is mispredicted often.
        let p = chunk.either_case(b'p');
        let pid = p & (chunk.either_case(b'i') >> 1) & (chunk.either_case(b'd') >> 2);
        let f = chunk.hex();
        let lead = (!f).trailing_zeros() as usize; // (16 when all sixteen are hex)
        let two = f & (f >> 1);
        let four = two & (two >> 2);
        let seven = four & (four >> 3); // bytes k..k+6 all hex
        if (pid | seven) != 0 || run + lead >= 7 {
            return Some(back);
        }
        let mut edge = p & 0xC000; // a p in the last two bytes, `pid` running on
        while edge != 0 {
            if pid_at(t, i + edge.trailing_zeros() as usize) {
                return Some(back);
            }
            edge &= edge - 1;
        }
        run = ((!f & 0xFFFF) << 16).leading_zeros() as usize;
        i += 16;
    }
    while i + 8 <= t.len() {
        let back = i.saturating_sub(8);
        let x = swar::word(t, i);
        let p = swar::p_either(x);
        if p != 0 {
            // `pid` within the word: a p, an i after it and a d after that
            let i_next = swar::either_case(x, b'i') >> 8;
            let d_next = swar::either_case(x, b'd') >> 16;
            if p & i_next & d_next != 0 {
                return Some(back);
            }
            // a p in the last two bytes may begin one that runs into the next word
            let mut edge = p & 0x8080_0000_0000_0000;
            while edge != 0 {
                if pid_at(t, i + (edge.trailing_zeros() / 8) as usize) {
                    return Some(back);
                }
                edge &= edge - 1;
            }
        }
        let f = swar::digits(x) | swar::hex_letters(x);
        if f == H {
            run += 8;
            if run >= 7 {
                return Some(back);
            }
        } else {
            let lead = ((!f & H).trailing_zeros() / 8) as usize;
            if run + lead >= 7 {
                return Some(back);
            }
            // bytes j..j+6 all hex, in three steps: j..j+1, j..j+3, then j..j+3 and j+3..j+6
            let two = f & (f >> 8);
            let four = two & (two >> 16);
            if four & (four >> 24) != 0 {
                return Some(back);
            }
            run = ((!f & H).leading_zeros() / 8) as usize;
        }
        i += 8;
    }
    let back = i.saturating_sub(8);
    for j in i..t.len() {
        let b = t[j];
        if is_hex(b) {
            run += 1;
            if run >= 7 {
                return Some(back);
            }
        } else {
            run = 0;
            if (b == b'p' || b == b'P') && pid_at(t, j) {
                return Some(back);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::xorshift;

    fn m(s: &str) -> String {
        match mask_ascii(s.as_bytes()) {
            Some(v) => String::from_utf8(v).unwrap(),
            None => s.to_string(),
        }
    }

    #[test]
    fn digits_are_counted_as_the_bytewise_run_counts_them() {
        let mut y: u64 = 0x1234_5678_9ABC_DEF1;
        for _ in 0..20_000 {
            let n = (xorshift(&mut y) % 80) as usize;
            // runs of digits of every length, across the sixteen-byte chunks
            let t: Vec<u8> = (0..n)
                .map(|_| match xorshift(&mut y) % 10 {
                    0 => b'a',
                    1 => b' ',
                    _ => b'0' + (xorshift(&mut y) % 10) as u8,
                })
                .collect();
            for i in 0..=n {
                assert_eq!(digit_count(&t, i), run(&t, i, is_digit), "{t:?} at {i}");
            }
        }
    }

    /// The byte-at-a-time reading of the candidate test: the first position that starts a
    /// run of 7 hex characters or `pid` in any case.
    fn candidate_bytewise(t: &[u8]) -> Option<usize> {
        (0..t.len()).find(|&j| {
            (j + 7 <= t.len() && t[j..j + 7].iter().all(|&b| is_hex(b)))
                || ((t[j] == b'p' || t[j] == b'P') && pid_at(t, j))
        })
    }

    /// The word-at-a-time test finds a candidate exactly where there is one, and never
    /// after the first; the letter-led pass begun there is the pass over the whole text.
    fn agrees(t: &[u8]) -> bool {
        let whole = replace_pass(t, 0, find_letter_lead, letter_led, PLACEHOLDER);
        if whole != replace_pass(t, 0, find_letter_lead_bytewise, letter_led, PLACEHOLDER) {
            return false;
        }
        match (letter_candidate(t), candidate_bytewise(t)) {
            (None, None) => whole.is_none(),
            (Some(from), Some(first)) => {
                from <= first
                    && whole == replace_pass(t, from, find_letter_lead, letter_led, PLACEHOLDER)
            }
            _ => false,
        }
    }

    #[test]
    fn the_word_at_a_time_candidate_test_is_the_bytewise_one() {
        let mut x: u64 = 7;
        let alphabet = b"0a9fFgpPiIdD x-:=";
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (x >> 58) as usize;
            let t: Vec<u8> = (0..n)
                .map(|k| alphabet[((x >> (k % 50)) as usize + k * 7) % alphabet.len()])
                .collect();
            assert!(agrees(&t), "{:?}", String::from_utf8_lossy(&t));
        }
        // every byte drawn on its own (xorshift), over an alphabet rich in p, i, d and hex
        let mut y: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            let n = (xorshift(&mut y) % 90) as usize;
            let t: Vec<u8> = (0..n)
                .map(|_| alphabet[(xorshift(&mut y) % alphabet.len() as u64) as usize])
                .collect();
            assert!(agrees(&t), "{:?}", String::from_utf8_lossy(&t));
        }
        for t in [
            &b"xxxxxxxpidxxxxxx"[..],
            b"xxxxxxpIdxxxxxxx",
            b"xxxxxPiDxxxxxxxx",
            &b"xxxxxxxabcdef1xxxx"[..],
            b"xxxxxxxxxxxxxxxxabcdef1",
            b"1234567",
            b"xxxxxxpid",
            b"xpIdxxxxx",
        ] {
            assert!(agrees(t));
            assert!(letter_candidate(t).is_some());
        }
    }

    /// The token pass read byte by byte, from the start (the chunked candidate scan skipped).
    fn tokens_bytewise(t: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < t.len() {
            let start = i;
            while i < t.len() && t[i].is_ascii_alphanumeric() {
                i += 1;
            }
            if i == start {
                out.push(t[i]);
                i += 1;
                continue;
            }
            let word = &t[start..i];
            let flips = word
                .windows(2)
                .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
                .count();
            if word.len() >= TOKEN_MIN && flips >= TOKEN_FLIPS {
                out.push(b'#');
            } else {
                out.extend_from_slice(word);
            }
        }
        out
    }

    #[test]
    fn the_chunked_token_pass_is_the_bytewise_one() {
        let alphabet = b"aZ09 _-x7Q";
        let mut y: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..200_000 {
            let n = (xorshift(&mut y) % 300) as usize;
            // long runs are what matters: mostly letters and digits, a separator now and then
            let t: Vec<u8> = (0..n)
                .map(|_| {
                    let k = (xorshift(&mut y) % 40) as usize;
                    if k < alphabet.len() {
                        alphabet[k]
                    } else if k.is_multiple_of(2) {
                        b'4'
                    } else {
                        b'K'
                    }
                })
                .collect();
            let expected = tokens_bytewise(&t);
            let got = mask_tokens(&t).unwrap_or_else(|| t.clone());
            assert_eq!(got, expected, "{:?}", String::from_utf8_lossy(&t));
        }
    }

    #[test]
    fn documented_examples() {
        assert_eq!(m("at 2024-01-02T03:04:05.123Z done"), "at # done");
        assert_eq!(m("12:34:56"), "#");
        assert_eq!(m("id 123e4567-e89b-12d3-a456-426614174000"), "id #");
        assert_eq!(m("0x1f and deadbee1"), "# and #");
        assert_eq!(
            m("\"1f54fe63-e663-468d-82ad-dfc63854eec1\""),
            "\"#-e663-468d-82ad-#\""
        );
        assert_eq!(
            m("abcdefab-abcd-abcd-abcd-abcdefabcdef"),
            "abcdefab-abcd-abcd-abcd-abcdefabcdef"
        );
        assert_eq!(m("took 1.2s, 45ms"), "took #, #");
        assert_eq!(m("pid 1234"), "#");
        assert_eq!(m("line 11616"), "line #");
        assert_eq!(m("0.123"), "#");
        assert_eq!(m("42% done"), "42% done");
        assert_eq!(m("no digits"), "no digits");
        assert_eq!(m("5secs 5sec 5min 5mss"), "# # # 5mss");
        // each part of a compound duration, and hours
        assert_eq!(m("Pending  0  1m11s"), "Pending  0  ##");
        assert_eq!(m("up 2h05m, 19h ago"), "up ##, # ago");
        assert_eq!(m("5m2x 5hz h5"), "#2x 5hz h5");
        // hex ids after an underscore, whether they start with a digit or a letter
        assert_eq!(
            m(r#"{"request_id": "req_0049d06090df", "offer": "off_e0f6c2e6354c"}"#),
            r#"{"request_id": "req_#", "offer": "off_#"}"#
        );
        assert_eq!(m("word_deadbeef x_abcdefg"), "word_deadbeef x_abcdefg");
        // long tokens of letters and digits that change often: request ids, keys
        assert_eq!(
            m("RequestID: HZBYGNG0AT62833C89YSQKNWLRZRA49HX0LUJ9TLWR85P8OJLUPX,"),
            "RequestID: #,"
        );
        assert_eq!(
            m("Base64EncoderVariant2Test x86_64"),
            "Base64EncoderVariant2Test x86_64"
        );
    }

    /// A reading of `normalize._TEMP_NAME` position by position, with every kind length tried
    /// longest first (the regular expression's backtracking), for the randomized test.
    fn temp_names_naive(t: &[u8]) -> Option<Vec<u8>> {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let part = |s: usize| -> bool {
            s + 8 <= t.len()
                && t[s..s + 8]
                    .iter()
                    .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
                && t[s..s + 8].iter().any(|b| b.is_ascii_digit())
                && (s + 8 == t.len() || !word(t[s + 8]))
        };
        let kind_ends = |j: usize| -> Vec<usize> {
            // every e such that t[j..e] matches [a-z]+(?:-[a-z]+)*-
            (j + 2..=t.len())
                .filter(|&e| {
                    let k = &t[j..e];
                    k.last() == Some(&b'-')
                        && k[..k.len() - 1]
                            .split(|&b| b == b'-')
                            .all(|w| !w.is_empty() && w.iter().all(u8::is_ascii_lowercase))
                })
                .collect()
        };
        let (mut out, mut copied, mut i, mut any) = (Vec::new(), 0, 0, false);
        while i < t.len() {
            let at_start = i == 0 || !word(t[i - 1]);
            let mut start = None;
            if at_start && t[i..].starts_with(b"tmp") && part(i + 3) {
                start = Some(i + 3);
            } else if at_start && t[i..].starts_with(b"pip-") {
                start = kind_ends(i + 4).into_iter().rev().find(|&s| part(s));
            }
            if let Some(s) = start {
                out.extend_from_slice(&t[copied..s]);
                out.push(b'#');
                copied = s + 8;
                i = copied;
                any = true;
            } else {
                i += 1;
            }
        }
        out.extend_from_slice(&t[copied..]);
        any.then_some(out)
    }

    #[test]
    fn temporary_names_lose_their_random_part() {
        let masked = |s: &str| mask_temp_names(s.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        let cases = [
            (
                "/tmp/pip-build-env-v3uow3pb/overlay",
                Some("/tmp/pip-build-env-#/overlay"),
            ),
            ("/tmp/tmpa1b2c3d4/x.py", Some("/tmp/tmp#/x.py")),
            (
                "pip-ephem-wheel-cache-07l9px25",
                Some("pip-ephem-wheel-cache-#"),
            ),
            ("pip-a-b-c1234567", Some("pip-a-b-#")),
            ("pip-build-env-v3uow3pb-x", Some("pip-build-env-#-x")),
            ("tmp_results", None),        // no digit: a name, kept
            ("/tmp/tmpabcdefgh", None),   // no digit
            ("xtmpa1b2c3d4", None),       // not at the start of a word
            ("tmpa1b2c3d4e", None),       // nine characters
            ("pip--x-a1b2c3d4", None),    // no kind
            ("pip-build-a1b2c3D4", None), // upper case is not tempfile's
        ];
        for (text, want) in cases {
            assert_eq!(masked(text).as_deref(), want, "{text}");
        }
        // and in the default masks, with the patterns after it
        assert_eq!(
            m("File \"/tmp/pip-build-env-v3uow3pb/setup.py\", line 12345"),
            "File \"/tmp/pip-build-env-#/setup.py\", line #"
        );
    }

    #[test]
    fn the_temporary_name_pass_is_its_regular_expression() {
        let alphabet: &[&[u8]] = &[
            b"tmp", b"pip-", b"build-", b"env-", b"-", b"a", b"b", b"z", b"1", b"7", b"_", b"/",
            b" ", b"x", b"Q", b"p", b"i", b"tm", b"#",
        ];
        let mut y = 0x7e3f_1c2a_9b5d_0e11u64;
        for _ in 0..100_000 {
            let n = (xorshift(&mut y) % 48) as usize; // up to ~150 bytes: chunks and tails
            let mut t = Vec::new();
            for _ in 0..n {
                t.extend_from_slice(alphabet[(xorshift(&mut y) % alphabet.len() as u64) as usize]);
            }
            assert_eq!(
                mask_temp_names(&t),
                temp_names_naive(&t),
                "{:?}",
                String::from_utf8_lossy(&t)
            );
            let from = (xorshift(&mut y) % (t.len() as u64 + 1)) as usize;
            let bytewise = (from..t.len())
                .find(|&j| {
                    t[j] == b'p' && ((j > 0 && t[j - 1] == b'm') || t.get(j + 1) == Some(&b'i'))
                })
                .unwrap_or(t.len());
            assert_eq!(find_temp_lead(&t, from), bytewise);
        }
    }
}
