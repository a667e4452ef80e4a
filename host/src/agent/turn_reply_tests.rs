//! Tests of the loop's handling of replies that are not answers (`turn.rs`): empty
//! replies, replies cut off at `max_tokens`, and conversations that outgrow the
//! context window (`compress.rs`), against the scripted server.

use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::scripted::{self, Reply};
use super::turn_tests::{Setup, setup, setup_with, tool_results, turn};
use super::*;

fn last_message(s: &Setup, n: usize) -> serde_json::Value {
    s.server.bodies()[n]["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap()
}

#[tokio::test]
async fn empty_replies_are_asked_again_then_fail_as_no_reply() {
    let s = setup(vec![
        scripted::empty(),
        scripted::empty(),
        scripted::empty(),
        scripted::empty(),
    ])
    .await;
    let (_, out) = turn(&s, "hello").await;
    assert_eq!(out.end, TurnEnd::Failed);
    assert!(out.text.starts_with("no reply:"), "{}", out.text);
    assert_eq!(s.server.requests().len(), 4);
}

#[tokio::test]
async fn an_empty_reply_then_an_answer_completes() {
    let s = setup(vec![scripted::empty(), scripted::text("Hi")]).await;
    let (_, out) = turn(&s, "hello").await;
    assert_eq!((out.text.as_str(), out.end), ("Hi", TurnEnd::Completed));
    // Asked again for words, not tools.
    let bodies = s.server.bodies();
    assert_eq!(bodies[0]["tool_choice"], "auto");
    assert_eq!(bodies[1]["tool_choice"], "none");
}

#[tokio::test]
async fn an_empty_reply_after_tool_results_gets_hermes_nudge() {
    let s = setup(vec![
        scripted::tool_calls(&[("c1", "echo", r#"{"text":"x"}"#)]),
        scripted::empty(),
        scripted::text("done"),
    ])
    .await;
    let (_, out) = turn(&s, "go").await;
    assert_eq!(out.end, TurnEnd::Completed);
    let nudge = last_message(&s, 2);
    assert_eq!(nudge["role"], "user");
    assert!(
        nudge["content"]
            .as_str()
            .unwrap()
            .starts_with("You just executed tool calls but returned an empty response")
    );
}

#[tokio::test]
async fn a_reply_cut_off_at_max_tokens_is_continued() {
    let s = setup(vec![scripted::cut_off("Hel"), scripted::text("lo.")]).await;
    let (c, out) = turn(&s, "greet").await;
    assert_eq!((out.text.as_str(), out.end), ("Hello.", TurnEnd::Completed));
    let ask = last_message(&s, 1);
    assert_eq!(ask["role"], "user");
    assert!(
        ask["content"]
            .as_str()
            .unwrap()
            .contains("truncated by the output length limit")
    );
    // system, user, partial, continue request, rest
    assert_eq!(c.messages.len(), 5);
}

#[tokio::test]
async fn a_reply_still_cut_off_after_three_continuations_is_partial_and_says_so() {
    let s = setup(vec![
        scripted::cut_off("a"),
        scripted::cut_off("b"),
        scripted::cut_off("c"),
        scripted::cut_off("d"),
    ])
    .await;
    let (_, out) = turn(&s, "write").await;
    assert_eq!(out.end, TurnEnd::Partial);
    assert!(out.text.starts_with("abcd"), "{}", out.text);
    assert!(out.text.contains("incomplete"), "{}", out.text);
    assert!(out.text.contains("max_tokens"), "{}", out.text);
}

/// A completion without `usage`, so the estimate keeps its starting ratio.
fn bare(reply: Reply) -> Reply {
    match reply {
        Reply::Json(mut value) => {
            value.as_object_mut().unwrap().remove("usage");
            Reply::Json(value)
        }
        other => other,
    }
}

fn two_turns() -> Vec<Reply> {
    vec![
        bare(scripted::tool_calls(&[("c1", "big", "{}")])),
        bare(scripted::text("first")),
        bare(scripted::text("second")),
    ]
}

async fn run_two_turns(s: &Setup) -> (Conversation, TurnOutcome) {
    let mut c = s.agent.new_conversation(None).unwrap();
    s.agent
        .run_turn(&mut c, "one", &CancellationToken::new())
        .await;
    let out = s
        .agent
        .run_turn(&mut c, "two", &CancellationToken::new())
        .await;
    (c, out)
}

#[tokio::test]
async fn a_conversation_that_outgrows_the_window_is_compressed_not_refused() {
    // Measure the third request with room to spare, then give it a window that fits it
    // only without the old 5,000-character result.
    let probe = setup_with(two_turns(), |_, a| a.tool_search = "off".into()).await;
    run_two_turns(&probe).await;
    let third = probe.server.bodies()[2].to_string().len();
    let window = ((third - 2_500) as f64 / 3.5 * 8.0 / 7.0) as usize;
    let s = setup_with(two_turns(), |m, a| {
        m.context_length = Some(window);
        a.tool_search = "off".into();
    })
    .await;
    let notices = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&notices);
    let agent = s.agent.clone().with_events(Arc::new(move |e| {
        if let AgentEvent::Notice(text) = e {
            sink.lock().unwrap().push(text);
        }
    }));
    let mut c = agent.new_conversation(None).unwrap();
    agent
        .run_turn(&mut c, "one", &CancellationToken::new())
        .await;
    let out = agent
        .run_turn(&mut c, "two", &CancellationToken::new())
        .await;
    assert_eq!((out.text.as_str(), out.end), ("second", TurnEnd::Completed));
    let sent = tool_results(&s, 2);
    assert!(
        sent[0]["content"]
            .as_str()
            .unwrap()
            .contains("was removed to fit the context window"),
        "{}",
        sent[0]
    );
    assert!(
        notices
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.contains("fit the context window"))
    );
    // The session keeps the whole result.
    let stored = s.agent.sessions().load(&c.session_id).unwrap();
    let result = stored.iter().find(|m| m.role == Role::Tool).unwrap();
    assert!(result.content_text().len() > 5_000);
}

#[tokio::test]
async fn a_request_that_cannot_fit_fails_with_the_fix_and_sends_nothing() {
    let s = setup_with(vec![scripted::text("never")], |m, a| {
        m.context_length = Some(64);
        a.tool_search = "off".into();
    })
    .await;
    let (_, out) = turn(&s, "hello").await;
    assert_eq!(out.end, TurnEnd::Failed);
    assert!(out.text.contains("context window"), "{}", out.text);
    assert!(out.text.contains("n_ctx"), "{}", out.text);
    assert!(out.text.contains("--toolsets"), "{}", out.text);
    assert!(s.server.requests().is_empty());
}

#[tokio::test]
async fn llama_cpp_pythons_tool_round_trip_completes_streamed() {
    // What llama-cpp-python's `chatml-function-calling` does under "auto", streamed: an
    // empty 200 stream when the model picks a tool, the call when asked unstreamed, an
    // empty message after the result, words when asked with tool_choice "none".
    let s = setup_with(
        vec![
            scripted::cut_stream(&[]),
            scripted::cut_stream(&[]),
            scripted::tool_calls(&[("call__0_echo_cmpl-1", "echo", r#"{"text":"x"}"#)]),
            scripted::empty(),
            scripted::text("Echoed x."),
        ],
        |m, _| m.stream = true,
    )
    .await;
    let (c, out) = turn(&s, "echo x").await;
    assert_eq!(
        (out.text.as_str(), out.end),
        ("Echoed x.", TurnEnd::Completed)
    );
    let bodies = s.server.bodies();
    assert_eq!(bodies[0]["stream"], true);
    assert!(bodies[2].get("stream").is_none());
    assert!(bodies[3].get("stream").is_none(), "streaming stays off");
    // The result went back with the call as the server named it, content "" beside it.
    let call = &bodies[3]["messages"][2];
    assert_eq!(call["content"], "");
    assert_eq!(call["tool_calls"][0]["id"], "call__0_echo_cmpl-1");
    assert_eq!(
        tool_results(&s, 3)[0]["tool_call_id"],
        "call__0_echo_cmpl-1"
    );
    assert_eq!(bodies[4]["tool_choice"], "none");
    assert_eq!(c.messages.last().unwrap().content_text(), "Echoed x.");
}
