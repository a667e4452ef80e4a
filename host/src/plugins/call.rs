//! One plugin tool call, hook run or availability check under a timeout, on the plugin
//! [`executor`](super::executor).
//!
//! The caller serialises the arguments and context, hands the ABI call to a worker, and
//! waits: blocking callers spin briefly then park until the answer, the deadline or
//! cancellation; async callers spin a few microseconds (a no-op plugin answers in about
//! one) and otherwise await the worker's wake-up beside a timer and the cancellation
//! token, never blocking their runtime thread. A caller that gives up raises the
//! handler's cancel flag (`ctx.is_cancelled()` in the plugin), answers at once, and
//! counts the call as hung until the handler returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use abi_stable::std_types::{RResult, RString};
use serde_json::Value;
use toolhost_plugin_api::abi::FfiError;
use toolhost_plugin_api::wire::HookKind;
use tools_core::{ToolContext, ToolError, ToolOutcome};

use super::executor::{Executor, ExecutorOptions, Job, Output, Ticket, Waited};
use super::fault::PluginFault;
use super::runtime::PluginRuntime;

/// How long an async caller spins for a quick answer before it returns to its runtime
/// (bounds the time a tokio worker is held; a no-op plugin call takes about 1 µs).
const ASYNC_SPIN: Duration = Duration::from_micros(3);

/// The error of a job for a plugin that runs out of process (never submitted: those
/// calls go to the child, see [`super::process`]).
fn not_in_process() -> FfiError {
    FfiError::new("executor", "the plugin runs out of process")
}

/// The executor every plugin tool call with a timeout runs on.
static EXECUTOR: LazyLock<Executor<PluginCall>> =
    LazyLock::new(|| Executor::new(ExecutorOptions::plugin_calls()));

/// The plugin call executor (for diagnostics and tests).
pub fn executor() -> &'static Executor<PluginCall> {
    &EXECUTOR
}

/// The ABI call of one tool, as a job for a worker.
pub struct PluginCall {
    runtime: Arc<PluginRuntime>,
    index: u32,
    args: String,
    context: String,
}

impl Job for PluginCall {
    type Output = RResult<RString, FfiError>;

    fn run(&mut self, cancel: &AtomicBool) -> Self::Output {
        match self.runtime.object() {
            Some(object) => object.call_tool(
                self.index,
                self.args.as_str().into(),
                self.context.as_str().into(),
                cancel,
            ),
            None => RResult::RErr(not_in_process()),
        }
    }

    fn finished_late(&mut self) {
        self.runtime.hung().fetch_sub(1, Ordering::AcqRel);
        tracing::info!(plugin = %self.runtime.name(), "a call that timed out has finished");
    }
}

/// A call on a worker. Dropped unfinished (its future was dropped), it gives up.
struct PendingCall<'r> {
    runtime: &'r Arc<PluginRuntime>,
    ticket: Ticket<'static, PluginCall>,
}

impl<'r> PendingCall<'r> {
    fn submit(
        runtime: &'r Arc<PluginRuntime>,
        index: u32,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<Self, ToolError> {
        let job = PluginCall {
            runtime: Arc::clone(runtime),
            index,
            args: serde_json::to_string(args).unwrap_or_else(|_| args.to_string()),
            context: runtime.context_json(ctx),
        };
        let ticket = EXECUTOR
            .submit(job)
            .map_err(|e| ToolError::Unavailable(format!("plugin {}: {e}", runtime.name())))?;
        Ok(PendingCall { runtime, ticket })
    }

    /// The tool outcome of a finished call.
    fn outcome(&self, output: Output<PluginCall>) -> ToolOutcome {
        match output {
            Ok(result) => self.runtime.outcome(result),
            Err(panicked) => Err(ToolError::other(
                "plugin",
                format!(
                    "the call to plugin {} failed on its worker: {panicked}",
                    self.runtime.name()
                ),
            )),
        }
    }

    /// Stop waiting: `why` unless the call finished in the meantime. An abandoned call
    /// counts as hung until its handler returns.
    fn give_up(&mut self, why: ToolError) -> ToolOutcome {
        match abandon(self.runtime, &mut self.ticket) {
            None => {
                if let ToolError::Timeout { seconds } = &why {
                    tracing::warn!(plugin = %self.runtime.name(), "tool call timed out after {seconds}s");
                }
                Err(why)
            }
            Some(output) => self.outcome(output),
        }
    }
}

/// Give up on `ticket`: from now on its job counts as hung until its worker returns
/// (the job's `finished_late` counts it back down), unless it has already finished —
/// then its output.
fn abandon<J: Job>(runtime: &PluginRuntime, ticket: &mut Ticket<'static, J>) -> Option<Output<J>> {
    // Counted before the worker can see the abandonment and count it back down.
    let hung = runtime.hung();
    hung.fetch_add(1, Ordering::AcqRel);
    let output = ticket.abandon();
    if output.is_some() {
        hung.fetch_sub(1, Ordering::AcqRel);
    }
    output
}

impl Drop for PendingCall<'_> {
    fn drop(&mut self) {
        if self.ticket.is_pending() {
            drop(self.give_up(ToolError::Cancelled));
        }
    }
}

fn timed_out(limit: Duration) -> ToolError {
    ToolError::Timeout {
        seconds: limit.as_secs_f64(),
    }
}

/// Run tool `index` of `runtime` on a worker and block this thread until it answers,
/// `limit` passes or `ctx.cancel` fires.
pub(super) fn call_blocking(
    runtime: &Arc<PluginRuntime>,
    index: u32,
    args: &Value,
    ctx: &ToolContext,
    limit: Duration,
) -> ToolOutcome {
    let deadline = Instant::now().checked_add(limit);
    let mut call = PendingCall::submit(runtime, index, args, ctx)?;
    match call.ticket.wait(deadline, Some(&ctx.cancel)) {
        Waited::Done(output) => call.outcome(output),
        Waited::TimedOut => call.give_up(timed_out(limit)),
        Waited::Cancelled => call.give_up(ToolError::Cancelled),
    }
}

