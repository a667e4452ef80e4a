//! Regression tests for MCP faults found by adversarial testing, both ways: malformed
//! JSON-RPC sent to `toolhost mcp serve`, secrets in server URLs, down servers, servers
//! started by commands that do not need them, doubled structured results, log noise;
//! and the official MCP Inspector CLI driving `toolhost mcp serve` over stdio and HTTP.
//!
//! The tests that need third-party MCP software are `#[ignore = "needs …"]` and fail
//! naming what is missing when run without `.ci/setup-mcp.sh`.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Output, Stdio};

use super::mcp_common::*;
use serde_json::{Value, json};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json, toolhost_bin};

/// `toolhost mcp serve` on stdio, driven line by line.
pub(super) struct RawServe {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl RawServe {
    pub(super) fn start(home: &TestHome, args: &[&str]) -> Self {
        let mut child = home
            .command()
            .args(["mcp", "serve"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start toolhost mcp serve");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut serve = RawServe {
            child,
            stdin,
            stdout,
        };
        serve.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}}})
            .to_string(),
        );
        let answer = serve.answer();
        assert_eq!(answer["id"], 0, "{answer}");
        serve.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        serve
    }

    pub(super) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    pub(super) fn answer(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// Close stdin and wait; the process's stderr.
    pub(super) fn finish(mut self) -> String {
        drop(self.stdin.take());
        let mut err = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            pipe.read_to_string(&mut err).expect("read stderr");
        }
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "mcp serve exited with {status}: {err}");
        err
    }
}

fn assert_no_rust_names(message: &str) {
    for rust in ["struct ", "enum ", "::", "Params", "JsonObject", "serde"] {
        assert!(!message.contains(rust), "{message:?} names {rust:?}");
    }
}

#[test]
fn stdio_serve_answers_bad_json_with_parse_error() {
    let home = TestHome::new();
    let mut serve = RawServe::start(&home, &["--toolsets", "file"]);
    serve.send("{this is not json");
    let answer = serve.answer();
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_no_rust_names(answer["error"]["message"].as_str().unwrap());
    serve.finish();
}

#[test]
fn stdio_serve_says_method_not_found_for_methods_it_does_not_serve() {
    let home = TestHome::new();
    let mut serve = RawServe::start(&home, &["--toolsets", "file"]);
    let methods = [
        "resources/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "foo/bar",
    ];
    for (id, method) in methods.iter().enumerate() {
        let params = json!({"uri": "file:///x", "name": "x"});
        serve.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let answer = serve.answer();
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
        assert_eq!(
            answer["error"]["message"],
            format!("Method not found: {method}"),
            "{answer}"
        );
    }
    serve.finish();
}

#[test]
fn stdio_serve_rejects_a_cursor_it_never_handed_out() {
    let home = TestHome::new();
    let mut serve = RawServe::start(&home, &["--toolsets", "file"]);
    serve.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"bogus"}}"#);
    let answer = serve.answer();
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    serve.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = serve.answer();
    assert!(answer["result"]["nextCursor"].is_null(), "{answer}");
    assert!(!answer["result"]["tools"].as_array().unwrap().is_empty());
    serve.finish();
}

#[test]
fn stdio_serve_answers_wrong_typed_params_with_invalid_params() {
    let home = TestHome::new();
    let mut serve = RawServe::start(&home, &["--toolsets", "file"]);
    for (id, params) in [
        (5, json!({"name": 7})),
        (6, json!({"name": "read_file", "arguments": "x"})),
        (7, json!("params")),
    ] {
        serve.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string(),
        );
        let answer = serve.answer();
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert_no_rust_names(answer["error"]["message"].as_str().unwrap());
    }
    serve.finish();
}

