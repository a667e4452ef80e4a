//! `toolhost call NAME [ARGS_JSON | -] [--task-id ID]`: one call through the whole
//! pipeline. Prints the result string; exit 0, or 1 when the result is an error object.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use tools_core::{CallStatus, ToolContext};

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
    let host = cli.start()?;
    let ctx = ToolContext {
        task_id: args.task_id.clone().unwrap_or_default(),
        session_id: args.session_id.clone().unwrap_or_default(),
        ..ToolContext::default()
    };
    let outcome = host.dispatcher.call(&args.name, &arguments, &ctx);
    println!("{}", outcome.text);
    Ok(if outcome.status == CallStatus::Ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
