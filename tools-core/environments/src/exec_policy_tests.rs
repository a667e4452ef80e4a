//! The execution policy: who approved decides whether the floor is lifted (only a
//! human, only in `verdict` mode), and the probe the analyser cannot read is denied on
//! every path that goes through it. Harmless even if confinement silently failed: see
//! `floor_probe.rs`.

use std::path::Path;

use super::*;
use crate::floor_probe::{Probe, enforced, outside_tmp};
use crate::local::LocalEnvironment;

fn settings(confine: ConfineMode) -> LocalSettings {
    LocalSettings {
        confine,
        writable: Vec::new(),
    }
}

#[test]
fn only_a_human_lifts_the_floor_and_only_in_verdict_mode() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let table = [
        (ConfineMode::Verdict, Approval::Unjudged, FloorState::Full),
        (ConfineMode::Verdict, Approval::Rule, FloorState::Full),
        (
            ConfineMode::Verdict,
            Approval::Human,
            FloorState::LiftedByHuman,
        ),
        (ConfineMode::Floor, Approval::Rule, FloorState::Full),
        (ConfineMode::Floor, Approval::Human, FloorState::Full),
        (ConfineMode::Workspace, Approval::Human, FloorState::Full),
        (ConfineMode::Off, Approval::Unjudged, FloorState::Off),
        (ConfineMode::Off, Approval::Human, FloorState::Off),
    ];
    for (mode, approval, want) in table {
        let floor = Floor::prepare(&settings(mode), work.path(), home.path());
        let (_, decision) = floor.select(CodePath::Terminal, approval);
        assert_eq!(decision.floor, want, "{mode:?} {approval:?}");
        assert_eq!(
            decision.note().is_some(),
            want == FloorState::LiftedByHuman,
            "{mode:?} {approval:?}"
        );
    }
}

#[test]
fn unattended_work_keeps_the_floor_even_if_called_human() {
    let work = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let floor = Floor::unattended(&settings(ConfineMode::Verdict), work.path(), home.path());
    let (with_human, _) = floor.select(CodePath::CronScript, Approval::Human);
    let (without, _) = floor.select(CodePath::CronScript, Approval::Unjudged);
    assert!(Arc::ptr_eq(&with_human.unwrap(), &without.unwrap()));
}

#[test]
fn the_gate_answer_maps_to_who_approved() {
    assert_eq!(Approval::from_gate(true, true), Approval::Human);
    assert_eq!(Approval::from_gate(false, true), Approval::Rule);
    assert_eq!(Approval::from_gate(false, false), Approval::Unjudged);
}

