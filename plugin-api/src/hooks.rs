//! Hook events and decisions: how a plugin watches and steers tool calls.
//!
//! Register hooks with the [`Plugin`](crate::Plugin) builder. Each kind may be registered
//! several times; the hooks of one plugin run in registration order:
//! - `pre_tool_call` → [`PreDecision`]: the first `Block` wins, `Rewrite`s chain;
//! - `post_tool_call` observes a [`ToolCallRecord`];
//! - `transform_tool_result` → `Some(text)` replaces the result (first one wins);
//! - `transform_terminal_output` → `Some(text)` replaces terminal output (first wins);
//! - `pre_approval_request` / `post_approval_response` observe an [`ApprovalEvent`].
//!
//! Hooks run on the host's call path: keep them quick.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::CallInfo;
use crate::wire::{self, HookKind};

/// The names of the hook kinds, as they cross the ABI (the same names as
/// [`HookKind::as_str`], kept for plugins written against the first SDK).
pub mod kind {
    use crate::wire::HookKind;

    /// `pre_tool_call`.
    pub const PRE_TOOL_CALL: &str = HookKind::PreToolCall.as_str();
    /// `post_tool_call`.
    pub const POST_TOOL_CALL: &str = HookKind::PostToolCall.as_str();
    /// `transform_tool_result`.
    pub const TRANSFORM_TOOL_RESULT: &str = HookKind::TransformToolResult.as_str();
    /// `transform_terminal_output`.
    pub const TRANSFORM_TERMINAL_OUTPUT: &str = HookKind::TransformTerminalOutput.as_str();
    /// `pre_approval_request`.
    pub const PRE_APPROVAL_REQUEST: &str = HookKind::PreApprovalRequest.as_str();
    /// `post_approval_response`.
    pub const POST_APPROVAL_RESPONSE: &str = HookKind::PostApprovalResponse.as_str();
    /// Every kind, in the order the host lists them.
    pub const ALL: [&str; 6] = [
        PRE_TOOL_CALL,
        POST_TOOL_CALL,
        TRANSFORM_TOOL_RESULT,
        TRANSFORM_TERMINAL_OUTPUT,
        PRE_APPROVAL_REQUEST,
        POST_APPROVAL_RESPONSE,
    ];
}

/// A call about to run (what `pre_tool_call` hooks see).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolCall {
    /// Tool name.
    pub tool: String,
    /// Arguments (already rewritten by earlier hooks, if any).
    pub args: Value,
    /// Call identity.
    pub context: CallInfo,
}

/// What a `pre_tool_call` hook decides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PreDecision {
    /// Let the call through.
    Allow,
    /// Refuse the call; the message becomes the `{"error": ...}` result.
    Block {
        /// Shown to the model.
        message: String,
    },
    /// Run the call with these arguments instead (they are validated again).
    Rewrite {
        /// The new arguments.
        args: Value,
    },
}

impl PreDecision {
    /// `Block` with `message`.
    pub fn block(message: impl Into<String>) -> Self {
        PreDecision::Block {
            message: message.into(),
        }
    }

    /// `Rewrite` with `args`.
    pub fn rewrite(args: Value) -> Self {
        PreDecision::Rewrite { args }
    }
}

/// How a call ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallStatus {
    /// The tool ran and its result has no `error` field.
    #[default]
    Ok,
    /// The tool failed or returned an `{"error": ...}` result.
    Error,
    /// A hook or the approval gate refused the call.
    Blocked,
    /// The call exceeded its deadline.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// A status this SDK does not know yet.
    #[serde(other)]
    Other,
}

impl CallStatus {
    /// The status named `name` on the wire; [`CallStatus::Other`] for names this SDK
    /// does not know.
    pub fn from_name(name: &str) -> CallStatus {
        match name {
            "ok" => CallStatus::Ok,
            "error" => CallStatus::Error,
            "blocked" => CallStatus::Blocked,
            "timeout" => CallStatus::Timeout,
            "cancelled" => CallStatus::Cancelled,
            _ => CallStatus::Other,
        }
    }
}

/// A finished call (what `post_tool_call` and `transform_tool_result` hooks see).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolCallRecord {
    /// Tool name.
    pub tool: String,
    /// Arguments the handler ran with.
    pub args: Value,
    /// The result string (JSON).
    pub result: String,
    /// How the call ended.
    pub status: CallStatus,
    /// Wall time, in milliseconds.
    pub duration_ms: f64,
    /// Call identity.
    pub context: CallInfo,
}

