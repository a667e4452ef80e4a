//! `toolhost mcp serve` over stdio, driven by the official Python MCP client (`mcp` on
//! PyPI, through `tests/fixtures/mcp/python_client.py`) and by toolhost's own MCP client.
//!
//! Tests using the third-party software need `.ci/setup-mcp.sh` and are
//! `#[ignore = "needs …"]`: run them with `--include-ignored`.

use super::mcp_common::*;
use serde_json::{Value, json};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json, toolhost_bin};

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn python_client_over_stdio() {
    require_mcp_software();
    let home = TestHome::new();
    home.write_config(&proxied_servers());
    let report = python_client(&json!({
        "target": {
            "command": toolhost_bin(),
            "args": ["--home", home.path(), "mcp", "serve",
                     "--toolsets", "time,everything", "--disable", "mcp-time",
                     "--progress-interval", "1"],
        },
        "steps": [
            {"op": "list"},
            {"op": "call", "name": "mcp__everything__get-sum", "args": {"a": 40, "b": 2}},
            {"op": "call", "name": "mcp__everything__get-sum", "args": {"a": "forty"}},
            {"op": "call", "name": "mcp__time__get_current_time", "args": {"timezone": "UTC"}},
            {"op": "call", "name": "mcp__everything__trigger-long-running-operation",
             "args": {"duration": 3, "steps": 3}, "progress": true},
        ],
    }));
    assert_eq!(report["server"], "toolhost");
    let results = report["results"].as_array().unwrap();
    // --toolsets takes aliases (server names), --disable removes a toolset.
    assert_eq!(
        results[0]["tools"],
        json!([
            "mcp__everything__echo",
            "mcp__everything__get-sum",
            "mcp__everything__get_prompt",
            "mcp__everything__list_prompts",
            "mcp__everything__list_resources",
            "mcp__everything__read_resource",
            "mcp__everything__trigger-long-running-operation"
        ])
    );
    assert_eq!(results[1]["is_error"], false);
    assert_eq!(
        results[1]["text"],
        json!({"result": "The sum of 40 and 2 is 42."}).to_string()
    );
    // Validation runs before the call reaches the proxied server.
    assert_eq!(results[2]["is_error"], true);
    assert!(
        results[2]["text"]
            .as_str()
            .unwrap()
            .contains("Invalid arguments for mcp__everything__get-sum"),
        "{}",
        results[2]
    );
    // Tools outside the selection do not exist for the client.
    assert!(
        results[3]["exception"]
            .as_str()
            .unwrap()
            .contains("Unknown tool: mcp__time__get_current_time"),
        "{}",
        results[3]
    );
    // A long call sends progress notifications.
    assert_eq!(results[4]["is_error"], false, "{}", results[4]);
    let progress = results[4]["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "{}", results[4]);
    assert!(
        progress[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("mcp__everything__trigger-long-running-operation: running for"),
        "{progress:?}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn toolhost_client_against_toolhost_server_over_stdio() {
    require_mcp_software();
    let inner = TestHome::new();
    inner.write_config(&proxied_servers());
    let outer = TestHome::new();
    outer.write_config(&format!(
        "[mcp_servers.inner]\ncommand = {}\nargs = [\"--home\", {}, \"mcp\", \"serve\", \"--toolsets\", \"time,file\"]\n",
        toml_str(&toolhost_bin()),
        toml_str(inner.path())
    ));
    let out = outer.run(&["mcp", "list", "--json"], None);
    let list = stdout_json(&out);
    assert_eq!(list[0]["status"], "connected", "{list}");
    assert_eq!(
        list[0]["tools"],
        json!([
            "mcp__inner__mcp__time__convert_time",
            "mcp__inner__mcp__time__get_current_time",
            "mcp__inner__mcp__time__get_prompt",
            "mcp__inner__mcp__time__list_prompts",
            "mcp__inner__mcp__time__list_resources",
            "mcp__inner__mcp__time__read_resource",
            "mcp__inner__patch",
            "mcp__inner__read_file",
            "mcp__inner__search_files",
            "mcp__inner__write_file",
        ])
    );
    // A file tool through two toolhosts.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "hello\nworld\n").unwrap();
    let args = json!({"path": file, "offset": 2}).to_string();
    let out = outer.run(&["call", "mcp__inner__read_file", &args], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let read: Value = serde_json::from_str(stdout_json(&out)["result"].as_str().unwrap()).unwrap();
    assert_eq!(read["content"], "2|world");
    let out = outer.run(
        &[
            "call",
            "mcp__inner__mcp__time__get_current_time",
            r#"{"timezone":"Europe/Paris"}"#,
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let value = stdout_json(&out);
    assert!(
        value["result"].as_str().unwrap().contains("Europe/Paris"),
        "{value}"
    );
    // The inner toolhost validates too; its error comes back unwrapped.
    let out = outer.run(
        &["call", "mcp__inner__mcp__time__get_current_time", "{}"],
        None,
    );
    assert!(!out.status.success());
    let error = stdout_json(&out)["error"].as_str().unwrap().to_string();
    assert!(error.contains("timezone"), "{error}");
}

#[test]
fn http_serving_is_loopback_only() {
    let home = TestHome::new();
    let out = home.run(&["mcp", "serve", "--http", "0.0.0.0:0"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("only loopback addresses"),
        "{}",
        stderr(&out)
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn file_tools_over_mcp() {
    require_mcp_software();
    let home = TestHome::new();
    let dir = tempfile::tempdir().unwrap();
    let note = dir.path().join("note.txt");
    let missing = dir.path().join("missing.txt");
    let report = python_client(&json!({
        "target": {
            "command": toolhost_bin(),
            "args": ["--home", home.path(), "mcp", "serve", "--toolsets", "file"],
        },
        "steps": [
            {"op": "list"},
            {"op": "call", "name": "write_file", "args": {"path": note, "content": "alpha\nbeta\n"}},
            {"op": "call", "name": "read_file", "args": {"path": note, "offset": 2}},
            {"op": "call", "name": "read_file", "args": {"path": missing}},
        ],
    }));
    let results = report["results"].as_array().unwrap();
    let tools = results[0]["tools"].as_array().unwrap();
    for tool in ["patch", "read_file", "search_files", "write_file"] {
        assert!(
            tools.contains(&json!(tool)),
            "{tool} missing from {tools:?}"
        );
    }
    assert_eq!(results[1]["is_error"], false, "{}", results[1]);
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "alpha\nbeta\n");
    assert_eq!(results[2]["is_error"], false, "{}", results[2]);
    let read: Value = serde_json::from_str(results[2]["text"].as_str().unwrap()).unwrap();
    assert_eq!(read["content"], "2|beta");
    assert_eq!(results[3]["is_error"], true, "{}", results[3]);
}

/// A flagged command over MCP: denied without a human, asked through elicitation when
/// the client supports it. The command is harmless if it runs (a chmod of a temp file).
#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn dangerous_command_is_denied_or_asked_over_mcp() {
    require_mcp_software();
    use std::os::unix::fs::PermissionsExt;
    let home = TestHome::new();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("shared.txt");
    std::fs::write(&target, "x").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let command = format!("chmod 0777 {}", target.display());
    let serve = json!({
        "command": toolhost_bin(),
        "args": ["--home", home.path(), "mcp", "serve", "--toolsets", "terminal"],
    });
    let mode = || std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;

    // No elicitation capability: the non-interactive policy (deny) applies.
    let report = python_client(&json!({
        "target": serve,
        "steps": [{"op": "call", "name": "terminal", "args": {"command": command}}],
    }));
    let result = &report["results"][0];
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["text"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("approv"),
        "{result}"
    );
    assert_eq!(mode(), 0o600);

    // The client is asked and says no.
    let report = python_client(&json!({
        "target": serve,
        "elicit": "deny",
        "steps": [{"op": "call", "name": "terminal", "args": {"command": command}}],
    }));
    assert_eq!(report["results"][0]["is_error"], true, "{report}");
    let asked = report["elicitations"][0].as_str().unwrap();
    assert!(asked.contains("chmod 0777"), "{asked}");
    assert_eq!(mode(), 0o600);

    // The client is asked and allows it once.
    let report = python_client(&json!({
        "target": serve,
        "elicit": "once",
        "steps": [{"op": "call", "name": "terminal", "args": {"command": command}}],
    }));
    assert_eq!(report["results"][0]["is_error"], false, "{report}");
    assert_eq!(mode(), 0o777);

    // toolhost's own client declares no elicitation: the served toolhost denies.
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let outer = TestHome::new();
    outer.write_config(&format!(
        "[mcp_servers.inner]\ncommand = {}\nargs = [\"--home\", {}, \"mcp\", \"serve\", \"--toolsets\", \"terminal\"]\n",
        toml_str(&toolhost_bin()),
        toml_str(home.path())
    ));
    let args = json!({ "command": command }).to_string();
    let out = outer.run(&["call", "mcp__inner__terminal", &args], None);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(
        stdout(&out).to_lowercase().contains("approv"),
        "{}",
        stdout(&out)
    );
    assert_eq!(mode(), 0o600);
}
