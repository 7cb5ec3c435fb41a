//! A call's arguments as categories and rules read them (`argument_map`, `command_text`, the
//! `process` tool's action in `otel_cycleguard/detect/categories.py`), whatever shape they
//! arrive in: a JSON text, a Python mapping, bytes, anything else.
//!
//! The Python code parses a text in two ways: `argument_map` with orjson (the text must start
//! with `{`), `command_text` and the `process` action with `json.loads` (of the stripped
//! text, or of the text itself), which also reads `NaN`, infinities and lone surrogates. One
//! lenient parse of the stripped text serves all three ([`json::parse_lenient`]); what each
//! reading would have refused is told by where the text's edges are not JSON whitespace and
//! by whether an extension was used. A document deeper than the parser vouches for is parsed
//! by Python (`json.loads`, `orjson.loads`) and read as the mapping it gives.

use std::borrow::Cow;
use std::cell::OnceCell;

use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyList, PyMapping, PyString};

use crate::json::{self, ParseError, Value};
use crate::pystr;

/// A Python `str` as the core's text: borrowed when it is valid UTF-8; a lone surrogate
/// becomes its stand-in ([`pystr::SURROGATE_BASE`]).
pub fn py_text<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    if let Some(text) = crate::canon::text_of(s) {
        return Ok(Cow::Borrowed(text));
    }
    let encoded = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
    let bytes = encoded.downcast::<PyBytes>()?.as_bytes();
    Ok(Cow::Owned(decode_surrogatepass(bytes)))
}

/// `s[:n]` of a Python str (code points).
pub fn py_head<'py>(s: &Bound<'py, PyString>, n: usize) -> PyResult<Bound<'py, PyString>> {
    if let Some(t) = crate::canon::text_of(s) {
        if t.len() <= n {
            return Ok(s.clone()); // n bytes hold at least n characters
        }
    }
    let slice = pyo3::types::PySlice::new(s.py(), 0, n.min(isize::MAX as usize) as isize, 1);
    Ok(s.as_any().get_item(slice)?.downcast_into::<PyString>()?)
}

/// The core's text as a Python `str` (stand-ins back to the lone surrogates they stand for).
pub fn to_py_str<'py>(py: Python<'py>, s: &str) -> PyResult<Bound<'py, PyString>> {
    if !s.chars().any(pystr::is_surrogate_stand_in) {
        return Ok(PyString::new(py, s));
    }
    let mut bytes = Vec::with_capacity(s.len());
    for c in s.chars() {
        if pystr::is_surrogate_stand_in(c) {
            let code = c as u32 - pystr::SURROGATE_BASE;
            bytes.extend_from_slice(&[
                0xE0 | (code >> 12) as u8,
                0x80 | ((code >> 6) & 0x3F) as u8,
                0x80 | (code & 0x3F) as u8,
            ]);
        } else {
            let mut buf = [0u8; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Ok(PyBytes::new(py, &bytes)
        .call_method1("decode", ("utf-8", "surrogatepass"))?
        .downcast_into::<PyString>()?)
}

/// UTF-8 with surrogates encoded as three bytes (`surrogatepass`) to text with stand-ins.
fn decode_surrogatepass(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let good = e.valid_up_to();
                // valid_up_to is a char boundary of valid UTF-8 by definition
                out.push_str(std::str::from_utf8(&rest[..good]).unwrap_or_default());
                let bad = &rest[good..];
                if bad.len() >= 3 && bad[0] == 0xED && (0xA0..=0xBF).contains(&bad[1]) {
                    let code = 0xD000 | ((bad[1] as u32 & 0x3F) << 6) | (bad[2] as u32 & 0x3F);
                    out.push(char::from_u32(pystr::SURROGATE_BASE + code).unwrap_or('?'));
                    rest = &bad[3..];
                } else {
                    out.push('\u{FFFD}');
                    rest = &bad[1..];
                }
            }
        }
    }
    out
}

