//! `get_tool_definitions`: cold (nothing memoised) and warm (memo hit), over a registry
//! of the 52 core tool names with schemas shaped like Hermes' (a few typed properties,
//! enums, nested arrays/objects, nullable unions for the sanitizer, a shared
//! availability check, and the two patched tools `execute_code`/`browser_navigate`).
//!
//! Run: `cargo bench -p toolhost --bench definitions`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolhost::definitions::get_tool_definitions;
use toolhost::toolsets::{CORE_TOOLS, Toolsets};
use tools_core::{AvailabilityCheck, Registry, SchemaPatch, ToolEntry};

const WEB_HINT: &str =
    " For simple information retrieval, prefer web_search or web_extract (faster, cheaper).";
const SANDBOX: &[&str] = &[
    "web_search",
    "web_extract",
    "read_file",
    "write_file",
    "search_files",
    "patch",
    "terminal",
];

/// A toolset name for a core tool (Hermes' registration toolsets).
fn toolset_of(name: &str) -> &'static str {
    match name {
        "web_search" | "web_extract" => "web",
        "terminal" | "process" | "read_terminal" | "close_terminal" => "terminal",
        "read_file" | "write_file" | "patch" | "search_files" => "file",
        "vision_analyze" => "vision",
        "image_generate" => "image_gen",
        "skills_list" | "skill_view" | "skill_manage" => "skills",
        "browser_cdp" | "browser_dialog" => "browser-cdp",
        n if n.starts_with("browser_") => "browser",
        "text_to_speech" => "tts",
        "execute_code" => "code_execution",
        "delegate_task" => "delegation",
        n if n.starts_with("ha_") => "homeassistant",
        n if n.starts_with("kanban_") => "kanban",
        "todo" => "todo",
        "memory" => "memory",
        "session_search" => "session_search",
        "clarify" => "clarify",
        "cronjob" => "cronjob",
        _ => "computer_use",
    }
}

fn parameters(i: usize) -> Value {
    let mut props = serde_json::Map::new();
    props.insert(
        "query".into(),
        json!({"type": "string", "description": "What to look for; plain words or a pattern."}),
    );
    props.insert(
        "mode".into(),
        json!({"type": "string", "enum": ["fast", "thorough", "exact"], "default": "fast",
               "description": "How hard to try."}),
    );
    if i.is_multiple_of(2) {
        props.insert(
            "limit".into(),
            json!({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 500}, {"type": "null"}],
                   "default": null, "description": "Maximum results (null = tool default)."}),
        );
    }
    if i.is_multiple_of(3) {
        props.insert(
            "items".into(),
            json!({"type": "array", "description": "Entries to act on.",
                   "items": {"type": "object", "properties": {
                       "id": {"type": ["string", "null"]},
                       "status": {"type": "string", "enum": ["pending", "done"]}},
                   "required": ["id"]}}),
        );
    }
    if i.is_multiple_of(4) {
        props.insert(
            "options".into(),
            json!({"type": "object", "additionalProperties": "string"}),
        );
    }
    json!({"type": "object", "properties": props, "required": ["query"]})
}

fn build_registry() -> Registry {
    let registry = Registry::new();
    let env_ok = AvailabilityCheck::new("env", || Ok(()));
    for (i, name) in CORE_TOOLS.iter().enumerate() {
        let mut builder = ToolEntry::builder(*name, toolset_of(name))
            .description(format!(
                "{name}: does one well-defined thing for the agent. Use it when the task needs \
                 it; prefer cheaper tools otherwise. Returns JSON with the result or an error \
                 object the model can read.{}",
                if *name == "browser_navigate" {
                    WEB_HINT
                } else {
                    ""
                }
            ))
            .parameters(parameters(i))
            .check(Arc::clone(&env_ok));
        if *name == "execute_code" {
            builder = builder.schema_patch(|function, surviving| {
                let available: Vec<&str> = SANDBOX
                    .iter()
                    .copied()
                    .filter(|t| surviving.contains(*t))
                    .collect();
                function.insert(
                    "description".into(),
                    Value::String(format!(
                        "Run a script that calls tools: {}.",
                        available.join(", ")
                    )),
                );
                SchemaPatch::Keep
            });
        }
        if *name == "browser_navigate" {
            builder = builder.schema_patch(|function, surviving| {
                if !surviving.contains("web_search") && !surviving.contains("web_extract") {
                    let d = function
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .replace(WEB_HINT, "");
                    function.insert("description".into(), Value::String(d));
                }
                SchemaPatch::Keep
            });
        }
        if let Ok(entry) = builder.build() {
            registry.register(entry);
        }
    }
    registry
}

fn bench(c: &mut Criterion) {
    let registry = build_registry();
    let cli = vec!["hermes-cli".to_string()];
    let mut group = c.benchmark_group("get_tool_definitions");

    group.bench_function("cold/all", |b| {
        b.iter_batched(
            Toolsets::new,
            |ts| black_box(get_tool_definitions(&registry, &ts, None, None, true)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("cold/hermes-cli", |b| {
        b.iter_batched(
            Toolsets::new,
            |ts| black_box(get_tool_definitions(&registry, &ts, Some(&cli), None, true)),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("cold/register-52-then-define", |b| {
        b.iter(|| {
            let registry = build_registry();
            let ts = Toolsets::new();
            black_box(get_tool_definitions(&registry, &ts, None, None, true).len())
        })
    });

    let warm = Toolsets::new();
    get_tool_definitions(&registry, &warm, None, None, true);
    get_tool_definitions(&registry, &warm, Some(&cli), None, true);
    group.bench_function("warm/all", |b| {
        b.iter(|| black_box(get_tool_definitions(&registry, &warm, None, None, true)))
    });
    group.bench_function("warm/hermes-cli", |b| {
        b.iter(|| {
            black_box(get_tool_definitions(
                &registry,
                &warm,
                Some(&cli),
                None,
                true,
            ))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
