//! Tests of `sessions.rs` against a real SQLite file.

use super::*;
use crate::agent::message::{AssistantToolCall, FunctionCall};

fn store() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    (dir, store)
}

fn calling(ids: &[&str]) -> Message {
    let mut m = Message::assistant("");
    m.content = None;
    m.tool_calls = ids
        .iter()
        .map(|id| AssistantToolCall {
            id: id.to_string(),
            kind: "function".into(),
            function: FunctionCall {
                name: "terminal".into(),
                arguments: "{}".into(),
            },
        })
        .collect();
    m
}

#[test]
fn messages_round_trip_with_title_and_counts() {
    let (_dir, s) = store();
    s.create("s1", "cli", Some("m"), None).unwrap();
    let msgs = vec![
        Message::system("sys"),
        Message::user("Deploy the staging cluster please"),
        calling(&["c1"]),
        Message::tool("c1", "terminal", "{\"output\":\"ok\"}"),
        Message::assistant("Done."),
    ];
    s.append("s1", &msgs).unwrap();
    assert_eq!(s.load("s1").unwrap(), msgs);
    let info = s.get("s1").unwrap().unwrap();
    assert_eq!(
        info.title.as_deref(),
        Some("Deploy the staging cluster please")
    );
    assert_eq!(info.message_count, 5);
    assert_eq!(info.model.as_deref(), Some("m"));
}

#[test]
fn unanswered_calls_are_closed_on_load() {
    let (dir, s) = store();
    s.create("s1", "cli", None, None).unwrap();
    s.append("s1", &[Message::user("go"), calling(&["c1", "c2"])])
        .unwrap();
    s.append("s1", &[Message::tool("c1", "terminal", "{}")])
        .unwrap();
    drop(s);
    // A new process opening the same file.
    let reopened = SessionStore::open_in(dir.path()).unwrap();
    let loaded = reopened.load("s1").unwrap();
    assert_eq!(loaded.len(), 4);
    assert_eq!(loaded[3].tool_call_id.as_deref(), Some("c2"));
    assert!(loaded[3].content_text().contains("interrupted"));
}

#[test]
fn search_ranks_hits_and_hides_subagent_sessions() {
    let (_dir, s) = store();
    s.create("a", "cli", None, None).unwrap();
    s.create("b", "subagent", None, Some("a")).unwrap();
    s.append(
        "a",
        &[
            Message::user("the kubernetes ingress broke"),
            Message::assistant("fixed the ingress"),
        ],
    )
    .unwrap();
    s.append("b", &[Message::user("ingress details")]).unwrap();
    let hits = s
        .search("ingress", &["user".into(), "assistant".into()], 10)
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.session_id == "a"));
    assert!(
        hits[0].snippet.contains(">>>ingress<<<"),
        "{}",
        hits[0].snippet
    );
    assert!(
        s.search("nothing_like_this", &["user".into()], 10)
            .unwrap()
            .is_empty()
    );
    let listed: Vec<String> = s
        .list(10, false)
        .unwrap()
        .into_iter()
        .map(|i| i.id)
        .collect();
    assert_eq!(listed, ["a"]);
}

#[test]
fn a_second_connection_reads_while_one_writes() {
    let (dir, writer) = store();
    writer.create("s", "cli", None, None).unwrap();
    let reader = SessionStore::open_in(dir.path()).unwrap();
    writer.append("s", &[Message::user("first")]).unwrap();
    assert_eq!(reader.load("s").unwrap().len(), 1);
    writer.append("s", &[Message::assistant("second")]).unwrap();
    assert_eq!(reader.load("s").unwrap().len(), 2);
}

#[test]
fn unknown_session_is_not_found() {
    let (_dir, s) = store();
    assert!(matches!(s.load("nope"), Err(SessionError::NotFound(_))));
}

#[test]
fn session_ids_look_like_dates() {
    let id = new_session_id();
    assert_eq!(id.len(), "20261201_101010_abcdef".len(), "{id}");
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(20_423), (2025, 12, 1));
}

#[test]
fn deferred_appends_are_read_back_in_order() {
    let (_dir, s) = store();
    s.create("s1", "cli", None, None).unwrap();
    for i in 0..50 {
        s.append_deferred("s1", vec![Message::user(format!("m{i}"))]);
    }
    let texts: Vec<String> = s
        .load("s1")
        .unwrap()
        .iter()
        .map(|m| m.content_text())
        .collect();
    let expected: Vec<String> = (0..50).map(|i| format!("m{i}")).collect();
    assert_eq!(texts, expected);
}

#[test]
fn deferred_appends_are_on_disk_after_flush() {
    let (dir, s) = store();
    s.create("s1", "cli", None, None).unwrap();
    s.append_deferred("s1", vec![Message::user("kept")]);
    s.flush().unwrap();
    let other = SessionStore::open_in(dir.path()).unwrap();
    assert_eq!(other.load("s1").unwrap().len(), 1);
}

#[test]
fn dropping_the_store_writes_what_was_deferred() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = SessionStore::open_in(dir.path()).unwrap();
        s.create("s1", "cli", None, None).unwrap();
        for i in 0..20 {
            s.append_deferred("s1", vec![Message::assistant(format!("a{i}"))]);
        }
    }
    let s = SessionStore::open_in(dir.path()).unwrap();
    assert_eq!(s.load("s1").unwrap().len(), 20);
}

#[test]
fn a_failed_deferred_write_is_reported_by_flush() {
    let (_dir, s) = store();
    s.create("s1", "cli", None, None).unwrap();
    s.with(|c| c.execute_batch("DROP TABLE messages;")).unwrap();
    s.append_deferred("s1", vec![Message::user("lost")]);
    assert!(s.flush().is_err());
}
