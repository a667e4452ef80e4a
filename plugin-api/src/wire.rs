//! The JSON that crosses the plugin boundary, defined once for both sides.
//!
//! The ABI itself is tiny (see [`abi`](crate::abi)): a few functions that pass strings.
//! What those strings hold is defined here — the declaration a plugin returns from
//! `register`, the context of each call, the events each hook kind receives and the
//! [`HookKind`] names — and nowhere else. The SDK decodes these types and turns them into
//! the friendlier structs plugin authors see ([`ToolCall`](crate::ToolCall),
//! [`ToolContext`](crate::ToolContext), ...); the host encodes them from its own state
//! without copying (every text field is a [`Cow`]); an out-of-process plugin host speaks
//! exactly the same JSON over a pipe.
//!
//! Compatibility rules, which the round-trip tests below pin down: every field has a
//! default, so either side may leave out what it does not know; unknown fields are
//! ignored; empty identity fields are left out of a call context (the SDK reads a missing
//! field as empty). Adding a field is a compatible change; renaming or retyping one is a
//! new ABI version.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::hooks::PreDecision;

/// The kinds of hooks a plugin can register, as their names cross the boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HookKind {
    /// Before a call: allow, block or rewrite its arguments ([`PreToolCallEvent`] →
    /// [`PreDecision`]).
    PreToolCall,
    /// After a call: observe it ([`ToolCallEvent`] → `null`).
    PostToolCall,
    /// After a call: replace its result ([`ToolCallEvent`] → string or `null`).
    TransformToolResult,
    /// After a foreground terminal command: replace its output ([`TerminalOutputEvent`]
    /// → string or `null`).
    TransformTerminalOutput,
    /// Before the user is asked to approve a command ([`ApprovalEvent`] → `null`).
    PreApprovalRequest,
    /// After the user answered an approval request ([`ApprovalEvent`] → `null`).
    PostApprovalResponse,
}

impl HookKind {
    /// Every kind, in the order the host lists them.
    pub const ALL: [HookKind; 6] = [
        HookKind::PreToolCall,
        HookKind::PostToolCall,
        HookKind::TransformToolResult,
        HookKind::TransformTerminalOutput,
        HookKind::PreApprovalRequest,
        HookKind::PostApprovalResponse,
    ];

    /// The name on the wire (`pre_tool_call`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            HookKind::PreToolCall => "pre_tool_call",
            HookKind::PostToolCall => "post_tool_call",
            HookKind::TransformToolResult => "transform_tool_result",
            HookKind::TransformTerminalOutput => "transform_terminal_output",
            HookKind::PreApprovalRequest => "pre_approval_request",
            HookKind::PostApprovalResponse => "post_approval_response",
        }
    }

    /// The kind named `name`, if there is one.
    pub fn parse(name: &str) -> Option<HookKind> {
        HookKind::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

impl fmt::Display for HookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a plugin's `register` returns: its tools, in order (a tool's index is its
/// number in `call_tool`), and the hook kinds it has hooks for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct Declaration<'a> {
    /// The SDK version that produced the declaration.
    pub sdk_version: Cow<'a, str>,
    /// The tools, in order.
    pub tools: Vec<ToolDeclaration<'a>>,
    /// Hook kinds with at least one hook. Kept as names, so that a host can report a
    /// kind newer than itself instead of refusing the whole plugin.
    pub hooks: Vec<Cow<'a, str>>,
}

impl<'a> Declaration<'a> {
    /// A declaration from `sdk_version` with these tools and hook kinds.
    pub fn new(
        sdk_version: impl Into<Cow<'a, str>>,
        tools: Vec<ToolDeclaration<'a>>,
        hooks: impl IntoIterator<Item = HookKind>,
    ) -> Self {
        Declaration {
            sdk_version: sdk_version.into(),
            tools,
            hooks: hooks
                .into_iter()
                .map(|k| Cow::Borrowed(k.as_str()))
                .collect(),
        }
    }
}

/// One tool as declared to the host.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolDeclaration<'a> {
    /// Tool name.
    pub name: Cow<'a, str>,
    /// Toolset (the SDK fills in the plugin's name when the author left it empty).
    pub toolset: Cow<'a, str>,
    /// Description for the model.
    pub description: Cow<'a, str>,
    /// JSON Schema of the arguments.
    pub parameters: Cow<'a, Value>,
    /// Environment variables the tool needs.
    pub requires_env: Cow<'a, [String]>,
    /// An emoji for user interfaces.
    pub emoji: Cow<'a, str>,
    /// Results longer than this are spilled to a file.
    pub max_result_chars: Option<usize>,
    /// May run concurrently with other parallel-safe calls.
    pub parallel_safe: bool,
    /// The tool has an availability check (`check_tool`).
    pub has_check: bool,
}

