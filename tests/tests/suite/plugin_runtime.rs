//! Plugins at run time: panicking handlers, disable-after-N, slow handlers and
//! timeouts, the logging bridge.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::dispatch::Dispatcher;
use toolhost::plugins::runtime::PluginRuntime;
use toolhost::plugins::{PluginStatus, PluginsSettings, Roots, load_plugins};
use toolhost::spill::ResultSpill;
use toolhost_tests::plugin_fixtures::{add_plugin, isolated, run, run_with_limit};
use toolhost_tests::{TestHome, stderr, stdout, stdout_json};
use tools_core::{CallStatus, Home, Hooks, Registry, ToolContext};

fn message(calls: &[(&str, Value)]) -> String {
    let tool_calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i}"), "type": "function",
                   "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    json!({"role": "assistant", "tool_calls": tool_calls}).to_string()
}

fn contents(out: &std::process::Output) -> Vec<Value> {
    stdout_json(out)
        .as_array()
        .expect("dispatch prints an array")
        .iter()
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

#[test]
fn a_panicking_handler_returns_an_error_and_the_host_carries_on() {
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "handler-panics", "fixture_handler_panics", "");
    let input = message(&[
        ("boom", json!({})),
        ("good_echo", json!({"n": 1})),
        ("calm", json!({})),
    ]);
    let out = run_with_limit(
        isolated(&home),
        &["dispatch"],
        Some(&input),
        Duration::from_secs(120),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = contents(&out);
    assert_eq!(
        results[0],
        json!({"error": "Tool execution failed: panic: boom tool exploded"})
    );
    assert_eq!(results[1]["echo"], json!({"n": 1}));
    assert_eq!(results[2], json!({"calm": true}));
    // The panic message went through the host's subscriber, tagged with the plugin.
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("boom tool exploded") && l.contains("panicked at"))
        .unwrap_or_else(|| panic!("panic message not bridged:\n{err}"));
    assert!(line.contains("handler-panics"), "{line}");
    // ...and not printed raw by the plugin's own default panic hook.
    assert!(!err.contains("thread '"), "{err}");
}

