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

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tools_core::code_exec::colocate::Colocation;
use tools_core::environments::confine::Confinement;

use super::launch::{Conn, Launch, ReadFail};
use super::nested;
use super::protocol::{
    Answer, Callback, ChildFrame, Op, Request, Response, WireError, write_frame,
};
use crate::plugins::adapter::Declaration;
use crate::plugins::loader::LoadError;

/// Limits of one process plugin.
#[derive(Clone, Debug)]
pub struct ProcessLimits {
    /// Address-space cap of the child (`RLIMIT_AS`), in bytes; 0 = none.
    pub memory_bytes: u64,
    /// Crashes before the plugin is given up; 0 = never.
    pub max_crashes: u32,
    /// How long the child may take to load and register.
    pub startup: Duration,
    /// The Landlock/seccomp floor applied to the child before it runs plugin code.
    pub confinement: Option<Arc<Confinement>>,
}

/// Answers a plugin's requests to the host (`ctx.dispatch_tool` of a Python plugin).
pub type CallbackHandler = dyn Fn(&Callback) -> Answer + Send + Sync;

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
    /// The caller cancelled the request; the child was killed.
    #[error("cancelled (the plugin process was killed)")]
    Cancelled,
    /// No child could be started.
    #[error("plugin {plugin} cannot run: {reason}")]
    Unavailable {
        /// The plugin.
        plugin: String,
        /// Why.
        reason: String,
    },
}

#[derive(Default)]
struct State {
    conn: Option<Conn>,
    retry_at: Option<Instant>,
}

/// Why an exchange got no answer.
enum Fail {
    /// The channel broke (the child died or sent garbage).
    Broken,
    /// The deadline passed.
    Deadline,
    /// The caller cancelled.
    Cancelled,
}

/// One plugin served by a child process.
pub struct ProcessPlugin {
    name: String,
    launch: Mutex<Launch>,
    limits: ProcessLimits,
    state: Mutex<State>,
    next_id: AtomicU64,
    /// Set by [`ProcessPlugin::shutdown`]: no child is started after it.
    closed: AtomicBool,
    pid: AtomicU32,
    restarts: AtomicU32,
    crashes: AtomicU32,
    callbacks: Mutex<Option<Arc<CallbackHandler>>>,
    /// The CPU a native child serves on, held by the calling thread for each request.
    colocation: Option<Colocation>,
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
    /// Start plugin `name` from `library` in a `toolhost plugin-host` child; its
    /// declaration, or why it could not be loaded (the same [`LoadError`]s as
    /// in-process, or the child's death).
    pub fn start(
        name: &str,
        library: &Path,
        host_info: &str,
        limits: ProcessLimits,
    ) -> Result<(Self, Declaration), LoadError> {
        let launch = Launch::Native {
            library: library.to_path_buf(),
            host_info: host_info.to_string(),
            cpu: Colocation::choose().map(|c| c.cpu()),
        };
        let (plugin, hello) = Self::launch(name, launch, limits)?;
        let declaration = parse_declaration(&hello)?;
        Ok((plugin, declaration))
    }

    /// Start plugin `name` as `launch`; the text of its first frame (the declaration
    /// JSON, which may carry more than [`Declaration`] reads).
    pub fn launch(
        name: &str,
        launch: Launch,
        limits: ProcessLimits,
    ) -> Result<(Self, String), LoadError> {
        let colocation = match &launch {
            Launch::Native { cpu: Some(cpu), .. } => Colocation::on(*cpu),
            _ => None,
        };
        let plugin = ProcessPlugin {
            name: name.to_string(),
            colocation,
            launch: Mutex::new(launch),
            limits,
            state: Mutex::new(State::default()),
            next_id: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            pid: AtomicU32::new(0),
            restarts: AtomicU32::new(0),
            crashes: AtomicU32::new(0),
            callbacks: Mutex::new(None),
        };
        let (conn, hello) = plugin.spawn()?;
        plugin
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .conn = Some(conn);
        Ok((plugin, hello))
    }

