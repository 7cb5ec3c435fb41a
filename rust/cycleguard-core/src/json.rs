//! JSON as the detector reads it: a parser that accepts exactly what `orjson.loads` accepts
//! (or says it cannot vouch for an input), and the canonical writer of
//! `otel_cycleguard.detect.normalize.canonical_json`: `orjson.dumps(value,
//! option=OPT_SORT_KEYS)` byte for byte (keys sorted by code point, no whitespace, non-ASCII
//! kept, control characters escaped, floats in orjson's shortest form).
//!
//! The parser is strict RFC 8259 (what orjson is: no NaN, no trailing commas, no comments, no
//! leading zeros, no lone surrogates, no byte order mark). An integer that fits neither `i64`
//! nor `u64` becomes a float, and a number that overflows to infinity is refused, as in orjson.
//! Where orjson's answer depends on a limit (nesting deeper than [`MAX_DEPTH`]), the parser
//! answers [`ParseError::Unsure`] and the caller asks Python.

use std::borrow::Cow;

/// Deeper documents are left to Python (orjson's limits: 1024 to parse, 254 to write).
pub const MAX_DEPTH: usize = 128;

/// A JSON value. Strings borrow from the parsed text when they hold no escape.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    /// Integers orjson reads as Python ints: `i64` and `u64`.
    Int(i128),
    Float(f64),
    Str(Cow<'a, str>),
    Array(Vec<Value<'a>>),
    /// Keys sorted by code point, each once (the last of duplicates wins, as in a dict).
    Object(Vec<(Cow<'a, str>, Value<'a>)>),
}

impl<'a> Value<'a> {
    /// The value of `key` in an object (None for a missing key or another kind of value).
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            // A few keys: a scan that compares lengths first beats a binary search's calls
            // to memcmp.
            Value::Object(items) if items.len() <= 8 => items
                .iter()
                .find(|(k, _)| k.len() == key.len() && k.as_bytes() == key.as_bytes())
                .map(|(_, v)| v),
            Value::Object(items) => items
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &items[i].1),
            _ => None,
        }
    }

    /// The value of `key` in an object of [`parse_ordered`]: the last entry with it, as in
    /// the dict orjson builds.
    pub fn get_last(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Object(items) => items
                .iter()
                .rev()
                .find(|(k, _)| k.len() == key.len() && k.as_bytes() == key.as_bytes())
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Why a text is not parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not JSON: orjson refuses it too.
    Invalid,
    /// Beyond what this parser vouches for (nesting): ask orjson.
    Unsure,
}

/// `text` parsed as orjson would.
pub fn parse(text: &str) -> Result<Value<'_>, ParseError> {
    parse_mode(text, false).map(|(value, _)| value)
}

/// `text` parsed as Python's `json.loads` would: what orjson reads, and also `NaN`,
/// `Infinity`, `-Infinity`, numbers beyond a double's range and lone surrogate escapes
/// (kept as [`crate::pystr::SURROGATE_BASE`]` + code` so that they stay distinct
/// characters). The flag says whether one of those extensions was used (orjson refuses the
/// text then).
pub fn parse_lenient(text: &str) -> Result<(Value<'_>, bool), ParseError> {
    parse_mode(text, true)
}

/// `text` parsed as orjson would, for values handed to Python as orjson hands them: each
/// object's entries in document order, a repeated key kept each time (a dict built by
/// inserting them in order is orjson's: the first position, the last value). Read entries
/// with [`Value::get_last`]; [`Value::get`] expects sorted objects.
pub fn parse_ordered(text: &str) -> Result<Value<'_>, ParseError> {
    let mut p = Parser::new_ordered(text);
    p.ws();
    let value = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(ParseError::Invalid);
    }
    Ok(value)
}

fn parse_mode(text: &str, lenient: bool) -> Result<(Value<'_>, bool), ParseError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        lenient,
        extended: false,
        ordered: false,
    };
    p.ws();
    let value = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(ParseError::Invalid);
    }
    Ok((value, p.extended))
}

