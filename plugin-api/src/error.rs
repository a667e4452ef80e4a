//! [`ToolError`]: why a plugin tool call failed.

use std::fmt;

/// Why a tool call failed. The model sees `Tool execution failed: KIND: MESSAGE`.
///
/// Failures the model should read and react to as ordinary data (a file that does not
/// exist, a search with no match) are better returned as `Ok(tool_error("..."))`
/// (see [`tool_error`](crate::tool_error)); a `ToolError` says the call itself failed.
/// Panics inside a handler are caught and reported with kind `panic` automatically.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolError {
    /// Short lowercase kind: `failed`, `invalid_arguments`, `unavailable`, `io`, ...
    pub kind: String,
    /// Human-readable detail.
    pub message: String,
}

impl ToolError {
    /// A failure of kind `failed`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError::with_kind("failed", message)
    }

    /// The arguments passed the schema but make no sense to the tool.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::with_kind("invalid_arguments", message)
    }

    /// The tool cannot run here right now (missing credentials, service down, ...).
    pub fn unavailable(message: impl Into<String>) -> Self {
        ToolError::with_kind("unavailable", message)
    }

    /// A failure with your own short lowercase `kind`.
    pub fn with_kind(kind: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> Self {
        ToolError::with_kind("io", err.to_string())
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(err: serde_json::Error) -> Self {
        ToolError::invalid_arguments(err.to_string())
    }
}
