//! A session's saved state (the OTLP service's restart state), in the format the Python
//! detector wrote (`SessionDetector.to_state`, version 2): the call ring, the words of each
//! named group of the former state array with their gates, the tables of failures and polls,
//! and the text, state and budget objects. A state saved by the Python detector loads here and
//! means the same (`tests/detect/test_state_compat.py`); what no longer fits the profile (another
//! `max_period`, state `window` or `max_gap`) starts fresh, as it did.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::dims::{Budget, PollEntry, StateRevisit, TextLoop, PERIODS};
use crate::rules::{info_from_saved, info_to_saved, AnswerMemory, ANSWERS_KEPT, CALLS_KEPT, NEWS};
use crate::session::Session;
use crate::settings::Num;
use crate::signal::Gate;
use crate::watch::FAILED;

/// `int(value)` as a word (Python's `array('Q')` refuses what does not fit).
fn word(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(v) = value.extract::<u64>() {
        return Ok(v);
    }
    value
        .py()
        .get_type::<pyo3::types::PyInt>()
        .call1((value,))?
        .extract()
}

fn words(value: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    value.try_iter()?.map(|v| word(&v?)).collect()
}

/// A saved [`AnswerMemory`]: at most `kept` values (32-bit, never 0) and where the next goes.
fn load_memory(
    memory: &mut AnswerMemory,
    values: &Bound<'_, PyAny>,
    next: Option<Bound<'_, PyAny>>,
    kept: usize,
) -> PyResult<()> {
    memory.answers = words(values)?
        .into_iter()
        .take(kept)
        .map(|a| (a as u32).max(1))
        .collect();
    if let Some(next) = next {
        memory.next = (word(&next)? % kept as u64) as u32;
    }
    Ok(())
}

fn gate_of(value: &Bound<'_, PyAny>) -> PyResult<Gate> {
    let v: i64 = value
        .py()
        .get_type::<pyo3::types::PyInt>()
        .call1((value,))?
        .extract()?;
    Ok(Gate(v.clamp(0, 255) as u8))
}

fn num_py<'py>(py: Python<'py>, n: Option<Num>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match n {
        None => py.None().into_bound(py),
        Some(Num::Int(v)) => v.into_pyobject(py)?.into_any(),
        Some(Num::Float(v)) => v.into_pyobject(py)?.into_any(),
    })
}

/// `{"$array": "Q", "items": [...]}`.
fn array_py<'py>(py: Python<'py>, items: &[u64]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("$array", "Q")?;
    d.set_item("items", PyList::new(py, items)?)?;
    Ok(d)
}

/// `_decode_state` of a saved array (or plain list) of words.
fn decode_words(value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u64>>> {
    if value.is_none() {
        return Ok(None);
    }
    if let Ok(d) = value.downcast::<PyDict>() {
        if let Some(items) = d.get_item("items")? {
            return Ok(Some(words(&items)?));
        }
        return Err(PyValueError::new_err("unknown session state value"));
    }
    Ok(Some(words(value)?))
}

/// A group's saved words (per field) and gates.
type Loaded = (Vec<Vec<u64>>, Vec<Gate>);

/// One named group of the state array: its fields (name, length) and gates, as saved.
struct Group {
    name: &'static str,
    fields: Vec<(&'static str, Vec<u64>)>,
    gates: Vec<Gate>,
}

impl Group {
    fn save<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, values) in &self.fields {
            d.set_item(*name, PyList::new(py, values)?)?;
        }
        d.set_item("$gates", PyList::new(py, self.gates.iter().map(|g| g.0))?)?;
        Ok(d)
    }

    /// The saved values of this group when their names and sizes match (`Layout.load`).
    fn load(&self, saved: &Bound<'_, PyAny>) -> PyResult<Option<Loaded>> {
        let Some(group) = saved.downcast::<PyDict>()?.get_item(self.name)? else {
            return Ok(None);
        };
        let Ok(group) = group.downcast::<PyDict>() else {
            return Ok(None);
        };
        let mut keys: Vec<String> = Vec::new();
        for k in group.keys() {
            match k.extract::<String>() {
                Ok(k) => keys.push(k),
                Err(_) => return Ok(None),
            }
        }
        let mut want: Vec<&str> = self.fields.iter().map(|f| f.0).chain(["$gates"]).collect();
        keys.sort();
        want.sort_unstable();
        if keys != want {
            return Ok(None);
        }
        let Some(gates) = group.get_item("$gates")? else {
            return Ok(None);
        };
        let gates: Vec<Bound<'_, PyAny>> = gates.try_iter()?.collect::<PyResult<_>>()?;
        if gates.len() != self.gates.len() {
            return Ok(None);
        }
        let mut values = Vec::new();
        for (name, current) in &self.fields {
            let Some(v) = group.get_item(*name)? else {
                return Ok(None);
            };
            let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
            if items.len() != current.len() {
                return Ok(None);
            }
            values.push(items.iter().map(word).collect::<PyResult<Vec<u64>>>()?);
        }
        let gates = gates
            .iter()
            .map(|g| Ok(Gate((word(g)? & 3) as u8)))
            .collect::<PyResult<Vec<Gate>>>()?;
        Ok(Some((values, gates)))
    }
}

