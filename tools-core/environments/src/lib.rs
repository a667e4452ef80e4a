//! Execution environments: where terminal commands, background processes and (through
//! the file tools) file reads and writes run.
//!
//! One trait, [`Environment`], one file per backend:
//! [`local`] (host bash, own process group), [`sandbox`] (the host inside bubblewrap),
//! [`docker`] (Docker Engine API — Docker or podman's compatible service), [`ssh`]
//! (OpenSSH client with a ControlMaster connection), [`singularity`] (Apptainer CLI),
//! [`modal`] and [`daytona`] (their Python SDKs, driven through a helper process).
//!
//! A backend only knows how to *start a shell script* and hand back a
//! [`RunningCommand`] (output stream, stdin, exit status, kill of the whole process
//! group — locally or inside the remote), and, where it can, a long-lived shell
//! ([`shell_connection`]; [`remote_shell`] for docker and ssh) that [`persistent`] runs
//! foreground commands in. Everything shell-level — the session snapshot
//! that makes exported variables persist, the working-directory marker, timeouts,
//! bounded capture with spill-to-file — is shared and lives in [`session`]
//! ([`TaskEnvironment`]). The [`manager`] caches one [`TaskEnvironment`] per task id,
//! reaps idle ones and cleans everything up on shutdown; [`processes`] tracks
//! background processes.
// Tests start helper programs (bash, python3, pgrep) directly; the non-test build of
// this crate is where `clippy.toml`'s spawn rule applies (exec_policy.rs).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

use std::io::{Read, Write};
use std::time::Duration;

use serde::Deserialize;

pub mod capture;
// Test helper: where the CI services are (this crate's tests; other crates' through the
// `test-support` feature).
#[cfg(any(test, feature = "test-support"))]
pub mod ci_services;
#[cfg(target_os = "linux")]
pub mod confine;
#[cfg(test)]
#[cfg(target_os = "linux")]
mod confine_verdict_tests;
pub mod containment;
pub mod daytona;
pub mod docker;
mod docker_api;
mod docker_attach;
mod docker_init;
mod docker_shell;
pub mod env_filter;
mod exec;
#[cfg(target_os = "linux")]
pub mod exec_policy;
#[cfg(all(target_os = "linux", any(test, feature = "test-support")))]
pub mod floor_probe;
pub mod fs_ops;
pub mod local;
mod local_child;
pub mod manager;
pub mod modal;
pub mod persistent;
pub mod persistent_script;
#[cfg(test)]
mod persistent_tests;
pub mod processes;
#[cfg(test)]
mod remote_persistent_tests;
pub mod remote_script;
pub mod remote_shell;
#[cfg(test)]
mod remote_shell_tests;
pub mod sandbox;
mod sdk_helper;
pub mod session;
pub mod settings;
pub mod shell;
pub mod shell_connection;
pub mod singularity;
mod spawn_thread;
pub mod ssh;
mod ssh_shell;
#[cfg(target_os = "linux")]
mod subreaper;

pub use capture::{CapturedOutput, OutputCapture};
/// Processes one command may start beyond those the user already has (the floor's
/// `RLIMIT_NPROC`, and `pids.max` of a command's cgroup).
pub const PROCESS_CAP: u64 = 1024;
pub use local_child::group_has_live_members;
pub use manager::{EnvironmentManager, TaskOverride};
pub use processes::{BackgroundProcess, ProcessRegistry, ProcessStatus};
pub use session::{ExecOutcome, ExecRequest, TaskEnvironment};
pub use settings::TerminalSettings;

/// The backends toolhost can run commands in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The host, through bash in its own process group.
    #[default]
    Local,
    /// The host inside bubblewrap: read-only system, writable workdir, no network.
    Sandbox,
    /// A long-lived container per task (Docker Engine API).
    Docker,
    /// A remote host over ssh.
    Ssh,
    /// An Apptainer/Singularity instance.
    Singularity,
    /// A Modal sandbox.
    Modal,
    /// A Daytona sandbox.
    Daytona,
}

impl BackendKind {
    /// Every backend, in documentation order.
    pub const ALL: [BackendKind; 7] = [
        BackendKind::Local,
        BackendKind::Sandbox,
        BackendKind::Docker,
        BackendKind::Ssh,
        BackendKind::Singularity,
        BackendKind::Modal,
        BackendKind::Daytona,
    ];

