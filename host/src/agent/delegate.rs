//! `delegate_task`: child agents with their own conversation (a `subagent` session
//! whose parent is the caller's), the parent's tools minus the blocked ones, and their
//! own model-call limit (`[delegation] max_iterations`). A batch (`tasks`, at most
//! `max_concurrent_children`) runs concurrently; each child's final answer is its
//! summary. The call returns when every child has finished (Hermes returns at once and
//! re-injects results later for top-level calls; toolhost's loop has no background
//! re-entry — docs/hermes/agent-loop.md). Children report progress into the parent's
//! event sink; an interrupt of the parent's call interrupts them.

use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tools_core::ToolContext;
use tools_core::result::tool_error;

use super::assemble::Agent;
use super::events::AgentEvent;
use super::turn::TurnEnd;

/// One task of a batch.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct TaskSpec {
    goal: String,
    context: Option<String>,
    role: Option<String>,
}

/// Arguments of `delegate_task`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct DelegateArgs {
    goal: Option<String>,
    context: Option<String>,
    tasks: Option<Vec<TaskSpec>>,
    role: Option<String>,
    background: Option<bool>,
}

/// Run `delegate_task` for `parent` (blocking this thread while the children run).
pub fn delegate_task(parent: &Agent, args: &Value, ctx: &ToolContext) -> Value {
    let args: DelegateArgs = match serde_json::from_value(args.clone()) {
        Ok(args) => args,
        Err(err) => return tool_error(format!("Invalid arguments for delegate_task: {err}")),
    };
    let max_children = parent.shared.delegation.max_concurrent_children.max(1);
    if parent.depth >= parent.shared.delegation.max_spawn_depth {
        return tool_error(format!(
            "delegate_task is not available at depth {}: delegation.max_spawn_depth is {}.",
            parent.depth, parent.shared.delegation.max_spawn_depth
        ));
    }
    let tasks = match (args.tasks, args.goal) {
        (Some(tasks), _) if !tasks.is_empty() => {
            if tasks.len() > max_children {
                return tool_error(format!(
                    "Too many tasks: {} provided, but max_concurrent_children is {max_children}. \
                     Either reduce the task count, split into multiple delegate_task calls, or \
                     increase delegation.max_concurrent_children in config.toml.",
                    tasks.len()
                ));
            }
            tasks
        }
        (_, Some(goal)) if !goal.trim().is_empty() => vec![TaskSpec {
            goal,
            context: args.context,
            role: args.role,
        }],
        _ => return tool_error("Provide either 'goal' (single task) or 'tasks' (batch)."),
    };
    if let Some(i) = tasks.iter().position(|t| t.goal.trim().is_empty()) {
        return tool_error(format!("Task {i} is missing a 'goal'."));
    }
    let _ = args.background; // Ignored, as in Hermes.
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return tool_error("delegate_task needs the agent loop's runtime");
    };
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return tool_error("delegate_task needs a multi-threaded runtime");
    }
    let started = Instant::now();
    let parent_session = ctx.session_id.clone();
    let cancel = ctx.cancel.clone();
    let parent = parent.clone();
    // The dispatcher calls agent-loop tools synchronously; the children are async.
    let results = tokio::task::block_in_place(|| {
        handle.block_on(run_children(parent, tasks, parent_session, cancel))
    });
    json!({
        "results": results,
        "total_duration_seconds": round2(started.elapsed().as_secs_f64()),
    })
}

async fn run_children(
    parent: Agent,
    tasks: Vec<TaskSpec>,
    parent_session: String,
    cancel: tokio_util::sync::CancellationToken,
) -> Vec<Value> {
    let mut set = JoinSet::new();
    for (index, task) in tasks.into_iter().enumerate() {
        let sink = parent.events.clone();
        let child = parent.child(Arc::new(move |event| {
            sink(AgentEvent::Child(index, Box::new(event)));
        }));
        let parent_session = parent_session.clone();
        let cancel = cancel.child_token();
        set.spawn(async move {
            (
                index,
                run_child(child, index, task, &parent_session, &cancel).await,
            )
        });
    }
    let mut results = Vec::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok(pair) => results.push(pair),
            Err(err) => tracing::error!(%err, "a delegate_task child failed to run"),
        }
    }
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, v)| v).collect()
}

async fn run_child(
    child: Agent,
    index: usize,
    task: TaskSpec,
    parent_session: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Value {
    let started = Instant::now();
    let mut conversation =
        match child.new_conversation(Some(parent_session).filter(|s| !s.is_empty())) {
            Ok(c) => c,
            Err(err) => {
                return json!({
                    "task_index": index, "status": "error", "summary": null,
                    "error": err.to_string(), "api_calls": 0,
                    "duration_seconds": round2(started.elapsed().as_secs_f64()),
                });
            }
        };
    let mut prompt = format!("TASK: {}", task.goal.trim());
    if let Some(context) = task.context.as_deref().filter(|c| !c.trim().is_empty()) {
        prompt.push_str(&format!("\n\nCONTEXT:\n{}", context.trim()));
    }
    prompt.push_str(
        "\n\nYou are a subagent working on a delegated task. Do it with your tools, then \
         reply with a concise summary of what you did and found: that summary is all the \
         delegating agent will see.",
    );
    let _ = task.role;
    let outcome = child.run_turn(&mut conversation, &prompt, cancel).await;
    let (status, exit_reason) = match outcome.end {
        TurnEnd::Completed => ("completed", "completed"),
        TurnEnd::TurnLimit => ("failed", "max_iterations"),
        TurnEnd::Interrupted => ("interrupted", "interrupted"),
        TurnEnd::Partial | TurnEnd::Failed => ("error", "error"),
    };
    let mut entry = json!({
        "task_index": index,
        "status": status,
        "summary": outcome.text,
        "api_calls": outcome.model_calls,
        "duration_seconds": round2(started.elapsed().as_secs_f64()),
        "model": child.client().endpoint().model,
        "exit_reason": exit_reason,
        "tokens": {"input": outcome.usage.prompt_tokens, "output": outcome.usage.completion_tokens},
        "session_id": conversation.session_id,
    });
    if status == "error" {
        entry["error"] = json!(outcome.text);
    }
    entry
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
