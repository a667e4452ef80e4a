//! Tools and every hook kind from a plugin taking part in dispatch end to end.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::plugins::{PluginsSettings, Roots, load_plugins};
use toolhost_tests::plugin_fixtures::{add_plugin, isolated, run_with_limit};
use toolhost_tests::{TestHome, stderr, stdout_json};
use tools_core::hooks::{ApprovalEvent, TerminalOutput};
use tools_core::{Home, Hooks, Registry};

fn hook_log(home: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(home.join("hooks.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn plugin_tools_and_tool_call_hooks_in_toolhost_dispatch() {
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "hooks", "fixture_hooks", "");
    let calls = [
        ("c_block", "good_echo", json!({"text": "forbidden"})),
        ("c_rewrite", "good_echo", json!({"n": 2, "scale": true})),
        ("c_transform", "good_noop", json!({})),
        ("c_hook_panic", "good_echo", json!({"text": "panic"})),
        ("c_plain", "good_echo", json!({"text": "fine"})),
    ];
    let message = json!({
        "choices": [{"message": {"role": "assistant", "tool_calls": calls.iter().map(|(id, name, args)| json!({
            "id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}
        })).collect::<Vec<_>>()}}]
    });
    let out = run_with_limit(
        isolated(&home),
        &["dispatch", "--task-id", "t1"],
        Some(&message.to_string()),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let messages = stdout_json(&out);
    let content = |i: usize| -> Value {
        assert_eq!(messages[i]["tool_call_id"], calls[i].0);
        serde_json::from_str(messages[i]["content"].as_str().unwrap()).unwrap()
    };
    // pre_tool_call: block.
    assert_eq!(
        content(0),
        json!({"error": "hooks fixture blocks forbidden text"})
    );
    // pre_tool_call: rewrite (n * 10, `scale` dropped), seen by the handler.
    assert_eq!(content(1), json!({"echo": {"n": 20}, "task": "t1"}));
    // transform_tool_result.
    assert_eq!(content(2), json!({"transformed": true}));
    // A pre_tool_call hook that panics blocks the call (fail closed).
    assert_eq!(
        content(3),
        json!({"error": "pre_tool_call hook of plugin hooks failed: pre_tool_call hook panicked: pre hook exploded"})
    );
    assert_eq!(content(4), json!({"echo": {"text": "fine"}, "task": "t1"}));

    // post_tool_call saw every call, with its status and the final arguments.
    let log = hook_log(home.path());
    let post: Vec<&Value> = log
        .iter()
        .filter(|l| l["kind"] == "post_tool_call")
        .collect();
    let by_id = |id: &str| {
        *post
            .iter()
            .find(|l| l["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no post_tool_call for {id}: {log:#?}"))
    };
    assert_eq!(by_id("c_block")["status"], "blocked");
    assert_eq!(by_id("c_rewrite")["status"], "ok");
    assert_eq!(by_id("c_rewrite")["args"], json!({"n": 20}));
    assert_eq!(by_id("c_transform")["status"], "ok");
    assert_eq!(by_id("c_hook_panic")["status"], "blocked");
    assert_eq!(by_id("c_plain")["status"], "ok");
}

#[test]
fn terminal_output_and_approval_hooks_from_a_plugin() {
    // These hooks are fired by the terminal tool and the approval gate; here the host's
    // hook registry fires them directly, exactly as those callers do.
    let dir = tempfile::tempdir().unwrap();
    add_plugin(&dir.path().join("plugins"), "hooks", "fixture_hooks", "");
    let home = Home::at(dir.path());
    let roots = Roots {
        user: Some(home.plugins_dir()),
        ..Roots::default()
    };
    let registry = Arc::new(Registry::new());
    let hooks = Arc::new(Hooks::new());
    let set = load_plugins(
        &home,
        &PluginsSettings::default(),
        &roots,
        &registry,
        &hooks,
    );
    let record = set.get("hooks").unwrap();
    assert_eq!(
        record.hooks,
        [
            "pre_tool_call",
            "post_tool_call",
            "transform_tool_result",
            "transform_terminal_output",
            "pre_approval_request",
            "post_approval_response"
        ]
    );

    let replaced = hooks.run_transform_terminal_output(&TerminalOutput {
        command: "echo hello",
        output: "hello\n",
        exit_code: 0,
        task_id: "t",
        env_type: "local",
    });
    assert_eq!(replaced.as_deref(), Some("HELLO\n"));

    let keys = vec!["recursive delete".to_string()];
    let mut event = ApprovalEvent {
        command: "rm -rf build",
        description: "recursive delete",
        rule_keys: &keys,
        session_key: "s",
        surface: "cli",
        tool_call_id: "c1",
        choice: None,
    };
    hooks.run_pre_approval_request(&event);
    event.choice = Some("once");
    hooks.run_post_approval_response(&event);
    let log = hook_log(dir.path());
    assert!(log.contains(&json!({"kind": "pre_approval_request", "command": "rm -rf build"})));
    assert!(log.contains(
        &json!({"kind": "post_approval_response", "command": "rm -rf build", "choice": "once"})
    ));
}
