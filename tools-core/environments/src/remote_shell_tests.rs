//! The remote shell's machinery without a remote: the docker/ssh driver
//! ([`super::remote_script`]) run by a local bash over plain pipes, behind a
//! [`RemoteShell`], with the kill scripts run by a local `sh` — so the marks, the
//! sweep after each command, the kill from outside and the in-shell snapshot rename
//! are checked on every test run, with the same wreckers and checks as the local
//! persistent shell (`persistent_tests`).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use super::containment::SCOPE_ENV;
use super::local::LocalEnvironment;
use super::persistent_tests::{self as checks, Task, marked, run, task, text};
use super::remote_shell::{RemoteShell, ShellTransport, SideRunner, new_mark};
use super::shell_connection::{ShellConnection, poll_read};
use super::{BackendKind, EnvError, Environment, RunningCommand, SpawnRequest, remote_script};

/// The driver as a local child over pipes.
struct PipeTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
}

impl ShellTransport for PipeTransport {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("closed"))?;
        stdin.write_all(bytes)?;
        stdin.flush()
    }

    fn recv(&mut self, buf: &mut [u8], timeout: Duration) -> std::io::Result<Option<usize>> {
        poll_read(&mut self.stdout, buf, timeout)
    }

    fn exit_code(&mut self) -> Option<i32> {
        let status = self.child.try_wait().ok().flatten()?;
        use std::os::unix::process::ExitStatusExt;
        Some(
            status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        )
    }

    fn local_pid(&self) -> Option<u32> {
        Some(self.child.id())
    }

    fn close(&mut self) {
        self.stdin = None;
        for _ in 0..100 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The local backend, with the remote shell in place of the local one (and one shell
/// per command as the remote backends run it).
#[derive(Debug)]
struct RemoteLike(LocalEnvironment);

impl Environment for RemoteLike {
    fn kind(&self) -> BackendKind {
        // A backend killed through pid files, as docker and ssh are: its one shell per
        // command records its process id first, as theirs does.
        BackendKind::Ssh
    }

    fn default_cwd(&self) -> String {
        self.0.default_cwd()
    }

    fn temp_dir(&self) -> String {
        self.0.temp_dir()
    }

    fn shell(&self) -> &str {
        "bash"
    }

    fn spawn(&self, request: SpawnRequest) -> Result<Box<dyn RunningCommand>, EnvError> {
        self.0.spawn(request)
    }

    fn open_shell(&self) -> Option<Result<Box<dyn ShellConnection>, EnvError>> {
        let mark = new_mark();
        // In a group of its own, like a remote shell: `kill 0` must not reach the tests.
        let spawned = Command::new("bash")
            .process_group(0)
            .arg("-c")
            .arg(remote_script::driver(&mark))
            .env(SCOPE_ENV, &mark)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(err) => return Some(Err(EnvError::io("driver", err))),
        };
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Some(Err(EnvError::io(
                "driver",
                std::io::Error::other("no pipes"),
            )));
        };
        let transport = PipeTransport {
            child,
            stdin: Some(stdin),
            stdout,
        };
        let side: SideRunner = Box::new(|script: &str| {
            Command::new("sh")
                .arg("-c")
                .arg(script)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
        Some(
            RemoteShell::open(Box::new(transport), side, mark)
                .map(|shell| Box::new(shell) as Box<dyn ShellConnection>)
                .map_err(|err| EnvError::io("driver", std::io::Error::other(err.to_string()))),
        )
    }
}

pub(super) fn remote_like(dir: &std::path::Path, persistent: bool) -> Task {
    let local = LocalEnvironment::new(&dir.display().to_string(), Vec::new());
    task(Arc::new(RemoteLike(local)), None, persistent)
}

#[test]
fn the_driver_gives_one_shot_results_for_every_wrecker() {
    checks::wreckers_match_one_shot(&remote_like, &[], false);
}

#[test]
fn the_driver_kills_a_timed_out_tree_from_outside_and_stays() {
    checks::timeout_kills_the_tree_only(&remote_like);
}

#[test]
fn the_driver_ends_leftovers_before_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let env = remote_like(dir.path(), true);
    let tag = 700_000 + std::process::id() % 99_991;
    let out = run(
        &env,
        &format!("sleep {tag}1 & setsid sleep {tag}2 & (sleep {tag}3 &); echo left"),
    );
    assert_eq!(text(&out), "left");
    // The driver answered once it had sent them SIGKILL; a killed process is still
    // listed until the kernel has run its exit, which on a busy machine takes a moment.
    for n in 1..=3 {
        assert!(
            checks::eventually(|| checks::running(&format!("sleep {tag}{n}")) == 0),
            "sleep {tag}{n} survived its command"
        );
    }
    let mark = env.persistent_shell_mark().expect("a remote-like shell");
    assert!(
        checks::eventually(|| marked(&mark) == 1),
        "only the driver carries the mark"
    );
    assert_eq!(text(&run(&env, "echo still")), "still");
    assert_eq!(env.persistent_shells_started(), 1);
}

#[test]
fn the_mark_stays_out_of_the_session_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let env = remote_like(dir.path(), true);
    assert_eq!(run(&env, "export KEPT=1").exit_code, 0);
    let snapshot = std::fs::read_to_string(format!(
        "{}/toolhost-snap-{}.sh",
        env.backend().temp_dir().trim_end_matches('/'),
        env.session_id()
    ))
    .unwrap();
    assert!(snapshot.contains("KEPT"), "{snapshot}");
    assert!(!snapshot.contains(SCOPE_ENV), "{snapshot}");
}

#[test]
fn a_killed_driver_costs_a_new_shell_and_no_wrong_result() {
    let dir = tempfile::tempdir().unwrap();
    let env = remote_like(dir.path(), true);
    assert_eq!(run(&env, "export KEEP_ME=kept").exit_code, 0);
    let mark = env.persistent_shell_mark().unwrap();
    let status = Command::new("sh")
        .arg("-c")
        .arg(remote_script::kill_script(&mark, None, 0))
        .status()
        .unwrap();
    assert!(status.success());
    for _ in 0..3 {
        let out = run(&env, checks::CHECK);
        assert_eq!(out.exit_code, 0, "{}", out.output.text);
        assert!(text(&out).contains("next:kept:"), "{}", out.output.text);
    }
    assert_eq!(env.persistent_shells_started(), 2);
    assert!(
        checks::eventually(|| marked(&mark) == 0),
        "the killed shell left processes"
    );
}
