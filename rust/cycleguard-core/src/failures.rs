//! Whether a call failed (`ErrorStreak.is_failure` and `refine_failure` of
//! `otel_cycleguard/detect/rules.py`): the span's error flag, the user's result patterns, and
//! for exec-like and search-like tools the result itself: exit codes a command uses for
//! findings, known failure lines, and look-ups that find nothing.
//!
//! The built-in failure patterns and the other regular expressions of the Python code are
//! written out as the scans they amount to (the reasoning beside each); the user's patterns
//! are searched by Python's `re`.

use std::sync::LazyLock;

use memchr::memmem;

use crate::fasthash::HashSet;

use pyo3::prelude::*;

use crate::args::Args;
use crate::normalize::Text;
use crate::pystr::{self, is_decimal, is_space, is_word};
use crate::settings::{ErrorStreakSettings, FailurePatterns};
use crate::shell::{command_words, split_where};
use crate::simd;
use crate::swar;

/// `\S+: command not found` at the start of `rest`: the first run of non-space characters
/// ends with `:` (after at least one character) and ` command not found` follows it.
fn command_not_found(rest: &str) -> bool {
    let run = rest.find(is_space).unwrap_or(rest.len());
    run >= 2 && rest[..run].ends_with(':') && rest[run..].starts_with(" command not found")
}

/// `/bin/\w*sh: (?:line \d+: )?` then `\S+: command not found`: the word run after `/bin/`
/// ends with `sh` followed by `: ` (a shorter run would be followed by a word character).
fn bin_shell(rest: &str) -> bool {
    let Some(after) = rest.strip_prefix("/bin/") else {
        return false;
    };
    let run = after.find(|c| !is_word(c)).unwrap_or(after.len());
    if !(after[..run].ends_with("sh") && after[run..].starts_with(": ")) {
        return false;
    }
    let tail = &after[run + 2..];
    if let Some(line) = tail.strip_prefix("line ") {
        let digits = line.find(|c| !is_decimal(c)).unwrap_or(line.len());
        if digits > 0 && line[digits..].starts_with(": ") && command_not_found(&line[digits + 2..])
        {
            return true;
        }
    }
    command_not_found(tail)
}

/// The phrases the line patterns other than the prefixes need (a `command not found` line,
/// a missing file, an unrecognized service): a head with none of them is read for the
/// prefixes alone.
const PHRASES: [&str; 3] = [
    " command not found",
    ": No such file or directory",
    ": unrecognized service",
];

