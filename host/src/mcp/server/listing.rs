//! Which tools `toolhost mcp serve` exposes: the tools of the selected toolsets.
//!
//! SEAM(toolsets): toolset resolution (composites, presets, `all`, legacy names,
//! availability) belongs to `get_tool_definitions` (branch `toolsets`, issue 2). Until it
//! is on main, this lists registry entries directly: `--toolsets` names toolsets or
//! toolset aliases (`github` → `mcp-github`), `--disable` removes toolsets, neither
//! means every tool. Replace the body of [`exposed_tools`] with a call to
//! `crate::definitions::get_tool_definitions(enabled, disabled, true)` and keep the
//! signature.

use std::collections::BTreeSet;

use serde_json::Value;
use tools_core::{AvailabilityPass, Registry};

use crate::dispatch::AGENT_LOOP_TOOLS;

/// `--toolsets` / `--disable`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolSelection {
    /// Only these toolsets (empty: all).
    pub enabled: Vec<String>,
    /// Minus these toolsets.
    pub disabled: Vec<String>,
}

/// One exposed tool, as MCP's `tools/list` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExposedTool {
    /// Wire name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
}

/// The tools `selection` exposes, sorted by name.
pub fn exposed_tools(registry: &Registry, selection: &ToolSelection) -> Vec<ExposedTool> {
    let resolve = |names: &[String]| -> BTreeSet<String> {
        names
            .iter()
            .map(|n| registry.resolve_alias(n).unwrap_or_else(|| n.clone()))
            .collect()
    };
    let enabled = resolve(&selection.enabled);
    let disabled = resolve(&selection.disabled);
    let mut pass = AvailabilityPass::new();
    registry
        .entries()
        .into_iter()
        // Agent-loop tools answer from an agent's own state, which an MCP client keeps
        // itself.
        .filter(|e| !AGENT_LOOP_TOOLS.contains(&e.name.as_str()))
        .filter(|e| enabled.is_empty() || enabled.contains(&e.toolset))
        .filter(|e| !disabled.contains(&e.toolset))
        .filter(|e| pass.evaluate(e.check.as_ref()).available)
        .map(|e| ExposedTool {
            name: e.name.clone(),
            description: e.description.clone(),
            parameters: e.parameters.clone(),
        })
        .collect()
}

/// True when `name` is among the exposed tools.
pub fn is_exposed(registry: &Registry, selection: &ToolSelection, name: &str) -> bool {
    exposed_tools(registry, selection)
        .iter()
        .any(|tool| tool.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tools_core::ToolEntry;

    fn registry() -> Registry {
        let registry = Registry::new();
        for (name, toolset) in [
            ("read_file", "file"),
            ("write_file", "file"),
            ("terminal", "terminal"),
            ("mcp__gh__issues", "mcp-gh"),
            ("todo", "todo"),
        ] {
            registry.register(ToolEntry::builder(name, toolset).build().unwrap());
        }
        registry.register_toolset_alias("gh", "mcp-gh");
        registry
    }

    fn names(selection: ToolSelection) -> Vec<String> {
        exposed_tools(&registry(), &selection)
            .into_iter()
            .map(|t| t.name)
            .collect()
    }

    #[test]
    fn selection() {
        assert_eq!(
            names(ToolSelection::default()),
            vec!["mcp__gh__issues", "read_file", "terminal", "write_file"]
        );
        assert_eq!(
            names(ToolSelection {
                enabled: vec!["file".into(), "gh".into()],
                disabled: vec![],
            }),
            vec!["mcp__gh__issues", "read_file", "write_file"]
        );
        assert_eq!(
            names(ToolSelection {
                enabled: vec![],
                disabled: vec!["file".into(), "mcp-gh".into()],
            }),
            vec!["terminal"]
        );
    }
}
