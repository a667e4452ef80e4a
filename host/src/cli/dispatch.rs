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

/// What `dispatch` reads, for error messages.
const EXPECTED: &str = "expected an assistant message with `tool_calls` \
     ({\"role\":\"assistant\",\"tool_calls\":[...]}) or a chat-completions response \
     ({\"choices\":[{\"message\":{...}}]})";

/// The JSON type of `value`, for error messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The tool calls of a chat-completions response or assistant message. Input that is
/// neither, or a message without `tool_calls`, is an error saying what was expected;
/// an explicit `"tool_calls": []` is zero calls.
pub fn extract_tool_calls(input: &Value) -> Result<Vec<ToolCall>, String> {
    if !input.is_object() {
        return Err(format!("{EXPECTED}; got {}", kind(input)));
    }
    let message = match input.get("choices") {
        Some(choices) => choices
            .get(0)
            .and_then(|c| c.get("message"))
            .filter(|m| m.is_object())
            .ok_or_else(|| format!("the response has no choices[0].message; {EXPECTED}"))?,
        None => input,
    };
    let calls = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls,
        Some(Value::Null) | None => {
            return Err(format!("the message has no `tool_calls`; {EXPECTED}"));
        }
        Some(other) => {
            return Err(format!(
                "`tool_calls` is {}, not an array; {EXPECTED}",
                kind(other)
            ));
        }
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
    let host = cli.start_scoped(crate::mcp::McpScope::ForTools(
        calls.iter().map(|c| c.name.clone()).collect(),
    ))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn input_without_tool_calls_says_what_was_expected() {
        let cases = [
            (json!(null), "got null"),
            (json!([1, 2, 3]), "got an array"),
            (json!("text"), "got a string"),
            (json!(7), "got a number"),
            (
                json!({"role": "assistant", "content": "hi"}),
                "has no `tool_calls`",
            ),
            (json!({"tool_calls": null}), "has no `tool_calls`"),
            (
                json!({"tool_calls": {"a": 1}}),
                "is an object, not an array",
            ),
            (json!({"choices": []}), "no choices[0].message"),
            (
                json!({"choices": [{"message": 3}]}),
                "no choices[0].message",
            ),
            (
                json!({"choices": [{"message": {"content": "done"}}]}),
                "has no `tool_calls`",
            ),
        ];
        for (input, needle) in cases {
            let err = extract_tool_calls(&input).expect_err(&input.to_string());
            assert!(err.contains(needle), "{input}: {err}");
            assert!(
                err.contains("expected an assistant message"),
                "{input}: {err}"
            );
        }
    }

    #[test]
    fn explicit_empty_tool_calls_are_zero_calls() {
        let calls = extract_tool_calls(&json!({"role": "assistant", "tool_calls": []})).unwrap();
        assert!(calls.is_empty());
    }
}
