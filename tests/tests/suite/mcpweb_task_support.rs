//! MCP server tools that can only be called as tasks (`execution.taskSupport =
//! "required"`, MCP 2025-11-25): toolhost makes plain calls only, so it leaves them out —
//! of its registry, of `toolhost mcp serve`, and of cached listings — and says why in
//! `toolhost mcp list`. Against a tiny fixture server (`task_only_server.py`, which
//! lists the task-only tool on a second page) and the reference server-everything
//! (whose `simulate-research-query` is task-only), over stdio and streamable HTTP.

use std::process::Output;

use super::mcp_common::*;
use serde_json::{Value, json};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json};

const REASON_START: &str = "the server requires calling it as an MCP task";

fn fixture_home() -> TestHome {
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.tasks]\ncommand = \"python3\"\nargs = [{}]\n",
        toml_str(&fixture("task_only_server.py"))
    ));
    home
}

/// The one server of `mcp list --json`.
fn listed(out: &Output) -> Value {
    let list = stdout_json(out);
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    list[0].clone()
}

fn skipped_reason<'a>(server: &'a Value, raw: &str) -> &'a str {
    server["skipped_tools"]
        .as_array()
        .and_then(|s| s.iter().find(|t| t["name"] == raw))
        .and_then(|t| t["reason"].as_str())
        .unwrap_or_else(|| panic!("{raw} not among the skipped tools: {server}"))
}

fn mcp_names(out: &Output) -> Vec<String> {
    stdout_json(out)
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|row| row["name"].as_str())
        .filter(|n| n.starts_with("mcp__"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_task_only_tool_is_not_registered_and_mcp_list_says_why() {
    let home = fixture_home();
    let out = home.run(&["mcp", "list", "--json"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let server = listed(&out);
    assert_eq!(server["status"], "connected", "{server}");
    assert_eq!(server["tools"], json!(["mcp__tasks__plain"]));
    assert!(
        skipped_reason(&server, "research").starts_with(REASON_START),
        "{server}"
    );
    let table = home.run(&["mcp", "list"], None);
    assert!(
        stdout(&table).contains(&format!("left out: research: {REASON_START}")),
        "{}",
        stdout(&table)
    );
}

#[test]
fn the_reason_is_logged_once() {
    let home = fixture_home();
    let out = home.run(&["mcp", "list", "--json"], None);
    let log = stderr(&out);
    assert_eq!(
        log.matches("MCP tool left out").count(),
        1,
        "one warning naming the tool: {log}"
    );
    assert!(log.contains("research"), "{log}");
}

#[test]
fn a_cached_listing_keeps_the_task_only_tool_out() {
    let home = fixture_home();
    let first = home.run(&["tools", "--json"], None);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(mcp_names(&first), ["mcp__tasks__plain"]);
    let cached = home.run(&["tools", "--json"], None);
    assert_eq!(mcp_names(&cached), ["mcp__tasks__plain"]);
}

#[test]
fn calling_the_task_only_tool_is_an_unknown_tool_error() {
    let home = fixture_home();
    let out = home.run(&["call", "mcp__tasks__research", "{}"], None);
    assert!(!out.status.success());
    let value: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(&out)));
    let error = value["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("offers research but toolhost left it out") && error.contains(REASON_START),
        "{value}"
    );
    let plain = home.run(&["call", "mcp__tasks__plain", "{}"], None);
    assert!(plain.status.success(), "{}", stdout(&plain));
    assert!(stdout(&plain).contains("plain ok"), "{}", stdout(&plain));
}

#[test]
fn mcp_serve_does_not_offer_the_task_only_tool() {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::process::Stdio;
    let home = fixture_home();
    let mut child = home
        .command()
        .args(["mcp", "serve", "--toolsets", "mcp-tasks"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolhost mcp serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    for message in [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {"requests": {"elicitation": {"create": {}}}}},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").expect("write");
    }
    stdin.flush().expect("flush");
    let listing = loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).expect("read") > 0,
            "mcp serve closed stdout"
        );
        let answer: Value = serde_json::from_str(&line).expect("JSON");
        if answer["id"] == 1 {
            break answer;
        }
    };
    drop(stdin);
    let _ = child.wait();
    let names: Vec<&str> = listing["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listing}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["mcp__tasks__plain"], "{listing}");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn server_everything_task_only_tool_is_left_out_over_stdio() {
    require_mcp_software();
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.everything]\ncommand = {}\n",
        toml_str(&everything())
    ));
    let out = home.run(&["mcp", "list", "--json"], None);
    let server = listed(&out);
    assert_eq!(server["status"], "connected", "{server}");
    let tools = server["tools"].to_string();
    assert!(tools.contains("mcp__everything__get-sum"), "{tools}");
    assert!(!tools.contains("simulate-research-query"), "{tools}");
    assert!(
        skipped_reason(&server, "simulate-research-query").starts_with(REASON_START),
        "{server}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn server_everything_task_only_tool_is_left_out_over_http() {
    require_mcp_software();
    let upstream = EverythingHttp::start();
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.everything]\nurl = {}\n",
        toml_string(&upstream.url)
    ));
    let out = home.run(&["mcp", "list", "--json"], None);
    let server = listed(&out);
    assert_eq!(server["status"], "connected", "{server}");
    let tools = server["tools"].to_string();
    assert!(tools.contains("mcp__everything__get-sum"), "{tools}");
    assert!(!tools.contains("simulate-research-query"), "{tools}");
    assert!(
        skipped_reason(&server, "simulate-research-query").starts_with(REASON_START),
        "{server}"
    );
}
