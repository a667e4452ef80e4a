//! toolhost as an MCP client, against real third-party servers: the reference server
//! `@modelcontextprotocol/server-everything` (npm; stdio and streamable HTTP) and
//! `mcp-server-time` (PyPI), plus tiny fixtures for servers that crash or never answer.
//!
//! Tests using the third-party software need `.ci/setup-mcp.sh` and are
//! `#[ignore = "needs …"]`: run them with `--include-ignored`.

use std::sync::Arc;
use std::time::Duration;

use super::mcp_common::*;
use serde_json::{Value, json};
use toolhost::mcp::{DiscoveryOptions, McpServerSettings, ServerState};
use toolhost::{StartOptions, Toolhost};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json};
use tools_core::{CallStatus, Parallelism, Registry, ToolContext, ToolEntry, ToolSource};

/// `mcp list --json` (which exits 1 when a server failed, so its status is not checked).
fn list_json(home: &TestHome) -> Vec<Value> {
    let out = home.run(&["mcp", "list", "--json"], None);
    match stdout_json(&out) {
        Value::Array(items) => items,
        other => panic!("not an array: {other}"),
    }
}

fn server<'a>(list: &'a [Value], name: &str) -> &'a Value {
    list.iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no server {name} in {list:?}"))
}

fn call(home: &TestHome, tool: &str, args: &Value) -> (Value, bool) {
    let out = home.run(&["call", tool, &args.to_string()], None);
    let value: Value = serde_json::from_str(stdout(&out).trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} / {}", stdout(&out), stderr(&out)));
    (value, out.status.success())
}

fn time_section(name: &str, extra: &str) -> String {
    format!(
        "[mcp_servers.\"{name}\"]\ncommand = {}\nargs = [\"--local-timezone=UTC\"]\n{extra}\n",
        toml_str(&time_server())
    )
}

fn everything_section(name: &str, extra: &str) -> String {
    format!(
        "[mcp_servers.\"{name}\"]\ncommand = {}\n{extra}\n",
        toml_str(&everything())
    )
}

