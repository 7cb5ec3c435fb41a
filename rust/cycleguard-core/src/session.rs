//! A session's loop state and the detector it belongs to (`otel_cycleguard/detect/session.py`):
//! [`Session`] is a struct of the dimensions and rules, fed one tool call or model turn per
//! crossing from Python; [`Shared`] and [`Plan`] are what sessions of one detector and of one
//! profile share (settings, normaliser, categoriser, the Python classes signals are made of).

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use xxhash_rust::xxh3::xxh3_64;

use crate::args::{self, Args};
use crate::categories::{by_kind_and_arguments, Categorizer, ToolKind};
use crate::dims::{
    Budget, CategoryStreak, ErrorStreak, IdenticalCall, PollNoProgress, StateRevisit, TextLoop,
    ToolPattern, SKETCH_SIZE,
};
use crate::failures;
use crate::names::ToolNames;
use crate::normalize::{Normalizer, Text};
use crate::pystr::{self, encode_replace};
use crate::rules::{
    failure_fold, loose_failure, EditWithoutEffect, FailedLookups, FailureDensity,
    NearDuplicateEdit, NothingNew, RecurringFailure, RepeatedFailure, ReplayCycle, SameError,
    Staleness,
};
use crate::settings::{DetectorSettings, Num, ProfileSettings};
use crate::shell;
use crate::signal::{CycleClass, Dimension, Level};
use crate::slotted::SlotReader;
use crate::watch::{
    recent_steps, CallFacts, CallRing, Crossing, Cx, Handed, TurnFacts, Tx, Unit, Watch, FAILED,
};

/// How much of a failed call's output (characters) the failure rules read, masked: what
/// `same_error` and the staleness fold compare, and what `recurring_failure` compares
/// whitespace aside when it is the whole output.
const FAILURE_HEAD: usize = 2048;

/// The Python objects signals are made of.
pub struct Classes {
    pub signal: Py<PyAny>,
    pub call_digest: Py<PyAny>,
    pub dimensions: Vec<Py<PyAny>>,
    pub warn: Py<PyAny>,
    pub term: Py<PyAny>,
    pub cycle: [Py<PyAny>; 3],
    pub strategy: [Py<PyAny>; 3],
    pub unknown: Py<PyString>,
    /// `ToolCall`'s and `ModelTurn`'s fields, read as `getattr` would (see [`SlotReader`]).
    pub tool_call: SlotReader,
    pub model_turn: SlotReader,
}

