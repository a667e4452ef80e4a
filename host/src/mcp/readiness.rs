//! Servers still connecting in the background (`mcp serve`), so a client's
//! `tools/list` can wait a little for them instead of missing their tools.
//!
//! `mcp serve` answers `initialize` at once and connects the MCP servers its selection
//! needs in the background (docs/mcp.md, "Start-up and stalls"). A `tools/list` waits
//! for those connections for at most [`LIST_GRACE`]; a server that takes longer (or
//! hangs) is left out of that answer, and its tools reach the client later through
//! `notifications/tools/list_changed`.

use std::time::Duration;

use tokio::sync::watch;

/// Longest a `tools/list` waits for servers still connecting.
pub const LIST_GRACE: Duration = Duration::from_secs(30);

/// How many background connections are still in progress (none when default).
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    pending: Option<watch::Receiver<usize>>,
}

/// The connecting side of a [`Readiness`].
#[derive(Debug)]
pub struct Pending(watch::Sender<usize>);

impl Readiness {
    /// A readiness with `count` connections in progress, and the handle that counts
    /// them down.
    pub fn pending(count: usize) -> (Readiness, Pending) {
        let (tx, rx) = watch::channel(count);
        (Readiness { pending: Some(rx) }, Pending(tx))
    }

    /// Wait until every connection has finished (connected or failed), at most `limit`.
    pub async fn wait(&self, limit: Duration) {
        if let Some(rx) = &self.pending {
            let mut rx = rx.clone();
            let _ = tokio::time::timeout(limit, rx.wait_for(|n| *n == 0)).await;
        }
    }
}

impl Pending {
    /// One connection finished.
    pub fn done(&self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_until_every_connection_is_done() {
        let (ready, pending) = Readiness::pending(2);
        pending.done();
        let waiter = tokio::spawn(async move { ready.wait(Duration::from_secs(3600)).await });
        pending.done();
        waiter.await.unwrap();
    }

    #[tokio::test]
    async fn the_default_is_ready() {
        Readiness::default().wait(Duration::from_secs(3600)).await;
    }
}
