//! One configured MCP server as toolhost sees it: its connection (made, lost, remade),
//! its circuit breaker, the tools it registered, and its status for `toolhost mcp list`.
//!
//! Calls come from the registry's async handlers, on any runtime. Everything that
//! creates a connection runs on the MCP runtime (the process-wide bridge runtime), so
//! the connection's background tasks outlive whichever runtime made the call.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use serde_json::Value;
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;
use tools_core::{Registry, ToolContext};

use super::breaker::Breaker;
use super::config::{ResolvedServer, ToolFilter};
use super::error::McpError;
use super::failure_memory::FailureMemory;
use super::listing_cache::ListingCache;
use super::registration::{self, Registration, SkippedTool};
use super::resources::{self, Utility};
use super::results::{call_result_value, error_value};
use super::secrets::redact;
use super::session::{CallFailure, Session, ToolListing};
use super::status::{ServerState, ServerStatus};
use super::stderr_ring::StderrRing;

#[derive(Debug, Default)]
struct Tracked {
    state: Option<ServerState>,
    last_error: Option<String>,
    registration: Registration,
    server_version: Option<String>,
}

/// A configured, enabled server.
pub struct ServerClient {
    config: ResolvedServer,
    registry: Arc<Registry>,
    runtime: Handle,
    media_dir: PathBuf,
    breaker: Breaker,
    stderr: StderrRing,
    session: tokio::sync::Mutex<Option<Arc<Session>>>,
    tracked: Mutex<Tracked>,
    closed: AtomicBool,
    /// Fired by shutdown: a connection attempt in progress is abandoned (its process
    /// killed) instead of holding shutdown up for the rest of its timeout.
    stop: CancellationToken,
    cache: Option<ListingCache>,
    failures: Option<FailureMemory>,
    me: Weak<ServerClient>,
}

