//! Discovery: bundled plugins next to the binary, user/project/installed directories,
//! precedence, opt-in, enable/disable; and the plugins we ship.

use serde_json::json;
use toolhost_tests::plugin_fixtures::{add_plugin, isolated, list_json, record, run};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json};

#[test]
fn bundled_plugins_are_found_next_to_the_binary_without_installing() {
    let home = TestHome::new();
    let records = list_json(home.command());
    let textkit = record(&records, "textkit", Some("bundled"));
    assert_eq!(textkit["status"], "loaded", "{textkit:#}");
    assert_eq!(
        textkit["manifest"],
        serde_json::Value::Null,
        "embedded manifest"
    );
    assert_eq!(
        textkit["tools"],
        json!(["text_stats", "json_query", "base64"])
    );
    let policy = record(&records, "policy", Some("bundled"));
    assert_eq!(policy["status"], "disabled");
    assert!(
        policy["reason"]
            .as_str()
            .unwrap()
            .contains("off by default")
    );
    // Test fixtures live in the same directory but are not bundled plugins.
    assert!(
        records
            .iter()
            .all(|r| r["source"] != "bundled" || r["name"] != "good")
    );

    let out = run(
        home.command(),
        &["call", "text_stats", r#"{"text":"one two\nthree"}"#],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["words"], 3);
}

#[test]
fn a_later_source_wins_a_name_collision() {
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    let installed = tempfile::tempdir().unwrap();
    let installed_dir = add_plugin(installed.path(), "good", "fixture_good", "");
    let mut cmd = isolated(&home);
    cmd.env("TOOLHOST_PLUGIN_PATH", installed.path());
    let records = list_json(cmd);
    let user = record(&records, "good", Some("user"));
    assert_eq!(user["status"], "disabled");
    assert!(
        user["reason"]
            .as_str()
            .unwrap()
            .starts_with("shadowed by the installed plugin at"),
        "{user:#}"
    );
    let winner = record(&records, "good", Some("installed"));
    assert_eq!(winner["status"], "loaded");
    assert!(
        winner["path"]
            .as_str()
            .unwrap()
            .starts_with(installed_dir.to_str().unwrap())
    );

    let mut cmd = isolated(&home);
    cmd.env("TOOLHOST_PLUGIN_PATH", installed.path());
    let out = run(cmd, &["call", "good_echo", r#"{"n":1}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn project_plugins_load_only_when_opted_in() {
    let home = TestHome::new();
    let project = tempfile::tempdir().unwrap();
    add_plugin(
        &project.path().join(".toolhost/plugins"),
        "good",
        "fixture_good",
        "",
    );

    let mut cmd = isolated(&home);
    cmd.current_dir(project.path());
    let records = list_json(cmd);
    let off = record(&records, "good", Some("project"));
    assert_eq!(off["status"], "disabled");
    assert!(
        off["reason"]
            .as_str()
            .unwrap()
            .contains("TOOLHOST_ENABLE_PROJECT_PLUGINS=1")
    );
    let mut cmd = isolated(&home);
    cmd.current_dir(project.path());
    let out = run(cmd, &["call", "good_echo", "{}"]);
    assert_eq!(
        stdout_json(&out),
        json!({"error": "Unknown tool: good_echo"})
    );

    let mut cmd = isolated(&home);
    cmd.current_dir(project.path())
        .env("TOOLHOST_ENABLE_PROJECT_PLUGINS", "1");
    let out = run(cmd, &["call", "good_echo", r#"{"n":5}"#]);
    assert!(out.status.success(), "{}", stderr(&out));

    home.write_config("[plugins]\nproject = true\n");
    let mut cmd = isolated(&home);
    cmd.current_dir(project.path());
    let records = list_json(cmd);
    assert_eq!(
        record(&records, "good", Some("project"))["status"],
        "loaded"
    );
}

#[test]
fn disabled_always_wins() {
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    home.write_config("[plugins]\nenabled = [\"good\"]\ndisabled = [\"good\"]\n");
    let records = list_json(isolated(&home));
    let good = record(&records, "good", None);
    assert_eq!(good["status"], "disabled");
    assert_eq!(good["reason"], "disabled in config (plugins.disabled)");
}

#[test]
fn enable_and_disable_edit_config_keeping_comments() {
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    let original = "# my toolhost settings\n[plugins]\n# plugins I trust\nenabled = []  # none yet\n\n[dispatch]\nmax_concurrency = 4 # keep\n";
    home.write_config(original);

    let out = run(isolated(&home), &["plugins", "disable", "good"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    for kept in [
        "# my toolhost settings",
        "# plugins I trust",
        "# none yet",
        "max_concurrency = 4 # keep",
    ] {
        assert!(text.contains(kept), "lost {kept:?}:\n{text}");
    }
    assert!(text.contains("disabled = [\"good\"]"), "{text}");
    assert_eq!(
        record(&list_json(isolated(&home)), "good", None)["status"],
        "disabled"
    );

    let out = run(isolated(&home), &["plugins", "enable", "good"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert!(
        text.contains("# plugins I trust") && text.contains("# none yet"),
        "{text}"
    );
    assert_eq!(
        record(&list_json(isolated(&home)), "good", None)["status"],
        "loaded"
    );

    let out = run(isolated(&home), &["plugins", "enable", "nosuch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no plugin named nosuch"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn info_describes_one_plugin() {
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    let out = run(isolated(&home), &["plugins", "info", "good", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let info = stdout_json(&out);
    assert_eq!(info["status"], "loaded");
    assert_eq!(info["api"], "^0.1");
    assert_eq!(info["built_for"], "0.1.0");
    assert_eq!(info["tool_details"][0]["name"], "good_echo");
    assert_eq!(info["tool_details"][0]["parallel_safe"], true);
    let out = run(isolated(&home), &["plugins", "info", "good"]);
    assert!(
        stdout(&out).contains("tool:        good_echo [good] available"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn an_availability_check_that_panics_makes_only_its_tool_unavailable() {
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "check-panics", "fixture_check_panics", "");
    let out = run(
        isolated(&home),
        &["plugins", "info", "check-panics", "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let info = stdout_json(&out);
    assert_eq!(info["status"], "loaded");
    let tools = info["tool_details"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "probe_panics");
    assert_eq!(tools[0]["available"], false);
    assert_eq!(tools[0]["reason"], "check panicked: probe exploded");
    assert_eq!(tools[1]["available"], true);
    // The panic was counted, and the rest of the host is fine.
    assert_eq!(info["panics"], 1);
    let out = run(isolated(&home), &["call", "good_echo", "{}"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn policy_plugin_denies_by_rule_and_writes_an_audit_log() {
    let home = TestHome::new();
    home.write_config(concat!(
        "[plugins]\nenabled = [\"policy\"]\n",
        "[plugins.config.policy]\naudit_log = \"audit.jsonl\"\n",
        "[[plugins.config.policy.rules]]\n",
        "tool = \"base*\"\narg = \"text\"\nmatches = \"secret\"\naction = \"deny\"\n",
        "message = \"no secrets in base64\"\n",
        "[[plugins.config.policy.rules]]\n",
        "tool = \"text_stats\"\naction = \"rewrite\"\nset = { text = \"rewritten by policy\" }\n",
    ));
    let out = run(
        home.command(),
        &["call", "base64", r#"{"mode":"encode","text":"my secret"}"#],
    );
    assert_eq!(
        stdout_json(&out),
        json!({"error": "no secrets in base64"}),
        "{}",
        stderr(&out)
    );
    let out = run(home.command(), &["call", "text_stats", r#"{"text":"x"}"#]);
    assert_eq!(stdout_json(&out)["words"], 3, "{}", stderr(&out));
    let log: Vec<serde_json::Value> = std::fs::read_to_string(home.path().join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(log.len(), 2, "{log:#?}");
    assert_eq!(log[0]["tool"], "base64");
    assert_eq!(log[0]["status"], "blocked");
    assert_eq!(log[1]["tool"], "text_stats");
    assert_eq!(log[1]["args"], json!({"text": "rewritten by policy"}));
    assert!(log[1]["ts"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn notes_tools_exist_only_while_their_variable_is_set() {
    let home = TestHome::new();
    let notes = tempfile::tempdir().unwrap();
    let mut cmd = home.command();
    cmd.env_remove("TOOLHOST_NOTES_DIR");
    let out = run(cmd, &["plugins", "info", "notes", "--json"]);
    let info = stdout_json(&out);
    assert_eq!(info["tool_details"][0]["available"], false, "{info:#}");

    let mut cmd = home.command();
    cmd.env("TOOLHOST_NOTES_DIR", notes.path());
    let out = run(
        cmd,
        &["call", "note_add", r#"{"title":"Plan","body":"ship it"}"#],
    );
    assert_eq!(
        stdout_json(&out),
        json!({"saved": "plan", "appended": false}),
        "{}",
        stderr(&out)
    );
    let mut cmd = home.command();
    cmd.env("TOOLHOST_NOTES_DIR", notes.path());
    let out = run(cmd, &["call", "note_search", r#"{"query":"SHIP"}"#]);
    assert_eq!(stdout_json(&out)["matches"][0]["note"], "plan");
}
