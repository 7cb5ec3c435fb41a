//! Reading a span's role, session, tool call and model turn out of its attributes, for every
//! instrumentation convention the guard understands (OTel GenAI, OpenInference,
//! OpenLLMetry/Traceloop, pydantic-ai's `running tool`): the one implementation behind
//! `otel_cycleguard.conventions`, shared by the live processor, the offline replay and the
//! service.
//!
//! Every span passes through here once or twice, so the common shapes are read without
//! leaving Rust: attribute look-ups with interned keys (a pointer comparison in the dict),
//! the records made through their slots ([`Slotted`]), and the output messages' JSON parsed
//! by [`crate::json`]. Shapes that are rare and whose Python answer is subtle (Traceloop's
//! wrapped inputs, LangChain's serialised tool messages, message events, numbers that are
//! neither int nor float, ids past the length bound, text the parser cannot vouch for) are
//! handed to the Python helpers of that module, which are then the only implementation of
//! that shape. The rules, key by key, are documented there and in docs/detection.md.

use crate::canon::exact_str;
use crate::json;
use crate::slotted::Slotted;
use crate::span_scope::{Role, SpanScope};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyTuple, PyType};
use pyo3::Borrowed;

/// `ToolCall`'s fields, in the order they are filled.
const TOOL_CALL_FIELDS: [&str; 9] = [
    "tool",
    "arguments",
    "result",
    "error",
    "start_s",
    "end_s",
    "read_only",
    "state_fingerprint",
    "span_id",
];

/// `ModelTurn`'s fields, in the order they are filled.
const MODEL_TURN_FIELDS: [&str; 9] = [
    "text",
    "input_tokens",
    "output_tokens",
    "start_s",
    "end_s",
    "state_fingerprint",
    "span_id",
    "error",
    "error_text",
];

/// Indexed message keys read for a turn's text (`_indexed_text`).
const INDEXED_MESSAGES: usize = 16;
/// Session ids longer than this (in characters) are bounded by the Python helper.
pub const MAX_SESSION_ID_LENGTH: isize = 256;

/// The attribute keys read here, interned once (a dict finds an interned key by pointer).
struct Keys {
    genai_op: Py<PyString>,
    oi_kind: Py<PyString>,
    tl_kind: Py<PyString>,
    llm_request_type: Py<PyString>,
    tool_names: [Py<PyString>; 3],
    genai_arguments: Py<PyString>,
    genai_result: Py<PyString>,
    input_value: Py<PyString>,
    output_value: Py<PyString>,
    tl_input: Py<PyString>,
    tl_output: Py<PyString>,
    tool_arguments: Py<PyString>,
    tool_response: Py<PyString>,
    error_type: Py<PyString>,
    read_only: [Py<PyString>; 3],
    tool_dimension: Py<PyString>,
    output_messages: Py<PyString>,
    oi_output_texts: Vec<Py<PyString>>,
    tl_completion_texts: Vec<Py<PyString>>,
    input_tokens: [Py<PyString>; 3],
    output_tokens: [Py<PyString>; 3],
    session: [Py<PyString>; 2],
    tl_session: [Py<PyString>; 4],
    agent_names: [Py<PyString>; 2],
    tl_entity_name: Py<PyString>,
}

impl Keys {
    fn new(py: Python<'_>) -> Self {
        let k = |s: &str| PyString::intern(py, s).unbind();
        let indexed = |prefix: &str, suffix: &str| {
            (0..INDEXED_MESSAGES)
                .map(|i| k(&format!("{prefix}{i}{suffix}")))
                .collect()
        };
        Keys {
            genai_op: k("gen_ai.operation.name"),
            oi_kind: k("openinference.span.kind"),
            tl_kind: k("traceloop.span.kind"),
            llm_request_type: k("llm.request.type"),
            tool_names: [
                k("gen_ai.tool.name"),
                k("tool.name"),
                k("traceloop.entity.name"),
            ],
            genai_arguments: k("gen_ai.tool.call.arguments"),
            genai_result: k("gen_ai.tool.call.result"),
            input_value: k("input.value"),
            output_value: k("output.value"),
            tl_input: k("traceloop.entity.input"),
            tl_output: k("traceloop.entity.output"),
            tool_arguments: k("tool_arguments"),
            tool_response: k("tool_response"),
            error_type: k("error.type"),
            read_only: [
                k("cycleguard.tool.read_only"),
                k("gen_ai.tool.read_only"),
                k("tool.read_only"),
            ],
            tool_dimension: k("cycleguard.tool.dimension"),
            output_messages: k("gen_ai.output.messages"),
            oi_output_texts: indexed("llm.output_messages.", ".message.content"),
            tl_completion_texts: indexed("gen_ai.completion.", ".content"),
            input_tokens: [
                k("gen_ai.usage.input_tokens"),
                k("gen_ai.usage.prompt_tokens"),
                k("llm.token_count.prompt"),
            ],
            output_tokens: [
                k("gen_ai.usage.output_tokens"),
                k("gen_ai.usage.completion_tokens"),
                k("llm.token_count.completion"),
            ],
            session: [k("gen_ai.conversation.id"), k("session.id")],
            tl_session: [
                k("traceloop.association.properties.session_id"),
                k("traceloop.association.properties.conversation_id"),
                k("traceloop.association.properties.thread_id"),
                k("traceloop.association.properties.chat_id"),
            ],
            agent_names: [k("gen_ai.agent.name"), k("agent.name")],
            tl_entity_name: k("traceloop.entity.name"),
        }
    }
}

