//! Test helper: a probe the approval analyser cannot read — a Python file written
//! outside toolhost — that tries, harmlessly, what the kernel floor must deny: a write
//! under a system directory (a fresh file under `/usr/local/lib`, removed again if it
//! was created), a rewrite of toolhost's `config.toml` (a throwaway home), signal 0 to
//! every process, to PID 1 and to toolhost itself (`signal 0` delivers nothing).
//! Used by this crate's tests and, through the `test-support` feature, by
//! tools-core's and the integration tests (one probe for every code path).

use std::path::{Path, PathBuf};

/// The probe's source; argv: `<config.toml to rewrite> <pid of toolhost>`, or, with no
/// arguments, the same two lines from `probe.args` beside it (so a shell line running it
/// names neither the home nor the config, and the analyser has nothing to judge). The
/// config is opened at its real path (a symlinked home must be protected there). Prints
/// one line per attempt: `<name> ok` or `<name> denied <errno>`.
pub const SOURCE: &str = r#"
import os, sys
ARGS = sys.argv[1:] or open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "probe.args")).read().split("\n")
def attempt(name, fn):
    try:
        fn()
        print(name, "ok")
    except OSError as e:
        print(name, "denied", e.errno)
def system_write():
    path = "/usr/local/lib/toolhost-floor-probe-%d" % os.getpid()
    with open(path, "w") as f:
        f.write("probe")
    os.remove(path)
def config_rewrite():
    with open(os.path.realpath(ARGS[0]), "w") as f:
        f.write('[approvals]\nmode = "off"\n')
attempt("system_write", system_write)
attempt("config_rewrite", config_rewrite)
attempt("kill_all", lambda: os.kill(-1, 0))
attempt("kill_init", lambda: os.kill(1, 0))
attempt("kill_toolhost", lambda: os.kill(int(ARGS[1]), 0))
sys.stdout.flush()
"#;

/// Every attempt the probe makes.
pub const ATTEMPTS: [&str; 5] = [
    "system_write",
    "config_rewrite",
    "kill_all",
    "kill_init",
    "kill_toolhost",
];

/// A probe laid out on disk: the script (outside toolhost) and a throwaway toolhost
/// home whose `config.toml` it tries to rewrite.
#[derive(Debug)]
pub struct Probe {
    /// Holds the script.
    pub dir: tempfile::TempDir,
    /// The throwaway toolhost home (`config.toml`, `plugins/`, `state/`).
    pub toolhost_home: tempfile::TempDir,
    /// The script's path.
    pub script: PathBuf,
}

/// The config text the probe must not change.
pub const CONFIG: &str = "[approvals]\nmode = \"manual\"\n";

impl Probe {
    /// Write the probe and the throwaway home.
    pub fn new() -> std::io::Result<Probe> {
        let dir = tempfile::tempdir()?;
        let toolhost_home = tempfile::tempdir()?;
        std::fs::write(toolhost_home.path().join("config.toml"), CONFIG)?;
        let script = dir.path().join("probe.py");
        std::fs::write(&script, SOURCE)?;
        let probe = Probe {
            dir,
            toolhost_home,
            script,
        };
        std::fs::write(probe.dir.path().join("probe.args"), probe.args().join("\n"))?;
        Ok(probe)
    }

    /// The config file the probe aims at.
    pub fn config(&self) -> PathBuf {
        self.toolhost_home.path().join("config.toml")
    }

    /// The arguments the probe takes after its path.
    pub fn args(&self) -> [String; 2] {
        [
            self.config().display().to_string(),
            std::process::id().to_string(),
        ]
    }

    /// A shell line running the probe (for terminal-like paths): it names only the
    /// script, which reads its arguments from `probe.args`.
    pub fn shell_line(&self) -> String {
        format!("python3 '{}'", self.script.display())
    }

    /// The attempts that succeeded in `output` (empty = all denied), plus any attempt
    /// that printed nothing, and whether the config changed.
    pub fn escapes(&self, output: &str) -> Vec<String> {
        let mut escapes: Vec<String> = ATTEMPTS
            .iter()
            .filter(|name| {
                !output
                    .lines()
                    .any(|l| l.starts_with(&format!("{name} denied")))
            })
            .map(|name| (*name).to_string())
            .collect();
        if std::fs::read_to_string(self.config()).ok().as_deref() != Some(CONFIG) {
            escapes.push("config changed".into());
        }
        escapes
    }

    /// Where the probe's toolhost home is.
    pub fn home(&self) -> &Path {
        self.toolhost_home.path()
    }
}

/// The Landlock ABI of this kernel (0 = none).
#[allow(unsafe_code)]
pub fn landlock_abi() -> i64 {
    // SAFETY: the version query passes no memory (null attr, size 0).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    abi.max(0)
}

/// The escapes that matter on this kernel: without Landlock only the seccomp part
/// (every process, PID 1) is enforced; without the signal scope (ABI < 6) signals to
/// other processes are not.
pub fn enforced(escapes: Vec<String>) -> Vec<String> {
    let abi = landlock_abi();
    escapes
        .into_iter()
        .filter(|e| match e.as_str() {
            "kill_all" | "kill_init" => true,
            "kill_toolhost" => abi >= 6,
            _ => abi >= 1,
        })
        .collect()
}

/// A directory outside `/tmp` (a writable root of every floor), as a real home is:
/// under the workspace's `target/`.
pub fn outside_tmp() -> std::io::Result<tempfile::TempDir> {
    tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"))
}
