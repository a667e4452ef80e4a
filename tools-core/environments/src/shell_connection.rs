//! [`ShellConnection`]: a long-lived shell process as a backend hands it to
//! [`super::persistent`] — write a line, wait for output with a timeout, end one
//! command's process tree without touching the shell — and [`LocalShell`], the
//! implementation for shells started on this host (the local and sandbox backends).
//!
//! A [`LocalShell`] runs in a containment [`Scope`](crate::containment::Scope) of its own (a cgroup where one can
//! be made, else the environment mark). While the shell is idle the scope holds only the
//! shell (for the sandbox: bubblewrap, its pid 1 and the shell), recorded by
//! [`ShellConnection::settle`]; everything else in it belongs to the running command.
//! So a timeout ends exactly the command's processes — including what it moved out of
//! its process group with `setsid` — and after every command whatever it left behind
//! (`sleep 100 &`, daemons) ends too, as with one contained shell per command.

use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::Pid;

use super::RunningCommand;
use super::local_child::LocalChild;
use super::persistent_script::{self, Sentinels};
use super::shell::SessionScripts;

/// How long a timed-out command gets between SIGTERM and SIGKILL (as with one shell
/// per command).
const KILL_GRACE: Duration = Duration::from_secs(1);

/// A long-lived shell (see the module doc).
pub trait ShellConnection: Send {
    /// Write `bytes` to the shell's stdin.
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()>;
    /// Wait up to `timeout` for output: `Some(0)` at end of stream, `None` when nothing
    /// came in time.
    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>>;
    /// The shell is idle: remember its own processes (everything else is a command's).
    fn settle(&mut self);
    /// End the running command's whole process tree (SIGTERM, a grace, SIGKILL),
    /// leaving the shell.
    fn kill_command(&mut self);
    /// After a command: end whatever it left running. False when that failed (the
    /// shell is then discarded).
    fn end_leftovers(&mut self) -> bool;
    /// The shell's exit code once it has exited (`None` while it runs).
    fn exit_code(&mut self) -> Option<i32>;
    /// Replace `to` by `from` (paths inside the environment) from the host; false
    /// when that failed.
    fn rename(&self, from: &str, to: &str) -> bool;
    /// The shell's process id on this host, where it has one.
    fn pid(&self) -> Option<u32>;
    /// The line that runs `wrapper` framed by `sentinels`
    /// ([`persistent_script::command_line`]; `None` when it cannot be sent).
    fn command_line(
        &self,
        sentinels: &Sentinels,
        wrapper: &str,
        scripts: &SessionScripts,
    ) -> Option<String> {
        let _ = scripts;
        persistent_script::command_line(sentinels, wrapper)
    }
    /// The environment mark every process of a shell on another machine carries
    /// ([`super::remote_shell`]); `None` for shells on this host.
    fn mark(&self) -> Option<&str> {
        None
    }
}

/// A shell started on this host (see the module doc).
pub struct LocalShell {
    child: LocalChild,
    stdin: Box<dyn Write + Send>,
    output: std::io::PipeReader,
    keep: Vec<Pid>,
    /// `(prefix inside, host directory)`: where the environment's paths live on the
    /// host (the sandbox's private `/tmp`); `None` when they are the host's.
    path_map: Option<(String, PathBuf)>,
}

impl std::fmt::Debug for LocalShell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalShell")
            .field("child", &self.child)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

impl LocalShell {
    /// Wrap a contained child started with piped stdin. `path_map` maps a path prefix
    /// inside the environment to a host directory.
    pub fn new(
        mut child: LocalChild,
        path_map: Option<(String, PathBuf)>,
    ) -> std::io::Result<Self> {
        let missing = |what: &str| std::io::Error::other(format!("shell started without {what}"));
        if child.scope().is_none() {
            return Err(missing("a containment scope"));
        }
        let stdin = child.take_stdin().ok_or_else(|| missing("a stdin pipe"))?;
        let output = child
            .take_output_pipe()
            .ok_or_else(|| missing("an output pipe"))?;
        Ok(LocalShell {
            child,
            stdin,
            output,
            keep: Vec::new(),
            path_map,
        })
    }

    fn host_path(&self, inside: &str) -> Option<PathBuf> {
        match &self.path_map {
            None => Some(PathBuf::from(inside)),
            Some((prefix, dir)) => {
                let rest = inside.strip_prefix(prefix.as_str())?;
                Some(dir.join(rest.trim_start_matches('/')))
            }
        }
    }
}

impl ShellConnection for LocalShell {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stdin.write_all(bytes)?;
        self.stdin.flush()
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>> {
        poll_read(&mut self.output, buf, timeout)
    }

    fn settle(&mut self) {
        if let Some(scope) = self.child.scope() {
            self.keep = scope.members();
        }
    }

    fn kill_command(&mut self) {
        if let Some(scope) = self.child.scope() {
            scope.end_all_but(&self.keep, Some(KILL_GRACE));
        }
    }

    fn end_leftovers(&mut self) -> bool {
        match self.child.scope() {
            Some(scope) => scope.end_all_but(&self.keep, None),
            None => false,
        }
    }

    fn exit_code(&mut self) -> Option<i32> {
        self.child.try_wait().ok().flatten()
    }

    fn rename(&self, from: &str, to: &str) -> bool {
        match (self.host_path(from), self.host_path(to)) {
            (Some(from), Some(to)) => std::fs::rename(from, to).is_ok(),
            _ => false,
        }
    }

    fn pid(&self) -> Option<u32> {
        self.shell_pid()
    }
}

impl LocalShell {
    fn shell_pid(&self) -> Option<u32> {
        self.child.pid()
    }
}

/// Wait up to `timeout` for `pipe` to be readable, then read once: `Some(0)` at end
/// of stream, `None` when nothing came in time.
pub(crate) fn poll_read(
    pipe: &mut (impl Read + AsFd),
    buf: &mut [u8],
    timeout: Duration,
) -> std::io::Result<Option<usize>> {
    let ready = {
        let fd = pipe.as_fd();
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let timeout = Timespec {
            tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(n) => n > 0,
            Err(rustix::io::Errno::INTR) => false,
            Err(err) => return Err(err.into()),
        }
    };
    if !ready {
        return Ok(None);
    }
    loop {
        match pipe.read(buf) {
            Ok(n) => return Ok(Some(n)),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
}

impl Drop for LocalShell {
    fn drop(&mut self) {
        // The shell, whatever runs under it and whatever left its group.
        self.child.kill();
    }
}
