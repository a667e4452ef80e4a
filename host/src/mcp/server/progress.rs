//! Keeping a client informed while a long call runs.
//!
//! - A call that carries a progress token gets progress: when the tool is a re-served
//!   upstream MCP tool whose server reports progress, that progress (value, total,
//!   message) is passed through (`progress_relay.rs`); otherwise a heartbeat, one
//!   `notifications/progress` per interval (the first after one interval, so quick calls
//!   send none) saying how long the tool has been running. Clients that reset their
//!   request timeout on progress keep waiting for a slow tool instead of giving up.
//!   Progress only ever increases: upstream values that arrive after heartbeats were
//!   sent are offset by the last heartbeat's value (total likewise).
//! - A call without a token may not be sent progress (the spec ties progress to a
//!   token), so its client gets a `ping` per interval instead — the one message a server
//!   may always send — which keeps the session and its transport visibly alive.

use std::time::{Duration, Instant};

use rmcp::model::{
    PingRequest, ProgressNotificationParam, ProgressToken, RequestId, ServerRequest,
};
use rmcp::service::OriginatingRequestId;
use rmcp::{Peer, RoleServer};

use crate::mcp::progress_relay::{self, ListenGuard, Progress};

/// Default interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(2);

/// Stops the heartbeat (and the relay) when dropped.
#[derive(Debug)]
pub struct Heartbeat {
    task: tokio::task::JoinHandle<()>,
    _relay: Option<ListenGuard>,
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Keep `peer` informed about call `tool_call_id` of `tool` every `interval` until the
/// returned guard is dropped: progress on `token` when the client gave one, else pings.
pub fn start(
    peer: Peer<RoleServer>,
    request: RequestId,
    token: Option<ProgressToken>,
    tool: String,
    tool_call_id: &str,
    interval: Duration,
) -> Heartbeat {
    let Some(token) = token else {
        return Heartbeat {
            task: tokio::spawn(keep_alive(peer, request, interval)),
            _relay: None,
        };
    };
    let (send, receive) = tokio::sync::mpsc::unbounded_channel::<Progress>();
    let relay = progress_relay::listen(
        tool_call_id,
        std::sync::Arc::new(move |progress| {
            let _ = send.send(progress);
        }),
    );
    Heartbeat {
        task: tokio::spawn(report(peer, token, tool, interval, receive)),
        _relay: Some(relay),
    }
}

/// Ping the client every `interval` while call `request` runs. Each ping is marked as
/// issued from that call, so over streamable HTTP it travels on the call's own response
/// stream (keeping that stream busy too).
async fn keep_alive(peer: Peer<RoleServer>, request: RequestId, interval: Duration) {
    loop {
        tokio::time::sleep(interval).await;
        let mut ping = PingRequest::default();
        ping.extensions
            .insert(OriginatingRequestId(request.clone()));
        let ping = ServerRequest::PingRequest(ping);
        match tokio::time::timeout(
            interval.max(Duration::from_secs(1)),
            peer.send_request(ping),
        )
        .await
        {
            Ok(Err(rmcp::service::ServiceError::TransportClosed)) => break,
            Ok(Err(err)) => tracing::debug!(%err, "keep-alive ping failed"),
            Ok(Ok(_)) | Err(_) => {}
        }
    }
}

/// Send heartbeats until upstream progress arrives, then pass that on.
async fn report(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    tool: String,
    interval: Duration,
    mut upstream: tokio::sync::mpsc::UnboundedReceiver<Progress>,
) {
    let started = Instant::now();
    let mut last = 0.0_f64;
    let mut offset: Option<f64> = None;
    loop {
        let param = tokio::select! {
            () = tokio::time::sleep(interval), if offset.is_none() => {
                last += 1.0;
                let mut param = ProgressNotificationParam::new(token.clone(), last);
                param.message = Some(format!("{tool}: running for {}s", started.elapsed().as_secs()));
                param
            }
            received = upstream.recv() => {
                let Some(progress) = received else { return };
                let base = *offset.get_or_insert(last);
                let mut value = base + progress.progress;
                if value <= last {
                    value = last + 0.001;
                }
                last = value;
                let mut param = ProgressNotificationParam::new(token.clone(), value);
                param.total = progress.total.map(|total| total + base);
                param.message = progress.message;
                param
            }
        };
        if peer.notify_progress(param).await.is_err() {
            break;
        }
    }
}
