//! `toolhost run "PROMPT" [--toolsets …] [--session ID] [--max-turns N] [--json]`: one
//! task, non-interactive, through the agent loop. Nobody is there to answer: approvals
//! follow `[approvals] no_human` and `clarify` is told no user is present.
//!
//! Prints the final answer (or, with `--json`, `{session_id, end, text, model_calls,
//! usage, messages}`). Exit codes: 0 answered, 1 the model could not be reached or
//! failed, 3 the model-call limit was reached, 4 ended early by a turn rule (invalid
//! tool names, truncated output), 130 interrupted (Ctrl-C), 2 bad usage or no start.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tools_core::PreToolDecision;
use tools_core::approval::Surfaces;

use super::input::read_source;
use super::interrupt::cancel_on_ctrl_c;
use super::selection::SelectionArgs;
use super::{Cli, CliError};
use crate::agent::{Agent, TurnEnd, TurnOutcome};
use crate::app::{StartOptions, Toolhost};

/// What `clarify` answers in a non-interactive run.
pub const NO_USER: &str = "No user is present: this is a non-interactive run. Decide \
    yourself, and state the assumptions you made in your final answer.";

/// Arguments of `toolhost run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task (`-` reads it from stdin).
    pub prompt: String,
    /// Which toolsets the agent may use.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Continue this stored session instead of starting a new one.
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Most model calls for this task (default `[agent] max_turns`, 90).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<usize>,
    /// Print a JSON transcript instead of the answer.
    #[arg(long)]
    pub json: bool,
}

/// Exit code for how a turn ended.
pub fn exit_code(end: &TurnEnd) -> ExitCode {
    ExitCode::from(match end {
        TurnEnd::Completed => 0,
        TurnEnd::Failed => 1,
        TurnEnd::TurnLimit => 3,
        TurnEnd::Partial => 4,
        TurnEnd::Interrupted => 130,
    })
}

/// Start toolhost for the agent: `interactive` decides who answers approvals.
pub fn start_for_agent(cli: &Cli, interactive: bool) -> Result<Toolhost, CliError> {
    let options = StartOptions {
        home: cli.home.clone(),
        config: cli.config.clone(),
        approval_surfaces: if interactive {
            Surfaces::terminal()
        } else {
            Surfaces::none()
        },
        ..StartOptions::default()
    };
    let host = Toolhost::start(&options)?;
    for failure in host.plugins.failures() {
        eprintln!("toolhost: {}", failure.failure_line());
    }
    Ok(host)
}

/// Run `toolhost run`.
pub fn run(cli: &Cli, args: &RunArgs) -> Result<ExitCode, CliError> {
    let prompt = if args.prompt == "-" {
        read_source(Some(Path::new("-")))?
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        return Err(CliError::Input("the prompt is empty".into()));
    }
    let host = start_for_agent(cli, false)?;
    host.hooks.on_pre_tool_call("toolhost-run", |call| {
        if call.tool == "clarify" {
            PreToolDecision::Block {
                message: NO_USER.into(),
            }
        } else {
            PreToolDecision::Allow
        }
    });
    let selection = args.selection.selection(&host)?;
    let mut agent = Agent::from_host(&host, &selection)
        .map_err(|e| CliError::Input(e.to_string()))?
        .with_source("cli");
    if let Some(n) = args.max_turns {
        agent = agent.with_max_turns(n);
    }
    let runtime =
        tools_core::bridge::shared_runtime().map_err(|e| CliError::Input(e.to_string()))?;
    let (conversation, outcome) = runtime.block_on(async {
        let mut conversation = match &args.session {
            Some(id) => agent.resume(id),
            None => agent.new_conversation(None),
        }
        .map_err(|e| CliError::Input(e.to_string()))?;
        let cancel = CancellationToken::new();
        let watcher = tokio::spawn(cancel_on_ctrl_c(cancel.clone()));
        let outcome = agent.run_turn(&mut conversation, &prompt, &cancel).await;
        watcher.abort();
        Ok::<_, CliError>((conversation, outcome))
    })?;
    host.shutdown();
    print_outcome(
        &conversation.session_id,
        &conversation.messages,
        &outcome,
        args.json,
    );
    Ok(exit_code(&outcome.end))
}

fn print_outcome(
    session_id: &str,
    messages: &[crate::agent::Message],
    outcome: &TurnOutcome,
    as_json: bool,
) {
    if as_json {
        let end = match outcome.end {
            TurnEnd::Completed => "completed",
            TurnEnd::TurnLimit => "turn_limit",
            TurnEnd::Partial => "partial",
            TurnEnd::Interrupted => "interrupted",
            TurnEnd::Failed => "failed",
        };
        println!(
            "{}",
            json!({
                "session_id": session_id,
                "end": end,
                "text": outcome.text,
                "model_calls": outcome.model_calls,
                "usage": outcome.usage,
                "messages": messages,
            })
        );
    } else {
        if outcome.end != TurnEnd::Completed {
            eprintln!("toolhost: {}", outcome.text);
        } else {
            println!("{}", outcome.text);
        }
        eprintln!("toolhost: session {session_id}");
    }
}
