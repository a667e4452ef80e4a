//! The terminal and process tools on the local backend, with real processes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::approval::{ApprovalGate, CommandCheck, GateDecision};
use crate::context::ToolContext;
use crate::environments::TaskOverride;
use crate::home::Home;
use crate::hooks::Hooks;
use crate::registry::Registry;
use crate::services::CoreServices;
use crate::settings::CoreSettings;

struct Fixture {
    _home: tempfile::TempDir,
    services: Arc<CoreServices>,
    registry: Registry,
}

impl Fixture {
    fn new() -> Self {
        Self::with(
            CoreSettings::default(),
            Arc::new(crate::approval::AllowAllGate),
        )
    }

    fn with(settings: CoreSettings, gate: Arc<dyn ApprovalGate>) -> Self {
        let home = tempfile::tempdir().unwrap();
        let services = Arc::new(CoreServices::new(
            Home::at(home.path()),
            settings,
            Arc::new(Hooks::new()),
            gate,
        ));
        let registry = Registry::new();
        assert!(crate::tools::register_core_tools(&registry, &services).is_empty());
        Fixture {
            _home: home,
            services,
            registry,
        }
    }

    fn call_ctx(&self, tool: &str, args: Value, ctx: &ToolContext) -> Value {
        let result = self.registry.dispatch_blocking(tool, args, ctx);
        serde_json::from_str(&result.text).unwrap()
    }

    fn call(&self, tool: &str, task: &str, args: Value) -> Value {
        self.call_ctx(tool, args, &ToolContext::for_task(task))
    }

    fn run(&self, task: &str, command: &str) -> Value {
        self.call("terminal", task, json!({"command": command}))
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.services.shutdown();
    }
}

fn output(v: &Value) -> &str {
    v["output"].as_str().unwrap_or_default()
}

/// Dead: no process, or a zombie (a grandchild waiting for init to reap it).
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().next())
                == Some("Z")
        }
    }
}