fn run_probe_with(floor: &Floor, probe: &Probe, path: CodePath, approval: Approval) -> String {
    let mut cmd = command("python3");
    cmd.arg(&probe.script).args(probe.args());
    apply(&mut cmd, floor, path, approval);
    let out = cmd.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_probe_is_denied_on_a_spawn_through_the_policy() {
    let probe = Probe::new().unwrap();
    let floor = Floor::prepare(
        &settings(ConfineMode::Verdict),
        probe.dir.path(),
        probe.home(),
    );
    let out = run_probe_with(&floor, &probe, CodePath::ExecuteCode, Approval::Rule);
    assert_eq!(enforced(probe.escapes(&out)), Vec::<String>::new(), "{out}");
}

#[test]
fn the_probe_is_denied_in_a_terminal_command_a_rule_approved() {
    let probe = Probe::new().unwrap();
    let env = LocalEnvironment::new(&probe.dir.path().display().to_string(), Vec::new())
        .confined(&settings(ConfineMode::Verdict), probe.home());
    // A rule's approval reaches the backend as "not approved by a human".
    let out = crate::confine_verdict_tests::run(
        &env,
        format!("rm -rf ./junk; {}", probe.shell_line()),
        false,
    );
    assert_eq!(enforced(probe.escapes(&out)), Vec::<String>::new(), "{out}");
}

fn bash_under(floor: &Floor, script: &str) -> String {
    let mut cmd = command("bash");
    cmd.arg("-c").arg(script);
    apply(&mut cmd, floor, CodePath::Terminal, Approval::Unjudged);
    let out = cmd.output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A floor for work in `work` with `home` as the user's home.
fn floor_with_home(work: &Path, home: &Path, toolhost_home: &Path) -> Floor {
    let roots = confine::WritableRoots::for_mode(
        ConfineMode::Verdict,
        work,
        Some(home),
        toolhost_home,
        &[],
    );
    Floor::fixed(Some(Arc::new(Confinement::prepare(&roots).unwrap())))
}

#[test]
fn home_dotfiles_and_the_rest_of_the_home_are_read_only() {
    if crate::floor_probe::landlock_abi() < 1 {
        eprintln!("kernel without Landlock: nothing to test");
        return;
    }
    let home = outside_tmp().unwrap();
    let work = tempfile::tempdir().unwrap();
    let toolhost = home.path().join(".toolhost");
    std::fs::create_dir_all(home.path().join("projects")).unwrap();
    std::fs::write(home.path().join("projects/keep"), "x").unwrap();
    std::fs::write(home.path().join(".bashrc"), "# rc\n").unwrap();
    let floor = floor_with_home(work.path(), home.path(), &toolhost);
    let h = home.path().display();
    let out = bash_under(
        &floor,
        &format!(
            "mkdir -p {h}/.ssh; echo key >> {h}/.ssh/authorized_keys; echo evil >> {h}/.bashrc; \
             rm -rf {h}/projects; echo cached > {h}/.cache-probe; true"
        ),
    );
    assert!(!home.path().join(".ssh").exists(), "{out}");
    assert_eq!(
        std::fs::read_to_string(home.path().join(".bashrc")).unwrap(),
        "# rc\n"
    );
    assert!(home.path().join("projects/keep").exists(), "{out}");
}

#[test]
fn dotfiles_stay_read_only_when_the_workspace_is_the_home() {
    if crate::floor_probe::landlock_abi() < 1 {
        eprintln!("kernel without Landlock: nothing to test");
        return;
    }
    let home = outside_tmp().unwrap();
    std::fs::write(home.path().join(".profile"), "# p\n").unwrap();
    std::fs::create_dir(home.path().join("src")).unwrap();
    let floor = floor_with_home(home.path(), home.path(), &home.path().join(".toolhost"));
    let h = home.path().display();
    let out = bash_under(
        &floor,
        &format!("echo x >> {h}/.profile; mkdir {h}/.ssh; echo ok > {h}/src/notes && echo wrote"),
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".profile")).unwrap(),
        "# p\n"
    );
    assert!(!home.path().join(".ssh").exists(), "{out}");
    assert!(out.contains("wrote"), "{out}");
}

#[test]
fn a_symlinked_toolhost_home_is_protected_at_its_real_path() {
    if crate::floor_probe::landlock_abi() < 1 {
        eprintln!("kernel without Landlock: nothing to test");
        return;
    }
    let probe = Probe::new().unwrap();
    let links = tempfile::tempdir().unwrap();
    let link = links.path().join("home-link");
    std::os::unix::fs::symlink(probe.home(), &link).unwrap();
    let floor = Floor::prepare(&settings(ConfineMode::Verdict), probe.home(), &link);
    let real = probe.home().canonicalize().unwrap();
    let out = bash_under(
        &floor,
        &format!(
            "cd '{}' && printf '[approvals]\\nmode = \"off\"\\n' > config.toml",
            real.display()
        ),
    );
    assert_eq!(
        std::fs::read_to_string(probe.config()).unwrap(),
        crate::floor_probe::CONFIG,
        "{out}"
    );
}

#[test]
fn signals_reach_only_the_commands_own_tree_and_never_pid_1() {
    let work = tempfile::tempdir().unwrap();
    let floor = Floor::prepare(&settings(ConfineMode::Verdict), work.path(), work.path());
    let out = bash_under(
        &floor,
        &format!(
            "kill -0 1; echo init=$?; kill -s RTMIN+5 1; echo rtmin=$?; kill -0 {}; echo toolhost=$?",
            std::process::id()
        ),
    );
    assert!(out.contains("init=1") && out.contains("rtmin=1"), "{out}");
    if crate::floor_probe::landlock_abi() >= 6 {
        assert!(out.contains("toolhost=1"), "{out}");
    }
}

#[test]
fn the_number_of_processes_is_capped() {
    let work = tempfile::tempdir().unwrap();
    let floor = Floor::prepare(&settings(ConfineMode::Verdict), work.path(), work.path());
    let out = bash_under(&floor, "ulimit -u");
    let limit: u64 = out.trim().parse().unwrap_or(u64::MAX);
    assert!((crate::PROCESS_CAP..u64::MAX).contains(&limit), "{out}");
}
