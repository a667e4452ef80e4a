//! Session writes taken off the agent loop's critical path.
//!
//! Every message of a turn (the user's text, each assistant message, each batch of tool
//! results) used to be one SQLite transaction written before the loop went on: four
//! commits per tool-calling turn, each with its FTS5 flush, on the thread that waits for
//! the model. [`Pending`] queues those appends instead; a writer thread, started on the
//! first deferred append, commits whatever has queued up in one transaction while the
//! loop is already waiting for the model. The turn ends with [`Pending::flush`], so a
//! finished turn is on disk before its answer is shown (docs/hermes/agent-loop.md,
//! "Sessions").
//!
//! Order is kept by one rule: queued appends are taken out of the queue only by a
//! thread that holds the connection's lock, and written before it lets go. Every other
//! use of the connection first writes what is queued, so a read always sees every
//! append made before it, whichever thread ends up writing it.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use rusqlite::Connection;

use super::message::Message;

/// One deferred append: a session id and its messages, in order.
pub(super) type Append = (String, Vec<Message>);

/// The queue of appends not yet written, and the writer thread's signals.
#[derive(Debug, Default)]
pub(super) struct Pending {
    queue: Mutex<Queue>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct Queue {
    appends: Vec<Append>,
    /// Set when the store is dropped: the writer writes what is left and ends.
    closing: bool,
    /// The first failure of a write no caller was waiting for, for the next flush.
    failed: Option<rusqlite::Error>,
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queue an append and wake the writer.
    pub(super) fn push(&self, append: Append) {
        self.lock().appends.push(append);
        self.wake.notify_one();
    }

    /// Take everything queued. Call only while holding the connection's lock.
    pub(super) fn take(&self) -> Vec<Append> {
        std::mem::take(&mut self.lock().appends)
    }

    /// A write failure no one has been told about yet (once).
    pub(super) fn take_failure(&self) -> Option<rusqlite::Error> {
        self.lock().failed.take()
    }

    fn record_failure(&self, err: rusqlite::Error) {
        let mut queue = self.lock();
        if queue.failed.is_none() {
            queue.failed = Some(err);
        }
    }

    /// Tell the writer to finish.
    pub(super) fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_one();
    }

    /// Block until something is queued; false once closing with nothing left.
    fn wait(&self) -> bool {
        let mut queue = self.lock();
        loop {
            if !queue.appends.is_empty() {
                return true;
            }
            if queue.closing {
                return false;
            }
            queue = self
                .wake
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// What the writer thread needs from the store: its connection, the queue, and how to
/// write a batch.
pub(super) trait Sink: Send + Sync + 'static {
    /// The connection.
    fn conn(&self) -> &Mutex<Connection>;
    /// The queue.
    fn pending(&self) -> &Pending;
    /// Write `appends` in one transaction.
    fn write(conn: &mut Connection, appends: &[Append]) -> rusqlite::Result<()>;

    /// Take what is queued and write it; `conn` must be the locked connection.
    fn write_queued(&self, conn: &mut Connection) -> rusqlite::Result<()> {
        let appends = self.pending().take();
        if appends.is_empty() {
            return Ok(());
        }
        Self::write(conn, &appends)
    }
}

/// Start the writer thread for `sink`; it ends after [`Pending::close`], once the
/// queue is written.
pub(super) fn spawn<S: Sink>(sink: Arc<S>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("toolhost-sessions".into())
        .spawn(move || {
            while sink.pending().wait() {
                write_pending(&*sink);
            }
        })
}

/// Write whatever is queued, on the calling thread (the connection's lock is taken here).
pub(super) fn write_pending<S: Sink>(sink: &S) {
    let mut conn = sink.conn().lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(err) = sink.write_queued(&mut conn) {
        tracing::error!(%err, "could not write the session");
        sink.pending().record_failure(err);
    }
}