#[test]
fn plugin_logs_reach_the_host_subscriber() {
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    let out = run(isolated(&home), &["call", "good_log"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let line = err
        .lines()
        .find(|l| l.contains("fixture says hello through the bridge"))
        .unwrap_or_else(|| panic!("plugin event missing:\n{err}"));
    assert!(
        line.contains("WARN") && line.contains("answer=42"),
        "{line}"
    );
    assert!(line.contains("\"good\""), "{line}");
}

#[test]
fn plugin_settings_come_from_config() {
    let home = TestHome::new();
    add_plugin(&home.path().join("plugins"), "good", "fixture_good", "");
    home.write_config("[plugins.config.good]\ngreeting = \"ahoy\"\n");
    let out = run(isolated(&home), &["call", "good_setting"]);
    assert_eq!(
        stdout_json(&out),
        json!({"greeting": "ahoy"}),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_slow_handler_times_out_and_the_host_stays_responsive() {
    let home = TestHome::new();
    let plugins = home.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "slow", "fixture_slow", "");
    home.write_config("[plugins]\ntimeout_secs = 1\n");
    // The handler would sleep ten minutes; the hang guard proves nobody waits for it.
    let input = message(&[
        ("slow_sleep", json!({"secs": 600})),
        ("good_echo", json!({"n": 2})),
    ]);
    let out = run_with_limit(
        isolated(&home),
        &["dispatch"],
        Some(&input),
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let results = contents(&out);
    assert_eq!(
        results[0],
        json!({"error": "Tool execution failed: timeout: timed out after 1s"})
    );
    assert_eq!(results[1]["echo"], json!({"n": 2}));
}

/// Load the plugins in `home/plugins` into a fresh registry, without bundled or
/// installed plugins (in-process tests must not depend on the machine).
pub(super) fn load_user_plugins(
    home: &Path,
    config: &PluginsSettings,
) -> (
    Arc<Registry>,
    Arc<Hooks>,
    toolhost::plugins::PluginSet,
    Dispatcher,
) {
    let home = Home::at(home);
    let roots = Roots {
        user: Some(home.plugins_dir()),
        ..Roots::default()
    };
    let registry = Arc::new(Registry::new());
    let hooks = Arc::new(Hooks::new());
    let set = load_plugins(&home, config, &roots, &registry, &hooks);
    let dispatcher = Dispatcher::new(
        Arc::clone(&registry),
        Arc::clone(&hooks),
        ResultSpill::new(home.results_dir()),
    );
    (registry, hooks, set, dispatcher)
}

/// fixture-slow as the only user plugin under `config`, in-process (these tests are
/// about the in-process executor's hung calls): its runtime and a dispatcher. The
/// temporary home comes along and must outlive them.
fn load_slow(config: &PluginsSettings) -> (tempfile::TempDir, Arc<PluginRuntime>, Dispatcher) {
    let dir = tempfile::tempdir().unwrap();
    add_plugin(&dir.path().join("plugins"), "slow", "fixture_slow", "");
    let config = PluginsSettings {
        default_isolation: toolhost::plugins::Isolation::InProcess,
        ..config.clone()
    };
    let (_registry, _hooks, set, dispatcher) = load_user_plugins(dir.path(), &config);
    let runtime = set.get("slow").unwrap().runtime.unwrap();
    (dir, runtime, dispatcher)
}

/// Waits (up to 60 s) until `runtime` counts no call past its timeout — `what` is the
/// failure when it never gets there — then checks fixture-slow answers again.
fn recovers(runtime: &PluginRuntime, dispatcher: &Dispatcher, what: &str) {
    let guard = Instant::now();
    while runtime.hung_calls() > 0 {
        assert!(guard.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let again = dispatcher.call("slow_sleep", r#"{"secs": 0}"#, &ToolContext::default());
    assert_eq!(again.text, r#"{"slept":0.0}"#);
}

#[test]
fn a_plugin_is_disabled_after_max_panics() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = dir.path().join("plugins");
    add_plugin(&plugins, "good", "fixture_good", "");
    add_plugin(&plugins, "handler-panics", "fixture_handler_panics", "");
    // The global limit says 1; the plugin's own `[plugins.limits.handler-panics]` says 2.
    let mut config = PluginsSettings {
        max_panics: 1,
        ..PluginsSettings::default()
    };
    config.limits.insert(
        "handler-panics".into(),
        toolhost::plugins::config::LimitOverrides {
            max_panics: Some(2),
            ..Default::default()
        },
    );
    let (registry, _hooks, set, dispatcher) = load_user_plugins(dir.path(), &config);
    let ctx = ToolContext::default();
    let first = dispatcher.call("boom", "{}", &ctx);
    assert!(
        first.text.contains("panic: boom tool exploded"),
        "{}",
        first.text
    );
    assert_eq!(
        set.get("handler-panics").unwrap().status,
        PluginStatus::Loaded
    );
    for _ in 0..1 {
        let out = dispatcher.call("boom", "{}", &ctx);
        assert_eq!(out.status, CallStatus::Error);
        assert!(
            out.text.contains("panic: boom tool exploded"),
            "{}",
            out.text
        );
    }
    let record = set.get("handler-panics").unwrap();
    assert_eq!(record.status, PluginStatus::Disabled);
    assert!(
        record
            .reason
            .as_deref()
            .unwrap_or_default()
            .contains("disabled after 2 panics"),
        "{record:?}"
    );
    assert_eq!(record.panics, 2);
    // Its tools are gone; everyone else is untouched.
    assert!(!registry.contains("calm") && !registry.contains("boom"));
    let good = dispatcher.call("good_echo", r#"{"n":3}"#, &ctx);
    assert_eq!(good.status, CallStatus::Ok, "{}", good.text);
}

#[test]
fn a_timed_out_handler_is_told_to_stop_and_stops_counting_as_hung() {
    let (_home, runtime, dispatcher) = load_slow(&PluginsSettings {
        timeout_secs: 0.2,
        ..PluginsSettings::default()
    });
    let out = dispatcher.call("slow_sleep", r#"{"secs": 600}"#, &ToolContext::default());
    assert!(out.text.contains("timed out after 0.2s"), "{}", out.text);
    // The handler polls ctx.is_cancelled(); once it returns, the call is no longer hung.
    recovers(&runtime, &dispatcher, "the handler never stopped");
}

#[test]
fn too_many_hung_calls_refuse_further_calls() {
    let (_home, runtime, dispatcher) = load_slow(&PluginsSettings {
        timeout_secs: 0.1,
        max_hung_calls: 1,
        ..PluginsSettings::default()
    });
    // A handler that ignores cancellation keeps its thread for 3 s.
    let first = dispatcher.call(
        "slow_sleep",
        r#"{"secs": 3, "ignore_cancel": true}"#,
        &ToolContext::default(),
    );
    assert!(first.text.contains("timed out"), "{}", first.text);
    assert_eq!(runtime.hung_calls(), 1);
    let refused = dispatcher.call("slow_sleep", r#"{"secs": 0}"#, &ToolContext::default());
    assert!(
        refused
            .text
            .contains("slow has 1 calls still running past their timeout"),
        "{}",
        refused.text
    );
    // When the stubborn handler finally returns, the plugin is usable again.
    recovers(&runtime, &dispatcher, "the handler never returned");
}

#[test]
fn a_hook_past_its_timeout_blocks_the_call_and_the_host_carries_on() {
    let (_home, runtime, dispatcher) = load_slow(&PluginsSettings {
        timeout_secs: 0.5,
        ..PluginsSettings::default()
    });
    let started = Instant::now();
    let out = dispatcher.call(
        "slow_sleep",
        r#"{"secs": 0, "hook_secs": 5}"#,
        &ToolContext::default(),
    );
    // A pre_tool_call hook that cannot answer fails closed, and the caller is not held
    // for the hook's 5 s.
    assert_eq!(out.status, CallStatus::Blocked, "{}", out.text);
    assert!(
        out.text.contains("pre_tool_call hook timed out after 0.5s"),
        "{}",
        out.text
    );
    assert!(
        started.elapsed() < Duration::from_millis(4000),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(runtime.hung_calls(), 1);
    // Once the hook returns it no longer counts, and calls go through again.
    recovers(&runtime, &dispatcher, "the hook never returned");
}

#[test]
fn call_output_is_json_even_for_direct_calls() {
    let home = TestHome::new();
    add_plugin(
        &home.path().join("plugins"),
        "handler-panics",
        "fixture_handler_panics",
        "",
    );
    let out = run(isolated(&home), &["call", "boom"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout_json(&out),
        json!({"error": "Tool execution failed: panic: boom tool exploded"}),
        "{}",
        stdout(&out)
    );
}
