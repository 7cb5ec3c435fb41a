//! What the detector emits (`otel_cycleguard/detect/signals.py`): levels, the eight
//! dimensions in their escalation order, cycle classes, and the gate that turns counts into
//! once-per-crossing WARN/TERM levels.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dimension {
    IdenticalCall = 0,
    CategoryStreak = 1,
    ToolPattern = 2,
    PollNoProgress = 3,
    ErrorStreak = 4,
    TextLoop = 5,
    StateHash = 6,
    Budget = 7,
}

impl Dimension {
    pub const ALL: [Dimension; 8] = [
        Dimension::IdenticalCall,
        Dimension::CategoryStreak,
        Dimension::ToolPattern,
        Dimension::PollNoProgress,
        Dimension::ErrorStreak,
        Dimension::TextLoop,
        Dimension::StateHash,
        Dimension::Budget,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Dimension::IdenticalCall => "identical_call",
            Dimension::CategoryStreak => "category_streak",
            Dimension::ToolPattern => "tool_pattern",
            Dimension::PollNoProgress => "poll_no_progress",
            Dimension::ErrorStreak => "error_streak",
            Dimension::TextLoop => "text_loop",
            Dimension::StateHash => "state_hash",
            Dimension::Budget => "budget",
        }
    }

    pub fn from_name(name: &str) -> Option<Dimension> {
        Dimension::ALL.into_iter().find(|d| d.name() == name)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Warn,
    Term,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Warn => "warn",
            Level::Term => "term",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleClass {
    Tool,
    Reasoning,
    Mixed,
}

impl CycleClass {
    pub fn name(self) -> &'static str {
        match self {
            CycleClass::Tool => "tool_cycle",
            CycleClass::Reasoning => "reasoning_cycle",
            CycleClass::Mixed => "mixed_cycle",
        }
    }

    pub fn strategy(self) -> &'static str {
        match self {
            CycleClass::Tool => "change_arguments_or_tool",
            CycleClass::Reasoning => "force_execution_or_clarify",
            CycleClass::Mixed => "reset_context_or_rollback",
        }
    }
}

/// Once-per-crossing firing (`crossing` of dimensions.py): 0 nothing fired, 1 WARN fired,
/// 2 TERM fired. A level fires when the count reaches it and re-arms once the count falls
/// below it again; at most one level (the highest) fires per observation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Gate(pub u8);

impl Gate {
    pub const NONE: u8 = 0;
    pub const WARNED: u8 = 1;
    pub const TERMED: u8 = 2;

    pub fn check(&mut self, count: i64, warn: i64, term: i64) -> Option<Level> {
        self.cross(count, warn, term)
    }

    /// The same on real values (the budget's durations and fractional limits).
    pub fn check_f(&mut self, count: f64, warn: f64, term: f64) -> Option<Level> {
        self.cross(count, warn, term)
    }

    fn cross<T: PartialOrd>(&mut self, count: T, warn: T, term: T) -> Option<Level> {
        if count < warn {
            self.0 = Self::NONE;
            return None;
        }
        if count >= term {
            let fire = self.0 < Self::TERMED;
            self.0 = Self::TERMED;
            return fire.then_some(Level::Term);
        }
        if self.0 == Self::TERMED {
            self.0 = Self::WARNED; // fell below term: TERM re-arms, WARN has fired already
            return None;
        }
        let fire = self.0 == Self::NONE;
        self.0 = Self::WARNED;
        fire.then_some(Level::Warn)
    }

    pub fn reset(&mut self) {
        self.0 = Self::NONE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(counts: &[i64], warn: i64, term: i64) -> Vec<Option<Level>> {
        let mut g = Gate::default();
        counts.iter().map(|&c| g.check(c, warn, term)).collect()
    }

    #[test]
    fn fires_when_the_count_reaches_the_threshold_not_before() {
        assert_eq!(run(&[1, 2, 3], 3, 5), vec![None, None, Some(Level::Warn)]);
    }

    #[test]
    fn fires_once_per_crossing() {
        use Level::*;
        assert_eq!(
            run(&[3, 4, 4, 5, 6, 7], 3, 5),
            vec![Some(Warn), None, None, Some(Term), None, None]
        );
    }

    #[test]
    fn re_arms_only_after_the_count_falls_below_the_level() {
        use Level::*;
        assert_eq!(
            run(&[3, 5, 4, 5, 2, 3], 3, 5),
            vec![Some(Warn), Some(Term), None, Some(Term), None, Some(Warn)]
        );
    }

    #[test]
    fn emits_only_the_highest_level_when_both_are_crossed_at_once() {
        assert_eq!(run(&[9, 4], 3, 5), vec![Some(Level::Term), None]);
        assert_eq!(run(&[1, 2, 3], 2, 2), vec![None, Some(Level::Term), None]);
    }

    #[test]
    fn fires_once_per_crossing_and_rearms_below() {
        let mut g = Gate::default();
        let fired: Vec<_> = [1, 3, 4, 5, 6, 4, 5, 2, 3]
            .into_iter()
            .map(|c| g.check(c, 3, 5))
            .collect();
        use Level::*;
        assert_eq!(
            fired,
            vec![
                None,
                Some(Warn),
                None,
                Some(Term),
                None,
                None,
                Some(Term),
                None,
                Some(Warn)
            ]
        );
    }
}
