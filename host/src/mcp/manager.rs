//! [`McpManager`]: every configured MCP server of one toolhost, and their shutdown.
//!
//! Shutdown closes every connection and stops every stdio server concurrently (close
//! stdin → SIGTERM → SIGKILL to each process group). It runs once: explicitly through
//! [`McpManager::shutdown`] (the CLI does this before exiting), or when the manager is
//! dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::runtime::Handle;

use super::client::ServerClient;
use super::readiness::Readiness;
use super::status::{ServerState, ServerStatus};

/// The MCP servers of a running toolhost.
pub struct McpManager {
    clients: Vec<Arc<ServerClient>>,
    inert: Vec<ServerStatus>,
    runtime: Option<Handle>,
    shut_down: AtomicBool,
    readiness: Readiness,
    /// Every configured server's name, started or not.
    configured: Vec<String>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager")
            .field("clients", &self.clients)
            .field("inert", &self.inert.len())
            .finish_non_exhaustive()
    }
}

impl Default for McpManager {
    fn default() -> Self {
        McpManager::empty()
    }
}

impl McpManager {
    /// No servers.
    pub fn empty() -> Self {
        McpManager {
            clients: Vec::new(),
            inert: Vec::new(),
            runtime: None,
            shut_down: AtomicBool::new(false),
            readiness: Readiness::default(),
            configured: Vec::new(),
        }
    }

    pub(super) fn new(
        clients: Vec<Arc<ServerClient>>,
        inert: Vec<ServerStatus>,
        runtime: Option<Handle>,
    ) -> Self {
        McpManager {
            clients,
            inert,
            runtime,
            shut_down: AtomicBool::new(false),
            readiness: Readiness::default(),
            configured: Vec::new(),
        }
    }

    pub(super) fn with_readiness(mut self, readiness: Readiness) -> Self {
        self.readiness = readiness;
        self
    }

    pub(super) fn with_configured(mut self, names: Vec<String>) -> Self {
        self.configured = names;
        self
    }

    /// The servers still connecting in the background (`mcp serve`).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// Status of every configured server, in configuration (name) order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let mut all: Vec<ServerStatus> = self
            .clients
            .iter()
            .map(|c| c.status())
            .chain(self.inert.iter().cloned())
            .collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// The client of `server`, when it is enabled and configured.
    pub fn client(&self, server: &str) -> Option<&Arc<ServerClient>> {
        self.clients.iter().find(|c| c.name() == server)
    }

    /// What to say about an unknown tool whose name is one of a configured server's
    /// (`mcp__<server>__...`): that the server is down and why, disabled, or connected
    /// without such a tool. `None` for other names.
    pub fn unknown_tool_note(&self) -> UnknownToolNote {
        let clients = self.clients.clone();
        let inert = self.inert.clone();
        Arc::new(move |name: &str| {
            let statuses = clients
                .iter()
                .map(|c| c.status())
                .chain(inert.iter().cloned());
            let status = statuses
                .filter(|s| {
                    name.starts_with(&format!("mcp__{}__", super::naming::sanitize(&s.name)))
                })
                .max_by_key(|s| s.name.len())?;
            Some(super::secrets::redact(&explain_unknown(name, &status)))
        })
    }

    /// True when `name` is the toolset (`mcp-<server>`) or alias (`<server>`) of a
    /// configured server, registered or not (it may still be connecting, or not be
    /// needed by this command).
    pub fn owns_toolset(&self, name: &str) -> bool {
        self.configured
            .iter()
            .map(String::as_str)
            .chain(self.clients.iter().map(|c| c.name()))
            .chain(self.inert.iter().map(|s| s.name.as_str()))
            .any(|server| name == server || name == super::registration::toolset_name(server))
    }

    /// True when no server is configured.
    pub fn is_empty(&self) -> bool {
        self.clients.is_empty() && self.inert.is_empty()
    }

    /// Stop every server (idempotent). Blocks until all are stopped (each within a few
    /// seconds); callable from any thread, inside or outside a runtime.
    pub fn shutdown(&self) {
        if self.shut_down.swap(true, Ordering::AcqRel) || self.clients.is_empty() {
            return;
        }
        let Some(runtime) = self.runtime.clone() else {
            return;
        };
        let clients = self.clients.clone();
        let task = runtime.spawn(async move { stop_all(clients).await });
        if let Err(err) = tools_core::bridge::block_on(task) {
            tracing::warn!(%err, "MCP shutdown could not run");
        }
    }

    /// [`McpManager::shutdown`] for async callers.
    pub async fn shutdown_async(&self) {
        if self.shut_down.swap(true, Ordering::AcqRel) || self.clients.is_empty() {
            return;
        }
        let Some(runtime) = self.runtime.clone() else {
            return;
        };
        let clients = self.clients.clone();
        let _ = runtime.spawn(async move { stop_all(clients).await }).await;
    }
}

/// Explains an unknown tool name (see [`McpManager::unknown_tool_note`]).
pub type UnknownToolNote = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

fn explain_unknown(name: &str, status: &ServerStatus) -> String {
    let server = &status.name;
    let why = status
        .last_error
        .as_deref()
        .map(|e| format!(": {e}"))
        .unwrap_or_default();
    let stderr = status
        .stderr_tail
        .last()
        .map(|line| format!(" (its stderr ends with: {line})"))
        .unwrap_or_default();
    match status.state {
        ServerState::Failed | ServerState::Disconnected | ServerState::BreakerOpen => format!(
            "Unknown tool: {name}. MCP server '{server}' is down ({}){why}{stderr}",
            status.state.as_str()
        ),
        ServerState::Disabled => format!(
            "Unknown tool: {name}. MCP server '{server}' is disabled (enabled = false in its [mcp_servers.{server}] section)"
        ),
        ServerState::Misconfigured | ServerState::Skipped => {
            format!("Unknown tool: {name}. MCP server '{server}' was not started{why}")
        }
        ServerState::Pending | ServerState::Stopped => {
            format!("Unknown tool: {name}. MCP server '{server}' is not connected{why}")
        }
        ServerState::Connected => {
            let prefix = format!(
                "{}{}__",
                super::naming::PREFIX,
                super::naming::sanitize(server)
            );
            if let Some(skipped) = status
                .skipped_tools
                .iter()
                .find(|t| format!("{prefix}{}", super::naming::sanitize(&t.raw_name)) == name)
            {
                return format!(
                    "Unknown tool: {name}. MCP server '{server}' offers {} but toolhost left it out: {}",
                    skipped.raw_name, skipped.reason
                );
            }
            let mut tools = status.tools.clone();
            tools.truncate(20);
            format!(
                "Unknown tool: {name}. MCP server '{server}' is connected but offers no such tool; its tools: {}",
                tools.join(", ")
            )
        }
    }
}

async fn stop_all(clients: Vec<Arc<ServerClient>>) {
    let mut set = tokio::task::JoinSet::new();
    for client in clients {
        set.spawn(async move { client.shutdown().await });
    }
    while set.join_next().await.is_some() {}
}

impl Drop for McpManager {
    fn drop(&mut self) {
        self.shutdown();
    }
}
