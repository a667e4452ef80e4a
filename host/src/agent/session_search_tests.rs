//! Tests of `session_search.rs` against a real session database.

use super::*;
use crate::agent::message::Message;

fn store_with_sessions() -> (tempfile::TempDir, SessionStore) {
    let dir = tempfile::tempdir().unwrap();
    let s = SessionStore::open_in(dir.path()).unwrap();
    s.create("old", "cli", Some("m1"), None).unwrap();
    let mut msgs = vec![Message::user("set up the postgres replica")];
    for i in 0..12 {
        msgs.push(Message::assistant(format!("step {i} of the replica setup")));
    }
    msgs.push(Message::user("thanks, replica works"));
    s.append("old", &msgs).unwrap();
    s.create("now", "cli", Some("m1"), None).unwrap();
    s.append("now", &[Message::user("replica again?")]).unwrap();
    (dir, s)
}

#[test]
fn discover_returns_window_bookends_and_skips_the_current_session() {
    let (_dir, s) = store_with_sessions();
    let r = session_search(&s, &json!({"query": "postgres"}), "now");
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["mode"], "discover");
    assert_eq!(r["count"], 1);
    let hit = &r["results"][0];
    assert_eq!(hit["session_id"], "old");
    assert_eq!(hit["bookend_start"].as_array().unwrap().len(), 3);
    assert_eq!(hit["bookend_end"][2]["content"], "thanks, replica works");
    let window = hit["messages"].as_array().unwrap();
    assert!(window.iter().any(|m| m["anchor"] == true));
    assert_eq!(hit["messages_before"], 0);
    assert_eq!(hit["messages_after"], 14 - 6);
    let r = session_search(&s, &json!({"query": "replica again"}), "now");
    assert_eq!(r["count"], 0, "{r}");
}

#[test]
fn scroll_read_and_browse_shapes() {
    let (_dir, s) = store_with_sessions();
    let ids: Vec<i64> = s.stored("old").unwrap().iter().map(|m| m.id).collect();
    let r = session_search(
        &s,
        &json!({"session_id": "old", "around_message_id": ids[7], "window": 2}),
        "now",
    );
    assert_eq!(r["mode"], "scroll", "{r}");
    assert_eq!(r["messages"].as_array().unwrap().len(), 5);
    assert_eq!(r["messages_before"], 5);
    let r = session_search(&s, &json!({"session_id": "old"}), "now");
    assert_eq!(
        (r["mode"].as_str(), r["message_count"].as_i64()),
        (Some("read"), Some(14))
    );
    assert_eq!(r["truncated"], false);
    let r = session_search(&s, &json!({}), "now");
    assert_eq!(r["mode"], "browse");
    assert_eq!(r["count"], 1);
    assert_eq!(r["results"][0]["session_id"], "old");
}

#[test]
fn errors_are_json_the_model_can_read() {
    let (_dir, s) = store_with_sessions();
    for args in [
        json!({"session_id": "missing"}),
        json!({"query": "\"unbalanced"}),
        json!({"profile": "work"}),
        json!({"session_id": "now", "around_message_id": 1}),
        json!({"around_message_id": "many"}),
    ] {
        let r = session_search(&s, &args, "now");
        assert_eq!(r["success"], false, "{args} -> {r}");
        assert!(r["error"].is_string());
    }
}

#[test]
fn limit_is_read_leniently_like_hermes() {
    let (_dir, s) = store_with_sessions();
    let r = session_search(&s, &json!({"limit": "many"}), "now");
    assert_ne!(r["success"], false, "{r}");
}

#[test]
fn times_are_formatted_like_hermes_in_utc() {
    assert_eq!(format_time(0.0), "January 01, 1970 at 12:00 AM UTC");
    assert_eq!(
        format_time(1_764_622_800.0),
        "December 01, 2025 at 09:00 PM UTC"
    );
}
