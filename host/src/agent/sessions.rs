//! Sessions in SQLite (`<home>/state/sessions.db`): one row per session (source, model,
//! title, parent, timestamps) and one per message (the exact chat message as JSON, its
//! text for search, tool name and call id), with an FTS5 index over the text.
//!
//! WAL mode, so another process can read (`session_search`, `/sessions`) while one
//! writes; a busy timeout instead of failing on a lock. Messages are appended in one
//! transaction per batch (an assistant message, then its tool results); the agent loop
//! defers its appends to a writer thread (`session_writer`), which commits each one as
//! soon as it is queued, and flushes at the end of each turn: a killed process loses at
//! most what was queued in the last moment (the call in flight), and a finished turn is
//! on disk before its answer is shown. [`SessionStore::load`] closes tool calls left
//! without results so a resumed conversation is valid for the API.
//!
//! Only the messages are written in those commits, so the last one of a turn is short:
//! the full-text index follows the table (`session_fts`: a search catches it up first)
//! and WAL checkpoints leave the commits (`session_wal`); the writer thread does both
//! when nothing is queued.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use super::message::{Message, Role};
use super::session_db::{Db, Inner};
use super::session_fts;
use super::session_wal;
use super::session_writer::{self, Sink};
use tools_core::stable_hash::fnv1a;

/// Sources hidden from browsing and search (children of `delegate_task`).
pub const HIDDEN_SOURCES: [&str; 2] = ["subagent", "tool"];

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The database could not be opened or used.
    #[error("session database {path}: {source}", path = .path.display())]
    Db {
        /// The database file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },
    /// The directory could not be created.
    #[error("cannot create {path}: {source}", path = .path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No such session.
    #[error("no session {0:?}")]
    NotFound(String),
}

/// A session's row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SessionInfo {
    /// Id.
    pub id: String,
    /// `cli`, `chat`, `subagent`, ...
    pub source: String,
    /// Model name.
    pub model: Option<String>,
    /// Title (the start of the first user message).
    pub title: Option<String>,
    /// The session that spawned this one.
    pub parent_session_id: Option<String>,
    /// Unix seconds.
    pub started_at: f64,
    /// Unix seconds of the last message.
    pub last_active: f64,
    /// Messages stored.
    pub message_count: i64,
    /// The start of the first user message.
    pub preview: String,
}

/// A stored message, as `session_search` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredMessage {
    /// Row id (stable; used as `around_message_id`).
    pub id: i64,
    /// Role.
    pub role: String,
    /// Text.
    pub content: String,
    /// Tool name of a tool message.
    pub tool_name: Option<String>,
    /// Tool calls of an assistant message (JSON).
    pub tool_calls: Option<Value>,
    /// Call id of a tool message.
    pub tool_call_id: Option<String>,
    /// Unix seconds.
    pub timestamp: f64,
}

/// One full-text hit.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchHit {
    /// The matching message.
    pub message_id: i64,
    /// Its session.
    pub session_id: String,
    /// Its role.
    pub role: String,
    /// FTS5 snippet with `>>>`/`<<<` around matches.
    pub snippet: String,
}

/// The session database.
#[derive(Debug)]
pub struct SessionStore {
    inner: Arc<Inner>,
    /// The deferred-append writer, started on the first [`SessionStore::append_deferred`].
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for SessionStore {
    fn drop(&mut self) {
        self.inner.pending.close();
        let writer = self
            .writer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(writer) = writer {
            // The writer writes what is queued, then ends; a panic there was logged.
            let _ = writer.join();
        }
    }
}

/// Now, in Unix seconds.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A new session id: `YYYYMMDD_HHMMSS_<6 hex>` (UTC).
pub fn new_session_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let secs = (nanos / 1_000_000_000) as i64;
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    let salt = fnv1a(format!("{nanos}:{}", std::process::id()).bytes());
    format!(
        "{y:04}{m:02}{d:02}_{:02}{:02}{:02}_{:06x}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        salt & 0xff_ffff
    )
}

/// Gregorian date of a day count since 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

