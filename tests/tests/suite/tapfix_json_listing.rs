//! A streamable-HTTP MCP server that answers `tools/list` with a plain `application/json`
//! body (not an event stream) has its task-only tools (`execution.taskSupport =
//! "required"`) left out like any other server's, over every page of the listing; and a
//! listing answer toolhost cannot read — cut off, or past the 16 MiB limit — offers no
//! tool at all rather than letting the task-only one through. Against a standard-library
//! fixture (`json_answers_server.py`) and the official Python SDK with
//! `json_response=True` (`sdk_json_task_server.py`).

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::mcp_common::*;
use serde_json::{Value, json};
use toolhost_tests::{TestHome, stderr, stdout_json};

const REASON_START: &str = "the server requires calling it as an MCP task";

/// A fixture HTTP server on a loopback port; killed on drop.
struct FixtureServer {
    child: Child,
    url: String,
}

impl FixtureServer {
    /// Run `python script PORT args…` and wait until it accepts connections.
    fn start(python: &Path, script: &str, args: &[&str]) -> Self {
        let port = free_port();
        let child = Command::new(python)
            .arg(fixture(script))
            .arg(port.to_string())
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the fixture server");
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "{script} did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        FixtureServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mcp list --json`'s one server, for a home configured with `url` as server `json`.
fn listed(url: &str) -> Value {
    let home = TestHome::new();
    home.write_config(&format!("[mcp_servers.json]\nurl = {}\n", toml_string(url)));
    let out = home.run(&["mcp", "list", "--json"], None);
    let list = stdout_json(&out);
    assert_eq!(
        list.as_array().map(Vec::len),
        Some(1),
        "{list}\n{}",
        stderr(&out)
    );
    list[0].clone()
}

fn assert_task_only_tool_left_out(server: &Value) {
    assert_eq!(server["status"], "connected", "{server}");
    assert_eq!(server["tools"], json!(["mcp__json__plain"]), "{server}");
    let reason = server["skipped_tools"]
        .as_array()
        .and_then(|s| s.iter().find(|t| t["name"] == "research"))
        .and_then(|t| t["reason"].as_str())
        .unwrap_or_else(|| panic!("research not among the skipped tools: {server}"));
    assert!(reason.starts_with(REASON_START), "{server}");
}

#[test]
fn a_plain_json_listing_leaves_the_task_only_tool_out() {
    let upstream = FixtureServer::start(Path::new("python3"), "json_answers_server.py", &["json"]);
    assert_task_only_tool_left_out(&listed(&upstream.url));
}

#[test]
fn an_unreadable_listing_offers_no_tool() {
    for mode in ["malformed", "huge"] {
        let upstream =
            FixtureServer::start(Path::new("python3"), "json_answers_server.py", &[mode]);
        let server = listed(&upstream.url);
        assert_ne!(server["status"], "connected", "{mode}: {server}");
        let tools = server["tools"].as_array().map_or(0, Vec::len);
        assert_eq!(tools, 0, "{mode}: no tool of an unread listing: {server}");
    }
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn python_sdk_json_response_server_task_only_tool_is_left_out() {
    require_mcp_software();
    let upstream = FixtureServer::start(&python(), "sdk_json_task_server.py", &[]);
    assert_task_only_tool_left_out(&listed(&upstream.url));
}
