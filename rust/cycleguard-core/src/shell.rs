//! Shell command lines as `otel_cycleguard/detect/categories.py` reads them: Python's
//! `shlex.split` (POSIX mode, no comments), the command words of a simple command, whether a
//! command only reads (`exec:readonly`), edits files or changes the environment.
//!
//! Each regular expression of the Python code is written out as the scan it amounts to; the
//! reasoning is beside each. Character classes are Python's (`crate::pystr`): `\s` is
//! `str.isspace`, `\w` and `\d` Unicode's as Python reads them.

use std::borrow::Cow;

use crate::pystr::{self, is_decimal, is_space, is_word};

/// Where `shlex.split` raises `ValueError` (no closing quotation, no escaped character).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShlexError;

/// `shlex.split(text)` (POSIX, `whitespace_split`, no comment characters).
pub fn shlex_split(text: &str) -> Result<Vec<String>, ShlexError> {
    // States: ' ' between tokens, 'a' in a word, a quote character, '\\' after an escape.
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut out = Vec::new();
    let mut chars = text.chars();
    loop {
        let mut token = String::new();
        let mut quoted = false;
        let mut state = ' ';
        let mut escaped_state = ' ';
        let end = loop {
            let next = chars.next();
            match state {
                ' ' => match next {
                    None => break true,
                    Some(c) if is_ws(c) => {
                        if !token.is_empty() || quoted {
                            break false;
                        }
                    }
                    Some('\\') => {
                        escaped_state = 'a';
                        state = '\\';
                    }
                    Some(c @ ('\'' | '"')) => state = c,
                    Some(c) => {
                        token.push(c);
                        state = 'a';
                    }
                },
                '\'' | '"' => {
                    quoted = true;
                    match next {
                        None => return Err(ShlexError), // No closing quotation
                        Some(c) if c == state => state = 'a',
                        Some('\\') if state == '"' => {
                            escaped_state = state;
                            state = '\\';
                        }
                        Some(c) => token.push(c),
                    }
                }
                '\\' => match next {
                    None => return Err(ShlexError), // No escaped character
                    Some(c) => {
                        if (escaped_state == '\'' || escaped_state == '"')
                            && c != '\\'
                            && c != escaped_state
                        {
                            token.push('\\');
                        }
                        token.push(c);
                        state = escaped_state;
                    }
                },
                _ => match next {
                    // 'a': in a word
                    None => break true,
                    Some(c) if is_ws(c) => {
                        state = ' ';
                        if !token.is_empty() || quoted {
                            break false;
                        }
                    }
                    Some(c @ ('\'' | '"')) => state = c,
                    Some('\\') => {
                        escaped_state = 'a';
                        state = '\\';
                    }
                    Some(c) => token.push(c),
                },
            }
        };
        if !token.is_empty() || quoted {
            out.push(token);
        } else if end {
            return Ok(out);
        }
        if end {
            return Ok(out);
        }
    }
}

/// `str.rsplit("/", 1)[-1]`.
#[inline]
pub fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `^\w+=`: a `VAR=value` word.
fn is_assignment(word: &str) -> bool {
    let mut n = 0;
    for c in word.chars() {
        if is_word(c) {
            n += 1;
        } else {
            return n > 0 && c == '=';
        }
    }
    false
}

/// `command_words(command)`: the words of one simple command from the command it runs
/// (`sudo`, `env`, `time`, `nohup`, `!` and `VAR=value` prefixes skipped, the first word's
/// directory dropped).
pub fn command_words(command: &str) -> Vec<&str> {
    let mut words: Vec<&str> = pystr::split(command).collect();
    let skip = words
        .iter()
        .take_while(|w| matches!(**w, "sudo" | "env" | "time" | "!" | "nohup") || is_assignment(w))
        .count();
    words.drain(..skip);
    if let Some(first) = words.first_mut() {
        *first = basename(first);
    }
    words
}

