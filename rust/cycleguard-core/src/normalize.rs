//! `Normalizer` of `otel_cycleguard/detect/normalize.py` in Rust: the identity of a call
//! (`call_key`: xxh3 of the tool name and the canonical arguments), a result's text
//! (`result_text`, with the per-tool `result_fields` picker) and its masked hash
//! (`text_hash`).
//!
//! ASCII text with the default masks is masked here ([`crate::mask`]); other text (its
//! classes are Python's Unicode ones) and custom mask patterns (Python regular expressions)
//! are hashed by the Python normalizer this one is built with (`reference`), as are values
//! that [`crate::canon`] leaves to Python.

use crate::fasthash::HashMap;
use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::canon::{self, Fallback};
use crate::json::{self, ParseError, Value};

/// A text the detector reads (a result's text): a Python `str` (kept as it is, no copy) or
/// text made here. A Python text holding lone surrogates is `Lossy`: its Rust side has them
/// replaced by `?` (what `encode("utf-8", "replace")` gives), and it is hashed and masked by
/// Python only.
pub enum Text<'py> {
    Py(Bound<'py, PyString>),
    Lossy(Bound<'py, PyString>, String),
    Owned(String),
}

impl<'py> Text<'py> {
    /// A Python `str`.
    pub fn from_py(text: Bound<'py, PyString>) -> PyResult<Self> {
        if canon::text_of(&text).is_some() {
            return Ok(Text::Py(text));
        }
        let encoded = text.call_method1("encode", ("utf-8", "replace"))?;
        let lossy = String::from_utf8_lossy(encoded.downcast::<PyBytes>()?.as_bytes()).into_owned();
        Ok(Text::Lossy(text, lossy))
    }

    /// The text (a Python str's UTF-8 buffer, which CPython keeps with the object).
    pub fn as_str(&self) -> &str {
        match self {
            Text::Py(t) => canon::text_of(t).unwrap_or(""), // checked valid in from_py
            Text::Lossy(_, s) | Text::Owned(s) => s,
        }
    }

    /// The Rust text is the Python text (no surrogate replaced).
    pub fn exact(&self) -> bool {
        !matches!(self, Text::Lossy(..))
    }

    /// The text as a Python `str` (the original one when there is one).
    pub fn to_py(&self, py: Python<'py>) -> Bound<'py, PyString> {
        match self {
            Text::Py(t) | Text::Lossy(t, _) => t.clone(),
            Text::Owned(s) => PyString::new(py, s),
        }
    }
}

thread_local! {
    /// Buffers the calls on this thread reuse: a call takes one and gives it back when done
    /// (a call that finds none left makes its own).
    static SCRATCH: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// One of this thread's scratch buffers (empty), or a new one.
pub fn take_buffer() -> Vec<u8> {
    SCRATCH
        .with(|c| c.try_borrow_mut().ok().and_then(|mut pool| pool.pop()))
        .unwrap_or_default()
}

/// Gives a buffer back for the next call on this thread (a large one is dropped instead).
pub fn give_buffer(mut buf: Vec<u8>) {
    if buf.capacity() <= 1 << 16 {
        buf.clear();
        SCRATCH.with(|c| {
            if let Ok(mut pool) = c.try_borrow_mut() {
                if pool.len() < 4 {
                    pool.push(buf);
                }
            }
        });
    }
}

/// The hash of a call's tool name and canonical arguments (`hash_bytes(tool + b"\0" + raw)`).
pub fn call_hash(tool: &[u8], raw: &[u8]) -> u64 {
    let mut h = Xxh3::new();
    h.update(tool);
    h.update(b"\0");
    h.update(raw);
    h.digest()
}

/// ASCII lower case, or Python's `str.lower` for other text.
pub fn lower<'a>(py: Python<'_>, s: &'a str) -> PyResult<Cow<'a, str>> {
    if s.is_ascii() {
        if s.bytes().any(|b| b.is_ascii_uppercase()) {
            Ok(Cow::Owned(s.to_ascii_lowercase()))
        } else {
            Ok(Cow::Borrowed(s))
        }
    } else {
        let lowered = PyString::new(py, s).call_method0("lower")?;
        Ok(Cow::Owned(
            lowered.downcast::<PyString>()?.to_str()?.to_owned(),
        ))
    }
}

pub struct Normalizer {
    /// The default masks alone (the compiled masking applies to ASCII text).
    pub fast: bool,
    /// Lower-cased tool name -> the result fields its picker keeps.
    fields: HashMap<String, Vec<String>>,
    pub max_mask_chars: usize,
    /// The Python `Normalizer` of the same configuration.
    reference: Py<PyAny>,
}

impl Normalizer {
    pub fn new(
        fast: bool,
        fields: HashMap<String, Vec<String>>,
        max_mask_chars: usize,
        reference: Py<PyAny>,
    ) -> Self {
        Normalizer {
            fast,
            fields,
            max_mask_chars: max_mask_chars.max(64),
            reference,
        }
    }

    pub fn reference<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.reference.bind(py)
    }

    /// `args_hash` of a call; `buf` is left holding the tool name, a 0 byte and the canonical
    /// arguments (their offset returned beside the hash): one buffer, hashed at once.
    pub fn call_key_into(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyString>,
        arguments: &Bound<'_, PyAny>,
        buf: &mut Vec<u8>,
    ) -> PyResult<(u64, usize)> {
        buf.clear();
        if let Some(name) = canon::text_of(tool) {
            buf.extend_from_slice(name.as_bytes());
            buf.push(0);
            let start = buf.len();
            if canon::canonical_into(arguments, buf).is_ok() {
                return Ok((xxh3_64(buf), start));
            }
            buf.clear();
        }
        let answer = self
            .reference(py)
            .call_method1("call_key", (tool, arguments))?;
        let (hash, raw): (u64, Vec<u8>) = answer.extract()?;
        buf.extend_from_slice(&raw);
        Ok((hash, 0))
    }

    /// (`args_hash`, the canonical arguments) of a call.
    pub fn call_key<'a>(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyString>,
        arguments: &'a Bound<'_, PyAny>,
    ) -> PyResult<(u64, Cow<'a, [u8]>)> {
        if let Some(name) = canon::text_of(tool) {
            if let Ok(raw) = canon::canonical(arguments) {
                return Ok((call_hash(name.as_bytes(), &raw), raw));
            }
        }
        let answer = self
            .reference(py)
            .call_method1("call_key", (tool, arguments))?;
        let (hash, raw): (u64, Vec<u8>) = answer.extract()?;
        Ok((hash, Cow::Owned(raw)))
    }

    /// The result fields for a tool, if it has a picker.
    fn fields_for(&self, py: Python<'_>, tool: &str) -> PyResult<Option<&Vec<String>>> {
        if self.fields.is_empty() {
            return Ok(None);
        }
        Ok(self.fields.get(lower(py, tool)?.as_ref()))
    }

    /// `result_text(tool, result)`.
    pub fn result_text<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Text<'py>> {
        match self.result_text_rust(py, tool, result) {
            Ok(Some(text)) => Ok(text),
            _ => {
                let text = self
                    .reference(py)
                    .call_method1("result_text", (tool, result))?;
                Text::from_py(text.downcast_into::<PyString>()?)
            }
        }
    }

    /// `Ok(None)` or `Err`: leave it to Python.
    fn result_text_rust<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Text<'py>>> {
        let Some(name) = canon::text_of(tool) else {
            return Ok(None);
        };
        if let Some(fields) = self.fields_for(py, name)? {
            if let Some(picked) = pick_fields(result, fields) {
                return Ok(picked.ok().map(Text::Owned));
            }
        }
        if result.is_exact_instance_of::<PyString>() {
            let text = result.downcast::<PyString>()?;
            let Some(s) = canon::text_of(text) else {
                return Ok(None);
            };
            if !canon::looks_like_json(s) {
                return Ok(Some(Text::Py(text.clone()))); // the text itself, no copy
            }
        }
        match canon::canonical(result) {
            Ok(raw) => match String::from_utf8(raw.into_owned()) {
                Ok(s) => Ok(Some(Text::Owned(s))),
                Err(_) => Ok(None),
            },
            Err(Fallback) => Ok(None),
        }
    }

    /// `text_hash(text)`: masked and hashed here for ASCII text with the default masks,
    /// else by the Python normalizer.
    pub fn text_hash(&self, py: Python<'_>, text: &Text<'_>) -> PyResult<u64> {
        let s = text.as_str();
        if self.fast && text.exact() && s.is_ascii() {
            return Ok(crate::text_hash_ascii(s.as_bytes(), self.max_mask_chars));
        }
        self.reference(py)
            .call_method1("text_hash", (text.to_py(py),))?
            .extract()
    }

    /// `mask(text)` as UTF-8 bytes (`.encode("utf-8", "replace")`).
    pub fn mask_bytes<'t>(&self, py: Python<'_>, text: &'t Text<'_>) -> PyResult<Cow<'t, [u8]>> {
        let s = text.as_str();
        if self.fast && text.exact() && s.is_ascii() {
            return Ok(match crate::mask::mask_ascii(s.as_bytes()) {
                Some(masked) => Cow::Owned(masked),
                None => Cow::Borrowed(s.as_bytes()),
            });
        }
        let masked = self.reference(py).call_method1("mask", (text.to_py(py),))?;
        let encoded = masked.call_method1("encode", ("utf-8", "replace"))?;
        Ok(Cow::Owned(
            encoded.downcast::<PyBytes>()?.as_bytes().to_vec(),
        ))
    }
}

