//! Tool calls derived from model spans, never counted twice: the stage behind
//! `otel_cycleguard.derive` and `otel_cycleguard.model_messages`, whose documentation states
//! the rules (what a model span's messages ask for and answer, how a derived call is paired
//! with its result one turn later, how a real tool span cancels one).
//!
//! [`Messages`] reads a model span's messages: the OTel GenAI JSON lists here (parsed in
//! document order and handed to Python as orjson would hand them), the indexed OpenInference
//! and OpenLLMetry attributes and the older per-message events by the Python readers of
//! `model_messages`, each shape read in one place. [`DerivedCalls`] keeps, per session, the
//! calls the last model span asked for and the real tool calls seen since, bounded (sessions
//! least recently used first, [`MAX_CALLS`] calls), and never raises a reading error: a shape
//! it cannot read asks for nothing.

use crate::canon::{self, exact_str};
use crate::conventions::{char_len, equals, non_empty_str, Attrs, Conventions};
use crate::json::{self, Value};
use crate::slotted::{SlotReader, Slotted};
use lru::LruCache;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple, PyType};
use std::borrow::Cow;
use std::num::NonZeroUsize;
use std::sync::Mutex;

/// At most this many tool calls are read from one message list, and kept per session.
pub const MAX_CALLS: usize = 64;
/// JSON message lists longer than this (characters) are not parsed.
pub const MAX_JSON_CHARS: isize = 4_000_000;

const REQUESTED_FIELDS: [&str; 3] = ["id", "name", "arguments"];
const RETURNED_FIELDS: [&str; 3] = ["id", "content", "error"];
/// Event names that carry messages (content capture on).
const CONTENT_EVENTS: [&str; 4] = [
    "gen_ai.choice",
    "gen_ai.tool.message",
    "gen_ai.user.message",
    "gen_ai.assistant.message",
];
/// Indexed message keys: OpenInference's input and output, OpenLLMetry's prompt and completion.
const INDEXED_PREFIXES: [&str; 4] = [
    "llm.input_messages.",
    "llm.output_messages.",
    "gen_ai.prompt.",
    "gen_ai.completion.",
];
/// `Messages.readers`' indices of the Python readers of calls and of results, by shape
/// (OpenInference, OpenLLMetry, events).
const CALL_READERS: [usize; 3] = [0, 1, 2];
const RESULT_READERS: [usize; 3] = [3, 4, 5];

/// The attribute keys a real tool span names its call id by.
const CALL_ID_KEYS: [&str; 4] = [
    "gen_ai.tool.call.id",
    "tool_call.id",
    "tool.call.id",
    "tool_call_id",
];

/// Which message shape a model span carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    GenAi,
    OpenInference,
    Traceloop,
    /// No message attributes: the span's events, if any.
    Events,
}

/// The key an id or a name is compared by ([`canon::text_key`]), owned.
fn text_key(value: &Bound<'_, PyAny>) -> PyResult<String> {
    canon::text_key(value).map(Cow::into_owned)
}

/// A tool call the model asked for.
struct Requested {
    id: Option<String>,
    id_value: Option<Py<PyAny>>,
    name: String,
    name_value: Py<PyAny>,
    arguments: Py<PyAny>,
}

/// A result the agent sent back.
struct Returned {
    id: Option<String>,
    id_value: Option<Py<PyAny>>,
    content: Py<PyAny>,
    error: bool,
}

/// `value` as orjson gives it to Python (objects as dicts in document order, repeated keys
/// inserted in turn: the first position, the last value).
fn to_python<'py>(py: Python<'py>, value: &Value<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(entries) => {
            let dict = PyDict::new(py);
            for (key, item) in entries {
                dict.set_item(PyString::new(py, key), to_python(py, item)?)?;
            }
            dict.into_any()
        }
    })
}