/// `_QUOTED.sub("''", text)`: single-quoted text and double-quoted text (with `\\.` escapes,
/// `.` not matching a newline) replaced by `''`. A quote that does not close is kept and the
/// scan goes on after it, as `re.sub` tries the next position.
pub fn blank_quotes(text: &str) -> Cow<'_, str> {
    if !text.contains(['\'', '"']) {
        return Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        let end = match b[i] {
            b'\'' => text[i + 1..].find('\'').map(|j| i + 1 + j + 1),
            b'"' => {
                let mut k = i + 1;
                loop {
                    match b.get(k) {
                        None => break None,
                        Some(b'"') => break Some(k + 1),
                        Some(b'\\') => match b.get(k + 1) {
                            Some(b'\n') | None => break None,
                            Some(_) => {
                                // `\\.`: the backslash and one character (of any length)
                                k += 1;
                                k += text[k..].chars().next().map_or(1, char::len_utf8);
                            }
                        },
                        Some(_) => k += 1,
                    }
                }
            }
            _ => None,
        };
        match end {
            Some(e) => {
                out.push_str(&text[copied..i]);
                out.push_str("''");
                i = e;
                copied = e;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// `_COMMAND_ITEMS.split(text)`: split at `||`, `|`, `&&`, `;`, `&` not before `>`, newline.
pub fn command_items(text: &str) -> Vec<&str> {
    split_where(text, |b, i| match b[i] {
        b'|' if b.get(i + 1) == Some(&b'|') => 2,
        b'|' => 1,
        b'&' if b.get(i + 1) == Some(&b'&') => 2,
        b'&' if b.get(i + 1) == Some(&b'>') => 0,
        b'&' => 1,
        b';' | b'\n' => 1,
        _ => 0,
    })
}

/// A regular expression's `split` at ASCII separators: `sep(bytes, i)` is the length of the
/// separator at byte `i`, 0 where there is none (the splitters of commands and of output).
pub fn split_where(text: &str, sep: impl Fn(&[u8], usize) -> usize) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match sep(b, i) {
            0 => i += 1,
            n => {
                out.push(&text[start..i]);
                i += n;
                start = i;
            }
        }
    }
    out.push(&text[start..]);
    out
}

/// Whether `found(text, words)` holds for some simple command of a command line: its first
/// 4096 characters, quoted text blanked, a here-document's body left out (`_simple_commands`).
/// The commands are read in order and borrowed, not copied, and the reading stops at the
/// first that is found: an agent's command line can be a whole script.
pub fn any_simple_command(line: &str, mut found: impl FnMut(&str, &[&str]) -> bool) -> bool {
    let text = pystr::head_chars(line, 4096);
    let text: Cow<'_, str> = match text.find("<<") {
        Some(at) => {
            let body = &text[at + 2..];
            let first_line = body.split('\n').next().unwrap_or("");
            Cow::Owned(format!("{}<<{}", &text[..at], first_line))
        }
        None => Cow::Borrowed(text),
    };
    let blanked = blank_quotes(&text);
    command_items(&blanked).into_iter().any(|item| {
        let words = command_words(item);
        !words.is_empty() && found(item, &words)
    })
}

/// `_FILE_REDIRECT.search(item)`: `(?<![\d&<>])>>?\s*(?!&|/dev/)[^\s&|;<>]`, a redirect into
/// a file. Giving back the optional `>` or a space never helps (the class then meets `>` or a
/// space, both excluded), so each `>` is tried with its greedy parse.
pub fn file_redirect(item: &str) -> bool {
    let chars: Vec<char> = item.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c != '>' {
            continue;
        }
        if i > 0 {
            let p = chars[i - 1];
            if is_decimal(p) || matches!(p, '&' | '<' | '>') {
                continue;
            }
        }
        let mut k = i + 1;
        if chars.get(k) == Some(&'>') {
            k += 1;
        }
        while k < chars.len() && is_space(chars[k]) {
            k += 1;
        }
        let Some(&next) = chars.get(k) else { continue };
        if next == '&' || chars[k..].starts_with(&['/', 'd', 'e', 'v', '/']) {
            continue;
        }
        if !(is_space(next) || matches!(next, '&' | '|' | ';' | '<' | '>')) {
            return true;
        }
    }
    false
}

/// `_IN_PLACE.match(word)`: `-[A-Za-z]*i` (an `i` among the letters after the dash) or
/// `--in-place`.
fn in_place(word: &str) -> bool {
    if let Some(rest) = word.strip_prefix('-') {
        if rest
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .any(|b| b == b'i')
        {
            return true;
        }
    }
    word.starts_with("--in-place")
}

fn first_non_option<S: AsRef<str>>(words: &[S]) -> &str {
    words
        .iter()
        .map(AsRef::as_ref)
        .find(|w| !w.starts_with('-'))
        .unwrap_or("")
}

