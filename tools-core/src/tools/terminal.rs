//! The `terminal` tool (toolset `terminal`): run a shell command in the task's execution
//! environment, in the foreground (bounded output, timeout kills the process group) or
//! the background (tracked as `proc_…`, managed with the `process` tool).
//!
//! Result: `{"output", "exit_code", "error"}` plus, when they apply, `exit_code_meaning`,
//! `approval`, `full_output_path` (the complete output when it was truncated — Hermes
//! loses that middle), `status` (`blocked`, `disabled`, `error`).

mod guidance;

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::approval::{CommandCheck, GateDecision};
use crate::availability::AvailabilityCheck;
use crate::context::ToolContext;
use crate::entry::ToolEntry;
use crate::environments::{BackendKind, ExecRequest, TerminalSettings};
use crate::error::RegisterError;
use crate::handler::ToolOutcome;
use crate::hooks::TerminalOutput;
use crate::redact::redact;
use crate::services::CoreServices;
use crate::tools::args::{self, Given, lenient};
use crate::tools::home_mention;
use toolhost_text::strip_ansi;

pub use guidance::{bad_workdir_char, exit_code_meaning, foreground_guidance};

#[cfg(test)]
mod tests;

/// The tool's description for the model.
pub const DESCRIPTION: &str = "Execute shell commands in the task's environment (local machine, sandbox, container or remote host, as configured). Filesystem, current working directory, and exported environment variables persist between calls.

Do NOT use cat/head/tail to read files — use read_file instead.
Do NOT use grep/rg/find to search — use search_files instead.
Do NOT use sed/awk to edit files — use patch instead.
Do NOT use echo/cat heredoc to create files — use write_file instead.
Reserve terminal for: builds, installs, git, processes, scripts, network, package managers, and anything that needs a shell.

Foreground (default): commands return as soon as they finish, even with a high timeout. Set timeout=300 for long builds. Output over the limit keeps its head and tail; the full text is saved to a file whose path is given.
Background: set background=true for servers, watchers and long jobs; you get a session_id. Use process(action=\"poll\"|\"log\"|\"wait\"|\"kill\"|\"write\") to manage it. Do NOT use nohup/disown/setsid/trailing '&' in foreground mode.
Working directory: use 'workdir' for a per-command cwd.
PTY mode: set pty=true (with background=true) for interactive CLI tools such as a Python REPL; answer prompts with process(action=\"submit\").
Do NOT use vim/nano or other interactive tools in the foreground — they hang without a terminal. Pipe git output to cat if it might page.";

fn schema(settings_timeout: u64, max_timeout: u64) -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to execute"},
            "background": {
                "type": "boolean",
                "default": false,
                "description": "Run as a tracked background process and return a session_id at once. Use for servers, watchers and long-running jobs; manage it with the process tool."
            },
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "description": format!("Max seconds to wait (default {settings_timeout}, foreground max {max_timeout}). Returns as soon as the command finishes. Larger timeouts are rejected in the foreground; use background=true.")
            },
            "workdir": {"type": "string", "description": "Working directory for this command (absolute path). Defaults to the session's working directory."},
            "pty": {"type": "boolean", "default": false, "description": "Run in a pseudo-terminal (background processes on the local and sandbox backends) for interactive CLI tools."},
            "notify_on_complete": {"type": "boolean", "default": false, "description": "Ask to be notified when a background process ends (toolhost has no notification channel: use process wait/poll)."},
            "watch_patterns": {"type": "array", "items": {"type": "string"}, "description": "Strings to watch for in background output (toolhost has no notification channel: use process poll/log)."}
        },
        "required": ["command"]
    })
}

/// Build the `terminal` tool.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let settings = services.environments.settings();
    let check_services = Arc::clone(services);
    let check = AvailabilityCheck::new("terminal", move || {
        check_services.environments.availability("default")
    });
    let handler_services = Arc::clone(services);
    ToolEntry::builder("terminal", "terminal")
        .description(DESCRIPTION)
        .parameters(schema(settings.timeout, settings.max_foreground_timeout))
        .emoji("💻")
        .max_result_chars(100_000)
        .check(check)
        .sync_handler(move |args, ctx| run(&handler_services, args, ctx))
        .build()
}

fn failure(error: impl Into<String>, exit_code: i32, status: &str) -> Value {
    json!({"output": "", "exit_code": exit_code, "error": error.into(), "status": status})
}

/// Whether commands on `kind` can touch the host or a real machine (the full approval
/// gate applies); containers count as isolated unless host directories are mounted.
/// Isolated backends still get the hardline floor.
pub fn host_access(kind: BackendKind, settings: &TerminalSettings) -> bool {
    match kind {
        BackendKind::Local | BackendKind::Ssh => true,
        BackendKind::Docker => !settings.docker.volumes.is_empty(),
        BackendKind::Singularity => !settings.singularity.binds.is_empty(),
        BackendKind::Sandbox | BackendKind::Modal | BackendKind::Daytona => false,
    }
}