/// A list of field names and a constant index into it for each, declared once (so an index
/// cannot name another field than the list holds at its place).
macro_rules! fields {
    ($(#[$doc:meta])* $list:ident { $($index:ident = $name:literal),+ $(,)? }) => {
        $(#[$doc])*
        const $list: &[&str] = &[$($name),+];
        fields!(@index 0usize; $($index),+);
    };
    (@index $n:expr; $index:ident $(, $rest:ident)*) => {
        const $index: usize = $n;
        fields!(@index $n + 1usize; $($rest),*);
    };
    (@index $n:expr;) => {};
}

fields! {
    /// The `ToolCall` fields a session reads (indices for [`Classes::tool_call`]).
    CALL_FIELDS {
        CALL_TOOL = "tool",
        CALL_ARGUMENTS = "arguments",
        CALL_RESULT = "result",
        CALL_ERROR = "error",
        CALL_READ_ONLY = "read_only",
        CALL_STATE = "state_fingerprint",
        CALL_START = "start_s",
        CALL_END = "end_s",
    }
}

fields! {
    /// The `ModelTurn` fields a session reads (indices for [`Classes::model_turn`]).
    TURN_FIELDS {
        TURN_TEXT = "text",
        TURN_ERROR = "error",
        TURN_STATE = "state_fingerprint",
        TURN_INPUT_TOKENS = "input_tokens",
        TURN_OUTPUT_TOKENS = "output_tokens",
        TURN_ERROR_TEXT = "error_text",
        TURN_START = "start_s",
        TURN_END = "end_s",
    }
}

impl Classes {
    fn load(py: Python<'_>) -> PyResult<Self> {
        let m = py.import("otel_cycleguard.detect.signals")?;
        let records = py.import("otel_cycleguard.detect.records")?;
        let dim = m.getattr("Dimension")?;
        let level = m.getattr("Level")?;
        let cycle = m.getattr("CycleClass")?;
        let strategy = m.getattr("BreakStrategy")?;
        let member = |cls: &Bound<'_, PyAny>, v: &str| -> PyResult<Py<PyAny>> {
            Ok(cls.call1((v,))?.unbind())
        };
        let classes = [CycleClass::Tool, CycleClass::Reasoning, CycleClass::Mixed];
        Ok(Classes {
            signal: m.getattr("Signal")?.unbind(),
            call_digest: m.getattr("CallDigest")?.unbind(),
            dimensions: Dimension::ALL
                .iter()
                .map(|d| member(&dim, d.name()))
                .collect::<PyResult<_>>()?,
            warn: member(&level, "warn")?,
            term: member(&level, "term")?,
            cycle: [
                member(&cycle, classes[0].name())?,
                member(&cycle, classes[1].name())?,
                member(&cycle, classes[2].name())?,
            ],
            strategy: [
                member(&strategy, classes[0].strategy())?,
                member(&strategy, classes[1].strategy())?,
                member(&strategy, classes[2].strategy())?,
            ],
            unknown: PyString::intern(py, "unknown").unbind(),
            tool_call: SlotReader::new(records.getattr("ToolCall")?.downcast()?, CALL_FIELDS)?,
            model_turn: SlotReader::new(records.getattr("ModelTurn")?.downcast()?, TURN_FIELDS)?,
        })
    }
}

/// What every session of one detector shares.
pub struct Shared {
    pub settings: DetectorSettings,
    pub normalizer: Normalizer,
    pub categorizer: Categorizer,
    pub classes: Classes,
}

impl Shared {
    /// From a Python `DetectorSettings` and the Python `Normalizer` of the same configuration
    /// (which masks what the core leaves to Python's regular expressions).
    pub fn new(
        py: Python<'_>,
        settings: &Bound<'_, PyAny>,
        reference: Py<PyAny>,
    ) -> PyResult<Self> {
        let s = DetectorSettings::read(py, settings)?;
        let normalizer = Normalizer::new(s.fast_masks, s.result_fields.clone(), 8192, reference);
        let categorizer = Categorizer::new(
            s.extra_categories.clone(),
            s.read_only_tools.clone(),
            s.poll_tools.clone(),
        );
        Ok(Shared {
            settings: s,
            normalizer,
            categorizer,
            classes: Classes::load(py)?,
        })
    }

    fn disabled(&self, d: Dimension) -> bool {
        self.settings.disabled[d as usize]
    }

    /// A dimension's crossing joins the call's signals, unless it is disabled. Inlined: a
    /// crossing is rare, and a call through a closure moved every `None` as a whole crossing.
    #[inline(always)]
    fn fire(&self, fired: &mut Vec<Fired>, c: Option<Crossing>) {
        if let Some(c) = c {
            if !self.disabled(c.dimension) {
                fired.push(Fired { c });
            }
        }
    }

    /// A rule's crossing takes its place among the call's signals (see [`place`]), unless its
    /// dimension is disabled.
    #[inline(always)]
    fn rule(&self, fired: &mut Vec<Fired>, c: Option<Crossing>) {
        if let Some(c) = c {
            if !self.disabled(c.dimension) {
                place(fired, c);
            }
        }
    }
}

/// What every session of one profile shares.
pub struct Plan {
    pub shared: Arc<Shared>,
    pub name: Py<PyString>,
    pub profile: ProfileSettings,
    /// The Python `ProfileSettings` and `Detector` (for the session's properties).
    pub py_profile: Py<PyAny>,
    pub py_detector: Py<PyAny>,
    /// Evidence and units show at most this many recent calls.
    pub evidence: usize,
    pub ring_size: usize,
    /// What each tool name decides for this profile (kept per name, bounded).
    pub names: ToolNames,
}

impl Plan {
    pub fn new(
        py: Python<'_>,
        shared: Arc<Shared>,
        name: Py<PyString>,
        py_profile: Py<PyAny>,
        py_detector: Py<PyAny>,
    ) -> PyResult<Self> {
        let profile = ProfileSettings::read(py, py_profile.bind(py))?;
        let evidence = shared
            .settings
            .evidence_size
            .max(profile.tool_pattern.max_period);
        let replay = &profile.replay_cycle;
        let ring_size = evidence.max(if replay.enabled {
            replay.max_gap + 1
        } else {
            0
        });
        Ok(Plan {
            shared,
            name,
            profile,
            py_profile,
            py_detector,
            evidence,
            ring_size,
            names: ToolNames::default(),
        })
    }
}

/// What a session is whether awake or hibernated: its profile's plan, its key and agent, and
/// how many calls and turns it has seen (the steps its signals are numbered by).
pub struct SessionHeader {
    pub plan: Arc<Plan>,
    pub key: Py<PyString>,
    pub agent: Option<Py<PyAny>>,
    pub tool_calls: i64,
    pub model_turns: i64,
}

impl SessionHeader {
    /// Another header for the same session (the Python objects shared, counts copied).
    pub fn clone_ref(&self, py: Python<'_>) -> Self {
        SessionHeader {
            plan: Arc::clone(&self.plan),
            key: self.key.clone_ref(py),
            agent: self.agent.as_ref().map(|a| a.clone_ref(py)),
            tool_calls: self.tool_calls,
            model_turns: self.model_turns,
        }
    }
}

/// One session's loop state: its header, then the dimensions and rules, as named fields.
pub struct Session {
    pub header: SessionHeader,
    pub ring: CallRing,
    pub staleness: Staleness,
    pub identical: IdenticalCall,
    pub category: CategoryStreak,
    pub pattern: ToolPattern,
    pub poll: PollNoProgress,
    pub error: ErrorStreak,
    pub replay: ReplayCycle,
    pub near_duplicate: NearDuplicateEdit,
    pub repeated: RepeatedFailure,
    pub recurring: RecurringFailure,
    pub density: FailureDensity,
    pub same: SameError,
    pub lookups: FailedLookups,
    pub no_effect: EditWithoutEffect,
    pub nothing_new: NothingNew,
    /// Created on first use (most sessions never need them).
    pub text: Option<Box<TextLoop>>,
    pub revisits: Option<Box<StateRevisit>>,
    pub budget: Option<Box<Budget>>,
}

/// A crossing on its way to becoming a signal.
struct Fired {
    c: Crossing,
}

/// `_emit_rule`'s placement: at most one signal per dimension, the higher level wins, the
/// table order kept.
fn place(fired: &mut Vec<Fired>, c: Crossing) {
    let mut at = fired.len();
    for (i, other) in fired.iter().enumerate() {
        if other.c.dimension == c.dimension {
            if other.c.level == Level::Term || c.level == Level::Warn {
                return;
            }
            fired.remove(i);
            at = i;
            break;
        }
        if other.c.dimension > c.dimension {
            at = i;
            break;
        }
    }
    fired.insert(at, Fired { c });
}

/// `_int(value)`: `int(value)`, 0 where Python's `int()` refuses it.
fn int_of(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<i64> {
    if value.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(value.extract::<i64>().unwrap_or(i64::MAX));
    }
    match py.get_type::<pyo3::types::PyInt>().call1((value,)) {
        Ok(v) => Ok(v.extract::<i64>().unwrap_or(i64::MAX)),
        Err(e)
            if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py)
                || e.is_instance_of::<pyo3::exceptions::PyValueError>(py)
                || e.is_instance_of::<pyo3::exceptions::PyOverflowError>(py) =>
        {
            Ok(0)
        }
        Err(e) => Err(e),
    }
}

