//! Starting one plugin process and reading its frames: what runs ([`Launch`]: the
//! native `toolhost plugin-host`, or a program that speaks the protocol itself, such as
//! the Python plugin host), the limits applied before it runs any plugin code, and the
//! channel ([`Conn`]) with deadline- and cancellation-aware reads.
//!
//! Every child gets, between `fork` and `exec`: the parent-death signal (it never
//! outlives the host), its memory limit ([`super::memory`]: it moves itself into its
//! own cgroup, or gets the address-space fallback) and, when configured, the
//! Landlock/seccomp floor of the local terminal backend (see
//! `tools_core::environments::confine`). The native plugin host sets its own
//! address-space limit again after moving its channel, which is harmless.
//!
//! A child is ended politely ([`Conn::close`]): its input is closed (the protocol's
//! "exit now"; the Python plugin host then runs `on_session_finalize` hooks and exits,
//! running `atexit`), then SIGTERM, each followed by a grace period, and SIGKILL last.
//! Only a child that hangs or passed a deadline is killed at once ([`Conn::end`]).

use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use tools_core::environments::exec_policy;

use super::exit::describe;
use super::memory::Cap;
use super::plugin::ProcessLimits;
use super::protocol::{ChildFrame, FrameError, split_frame};
use crate::plugins::loader::LoadError;

/// The variable naming the CPU a native plugin child serves requests on.
pub const CPU_ENV: &str = "TOOLHOST_PLUGIN_CPU";

/// What a plugin process runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Launch {
    /// `toolhost plugin-host`, loading a native library with the host's loader.
    Native {
        /// The library (already checked).
        library: PathBuf,
        /// The host information handed to `register` (JSON).
        host_info: String,
        /// The CPU the child serves requests on, given as [`CPU_ENV`] (the host's
        /// calling thread holds it for each request: `colocate` in tools-core says why).
        cpu: Option<usize>,
    },
    /// A program that speaks the framed protocol on its stdin/stdout.
    Program {
        /// The executable.
        program: PathBuf,
        /// Its arguments.
        args: Vec<OsString>,
        /// Variables added to its environment.
        env: Vec<(OsString, OsString)>,
    },
}

impl Launch {
    fn command(&self, name: &str, address_space: u64) -> Command {
        match self {
            Launch::Native {
                library,
                host_info,
                cpu,
            } => {
                let mut cmd = exec_policy::command(super::host_binary());
                if let Some(cpu) = cpu {
                    cmd.env(CPU_ENV, cpu.to_string());
                }
                cmd.arg("plugin-host")
                    .arg("--name")
                    .arg(name)
                    .arg("--memory-limit")
                    .arg(address_space.to_string())
                    .arg("--host-info")
                    .arg(host_info)
                    .arg(library);
                cmd
            }
            Launch::Program { program, args, env } => {
                let mut cmd = exec_policy::command(program);
                cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
                cmd
            }
        }
    }

    /// The program started, for messages.
    pub fn program(&self) -> PathBuf {
        match self {
            Launch::Native { .. } => super::host_binary(),
            Launch::Program { program, .. } => program.clone(),
        }
    }
}

/// Why reading a frame stopped.
#[derive(Debug)]
pub enum ReadFail {
    /// The deadline passed.
    Deadline,
    /// The caller cancelled.
    Cancelled,
    /// The channel broke or carried garbage.
    Broken(FrameError),
}

/// How often a read with a cancellation check looks at it.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A running child and its channel.
pub struct Conn {
    pub(super) child: Child,
    /// The channel to the child; `None` once closed (asking it to exit).
    stdin: Option<ChildStdin>,
    /// Its memory limit (a cgroup is removed after the child).
    cap: Cap,
    stdout: ChildStdout,
    buf: Vec<u8>,
    /// Where each `read` lands: allocated (and zeroed) once per child, not per frame —
    /// zeroing 64 KiB on the stack for every call cost more than the call's own JSON.
    chunk: Box<[u8]>,
}

/// Bytes asked for per `read` of the child's stdout (a pipe's default capacity).
const READ_CHUNK: usize = 64 * 1024;

