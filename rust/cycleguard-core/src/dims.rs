//! The eight loop dimensions (`otel_cycleguard/detect/dimensions.py`, docs/detection.md
//! "Dimensions"), each a [`Watch`] with its state in named fields.

use pyo3::prelude::*;
use pyo3::types::PyString;
use xxhash_rust::xxh3::xxh3_64;

use crate::categories::ToolKind;
use crate::settings::{BudgetSettings, Num, ProfileSettings, Thresholds};
use crate::signal::{Dimension, Gate, Level};
use crate::watch::{same_str, Crossing, Cx, Tx, Unit, Watch};

/// A term threshold no streak reaches (an unknown tool's category is a guess: it may warn,
/// never terminate).
pub const NEVER: i64 = 1 << 62;

/// `ceil(n / 2)` for a count.
#[inline]
fn half_up(n: i64) -> i64 {
    (n + 1).div_euclid(2)
}

/// Consecutive calls whose (tool, arguments) hash and masked result hash equal the previous
/// call's (read from the ring); poll calls never count.
#[derive(Default)]
pub struct IdenticalCall {
    pub count: i64,
    pub gate: Gate,
}

impl Watch for IdenticalCall {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let c = cx.call;
        let th = cx.profile.identical_call;
        let count = if c.kind.is_poll {
            0 // waiting is poll_no_progress's business
        } else if self.count != 0 {
            let prev = cx.ring.slot(c.step - 1);
            if cx.ring.slots[prev].key == c.key && cx.ring.slots[prev].result == c.result {
                self.count + 1
            } else {
                1
            }
        } else {
            1
        };
        self.count = count;
        cx.handed.identical_count = count;
        Ok(Crossing::own_gated(
            &mut self.gate,
            Dimension::IdenticalCall,
            count,
            th,
            Unit::Tool(1),
        ))
    }

    fn reset(&mut self) {
        self.count = 0;
        self.gate.reset();
    }
}

/// Consecutive calls of one category; for progress-aware tools a call whose arguments differ
/// from that tool's previous call halves the streak instead of adding one.
#[derive(Default)]
pub struct CategoryStreak {
    /// The category's name hash.
    pub category: u64,
    pub count: i64,
    /// The calls of the streak whose tool the guard knows (or the configuration names),
    /// counted and halved the same way: only they can take the streak to TERM. A tool the
    /// guard does not know falls into `action`, so without this a long run of unknown tools
    /// ending on one known action (`send_message`, `move`) was a TERM.
    pub known: i64,
    /// Per progress-aware tool (at most four, oldest first): its name hash and last key; a
    /// name hash of 0 is a free entry.
    pub tracked: [(u64, u64); 4],
    pub gate: Gate,
}

/// `_category_thresholds`: the call's per-tool override (`NameFacts::category_override`),
/// else the category's (an unknown tool never reaches TERM); and whether the call is vouched
/// for (its tool known, or named by an override), so that it counts towards a TERM.
pub fn category_thresholds(
    profile: &ProfileSettings,
    tool_override: Option<Thresholds>,
    kind: &ToolKind<'_>,
) -> (Thresholds, bool) {
    if let Some(th) = tool_override {
        return (th, true);
    }
    let cfg = &profile.category_streak;
    let th = if kind.is_exploration() {
        cfg.exploration
    } else {
        cfg.action
    };
    let th = Thresholds {
        warn: th.warn,
        term: if kind.known { th.term } else { NEVER },
    };
    (th, kind.known)
}

impl CategoryStreak {
    /// Remember `tool`'s arguments (most recent last); whether they changed.
    fn track(&mut self, tool: u64, key: u64) -> bool {
        let mut changed = false;
        let (mut kept, mut n) = ([(0u64, 0u64); 4], 0);
        for &(name, k) in &self.tracked {
            if name == tool {
                changed = k != key;
            } else if name != 0 {
                kept[n] = (name, k);
                n += 1;
            }
        }
        let from = n.saturating_sub(3);
        let mut next = [(0u64, 0u64); 4];
        next[..n - from].copy_from_slice(&kept[from..n]);
        next[n - from] = (tool, key);
        self.tracked = next;
        changed
    }
}

