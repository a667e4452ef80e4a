//! The tool registry: one map from tool name to [`ToolEntry`], shared by core tools,
//! plugins and MCP servers.
//!
//! Rules (Hermes' older documented ones, not 0.19's; docs/hermes/registry-and-dispatch.md,
//! section 1.2): re-registering a name in the same toolset replaces it silently;
//! registering a name that another toolset owns logs a warning and the later
//! registration wins. Every register/deregister bumps a generation counter
//! that definition caches key on. Gatekeeping (plugins may not replace core tools without
//! permission, MCP tools never shadow core tools) is the caller's job: the loaders know
//! the policy, the registry only records.
//!
//! Dispatch never panics and always yields a JSON string: unknown tools give
//! `{"error":"Unknown tool: NAME"}`, handler errors and panics give
//! `{"error":"Tool execution failed: KIND: MESSAGE"}`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use crate::availability::{AvailabilityPass, panic_message};
use crate::context::ToolContext;
use crate::entry::ToolEntry;
use crate::error::ToolError;
use crate::handler::{BoxFuture, ToolHandler, ToolOutcome};
use crate::hooks::CallStatus;
use crate::panic_safe::CatchUnwind;
use crate::result::{error_json, is_error_value};

/// What `register` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterOutcome {
    /// A new name.
    Added,
    /// Replaced a tool of the same toolset.
    Replaced,
    /// Replaced a tool that belonged to another toolset (a warning was logged).
    Shadowed {
        /// The toolset that owned the name before.
        previous_toolset: String,
    },
}

/// The result of one call, from the registry or through the host's whole dispatch
/// pipeline: the JSON string for the model and how the call ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DispatchResult {
    /// Always valid JSON.
    pub text: String,
    /// `Ok` or `Error` from the registry; the pipeline adds `Blocked`, `Timeout`,
    /// `Cancelled`.
    pub status: CallStatus,
}

impl DispatchResult {
    /// An error result with `status = Error`.
    pub fn error(message: impl Into<String>) -> Self {
        Self::error_with_status(message, CallStatus::Error)
    }

    /// `{"error": message}` with the given status (`Blocked`, `Timeout`, ...).
    pub fn error_with_status(message: impl Into<String>, status: CallStatus) -> Self {
        DispatchResult {
            text: error_json(message),
            status,
        }
    }

    fn from_outcome(outcome: ToolOutcome) -> Self {
        match outcome {
            Ok(value) => DispatchResult {
                status: if is_error_value(&value) {
                    CallStatus::Error
                } else {
                    CallStatus::Ok
                },
                text: to_json_text(&value),
            },
            Err(err) => DispatchResult::error(err.failure_message()),
        }
    }
}

/// Tool names are few and come from trusted registrations; every call hashes one, so
/// the map uses foldhash (randomly seeded per process) rather than SipHash.
#[derive(Default)]
struct Inner {
    tools: HashMap<String, Arc<ToolEntry>, foldhash::fast::RandomState>,
    aliases: BTreeMap<String, String>,
}

/// The registry. Share it with `Arc`; all methods take `&self`.
pub struct Registry {
    inner: RwLock<Inner>,
    generation: AtomicU64,
    id: u64,
}

/// Source of [`Registry::id`]s.
static NEXT_REGISTRY_ID: AtomicU64 = AtomicU64::new(1);

