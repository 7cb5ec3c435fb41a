//! otel-cycleguard's compiled core, as the Python extension `otel_cycleguard._core`.
//!
//! Today: masking of volatile content (ASCII text) and the hash of a result's text, the part of
//! normalisation that pure Python could not make fast (docs/detection.md, "Hashing and
//! masking"). Panics never cross into Python: every entry point runs under `catch_unwind` and
//! answers what the Python code answers for an input it cannot handle.

pub mod args;
pub mod canon;
pub mod categories;
pub mod conventions;
pub mod copy;
pub mod derive;
pub mod dims;
pub mod echo;
pub mod failures;
pub mod fasthash;
pub mod genai_messages;
pub mod heap;
pub mod hibernate;
pub mod json;
pub mod mask;
pub mod names;
pub mod normalize;
pub mod otlp_json;
pub mod otlp_proto;
pub mod protowire;
pub mod pyclass;
pub mod pystr;
pub mod rules;
pub mod session;
pub mod settings;
pub mod shell;
pub mod signal;
pub mod simd;
pub mod slotted;
pub mod span_scope;
pub mod state;
pub mod swar;
#[cfg(test)]
pub mod testing;
pub mod text;
pub mod watch;

use std::panic::{catch_unwind, AssertUnwindSafe};

use fasthash::{HashMap, HashSet};
use pyo3::call::PyCallArgs;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};
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
        let mut masked = normalize::take_buffer();
        let hash = if mask::mask_ascii_into(t, &mut masked) {
            xxh3_64(&masked)
        } else {
            xxh3_64(t)
        };
        normalize::give_buffer(masked);
        return hash;
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

#[global_allocator]
static ALLOCATOR: heap::Counting = heap::Counting;

/// Counting of the core's own heap on or off (see `heap`), for the memory benchmark.
#[pyfunction]
fn heap_counting(on: bool) {
    heap::set_counting(on);
}

/// The net bytes the core allocated on its heap while counting was on.
#[pyfunction]
fn heap_bytes() -> isize {
    heap::net_bytes()
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

/// `(spans, rejected, first reason)`, the fields of a `Converted`.
type OtlpSpans<'py> = (Bound<'py, PyList>, usize, Option<String>);

/// `from_protobuf(body)` decoded by the core (see `otlp_proto`): `(spans, rejected, first
/// reason)` as `from_request` collects them, or None where the Python path must decide
/// (unusual input, or a panic: that path has the answer, so none is raised).
#[pyfunction]
fn otlp_spans<'py>(
    py: Python<'py>,
    body: &[u8],
    span_type: Bound<'py, PyType>,
    span_fields: &Bound<'py, PyTuple>,
    event_type: Bound<'py, PyType>,
    event_fields: &Bound<'py, PyTuple>,
    depth_limit: usize,
) -> PyResult<Option<OtlpSpans<'py>>> {
    let classes = otlp_proto::Classes::new(span_type, span_fields, event_type, event_fields)?;
    decoded_or_none(|| {
        otlp_proto::decode(py, body, &classes, depth_limit).map(|d| (d.spans, d.rejected, d.reason))
    })
}

/// A decoder's answer for Python: Some(value), None where the Python path must decide
/// (unusual input, or a panic: that path has the answer, so none is raised), or the
/// Python error it met (memory).
fn decoded_or_none<T>(decode: impl FnOnce() -> Result<T, otlp_proto::Stop>) -> PyResult<Option<T>> {
    match catch_unwind(AssertUnwindSafe(decode)) {
        Ok(Ok(value)) => Ok(Some(value)),
        Ok(Err(otlp_proto::Stop::Py(err))) => Err(err),
        Ok(Err(otlp_proto::Stop::Unusual)) | Err(_) => Ok(None),
    }
}

