//! The one small trait every dimension and rule implements, and what a call shows them.
//!
//! A session (`session.rs`) is a struct of these detectors; for each tool call it fills a
//! [`Cx`] (the call's facts, the profile, the call ring, the facts one detector hands the
//! next) and asks each detector in the order of the Python code (the order matters: the rules
//! read what the dimensions counted). A detector answers with the crossing of its gate, if
//! any; the session turns crossings into signals.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::args::Args;
use crate::categories::ToolKind;
use crate::settings::{ProfileSettings, Thresholds};
use crate::signal::{Dimension, Gate, Level};

/// One call in the ring: its key (tool and arguments hash), its masked result hash, an info
/// word (bit 0: the call failed; the replay bits of `replay_cycle`) and its tool name.
#[derive(Default)]
pub struct Slot {
    pub key: u64,
    pub result: u64,
    pub info: u64,
    pub tool: Option<Py<PyString>>,
}

/// The recent calls (`CallRing` of dimensions.py), one allocation of slots.
pub struct CallRing {
    pub slots: Box<[Slot]>,
    /// [`remainder_magic`] of the ring's size, for [`CallRing::slot`].
    magic: u64,
}

pub const FAILED: u64 = 1;

/// `⌊(2^64 − 1) / d⌋ + 1` (wrapping: 0 for d = 1), the multiplier of [`remainder`].
fn remainder_magic(d: usize) -> u64 {
    match d {
        0 => 0,
        d => (u64::MAX / d as u64).wrapping_add(1),
    }
}

/// `a % d` by two multiplications instead of a division, with `magic` =
/// [`remainder_magic`]`(d)`: exact for every `a` and `d` below 2^32 (Lemire, Kaser and Kurz,
/// "Faster remainder by direct computation", 2019); anything else is divided. A 64-bit
/// division takes tens of cycles, and the ring is read a few dozen times a call.
#[inline]
fn remainder(a: i64, d: usize, magic: u64) -> usize {
    if (0..=u32::MAX as i64).contains(&a) && d != 0 && d <= u32::MAX as usize {
        let low = magic.wrapping_mul(a as u64);
        ((u128::from(low) * d as u128) >> 64) as usize
    } else {
        a.rem_euclid(d as i64) as usize
    }
}

impl CallRing {
    pub fn new(size: usize) -> Self {
        CallRing::of((0..size).map(|_| Slot::default()).collect())
    }

    /// A ring of these slots (its size theirs).
    pub fn of(slots: Box<[Slot]>) -> Self {
        let magic = remainder_magic(slots.len());
        CallRing { slots, magic }
    }

    #[inline]
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// The slot of the call at `step` (Python's `step % size`, steps never negative here).
    #[inline]
    pub fn slot(&self, step: i64) -> usize {
        remainder(step, self.size(), self.magic)
    }

    pub fn put(&mut self, step: i64, key: u64, result: u64, failed: bool, tool: Py<PyString>) {
        let s = self.slot(step);
        self.slots[s] = Slot {
            key,
            result,
            info: if failed { FAILED } else { 0 },
            tool: Some(tool),
        };
    }

    /// The tool name at a slot equals `tool` (Python's `==` on the two strings).
    pub fn same_tool(&self, slot: usize, tool: &Bound<'_, PyString>) -> bool {
        match &self.slots[slot].tool {
            Some(t) => same_str(t.bind(tool.py()), tool),
            None => false,
        }
    }
}

/// `a == b` for two Python strings.
pub fn same_str(a: &Bound<'_, PyString>, b: &Bound<'_, PyString>) -> bool {
    // SAFETY: both are live `str` objects (borrowed, GIL held), all PyUnicode_Compare takes;
    // it compares their code points (lone surrogates included) and raises nothing for two
    // strings, so its 0 is Python's `==`. One direct call: a comparison through the strings'
    // hashes was two calls through the type's hash slot, whose target varies.
    a.is(b) || unsafe { pyo3::ffi::PyUnicode_Compare(a.as_ptr(), b.as_ptr()) } == 0
}

