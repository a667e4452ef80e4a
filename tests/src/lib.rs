//! Shared helpers for toolhost's integration tests: locating the built binaries and
//! plugin libraries, running the CLI in an isolated home, and CI service checks.
//!
//! `cargo test` does not build cdylibs or other packages' binaries, so the test command
//! is `cargo build --workspace && cargo test --workspace` (see README / .ci/run).

pub mod ci_services;
pub mod plugin_fixtures;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// `target/<profile>/`, where cargo put the test binary's siblings.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Path of the `toolhost` binary built by `cargo build --workspace`.
pub fn toolhost_bin() -> PathBuf {
    let path = target_dir().join(format!("toolhost{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace` before `cargo test --workspace`",
        path.display()
    );
    path
}

/// True when running under CI (`TOOLHOST_CI=1`): tests needing services must fail, not skip.
pub fn in_ci() -> bool {
    std::env::var("TOOLHOST_CI").is_ok_and(|v| v == "1")
}

/// Skip (return true after printing why) when a required service is missing locally;
/// panic under CI.
pub fn skip_unless(available: bool, what: &str) -> bool {
    if available {
        return false;
    }
    assert!(
        !in_ci(),
        "{what} is required under TOOLHOST_CI=1 but is not available"
    );
    eprintln!("skipping: {what} is not available (set up with .ci/run to run this test)");
    true
}

/// An isolated toolhost home for one test.
pub struct TestHome {
    dir: tempfile::TempDir,
}

impl TestHome {
    /// A fresh, empty home.
    pub fn new() -> Self {
        TestHome {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// The home directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `<home>/config.toml`.
    pub fn write_config(&self, text: &str) {
        std::fs::write(self.path().join("config.toml"), text).expect("write config");
    }

    /// A `toolhost` command with `--home` set and a clean environment for toolhost vars.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(toolhost_bin());
        cmd.arg("--home").arg(self.path());
        cmd.env_remove("TOOLHOST_HOME");
        cmd.env_remove("RUST_LOG");
        cmd
    }

    /// Run `toolhost ARGS` with `stdin` and wait.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        spawn_with_stdin(self.command(), args, stdin)
            .wait_with_output()
            .expect("wait toolhost")
    }
}

/// Start `cmd ARGS` with piped stdout and stderr; `stdin` (if any) is written and
/// closed, otherwise stdin is empty.
pub fn spawn_with_stdin(mut cmd: Command, args: &[&str], stdin: Option<&str>) -> Child {
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn toolhost");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    child
}

impl Default for TestHome {
    fn default() -> Self {
        Self::new()
    }
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// stdout parsed as JSON (panics with both streams shown when it is not).
pub fn stdout_json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}).\nstdout: {}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    })
}
