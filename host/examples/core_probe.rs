#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::sync::Arc;
use serde_json::json;
use toolhost::Dispatcher;
use toolhost::spill::ResultSpill;
use tools_core::{Hooks, Registry, ToolContext, ToolEntry};

fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(1_000_000);
    let args = std::env::args().nth(2).unwrap_or(r#"{"x": 1}"#.into());
    let registry = Arc::new(Registry::new());
    registry.register(
        ToolEntry::builder("bench_noop", "bench")
            .description("does nothing")
            .parameters(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
            .sync_handler(|_, _| Ok(json!({"ok": true})))
            .build()
            .unwrap(),
    );
    let d = Dispatcher::new(registry, Arc::new(Hooks::new()), ResultSpill::new(std::env::temp_dir().join("x")));
    let ctx = ToolContext::default();
    for _ in 0..n { std::hint::black_box(d.handle_function_call(std::hint::black_box("bench_noop"), std::hint::black_box(&args), &ctx)); }
}
