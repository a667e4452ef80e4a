//! Tests of the dispatch pipeline, one behaviour each.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tools_core::{ToolError, ToolHandler};

use super::*;

fn echo_tool() -> ToolEntry {
    ToolEntry::builder("echo", "test")
        .description("echo")
        .parameters(json!({
            "type": "object",
            "properties": {"n": {"type": "integer"}, "text": {"type": "string"}},
            "required": ["n"]
        }))
        .sync_handler(|args, _| Ok(json!({"got": args})))
        .build()
        .unwrap()
}

fn setup(tools: Vec<ToolEntry>) -> (Dispatcher, Arc<Hooks>, tempfile::TempDir) {
    let registry = Arc::new(Registry::new());
    for tool in tools {
        registry.register(tool);
    }
    let hooks = Arc::new(Hooks::new());
    let dir = tempfile::tempdir().unwrap();
    let dispatcher = Dispatcher::new(
        registry,
        Arc::clone(&hooks),
        ResultSpill::new(dir.path().join("results")),
    );
    (dispatcher, hooks, dir)
}

fn call(d: &Dispatcher, name: &str, args: &str) -> DispatchResult {
    d.call(name, args, &ToolContext::default())
}

#[test]
fn unknown_tool() {
    let (d, _, _dir) = setup(vec![]);
    let out = call(&d, "nope", "{}");
    assert_eq!(out.text, r#"{"error":"Unknown tool: nope"}"#);
    assert_eq!(out.status, CallStatus::Error);
}

#[test]
fn invalid_json_arguments() {
    let (d, _, _dir) = setup(vec![echo_tool()]);
    let out = call(&d, "echo", "{\"n\": 1,");
    assert!(
        out.text
            .starts_with(r#"{"error":"Invalid JSON arguments for echo: "#),
        "{}",
        out.text
    );
}

#[test]
fn non_object_arguments() {
    let (d, _, _dir) = setup(vec![echo_tool()]);
    let out = call(&d, "echo", "[1]");
    assert!(
        out.text.contains("expected a JSON object, got an array"),
        "{}",
        out.text
    );
}

#[test]
fn empty_arguments_mean_empty_object() {
    let (d, _, _dir) = setup(vec![echo_tool()]);
    let out = call(&d, "echo", "  ");
    // `n` is required, so validation (not parsing) rejects it.
    assert!(
        out.text.contains("Invalid arguments for echo: /:"),
        "{}",
        out.text
    );
}

#[test]
fn strings_are_coerced_before_validation() {
    let (d, _, _dir) = setup(vec![echo_tool()]);
    let out = call(&d, "echo", r#"{"n": "42"}"#);
    assert_eq!(out.text, r#"{"got":{"n":42}}"#);
    assert_eq!(out.status, CallStatus::Ok);
}

#[test]
fn schema_violation_names_the_pointer() {
    let (d, _, _dir) = setup(vec![echo_tool()]);
    let out = call(&d, "echo", r#"{"n": "many"}"#);
    assert!(
        out.text.contains("Invalid arguments for echo: /n:"),
        "{}",
        out.text
    );
}

#[test]
fn handler_error_is_wrapped_by_the_registry() {
    let tool = ToolEntry::builder("fails", "test")
        .sync_handler(|_, _| Err(ToolError::other("io", "disk on fire")))
        .build()
        .unwrap();
    let (d, _, _dir) = setup(vec![tool]);
    assert_eq!(
        call(&d, "fails", "{}").text,
        r#"{"error":"Tool execution failed: io: disk on fire"}"#
    );
}

#[test]
fn handler_panic_is_contained() {
    let tool = ToolEntry::builder("boom", "test")
        .sync_handler(|_, _| panic!("bad day"))
        .build()
        .unwrap();
    let (d, _, _dir) = setup(vec![tool]);
    assert_eq!(
        call(&d, "boom", "{}").text,
        r#"{"error":"Tool execution failed: panic: bad day"}"#
    );
}

fn agent_tool(name: &str) -> ToolEntry {
    ToolEntry::builder(name, name)
        .sync_handler(|_, _| Ok(json!({"error": "must be handled by the agent loop"})))
        .build()
        .unwrap()
}

#[test]
fn agent_loop_tools_without_state_get_the_stub_error() {
    let (d, _, _dir) = setup(vec![agent_tool("todo")]);
    assert_eq!(
        call(&d, "todo", "{}").text,
        r#"{"error":"todo must be handled by the agent loop"}"#
    );
}

struct Loop;
impl AgentLoopHandler for Loop {
    fn handle(&self, name: &str, args: &Value, _: &ToolContext) -> Option<Value> {
        match name {
            "todo" => Some(json!({"todos": args})),
            "memory" => panic!("memory store exploded"),
            _ => None,
        }
    }
}

#[test]
fn agent_loop_tools_are_answered_by_the_state() {
    let (d, _, _dir) = setup(vec![agent_tool("todo")]);
    let d = d.with_agent_loop(Arc::new(Loop));
    assert_eq!(call(&d, "todo", r#"{"a":1}"#).text, r#"{"todos":{"a":1}}"#);
}

#[test]
fn unexpected_pipeline_failure_gets_the_outer_wrapper() {
    let (d, _, _dir) = setup(vec![agent_tool("memory")]);
    let d = d.with_agent_loop(Arc::new(Loop));
    assert_eq!(
        call(&d, "memory", "{}").text,
        r#"{"error":"Error executing memory: memory store exploded"}"#
    );
}

#[test]
fn pre_hook_block_becomes_the_result_and_is_observed() {
    let (d, hooks, _dir) = setup(vec![echo_tool()]);
    hooks.on_pre_tool_call("policy", |call| {
        if call.args["n"] == 13 {
            PreToolDecision::Block {
                message: "unlucky number".into(),
            }
        } else {
            PreToolDecision::Allow
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    hooks.on_post_tool_call("audit", move |r| seen2.lock().unwrap().push(r.status));
    let out = call(&d, "echo", r#"{"n": 13}"#);
    assert_eq!(out.text, r#"{"error":"unlucky number"}"#);
    assert_eq!(out.status, CallStatus::Blocked);
    assert_eq!(call(&d, "echo", r#"{"n": 1}"#).status, CallStatus::Ok);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![CallStatus::Blocked, CallStatus::Ok]
    );
}

#[test]
fn pre_hook_rewrites_arguments() {
    let (d, hooks, _dir) = setup(vec![echo_tool()]);
    hooks.on_pre_tool_call("rewriter", |_| PreToolDecision::Rewrite {
        args: json!({"n": "7", "text": "hi"}),
    });
    assert_eq!(
        call(&d, "echo", r#"{"n": 1}"#).text,
        r#"{"got":{"n":7,"text":"hi"}}"#
    );
}

#[test]
fn invalid_rewrite_is_refused() {
    let (d, hooks, _dir) = setup(vec![echo_tool()]);
    hooks.on_pre_tool_call("rewriter", |_| PreToolDecision::Rewrite {
        args: json!({"text": "no n"}),
    });
    let out = call(&d, "echo", r#"{"n": 1}"#);
    assert!(
        out.text
            .contains("rewritten by a pre_tool_call hook are invalid"),
        "{}",
        out.text
    );
    assert_eq!(out.status, CallStatus::Blocked);
}

#[test]
fn post_hook_sees_args_result_status_and_duration() {
    let (d, hooks, _dir) = setup(vec![echo_tool()]);
    let seen = Arc::new(Mutex::new(None));
    let seen2 = Arc::clone(&seen);
    hooks.on_post_tool_call("audit", move |r| {
        *seen2.lock().unwrap() = Some((
            r.tool.to_string(),
            r.args.clone(),
            r.result.to_string(),
            r.status,
            r.duration,
        ));
    });
    call(&d, "echo", r#"{"n": 2}"#);
    let (tool, args, result, status, duration) = seen.lock().unwrap().clone().unwrap();
    assert_eq!(
        (tool.as_str(), args, result.as_str(), status),
        (
            "echo",
            json!({"n": 2}),
            r#"{"got":{"n":2}}"#,
            CallStatus::Ok
        )
    );
    assert!(duration <= Duration::from_secs(5));
}

#[test]
fn transform_replaces_the_result_and_keeps_it_json() {
    let (d, hooks, _dir) = setup(vec![echo_tool()]);
    hooks.on_transform_tool_result("t", |_| Some("plain words".into()));
    assert_eq!(call(&d, "echo", r#"{"n": 2}"#).text, r#""plain words""#);
}

#[test]
fn oversized_result_is_spilled() {
    let tool = ToolEntry::builder("big", "test")
        .max_result_chars(100)
        .sync_handler(|_, _| Ok(json!({"output": "x".repeat(10_000)})))
        .build()
        .unwrap();
    let (d, _, _dir) = setup(vec![tool]);
    let out: Value = serde_json::from_str(&call(&d, "big", "{}").text).unwrap();
    assert_eq!(out["truncated"], true);
    assert_eq!(out["total_chars"], 10_013);
    assert!(std::path::Path::new(out["saved_to"].as_str().unwrap()).exists());
}

#[test]
fn bad_inputs_always_yield_json() {
    let (d, _, _dir) = setup(vec![echo_tool()]);
    for (name, args) in [
        ("echo", "null"),
        ("echo", "\"str\""),
        ("echo", "{{{{"),
        ("echo", "{\"n\": 1e400}"),
        ("", "{}"),
        ("echo\u{0}", "{}"),
        ("echo", "{\"n\": 1, \"n\": 2}"),
        ("echo", &"[".repeat(10_000)),
    ] {
        let out = call(&d, name, args);
        assert!(
            serde_json::from_str::<Value>(&out.text).is_ok(),
            "not JSON for {name:?} {args:.40}: {}",
            out.text
        );
    }
}

fn async_tool(calls: Arc<AtomicUsize>) -> ToolEntry {
    ToolEntry::builder("slow_async", "test")
        .handler(ToolHandler::from_async(move |_, _| {
            let calls = Arc::clone(&calls);
            async move {
                tokio::time::sleep(Duration::from_millis(5)).await;
                calls.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"ok": true}))
            }
        }))
        .build()
        .unwrap()
}

#[test]
fn sync_api_works_from_plain_threads_and_runtimes() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (d, _, _dir) = setup(vec![async_tool(Arc::clone(&calls)), echo_tool()]);
    // Plain thread.
    assert_eq!(call(&d, "slow_async", "{}").text, r#"{"ok":true}"#);
    // Inside a multi-thread runtime, from a task.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let d2 = d.clone();
    let text = rt.block_on(async move {
        tokio::spawn(async move { call(&d2, "slow_async", "{}").text })
            .await
            .unwrap()
    });
    assert_eq!(text, r#"{"ok":true}"#);
    // Inside a current-thread runtime.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert_eq!(
        rt.block_on(async { call(&d, "slow_async", "{}").text }),
        r#"{"ok":true}"#
    );
    // Many worker threads at once.
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                assert_eq!(call(&d, "slow_async", "{}").text, r#"{"ok":true}"#);
                assert_eq!(call(&d, "echo", r#"{"n":1}"#).status, CallStatus::Ok);
            });
        }
    });
    assert_eq!(calls.load(Ordering::SeqCst), 19);
}

#[tokio::test(flavor = "multi_thread")]
async fn async_api_runs_sync_and_async_handlers() {
    let (d, _, _dir) = setup(vec![async_tool(Arc::new(AtomicUsize::new(0))), echo_tool()]);
    let ctx = ToolContext::default();
    assert_eq!(
        d.handle_function_call_async("slow_async", "{}", &ctx).await,
        r#"{"ok":true}"#
    );
    assert_eq!(
        d.handle_function_call_async("echo", r#"{"n":"3"}"#, &ctx)
            .await,
        r#"{"got":{"n":3}}"#
    );
}

#[test]
fn read_file_offset_zero_is_clamped_and_the_result_says_so() {
    let home = tempfile::tempdir().unwrap();
    let services = Arc::new(tools_core::CoreServices::for_tests(tools_core::Home::at(
        home.path(),
    )));
    let file = home.path().join("notes.txt");
    std::fs::write(&file, "first\nsecond\n").unwrap();
    let (d, _, _dir) = setup(vec![
        tools_core::tools::read_file::build(&services).unwrap(),
    ]);
    let args = json!({"path": file, "offset": 0, "limit": 1}).to_string();
    let out: Value = serde_json::from_str(&call(&d, "read_file", &args).text).unwrap();
    assert_eq!(out["adjusted"], "offset 0 -> 1 (minimum 1)", "{out}");
    assert!(out["content"].as_str().unwrap().contains("first"), "{out}");
}