#[test]
fn stdio_serve_answers_an_over_long_line_and_keeps_serving() {
    let home = TestHome::new();
    let mut serve = RawServe::start(&home, &["--toolsets", "file"]);
    let pad = "x".repeat(17 * 1024 * 1024);
    serve.send(&format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"ping","params":{{"pad":"{pad}"}}}}"#
    ));
    let answer = serve.answer();
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than the limit"),
        "{answer}"
    );
    serve.send(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    let answer = serve.answer();
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(answer["result"], json!({}), "{answer}");
    serve.finish();
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_routine_stdio_session_logs_nothing_and_no_colour() {
    require_mcp_software();
    let home = TestHome::new();
    home.write_config(&proxied_servers());
    let mut serve = RawServe::start(&home, &["--toolsets", "time"]);
    serve.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    let answer = serve.answer();
    assert!(answer["result"]["tools"].is_array(), "{answer}");
    let err = serve.finish();
    assert!(!err.contains('\u{1b}'), "ANSI escapes in {err:?}");
    assert!(
        !err.contains("WARN") && !err.contains("ERROR"),
        "teardown logged at default verbosity: {err}"
    );
}

/// A config whose server `broken` dies before the handshake.
fn home_with_broken_server() -> TestHome {
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.broken]\ncommand = {}\n",
        toml_str(&fixture("crashing_server.sh"))
    ));
    home
}

