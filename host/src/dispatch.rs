//! The dispatch pipeline: everything one tool call passes through.
//!
//! In order: look the tool up → parse the arguments → coerce strings to the schema's
//! types → validate against the JSON Schema → agent-loop tools answered by the agent-loop
//! state → `pre_tool_call` hooks (allow / block / rewrite) → the handler (sync on a
//! blocking thread, async awaited) → `post_tool_call` hooks → `transform_tool_result`
//! hooks → result size limit.
//!
//! Errors come in two levels with exact strings: the registry's
//! `{"error":"Unknown tool: NAME"}` / `{"error":"Tool execution failed: KIND: MESSAGE"}`,
//! and `{"error":"Error executing NAME: MESSAGE"}` around the whole pipeline should
//! anything in it fail unexpectedly. The result is always a valid JSON string; nothing
//! here panics on bad input.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use tools_core::agent_loop::stub_error;
use tools_core::availability::panic_message;
use tools_core::hooks::ToolCallRecord;
use tools_core::panic_safe::CatchUnwind;
use tools_core::registry::{run_entry, run_entry_blocking};
use tools_core::{
    AgentLoopState, CallStatus, DispatchResult, Hooks, PreToolDecision, Registry, ToolContext,
    ToolEntry,
};

use crate::coerce::{clamp_pagination, coerce_args};
use crate::spill::ResultSpill;
use crate::validation::validate_args;

/// `[dispatch]` in `config.toml`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct DispatchSettings {
    /// Most calls of one batch running at once.
    pub max_concurrency: usize,
    /// Deadline for a whole batch, in seconds (0 = none).
    pub batch_timeout_secs: f64,
    /// Grace given to running calls after Ctrl-C before they are reported cancelled.
    pub cancel_grace_secs: f64,
    /// Result size limit for tools that do not set their own (characters).
    pub max_result_chars: usize,
}

impl Default for DispatchSettings {
    fn default() -> Self {
        DispatchSettings {
            max_concurrency: 8,
            batch_timeout_secs: 420.0,
            cancel_grace_secs: 3.0,
            max_result_chars: tools_core::entry::DEFAULT_MAX_RESULT_CHARS,
        }
    }
}

/// Answers agent-loop tools (`todo`, `memory`, ...) from the agent's own state.
pub trait AgentLoopHandler: Send + Sync {
    /// The result for `name`, or `None` when this state does not handle it.
    fn handle(&self, name: &str, args: &Value, ctx: &ToolContext) -> Option<Value>;
}

/// Where a call stands after the checks that precede the handler.
enum Prepared {
    /// Finished early (error, block, agent-loop answer).
    Done {
        outcome: DispatchResult,
        args: Value,
    },
    /// Ready to run; `adjusted` says which arguments were clamped (for the result).
    Run {
        entry: Arc<ToolEntry>,
        args: Value,
        adjusted: Option<String>,
    },
}

/// The pipeline. Cheap to clone; share freely between threads.
#[derive(Clone)]
pub struct Dispatcher {
    registry: Arc<Registry>,
    hooks: Arc<Hooks>,
    agent_loop: Option<Arc<dyn AgentLoopHandler>>,
    spill: ResultSpill,
    default_limit: usize,
    unknown_note: Option<UnknownToolNote>,
}

