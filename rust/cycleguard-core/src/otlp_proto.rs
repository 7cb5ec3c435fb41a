//! An OTLP/HTTP protobuf body (`ExportTraceServiceRequest`) straight to the service's
//! `SpanData` objects: the fast path of `otel_cycleguard.service.convert.from_protobuf`,
//! without upb's message objects and the Python attribute loop.
//!
//! It gives exactly what the Python path (`from_request` over upb) gives, on the input it
//! accepts: the common well-formed case. For anything else it answers [`Stop::Unusual`] and
//! the Python path decides, keeping upb's verdict and messages: malformed wire data (see
//! `protowire`), invalid UTF-8 in any string field upb checks, a singular message field
//! repeated (upb merges), an `AnyValue` carrying a message and a second value, resource
//! entity refs, and values nested [`NEST_LIMIT`] or more levels deep (or as deep as the
//! Python depth limit, which cuts them). Unknown fields are skipped; a repeated singular
//! scalar keeps its last value, as upb does.
//!
//! Python objects are made as `from_request` makes them, but for one shortcut only identity
//! could tell: within a request, equal keys and names, and a trace or parent id repeated
//! from the span before, share one `str`.

use crate::protowire::{utf8, Fields, Unusual, Wire};
use crate::slotted::Slotted;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString, PyTuple, PyType};

/// The fields of `SpanData`, in the order the decoder fills them.
pub const SPAN_FIELDS: [&str; 11] = [
    "trace_id",
    "span_id",
    "name",
    "parent_span_id",
    "start_ns",
    "end_ns",
    "attributes",
    "events",
    "status_error",
    "status_message",
    "resource",
];

/// The fields of `SpanEvent`, in the order the decoder fills them.
pub const EVENT_FIELDS: [&str; 3] = ["name", "attributes", "time_ns"];

/// Arrays and maps nested this deep are left to the Python path: well under upb's limit of
/// 100 nested messages (a map level is three of them), so upb accepts what this accepts.
pub const NEST_LIMIT: usize = 24;

/// `Status.code` of an error (`STATUS_CODE_ERROR`).
const STATUS_ERROR: u32 = 2;

/// Why decoding stopped: input for the Python path, or a Python error (memory).
pub enum Stop {
    Unusual,
    Py(PyErr),
}

impl From<Unusual> for Stop {
    fn from(_: Unusual) -> Self {
        Stop::Unusual
    }
}

impl From<PyErr> for Stop {
    fn from(err: PyErr) -> Self {
        Stop::Py(err)
    }
}

/// Making an `int` cannot fail.
impl From<std::convert::Infallible> for Stop {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

type Decoding<T> = Result<T, Stop>;

/// The classes the decoder instantiates.
pub struct Classes {
    pub(crate) span: Slotted,
    pub(crate) event: Slotted,
}

impl Classes {
    /// `SpanData` and `SpanEvent` with their field names; fails (ValueError) when they are
    /// not the fields this module fills.
    pub fn new<'py>(
        span: Bound<'py, PyType>,
        span_fields: &Bound<'py, PyTuple>,
        event: Bound<'py, PyType>,
        event_fields: &Bound<'py, PyTuple>,
    ) -> PyResult<Self> {
        Ok(Classes {
            span: Slotted::new(span, span_fields, &SPAN_FIELDS)?,
            event: Slotted::new(event, event_fields, &EVENT_FIELDS)?,
        })
    }
}

/// What `from_request` collects: the spans, how many were rejected, the first reason.
pub struct Decoded<'py> {
    pub spans: Bound<'py, PyList>,
    pub rejected: usize,
    pub reason: Option<String>,
}

/// Decode `body`; `depth_limit` is the Python path's `MAX_VALUE_DEPTH`.
pub fn decode<'py>(
    py: Python<'py>,
    body: &[u8],
    classes: &Classes,
    depth_limit: usize,
) -> Decoding<Decoded<'py>> {
    let mut decoder = Decoder {
        py,
        classes,
        limit: depth_limit.min(NEST_LIMIT),
        strings: StringCache::new(),
        last_trace: None,
        last_parent: None,
        out: Decoded {
            spans: PyList::empty(py),
            rejected: 0,
            reason: None,
        },
    };
    decoder.request(body)?;
    Ok(decoder.out)
}

