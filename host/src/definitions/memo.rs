//! The quiet-mode definitions cache: a few recent answers keyed by (registry identity,
//! registry generation, enabled set, disabled set).
//!
//! Lists are compared as sets (order and repeats don't matter; an empty disabled list
//! equals none). The catalog's custom toolsets are part of the key implicitly: the
//! cache lives inside the immutable [`crate::toolsets::Toolsets`] it was built with.
//! Unlike Hermes, an entry also expires after the availability-check TTL, so a tool
//! whose check starts failing disappears within 30 s even when nothing is registered.
//! Full: the oldest inserted entry is evicted (Hermes' rule, 8 entries).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tools_core::Registry;
use tools_core::availability::CHECK_TTL;

use super::ToolDefinitions;
use crate::toolsets::RegistryView;

/// How many answers are kept.
pub const MEMO_CAPACITY: usize = 8;

#[derive(Debug)]
struct Entry {
    registry_id: u64,
    generation: u64,
    enabled: Option<Vec<String>>,
    disabled: Option<Vec<String>>,
    at: Instant,
    value: Arc<ToolDefinitions>,
}

/// The cache (interior mutability: the catalog is shared).
#[derive(Debug, Default)]
pub(crate) struct DefinitionsMemo {
    entries: Mutex<VecDeque<Entry>>,
}

/// Sorted, deduplicated view of a list.
fn as_set(list: Option<&[String]>) -> Option<Vec<&str>> {
    list.map(|names| {
        let mut set: Vec<&str> = names.iter().map(String::as_str).collect();
        set.sort_unstable();
        set.dedup();
        set
    })
}

fn same(stored: &Option<Vec<String>>, asked: &Option<Vec<&str>>) -> bool {
    match (stored, asked) {
        (None, None) => true,
        (Some(a), Some(b)) => a.iter().map(String::as_str).eq(b.iter().copied()),
        _ => false,
    }
}

/// `None` and an empty disabled list mean the same thing.
fn disabled_set(disabled: Option<&[String]>) -> Option<Vec<&str>> {
    as_set(disabled.filter(|d| !d.is_empty()))
}

impl DefinitionsMemo {
    fn lock(&self) -> MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh answer for this registry state and selection.
    pub fn get(
        &self,
        registry: &Registry,
        enabled: Option<&[String]>,
        disabled: Option<&[String]>,
    ) -> Option<Arc<ToolDefinitions>> {
        self.get_at(registry, enabled, disabled, Instant::now())
    }

    /// [`get`](Self::get) with an explicit clock, for tests.
    pub fn get_at(
        &self,
        registry: &Registry,
        enabled: Option<&[String]>,
        disabled: Option<&[String]>,
        now: Instant,
    ) -> Option<Arc<ToolDefinitions>> {
        let (id, generation) = (registry.id(), registry.generation());
        let (enabled, disabled) = (as_set(enabled), disabled_set(disabled));
        self.lock()
            .iter()
            .find(|e| {
                e.registry_id == id
                    && e.generation == generation
                    && now.saturating_duration_since(e.at) < CHECK_TTL
                    && same(&e.enabled, &enabled)
                    && same(&e.disabled, &disabled)
            })
            .map(|e| Arc::clone(&e.value))
    }

    /// Remember an answer computed from `view`.
    pub fn insert(
        &self,
        view: &RegistryView,
        enabled: Option<&[String]>,
        disabled: Option<&[String]>,
        value: Arc<ToolDefinitions>,
    ) {
        let owned =
            |set: Option<Vec<&str>>| set.map(|s| s.into_iter().map(str::to_string).collect());
        let entry = Entry {
            registry_id: view.registry_id,
            generation: view.generation,
            enabled: owned(as_set(enabled)),
            disabled: owned(disabled_set(disabled)),
            at: Instant::now(),
            value,
        };
        let mut entries = self.lock();
        // Answers for an older state of this registry can never be asked for again.
        entries.retain(|e| {
            let same_registry = e.registry_id == entry.registry_id;
            let outdated = same_registry && e.generation < entry.generation;
            let duplicate = same_registry
                && e.generation == entry.generation
                && e.enabled == entry.enabled
                && e.disabled == entry.disabled;
            !(outdated || duplicate)
        });
        while entries.len() >= MEMO_CAPACITY {
            entries.pop_front();
        }
        entries.push_back(entry);
    }

    /// Forget everything.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// Number of cached answers.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }
}