/// The strict parser, also driven piece by piece by readers that stream a known layout
/// (`crate::otlp_json`): `ws`, `peek`, `eat`, `string` and `value` are the same steps
/// `parse` takes, so what they accept is what `parse` accepts.
pub(crate) struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    lenient: bool,
    extended: bool,
    /// Objects in document order, repeated keys kept (see [`parse_ordered`]).
    ordered: bool,
}

impl<'a> Parser<'a> {
    /// A strict parser at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Parser {
            s: text.as_bytes(),
            text,
            i: 0,
            lenient: false,
            extended: false,
            ordered: false,
        }
    }

    /// A strict parser that keeps objects in document order (see [`parse_ordered`]).
    pub(crate) fn new_ordered(text: &'a str) -> Self {
        let mut p = Parser::new(text);
        p.ordered = true;
        p
    }

    /// Whether everything was read.
    pub(crate) fn at_end(&self) -> bool {
        self.i == self.s.len()
    }

    /// Consume `byte` if it is next.
    #[inline]
    pub(crate) fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == byte {
            self.i += 1;
            true
        } else {
            false
        }
    }

    #[inline]
    pub(crate) fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    #[inline]
    pub(crate) fn ws(&mut self) {
        while matches!(self.peek(), b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &[u8], value: Value<'a>) -> Result<Value<'a>, ParseError> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(value)
        } else {
            Err(ParseError::Invalid)
        }
    }

    pub(crate) fn value(&mut self, depth: usize) -> Result<Value<'a>, ParseError> {
        match self.peek() {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => Ok(Value::Str(self.string()?)),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            b'N' if self.lenient => self.extension(b"NaN", f64::NAN),
            b'I' if self.lenient => self.extension(b"Infinity", f64::INFINITY),
            b'-' if self.lenient && self.s[self.i..].starts_with(b"-Infinity") => {
                self.extension(b"-Infinity", f64::NEG_INFINITY)
            }
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(ParseError::Invalid),
        }
    }

    fn extension(&mut self, word: &[u8], value: f64) -> Result<Value<'a>, ParseError> {
        let v = self.literal(word, Value::Float(value))?;
        self.extended = true;
        Ok(v)
    }

    fn array(&mut self, depth: usize) -> Result<Value<'a>, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::Unsure);
        }
        self.i += 1; // [
        let mut items = Vec::new();
        self.ws();
        if self.peek() == b']' {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            items.push(self.value(depth)?);
            self.ws();
            match self.peek() {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(ParseError::Invalid),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value<'a>, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::Unsure);
        }
        self.i += 1; // {
        let mut items: Vec<(Cow<'a, str>, Value<'a>)> = Vec::new();
        self.ws();
        if self.peek() == b'}' {
            self.i += 1;
            return Ok(Value::Object(items));
        }
        loop {
            self.ws();
            if self.peek() != b'"' {
                return Err(ParseError::Invalid);
            }
            let key = self.string()?;
            self.ws();
            if self.peek() != b':' {
                return Err(ParseError::Invalid);
            }
            self.i += 1;
            self.ws();
            let value = self.value(depth)?;
            items.push((key, value));
            self.ws();
            match self.peek() {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    if self.ordered {
                        return Ok(Value::Object(items));
                    }
                    return Ok(Value::Object(sorted_unique(items)));
                }
                _ => return Err(ParseError::Invalid),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self.s.get(self.i..self.i + 4).ok_or(ParseError::Invalid)?;
        let mut v = 0u32;
        for &d in digits {
            v = v * 16 + (d as char).to_digit(16).ok_or(ParseError::Invalid)?;
        }
        self.i += 4;
        Ok(v)
    }

    pub(crate) fn string(&mut self) -> Result<Cow<'a, str>, ParseError> {
        self.i += 1; // "
        let start = self.i;
        // The usual string: no escape, no control character; scanned sixteen bytes at a time.
        self.i = crate::simd::find_escape(self.s, self.i);
        match self.peek() {
            b'"' => {
                let s = &self.text[start..self.i];
                self.i += 1;
                return Ok(Cow::Borrowed(s));
            }
            b'\\' => {}
            _ => return Err(ParseError::Invalid), // a control character, or the end (0)
        }
        let mut out = String::from(&self.text[start..self.i]);
        loop {
            let run = self.i;
            self.i = crate::simd::find_escape(self.s, self.i);
            out.push_str(&self.text[run..self.i]);
            match self.peek() {
                b'"' => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                b'\\' => {
                    self.i += 1;
                    let c = self.peek();
                    self.i += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                let save = self.i;
                                let lo = if self.s.get(self.i..self.i + 2) == Some(b"\\u") {
                                    self.i += 2;
                                    self.hex4()?
                                } else {
                                    0
                                };
                                if (0xDC00..0xE000).contains(&lo) {
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    // a lone high surrogate (json.loads keeps it as it is)
                                    self.i = save;
                                    self.lone_surrogate(hi)?
                                }
                            } else if (0xDC00..0xE000).contains(&hi) {
                                self.lone_surrogate(hi)?
                            } else {
                                hi
                            };
                            out.push(char::from_u32(code).ok_or(ParseError::Invalid)?);
                        }
                        _ => return Err(ParseError::Invalid),
                    }
                }
                _ => return Err(ParseError::Invalid),
            }
        }
    }

    fn lone_surrogate(&mut self, code: u32) -> Result<u32, ParseError> {
        if !self.lenient {
            return Err(ParseError::Invalid);
        }
        self.extended = true;
        Ok(crate::pystr::SURROGATE_BASE + code)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_ascii_digit() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value<'a>, ParseError> {
        let start = self.i;
        if self.peek() == b'-' {
            self.i += 1;
        }
        match self.peek() {
            b'0' => {
                self.i += 1;
                if self.peek().is_ascii_digit() {
                    return Err(ParseError::Invalid); // a leading zero
                }
            }
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return Err(ParseError::Invalid),
        }
        let mut integer = true;
        if self.peek() == b'.' {
            self.i += 1;
            if self.digits() == 0 {
                return Err(ParseError::Invalid);
            }
            integer = false;
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.i += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(ParseError::Invalid);
            }
            integer = false;
        }
        let literal = &self.text[start..self.i];
        if integer {
            if let Ok(v) = literal.parse::<i128>() {
                if (i64::MIN as i128..=u64::MAX as i128).contains(&v) {
                    return Ok(Value::Int(v));
                }
            }
            if self.lenient {
                if literal.len() > 4300 {
                    // Python refuses ints of more than 4300 digits (sys.get_int_max_str_digits)
                    return Err(ParseError::Unsure);
                }
                // json.loads: an int of any size (a number all the same: never a string)
                return Ok(Value::Float(
                    literal.parse::<f64>().unwrap_or(f64::INFINITY),
                ));
            }
        }
        // Rust's parse is correctly rounded, as orjson's is.
        match literal.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Value::Float(v)),
            // json.loads reads an overflow as infinity; orjson refuses it
            Ok(v) if self.lenient => {
                self.extended = true;
                Ok(Value::Float(v))
            }
            _ => Err(ParseError::Invalid), // orjson: "number is infinity when parsed as double"
        }
    }
}

