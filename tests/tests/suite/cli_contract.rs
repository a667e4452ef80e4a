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
fn dispatch_without_tool_calls_says_what_was_expected_and_exits_2() {
    let home = TestHome::new();
    for input in [r#"{"role":"assistant","content":"hi"}"#, "[1,2,3]", "null"] {
        let out = home.run(&["dispatch"], Some(input));
        assert_eq!(out.status.code(), Some(2), "{input}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{input}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("expected an assistant message with `tool_calls`"),
            "{input}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn dispatch_with_an_empty_tool_calls_list_prints_an_empty_array() {
    let home = TestHome::new();
    let out = home.run(
        &["dispatch"],
        Some(r#"{"role":"assistant","content":"hi","tool_calls":[]}"#),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
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

/// The acceptance case of `toolhost dispatch`: five calls mixing file tools, an unknown tool, invalid
/// JSON arguments and a schema-invalid call give five tool messages, in order, each
/// valid JSON with the documented error strings.
#[test]
fn dispatch_acceptance_five_mixed_calls() {
    let home = TestHome::new();
    let work = tempfile::tempdir().unwrap();
    let note = work.path().join("note.txt");
    std::fs::write(&note, "alpha\nbeta\n").unwrap();
    let out_file = work.path().join("out.txt");
    let input = assistant_message(json!([
        {"id": "1", "type": "function", "function": {"name": "read_file",
            "arguments": json!({"path": note}).to_string()}},
        {"id": "2", "type": "function", "function": {"name": "write_file",
            "arguments": json!({"path": out_file, "content": "written\n"}).to_string()}},
        {"id": "3", "type": "function", "function": {"name": "teleport", "arguments": "{}"}},
        {"id": "4", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}},
        {"id": "5", "type": "function", "function": {"name": "read_file", "arguments": "{\"limit\": \"lots\"}"}}
    ]));
    let out = home.run(&["dispatch"], Some(&input));
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let messages = stdout_json(&out);
    let messages = messages.as_array().unwrap();
    assert_eq!(messages.len(), 5);
    let contents: Vec<Value> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            assert_eq!(m["role"], "tool");
            assert_eq!(m["tool_call_id"], (i + 1).to_string());
            serde_json::from_str(m["content"].as_str().unwrap()).expect("content is JSON")
        })
        .collect();
    assert!(
        contents[0]["content"].as_str().unwrap().contains("alpha"),
        "{}",
        contents[0]
    );
    assert!(contents[1].get("error").is_none(), "{}", contents[1]);
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "written\n");
    assert_eq!(contents[2], json!({"error": "Unknown tool: teleport"}));
    assert!(
        contents[3]["error"]
            .as_str()
            .unwrap()
            .starts_with("Invalid JSON arguments for read_file:")
    );
    let schema_error = contents[4]["error"].as_str().unwrap();
    assert!(
        schema_error.starts_with("Invalid arguments for read_file:"),
        "{schema_error}"
    );
    assert!(schema_error.contains("/limit"), "{schema_error}");
}

#[test]
fn shipped_example_message_runs() {
    let home = TestHome::new();
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../host/examples/assistant-message.json"
    );
    let out = home
        .command()
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(["dispatch", example])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let messages = stdout_json(&out);
    assert_eq!(messages.as_array().unwrap().len(), 5);
}