/// `hash_bytes(str(fingerprint).encode("utf-8", "replace"))` of a truthy fingerprint.
fn fingerprint(value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if value.is_none() || !value.is_truthy()? {
        return Ok(None);
    }
    let text = if let Ok(s) = value.downcast::<PyString>() {
        s.clone()
    } else {
        value.str()?
    };
    Ok(Some(xxh3_64(&encode_replace(&args::py_text(&text)?))))
}

impl Session {
    pub fn new(plan: Arc<Plan>, key: Py<PyString>, agent: Option<Py<PyAny>>) -> Self {
        let ring = CallRing::new(plan.ring_size);
        let pattern = ToolPattern::new(plan.profile.tool_pattern.max_period);
        Session {
            header: SessionHeader {
                plan,
                key,
                agent,
                tool_calls: 0,
                model_turns: 0,
            },
            ring,
            staleness: Staleness::default(),
            identical: IdenticalCall::default(),
            category: CategoryStreak::default(),
            pattern,
            poll: PollNoProgress::default(),
            error: ErrorStreak::default(),
            replay: ReplayCycle::default(),
            near_duplicate: NearDuplicateEdit::default(),
            repeated: RepeatedFailure::default(),
            recurring: RecurringFailure::default(),
            density: FailureDensity::default(),
            same: SameError::default(),
            lookups: FailedLookups::default(),
            no_effect: EditWithoutEffect::default(),
            nothing_new: NothingNew::default(),
            text: None,
            revisits: None,
            budget: None,
        }
    }

