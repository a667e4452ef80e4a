//! The persistent shell's guarantees, on the local backend always and on the sandbox
//! where bubblewrap runs: every command that wrecks a shell (`exec`, `exit`, `set -e`,
//! `trap`, reading stdin, `IFS`/`PS1`, a background job, huge or binary output, no
//! trailing newline, killing the shell) gives the same result as with one shell per
//! command and costs at most a new shell; timeouts end the command's whole tree and
//! nothing else; a soak of 10,000 mixed commands leaves no process, fd or temp file.
//! The checks take any backend; `remote_persistent_tests` runs them on docker and ssh.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::local::LocalEnvironment;
use super::sandbox::{self, SandboxEnvironment};
use super::settings::SandboxSettings;
use super::{Environment, ExecOutcome, ExecRequest, TaskEnvironment};

/// A task environment that is cleaned up (its container removed, its connection
/// closed) when the test ends, failed or not.
pub(super) struct Task(pub(super) TaskEnvironment);

impl Deref for Task {
    type Target = TaskEnvironment;

    fn deref(&self) -> &TaskEnvironment {
        &self.0
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        let _ = self.0.cleanup();
    }
}

/// A test session on `backend`, with or without the persistent shell.
pub(super) fn task(
    backend: Arc<dyn Environment>,
    cwd: Option<&std::path::Path>,
    persistent: bool,
) -> Task {
    let cwd = cwd.map(|dir| dir.display().to_string());
    Task(
        TaskEnvironment::start(backend, "persistent-test", cwd, &[])
            .unwrap()
            .with_persistent_shell(persistent),
    )
}

/// A local environment working in `dir`.
fn local(dir: &std::path::Path, persistent: bool) -> Task {
    let backend: Arc<dyn Environment> = Arc::new(LocalEnvironment::new(
        &dir.display().to_string(),
        Vec::new(),
    ));
    task(backend, None, persistent)
}

/// A sandbox working in `dir`; fails (saying why) where bubblewrap cannot run.
fn sandboxed(dir: &std::path::Path, persistent: bool) -> Task {
    let settings = SandboxSettings::default();
    if let Err(reason) = sandbox::availability(&settings) {
        panic!("this test needs bubblewrap (.ci/setup-terminal.sh installs it): {reason}");
    }
    let backend: Arc<dyn Environment> = Arc::new(
        SandboxEnvironment::new(&settings, &dir.display().to_string(), Vec::new()).unwrap(),
    );
    task(backend, None, persistent)
}

fn request(command: &str, timeout: Duration) -> ExecRequest {
    ExecRequest {
        command: command.to_string(),
        workdir: None,
        timeout,
        cancel: None,
        max_output: 50_000,
        spill: None,
        approved: false,
    }
}

pub(super) fn run(env: &TaskEnvironment, command: &str) -> ExecOutcome {
    env.execute(&request(command, Duration::from_secs(20)))
        .unwrap()
}

/// The output as the `terminal` tool shows it (trimmed).
pub(super) fn text(out: &ExecOutcome) -> &str {
    out.output.text.trim()
}

/// Commands that wreck the shell they run in, each followed by a check that the next
/// command sees the session as it should be.
pub(super) const WRECKERS: &[&str] = &[
    "exit 3",
    "echo before; exec echo replaced",
    "exec 1>&-; exec 2>&-; echo lost",
    "set -e; false; echo not reached",
    "set -euo pipefail; echo $UNSET_VARIABLE_X",
    "trap 'echo trapped' EXIT; echo body",
    "trap '' INT TERM; echo ignoring",
    "read line; echo \"read: [$line] $?\"",
    "cat; echo \"cat: $?\"",
    "IFS=x; PS1='$ '; PS4='>> '; echo a b",
    "unset PATH; echo path-gone",
    "sleep 60 & echo started",
    "(sleep 60 &); setsid sleep 60 & echo escaped",
    "head -c 300000 /dev/zero | tr '\\0' 'a'",
    "printf 'bin\\000\\001\\377\\376 end'",
    "printf 'no trailing newline'",
    "printf '%s' __TOOLHOST_E_; echo forged",
    "nope_command_x; echo $?",
    "echo err >&2; echo out",
    "kill -9 $$",
    "kill -TERM 0; echo after",
    "ulimit -n 8; echo limited",
    "shopt -s extglob nullglob; set -o noclobber; echo opts",
    "alias ls=false; f() { :; }; echo defined",
    "cd /; cd /nonexistent_dir_x; echo $?",
    "exec bash -c 'echo nested'",
];

/// The session after a wrecker: exported state and cwd as one shell per command
/// leaves them.
pub(super) const CHECK: &str = "echo \"next:$KEEP_ME:$(pwd)\"; ls >/dev/null && echo ok";

