//! The rules for loops real agents fall into (`otel_cycleguard/detect/rules.py`,
//! docs/detection.md "Real-world rules"), each a [`Watch`] reporting under one of the
//! dimensions, and the staleness test the failure rules share.

use pyo3::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::args::{Arg, Args, Key};
use crate::categories::{ACTION, EXPLORATION};
use crate::dims::no_new_information;
use crate::pystr::encode_replace;
use crate::settings::Thresholds;
use crate::shell;
use crate::signal::{Dimension, Gate};
use crate::watch::{CallRing, Crossing, Cx, Unit, Watch, FAILED};

/// Whether failures bring new information: bit j of `bits`, the failure j observations ago
/// repeated the output (masked, digits dropped) of one of the last 8 distinct failures.
#[derive(Default)]
pub struct Staleness {
    pub bits: u64,
    pub folds: [u64; 8],
    pub next: u64,
}

impl Staleness {
    /// Shift the bits by one observation; whether it is a stale failure.
    pub fn note(&mut self, failed: bool, fold: u64) -> bool {
        let mut bits = self.bits << 1;
        let mut stale = false;
        if failed {
            stale = self.folds.contains(&fold);
            if !stale {
                let slot = (self.next % 8) as usize;
                self.folds[slot] = fold;
                self.next = (slot as u64 + 1) % 8;
            }
            bits |= stale as u64;
        }
        self.bits = bits;
        stale
    }
}

/// `failure_fold`: the masked output with every ASCII digit dropped, hashed (never 0).
pub fn failure_fold(masked: &[u8]) -> u64 {
    let folded: Vec<u8> = masked
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_digit())
        .collect();
    match xxh3_64(&folded) {
        0 => 1,
        h => h,
    }
}

/// Arguments longer than this are compared exactly by `loose_failure` (the call's key): a
/// whole file written and rewritten is not an `old_str` retried, and every failure pays the
/// pass over what it reads.
const LOOSE_MAX_ARGS: usize = 2048;

/// 1 for the bytes `loose_failure` keeps, 0 for ASCII whitespace (`u8::is_ascii_whitespace`).
const KEPT: [u8; 256] = {
    let mut table = [1u8; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_whitespace() {
            table[b] = 0;
        }
        b += 1;
    }
    table
};

/// Appends `bytes` without their whitespace: every byte is written and the end moves past
/// the kept ones only, so the loop has no branch on the data.
fn push_kept(out: &mut Vec<u8>, bytes: &[u8]) {
    let start = out.len();
    out.resize(start + bytes.len(), 0);
    let mut end = start;
    for &b in bytes {
        out[end] = b; // end <= start + (bytes read so far) < out.len()
        end += KEPT[b as usize] as usize;
    }
    out.truncate(end);
}

/// What `recurring_failure` compares of a failed call, whitespace aside: the tool, its
/// canonical arguments without the spaces, tabs and newlines in them (in JSON strings also
/// the `\n`, `\t` and `\r` escapes), and the masked output without its whitespace when
/// `head_whole` says the masked head holds all of it. A longer output is compared exactly,
/// by `exact_result`, and arguments longer than `LOOSE_MAX_ARGS` by `exact_key`. Never 0.
///
/// Why: an edit whose `old_str` does not match the file (tabs in the file, spaces in the
/// call) is retried with four, then eight, then two spaces, and fails each time with an error
/// that quotes it back. Those are one attempt failing one way; what changes is whitespace the
/// tool never matched. Whitespace that does change something changes the error too.
pub fn loose_failure(
    tool_hash: u64,
    exact_key: u64,
    canonical: &[u8],
    head: &[u8],
    head_whole: bool,
    exact_result: u64,
) -> u64 {
    let mut text = crate::normalize::take_buffer(); // a failed call's scratch, reused
    text.reserve(canonical.len().min(LOOSE_MAX_ARGS) + head.len() + 17);
    text.extend_from_slice(&tool_hash.to_le_bytes());
    if canonical.len() > LOOSE_MAX_ARGS {
        text.extend_from_slice(&exact_key.to_le_bytes());
    } else {
        let mut at = 0;
        loop {
            let slash = crate::simd::find_byte(canonical, at, b'\\');
            push_kept(&mut text, &canonical[at..slash]);
            if slash + 1 >= canonical.len() {
                text.extend_from_slice(&canonical[slash.min(canonical.len())..]);
                break;
            }
            let next = canonical[slash + 1];
            if !matches!(next, b'n' | b't' | b'r') {
                text.extend_from_slice(&[b'\\', next]); // `\\`, `\"`, `\u...`: kept as written
            }
            at = slash + 2;
        }
    }
    text.push(0xFF); // never in UTF-8: arguments and output cannot run into each other
    if head_whole {
        push_kept(&mut text, head);
    } else {
        text.extend_from_slice(&exact_result.to_le_bytes());
    }
    let hash = xxh3_64(&text).max(1);
    crate::normalize::give_buffer(text);
    hash
}

