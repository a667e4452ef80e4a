//! `toolhost mcp serve`: toolhost's registry as an MCP server, over stdio or streamable
//! HTTP on a loopback address.
//!
//! [`serve_stdio`] speaks MCP on the process's stdin/stdout until the client closes
//! stdin, through [`stdio_transport`] (which answers malformed requests); [`serve_http`] binds a loopback address and returns a handle with the bound
//! address and a shutdown switch. Both take a [`ServerCore`]: the dispatcher, the tool
//! selection, the elicitation router and the progress interval.

mod annotations;
mod elicitation;
mod handler;
mod http;
mod list_changed;
mod listing;
mod progress;
#[cfg(test)]
mod progress_tests;
pub mod stdio_transport;

use std::sync::Arc;

use rmcp::ServiceExt as _;
use tokio_util::sync::CancellationToken;

pub use elicitation::DEFAULT_TIMEOUT as DEFAULT_APPROVAL_TIMEOUT;
pub use elicitation::{ApprovalAnswer, ApprovalPrompt, ElicitationRouter, RouteGuard};
pub use handler::{ServerCore, ToolhostServer};
pub use http::{HttpServeError, HttpServer, serve_http, serve_http_with_origins};
pub use listing::{ExposedTool, exposed_tools, is_exposed, unknown_toolsets};
pub use progress::DEFAULT_INTERVAL as DEFAULT_PROGRESS_INTERVAL;

/// Why serving over stdio stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StdioServeError {
    /// The client never completed the MCP handshake.
    #[error("MCP handshake on stdio failed: {0}")]
    Handshake(String),
    /// The service task failed.
    #[error("MCP stdio service failed: {0}")]
    Service(String),
}

/// Serve `core` on stdin/stdout until the client disconnects or `stop` fires.
pub async fn serve_stdio(
    core: Arc<ServerCore>,
    stop: CancellationToken,
) -> Result<(), StdioServeError> {
    let (stdin, stdout) = rmcp::transport::io::stdio_pipes();
    serve_stdio_on(core, stop, stdin, stdout).await
}

/// Serve `core` on `read`/`write` (the client's stdin and the protocol's stdout, which
/// `toolhost mcp serve` moves off fd 1 so nothing else can write to it) until the
/// client disconnects or `stop` fires.
pub async fn serve_stdio_on<R, W>(
    core: Arc<ServerCore>,
    stop: CancellationToken,
    read: R,
    write: W,
) -> Result<(), StdioServeError>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let transport = stdio_transport::LineTransport::new(read, write);
    let service = ToolhostServer::new(core)
        .serve_with_ct(transport, stop)
        .await
        .map_err(|e| StdioServeError::Handshake(e.to_string()))?;
    let reason = service
        .waiting()
        .await
        .map_err(|e| StdioServeError::Service(e.to_string()))?;
    tracing::info!(?reason, "MCP stdio session ended");
    Ok(())
}