impl Watch for CategoryStreak {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let c = cx.call;
        let category = xxh3_64(c.kind.category.as_bytes());
        let (th, vouched) = category_thresholds(cx.profile, c.category_override, c.kind);
        // a read (`cat`, `ls` through a shell) is not progress however its arguments change
        let changed =
            c.member.progress_aware && !c.kind.is_exploration() && self.track(c.tool_hash, c.key);
        let (count, known) = if category != self.category {
            self.category = category;
            (1, vouched as i64)
        } else if changed {
            (
                half_up(self.count).max(1),
                half_up(self.known).max(vouched as i64),
            )
        } else {
            (self.count + 1, self.known + vouched as i64)
        };
        (self.count, self.known) = (count, known);
        // a streak reaches TERM only when enough of its calls are vouched for
        let count = if known >= th.term {
            count
        } else {
            count.min(th.term - 1)
        };
        Ok(Crossing::own_gated(
            &mut self.gate,
            Dimension::CategoryStreak,
            count,
            th,
            Unit::None,
        ))
    }

    /// The count from zero; the category and the tools' arguments stay.
    fn reset(&mut self) {
        self.count = 0;
        self.known = 0;
        self.gate.reset();
    }
}

/// Laps of the shortest repeating unit (period 2..max_period) at the tail of the calls: over
/// (tool, arguments) first, then over tool names alone, where a lap whose arguments differ
/// from the previous lap's halves the lap count instead of adding one. Indexed by period - 2
/// (periods 2..=8; 32 bits hold any run a session can make, and saturate beyond).
pub struct ToolPattern {
    pub max_period: usize,
    pub full_run: [u32; PERIODS],
    pub name_run: [u32; PERIODS],
    pub name_laps: [u32; PERIODS],
    /// Bit p: a lap of period p changed its arguments.
    pub lap_changed: u64,
    /// Calls since the last reset.
    pub seen: u64,
    pub count: i64,
    pub gate: Gate,
}

/// The periods 2..=8 a tool pattern can have.
pub const PERIODS: usize = 7;

impl ToolPattern {
    pub fn new(max_period: usize) -> Self {
        ToolPattern {
            max_period: max_period.min(PERIODS + 1),
            full_run: [0; PERIODS],
            name_run: [0; PERIODS],
            name_laps: [1; PERIODS],
            lap_changed: 0,
            seen: 0,
            count: 0,
            gate: Gate::default(),
        }
    }
}

