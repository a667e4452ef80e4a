//! Who lifts the kernel floor: only a human's answer about the command in front of
//! them (`GateDecision::Approved { human: true }`). Rules — the allowlist (the
//! README's own `command_allowlist = ["fs.recursive_delete"]`), an approval remembered
//! from an earlier answer, `mode = "off"`, `no_human = "approve"` — approve without
//! lifting it, so `rm -rf ./junk; <anything>` still runs confined.

use super::*;

fn human_flag(d: &GateDecision) -> bool {
    match d {
        GateDecision::Approved { human, .. } => *human,
        other => panic!("expected an approval, got {other:?}"),
    }
}

/// A recursive delete and a script the analyser cannot read (what it does is unknown).
const RIDER: &str = "rm -rf ./junk; python3 ./probe.py";

#[test]
fn rules_approve_without_lifting_the_floor() {
    let f = fixture();
    let mut allowlisted = settings("manual");
    allowlisted.command_allowlist = vec!["fs.recursive_delete".into()];
    let mut no_human = settings("manual");
    no_human.no_human = NoHumanPolicy::Approve;
    let table = [
        ("allowlist entry", allowlisted),
        ("approvals.mode = off", settings("off")),
        ("no_human = approve", no_human),
    ];
    for (case, s) in table {
        let engine = f.engine(s, Surfaces::none());
        assert!(!human_flag(&engine.check(&check(RIDER))), "{case}");
    }
}

#[test]
fn a_session_answer_lifts_the_floor_for_that_command_only() {
    let f = fixture();
    let human = ScriptedHuman::new(vec![Choice::Session]);
    let engine = f.engine(settings("manual"), Surfaces::callback(human.clone()));
    assert!(human_flag(&engine.check(&check("rm -rf ./build"))));
    // The remembered approval lets the next one run without asking, confined.
    assert!(!human_flag(&engine.check(&check(RIDER))));
    assert_eq!(human.asked().len(), 1);
}

#[test]
fn an_always_answer_lifts_the_floor_for_that_command_only() {
    let f = fixture();
    let human = ScriptedHuman::new(vec![Choice::Always]);
    let engine = f.engine(settings("manual"), Surfaces::callback(human));
    assert!(human_flag(&engine.check(&check("rm -rf ./build"))));
    assert!(!human_flag(&engine.check(&check(RIDER))));
}

#[test]
fn a_once_answer_lifts_the_floor_for_that_command() {
    let f = fixture();
    let human = ScriptedHuman::new(vec![Choice::Once]);
    let engine = f.engine(settings("manual"), Surfaces::callback(human));
    assert!(human_flag(&engine.check(&check(RIDER))));
}
