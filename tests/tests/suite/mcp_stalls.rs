//! A configured MCP server that never answers `initialize` must not stall commands
//! that do not use it, must be remembered instead of waited on again, and must not be
//! left running when toolhost is stopped by a signal (docs/mcp.md, "Start-up and
//! stalls").
//!
//! The hanging server is a shell script: it notes its pid in a marker file and sleeps.
//! No test measures time: each proves the server was never started, or was started and
//! still hangs while toolhost answered, or is gone after toolhost exited.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Stdio};

use super::mcp_common::*;
use serde_json::{Value, json};
use toolhost_tests::{TestHome, stderr, stdout_json};

/// A home whose one MCP server, `hang`, starts and never answers.
struct HangingHome {
    home: TestHome,
    marker: PathBuf,
    _dir: tempfile::TempDir,
}

impl HangingHome {
    fn new(connect_timeout: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("starts");
        let script = dir.path().join("hang.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\necho $$ >> '{}'\nexec sleep 600\n",
                marker.display()
            ),
        )
        .unwrap();
        let mut perms = std::fs::metadata(&script).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&script, perms).unwrap();
        let home = TestHome::new();
        home.write_config(&format!(
            "[mcp_servers.hang]\ncommand = {}\nconnect_timeout = {connect_timeout}\n",
            toml_str(&script)
        ));
        HangingHome {
            home,
            marker,
            _dir: dir,
        }
    }

    /// Pids of every start so far.
    fn starts(&self) -> Vec<u32> {
        std::fs::read_to_string(&self.marker)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    fn wait_started(&self) -> u32 {
        assert!(
            wait_until(|| !self.starts().is_empty()),
            "hang never started"
        );
        self.starts()[0]
    }
}

impl Drop for HangingHome {
    fn drop(&mut self) {
        for pid in self.starts() {
            if process_alive(pid) && process_group(pid) == Some(pid) {
                kill_process_group(pid);
            }
        }
    }
}

/// `toolhost mcp serve ARGS` on stdio after the handshake and one `tools/list`.
fn serve_and_list(home: &TestHome, args: &[&str]) -> (Child, BufReader<ChildStdout>, Value) {
    let mut child = home
        .command()
        .args(["mcp", "serve"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolhost mcp serve");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let stdin = child.stdin.as_mut().expect("stdin");
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "stall-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{message}").expect("write");
    }
    stdin.flush().expect("flush");
    let mut listing = Value::Null;
    while listing.is_null() {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).expect("read") > 0,
            "serve closed stdout"
        );
        let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        if message["id"] == 2 {
            listing = message;
        }
    }
    (child, out, listing)
}

fn tool_names(listing: &Value) -> Vec<String> {
    listing["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn dispatch_of_a_core_tool_never_starts_a_configured_server() {
    let hang = HangingHome::new(300);
    let batch = json!({"tool_calls": [{"id": "1", "type": "function", "function": {
        "name": "read_file", "arguments": "{\"path\": \"/etc/hostname\"}"}}]});
    let out = hang.home.run(&["dispatch"], Some(&batch.to_string()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(hang.starts(), Vec::<u32>::new());
}

#[test]
fn mcp_serve_with_toolsets_file_never_starts_a_configured_server() {
    let hang = HangingHome::new(300);
    let (mut child, _out, listing) = serve_and_list(&hang.home, &["--toolsets", "file"]);
    assert!(
        tool_names(&listing).contains(&"read_file".to_string()),
        "{listing}"
    );
    drop(child.stdin.take());
    assert!(child.wait().expect("wait").success());
    assert_eq!(hang.starts(), Vec::<u32>::new());
}

#[test]
fn mcp_serve_answers_while_a_needed_server_still_hangs_and_stops_it_on_exit() {
    let hang = HangingHome::new(300);
    let (mut child, _out, listing) = serve_and_list(&hang.home, &[]);
    assert!(
        tool_names(&listing).contains(&"read_file".to_string()),
        "{listing}"
    );
    // Started in the background, still in its 300 s connect window: serving did not
    // wait for it.
    let pid = hang.wait_started();
    assert!(process_alive(pid));
    drop(child.stdin.take());
    assert!(child.wait().expect("wait").success());
    assert!(wait_gone(pid), "the hanging server outlived mcp serve");
}

#[test]
fn a_failed_server_is_remembered_by_listing_commands_and_retried_by_mcp_list() {
    let hang = HangingHome::new(1);
    let first = hang.home.run(&["tools"], None);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(hang.starts().len(), 1);
    for args in [&["tools"][..], &["schema"], &["toolsets"]] {
        let out = hang.home.run(args, None);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    assert_eq!(hang.starts().len(), 1, "remembered, not waited on again");
    let list = hang.home.run(&["mcp", "list", "--json"], None);
    assert_eq!(hang.starts().len(), 2, "mcp list tries again");
    let status = &stdout_json(&list)[0];
    assert_eq!(status["status"], "failed", "{status}");
}

#[test]
fn a_skipped_server_explains_itself_to_a_call_of_its_tool() {
    let hang = HangingHome::new(1);
    let _ = hang.home.run(&["tools"], None);
    let out = hang.home.run(&["call", "mcp__hang__anything", "{}"], None);
    let text = format!("{}{}", toolhost_tests::stdout(&out), stderr(&out));
    assert!(text.contains("MCP server 'hang'"), "{text}");
}

fn terminate(child: &Child) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid");
    // SAFETY: signals only the toolhost child this test started.
    let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(rc, 0);
}

fn sigterm_leaves_no_server(home: &HangingHome, args: &[&str]) {
    let mut child = home
        .home
        .command()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolhost");
    let pid = home.wait_started();
    terminate(&child);
    let status = child.wait().expect("wait");
    assert!(!status.success(), "{status:?}");
    assert!(wait_gone(pid), "{args:?}: the hanging server was orphaned");
}

#[test]
fn sigterm_while_a_listing_command_connects_leaves_no_server_behind() {
    let hang = HangingHome::new(300);
    sigterm_leaves_no_server(&hang, &["tools"]);
}

#[test]
fn sigterm_while_mcp_list_connects_leaves_no_server_behind() {
    let hang = HangingHome::new(300);
    sigterm_leaves_no_server(&hang, &["mcp", "list"]);
}
