//! Configuration sections that tools-core reads. The host parses `config.toml` and
//! hands these to [`crate::services::CoreServices`]; missing sections mean defaults.

use serde::Deserialize;

use crate::approval::ApprovalSettings;
use crate::environments::TerminalSettings;

/// `[tool_output]`: caps applied inside tools.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct ToolOutputSettings {
    /// Foreground terminal output cap (characters, head 40 % + tail 60 %).
    pub max_bytes: usize,
    /// `read_file` page size (lines).
    pub max_lines: usize,
    /// `read_file` per-line cap (characters).
    pub max_line_length: usize,
}

impl Default for ToolOutputSettings {
    fn default() -> Self {
        ToolOutputSettings {
            max_bytes: 50_000,
            max_lines: 2_000,
            max_line_length: 2_000,
        }
    }
}

/// Every section tools-core cares about.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct CoreSettings {
    /// `[tool_output]`.
    pub tool_output: ToolOutputSettings,
    /// `[approvals]`.
    pub approvals: ApprovalSettings,
    /// `[terminal]` (backend, limits, per-backend sections).
    pub terminal: TerminalSettings,
}
