//! Batch execution of one assistant message's `tool_calls`.
//!
//! The calls are cut into ordered segments: consecutive parallel-safe calls form a run
//! that executes concurrently (at most `max_concurrency` at once); anything else — an
//! interactive or mutating tool, an unknown tool, arguments that are not a JSON object —
//! is a barrier that runs alone. Path-scoped tools (file tools) join a run only when
//! their path does not overlap (same file, ancestor or descendant) a path already in it.
//! Results come back one per call, in the model's order, each with its `tool_call_id`.
//! A batch deadline turns unfinished calls into timeout results; an interrupt (Ctrl-C)
//! turns unstarted calls into "cancelled" and gives running ones a short grace.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tools_core::{CallStatus, DispatchResult, Parallelism, ToolContext};

use crate::dispatch::Dispatcher;

/// One call from the model.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct ToolCall {
    /// The model's `tool_call_id`.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON text (as the model sent them).
    pub arguments: String,
}

/// One tool message for the model, in OpenAI chat format.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct ToolMessage {
    /// Always `"tool"`.
    pub role: String,
    /// The call this answers.
    pub tool_call_id: String,
    /// Tool name.
    pub name: String,
    /// The result: a JSON string.
    pub content: String,
}

/// Resolves a path argument to a canonical path for overlap checks.
pub type PathResolver = Arc<dyn Fn(&ToolContext, &str) -> PathBuf + Send + Sync>;

/// How a batch runs.
#[derive(Clone)]
pub struct BatchOptions {
    /// Most calls running at once.
    pub max_concurrency: usize,
    /// Deadline for the whole batch.
    pub deadline: Option<Duration>,
    /// Fired on Ctrl-C: unstarted calls are cancelled, running ones get `cancel_grace`.
    pub interrupt: CancellationToken,
    /// How long running calls may take to stop after an interrupt.
    pub cancel_grace: Duration,
    /// Task and session of the calls (tool_call_id is filled per call).
    pub context: ToolContext,
    /// Canonicalises path arguments of path-scoped tools.
    pub resolve_path: PathResolver,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            max_concurrency: 8,
            deadline: Some(Duration::from_secs(420)),
            interrupt: CancellationToken::new(),
            cancel_grace: Duration::from_secs(3),
            context: ToolContext::default(),
            resolve_path: Arc::new(|_, path| canonical_path(Path::new(path))),
        }
    }
}

/// A run of calls that execute together, or a single barrier call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Indices of calls that may run concurrently.
    Parallel(Vec<usize>),
    /// Index of a call that runs alone.
    Sequential(usize),
}

/// Cut `calls` into segments (see the module docs).
pub fn plan(
    dispatcher: &Dispatcher,
    calls: &[ToolCall],
    ctx: &ToolContext,
    resolve: &PathResolver,
) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let mut reserved: Vec<PathBuf> = Vec::new();
    let close = |run: &mut Vec<usize>, reserved: &mut Vec<PathBuf>, segments: &mut Vec<Segment>| {
        match run.len() {
            0 => {}
            1 => segments.push(Segment::Sequential(run[0])),
            _ => segments.push(Segment::Parallel(std::mem::take(run))),
        }
        run.clear();
        reserved.clear();
    };
    for (index, call) in calls.iter().enumerate() {
        let class = dispatcher.registry().get(&call.name).and_then(|entry| {
            let args: Value = serde_json::from_str(&call.arguments)
                .ok()
                .filter(Value::is_object)?;
            match &entry.parallelism {
                Parallelism::Exclusive => None,
                Parallelism::Safe => Some(None),
                Parallelism::PathScoped(arg) => {
                    let path = args
                        .get(arg)
                        .and_then(Value::as_str)
                        .filter(|p| !p.is_empty())?;
                    Some(Some(resolve(ctx, path)))
                }
            }
        });
        match class {
            None => {
                close(&mut run, &mut reserved, &mut segments);
                segments.push(Segment::Sequential(index));
            }
            Some(None) => run.push(index),
            Some(Some(path)) => {
                if reserved.iter().any(|p| overlaps(p, &path)) {
                    close(&mut run, &mut reserved, &mut segments);
                }
                reserved.push(path);
                run.push(index);
            }
        }
    }
    close(&mut run, &mut reserved, &mut segments);
    segments
}

/// True when one path is the other or contains it.
fn overlaps(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Absolute, `..`-free path; symlinks resolved for the part that exists.
pub fn canonical_path(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut normal = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    // Canonicalise the deepest existing ancestor, keep the rest as written.
    let mut existing = normal.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        if !existing.pop() {
            break;
        }
    }
    let mut out = std::fs::canonicalize(&existing).unwrap_or(existing);
    out.extend(rest.iter().rev());
    out
}

enum TaskOutcome {
    Ran(DispatchResult),
    NotStarted,
}

struct Running {
    index: usize,
    token: CancellationToken,
    started: Instant,
    handle: JoinHandle<TaskOutcome>,
}