impl Watch for ToolPattern {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let c = cx.call;
        let ring = &*cx.ring;
        let (step, key, tool) = (c.step, c.key, c.tool);
        let mut changed = self.lap_changed;
        let (mut best_full, mut best_name) = (0usize, 0usize);
        // A look that answers differently from the lap before has brought new information:
        // it is not a repeat, however alike its arguments (a job's progress, the next page).
        let looks = c.kind.is_look();
        for p in 2..=self.max_period {
            if self.seen < p as u64 {
                break;
            }
            let slot = ring.slot(step - p as i64);
            let at = p - 2;
            let earlier = &ring.slots[slot];
            let same_full = earlier.key == key && (!looks || earlier.result == c.result);
            let full = if same_full {
                self.full_run[at].saturating_add(1)
            } else {
                0
            };
            self.full_run[at] = full;
            let bit = 1u64 << p;
            let run;
            if ring.same_tool(slot, tool) {
                run = self.name_run[at].saturating_add(1);
                self.name_run[at] = run;
                if !same_full {
                    changed |= bit;
                }
                if run % p as u32 == 0 {
                    if changed & bit != 0 {
                        self.name_laps[at] = (self.name_laps[at].div_ceil(2)).max(1);
                    } else {
                        self.name_laps[at] = self.name_laps[at].saturating_add(1);
                    }
                    changed &= !bit;
                }
            } else {
                run = 0;
                self.name_run[at] = 0;
                self.name_laps[at] = 1;
                changed &= !bit;
            }
            if best_full == 0
                && full >= p as u32
                && !(1..p).all(|j| ring.slots[ring.slot(step - j as i64)].key == key)
            {
                best_full = p;
            }
            if best_name == 0
                && run >= p as u32
                && !(1..p).all(|j| ring.same_tool(ring.slot(step - j as i64), tool))
            {
                best_name = p;
            }
        }
        self.seen += 1;
        self.lap_changed = changed;
        let (laps, period) = if best_full != 0 {
            (
                (self.full_run[best_full - 2] as i64 + best_full as i64) / best_full as i64,
                best_full,
            )
        } else if best_name != 0 {
            (self.name_laps[best_name - 2] as i64, best_name)
        } else {
            (0, 0)
        };
        self.count = laps;
        let th = cx.profile.tool_pattern.th;
        let unit = if period != 0 {
            Unit::Recent(period)
        } else {
            Unit::None
        };
        Ok(Crossing::own_gated(
            &mut self.gate,
            Dimension::ToolPattern,
            laps,
            th,
            unit,
        ))
    }

    /// Forgets the history too: otherwise the last lap before the reset would count as the
    /// first after it.
    fn reset(&mut self) {
        self.full_run = [0; PERIODS];
        self.name_run = [0; PERIODS];
        self.name_laps = [1; PERIODS];
        self.lap_changed = 0;
        self.seen = 0;
        self.count = 0;
        self.gate.reset();
    }
}

/// One poll tool's state.
pub struct PollEntry {
    pub tool: Py<PyString>,
    pub result: u64,
    pub count: i64,
    pub gate: Gate,
}

/// Per poll tool (at most 16, oldest first): consecutive calls whose masked result did not
/// change. The table exists once the session polled.
#[derive(Default)]
pub struct PollNoProgress {
    pub table: Option<Vec<PollEntry>>,
}

impl PollNoProgress {
    pub fn longest(&self) -> i64 {
        self.table
            .as_ref()
            .and_then(|t| t.iter().map(|e| e.count).max())
            .unwrap_or(0)
    }
}

impl Watch for PollNoProgress {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let c = cx.call;
        // the status calls around a wait show the progress, not the wait
        if !c.kind.is_poll || c.kind.only_waits() {
            return Ok(None);
        }
        let table = self.table.get_or_insert_with(Vec::new);
        let index = match table
            .iter()
            .position(|e| same_str(e.tool.bind(cx.py), c.tool))
        {
            Some(i) => i,
            None => {
                if table.len() >= 16 {
                    table.remove(0);
                }
                table.reserve_exact(1); // (tables stay small: no slack)
                table.push(PollEntry {
                    tool: c.tool.clone().unbind(),
                    result: c.result,
                    count: 0,
                    gate: Gate::default(),
                });
                table.len() - 1
            }
        };
        let e = &mut table[index];
        let count = if e.result == c.result { e.count + 1 } else { 1 };
        e.result = c.result;
        e.count = count;
        let th = cx.profile.poll_no_progress;
        Ok(Crossing::own_gated(
            &mut e.gate,
            Dimension::PollNoProgress,
            count,
            th,
            Unit::Tool(1),
        ))
    }

    /// Every tool's count and gate from zero (the last results stay).
    fn reset(&mut self) {
        for e in self.table.iter_mut().flatten() {
            e.count = 0;
            e.gate.reset();
        }
    }
}

/// Stale failures among the last `observations` (at most 64) of the staleness bits.
pub fn stale_failures(bits: u64, observations: i64) -> i64 {
    let n = observations.clamp(0, 64) as u32;
    let mask = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    (bits & mask).count_ones() as i64
}

/// Evidence of no progress: at least half of the failures counted over the last
/// `observations` repeated an earlier failure's output.
pub fn no_new_information(bits: u64, failures: i64, observations: i64) -> bool {
    2 * stale_failures(bits, observations) >= failures
}