/// A JSON text's string value (`_text` on a parsed value): non-empty.
fn json_text<'v>(value: Option<&'v Value<'_>>) -> Option<&'v str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Reads a model span's messages, for every convention (`model_messages`).
#[pyclass(module = "otel_cycleguard._core", name = "Messages", frozen)]
pub struct Messages {
    requested: Slotted,
    returned: Slotted,
    requested_fields: SlotReader,
    returned_fields: SlotReader,
    /// `model_messages`' readers of the other shapes: `_oi_calls`, `_tl_calls`,
    /// `_event_calls`, `_oi_results`, `_tl_results`, `_event_results`.
    readers: [Py<PyAny>; 6],
    input_messages: Py<PyString>,
    output_messages: Py<PyString>,
    oi_first: [Py<PyString>; 2],
    tl_first: [Py<PyString>; 2],
}

#[pymethods]
impl Messages {
    #[new]
    fn new(
        requested: Bound<'_, PyType>,
        requested_fields: &Bound<'_, PyTuple>,
        returned: Bound<'_, PyType>,
        returned_fields: &Bound<'_, PyTuple>,
        readers: &Bound<'_, PyTuple>,
    ) -> PyResult<Self> {
        let py = requested.py();
        let k = |s: &str| PyString::intern(py, s).unbind();
        Ok(Messages {
            requested_fields: SlotReader::new(&requested, &REQUESTED_FIELDS)?,
            returned_fields: SlotReader::new(&returned, &RETURNED_FIELDS)?,
            requested: Slotted::new(requested, requested_fields, &REQUESTED_FIELDS)?,
            returned: Slotted::new(returned, returned_fields, &RETURNED_FIELDS)?,
            readers: crate::items_of(readers, "readers")?,
            input_messages: k("gen_ai.input.messages"),
            output_messages: k("gen_ai.output.messages"),
            oi_first: [
                k("llm.output_messages.0.message.role"),
                k("llm.input_messages.0.message.role"),
            ],
            tl_first: [k("gen_ai.completion.0.role"), k("gen_ai.prompt.0.role")],
        })
    }

    /// Whether the span carries any messages at all (capture may be off). `events`: the
    /// span's `(name, attributes)` pairs.
    #[pyo3(signature = (attributes, events=None))]
    fn has_content(
        &self,
        attributes: &Bound<'_, PyAny>,
        events: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        crate::guarded(|| {
            let events = event_list(events)?;
            self.content(attributes, &events)
        })
    }

    /// The tool calls the model asked for in this span's output, in order.
    #[pyo3(signature = (attributes, events=None))]
    fn requested_calls<'py>(
        &self,
        attributes: &Bound<'py, PyAny>,
        events: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::guarded(|| {
            let py = attributes.py();
            let events = event_list(events)?;
            let out = PyList::empty(py);
            for call in self.requested(attributes, &events) {
                let id = or_none(py, &call.id_value);
                let fields = [&id, call.name_value.bind(py), call.arguments.bind(py)];
                out.append(self.requested.make(py, &fields)?)?;
            }
            Ok(out)
        })
    }

    /// The tool results this span's input sent back (after the last assistant message).
    #[pyo3(signature = (attributes, events=None))]
    fn returned_results<'py>(
        &self,
        attributes: &Bound<'py, PyAny>,
        events: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::guarded(|| {
            let py = attributes.py();
            let events = event_list(events)?;
            let out = PyList::empty(py);
            for result in self.returned(attributes, &events) {
                let id = or_none(py, &result.id_value);
                let error = PyBool::new(py, result.error);
                let fields = [&id, result.content.bind(py), error.as_any()];
                out.append(self.returned.make(py, &fields)?)?;
            }
            Ok(out)
        })
    }
}

/// An optional value as Python holds it (None for none).
fn or_none<'py>(py: Python<'py>, value: &Option<Py<PyAny>>) -> Bound<'py, PyAny> {
    match value {
        Some(value) => value.bind(py).clone(),
        None => py.None().into_bound(py),
    }
}

/// The events as a list (`list(events) if events else []`).
fn event_list<'py>(events: Option<&Bound<'py, PyAny>>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    match events {
        Some(events) if !events.is_none() => events.try_iter()?.collect(),
        _ => Ok(Vec::new()),
    }
}

