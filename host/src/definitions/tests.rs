//! Definitions: filtering, availability, format, dynamic overrides, schema patches,
//! sanitizing and the memo.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};
use tools_core::{AvailabilityCheck, Registry, SchemaPatch, ToolEntry};

use super::*;
use crate::toolsets::{CustomToolset, Toolsets, ToolsetsSettings};

fn tool(name: &str, toolset: &str) -> ToolEntry {
    ToolEntry::builder(name, toolset)
        .description(format!("The {name} tool."))
        .parameters(
            json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
        )
        .build()
        .unwrap()
}

fn registry(tools: &[(&str, &str)]) -> Registry {
    let reg = Registry::new();
    for (name, toolset) in tools {
        reg.register(tool(name, toolset));
    }
    reg
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn defs(
    reg: &Registry,
    ts: &Toolsets,
    enabled: Option<&[&str]>,
    disabled: Option<&[&str]>,
) -> Arc<ToolDefinitions> {
    let enabled = enabled.map(strings);
    let disabled = disabled.map(strings);
    get_tool_definitions(reg, ts, enabled.as_deref(), disabled.as_deref(), true)
}

const BASIC: &[(&str, &str)] = &[
    ("read_file", "file"),
    ("write_file", "file"),
    ("web_search", "web"),
    ("web_extract", "web"),
    ("terminal", "terminal"),
    ("process", "terminal"),
];

#[test]
fn enabled_selects_only_those_toolsets() {
    let reg = registry(BASIC);
    let d = defs(&reg, &Toolsets::new(), Some(&["file"]), None);
    assert_eq!(d.names, strings(&["read_file", "write_file"]));
}

#[test]
fn disabled_alone_means_all_minus_those() {
    let reg = registry(BASIC);
    let d = defs(&reg, &Toolsets::new(), None, Some(&["web", "terminal"]));
    assert_eq!(d.names, strings(&["read_file", "write_file"]));
}

#[test]
fn neither_means_every_registered_tool() {
    let reg = registry(&[BASIC, &[("gh_issue", "mcp-github")]].concat());
    let d = defs(&reg, &Toolsets::new(), None, None);
    assert_eq!(d.names, reg.names());
}

#[test]
fn an_empty_enabled_list_yields_no_tools() {
    let reg = registry(BASIC);
    assert!(defs(&reg, &Toolsets::new(), Some(&[]), None).is_empty());
}

#[test]
fn unknown_names_are_reported_and_ignored() {
    let reg = registry(BASIC);
    let ts = Toolsets::new();
    for quiet in [true, false] {
        let d = get_tool_definitions(
            &reg,
            &ts,
            Some(&strings(&["nope", "web", "nope"])),
            Some(&strings(&["ghost"])),
            quiet,
        );
        assert_eq!(d.unknown, strings(&["nope", "ghost"]), "quiet={quiet}");
        assert_eq!(d.names, strings(&["web_extract", "web_search"]));
    }
}

#[test]
fn unavailable_tools_are_skipped() {
    let reg = registry(BASIC);
    let down = AvailabilityCheck::new("no key", || Err("WEB_API_KEY unset".into()));
    reg.register(
        ToolEntry::builder("web_search", "web")
            .check(down)
            .build()
            .unwrap(),
    );
    let d = defs(&reg, &Toolsets::new(), Some(&["web"]), None);
    assert_eq!(d.names, strings(&["web_extract"]));
}

#[test]
fn a_shared_check_runs_once_per_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let shared = AvailabilityCheck::new("shared", move || {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(())
    });
    let reg = Registry::new();
    for name in ["a", "b", "c", "d"] {
        reg.register(
            ToolEntry::builder(name, "group")
                .check(Arc::clone(&shared))
                .build()
                .unwrap(),
        );
    }
    // Non-quiet: no memo; invalidate the TTL cache so the probe really runs.
    shared.invalidate();
    let d = get_tool_definitions(&reg, &Toolsets::new(), None, None, false);
    assert_eq!(d.len(), 4);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn output_is_openai_format_sorted_by_name() {
    let reg = registry(&[("zeta", "x"), ("alpha", "x"), ("mid", "y")]);
    let d = defs(&reg, &Toolsets::new(), None, None);
    assert_eq!(d.names, strings(&["alpha", "mid", "zeta"]));
    let listed: Vec<&str> = d
        .tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["alpha", "mid", "zeta"]);
    assert_eq!(
        d.tools[0],
        json!({"type": "function", "function": {
            "name": "alpha",
            "description": "The alpha tool.",
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
        }})
    );
    let parsed: Value = serde_json::from_str(&d.to_json()).unwrap();
    assert_eq!(parsed.as_array().unwrap().len(), 3);
    assert!(d.contains("mid") && !d.contains("nope"));
    assert_eq!(d.function("zeta").unwrap()["name"], "zeta");
}