/// `edits_files`: the command line edits files (`sed -i`, a content writer redirected into a
/// file, `tee`, `patch`, `git apply/checkout/...`).
pub fn edits_files(line: &str) -> bool {
    any_simple_command(line, |item, words| {
        let command = words[0];
        matches!(command, "tee" | "patch" | "truncate")
            || (matches!(command, "sed" | "perl") && words[1..].iter().any(|w| in_place(w)))
            || (command == "git"
                && matches!(
                    first_non_option(&words[1..]),
                    "apply" | "am" | "checkout" | "restore" | "stash" | "reset" | "revert"
                ))
            || (matches!(
                command,
                "cat"
                    | "echo"
                    | "printf"
                    | "head"
                    | "tail"
                    | "sed"
                    | "awk"
                    | "cut"
                    | "sort"
                    | "uniq"
                    | "tr"
                    | "paste"
            ) && file_redirect(item))
    })
}

/// The sub-commands of package managers and build tools that change the environment.
fn installer_subcommands(command: &str) -> &'static [&'static str] {
    match command {
        "pip" | "pip3" => &["install"],
        "uv" => &["pip", "add", "sync"],
        "poetry" => &["install", "add"],
        "conda" | "mamba" => &["install", "create"],
        "npm" => &["install", "i", "ci", "add"],
        "yarn" => &["install", "add"],
        "pnpm" => &["install", "add", "i"],
        "apt" | "apt-get" | "yum" | "dnf" | "brew" | "gem" | "bundle" => &["install"],
        "apk" => &["add"],
        "cargo" => &["build", "install", "fetch"],
        "go" => &["build", "install", "get", "mod"],
        "mvn" => &["install", "compile", "package"],
        "gradle" => &["build", "assemble"],
        "cmake" => &["--build", ".."],
        _ => &[],
    }
}

/// `changes_environment`: the command line installs packages or runs a build step.
pub fn changes_environment(line: &str) -> bool {
    any_simple_command(line, |_, mut words| {
        let mut command = words[0];
        if matches!(command, "python" | "python3")
            && words.len() >= 3
            && words[1] == "-m"
            && words[2] == "pip"
        {
            words = &words[2..];
            command = "pip";
        }
        if matches!(command, "make" | "ninja" | "./configure" | "configure") {
            return true;
        }
        let subs = installer_subcommands(command);
        !subs.is_empty()
            && words[1..words.len().min(3)]
                .iter()
                .any(|w| subs.contains(w))
    })
}

/// Read-only commands for `exec:readonly` (`find`, `sed`, `sort`, `env` with their checks).
pub fn is_readonly_word(word: &str) -> bool {
    matches!(
        word,
        "cat"
            | "ls"
            | "grep"
            | "egrep"
            | "fgrep"
            | "rg"
            | "ag"
            | "find"
            | "head"
            | "tail"
            | "wc"
            | "pwd"
            | "echo"
            | "file"
            | "stat"
            | "tree"
            | "du"
            | "df"
            | "which"
            | "whoami"
            | "env"
            | "printenv"
            | "less"
            | "more"
            | "sort"
            | "uniq"
            | "cut"
            | "nl"
            | "diff"
            | "cmp"
            | "basename"
            | "dirname"
            | "realpath"
            | "readlink"
            | "date"
            | "uname"
            | "id"
            | "true"
            | "sed"
            | "awk"
            | "jq"
            | "type"
    )
}

/// `git branch` only lists with no branch name and no -d/-D/-m/-c.
fn lists_branches<S: AsRef<str>>(args: &[S]) -> bool {
    args.iter().map(AsRef::as_ref).all(|a| {
        matches!(
            a,
            "-a" | "-r" | "-v" | "-vv" | "-l" | "--list" | "--all" | "--remotes" | "--show-current"
        ) || a.starts_with("--format")
            || a.starts_with("--sort")
            || a.starts_with("--color")
    })
}

