//! One OTLP/JSON document (`{"resourceSpans": [...]}`, a line of an exported JSON-lines
//! file or an OTLP/HTTP JSON body) straight to `SpanData` objects: the fast path of
//! `otel_cycleguard.wire.otlp_json.spans_from_json`, without orjson's dicts and the Python
//! conversion loop over them.
//!
//! It gives exactly what parsing with orjson and converting with `spans_from_resource_spans`
//! gives, on the input it accepts: a document in which every span converts. For anything
//! else it answers [`Stop::Unusual`] and the Python path decides, keeping its verdicts and
//! its worded reasons: text that is not JSON (or that [`json::parse`] cannot vouch for),
//! a span the Python path would skip (missing or all-zero ids, no name, a value of the
//! wrong type), and the forms that only the general Python code reads: ids in base64 or
//! upper-case hex, integers written other than as plain decimal digits (or longer than
//! 38 of them), numbers with a fraction where an integer belongs, truthy values of the
//! wrong type where Python's `x or default` would go on with them.
//!
//! The document is read in one pass, the way its layout nests (document, `resourceSpans`,
//! scopes, spans, attributes), with the steps of the strict parser (`crate::json`), so it
//! accepts exactly the JSON orjson accepts; a span's small fields (ids, times, status,
//! events) and each attribute's `AnyValue` are parsed as values and read like the Python
//! dicts. Keys are matched as they come: an unknown key's value is parsed and dropped, a
//! known key given twice (orjson would keep the last) is unusual.
//!
//! The Python rules it mirrors, field by field (`wire/otlp_json.py`): ids are lowercase hex
//! of the exact width (an all-zero parent is no parent); times and counts are `int(x or 0)`;
//! a status is an error when its `code` is 2, `"2"`, `"STATUS_CODE_ERROR"` or `"ERROR"`;
//! attribute values unwrap one `AnyValue` kind (the first present, in `any_value`'s order),
//! arrays to tuples and key-value lists to dicts, cut (None) past the depth limit; a value
//! that unwraps to None is left out of its dict. The resource dict is shared by the spans
//! of its `resourceSpans` entry.

use crate::json::{Parser, Value};
use crate::otlp_proto::{Classes, Stop, StringCache};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};
use std::borrow::Cow;

type Decoding<T> = Result<T, Stop>;

/// Hex digits of a trace id and a span id.
const TRACE_HEX: usize = 32;
const SPAN_HEX: usize = 16;

/// Status codes that mark an error (`_ERROR_CODES`).
const ERROR_CODES: [&str; 3] = ["2", "STATUS_CODE_ERROR", "ERROR"];

/// `AnyValue` kinds in the order `any_value` tests them when a value has several keys.
const KINDS: [&str; 7] = [
    "stringValue",
    "intValue",
    "boolValue",
    "doubleValue",
    "arrayValue",
    "kvlistValue",
    "bytesValue",
];

/// Decode one document; `depth_limit` is the Python path's `MAX_VALUE_DEPTH`.
pub fn decode<'py>(
    py: Python<'py>,
    body: &[u8],
    classes: &Classes,
    depth_limit: usize,
) -> Decoding<Bound<'py, PyList>> {
    let text = std::str::from_utf8(body).map_err(|_| Stop::Unusual)?;
    let mut decoder = Decoder {
        py,
        classes,
        limit: depth_limit,
        p: Parser::new(text),
        keys: StringCache::new(),
        last_trace: None,
        last_parent: None,
        spans: PyList::empty(py),
    };
    decoder.document()?;
    Ok(decoder.spans)
}

/// How deep each level of the layout sits (arrays and objects around it), for the parser's
/// depth limit on the values read there: document 1, `resourceSpans` entry 3, its resource
/// 4, a scope 5, a span 7.
const DOCUMENT_DEPTH: usize = 1;
const BLOCK_DEPTH: usize = 3;
const RESOURCE_DEPTH: usize = 4;
const SCOPE_DEPTH: usize = 5;
const SPAN_DEPTH: usize = 7;

