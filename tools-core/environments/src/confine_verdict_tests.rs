//! The floor follows the verdict (`terminal.local.confine = "verdict"`): a command that
//! runs without a human's approval cannot write system directories; one a human approved
//! can, but still cannot create files under `/dev` or signal every process. Harmless even
//! if confinement silently failed: canaries are created in throwaway directories the test
//! removes, and `kill -0 -1` sends no signal.

use std::path::Path;

use super::confine::{ConfineMode, Confinement, LocalSettings, approved_from_settings};
use super::local::LocalEnvironment;
use super::{Environment, SpawnRequest, StdinMode};

#[allow(unsafe_code)]
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Run `script` in `env` (approved by a human or not); its merged output.
pub(crate) fn run(env: &LocalEnvironment, script: String, approved: bool) -> String {
    let mut child = env
        .spawn(SpawnRequest {
            script,
            stdin: StdinMode::Null,
            approved,
            ..SpawnRequest::default()
        })
        .unwrap();
    let mut out = String::new();
    if let Some(mut reader) = child.take_output() {
        std::io::Read::read_to_string(&mut reader, &mut out).unwrap();
    }
    child.wait().unwrap();
    out
}

#[test]
fn approved_commands_share_the_floor_except_in_verdict_mode() {
    let off = LocalSettings {
        confine: ConfineMode::Off,
        writable: Vec::new(),
    };
    assert!(approved_from_settings(&off, None).is_none());
    let work = tempfile::tempdir().unwrap();
    let roots = super::confine::WritableRoots {
        roots: vec![work.path().to_path_buf()],
        protected: Vec::new(),
    };
    let floor = std::sync::Arc::new(Confinement::prepare(&roots).unwrap());
    for mode in [ConfineMode::Floor, ConfineMode::Workspace] {
        let settings = LocalSettings {
            confine: mode,
            writable: Vec::new(),
        };
        let approved = approved_from_settings(&settings, Some(&floor)).unwrap();
        assert!(std::sync::Arc::ptr_eq(&approved, &floor), "{mode:?}");
    }
    assert_eq!(LocalSettings::default().confine, ConfineMode::Verdict);
}

#[test]
fn without_root_approved_commands_run_unconfined() {
    if is_root() {
        assert!(Confinement::prepare_devices_only().unwrap().is_some());
    } else {
        assert!(Confinement::prepare_devices_only().unwrap().is_none());
    }
}

#[test]
fn system_directories_are_writable_only_after_a_human_approved() {
    if !is_root() {
        // Only root can write /var/lib at all; the unprivileged case is covered above.
        assert!(Confinement::prepare_devices_only().unwrap().is_none());
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let system = tempfile::tempdir_in("/var/lib").unwrap();
    let toolhost = tempfile::tempdir().unwrap();
    let settings = LocalSettings {
        confine: ConfineMode::Verdict,
        writable: Vec::new(),
    };
    let env = LocalEnvironment::new(&work.path().display().to_string(), Vec::new())
        .confined(&settings, toolhost.path());
    let canary = system.path().join("canary");
    let script = format!("echo x > '{}'; echo rc=$?", canary.display());
    let out = run(&env, script.clone(), false);
    assert!(
        !canary.exists(),
        "unapproved command wrote {canary:?}: {out}"
    );
    assert!(out.contains("rc=1"), "{out}");
    let out = run(&env, script, true);
    assert!(canary.exists(), "approved command could not write: {out}");
    assert!(Path::new(&work.path()).exists());
}

#[test]
fn approved_commands_still_cannot_touch_dev_or_signal_everyone() {
    let Some(confinement) = Confinement::prepare_devices_only().unwrap() else {
        assert!(!is_root());
        return;
    };
    let canary = format!("/dev/toolhost-canary-{}", std::process::id());
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c").arg(format!(
        "echo x > '{canary}'; echo dev=$?; kill -0 -1; echo kill=$?"
    ));
    super::confine::attach(&mut cmd, Some(std::sync::Arc::new(confinement)));
    let out = cmd.output().unwrap();
    let created = Path::new(&canary).exists();
    if created {
        std::fs::remove_file(&canary).unwrap();
    }
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!created, "created {canary}: {text}");
    assert!(text.contains("dev=1") && text.contains("kill=1"), "{text}");
}