// Replay bits of a ring info word (bit 0 is FAILED): whether the call can still be replayed,
// the distance it replayed at, whether it was a look with a new answer, the laps of its cycle.
const LIVE: u64 = 2;
const GAP_SHIFT: u64 = 2;
const GAP_MASK: u64 = 0x3F;
pub const NEWS: u64 = 1 << 8;
pub const LAPS_SHIFT: u64 = 9;
/// Where the laps stood before `NEWS` took bit 8: the layout of saved session states.
pub const SAVED_LAPS_SHIFT: u64 = 8;

/// An info word in the saved layout (no `NEWS` bit, laps from bit 8), and back. A state
/// saved before the bit existed loads with no call marked as news, which only means a lap
/// may count that news would have held.
pub fn info_to_saved(info: u64) -> u64 {
    (info & 0xFF) | ((info >> LAPS_SHIFT) << SAVED_LAPS_SHIFT)
}

pub fn info_from_saved(saved: u64) -> u64 {
    (saved & 0xFF) | ((saved >> SAVED_LAPS_SHIFT) << LAPS_SHIFT)
}

/// How many distinct answers of looks a session remembers for `replay_cycle`.
pub const ANSWERS_KEPT: usize = 16;

/// How many distinct calls with their answers a session remembers for `nothing_new`: enough
/// for an 80-step game whose agent goes back to the dead ends of its first steps (measured on
/// the labelled runs: 32 forgot some of them, 64 remembered as much as an unbounded memory).
pub const CALLS_KEPT: usize = 64;

/// The last distinct answers (hashes folded to 32 bits, never 0), oldest replaced first, at
/// most `kept` of them (each user passes its own constant). For `replay_cycle`, the masked
/// results of successful looks: "new information" is an answer not among them (an answer
/// that differs from the previous lap's but was seen a few laps ago is a loop going round, not
/// progress, and ten calls of the ring are too short a memory to tell). For `nothing_new`,
/// calls with their answers.
#[derive(Default)]
pub struct AnswerMemory {
    pub answers: Vec<u32>,
    pub next: u32,
}

impl AnswerMemory {
    /// Whether `answer` is among the answers: eight at a time without a branch inside a block,
    /// which the compiler turns into vector compares (a full memory of 64 is eight blocks).
    fn holds(&self, answer: u32) -> bool {
        let mut blocks = self.answers.chunks_exact(8);
        let found = blocks
            .by_ref()
            .any(|b| b.iter().fold(false, |hit, &a| hit | (a == answer)));
        found || blocks.remainder().contains(&answer)
    }

    /// Whether `value` is new; it is remembered either way.
    pub fn learn(&mut self, value: u64, kept: usize) -> bool {
        let folded = (value ^ (value >> 32)) as u32;
        let answer = if folded == 0 { 1 } else { folded };
        if self.holds(answer) {
            return false;
        }
        if self.answers.len() < kept {
            if self.answers.capacity() == 0 {
                self.answers.reserve_exact(kept.min(16)); // one allocation for most sessions
            }
            self.answers.push(answer);
        } else {
            self.answers[self.next as usize] = answer;
            self.next = (self.next + 1) % kept as u32;
        }
        true
    }
}

/// What the last lap of a running cycle was: every call came back at the cycle's distance;
/// the calls that did not all failed (failed attempts bring nothing new, so the lap counts as
/// replayed: `term`); some changed call worked (`partial_term`); or a changed call was a look
/// whose answer the session had not seen (news: the lap adds no lap to the count).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lap {
    Replayed,
    Failed,
    Partial,
    News,
}

impl Lap {
    fn words(self) -> &'static str {
        match self {
            Lap::Replayed => "the whole lap was replayed with the same results",
            Lap::Failed => "the other calls of the lap changed and every one of them failed",
            Lap::Partial => "the other calls of the lap changed, this one's result never did",
            Lap::News => "a changed call of the lap answered something new",
        }
    }
}

/// `replay_cycle` (under tool_pattern): a call (same tool, arguments and masked result)
/// coming back at a constant distance of 2..max_gap calls; its state is the ring's replay
/// bits and the answers of looks seen so far.
#[derive(Default)]
pub struct ReplayCycle {
    pub gate: Gate,
    pub seen: AnswerMemory,
}

