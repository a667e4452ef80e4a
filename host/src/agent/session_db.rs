//! The session store's connection: how messages are written, and the upkeep its writer
//! thread does behind the writes (`session_writer`): indexing the stored messages
//! (`session_fts`) and checkpointing the WAL (`session_wal`), both out of the commits
//! that store messages, so the last commit of a turn stays short.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rusqlite::{Connection, params};

use super::message::{Message, Role};
use super::session_fts;
use super::session_wal::Checkpointer;
use super::session_writer::{Append, Pending, Sink};
use super::sessions::now;

/// The connection and the writer thread's queue, shared by the store and that thread.
#[derive(Debug)]
pub(super) struct Inner {
    /// The database file.
    pub(super) path: PathBuf,
    db: Mutex<Db>,
    /// Appends not yet written.
    pub(super) pending: Pending,
    checkpoints: Checkpointer,
}

/// The connection, and how far the full-text index is behind what it stored.
#[derive(Debug)]
pub(super) struct Db {
    /// The connection.
    pub(super) conn: Connection,
    /// The last message id this connection stored (or found on opening).
    pub(super) stored: i64,
    /// The last message id known to be indexed.
    pub(super) indexed: i64,
}

impl Db {
    /// Insert `appends` in one transaction.
    pub(super) fn insert<'a>(
        &mut self,
        appends: impl IntoIterator<Item = (&'a str, &'a [Message])>,
    ) -> rusqlite::Result<()> {
        let tx = self.conn.transaction()?;
        for (session_id, messages) in appends {
            insert_messages(&tx, session_id, messages)?;
        }
        tx.commit()?;
        self.stored = self.stored.max(self.conn.last_insert_rowid());
        Ok(())
    }
}

impl Sink for Inner {
    type Db = Db;
    fn db(&self) -> &Mutex<Db> {
        &self.db
    }
    fn pending(&self) -> &Pending {
        &self.pending
    }
    fn write(db: &mut Db, appends: &[Append]) -> rusqlite::Result<()> {
        db.insert(appends.iter().map(|(id, m)| (id.as_str(), m.as_slice())))
    }
    fn maintain(&self, idle: bool) {
        self.index(idle);
        if self.pending.has_appends() {
            return;
        }
        match self.checkpoints.run_if_large() {
            Ok(Some(done)) => tracing::debug!(?done, "session WAL checkpointed"),
            Ok(None) => {}
            Err(err) => tracing::warn!(%err, "could not checkpoint the session WAL"),
        }
    }
}

impl Inner {
    /// The connection, locked.
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Db> {
        self.db.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Index stored messages, [`session_fts::CHUNK`] per transaction: a full chunk
    /// behind, or with `idle` all; giving way to queued appends between chunks.
    fn index(&self, idle: bool) {
        while !self.pending.has_appends() {
            let mut db = self.lock();
            let behind = db.stored - db.indexed;
            if behind <= 0 || (!idle && behind < session_fts::CHUNK) {
                return;
            }
            match session_fts::catch_up(&mut db.conn, Some(session_fts::CHUNK)) {
                Ok(progress) => {
                    db.indexed = progress.indexed;
                    if progress.done {
                        return;
                    }
                }
                Err(err) => {
                    tracing::warn!(%err, "could not index session messages");
                    return;
                }
            }
        }
    }
}

impl Inner {
    /// Open (creating and migrating) the database at `path`, checkpointing its WAL past
    /// `threshold` bytes.
    pub(super) fn open(path: &Path, threshold: u64) -> rusqlite::Result<Self> {
        let mut conn = Connection::open(path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        let checkpoints = Checkpointer::new(path, threshold);
        checkpoints.configure(&conn)?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(session_fts::SCHEMA)?;
        let indexed = session_fts::prepare(&mut conn)?.indexed;
        Ok(Inner {
            path: path.to_path_buf(),
            db: Mutex::new(Db {
                conn,
                stored: indexed,
                indexed,
            }),
            pending: Pending::default(),
            checkpoints,
        })
    }
}

/// Insert `messages` of `session_id` and touch the session's row, inside `tx`.
fn insert_messages(
    tx: &rusqlite::Transaction<'_>,
    session_id: &str,
    messages: &[Message],
) -> rusqlite::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let at = now();
    let mut insert = tx.prepare_cached(
        "INSERT INTO messages (session_id, role, content, tool_name, tool_call_id, tool_calls, message, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for m in messages {
        let calls = (!m.tool_calls.is_empty())
            .then(|| serde_json::to_string(&m.tool_calls).unwrap_or_default());
        let raw = serde_json::to_string(m).unwrap_or_default();
        insert.execute(params![
            session_id,
            m.role.as_str(),
            m.content_text(),
            m.name,
            m.tool_call_id,
            calls,
            raw,
            at
        ])?;
    }
    if let Some(first_user) = messages.iter().find(|m| m.role == Role::User) {
        let title: String = first_user.content_text().chars().take(80).collect();
        tx.prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title IS NULL")?
            .execute(params![session_id, title.trim()])?;
    }
    tx.prepare_cached("UPDATE sessions SET last_active = ?2 WHERE id = ?1")?
        .execute(params![session_id, at])?;
    Ok(())
}

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL DEFAULT 'cli',
    model TEXT,
    title TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    last_active REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    tool_name TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    message TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, id);
";
