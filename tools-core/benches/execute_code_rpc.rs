//! Per-call cost of `execute_code`'s tool channel.
//!
//! - `rpc_roundtrip`: one request line → the socket server → a no-op tool → one result
//!   line, from a Rust client on the same Unix socket the script uses (the server side
//!   of the overhead: socket, JSON, token and allowlist checks, thread hand-off).
//! - `script_50_calls` vs `script_0_calls`: a real python3 script making 50 `read_file`
//!   calls and the same script making none; (difference) / 50 is the per-call cost as
//!   a script sees it, Python's side included. `script_500_calls` (the call limit
//!   raised) gives the same figure with the start-up noise spread over ten times as
//!   many calls.
//! - `read_file_direct`: the same `read_file` through the registry alone, so per-call
//!   cost minus this is the channel's overhead. The goal is ≤ 100 µs of overhead per
//!   call (BENCHMARKS.md).
//!
//! - `read_file_timed_in_script`: the same calls timed by the script itself
//!   (`time.perf_counter_ns()` around the loop), free of interpreter start-up; minus
//!   `read_file_direct` it is the channel's overhead per call, Python's side included.
//!
//! Run: `cargo bench -p tools-core --bench execute_code_rpc`
// Test code: starts toolhost, fixtures and helper programs directly (exec_policy.rs).
#![allow(clippy::disallowed_methods)]
// Setup that fails must stop the benchmark loudly, as in tests.
#![allow(clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tools_core::code_exec::rpc::{RpcOptions, RpcServer};
use tools_core::code_exec::run::{Script, execute};
use tools_core::code_exec::{CodeExecutionSettings, ToolCaller};
use tools_core::environments::exec_policy::Floor;
use tools_core::environments::settings::LocalSettings;
use tools_core::{Home, Registry, ToolContext};

struct RegistryCaller(Registry);

impl ToolCaller for RegistryCaller {
    fn call(&self, name: &str, args: &Value, ctx: &ToolContext) -> String {
        self.0.dispatch_blocking(name, args.clone(), ctx).text
    }
    fn available(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

fn caller() -> Arc<dyn ToolCaller> {
    let registry = Registry::new();
    let services = Arc::new(tools_core::CoreServices::new(
        Home::at("/nonexistent"),
        tools_core::settings::CoreSettings::default(),
        Arc::new(tools_core::Hooks::new()),
        Arc::new(tools_core::approval::AllowAllGate),
    ));
    tools_core::tools::register_core_tools(&registry, &services);
    registry.register(
        tools_core::ToolEntry::builder("noop", "bench")
            .sync_handler(|_, _| Ok(json!({"ok": true})))
            .build()
            .expect("noop tool"),
    );
    Arc::new(RegistryCaller(registry))
}

fn rpc_roundtrip(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rpc.sock");
    let listener = UnixListener::bind(&path).expect("bind");
    let server = RpcServer::start(
        listener,
        path.clone(),
        RpcOptions {
            token: "t".into(),
            allowed: BTreeSet::from(["noop".to_string()]),
            max_calls: usize::MAX,
            caller: caller(),
            ctx: ToolContext::for_task("bench"),
        },
    );
    let stream = UnixStream::connect(&path).expect("connect");
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    let request = b"{\"tool\":\"noop\",\"args\":{},\"token\":\"t\"}\n";
    let mut line = String::new();
    c.bench_function("execute_code/rpc_roundtrip", |b| {
        b.iter(|| {
            writer.write_all(request).expect("send");
            line.clear();
            reader.read_line(&mut line).expect("receive");
        })
    });
    drop(writer);
    drop(reader);
    server.stop();
}

fn python_available() -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg("")
        .status()
        .is_ok_and(|s| s.success())
}

fn scripts(c: &mut Criterion) {
    if !python_available() {
        eprintln!("skipped script benches: python3 not installed");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("data.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").expect("write");
    let path = file.display().to_string();
    let caller = caller();
    // No call limit: the timed row below makes as many calls as criterion asks for.
    let settings = CodeExecutionSettings {
        max_tool_calls: usize::MAX,
        ..CodeExecutionSettings::default()
    };
    let run = |code: &str| {
        // The floor every script runs under in production (its cost is part of the row).
        let script = Script {
            code,
            floor: Floor::prepare(
                &LocalSettings::default(),
                dir.path(),
                std::path::Path::new("/nonexistent/toolhost"),
            ),
            cwd: dir.path().to_path_buf(),
            tools: BTreeSet::from(["read_file".to_string()]),
        };
        execute(
            &script,
            &settings,
            Arc::clone(&caller),
            &ToolContext::for_task("b"),
        )
    };
    let mut group = c.benchmark_group("execute_code");
    let args = json!({"path": path});
    let ctx = ToolContext::for_task("b");
    group.bench_function("read_file_direct", |b| {
        b.iter(|| caller.call("read_file", &args, &ctx))
    });
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for calls in [0usize, 50, 500] {
        let code = format!(
            "from toolhost_tools import read_file\nfor _ in range({calls}):\n    read_file({path:?})\nprint('done')\n"
        );
        group.bench_function(format!("script_{calls}_calls"), |b| {
            b.iter(|| {
                let r = run(&code);
                assert_eq!(r["tool_calls_made"], calls, "{r}");
            })
        });
    }
    // `read_file` as the script itself times it: the script makes `iters` calls and
    // prints the time they took by `time.perf_counter_ns()`, so interpreter start-up and
    // module import are outside the figure (minus `read_file_direct`: the channel's
    // overhead).
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    group.bench_function("read_file_timed_in_script", |b| {
        b.iter_custom(|iters| {
            let r = run(&format!(
                "import time\nfrom toolhost_tools import read_file\nread_file({path:?})\n\
                 t = time.perf_counter_ns()\nfor _ in range({iters}):\n    read_file({path:?})\n\
                 print(time.perf_counter_ns() - t)\n"
            ));
            let nanos: u64 = r["output"]
                .as_str()
                .and_then(|o| o.trim().parse().ok())
                .unwrap_or_else(|| panic!("no timing printed: {r}"));
            Duration::from_nanos(nanos)
        })
    });
    group.finish();
}

criterion_group!(benches, rpc_roundtrip, scripts);
criterion_main!(benches);
