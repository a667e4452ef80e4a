//! Checkpoints of the session database's write-ahead log, kept off the commits.
//!
//! By default SQLite checkpoints from inside a commit once the log passes 1000 pages: the
//! commit that crosses the line copies the log into the database and syncs it, a few
//! milliseconds, whichever thread made it — the end of a turn included. The store turns
//! that off (`wal_autocheckpoint=0`) and the session writer thread checkpoints instead,
//! when nothing is queued, once the log file has grown past a threshold ([`THRESHOLD`]).
//! The checkpoint is `PASSIVE` and runs on a connection of its own, so commits go on
//! while it copies; it never waits for readers (another process reading keeps the frames
//! it reads, which a later checkpoint copies).
//!
//! The log's size is read from its file. SQLite reuses the file from its start after a
//! complete checkpoint, so `journal_size_limit` (a quarter of the threshold) makes the
//! first commit after that cut it back: the file is past the threshold only when that
//! much has been written since. So the log stays bounded, as with SQLite's own
//! checkpoints.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rusqlite::Connection;

/// Log size that starts a checkpoint: SQLite's own default (1000 pages of 4 KiB).
pub(super) const THRESHOLD: u64 = 4 * 1024 * 1024;

/// Checkpoints for one database file.
#[derive(Debug)]
pub(super) struct Checkpointer {
    db: PathBuf,
    wal: PathBuf,
    threshold: u64,
    /// The checkpointing connection, opened on first use (writer thread only).
    conn: Mutex<Option<Connection>>,
}

/// What a checkpoint did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Checkpointed {
    /// Frames in the log.
    pub log: i64,
    /// Frames copied into the database.
    pub copied: i64,
}

impl Checkpointer {
    /// Checkpoints of `db` once its log passes `threshold` bytes.
    pub(super) fn new(db: &Path, threshold: u64) -> Self {
        let mut wal = db.as_os_str().to_owned();
        wal.push("-wal");
        Checkpointer {
            db: db.to_path_buf(),
            wal: PathBuf::from(wal),
            threshold,
            conn: Mutex::new(None),
        }
    }

    /// Set up the store's own connection: no checkpoints in its commits, and the log cut
    /// back after it restarts.
    pub(super) fn configure(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        let limit = i64::try_from(self.threshold / 4).unwrap_or(i64::MAX);
        conn.pragma_update_and_check(None, "journal_size_limit", limit, |_| Ok(()))
    }

    /// The log file's size (0 when there is none).
    pub(super) fn log_len(&self) -> u64 {
        std::fs::metadata(&self.wal).map_or(0, |m| m.len())
    }

    /// Checkpoint when the log is past the threshold; `None` when it is not.
    pub(super) fn run_if_large(&self) -> rusqlite::Result<Option<Checkpointed>> {
        if self.log_len() < self.threshold {
            return Ok(None);
        }
        let mut slot = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let conn = match slot.take() {
            Some(conn) => conn,
            None => {
                let conn = Connection::open(&self.db)?;
                conn.busy_timeout(std::time::Duration::from_secs(10))?;
                conn
            }
        };
        let done = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok(Checkpointed {
                log: r.get(1)?,
                copied: r.get(2)?,
            })
        });
        *slot = Some(conn);
        done.map(Some)
    }
}

#[cfg(test)]
#[path = "session_wal_tests.rs"]
mod tests;
