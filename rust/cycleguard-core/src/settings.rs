//! The detector's settings in Rust: `otel_cycleguard/detect/settings.py`'s dataclasses (what
//! `CycleGuardConfig.detector_settings()` compiles), read once per detector and per profile.
//! The field names are the Python ones.
//!
//! Regular expressions the user writes (`result_patterns`, a custom `exec_failure_patterns`)
//! are Python's: they are compiled by Python's `re` and searched through it; the built-in
//! failure patterns are matched here (`failures.rs`).

use crate::fasthash::{HashMap, HashSet};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyMapping, PyString};

use crate::normalize::lower;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Thresholds {
    pub warn: i64,
    pub term: i64,
}

fn get<'py, T: FromPyObject<'py>>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<T> {
    obj.getattr(name)?.extract()
}

fn thresholds(obj: &Bound<'_, PyAny>) -> PyResult<Thresholds> {
    Ok(Thresholds {
        warn: get(obj, "warn")?,
        term: get(obj, "term")?,
    })
}

/// The items of a Python mapping.
fn items<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if let Ok(d) = obj.downcast::<PyDict>() {
        return Ok(d.iter().collect());
    }
    let mapping = obj.downcast::<PyMapping>()?;
    let mut out = Vec::new();
    for item in mapping.items()?.iter() {
        out.push(item.extract()?);
    }
    Ok(out)
}

/// Names lower-cased as Python's `str.lower` does.
fn lowered_set(py: Python<'_>, names: Vec<String>) -> PyResult<HashSet<String>> {
    names
        .iter()
        .map(|n| lower(py, n).map(|s| s.into_owned()))
        .collect()
}

pub struct CategoryStreakSettings {
    pub exploration: Thresholds,
    pub action: Thresholds,
    /// As configured (exact tool names, lower-cased ones and override keys all look here).
    pub tool_overrides: HashMap<String, Thresholds>,
}

pub struct ToolPatternSettings {
    pub th: Thresholds,
    pub max_period: usize,
}

pub struct TextLoopSettings {
    pub th: Thresholds,
    pub similarity: f64,
    pub shingle_size: usize,
}

pub struct StateHashSettings {
    pub th: Thresholds,
    pub window: usize,
}

/// A Python regular expression (compiled by `re`), searched through Python.
pub struct PyPattern(pub Py<PyAny>);

impl PyPattern {
    pub fn search(&self, py: Python<'_>, text: &Bound<'_, PyString>) -> PyResult<bool> {
        Ok(!self.0.bind(py).call_method1("search", (text,))?.is_none())
    }
}

/// The exec failure patterns: none, the built-in ones (matched in Rust), or the user's.
pub enum FailurePatterns {
    None,
    Default,
    Custom(PyPattern),
}

pub struct ErrorStreakSettings {
    pub th: Thresholds,
    /// `result_patterns` joined as one alternation, or None.
    pub result_patterns: Option<PyPattern>,
    /// Lower-cased.
    pub non_failing_tools: HashSet<String>,
    pub max_scan_chars: usize,
    pub exec_failure_patterns: FailurePatterns,
    pub non_failing_exit_codes: HashMap<String, Vec<i64>>,
    pub empty_result_lookups: HashSet<String>,
}

pub struct ReplayCycleSettings {
    pub enabled: bool,
    pub warn: i64,
    pub term: i64,
    pub partial_term: i64,
    pub max_gap: usize,
}

pub struct NearDuplicateEditSettings {
    pub enabled: bool,
    pub th: Thresholds,
    /// Lower-cased.
    pub tools: HashSet<String>,
    pub min_chars: usize,
}

pub struct RuleSettings {
    pub enabled: bool,
    pub th: Thresholds,
}

pub struct WindowSettings {
    pub enabled: bool,
    pub window: usize,
    pub th: Thresholds,
}

pub struct FailureDensitySettings {
    pub enabled: bool,
    pub window: usize,
    pub th: Thresholds,
    /// As configured (the explanation names them), and lower-cased.
    pub progress_tools: Vec<String>,
    pub progress_names: HashSet<String>,
    pub progress_commands: bool,
}

pub struct EditWithoutEffectSettings {
    pub enabled: bool,
    pub th: Thresholds,
    /// Lower-cased.
    pub edit_tools: HashSet<String>,
}

/// A number as Python holds it (an int stays an int: saved state and `max` keep the type).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    pub fn f(self) -> f64 {
        match self {
            Num::Int(v) => v as f64,
            Num::Float(v) => v,
        }
    }

    pub fn read(obj: &Bound<'_, PyAny>) -> PyResult<Option<Num>> {
        if obj.is_none() {
            return Ok(None);
        }
        if obj.is_instance_of::<pyo3::types::PyInt>()
            && !obj.is_instance_of::<pyo3::types::PyBool>()
        {
            if let Ok(v) = obj.extract::<i64>() {
                return Ok(Some(Num::Int(v)));
            }
        }
        Ok(Some(Num::Float(obj.extract::<f64>()?)))
    }
}