impl ToolCallRecord {
    /// Wall time of the call.
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration_ms.max(0.0) / 1000.0)
    }
}

/// Foreground terminal output (what `transform_terminal_output` hooks see).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct TerminalOutput {
    /// The command that ran.
    pub command: String,
    /// Its combined output, before truncation and redaction.
    pub output: String,
    /// Its exit code.
    pub exit_code: i32,
    /// The task it ran for.
    pub task_id: String,
    /// The backend (`local`, `docker`, `ssh`, ...).
    pub env_type: String,
}

/// An approval request or decision (what approval observers see). Commands are
/// already redacted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ApprovalEvent {
    /// The (redacted) command.
    pub command: String,
    /// Why it was flagged.
    pub description: String,
    /// The rule keys that fired.
    pub rule_keys: Vec<String>,
    /// The session the decision applies to.
    pub session_key: String,
    /// Who is asked: `cli`, `callback`, `smart`, `mcp-elicitation`, `policy`.
    pub surface: String,
    /// The tool call being decided.
    pub tool_call_id: String,
    /// `None` before the decision; afterwards `once`, `session`, `always`, `deny`, ...
    pub choice: Option<String>,
}

impl From<wire::PreToolCallEvent<'_>> for ToolCall {
    fn from(event: wire::PreToolCallEvent<'_>) -> Self {
        ToolCall {
            tool: event.tool.into_owned(),
            args: event.args.into_owned(),
            context: event.context.into(),
        }
    }
}

impl From<wire::ToolCallEvent<'_>> for ToolCallRecord {
    fn from(event: wire::ToolCallEvent<'_>) -> Self {
        ToolCallRecord {
            tool: event.tool.into_owned(),
            args: event.args.into_owned(),
            result: event.result.into_owned(),
            status: CallStatus::from_name(&event.status),
            duration_ms: event.duration_ms,
            context: event.context.into(),
        }
    }
}

impl From<wire::TerminalOutputEvent<'_>> for TerminalOutput {
    fn from(event: wire::TerminalOutputEvent<'_>) -> Self {
        TerminalOutput {
            command: event.command.into_owned(),
            output: event.output.into_owned(),
            exit_code: event.exit_code,
            task_id: event.task_id.into_owned(),
            env_type: event.env_type.into_owned(),
        }
    }
}

impl From<wire::ApprovalEvent<'_>> for ApprovalEvent {
    fn from(event: wire::ApprovalEvent<'_>) -> Self {
        ApprovalEvent {
            command: event.command.into_owned(),
            description: event.description.into_owned(),
            rule_keys: event.rule_keys.into_owned(),
            session_key: event.session_key.into_owned(),
            surface: event.surface.into_owned(),
            tool_call_id: event.tool_call_id.into_owned(),
            choice: event.choice.map(|c| c.into_owned()),
        }
    }
}

pub(crate) type PreHook = dyn Fn(&ToolCall) -> PreDecision + Send + Sync;
pub(crate) type PostHook = dyn Fn(&ToolCallRecord) + Send + Sync;
pub(crate) type TransformResultHook = dyn Fn(&ToolCallRecord) -> Option<String> + Send + Sync;
pub(crate) type TransformTerminalHook = dyn Fn(&TerminalOutput) -> Option<String> + Send + Sync;
pub(crate) type ApprovalHook = dyn Fn(&ApprovalEvent) + Send + Sync;

/// All hooks of one plugin.
#[derive(Default)]
pub(crate) struct HookSet {
    pub(crate) pre: Vec<Box<PreHook>>,
    pub(crate) post: Vec<Box<PostHook>>,
    pub(crate) transform_result: Vec<Box<TransformResultHook>>,
    pub(crate) transform_terminal: Vec<Box<TransformTerminalHook>>,
    pub(crate) pre_approval: Vec<Box<ApprovalHook>>,
    pub(crate) post_approval: Vec<Box<ApprovalHook>>,
}

/// Why a hook event could not be handled.
pub(crate) enum HookError {
    UnknownKind,
    BadEvent(serde_json::Error),
}

/// Decode the wire event `W` and turn it into the SDK's type `T`.
fn parse<W: serde::de::DeserializeOwned + Into<T>, T>(event: &str) -> Result<T, HookError> {
    serde_json::from_str::<W>(event)
        .map(Into::into)
        .map_err(HookError::BadEvent)
}

fn answer<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