/// What one tool call is, as the detectors read it.
pub struct CallFacts<'a, 'py> {
    pub step: i64,
    /// The tool name as Python holds it (signals, the ring), and as core text.
    pub tool: &'a Bound<'py, PyString>,
    pub tool_text: &'a str,
    /// `hash_bytes(tool.encode("utf-8", "replace"))`.
    pub tool_hash: u64,
    pub kind: &'a ToolKind<'a>,
    pub key: u64,
    pub result: u64,
    pub failed: bool,
    /// What `same_error` compares of a failed call: `result`, or, when lines of the output
    /// quote the call's own arguments (`echo.rs`), the hash of its first 2 KiB masked without
    /// them.
    pub error: u64,
    /// What `recurring_failure` compares of a failed call, whitespace aside
    /// (`rules::loose_failure`); 0 when the call did not fail.
    pub loose_failure: u64,
    pub args: &'a Args<'a, 'py>,
    /// The canonical JSON of the arguments.
    pub canonical: &'a [u8],
    /// `category_streak`'s per-tool override for this call (by its name or its kind).
    pub category_override: Option<Thresholds>,
    /// The profile's tool lists this call's tool is in, by its name or its kind
    /// (`progress_aware`: category_streak halves its streak on new arguments).
    pub member: crate::names::Memberships,
    /// `hash_bytes(str(state_fingerprint))` when the call has a fingerprint.
    pub state: Option<u64>,
    pub start_s: Option<crate::settings::Num>,
    pub end_s: Option<crate::settings::Num>,
}

/// What one model turn is, as the detectors read it.
pub struct TurnFacts {
    pub index: i64,
    /// `text_loop`'s digest of the turn's text (hash of its words, shingle sketch), if it has
    /// words.
    pub digest: Option<(u64, Vec<u64>)>,
    /// The turn failed.
    pub error: bool,
    pub state: Option<u64>,
    pub tokens: i64,
    pub start_s: Option<crate::settings::Num>,
    pub end_s: Option<crate::settings::Num>,
}

pub struct Tx<'a> {
    pub profile: &'a ProfileSettings,
    pub turn: &'a TurnFacts,
    pub handed: Handed,
}

/// What the detectors hand on to the ones after them within one call.
#[derive(Default, Clone, Copy)]
pub struct Handed {
    /// identical_call's count.
    pub identical_count: i64,
    /// The command line edits files (read where an answer is needed).
    pub shell_edit: bool,
    /// A successful call that moved the work on (failure_density, same_error).
    pub progress: bool,
    /// Stale failures among the last n observations: the bits of `Staleness`.
    pub stale_bits: u64,
}

pub struct Cx<'c, 'a, 'py> {
    pub py: Python<'py>,
    pub profile: &'c ProfileSettings,
    pub call: &'c CallFacts<'a, 'py>,
    pub ring: &'c mut CallRing,
    pub handed: Handed,
    /// How many recent calls evidence and units may show.
    pub evidence: usize,
}

impl Cx<'_, '_, '_> {
    /// The steps of the last `n` calls that evidence and units may show.
    pub fn recent_steps(&self, n: usize) -> std::ops::Range<i64> {
        recent_steps(n, self.evidence, self.call.step + 1)
    }

    /// The tool names of the last `n` calls (core text).
    pub fn recent_text(&self, n: usize) -> PyResult<Vec<String>> {
        let mut out = Vec::new();
        for step in self.recent_steps(n) {
            if let Some(t) = &self.ring.slots[self.ring.slot(step)].tool {
                out.push(crate::args::py_text(t.bind(self.py))?.into_owned());
            }
        }
        Ok(out)
    }
}

/// `_recent_steps`: the last `min(n, evidence, tool_calls)` steps.
pub fn recent_steps(n: usize, evidence: usize, tool_calls: i64) -> std::ops::Range<i64> {
    let count = (n as i64).min(evidence as i64).min(tool_calls);
    (tool_calls - count)..tool_calls
}

/// The tools a signal names as the repeated unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    None,
    /// `(tool,)` repeated `n` times.
    Tool(usize),
    /// The tools of the last `n` calls (as many as evidence shows).
    Recent(usize),
    /// The first four distinct tools of the last `n` calls.
    Distinct(usize),
}