/// The roles `classify` answers (`SpanRole`'s values, interned: Python compares them by
/// pointer first).
struct Roles {
    tool: Py<PyString>,
    model: Py<PyString>,
    agent: Py<PyString>,
    own: Py<PyString>,
    other: Py<PyString>,
}

/// The Python helpers of the rare shapes (see the module's documentation), each the only
/// implementation of its shape.
struct Helpers {
    /// `_unwrap_traceloop_input(value) -> value`
    traceloop_input: Py<PyAny>,
    /// `_unwrap_langchain_tool_message(value) -> (value, failed)`
    langchain_message: Py<PyAny>,
    /// `_text_of_messages(raw) -> str | None`
    text_of_messages: Py<PyAny>,
    /// `_text_of_events(events) -> str | None`
    text_of_events: Py<PyAny>,
    /// `_token_of(value) -> int | None` for a value neither int nor float
    token_of: Py<PyAny>,
    /// `_bounded_id(value) -> str` for an id past the length bound
    bounded_id: Py<PyAny>,
}

/// A span's attributes: a dict read in place, or any other mapping through its `get`.
pub(crate) struct Attrs<'a, 'py> {
    dict: Option<&'a Bound<'py, PyDict>>,
    any: &'a Bound<'py, PyAny>,
}

impl<'a, 'py> Attrs<'a, 'py> {
    pub(crate) fn new(attributes: &'a Bound<'py, PyAny>) -> Self {
        Attrs {
            dict: attributes.downcast_exact::<PyDict>().ok(),
            any: attributes,
        }
    }

    /// `attributes.get(key)`, None also for a key whose value is None (as Python reads it).
    #[inline]
    pub(crate) fn get(&self, key: &Py<PyString>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.get_str(key.bind(self.any.py()))
    }

    /// `attributes.get(key)` for a key the caller holds bound (any `str`).
    #[inline]
    pub(crate) fn get_str(
        &self,
        key: &Bound<'py, PyString>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let value = match self.dict {
            Some(dict) => dict.get_item(key)?,
            None => Some(
                self.any
                    .call_method1(pyo3::intern!(self.any.py(), "get"), (key,))?,
            ),
        };
        Ok(value.filter(|v| !v.is_none()))
    }

    /// `key in attributes`.
    #[inline]
    pub(crate) fn contains(&self, key: &Py<PyString>) -> PyResult<bool> {
        let py = self.any.py();
        match self.dict {
            Some(dict) => dict.contains(key.bind(py)),
            None => self.any.contains(key.bind(py)),
        }
    }
}

/// `value == text` as Python answers it: the bytes for an exact `str` (a lone surrogate
/// equals no constant here), the value's own comparison for anything else.
#[inline]
pub(crate) fn equals(value: &Bound<'_, PyAny>, text: &str) -> PyResult<bool> {
    if value.is_exact_instance_of::<PyString>() {
        return Ok(exact_str(value).is_ok_and(|s| s == text));
    }
    value.eq(text)
}

/// A non-empty `str` (any subclass), as `isinstance(value, str) and value` reads it.
#[inline]
pub(crate) fn non_empty_str<'py>(value: Option<Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
    value.filter(|v| v.is_instance_of::<PyString>() && !is_empty_str(v))
}

#[inline]
fn is_empty_str(value: &Bound<'_, PyAny>) -> bool {
    // SAFETY: `value` is a live `str` (checked by the callers; GIL held); PyUnicode_GetLength
    // only reads its length.
    unsafe { ffi::PyUnicode_GetLength(value.as_ptr()) == 0 }
}

/// `text.startswith(prefix)` for a `str` (any code points).
#[inline]
fn starts_with(text: &Bound<'_, PyString>, prefix: &Bound<'_, PyString>) -> PyResult<bool> {
    tail_match(text, prefix, -1)
}