struct Decoder<'c, 'a, 'py> {
    py: Python<'py>,
    classes: &'c Classes,
    limit: usize,
    p: Parser<'a>,
    /// Attribute keys (those without escapes, borrowed from the text): a document repeats a
    /// few dozen.
    keys: StringCache<'a, 'py>,
    /// The last trace id and parent id read, with their `str`: a document's spans share a few.
    last_trace: Option<(&'a str, Bound<'py, PyString>)>,
    last_parent: Option<(&'a str, Bound<'py, PyString>)>,
    spans: Bound<'py, PyList>,
}

/// A span's fields as read, before they are checked (any order in the object).
#[derive(Default)]
struct SpanFields<'a, 'py> {
    trace_id: Option<Value<'a>>,
    span_id: Option<Value<'a>>,
    parent_id: Option<Value<'a>>,
    name: Option<Value<'a>>,
    start: Option<Value<'a>>,
    end: Option<Value<'a>>,
    status: Option<Value<'a>>,
    events: Option<Value<'a>>,
    attributes: Option<Bound<'py, PyDict>>,
}

/// Mark a key seen; seen twice is unusual (orjson would keep the last value).
fn first_time(seen: &mut bool) -> Decoding<()> {
    if std::mem::replace(seen, true) {
        return Err(Stop::Unusual);
    }
    Ok(())
}

/// Store `value` in a field read once; a second one is unusual.
fn once<T>(slot: &mut Option<T>, value: T) -> Decoding<()> {
    if slot.is_some() {
        return Err(Stop::Unusual);
    }
    *slot = Some(value);
    Ok(())
}

/// Python's truth value of a JSON value (`x or default` takes the default when false).
fn falsy(value: &Value<'_>) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Int(n) => *n == 0,
        Value::Float(f) => *f == 0.0,
        Value::Str(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(items) => items.is_empty(),
        Value::Bool(true) => false,
    }
}

/// `object.get(key)` taken as `get(key) or default`: None for a missing or false value.
fn truthy<'v, 't>(object: &'v Value<'t>, key: &str) -> Option<&'v Value<'t>> {
    object.get(key).filter(|value| !falsy(value))
}

/// A list where Python iterates `x or ()`: the items of an array, none for a false value.
fn items<'v, 't>(value: Option<&'v Value<'t>>) -> Decoding<&'v [Value<'t>]> {
    match value {
        None => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(other) if falsy(other) => Ok(&[]),
        Some(_) => Err(Stop::Unusual),
    }
}

/// `int(text)` for what it most often is, plain decimal digits with an optional minus (up
/// to 38 of them: nanosecond times have 19); the rest of what Python's `int` reads (a plus
/// sign, spaces, underscores, longer numbers) is unusual.
fn decimal(text: &str) -> Decoding<i128> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || digits.len() > 38 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Stop::Unusual);
    }
    text.parse::<i128>().map_err(|_| Stop::Unusual)
}

/// `int(value or 0)` for a time or a count.
fn integer(value: Option<&Value<'_>>) -> Decoding<i128> {
    match value {
        None => Ok(0),
        Some(Value::Int(n)) => Ok(*n),
        Some(Value::Str(s)) if !s.is_empty() => decimal(s),
        Some(Value::Bool(true)) | Some(Value::Float(_)) => Err(Stop::Unusual),
        Some(other) if falsy(other) => Ok(0),
        Some(_) => Err(Stop::Unusual),
    }
}

/// Lowercase hex of `width` digits, as `hex_id`'s fast path takes it; `Some(false)` when it
/// is all zeros (no id), None for any other form (unusual here).
fn plain_hex(text: &str, width: usize) -> Option<bool> {
    let bytes = text.as_bytes();
    if bytes.len() != width || !bytes.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    Some(bytes.iter().any(|&b| b != b'0'))
}