#[test]
fn mcp_list_exits_non_zero_and_quotes_the_stderr_line_when_a_server_failed() {
    let home = home_with_broken_server();
    for args in [&["mcp", "list"][..], &["mcp", "list", "--json"][..]] {
        let out = home.run(args, None);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("MCP server 'broken' failed")
                && err.contains("cannot load settings: /etc/crashing.conf: permission denied"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn calling_a_tool_of_a_down_server_says_which_server_and_why() {
    let home = home_with_broken_server();
    let out = home.run(&["call", "mcp__broken__anything", "{}"], None);
    assert!(!out.status.success());
    let error = stdout_json(&out)["error"].as_str().unwrap().to_string();
    assert!(error.contains("MCP server 'broken' is down"), "{error}");
    assert!(error.contains("permission denied"), "{error}");
}

/// Values that must never be printed.
const PATH_TOKEN: &str = "pathTok3n-5150";
const QUERY_KEY: &str = "qKey-8842-zz";
const HEADER_SECRET: &str = "hdrS3cret-0071";
const PASSWORD: &str = "pw-Hunter-22";

fn home_with_secret_url() -> (TestHome, Vec<(&'static str, String)>) {
    let home = TestHome::new();
    let port = free_port();
    home.write_config(&format!(
        "[mcp_servers.web]\nurl = \"http://bob:{PASSWORD}@127.0.0.1:{port}/v1/${{WEB_PATH_TOKEN}}/mcp?api_key={QUERY_KEY}&mode=x\"\nheaders = {{ X-Api = \"${{WEB_HEADER}}\" }}\nconnect_timeout = 5\n"
    ));
    let env = vec![
        ("WEB_PATH_TOKEN", PATH_TOKEN.to_string()),
        ("WEB_HEADER", HEADER_SECRET.to_string()),
    ];
    (home, env)
}

fn run_with(home: &TestHome, env: &[(&str, String)], args: &[&str]) -> Output {
    let mut cmd = home.command();
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(args).output().expect("run toolhost")
}

fn assert_hidden(text: &str) {
    for secret in [PATH_TOKEN, QUERY_KEY, HEADER_SECRET, PASSWORD] {
        assert!(!text.contains(secret), "{secret} printed in: {text}");
    }
}

#[test]
fn secrets_in_server_urls_are_redacted_in_mcp_list_and_its_stderr() {
    let (home, env) = home_with_secret_url();
    for args in [&["mcp", "list"][..], &["mcp", "list", "--json"][..]] {
        let out = run_with(&home, &env, args);
        assert_hidden(&stdout(&out));
        assert_hidden(&stderr(&out));
    }
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn secrets_in_server_urls_are_redacted_in_errors_the_model_sees() {
    let (home, env) = home_with_secret_url();
    let out = run_with(&home, &env, &["call", "mcp__web__echo", "{}"]);
    assert_hidden(&stdout(&out));
    assert_hidden(&stderr(&out));
    let error = stdout_json(&out)["error"].as_str().unwrap().to_string();
    // Only the secret goes: the URL around it stays readable.
    assert!(
        error.contains("/v1/[REDACTED]/mcp?api_key=[REDACTED]&mode=x"),
        "{error}"
    );
}

/// A stdio server wrapper that notes each start in `marker` before running the time
/// server.
fn counting_time_server(dir: &Path, marker: &Path) -> std::path::PathBuf {
    let script = dir.join("counting_time.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{}' --local-timezone=UTC\n",
            marker.display(),
            time_server().display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    script
}

fn starts(marker: &Path) -> usize {
    std::fs::read_to_string(marker)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn commands_that_need_no_mcp_tool_start_no_server() {
    require_mcp_software();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("starts");
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.time]\ncommand = {}\n",
        toml_str(&counting_time_server(dir.path(), &marker))
    ));
    let out = home.run(&["call", "read_file", r#"{"path": "/etc/hostname"}"#], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = home.run(&["plugins", "list"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(starts(&marker), 0);
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn schema_uses_a_cached_listing_and_calls_connect_on_demand() {
    require_mcp_software();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("starts");
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.time]\ncommand = {}\n",
        toml_str(&counting_time_server(dir.path(), &marker))
    ));
    let names = |out: &Output| -> Vec<String> {
        stdout_json(out)
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["function"]["name"].as_str().unwrap().to_string())
            .filter(|n| n.starts_with("mcp__"))
            .collect()
    };
    let first = home.run(&["schema"], None);
    assert_eq!(starts(&marker), 1, "the first listing connects");
    let second = home.run(&["schema"], None);
    assert_eq!(starts(&marker), 1, "the cached listing is used");
    assert_eq!(names(&first), names(&second));
    assert!(names(&second).contains(&"mcp__time__get_current_time".to_string()));
    // Editing the section invalidates the listing.
    home.write_config(&format!(
        "[mcp_servers.time]\ncommand = {}\ntimeout = 30\ntools = {{ include = [\"get_current_time\"] }}\n",
        toml_str(&counting_time_server(dir.path(), &marker))
    ));
    let third = home.run(&["schema"], None);
    assert_eq!(starts(&marker), 2);
    assert_eq!(
        names(&third),
        [
            "mcp__time__get_current_time",
            "mcp__time__get_prompt",
            "mcp__time__list_prompts",
            "mcp__time__list_resources",
            "mcp__time__read_resource"
        ]
    );
}

/// A home whose one MCP server is server-filesystem rooted at `root`, and the result of
/// `toolhost call mcp__fs__read_text_file` on `file` through it.
fn read_through_filesystem_server(root: &Path, file: &Path) -> (TestHome, Output) {
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.fs]\ncommand = {}\nargs = [{}]\n",
        toml_str(&npm_bin("mcp-server-filesystem")),
        toml_str(root)
    ));
    let out = home.run(
        &[
            "call",
            "mcp__fs__read_text_file",
            &json!({"path": file}).to_string(),
        ],
        None,
    );
    (home, out)
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn structured_content_mirroring_the_text_is_passed_once_and_spills_as_lines() {
    require_npm_bin("mcp-server-filesystem");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.txt");
    let body: String = (0..1500)
        .map(|i| format!("line {i:05} {}\n", "abcdefghij".repeat(3)))
        .collect();
    assert!(body.len() > 60_000);
    std::fs::write(&file, &body).unwrap();
    let (_home, out) = read_through_filesystem_server(dir.path(), &file);
    assert!(out.status.success(), "{}", stderr(&out));
    let value = stdout_json(&out);
    assert_eq!(value["result"], body, "one copy of the text, nothing else");
    assert!(
        value.get("structuredContent").is_none(),
        "doubled: {value:.200}"
    );
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_spilled_mcp_result_is_readable_in_pages() {
    require_npm_bin("mcp-server-filesystem");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huge.txt");
    let body: String = (0..4000)
        .map(|i| format!("row {i:05} {}\n", "0123456789".repeat(4)))
        .collect();
    assert!(body.len() > 150_000);
    std::fs::write(&file, &body).unwrap();
    let (home, out) = read_through_filesystem_server(dir.path(), &file);
    let value = stdout_json(&out);
    assert_eq!(value["truncated"], true, "{value:.300}");
    let saved = value["saved_to"].as_str().unwrap().to_string();
    // read_file pages through real lines of the saved text.
    let out = home.run(
        &[
            "call",
            "read_file",
            &json!({"path": saved, "offset": 2001, "limit": 2}).to_string(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let page = stdout_json(&out)["content"].as_str().unwrap().to_string();
    assert!(page.contains("row 01999"), "{page}");
    assert!(page.lines().count() == 2, "{page}");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn server_memory_results_come_back_once_across_calls() {
    require_npm_bin("mcp-server-memory");
    let dir = tempfile::tempdir().unwrap();
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.memory]\ncommand = {}\nenv = {{ MEMORY_FILE_PATH = {} }}\n",
        toml_str(&npm_bin("mcp-server-memory")),
        toml_str(&dir.path().join("memory.jsonl"))
    ));
    let entities = json!({"entities": [
        {"name": "toolhost", "entityType": "project", "observations": ["speaks MCP both ways"]}
    ]});
    let out = home.run(
        &[
            "call",
            "mcp__memory__create_entities",
            &entities.to_string(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = home.run(&["call", "mcp__memory__read_graph", "{}"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    let value = stdout_json(&out);
    let text = value["result"].as_str().unwrap_or_default();
    assert!(text.contains("speaks MCP both ways"), "{value}");
    assert!(value.get("structuredContent").is_none(), "doubled: {value}");
}

fn inspector(args: &[&str]) -> Value {
    let out = Command::new(npm_bin("mcp-inspector"))
        .arg("--cli")
        .args(args)
        .output()
        .expect("run the MCP Inspector CLI");
    assert!(
        out.status.success(),
        "inspector {args:?} failed\nstdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("inspector printed no JSON ({e}): {}", stdout(&out)))
}

fn read_file_text(answer: &Value) -> Value {
    assert_eq!(answer["isError"], false, "{answer}");
    let text = answer["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn inspector_cli_lists_and_calls_over_stdio() {
    require_npm_bin("mcp-inspector");
    let home = TestHome::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "hello\ninspector\n").unwrap();
    let bin = toolhost_bin().display().to_string();
    let home_arg = home.path().display().to_string();
    let serve = [
        bin.as_str(),
        "--home",
        home_arg.as_str(),
        "mcp",
        "serve",
        "--toolsets",
        "file",
    ];
    let listed = inspector(&[&serve[..], &["--method", "tools/list"]].concat());
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_file"), "{names:?}");
    let path_arg = format!("path={}", file.display());
    let called = inspector(
        &[
            &serve[..],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "read_file",
                "--tool-arg",
                path_arg.as_str(),
            ],
        ]
        .concat(),
    );
    assert_eq!(read_file_text(&called)["content"], "1|hello\n2|inspector");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn inspector_cli_calls_over_streamable_http() {
    require_npm_bin("mcp-inspector");
    let home = TestHome::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.txt");
    std::fs::write(&file, "over http\n").unwrap();
    let mut child = home
        .command()
        .args([
            "mcp",
            "serve",
            "--toolsets",
            "file",
            "--http",
            "127.0.0.1:0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolhost mcp serve --http");
    let mut url = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_string();
    let path_arg = format!("path={}", file.display());
    let called = inspector(&[
        url.as_str(),
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "read_file",
        "--tool-arg",
        path_arg.as_str(),
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(read_file_text(&called)["content"], "1|over http");
}

fn listed_tool<'a>(listed: &'a Value, name: &str) -> &'a Value {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {listed}"))
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn core_tools_are_served_with_titles_and_annotations() {
    require_npm_bin("mcp-inspector");
    let home = TestHome::new();
    let bin = toolhost_bin().display().to_string();
    let home_arg = home.path().display().to_string();
    let listed = inspector(&[
        bin.as_str(),
        "--home",
        home_arg.as_str(),
        "mcp",
        "serve",
        "--toolsets",
        "file,terminal",
        "--method",
        "tools/list",
    ]);
    let read = listed_tool(&listed, "read_file");
    assert_eq!(read["title"], "Read file", "{read}");
    assert_eq!(read["annotations"]["readOnlyHint"], true, "{read}");
    let terminal = listed_tool(&listed, "terminal");
    assert_eq!(terminal["annotations"]["readOnlyHint"], false, "{terminal}");
    assert_eq!(
        terminal["annotations"]["destructiveHint"], true,
        "{terminal}"
    );
    assert_eq!(terminal["annotations"]["openWorldHint"], true, "{terminal}");
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn re_served_tools_keep_upstream_title_annotations_and_output_schema() {
    require_npm_bin("mcp-inspector");
    require_npm_bin("mcp-server-filesystem");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "kept\n").unwrap();
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.fs]\ncommand = {}\nargs = [{}]\n",
        toml_str(&npm_bin("mcp-server-filesystem")),
        toml_str(dir.path())
    ));
    let bin = toolhost_bin().display().to_string();
    let home_arg = home.path().display().to_string();
    let serve = [
        bin.as_str(),
        "--home",
        home_arg.as_str(),
        "mcp",
        "serve",
        "--toolsets",
        "fs",
    ];
    let listed = inspector(&[&serve[..], &["--method", "tools/list"]].concat());
    let read = listed_tool(&listed, "mcp__fs__read_text_file");
    assert_eq!(read["title"], "Read Text File", "{read}");
    assert_eq!(read["annotations"]["readOnlyHint"], true, "{read}");
    assert!(read["outputSchema"].is_object(), "{read}");
    // A tool with an outputSchema answers with structured content (the Inspector
    // rejects it otherwise).
    let path_arg = format!("path={}", file.display());
    let called = inspector(
        &[
            &serve[..],
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "mcp__fs__read_text_file",
                "--tool-arg",
                path_arg.as_str(),
            ],
        ]
        .concat(),
    );
    assert_eq!(
        called["structuredContent"],
        json!({"content": "kept\n"}),
        "{called}"
    );
}

/// `toolhost mcp serve --http 127.0.0.1:0 EXTRA...`; its URL. Killed on drop.
struct HttpServe {
    child: Child,
    url: String,
}

impl HttpServe {
    fn start(home: &TestHome, extra: &[&str]) -> Self {
        let mut child = home
            .command()
            .args([
                "mcp",
                "serve",
                "--toolsets",
                "file",
                "--http",
                "127.0.0.1:0",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start toolhost mcp serve --http");
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        HttpServe {
            child,
            url: url.trim().to_string(),
        }
    }

    fn authority(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string()
    }

    /// Send a raw request; the status code and the `Mcp-Session-Id` answered.
    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Option<String>) {
        let authority = self.authority();
        let mut text = format!(
            "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (name, value) in headers {
            text.push_str(&format!("{name}: {value}\r\n"));
        }
        text.push_str("\r\n");
        text.push_str(body);
        let mut stream = std::net::TcpStream::connect(&authority).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        stream.write_all(text.as_bytes()).unwrap();
        let mut response = Vec::new();
        let mut buf = [0u8; 4096];
        while !response.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => response.extend_from_slice(&buf[..n]),
            }
        }
        let head = String::from_utf8_lossy(&response).to_string();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let session = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_string())
        });
        (status, session)
    }

    /// POST `body` to `/mcp` with `Content-Type: application/json`; the whole response.
    fn post_raw(&self, body: &str) -> String {
        let authority = self.authority();
        let text = format!(
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let mut stream = std::net::TcpStream::connect(&authority).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        stream.write_all(text.as_bytes()).unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response
    }

    fn initialize(&self, headers: &[(&str, &str)]) -> (u16, Option<String>) {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}},
        })
        .to_string();
        self.request("POST", "/mcp", headers, &body)
    }
}