/// The line starts with one of the known failure prefixes (found by its first byte).
fn known_prefix(line: &str) -> bool {
    matches!(
        line.as_bytes().first(),
        Some(b'T' | b'E' | b'N' | b'd' | b'W')
    ) && [
        "Traceback (most recent call last):",
        "E: ",
        "EXECUTION TIMED OUT",
        "No matches found for ",
        "dpkg-query: no packages found matching ",
        "WARNING: Package(s) not found: ",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

/// One line against the line-anchored built-in patterns.
fn failure_line(line: &str) -> bool {
    // ^(?:/bin/\w*sh: (?:line \d+: )?|sudo: |bash: )?\S+: command not found
    if command_not_found(line)
        || line.strip_prefix("sudo: ").is_some_and(command_not_found)
        || line.strip_prefix("bash: ").is_some_and(command_not_found)
        || bin_shell(line)
    {
        return true;
    }
    // ^\S.*: No such file or directory$
    const MISSING: &str = ": No such file or directory";
    if line.ends_with(MISSING)
        && line.len() > MISSING.len()
        && line.chars().next().is_some_and(|c| !is_space(c))
    {
        return true;
    }
    line.ends_with(": unrecognized service") || known_prefix(line)
}

/// `DEFAULT_EXEC_FAILURE_PATTERNS` searched (multi-line) in `head`.
pub fn default_failure(head: &str) -> bool {
    // "syntax error near unexpected token", "syntax error at line", "syntax error: unexpected"
    // (each `syntax error` found by memchr's substring search: a scan stopping at every `x`
    // stopped every 26 bytes of prose)
    static SYNTAX: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(b"syntax error"));
    let bytes = head.as_bytes();
    for at in SYNTAX.find_iter(bytes) {
        let rest = &bytes[at + SYNTAX.needle().len()..];
        if rest.starts_with(b" near unexpected token")
            || rest.starts_with(b" at line")
            || rest.starts_with(b": unexpected")
        {
            return true;
        }
    }
    // (each phrase has a `:` in it, or in the line before it: `\S+: command not found`)
    let phrases = simd::find_byte(bytes, 0, b':') < bytes.len()
        && PHRASES.iter().any(|phrase| head.contains(phrase));
    let line_fails = if phrases { failure_line } else { known_prefix };
    let mut start = 0;
    loop {
        let end = simd::find_byte(bytes, start, b'\n');
        // (`\n` is ASCII: both ends are character boundaries)
        if line_fails(&head[start..end]) {
            return true;
        }
        if end >= bytes.len() {
            return false;
        }
        start = end + 1;
    }
}

/// Case-insensitive comparison of ASCII `pattern` letters with `text` as Python's `re.I`
/// does for str patterns: `i` also matches `İ` and `ı`, `s` also `ſ` (`k` would match the
/// Kelvin sign, but no pattern here has one). The end of the match, or None.
fn match_ci(text: &str, at: usize, pattern: &str) -> Option<usize> {
    let mut chars = text[at..].char_indices();
    for p in pattern.chars() {
        let (_, c) = chars.next()?;
        let ok = c.eq_ignore_ascii_case(&p)
            || (p == 'i' && matches!(c, '\u{130}' | '\u{131}'))
            || (p == 's' && c == '\u{17f}');
        if !ok {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(i, _)| at + i))
}

fn skip_spaces(text: &str, at: usize) -> usize {
    at + text[at..].find(|c| !is_space(c)).unwrap_or(text.len() - at)
}

/// `-?\d+` at `at`: (the digits' text, the end).
fn signed_digits(text: &str, at: usize) -> Option<(&str, usize)> {
    let start = at;
    let mut k = at;
    if text[k..].starts_with('-') {
        k += 1;
    }
    let digits = text[k..].find(|c| !is_decimal(c)).unwrap_or(text.len() - k);
    if digits == 0 {
        return None;
    }
    Some((&text[start..k + digits], k + digits))
}

/// An exit code as `int()` reads it; `Huge` beyond 64 bits (in no list of codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Value(i64),
    Huge,
}

fn code_of(digits: &str) -> Code {
    pystr::parse_decimal(digits).map_or(Code::Huge, Code::Value)
}

/// `<`, `"`, `e` or `E` eight bytes at a time: what can start an exit code ([`exit_code`]).
#[inline(always)]
fn exit_starts(w: u64) -> u64 {
    swar::equal(w, b'<' as u64) | swar::equal(w, b'"' as u64) | swar::either_case(w, b'e')
}