impl SessionStore {
    /// Open (creating) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        Self::open_checkpointing_at(path, session_wal::THRESHOLD)
    }

    /// Open the database at `path`, checkpointing its WAL past `threshold` bytes.
    pub(crate) fn open_checkpointing_at(path: &Path, threshold: u64) -> Result<Self, SessionError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| SessionError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let db = |source| SessionError::Db {
            path: path.to_path_buf(),
            source,
        };
        let inner = Inner::open(path, threshold).map_err(db)?;
        Ok(SessionStore {
            inner: Arc::new(inner),
            writer: Mutex::new(None),
        })
    }

    /// The database under `state_dir` (`sessions.db`).
    pub fn open_in(state_dir: &Path) -> Result<Self, SessionError> {
        Self::open(&state_dir.join("sessions.db"))
    }

    fn err(&self, source: rusqlite::Error) -> SessionError {
        SessionError::Db {
            path: self.inner.path.clone(),
            source,
        }
    }

    pub(super) fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, SessionError> {
        self.with_db(|db| f(&mut db.conn))
    }

    fn with_db<T>(
        &self,
        f: impl FnOnce(&mut Db) -> rusqlite::Result<T>,
    ) -> Result<T, SessionError> {
        let mut db = self.inner.lock();
        let stored = db.stored;
        // Deferred appends first, so every read sees them (module docs of
        // `session_writer`).
        let done = self
            .inner
            .write_queued(&mut db)
            .and_then(|()| f(&mut db))
            .map_err(|e| self.err(e));
        if db.stored != stored {
            drop(db);
            // Written here, not by the writer thread: its upkeep may be due.
            self.inner.pending.poke();
        }
        done
    }

    /// Start the writer thread unless it runs.
    fn start_writer(&self) {
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        if writer.is_none() {
            match session_writer::spawn(Arc::clone(&self.inner)) {
                Ok(handle) => *writer = Some(handle),
                // No thread: the next flush or read writes the queue itself.
                Err(err) => tracing::warn!(%err, "no session writer thread"),
            }
        }
    }

    /// Queue `messages` for `session_id` and return at once: a writer thread commits
    /// them while the caller goes on (the agent loop, while it waits for the model).
    /// Reads and [`SessionStore::flush`] see them; a failed write is reported by the
    /// next [`SessionStore::flush`].
    pub fn append_deferred(&self, session_id: &str, messages: Vec<Message>) {
        if messages.is_empty() {
            return;
        }
        self.inner.pending.push((session_id.to_string(), messages));
        self.start_writer();
    }

    /// Write every deferred append now; the first deferred write that failed since the
    /// last flush is returned.
    pub fn flush(&self) -> Result<(), SessionError> {
        self.with(|_| Ok(()))?;
        match self.inner.pending.take_failure() {
            Some(err) => Err(self.err(err)),
            None => Ok(()),
        }
    }

    /// Create a session (no-op when it exists).
    pub fn create(
        &self,
        id: &str,
        source: &str,
        model: Option<&str>,
        parent: Option<&str>,
    ) -> Result<(), SessionError> {
        let at = now();
        self.with(|c| {
            c.execute(
                "INSERT OR IGNORE INTO sessions (id, source, model, parent_session_id, started_at, last_active)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![id, source, model, parent, at],
            )
            .map(drop)
        })
    }

    /// Append `messages` to `session_id` in one transaction.
    pub fn append(&self, session_id: &str, messages: &[Message]) -> Result<(), SessionError> {
        if messages.is_empty() {
            return Ok(());
        }
        self.with_db(|db| db.insert([(session_id, messages)]))?;
        // The writer thread indexes and checkpoints behind these writes too.
        self.start_writer();
        Ok(())
    }

    /// The session's messages, ready to send again: tool calls that never got a
    /// result (the process died mid-batch) are answered as interrupted.
    pub fn load(&self, session_id: &str) -> Result<Vec<Message>, SessionError> {
        if self.get(session_id)?.is_none() {
            return Err(SessionError::NotFound(session_id.to_string()));
        }
        let raw: Vec<String> = self.with(|c| {
            let mut q =
                c.prepare_cached("SELECT message FROM messages WHERE session_id = ?1 ORDER BY id")?;
            q.query_map([session_id], |r| r.get(0))?.collect()
        })?;
        let messages: Vec<Message> = raw
            .iter()
            .filter_map(|text| serde_json::from_str(text).ok())
            .collect();
        Ok(close_open_calls(messages))
    }

    /// One session's row.
    pub fn get(&self, id: &str) -> Result<Option<SessionInfo>, SessionError> {
        self.with(|c| {
            c.query_row(
                &format!("{SESSION_SELECT} WHERE s.id = ?1"),
                [id],
                session_row,
            )
            .optional()
        })
    }

    /// The most recently active sessions (hidden sources left out unless asked).
    pub fn list(
        &self,
        limit: usize,
        include_hidden: bool,
    ) -> Result<Vec<SessionInfo>, SessionError> {
        let filter = if include_hidden {
            String::new()
        } else {
            format!("WHERE s.source NOT IN ({})", quoted(&HIDDEN_SOURCES))
        };
        self.with(|c| {
            let mut q = c.prepare(&format!(
                "{SESSION_SELECT} {filter} ORDER BY s.last_active DESC LIMIT ?1"
            ))?;
            q.query_map([limit as i64], session_row)?.collect()
        })
    }

    /// Full-text search (FTS5 syntax), best first, over messages of `roles` in visible
    /// sessions; at most `limit` rows.
    pub fn search(
        &self,
        query: &str,
        roles: &[String],
        limit: usize,
    ) -> Result<Vec<SearchHit>, SessionError> {
        let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
        let sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    snippet(messages_fts, 0, '>>>', '<<<', '...', 24)
             FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid
             JOIN sessions s ON s.id = m.session_id
             WHERE messages_fts MATCH ?1 AND m.role IN ({}) AND s.source NOT IN ({})
             ORDER BY bm25(messages_fts) LIMIT ?2",
            quoted(&roles),
            quoted(&HIDDEN_SOURCES)
        );
        self.with_db(|db| {
            // The index follows the table: bring it up to date first (`session_fts`).
            db.indexed = session_fts::catch_up(&mut db.conn, None)?.indexed;
            let mut q = db.conn.prepare(&sql)?;
            q.query_map(params![query, limit as i64], |r| {
                Ok(SearchHit {
                    message_id: r.get(0)?,
                    session_id: r.get(1)?,
                    role: r.get(2)?,
                    snippet: r.get(3)?,
                })
            })?
            .collect()
        })
    }

    /// Every message of a session as stored.
    pub fn stored(&self, session_id: &str) -> Result<Vec<StoredMessage>, SessionError> {
        self.with(|c| {
            let mut q = c.prepare_cached(
                "SELECT id, role, content, tool_name, tool_calls, tool_call_id, created_at
                 FROM messages WHERE session_id = ?1 ORDER BY id",
            )?;
            q.query_map([session_id], |r| {
                let calls: Option<String> = r.get(4)?;
                Ok(StoredMessage {
                    id: r.get(0)?,
                    role: r.get(1)?,
                    content: r.get(2)?,
                    tool_name: r.get(3)?,
                    tool_calls: calls.and_then(|c| serde_json::from_str(&c).ok()),
                    tool_call_id: r.get(5)?,
                    timestamp: r.get(6)?,
                })
            })?
            .collect()
        })
    }
}

