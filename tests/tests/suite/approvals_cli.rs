//! The CLI contract of `toolhost approvals check|list|revoke`.

use serde_json::Value;
use toolhost_tests::{TestHome, stderr, stdout};

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn check_prints_the_verdict_and_exits_1_when_dangerous() {
    let home = TestHome::new();
    let out = home.run(&["approvals", "check", "sudo -u root rm -rf /"], None);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = &lines(&stdout(&out))[0];
    assert_eq!(v["command"], "sudo -u root rm -rf /");
    assert_eq!(v["dangerous"], true);
    assert_eq!(v["hardline"], true);
    assert_eq!(v["rule"], "hardline.rm_root");
    assert_eq!(v["description"], "recursive delete of root filesystem");

    let out = home.run(&["approvals", "check", "git commit -m 'rm -rf old'"], None);
    assert_eq!(out.status.code(), Some(0));
    let v = &lines(&stdout(&out))[0];
    assert_eq!(v["dangerous"], false);
    assert_eq!(v["rule"], Value::Null);
}

#[test]
fn check_reads_one_command_from_stdin() {
    let home = TestHome::new();
    let out = home.run(
        &["approvals", "check"],
        Some("cat <<'EOF' > x\nrm -rf /\nEOF\n"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn check_jsonl_answers_line_by_line_with_the_command_echoed() {
    let home = TestHome::new();
    let input = "\"git push --force\"\n{\"command\": \"ls -la\"}\n\"chmod 0777 shared\"\n";
    let out = home.run(&["approvals", "check", "--jsonl"], Some(input));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = lines(&stdout(&out));
    assert_eq!(got.len(), 3);
    assert_eq!(got[0]["command"], "git push --force");
    assert_eq!(got[0]["rule"], "git.force_push");
    assert_eq!(got[1]["command"], "ls -la");
    assert_eq!(got[1]["dangerous"], false);
    assert_eq!(got[2]["rule"], "fs.world_writable");

    let out = home.run(&["approvals", "check", "--jsonl"], Some("nope\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(lines(&stdout(&out))[0]["error"].is_string());
}

#[test]
fn list_and_revoke_edit_the_allowlist_keeping_comments() {
    let home = TestHome::new();
    home.write_config(
        "# mine\n[approvals]\n# trusted rules\ncommand_allowlist = [\"fs.recursive_delete\", \"git.force_push\"]\n",
    );
    let out = home.run(&["approvals", "list"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("fs.recursive_delete\trecursive delete"),
        "{text}"
    );

    let out = home.run(&["approvals", "revoke", "fs.recursive_delete"], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let config = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(
        config.contains("# trusted rules") && !config.contains("fs.recursive_delete"),
        "{config}"
    );

    let out = home.run(&["approvals", "revoke", "fs.recursive_delete"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not in approvals.command_allowlist"));

    let out = home.run(&["approvals", "list", "--json"], None);
    let list: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(list[0]["key"], "git.force_push");
}

#[test]
fn list_rules_names_every_rule() {
    let home = TestHome::new();
    let out = home.run(&["approvals", "list", "--rules"], None);
    let text = stdout(&out);
    assert!(text.contains("hardline.rm_root"), "{text}");
    assert!(text.contains("git.branch_force_delete"), "{text}");
}
