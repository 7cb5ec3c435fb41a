//! `canonical_json` of Python values (`otel_cycleguard/detect/normalize.py`), read through
//! PyO3 without building Python objects: dicts, lists, tuples, strings, ints, floats, bools
//! and None of their exact types, as `orjson.dumps(value, option=OPT_SORT_KEYS)` writes them.
//!
//! Anything else (a subclass, a set, bytes inside a structure, an int beyond 64 bits, a
//! string holding a lone surrogate, a dict key that is not a string, nesting beyond
//! [`json::MAX_DEPTH`]) is [`Fallback`]: the caller asks the Python function, whose answer
//! (orjson's native types, `default=` reprs, the `json` module's fallback) is the reference.

use std::borrow::Cow;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};
use pyo3::Borrowed;

use crate::json::{self, ParseError};
use crate::pystr;

/// The value needs Python's `canonical_json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fallback;

impl From<ParseError> for Fallback {
    fn from(_: ParseError) -> Self {
        Fallback
    }
}

/// The UTF-8 text of an exact `str` (a subclass, or one holding a lone surrogate: Fallback).
#[inline]
pub fn exact_str<'a>(obj: &'a Bound<'_, PyAny>) -> Result<&'a str, Fallback> {
    if !obj.is_exact_instance_of::<PyString>() {
        return Err(Fallback);
    }
    utf8_of(obj.as_ptr())
}

/// The UTF-8 text of a `str` (None for one holding a lone surrogate): for an exact `str`
/// read straight from the object, without the error PyO3's `to_str` builds and drops for a
/// surrogate; a subclass through `to_str`.
#[inline]
pub fn text_of<'a>(text: &'a Bound<'_, PyString>) -> Option<&'a str> {
    if text.is_exact_instance_of::<PyString>() {
        utf8_of(text.as_ptr()).ok()
    } else {
        text.to_str().ok()
    }
}

/// The key a Python value is compared by where Rust keeps it (a span id, a session, a tool
/// name): the text of an exact `str`; anything else (a `str` with a lone surrogate, a
/// subclass, another type) its `repr` after a NUL, which no text key holds, so that two keys
/// are equal only when the values are.
pub fn text_key<'a>(value: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(text) = exact_str(value) {
        return Ok(Cow::Borrowed(text));
    }
    Ok(Cow::Owned(format!("\0{}", value.repr()?.to_string_lossy())))
}

/// The UTF-8 text of a live exact `str` (Fallback, its error cleared, when it holds a lone
/// surrogate), for as long as the caller's borrow of it: PyUnicode_AsUTF8AndSize without
/// the wrapping of PyO3's `to_str`, which builds a Python error to drop for a surrogate.
#[inline]
fn utf8_of<'a>(text: *mut ffi::PyObject) -> Result<&'a str, Fallback> {
    let mut len: ffi::Py_ssize_t = 0;
    // SAFETY: `text` is a live exact `str` the caller holds for 'a (GIL held). The answer is
    // its UTF-8 bytes, held by the object itself (its own bytes, or the UTF-8 copy CPython
    // keeps with it) for as long as it lives, and valid UTF-8; or null with an error set (a
    // lone surrogate), which is cleared.
    unsafe {
        let data = ffi::PyUnicode_AsUTF8AndSize(text, &mut len);
        if data.is_null() {
            ffi::PyErr_Clear();
            return Err(Fallback);
        }
        let bytes: &'a [u8] = std::slice::from_raw_parts(data.cast::<u8>(), len as usize);
        Ok(std::str::from_utf8_unchecked(bytes))
    }
}

/// Whether `canonical_json` parses a text: it starts, after (Python's) whitespace, with `{`
/// or `[`.
#[inline]
pub fn looks_like_json(text: &str) -> bool {
    matches!(pystr::lstrip(text).as_bytes().first(), Some(b'{' | b'['))
}

/// `canonical_json` of a text: the canonical JSON it holds, else the text itself.
pub fn canonical_text(text: &str) -> Result<Cow<'_, [u8]>, Fallback> {
    if looks_like_json(text) {
        if let Some(out) = json::canonical_text(text)? {
            return Ok(Cow::Owned(out));
        }
    }
    Ok(Cow::Borrowed(text.as_bytes()))
}

/// `canonical_json(value)` appended to `out` (on [`Fallback`], `out` holds a partial
/// write: the caller truncates it).
pub fn canonical_into(value: &Bound<'_, PyAny>, out: &mut Vec<u8>) -> Result<(), Fallback> {
    if value.is_exact_instance_of::<PyString>() {
        let text = exact_str(value)?;
        if looks_like_json(text) {
            if let Some(canonical) = json::canonical_text(text)? {
                out.extend_from_slice(&canonical);
                return Ok(());
            }
        }
        out.extend_from_slice(text.as_bytes());
        return Ok(());
    }
    if value.is_exact_instance_of::<PyDict>() {
        return dump(value, out, 0);
    }
    match canonical(value)? {
        Cow::Borrowed(raw) => out.extend_from_slice(raw),
        Cow::Owned(raw) => out.extend_from_slice(&raw),
    }
    Ok(())
}

