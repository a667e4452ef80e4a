//! Tests of `compress.rs`.

use super::*;
use crate::agent::message::{AssistantToolCall, FunctionCall};

fn calls(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: None,
        tool_calls: vec![AssistantToolCall {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "echo".into(),
                arguments: "{}".into(),
            },
        }],
        tool_call_id: None,
        name: None,
    }
}

fn conversation() -> Vec<Message> {
    vec![
        Message::system("sys"),
        Message::user("old question"),
        Message::assistant("old answer"),
        Message::user("task"),
        calls("a"),
        Message::tool("a", "echo", "x".repeat(1_000)),
        calls("b"),
        Message::tool("b", "echo", "y".repeat(1_000)),
    ]
}

#[test]
fn old_tool_results_become_stubs_first() {
    let mut m = conversation();
    assert!(compress_step(&mut m));
    assert_eq!(m.len(), 8);
    assert!(m[5].content_text().contains("1000 characters was removed"));
    assert_eq!(m[7].content_text().len(), 1_000, "the latest result stays");
}

#[test]
fn then_the_oldest_groups_go_and_the_system_prompt_says_so() {
    let mut m = conversation();
    assert!(compress_step(&mut m)); // stubs
    assert!(compress_step(&mut m)); // "old question"
    assert!(compress_step(&mut m)); // "old answer"
    assert_eq!(m[1].content_text(), "task");
    assert!(
        m[0].content_text().ends_with("2 so far.]"),
        "{}",
        m[0].content_text()
    );
    assert!(compress_step(&mut m)); // the first batch, with its result
    assert_eq!(m.len(), 4);
    assert_eq!(m[2].tool_calls[0].id, "b");
    assert_eq!(m[3].tool_call_id.as_deref(), Some("b"));
    assert!(m[0].content_text().ends_with("4 so far.]"));
}

#[test]
fn at_the_end_the_latest_result_is_cut_down_to_a_floor() {
    let mut m = conversation();
    while m.len() > 4 {
        assert!(compress_step(&mut m));
    }
    assert!(compress_step(&mut m));
    assert!(m[3].content_text().contains("cut from 1000 characters"));
    assert!(!compress_step(&mut m), "600 characters are the floor");
    assert_eq!(m.len(), 4, "system, task and the latest batch always stay");
}

#[test]
fn a_conversation_of_system_and_task_cannot_shrink() {
    let mut m = vec![Message::system("sys"), Message::user("task")];
    assert!(!compress_step(&mut m));
}
