//! Joining a loaded plugin to the host: its declared tools become [`ToolEntry`]s
//! (`ToolSource::Plugin`) and its hooks become closures in [`Hooks`], owned by the
//! plugin's name.
//!
//! Policy enforced here: a tool whose name belongs to a core tool is refused unless the
//! manifest's `override` lists it; a tool that replaces another plugin's tool is allowed
//! (later sources win) and noted. Hook failures are contained: a `pre_tool_call` hook
//! that fails blocks the call (fail closed), any other failing hook is skipped.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_plugin_api::hooks::kind;
use tools_core::hooks::{ApprovalEvent, PreToolCall, TerminalOutput, ToolCallRecord};
use tools_core::{
    AvailabilityCheck, Hooks, PreToolDecision, Registry, ToolContext, ToolEntry, ToolHandler,
    ToolSource,
};

use super::manifest::Manifest;
use super::runtime::PluginRuntime;

/// What `register` returned, as JSON.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Declaration {
    /// The SDK version that produced it.
    pub sdk_version: String,
    /// The tools, in order (their index is the ABI's tool number).
    pub tools: Vec<ToolDeclaration>,
    /// Hook kinds with at least one hook.
    pub hooks: Vec<String>,
}

/// One declared tool.
#[derive(Clone, Debug, Deserialize)]
pub struct ToolDeclaration {
    /// Tool name.
    pub name: String,
    /// Toolset.
    #[serde(default)]
    pub toolset: String,
    /// Description for the model.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments.
    #[serde(default = "empty_schema")]
    pub parameters: Value,
    /// Environment variables needed.
    #[serde(default)]
    pub requires_env: Vec<String>,
    /// UI emoji.
    #[serde(default)]
    pub emoji: String,
    /// Result size limit.
    #[serde(default)]
    pub max_result_chars: Option<usize>,
    /// May run concurrently with other parallel-safe calls.
    #[serde(default)]
    pub parallel_safe: bool,
    /// Has an availability check.
    #[serde(default)]
    pub has_check: bool,
}

fn empty_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// A tool the host would not register.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RefusedTool {
    /// The tool's name.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// What joined the host.
#[derive(Clone, Debug, Default)]
pub struct Joined {
    /// Registered tool names, in declaration order.
    pub tools: Vec<String>,
    /// Tools refused.
    pub refused: Vec<RefusedTool>,
    /// Registered hook kinds.
    pub hooks: Vec<String>,
    /// Things worth a warning.
    pub warnings: Vec<String>,
}

/// Register `declaration`'s tools and hooks for `runtime`.
pub fn join(
    runtime: &Arc<PluginRuntime>,
    declaration: &Declaration,
    manifest: &Manifest,
    registry: &Registry,
    hooks: &Hooks,
) -> Joined {
    let mut joined = Joined::default();
    let source = ToolSource::Plugin(runtime.name().to_string());
    for (index, tool) in declaration.tools.iter().enumerate() {
        let Ok(index) = u32::try_from(index) else {
            break;
        };
        if let Some(existing) = registry.get(&tool.name) {
            match &existing.source {
                ToolSource::Core if !manifest.may_override(&tool.name) => {
                    joined.refused.push(RefusedTool {
                        name: tool.name.clone(),
                        reason: format!(
                            "collides with the core tool {}; list it in plugin.toml's `override` to replace it",
                            tool.name
                        ),
                    });
                    continue;
                }
                ToolSource::Core => joined.warnings.push(format!(
                    "replaces the core tool {} (allowed by `override`)",
                    tool.name
                )),
                other if *other != source => joined
                    .warnings
                    .push(format!("replaces tool {} of {other}", tool.name)),
                _ => {}
            }
        }
        match build_entry(runtime, index, tool, &source) {
            Ok(entry) => {
                registry.register(entry);
                runtime.add_tool(&tool.name);
                joined.tools.push(tool.name.clone());
            }
            Err(reason) => joined.refused.push(RefusedTool {
                name: tool.name.clone(),
                reason,
            }),
        }
    }
    for hook in &declaration.hooks {
        if register_hook(runtime, hook, hooks) {
            joined.hooks.push(hook.clone());
        } else {
            joined
                .warnings
                .push(format!("unknown hook kind {hook:?} ignored"));
        }
    }
    joined
}