/// `text.endswith(suffix)` for a `str`.
#[inline]
fn ends_with(text: &Bound<'_, PyString>, suffix: &Bound<'_, PyString>) -> PyResult<bool> {
    tail_match(text, suffix, 1)
}

fn tail_match(
    text: &Bound<'_, PyString>,
    part: &Bound<'_, PyString>,
    direction: i32,
) -> PyResult<bool> {
    // SAFETY: both are live `str` objects (GIL held); PyUnicode_Tailmatch reads them and
    // answers 1, 0, or -1 with an error set.
    let answer = unsafe {
        ffi::PyUnicode_Tailmatch(
            text.as_ptr(),
            part.as_ptr(),
            0,
            ffi::PY_SSIZE_T_MAX,
            direction,
        )
    };
    if answer < 0 {
        return Err(PyErr::fetch(text.py()));
    }
    Ok(answer == 1)
}

/// `text[start:end]` (characters; `end` past the text is its end).
fn substring<'py>(
    text: &Bound<'py, PyString>,
    start: isize,
    end: isize,
) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `text` is a live `str` (GIL held); PyUnicode_Substring answers a new reference
    // or null with an error set, which `from_owned_ptr_or_err` takes over.
    unsafe {
        Bound::from_owned_ptr_or_err(
            text.py(),
            ffi::PyUnicode_Substring(text.as_ptr(), start, end),
        )
    }
}

pub(crate) fn char_len(text: &Bound<'_, PyString>) -> isize {
    // SAFETY: as in `is_empty_str`.
    unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) }
}

/// Seconds from a span's nanoseconds, `ns / 1e9 if ns else None`.
#[inline]
pub(crate) fn seconds<'py>(py: Python<'py>, ns: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    // `int / float` converts the int to a double, correctly rounded (ties to even), and
    // divides. An exact int within 64 bits converts here the same way (`as f64` rounds to
    // nearest, ties to even), without CPython's general path for large ints; anything else
    // converts as Python converts it.
    let value = if ns.is_exact_instance_of::<PyInt>() {
        match ns.extract::<i64>() {
            Ok(0) => return Ok(py.None().into_bound(py)),
            Ok(v) => v as f64,
            Err(_) => ns.extract::<f64>()?,
        }
    } else {
        if !ns.is_truthy()? {
            return Ok(py.None().into_bound(py));
        }
        ns.extract::<f64>()?
    };
    Ok(PyFloat::new(py, value / 1e9).into_any())
}

/// Reads spans by the conventions; one per process (`otel_cycleguard.conventions`).
#[pyclass(module = "otel_cycleguard._core", name = "Conventions", frozen)]
pub struct Conventions {
    keys: Keys,
    roles: Roles,
    helpers: Helpers,
    tool_call: Slotted,
    model_turn: Slotted,
    execute_tool_prefix: Py<PyString>,
    tool_suffix: Py<PyString>,
    invoke_agent: Py<PyString>,
    invoke_agent_prefix: Py<PyString>,
    handoff: Py<PyString>,
    own_prefix: Py<PyString>,
    unknown: Py<PyString>,
}

/// How a tool span of each convention names its arguments and result.
enum ToolShape {
    GenAi,
    OpenInference,
    Traceloop,
    PydanticAi,
}

#[pymethods]
impl Conventions {
    /// `tool_call` and `model_turn`: the record classes with their dataclass field names;
    /// `helpers`: the Python functions of the rare shapes, in `Helpers`' order.
    #[new]
    fn new(
        py: Python<'_>,
        tool_call: Bound<'_, PyType>,
        tool_call_fields: &Bound<'_, PyTuple>,
        model_turn: Bound<'_, PyType>,
        model_turn_fields: &Bound<'_, PyTuple>,
        helpers: &Bound<'_, PyTuple>,
    ) -> PyResult<Self> {
        let [traceloop_input, langchain_message, text_of_messages, text_of_events, token_of, bounded_id] =
            crate::items_of(helpers, "helper functions")?;
        let intern = |s: &str| PyString::intern(py, s).unbind();
        Ok(Conventions {
            keys: Keys::new(py),
            roles: Roles {
                tool: intern("tool"),
                model: intern("model"),
                agent: intern("agent"),
                own: intern("own"),
                other: intern("other"),
            },
            helpers: Helpers {
                traceloop_input,
                langchain_message,
                text_of_messages,
                text_of_events,
                token_of,
                bounded_id,
            },
            tool_call: Slotted::new(tool_call, tool_call_fields, &TOOL_CALL_FIELDS)?,
            model_turn: Slotted::new(model_turn, model_turn_fields, &MODEL_TURN_FIELDS)?,
            execute_tool_prefix: intern("execute_tool "),
            tool_suffix: intern(".tool"),
            invoke_agent: intern("invoke_agent"),
            invoke_agent_prefix: intern("invoke_agent "),
            handoff: intern("handoff"),
            own_prefix: intern("cycleguard."),
            unknown: intern("unknown"),
        })
    }

