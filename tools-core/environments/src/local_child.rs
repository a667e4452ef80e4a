//! A process started on this host in its own process group (or session: with a PTY, or
//! when asked), with stdout and stderr merged into one pipe. Killing it signals the whole
//! group (SIGTERM, up to 1 s grace, SIGKILL) and reaps the leader, so nothing is left behind.
//! A contained child ([`LocalChild::spawn_contained`]) also ends whatever left the group
//! (daemons, `setsid`) through its [`Scope`], when killed and when dropped; without a
//! cgroup, a piped one runs under a subreaper runner (`subreaper.rs`) as well.
//!
//! Used directly by the local and sandbox backends, and for the client processes of the
//! ssh and singularity backends.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::containment::{SCOPE_ENV, Scope, join_cgroup_in_child};
use super::{RunningCommand, StdinMode};

/// What to start.
#[derive(Debug, Default)]
pub struct LocalCommand {
    /// Program.
    pub program: OsString,
    /// Arguments.
    pub args: Vec<OsString>,
    /// The complete environment (`None` = inherit).
    pub env: Option<Vec<(OsString, OsString)>>,
    /// Working directory of the process.
    pub cwd: Option<PathBuf>,
    /// Stdin.
    pub stdin: StdinMode,
    /// Attach a pseudo-terminal (30 rows × 120 columns).
    pub pty: bool,
    /// Start the process as the leader of a new session (so it has no controlling
    /// terminal), not only of a new process group. Everything it starts stays in the
    /// group unless it moves itself out. (A PTY always gets a new session.)
    pub new_session: bool,
    /// Kernel confinement applied in the child before exec.
    #[cfg(target_os = "linux")]
    pub confine: Option<std::sync::Arc<super::confine::Confinement>>,
}

/// Exit code as a shell reports it: the code, or 128 + signal.
pub fn exit_code(status: ExitStatus) -> i32 {
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1)
}

/// A started local process.
pub struct LocalChild {
    child: Child,
    pgid: Option<Pid>,
    output: Option<Box<dyn Read + Send>>,
    /// The output pipe itself (piped children), until taken by either accessor.
    pipe: Option<std::io::PipeReader>,
    stdin: Option<Box<dyn Write + Send>>,
    exit: Option<i32>,
    /// Runs after the group is killed (e.g. a remote kill for ssh clients).
    on_kill: Option<Box<dyn FnMut() + Send>>,
    /// Everything the command started, wherever it moved (contained children only).
    scope: Option<Scope>,
}

impl std::fmt::Debug for LocalChild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalChild")
            .field("pid", &self.child.id())
            .field("exit", &self.exit)
            .finish_non_exhaustive()
    }
}

/// A PTY master read through a `File`; EIO after the child side closes means EOF.
struct PtyReader(std::fs::File);

impl Read for PtyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.0.read(buf) {
            Err(err) if err.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) => Ok(0),
            other => other,
        }
    }
}

/// Writes stdin data on a helper thread so a child that does not read cannot block us.
fn feed_stdin(mut pipe: impl Write + Send + 'static, data: Vec<u8>) {
    std::thread::spawn(move || {
        let _ = pipe.write_all(&data);
    });
}

/// The fields of a process's `/proc/<pid>/stat` that toolhost looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// One letter: `R`, `S`, `D`, `Z` (zombie), `X` (dead), ...
    pub state: char,
    /// Process group id.
    pub pgrp: i32,
    /// Session id (0 when the session leader is outside our pid namespace).
    pub session: i32,
}

impl ProcStat {
    /// Read from `<proc_dir>/stat`; `None` when the process is gone or the line is
    /// not the kernel's.
    pub(crate) fn read(proc_dir: &Path) -> Option<Self> {
        let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
        // The command (in parentheses) may contain anything; the fields after its
        // last `)` are: state, ppid, pgrp, session, ...
        let mut rest = stat.rsplit(')').next()?.split_whitespace();
        let state = rest.next()?.chars().next()?;
        let pgrp = rest.nth(1)?.parse().ok()?;
        let session = rest.next()?.parse().ok()?;
        Some(ProcStat {
            state,
            pgrp,
            session,
        })
    }
}

/// True while group `pgid` has a member that is not a zombie (from /proc; an unreaped
/// leader keeps `kill(-pgid, 0)` succeeding even as a zombie). While it has one, the
/// group id cannot have been reused, so a signal to it reaches only its own processes.
pub fn group_has_live_members(pgid: Pid) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return rustix::process::test_kill_process_group(pgid).is_ok();
    };
    let want = pgid.as_raw_nonzero().get();
    dir.flatten()
        .filter(|entry| {
            // Processes only, not `self`, `net`, ...
            let name = entry.file_name();
            name.to_str().is_some_and(|n| n.parse::<i32>().is_ok())
        })
        .filter_map(|entry| ProcStat::read(&entry.path()))
        .any(|stat| stat.pgrp == want && stat.state != 'Z' && stat.state != 'X')
}

