//! One live connection to an MCP server (stdio child or streamable HTTP), built on rmcp.
//!
//! This is the only place that talks rmcp's client API: connecting, listing tools,
//! calling a tool with a timeout and cancellation, and closing. Everything above works
//! with [`Session`], [`CallFailure`] and plain JSON.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ServiceExt as _;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use super::client_handler::{McpClientHandler, ToolsChanged};
use super::config::{ResolvedServer, TransportOptions};
use super::error::McpError;
use super::process::{self, SHUTDOWN_STEP, StdioProcess};
use super::rmcp_errors::{initialize_error, service_error};
use super::stderr_ring::StderrRing;
use super::stdout_tap::StdoutTap;
use super::task_support::TaskSupportTap;

/// Lines of stderr quoted in error messages.
const STDERR_TAIL_LINES: usize = 12;

/// Why a call did not produce a result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallFailure {
    /// No answer within the call timeout.
    Timeout(Duration),
    /// The connection is gone (process died, HTTP session lost).
    TransportClosed(String),
    /// The caller cancelled the call.
    Cancelled,
    /// The server answered with a JSON-RPC error (it is alive; the request was bad).
    Rejected(String),
}

impl CallFailure {
    /// True when the failure says something about the server's health.
    pub fn counts_against_server(&self) -> bool {
        matches!(
            self,
            CallFailure::Timeout(_) | CallFailure::TransportClosed(_)
        )
    }
}

/// A server's tools as listed, with what rmcp's [`Tool`] cannot hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolListing {
    /// Every tool (all pages).
    pub tools: Vec<Tool>,
    /// Raw names of the tools that can only be called as MCP tasks (`task_support.rs`).
    pub task_required: BTreeSet<String>,
    /// Whether the server offers resources and prompts (`resources.rs`).
    pub offers: super::resources::Offers,
}

