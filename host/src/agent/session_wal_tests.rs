//! Tests of `session_wal.rs` through the store, on a real SQLite file.

use std::time::{Duration, Instant};

use super::Checkpointer;
use crate::agent::message::Message;
use crate::agent::sessions::SessionStore;

#[test]
fn commits_do_not_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    let pages: i64 = store
        .with(|c| c.pragma_query_value(None, "wal_autocheckpoint", |r| r.get(0)))
        .unwrap();
    assert_eq!(pages, 0);
}

#[test]
fn the_log_is_checkpointed_and_cut_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    let threshold = 64 * 1024;
    let store = SessionStore::open_checkpointing_at(&path, threshold).unwrap();
    let wal = Checkpointer::new(&path, threshold);
    store.create("s", "cli", None, None).unwrap();
    let text = "x".repeat(2_000);
    let mut largest = 0;
    for i in 0..300 {
        store
            .append("s", &[Message::user(format!("{i} {text}"))])
            .unwrap();
        largest = largest.max(wal.log_len());
    }
    assert!(largest >= threshold, "the log never grew: {largest}");
    // The writer thread checkpoints behind the writes; the next commit cuts the file.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        store.append("s", &[Message::assistant("tick")]).unwrap();
        if wal.log_len() < threshold {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the log stayed at {} bytes",
            wal.log_len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(store);
    let reopened = SessionStore::open(&path).unwrap();
    assert!(reopened.load("s").unwrap().len() > 300);
}