/// Dead and reaped: our own children must not linger as zombies.
fn reaped(pid: u32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

fn eventually(f: impl Fn() -> bool) -> bool {
    for _ in 0..100 {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn echo_round_trip() {
    let f = Fixture::new();
    let r = f.run("t", "echo hi");
    assert_eq!(r["output"], "hi");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["error"], Value::Null);
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let cmd = format!(
        "sh -c 'sleep 300 & echo $! > {}; wait'; echo never",
        pidfile.display()
    );
    // 3 s, not 1: on a loaded machine the grandchild must get to write its pid first.
    let r = f.call("terminal", "t", json!({"command": cmd, "timeout": 3}));
    assert_eq!(r["exit_code"], 124, "{r}");
    assert!(output(&r).contains("timed out after 3s"), "{r}");
    assert!(!output(&r).contains("never"));
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        eventually(|| dead(pid)),
        "grandchild {pid} survived the timeout"
    );
}

#[test]
fn timeouts_above_the_foreground_maximum_are_refused() {
    let f = Fixture::new();
    let r = f.call(
        "terminal",
        "t",
        json!({"command": "echo x", "timeout": 601}),
    );
    assert_eq!(r["exit_code"], -1);
    assert!(
        r["error"].as_str().unwrap().contains("background=true"),
        "{r}"
    );
}

#[test]
fn long_output_keeps_head_and_tail_and_spills_the_rest() {
    let mut settings = CoreSettings::default();
    settings.tool_output.max_bytes = 1000;
    let f = Fixture::with(settings, Arc::new(crate::approval::AllowAllGate));
    let r = f.run("t", "seq 1 20000");
    let out = output(&r);
    assert!(out.starts_with("1\n2\n3\n"), "{out}");
    assert!(out.ends_with("19999\n20000"), "{out}");
    assert!(out.contains("OUTPUT TRUNCATED"), "{out}");
    assert!(out.len() < 1500);
    let path = r["full_output_path"].as_str().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    let expected: String = (1..=20000).map(|i| format!("{i}\n")).collect();
    assert_eq!(
        full, expected,
        "spill file must hold the whole output, nothing else"
    );
}

#[test]
fn cwd_and_exported_variables_persist() {
    let f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    f.run(
        "t",
        &format!(
            "cd {} && export FOO=bar && LOCAL_ONLY=1",
            dir.path().display()
        ),
    );
    let r = f.run("t", "pwd; echo \"$FOO\"; echo \"${LOCAL_ONLY:-unset}\"");
    assert_eq!(output(&r), format!("{}\nbar\nunset", canonical.display()));
}

#[test]
fn workdir_applies_to_one_call() {
    let f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let canonical = dir.path().canonicalize().unwrap();
    f.run("t", &format!("cd {}", dir.path().display()));
    let r = f.call("terminal", "t", json!({"command": "pwd", "workdir": "/"}));
    assert_eq!(output(&r), "/");
    assert_eq!(output(&f.run("t", "pwd")), canonical.display().to_string());
    let bad = f.call(
        "terminal",
        "t",
        json!({"command": "pwd", "workdir": "/tmp;id"}),
    );
    assert_eq!(bad["status"], "blocked");
}

#[test]
fn per_task_cwd_override() {
    let f = Fixture::new();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    f.services.environments.set_task_override(
        "ta",
        TaskOverride {
            cwd: Some(a.path().display().to_string()),
            ..TaskOverride::default()
        },
    );
    assert_eq!(
        output(&f.run("ta", "pwd")),
        a.path().canonicalize().unwrap().display().to_string()
    );
    // Applies at once to a live environment too.
    f.services.environments.set_task_override(
        "ta",
        TaskOverride {
            cwd: Some(b.path().display().to_string()),
            ..TaskOverride::default()
        },
    );
    assert_eq!(
        output(&f.run("ta", "pwd")),
        b.path().canonicalize().unwrap().display().to_string()
    );
    assert_ne!(
        output(&f.run("tb", "pwd")),
        b.path().canonicalize().unwrap().display().to_string()
    );
}

#[test]
fn two_tasks_run_concurrently_and_stay_separate() {
    let f = Arc::new(Fixture::new());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // Each waits for the other's marker: serialized execution would time out (124).
    let script = |me: &str, other: &str| {
        format!(
            "export WHO={me}; touch {d}/{me}; i=0; while [ ! -f {d}/{other} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ -f {d}/{other} ] && echo met-$WHO"
        )
    };
    let handles: Vec<_> = [("a", "b"), ("b", "a")]
        .into_iter()
        .map(|(me, other)| {
            let f = Arc::clone(&f);
            let cmd = script(me, other);
            let task = format!("task-{me}");
            std::thread::spawn(move || {
                f.call("terminal", &task, json!({"command": cmd, "timeout": 30}))
            })
        })
        .collect();
    for (h, me) in handles.into_iter().zip(["a", "b"]) {
        let r = h.join().unwrap();
        assert_eq!(output(&r), format!("met-{me}"), "{r}");
    }
    assert_eq!(output(&f.run("task-a", "echo $WHO")), "a");
    assert_eq!(output(&f.run("task-b", "echo $WHO")), "b");
}

#[test]
fn output_is_ansi_stripped_and_redacted() {
    let f = Fixture::new();
    let r = f.run(
        "t",
        r"printf '\033[31mred\033[0m OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv\n'",
    );
    assert_eq!(output(&r), "red OPENAI_API_KEY=[REDACTED]");
}

#[test]
fn host_secrets_are_withheld_from_commands() {
    let f = Fixture::new();
    // The host's own variables pass, blocklisted ones never do.
    let r = f.run(
        "t",
        "echo ${HOME:+home-set}; echo ${DAYTONA_API_KEY:-no-key}",
    );
    assert!(output(&r).starts_with("home-set"));
    assert!(output(&r).ends_with("no-key"));
}

#[test]
fn transform_terminal_output_hook_sees_foreground_output() {
    let f = Fixture::new();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    f.services
        .hooks
        .on_transform_terminal_output("test", move |ev| {
            seen2.lock().unwrap().push((
                ev.command.to_string(),
                ev.output.to_string(),
                ev.exit_code,
            ));
            ev.output.contains("swap-me").then(|| "swapped".to_string())
        });
    assert_eq!(output(&f.run("t", "echo swap-me")), "swapped");
    assert_eq!(output(&f.run("t", "echo keep; exit 3")), "keep");
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[1],
        ("echo keep; exit 3".to_string(), "keep\n".to_string(), 3)
    );
}

#[test]
fn exit_code_meaning_and_guidance() {
    let f = Fixture::new();
    let r = f.run("t", "grep nothing-here /dev/null");
    assert_eq!(r["exit_code"], 1);
    assert_eq!(r["exit_code_meaning"], "No matches found (not an error)");
    let r = f.run("t", "npm run dev");
    assert_eq!(r["exit_code"], -1);
    assert!(r["error"].as_str().unwrap().contains("background=true"));
    let r = f.call("terminal", "t", json!({"command": 42}));
    assert_eq!(r["error"], "Invalid command: expected string, got number");
}

