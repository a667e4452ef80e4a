//! Tool definitions for the model: the OpenAI `tools` array for an enabled/disabled
//! toolset selection (docs/hermes/toolsets-and-definitions.md, sections 5–7).
//!
//! Steps: resolve the selection (unknown names reported and ignored; presets in the
//! disabled list remove only their non-core tools) → drop unregistered and unavailable
//! tools (one [`AvailabilityPass`]: a shared check runs once) → build each function
//! schema and merge its `dynamic_schema` overrides → apply each surviving tool's
//! `schema_patch` with the set of surviving names, repeating until no patch removes a
//! tool (so no description ever names a tool that was dropped) → sanitize every
//! schema → sort by name. Quiet calls are memoised (see `memo.rs`).

pub(crate) mod memo;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};
use tools_core::availability::panic_message;
use tools_core::{AvailabilityPass, Registry, SchemaPatch, ToolEntry};

pub use memo::MEMO_CAPACITY;

use crate::schema_sanitize::sanitize_function;
use crate::toolsets::{RegistryView, ToolsetSelection, Toolsets};

/// The answer of [`get_tool_definitions`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ToolDefinitions {
    /// `[{"type":"function","function":{"name","description","parameters",...}}]`,
    /// sorted by name, sanitized.
    pub tools: Vec<Value>,
    /// The names in `tools`, in the same (sorted) order: the tools this session offers.
    pub names: Vec<String>,
    /// Toolset names from the enabled/disabled lists that denote nothing, in the order
    /// given, deduplicated (also filled in quiet mode; only the warning is suppressed).
    pub unknown: Vec<String>,
}