#[test]
fn schemas_are_sanitized() {
    let reg = Registry::new();
    reg.register(
        ToolEntry::builder("messy", "x")
            .parameters(json!({
                "type": "object",
                "properties": {"a": {"type": ["string", "null"]}, "b": "integer"},
                "required": ["a", "ghost"],
                "anyOf": [{"required": ["a"]}]
            }))
            .build()
            .unwrap(),
    );
    let d = defs(&reg, &Toolsets::new(), None, None);
    assert_eq!(
        d.tools[0]["function"]["parameters"],
        json!({
            "type": "object",
            "properties": {"a": {"type": "string", "nullable": true}, "b": {"type": "integer"}},
            "required": ["a"]
        })
    );
}

#[test]
fn dynamic_schema_overrides_are_merged_but_never_rename() {
    let reg = Registry::new();
    reg.register(
        ToolEntry::builder("delegate_task", "delegation")
            .description("static")
            .dynamic_schema(|| {
                let mut m = Map::new();
                m.insert("description".into(), json!("Delegate up to 3 subagents."));
                m.insert("name".into(), json!("renamed"));
                Some(m)
            })
            .build()
            .unwrap(),
    );
    reg.register(
        ToolEntry::builder("image_generate", "image_gen")
            .description("static image")
            .dynamic_schema(|| panic!("provider config unreadable"))
            .build()
            .unwrap(),
    );
    let d = defs(&reg, &Toolsets::new(), None, None);
    assert_eq!(d.names, strings(&["delegate_task", "image_generate"]));
    let f = d.function("delegate_task").unwrap();
    assert_eq!(f["description"], "Delegate up to 3 subagents.");
    assert_eq!(f["name"], "delegate_task");
    assert_eq!(
        d.function("image_generate").unwrap()["description"],
        "static image"
    );
}

// --- Dynamic schema patches, with fixture tools shaped like Hermes' ---

const SANDBOX_TOOLS: &[&str] = &[
    "web_search",
    "web_extract",
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "terminal",
];

const WEB_HINT: &str =
    " For simple information retrieval, prefer web_search or web_extract (faster, cheaper).";

/// Like Hermes' `execute_code`: the description lists only the sandbox tools that
/// survived, and the import example uses web_search/terminal when present.
fn execute_code_fixture() -> ToolEntry {
    ToolEntry::builder("execute_code", "code_execution")
        .description("Run a script (all sandbox tools listed).")
        .parameters(json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}))
        .schema_patch(|function, surviving| {
            let available: Vec<&str> = SANDBOX_TOOLS
                .iter()
                .copied()
                .filter(|t| surviving.contains(*t))
                .collect();
            let mut examples: Vec<&str> = ["web_search", "terminal"]
                .into_iter()
                .filter(|t| surviving.contains(*t))
                .collect();
            if examples.is_empty() {
                let mut sorted = available.clone();
                sorted.sort();
                examples = sorted.into_iter().take(2).collect();
            }
            let import = if examples.is_empty() {
                "...".to_string()
            } else {
                format!("{}, ...", examples.join(", "))
            };
            let listing = if available.is_empty() {
                "(none)".to_string()
            } else {
                available.join(", ")
            };
            function.insert(
                "description".into(),
                json!(format!("Run a Python script that calls tools. Available: {listing}.")),
            );
            function.insert(
                "parameters".into(),
                json!({"type": "object", "properties": {"code": {"type": "string",
                    "description": format!("Python code. Import with `from hermes_tools import {import}`.")}},
                    "required": ["code"]}),
            );
            SchemaPatch::Keep
        })
        .build()
        .unwrap()
}

