//! A consistent snapshot of the registry for one resolution or definitions pass: the
//! entries, the tools of each registry toolset, and the registry's toolset aliases.
//!
//! Taking it once per pass means MCP refreshes or plugin loads running concurrently can
//! never make one answer half old, half new, and the registry lock is held only while
//! copying a few `Arc`s.

use std::collections::BTreeMap;
use std::sync::Arc;

use tools_core::{Registry, ToolEntry, ToolSource};

/// The registry as one pass sees it.
pub(crate) struct RegistryView {
    /// `Registry::id()` of the source.
    pub registry_id: u64,
    /// The generation read *before* the snapshot (a mutation racing the snapshot can
    /// only make a cache entry look older than it is, never newer).
    pub generation: u64,
    /// All entries, sorted by name.
    entries: Vec<Arc<ToolEntry>>,
    /// Registry toolset → tool names (sorted).
    by_toolset: BTreeMap<String, Vec<String>>,
    /// Registry alias → toolset.
    aliases: BTreeMap<String, String>,
}

impl RegistryView {
    /// Snapshot `registry`.
    pub fn capture(registry: &Registry) -> Self {
        let generation = registry.generation();
        let entries = registry.entries();
        let aliases = registry.aliases();
        let mut by_toolset: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for entry in &entries {
            by_toolset
                .entry(entry.toolset.clone())
                .or_default()
                .push(entry.name.clone());
        }
        RegistryView {
            registry_id: registry.id(),
            generation,
            entries,
            by_toolset,
            aliases,
        }
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> &[Arc<ToolEntry>] {
        &self.entries
    }

    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.entries
            .binary_search_by(|e| e.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// Tools registered under `toolset` (sorted; empty when none).
    pub fn tools_in(&self, toolset: &str) -> &[String] {
        self.by_toolset.get(toolset).map_or(&[], Vec::as_slice)
    }

    /// The stored name of registry toolset `toolset`, when it has tools.
    pub fn toolset_key(&self, toolset: &str) -> Option<&str> {
        self.by_toolset
            .get_key_value(toolset)
            .map(|(key, _)| key.as_str())
    }

    /// Every registry toolset name, sorted.
    pub fn toolset_names(&self) -> impl Iterator<Item = &str> {
        self.by_toolset.keys().map(String::as_str)
    }

    /// The toolset a registry alias points at.
    pub fn alias_target(&self, alias: &str) -> Option<&str> {
        self.aliases.get(alias).map(String::as_str)
    }

    /// Registry aliases pointing at `toolset`, sorted.
    pub fn aliases_of<'a>(&'a self, toolset: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.aliases
            .iter()
            .filter(move |(_, target)| target.as_str() == toolset)
            .map(|(alias, _)| alias.as_str())
    }

    /// Where the tools of a registry toolset came from (the first entry's source).
    pub fn source_of(&self, toolset: &str) -> Option<&ToolSource> {
        let first = self.tools_in(toolset).first()?;
        self.entry(first).map(|e| &e.source)
    }
}