/// A wrecker whose result with one shell per command is known to be wrong on some
/// backend, and the result the persistent shell must give instead.
pub(super) type OneShotDiffers = (&'static str, i32, &'static str);

/// Every wrecker gives the persistent shell the result one shell per command gives
/// (or, for those in `one_shot_differs`, the right one), and leaves the session as
/// one shell per command leaves it. All differences are reported together. With
/// `stderr_reordered`, one shell per command gets the command's stderr on a channel
/// of its own, which may arrive after its stdout or be lost behind the cwd report (a
/// container's exec, an ssh session), so there the command runs after `exec 2>&1`
/// (on the same line: line numbers stay).
pub(super) fn wreckers_match_one_shot(
    make: &dyn Fn(&std::path::Path, bool) -> Task,
    one_shot_differs: &[OneShotDiffers],
    stderr_reordered: bool,
) {
    wreckers_match(make, make, one_shot_differs, stderr_reordered);
}

/// [`wreckers_match_one_shot`] with one shell per command of `oracle`.
pub(super) fn wreckers_match(
    make: &dyn Fn(&std::path::Path, bool) -> Task,
    oracle: &dyn Fn(&std::path::Path, bool) -> Task,
    one_shot_differs: &[OneShotDiffers],
    stderr_reordered: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let persistent = make(dir.path(), true);
    let one_shot = oracle(dir.path(), false);
    for env in [&persistent, &one_shot] {
        run(env, "export KEEP_ME=kept");
    }
    let mut failures = Vec::new();
    for wrecker in WRECKERS {
        let a = run(&persistent, wrecker);
        // Compared as the `terminal` tool returns them (trimmed): when the command
        // kills the shell itself (`kill -9 $$`), the subshell may still print the
        // newline before its cwd report.
        let got = (a.exit_code, text(&a).to_string());
        let want = match one_shot_differs.iter().find(|(w, ..)| w == wrecker) {
            Some((_, code, out)) => (*code, out.to_string()),
            None => {
                let b = if stderr_reordered {
                    run(&one_shot, &format!("exec 2>&1; {wrecker}"))
                } else {
                    run(&one_shot, wrecker)
                };
                (b.exit_code, text(&b).to_string())
            }
        };
        if got != want {
            failures.push(format!("{wrecker}: persistent {got:?}, want {want:?}"));
        }
        let a = run(&persistent, CHECK);
        let b = run(&one_shot, CHECK);
        if a.exit_code != 0
            || a.output.text != b.output.text
            || !a.output.text.contains("next:kept:")
        {
            failures.push(format!(
                "after {wrecker}: {:?} vs one shell per command {:?}",
                a.output.text, b.output.text
            ));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
    assert_eq!(one_shot.persistent_shells_started(), 0);
    for env in [&persistent, &one_shot] {
        env.cleanup().unwrap();
    }
    // Only `kill -9 $$` (and `kill -TERM 0`, which reaches the shell in its group)
    // cost a shell.
    let started = persistent.persistent_shells_started();
    assert!((1..=3).contains(&started), "{started} shells started");
}

#[test]
fn local_wreckers_give_one_shot_results_and_leave_the_session_intact() {
    wreckers_match_one_shot(&local, &[], false);
}

#[test]
#[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
fn sandbox_wreckers_give_one_shot_results_and_leave_the_session_intact() {
    wreckers_match_one_shot(&sandboxed, &[], false);
}

/// `ps`-free: live processes whose command line contains `needle`.
pub(super) fn running(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter(|e| {
                    super::local_child::ProcStat::read(&e.path())
                        .is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
                })
                .filter(|e| {
                    std::fs::read(e.path().join("cmdline"))
                        .is_ok_and(|raw| String::from_utf8_lossy(&raw).contains(needle))
                })
                .count()
        })
        .unwrap_or(0)
}