/// Run tool `index` of `runtime` on a worker and await the answer, the timeout or
/// `ctx.cancel`, without blocking the runtime's thread.
pub(super) async fn call_async(
    runtime: Arc<PluginRuntime>,
    index: u32,
    args: Value,
    ctx: ToolContext,
    limit: Duration,
) -> ToolOutcome {
    let deadline = Instant::now().checked_add(limit);
    let mut call = PendingCall::submit(&runtime, index, &args, &ctx)?;
    if let Some(output) = call.ticket.spin(ASYNC_SPIN) {
        return call.outcome(output);
    }
    let expired = async {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        output = &mut call.ticket => call.outcome(output),
        () = expired => call.give_up(timed_out(limit)),
        () = ctx.cancel.cancelled() => call.give_up(ToolError::Cancelled),
    }
}

/// The executor plugin hooks with a timeout run on (separate from tool calls, so a
/// hook never waits behind the tool call it guards).
static HOOK_EXECUTOR: LazyLock<Executor<PluginHook>> =
    LazyLock::new(|| Executor::new(ExecutorOptions::plugin_calls()));

/// The ABI call of one hook kind, as a job for a worker.
pub struct PluginHook {
    runtime: Arc<PluginRuntime>,
    kind: HookKind,
    event: String,
}

impl Job for PluginHook {
    type Output = RResult<RString, FfiError>;

    fn run(&mut self, _cancel: &AtomicBool) -> Self::Output {
        match self.runtime.object() {
            Some(object) => object.run_hook(self.kind.as_str().into(), self.event.as_str().into()),
            None => RResult::RErr(not_in_process()),
        }
    }

    fn finished_late(&mut self) {
        self.runtime.hung().fetch_sub(1, Ordering::AcqRel);
        tracing::info!(plugin = %self.runtime.name(), "a {} hook that timed out has finished", self.kind);
    }
}

/// Run the `kind` hooks of `runtime` on a worker and block this thread until they
/// answer or `limit` passes. A hook that times out counts as hung until it returns,
/// like a tool call.
pub(super) fn hook_blocking(
    runtime: &Arc<PluginRuntime>,
    kind: HookKind,
    event: &str,
    limit: Duration,
) -> Result<RResult<RString, FfiError>, PluginFault> {
    let job = PluginHook {
        runtime: Arc::clone(runtime),
        kind,
        event: event.to_string(),
    };
    let mut ticket = HOOK_EXECUTOR
        .submit(job)
        .map_err(|e| PluginFault::failed("executor", format!("cannot run the {kind} hook: {e}")))?;
    let finished = |output: Output<PluginHook>| {
        output.map_err(|panicked| {
            PluginFault::failed(
                "executor",
                format!("the {kind} hook failed on its worker: {panicked}"),
            )
        })
    };
    match ticket.wait(Instant::now().checked_add(limit), None) {
        Waited::Done(output) => finished(output),
        Waited::TimedOut | Waited::Cancelled => match abandon(runtime, &mut ticket) {
            None => {
                let seconds = limit.as_secs_f64();
                tracing::warn!(plugin = %runtime.name(), "{kind} hook timed out after {seconds}s");
                Err(PluginFault::Timeout {
                    what: format!("{kind} hook"),
                    seconds,
                })
            }
            Some(output) => finished(output),
        },
    }
}

/// The executor availability checks run on (their own workers: a slow check never
/// delays a tool call or a hook, and a check that hangs holds one idle-reaped worker
/// instead of a thread of its own per attempt).
static CHECK_EXECUTOR: LazyLock<Executor<PluginCheck>> =
    LazyLock::new(|| Executor::new(ExecutorOptions::plugin_calls()));

/// The ABI call of one availability check, as a job for a worker.
pub struct PluginCheck {
    runtime: Arc<PluginRuntime>,
    index: u32,
}

impl Job for PluginCheck {
    type Output = RResult<(), FfiError>;

    fn run(&mut self, _cancel: &AtomicBool) -> Self::Output {
        match self.runtime.object() {
            Some(object) => object.check_tool(self.index),
            None => RResult::RErr(not_in_process()),
        }
    }

    fn finished_late(&mut self) {
        tracing::info!(plugin = %self.runtime.name(), "an availability check that timed out has finished");
    }
}

/// Run the availability check of tool `index` on a worker and block this thread until
/// it answers or `limit` passes. A check that times out answers "unavailable" at once;
/// unlike a tool call it does not count as hung (checks are cached and retried later).
pub(super) fn check_blocking(
    runtime: &Arc<PluginRuntime>,
    index: u32,
    limit: Duration,
) -> Result<RResult<(), FfiError>, PluginFault> {
    let job = PluginCheck {
        runtime: Arc::clone(runtime),
        index,
    };
    let mut ticket = CHECK_EXECUTOR
        .submit(job)
        .map_err(|e| PluginFault::failed("executor", format!("cannot run the check: {e}")))?;
    let finished = |output: Output<PluginCheck>| {
        output.map_err(|panicked| {
            PluginFault::failed(
                "executor",
                format!("the check failed on its worker: {panicked}"),
            )
        })
    };
    match ticket.wait(Instant::now().checked_add(limit), None) {
        Waited::Done(output) => finished(output),
        Waited::TimedOut | Waited::Cancelled => match ticket.abandon() {
            None => Err(PluginFault::Timeout {
                what: "check".into(),
                seconds: limit.as_secs_f64(),
            }),
            Some(output) => finished(output),
        },
    }
}