/// A connected server.
pub struct Session {
    server: String,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, McpClientHandler>>>,
    process: Mutex<Option<StdioProcess>>,
    pid: Option<u32>,
    stderr: StderrRing,
    server_version: Option<String>,
    broken: AtomicBool,
    tap: Arc<TaskSupportTap>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("server", &self.server)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Connect and run the MCP handshake (no timeout here: the caller bounds it).
    pub async fn connect(
        server: &ResolvedServer,
        stderr: StderrRing,
        tools_changed: Option<ToolsChanged>,
    ) -> Result<Session, McpError> {
        let handler = McpClientHandler::new(&server.name, tools_changed);
        let tap = Arc::new(TaskSupportTap::new());
        match &server.transport {
            TransportOptions::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let (process, stdout, stdin) = process::spawn(
                    &server.name,
                    command,
                    args,
                    env,
                    cwd.as_deref(),
                    stderr.clone(),
                )?;
                let pid = process.pid();
                let stdout = StdoutTap::new(stdout, Arc::clone(&tap));
                match handler.serve((stdout, stdin)).await {
                    Ok(service) => Ok(Session::new(
                        &server.name,
                        service,
                        Some(process),
                        Some(pid),
                        stderr,
                        tap,
                    )),
                    Err(err) => {
                        let message = with_process_context(initialize_error(&err), &process).await;
                        process.shutdown(Duration::from_millis(200)).await;
                        Err(McpError::Protocol {
                            server: server.name.clone(),
                            stage: "initialize",
                            message,
                        })
                    }
                }
            }
            TransportOptions::Http { url, headers } => {
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(http_headers(&server.name, headers)?);
                let transport = StreamableHttpClientTransport::with_client(
                    super::http_client::SessionAwareClient::new(Arc::clone(&tap)),
                    config,
                );
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|err| McpError::Protocol {
                        server: server.name.clone(),
                        stage: "initialize",
                        message: format!("{} (url {url})", initialize_error(&err)),
                    })?;
                Ok(Session::new(&server.name, service, None, None, stderr, tap))
            }
        }
    }

    fn new(
        server: &str,
        service: RunningService<RoleClient, McpClientHandler>,
        process: Option<StdioProcess>,
        pid: Option<u32>,
        stderr: StderrRing,
        tap: Arc<TaskSupportTap>,
    ) -> Session {
        let server_version = service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.clone())
            .map(|info| format!("{} {}", info.name, info.version));
        Session {
            server: server.to_string(),
            peer: service.peer().clone(),
            service: tokio::sync::Mutex::new(Some(service)),
            process: Mutex::new(process),
            pid,
            stderr,
            server_version,
            broken: AtomicBool::new(false),
            tap,
        }
    }

    /// The stdio server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// `name version` the server reported.
    pub fn server_version(&self) -> Option<&str> {
        self.server_version.as_deref()
    }

    /// Treat the connection as gone (a request failed at the transport level: an HTTP
    /// server that went away may leave the transport looking open).
    pub fn mark_broken(&self) {
        self.broken.store(true, Ordering::Release);
    }

    /// True while the connection can carry requests.
    pub fn is_alive(&self) -> bool {
        if self.broken.load(Ordering::Acquire) || self.peer.is_transport_closed() {
            return false;
        }
        let process = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        process.as_ref().is_none_or(|p| p.exit_status().is_none())
    }

    /// Why the connection is gone, with the process's exit status and stderr tail.
    pub fn death_note(&self) -> String {
        let process = self.process.lock().unwrap_or_else(PoisonError::into_inner);
        let mut note = String::from("the connection to the server closed");
        if let Some(status) = process.as_ref().and_then(StdioProcess::exit_status) {
            note = format!("the server process exited ({status})");
        }
        let tail = self.stderr.tail_text(STDERR_TAIL_LINES);
        if !tail.is_empty() {
            note.push_str(&format!("; its stderr ends with:\n{tail}"));
        }
        note
    }

    /// Every tool the server offers (all pages).
    pub async fn list_tools(&self) -> Result<ToolListing, McpError> {
        self.tap.reset();
        let tools = self
            .peer
            .list_all_tools()
            .await
            .map_err(|err| McpError::Protocol {
                server: self.server.clone(),
                stage: "tools/list",
                message: service_error(&err),
            })?;
        Ok(ToolListing {
            tools,
            task_required: self.tap.required(),
            offers: self.offers(),
        })
    }

    /// What the server said it offers besides tools.
    pub fn offers(&self) -> super::resources::Offers {
        let info = self.peer.peer_info();
        let capabilities = info.as_ref().map(|info| &info.capabilities);
        super::resources::Offers {
            resources: capabilities.is_some_and(|c| c.resources.is_some()),
            prompts: capabilities.is_some_and(|c| c.prompts.is_some()),
        }
    }

    /// The rmcp peer, for the requests `resources.rs` makes.
    pub(super) fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    /// Call `tool` with `arguments`, bounded by `timeout`; `cancel` sends
    /// `notifications/cancelled` to the server and returns at once. `progress_token`
    /// asks the server for progress notifications (see `progress_relay.rs`).
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
        cancel: &CancellationToken,
        progress_token: Option<&str>,
    ) -> Result<CallToolResult, CallFailure> {
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        if let Some(token) = progress_token {
            use rmcp::model::RequestParamsMeta as _;
            params.set_progress_token(rmcp::model::ProgressToken(
                rmcp::model::NumberOrString::String(token.into()),
            ));
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await
            .map_err(|err| classify(err, timeout))?;
        let id = handle.id.clone();
        tokio::select! {
            response = handle.await_response() => match response {
                Ok(ServerResult::CallToolResult(result)) => Ok(result),
                Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::success(Vec::new())),
                Ok(other) => Err(CallFailure::Rejected(format!(
                    "unexpected answer to tools/call: {}",
                    serde_json::to_string(&other).unwrap_or_default()
                ))),
                Err(err) => Err(classify(err, timeout)),
            },
            () = cancel.cancelled() => {
                let notice = CancelledNotificationParam::new(
                    Some(id),
                    Some("cancelled by the caller".to_string()),
                );
                if let Err(err) = self.peer.notify_cancelled(notice).await {
                    tracing::debug!(server = %self.server, %err, "could not send notifications/cancelled");
                }
                Err(CallFailure::Cancelled)
            }
        }
    }

    /// Close the connection, then stop the process (close → TERM → KILL).
    pub async fn shutdown(&self) {
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = service.close_with_timeout(SHUTDOWN_STEP).await;
        }
        let process = self
            .process
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(process) = process {
            process.shutdown(SHUTDOWN_STEP).await;
        }
    }
}

