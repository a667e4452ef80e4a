//! Observers of approval decisions: what the engine reports about every flagged command
//! (before it asks, and once it is decided), with the command already redacted.
//!
//! The engine only needs these two calls, so it takes a trait object rather than a
//! hook registry: the host passes its hooks (`tools_core::Hooks` implements this), an
//! embedder its own logger, and [`NoObserver`] ignores everything.

/// What approval observers see. Commands are already redacted.
#[derive(Clone, Debug)]
pub struct ApprovalEvent<'a> {
    /// The (redacted) command.
    pub command: &'a str,
    /// Why it was flagged.
    pub description: &'a str,
    /// The rule keys that fired.
    pub rule_keys: &'a [String],
    /// The session the decision applies to.
    pub session_key: &'a str,
    /// Who is asked: `cli`, `callback`, `smart`, `mcp-elicitation`, `policy`.
    pub surface: &'a str,
    /// The tool call being decided.
    pub tool_call_id: &'a str,
    /// `None` before the decision; afterwards `once`, `session`, `always`, `deny`,
    /// `timeout`, `smart_approve`, `smart_deny`, ...
    pub choice: Option<&'a str>,
}

/// Receives approval events. Implementations must not block for long: they run on the
/// thread that is deciding whether a command may run.
pub trait ApprovalObserver: Send + Sync {
    /// A flagged command is about to be put to `event.surface` (`choice` is `None`).
    fn pre_approval_request(&self, event: &ApprovalEvent<'_>);
    /// A flagged command was decided (`choice` says how).
    fn post_approval_response(&self, event: &ApprovalEvent<'_>);
}

/// An observer that ignores every event.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoObserver;

impl ApprovalObserver for NoObserver {
    fn pre_approval_request(&self, _event: &ApprovalEvent<'_>) {}
    fn post_approval_response(&self, _event: &ApprovalEvent<'_>) {}
}