/// One OTLP/JSON document (`{"resourceSpans": [...]}`) parsed and converted by the core
/// (see `otlp_json`): the spans as `spans_from_resource_spans` gives them after orjson, or
/// None where the Python path must decide (invalid JSON, a span it would skip, an unusual
/// form, or a panic: that path has the answer, so none is raised).
#[pyfunction]
fn otlp_json_spans<'py>(
    py: Python<'py>,
    body: &[u8],
    span_type: Bound<'py, PyType>,
    span_fields: &Bound<'py, PyTuple>,
    event_type: Bound<'py, PyType>,
    event_fields: &Bound<'py, PyTuple>,
    depth_limit: usize,
) -> PyResult<Option<Bound<'py, PyList>>> {
    let classes = otlp_proto::Classes::new(span_type, span_fields, event_type, event_fields)?;
    decoded_or_none(|| otlp_json::decode(py, body, &classes, depth_limit))
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
        let mut fields = HashMap::default();
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
        let reference = self.inner.reference(py);
        or_reference(reference, "call_key", (tool, arguments), || {
            self.inner
                .call_key(py, tool, arguments)
                .map(|(h, raw)| (h, PyBytes::new(py, &raw)))
        })
    }

    fn result_text<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        result: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        let reference = self.inner.reference(py);
        or_reference(reference, "result_text", (tool, result), || {
            self.inner
                .result_text(py, tool, result)
                .map(|t| t.to_py(py))
        })
    }

    fn text_hash(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<u64> {
        let reference = self.inner.reference(py);
        or_reference(reference, "text_hash", (text,), || {
            let text = normalize::Text::from_py(text.clone())?;
            self.inner.text_hash(py, &text)
        })
    }

    /// `result_hash(tool, result)`: the text hash of the result's text.
    fn result_hash(
        &self,
        py: Python<'_>,
        tool: &Bound<'_, PyString>,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<u64> {
        let reference = self.inner.reference(py);
        or_reference(reference, "result_hash", (tool, result), || {
            let text = self.inner.result_text(py, tool, result)?;
            self.inner.text_hash(py, &text)
        })
    }
}

/// An internal error of the core where Python expects an exception (a panic caught).
fn panicked() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("internal error in the detection core")
}

/// `core()`; where it panicked, the answer of the Python reference's `method(*args)` (the
/// normalizer's entry points fall back to it rather than raise).
fn or_reference<'py, T: FromPyObject<'py>>(
    reference: &Bound<'py, PyAny>,
    method: &str,
    args: impl PyCallArgs<'py>,
    core: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(core)) {
        Ok(answer) => answer,
        Err(_) => reference.call_method1(method, args)?.extract(),
    }
}

/// The `N` items of a tuple the Python side hands a constructor (its helper functions, in an
/// order both sides agree on), or a ValueError naming `what` when it holds another number.
pub(crate) fn items_of<const N: usize>(
    tuple: &Bound<'_, PyTuple>,
    what: &str,
) -> PyResult<[Py<PyAny>; N]> {
    let items: Vec<Py<PyAny>> = tuple.iter().map(Bound::unbind).collect();
    items.try_into().map_err(|items: Vec<Py<PyAny>>| {
        PyValueError::new_err(format!("{N} {what} expected, {} given", items.len()))
    })
}

/// `f()`, a panic in it turned into that error (an entry point that has no Python fallback).
pub(crate) fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(panicked()))
}

/// The compiled detector of one configuration: what its sessions share, and per profile the
/// settings they read (built once per profile).
#[pyclass(module = "otel_cycleguard._core", name = "Detector", frozen)]
struct PyDetector {
    shared: Arc<session::Shared>,
    plans: Mutex<HashMap<String, Arc<session::Plan>>>,
}

#[pymethods]
impl PyDetector {
    /// `settings`: a `DetectorSettings`; `normalizer`: the Python `Normalizer` of the same
    /// configuration (it masks what the core leaves to Python's regular expressions).
    #[new]
    fn new(py: Python<'_>, settings: &Bound<'_, PyAny>, normalizer: Py<PyAny>) -> PyResult<Self> {
        let shared = guarded(|| session::Shared::new(py, settings, normalizer))?;
        Ok(PyDetector {
            shared: Arc::new(shared),
            plans: Mutex::new(HashMap::default()),
        })
    }

    /// `text_loop`'s digest of a model turn's text: (hash of its normalised words, bottom-k
    /// sketch of their shingles), or None without a word.
    fn text_digest(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        shingle: usize,
    ) -> PyResult<Option<(u64, Vec<u64>)>> {
        session::text_digest(&self.shared.normalizer, py, text, shingle)
    }
}

impl PyDetector {
    fn plan(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyString>,
        profile: &Bound<'_, PyAny>,
        detector: &Bound<'_, PyAny>,
    ) -> PyResult<Arc<session::Plan>> {
        let key = name.to_str()?.to_owned();
        let mut plans = self.plans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(plan) = plans.get(&key) {
            return Ok(Arc::clone(plan));
        }
        let plan = Arc::new(session::Plan::new(
            py,
            Arc::clone(&self.shared),
            name.clone().unbind(),
            profile.clone().unbind(),
            detector.clone().unbind(),
        )?);
        plans.insert(key, Arc::clone(&plan));
        Ok(plan)
    }
}

