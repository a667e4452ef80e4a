//! [`ProcessPlugin`]: the host's handle on one plugin host child — starting it, one
//! request at a time under a deadline, and what happens when the child dies or hangs.
//!
//! Requests to one plugin are serialised (the child serves them in order). A request
//! past its deadline kills the child (no thread is left behind, unlike in-process);
//! the next request starts a new one. A child that dies (signal, abort, `exit()`,
//! broken frames) answers the request in flight with [`ProcessFault::Crashed`], naming
//! how it ended; it is restarted on the next request, after a backoff that doubles per
//! crash (0 s, 0.25 s, 0.5 s, … up to 4 s), and not at all once `max_crashes` is
//! reached.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};

use super::exit::describe;
use super::protocol::{Answer, FrameError, Op, Request, Response, split_frame, write_frame};
use crate::plugins::adapter::Declaration;
use crate::plugins::loader::LoadError;

/// Limits of one process plugin.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessLimits {
    /// Address-space cap of the child (`RLIMIT_AS`), in bytes; 0 = none.
    pub memory_bytes: u64,
    /// Crashes before the plugin is given up; 0 = never.
    pub max_crashes: u32,
    /// How long the child may take to load and register.
    pub startup: Duration,
}

/// Why a request got no answer from the plugin.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProcessFault {
    /// The child died while serving the request.
    #[error("plugin {plugin} crashed: its process {how}")]
    Crashed {
        /// The plugin.
        plugin: String,
        /// How the process ended (`killed by signal 11 (SIGSEGV)`, ...).
        how: String,
        /// Crashes so far.
        crashes: u32,
        /// True when this crash reached `max_crashes`.
        final_crash: bool,
    },
    /// The request passed its deadline; the child was killed.
    #[error("timed out after {seconds}s (the plugin process was killed)")]
    TimedOut {
        /// The limit.
        seconds: f64,
    },
    /// No child could be started.
    #[error("plugin {plugin} cannot run: {reason}")]
    Unavailable {
        /// The plugin.
        plugin: String,
        /// Why.
        reason: String,
    },
}

/// A running child and its channel.
struct Conn {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        // Already gone is fine: the point is that no child outlives its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Why reading an answer stopped.
enum ReadFail {
    Deadline,
    Broken(FrameError),
}

impl Conn {
    /// Read one response, giving up at `deadline`.
    fn read_response(&mut self, deadline: Option<Instant>) -> Result<Response, ReadFail> {
        let mut chunk = [0u8; 64 * 1024];
        loop {
            match split_frame(&self.buf) {
                Ok(Some((body, used))) => {
                    let response = serde_json::from_slice(body)
                        .map_err(|e| ReadFail::Broken(FrameError::Json(e)));
                    self.buf.drain(..used);
                    return response;
                }
                Ok(None) => {}
                Err(e) => return Err(ReadFail::Broken(e)),
            }
            let timeout = match deadline {
                None => None,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ReadFail::Deadline);
                    }
                    Some(Timespec {
                        tv_sec: left.as_secs().try_into().unwrap_or(i64::MAX),
                        tv_nsec: left.subsec_nanos().into(),
                    })
                }
            };
            let mut fds = [PollFd::new(&self.stdout, PollFlags::IN)];
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(ReadFail::Broken(FrameError::Io(e.into()))),
            }
            match self.stdout.read(&mut chunk) {
                Ok(0) => return Err(ReadFail::Broken(FrameError::Closed)),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadFail::Broken(FrameError::Io(e))),
            }
        }
    }

    /// Kill the child (if still running) and say how it ended.
    fn end(mut self) -> String {
        let status = match self.child.try_wait() {
            Ok(Some(status)) => Ok(status),
            _ => {
                // It may be exiting right now: give it a moment to report its own end
                // before it is killed.
                std::thread::sleep(Duration::from_millis(20));
                match self.child.try_wait() {
                    Ok(Some(status)) => Ok(status),
                    _ => {
                        let _ = self.child.kill();
                        self.child.wait()
                    }
                }
            }
        };
        match status {
            Ok(status) => describe(status),
            Err(e) => format!("could not be waited for ({e})"),
        }
    }
}

