//! Assembling a running toolhost: home → configuration → registry and hooks → core
//! tools → plugins → MCP servers → dispatch pipeline.
//!
//! Plugins are discovered after the core tools, so a plugin tool that would replace a
//! core tool can be refused (unless its manifest has `override` permission).
//!
//! Discovery never fails as a whole: a core tool, plugin or server that cannot load is
//! logged, recorded for `doctor`-style reporting, and skipped.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tools_core::approval::{ApprovalEngine, ApprovalObserver, Surfaces};
use tools_core::code_exec::ToolCaller;
use tools_core::home::HomeError;
use tools_core::tools::{CoreToolFailure, register_core_tools};
use tools_core::{
    AgentLoopState, ConfigAllowlist, CoreServices, Home, Hooks, Registry, ToolContext,
};

use crate::batch::{BatchOptions, PathResolver, canonical_path};
use crate::config::{ConfigError, LoadedConfig};
use crate::dispatch::{AgentLoopHandler, Dispatcher};
use crate::mcp::{DiscoveryOptions, McpManager, McpScope};
use crate::plugins::{PluginSet, Roots, load_plugins};
use crate::spill::ResultSpill;
use crate::toolsets::{Toolsets, ToolsetsError};

/// What to start.
#[derive(Clone, Debug)]
pub struct StartOptions {
    /// `--home`.
    pub home: Option<PathBuf>,
    /// `--config`.
    pub config: Option<PathBuf>,
    /// Who is asked to approve flagged commands. The CLI prompts on the controlling
    /// terminal when there is one; with nobody to ask, the `[approvals] no_human`
    /// policy applies (deny by default). The MCP server asks its client instead.
    pub approval_surfaces: Surfaces,
    /// Do not start the configured MCP servers (their tools are then absent).
    pub skip_mcp: bool,
    /// Which MCP servers to start, and whether cached tool listings may stand in for
    /// a connection until a tool is called.
    pub mcp_scope: McpScope,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            home: None,
            config: None,
            approval_surfaces: Surfaces::terminal(),
            skip_mcp: false,
            mcp_scope: McpScope::All,
        }
    }
}