fn one(v: i64) -> Vec<u64> {
    vec![v as u64]
}

impl Session {
    /// The groups of the former state array, in the order its layout made them.
    fn groups(&self) -> Vec<Group> {
        // (periods 2..=max_period, stored from index 0)
        let periods = ..self.pattern.max_period.saturating_sub(1);
        let per = |a: &[u32; PERIODS]| a[periods].iter().map(|&v| v as u64).collect();
        let args: Vec<u64> = self
            .category
            .tracked
            .iter()
            .flat_map(|&(n, k)| [n, k])
            .collect();
        vec![
            Group {
                name: "identical_call",
                fields: vec![("count", one(self.identical.count))],
                gates: vec![self.identical.gate],
            },
            Group {
                name: "category_streak",
                fields: vec![
                    ("category", vec![self.category.category]),
                    ("count", one(self.category.count)),
                    ("args", args),
                ],
                gates: vec![self.category.gate],
            },
            Group {
                name: "tool_pattern",
                fields: vec![
                    ("full_run", per(&self.pattern.full_run)),
                    ("name_run", per(&self.pattern.name_run)),
                    ("name_laps", per(&self.pattern.name_laps)),
                    ("lap_changed", vec![self.pattern.lap_changed]),
                    ("seen", vec![self.pattern.seen]),
                    ("count", one(self.pattern.count)),
                ],
                gates: vec![self.pattern.gate],
            },
            Group {
                name: "error_streak",
                fields: vec![("global_count", one(self.error.count))],
                gates: vec![self.error.gate],
            },
            Group {
                name: "rules",
                fields: vec![
                    ("edit_key", vec![self.near_duplicate.key]),
                    ("edit_count", one(self.near_duplicate.count)),
                    ("edit_key2", vec![self.near_duplicate.key2]),
                    ("edit_long", vec![self.near_duplicate.long_bits]),
                    ("edit_run2", one(self.near_duplicate.run2)),
                    ("density_bits", vec![self.density.bits]),
                    ("density_calls", one(self.density.calls)),
                    ("density_run", one(self.density.run)),
                    ("failed_action", vec![self.same.failed_action]),
                ],
                gates: vec![
                    self.replay.gate,
                    self.near_duplicate.gate,
                    self.repeated.gate,
                    self.recurring.gate,
                    self.density.gate,
                    self.same.gate,
                ],
            },
            Group {
                name: "staleness",
                fields: vec![
                    ("stale_bits", vec![self.staleness.bits]),
                    ("folds", self.staleness.folds.to_vec()),
                    ("fold_next", vec![self.staleness.next]),
                ],
                gates: vec![],
            },
            Group {
                name: "failed_lookups",
                fields: vec![("run", one(self.lookups.run))],
                gates: vec![self.lookups.gate],
            },
            Group {
                name: "nothing_new",
                fields: vec![
                    ("last", vec![self.nothing_new.last]),
                    ("run", one(self.nothing_new.run)),
                ],
                gates: vec![self.nothing_new.gate],
            },
            Group {
                name: "edit_without_effect",
                fields: vec![
                    ("check_key", vec![self.no_effect.check_key]),
                    ("check_result", vec![self.no_effect.check_result]),
                    ("rounds", one(self.no_effect.rounds)),
                    ("edits_since", one(self.no_effect.edits_since)),
                    ("edit_target", vec![self.no_effect.edit_target]),
                    ("lap_target", vec![self.no_effect.lap_target]),
                ],
                gates: vec![self.no_effect.gate],
            },
        ]
    }