impl LocalChild {
    /// Start `spec`.
    pub fn spawn(spec: LocalCommand) -> std::io::Result<LocalChild> {
        Self::spawn_in(spec, None)
    }

    /// Start `spec` in a [`Scope`] of its own: everything it starts, even what leaves
    /// its process group, ends when it is killed or dropped.
    pub fn spawn_contained(spec: LocalCommand) -> std::io::Result<LocalChild> {
        Self::spawn_in(spec, Some(Scope::new()))
    }

    pub(crate) fn spawn_in(
        spec: LocalCommand,
        scope: Option<Scope>,
    ) -> std::io::Result<LocalChild> {
        let mut child = if spec.pty {
            Self::spawn_pty(spec, scope.as_ref())?
        } else {
            Self::spawn_piped(spec, scope.as_ref())?
        };
        if let Some(mut scope) = scope {
            scope.confirm(child.child.id());
            child.scope = Some(scope);
        }
        Ok(child)
    }

    #[allow(unsafe_code)]
    // Every local-process spawn: `spec.confine` is what the execution policy selected.
    #[allow(clippy::disallowed_methods)]
    fn spawn_piped(spec: LocalCommand, scope: Option<&Scope>) -> std::io::Result<LocalChild> {
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args);
        if let Some(env) = &spec.env {
            cmd.env_clear();
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(scope) = scope {
            cmd.env(SCOPE_ENV, scope.mark());
            if let Some(procs) = scope.procs_file() {
                // SAFETY: runs between fork and exec; `join_cgroup_in_child` makes only
                // async-signal-safe calls (open, write, close) on a path prepared before
                // the fork, and allocates nothing.
                unsafe {
                    cmd.pre_exec(move || {
                        join_cgroup_in_child(&procs);
                        Ok(())
                    });
                }
            }
        }
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        if spec.new_session {
            // SAFETY: the closure runs between fork and exec, where only
            // async-signal-safe calls are allowed; setsid is one (a bare syscall) and
            // touches no memory shared with the parent.
            unsafe {
                cmd.pre_exec(|| {
                    rustix::process::setsid()
                        .map(drop)
                        .map_err(std::io::Error::from)
                });
            }
        } else {
            cmd.process_group(0);
        }
        // Without a cgroup, a subreaper runner keeps what leaves the group *and* drops
        // the environment mark (the last escape of the mark fallback).
        #[cfg(target_os = "linux")]
        if scope.is_some_and(|scope| scope.cgroup().is_none()) {
            super::subreaper::attach(&mut cmd);
        }
        #[cfg(target_os = "linux")]
        super::confine::attach(&mut cmd, spec.confine.clone());
        let (reader, writer) = std::io::pipe()?;
        cmd.stdout(writer.try_clone()?);
        cmd.stderr(writer);
        cmd.stdin(match spec.stdin {
            StdinMode::Null => Stdio::null(),
            StdinMode::Piped | StdinMode::Data(_) => Stdio::piped(),
        });
        let mut child = cmd.spawn()?;
        // Drop our copies of the pipe's write end, or EOF never comes.
        drop(cmd);
        let pgid = Pid::from_raw(child.id() as i32);
        let mut stdin: Option<Box<dyn Write + Send>> = None;
        if let Some(pipe) = child.stdin.take() {
            match spec.stdin {
                StdinMode::Data(data) => feed_stdin(pipe, data),
                _ => stdin = Some(Box::new(pipe)),
            }
        }
        Ok(LocalChild {
            child,
            pgid,
            output: None,
            pipe: Some(reader),
            stdin,
            exit: None,
            on_kill: None,
            scope: None,
        })
    }