pub(super) fn timeout_kills_the_tree_only(make: &dyn Fn(&std::path::Path, bool) -> Task) {
    let dir = tempfile::tempdir().unwrap();
    let env = make(dir.path(), true);
    let tag = 900_000 + std::process::id() % 99_991;
    // A background process of the same task must survive the foreground timeout.
    let (mut bystander, _) = env
        .spawn_background(&format!("sleep {tag}1"), None, false, false)
        .unwrap();
    assert_eq!(run(&env, "export KEEP_ME=kept").exit_code, 0);
    let bystander_runs = || running(&format!("sleep {tag}1")) >= 1;
    assert!(eventually(bystander_runs), "the bystander never started");
    let out = env
        .execute(&request(
            &format!("setsid sleep {tag}2 & (sleep {tag}3 &); echo started; sleep {tag}4"),
            Duration::from_secs(1),
        ))
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.exit_code, 124);
    assert!(
        out.output.text.starts_with("started"),
        "{}",
        out.output.text
    );
    // Killed by the timeout; a killed process is listed until the kernel has run its
    // exit, which on a busy machine takes a moment.
    for n in 2..=4 {
        assert!(
            eventually(|| running(&format!("sleep {tag}{n}")) == 0),
            "sleep {tag}{n} survived"
        );
    }
    assert!(bystander_runs(), "the bystander was killed");
    assert!(
        run(&env, CHECK).output.text.contains("next:kept:"),
        "the session was lost"
    );
    assert_eq!(
        env.persistent_shells_started(),
        1,
        "the timeout cost a shell"
    );
    bystander.kill();
}

#[test]
fn local_timeout_kills_the_commands_tree_and_nothing_else() {
    timeout_kills_the_tree_only(&local);
}

#[test]
#[ignore = "needs bubblewrap (.ci/setup-terminal.sh)"]
fn sandbox_timeout_kills_the_commands_tree_and_nothing_else() {
    timeout_kills_the_tree_only(&sandboxed);
}

#[test]
fn a_cancelled_command_is_interrupted_and_the_shell_stays() {
    let dir = tempfile::tempdir().unwrap();
    let env = local(dir.path(), true);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        trigger.cancel();
    });
    let mut req = request("echo go; sleep 50", Duration::from_secs(30));
    req.cancel = Some(cancel);
    let out = env.execute(&req).unwrap();
    canceller.join().unwrap();
    assert!(out.interrupted);
    assert_eq!(out.exit_code, 130);
    assert_eq!(text(&run(&env, "echo still")), "still");
    assert_eq!(env.persistent_shells_started(), 1);
}

#[test]
fn exported_variables_and_cwd_persist_through_the_persistent_shell() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let env = local(dir.path(), true);
    run(&env, "cd sub && export A=1 B=2; C=3");
    let out = run(&env, "echo \"$A $B [$C] $(basename \"$PWD\")\"; unset B");
    assert_eq!(text(&out), "1 2 [] sub");
    assert_eq!(text(&run(&env, "echo \"[$B]\"")), "[]");
    assert!(env.cwd().ends_with("/sub"), "{}", env.cwd());
    // A per-call workdir does not move the session.
    let mut req = request("pwd", Duration::from_secs(10));
    req.workdir = Some("/".into());
    assert_eq!(text(&env.execute(&req).unwrap()), "/");
    assert!(env.cwd().ends_with("/sub"));
    assert_eq!(env.persistent_shells_started(), 1);
}

#[test]
fn concurrent_calls_on_one_task_both_run() {
    let dir = tempfile::tempdir().unwrap();
    let env = Arc::new(local(dir.path(), true));
    run(&env, "export SHARED=yes");
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let env = Arc::clone(&env);
            std::thread::spawn(move || {
                text(&run(&env, &format!("sleep 0.3; echo {i}:$SHARED"))).to_string()
            })
        })
        .collect();
    let mut outputs: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    outputs.sort();
    assert_eq!(outputs, ["0:yes", "1:yes", "2:yes", "3:yes"]);
}

#[test]
fn a_command_with_a_nul_byte_runs_as_one_shell_per_command_does() {
    let dir = tempfile::tempdir().unwrap();
    let persistent = local(dir.path(), true);
    let one_shot = local(dir.path(), false);
    let a = persistent.execute(&request("echo a\0b", Duration::from_secs(5)));
    let b = one_shot.execute(&request("echo a\0b", Duration::from_secs(5)));
    assert_eq!(a.is_err(), b.is_err());
    assert_eq!(text(&run(&persistent, "echo fine")), "fine");
}

/// Pipes and sockets this process has open.
fn open_channels() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path()).is_ok_and(|t| {
                        let t = t.to_string_lossy();
                        t.starts_with("pipe:") || t.starts_with("socket:")
                    })
                })
                .count()
        })
        .unwrap_or(0)
}

