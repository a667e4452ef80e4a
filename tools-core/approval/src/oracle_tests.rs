//! Differential test against Hermes' own detector on its benchmark corpus
//! (`benches/data/hermes-oracle.jsonl`: Hermes 0.19.0 `oracle.py --extended` over the
//! 2 685 distinct commands of `danger.py --dump-corpus`). Every disagreement must be one
//! of the documented ones, each a case where Hermes is wrong.

use super::detect::detect;

/// Where we knowingly differ, by command shape: (prefix, Hermes dangerous, ours).
const KNOWN_DIFFERENCES: &[(&str, bool, bool, &str)] = &[
    // Hermes flags every `python -c` ("script execution via -e/-c flag"); we read the code.
    (
        "python -c 'print(1+1)'",
        true,
        false,
        "inline code without side effects",
    ),
    // Hermes has no rule for removing the crontab (a gap: docs/hermes/approval.md).
    ("crontab -r", false, true, "crontab removal"),
    // Hermes does not look at secret reads; danger.py lists it as a dangerous template.
    (
        "cat ~/.ssh/id_rsa",
        false,
        true,
        "reading an SSH private key",
    ),
];

#[test]
fn agrees_with_hermes_except_where_hermes_is_wrong() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/benches/data/hermes-oracle.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut compared = 0;
    let mut differences = 0;
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let command = record["command"].as_str().unwrap();
        let hermes_dangerous =
            record["dangerous"].as_bool().unwrap() || record["hardline"].as_bool().unwrap();
        let hermes_hardline = record["hardline"].as_bool().unwrap();
        let ours = detect(command);
        compared += 1;
        if ours.dangerous() == hermes_dangerous && ours.hardline() == hermes_hardline {
            continue;
        }
        differences += 1;
        let known = KNOWN_DIFFERENCES.iter().any(|(shape, h, o, _)| {
            command == *shape && *h == hermes_dangerous && *o == ours.dangerous()
        });
        assert!(
            known,
            "undocumented difference on {command:?}: Hermes dangerous={hermes_dangerous} hardline={hermes_hardline} ({:?}), ours {:?}",
            record["description"],
            ours.rule_keys()
        );
    }
    assert_eq!(compared, 2685);
    assert_eq!(differences, KNOWN_DIFFERENCES.len());
}
