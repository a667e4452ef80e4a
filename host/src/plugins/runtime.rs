//! A loaded plugin at run time: its calls, timeouts, panic count and kill switch.
//!
//! Tool calls run the plugin's synchronous handler on tokio's blocking pool under a
//! timeout (or inline when `timeout_secs = 0`). A call that times out is answered with a
//! timeout error at once; its thread keeps running until the handler returns (a thread
//! cannot be killed), the handler sees `ctx.is_cancelled()`, and the call counts as
//! *hung* until then. Too many hung calls and the plugin's tools are refused. Every
//! panic the SDK catches (handler, check or hook) is counted; at `max_panics` the
//! plugin's tools are deregistered and its hooks removed for the rest of the process.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use abi_stable::std_types::{RResult, RString};
use serde::Serialize;
use serde_json::Value;
use toolhost_plugin_api::abi::{FfiError, PluginObjectBox};
use tools_core::{Hooks, Registry, ToolContext, ToolError, ToolOutcome, ToolSource};

/// Limits applied to one plugin (from `[plugins]`).
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeLimits {
    /// Panics before the plugin is disabled; 0 = never.
    pub max_panics: u32,
    /// Per tool call; `None` = inline, no limit.
    pub timeout: Option<Duration>,
    /// Per availability check; `None` = inline, no limit.
    pub check_timeout: Option<Duration>,
    /// Hung calls before the plugin's tools are refused.
    pub max_hung: u32,
}

impl RuntimeLimits {
    /// Limits for plugin `name` from `[plugins]` and `[plugins.limits.<name>]`.
    pub fn for_plugin(config: &super::PluginsConfig, name: &str) -> Self {
        let secs = |s: f64| (s > 0.0 && s.is_finite()).then(|| Duration::from_secs_f64(s));
        let own = config.limits.get(name).cloned().unwrap_or_default();
        RuntimeLimits {
            max_panics: own.max_panics.unwrap_or(config.max_panics),
            timeout: secs(own.timeout_secs.unwrap_or(config.timeout_secs)),
            check_timeout: secs(own.check_timeout_secs.unwrap_or(config.check_timeout_secs)),
            max_hung: own.max_hung_calls.unwrap_or(config.max_hung_calls).max(1),
        }
    }
}

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const ABANDONED: u8 = 2;

/// One guarded call: the flag the handler sees, and who finished first.
#[derive(Default)]
struct CallState {
    cancel: AtomicBool,
    phase: AtomicU8,
}

/// The call context as the plugin receives it.
#[derive(Serialize)]
struct WireContext<'a> {
    task_id: &'a str,
    session_id: &'a str,
    tool_call_id: &'a str,
    user_task: Option<&'a str>,
    timeout_ms: Option<u64>,
}

/// A plugin that loaded, as the registry and hooks see it.
pub struct PluginRuntime {
    name: String,
    object: Arc<PluginObjectBox>,
    limits: RuntimeLimits,
    panics: AtomicU32,
    hung: AtomicU32,
    disabled: Mutex<Option<String>>,
    registry: Weak<Registry>,
    hooks: Weak<Hooks>,
    tools: Mutex<Vec<String>>,
}

impl std::fmt::Debug for PluginRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginRuntime")
            .field("name", &self.name)
            .field("panics", &self.panics())
            .field("disabled", &self.disabled_reason())
            .finish_non_exhaustive()
    }
}