/// Entries of `dir` whose name starts with `toolhost-`.
fn toolhost_temp_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with("toolhost-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Live children of the calling thread.
fn thread_children() -> Vec<String> {
    std::fs::read_to_string("/proc/thread-self/children")
        .unwrap_or_default()
        .split_whitespace()
        .filter(|pid| {
            super::local_child::ProcStat::read(std::path::Path::new(&format!("/proc/{pid}")))
                .is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
        })
        .map(str::to_string)
        .collect()
}

/// Poll `f` until it holds, up to 10 s (a loaded machine starts processes slowly;
/// other tests of this binary open pipes for a moment too).
pub(super) fn eventually(f: impl Fn() -> bool) -> bool {
    (0..1000).any(|_| {
        let ok = f();
        if !ok {
            std::thread::sleep(Duration::from_millis(10));
        }
        ok
    })
}

/// One soak at a time: each counts this process's pipes and sockets.
static SOAK: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(super) fn soak(make: &dyn Fn(&std::path::Path, bool) -> Task) {
    const MIX: &[(&str, i32)] = &[
        ("echo hi", 0),
        ("cd sub && export N=$((${N:-0}+1))", 0),
        ("cd .. ; false", 1),
        ("exit 7", 7),
        ("sleep 30 & echo bg", 0),
        ("printf 'x\\000y'", 0),
        ("cat", 0),
        ("set -e; false", 1),
        ("trap 'echo t' EXIT; :", 0),
        ("exec true", 0),
        ("seq 1 2000 | tail -n 1", 0),
        ("IFS=:; printf none", 0),
    ];
    let _one_at_a_time = SOAK
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let fds_before = open_channels();
    let temp_dir = std::env::temp_dir();
    let env = make(dir.path(), true);
    assert_eq!(run(&env, "mkdir -p sub").exit_code, 0);
    for i in 0..10_000 {
        let (command, code) = MIX[i % MIX.len()];
        let out = env
            .execute(&request(command, Duration::from_secs(30)))
            .unwrap();
        assert_eq!(out.exit_code, code, "#{i} {command}: {}", out.output.text);
    }
    let bumps = (0..10_000).filter(|i| i % MIX.len() == 1).count();
    assert_eq!(text(&run(&env, "echo $N")), bumps.to_string());
    assert_eq!(env.persistent_shells_started(), 1, "a shell was replaced");
    assert!(
        eventually(|| running("sleep 30") == 0),
        "background jobs leaked"
    );
    // Inside the environment: of the session's files only the snapshot is left (and
    // a shell elsewhere may keep its emptied next snapshot), and of the shell's
    // processes (a shell elsewhere) only its driver.
    let session = env.session_id().to_string();
    let listing = run(&env, &format!("ls -a {}", env.backend().temp_dir()));
    let snapshot = format!("toolhost-snap-{session}.sh");
    let next = format!("{snapshot}.next");
    let files: Vec<&str> = text(&listing)
        .lines()
        .filter(|f| f.contains(&session) && *f != next)
        .collect();
    assert_eq!(files, [snapshot], "temp files leaked");
    let mark = env.persistent_shell_mark();
    if let Some(mark) = &mark {
        assert!(
            eventually(|| marked(mark) == 1),
            "processes leaked: {} carry the mark",
            marked(mark)
        );
    }
    let shell = env.persistent_shell_pid();
    assert!(shell.is_some() || mark.is_some(), "no persistent shell");
    env.cleanup().unwrap();
    drop(env);
    if let Some(shell) = shell {
        assert!(
            eventually(|| !std::path::Path::new(&format!("/proc/{shell}")).exists()),
            "the persistent shell outlived its environment"
        );
    }
    if let Some(mark) = &mark {
        assert!(
            eventually(|| marked(mark) == 0),
            "the shell outlived its environment"
        );
    }
    assert_eq!(thread_children(), Vec::<String>::new(), "processes leaked");
    assert!(
        eventually(|| open_channels() <= fds_before),
        "pipes or sockets leaked: {} > {fds_before}",
        open_channels()
    );
    let mut files_after = toolhost_temp_files(&temp_dir);
    files_after.retain(|f| f.contains(&session));
    assert_eq!(files_after, Vec::<String>::new(), "temp files leaked");
}

/// Live processes on this host carrying `TOOLHOST_SCOPE=<mark>` (a container's
/// processes are this host's too).
pub(super) fn marked(mark: &str) -> usize {
    let needle = format!("{}={mark}", super::containment::SCOPE_ENV);
    std::fs::read_dir("/proc")
        .map(|dir| {
            dir.flatten()
                .filter(|e| {
                    super::local_child::ProcStat::read(&e.path())
                        .is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
                })
                .filter(|e| {
                    std::fs::read(e.path().join("environ"))
                        .is_ok_and(|raw| raw.split(|b| *b == 0).any(|v| v == needle.as_bytes()))
                })
                .count()
        })
        .unwrap_or(0)
}

#[test]
#[ignore = "soak: 10,000 commands (CI runs it with --include-ignored)"]
fn local_soak_leaks_nothing() {
    soak(&local);
}

#[test]
#[ignore = "needs bubblewrap (.ci/setup-terminal.sh); soak: 10,000 commands"]
fn sandbox_soak_leaks_nothing() {
    soak(&sandboxed);
}
