//! `execute_code` with a real python3: scripts that call tools through a registry.

use std::collections::BTreeSet;

use serde_json::Value;

use super::CodeExecutionSettings;
use super::run::{Script, execute};
use super::test_support::{TEST_TOOLS, allowed_cpus, caller, require_python};
use crate::context::ToolContext;
use crate::environments::exec_policy::Floor;
use crate::environments::settings::LocalSettings;

fn run_with(code: &str, settings: &CodeExecutionSettings, tools: &[&str]) -> Value {
    let cwd = std::env::temp_dir();
    let script = Script {
        code,
        floor: Floor::prepare(
            &LocalSettings::default(),
            &cwd,
            std::path::Path::new("/nonexistent/toolhost"),
        ),
        cwd,
        tools: tools.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
    };
    execute(&script, settings, caller(), &ToolContext::for_task("t"))
}

fn run(code: &str) -> Value {
    run_with(code, &CodeExecutionSettings::default(), TEST_TOOLS)
}

#[test]
fn a_script_calls_tools_and_only_stdout_returns() {
    require_python();
    let r = run(
        "import sys\nfrom toolhost_tools import echo, multiline\nprint(echo(x=1)['echo']['x'])\nprint(multiline()['text'].split())\nprint('noise', file=sys.stderr)\n",
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["output"], "1\n['a', 'b']\n");
    assert_eq!(r["tool_calls_made"], 2);
    assert_eq!(r["exit_code"], 0);
}

#[test]
fn tools_and_what_the_script_starts_between_calls_keep_every_cpu() {
    require_python();
    // Calls are served with the script and the serving thread on one CPU
    // (colocate.rs); the tool itself, the script between calls and its subprocesses
    // must still see the whole mask.
    let expected = std::thread::spawn(allowed_cpus).join().unwrap();
    let r = run_with(
        "import os, subprocess, sys\nfrom toolhost_tools import cpus\n\
         before = len(os.sched_getaffinity(0))\n\
         during = cpus()['cpus']\n\
         after = len(os.sched_getaffinity(0))\n\
         child = subprocess.run([sys.executable, '-c', 'import os; print(len(os.sched_getaffinity(0)))'], capture_output=True, text=True).stdout.strip()\n\
         print(before, during, after, child)\n",
        &CodeExecutionSettings::default(),
        &["cpus"],
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(
        r["output"].as_str().unwrap().trim(),
        format!("{expected} {expected} {expected} {expected}"),
        "{r}"
    );
}

#[test]
fn a_script_holds_one_cpu_while_its_call_is_served() {
    require_python();
    let expected = std::thread::spawn(allowed_cpus).join().unwrap();
    let r = run_with(
        "import os\nfrom toolhost_tools import cpus\nprint(cpus(pid=os.getpid())['script'])\n",
        &CodeExecutionSettings::default(),
        &["cpus"],
    );
    assert_eq!(r["status"], "success", "{r}");
    let held = r["output"].as_str().unwrap().trim().to_string();
    if expected > 1 {
        assert!(
            held.parse::<usize>().is_ok(),
            "one CPU expected, got {held:?}"
        );
    } else {
        assert!(!held.is_empty(), "{r}");
    }
}

#[test]
fn tools_off_the_allowlist_are_refused() {
    require_python();
    let r = run("from toolhost_tools import _call\nprint(_call('terminal', {'command': 'id'}))\n");
    assert_eq!(
        r["output"],
        "{'error': \"Tool 'terminal' is not available in execute_code. Available: echo, multiline\"}\n"
    );
    assert_eq!(r["tool_calls_made"], 0);
}

#[test]
fn the_call_limit_is_enforced_with_a_clear_message() {
    require_python();
    let settings = CodeExecutionSettings {
        max_tool_calls: 3,
        ..CodeExecutionSettings::default()
    };
    let r = run_with(
        "from toolhost_tools import echo\nfor i in range(5):\n    r = echo(i=i)\nprint(r)\n",
        &settings,
        &["echo"],
    );
    assert_eq!(r["tool_calls_made"], 3);
    assert_eq!(
        r["output"],
        "{'error': 'Tool call limit reached (3). No more tool calls allowed in this execution.'}\n"
    );
}

#[test]
fn requests_without_the_token_are_unauthorized() {
    require_python();
    let r = run(
        "import os\nos.environ['TOOLHOST_RPC_TOKEN'] = 'guess'\nfrom toolhost_tools import echo\nprint(echo(x=1))\n",
    );
    assert_eq!(r["output"], "{'error': 'Unauthorized RPC request'}\n");
    assert_eq!(r["tool_calls_made"], 0);
}

#[test]
fn a_script_past_its_timeout_is_killed() {
    require_python();
    let settings = CodeExecutionSettings {
        timeout: 5,
        ..CodeExecutionSettings::default()
    };
    let r = run_with(
        "import time\nprint('started', flush=True)\ntime.sleep(60)\n",
        &settings,
        &[],
    );
    assert_eq!(r["status"], "timeout", "{r}");
    assert_eq!(r["error"], "Script timed out after 5s and was killed.");
    assert!(
        r["output"].as_str().unwrap().starts_with("started\n"),
        "{r}"
    );
    assert!(r["duration_seconds"].as_f64().unwrap() < 30.0);
}

#[test]
fn errors_carry_stderr_and_big_output_is_capped() {
    require_python();
    let r = run("raise SystemExit('boom')\n");
    assert_eq!(r["status"], "error");
    assert_eq!(r["exit_code"], 1);
    assert_eq!(r["error"], "boom\n");
    let settings = CodeExecutionSettings {
        max_stdout_bytes: 1000,
        ..CodeExecutionSettings::default()
    };
    let r = run_with("print('x' * 5000)\n", &settings, &[]);
    assert_eq!(r["stdout_truncated"], true);
    assert_eq!(r["stdout_bytes_total"], 5001);
    assert_eq!(r["stdout_bytes_captured"], 1000);
    assert!(
        r["output"]
            .as_str()
            .unwrap()
            .contains("[OUTPUT TRUNCATED - 4001 bytes omitted out of 5001 total]")
    );
}

#[test]
fn a_missing_interpreter_is_a_clear_error() {
    let settings = CodeExecutionSettings {
        python: "/nonexistent/python3".into(),
        ..CodeExecutionSettings::default()
    };
    let r = run_with("print(1)", &settings, &[]);
    assert_eq!(r["status"], "error");
    assert!(
        r["error"].as_str().unwrap().contains("needs Python 3"),
        "{r}"
    );
}

#[test]
fn the_module_has_typed_stubs_and_generic_ones() {
    let source = super::stubs::module_source(
        &["read_file".into(), "my_tool".into(), "bad-name".into()],
        super::stubs::Transport::Socket,
    );
    assert!(source.contains("def read_file(path: str, offset: int = 1, limit: int = 500):"));
    assert!(source.contains("def my_tool(**kwargs):"));
    assert!(!source.contains("bad-name("));
}
