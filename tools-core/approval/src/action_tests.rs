//! [`ApprovalGate::check_action`]: actions that only a human approves (guarded writes,
//! script cron jobs) — asked like a command, blocked with nobody to ask whatever the
//! mode or `no_human` says.

use std::sync::Arc;

use super::*;

fn engine(mode: &str, no_human: NoHumanPolicy, surfaces: Surfaces) -> Arc<ApprovalEngine> {
    let settings = ApprovalSettings {
        mode: Some(mode.to_string()),
        no_human,
        ..ApprovalSettings::default()
    };
    ApprovalEngine::new(
        settings,
        Arc::new(MemoryOnly),
        Arc::new(NoObserver),
        surfaces,
    )
}

fn action() -> ActionCheck {
    ActionCheck {
        action: "write_file /h/scripts/job.sh".to_string(),
        finding: Finding::with(&rules::AGENT_CONFIG, "write into toolhost's scripts"),
        session_key: "s".to_string(),
        task_id: "t".to_string(),
        tool_call_id: "c".to_string(),
    }
}

#[test]
fn with_nobody_to_ask_an_action_is_blocked_in_every_mode() {
    for mode in ["manual", "off", "smart", "strict"] {
        let gate = engine(mode, NoHumanPolicy::Approve, Surfaces::none());
        let decision = gate.check_action(&action());
        let GateDecision::Blocked { message, hardline } = decision else {
            panic!("{mode}: approved without a human");
        };
        assert!(!hardline);
        assert!(
            message.contains("write into toolhost's scripts"),
            "{message}"
        );
    }
}

#[test]
fn a_human_sees_the_action_and_approves_it_once() {
    let human = Arc::new(FixedAnswer::new(Choice::Always));
    let gate = engine(
        "manual",
        NoHumanPolicy::Deny,
        Surfaces::callback(Arc::clone(&human) as Arc<dyn ApprovalCallback>),
    );
    let decision = gate.check_action(&action());
    assert!(matches!(
        decision,
        GateDecision::Approved { human: true, .. }
    ));
    let asked = human.asked();
    assert_eq!(asked[0].command, "write_file /h/scripts/job.sh");
    assert!(!asked[0].allow_always);
    // "always" was not remembered: the next write is asked again.
    gate.check_action(&action());
    assert_eq!(human.asked().len(), 2);
}

#[test]
fn a_human_who_denies_blocks_the_action() {
    let human = Arc::new(FixedAnswer::new(Choice::Deny { reason: None }));
    let gate = engine(
        "off",
        NoHumanPolicy::Approve,
        Surfaces::callback(human as Arc<dyn ApprovalCallback>),
    );
    assert!(matches!(
        gate.check_action(&action()),
        GateDecision::Blocked { .. }
    ));
}

#[test]
fn a_gate_that_cannot_ask_blocks_actions_by_default() {
    struct CommandsOnly;
    impl ApprovalGate for CommandsOnly {
        fn check(&self, _check: &CommandCheck) -> GateDecision {
            GateDecision::Approved {
                note: None,
                human: false,
            }
        }
    }
    assert!(matches!(
        CommandsOnly.check_action(&action()),
        GateDecision::Blocked { .. }
    ));
}
