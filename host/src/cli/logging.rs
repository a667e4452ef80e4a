//! Logging: `tracing` to stderr (stdout carries only data). `-v` raises the level;
//! `RUST_LOG` overrides it entirely. Colour only when stderr is a terminal and
//! `NO_COLOR` is not set: a client that captures an MCP server's stderr into its log
//! file must not get escape sequences.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

/// Install the stderr subscriber.
pub fn init(verbose: u8) {
    // rmcp logs every JSON-RPC error answer (an unknown tool, a protocol-version probe
    // by a newer client) as a warning, and the ordinary end of a session (a client that
    // closes its pipe or drops its HTTP stream, a server stopped with toolhost) as an
    // error: those are the peer's business or routine teardown, not toolhost's.
    // toolhost reports the failures that matter itself.
    let default = match verbose {
        0 => "warn,rmcp=off",
        1 => "info,rmcp=warn",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second init (tests calling main twice) is harmless.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(use_colour())
        .with_target(false)
        .try_init();
}

/// True when log lines may carry ANSI colour.
fn use_colour() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stderr().is_terminal()
}