/// Object items sorted by key, the last of equal keys kept (a dict's `d[k] = v` in order).
fn sorted_unique<'a>(mut items: Vec<(Cow<'a, str>, Value<'a>)>) -> Vec<(Cow<'a, str>, Value<'a>)> {
    // Most objects come sorted and without repeats (one key, `{"key", "value"}` pairs): one
    // pass tells, and spares the sort.
    if items
        .windows(2)
        .all(|pair| pair[0].0.as_bytes() < pair[1].0.as_bytes())
    {
        return items;
    }
    // stable: equal keys stay in document order, so the last of each run is the one to keep.
    // A small object sorts in place (insertion sort) and drops its repeats in place: no
    // second vector.
    items.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    items.dedup_by(|later, kept| {
        if later.0 == kept.0 {
            std::mem::swap(later, kept); // the kept slot takes the later value; the earlier goes
            true
        } else {
            false
        }
    });
    items
}

// -- writing ---------------------------------------------------------------------------------

/// Lower-case hex digits (JSON's `\u00XX`, ids' hex).
pub(crate) const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON string as orjson writes it: `"`, `\` and control characters escaped (`\b \t \n
/// \f \r`, else `\u00XX`), everything else (DEL and non-ASCII included) as it is.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut run = 0;
    loop {
        // the next byte to escape, sixteen or eight bytes at a time (text rarely has one)
        let i = crate::simd::find_escape(bytes, run);
        crate::copy::copy_run(out, &bytes[run..i]);
        if i >= bytes.len() {
            break;
        }
        let b = bytes[i];
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            _ => b"",
        };
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        } else {
            out.extend_from_slice(escape);
        }
        run = i + 1;
    }
    out.push(b'"');
}

