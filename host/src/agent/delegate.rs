//! `delegate_task`: child agents with their own conversation (a `subagent` session
//! whose parent is the caller's), the parent's tools minus the blocked ones, and their
//! own model-call limit (`[delegation] max_iterations`). A batch (`tasks`, at most
//! `max_concurrent_children`) runs concurrently; each child's final answer is its
//! summary. In an interactive session (`with_background`) the top-level call returns at
//! once with a `dispatched` answer and the batch runs in the background (`background.rs`),
//! as in Hermes; otherwise (one-shot runs, children, every slot taken) the call returns
//! when every child has finished. Children report progress into the parent's event
//! sink; an interrupt of the parent's call interrupts foreground children, the end of
//! the session interrupts background ones.

use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::task::JoinSet;
use tools_core::ToolContext;
use tools_core::result::tool_error;
use tools_core::tools::args::parse;

use super::assemble::Agent;
use super::background::Background;
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
    let args: DelegateArgs = match parse(args.clone()) {
        Ok(args) => args,
        Err(err) => return err.to_result(),
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
    // The model's `background` is ignored, as in Hermes: the top level of an
    // interactive session always delegates in the background.
    let _ = args.background;
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return tool_error("delegate_task needs the agent loop's runtime");
    };
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return tool_error("delegate_task needs a multi-threaded runtime");
    }
    let parent_session = ctx.session_id.clone();
    let mut note = None;
    if let Some(background) = parent.background.as_ref().filter(|_| parent.depth == 0) {
        match background.reserve() {
            Some(id) => {
                return dispatch_background(parent, background, id, tasks, parent_session, &handle);
            }
            None => note = Some(AT_CAPACITY),
        }
    }
    let started = Instant::now();
    let cancel = ctx.cancel.clone();
    let parent = parent.clone();
    // The dispatcher calls agent-loop tools synchronously; the children are async.
    let results = tokio::task::block_in_place(|| {
        handle.block_on(run_children(parent, tasks, parent_session, cancel))
    });
    let mut answer = json!({
        "results": results,
        "total_duration_seconds": round2(started.elapsed().as_secs_f64()),
    });
    if let Some(note) = note {
        answer["note"] = json!(note);
    }
    answer
}

const AT_CAPACITY: &str = "Every background delegation slot (delegation.max_concurrent_children) \
    was taken, so the subagent(s) ran in the foreground and the result is above.";

/// Start the batch on the runtime and answer at once; the result reaches
/// `background` (and the conversation) when every child has finished.
fn dispatch_background(
    parent: &Agent,
    background: &Arc<Background>,
    id: String,
    tasks: Vec<TaskSpec>,
    parent_session: String,
    handle: &tokio::runtime::Handle,
) -> Value {
    let goals: Vec<String> = tasks.iter().map(|t| t.goal.clone()).collect();
    let count = goals.len();
    let cancel = background.stop_token();
    let (parent, background, batch_id, batch_goals) = (
        parent.clone(),
        Arc::clone(background),
        id.clone(),
        goals.clone(),
    );
    handle.spawn(async move {
        let started = Instant::now();
        let events = parent.events.clone();
        let results = run_children(parent, tasks, parent_session, cancel).await;
        let result = json!({
            "results": results,
            "total_duration_seconds": round2(started.elapsed().as_secs_f64()),
        });
        background.finish(&batch_id, batch_goals, result, &events);
    });
    let note = if count == 1 {
        "The subagent is running in the background. Keep working; its result joins the \
         conversation as a new message when it finishes. Do not wait or poll."
            .to_string()
    } else {
        format!(
            "{count} subagents are running in parallel in the background. Keep working; \
             their consolidated results join the conversation as one message when all of \
             them finish. Do not wait or poll."
        )
    };
    json!({
        "status": "dispatched",
        "mode": "background",
        "count": count,
        "delegation_id": id,
        "goals": goals,
        "note": note,
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
