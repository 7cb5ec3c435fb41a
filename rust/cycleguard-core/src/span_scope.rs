//! Which session, agent and profile a span's calls belong to, from its ancestors: the one
//! rule (`otel_cycleguard.span_scope`, whose documentation states it), applied by the live
//! processor as spans start and by the offline replay parents first over each trace.
//!
//! [`SpanScope`] is what a span passes on to its descendants; [`child_scope`] the rule that
//! makes it. [`Scopes`] is the replay's use of them: a buffered trace's spans resolved
//! parents first (a parent that arrives after its child is resolved first), ordered by start,
//! each tool and model span with the pipeline's `Scope` (`scope_of`), in one crossing.

use crate::canon::text_key;
use crate::conventions::{equals, Conventions};
use crate::fasthash::HashMap;
use crate::slotted::{SlotReader, Slotted};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyString, PyTuple, PyType};
use std::cmp::Ordering;

/// What a span passes on to its descendants.
#[pyclass(module = "otel_cycleguard._core", name = "SpanScope")]
pub struct SpanScope {
    /// The session key (None: a root agent span the caller keys).
    #[pyo3(get, set)]
    pub session: Option<Py<PyAny>>,
    #[pyo3(get)]
    pub agent: Option<Py<PyAny>>,
    #[pyo3(get)]
    pub in_agent: bool,
    #[pyo3(get)]
    pub subagent: bool,
    /// A tool span a child agent under it would be delegated by (inherited by descendants).
    #[pyo3(get)]
    pub delegating: bool,
    /// For a sub-agent: the parent's session key, which its spans may still carry as a hint.
    #[pyo3(get)]
    pub outer: Option<Py<PyAny>>,
    /// An agent span that opened this session (its end is the end of the run).
    #[pyo3(get, set)]
    pub session_root: bool,
    /// The copy a plain span under a session root shares (made once).
    descendants: Option<Py<SpanScope>>,
}

#[pymethods]
impl SpanScope {
    #[new]
    #[pyo3(signature = (session, agent, in_agent, subagent, delegating, outer=None))]
    fn new(
        session: Option<Py<PyAny>>,
        agent: Option<Py<PyAny>>,
        in_agent: bool,
        subagent: bool,
        delegating: bool,
        outer: Option<Py<PyAny>>,
    ) -> Self {
        SpanScope {
            session,
            agent,
            in_agent,
            subagent,
            delegating,
            outer,
            session_root: false,
            descendants: None,
        }
    }

    /// The scope a plain span under this one passes on: the same values, never a session
    /// root. Shared (spans read scopes, never change them), so a plain span costs no object.
    fn for_descendants(slf: &Bound<'_, Self>) -> PyResult<Py<SpanScope>> {
        crate::guarded(|| descendants_of(slf))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let show = |v: &Option<Py<PyAny>>| match v {
            Some(v) => v.bind(py).repr().map(|r| r.to_string()).unwrap_or_default(),
            None => "None".to_owned(),
        };
        format!(
            "SpanScope({}, agent={}, subagent={}, root={})",
            show(&self.session),
            show(&self.agent),
            self.subagent,
            self.session_root
        )
    }
}

fn descendants_of(scope: &Bound<'_, SpanScope>) -> PyResult<Py<SpanScope>> {
    let py = scope.py();
    let mut this = scope.borrow_mut();
    if !this.session_root {
        return Ok(scope.clone().unbind());
    }
    if let Some(shared) = &this.descendants {
        return Ok(shared.clone_ref(py));
    }
    let shared = Py::new(
        py,
        SpanScope {
            session: clone(py, &this.session),
            agent: clone(py, &this.agent),
            in_agent: this.in_agent,
            subagent: this.subagent,
            delegating: this.delegating,
            outer: clone(py, &this.outer),
            session_root: false,
            descendants: None,
        },
    )?;
    this.descendants = Some(shared.clone_ref(py));
    Ok(shared)
}

fn clone(py: Python<'_>, value: &Option<Py<PyAny>>) -> Option<Py<PyAny>> {
    value.as_ref().map(|v| v.clone_ref(py))
}

/// `a == b` for two optional Python values (None equals only None), as Python compares them.
fn same(py: Python<'_>, a: Option<&Py<PyAny>>, b: Option<&Py<PyAny>>) -> PyResult<bool> {
    match (a, b) {
        (None, None) => Ok(true),
        (Some(a), Some(b)) => a.bind(py).eq(b.bind(py)),
        _ => Ok(false),
    }
}

