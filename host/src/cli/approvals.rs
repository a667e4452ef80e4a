//! `toolhost approvals`: judge commands with the dangerous-command detector and manage
//! permanent approvals.
//!
//! - `approvals check [CMD]` prints `{"command","dangerous","hardline","description",
//!   "rule","rules"}`; without CMD the whole of stdin is one command. Exit 0 when benign,
//!   1 when dangerous.
//! - `approvals check --jsonl` reads JSON lines (a string or `{"command": ...}`) and writes
//!   one verdict line per input line, command echoed; a bad line gets `{"line","error"}`.
//!   Exit 0, or 2 when any line was bad.
//! - `approvals list [--json] [--rules]`: permanent approvals in `config.toml` (or every
//!   rule key the detector knows, with `--rules`).
//! - `approvals revoke KEY`: remove one, keeping the file's comments.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tools_core::Home;

use super::approvals_actions as approvals;
use super::{Cli, CliError};

/// Arguments of `toolhost approvals`.
#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ApprovalsCommand,
}

/// `toolhost approvals` subcommands.
#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// Judge a command (or JSON lines of commands) with the dangerous-command detector.
    Check {
        /// The command; read from stdin when absent.
        command: Option<String>,
        /// Read JSON lines from stdin (each a string or {"command": ...}).
        #[arg(long, conflicts_with = "command")]
        jsonl: bool,
    },
    /// List permanent approvals (approvals.command_allowlist).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// List every rule key the detector knows instead.
        #[arg(long)]
        rules: bool,
    },
    /// Remove a permanent approval.
    Revoke {
        /// The rule key (or command glob) to remove.
        key: String,
    },
}

fn config_file(cli: &Cli) -> Result<PathBuf, CliError> {
    if let Some(path) = &cli.config {
        return Ok(path.clone());
    }
    let home = Home::resolve(cli.home.as_deref()).map_err(|e| CliError::Input(e.to_string()))?;
    Ok(home.config_file())
}

fn io_error(what: &str, source: std::io::Error) -> CliError {
    CliError::Io {
        what: what.to_string(),
        source,
    }
}

fn cli_error(err: approvals::ApprovalsCliError) -> CliError {
    match err {
        approvals::ApprovalsCliError::Io(source) => io_error("approvals", source),
        other => CliError::Input(other.to_string()),
    }
}

/// Run `toolhost approvals ...`.
pub fn run(cli: &Cli, args: &ApprovalsArgs) -> Result<ExitCode, CliError> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match &args.command {
        ApprovalsCommand::Check {
            command: None,
            jsonl: true,
        } => {
            let stdin = std::io::stdin();
            let summary = approvals::check_jsonl(&mut stdin.lock(), &mut out).map_err(cli_error)?;
            Ok(if summary.bad_lines > 0 {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            })
        }
        ApprovalsCommand::Check { command, .. } => {
            let command = match command {
                Some(c) => c.clone(),
                None => {
                    let mut text = String::new();
                    std::io::stdin()
                        .read_to_string(&mut text)
                        .map_err(|e| io_error("stdin", e))?;
                    text.strip_suffix('\n').map(str::to_string).unwrap_or(text)
                }
            };
            let verdict = approvals::check_one(&command, &mut out).map_err(cli_error)?;
            out.flush().map_err(|e| io_error("stdout", e))?;
            Ok(if verdict.dangerous() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        ApprovalsCommand::List { json, rules: true } => {
            approvals::list_rules(*json, &mut out).map_err(cli_error)?;
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::List { json, rules: false } => {
            approvals::list(&config_file(cli)?, *json, &mut out).map_err(cli_error)?;
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Revoke { key } => {
            approvals::revoke(&config_file(cli)?, key, &mut out).map_err(cli_error)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
