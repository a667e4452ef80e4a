//! Logging: `tracing` to stderr (stdout carries only data). `-v` raises the level;
//! `RUST_LOG` overrides it entirely.

use tracing_subscriber::EnvFilter;

/// Install the stderr subscriber.
pub fn init(verbose: u8) {
    // rmcp logs every JSON-RPC error answer (an unknown tool, a protocol-version probe
    // by a newer client) as a warning: those are the peer's business, not toolhost's.
    let default = match verbose {
        0 => "warn,rmcp=error",
        1 => "info,rmcp=warn",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // A second init (tests calling main twice) is harmless.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}