pub struct BudgetSettings {
    pub enabled: bool,
    pub max_tool_calls: Option<Num>,
    pub max_model_turns: Option<Num>,
    pub max_tokens: Option<Num>,
    pub max_wall_seconds: Option<Num>,
    pub max_idle_seconds: Option<Num>,
    pub call_seconds: HashMap<String, Num>,
    pub warn_fraction: f64,
}

pub struct ProfileSettings {
    pub identical_call: Thresholds,
    pub category_streak: CategoryStreakSettings,
    pub tool_pattern: ToolPatternSettings,
    pub poll_no_progress: Thresholds,
    pub error_streak: ErrorStreakSettings,
    pub text_loop: TextLoopSettings,
    pub state_hash: StateHashSettings,
    pub budget: BudgetSettings,
    pub replay_cycle: ReplayCycleSettings,
    pub near_duplicate_edit: NearDuplicateEditSettings,
    pub repeated_failure: RuleSettings,
    pub recurring_failure: WindowSettings,
    pub failure_density: FailureDensitySettings,
    pub same_error: WindowSettings,
    pub failed_lookups: RuleSettings,
    pub edit_without_effect: EditWithoutEffectSettings,
    pub nothing_new: RuleSettings,
}

/// `re.compile("|".join(f"(?:{p})" for p in patterns), flags)`, or None without patterns.
fn compile(py: Python<'_>, patterns: &[String], multiline: bool) -> PyResult<Option<PyPattern>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let joined = patterns
        .iter()
        .map(|p| format!("(?:{p})"))
        .collect::<Vec<_>>()
        .join("|");
    let re = py.import("re")?;
    let flags = if multiline {
        re.getattr("M")?
    } else {
        0i64.into_pyobject(py)?.into_any()
    };
    Ok(Some(PyPattern(
        re.call_method1("compile", (joined, flags))?.unbind(),
    )))
}

impl ErrorStreakSettings {
    /// From a Python `ErrorStreakSettings`.
    pub fn read(py: Python<'_>, es: &Bound<'_, PyAny>) -> PyResult<Self> {
        let result_patterns: Vec<String> = get(es, "result_patterns")?;
        let exec_patterns: Vec<String> = get(es, "exec_failure_patterns")?;
        let defaults: Vec<String> = py
            .import("otel_cycleguard.detect.settings")?
            .getattr("DEFAULT_EXEC_FAILURE_PATTERNS")?
            .extract()?;
        let exec_failure_patterns = if exec_patterns.is_empty() {
            FailurePatterns::None
        } else if exec_patterns == defaults {
            FailurePatterns::Default
        } else {
            match compile(py, &exec_patterns, true)? {
                Some(p) => FailurePatterns::Custom(p),
                None => FailurePatterns::None,
            }
        };
        let mut non_failing_exit_codes = HashMap::default();
        for (k, v) in items(&es.getattr("non_failing_exit_codes")?)? {
            non_failing_exit_codes.insert(k.extract::<String>()?, v.extract::<Vec<i64>>()?);
        }
        Ok(ErrorStreakSettings {
            th: thresholds(es)?,
            result_patterns: compile(py, &result_patterns, false)?,
            non_failing_tools: lowered_set(py, get(es, "non_failing_tools")?)?,
            max_scan_chars: get(es, "max_scan_chars")?,
            exec_failure_patterns,
            non_failing_exit_codes,
            empty_result_lookups: get::<Vec<String>>(es, "empty_result_lookups")?
                .into_iter()
                .collect(),
        })
    }
}

