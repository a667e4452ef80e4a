//! Per-call context handed to every tool handler and hook.
//!
//! It identifies the call (task, session, tool call id) and carries the cancellation
//! token the dispatcher fires on Ctrl-C or a batch deadline. Long-running handlers
//! should watch `cancel`.

use tokio_util::sync::CancellationToken;

/// Identity and cancellation of one tool call.
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    /// The agent task this call belongs to; environments (terminal cwd, containers)
    /// are kept per task. Empty means `"default"`.
    pub task_id: String,
    /// The conversation/session; session-scoped approvals are keyed by it.
    pub session_id: String,
    /// The model's `tool_call_id` (may be empty for direct calls).
    pub tool_call_id: String,
    /// The user's request that led to this call, when the agent knows it.
    pub user_task: Option<String>,
    /// Fired when the call should stop (Ctrl-C, batch deadline, MCP cancellation).
    pub cancel: CancellationToken,
}

impl ToolContext {
    /// A context for `task_id` with everything else empty.
    pub fn for_task(task_id: impl Into<String>) -> Self {
        ToolContext {
            task_id: task_id.into(),
            ..ToolContext::default()
        }
    }

    /// The task id, with the empty id mapped to `"default"`.
    pub fn task_key(&self) -> &str {
        if self.task_id.is_empty() {
            "default"
        } else {
            &self.task_id
        }
    }

    /// The session id, with the empty id mapped to `"default"`.
    pub fn session_key(&self) -> &str {
        if self.session_id.is_empty() {
            "default"
        } else {
            &self.session_id
        }
    }
}
