//! `delegate_task` in the background (`background.rs`, `delegate.rs`): the call answers
//! at once, the batch's result arrives later, progress reaches the parent's sink.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::scripted;
use super::turn_tests::{setup, tool_results};
use super::{AgentEvent, Background};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn top_level_delegations_answer_at_once_and_deliver_later() {
    let s = setup(vec![
        scripted::tool_calls(&[("d1", "delegate_task", r#"{"goal":"check A"}"#)]),
        scripted::text("reply one"),
        scripted::text("reply two"),
    ])
    .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&notices);
    let background = Background::new(3);
    let agent = s
        .agent
        .clone()
        .with_events(Arc::new(move |event| {
            if let AgentEvent::Notice(text) = event {
                seen.lock().unwrap().push(text);
            }
        }))
        .with_background(Arc::clone(&background));
    let mut c = agent.new_conversation(None).unwrap();
    let out = agent
        .run_turn(&mut c, "delegate it", &CancellationToken::new())
        .await;
    // The parent's second request (the child's may have arrived first).
    let parent = (1..s.server.bodies().len())
        .find(|&n| !tool_results(&s, n).is_empty())
        .expect("the parent never sent the tool result");
    let dispatched: Value =
        serde_json::from_str(tool_results(&s, parent)[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(dispatched["status"], "dispatched", "{dispatched}");
    assert_eq!(dispatched["mode"], "background");
    assert_eq!(dispatched["goals"], serde_json::json!(["check A"]));
    let mut finished = Vec::new();
    for _ in 0..500 {
        finished = background.take_finished();
        if !finished.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(finished.len(), 1, "the batch never finished");
    assert_eq!(
        finished[0].id,
        dispatched["delegation_id"].as_str().unwrap()
    );
    let summary = finished[0].result["results"][0]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    // The parent's turn and the child each got one of the two replies.
    let mut both = [summary.as_str(), out.text.as_str()];
    both.sort_unstable();
    assert_eq!(both, ["reply one", "reply two"]);
    assert!(background.running().is_empty());
    assert!(
        notices
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.contains("background delegation")),
        "{notices:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_free_slot_the_batch_runs_in_the_foreground() {
    let s = setup(vec![
        scripted::tool_calls(&[("d1", "delegate_task", r#"{"goal":"check A"}"#)]),
        scripted::text("child done"),
        scripted::text("parent done"),
    ])
    .await;
    let background = Background::new(1);
    let _taken = background.reserve().unwrap();
    let agent = s.agent.clone().with_background(Arc::clone(&background));
    let mut c = agent.new_conversation(None).unwrap();
    let out = agent
        .run_turn(&mut c, "delegate it", &CancellationToken::new())
        .await;
    assert_eq!(out.text, "parent done");
    let result: Value =
        serde_json::from_str(tool_results(&s, 2)[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["results"][0]["summary"], "child done", "{result}");
    assert!(result["note"].as_str().unwrap().contains("foreground"));
}