impl Messages {
    fn contains(&self, attributes: &Bound<'_, PyAny>, key: &Py<PyString>) -> PyResult<bool> {
        Attrs::new(attributes).contains(key)
    }

    /// Which message shape the attributes carry (`_convention`).
    fn shape(&self, attributes: &Bound<'_, PyAny>) -> PyResult<Shape> {
        if self.contains(attributes, &self.input_messages)?
            || self.contains(attributes, &self.output_messages)?
        {
            return Ok(Shape::GenAi);
        }
        if self.contains(attributes, &self.oi_first[0])?
            || self.contains(attributes, &self.oi_first[1])?
        {
            return Ok(Shape::OpenInference);
        }
        if self.contains(attributes, &self.tl_first[0])?
            || self.contains(attributes, &self.tl_first[1])?
        {
            return Ok(Shape::Traceloop);
        }
        // the first messages may have been dropped (the SDK's attribute limit)
        for key in attributes.try_iter()? {
            let key = key?;
            let Ok(text) = exact_str(&key) else {
                continue; // not a plain str: no message key
            };
            if INDEXED_PREFIXES.iter().any(|p| text.starts_with(p)) {
                return Ok(if text.starts_with("llm.") {
                    Shape::OpenInference
                } else {
                    Shape::Traceloop
                });
            }
        }
        Ok(Shape::Events)
    }