/// The `terminal` tool's arguments (Hermes' names; see the schema above).
#[derive(Debug, Deserialize)]
pub struct TerminalArgs {
    /// The command; a value of another type is reported by its type.
    #[serde(default, deserialize_with = "args::present")]
    command: Option<Given<String>>,
    /// Run as a tracked background process.
    #[serde(default, deserialize_with = "lenient::boolean")]
    background: Option<bool>,
    /// Seconds to wait (negative or unreadable: the configured default).
    #[serde(default, deserialize_with = "lenient::int")]
    timeout: Option<i64>,
    /// Working directory for this command (blank: the session's).
    #[serde(default, deserialize_with = "lenient::string")]
    workdir: Option<String>,
    /// Run in a pseudo-terminal (background only).
    #[serde(default, deserialize_with = "lenient::boolean")]
    pty: Option<bool>,
    /// Hermes' completion notification (answered with a note: no notification channel).
    #[serde(default, deserialize_with = "lenient::boolean")]
    notify_on_complete: Option<bool>,
    /// Hermes' output watches (answered with the same note when non-empty).
    #[serde(default, deserialize_with = "lenient::list")]
    watch_patterns: Option<Vec<Value>>,
}

/// Run one `terminal` call.
pub fn run(services: &Arc<CoreServices>, args: Value, ctx: &ToolContext) -> ToolOutcome {
    let args: TerminalArgs = args::parse(args)?;
    let command = match args.command {
        Some(Given::Ok(command)) => command,
        Some(Given::Other(other)) => {
            return Ok(failure(
                format!(
                    "Invalid command: expected string, got {}",
                    json_type(&other)
                ),
                -1,
                "error",
            ));
        }
        None => {
            return Ok(failure(
                "Invalid command: expected string, got null",
                -1,
                "error",
            ));
        }
    };
    let manager = &services.environments;
    let settings = manager.settings();
    let background = args.background.unwrap_or(false);
    let pty = args.pty.unwrap_or(false);
    let requested_timeout = args.timeout.and_then(|t| u64::try_from(t).ok());
    let workdir = args
        .workdir
        .as_deref()
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(str::to_string);

    if !background
        && let Some(t) = requested_timeout
        && t > settings.max_foreground_timeout
    {
        return Ok(failure(
            format!(
                "Foreground timeout {t}s exceeds the maximum of {}s. Use background=true (then process wait/poll) for long-running commands.",
                settings.max_foreground_timeout
            ),
            -1,
            "error",
        ));
    }
    if !background && let Some(advice) = foreground_guidance(&command) {
        return Ok(failure(advice, -1, "error"));
    }
    if let Some(workdir) = &workdir
        && let Some(bad) = bad_workdir_char(workdir)
    {
        return Ok(failure(
            format!(
                "Blocked: workdir contains disallowed character '{bad}'. Use a simple filesystem path without shell metacharacters."
            ),
            -1,
            "blocked",
        ));
    }

    // The home by its real path: the analyser knows it only by name.
    let home_note = match home_mention::check(services, ctx, &command) {
        Ok(note) => note,
        Err(message) => return Ok(failure(message, -1, "blocked")),
    };
    let task = ctx.task_key().to_string();
    let kind = manager.backend_for(&task);
    // The gate runs before anything is created or started, on every backend: isolated
    // ones get only the hardline floor (host_access = false), never nothing.
    let decision = services.approval.check(&CommandCheck {
        command: command.clone(),
        session_key: ctx.session_key().to_string(),
        task_id: task.clone(),
        tool_call_id: ctx.tool_call_id.clone(),
        env_type: kind.name().to_string(),
        host_access: host_access(kind, settings),
    });
    let (approval_note, human_approved) = match decision {
        GateDecision::Approved { note, human } => {
            (note.or(home_note.clone()), human || home_note.is_some())
        }
        GateDecision::Blocked { message, hardline } => {
            let mut out = failure(message, -1, "blocked");
            if hardline {
                out["hardline"] = json!(true);
            }
            return Ok(out);
        }
    };

    let env = match manager.get_or_create(&task) {
        Ok(env) => env,
        Err(err) => {
            return Ok(failure(
                format!("Terminal tool disabled: environment creation failed ({err})"),
                -1,
                "disabled",
            ));
        }
    };

    if background {
        return Ok(start_background(
            services,
            &env,
            &command,
            workdir.as_deref(),
            pty,
            Notify {
                on_complete: args.notify_on_complete.unwrap_or(false),
                watch: args.watch_patterns.is_some_and(|p| !p.is_empty()),
            },
            Approval {
                note: approval_note,
                human: human_approved,
            },
        ));
    }

    let timeout = Duration::from_secs(requested_timeout.unwrap_or(settings.timeout).max(1));
    let outcome = env.execute(&ExecRequest {
        command: command.clone(),
        workdir,
        timeout,
        cancel: Some(ctx.cancel.clone()),
        max_output: services.settings.tool_output.max_bytes.max(1000),
        spill: Some(manager.spill_target(&task)),
        approved: human_approved,
    });
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(err) => {
            return Ok(failure(
                format!("Command execution failed: {err}"),
                -1,
                "error",
            ));
        }
    };

    let mut text = outcome.output.text.clone();
    if let Some(replaced) = services
        .hooks
        .run_transform_terminal_output(&TerminalOutput {
            command: &command,
            output: &text,
            exit_code: outcome.exit_code,
            task_id: &task,
            env_type: kind.name(),
        })
    {
        text = replaced;
    }
    let text = strip_ansi(&text);
    let text = redact(&text).trim().to_string();

    let mut result = Map::new();
    result.insert("output".into(), json!(text));
    result.insert("exit_code".into(), json!(outcome.exit_code));
    result.insert("error".into(), Value::Null);
    if let Some(meaning) = exit_code_meaning(&command, outcome.exit_code) {
        result.insert("exit_code_meaning".into(), json!(meaning));
    }
    if let Some(note) = confinement_note(kind, settings, human_approved, outcome.exit_code, &text) {
        result.insert("confinement".into(), json!(note));
    }
    if let Some(note) = floor_note(kind, settings, human_approved) {
        result.insert("floor".into(), json!(note));
    }
    if let Some(path) = &outcome.output.full_output_path {
        result.insert("full_output_path".into(), json!(path.display().to_string()));
    }
    if let Some(note) = approval_note {
        let note = if outcome.interrupted {
            format!("{}, then interrupted.", note.trim_end_matches('.'))
        } else {
            note
        };
        result.insert("approval".into(), json!(note));
    }
    Ok(Value::Object(result))
}

