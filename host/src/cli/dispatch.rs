//! `toolhost dispatch [FILE | -]`: execute the tool calls of one assistant message as a
//! batch. Input: an OpenAI chat-completions response (`choices[0].message`) or a bare
//! assistant message with `tool_calls`. Output: a JSON array of
//! `{"role":"tool","tool_call_id","name","content"}`, one per call, in call order.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;
use tools_core::ToolContext;

use super::interrupt::cancel_on_ctrl_c;
use super::{Cli, CliError, input::read_source};
use crate::batch::{ToolCall, dispatch_batch};

/// Arguments of `toolhost dispatch`.
#[derive(Debug, Args)]
pub struct DispatchArgs {
    /// The response or message file; `-` or nothing reads stdin.
    pub input: Option<PathBuf>,
    /// Task id for every call.
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Session id for every call.
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
}

/// The tool calls of a chat-completions response or assistant message.
pub fn extract_tool_calls(input: &Value) -> Result<Vec<ToolCall>, String> {
    let message = match input.get("choices") {
        Some(choices) => choices
            .get(0)
            .and_then(|c| c.get("message"))
            .ok_or("the response has no choices[0].message")?,
        None => input,
    };
    let calls = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls,
        Some(Value::Null) | None => return Ok(Vec::new()),
        Some(_) => return Err("`tool_calls` is not an array".into()),
    };
    Ok(calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let function = call.get("function").unwrap_or(&Value::Null);
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Null) | None => String::new(),
                // Some providers send an object instead of a string.
                Some(other) => other.to_string(),
            };
            ToolCall {
                id: call
                    .get("id")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("call_{index}"), str::to_string),
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                arguments,
            }
        })
        .collect())
}

/// Run `toolhost dispatch`.
pub fn run(cli: &Cli, args: &DispatchArgs) -> Result<ExitCode, CliError> {
    let text = read_source(args.input.as_deref())?;
    let input: Value = serde_json::from_str(&text)
        .map_err(|e| CliError::Input(format!("the input is not valid JSON: {e}")))?;
    let calls = extract_tool_calls(&input).map_err(CliError::Input)?;
    let host = cli.start_scoped(crate::mcp::McpScope::Cached)?;
    let context = ToolContext {
        task_id: args.task_id.clone().unwrap_or_default(),
        session_id: args.session_id.clone().unwrap_or_default(),
        ..ToolContext::default()
    };
    let options = host.batch_options(context);
    let runtime =
        tools_core::bridge::shared_runtime().map_err(|e| CliError::Input(e.to_string()))?;
    let interrupt = options.interrupt.clone();
    let messages = runtime.block_on(async {
        let ctrl_c = tokio::spawn(cancel_on_ctrl_c(interrupt));
        let messages = dispatch_batch(&host.dispatcher, &calls, &options).await;
        ctrl_c.abort();
        messages
    });
    let out =
        serde_json::to_string_pretty(&messages).map_err(|e| CliError::Input(e.to_string()))?;
    println!("{out}");
    Ok(ExitCode::SUCCESS)
}