fn build_entry(
    runtime: &Arc<PluginRuntime>,
    index: u32,
    tool: &ToolDeclaration,
    source: &ToolSource,
) -> Result<ToolEntry, String> {
    let handler = if runtime.limits().timeout.is_some() {
        let runtime = Arc::clone(runtime);
        ToolHandler::from_async(move |args, ctx| {
            Arc::clone(&runtime).call_guarded(index, args, ctx)
        })
    } else {
        let runtime = Arc::clone(runtime);
        ToolHandler::sync(move |args, ctx| runtime.call_inline(index, &args, ctx))
    };
    let toolset = if tool.toolset.is_empty() {
        runtime.name()
    } else {
        &tool.toolset
    };
    let mut builder = ToolEntry::builder(&tool.name, toolset)
        .description(&tool.description)
        .parameters(tool.parameters.clone())
        .handler(handler)
        .requires_env(tool.requires_env.iter().cloned())
        .emoji(&tool.emoji)
        .parallel_safe(tool.parallel_safe)
        .source(source.clone());
    if let Some(limit) = tool.max_result_chars {
        builder = builder.max_result_chars(limit);
    }
    if tool.has_check {
        let runtime = Arc::clone(runtime);
        builder = builder.check(AvailabilityCheck::new(
            format!("{} ({})", tool.name, runtime.name()),
            move || runtime.check(index),
        ));
    }
    builder.build().map_err(|e| e.to_string())
}

#[derive(Serialize)]
struct CallInfo<'a> {
    task_id: &'a str,
    session_id: &'a str,
    tool_call_id: &'a str,
    user_task: Option<&'a str>,
}

impl<'a> From<&'a ToolContext> for CallInfo<'a> {
    fn from(ctx: &'a ToolContext) -> Self {
        CallInfo {
            task_id: &ctx.task_id,
            session_id: &ctx.session_id,
            tool_call_id: &ctx.tool_call_id,
            user_task: ctx.user_task.as_deref(),
        }
    }
}

#[derive(Serialize)]
struct PreEvent<'a> {
    tool: &'a str,
    args: &'a Value,
    context: CallInfo<'a>,
}

#[derive(Serialize)]
struct RecordEvent<'a> {
    tool: &'a str,
    args: &'a Value,
    result: &'a str,
    status: &'a str,
    duration_ms: f64,
    context: CallInfo<'a>,
}

#[derive(Serialize)]
struct TerminalEvent<'a> {
    command: &'a str,
    output: &'a str,
    exit_code: i32,
    task_id: &'a str,
    env_type: &'a str,
}

#[derive(Serialize)]
struct ApprovalWire<'a> {
    command: &'a str,
    description: &'a str,
    rule_keys: &'a [String],
    session_key: &'a str,
    surface: &'a str,
    tool_call_id: &'a str,
    choice: Option<&'a str>,
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "{}".into())
}

fn record_event(record: &ToolCallRecord<'_>) -> String {
    to_json(&RecordEvent {
        tool: record.tool,
        args: record.args,
        result: record.result,
        status: record.status.as_str(),
        duration_ms: duration_ms(record.duration),
        context: record.ctx.into(),
    })
}

fn duration_ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn approval_event(event: &ApprovalEvent<'_>) -> String {
    to_json(&ApprovalWire {
        command: event.command,
        description: event.description,
        rule_keys: event.rule_keys,
        session_key: event.session_key,
        surface: event.surface,
        tool_call_id: event.tool_call_id,
        choice: event.choice,
    })
}

