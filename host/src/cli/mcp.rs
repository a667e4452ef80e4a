//! `toolhost mcp list [--json]` and `toolhost mcp serve [--http ADDR] [--toolsets A,B]
//! [--disable C]`.
//!
//! `list` connects to every configured server and reports each: transport, status, tool
//! count, last error, and the tools it offered that toolhost left out for a reason other
//! than the section's own filter; it exits 1 when a server failed, with one stderr line per failed
//! server (its error and the last line of its stderr). With `--json`: an array of
//! `{"name","transport","status","tool_count","tools","skipped_tools","last_error",
//! "pid","server_version","stderr_tail"}`.
//!
//! `serve` exposes the selected toolsets over MCP on stdio (the default) or streamable
//! HTTP on a loopback address, until the client disconnects (stdio) or toolhost is
//! interrupted.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use tools_core::approval::Surfaces;

use super::selection::SelectionArgs;
use super::{Cli, CliError};
use crate::app::{StartOptions, Toolhost};
use crate::mcp::server::{
    DEFAULT_APPROVAL_TIMEOUT, DEFAULT_PROGRESS_INTERVAL, ElicitationRouter, ServerCore,
    serve_http_with_origins, serve_stdio_on, unknown_toolsets,
};
use crate::mcp::{McpScope, ServerState, ServerStatus};
use crate::toolsets::ToolsetSelection;

/// `toolhost mcp ...`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: McpCommand,
}

/// MCP subcommands.
#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// Connect to every configured MCP server and report its status.
    List(ListArgs),
    /// Serve toolhost's tools to an MCP client (stdio by default).
    Serve(ServeArgs),
}

/// `toolhost mcp list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `toolhost mcp serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8931) instead of
    /// stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Which toolsets to expose (default: `[toolsets]` of the configuration).
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// With --http: also accept browser requests from this origin (repeatable;
    /// `scheme://host[:port]`, `:*` for any port). Loopback origins are always accepted.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub allow_origins: Vec<String>,
    /// Seconds between progress notifications for calls that ask for progress.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_PROGRESS_INTERVAL.as_secs_f64())]
    pub progress_interval: f64,
    /// Seconds the client's user has to answer an approval prompt (elicitation); no
    /// answer in time denies the command and withdraws the prompt.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_APPROVAL_TIMEOUT.as_secs_f64())]
    pub approval_timeout: f64,
}

/// Run `toolhost mcp ...`.
pub fn run(cli: &Cli, args: &McpArgs) -> Result<ExitCode, CliError> {
    match &args.command {
        McpCommand::List(list) => run_list(cli, list),
        McpCommand::Serve(serve) => run_serve(cli, serve),
    }
}

fn run_list(cli: &Cli, args: &ListArgs) -> Result<ExitCode, CliError> {
    let host = cli.start()?;
    let statuses = host.mcp.statuses();
    host.shutdown();
    let failed: Vec<&ServerStatus> = statuses.iter().filter(|s| is_failure(s.state)).collect();
    let code = if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    if args.json {
        let out: Vec<Value> = statuses.iter().map(status_json).collect();
        let text =
            serde_json::to_string_pretty(&out).map_err(|e| CliError::Input(e.to_string()))?;
        println!("{text}");
    } else if statuses.is_empty() {
        println!("No MCP servers configured (add [mcp_servers.NAME] sections to config.toml).");
    } else {
        print!("{}", status_table(&statuses));
    }
    for status in failed {
        eprintln!("toolhost: {}", failure_line(status));
    }
    Ok(code)
}

/// States that mean a configured, enabled server cannot be used.
fn is_failure(state: ServerState) -> bool {
    matches!(
        state,
        ServerState::Failed
            | ServerState::Misconfigured
            | ServerState::Disconnected
            | ServerState::BreakerOpen
    )
}

/// One stderr line: the server, its state, the first line of its error and the last
/// line of its stderr (usually the one that explains it).
fn failure_line(status: &ServerStatus) -> String {
    let mut line = format!("MCP server '{}' {}", status.name, status.state.as_str());
    if let Some(error) = status.last_error.as_deref().and_then(|e| e.lines().next()) {
        line.push_str(&format!(": {error}"));
    }
    if let Some(last) = status
        .stderr_tail
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
    {
        line.push_str(&format!(" (stderr: {})", last.trim()));
    }
    crate::mcp::secrets::redact(&line)
}

