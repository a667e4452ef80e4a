//! Which tools `toolhost mcp serve` exposes: exactly what [`selected_definitions`] offers
//! a model for the selected toolsets (`--toolsets` / `--disable` over `[toolsets]`), so
//! an MCP client sees the same names, descriptions and sanitized schemas as an agent
//! using toolhost directly (unavailable tools left out, dynamic schemas applied) —
//! except the tools no MCP client can use ([`NOT_SERVED`]): `clarify` asks toolhost's
//! own user a question and waits for the answer, and a served session has no such user
//! (the client's model can ask its user itself).

/// Tools never served over MCP.
pub const NOT_SERVED: &[&str] = &["clarify"];

use serde_json::{Map, Value};
use tools_core::Registry;

use crate::definitions::selected_definitions;
use crate::toolsets::{ToolsetSelection, Toolsets};

/// One exposed tool, as MCP's `tools/list` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExposedTool {
    /// Wire name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Map<String, Value>,
}

/// The tools `selection` exposes, sorted by name.
pub fn exposed_tools(
    registry: &Registry,
    toolsets: &Toolsets,
    selection: &ToolsetSelection,
) -> Vec<ExposedTool> {
    let definitions = selected_definitions(registry, toolsets, selection);
    definitions
        .names
        .iter()
        .filter(|name| !NOT_SERVED.contains(&name.as_str()))
        .filter_map(|name| {
            let function = definitions.function(name)?;
            Some(ExposedTool {
                name: name.clone(),
                description: function
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                parameters: function
                    .get("parameters")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// True when `name` is among the exposed tools.
pub fn is_exposed(
    registry: &Registry,
    toolsets: &Toolsets,
    selection: &ToolsetSelection,
    name: &str,
) -> bool {
    !NOT_SERVED.contains(&name)
        && selected_definitions(registry, toolsets, selection).contains(name)
}

/// Toolset names of `selection` that denote nothing (reported once at startup).
pub fn unknown_toolsets(
    registry: &Registry,
    toolsets: &Toolsets,
    selection: &ToolsetSelection,
) -> Vec<String> {
    selected_definitions(registry, toolsets, selection)
        .unknown
        .clone()
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
            ("clarify", "clarify"),
            ("mcp__gh__issues", "mcp-gh"),
        ] {
            registry.register(ToolEntry::builder(name, toolset).build().unwrap());
        }
        registry.register_toolset_alias("gh", "mcp-gh");
        registry
    }

    fn names(enabled: Option<Vec<&str>>, disabled: Vec<&str>) -> Vec<String> {
        let selection = ToolsetSelection {
            enabled: enabled.map(|v| v.into_iter().map(String::from).collect()),
            disabled: disabled.into_iter().map(String::from).collect(),
        };
        exposed_tools(&registry(), &Toolsets::new(), &selection)
            .into_iter()
            .map(|t| t.name)
            .collect()
    }

    #[test]
    fn selection() {
        assert_eq!(
            names(None, vec![]),
            vec!["mcp__gh__issues", "read_file", "write_file"]
        );
        assert_eq!(
            names(Some(vec!["file", "gh"]), vec![]),
            vec!["mcp__gh__issues", "read_file", "write_file"]
        );
        assert_eq!(names(None, vec!["file", "mcp-gh"]), Vec::<String>::new());
        assert_eq!(names(Some(vec!["gh"]), vec![]), vec!["mcp__gh__issues"]);
    }

    #[test]
    fn clarify_is_never_served() {
        assert_eq!(names(Some(vec!["clarify"]), vec![]), Vec::<String>::new());
        let all = ToolsetSelection {
            enabled: None,
            disabled: Vec::new(),
        };
        assert!(!is_exposed(&registry(), &Toolsets::new(), &all, "clarify"));
        assert!(is_exposed(&registry(), &Toolsets::new(), &all, "read_file"));
    }
}