/// A hook answer that is `null` or a string.
fn optional_text(answer: &str) -> Option<String> {
    match serde_json::from_str::<Value>(answer) {
        Ok(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// The `pre_tool_call` answer as a host decision (anything unrecognised blocks).
fn pre_decision(owner: &str, answer: &str) -> PreToolDecision {
    #[derive(Deserialize)]
    #[serde(tag = "action", rename_all = "snake_case")]
    enum Wire {
        Allow,
        Block { message: String },
        Rewrite { args: Value },
    }
    match serde_json::from_str::<Wire>(answer) {
        Ok(Wire::Allow) => PreToolDecision::Allow,
        Ok(Wire::Block { message }) => PreToolDecision::Block { message },
        Ok(Wire::Rewrite { args }) => PreToolDecision::Rewrite { args },
        Err(e) => PreToolDecision::Block {
            message: format!("pre_tool_call hook of plugin {owner} gave an unreadable answer: {e}"),
        },
    }
}

fn register_hook(runtime: &Arc<PluginRuntime>, hook_kind: &str, hooks: &Hooks) -> bool {
    let owner = runtime.name().to_string();
    let rt = Arc::clone(runtime);
    match hook_kind {
        kind::PRE_TOOL_CALL => hooks.on_pre_tool_call(owner, move |call: &PreToolCall<'_>| {
            let event = to_json(&PreEvent {
                tool: call.tool,
                args: call.args,
                context: call.ctx.into(),
            });
            match rt.hook(kind::PRE_TOOL_CALL, &event) {
                Ok(answer) => pre_decision(rt.name(), &answer),
                // A disabled plugin no longer has a say.
                Err(_) if rt.disabled_reason().is_some() => PreToolDecision::Allow,
                Err(reason) => PreToolDecision::Block {
                    message: format!("pre_tool_call hook of plugin {} failed: {reason}", rt.name()),
                },
            }
        }),
        kind::POST_TOOL_CALL => hooks.on_post_tool_call(owner, move |record| {
            if let Err(reason) = rt.hook(kind::POST_TOOL_CALL, &record_event(record)) {
                tracing::warn!(plugin = %rt.name(), "post_tool_call hook failed: {reason}");
            }
        }),
        kind::TRANSFORM_TOOL_RESULT => hooks.on_transform_tool_result(owner, move |record| {
            match rt.hook(kind::TRANSFORM_TOOL_RESULT, &record_event(record)) {
                Ok(answer) => optional_text(&answer),
                Err(reason) => {
                    tracing::warn!(plugin = %rt.name(), "transform_tool_result hook failed: {reason}");
                    None
                }
            }
        }),
        kind::TRANSFORM_TERMINAL_OUTPUT => {
            hooks.on_transform_terminal_output(owner, move |out: &TerminalOutput<'_>| {
                let event = to_json(&TerminalEvent {
                    command: out.command,
                    output: out.output,
                    exit_code: out.exit_code,
                    task_id: out.task_id,
                    env_type: out.env_type,
                });
                match rt.hook(kind::TRANSFORM_TERMINAL_OUTPUT, &event) {
                    Ok(answer) => optional_text(&answer),
                    Err(reason) => {
                        tracing::warn!(plugin = %rt.name(), "transform_terminal_output hook failed: {reason}");
                        None
                    }
                }
            })
        }
        kind::PRE_APPROVAL_REQUEST | kind::POST_APPROVAL_RESPONSE => {
            let which = if hook_kind == kind::PRE_APPROVAL_REQUEST {
                kind::PRE_APPROVAL_REQUEST
            } else {
                kind::POST_APPROVAL_RESPONSE
            };
            let observe = move |event: &ApprovalEvent<'_>| {
                if let Err(reason) = rt.hook(which, &approval_event(event)) {
                    tracing::warn!(plugin = %rt.name(), "{which} hook failed: {reason}");
                }
            };
            if which == kind::PRE_APPROVAL_REQUEST {
                hooks.on_pre_approval_request(owner, observe);
            } else {
                hooks.on_post_approval_response(owner, observe);
            }
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_decisions_parse_and_garbage_blocks() {
        assert_eq!(
            pre_decision("p", r#"{"action":"allow"}"#),
            PreToolDecision::Allow
        );
        assert_eq!(
            pre_decision("p", r#"{"action":"block","message":"m"}"#),
            PreToolDecision::Block {
                message: "m".into()
            }
        );
        assert_eq!(
            pre_decision("p", r#"{"action":"rewrite","args":{"a":1}}"#),
            PreToolDecision::Rewrite {
                args: serde_json::json!({"a": 1})
            }
        );
        assert!(matches!(
            pre_decision("p", "null"),
            PreToolDecision::Block { .. }
        ));
    }

    #[test]
    fn optional_text_answers() {
        assert_eq!(optional_text("null"), None);
        assert_eq!(optional_text(r#""x""#).as_deref(), Some("x"));
        assert_eq!(optional_text("{}"), None);
    }
}
