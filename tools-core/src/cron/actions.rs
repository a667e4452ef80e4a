//! The `cronjob` tool's actions (Hermes' `cronjob()`): create, list, update, pause,
//! resume, remove, run. Each returns Hermes' result shape: `{"success": true, ...}` or
//! `{"success": false, "error": ...}`.
//!
//! Differences from Hermes (docs/hermes/cron.md): per-job `provider` / `base_url`
//! overrides are refused (one configured endpoint; no credential can be pointed
//! elsewhere); `deliver` names `local`, `origin` or a configured `[cron.targets.NAME]`
//! and anything else is refused at creation instead of failing at run time.

use std::path::Path;

use jiff::Timestamp;
use serde::Deserialize;
use serde_json::{Value, json};

use super::approval::{JobApprover, runs_code, script_fingerprint, summary};
use super::job::{CronJob, Repeat, canonical_skills, default_name};
use super::schedule::{ONESHOT_GRACE_SECONDS, Schedule, format_ts};
use super::store::{Claim, CronStore};
use super::{CronService, Firing, owner_id, scan, script};
use crate::skills::SkillCatalog;
use crate::stable_hash::fnv1a;

/// A string or a list of strings (Hermes accepts both for these fields).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several.
    Many(Vec<String>),
}

impl OneOrMany {
    fn items(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// `model`: `{"provider"?, "model"}`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModelArg {
    /// Provider (refused: one endpoint).
    #[serde(default)]
    pub provider: Option<String>,
    /// Model name.
    #[serde(default)]
    pub model: Option<String>,
}

/// The tool's arguments.
#[derive(Debug, Clone, Deserialize)]
pub struct CronArgs {
    /// What to do.
    #[serde(default)]
    pub action: String,
    /// Job id or name.
    pub job_id: Option<String>,
    /// The task.
    pub prompt: Option<String>,
    /// When.
    pub schedule: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// Run count.
    pub repeat: Option<i64>,
    /// Delivery target(s).
    pub deliver: Option<OneOrMany>,
    /// `list`: include paused and finished jobs (default true, as Hermes' handler).
    #[serde(default = "yes")]
    pub include_disabled: bool,
    /// Legacy single skill.
    pub skill: Option<String>,
    /// Skills.
    pub skills: Option<OneOrMany>,
    /// Model override.
    pub model: Option<ModelArg>,
    /// Provider override (refused).
    pub provider: Option<String>,
    /// Base URL override (refused).
    pub base_url: Option<String>,
    /// Pause reason.
    pub reason: Option<String>,
    /// Script under `<home>/scripts`.
    pub script: Option<String>,
    /// Upstream jobs.
    pub context_from: Option<OneOrMany>,
    /// Toolsets of the job's agent.
    pub enabled_toolsets: Option<Vec<String>>,
    /// Working directory.
    pub workdir: Option<String>,
    /// Script-only job.
    pub no_agent: Option<bool>,
    /// Hermes' session attachment (no chat sessions in toolhost; ignored).
    pub attach_to_session: Option<bool>,
}

fn yes() -> bool {
    true
}

fn fail(message: impl Into<String>) -> Value {
    json!({"success": false, "error": message.into()})
}

fn new_id() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let hash = fnv1a(format!("{nanos}:{}:{n}", std::process::id()).bytes());
    format!("{:012x}", hash & 0xffff_ffff_ffff)
}

fn trimmed(value: Option<&str>) -> Option<String> {
    value
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The context the actions run in.
pub struct Actions<'a> {
    /// Settings, store, executor.
    pub cron: &'a CronService,
    /// The store.
    pub store: &'a CronStore,
    /// Skills (for `run`).
    pub skills: &'a SkillCatalog,
    /// The clock.
    pub now: &'a (dyn Fn() -> Timestamp + Send + Sync),
    /// Who approves jobs that run a script ([`super::approval`]).
    pub approver: &'a dyn JobApprover,
}

