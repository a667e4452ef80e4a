//! Writes that become code later: the file tools' writes into `<home>/scripts` (what
//! cron jobs run) and `<home>/skills` (instructions and scripts the agent loads later)
//! need a human's approval, asked through the approval gate's prompt
//! ([`ApprovalGate::check_action`](crate::approval::ApprovalGate::check_action)); with
//! nobody to ask they are refused with a JSON error. A write into a skill is scanned by
//! the skills guard first (a blocking finding refuses it before anyone is asked).
//! `config.toml`, `state/`, `plugins/` and `cron/` are refused outright by
//! `super::file_guard`; this module covers what a human may allow.
//!
//! Paths are compared with the home as given and canonical ([`Home::spellings`]), and
//! with the write's target as written and resolved (docs/guarded-writes.md,
//! "Writes that become code later").

use std::path::{Component, Path};

use crate::approval::rules::AGENT_CONFIG;
use crate::approval::{ActionCheck, Finding, GateDecision};
use crate::context::ToolContext;
use crate::home::Home;
use crate::services::CoreServices;
use crate::skills::guard::scan_files;

/// Which guarded directory a write lands in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GuardedArea {
    /// `<home>/scripts/…`: cron job scripts.
    Scripts,
    /// `<home>/skills/<skill>/<rel>`.
    Skills {
        /// The skill's directory name (empty for a file directly in `skills/`).
        skill: String,
        /// The file's path inside the skill.
        rel: String,
    },
}

/// What the approval prompt says the write is.
const SCRIPTS_FINDING: &str =
    "write into toolhost's scripts directory (cron jobs run these files unattended)";
const SKILLS_FINDING: &str =
    "write into toolhost's skills directory (skills are loaded as instructions and run later)";

/// The guarded area `paths` (the target as written and resolved) fall in, if any.
pub fn guarded_area(home: &Home, paths: &[&Path]) -> Option<GuardedArea> {
    for spelling in home.spellings() {
        for path in paths {
            if path.starts_with(spelling.scripts_dir()) {
                return Some(GuardedArea::Scripts);
            }
            if let Ok(rest) = path.strip_prefix(spelling.skills_dir()) {
                let mut parts = rest.components().filter_map(|c| match c {
                    Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                    _ => None,
                });
                let first = parts.next().unwrap_or_default();
                let rel: Vec<String> = parts.collect();
                let (skill, rel) = if rel.is_empty() {
                    (String::new(), first)
                } else {
                    (first, rel.join("/"))
                };
                return Some(GuardedArea::Skills { skill, rel });
            }
        }
    }
    None
}

/// Let the write of `content` (`None`: not known yet) to `shown` (the path as the model
/// wrote it) into `area` go ahead: `Ok(note)` for the result's `approval`, or the
/// refusal for the model.
pub fn approve_write(
    services: &CoreServices,
    ctx: &ToolContext,
    tool: &str,
    shown: &str,
    area: &GuardedArea,
    content: Option<&str>,
) -> Result<Option<String>, String> {
    let description = match area {
        GuardedArea::Scripts => SCRIPTS_FINDING,
        GuardedArea::Skills { skill, rel } => {
            if let Some(content) = content {
                let report = scan_files(skill, [(rel.as_str(), content)]);
                if report.blocked() {
                    return Err(format!(
                        "Refusing to write '{shown}': the skills guard blocked it ({}). \
                         Skills are loaded as instructions later; remove the flagged content.",
                        report.block_reason()
                    ));
                }
            }
            SKILLS_FINDING
        }
    };
    ask_human(services, ctx, format!("{tool} {shown}"), description)
}

/// Put `action` to a human through the approval gate, `description` saying why it needs
/// one: `Ok(note)` when approved, the refusal otherwise (nobody to ask, denied).
pub fn ask_human(
    services: &CoreServices,
    ctx: &ToolContext,
    action: String,
    description: &'static str,
) -> Result<Option<String>, String> {
    let decision = services.approval.check_action(&ActionCheck {
        action,
        finding: Finding::with(&AGENT_CONFIG, description),
        session_key: ctx.session_key().to_string(),
        task_id: ctx.task_key().to_string(),
        tool_call_id: ctx.tool_call_id.clone(),
    });
    match decision {
        GateDecision::Approved { note, .. } => Ok(note),
        GateDecision::Blocked { message, .. } => Err(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_are_found_under_the_home() {
        let home = Home::at("/h");
        let table: [(&str, Option<GuardedArea>); 5] = [
            ("/h/scripts/job.sh", Some(GuardedArea::Scripts)),
            (
                "/h/skills/deploy/SKILL.md",
                Some(GuardedArea::Skills {
                    skill: "deploy".into(),
                    rel: "SKILL.md".into(),
                }),
            ),
            (
                "/h/skills/deploy/scripts/run.sh",
                Some(GuardedArea::Skills {
                    skill: "deploy".into(),
                    rel: "scripts/run.sh".into(),
                }),
            ),
            ("/h/scriptsx/job.sh", None),
            ("/elsewhere/scripts/job.sh", None),
        ];
        for (path, want) in table {
            assert_eq!(guarded_area(&home, &[Path::new(path)]), want, "{path}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_home_guards_its_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let home = Home::at(&link);
        let target = real.join("scripts/job.sh");
        assert_eq!(
            guarded_area(&home, &[target.as_path()]),
            Some(GuardedArea::Scripts)
        );
    }
}
