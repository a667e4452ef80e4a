//! MCP discovery: connect the enabled servers a command needs ([`McpScope`]),
//! concurrently, and register their tools; `mcp serve` does it in the background.
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

use crate::toolsets::{BUILTIN_TOOLSETS, LEGACY_TOOLSETS, ToolsetSelection, ToolsetsSettings};

use super::client::ServerClient;
use super::config::McpServerSettings;
use super::interpolate::process_env;
use super::listing_cache::ListingCache;
use super::manager::McpManager;
use super::process::{MAX_DEPTH, current_depth};
use super::readiness::{Pending, Readiness};
use super::status::{ServerState, ServerStatus};

/// Environment variable that switches MCP (and plugins) off for a process.
pub const SAFE_MODE_VAR: &str = "TOOLHOST_SAFE_MODE";

/// Which servers a command needs, and when they connect (docs/mcp.md, "Start-up and
/// stalls").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum McpScope {
    /// Connect every enabled server now, ignoring remembered failures (`mcp list`,
    /// embedders).
    #[default]
    All,
    /// The servers `selection` needs: registered from their cached listings (each
    /// connected on its first call); a server with a remembered failure is skipped; the
    /// others are connected now (`tools`, `schema`, `toolsets`).
    Cached(ToolsetSelection),
    /// Only the server that owns this tool name, as [`McpScope::Cached`] does (`call`).
    ForTool(String),
    /// Only the servers that own these tool names, as [`McpScope::Cached`] does
    /// (`dispatch`: a batch without MCP tools starts no server).
    ForTools(Vec<String>),
    /// The servers `selection` needs, registered from their cached listings; the others
    /// connect in the background (their tools appear when they are ready) — nothing
    /// waits (`mcp serve`).
    Background(ToolsetSelection),
}

impl McpScope {
    /// Every server a listing command may show (no `--toolsets`/`--disable`).
    pub fn cached() -> Self {
        McpScope::Cached(ToolsetSelection::default())
    }

    /// The scope with the configured `[toolsets]` merged into its selection (the
    /// command line's lists replace/extend them as everywhere else).
    pub fn with_config(self, settings: &ToolsetsSettings) -> Self {
        let merge = |s: ToolsetSelection| settings.selection(s.enabled, s.disabled);
        match self {
            McpScope::Cached(s) => McpScope::Cached(merge(s)),
            McpScope::Background(s) => McpScope::Background(merge(s)),
            other => other,
        }
    }

    fn wants(&self, server: &str) -> bool {
        let owns = |tool: &str| {
            tool.starts_with(&format!(
                "{}{}__",
                super::naming::PREFIX,
                super::naming::sanitize(server)
            ))
        };
        match self {
            McpScope::All => true,
            McpScope::Cached(selection) | McpScope::Background(selection) => {
                selection_needs(selection, server)
            }
            McpScope::ForTool(tool) => owns(tool),
            McpScope::ForTools(tools) => tools.iter().any(|t| owns(t)),
        }
    }

    /// True when this scope connects no server before returning.
    fn in_background(&self) -> bool {
        matches!(self, McpScope::Background(_))
    }
}

/// Whether the tools of `selection` can include those of `server` (toolset
/// `mcp-<server>`, alias `<server>`). Built-in toolsets never do; a custom toolset
/// might, so it counts as needing every server.
pub fn selection_needs(selection: &ToolsetSelection, server: &str) -> bool {
    let own = [
        super::registration::toolset_name(server),
        server.to_string(),
    ];
    if selection.disabled.iter().any(|d| own.contains(d)) {
        return false;
    }
    let Some(enabled) = selection.enabled.as_deref() else {
        return true;
    };
    enabled.iter().any(|name| {
        own.contains(name) || matches!(name.as_str(), "all" | "*") || !is_static_toolset(name)
    })
}

/// A built-in (or its `hermes-` alias) or legacy toolset: a fixed list of non-MCP tools.
fn is_static_toolset(name: &str) -> bool {
    let bare = name.strip_prefix("hermes-").unwrap_or(name);
    BUILTIN_TOOLSETS
        .iter()
        .any(|t| t.name == name || t.name == bare)
        || LEGACY_TOOLSETS.iter().any(|(legacy, _)| *legacy == name)
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

/// Connect to the servers of `servers` the scope needs and register their tools into
/// `registry`. Blocks until each has connected or failed (within its
/// `connect_timeout`), except for [`McpScope::Background`]. Callable from any thread,
/// inside a runtime or not.
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
    // Before any server process starts: a signal must not orphan one.
    super::signals::install(&runtime);
    let (readiness, pending) = Readiness::pending(clients.len());
    let connecting = runtime.spawn(connect_all(clients.clone(), options.scope.clone(), pending));
    if !options.scope.in_background()
        && let Err(err) = connecting.await
    {
        tracing::error!(%err, "MCP discovery could not run");
    }
    McpManager::new(clients, inert, Some(runtime))
        .with_readiness(readiness)
        .with_configured(servers.keys().cloned().collect())
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

/// Connect what `scope` asks for: everything for [`McpScope::All`]; otherwise a server
/// with a cached listing waits for its first call and one with a remembered failure
/// is left alone (until its back-off ends).
async fn connect_all(clients: Vec<Arc<ServerClient>>, scope: McpScope, pending: Pending) {
    let mut set = tokio::task::JoinSet::new();
    for client in clients {
        if scope != McpScope::All && (client.adopt_cached() || client.adopt_remembered_failure()) {
            pending.done();
            continue;
        }
        set.spawn(async move { client.connect().await });
    }
    while set.join_next().await.is_some() {
        pending.done();
    }
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