/// The roles `child_scope` tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Tool,
    Model,
    Agent,
    Own,
    Other,
}

impl Role {
    pub fn of(role: &Bound<'_, PyAny>) -> PyResult<Role> {
        Ok(if equals(role, "tool")? {
            Role::Tool
        } else if equals(role, "model")? {
            Role::Model
        } else if equals(role, "agent")? {
            Role::Agent
        } else if equals(role, "own")? {
            Role::Own
        } else {
            Role::Other
        })
    }
}

/// The scope of a span of `role` under `parent` (None: no scope parent), or None when the
/// span passes nothing on. `hint`: the span's own session id (or the caller's baggage);
/// `span_id` (an int, or hex already) names a sub-agent's session.
#[allow(clippy::too_many_arguments)]
pub fn child_scope<'py>(
    conventions: &Conventions,
    role: Role,
    name: &Bound<'py, PyString>,
    attrs: &Bound<'py, PyAny>,
    parent: Option<&Bound<'py, SpanScope>>,
    hint: Option<Bound<'py, PyAny>>,
    span_id: &Bound<'py, PyAny>,
    delegating_tools: &Bound<'py, PyAny>,
) -> PyResult<Option<Py<SpanScope>>> {
    let py = name.py();
    if role == Role::Agent {
        let parent = parent.map(|p| p.borrow());
        let delegated = parent.as_ref().is_some_and(|p| p.delegating);
        let agent = match conventions.agent_name_of(name, attrs)? {
            Some(agent) => Some(agent.unbind()),
            None => parent.as_ref().and_then(|p| clone(py, &p.agent)),
        };
        let (subagent, outer) = match &parent {
            Some(p) if delegated => (true, clone(py, &p.session)),
            Some(p) => (p.subagent, clone(py, &p.outer)),
            None => (false, None),
        };
        let parent_session = parent.as_ref().and_then(|p| p.session.as_ref());
        let hint = hint.map(Bound::unbind);
        let session = if hint.is_some() && !same(py, hint.as_ref(), outer.as_ref())? {
            hint
        } else if delegated && parent_session.is_some() {
            let sid = if span_id.is_instance_of::<PyInt>() {
                pyo3::intern!(py, "{:016x}").call_method1("format", (span_id,))?
            } else {
                span_id.clone()
            };
            let key = pyo3::intern!(py, "{}/sub:{}")
                .call_method1("format", (parent_session.map(|s| s.bind(py)), sid))?;
            Some(key.unbind())
        } else {
            parent_session.map(|s| s.clone_ref(py))
        };
        let session_root =
            session.is_none() || parent.is_none() || !same(py, parent_session, session.as_ref())?;
        return Ok(Some(Py::new(
            py,
            SpanScope {
                session,
                agent,
                in_agent: true,
                subagent,
                delegating: false,
                outer,
                session_root,
                descendants: None,
            },
        )?));
    }
    if parent.is_none()
        && hint.is_none()
        && (role != Role::Tool || !conventions.is_delegating_tool(name, attrs, delegating_tools)?)
    {
        return Ok(None); // nothing to pass on: leave no state behind
    }
    let mut hint = hint.map(Bound::unbind);
    let (session, agent, in_agent, subagent, delegating, outer) = match parent {
        Some(p) => {
            let p = p.borrow();
            (
                clone(py, &p.session),
                clone(py, &p.agent),
                p.in_agent,
                p.subagent,
                p.delegating,
                clone(py, &p.outer),
            )
        }
        None => (None, None, false, false, false, None),
    };
    let repeats_outer =
        outer.is_some() && hint.is_some() && same(py, hint.as_ref(), outer.as_ref())?;
    if hint.is_none() || repeats_outer {
        if let Some(parent) = parent {
            if role != Role::Tool {
                return Ok(Some(descendants_of(parent)?)); // nothing of its own to pass on
            }
        }
        hint = session; // a sub-agent's spans repeating the parent's id
    }
    Ok(Some(Py::new(
        py,
        SpanScope {
            session: hint,
            agent,
            in_agent,
            subagent,
            // Inside an agent every tool call may run a child agent (agents as tools);
            // outside one only the configured delegating tools are tracked.
            delegating: role == Role::Tool || delegating,
            outer,
            session_root: false,
            descendants: None,
        },
    )?))
}