    /// Answer the plugin's requests to the host (`dispatch_tool`) with `handler`.
    pub fn set_callbacks(&self, handler: Arc<CallbackHandler>) {
        *self
            .callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(handler);
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
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

    fn spawn(&self) -> Result<(Conn, String), LoadError> {
        let launch = self
            .launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let mut conn = Conn::spawn(&launch, &self.name, &self.limits)?;
        let deadline = Instant::now().checked_add(self.limits.startup);
        let hello = match conn.read_frame(deadline, None) {
            Ok(ChildFrame::Response(hello)) => hello,
            Ok(ChildFrame::Callback { .. }) => {
                let how = conn.end();
                return Err(LoadError::Process(format!(
                    "the plugin process asked the host for something while loading ({how})"
                )));
            }
            Err(ReadFail::Deadline | ReadFail::Cancelled) => {
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
                self.pid.store(conn.pid(), Ordering::Relaxed);
                Ok((conn, text))
            }
            Answer::Err(err) => Err(LoadError::InChild {
                summary: err.message.clone(),
                detail: err.detail.unwrap_or(err.message),
            }),
        }
    }

    /// Replace the child with a new one started from `launch` (the same one when
    /// `None`), reading the plugin's files again: its declaration text. The crash count
    /// starts over. On failure the old child is gone and the plugin has none until the
    /// next request restarts it.
    pub fn reload(&self, launch: Option<Launch>) -> Result<String, LoadError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(conn) = state.conn.take() {
            drop(conn.end());
        }
        self.pid.store(0, Ordering::Relaxed);
        if let Some(launch) = launch {
            *self.launch.lock().unwrap_or_else(PoisonError::into_inner) = launch;
        }
        self.crashes.store(0, Ordering::Release);
        state.retry_at = None;
        let (conn, hello) = self.spawn()?;
        state.conn = Some(conn);
        self.restarts.fetch_add(1, Ordering::AcqRel);
        tracing::info!(plugin = %self.name, pid = ?self.pid(), "plugin process reloaded");
        Ok(hello)
    }

    /// Send `op` and wait for its answer until `timeout` passes (`None`: no limit).
    pub fn request(&self, op: Op, timeout: Option<Duration>) -> Result<Answer, ProcessFault> {
        self.request_cancellable(op, timeout, None)
    }

    /// [`request`](Self::request), also given up (and the child killed) as soon as
    /// `cancelled` returns true.
    pub fn request_cancellable(
        &self,
        op: Op,
        timeout: Option<Duration>,
        cancelled: Option<&dyn Fn() -> bool>,
    ) -> Result<Answer, ProcessFault> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        if let Some(conn) = nested::take(self.key()) {
            return self.nested_request(conn, op, deadline, cancelled, timeout);
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // A child that died between requests (a thread of the plugin crashed it) is
        // counted and replaced before this request is sent.
        if let Some(conn) = state.conn.as_mut()
            && conn.has_exited()
        {
            drop(self.crashed(&mut state));
        }
        if state.conn.is_none() {
            self.restart(&mut state)?;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let Some(conn) = state.conn.take() else {
            return Err(self.unavailable("no plugin process"));
        };
        // This thread and the child's serving loop on one CPU until the answer is read.
        let _held = self.colocation.as_ref().map(Colocation::hold);
        let oom_before = conn.oom_kills();
        let (conn, result) = self.exchange(conn, id, op, deadline, cancelled);
        if let Some(conn) = &conn
            && conn.oom_kills() > oom_before
        {
            tracing::warn!(plugin = %self.name, "the memory limit (plugins.memory_limit_mb) killed a process the plugin started");
        }
        state.conn = conn;
        match result {
            Ok(answer) => Ok(answer),
            Err(Fail::Broken) => Err(self.crashed(&mut state)),
            Err(Fail::Deadline) => {
                self.kill(&mut state);
                let seconds = timeout.map_or(0.0, |t| t.as_secs_f64());
                tracing::warn!(plugin = %self.name, "call timed out after {seconds}s; plugin process killed");
                Err(ProcessFault::TimedOut { seconds })
            }
            Err(Fail::Cancelled) => {
                self.kill(&mut state);
                tracing::info!(plugin = %self.name, "call cancelled; plugin process killed");
                Err(ProcessFault::Cancelled)
            }
        }
    }

    /// A request made while this thread answers one of the plugin's callbacks, over the
    /// channel lent to it ([`nested`]). A failure drops the channel (killing the child):
    /// the request that made the callback then finds it gone and reports the crash.
    fn nested_request(
        &self,
        conn: Conn,
        op: Op,
        deadline: Option<Instant>,
        cancelled: Option<&dyn Fn() -> bool>,
        timeout: Option<Duration>,
    ) -> Result<Answer, ProcessFault> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (conn, result) = self.exchange(conn, id, op, deadline, cancelled);
        match (conn, result) {
            (Some(conn), Ok(answer)) => {
                nested::lend(self.key(), conn);
                Ok(answer)
            }
            (_, Ok(_) | Err(Fail::Broken)) => Err(ProcessFault::Crashed {
                plugin: self.name.clone(),
                how: "broke its channel while the host answered it".into(),
                crashes: self.crashes(),
                final_crash: false,
            }),
            (_, Err(Fail::Deadline)) => Err(ProcessFault::TimedOut {
                seconds: timeout.map_or(0.0, |t| t.as_secs_f64()),
            }),
            (_, Err(Fail::Cancelled)) => Err(ProcessFault::Cancelled),
        }
    }

