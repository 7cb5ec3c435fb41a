//! Tool categories (`otel_cycleguard/detect/categories.py`, docs/detection.md "Tool
//! categories"): exploration or action by the tool's name (built-in names and aliases, the
//! user's `extra_categories`, `read_only` metadata), poll tools, and for an unknown or
//! multi-purpose tool its arguments (a sub-command that reads or edits, one command line
//! read as a shell's).

use crate::fasthash::{HashMap, HashSet};
use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::args::{Arg, Args, Key, Map};
use crate::normalize::lower;
use crate::pystr;
use crate::shell;

pub const EXPLORATION: &str = "exploration";
pub const ACTION: &str = "action";
pub const EXEC_READONLY: &str = "exec:readonly";

/// The keys that hold a command line.
pub static COMMAND_KEYS: [Key; 6] = [
    Key::new("command"),
    Key::new("cmd"),
    Key::new("script"),
    Key::new("code"),
    Key::new("input"),
    Key::new("commands"),
];
/// The keys a multi-purpose tool names its sub-command with.
static SUBCOMMAND_KEYS: [Key; 4] = [
    Key::new("command"),
    Key::new("action"),
    Key::new("operation"),
    Key::new("mode"),
];

/// How the detector treats one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolKind<'a> {
    pub canonical: Cow<'a, str>,
    pub category: Cow<'a, str>,
    pub override_key: Cow<'a, str>,
    pub is_poll: bool,
    /// False: the last-resort `action` guess for a name seen nowhere.
    pub known: bool,
}

impl<'a> ToolKind<'a> {
    fn fixed(canonical: &'static str, category: &'static str, key: &'static str) -> Self {
        ToolKind {
            canonical: Cow::Borrowed(canonical),
            category: Cow::Borrowed(category),
            override_key: Cow::Borrowed(key),
            is_poll: false,
            known: true,
        }
    }

    fn exec() -> Self {
        Self::fixed("exec", ACTION, "exec")
    }

    fn exec_readonly() -> Self {
        Self::fixed("exec", EXPLORATION, EXEC_READONLY)
    }

    fn view() -> Self {
        Self::fixed("view", EXPLORATION, "view")
    }

    fn edit() -> Self {
        Self::fixed("edit", ACTION, "edit")
    }

    pub fn is_exploration(&self) -> bool {
        self.category == EXPLORATION
    }

    /// A look: a read, a search, a poll, or a tool the guard does not know. What a look
    /// answers is information, so an answer unlike the last one is news, not a repeat.
    pub fn is_look(&self) -> bool {
        self.is_poll || self.is_exploration() || !self.known
    }

    /// A poll-kind tool that only waits (`sleep`): it answers the same whatever the world
    /// does, so its unchanged answer says nothing about progress.
    pub fn only_waits(&self) -> bool {
        self.is_poll && self.canonical == "sleep"
    }
}

/// A built-in canonical name's category.
fn builtin(canonical: &str) -> Option<&'static str> {
    Some(match canonical {
        "read" | "grep" | "search" | "search_files" | "find" | "list" | "glob" | "web_search"
        | "fetch" | "plan" | "memory" | "view" | "open" | "goto" | "scroll_up" | "scroll_down"
        | "find_file" | "search_dir" | "search_file" | "lookup" | "think" => EXPLORATION,
        "edit" | "write" | "apply_patch" | "exec" | "delete" | "move" | "delegate_task"
        | "create" | "submit" => ACTION,
        _ => return None,
    })
}

/// An alias's canonical name.
fn alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "read_file" | "readfile" | "cat" => "read",
        "view_file" => "view",
        "open_file" => "open",
        "ripgrep" | "rg" | "grep_search" => "grep",
        "codebase_search" => "search",
        "file_search" => "search_files",
        "find_files" => "find",
        "ls" | "list_dir" | "list_directory" | "list_files" => "list",
        "websearch" => "web_search",
        "web_fetch" | "webfetch" | "http_get" => "fetch",
        "todo_write" | "todowrite" | "update_plan" => "plan",
        "edit_file"
        | "str_replace"
        | "str_replace_editor"
        | "str_replace_based_edit_tool"
        | "replace_in_file"
        | "multiedit"
        | "multi_edit" => "edit",
        "write_file" | "create_file" => "write",
        "patch" => "apply_patch",
        "bash" | "shell" | "terminal" | "sh" | "run" | "run_command" | "run_terminal_cmd"
        | "execute_command" | "run_shell_command" | "execute_bash" | "python" | "ipython" => "exec",
        "remove" | "delete_file" | "rm" => "delete",
        "rename" | "move_file" | "mv" => "move",
        "task" | "spawn_agent" | "run_subagent" => "delegate_task",
        _ => return None,
    })
}

