//! The child process of a stdio MCP server.
//!
//! - Environment: only a whitelist of the parent's variables (locale, paths, user, temp
//!   and XDG dirs, the Windows location variables) plus the server's own `env` — API keys
//!   in toolhost's environment never leak to third-party servers.
//! - stderr is piped into a bounded [`StderrRing`] (and logged at debug level), never
//!   inherited: a server's logs must not scribble over a terminal UI.
//! - Each server runs in its own process group, so shutdown reaches the grandchildren
//!   that `npx`/`uvx`/shell wrappers start.
//! - Shutdown: close stdin (done by the caller, who owns the transport) → wait → SIGTERM
//!   to the group → wait → SIGKILL to the group. Dropping a [`StdioProcess`] that was
//!   not shut down kills the group at once. The group is signalled only while it has a
//!   live member, so a group id freed and reused by someone else is never hit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use super::error::McpError;
use super::stderr_ring::StderrRing;

/// Parent variables every stdio server receives (Hermes' list, plus `LOGNAME` and the
/// Windows profile variables).
pub const ENV_WHITELIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LC_ALL",
    "TERM",
    "SHELL",
    "TMPDIR",
    // Windows location variables.
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "TEMP",
    "TMP",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
];

/// Prefixes of parent variables every stdio server receives.
pub const ENV_WHITELIST_PREFIXES: &[&str] = &["XDG_", "LC_"];

/// Counts how deeply toolhost instances are nested through stdio MCP servers (toolhost
/// configured as an MCP server of itself); discovery stops past [`MAX_DEPTH`].
pub const DEPTH_VAR: &str = "TOOLHOST_MCP_DEPTH";
/// Deepest nesting at which MCP servers are still started.
pub const MAX_DEPTH: u32 = 3;

/// This process's nesting depth.
pub fn current_depth() -> u32 {
    std::env::var(DEPTH_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Grace period between the shutdown steps.
pub const SHUTDOWN_STEP: Duration = Duration::from_secs(2);

/// The environment a stdio server starts with.
pub fn child_env(
    parent: impl IntoIterator<Item = (String, String)>,
    own: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = parent
        .into_iter()
        .filter(|(name, _)| {
            let upper = name.to_ascii_uppercase();
            ENV_WHITELIST.contains(&upper.as_str())
                || ENV_WHITELIST_PREFIXES.iter().any(|p| upper.starts_with(p))
        })
        .collect();
    env.insert(DEPTH_VAR.to_string(), (current_depth() + 1).to_string());
    env.extend(own.iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

/// A running stdio server process.
#[derive(Debug)]
pub struct StdioProcess {
    server: String,
    pid: u32,
    exited: watch::Receiver<Option<ExitStatus>>,
    stderr_closed: watch::Receiver<bool>,
    stderr: StderrRing,
    finished: bool,
}

/// What `spawn` hands back: the process and its stdio pipes.
pub type Spawned = (StdioProcess, ChildStdout, ChildStdin);

/// Start `command` for `server`. Must be called inside a tokio runtime (the one that
/// will drive the connection).
// An MCP server the user configured (`[mcp_servers]`), not model code.
#[allow(clippy::disallowed_methods)]
pub fn spawn(
    server: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    stderr: StderrRing,
) -> Result<Spawned, McpError> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .env_clear()
        .envs(child_env(std::env::vars(), env))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|source| McpError::Spawn {
        server: server.to_string(),
        command: command.to_string(),
        cwd: cwd.map(PathBuf::from),
        source,
    })?;
    let pid = child.id().unwrap_or_default();
    live_groups::add(pid);
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(McpError::Spawn {
            server: server.to_string(),
            command: command.to_string(),
            cwd: cwd.map(PathBuf::from),
            source: std::io::Error::other("stdio pipes missing"),
        });
    };
    let (closed_tx, stderr_closed) = watch::channel(false);
    if let Some(pipe) = child.stderr.take() {
        let ring = stderr.clone();
        let name = server.to_string();
        tokio::spawn(async move {
            let mut reader = BufReader::new(pipe);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&buf);
                        let line = line.trim_end();
                        tracing::debug!(server = %name, "stderr: {}", super::secrets::redact(line));
                        ring.push(line);
                    }
                }
            }
            let _ = closed_tx.send(true);
        });
    } else {
        let _ = closed_tx.send(true);
    }
    let (tx, exited) = watch::channel(None);
    let name = server.to_string();
    tokio::spawn(async move {
        let status = child.wait().await;
        match &status {
            Ok(status) => tracing::debug!(server = %name, %status, "MCP server process exited"),
            Err(err) => {
                tracing::warn!(server = %name, %err, "waiting for MCP server process failed")
            }
        }
        let _ = tx.send(status.ok());
        // Keep the channel's value observable after this task ends.
        drop(tx);
    });
    Ok((
        StdioProcess {
            server: server.to_string(),
            pid,
            exited,
            stderr_closed,
            stderr,
            finished: false,
        },
        stdout,
        stdin,
    ))
}

