//! `toolhost plugin-host` (hidden): the child process of an out-of-process plugin. It
//! loads one library and serves the host over stdin/stdout with the framed protocol of
//! `plugins::process::protocol`; it is started by the host, never by hand.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{Cli, CliError};
use crate::plugins::process::child;

/// Arguments of `plugin-host`.
#[derive(Debug, Args)]
pub struct PluginHostArgs {
    /// The plugin's name.
    #[arg(long)]
    pub name: String,
    /// Address-space cap in bytes (0 = none).
    #[arg(long, default_value_t = 0)]
    pub memory_limit: u64,
    /// The host information handed to `register` (JSON).
    #[arg(long, default_value = "{}")]
    pub host_info: String,
    /// The plugin library (already checked by the host).
    pub library: PathBuf,
}

/// Serve the plugin until the host closes the channel.
pub fn run(_cli: &Cli, args: &PluginHostArgs) -> Result<ExitCode, CliError> {
    child::serve(
        &args.library,
        &args.name,
        &args.host_info,
        args.memory_limit,
    )
    .map_err(|e| CliError::Input(format!("plugin host for {}: {e}", args.name)))?;
    Ok(ExitCode::SUCCESS)
}
