//! The persistent shell's guarantees on the backends whose shell runs elsewhere — a
//! container through podman's Docker-compatible API, a host over ssh — with the checks
//! and the table of wreckers of `persistent_tests`, plus what is particular to them:
//! the ssh shell sees the same login environment as one session per command, a shell
//! whose connection is lost is replaced without a wrong result, and the driver ends a
//! command's leftovers (`setsid` included) before it reports the command's end.
//!
//! They need `.ci/setup-terminal.sh`'s services (podman's socket, the test sshd), found
//! by `ci_services`; run without them (`--include-ignored`), they fail saying what is
//! missing.

use std::sync::Arc;
use std::time::Duration;

use super::ci_services;
use super::docker::DockerEnvironment;
use super::persistent_tests::{self as checks, Task, eventually, marked, run, running, task, text};
use super::remote_shell_tests::remote_like;
use super::settings::{DockerSettings, SshSettings};
use super::ssh::SshEnvironment;
use super::{Environment, ExecRequest};

/// The value of a service, or a failure naming what is missing.
fn require<T>(service: Option<T>, what: &str) -> T {
    match service {
        Some(value) => value,
        None => panic!(
            "this test needs {what}, which is not available here (.ci/setup-terminal.sh \
             sets it up; run without --include-ignored to leave such tests out)"
        ),
    }
}

fn docker_settings() -> DockerSettings {
    DockerSettings {
        memory_mb: 512,
        network: false,
        ..require(ci_services::docker(), "podman's Docker-compatible service")
    }
}

/// A session in a new container (removed when the task is dropped).
fn docker(_dir: &std::path::Path, persistent: bool) -> Task {
    let backend: Arc<dyn Environment> =
        Arc::new(DockerEnvironment::new(&docker_settings(), "persistent-test", None).unwrap());
    task(backend, None, persistent)
}

fn ssh_settings() -> SshSettings {
    require(ci_services::ssh(), "the test sshd (TOOLHOST_TEST_SSH_*)")
}

