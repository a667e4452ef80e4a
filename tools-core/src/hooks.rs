//! Hooks: code that watches or steers tool calls, registered by the host, plugins or
//! embedders.
//!
//! Six kinds, each run in registration order:
//! - `pre_tool_call` — allow, block with a message, or rewrite the arguments;
//! - `post_tool_call` — observe name, args, result, status and duration;
//! - `transform_tool_result` — the first `Some` replaces the result;
//! - `transform_terminal_output` — the first `Some` replaces foreground terminal output;
//! - `pre_approval_request` / `post_approval_response` — observe approval decisions.
//!
//! A hook that panics is logged and skipped, except `pre_tool_call`: a policy hook that
//! crashes blocks the call (fail closed) rather than silently letting it through.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use serde_json::Value;

pub use toolhost_approval::ApprovalEvent;
use toolhost_approval::ApprovalObserver;

use crate::availability::panic_message;
use crate::context::ToolContext;

/// How a call ended, as hooks see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallStatus {
    /// The tool ran and its result has no `error` field.
    Ok,
    /// The tool failed or returned an `{"error": ...}` result.
    Error,
    /// A hook or the approval gate refused the call.
    Blocked,
    /// The call exceeded its deadline.
    Timeout,
    /// The call was cancelled (Ctrl-C, client cancellation).
    Cancelled,
}

impl CallStatus {
    /// Lowercase name (`ok`, `error`, `blocked`, `timeout`, `cancelled`).
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Ok => "ok",
            CallStatus::Error => "error",
            CallStatus::Blocked => "blocked",
            CallStatus::Timeout => "timeout",
            CallStatus::Cancelled => "cancelled",
        }
    }
}

/// What a `pre_tool_call` hook sees.
#[derive(Debug)]
pub struct PreToolCall<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// Arguments (already rewritten by earlier hooks, if any).
    pub args: &'a Value,
    /// Call identity.
    pub ctx: &'a ToolContext,
}

/// What a `pre_tool_call` hook decides.
#[derive(Clone, Debug, PartialEq)]
pub enum PreToolDecision {
    /// Let the call through unchanged.
    Allow,
    /// Refuse the call; the message becomes the `{"error": ...}` result.
    Block {
        /// Shown to the model.
        message: String,
    },
    /// Replace the arguments (later hooks and the handler see the new ones).
    Rewrite {
        /// The new arguments.
        args: Value,
    },
}

/// What `post_tool_call` and `transform_tool_result` hooks see.
#[derive(Debug)]
pub struct ToolCallRecord<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// Arguments the handler ran with.
    pub args: &'a Value,
    /// The result string.
    pub result: &'a str,
    /// How the call ended.
    pub status: CallStatus,
    /// Wall time of the call.
    pub duration: Duration,
    /// Call identity.
    pub ctx: &'a ToolContext,
}

/// What `transform_terminal_output` hooks see.
#[derive(Debug)]
pub struct TerminalOutput<'a> {
    /// The command that ran.
    pub command: &'a str,
    /// Its combined output (before truncation and redaction).
    pub output: &'a str,
    /// Its exit code.
    pub exit_code: i32,
    /// The task it ran for.
    pub task_id: &'a str,
    /// The backend (`local`, `docker`, `ssh`, ...).
    pub env_type: &'a str,
}