/// A home whose config has the two stdio servers, `time` and `everything`, as they come.
fn home_with_time_and_everything() -> TestHome {
    let home = TestHome::new();
    home.write_config(&format!(
        "{}{}",
        time_section("time", ""),
        everything_section("everything", "")
    ));
    home
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn discovery_registers_named_filtered_tools() {
    require_mcp_software();
    let home = TestHome::new();
    home.write_config(&format!(
        "{}{}",
        time_section(
            "clock",
            "tools = { include = [\"get_current_time\"], exclude = [\"get_current_time\"] }"
        ),
        everything_section(
            "every.thing",
            "tools = { exclude = [\"echo\", \"get-tiny-image\"] }"
        ),
    ));
    let list = list_json(&home);
    let clock = server(&list, "clock");
    assert_eq!(clock["status"], "connected", "{clock}");
    assert_eq!(clock["transport"], "stdio");
    // include wins over exclude; the server (Python SDK) advertises resources and
    // prompts, so their four tools come too (Hermes does the same).
    assert_eq!(
        clock["tools"],
        json!([
            "mcp__clock__get_current_time",
            "mcp__clock__get_prompt",
            "mcp__clock__list_prompts",
            "mcp__clock__list_resources",
            "mcp__clock__read_resource"
        ])
    );
    assert_eq!(clock["tool_count"], 5);
    assert_eq!(clock["skipped_tools"][0]["name"], "convert_time");
    assert!(
        clock["server_version"]
            .as_str()
            .is_some_and(|v| !v.is_empty())
    );

    let every = server(&list, "every.thing");
    assert_eq!(every["status"], "connected", "{every}");
    let tools: Vec<&str> = every["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    // The server name is sanitized; tool names keep '-'.
    assert!(tools.contains(&"mcp__every_thing__get-sum"), "{tools:?}");
    assert!(!tools.iter().any(|t| t.ends_with("__echo")), "{tools:?}");
    assert!(
        !tools.iter().any(|t| t.ends_with("get-tiny-image")),
        "{tools:?}"
    );
    for tool in &tools {
        assert!(tool.len() <= 64, "{tool}");
        assert!(
            tool.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
            "{tool}"
        );
    }
    let skipped: Vec<&str> = every["skipped_tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["reason"] == "excluded by tools.include/tools.exclude")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(skipped, vec!["echo", "get-tiny-image"]);
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn stdio_calls_with_arguments_errors_and_redaction() {
    require_mcp_software();
    let home = home_with_time_and_everything();
    // Arguments: "3" is coerced to the schema's number before the call.
    let (value, ok) = call(
        &home,
        "mcp__everything__get-sum",
        &json!({"a": 2, "b": "3"}),
    );
    assert!(ok);
    assert_eq!(value, json!({"result": "The sum of 2 and 3 is 5."}));

    // Structured content that only mirrors the text comes once: as the text.
    let (value, ok) = call(
        &home,
        "mcp__everything__get-structured-content",
        &json!({"location": "New York"}),
    );
    assert!(ok, "{value}");
    assert!(value.get("structuredContent").is_none(), "{value}");
    let text: Value = serde_json::from_str(value["result"].as_str().unwrap()).unwrap();
    assert!(text["temperature"].is_number(), "{value}");

    // Schema-invalid arguments never reach the server.
    let (value, ok) = call(&home, "mcp__everything__get-sum", &json!({"a": "x"}));
    assert!(!ok);
    let error = value["error"].as_str().unwrap();
    assert!(
        error.starts_with("Invalid arguments for mcp__everything__get-sum"),
        "{error}"
    );

    // A server-side error (isError) comes back as {"error"} with credentials redacted.
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let (value, ok) = call(
        &home,
        "mcp__time__get_current_time",
        &json!({"timezone": format!("Bad/{token}")}),
    );
    assert!(!ok);
    let error = value["error"].as_str().unwrap();
    assert!(error.contains("Invalid timezone"), "{error}");
    assert!(
        error.contains("[REDACTED]") && !error.contains(token),
        "{error}"
    );

    let (value, ok) = call(
        &home,
        "mcp__time__convert_time",
        &json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
    );
    assert!(ok, "{value}");
    assert!(
        value["result"].as_str().unwrap().contains("Asia/Tokyo"),
        "{value}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn streamable_http_transport() {
    require_mcp_software();
    let server = EverythingHttp::start();
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.web]\nurl = {}\nheaders = {{ X-Toolhost-Test = \"${{MCP_TEST_HEADER}}\" }}\ntools = {{ include = [\"echo\", \"get-sum\"] }}\n",
        toml_string(&server.url.replace("/mcp", "/${MCP_TEST_PATH}"))
    ));
    let run = |args: &[&str]| {
        let mut cmd = home.command();
        cmd.env("MCP_TEST_PATH", "mcp")
            .env("MCP_TEST_HEADER", "yes");
        cmd.args(args).output().unwrap()
    };
    let out = run(&["mcp", "list", "--json"]);
    let list = stdout_json(&out);
    let web = &list[0];
    assert_eq!(web["status"], "connected", "{web}");
    assert_eq!(web["transport"], "http");
    assert_eq!(
        web["tools"],
        json!([
            "mcp__web__echo",
            "mcp__web__get-sum",
            "mcp__web__get_prompt",
            "mcp__web__list_prompts",
            "mcp__web__list_resources",
            "mcp__web__read_resource"
        ])
    );
    let out = run(&["call", "mcp__web__echo", r#"{"message": "over http"}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout_json(&out), json!({"result": "Echo: over http"}));
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn stdio_servers_get_a_whitelisted_environment() {
    require_mcp_software();
    let home = TestHome::new();
    home.write_config(&everything_section(
        "everything",
        "env = { GREETING = \"hello ${MCP_TEST_NAME}\", UNSET = \"${MCP_TEST_NOT_SET}\" }",
    ));
    let out = home
        .command()
        .args(["call", "mcp__everything__get-env", "{}"])
        .env("MCP_TEST_NAME", "world")
        .env("OPENAI_API_KEY", "sk-test-secret-value-1234567890")
        .env("LD_PRELOAD", "")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let result = stdout_json(&out);
    let env: Value = serde_json::from_str(result["result"].as_str().unwrap()).unwrap();
    assert_eq!(env["GREETING"], "hello world");
    // Unset variables keep their placeholder.
    assert_eq!(env["UNSET"], "${MCP_TEST_NOT_SET}");
    assert!(env.get("PATH").is_some());
    assert!(env.get("OPENAI_API_KEY").is_none(), "{env}");
    assert!(env.get("LD_PRELOAD").is_none(), "{env}");
    assert!(env.get("TOOLHOST_HOME").is_none(), "{env}");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_server_that_never_answers_times_out_without_blocking_the_others() {
    require_mcp_software();
    let home = TestHome::new();
    home.write_config(&format!(
        "{}{}[mcp_servers.silent]\ncommand = {}\nconnect_timeout = 2\n[mcp_servers.crashing]\ncommand = {}\n",
        time_section("time", ""),
        everything_section("everything", ""),
        toml_str(&fixture("never_answers.sh")),
        toml_str(&fixture("crashing_server.sh")),
    ));
    let list = list_json(&home);
    let silent = server(&list, "silent");
    assert_eq!(silent["status"], "failed");
    assert!(
        silent["last_error"]
            .as_str()
            .unwrap()
            .contains("no answer within the connect timeout of 2s"),
        "{silent}"
    );
    assert_eq!(server(&list, "time")["status"], "connected");
    assert_eq!(server(&list, "everything")["status"], "connected");

    // A crash before the handshake is reported with the exit status and stderr tail.
    let crashing = server(&list, "crashing");
    assert_eq!(crashing["status"], "failed");
    let error = crashing["last_error"].as_str().unwrap();
    assert!(error.contains("exit status: 7"), "{error}");
    assert!(error.contains("permission denied"), "{error}");

    // The text table shows the same.
    let out = home.run(&["mcp", "list"], None);
    let table = stdout(&out);
    assert!(
        table.contains("silent") && table.contains("failed"),
        "{table}"
    );
    assert!(
        table.contains("stderr: crashing_server: cannot load settings"),
        "{table}"
    );

    // Calls to the healthy servers work with the dead ones configured.
    let (value, ok) = call(
        &home,
        "mcp__time__get_current_time",
        &json!({"timezone": "UTC"}),
    );
    assert!(ok, "{value}");
}

#[test]
fn unusable_sections_are_reported_not_fatal() {
    let home = TestHome::new();
    home.write_config(
        "[mcp_servers.nothing]\nenabled = true\n[mcp_servers.off]\ncommand = \"x\"\nenabled = \"no\"\n[mcp_servers.legacy]\nurl = \"http://127.0.0.1:9/sse\"\ntransport = \"sse\"\n",
    );
    let list = list_json(&home);
    assert_eq!(server(&list, "nothing")["status"], "misconfigured");
    assert_eq!(server(&list, "off")["status"], "disabled");
    let legacy = server(&list, "legacy");
    assert_eq!(legacy["status"], "misconfigured");
    assert!(legacy["last_error"].as_str().unwrap().contains("SSE"));
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn servers_are_stopped_when_the_host_exits() {
    require_mcp_software();
    let home = home_with_time_and_everything();
    let list = list_json(&home);
    for name in ["time", "everything"] {
        let pid = server(&list, name)["pid"].as_u64().unwrap() as u32;
        assert!(wait_gone(pid), "{name} server {pid} outlived toolhost");
    }
}

fn start(home: &TestHome, config: &str) -> Toolhost {
    home.write_config(config);
    Toolhost::start(&StartOptions {
        home: Some(home.path().to_path_buf()),
        ..StartOptions::default()
    })
    .expect("toolhost starts")
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_dead_server_opens_the_breaker_then_reconnects() {
    require_mcp_software();
    let home = TestHome::new();
    let gate = home.path().join("gate");
    let host = start(
        &home,
        &format!(
            "[mcp_servers.time]\ncommand = {}\nargs = [{}, \"--local-timezone=UTC\"]\nenv = {{ GATE = {} }}\nbreaker_cooldown = 2\n",
            toml_str(&fixture("gated_server.sh")),
            toml_str(&time_server()),
            toml_str(&gate),
        ),
    );
    let ctx = ToolContext::default();
    let args = r#"{"timezone": "UTC"}"#;
    let tool = "mcp__time__get_current_time";
    // The sync path (no runtime on this thread).
    let first = host.dispatcher.call(tool, args, &ctx);
    assert_eq!(first.status, CallStatus::Ok, "{}", first.text);
    let status = &host.mcp.statuses()[0];
    let pid = status.pid.expect("pid");

    // The server dies mid-session and cannot come back while the gate exists.
    std::fs::write(&gate, "").unwrap();
    kill_process_group(pid);
    assert!(wait_gone(pid));

    let mut errors = Vec::new();
    for _ in 0..3 {
        let outcome = host.dispatcher.call(tool, args, &ctx);
        assert_eq!(outcome.status, CallStatus::Error, "{}", outcome.text);
        errors.push(outcome.text);
    }
    assert!(errors[0].contains("MCP server 'time'"), "{errors:?}");
    assert!(
        errors.iter().any(|e| e.contains("refusing to start")),
        "the reconnect failure shows the server's stderr: {errors:?}"
    );
    assert!(errors[2].contains("paused for 2s"), "{errors:?}");

    // Open: refused at once with the documented message.
    let refused = host.dispatcher.call(tool, args, &ctx);
    let message = serde_json::from_str::<Value>(&refused.text).unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("MCP server 'time' is unreachable after 3 consecutive failures. Auto-retry available in ~"),
        "{message}"
    );
    assert!(message.contains("Do NOT retry this tool yet"), "{message}");
    assert_eq!(host.mcp.statuses()[0].state, ServerState::BreakerOpen);

    // The server can start again; after the cooldown the next call reconnects — from
    // async code this time.
    std::fs::remove_file(&gate).unwrap();
    std::thread::sleep(Duration::from_millis(2200));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = runtime.block_on(host.dispatcher.call_async(tool, args, &ctx));
    assert_eq!(outcome.status, CallStatus::Ok, "{}", outcome.text);
    let status = &host.mcp.statuses()[0];
    assert_eq!(status.state, ServerState::Connected);
    assert_ne!(status.pid, Some(pid), "a new process");
    let new_pid = status.pid.unwrap();
    host.shutdown();
    assert!(wait_gone(new_pid), "shutdown stops the reconnected server");
    // After shutdown nothing is restarted behind the host's back.
    let after = host.dispatcher.call(tool, args, &ctx);
    assert!(after.text.contains("shutting down"), "{}", after.text);
    assert!(host.mcp.statuses()[0].pid.is_none());
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn core_and_plugin_names_win_and_tools_join_their_toolset() {
    require_mcp_software();
    let registry = Arc::new(Registry::new());
    // A built-in tool that happens to have an MCP tool's name.
    registry.register(
        ToolEntry::builder("mcp__time__convert_time", "time_tools")
            .description("built in")
            .build()
            .unwrap(),
    );
    let servers: std::collections::BTreeMap<String, McpServerSettings> = toml::from_str(&format!(
        "[time]\ncommand = {}\nsupports_parallel_tool_calls = true\n[everything]\ncommand = {}\n",
        toml_str(&time_server()),
        toml_str(&everything())
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let manager = toolhost::mcp::discover(
        &servers,
        &registry,
        &DiscoveryOptions::from_env(dir.path().to_path_buf()),
    );
    let builtin = registry.get("mcp__time__convert_time").unwrap();
    assert_eq!(builtin.source, ToolSource::Core);
    assert_eq!(builtin.description, "built in");
    let time = manager
        .statuses()
        .into_iter()
        .find(|s| s.name == "time")
        .unwrap();
    assert_eq!(
        time.tools,
        vec![
            "mcp__time__get_current_time",
            "mcp__time__get_prompt",
            "mcp__time__list_prompts",
            "mcp__time__list_resources",
            "mcp__time__read_resource"
        ]
    );
    assert!(time.skipped_tools[0].reason.contains("taken by core tool"));

    let entry = registry.get("mcp__time__get_current_time").unwrap();
    assert_eq!(entry.toolset, "mcp-time");
    assert_eq!(entry.source, ToolSource::Mcp("time".into()));
    assert_eq!(entry.parallelism, Parallelism::Safe);
    assert!(entry.is_async());
    assert_eq!(registry.resolve_alias("time").as_deref(), Some("mcp-time"));
    let echo = registry.get("mcp__everything__echo").unwrap();
    assert_eq!(echo.parallelism, Parallelism::Exclusive);
    assert_eq!(
        registry.resolve_alias("everything").as_deref(),
        Some("mcp-everything")
    );
    manager.shutdown();
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_restarted_http_server_is_reconnected() {
    require_mcp_software();
    let server = EverythingHttp::start();
    let port = server.port;
    let home = TestHome::new();
    let host = start(
        &home,
        &format!(
            "[mcp_servers.web]\nurl = {}\ntools = {{ include = [\"echo\"] }}\n",
            toml_string(&server.url)
        ),
    );
    let ctx = ToolContext::default();
    let echo = |text: &str| {
        host.dispatcher.call(
            "mcp__web__echo",
            &json!({"message": text}).to_string(),
            &ctx,
        )
    };
    assert_eq!(echo("one").status, CallStatus::Ok);
    server.stop();
    let down = echo("two");
    assert_eq!(down.status, CallStatus::Error, "{}", down.text);
    assert!(down.text.contains("MCP server 'web'"), "{}", down.text);
    // Back on the same address: the next call opens a new MCP session.
    let _server = EverythingHttp::start_on(port);
    let up = echo("three");
    assert_eq!(up.status, CallStatus::Ok, "{}", up.text);
    assert_eq!(
        serde_json::from_str::<Value>(&up.text).unwrap(),
        json!({"result": "Echo: three"})
    );
    host.shutdown();
}
