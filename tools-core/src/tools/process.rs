//! The `process` tool (toolset `terminal`): manage background processes started with
//! `terminal(background=true)` — list, poll, log (paged by line), wait (bounded by the
//! terminal timeout, interrupted by cancellation), kill (the whole group), and stdin
//! (write, submit, close). Output is ANSI-stripped and secret-redacted like foreground
//! output. Text for stdin goes through the approval gate first, like a terminal command
//! ([`super::process_stdin`]).

use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use serde::Deserialize;
use serde::de::Deserializer;
use serde_json::{Value, json};

use crate::context::ToolContext;
use crate::entry::ToolEntry;
use crate::environments::processes::{BackgroundProcess, WaitEnd};
use crate::error::RegisterError;
use crate::handler::ToolOutcome;
use crate::redact::redact;
use crate::services::CoreServices;
use crate::tools::args::{self, lenient};
use crate::tools::process_stdin::PendingInput;
use toolhost_text::strip_ansi;

const ACTIONS: &[&str] = &[
    "list", "poll", "log", "wait", "kill", "write", "submit", "close",
];

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ACTIONS, "description": "Action to perform on background processes"},
            "session_id": {"type": ["string", "integer"], "description": "Process session ID (from terminal background output). Required for all actions except 'list'."},
            "data": {"type": "string", "description": "Text to send to process stdin (for 'write' and 'submit' actions)"},
            "timeout": {"type": "integer", "minimum": 1, "description": "Max seconds to block for 'wait' action. Returns partial output on timeout."},
            "offset": {"type": "integer", "minimum": 0, "description": "First line for 'log' (0-based, counted from the process start; default: the last 200 lines)"},
            "limit": {"type": "integer", "minimum": 1, "description": "Max lines to return for 'log' action"}
        },
        "required": ["action"]
    })
}

/// Build the `process` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let services = Arc::clone(services);
    let pending = Arc::new(PendingInput::default());
    ToolEntry::builder("process", "terminal")
        .description(
            "Manage background processes started with terminal(background=true). \
             Actions: 'list' (show all), 'poll' (check status + recent output), \
             'log' (output with line pagination), 'wait' (block until done or timeout), \
             'kill' (terminate the process group), 'write' (send raw stdin data without newline), \
             'submit' (send data + Enter, for answering prompts), 'close' (close stdin/send EOF).",
        )
        .parameters(schema())
        .emoji("⚙️")
        .sync_handler(move |args, ctx| run(&services, &pending, args, ctx))
        .build()
}

fn clean(text: &str) -> String {
    redact(&strip_ansi(text)).into_owned()
}

fn started_iso(p: &BackgroundProcess) -> String {
    let secs = p
        .started_at
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    // RFC 3339 in UTC without pulling in a date crate.
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) — Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn status_fields(p: &BackgroundProcess) -> Value {
    let mut v = json!({
        "session_id": p.id,
        "command": p.command,
        "status": p.status().as_str(),
        "pid": p.pid,
        "uptime_seconds": p.uptime().as_secs(),
        "backend": p.backend.name(),
    });
    if let Some(code) = p.exit_code() {
        v["exit_code"] = json!(code);
        v["completion_reason"] = json!(match p.termination_source() {
            Some(_) => "killed",
            None => "exited",
        });
        if let Some(source) = p.termination_source() {
            v["termination_source"] = json!(source);
        }
    }
    v
}

/// The `process` tool's arguments (Hermes' names; see the schema above).
#[derive(Debug, Deserialize)]
pub struct ProcessArgs {
    /// One of [`ACTIONS`].
    #[serde(default, deserialize_with = "lenient::string")]
    action: Option<String>,
    /// The process (`proc_…`; a number is read as its text).
    #[serde(default, deserialize_with = "session_id")]
    session_id: Option<String>,
    /// Text for `write` / `submit`.
    #[serde(default, deserialize_with = "lenient::string")]
    data: Option<String>,
    /// Seconds `wait` blocks (capped by the terminal timeout).
    #[serde(default, deserialize_with = "lenient::int")]
    timeout: Option<i64>,
    /// First line of a `log` page.
    #[serde(default, deserialize_with = "lenient::int")]
    offset: Option<i64>,
    /// Lines of a `log` page.
    #[serde(default, deserialize_with = "lenient::int")]
    limit: Option<i64>,
}