    fn content(
        &self,
        attributes: &Bound<'_, PyAny>,
        events: &[Bound<'_, PyAny>],
    ) -> PyResult<bool> {
        if self.shape(attributes)? != Shape::Events {
            return Ok(true);
        }
        for event in events {
            let name = event.get_item(0)?;
            for content in CONTENT_EVENTS {
                if equals(&name, content)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The message list of a GenAI attribute, parsed in document order; None when it is not
    /// a str, is longer than [`MAX_JSON_CHARS`], is not JSON, or nests deeper than the
    /// parser reads (128 levels).
    fn genai_messages<'py>(
        &self,
        attributes: &Bound<'py, PyAny>,
        key: &Py<PyString>,
        read: impl FnOnce(&str) -> PyResult<()>,
    ) -> PyResult<()> {
        let raw = Attrs::new(attributes).get(key)?;
        let Some(raw) = raw.filter(|r| r.is_instance_of::<PyString>()) else {
            return Ok(());
        };
        if char_len(raw.downcast::<PyString>()?) > MAX_JSON_CHARS {
            return Ok(());
        }
        let text = match exact_str(&raw) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            // a subclass is read as its text; a lone surrogate is not JSON (orjson refuses it)
            Err(_) => match raw.downcast::<PyString>()?.to_str() {
                Ok(text) => std::borrow::Cow::Owned(text.to_owned()),
                Err(_) => return Ok(()),
            },
        };
        read(&text)
    }

    /// The answer of `model_messages`' reader of `shape` (`readers`: the indices of the
    /// OpenInference, OpenLLMetry and events readers of calls or of results).
    fn python_reader<'py>(
        &self,
        shape: Shape,
        readers: [usize; 3],
        attributes: &Bound<'py, PyAny>,
        events: &[Bound<'py, PyAny>],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = attributes.py();
        match shape {
            Shape::OpenInference => self.readers[readers[0]].bind(py).call1((attributes,)),
            Shape::Traceloop => self.readers[readers[1]].bind(py).call1((attributes,)),
            Shape::Events | Shape::GenAi => self.readers[readers[2]]
                .bind(py)
                .call1((PyList::new(py, events)?,)),
        }
    }

    /// `requested_calls`, as the stage keeps them; a reading error asks for nothing.
    fn requested(
        &self,
        attributes: &Bound<'_, PyAny>,
        events: &[Bound<'_, PyAny>],
    ) -> Vec<Requested> {
        let read = |call: Bound<'_, PyAny>| {
            let id = self.requested_fields.get(&call, 0)?;
            let name = self.requested_fields.get(&call, 1)?;
            let arguments = self.requested_fields.get(&call, 2)?;
            let id = if id.is_none() { None } else { Some(id) };
            Ok(Requested {
                id: id.as_ref().map(text_key).transpose()?,
                id_value: id.map(Bound::unbind),
                name: text_key(&name)?,
                name_value: name.unbind(),
                arguments: arguments.unbind(),
            })
        };
        self.read_list(
            attributes,
            events,
            &self.output_messages,
            genai_calls,
            CALL_READERS,
            read,
        )
        .unwrap_or_default()
    }

    /// `returned_results`, as the stage keeps them; a reading error answers nothing.
    fn returned(
        &self,
        attributes: &Bound<'_, PyAny>,
        events: &[Bound<'_, PyAny>],
    ) -> Vec<Returned> {
        let read = |result: Bound<'_, PyAny>| {
            let id = self.returned_fields.get(&result, 0)?;
            let content = self.returned_fields.get(&result, 1)?;
            let error = self.returned_fields.get(&result, 2)?.is_truthy()?;
            let id = if id.is_none() { None } else { Some(id) };
            Ok(Returned {
                id: id.as_ref().map(text_key).transpose()?,
                id_value: id.map(Bound::unbind),
                content: content.unbind(),
                error,
            })
        };
        self.read_list(
            attributes,
            events,
            &self.input_messages,
            genai_results,
            RESULT_READERS,
            read,
        )
        .unwrap_or_default()
    }

    /// Calls or results of the span's shape: the GenAI list at `key` read here by `genai`,
    /// any other shape by its Python reader (`readers`), each item converted by `read`.
    fn read_list<'py, T>(
        &self,
        attributes: &Bound<'py, PyAny>,
        events: &[Bound<'py, PyAny>],
        key: &Py<PyString>,
        genai: fn(Python<'_>, &str, &mut Vec<T>) -> PyResult<()>,
        readers: [usize; 3],
        read: impl Fn(Bound<'py, PyAny>) -> PyResult<T>,
    ) -> PyResult<Vec<T>> {
        let py = attributes.py();
        let shape = self.shape(attributes)?;
        let mut out = Vec::new();
        if shape == Shape::GenAi {
            self.genai_messages(attributes, key, |messages| genai(py, messages, &mut out))?;
            return Ok(out);
        }
        for item in self
            .python_reader(shape, readers, attributes, events)?
            .try_iter()?
        {
            out.push(read(item?)?);
        }
        Ok(out)
    }
}

/// `{"role", "parts": [{"type": "tool_call", "id", "name", "arguments"}]}` messages: the
/// calls, in order, at most [`MAX_CALLS`].
fn genai_calls(py: Python<'_>, text: &str, calls: &mut Vec<Requested>) -> PyResult<()> {
    let Ok(found) = crate::genai_messages::tool_calls(text, MAX_CALLS) else {
        return Ok(()); // not JSON (or deeper than the parser reads): no calls
    };
    for call in found {
        let arguments = match &call.arguments {
            Some(value) => to_python(py, value)?,
            None => py.None().into_bound(py),
        };
        calls.push(Requested {
            id: call.id.as_deref().map(str::to_owned),
            id_value: call
                .id
                .as_deref()
                .map(|id| PyString::new(py, id).into_any().unbind()),
            name: call.name.to_string(),
            name_value: PyString::new(py, &call.name).into_any().unbind(),
            arguments: arguments.unbind(),
        });
    }
    Ok(())
}

/// `{"role": "tool", "parts": [{"type": "tool_call_response", "id", "response"}]}` messages
/// after the last assistant message: the results, at most [`MAX_CALLS`]. `is_error: true`,
/// or an `error` that is neither null, false nor zero, marks a failed call.
fn genai_results(py: Python<'_>, text: &str, results: &mut Vec<Returned>) -> PyResult<()> {
    match json::parse_ordered(text) {
        Ok(messages) => results_in(py, &messages, results),
        Err(_) => Ok(()), // not JSON (or deeper than the parser reads): no results
    }
}

/// The results of a parsed message list (see [`genai_results`]).
fn results_in(py: Python<'_>, messages: &Value<'_>, results: &mut Vec<Returned>) -> PyResult<()> {
    let Value::Array(messages) = messages else {
        return Ok(());
    };
    let is_assistant =
        |m: &Value<'_>| m.get_last("role").and_then(Value::as_str) == Some("assistant");
    let Some(last) = messages.iter().rposition(is_assistant) else {
        return Ok(()); // no assistant message yet: the first turn has no results
    };
    for message in &messages[last + 1..] {
        let Some(Value::Array(parts)) = message.get_last("parts") else {
            continue;
        };
        for part in parts {
            if part.get_last("type").and_then(Value::as_str) != Some("tool_call_response")
                || results.len() >= MAX_CALLS
            {
                continue;
            }
            let failed = match part.get_last("error") {
                None | Some(Value::Null) | Some(Value::Bool(false)) => false,
                Some(Value::Int(0)) => false,
                Some(Value::Float(f)) if *f == 0.0 => false,
                Some(_) => true,
            };
            let error = matches!(part.get_last("is_error"), Some(Value::Bool(true))) || failed;
            let id = json_text(part.get_last("id"));
            let content = match part.get_last("response") {
                Some(value) => to_python(py, value)?,
                None => py.None().into_bound(py),
            };
            results.push(Returned {
                id: id.map(str::to_owned),
                id_value: id.map(|id| PyString::new(py, id).into_any().unbind()),
                content: content.unbind(),
                error,
            });
        }
    }
    Ok(())
}

/// One session's pending requests (from its last model span) and this turn's real calls.
#[derive(Default)]
struct Session {
    pending: Vec<Requested>,
    /// `end_ns / 1e9` of the model span that asked (None: unknown).
    pending_end_s: Option<Py<PyAny>>,
    /// Real tool calls since: (call id, tool name, canonical arguments).
    real: Vec<RealCall>,
    /// A real tool span was seen: this session's tools are traced.
    tools: bool,
    /// Model spans without message content.
    bare: u32,
}

/// The sessions, least recently used first out, and the counters.
struct Table {
    sessions: LruCache<String, Session>,
    emitted: u64,
    covered: u64,
}

impl Table {
    /// The session's state (a use); created when missing, dropping the least recently used
    /// one past the bound.
    fn session(&mut self, key: &str) -> &mut Session {
        if !self.sessions.contains(key) {
            self.sessions.push(key.to_owned(), Session::default());
        }
        self.sessions
            .get_mut(key)
            .expect("a session just found or made")
    }
}

/// Derives tool calls from a session's model spans and drops those real tool spans cover
/// (`otel_cycleguard.derive.DerivedCalls`, which subclasses it).
#[pyclass(
    module = "otel_cycleguard._core",
    name = "DerivedCalls",
    frozen,
    subclass
)]
pub struct DerivedCalls {
    table: Mutex<Table>,
    messages: Py<Messages>,
    conventions: Py<Conventions>,
    /// `canonical_json` (what the core cannot write), `capture_hint`, `log_missing(hint)`.
    helpers: [Py<PyAny>; 3],
    /// Sessions whose model spans carried no message content while no tool span was seen,
    /// by the setting that turns capture on (the analyze report lists them).
    #[pyo3(get)]
    notes: Py<PyDict>,
    calls: SlotReader,
    call_id_keys: [Py<PyString>; 4],
}

#[pymethods]
impl DerivedCalls {
    #[new]
    #[pyo3(signature = (messages, conventions, tool_call, helpers, max_sessions=10_000))]
    fn new(
        py: Python<'_>,
        messages: Py<Messages>,
        conventions: Py<Conventions>,
        tool_call: &Bound<'_, PyType>,
        helpers: &Bound<'_, PyTuple>,
        max_sessions: i64,
    ) -> PyResult<Self> {
        if helpers.len() != 3 {
            return Err(PyValueError::new_err("three helpers expected"));
        }
        let helper = |i: usize| -> PyResult<Py<PyAny>> { Ok(helpers.get_item(i)?.unbind()) };
        let bound = NonZeroUsize::new(usize::try_from(max_sessions.max(1)).unwrap_or(1))
            .unwrap_or(NonZeroUsize::MIN);
        let k = |s: &str| PyString::intern(py, s).unbind();
        Ok(DerivedCalls {
            table: Mutex::new(Table {
                sessions: LruCache::new(bound),
                emitted: 0,
                covered: 0,
            }),
            messages,
            conventions,
            helpers: [helper(0)?, helper(1)?, helper(2)?],
            notes: PyDict::new(py).unbind(),
            calls: SlotReader::new(tool_call, &["tool", "arguments"])?,
            call_id_keys: CALL_ID_KEYS.map(k),
        })
    }

    /// Derived calls handed to the detector.
    #[getter]
    fn emitted(&self) -> PyResult<u64> {
        crate::guarded(|| Ok(self.lock()?.emitted))
    }

    /// Derived calls dropped: a real tool span described the same call.
    #[getter]
    fn covered(&self) -> PyResult<u64> {
        crate::guarded(|| Ok(self.lock()?.covered))
    }

    fn __len__(&self) -> PyResult<usize> {
        crate::guarded(|| Ok(self.lock()?.sessions.len()))
    }

    /// The sessions kept, least recently used first.
    fn session_keys(&self) -> PyResult<Vec<String>> {
        crate::guarded(|| {
            Ok(self
                .lock()?
                .sessions
                .iter()
                .rev()
                .map(|(k, _)| k.clone())
                .collect())
        })
    }

    /// A real tool span of `session` ended: it covers one pending derived call.
    fn tool_span(
        &self,
        session: &Bound<'_, PyString>,
        attributes: &Bound<'_, PyAny>,
        call: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        crate::guarded(|| {
            let key = text_key(session.as_any())?;
            {
                let mut table = self.lock()?;
                let state = table.session(&key);
                state.tools = true;
                if state.pending.is_empty() || state.real.len() >= MAX_CALLS {
                    return Ok(()); // nothing pending: nothing to cancel
                }
            }
            // read outside the lock (a subclass's fields, the canonical form's Python fallback)
            let call_id = self.call_id(attributes)?;
            let tool = text_key(&self.calls.get(call, 0)?)?;
            let arguments = self.canonical(&self.calls.get(call, 1)?)?;
            let mut table = self.lock()?;
            let state = table.session(&key);
            if !state.pending.is_empty() && state.real.len() < MAX_CALLS {
                state.real.push((call_id, tool, arguments));
            }
            Ok(())
        })
    }

    /// Whether `session` has requested calls waiting for their results.
    fn pending(&self, session: &Bound<'_, PyString>) -> PyResult<bool> {
        crate::guarded(|| {
            let key = text_key(session.as_any())?;
            let mut table = self.lock()?;
            Ok(table
                .sessions
                .get(&key)
                .is_some_and(|s| !s.pending.is_empty()))
        })
    }

    /// The derived calls to observe before this model turn (may be empty). `events`: the
    /// span's `(name, attributes)` pairs. (Positional too: the pipeline's call.)
    #[pyo3(signature = (session, attributes, events=None, start_ns=None, end_ns=None, span_id=None))]
    #[allow(clippy::too_many_arguments)]
    fn model_span<'py>(
        &self,
        session: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
        events: Option<&Bound<'py, PyAny>>,
        start_ns: Option<&Bound<'py, PyAny>>,
        end_ns: Option<&Bound<'py, PyAny>>,
        span_id: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::guarded(|| {
            let py = session.py();
            let key = text_key(session.as_any())?;
            let messages = self.messages.get();
            let events = event_list(events)?;
            let out = PyList::empty(py);
            if !messages.content(attributes, &events)? {
                let blind = {
                    let mut table = self.lock()?;
                    let state = table.session(&key);
                    state.pending.clear();
                    state.real.clear();
                    state.bare = state.bare.saturating_add(1);
                    state.bare == 2 && !state.tools
                };
                if blind {
                    // a second bare turn and no tool span: this session's calls are unseen
                    self.note_missing(attributes)?;
                }
                return Ok(out);
            }
            let requested = messages.requested(attributes, &events); // parsed outside the lock
            let waiting = {
                let mut table = self.lock()?;
                !table.session(&key).pending.is_empty()
            };
            let results = if waiting {
                messages.returned(attributes, &events)
            } else {
                Vec::new()
            };
            let zero = || 0i64.into_pyobject(py).map(|z| z.into_any());
            let start_ns = match start_ns {
                Some(v) => v.clone(),
                None => zero()?,
            };
            let end_ns = match end_ns {
                Some(v) => v.clone(),
                None => zero()?,
            };
            let span_id = match span_id {
                Some(v) => v.clone(),
                None => py.None().into_bound(py),
            };
            let end_s = crate::conventions::seconds(py, &start_ns)?;
            let pending_end_s = crate::conventions::seconds(py, &end_ns)?;
            if results.is_empty() {
                if waiting && requested.is_empty() {
                    // Neither answers nor asks: a side call (a guardrail, a summary) between the
                    // two turns of the agent; the calls stay pending for the turn that answers.
                    return Ok(out);
                }
            } else {
                // The session's pending calls and real calls leave the table while they are
                // paired (the canonical form may call Python); they are replaced below anyway.
                let (pending, mut real, asked_end) = {
                    let mut table = self.lock()?;
                    let state = table.session(&key);
                    (
                        std::mem::take(&mut state.pending),
                        std::mem::take(&mut state.real),
                        state.pending_end_s.take(),
                    )
                };
                let canonical = |request: &Requested| self.canonical(request.arguments.bind(py));
                let pairs = pair(&pending, &mut real, &results, canonical)?;
                let conventions = self.conventions.get();
                let none = py.None().into_bound(py);
                let asked_end = or_none(py, &asked_end);
                let mut made = 0u64;
                let mut covered = 0u64;
                for outcome in pairs {
                    let Pairing::Paired(request, result) = outcome else {
                        covered += 1;
                        continue;
                    };
                    let (request, result) = (&pending[request], &results[result]);
                    out.append(conventions.make_tool_call(
                        py,
                        &[
                            request.name_value.bind(py),
                            request.arguments.bind(py),
                            result.content.bind(py),
                            PyBool::new(py, result.error).as_any(),
                            &asked_end,
                            &end_s,
                            &none,
                            &none,
                            &span_id,
                        ],
                    )?)?;
                    made += 1;
                }
                let mut table = self.lock()?;
                table.covered += covered;
                table.emitted += made;
            }
            let mut table = self.lock()?;
            let state = table.session(&key);
            state.pending = requested;
            state.pending_end_s = if pending_end_s.is_none() {
                None
            } else {
                Some(pending_end_s.unbind())
            };
            state.real.clear();
            Ok(out)
        })
    }

    /// In a forked child: nothing to renew (the table's lock is held only while no Python
    /// code runs, so a fork never finds it held).
    fn after_fork(&self) {}
}

/// What became of one pending request.
enum Pairing {
    /// A real tool span described it.
    Covered,
    /// (request index, result index): a derived call.
    Paired(usize, usize),
}

/// Pending calls with their results (by id, else by order), minus the real ones (`_pair`).
/// Requests no result came back for are dropped (the agent did not run them).
fn pair(
    pending: &[Requested],
    real: &mut Vec<RealCall>,
    results: &[Returned],
    canonical: impl Fn(&Requested) -> PyResult<Vec<u8>>,
) -> PyResult<Vec<Pairing>> {
    let mut by_id: crate::fasthash::HashMap<&str, usize> = Default::default();
    for (index, result) in results.iter().enumerate() {
        if let Some(id) = &result.id {
            by_id.insert(id.as_str(), index); // the last result of an id answers it
        }
    }
    let asked: crate::fasthash::HashSet<Option<&str>> =
        pending.iter().map(|p| p.id.as_deref()).collect();
    let mut unclaimed: std::collections::VecDeque<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.id.is_none() || !asked.contains(&r.id.as_deref()))
        .map(|(i, _)| i)
        .collect();
    let mut out = Vec::new();
    for (index, request) in pending.iter().enumerate() {
        let by_its_id = request.id.as_deref().and_then(|id| by_id.get(id).copied());
        let Some(result) = by_its_id.or_else(|| unclaimed.pop_front()) else {
            continue; // no result came back for it: the agent did not run it
        };
        if !real.is_empty() && covered(request, real, &canonical)? {
            out.push(Pairing::Covered);
            continue;
        }
        out.push(Pairing::Paired(index, result));
    }
    Ok(out)
}

