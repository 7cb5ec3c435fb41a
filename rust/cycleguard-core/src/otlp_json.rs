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
//! The Python rules it mirrors, field by field (`wire/otlp_json.py`): ids are lowercase hex
//! of the exact width (an all-zero parent is no parent); times and counts are `int(x or 0)`;
//! a status is an error when its `code` is 2, `"2"`, `"STATUS_CODE_ERROR"` or `"ERROR"`;
//! attribute values unwrap one `AnyValue` kind (the first present, in `any_value`'s order),
//! arrays to tuples and key-value lists to dicts, cut (None) past the depth limit; a value
//! that unwraps to None is left out of its dict. The resource dict is shared by the spans
//! of its `resourceSpans` entry.

use crate::json::{self, Value};
use crate::otlp_proto::{Classes, Stop, StringCache};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple};

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
    classes: &Classes<'py>,
    depth_limit: usize,
) -> Decoding<Bound<'py, PyList>> {
    let text = std::str::from_utf8(body).map_err(|_| Stop::Unusual)?;
    let document = json::parse(text).map_err(|_| Stop::Unusual)?;
    let mut decoder = Decoder {
        py,
        classes,
        limit: depth_limit,
        keys: StringCache::new(),
        last_trace: None,
        last_parent: None,
        spans: PyList::empty(py),
    };
    decoder.document(&document)?;
    Ok(decoder.spans)
}

struct Decoder<'c, 't, 'py> {
    py: Python<'py>,
    classes: &'c Classes<'py>,
    limit: usize,
    /// Attribute keys: a document repeats a few dozen.
    keys: StringCache<'t, 'py>,
    /// The last trace id and parent id read, with their `str`: a document's spans share a few.
    last_trace: Option<(&'t str, Bound<'py, PyString>)>,
    last_parent: Option<(&'t str, Bound<'py, PyString>)>,
    spans: Bound<'py, PyList>,
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

impl<'c, 't, 'py> Decoder<'c, 't, 'py> {
    fn document(&mut self, document: &'t Value<'t>) -> Decoding<()> {
        let Some(Value::Array(blocks)) = document.get("resourceSpans") else {
            return Err(Stop::Unusual); // another format, or resourceSpans of another type
        };
        for block in blocks {
            self.block(block)?;
        }
        Ok(())
    }

    /// One `resourceSpans` entry: its resource, then the spans of each of its scopes.
    fn block(&mut self, block: &'t Value<'t>) -> Decoding<()> {
        if !matches!(block, Value::Object(_)) {
            return Err(Stop::Unusual);
        }
        let resource = match truthy(block, "resource") {
            None => PyDict::new(self.py),
            Some(resource @ Value::Object(_)) => self.attributes(resource.get("attributes"), 0)?,
            Some(_) => return Err(Stop::Unusual),
        };
        let scopes =
            truthy(block, "scopeSpans").or_else(|| truthy(block, "instrumentationLibrarySpans"));
        for scope in items(scopes)? {
            if !matches!(scope, Value::Object(_)) {
                return Err(Stop::Unusual);
            }
            for span in items(scope.get("spans"))? {
                let converted = self.span(span, &resource)?;
                self.spans.append(converted)?;
            }
        }
        Ok(())
    }

    fn span(
        &mut self,
        span: &'t Value<'t>,
        resource: &Bound<'py, PyDict>,
    ) -> Decoding<Bound<'py, PyAny>> {
        if !matches!(span, Value::Object(_)) {
            return Err(Stop::Unusual);
        }
        let py = self.py;
        let trace_id = self.trace_id(span.get("traceId"))?;
        let span_id = match span.get("spanId") {
            Some(Value::Str(id)) if plain_hex(id, SPAN_HEX) == Some(true) => PyString::new(py, id),
            _ => return Err(Stop::Unusual),
        };
        let name = match span.get("name") {
            Some(Value::Str(name)) if !name.is_empty() => PyString::new(py, name),
            _ => return Err(Stop::Unusual),
        };
        let parent = self.parent_id(span.get("parentSpanId"))?;
        let start = integer(span.get("startTimeUnixNano"))?.into_pyobject(py)?;
        let end = integer(span.get("endTimeUnixNano"))?.into_pyobject(py)?;
        let attributes = self.attributes(span.get("attributes"), 0)?;
        let events = self.events(span.get("events"))?;
        let (status_error, status_message) = self.status(span.get("status"))?;
        let span = self.classes.span.make(&[
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
        ])?;
        Ok(span)
    }

    fn trace_id(&mut self, value: Option<&'t Value<'t>>) -> Decoding<Bound<'py, PyString>> {
        let Some(Value::Str(id)) = value else {
            return Err(Stop::Unusual);
        };
        let id: &'t str = id;
        if let Some((raw, obj)) = &self.last_trace {
            if *raw == id {
                return Ok(obj.clone());
            }
        }
        if plain_hex(id, TRACE_HEX) != Some(true) {
            return Err(Stop::Unusual); // all zeros (a span Python skips), or another form
        }
        let obj = PyString::new(self.py, id);
        self.last_trace = Some((id, obj.clone()));
        Ok(obj)
    }

    /// The parent id, or None: absent, null, empty or all zeros.
    fn parent_id(&mut self, value: Option<&'t Value<'t>>) -> Decoding<Bound<'py, PyAny>> {
        let py = self.py;
        let id: &'t str = match value {
            None | Some(Value::Null) => return Ok(py.None().into_bound(py)),
            Some(Value::Str(id)) => id,
            Some(_) => return Err(Stop::Unusual),
        };
        if id.is_empty() {
            return Ok(py.None().into_bound(py));
        }
        if let Some((raw, obj)) = &self.last_parent {
            if *raw == id {
                return Ok(obj.clone().into_any());
            }
        }
        match plain_hex(id, SPAN_HEX) {
            Some(true) => {
                let obj = PyString::new(py, id);
                self.last_parent = Some((id, obj.clone()));
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

    fn events(&mut self, value: Option<&'t Value<'t>>) -> Decoding<Bound<'py, PyTuple>> {
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
            out.push(self.classes.event.make(&[
                name.as_any(),
                attributes.as_any(),
                time.as_any(),
            ])?);
        }
        Ok(PyTuple::new(py, out)?)
    }

    /// A `KeyValue` list to a dict (`attributes`); values that unwrap to None are left out.
    fn attributes(
        &mut self,
        value: Option<&'t Value<'t>>,
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
            let unwrapped = match item.get("value") {
                None => None,
                Some(value @ Value::Object(_)) => self.any_value(value, depth)?,
                Some(value) if falsy(value) => None, // `value or {}`: nothing to unwrap
                Some(_) => return Err(Stop::Unusual),
            };
            if let Some(unwrapped) = unwrapped {
                let key: &'t str = key;
                dict.set_item(self.keys.get(self.py, key), unwrapped)?;
            }
        }
        Ok(dict)
    }

    /// One `AnyValue` object (`any_value`); None where Python gives None.
    fn any_value(
        &mut self,
        value: &'t Value<'t>,
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
