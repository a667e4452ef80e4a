//! Progress notifications for long calls.
//!
//! toolhost's tools do not report fine-grained progress, so a call that carries a
//! progress token gets a heartbeat: one `notifications/progress` per interval (the first
//! after one interval, so quick calls send none) saying how long the tool has been
//! running. Clients that reset their request timeout on progress keep waiting for a slow
//! tool instead of giving up on it.

use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};

/// Default heartbeat interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);

/// Stops the heartbeat when dropped.
#[derive(Debug)]
pub struct Heartbeat {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Send progress for `tool` every `interval` until the returned guard is dropped.
pub fn start(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    tool: String,
    interval: Duration,
) -> Heartbeat {
    let started = Instant::now();
    let task = tokio::spawn(async move {
        let mut beats = 0u64;
        loop {
            tokio::time::sleep(interval).await;
            beats += 1;
            let elapsed = started.elapsed().as_secs();
            let mut param = ProgressNotificationParam::new(token.clone(), beats as f64);
            param.message = Some(format!("{tool}: running for {elapsed}s"));
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    Heartbeat { task }
}
