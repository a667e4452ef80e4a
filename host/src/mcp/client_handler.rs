//! toolhost's side of an MCP client connection: how it introduces itself, and what it
//! does with the server's notifications.
//!
//! `notifications/tools/list_changed` triggers a re-listing of that server's tools
//! (through the callback given at connect time); `notifications/progress` for a call
//! made on behalf of an `mcp serve` client is passed on to it (`progress_relay.rs`).
//! Server-initiated requests
//! (sampling, elicitation) are not advertised, so servers do not send them.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};

/// Called when the server says its tool list changed.
pub type ToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// The client handler of one connection.
#[derive(Clone)]
pub struct McpClientHandler {
    server: String,
    tools_changed: Option<ToolsChanged>,
}

impl std::fmt::Debug for McpClientHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClientHandler")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl McpClientHandler {
    /// A handler for `server`.
    pub fn new(server: &str, tools_changed: Option<ToolsChanged>) -> Self {
        McpClientHandler {
            server: server.to_string(),
            tools_changed,
        }
    }
}

impl ClientHandler for McpClientHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolhost", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "MCP server says its tool list changed");
        if let Some(callback) = &self.tools_changed {
            callback();
        }
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(
            server = %self.server,
            progress = notification.progress,
            total = ?notification.total,
            message = ?notification.message,
            "MCP progress"
        );
        if let rmcp::model::NumberOrString::String(token) = &notification.progress_token.0 {
            super::progress_relay::deliver(
                token,
                super::progress_relay::Progress {
                    progress: notification.progress,
                    total: notification.total,
                    message: notification.message.clone(),
                },
            );
        }
    }
}
