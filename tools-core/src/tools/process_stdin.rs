//! The approval gate for text sent to a background process (`process write` / `submit`).
//!
//! A background `bash` (or any shell, REPL or `ssh` session) runs what it reads on stdin,
//! so that text is a command like any other: it goes through the same gate as the
//! `terminal` tool's commands (the same analyser, the same human prompt, the same
//! fail-closed answer when nobody can be asked). Before this, `process submit` with
//! `rm -rf ~/docs` deleted the folder unasked (docs/guarded-writes.md).
//!
//! What is judged is the whole unfinished input, not one call's piece of it: the text
//! written since the process's last newline plus this call's text, so `write("rm -rf ")`
//! then `submit("~/docs")` is judged as `rm -rf ~/docs`. Line editing a terminal would
//! apply (backspace, Ctrl-U, carriage return) is applied to the judged copy too; when it
//! changes the text, both spellings are judged. Calls for one process are serialised
//! (judging and writing under one lock), so two concurrent calls cannot each pass half a
//! command. Text the gate blocks is not sent and does not join the unfinished input.
//!
//! Text is judged as shell: a REPL reading Python is not analysed as Python (the kernel
//! floor the process runs under is the backstop there; docs/terminal.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use crate::approval::{CommandCheck, GateDecision};
use crate::context::ToolContext;
use crate::environments::processes::BackgroundProcess;
use crate::services::CoreServices;
use crate::tools::home_mention;
use crate::tools::terminal::host_access;

/// Each process's input since its last newline, behind a per-process lock.
#[derive(Debug, Default)]
pub struct PendingInput {
    lines: Mutex<HashMap<String, Arc<Mutex<String>>>>,
}

impl PendingInput {
    /// The unfinished line of process `id` (created empty).
    fn line(&self, id: &str) -> Arc<Mutex<String>> {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(lines.entry(id.to_string()).or_default())
    }

    /// Forget process `id`'s unfinished input (stdin closed).
    pub fn forget(&self, id: &str) {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// Judge `payload` (with the process's unfinished line before it) and, if the gate
    /// lets it through, write it to the process's stdin. Returns the tool result.
    pub fn send(
        &self,
        services: &CoreServices,
        ctx: &ToolContext,
        process: &BackgroundProcess,
        payload: &str,
    ) -> Value {
        let line = self.line(&process.id);
        let mut unfinished = line.lock().unwrap_or_else(PoisonError::into_inner);
        let text = format!("{unfinished}{payload}");
        let note = match judge(services, ctx, process, &text) {
            Ok(note) => note,
            Err(blocked) => return blocked,
        };
        let mut result = match process.write_stdin(payload.as_bytes()) {
            Ok(n) => {
                *unfinished = after_last_newline(&text).to_string();
                json!({"status": "ok", "bytes_written": n})
            }
            Err(e) => json!({"status": "error", "error": e}),
        };
        if let Some(note) = note {
            result["approval"] = json!(note);
        }
        result
    }
}

/// Ask the gate about `text` as a command on the process's backend: `Ok(note)` when it
/// may be sent, `Err(result)` with the blocked result otherwise.
fn judge(
    services: &CoreServices,
    ctx: &ToolContext,
    process: &BackgroundProcess,
    text: &str,
) -> Result<Option<String>, Value> {
    let edited = line_edited(text);
    let command = if edited == text {
        text.to_string()
    } else {
        format!("{edited}\n{text}")
    };
    if command.trim().is_empty() {
        return Ok(None);
    }
    let blocked =
        |message: String| json!({"status": "blocked", "error": message, "bytes_written": 0});
    let home_note = home_mention::check(services, ctx, &command).map_err(blocked)?;
    let decision = services.approval.check(&CommandCheck {
        command,
        session_key: ctx.session_key().to_string(),
        task_id: ctx.task_key().to_string(),
        tool_call_id: ctx.tool_call_id.clone(),
        env_type: process.backend.name().to_string(),
        host_access: host_access(process.backend, services.environments.settings()),
    });
    match decision {
        GateDecision::Approved { note, .. } => Ok(note.or(home_note)),
        GateDecision::Blocked { message, hardline } => {
            let mut out = blocked(message);
            if hardline {
                out["hardline"] = json!(true);
            }
            Err(out)
        }
    }
}

/// What follows the last line end of `text` (all of it when there is none).
fn after_last_newline(text: &str) -> &str {
    text.rfind(['\n', '\r']).map_or(text, |i| &text[i + 1..])
}

/// `text` as a terminal's line discipline would hand it on: backspace and DEL erase a
/// character, Ctrl-U erases the line, a carriage return ends it.
pub fn line_edited(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{8}' | '\u{7f}' => {
                if out.ends_with('\n') {
                    continue;
                }
                out.pop();
            }
            '\u{15}' => {
                let start = out.rfind('\n').map_or(0, |i| i + 1);
                out.truncate(start);
            }
            '\r' => out.push('\n'),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_editing_is_applied() {
        let table = [
            ("rm -rf ~/docsX\u{7f}", "rm -rf ~/docs"),
            ("ls\u{15}rm -rf ~", "rm -rf ~"),
            ("echo a\rrm x", "echo a\nrm x"),
            ("a\n\u{8}b", "a\nb"),
            ("plain", "plain"),
        ];
        for (raw, edited) in table {
            assert_eq!(line_edited(raw), edited, "{raw:?}");
        }
    }

    #[test]
    fn the_unfinished_line_is_what_follows_the_last_line_end() {
        assert_eq!(after_last_newline("rm -rf "), "rm -rf ");
        assert_eq!(after_last_newline("ls\nrm "), "rm ");
        assert_eq!(after_last_newline("ls\n"), "");
        assert_eq!(after_last_newline("ls\rrm"), "rm");
    }
}
