//! Strict mode through the approval flow: proven read-only commands run, everything else
//! needs a human every time (no session or permanent approval), nobody to ask denies.

use std::sync::{Arc, Mutex};

use super::surface::BoxFuture;
use super::*;
use crate::home::Home;
use crate::hooks::Hooks;

/// A human who answers every question with the same choice and counts the questions.
struct Human {
    answer: Choice,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl ApprovalCallback for Human {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Choice> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(request.clone());
            self.answer.clone()
        })
    }
}

fn engine(surfaces: Surfaces, dir: &tempfile::TempDir) -> Arc<ApprovalEngine> {
    let settings = ApprovalSettings {
        mode: Some("strict".into()),
        no_human: NoHumanPolicy::Approve,
        command_allowlist: vec!["fs.recursive_delete".into()],
        ..ApprovalSettings::default()
    };
    ApprovalEngine::new(
        settings,
        &Home::at(dir.path()),
        Arc::new(Hooks::new()),
        surfaces,
    )
}

fn check(command: &str) -> CommandCheck {
    CommandCheck {
        command: command.into(),
        session_key: "s".into(),
        task_id: "t".into(),
        tool_call_id: "c".into(),
        env_type: "local".into(),
        host_access: true,
    }
}

#[test]
fn read_only_commands_run_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(Surfaces::none(), &dir);
    for c in ["ls -la", "git status", "cat a | grep b | wc -l"] {
        assert_eq!(
            engine.check(&check(c)),
            GateDecision::Approved {
                note: None,
                human: false
            },
            "{c}"
        );
    }
}

#[test]
fn with_nobody_to_ask_everything_else_is_denied_whatever_no_human_says() {
    let dir = tempfile::tempdir().unwrap();
    let engine = engine(Surfaces::none(), &dir);
    for c in [
        "cargo test",
        "python3 tool.py",
        "echo x > f",
        "rm -rf build",
    ] {
        match engine.check(&check(c)) {
            GateDecision::Blocked { message, hardline } => {
                assert!(!hardline);
                assert!(message.starts_with("BLOCKED"), "{message}");
            }
            other => panic!("{c}: {other:?}"),
        }
    }
    let d = engine.check(&check("cargo test"));
    assert!(
        matches!(&d, GateDecision::Blocked { message, .. } if message.contains("strict")),
        "{d:?}"
    );
}

#[test]
fn a_session_or_permanent_answer_only_approves_this_run() {
    let dir = tempfile::tempdir().unwrap();
    let human = Arc::new(Human {
        answer: Choice::Always,
        asked: Mutex::new(Vec::new()),
    });
    let engine = engine(Surfaces::callback(human.clone()), &dir);
    for _ in 0..2 {
        assert!(matches!(
            engine.check(&check("cargo build")),
            GateDecision::Approved { .. }
        ));
    }
    let asked = human.asked.lock().unwrap();
    assert_eq!(asked.len(), 2, "asked every time");
    assert_eq!(asked[0].rule_keys, vec!["strict.unproven".to_string()]);
    assert!(!asked[0].allow_always);
    assert!(
        engine
            .permanent_keys()
            .iter()
            .all(|k| k != "strict.unproven")
    );
}

#[test]
fn hardline_stays_blocked_in_strict_mode() {
    let dir = tempfile::tempdir().unwrap();
    let human = Arc::new(Human {
        answer: Choice::Once,
        asked: Mutex::new(Vec::new()),
    });
    let engine = engine(Surfaces::callback(human), &dir);
    assert!(matches!(
        engine.check(&check("rm -rf /")),
        GateDecision::Blocked { hardline: true, .. }
    ));
}
