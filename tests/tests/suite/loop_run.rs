//! `toolhost run` end to end: the binary against the scripted OpenAI-compatible server
//! (real HTTP), and a live smoke test against a real model when one is configured.

use std::process::Output;

use serde_json::Value;
use toolhost::agent::scripted::{self, Reply, ScriptedServer};
use toolhost_tests::{TestHome, stderr, stdout};

async fn run(home: &TestHome, server: &ScriptedServer, args: &[&str]) -> Output {
    let mut cmd = home.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", "sk-loop-test-secret")
        .env("TOOLHOST_MODEL", "scripted")
        .arg("run")
        .args(args);
    tokio::task::spawn_blocking(move || cmd.output().expect("run toolhost"))
        .await
        .expect("join")
}

fn no_stream(home: &TestHome) {
    home.write_config("[model]\nstream = false\nretry_base_delay = 0.01\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_prints_the_answer_after_a_tool_call() {
    let home = TestHome::new();
    no_stream(&home);
    let server = ScriptedServer::start(vec![
        scripted::tool_calls(&[("c1", "todo", r#"{"todos":[{"id":"1","content":"look"}]}"#)]),
        scripted::text("All done."),
    ])
    .await
    .unwrap();
    let out = run(&home, &server, &["--toolsets", "todo", "plan it"]).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "All done.");
    let second = &server.bodies()[1];
    let tool = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("\"look\""),
        "{tool}"
    );
    assert_eq!(
        server.requests()[0].authorization.as_deref(),
        Some("Bearer sk-loop-test-secret")
    );
    assert!(!stderr(&out).contains("sk-loop-test-secret"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_json_prints_the_transcript_and_the_turn_limit_exit_code() {
    let home = TestHome::new();
    no_stream(&home);
    let server = ScriptedServer::start(vec![
        scripted::tool_calls(&[("a", "todo", "{}")]),
        scripted::tool_calls(&[("b", "todo", r#"{"merge":true}"#)]),
        scripted::text("summed up"),
    ])
    .await
    .unwrap();
    let out = run(
        &home,
        &server,
        &[
            "--toolsets",
            "todo",
            "--max-turns",
            "2",
            "--json",
            "loop forever",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["end"], "turn_limit");
    // Two calls, then Hermes' request for a final answer without tools.
    assert_eq!(v["model_calls"], 3);
    assert_eq!(v["text"], "summed up");
    assert_eq!(v["usage"]["total_tokens"], 45);
    assert!(v["session_id"].as_str().is_some());
    assert_eq!(v["messages"][1]["content"], "loop forever");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_resumes_a_session_and_a_model_error_exits_1() {
    let home = TestHome::new();
    no_stream(&home);
    let server = ScriptedServer::start(vec![
        scripted::text("first"),
        Reply::Status {
            status: 400,
            body: "bad request".into(),
            retry_after: None,
        },
    ])
    .await
    .unwrap();
    let out = run(&home, &server, &["--json", "one"]).await;
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let session = v["session_id"].as_str().unwrap().to_string();
    let out = run(&home, &server, &["--session", &session, "two"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("400"), "{}", stderr(&out));
    let sent = &server.bodies()[1]["messages"];
    assert_eq!(sent[2]["content"], "first");
    assert_eq!(sent[3]["content"], "two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_answers_lines_and_runs_commands() {
    let home = TestHome::new();
    no_stream(&home);
    let server = ScriptedServer::start(vec![scripted::text("Hello from chat")])
        .await
        .unwrap();
    let mut cmd = home.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("TOOLHOST_MODEL", "scripted")
        .args(["chat", "--toolsets", "todo"]);
    let out = tokio::task::spawn_blocking(move || {
        toolhost_tests::spawn_with_stdin(cmd, &[], Some("hi\n/tools\n/sessions\n/exit\n"))
            .wait_with_output()
            .expect("wait toolhost")
    })
    .await
    .expect("join");
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(stdout(&out).contains("Hello from chat"), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("todo"), "{err}");
    assert!(err.contains("1 msgs") || err.contains("3 msgs"), "{err}");
    assert_eq!(server.bodies()[0]["messages"][1]["content"], "hi");
}