impl Actions<'_> {
    /// Run one call of the tool.
    pub fn call(&self, args: &CronArgs) -> Value {
        let action = args.action.trim().to_lowercase();
        let outcome = match action.as_str() {
            "create" => self.create(args),
            "list" => self.list(args),
            _ => self.on_job(&action, args),
        };
        outcome.unwrap_or_else(fail)
    }

    fn deliver_value(&self, deliver: Option<&OneOrMany>) -> Result<Option<String>, String> {
        let Some(deliver) = deliver else {
            return Ok(None);
        };
        let parts: Vec<String> = deliver
            .items()
            .iter()
            .flat_map(|p| {
                p.split(',')
                    .map(|s| s.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .filter(|s| !s.is_empty())
            .collect();
        for part in &parts {
            if !matches!(part.as_str(), "local" | "origin")
                && !self.cron.settings.targets.contains_key(part)
            {
                let mut known: Vec<&str> = vec!["local", "origin"];
                known.extend(self.cron.settings.targets.keys().map(String::as_str));
                return Err(format!(
                    "Unknown delivery target '{part}'. toolhost delivers to 'local' (saved only; \
                     read it with `toolhost cron runs JOB`) or to a target configured under \
                     [cron.targets.NAME]. Known: {}.",
                    known.join(", ")
                ));
            }
        }
        Ok((!parts.is_empty()).then(|| parts.join(",")))
    }

    fn check_overrides(provider: Option<&str>, base_url: Option<&str>) -> Result<(), String> {
        if trimmed(provider).is_some() || trimmed(base_url).is_some() {
            return Err(
                "Per-job provider and base_url overrides are not supported: every cron \
                 job runs against the configured [model] endpoint. Use model={\"model\": NAME} \
                 to pick another model on that endpoint."
                    .into(),
            );
        }
        Ok(())
    }

    fn check_context_from(&self, refs: &[String]) -> Result<(), String> {
        for r in refs {
            if self.store.get(r).map_err(|e| e.to_string())?.is_none() {
                return Err(format!(
                    "context_from job '{r}' not found. Use cronjob(action='list') to see available jobs."
                ));
            }
        }
        Ok(())
    }

    fn check_workdir(workdir: &str) -> Result<String, String> {
        let path = Path::new(workdir);
        if !path.is_absolute() {
            return Err(format!("workdir must be an absolute path, got '{workdir}'"));
        }
        if !path.is_dir() {
            return Err(format!(
                "workdir '{workdir}' does not exist or is not a directory"
            ));
        }
        Ok(workdir.to_string())
    }

    fn check_script(&self, script: &str) -> Result<(), String> {
        script::validate_path(&self.cron.scripts_dir(), script)
    }

    fn model_name(args: &CronArgs) -> Result<Option<String>, String> {
        let model = args.model.clone().unwrap_or_default();
        Self::check_overrides(
            model.provider.as_deref().or(args.provider.as_deref()),
            args.base_url.as_deref(),
        )?;
        Ok(trimmed(model.model.as_deref()))
    }

    fn create(&self, args: &CronArgs) -> Result<Value, String> {
        let Some(schedule_text) = trimmed(args.schedule.as_deref()) else {
            return Err("schedule is required for create".into());
        };
        let mut skills = args
            .skills
            .as_ref()
            .map(OneOrMany::items)
            .unwrap_or_default();
        if args.skills.is_none() {
            skills.extend(args.skill.clone());
        }
        let skills = canonical_skills(&skills);
        let prompt = args.prompt.clone().unwrap_or_default();
        let no_agent = args.no_agent.unwrap_or(false);
        let script_path = trimmed(args.script.as_deref());
        if no_agent && script_path.is_none() {
            return Err(
                "create with no_agent=True requires a script — the script is the job.".into(),
            );
        }
        if !no_agent && prompt.trim().is_empty() && skills.is_empty() {
            return Err("create requires either prompt or at least one skill".into());
        }
        if let Some(refusal) = scan::scan_prompt(&prompt) {
            return Err(refusal);
        }
        if let Some(s) = &script_path {
            self.check_script(s)?;
        }
        let model = Self::model_name(args)?;
        let context_from: Vec<String> = args
            .context_from
            .as_ref()
            .map(OneOrMany::items)
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        self.check_context_from(&context_from)?;
        let workdir = trimmed(args.workdir.as_deref())
            .map(|w| Self::check_workdir(&w))
            .transpose()?;
        let explicit_deliver = self.deliver_value(args.deliver.as_ref())?;
        let now = (self.now)();
        let tz = self.store.tz();
        let schedule = Schedule::parse(&schedule_text, now, tz).map_err(|e| e.to_string())?;
        let next = schedule.next_run(now, None, tz);
        if let (Schedule::Once { run_at, .. }, None) = (&schedule, next) {
            return Err(super::schedule::ScheduleError::Past(run_at.clone()).to_string());
        }
        let times = match args.repeat {
            Some(n) if n > 0 => u64::try_from(n).ok(),
            _ if !schedule.recurring() => Some(1),
            _ => None,
        };
        let enabled_toolsets = args
            .enabled_toolsets
            .as_ref()
            .map(|t| {
                t.iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|t| !t.is_empty());
        let name = trimmed(args.name.as_deref()).unwrap_or_else(|| {
            default_name(
                &prompt,
                &skills,
                script_path.as_deref().filter(|_| no_agent),
            )
        });
        let mut job = CronJob {
            id: new_id(),
            name,
            prompt,
            skill: skills.first().cloned(),
            skills,
            model,
            provider: None,
            base_url: None,
            script: script_path,
            script_hash: None,
            no_agent,
            context_from: (!context_from.is_empty()).then_some(context_from),
            schedule_display: schedule.display().to_string(),
            schedule,
            repeat: Repeat {
                times,
                completed: 0,
            },
            enabled: true,
            state: "scheduled".into(),
            paused_at: None,
            paused_reason: None,
            created_at: format_ts(now, tz),
            next_run_at: next.map(|t| format_ts(t, tz)),
            last_run_at: None,
            last_status: None,
            last_error: None,
            last_delivery_error: None,
            deliver: explicit_deliver.clone().unwrap_or_else(|| "local".into()),
            origin: None,
            enabled_toolsets,
            workdir,
        };
        let approval = self.approval("create", &job)?.map(|(result, hash)| {
            job.script_hash = Some(hash);
            result
        });
        self.store.insert(&job).map_err(|e| e.to_string())?;
        let mut message = format!("Cron job '{}' created.", job.name);
        let explicit_local = explicit_deliver.as_deref() == Some("local");
        let delivers = job
            .deliver
            .split(',')
            .any(|t| !matches!(t, "local" | "origin"));
        if !explicit_local && !delivers {
            message.push_str(
                " This is a local-only cron job: its output is saved (read it with `toolhost cron \
                 runs JOB`) but is NOT delivered anywhere. To be notified when it runs, set deliver \
                 to a target configured under [cron.targets.NAME].",
            );
        }
        message.push_str(
            " Jobs run only while a scheduler runs: `toolhost cron daemon`, or `toolhost cron tick` \
             from system cron or a systemd timer.",
        );
        let mut result = json!({
            "success": true,
            "job_id": job.id,
            "name": job.name,
            "skill": job.skill,
            "skills": job.skills,
            "schedule": job.schedule_display,
            "repeat": job.repeat_display(),
            "deliver": job.deliver,
            "next_run_at": job.next_run_at,
            "job": job.summary(),
            "message": message,
        });
        if let Some(approval) = approval {
            result["approval"] = approval;
        }
        Ok(result)
    }

    /// For a job that runs a script, the approver's decision on it (`verb`: what is
    /// done to it): `Ok(Some(({"approved", "note"}, script fingerprint)))` when
    /// approved, `Ok(None)` when no approval is needed, `Err` when refused (or the
    /// script cannot be read).
    fn approval(&self, verb: &str, job: &CronJob) -> Result<Option<(Value, String)>, String> {
        if !runs_code(job) {
            return Ok(None);
        }
        let raw = job.script.as_deref().unwrap_or_default();
        let hash = script_fingerprint(&self.cron.scripts_dir(), raw)?;
        let approved = summary(verb, job, &hash);
        let note = self.approver.approve(&approved)?;
        Ok(Some((json!({"approved": approved, "note": note}), hash)))
    }

    fn list(&self, args: &CronArgs) -> Result<Value, String> {
        let jobs: Vec<Value> = self
            .store
            .list()
            .map_err(|e| e.to_string())?
            .iter()
            .filter(|j| args.include_disabled || j.enabled)
            .map(CronJob::summary)
            .collect();
        Ok(json!({"success": true, "count": jobs.len(), "jobs": jobs}))
    }

    /// Find a job by id, else by unique case-insensitive name.
    fn resolve(&self, reference: &str) -> Result<Result<CronJob, Value>, String> {
        let jobs = self.store.list().map_err(|e| e.to_string())?;
        if let Some(job) = jobs.iter().find(|j| j.id == reference) {
            return Ok(Ok(job.clone()));
        }
        let lower = reference.to_lowercase();
        let matches: Vec<&CronJob> = jobs
            .iter()
            .filter(|j| j.name.to_lowercase() == lower)
            .collect();
        match matches.as_slice() {
            [one] => Ok(Ok((*one).clone())),
            [] => Ok(Err(fail(format!(
                "Job with ID or name '{reference}' not found. Use cronjob(action='list') to inspect jobs."
            )))),
            many => {
                let ids: Vec<&str> = many.iter().map(|j| j.id.as_str()).collect();
                Ok(Err(json!({
                    "success": false,
                    "error": format!(
                        "Job name '{reference}' is ambiguous — matches {} jobs: {}. Use the job ID instead.",
                        many.len(),
                        ids.join(", ")
                    ),
                    "matches": many.iter().map(|m| json!({
                        "id": m.id, "name": m.name, "schedule": m.schedule_display, "next_run_at": m.next_run_at,
                    })).collect::<Vec<_>>(),
                })))
            }
        }
    }

    fn on_job(&self, action: &str, args: &CronArgs) -> Result<Value, String> {
        let Some(reference) = trimmed(args.job_id.as_deref()) else {
            return Err(format!("job_id is required for action '{action}'"));
        };
        let job = match self.resolve(&reference)? {
            Ok(job) => job,
            Err(refusal) => return Ok(refusal),
        };
        match action {
            "remove" => {
                if !self.store.remove(&job.id).map_err(|e| e.to_string())? {
                    return Err(format!("Failed to remove job '{}'", job.id));
                }
                Ok(json!({
                    "success": true,
                    "message": format!("Cron job '{}' removed.", job.name),
                    "removed_job": {"id": job.id, "name": job.name, "schedule": job.schedule_display},
                }))
            }
            "pause" => {
                let at = format_ts((self.now)(), self.store.tz());
                let reason = args.reason.clone();
                self.change(&job.id, |j| {
                    j.enabled = false;
                    j.state = "paused".into();
                    j.paused_at = Some(at);
                    j.paused_reason = reason;
                    Ok(())
                })
            }
            "resume" => {
                let now = (self.now)();
                let tz = self.store.tz().clone();
                self.change(&job.id, |j| {
                    let next = j.schedule.next_run(now, None, &tz);
                    if let (Schedule::Once { run_at, .. }, None) = (&j.schedule, next) {
                        return Err(format!(
                            "Cannot resume: one-shot time {run_at} is in the past (grace window: {ONESHOT_GRACE_SECONDS}s) and will never fire."
                        ));
                    }
                    j.enabled = true;
                    j.state = "scheduled".into();
                    j.paused_at = None;
                    j.paused_reason = None;
                    j.next_run_at = next.map(|t| format_ts(t, &tz));
                    Ok(())
                })
            }
            "update" => self.update(&job, args),
            "run" | "run_now" | "trigger" => Ok(self.run_now(&job)),
            _ => Err(format!("Unknown cron action '{}'", args.action)),
        }
    }

    fn change(
        &self,
        id: &str,
        f: impl FnOnce(&mut CronJob) -> Result<(), String>,
    ) -> Result<Value, String> {
        match self.store.update(id, f).map_err(|e| e.to_string())? {
            Ok(Some(job)) => Ok(json!({"success": true, "job": job.summary()})),
            Ok(None) => Err(format!("Job '{id}' no longer exists.")),
            Err(e) => Err(e),
        }
    }

    fn run_now(&self, job: &CronJob) -> Value {
        let now = (self.now)();
        let claim = self
            .store
            .claim(&job.id, &owner_id(), now, self.cron.claim_ttl());
        let skipped = |reason: &str, current: Option<CronJob>| {
            let mut summary = current.unwrap_or_else(|| job.clone()).summary();
            summary["executed"] = json!(false);
            summary["execution_success"] = json!(false);
            summary["execution_skipped"] = json!(reason);
            json!({"success": true, "job": summary})
        };
        let claimed = match claim {
            Err(e) => return fail(e.to_string()),
            Ok(Claim::Missing) => return skipped("Job no longer exists; nothing to run.", None),
            Ok(Claim::NotRunnable) => {
                return skipped(
                    "Job is paused/disabled; resume it before running.",
                    Some(job.clone()),
                );
            }
            Ok(Claim::Busy) => {
                return skipped(
                    "Job is already being fired by the scheduler; not run again.",
                    Some(job.clone()),
                );
            }
            Ok(Claim::Claimed(j)) => *j,
        };
        let scripts_dir = self.cron.scripts_dir();
        let firing = Firing {
            store: self.store,
            settings: &self.cron.settings,
            skills: self.skills,
            scripts_dir: &scripts_dir,
            executor: self.cron.executor.get(),
            now: self.now,
        };
        let result = firing.run(&claimed);
        let after = self.store.get(&job.id).ok().flatten();
        let mut summary = match after {
            Some(j) => j.summary(),
            None => {
                let mut gone = claimed;
                gone.enabled = false;
                gone.state = "completed".into();
                gone.next_run_at = None;
                gone.last_status = Some(if result.success { "ok" } else { "error" }.into());
                gone.summary()
            }
        };
        summary["executed"] = json!(true);
        summary["execution_success"] = json!(result.success);
        if let Some(e) = &result.error {
            summary["execution_error"] = json!(e);
        }
        json!({"success": true, "job": summary})
    }
}

#[path = "actions_update.rs"]
mod update;

#[cfg(test)]
#[path = "actions_tests.rs"]
mod tests;