/// One session's loop state (subclassed by `otel_cycleguard.detect.SessionDetector`), awake or
/// hibernated (`hibernate.rs`): an observation, a reset or a restore wakes it; reading its
/// counters or restart state does not.
#[pyclass(module = "otel_cycleguard._core", name = "Session", subclass)]
struct PySession {
    state: hibernate::SessionState,
}

#[pymethods]
impl PySession {
    #[new]
    #[pyo3(signature = (core, detector, name, profile, key, agent=None))]
    fn new(
        py: Python<'_>,
        core: &Bound<'_, PyDetector>,
        detector: &Bound<'_, PyAny>,
        name: &Bound<'_, PyString>,
        profile: &Bound<'_, PyAny>,
        key: Bound<'_, PyString>,
        agent: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let plan = guarded(|| core.get().plan(py, name, profile, detector))?;
        let session = session::Session::new(plan, key.unbind(), agent);
        Ok(PySession {
            state: hibernate::SessionState::Awake(Box::new(session)),
        })
    }

    /// Feed one finished tool call; the signals it fired (at most one per dimension).
    fn observe_tool_call<'py>(
        &mut self,
        py: Python<'py>,
        call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        guarded(|| self.state.awake(py)?.observe_tool_call(py, call))
    }

    /// Feed one finished model turn.
    fn observe_model_turn<'py>(
        &mut self,
        py: Python<'py>,
        turn: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        guarded(|| self.state.awake(py)?.observe_model_turn(py, turn))
    }

    /// Self-heal: the dimension counts from zero again.
    fn reset(&mut self, py: Python<'_>, dimension: &Bound<'_, PyAny>) -> PyResult<()> {
        let name = match dimension.getattr("value") {
            Ok(v) => v.extract::<String>()?,
            Err(_) => dimension.extract::<String>()?,
        };
        let d = signal::Dimension::from_name(&name)
            .ok_or_else(|| PyValueError::new_err(format!("{name:?} is not a dimension")))?;
        guarded(|| {
            self.state.awake(py)?.reset(d);
            Ok(())
        })
    }

    /// This session's counters and hashes as plain JSON-compatible data (the service's
    /// restart state; the format the Python detector wrote).
    fn to_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| self.state.read(py, |s| s.to_state(py)))
    }

    /// Loads what `to_state` saved (or the Python detector did) into this fresh session.
    fn restore_state(&mut self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<()> {
        guarded(|| self.state.awake(py)?.restore_state(py, state))
    }

    /// The current count of every dimension.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guarded(|| self.state.read(py, |s| s.counters(py)))
    }

    /// Packs the state of a session nobody is calling into a few hundred bytes (its next call
    /// unpacks it, detection unchanged); false when it already slept.
    fn hibernate(&mut self, py: Python<'_>) -> bool {
        self.state.hibernate(py)
    }

    /// Whether the state is packed (`hibernate`) and not yet woken by a call.
    #[getter]
    fn hibernated(&self) -> bool {
        self.state.is_asleep()
    }

    /// The bytes the session holds (its state and tables; the Python object's header added by
    /// `sys.getsizeof`).
    fn __sizeof__(&self) -> usize {
        self.state.memory_bytes()
    }

    #[getter]
    fn key(&self, py: Python<'_>) -> Py<PyString> {
        self.state.header().key.clone_ref(py)
    }

    #[getter]
    fn agent(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        self.state.header().agent.as_ref().map(|a| a.clone_ref(py))
    }

    #[getter]
    fn tool_calls(&self) -> i64 {
        self.state.header().tool_calls
    }

    #[getter]
    fn model_turns(&self) -> i64 {
        self.state.header().model_turns
    }

    #[getter]
    fn profile_name(&self, py: Python<'_>) -> Py<PyString> {
        self.state.header().plan.name.clone_ref(py)
    }

    #[getter]
    fn profile(&self, py: Python<'_>) -> Py<PyAny> {
        self.state.header().plan.py_profile.clone_ref(py)
    }

    #[getter]
    fn detector(&self, py: Python<'_>) -> Py<PyAny> {
        self.state.header().plan.py_detector.clone_ref(py)
    }
}

/// `command_exit(arguments, result_text)`: (the command whose exit code the shell reports,
/// that code); an exit code beyond 64 bits reads as None.
#[pyfunction]
fn command_exit<'py>(
    py: Python<'py>,
    arguments: &Bound<'py, PyAny>,
    result_text: Option<&Bound<'py, PyString>>,
) -> PyResult<(Option<String>, Option<i64>)> {
    let Some(result) = result_text else {
        return Ok((None, None));
    };
    let text = args::py_text(result)?;
    with_args(arguments, |a| {
        let (command, code) = failures::command_exit(py, a, &text)?;
        let code = match code {
            Some(failures::Code::Value(v)) => Some(v),
            _ => None,
        };
        Ok((command, code))
    })
}

