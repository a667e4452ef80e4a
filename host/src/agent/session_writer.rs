//! Session writes taken off the agent loop's critical path.
//!
//! Every message of a turn (the user's text, each assistant message, each batch of tool
//! results) used to be one SQLite transaction written before the loop went on: four
//! commits per tool-calling turn, each with its FTS5 flush, on the thread that waits for
//! the model. [`Pending`] queues those appends instead; a writer thread, started on the
//! first deferred append, commits whatever has queued up in one transaction while the
//! loop is already waiting for the model. The turn ends with a flush, so a finished turn
//! is on disk before its answer is shown (docs/hermes/agent-loop.md, "Sessions").
//!
//! Order is kept by one rule: queued appends are taken out of the queue only by a
//! thread that holds the connection's lock, and written before it lets go. Every other
//! use of the connection first writes what is queued, so a read always sees every
//! append made before it, whichever thread ends up writing it.
//!
//! The writer thread also does the store's upkeep ([`Sink::maintain`]: the full-text
//! index, WAL checkpoints), only when nothing is queued: after each write it does what
//! is overdue, and once nothing has been queued for [`IDLE`] (or the store is
//! closing) it does the rest. Upkeep works in short steps and gives way as soon as an
//! append is queued, so a flush waits at most for one step.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::message::Message;

/// How long the queue stays empty before the writer does all of its upkeep.
pub(super) const IDLE: Duration = Duration::from_millis(20);

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
    /// Something was written by another thread: the writer should look at its upkeep.
    poked: bool,
    /// Set when the store is dropped: the writer writes what is left and ends.
    closing: bool,
    /// The first failure of a write no caller was waiting for, for the next flush.
    failed: Option<rusqlite::Error>,
}

/// Why the writer woke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wake {
    /// Appends are queued, or upkeep was asked for.
    Work,
    /// Nothing was queued for [`IDLE`].
    Idle,
    /// The store is closing and the queue is empty.
    Closed,
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

    /// Wake the writer for its upkeep (something was written without it).
    pub(super) fn poke(&self) {
        self.lock().poked = true;
        self.wake.notify_one();
    }

    /// Whether appends are waiting (upkeep gives way to them).
    pub(super) fn has_appends(&self) -> bool {
        !self.lock().appends.is_empty()
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

    /// Block until there is work; with `idle`, give up after that long without any.
    fn wait(&self, idle: Option<Duration>) -> Wake {
        let deadline = idle.map(|idle| Instant::now() + idle);
        let mut queue = self.lock();
        loop {
            if !queue.appends.is_empty() || std::mem::take(&mut queue.poked) {
                return Wake::Work;
            }
            if queue.closing {
                return Wake::Closed;
            }
            queue = match deadline {
                None => self
                    .wake
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Wake::Idle;
                    }
                    self.wake
                        .wait_timeout(queue, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
            };
        }
    }
}

/// What the writer thread needs from the store: its connection, the queue, how to
/// write a batch and its upkeep.
pub(super) trait Sink: Send + Sync + 'static {
    /// The connection and what goes with it.
    type Db;
    /// The connection, locked by whoever uses it.
    fn db(&self) -> &Mutex<Self::Db>;
    /// The queue.
    fn pending(&self) -> &Pending;
    /// Write `appends` in one transaction.
    fn write(db: &mut Self::Db, appends: &[Append]) -> rusqlite::Result<()>;
    /// Upkeep, on the writer thread with nothing queued: what is overdue, or with
    /// `idle` everything. It locks the connection itself, in short steps, and stops
    /// when [`Pending::has_appends`].
    fn maintain(&self, idle: bool);

    /// Take what is queued and write it; `db` must be the locked connection.
    fn write_queued(&self, db: &mut Self::Db) -> rusqlite::Result<()> {
        let appends = self.pending().take();
        if appends.is_empty() {
            return Ok(());
        }
        Self::write(db, &appends)
    }
}

/// Start the writer thread for `sink`; it ends after [`Pending::close`], once the
/// queue is written and the upkeep done.
pub(super) fn spawn<S: Sink>(sink: Arc<S>) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("toolhost-sessions".into())
        .spawn(move || {
            // Whether something happened since the last full upkeep.
            let mut dirty = false;
            loop {
                match sink.pending().wait(dirty.then_some(IDLE)) {
                    Wake::Work => {
                        write_pending(&*sink);
                        if !sink.pending().has_appends() {
                            sink.maintain(false);
                        }
                        dirty = true;
                    }
                    Wake::Idle => {
                        sink.maintain(true);
                        dirty = sink.pending().has_appends();
                    }
                    Wake::Closed => {
                        sink.maintain(true);
                        break;
                    }
                }
            }
        })
}

/// Write whatever is queued, on the calling thread (the connection's lock is taken here).
pub(super) fn write_pending<S: Sink>(sink: &S) {
    let mut db = sink.db().lock().unwrap_or_else(PoisonError::into_inner);
    if let Err(err) = sink.write_queued(&mut db) {
        tracing::error!(%err, "could not write the session");
        sink.pending().record_failure(err);
    }
}
