//! An OTel GenAI output message list (`gen_ai.output.messages`: a JSON list of `{"role",
//! "parts": [{"type", ...}], "content"}`), read in one pass: the assistant text
//! ([`texts`]) and the tool calls the model asked for ([`tool_calls`]).
//!
//! Every model span's output goes through both, so the list is walked with the strict
//! parser's own steps ([`Parser`]) instead of being built into a tree and dropped: the
//! containers on the way are read in place, any other value is parsed (and so checked) as
//! [`json::parse`] parses it, and the same depth limit applies; a key given twice counts by
//! its last value, as in a dict. The answers are those of the Python readers on orjson's
//! parse: [`texts`] is `conventions._text_of_messages` (per message, the `content` of its
//! parts of type `text`, `thinking` or `reasoning`, then its own `content`, where they are
//! strings; a single object is one message), [`tool_calls`] the GenAI reader of
//! `model_messages` (the parts of type `tool_call` with a non-empty string `name`, from a
//! list of messages only).

use crate::json::{self, ParseError, Parser, Value};
use std::borrow::Cow;

/// The texts, in order (empty: none), or why the text could not be read.
pub fn texts(text: &str) -> Result<Vec<Cow<'_, str>>, ParseError> {
    let mut out = Vec::new();
    document(text, |p| match p.peek() {
        // `parse` reads the document as a value at depth 0: a list at depth 1
        b'[' => list(p, 1, |p| message_texts(p, 2, &mut out)),
        b'{' => message_texts(p, 1, &mut out),
        _ => p.value(0).map(drop),
    })?;
    Ok(out)
}

/// A tool call the model asked for, as the list holds it: its `id` (a non-empty string, else
/// None), its `name`, its `arguments` (None when the part has none).
#[derive(Debug, PartialEq)]
pub struct ToolCall<'a> {
    pub id: Option<Cow<'a, str>>,
    pub name: Cow<'a, str>,
    pub arguments: Option<Value<'a>>,
}

/// The tool calls of a message list, in order, at most `limit` (the rest of the list is still
/// read, and checked). Not a list: none.
pub fn tool_calls(text: &str, limit: usize) -> Result<Vec<ToolCall<'_>>, ParseError> {
    let mut out = Vec::new();
    document(text, |p| match p.peek() {
        b'[' => list(p, 1, |p| {
            let mut calls = Vec::new();
            object(p, 2, |p, key| match key {
                "parts" => {
                    calls.clear(); // the last `parts` is the message's
                    if p.peek() == b'[' {
                        list(p, 3, |p| tool_call(p, 4, &mut calls))?;
                    } else {
                        p.value(2)?;
                    }
                    Ok(true)
                }
                _ => Ok(false),
            })?;
            let room = limit.saturating_sub(out.len());
            out.extend(calls.into_iter().take(room));
            Ok(())
        }),
        _ => p.value(0).map(drop),
    })?;
    Ok(out)
}

/// Read a whole text with `read` (the parser at its first value), then check that only
/// whitespace follows, as [`json::parse`] does.
fn document<'a>(
    text: &'a str,
    read: impl FnOnce(&mut Parser<'a>) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    let mut p = Parser::new_ordered(text);
    p.ws();
    read(&mut p)?;
    p.ws();
    if !p.at_end() {
        return Err(ParseError::Invalid);
    }
    Ok(())
}

/// Walk a list at `depth` (the parser at its `[`): `each` reads an object element (at
/// `depth + 1`); any other element is parsed and dropped.
fn list<'a>(
    p: &mut Parser<'a>,
    depth: usize,
    mut each: impl FnMut(&mut Parser<'a>) -> Result<(), ParseError>,
) -> Result<(), ParseError> {
    if depth > json::MAX_DEPTH {
        return Err(ParseError::Unsure);
    }
    p.eat(b'[');
    p.ws();
    if p.eat(b']') {
        return Ok(());
    }
    loop {
        p.ws();
        if p.peek() == b'{' {
            each(p)?;
        } else {
            p.value(depth)?;
        }
        p.ws();
        if p.eat(b',') {
            continue;
        }
        if p.eat(b']') {
            return Ok(());
        }
        return Err(ParseError::Invalid);
    }
}

