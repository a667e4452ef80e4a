//! The CLI contract of `toolhost call` and `toolhost dispatch`: output shapes, error
//! strings and exit codes that tests and tooling rely on.

use serde_json::{Value, json};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json};

#[test]
fn call_unknown_tool_prints_error_and_exits_1() {
    let home = TestHome::new();
    let out = home.run(&["call", "teleport", "{}"], None);
    assert_eq!(stdout(&out).trim(), r#"{"error":"Unknown tool: teleport"}"#);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn call_reads_arguments_from_stdin() {
    let home = TestHome::new();
    let out = home.run(&["call", "teleport", "-"], Some("{\"to\": \"mars\"}"));
    assert_eq!(stdout(&out).trim(), r#"{"error":"Unknown tool: teleport"}"#);
}

#[test]
fn stdout_carries_only_data() {
    let home = TestHome::new();
    let out = home.run(&["-vv", "call", "teleport"], None);
    // Whatever is logged goes to stderr; stdout is exactly one JSON value.
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "stdout: {text}");
    assert!(serde_json::from_str::<Value>(&text).is_ok());
}

#[test]
fn malformed_config_is_a_clear_error_with_position() {
    let home = TestHome::new();
    home.write_config("[tool_output]\nmax_bytes = = 1\n");
    let out = home.run(&["call", "teleport"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("config.toml:2:"), "stderr: {err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn missing_explicit_config_is_an_error() {
    let home = TestHome::new();
    let missing = home.path().join("nope.toml");
    let out = home.run(&["--config", missing.to_str().unwrap(), "call", "x"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("nope.toml"));
}

#[test]
fn toolhost_home_env_is_honoured() {
    let home = TestHome::new();
    std::fs::write(home.path().join("config.toml"), "[tool_output\n").unwrap();
    let mut cmd = std::process::Command::new(toolhost_tests::toolhost_bin());
    let out = cmd
        .env("TOOLHOST_HOME", home.path())
        .args(["call", "x"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "the broken config in TOOLHOST_HOME was not read"
    );
}

fn assistant_message(calls: Value) -> String {
    json!({"role": "assistant", "content": null, "tool_calls": calls}).to_string()
}

#[test]
fn dispatch_accepts_a_bare_assistant_message() {
    let home = TestHome::new();
    let input = assistant_message(json!([
        {"id": "a", "type": "function", "function": {"name": "nope", "arguments": "{}"}},
        {"id": "b", "type": "function", "function": {"name": "nope2", "arguments": "{"}}
    ]));
    let out = home.run(&["dispatch", "-"], Some(&input));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout_json(&out),
        json!([
            {"role": "tool", "tool_call_id": "a", "name": "nope", "content": r#"{"error":"Unknown tool: nope"}"#},
            {"role": "tool", "tool_call_id": "b", "name": "nope2", "content": r#"{"error":"Unknown tool: nope2"}"#}
        ])
    );
}

#[test]
fn dispatch_accepts_a_chat_completions_response() {
    let home = TestHome::new();
    let response = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "tool_calls": [{"id": "x1", "type": "function", "function": {"name": "zap", "arguments": "{}"}}]
        }}]
    });
    let file = home.path().join("response.json");
    std::fs::write(&file, response.to_string()).unwrap();
    let out = home.run(&["dispatch", file.to_str().unwrap()], None);
    let messages = stdout_json(&out);
    assert_eq!(messages[0]["tool_call_id"], "x1");
    assert_eq!(messages[0]["content"], r#"{"error":"Unknown tool: zap"}"#);
}

#[test]
fn dispatch_without_tool_calls_prints_an_empty_array() {
    let home = TestHome::new();
    let out = home.run(
        &["dispatch"],
        Some(r#"{"role":"assistant","content":"hi"}"#),
    );
    assert_eq!(stdout_json(&out), json!([]));
}

#[test]
fn dispatch_rejects_invalid_json_input() {
    let home = TestHome::new();
    let out = home.run(&["dispatch"], Some("{not json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not valid JSON"), "{}", stderr(&out));
}

#[test]
fn dispatch_fills_missing_ids_and_object_arguments() {
    let home = TestHome::new();
    let input = assistant_message(json!([
        {"type": "function", "function": {"name": "nope", "arguments": {"a": 1}}}
    ]));
    let out = home.run(&["dispatch"], Some(&input));
    assert_eq!(stdout_json(&out)[0]["tool_call_id"], "call_0");
}