fn classify(err: ServiceError, timeout: Duration) -> CallFailure {
    match err {
        ServiceError::McpError(data) => CallFailure::Rejected(data.message.to_string()),
        ServiceError::Timeout { .. } => CallFailure::Timeout(timeout),
        ServiceError::Cancelled { .. } => CallFailure::Cancelled,
        ServiceError::TransportClosed => CallFailure::TransportClosed("transport closed".into()),
        other => CallFailure::TransportClosed(service_error(&other)),
    }
}

/// Add the exit status and stderr tail of a stdio server that failed its handshake.
async fn with_process_context(message: String, process: &StdioProcess) -> String {
    process.settle(Duration::from_millis(500)).await;
    let mut text = message;
    if let Some(status) = process.exit_status() {
        text.push_str(&format!("; the server process exited ({status})"));
    }
    let tail = process.stderr().tail_text(STDERR_TAIL_LINES);
    if !tail.is_empty() {
        text.push_str(&format!("; its stderr ends with:\n{tail}"));
    }
    text
}

fn http_headers(
    server: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<HashMap<http::HeaderName, http::HeaderValue>, McpError> {
    let reserved = ["accept", "mcp-session-id", "last-event-id"];
    let mut out = HashMap::new();
    for (name, value) in headers {
        if reserved.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(McpError::HttpSetup {
                server: server.to_string(),
                message: format!(
                    "header {name:?} is managed by the MCP transport and cannot be set"
                ),
            });
        }
        let header =
            http::HeaderName::from_bytes(name.as_bytes()).map_err(|e| McpError::HttpSetup {
                server: server.to_string(),
                message: format!("invalid header name {name:?}: {e}"),
            })?;
        let value = http::HeaderValue::from_str(value).map_err(|e| McpError::HttpSetup {
            server: server.to_string(),
            message: format!("invalid value for header {name:?}: {e}"),
        })?;
        out.insert(header, value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn header_checks() {
        let ok: BTreeMap<String, String> = [
            ("Authorization".to_string(), "Bearer abc".to_string()),
            ("X-Api-Version".to_string(), "2".to_string()),
        ]
        .into();
        assert_eq!(http_headers("s", &ok).unwrap().len(), 2);
        for (name, value, want) in [
            ("Accept", "text/plain", "managed by the MCP transport"),
            ("mcp-session-id", "x", "managed by the MCP transport"),
            ("bad header", "x", "invalid header name"),
            ("X-Ok", "line\nbreak", "invalid value for header"),
        ] {
            let headers: BTreeMap<String, String> = [(name.to_string(), value.to_string())].into();
            let err = http_headers("s", &headers).unwrap_err().to_string();
            assert!(err.contains(want) && err.contains("'s'"), "{name}: {err}");
        }
    }

    #[test]
    fn a_server_that_cannot_be_reached_is_reported_without_rmcp_type_names() {
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let settings: super::super::config::McpServerSettings =
            toml::from_str(&format!("url = \"http://127.0.0.1:{port}/mcp\"")).unwrap();
        let server = settings.resolve("gone", &|_| None).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let err = runtime
            .block_on(Session::connect(&server, StderrRing::new(), None))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "MCP server 'gone': initialize failed: could not send initialize request: "
            ),
            "{err}"
        );
        assert!(
            err.ends_with(&format!("(url http://127.0.0.1:{port}/mcp)")),
            "{err}"
        );
        assert!(
            !err.contains("rmcp::") && !err.contains("Transport ["),
            "{err}"
        );
    }

    #[test]
    fn only_timeouts_and_lost_transports_count_against_a_server() {
        assert!(CallFailure::Timeout(Duration::from_secs(1)).counts_against_server());
        assert!(CallFailure::TransportClosed("x".into()).counts_against_server());
        assert!(!CallFailure::Rejected("bad params".into()).counts_against_server());
        assert!(!CallFailure::Cancelled.counts_against_server());
    }
}
