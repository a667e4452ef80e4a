//! Background processes started with `terminal(background=true)`: a registry of
//! `proc_<12 hex>` ids, each with a reader thread filling a bounded rolling buffer, the
//! process's stdin (where the backend has one), and its fate (running, exited, killed).
//!
//! Nothing leaks: an exited process is reaped by its reader thread, `kill` terminates the
//! whole group and reaps it, and [`ProcessRegistry::kill_all`] kills everything still
//! running.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use super::session::TaskEnvironment;
use super::{BackendKind, EnvError, RunningCommand};

/// A background process's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessStatus {
    /// Still running.
    Running,
    /// Exited on its own.
    Exited,
    /// Killed through `process kill` or shutdown.
    Killed,
}

impl ProcessStatus {
    /// `running`, `exited`, `killed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessStatus::Running => "running",
            ProcessStatus::Exited => "exited",
            ProcessStatus::Killed => "killed",
        }
    }
}

#[derive(Debug)]
struct State {
    buffer: VecDeque<u8>,
    total_bytes: u64,
    dropped_lines: u64,
    status: ProcessStatus,
    exit_code: Option<i32>,
    termination_source: Option<&'static str>,
    finished_at: Option<Instant>,
}

/// One background process.
pub struct BackgroundProcess {
    /// `proc_<12 hex>`.
    pub id: String,
    /// The command line.
    pub command: String,
    /// The directory it started in.
    pub cwd: String,
    /// The task that started it.
    pub task_id: String,
    /// The backend it runs on.
    pub backend: BackendKind,
    /// Wall-clock start.
    pub started_at: SystemTime,
    /// Process id where meaningful (local, sandbox).
    pub pid: Option<u32>,
    /// Attached to a pseudo-terminal.
    pub pty: bool,
    started: Instant,
    capacity: usize,
    state: Mutex<State>,
    changed: Condvar,
    handle: Mutex<Box<dyn RunningCommand>>,
    stdin: Mutex<Option<Box<dyn Write + Send>>>,
}

impl std::fmt::Debug for BackgroundProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackgroundProcess")
            .field("id", &self.id)
            .field("command", &self.command)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How `wait` ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitEnd {
    /// The process is no longer running.
    Finished,
    /// The timeout passed first.
    TimedOut,
    /// The call was cancelled.
    Interrupted,
}

/// A page of output lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogPage {
    /// The lines, joined with `\n`.
    pub text: String,
    /// Number of the first line returned (0-based, counted from the process start).
    pub first_line: u64,
    /// Lines returned.
    pub count: usize,
    /// Lines the process printed so far (a trailing partial line counts).
    pub total_lines: u64,
    /// First line still held (older ones fell out of the rolling buffer).
    pub first_available: u64,
}

impl BackgroundProcess {
    /// Current status.
    pub fn status(&self) -> ProcessStatus {
        lock(&self.state).status
    }

    /// Exit code once finished (`-15` after a kill, as Hermes reports it).
    pub fn exit_code(&self) -> Option<i32> {
        lock(&self.state).exit_code
    }