/// Consecutive failures across all tools, and per tool (at most 64 tools; other tools' calls
/// in between do not break a tool's streak). TERM needs evidence of no new information.
#[derive(Default)]
pub struct ErrorStreak {
    pub count: i64,
    pub gate: Gate,
    /// Per failing tool: its streak (first failure first); None once every streak is broken.
    pub table: Option<Vec<(Py<PyString>, i64)>>,
}

impl ErrorStreak {
    pub fn longest(&self) -> i64 {
        self.table
            .as_ref()
            .and_then(|t| t.iter().map(|e| e.1).max())
            .unwrap_or(0)
    }

    fn current(&self) -> i64 {
        if self.table.is_some() {
            self.count.max(self.longest())
        } else {
            self.count
        }
    }

    /// The gate, with TERM held back while the failures keep bringing new information.
    fn check(
        &mut self,
        profile: &ProfileSettings,
        count: i64,
        stale_bits: u64,
    ) -> Option<Crossing> {
        let th = profile.error_streak.th;
        let mut count = count;
        if count >= th.term && !no_new_information(stale_bits, count, count) {
            count = th.term - 1;
        }
        Crossing::own_gated(
            &mut self.gate,
            Dimension::ErrorStreak,
            count,
            th,
            Unit::None,
        )
    }
}

impl Watch for ErrorStreak {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let c = cx.call;
        if c.failed {
            self.count += 1;
            let table = self.table.get_or_insert_with(Vec::new);
            match table.iter().position(|e| same_str(e.0.bind(cx.py), c.tool)) {
                Some(i) => table[i].1 += 1,
                None => {
                    if table.len() >= 64 {
                        table.remove(0);
                    }
                    table.reserve_exact(1); // (tables stay small: no slack)
                    table.push((c.tool.clone().unbind(), 1));
                }
            }
        } else {
            self.count = 0;
            if let Some(table) = &mut self.table {
                if let Some(i) = table.iter().position(|e| same_str(e.0.bind(cx.py), c.tool)) {
                    table.remove(i);
                }
                if table.is_empty() {
                    self.table = None;
                }
            }
        }
        let count = self.current();
        Ok(self.check(cx.profile, count, cx.handed.stale_bits))
    }

    /// A failed model turn: one more failure of the run (the global streak only).
    fn on_turn(&mut self, tx: &mut Tx<'_>) -> Option<Crossing> {
        if !tx.turn.error {
            return None;
        }
        self.count += 1;
        let count = self.current();
        self.check(tx.profile, count, tx.handed.stale_bits)
    }

    /// The global streak from zero, the per-tool table dropped.
    fn reset(&mut self) {
        self.count = 0;
        self.gate.reset();
        self.table = None;
    }
}

/// The bottom-k sketch size of text_loop.
pub const SKETCH_SIZE: usize = 64;

/// Jaccard estimate from two bottom-k sketches (exact below k).
pub fn jaccard(a: &[u64], b: &[u64], k: usize) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let mut sa = a.to_vec();
    sa.sort_unstable();
    sa.dedup();
    let mut sb = b.to_vec();
    sb.sort_unstable();
    sb.dedup();
    let mut union: Vec<u64> = sa.iter().chain(sb.iter()).copied().collect();
    union.sort_unstable();
    union.dedup();
    union.truncate(k);
    let both = union
        .iter()
        .filter(|h| sa.binary_search(h).is_ok() && sb.binary_search(h).is_ok())
        .count();
    both as f64 / union.len() as f64
}

/// Consecutive model turns whose normalised text is identical or near-identical.
#[derive(Default)]
pub struct TextLoop {
    pub count: i64,
    pub last_exact: u64,
    pub last_sketch: Vec<u64>,
    pub gate: Gate,
}

