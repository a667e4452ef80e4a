//! Running one claimed job end to end, shared by the scheduler (`toolhost cron tick`
//! / `daemon`) and `cronjob(action="run")` (Hermes' `run_one_job`): record the run,
//! run the script and/or the agent, save the output, deliver the final response
//! unless it is `[SILENT]`, then record the outcome on the job and release its claim.
//!
//! The agent lives in the host: it installs a [`CronExecutor`] in
//! [`CronExecutorSlot`]. Without one (an embedder without the agent loop) agent jobs
//! fail with a clear error; `no_agent` script jobs still run.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;

use super::job::CronJob;
use super::prompt::{self, ScriptOutput};
use super::script;
use super::settings::{CronSettings, DeliveryTarget};
use super::store::{CronStore, RunResult};
use crate::skills::SkillCatalog;

/// What the agent did with a job's prompt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentRun {
    /// The turn completed.
    pub success: bool,
    /// The final response.
    pub response: String,
    /// Why it failed.
    pub error: Option<String>,
    /// The session it ran in.
    pub session_id: Option<String>,
}

/// Runs a cron prompt as a non-interactive agent task (installed by the host).
pub trait CronExecutor: Send + Sync {
    /// Run `prompt` for `job`, stopping after `timeout`.
    fn execute(&self, job: &CronJob, prompt: &str, timeout: Duration) -> AgentRun;
}

/// Where the host puts its [`CronExecutor`]; cleared on shutdown (it holds the host).
pub type CronExecutorSlot = crate::host_slot::HostSlot<dyn CronExecutor>;

/// Everything a run needs.
pub struct Firing<'a> {
    /// The job store.
    pub store: &'a CronStore,
    /// `[cron]`.
    pub settings: &'a CronSettings,
    /// Skills the job may load.
    pub skills: &'a SkillCatalog,
    /// `<home>/scripts`.
    pub scripts_dir: &'a std::path::Path,
    /// The agent (host-installed).
    pub executor: Option<Arc<dyn CronExecutor>>,
    /// The clock (tests inject one).
    pub now: &'a (dyn Fn() -> Timestamp + Send + Sync),
}

fn local_time(store: &CronStore, t: Timestamp) -> String {
    t.to_zoned(store.tz().clone())
        .strftime("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// A one-line failure message for delivery (Hermes' `_summarize_cron_failure_for_delivery`).
pub fn failure_summary(job: &CronJob, error: Option<&str>) -> String {
    let text = error.unwrap_or("unknown error").trim();
    let lower = text.to_lowercase();
    let name = &job.name;
    if text.contains("429") || lower.contains("rate limit") || lower.contains("usage limit") {
        return format!(
            "⚠️ Cron '{name}' failed: provider rate limit. Full details saved in cron output."
        );
    }
    if lower.contains("timed out") || lower.contains("timeout") {
        return format!("⚠️ Cron '{name}' failed: timeout. Full details saved in cron output.");
    }
    let cleaned = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cleaned = if cleaned.chars().count() > 180 {
        format!(
            "{}...",
            cleaned.chars().take(177).collect::<String>().trim_end()
        )
    } else {
        cleaned
    };
    format!("⚠️ Cron '{name}' failed: {cleaned}")
}

/// Send `content` to the job's delivery target. `Ok(false)`: nothing to send to
/// (`local`, `origin`: the run history is the only copy).
pub fn deliver(job: &CronJob, content: &str, settings: &CronSettings) -> Result<bool, String> {
    let mut delivered = false;
    for target in job
        .deliver
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        if matches!(target, "local" | "origin") {
            continue;
        }
        let Some(config) = settings.targets.get(target) else {
            return Err(format!(
                "delivery target '{target}' is not configured ([cron.targets.{target}])"
            ));
        };
        pipe_to(config, job, content).map_err(|e| format!("delivery to '{target}' failed: {e}"))?;
        delivered = true;
    }
    Ok(delivered)
}

// The delivery command is the user's `[cron.targets.*]` configuration, not the
// model's: it runs outside the execution policy (it may need to write and send).
#[allow(clippy::disallowed_methods)]
fn pipe_to(target: &DeliveryTarget, job: &CronJob, content: &str) -> Result<(), String> {
    let Some((program, args)) = target.command.split_first() else {
        return Err("its command is empty".into());
    };
    let mut child = Command::new(program)
        .args(args)
        .env("TOOLHOST_CRON_JOB_ID", &job.id)
        .env("TOOLHOST_CRON_JOB_NAME", &job.name)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(content.as_bytes());
    }
    let timeout = Duration::from_secs(target.timeout.unwrap_or(60));
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("{program} exited with {status}")),
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{program} timed out after {}s", timeout.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

