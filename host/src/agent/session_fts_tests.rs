//! Tests of `session_fts.rs`: the index follows the table, through the store, on a real
//! SQLite file.

use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::agent::message::Message;
use crate::agent::sessions::SessionStore;

/// The schema and trigger of databases written before the index left the commits.
const OLD_SCHEMA: &str = "
CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'cli', model TEXT,
    title TEXT, parent_session_id TEXT, started_at REAL NOT NULL, last_active REAL NOT NULL);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL DEFAULT '', tool_name TEXT, tool_call_id TEXT,
    tool_calls TEXT, message TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX messages_by_session ON messages(session_id, id);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
";
const OLD_TRIGGER: &str = "
CREATE TRIGGER IF NOT EXISTS messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
";

/// Insert a user message straight into the table, as another writer (or a process
/// killed before indexing) leaves it.
fn insert_raw(conn: &Connection, session: &str, text: &str) {
    let message = serde_json::to_string(&Message::user(text)).unwrap();
    conn.execute(
        "INSERT INTO messages (session_id, role, content, message, created_at)
         VALUES (?1, 'user', ?2, ?3, 0)",
        rusqlite::params![session, text, message],
    )
    .unwrap();
}

fn hits(store: &SessionStore, query: &str) -> usize {
    store.search(query, &["user".into()], 100).unwrap().len()
}

/// Index entries for `word`, read without catching up.
fn indexed(store: &SessionStore, word: &str) -> i64 {
    store
        .with(|c| {
            c.query_row(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
                [word],
                |r| r.get(0),
            )
        })
        .unwrap()
}

#[test]
fn a_database_indexed_by_the_old_trigger_opens_and_searches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    {
        let old = Connection::open(&path).unwrap();
        old.pragma_update(None, "journal_mode", "WAL").unwrap();
        old.execute_batch(OLD_SCHEMA).unwrap();
        old.execute_batch(OLD_TRIGGER).unwrap();
        old.execute(
            "INSERT INTO sessions (id, started_at, last_active) VALUES ('old', 0, 0)",
            [],
        )
        .unwrap();
        insert_raw(&old, "old", "the walrus migration");
        insert_raw(&old, "old", "another walrus");
    }
    let store = SessionStore::open(&path).unwrap();
    assert_eq!(hits(&store, "walrus"), 2);
    store
        .append("old", &[Message::user("a third walrus")])
        .unwrap();
    assert_eq!(hits(&store, "walrus"), 3);
    assert_eq!(indexed(&store, "walrus"), 3);
}

#[test]
fn an_older_toolhost_cannot_bring_the_indexing_trigger_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    store.create("s", "cli", None, None).unwrap();
    // What an older toolhost runs when it opens the file.
    store.with(|c| c.execute_batch(OLD_TRIGGER)).unwrap();
    store.append("s", &[Message::user("one heron")]).unwrap();
    assert_eq!(hits(&store, "heron"), 1);
    assert_eq!(indexed(&store, "heron"), 1);
}

#[test]
fn search_catches_the_index_up_first() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    store.create("s", "cli", None, None).unwrap();
    store
        .with(|c| {
            insert_raw(c, "s", "an unindexed otter");
            Ok(())
        })
        .unwrap();
    assert_eq!(indexed(&store, "otter"), 0);
    assert_eq!(hits(&store, "otter"), 1);
}

#[test]
fn a_deferred_append_is_found_by_the_next_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    store.create("s", "cli", None, None).unwrap();
    store.append_deferred("s", vec![Message::user("a queued lynx")]);
    assert_eq!(hits(&store, "lynx"), 1);
}

#[test]
fn an_index_left_behind_is_caught_up_on_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = SessionStore::open_in(dir.path()).unwrap();
        store.create("s", "cli", None, None).unwrap();
        // Stored, then the process died before indexing it.
        store
            .with(|c| {
                insert_raw(c, "s", "a stranded ibis");
                Ok(())
            })
            .unwrap();
    }
    let reopened = SessionStore::open_in(dir.path()).unwrap();
    assert_eq!(indexed(&reopened, "ibis"), 1);
}

#[test]
fn the_writer_indexes_without_a_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    store.create("s", "cli", None, None).unwrap();
    store.append_deferred("s", vec![Message::user("a patient crane")]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while indexed(&store, "crane") == 0 {
        assert!(Instant::now() < deadline, "the writer never indexed");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn two_stores_never_index_a_message_twice() {
    let dir = tempfile::tempdir().unwrap();
    let a = SessionStore::open_in(dir.path()).unwrap();
    let b = SessionStore::open_in(dir.path()).unwrap();
    a.create("s", "cli", None, None).unwrap();
    a.append("s", &[Message::user("gull one"), Message::user("gull two")])
        .unwrap();
    assert_eq!(hits(&b, "gull"), 2);
    assert_eq!(hits(&a, "gull"), 2);
    drop(a);
    assert_eq!(indexed(&b, "gull"), 2);
}
