//! The remote runner and its file channel with a real python3, in a task environment
//! on this machine: the local backend drives the same public operations (start a
//! command, write and read a file) the container and ssh backends do, so the channel,
//! the limits and the cleanup are checked without a service. The live docker and ssh
//! runs are in the integration suite.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use super::CodeExecutionSettings;
use super::remote::{RemoteScript, execute_remote};
use super::test_support::{TEST_TOOLS, caller, require_python};
use crate::context::ToolContext;
use crate::environments::{EnvironmentManager, ExecRequest, TaskEnvironment, TerminalSettings};

/// A task environment on this machine, and the temporary home it lives in.
struct Rig {
    _home: tempfile::TempDir,
    manager: Arc<EnvironmentManager>,
    env: Arc<TaskEnvironment>,
}

impl Rig {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let manager = EnvironmentManager::new(
            TerminalSettings::default(),
            home.path().to_path_buf(),
            home.path().join("results"),
        );
        let env = manager.get_or_create("t").unwrap();
        Rig {
            _home: home,
            manager,
            env,
        }
    }

    fn run_with(&self, code: &str, settings: &CodeExecutionSettings, tools: &[&str]) -> Value {
        let script = RemoteScript {
            code,
            tools: tools.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>(),
        };
        execute_remote(
            &script,
            settings,
            caller(),
            &ToolContext::for_task("t"),
            &self.env,
        )
    }

    fn run(&self, code: &str) -> Value {
        self.run_with(code, &CodeExecutionSettings::default(), TEST_TOOLS)
    }

    fn shell(&self, command: &str) -> String {
        let outcome = self
            .env
            .execute(&ExecRequest {
                command: command.into(),
                workdir: None,
                timeout: std::time::Duration::from_secs(30),
                cancel: None,
                max_output: 100_000,
                spill: None,
                approved: false,
            })
            .unwrap();
        outcome.output.text
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.manager.shutdown();
    }
}

#[test]
fn a_script_calls_tools_through_files_and_only_stdout_returns() {
    require_python();
    let rig = Rig::new();
    let r = rig.run(
        "import sys\nfrom toolhost_tools import echo, multiline\nprint(echo(x=1)['echo']['x'])\nprint(multiline()['text'].split())\nprint('noise', file=sys.stderr)\n",
    );
    assert_eq!(r["status"], "success", "{r}");
    assert_eq!(r["output"], "1\n['a', 'b']\n");
    assert_eq!(r["tool_calls_made"], 2);
    assert_eq!(r["exit_code"], 0);
}

#[test]
fn the_script_runs_in_the_sessions_directory_with_its_variables() {
    require_python();
    let rig = Rig::new();
    let dir = tempfile::tempdir().unwrap();
    rig.shell(&format!(
        "cd {} && export TH_REMOTE_MARK=kept",
        dir.path().display()
    ));
    let r = rig.run("import os\nprint(os.getcwd())\nprint(os.environ.get('TH_REMOTE_MARK'))\n");
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(r["output"], format!("{}\nkept\n", cwd.display()), "{r}");
}

#[test]
fn subprocesses_and_threads_share_the_channel() {
    require_python();
    let rig = Rig::new();
    let r = rig.run(
        "import subprocess, sys, threading\nfrom toolhost_tools import echo\n\
         out = []\nts = [threading.Thread(target=lambda i=i: out.append(echo(i=i)['echo']['i'])) for i in range(4)]\n\
         [t.start() for t in ts]; [t.join() for t in ts]\n\
         child = subprocess.run([sys.executable, '-c', 'from toolhost_tools import echo; print(echo(c=7)[\"echo\"][\"c\"])'], capture_output=True, text=True)\n\
         print(sorted(out), child.stdout.strip())\n",
    );
    assert_eq!(r["output"], "[0, 1, 2, 3] 7\n", "{r}");
    assert_eq!(r["tool_calls_made"], 5);
}

