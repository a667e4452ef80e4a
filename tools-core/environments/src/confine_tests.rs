//! Real bash through the confinement. Harmless even if confinement silently failed:
//! the canary is written in a temporary directory, `kill -0 -1` sends no signal, and
//! `reboot` is called with an invalid magic number.
use super::*;
use std::process::Command;

fn confined_bash(script: &str, writable: &WritableRoots) -> std::process::Output {
    let confinement = Arc::new(Confinement::prepare(writable).unwrap());
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script);
    attach(&mut cmd, Some(confinement));
    cmd.output().unwrap()
}

fn landlock_available() -> bool {
    crate::floor_probe::landlock_abi() >= 1
}

#[test]
fn writes_outside_the_writable_roots_fail_and_inside_succeed() {
    if !landlock_available() {
        eprintln!("kernel without Landlock: nothing to test");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let protected = tempfile::tempdir().unwrap();
    let canary = protected.path().join("canary");
    let ok = work.path().join("ok");
    let writable = WritableRoots {
        roots: vec![work.path().to_path_buf()],
        protected: Vec::new(),
    };
    let out = confined_bash(
        &format!(
            "echo x > '{}'; echo $? ; echo y > '{}' && echo wrote; echo z > /dev/null && echo devnull",
            canary.display(),
            ok.display()
        ),
        &writable,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!canary.exists(), "canary written: {stdout}");
    assert!(
        ok.exists(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("wrote") && stdout.contains("devnull"),
        "{stdout}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
        "{out:?}"
    );
}

#[test]
fn a_workspace_in_the_home_is_writable_except_the_protected_entries() {
    if !landlock_available() {
        eprintln!("kernel without Landlock: nothing to test");
        return;
    }
    let home = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
    std::fs::create_dir(home.path().join("src")).unwrap();
    let config = home.path().join(".config");
    let toolhost = config.join("toolhost");
    std::fs::create_dir_all(&toolhost).unwrap();
    std::fs::write(toolhost.join("config.toml"), "mode = \"manual\"\n").unwrap();
    let writable = WritableRoots::for_mode(
        ConfineMode::Floor,
        home.path(),
        Some(home.path()),
        &toolhost,
        &[],
    );
    let out = confined_bash(
        &format!(
            "cd '{}' && printf 'mode = \"off\"\\n' > config.toml; echo ok > '{}/src/notes'",
            toolhost.display(),
            home.path().display()
        ),
        &writable,
    );
    assert_eq!(
        std::fs::read_to_string(toolhost.join("config.toml")).unwrap(),
        "mode = \"manual\"\n",
        "{out:?}"
    );
    assert!(home.path().join("src/notes").exists(), "{out:?}");
}

#[test]
fn the_local_backend_confines_its_commands_as_configured() {
    use crate::local::LocalEnvironment;
    use crate::{Environment, SpawnRequest, StdinMode};
    if !landlock_available() {
        eprintln!("kernel without Landlock: nothing to test");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let toolhost = tempfile::tempdir().unwrap();
    let config = toolhost.path().join("config.toml");
    std::fs::write(&config, "[approvals]\nmode = \"manual\"\n").unwrap();
    let settings = LocalSettings {
        confine: ConfineMode::Workspace,
        writable: Vec::new(),
    };
    let env = LocalEnvironment::new(&work.path().display().to_string(), Vec::new())
        .confined(&settings, toolhost.path());
    let script = format!(
        "cd '{}' && printf '[approvals]\\nmode = \"off\"\\n' > config.toml; echo done > '{}/f'",
        toolhost.path().display(),
        work.path().display()
    );
    let mut child = env
        .spawn(SpawnRequest {
            script,
            login: false,
            stdin: StdinMode::Null,
            pty: false,
            pid_file: None,
            approved: false,
        })
        .unwrap();
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "[approvals]\nmode = \"manual\"\n"
    );
    assert!(work.path().join("f").exists());
}

#[test]
fn kill_of_every_process_and_reboot_are_denied() {
    let work = tempfile::tempdir().unwrap();
    let writable = WritableRoots {
        roots: vec![work.path().to_path_buf()],
        protected: Vec::new(),
    };
    // Signal 0 checks permission only; nothing is delivered.
    let out = confined_bash("kill -0 -1; echo rc=$?", &writable);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("rc=1"), "{text}");
    assert!(text.contains("Operation not permitted"), "{text}");
    // reboot with invalid magic numbers: EINVAL unconfined, EPERM confined.
    let script = format!(
        "python3 -c 'import ctypes, os; l = ctypes.CDLL(None, use_errno=True); \
         l.syscall({}, 0, 0, 0, 0); print(\"errno\", ctypes.get_errno())'",
        libc::SYS_reboot
    );
    let out = confined_bash(&script, &writable);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("errno {}", libc::EPERM)),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