    /// The role of a span (`SpanRole`'s values), from the few attributes each convention sets.
    fn classify<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        crate::guarded(|| self.role_of(name, attributes))
    }

    /// The tool's name by convention, falling back to the span name.
    fn tool_name<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::guarded(|| self.tool_name_of(name, &Attrs::new(attributes)))
    }

    /// The conversation/session id a span names itself, if any (long ids bounded).
    fn session_hint<'py>(
        &self,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        crate::guarded(|| self.session_hint_of(attributes))
    }

    /// The agent's name on an agent span (or any span that carries it).
    fn agent_name<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        crate::guarded(|| self.agent_name_of(name, attributes))
    }

    /// The scope of a span of `role` under `parent` (see `otel_cycleguard.span_scope`).
    #[allow(clippy::too_many_arguments)]
    fn child_scope<'py>(
        &self,
        role: &Bound<'py, PyAny>,
        name: &Bound<'py, PyString>,
        attrs: &Bound<'py, PyAny>,
        parent: Option<&Bound<'py, SpanScope>>,
        hint: Option<Bound<'py, PyAny>>,
        span_id: &Bound<'py, PyAny>,
        delegating_tools: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Py<SpanScope>>> {
        crate::guarded(|| {
            crate::span_scope::child_scope(
                self,
                Role::of(role)?,
                name,
                attrs,
                parent,
                hint,
                span_id,
                delegating_tools,
            )
        })
    }

    /// The processor's `on_start` rule in one crossing: the span's role, its own session
    /// hint (else, for a span with no tracked parent that is no plain span, the caller's
    /// `baggage(context)`), and what it passes on (`child_scope`). None when it passes
    /// nothing on (or is one of the guard's own spans); else `(role, scope)`.
    #[allow(clippy::too_many_arguments)]
    fn open_scope<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attrs: &Bound<'py, PyAny>,
        parent: Option<&Bound<'py, SpanScope>>,
        span_id: &Bound<'py, PyAny>,
        delegating_tools: &Bound<'py, PyAny>,
        baggage: &Bound<'py, PyAny>,
        context: &Bound<'py, PyAny>,
    ) -> PyResult<Option<(Bound<'py, PyString>, Py<SpanScope>)>> {
        crate::guarded(|| {
            let role = self.role(name, &Attrs::new(attrs))?;
            if role == Role::Own {
                return Ok(None);
            }
            let mut hint = self.session_hint_of(attrs)?;
            if hint.is_none() && parent.is_none() && role != Role::Other {
                hint = Some(baggage.call1((context,))?).filter(|h| !h.is_none());
            }
            let scope = crate::span_scope::child_scope(
                self,
                role,
                name,
                attrs,
                parent,
                hint,
                span_id,
                delegating_tools,
            )?;
            Ok(scope.map(|scope| (self.role_name(role).bind(name.py()).clone(), scope)))
        })
    }

    /// A `ToolCall` from a span already classified as a tool span. `event_names`: the span's
    /// event names, None for none.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (name, attributes, status_error, event_names, start_ns, end_ns, span_id, state_attribute))]
    fn tool_call<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
        status_error: bool,
        event_names: Option<&Bound<'py, PyAny>>,
        start_ns: &Bound<'py, PyAny>,
        end_ns: &Bound<'py, PyAny>,
        span_id: &Bound<'py, PyAny>,
        state_attribute: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::guarded(|| {
            let py = name.py();
            let keys = &self.keys;
            let attrs = Attrs::new(attributes);
            let mut error = status_error;
            let shape = self.tool_shape(&attrs)?;
            let (arguments, result) = match shape {
                ToolShape::GenAi => (
                    attrs.get(&keys.genai_arguments)?,
                    attrs.get(&keys.genai_result)?,
                ),
                ToolShape::OpenInference => {
                    let output = attrs.get(&keys.output_value)?;
                    let result = match output {
                        Some(value) if self.maybe_langchain_message(&value)? => {
                            let unwrapped =
                                self.helpers.langchain_message.bind(py).call1((value,))?;
                            let (content, failed): (Bound<'py, PyAny>, bool) =
                                unwrapped.extract()?;
                            error = error || failed;
                            Some(content).filter(|c| !c.is_none())
                        }
                        other => other,
                    };
                    (attrs.get(&keys.input_value)?, result)
                }
                ToolShape::Traceloop => {
                    let input = match attrs.get(&keys.tl_input)? {
                        Some(value) if maybe_traceloop_input(&value) => {
                            let unwrapped =
                                self.helpers.traceloop_input.bind(py).call1((value,))?;
                            Some(unwrapped).filter(|v| !v.is_none())
                        }
                        other => other,
                    };
                    (input, attrs.get(&keys.tl_output)?)
                }
                ToolShape::PydanticAi => (
                    attrs.get(&keys.tool_arguments)?,
                    attrs.get(&keys.tool_response)?,
                ),
            };
            if !error {
                error = attrs.get(&keys.error_type)?.is_some();
            }
            if !error {
                if let Some(names) = event_names {
                    for event in names.try_iter()? {
                        if equals(&event?, "exception")? {
                            error = true;
                            break;
                        }
                    }
                }
            }
            let read_only = self.read_only(&attrs)?;
            let fingerprint = match attrs.get_str(state_attribute)? {
                Some(value) => value.str()?.into_any(),
                None => py.None().into_bound(py),
            };
            let none = py.None().into_bound(py);
            let tool = self.tool_name_of(name, &attrs)?;
            self.tool_call.make(
                py,
                &[
                    &tool,
                    arguments.as_ref().unwrap_or(&none),
                    result.as_ref().unwrap_or(&none),
                    PyBool::new(py, error).as_any(),
                    &seconds(py, start_ns)?,
                    &seconds(py, end_ns)?,
                    &read_only,
                    &fingerprint,
                    span_id,
                ],
            )
        })
    }

    /// A `ModelTurn` (output text, token usage, failure) from a model span of any convention.
    /// `events`: the span's events as `(name, attributes)` pairs, None for none.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (attributes, events, start_ns, end_ns, span_id, state_attribute, status_error, status_message))]
    fn model_turn<'py>(
        &self,
        attributes: &Bound<'py, PyAny>,
        events: Option<&Bound<'py, PyAny>>,
        start_ns: &Bound<'py, PyAny>,
        end_ns: &Bound<'py, PyAny>,
        span_id: &Bound<'py, PyAny>,
        state_attribute: &Bound<'py, PyString>,
        status_error: bool,
        status_message: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::guarded(|| {
            let py = attributes.py();
            let keys = &self.keys;
            let attrs = Attrs::new(attributes);
            let mut text = match attrs.get(&keys.output_messages)? {
                Some(raw) => self.text_of_messages(&raw)?,
                None => None,
            };
            if text.is_none() {
                text = indexed_text(py, &attrs, &keys.oi_output_texts)?;
            }
            if text.is_none() {
                text = indexed_text(py, &attrs, &keys.tl_completion_texts)?;
            }
            if text.is_none() {
                if let Some(events) = events.filter(|e| e.is_truthy().unwrap_or(true)) {
                    text = Some(self.helpers.text_of_events.bind(py).call1((events,))?)
                        .filter(|t| !t.is_none());
                }
            }
            if text.is_none() {
                if let Some(kind) = attrs.get(&keys.oi_kind)? {
                    if equals(&kind, "LLM")? {
                        text = attrs
                            .get(&keys.output_value)?
                            .filter(|v| v.is_instance_of::<PyString>());
                    }
                }
            }
            let fingerprint = match attrs.get_str(state_attribute)? {
                Some(value) => value.str()?.into_any(),
                None => py.None().into_bound(py),
            };
            let error_type = attrs.get(&keys.error_type)?;
            let error = status_error || error_type.is_some();
            let error_text = if error {
                // f"{error_type}: {status_message or ''}", formatted by Python (str.format reads
                // each value as the f-string does)
                let kind = error_type.unwrap_or_else(|| py.None().into_bound(py));
                let message = if status_message.is_truthy()? {
                    status_message.clone()
                } else {
                    PyString::new(py, "").into_any()
                };
                pyo3::intern!(py, "{}: {}").call_method1("format", (kind, message))?
            } else {
                py.None().into_bound(py)
            };
            let none = py.None().into_bound(py);
            self.model_turn.make(
                py,
                &[
                    text.as_ref().unwrap_or(&none),
                    &self.token(&attrs, &keys.input_tokens)?,
                    &self.token(&attrs, &keys.output_tokens)?,
                    &seconds(py, start_ns)?,
                    &seconds(py, end_ns)?,
                    &fingerprint,
                    span_id,
                    PyBool::new(py, error).as_any(),
                    &error_text,
                ],
            )
        })
    }
}