impl Default for ToolDeclaration<'_> {
    fn default() -> Self {
        ToolDeclaration {
            name: Cow::Borrowed(""),
            toolset: Cow::Borrowed(""),
            description: Cow::Borrowed(""),
            parameters: Cow::Owned(empty_object_schema()),
            requires_env: Cow::Borrowed(&[]),
            emoji: Cow::Borrowed(""),
            max_result_chars: None,
            parallel_safe: false,
            has_check: false,
        }
    }
}

/// The schema of a tool without arguments.
pub fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// The context of one call (the `context` argument of `call_tool`, and the `context`
/// of call events). Empty fields are left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct CallContext<'a> {
    /// The agent task (`""` means the default task).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub task_id: Cow<'a, str>,
    /// The conversation/session.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub session_id: Cow<'a, str>,
    /// The model's `tool_call_id` (empty for direct calls).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub tool_call_id: Cow<'a, str>,
    /// The user's request that led to the call, when the agent knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_task: Option<Cow<'a, str>>,
    /// The host's timeout for this call, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl<'a> CallContext<'a> {
    /// A context with these identity fields and no timeout.
    pub fn new(
        task_id: impl Into<Cow<'a, str>>,
        session_id: impl Into<Cow<'a, str>>,
        tool_call_id: impl Into<Cow<'a, str>>,
        user_task: Option<impl Into<Cow<'a, str>>>,
    ) -> Self {
        CallContext {
            task_id: task_id.into(),
            session_id: session_id.into(),
            tool_call_id: tool_call_id.into(),
            user_task: user_task.map(Into::into),
            timeout_ms: None,
        }
    }

    /// The same context with the host's timeout.
    pub fn with_timeout_ms(mut self, timeout_ms: Option<u64>) -> Self {
        self.timeout_ms = timeout_ms;
        self
    }
}

/// The event of [`HookKind::PreToolCall`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct PreToolCallEvent<'a> {
    /// Tool name.
    pub tool: Cow<'a, str>,
    /// Arguments (already rewritten by earlier hooks, if any).
    pub args: Cow<'a, Value>,
    /// Call identity.
    pub context: CallContext<'a>,
}

impl<'a> PreToolCallEvent<'a> {
    /// The event for a call of `tool` with `args`.
    pub fn new(tool: &'a str, args: &'a Value, context: CallContext<'a>) -> Self {
        PreToolCallEvent {
            tool: Cow::Borrowed(tool),
            args: Cow::Borrowed(args),
            context,
        }
    }
}

/// The event of [`HookKind::PostToolCall`] and [`HookKind::TransformToolResult`]: a
/// finished call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolCallEvent<'a> {
    /// Tool name.
    pub tool: Cow<'a, str>,
    /// Arguments the handler ran with.
    pub args: Cow<'a, Value>,
    /// The result string (JSON).
    pub result: Cow<'a, str>,
    /// How the call ended: `ok`, `error`, `blocked`, `timeout`, `cancelled` (kept as a
    /// name so that newer statuses pass through older plugins).
    pub status: Cow<'a, str>,
    /// Wall time, in milliseconds.
    pub duration_ms: f64,
    /// Call identity.
    pub context: CallContext<'a>,
}

impl<'a> ToolCallEvent<'a> {
    /// The event for a finished call of `tool`.
    pub fn new(
        tool: &'a str,
        args: &'a Value,
        result: &'a str,
        status: &'a str,
        duration_ms: f64,
        context: CallContext<'a>,
    ) -> Self {
        ToolCallEvent {
            tool: Cow::Borrowed(tool),
            args: Cow::Borrowed(args),
            result: Cow::Borrowed(result),
            status: Cow::Borrowed(status),
            duration_ms,
            context,
        }
    }
}

/// The event of [`HookKind::TransformTerminalOutput`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct TerminalOutputEvent<'a> {
    /// The command that ran.
    pub command: Cow<'a, str>,
    /// Its combined output, before truncation and redaction.
    pub output: Cow<'a, str>,
    /// Its exit code.
    pub exit_code: i32,
    /// The task it ran for.
    pub task_id: Cow<'a, str>,
    /// The backend (`local`, `docker`, `ssh`, ...).
    pub env_type: Cow<'a, str>,
}

impl<'a> TerminalOutputEvent<'a> {
    /// The event for `command`'s output.
    pub fn new(
        command: &'a str,
        output: &'a str,
        exit_code: i32,
        task_id: &'a str,
        env_type: &'a str,
    ) -> Self {
        TerminalOutputEvent {
            command: Cow::Borrowed(command),
            output: Cow::Borrowed(output),
            exit_code,
            task_id: Cow::Borrowed(task_id),
            env_type: Cow::Borrowed(env_type),
        }
    }
}