impl Watch for TextLoop {
    fn on_turn(&mut self, tx: &mut Tx<'_>) -> Option<Crossing> {
        let (exact, sketch) = tx.turn.digest.as_ref()?;
        let cfg = &tx.profile.text_loop;
        self.count = if self.count != 0
            && (*exact == self.last_exact
                || jaccard(sketch, &self.last_sketch, SKETCH_SIZE) >= cfg.similarity)
        {
            self.count + 1
        } else {
            1
        };
        self.last_exact = *exact;
        self.last_sketch = sketch.clone();
        let count = self.count;
        Crossing::own_gated(
            &mut self.gate,
            Dimension::TextLoop,
            count,
            cfg.th,
            Unit::None,
        )
    }

    fn reset(&mut self) {
        self.count = 0;
        self.gate.reset();
    }
}

/// Visits of a state fingerprint within the last `window` states, or the laps of an A-B-A-B
/// alternation of them.
#[derive(Default)]
pub struct StateRevisit {
    pub ring: Option<Vec<u64>>,
    /// Fingerprint -> visits in the ring, in the order a Python dict keeps them.
    pub visits: Option<Vec<(u64, i64)>>,
    pub seen: i64,
    pub abab_run: i64,
    pub count: i64,
    pub gate: Gate,
}

impl StateRevisit {
    fn observe(&mut self, fingerprint: u64, profile: &ProfileSettings) -> Option<Crossing> {
        let cfg = &profile.state_hash;
        if self.ring.is_none() || self.visits.is_none() {
            self.ring = Some(vec![0; cfg.window]);
            self.visits = Some(Vec::new());
        }
        let (Some(ring), Some(visits)) = (self.ring.as_mut(), self.visits.as_mut()) else {
            return None;
        };
        let window = ring.len() as i64;
        let seen = self.seen;
        if seen >= 2 {
            let two_back = ring[(seen - 2).rem_euclid(window) as usize];
            let one_back = ring[(seen - 1).rem_euclid(window) as usize];
            self.abab_run = if two_back == fingerprint && fingerprint != one_back {
                self.abab_run + 1
            } else {
                0
            };
        }
        let slot = seen.rem_euclid(window) as usize;
        if seen >= window {
            let old = ring[slot];
            if let Some(i) = visits.iter().position(|v| v.0 == old) {
                visits[i].1 -= 1;
                if visits[i].1 == 0 {
                    visits.remove(i);
                }
            }
        }
        ring[slot] = fingerprint;
        match visits.iter().position(|v| v.0 == fingerprint) {
            Some(i) => visits[i].1 += 1,
            None => visits.push((fingerprint, 1)),
        }
        self.seen = seen + 1;
        let laps = if self.abab_run >= 2 {
            (self.abab_run + 2) / 2
        } else {
            0
        };
        self.count = visits.iter().map(|v| v.1).max().unwrap_or(0).max(laps);
        let count = self.count;
        Crossing::own_gated(
            &mut self.gate,
            Dimension::StateHash,
            count,
            cfg.th,
            Unit::None,
        )
    }
}

impl Watch for StateRevisit {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        Ok(match cx.call.state {
            Some(fp) => self.observe(fp, cx.profile),
            None => None,
        })
    }

    fn on_turn(&mut self, tx: &mut Tx<'_>) -> Option<Crossing> {
        tx.turn.state.and_then(|fp| self.observe(fp, tx.profile))
    }

    /// A reset forgets every state.
    fn reset(&mut self) {
        *self = StateRevisit::default();
    }
}

/// The budget's metrics, in the order the Python code checks them.
pub const BUDGET_METRICS: [&str; 6] = [
    "tool_calls",
    "model_turns",
    "tokens",
    "wall_seconds",
    "idle_seconds",
    "call_seconds",
];

/// Per-session limits: tool calls, model turns, tokens, wall time, idle time, call duration.
#[derive(Default)]
pub struct Budget {
    pub tool_calls: i64,
    pub model_turns: i64,
    pub tokens: i64,
    pub first_s: Option<Num>,
    pub last_s: Option<Num>,
    pub gates: Option<[Gate; 6]>,
}

fn ceil(v: f64) -> i64 {
    v.ceil() as i64
}

