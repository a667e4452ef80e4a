//! `[code_execution]` in `config.toml`: the limits of `execute_code` and the tools a
//! script may call.
//!
//! ```toml
//! [code_execution]
//! timeout = 300             # seconds before the script is killed
//! max_tool_calls = 50       # tool calls per script
//! max_stdout_bytes = 50000  # head 40 % + tail 60 % kept beyond this
//! max_stderr_bytes = 10000
//! python = "python3"        # interpreter (name on PATH or a path)
//! allowed_tools = ["web_search", "web_extract", "read_file", "write_file", "search_files", "patch", "terminal"]
//! ```

use serde::Deserialize;

/// Hermes' seven script tools.
pub const DEFAULT_ALLOWED_TOOLS: &[&str] = &[
    "web_search",
    "web_extract",
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "terminal",
];

/// `[code_execution]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct CodeExecutionSettings {
    /// Seconds before the script is killed.
    pub timeout: u64,
    /// Tool calls one script may make.
    pub max_tool_calls: usize,
    /// Bytes of stdout kept.
    pub max_stdout_bytes: usize,
    /// Bytes of stderr kept.
    pub max_stderr_bytes: usize,
    /// The interpreter.
    pub python: String,
    /// Tools a script may call (those also registered and available).
    pub allowed_tools: Vec<String>,
}

impl Default for CodeExecutionSettings {
    fn default() -> Self {
        CodeExecutionSettings {
            timeout: 300,
            max_tool_calls: 50,
            max_stdout_bytes: 50_000,
            max_stderr_bytes: 10_000,
            python: "python3".into(),
            allowed_tools: DEFAULT_ALLOWED_TOOLS
                .iter()
                .map(|s| s.to_string())
                .collect(),
        }
    }
}