#[test]
fn refusals_match_the_socket_channel() {
    require_python();
    let rig = Rig::new();
    let r =
        rig.run("from toolhost_tools import _call\nprint(_call('terminal', {'command': 'id'}))\n");
    assert_eq!(
        r["output"],
        "{'error': \"Tool 'terminal' is not available in execute_code. Available: echo, multiline\"}\n"
    );
    let r = rig.run(
        "import toolhost_tools\ntoolhost_tools._TOKEN = 'guess'\nprint(toolhost_tools.echo(x=1))\n",
    );
    assert_eq!(r["output"], "{'error': 'Unauthorized RPC request'}\n");
    assert_eq!(r["tool_calls_made"], 0);
    let settings = CodeExecutionSettings {
        max_tool_calls: 3,
        ..CodeExecutionSettings::default()
    };
    let r = rig.run_with(
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
fn a_script_past_its_timeout_is_killed() {
    require_python();
    let rig = Rig::new();
    let settings = CodeExecutionSettings {
        timeout: 3,
        ..CodeExecutionSettings::default()
    };
    let tag = format!("th-remote-timeout-{}", std::process::id());
    let r = rig.run_with(
        &format!(
            "import subprocess, time\nprint('started', flush=True)\nsubprocess.Popen(['sleep', '300', '{tag}'])\ntime.sleep(60)\n"
        ),
        &settings,
        &[],
    );
    assert_eq!(r["status"], "timeout", "{r}");
    assert_eq!(r["error"], "Script timed out after 3s and was killed.");
    assert!(
        r["output"].as_str().unwrap().starts_with("started\n"),
        "{r}"
    );
    assert!(r["duration_seconds"].as_f64().unwrap() < 30.0);
    let left = std::process::Command::new("pgrep")
        .args(["-f", &tag])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "the script's child survived the timeout"
    );
}

#[test]
fn stderr_and_stdout_keep_head_and_tail_within_their_caps() {
    require_python();
    let rig = Rig::new();
    let settings = CodeExecutionSettings {
        max_stdout_bytes: 1000,
        max_stderr_bytes: 100,
        ..CodeExecutionSettings::default()
    };
    let r = rig.run_with(
        "import sys\nprint('x' * 5000)\nsys.stderr.write('HEAD' + 'e' * 5000 + 'TAIL')\nsys.exit(3)\n",
        &settings,
        &[],
    );
    assert_eq!(r["status"], "error");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["stdout_bytes_total"], 5001);
    assert_eq!(r["stdout_bytes_captured"], 1000);
    let error = r["error"].as_str().unwrap();
    assert!(error.starts_with("HEAD"), "{error}");
    assert!(error.ends_with("TAIL"), "{error}");
    assert!(
        error.contains("[OUTPUT TRUNCATED - 4908 bytes omitted out of 5008 total]"),
        "{error}"
    );
}

#[test]
fn the_runs_directory_is_removed_afterwards() {
    require_python();
    let rig = Rig::new();
    let r = rig.run("import os\nprint(os.path.dirname(os.environ['TOOLHOST_RPC_DIR']))\n");
    let dir = r["output"].as_str().unwrap().trim().to_string();
    assert!(dir.contains("toolhost-exec-"), "{r}");
    assert!(!std::path::Path::new(&dir).exists(), "{dir} is still there");
}

#[test]
fn an_environment_without_python3_is_named_in_the_error() {
    let rig = Rig::new();
    let empty = tempfile::tempdir().unwrap();
    rig.shell(&format!("export PATH={}", empty.path().display()));
    let r = rig.run("print(1)");
    assert_eq!(r["status"], "error", "{r}");
    assert_eq!(
        r["error"],
        "Python 3 is not available in the local environment: execute_code runs the script where terminal commands run, and `python3` was not found there. Install Python 3 in the environment (for example an image with python3) or use normal tool calls."
    );
    assert_eq!(r["tool_calls_made"], 0);
}
