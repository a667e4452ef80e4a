//! `cronjob` (toolset `cronjob`): schedule agent tasks to run later — Hermes' single
//! action-oriented tool, same name, parameters and result shapes
//! (docs/hermes/cron.md). The actions live in [`crate::cron::actions`]; jobs run when
//! a scheduler (`toolhost cron tick` / `daemon`) finds them due, or at once with
//! `action="run"`. A job that runs a script needs a human's approval, asked through the
//! approval gate ([`crate::cron::approval`]).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::cron::actions::{Actions, CronArgs};
use crate::cron::approval::JobApprover;
use crate::entry::{Parallelism, ToolEntry};
use crate::error::RegisterError;
use crate::services::CoreServices;
use crate::tools::args;
use crate::tools::guarded_write::ask_human;

const DESCRIPTION: &str = "Manage scheduled cron jobs with a single compressed tool.

Use action='create' to schedule a new job from a prompt or one or more skills.
Use action='list' to inspect jobs.
Use action='update', 'pause', 'resume', 'remove', or 'run' to manage an existing job.

To stop a job the user no longer wants: first action='list' to find the job_id, then action='remove' with that job_id. Never guess job IDs — always list first.

Jobs run in a fresh session with no current-chat context, so prompts must be self-contained.
If skills are provided on create, the future cron run loads those skills in order, then follows the prompt as the task instruction.
On update, passing skills=[] clears attached skills.

NOTE: The agent's final response is auto-delivered to the target. Put the primary
user-facing content in the final response. Cron jobs run autonomously with no user
present — they cannot ask questions or request clarification.

Important safety rule: cron-run sessions should not recursively schedule more cron jobs.";

fn schema() -> Value {
    json!({
        "description": DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "action": {"type": "string", "description": "One of: create, list, update, pause, resume, remove, run. When action=create, the 'schedule' and 'prompt' fields are REQUIRED."},
                "job_id": {"type": "string", "description": "Required for update/pause/resume/remove/run"},
                "prompt": {"type": "string", "description": "For create: the full self-contained prompt. If skills are also provided, this becomes the task instruction paired with those skills."},
                "schedule": {"type": "string", "description": "REQUIRED for action=create. For create/update: '30m', 'every 2h', '0 9 * * *', or ISO timestamp. Examples: '30m' (every 30 minutes), 'every 2h' (every 2 hours), '0 9 * * *' (daily at 9am), '2026-06-01T09:00:00' (one-shot). You MUST include this field when action=create."},
                "name": {"type": "string", "description": "Optional human-friendly name"},
                "repeat": {"type": "integer", "description": "Optional repeat count. Omit for defaults (once for one-shot, forever for recurring)."},
                "deliver": {"type": "string", "description": "Where the final response goes. Omit (or 'local') to save it only: read it with `toolhost cron runs JOB`. 'origin' is the same as omitting. Otherwise the name of a delivery target configured under [cron.targets.NAME]; combine several with commas."},
                "skills": {"type": "array", "items": {"type": "string"}, "description": "Optional ordered list of skill names to load before executing the cron prompt. On update, pass an empty array to clear attached skills."},
                "model": {
                    "type": "object",
                    "description": "Optional per-job model override on the configured endpoint.",
                    "properties": {
                        "provider": {"type": "string", "description": "Not supported by toolhost (every job uses the configured [model] endpoint); omit."},
                        "model": {"type": "string", "description": "Model name (e.g. 'anthropic/claude-sonnet-4', 'claude-sonnet-4')"}
                    },
                    "required": ["model"]
                },
                "script": {"type": "string", "description": "Optional path to a script that runs each tick. In the default mode its stdout is injected into the agent's prompt as context (data-collection / change-detection pattern). With no_agent=True, the script IS the job and its stdout is delivered verbatim (classic watchdog pattern). Relative paths resolve under <toolhost home>/scripts/. ``.sh``/``.bash`` extensions run via bash, everything else via Python. On update, pass empty string to clear."},
                "no_agent": {"type": "boolean", "default": false, "description": "Default: False (LLM-driven job — the agent runs the prompt each tick). Set True to skip the LLM entirely: the scheduler just runs ``script`` on schedule and delivers its stdout verbatim. REQUIREMENTS when True: ``script`` MUST be set (``prompt`` and ``skills`` are ignored). DELIVERY SEMANTICS when True: (a) non-empty stdout is sent verbatim as the message; (b) EMPTY stdout means SILENT — nothing is sent; (c) non-zero exit / timeout sends an error alert so a broken watchdog can't fail silently."},
                "context_from": {"type": "array", "items": {"type": "string"}, "description": "Optional job ID or list of job IDs whose most recent completed output is injected into the prompt as context before each run. Use this to chain cron jobs: job A collects data, job B processes it. Each entry must be a valid job ID (from cronjob action='list'). On update, pass an empty array to clear."},
                "enabled_toolsets": {"type": "array", "items": {"type": "string"}, "description": "Optional list of toolset names to restrict the job's agent to (e.g. [\"web\", \"terminal\", \"file\"]). When omitted, the default toolsets are loaded (never cronjob or clarify). On update, pass an empty array to clear."},
                "workdir": {"type": "string", "description": "Optional absolute path to run the job from: the terminal/file/code tools use it as their working directory. Must be an absolute path that exists. On update, pass an empty string to clear."},
                "attach_to_session": {"type": "boolean", "description": "Hermes' chat-thread attachment; accepted and ignored (toolhost has no chat platforms)."}
            },
            "required": ["action"]
        }
    })
}

/// Build `cronjob`.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let svc = Arc::clone(services);
    ToolEntry::builder("cronjob", "cronjob")
        .schema(&schema())
        .emoji("⏰")
        .parallelism(Parallelism::Exclusive)
        .sync_handler(move |args, ctx| {
            let args: CronArgs = args::parse(args)?;
            let store = match svc.cron.store() {
                Ok(s) => s,
                Err(e) => return Ok(json!({"success": false, "error": e.to_string()})),
            };
            let now = jiff::Timestamp::now;
            let actions = Actions {
                cron: &svc.cron,
                store: &store,
                skills: &svc.skills,
                now: &now,
                approver: &GateApprover {
                    services: &svc,
                    ctx,
                },
            };
            Ok(actions.call(&args))
        })
        .build()
}

/// Asks the approval gate (a human, or nobody: refused) about a job that runs a script.
struct GateApprover<'a> {
    services: &'a CoreServices,
    ctx: &'a ToolContext,
}

impl JobApprover for GateApprover<'_> {
    fn approve(&self, summary: &str) -> Result<Option<String>, String> {
        ask_human(
            self.services,
            self.ctx,
            summary.to_string(),
            "cron job that runs a script unattended on every tick",
        )
    }
}