/// Walk an object at `depth` (its values are read at that depth), key by key: `each` reads
/// the value of a key it wants (the parser at the value) and answers whether it did; any
/// other value is parsed and dropped.
fn object<'a>(
    p: &mut Parser<'a>,
    depth: usize,
    mut each: impl FnMut(&mut Parser<'a>, &str) -> Result<bool, ParseError>,
) -> Result<(), ParseError> {
    if depth > json::MAX_DEPTH {
        return Err(ParseError::Unsure);
    }
    p.eat(b'{');
    p.ws();
    if p.eat(b'}') {
        return Ok(());
    }
    loop {
        p.ws();
        if p.peek() != b'"' {
            return Err(ParseError::Invalid);
        }
        let key = p.string()?;
        p.ws();
        if !p.eat(b':') {
            return Err(ParseError::Invalid);
        }
        p.ws();
        if !each(p, &key)? {
            p.value(depth)?;
        }
        p.ws();
        if p.eat(b',') {
            continue;
        }
        if p.eat(b'}') {
            return Ok(());
        }
        return Err(ParseError::Invalid);
    }
}

/// A string value, or None for any other value (parsed and dropped).
fn string_or_skip<'a>(
    p: &mut Parser<'a>,
    depth: usize,
) -> Result<Option<Cow<'a, str>>, ParseError> {
    if p.peek() == b'"' {
        return p.string().map(Some);
    }
    p.value(depth)?;
    Ok(None)
}