fn is_read_subcommand(word: &str) -> bool {
    matches!(
        word,
        "view"
            | "read"
            | "show"
            | "cat"
            | "get"
            | "list"
            | "ls"
            | "search"
            | "find"
            | "grep"
            | "open"
            | "goto"
            | "scroll"
            | "scroll_up"
            | "scroll_down"
            | "print"
            | "info"
            | "status"
            | "diff"
            | "view_range"
            | "read_file"
            | "list_dir"
    )
}

fn is_edit_subcommand(word: &str) -> bool {
    matches!(
        word,
        "str_replace"
            | "create"
            | "insert"
            | "undo_edit"
            | "write"
            | "edit"
            | "replace"
            | "append"
            | "delete"
            | "remove"
            | "rename"
            | "move"
            | "patch"
            | "apply_patch"
            | "overwrite"
            | "prepend"
            | "write_file"
            | "create_file"
    )
}

/// Classifies tools for one configuration.
pub struct Categorizer {
    /// Lower-cased tool name -> category.
    extra: HashMap<String, String>,
    read_only: HashSet<String>,
    poll: HashSet<String>,
}

impl Categorizer {
    /// The names lower-cased already (Python's `str.lower`).
    pub fn new(
        extra: HashMap<String, String>,
        read_only: HashSet<String>,
        poll: HashSet<String>,
    ) -> Self {
        Categorizer {
            extra,
            read_only,
            poll,
        }
    }

    /// `_classify_name`: the kind of a tool by its name and `read_only` flag.
    pub fn classify_name<'s>(
        &'s self,
        py: Python<'_>,
        tool: &'s str,
        read_only: Option<bool>,
    ) -> PyResult<ToolKind<'s>> {
        // (borrowed from the tool's text when it is lower case already)
        let name: Cow<'s, str> = lower(py, pystr::strip(tool))?;
        let canonical: Cow<'s, str> = match alias(&name) {
            Some(c) => Cow::Borrowed(c),
            None => name.clone(),
        };
        let is_poll = self.poll.contains(name.as_ref())
            || matches!(
                name.as_ref(),
                "get_result" | "wait" | "sleep" | "poll" | "check_status" | "get_status"
            )
            || name.ends_with("_status")
            || name.ends_with("_poll");
        if is_poll {
            return Ok(ToolKind {
                override_key: canonical.clone(),
                canonical,
                category: Cow::Borrowed(EXPLORATION),
                is_poll: true,
                known: true,
            });
        }
        let category: Cow<'s, str> = if let Some(c) = self.extra.get(name.as_ref()) {
            // the user's extra categories win over the built-in map for the same name
            Cow::Borrowed(c.as_str())
        } else if let Some(c) = builtin(&canonical) {
            Cow::Borrowed(c)
        } else if read_only == Some(true) || self.read_only.contains(name.as_ref()) {
            Cow::Borrowed(EXPLORATION)
        } else if name.starts_with("send_") {
            Cow::Borrowed(ACTION)
        } else {
            return Ok(ToolKind {
                override_key: canonical.clone(),
                canonical,
                category: Cow::Borrowed(ACTION),
                is_poll: false,
                known: false,
            });
        };
        Ok(ToolKind {
            override_key: canonical.clone(),
            canonical,
            category,
            is_poll: false,
            known: true,
        })
    }

    /// `classify(tool, arguments, read_only)`.
    pub fn classify<'s, 'py>(
        &'s self,
        py: Python<'py>,
        tool: &'s str,
        args: &Args<'_, 'py>,
        read_only: Option<bool>,
    ) -> PyResult<ToolKind<'s>> {
        by_kind_and_arguments(py, self.classify_name(py, tool, read_only)?, args)
    }
}

/// The part of `classify` the arguments decide, from the kind the tool's name gave
/// (`names.rs` keeps that kind per name).
pub fn by_kind_and_arguments<'s, 'py>(
    py: Python<'py>,
    kind: ToolKind<'s>,
    args: &Args<'_, 'py>,
) -> PyResult<ToolKind<'s>> {
    match kind.canonical.as_ref() {
        "exec" => {
            if kind.category == ACTION && readonly_command(py, args)? {
                return Ok(ToolKind::exec_readonly());
            }
            Ok(kind)
        }
        "process" => {
            if let Some(action) = args.process_action(py)? {
                if matches!(action.as_str(), "poll" | "log" | "status") {
                    return Ok(ToolKind {
                        canonical: Cow::Borrowed("process"),
                        category: Cow::Borrowed(EXPLORATION),
                        override_key: Cow::Borrowed("process"),
                        is_poll: true,
                        known: true,
                    });
                }
            }
            Ok(kind)
        }
        c if !kind.known || matches!(c, "edit" | "write" | "create") => {
            by_arguments(py, kind, args)
        }
        _ => Ok(kind),
    }
}

