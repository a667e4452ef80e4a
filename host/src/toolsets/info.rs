//! The rows of `toolhost toolsets`: a toolset with its resolved tools, and for each tool
//! that would not reach the model, why (never registered — e.g. a Hermes tool toolhost
//! does not implement or a plugin that is not loaded — or its availability check fails).
//! A toolset listed with 32 tools of which 9 exist must say so.

use serde::Serialize;

use super::ToolsetKind;

/// One row of `toolhost toolsets`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolsetInfo {
    /// Canonical name.
    pub name: String,
    /// What kind of toolset it is.
    pub kind: ToolsetKind,
    /// Human description.
    pub description: String,
    /// Every tool name it resolves to (includes followed), sorted. May name tools that
    /// are not registered.
    pub tools: Vec<String>,
    /// True when at least one of `tools` is registered and available.
    pub available: bool,
    /// The tools of `tools` that are not offered to the model, with the reason, sorted
    /// by name (empty when every tool is available).
    pub unavailable: Vec<UnavailableTool>,
    /// Other names accepted for it (`hermes-cli`, `*`, a registry alias), sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

/// A tool of a toolset that the model would not get, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UnavailableTool {
    /// Tool name.
    pub name: String,
    /// `not registered`, or the availability check's reason.
    pub reason: String,
}

/// The reason given for a tool of a toolset that no core tool, plugin or MCP server
/// registered.
pub const NOT_REGISTERED: &str =
    "not registered (no core tool, loaded plugin or MCP server provides it)";
