//! Joining a loaded plugin to the host: its declared tools become [`ToolEntry`]s
//! (`ToolSource::Plugin`) and its hooks become closures in [`Hooks`], owned by the
//! plugin's name.
//!
//! Policy enforced here: a tool whose name belongs to a core tool is refused unless the
//! manifest's `override` lists it; a tool that replaces another plugin's tool is allowed
//! (later sources win) and noted. Hook failures are contained: a `pre_tool_call` hook
//! that fails blocks the call (fail closed), any other failing hook is skipped.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use toolhost_plugin_api::PreDecision;
use toolhost_plugin_api::wire::{self, CallContext, HookKind};
use tools_core::hooks::{ApprovalEvent, PreToolCall, TerminalOutput, ToolCallRecord};
use tools_core::{
    AvailabilityCheck, Hooks, PreToolDecision, Registry, ToolContext, ToolEntry, ToolHandler,
    ToolSource,
};

use super::fault::PluginFault;
use super::manifest::Manifest;
use super::runtime::PluginRuntime;

/// What `register` returned (the wire type, owned).
pub type Declaration = wire::Declaration<'static>;

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
                        name: tool.name.to_string(),
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
                joined.tools.push(tool.name.to_string());
            }
            Err(reason) => joined.refused.push(RefusedTool {
                name: tool.name.to_string(),
                reason,
            }),
        }
    }
    for hook in &declaration.hooks {
        if let Some(kind) = HookKind::parse(hook) {
            register_hook(runtime, kind, hooks);
            joined.hooks.push(hook.to_string());
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
    tool: &wire::ToolDeclaration<'_>,
    source: &ToolSource,
) -> Result<ToolEntry, String> {
    let handler = if runtime.limits().timeout.is_some() {
        // Blocking dispatch waits on its own thread; async dispatch awaits the worker.
        let (blocking, awaited) = (Arc::clone(runtime), Arc::clone(runtime));
        ToolHandler::hybrid(
            move |args, ctx| blocking.call_blocking(index, &args, ctx),
            move |args, ctx| Arc::clone(&awaited).call_guarded(index, args, ctx),
        )
    } else {
        let runtime = Arc::clone(runtime);
        ToolHandler::sync(move |args, ctx| runtime.call_inline(index, &args, ctx))
    };
    let toolset = if tool.toolset.is_empty() {
        runtime.name()
    } else {
        &tool.toolset
    };
    let mut builder = ToolEntry::builder(tool.name.as_ref(), toolset)
        .description(tool.description.as_ref())
        .parameters(tool.parameters.clone().into_owned())
        .handler(handler)
        .requires_env(tool.requires_env.iter().cloned())
        .emoji(tool.emoji.as_ref())
        .parallel_safe(tool.parallel_safe)
        .source(source.clone());
    if let Some(limit) = tool.max_result_chars {
        builder = builder.max_result_chars(limit);
    }
    if tool.has_check {
        let runtime = Arc::clone(runtime);
        builder = builder.check(AvailabilityCheck::new(
            format!("{} ({})", tool.name, runtime.name()),
            move || runtime.check(index).map_err(|fault| fault.to_string()),
        ));
    }
    builder.build().map_err(|e| e.to_string())
}

fn call_context(ctx: &ToolContext) -> CallContext<'_> {
    CallContext::new(
        ctx.task_id.as_str(),
        ctx.session_id.as_str(),
        ctx.tool_call_id.as_str(),
        ctx.user_task.as_deref(),
    )
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "{}".into())
}

fn record_event(record: &ToolCallRecord<'_>) -> String {
    to_json(&wire::ToolCallEvent::new(
        record.tool,
        record.args,
        record.result,
        record.status.as_str(),
        record.duration.as_secs_f64() * 1000.0,
        call_context(record.ctx),
    ))
}

fn approval_event(event: &ApprovalEvent<'_>) -> String {
    to_json(&wire::ApprovalEvent::new(
        event.command,
        event.description,
        event.rule_keys,
        event.session_key,
        event.surface,
        event.tool_call_id,
        event.choice,
    ))
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
    match serde_json::from_str::<PreDecision>(answer) {
        Ok(PreDecision::Allow) => PreToolDecision::Allow,
        Ok(PreDecision::Block { message }) => PreToolDecision::Block { message },
        Ok(PreDecision::Rewrite { args }) => PreToolDecision::Rewrite { args },
        Ok(other) => PreToolDecision::Block {
            message: format!(
                "pre_tool_call hook of plugin {owner} gave an answer this host does not know: {other:?}"
            ),
        },
        Err(e) => PreToolDecision::Block {
            message: format!("pre_tool_call hook of plugin {owner} gave an unreadable answer: {e}"),
        },
    }
}

fn register_hook(runtime: &Arc<PluginRuntime>, kind: HookKind, hooks: &Hooks) {
    let owner = runtime.name().to_string();
    let rt = Arc::clone(runtime);
    match kind {
        HookKind::PreToolCall => hooks.on_pre_tool_call(owner, move |call: &PreToolCall<'_>| {
            let event = to_json(&wire::PreToolCallEvent::new(
                call.tool,
                call.args,
                call_context(call.ctx),
            ));
            match rt.hook(kind, &event) {
                Ok(answer) => pre_decision(rt.name(), &answer),
                // A disabled plugin no longer has a say.
                Err(PluginFault::Disabled { .. }) => PreToolDecision::Allow,
                Err(fault) => PreToolDecision::Block {
                    message: format!("pre_tool_call hook of plugin {} failed: {fault}", rt.name()),
                },
            }
        }),
        HookKind::PostToolCall => hooks.on_post_tool_call(owner, move |record| {
            if let Err(fault) = rt.hook(kind, &record_event(record)) {
                warn_failed(&rt, kind, &fault);
            }
        }),
        HookKind::TransformToolResult => hooks.on_transform_tool_result(owner, move |record| {
            match rt.hook(kind, &record_event(record)) {
                Ok(answer) => optional_text(&answer),
                Err(fault) => {
                    warn_failed(&rt, kind, &fault);
                    None
                }
            }
        }),
        HookKind::TransformTerminalOutput => {
            hooks.on_transform_terminal_output(owner, move |out: &TerminalOutput<'_>| {
                let event = to_json(&wire::TerminalOutputEvent::new(
                    out.command,
                    out.output,
                    out.exit_code,
                    out.task_id,
                    out.env_type,
                ));
                match rt.hook(kind, &event) {
                    Ok(answer) => optional_text(&answer),
                    Err(fault) => {
                        warn_failed(&rt, kind, &fault);
                        None
                    }
                }
            })
        }
        HookKind::PreApprovalRequest | HookKind::PostApprovalResponse => {
            let observe = move |event: &ApprovalEvent<'_>| {
                if let Err(fault) = rt.hook(kind, &approval_event(event)) {
                    warn_failed(&rt, kind, &fault);
                }
            };
            if kind == HookKind::PreApprovalRequest {
                hooks.on_pre_approval_request(owner, observe);
            } else {
                hooks.on_post_approval_response(owner, observe);
            }
        }
        // A kind added to the wire after this host was written: nothing to call it from.
        _ => {}
    }
}

/// A hook that failed where failing only skips it.
fn warn_failed(runtime: &PluginRuntime, kind: HookKind, fault: &PluginFault) {
    tracing::warn!(plugin = %runtime.name(), "{kind} hook failed: {fault}");
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