/// One message object at `depth`: its part texts, then its own `content`.
fn message_texts<'a>(
    p: &mut Parser<'a>,
    depth: usize,
    out: &mut Vec<Cow<'a, str>>,
) -> Result<(), ParseError> {
    let mut parts: Vec<Cow<'a, str>> = Vec::new();
    let mut content: Option<Cow<'a, str>> = None;
    object(p, depth, |p, key| {
        match key {
            "parts" => {
                parts.clear(); // the last `parts` is the message's
                if p.peek() == b'[' {
                    list(p, depth + 1, |p| part_text(p, depth + 2, &mut parts))?;
                } else {
                    p.value(depth)?;
                }
            }
            "content" => content = string_or_skip(p, depth)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    out.append(&mut parts);
    out.extend(content);
    Ok(())
}

/// One part object at `depth`: its `content`, when it is a text, thinking or reasoning part.
fn part_text<'a>(
    p: &mut Parser<'a>,
    depth: usize,
    out: &mut Vec<Cow<'a, str>>,
) -> Result<(), ParseError> {
    let mut kind: Option<Cow<'a, str>> = None;
    let mut content: Option<Cow<'a, str>> = None;
    object(p, depth, |p, key| {
        match key {
            "type" => kind = string_or_skip(p, depth)?,
            "content" => content = string_or_skip(p, depth)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if matches!(kind.as_deref(), Some("text" | "thinking" | "reasoning")) {
        out.extend(content);
    }
    Ok(())
}

/// One part object at `depth`: a call, when it is a `tool_call` part with a name.
fn tool_call<'a>(
    p: &mut Parser<'a>,
    depth: usize,
    out: &mut Vec<ToolCall<'a>>,
) -> Result<(), ParseError> {
    let mut kind: Option<Cow<'a, str>> = None;
    let mut name: Option<Cow<'a, str>> = None;
    let mut id: Option<Cow<'a, str>> = None;
    let mut arguments: Option<Value<'a>> = None;
    object(p, depth, |p, key| {
        match key {
            "type" => kind = string_or_skip(p, depth)?,
            "name" => name = string_or_skip(p, depth)?,
            "id" => id = string_or_skip(p, depth)?,
            "arguments" => arguments = Some(p.value(depth)?),
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    let name = name.filter(|n| !n.is_empty());
    if let (Some("tool_call"), Some(name)) = (kind.as_deref(), name) {
        out.push(ToolCall {
            id: id.filter(|i| !i.is_empty()),
            name,
            arguments,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same answer from the built tree (the oracle).
    fn from_tree(text: &str) -> Result<Vec<String>, ParseError> {
        fn one(message: &Value<'_>, out: &mut Vec<String>) {
            if !matches!(message, Value::Object(_)) {
                return;
            }
            if let Some(Value::Array(parts)) = message.get("parts") {
                for part in parts {
                    let kind = part.get("type").and_then(Value::as_str);
                    if matches!(kind, Some("text" | "thinking" | "reasoning")) {
                        if let Some(content) = part.get("content").and_then(Value::as_str) {
                            out.push(content.to_owned());
                        }
                    }
                }
            }
            if let Some(content) = message.get("content").and_then(Value::as_str) {
                out.push(content.to_owned());
            }
        }
        let value = json::parse(text)?;
        let mut out = Vec::new();
        match &value {
            Value::Array(items) => items.iter().for_each(|m| one(m, &mut out)),
            single => one(single, &mut out),
        }
        Ok(out)
    }

    fn streamed(text: &str) -> Result<Vec<String>, ParseError> {
        texts(text).map(|t| t.into_iter().map(Cow::into_owned).collect())
    }

    #[test]
    fn reads_the_texts_a_message_list_holds() {
        let list = r#"[{"role":"assistant","parts":[{"type":"text","content":"a"},{"type":"tool_call","content":"x"},{"content":"b","type":"reasoning"}],"content":"c"},{"parts":[{"type":"thinking","content":"d\n"}]}]"#;
        assert_eq!(streamed(list).unwrap(), ["a", "b", "c", "d\n"]);
        assert_eq!(streamed(r#"{"content":"one"}"#).unwrap(), ["one"]);
        assert!(streamed(r#""just a string""#).unwrap().is_empty());
    }

    #[test]
    fn a_repeated_key_counts_by_its_last_value() {
        let list = r#"[{"content":"a","parts":[{"type":"text","content":"p"}],"content":5,"parts":[{"type":"text","content":"q","type":"x"},{"type":"text","content":1,"content":"r"}]}]"#;
        assert_eq!(streamed(list), from_tree(list));
        assert_eq!(streamed(list).unwrap(), ["r"]);
    }

    /// Every prefix of each seed, and each seed with one byte inserted or removed anywhere.
    fn mutations(seeds: &[&str]) -> Vec<String> {
        let mut cases: Vec<String> = Vec::new();
        for seed in seeds {
            for end in 0..=seed.len() {
                if seed.is_char_boundary(end) {
                    cases.push(seed[..end].to_owned());
                }
            }
            for (at, _) in seed.char_indices() {
                for insert in [",", "]", "}", "\"", " ", "x", "{", "["] {
                    let mut mutated = (*seed).to_owned();
                    mutated.insert_str(at, insert);
                    cases.push(mutated);
                }
                let mut removed = (*seed).to_owned();
                removed.remove(at);
                cases.push(removed);
            }
        }
        cases
    }

    #[test]
    fn texts_agree_with_the_tree_on_every_prefix_and_mutation() {
        let seeds = [
            r#"[{"role":"assistant","parts":[{"type":"text","content":"Let me retry."}]}]"#,
            r#"[{"parts":[{"type":"text","content":"a\u00e9\"b"},[1,2,{"x":null}],3.5e2],"content":"c"},true,null,"s",[{"content":"x"}]]"#,
            r#"  {"parts": [ {"type" : "thinking" , "content":"t"} ] , "content" : "u" }  "#,
        ];
        for case in &mutations(&seeds) {
            assert_eq!(streamed(case), from_tree(case), "{case}");
        }
    }

    /// The calls from the ordered tree (the oracle: what derive.rs read before).
    fn calls_from_tree(text: &str) -> Result<Vec<ToolCall<'_>>, ParseError> {
        let value = json::parse_ordered(text)?;
        let mut out = Vec::new();
        let Value::Array(messages) = &value else {
            return Ok(out);
        };
        for message in messages {
            let Some(Value::Array(parts)) = message.get_last("parts") else {
                continue;
            };
            for part in parts {
                if part.get_last("type").and_then(Value::as_str) != Some("tool_call") {
                    continue;
                }
                let text = |k: &str| {
                    part.get_last(k)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(|s| Cow::Owned(s.to_owned()))
                };
                let Some(name) = text("name") else { continue };
                if out.len() < 2 {
                    out.push(ToolCall {
                        id: text("id"),
                        name,
                        arguments: part.get_last("arguments").cloned(),
                    });
                }
            }
        }
        Ok(out)
    }

    #[test]
    fn tool_calls_agree_with_the_tree_on_every_prefix_and_mutation() {
        let seeds = [
            r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"grep","arguments":{"z":1,"a":[1,2.5,null],"z":3}},{"type":"text","content":"x"},{"name":"","type":"tool_call"}]},{"parts":[{"type":"tool_call","name":"read","id":"","arguments":"{}"},{"type":"tool_call","name":"third"}],"parts":[{"type":"tool_call","name":"last"}]}]"#,
            r#"[{"parts":{"type":"tool_call","name":"not a list"}},[1],{"parts":[{"arguments":{"q":"\u00e9\""},"name":"edit","type":"tool_call","type":"x"}]}]"#,
            r#"{"parts":[{"type":"tool_call","name":"single object"}]}"#,
        ];
        for case in &mutations(&seeds) {
            assert_eq!(tool_calls(case, 2), calls_from_tree(case), "{case}");
        }
    }

    #[test]
    fn nesting_past_the_parsers_depth_is_unsure_as_in_the_tree() {
        let deep = format!(
            r#"[{{"parts":[{{"type":"text","content":"a","x":{}}}]}}]"#,
            "[".repeat(json::MAX_DEPTH) + &"]".repeat(json::MAX_DEPTH)
        );
        assert_eq!(streamed(&deep), from_tree(&deep));
        assert_eq!(streamed(&deep), Err(ParseError::Unsure));
    }
}