/// Whether Traceloop's input may be wrapped (`'"kwargs"' in value`); the helper decides.
fn maybe_traceloop_input(value: &Bound<'_, PyAny>) -> bool {
    if !value.is_instance_of::<PyString>() {
        return false;
    }
    match exact_str(value) {
        Ok(text) => text.contains("\"kwargs\""),
        Err(_) => true, // a subclass or a lone surrogate: the helper reads it
    }
}

/// `"\n".join` of the indexed keys' `str` values, up to the first missing one; None without.
fn indexed_text<'py>(
    py: Python<'py>,
    attrs: &Attrs<'_, 'py>,
    keys: &[Py<PyString>],
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let mut texts: Vec<Bound<'py, PyAny>> = Vec::new();
    for key in keys {
        let Some(value) = attrs.get(key)? else {
            break;
        };
        if value.is_instance_of::<PyString>() {
            texts.push(value);
        }
    }
    if texts.is_empty() {
        return Ok(None);
    }
    let newline = pyo3::intern!(py, "\n");
    Ok(Some(newline.call_method1("join", (texts,))?))
}

impl Conventions {
    /// A `ToolCall` from its fields, in order.
    pub(crate) fn make_tool_call<'py>(
        &self,
        py: Python<'py>,
        values: &[&Bound<'py, PyAny>],
    ) -> PyResult<Bound<'py, PyAny>> {
        self.tool_call.make(py, values)
    }

    /// `classify`.
    pub(crate) fn role_of<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyString>> {
        let role = self.role(name, &Attrs::new(attributes))?;
        Ok(self.role_name(role).bind(name.py()).clone())
    }

    /// `classify`, as a [`Role`].
    pub(crate) fn role_of_enum(
        &self,
        name: &Bound<'_, PyString>,
        attributes: &Bound<'_, PyAny>,
    ) -> PyResult<Role> {
        self.role(name, &Attrs::new(attributes))
    }

    /// The `SpanRole` value of a role (interned).
    pub(crate) fn role_name(&self, role: Role) -> &Py<PyString> {
        match role {
            Role::Tool => &self.roles.tool,
            Role::Model => &self.roles.model,
            Role::Agent => &self.roles.agent,
            Role::Own => &self.roles.own,
            Role::Other => &self.roles.other,
        }
    }

    /// True for a tool span that runs a child agent: its tool name, lower-cased, is one of
    /// `delegating` (a frozenset).
    pub(crate) fn is_delegating_tool(
        &self,
        name: &Bound<'_, PyString>,
        attributes: &Bound<'_, PyAny>,
        delegating: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let tool = self.tool_name_of(name, &Attrs::new(attributes))?;
        let lowered = tool.call_method0(pyo3::intern!(name.py(), "lower"))?;
        delegating.contains(lowered)
    }

    /// `session_hint`.
    pub(crate) fn session_hint_of<'py>(
        &self,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let attrs = Attrs::new(attributes);
        if let Some(dict) = attrs.dict {
            if !names_a_session(dict) {
                return Ok(None); // most spans name none: one look at each key
            }
        }
        for key in &self.keys.session {
            if let Some(value) = non_empty_str(attrs.get(key)?) {
                return self.bounded(value);
            }
        }
        for key in &self.keys.tl_session {
            let Some(value) = attrs.get(key)? else {
                continue;
            };
            if value.is_instance_of::<PyString>() {
                if !is_empty_str(&value) {
                    // `str(value)`: a subclass becomes a plain str
                    return self.bounded(value.str()?.into_any());
                }
            } else if value.is_instance_of::<PyInt>() {
                // an int (a bool too, as isinstance answers) names its session by its str
                return self.bounded(value.str()?.into_any());
            }
        }
        Ok(None)
    }

    /// `agent_name`.
    pub(crate) fn agent_name_of<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attributes: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let attrs = Attrs::new(attributes);
        let [first, second] = &self.keys.agent_names;
        // `get(a) or get(b)`: the second when the first is missing or falsy
        let mut value = attrs.get(first)?;
        if !matches!(&value, Some(v) if v.is_truthy()?) {
            value = attrs.get(second)?;
        }
        if let Some(value) = non_empty_str(value) {
            return Ok(Some(value));
        }
        if let Some(kind) = attrs.get(&self.keys.tl_kind)? {
            if equals(&kind, "agent")? || equals(&kind, "workflow")? {
                if let Some(value) = non_empty_str(attrs.get(&self.keys.tl_entity_name)?) {
                    return Ok(Some(value));
                }
            }
        }
        if let Some(kind) = attrs.get(&self.keys.oi_kind)? {
            if equals(&kind, "AGENT")? && char_len(name) > 0 {
                return Ok(Some(name.clone().into_any()));
            }
        }
        let py = name.py();
        if starts_with(name, self.invoke_agent_prefix.bind(py))? {
            return Ok(Some(substring(name, 13, ffi::PY_SSIZE_T_MAX)?));
        }
        Ok(None)
    }

    fn role(&self, name: &Bound<'_, PyString>, attrs: &Attrs<'_, '_>) -> PyResult<Role> {
        let py = name.py();
        if let Some(op) = attrs.get(&self.keys.genai_op)? {
            if op.is_exact_instance_of::<PyString>() {
                if let Ok(op) = exact_str(&op) {
                    match op {
                        "execute_tool" => return Ok(Role::Tool),
                        "chat" | "text_completion" | "generate_content" | "completion" => {
                            return Ok(Role::Model)
                        }
                        "invoke_agent" | "create_agent" | "invoke_workflow" => {
                            return Ok(Role::Agent)
                        }
                        _ => {}
                    }
                }
            } else if op.eq("execute_tool")? {
                return Ok(Role::Tool);
            }
        }
        if let Some(kind) = attrs.get(&self.keys.oi_kind)? {
            if equals(&kind, "TOOL")? {
                return Ok(if starts_with(name, self.handoff.bind(py))? {
                    Role::Other
                } else {
                    Role::Tool
                });
            }
            if equals(&kind, "LLM")? {
                return Ok(Role::Model);
            }
            if equals(&kind, "AGENT")? {
                return Ok(Role::Agent);
            }
        }
        if let Some(kind) = attrs.get(&self.keys.tl_kind)? {
            if equals(&kind, "tool")? {
                return Ok(Role::Tool);
            }
            if equals(&kind, "agent")? || equals(&kind, "workflow")? {
                return Ok(Role::Agent);
            }
        }
        if equals(name.as_any(), "running tool")? {
            return Ok(Role::Tool);
        }
        if equals(name.as_any(), "agent run")? || starts_with(name, self.invoke_agent.bind(py))? {
            return Ok(Role::Agent);
        }
        if starts_with(name, self.own_prefix.bind(py))? {
            return Ok(Role::Own);
        }
        if attrs.contains(&self.keys.llm_request_type)? {
            return Ok(Role::Model);
        }
        Ok(Role::Other)
    }

    fn tool_shape(&self, attrs: &Attrs<'_, '_>) -> PyResult<ToolShape> {
        let keys = &self.keys;
        if let Some(op) = attrs.get(&keys.genai_op)? {
            if equals(&op, "execute_tool")? {
                return Ok(ToolShape::GenAi);
            }
        }
        if let Some(kind) = attrs.get(&keys.oi_kind)? {
            if equals(&kind, "TOOL")? {
                return Ok(ToolShape::OpenInference);
            }
        }
        if let Some(kind) = attrs.get(&keys.tl_kind)? {
            if equals(&kind, "tool")? {
                return Ok(ToolShape::Traceloop);
            }
        }
        Ok(ToolShape::PydanticAi)
    }

    fn tool_name_of<'py>(
        &self,
        name: &Bound<'py, PyString>,
        attrs: &Attrs<'_, 'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = name.py();
        for key in &self.keys.tool_names {
            if let Some(value) = non_empty_str(attrs.get(key)?) {
                return Ok(value);
            }
        }
        if starts_with(name, self.execute_tool_prefix.bind(py))? {
            return substring(name, 13, ffi::PY_SSIZE_T_MAX);
        }
        if ends_with(name, self.tool_suffix.bind(py))? {
            return substring(name, 0, char_len(name) - 5);
        }
        if char_len(name) == 0 {
            return Ok(self.unknown.bind(py).clone().into_any());
        }
        Ok(name.clone().into_any())
    }

    /// Whether OpenInference's output may be a serialised LangChain tool message (it starts
    /// with `{"type": "tool"`); the helper decides.
    fn maybe_langchain_message(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        if !value.is_instance_of::<PyString>() {
            return Ok(false);
        }
        match exact_str(value) {
            Ok(text) => Ok(text.starts_with("{\"type\": \"tool\"")),
            Err(_) => Ok(true),
        }
    }

    /// `read_only` from the tool-fact keys: the first bool, else True for a `perceive`
    /// dimension, else None (unknown).
    fn read_only<'py>(&self, attrs: &Attrs<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
        let py = attrs.any.py();
        for key in &self.keys.read_only {
            if let Some(value) = attrs.get(key)? {
                if value.is_instance_of::<PyBool>() {
                    return Ok(value);
                }
            }
        }
        if let Some(dimension) = attrs.get(&self.keys.tool_dimension)? {
            if equals(&dimension, "perceive")? {
                return Ok(PyBool::new(py, true).to_owned().into_any());
            }
        }
        Ok(py.None().into_bound(py))
    }

    /// Assistant text of `gen_ai.output.messages` (a JSON list of `{role, parts}`): parsed
    /// here for an exact `str` the parser vouches for; the raw text when it is not JSON.
    fn text_of_messages<'py>(
        &self,
        raw: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = raw.py();
        if !raw.is_instance_of::<PyString>() {
            return Ok(None);
        }
        let Ok(text) = exact_str(raw) else {
            return self.text_of_messages_py(raw);
        };
        let texts = match crate::genai_messages::texts(text) {
            Ok(texts) => texts,
            Err(json::ParseError::Invalid) => return Ok(Some(raw.clone())),
            Err(json::ParseError::Unsure) => return self.text_of_messages_py(raw),
        };
        match texts.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(PyString::new(py, one).into_any())),
            many => Ok(Some(PyString::new(py, &many.join("\n")).into_any())),
        }
    }

    fn text_of_messages_py<'py>(
        &self,
        raw: &Bound<'py, PyAny>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let text = self.helpers.text_of_messages.bind(raw.py()).call1((raw,))?;
        Ok(Some(text).filter(|t| !t.is_none()))
    }

    /// The first usable count among `keys` (`_token`): an int as it is, a finite float
    /// truncated, infinity 0, NaN skipped; other values are the helper's to read.
    fn token<'py>(
        &self,
        attrs: &Attrs<'_, 'py>,
        keys: &[Py<PyString>],
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = attrs.any.py();
        for key in keys {
            let Some(value) = attrs.get(key)? else {
                continue;
            };
            if value.is_exact_instance_of::<PyInt>() {
                return Ok(value);
            }
            if value.is_exact_instance_of::<PyFloat>() {
                let v: f64 = value.extract()?;
                if v.is_nan() {
                    continue;
                }
                if v.is_infinite() {
                    return Ok(0i64.into_pyobject(py)?.into_any());
                }
                // int(v): PyLong_FromDouble, exact for any finite double
                // SAFETY: a plain conversion answering a new reference or null with an error
                // set (none for a finite double), taken over by `from_owned_ptr_or_err`.
                return unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromDouble(v)) };
            }
            let count = self.helpers.token_of.bind(py).call1((value,))?;
            if !count.is_none() {
                return Ok(count);
            }
        }
        Ok(0i64.into_pyobject(py)?.into_any())
    }

    /// The id as it is, or the Python helper's bounded form past the length bound.
    fn bounded<'py>(&self, value: Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let long = {
            let text = value.downcast::<PyString>()?;
            char_len(text) > MAX_SESSION_ID_LENGTH
        };
        if long {
            return Ok(Some(
                self.helpers.bounded_id.bind(value.py()).call1((value,))?,
            ));
        }
        Ok(Some(value))
    }
}

