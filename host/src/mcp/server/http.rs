//! Streamable HTTP transport for `toolhost mcp serve --http ADDR`.
//!
//! Only loopback addresses are accepted: toolhost's tools read and write files and run
//! commands, and this endpoint has no authentication. rmcp's `Host` header check
//! (DNS-rebinding protection) stays on. Requests from browsers (an `Origin` header) are
//! accepted only from `localhost`/loopback origins (any port: the Inspector's web UI,
//! a local dev page) and the origins given with `--allow-origin`; any other origin is
//! refused with 403, so a web page cannot drive the tools through the user's browser.
//! A POST declared `application/json` whose body is not a JSON-RPC message gets 400
//! with a JSON-RPC `-32700` error (rmcp says 415).
//! MCP is served on `/mcp` only; every other path answers 404. `DELETE /mcp` with a
//! session id ends that session (200; 404 for an unknown session).

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

/// Browser origins always accepted: loopback pages on any port.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// The MCP endpoint's path.
pub const ENDPOINT: &str = "/mcp";

/// Bind `addr` (loopback only) and serve `core` until `stop` fires, accepting browser
/// requests from loopback origins only.
pub async fn serve_http(
    core: Arc<ServerCore>,
    addr: SocketAddr,
    stop: CancellationToken,
) -> Result<HttpServer, HttpServeError> {
    serve_http_with_origins(core, addr, stop, &[]).await
}

/// [`serve_http`], also accepting browser requests from `extra_origins`
/// (`scheme://host[:port]`, `:*` for any port).
pub async fn serve_http_with_origins(
    core: Arc<ServerCore>,
    addr: SocketAddr,
    stop: CancellationToken,
    extra_origins: &[String],
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
    // Browsers send `Origin`; MCP clients do not. Refusing every origin but loopback and
    // configured ones keeps web pages from driving toolhost's tools through the user's
    // browser (a simple cross-origin POST needs no CORS preflight and would otherwise
    // reach the tools).
    let origins: Vec<String> = LOOPBACK_ORIGINS
        .iter()
        .map(|o| o.to_string())
        .chain(extra_origins.iter().cloned())
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_allowed_origins(origins)
        .enforce_origin_validation();
    let sessions = Arc::new(LocalSessionManager::default());
    let service = StreamableHttpService::new(
        move || Ok(ToolhostServer::new(Arc::clone(&core))),
        Arc::clone(&sessions),
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
            let sessions = Arc::clone(&sessions);
            let conn_stop = accept_stop.clone();
            tokio::spawn(async move {
                let handler = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    let sessions = Arc::clone(&sessions);
                    async move {
                        let path = request.uri().path();
                        if path != ENDPOINT && path != "/mcp/" {
                            return Ok::<_, Infallible>(plain(
                                hyper::StatusCode::NOT_FOUND,
                                format!("not found: MCP is served at {ENDPOINT}"),
                            ));
                        }
                        if request.method() == hyper::Method::DELETE {
                            match unknown_session(&sessions, &request).await {
                                Some(refusal) => return Ok(refusal),
                                None => {
                                    let mut response = service.handle(request).await;
                                    if response.status().is_success() {
                                        *response.status_mut() = hyper::StatusCode::OK;
                                    }
                                    return Ok(response.map(http_body_util::Either::Left));
                                }
                            }
                        }
                        let json_body = request.method() == hyper::Method::POST
                            && declares_json(request.headers());
                        let response = service.handle(request).await;
                        // rmcp answers a body that is not JSON-RPC with 415; the
                        // transport spec wants 400 with a JSON-RPC parse error.
                        if json_body
                            && response.status() == hyper::StatusCode::UNSUPPORTED_MEDIA_TYPE
                        {
                            return Ok(parse_error());
                        }
                        Ok(response.map(http_body_util::Either::Left))
                    }
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

type FullBody = http_body_util::Full<bytes::Bytes>;

/// A plain-text answer.
fn plain<L>(
    status: hyper::StatusCode,
    text: String,
) -> hyper::Response<http_body_util::Either<L, FullBody>> {
    let mut response = hyper::Response::new(http_body_util::Either::Right(FullBody::from(
        format!("{text}\n"),
    )));
    *response.status_mut() = status;
    response
}

/// True when the request says its body is JSON.
fn declares_json(headers: &hyper::HeaderMap) -> bool {
    headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// `400` with a JSON-RPC `-32700` error: the body was declared JSON but is not a
/// JSON-RPC message.
fn parse_error<L>() -> hyper::Response<http_body_util::Either<L, FullBody>> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": "Parse error: the request body is not a JSON-RPC message"},
    });
    let mut response = hyper::Response::new(http_body_util::Either::Right(FullBody::from(
        body.to_string(),
    )));
    *response.status_mut() = hyper::StatusCode::BAD_REQUEST;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// For `DELETE /mcp`: 400 without a session id, 404 for a session that does not exist
/// (rmcp would answer 202 either way); `None` lets rmcp close a known session (its
/// answer becomes 200).
async fn unknown_session<L, B>(
    sessions: &LocalSessionManager,
    request: &hyper::Request<B>,
) -> Option<hyper::Response<http_body_util::Either<L, FullBody>>> {
    let Some(id) = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    else {
        return Some(plain(
            hyper::StatusCode::BAD_REQUEST,
            "missing Mcp-Session-Id header".into(),
        ));
    };
    if sessions.sessions.read().await.contains_key(id) {
        return None;
    }
    Some(plain(
        hyper::StatusCode::NOT_FOUND,
        format!("unknown MCP session {id}"),
    ))
}
