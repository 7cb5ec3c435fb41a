//! otel-cycleguard's compiled core, as the Python extension `otel_cycleguard._core`.
//!
//! Today: masking of volatile content (ASCII text) and the hash of a result's text, the part of
//! normalisation that pure Python could not make fast (docs/detection.md, "Hashing and
//! masking"). Panics never cross into Python: every entry point runs under `catch_unwind` and
//! answers what the Python code answers for an input it cannot handle.

pub mod canon;
pub mod json;
pub mod mask;
pub mod normalize;
pub mod pystr;
pub mod text;

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::collections::HashMap;

use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};
use xxhash_rust::xxh3::xxh3_64;

/// The UTF-8 bytes of an ASCII `str`; other text is refused (its classes are Python's).
fn ascii<'a>(text: &'a Bound<'_, PyString>) -> PyResult<&'a [u8]> {
    let bytes = text.to_str()?.as_bytes();
    if bytes.is_ascii() {
        Ok(bytes)
    } else {
        Err(PyValueError::new_err(
            "the compiled masking takes ASCII text only",
        ))
    }
}

/// The hash of a text that could not be hashed (as `Normalizer.text_hash` answers).
const UNHASHABLE: &[u8] = b"<unhashable result>";

/// `xxh3_64` of a result's text with volatile content masked, for ASCII text (see
/// `Normalizer.text_hash`): at most `limit` characters are masked, the head and the tail;
/// the middle of a larger text is hashed with its digits folded to `0`.
pub fn text_hash_ascii(t: &[u8], limit: usize) -> u64 {
    let limit = limit.max(64);
    if t.len() <= limit {
        return match mask::mask_ascii(t) {
            Some(masked) => xxh3_64(&masked),
            None => xxh3_64(t),
        };
    }
    let half = limit / 2;
    let (head, tail) = (&t[..half], &t[t.len() - half..]);
    let mut buf = Vec::with_capacity(t.len() + 2);
    buf.extend_from_slice(mask::mask_ascii(head).as_deref().unwrap_or(head));
    buf.push(0);
    buf.extend_from_slice(mask::mask_ascii(tail).as_deref().unwrap_or(tail));
    buf.push(0);
    buf.extend(
        t[half..t.len() - half]
            .iter()
            .map(|&b| if b.is_ascii_digit() { b'0' } else { b }),
    );
    xxh3_64(&buf)
}

/// `text` (ASCII) with the default volatile patterns replaced by `#`; the same object when
/// nothing matched.
#[pyfunction]
fn mask_ascii<'py>(py: Python<'py>, text: Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    let bytes = ascii(&text)?;
    let masked = catch_unwind(AssertUnwindSafe(|| mask::mask_ascii(bytes))).unwrap_or(None);
    Ok(match masked {
        // The input is ASCII (the Python side checks str.isascii first) and masking only
        // replaces ASCII bytes by `#`, so the output is UTF-8; from_utf8 checks anyway.
        Some(out) => match std::str::from_utf8(&out) {
            Ok(s) => PyString::new(py, s),
            Err(_) => text,
        },
        None => text,
    })
}

/// `Normalizer.text_hash` for ASCII text with the default masks.
#[pyfunction]
fn text_hash_ascii_py(text: &Bound<'_, PyString>, limit: usize) -> PyResult<u64> {
    let bytes = ascii(text)?;
    Ok(
        catch_unwind(AssertUnwindSafe(|| text_hash_ascii(bytes, limit)))
            .unwrap_or_else(|_| xxh3_64(UNHASHABLE)),
    )
}

/// `text_loop`'s digest of a model turn's ASCII text (at most 64 KB, masked here): `(hash of
/// the normalised words, bottom-k sketch of their shingles)`, or `None` without a word.
#[pyfunction]
fn text_digest_ascii<'py>(
    py: Python<'py>,
    text: &Bound<'py, PyString>,
    shingle: usize,
    k: usize,
) -> PyResult<Option<(u64, Bound<'py, PyTuple>)>> {
    let bytes = ascii(text)?;
    let digest = catch_unwind(AssertUnwindSafe(|| {
        let masked = mask::mask_ascii(bytes);
        text::digest(masked.as_deref().unwrap_or(bytes), shingle, k)
    }))
    .unwrap_or(None);
    match digest {
        // a tuple, as the Python sketch is (saved state tags tuples)
        Some((exact, sketch)) => Ok(Some((exact, PyTuple::new(py, sketch)?))),
        None => Ok(None),
    }
}