#[derive(Default)]
struct State {
    conn: Option<Conn>,
    next_id: u64,
    retry_at: Option<Instant>,
}

/// One plugin served by a child process.
pub struct ProcessPlugin {
    name: String,
    library: PathBuf,
    host_info: String,
    limits: ProcessLimits,
    state: Mutex<State>,
    pid: AtomicU32,
    restarts: AtomicU32,
    crashes: AtomicU32,
}

impl std::fmt::Debug for ProcessPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessPlugin")
            .field("name", &self.name)
            .field("pid", &self.pid())
            .field("restarts", &self.restarts())
            .finish_non_exhaustive()
    }
}

/// The pause before restart number `crashes` (0 s, 0.25 s, 0.5 s, … 4 s).
pub fn backoff(crashes: u32) -> Duration {
    match crashes {
        0 | 1 => Duration::ZERO,
        n => Duration::from_millis(250u64 << (n - 2).min(4)),
    }
}

impl ProcessPlugin {
    /// Start plugin `name` from `library` in a child; its declaration, or why it could
    /// not be loaded (the same [`LoadError`]s as in-process, or the child's death).
    pub fn start(
        name: &str,
        library: &Path,
        host_info: &str,
        limits: ProcessLimits,
    ) -> Result<(Self, Declaration), LoadError> {
        let plugin = ProcessPlugin {
            name: name.to_string(),
            library: library.to_path_buf(),
            host_info: host_info.to_string(),
            limits,
            state: Mutex::new(State::default()),
            pid: AtomicU32::new(0),
            restarts: AtomicU32::new(0),
            crashes: AtomicU32::new(0),
        };
        let (conn, declaration) = plugin.spawn()?;
        plugin
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .conn = Some(conn);
        Ok((plugin, declaration))
    }

    /// The child's pid, while one runs.
    pub fn pid(&self) -> Option<u32> {
        Some(self.pid.load(Ordering::Relaxed)).filter(|p| *p != 0)
    }

    /// Children started after the first.
    pub fn restarts(&self) -> u32 {
        self.restarts.load(Ordering::Relaxed)
    }

    /// Crashes so far.
    pub fn crashes(&self) -> u32 {
        self.crashes.load(Ordering::Relaxed)
    }

    /// True once `max_crashes` is reached: no new child will be started.
    pub fn gave_up(&self) -> bool {
        let max = self.limits.max_crashes;
        max > 0 && self.crashes() >= max
    }

