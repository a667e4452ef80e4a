//! The agent loop's own cost per turn: one model call answering with a tool call, the
//! call through the pipeline, one model call answering with text — against the scripted
//! server (loopback HTTP), with a 40-tool catalogue and a 50-message session. What is
//! left after the scripted server's and the no-op tool's share is the loop's overhead
//! (target ≤ 1 ms per turn; BENCHMARKS.md). Also: persisting a 100-call batch in one
//! SQLite transaction (target ≤ 5 ms).

// A benchmark harness, like a test: failing loudly on a broken setup is the point.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost::Dispatcher;
use toolhost::agent::scripted::{self, ScriptedServer};
use toolhost::agent::{
    Agent, AgentParts, AgentSettings, DelegationSettings, Message, ModelClient, ModelEndpoint,
    ModelSettings, SessionStore, ToolOffer,
};
use toolhost::batch::BatchOptions;
use toolhost::spill::ResultSpill;
use tools_core::settings::MemorySettings;
use tools_core::{AgentLoopState, Home, Hooks, Registry, ToolEntry};

fn catalogue(registry: &Registry) -> ToolOffer {
    for i in 0..40 {
        registry.register(
            ToolEntry::builder(format!("tool_{i:02}"), "bench")
                .description("A tool of the benchmark catalogue with a modest description.")
                .parameters(json!({"type": "object", "properties": {
                    "path": {"type": "string", "description": "A path"},
                    "limit": {"type": "integer", "description": "A limit"}
                }}))
                .sync_handler(|_, _| Ok(json!({"ok": true})))
                .build()
                .expect("valid tool"),
        );
    }
    let mut offer = ToolOffer::default();
    for entry in registry.entries() {
        offer.names.insert(entry.name.clone());
        offer
            .definitions
            .push(json!({"type": "function", "function": entry.function_schema()}));
    }
    offer
}

fn loop_turn(c: &mut Criterion) {
    // One thread runs the loop and the scripted server: both rows pay the server's
    // share the same way, and thread hand-offs between them do not swamp the
    // difference (the loop's overhead) with scheduling noise.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let server = runtime.block_on(ScriptedServer::start(Vec::new())).unwrap();
    let registry = Arc::new(Registry::new());
    let tools = catalogue(&registry);
    let model = ModelSettings {
        base_url: server.base_url(),
        model: "scripted".into(),
        stream: false,
        ..ModelSettings::default()
    };
    let client = ModelClient::new(ModelEndpoint::resolve(&model, |_| None)).unwrap();
    let agent = Agent::assemble(AgentParts {
        client,
        dispatcher: Dispatcher::new(
            Arc::clone(&registry),
            Arc::new(Hooks::new()),
            ResultSpill::new(dir.path().join("results")),
        ),
        state: Arc::new(AgentLoopState::new(
            &Home::at(dir.path()),
            &MemorySettings::default(),
        )),
        sessions: Arc::new(SessionStore::open_in(dir.path()).unwrap()),
        batch: BatchOptions::default(),
        spill: ResultSpill::new(dir.path().join("turn")),
        settings: AgentSettings::default(),
        delegation: DelegationSettings::default(),
        tools,
    });
    let mut base = agent.new_conversation(None).unwrap();
    for i in 0..49 {
        base.messages.push(if i % 2 == 0 {
            Message::user(format!("question {i} about the project layout"))
        } else {
            Message::assistant(format!("answer {i}: the layout is described in the README"))
        });
    }
    c.bench_function(
        "agent turn: tool call + answer, 40 tools, 50 messages",
        |b| {
            b.iter(|| {
                server.push([
                    scripted::tool_calls(&[("c1", "tool_07", r#"{"path":"a","limit":3}"#)]),
                    scripted::text("done"),
                ]);
                server.forget_requests();
                let mut conversation = base.clone();
                runtime.block_on(agent.run_turn(&mut conversation, "go", &CancellationToken::new()))
            });
        },
    );
    // The turn's parts, measured alone, so the overhead can be told apart.
    c.bench_function("turn part: the tool call through dispatch_batch", |b| {
        let calls = [toolhost::batch::ToolCall {
            id: "c1".into(),
            name: "tool_07".into(),
            arguments: r#"{"path":"a","limit":3}"#.into(),
        }];
        let options = BatchOptions::default();
        let dispatcher = Dispatcher::new(
            Arc::clone(&registry),
            Arc::new(Hooks::new()),
            ResultSpill::new(dir.path().join("results-parts")),
        );
        b.iter(|| {
            runtime.block_on(toolhost::batch::dispatch_batch(
                &dispatcher,
                &calls,
                &options,
            ))
        });
    });
    c.bench_function("turn part: the turn's four appends + flush", |b| {
        let sessions = SessionStore::open_in(&dir.path().join("parts")).unwrap();
        sessions.create("parts", "cli", None, None).unwrap();
        let call: Message = serde_json::from_value(json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "tool_07", "arguments": "{\"path\":\"a\",\"limit\":3}"}}]}))
        .unwrap();
        b.iter(|| {
            sessions.append_deferred("parts", vec![Message::user("go")]);
            sessions.append_deferred("parts", vec![call.clone()]);
            sessions.append_deferred(
                "parts",
                vec![Message::tool("c1", "tool_07", r#"{"ok":true}"#.to_string())],
            );
            sessions.append_deferred("parts", vec![Message::assistant("done")]);
            sessions.flush().unwrap();
        });
    });
    c.bench_function("turn part: the answer's append + flush", |b| {
        let sessions = SessionStore::open_in(&dir.path().join("answer")).unwrap();
        sessions.create("answer", "cli", None, None).unwrap();
        b.iter(|| {
            sessions.append_deferred("answer", vec![Message::assistant("done")]);
            sessions.flush().unwrap();
        });
    });
    c.bench_function("turn part: one request body, 40 tools, 50 messages", |b| {
        let messages = base.messages.clone();
        let request = toolhost::agent::ChatRequest {
            messages: &messages,
            tools: agent.tools_json(),
            tool_choice: None,
        };
        b.iter(|| agent.client().body(&request).unwrap());
    });
    c.bench_function("scripted server round trip alone (x2)", |b| {
        let messages = base.messages.clone();
        b.iter(|| {
            server.push([scripted::text("a"), scripted::text("b")]);
            server.forget_requests();
            runtime.block_on(async {
                for _ in 0..2 {
                    let request = toolhost::agent::ChatRequest {
                        messages: &messages,
                        tools: agent.tools_json(),
                        tool_choice: None,
                    };
                    agent
                        .client()
                        .complete(&request, &mut |_| {}, &CancellationToken::new())
                        .await
                        .unwrap();
                }
            })
        });
    });
}

fn persist_batch(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open_in(dir.path()).unwrap();
    store.create("bench", "cli", None, None).unwrap();
    let batch: Vec<Message> = (0..100)
        .map(|i| {
            Message::tool(
                format!("c{i}"),
                "read_file",
                format!("{{\"content\":\"line {i} of a file\"}}"),
            )
        })
        .collect();
    c.bench_function("persist a 100-call batch", |b| {
        b.iter(|| store.append("bench", &batch).unwrap());
    });
}

criterion_group!(benches, loop_turn, persist_batch);
criterion_main!(benches);
