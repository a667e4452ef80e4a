//! `execute_code` (toolset `code_execution`): run a Python script that calls tools as
//! functions (see [`crate::code_exec`]). Hermes' name, parameter and result shape
//! (docs/hermes/code-execution.md).
//!
//! The description lists the tools a script can import: the configured allowlist
//! (Hermes' seven by default) intersected with the tools that survive the
//! definitions filter (a schema patch); at run time the allowlist is intersected with
//! what is registered and available. Scripts run in the task's execution environment,
//! in its working directory: on the host for the local backend (the tool is
//! unavailable when the interpreter is not on `PATH`), inside the container, remote
//! host or sandbox for the others (where a missing `python3` is reported when a script
//! is run: finding out means starting the environment).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::availability::AvailabilityCheck;
use crate::code_exec::approval::check_script;
use crate::code_exec::remote::{RemoteScript, execute_remote};
use crate::code_exec::run::{Script, execute};
use crate::code_exec::{CodeExecutionSettings, stubs};
use crate::context::ToolContext;
use crate::entry::{Parallelism, SchemaPatch, ToolEntry};
use crate::environments::BackendKind;
use crate::error::RegisterError;
use crate::result::tool_error;
use crate::services::CoreServices;
use crate::tools::args;
use crate::tools::terminal::host_access;

fn description(tools: &[String]) -> String {
    let lines: Vec<String> = tools.iter().map(|t| stubs::doc_line(t)).collect();
    let mut examples: Vec<&str> = ["read_file", "terminal"]
        .into_iter()
        .filter(|n| tools.iter().any(|t| t == n))
        .collect();
    if examples.is_empty() {
        examples = tools.iter().take(2).map(String::as_str).collect();
    }
    format!(
        "Run a Python script that can call toolhost tools programmatically. Use this when you need 3+ tool calls with processing logic between them, need to filter/reduce large tool outputs before they enter your context, need conditional branching (if X then Y else Z), or need to loop (fetch N pages, process N files, retry on failure).\n\n\
         Use normal tool calls instead when: single tool call with no processing, you need to see the full result and apply complex reasoning, or the task requires interactive user input.\n\n\
         Available via `from toolhost_tools import {}, ...`:\n\n{}\n\n\
         Every call goes through the same checks as a direct call (dangerous commands still need approval).\n\
         Limits: 5-minute timeout, 50KB stdout cap, max 50 tool calls per script. terminal() is foreground-only (no background or pty).\n\n\
         Scripts run in the session's working directory. Print your final result to stdout: only stdout is returned. Use Python stdlib (json, re, math, csv, datetime, collections, etc.) for processing between tool calls.\n\n\
         Also available (no import needed — built into toolhost_tools):\n  json_parse(text: str) — json.loads with strict=False\n  shell_quote(s: str) — shlex.quote() for dynamic strings in shell commands\n  retry(fn, max_attempts=3, delay=2) — retry with exponential backoff",
        examples.join(", "),
        lines.join("\n")
    )
}

fn schema(tools: &[String]) -> Value {
    json!({
        "description": description(tools),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "description": "Python code to execute. Import tools with `from toolhost_tools import read_file, terminal, ...` and print your final result to stdout."
                }
            },
            "required": ["code"]
        }
    })
}

/// Whether `program` is runnable: a path that exists, or a name found on `PATH`.
fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The `execute_code` tool's arguments.
#[derive(Debug, Deserialize)]
pub struct ExecuteCodeArgs {
    /// The Python script (blank: "No code provided.").
    #[serde(default)]
    code: String,
}

/// Build `execute_code`.
pub fn build(services: &Arc<CoreServices>) -> Result<ToolEntry, RegisterError> {
    let CodeExecutionSettings {
        python,
        allowed_tools: allow,
        ..
    } = services.settings.code_execution.clone();
    let on_host = services.settings.terminal.backend == BackendKind::Local;
    let check = AvailabilityCheck::new("python3", move || {
        if !on_host || on_path(&python) {
            Ok(())
        } else {
            Err(format!(
                "{python} not found on PATH (execute_code needs Python 3)"
            ))
        }
    });
    let svc = Arc::clone(services);
    ToolEntry::builder("execute_code", "code_execution")
        .schema(&schema(&allow))
        .emoji("🐍")
        .check(check)
        .max_result_chars(100_000)
        .parallelism(Parallelism::Exclusive)
        .schema_patch(
            move |function: &mut Map<String, Value>, present: &BTreeSet<String>| {
                let tools: Vec<String> = allow
                    .iter()
                    .filter(|t| present.contains(*t))
                    .cloned()
                    .collect();
                if tools.is_empty() {
                    return SchemaPatch::Remove;
                }
                function.insert("description".into(), Value::String(description(&tools)));
                SchemaPatch::Keep
            },
        )
        .sync_handler(move |args, ctx| {
            let args: ExecuteCodeArgs = args::parse(args)?;
            Ok(handle(&svc, args, ctx))
        })
        .build()
}

/// A refusal before anything ran.
fn not_run(error: String) -> Value {
    json!({
        "status": "error",
        "error": error,
        "tool_calls_made": 0,
        "duration_seconds": 0,
    })
}

/// One `execute_code` call: arguments, the pipeline, the allowed tools, the
/// whole-script check, then the script where the task's commands run.
fn handle(svc: &Arc<CoreServices>, args: ExecuteCodeArgs, ctx: &ToolContext) -> Value {
    if args.code.trim().is_empty() {
        return tool_error("No code provided.");
    }
    let settings = &svc.settings.code_execution;
    let Some(caller) = svc.tool_caller.get() else {
        return tool_error(
            "execute_code is unavailable: no tool pipeline is installed in this process. Use normal tool calls instead.",
        );
    };
    let tools: BTreeSet<String> = settings
        .allowed_tools
        .iter()
        .filter(|t| t.as_str() != "execute_code" && caller.available(t))
        .cloned()
        .collect();
    let kind = svc.environments.backend_for(ctx.task_key());
    let approval_note = match check_script(
        svc.approval.as_ref(),
        &args.code,
        ctx,
        kind.name(),
        host_access(kind, &svc.settings.terminal),
    ) {
        Ok(note) => note,
        Err(message) => return not_run(message),
    };
    let mut result = if kind == BackendKind::Local {
        let files = svc.files.for_task(ctx.task_key());
        let cwd: PathBuf = files.resolve(".");
        let script = Script {
            code: &args.code,
            floor: svc.environments.floor(&cwd),
            cwd,
            tools,
        };
        execute(&script, settings, caller, ctx)
    } else {
        let env = match svc.environments.get_or_create(ctx.task_key()) {
            Ok(env) => env,
            Err(err) => {
                return not_run(format!(
                    "execute_code: the {kind} environment could not be created ({err})"
                ));
            }
        };
        let script = RemoteScript {
            code: &args.code,
            tools,
        };
        execute_remote(&script, settings, caller, ctx, &env)
    };
    if let (Some(note), Some(map)) = (approval_note, result.as_object_mut()) {
        map.insert("approval".into(), Value::String(note));
    }
    result
}