/// A real tool call of the turn: (call id, tool name, canonical arguments).
type RealCall = (Option<String>, String, Vec<u8>);

/// Whether a real call covers `request` (and consume it): by id, else by name and canonical
/// arguments (an id-less real call, or one with the same id), else by name alone (id-less).
fn covered(
    request: &Requested,
    real: &mut Vec<RealCall>,
    canonical: impl Fn(&Requested) -> PyResult<Vec<u8>>,
) -> PyResult<bool> {
    if let Some(id) = &request.id {
        if let Some(at) = real
            .iter()
            .position(|(call_id, _, _)| call_id.as_ref() == Some(id))
        {
            real.remove(at);
            return Ok(true);
        }
    }
    let arguments = canonical(request)?;
    if let Some(at) = real.iter().position(|(call_id, name, args)| {
        *name == request.name && *args == arguments && (call_id.is_none() || *call_id == request.id)
    }) {
        real.remove(at);
        return Ok(true);
    }
    if let Some(at) = real
        .iter()
        .position(|(call_id, name, _)| *name == request.name && call_id.is_none())
    {
        real.remove(at);
        return Ok(true);
    }
    Ok(false)
}

impl DerivedCalls {
    /// The table, locked. Every caller holds the GIL and runs no Python code while it holds
    /// the lock, so no call can find it held, save one let in by Python code that a drop
    /// inside a locked section ran (a finalizer), on this thread or another: that call is
    /// refused (an error the span hooks count) rather than left waiting forever. A poisoned
    /// lock (a panic inside) still guards a table whose invariants hold between statements.
    fn lock(&self) -> PyResult<std::sync::MutexGuard<'_, Table>> {
        match self.table.try_lock() {
            Ok(table) => Ok(table),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => Ok(poisoned.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => {
                Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "the derived-calls table is in use (a finalizer ran inside it)",
                ))
            }
        }
    }

    /// The tool-call id a real tool span names (`tool_call_id`).
    fn call_id(&self, attributes: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let attrs = Attrs::new(attributes);
        for key in &self.call_id_keys {
            if let Some(id) = non_empty_str(attrs.get(key)?) {
                return text_key(&id).map(Some);
            }
        }
        Ok(None)
    }

    /// `canonical_json(arguments)`: the core's writer, else the Python function.
    fn canonical(&self, arguments: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
        if let Ok(raw) = canon::canonical(arguments) {
            return Ok(raw.into_owned());
        }
        let raw = self.helpers[0].bind(arguments.py()).call1((arguments,))?;
        Ok(raw.downcast::<PyBytes>()?.as_bytes().to_vec())
    }

    fn note_missing(&self, attributes: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = attributes.py();
        let hint = self.helpers[1].bind(py).call1((attributes,))?;
        let notes = self.notes.bind(py);
        let count: u64 = match notes.get_item(&hint)? {
            Some(count) => count.extract()?,
            None => 0,
        };
        notes.set_item(&hint, count + 1)?;
        self.helpers[2].bind(py).call1((hint,))?;
        Ok(())
    }
}