/// `refine_failure(tool, canonical, arguments, result_text, failed, config)` with `config` an
/// `ErrorStreakSettings`.
#[pyfunction]
fn refine_failure<'py>(
    py: Python<'py>,
    tool: &Bound<'py, PyString>,
    canonical: &str,
    arguments: &Bound<'py, PyAny>,
    result_text: Option<Bound<'py, PyString>>,
    failed: bool,
    config: &Bound<'py, PyAny>,
) -> PyResult<bool> {
    let Some(result) = result_text else {
        return Ok(failed);
    };
    let cfg = settings::ErrorStreakSettings::read(py, config)?;
    let tool = args::py_text(tool)?;
    let non_failing = cfg
        .non_failing_tools
        .contains(normalize::lower(py, &tool)?.as_ref());
    let text = normalize::Text::from_py(result)?;
    with_args(arguments, |a| {
        failures::refine_failure(py, &cfg, non_failing, canonical, a, &text, failed)
    })
}

/// The built-in exec failure patterns (`DEFAULT_EXEC_FAILURE_PATTERNS`), searched multi-line.
#[pyfunction]
fn default_failure(text: &Bound<'_, PyString>) -> PyResult<bool> {
    Ok(failures::default_failure(&args::py_text(text)?))
}

/// Runs `f` on a call's arguments read as the core reads them.
fn with_args<'py, R>(
    value: &Bound<'py, PyAny>,
    f: impl FnOnce(&args::Args<'_, 'py>) -> PyResult<R>,
) -> PyResult<R> {
    match value.downcast::<PyString>() {
        Ok(s) => {
            let text = args::py_text(s)?;
            f(&args::Args::from_py(value, Some(&text))?)
        }
        Err(_) => f(&args::Args::from_py(value, None)?),
    }
}

/// The kind of a tool as a tuple `(canonical, category, override_key, is_poll, known)`.
type KindTuple<'py> = (
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    bool,
    bool,
);

fn kind_tuple<'py>(py: Python<'py>, kind: &categories::ToolKind<'_>) -> PyResult<KindTuple<'py>> {
    Ok((
        args::to_py_str(py, &kind.canonical)?,
        args::to_py_str(py, &kind.category)?,
        args::to_py_str(py, &kind.override_key)?,
        kind.is_poll,
        kind.known,
    ))
}

/// The Rust `Categorizer`, for the differential checks.
#[pyclass(module = "otel_cycleguard._core", name = "Categorizer")]
struct PyCategorizer {
    inner: categories::Categorizer,
}

#[pymethods]
impl PyCategorizer {
    /// The names lower-cased (Python's `str.lower`) by the caller.
    #[new]
    fn new(
        extra_categories: HashMap<String, String>,
        read_only_tools: HashSet<String>,
        poll_tools: HashSet<String>,
    ) -> Self {
        PyCategorizer {
            inner: categories::Categorizer::new(extra_categories, read_only_tools, poll_tools),
        }
    }

    #[pyo3(signature = (tool, arguments=None, read_only=None))]
    fn classify<'py>(
        &self,
        py: Python<'py>,
        tool: &Bound<'py, PyString>,
        arguments: Option<&Bound<'py, PyAny>>,
        read_only: Option<bool>,
    ) -> PyResult<KindTuple<'py>> {
        let none = py.None().into_bound(py);
        let arguments = arguments.unwrap_or(&none);
        let tool = args::py_text(tool)?;
        catch_unwind(AssertUnwindSafe(|| {
            with_args(arguments, |a| {
                self.inner
                    .classify(py, &tool, a, read_only)
                    .and_then(|k| kind_tuple(py, &k))
            })
        }))
        .unwrap_or_else(|_| Err(pyo3::exceptions::PyRuntimeError::new_err("core panicked")))
    }
}

/// `edits_files(arguments)` (never raises).
#[pyfunction]
fn edits_files(py: Python<'_>, arguments: &Bound<'_, PyAny>) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        with_args(arguments, |a| {
            Ok(a.command_text(py)?.is_some_and(|t| shell::edits_files(&t)))
        })
        .unwrap_or(false)
    }))
    .unwrap_or(false)
}

