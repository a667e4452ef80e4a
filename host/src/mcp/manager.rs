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
use super::status::ServerStatus;

/// The MCP servers of a running toolhost.
pub struct McpManager {
    clients: Vec<Arc<ServerClient>>,
    inert: Vec<ServerStatus>,
    runtime: Option<Handle>,
    shut_down: AtomicBool,
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
        }
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
