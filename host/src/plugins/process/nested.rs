//! Requests to a plugin made while that plugin waits for the host: a Python plugin's
//! `ctx.dispatch_tool` runs the whole dispatch pipeline, whose hooks (or the tool
//! itself) may belong to the very plugin that asked. Its process is waiting for the
//! callback's answer and serves such nested requests meanwhile; on the host side the
//! thread answering the callback holds the plugin's lock, so the channel is lent to
//! that thread here while the callback runs, and a request to the same plugin from
//! that thread borrows it instead of waiting for the lock (which would deadlock).

use std::cell::RefCell;

use super::launch::Conn;

thread_local! {
    /// Channels lent to this thread, by plugin (the `ProcessPlugin`'s address).
    static LENT: RefCell<Vec<(usize, Conn)>> = const { RefCell::new(Vec::new()) };
}

/// Lend `conn` of plugin `key` to this thread while it answers a callback.
pub fn lend(key: usize, conn: Conn) {
    LENT.with(|lent| lent.borrow_mut().push((key, conn)));
}

/// Take back the channel of plugin `key` lent to this thread, if it is still there (a
/// nested request that broke it dropped it).
pub fn take(key: usize) -> Option<Conn> {
    LENT.with(|lent| {
        let mut lent = lent.borrow_mut();
        let at = lent.iter().rposition(|(k, _)| *k == key)?;
        Some(lent.remove(at).1)
    })
}