    /// Who ended it (`process.kill`, `shutdown`), if not itself.
    pub fn termination_source(&self) -> Option<&'static str> {
        lock(&self.state).termination_source
    }

    /// Seconds since start.
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Bytes printed so far.
    pub fn total_bytes(&self) -> u64 {
        lock(&self.state).total_bytes
    }

    /// When it finished.
    pub fn finished_at(&self) -> Option<Instant> {
        lock(&self.state).finished_at
    }

    /// The last `max_chars` characters of retained output.
    pub fn output_tail(&self, max_chars: usize) -> String {
        let state = lock(&self.state);
        let bytes: Vec<u8> = state.buffer.iter().copied().collect();
        drop(state);
        let text = String::from_utf8_lossy(&bytes);
        let count = text.chars().count();
        text.chars().skip(count.saturating_sub(max_chars)).collect()
    }

    /// Lines `[offset, offset + limit)`, or the last `limit` lines without an offset.
    pub fn log(&self, offset: Option<u64>, limit: usize) -> LogPage {
        let state = lock(&self.state);
        let bytes: Vec<u8> = state.buffer.iter().copied().collect();
        let first_available = state.dropped_lines;
        drop(state);
        let text = String::from_utf8_lossy(&bytes);
        let mut lines: Vec<&str> = text.split('\n').collect();
        if lines.last() == Some(&"") {
            lines.pop();
        }
        let total_lines = first_available + lines.len() as u64;
        let start = match offset {
            Some(off) => off.max(first_available),
            None => total_lines
                .saturating_sub(limit as u64)
                .max(first_available),
        };
        let skip = (start - first_available) as usize;
        let page: Vec<&str> = lines.iter().skip(skip).take(limit).copied().collect();
        LogPage {
            text: page.join("\n"),
            first_line: start,
            count: page.len(),
            total_lines,
            first_available,
        }
    }

    /// Block until it finishes, `timeout` passes or `cancel` fires.
    pub fn wait(&self, timeout: Duration, cancel: Option<&CancellationToken>) -> WaitEnd {
        let deadline = Instant::now() + timeout;
        let mut state = lock(&self.state);
        loop {
            if state.status != ProcessStatus::Running {
                return WaitEnd::Finished;
            }
            if cancel.is_some_and(CancellationToken::is_cancelled) {
                return WaitEnd::Interrupted;
            }
            let now = Instant::now();
            if now >= deadline {
                return WaitEnd::TimedOut;
            }
            let slice = (deadline - now).min(Duration::from_millis(100));
            state = self
                .changed
                .wait_timeout(state, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Write to stdin. Errors when the process has no stdin (non-local backend) or it
    /// was closed.
    pub fn write_stdin(&self, data: &[u8]) -> Result<usize, String> {
        let mut stdin = lock(&self.stdin);
        let Some(pipe) = stdin.as_mut() else {
            return Err(
                "Process stdin not available (backend without stdin, or stdin closed)".into(),
            );
        };
        pipe.write_all(data)
            .and_then(|()| pipe.flush())
            .map(|()| data.len())
            .map_err(|e| format!("write to stdin failed: {e}"))
    }

    /// Close stdin (EOF). A PTY gets Ctrl-D instead, which the line discipline turns
    /// into EOF for the reader.
    pub fn close_stdin(&self) -> Result<&'static str, String> {
        let mut stdin = lock(&self.stdin);
        if self.pty {
            let Some(pipe) = stdin.as_mut() else {
                return Err("Process stdin not available".into());
            };
            pipe.write_all(&[4]).map_err(|e| e.to_string())?;
            return Ok("EOF sent");
        }
        match stdin.take() {
            Some(pipe) => {
                drop(pipe);
                Ok("stdin closed")
            }
            None => {
                Err("Process stdin not available (backend without stdin, or stdin closed)".into())
            }
        }
    }

    /// Kill the whole group. Returns false when it had already finished.
    pub fn kill(&self, source: &'static str) -> bool {
        {
            // Claim the ending first so the reader thread does not record the signal's
            // exit status as an ordinary exit.
            let mut state = lock(&self.state);
            if state.status != ProcessStatus::Running {
                return false;
            }
            state.status = ProcessStatus::Killed;
            state.exit_code = Some(-15);
            state.termination_source = Some(source);
            state.finished_at = Some(Instant::now());
        }
        lock(&self.stdin).take();
        lock(&self.handle).kill();
        self.changed.notify_all();
        true
    }

    fn append(&self, chunk: &[u8]) {
        let mut state = lock(&self.state);
        state.total_bytes += chunk.len() as u64;
        state.buffer.extend(chunk.iter().copied());
        let excess = state.buffer.len().saturating_sub(self.capacity);
        if excess > 0 {
            let dropped = state.buffer.drain(..excess).filter(|b| *b == b'\n').count() as u64;
            state.dropped_lines += dropped;
        }
        drop(state);
        self.changed.notify_all();
    }

    fn finish(&self, code: i32) {
        let mut state = lock(&self.state);
        if state.status == ProcessStatus::Running {
            state.status = ProcessStatus::Exited;
            state.exit_code = Some(code);
            state.finished_at = Some(Instant::now());
        }
        drop(state);
        self.changed.notify_all();
    }
}

/// Limits of the registry.
#[derive(Clone, Debug)]
pub struct ProcessLimits {
    /// Rolling buffer per process (bytes).
    pub buffer_bytes: usize,
    /// Processes tracked at once.
    pub max_processes: usize,
    /// How long finished processes stay listed.
    pub finished_ttl: Duration,
}

/// All background processes.
#[derive(Debug)]
pub struct ProcessRegistry {
    limits: ProcessLimits,
    processes: Mutex<HashMap<String, Arc<BackgroundProcess>>>,
}

impl ProcessRegistry {
    /// An empty registry.
    pub fn new(limits: ProcessLimits) -> Self {
        ProcessRegistry {
            limits,
            processes: Mutex::new(HashMap::new()),
        }
    }

    fn prune(&self, map: &mut HashMap<String, Arc<BackgroundProcess>>) {
        let ttl = self.limits.finished_ttl;
        map.retain(|_, p| p.finished_at().is_none_or(|at| at.elapsed() < ttl));
        while map.len() >= self.limits.max_processes {
            let oldest = map
                .values()
                .filter(|p| p.status() != ProcessStatus::Running)
                .min_by_key(|p| p.finished_at())
                .map(|p| p.id.clone());
            match oldest {
                Some(id) => {
                    map.remove(&id);
                }
                None => break,
            }
        }
    }

    /// Start `command` in `env` in the background.
    pub fn spawn(
        &self,
        env: &TaskEnvironment,
        command: &str,
        workdir: Option<&str>,
        pty: bool,
        approved: bool,
    ) -> Result<Arc<BackgroundProcess>, EnvError> {
        {
            let mut map = lock(&self.processes);
            self.prune(&mut map);
            if map.len() >= self.limits.max_processes {
                return Err(EnvError::Api {
                    backend: env.kind(),
                    operation: "background spawn".into(),
                    reason: format!(
                        "{} background processes are already running; kill some first",
                        map.len()
                    ),
                });
            }
        }
        let (mut handle, cwd) = env.spawn_background(command, workdir, pty, approved)?;
        let output = handle.take_output();
        let stdin = handle.take_stdin();
        let process = Arc::new(BackgroundProcess {
            id: format!("proc_{}", super::random_hex(12)),
            command: command.to_string(),
            cwd,
            task_id: env.task_id().to_string(),
            backend: env.kind(),
            started_at: SystemTime::now(),
            pid: handle.pid(),
            pty: pty && env.backend().supports_pty(),
            started: Instant::now(),
            capacity: self.limits.buffer_bytes.max(1024),
            state: Mutex::new(State {
                buffer: VecDeque::new(),
                total_bytes: 0,
                dropped_lines: 0,
                status: ProcessStatus::Running,
                exit_code: None,
                termination_source: None,
                finished_at: None,
            }),
            changed: Condvar::new(),
            handle: Mutex::new(handle),
            stdin: Mutex::new(stdin),
        });
        let reader = Arc::clone(&process);
        std::thread::Builder::new()
            .name(format!("toolhost-{}", process.id))
            .spawn(move || read_until_exit(&reader, output))
            .map_err(|e| EnvError::io("background reader thread", e))?;
        lock(&self.processes).insert(process.id.clone(), Arc::clone(&process));
        Ok(process)
    }

    /// The process with `id`.
    pub fn get(&self, id: &str) -> Option<Arc<BackgroundProcess>> {
        lock(&self.processes).get(id).cloned()
    }

    /// Processes of `task` (all when `None`), oldest first.
    pub fn list(&self, task: Option<&str>) -> Vec<Arc<BackgroundProcess>> {
        let mut map = lock(&self.processes);
        self.prune(&mut map);
        let mut out: Vec<_> = map
            .values()
            .filter(|p| task.is_none_or(|t| p.task_id == t))
            .cloned()
            .collect();
        out.sort_by_key(|p| p.started);
        out
    }

    /// True when `task` has a running process (keeps its environment from being reaped).
    pub fn has_running(&self, task: &str) -> bool {
        lock(&self.processes)
            .values()
            .any(|p| p.task_id == task && p.status() == ProcessStatus::Running)
    }

    /// Kill every running process of `task` (all when `None`).
    pub fn kill_all(&self, task: Option<&str>, source: &'static str) {
        let running: Vec<_> = lock(&self.processes)
            .values()
            .filter(|p| task.is_none_or(|t| p.task_id == t) && p.status() == ProcessStatus::Running)
            .cloned()
            .collect();
        let threads: Vec<_> = running
            .into_iter()
            .map(|p| std::thread::spawn(move || p.kill(source)))
            .collect();
        for t in threads {
            let _ = t.join();
        }
    }
}

fn read_until_exit(process: &BackgroundProcess, output: Option<Box<dyn std::io::Read + Send>>) {
    if let Some(mut output) = output {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match output.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => process.append(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
    }
    // Output closed: reap the process (or notice it was killed).
    loop {
        if process.status() != ProcessStatus::Running {
            return;
        }
        let polled = lock(&process.handle).try_wait();
        match polled {
            Ok(Some(code)) => {
                process.finish(code);
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => {
                process.finish(-1);
                return;
            }
        }
    }
}
