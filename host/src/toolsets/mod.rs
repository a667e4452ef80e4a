//! Toolsets: named groups of tools the user enables or disables as a unit.
//!
//! Kinds (see [`ToolsetKind`]): Hermes' leaf toolsets and scenario composites, platform
//! presets (`cli`, `api-server`, `acp`, `webhook`, `cron`, the messaging ones and the
//! `coding` posture; `hermes-<preset>` is an alias), the special sets `all`/`*` and
//! `core`, dynamic toolsets (any toolset name tools are registered under, e.g.
//! `mcp-github`, plus registry aliases such as `github`), user-defined toolsets from
//! config, and Hermes' legacy `<name>_tools` names.
//!
//! A name is looked up in this order: `all`/`*`, custom (config; may replace a
//! built-in), built-in (with `hermes-` aliases), registry toolset, registry alias,
//! legacy. Resolution is iterative with a visited set: cycles and diamonds terminate,
//! unknown includes contribute nothing. Tools registered under a built-in or custom
//! toolset's name join it.

mod builtin;
mod catalog;
mod config;
mod info;
mod view;

#[cfg(test)]
mod tests;

use serde::Serialize;

pub use builtin::{
    ALL_DESCRIPTION, BUILTIN_TOOLSETS, BuiltinToolset, CORE_TOOLS, LEGACY_TOOLSETS, is_core_tool,
};
pub use catalog::{Selection, ToolsetWarning, Toolsets, ToolsetsError};
pub use config::{CustomToolset, ToolsetSelection, ToolsetsSettings};
pub use info::{NOT_REGISTERED, ToolsetInfo, UnavailableTool};
pub(crate) use view::RegistryView;

/// What kind of toolset a name denotes (the `kind` of `toolhost toolsets --json`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolsetKind {
    /// A built-in group of tools (`web`, `file`, `terminal`, ...).
    Leaf,
    /// A built-in toolset that includes others (`debugging`, `safe`).
    Composite,
    /// A platform preset or posture (`cli`, `api-server`, `coding`, ...); disabling one
    /// removes only its non-core tools.
    Preset,
    /// Tools registered under a toolset name nothing else defines (`mcp-github`).
    Dynamic,
    /// Defined in the user's config.
    Custom,
    /// `all`/`*` and `core`.
    Special,
    /// Hermes' `<name>_tools` names.
    Legacy,
}

impl ToolsetKind {
    /// The lowercase name used in JSON and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolsetKind::Leaf => "leaf",
            ToolsetKind::Composite => "composite",
            ToolsetKind::Preset => "preset",
            ToolsetKind::Dynamic => "dynamic",
            ToolsetKind::Custom => "custom",
            ToolsetKind::Special => "special",
            ToolsetKind::Legacy => "legacy",
        }
    }
}

impl std::fmt::Display for ToolsetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