impl StdioProcess {
    /// The process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The stderr tail.
    pub fn stderr(&self) -> &StderrRing {
        &self.stderr
    }

    /// The exit status, once the process has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        *self.exited.borrow()
    }

    /// Wait up to `limit` for the process to exit.
    async fn wait_exit(&mut self, limit: Duration) -> bool {
        let mut rx = self.exited.clone();
        tokio::time::timeout(limit, rx.wait_for(Option::is_some))
            .await
            .is_ok_and(|r| r.is_ok())
            || self.exit_status().is_some()
    }

    /// Wait up to `limit` for the process to exit and its stderr to be read to the end
    /// (so diagnostics include its last words).
    pub async fn settle(&self, limit: Duration) {
        let mut exited = self.exited.clone();
        let mut closed = self.stderr_closed.clone();
        let _ = tokio::time::timeout(limit, async {
            let _ = exited.wait_for(Option::is_some).await;
            let _ = closed.wait_for(|c| *c).await;
        })
        .await;
    }

    /// Stop the process: the caller has closed stdin already; wait `step`, SIGTERM the
    /// group, wait `step`, SIGKILL the group. Always ends with the group gone.
    pub async fn shutdown(mut self, step: Duration) {
        let mut how = "exited after stdin closed";
        if !self.wait_exit(step).await {
            how = "terminated";
            signal_group(self.pid, Signal::Term);
            if !self.wait_exit(step).await {
                how = "killed";
                signal_group(self.pid, Signal::Kill);
                self.wait_exit(step).await;
            }
        }
        // Grandchildren that outlived the leader share its group.
        signal_group(self.pid, Signal::Kill);
        live_groups::remove(self.pid);
        self.finished = true;
        tracing::debug!(server = %self.server, pid = self.pid, how, "MCP server stopped");
    }
}

impl Drop for StdioProcess {
    fn drop(&mut self) {
        if !self.finished {
            signal_group(self.pid, Signal::Kill);
            live_groups::remove(self.pid);
        }
    }
}

/// Stop every server process group this process started and has not stopped yet, at
/// once (SIGTERM, up to `grace` for the groups to go, then SIGKILL). For a process
/// about to exit on a signal (`signals.rs`): no connection is closed politely.
pub fn stop_every_group_now(grace: Duration) {
    let groups = live_groups::all();
    for &pgid in &groups {
        signal_group(pgid, Signal::Term);
    }
    let deadline = std::time::Instant::now() + grace;
    while std::time::Instant::now() < deadline && groups.iter().any(|&g| group_alive(g)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pgid in &groups {
        signal_group(pgid, Signal::Kill);
        live_groups::remove(pgid);
    }
}

/// The process groups of the servers started and not yet stopped.
mod live_groups {
    use std::collections::BTreeSet;
    use std::sync::{Mutex, PoisonError};

    static GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

    pub(super) fn add(pgid: u32) {
        if pgid > 1 {
            GROUPS
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(pgid);
        }
    }

    pub(super) fn remove(pgid: u32) {
        GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&pgid);
    }

    pub(super) fn all() -> Vec<u32> {
        GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect()
    }
}

#[cfg(unix)]
fn group_alive(pgid: u32) -> bool {
    i32::try_from(pgid)
        .ok()
        .filter(|&pgid| pgid > 1)
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(tools_core::environments::group_has_live_members)
}

