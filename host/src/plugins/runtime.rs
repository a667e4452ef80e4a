//! A loaded plugin at run time: its calls, timeouts, panic count and kill switch.
//!
//! Tool calls run the plugin's synchronous handler on the plugin executor under a
//! timeout (see [`super::call`] and [`super::executor`]), or inline when
//! `timeout_secs = 0`. A call that times out is answered with a timeout error at once;
//! its worker keeps running until the handler returns (a thread cannot be killed), the
//! handler sees `ctx.is_cancelled()`, and the call counts as *hung* until then. Too
//! many hung calls and the plugin's tools are refused. Hooks run the same way, under
//! the same timeout. Every
//! panic the SDK catches (handler, check or hook) is counted; at `max_panics` the
//! plugin's tools are deregistered and its hooks removed for the rest of the process.
//!
//! A plugin configured to run out of process has a [`ProcessPlugin`] backend instead of
//! the ABI object: the same entry points send the same JSON to its child, a call past
//! its timeout kills the child instead of leaving a hung thread, and a crash of the
//! child is answered as an error naming the signal; at `max_crashes` the plugin is
//! disabled the same way as at `max_panics`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use abi_stable::std_types::{RResult, RString};
use serde_json::Value;
use toolhost_plugin_api::abi::{FfiError, PluginObjectBox};
use toolhost_plugin_api::wire::{CallContext, HookKind};
use tools_core::{Hooks, Registry, ToolContext, ToolError, ToolOutcome, ToolSource};

use super::adapter::RefusedTool;
use super::fault::PluginFault;
use super::manifest::Manifest;
use super::process::protocol::{Answer, Op};
use super::process::{ProcessFault, ProcessPlugin};