/// `xxh3_64` of bytes (the same digest as Python's `xxhash.xxh3_64_intdigest`).
#[pyfunction]
fn xxh3(data: &Bound<'_, PyBytes>) -> u64 {
    xxh3_64(data.as_bytes())
}

/// `canonical_json(value)` for JSON-like values (see `canon`), or None: ask Python.
#[pyfunction]
fn canonical_json<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> Option<Bound<'py, PyBytes>> {
    catch_unwind(AssertUnwindSafe(|| {
        canon::canonical(value)
            .ok()
            .map(|raw| PyBytes::new(py, &raw))
    }))
    .unwrap_or(None)
}

/// The Rust `Normalizer` beside the Python one it falls back on (`reference`), for the
/// differential checks; the session uses the same code without crossings.
#[pyclass(module = "otel_cycleguard._core", name = "Normalizer")]
struct PyNormalizer {
    inner: normalize::Normalizer,
}

#[pymethods]
impl PyNormalizer {
    /// `result_fields`: tool name (lower case) -> the fields its result picker keeps.
    #[new]
    fn new(
        fast: bool,
        result_fields: &Bound<'_, PyDict>,
        max_mask_chars: usize,
        reference: Py<PyAny>,
    ) -> PyResult<Self> {
        let mut fields = HashMap::new();
        for (k, v) in result_fields.iter() {
            fields.insert(k.extract::<String>()?, v.extract::<Vec<String>>()?);
        }
        Ok(PyNormalizer {
            inner: normalize::Normalizer::new(fast, fields, max_mask_chars, reference),
        })
    }

    /// `(args_hash, canonical arguments)`.
    fn call_key<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        arguments: &Bound<'py, PyAny>,
    ) -> PyResult<(u64, Bound<'py, PyBytes>)> {
        match catch_unwind(AssertUnwindSafe(|| {
            self.inner
                .call_key(py, tool, arguments)
                .map(|(h, raw)| (h, PyBytes::new(py, &raw)))
        })) {
            Ok(answer) => answer,
            Err(_) => self
                .inner
                .reference(py)
                .call_method1("call_key", (tool, arguments))?
                .extract(),
        }
    }

    fn result_text<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        match catch_unwind(AssertUnwindSafe(|| {
            self.inner
                .result_text(py, tool, result)
                .map(|t| t.to_py(py))
        })) {
            Ok(answer) => answer,
            Err(_) => Ok(self
                .inner
                .reference(py)
                .call_method1("result_text", (tool, result))?
                .downcast_into::<PyString>()?),
        }
    }

    fn text_hash(&self, py: Python<'_>, text: Bound<'_, PyString>) -> PyResult<u64> {
        match catch_unwind(AssertUnwindSafe(|| {
            let text = normalize::Text::from_py(text.clone())?;
            self.inner.text_hash(py, &text)
        })) {
            Ok(answer) => answer,
            Err(_) => self
                .inner
                .reference(py)
                .call_method1("text_hash", (text,))?
                .extract(),
        }
    }

    /// `result_hash(tool, result)`: the text hash of the result's text.
    fn result_hash(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyString>,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        match catch_unwind(AssertUnwindSafe(|| {
            let text = self.inner.result_text(py, tool, result)?;
            self.inner.text_hash(py, &text)
        })) {
            Ok(answer) => answer,
            Err(_) => self
                .inner
                .reference(py)
                .call_method1("result_hash", (tool, result))?
                .extract(),
        }
    }
}

/// Every character Python's `str.isspace` is true for, as the core reads it (a test compares
/// it with the interpreter's).
#[pyfunction]
fn _space_chars() -> String {
    (0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| pystr::is_space(c))
        .collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_space_chars, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_class::<PyNormalizer>()?;
    m.add_function(wrap_pyfunction!(mask_ascii, m)?)?;
    m.add("text_hash_ascii", wrap_pyfunction!(text_hash_ascii_py, m)?)?;
    m.add_function(wrap_pyfunction!(xxh3, m)?)?;
    m.add_function(wrap_pyfunction!(text_digest_ascii, m)?)?;
    Ok(())
}
