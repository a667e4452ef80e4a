//! `toolhost schema [--toolsets A,B] [--disable C]`: the OpenAI tools array
//! (`[{"type":"function","function":{...}}]`, sorted by name) on stdout. An unknown name in
//! `--toolsets`/`--disable` is an error (exit 2); unknown names in the config's
//! `[toolsets]` lists are reported on stderr and ignored.

use std::process::ExitCode;

use clap::Args;

use super::selection::SelectionArgs;
use super::{Cli, CliError};
use crate::definitions::selected_definitions;

/// Arguments of `toolhost schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which toolsets.
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// Run `toolhost schema`.
pub fn run(cli: &Cli, args: &SchemaArgs) -> Result<ExitCode, CliError> {
    let host = cli.start_scoped(args.selection.mcp_scope())?;
    let selection = args.selection.selection(&host)?;
    let definitions = selected_definitions(&host.registry, &host.toolsets, &selection);
    for name in &definitions.unknown {
        eprintln!("toolhost: unknown toolset {name:?} (ignored)");
    }
    println!("{}", definitions.to_json());
    Ok(ExitCode::SUCCESS)
}