/// Why toolhost could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// No home directory.
    #[error(transparent)]
    Home(#[from] HomeError),
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A user-defined toolset is invalid.
    #[error("config: {0}")]
    Toolsets(#[from] ToolsetsError),
}

impl AgentLoopHandler for AgentLoopState {
    fn handle(
        &self,
        name: &str,
        args: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Option<serde_json::Value> {
        AgentLoopState::handle(self, name, args, ctx)
    }
}

/// `execute_code` scripts call tools through the whole pipeline (validation, hooks,
/// approval), exactly like direct calls.
struct PipelineCaller(Dispatcher);

impl ToolCaller for PipelineCaller {
    fn call(&self, name: &str, args: &serde_json::Value, ctx: &ToolContext) -> String {
        self.0.handle_function_call(name, &args.to_string(), ctx)
    }

    fn available(&self, name: &str) -> bool {
        self.0
            .registry()
            .get(name)
            .is_some_and(|entry| entry.check.as_ref().is_none_or(|c| c.evaluate().available))
    }
}

/// A running toolhost.
pub struct Toolhost {
    /// The home directory.
    pub home: Home,
    /// The configuration in effect.
    pub config: LoadedConfig,
    /// Every registered tool.
    pub registry: Arc<Registry>,
    /// Every registered hook.
    pub hooks: Arc<Hooks>,
    /// Services the core tools were built with.
    pub services: Arc<CoreServices>,
    /// Built-in and user-defined toolsets.
    pub toolsets: Toolsets,
    /// The dispatch pipeline.
    pub dispatcher: Dispatcher,
    /// Core tools that failed to register.
    pub core_failures: Vec<CoreToolFailure>,
    /// Every plugin found: loaded, disabled or failed.
    pub plugins: PluginSet,
    /// The MCP servers whose tools are registered (stopped by [`Toolhost::shutdown`]).
    pub mcp: McpManager,
    /// The FIFO `toolhost plugins reload` writes to, while process plugins run.
    reload_channel: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Toolhost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolhost")
            .field("home", &self.home)
            .field("registry", &self.registry)
            .finish_non_exhaustive()
    }
}

impl Drop for Toolhost {
    /// Kill background processes and remove containers / close ssh connections of the
    /// terminal's execution environments (idempotent; `process::exit` skips it, so exit
    /// paths that bypass drop must call `services.shutdown()` themselves).
    fn drop(&mut self) {
        crate::plugins::process::shutdown::stop_all(&self.plugins);
        self.services.shutdown();
        if let Some(fifo) = &self.reload_channel {
            crate::plugins::control::stop_listening(fifo);
        }
    }
}

/// Remove temporary files a killed toolhost process left in the home (the state and
/// results trees and the home itself, where `config.toml` is rewritten).
fn remove_leftover_temp_files(home: &Home) {
    let removed = tools_core::atomic_file::remove_stale_temp_files(home.root());
    if removed > 0 {
        tracing::debug!(removed, "removed leftover temporary files from the home");
    }
}

impl Toolhost {
    /// Discover everything and build the pipeline.
    pub fn start(options: &StartOptions) -> Result<Self, StartError> {
        let home = Home::resolve(options.home.as_deref())?;
        remove_leftover_temp_files(&home);
        let config = LoadedConfig::load(options.config.as_deref(), &home.config_file())?;
        let registry = Arc::new(Registry::new());
        let hooks = Arc::new(Hooks::new());
        let approval = ApprovalEngine::new(
            config.config.approvals.clone(),
            Arc::new(ConfigAllowlist::new(
                config.path.clone().unwrap_or_else(|| home.config_file()),
            )),
            Arc::clone(&hooks) as Arc<dyn ApprovalObserver>,
            options.approval_surfaces.clone(),
        );
        let services = Arc::new(CoreServices::new(
            home.clone(),
            config.config.core_settings(),
            Arc::clone(&hooks),
            approval,
        ));
        let toolsets = Toolsets::from_config(&config.config.toolsets)?;
        let core_failures = register_core_tools(&registry, &services);
        let plugin_config = &config.config.plugins;
        let roots = Roots::from_process(&home, plugin_config);
        let plugins = load_plugins(&home, plugin_config, &roots, &registry, &hooks);
        let reload_channel = crate::plugins::control::listen(&home, &plugins, &registry, &hooks);
        // MCP last: its tools never shadow core or plugin tools.
        let mcp = if options.skip_mcp {
            McpManager::empty()
        } else {
            crate::mcp::discover(
                &config.config.mcp_servers,
                &registry,
                &DiscoveryOptions {
                    scope: options
                        .mcp_scope
                        .clone()
                        .with_config(&config.config.toolsets),
                    listing_cache: Some(home.state_dir().join("mcp-tools")),
                    ..DiscoveryOptions::from_env(home.results_dir().join("mcp-media"))
                },
            )
        };
        let agent_loop: Arc<dyn AgentLoopHandler> =
            Arc::new(AgentLoopState::from_services(&services));
        let spill = ResultSpill::new(home.results_dir()).with_limits(config.config.results.clone());
        spill.prune();
        let dispatcher = Dispatcher::new(Arc::clone(&registry), Arc::clone(&hooks), spill)
            .with_agent_loop(agent_loop)
            .with_default_limit(config.config.dispatch.max_result_chars)
            .with_unknown_tool_note(mcp.unknown_tool_note());
        let caller: Arc<dyn ToolCaller> = Arc::new(PipelineCaller(dispatcher.clone()));
        services.tool_caller.set(Arc::clone(&caller));
        crate::plugins::python::load::route_dispatch(&plugins, &registry, &caller);
        services
            .cron
            .executor
            .set(Arc::new(crate::cron::AgentExecutor::new(
                home.clone(),
                config.config.clone(),
                Arc::clone(&registry),
                Toolsets::from_config(&config.config.toolsets)?,
                Arc::clone(&services),
                dispatcher.clone(),
            )));
        Ok(Toolhost {
            home,
            config,
            registry,
            hooks,
            services,
            toolsets,
            dispatcher,
            core_failures,
            plugins,
            mcp,
            reload_channel,
        })
    }

    /// Stop everything that runs beside the host: MCP server processes, then the
    /// terminal's environments and background processes. Idempotent; also done on drop.
    pub fn shutdown(&self) {
        crate::plugins::process::shutdown::stop_all(&self.plugins);
        self.mcp.shutdown();
        self.services.shutdown();
        if let Some(fifo) = &self.reload_channel {
            crate::plugins::control::stop_listening(fifo);
        }
    }

    /// Batch options from `[dispatch]`, for calls of `context`'s task and session.
    pub fn batch_options(&self, context: ToolContext) -> BatchOptions {
        batch_options_for(&self.config.config.dispatch, &self.services, context)
    }

    /// Resolves file-tool paths the way the tools do (against the task's working
    /// directory in its environment), for the batch planner's overlap checks.
    pub fn path_resolver(&self) -> PathResolver {
        path_resolver_for(&self.services)
    }
}

/// Batch options from `[dispatch]` over `services`' file systems (what
/// [`Toolhost::batch_options`] gives), for calls of `context`'s task and session.
pub fn batch_options_for(
    settings: &crate::dispatch::DispatchSettings,
    services: &Arc<CoreServices>,
    context: ToolContext,
) -> BatchOptions {
    BatchOptions {
        max_concurrency: settings.max_concurrency.max(1),
        deadline: (settings.batch_timeout_secs > 0.0)
            .then(|| Duration::from_secs_f64(settings.batch_timeout_secs)),
        cancel_grace: Duration::from_secs_f64(settings.cancel_grace_secs.max(0.0)),
        context,
        resolve_path: path_resolver_for(services),
        ..BatchOptions::default()
    }
}

/// Resolves file-tool paths against each task's file system ([`Toolhost::path_resolver`]).
pub fn path_resolver_for(services: &Arc<CoreServices>) -> PathResolver {
    let services = Arc::clone(services);
    Arc::new(move |ctx, path| {
        let files = services.files.for_task(ctx.task_key());
        let resolved = files.resolve(path);
        // Only the host's own file system can be asked about symlinks.
        if files.kind() == "local" {
            canonical_path(&resolved)
        } else {
            resolved
        }
    })
}