impl std::fmt::Debug for ServerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerClient")
            .field("server", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl ServerClient {
    /// A client for `config`; nothing is started until [`ServerClient::connect`].
    pub fn new(
        config: ResolvedServer,
        registry: Arc<Registry>,
        runtime: Handle,
        media_dir: PathBuf,
    ) -> Arc<Self> {
        Self::with_cache(config, registry, runtime, media_dir, None)
    }

    /// Like [`ServerClient::new`], saving every tool listing to `cache`.
    pub fn with_cache(
        config: ResolvedServer,
        registry: Arc<Registry>,
        runtime: Handle,
        media_dir: PathBuf,
        cache: Option<ListingCache>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| ServerClient {
            breaker: Breaker::new(config.breaker_threshold, config.breaker_cooldown),
            config,
            registry,
            runtime,
            media_dir,
            stderr: StderrRing::new(),
            session: tokio::sync::Mutex::new(None),
            tracked: Mutex::new(Tracked::default()),
            closed: AtomicBool::new(false),
            stop: CancellationToken::new(),
            failures: cache.as_ref().map(|c| FailureMemory::new(c.dir())),
            cache,
            me: me.clone(),
        })
    }

    /// Register the tools of a cached listing without connecting; the first call
    /// connects. False (nothing registered) when there is no usable listing.
    pub fn adopt_cached(&self) -> bool {
        let Some(listing) = self.cache.as_ref().and_then(|c| c.load(&self.config)) else {
            return false;
        };
        let Some(me) = self.me.upgrade() else {
            return false;
        };
        let previous = self.tracked().registration.registered.clone();
        let registration = registration::register_tools(&self.registry, &me, &listing, &previous);
        tracing::debug!(server = %self.config.name, tools = registration.registered.len(), "MCP tools from the cached listing");
        self.tracked().registration = registration;
        true
    }

    /// Record the server as failed without connecting when it failed recently (its
    /// back-off has not ended). False when there is no such failure.
    pub fn adopt_remembered_failure(&self) -> bool {
        let Some(failure) = self.failures.as_ref().and_then(|m| m.recent(&self.config)) else {
            return false;
        };
        tracing::debug!(server = %self.config.name, retry_in = failure.retry_in, "MCP server skipped: it failed recently");
        let mut tracked = self.tracked();
        tracked.state = Some(ServerState::Failed);
        tracked.last_error = Some(failure.describe());
        true
    }

    fn cache_listing(&self, listing: &ToolListing) {
        if let Some(cache) = &self.cache {
            cache.store(&self.config, listing);
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Its tool filter.
    pub fn filter(&self) -> &ToolFilter {
        &self.config.tools
    }

    /// True when its tools may run concurrently.
    pub fn parallel(&self) -> bool {
        self.config.parallel
    }

    fn tracked(&self) -> std::sync::MutexGuard<'_, Tracked> {
        self.tracked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// First connection (discovery): connect, list and register, within
    /// `connect_timeout`. Failures are recorded, not returned.
    pub async fn connect(&self) {
        let mut slot = self.session.lock().await;
        match self.open_session().await {
            Ok(session) => *slot = Some(session),
            Err(_) if self.stop.is_cancelled() => {
                tracing::debug!(server = %self.config.name, "MCP connection abandoned: shutting down");
            }
            Err(err) => {
                tracing::warn!(server = %self.config.name, error = %one_line(&redact(&err.to_string())), "MCP server not connected");
            }
        }
    }

    /// Connect (on the MCP runtime) and register the tools; records the outcome.
    async fn open_session(&self) -> Result<Arc<Session>, McpError> {
        let Some(me) = self.me.upgrade() else {
            return Err(McpError::Runtime("the MCP client is shutting down".into()));
        };
        let connect = self
            .runtime
            .spawn(async move { me.connect_within_timeout().await });
        let outcome = match connect.await {
            Ok(outcome) => outcome,
            Err(join) => Err(McpError::Runtime(format!("connect task failed: {join}"))),
        };
        match &outcome {
            Ok(_) => {
                if let Some(memory) = &self.failures {
                    memory.clear(&self.config.name);
                }
            }
            Err(err) if !self.stop.is_cancelled() => {
                if let Some(memory) = &self.failures {
                    memory.record(&self.config, &redact(&err.to_string()));
                }
            }
            Err(_) => {}
        }
        let mut tracked = self.tracked();
        match outcome {
            Ok((session, registration)) => {
                tracked.state = Some(ServerState::Connected);
                tracked.last_error = None;
                tracked.server_version = session.server_version().map(str::to_string);
                tracked.registration = registration;
                Ok(session)
            }
            Err(err) => {
                tracked.state = Some(ServerState::Failed);
                tracked.last_error = Some(redact(&err.to_string()));
                Err(err)
            }
        }
    }

    async fn connect_within_timeout(
        self: Arc<Self>,
    ) -> Result<(Arc<Session>, Registration), McpError> {
        let limit = self.config.connect_timeout;
        let weak = Arc::downgrade(&self);
        let runtime = self.runtime.clone();
        let tools_changed: super::client_handler::ToolsChanged = Arc::new(move || {
            if let Some(client) = weak.upgrade() {
                runtime.spawn(async move { client.refresh_tools().await });
            }
        });
        let attempt = async {
            let session =
                Session::connect(&self.config, self.stderr.clone(), Some(tools_changed)).await?;
            let tools = session.list_tools().await?;
            Ok::<_, McpError>((session, tools))
        };
        let attempt = tokio::time::timeout(limit, attempt);
        let (session, tools) = tokio::select! {
            outcome = attempt => match outcome {
                Ok(result) => result?,
                Err(_) => {
                    return Err(McpError::ConnectTimeout {
                        server: self.config.name.clone(),
                        limit,
                    });
                }
            },
            () = self.stop.cancelled() => {
                return Err(McpError::NotStarted {
                    server: self.config.name.clone(),
                    reason: "toolhost is shutting down its MCP servers".into(),
                });
            }
        };
        self.cache_listing(&tools);
        let previous = self.tracked().registration.registered.clone();
        let registration = registration::register_tools(&self.registry, &self, &tools, &previous);
        tracing::info!(
            server = %self.config.name,
            tools = registration.registered.len(),
            skipped = registration.skipped.len(),
            "MCP server connected"
        );
        Ok((Arc::new(session), registration))
    }

    /// Re-list and re-register the tools (the server said its list changed).
    async fn refresh_tools(self: Arc<Self>) {
        let session = self.session.lock().await.clone();
        let Some(session) = session else { return };
        match tokio::time::timeout(self.config.connect_timeout, session.list_tools()).await {
            Ok(Ok(tools)) => {
                self.cache_listing(&tools);
                let previous = self.tracked().registration.registered.clone();
                let registration =
                    registration::register_tools(&self.registry, &self, &tools, &previous);
                self.tracked().registration = registration;
            }
            Ok(Err(err)) => {
                tracing::warn!(server = %self.config.name, err = %redact(&err.to_string()), "re-listing MCP tools failed")
            }
            Err(_) => tracing::warn!(server = %self.config.name, "re-listing MCP tools timed out"),
        }
    }

    /// A live session: the current one, or a new connection when it dropped.
    async fn live_session(&self) -> Result<Arc<Session>, McpError> {
        let mut slot = self.session.lock().await;
        if self.closed.load(Ordering::Acquire) {
            return Err(McpError::NotStarted {
                server: self.config.name.clone(),
                reason: "toolhost is shutting down its MCP servers".into(),
            });
        }
        if let Some(session) = slot.as_ref() {
            if session.is_alive() {
                return Ok(Arc::clone(session));
            }
            let note = session.death_note();
            tracing::warn!(server = %self.config.name, note = %redact(&note), "MCP server connection lost; reconnecting");
            if let Some(dead) = slot.take() {
                self.runtime.spawn(async move { dead.shutdown().await });
            }
        }
        let session = self.open_session().await?;
        *slot = Some(Arc::clone(&session));
        Ok(session)
    }

    /// Run `raw` (wire name `wire`) with `args`; always a `{"result"}`/`{"error"}` value.
    pub async fn call(&self, raw: &str, wire: &str, args: Value, ctx: &ToolContext) -> Value {
        let server = self.config.name.as_str();
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return error_value(&format!(
                    "Invalid arguments for {wire}: expected a JSON object, got {other}"
                ));
            }
        };
        let session = match self.session_for_call(&ctx.cancel).await {
            Ok(session) => session,
            Err(refusal) => return refusal,
        };
        // A client of `mcp serve` waiting on this call gets the server's own progress.
        let progress = super::progress_relay::upstream_token(&ctx.tool_call_id);
        let outcome = session
            .call_tool(
                raw,
                arguments,
                self.config.call_timeout,
                &ctx.cancel,
                progress
                    .as_ref()
                    .map(super::progress_relay::UpstreamToken::as_str),
            )
            .await
            .map(|result| call_result_value(server, &result, &self.media_dir));
        self.settle(wire, &session, outcome)
    }

    /// Run one of the server's resource/prompt tools (`resources.rs`).
    pub async fn utility(
        &self,
        utility: Utility,
        wire: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Value {
        if let Err(refusal) = resources::check_args(utility, &args) {
            return refusal;
        }
        let session = match self.session_for_call(&ctx.cancel).await {
            Ok(session) => session,
            Err(refusal) => return refusal,
        };
        let request = resources::Request {
            server: &self.config.name,
            session: &session,
            timeout: self.config.call_timeout,
            cancel: &ctx.cancel,
            media_dir: &self.media_dir,
        };
        let outcome = resources::run(utility, args, request).await;
        self.settle(wire, &session, outcome)
    }

    /// The session a call goes to, or the model-facing refusal (breaker open, not
    /// connected, cancelled while connecting).
    async fn session_for_call(&self, cancel: &CancellationToken) -> Result<Arc<Session>, Value> {
        let server = self.config.name.as_str();
        if let Err(remaining) = self.breaker.check() {
            return Err(error_value(&self.breaker.open_message(server, remaining)));
        }
        let session = tokio::select! {
            session = self.live_session() => session,
            () = cancel.cancelled() => return Err(error_value(&format!("MCP call to '{server}' cancelled before it started"))),
        };
        session.map_err(|err| self.failed(format!("MCP server '{server}' is not connected: {err}")))
    }

    /// The model's JSON for the outcome of a request to the server, feeding the breaker.
    fn settle(&self, wire: &str, session: &Session, outcome: Result<Value, CallFailure>) -> Value {
        let server = self.config.name.as_str();
        match outcome {
            Ok(value) => {
                self.breaker.record_success();
                value
            }
            Err(CallFailure::Rejected(message)) => {
                self.breaker.record_success();
                error_value(&format!("MCP call failed: {wire}: {message}"))
            }
            Err(CallFailure::Cancelled) => {
                error_value(&format!("MCP call to {wire} was cancelled"))
            }
            Err(CallFailure::Timeout(limit)) => self.failed(format!(
                "MCP tool {wire} timed out after {}s (server '{server}' sent no answer). If the tool legitimately needs longer, raise mcp_servers.{server}.timeout; if the server is stuck, a longer timeout will not help.",
                limit.as_secs_f64()
            )),
            Err(CallFailure::TransportClosed(detail)) => {
                session.mark_broken();
                let note = session.death_note();
                self.tracked().last_error = Some(redact(&format!("{detail}: {note}")));
                self.failed(format!(
                    "MCP server '{server}' transport is down ({note}); it will be reconnected on the next call. Do NOT retry this tool immediately — give it a few seconds to come back."
                ))
            }
        }
    }

    /// Record a server failure; the message says when the breaker opened.
    fn failed(&self, message: String) -> Value {
        let opened = self.breaker.record_failure();
        self.tracked().last_error = Some(redact(&message));
        if opened {
            tracing::warn!(
                server = %self.config.name,
                failures = self.breaker.failures(),
                "MCP circuit breaker open"
            );
            return error_value(&format!(
                "{message} The server has now failed {} times in a row: calls to it are paused for {}s.",
                self.breaker.failures(),
                self.config.breaker_cooldown.as_secs_f64().ceil() as u64
            ));
        }
        error_value(&message)
    }

    /// Close the connection and stop the process; later calls are refused.
    pub async fn shutdown(&self) {
        self.closed.store(true, Ordering::Release);
        self.stop.cancel();
        let session = self.session.lock().await.take();
        if let Some(session) = session {
            session.shutdown().await;
        }
        let mut tracked = self.tracked();
        if tracked.state == Some(ServerState::Connected) {
            tracked.state = Some(ServerState::Stopped);
        }
    }

    /// The current status.
    pub fn status(&self) -> ServerStatus {
        let live = self
            .session
            .try_lock()
            .ok()
            .and_then(|slot| slot.as_ref().map(|s| (s.is_alive(), s.pid())));
        let tracked = self.tracked();
        let mut state = tracked.state.unwrap_or(ServerState::Pending);
        if state == ServerState::Connected && live.is_some_and(|(alive, _)| !alive) {
            state = ServerState::Disconnected;
        }
        if self.breaker.is_open() {
            state = ServerState::BreakerOpen;
        }
        ServerStatus {
            name: self.config.name.clone(),
            transport: self.config.transport.kind().to_string(),
            state,
            tools: tracked.registration.registered.clone(),
            skipped_tools: tracked.registration.skipped.clone(),
            last_error: tracked.last_error.clone(),
            pid: live.and_then(|(_, pid)| pid),
            server_version: tracked.server_version.clone(),
            stderr_tail: self.stderr.tail(20).iter().map(|l| redact(l)).collect(),
        }
    }

    /// Tools this server registered.
    pub fn registered_tools(&self) -> Vec<String> {
        self.tracked().registration.registered.clone()
    }

    /// Tools it offered but that were not registered.
    pub fn skipped_tools(&self) -> Vec<SkippedTool> {
        self.tracked().registration.skipped.clone()
    }

    /// The call timeout.
    pub fn call_timeout(&self) -> Duration {
        self.config.call_timeout
    }
}

/// A multi-line error (with a stderr tail) as one log line: its first line and, when
/// there is more, its last non-empty line (usually the one that explains it).
fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    match text.lines().rev().find(|l| !l.trim().is_empty()) {
        Some(last) if last != first => format!("{first} … {}", last.trim()),
        _ => first.to_string(),
    }
}