/// A gate that crossed: what the session makes a signal of.
#[derive(Debug, Clone)]
pub struct Crossing {
    pub dimension: Dimension,
    /// The dimension's own counter (its name) or a rule's name.
    pub rule: &'static str,
    pub level: Level,
    pub count: i64,
    /// The threshold of the level reached.
    pub threshold: i64,
    pub unit: Unit,
    /// The explanation (a rule's, with its threshold note; the budget's); None: the
    /// dimension's own words.
    pub text: Option<String>,
}

impl Crossing {
    /// A dimension's own counter crossing (the level's threshold is taken).
    pub fn own(dimension: Dimension, level: Level, count: i64, th: Thresholds, unit: Unit) -> Self {
        Crossing {
            dimension,
            rule: dimension.name(),
            level,
            count,
            threshold: if level == Level::Term {
                th.term
            } else {
                th.warn
            },
            unit,
            text: None,
        }
    }

    /// A rule's crossing, reported under `dimension`, its text closed by the threshold note.
    pub fn rule(
        rule: &'static str,
        dimension: Dimension,
        level: Level,
        count: i64,
        th: Thresholds,
        unit: Unit,
        text: String,
    ) -> Self {
        let own = Crossing::own(dimension, level, count, th, unit);
        let text = format!("{text} ({} threshold {})", level.name(), own.threshold);
        Crossing {
            rule,
            text: Some(text),
            ..own
        }
    }

    /// `own` if `gate` crosses at `count`: the shape of every counter dimension.
    pub fn own_gated(
        gate: &mut Gate,
        dimension: Dimension,
        count: i64,
        th: Thresholds,
        unit: Unit,
    ) -> Option<Self> {
        let level = gate.check(count, th.warn, th.term)?;
        Some(Crossing::own(dimension, level, count, th, unit))
    }

    /// `rule` if `gate` crosses at `count`; the text is written only then (most calls cross
    /// nothing, and formatting is the costly part).
    pub fn rule_gated(
        gate: &mut Gate,
        rule: &'static str,
        dimension: Dimension,
        count: i64,
        th: Thresholds,
        unit: Unit,
        text: impl FnOnce() -> String,
    ) -> Option<Self> {
        let level = gate.check(count, th.warn, th.term)?;
        Some(Crossing::rule(
            rule,
            dimension,
            level,
            count,
            th,
            unit,
            text(),
        ))
    }
}

/// One dimension or rule: its state in named fields, one observation per tool call (and per
/// model turn for those that watch turns).
pub trait Watch {
    /// Counts one tool call (already in the ring); the crossing of its gate, if any.
    fn on_call(&mut self, _cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        Ok(None)
    }

    /// Counts one model turn.
    fn on_turn(&mut self, _tx: &mut Tx<'_>) -> Option<Crossing> {
        None
    }

    /// Self-heal: the count from zero (what the Python `reset` of the dimension or rule does).
    fn reset(&mut self);
}

#[cfg(test)]
mod remainder_tests {
    use super::*;
    use crate::testing::xorshift;

    #[test]
    fn the_remainder_without_division_is_the_division_s() {
        let mut y: u64 = 0x0DDB_A11C_AFE5_EED5;
        let mut ds: Vec<usize> = (1..=70).collect();
        ds.extend([255, 256, 1 << 20, u32::MAX as usize, u32::MAX as usize + 1]);
        for &d in &ds {
            let magic = remainder_magic(d);
            let edges = [
                0i64,
                1,
                d as i64 - 1,
                d as i64,
                u32::MAX as i64,
                1 << 32,
                -1,
                i64::MAX,
            ];
            for a in edges
                .into_iter()
                .chain((0..2_000).map(|_| (xorshift(&mut y) >> (xorshift(&mut y) % 64)) as i64))
            {
                assert_eq!(
                    remainder(a, d, magic),
                    a.rem_euclid(d as i64) as usize,
                    "{a} % {d}"
                );
            }
        }
    }
}
