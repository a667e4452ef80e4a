//! What toolhost keeps of each MCP server tool it registered, beyond the registry entry:
//! the upstream `title`, `annotations` and `outputSchema`, so that `toolhost mcp serve`
//! re-serves a proxied tool with them instead of dropping them.
//!
//! Process-wide, keyed by the tool's wire name (`mcp__<server>__<tool>`): the registry
//! entry has no place for MCP-only metadata, and the server side finds a tool by name.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};

/// An upstream tool's MCP-only metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UpstreamMeta {
    /// Its human-readable title.
    pub title: Option<String>,
    /// Its behaviour hints.
    pub annotations: Option<ToolAnnotations>,
    /// The schema of its structured results.
    pub output_schema: Option<Arc<JsonObject>>,
}

static META: LazyLock<RwLock<HashMap<String, UpstreamMeta>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

/// Remember `tool`'s metadata under wire name `name`.
pub fn remember(name: &str, tool: &Tool) {
    let meta = UpstreamMeta {
        title: tool.title.clone(),
        annotations: tool.annotations.clone(),
        output_schema: tool.output_schema.clone(),
    };
    META.write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(name.to_string(), meta);
}

/// Forget wire name `name` (the tool was deregistered).
pub fn forget(name: &str) {
    META.write()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(name);
}

/// The metadata of wire name `name`.
pub fn get(name: &str) -> Option<UpstreamMeta> {
    META.read()
        .unwrap_or_else(PoisonError::into_inner)
        .get(name)
        .cloned()
}