impl ReplayCycle {
    /// (laps, the cycle's length, what the last lap was) after the call at `step` (in the
    /// ring).
    fn replay(
        ring: &mut CallRing,
        step: i64,
        key: u64,
        result: u64,
        max_gap: usize,
    ) -> (i64, usize, Lap) {
        let span = (max_gap as i64).min(step);
        let (mut gap, mut laps) = (0u64, 1u64);
        for back in 1..=span {
            let at = ring.slot(step - back);
            let info = ring.slots[at].info;
            if info & LIVE != 0 && ring.slots[at].key == key && ring.slots[at].result == result {
                if back >= 2 {
                    let same_gap = back as u64 == (info >> GAP_SHIFT) & GAP_MASK;
                    gap = back as u64;
                    laps = if same_gap {
                        (info >> LAPS_SHIFT) + 1
                    } else {
                        2
                    };
                }
                ring.slots[at].info = info & !LIVE; // replayed: this step carries the cycle on
                break;
            }
        }
        let at = ring.slot(step);
        ring.slots[at].info = (ring.slots[at].info & (FAILED | NEWS))
            | LIVE
            | (gap << GAP_SHIFT)
            | (laps << LAPS_SHIFT);
        let (best, unit) = ReplayCycle::longest(ring, step, span, max_gap);
        if unit == 0 {
            return (best as i64, 0, Lap::Partial);
        }
        let (mut lap, mut news, mut failures) = (Lap::Replayed, false, false);
        for j in 0..unit as i64 {
            let info = ring.slots[ring.slot(step - j)].info;
            failures |= info & FAILED != 0;
            if (info >> GAP_SHIFT) & GAP_MASK != unit {
                news |= info & NEWS != 0;
                if info & FAILED == 0 {
                    lap = Lap::Partial;
                } else if lap == Lap::Replayed {
                    lap = Lap::Failed;
                }
            }
        }
        // A lap that brought new information is not a repetition: the call that came back in
        // it adds no lap to its count. Each call of the lap is the current one once while the
        // news is in the window, so each is held once. Only from the third lap on, when the
        // whole window lies past the cycle's first lap (whose answers are all new), and only
        // in a lap where nothing failed: a lap that fails again has not got past its obstacle,
        // whatever else it read on the way.
        if news && !failures && gap == unit && ring.slots[at].info >> LAPS_SHIFT >= 3 {
            ring.slots[at].info -= 1 << LAPS_SHIFT;
            let (best, unit) = ReplayCycle::longest(ring, step, span, max_gap);
            return (best as i64, unit as usize, Lap::News);
        }
        (best as i64, unit as usize, lap)
    }

    /// The running cycle with the most laps among the calls of the last `span` steps: (laps,
    /// its length). Ties go to the call whose step is smallest modulo max_gap + 1.
    fn longest(ring: &CallRing, step: i64, span: i64, max_gap: usize) -> (u64, u64) {
        let size = max_gap as i64 + 1;
        let (mut best, mut unit, mut best_slot) = (0u64, 0u64, size);
        // `(step - back) % size`, stepped down with `back` rather than divided each time
        let mut slot = step.rem_euclid(size);
        for back in 0..=span {
            if back > 0 {
                slot = if slot == 0 { size - 1 } else { slot - 1 };
            }
            let info = ring.slots[ring.slot(step - back)].info;
            if info & LIVE != 0 {
                let slot_gap = (info >> GAP_SHIFT) & GAP_MASK;
                if slot_gap >= 2 && back as u64 <= slot_gap {
                    let slot_laps = info >> LAPS_SHIFT;
                    if slot_laps > best || (slot_laps == best && slot < best_slot) {
                        (best, unit, best_slot) = (slot_laps, slot_gap, slot);
                    }
                }
            }
        }
        (best, unit)
    }

    /// A poll call takes no part; the full-lap test reads at its place the gap of the call
    /// `max_gap` steps earlier.
    fn skip(ring: &mut CallRing, step: i64, max_gap: usize) {
        if step < max_gap as i64 {
            return;
        }
        let earlier = (ring.slots[ring.slot(step - max_gap as i64)].info >> GAP_SHIFT) & GAP_MASK;
        let at = ring.slot(step);
        ring.slots[at].info |= earlier << GAP_SHIFT;
    }

    /// No call before a reset can be replayed.
    pub fn forget(ring: &mut CallRing) {
        for slot in ring.slots.iter_mut() {
            slot.info &= FAILED;
        }
    }
}

impl Watch for ReplayCycle {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.replay_cycle;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        if !c.failed && c.kind.is_look() && self.seen.learn(c.result, ANSWERS_KEPT) {
            let at = cx.ring.slot(c.step);
            cx.ring.slots[at].info |= NEWS;
        }
        let (count, gap, lap) = if c.kind.is_poll {
            ReplayCycle::skip(cx.ring, c.step, cfg.max_gap);
            (0, 0, Lap::Partial)
        } else {
            ReplayCycle::replay(cx.ring, c.step, c.key, c.result, cfg.max_gap)
        };
        let term = if lap == Lap::Partial {
            cfg.partial_term
        } else {
            cfg.term
        };
        let Some(level) = self.gate.check(count, cfg.warn.min(term), term) else {
            return Ok(None);
        };
        let (unit, names) = if gap != 0 {
            (Unit::Recent(gap), cx.recent_text(gap)?)
        } else {
            (Unit::Tool(1), vec![c.tool_text.to_owned()])
        };
        let what = lap.words();
        let th = Thresholds {
            warn: cfg.warn,
            term,
        };
        Ok(Some(Crossing::rule(
            "replay_cycle",
            Dimension::ToolPattern,
            level,
            count,
            th,
            unit,
            format!(
                "replay_cycle: a call came back with the same arguments and the same result every {gap} calls, {count} laps of {} ({what})",
                names.join(" -> ")
            ),
        )))
    }

    fn reset(&mut self) {
        self.gate.reset();
    }
}

