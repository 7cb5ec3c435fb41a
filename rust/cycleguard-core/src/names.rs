//! What a tool's name alone decides, worked out once per name and profile.
//!
//! Every call reads its tool's name several times over: lower-cased, hashed, classified by
//! the name (built-in map, aliases, the user's categories) and looked up in the profile's
//! tool lists (progress-aware tools, progress names, edit tools, the near-duplicate rule's
//! tools, tools that never fail). A harness uses a handful of names, so [`ToolNames`] keeps
//! those answers per name: one look-up instead of about ten. What the arguments decide (a
//! sub-command, a command line read as a shell's) is still read on every call, from the
//! name's kind.
//!
//! The table is bounded: past [`MAX_NAMES`] names (a harness that invents a name per call)
//! a name's facts are worked out on each call instead of kept, so memory does not grow.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

use crate::categories::{Categorizer, ToolKind};
use crate::fasthash::HashMap;
use crate::normalize::lower;
use crate::pystr::encode_replace;
use crate::settings::{DetectorSettings, ProfileSettings, Thresholds};

/// Names kept per profile; beyond, facts are computed per call.
pub const MAX_NAMES: usize = 4096;

/// Whether one name (a tool's lower-cased name, or its canonical kind) is in each of the
/// profile's tool lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memberships {
    /// `progress_aware_tools`: a changed argument set counts as progress for `category_streak`.
    pub progress_aware: bool,
    /// `failure_density.progress_tools`: a successful call forgets failures.
    pub progress_name: bool,
    /// `near_duplicate_edit.tools`.
    pub near_duplicate: bool,
    /// `edit_without_effect.edit_tools`.
    pub edit: bool,
}

impl Memberships {
    /// The memberships of `name` (lower-cased already, as the lists are).
    pub fn of(settings: &DetectorSettings, profile: &ProfileSettings, name: &str) -> Self {
        Memberships {
            progress_aware: settings.progress_aware_tools.contains(name),
            progress_name: profile.failure_density.progress_names.contains(name),
            near_duplicate: profile.near_duplicate_edit.tools.contains(name),
            edit: profile.edit_without_effect.edit_tools.contains(name),
        }
    }

    /// In a list by either name (each rule asks for its canonical kind or its name).
    pub fn either(self, other: Memberships) -> Self {
        Memberships {
            progress_aware: self.progress_aware || other.progress_aware,
            progress_name: self.progress_name || other.progress_name,
            near_duplicate: self.near_duplicate || other.near_duplicate,
            edit: self.edit || other.edit,
        }
    }
}

/// One tool name's facts for one profile.
#[derive(Debug)]
pub struct NameFacts {
    /// The name lower-cased (Python's `str.lower`).
    pub lower: String,
    /// `xxh3_64` of the name's UTF-8 (`encode("utf-8", "replace")`).
    pub hash: u64,
    /// The kind its name gives it (`_classify_name(tool, None)`), before any argument is read.
    pub canonical: String,
    pub category: String,
    pub override_key: String,
    pub is_poll: bool,
    pub known: bool,
    /// `error_streak.non_failing_tools` has the lower-cased name (that list is read by name
    /// only).
    pub non_failing: bool,
    /// The memberships of the lower-cased name and of the name kind's canonical name.
    pub by_lower: Memberships,
    pub by_canonical: Memberships,
    /// `category_streak`'s per-tool override for the name itself or its lower-cased form
    /// (the first two look-ups of `_category_thresholds`), and for the override key of the
    /// name's own kind (the third, while the arguments leave the kind as the name gives it).
    pub override_by_name: Option<Thresholds>,
    pub override_by_kind: Option<Thresholds>,
}

impl NameFacts {
    fn compute(
        py: Python<'_>,
        categorizer: &Categorizer,
        settings: &DetectorSettings,
        profile: &ProfileSettings,
        tool: &str,
    ) -> PyResult<Self> {
        let kind = categorizer.classify_name(py, tool, None)?;
        let lower = lower(py, tool)?.into_owned();
        let overrides = &profile.category_streak.tool_overrides;
        Ok(NameFacts {
            override_by_name: overrides
                .get(tool)
                .or_else(|| overrides.get(&lower))
                .copied(),
            override_by_kind: overrides.get(kind.override_key.as_ref()).copied(),
            hash: xxh3_64(&encode_replace(tool)),
            non_failing: profile.error_streak.non_failing_tools.contains(&lower),
            by_lower: Memberships::of(settings, profile, &lower),
            by_canonical: Memberships::of(settings, profile, &kind.canonical),
            lower,
            canonical: kind.canonical.into_owned(),
            category: kind.category.into_owned(),
            override_key: kind.override_key.into_owned(),
            is_poll: kind.is_poll,
            known: kind.known,
        })
    }

    /// The name's kind, borrowed from these facts.
    pub fn kind(&self) -> ToolKind<'_> {
        ToolKind {
            canonical: Cow::Borrowed(&self.canonical),
            category: Cow::Borrowed(&self.category),
            override_key: Cow::Borrowed(&self.override_key),
            is_poll: self.is_poll,
            known: self.known,
        }
    }

    /// `_category_thresholds`'s per-tool override for a call of this name whose final kind is
    /// `kind`: by the name, else by the kind's override key. Three hash look-ups a call, made
    /// once per name.
    pub fn category_override(
        &self,
        profile: &ProfileSettings,
        kind: &ToolKind<'_>,
    ) -> Option<Thresholds> {
        self.override_by_name.or_else(|| {
            if kind.override_key == self.override_key.as_str() {
                self.override_by_kind
            } else {
                let overrides = &profile.category_streak.tool_overrides;
                overrides.get(kind.override_key.as_ref()).copied()
            }
        })
    }

    /// The memberships a call of this name has once its final kind is known (the arguments
    /// may have made it another kind: a `view` sub-command, a command line).
    pub fn memberships(
        &self,
        settings: &DetectorSettings,
        profile: &ProfileSettings,
        canonical: &str,
    ) -> Memberships {
        let by_canonical = if canonical == self.canonical {
            self.by_canonical
        } else {
            Memberships::of(settings, profile, canonical)
        };
        self.by_lower.either(by_canonical)
    }
}

/// The facts of the tool names one profile has seen (shared by its sessions).
#[derive(Default)]
pub struct ToolNames {
    facts: Mutex<HashMap<String, Arc<NameFacts>>>,
}

impl ToolNames {
    /// The facts of `tool`, from the table or worked out (and kept while there is room).
    pub fn get(
        &self,
        py: Python<'_>,
        categorizer: &Categorizer,
        settings: &DetectorSettings,
        profile: &ProfileSettings,
        tool: &str,
    ) -> PyResult<Arc<NameFacts>> {
        if let Some(found) = self.lock().get(tool) {
            return Ok(Arc::clone(found));
        }
        // Worked out outside the lock: it may call into Python (a non-ASCII name's lower()).
        let facts = Arc::new(NameFacts::compute(
            py,
            categorizer,
            settings,
            profile,
            tool,
        )?);
        let mut table = self.lock();
        if table.len() < MAX_NAMES {
            table.insert(tool.to_owned(), Arc::clone(&facts));
        }
        Ok(facts)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<NameFacts>>> {
        // A panic while the lock was held cannot leave the table half-written (an insert
        // either happened or not), so a poisoned lock's table is still good.
        self.facts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
