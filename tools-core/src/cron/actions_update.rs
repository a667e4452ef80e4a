//! `cronjob(action="update")`: change the given fields of a job in one transaction
//! (Hermes' update branch): an empty string or list clears a field; a new schedule
//! recomputes the next run unless the job is paused; `no_agent` needs a script.

use serde_json::Value;

use super::super::job::canonical_skills;
use super::super::scan;
use super::super::schedule::{Schedule, ScheduleError, format_ts};
use super::{Actions, CronArgs, trimmed};

impl Actions<'_> {
    pub(super) fn update(&self, job: &super::CronJob, args: &CronArgs) -> Result<Value, String> {
        if let Some(prompt) = &args.prompt
            && let Some(refusal) = scan::scan_prompt(prompt)
        {
            return Err(refusal);
        }
        let model = Self::model_name(args)?;
        if let Some(script) = args.script.as_deref().filter(|s| !s.trim().is_empty()) {
            self.check_script(script)?;
        }
        let context_from = args.context_from.as_ref().map(|c| {
            c.items()
                .into_iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        });
        if let Some(refs) = &context_from {
            self.check_context_from(refs)?;
        }
        let workdir = match args.workdir.as_deref().map(str::trim) {
            None => None,
            Some("") => Some(None),
            Some(w) => Some(Some(Self::check_workdir(w)?)),
        };
        let deliver = self.deliver_value(args.deliver.as_ref())?;
        let approval = self.update_approval(job, args, workdir.as_ref())?;
        let now = (self.now)();
        let tz = self.store.tz().clone();
        let schedule = match trimmed(args.schedule.as_deref()) {
            Some(text) => Some(Schedule::parse(&text, now, &tz).map_err(|e| e.to_string())?),
            None => None,
        };
        let mut touched = model.is_some() || args.model.is_some();
        let pinned = approval.as_ref().map(|(_, hash)| hash.clone());
        let mut result = self.change(&job.id, |j| {
            if let Some(hash) = &pinned {
                j.script_hash = Some(hash.clone());
            }
            if let Some(p) = &args.prompt {
                j.prompt = p.clone();
                touched = true;
            }
            if let Some(n) = &args.name {
                j.name = n.clone();
                touched = true;
            }
            if let Some(d) = deliver {
                j.deliver = d;
                touched = true;
            }
            if args.skills.is_some() || args.skill.is_some() {
                let items = match &args.skills {
                    Some(s) => s.items(),
                    None => args.skill.iter().cloned().collect(),
                };
                j.skills = canonical_skills(&items);
                j.skill = j.skills.first().cloned();
                touched = true;
            }
            if args.model.is_some() {
                j.model = model;
            }
            if let Some(script) = &args.script {
                j.script = trimmed(Some(script));
                touched = true;
            }
            if let Some(refs) = context_from {
                j.context_from = (!refs.is_empty()).then_some(refs);
                touched = true;
            }
            if let Some(t) = &args.enabled_toolsets {
                let t: Vec<String> = t
                    .iter()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                j.enabled_toolsets = (!t.is_empty()).then_some(t);
                touched = true;
            }
            if let Some(w) = workdir {
                j.workdir = w;
                touched = true;
            }
            if let Some(no_agent) = args.no_agent {
                if no_agent && j.script.is_none() {
                    return Err(
                        "Cannot set no_agent=True on a job without a script. Set `script` in \
                         the same update, or on the job first."
                            .into(),
                    );
                }
                j.no_agent = no_agent;
                touched = true;
            }
            if let Some(repeat) = args.repeat {
                j.repeat.times = u64::try_from(repeat).ok().filter(|n| *n > 0);
                touched = true;
            }
            if let Some(s) = schedule {
                j.schedule_display = s.display().to_string();
                j.schedule = s;
                touched = true;
                if j.state != "paused" {
                    j.state = "scheduled".into();
                    j.enabled = true;
                    let next = j.schedule.next_run(now, None, &tz);
                    if let (Schedule::Once { run_at, .. }, None) = (&j.schedule, next) {
                        return Err(ScheduleError::Past(run_at.clone()).to_string());
                    }
                    j.next_run_at = next.map(|t| format_ts(t, &tz));
                }
            }
            if !touched {
                return Err("No updates provided.".into());
            }
            if j.runnable() && j.next_run_at.is_none() {
                j.next_run_at = j
                    .schedule
                    .next_run(now, None, &tz)
                    .map(|t| format_ts(t, &tz));
            }
            Ok(())
        })?;
        if let Some((approval, _)) = approval {
            result["approval"] = approval;
        }
        Ok(result)
    }

    /// When `args` change what a job that runs a script runs (its script, `no_agent`,
    /// its working directory), the approver's decision on the job as it will be.
    fn update_approval(
        &self,
        job: &super::CronJob,
        args: &CronArgs,
        workdir: Option<&Option<String>>,
    ) -> Result<Option<(Value, String)>, String> {
        let new_script = args.script.as_deref().is_some_and(|s| !s.trim().is_empty());
        let changes_code = new_script || args.no_agent == Some(true) || workdir.is_some();
        if !changes_code {
            return Ok(None);
        }
        let mut after = job.clone();
        if let Some(script) = &args.script {
            after.script = trimmed(Some(script));
        }
        if let Some(no_agent) = args.no_agent {
            after.no_agent = no_agent;
        }
        if let Some(w) = workdir {
            after.workdir = w.clone();
        }
        if let Some(name) = &args.name {
            after.name = name.clone();
        }
        if after.script.is_none() {
            return Ok(None);
        }
        self.approval("update", &after)
    }
}