    /// This plugin's key among the channels lent to a thread.
    fn key(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Send request `id` over `conn` and read until its answer, answering the child's
    /// callbacks meanwhile (with `conn` lent to this thread, see [`nested`]). The
    /// channel comes back unless a nested request broke it.
    fn exchange(
        &self,
        mut conn: Conn,
        id: u64,
        op: Op,
        deadline: Option<Instant>,
        cancelled: Option<&dyn Fn() -> bool>,
    ) -> (Option<Conn>, Result<Answer, Fail>) {
        if send(&mut conn, &Request { id, op }).is_err() {
            return (Some(conn), Err(Fail::Broken));
        }
        loop {
            match conn.read_frame(deadline, cancelled) {
                Ok(ChildFrame::Response(response)) if response.id == id => {
                    return (Some(conn), Ok(response.result));
                }
                Ok(ChildFrame::Callback {
                    id: asked,
                    callback,
                }) if asked == id => {
                    nested::lend(self.key(), conn);
                    let result = self.answer_callback(&callback);
                    let Some(back) = nested::take(self.key()) else {
                        return (None, Err(Fail::Broken));
                    };
                    conn = back;
                    if send(&mut conn, &Response { id, result }).is_err() {
                        return (Some(conn), Err(Fail::Broken));
                    }
                }
                Ok(_) | Err(ReadFail::Broken(_)) => return (Some(conn), Err(Fail::Broken)),
                Err(ReadFail::Deadline) => return (Some(conn), Err(Fail::Deadline)),
                Err(ReadFail::Cancelled) => return (Some(conn), Err(Fail::Cancelled)),
            }
        }
    }

    /// The host's answer to `callback`.
    fn answer_callback(&self, callback: &Callback) -> Answer {
        let handler = self
            .callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match handler {
            Some(handler) => handler(callback),
            None => Answer::Err(WireError {
                kind: "unavailable".into(),
                message: "this host answers no plugin callbacks".into(),
                detail: None,
            }),
        }
    }

    /// Kill the child on purpose (timeout, cancellation): not a crash; the next request
    /// starts a new one.
    fn kill(&self, state: &mut State) {
        if let Some(conn) = state.conn.take() {
            drop(conn.end());
        }
        self.pid.store(0, Ordering::Relaxed);
    }

    /// Kill the child, if one runs (the next request starts a new one).
    pub fn stop(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.kill(&mut state);
    }

    /// Ask the child to exit, as the host does when it exits: its input closed, then
    /// SIGTERM, each with `grace` to exit, then SIGKILL ([`Conn::close`]), so that its
    /// exit handlers run. A request still in flight after `grace` is left to the child's
    /// death with the host.
    pub fn shutdown(&self, grace: Duration) {
        let until = Instant::now() + grace;
        let mut state = loop {
            match self.state.try_lock() {
                Ok(state) => break state,
                Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    tracing::warn!(plugin = %self.name, "busy at shutdown; not waited for");
                    return;
                }
            }
        };
        if let Some(conn) = state.conn.take() {
            let how = conn.close(grace);
            tracing::debug!(plugin = %self.name, "plugin process {how} at shutdown");
        }
        self.pid.store(0, Ordering::Relaxed);
        // No new child after shutdown.
        self.closed.store(true, Ordering::Release);
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
        if self.closed.load(Ordering::Acquire) {
            return Err(self.unavailable("the host is shutting down"));
        }
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

/// Write `frame` to the child.
fn send(conn: &mut Conn, frame: &impl serde::Serialize) -> Result<(), super::protocol::FrameError> {
    write_frame(conn.input()?, frame)
}

/// The declaration in a plugin process's first frame.
pub fn parse_declaration(text: &str) -> Result<Declaration, LoadError> {
    serde_json::from_str(text).map_err(|e| LoadError::Declaration(e.to_string()))
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