/// `SpanData`'s fields the replay reads, in `SPAN_FIELDS` order.
const SPAN_FIELDS: [&str; 5] = [
    "span_id",
    "parent_span_id",
    "name",
    "attributes",
    "start_ns",
];
const SPAN_ID: usize = 0;
const PARENT: usize = 1;
const NAME: usize = 2;
const ATTRIBUTES: usize = 3;
const START: usize = 4;

/// The pipeline's `Scope` fields, as its `__slots__` lists them.
const SCOPE_FIELDS: [&str; 4] = ["agent", "ends_session", "session", "subagent"];

/// The replay's scoping of buffered traces, and the pipeline's `scope_of`.
#[pyclass(module = "otel_cycleguard._core", name = "Scopes", frozen)]
pub struct Scopes {
    conventions: Py<Conventions>,
    scope: Slotted,
    spans: SlotReader,
}

/// One span of a trace while it is resolved.
struct Item<'py> {
    span: Bound<'py, PyAny>,
    span_id: Bound<'py, PyAny>,
    /// The parent id; None for a root (no parent, or an empty one).
    parent: Option<Bound<'py, PyAny>>,
    attributes: Bound<'py, PyAny>,
}

/// What one span id resolved to: its role and what it passes on.
struct Resolved<'py> {
    role: Role,
    info: Option<Bound<'py, SpanScope>>,
}

/// A trace's spans by id, as the replay's `{span.span_id: span for span in spans}`: each id
/// names the last span that has it (its "home"), where what the id resolves to is kept.
struct Trace<'a, 'py> {
    items: &'a [Item<'py>],
    /// The home of each span's own id, and of its parent's (None: not in the trace).
    home: Vec<usize>,
    parent_home: Vec<Option<usize>>,
    /// What each home resolved to.
    resolved: Vec<Option<Resolved<'py>>>,
    /// How many ids the trace holds (a parent-link walk stops after one more step).
    ids: usize,
    /// Each span's own session hint, once read.
    hints: Vec<Option<Option<Bound<'py, PyAny>>>>,
}

impl<'a, 'py> Trace<'a, 'py> {
    fn new(items: &'a [Item<'py>]) -> PyResult<Self> {
        let keys = items
            .iter()
            .map(|item| text_key(&item.span_id))
            .collect::<PyResult<Vec<_>>>()?;
        let mut by_id: HashMap<&str, usize> = HashMap::default();
        by_id.reserve(items.len());
        for (index, key) in keys.iter().enumerate() {
            by_id.insert(key.as_ref(), index);
        }
        let home = keys.iter().map(|key| by_id[key.as_ref()]).collect();
        let ids = by_id.len();
        let parent_home = items
            .iter()
            .map(|item| match &item.parent {
                Some(parent) => Ok(by_id.get(text_key(parent)?.as_ref()).copied()),
                None => Ok(None),
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Trace {
            items,
            home,
            parent_home,
            resolved: (0..items.len()).map(|_| None).collect(),
            hints: vec![None; items.len()],
            ids,
        })
    }

    /// What span `index`'s id resolved to, if it did.
    fn of(&self, index: usize) -> Option<&Resolved<'py>> {
        self.resolved[self.home[index]].as_ref()
    }

    fn info(&self, index: usize) -> Option<Bound<'py, SpanScope>> {
        self.of(index).and_then(|r| r.info.clone())
    }
}

#[pymethods]
impl Scopes {
    /// `scope`: the pipeline's `Scope` class and its `__slots__`; `span`: `SpanData`.
    #[new]
    fn new(
        conventions: Py<Conventions>,
        scope: Bound<'_, PyType>,
        scope_fields: &Bound<'_, PyTuple>,
        span: &Bound<'_, PyType>,
    ) -> PyResult<Self> {
        Ok(Scopes {
            conventions,
            scope: Slotted::new(scope, scope_fields, &SCOPE_FIELDS)?,
            spans: SlotReader::new(span, &SPAN_FIELDS)?,
        })
    }

