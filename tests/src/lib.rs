//! Shared helpers for toolhost's integration tests: locating the built binaries and
//! plugin libraries (building them on first use), running the CLI in an isolated home,
//! and failing loudly when a test's outside service is missing.
// Test code: starts toolhost, fixtures and helper programs directly (exec_policy.rs).
#![allow(clippy::disallowed_methods)]

pub mod plugin_fixtures;

pub use toolhost_environments::ci_services;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

/// `target/<profile>/`, where cargo put the test binary's siblings.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Build the whole workspace once per test process, with the test binary's profile.
///
/// `cargo test` builds neither other packages' binaries (`toolhost`) nor `cdylib`
/// libraries (the bundled plugins and the fixture plugins of `tests/fixtures/`), and
/// `default-members` leaves the fixtures out of a plain `cargo build`; the tests need
/// both, current. Cargo holds no lock on the target directory while tests run, so the
/// nested `cargo build --workspace` is safe; it is quick when everything is up to date.
/// A test binary started without cargo (no `CARGO` variable) only checks that the
/// files exist.
pub fn ensure_workspace_built() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let Some(cargo) = std::env::var_os("CARGO") else {
            return;
        };
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("tests/ lives in the workspace root");
        let dir = target_dir();
        let mut cmd = Command::new(cargo);
        cmd.arg("build")
            .arg("--workspace")
            .arg("--manifest-path")
            .arg(workspace.join("Cargo.toml"));
        match dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => {}
            Some("release") => {
                cmd.arg("--release");
            }
            Some(profile) => {
                cmd.args(["--profile", profile]);
            }
        }
        eprintln!("building the workspace for the integration tests: {cmd:?}");
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "{cmd:?} failed: {status}");
    });
}

/// Path of the `toolhost` binary (built by [`ensure_workspace_built`]).
pub fn toolhost_bin() -> PathBuf {
    ensure_workspace_built();
    let path = target_dir().join(format!("toolhost{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace` (with the test's profile) first",
        path.display()
    );
    path
}

/// Fail the test, naming what is missing, unless `available`. Tests that call this are
/// `#[ignore = "needs …"]`: they run only when asked (`--include-ignored`, as `.ci/run`
/// does), and then a missing service is a failure, never a silent pass.
pub fn require_service(available: bool, what: &str) {
    assert!(
        available,
        "this test needs {what}, which is not available here (README \"Tests\" lists \
         the services and the setup script for each; run without --include-ignored to \
         leave such tests out)"
    );
}

/// The value of an optional service, or a failure naming what is missing (see
/// [`require_service`]).
pub fn require<T>(service: Option<T>, what: &str) -> T {
    require_service(service.is_some(), what);
    service.expect("checked above")
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

/// The real approval engine over `home` with the README's allowlist example
/// (`command_allowlist = ["fs.recursive_delete"]`) and nobody to ask: other flagged
/// commands are denied.
pub fn recursive_delete_allowlisted(
    home: &tools_core::Home,
) -> std::sync::Arc<tools_core::approval::ApprovalEngine> {
    use std::sync::Arc;
    use tools_core::approval::{ApprovalEngine, ApprovalSettings, Surfaces};
    ApprovalEngine::new(
        ApprovalSettings {
            command_allowlist: vec!["fs.recursive_delete".into()],
            ..ApprovalSettings::default()
        },
        Arc::new(tools_core::ConfigAllowlist::new(home.config_file())),
        Arc::new(tools_core::Hooks::new()),
        Surfaces::none(),
    )
}