/// Run one assistant message's calls; one message per call, in order.
pub async fn dispatch_batch(
    dispatcher: &Dispatcher,
    calls: &[ToolCall],
    options: &BatchOptions,
) -> Vec<ToolMessage> {
    let deadline = options.deadline.map(|d| tokio::time::Instant::now() + d);
    let semaphore = Arc::new(Semaphore::new(options.max_concurrency.max(1)));
    let mut results: Vec<Option<DispatchResult>> = vec![None; calls.len()];
    let segments = plan(dispatcher, calls, &options.context, &options.resolve_path);
    for segment in segments {
        let indices = match segment {
            Segment::Parallel(indices) => indices,
            Segment::Sequential(index) => vec![index],
        };
        let mut running = Vec::with_capacity(indices.len());
        for index in indices {
            if options.interrupt.is_cancelled()
                || deadline.is_some_and(|d| tokio::time::Instant::now() >= d)
            {
                break;
            }
            running.push(spawn_call(
                dispatcher,
                &calls[index],
                index,
                options,
                &semaphore,
            ));
        }
        collect(dispatcher, calls, running, &mut results, options, deadline).await;
        if options.interrupt.is_cancelled()
            || deadline.is_some_and(|d| tokio::time::Instant::now() >= d)
        {
            break;
        }
    }
    calls
        .iter()
        .zip(results)
        .map(|(call, outcome)| {
            let outcome = outcome.unwrap_or_else(|| {
                let outcome = if options.interrupt.is_cancelled() {
                    cancelled_before_start(&call.name)
                } else {
                    timed_out(&call.name, options.deadline)
                };
                let mut ctx = options.context.clone();
                ctx.tool_call_id = call.id.clone();
                dispatcher.report_unrun(
                    &call.name,
                    &call.arguments,
                    &outcome,
                    Duration::ZERO,
                    &ctx,
                );
                outcome
            });
            ToolMessage {
                role: "tool".into(),
                tool_call_id: call.id.clone(),
                name: call.name.clone(),
                content: outcome.text,
            }
        })
        .collect()
}

fn spawn_call(
    dispatcher: &Dispatcher,
    call: &ToolCall,
    index: usize,
    options: &BatchOptions,
    semaphore: &Arc<Semaphore>,
) -> Running {
    let token = options.interrupt.child_token();
    let mut ctx = options.context.clone();
    ctx.tool_call_id = call.id.clone();
    ctx.cancel = token.clone();
    let (dispatcher, call, semaphore) = (dispatcher.clone(), call.clone(), Arc::clone(semaphore));
    let task_token = token.clone();
    let handle = tokio::spawn(async move {
        let permit = tokio::select! {
            biased;
            () = task_token.cancelled() => return TaskOutcome::NotStarted,
            permit = semaphore.acquire_owned() => permit,
        };
        if task_token.is_cancelled() || permit.is_err() {
            return TaskOutcome::NotStarted;
        }
        TaskOutcome::Ran(
            dispatcher
                .call_async(&call.name, &call.arguments, &ctx)
                .await,
        )
    });
    Running {
        index,
        token,
        started: Instant::now(),
        handle,
    }
}

async fn collect(
    dispatcher: &Dispatcher,
    calls: &[ToolCall],
    running: Vec<Running>,
    results: &mut [Option<DispatchResult>],
    options: &BatchOptions,
    deadline: Option<tokio::time::Instant>,
) {
    let far_future = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
    // One grace period for all running calls, starting at the interrupt.
    let mut grace_deadline: Option<tokio::time::Instant> = None;
    for mut task in running {
        let name = &calls[task.index].name;
        let outcome = tokio::select! {
            biased;
            joined = &mut task.handle => Some(joined),
            () = tokio::time::sleep_until(deadline.unwrap_or(far_future)) => None,
            () = options.interrupt.cancelled() => None,
        };
        let outcome = match outcome {
            Some(joined) => joined_outcome(name, joined),
            None if options.interrupt.is_cancelled() => {
                task.token.cancel();
                let grace = *grace_deadline
                    .get_or_insert_with(|| tokio::time::Instant::now() + options.cancel_grace);
                match tokio::time::timeout_at(grace, &mut task.handle).await {
                    Ok(joined) => joined_outcome(name, joined),
                    Err(_) => {
                        task.handle.abort();
                        Some(cancelled_while_running(name))
                    }
                }
            }
            None => {
                task.token.cancel();
                task.handle.abort();
                Some(timed_out(name, options.deadline))
            }
        };
        if let Some(outcome) = outcome {
            if matches!(outcome.status, CallStatus::Timeout | CallStatus::Cancelled) {
                let mut ctx = options.context.clone();
                ctx.tool_call_id = calls[task.index].id.clone();
                dispatcher.report_unrun(
                    name,
                    &calls[task.index].arguments,
                    &outcome,
                    task.started.elapsed(),
                    &ctx,
                );
            }
            results[task.index] = Some(outcome);
        }
    }
}

fn joined_outcome(
    name: &str,
    joined: Result<TaskOutcome, tokio::task::JoinError>,
) -> Option<DispatchResult> {
    match joined {
        Ok(TaskOutcome::Ran(outcome)) => Some(outcome),
        Ok(TaskOutcome::NotStarted) => None,
        Err(err) => Some(crate::dispatch::pipeline_failure(name, &err.to_string())),
    }
}

fn timed_out(name: &str, deadline: Option<Duration>) -> DispatchResult {
    let secs = deadline.map_or(0.0, |d| d.as_secs_f64());
    DispatchResult::error_with_status(
        format!("Error executing {name}: timed out after {secs}s (batch deadline)"),
        CallStatus::Timeout,
    )
}

fn cancelled_before_start(name: &str) -> DispatchResult {
    DispatchResult::error_with_status(
        format!("Tool execution cancelled: {name} was not started because the user interrupted"),
        CallStatus::Cancelled,
    )
}

fn cancelled_while_running(name: &str) -> DispatchResult {
    DispatchResult::error_with_status(
        format!("Tool execution cancelled: {name} was interrupted by the user before it finished"),
        CallStatus::Cancelled,
    )
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;