    /// The scope of a span from what its ancestors passed on, else the span's own session
    /// hint and agent name, else its trace: the one fallback rule.
    fn scope_of<'py>(
        &self,
        info: Option<&Bound<'py, SpanScope>>,
        attributes: &Bound<'py, PyAny>,
        trace_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::guarded(|| {
            let conventions = self.conventions.get();
            let hint = || conventions.session_hint_of(attributes);
            self.make_scope(conventions, info, attributes, hint, trace_id)
        })
    }

    /// A trace's tool and model spans in the order the replay feeds them (by start, then
    /// input order), each as `(role, span, scope)`: sessions resolved as the live processor
    /// resolves them as spans start, parents first. `delegating`: the configured delegating
    /// tool names (lower case). Spans sharing an id share its resolution (the last of them is
    /// the one a child's parent link finds).
    fn order_trace<'py>(
        &self,
        spans: &Bound<'py, PyList>,
        trace_id: &Bound<'py, PyString>,
        delegating: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        crate::guarded(|| {
            let py = spans.py();
            let conventions = self.conventions.get();
            let mut items: Vec<Item<'py>> = Vec::with_capacity(spans.len());
            for span in spans.iter() {
                let span_id = self.spans.get(&span, SPAN_ID)?;
                let parent = self.spans.get(&span, PARENT)?;
                let parent = if parent.is_truthy()? {
                    Some(parent)
                } else {
                    None
                };
                let attributes = self.spans.get(&span, ATTRIBUTES)?;
                items.push(Item {
                    span,
                    span_id,
                    parent,
                    attributes,
                });
            }
            let mut trace = Trace::new(&items)?;
            let mut work: Vec<(usize, Role)> = Vec::new();
            for index in 0..items.len() {
                if trace.of(index).is_none() {
                    self.resolve(conventions, &mut trace, index, trace_id, delegating)?;
                }
                let role = trace.of(index).map_or(Role::Other, |r| r.role);
                if matches!(role, Role::Tool | Role::Model) {
                    work.push((index, role));
                }
            }
            self.sort_by_start(&items, &mut work)?;
            let out = PyList::empty(py);
            for (index, role) in work {
                let info = trace.info(index);
                let cached = trace.hints[index].take();
                let attributes = &items[index].attributes;
                let hint = || match cached {
                    Some(hint) => Ok(hint),
                    None => conventions.session_hint_of(attributes),
                };
                let scope = self.make_scope(
                    conventions,
                    info.as_ref(),
                    attributes,
                    hint,
                    trace_id.as_any(),
                )?;
                let role = conventions.role_name(role).bind(py).clone().into_any();
                out.append(PyTuple::new(py, [role, items[index].span.clone(), scope])?)?;
            }
            Ok(out)
        })
    }
}