impl HookSet {
    /// The kinds that have at least one hook.
    pub(crate) fn kinds(&self) -> Vec<HookKind> {
        let present = [
            !self.pre.is_empty(),
            !self.post.is_empty(),
            !self.transform_result.is_empty(),
            !self.transform_terminal.is_empty(),
            !self.pre_approval.is_empty(),
            !self.post_approval.is_empty(),
        ];
        HookKind::ALL
            .into_iter()
            .zip(present)
            .filter(|(_, on)| *on)
            .map(|(k, _)| k)
            .collect()
    }

    /// Run the hooks of `kind` on the JSON `event`; the JSON answer.
    pub(crate) fn run(&self, hook_kind: &str, event: &str) -> Result<String, HookError> {
        let Some(hook_kind) = HookKind::parse(hook_kind) else {
            return Err(HookError::UnknownKind);
        };
        match hook_kind {
            HookKind::PreToolCall => {
                let mut call: ToolCall = parse::<wire::PreToolCallEvent<'static>, _>(event)?;
                let mut rewritten = false;
                for hook in &self.pre {
                    match hook(&call) {
                        PreDecision::Allow => {}
                        block @ PreDecision::Block { .. } => return Ok(answer(&block)),
                        PreDecision::Rewrite { args } => {
                            call.args = args;
                            rewritten = true;
                        }
                    }
                }
                Ok(answer(&if rewritten {
                    PreDecision::Rewrite { args: call.args }
                } else {
                    PreDecision::Allow
                }))
            }
            HookKind::PostToolCall => {
                let record: ToolCallRecord = parse::<wire::ToolCallEvent<'static>, _>(event)?;
                self.post.iter().for_each(|hook| hook(&record));
                Ok("null".into())
            }
            HookKind::TransformToolResult => {
                let record: ToolCallRecord = parse::<wire::ToolCallEvent<'static>, _>(event)?;
                Ok(answer(
                    &self.transform_result.iter().find_map(|hook| hook(&record)),
                ))
            }
            HookKind::TransformTerminalOutput => {
                let output: TerminalOutput = parse::<wire::TerminalOutputEvent<'static>, _>(event)?;
                Ok(answer(
                    &self
                        .transform_terminal
                        .iter()
                        .find_map(|hook| hook(&output)),
                ))
            }
            HookKind::PreApprovalRequest => {
                let approval: ApprovalEvent = parse::<wire::ApprovalEvent<'static>, _>(event)?;
                self.pre_approval.iter().for_each(|hook| hook(&approval));
                Ok("null".into())
            }
            HookKind::PostApprovalResponse => {
                let approval: ApprovalEvent = parse::<wire::ApprovalEvent<'static>, _>(event)?;
                self.post_approval.iter().for_each(|hook| hook(&approval));
                Ok("null".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pre_hooks_chain_rewrites_and_stop_at_block() {
        let mut hooks = HookSet::default();
        hooks.pre.push(Box::new(|call| {
            PreDecision::rewrite(json!({"n": call.args["n"].as_i64().unwrap_or(0) + 1}))
        }));
        hooks.pre.push(Box::new(|call| {
            PreDecision::rewrite(json!({"n": call.args["n"].as_i64().unwrap_or(0) * 10}))
        }));
        let out = hooks
            .run(kind::PRE_TOOL_CALL, r#"{"tool":"t","args":{"n":1}}"#)
            .ok()
            .unwrap();
        assert_eq!(out, r#"{"action":"rewrite","args":{"n":20}}"#);
        hooks.pre.push(Box::new(|_| PreDecision::block("no")));
        let out = hooks
            .run(kind::PRE_TOOL_CALL, r#"{"tool":"t","args":{}}"#)
            .ok()
            .unwrap();
        assert_eq!(out, r#"{"action":"block","message":"no"}"#);
    }

    #[test]
    fn unknown_status_is_other() {
        let record: ToolCallRecord =
            serde_json::from_str(r#"{"tool":"t","status":"exploded"}"#).unwrap();
        assert_eq!(record.status, CallStatus::Other);
    }

    #[test]
    fn kinds_lists_registered_only() {
        let mut hooks = HookSet::default();
        assert!(hooks.kinds().is_empty());
        hooks.post.push(Box::new(|_| {}));
        hooks.post_approval.push(Box::new(|_| {}));
        assert_eq!(
            hooks.kinds(),
            vec![HookKind::PostToolCall, HookKind::PostApprovalResponse]
        );
    }
}