impl Drop for Conn {
    fn drop(&mut self) {
        // Already gone is fine: the point is that no child outlives its handle.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Death signal, cgroup and address-space cap, in the child before `exec`.
#[allow(unsafe_code)]
fn child_limits(memory_bytes: u64, cgroup_procs: Option<i32>) -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments only; async-signal-safe.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if let Some(fd) = cgroup_procs {
        // "0" moves the writing process; a child that cannot join its cgroup does not
        // run unlimited.
        // SAFETY: write(2) of a static buffer to a descriptor opened before the fork;
        // async-signal-safe.
        if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    if memory_bytes > 0 {
        let limit = libc::rlimit {
            rlim_cur: memory_bytes,
            rlim_max: memory_bytes,
        };
        // SAFETY: setrlimit reads the struct on this stack frame; async-signal-safe.
        if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

impl Conn {
    /// Start `launch` for plugin `name` under `limits`.
    #[allow(unsafe_code)]
    pub fn spawn(launch: &Launch, name: &str, limits: &ProcessLimits) -> Result<Conn, LoadError> {
        use std::os::unix::process::CommandExt;
        let cap = Cap::prepare(name, limits.memory_bytes);
        let memory = cap.address_space();
        let cgroup_procs = cap.procs_fd();
        let mut cmd = launch.command(name, memory);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // SAFETY: the closure runs between fork and exec and only makes system calls
        // (prctl, write, setrlimit) on values copied before the fork; it allocates
        // nothing.
        unsafe {
            cmd.pre_exec(move || child_limits(memory, cgroup_procs));
        }
        exec_policy::apply(
            &mut cmd,
            &exec_policy::Floor::fixed(limits.confinement.clone()),
            exec_policy::CodePath::Plugin,
            exec_policy::Approval::Unjudged,
        );
        let mut child = cmd.spawn().map_err(|e| {
            LoadError::Process(format!("cannot start {}: {e}", launch.program().display()))
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(LoadError::Process("the child has no pipes".into()));
        };
        Ok(Conn {
            child,
            stdin: Some(stdin),
            cap,
            stdout,
            buf: Vec::new(),
            chunk: vec![0u8; READ_CHUNK].into_boxed_slice(),
        })
    }

    /// The child's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The channel to the child, while open.
    pub fn input(&mut self) -> std::io::Result<&mut ChildStdin> {
        self.stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }

    /// OOM kills in the child's cgroup so far (0 without one): a rise during a request
    /// means the limit killed a process the plugin started.
    pub fn oom_kills(&self) -> u64 {
        self.cap.oom_kills()
    }

    /// Read one frame, giving up at `deadline` or when `cancelled` says so.
    pub fn read_frame(
        &mut self,
        deadline: Option<Instant>,
        cancelled: Option<&dyn Fn() -> bool>,
    ) -> Result<ChildFrame, ReadFail> {
        loop {
            match split_frame(&self.buf) {
                Ok(Some((body, used))) => {
                    let frame = serde_json::from_slice(body)
                        .map_err(|e| ReadFail::Broken(FrameError::Json(e)));
                    self.buf.drain(..used);
                    return frame;
                }
                Ok(None) => {}
                Err(e) => return Err(ReadFail::Broken(e)),
            }
            if cancelled.is_some_and(|c| c()) {
                return Err(ReadFail::Cancelled);
            }
            let mut wait = match deadline {
                None => None,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(ReadFail::Deadline);
                    }
                    Some(left)
                }
            };
            if cancelled.is_some() {
                wait = Some(wait.map_or(CANCEL_POLL, |w| w.min(CANCEL_POLL)));
            }
            let timeout = wait.map(|w| Timespec {
                tv_sec: w.as_secs().try_into().unwrap_or(i64::MAX),
                tv_nsec: w.subsec_nanos().into(),
            });
            let mut fds = [PollFd::new(&self.stdout, PollFlags::IN)];
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(ReadFail::Broken(FrameError::Io(e.into()))),
            }
            match self.stdout.read(&mut self.chunk) {
                Ok(0) => return Err(ReadFail::Broken(FrameError::Closed)),
                Ok(n) => self
                    .buf
                    .extend_from_slice(self.chunk.get(..n).unwrap_or_default()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadFail::Broken(FrameError::Io(e))),
            }
        }
    }

    /// True when the child has exited (without reaping it for good).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Kill the child (if still running) and say how it ended.
    pub fn end(mut self) -> String {
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
        self.how(status)
    }

    /// Ask the child to exit and wait for it: close its input, wait up to `grace`;
    /// SIGTERM, wait up to `grace` again; then SIGKILL. How it ended.
    pub fn close(mut self, grace: Duration) -> String {
        drop(self.stdin.take());
        if let Some(status) = self.wait_for(grace) {
            return self.how(Ok(status));
        }
        tracing::debug!(
            pid = self.pid(),
            "plugin process still running after its input closed; SIGTERM"
        );
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = rustix::process::kill_process(
                rustix::process::Pid::from_raw(pid).unwrap_or(rustix::process::Pid::INIT),
                rustix::process::Signal::TERM,
            );
        }
        if let Some(status) = self.wait_for(grace) {
            return self.how(Ok(status));
        }
        tracing::warn!(pid = self.pid(), "plugin process ignored SIGTERM; killed");
        let _ = self.child.kill();
        let status = self.child.wait();
        self.how(status)
    }

    /// The child's status once it exits within `limit`.
    fn wait_for(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + limit;
        let mut pause = Duration::from_millis(1);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// `status` in words, with what the memory limit had to do with it.
    fn how(&self, status: std::io::Result<std::process::ExitStatus>) -> String {
        use std::os::unix::process::ExitStatusExt;
        match status {
            Ok(status) => {
                let text = describe(status);
                match self.cap.death_note(0, status.signal()) {
                    Some(note) => format!("{text}; {note}"),
                    None => text,
                }
            }
            Err(e) => format!("could not be waited for ({e})"),
        }
    }
}