/// The `str`s of one request's keys and names: a small direct-mapped cache (a colliding
/// key only costs a miss, so chosen keys cannot slow a request down).
pub(crate) struct StringCache<'b, 'py> {
    slots: Vec<Option<(&'b str, Bound<'py, PyString>)>>,
}

const CACHE_BITS: u32 = 7;

impl<'b, 'py> StringCache<'b, 'py> {
    pub(crate) fn new() -> Self {
        StringCache {
            slots: (0..1 << CACHE_BITS).map(|_| None).collect(),
        }
    }

    pub(crate) fn get(&mut self, py: Python<'py>, text: &'b str) -> Bound<'py, PyString> {
        let slot = &mut self.slots[slot_of(text.as_bytes())];
        if let Some((cached, obj)) = slot {
            if *cached == text {
                return obj.clone();
            }
        }
        let obj = PyString::new(py, text);
        *slot = Some((text, obj.clone()));
        obj
    }
}

/// A cache slot from a key's length and its first and last eight bytes (keys that share
/// both ends only share a slot).
fn slot_of(text: &[u8]) -> usize {
    let mut ends = [0u8; 16];
    let n = text.len().min(8);
    ends[..n].copy_from_slice(&text[..n]);
    ends[8..8 + n].copy_from_slice(&text[text.len() - n..]);
    let head = u64::from_le_bytes(ends[..8].try_into().unwrap_or_default());
    let tail = u64::from_le_bytes(ends[8..].try_into().unwrap_or_default());
    let mixed =
        (head ^ tail.rotate_left(29) ^ text.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (mixed >> (64 - CACHE_BITS)) as usize
}

/// One `AnyValue`'s value as read (the last of the oneof on the wire).
enum Value<'b> {
    Unset,
    /// Not yet checked: Python's decoder checks it as it makes the `str`.
    Str(&'b [u8]),
    Bool(bool),
    Int(i64),
    Double(f64),
    Array(&'b [u8]),
    Map(&'b [u8]),
    Bytes(&'b [u8]),
    /// `string_value_strindex`: no value the Python path keeps.
    StrIndex,
}

struct Decoder<'c, 'b, 'py> {
    py: Python<'py>,
    classes: &'c Classes,
    limit: usize,
    strings: StringCache<'b, 'py>,
    /// The hex of the last trace id and parent id: a request's spans share a few.
    last_trace: Option<(&'b [u8], Bound<'py, PyString>)>,
    last_parent: Option<(&'b [u8], Bound<'py, PyString>)>,
    out: Decoded<'py>,
}

impl<'b, 'py> Decoder<'_, 'b, 'py> {
    fn request(&mut self, body: &'b [u8]) -> Decoding<()> {
        let mut fields = Fields::new(body);
        while let Some((number, wire)) = fields.next_field()? {
            if number == 1 {
                self.resource_spans(wire.len()?)?;
            }
        }
        Ok(())
    }

    /// The resource may follow its spans on the wire: read it first, then the spans.
    fn resource_spans(&mut self, message: &'b [u8]) -> Decoding<()> {
        let mut resource = None;
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => set_once(&mut resource, wire)?,
                2 => {
                    wire.len()?;
                }
                3 => {
                    utf8(wire.len()?)?;
                }
                _ => {}
            }
        }
        let attributes = PyDict::new(self.py);
        if let Some(resource) = resource {
            self.resource(resource, &attributes)?;
        }
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            if number == 2 {
                self.scope_spans(wire.len()?, &attributes)?;
            }
        }
        Ok(())
    }

    fn resource(&mut self, message: &'b [u8], attributes: &Bound<'py, PyDict>) -> Decoding<()> {
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => self.key_value(wire.len()?, attributes, 0)?,
                2 => {
                    wire.varint()?;
                }
                3 => return Err(Stop::Unusual), // entity refs: unread, left to upb to check
                _ => {}
            }
        }
        Ok(())
    }

    fn scope_spans(&mut self, message: &'b [u8], resource: &Bound<'py, PyDict>) -> Decoding<()> {
        let mut scope = None;
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => {
                    set_once(&mut scope, wire)?;
                    self.check_scope(wire.len()?)?;
                }
                2 => self.span(wire.len()?, resource)?,
                3 => {
                    utf8(wire.len()?)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A span read whole (fields come in any order), then rejected as `from_request` rejects.
    fn span(&mut self, message: &'b [u8], resource: &Bound<'py, PyDict>) -> Decoding<()> {
        let py = self.py;
        let (mut trace_id, mut span_id, mut parent): (&[u8], &[u8], &'b [u8]) = (&[], &[], &[]);
        let mut name = "";
        let (mut start, mut end) = (0u64, 0u64);
        let attributes = PyDict::new(py);
        let mut events = Vec::new();
        let mut status = None;
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => trace_id = wire.len()?,
                2 => span_id = wire.len()?,
                3 => {
                    utf8(wire.len()?)?; // trace_state
                }
                4 => parent = wire.len()?,
                5 => name = utf8(wire.len()?)?,
                6 | 10 | 12 | 14 => {
                    wire.varint()?; // kind, dropped counts
                }
                7 => start = wire.fixed64()?,
                8 => end = wire.fixed64()?,
                9 => self.key_value(wire.len()?, &attributes, 0)?,
                11 => events.push(self.event(wire.len()?)?),
                13 => self.check_link(wire.len()?)?,
                15 => set_once(&mut status, wire)?,
                16 => {
                    wire.fixed32()?; // flags
                }
                _ => {}
            }
        }
        let (error, message) = match status {
            Some(status) => self.status(status)?,
            None => (false, ""),
        };
        if trace_id.len() != 16 || is_zero(trace_id) {
            let reason = || {
                Ok(format!(
                    "span {}: trace_id must be 16 non-zero bytes",
                    repr(py, name)?
                ))
            };
            return self.reject(reason);
        }
        if span_id.len() != 8 || is_zero(span_id) {
            let reason = || {
                Ok(format!(
                    "span {}: span_id must be 8 non-zero bytes",
                    repr(py, name)?
                ))
            };
            return self.reject(reason);
        }
        if name.is_empty() {
            return self.reject(|| Ok(format!("span {}: no name", hex_string(span_id))));
        }
        let trace = cached_hex(py, &mut self.last_trace, trace_id);
        let parent = if parent.len() == 8 && !is_zero(parent) {
            cached_hex(py, &mut self.last_parent, parent).into_any()
        } else {
            py.None().into_bound(py)
        };
        let events = if events.is_empty() {
            PyTuple::empty(py)
        } else {
            PyTuple::new(py, events)?
        };
        let message = if message.is_empty() {
            py.None().into_bound(py)
        } else {
            PyString::new(py, message).into_any()
        };
        let name = self.strings.get(py, name);
        let span = self.classes.span.make(
            self.py,
            &[
                trace.as_any(),
                PyString::new(py, &hex_string(span_id)).as_any(),
                name.as_any(),
                &parent,
                start.into_pyobject(py)?.as_any(),
                end.into_pyobject(py)?.as_any(),
                attributes.as_any(),
                events.as_any(),
                PyBool::new(py, error).as_any(),
                &message,
                resource.as_any(),
            ],
        )?;
        self.out.spans.append(span)?;
        Ok(())
    }

    fn reject(&mut self, reason: impl FnOnce() -> PyResult<String>) -> Decoding<()> {
        self.out.rejected += 1;
        if self.out.reason.is_none() {
            self.out.reason = Some(reason()?);
        }
        Ok(())
    }

    /// `(status_error, message)`.
    fn status(&mut self, message: &'b [u8]) -> Decoding<(bool, &'b str)> {
        let (mut code, mut text) = (0u64, "");
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                2 => text = utf8(wire.len()?)?,
                3 => code = wire.varint()?,
                _ => {}
            }
        }
        // An enum is an int32 on the wire: upb keeps the low 32 bits.
        Ok((code as u32 == STATUS_ERROR, text))
    }

    fn event(&mut self, message: &'b [u8]) -> Decoding<Bound<'py, PyAny>> {
        let py = self.py;
        let (mut time, mut name) = (0u64, "");
        let attributes = PyDict::new(py);
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => time = wire.fixed64()?,
                2 => name = utf8(wire.len()?)?,
                3 => self.key_value(wire.len()?, &attributes, 0)?,
                4 => {
                    wire.varint()?;
                }
                _ => {}
            }
        }
        let name = self.strings.get(py, name);
        let time = time.into_pyobject(py)?;
        Ok(self.classes.event.make(
            self.py,
            &[name.as_any(), attributes.as_any(), time.as_any()],
        )?)
    }

    /// One attribute into `out`, as `_attributes` does: a value the Python path reads as None
    /// (unset, a string index) is left out.
    fn key_value(
        &mut self,
        message: &'b [u8],
        out: &Bound<'py, PyDict>,
        depth: usize,
    ) -> Decoding<()> {
        let (mut key, mut value) = ("", None);
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => key = utf8(wire.len()?)?,
                2 => set_once(&mut value, wire)?,
                3 => {
                    wire.varint()?; // key_strindex
                }
                _ => {}
            }
        }
        if let Some(value) = value {
            if let Some(value) = self.any_value(value, depth)? {
                out.set_item(self.strings.get(self.py, key), value)?;
            }
        }
        Ok(())
    }

    /// `_value(v, depth)`: None for no value (unset, a string index).
    fn any_value(
        &mut self,
        message: &'b [u8],
        depth: usize,
    ) -> Decoding<Option<Bound<'py, PyAny>>> {
        let py = self.py;
        Ok(Some(match read_value(message)? {
            Value::Unset | Value::StrIndex => return Ok(None),
            Value::Str(s) => py_str(py, s)?.into_any(),
            Value::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
            Value::Int(i) => i.into_pyobject(py)?.into_any(),
            Value::Double(d) => PyFloat::new(py, d).into_any(),
            Value::Bytes(b) => PyString::new(py, &hex_string(b)).into_any(),
            Value::Array(array) => {
                if depth >= self.limit {
                    return Err(Stop::Unusual);
                }
                let mut items = Vec::new();
                let mut fields = Fields::new(array);
                while let Some((number, wire)) = fields.next_field()? {
                    if number == 1 {
                        let item = self.any_value(wire.len()?, depth + 1)?;
                        items.push(item.unwrap_or_else(|| py.None().into_bound(py)));
                    }
                }
                PyTuple::new(py, items)?.into_any()
            }
            Value::Map(map) => {
                if depth >= self.limit {
                    return Err(Stop::Unusual);
                }
                let out = PyDict::new(py);
                let mut fields = Fields::new(map);
                while let Some((number, wire)) = fields.next_field()? {
                    if number == 1 {
                        self.key_value(wire.len()?, &out, depth + 1)?;
                    }
                }
                out.into_any()
            }
        }))
    }

    /// An instrumentation scope: unread, but upb checks it, so this does too.
    fn check_scope(&self, message: &[u8]) -> Decoding<()> {
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 | 2 => {
                    utf8(wire.len()?)?;
                }
                3 => self.check_key_value(wire.len()?, 0)?,
                4 => {
                    wire.varint()?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A span link: unread, checked as upb checks it.
    fn check_link(&self, message: &[u8]) -> Decoding<()> {
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 | 2 => {
                    wire.len()?;
                }
                3 => {
                    utf8(wire.len()?)?;
                }
                4 => self.check_key_value(wire.len()?, 0)?,
                5 => {
                    wire.varint()?;
                }
                6 => {
                    wire.fixed32()?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// [`Self::key_value`] without making the value.
    fn check_key_value(&self, message: &[u8], depth: usize) -> Decoding<()> {
        let mut value = None;
        let mut fields = Fields::new(message);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 => {
                    utf8(wire.len()?)?;
                }
                2 => set_once(&mut value, wire)?,
                3 => {
                    wire.varint()?;
                }
                _ => {}
            }
        }
        if let Some(value) = value {
            self.check_value(value, depth)?;
        }
        Ok(())
    }

    /// [`Self::any_value`] without making the value.
    fn check_value(&self, message: &[u8], depth: usize) -> Decoding<()> {
        let (inner, array) = match read_value(message)? {
            Value::Array(inner) => (inner, true),
            Value::Map(inner) => (inner, false),
            Value::Str(text) => return Ok(utf8(text).map(drop)?),
            _ => return Ok(()),
        };
        if depth >= self.limit {
            return Err(Stop::Unusual);
        }
        let mut fields = Fields::new(inner);
        while let Some((number, wire)) = fields.next_field()? {
            match number {
                1 if array => self.check_value(wire.len()?, depth + 1)?,
                1 => self.check_key_value(wire.len()?, depth + 1)?,
                _ => {}
            }
        }
        Ok(())
    }
}

/// An `AnyValue`'s fields: the last of the oneof wins, as in upb, but a message case next to
/// another value is unusual (upb merges or replaces; the Python path decides).
fn read_value(message: &[u8]) -> Result<Value<'_>, Unusual> {
    let (mut value, mut cases, mut has_message) = (Value::Unset, 0, false);
    let mut fields = Fields::new(message);
    while let Some((number, wire)) = fields.next_field()? {
        let next = match number {
            1 => Value::Str(wire.len()?),
            2 => Value::Bool(wire.varint()? != 0),
            3 => Value::Int(wire.varint()? as i64),
            4 => Value::Double(f64::from_bits(wire.fixed64()?)),
            5 => Value::Array(wire.len()?),
            6 => Value::Map(wire.len()?),
            7 => Value::Bytes(wire.len()?),
            8 => {
                wire.varint()?;
                Value::StrIndex
            }
            _ => continue,
        };
        if let Value::Str(replaced) = std::mem::replace(&mut value, next) {
            utf8(replaced)?; // upb checks every string it reads, the last one or not
        }
        cases += 1;
        has_message |= matches!(value, Value::Array(_) | Value::Map(_));
    }
    if cases > 1 && has_message {
        return Err(Unusual);
    }
    Ok(value)
}

