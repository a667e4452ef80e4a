//! MCP discovery: connect every enabled server concurrently, register its tools.
//!
//! Each server is bounded by its own `connect_timeout`; servers connect in parallel, so
//! one dead or slow server never delays the others, and the whole step never takes
//! longer than the largest timeout. A server that fails is recorded (with its error
//! and stderr tail, for `toolhost mcp list`) and skipped; the host always starts.
//!
//! Connections live on the process-wide bridge runtime ([`tools_core::bridge`]), so
//! they outlive whatever runtime (or none) the caller uses.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::runtime::Handle;
use tools_core::Registry;

use super::client::ServerClient;
use super::config::McpServerSettings;
use super::interpolate::process_env;
use super::listing_cache::ListingCache;
use super::manager::McpManager;
use super::process::{MAX_DEPTH, current_depth};
use super::status::{ServerState, ServerStatus};

/// Environment variable that switches MCP (and plugins) off for a process.
pub const SAFE_MODE_VAR: &str = "TOOLHOST_SAFE_MODE";

/// Which servers a command needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum McpScope {
    /// Connect every enabled server now (`mcp list`, `mcp serve`, embedders).
    #[default]
    All,
    /// Register servers from their cached listings and connect each on its first call;
    /// servers without a usable listing are connected now (`tools`, `schema`,
    /// `toolsets`, `dispatch`).
    Cached,
    /// Only the server that owns this tool name, connected now (`call NAME`).
    ForTool(String),
}

impl McpScope {
    fn wants(&self, server: &str) -> bool {
        match self {
            McpScope::All | McpScope::Cached => true,
            McpScope::ForTool(tool) => tool.starts_with(&format!(
                "{}{}__",
                super::naming::PREFIX,
                super::naming::sanitize(server)
            )),
        }
    }
}

/// Inputs of discovery.
#[derive(Clone, Debug)]
pub struct DiscoveryOptions {
    /// Which servers to start.
    pub scope: McpScope,
    /// Where tool listings are cached (`None`: no cache).
    pub listing_cache: Option<PathBuf>,
    /// Where images and binary resources returned by MCP tools are saved.
    pub media_dir: PathBuf,
    /// False: record every server as skipped without starting anything.
    pub enabled: bool,
    /// Why discovery is off (shown by `toolhost mcp list`).
    pub disabled_reason: Option<String>,
}

impl DiscoveryOptions {
    /// Options from the environment: off in safe mode and beyond the nesting limit.
    pub fn from_env(media_dir: PathBuf) -> Self {
        let safe_mode = crate::plugins::safe_mode::active();
        let depth = current_depth();
        let disabled_reason = if safe_mode {
            Some(format!("{SAFE_MODE_VAR} is set"))
        } else if depth > MAX_DEPTH {
            Some(format!(
                "toolhost is nested {depth} levels deep through MCP servers (limit {MAX_DEPTH}); is toolhost configured as an MCP server of itself?"
            ))
        } else {
            None
        };
        DiscoveryOptions {
            scope: McpScope::All,
            listing_cache: None,
            media_dir,
            enabled: disabled_reason.is_none(),
            disabled_reason,
        }
    }
}

/// Connect to every server of `servers` and register their tools into `registry`.
/// Blocks until every server has connected or failed (each within its
/// `connect_timeout`). Callable from any thread, inside a runtime or not.
pub fn discover(
    servers: &BTreeMap<String, McpServerSettings>,
    registry: &Arc<Registry>,
    options: &DiscoveryOptions,
) -> McpManager {
    if servers.is_empty() {
        return McpManager::empty();
    }
    tools_core::bridge::block_on(discover_async(servers, registry, options)).unwrap_or_else(|err| {
        tracing::error!(%err, "MCP discovery skipped");
        inert_manager(servers, ServerState::Skipped, Some(err.to_string()))
    })
}

/// [`discover`] for async callers (does not block the caller's thread).
pub async fn discover_async(
    servers: &BTreeMap<String, McpServerSettings>,
    registry: &Arc<Registry>,
    options: &DiscoveryOptions,
) -> McpManager {
    if servers.is_empty() {
        return McpManager::empty();
    }
    let runtime = match tools_core::bridge::shared_runtime() {
        Ok(runtime) => runtime.handle().clone(),
        Err(err) => {
            tracing::error!(%err, "MCP discovery skipped");
            return inert_manager(servers, ServerState::Skipped, Some(err.to_string()));
        }
    };
    let (clients, inert) = prepare(servers, registry, options, &runtime);
    let use_cache = options.scope == McpScope::Cached;
    if let Err(err) = runtime.spawn(connect_all(clients.clone(), use_cache)).await {
        tracing::error!(%err, "MCP discovery could not run");
    }
    McpManager::new(clients, inert, Some(runtime))
}

/// Build clients for usable, enabled servers; statuses for the rest.
fn prepare(
    servers: &BTreeMap<String, McpServerSettings>,
    registry: &Arc<Registry>,
    options: &DiscoveryOptions,
    runtime: &Handle,
) -> (Vec<Arc<ServerClient>>, Vec<ServerStatus>) {
    let mut clients = Vec::new();
    let mut inert = Vec::new();
    for (name, settings) in servers {
        let resolved = match settings.resolve(name, &process_env) {
            Ok(resolved) => resolved,
            Err(err) => {
                tracing::warn!(server = %name, error = %err, "MCP server skipped");
                inert.push(ServerStatus::inert(
                    name,
                    "-",
                    ServerState::Misconfigured,
                    Some(err.to_string()),
                ));
                continue;
            }
        };
        super::secrets::remember(&resolved.secrets);
        let transport = resolved.transport.kind();
        if !settings.enabled {
            inert.push(ServerStatus::inert(
                name,
                transport,
                ServerState::Disabled,
                None,
            ));
            continue;
        }
        if !options.scope.wants(name) {
            continue;
        }
        if !options.enabled {
            inert.push(ServerStatus::inert(
                name,
                transport,
                ServerState::Skipped,
                options.disabled_reason.clone(),
            ));
            continue;
        }
        clients.push(ServerClient::with_cache(
            resolved,
            Arc::clone(registry),
            runtime.clone(),
            options.media_dir.clone(),
            options.listing_cache.clone().map(ListingCache::new),
        ));
    }
    (clients, inert)
}

async fn connect_all(clients: Vec<Arc<ServerClient>>, use_cache: bool) {
    let mut set = tokio::task::JoinSet::new();
    for client in clients {
        if use_cache && client.adopt_cached() {
            continue;
        }
        set.spawn(async move { client.connect().await });
    }
    while set.join_next().await.is_some() {}
}

fn inert_manager(
    servers: &BTreeMap<String, McpServerSettings>,
    state: ServerState,
    error: Option<String>,
) -> McpManager {
    let inert = servers
        .keys()
        .map(|name| ServerStatus::inert(name, "-", state, error.clone()))
        .collect();
    McpManager::new(Vec::new(), inert, None)
}
