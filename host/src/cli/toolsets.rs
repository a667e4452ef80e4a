//! `toolhost toolsets [--json]`: every toolset with its fully resolved tools and, for
//! the tools the model would not get, why. `--json` prints an array of
//! `{"name","kind","description","tools","available","unavailable":[{"name","reason"}]}`
//! (plus `aliases` when a toolset has other names). The table marks a toolset ✓ when at
//! least one of its tools is available and says how many are.

use std::process::ExitCode;

use clap::Args;

use super::{Cli, CliError};
use crate::toolsets::{NOT_REGISTERED, ToolsetInfo};

/// Arguments of `toolhost toolsets`.
#[derive(Debug, Args)]
pub struct ToolsetsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Run `toolhost toolsets`.
pub fn run(cli: &Cli, args: &ToolsetsArgs) -> Result<ExitCode, CliError> {
    let host = cli.start_scoped(crate::mcp::McpScope::cached())?;
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
        if let Some(note) = unavailable_note(info) {
            println!("    {note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `N of M tools available; not registered: a, b; c: <reason>` — `None` when every
/// tool is available.
fn unavailable_note(info: &ToolsetInfo) -> Option<String> {
    if info.unavailable.is_empty() {
        return None;
    }
    let total = info.tools.len();
    let available = total - info.unavailable.len();
    let (missing, failing): (Vec<_>, Vec<_>) = info
        .unavailable
        .iter()
        .partition(|t| t.reason == NOT_REGISTERED);
    let mut parts = vec![format!("{available} of {total} tools available")];
    if !missing.is_empty() {
        let names: Vec<&str> = missing.iter().map(|t| t.name.as_str()).collect();
        parts.push(format!("not registered: {}", names.join(", ")));
    }
    parts.extend(failing.iter().map(|t| format!("{}: {}", t.name, t.reason)));
    Some(parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolsets::{ToolsetKind, UnavailableTool};

    fn info(tools: &[&str], unavailable: &[(&str, &str)]) -> ToolsetInfo {
        ToolsetInfo {
            name: "web".into(),
            kind: ToolsetKind::Leaf,
            description: String::new(),
            tools: tools.iter().map(|t| t.to_string()).collect(),
            available: unavailable.len() < tools.len(),
            unavailable: unavailable
                .iter()
                .map(|(name, reason)| UnavailableTool {
                    name: name.to_string(),
                    reason: reason.to_string(),
                })
                .collect(),
            aliases: Vec::new(),
        }
    }

    #[test]
    fn the_note_counts_and_explains_unavailable_tools() {
        let row = info(
            &["a", "b", "c", "d"],
            &[
                ("b", NOT_REGISTERED),
                ("c", "needs FOO_API_KEY"),
                ("d", NOT_REGISTERED),
            ],
        );
        assert_eq!(
            unavailable_note(&row).unwrap(),
            "1 of 4 tools available; not registered: b, d; c: needs FOO_API_KEY"
        );
        assert_eq!(unavailable_note(&info(&["a"], &[])), None);
    }
}