/// A session id: a non-empty string, or a number read as its text; anything else is
/// missing.
fn session_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) if !s.is_empty() => Some(s),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    })
}

/// A non-negative integer argument.
fn unsigned(value: Option<i64>) -> Option<u64> {
    value.and_then(|v| u64::try_from(v).ok())
}

/// Run one `process` call.
pub fn run(
    services: &Arc<CoreServices>,
    pending: &PendingInput,
    args: Value,
    ctx: &ToolContext,
) -> ToolOutcome {
    let args: ProcessArgs = args::parse(args)?;
    let registry = services.environments.processes();
    let action = args.action.as_deref().unwrap_or("");
    if !ACTIONS.contains(&action) {
        return Ok(
            json!({"error": format!("Unknown process action: {action}. Use: {}", ACTIONS.join(", "))}),
        );
    }
    if action == "list" {
        let processes: Vec<Value> = registry
            .list(Some(ctx.task_key()))
            .iter()
            .map(|p| {
                let mut v = status_fields(p);
                v["command"] = json!(p.command.chars().take(200).collect::<String>());
                v["cwd"] = json!(p.cwd);
                v["started_at"] = json!(started_iso(p));
                v["output_preview"] = json!(clean(&p.output_tail(200)));
                v
            })
            .collect();
        return Ok(json!({"processes": processes}));
    }
    let Some(id) = args.session_id else {
        return Ok(json!({"error": format!("session_id is required for {action}")}));
    };
    let Some(process) = registry.get(&id) else {
        return Ok(json!({"status": "not_found", "error": format!("No process with ID {id}")}));
    };
    let data = args.data.as_deref().unwrap_or("");
    Ok(match action {
        "poll" => {
            let mut v = status_fields(&process);
            v["output_preview"] = json!(clean(&process.output_tail(1000)));
            v
        }
        "log" => {
            let limit = unsigned(args.limit).unwrap_or(200).max(1) as usize;
            let offset = unsigned(args.offset);
            let page = process.log(offset, limit);
            let mut v = json!({
                "session_id": process.id,
                "command": process.command,
                "status": process.status().as_str(),
                "output": clean(&page.text),
                "total_lines": page.total_lines,
                "showing": format!("{} lines (from line {})", page.count, page.first_line),
            });
            if page.first_available > 0 {
                v["note"] = json!(format!(
                    "lines before {} fell out of the {}-byte rolling buffer",
                    page.first_available,
                    services.environments.settings().background_buffer_bytes
                ));
            }
            v
        }
        "wait" => {
            let cap = services.environments.settings().timeout.max(1);
            let asked = unsigned(args.timeout).unwrap_or(cap).max(1);
            let effective = asked.min(cap);
            let end = process.wait(Duration::from_secs(effective), Some(&ctx.cancel));
            let mut v = status_fields(&process);
            match end {
                WaitEnd::Finished => {
                    v["output"] = json!(clean(&process.output_tail(2000)));
                }
                WaitEnd::TimedOut => {
                    v["status"] = json!("timeout");
                    v["message"] = json!(format!("Waited {effective}s, process still running"));
                    v["output"] = json!(clean(&process.output_tail(2000)));
                }
                WaitEnd::Interrupted => {
                    v["status"] = json!("interrupted");
                    v["message"] = json!("Call cancelled -- wait interrupted");
                }
            }
            if asked > cap {
                v["timeout_note"] =
                    json!(format!("timeout clamped to the terminal timeout of {cap}s"));
            }
            v
        }
        "kill" => {
            if process.kill("process.kill") {
                json!({
                    "status": "killed",
                    "session_id": process.id,
                    "completion_reason": "killed",
                    "termination_source": "process.kill",
                    "exit_code": process.exit_code(),
                    "output": clean(&process.output_tail(1000)),
                })
            } else {
                let mut v = status_fields(&process);
                v["status"] = json!("already_exited");
                v
            }
        }
        "write" | "submit" => {
            let payload = if action == "submit" {
                format!("{data}\n")
            } else {
                data.to_string()
            };
            pending.send(services, ctx, &process, &payload)
        }
        "close" => {
            pending.forget(&process.id);
            match process.close_stdin() {
                Ok(message) => json!({"status": "ok", "message": message}),
                Err(e) => json!({"status": "error", "error": e}),
            }
        }
        _ => json!({"error": format!("Unknown process action: {action}")}),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