/// The `--json` object of one server.
pub fn status_json(status: &ServerStatus) -> Value {
    let status = &redacted(status);
    let mut value = serde_json::to_value(status).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("status".into(), json!(status.state.as_str()));
        map.remove("state");
        map.insert("tool_count".into(), json!(status.tools.len()));
    }
    value
}

/// `status` with configured secret values hidden in its error and stderr lines.
fn redacted(status: &ServerStatus) -> ServerStatus {
    let redact = crate::mcp::secrets::redact;
    let mut out = status.clone();
    out.last_error = out.last_error.as_deref().map(redact);
    out.stderr_tail = out.stderr_tail.iter().map(|l| redact(l)).collect();
    out
}

/// The human-readable table.
pub fn status_table(statuses: &[ServerStatus]) -> String {
    let statuses: Vec<ServerStatus> = statuses.iter().map(redacted).collect();
    let statuses = statuses.as_slice();
    let width = statuses
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:<width$}  {:<9}  {:<13}  {:>5}  LAST ERROR\n",
        "NAME", "TRANSPORT", "STATUS", "TOOLS"
    );
    for s in statuses {
        let error = s
            .last_error
            .as_deref()
            .map(|e| e.lines().next().unwrap_or_default().to_string())
            .unwrap_or_default();
        out.push_str(&format!(
            "{:<width$}  {:<9}  {:<13}  {:>5}  {}\n",
            s.name,
            s.transport,
            s.state.as_str(),
            s.tools.len(),
            error
        ));
        for skipped in s
            .skipped_tools
            .iter()
            .filter(|t| t.reason != crate::mcp::registration::FILTERED)
        {
            out.push_str(&format!(
                "{:width$}    left out: {}: {}\n",
                "", skipped.raw_name, skipped.reason
            ));
        }
        if matches!(s.state, ServerState::Failed | ServerState::Disconnected)
            && !s.stderr_tail.is_empty()
        {
            for line in s.stderr_tail.iter().rev().take(5).rev() {
                out.push_str(&format!("{:width$}    stderr: {line}\n", ""));
            }
        }
    }
    out
}

fn run_serve(cli: &Cli, args: &ServeArgs) -> Result<ExitCode, CliError> {
    let progress_interval = Duration::try_from_secs_f64(args.progress_interval)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| CliError::Input("--progress-interval must be a positive number".into()))?;
    let approval_timeout = Duration::try_from_secs_f64(args.approval_timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| CliError::Input("--approval-timeout must be a positive number".into()))?;
    if let Some(addr) = args.http
        && !addr.ip().is_loopback()
    {
        return Err(CliError::Input(format!(
            "--http {addr}: only loopback addresses (127.0.0.1, [::1]) are allowed"
        )));
    }
    // Approvals go to the MCP client (elicitation) or the non-interactive policy: in
    // stdio mode stdin is the protocol, and a terminal prompt would fight the client's UI.
    let elicitation = Arc::new(ElicitationRouter::new(approval_timeout));
    // stdio: fd 1 is the protocol; move it out of reach of everything that loads next.
    let protocol = match args.http {
        Some(_) => None,
        None => Some(
            super::protocol_stdout::claim().map_err(|source| CliError::Io {
                what: "moving the MCP stream off fd 1".into(),
                source,
            })?,
        ),
    };
    // Signals stop serving (below); claimed before any MCP server starts.
    let _signals = crate::mcp::signals::claim(crate::mcp::signals::Handled::InterruptAndTerminate);
    // Serve at once: the MCP servers the selection needs connect in the background and
    // their tools appear (tools/list_changed) when they are ready.
    let host = Toolhost::start(&StartOptions {
        approval_surfaces: Surfaces::callback(elicitation.clone()),
        mcp_scope: McpScope::Background(ToolsetSelection {
            enabled: args.selection.toolsets.clone(),
            disabled: args.selection.disable.clone(),
        }),
        ..cli.start_options()
    })?;
    super::warn_missing_bundle(&host);
    let selection = args.selection.selection(&host)?;
    for name in unknown_toolsets(&host.registry, &host.toolsets, &selection)
        .into_iter()
        .filter(|name| !host.mcp.owns_toolset(name))
    {
        eprintln!("toolhost: unknown toolset {name:?} (ignored)");
    }
    let core = Arc::new(ServerCore {
        dispatcher: host.dispatcher.clone(),
        toolsets: host.toolsets.clone(),
        selection,
        elicitation,
        progress_interval,
        mcp_ready: host.mcp.readiness(),
    });
    let runtime =
        tools_core::bridge::shared_runtime().map_err(|e| CliError::Input(e.to_string()))?;
    let stop = CancellationToken::new();
    let outcome = runtime.block_on(async {
        let signals = spawn_signal_watch(stop.clone());
        let outcome = match args.http {
            Some(addr) => {
                match serve_http_with_origins(core, addr, stop.clone(), &args.allow_origins).await {
                    Ok(server) => {
                        // The address line is the one thing on stdout: scripts read the port.
                        println!("{}", server.url());
                        eprintln!("toolhost: serving MCP on {} (Ctrl-C to stop)", server.url());
                        server.wait().await;
                        Ok(())
                    }
                    Err(err) => Err(CliError::Input(err.to_string())),
                }
            }
            None => serve_claimed_stdio(core, stop.clone(), protocol).await,
        };
        signals.abort();
        outcome
    });
    host.shutdown();
    outcome.map(|()| ExitCode::SUCCESS)
}