    /// Loads one group's saved words and gates into the detectors.
    fn set_group(&mut self, name: &str, v: &[Vec<u64>], g: &[Gate]) {
        let n = |i: usize| v[i][0] as i64;
        match name {
            "identical_call" => {
                self.identical.count = n(0);
                self.identical.gate = g[0];
            }
            "category_streak" => {
                self.category.category = v[0][0];
                self.category.count = n(1);
                for (i, pair) in v[2].chunks(2).take(4).enumerate() {
                    self.category.tracked[i] = (pair[0], pair.get(1).copied().unwrap_or(0));
                }
                self.category.gate = g[0];
            }
            "tool_pattern" => {
                let p = &mut self.pattern;
                let word = |v: u64| v.min(u32::MAX as u64) as u32;
                let used = p.max_period.saturating_sub(1);
                for (run, saved) in [&mut p.full_run, &mut p.name_run, &mut p.name_laps]
                    .into_iter()
                    .zip(&v[..3])
                {
                    for (r, &w) in run[..used].iter_mut().zip(&saved[..used]) {
                        *r = word(w);
                    }
                }
                p.lap_changed = v[3][0];
                p.seen = v[4][0];
                p.count = n(5);
                p.gate = g[0];
            }
            "error_streak" => {
                self.error.count = n(0);
                self.error.gate = g[0];
            }
            "rules" => {
                let e = &mut self.near_duplicate;
                (e.key, e.count, e.key2, e.long_bits, e.run2) =
                    (v[0][0], n(1), v[2][0], v[3][0], n(4));
                (self.density.bits, self.density.calls, self.density.run) = (v[5][0], n(6), n(7));
                self.same.failed_action = v[8][0];
                self.replay.gate = g[0];
                self.near_duplicate.gate = g[1];
                self.repeated.gate = g[2];
                self.recurring.gate = g[3];
                self.density.gate = g[4];
                self.same.gate = g[5];
            }
            "staleness" => {
                self.staleness.bits = v[0][0];
                self.staleness.folds.copy_from_slice(&v[1][..8]);
                self.staleness.next = v[2][0];
            }
            "failed_lookups" => {
                self.lookups.run = n(0);
                self.lookups.gate = g[0];
            }
            "nothing_new" => {
                self.nothing_new.last = v[0][0];
                self.nothing_new.run = n(1);
                self.nothing_new.gate = g[0];
            }
            "edit_without_effect" => {
                let e = &mut self.no_effect;
                (e.check_key, e.check_result, e.rounds) = (v[0][0], v[1][0], n(2));
                (e.edits_since, e.edit_target, e.lap_target) = (n(3), v[4][0], v[5][0]);
                e.gate = g[0];
            }
            _ => {}
        }
    }

