//! `toolhost tools [--toolsets A,B] [--disable C] [--json]`: the tools a selection
//! covers, available or not. `--json` prints an array of
//! `{"name","toolset","available","reason","source","emoji","description"}`.

use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use tools_core::AvailabilityPass;

use super::selection::SelectionArgs;
use super::{Cli, CliError};

/// Arguments of `toolhost tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Which toolsets.
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// One row of `toolhost tools --json`.
#[derive(Debug, Serialize)]
pub struct ToolRow {
    /// Tool name.
    pub name: String,
    /// Owning toolset.
    pub toolset: String,
    /// Offered to the model right now.
    pub available: bool,
    /// Why not (or a note from the availability check).
    pub reason: Option<String>,
    /// `core`, `plugin NAME` or `mcp SERVER`.
    pub source: String,
    /// UI emoji.
    pub emoji: String,
    /// What the tool does.
    pub description: String,
}

/// Run `toolhost tools`.
pub fn run(cli: &Cli, args: &ToolsArgs) -> Result<ExitCode, CliError> {
    let host = cli.start_scoped(args.selection.mcp_scope())?;
    let selection = args.selection.selection(&host)?;
    let selected = host
        .toolsets
        .select(&host.registry, selection.enabled(), selection.disabled());
    for name in &selected.unknown {
        eprintln!("toolhost: unknown toolset {name:?} (ignored)");
    }
    let mut pass = AvailabilityPass::new();
    let rows: Vec<ToolRow> = selected
        .tools
        .iter()
        .filter_map(|name| host.registry.get(name))
        .map(|entry| {
            let availability = pass.evaluate(entry.check.as_ref());
            ToolRow {
                name: entry.name.clone(),
                toolset: entry.toolset.clone(),
                available: availability.available,
                reason: availability.reason,
                source: entry.source.to_string(),
                emoji: entry.emoji().to_string(),
                description: first_line(&entry.description),
            }
        })
        .collect();
    if args.json {
        let text =
            serde_json::to_string_pretty(&rows).map_err(|e| CliError::Input(e.to_string()))?;
        println!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(4);
    for row in &rows {
        let mark = if row.available { "✓" } else { "✗" };
        let note = row
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        println!(
            "{mark} {} {:width$}  [{}] {}{note}",
            row.emoji, row.name, row.toolset, row.description
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The first line of a description, for the table.
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_string()
}
