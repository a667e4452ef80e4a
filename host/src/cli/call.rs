//! `toolhost call NAME [ARGS_JSON | -] [--task-id ID]`: one call through the whole
//! pipeline. Prints the result string; exit 0, or 1 when the result is an error object.
//!
//! Ctrl-C cancels the call rather than killing toolhost: the tool stops (a terminal
//! command's whole process group is killed), its result is printed, and toolhost cleans
//! up its environments on the way out. Left to the default signal action, the command —
//! which runs in its own process group, out of the terminal's reach — would outlive
//! toolhost. A second Ctrl-C exits at once, for a tool that ignores cancellation.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use tokio_util::sync::CancellationToken;
use tools_core::{CallStatus, ToolContext};

use super::interrupt::cancel_on_ctrl_c;
use super::{Cli, CliError, input::read_source};

/// Arguments of `toolhost call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// Tool name.
    pub name: String,
    /// Arguments as a JSON object; `-` reads them from stdin. Default `{}`.
    pub args: Option<String>,
    /// Task id (environments and state are kept per task).
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,
    /// Session id (session-scoped approvals).
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
}

/// Run `toolhost call`.
pub fn run(cli: &Cli, args: &CallArgs) -> Result<ExitCode, CliError> {
    let arguments = match args.args.as_deref() {
        Some("-") => read_source(Some(Path::new("-")))?,
        Some(text) => text.to_string(),
        None => "{}".to_string(),
    };
    // Only the MCP server owning the tool is started (none for other tools).
    let host = cli.start_scoped(crate::mcp::McpScope::ForTool(args.name.clone()))?;
    let ctx = ToolContext {
        task_id: args.task_id.clone().unwrap_or_default(),
        session_id: args.session_id.clone().unwrap_or_default(),
        ..ToolContext::default()
    };
    let runtime =
        tools_core::bridge::shared_runtime().map_err(|e| CliError::Input(e.to_string()))?;
    let outcome = runtime.block_on(async {
        let interrupts = tokio::spawn(cancel_then_exit_on_second_ctrl_c(ctx.cancel.clone()));
        let outcome = host
            .dispatcher
            .call_async(&args.name, &arguments, &ctx)
            .await;
        interrupts.abort();
        outcome
    });
    println!("{}", outcome.text);
    Ok(if outcome.status == CallStatus::Ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Fire `cancel` on the first Ctrl-C; exit with 130 (the shell's code for SIGINT) on the
/// second.
async fn cancel_then_exit_on_second_ctrl_c(cancel: CancellationToken) {
    if cancel_on_ctrl_c(cancel).await && tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("toolhost: interrupted again; exiting without waiting for the tool");
        std::process::exit(130);
    }
}