/// One top-level argument value, as the readings test it.
pub enum Arg<'a, 'py> {
    Missing,
    /// `isinstance(value, str)`.
    Str(Cow<'a, str>),
    /// `isinstance(value, list)`: its items when all are strings (else None).
    List(Option<Vec<Cow<'a, str>>>),
    /// Anything else (a number, a dict...); a Python object is kept for `str(value)`.
    Other(Option<Bound<'py, PyAny>>),
}

/// A mapping of arguments: a parsed JSON object or a Python mapping.
pub enum Map<'a, 'py> {
    Json(&'a Value<'a>),
    Py(Bound<'py, PyAny>),
}

/// An argument name the readings look up: its text, and the Python `str` for a dict
/// look-up, interned once (its hash cached). Made per look-up, the string was an allocation
/// and a hash; found by comparing the name with a table of names, a chain of comparisons.
pub struct Key {
    pub text: &'static str,
    object: GILOnceCell<Py<PyString>>,
}

impl Key {
    pub const fn new(text: &'static str) -> Self {
        Key {
            text,
            object: GILOnceCell::new(),
        }
    }

    fn object<'py>(&self, py: Python<'py>) -> &Bound<'py, PyString> {
        self.object
            .get_or_init(py, || PyString::intern(py, self.text).unbind())
            .bind(py)
    }
}

/// The name of a `process` tool's action.
static ACTION: Key = Key::new("action");

impl<'a, 'py> Map<'a, 'py> {
    /// `mapping.get(key)`, read as [`Arg`].
    pub fn get(&self, key: &Key) -> PyResult<Arg<'_, 'py>> {
        match self {
            Map::Json(value) => Ok(match value.get(key.text) {
                None => Arg::Missing,
                Some(Value::Str(s)) => Arg::Str(Cow::Borrowed(s.as_ref())),
                Some(Value::Array(items)) => Arg::List(
                    items
                        .iter()
                        .map(|v| v.as_str().map(Cow::Borrowed))
                        .collect::<Option<Vec<_>>>(),
                ),
                Some(_) => Arg::Other(None),
            }),
            Map::Py(obj) => {
                let value = if obj.is_exact_instance_of::<PyDict>() {
                    let dict = obj.downcast::<PyDict>()?;
                    dict.get_item(key.object(obj.py()))?
                } else {
                    let v = obj.call_method1("get", (key.object(obj.py()),))?;
                    if v.is_none() {
                        None
                    } else {
                        Some(v)
                    }
                };
                let Some(value) = value else {
                    return Ok(Arg::Missing);
                };
                if value.is_none() {
                    return Ok(Arg::Other(Some(value)));
                }
                if let Ok(s) = value.downcast::<PyString>() {
                    return Ok(Arg::Str(Cow::Owned(py_text(s)?.into_owned())));
                }
                if let Ok(list) = value.downcast::<PyList>() {
                    let mut items = Vec::with_capacity(list.len());
                    for item in list.iter() {
                        match item.downcast::<PyString>() {
                            Ok(s) => items.push(Cow::Owned(py_text(s)?.into_owned())),
                            Err(_) => return Ok(Arg::List(None)),
                        }
                    }
                    return Ok(Arg::List(Some(items)));
                }
                Ok(Arg::Other(Some(value)))
            }
        }
    }
}

/// How a text parsed (lazily, once).
pub enum Parsed<'a> {
    /// Not a JSON object, for any of the readings (the stripped text does not start with `{`,
    /// or json.loads refuses it).
    NotObject,
    /// A JSON object; `extended`: json.loads extensions were used (orjson refuses it).
    Object { value: Value<'a>, extended: bool },
    /// Deeper than the parser vouches for: Python parses it.
    Unsure,
}

/// A call's arguments.
pub enum Args<'a, 'py> {
    /// A `str` (its core text).
    Text {
        raw: &'a str,
        parsed: OnceCell<Parsed<'a>>,
        py: Option<&'a Bound<'py, PyAny>>,
    },
    /// `bytes` (only `argument_map` reads them: orjson parses UTF-8 bytes).
    Bytes(&'a [u8], OnceCell<Parsed<'a>>),
    /// A Python mapping.
    Mapping(Bound<'py, PyAny>),
    /// None or anything else.
    Other,
}

fn is_json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

impl<'a, 'py> Args<'a, 'py> {
    pub fn text(raw: &'a str, py: Option<&'a Bound<'py, PyAny>>) -> Self {
        Args::Text {
            raw,
            parsed: OnceCell::new(),
            py,
        }
    }

    /// The arguments of a Python value (`text` holds its core text when it is a `str`).
    pub fn from_py(value: &'a Bound<'py, PyAny>, text: Option<&'a str>) -> PyResult<Self> {
        if let Some(raw) = text {
            return Ok(Args::text(raw, Some(value)));
        }
        if value.is_instance_of::<PyBytes>() {
            return Ok(Args::Bytes(
                value.downcast::<PyBytes>()?.as_bytes(),
                OnceCell::new(),
            ));
        }
        if value.is_exact_instance_of::<PyDict>() || value.downcast::<PyMapping>().is_ok() {
            return Ok(Args::Mapping(value.clone()));
        }
        Ok(Args::Other)
    }

    fn parse(text: &'a str) -> Parsed<'a> {
        let stripped = pystr::strip(text);
        if !stripped.starts_with('{') {
            return Parsed::NotObject;
        }
        match json::parse_lenient(stripped) {
            Ok((value @ Value::Object(_), extended)) => Parsed::Object { value, extended },
            Ok(_) | Err(ParseError::Invalid) => Parsed::NotObject,
            Err(ParseError::Unsure) => Parsed::Unsure,
        }
    }

    fn parsed(&self) -> Option<&Parsed<'a>> {
        match self {
            Args::Text { raw, parsed, .. } => Some(parsed.get_or_init(|| Self::parse(raw))),
            Args::Bytes(bytes, parsed) => Some(parsed.get_or_init(|| {
                match std::str::from_utf8(bytes) {
                    Ok(text) => Self::parse(text),
                    Err(_) => Parsed::NotObject, // orjson refuses bytes that are not UTF-8
                }
            })),
            _ => None,
        }
    }

    /// Python parses the text (`loads` is `json.loads` or `orjson.loads`); a mapping or None.
    fn python_parse(&self, py: Python<'py>, module: &str) -> PyResult<Option<Map<'a, 'py>>> {
        let arg: Bound<'py, PyAny> = match self {
            Args::Text { raw, py: obj, .. } => match obj {
                Some(o) => (*o).clone(),
                None => PyString::new(py, raw).into_any(),
            },
            Args::Bytes(bytes, _) => PyBytes::new(py, bytes).into_any(),
            _ => return Ok(None),
        };
        let text: Bound<'py, PyAny> = if module == "json" {
            match arg.downcast::<PyString>() {
                Ok(s) => s.call_method0("strip")?.into_any(),
                Err(_) => arg,
            }
        } else {
            arg
        };
        let loaded = py.import(module)?.getattr("loads")?.call1((text,));
        match loaded {
            Ok(v) if v.downcast::<PyMapping>().is_ok() || v.is_instance_of::<PyDict>() => {
                Ok(Some(Map::Py(v)))
            }
            Ok(_) => Ok(None),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyValueError>(py) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// `argument_map(arguments)`: a mapping, or a text (bytes) starting with `{` that orjson
    /// reads as an object.
    pub fn map(&self, py: Python<'py>) -> PyResult<Option<Map<'_, 'py>>> {
        let (first, trailing_ok) = match self {
            Args::Mapping(obj) => return Ok(Some(Map::Py(obj.clone()))),
            Args::Other => return Ok(None),
            Args::Text { raw, .. } => (
                raw.as_bytes().first().copied(),
                pystr::rstrip(raw).len() == raw.trim_end_matches(is_json_ws).len(),
            ),
            Args::Bytes(bytes, _) => {
                let ok = match std::str::from_utf8(bytes) {
                    Ok(t) => pystr::rstrip(t).len() == t.trim_end_matches(is_json_ws).len(),
                    Err(_) => false,
                };
                (bytes.first().copied(), ok)
            }
        };
        if first != Some(b'{') {
            return Ok(None);
        }
        match self.parsed() {
            Some(Parsed::Object { value, extended }) if !extended && trailing_ok => {
                Ok(Some(Map::Json(value)))
            }
            Some(Parsed::Unsure) => self.python_parse(py, "orjson"),
            _ => Ok(None),
        }
    }

    /// `command_text(arguments)`: the command line of an exec-like call (or None).
    pub fn command_text(&self, py: Python<'py>) -> PyResult<Option<Cow<'_, str>>> {
        match self {
            Args::Text { raw, .. } => {
                let stripped = pystr::strip(raw);
                match self.parsed() {
                    Some(Parsed::Object { value, .. }) => {
                        Ok(command_of(&Map::Json(value))?.map(Cow::Owned))
                    }
                    Some(Parsed::Unsure) => match self.python_parse(py, "json")? {
                        Some(map) => Ok(command_of(&map)?.map(Cow::Owned)),
                        None => Ok(Some(Cow::Borrowed(stripped))),
                    },
                    _ => Ok(Some(Cow::Borrowed(stripped))),
                }
            }
            Args::Mapping(obj) => {
                let map = Map::Py(obj.clone());
                Ok(command_of(&map)?.map(Cow::Owned))
            }
            _ => Ok(None),
        }
    }

    /// The `process` tool's `str(arguments.get("action", "")).lower()`, when it is a string
    /// (only a string can be one of the poll actions).
    pub fn process_action(&self, py: Python<'py>) -> PyResult<Option<String>> {
        let action = |map: &Map<'_, 'py>| -> PyResult<Option<String>> {
            Ok(match map.get(&ACTION)? {
                Arg::Str(s) => Some(s.to_lowercase()),
                Arg::Other(Some(obj)) if !obj.is_none() => {
                    Some(obj.str()?.to_str()?.to_lowercase())
                }
                _ => None,
            })
        };
        match self {
            Args::Text { raw, .. } => {
                // json.loads(arguments): the text's edges must be JSON whitespace
                let stripped = pystr::strip(raw);
                if raw.trim_matches(is_json_ws).len() != stripped.len() {
                    return Ok(None);
                }
                match self.parsed() {
                    Some(Parsed::Object { value, .. }) => action(&Map::Json(value)),
                    Some(Parsed::Unsure) => match self.python_parse(py, "json")? {
                        Some(map) => action(&map),
                        None => Ok(None),
                    },
                    _ => Ok(None),
                }
            }
            Args::Mapping(obj) => action(&Map::Py(obj.clone())),
            _ => Ok(None),
        }
    }
}

/// The command line a mapping holds (`command_text` of a mapping): the first of the command
/// keys that holds a string, or a list of strings (joined by spaces).
pub fn command_of(map: &Map<'_, '_>) -> PyResult<Option<String>> {
    for key in &crate::categories::COMMAND_KEYS {
        match map.get(key)? {
            Arg::Str(s) => return Ok(Some(s.into_owned())),
            Arg::List(Some(items)) => {
                let joined: Vec<&str> = items.iter().map(|s| s.as_ref()).collect();
                return Ok(Some(joined.join(" ")));
            }
            _ => {}
        }
    }
    Ok(None)
}
