//! Streamable HTTP transport for `toolhost mcp serve --http ADDR`.
//!
//! Only loopback addresses are accepted: toolhost's tools read and write files and run
//! commands, and this endpoint has no authentication. rmcp's `Host` header check
//! (DNS-rebinding protection) stays on, and requests from browsers (any `Origin`
//! header) are refused. The MCP endpoint is `/mcp`; any path is served,
//! so `http://127.0.0.1:PORT/mcp` and `http://127.0.0.1:PORT/` both work.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::handler::{ServerCore, ToolhostServer};

/// Why the HTTP server could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpServeError {
    /// The address is not a loopback address.
    #[error(
        "refusing to serve MCP on {addr}: only loopback addresses (127.0.0.1, [::1]) are allowed, the endpoint has no authentication"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Binding failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// A running HTTP server.
#[derive(Debug)]
pub struct HttpServer {
    local_addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// The bound address (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.local_addr)
    }

    /// Stop accepting connections and end every session.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// Wait until the server has stopped (after [`HttpServer::stop`] or when `stop`
    /// given to [`serve_http`] fires).
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

/// Bind `addr` (loopback only) and serve `core` until `stop` fires.
pub async fn serve_http(
    core: Arc<ServerCore>,
    addr: SocketAddr,
    stop: CancellationToken,
) -> Result<HttpServer, HttpServeError> {
    if !addr.ip().is_loopback() {
        return Err(HttpServeError::NotLoopback { addr });
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| HttpServeError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| HttpServeError::Bind { addr, source })?;
    // Browsers send `Origin`; MCP clients do not. Refusing every request that carries one
    // keeps web pages from driving toolhost's tools through the user's browser (a simple
    // cross-origin POST needs no CORS preflight and would otherwise reach the tools).
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .enforce_origin_validation();
    let service = StreamableHttpService::new(
        move || Ok(ToolhostServer::new(Arc::clone(&core))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let accept_stop = stop.clone();
    let task = tokio::spawn(async move {
        loop {
            let (stream, peer) = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok(pair) => pair,
                    Err(err) => {
                        tracing::warn!(%err, "MCP HTTP accept failed");
                        continue;
                    }
                },
                () = accept_stop.cancelled() => break,
            };
            let service = service.clone();
            let conn_stop = accept_stop.clone();
            tokio::spawn(async move {
                let handler = service_fn(move |request| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(request).await) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler);
                tokio::pin!(conn);
                tokio::select! {
                    result = conn.as_mut() => {
                        if let Err(err) = result {
                            tracing::debug!(%peer, %err, "MCP HTTP connection ended with an error");
                        }
                    }
                    () = conn_stop.cancelled() => conn.as_mut().graceful_shutdown(),
                }
            });
        }
        tracing::info!(%local_addr, "MCP HTTP server stopped");
    });
    tracing::info!(%local_addr, "MCP HTTP server listening");
    Ok(HttpServer {
        local_addr,
        stop,
        task,
    })
}
