//! Third-party plugins run out of process unless the user says otherwise, and
//! `TOOLHOST_SAFE_MODE=1` loads none of them (docs/plugin-isolation.md).

use toolhost_tests::plugin_fixtures::{add_plugin, isolated, list_json, record};
use toolhost_tests::{TestHome, stderr, toolhost_bin};

/// fixture-good as a user plugin with `manifest_extra` and `config`: its `plugins list`
/// record, which must say it loaded.
fn listed_good(manifest_extra: &str, config: &str) -> serde_json::Value {
    let home = TestHome::new();
    toolhost_bin();
    add_plugin(
        &home.path().join("plugins"),
        "good",
        "fixture_good",
        manifest_extra,
    );
    home.write_config(config);
    let records = list_json(isolated(&home));
    let good = record(&records, "good", None).clone();
    assert_eq!(good["status"], "loaded", "{good}");
    good
}

#[test]
fn a_manifest_cannot_put_a_third_party_plugin_in_process() {
    let good = listed_good("isolation = \"in-process\"\n", "");
    assert_eq!(good["isolation"], "process", "{good}");
}

#[test]
fn the_config_can_put_a_trusted_plugin_in_process() {
    let good = listed_good("", "[plugins.isolation]\ngood = \"in-process\"\n");
    assert_eq!(good["isolation"], "in-process", "{good}");
}

#[test]
fn safe_mode_loads_only_bundled_plugins_and_says_so_once() {
    let home = TestHome::new();
    toolhost_bin();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    // Bundled plugins come from the build directory, as for an installed toolhost.
    let mut cmd = home.command();
    cmd.env("TOOLHOST_SAFE_MODE", "1")
        .env_remove("TOOLHOST_BUNDLED_PLUGINS")
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .args(["plugins", "list", "--json"]);
    let out = cmd.output().expect("run toolhost");
    assert!(out.status.success(), "{}", stderr(&out));
    let records: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("plugins list --json");
    let good = record(&records, "good", None);
    assert_eq!(good["status"], "disabled", "{good}");
    assert!(
        good["reason"].as_str().unwrap().contains("safe mode"),
        "{good}"
    );
    assert!(
        records
            .iter()
            .any(|r| r["source"] == "bundled" && r["status"] == "loaded"),
        "{records:?}"
    );
    assert_eq!(
        stderr(&out).matches("safe mode").count(),
        1,
        "{}",
        stderr(&out)
    );
}