type PreFn = dyn Fn(&PreToolCall<'_>) -> PreToolDecision + Send + Sync;
type PostFn = dyn Fn(&ToolCallRecord<'_>) + Send + Sync;
type TransformResultFn = dyn Fn(&ToolCallRecord<'_>) -> Option<String> + Send + Sync;
type TransformTerminalFn = dyn Fn(&TerminalOutput<'_>) -> Option<String> + Send + Sync;
type ApprovalFn = dyn Fn(&ApprovalEvent<'_>) + Send + Sync;

struct Named<F: ?Sized> {
    owner: String,
    f: Arc<F>,
}

impl<F: ?Sized> Clone for Named<F> {
    fn clone(&self) -> Self {
        Named {
            owner: self.owner.clone(),
            f: Arc::clone(&self.f),
        }
    }
}

#[derive(Default)]
struct Lists {
    pre: Vec<Named<PreFn>>,
    post: Vec<Named<PostFn>>,
    transform_result: Vec<Named<TransformResultFn>>,
    transform_terminal: Vec<Named<TransformTerminalFn>>,
    pre_approval: Vec<Named<ApprovalFn>>,
    post_approval: Vec<Named<ApprovalFn>>,
}

/// Counts of registered hooks per kind (for `plugins list` and diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookCounts {
    /// `pre_tool_call` hooks.
    pub pre_tool_call: usize,
    /// `post_tool_call` hooks.
    pub post_tool_call: usize,
    /// `transform_tool_result` hooks.
    pub transform_tool_result: usize,
    /// `transform_terminal_output` hooks.
    pub transform_terminal_output: usize,
    /// `pre_approval_request` hooks.
    pub pre_approval_request: usize,
    /// `post_approval_response` hooks.
    pub post_approval_response: usize,
}

/// The hook registry. Cheap to query when empty: whether any `pre_tool_call` or
/// result hook exists is kept in flags beside the lists, so a call with no hooks never
/// takes the lock.
#[derive(Default)]
pub struct Hooks {
    lists: RwLock<Lists>,
    /// `pre` is not empty.
    any_pre: AtomicBool,
    /// `post` or `transform_result` is not empty.
    any_result: AtomicBool,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("counts", &self.counts())
            .finish()
    }
}

fn guarded<T>(owner: &str, kind: &str, f: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => Some(value),
        Err(panic) => {
            tracing::warn!(hook = kind, owner, panic = %panic_message(&panic), "hook panicked; skipped");
            None
        }
    }
}

impl Hooks {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Lists> {
        self.lists.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Change the lists under the write lock and refresh the flags before releasing it.
    fn edit(&self, change: impl FnOnce(&mut Lists)) {
        let mut lists = self.lists.write().unwrap_or_else(PoisonError::into_inner);
        change(&mut lists);
        self.any_pre.store(!lists.pre.is_empty(), Ordering::Release);
        self.any_result.store(
            !(lists.post.is_empty() && lists.transform_result.is_empty()),
            Ordering::Release,
        );
    }

    /// Register a `pre_tool_call` hook owned by `owner` (a plugin name, `host`, ...).
    pub fn on_pre_tool_call<F>(&self, owner: impl Into<String>, f: F)
    where
        F: Fn(&PreToolCall<'_>) -> PreToolDecision + Send + Sync + 'static,
    {
        let hook: Named<PreFn> = Named {
            owner: owner.into(),
            f: Arc::new(f),
        };
        self.edit(|lists| lists.pre.push(hook));
    }

    /// Register a `post_tool_call` observer.
    pub fn on_post_tool_call<F>(&self, owner: impl Into<String>, f: F)
    where
        F: Fn(&ToolCallRecord<'_>) + Send + Sync + 'static,
    {
        let hook: Named<PostFn> = Named {
            owner: owner.into(),
            f: Arc::new(f),
        };
        self.edit(|lists| lists.post.push(hook));
    }

    /// Register a `transform_tool_result` hook.
    pub fn on_transform_tool_result<F>(&self, owner: impl Into<String>, f: F)
    where
        F: Fn(&ToolCallRecord<'_>) -> Option<String> + Send + Sync + 'static,
    {
        let hook: Named<TransformResultFn> = Named {
            owner: owner.into(),
            f: Arc::new(f),
        };
        self.edit(|lists| lists.transform_result.push(hook));
    }

    /// Register a `transform_terminal_output` hook.
    pub fn on_transform_terminal_output<F>(&self, owner: impl Into<String>, f: F)
    where
        F: Fn(&TerminalOutput<'_>) -> Option<String> + Send + Sync + 'static,
    {
        let hook: Named<TransformTerminalFn> = Named {
            owner: owner.into(),
            f: Arc::new(f),
        };
        self.edit(|lists| lists.transform_terminal.push(hook));
    }

    /// Register a `pre_approval_request` observer.
    pub fn on_pre_approval_request<F>(&self, owner: impl Into<String>, f: F)
    where
        F: Fn(&ApprovalEvent<'_>) + Send + Sync + 'static,
    {
        let hook: Named<ApprovalFn> = Named {
            owner: owner.into(),
            f: Arc::new(f),
        };
        self.edit(|lists| lists.pre_approval.push(hook));
    }

    /// Register a `post_approval_response` observer.
    pub fn on_post_approval_response<F>(&self, owner: impl Into<String>, f: F)
    where
        F: Fn(&ApprovalEvent<'_>) + Send + Sync + 'static,
    {
        let hook: Named<ApprovalFn> = Named {
            owner: owner.into(),
            f: Arc::new(f),
        };
        self.edit(|lists| lists.post_approval.push(hook));
    }

    /// Remove every hook registered by `owner` (a plugin being disabled).
    pub fn remove_owner(&self, owner: &str) {
        self.edit(|lists| {
            lists.pre.retain(|h| h.owner != owner);
            lists.post.retain(|h| h.owner != owner);
            lists.transform_result.retain(|h| h.owner != owner);
            lists.transform_terminal.retain(|h| h.owner != owner);
            lists.pre_approval.retain(|h| h.owner != owner);
            lists.post_approval.retain(|h| h.owner != owner);
        });
    }

    /// How many hooks of each kind are registered, optionally only `owner`'s.
    pub fn counts_for(&self, owner: Option<&str>) -> HookCounts {
        let lists = self.read();
        let count = |owners: &mut dyn Iterator<Item = &String>| {
            owners
                .filter(|o| owner.is_none_or(|want| want == o.as_str()))
                .count()
        };
        HookCounts {
            pre_tool_call: count(&mut lists.pre.iter().map(|h| &h.owner)),
            post_tool_call: count(&mut lists.post.iter().map(|h| &h.owner)),
            transform_tool_result: count(&mut lists.transform_result.iter().map(|h| &h.owner)),
            transform_terminal_output: count(
                &mut lists.transform_terminal.iter().map(|h| &h.owner),
            ),
            pre_approval_request: count(&mut lists.pre_approval.iter().map(|h| &h.owner)),
            post_approval_response: count(&mut lists.post_approval.iter().map(|h| &h.owner)),
        }
    }

    /// How many hooks of each kind are registered.
    pub fn counts(&self) -> HookCounts {
        self.counts_for(None)
    }

    /// Run the `pre_tool_call` hooks. Returns the final decision: `Block` from the first
    /// hook that blocks, else `Rewrite` with the last rewritten args, else `Allow`.
    pub fn run_pre_tool_call(
        &self,
        tool: &str,
        args: &Value,
        ctx: &ToolContext,
    ) -> PreToolDecision {
        if !self.any_pre.load(Ordering::Acquire) {
            return PreToolDecision::Allow;
        }
        let hooks = {
            let lists = self.read();
            if lists.pre.is_empty() {
                return PreToolDecision::Allow;
            }
            lists.pre.clone()
        };
        let mut rewritten: Option<Value> = None;
        for hook in hooks {
            let current = rewritten.as_ref().unwrap_or(args);
            let call = PreToolCall {
                tool,
                args: current,
                ctx,
            };
            match catch_unwind(AssertUnwindSafe(|| (hook.f)(&call))) {
                Ok(PreToolDecision::Allow) => {}
                Ok(PreToolDecision::Block { message }) => {
                    return PreToolDecision::Block { message };
                }
                Ok(PreToolDecision::Rewrite { args }) => rewritten = Some(args),
                Err(panic) => {
                    let message = format!(
                        "pre_tool_call hook of {} failed: {}",
                        hook.owner,
                        panic_message(&panic)
                    );
                    tracing::warn!(owner = %hook.owner, tool, "{message}; blocking the call");
                    return PreToolDecision::Block { message };
                }
            }
        }
        match rewritten {
            Some(args) => PreToolDecision::Rewrite { args },
            None => PreToolDecision::Allow,
        }
    }

    /// True when no `post_tool_call` or `transform_tool_result` hook is registered
    /// (lets the pipeline skip building the record).
    pub fn has_result_hooks(&self) -> bool {
        self.any_result.load(Ordering::Acquire)
    }

    /// Run the `post_tool_call` observers.
    pub fn run_post_tool_call(&self, record: &ToolCallRecord<'_>) {
        let hooks = self.read().post.clone();
        for hook in hooks {
            guarded(&hook.owner, "post_tool_call", || (hook.f)(record));
        }
    }

    /// Run `transform_tool_result`; the first `Some` wins.
    pub fn run_transform_tool_result(&self, record: &ToolCallRecord<'_>) -> Option<String> {
        let hooks = self.read().transform_result.clone();
        hooks.into_iter().find_map(|hook| {
            guarded(&hook.owner, "transform_tool_result", || (hook.f)(record)).flatten()
        })
    }

    /// Run `transform_terminal_output`; the first `Some` wins.
    pub fn run_transform_terminal_output(&self, event: &TerminalOutput<'_>) -> Option<String> {
        let hooks = self.read().transform_terminal.clone();
        hooks.into_iter().find_map(|hook| {
            guarded(&hook.owner, "transform_terminal_output", || (hook.f)(event)).flatten()
        })
    }

    /// Run the `pre_approval_request` observers.
    pub fn run_pre_approval_request(&self, event: &ApprovalEvent<'_>) {
        let hooks = self.read().pre_approval.clone();
        for hook in hooks {
            guarded(&hook.owner, "pre_approval_request", || (hook.f)(event));
        }
    }

    /// Run the `post_approval_response` observers.
    pub fn run_post_approval_response(&self, event: &ApprovalEvent<'_>) {
        let hooks = self.read().post_approval.clone();
        for hook in hooks {
            guarded(&hook.owner, "post_approval_response", || (hook.f)(event));
        }
    }
}

/// The approval engine reports to the `pre_approval_request` / `post_approval_response`
/// hooks.
impl ApprovalObserver for Hooks {
    fn pre_approval_request(&self, event: &ApprovalEvent<'_>) {
        self.run_pre_approval_request(event);
    }

    fn post_approval_response(&self, event: &ApprovalEvent<'_>) {
        self.run_post_approval_response(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn no_hooks_allows() {
        let hooks = Hooks::new();
        let ctx = ToolContext::default();
        assert_eq!(
            hooks.run_pre_tool_call("t", &json!({}), &ctx),
            PreToolDecision::Allow
        );
    }

    #[test]
    fn first_block_wins_and_rewrites_chain() {
        let hooks = Hooks::new();
        hooks.on_pre_tool_call("a", |call| PreToolDecision::Rewrite {
            args: json!({"n": call.args["n"].as_i64().unwrap_or(0) + 1}),
        });
        hooks.on_pre_tool_call("b", |call| PreToolDecision::Rewrite {
            args: json!({"n": call.args["n"].as_i64().unwrap_or(0) * 10}),
        });
        let ctx = ToolContext::default();
        assert_eq!(
            hooks.run_pre_tool_call("t", &json!({"n": 1}), &ctx),
            PreToolDecision::Rewrite {
                args: json!({"n": 20})
            }
        );
        hooks.on_pre_tool_call("c", |_| PreToolDecision::Block {
            message: "no".into(),
        });
        assert_eq!(
            hooks.run_pre_tool_call("t", &json!({"n": 1}), &ctx),
            PreToolDecision::Block {
                message: "no".into()
            }
        );
    }

    #[test]
    fn panicking_pre_hook_blocks() {
        let hooks = Hooks::new();
        hooks.on_pre_tool_call("bad", |_| panic!("policy crashed"));
        let ctx = ToolContext::default();
        match hooks.run_pre_tool_call("t", &json!({}), &ctx) {
            PreToolDecision::Block { message } => assert!(message.contains("policy crashed")),
            other => panic!("expected block, got {other:?}"),
        }
    }

    #[test]
    fn panicking_transform_is_skipped() {
        let hooks = Hooks::new();
        hooks.on_transform_tool_result("bad", |_| panic!("oops"));
        hooks.on_transform_tool_result("good", |_| Some("\"replaced\"".into()));
        let ctx = ToolContext::default();
        let record = ToolCallRecord {
            tool: "t",
            args: &json!({}),
            result: "{}",
            status: CallStatus::Ok,
            duration: Duration::ZERO,
            ctx: &ctx,
        };
        assert_eq!(
            hooks.run_transform_tool_result(&record).as_deref(),
            Some("\"replaced\"")
        );
    }

    #[test]
    fn remove_owner_drops_its_hooks() {
        let hooks = Hooks::new();
        hooks.on_post_tool_call("p", |_| {});
        hooks.on_pre_tool_call("p", |_| PreToolDecision::Allow);
        hooks.on_pre_tool_call("q", |_| PreToolDecision::Allow);
        assert_eq!(hooks.counts_for(Some("p")).pre_tool_call, 1);
        hooks.remove_owner("p");
        assert_eq!(hooks.counts().pre_tool_call, 1);
        assert_eq!(hooks.counts().post_tool_call, 0);
    }
}
