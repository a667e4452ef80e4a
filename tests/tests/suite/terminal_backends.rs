//! The terminal/process tools and environment file I/O against live backends: bubblewrap
//! (sandbox), podman's Docker-compatible service (docker) and a local sshd (ssh), as set
//! up by `.ci/setup-terminal.sh`. Those tests are `#[ignore = "needs …"]` and fail, naming
//! what is missing, when run (`--include-ignored`) without their service.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_tests::{ci_services, require, require_service};
use tools_core::approval::{ApprovalEngine, ApprovalGate, CommandCheck, GateDecision};
use tools_core::environments::settings::DockerSettings;
use tools_core::environments::{BackendKind, TerminalSettings};
use tools_core::settings::CoreSettings;
use tools_core::{CoreServices, Home, Hooks, Registry, ToolContext};

/// The real approval engine (manual mode, nobody to ask: flagged commands are denied),
/// recording every check it is asked for.
struct RecordingGate {
    engine: Arc<ApprovalEngine>,
    seen: Mutex<Vec<CommandCheck>>,
}

impl RecordingGate {
    fn new(home: &Home) -> Self {
        RecordingGate {
            // The tests clean up with `rm -rf` of their own scratch directories.
            engine: toolhost_tests::recursive_delete_allowlisted(home),
            seen: Mutex::new(Vec::new()),
        }
    }
}

impl ApprovalGate for RecordingGate {
    fn check(&self, check: &CommandCheck) -> GateDecision {
        self.seen.lock().unwrap().push(check.clone());
        self.engine.check(check)
    }
}

/// A hardline command that would be harmless if the floor ever failed: the device does
/// not exist. (Never test the floor with `rm -rf /`, `kill -9 -1` or `reboot` on a host
/// backend: a regression would take the machine down.)
const HARDLINE_PROBE: &str = "mkfs.ext4 /dev/sdzz9";

struct Rig {
    _home: tempfile::TempDir,
    services: Arc<CoreServices>,
    registry: Registry,
    gate: Arc<RecordingGate>,
}

impl Rig {
    fn new(terminal: TerminalSettings) -> Self {
        let home = tempfile::tempdir().unwrap();
        let gate = Arc::new(RecordingGate::new(&Home::at(home.path())));
        let settings = CoreSettings {
            terminal,
            ..CoreSettings::default()
        };
        let services = Arc::new(CoreServices::new(
            Home::at(home.path()),
            settings,
            Arc::new(Hooks::new()),
            gate.clone(),
        ));
        let registry = Registry::new();
        assert!(tools_core::tools::register_core_tools(&registry, &services).is_empty());
        Rig {
            _home: home,
            services,
            registry,
            gate,
        }
    }

    fn call(&self, tool: &str, task: &str, args: Value) -> Value {
        let r = self
            .registry
            .dispatch_blocking(tool, args, &ToolContext::for_task(task));
        serde_json::from_str(&r.text).unwrap()
    }

    fn run(&self, task: &str, command: &str) -> Value {
        self.call("terminal", task, json!({"command": command, "timeout": 60}))
    }

    fn out(&self, task: &str, command: &str) -> String {
        let r = self.run(task, command);
        assert_eq!(r["error"], Value::Null, "{command}: {r}");
        r["output"].as_str().unwrap().to_string()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.services.shutdown();
    }
}

/// True once no live process on this host has `pattern` in its command line.
fn host_has_no(pattern: &str) -> bool {
    // Up to 10 s: process teardown is slow on a loaded 2-core CI machine.
    for _ in 0..100 {
        let out = std::process::Command::new("pgrep")
            .args(["-f", pattern])
            .output();
        match out {
            Ok(o) if o.stdout.is_empty() => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("pgrep: {e}"),
        }
    }
    false
}

