//! Tests of `client.rs` against the scripted server.

use super::*;
use crate::agent::scripted::{self, ScriptedServer};
use crate::agent::settings::{ApiKey, ModelSettings};
use serde_json::json;

fn client(server: &ScriptedServer, stream: bool) -> ModelClient {
    let settings = ModelSettings {
        base_url: server.base_url(),
        model: "scripted-model".into(),
        stream,
        retry_base_delay: 0.01,
        max_retries: 2,
        timeout: 10.0,
        headers: [("X-Title".to_string(), "toolhost-test".to_string())].into(),
        ..ModelSettings::default()
    };
    let mut endpoint = ModelEndpoint::resolve(&settings, |_| None);
    endpoint.api_key = Some(ApiKey::new("sk-test-key-123"));
    ModelClient::new(endpoint).unwrap()
}

async fn ask(client: &ModelClient, tools: &[Value]) -> Result<Completion, ModelError> {
    let messages = [Message::user("hi")];
    let tools = ToolsJson::new(tools);
    let request = ChatRequest {
        messages: &messages,
        tools: &tools,
        tool_choice: None,
    };
    client
        .complete(&request, &mut |_| {}, &CancellationToken::new())
        .await
}

#[tokio::test]
async fn plain_reply_sends_model_messages_tools_key_and_headers() {
    let server = ScriptedServer::start(vec![scripted::text("hello")])
        .await
        .unwrap();
    let c = client(&server, false);
    let tools = [json!({"type": "function", "function": {"name": "todo", "parameters": {}}})];
    let done = ask(&c, &tools).await.unwrap();
    assert_eq!(done.message.content_text(), "hello");
    assert_eq!(done.usage.total_tokens, 15);
    let sent = &server.requests()[0];
    assert_eq!(
        sent.authorization.as_deref(),
        Some("Bearer sk-test-key-123")
    );
    assert!(
        sent.headers
            .contains(&("x-title".into(), "toolhost-test".into()))
    );
    assert_eq!(sent.body["model"], "scripted-model");
    assert_eq!(sent.body["messages"][0]["content"], "hi");
    assert_eq!(sent.body["tools"][0]["function"]["name"], "todo");
    assert_eq!(sent.body["tool_choice"], "auto");
    assert!(sent.body.get("stream").is_none());
}