/// A session on the test sshd working in `dir` (the remote is this host).
fn ssh(dir: &std::path::Path, persistent: bool) -> Task {
    let backend: Arc<dyn Environment> = Arc::new(SshEnvironment::new(&ssh_settings()).unwrap());
    task(backend, Some(dir), persistent)
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_wreckers_give_one_shot_results_and_leave_the_session_intact() {
    // podman delivers an exec's stdout and stderr on two channels: one exec per
    // command may get stderr after stdout, even after the cwd report, which cuts it
    // off. The persistent shell merges the two in the container, in order.
    checks::wreckers_match_one_shot(&docker, &[], true);
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn ssh_wreckers_give_one_shot_results_and_leave_the_session_intact() {
    // The remote is this host: the oracle is one bash per command here, with the ssh
    // backend's wrapper. One ssh session per command is not one: it stays open while a
    // background job holds its output (the call runs into its timeout), and each
    // session runs the remote's startup files, whose stderr (pyenv, racing with other
    // sessions) lands in the output. A shell killed by a signal is exit 255 through
    // ssh, as with one session per command.
    checks::wreckers_match(
        &ssh,
        &remote_like,
        &[
            ("kill -9 $$", 255, ""),
            ("kill -TERM 0; echo after", 255, ""),
        ],
        false,
    );
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_timeout_kills_the_commands_tree_and_nothing_else() {
    checks::timeout_kills_the_tree_only(&docker);
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn ssh_timeout_kills_the_commands_tree_and_nothing_else() {
    checks::timeout_kills_the_tree_only(&ssh);
}

/// The driver ends what a command left behind — in its group or out of it — before
/// it reports the command's end; the shell stays.
fn leftovers_end_with_the_command(make: &dyn Fn(&std::path::Path, bool) -> Task) {
    let dir = tempfile::tempdir().unwrap();
    let env = make(dir.path(), true);
    let tag = 800_000 + std::process::id() % 99_991;
    let out = run(
        &env,
        &format!("sleep {tag}1 & setsid sleep {tag}2 & (sleep {tag}3 &); echo left"),
    );
    assert_eq!(text(&out), "left");
    for n in 1..=3 {
        assert!(
            eventually(|| running(&format!("sleep {tag}{n}")) == 0),
            "sleep {tag}{n} survived its command"
        );
    }
    let mark = env.persistent_shell_mark().expect("a persistent shell");
    assert!(
        eventually(|| marked(&mark) == 1),
        "only the driver carries the mark"
    );
    assert_eq!(text(&run(&env, "echo still")), "still");
    assert_eq!(env.persistent_shells_started(), 1);
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_leftovers_end_with_the_command() {
    leftovers_end_with_the_command(&docker);
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn ssh_leftovers_end_with_the_command() {
    leftovers_end_with_the_command(&ssh);
}

/// The shell's connection is cut between commands (its driver killed from outside):
/// the next command still gets its own, right result from a new shell.
fn a_lost_shell_costs_a_new_one(make: &dyn Fn(&std::path::Path, bool) -> Task) {
    let dir = tempfile::tempdir().unwrap();
    let env = make(dir.path(), true);
    assert_eq!(run(&env, "export KEEP_ME=kept").exit_code, 0);
    let mark = env.persistent_shell_mark().expect("a persistent shell");
    let killer = std::process::Command::new("sh")
        .arg("-c")
        .arg(super::remote_script::kill_script(&mark, None, 0))
        .status()
        .unwrap();
    assert!(killer.success());
    assert!(eventually(|| marked(&mark) == 0), "the shell survived");
    for _ in 0..3 {
        let out = run(&env, checks::CHECK);
        assert_eq!(out.exit_code, 0, "{}", out.output.text);
        assert!(text(&out).contains("next:kept:"), "{}", out.output.text);
    }
    assert!(env.persistent_shells_started() <= 2);
    assert_ne!(env.persistent_shell_mark(), Some(mark));
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_a_lost_shell_costs_a_new_one() {
    a_lost_shell_costs_a_new_one(&docker);
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn ssh_a_lost_shell_costs_a_new_one() {
    a_lost_shell_costs_a_new_one(&ssh);
}

/// The exported environment, sorted, without `_` (the last command run, which differs
/// between any two shells) and the persistent shell's mark.
const ENV_DUMP: &str = "env | grep -v -e '^_=' -e '^TOOLHOST_SCOPE=' | sort";

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh)"]
fn ssh_commands_see_the_login_environment_of_one_session_per_command() {
    let dir = tempfile::tempdir().unwrap();
    // One connection for both, so `SSH_CLIENT` names the same client port.
    let backend: Arc<dyn Environment> = Arc::new(SshEnvironment::new(&ssh_settings()).unwrap());
    let persistent = task(Arc::clone(&backend), Some(dir.path()), true);
    let one_shot = task(backend, Some(dir.path()), false);
    let a = run(&persistent, ENV_DUMP);
    let b = run(&one_shot, ENV_DUMP);
    assert!(persistent.persistent_shell_mark().is_some());
    assert_eq!(one_shot.persistent_shells_started(), 0);
    assert_eq!(text(&a), text(&b));
    assert!(text(&a).contains("HOME="), "{}", text(&a));
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh)"]
fn docker_a_cancelled_command_is_interrupted_and_the_shell_stays() {
    let dir = tempfile::tempdir().unwrap();
    let env = docker(dir.path(), true);
    assert_eq!(text(&run(&env, "echo warm")), "warm");
    let cancel = tokio_util::sync::CancellationToken::new();
    let trigger = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        trigger.cancel();
    });
    let out = env
        .execute(&ExecRequest {
            command: "echo go; sleep 50".into(),
            workdir: None,
            timeout: Duration::from_secs(30),
            cancel: Some(cancel),
            max_output: 50_000,
            spill: None,
            approved: false,
        })
        .unwrap();
    canceller.join().unwrap();
    assert!(out.interrupted);
    assert_eq!(out.exit_code, 130);
    assert_eq!(text(&run(&env, "echo still")), "still");
    assert_eq!(env.persistent_shells_started(), 1);
}

#[test]
#[ignore = "needs podman (.ci/setup-terminal.sh); soak: 10,000 commands"]
fn docker_soak_leaks_nothing() {
    checks::soak(&docker);
}

#[test]
#[ignore = "needs the test sshd (.ci/setup-terminal.sh); soak: 10,000 commands"]
fn ssh_soak_leaks_nothing() {
    checks::soak(&ssh);
}