/// Explains an unknown tool name better than "Unknown tool" (an MCP server that is
/// down); `None` keeps the plain message.
pub type UnknownToolNote = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("registry", &self.registry)
            .field("spill", &self.spill)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A pipeline over `registry` and `hooks`, spilling large results into `spill`.
    pub fn new(registry: Arc<Registry>, hooks: Arc<Hooks>, spill: ResultSpill) -> Self {
        Dispatcher {
            registry,
            hooks,
            agent_loop: None,
            spill,
            default_limit: tools_core::entry::DEFAULT_MAX_RESULT_CHARS,
            unknown_note: None,
        }
    }

    /// Explain unknown tool names with `note` (e.g. which MCP server is down and why).
    pub fn with_unknown_tool_note(mut self, note: UnknownToolNote) -> Self {
        self.unknown_note = Some(note);
        self
    }

    /// Answer agent-loop tools with `state`.
    pub fn with_agent_loop(mut self, state: Arc<dyn AgentLoopHandler>) -> Self {
        self.agent_loop = Some(state);
        self
    }

    /// Limit for tools without their own.
    pub fn with_default_limit(mut self, chars: usize) -> Self {
        self.default_limit = chars;
        self
    }

    /// The registry behind this pipeline.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The hooks this pipeline runs.
    pub fn hooks(&self) -> &Arc<Hooks> {
        &self.hooks
    }

    /// Run one call synchronously (from any thread, with or without a runtime) and
    /// return the result string.
    pub fn handle_function_call(&self, name: &str, args_json: &str, ctx: &ToolContext) -> String {
        self.call(name, args_json, ctx).text
    }

    /// Run one call from async code and return the result string.
    pub async fn handle_function_call_async(
        &self,
        name: &str,
        args_json: &str,
        ctx: &ToolContext,
    ) -> String {
        self.call_async(name, args_json, ctx).await.text
    }

    /// Run one call synchronously; sync handlers run on this thread.
    pub fn call(&self, name: &str, args_json: &str, ctx: &ToolContext) -> DispatchResult {
        let started = self.clock();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            match self.prepare(name, args_json, ctx) {
                Prepared::Done { outcome, args } => {
                    self.observe(name, &args, outcome, started, ctx)
                }
                Prepared::Run {
                    entry,
                    args,
                    adjusted,
                } => {
                    // Keep a copy of the arguments only when a hook will look at them.
                    let (for_handler, kept) = self.split_args(args);
                    let result =
                        note_adjusted(run_entry_blocking(&entry, for_handler, ctx), adjusted);
                    self.finish(&entry, &kept, result, started, ctx)
                }
            }
        }));
        result.unwrap_or_else(|panic| pipeline_failure(name, &panic_message(&panic)))
    }

    /// Run one call from async code; sync handlers go to the blocking pool.
    pub async fn call_async(
        &self,
        name: &str,
        args_json: &str,
        ctx: &ToolContext,
    ) -> DispatchResult {
        let started = self.clock();
        let pipeline = async {
            match self.prepare(name, args_json, ctx) {
                Prepared::Done { outcome, args } => {
                    self.observe(name, &args, outcome, started, ctx)
                }
                Prepared::Run {
                    entry,
                    args,
                    adjusted,
                } => {
                    let (for_handler, kept) = self.split_args(args);
                    let result = note_adjusted(run_entry(&entry, for_handler, ctx).await, adjusted);
                    self.finish(&entry, &kept, result, started, ctx)
                }
            }
        };
        CatchUnwind::new(pipeline)
            .await
            .unwrap_or_else(|panic| pipeline_failure(name, &panic_message(&panic)))
    }

    /// The call's start, read only when a result hook will want its duration (a clock
    /// read is a noticeable part of a no-op call). A hook registered while the call runs
    /// sees a zero duration for it.
    fn clock(&self) -> Option<Instant> {
        self.hooks.has_result_hooks().then(Instant::now)
    }

    fn split_args(&self, args: Value) -> (Value, Value) {
        if self.hooks.has_result_hooks() {
            (args.clone(), args)
        } else {
            (args, Value::Null)
        }
    }

    /// Everything before the handler.
    fn prepare(&self, name: &str, args_json: &str, ctx: &ToolContext) -> Prepared {
        let Some(entry) = self.registry.get(name) else {
            return Prepared::Done {
                outcome: DispatchResult::error_with_status(
                    self.unknown_note
                        .as_ref()
                        .and_then(|note| note(name))
                        .unwrap_or_else(|| format!("Unknown tool: {name}")),
                    CallStatus::Error,
                ),
                args: Value::Null,
            };
        };
        let mut args = match parse_args(name, args_json) {
            Ok(args) => args,
            Err(outcome) => {
                return Prepared::Done {
                    outcome,
                    args: Value::Null,
                };
            }
        };
        coerce_args(&mut args, &entry.parameters);
        let adjusted = clamp_pagination(&mut args, &entry.parameters);
        if let Err(problems) = validate_args(&entry, &args) {
            return Prepared::Done {
                outcome: DispatchResult::error_with_status(
                    format!("Invalid arguments for {name}: {problems}"),
                    CallStatus::Error,
                ),
                args,
            };
        }
        if AgentLoopState::intercepts(name) {
            let answer = self
                .agent_loop
                .as_ref()
                .and_then(|state| state.handle(name, &args, ctx))
                .unwrap_or_else(|| stub_error(name));
            let status = if tools_core::result::is_error_value(&answer) {
                CallStatus::Error
            } else {
                CallStatus::Ok
            };
            return Prepared::Done {
                outcome: DispatchResult {
                    text: tools_core::registry::to_json_text(&answer),
                    status,
                },
                args,
            };
        }
        match self.hooks.run_pre_tool_call(name, &args, ctx) {
            PreToolDecision::Allow => Prepared::Run {
                entry,
                args,
                adjusted,
            },
            PreToolDecision::Block { message } => Prepared::Done {
                outcome: DispatchResult::error_with_status(message, CallStatus::Blocked),
                args,
            },
            PreToolDecision::Rewrite {
                args: mut rewritten,
            } => {
                coerce_args(&mut rewritten, &entry.parameters);
                match validate_args(&entry, &rewritten) {
                    Ok(()) => Prepared::Run {
                        entry,
                        args: rewritten,
                        adjusted: None,
                    },
                    Err(problems) => Prepared::Done {
                        outcome: DispatchResult::error_with_status(
                            format!(
                                "Arguments rewritten by a pre_tool_call hook are invalid for {name}: {problems}"
                            ),
                            CallStatus::Blocked,
                        ),
                        args: rewritten,
                    },
                }
            }
        }
    }

    /// Post hooks, transforms and the size limit for a call that ran.
    fn finish(
        &self,
        entry: &ToolEntry,
        args: &Value,
        result: DispatchResult,
        started: Option<Instant>,
        ctx: &ToolContext,
    ) -> DispatchResult {
        let mut outcome = result;
        if self.hooks.has_result_hooks() {
            let record = ToolCallRecord {
                tool: &entry.name,
                args,
                result: &outcome.text,
                status: outcome.status,
                duration: started.map_or(Duration::ZERO, |at| at.elapsed()),
                ctx,
            };
            self.hooks.run_post_tool_call(&record);
            if let Some(replaced) = self.hooks.run_transform_tool_result(&record) {
                outcome.text = ensure_json(replaced);
            }
        }
        let limit = entry.max_result_chars.unwrap_or(self.default_limit);
        outcome.text = self
            .spill
            .apply(&entry.name, &ctx.tool_call_id, outcome.text, limit);
        outcome
    }

    /// Post hooks for a call that finished before its handler (error, block, agent loop).
    fn observe(
        &self,
        name: &str,
        args: &Value,
        outcome: DispatchResult,
        started: Option<Instant>,
        ctx: &ToolContext,
    ) -> DispatchResult {
        if self.hooks.has_result_hooks() {
            self.hooks.run_post_tool_call(&ToolCallRecord {
                tool: name,
                args,
                result: &outcome.text,
                status: outcome.status,
                duration: started.map_or(Duration::ZERO, |at| at.elapsed()),
                ctx,
            });
        }
        outcome
    }

    /// Report a call that never ran (batch deadline, Ctrl-C) to the observers.
    pub fn report_unrun(
        &self,
        name: &str,
        args_json: &str,
        outcome: &DispatchResult,
        waited: Duration,
        ctx: &ToolContext,
    ) {
        if self.hooks.has_result_hooks() {
            let args = serde_json::from_str(args_json).unwrap_or(Value::Null);
            self.hooks.run_post_tool_call(&ToolCallRecord {
                tool: name,
                args: &args,
                result: &outcome.text,
                status: outcome.status,
                duration: waited,
                ctx,
            });
        }
    }
}

