//! Why talking to an MCP server failed, with the server (and what was run) in context.

use std::path::PathBuf;
use std::time::Duration;

/// An MCP client failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server's section is unusable.
    #[error(transparent)]
    Settings(#[from] super::config::ServerSettingsError),
    /// The stdio server could not be started.
    #[error("MCP server '{server}': cannot start {command:?}{}: {source}", cwd_note(.cwd))]
    Spawn {
        /// Server name.
        server: String,
        /// The program.
        command: String,
        /// Its working directory.
        cwd: Option<PathBuf>,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP transport could not be set up (bad URL or header).
    #[error("MCP server '{server}': {message}")]
    HttpSetup {
        /// Server name.
        server: String,
        /// What is wrong.
        message: String,
    },
    /// The MCP handshake or tool listing failed.
    #[error("MCP server '{server}': {stage} failed: {message}")]
    Protocol {
        /// Server name.
        server: String,
        /// `initialize`, `tools/list`, ...
        stage: &'static str,
        /// rmcp's description.
        message: String,
    },
    /// Connecting took longer than `connect_timeout`.
    #[error("MCP server '{server}': no answer within the connect timeout of {}s", .limit.as_secs_f64())]
    ConnectTimeout {
        /// Server name.
        server: String,
        /// The limit.
        limit: Duration,
    },
    /// The server is disabled in the configuration.
    #[error("MCP server '{server}' is disabled (enabled = false)")]
    Disabled {
        /// Server name.
        server: String,
    },
    /// MCP is switched off for this process.
    #[error("MCP server '{server}' was not started: {reason}")]
    NotStarted {
        /// Server name.
        server: String,
        /// Why.
        reason: String,
    },
    /// The async runtime is unavailable.
    #[error("MCP: {0}")]
    Runtime(String),
}

fn cwd_note(cwd: &Option<PathBuf>) -> String {
    cwd.as_ref()
        .map(|c| format!(" in {}", c.display()))
        .unwrap_or_default()
}