/// The event of [`HookKind::PreApprovalRequest`] and [`HookKind::PostApprovalResponse`].
/// The command is already redacted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ApprovalEvent<'a> {
    /// The (redacted) command.
    pub command: Cow<'a, str>,
    /// Why it was flagged.
    pub description: Cow<'a, str>,
    /// The rule keys that fired.
    pub rule_keys: Cow<'a, [String]>,
    /// The session the decision applies to.
    pub session_key: Cow<'a, str>,
    /// Who is asked: `cli`, `callback`, `smart`, `mcp-elicitation`, `policy`.
    pub surface: Cow<'a, str>,
    /// The tool call being decided.
    pub tool_call_id: Cow<'a, str>,
    /// `None` before the decision; afterwards `once`, `session`, `always`, `deny`, ...
    pub choice: Option<Cow<'a, str>>,
}

impl<'a> ApprovalEvent<'a> {
    /// The event for an approval request (`choice` is `None`) or its answer.
    pub fn new(
        command: &'a str,
        description: &'a str,
        rule_keys: &'a [String],
        session_key: &'a str,
        surface: &'a str,
        tool_call_id: &'a str,
        choice: Option<&'a str>,
    ) -> Self {
        ApprovalEvent {
            command: Cow::Borrowed(command),
            description: Cow::Borrowed(description),
            rule_keys: Cow::Borrowed(rule_keys),
            session_key: Cow::Borrowed(session_key),
            surface: Cow::Borrowed(surface),
            tool_call_id: Cow::Borrowed(tool_call_id),
            choice: choice.map(Cow::Borrowed),
        }
    }
}

/// The answer of [`HookKind::TransformToolResult`] and
/// [`HookKind::TransformTerminalOutput`]: the replacement text, or `None` to keep it.
pub type TransformAnswer = Option<String>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    fn round_trip<T: Serialize + DeserializeOwned + PartialEq + fmt::Debug>(value: &T) {
        let text = serde_json::to_string(value).unwrap();
        let back: T = serde_json::from_str(&text).unwrap();
        assert_eq!(&back, value, "{text}");
    }

    #[test]
    fn hook_kind_names_round_trip() {
        for kind in HookKind::ALL {
            assert_eq!(HookKind::parse(kind.as_str()), Some(kind));
            let quoted = serde_json::to_string(&kind).unwrap();
            assert_eq!(quoted, format!("\"{kind}\""));
            round_trip(&kind);
        }
        assert_eq!(HookKind::parse("on_everything"), None);
    }

    #[test]
    fn declaration_round_trips() {
        let env = vec!["API_KEY".to_string()];
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let tool = ToolDeclaration {
            name: "count".into(),
            toolset: "demo".into(),
            description: "Counts".into(),
            parameters: Cow::Borrowed(&schema),
            requires_env: Cow::Borrowed(&env),
            emoji: "🔢".into(),
            max_result_chars: Some(10),
            parallel_safe: true,
            has_check: true,
        };
        let declaration = Declaration::new("0.1.0", vec![tool], [HookKind::PostToolCall]);
        round_trip(&declaration);
    }

    #[test]
    fn missing_fields_take_defaults_and_unknown_ones_are_ignored() {
        let declaration: Declaration<'static> =
            serde_json::from_str(r#"{"tools":[{"name":"t","future":1}],"later":true}"#).unwrap();
        let tool = &declaration.tools[0];
        assert_eq!(tool.name, "t");
        assert_eq!(tool.toolset, "");
        assert_eq!(*tool.parameters, empty_object_schema());
        assert!(!tool.has_check);
        assert!(declaration.hooks.is_empty());
    }

    #[test]
    fn empty_context_fields_are_left_out() {
        let ctx = CallContext::new("", "s1", "", None::<&str>).with_timeout_ms(Some(5));
        assert_eq!(
            serde_json::to_string(&ctx).unwrap(),
            r#"{"session_id":"s1","timeout_ms":5}"#
        );
        round_trip(&ctx);
        round_trip(&CallContext::new("t", "s", "c", Some("do it")));
    }

    #[test]
    fn events_round_trip() {
        let args = json!({"path": "a.txt"});
        let ctx = CallContext::new("t1", "", "call_1", None::<&str>);
        round_trip(&PreToolCallEvent::new("read_file", &args, ctx.clone()));
        round_trip(&ToolCallEvent::new(
            "read_file",
            &args,
            r#"{"content":"x"}"#,
            "ok",
            1.5,
            ctx,
        ));
        round_trip(&TerminalOutputEvent::new("ls", "a\n", 0, "t1", "local"));
        let keys = vec!["fs.rm_recursive".to_string()];
        round_trip(&ApprovalEvent::new(
            "rm -rf build",
            "recursive delete",
            &keys,
            "s",
            "cli",
            "call_1",
            Some("once"),
        ));
    }

    #[test]
    fn pre_decisions_round_trip() {
        for decision in [
            PreDecision::Allow,
            PreDecision::block("no"),
            PreDecision::rewrite(json!({"a": 1})),
        ] {
            round_trip(&decision);
        }
    }
}
