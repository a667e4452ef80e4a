//! Under `toolhost mcp serve` (stdio) fd 1 is the protocol: an in-process plugin that
//! prints a forged JSON-RPC answer during a call must not reach the client, whether the
//! client talks over pipes or a socket.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::process::Stdio;

use serde_json::json;
use toolhost_tests::plugin_fixtures::add_plugin;
use toolhost_tests::{TestHome, toolhost_bin};

use super::mcp_hardening::RawServe;

/// A home with the hostile fixture loaded in-process (by the user's choice).
fn home_with_in_process_hostile() -> TestHome {
    let home = TestHome::new();
    toolhost_bin();
    add_plugin(
        &home.path().join("plugins"),
        "hostile",
        "fixture_hostile",
        "",
    );
    home.write_config("[plugins.isolation]\nhostile = \"in-process\"\n");
    home
}

#[test]
fn an_in_process_plugin_cannot_write_into_the_mcp_stream() {
    let home = home_with_in_process_hostile();
    let mut serve = RawServe::start(&home, &["--toolsets", "hostile"]);
    for id in 1..=3 {
        serve.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "hostile_forge", "arguments": {}}})
            .to_string(),
        );
        let answer = serve.answer();
        assert_eq!(answer["id"], id, "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert_eq!(text, json!({"forged": false}).to_string(), "{answer}");
    }
    let err = serve.finish();
    // The plugin's print went to stderr, where stray output belongs.
    assert!(err.contains("FORGED"), "{err}");
}

#[test]
fn a_client_on_a_socket_gets_only_protocol_messages() {
    // Node-based MCP clients hand their servers socketpairs, not pipes: the protocol's
    // writer then runs on a thread of its own.
    let home = home_with_in_process_hostile();
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let theirs_out = theirs.try_clone().unwrap();
    let mut child = home
        .command()
        .args(["mcp", "serve", "--toolsets", "hostile"])
        .stdin(Stdio::from(OwnedFd::from(theirs)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolhost mcp serve");
    let mut writer = ours.try_clone().unwrap();
    let mut reader = BufReader::new(ours);
    let mut read_answer = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        serde_json::from_str::<serde_json::Value>(&line).unwrap()
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "socket", "version": "1"}}});
    writeln!(writer, "{initialize}").unwrap();
    let init = read_answer();
    assert_eq!(init["id"], 0, "{init}");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "hostile_forge", "arguments": {}}});
    writeln!(
        writer,
        "{}\n{call}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let answer = read_answer();
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        json!({"forged": false}).to_string(),
        "{answer}"
    );
    writer.shutdown(std::net::Shutdown::Write).unwrap();
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}