impl Budget {
    /// Update the counters; the highest crossing (level, metric, value, limit), if any.
    pub fn observe(
        &mut self,
        cfg: &BudgetSettings,
        tool_call: bool,
        tokens: i64,
        start_s: Option<Num>,
        end_s: Option<Num>,
        call_limit: Option<Num>,
    ) -> Option<(Level, &'static str, i64, i64)> {
        if tool_call {
            self.tool_calls += 1;
        } else {
            self.model_turns += 1;
        }
        self.tokens += tokens.max(0);
        let mut idle = None;
        if let Some(start) = start_s {
            if self.first_s.is_none() {
                self.first_s = Some(start);
            }
            if let Some(last) = self.last_s {
                idle = Some(start.f() - last.f());
            }
        }
        if let Some(end) = end_s {
            self.last_s = Some(match self.last_s {
                Some(last) if end.f() <= last.f() => last, // max() keeps the first of equals
                _ => end,
            });
        }
        if !cfg.enabled {
            return None;
        }
        let wall = match (end_s, self.first_s) {
            (Some(e), Some(f)) => Some(e.f() - f.f()),
            _ => None,
        };
        let duration = match (end_s, start_s) {
            (Some(e), Some(s)) if tool_call => Some(e.f() - s.f()),
            _ => None,
        };
        let values = [
            (Some(self.tool_calls as f64), cfg.max_tool_calls),
            (Some(self.model_turns as f64), cfg.max_model_turns),
            (Some(self.tokens as f64), cfg.max_tokens),
            (wall, cfg.max_wall_seconds),
            (idle, cfg.max_idle_seconds),
            (duration, call_limit),
        ];
        let gates = self.gates.get_or_insert_with(Default::default);
        let mut best: Option<(Level, &'static str, i64, i64)> = None;
        for ((metric, gate), (value, limit)) in
            BUDGET_METRICS.iter().zip(gates.iter_mut()).zip(values)
        {
            let (Some(value), Some(limit)) = (value, limit) else {
                continue;
            };
            let limit = limit.f();
            if let Some(level) = gate.check_f(value, limit * cfg.warn_fraction, limit) {
                let better = match best {
                    None => true,
                    Some((b, ..)) => level == Level::Term && b == Level::Warn,
                };
                if better {
                    best = Some((level, metric, ceil(value), ceil(limit)));
                }
            }
        }
        best
    }

    /// The counters from zero and the wall clock from the next call (the time of the last
    /// call stays: idle time).
    pub fn reset(&mut self) {
        self.tool_calls = 0;
        self.model_turns = 0;
        self.tokens = 0;
        self.first_s = None;
        if let Some(gates) = &mut self.gates {
            for g in gates.iter_mut() {
                g.reset();
            }
        }
    }
}

impl Watch for Budget {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.budget;
        let c = cx.call;
        let limit = if cfg.call_seconds.is_empty() {
            None
        } else {
            cfg.call_seconds
                .get(c.tool_text)
                .or_else(|| cfg.call_seconds.get(c.kind.category.as_ref()))
                .copied()
        };
        Ok(self
            .observe(cfg, true, 0, c.start_s, c.end_s, limit)
            .map(budget_crossing))
    }

    fn on_turn(&mut self, tx: &mut Tx<'_>) -> Option<Crossing> {
        let t = tx.turn;
        self.observe(
            &tx.profile.budget,
            false,
            t.tokens,
            t.start_s,
            t.end_s,
            None,
        )
        .map(budget_crossing)
    }

    fn reset(&mut self) {
        Budget::reset(self);
    }
}

fn budget_crossing((level, metric, value, limit): (Level, &'static str, i64, i64)) -> Crossing {
    Crossing {
        dimension: Dimension::Budget,
        rule: "budget",
        level,
        count: value,
        threshold: limit,
        unit: Unit::None,
        text: Some(format!(
            "budget: {} at {value} of a limit of {limit}",
            metric.replace('_', " ")
        )),
    }
}