#[cfg(not(unix))]
fn group_alive(_pgid: u32) -> bool {
    false
}

#[derive(Clone, Copy, Debug)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn signal_group(pgid: u32, signal: Signal) {
    let Some(pgid) = i32::try_from(pgid)
        .ok()
        .filter(|&pgid| pgid > 1)
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    // The group is the one this process created for the server (process_group(0)
    // makes pgid == pid). Its leader may be reaped already; only while the group still
    // has a live member can its id not have been reused by someone else's group.
    if !tools_core::environments::group_has_live_members(pgid) {
        return;
    }
    let signal = match signal {
        Signal::Term => rustix::process::Signal::TERM,
        Signal::Kill => rustix::process::Signal::KILL,
    };
    let _ = rustix::process::kill_process_group(pgid, signal);
}

#[cfg(not(unix))]
fn signal_group(_pgid: u32, _signal: Signal) {
    // Without process groups, `kill_on_drop` on the child is the fallback.
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_is_whitelisted() {
        let parent = [
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("XDG_CONFIG_HOME", "/c"),
            ("LC_CTYPE", "C.UTF-8"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("LD_PRELOAD", "/evil.so"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let own: BTreeMap<String, String> = [("TOKEN".to_string(), "t".to_string())]
            .into_iter()
            .collect();
        let env = child_env(parent, &own);
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            vec![
                "HOME",
                "LC_CTYPE",
                "PATH",
                "TOKEN",
                DEPTH_VAR,
                "XDG_CONFIG_HOME"
            ]
        );
    }

    #[test]
    fn own_env_overrides_parent() {
        let parent = [("PATH".to_string(), "/bin".to_string())];
        let own: BTreeMap<String, String> = [("PATH".to_string(), "/opt/bin".to_string())]
            .into_iter()
            .collect();
        assert_eq!(child_env(parent, &own)["PATH"], "/opt/bin");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn shutdown_kills_the_whole_group() {
        // A server that ignores stdin EOF and SIGTERM and has a grandchild.
        let ring = StderrRing::new();
        let script = "trap '' TERM; sleep 300 & echo started >&2; wait";
        let (process, _stdout, stdin) = spawn(
            "t",
            "sh",
            &["-c".to_string(), script.to_string()],
            &BTreeMap::new(),
            None,
            ring.clone(),
        )
        .unwrap();
        let pgid = process.pid();
        // Wait until the grandchild runs.
        for _ in 0..250 {
            if !ring.tail(1).is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(live_members(pgid).len(), 2, "leader and grandchild run");
        drop(stdin);
        process.shutdown(Duration::from_millis(200)).await;
        // Killed members may linger briefly as zombies until reaped by init.
        let mut left = live_members(pgid);
        for _ in 0..100 {
            if left.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            left = live_members(pgid);
        }
        assert!(
            left.is_empty(),
            "process group {pgid} survived shutdown: {left:?}"
        );
    }

    /// Non-zombie processes of group `pgid`, from /proc.
    fn live_members(pgid: u32) -> Vec<String> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid pgrp ...
            let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) else {
                continue;
            };
            let fields: Vec<&str> = after.split_whitespace().collect();
            if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
                out.push(stat);
            }
        }
        out
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stderr_is_captured() {
        let ring = StderrRing::new();
        let (process, _stdout, stdin) = spawn(
            "t",
            "sh",
            &[
                "-c".to_string(),
                "echo oops >&2; echo second >&2".to_string(),
            ],
            &BTreeMap::new(),
            None,
            ring.clone(),
        )
        .unwrap();
        drop(stdin);
        process.shutdown(Duration::from_secs(5)).await;
        for _ in 0..100 {
            if ring.tail(2).len() == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(ring.tail(5), vec!["oops", "second"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn missing_program_is_a_clear_error() {
        let err = spawn(
            "ghost",
            "/nonexistent/server",
            &[],
            &BTreeMap::new(),
            None,
            StderrRing::new(),
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("ghost") && text.contains("/nonexistent/server"),
            "{text}"
        );
    }
}