impl Drop for HttpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn http_answers_a_malformed_json_body_with_400_and_a_parse_error() {
    let home = TestHome::new();
    let serve = HttpServe::start(&home, &[]);
    for body in ["{not json", r#"{"jsonrpc": "2.0", "id": 1}"#, "[]"] {
        let response = serve.post_raw(body);
        assert!(response.starts_with("HTTP/1.1 400"), "{body}: {response}");
        let (_, payload) = response.split_once("\r\n\r\n").expect("a body");
        let payload: Value = serde_json::from_str(payload.trim()).expect("a JSON body");
        assert_eq!(payload["error"]["code"], -32700, "{body}: {payload}");
        assert_eq!(payload["id"], Value::Null);
    }
}

#[test]
fn http_serves_mcp_only_on_the_mcp_path() {
    let home = TestHome::new();
    let serve = HttpServe::start(&home, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    for path in ["/", "/other", "/mcpx"] {
        assert_eq!(serve.request("POST", path, &[], &body).0, 404, "{path}");
    }
    assert_eq!(serve.initialize(&[]).0, 200);
}

#[test]
fn http_delete_ends_a_session_with_200_and_answers_404_for_unknown_ones() {
    let home = TestHome::new();
    let serve = HttpServe::start(&home, &[]);
    let (status, session) = serve.initialize(&[]);
    assert_eq!(status, 200);
    let session = session.expect("a session id");
    let delete = |id: &str| {
        serve
            .request("DELETE", "/mcp", &[("Mcp-Session-Id", id)], "")
            .0
    };
    assert_eq!(delete(&session), 200);
    assert_eq!(delete(&session), 404);
    assert_eq!(delete("no-such-session"), 404);
}

#[test]
fn http_accepts_localhost_and_configured_origins_and_refuses_others() {
    let home = TestHome::new();
    let serve = HttpServe::start(&home, &["--allow-origin", "https://app.example.com:443"]);
    for (origin, want) in [
        ("http://localhost:6274", 200),
        ("http://127.0.0.1:5173", 200),
        ("https://app.example.com", 200),
        ("https://evil.example", 403),
        ("http://localhost.evil.example", 403),
    ] {
        assert_eq!(serve.initialize(&[("Origin", origin)]).0, want, "{origin}");
    }
}

#[test]
#[ignore = "needs the MCP test servers (.ci/setup-mcp.sh)"]
fn a_restarted_http_server_is_reinitialised_at_once() {
    require_mcp_software();
    let server = EverythingHttp::start();
    let port = server.port;
    let home = TestHome::new();
    home.write_config(&format!(
        "[mcp_servers.web]\nurl = {}\ntools = {{ include = [\"echo\"] }}\ntimeout = 60\n",
        toml_string(&server.url)
    ));
    let host = toolhost::Toolhost::start(&toolhost::StartOptions {
        home: Some(home.path().to_path_buf()),
        ..toolhost::StartOptions::default()
    })
    .expect("toolhost starts");
    let ctx = tools_core::ToolContext::default();
    let echo = |text: &str| {
        host.dispatcher.call(
            "mcp__web__echo",
            &json!({"message": text}).to_string(),
            &ctx,
        )
    };
    assert_eq!(echo("one").status, tools_core::CallStatus::Ok);
    // Restarted between two calls: the old session id is unknown to the new process,
    // which answers 400 (TypeScript SDK), not 404.
    server.stop();
    let _server = EverythingHttp::start_on(port);
    let started = std::time::Instant::now();
    let up = echo("two");
    assert_eq!(up.status, tools_core::CallStatus::Ok, "{}", up.text);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the call stalled for {:?}",
        started.elapsed()
    );
    host.shutdown();
}
