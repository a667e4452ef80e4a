//! Out-of-process plugins: the hostile fixture's crashes, hangs and floods are contained
//! in its plugin host process; the host and the other plugins keep answering.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::dispatch::Dispatcher;
use toolhost::plugins::{Isolation, PluginSet, PluginStatus, PluginsSettings};
use toolhost_tests::plugin_fixtures::{add_plugin, isolated, list_json, record, run_with_limit};
use toolhost_tests::{TestHome, stderr, stdout_json, toolhost_bin};
use tools_core::{CallStatus, Registry, ToolContext};

/// The hostile fixture out of process and the good one in process, under `config`.
fn load(home: &Path, config: &PluginsSettings) -> (Arc<Registry>, PluginSet, Dispatcher) {
    // The plugin host is the `toolhost` binary beside the test binary's directory.
    toolhost_bin();
    let plugins = home.join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(
        &plugins,
        "hostile",
        "fixture_hostile",
        "isolation = \"process\"\n",
    );
    let mut config = config.clone();
    config
        .isolation
        .entry("good".into())
        .or_insert(Isolation::InProcess);
    let (registry, _hooks, set, dispatcher) =
        super::plugin_runtime::load_user_plugins(home, &config);
    (registry, set, dispatcher)
}

fn patient() -> PluginsSettings {
    PluginsSettings {
        max_crashes: 0,
        timeout_secs: 3.0,
        ..PluginsSettings::default()
    }
}

fn assert_still_answering(dispatcher: &Dispatcher, ctx: &ToolContext) {
    let good = dispatcher.call("good_echo", r#"{"n":1}"#, ctx);
    assert_eq!(good.status, CallStatus::Ok, "{}", good.text);
    let calm = dispatcher.call("hostile_calm", "{}", ctx);
    assert_eq!(calm.status, CallStatus::Ok, "{}", calm.text);
}

#[test]
fn a_process_plugin_handler_runs_with_every_cpu() {
    // The child serves requests on the host's CPU (colocate in tools-core) but must run
    // the handler with its full mask: what a handler starts inherits it.
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    toolhost_bin();
    add_plugin(
        &plugins,
        "good",
        "fixture_good",
        "isolation = \"process\"\n",
    );
    let (_registry, _hooks, set, dispatcher) =
        super::plugin_runtime::load_user_plugins(dir.path(), &patient());
    assert_eq!(set.get("good").unwrap().isolation, Isolation::Process);
    let own = std::fs::read_to_string("/proc/self/status").unwrap();
    let own = own
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    for _ in 0..3 {
        let out = dispatcher.call("good_cpus", "{}", &ToolContext::default());
        assert_eq!(out.status, CallStatus::Ok, "{}", out.text);
        let answer: Value = serde_json::from_str(&out.text).unwrap();
        assert_eq!(answer["cpus"], json!(own), "{}", out.text);
    }
}

#[test]
fn every_crash_is_answered_with_how_the_process_ended() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, set, dispatcher) = load(dir.path(), &patient());
    let record = set.get("hostile").unwrap();
    assert_eq!(record.status, PluginStatus::Loaded, "{record:?}");
    assert_eq!(record.isolation, Isolation::Process);
    let ctx = ToolContext::default();
    let cases = [
        ("hostile_segfault", "killed by signal 11 (SIGSEGV)"),
        ("hostile_abort", "killed by signal 6 (SIGABRT)"),
        ("hostile_stack_overflow", "killed by signal"),
        ("hostile_huge_alloc", "killed by signal 6 (SIGABRT)"),
        ("hostile_exit", "exited with status 3"),
    ];
    for (i, (tool, how)) in cases.iter().enumerate() {
        let out = dispatcher.call(tool, "{}", &ctx);
        assert_eq!(out.status, CallStatus::Error, "{tool}: {}", out.text);
        assert!(
            out.text.contains("plugin hostile crashed"),
            "{tool}: {}",
            out.text
        );
        assert!(out.text.contains(how), "{tool}: {}", out.text);
        assert_still_answering(&dispatcher, &ctx);
        let record = set.get("hostile").unwrap();
        assert_eq!(record.crashes as usize, i + 1, "{record:?}");
        assert_eq!(record.restarts as usize, i + 1, "{record:?}");
        assert!(record.pid.is_some(), "{record:?}");
    }
}