#[test]
fn call_runs_a_file_tool_and_exits_0() {
    let home = TestHome::new();
    let work = tempfile::tempdir().unwrap();
    let path = work.path().join("a.txt");
    std::fs::write(&path, "hello\n").unwrap();
    let out = home.run(
        &["call", "read_file", &json!({"path": path}).to_string()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout_json(&out)["content"]
            .as_str()
            .unwrap()
            .contains("hello")
    );
}

#[test]
fn call_with_schema_error_exits_1() {
    let home = TestHome::new();
    let out = home.run(&["call", "read_file", "{}"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout_json(&out)["error"]
            .as_str()
            .unwrap()
            .contains("required")
    );
}

#[test]
fn todo_state_persists_across_calls_of_a_session() {
    let home = TestHome::new();
    let write =
        json!({"todos": [{"id": "1", "content": "ship it", "status": "in_progress"}]}).to_string();
    let out = home.run(&["call", "todo", &write, "--session-id", "s1"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let read = home.run(&["call", "todo", "{}", "--session-id", "s1"], None);
    assert!(stdout(&read).contains("ship it"), "{}", stdout(&read));
}

#[test]
fn tools_json_has_the_contract_fields() {
    let home = TestHome::new();
    let out = home.run(&["tools", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rows = stdout_json(&out);
    let read_file = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "read_file")
        .expect("read_file listed");
    for key in [
        "name",
        "toolset",
        "available",
        "reason",
        "source",
        "emoji",
        "description",
    ] {
        assert!(read_file.get(key).is_some(), "missing {key}: {read_file}");
    }
    assert_eq!(read_file["toolset"], "file");
    assert_eq!(read_file["source"], "core");
    assert_eq!(read_file["available"], true);
}

#[test]
fn tools_respects_toolsets_and_disable() {
    let home = TestHome::new();
    let names = |args: &[&str]| -> Vec<String> {
        let out = home.run(args, None);
        stdout_json(&out)
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&["tools", "--json", "--toolsets", "file"]),
        ["patch", "read_file", "search_files", "write_file"]
    );
    let without = names(&[
        "tools",
        "--json",
        "--toolsets",
        "file,todo",
        "--disable",
        "todo",
    ]);
    assert!(!without.contains(&"todo".to_string()));
    assert!(without.contains(&"read_file".to_string()));
}

#[test]
fn unknown_names_in_selection_flags_are_errors() {
    let home = TestHome::new();
    for args in [
        &["tools", "--toolsets", "file,not_a_toolset"][..],
        &["schema", "--toolsets", "not_a_toolset"],
        &["tools", "--disable", "not_a_tool"],
        &["schema", "--toolsets", "file", "--disable", "not_a_tool"],
        // A tool name is not a toolset.
        &["tools", "--toolsets", "read_file"],
    ] {
        let out = home.run(args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("not_a_") || err.contains("\"read_file\""),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn disable_accepts_tool_names() {
    let home = TestHome::new();
    let out = home.run(
        &[
            "tools",
            "--json",
            "--toolsets",
            "file",
            "--disable",
            "read_file,patch",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let names: Vec<String> = stdout_json(&out)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["search_files", "write_file"]);
}

#[test]
fn toolsets_show_which_tools_are_unavailable_and_why() {
    let home = TestHome::new();
    let registered: Vec<String> = stdout_json(&home.run(&["tools", "--json"], None))
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["available"] == true)
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let out = home.run(&["toolsets", "--json"], None);
    let list = stdout_json(&out);
    let mut saw_unregistered = false;
    for toolset in list.as_array().unwrap() {
        let tools: Vec<&str> = toolset["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let unavailable = toolset["unavailable"].as_array().unwrap();
        for tool in &tools {
            let listed = unavailable.iter().find(|u| u["name"] == *tool);
            // Exactly the tools that are not available are listed, each with a reason.
            assert_eq!(
                listed.is_none(),
                registered.iter().any(|r| r == tool),
                "{tool} in {toolset}"
            );
            if let Some(entry) = listed {
                let reason = entry["reason"].as_str().unwrap();
                assert!(!reason.is_empty(), "{entry}");
                saw_unregistered |= reason.starts_with("not registered");
            }
        }
        assert_eq!(
            toolset["available"],
            unavailable.len() < tools.len(),
            "{toolset}"
        );
    }
    assert!(saw_unregistered, "no toolset names an unregistered tool");
    // The table says how many tools are available.
    let table = stdout(&home.run(&["toolsets"], None));
    assert!(
        table.contains(" tools available; not registered: "),
        "{table}"
    );
}

#[test]
fn toolsets_json_resolves_tools() {
    let home = TestHome::new();
    let out = home.run(&["toolsets", "--json"], None);
    let list = stdout_json(&out);
    let file = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "file")
        .unwrap();
    for key in [
        "name",
        "kind",
        "description",
        "tools",
        "available",
        "unavailable",
    ] {
        assert!(file.get(key).is_some(), "missing {key}");
    }
    assert_eq!(
        file["tools"],
        json!(["patch", "read_file", "search_files", "write_file"])
    );
    let debugging = list
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "debugging")
        .unwrap();
    assert!(
        debugging["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("read_file"))
    );
}

#[test]
fn schema_prints_sorted_openai_definitions() {
    let home = TestHome::new();
    let out = home.run(&["schema", "--toolsets", "file"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let defs = stdout_json(&out);
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["type"], "function");
            assert!(d["function"]["parameters"]["type"] == "object");
            d["function"]["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(names, ["patch", "read_file", "search_files", "write_file"]);
}

#[test]
fn custom_toolsets_from_config() {
    let home = TestHome::new();
    home.write_config("[toolsets.custom.reader]\ndescription = \"read only\"\ntools = [\"read_file\", \"search_files\"]\n");
    let out = home.run(&["schema", "--toolsets", "reader"], None);
    let defs = stdout_json(&out);
    assert_eq!(defs.as_array().unwrap().len(), 2);
}

/// Whether process `pid` is gone (or a zombie waiting for a reaper that is not us).
#[cfg(unix)]
fn process_is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_cancels_a_call_and_kills_its_command() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let home = TestHome::new();
    // Not in toolhost's home: the kernel floor keeps that read-only for the command.
    let scratch = tempfile::tempdir().unwrap();
    let pid_file = scratch.path().join("command.pid");
    let command = format!("sh -c 'echo $$ > {}; exec sleep 60'", pid_file.display());
    let args = json!({ "command": command }).to_string();
    let child = home
        .command()
        .args(["call", "terminal", &args])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let started = Instant::now();
    let command_pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let toolhost_pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling a child process we spawned and have not reaped.
    assert_eq!(unsafe { libc::kill(toolhost_pid, libc::SIGINT) }, 0);

    let interrupted = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        interrupted.elapsed() < Duration::from_secs(20),
        "toolhost took {:?} to stop after Ctrl-C",
        interrupted.elapsed()
    );
    // The terminal's own answer for an interrupted command (Hermes' shape), printed
    // like any result: not an error object, so exit 0 by the contract.
    let result = stdout_json(&out);
    assert_eq!(result["exit_code"], 130, "{result}");
    assert!(
        result["output"].as_str().unwrap().contains("interrupted"),
        "{result}"
    );
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));

    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_is_gone(command_pid) {
        assert!(
            Instant::now() < deadline,
            "the command (pid {command_pid}) outlived toolhost"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
