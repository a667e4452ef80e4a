//! Helpers for the native-plugin tests: fixture libraries (built on first use by
//! [`crate::ensure_workspace_built`]), plugin directories, and `toolhost` runs isolated from the
//! plugins of the machine (no bundled plugins unless asked, no plugin-path variables).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{TestHome, spawn_with_stdin, target_dir};

/// `target/<profile>/lib<name>.so` (the platform's file name), which must exist.
pub fn fixture_library(name: &str) -> PathBuf {
    crate::ensure_workspace_built();
    let file = format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    let path = target_dir().join(file);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace` (with the test's profile) first",
        path.display()
    );
    path
}

/// Write `dir/plugin.toml` for plugin `name` whose library file is `library`.
pub fn write_manifest(dir: &Path, name: &str, library: &str, api: &str, extra: &str) {
    std::fs::create_dir_all(dir).expect("create plugin dir");
    std::fs::write(
        dir.join("plugin.toml"),
        format!(
            "name = \"{name}\"\nversion = \"0.1.0\"\nlibrary = \"{library}\"\napi = \"{api}\"\n{extra}"
        ),
    )
    .expect("write plugin.toml");
}

/// Make `root/<name>/` a plugin directory holding a copy of fixture `lib` (e.g.
/// `fixture_good`) and a `plugin.toml` naming it `name`. Returns the directory.
pub fn add_plugin(root: &Path, name: &str, lib: &str, extra_manifest: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("create plugin dir");
    let source = fixture_library(lib);
    let file = source.file_name().expect("file name").to_owned();
    std::fs::copy(&source, dir.join(&file)).expect("copy fixture library");
    write_manifest(&dir, name, &file.to_string_lossy(), "^0.1", extra_manifest);
    dir
}

/// A `toolhost` command for `home` that sees only the plugins a test sets up:
/// no bundled plugins, no `TOOLHOST_PLUGIN_PATH`, no project opt-in.
pub fn isolated(home: &TestHome) -> Command {
    let mut cmd = home.command();
    cmd.env("TOOLHOST_BUNDLED_PLUGINS", "")
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .env_remove("TOOLHOST_ENABLE_PROJECT_PLUGINS")
        .env_remove("TOOLHOST_PLUGIN_API_PATH");
    cmd
}

/// Run `cmd` with `args`, optional stdin, and a hang guard: a run that takes longer than
/// `limit` is killed and the test fails (a guard against hangs, not a speed check).
pub fn run_with_limit(cmd: Command, args: &[&str], stdin: Option<&str>, limit: Duration) -> Output {
    let mut child = spawn_with_stdin(cmd, args, stdin);
    // Drain both pipes on threads so a chatty child never blocks.
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out_pipe.read_to_end(&mut buf);
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err_pipe.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait toolhost") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolhost {args:?} did not finish within {limit:?} (hung)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("stdout thread"),
        stderr: err.join().expect("stderr thread"),
    }
}

/// Run `cmd` with `args` (hang guard: 120 s).
pub fn run(cmd: Command, args: &[&str]) -> Output {
    run_with_limit(cmd, args, None, Duration::from_secs(120))
}

/// `toolhost plugins list --json` as records.
pub fn list_json(cmd: Command) -> Vec<Value> {
    let output = run(cmd, &["plugins", "list", "--json"]);
    assert!(
        output.status.success(),
        "plugins list failed: {}",
        crate::stderr(&output)
    );
    match crate::stdout_json(&output) {
        Value::Array(records) => records,
        other => panic!("plugins list --json is not an array: {other}"),
    }
}

/// The record named `name` from `source` (any source when `None`).
pub fn record<'a>(records: &'a [Value], name: &str, source: Option<&str>) -> &'a Value {
    records
        .iter()
        .find(|r| r["name"] == name && source.is_none_or(|s| r["source"] == s))
        .unwrap_or_else(|| panic!("no record for {name} ({source:?}) in {records:#?}"))
}