    fn spawn(&self) -> Result<(Conn, Declaration), LoadError> {
        let binary = super::host_binary();
        let mut child = Command::new(&binary)
            .arg("plugin-host")
            .arg("--name")
            .arg(&self.name)
            .arg("--memory-limit")
            .arg(self.limits.memory_bytes.to_string())
            .arg("--host-info")
            .arg(&self.host_info)
            .arg(&self.library)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| LoadError::Process(format!("cannot start {}: {e}", binary.display())))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            return Err(LoadError::Process("the child has no pipes".into()));
        };
        let mut conn = Conn {
            child,
            stdin,
            stdout,
            buf: Vec::new(),
        };
        let deadline = Instant::now().checked_add(self.limits.startup);
        let hello = match conn.read_response(deadline) {
            Ok(hello) => hello,
            Err(ReadFail::Deadline) => {
                let how = conn.end();
                return Err(LoadError::Process(format!(
                    "the plugin process did not register within {}s ({how})",
                    self.limits.startup.as_secs_f64()
                )));
            }
            Err(ReadFail::Broken(e)) => {
                let how = conn.end();
                return Err(LoadError::Process(format!(
                    "the plugin process {how} while loading ({e})"
                )));
            }
        };
        match hello.result {
            Answer::Ok(text) => {
                let declaration: Declaration = serde_json::from_str(&text)
                    .map_err(|e| LoadError::Declaration(e.to_string()))?;
                self.pid.store(conn.child.id(), Ordering::Relaxed);
                Ok((conn, declaration))
            }
            Answer::Err(err) => Err(LoadError::InChild {
                summary: err.message.clone(),
                detail: err.detail.unwrap_or(err.message),
            }),
        }
    }

    /// Send `op` and wait for its answer until `timeout` passes (`None`: no limit).
    pub fn request(&self, op: Op, timeout: Option<Duration>) -> Result<Answer, ProcessFault> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // A child that died between requests (a thread of the plugin crashed it) is
        // counted and replaced before this request is sent.
        if let Some(conn) = state.conn.as_mut()
            && matches!(conn.child.try_wait(), Ok(Some(_)))
        {
            drop(self.crashed(&mut state));
        }
        if state.conn.is_none() {
            self.restart(&mut state)?;
        }
        state.next_id += 1;
        let id = state.next_id;
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        let Some(conn) = state.conn.as_mut() else {
            return Err(self.unavailable("no plugin process"));
        };
        if write_frame(&mut conn.stdin, &Request { id, op }).is_err() {
            return Err(self.crashed(&mut state));
        }
        match conn.read_response(deadline) {
            Ok(response) if response.id == id => Ok(response.result),
            Ok(_) | Err(ReadFail::Broken(_)) => Err(self.crashed(&mut state)),
            Err(ReadFail::Deadline) => {
                if let Some(conn) = state.conn.take() {
                    drop(conn.end());
                }
                self.pid.store(0, Ordering::Relaxed);
                let seconds = timeout.map_or(0.0, |t| t.as_secs_f64());
                tracing::warn!(plugin = %self.name, "call timed out after {seconds}s; plugin process killed");
                Err(ProcessFault::TimedOut { seconds })
            }
        }
    }

    fn unavailable(&self, reason: &str) -> ProcessFault {
        ProcessFault::Unavailable {
            plugin: self.name.clone(),
            reason: reason.to_string(),
        }
    }

    /// The child died (or broke the protocol): reap it and count the crash.
    fn crashed(&self, state: &mut State) -> ProcessFault {
        let how = state
            .conn
            .take()
            .map_or_else(|| "ended".to_string(), Conn::end);
        self.pid.store(0, Ordering::Relaxed);
        let crashes = self.crashes.fetch_add(1, Ordering::AcqRel) + 1;
        let max = self.limits.max_crashes;
        state.retry_at = Instant::now().checked_add(backoff(crashes));
        tracing::error!(plugin = %self.name, "plugin process {how} ({crashes} crashes, {max} allowed)");
        ProcessFault::Crashed {
            plugin: self.name.clone(),
            how,
            crashes,
            final_crash: max > 0 && crashes >= max,
        }
    }

    /// Start a new child after the backoff.
    fn restart(&self, state: &mut State) -> Result<(), ProcessFault> {
        let crashes = self.crashes();
        let max = self.limits.max_crashes;
        if self.gave_up() {
            return Err(self.unavailable(&format!(
                "gave up after {crashes} crashes (plugins.max_crashes = {max})"
            )));
        }
        if let Some(wait) = state
            .retry_at
            .take()
            .map(|at| at.saturating_duration_since(Instant::now()))
        {
            std::thread::sleep(wait);
        }
        match self.spawn() {
            Ok((conn, _)) => {
                state.conn = Some(conn);
                self.restarts.fetch_add(1, Ordering::AcqRel);
                tracing::info!(plugin = %self.name, pid = ?self.pid(), "plugin process restarted");
                Ok(())
            }
            Err(e) => {
                self.crashes.fetch_add(1, Ordering::AcqRel);
                Err(self.unavailable(&format!("restart failed: {e}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let ms: Vec<u128> = (1..=8).map(|n| backoff(n).as_millis()).collect();
        assert_eq!(ms, [0, 250, 500, 1000, 2000, 4000, 4000, 4000]);
    }
}
