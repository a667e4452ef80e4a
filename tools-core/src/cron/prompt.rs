//! The prompt a cron run gives the agent (Hermes' `_build_job_prompt`): the cron
//! guidance (the final response is delivered; `[SILENT]` suppresses delivery), the
//! pre-run script's output, the latest output of `context_from` jobs, the bodies of
//! the job's skills, then the job's prompt. The assembled text passes the loose
//! injection scan ([`super::scan::scan_assembled`]).

use serde_json::Value;

use super::job::CronJob;
use super::scan::{scan_assembled, scan_prompt};
use super::store::CronStore;
use crate::skills::SkillCatalog;

/// What the agent is told first on every cron run.
pub const CRON_HINT: &str = "[IMPORTANT: You are running as a scheduled cron job. DELIVERY: \
Your final response will be automatically delivered to the user — do NOT use send_message or \
try to deliver the output yourself. Just produce your report/output as your final response \
and the system handles the rest. SILENT: If there is genuinely nothing new to report, respond \
with exactly \"[SILENT]\" (nothing else) to suppress delivery. Never combine [SILENT] with \
content — either report your findings normally, or say [SILENT] and nothing more.]\n\n";

/// At most this much of an upstream job's output is injected.
const MAX_CONTEXT_CHARS: usize = 8000;

/// A pre-run script's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutput {
    /// It exited 0 in time.
    pub ok: bool,
    /// Its stdout (or the failure description).
    pub text: String,
}

fn context_block(store: &CronStore, job: &CronJob) -> String {
    let mut out = String::new();
    for source in job.context_from.iter().flatten() {
        let Ok(Some(text)) = store.latest_response(source) else {
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let text = if text.chars().count() > MAX_CONTEXT_CHARS {
            let head: String = text.chars().take(MAX_CONTEXT_CHARS).collect();
            format!("{head}\n\n[... output truncated ...]")
        } else {
            text.to_string()
        };
        out = format!(
            "## Output from job '{source}'\nThe following is the most recent output from a \
             preceding cron job. Use it as context for your analysis.\n\n```\n{text}\n```\n\n{out}"
        );
    }
    out
}

fn script_block(script: Option<&ScriptOutput>) -> String {
    match script {
        Some(s) if s.ok => format!(
            "## Script Output\nThe following data was collected by a pre-run script. Use it \
             as context for your analysis.\n\n```\n{}\n```\n\n",
            s.text
        ),
        Some(s) => format!(
            "## Script Error\nThe data-collection script failed. Report this to the user.\n\n```\n{}\n```\n\n",
            s.text
        ),
        None => String::new(),
    }
}

/// Build the prompt; `Err` carries the scanner's refusal.
pub fn build(
    job: &CronJob,
    store: &CronStore,
    skills: &SkillCatalog,
    script: Option<&ScriptOutput>,
) -> Result<String, String> {
    if let Some(refusal) = scan_prompt(&job.prompt) {
        return Err(refusal);
    }
    let prompt = format!(
        "{CRON_HINT}{}{}{}",
        context_block(store, job),
        script_block(script),
        job.prompt
    );
    if job.skills.is_empty() {
        return scan_assembled(&prompt);
    }
    let mut parts: Vec<String> = Vec::new();
    let mut skipped: Vec<&str> = Vec::new();
    for name in &job.skills {
        let viewed = crate::skills::view::view(skills, name, None);
        let content = viewed
            .get("content")
            .and_then(Value::as_str)
            .filter(|_| viewed.get("success") == Some(&Value::Bool(true)));
        let Some(content) = content else {
            skipped.push(name);
            continue;
        };
        if !parts.is_empty() {
            parts.push(String::new());
        }
        parts.push(format!(
            "[IMPORTANT: The user has invoked the \"{name}\" skill, indicating they want you to \
             follow its instructions. The full skill content is loaded below.]"
        ));
        parts.push(String::new());
        parts.push(content.trim().to_string());
    }
    if !skipped.is_empty() {
        let list = skipped.join(", ");
        parts.insert(
            0,
            format!(
                "[IMPORTANT: The following skill(s) were listed for this job but could not be \
                 found and were skipped: {list}. Start your response with a brief notice so the \
                 user is aware, e.g.: '⚠️ Skill(s) not found and skipped: {list}']"
            ),
        );
    }
    parts.push(String::new());
    parts.push(format!(
        "The user has provided the following instruction alongside the skill invocation: {prompt}"
    ));
    scan_assembled(&parts.join("\n"))
}

/// Whether a final response asks for silence (Hermes' `_is_cron_silence_response`):
/// `[SILENT]`, `SILENT`, `NO_REPLY` or `NO REPLY` as the whole response or its first or
/// last line, or a response starting with `[SILENT]`; case and spacing ignored.
pub fn is_silent(text: &str) -> bool {
    let token = |line: &str| {
        let norm = line
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_uppercase();
        matches!(
            norm.as_str(),
            "[SILENT]" | "SILENT" | "NO_REPLY" | "NO REPLY"
        )
    };
    let stripped = text.trim();
    if stripped.is_empty() {
        return false;
    }
    if token(stripped) || stripped.to_uppercase().starts_with("[SILENT]") {
        return true;
    }
    let lines: Vec<&str> = stripped.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.first().is_some_and(|l| token(l)) || lines.last().is_some_and(|l| token(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_markers_are_recognised_only_where_hermes_does() {
        let cases = [
            ("[SILENT]", true),
            ("  silent \n", true),
            ("NO_REPLY", true),
            ("2 deals filtered\n\n[SILENT]", true),
            ("[SILENT] No changes detected", true),
            (
                "I considered staying [SILENT] but here is the summary",
                false,
            ),
            ("Silent retry succeeded", false),
            ("", false),
        ];
        for (text, want) in cases {
            assert_eq!(is_silent(text), want, "{text:?}");
        }
    }
}