impl<'a, 'py> Decoder<'_, 'a, 'py> {
    // -- the parser's steps ----------------------------------------------------------------

    fn value(&mut self, depth: usize) -> Decoding<Value<'a>> {
        self.p.value(depth).map_err(|_| Stop::Unusual)
    }

    /// After `{` (or a value in the object): the next key, its `:` read, or None at `}`.
    fn key(&mut self, first: bool) -> Decoding<Option<Cow<'a, str>>> {
        self.p.ws();
        if first {
            if self.p.eat(b'}') {
                return Ok(None);
            }
        } else if self.p.eat(b',') {
            self.p.ws();
        } else if self.p.eat(b'}') {
            return Ok(None);
        } else {
            return Err(Stop::Unusual);
        }
        if self.p.peek() != b'"' {
            return Err(Stop::Unusual);
        }
        let key = self.p.string().map_err(|_| Stop::Unusual)?;
        self.p.ws();
        if !self.p.eat(b':') {
            return Err(Stop::Unusual);
        }
        self.p.ws();
        Ok(Some(key))
    }

    /// After `[` (or an element): whether another element follows (the parser is at it).
    fn element(&mut self, first: bool) -> Decoding<bool> {
        self.p.ws();
        if first {
            return Ok(!self.p.eat(b']'));
        }
        if self.p.eat(b',') {
            self.p.ws();
            Ok(true)
        } else if self.p.eat(b']') {
            Ok(false)
        } else {
            Err(Stop::Unusual)
        }
    }

    /// At a value Python iterates as `x or ()`: true when it is an array (its `[` read),
    /// false when it is a false value (read); anything else is unusual.
    fn open_list(&mut self, depth: usize) -> Decoding<bool> {
        if self.p.eat(b'[') {
            return Ok(true);
        }
        let value = self.value(depth)?;
        if falsy(&value) {
            Ok(false)
        } else {
            Err(Stop::Unusual)
        }
    }

    /// The `str` of a key: from the cache when it is borrowed from the text.
    // A `&Cow`, not a `&str`: whether the text is borrowed (and lives as long as the cache)
    // is what decides.
    #[allow(clippy::ptr_arg)]
    fn key_str(&mut self, key: &Cow<'a, str>) -> Bound<'py, PyString> {
        match key {
            Cow::Borrowed(text) => self.keys.get(self.py, text),
            Cow::Owned(text) => PyString::new(self.py, text),
        }
    }

    // -- the layout ------------------------------------------------------------------------

    fn document(&mut self) -> Decoding<()> {
        self.p.ws();
        if !self.p.eat(b'{') {
            return Err(Stop::Unusual);
        }
        let mut found = false;
        let mut first = true;
        while let Some(key) = self.key(first)? {
            first = false;
            if key == "resourceSpans" {
                // another format, or resourceSpans of another type: Python decides
                if found || !self.p.eat(b'[') {
                    return Err(Stop::Unusual);
                }
                found = true;
                let mut first_block = true;
                while self.element(first_block)? {
                    first_block = false;
                    self.block()?;
                }
            } else {
                self.value(DOCUMENT_DEPTH)?;
            }
        }
        self.p.ws();
        if !found || !self.p.at_end() {
            return Err(Stop::Unusual);
        }
        Ok(())
    }

    /// One `resourceSpans` entry: its resource, then the spans of each of its scopes. The
    /// resource dict is made first and filled when its key comes, so spans read before it
    /// share it too; `scopeSpans` is read unless false, then `instrumentationLibrarySpans`.
    fn block(&mut self) -> Decoding<()> {
        if !self.p.eat(b'{') {
            return Err(Stop::Unusual);
        }
        let resource = PyDict::new(self.py);
        let mut seen_resource = false;
        let mut seen_lists = [false; 2]; // scopeSpans, instrumentationLibrarySpans
        let mut read_list: Option<usize> = None;
        let mut first = true;
        while let Some(key) = self.key(first)? {
            first = false;
            let list = match key.as_ref() {
                "scopeSpans" => 0,
                "instrumentationLibrarySpans" => 1,
                "resource" => {
                    first_time(&mut seen_resource)?;
                    self.resource(&resource)?;
                    continue;
                }
                _ => {
                    self.value(BLOCK_DEPTH)?;
                    continue;
                }
            };
            first_time(&mut seen_lists[list])?;
            if !self.open_list(BLOCK_DEPTH)? {
                continue;
            }
            // both lists holding scopes: which one Python reads depends on the order here
            if read_list.is_some() {
                return Err(Stop::Unusual);
            }
            let mut first_scope = true;
            while self.element(first_scope)? {
                first_scope = false;
                self.scope(&resource)?;
            }
            // an empty array is false: Python would read the other list
            read_list = (!first_scope).then_some(list);
        }
        Ok(())
    }

    fn resource(&mut self, resource: &Bound<'py, PyDict>) -> Decoding<()> {
        if !self.p.eat(b'{') {
            let value = self.value(BLOCK_DEPTH)?;
            return if falsy(&value) {
                Ok(())
            } else {
                Err(Stop::Unusual)
            };
        }
        let mut seen = false;
        let mut first = true;
        while let Some(key) = self.key(first)? {
            first = false;
            if key == "attributes" {
                first_time(&mut seen)?;
                self.attributes_into(resource, RESOURCE_DEPTH)?;
            } else {
                self.value(RESOURCE_DEPTH)?;
            }
        }
        Ok(())
    }

    fn scope(&mut self, resource: &Bound<'py, PyDict>) -> Decoding<()> {
        if !self.p.eat(b'{') {
            return Err(Stop::Unusual);
        }
        let mut seen = false;
        let mut first = true;
        while let Some(key) = self.key(first)? {
            first = false;
            if key != "spans" {
                self.value(SCOPE_DEPTH)?;
                continue;
            }
            first_time(&mut seen)?;
            if !self.open_list(SCOPE_DEPTH)? {
                continue;
            }
            let mut first_span = true;
            while self.element(first_span)? {
                first_span = false;
                let span = self.span(resource)?;
                self.spans.append(span)?;
            }
        }
        Ok(())
    }

    fn span(&mut self, resource: &Bound<'py, PyDict>) -> Decoding<Bound<'py, PyAny>> {
        if !self.p.eat(b'{') {
            return Err(Stop::Unusual);
        }
        let mut fields = SpanFields::default();
        let mut first = true;
        while let Some(key) = self.key(first)? {
            first = false;
            let slot = match key.as_ref() {
                "attributes" => {
                    let dict = PyDict::new(self.py);
                    self.attributes_into(&dict, SPAN_DEPTH)?;
                    once(&mut fields.attributes, dict)?;
                    continue;
                }
                "traceId" => &mut fields.trace_id,
                "spanId" => &mut fields.span_id,
                "parentSpanId" => &mut fields.parent_id,
                "name" => &mut fields.name,
                "startTimeUnixNano" => &mut fields.start,
                "endTimeUnixNano" => &mut fields.end,
                "status" => &mut fields.status,
                "events" => &mut fields.events,
                _ => {
                    self.value(SPAN_DEPTH)?;
                    continue;
                }
            };
            let value = self.p.value(SPAN_DEPTH).map_err(|_| Stop::Unusual)?;
            once(slot, value)?;
        }
        self.make_span(fields, resource)
    }

    fn make_span(
        &mut self,
        fields: SpanFields<'a, 'py>,
        resource: &Bound<'py, PyDict>,
    ) -> Decoding<Bound<'py, PyAny>> {
        let py = self.py;
        let trace_id = self.trace_id(fields.trace_id.as_ref())?;
        let span_id = match &fields.span_id {
            Some(Value::Str(id)) if plain_hex(id, SPAN_HEX) == Some(true) => PyString::new(py, id),
            _ => return Err(Stop::Unusual),
        };
        let name = match &fields.name {
            Some(Value::Str(name)) if !name.is_empty() => PyString::new(py, name),
            _ => return Err(Stop::Unusual),
        };
        let parent = self.parent_id(fields.parent_id.as_ref())?;
        let start = integer(fields.start.as_ref())?.into_pyobject(py)?;
        let end = integer(fields.end.as_ref())?.into_pyobject(py)?;
        let attributes = match fields.attributes {
            Some(dict) => dict,
            None => PyDict::new(py),
        };
        let events = self.events(fields.events.as_ref())?;
        let (status_error, status_message) = self.status(fields.status.as_ref())?;
        let span = self.classes.span.make(
            self.py,
            &[
                trace_id.as_any(),
                span_id.as_any(),
                name.as_any(),
                &parent,
                start.as_any(),
                end.as_any(),
                attributes.as_any(),
                events.as_any(),
                status_error.as_any(),
                &status_message,
                resource.as_any(),
            ],
        )?;
        Ok(span)
    }

    fn trace_id(&mut self, value: Option<&Value<'a>>) -> Decoding<Bound<'py, PyString>> {
        let Some(Value::Str(id)) = value else {
            return Err(Stop::Unusual);
        };
        if let Some((raw, obj)) = &self.last_trace {
            if *raw == id.as_ref() {
                return Ok(obj.clone());
            }
        }
        if plain_hex(id, TRACE_HEX) != Some(true) {
            return Err(Stop::Unusual); // all zeros (a span Python skips), or another form
        }
        let obj = PyString::new(self.py, id);
        if let Cow::Borrowed(text) = id {
            self.last_trace = Some((text, obj.clone()));
        }
        Ok(obj)
    }

    /// The parent id, or None: absent, null, empty or all zeros.
    fn parent_id(&mut self, value: Option<&Value<'a>>) -> Decoding<Bound<'py, PyAny>> {
        let py = self.py;
        let id = match value {
            None | Some(Value::Null) => return Ok(py.None().into_bound(py)),
            Some(Value::Str(id)) => id,
            Some(_) => return Err(Stop::Unusual),
        };
        if id.is_empty() {
            return Ok(py.None().into_bound(py));
        }
        if let Some((raw, obj)) = &self.last_parent {
            if *raw == id.as_ref() {
                return Ok(obj.clone().into_any());
            }
        }
        match plain_hex(id, SPAN_HEX) {
            Some(true) => {
                let obj = PyString::new(py, id);
                if let Cow::Borrowed(text) = id {
                    self.last_parent = Some((text, obj.clone()));
                }
                Ok(obj.into_any())
            }
            Some(false) => Ok(py.None().into_bound(py)),
            None => Err(Stop::Unusual),
        }
    }

    /// `(status_error, status_message)`.
    fn status(
        &self,
        value: Option<&Value<'_>>,
    ) -> Decoding<(Bound<'py, PyBool>, Bound<'py, PyAny>)> {
        let py = self.py;
        let none = py.None().into_bound(py);
        let status = match value {
            None => return Ok((PyBool::new(py, false).to_owned(), none)),
            Some(status) if falsy(status) => return Ok((PyBool::new(py, false).to_owned(), none)),
            Some(status @ Value::Object(_)) => status,
            Some(_) => return Err(Stop::Unusual),
        };
        let error = match status.get("code") {
            None | Some(Value::Null) | Some(Value::Bool(_)) => false,
            Some(Value::Int(code)) => *code == 2,
            Some(Value::Str(code)) => ERROR_CODES.contains(&code.as_ref()),
            Some(_) => return Err(Stop::Unusual),
        };
        let message = match truthy(status, "message") {
            None => none,
            Some(Value::Str(text)) => PyString::new(py, text).into_any(),
            Some(_) => return Err(Stop::Unusual),
        };
        Ok((PyBool::new(py, error).to_owned(), message))
    }

    fn events(&mut self, value: Option<&Value<'a>>) -> Decoding<Bound<'py, PyTuple>> {
        let py = self.py;
        let events = items(value)?;
        if events.is_empty() {
            return Ok(PyTuple::empty(py));
        }
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            if !matches!(event, Value::Object(_)) {
                return Err(Stop::Unusual);
            }
            let name = match truthy(event, "name") {
                None => PyString::new(py, ""),
                Some(Value::Str(name)) => PyString::new(py, name),
                Some(_) => return Err(Stop::Unusual),
            };
            let attributes = self.attributes(event.get("attributes"), 0)?;
            let time = integer(event.get("timeUnixNano"))?.into_pyobject(py)?;
            out.push(self.classes.event.make(
                self.py,
                &[name.as_any(), attributes.as_any(), time.as_any()],
            )?);
        }
        Ok(PyTuple::new(py, out)?)
    }

    /// A `KeyValue` list read from the text into `dict` (`attributes`, depth 0).
    fn attributes_into(&mut self, dict: &Bound<'py, PyDict>, depth: usize) -> Decoding<()> {
        if !self.open_list(depth)? {
            return Ok(());
        }
        let mut first_item = true;
        while self.element(first_item)? {
            first_item = false;
            if !self.p.eat(b'{') {
                return Err(Stop::Unusual);
            }
            let mut key: Option<Cow<'a, str>> = None;
            let mut value: Option<Value<'a>> = None;
            let mut first = true;
            while let Some(field) = self.key(first)? {
                first = false;
                match field.as_ref() {
                    "key" => {
                        if self.p.peek() != b'"' {
                            return Err(Stop::Unusual); // a key Python would keep as it is
                        }
                        let text = self.p.string().map_err(|_| Stop::Unusual)?;
                        once(&mut key, text)?;
                    }
                    "value" => {
                        let parsed = self.value(depth + 2)?;
                        once(&mut value, parsed)?;
                    }
                    _ => {
                        self.value(depth + 2)?;
                    }
                }
            }
            let Some(key) = key else {
                return Err(Stop::Unusual); // no key: Python words the error
            };
            if let Some(unwrapped) = self.item_value(value.as_ref(), 0)? {
                let key = self.key_str(&key);
                dict.set_item(key, unwrapped)?;
            }
        }
        Ok(())
    }

    /// A `KeyValue` list already parsed (events, nested key-value lists) to a dict.
    fn attributes(
        &mut self,
        value: Option<&Value<'a>>,
        depth: usize,
    ) -> Decoding<Bound<'py, PyDict>> {
        let dict = PyDict::new(self.py);
        for item in items(value)? {
            if !matches!(item, Value::Object(_)) {
                return Err(Stop::Unusual);
            }
            let Some(Value::Str(key)) = item.get("key") else {
                return Err(Stop::Unusual); // missing, or a key Python would keep as it is
            };
            if let Some(unwrapped) = self.item_value(item.get("value"), depth)? {
                let key = self.key_str(key);
                dict.set_item(key, unwrapped)?;
            }
        }
        Ok(dict)
    }

    /// A `KeyValue`'s `value`, unwrapped; None leaves the key out.
    fn item_value(
        &mut self,
        value: Option<&Value<'a>>,
        depth: usize,
    ) -> Decoding<Option<Bound<'py, PyAny>>> {
        match value {
            None => Ok(None),
            Some(value @ Value::Object(_)) => self.any_value(value, depth),
            Some(value) if falsy(value) => Ok(None), // `value or {}`: nothing to unwrap
            Some(_) => Err(Stop::Unusual),
        }
    }

    /// One `AnyValue` object (`any_value`); None where Python gives None.
    fn any_value(
        &mut self,
        value: &Value<'a>,
        depth: usize,
    ) -> Decoding<Option<Bound<'py, PyAny>>> {
        let Value::Object(fields) = value else {
            return Err(Stop::Unusual);
        };
        let found = match fields.as_slice() {
            [] => None,
            [(kind, inner)] => KINDS
                .contains(&kind.as_ref())
                .then_some((kind.as_ref(), inner)),
            _ => KINDS
                .iter()
                .find_map(|kind| value.get(kind).map(|inner| (*kind, inner))),
        };
        let Some((kind, inner)) = found else {
            return Ok(None);
        };
        let py = self.py;
        let unwrapped = match (kind, inner) {
            ("stringValue", Value::Str(text)) | ("bytesValue", Value::Str(text)) => {
                PyString::new(py, text).into_any()
            }
            ("intValue", Value::Int(n)) => n.into_pyobject(py)?.into_any(),
            ("intValue", Value::Str(text)) => decimal(text)?.into_pyobject(py)?.into_any(),
            ("boolValue", Value::Bool(flag)) => PyBool::new(py, *flag).to_owned().into_any(),
            ("doubleValue", Value::Float(real)) => PyFloat::new(py, *real).into_any(),
            ("doubleValue", Value::Int(n)) => PyFloat::new(py, *n as f64).into_any(),
            ("arrayValue", array) => {
                if depth + 1 > self.limit {
                    return Ok(None);
                }
                if !matches!(array, Value::Object(_)) {
                    return Err(Stop::Unusual);
                }
                let elements = match array.get("values") {
                    None => &[][..],
                    Some(Value::Array(elements)) => elements.as_slice(),
                    Some(_) => return Err(Stop::Unusual),
                };
                let mut out = Vec::with_capacity(elements.len());
                for element in elements {
                    match self.any_value(element, depth + 1)? {
                        Some(element) => out.push(element),
                        None => out.push(py.None().into_bound(py)),
                    }
                }
                PyTuple::new(py, out)?.into_any()
            }
            ("kvlistValue", kvlist) => {
                if depth + 1 > self.limit {
                    return Ok(None);
                }
                if !matches!(kvlist, Value::Object(_)) {
                    return Err(Stop::Unusual);
                }
                self.attributes(kvlist.get("values"), depth + 1)?.into_any()
            }
            _ => return Err(Stop::Unusual), // a value of the wrong type: Python words the error
        };
        Ok(Some(unwrapped))
    }
}
