//! [`RemoteShell`]: the [`ShellConnection`] of a persistent shell that runs on another
//! machine — a long-lived `exec` in the task's container, one ssh session — reached
//! through a byte [`ShellTransport`].
//!
//! Its processes cannot be signalled from here, so they are tracked by an environment
//! mark ([`super::remote_script`]): the driver ends each command's leftovers itself
//! before it reports the command's end, and a timeout ends the command from a second,
//! unmarked process in the environment ([`SideRunner`]: a short `exec`, a second ssh
//! session over the master connection), leaving the driver. A shell dropped while a
//! command may still run, or that ended on its own, has all its marked processes ended
//! the same way; an idle one just gets end of input and exits.

use std::time::{Duration, Instant};

use super::persistent_script::Sentinels;
use super::remote_script;
use super::shell::SessionScripts;
use super::shell_connection::ShellConnection;

/// How long a timed-out command gets between SIGTERM and SIGKILL, in tenths of a
/// second (as with one shell per command).
const KILL_GRACE_TENTHS: u32 = 10;
/// How long the driver may take to say it is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(15);

/// Bytes to and from a shell on another machine.
pub trait ShellTransport: Send {
    /// Write `bytes` to the shell's input.
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Wait up to `timeout` for output: `Some(0)` at end of stream, `None` when nothing
    /// came in time.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>>;
    /// The shell's exit code once it has ended (`None` while it runs or while that
    /// cannot be known yet).
    fn exit_code(&mut self) -> Option<i32>;
    /// A process of this host that carries the shell (the ssh client), if any.
    fn local_pid(&self) -> Option<u32> {
        None
    }
    /// End the connection: the shell sees end of input.
    fn close(&mut self);
}

/// Runs a short POSIX `sh` script in the environment, outside the shell, and says
/// whether it ran and succeeded.
pub type SideRunner = Box<dyn Fn(&str) -> bool + Send>;

/// Why a remote shell could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The transport failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The shell ended or said nothing usable before it was ready.
    #[error("the shell did not start: {0}")]
    NotReady(String),
    /// The environment lacks what the driver needs (`grep -z`, `mv`, ANSI-C quoting).
    #[error("the environment's shell cannot host a persistent shell")]
    Unsuited,
}

/// A persistent shell on another machine (see the module doc).
pub struct RemoteShell {
    transport: Box<dyn ShellTransport>,
    side: SideRunner,
    mark: String,
    driver_pid: u32,
    /// Output read while waiting for the driver's first line, not yet handed out.
    pending: Vec<u8>,
    /// A command line was sent and its end not yet confirmed.
    busy: bool,
}

impl std::fmt::Debug for RemoteShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteShell")
            .field("driver_pid", &self.driver_pid)
            .field("busy", &self.busy)
            .finish_non_exhaustive()
    }
}

/// A fresh mark for a new shell.
pub fn new_mark() -> String {
    format!("r{}", super::random_hex(16))
}

impl RemoteShell {
    /// Wrap a transport whose other end runs [`remote_script::driver`]`(mark)` with
    /// the mark in its environment, once the driver said it is ready. On failure
    /// whatever the shell started is ended.
    pub fn open(
        transport: Box<dyn ShellTransport>,
        side: SideRunner,
        mark: String,
    ) -> Result<Self, OpenError> {
        let mut shell = RemoteShell {
            transport,
            side,
            mark,
            driver_pid: 0,
            pending: Vec::new(),
            // Until the driver reported, anything marked may be running.
            busy: true,
        };
        let pid = shell.read_ready()?;
        shell.driver_pid = pid;
        shell.busy = false;
        Ok(shell)
    }

    fn read_ready(&mut self) -> Result<u32, OpenError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut buf = [0u8; 1024];
        loop {
            if let Some(at) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=at).collect();
                let line = String::from_utf8_lossy(&line);
                if line.contains(remote_script::READY_PREFIX) {
                    return remote_script::parse_ready(&line).ok_or(OpenError::Unsuited);
                }
                continue;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(OpenError::NotReady("no answer in time".into()));
            }
            match self.transport.recv(&mut buf, left)? {
                Some(0) => {
                    return Err(OpenError::NotReady(format!(
                        "it ended: {}",
                        String::from_utf8_lossy(&self.pending).trim()
                    )));
                }
                Some(n) => self.pending.extend_from_slice(&buf[..n]),
                None => {}
            }
        }
    }

    /// The mark every process of this shell carries.
    pub fn mark(&self) -> &str {
        &self.mark
    }
}

impl ShellConnection for RemoteShell {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.busy = true;
        self.transport.send(bytes)
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>> {
        if !self.pending.is_empty() {
            let n = self.pending.len().min(buf.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            return Ok(Some(n));
        }
        self.transport.recv(buf, timeout)
    }

    fn settle(&mut self) {
        self.busy = false;
    }

    fn kill_command(&mut self) {
        let script =
            remote_script::kill_script(&self.mark, Some(self.driver_pid), KILL_GRACE_TENTHS);
        if !(self.side)(&script) {
            tracing::debug!("could not end a remote command from outside its shell");
        }
    }

    fn end_leftovers(&mut self) -> bool {
        // The driver ended them before it reported the command's end (or exits when it
        // could not, which the next command notices).
        self.busy = false;
        true
    }

    fn exit_code(&mut self) -> Option<i32> {
        self.transport.exit_code()
    }

    fn rename(&self, _from: &str, _to: &str) -> bool {
        // Done by the driver (`__th_end`).
        true
    }

    fn pid(&self) -> Option<u32> {
        self.transport.local_pid()
    }

    fn command_line(
        &self,
        sentinels: &Sentinels,
        wrapper: &str,
        scripts: &SessionScripts,
    ) -> Option<String> {
        remote_script::command_line(sentinels, wrapper, scripts)
    }

    fn mark(&self) -> Option<&str> {
        Some(&self.mark)
    }
}

impl Drop for RemoteShell {
    fn drop(&mut self) {
        if self.busy || self.transport.exit_code().is_some() {
            // A command may still run, or the shell ended unasked (possibly leaving
            // what it could not end): end everything carrying the mark.
            let script = remote_script::kill_script(&self.mark, None, 0);
            if !(self.side)(&script) {
                tracing::debug!("could not end a dropped remote shell's processes");
            }
        }
        // An idle driver exits at end of input.
        self.transport.close();
    }
}