/// `_EXIT.search(head)` (re.I): `<returncode>\s*(-?\d+)\s*</returncode>`,
/// `\bexit(?:ed with)? (?:code|status)[ :=]+(-?\d+)` or `"exit_code"\s*:\s*(-?\d+)`, the
/// leftmost; the three start with different characters, and each is deterministic (giving
/// back a greedy part leaves a character the next part cannot take).
pub fn exit_code(head: &str) -> Option<Code> {
    let bytes = head.as_bytes();
    let mut i = 0;
    // Only `<`, `"` and `e` or `E` start one of the three (no other character folds to `e`):
    // the scan jumps from one of those bytes (ASCII, so character boundaries) to the next.
    loop {
        i = swar::find(bytes, i, exit_starts);
        if i >= bytes.len() {
            break;
        }
        let prev = head[..i].chars().next_back();
        let found = match bytes[i] {
            b'<' => match_ci(head, i, "<returncode>").and_then(|k| {
                let (digits, k) = signed_digits(head, skip_spaces(head, k))?;
                let k = skip_spaces(head, k);
                match_ci(head, k, "</returncode>").map(|_| digits)
            }),
            b'"' => match_ci(head, i, "\"exit_code\"").and_then(|k| {
                let k = skip_spaces(head, k);
                let k = if head[k..].starts_with(':') {
                    k + 1
                } else {
                    return None;
                };
                signed_digits(head, skip_spaces(head, k)).map(|(d, _)| d)
            }),
            _ if prev.is_none_or(|p| !is_word(p)) => match_ci(head, i, "exit").and_then(|k| {
                let k = match_ci(head, k, "ed with").unwrap_or(k);
                let k = if head[k..].starts_with(' ') {
                    k + 1
                } else {
                    return None;
                };
                let k = match_ci(head, k, "code").or_else(|| match_ci(head, k, "status"))?;
                let run = head[k..]
                    .find(|c| !matches!(c, ' ' | ':' | '='))
                    .unwrap_or(head.len() - k);
                if run == 0 {
                    return None;
                }
                signed_digits(head, k + run).map(|(d, _)| d)
            }),
            _ => None,
        };
        if let Some(digits) = found {
            return Some(code_of(digits));
        }
        i += 1;
    }
    None
}

/// `_SEGMENTS.split(line)`: at `||`, `|`, `&&`, `;`, newline.
fn segments(line: &str) -> Vec<&str> {
    split_at(line, true)
}

/// `_LIST_ITEMS.split(line)`: at `||`, `&&`, `;`, newline (a single `|` is a pipe).
fn list_items(line: &str) -> Vec<&str> {
    split_at(line, false)
}

/// Splits at `||`, `&&`, `;`, newline, and at a single `|` when `pipes`.
fn split_at(line: &str, pipes: bool) -> Vec<&str> {
    split_where(line, |b, i| match b[i] {
        b'|' if b.get(i + 1) == Some(&b'|') => 2,
        b'|' if pipes => 1,
        b'&' if b.get(i + 1) == Some(&b'&') => 2,
        b';' | b'\n' => 1,
        _ => 0,
    })
}

/// `command_exit(arguments, result_text)`: (the command whose exit code the shell reports,
/// that code).
pub fn command_exit<'py>(
    py: Python<'py>,
    args: &Args<'_, 'py>,
    result: &str,
) -> PyResult<(Option<String>, Option<Code>)> {
    if result.is_empty() {
        return Ok((None, None));
    }
    let Some(code) = exit_code(pystr::head_chars(result, 512)) else {
        return Ok((None, None));
    };
    let Some(line) = args.command_text(py)? else {
        return Ok((None, Some(code)));
    };
    if line.is_empty() {
        return Ok((None, Some(code)));
    }
    let last = segments(&line)
        .into_iter()
        .rfind(|s| !pystr::strip(s).is_empty());
    let command = last.and_then(|s| command_words(s).first().map(|w| (*w).to_owned()));
    Ok((command, Some(code)))
}

