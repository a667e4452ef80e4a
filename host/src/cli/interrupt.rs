//! Ctrl-C in the commands that run tools: it cancels the running work (through its
//! cancellation token) instead of killing toolhost, so tools stop cleanly and every
//! result is still printed.

use tokio_util::sync::CancellationToken;

/// Wait for Ctrl-C and fire `cancel`. `false` when Ctrl-C cannot be watched.
pub async fn cancel_on_ctrl_c(cancel: CancellationToken) -> bool {
    // Ctrl-C is ours while we wait: MCP's exit-on-signal watcher leaves it alone.
    let _claim = crate::mcp::signals::claim(crate::mcp::signals::Handled::Interrupt);
    if tokio::signal::ctrl_c().await.is_err() {
        return false;
    }
    cancel.cancel();
    true
}