#[tokio::test]
async fn streamed_reply_is_merged_and_events_seen() {
    let server = ScriptedServer::start(vec![scripted::streamed(
        &["Hel", "lo"],
        &[("c1", "todo", r#"{"todos":[]}"#)],
    )])
    .await
    .unwrap();
    let c = client(&server, true);
    let messages = [Message::user("hi")];
    let mut seen = Vec::new();
    let done = c
        .complete(
            &ChatRequest {
                messages: &messages,
                tools: &ToolsJson::default(),
                tool_choice: None,
            },
            &mut |e| seen.push(e),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(done.message.content_text(), "Hello");
    assert_eq!(
        done.message.tool_calls[0].function.arguments,
        r#"{"todos":[]}"#
    );
    assert_eq!(done.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(done.usage.total_tokens, 15);
    assert_eq!(seen[0], StreamEvent::Text("Hel".into()));
    assert!(seen.contains(&StreamEvent::ToolCall("todo".into())));
    let body = &server.bodies()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn server_errors_are_retried_then_succeed() {
    let server = ScriptedServer::start(vec![
        scripted::status(503, None),
        scripted::status(429, Some("0")),
        scripted::text("ok"),
    ])
    .await
    .unwrap();
    let c = client(&server, false);
    assert_eq!(ask(&c, &[]).await.unwrap().message.content_text(), "ok");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(c.total_usage().total_tokens, 15);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server =
        ScriptedServer::start(vec![scripted::status(429, Some("1")), scripted::text("ok")])
            .await
            .unwrap();
    let c = client(&server, false);
    let started = std::time::Instant::now();
    ask(&c, &[]).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn retries_give_up_with_the_status() {
    let server = ScriptedServer::start(vec![
        scripted::status(500, None),
        scripted::status(500, None),
        scripted::status(500, None),
    ])
    .await
    .unwrap();
    let err = ask(&client(&server, false), &[]).await.unwrap_err();
    assert!(
        matches!(err, ModelError::Status { status: 500, .. }),
        "{err}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_never_show_the_key() {
    let server = ScriptedServer::start(vec![scripted::Reply::Status {
        status: 401,
        body: "bad key sk-test-key-123".into(),
        retry_after: None,
    }])
    .await
    .unwrap();
    let err = ask(&client(&server, false), &[]).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("401"), "{text}");
    assert!(!text.contains("sk-test-key-123"), "{text}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancel_aborts_a_hanging_request() {
    let server = ScriptedServer::start(vec![scripted::Reply::Delay(
        Duration::from_secs(30),
        Box::new(scripted::text("late")),
    )])
    .await
    .unwrap();
    let c = client(&server, false);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let messages = [Message::user("hi")];
    let err = c
        .complete(
            &ChatRequest {
                messages: &messages,
                tools: &ToolsJson::default(),
                tool_choice: None,
            },
            &mut |_| {},
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::Interrupted));
}

#[tokio::test]
async fn malformed_reply_is_a_decode_error() {
    let server = ScriptedServer::start(vec![scripted::Reply::Json(json!({"nope": 1}))])
        .await
        .unwrap();
    let err = ask(&client(&server, false), &[]).await.unwrap_err();
    assert!(matches!(err, ModelError::NoChoices), "{err}");
}

fn offline_client(settings: ModelSettings) -> ModelClient {
    let settings = ModelSettings {
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        ..settings
    };
    ModelClient::new(ModelEndpoint::resolve(&settings, |_| None)).unwrap()
}

fn body_of(client: &ModelClient, tools: &ToolsJson, tool_choice: Option<&Value>) -> Value {
    let messages = [Message::user("hi"), Message::tool("c1", "todo", "{}")];
    let bytes = client
        .body(&ChatRequest {
            messages: &messages,
            tools,
            tool_choice,
        })
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[test]
fn body_carries_every_setting_and_the_tools() {
    let client = offline_client(ModelSettings {
        stream: true,
        parallel_tool_calls: false,
        temperature: Some(0.5),
        max_tokens: Some(64),
        ..ModelSettings::default()
    });
    let definition = json!({"type": "function", "function": {"name": "todo", "parameters": {}}});
    let tools = ToolsJson::new(std::slice::from_ref(&definition));
    assert_eq!(
        body_of(&client, &tools, None),
        json!({
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "content": "{}", "tool_call_id": "c1", "name": "todo"}
            ],
            "model": "m",
            "parallel_tool_calls": false,
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0.5,
            "tool_choice": "auto",
            "tools": [definition]
        })
    );
}

#[test]
fn body_without_tools_has_no_tool_fields() {
    let client = offline_client(ModelSettings {
        stream: false,
        ..ModelSettings::default()
    });
    let body = body_of(&client, &ToolsJson::default(), Some(&json!("required")));
    assert_eq!(
        body,
        json!({
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "content": "{}", "tool_call_id": "c1", "name": "todo"}
            ],
            "model": "m"
        })
    );
}

#[test]
fn body_passes_a_given_tool_choice() {
    let client = offline_client(ModelSettings::default());
    let tools = ToolsJson::new(&[json!({"type": "function", "function": {"name": "a"}})]);
    let choice = json!({"type": "function", "function": {"name": "a"}});
    let body = body_of(&client, &tools, Some(&choice));
    assert_eq!(body["tool_choice"], choice);
    assert!(body.get("parallel_tool_calls").is_none());
}

#[test]
fn tools_json_is_the_definitions_array() {
    let definitions = [json!({"a": 1}), json!({"b": [true, null]})];
    let tools = ToolsJson::new(&definitions);
    let parsed: Value = serde_json::from_str(tools.as_str()).unwrap();
    assert_eq!(parsed, Value::Array(definitions.to_vec()));
    assert!(!tools.is_empty());
    assert!(ToolsJson::new(&[]).is_empty());
    assert_eq!(ToolsJson::new(&[]).as_str(), "[]");
}