/// `changes_environment(arguments)` (never raises).
#[pyfunction]
fn changes_environment(py: Python<'_>, arguments: &Bound<'_, PyAny>) -> bool {
    catch_unwind(AssertUnwindSafe(|| {
        with_args(arguments, |a| {
            Ok(a.command_text(py)?
                .is_some_and(|t| shell::changes_environment(&t)))
        })
        .unwrap_or(false)
    }))
    .unwrap_or(false)
}

/// `command_text(arguments)`.
#[pyfunction]
fn command_text<'py>(
    py: Python<'py>,
    arguments: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    with_args(arguments, |a| match a.command_text(py)? {
        Some(t) => Ok(Some(args::to_py_str(py, &t)?)),
        None => Ok(None),
    })
}

/// `_is_readonly_command(arguments)`.
#[pyfunction]
fn readonly_command(py: Python<'_>, arguments: &Bound<'_, PyAny>) -> PyResult<bool> {
    with_args(arguments, |a| categories::readonly_command(py, a))
}

/// `command_words(command)`.
#[pyfunction]
fn command_words<'py>(command: &Bound<'py, PyString>) -> PyResult<Vec<Bound<'py, PyString>>> {
    let text = args::py_text(command)?;
    shell::command_words(&text)
        .into_iter()
        .map(|w| args::to_py_str(command.py(), w))
        .collect()
}

/// `shlex.split(text)` (POSIX, no comments), None where it raises ValueError.
#[pyfunction]
fn shlex_split<'py>(text: &Bound<'py, PyString>) -> PyResult<Option<Vec<Bound<'py, PyString>>>> {
    let words = shell::shlex_split(&args::py_text(text)?).ok();
    words
        .map(|w| w.iter().map(|w| args::to_py_str(text.py(), w)).collect())
        .transpose()
}

/// Every character of one of Python's classes as the core reads them (`"space"`: `isspace`,
/// `"alnum"`: `isalnum`, `"decimal"`: `isdecimal`), for the tests that compare them with the
/// interpreter's.
#[pyfunction]
fn _class_chars(which: &str) -> PyResult<String> {
    let test: fn(char) -> bool = match which {
        "space" => pystr::is_space,
        "alnum" => pystr::is_alnum,
        "decimal" => pystr::is_decimal,
        _ => return Err(PyValueError::new_err("space, alnum or decimal")),
    };
    Ok((0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| test(c))
        .collect())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_class_chars, m)?)?;
    m.add("UNICODE_VERSION", pyclass::UNICODE_VERSION)?;
    m.add_class::<PyCategorizer>()?;
    m.add_class::<conventions::Conventions>()?;
    m.add_class::<span_scope::SpanScope>()?;
    m.add_class::<span_scope::Scopes>()?;
    m.add_class::<derive::Messages>()?;
    m.add_class::<derive::DerivedCalls>()?;
    // the bounds the Python readers of the same stages share (one source: these)
    m.add("MAX_CALLS", derive::MAX_CALLS)?;
    m.add("MAX_JSON_CHARS", derive::MAX_JSON_CHARS)?;
    m.add("MAX_SESSION_ID_LENGTH", conventions::MAX_SESSION_ID_LENGTH)?;
    m.add_function(wrap_pyfunction!(edits_files, m)?)?;
    m.add_function(wrap_pyfunction!(changes_environment, m)?)?;
    m.add_function(wrap_pyfunction!(command_text, m)?)?;
    m.add_function(wrap_pyfunction!(readonly_command, m)?)?;
    m.add_function(wrap_pyfunction!(command_words, m)?)?;
    m.add_function(wrap_pyfunction!(shlex_split, m)?)?;
    m.add_function(wrap_pyfunction!(command_exit, m)?)?;
    m.add_function(wrap_pyfunction!(refine_failure, m)?)?;
    m.add_function(wrap_pyfunction!(default_failure, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(otlp_spans, m)?)?;
    m.add_function(wrap_pyfunction!(otlp_json_spans, m)?)?;
    m.add_class::<PyNormalizer>()?;
    m.add_class::<PyDetector>()?;
    m.add_class::<PySession>()?;
    m.add_function(wrap_pyfunction!(mask_ascii, m)?)?;
    m.add("text_hash_ascii", wrap_pyfunction!(text_hash_ascii_py, m)?)?;
    m.add_function(wrap_pyfunction!(xxh3, m)?)?;
    m.add_function(wrap_pyfunction!(heap_counting, m)?)?;
    m.add_function(wrap_pyfunction!(heap_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(text_digest_ascii, m)?)?;
    Ok(())
}
