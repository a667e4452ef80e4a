//! SIGINT/SIGTERM while MCP servers run: no server process is left behind.
//!
//! Stdio servers run in their own process groups (`process.rs`), so a signal that ends
//! toolhost does not reach them: before this module, a `toolhost tools` interrupted
//! while a server hung in `initialize` left that server running, orphaned. [`install`]
//! runs before the first server starts (discovery calls it) and watches both signals
//! on the MCP runtime for the rest of the process:
//!
//! - when a command handles the signal itself ([`claim`]: `mcp serve`, `cron daemon`,
//!   and every Ctrl-C that cancels a running call), the watcher leaves it alone — that
//!   command stops its work and shuts the MCP servers down on its way out;
//! - otherwise it stops every server process group at once and exits the way the
//!   default action would have (status 128 + the signal number).
//!
//! See docs/mcp.md ("Start-up and stalls").

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Which signals a [`Claim`] handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handled {
    /// SIGINT (Ctrl-C) only.
    Interrupt,
    /// SIGINT and SIGTERM.
    InterruptAndTerminate,
}

static INTERRUPT_CLAIMS: AtomicUsize = AtomicUsize::new(0);
static TERMINATE_CLAIMS: AtomicUsize = AtomicUsize::new(0);

/// How long server groups get between SIGTERM and SIGKILL when toolhost exits on a
/// signal.
pub const EXIT_GRACE: Duration = Duration::from_millis(500);

/// While alive, the signals of `handled` are the caller's to handle.
#[derive(Debug)]
pub struct Claim(Handled);

/// Claim `handled` for the life of the returned guard.
pub fn claim(handled: Handled) -> Claim {
    INTERRUPT_CLAIMS.fetch_add(1, Ordering::AcqRel);
    if handled == Handled::InterruptAndTerminate {
        TERMINATE_CLAIMS.fetch_add(1, Ordering::AcqRel);
    }
    Claim(handled)
}

impl Drop for Claim {
    fn drop(&mut self) {
        INTERRUPT_CLAIMS.fetch_sub(1, Ordering::AcqRel);
        if self.0 == Handled::InterruptAndTerminate {
            TERMINATE_CLAIMS.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Watch SIGINT/SIGTERM from now on (idempotent; a no-op off Unix). Returns once the
/// handlers are in place, so a server started after it is covered.
pub fn install(runtime: &tokio::runtime::Handle) {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        #[cfg(unix)]
        {
            // Registering inside the runtime's context makes the handlers active now,
            // before this returns, not when the task first runs.
            let _entered = runtime.enter();
            use tokio::signal::unix::{SignalKind, signal};
            match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                (Ok(interrupt), Ok(terminate)) => {
                    runtime.spawn(watch(interrupt, terminate));
                }
                (Err(err), _) | (_, Err(err)) => {
                    tracing::warn!(%err, "cannot watch SIGINT/SIGTERM; an interrupted toolhost may leave MCP servers running");
                }
            }
        }
        #[cfg(not(unix))]
        let _ = runtime;
    });
}

#[cfg(unix)]
async fn watch(
    mut interrupt: tokio::signal::unix::Signal,
    mut terminate: tokio::signal::unix::Signal,
) {
    loop {
        let (claims, number) = tokio::select! {
            _ = interrupt.recv() => (&INTERRUPT_CLAIMS, 2),
            _ = terminate.recv() => (&TERMINATE_CLAIMS, 15),
        };
        if claims.load(Ordering::Acquire) > 0 {
            continue;
        }
        tracing::debug!(signal = number, "stopping the MCP servers and exiting");
        tokio::task::spawn_blocking(|| super::process::stop_every_group_now(EXIT_GRACE))
            .await
            .ok();
        std::process::exit(128 + number);
    }
}
