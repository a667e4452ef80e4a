//! `toolhost toolsets [--json]`: every toolset with its fully resolved tools. `--json`
//! prints an array of `{"name","kind","description","tools","available"}` (plus
//! `aliases` when a toolset has other names).

use std::process::ExitCode;

use clap::Args;

use super::{Cli, CliError};

/// Arguments of `toolhost toolsets`.
#[derive(Debug, Args)]
pub struct ToolsetsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Run `toolhost toolsets`.
pub fn run(cli: &Cli, args: &ToolsetsArgs) -> Result<ExitCode, CliError> {
    let host = cli.start_scoped(crate::mcp::McpScope::Cached)?;
    let list = host.toolsets.list(&host.registry);
    if args.json {
        let text =
            serde_json::to_string_pretty(&list).map_err(|e| CliError::Input(e.to_string()))?;
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    for info in &list {
        let mark = if info.available { "✓" } else { "✗" };
        let aliases = if info.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also {})", info.aliases.join(", "))
        };
        println!(
            "{mark} {}{aliases} [{:?}] {} — {}",
            info.name,
            info.kind,
            info.description,
            info.tools.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