impl PluginRuntime {
    /// A runtime for plugin `name` whose tools and hooks live in `registry` and `hooks`.
    pub fn new(
        name: &str,
        object: Arc<PluginObjectBox>,
        limits: RuntimeLimits,
        registry: &Arc<Registry>,
        hooks: &Arc<Hooks>,
    ) -> Arc<Self> {
        Arc::new(PluginRuntime {
            name: name.to_string(),
            object,
            limits,
            panics: AtomicU32::new(0),
            hung: AtomicU32::new(0),
            disabled: Mutex::new(None),
            registry: Arc::downgrade(registry),
            hooks: Arc::downgrade(hooks),
            tools: Mutex::new(Vec::new()),
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The limits in force.
    pub fn limits(&self) -> &RuntimeLimits {
        &self.limits
    }

    /// Panics caught so far.
    pub fn panics(&self) -> u32 {
        self.panics.load(Ordering::Relaxed)
    }

    /// Calls still running past their timeout.
    pub fn hung_calls(&self) -> u32 {
        self.hung.load(Ordering::Relaxed)
    }

    /// Why the plugin was disabled at run time, if it was.
    pub fn disabled_reason(&self) -> Option<String> {
        self.disabled
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Remember that tool `name` was registered for this plugin.
    pub(crate) fn add_tool(&self, name: &str) {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name.to_string());
    }

    fn ensure_usable(&self) -> Result<(), ToolError> {
        if let Some(reason) = self.disabled_reason() {
            return Err(ToolError::Unavailable(format!(
                "plugin {} is disabled: {reason}",
                self.name
            )));
        }
        let hung = self.hung_calls();
        if hung >= self.limits.max_hung {
            return Err(ToolError::Unavailable(format!(
                "plugin {} has {hung} calls still running past their timeout",
                self.name
            )));
        }
        Ok(())
    }

    fn context_json(&self, ctx: &ToolContext) -> String {
        serde_json::to_string(&WireContext {
            task_id: &ctx.task_id,
            session_id: &ctx.session_id,
            tool_call_id: &ctx.tool_call_id,
            user_task: ctx.user_task.as_deref(),
            timeout_ms: self.limits.timeout.map(|d| d.as_millis() as u64),
        })
        .unwrap_or_else(|_| "{}".into())
    }

    /// Run tool `index` on this thread, without a timeout.
    pub fn call_inline(&self, index: u32, args: &Value, ctx: &ToolContext) -> ToolOutcome {
        self.ensure_usable()?;
        let cancel = AtomicBool::new(false);
        let (args, context) = (args.to_string(), self.context_json(ctx));
        let result = self.object.call_tool(
            index,
            args.as_str().into(),
            context.as_str().into(),
            &cancel,
        );
        self.outcome(result)
    }

    /// Run tool `index` on the blocking pool with the timeout; also gives up when
    /// `ctx.cancel` fires. Needs a tokio runtime.
    pub async fn call_guarded(
        self: Arc<Self>,
        index: u32,
        args: Value,
        ctx: ToolContext,
    ) -> ToolOutcome {
        self.ensure_usable()?;
        let state = Arc::new(CallState::default());
        let (args, context) = (args.to_string(), self.context_json(&ctx));
        let (runtime, call) = (Arc::clone(&self), Arc::clone(&state));
        let task = tokio::task::spawn_blocking(move || {
            let result = runtime.object.call_tool(
                index,
                args.as_str().into(),
                context.as_str().into(),
                &call.cancel,
            );
            if call.phase.swap(DONE, Ordering::AcqRel) == ABANDONED {
                runtime.hung.fetch_sub(1, Ordering::AcqRel);
                tracing::info!(plugin = %runtime.name, "a call that timed out has finished");
            }
            result
        });
        let limit = self.limits.timeout.unwrap_or(Duration::MAX);
        tokio::select! {
            joined = task => match joined {
                Ok(result) => self.outcome(result),
                Err(join) => Err(ToolError::other("plugin", join.to_string())),
            },
            () = tokio::time::sleep(limit) => {
                self.abandon(&state);
                tracing::warn!(plugin = %self.name, "tool call timed out after {limit:?}");
                Err(ToolError::Timeout { seconds: limit.as_secs_f64() })
            }
            () = ctx.cancel.cancelled() => {
                self.abandon(&state);
                Err(ToolError::Cancelled)
            }
        }
    }

    /// Stop waiting for a call: tell the handler, and count it as hung until it returns.
    fn abandon(&self, state: &CallState) {
        state.cancel.store(true, Ordering::Relaxed);
        self.hung.fetch_add(1, Ordering::AcqRel);
        if state
            .phase
            .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // It finished in the meantime.
            self.hung.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn outcome(&self, result: RResult<RString, FfiError>) -> ToolOutcome {
        match result {
            RResult::ROk(text) => serde_json::from_str(text.as_str()).map_err(|e| {
                ToolError::other(
                    "plugin",
                    format!("plugin {} returned invalid JSON: {e}", self.name),
                )
            }),
            RResult::RErr(err) if err.is_panic() => {
                self.record_panic("a tool handler", err.message.as_str());
                Err(ToolError::Panic(err.message.into_string()))
            }
            RResult::RErr(err) => Err(match err.kind.as_str() {
                "invalid_arguments" => ToolError::InvalidArguments(err.message.into_string()),
                "unavailable" => ToolError::Unavailable(err.message.into_string()),
                kind => ToolError::other(kind, err.message.into_string()),
            }),
        }
    }

    /// Run the availability check of tool `index` (on a helper thread, with the check
    /// timeout). `Err(reason)` when unavailable.
    pub fn check(self: &Arc<Self>, index: u32) -> Result<(), String> {
        if let Some(reason) = self.disabled_reason() {
            return Err(format!("plugin {} is disabled: {reason}", self.name));
        }
        let result = match self.limits.check_timeout {
            None => self.object.check_tool(index),
            Some(limit) => {
                let (tx, rx) = channel();
                let runtime = Arc::clone(self);
                let spawned = std::thread::Builder::new()
                    .name(format!("plugin-check-{}", self.name))
                    .spawn(move || {
                        let _ = tx.send(runtime.object.check_tool(index));
                    });
                if let Err(e) = spawned {
                    return Err(format!("cannot start the check: {e}"));
                }
                match rx.recv_timeout(limit) {
                    Ok(result) => result,
                    Err(RecvTimeoutError::Timeout) => {
                        return Err(format!("check timed out after {}s", limit.as_secs_f64()));
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        return Err("check ended without an answer".into());
                    }
                }
            }
        };
        match result {
            RResult::ROk(()) => Ok(()),
            RResult::RErr(err) if err.is_panic() => {
                self.record_panic("an availability check", err.message.as_str());
                Err(format!("check panicked: {}", err.message))
            }
            RResult::RErr(err) => Err(err.message.into_string()),
        }
    }

    /// Run the plugin's hooks of `kind` on the JSON `event`; the JSON answer, or why
    /// there is none.
    pub fn hook(&self, kind: &str, event: &str) -> Result<String, String> {
        if let Some(reason) = self.disabled_reason() {
            return Err(format!("plugin disabled: {reason}"));
        }
        match self.object.run_hook(kind.into(), event.into()) {
            RResult::ROk(answer) => Ok(answer.into_string()),
            RResult::RErr(err) if err.is_panic() => {
                self.record_panic(&format!("a {kind} hook"), err.message.as_str());
                Err(format!("panic: {}", err.message))
            }
            RResult::RErr(err) => Err(format!("{}: {}", err.kind, err.message)),
        }
    }

    /// Count a panic; disable the plugin when it reaches the limit.
    pub fn record_panic(&self, what: &str, message: &str) {
        let count = self.panics.fetch_add(1, Ordering::AcqRel) + 1;
        let max = self.limits.max_panics;
        tracing::warn!(plugin = %self.name, "{what} panicked ({count} of {max} allowed): {message}");
        if max > 0 && count >= max {
            self.disable(format!(
                "disabled after {count} panics (plugins.max_panics = {max}); last: {message}"
            ));
        }
    }

    /// Take the plugin out of service for the rest of the process: its tools leave the
    /// registry and its hooks are removed. The library itself stays mapped.
    pub fn disable(&self, reason: String) {
        {
            let mut disabled = self.disabled.lock().unwrap_or_else(PoisonError::into_inner);
            if disabled.is_some() {
                return;
            }
            *disabled = Some(reason.clone());
        }
        tracing::error!(plugin = %self.name, "plugin {} {reason}", self.name);
        let owner = ToolSource::Plugin(self.name.clone());
        if let Some(registry) = self.registry.upgrade() {
            let tools = self
                .tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            for tool in tools {
                if registry.get(&tool).is_some_and(|e| e.source == owner) {
                    registry.deregister(&tool);
                }
            }
        }
        if let Some(hooks) = self.hooks.upgrade() {
            hooks.remove_owner(&self.name);
        }
    }
}
