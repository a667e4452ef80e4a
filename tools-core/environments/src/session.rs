//! [`TaskEnvironment`]: one task's live environment — a backend plus the shell session
//! layered on it.
//!
//! Every command runs in a fresh shell that sources a snapshot of the login
//! environment, `cd`s to the recorded working directory, runs the command, dumps its
//! exported variables back into the snapshot and reports its final directory. So
//! exported variables and the cwd persist across calls; unexported variables and shell
//! options do not (as in Hermes). Where the backend can host one, that fresh shell is a
//! subshell forked from a persistent bash ([`super::persistent`]) — the same semantics
//! at the cost of a `fork`; otherwise (and when the persistent shell is busy with a
//! concurrent call) it is a new `sh -c` / `bash -c`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::capture::{CapturedOutput, OutputCapture, SpillTarget};
use super::exec::{self, Ending};
use super::persistent::{PersistentShell, ShellError};
use super::shell::{self, SessionScripts};
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, StdinMode};

/// How long taking the session snapshot may take.
const BOOTSTRAP_TIMEOUT: Duration = Duration::from_secs(60);
/// Failed persistent shells in a row after which an environment stops starting them.
const MAX_SHELL_FAILURES: u32 = 3;

/// One foreground command.
#[derive(Clone, Debug)]
pub struct ExecRequest {
    /// The command line.
    pub command: String,
    /// Working directory for this command only (`None` = the session's).
    pub workdir: Option<String>,
    /// Kill it after this long.
    pub timeout: Duration,
    /// Fired when the call is cancelled.
    pub cancel: Option<CancellationToken>,
    /// In-memory output limit (bytes).
    pub max_output: usize,
    /// Where the full output goes when it exceeds `max_output`.
    pub spill: Option<SpillTarget>,
    /// A human approved the command (see [`SpawnRequest::approved`]).
    pub approved: bool,
}

/// What a foreground command produced.
#[derive(Clone, Debug)]
pub struct ExecOutcome {
    /// Exit code (124 on timeout, 130 when interrupted).
    pub exit_code: i32,
    /// Captured output (with the timeout/interrupt note appended).
    pub output: CapturedOutput,
    /// True when the deadline killed it.
    pub timed_out: bool,
    /// True when cancellation killed it.
    pub interrupted: bool,
    /// The session's working directory afterwards.
    pub cwd: String,
    /// Wall time.
    pub duration: Duration,
}

/// A backend plus shell session state, shared by all calls of one task.
pub struct TaskEnvironment {
    backend: Arc<dyn Environment>,
    task_id: String,
    scripts: SessionScripts,
    cwd: Mutex<String>,
    snapshot_ready: AtomicBool,
    last_used: Mutex<Instant>,
    counter: AtomicU64,
    cleaned: AtomicBool,
    /// Use a persistent shell for foreground commands (until it fails too often).
    persistent: AtomicBool,
    shell_failures: AtomicU32,
    shells_started: AtomicU32,
    shell: Mutex<Option<PersistentShell>>,
}

impl std::fmt::Debug for TaskEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskEnvironment")
            .field("backend", &self.backend.describe())
            .field("task_id", &self.task_id)
            .field("cwd", &self.cwd())
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Backends whose processes are killed through their local process group (no pid file).
fn killed_locally(kind: BackendKind) -> bool {
    matches!(
        kind,
        BackendKind::Local | BackendKind::Sandbox | BackendKind::Singularity
    )
}