impl ToolDefinitions {
    /// The `tools` array as JSON text.
    pub fn to_json(&self) -> String {
        Value::Array(self.tools.clone()).to_string()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool survived.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// True when `name` is offered.
    pub fn contains(&self, name: &str) -> bool {
        self.names
            .binary_search_by(|n| n.as_str().cmp(name))
            .is_ok()
    }

    /// The function object (`{"name","description","parameters"}`) of tool `name`.
    pub fn function(&self, name: &str) -> Option<&Map<String, Value>> {
        let index = self.names.binary_search_by(|n| n.as_str().cmp(name)).ok()?;
        self.tools.get(index)?.get("function")?.as_object()
    }
}

/// The OpenAI tools array for a toolset selection.
///
/// `enabled`: `None` = every toolset; `Some(list)` = only those (an empty list = no
/// tools). `disabled` is subtracted afterwards. `quiet`: no logging of the selection or
/// of unknown names, and the answer is memoised; non-quiet calls always recompute.
/// Never fails: unknown names are reported in [`ToolDefinitions::unknown`].
pub fn get_tool_definitions(
    registry: &Registry,
    toolsets: &Toolsets,
    enabled: Option<&[String]>,
    disabled: Option<&[String]>,
    quiet: bool,
) -> Arc<ToolDefinitions> {
    toolsets.definitions(registry, enabled, disabled, quiet)
}

/// [`get_tool_definitions`] for a resolved selection, quietly (memoised; the caller
/// reports [`ToolDefinitions::unknown`] itself if it wants to).
pub fn selected_definitions(
    registry: &Registry,
    toolsets: &Toolsets,
    selection: &ToolsetSelection,
) -> Arc<ToolDefinitions> {
    get_tool_definitions(
        registry,
        toolsets,
        selection.enabled(),
        selection.disabled(),
        true,
    )
}

/// The uncached computation.
pub(crate) fn compute_definitions(
    toolsets: &Toolsets,
    view: &RegistryView,
    enabled: Option<&[String]>,
    disabled: Option<&[String]>,
    quiet: bool,
) -> ToolDefinitions {
    let (selected, unknown) = toolsets.select_in(view, enabled, disabled, quiet);
    let mut pass = AvailabilityPass::new();
    let candidates: Vec<(&Arc<ToolEntry>, Map<String, Value>)> = selected
        .iter()
        .filter_map(|name| view.entry(name))
        .filter(|entry| pass.evaluate(entry.check.as_ref()).available)
        .map(|entry| (entry, base_function(entry)))
        .collect();
    let functions = apply_schema_patches(candidates);
    let mut tools = Vec::with_capacity(functions.len());
    let mut names = Vec::with_capacity(functions.len());
    for (name, mut function) in functions {
        sanitize_function(&mut function);
        let mut tool = Map::with_capacity(2);
        tool.insert("type".into(), Value::String("function".into()));
        tool.insert("function".into(), Value::Object(function));
        tools.push(Value::Object(tool));
        names.push(name);
    }
    if !quiet {
        if names.is_empty() {
            tracing::info!("no tools selected (all filtered out or unavailable)");
        } else {
            tracing::info!(count = names.len(), tools = %names.join(", "), "final tool selection");
        }
    }
    ToolDefinitions {
        tools,
        names,
        unknown,
    }
}

/// The static function schema with the tool's dynamic overrides merged over it; the
/// registered name always wins.
fn base_function(entry: &ToolEntry) -> Map<String, Value> {
    let mut function = entry.function_schema();
    if let Some(dynamic) = &entry.dynamic_schema {
        match catch_unwind(AssertUnwindSafe(|| dynamic())) {
            Ok(Some(overrides)) => function.extend(overrides),
            Ok(None) => {}
            Err(panic) => tracing::warn!(
                tool = %entry.name,
                panic = %panic_message(&panic),
                "dynamic schema overrides panicked; using the static schema"
            ),
        }
        function.insert("name".into(), Value::String(entry.name.clone()));
    }
    function
}

/// Run every patch against the surviving names until no patch removes a tool.
/// A patch that panics removes its tool (its description may name tools that are
/// gone; a missing tool is safer than a misleading one).
fn apply_schema_patches(
    candidates: Vec<(&Arc<ToolEntry>, Map<String, Value>)>,
) -> Vec<(String, Map<String, Value>)> {
    let mut surviving: BTreeSet<String> = candidates.iter().map(|(e, _)| e.name.clone()).collect();
    let patched: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(_, (e, _))| e.schema_patch.is_some())
        .map(|(i, _)| i)
        .collect();
    let mut results: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
    // Each round either removes at least one patched tool or is the last.
    for _ in 0..=patched.len() {
        results.clear();
        let mut removed = Vec::new();
        for &i in &patched {
            let (entry, function) = &candidates[i];
            if !surviving.contains(&entry.name) {
                continue;
            }
            let mut edited = function.clone();
            match run_patch(entry, &mut edited, &surviving) {
                SchemaPatch::Keep => {
                    edited.insert("name".into(), Value::String(entry.name.clone()));
                    results.insert(i, edited);
                }
                SchemaPatch::Remove => removed.push(entry.name.clone()),
            }
        }
        if removed.is_empty() {
            break;
        }
        for name in removed {
            surviving.remove(&name);
        }
    }
    candidates
        .into_iter()
        .enumerate()
        .filter(|(_, (entry, _))| surviving.contains(&entry.name))
        .map(|(i, (entry, function))| {
            let function = results.remove(&i).unwrap_or(function);
            (entry.name.clone(), function)
        })
        .collect()
}

fn run_patch(
    entry: &ToolEntry,
    function: &mut Map<String, Value>,
    surviving: &BTreeSet<String>,
) -> SchemaPatch {
    let Some(patch) = &entry.schema_patch else {
        return SchemaPatch::Keep;
    };
    match catch_unwind(AssertUnwindSafe(|| patch(function, surviving))) {
        Ok(decision) => decision,
        Err(panic) => {
            tracing::warn!(
                tool = %entry.name,
                panic = %panic_message(&panic),
                "schema patch panicked; the tool is left out of the definitions"
            );
            SchemaPatch::Remove
        }
    }
}