    /// `mask(text[:n])` as UTF-8 bytes.
    fn mask_head(&self, py: Python<'_>, text: &Text<'_>, n: usize) -> PyResult<Vec<u8>> {
        let norm = &self.header.plan.shared.normalizer;
        let s = text.as_str();
        if norm.fast && text.exact() && s.is_ascii() {
            let head = &s.as_bytes()[..s.len().min(n)];
            return Ok(crate::mask::mask_ascii(head).unwrap_or_else(|| head.to_vec()));
        }
        let head = args::py_head(&text.to_py(py), n)?;
        let masked = norm.reference(py).call_method1("mask", (head,))?;
        let encoded = masked.call_method1("encode", ("utf-8", "replace"))?;
        Ok(encoded
            .downcast::<pyo3::types::PyBytes>()?
            .as_bytes()
            .to_vec())
    }

    /// Feed one finished tool call; the signals it fired (Python `Signal` objects).
    pub fn observe_tool_call<'py>(
        &mut self,
        py: Python<'py>,
        call: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let plan = Arc::clone(&self.header.plan);
        let shared = &*plan.shared;
        let profile = &plan.profile;
        let fields = &shared.classes.tool_call;
        let tool_obj = fields.get(call, CALL_TOOL)?;
        let tool: Bound<'py, PyString> = match tool_obj.downcast::<PyString>() {
            Ok(s) if crate::canon::text_of(s).is_none_or(|t| !t.is_empty()) => s.clone(),
            _ => shared.classes.unknown.bind(py).clone(),
        };
        let arguments = fields.get(call, CALL_ARGUMENTS)?;
        let result_obj = fields.get(call, CALL_RESULT)?;
        let error = fields.get(call, CALL_ERROR)?.is_truthy()?;
        let read_only = {
            let r = fields.get(call, CALL_READ_ONLY)?;
            if r.is(pyo3::types::PyBool::new(py, true)) {
                Some(true)
            } else {
                None // only `read_only is True` is read
            }
        };
        let step = self.header.tool_calls;
        self.header.tool_calls += 1;
        let tool_text = args::py_text(&tool)?;
        let arg_text_owner;
        let arg_text: Option<&str> = match arguments.downcast::<PyString>() {
            Ok(s) => {
                arg_text_owner = args::py_text(s)?;
                Some(&arg_text_owner)
            }
            Err(_) => None,
        };
        let args = Args::from_py(&arguments, arg_text)?;
        let names = plan.names.get(
            py,
            &shared.categorizer,
            &shared.settings,
            profile,
            &tool_text,
        )?;
        let kind: ToolKind<'_> = if read_only.is_none() {
            by_kind_and_arguments(py, names.kind(), &args)?
        } else {
            // `read_only` metadata can make the name's kind another (kept per name only
            // without it)
            shared
                .categorizer
                .classify(py, &tool_text, &args, read_only)?
        };
        let member = names.memberships(&shared.settings, profile, &kind.canonical);
        let mut key_buf = crate::normalize::take_buffer();
        let (key, start) = shared
            .normalizer
            .call_key_into(py, &tool, &arguments, &mut key_buf)?;
        let canonical = &key_buf[start..];
        let result_text = shared.normalizer.result_text(py, &tool, &result_obj)?;
        let result = shared.normalizer.text_hash(py, &result_text)?;
        let has_result = !result_obj.is_none();
        let cfg = &profile.error_streak;
        let mut failed = failures::is_failure(
            py,
            cfg,
            names.non_failing,
            error,
            has_result.then_some(&result_text),
        )?;
        if has_result && (kind.canonical == "exec" || failures::is_search(&kind.canonical)) {
            failed = failures::refine_failure(
                py,
                cfg,
                names.non_failing,
                &kind.canonical,
                &args,
                &result_text,
                failed,
            )?;
        }
        self.ring
            .put(step, key, result, failed, tool.clone().unbind());
        let (fold, error, loose_failure) =
            if failed && has_result && !result_text.as_str().is_empty() {
                let head = self.mask_head(py, &result_text, FAILURE_HEAD)?;
                // the head is the whole output when the text is no longer (bytes bound chars)
                let whole = result_text.as_str().len() <= FAILURE_HEAD;
                let loose = loose_failure(names.hash, key, canonical, &head, whole, result);
                match crate::echo::without_echoes(&head, canonical) {
                    None => (failure_fold(&head), result, loose),
                    Some(stated) => (failure_fold(&stated), xxh3_64(&stated).max(1), loose),
                }
            } else if failed {
                (
                    1,
                    result,
                    loose_failure(names.hash, key, canonical, b"", false, result),
                )
            } else {
                (1, result, 0)
            };
        self.staleness.note(failed, fold);
        let state = fingerprint(&fields.get(call, CALL_STATE)?)?;
        let facts = CallFacts {
            step,
            tool: &tool,
            tool_text: &tool_text,
            tool_hash: names.hash,
            kind: &kind,
            key,
            result,
            failed,
            error,
            loose_failure,
            args: &args,
            canonical,
            member,
            category_override: names.category_override(profile, &kind),
            state,
            start_s: None,
            end_s: None,
        };
        let mut fired: Vec<Fired> = Vec::new();
        let mut cx = Cx {
            py,
            profile,
            call: &facts,
            ring: &mut self.ring,
            handed: Handed {
                stale_bits: self.staleness.bits,
                ..Handed::default()
            },
            evidence: plan.evidence,
        };
        // the dimensions, in the escalation order
        shared.fire(&mut fired, self.identical.on_call(&mut cx)?);
        shared.fire(&mut fired, self.category.on_call(&mut cx)?);
        shared.fire(&mut fired, self.pattern.on_call(&mut cx)?);
        shared.fire(&mut fired, self.poll.on_call(&mut cx)?);
        shared.fire(&mut fired, self.error.on_call(&mut cx)?);
        // the rules
        shared.rule(&mut fired, self.replay.on_call(&mut cx)?);
        shared.rule(&mut fired, self.nothing_new.on_call(&mut cx)?);
        shared.rule(&mut fired, self.near_duplicate.on_call(&mut cx)?);
        shared.rule(&mut fired, self.repeated.on_call(&mut cx)?);
        shared.rule(&mut fired, self.recurring.on_call(&mut cx)?);
        // Whether a shell command edits files, read only where an answer is needed: by
        // edit_without_effect on every shell call, by the progress test on a successful one
        // while there are failures to forget.
        let is_exec = kind.canonical == "exec";
        let cfg_d = &profile.failure_density;
        let to_forget = self.density.bits != 0 || self.same.table.is_some();
        let shell_edit = is_exec
            && (profile.edit_without_effect.enabled
                || (!failed && cfg_d.progress_commands && to_forget))
            && args
                .command_text(py)
                .ok()
                .flatten()
                .is_some_and(|t| !t.is_empty() && shell::edits_files(&t));
        let progress = !failed
            && (member.progress_name || (cfg_d.progress_commands && shell_edit && to_forget));
        cx.handed.shell_edit = shell_edit;
        cx.handed.progress = progress;
        shared.rule(&mut fired, self.density.on_call(&mut cx)?);
        shared.rule(&mut fired, self.same.on_call(&mut cx)?);
        shared.rule(&mut fired, self.lookups.on_call(&mut cx)?);
        shared.rule(&mut fired, self.no_effect.on_call(&mut cx)?);
        if state.is_some() {
            let revisits = self.revisits.get_or_insert_with(Default::default);
            shared.fire(&mut fired, revisits.on_call(&mut cx)?);
        }
        let handed = cx.handed;
        if self.budget.is_some() || profile.budget.enabled {
            let start_s = Num::read(&fields.get(call, CALL_START)?)?;
            let end_s = Num::read(&fields.get(call, CALL_END)?)?;
            let timed = CallFacts {
                start_s,
                end_s,
                ..facts
            };
            let mut cx = Cx {
                py,
                profile,
                call: &timed,
                ring: &mut self.ring,
                handed,
                evidence: plan.evidence,
            };
            let budget = self.budget.get_or_insert_with(Default::default);
            shared.fire(&mut fired, budget.on_call(&mut cx)?);
        }
        let signals = self.signals(py, fired, Some((&tool, &kind.category)), Some(step), None);
        crate::normalize::give_buffer(key_buf);
        signals
    }

    /// Feed one finished model turn (text loop, failed turns, state, token and turn budgets).
    pub fn observe_model_turn<'py>(
        &mut self,
        py: Python<'py>,
        turn: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let plan = Arc::clone(&self.header.plan);
        let shared = &*plan.shared;
        let profile = &plan.profile;
        let index = self.header.model_turns;
        self.header.model_turns += 1;
        let fields = &shared.classes.model_turn;
        let text_obj = fields.get(turn, TURN_TEXT)?;
        let digest = match text_obj.downcast::<PyString>() {
            Ok(text) => text_digest(&shared.normalizer, py, text, profile.text_loop.shingle_size)?,
            Err(_) => None,
        };
        let error = fields.get(turn, TURN_ERROR)?.is_truthy()?;
        let state = fingerprint(&fields.get(turn, TURN_STATE)?)?;
        let tokens = int_of(py, &fields.get(turn, TURN_INPUT_TOKENS)?)?
            .saturating_add(int_of(py, &fields.get(turn, TURN_OUTPUT_TOKENS)?)?);
        let mut fired: Vec<Fired> = Vec::new();
        let has_digest = digest.is_some();
        let mut facts = TurnFacts {
            index,
            digest,
            error,
            state,
            tokens,
            start_s: None,
            end_s: None,
        };
        if has_digest {
            let mut tx = Tx {
                profile,
                turn: &facts,
                handed: Handed::default(),
            };
            let text = self.text.get_or_insert_with(Default::default);
            shared.fire(&mut fired, text.on_turn(&mut tx));
        }
        if error {
            // a rejected or failed turn is a failure of the run, and the same rejection again a
            // stale one (masked, digits dropped)
            let error_text = fields.get(turn, TURN_ERROR_TEXT)?;
            let text = match error_text.downcast::<PyString>() {
                Ok(s) => Text::from_py(s.clone())?,
                Err(_) => Text::Owned(String::new()),
            };
            let fold = failure_fold(&self.mask_head(py, &text, FAILURE_HEAD)?);
            self.staleness.note(true, fold);
            let mut tx = Tx {
                profile,
                turn: &facts,
                handed: Handed {
                    stale_bits: self.staleness.bits,
                    ..Handed::default()
                },
            };
            shared.fire(&mut fired, self.error.on_turn(&mut tx));
        }
        if state.is_some() {
            let mut tx = Tx {
                profile,
                turn: &facts,
                handed: Handed::default(),
            };
            let revisits = self.revisits.get_or_insert_with(Default::default);
            shared.fire(&mut fired, revisits.on_turn(&mut tx));
        }
        if self.budget.is_some() || profile.budget.enabled || tokens > 0 {
            facts.start_s = Num::read(&fields.get(turn, TURN_START)?)?;
            facts.end_s = Num::read(&fields.get(turn, TURN_END)?)?;
            let mut tx = Tx {
                profile,
                turn: &facts,
                handed: Handed::default(),
            };
            let budget = self.budget.get_or_insert_with(Default::default);
            shared.fire(&mut fired, budget.on_turn(&mut tx));
        }
        self.signals(py, fired, None, None, Some(index))
    }

    /// `_text_digest`: (hash of the normalised words, shingle sketch) of a turn's text, or
    /// None without a word (or a blank text).
    fn cycle_class(&self, dimension: Dimension) -> CycleClass {
        let profile = &self.header.plan.profile;
        match dimension {
            Dimension::TextLoop => {
                if self.identical.count >= profile.identical_call.warn || self.pattern.gate.0 != 0 {
                    CycleClass::Mixed
                } else {
                    CycleClass::Reasoning
                }
            }
            Dimension::StateHash => CycleClass::Mixed,
            _ => match &self.text {
                Some(t) if t.count >= profile.text_loop.th.warn => CycleClass::Mixed,
                _ => CycleClass::Tool,
            },
        }
    }

    /// The tool names of the last `n` calls.
    fn recent_tools<'py>(&self, py: Python<'py>, n: usize) -> Vec<Bound<'py, PyString>> {
        recent_steps(n, self.header.plan.evidence, self.header.tool_calls)
            .filter_map(|step| {
                self.ring.slots[self.ring.slot(step)]
                    .tool
                    .as_ref()
                    .map(|t| t.bind(py).clone())
            })
            .collect()
    }

    fn unit<'py>(
        &self,
        py: Python<'py>,
        unit: Unit,
        tool: Option<&Bound<'py, PyString>>,
    ) -> Vec<Bound<'py, PyString>> {
        match unit {
            Unit::None => Vec::new(),
            Unit::Tool(n) => tool.map(|t| vec![t.clone(); n]).unwrap_or_default(),
            Unit::Recent(n) => self.recent_tools(py, n),
            Unit::Distinct(n) => {
                let mut out: Vec<Bound<'py, PyString>> = Vec::new();
                for t in self.recent_tools(py, n) {
                    if !out.iter().any(|o| crate::watch::same_str(o, &t)) {
                        out.push(t);
                    }
                }
                out.truncate(4);
                out
            }
        }
    }

    /// The evidence: the last `evidence_size` calls as CallDigest objects.
    fn evidence<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let cls = self.header.plan.shared.classes.call_digest.bind(py);
        let mut out = Vec::new();
        for step in recent_steps(
            self.header.plan.shared.settings.evidence_size,
            self.header.plan.evidence,
            self.header.tool_calls,
        ) {
            let s = self.ring.slot(step);
            let tool = match &self.ring.slots[s].tool {
                Some(t) => t.bind(py).clone().into_any(),
                None => py.None().into_bound(py),
            };
            out.push(cls.call1((
                tool,
                format!("{:016x}", self.ring.slots[s].key),
                format!("{:016x}", self.ring.slots[s].result),
                self.ring.slots[s].info & FAILED != 0,
            ))?);
        }
        PyTuple::new(py, out)
    }

    /// `_explain`: a dimension's own words.
    fn explain(
        d: Dimension,
        level: Level,
        streak: i64,
        threshold: i64,
        tool: &str,
        unit: &[String],
    ) -> String {
        let what = match d {
            Dimension::IdenticalCall => {
                format!("{tool} was called {streak} times in a row with the same arguments and got the same result")
            }
            Dimension::CategoryStreak => {
                format!("{streak} calls in a row of the same category (last: {tool}) without switching approach")
            }
            Dimension::ToolPattern => {
                let seq = if unit.is_empty() {
                    tool.to_owned()
                } else {
                    unit.join(" -> ")
                };
                format!("the sequence {seq} repeated {streak} times")
            }
            Dimension::PollNoProgress => {
                format!("{tool} was polled {streak} times, its result never changed")
            }
            Dimension::ErrorStreak => format!("{streak} failures in a row (last: {tool})"),
            Dimension::TextLoop => {
                format!("the model said (nearly) the same thing {streak} turns in a row")
            }
            Dimension::StateHash => format!("the agent returned to the same state {streak} times"),
            Dimension::Budget => "budget exceeded".to_owned(),
        };
        format!("{what} ({} threshold {threshold})", level.name())
    }

    /// Python `Signal` objects of the crossings.
    fn signals<'py>(
        &self,
        py: Python<'py>,
        fired: Vec<Fired>,
        tool: Option<(&Bound<'py, PyString>, &str)>,
        step: Option<i64>,
        turn: Option<i64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if fired.is_empty() {
            return Ok(out);
        }
        let classes = &self.header.plan.shared.classes;
        for Fired { c } in fired {
            let unit = self.unit(py, c.unit, tool.map(|t| t.0));
            let explanation = match &c.text {
                Some(t) => t.clone(),
                None => {
                    let tool_text = match tool {
                        Some((t, _)) => args::py_text(t)?.into_owned(),
                        None => "None".to_owned(),
                    };
                    let names = unit
                        .iter()
                        .map(|u| args::py_text(u).map(|t| t.into_owned()))
                        .collect::<PyResult<Vec<_>>>()?;
                    Self::explain(
                        c.dimension,
                        c.level,
                        c.count,
                        c.threshold,
                        &tool_text,
                        &names,
                    )
                }
            };
            let cycle = self.cycle_class(c.dimension) as usize;
            let kw = PyDict::new(py);
            kw.set_item(
                "dimension",
                classes.dimensions[c.dimension as usize].bind(py),
            )?;
            kw.set_item(
                "level",
                if c.level == Level::Term {
                    &classes.term
                } else {
                    &classes.warn
                },
            )?;
            kw.set_item("session", self.header.key.bind(py))?;
            kw.set_item("streak", c.count)?;
            kw.set_item("threshold", c.threshold)?;
            kw.set_item("profile", self.header.plan.name.bind(py))?;
            kw.set_item("tool", tool.map(|t| t.0.clone()))?;
            kw.set_item(
                "category",
                match tool {
                    Some((_, category)) => Some(args::to_py_str(py, category)?),
                    None => None,
                },
            )?;
            kw.set_item("step", step)?;
            kw.set_item("model_turn_index", turn)?;
            kw.set_item("cycle_class", classes.cycle[cycle].bind(py))?;
            kw.set_item("break_strategy", classes.strategy[cycle].bind(py))?;
            kw.set_item("explanation", args::to_py_str(py, &explanation)?)?;
            if step.is_some() {
                kw.set_item("evidence", self.evidence(py)?)?;
            } else {
                kw.set_item("evidence", PyTuple::empty(py))?;
            }
            kw.set_item("unit", PyTuple::new(py, unit)?)?;
            kw.set_item(
                "agent",
                self.header.agent.as_ref().map(|a| a.bind(py).clone()),
            )?;
            kw.set_item("rule", c.rule)?;
            out.append(classes.signal.bind(py).call((), Some(&kw))?)?;
        }
        Ok(out)
    }

    /// Self-heal: the dimension (and its rules) count from zero again.
    pub fn reset(&mut self, dimension: Dimension) {
        match dimension {
            Dimension::IdenticalCall => {
                self.identical.reset();
                self.near_duplicate.reset();
                self.repeated.reset();
                self.recurring.reset();
            }
            Dimension::CategoryStreak => self.category.reset(),
            Dimension::ToolPattern => {
                self.pattern.reset();
                ReplayCycle::forget(&mut self.ring);
                self.replay.reset();
                self.no_effect.reset();
                self.nothing_new.reset();
            }
            Dimension::PollNoProgress => self.poll.reset(),
            Dimension::ErrorStreak => {
                self.error.reset();
                self.density.reset();
                self.same.reset();
                self.lookups.reset();
            }
            Dimension::TextLoop => self.text = None,
            Dimension::StateHash => self.revisits = None,
            Dimension::Budget => {
                if let Some(b) = &mut self.budget {
                    b.reset();
                }
            }
        }
    }

    /// The bytes this session holds (its struct and what it allocated), for `sys.getsizeof`.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let words = |v: &Option<Vec<(i64, u64)>>| v.as_ref().map_or(0, |t| t.capacity() * 16);
        size_of::<Session>()
            + self.ring.size() * size_of::<crate::watch::Slot>()
            + self
                .poll
                .table
                .as_ref()
                .map_or(0, |t| t.capacity() * size_of::<crate::dims::PollEntry>())
            + self
                .error
                .table
                .as_ref()
                .map_or(0, |t| t.capacity() * size_of::<(Py<PyString>, i64)>())
            + words(&self.recurring.table)
            + words(&self.same.table)
            + self
                .text
                .as_ref()
                .map_or(0, |t| size_of::<TextLoop>() + t.last_sketch.capacity() * 8)
            + self.revisits.as_ref().map_or(0, |r| {
                size_of::<StateRevisit>()
                    + r.ring.as_ref().map_or(0, |v| v.capacity() * 8)
                    + r.visits.as_ref().map_or(0, |v| v.capacity() * 16)
            })
            + self.budget.as_ref().map_or(0, |_| size_of::<Budget>())
    }

    /// The current count of every dimension.
    pub fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("tool_calls", self.header.tool_calls)?;
        d.set_item("model_turns", self.header.model_turns)?;
        d.set_item("identical_call", self.identical.count)?;
        d.set_item("category_streak", self.category.count)?;
        d.set_item("tool_pattern", self.pattern.count)?;
        d.set_item("poll_no_progress", self.poll.longest())?;
        d.set_item("error_streak", self.error.count.max(self.error.longest()))?;
        d.set_item("text_loop", self.text.as_ref().map_or(0, |t| t.count))?;
        d.set_item("state_hash", self.revisits.as_ref().map_or(0, |s| s.count))?;
        d.set_item("tokens", self.budget.as_ref().map_or(0, |b| b.tokens))?;
        Ok(d)
    }
}

/// `_text_digest`: (hash of the normalised words, shingle sketch) of a turn's text, or None
/// without a word (or for a blank text).
pub fn text_digest(
    norm: &Normalizer,
    py: Python<'_>,
    text: &Bound<'_, PyString>,
    shingle: usize,
) -> PyResult<Option<(u64, Vec<u64>)>> {
    let t = Text::from_py(text.clone())?;
    let s = t.as_str();
    if pystr::strip(s).is_empty() {
        return Ok(None);
    }
    if norm.fast && t.exact() && s.is_ascii() {
        let head = &s.as_bytes()[..s.len().min(65536)];
        let masked = crate::mask::mask_ascii(head);
        return Ok(crate::text::digest(
            masked.as_deref().unwrap_or(head),
            shingle,
            SKETCH_SIZE,
        ));
    }
    // masked by Python's regular expressions, lower-cased by Python's str.lower
    let head = args::py_head(text, 65536)?;
    let lowered = norm
        .reference(py)
        .call_method1("mask", (head,))?
        .call_method0("lower")?;
    let lowered = lowered.downcast::<PyString>()?;
    let words = crate::text::unicode_words(&args::py_text(lowered)?);
    Ok(crate::text::digest_words(&words, shingle, SKETCH_SIZE))
}