const SESSION_SELECT: &str = "SELECT s.id, s.source, s.model, s.title, s.parent_session_id,
    s.started_at, s.last_active,
    (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id),
    COALESCE((SELECT substr(m.content, 1, 120) FROM messages m
              WHERE m.session_id = s.id AND m.role = 'user' ORDER BY m.id LIMIT 1), '')
    FROM sessions s";

fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        id: r.get(0)?,
        source: r.get(1)?,
        model: r.get(2)?,
        title: r.get(3)?,
        parent_session_id: r.get(4)?,
        started_at: r.get(5)?,
        last_active: r.get(6)?,
        message_count: r.get(7)?,
        preview: r.get(8)?,
    })
}

/// `'a','b'` for an SQL `IN` list of known-safe words (quotes doubled anyway).
fn quoted(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

/// Answer tool calls left without a result, so the conversation is valid again.
fn close_open_calls(messages: Vec<Message>) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages.len());
    let mut open: Vec<(String, String)> = Vec::new();
    let flush = |open: &mut Vec<(String, String)>, out: &mut Vec<Message>| {
        for (id, name) in open.drain(..) {
            out.push(Message::tool(
                id,
                name,
                r#"{"error":"Tool execution was interrupted: toolhost stopped before this call finished. Check its effects before retrying."}"#,
            ));
        }
    };
    for message in messages {
        match message.role {
            Role::Tool => {
                if let Some(id) = &message.tool_call_id {
                    open.retain(|(open_id, _)| open_id != id);
                }
            }
            _ => flush(&mut open, &mut out),
        }
        if message.role == Role::Assistant {
            open = message
                .tool_calls
                .iter()
                .map(|c| (c.id.clone(), c.function.name.clone()))
                .collect();
        }
        out.push(message);
    }
    flush(&mut open, &mut out);
    out
}

#[cfg(test)]
#[path = "sessions_tests.rs"]
mod tests;