/// When a local command that ran under the kernel floor failed with a permission error,
/// say that the floor may be why (the model otherwise retries with `sudo`).
fn confinement_note(
    kind: BackendKind,
    settings: &TerminalSettings,
    human_approved: bool,
    exit_code: i32,
    output: &str,
) -> Option<&'static str> {
    use crate::environments::settings::ConfineMode;
    let confined = match settings.local.confine {
        ConfineMode::Off => false,
        ConfineMode::Verdict => !human_approved,
        ConfineMode::Floor | ConfineMode::Workspace => true,
    };
    let denied = [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ]
    .iter()
    .any(|m| output.contains(m));
    (kind == BackendKind::Local && confined && exit_code != 0 && denied).then_some(
        "The command may have been stopped by the local kernel floor (terminal.local.confine): \
         commands that run without a human's approval cannot write outside the working \
         directory, /tmp, ~/.cache and configured paths (home dotfiles and toolhost's own \
         files stay read-only), cannot write block devices or /proc/sysrq-trigger, cannot \
         signal processes outside their own tree or PID 1, and cannot reboot, mount or load \
         modules. Ask the user to approve the command if it really needs more.",
    )
}

/// The notifications a background call asked for (toolhost cannot send them).
struct Notify {
    /// `notify_on_complete`.
    on_complete: bool,
    /// Non-empty `watch_patterns`.
    watch: bool,
}

/// What the gate said about a command that may run.
struct Approval {
    /// The note for the result.
    note: Option<String>,
    /// A human approved it (the local floor then keeps only its device part).
    human: bool,
}

fn start_background(
    services: &Arc<CoreServices>,
    env: &crate::environments::TaskEnvironment,
    command: &str,
    workdir: Option<&str>,
    pty: bool,
    notify: Notify,
    approval: Approval,
) -> Value {
    let approval_note = approval.note;
    let processes = services.environments.processes();
    let process = match processes.spawn(env, command, workdir, pty, approval.human) {
        Ok(p) => p,
        Err(err) => {
            return failure(
                format!("Failed to start background process: {err}"),
                -1,
                "error",
            );
        }
    };
    let mut result = json!({
        "output": "Background process started",
        "session_id": process.id,
        "pid": process.pid,
        "exit_code": 0,
        "error": null,
        "hint": "It runs silently: check it with process(action=\"poll\"), read output with process(action=\"log\"), or block with process(action=\"wait\").",
    });
    if notify.on_complete || notify.watch {
        result["notify_unsupported"] = json!(
            "This session cannot receive asynchronous notifications; use process wait/poll instead."
        );
    }
    if pty && !process.pty {
        result["pty_note"] = json!(format!(
            "PTY mode is not available on the {} backend; the process runs with pipes.",
            env.kind()
        ));
    }
    if let Some(note) = floor_note(env.kind(), services.environments.settings(), approval.human) {
        result["floor"] = json!(note);
    }
    if let Some(note) = approval_note {
        result["approval"] = json!(note);
    }
    result
}

/// The result's `floor` note when a human's approval lifted the local kernel floor for
/// this command (docs/terminal.md, "The kernel floor").
fn floor_note(kind: BackendKind, settings: &TerminalSettings, human: bool) -> Option<&'static str> {
    use crate::environments::exec_policy::{Approval, LIFTED_NOTE, lifted};
    let approval = if human {
        Approval::Human
    } else {
        Approval::Unjudged
    };
    (kind == BackendKind::Local && lifted(&settings.local, approval)).then_some(LIFTED_NOTE)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}
