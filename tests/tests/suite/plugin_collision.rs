//! A plugin tool that collides with a core tool is refused unless the plugin's manifest
//! grants `override` for it.

use std::sync::Arc;

use serde_json::json;
use toolhost::plugins::{PluginStatus, PluginsSettings, Roots, load_plugins};
use toolhost_tests::plugin_fixtures::add_plugin;
use tools_core::{Home, Hooks, Registry, ToolContext, ToolEntry, ToolSource};

fn registry_with_core_read_file() -> Arc<Registry> {
    let registry = Arc::new(Registry::new());
    registry.register(
        ToolEntry::builder("read_file", "file")
            .sync_handler(|_, _| Ok(json!({"from": "core"})))
            .build()
            .unwrap(),
    );
    registry
}

fn load(home: &Home, registry: &Arc<Registry>) -> toolhost::plugins::PluginSet {
    let roots = Roots {
        user: Some(home.plugins_dir()),
        ..Roots::default()
    };
    load_plugins(
        home,
        &PluginsSettings::default(),
        &roots,
        registry,
        &Arc::new(Hooks::new()),
    )
}

#[test]
fn a_core_tool_collision_is_refused_without_permission() {
    let dir = tempfile::tempdir().unwrap();
    add_plugin(&dir.path().join("plugins"), "good", "fixture_good", "");
    add_plugin(
        &dir.path().join("plugins"),
        "collide",
        "fixture_collide",
        "",
    );
    let registry = registry_with_core_read_file();
    let set = load(&Home::at(dir.path()), &registry);

    let record = set.get("collide").unwrap();
    assert_eq!(record.status, PluginStatus::Loaded);
    assert_eq!(record.tools, ["collide_ok"]);
    assert_eq!(record.refused_tools.len(), 1);
    assert_eq!(record.refused_tools[0].name, "read_file");
    assert!(
        record.refused_tools[0]
            .reason
            .contains("collides with the core tool read_file")
    );
    // The core tool is untouched; the rest still works.
    let entry = registry.get("read_file").unwrap();
    assert_eq!(entry.source, ToolSource::Core);
    let ctx = ToolContext::default();
    assert_eq!(
        registry
            .dispatch_blocking("read_file", json!({}), &ctx)
            .text,
        r#"{"from":"core"}"#
    );
    assert_eq!(
        registry
            .dispatch_blocking("collide_ok", json!({}), &ctx)
            .text,
        r#"{"ok":true}"#
    );
    assert!(
        registry
            .dispatch_blocking("good_echo", json!({}), &ctx)
            .text
            .contains("echo")
    );
}

#[test]
fn override_permission_lets_a_plugin_replace_a_core_tool() {
    let dir = tempfile::tempdir().unwrap();
    add_plugin(
        &dir.path().join("plugins"),
        "collide",
        "fixture_collide",
        "override = [\"read_file\"]\n",
    );
    let registry = registry_with_core_read_file();
    let set = load(&Home::at(dir.path()), &registry);
    let record = set.get("collide").unwrap();
    assert_eq!(record.tools, ["read_file", "collide_ok"]);
    assert!(record.refused_tools.is_empty());
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.contains("replaces the core tool read_file"))
    );
    assert_eq!(
        registry.get("read_file").unwrap().source,
        ToolSource::Plugin("collide".into())
    );
    let out = registry.dispatch_blocking("read_file", json!({}), &ToolContext::default());
    assert_eq!(out.text, r#"{"from":"plugin"}"#);
}

#[test]
fn the_cli_refuses_a_plugin_tool_named_like_a_core_tool() {
    use toolhost_tests::plugin_fixtures::{isolated, list_json, record};
    use toolhost_tests::{TestHome, stdout};
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    add_plugin(
        &home.path().join("plugins"),
        "collide",
        "fixture_collide",
        "",
    );
    let records = list_json(isolated(&home));
    let collide = record(&records, "collide", None);
    assert_eq!(collide["status"], "loaded");
    assert_eq!(collide["tools"], json!(["collide_ok"]));
    assert_eq!(collide["refused_tools"][0]["name"], "read_file");
    // `read_file` is still the core tool: it does not answer with the plugin's result.
    let out = toolhost_tests::plugin_fixtures::run(
        isolated(&home),
        &["call", "read_file", r#"{"path":"/nonexistent/x"}"#],
    );
    assert!(
        !stdout(&out).contains("\"from\":\"plugin\""),
        "{}",
        stdout(&out)
    );
    let out = toolhost_tests::plugin_fixtures::run(isolated(&home), &["call", "good_echo", "{}"]);
    assert!(out.status.success());
}
