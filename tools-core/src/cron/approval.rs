//! Who approves a cron job that runs code unattended.
//!
//! A job with a `script` (run before the agent, or as the whole job with `no_agent`)
//! runs that file on every tick with nobody watching, so creating one is a decision
//! only a human may take: the `cronjob` tool asks through the approval gate's prompt
//! and, with nobody to ask, refuses (issue #30: `write_file` into `<home>/scripts`,
//! then a `no_agent` job, then `cronjob run` ran a script every minute with no human
//! anywhere). An update that changes what such a job runs (its script, `no_agent`, its
//! working directory) is asked the same way. Jobs that only prompt the agent need no
//! approval: the agent's own tool calls go through the gate when the job runs.
//! The result says what was approved (docs/hermes/cron.md, "Where toolhost differs").

use super::job::CronJob;

/// Decides whether a job that runs a script may be created or changed.
pub trait JobApprover: Send + Sync {
    /// Ask about `summary` (what the job will run, for a human): `Ok(note)` with the
    /// note for the result when approved, `Err(message)` for the model otherwise.
    fn approve(&self, summary: &str) -> Result<Option<String>, String>;
}

/// The caller is the human (the `toolhost cron` command line, tests of the actions):
/// nothing more to ask.
#[derive(Clone, Copy, Debug, Default)]
pub struct CallerIsHuman;

impl JobApprover for CallerIsHuman {
    fn approve(&self, _summary: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
}

/// True when `job` runs a script: creating it, or changing what it runs, needs approval.
pub fn runs_code(job: &CronJob) -> bool {
    job.script.is_some() || job.no_agent
}

/// What a human is asked to approve for `job` (`verb`: `create`, `update`).
pub fn summary(verb: &str, job: &CronJob) -> String {
    let script = job.script.as_deref().unwrap_or("(none)");
    let mode = if job.no_agent {
        "as the whole job, no agent"
    } else {
        "before the agent"
    };
    let mut text = format!(
        "cronjob {verb} '{}' ({}): runs script '{script}' from the scripts directory {mode}, \
         unattended",
        job.name, job.schedule_display
    );
    if let Some(workdir) = &job.workdir {
        text.push_str(&format!(", in {workdir}"));
    }
    text
}
