//! `process write` / `submit` through the real approval engine with nobody to ask: text
//! sent to a background shell is judged like a terminal command (docs/guarded-writes.md).

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::approval::{ApprovalEngine, ApprovalSettings, MemoryOnly, NoObserver, Surfaces};
use crate::context::ToolContext;
use crate::home::Home;
use crate::hooks::Hooks;
use crate::registry::Registry;
use crate::services::CoreServices;
use crate::settings::CoreSettings;

/// Core tools over the real approval engine, with no human to ask.
struct Unattended {
    dir: tempfile::TempDir,
    services: Arc<CoreServices>,
    registry: Registry,
}

impl Unattended {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let gate = ApprovalEngine::new(
            ApprovalSettings::default(),
            Arc::new(MemoryOnly),
            Arc::new(NoObserver),
            Surfaces::none(),
        );
        let services = Arc::new(CoreServices::new(
            Home::at(dir.path().join("home")),
            CoreSettings::default(),
            Arc::new(Hooks::new()),
            gate,
        ));
        let registry = Registry::new();
        assert!(crate::tools::register_core_tools(&registry, &services).is_empty());
        Unattended {
            dir,
            services,
            registry,
        }
    }

    fn call(&self, tool: &str, args: Value) -> Value {
        let result = self
            .registry
            .dispatch_blocking(tool, args, &ToolContext::for_task("t"));
        serde_json::from_str(&result.text).unwrap()
    }

    /// A background `bash` reading commands from stdin.
    fn shell(&self) -> String {
        let r = self.call(
            "terminal",
            json!({"command": "bash", "background": true, "workdir": self.dir.path()}),
        );
        r["session_id"].as_str().unwrap().to_string()
    }

    fn stdin(&self, id: &str, action: &str, data: &str) -> Value {
        self.call(
            "process",
            json!({"action": action, "session_id": id, "data": data}),
        )
    }

    /// Close the shell's stdin and wait for it to end: what it ran has finished.
    fn finish(&self, id: &str) -> Value {
        self.call("process", json!({"action": "close", "session_id": id}));
        self.call(
            "process",
            json!({"action": "wait", "session_id": id, "timeout": 30}),
        )
    }

    fn docs(&self) -> std::path::PathBuf {
        let docs = self.dir.path().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("keep.txt"), "x").unwrap();
        docs
    }
}

impl Drop for Unattended {
    fn drop(&mut self) {
        self.services.shutdown();
    }
}

fn blocked(r: &Value) -> bool {
    r["status"] == "blocked" && r["bytes_written"] == 0
}

#[test]
fn a_dangerous_submit_is_blocked_with_nobody_to_ask() {
    let f = Unattended::new();
    let docs = f.docs();
    let id = f.shell();
    let r = f.stdin(&id, "submit", &format!("rm -rf {}", docs.display()));
    assert!(blocked(&r), "{r}");
    assert!(r["error"].as_str().unwrap().contains("BLOCKED"), "{r}");
    f.finish(&id);
    assert!(docs.join("keep.txt").exists());
}

#[test]
fn a_command_split_across_writes_is_judged_whole() {
    let f = Unattended::new();
    let docs = f.docs();
    let id = f.shell();
    // Neither piece is dangerous alone: `r`, and `m -rf <dir>`.
    let second = format!("m -rf {}", docs.display());
    assert!(!crate::approval::detect(&second).dangerous());
    let first = f.stdin(&id, "write", "r");
    assert_eq!(first["status"], "ok", "{first}");
    let r = f.stdin(&id, "submit", &second);
    assert!(blocked(&r), "{r}");
    f.finish(&id);
    assert!(docs.join("keep.txt").exists());
}

#[test]
fn line_editing_cannot_hide_a_command() {
    let f = Unattended::new();
    let docs = f.docs();
    let id = f.shell();
    // As written, one `echo`; a terminal takes the carriage return as Enter and runs
    // `rm -rf` next.
    let typed = format!("echo hi\rrm -rf {}", docs.display());
    assert!(!crate::approval::detect(&typed).dangerous());
    let r = f.stdin(&id, "submit", &typed);
    assert!(blocked(&r), "{r}");
}

#[test]
fn a_benign_submit_runs() {
    let f = Unattended::new();
    let id = f.shell();
    let r = f.stdin(&id, "submit", "echo from-stdin");
    assert_eq!(r["status"], "ok", "{r}");
    let end = f.finish(&id);
    assert_eq!(end["output"], "from-stdin\n", "{end}");
}

#[test]
fn a_blocked_piece_does_not_join_the_next_line() {
    let f = Unattended::new();
    let docs = f.docs();
    let id = f.shell();
    assert!(blocked(&f.stdin(
        &id,
        "write",
        &format!("rm -rf {}", docs.display())
    )));
    // What was blocked was never sent, so a new line starts clean.
    let r = f.stdin(&id, "submit", "echo clean");
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(f.finish(&id)["output"], "clean\n");
    assert!(Path::new(&docs).join("keep.txt").exists());
}

#[test]
fn text_naming_the_home_is_blocked_with_nobody_to_ask() {
    let f = Unattended::new();
    let home = f.services.home.root().to_path_buf();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "# original\n").unwrap();
    let id = f.shell();
    let r = f.stdin(
        &id,
        "submit",
        &format!("cd {} && echo pwned > config.toml", home.display()),
    );
    assert!(blocked(&r), "{r}");
    f.finish(&id);
    assert_eq!(
        std::fs::read_to_string(home.join("config.toml")).unwrap(),
        "# original\n"
    );
}

#[test]
fn an_opaque_probe_sent_to_a_background_shell_is_held_by_the_floor() {
    let f = Unattended::new();
    let home = f.services.home.root().to_path_buf();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "# original\n").unwrap();
    // Written outside toolhost: the analyser sees only `bash <file>`.
    let probe = f.dir.path().join("probe.sh");
    let marker = format!("/etc/toolhost-probe-{}", std::process::id());
    std::fs::write(
        &probe,
        format!(
            "touch {marker} && echo WROTE-ETC\n\
             echo pwned > {config} && echo WROTE-CONFIG\n\
             kill -0 -1 && echo SIGNALLED-ALL\n\
             kill -0 1 && echo SIGNALLED-PID1\n\
             echo probe-done\n",
            config = home.join("config.toml").display()
        ),
    )
    .unwrap();
    let id = f.shell();
    let r = f.stdin(&id, "submit", &format!("bash {}", probe.display()));
    assert_eq!(r["status"], "ok", "{r}");
    let end = f.finish(&id);
    let _ = std::fs::remove_file(&marker);
    let output = end["output"].as_str().unwrap_or_default();
    assert!(output.contains("probe-done"), "{end}");
    // Signalling PID 1 alone is the kernel floor's to refuse (its seccomp filter
    // refuses pid -1 today); add "SIGNALLED-PID1" here once it refuses pid 1 too.
    for escaped in ["WROTE-ETC", "WROTE-CONFIG", "SIGNALLED-ALL"] {
        assert!(!output.contains(escaped), "{escaped}: {output}");
    }
}