/// The behaviours every backend must show. `tag` makes its sleep commands unique.
fn common_behaviour(rig: &Rig, backend: BackendKind, tag: u32) {
    // Unique per run, so a leftover from an earlier (failed) run cannot confuse the check.
    let tag = format!("{tag}{}", std::process::id() % 9973);
    let task = "main";
    assert_eq!(rig.out(task, "echo hi"), "hi");
    // cwd and exported variables persist; unexported ones do not.
    rig.out(
        task,
        "mkdir -p /tmp/th-persist && cd /tmp/th-persist && export KEEP=yes && DROP=1",
    );
    assert_eq!(
        rig.out(task, "pwd; echo $KEEP; echo ${DROP:-unset}"),
        "/tmp/th-persist\nyes\nunset"
    );
    // A timeout kills the whole group inside the environment (all test backends run on
    // this machine, so the host's process table shows what survived).
    let r = rig.call(
        "terminal",
        task,
        json!({"command": format!("sh -c 'sleep {tag}1 & wait'"), "timeout": 2}),
    );
    assert_eq!(r["exit_code"], 124, "{r}");
    assert!(
        host_has_no(&format!("sleep {tag}1")),
        "the backgrounded grandchild survived the timeout"
    );
    // Background lifecycle.
    let r = rig.call(
        "terminal",
        task,
        json!({"command": "for i in 1 2 3; do echo bg$i; sleep 0.1; done; exit 5", "background": true}),
    );
    let id = r["session_id"].as_str().unwrap().to_string();
    let w = rig.call(
        "process",
        task,
        json!({"action": "wait", "session_id": id, "timeout": 60}),
    );
    assert_eq!(w["status"], "exited", "{w}");
    assert_eq!(w["exit_code"], 5);
    assert_eq!(w["output"], "bg1\nbg2\nbg3\n");
    let r = rig.call(
        "terminal",
        task,
        json!({"command": format!("echo started; sleep {tag}2"), "background": true}),
    );
    let id = r["session_id"].as_str().unwrap().to_string();
    let k = rig.call("process", task, json!({"action": "kill", "session_id": id}));
    assert_eq!(k["status"], "killed", "{k}");
    assert!(
        host_has_no(&format!("sleep {tag}2")),
        "killed background process still running"
    );
    // The gate saw every command with the backend's type; the hardline floor holds on
    // every backend, sandboxed ones included.
    let r = rig.run(task, HARDLINE_PROBE);
    assert_eq!(r["status"], "blocked", "{r}");
    assert!(r["error"].as_str().unwrap().contains("hardline"), "{r}");
    let seen = rig.gate.seen.lock().unwrap();
    assert!(seen.iter().all(|c| c.env_type == backend.name()));
    let host_access = seen.iter().all(|c| c.host_access);
    drop(seen);
    dangerous_command_policy(rig, "/tmp", &tag, host_access);
}

/// A flagged (not hardline) command: with host access and nobody to approve it, it is
/// stopped and the model is told why; in an isolated environment it runs. The probe
/// file goes in `dir`, which must be writable to an unapproved command (on the local
/// backend the kernel floor lets such commands create files only in directories that
/// existed when the environment started, not directly in a parent of toolhost's home).
fn dangerous_command_policy(rig: &Rig, dir: &str, tag: &str, host_access: bool) {
    let task = "main";
    let file = format!("{dir}/th-approval-{tag}");
    rig.out(
        task,
        &format!("rm -f {file}; touch {file}; chmod 600 {file}"),
    );
    let r = rig.run(task, &format!("chmod 777 {file}"));
    let mode = rig.out(task, &format!("stat -c %a {file}"));
    if host_access {
        assert_eq!(r["status"], "blocked", "{r}");
        let error = r["error"].as_str().unwrap();
        assert!(error.contains("BLOCKED"), "{error}");
        assert!(
            error.to_lowercase().contains("writable"),
            "the model is told which rule: {error}"
        );
        assert_eq!(mode, "600", "the blocked command ran");
    } else {
        assert_eq!(r["error"], Value::Null, "{r}");
        assert_eq!(mode, "777");
    }
}

#[test]
fn local_backend_approval() {
    let workdir = tempfile::tempdir().unwrap();
    let settings = TerminalSettings {
        cwd: workdir.path().display().to_string(),
        ..TerminalSettings::default()
    };
    let rig = Rig::new(settings);
    let r = rig.run("main", HARDLINE_PROBE);
    assert_eq!(r["status"], "blocked", "{r}");
    let dir = workdir.path().display().to_string();
    dangerous_command_policy(&rig, &dir, &std::process::id().to_string(), true);
    assert!(rig.gate.seen.lock().unwrap().iter().all(|c| c.host_access));
}

