//! Tests of `client.rs` and `reply.rs` against the scripted server, one per failure
//! shape a real server shows (docs/model-servers.md): an empty stream, a stream without
//! `[DONE]`, a timeout, a refused connection, an oversized reply, a context overflow,
//! and error texts with a short key.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::agent::scripted::{self, Reply, ScriptedServer};
use crate::agent::settings::{ApiKey, ModelSettings};

fn client_with(base_url: String, tweak: impl FnOnce(&mut ModelSettings)) -> ModelClient {
    let mut settings = ModelSettings {
        base_url,
        model: "scripted-model".into(),
        stream: true,
        retry_base_delay: 0.01,
        max_retries: 3,
        timeout: 10.0,
        ..ModelSettings::default()
    };
    tweak(&mut settings);
    ModelClient::new(ModelEndpoint::resolve(&settings, |_| None)).unwrap()
}

async fn ask_seeing(client: &ModelClient) -> (Result<Completion, ModelError>, Vec<StreamEvent>) {
    let messages = [Message::user("hi")];
    let tools = ToolsJson::default();
    let request = ChatRequest {
        messages: &messages,
        tools: &tools,
        tool_choice: None,
    };
    let mut seen = Vec::new();
    let result = client
        .complete(&request, &mut |e| seen.push(e), &CancellationToken::new())
        .await;
    (result, seen)
}

