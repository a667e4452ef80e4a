//! Who can be asked: the interactive terminal prompt, an embedder's async callback, or
//! nobody (then `approvals.no_human` decides).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a human is asked about. Text fields are already redacted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The command (secrets redacted).
    pub command: String,
    /// Why it was flagged (every finding, `; `-separated).
    pub description: String,
    /// The rule keys that fired (what `session`/`always` approve).
    pub rule_keys: Vec<String>,
    /// Session the decision applies to.
    pub session_key: String,
    /// The model's tool call id.
    pub tool_call_id: String,
    /// Whether `always` may be offered.
    pub allow_always: bool,
    /// The smart approver judged it unsafe: only `once` or `deny` are offered.
    pub smart_denied: bool,
}

/// A human's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Run this command, this time.
    Once,
    /// Approve these rules for the rest of the session.
    Session,
    /// Approve these rules for good (written to `approvals.command_allowlist`).
    Always,
    /// Do not run it; an optional reason is relayed to the model.
    Deny {
        /// Why, if the human said.
        reason: Option<String>,
    },
    /// Nobody answered in time.
    Timeout,
}

impl Choice {
    /// Lowercase name for observers (`once`, `session`, `always`, `deny`, `timeout`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Choice::Once => "once",
            Choice::Session => "session",
            Choice::Always => "always",
            Choice::Deny { .. } => "deny",
            Choice::Timeout => "timeout",
        }
    }
}

/// A boxed future (what [`ApprovalCallback::ask`] returns).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An embedder's way to ask its user (a chat UI, a messaging gateway, MCP elicitation).
/// The engine waits at most `approvals.timeout` seconds for the answer (then: timeout,
/// which denies).
pub trait ApprovalCallback: Send + Sync {
    /// Ask about `request`.
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Choice>;

    /// Whether a human can be asked about `request` at all (an MCP client that does not
    /// support elicitation cannot). When false, the engine falls back to the next
    /// surface and then to `approvals.no_human`.
    fn available(&self, request: &ApprovalRequest) -> bool {
        let _ = request;
        true
    }

    /// The `surface` observers see (`pre_approval_request`, `post_approval_response`).
    fn surface(&self) -> &'static str {
        "callback"
    }
}

/// The human surfaces available to the engine.
#[derive(Clone, Default)]
pub struct Surfaces {
    /// Asked first, when set.
    pub callback: Option<Arc<dyn ApprovalCallback>>,
    /// Prompt on the controlling terminal (`/dev/tty`) when no callback is set and a
    /// terminal is present.
    pub terminal: bool,
}

impl std::fmt::Debug for Surfaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surfaces")
            .field("callback", &self.callback.is_some())
            .field("terminal", &self.terminal)
            .finish()
    }
}

impl Surfaces {
    /// Nobody can be asked (batch runs, servers without a client that can answer).
    pub fn none() -> Self {
        Surfaces::default()
    }

    /// Prompt on the controlling terminal.
    pub fn terminal() -> Self {
        Surfaces {
            callback: None,
            terminal: true,
        }
    }

    /// Ask through `callback`.
    pub fn callback(callback: Arc<dyn ApprovalCallback>) -> Self {
        Surfaces {
            callback: Some(callback),
            terminal: false,
        }
    }
}
