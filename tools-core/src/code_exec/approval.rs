//! The whole-script approval check: before an `execute_code` script runs, the script
//! as a whole passes the approval gate, as the command that will run it
//! (`python3 - <<'DELIM' … DELIM`). A script can reach processes and files without
//! any tool call (`subprocess`, `os.system`, `open(…, "w")`, `ctypes`, dynamic
//! imports), which the per-call checks of its `terminal()` calls never see.
//!
//! The approval analyser judges code on an interpreter's stdin by content (see
//! `approval/checks/code.rs`): a script that only calls toolhost tools and processes
//! their results passes without a prompt; one naming a process, deletion, file-write
//! or dynamic-code API needs approval (asked once for the whole run; refused when
//! nobody can answer and `[approvals] no_human = "deny"`); `os.system("rm -rf /")`
//! hits the hardline floor. Fails closed: anything but an approval stops the script
//! before it starts. Hermes asks only in gateway / `ask` / cron contexts; toolhost
//! checks every script (docs/hermes/code-execution.md).

use crate::approval::{ApprovalGate, CommandCheck, GateDecision};
use crate::context::ToolContext;

/// The command the gate judges: the script on `python3`'s stdin in a quoted heredoc
/// (no expansion), with a delimiter that does not occur in the script.
pub fn script_command(code: &str) -> String {
    let mut delim = String::from("TOOLHOST_SCRIPT");
    while code.lines().any(|l| l.trim() == delim) || code.contains(&delim) {
        delim.push('_');
    }
    format!("python3 - <<'{delim}'\n{code}\n{delim}")
}

/// Ask `gate` about the whole script. `Ok(note)` runs it (the note, if any, goes in
/// the result as `approval`); `Err(message)` is the refusal for the model.
pub fn check_script(
    gate: &dyn ApprovalGate,
    code: &str,
    ctx: &ToolContext,
    env_type: &str,
    host_access: bool,
) -> Result<Option<String>, String> {
    let decision = gate.check(&CommandCheck {
        command: script_command(code),
        session_key: ctx.session_key().to_string(),
        task_id: ctx.task_key().to_string(),
        tool_call_id: ctx.tool_call_id.clone(),
        env_type: env_type.to_string(),
        host_access,
    });
    match decision {
        GateDecision::Approved { note, .. } => Ok(note),
        GateDecision::Blocked { message, .. } => Err(message),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::approval::{ApprovalEngine, ApprovalSettings, Surfaces};
    use crate::hooks::Hooks;

    fn gate() -> Arc<dyn ApprovalGate> {
        let dir = tempfile::tempdir().unwrap();
        ApprovalEngine::with_config_file(
            ApprovalSettings::default(),
            dir.path().join("config.toml"),
            Arc::new(Hooks::new()),
            Surfaces::none(),
        )
    }

    fn judge(code: &str) -> Result<Option<String>, String> {
        check_script(
            gate().as_ref(),
            code,
            &ToolContext::for_task("t"),
            "local",
            true,
        )
    }

    #[test]
    fn scripts_are_judged_as_a_whole_by_content() {
        let cases: &[(&str, bool)] = &[
            (
                "from toolhost_tools import read_file\nprint(read_file('a.txt')['content'][:10])",
                true,
            ),
            (
                "import json\nfrom toolhost_tools import terminal\nr = terminal('ls')\nprint(json.dumps(r))",
                true,
            ),
            (
                "import subprocess\nsubprocess.run(['rm', '-rf', 'build'])",
                false,
            ),
            ("import os\nos.system('rm -rf /')", false),
            ("open('/etc/passwd', 'w').write('x')", false),
            ("__import__('os').system('id')", false),
        ];
        for (code, runs) in cases {
            assert_eq!(judge(code).is_ok(), *runs, "{code}: {:?}", judge(code));
        }
    }

    #[test]
    fn the_heredoc_delimiter_never_occurs_in_the_script() {
        let code = "print('TOOLHOST_SCRIPT')\nTOOLHOST_SCRIPT\nimport os; os.system('rm -rf /')";
        let command = script_command(code);
        assert!(
            command.starts_with("python3 - <<'TOOLHOST_SCRIPT_'"),
            "{command}"
        );
        assert!(judge(code).is_err());
    }
}