/// `_is_readonly_command(arguments)`.
pub fn readonly_command<'py>(py: Python<'py>, args: &Args<'_, 'py>) -> PyResult<bool> {
    Ok(match args.command_text(py)? {
        Some(text) => shell::is_readonly_command(&text),
        None => false,
    })
}

/// A multi-purpose or unknown tool read by its arguments (`_by_arguments`).
fn by_arguments<'s, 'py>(
    py: Python<'py>,
    kind: ToolKind<'s>,
    args: &Args<'_, 'py>,
) -> PyResult<ToolKind<'s>> {
    let Some(map) = args.map(py)? else {
        return Ok(kind);
    };
    for key in &SUBCOMMAND_KEYS {
        if let Arg::Str(value) = map.get(key)? {
            if pystr::char_len(&value) <= 32 {
                let word = lower(py, pystr::strip(&value))?;
                if is_read_subcommand(&word) {
                    return Ok(ToolKind::view());
                }
                if is_edit_subcommand(&word) {
                    return Ok(ToolKind::edit());
                }
            }
        }
    }
    if kind.known {
        return Ok(kind);
    }
    if is_command_line(py, &map)? {
        let text = crate::args::command_of(&map)?;
        let readonly = text.is_some_and(|t| shell::is_readonly_command(&t));
        return Ok(if readonly {
            ToolKind::exec_readonly()
        } else {
            ToolKind::exec()
        });
    }
    Ok(kind)
}

/// `_is_command_line(args)`: the first command key holding a non-blank string reads as a
/// command (a shell character, or a single identifier).
fn is_command_line(py: Python<'_>, map: &Map<'_, '_>) -> PyResult<bool> {
    for key in &COMMAND_KEYS {
        if let Arg::Str(value) = map.get(key)? {
            let text = pystr::strip(&value);
            if text.is_empty() {
                continue;
            }
            if text.chars().any(|c| {
                pystr::is_space(c)
                    || matches!(c, '/' | '|' | ';' | '&' | '<' | '>' | '$' | '=' | '(')
            }) {
                return Ok(true);
            }
            return is_identifier(py, text);
        }
    }
    Ok(false)
}

/// `str.isidentifier()` (Python's own answer beyond ASCII).
fn is_identifier(py: Python<'_>, text: &str) -> PyResult<bool> {
    if text.is_ascii() {
        let b = text.as_bytes();
        return Ok(!b.is_empty()
            && (b[0].is_ascii_alphabetic() || b[0] == b'_')
            && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_'));
    }
    if text.chars().any(pystr::is_surrogate_stand_in) {
        return Ok(false); // a lone surrogate is no identifier character
    }
    PyString::new(py, text)
        .call_method0("isidentifier")?
        .extract()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify(c: &Categorizer, tool: &str, args: &str) -> (String, String, String, bool, bool) {
        pyo3::prepare_freethreaded_python();
        Python::with_gil(|py| {
            let a = Args::text(args, None);
            let k = c.classify(py, tool, &a, None).unwrap();
            (
                k.canonical.into_owned(),
                k.category.into_owned(),
                k.override_key.into_owned(),
                k.is_poll,
                k.known,
            )
        })
    }

    #[test]
    fn names_aliases_and_arguments() {
        let c = Categorizer::new(
            HashMap::from_iter([("click".to_owned(), EXPLORATION.to_owned())]),
            HashSet::default(),
            HashSet::from_iter(["job".to_owned()]),
        );
        let kind = |t: &str, a: &str| {
            let k = classify(&c, t, a);
            (k.1, k.2, k.3, k.4)
        };
        let s = |v: &str| v.to_owned();
        assert_eq!(
            kind("Bash", r#"{"command": "ls -la | head"}"#),
            (s(EXPLORATION), s(EXEC_READONLY), false, true)
        );
        assert_eq!(
            kind("bash", "rm -rf x"),
            (s(ACTION), s("exec"), false, true)
        );
        assert_eq!(
            kind("str_replace_editor", r#"{"command": " View "}"#),
            (s(EXPLORATION), s("view"), false, true)
        );
        assert_eq!(
            kind("mytool", r#"{"cmd": "make test"}"#),
            (s(ACTION), s("exec"), false, true)
        );
        assert_eq!(
            kind("mytool", r#"{"x": 1}"#),
            (s(ACTION), s("mytool"), false, false)
        );
        assert_eq!(kind("JOB", ""), (s(EXPLORATION), s("job"), true, true));
        assert_eq!(
            kind("process", r#"{"action": "Poll"}"#),
            (s(EXPLORATION), s("process"), true, true)
        );
        assert_eq!(kind("click", ""), (s(EXPLORATION), s("click"), false, true));
        assert_eq!(
            kind("send_mail", ""),
            (s(ACTION), s("send_mail"), false, true)
        );
    }
}