/// `_STDERR_REDIRECT.sub(" ", item)`: `\d?>&\d|2>>?\s*\S+` replaced by a space.
fn drop_stderr_redirects(item: &str) -> String {
    let chars: Vec<char> = item.chars().collect();
    let mut out = String::with_capacity(item.len());
    let mut i = 0;
    while i < chars.len() {
        let at = |k: usize| chars.get(k).copied();
        // \d?>&\d (the optional digit taken when there is one: a digit is no '>')
        let first = if is_decimal(chars[i])
            && at(i + 1) == Some('>')
            && at(i + 2) == Some('&')
            && at(i + 3).is_some_and(is_decimal)
        {
            Some(4)
        } else if chars[i] == '>' && at(i + 1) == Some('&') && at(i + 2).is_some_and(is_decimal) {
            Some(3)
        } else {
            None
        };
        let len = first.or_else(|| {
            if !(chars[i] == '2' && at(i + 1) == Some('>')) {
                return None;
            }
            // 2>>?\s*\S+: with the second '>' when non-space follows the spaces, else the
            // second '>' is the start of the \S+ run
            let nonspace_run = |k: usize| {
                chars[k.min(chars.len())..]
                    .iter()
                    .take_while(|c| !is_space(**c))
                    .count()
            };
            let mut k = i + 2;
            if at(k) == Some('>') {
                let mut s = k + 1;
                while at(s).is_some_and(is_space) {
                    s += 1;
                }
                let run = nonspace_run(s);
                if run > 0 {
                    return Some(s + run - i);
                }
            }
            while at(k).is_some_and(is_space) {
                k += 1;
            }
            let run = nonspace_run(k);
            (run > 0).then_some(k + run - i)
        });
        match len {
            Some(n) => {
                out.push(' ');
                i += n;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// `_WRAPPED_OUTPUT.match(body)` (re.S): `^\s*<returncode>-?\d+</returncode>\s*` then
/// `(?:<output>(.*?)</output>)?\s*$`. The lazy body ends at the one `</output>` after which
/// only space remains. `None`: no match; `Some(None)`: a match without the output group.
fn wrapped_output(body: &str) -> Option<Option<&str>> {
    let k = skip_spaces(body, 0);
    let k = body[k..]
        .strip_prefix("<returncode>")
        .map(|_| k + "<returncode>".len())?;
    let (_, k) = signed_digits(body, k)?;
    let k = body[k..]
        .strip_prefix("</returncode>")
        .map(|_| k + "</returncode>".len())?;
    let k = skip_spaces(body, k);
    if let Some(inner) = body[k..].strip_prefix("<output>") {
        let mut from = 0;
        while let Some(j) = inner[from..].find("</output>") {
            let end = from + j;
            if pystr::lstrip(&inner[end + "</output>".len()..]).is_empty() {
                return Some(Some(&inner[..end]));
            }
            from = end + 1;
        }
    }
    // without the group: \s*$ (`$` also before a final newline, which \s* takes anyway)
    pystr::lstrip(&body[k..]).is_empty().then_some(None)
}

/// `_WHEREIS_EMPTY.match(body)`: `^(?:[^\s:]+:\s*)*$`, bare `name:` entries.
fn whereis_empty(body: &str) -> bool {
    let mut rest = body;
    loop {
        if rest.is_empty() || rest == "\n" {
            return true;
        }
        let run = rest
            .find(|c: char| is_space(c) || c == ':')
            .unwrap_or(rest.len());
        if run == 0 || !rest[run..].starts_with(':') {
            return false;
        }
        rest = pystr::lstrip(&rest[run + 1..]);
    }
}

fn is_lookup(words: &[&str], lookups: &HashSet<String>) -> bool {
    let name = words[0];
    if words.len() > 1 && lookups.contains(&format!("{name} {}", words[1])) {
        return true;
    }
    if !lookups.contains(name) {
        return false;
    }
    match name {
        "grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack" => !words[1..]
            .iter()
            .any(|w| matches!(*w, "-q" | "--quiet" | "--silent" | "-qs" | "-sq")),
        "find" => !words[1..].iter().any(|w| {
            matches!(
                *w,
                "-delete"
                    | "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-fprint"
                    | "-fls"
                    | "-fprintf"
                    | "-fprint0"
            )
        }),
        "printenv" => words.len() > 1,
        _ => true,
    }
}

fn is_filter(word: &str) -> bool {
    matches!(
        word,
        "head"
            | "tail"
            | "sort"
            | "uniq"
            | "cut"
            | "tr"
            | "awk"
            | "sed"
            | "xargs"
            | "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "less"
            | "more"
            | "cat"
            | "column"
            | "nl"
    )
}

/// `empty_lookup(arguments, result_text, lookups)`: an exec call ran a look-up command and
/// its output is empty (for `whereis`, bare `name:` entries).
pub fn empty_lookup<'py>(
    py: Python<'py>,
    args: &Args<'_, 'py>,
    result: &str,
    lookups: &HashSet<String>,
) -> PyResult<bool> {
    let mut body = result;
    if body.starts_with("<returncode>") || pystr::lstrip(body).starts_with("<returncode>") {
        match wrapped_output(body) {
            None => return Ok(false),
            Some(group) => body = group.unwrap_or(""),
        }
    }
    let body = pystr::strip(body);
    let Some(line) = args.command_text(py)? else {
        return Ok(false);
    };
    if line.is_empty() || (!body.is_empty() && !line.contains("whereis")) {
        return Ok(false);
    }
    let items: Vec<&str> = list_items(&line)
        .into_iter()
        .filter(|i| !pystr::strip(i).is_empty())
        .collect();
    let Some(last) = items.last() else {
        return Ok(false);
    };
    let item = drop_stderr_redirects(last);
    if item.contains('>') {
        return Ok(false);
    }
    let stages: Vec<Vec<&str>> = item.split('|').map(command_words).collect();
    let mut found: Option<&Vec<&str>> = None;
    for words in stages.iter().rev() {
        if words.is_empty() {
            return Ok(false);
        }
        if words[0] == "xargs" {
            let rest: Vec<&str> = words[1..]
                .iter()
                .copied()
                .filter(|w| !w.starts_with('-'))
                .collect();
            if !rest.is_empty() {
                let joined = rest.join(" ");
                let inner = command_words(&joined);
                if !inner.is_empty() && is_lookup(&inner, lookups) {
                    found = Some(words);
                    break;
                }
            }
        }
        if is_lookup(words, lookups) {
            found = Some(words);
            break;
        }
        if !is_filter(words[0]) {
            return Ok(false);
        }
    }
    let Some(words) = found else {
        return Ok(false);
    };
    if body.is_empty() {
        return Ok(true);
    }
    Ok(words[0] == "whereis" && whereis_empty(body))
}

/// Canonical tools whose failures are read from the result.
pub fn is_search(canonical: &str) -> bool {
    matches!(
        canonical,
        "search_dir"
            | "search_file"
            | "find_file"
            | "grep"
            | "search"
            | "search_files"
            | "find"
            | "glob"
    )
}

/// `ErrorStreak.is_failure(tool, error, result_text)` (`non_failing`: the tool's name,
/// lower-cased, is one of `cfg.non_failing_tools`).
pub fn is_failure(
    py: Python<'_>,
    cfg: &ErrorStreakSettings,
    non_failing: bool,
    error: bool,
    result: Option<&Text<'_>>,
) -> PyResult<bool> {
    if non_failing {
        return Ok(false);
    }
    if error {
        return Ok(true);
    }
    match (&cfg.result_patterns, result) {
        (Some(pattern), Some(text)) if !text.as_str().is_empty() => {
            let head = head_py(py, text, cfg.max_scan_chars)?;
            pattern.search(py, &head)
        }
        _ => Ok(false),
    }
}

/// `text[:n]` as a Python str (for Python's regular expressions).
fn head_py<'py>(
    py: Python<'py>,
    text: &Text<'py>,
    n: usize,
) -> PyResult<Bound<'py, pyo3::types::PyString>> {
    if text.exact() {
        if let Text::Py(s) = text {
            if pystr::char_len(text.as_str()) <= n {
                return Ok(s.clone());
            }
        }
        if text.as_str().chars().any(pystr::is_surrogate_stand_in) {
            return crate::args::py_head(&text.to_py(py), n);
        }
        return Ok(pyo3::types::PyString::new(
            py,
            pystr::head_chars(text.as_str(), n),
        ));
    }
    crate::args::py_head(&text.to_py(py), n)
}

/// `refine_failure(tool, canonical, arguments, result_text, failed, config)` (`non_failing`
/// as for [`is_failure`]).
#[allow(clippy::too_many_arguments)]
pub fn refine_failure<'py>(
    py: Python<'py>,
    cfg: &ErrorStreakSettings,
    non_failing: bool,
    canonical: &str,
    args: &Args<'_, 'py>,
    result: &Text<'py>,
    failed: bool,
) -> PyResult<bool> {
    let is_exec = canonical == "exec";
    let search = is_search(canonical);
    if !(is_exec || search) || non_failing {
        return Ok(failed);
    }
    let text = result.as_str();
    if is_exec
        && !cfg.non_failing_exit_codes.is_empty()
        && (failed || !cfg.empty_result_lookups.is_empty())
    {
        if let (Some(command), Some(code)) = command_exit(py, args, text)? {
            if let (Some(allowed), Code::Value(code)) =
                (cfg.non_failing_exit_codes.get(&command), code)
            {
                if allowed.contains(&code) {
                    return Ok(false);
                }
            }
        }
    }
    if !failed && !cfg.empty_result_lookups.is_empty() {
        if search && pystr::strip(text).is_empty() {
            return Ok(true);
        }
        if is_exec
            && pystr::char_len(text) < 256
            && empty_lookup(py, args, text, &cfg.empty_result_lookups)?
        {
            return Ok(true);
        }
    }
    if !failed && !text.is_empty() {
        match &cfg.exec_failure_patterns {
            FailurePatterns::None => {}
            FailurePatterns::Default => {
                if default_failure(pystr::head_chars(text, cfg.max_scan_chars)) {
                    return Ok(true);
                }
            }
            FailurePatterns::Custom(pattern) => {
                let head = head_py(py, result, cfg.max_scan_chars)?;
                if pattern.search(py, &head)? {
                    return Ok(true);
                }
            }
        }
    }
    Ok(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_failure_lines() {
        for yes in [
            "x\nbash: foo: command not found",
            "/bin/sh: line 3: foo: command not found",
            "/bin/zsh: foo: command not found",
            "ls: x: No such file or directory",
            "a\nE: Unable to locate package x",
            "Traceback (most recent call last):\n  File",
            "bash: syntax error near unexpected token `('",
            "ssh: unrecognized service",
        ] {
            assert!(default_failure(yes), "{yes}");
        }
        for no in [
            ": command not found",
            " foo: command not found",
            ": No such file or directory",
            "x: No such file or directory\r",
            "  E: x",
        ] {
            assert!(!default_failure(no), "{no}");
        }
    }

    #[test]
    fn exit_codes_as_the_case_insensitive_regex_reads_them() {
        assert_eq!(exit_code("EXİT code 1"), Some(Code::Value(1)));
        assert_eq!(exit_code("exited with status := -2"), Some(Code::Value(-2)));
        assert_eq!(
            exit_code("<RETURNCODE> 7 </returncode>"),
            Some(Code::Value(7))
        );
        assert_eq!(exit_code("{\"exit_code\" : \u{663}}"), Some(Code::Value(3)));
        assert_eq!(exit_code("_exit code 1"), None);
        assert_eq!(exit_code("exit codes 1"), None);
    }

    #[test]
    fn redirects_and_wrapped_outputs() {
        assert_eq!(drop_stderr_redirects("find . 2>/dev/null"), "find .  ");
        assert_eq!(drop_stderr_redirects("a 2>&1 | b"), "a   | b");
        assert_eq!(drop_stderr_redirects("x 2>>"), "x  ");
        assert_eq!(
            wrapped_output("<returncode>0</returncode>\n<output>\n</output>\n"),
            Some(Some("\n"))
        );
        assert_eq!(wrapped_output(" <returncode>1</returncode> "), Some(None));
        assert_eq!(wrapped_output("<returncode>1</returncode>x"), None);
        assert!(whereis_empty("foo: bar:") && !whereis_empty("foo: /usr/bin/foo"));
    }
}