fn file_io(rig: &Rig) {
    let env = rig.services.environments.get_or_create("files").unwrap();
    let data: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
    env.write_file(
        "/tmp/th-files/nested/blob.bin",
        &data,
        Duration::from_secs(60),
    )
    .unwrap();
    assert_eq!(
        env.read_file("/tmp/th-files/nested/blob.bin", Duration::from_secs(60))
            .unwrap(),
        data
    );
    // Relative paths resolve against the session cwd, and the file is really *inside*
    // the environment: the shell sees it there.
    rig.out("files", "cd /tmp/th-files");
    env.write_file("note.txt", b"inside\n", Duration::from_secs(60))
        .unwrap();
    assert_eq!(rig.out("files", "cat /tmp/th-files/note.txt"), "inside");
    let err = env
        .read_file("/nonexistent/x", Duration::from_secs(60))
        .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/x"), "{err}");

    // The primitives the file tools are built on, inside the environment.
    use std::io::Read;
    use tools_core::environments::fs_ops::EnvFileKind;
    let root = "/tmp/th-fs";
    rig.out("files", &format!("rm -rf {root}"));
    assert!(
        env.write_atomic(&format!("{root}/src/a.txt"), b"alpha\n")
            .unwrap()
    );
    assert!(
        !env.write_atomic(&format!("{root}/src/a.txt"), b"beta\n")
            .unwrap()
    );
    env.write_atomic(&format!("{root}/src/.hidden"), b"h")
        .unwrap();
    env.write_atomic(&format!("{root}/b c.bin"), &data[..1000])
        .unwrap();
    let mut text = String::new();
    env.open_read(&format!("{root}/src/a.txt"))
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, "beta\n");
    let meta = env.stat(&format!("{root}/b c.bin")).unwrap();
    assert_eq!((meta.kind, meta.len), (EnvFileKind::File, 1000));
    assert_eq!(
        env.stat(&format!("{root}/missing")).unwrap_err().kind(),
        std::io::ErrorKind::NotFound
    );
    assert_eq!(
        env.list_dir(root).unwrap(),
        vec![
            ("b c.bin".to_string(), EnvFileKind::File),
            ("src".to_string(), EnvFileKind::Dir)
        ]
    );
    let walked: Vec<String> = env
        .walk_files(root, false, false, None)
        .unwrap()
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(
        walked,
        vec![format!("{root}/b c.bin"), format!("{root}/src/a.txt")]
    );
    env.rename(&format!("{root}/src/a.txt"), &format!("{root}/moved/a.txt"))
        .unwrap();
    env.remove_file(&format!("{root}/moved/a.txt")).unwrap();
    assert_eq!(
        rig.out("files", &format!("ls {root}/moved | wc -l")).trim(),
        "0"
    );
}