/// `canonical_json(value)` (see the module comment for what is [`Fallback`]).
pub fn canonical<'a>(value: &'a Bound<'_, PyAny>) -> Result<Cow<'a, [u8]>, Fallback> {
    if value.is_exact_instance_of::<PyString>() {
        return canonical_text(exact_str(value)?);
    }
    if value.is_exact_instance_of::<PyDict>() {
        let mut out = Vec::with_capacity(256);
        dump(value, &mut out, 0)?;
        return Ok(Cow::Owned(out));
    }
    if value.is_exact_instance_of::<PyBytes>() {
        let bytes = value
            .downcast::<PyBytes>()
            .map_err(|_| Fallback)?
            .as_bytes();
        let text = std::str::from_utf8(bytes).map_err(|_| Fallback)?;
        return canonical_text(text);
    }
    if value.is_instance_of::<PyByteArray>() || value.is_instance_of::<PyString>() {
        return Err(Fallback); // (bytearray is mutable; a str subclass may encode otherwise)
    }
    let mut out = Vec::with_capacity(64);
    dump(value, &mut out, 0)?;
    Ok(Cow::Owned(out))
}

/// Dicts of at most this many keys are sorted without an allocation.
const FEW: usize = 8;

/// A dict's entries (at most [`FEW`]) into `entries`, borrowed: each key's UTF-8 text and
/// its value; how many. [`Fallback`] for a key that is not an exact `str` or holds a lone
/// surrogate, or for a dict that has more entries than `entries` holds.
///
/// Without a reference taken and dropped for each key and value, and without the length
/// checks of PyO3's iterator (it asks for the dict's size at every step), this is most of
/// what canonical arguments cost in PyO3.
fn few_entries<'d, 'py>(
    dict: &'d Bound<'py, PyDict>,
    entries: &mut [Option<(&'d str, Borrowed<'d, 'py, PyAny>)>; FEW],
) -> Result<usize, Fallback> {
    let py = dict.py();
    let mut n = 0;
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: PyDict_Next reads a live dict (borrowed for 'd, GIL held) and hands out
    // borrowed references, non-null when it answers 1, valid while the dict is neither
    // changed nor freed. Neither happens during 'd: the dict is borrowed for it, and nothing
    // done with the entries runs Python code (`dump` reads exact built-in types only, no
    // `__eq__`, `__hash__` or `__str__` of the user's, and keeps the GIL). A key's UTF-8 text
    // ([`utf8_of`], checked an exact `str` first) lives as long as the key, which the dict
    // holds for 'd.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            if n == FEW || ffi::PyUnicode_CheckExact(key) == 0 {
                return Err(Fallback);
            }
            entries[n] = Some((utf8_of(key)?, Borrowed::from_ptr(py, value)));
            n += 1;
        }
    }
    Ok(n)
}

/// `"key":value` pairs, comma-separated, in the order given.
fn write_entries<'a, 'py: 'a>(
    out: &mut Vec<u8>,
    entries: impl Iterator<Item = (&'a str, &'a Bound<'py, PyAny>)>,
    depth: usize,
) -> Result<(), Fallback> {
    for (i, (k, v)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json::write_str(out, k);
        out.push(b':');
        dump(v, out, depth + 1)?;
    }
    Ok(())
}

/// A list's or a tuple's items as one JSON array (both are arrays to orjson).
fn dump_array<'py>(
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), Fallback> {
    if depth >= json::MAX_DEPTH {
        return Err(Fallback);
    }
    out.push(b'[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        dump(&item, out, depth + 1)?;
    }
    out.push(b']');
    Ok(())
}

/// Writes a JSON-like Python value as orjson does (keys sorted).
pub fn dump(value: &Bound<'_, PyAny>, out: &mut Vec<u8>, depth: usize) -> Result<(), Fallback> {
    if value.is_exact_instance_of::<PyString>() {
        json::write_str(out, exact_str(value)?);
    } else if value.is_exact_instance_of::<PyDict>() {
        if depth >= json::MAX_DEPTH {
            return Err(Fallback);
        }
        let dict = value.downcast::<PyDict>().map_err(|_| Fallback)?;
        out.push(b'{');
        if dict.len() <= FEW {
            // a few keys, the usual case: borrowed entries, sorted on the stack (all of the
            // first n are Some; dict keys differ, so the order is the keys')
            let mut entries = [None; FEW];
            let n = few_entries(dict, &mut entries)?;
            let entries = &mut entries[..n];
            entries.sort_unstable_by_key(|e| e.map(|(k, _)| k)); // (str order: bytewise)
            write_entries(
                out,
                entries.iter().flatten().map(|(k, v)| (*k, &**v)),
                depth,
            )?;
        } else {
            let items: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = dict.iter().collect();
            let mut keyed: Vec<(&str, &Bound<'_, PyAny>)> = Vec::with_capacity(items.len());
            for (k, v) in &items {
                keyed.push((exact_str(k)?, v));
            }
            keyed.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            write_entries(out, keyed.into_iter(), depth)?;
        }
        out.push(b'}');
    } else if value.is_exact_instance_of::<PyList>() {
        let list = value.downcast::<PyList>().map_err(|_| Fallback)?;
        dump_array(list.iter(), out, depth)?;
    } else if value.is_exact_instance_of::<PyTuple>() {
        let tuple = value.downcast::<PyTuple>().map_err(|_| Fallback)?;
        dump_array(tuple.iter(), out, depth)?;
    } else if value.is_exact_instance_of::<PyBool>() {
        let b = value.downcast::<PyBool>().map_err(|_| Fallback)?.is_true();
        out.extend_from_slice(if b { b"true" } else { b"false" });
    } else if value.is_exact_instance_of::<PyInt>() {
        let v = match value.extract::<i64>() {
            Ok(v) => v as i128,
            Err(_) => value.extract::<u64>().map_err(|_| Fallback)? as i128,
        };
        json::write_int(out, v);
    } else if value.is_exact_instance_of::<PyFloat>() {
        let v = value.downcast::<PyFloat>().map_err(|_| Fallback)?.value();
        json::write_float(out, v);
    } else if value.is_none() {
        out.extend_from_slice(b"null");
    } else {
        return Err(Fallback);
    }
    Ok(())
}
