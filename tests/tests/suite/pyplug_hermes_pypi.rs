//! Three real third-party Hermes plugins from PyPI, installed unchanged into a throwaway
//! virtualenv by `.ci/setup-python-plugins.sh`, loaded by the `toolhost` binary and
//! exercised through `toolhost call` and `toolhost plugins`. They were chosen because
//! using them needs no network or account (README "Python plugins"):
//! - `noisegate-hermes` (pip entry point `noisegate`): `transform_tool_result` and
//!   `transform_terminal_output` hooks compacting noisy output;
//! - `hermes-loop-plugin` (entry point `hermes-loop`): six loop tools keeping a state
//!   file in the working directory;
//! - `hermes-dreaming` (entry point `hermes-dreaming`): six tools over Hermes' memory
//!   files under `~/.hermes` (a path it builds itself, not through `HERMES_HOME`).
//!
//! And issue #28's random sample ([`SAMPLE`]): what loads under Hermes loads here, with
//! the same tools and the hooks toolhost has events for.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use toolhost_tests::{TestHome, ci_services, require, stderr, stdout, stdout_json};

const NEEDS: &str = "the Hermes plugin virtualenv of .ci/setup-python-plugins.sh \
                     (TOOLHOST_TEST_PYPLUG_PYTHON)";

/// The venv's python, or a failure naming the setup script.
fn venv_python() -> PathBuf {
    let python = require(ci_services::var("TOOLHOST_TEST_PYPLUG_PYTHON"), NEEDS);
    let python = PathBuf::from(python);
    assert!(python.is_file(), "{} is missing: {NEEDS}", python.display());
    python
}

/// A home enabling `plugins`, a fake `$HOME` and a working directory.
struct Setup {
    home: TestHome,
    user_home: tempfile::TempDir,
    workdir: tempfile::TempDir,
}

