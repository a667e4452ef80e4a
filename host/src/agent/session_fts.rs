//! The full-text index of session messages (`messages_fts`, FTS5), kept out of the
//! commits that store the messages.
//!
//! Indexing a message in the transaction that stores it made every commit write many
//! FTS5 pages (a new segment, merges): a one-message commit cost about four times as
//! much with it as without, and the last commit of a turn is on the turn's critical
//! path (docs/hermes/agent-loop.md, "Sessions"). So the index follows the table instead:
//! `messages_fts_progress` holds the id of the last message indexed, and
//! [`catch_up`] indexes the messages after it, in id order, in a transaction of its own.
//! The session writer thread catches up off the critical path; every full-text read
//! catches up first, so a search sees every message stored before it; opening the
//! database catches up what a crash between the two left behind.
//!
//! Catching up reads the progress and moves it in one `BEGIN IMMEDIATE` transaction, so
//! two connections (two processes) never index the same message twice.
//!
//! Databases written before this design indexed every message through an
//! `AFTER INSERT` trigger named `messages_fts_insert`: [`prepare`] drops it and starts
//! the progress at the last message (all of them were indexed). The name stays taken by
//! an inert trigger on the progress table, because an older toolhost opening the same
//! file re-creates `messages_fts_insert` when it is missing, and would then index every
//! message a second time.

use rusqlite::{Connection, TransactionBehavior, params};

/// Messages indexed in one transaction by the writer thread (a search catches up all).
pub(super) const CHUNK: i64 = 128;

/// Schema of the index and its progress.
pub(super) const SCHEMA: &str = "
CREATE VIRTUAL TABLE IF NOT EXISTS messages_fts
    USING fts5(content, content='messages', content_rowid='id');
CREATE TABLE IF NOT EXISTS messages_fts_progress (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    indexed_up_to INTEGER NOT NULL
);
";

/// The inert trigger holding the old trigger's name (module docs).
const NAME_HOLDER: &str = "CREATE TRIGGER messages_fts_insert AFTER DELETE ON messages_fts_progress
BEGIN SELECT 1; END";

/// Where the index stands after a catch-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Progress {
    /// The last message id indexed.
    pub indexed: i64,
    /// False when messages are left (the catch-up was limited).
    pub done: bool,
}

/// Migrate a database whose index was kept by the old trigger, then catch the index up
/// (a process killed between storing messages and indexing them). Returns where the
/// index stands: every message is indexed.
pub(super) fn prepare(conn: &mut Connection) -> rusqlite::Result<Progress> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let started: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM messages_fts_progress)",
        [],
        |r| r.get(0),
    )?;
    if !started {
        // New, or indexed by the old trigger up to its last message.
        tx.execute_batch("DROP TRIGGER IF EXISTS messages_fts_insert;")?;
        tx.execute_batch(NAME_HOLDER)?;
        tx.execute(
            "INSERT INTO messages_fts_progress (id, indexed_up_to)
             SELECT 0, COALESCE(MAX(id), 0) FROM messages",
            [],
        )?;
    }
    tx.commit()?;
    catch_up(conn, None)
}

/// Index the messages stored after the last one indexed, at most `limit` of them.
pub(super) fn catch_up(conn: &mut Connection, limit: Option<i64>) -> rusqlite::Result<Progress> {
    // A cheap read first: most calls find nothing to do and need no write lock.
    let (indexed, last) = positions(conn)?;
    if last <= indexed {
        return Ok(Progress {
            indexed,
            done: true,
        });
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again under the write lock: another connection may have indexed meanwhile.
    let (indexed, last) = positions(&tx)?;
    let limit = limit.unwrap_or(i64::MAX);
    let upto: i64 = tx.query_row(
        "SELECT COALESCE(MAX(id), ?1) FROM
             (SELECT id FROM messages WHERE id > ?1 ORDER BY id LIMIT ?2)",
        params![indexed, limit],
        |r| r.get(0),
    )?;
    if upto > indexed {
        tx.prepare_cached(
            "INSERT INTO messages_fts (rowid, content)
             SELECT id, content FROM messages WHERE id > ?1 AND id <= ?2",
        )?
        .execute(params![indexed, upto])?;
        tx.prepare_cached("UPDATE messages_fts_progress SET indexed_up_to = ?1 WHERE id = 0")?
            .execute([upto])?;
    }
    tx.commit()?;
    Ok(Progress {
        indexed: upto,
        done: upto >= last,
    })
}

/// The last message indexed and the last message stored.
fn positions(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.prepare_cached(
        "SELECT (SELECT indexed_up_to FROM messages_fts_progress WHERE id = 0),
                (SELECT COALESCE(MAX(id), 0) FROM messages)",
    )?
    .query_row([], |r| {
        Ok((r.get::<_, Option<i64>>(0)?.unwrap_or(0), r.get(1)?))
    })
}

#[cfg(test)]
#[path = "session_fts_tests.rs"]
mod tests;
