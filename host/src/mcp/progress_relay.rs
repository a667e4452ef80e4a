//! Progress of proxied MCP calls, passed through to the client of `toolhost mcp serve`.
//!
//! When `mcp serve` re-serves an upstream server's tool and its client asked for
//! progress, the upstream server's own `notifications/progress` (progress, total,
//! message) should reach that client instead of toolhost's generic heartbeat. The two
//! sides meet here, process-wide, by the call's `tool_call_id`:
//! - the serving side [`listen`]s on the call's id for as long as the call runs;
//! - the MCP client, calling upstream for that id, asks for an [`upstream_token`] (only
//!   when someone listens), sends it as the upstream request's `progressToken`, and its
//!   handler [`deliver`]s every upstream notification carrying that token.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

/// One progress report.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with every report).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

/// Receives the progress of one call.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

static LISTENERS: LazyLock<Mutex<HashMap<String, ProgressSink>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static TOKENS: LazyLock<Mutex<HashMap<String, String>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
static NEXT: AtomicU64 = AtomicU64::new(1);

fn listeners() -> std::sync::MutexGuard<'static, HashMap<String, ProgressSink>> {
    LISTENERS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn tokens() -> std::sync::MutexGuard<'static, HashMap<String, String>> {
    TOKENS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Stops listening when dropped.
#[derive(Debug)]
pub struct ListenGuard {
    tool_call_id: String,
}

impl Drop for ListenGuard {
    fn drop(&mut self) {
        listeners().remove(&self.tool_call_id);
    }
}

/// Send the upstream progress of call `tool_call_id` to `sink` until the guard drops.
pub fn listen(tool_call_id: &str, sink: ProgressSink) -> ListenGuard {
    listeners().insert(tool_call_id.to_string(), sink);
    ListenGuard {
        tool_call_id: tool_call_id.to_string(),
    }
}

/// An upstream progress token, valid until dropped.
#[derive(Debug)]
pub struct UpstreamToken {
    token: String,
}

impl UpstreamToken {
    /// The token to send upstream.
    pub fn as_str(&self) -> &str {
        &self.token
    }
}

impl Drop for UpstreamToken {
    fn drop(&mut self) {
        tokens().remove(&self.token);
    }
}

/// A fresh progress token for an upstream call made for `tool_call_id`, when someone
/// listens to that call's progress.
pub fn upstream_token(tool_call_id: &str) -> Option<UpstreamToken> {
    if tool_call_id.is_empty() || !listeners().contains_key(tool_call_id) {
        return None;
    }
    let token = format!(
        "toolhost-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    tokens().insert(token.clone(), tool_call_id.to_string());
    Some(UpstreamToken { token })
}

/// An upstream server reported `progress` for `token`: pass it on (no-op for tokens
/// nobody handed out, or whose call ended).
pub fn deliver(token: &str, progress: Progress) {
    let Some(call) = tokens().get(token).cloned() else {
        return;
    };
    let sink = listeners().get(&call).cloned();
    if let Some(sink) = sink {
        sink(progress);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(n: f64) -> Progress {
        Progress {
            progress: n,
            total: Some(10.0),
            message: Some(format!("step {n}")),
        }
    }

    #[test]
    fn progress_reaches_the_listener_of_its_call_only_while_both_live() {
        let got = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&got);
        assert!(
            upstream_token("relay-test-call").is_none(),
            "nobody listens yet"
        );
        let guard = listen(
            "relay-test-call",
            Arc::new(move |p| seen.lock().unwrap().push(p)),
        );
        let token = upstream_token("relay-test-call").unwrap();
        deliver(token.as_str(), report(1.0));
        deliver("unknown-token", report(2.0));
        let name = token.as_str().to_string();
        drop(token);
        deliver(&name, report(3.0));
        assert_eq!(*got.lock().unwrap(), vec![report(1.0)]);
        drop(guard);
        assert!(upstream_token("relay-test-call").is_none());
    }
}