/// What runs a plugin's code.
enum Backend {
    /// The library, loaded into this process.
    InProcess(Arc<PluginObjectBox>),
    /// A `toolhost plugin-host` child.
    Process(Arc<ProcessPlugin>),
}

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
    pub fn for_plugin(config: &super::PluginsSettings, name: &str) -> Self {
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

/// A plugin that loaded, as the registry and hooks see it.
pub struct PluginRuntime {
    name: String,
    backend: Backend,
    limits: RuntimeLimits,
    panics: AtomicU32,
    hung: AtomicU32,
    disabled: Mutex<Option<String>>,
    registry: Weak<Registry>,
    hooks: Weak<Hooks>,
    tools: Mutex<Vec<String>>,
    manifest: Mutex<Option<Manifest>>,
    rejoined: Mutex<Option<Rejoined>>,
}

/// What a plugin declared when it was last reloaded (replaces the record's lists).
#[derive(Clone, Debug, Default)]
pub struct Rejoined {
    /// Registered tools.
    pub tools: Vec<String>,
    /// Registered hook kinds.
    pub hooks: Vec<String>,
    /// Tools refused.
    pub refused: Vec<RefusedTool>,
    /// What a Python plugin registered that toolhost cannot serve.
    pub unsupported: Vec<String>,
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
        Self::with_backend(name, Backend::InProcess(object), limits, registry, hooks)
    }

    /// A runtime for plugin `name` served by the child process `process`.
    pub fn new_process(
        name: &str,
        process: Arc<ProcessPlugin>,
        limits: RuntimeLimits,
        registry: &Arc<Registry>,
        hooks: &Arc<Hooks>,
    ) -> Arc<Self> {
        Self::with_backend(name, Backend::Process(process), limits, registry, hooks)
    }

    fn with_backend(
        name: &str,
        backend: Backend,
        limits: RuntimeLimits,
        registry: &Arc<Registry>,
        hooks: &Arc<Hooks>,
    ) -> Arc<Self> {
        Arc::new(PluginRuntime {
            name: name.to_string(),
            backend,
            limits,
            panics: AtomicU32::new(0),
            hung: AtomicU32::new(0),
            disabled: Mutex::new(None),
            registry: Arc::downgrade(registry),
            hooks: Arc::downgrade(hooks),
            tools: Mutex::new(Vec::new()),
            manifest: Mutex::new(None),
            rejoined: Mutex::new(None),
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The child process serving this plugin, when it runs out of process.
    pub fn process(&self) -> Option<&Arc<ProcessPlugin>> {
        match &self.backend {
            Backend::Process(process) => Some(process),
            Backend::InProcess(_) => None,
        }
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

    /// Remember the manifest the plugin was joined with (a reload joins it again).
    pub(crate) fn set_manifest(&self, manifest: Manifest) {
        *self.manifest.lock().unwrap_or_else(PoisonError::into_inner) = Some(manifest);
    }

    /// The manifest the plugin was joined with.
    pub(crate) fn manifest(&self) -> Option<Manifest> {
        self.manifest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What the last reload registered, if the plugin was reloaded.
    pub fn rejoined(&self) -> Option<Rejoined> {
        self.rejoined
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_rejoined(&self, rejoined: Rejoined) {
        *self.rejoined.lock().unwrap_or_else(PoisonError::into_inner) = Some(rejoined);
    }

    /// Put a plugin that was disabled at run time back in service (a reload), with its
    /// panic and hung-call counts cleared.
    pub(crate) fn reinstate(&self) {
        *self.disabled.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.panics.store(0, Ordering::Release);
        self.hung.store(0, Ordering::Release);
    }

    /// Remember that tool `name` was registered for this plugin.
    pub(crate) fn add_tool(&self, name: &str) {
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name.to_string());
    }

    fn ensure_usable(&self) -> Result<(), ToolError> {
        self.ensure_enabled()
            .and_then(|()| self.refuse_while_hung())
            .map_err(|fault| ToolError::Unavailable(fault.to_string()))
    }

    /// Refused when the plugin was disabled.
    fn ensure_enabled(&self) -> Result<(), PluginFault> {
        match self.disabled_reason() {
            Some(reason) => Err(PluginFault::Disabled {
                plugin: self.name.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }

    /// Why new calls and hooks are refused: `max_hung_calls` of them still run past
    /// their timeout.
    fn refuse_while_hung(&self) -> Result<(), PluginFault> {
        let count = self.hung_calls();
        if count >= self.limits.max_hung {
            return Err(PluginFault::Hung {
                plugin: self.name.clone(),
                count,
            });
        }
        Ok(())
    }

    pub(super) fn context_json(&self, ctx: &ToolContext) -> String {
        let wire = CallContext::new(
            ctx.task_id.as_str(),
            ctx.session_id.as_str(),
            ctx.tool_call_id.as_str(),
            ctx.user_task.as_deref(),
        )
        .with_timeout_ms(self.limits.timeout.map(|d| d.as_millis() as u64));
        serde_json::to_string(&wire).unwrap_or_else(|_| "{}".into())
    }

    /// Run tool `index` on this thread, without a timeout.
    pub fn call_inline(&self, index: u32, args: &Value, ctx: &ToolContext) -> ToolOutcome {
        self.ensure_usable()?;
        let args = serde_json::to_string(args).unwrap_or_else(|_| args.to_string());
        let context = self.context_json(ctx);
        let object = match &self.backend {
            Backend::InProcess(object) => object,
            Backend::Process(process) => {
                let cancel = ctx.cancel.clone();
                let cancelled = move || cancel.is_cancelled();
                return self.process_call(process, index, args, context, &cancelled);
            }
        };
        let cancel = AtomicBool::new(false);
        let result = object.call_tool(
            index,
            args.as_str().into(),
            context.as_str().into(),
            &cancel,
        );
        self.outcome(result)
    }

    /// Run tool `index` on the plugin executor and block this thread until it answers,
    /// the timeout passes or `ctx.cancel` fires (see [`super::call`]).
    pub fn call_blocking(
        self: &Arc<Self>,
        index: u32,
        args: &Value,
        ctx: &ToolContext,
    ) -> ToolOutcome {
        if self.process().is_some() {
            return self.call_inline(index, args, ctx);
        }
        self.ensure_usable()?;
        let limit = self.limits.timeout.unwrap_or(Duration::MAX);
        super::call::call_blocking(self, index, args, ctx, limit)
    }

    /// Run tool `index` on the plugin executor from async code, with the timeout; also
    /// gives up when `ctx.cancel` fires. Never blocks the runtime's thread for more than
    /// a few microseconds. Needs a tokio runtime with timers.
    pub async fn call_guarded(
        self: Arc<Self>,
        index: u32,
        args: Value,
        ctx: ToolContext,
    ) -> ToolOutcome {
        if self.process().is_some() {
            let runtime = Arc::clone(&self);
            return tokio::task::spawn_blocking(move || runtime.call_inline(index, &args, &ctx))
                .await
                .unwrap_or_else(|e| {
                    Err(ToolError::other(
                        "plugin",
                        format!("the call to plugin {} failed: {e}", self.name),
                    ))
                });
        }
        self.ensure_usable()?;
        let limit = self.limits.timeout.unwrap_or(Duration::MAX);
        super::call::call_async(self, index, args, ctx, limit).await
    }

    /// The plugin's ABI object, when it is loaded in this process.
    pub(super) fn object(&self) -> Option<&PluginObjectBox> {
        match &self.backend {
            Backend::InProcess(object) => Some(object),
            Backend::Process(_) => None,
        }
    }

    /// Tool call `index` through the child process; a cancelled call kills the child.
    fn process_call(
        &self,
        process: &ProcessPlugin,
        index: u32,
        args: String,
        context: String,
        cancelled: &dyn Fn() -> bool,
    ) -> ToolOutcome {
        let op = Op::Call {
            index,
            args,
            context,
        };
        match process.request_cancellable(op, self.limits.timeout, Some(cancelled)) {
            Ok(answer) => self.outcome(answer_result(answer)),
            Err(ProcessFault::TimedOut { seconds }) => Err(ToolError::Timeout { seconds }),
            Err(ProcessFault::Cancelled) => Err(ToolError::Cancelled),
            Err(fault) => {
                let message = self.process_fault(process, &fault);
                Err(ToolError::other("plugin_crashed", message))
            }
        }
    }

    /// Log `fault`, disable the plugin when it was its last allowed crash, and say what
    /// happened.
    fn process_fault(&self, process: &ProcessPlugin, fault: &ProcessFault) -> String {
        if process.gave_up() {
            self.disable(format!(
                "disabled after {} crashes (plugins.max_crashes); last: {fault}",
                process.crashes()
            ));
        }
        fault.to_string()
    }

    /// A check or hook through the child process, as the ABI would have answered it.
    fn process_request(
        &self,
        process: &ProcessPlugin,
        op: Op,
        what: &str,
        timeout: Option<Duration>,
    ) -> Result<RResult<RString, FfiError>, PluginFault> {
        match process.request(op, timeout) {
            Ok(answer) => Ok(answer_result(answer)),
            Err(ProcessFault::TimedOut { seconds }) => Err(PluginFault::Timeout {
                what: what.to_string(),
                seconds,
            }),
            Err(ProcessFault::Cancelled) => Err(PluginFault::failed("cancelled", "cancelled")),
            Err(fault) => Err(PluginFault::failed(
                "crashed",
                self.process_fault(process, &fault),
            )),
        }
    }

    /// The count of calls running past their timeout.
    pub(super) fn hung(&self) -> &AtomicU32 {
        &self.hung
    }

    pub(super) fn outcome(&self, result: RResult<RString, FfiError>) -> ToolOutcome {
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

    /// Run the availability check of tool `index` (on the plugin executor, under the
    /// check timeout; inline without one).
    pub fn check(self: &Arc<Self>, index: u32) -> Result<(), PluginFault> {
        self.ensure_enabled()?;
        let result = match (&self.backend, self.limits.check_timeout) {
            (Backend::Process(process), limit) => {
                match self.process_request(process, Op::Check { index }, "check", limit)? {
                    RResult::ROk(_) => RResult::ROk(()),
                    RResult::RErr(err) => RResult::RErr(err),
                }
            }
            (Backend::InProcess(object), None) => object.check_tool(index),
            (Backend::InProcess(_), Some(limit)) => {
                super::call::check_blocking(self, index, limit)?
            }
        };
        match result {
            RResult::ROk(()) => Ok(()),
            RResult::RErr(err) if err.is_panic() => {
                self.record_panic("an availability check", err.message.as_str());
                Err(PluginFault::Panicked {
                    what: "check".into(),
                    message: err.message.into_string(),
                })
            }
            RResult::RErr(err) if err.kind.as_str() == "unavailable" => {
                Err(PluginFault::Unavailable(err.message.into_string()))
            }
            RResult::RErr(err) => Err(PluginFault::failed(err.kind.as_str(), err.message)),
        }
    }

    /// Run the plugin's hooks of `kind` on the JSON `event`; the JSON answer, or why
    /// there is none.
    ///
    /// Hooks run under the plugin's `timeout_secs` like its tools (on the plugin executor;
    /// inline when it is 0). A hook still running past it is answered as a failure —
    /// which blocks the call for `pre_tool_call` (fail closed) and skips the hook
    /// otherwise — and counts as hung; with `max_hung_calls` hung, the plugin's hooks fail
    /// at once until one returns.
    pub fn hook(self: &Arc<Self>, kind: HookKind, event: &str) -> Result<String, PluginFault> {
        self.ensure_enabled()?;
        let answer = match (&self.backend, self.limits.timeout) {
            (Backend::Process(process), limit) => {
                let op = Op::Hook {
                    kind,
                    event: event.to_string(),
                };
                self.process_request(process, op, &format!("{kind} hook"), limit)?
            }
            (Backend::InProcess(object), None) => {
                object.run_hook(kind.as_str().into(), event.into())
            }
            (Backend::InProcess(_), Some(limit)) => {
                self.refuse_while_hung()?;
                super::call::hook_blocking(self, kind, event, limit)?
            }
        };
        match answer {
            RResult::ROk(answer) => Ok(answer.into_string()),
            RResult::RErr(err) if err.is_panic() => {
                self.record_panic(&format!("a {kind} hook"), err.message.as_str());
                Err(PluginFault::Panicked {
                    what: format!("{kind} hook"),
                    message: err.message.into_string(),
                })
            }
            RResult::RErr(err) => Err(PluginFault::failed(err.kind.as_str(), err.message)),
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
        self.withdraw();
    }

    /// Take the plugin's tools out of the registry and its hooks out of the hooks (for
    /// disabling it, or before joining it again).
    pub(crate) fn withdraw(&self) {
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
        self.tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        if let Some(hooks) = self.hooks.upgrade() {
            hooks.remove_owner(&self.name);
        }
    }
}

/// A child's answer as the ABI result it stands for.
fn answer_result(answer: Answer) -> RResult<RString, FfiError> {
    match answer {
        Answer::Ok(text) => RResult::ROk(text.into()),
        Answer::Err(err) => RResult::RErr(FfiError::new(&err.kind, &err.message)),
    }
}
