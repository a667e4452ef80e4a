//! Tests of `preflight.rs`.

use super::*;
use crate::agent::message::{AssistantToolCall, FunctionCall, Role};

fn valid() -> BTreeSet<String> {
    ["todo", "read_file", "delegate_task"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

fn msg(calls: &[(&str, &str, &str)]) -> Message {
    Message {
        role: Role::Assistant,
        content: None,
        tool_calls: calls
            .iter()
            .map(|(id, name, args)| AssistantToolCall {
                id: id.to_string(),
                kind: "function".into(),
                function: FunctionCall {
                    name: name.to_string(),
                    arguments: args.to_string(),
                },
            })
            .collect(),
        tool_call_id: None,
        name: None,
    }
}

fn run_names(v: &Verdict) -> Vec<String> {
    match v {
        Verdict::Proceed { run, .. } => run.iter().map(|c| c.name.clone()).collect(),
        other => panic!("not Proceed: {other:?}"),
    }
}

#[test]
fn repaired_names_run_and_are_written_back() {
    let mut s = Strikes::default();
    let v = preflight(msg(&[("a", "TodoTool", "{}")]), &valid(), 3, &mut s);
    assert_eq!(run_names(&v), ["todo"]);
    let Verdict::Proceed { message, .. } = v else {
        unreachable!()
    };
    assert_eq!(message.tool_calls[0].function.name, "todo");
}

#[test]
fn mixed_batch_runs_valid_calls_and_answers_the_unknown_one() {
    let mut s = Strikes {
        invalid_names: 2,
        bad_json: 0,
    };
    let v = preflight(
        msg(&[("a", "todo", "{}"), ("b", "launch_rockets", "{}")]),
        &valid(),
        3,
        &mut s,
    );
    assert_eq!(run_names(&v), ["todo"]);
    let Verdict::Proceed { answered, .. } = v else {
        unreachable!()
    };
    assert_eq!(
        answered["b"],
        "Tool 'launch_rockets' does not exist. Available tools: delegate_task, read_file, todo"
    );
    assert_eq!(s.invalid_names, 0);
}

#[test]
fn all_unknown_names_strike_and_end_at_three() {
    let mut s = Strikes::default();
    for strike in 1..=2 {
        let v = preflight(
            msg(&[("a", "nope", "{}"), ("b", "", "{}")]),
            &valid(),
            3,
            &mut s,
        );
        let Verdict::Proceed { run, answered, .. } = v else {
            panic!("strike {strike} ended early")
        };
        assert!(run.is_empty());
        assert!(answered["a"].starts_with("Tool 'nope' does not exist"));
        assert!(answered["b"].starts_with("Tool call rejected: the tool name was empty."));
        assert!(!answered["b"].contains("read_file"));
    }
    let v = preflight(msg(&[("a", "nope", "{}")]), &valid(), 3, &mut s);
    assert_eq!(
        v,
        Verdict::End("Model generated invalid tool call: nope".into())
    );
}

#[test]
fn bad_json_requeries_twice_then_answers() {
    let mut s = Strikes::default();
    let bad = || {
        msg(&[
            ("a", "todo", "{'x': 1}"),
            ("b", "read_file", r#"{"path":"a"}"#),
        ])
    };
    assert_eq!(preflight(bad(), &valid(), 3, &mut s), Verdict::Requery);
    assert_eq!(preflight(bad(), &valid(), 3, &mut s), Verdict::Requery);
    let Verdict::Proceed { run, answered, .. } = preflight(bad(), &valid(), 3, &mut s) else {
        panic!("third bad response must be answered")
    };
    assert!(run.is_empty());
    assert!(
        answered["a"].starts_with("Error: Invalid JSON arguments. "),
        "{}",
        answered["a"]
    );
    assert!(answered["a"].ends_with(
        "For tools with no required parameters, use an empty object: {}. Please retry with valid JSON."
    ));
    assert_eq!(
        answered["b"],
        "Skipped: other tool call in this response had invalid JSON."
    );
    assert_eq!(s.bad_json, 0);
}

#[test]
fn cut_off_arguments_mean_a_truncated_response() {
    let mut s = Strikes::default();
    let v = preflight(
        msg(&[("a", "read_file", r#"{"path": "/tm"#)]),
        &valid(),
        3,
        &mut s,
    );
    assert_eq!(
        v,
        Verdict::End("Response truncated due to output length limit".into())
    );
}

#[test]
fn empty_arguments_become_an_empty_object() {
    let mut s = Strikes::default();
    let Verdict::Proceed { run, .. } = preflight(msg(&[("a", "todo", "  ")]), &valid(), 3, &mut s)
    else {
        unreachable!()
    };
    assert_eq!(run[0].arguments, "{}");
}

#[test]
fn duplicates_and_delegations_over_the_cap_are_dropped() {
    let mut s = Strikes::default();
    let v = preflight(
        msg(&[
            ("a", "todo", "{}"),
            ("b", "todo", "{}"),
            ("c", "delegate_task", r#"{"goal":"1"}"#),
            ("d", "delegate_task", r#"{"goal":"2"}"#),
            ("e", "delegate_task", r#"{"goal":"3"}"#),
        ]),
        &valid(),
        2,
        &mut s,
    );
    let Verdict::Proceed { message, run, .. } = v else {
        unreachable!()
    };
    let ids: Vec<&str> = run.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "c", "d"]);
    assert_eq!(message.tool_calls.len(), 3);
}

#[test]
fn missing_and_repeated_ids_are_made_unique() {
    let mut s = Strikes::default();
    let Verdict::Proceed { run, .. } = preflight(
        msg(&[
            ("", "todo", "{}"),
            ("x", "read_file", "{}"),
            ("x", "todo", r#"{"merge":true}"#),
        ]),
        &valid(),
        3,
        &mut s,
    ) else {
        unreachable!()
    };
    let ids: HashSet<&str> = run.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids.len(), 3);
    assert!(!ids.contains(""));
}
