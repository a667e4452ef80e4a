//! Ending every plugin process when the host exits (`call`, `dispatch`, `run`,
//! `mcp serve`, ...): each is asked to exit and given a bounded grace period
//! ([`ProcessPlugin::shutdown`]), all at once, so that their exit handlers (`atexit`,
//! Hermes' `on_session_finalize` hooks) run — an observability plugin exports what it
//! buffered — without a hung plugin holding the host for more than the grace periods.

use std::time::Duration;

use super::ProcessPlugin;
use crate::plugins::PluginSet;

/// How long a plugin process may take to exit after its input closes, and again after
/// SIGTERM, before it is killed.
pub const EXIT_GRACE: Duration = Duration::from_secs(3);

/// Ask every running plugin process of `plugins` to exit, and wait for them (at most
/// twice [`EXIT_GRACE`] in all). Idempotent.
pub fn stop_all(plugins: &PluginSet) {
    let processes: Vec<_> = plugins
        .records()
        .into_iter()
        .filter_map(|record| record.runtime.and_then(|r| r.process().cloned()))
        .filter(|process| process.pid().is_some())
        .collect();
    std::thread::scope(|scope| {
        for process in &processes {
            scope.spawn(|| ProcessPlugin::shutdown(process, EXIT_GRACE));
        }
    });
}