fn retries(seen: &[StreamEvent]) -> Vec<&str> {
    seen.iter()
        .filter_map(|e| match e {
            StreamEvent::Retry(line) => Some(line.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_empty_stream_is_retried_then_asked_for_without_streaming() {
    let server = ScriptedServer::start(vec![
        scripted::cut_stream(&[]),
        scripted::cut_stream(&[]),
        scripted::text("answer"),
    ])
    .await
    .unwrap();
    let client = client_with(server.base_url(), |_| {});
    let (result, seen) = ask_seeing(&client).await;
    assert_eq!(result.unwrap().message.content_text(), "answer");
    let bodies = server.bodies();
    assert_eq!(bodies[1]["stream"], true);
    assert!(bodies[2].get("stream").is_none(), "{}", bodies[2]);
    let lines = retries(&seen);
    assert_eq!(lines.len(), 2);
    // The next call of this client goes unstreamed from the start.
    server.push([scripted::text("again")]);
    let (result, _) = ask_seeing(&client).await;
    assert_eq!(result.unwrap().message.content_text(), "again");
    assert!(server.bodies()[3].get("stream").is_none());
    assert!(lines[1].contains("incomplete reply") && lines[1].contains("not streamed"));
    assert!(lines.iter().all(|l| !l.contains('\n') && l.len() < 120));
}

#[tokio::test]
async fn a_stream_without_done_or_finish_reason_fails_clearly_after_retries() {
    let cut = || scripted::cut_stream(&["Hel", "lo"]);
    let server = ScriptedServer::start(vec![cut(), cut(), cut()])
        .await
        .unwrap();
    let client = client_with(server.base_url(), |s| s.max_retries = 2);
    let err = ask_seeing(&client).await.0.unwrap_err();
    assert!(matches!(err, ModelError::Incomplete { .. }), "{err}");
    assert!(err.to_string().contains("ended its reply early"), "{err}");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_stream_with_a_finish_reason_but_no_done_is_complete() {
    let body = format!(
        "data: {}\n\ndata: {}\n\n",
        json!({"choices": [{"index": 0, "delta": {"content": "ok"}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    );
    let server = ScriptedServer::start(vec![Reply::Raw {
        content_type: "text/event-stream".into(),
        body,
    }])
    .await
    .unwrap();
    let (result, _) = ask_seeing(&client_with(server.base_url(), |_| {})).await;
    assert_eq!(result.unwrap().message.content_text(), "ok");
}

#[tokio::test]
async fn a_timeout_reads_as_a_timeout_not_a_refused_connection() {
    let server = ScriptedServer::start(vec![Reply::Delay(
        Duration::from_secs(5),
        Box::new(scripted::text("late")),
    )])
    .await
    .unwrap();
    let client = client_with(server.base_url(), |s| {
        s.timeout = 0.2;
        s.max_retries = 0;
    });
    let err = ask_seeing(&client).await.0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ModelError::Timeout { .. }), "{text}");
    assert!(text.contains("did not answer within 0.2 s"), "{text}");
    assert!(!text.contains("cannot reach"), "{text}");
}

#[tokio::test]
async fn a_refused_connection_says_so() {
    // Port 9 (discard) has no listener on loopback here.
    let client = client_with("http://127.0.0.1:9/v1".into(), |s| s.max_retries = 0);
    let err = ask_seeing(&client).await.0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ModelError::Transport { .. }), "{text}");
    assert!(text.to_lowercase().contains("connection refused"), "{text}");
}

#[tokio::test]
async fn a_reply_past_the_size_limit_fails_streamed_or_whole() {
    let huge = "x".repeat(20_000);
    let server = ScriptedServer::start(vec![
        scripted::streamed(&[&huge], &[]),
        scripted::text(&huge),
    ])
    .await
    .unwrap();
    for stream in [true, false] {
        let client = client_with(server.base_url(), |s| {
            s.stream = stream;
            s.max_reply_bytes = 10_000;
        });
        let err = ask_seeing(&client).await.0.unwrap_err();
        assert!(
            matches!(err, ModelError::TooLarge { limit: 10_000 }),
            "{err}"
        );
        assert!(err.to_string().contains("max_reply_bytes"));
    }
}

#[tokio::test]
async fn a_request_too_large_for_the_window_is_not_sent() {
    let server = ScriptedServer::start(vec![scripted::text("never")])
        .await
        .unwrap();
    let client = client_with(server.base_url(), |s| s.context_length = Some(10));
    let err = ask_seeing(&client).await.0.unwrap_err();
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_server_that_says_the_context_overflowed_is_an_overflow() {
    let server = ScriptedServer::start(vec![Reply::Status {
        status: 400,
        body: r#"{"error":{"message":"Requested tokens (9000) exceed context window of 8192"}}"#
            .into(),
        retry_after: None,
    }])
    .await
    .unwrap();
    let client = client_with(server.base_url(), |_| {});
    let before = client.window().estimate(10_000);
    let err = ask_seeing(&client).await.0.unwrap_err();
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err}");
    assert!(client.window().estimate(10_000) > before);
}

#[tokio::test]
async fn a_short_key_does_not_garble_error_texts() {
    let server = ScriptedServer::start(vec![Reply::Status {
        status: 401,
        body: "maximum context length exceeded for key x".into(),
        retry_after: None,
    }])
    .await
    .unwrap();
    let mut endpoint = ModelEndpoint::resolve(
        &ModelSettings {
            base_url: server.base_url(),
            stream: false,
            ..ModelSettings::default()
        },
        |_| None,
    );
    endpoint.api_key = Some(ApiKey::new("x"));
    let err = ask_seeing(&ModelClient::new(endpoint).unwrap())
        .await
        .0
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("maximum context length exceeded for key x"),
        "{err}"
    );
}

#[test]
fn keys_are_masked_as_whole_words_only() {
    let key = "sk-live-abcdef123";
    for (text, want) in [
        ("key sk-live-abcdef123 refused", "key *** refused"),
        ("\"sk-live-abcdef123\"", "\"***\""),
        ("sk-live-abcdef123", "***"),
        ("Xsk-live-abcdef123", "Xsk-live-abcdef123"),
        ("sk-live-abcdef1234", "sk-live-abcdef1234"),
        ("a sk-live-abcdef123,sk-live-abcdef123.", "a ***,***."),
    ] {
        assert_eq!(mask_key(text, key), want, "{text}");
    }
    assert_eq!(mask_key("max x", "x"), "max x");
    assert_eq!(mask_key("key abc1234", "abc1234"), "key abc1234");
}

#[tokio::test]
async fn a_streamed_request_failing_with_errors_is_retried_unstreamed_for_that_call_only() {
    let server = ScriptedServer::start(vec![
        scripted::status(500, None),
        scripted::status(500, None),
        scripted::text("answer"),
        scripted::streamed(&["next"], &[]),
    ])
    .await
    .unwrap();
    let client = client_with(server.base_url(), |_| {});
    assert_eq!(
        ask_seeing(&client).await.0.unwrap().message.content_text(),
        "answer"
    );
    assert_eq!(
        ask_seeing(&client).await.0.unwrap().message.content_text(),
        "next"
    );
    let bodies = server.bodies();
    assert!(bodies[2].get("stream").is_none());
    assert_eq!(bodies[3]["stream"], true);
}