/// Every attribute key `session_hint` reads.
const SESSION_KEYS: [&str; 6] = [
    "gen_ai.conversation.id",
    "session.id",
    "traceloop.association.properties.session_id",
    "traceloop.association.properties.conversation_id",
    "traceloop.association.properties.thread_id",
    "traceloop.association.properties.chat_id",
];

/// Whether a dict may hold one of [`SESSION_KEYS`]: false only when every key is an exact
/// `str` none of them equals (what `HINT_KEYS.isdisjoint(attributes)` answers, one pass over
/// the keys instead of six look-ups). A large dict is left to the look-ups.
fn names_a_session(dict: &Bound<'_, PyDict>) -> bool {
    if dict.len() > 24 {
        return true;
    }
    let mut pos: ffi::Py_ssize_t = 0;
    let mut key: *mut ffi::PyObject = std::ptr::null_mut();
    let mut value: *mut ffi::PyObject = std::ptr::null_mut();
    // SAFETY: PyDict_Next reads a live dict (borrowed, GIL held) and hands out borrowed
    // references, valid while the dict is neither changed nor freed; nothing here runs
    // Python code (exact `str` keys only, read through `exact_str`), so neither happens.
    unsafe {
        while ffi::PyDict_Next(dict.as_ptr(), &mut pos, &mut key, &mut value) != 0 {
            let key = Borrowed::from_ptr(dict.py(), key);
            match exact_str(&key) {
                Ok(text) => {
                    if SESSION_KEYS.contains(&text) {
                        return true;
                    }
                }
                Err(_) => return true, // not a plain str: the look-ups decide
            }
        }
    }
    false
}
