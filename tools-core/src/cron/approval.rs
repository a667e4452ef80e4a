//! Who approves a cron job that runs code unattended.
//!
//! A job with a `script` (run before the agent, or as the whole job with `no_agent`)
//! runs that file on every tick with nobody watching, so creating one is a decision
//! only a human may take: the `cronjob` tool asks through the approval gate's prompt
//! and, with nobody to ask, refuses (docs/guarded-writes.md; before it, `write_file`
//! into `<home>/scripts`, then a `no_agent` job, then `cronjob run` ran a script every
//! minute with no human anywhere). An update that changes what such a job runs (its script, `no_agent`, its
//! working directory) is asked the same way. Jobs that only prompt the agent need no
//! approval: the agent's own tool calls go through the gate when the job runs.
//! The result says what was approved (docs/hermes/cron.md, "Where toolhost differs").
//!
//! What was approved includes the script's content: its fingerprint is kept with the job
//! (`script_hash`), and a run whose script no longer matches it (edited since, by any
//! means) does not run the script, nor does a job that was never approved (one stored
//! before toolhost pinned scripts): re-approve it with an `update` that names the
//! script. The check is made just before the script starts.

use std::path::Path;

use super::job::CronJob;
use super::script;
use crate::files::ContentHash;

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

/// The fingerprint of script `raw` (inside `scripts_dir`) as it is now; the script must
/// exist.
pub fn script_fingerprint(scripts_dir: &Path, raw: &str) -> Result<String, String> {
    let path = script::resolve(scripts_dir, raw)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("cannot read script '{raw}': {e}"))?;
    Ok(ContentHash::of(&bytes).to_string())
}

/// Whether `job`'s script may run: it is the script a human approved, unchanged.
pub fn verify_script(scripts_dir: &Path, job: &CronJob) -> Result<(), String> {
    let Some(raw) = job.script.as_deref() else {
        return Ok(());
    };
    let Some(approved) = job.script_hash.as_deref() else {
        return Err(format!(
            "Script '{raw}' was never approved for this job (it was stored before toolhost \
             pinned job scripts); it did not run. Re-approve it with \
             cronjob(action='update', script='{raw}')."
        ));
    };
    let now = script_fingerprint(scripts_dir, raw)?;
    if now != approved {
        return Err(format!(
            "Script '{raw}' changed since it was approved for this job ({approved}, now \
             {now}); it did not run. Re-approve it with cronjob(action='update', \
             script='{raw}')."
        ));
    }
    Ok(())
}

/// What a human is asked to approve for `job` (`verb`: `create`, `update`), its script
/// fingerprinted `hash`.
pub fn summary(verb: &str, job: &CronJob, hash: &str) -> String {
    let script = job.script.as_deref().unwrap_or("(none)");
    let mode = if job.no_agent {
        "as the whole job, no agent"
    } else {
        "before the agent"
    };
    let mut text = format!(
        "cronjob {verb} '{}' ({}): runs script '{script}' ({hash}) from the scripts \
         directory {mode}, unattended",
        job.name, job.schedule_display
    );
    if let Some(workdir) = &job.workdir {
        text.push_str(&format!(", in {workdir}"));
    }
    text
}