/// Like Hermes' `browser_navigate`: drops its web-tool sentence when neither web tool
/// survived.
fn browser_navigate_fixture() -> ToolEntry {
    ToolEntry::builder("browser_navigate", "browser")
        .description(format!(
            "Navigate the browser to a URL.{WEB_HINT} Returns a page snapshot."
        ))
        .schema_patch(|function, surviving| {
            if !surviving.contains("web_search") && !surviving.contains("web_extract") {
                let description = function
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .replace(WEB_HINT, "");
                function.insert("description".into(), Value::String(description));
            }
            SchemaPatch::Keep
        })
        .build()
        .unwrap()
}

fn patch_registry() -> Registry {
    let reg = registry(BASIC);
    reg.register(execute_code_fixture());
    reg.register(browser_navigate_fixture());
    reg
}

fn description(d: &ToolDefinitions, name: &str) -> String {
    d.function(name).unwrap()["description"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn execute_code_lists_only_surviving_sandbox_tools() {
    let reg = patch_registry();
    let ts = Toolsets::new();
    let d = defs(&reg, &ts, None, None);
    assert_eq!(
        description(&d, "execute_code"),
        "Run a Python script that calls tools. Available: web_search, web_extract, read_file, write_file, terminal."
    );
    let d = defs(&reg, &ts, None, Some(&["web", "terminal"]));
    assert_eq!(
        description(&d, "execute_code"),
        "Run a Python script that calls tools. Available: read_file, write_file."
    );
    assert_eq!(
        d.function("execute_code").unwrap()["parameters"]["properties"]["code"]["description"],
        "Python code. Import with `from hermes_tools import read_file, write_file, ...`."
    );
    // Unavailable tools count as gone too.
    let down = AvailabilityCheck::new("down", || Err("no".into()));
    reg.register(
        ToolEntry::builder("read_file", "file")
            .check(down)
            .build()
            .unwrap(),
    );
    let d = defs(&reg, &ts, Some(&["code_execution", "file"]), None);
    assert_eq!(
        description(&d, "execute_code"),
        "Run a Python script that calls tools. Available: write_file."
    );
    let d = defs(&reg, &ts, Some(&["code_execution"]), None);
    assert_eq!(
        description(&d, "execute_code"),
        "Run a Python script that calls tools. Available: (none)."
    );
    assert_eq!(
        d.function("execute_code").unwrap()["parameters"]["properties"]["code"]["description"],
        "Python code. Import with `from hermes_tools import ...`."
    );
}

#[test]
fn browser_navigate_drops_the_web_sentence_only_without_web_tools() {
    let reg = patch_registry();
    let ts = Toolsets::new();
    let with_web = defs(&reg, &ts, Some(&["browser"]), None);
    // `browser` includes web_search, so the hint stays.
    assert_eq!(
        description(&with_web, "browser_navigate"),
        format!("Navigate the browser to a URL.{WEB_HINT} Returns a page snapshot.")
    );
    let only_extract = defs(&reg, &ts, Some(&["browser", "web"]), Some(&["search"]));
    assert!(description(&only_extract, "browser_navigate").contains(WEB_HINT));
    let without = defs(&reg, &ts, Some(&["browser"]), Some(&["web"]));
    assert_eq!(
        description(&without, "browser_navigate"),
        "Navigate the browser to a URL. Returns a page snapshot."
    );
}

#[test]
fn patches_see_the_names_left_after_other_patches_removed_tools() {
    let reg = Registry::new();
    // `flaky` removes itself; `reporter` mentions whichever tools survive.
    reg.register(
        ToolEntry::builder("flaky", "x")
            .schema_patch(|_, _| SchemaPatch::Remove)
            .build()
            .unwrap(),
    );
    reg.register(
        ToolEntry::builder("reporter", "x")
            .schema_patch(|function, surviving| {
                let names: Vec<&str> = surviving.iter().map(String::as_str).collect();
                function.insert("description".into(), json!(names.join(",")));
                SchemaPatch::Keep
            })
            .build()
            .unwrap(),
    );
    reg.register(
        ToolEntry::builder("exploding", "x")
            .schema_patch(|_, _| panic!("patch bug"))
            .build()
            .unwrap(),
    );
    reg.register(tool("plain", "x"));
    let d = defs(&reg, &Toolsets::new(), None, None);
    assert_eq!(d.names, strings(&["plain", "reporter"]));
    assert_eq!(description(&d, "reporter"), "plain,reporter");
}

#[test]
fn a_patch_can_remove_only_its_own_tool_and_keeps_the_name() {
    let reg = registry(BASIC);
    reg.register(
        ToolEntry::builder("discord", "discord")
            .schema_patch(|function, surviving: &BTreeSet<String>| {
                function.insert("name".into(), json!("hijacked"));
                if surviving.contains("terminal") {
                    SchemaPatch::Keep
                } else {
                    SchemaPatch::Remove
                }
            })
            .build()
            .unwrap(),
    );
    let d = defs(&reg, &Toolsets::new(), None, None);
    assert!(d.contains("discord"));
    assert_eq!(d.function("discord").unwrap()["name"], "discord");
    let d = defs(&reg, &Toolsets::new(), None, Some(&["terminal"]));
    assert!(!d.contains("discord"));
    assert_eq!(
        d.names,
        strings(&["read_file", "web_extract", "web_search", "write_file"])
    );
}

#[test]
fn disabling_a_preset_keeps_core_tools() {
    let reg = registry(
        &[
            BASIC,
            &[("discord", "discord"), ("discord_admin", "discord_admin")],
        ]
        .concat(),
    );
    let ts = Toolsets::new();
    let d = defs(
        &reg,
        &ts,
        Some(&["hermes-discord"]),
        Some(&["hermes-discord"]),
    );
    assert_eq!(
        d.names,
        reg.names()
            .into_iter()
            .filter(|n| !n.starts_with("discord"))
            .collect::<Vec<_>>()
    );
    let d = defs(&reg, &ts, None, Some(&["hermes-cli"]));
    assert_eq!(d.names, reg.names(), "cli has no non-core tools");
}

#[test]
fn custom_toolsets_from_config_select_tools() {
    let reg = registry(BASIC);
    let mut config = ToolsetsSettings::default();
    config.custom.insert(
        "research".into(),
        CustomToolset {
            description: "web and reading".into(),
            tools: strings(&["read_file"]),
            includes: strings(&["web"]),
        },
    );
    let ts = Toolsets::from_config(&config).unwrap();
    let d = defs(&reg, &ts, Some(&["research"]), None);
    assert_eq!(
        d.names,
        strings(&["read_file", "web_extract", "web_search"])
    );
}

// --- The memo ---

#[test]
fn quiet_calls_are_memoised_and_lists_compare_as_sets() {
    let reg = registry(BASIC);
    let ts = Toolsets::new();
    let first = defs(&reg, &ts, Some(&["web", "file"]), Some(&[]));
    let again = defs(&reg, &ts, Some(&["file", "web", "file"]), None);
    assert!(Arc::ptr_eq(&first, &again));
    assert_eq!(ts.memo.len(), 1);
    // Non-quiet calls always recompute (and leave the memo alone).
    let loud = get_tool_definitions(&reg, &ts, Some(&strings(&["web", "file"])), None, false);
    assert!(!Arc::ptr_eq(&first, &loud));
    assert_eq!(*first, *loud);
    // An empty enabled list is not "no list".
    let none = defs(&reg, &ts, Some(&[]), None);
    assert!(none.is_empty());
    assert_eq!(ts.memo.len(), 2);
}

#[test]
fn the_memo_is_invalidated_by_registry_changes() {
    let reg = registry(BASIC);
    let ts = Toolsets::new();
    let before = defs(&reg, &ts, None, None);
    reg.register(tool("late_tool", "mcp-late"));
    let after = defs(&reg, &ts, None, None);
    assert!(!Arc::ptr_eq(&before, &after));
    assert!(after.contains("late_tool") && !before.contains("late_tool"));
    // The stale entry was dropped, not just bypassed.
    assert_eq!(ts.memo.len(), 1);
    reg.deregister("late_tool");
    assert!(!defs(&reg, &ts, None, None).contains("late_tool"));
    // Alias changes bump the generation too.
    let g = reg.generation();
    reg.register_toolset_alias("late", "mcp-late");
    assert_ne!(reg.generation(), g);
}

#[test]
fn the_memo_never_mixes_registries() {
    let ts = Toolsets::new();
    let (a, b) = (registry(&[("only_a", "x")]), registry(&[("only_b", "x")]));
    assert_eq!(a.generation(), b.generation());
    assert_eq!(defs(&a, &ts, None, None).names, strings(&["only_a"]));
    assert_eq!(defs(&b, &ts, None, None).names, strings(&["only_b"]));
}

#[test]
fn the_memo_is_bounded() {
    let reg = registry(BASIC);
    let ts = Toolsets::new();
    let names = [
        "web",
        "file",
        "terminal",
        "search",
        "debugging",
        "safe",
        "cli",
        "acp",
        "webhook",
        "coding",
    ];
    for name in names {
        defs(&reg, &ts, Some(&[name]), None);
    }
    assert_eq!(ts.memo.len(), MEMO_CAPACITY);
    // The oldest inserted were evicted; the newest is a hit.
    let newest = defs(&reg, &ts, Some(&["coding"]), None);
    assert!(Arc::ptr_eq(
        &newest,
        &defs(&reg, &ts, Some(&["coding"]), None)
    ));
    ts.clear_definitions_cache();
    assert_eq!(ts.memo.len(), 0);
}

#[test]
fn memo_entries_expire_with_the_availability_ttl() {
    let reg = registry(BASIC);
    let ts = Toolsets::new();
    let _ = defs(&reg, &ts, None, None);
    let now = std::time::Instant::now();
    assert!(ts.memo.get_at(&reg, None, None, now).is_some());
    let later = now + tools_core::availability::CHECK_TTL + std::time::Duration::from_secs(1);
    assert!(ts.memo.get_at(&reg, None, None, later).is_none());
}

#[test]
fn concurrent_calls_during_registration_stay_consistent() {
    let reg = Arc::new(registry(BASIC));
    let ts = Arc::new(Toolsets::new());
    let writer = {
        let reg = Arc::clone(&reg);
        std::thread::spawn(move || {
            for i in 0..200 {
                reg.register(tool(&format!("dyn_{i}"), "mcp-busy"));
            }
        })
    };
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (reg, ts) = (Arc::clone(&reg), Arc::clone(&ts));
            std::thread::spawn(move || {
                for _ in 0..200 {
                    let d = get_tool_definitions(&reg, &ts, None, None, true);
                    let listed: Vec<&str> = d
                        .tools
                        .iter()
                        .filter_map(|t| t["function"]["name"].as_str())
                        .collect();
                    assert_eq!(
                        listed,
                        d.names.iter().map(String::as_str).collect::<Vec<_>>()
                    );
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for reader in readers {
        reader.join().unwrap();
    }
    assert_eq!(defs(&reg, &ts, None, None).len(), BASIC.len() + 200);
}
