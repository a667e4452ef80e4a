//! `toolhost run` against a real model server: llama-cpp-python's OpenAI-compatible
//! server with SmolLM2-135M-Instruct (`.ci/setup-model.sh`), streamed and not streamed,
//! on a task that makes the model call a tool. Asserts the whole round trip: the tool
//! call, its result sent back, a final answer, and the exit code that goes with how the
//! turn ended: 0 answered, or 3 at the model-call limit with the final answer the loop
//! asked for (docs/model-servers.md).

use std::process::Output;

use serde_json::Value;
use toolhost_tests::{TestHome, ci_services, require, stderr, stdout_json};

const NEEDS: &str = "a llama.cpp model server (TOOLHOST_TEST_MODEL_URL, from .ci/setup-model.sh)";

fn run_task(stream: bool) -> Output {
    let url = require(ci_services::var("TOOLHOST_TEST_MODEL_URL"), NEEDS);
    let model = ci_services::var("TOOLHOST_TEST_MODEL_NAME").unwrap_or_else(|| "smollm2".into());
    let home = TestHome::new();
    home.write_config(&format!(
        "[model]\nbase_url = \"{url}\"\nmodel = \"{model}\"\nstream = {stream}\n\
         temperature = 0.0\nmax_tokens = 512\ncontext_length = 8192\ntimeout = 300\n\
         retry_base_delay = 0.2\n"
    ));
    let mut cmd = home.command();
    cmd.env_remove("OPENAI_BASE_URL")
        .env_remove("TOOLHOST_MODEL")
        .env("OPENAI_API_KEY", "sk-local-test-key")
        .args([
            "run",
            "--toolsets",
            "todo",
            "--max-turns",
            "6",
            "--json",
            "Use the todo tool to add the task 'buy milk' to my todo list, then tell me what \
             the list holds.",
        ]);
    cmd.output().expect("run toolhost")
}

/// The transcript's tool round trip: the call, its result, and the answer after it.
fn assert_round_trip(out: &Output) {
    let transcript: Value = stdout_json(out);
    let err = stderr(out);
    // A 135M model may keep calling tools until the limit; the loop then asks it, with
    // tools refused, for a final answer (as Hermes does), and exits 3 with that answer.
    match transcript["end"].as_str() {
        Some("completed") => assert_eq!(out.status.code(), Some(0), "stderr: {err}\n{transcript}"),
        Some("turn_limit") => assert_eq!(out.status.code(), Some(3), "stderr: {err}\n{transcript}"),
        other => panic!("the turn ended {other:?}; stderr: {err}\n{transcript}"),
    }
    let messages = transcript["messages"].as_array().expect("messages");
    let call = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .next()
        .unwrap_or_else(|| panic!("the model called no tool: {transcript}"));
    let id = call["id"].as_str().expect("call id");
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no result for call {id}: {transcript}"));
    assert!(
        !result["content"].as_str().unwrap_or_default().is_empty(),
        "{result}"
    );
    let answer = transcript["text"].as_str().unwrap_or_default();
    assert!(!answer.trim().is_empty(), "empty answer: {transcript}");
    let last = messages.last().expect("a last message");
    assert_eq!(last["role"], "assistant", "{transcript}");
    assert!(
        last["tool_calls"].as_array().is_none_or(|c| c.is_empty()),
        "{transcript}"
    );
    assert_eq!(
        last["content"].as_str().unwrap_or_default(),
        answer,
        "{transcript}"
    );
    assert!(model_calls(&transcript) >= 2, "{transcript}");
    assert!(!err.contains("sk-local-test-key"), "{err}");
}

fn model_calls(transcript: &Value) -> u64 {
    transcript["model_calls"].as_u64().unwrap_or_default()
}

#[test]
#[ignore = "needs a llama.cpp model server (.ci/setup-model.sh)"]
fn real_model_tool_round_trip_streamed() {
    assert_round_trip(&run_task(true));
}

#[test]
#[ignore = "needs a llama.cpp model server (.ci/setup-model.sh)"]
fn real_model_tool_round_trip_not_streamed() {
    assert_round_trip(&run_task(false));
}