impl TaskEnvironment {
    /// Start a session on `backend`: take the login snapshot and settle the initial cwd
    /// (`initial_cwd` or the backend's default). `init_files` are sourced for the snapshot.
    pub fn start(
        backend: Arc<dyn Environment>,
        task_id: &str,
        initial_cwd: Option<String>,
        init_files: &[String],
    ) -> Result<Self, EnvError> {
        let session_id = super::random_hex(12);
        let scripts = SessionScripts::new(&session_id, &backend.temp_dir());
        let cwd = initial_cwd
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| backend.default_cwd());
        let env = TaskEnvironment {
            backend,
            task_id: task_id.to_string(),
            scripts,
            cwd: Mutex::new(cwd),
            snapshot_ready: AtomicBool::new(false),
            last_used: Mutex::new(Instant::now()),
            counter: AtomicU64::new(0),
            cleaned: AtomicBool::new(false),
            persistent: AtomicBool::new(true),
            shell_failures: AtomicU32::new(0),
            shells_started: AtomicU32::new(0),
            shell: Mutex::new(None),
        };
        env.bootstrap(init_files)?;
        Ok(env)
    }

    fn bootstrap(&self, init_files: &[String]) -> Result<(), EnvError> {
        let script = self.scripts.bootstrap(&self.cwd(), init_files);
        let mut child = self.backend.spawn(SpawnRequest {
            script,
            login: true,
            ..SpawnRequest::default()
        })?;
        let mut capture = OutputCapture::unbounded();
        let ending = exec::wait_for(child.as_mut(), &mut capture, BOOTSTRAP_TIMEOUT, None);
        let bytes = capture.into_bytes();
        match (ending, self.scripts.find_cwd_report(&bytes)) {
            (Ending::Exited(0), Some((_, _, end))) => {
                self.snapshot_ready.store(true, Ordering::SeqCst);
                if !end.is_empty() {
                    *lock(&self.cwd) = end;
                }
                Ok(())
            }
            (ending, _) => {
                // Like Hermes: commands still run, each in a login shell, without the
                // persistent snapshot.
                tracing::warn!(
                    backend = %self.backend.describe(),
                    ?ending,
                    output = %String::from_utf8_lossy(&bytes).chars().take(500).collect::<String>(),
                    "session snapshot failed; exported variables will not persist"
                );
                Ok(())
            }
        }
    }

    /// Run foreground commands in a persistent shell where the backend has one
    /// (`terminal.persistent_shell`, on by default), or always one shell per command.
    pub fn with_persistent_shell(self, enabled: bool) -> Self {
        self.persistent.store(enabled, Ordering::SeqCst);
        self
    }

    /// How many persistent shells this environment has started (a new one after each
    /// command that wrecked its shell).
    pub fn persistent_shells_started(&self) -> u32 {
        self.shells_started.load(Ordering::SeqCst)
    }

    /// The session id (in the names of the session's files inside the environment).
    pub fn session_id(&self) -> &str {
        &self.scripts.session_id
    }

    /// The persistent shell's process id on this host, while there is one.
    pub fn persistent_shell_pid(&self) -> Option<u32> {
        lock(&self.shell).as_ref().and_then(PersistentShell::pid)
    }

    /// The environment mark of the persistent shell, while there is one on another
    /// machine (docker, ssh): every process it started carries `TOOLHOST_SCOPE=<mark>`.
    pub fn persistent_shell_mark(&self) -> Option<String> {
        lock(&self.shell)
            .as_ref()
            .and_then(PersistentShell::mark)
            .map(str::to_string)
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn Environment> {
        &self.backend
    }

    /// The backend kind.
    pub fn kind(&self) -> BackendKind {
        self.backend.kind()
    }

    /// The task this environment serves.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The session's working directory.
    pub fn cwd(&self) -> String {
        lock(&self.cwd).clone()
    }

    /// Replace the session's working directory (per-task cwd override).
    pub fn set_cwd(&self, cwd: impl Into<String>) {
        *lock(&self.cwd) = cwd.into();
    }

    /// When a command last ran here.
    pub fn last_used(&self) -> Instant {
        *lock(&self.last_used)
    }

    /// Mark the environment as used now.
    pub fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    fn pid_file(&self) -> Option<String> {
        if killed_locally(self.kind()) {
            // Killed through the local process group.
            return None;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        Some(format!(
            "{}/toolhost-pid-{}-{n}",
            self.backend.temp_dir().trim_end_matches('/'),
            self.scripts.session_id
        ))
    }

    /// The directory a command will start in: `workdir` or the session's, recovering
    /// from a deleted local directory by walking up to an existing parent.
    fn effective_cwd(&self, workdir: Option<&str>) -> String {
        let cwd = workdir.map(str::to_string).unwrap_or_else(|| self.cwd());
        // Only the local backend sees this host's file system as it is (the sandbox has
        // a private /tmp).
        if workdir.is_none() && self.kind() == BackendKind::Local && !cwd.starts_with('~') {
            let path = Path::new(&cwd);
            if !path.is_dir() {
                let fallback = path
                    .ancestors()
                    .find(|p| p.is_dir())
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "/".into());
                tracing::warn!(missing = %cwd, %fallback, "session directory vanished; using its nearest parent");
                self.set_cwd(fallback.clone());
                return fallback;
            }
        }
        cwd
    }

    /// Run a foreground command: in the persistent shell when there is one (or one can
    /// be started) and it is free, else in a shell of its own.
    pub fn execute(&self, request: &ExecRequest) -> Result<ExecOutcome, EnvError> {
        self.touch();
        let started = Instant::now();
        let cwd = self.effective_cwd(request.workdir.as_deref());
        let mut capture = OutputCapture::new(request.max_output, request.spill.clone());
        let ending = match self.execute_persistent(request, &cwd, &mut capture) {
            Some(ending) => ending,
            None => self.execute_one_shot(request, &cwd, &mut capture)?,
        };
        Ok(self.finish(request, capture, ending, started))
    }

    /// Run `request` in the persistent shell; `None` when it cannot (disabled, busy
    /// with another call, not supported, approved by a human, or the command never
    /// started there).
    fn execute_persistent(
        &self,
        request: &ExecRequest,
        cwd: &str,
        capture: &mut OutputCapture,
    ) -> Option<Ending> {
        // A command a human approved runs in a shell of its own: the persistent shell
        // carries the floor of unapproved commands (`terminal.local.confine = "verdict"`).
        if request.approved
            || !self.persistent.load(Ordering::SeqCst)
            || !self.snapshot_ready.load(Ordering::SeqCst)
        {
            return None;
        }
        let mut slot = match self.shell.try_lock() {
            Ok(slot) => slot,
            Err(std::sync::TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        if slot.is_none() {
            match PersistentShell::start(self.backend.as_ref()) {
                Ok(shell) => {
                    self.shells_started.fetch_add(1, Ordering::SeqCst);
                    self.shell_failures.store(0, Ordering::SeqCst);
                    *slot = Some(shell);
                }
                Err(err) => {
                    self.shell_failed(&err);
                    return None;
                }
            }
        }
        let shell = slot.as_mut()?;
        let run = shell.run(
            &self.scripts,
            &request.command,
            cwd,
            request.timeout,
            request.cancel.as_ref(),
            capture,
        );
        match run {
            Ok(run) => {
                if !run.reusable {
                    tracing::debug!(task = %self.task_id, "persistent shell discarded after a command");
                    *slot = None;
                }
                Some(run.ending)
            }
            Err(err) => {
                *slot = None;
                self.shell_failed(&err);
                None
            }
        }
    }

    /// A persistent shell could not be started or used; after a few failures in a row
    /// this environment stops trying.
    fn shell_failed(&self, err: &ShellError) {
        if matches!(err, ShellError::Unsendable) {
            return;
        }
        let failures = self.shell_failures.fetch_add(1, Ordering::SeqCst) + 1;
        if matches!(err, ShellError::Unsupported) || failures >= MAX_SHELL_FAILURES {
            self.persistent.store(false, Ordering::SeqCst);
        }
        if !matches!(err, ShellError::Unsupported) {
            tracing::warn!(task = %self.task_id, %err, failures, "persistent shell unavailable; running commands one shell each");
        }
    }

    /// Run `request` in a shell of its own.
    fn execute_one_shot(
        &self,
        request: &ExecRequest,
        cwd: &str,
        capture: &mut OutputCapture,
    ) -> Result<Ending, EnvError> {
        let pid_file = self.pid_file();
        let snapshot_ready = self.snapshot_ready.load(Ordering::SeqCst);
        let script =
            self.scripts
                .foreground(&request.command, cwd, snapshot_ready, pid_file.as_deref());
        let mut child = self.backend.spawn(SpawnRequest {
            script,
            login: !snapshot_ready,
            stdin: StdinMode::Null,
            pty: false,
            pid_file,
            approved: request.approved,
        })?;
        let ending = exec::wait_for(
            child.as_mut(),
            capture,
            request.timeout,
            request.cancel.as_ref(),
        );
        drop(child);
        Ok(ending)
    }

    /// Read the cwd report, note the timeout or interruption, and build the outcome.
    fn finish(
        &self,
        request: &ExecRequest,
        mut capture: OutputCapture,
        ending: Ending,
        started: Instant,
    ) -> ExecOutcome {
        // The cwd report is the last thing printed; it is always in the retained tail.
        let tail = capture.end_bytes(16 * 1024);
        if let Some((cut, start, end)) = self.scripts.find_cwd_report(&tail) {
            capture.cut_end(tail.len() - cut);
            let moved = start != end;
            if !end.is_empty() && (request.workdir.is_none() || moved) {
                self.set_cwd(end);
            }
        }
        let (exit_code, suffix, timed_out, interrupted) = match ending {
            Ending::Exited(code) => (code, String::new(), false, false),
            Ending::TimedOut => (
                124,
                format!(
                    "\n[Command timed out after {}s; its process group was killed]",
                    request.timeout.as_secs()
                ),
                true,
                false,
            ),
            Ending::Interrupted => (130, "\n[Command interrupted]".to_string(), false, true),
        };
        let output = capture.finish(&suffix);
        self.touch();
        ExecOutcome {
            exit_code,
            output,
            timed_out,
            interrupted,
            cwd: self.cwd(),
            duration: started.elapsed(),
        }
    }

    /// Start a background command in `workdir` (or the session cwd). Returns the running
    /// command and the directory it started in.
    pub fn spawn_background(
        &self,
        command: &str,
        workdir: Option<&str>,
        pty: bool,
        approved: bool,
    ) -> Result<(Box<dyn RunningCommand>, String), EnvError> {
        self.touch();
        let cwd = self.effective_cwd(workdir);
        let pid_file = self.pid_file();
        let snapshot_ready = self.snapshot_ready.load(Ordering::SeqCst);
        let script = self
            .scripts
            .background(command, &cwd, snapshot_ready, pid_file.as_deref());
        let stdin = if self.backend.supports_stdin() {
            StdinMode::Piped
        } else {
            StdinMode::Null
        };
        let child = self.backend.spawn(SpawnRequest {
            script,
            login: !snapshot_ready,
            stdin,
            pty: pty && self.backend.supports_pty(),
            pid_file,
            approved,
        })?;
        Ok((child, cwd))
    }

    /// Resolve `path` against the session cwd (relative paths; `~` left to the shell).
    pub fn resolve_path(&self, path: &str) -> String {
        if path.starts_with('/') || path.starts_with('~') {
            path.to_string()
        } else {
            let cwd = self.cwd();
            format!("{}/{}", cwd.trim_end_matches('/'), path)
        }
    }

    /// Read a file inside the environment (relative to the session cwd).
    pub fn read_file(&self, path: &str, timeout: Duration) -> Result<Vec<u8>, EnvError> {
        self.touch();
        self.backend.read_file(&self.resolve_path(path), timeout)
    }

    /// Write a file inside the environment (relative to the session cwd).
    pub fn write_file(&self, path: &str, data: &[u8], timeout: Duration) -> Result<(), EnvError> {
        self.touch();
        self.backend
            .write_file(&self.resolve_path(path), data, timeout)
    }

    /// Remove session files and release the backend (idempotent).
    pub fn cleanup(&self) -> Result<(), EnvError> {
        if self.cleaned.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        // The persistent shell and everything it runs end first; one busy with a
        // command ends when the environment is dropped, and no new one starts.
        self.persistent.store(false, Ordering::SeqCst);
        if let Ok(mut slot) = self.shell.try_lock() {
            slot.take();
        }
        let snap = shell::quote(&self.scripts.snapshot);
        let _ = exec::run_collect(
            self.backend.as_ref(),
            &format!("rm -f {snap} {snap}.tmp.* {snap}.next 2>/dev/null; true"),
            StdinMode::Null,
            Duration::from_secs(10),
        );
        self.backend.cleanup()
    }
}