#[test]
fn a_call_past_its_timeout_kills_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let config = PluginsSettings {
        timeout_secs: 1.0,
        ..patient()
    };
    let (_registry, set, dispatcher) = load(dir.path(), &config);
    let ctx = ToolContext::default();
    let pid = set.get("hostile").unwrap().pid.unwrap();
    let out = dispatcher.call("hostile_spin", "{}", &ctx);
    assert_eq!(out.status, CallStatus::Error, "{}", out.text);
    assert!(out.text.contains("timed out after 1s"), "{}", out.text);
    // The spinning process is gone, not left running.
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "pid {pid} still runs"
    );
    assert_still_answering(&dispatcher, &ctx);
    let record = set.get("hostile").unwrap();
    assert_eq!(record.crashes, 0, "a timeout is not a crash: {record:?}");
    assert_ne!(record.pid, Some(pid));
}

#[test]
fn a_thread_that_crashes_later_is_noticed_before_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, set, dispatcher) = load(dir.path(), &patient());
    let ctx = ToolContext::default();
    let armed = dispatcher.call("hostile_crash_later", "{}", &ctx);
    assert_eq!(armed.status, CallStatus::Ok, "{}", armed.text);
    std::thread::sleep(Duration::from_millis(600));
    assert_still_answering(&dispatcher, &ctx);
    let record = set.get("hostile").unwrap();
    assert_eq!((record.crashes, record.restarts), (1, 1), "{record:?}");
}

#[test]
fn output_flood_does_not_corrupt_the_channel() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, _set, dispatcher) = load(dir.path(), &patient());
    let ctx = ToolContext::default();
    let out = dispatcher.call("hostile_flood", "{}", &ctx);
    assert_eq!(out.status, CallStatus::Ok, "{}", out.text);
    let value: Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(value, json!({"flooded": 1 << 20}));
    assert_still_answering(&dispatcher, &ctx);
}

#[test]
fn the_plugin_is_disabled_after_max_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let config = PluginsSettings {
        max_crashes: 2,
        ..patient()
    };
    let (registry, set, dispatcher) = load(dir.path(), &config);
    let ctx = ToolContext::default();
    for _ in 0..2 {
        let out = dispatcher.call("hostile_abort", "{}", &ctx);
        assert!(out.text.contains("SIGABRT"), "{}", out.text);
    }
    let record = set.get("hostile").unwrap();
    assert_eq!(record.status, PluginStatus::Disabled, "{record:?}");
    assert!(
        record
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("after 2 crashes"),
        "{record:?}"
    );
    assert!(!registry.contains("hostile_calm"));
    let good = dispatcher.call("good_echo", "{}", &ctx);
    assert_eq!(good.status, CallStatus::Ok, "{}", good.text);
}

#[test]
fn cli_dispatch_survives_a_segfault_by_default_and_list_shows_the_process() {
    // No configuration and no `isolation` in the manifest: a third-party plugin runs
    // out of process by default.
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "hostile", "fixture_hostile", "");
    let message = json!({"role": "assistant", "tool_calls": [
        {"id": "c0", "type": "function",
         "function": {"name": "hostile_segfault", "arguments": "{}"}},
        {"id": "c1", "type": "function",
         "function": {"name": "good_echo", "arguments": "{\"n\":2}"}},
    ]});
    let out = run_with_limit(
        isolated(&home),
        &["dispatch"],
        Some(&message.to_string()),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = stdout_json(&out);
    let first = results[0]["content"].as_str().unwrap();
    assert!(first.contains("SIGSEGV"), "{first}");
    let second: Value = serde_json::from_str(results[1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(second["echo"], json!({"n": 2}));

    let records = list_json(isolated(&home));
    let hostile = record(&records, "hostile", None);
    assert_eq!(hostile["isolation"], "process");
    assert!(hostile["pid"].as_u64().is_some(), "{hostile}");
    assert_eq!(hostile["restarts"], 0);
}