impl Firing<'_> {
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.settings.job_timeout.max(1))
    }

    fn script(&self, job: &CronJob, path: &str) -> ScriptOutput {
        if let Err(text) = super::approval::verify_script(self.scripts_dir, job) {
            return ScriptOutput { ok: false, text };
        }
        let cwd = job.workdir.as_deref().map(std::path::Path::new);
        script::run(self.scripts_dir, path, cwd, self.timeout())
    }

    /// `no_agent`: the script is the job.
    fn run_script_job(&self, job: &CronJob, at: &str) -> RunResult {
        let Some(path) = job.script.as_deref() else {
            let error = "no_agent=True but no script is set for this job".to_string();
            return RunResult {
                error: Some(error),
                ..RunResult::default()
            };
        };
        let out = self.script(job, path);
        let head = format!(
            "# Cron Job: {}\n\n**Job ID:** {}\n**Run Time:** {at}\n**Mode:** no_agent (script)\n",
            job.name, job.id
        );
        if !out.ok {
            return RunResult {
                error: Some(out.text.clone()),
                response: format!(
                    "⚠ Cron watchdog '{}' script failed\n\n{}\n\nTime: {at}",
                    job.name, out.text
                ),
                output: format!("{head}**Status:** script failed\n\n{}\n", out.text),
                ..RunResult::default()
            };
        }
        if !script::wake_agent(&out.text) || out.text.trim().is_empty() {
            return RunResult {
                success: true,
                silent: true,
                response: "[SILENT]".into(),
                output: format!("{head}**Status:** silent\n"),
                ..RunResult::default()
            };
        }
        RunResult {
            success: true,
            output: format!("{head}\n---\n\n{}\n", out.text),
            response: out.text,
            ..RunResult::default()
        }
    }

    fn run_agent_job(&self, job: &CronJob, at: &str) -> RunResult {
        let pre = job.script.as_deref().map(|p| self.script(job, p));
        if let Some(out) = &pre {
            if out.ok && !script::wake_agent(&out.text) {
                return RunResult {
                    success: true,
                    silent: true,
                    response: "[SILENT]".into(),
                    output: format!(
                        "# Cron Job: {}\n\n**Job ID:** {}\n**Run Time:** {at}\n\nScript gate returned `wakeAgent=false` — agent skipped.\n",
                        job.name, job.id
                    ),
                    ..RunResult::default()
                };
            }
            if out.ok && out.text.trim().is_empty() {
                return RunResult {
                    success: true,
                    silent: true,
                    response: "[SILENT]".into(),
                    ..RunResult::default()
                };
            }
        }
        let head = |status: &str| {
            format!(
                "# Cron Job: {}{status}\n\n**Job ID:** {}\n**Run Time:** {at}\n**Schedule:** {}\n",
                job.name, job.id, job.schedule_display
            )
        };
        let prompt = match prompt::build(job, self.store, self.skills, pre.as_ref()) {
            Ok(p) => p,
            Err(refusal) => {
                return RunResult {
                    output: format!(
                        "{}**Status:** BLOCKED\n\nThe assembled prompt tripped the cron injection scanner and the agent was NOT run.\n\n**Scanner result:** {refusal}\n",
                        head("")
                    ),
                    error: Some(refusal),
                    ..RunResult::default()
                };
            }
        };
        let Some(executor) = &self.executor else {
            return RunResult {
                error: Some("no agent loop is installed in this process to run the job".into()),
                ..RunResult::default()
            };
        };
        let run = executor.execute(job, &prompt, self.timeout());
        if run.success {
            let shown = if run.response.is_empty() {
                "(No response generated)"
            } else {
                &run.response
            };
            RunResult {
                success: true,
                output: format!(
                    "{}\n## Prompt\n\n{prompt}\n\n## Response\n\n{shown}\n",
                    head("")
                ),
                response: run.response,
                session_id: run.session_id,
                ..RunResult::default()
            }
        } else {
            let error = run.error.unwrap_or_else(|| "the agent failed".into());
            RunResult {
                output: format!(
                    "{}\n## Prompt\n\n{prompt}\n\n## Error\n\n```\n{error}\n```\n",
                    head(" (FAILED)")
                ),
                error: Some(error),
                response: run.response,
                session_id: run.session_id,
                ..RunResult::default()
            }
        }
    }

    /// Run a job already claimed in the store; returns how it went (also recorded).
    pub fn run(&self, job: &CronJob) -> RunResult {
        let started = (self.now)();
        let run_id = self.store.start_run(job, started);
        let at = local_time(self.store, started);
        let mut result = if job.no_agent {
            self.run_script_job(job, &at)
        } else {
            self.run_agent_job(job, &at)
        };
        if result.success && !result.silent && prompt::is_silent(&result.response) {
            result.silent = true;
        }
        let content = if result.success {
            result.response.clone()
        } else {
            failure_summary(job, result.error.as_deref())
        };
        if !result.silent && !content.trim().is_empty() {
            match deliver(job, &content, self.settings) {
                Ok(sent) => result.delivered = sent,
                Err(e) => result.delivery_error = Some(e),
            }
        }
        if result.success && !result.silent && result.response.trim().is_empty() {
            result.success = false;
            result.error = Some(
                "Agent completed but produced empty response (model error, timeout, or misconfiguration)"
                    .into(),
            );
        }
        let ended = (self.now)();
        match run_id {
            Ok(id) => {
                if let Err(err) = self.store.finish_run(id, &result, ended) {
                    tracing::error!(job = %job.id, %err, "could not record the cron run");
                }
            }
            Err(err) => tracing::error!(job = %job.id, %err, "could not record the cron run"),
        }
        if let Err(err) = self.store.finish(&job.id, &result, ended) {
            tracing::error!(job = %job.id, %err, "could not update the cron job after its run");
        }
        result
    }
}