impl ProfileSettings {
    /// From a Python `ProfileSettings`.
    pub fn read(py: Python<'_>, p: &Bound<'_, PyAny>) -> PyResult<Self> {
        let cs = p.getattr("category_streak")?;
        let mut tool_overrides = HashMap::default();
        for (k, v) in items(&cs.getattr("tool_overrides")?)? {
            tool_overrides.insert(k.extract::<String>()?, thresholds(&v)?);
        }
        let tp = p.getattr("tool_pattern")?;
        let tl = p.getattr("text_loop")?;
        let sh = p.getattr("state_hash")?;
        let es = p.getattr("error_streak")?;
        let bu = p.getattr("budget")?;
        let mut call_seconds = HashMap::default();
        for (k, v) in items(&bu.getattr("call_seconds")?)? {
            if let Some(n) = Num::read(&v)? {
                call_seconds.insert(k.extract::<String>()?, n);
            }
        }
        let rc = p.getattr("replay_cycle")?;
        let nd = p.getattr("near_duplicate_edit")?;
        let rule = |name: &str| -> PyResult<RuleSettings> {
            let r = p.getattr(name)?;
            Ok(RuleSettings {
                enabled: get(&r, "enabled")?,
                th: thresholds(&r)?,
            })
        };
        let window = |name: &str| -> PyResult<WindowSettings> {
            let r = p.getattr(name)?;
            Ok(WindowSettings {
                enabled: get(&r, "enabled")?,
                window: get(&r, "window")?,
                th: thresholds(&r)?,
            })
        };
        let fd = p.getattr("failure_density")?;
        let progress_tools: Vec<String> = get(&fd, "progress_tools")?;
        let ew = p.getattr("edit_without_effect")?;
        Ok(ProfileSettings {
            identical_call: thresholds(&p.getattr("identical_call")?)?,
            category_streak: CategoryStreakSettings {
                exploration: thresholds(&cs.getattr("exploration")?)?,
                action: thresholds(&cs.getattr("action")?)?,
                tool_overrides,
            },
            tool_pattern: ToolPatternSettings {
                th: thresholds(&tp)?,
                max_period: get(&tp, "max_period")?,
            },
            poll_no_progress: thresholds(&p.getattr("poll_no_progress")?)?,
            error_streak: ErrorStreakSettings::read(py, &es)?,
            text_loop: TextLoopSettings {
                th: thresholds(&tl)?,
                similarity: get(&tl, "similarity")?,
                shingle_size: get(&tl, "shingle_size")?,
            },
            state_hash: StateHashSettings {
                th: thresholds(&sh)?,
                window: get(&sh, "window")?,
            },
            budget: BudgetSettings {
                enabled: get(&bu, "enabled")?,
                max_tool_calls: Num::read(&bu.getattr("max_tool_calls")?)?,
                max_model_turns: Num::read(&bu.getattr("max_model_turns")?)?,
                max_tokens: Num::read(&bu.getattr("max_tokens")?)?,
                max_wall_seconds: Num::read(&bu.getattr("max_wall_seconds")?)?,
                max_idle_seconds: Num::read(&bu.getattr("max_idle_seconds")?)?,
                call_seconds,
                warn_fraction: get(&bu, "warn_fraction")?,
            },
            replay_cycle: ReplayCycleSettings {
                enabled: get(&rc, "enabled")?,
                warn: get(&rc, "warn")?,
                term: get(&rc, "term")?,
                partial_term: get(&rc, "partial_term")?,
                max_gap: get(&rc, "max_gap")?,
            },
            near_duplicate_edit: NearDuplicateEditSettings {
                enabled: get(&nd, "enabled")?,
                th: thresholds(&nd)?,
                tools: lowered_set(py, get(&nd, "tools")?)?,
                min_chars: get(&nd, "min_chars")?,
            },
            repeated_failure: rule("repeated_failure")?,
            recurring_failure: window("recurring_failure")?,
            failure_density: FailureDensitySettings {
                enabled: get(&fd, "enabled")?,
                window: get(&fd, "window")?,
                th: thresholds(&fd)?,
                progress_names: lowered_set(py, progress_tools.clone())?,
                progress_tools,
                progress_commands: get(&fd, "progress_commands")?,
            },
            same_error: window("same_error")?,
            failed_lookups: rule("failed_lookups")?,
            edit_without_effect: EditWithoutEffectSettings {
                enabled: get(&ew, "enabled")?,
                th: thresholds(&ew)?,
                edit_tools: lowered_set(py, get(&ew, "edit_tools")?)?,
            },
            nothing_new: rule("nothing_new")?,
        })
    }
}

/// What the detector reads of the settings beyond the profiles.
pub struct DetectorSettings {
    pub disabled: [bool; 8],
    pub extra_categories: HashMap<String, String>,
    pub read_only_tools: HashSet<String>,
    pub progress_aware_tools: HashSet<String>,
    pub poll_tools: HashSet<String>,
    pub fast_masks: bool,
    pub result_fields: HashMap<String, Vec<String>>,
    pub evidence_size: usize,
}

impl DetectorSettings {
    pub fn read(py: Python<'_>, s: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut disabled = [false; 8];
        for name in get::<Vec<String>>(s, "disabled_dimensions")? {
            if let Some(d) = crate::signal::Dimension::from_name(&name) {
                disabled[d as usize] = true;
            }
        }
        let mut extra_categories = HashMap::default();
        for (k, v) in items(&s.getattr("extra_categories")?)? {
            let k: String = k.extract()?;
            extra_categories.insert(lower(py, &k)?.into_owned(), v.extract::<String>()?);
        }
        let mut result_fields = HashMap::default();
        for (k, v) in items(&s.getattr("result_fields")?)? {
            let k: String = k.extract()?;
            result_fields.insert(lower(py, &k)?.into_owned(), v.extract::<Vec<String>>()?);
        }
        let mask_patterns: Vec<String> = get(s, "mask_patterns")?;
        Ok(DetectorSettings {
            disabled,
            extra_categories,
            read_only_tools: lowered_set(py, get(s, "read_only_tools")?)?,
            progress_aware_tools: lowered_set(py, get(s, "progress_aware_tools")?)?,
            poll_tools: lowered_set(py, get(s, "poll_tools")?)?,
            fast_masks: get::<bool>(s, "mask_defaults")? && mask_patterns.is_empty(),
            result_fields,
            evidence_size: get(s, "evidence_size")?,
        })
    }
}
