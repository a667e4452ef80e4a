//! [`ToolContext`]: who is calling, and whether the host still wants the answer.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::wire::CallContext;

/// The identity of a tool call, as hooks and handlers see it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct CallInfo {
    /// The agent task the call belongs to (`""` means the default task).
    pub task_id: String,
    /// The conversation/session.
    pub session_id: String,
    /// The model's `tool_call_id` (empty for direct calls).
    pub tool_call_id: String,
    /// The user's request that led to the call, when the agent knows it.
    pub user_task: Option<String>,
}

impl From<CallContext<'_>> for CallInfo {
    fn from(ctx: CallContext<'_>) -> Self {
        CallInfo {
            task_id: ctx.task_id.into_owned(),
            session_id: ctx.session_id.into_owned(),
            tool_call_id: ctx.tool_call_id.into_owned(),
            user_task: ctx.user_task.map(|t| t.into_owned()),
        }
    }
}

/// The decoded call context: identity and timeout.
#[derive(Default)]
struct Decoded {
    info: CallInfo,
    timeout_ms: Option<u64>,
}

/// Per-call context handed to a tool handler.
///
/// The identity fields are decoded on first use, so a handler that never looks at them
/// pays nothing.
pub struct ToolContext<'a> {
    raw: &'a str,
    cancel: &'a AtomicBool,
    started: Instant,
    decoded: OnceLock<Decoded>,
}

impl std::fmt::Debug for ToolContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("info", self.info())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl<'a> ToolContext<'a> {
    /// A context decoded from the host's JSON (used by the SDK and by plugin tests).
    pub fn new(raw: &'a str, cancel: &'a AtomicBool) -> Self {
        ToolContext {
            raw,
            cancel,
            started: Instant::now(),
            decoded: OnceLock::new(),
        }
    }

    fn wire(&self) -> &Decoded {
        self.decoded.get_or_init(|| {
            let ctx: CallContext<'static> = serde_json::from_str(self.raw).unwrap_or_default();
            Decoded {
                timeout_ms: ctx.timeout_ms,
                info: ctx.into(),
            }
        })
    }

    /// Task, session, tool call id and user task.
    pub fn info(&self) -> &CallInfo {
        &self.wire().info
    }

    /// The agent task (`"default"` when the host did not name one).
    pub fn task_id(&self) -> &str {
        match self.info().task_id.as_str() {
            "" => "default",
            id => id,
        }
    }

    /// The session id (may be empty).
    pub fn session_id(&self) -> &str {
        &self.info().session_id
    }

    /// The model's `tool_call_id` (may be empty).
    pub fn tool_call_id(&self) -> &str {
        &self.info().tool_call_id
    }

    /// True once the host has given up on this call (timeout, interrupt). Long-running
    /// handlers should check this and return early: the host has already answered the
    /// model, and a handler that keeps running holds one of the host's threads.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Time left before the host's timeout for this call, if it has one.
    pub fn time_left(&self) -> Option<Duration> {
        let limit = Duration::from_millis(self.wire().timeout_ms?);
        Some(limit.saturating_sub(self.started.elapsed()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_lazily_and_tolerates_garbage() {
        let cancel = AtomicBool::new(false);
        let ctx = ToolContext::new(
            r#"{"task_id":"t1","session_id":"s","tool_call_id":"c","timeout_ms":5000,"future":1}"#,
            &cancel,
        );
        assert_eq!(ctx.task_id(), "t1");
        assert_eq!(ctx.tool_call_id(), "c");
        assert!(ctx.time_left().is_some_and(|d| d <= Duration::from_secs(5)));
        let bad = ToolContext::new("not json", &cancel);
        assert_eq!(bad.task_id(), "default");
        assert!(bad.time_left().is_none());
        cancel.store(true, Ordering::Relaxed);
        assert!(ctx.is_cancelled());
    }
}
