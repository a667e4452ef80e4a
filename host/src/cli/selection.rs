//! `--toolsets A,B` / `--disable C`: which toolsets a command looks at. The command
//! line's enabled list replaces the configured one; its disabled list adds to it.

use clap::Args;

use crate::app::Toolhost;
use crate::toolsets::ToolsetSelection;

/// Toolset selection flags shared by `tools`, `schema` and `mcp serve`.
#[derive(Clone, Debug, Default, Args)]
pub struct SelectionArgs {
    /// Only these toolsets (comma-separated; replaces `[toolsets] enabled`).
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub toolsets: Option<Vec<String>>,
    /// Leave these toolsets out (comma-separated; added to `[toolsets] disabled`).
    #[arg(long, value_name = "C,D", value_delimiter = ',')]
    pub disable: Vec<String>,
}

impl SelectionArgs {
    /// The effective selection for `host`.
    pub fn selection(&self, host: &Toolhost) -> ToolsetSelection {
        let trim = |names: &[String]| -> Vec<String> {
            names
                .iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        };
        host.config
            .config
            .toolsets
            .selection(self.toolsets.as_deref().map(trim), trim(&self.disable))
    }
}