    /// The config name (`local`, `docker`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Local => "local",
            BackendKind::Sandbox => "sandbox",
            BackendKind::Docker => "docker",
            BackendKind::Ssh => "ssh",
            BackendKind::Singularity => "singularity",
            BackendKind::Modal => "modal",
            BackendKind::Daytona => "daytona",
        }
    }

    /// Parse a config name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an environment operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// The backend cannot be used here (binary, credentials or service missing).
    #[error("{backend} backend unavailable: {reason}")]
    Unavailable {
        /// The backend.
        backend: BackendKind,
        /// What is missing.
        reason: String,
    },
    /// Creating the environment (container, connection, sandbox) failed.
    #[error("{backend} environment could not be created: {reason}")]
    Create {
        /// The backend.
        backend: BackendKind,
        /// Why.
        reason: String,
    },
    /// Starting a process failed.
    #[error("{backend}: could not start {what}: {source}")]
    Spawn {
        /// The backend.
        backend: BackendKind,
        /// What was started.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A backend API call failed.
    #[error("{backend}: {operation} failed: {reason}")]
    Api {
        /// The backend.
        backend: BackendKind,
        /// The call.
        operation: String,
        /// Why.
        reason: String,
    },
    /// A file operation inside the environment failed.
    #[error("{backend}: {operation} {path}: {reason}")]
    File {
        /// The backend.
        backend: BackendKind,
        /// `read` or `write`.
        operation: &'static str,
        /// The path inside the environment.
        path: String,
        /// Why (usually the shell's message).
        reason: String,
    },
    /// The operation did not finish in time.
    #[error("{backend}: {operation} timed out after {seconds}s")]
    Timeout {
        /// The backend.
        backend: BackendKind,
        /// What timed out.
        operation: String,
        /// The limit.
        seconds: u64,
    },
    /// The operation was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// Local I/O failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl EnvError {
    /// Shorthand for [`EnvError::Io`].
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        EnvError::Io {
            context: context.into(),
            source,
        }
    }

    /// `Ok` when the backend's `operation` (a finished CLI or SDK-helper process)
    /// exited successfully; otherwise [`EnvError::Api`] with its stderr.
    pub fn check_exit(
        backend: BackendKind,
        operation: impl Into<String>,
        out: &std::process::Output,
    ) -> Result<(), Self> {
        if out.status.success() {
            return Ok(());
        }
        Err(EnvError::Api {
            backend,
            operation: operation.into(),
            reason: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// What a started command reads on stdin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StdinMode {
    /// Nothing (EOF at once).
    #[default]
    Null,
    /// A pipe the caller writes to ([`RunningCommand::take_stdin`]).
    Piped,
    /// These bytes, then EOF (written by the backend).
    Data(Vec<u8>),
}

/// One shell script to start.
#[derive(Clone, Debug, Default)]
pub struct SpawnRequest {
    /// The script, run by the backend's shell with `-c`.
    pub script: String,
    /// Run a login shell (`-l`), used once to take the session snapshot.
    pub login: bool,
    /// Stdin.
    pub stdin: StdinMode,
    /// Attach a pseudo-terminal (only when [`Environment::supports_pty`]).
    pub pty: bool,
    /// Where the script writes its process-group id (`echo $$ > FILE`) so a remote
    /// command can be killed from outside; `None` for backends that kill locally.
    pub pid_file: Option<String>,
    /// A human approved this command: the local backend's kernel floor keeps only its
    /// device, sysrq and system-call part (`terminal.local.confine = "verdict"`).
    pub approved: bool,
}

/// A started command: its merged stdout+stderr, its stdin, its status, and a way to kill
/// its whole process group (on the host or inside the remote environment).
pub trait RunningCommand: Send {
    /// The merged output stream; `None` after the first call.
    fn take_output(&mut self) -> Option<Box<dyn Read + Send>>;
    /// The stdin pipe (only with [`StdinMode::Piped`]); `None` after the first call.
    fn take_stdin(&mut self) -> Option<Box<dyn Write + Send>>;
    /// The exit code if the command has finished (128 + signal when killed by one).
    fn try_wait(&mut self) -> std::io::Result<Option<i32>>;
    /// Block until the command finishes.
    fn wait(&mut self) -> std::io::Result<i32>;
    /// Terminate the whole process group (SIGTERM, a short grace, SIGKILL) and reap it.
    fn kill(&mut self);
    /// The process id where it means something (local and sandbox backends).
    fn pid(&self) -> Option<u32>;
}

/// A place commands run. Implementations are cheap to share (`Arc`) and thread-safe;
/// shell semantics (snapshot, cwd, timeouts) are layered on top by [`TaskEnvironment`].
pub trait Environment: Send + Sync {
    /// Which backend this is.
    fn kind(&self) -> BackendKind;

    /// True when commands can touch the host (the full approval gate applies); false for
    /// isolated backends, where only the hardline floor does. Defaults to true: a
    /// backend that does not say it is isolated gets the full gate.
    fn host_access(&self) -> bool {
        true
    }

    /// Working directory new sessions start in.
    fn default_cwd(&self) -> String;

    /// Temp directory inside the environment (snapshots, pid files).
    fn temp_dir(&self) -> String {
        "/tmp".into()
    }

    /// The shell scripts run with (`bash`, or `sh` where bash is missing); `sh` unless
    /// the backend found bash.
    fn shell(&self) -> &str {
        "sh"
    }

    /// Whether [`SpawnRequest::pty`] is honoured.
    fn supports_pty(&self) -> bool {
        false
    }

    /// Whether [`StdinMode::Piped`] is honoured (interactive stdin for background
    /// processes).
    fn supports_stdin(&self) -> bool {
        false
    }

    /// Start a script.
    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError>;

    /// Start a long-lived bash running [`persistent_script::DRIVER`] for
    /// [`persistent::PersistentShell`]; `None` when this backend runs one shell per
    /// command.
    fn open_shell(&self) -> Option<Result<Box<dyn shell_connection::ShellConnection>, EnvError>> {
        None
    }

    /// A one-line description for logs and `process list` (`docker container 1a2b3c`).
    fn describe(&self) -> String {
        self.kind().name().to_string()
    }

    /// Read a whole file inside the environment.
    fn read_file(&self, path: &str, timeout: Duration) -> Result<Vec<u8>, EnvError> {
        let script = format!("cat -- {}", shell::quote_cd_target(path));
        let (code, bytes) = exec::run_collect(self, &script, StdinMode::Null, timeout)?;
        if code == 0 {
            Ok(bytes)
        } else {
            Err(EnvError::File {
                backend: self.kind(),
                operation: "read",
                path: path.to_string(),
                reason: shell_message(&bytes, code),
            })
        }
    }

    /// Write (create or replace) a file inside the environment, creating parent
    /// directories.
    fn write_file(&self, path: &str, data: &[u8], timeout: Duration) -> Result<(), EnvError> {
        let script = shell::write_file_script(path);
        let (code, bytes) =
            exec::run_collect(self, &script, StdinMode::Data(data.to_vec()), timeout)?;
        if code == 0 {
            Ok(())
        } else {
            Err(EnvError::File {
                backend: self.kind(),
                operation: "write",
                path: path.to_string(),
                reason: shell_message(&bytes, code),
            })
        }
    }

    /// Release the backend's resources (container, connection, instance). Called once;
    /// nothing to do by default (what the backend owns goes when it is dropped).
    fn cleanup(&self) -> Result<(), EnvError> {
        Ok(())
    }
}

/// The shell's error text, or the exit code when it printed nothing.
pub(crate) fn shell_message(output: &[u8], code: i32) -> String {
    let text = String::from_utf8_lossy(output);
    let text = text.trim();
    if text.is_empty() {
        format!("exit code {code}")
    } else {
        text.chars().take(500).collect()
    }
}

/// 12 random hex digits (session ids, process ids, container names).
pub fn random_hex(len: usize) -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut out = String::new();
    while out.len() < len {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default(),
        );
        hasher.write_u32(std::process::id());
        out.push_str(&format!("{:016x}", hasher.finish()));
    }
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_round_trip() {
        for kind in BackendKind::ALL {
            assert_eq!(BackendKind::parse(kind.name()), Some(kind));
        }
        assert_eq!(BackendKind::parse("vmware"), None);
    }

    #[test]
    fn random_hex_is_hex_and_unique() {
        let a = random_hex(12);
        let b = random_hex(12);
        assert_eq!(a.len(), 12);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