impl Default for Registry {
    fn default() -> Self {
        Registry {
            inner: RwLock::default(),
            generation: AtomicU64::new(0),
            id: NEXT_REGISTRY_ID.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.len())
            .field("generation", &self.generation())
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Changes on every register, deregister and alias change.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A process-unique identity: caches keyed on `(id, generation)` never confuse two
    /// registries (a dropped registry's address may be reused, its id never is).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Number of registered tools.
    pub fn len(&self) -> usize {
        self.read().tools.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add or replace a tool.
    pub fn register(&self, entry: ToolEntry) -> RegisterOutcome {
        let name = entry.name.clone();
        let toolset = entry.toolset.clone();
        let previous = self.write().tools.insert(name.clone(), Arc::new(entry));
        self.bump();
        match previous {
            None => RegisterOutcome::Added,
            Some(old) if old.toolset == toolset => RegisterOutcome::Replaced,
            Some(old) => {
                tracing::warn!(
                    tool = %name,
                    new_toolset = %toolset,
                    previous_toolset = %old.toolset,
                    previous_source = %old.source,
                    "tool name collision across toolsets: the later registration wins"
                );
                RegisterOutcome::Shadowed {
                    previous_toolset: old.toolset.clone(),
                }
            }
        }
    }

    /// Remove a tool. Aliases of a toolset left empty are dropped too.
    pub fn deregister(&self, name: &str) -> Option<Arc<ToolEntry>> {
        let mut inner = self.write();
        let removed = inner.tools.remove(name)?;
        let toolset = removed.toolset.clone();
        if !inner.tools.values().any(|t| t.toolset == toolset) {
            inner.aliases.retain(|_, target| *target != toolset);
        }
        drop(inner);
        self.bump();
        Some(removed)
    }

    /// Make `alias` another name for `toolset` (MCP: `github` → `mcp-github`).
    pub fn register_toolset_alias(&self, alias: impl Into<String>, toolset: impl Into<String>) {
        let (alias, toolset) = (alias.into(), toolset.into());
        let previous = self.write().aliases.insert(alias.clone(), toolset.clone());
        if let Some(old) = previous.filter(|old| *old != toolset) {
            tracing::warn!(%alias, %old, new = %toolset, "toolset alias now points elsewhere");
        }
        self.bump();
    }

    /// The toolset an alias points at.
    pub fn resolve_alias(&self, alias: &str) -> Option<String> {
        self.read().aliases.get(alias).cloned()
    }

    /// All aliases, sorted.
    pub fn aliases(&self) -> BTreeMap<String, String> {
        self.read().aliases.clone()
    }

    /// The entry for `name`.
    pub fn get(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.read().tools.get(name).cloned()
    }

    /// True when `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.read().tools.contains_key(name)
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> Vec<Arc<ToolEntry>> {
        let mut entries: Vec<_> = self.read().tools.values().cloned().collect();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        entries
    }

    /// All tool names, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<_> = self.read().tools.keys().cloned().collect();
        names.sort();
        names
    }

    /// Names of all toolsets that have at least one tool, sorted.
    pub fn toolset_names(&self) -> Vec<String> {
        let set: BTreeSet<String> = self
            .read()
            .tools
            .values()
            .map(|t| t.toolset.clone())
            .collect();
        set.into_iter().collect()
    }

    /// Tools registered under `toolset`, sorted.
    pub fn tools_in_toolset(&self, toolset: &str) -> Vec<String> {
        let mut names: Vec<_> = self
            .read()
            .tools
            .values()
            .filter(|t| t.toolset == toolset)
            .map(|t| t.name.clone())
            .collect();
        names.sort();
        names
    }

    /// True iff at least one tool of `toolset` has no check or a passing one.
    pub fn is_toolset_available(&self, toolset: &str) -> bool {
        let entries: Vec<_> = self
            .read()
            .tools
            .values()
            .filter(|t| t.toolset == toolset)
            .cloned()
            .collect();
        let mut pass = AvailabilityPass::new();
        entries
            .iter()
            .any(|t| pass.evaluate(t.check.as_ref()).available)
    }

    /// Run a tool synchronously on this thread (async handlers go through the bridge).
    pub fn dispatch_blocking(&self, name: &str, args: Value, ctx: &ToolContext) -> DispatchResult {
        match self.get(name) {
            Some(entry) => run_entry_blocking(&entry, args, ctx),
            None => DispatchResult::error(format!("Unknown tool: {name}")),
        }
    }

    /// Run a tool from async code (sync handlers go to the blocking pool).
    pub async fn dispatch(&self, name: &str, args: Value, ctx: &ToolContext) -> DispatchResult {
        match self.get(name) {
            Some(entry) => run_entry(&entry, args, ctx).await,
            None => DispatchResult::error(format!("Unknown tool: {name}")),
        }
    }
}

/// Serialize a result value (through `io::Write`, faster than `Display`).
pub fn to_json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

fn caught_panic(panic: Box<dyn std::any::Any + Send>) -> ToolOutcome {
    Err(ToolError::Panic(panic_message(&panic)))
}

async fn guarded(fut: BoxFuture<'static, ToolOutcome>) -> ToolOutcome {
    CatchUnwind::new(fut).await.unwrap_or_else(caught_panic)
}

/// Run an entry's handler on the current thread. Never panics.
pub fn run_entry_blocking(entry: &ToolEntry, args: Value, ctx: &ToolContext) -> DispatchResult {
    let outcome = match &entry.handler {
        ToolHandler::Sync(f) | ToolHandler::Hybrid { blocking: f, .. } => {
            catch_unwind(AssertUnwindSafe(|| f(args, ctx))).unwrap_or_else(caught_panic)
        }
        ToolHandler::Async(f) => {
            let fut = guarded(f(args, ctx.clone()));
            crate::bridge::block_on(fut)
                .unwrap_or_else(|e| Err(ToolError::other("runtime", e.to_string())))
        }
    };
    DispatchResult::from_outcome(outcome)
}

/// Run an entry's handler from async code. Never panics.
pub async fn run_entry(entry: &ToolEntry, args: Value, ctx: &ToolContext) -> DispatchResult {
    let outcome = match &entry.handler {
        ToolHandler::Sync(f) => {
            let f = Arc::clone(f);
            let ctx = ctx.clone();
            match tokio::task::spawn_blocking(move || {
                catch_unwind(AssertUnwindSafe(|| f(args, &ctx)))
            })
            .await
            {
                Ok(result) => result.unwrap_or_else(caught_panic),
                Err(join) if join.is_panic() => caught_panic(join.into_panic()),
                Err(join) => Err(ToolError::other("runtime", join.to_string())),
            }
        }
        ToolHandler::Async(f) | ToolHandler::Hybrid { awaited: f, .. } => {
            guarded(f(args, ctx.clone())).await
        }
    };
    DispatchResult::from_outcome(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::availability::AvailabilityCheck;
    use serde_json::json;

    fn tool(name: &str, toolset: &str) -> ToolEntry {
        ToolEntry::builder(name, toolset)
            .description("test tool")
            .sync_handler(|args, _| Ok(json!({"echo": args})))
            .build()
            .unwrap()
    }

    #[test]
    fn same_toolset_replaces_silently() {
        let reg = Registry::new();
        assert_eq!(reg.register(tool("a", "x")), RegisterOutcome::Added);
        assert_eq!(reg.register(tool("a", "x")), RegisterOutcome::Replaced);
        assert_eq!(reg.len(), 1);
    }

    #[test]
    fn cross_toolset_collision_later_wins() {
        let reg = Registry::new();
        reg.register(tool("a", "x"));
        assert_eq!(
            reg.register(tool("a", "y")),
            RegisterOutcome::Shadowed {
                previous_toolset: "x".into()
            }
        );
        assert_eq!(reg.get("a").unwrap().toolset, "y");
    }

    #[test]
    fn generation_changes_on_every_mutation() {
        let reg = Registry::new();
        let g0 = reg.generation();
        reg.register(tool("a", "x"));
        let g1 = reg.generation();
        reg.deregister("a");
        let g2 = reg.generation();
        assert!(g0 < g1 && g1 < g2);
        // Unknown names change nothing.
        assert!(reg.deregister("a").is_none());
        assert_eq!(reg.generation(), g2);
    }

    #[test]
    fn every_registry_has_its_own_id() {
        let (a, b) = (Registry::new(), Registry::new());
        assert_ne!(a.id(), b.id());
    }

    #[test]
    fn deregister_drops_aliases_of_emptied_toolset() {
        let reg = Registry::new();
        reg.register(tool("a", "mcp-x"));
        reg.register_toolset_alias("x", "mcp-x");
        reg.deregister("a");
        assert!(reg.resolve_alias("x").is_none());
    }

    #[test]
    fn unknown_tool_error_string() {
        let reg = Registry::new();
        let r = reg.dispatch_blocking("nope", json!({}), &ToolContext::default());
        assert_eq!(r.text, r#"{"error":"Unknown tool: nope"}"#);
    }

    #[test]
    fn handler_error_and_panic_are_wrapped() {
        let reg = Registry::new();
        reg.register(
            ToolEntry::builder("fails", "x")
                .sync_handler(|_, _| Err(ToolError::InvalidArguments("bad n".into())))
                .build()
                .unwrap(),
        );
        reg.register(
            ToolEntry::builder("panics", "x")
                .sync_handler(|_, _| panic!("kaboom"))
                .build()
                .unwrap(),
        );
        let ctx = ToolContext::default();
        assert_eq!(
            reg.dispatch_blocking("fails", json!({}), &ctx).text,
            r#"{"error":"Tool execution failed: invalid_arguments: bad n"}"#
        );
        let r = reg.dispatch_blocking("panics", json!({}), &ctx);
        assert_eq!(
            r.text,
            r#"{"error":"Tool execution failed: panic: kaboom"}"#
        );
        assert_eq!(r.status, CallStatus::Error);
    }

    #[test]
    fn async_handler_panic_is_caught() {
        let reg = Registry::new();
        reg.register(
            ToolEntry::builder("apanic", "x")
                .handler(ToolHandler::from_async(|_, _| async {
                    panic!("async kaboom")
                }))
                .build()
                .unwrap(),
        );
        let r = reg.dispatch_blocking("apanic", json!({}), &ToolContext::default());
        assert_eq!(
            r.text,
            r#"{"error":"Tool execution failed: panic: async kaboom"}"#
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn async_dispatch_runs_sync_handlers_on_blocking_pool() {
        let reg = Registry::new();
        reg.register(tool("a", "x"));
        let r = reg
            .dispatch("a", json!({"k": 1}), &ToolContext::default())
            .await;
        assert_eq!(r.text, r#"{"echo":{"k":1}}"#);
        assert_eq!(r.status, CallStatus::Ok);
    }

    #[test]
    fn toolset_available_if_any_tool_passes() {
        let reg = Registry::new();
        let down = AvailabilityCheck::new("down", || Err("missing".into()));
        reg.register(ToolEntry::builder("a", "x").check(down).build().unwrap());
        assert!(!reg.is_toolset_available("x"));
        reg.register(tool("b", "x"));
        assert!(reg.is_toolset_available("x"));
        assert!(!reg.is_toolset_available("nope"));
    }
}