/// `near_duplicate_edit` (under identical_call): consecutive calls of an edit-like tool
/// whose arguments are equal once every digit is dropped, the same edit again (period 1) or
/// two edits in turn (period 2, counted in laps).
#[derive(Default)]
pub struct NearDuplicateEdit {
    /// The last call's folded key, if an edit; the edit before it.
    pub key: u64,
    pub key2: u64,
    pub count: i64,
    /// Bit 0: the last edit was long; bit 1: the one before.
    pub long_bits: u64,
    /// Edits equal to the one two back.
    pub run2: i64,
    pub gate: Gate,
}

impl Watch for NearDuplicateEdit {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.near_duplicate_edit;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let (count, period) = if !c.member.near_duplicate {
            self.count = 0;
            self.run2 = 0;
            self.key = 0;
            self.key2 = 0;
            self.long_bits = 0;
            (0, 1)
        } else {
            let long = c.canonical.len() >= cfg.min_chars;
            let mut buf = crate::normalize::take_buffer();
            buf.extend_from_slice(&encode_replace(c.tool_text));
            buf.push(0);
            // the canonical arguments without their digits: the runs between digit runs copied
            let t = c.canonical;
            let mut from = 0;
            while from < t.len() {
                let digit = crate::simd::find_digit(t, from);
                crate::copy::copy_run(&mut buf, &t[from..digit]);
                from = digit + 1;
                while from < t.len() && t[from].is_ascii_digit() {
                    from += 1;
                }
            }
            let folded = xxh3_64(&buf);
            crate::normalize::give_buffer(buf);
            let (previous, before) = (self.key, self.key2);
            let count = if long {
                if self.count != 0 && folded == previous {
                    self.count + 1
                } else {
                    1
                }
            } else {
                0
            };
            let run2 = if before != 0 && folded == before && folded != previous {
                self.run2 + 1
            } else {
                0
            };
            let lap_is_long = long || self.long_bits & 1 != 0;
            self.key2 = previous;
            self.key = folded;
            self.long_bits = ((self.long_bits << 1) | long as u64) & 3;
            self.count = count;
            self.run2 = run2;
            let laps = if run2 != 0 && lap_is_long {
                (run2 + 2) / 2
            } else {
                0
            };
            if laps > count {
                (laps, 2)
            } else {
                (count, 1)
            }
        };
        Ok(Crossing::rule_gated(
            &mut self.gate,
            "near_duplicate_edit",
            Dimension::IdenticalCall,
            count,
            cfg.th,
            Unit::Tool(period),
            || {
                let what = if period == 1 {
                    format!("re-applied the same change {count} times in a row")
                } else {
                    format!("re-applied the same two changes in turn, {count} laps")
                };
                format!(
                    "near_duplicate_edit: {} {what} (arguments equal except for numbers such as the line range)",
                    c.tool_text
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.count = 0;
        self.run2 = 0;
        self.gate.reset();
    }
}

/// `repeated_failure` (under identical_call): the same call failing with the same masked
/// output, consecutively. The output is compared as `identical_call` compares it: a number
/// that moves between two failures of one call (`1 of 3 replicas ready`, then `2 of 3`) may be
/// the world moving on, so only what the masks remove (times, ids, long numbers) is set aside.
#[derive(Default)]
pub struct RepeatedFailure {
    pub gate: Gate,
}

impl Watch for RepeatedFailure {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.repeated_failure;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let count = if c.failed && !c.kind.is_poll {
            cx.handed.identical_count
        } else {
            0
        };
        Ok(Crossing::rule_gated(
            &mut self.gate,
            "repeated_failure",
            Dimension::IdenticalCall,
            count,
            cfg.th,
            Unit::Tool(1),
            || {
                format!(
                    "repeated_failure: {} failed {count} times in a row with the same arguments and the same (masked) error",
                    c.tool_text
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.gate.reset();
    }
}

/// `recurrences`: record this step's failing value (0: none) in the `(step, value)` list of
/// the failures among the last `window` steps; the most occurrences of any value (0 when
/// this call did not fail).
pub fn recurrences(
    table: &mut Option<Vec<(i64, u64)>>,
    step: i64,
    value: u64,
    window: usize,
) -> i64 {
    if let Some(t) = table {
        let first = t.iter().take_while(|e| e.0 <= step - window as i64).count();
        if first > 0 {
            t.drain(..first);
            if t.is_empty() {
                *table = None;
            }
        }
    }
    if value == 0 {
        return 0;
    }
    let t = table.get_or_insert_with(Vec::new);
    t.reserve_exact(1); // (windows hold a few entries: no slack)
    t.push((step, value));
    let mut best = 0;
    for (i, e) in t.iter().enumerate() {
        if t[..i].iter().any(|x| x.1 == e.1) {
            continue;
        }
        best = best.max(t.iter().filter(|x| x.1 == e.1).count() as i64);
    }
    best
}

/// The crossing of a rule counting recurrences within its window (`recurrences`: 0 when
/// this call recorded nothing). Silent, its gate untouched, unless the call recurred more
/// often than identical_call counts (consecutive recurrences are identical_call's to report).
fn windowed_crossing(
    gate: &mut Gate,
    rule: &'static str,
    dimension: Dimension,
    count: i64,
    identical_count: i64,
    th: Thresholds,
    text: impl FnOnce() -> String,
) -> Option<Crossing> {
    if count <= identical_count {
        return None;
    }
    Crossing::rule_gated(gate, rule, dimension, count, th, Unit::Tool(1), text)
}

/// `recurring_failure` (under identical_call): the same failing call recurring within the
/// last `window` calls, whatever lies between; silent while the recurrences are consecutive.
#[derive(Default)]
pub struct RecurringFailure {
    pub table: Option<Vec<(i64, u64)>>,
    pub gate: Gate,
}

impl Watch for RecurringFailure {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.recurring_failure;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let pair = if c.failed && !c.kind.is_poll {
            c.loose_failure
        } else {
            0
        };
        let count = if pair != 0 || self.table.is_some() {
            recurrences(&mut self.table, c.step, pair, cfg.window)
        } else {
            0
        };
        Ok(windowed_crossing(
            &mut self.gate,
            "recurring_failure",
            Dimension::IdenticalCall,
            count,
            cx.handed.identical_count,
            cfg.th,
            || {
                format!(
                    "recurring_failure: a call failed {count} times with the same arguments and the same (masked) error, whitespace aside, within the last {} calls (what was done in between changed nothing)",
                    cfg.window
                )
            },
        ))
    }

    /// The gate from zero and the recent failures forgotten.
    fn reset(&mut self) {
        self.gate.reset();
        self.table = None;
    }
}

/// `failure_density` (under error_streak): at least `term` of the last `window` calls failed
/// since the last progress, while the calls that "work" in between are trivial.
#[derive(Default)]
pub struct FailureDensity {
    /// Bit j: the call j ago failed.
    pub bits: u64,
    /// Calls counted since the last progress (at most the window).
    pub calls: i64,
    /// Consecutive failures at the end.
    pub run: i64,
    pub gate: Gate,
}

impl Watch for FailureDensity {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.failure_density;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let is_exec = c.kind.canonical == "exec";
        // a command that changed the environment (an install, a build step) is progress too
        let moved = cx.handed.progress
            || (!c.failed
                && is_exec
                && self.bits != 0
                && cfg.progress_commands
                // (changes_environment never raises: a reading that fails is no change)
                && c.args
                    .command_text(cx.py)
                    .ok()
                    .flatten()
                    .is_some_and(|t| !t.is_empty() && shell::changes_environment(&t)));
        let (mut count, seen) = if moved {
            self.bits = 0;
            self.calls = 0;
            self.run = 0;
            (0, 0)
        } else {
            self.run = if c.failed { self.run + 1 } else { 0 };
            let mask = if cfg.window >= 64 {
                u64::MAX
            } else {
                (1u64 << cfg.window) - 1
            };
            self.bits = ((self.bits << 1) | c.failed as u64) & mask;
            self.calls = (self.calls + 1).min(cfg.window as i64);
            (self.bits.count_ones() as i64, self.calls)
        };
        // failures all consecutive are the error streak's to report
        let covered = count <= self.run;
        if !covered
            && count >= cfg.th.term
            && !no_new_information(cx.handed.stale_bits, count, seen)
        {
            count = cfg.th.term - 1;
        }
        if covered {
            return Ok(None);
        }
        let unit = if seen != 0 {
            Unit::Distinct(seen as usize)
        } else {
            Unit::Tool(1)
        };
        Ok(Crossing::rule_gated(
            &mut self.gate,
            "failure_density",
            Dimension::ErrorStreak,
            count,
            cfg.th,
            unit,
            || {
                let progress = if cfg.progress_tools.is_empty() {
                    "progress".to_owned()
                } else {
                    cfg.progress_tools.join("/")
                };
                format!(
                    "failure_density: {count} of the last {seen} calls failed, with no successful {progress} call in between and the failures repeating earlier ones (the run keeps failing; the calls that worked in between were no progress)"
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.bits = 0;
        self.calls = 0;
        self.run = 0;
        self.gate.reset();
    }
}

/// `_action_hash`: what kind of action a call is (its tool; for a shell, the command and its
/// first argument).
fn action_hash<'py>(
    py: Python<'py>,
    tool: &str,
    canonical: &str,
    args: &Args<'_, 'py>,
) -> PyResult<u64> {
    let mut name = tool.to_owned();
    if canonical == "exec" {
        if let Some(text) = args.command_text(py)? {
            for w in shell::command_words(&text).into_iter().take(2) {
                name.push('\0');
                name.push_str(w);
            }
        }
    }
    Ok(match xxh3_64(&encode_replace(&name)) {
        0 => 1,
        h => h,
    })
}

/// `same_error` (under error_streak): one masked error coming back within the last `window`
/// calls since the last progress, from calls that keep changing.
#[derive(Default)]
pub struct SameError {
    pub table: Option<Vec<(i64, u64)>>,
    /// What the last failure recorded did (`_action_hash`).
    pub failed_action: u64,
    pub gate: Gate,
}

impl Watch for SameError {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.same_error;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let output = if c.failed && !c.kind.is_poll {
            if c.error != 0 {
                c.error
            } else {
                1
            }
        } else {
            0
        };
        let count = if cx.handed.progress {
            self.table = None; // the failures before the progress are forgotten
            0
        } else if output != 0 || self.table.is_some() {
            if output != 0 {
                self.failed_action = action_hash(cx.py, c.tool_text, &c.kind.canonical, c.args)?;
            } else if let Some(t) = &mut self.table {
                // the same action failed just before and works now: a slip this retry corrected
                if t.last().is_some_and(|e| e.0 == c.step - 1)
                    && !c.failed
                    && self.failed_action
                        == action_hash(cx.py, c.tool_text, &c.kind.canonical, c.args)?
                {
                    t.pop();
                    if t.is_empty() {
                        self.table = None;
                    }
                }
            }
            recurrences(&mut self.table, c.step, output, cfg.window)
        } else {
            0
        };
        Ok(windowed_crossing(
            &mut self.gate,
            "same_error",
            Dimension::ErrorStreak,
            count,
            cx.handed.identical_count,
            cfg.th,
            || {
                format!(
                    "same_error: the same (masked) error came back {count} times within the last {} calls with no successful edit in between (one wall: what the agent changed around it did not help)",
                    cfg.window
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.gate.reset();
        self.table = None;
    }
}

/// `failed_lookups` (under error_streak): look-ups of tools known to read that fail or find
/// nothing, in a row.
#[derive(Default)]
pub struct FailedLookups {
    pub run: i64,
    pub gate: Gate,
}

impl Watch for FailedLookups {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.failed_lookups;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let lookup = c.failed && !c.kind.is_poll && c.kind.known && c.kind.category == EXPLORATION;
        self.run = if lookup { self.run + 1 } else { 0 };
        let run = self.run;
        Ok(Crossing::rule_gated(
            &mut self.gate,
            "failed_lookups",
            Dimension::ErrorStreak,
            run,
            cfg.th,
            Unit::Distinct(run as usize),
            || {
                format!(
                    "failed_lookups: {run} look-ups in a row failed or found nothing (each query changed, none got an answer)"
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.run = 0;
        self.gate.reset();
    }
}

static PATH_KEYS: [Key; 6] = [
    Key::new("path"),
    Key::new("file"),
    Key::new("file_path"),
    Key::new("filename"),
    Key::new("file_name"),
    Key::new("target_file"),
];

/// `_edit_target`: a hash of the file an edit names, 0 when it names none.
fn edit_target<'py>(py: Python<'py>, args: &Args<'_, 'py>) -> PyResult<u64> {
    let Some(map) = args.map(py)? else {
        return Ok(0);
    };
    for key in &PATH_KEYS {
        if let Arg::Str(value) = map.get(key)? {
            if !value.is_empty() {
                return Ok(match xxh3_64(&encode_replace(&value)) {
                    0 => 1,
                    h => h,
                });
            }
        }
    }
    Ok(0)
}

/// `edit_without_effect` (under tool_pattern): rounds in a row of [edits, the same check
/// command] whose masked output did not change.
#[derive(Default)]
pub struct EditWithoutEffect {
    pub check_key: u64,
    pub check_result: u64,
    pub rounds: i64,
    pub edits_since: i64,
    pub edit_target: u64,
    pub lap_target: u64,
    pub gate: Gate,
}

impl EditWithoutEffect {
    fn round<'py>(
        &mut self,
        py: Python<'py>,
        is_edit: bool,
        is_check: bool,
        key: u64,
        result: u64,
        args: &Args<'_, 'py>,
    ) -> PyResult<i64> {
        if is_edit {
            self.edits_since = (self.edits_since + 1).min(1 << 16);
            let target = edit_target(py, args)?;
            if target != 0 {
                self.edit_target = target;
            }
            return Ok(self.rounds);
        }
        if !is_check || self.edits_since == 0 {
            return Ok(self.rounds);
        }
        self.edits_since = 0;
        let target = self.edit_target;
        let rounds = if key == self.check_key {
            let unchanged = result == self.check_result && target == self.lap_target;
            if unchanged {
                (if self.rounds != 0 { self.rounds } else { 1 }) + 1
            } else {
                0
            }
        } else {
            self.check_key = key;
            0
        };
        self.check_result = result;
        self.lap_target = target;
        self.rounds = rounds;
        Ok(rounds)
    }
}

impl Watch for EditWithoutEffect {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.edit_without_effect;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let canonical = c.kind.canonical.as_ref();
        let is_edit = cx.handed.shell_edit || c.member.edit;
        let is_check = canonical == "exec" && c.kind.category == ACTION && !c.kind.is_poll;
        let rounds = self.round(cx.py, is_edit, is_check, c.key, c.result, c.args)?;
        Ok(Crossing::rule_gated(
            &mut self.gate,
            "edit_without_effect",
            Dimension::ToolPattern,
            rounds,
            cfg.th,
            Unit::Tool(1),
            || {
                format!(
                    "edit_without_effect: edited, then ran the same check {rounds} times in a row, and its (masked) output never changed (the edits changed nothing the agent can observe)"
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.rounds = 0;
        self.check_key = 0;
        self.edits_since = 0;
        self.gate.reset();
    }
}

/// `nothing_new` (under tool_pattern): calls in a row that each repeat an earlier call of the
/// session with the answer it got then. No lap needs to be constant (`replay_cycle`'s case):
/// a re-walk of known rooms in another order, the same diagnostics swept again, is a run of
/// calls none of which tells the agent anything. Exact repeats of call and answer are evidence
/// whatever the tool is, so unknown tools count like known ones.
#[derive(Default)]
pub struct NothingNew {
    /// The session's last `CALLS_KEPT` distinct calls with their answers.
    pub seen: AnswerMemory,
    /// The last call's pair (0 before the first).
    pub last: u64,
    pub run: i64,
    pub gate: Gate,
}

impl NothingNew {
    /// The run after one call: one more when it repeated a call and answer seen before, 0 when
    /// it brought something new. A poll leaves it as it is (waiting is `poll_no_progress`'s),
    /// and so does the previous call again: a repeat in a row is `identical_call`'s loop, and
    /// one loop is one dimension's to escalate.
    fn note(&mut self, is_poll: bool, key: u64, result: u64) -> i64 {
        if is_poll {
            return self.run;
        }
        // the call key and the result hash, mixed so that neither alone decides
        let pair = key ^ result.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let pair = pair.max(1);
        if pair == self.last {
            return self.run;
        }
        self.last = pair;
        self.run = if self.seen.learn(pair, CALLS_KEPT) {
            0
        } else {
            (self.run + 1).min(1 << 16)
        };
        self.run
    }
}

impl Watch for NothingNew {
    fn on_call(&mut self, cx: &mut Cx<'_, '_, '_>) -> PyResult<Option<Crossing>> {
        let cfg = &cx.profile.nothing_new;
        if !cfg.enabled {
            return Ok(None);
        }
        let c = cx.call;
        let run = self.note(c.kind.is_poll, c.key, c.result);
        Ok(Crossing::rule_gated(
            &mut self.gate,
            "nothing_new",
            Dimension::ToolPattern,
            run,
            cfg.th,
            Unit::Recent(run.max(1) as usize), // as many of them as evidence shows
            || {
                format!(
                    "nothing_new: {run} calls in a row each repeated an earlier call of the session and got the answer it got then (last: {})",
                    c.tool_text
                )
            },
        ))
    }

    fn reset(&mut self) {
        self.run = 0;
        self.gate.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::{loose_failure, AnswerMemory, NothingNew, CALLS_KEPT};

    const TOOL: u64 = 0x5eed;

    fn loose(args: &str, out: &str) -> u64 {
        loose_failure(TOOL, 9, args.as_bytes(), out.as_bytes(), true, 7)
    }

    #[test]
    fn an_old_str_retried_with_other_indentation_is_one_failure() {
        let error = |old: &str| {
            format!("No replacement was performed, old_str `{old}` did not appear verbatim in /w/legacy.py.")
        };
        let four = r#"{"command":"str_replace","old_str":"    if not port:\n        port = DEFAULT_PORT","path":"/w/legacy.py"}"#;
        let eight = r#"{"command":"str_replace","old_str":"        if not port:\n            port = DEFAULT_PORT","path":"/w/legacy.py"}"#;
        let crlf = r#"{"command":"str_replace","old_str":"    if not port:\r\n\tport = DEFAULT_PORT","path":"/w/legacy.py"}"#;
        let a = loose(
            four,
            &error("    if not port:\n        port = DEFAULT_PORT"),
        );
        assert_eq!(
            a,
            loose(
                eight,
                &error("        if not port:\n            port = DEFAULT_PORT")
            )
        );
        assert_eq!(
            a,
            loose(crlf, &error("    if not port:\r\n\tport = DEFAULT_PORT"))
        );
    }

    #[test]
    fn other_words_other_tools_and_other_errors_stay_apart() {
        let args = r#"{"cmd":"make test"}"#;
        let a = loose(args, "error: no rule");
        assert_ne!(a, loose(r#"{"cmd":"make check"}"#, "error: no rule"));
        assert_ne!(a, loose(args, "error: no target"));
        assert_ne!(
            a,
            loose_failure(TOOL + 1, 9, args.as_bytes(), b"error: no rule", true, 7)
        );
        // arguments and output do not run into each other
        assert_ne!(loose(r#"{"a":"x"}"#, "y"), loose(r#"{"a":"xy"}"#, ""));
    }

    #[test]
    fn an_escaped_backslash_before_n_is_text_not_a_newline() {
        // `\\n` in JSON is a backslash and an `n`: kept; `\n` is a newline: dropped
        assert_ne!(loose(r#"{"s":"a\\nb"}"#, "e"), loose(r#"{"s":"ab"}"#, "e"));
        assert_eq!(loose(r#"{"s":"a\nb"}"#, "e"), loose(r#"{"s":"ab"}"#, "e"));
    }

    /// The rule read plainly: a byte at a time, escapes as JSON writes them.
    fn reference(canonical: &[u8], head: &[u8]) -> Vec<u8> {
        let mut text = TOOL.to_le_bytes().to_vec();
        let mut i = 0;
        while i < canonical.len() {
            let b = canonical[i];
            if b == b'\\' && i + 1 < canonical.len() {
                if !matches!(canonical[i + 1], b'n' | b't' | b'r') {
                    text.extend_from_slice(&canonical[i..i + 2]);
                }
                i += 2;
                continue;
            }
            if !b.is_ascii_whitespace() {
                text.push(b);
            }
            i += 1;
        }
        text.push(0xFF);
        text.extend(head.iter().copied().filter(|b| !b.is_ascii_whitespace()));
        text
    }

    #[test]
    fn the_fast_pass_keeps_exactly_what_the_plain_reading_keeps() {
        use crate::testing::xorshift as next;
        let alphabet: &[u8] = b" \t\n\r\x0c\\ntru\"ab{}:,";
        let mut y: u64 = 0x0DDB_A11C_0FFE_E123;
        let text = |y: &mut u64| -> Vec<u8> {
            let n = next(y) % 40;
            (0..n)
                .map(|_| alphabet[(next(y) % alphabet.len() as u64) as usize])
                .collect()
        };
        for _ in 0..100_000 {
            let (args, head) = (text(&mut y), text(&mut y));
            assert_eq!(
                loose_failure(TOOL, 9, &args, &head, true, 7),
                xxhash_rust::xxh3::xxh3_64(&reference(&args, &head)).max(1),
                "{:?} / {:?}",
                String::from_utf8_lossy(&args),
                String::from_utf8_lossy(&head)
            );
        }
    }

    #[test]
    fn long_arguments_are_compared_exactly() {
        let spaced = format!(r#"{{"content":"{}"}}"#, "a b ".repeat(600));
        let other = format!(r#"{{"content":"{}"}}"#, "x y ".repeat(600));
        let loose = |args: &str, key: u64| loose_failure(TOOL, key, args.as_bytes(), b"e", true, 7);
        // past the bound the arguments are not read: the keys decide
        assert_ne!(loose(&spaced, 1), loose(&other, 2));
        assert_eq!(loose(&spaced, 1), loose(&other, 1));
    }

    #[test]
    fn an_output_longer_than_the_head_is_compared_exactly() {
        let args = br#"{"cmd":"pytest"}"#;
        let same_head = b"E   assert x";
        assert_ne!(
            loose_failure(TOOL, 9, args, same_head, false, 1),
            loose_failure(TOOL, 9, args, same_head, false, 2)
        );
        assert_eq!(
            loose_failure(TOOL, 9, args, b"anything", false, 3),
            loose_failure(TOOL, 9, br#"{"cmd": "pytest"}"#, b"else", false, 3)
        );
        assert_ne!(loose_failure(TOOL, 9, args, b"", false, 0), 0);
    }

    #[test]
    fn answer_memory_forgets_the_oldest_beyond_what_it_keeps() {
        let mut m = AnswerMemory::default();
        for v in 1..=(CALLS_KEPT as u64 + 1) {
            assert!(m.learn(v << 32, CALLS_KEPT), "{v} is new");
        }
        assert_eq!(m.answers.len(), CALLS_KEPT);
        assert!(
            m.learn(1 << 32, CALLS_KEPT),
            "the first was replaced by the last"
        );
        assert!(
            !m.learn((CALLS_KEPT as u64 + 1) << 32, CALLS_KEPT),
            "the last is kept"
        );
    }

    #[test]
    fn answer_memory_finds_a_value_at_every_place_and_length() {
        for len in 0..=CALLS_KEPT {
            let m = AnswerMemory {
                answers: (1..=len as u32).collect(),
                next: 0,
            };
            for v in 0..=len as u32 + 1 {
                assert_eq!(m.holds(v), m.answers.contains(&v), "{v} in {len}");
            }
        }
    }

    #[test]
    fn nothing_new_counts_known_calls_in_a_row_and_polls_leave_it() {
        let mut n = NothingNew::default();
        assert_eq!(n.note(false, 1, 10), 0); // new
        assert_eq!(n.note(false, 2, 20), 0); // new
        assert_eq!(n.note(false, 1, 10), 1);
        assert_eq!(n.note(true, 9, 90), 1); // a poll: neither
        assert_eq!(n.note(false, 2, 20), 2);
        assert_eq!(n.note(false, 2, 20), 2); // the previous call again: identical_call's
        assert_eq!(n.note(false, 1, 11), 0); // the same call, another answer: news
        assert_eq!(n.note(false, 2, 10), 0); // another call, an answer seen elsewhere: news
        assert_eq!(n.note(false, 1, 10), 1);
    }
}