    /// This session's counters and hashes as plain JSON-compatible data (no raw content).
    pub fn to_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let size = self.ring.size() as i64;
        let steps =
            (self.header.tool_calls - self.header.tool_calls.min(size))..self.header.tool_calls;
        let calls = PyDict::new(py);
        let tools = PyList::empty(py);
        let ring_words = PyList::empty(py);
        let news = PyList::empty(py);
        for step in steps {
            let s = self.ring.slot(step);
            match &self.ring.slots[s].tool {
                Some(t) => tools.append(t.bind(py))?,
                None => tools.append("")?,
            }
            let info = self.ring.slots[s].info;
            for w in [
                self.ring.slots[s].key,
                self.ring.slots[s].result,
                info_to_saved(info),
            ] {
                ring_words.append(w)?;
            }
            news.append(u8::from(info & NEWS != 0))?;
        }
        calls.set_item("tools", tools)?;
        calls.set_item("words", ring_words)?;
        calls.set_item("news", news)?;
        calls.set_item("max_gap", self.header.plan.profile.replay_cycle.max_gap)?;
        let groups = PyDict::new(py);
        for g in self.groups() {
            groups.set_item(g.name, g.save(py)?)?;
        }
        let out = PyDict::new(py);
        out.set_item("v", 2)?;
        out.set_item("profile", self.header.plan.name.bind(py))?;
        out.set_item("tool_calls", self.header.tool_calls)?;
        out.set_item("model_turns", self.header.model_turns)?;
        out.set_item("calls", calls)?;
        out.set_item("words", groups)?;
        out.set_item("answers", PyList::new(py, &self.replay.seen.answers)?)?;
        out.set_item("answers_next", self.replay.seen.next)?;
        out.set_item(
            "known_calls",
            PyList::new(py, &self.nothing_new.seen.answers)?,
        )?;
        out.set_item("known_calls_next", self.nothing_new.seen.next)?;
        out.set_item("category_known", self.category.known)?;
        let failures = match &self.error.table {
            None => py.None().into_bound(py),
            Some(t) => {
                let l = PyList::empty(py);
                for (tool, streak) in t {
                    l.append(tool.bind(py))?;
                    l.append(*streak)?;
                }
                l.into_any()
            }
        };
        out.set_item("failures", failures)?;
        let polls = match &self.poll.table {
            None => py.None().into_bound(py),
            Some(t) => {
                let l = PyList::empty(py);
                for e in t {
                    l.append(e.tool.bind(py))?;
                    l.append(e.result)?;
                    l.append(e.count)?;
                    l.append(e.gate.0)?;
                }
                l.into_any()
            }
        };
        out.set_item("polls", polls)?;
        for (name, table) in [("recur", &self.recurring.table), ("same", &self.same.table)] {
            match table {
                None => out.set_item(name, py.None())?,
                Some(t) => {
                    let l = PyList::empty(py);
                    for &(step, value) in t {
                        l.append(step as u64)?;
                        l.append(value)?;
                    }
                    out.set_item(name, l)?;
                }
            }
        }
        let objects = PyDict::new(py);
        if let Some(t) = &self.text {
            let d = PyDict::new(py);
            d.set_item("count", t.count)?;
            d.set_item("last_exact", t.last_exact)?;
            d.set_item("last_sketch", array_py(py, &t.last_sketch)?)?;
            d.set_item("fired", t.gate.0)?;
            objects.set_item("text", d)?;
        }
        if let Some(s) = &self.revisits {
            let d = PyDict::new(py);
            match &s.ring {
                Some(r) => d.set_item("ring", array_py(py, r)?)?,
                None => d.set_item("ring", py.None())?,
            }
            match &s.visits {
                Some(v) => {
                    let items = PyList::empty(py);
                    for &(k, n) in v {
                        items.append(PyList::new(
                            py,
                            [
                                k.into_pyobject(py)?.into_any(),
                                n.into_pyobject(py)?.into_any(),
                            ],
                        )?)?;
                    }
                    let dd = PyDict::new(py);
                    dd.set_item("$dict", items)?;
                    d.set_item("visits", dd)?;
                }
                None => d.set_item("visits", py.None())?,
            }
            d.set_item("seen", s.seen)?;
            d.set_item("abab_run", s.abab_run)?;
            d.set_item("count", s.count)?;
            d.set_item("fired", s.gate.0)?;
            objects.set_item("state", d)?;
        }
        if let Some(b) = &self.budget {
            let d = PyDict::new(py);
            d.set_item("tool_calls", b.tool_calls)?;
            d.set_item("model_turns", b.model_turns)?;
            d.set_item("tokens", b.tokens)?;
            d.set_item("first_s", num_py(py, b.first_s)?)?;
            d.set_item("last_s", num_py(py, b.last_s)?)?;
            match &b.gates {
                Some(gates) => {
                    let l = PyList::empty(py);
                    for g in gates {
                        let gd = PyDict::new(py);
                        gd.set_item("$gate", g.0)?;
                        l.append(gd)?;
                    }
                    d.set_item("gates", l)?;
                }
                None => d.set_item("gates", py.None())?,
            }
            objects.set_item("budget", d)?;
        }
        out.set_item("objects", objects)?;
        Ok(out)
    }

    /// Loads what [`Session::to_state`] (or the Python detector) saved, into a fresh session.
    pub fn restore_state<'py>(
        &mut self,
        py: Python<'py>,
        state: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let state = match state.downcast::<PyDict>() {
            Ok(d) if d.get_item("v")?.is_some_and(|v| v.eq(2).unwrap_or(false)) => d.clone(),
            _ => return Err(PyValueError::new_err("unknown session state format")),
        };
        let get = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> { state.get_item(k) };
        let required = |k: &str| -> PyResult<Bound<'_, PyAny>> {
            get(k)?.ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(k.to_owned()))
        };
        let int = |v: Bound<'py, PyAny>| -> PyResult<i64> {
            py.get_type::<pyo3::types::PyInt>().call1((v,))?.extract()
        };
        self.header.tool_calls = int(required("tool_calls")?)?;
        self.header.model_turns = int(required("model_turns")?)?;
        // a falsy value reads as absent (`state.get(...) or ...`)
        let present = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
            Ok(match get(k)? {
                Some(v) if v.is_truthy()? => Some(v),
                _ => None,
            })
        };
        let (mut tools, mut saved, mut replay_bits) = (Vec::new(), Vec::new(), false);
        let mut news: Vec<u64> = Vec::new();
        if let Some(calls) = present("calls")? {
            let calls = calls.downcast::<PyDict>()?;
            let field = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
                Ok(match calls.get_item(k)? {
                    Some(v) if v.is_truthy()? => Some(v),
                    _ => None,
                })
            };
            if let Some(t) = field("tools")? {
                tools = t.try_iter()?.collect::<PyResult<Vec<_>>>()?;
            }
            if let Some(w) = field("words")? {
                saved = words(&w)?;
            }
            // absent from states saved before looks' answers were remembered: no news
            if let Some(n) = field("news")? {
                news = words(&n)?;
            }
            // the replay bits of a call's info word hold for the max_gap they were saved with
            replay_bits = calls.get_item("max_gap")?.is_some_and(|g| {
                g.eq(self.header.plan.profile.replay_cycle.max_gap)
                    .unwrap_or(false)
            });
        }
        if saved.len() != 3 * tools.len() {
            return Err(PyValueError::new_err(
                "inconsistent call ring in session state",
            ));
        }
        let size = self.ring.size();
        let first = self.header.tool_calls - tools.len() as i64;
        for i in tools.len().saturating_sub(size)..tools.len() {
            let s = self.ring.slot(first + i as i64);
            self.ring.slots[s].key = saved[3 * i];
            self.ring.slots[s].result = saved[3 * i + 1];
            let news_bit = if news.get(i).is_some_and(|&n| n != 0) {
                NEWS
            } else {
                0
            };
            self.ring.slots[s].info = news_bit
                | if replay_bits {
                    info_from_saved(saved[3 * i + 2])
                } else {
                    saved[3 * i + 2] & FAILED
                };
            let name = match tools[i].downcast::<PyString>() {
                Ok(t) => t.clone(),
                Err(_) => tools[i].str()?,
            };
            self.ring.slots[s].tool = Some(name.unbind());
        }
        // each absent from states saved before it was kept: nothing remembered
        if let Some(answers) = present("answers")? {
            let next = present("answers_next")?;
            load_memory(&mut self.replay.seen, &answers, next, ANSWERS_KEPT)?;
        }
        if let Some(known) = present("known_calls")? {
            let next = present("known_calls_next")?;
            load_memory(&mut self.nothing_new.seen, &known, next, CALLS_KEPT)?;
        }
        if let Some(groups) = present("words")? {
            for g in self.groups() {
                if let Some((values, gates)) = g.load(&groups)? {
                    self.set_group(g.name, &values, &gates);
                }
            }
        }
        // saved before the count of vouched-for calls existed: every call of the streak counts,
        // as it did then
        self.category.known = match get("category_known")? {
            Some(k) => int(k)?.clamp(0, self.category.count.max(0)),
            None => self.category.count,
        };
        fn items<'py>(v: Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
            v.try_iter()?.collect()
        }
        let tool_of = |v: &Bound<'_, PyAny>| -> PyResult<Py<PyString>> {
            Ok(match v.downcast::<PyString>() {
                Ok(s) => s.clone().unbind(),
                Err(_) => v.str()?.unbind(),
            })
        };
        self.error.table = match present("failures")? {
            Some(f) => {
                let f = items(f)?;
                Some(
                    f.chunks(2)
                        .filter(|c| c.len() == 2)
                        .map(|c| Ok((tool_of(&c[0])?, int(c[1].clone())?)))
                        .collect::<PyResult<_>>()?,
                )
            }
            None => None,
        };
        self.poll.table = match present("polls")? {
            Some(p) => {
                let p = items(p)?;
                Some(
                    p.chunks(4)
                        .filter(|c| c.len() == 4)
                        .map(|c| {
                            Ok(PollEntry {
                                tool: tool_of(&c[0])?,
                                result: word(&c[1])?,
                                count: int(c[2].clone())?,
                                gate: gate_of(&c[3])?,
                            })
                        })
                        .collect::<PyResult<_>>()?,
                )
            }
            None => None,
        };
        for (name, table) in [
            ("recur", &mut self.recurring.table),
            ("same", &mut self.same.table),
        ] {
            *table = match present(name)? {
                Some(t) => Some(
                    words(&t)?
                        .chunks(2)
                        .filter(|c| c.len() == 2)
                        .map(|c| (c[0] as i64, c[1]))
                        .collect(),
                ),
                None => None,
            };
        }
        let Some(objects) = present("objects")? else {
            return Ok(());
        };
        let objects = objects.downcast::<PyDict>()?;
        let slots = |name: &str| -> PyResult<Option<Bound<'_, PyDict>>> {
            Ok(objects
                .get_item(name)?
                .and_then(|v| v.downcast_into::<PyDict>().ok()))
        };
        if let Some(d) = slots("text")? {
            let mut t = TextLoop::default();
            for (k, v) in d.iter() {
                match k.extract::<String>()?.as_str() {
                    "count" => t.count = int(v)?,
                    "last_exact" => t.last_exact = word(&v)?,
                    "last_sketch" => t.last_sketch = decode_words(&v)?.unwrap_or_default(),
                    "fired" => t.gate = gate_of(&v)?,
                    _ => {}
                }
            }
            self.text = Some(Box::new(t));
        }
        if let Some(d) = slots("state")? {
            let ring = match d.get_item("ring")? {
                Some(r) => decode_words(&r)?,
                None => None,
            };
            // another window: the states start over
            if ring.as_ref().map_or(0, Vec::len) == self.header.plan.profile.state_hash.window {
                let mut s = StateRevisit::default();
                for (k, v) in d.iter() {
                    match k.extract::<String>()?.as_str() {
                        "ring" => s.ring = ring.clone(),
                        "visits" => {
                            s.visits = if v.is_none() {
                                None
                            } else {
                                let pairs = v.downcast::<PyDict>()?.get_item("$dict")?;
                                let mut out = Vec::new();
                                for pair in items(pairs.ok_or_else(|| {
                                    PyValueError::new_err("unknown session state value")
                                })?)? {
                                    let kv = items(pair)?;
                                    if kv.len() == 2 {
                                        out.push((word(&kv[0])?, int(kv[1].clone())?));
                                    }
                                }
                                Some(out)
                            }
                        }
                        "seen" => s.seen = int(v)?,
                        "abab_run" => s.abab_run = int(v)?,
                        "count" => s.count = int(v)?,
                        "fired" => s.gate = gate_of(&v)?,
                        _ => {}
                    }
                }
                self.revisits = Some(Box::new(s));
            }
        }
        if let Some(d) = slots("budget")? {
            let mut b = Budget::default();
            for (k, v) in d.iter() {
                match k.extract::<String>()?.as_str() {
                    "tool_calls" => b.tool_calls = int(v)?,
                    "model_turns" => b.model_turns = int(v)?,
                    "tokens" => b.tokens = int(v)?,
                    "first_s" => b.first_s = Num::read(&v)?,
                    "last_s" => b.last_s = Num::read(&v)?,
                    "gates" => {
                        b.gates = if v.is_none() {
                            None
                        } else {
                            let mut gates = [Gate::default(); 6];
                            for (i, g) in items(v)?.iter().take(6).enumerate() {
                                let n = g.downcast::<PyDict>()?.get_item("$gate")?;
                                gates[i] = match n {
                                    Some(n) => gate_of(&n)?,
                                    None => Gate::default(),
                                };
                            }
                            Some(gates)
                        }
                    }
                    _ => {}
                }
            }
            self.budget = Some(Box::new(b));
        }
        Ok(())
    }
}
