//! `--toolsets A,B` / `--disable C`: which toolsets a command looks at. The command
//! line's enabled list replaces the configured one; its disabled list adds to it and
//! may name single tools as well as toolsets. A name on the command line that denotes
//! nothing is an error (exit 2) naming where the known names are listed — a typo must
//! not silently select no tools, or all of them.

use clap::Args;

use super::CliError;
use crate::app::Toolhost;
use crate::toolsets::ToolsetSelection;

/// Toolset selection flags shared by `tools`, `schema` and `mcp serve`.
#[derive(Clone, Debug, Default, Args)]
pub struct SelectionArgs {
    /// Only these toolsets (comma-separated; replaces `[toolsets] enabled`).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub toolsets: Option<Vec<String>>,
    /// Leave these toolsets or tools out (comma-separated; added to `[toolsets] disabled`).
    #[arg(long, value_name = "C,D", value_delimiter = ',')]
    pub disable: Vec<String>,
}

impl SelectionArgs {
    /// The MCP servers these flags can need, connected the way listing commands do.
    pub fn mcp_scope(&self) -> crate::mcp::McpScope {
        crate::mcp::McpScope::Cached(crate::toolsets::ToolsetSelection {
            enabled: self.toolsets.clone(),
            disabled: self.disable.clone(),
        })
    }

    /// The effective selection for `host`; an unknown name in either flag is an error.
    pub fn selection(&self, host: &Toolhost) -> Result<ToolsetSelection, CliError> {
        let trim = |names: &[String]| -> Vec<String> {
            names
                .iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        };
        let enabled = self.toolsets.as_deref().map(trim);
        let disabled = trim(&self.disable);
        // A server still connecting (mcp serve) has no tools registered yet.
        let is_toolset = |name: &str| {
            host.toolsets.is_known(&host.registry, name) || host.mcp.owns_toolset(name)
        };
        let is_tool = |name: &str| host.registry.get(name).is_some();
        for name in enabled.iter().flatten() {
            if !is_toolset(name) {
                let hint = if is_tool(name) {
                    " (it is a tool: --toolsets takes toolsets; --disable takes tools too)"
                } else {
                    ""
                };
                return Err(CliError::Input(format!(
                    "--toolsets: unknown toolset {name:?}{hint}; `toolhost toolsets` lists them"
                )));
            }
        }
        for name in &disabled {
            if !is_toolset(name) && !is_tool(name) {
                return Err(CliError::Input(format!(
                    "--disable: {name:?} is neither a toolset nor a tool; `toolhost toolsets` \
                     and `toolhost tools` list them"
                )));
            }
        }
        Ok(host.config.config.toolsets.selection(enabled, disabled))
    }
}