impl Setup {
    fn new(plugins: &[&str]) -> Self {
        let python = venv_python();
        let home = TestHome::new();
        let enabled: Vec<String> = plugins.iter().map(|p| format!("{p:?}")).collect();
        home.write_config(&format!(
            "[plugins]\nenabled = [{}]\nbundled = false\n\n[plugins.python]\ninterpreter = {:?}\n",
            enabled.join(", "),
            python.display().to_string()
        ));
        Setup {
            home,
            user_home: tempfile::tempdir().unwrap(),
            workdir: tempfile::tempdir().unwrap(),
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut cmd = self.home.command();
        cmd.env("HOME", self.user_home.path())
            .current_dir(self.workdir.path())
            .args(args);
        cmd.output().expect("run toolhost")
    }

    fn call(&self, tool: &str, args: &str) -> Value {
        let out = self.run(&["call", tool, args]);
        assert!(
            out.status.success(),
            "{tool}: {}\n{}",
            stdout(&out),
            stderr(&out)
        );
        stdout_json(&out)
    }
}

fn plugin_json(setup: &Setup, name: &str) -> Value {
    let out = setup.run(&["plugins", "info", name, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout_json(&out)
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn the_three_pypi_plugins_load_as_python_pip_plugins() {
    let setup = Setup::new(&["noisegate", "hermes-loop", "hermes-dreaming"]);
    let out = setup.run(&["plugins", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list = stdout_json(&out);
    for (name, tools, version) in [
        ("noisegate", 0, "0.3.3"),
        ("hermes-loop", 6, "1.0.2"),
        ("hermes-dreaming", 6, "0.3.2"),
    ] {
        let record = list
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed: {list}"));
        assert_eq!(record["status"], "loaded", "{record}");
        assert_eq!(record["kind"], "python", "{record}");
        assert_eq!(record["source"], "pip", "{record}");
        assert_eq!(record["isolation"], "process", "{record}");
        assert_eq!(record["version"], version, "{record}");
        assert_eq!(record["tools"].as_array().unwrap().len(), tools, "{record}");
    }
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn noisegate_compacts_noisy_terminal_output() {
    let setup = Setup::new(&["noisegate"]);
    let info = plugin_json(&setup, "noisegate");
    assert_eq!(
        info["hooks"],
        serde_json::json!(["transform_tool_result", "transform_terminal_output"])
    );
    // Its hook through the host's hooks: a pip install log of 300 packages.
    let noisy: String = (0..300)
        .map(|i| format!("Collecting pkg{i}\n  Downloading pkg{i}-1.0.tar.gz ({i} kB)\n"))
        .collect();
    let script = setup.workdir.path().join("noisy.sh");
    std::fs::write(&script, format!("cat <<'EOF'\n{noisy}EOF\n")).unwrap();
    let result = setup.call(
        "terminal",
        &serde_json::json!({"command": "bash noisy.sh"}).to_string(),
    );
    let output = result["output"].as_str().unwrap_or_default();
    assert!(
        output.len() < noisy.len() / 4,
        "not compacted ({} of {} chars): {result}",
        output.len(),
        noisy.len()
    );
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn hermes_loop_keeps_its_state_in_the_working_directory() {
    let setup = Setup::new(&["hermes-loop"]);
    let init = setup.call("init_loop", r#"{"total_tasks":3}"#);
    assert_eq!(init["success"], true, "{init}");
    let done = setup.call("complete_task", "{}");
    assert_eq!(done["new_count"], 1, "{done}");
    let status = setup.call("loop_status", "{}");
    assert_eq!(status["tasks_completed"], 1, "{status}");
    assert_eq!(status["remaining_tasks"], 2, "{status}");
    assert!(
        Path::new(setup.workdir.path())
            .join(".hermes-loop-state.json")
            .is_file()
    );
    let info = plugin_json(&setup, "hermes-loop");
    let unsupported: Vec<&str> = info["unsupported"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        unsupported.contains(&"hook pre_llm_call (toolhost has no such event)"),
        "{unsupported:?}"
    );
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn hermes_dreaming_reads_the_memory_files() {
    let setup = Setup::new(&["hermes-dreaming"]);
    let memories = setup.user_home.path().join(".hermes/memories");
    std::fs::create_dir_all(&memories).unwrap();
    std::fs::write(
        memories.join("MEMORY.md"),
        "- The user prefers tabs over spaces.\n",
    )
    .unwrap();
    let state = setup.call("dreaming_get_state", "{}");
    assert_eq!(
        state["memory_md"]["entries"],
        serde_json::json!(["- The user prefers tabs over spaces."]),
        "{state}"
    );
    assert_eq!(state["user_md"]["char_count"], 0, "{state}");
    let info = plugin_json(&setup, "hermes-dreaming");
    let unsupported = info["unsupported"].to_string();
    assert!(
        unsupported.contains("register_command(dreaming)"),
        "{unsupported}"
    );
}

/// The random sample of issue #28 that loads under Hermes 0.19.0 and needs no outside
/// service (docs/python-plugins.md, "PyPI sample"): entry point, and the tools and
/// hooks Hermes' plugin manager registered for it. toolhost must load every one and
/// register the same tools and the hooks it has events for (Hermes' LLM middleware,
/// commands, skills and context engines are listed as unsupported instead).
const SAMPLE: [(&str, &[&str], &[&str]); 5] = [
    ("openwolf", &[], &["pre_tool_call"]),
    (
        "agentguard-spend",
        &[],
        &["pre_approval_request", "post_approval_response"],
    ),
    ("html-to-markdown", &["html_to_markdown_call"], &[]),
    ("lossless-hermes", &[], &[]),
    ("cluxion-hermes-call-cli", &[], &[]),
];

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn the_pypi_sample_loads_as_it_does_under_hermes() {
    let names: Vec<&str> = SAMPLE.iter().map(|(name, _, _)| *name).collect();
    let setup = Setup::new(&names);
    let out = setup.run(&["plugins", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let list = stdout_json(&out);
    let mut differing = Vec::new();
    for (name, tools, hooks) in SAMPLE {
        let Some(record) = list.as_array().unwrap().iter().find(|r| r["name"] == name) else {
            differing.push(format!("{name}: not listed"));
            continue;
        };
        let mut got_hooks = strings(&record["hooks"]);
        let mut want_hooks: Vec<String> = hooks.iter().map(|h| h.to_string()).collect();
        got_hooks.sort();
        want_hooks.sort();
        if record["status"] != "loaded"
            || strings(&record["tools"]) != tools
            || got_hooks != want_hooks
        {
            differing.push(format!("{name}: {record}"));
        }
    }
    // Issue #28's bar is 90 %; today every plugin of the sample matches.
    assert!(differing.is_empty(), "{differing:#?}");
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn openwolf_books_a_read_through_its_pre_tool_call_hook() {
    let setup = Setup::new(&["openwolf"]);
    let wolf = setup.workdir.path().join(".wolf");
    std::fs::create_dir_all(&wolf).unwrap();
    let file = setup.workdir.path().join("notes.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let read = setup.call(
        "read_file",
        &serde_json::json!({"path": file.display().to_string()}).to_string(),
    );
    assert!(read.to_string().contains("hello"), "{read}");
    let memory = std::fs::read_to_string(wolf.join("memory.md")).unwrap_or_default();
    assert!(memory.contains("read: "), "{memory:?}");
    let ledger: Value =
        serde_json::from_str(&std::fs::read_to_string(wolf.join("token-ledger.json")).unwrap())
            .unwrap();
    assert_eq!(ledger["lifetime"]["total_reads"], 1, "{ledger}");
}

#[test]
#[ignore = "needs the Hermes plugin virtualenv (.ci/setup-python-plugins.sh)"]
fn html_to_markdown_answers_as_under_hermes_without_its_cli() {
    // Its tool bridges to a separately installed `html-to-markdown` MCP CLI; without
    // one, Hermes 0.19.0 answers exactly this.
    let setup = Setup::new(&["html-to-markdown"]);
    let out = setup.run(&["call", "html_to_markdown_call", r#"{"tool":"list_tools"}"#]);
    let answer = stdout_json(&out);
    assert_eq!(
        answer,
        serde_json::json!({"error": "Install html-to-markdown with MCP support and put it on PATH; see the plugin README."})
    );
}