impl Scopes {
    fn make_scope<'py>(
        &self,
        conventions: &Conventions,
        info: Option<&Bound<'py, SpanScope>>,
        attributes: &Bound<'py, PyAny>,
        hint: impl FnOnce() -> PyResult<Option<Bound<'py, PyAny>>>,
        trace_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = attributes.py();
        let (session, agent, subagent, ends) = match info {
            Some(info) => {
                let info = info.borrow();
                let own = info
                    .session
                    .as_ref()
                    .map(|s| s.bind(py).clone())
                    .filter(|s| s.is_truthy().unwrap_or(true));
                let session = match own {
                    Some(session) => session,
                    None => hint()?.unwrap_or_else(|| trace_id.clone()),
                };
                let agent = match &info.agent {
                    Some(agent) => agent.bind(py).clone(),
                    None => py.None().into_bound(py),
                };
                (session, agent, info.subagent, info.session_root)
            }
            None => {
                let session = hint()?.unwrap_or_else(|| trace_id.clone());
                let empty = PyString::new(py, "");
                let agent = conventions
                    .agent_name_of(&empty, attributes)?
                    .unwrap_or_else(|| py.None().into_bound(py));
                (session, agent, false, false)
            }
        };
        self.scope.make(
            py,
            &[
                &agent,
                PyBool::new(py, ends).as_any(),
                &session,
                PyBool::new(py, subagent).as_any(),
            ],
        )
    }

    /// Resolve span `index` and its unresolved ancestors (the replay's `_resolve`): a root,
    /// or a child of a resolved or absent parent, at once; else the chain of unresolved
    /// ancestors, from the top down (a parent-link cycle stops the walk).
    fn resolve<'py>(
        &self,
        conventions: &Conventions,
        trace: &mut Trace<'_, 'py>,
        index: usize,
        trace_id: &Bound<'py, PyString>,
        delegating: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let parent = trace.parent_home[index];
        let direct = match parent {
            None => true, // a root, or a parent outside the trace
            Some(home) => trace.resolved[home].is_some(),
        };
        if direct {
            let parent_info = parent.and_then(|home| trace.info(home));
            return self.settle(
                conventions,
                trace,
                index,
                parent_info.as_ref(),
                trace_id,
                delegating,
            );
        }
        let mut chain: Vec<usize> = Vec::new();
        let limit = trace.ids + 1; // as the replay's walk: one step past the distinct ids
        let mut current = Some(index);
        while let Some(at) = current {
            if trace.of(at).is_some() || chain.len() >= limit {
                break;
            }
            chain.push(at);
            current = trace.parent_home[at];
        }
        let mut parent_info = current.and_then(|at| trace.info(at));
        for &at in chain.iter().rev() {
            if trace.of(at).is_none() {
                self.settle(
                    conventions,
                    trace,
                    at,
                    parent_info.as_ref(),
                    trace_id,
                    delegating,
                )?;
            } // else a parent-link cycle: resolved already
            parent_info = trace.info(at);
        }
        Ok(())
    }

    /// Classify one span and record what it passes on (the processor's `on_start` rule on a
    /// finished span; a root agent span without a session id is keyed by its trace).
    fn settle<'py>(
        &self,
        conventions: &Conventions,
        trace: &mut Trace<'_, 'py>,
        index: usize,
        parent: Option<&Bound<'py, SpanScope>>,
        trace_id: &Bound<'py, PyString>,
        delegating: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let py = trace_id.py();
        let item = &trace.items[index];
        let name = self.spans.get(&item.span, NAME)?;
        let name = name.downcast::<PyString>()?;
        let attributes = &item.attributes;
        let role = conventions.role_of_enum(name, attributes)?;
        let info = if role == Role::Own {
            None
        } else {
            let hint = conventions.session_hint_of(attributes)?;
            trace.hints[index] = Some(hint.clone());
            let scope = child_scope(
                conventions,
                role,
                name,
                attributes,
                parent,
                hint,
                &item.span_id,
                delegating,
            )?;
            scope.map(|scope| scope.into_bound(py))
        };
        if let (Some(scope), Role::Agent) = (&info, role) {
            let mut this = scope.borrow_mut();
            if this.session.is_none() {
                this.session = Some(trace_id.clone().into_any().unbind());
            }
        }
        let home = trace.home[index];
        trace.resolved[home] = Some(Resolved { role, info });
        Ok(())
    }

    /// Sort `work` by (start, input order), as the replay's `work.sort()` does: the start
    /// times as integers, compared by Python past what 128 bits hold.
    fn sort_by_start(&self, items: &[Item<'_>], work: &mut [(usize, Role)]) -> PyResult<()> {
        let starts = work
            .iter()
            .map(|(index, _)| self.spans.get(&items[*index].span, START))
            .collect::<PyResult<Vec<_>>>()?;
        let exact: Option<Vec<i128>> = starts.iter().map(start_key).collect();
        match exact {
            Some(keys) => {
                let mut keyed: Vec<(i128, usize, Role)> = work
                    .iter()
                    .zip(keys)
                    .map(|(&(index, role), key)| (key, index, role))
                    .collect();
                keyed.sort_unstable_by_key(|&(key, index, _)| (key, index));
                for (slot, (_, index, role)) in work.iter_mut().zip(keyed) {
                    *slot = (index, role);
                }
            }
            None => {
                let mut failed: Option<PyErr> = None;
                let mut order: Vec<usize> = (0..work.len()).collect();
                order.sort_by(|&a, &b| {
                    let by_start = starts[a].compare(&starts[b]).unwrap_or_else(|err| {
                        failed.get_or_insert(err);
                        Ordering::Equal
                    });
                    by_start.then(work[a].0.cmp(&work[b].0))
                });
                if let Some(err) = failed {
                    return Err(err);
                }
                let sorted: Vec<_> = order.iter().map(|&i| work[i]).collect();
                work.copy_from_slice(&sorted);
            }
        }
        Ok(())
    }
}

/// A start time as a sort key: an int within 128 bits (the usual 64 first).
fn start_key(start: &Bound<'_, PyAny>) -> Option<i128> {
    if !start.is_instance_of::<PyInt>() {
        return None;
    }
    match start.extract::<i64>() {
        Ok(v) => Some(i128::from(v)),
        Err(_) => start.extract::<i128>().ok(),
    }
}