/// `{"error":"Error executing NAME: MESSAGE"}` for an unexpected pipeline failure.
pub fn pipeline_failure(name: &str, message: &str) -> DispatchResult {
    tracing::error!(tool = name, %message, "dispatch pipeline failed");
    DispatchResult::error_with_status(
        format!("Error executing {name}: {message}"),
        CallStatus::Error,
    )
}

/// Parse the model's argument text: empty means `{}`, anything else must be a JSON object.
fn parse_args(name: &str, args_json: &str) -> Result<Value, DispatchResult> {
    let trimmed = args_json.trim();
    if trimmed.is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(DispatchResult::error_with_status(
            format!(
                "Invalid arguments for {name}: expected a JSON object, got {}. The tool was not run.",
                json_type(&other)
            ),
            CallStatus::Error,
        )),
        Err(err) => Err(DispatchResult::error_with_status(
            format!(
                "Invalid JSON arguments for {name}: {err}. Send a JSON object (use {{}} for no arguments). The tool was not run."
            ),
            CallStatus::Error,
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A hook may return any text; the model must still get JSON.
fn ensure_json(text: String) -> String {
    if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() {
        text
    } else {
        Value::String(text).to_string()
    }
}

/// `result` with `"adjusted"` saying which arguments were clamped, when it is a JSON
/// object (docs/model-servers.md, "Small models").
fn note_adjusted(mut result: DispatchResult, adjusted: Option<String>) -> DispatchResult {
    if let Some(note) = adjusted
        && let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&result.text)
    {
        map.insert("adjusted".into(), Value::String(note));
        result.text = Value::Object(map).to_string();
    }
    result
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