/// Serve MCP on stdin and the claimed protocol stdout; the last replies are written
/// before this returns.
async fn serve_claimed_stdio(
    core: Arc<ServerCore>,
    stop: CancellationToken,
    protocol: Option<super::protocol_stdout::ProtocolStdout>,
) -> Result<(), CliError> {
    let Some(protocol) = protocol else {
        return Err(CliError::Input("stdio was not claimed".into()));
    };
    let streams = protocol.into_streams().map_err(|source| CliError::Io {
        what: "opening the MCP stream".into(),
        source,
    })?;
    let outcome = serve_stdio_on(core, stop, streams.read, streams.write)
        .await
        .map_err(|e| CliError::Input(e.to_string()));
    if let Some(pump) = streams.pump {
        // The writer was dropped with the service: the thread ends once it has written.
        let _ = tokio::task::spawn_blocking(move || pump.join()).await;
    }
    outcome
}

/// Cancel `stop` on Ctrl-C or SIGTERM.
fn spawn_signal_watch(stop: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let mut term = match signal(SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = tokio::signal::ctrl_c().await;
                    stop.cancel();
                    return;
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_and_json() {
        let mut ok = ServerStatus::inert("time", "stdio", ServerState::Connected, None);
        ok.tools = vec!["mcp__time__a".into(), "mcp__time__b".into()];
        let skipped = |name: &str, reason: &str| crate::mcp::registration::SkippedTool {
            raw_name: name.into(),
            reason: reason.into(),
        };
        ok.skipped_tools = vec![
            skipped("mine", crate::mcp::registration::FILTERED),
            skipped("research", crate::mcp::task_support::REASON),
        ];
        let mut bad = ServerStatus::inert(
            "broken",
            "stdio",
            ServerState::Failed,
            Some("MCP server 'broken': initialize failed\nmore".into()),
        );
        bad.stderr_tail = vec!["Traceback".into(), "ImportError: x".into()];
        let table = status_table(&[bad, ok.clone()]);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("NAME  "), "{table}");
        assert!(
            lines[1].contains("failed") && lines[1].ends_with("initialize failed"),
            "{table}"
        );
        assert!(
            lines[3].trim_start().starts_with("stderr: ImportError"),
            "{table}"
        );
        assert!(
            lines[4].contains("connected") && lines[4].contains("    2  "),
            "{table}"
        );
        assert_eq!(lines.len(), 6, "only the unfiltered skip is shown: {table}");
        assert!(
            lines[5]
                .trim_start()
                .starts_with("left out: research: the server requires calling it as an MCP task"),
            "{table}"
        );
        let value = status_json(&ok);
        assert_eq!(value["status"], "connected");
        assert_eq!(value["tool_count"], 2);
        assert!(value.get("state").is_none());
    }
}
