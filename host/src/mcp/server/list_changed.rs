//! `notifications/tools/list_changed` for connected clients.
//!
//! toolhost's tool list changes while it runs: an MCP server it uses reconnects with
//! different tools, a plugin is reloaded, an embedder registers a tool. Each session
//! watches the registry's generation counter and, when the set of exposed tools really
//! changed, tells its client to list them again. Polling the counter is one atomic load
//! per interval; the watcher ends with the session.

use std::sync::Arc;
use std::time::Duration;

use rmcp::{Peer, RoleServer};

use super::handler::ServerCore;
use super::listing::exposed_tools;

/// How often a session checks for a changed tool list.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(1);

fn exposed_names(core: &ServerCore) -> Vec<String> {
    exposed_tools(core.dispatcher.registry(), &core.toolsets, &core.selection)
        .into_iter()
        .map(|tool| tool.name)
        .collect()
}

/// Watch for tool-list changes and notify `peer` until its connection closes.
pub async fn watch(core: Arc<ServerCore>, peer: Peer<RoleServer>, interval: Duration) {
    let registry = Arc::clone(core.dispatcher.registry());
    let mut generation = registry.generation();
    let mut names = exposed_names(&core);
    loop {
        tokio::time::sleep(interval).await;
        if peer.is_transport_closed() {
            break;
        }
        let now = registry.generation();
        if now == generation {
            continue;
        }
        generation = now;
        let current = exposed_names(&core);
        if current == names {
            continue;
        }
        names = current;
        tracing::debug!(
            tools = names.len(),
            "exposed tools changed; notifying the MCP client"
        );
        if peer.notify_tool_list_changed().await.is_err() {
            break;
        }
    }
}
