//! A cron job as stored, in Hermes' job shape (so a Hermes `jobs.json` entry reads the
//! same), and the summary `cronjob` returns for it (Hermes' `_format_job`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::schedule::Schedule;

/// How many runs are allowed and made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repeat {
    /// `None`: forever.
    pub times: Option<u64>,
    /// Runs started so far.
    #[serde(default)]
    pub completed: u64,
}

/// One job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CronJob {
    /// 12 hex characters.
    pub id: String,
    /// A human name (defaults to the start of the prompt).
    pub name: String,
    /// The task, self-contained.
    #[serde(default)]
    pub prompt: String,
    /// Skills loaded before the prompt, in order.
    #[serde(default)]
    pub skills: Vec<String>,
    /// The first skill (Hermes' legacy field).
    #[serde(default)]
    pub skill: Option<String>,
    /// Model name override.
    #[serde(default)]
    pub model: Option<String>,
    /// Provider override (kept for Hermes' shape; toolhost has one endpoint).
    #[serde(default)]
    pub provider: Option<String>,
    /// Base URL override (kept for Hermes' shape; never used).
    #[serde(default)]
    pub base_url: Option<String>,
    /// A script under `<home>/scripts/` run before the agent (or instead of it).
    #[serde(default)]
    pub script: Option<String>,
    /// Run only the script; deliver its stdout.
    #[serde(default)]
    pub no_agent: bool,
    /// Jobs whose latest output is put before the prompt.
    #[serde(default)]
    pub context_from: Option<Vec<String>>,
    /// When it runs.
    pub schedule: Schedule,
    /// What `list` shows for the schedule.
    pub schedule_display: String,
    /// Run count limit.
    #[serde(default)]
    pub repeat: Repeat,
    /// False when paused (or finished).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// `scheduled`, `paused`, `completed` or `error`.
    #[serde(default = "scheduled")]
    pub state: String,
    /// When it was paused.
    #[serde(default)]
    pub paused_at: Option<String>,
    /// Why it was paused.
    #[serde(default)]
    pub paused_reason: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// The next run (ISO 8601), `None` when none is due.
    #[serde(default)]
    pub next_run_at: Option<String>,
    /// The last run's time.
    #[serde(default)]
    pub last_run_at: Option<String>,
    /// `ok` or `error`.
    #[serde(default)]
    pub last_status: Option<String>,
    /// The last run's error.
    #[serde(default)]
    pub last_error: Option<String>,
    /// The last delivery's error.
    #[serde(default)]
    pub last_delivery_error: Option<String>,
    /// Where output goes (`local`, `origin`).
    #[serde(default = "local")]
    pub deliver: String,
    /// Where the job was created (always `None` in toolhost: no chat platforms).
    #[serde(default)]
    pub origin: Option<Value>,
    /// Toolsets the job's agent gets (default: the configured default selection).
    #[serde(default)]
    pub enabled_toolsets: Option<Vec<String>>,
    /// Working directory of the job's tools.
    #[serde(default)]
    pub workdir: Option<String>,
    /// The `sha256:` fingerprint of `script` as it was when the job was approved
    /// (toolhost only): a script that no longer matches it, or a job without one, does
    /// not run ([`super::approval`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_hash: Option<String>,
}

fn yes() -> bool {
    true
}
fn scheduled() -> String {
    "scheduled".into()
}
fn local() -> String {
    "local".into()
}

impl CronJob {
    /// Hermes' `repeat` display: `forever`, `once`, `1/1`, `3 times`, `2/3`.
    pub fn repeat_display(&self) -> String {
        let completed = self.repeat.completed;
        match self.repeat.times {
            None => "forever".into(),
            Some(1) if completed == 0 => "once".into(),
            Some(1) => "1/1".into(),
            Some(times) if completed > 0 => format!("{completed}/{times}"),
            Some(times) => format!("{times} times"),
        }
    }

    /// Whether the schedule may fire (enabled and not paused).
    pub fn runnable(&self) -> bool {
        self.enabled && self.state != "paused"
    }

    /// The summary `cronjob` returns (Hermes' `_format_job`).
    pub fn summary(&self) -> Value {
        let preview = if self.prompt.chars().count() > 100 {
            format!("{}...", self.prompt.chars().take(100).collect::<String>())
        } else {
            self.prompt.clone()
        };
        let mut out = json!({
            "job_id": self.id,
            "name": self.name,
            "skill": self.skills.first(),
            "skills": self.skills,
            "prompt_preview": preview,
            "model": self.model,
            "provider": self.provider,
            "base_url": self.base_url,
            "schedule": self.schedule_display,
            "repeat": self.repeat_display(),
            "deliver": self.deliver,
            "next_run_at": self.next_run_at,
            "last_run_at": self.last_run_at,
            "last_status": self.last_status,
            "last_delivery_error": self.last_delivery_error,
            "enabled": self.enabled,
            "state": self.state,
            "paused_at": self.paused_at,
            "paused_reason": self.paused_reason,
        });
        if let Some(map) = out.as_object_mut() {
            if let Some(script) = &self.script {
                map.insert("script".into(), json!(script));
            }
            if self.no_agent {
                map.insert("no_agent".into(), json!(true));
            }
            if let Some(t) = self.enabled_toolsets.as_ref().filter(|t| !t.is_empty()) {
                map.insert("enabled_toolsets".into(), json!(t));
            }
            if let Some(w) = &self.workdir {
                map.insert("workdir".into(), json!(w));
            }
        }
        out
    }
}

/// A job name from its prompt, skills or script (Hermes: the first 50 characters).
pub fn default_name(prompt: &str, skills: &[String], script: Option<&str>) -> String {
    let source = if !prompt.is_empty() {
        prompt
    } else if let Some(skill) = skills.first() {
        skill
    } else {
        script.unwrap_or("cron job")
    };
    let name: String = source.chars().take(50).collect();
    let name = name.trim();
    if name.is_empty() {
        "cron job".into()
    } else {
        name.to_string()
    }
}

/// Ordered, de-duplicated, trimmed skill names.
pub fn canonical_skills(skills: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in skills.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    out
}