/// A singular message field's bytes; a second occurrence is unusual (upb merges the two).
fn set_once<'b>(slot: &mut Option<&'b [u8]>, wire: Wire<'b>) -> Result<(), Unusual> {
    match slot.replace(wire.len()?) {
        None => Ok(()),
        Some(_) => Err(Unusual),
    }
}

fn is_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == 0)
}

/// `bytes.decode()`; invalid UTF-8 is unusual (upb refuses it).
fn py_str<'py>(py: Python<'py>, bytes: &[u8]) -> Decoding<Bound<'py, PyString>> {
    // SAFETY: the pointer and length are those of `bytes`, a live slice Python only reads
    // during the call (a slice's length fits `isize`); a null `errors` means "strict"; the
    // GIL is held (`py`). The answer is a new reference, or null with an exception set,
    // which `from_owned_ptr_or_err` takes over; the object is a `str`, so the downcast holds.
    let decoded = unsafe {
        let ptr = pyo3::ffi::PyUnicode_DecodeUTF8(
            bytes.as_ptr().cast(),
            bytes.len() as pyo3::ffi::Py_ssize_t,
            std::ptr::null(),
        );
        Bound::from_owned_ptr_or_err(py, ptr)
    };
    match decoded {
        Ok(text) => Ok(text.downcast_into::<PyString>().map_err(PyErr::from)?),
        Err(_) => Err(Stop::Unusual),
    }
}