/// `_is_readonly_command` of a command line: every stage of its pipeline is a read-only
/// command and nothing is redirected or chained.
pub fn is_readonly_command(text: &str) -> bool {
    if text.is_empty() || pystr::char_len(text) > 4096 {
        return false;
    }
    // _SEPARATORS: ; && || > ` $( newline
    if text.contains([';', '>', '`', '\n'])
        || text.contains("&&")
        || text.contains("||")
        || text.contains("$(")
    {
        return false;
    }
    let head = text.split('|').next().unwrap_or("");
    let first = pystr::split(head).next().map(basename).unwrap_or("");
    if !is_readonly_word(first) && first != "git" {
        return false;
    }
    for stage in text.split('|') {
        let words: Vec<Cow<'_, str>> = if stage.contains(['"', '\'', '\\']) {
            match shlex_split(stage) {
                Ok(w) => w.into_iter().map(Cow::Owned).collect(),
                Err(ShlexError) => return false, // unbalanced quotes: nothing to vouch for
            }
        } else {
            pystr::split(stage).map(Cow::Borrowed).collect()
        };
        if words.is_empty() {
            return false;
        }
        let command = basename(&words[0]);
        let rest = &words[1..];
        match command {
            "git" => {
                let sub = first_non_option(rest);
                if !matches!(
                    sub,
                    "status"
                        | "diff"
                        | "log"
                        | "show"
                        | "blame"
                        | "branch"
                        | "ls-files"
                        | "rev-parse"
                        | "grep"
                ) {
                    return false;
                }
                if sub == "branch" {
                    let at = words.iter().position(|w| w == "branch").unwrap_or(0);
                    if !lists_branches(&words[at + 1..]) {
                        return false;
                    }
                }
            }
            // (env, sort, sed and find are read-only words: without the option they read)
            "env" if rest.iter().any(|w| !w.starts_with('-') && !w.contains('=')) => {
                return false;
            }
            "sort"
                if rest
                    .iter()
                    .any(|w| w.starts_with("-o") || w.starts_with("--output")) =>
            {
                return false;
            }
            "sed"
                if rest
                    .iter()
                    .any(|w| w.starts_with("-i") || w.starts_with("--in-place")) =>
            {
                return false;
            }
            "find"
                if rest.iter().any(|w| {
                    matches!(
                        w.as_ref(),
                        "-exec"
                            | "-execdir"
                            | "-delete"
                            | "-ok"
                            | "-okdir"
                            | "-fprint"
                            | "-fprintf"
                            | "-fls"
                    )
                }) =>
            {
                return false;
            }
            c if !is_readonly_word(c) => return false,
            _ => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Result<Vec<String>, ShlexError> {
        shlex_split(s)
    }

    #[test]
    fn shlex_as_python_splits() {
        assert_eq!(
            split("a 'b c' \"d\\\"e\" f\\ g").unwrap(),
            vec!["a", "b c", "d\"e", "f g"]
        );
        assert_eq!(split("'' x").unwrap(), vec!["", "x"]);
        assert_eq!(split("\"a\\b\"").unwrap(), vec!["a\\b"]);
        assert_eq!(split("a'b'c").unwrap(), vec!["abc"]);
        assert!(split("'open").is_err() && split("end\\").is_err());
        assert_eq!(split("  ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn command_words_skip_prefixes() {
        assert_eq!(
            command_words("sudo FOO=1 env /usr/bin/find . -name x"),
            vec!["find", ".", "-name", "x"]
        );
        assert_eq!(command_words("é=1 ls"), vec!["ls"]);
        assert_eq!(command_words("=1 ls"), vec!["=1", "ls"]);
    }

    #[test]
    fn quotes_are_blanked_as_the_regex_does() {
        assert_eq!(
            blank_quotes(r#"echo 'a>b' "c\"d" 'open"#),
            r#"echo '' '' 'open"#
        );
        assert_eq!(blank_quotes("echo \"a\\\nb\" x"), "echo \"a\\\nb\" x");
    }

    #[test]
    fn readings_of_command_lines() {
        assert!(edits_files("sed -i 's/a/b/' f.py"));
        assert!(edits_files("cat <<EOF > f.py\nx > y\nEOF"));
        assert!(!edits_files("echo 'a > b'"));
        assert!(!edits_files("echo x 2>/dev/null"));
        assert!(edits_files("git checkout -- f"));
        assert!(!edits_files("git -C . checkout f")); // "." is the first non-option word
        assert!(changes_environment("cd x && python -m pip install -e ."));
        assert!(!changes_environment("apt-get update"));
        assert!(is_readonly_command("grep -rn 'a b' src | head -5"));
        assert!(!is_readonly_command("find . -delete"));
        assert!(!is_readonly_command("git branch new"));
        assert!(is_readonly_command("git branch -a"));
        assert!(!is_readonly_command("cat 'open"));
    }
}