#[test]
fn cancellation_kills_the_command() {
    let f = Fixture::new();
    let ctx = ToolContext::for_task("t");
    let cancel = ctx.cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        cancel.cancel();
    });
    let r = f.call_ctx("terminal", json!({"command": "sleep 30; echo done"}), &ctx);
    assert_eq!(r["exit_code"], 130, "{r}");
    assert!(output(&r).contains("[Command interrupted]"));
}

/// Records every check; blocks commands containing "rm -rf /" as hardline.
#[derive(Default)]
struct RecordingGate {
    seen: Mutex<Vec<CommandCheck>>,
}

impl ApprovalGate for RecordingGate {
    fn check(&self, check: &CommandCheck) -> GateDecision {
        self.seen.lock().unwrap().push(check.clone());
        if check.command.contains("rm -rf /") {
            GateDecision::Blocked {
                message: "BLOCKED: recursive delete of the root".into(),
                hardline: true,
            }
        } else if check.command.contains("git reset --hard") {
            GateDecision::Approved {
                note: Some(
                    "Command required approval (hard reset) and was approved by the user.".into(),
                ),
                human: true,
            }
        } else {
            GateDecision::Approved {
                note: None,
                human: false,
            }
        }
    }
}

#[test]
fn approval_gate_runs_before_every_command() {
    let gate = Arc::new(RecordingGate::default());
    let f = Fixture::with(CoreSettings::default(), gate.clone());
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    let r = f.run(
        "t",
        &format!("touch {}; rm -rf / --no-preserve-root", canary.display()),
    );
    assert_eq!(r["status"], "blocked");
    assert_eq!(r["hardline"], true);
    assert!(!canary.exists(), "a blocked command must not run at all");
    let r = f.run("t", "echo git reset --hard");
    assert!(
        r["approval"]
            .as_str()
            .unwrap()
            .contains("approved by the user")
    );
    let r = f.call(
        "terminal",
        "t",
        json!({"command": "sleep 1", "background": true}),
    );
    assert!(r["session_id"].as_str().unwrap().starts_with("proc_"));
    let seen = gate.seen.lock().unwrap();
    assert_eq!(
        seen.len(),
        3,
        "foreground and background commands are all checked"
    );
    assert!(
        seen.iter()
            .all(|c| c.host_access && c.env_type == "local" && c.task_id == "t")
    );
}

fn start_bg(f: &Fixture, task: &str, command: &str, pty: bool) -> String {
    let r = f.call(
        "terminal",
        task,
        json!({"command": command, "background": true, "pty": pty}),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    r["session_id"].as_str().unwrap().to_string()
}

#[test]
fn background_lifecycle() {
    let f = Fixture::new();
    let id = start_bg(
        &f,
        "t",
        "for i in 1 2 3 4 5; do echo line$i; sleep 0.1; done; exit 7",
        false,
    );
    let r = f.call(
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 30}),
    );
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["exit_code"], 7);
    let log = f.call(
        "process",
        "t",
        json!({"action": "log", "session_id": id, "offset": 1, "limit": 2}),
    );
    assert_eq!(log["output"], "line2\nline3");
    assert_eq!(log["total_lines"], 5);
    let poll = f.call("process", "t", json!({"action": "poll", "session_id": id}));
    assert!(poll["output_preview"].as_str().unwrap().contains("line5"));
    let list = f.call("process", "t", json!({"action": "list"}));
    assert_eq!(list["processes"].as_array().unwrap().len(), 1);
    assert_eq!(
        f.call("process", "other", json!({"action": "list"}))["processes"],
        json!([])
    );
}

#[test]
fn background_kill_reaps_the_group() {
    let f = Fixture::new();
    let id = start_bg(&f, "t", "sleep 300 | cat", false);
    let poll = f.call("process", "t", json!({"action": "poll", "session_id": id}));
    let pid = poll["pid"].as_u64().unwrap() as u32;
    let r = f.call("process", "t", json!({"action": "kill", "session_id": id}));
    assert_eq!(r["status"], "killed");
    assert_eq!(r["exit_code"], -15);
    assert!(eventually(|| reaped(pid)), "{pid} not reaped");
    let again = f.call("process", "t", json!({"action": "kill", "session_id": id}));
    assert_eq!(again["status"], "already_exited");
}

#[test]
fn background_stdin_write_submit_close() {
    let f = Fixture::new();
    let id = start_bg(&f, "t", "read a; echo got:$a; cat; echo eof", false);
    let w = f.call(
        "process",
        "t",
        json!({"action": "submit", "session_id": id, "data": "hello"}),
    );
    assert_eq!(w["bytes_written"], 6);
    f.call(
        "process",
        "t",
        json!({"action": "write", "session_id": id, "data": "tail\n"}),
    );
    let c = f.call("process", "t", json!({"action": "close", "session_id": id}));
    assert_eq!(c["message"], "stdin closed");
    let r = f.call(
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 30}),
    );
    assert_eq!(r["status"], "exited", "{r}");
    assert_eq!(r["output"], "got:hello\ntail\neof\n");
}