    #[allow(unsafe_code)]
    // As `spawn_piped`, with a pseudo-terminal; `spec.confine` is the policy's.
    #[allow(clippy::disallowed_methods)]
    fn spawn_pty(spec: LocalCommand, scope: Option<&Scope>) -> std::io::Result<LocalChild> {
        let to_io = |e: pty_process::Error| std::io::Error::other(e.to_string());
        let (pty, pts) = pty_process::blocking::open().map_err(to_io)?;
        pty.resize(pty_process::Size::new(30, 120)).map_err(to_io)?;
        let mut cmd = pty_process::blocking::Command::new(&spec.program).args(&spec.args);
        if let Some(env) = &spec.env {
            cmd = cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(cwd) = &spec.cwd {
            cmd = cmd.current_dir(cwd);
        }
        if let Some(scope) = scope {
            cmd = cmd.env(SCOPE_ENV, scope.mark());
            if let Some(procs) = scope.procs_file() {
                // SAFETY: as in `spawn_piped`: only async-signal-safe calls on a path
                // prepared before the fork.
                cmd = unsafe {
                    cmd.pre_exec(move || {
                        join_cgroup_in_child(&procs);
                        Ok(())
                    })
                };
            }
        }
        // The confinement comes last: once Landlock is on, the cgroup file above could
        // no longer be written.
        #[cfg(target_os = "linux")]
        if let Some(confinement) = spec.confine.clone() {
            // SAFETY: the hook only makes system calls on data prepared before the fork
            // (see `confine::Confinement::apply_in_child`); it allocates nothing.
            cmd = unsafe { cmd.pre_exec(super::confine::hook(confinement)) };
        }
        let child = cmd.spawn(pts).map_err(to_io)?;
        let master: std::os::fd::OwnedFd = pty.into();
        let read_side = std::fs::File::from(master);
        let mut write_side = read_side.try_clone()?;
        let mut stdin: Option<Box<dyn Write + Send>> = None;
        match spec.stdin {
            StdinMode::Data(data) => {
                let _ = write_side.write_all(&data);
            }
            StdinMode::Piped => stdin = Some(Box::new(write_side)),
            StdinMode::Null => {}
        }
        let pgid = Pid::from_raw(child.id() as i32);
        Ok(LocalChild {
            child,
            pgid,
            output: Some(Box::new(PtyReader(read_side))),
            pipe: None,
            stdin,
            exit: None,
            on_kill: None,
            scope: None,
        })
    }

    /// The output pipe itself, for callers that wait on it with `poll` (piped children
    /// only; `None` with a PTY or once taken).
    pub fn take_output_pipe(&mut self) -> Option<std::io::PipeReader> {
        self.pipe.take()
    }

    /// The scope of a contained child.
    pub fn scope(&self) -> Option<&Scope> {
        self.scope.as_ref()
    }

    /// Run `f` after the local group is killed (remote cleanup for client processes).
    pub fn on_kill(mut self, f: impl FnMut() + Send + 'static) -> Self {
        self.on_kill = Some(Box::new(f));
        self
    }

    /// The process group id, only while it is provably ours: the leader is our child
    /// and not yet reaped, so its pid (and the group id) cannot have been reused. Never
    /// 0 or 1 (`kill(-1)` would signal every process).
    fn owned_pgid(&self) -> Option<Pid> {
        self.pgid
            .filter(|pgid| pgid.as_raw_nonzero().get() > 1 && self.exit.is_none())
    }

    fn wait_members_gone(pgid: Pid, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if !group_has_live_members(pgid) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl RunningCommand for LocalChild {
    fn take_output(&mut self) -> Option<Box<dyn Read + Send>> {
        match self.pipe.take() {
            Some(pipe) => Some(Box::new(pipe)),
            None => self.output.take(),
        }
    }

    fn take_stdin(&mut self) -> Option<Box<dyn Write + Send>> {
        self.stdin.take()
    }

    fn try_wait(&mut self) -> std::io::Result<Option<i32>> {
        if self.exit.is_none()
            && let Some(status) = self.child.try_wait()?
        {
            self.exit = Some(exit_code(status));
        }
        Ok(self.exit)
    }

    fn wait(&mut self) -> std::io::Result<i32> {
        if let Some(code) = self.exit {
            return Ok(code);
        }
        let code = exit_code(self.child.wait()?);
        self.exit = Some(code);
        Ok(code)
    }

    fn kill(&mut self) {
        if let Some(on_kill) = &mut self.on_kill {
            on_kill();
        }
        // Signal the group only while the leader is unreaped (see `owned_pgid`); the
        // leader is reaped last, after the whole group is gone.
        if let Some(pgid) = self.owned_pgid() {
            let _ = rustix::process::kill_process_group(pgid, Signal::TERM);
            if !Self::wait_members_gone(pgid, Duration::from_secs(1)) {
                let _ = rustix::process::kill_process_group(pgid, Signal::KILL);
                Self::wait_members_gone(pgid, Duration::from_secs(2));
            }
        }
        if self.exit.is_none() {
            let _ = self.child.kill();
            if let Ok(status) = self.child.wait() {
                self.exit = Some(exit_code(status));
            }
        }
        // What left the group (setsid, daemons) ends too.
        if let Some(scope) = &mut self.scope {
            scope.end();
        }
    }

    fn pid(&self) -> Option<u32> {
        Some(self.child.id())
    }
}

impl Drop for LocalChild {
    fn drop(&mut self) {
        // Never leave a zombie or a running group behind.
        if self.exit.is_none() {
            match self.child.try_wait() {
                Ok(Some(_)) => {}
                _ => self.kill(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_has_live_members_until_it_is_killed_and_reaped() {
        let mut child = Command::new("sleep")
            .arg("300")
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = Pid::from_raw(child.id() as i32).unwrap();
        assert!(group_has_live_members(pgid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!group_has_live_members(pgid));
    }
}