/// A float as orjson writes it: `null` for NaN and infinities, else the shortest round-trip
/// digits (ryu's layout) with a `+` on a positive exponent (`1e+16`, `1e-7`, `0.00001`).
pub fn write_float(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    let mut buf = ryu::Buffer::new();
    let s = buf.format_finite(v).as_bytes();
    match s.iter().position(|&b| b == b'e') {
        Some(e) if s.get(e + 1) != Some(&b'-') => {
            out.extend_from_slice(&s[..=e]);
            out.push(b'+');
            out.extend_from_slice(&s[e + 1..]);
        }
        _ => out.extend_from_slice(s),
    }
}

/// An integer in decimal (no allocation).
pub fn write_int(out: &mut Vec<u8>, v: i128) {
    let mut digits = [0u8; 40];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[i..]);
}

/// The canonical JSON of a value (keys are sorted already).
pub fn write(out: &mut Vec<u8>, value: &Value<'_>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(v) => write_int(out, *v),
        Value::Float(v) => write_float(out, *v),
        Value::Str(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        Value::Object(items) => {
            out.push(b'{');
            for (i, (key, item)) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write(out, item);
            }
            out.push(b'}');
        }
    }
}

/// `canonical_json` of a text that starts (after whitespace) with `{` or `[`: the canonical
/// JSON of what it parses to; `Ok(None)` when it is not JSON (the caller takes the text).
pub fn canonical_text(text: &str) -> Result<Option<Vec<u8>>, ParseError> {
    match parse(text) {
        Ok(value) => {
            let mut out = Vec::with_capacity(text.len());
            write(&mut out, &value);
            Ok(Some(out))
        }
        Err(ParseError::Invalid) => Ok(None),
        Err(ParseError::Unsure) => Err(ParseError::Unsure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(text: &str) -> String {
        let mut out = Vec::new();
        write(&mut out, &parse(text).unwrap());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_orjson_escapes_them_at_every_position() {
        for n in 0..40 {
            for at in 0..n {
                for special in [b'"', b'\\', b'\n', 0x01, 0x7f] {
                    let mut text = vec![b'a'; n];
                    text[at] = special;
                    let text = String::from_utf8(text).unwrap();
                    let mut out = Vec::new();
                    write_str(&mut out, &text);
                    let expected = escaped_char_by_char(&text);
                    assert_eq!(String::from_utf8(out).unwrap(), expected, "{n} {at}");
                }
            }
        }
    }

    /// The reference escaping, byte by byte.
    fn escaped_char_by_char(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    #[test]
    fn sorts_keys_and_drops_whitespace() {
        assert_eq!(
            canon(r#" {"b": 1, "a": [true, null, "x"]} "#),
            r#"{"a":[true,null,"x"],"b":1}"#
        );
    }

    #[test]
    fn the_last_duplicate_key_wins() {
        assert_eq!(canon(r#"{"a":1,"b":2,"a":3}"#), r#"{"a":3,"b":2}"#);
        assert_eq!(
            canon(r#"{"b":1,"a":2,"b":3,"a":4,"b":5}"#),
            r#"{"a":4,"b":5}"#
        );
    }

    #[test]
    fn ordered_parsing_keeps_document_order_and_reads_the_last_repeat() {
        let value = parse_ordered(r#"{"z":1,"a":{"y":2,"b":3},"z":4}"#).unwrap();
        let Value::Object(entries) = &value else {
            panic!("an object")
        };
        let keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["z", "a", "z"]);
        assert_eq!(value.get_last("z"), Some(&Value::Int(4)));
        assert_eq!(value.get_last("missing"), None);
        assert_eq!(parse_ordered("[1,"), Err(ParseError::Invalid));
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse_ordered(&deep), Err(ParseError::Unsure));
    }

    #[test]
    fn numbers_as_orjson_reads_and_writes_them() {
        assert_eq!(
            canon("[-0, -0.0, 1e2, 0.1e1, 1e-7, 1e-5, 1e16, 1e15]"),
            "[0,-0.0,100.0,1.0,1e-7,0.00001,1e+16,1000000000000000.0]"
        );
        assert_eq!(canon("18446744073709551615"), "18446744073709551615");
        assert_eq!(canon("18446744073709551616"), "1.8446744073709552e+19");
        assert_eq!(canon("-9223372036854775809"), "-9.223372036854776e+18");
        assert_eq!(parse("1e400"), Err(ParseError::Invalid));
    }

    #[test]
    fn strings_escape_what_orjson_escapes() {
        assert_eq!(
            canon(r#""\u0001\b\t\n\f\r\"\\\/\u007f\u00e9\ud83d\ude00""#),
            "\"\\u0001\\b\\t\\n\\f\\r\\\"\\\\/\u{7f}\u{e9}\u{1f600}\""
        );
    }

    #[test]
    fn refuses_what_orjson_refuses() {
        for bad in [
            "01",
            "1.",
            ".5",
            "+1",
            "-",
            "1e",
            "[1 2]",
            "{'a':1}",
            r#""\x""#,
            "\"\t\"",
            "[1,]",
            "{\"a\":1,}",
            "NaN",
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            "[1] x",
            "\u{feff}[1]",
            "[] \u{a0}",
            "nul",
            "2.e3",
        ] {
            assert_eq!(parse(bad), Err(ParseError::Invalid), "{bad}");
        }
    }

    #[test]
    fn the_lenient_reading_is_json_loads() {
        let (v, extended) =
            parse_lenient(r#"{"a": NaN, "b": [Infinity, -Infinity, 1e999]}"#).unwrap();
        assert!(extended && v.get("a").is_some());
        let (v, extended) = parse_lenient(r#"["\ud800x", "\udc00", "\ud83d\ude00"]"#).unwrap();
        assert!(extended);
        let Value::Array(items) = v else { panic!() };
        let lone = char::from_u32(crate::pystr::SURROGATE_BASE + 0xD800).unwrap();
        assert_eq!(items[0].as_str(), Some(format!("{lone}x").as_str()));
        assert_eq!(items[2].as_str(), Some("\u{1f600}"));
        assert!(!parse_lenient("[1]").unwrap().1);
        assert_eq!(parse_lenient("[01]"), Err(ParseError::Invalid));
    }

    #[test]
    fn deep_nesting_is_left_to_python() {
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(parse(&deep), Err(ParseError::Unsure));
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(parse(&ok).is_ok());
    }
}