#[test]
fn background_pty_mode() {
    let f = Fixture::new();
    let id = start_bg(
        &f,
        "t",
        "tty; printf 'name? '; read x; echo \"hello $x\"",
        true,
    );
    f.call(
        "process",
        "t",
        json!({"action": "submit", "session_id": id, "data": "pty"}),
    );
    let r = f.call(
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 30}),
    );
    let out = r["output"].as_str().unwrap();
    assert!(out.contains("/dev/pts/"), "{out}");
    assert!(out.contains("hello pty"), "{out}");
}

#[test]
fn wait_is_bounded_and_honours_cancellation() {
    let mut settings = CoreSettings::default();
    settings.terminal.timeout = 1;
    let f = Fixture::with(settings, Arc::new(crate::approval::AllowAllGate));
    let id = start_bg(&f, "t", "sleep 300", false);
    let r = f.call(
        "process",
        "t",
        json!({"action": "wait", "session_id": id, "timeout": 50}),
    );
    assert_eq!(r["status"], "timeout");
    assert!(r["timeout_note"].as_str().unwrap().contains("1s"));
    let ctx = ToolContext::for_task("t");
    ctx.cancel.cancel();
    let r = f.call_ctx("process", json!({"action": "wait", "session_id": id}), &ctx);
    assert_eq!(r["status"], "interrupted");
}

#[test]
fn shutdown_kills_and_reaps_background_processes() {
    let f = Fixture::new();
    let id = start_bg(&f, "t", "sleep 300", false);
    let pid = f.call("process", "t", json!({"action": "poll", "session_id": id}))["pid"]
        .as_u64()
        .unwrap() as u32;
    f.services.shutdown();
    assert!(
        eventually(|| reaped(pid)),
        "background process {pid} outlived shutdown"
    );
    let r = f.run("t", "echo late");
    assert_eq!(r["status"], "disabled");
}

#[test]
fn process_errors() {
    let f = Fixture::new();
    let r = f.call("process", "t", json!({"action": "poll"}));
    assert_eq!(r["error"], "session_id is required for poll");
    let r = f.call(
        "process",
        "t",
        json!({"action": "poll", "session_id": "proc_nope"}),
    );
    assert_eq!(r["status"], "not_found");
    let r = f.call("process", "t", json!({"action": "explode"}));
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .starts_with("Unknown process action")
    );
}

#[test]
fn idle_environments_are_reaped_unless_background_processes_run() {
    let f = Fixture::new();
    f.run("idle", "export MARK=1");
    let id = start_bg(&f, "busy", "sleep 300", false);
    let manager = &f.services.environments;
    let reaped = manager.reap_idle(Duration::ZERO);
    assert_eq!(reaped, vec!["idle".to_string()]);
    assert!(manager.get("idle").is_none());
    assert!(
        manager.get("busy").is_some(),
        "a task with a running process is kept"
    );
    // A reaped task gets a fresh environment on its next call.
    assert_eq!(output(&f.run("idle", "echo ${MARK:-fresh}")), "fresh");
    f.call(
        "process",
        "busy",
        json!({"action": "kill", "session_id": id}),
    );
    assert!(
        manager
            .reap_idle(Duration::ZERO)
            .contains(&"busy".to_string())
    );
}

#[test]
fn the_result_says_when_a_human_lifted_the_floor_and_only_then() {
    use super::floor_note;
    use crate::environments::BackendKind;
    use crate::environments::TerminalSettings;
    use crate::environments::settings::ConfineMode;
    let with = |confine: ConfineMode| {
        let mut s = TerminalSettings::default();
        s.local.confine = confine;
        s
    };
    let table = [
        (BackendKind::Local, ConfineMode::Verdict, true, true),
        (BackendKind::Local, ConfineMode::Verdict, false, false),
        (BackendKind::Local, ConfineMode::Floor, true, false),
        (BackendKind::Local, ConfineMode::Off, true, false),
        (BackendKind::Docker, ConfineMode::Verdict, true, false),
    ];
    for (kind, confine, human, noted) in table {
        assert_eq!(
            floor_note(kind, &with(confine), human).is_some(),
            noted,
            "{kind:?} {confine:?} human={human}"
        );
    }
}
