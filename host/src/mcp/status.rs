//! What `toolhost mcp list` reports about each configured server.

use serde::Serialize;

/// Where a server stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Not tried yet.
    Pending,
    /// Connected; its tools are registered.
    Connected,
    /// The last connection attempt failed (see `last_error`).
    Failed,
    /// It was connected and the connection dropped; the next call reconnects.
    Disconnected,
    /// Too many consecutive failures: calls are refused until the cooldown ends.
    BreakerOpen,
    /// `enabled = false`.
    Disabled,
    /// The section is unusable (see `last_error`).
    Misconfigured,
    /// MCP is switched off for this process (safe mode, nesting limit).
    Skipped,
    /// Shut down with the host.
    Stopped,
}

impl ServerState {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Pending => "pending",
            ServerState::Connected => "connected",
            ServerState::Failed => "failed",
            ServerState::Disconnected => "disconnected",
            ServerState::BreakerOpen => "breaker_open",
            ServerState::Disabled => "disabled",
            ServerState::Misconfigured => "misconfigured",
            ServerState::Skipped => "skipped",
            ServerState::Stopped => "stopped",
        }
    }
}

/// One server's status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    /// Section name.
    pub name: String,
    /// `stdio`, `http`, or `-` when the section is unusable.
    pub transport: String,
    /// Where it stands.
    pub state: ServerState,
    /// Wire names of its registered tools, sorted.
    pub tools: Vec<String>,
    /// Tools it offered that were not registered.
    #[serde(serialize_with = "skipped_as_objects")]
    pub skipped_tools: Vec<super::registration::SkippedTool>,
    /// The last error (connect failure, dropped connection, failed call).
    pub last_error: Option<String>,
    /// The stdio server's process id while connected.
    pub pid: Option<u32>,
    /// `name version` the server reported.
    pub server_version: Option<String>,
    /// The last lines the stdio server wrote to stderr.
    pub stderr_tail: Vec<String>,
}

impl ServerStatus {
    /// A server that never got a client (disabled, misconfigured, skipped).
    pub fn inert(name: &str, transport: &str, state: ServerState, error: Option<String>) -> Self {
        ServerStatus {
            name: name.to_string(),
            transport: transport.to_string(),
            state,
            tools: Vec::new(),
            skipped_tools: Vec::new(),
            last_error: error,
            pid: None,
            server_version: None,
            stderr_tail: Vec::new(),
        }
    }
}

fn skipped_as_objects<S: serde::Serializer>(
    skipped: &[super::registration::SkippedTool],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(skipped.len()))?;
    for tool in skipped {
        seq.serialize_element(&serde_json::json!({
            "name": tool.raw_name,
            "reason": tool.reason,
        }))?;
    }
    seq.end()
}