/// The file tools (read_file, write_file, patch, search_files) run inside the
/// environment: what write_file writes, the terminal sees there, and the reverse.
fn file_tools(rig: &Rig, root: &str) {
    let task = "tools";
    rig.out(task, &format!("rm -rf {root} && mkdir -p {root} && cd {root} && printf 'one\\ntwo\\n' > from-shell.txt"));
    let r = rig.call("read_file", task, json!({"path": "from-shell.txt"}));
    assert_eq!(r["content"], "1|one\n2|two", "{r}");
    let r = rig.call(
        "write_file",
        task,
        json!({"path": "sub/from-tool.txt", "content": "alpha\nbeta\n"}),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    assert_eq!(
        rig.out(task, &format!("cat {root}/sub/from-tool.txt")),
        "alpha\nbeta"
    );
    let r = rig.call(
        "patch",
        task,
        json!({"path": "sub/from-tool.txt", "old_string": "beta", "new_string": "gamma"}),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    assert_eq!(rig.out(task, "cat sub/from-tool.txt"), "alpha\ngamma");
    let r = rig.call(
        "search_files",
        task,
        json!({"pattern": "gamma", "path": root}),
    );
    assert!(r.to_string().contains("from-tool.txt"), "{r}");
    let r = rig.call(
        "read_file",
        task,
        json!({"path": format!("{root}/nope.txt")}),
    );
    assert!(
        r["error"]
            .as_str()
            .is_some_and(|e| e.to_lowercase().contains("not found")),
        "{r}"
    );
}

const DOCKER: &str =
    "podman's Docker-compatible service (TOOLHOST_TEST_DOCKER_HOST, .ci/setup-terminal.sh)";

fn docker_settings() -> Option<TerminalSettings> {
    Some(TerminalSettings {
        backend: BackendKind::Docker,
        // No bridge network: creating and tearing down podman's bridge and firewall
        // rules while other jobs run on the machine is disruptive, and no test needs a
        // network.
        docker: DockerSettings {
            memory_mb: 512,
            network: false,
            ..ci_services::docker()?
        },
        ..TerminalSettings::default()
    })
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_backend() {
    let settings = require(docker_settings(), DOCKER);
    let rig = Rig::new(settings);
    common_behaviour(&rig, BackendKind::Docker, 71);
    assert!(rig.gate.seen.lock().unwrap().iter().all(|c| !c.host_access));
    // Hardened: no capabilities beyond the few kept, no new privileges.
    let status = rig.out("main", "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status");
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    assert!(!status.contains("CapEff:\t000001ffffffffff"), "{status}");
    file_io(&rig);
    file_tools(&rig, "/tmp/th-tools-docker");
    // Not on the host: the file tools wrote inside the container.
    assert!(!std::path::Path::new("/tmp/th-tools-docker/sub/from-tool.txt").exists());
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_container_is_removed_on_cleanup() {
    let settings = require(docker_settings(), DOCKER);
    let host = settings.docker.host.clone();
    let rig = Rig::new(settings);
    let env = rig.services.environments.get_or_create("gone").unwrap();
    let description = env.backend().describe();
    let id = description.split_whitespace().nth(2).unwrap().to_string();
    let socket = host.strip_prefix("unix://").unwrap().to_string();
    let inspect = |id: &str| {
        std::process::Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--unix-socket",
                &socket,
            ])
            .arg(format!("http://d/v1.41/containers/{id}/json"))
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    };
    assert_eq!(inspect(&id), "200");
    rig.services.environments.cleanup_task("gone").unwrap();
    assert_eq!(inspect(&id), "404");
}

fn ssh_settings() -> Option<TerminalSettings> {
    Some(TerminalSettings {
        backend: BackendKind::Ssh,
        ssh: ci_services::ssh()?,
        ..TerminalSettings::default()
    })
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn ssh_backend() {
    let settings = require(
        ssh_settings(),
        "the test sshd (TOOLHOST_TEST_SSH_*, .ci/setup-terminal.sh)",
    );
    let rig = Rig::new(settings);
    common_behaviour(&rig, BackendKind::Ssh, 72);
    assert!(rig.gate.seen.lock().unwrap().iter().all(|c| c.host_access));
    file_io(&rig);
    file_tools(&rig, "/tmp/th-tools-ssh");
    // Background stdin works over ssh too.
    let r = rig.call(
        "terminal",
        "main",
        json!({"command": "read a; echo got:$a", "background": true}),
    );
    let id = r["session_id"].as_str().unwrap().to_string();
    rig.call(
        "process",
        "main",
        json!({"action": "submit", "session_id": id, "data": "over-ssh"}),
    );
    let w = rig.call(
        "process",
        "main",
        json!({"action": "wait", "session_id": id, "timeout": 60}),
    );
    assert_eq!(w["output"], "got:over-ssh\n", "{w}");
}

#[test]
#[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
fn sandbox_backend() {
    let available = tools_core::environments::sandbox::availability(&Default::default());
    require_service(available.is_ok(), &format!("bubblewrap ({available:?})"));
    let workdir = tempfile::tempdir().unwrap();
    let mut settings = TerminalSettings {
        backend: BackendKind::Sandbox,
        ..TerminalSettings::default()
    };
    settings.sandbox.workdir = workdir.path().display().to_string();
    let rig = Rig::new(settings);
    common_behaviour(&rig, BackendKind::Sandbox, 73);
    assert!(rig.gate.seen.lock().unwrap().iter().all(|c| !c.host_access));
    // Writable workdir only, read-only system, no home, no network.
    rig.out("box", "echo data > inside.txt");
    assert_eq!(
        std::fs::read_to_string(workdir.path().join("inside.txt")).unwrap(),
        "data\n"
    );
    let r = rig.run("box", "touch /usr/th-should-fail");
    assert_ne!(r["exit_code"], 0, "{r}");
    let r = rig.run("box", "ls /root");
    assert_ne!(r["exit_code"], 0, "{r}");
    let ifaces = rig.out("box", "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
    assert_eq!(ifaces, "lo");
}