/// The `result_fields` picker: `Some(Ok(text))` when the result is (or holds, as JSON) a
/// mapping (the picked fields' canonical JSON), `None` when it is not one (the result goes on
/// as it is), `Some(Err)` when Python must decide.
fn pick_fields(result: &Bound<'_, PyAny>, fields: &[String]) -> Option<Result<String, Fallback>> {
    let mut names: Vec<&str> = fields.iter().map(String::as_str).collect();
    names.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names.dedup();
    if result.is_exact_instance_of::<PyDict>() {
        let dict = result.downcast::<PyDict>().ok()?;
        return Some(write_picked(&names, |name, out| {
            match dict.get_item(name) {
                Ok(Some(v)) => canon::dump(&v, out, 1).map(|()| true),
                Ok(None) => Ok(false),
                Err(_) => Err(Fallback),
            }
        }));
    }
    let text: &str = if result.is_exact_instance_of::<PyString>() {
        match canon::exact_str(result) {
            Ok(s) => s,
            Err(_) => return Some(Err(Fallback)),
        }
    } else if result.is_exact_instance_of::<PyBytes>() {
        match std::str::from_utf8(result.downcast::<PyBytes>().ok()?.as_bytes()) {
            Ok(s) => s,
            Err(_) => return Some(Err(Fallback)),
        }
    } else if result.is_instance_of::<PyString>()
        || result.is_instance_of::<pyo3::types::PyByteArray>()
        || result.is_instance_of::<PyDict>()
    {
        return Some(Err(Fallback));
    } else {
        // a list, a number, None...: no mapping; anything else may be one: Python decides
        return if canon::dump(result, &mut Vec::new(), 0).is_ok() {
            None
        } else {
            Some(Err(Fallback))
        };
    };
    let value = match json::parse(text) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) | Err(ParseError::Invalid) => return None,
        Err(ParseError::Unsure) => return Some(Err(Fallback)),
    };
    Some(write_picked(&names, |name, out| match value.get(name) {
        Some(v) => {
            json::write(out, v);
            Ok(true)
        }
        None => Ok(false),
    }))
}

/// The picked fields' JSON, `{"name": value, ...}` in the order of `names`: `write_value`
/// writes a field's value and says whether the mapping has it (a missing one is `null`), the
/// one loop for a Python dict and for parsed JSON.
fn write_picked(
    names: &[&str],
    mut write_value: impl FnMut(&str, &mut Vec<u8>) -> Result<bool, Fallback>,
) -> Result<String, Fallback> {
    let mut out = Vec::with_capacity(64);
    out.push(b'{');
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(&mut out, name);
        out.push(b':');
        if !write_value(name, &mut out)? {
            out.extend_from_slice(b"null");
        }
    }
    out.push(b'}');
    String::from_utf8(out).map_err(|_| Fallback)
}

/// `hash_bytes(text.encode())` of plain bytes.
#[inline]
pub fn hash_bytes(data: &[u8]) -> u64 {
    xxh3_64(data)
}