/// `bytes.hex()`.
fn hex_string(bytes: &[u8]) -> String {
    use crate::json::HEX;
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

/// The hex of an id, the last one's `str` again when it repeats.
fn cached_hex<'b, 'py>(
    py: Python<'py>,
    last: &mut Option<(&'b [u8], Bound<'py, PyString>)>,
    id: &'b [u8],
) -> Bound<'py, PyString> {
    if let Some((bytes, obj)) = last {
        if *bytes == id {
            return obj.clone();
        }
    }
    let obj = PyString::new(py, &hex_string(id));
    *last = Some((id, obj.clone()));
    obj
}

/// Python's `repr` of a name, for the reject reasons.
fn repr(py: Python<'_>, text: &str) -> PyResult<String> {
    Ok(PyString::new(py, text).repr()?.to_str()?.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_scalar_of_an_any_value_wins() {
        // string_value "a", then int_value 5
        let msg = [0x0a, 1, b'a', 0x18, 5];
        assert!(matches!(read_value(&msg), Ok(Value::Int(5))));
        assert!(matches!(
            read_value(&[0x10, 0x80, 0x80, 0x80, 0x80, 0x10]),
            Ok(Value::Bool(true))
        ));
    }

    #[test]
    fn a_message_value_beside_another_is_unusual() {
        // array_value {}, then string_value "a"
        assert_eq!(read_value(&[0x2a, 0, 0x0a, 1, b'a']).err(), Some(Unusual));
        assert_eq!(read_value(&[0x32, 0, 0x32, 0]).err(), Some(Unusual));
        assert!(matches!(read_value(&[0x32, 0]), Ok(Value::Map(b""))));
    }

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex_string(&[0, 0xab, 0x0f, 0xf0]), "00ab0ff0");
        assert_eq!(hex_string(&[]), "");
    }
}
