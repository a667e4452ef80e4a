//! Errors a tool handler returns, and the registry's own errors.
//!
//! A handler error is not a crash: the registry turns it into the model-readable
//! `{"error":"Tool execution failed: KIND: MESSAGE"}` result. Expected, recoverable
//! outcomes (a file that does not exist, a pattern with no match) are ordinary results
//! (`{"error": "..."}` built with [`crate::result::tool_error`]), not `ToolError`s.

use std::path::PathBuf;

/// Why a tool handler failed. `kind()` is the `KIND` part of the model-facing message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// Arguments passed validation but make no sense to the handler.
    #[error("{0}")]
    InvalidArguments(String),
    /// A file-system or process operation failed.
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The path the operation was about.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The handler panicked; the panic was caught.
    #[error("{0}")]
    Panic(String),
    /// The handler did not finish in time.
    #[error("timed out after {seconds}s")]
    Timeout {
        /// The limit that was exceeded.
        seconds: f64,
    },
    /// The call was cancelled before it finished.
    #[error("cancelled")]
    Cancelled,
    /// The tool cannot run here (missing binary, credentials, terminal, ...).
    #[error("{0}")]
    Unavailable(String),
    /// Any other failure, with a short kind of its own (e.g. a plugin's error kind).
    #[error("{message}")]
    Other {
        /// Short lowercase kind, e.g. `plugin`, `mcp`.
        kind: String,
        /// Human-readable detail.
        message: String,
    },
}

impl ToolError {
    /// The `KIND` word used in `Tool execution failed: KIND: MESSAGE`.
    pub fn kind(&self) -> &str {
        match self {
            ToolError::InvalidArguments(_) => "invalid_arguments",
            ToolError::Io { .. } => "io",
            ToolError::Panic(_) => "panic",
            ToolError::Timeout { .. } => "timeout",
            ToolError::Cancelled => "cancelled",
            ToolError::Unavailable(_) => "unavailable",
            ToolError::Other { kind, .. } => kind,
        }
    }

    /// What the model reads for this error: `Tool execution failed: KIND: MESSAGE`.
    pub fn failure_message(&self) -> String {
        format!("Tool execution failed: {}: {}", self.kind(), self)
    }

    /// Shorthand for [`ToolError::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ToolError::Io {
            path: path.into(),
            source,
        }
    }

    /// Shorthand for [`ToolError::Other`].
    pub fn other(kind: impl Into<String>, message: impl Into<String>) -> Self {
        ToolError::Other {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// The name is empty or contains characters providers reject.
    #[error("invalid tool name {name:?}: {reason}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The schema is not an object with an object `parameters`.
    #[error("tool {name}: invalid schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// What is wrong with the schema.
        reason: String,
    },
    /// A core tool failed to build (missing dependency, bad configuration).
    #[error("tool {name}: {reason}")]
    Build {
        /// The tool.
        name: String,
        /// Why it could not be built.
        reason: String,
    },
}
