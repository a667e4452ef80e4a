//! The whole dispatch pipeline for a no-op tool (target ≤ 1 µs per call), beside the
//! registry dispatch alone. Compare with Hermes' `handle_function_call` (≈ 27 µs) in
//! BENCHMARKS.md.

// A benchmark harness, like a test: failing loudly on a broken setup is the point.
#![allow(clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost::Dispatcher;
use toolhost::spill::ResultSpill;
use tools_core::{Hooks, Registry, ToolContext, ToolEntry};

fn noop_dispatcher() -> Dispatcher {
    let registry = Arc::new(Registry::new());
    registry.register(
        ToolEntry::builder("bench_noop", "bench")
            .description("does nothing")
            .parameters(json!({"type": "object", "properties": {"x": {"type": "integer"}}}))
            .sync_handler(|_, _| Ok(json!({"ok": true})))
            .build()
            .expect("valid tool"),
    );
    Dispatcher::new(
        registry,
        Arc::new(Hooks::new()),
        ResultSpill::new(std::env::temp_dir().join("toolhost-bench-results")),
    )
}

fn pipeline(c: &mut Criterion) {
    let dispatcher = noop_dispatcher();
    let ctx = ToolContext::default();
    // Compile the validator outside the measurement.
    dispatcher.call("bench_noop", r#"{"x": 1}"#, &ctx);
    c.bench_function("handle_function_call noop {x:1}", |b| {
        b.iter(|| {
            black_box(dispatcher.handle_function_call(
                black_box("bench_noop"),
                black_box(r#"{"x": 1}"#),
                &ctx,
            ))
        })
    });
    c.bench_function("handle_function_call noop {x:\"1\"} (coercion)", |b| {
        b.iter(|| {
            black_box(dispatcher.handle_function_call(
                black_box("bench_noop"),
                black_box(r#"{"x": "1"}"#),
                &ctx,
            ))
        })
    });
    let registry = Arc::clone(dispatcher.registry());
    c.bench_function("registry.dispatch_blocking noop", |b| {
        b.iter(|| {
            black_box(registry.dispatch_blocking(black_box("bench_noop"), json!({"x": 1}), &ctx))
        })
    });
    let hooked = noop_dispatcher();
    hooked
        .hooks()
        .on_pre_tool_call("bench", |_| tools_core::PreToolDecision::Allow);
    hooked.hooks().on_post_tool_call("bench", |_| {});
    c.bench_function("handle_function_call noop with pre+post hooks", |b| {
        b.iter(|| {
            black_box(hooked.handle_function_call(
                black_box("bench_noop"),
                black_box(r#"{"x": 1}"#),
                &ctx,
            ))
        })
    });
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
